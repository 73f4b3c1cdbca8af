/* sim-lock.h — named kernel locks held by SimThreads, with lock_stat-style
 * statistics (Documentation/locking/lockstat.rst; lockmeter before it).
 *
 * Two kinds, the two costs that matter to the buffered write path of
 * kernel-algorithms.md §8:
 * - SIM_LOCK_SPIN (spinlock, the BKL of 2.4): a waiter keeps its CPU busy
 *   in system mode until it gets the lock, so contention burns CPU;
 * - SIM_LOCK_SLEEP (mutex, semaphore: i_sem, i_mutex): a waiter blocks and
 *   frees its CPU; when granted it becomes runnable and takes its turn on
 *   the run queue.
 * Two grant orders:
 * - SIM_LOCK_FIFO: strict arrival order (ticket spinlocks, 2.6.25 on;
 *   mutexes and semaphores hand over to the oldest waiter);
 * - SIM_LOCK_UNFAIR: on release the lock goes to a waiter drawn uniformly
 *   from the named random stream "lock.<name>".  It stands for the
 *   cache-line race of the test-and-set spinlocks before 2.6.25, where any
 *   spinner can win regardless of how long it has waited.
 *
 * On release with waiters the lock is handed over at once: the new holder
 * is chosen then, so there is never a moment without an owner when someone
 * waits.  Wait time runs from the request to that hand-over; hold time from
 * the hand-over to the release, so for a sleeping lock it includes the new
 * owner's wait for a CPU (the convoy effect of a lock handed to a sleeper).
 * Statistics are recorded at grant (wait) and release (hold), like
 * lock_stat; utilisation also counts a hold in progress.
 *
 * Call sites, as lockmeter reported them (one row per caller of
 * lock_kernel(), under the lock's total row): sim_lock_add_site() names a
 * site at setup and returns its index; sim_lock_acquire_at() and
 * sim_lock_hold_at() say which site takes the lock.  Site 0 is the
 * unnamed site of sim_lock_acquire() and sim_lock_hold().  Every grant,
 * wait and hold is counted once in the lock's totals and once in its
 * site's, so the sites add up to the lock.  Sites live in an array sized
 * at setup: taking a lock allocates nothing.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-cpu.h"

G_BEGIN_DECLS

typedef enum {
  SIM_LOCK_SPIN,
  SIM_LOCK_SLEEP,
} SimLockKind;

typedef enum {
  SIM_LOCK_FIFO,
  SIM_LOCK_UNFAIR,
} SimLockOrder;

/* lock_stat's columns; times in ns. */
typedef struct {
  SimTime  elapsed_ns;       /* since sim_lock_new() */
  guint64  acquisitions;     /* grants */
  guint64  contentions;      /* grants that had to wait */
  double   contention_pct;   /* 100 x contentions / acquisitions */
  SimTime  wait_total_ns;    /* over contended grants */
  SimTime  wait_max_ns;
  double   wait_mean_ns;     /* wait_total / contentions (lock_stat's waittime-avg) */
  guint64  releases;         /* completed holds */
  SimTime  hold_total_ns;    /* completed holds */
  SimTime  hold_max_ns;
  double   hold_mean_ns;     /* hold_total / releases */
  SimTime  held_ns;          /* hold_total plus the hold in progress */
  double   utilisation;      /* held_ns / elapsed_ns */
  guint    waiters;          /* now (0 for a site) */
  guint    max_waiters;      /* 0 for a site */
  /* lockmeter's columns */
  double   nowait_pct;       /* 100 - contention_pct: grants that found it free */
  double   wait_cpu_pct;     /* wait_total over elapsed x CPUs: share of all
                              * CPU time spent waiting (spinning) for it */
} SimLockStats;

/* @name is copied; an UNFAIR lock draws from the stream "lock.<name>". */
SimLock     *sim_lock_new         (SimCpus            *c,
                                   const char         *name,
                                   SimLockKind         kind,
                                   SimLockOrder        order);
/* Frees the lock only: its holder and waiters must be gone or never run
 * again. */
void         sim_lock_free        (SimLock            *l);
/* A spinlock taken with interrupts off (spin_lock_irq): from the acquire,
 * spinning included, to the release, the thread's CPU takes no interrupt
 * work (sim_cpus_set_irq_preempt).  Setup time; spinlocks only. */
void         sim_lock_set_irq     (SimLock            *l,
                                   gboolean            irq);
gboolean     sim_lock_irq         (const SimLock      *l);
const char  *sim_lock_name        (const SimLock      *l);
SimLockKind  sim_lock_kind        (const SimLock      *l);
SimLockOrder sim_lock_order       (const SimLock      *l);
/* The holder, or NULL. */
SimThread   *sim_lock_holder      (const SimLock      *l);

/* From @t's continuation (it is on a CPU): take @l, then call @then.  A
 * free lock is taken at once and @then is called before this returns, @t
 * still on its CPU; otherwise @t spins or blocks as the lock's kind says,
 * and @then runs from an event once the lock is @t's.  Taking a lock @t
 * already holds asserts (it would deadlock). */
void         sim_lock_acquire     (SimLock            *l,
                                   SimThread          *t,
                                   SimThreadFn         then,
                                   gpointer            data);
/* From @t's continuation: give @l up (asserts that @t holds it).  @t keeps
 * running; a waiter, if any, gets the lock now. */
void         sim_lock_release     (SimLock            *l,
                                   SimThread          *t);
/* Acquire, spend @hold_ns in SYS mode holding @l, release, then @then. */
void         sim_lock_hold        (SimLock            *l,
                                   SimThread          *t,
                                   SimTime             hold_ns,
                                   SimThreadFn         then,
                                   gpointer            data);

/* Name a call site of @l (setup time: it allocates); returns its index,
 * 1 for the first.  @site is copied. */
guint        sim_lock_add_site    (SimLock            *l,
                                   const char         *site);
/* Sites, the unnamed site 0 included (so at least 1). */
guint        sim_lock_n_sites     (const SimLock      *l);
/* NULL for site 0. */
const char  *sim_lock_site_name   (const SimLock      *l,
                                   guint               site);
/* sim_lock_acquire() and sim_lock_hold() from call site @site. */
void         sim_lock_acquire_at  (SimLock            *l,
                                   guint               site,
                                   SimThread          *t,
                                   SimThreadFn         then,
                                   gpointer            data);
void         sim_lock_hold_at     (SimLock            *l,
                                   guint               site,
                                   SimThread          *t,
                                   SimTime             hold_ns,
                                   SimThreadFn         then,
                                   gpointer            data);

void         sim_lock_stats       (const SimLock      *l,
                                   SimTime             now_ns,
                                   SimLockStats       *out);
/* The figures of call site @site alone (utilisation: its share of the
 * time; elapsed_ns: the lock's). */
void         sim_lock_site_stats  (const SimLock      *l,
                                   guint               site,
                                   SimTime             now_ns,
                                   SimLockStats       *out);
/* A lock_stat-like table: one header line, one line per lock, columns
 * aligned (name, kind, acq, contended, cont%, wait mean/max us, hold
 * mean/max us, util%). */
void         sim_lock_report_text (GString            *out,
                                   SimLock *const     *locks,
                                   guint               n,
                                   SimTime             now_ns);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimLock, sim_lock_free)

G_END_DECLS
