/* placeholder: dev.c is being written. */
