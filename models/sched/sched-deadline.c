/* placeholder: sched-deadline.c is being written. */
