/* placeholder: fit.c is being written. */
