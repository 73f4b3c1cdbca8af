/* sim-worker.h — a scripted thread for the CPU and lock tests: it walks an
 * array of steps (exec, block on I/O or not, lock hold/acquire/release),
 * each step the continuation of the one before, and exits at W_END. */
#pragma once

#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-cpu.h"
#include "sim/sim-lock.h"

typedef enum {
  W_USER,       /* exec ns in user mode */
  W_SYS,        /* exec ns in system mode */
  W_IO,         /* block on I/O for ns; a timer wakes it */
  W_IO_IRQ,     /* block on I/O for ns; an interrupt of irq_ns wakes it */
  W_SLEEP,      /* block (not I/O) for ns */
  W_HOLD,       /* sim_lock_hold_at (lock, site, ns) */
  W_ACQ,        /* sim_lock_acquire_at (lock, site) */
  W_REL,        /* sim_lock_release (lock) */
  W_END,        /* exit */
} WStepKind;

typedef struct {
  WStepKind  kind;
  SimTime    ns;
  SimLock   *lock;
  guint      guard;      /* W_ACQ, W_REL: index in Worker.inside */
  guint      site;       /* W_HOLD, W_ACQ: the lock's call site (0: unnamed) */
} WStep;

typedef struct {
  SimThread    thread;
  Sim         *sim;
  SimCpus     *cpus;
  const WStep *steps;
  guint        pc;
  SimTime      irq_ns;       /* W_IO_IRQ */
  gboolean     done;
  SimTime      end_ns;
  GString     *grants;       /* optional: "name " appended at every grant */
  guint       *inside;       /* optional: threads inside each critical section */
} Worker;

static inline void worker_step (SimThread *t, gpointer data);

static inline void
worker_wake (Sim *sim, gpointer subject, gpointer object)
{
  Worker *w = subject;
  sim_thread_wake (w->cpus, &w->thread, worker_step, w);
}

static inline void
worker_irq_done (SimThread *t, gpointer data)
{
  Worker *w = data;
  g_assert_null (t);
  sim_thread_wake (w->cpus, &w->thread, worker_step, w);
}

static inline void
worker_raise_irq (Sim *sim, gpointer subject, gpointer object)
{
  Worker *w = subject;
  sim_cpu_irq (w->cpus, w->irq_ns, worker_irq_done, w);
}

static inline void
worker_granted (SimThread *t, gpointer data)
{
  Worker *w = data;
  const WStep *s = &w->steps[w->pc - 1];
  g_assert_true (sim_lock_holder (s->lock) == t);
  if (w->inside != NULL)
    {
      w->inside[s->guard]++;
      g_assert_cmpuint (w->inside[s->guard], ==, 1);
    }
  if (w->grants != NULL)
    g_string_append_printf (w->grants, "%s ", t->name);
  worker_step (t, w);
}

static inline void
worker_step (SimThread *t, gpointer data)
{
  Worker *w = data;
  g_assert_true (t == &w->thread);
  const WStep *s = &w->steps[w->pc++];
  switch (s->kind)
    {
    case W_USER:
    case W_SYS:
      sim_cpu_exec (w->cpus, t, s->ns, s->kind == W_USER ? SIM_CPU_USER : SIM_CPU_SYS,
                    worker_step, w);
      break;
    case W_IO:
    case W_SLEEP:
      sim_schedule_in (w->sim, s->ns, worker_wake, w, NULL);
      sim_thread_block (w->cpus, t, s->kind == W_IO);
      break;
    case W_IO_IRQ:
      sim_schedule_in (w->sim, s->ns, worker_raise_irq, w, NULL);
      sim_thread_block (w->cpus, t, TRUE);
      break;
    case W_HOLD:
      sim_lock_hold_at (s->lock, s->site, t, s->ns, worker_step, w);
      break;
    case W_ACQ:
      sim_lock_acquire_at (s->lock, s->site, t, worker_granted, w);
      break;
    case W_REL:
      if (w->inside != NULL)
        w->inside[s->guard]--;
      sim_lock_release (s->lock, t);
      worker_step (t, w);
      break;
    case W_END:
      w->done = TRUE;
      w->end_ns = sim_now (w->sim);
      sim_thread_exit (w->cpus, t);
      break;
    }
}

/* @name and @steps are borrowed; the worker starts (becomes runnable) at
 * @start_ns. */
static inline void
worker_init (Worker *w, Sim *sim, SimCpus *c, const char *name, const WStep *steps,
             SimTime start_ns)
{
  memset (w, 0, sizeof *w);
  w->sim = sim;
  w->cpus = c;
  w->steps = steps;
  sim_thread_init (c, &w->thread, name);
  sim_schedule_at (sim, start_ns, worker_wake, w, NULL);
}
