/* placeholder: trace.c is being written. */
