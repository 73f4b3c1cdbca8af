/* placeholder: trace-results.c is being written. */
