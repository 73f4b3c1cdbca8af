/* placeholder: dev-ssd.c is being written. */
