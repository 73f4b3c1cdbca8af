/* placeholder: sim-rbtree.c is being written. */
