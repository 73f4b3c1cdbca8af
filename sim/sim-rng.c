/* placeholder: sim-rng.c is being written. */
