/* placeholder: sim-device.c is being written. */
