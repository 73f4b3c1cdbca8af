/* placeholder: replay-compare.c is being written. */
