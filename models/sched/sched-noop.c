/* placeholder: sched-noop.c is being written. */
