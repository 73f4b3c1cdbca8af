/* placeholder: trace-blkparse.c is being written. */
