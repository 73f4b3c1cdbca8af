/* placeholder: sim-stats.c is being written. */
