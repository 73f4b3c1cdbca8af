/* placeholder: sim-queue.c is being written. */
