/* placeholder: dev-disk.c is being written. */
