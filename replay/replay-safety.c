/* placeholder: replay-safety.c is being written. */
