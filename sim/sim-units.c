/* placeholder: sim-units.c is being written. */
