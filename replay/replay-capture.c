/* placeholder: replay-capture.c is being written. */
