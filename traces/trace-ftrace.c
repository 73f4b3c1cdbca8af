/* placeholder: trace-ftrace.c is being written. */
