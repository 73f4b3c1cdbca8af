/* placeholder: sim.c is being written. */
