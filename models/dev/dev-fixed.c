/* placeholder: dev-fixed.c is being written. */
