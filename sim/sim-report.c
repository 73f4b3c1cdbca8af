/* placeholder: sim-report.c is being written. */
