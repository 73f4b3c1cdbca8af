/* placeholder: sched.c is being written. */
