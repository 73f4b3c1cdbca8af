/* sim-cpu-private.h — what sim-lock.c needs from sim-cpu.c beyond the
 * public API: a thread that keeps its CPU busy while it spins for a lock. */
#pragma once

#include "sim/sim-cpu.h"

G_BEGIN_DECLS

/* From @t's continuation: stay on the CPU, burning SYS time, until
 * sim_thread_spin_granted(); then @then runs (from an event, on that CPU). */
void sim_thread_spin         (SimCpus     *c,
                              SimThread   *t,
                              SimThreadFn  then,
                              gpointer     data);
void sim_thread_spin_granted (SimCpus     *c,
                              SimThread   *t);

G_END_DECLS
