/* placeholder: replay.c is being written. */
