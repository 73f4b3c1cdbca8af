/* placeholder: sim-process.c is being written. */
