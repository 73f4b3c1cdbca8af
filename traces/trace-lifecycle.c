/* placeholder: trace-lifecycle.c is being written. */
