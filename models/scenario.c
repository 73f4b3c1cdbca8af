/* placeholder: scenario.c is being written. */
