/* sim-cpu.h — the host's CPUs: threads, a run queue, interrupt work and
 * vmstat-style accounting.
 *
 * A SimThread runs on a CPU in continuation style (the engine has no
 * coroutines): sim_cpu_exec() asks for work_ns of CPU time in user or
 * system mode and names the function to call once that time has been
 * spent.  The thread keeps its CPU while the continuation runs, so a
 * continuation that chains another exec continues on the same CPU with no
 * context switch.  A thread gives up its CPU only when it blocks or exits;
 * nothing is preempted (a long exec holds its CPU to the end), which is the
 * non-preemptive 2.4/2.6 kernel path of a system call, not the scheduler of
 * a desktop.
 *
 * - Run queue: one global FIFO of threads waiting for a CPU (no per-CPU
 *   queues, no priorities).  A woken thread goes back to the CPU it last
 *   ran on if that CPU is idle, else to the lowest-numbered idle CPU.
 *   With SIM_CPU_SCHED_O1 (sim_cpus_set_sched) the queue is ordered by
 *   2.6's O(1) dynamic priority instead, and a woken thread of better
 *   priority preempts a running one at its next exec (see SimCpuSched).
 * - Interrupt work (sim_cpu_irq) goes ahead of runnable threads on the next
 *   free CPU, without preempting running work.  Its time is counted as irq
 *   time, shown as system time in vmstat (Linux folds hi and si into sy).
 *   With sim_cpus_set_irq_preempt() it also interrupts running work when
 *   no CPU is free: on the lowest-numbered CPU whose thread is running
 *   with interrupts on (a thread holding or spinning for an
 *   interrupt-disabling lock, sim_lock_set_irq, is not interrupted, and a
 *   spinning thread is not either); the thread's remaining work resumes
 *   once that CPU's pending interrupt work is done.  A thread whose
 *   interrupts come back on (spin_unlock_irq) takes pending interrupt
 *   work before its next work, as the kernel does at the unlock.
 * - Context switches: one each time a CPU starts running a thread taken off
 *   the run queue (thread to thread, or idle to thread); a chained exec is
 *   not a switch.
 * - iowait: Linux charges an idle CPU to iowait when a task that last ran
 *   there sleeps in io_schedule().  Here it is system-wide: at any instant
 *   min(idle CPUs, threads blocked with io_wait) CPUs are in iowait, the
 *   rest of the idle ones are idle; the iowait share goes to the
 *   lowest-numbered idle CPUs.  Totals are what vmstat's wa shows.
 * - Accounting is exact in integer nanoseconds: over every CPU,
 *   user + sys + irq + idle + iowait == elapsed, at any query time.
 *
 * Steady state allocates nothing: the run queue is intrusive (SimThread),
 * pending interrupt work comes from a free list.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"

G_BEGIN_DECLS

typedef struct _SimCpus   SimCpus;
typedef struct _SimThread SimThread;
typedef struct _SimLock   SimLock;

/* What a CPU spends its time on.  Threads exec in USER or SYS; IRQ is only
 * for sim_cpu_irq() work. */
typedef enum {
  SIM_CPU_USER,
  SIM_CPU_SYS,
  SIM_CPU_IRQ,
} SimCpuMode;

/* A continuation.  @t is the thread, on its CPU while the function runs;
 * NULL for the done callback of interrupt work. */
typedef void (*SimThreadFn) (SimThread *t, gpointer data);

/* Private: where a thread is in its life. */
typedef enum {
  SIM_THREAD_IDLE,       /* never started, or exited */
  SIM_THREAD_RUNNABLE,   /* on the run queue */
  SIM_THREAD_RUNNING,    /* on a CPU, spending work_ns (an event is pending) */
  SIM_THREAD_CALLBACK,   /* on a CPU, inside its continuation */
  SIM_THREAD_SPINNING,   /* on a CPU, spinning for a lock (burns SYS) */
  SIM_THREAD_BLOCKED,    /* off CPU until sim_thread_wake() */
  SIM_THREAD_INTERRUPTED,/* on a CPU, its work held while interrupt work runs
                          * there (sim_cpus_set_irq_preempt) */
} SimThreadState;

/* What runs on a CPU; embedded in the caller's object (a process, a kernel
 * thread), which finds itself again with sim_container_of(). */
struct _SimThread {
  const char     *name;            /* borrowed; for reports and messages */

  /*< private: below this line only sim-cpu.c and sim-lock.c write >*/
  SimCpus        *cpus;
  SimThreadState  state;
  gboolean        io_wait;         /* BLOCKED in io_schedule() */
  gint            cpu;             /* index while on a CPU, else -1 */
  gint            last_cpu;        /* -1 before its first run */
  SimList         run_link;        /* SimCpus run queue */
  SimTime         work_ns;         /* pending or running work */
  SimCpuMode      mode;
  SimThreadFn     then;            /* pending continuation */
  gpointer        data;
  SimTime         spin_start_ns;
  SimTime         cpu_ns[2];       /* completed USER and SYS time (spins in SYS) */
  SimTime         on_cpu_since_ns; /* when a CPU last took it off the run queue */
  SimEventId      work_event;      /* the end of its running work */
  SimTime         work_start_ns;   /* ... which began then */
  /* sim-lock.c */
  SimList         lock_link;       /* a lock's waiters */
  SimTime         lock_wait_start_ns;
  guint           lock_wait_site;  /* the call site it waits from */
  guint           locks_held;
  guint           spinlocks_held;  /* blocking with one held asserts */
  guint           irqs_off;        /* interrupt-disabling locks held or being
                                    * spun for (spin_lock_irq) */
  SimLock        *hold_lock;       /* sim_lock_hold() in progress */
  SimTime         hold_ns;
  SimThreadFn     hold_then;
  gpointer        hold_data;
  /* SIM_CPU_SCHED_O1 (kernel/sched.c of 2.6.9-2.6.10) */
  SimTime         sleep_avg_ns;    /* p->sleep_avg */
  SimTime         slept_since_ns;  /* when it last left a CPU (p->timestamp off CPU) */
  gint            prio;            /* p->prio, 115 (best) .. 125 at nice 0 */
  gboolean        kernel;          /* no mm: a kernel thread (sim_thread_set_kernel) */
  gboolean        need_resched;    /* TIF_NEED_RESCHED: a better thread woke */
  /* sim_cpu_irq_thread */
  gboolean        in_irq;          /* an interrupt context, raised or running */
  gpointer        irq_work;        /* its interrupt work while it runs */
};

/* How the run queue orders threads.
 * - FIFO (the default): one queue in wake-up order, nothing preempts a
 *   thread, which keeps its CPU until it blocks or exits.
 * - O1: 2.6's O(1) interactivity (kernel/sched.c recalc_task_prio,
 *   effective_prio, try_to_wake_up, schedule; the 2.6.10 text, which
 *   dropped 2.6.9's interactive_credit gate).  A thread's sleep_avg grows
 *   by its sleep times (scaled by MAX_BONUS - bonus, capped at 1 s; a user
 *   thread waking from I/O sleep gets no more than INTERACTIVE_SLEEP, one
 *   that slept longer than that otherwise jumps to 900 ms) and shrinks by
 *   its run time divided by its bonus at every switch out; priority is
 *   120 - (bonus - 5), bonus = sleep_avg / 100 ms (0..10), recomputed at
 *   wake-up.  The queue is ordered by priority, wake-up order within one.
 *   A woken thread with a CPU busy everywhere marks the thread running on
 *   the CPU it last ran on if its own priority is better
 *   (TASK_PREEMPTS_CURR, resched_task on task_cpu's runqueue; the wake
 *   affinity and balancing choices of the kernel's per-CPU queues are not
 *   modelled); that thread gives up its CPU at its next exec from a
 *   continuation with no spinlock held (the cond_resched points and
 *   returns to user mode of a kernel without CONFIG_PREEMPT), going back
 *   ahead of the threads of its own priority.  Time slices and the
 *   expired array are not modelled: a thread that never sleeps is never
 *   rotated out.  Kernel threads (sim_thread_set_kernel) are not capped
 *   on I/O sleep, as the kernel's test of p->mm exempts them. */
typedef enum {
  SIM_CPU_SCHED_FIFO,
  SIM_CPU_SCHED_O1,
} SimCpuSched;

/* Time split of one CPU, or of all of them summed. */
typedef struct {
  SimTime user_ns;
  SimTime sys_ns;
  SimTime irq_ns;
  SimTime idle_ns;
  SimTime iowait_ns;
} SimCpuTimes;

/* Cumulative totals since sim_cpus_new(), so that the difference of two
 * snapshots describes an interval; nr_* are the levels at the query time. */
typedef struct {
  SimTime     at_ns;              /* query time */
  SimTime     elapsed_ns;         /* since sim_cpus_new() (per CPU) */
  guint       n_cpus;
  SimCpuTimes total;              /* summed over CPUs: sums to elapsed x n_cpus */
  guint64     context_switches;
  guint64     wakeup_preemptions; /* O1: running threads that gave way to a woken one */
  guint64     interrupts;
  guint64     interrupts_started; /* interrupt work begun on a CPU */
  SimTime     irq_wait_ns;        /* summed over those: raised to begun (a CPU
                                   * busy, or with interrupts off) */
  guint       nr_runnable;        /* on a CPU or waiting for one (vmstat r) */
  guint       nr_blocked_io;      /* blocked with io_wait (vmstat b) */
  SimTime     runnable_thread_ns; /* integral of nr_runnable over time */
  SimTime     blocked_io_thread_ns;
} SimCpuStats;

/* One vmstat line for the interval between two snapshots. */
typedef struct {
  double r;        /* mean runnable threads over the interval */
  double b;        /* mean threads blocked on I/O */
  double in_per_s; /* interrupts per second */
  double cs_per_s; /* context switches per second */
  double irq_wait_mean_ns; /* mean wait of interrupt work begun in the interval */
  double us;       /* percent of CPU time: user */
  double sy;       /* system, interrupt work included */
  double id;       /* idle */
  double wa;       /* iowait */
} SimVmstatRow;

SimCpus    *sim_cpus_new          (Sim               *sim,
                                   guint              n_cpus);
void        sim_cpus_free         (SimCpus           *c);
Sim        *sim_cpus_sim          (const SimCpus     *c);
guint       sim_cpus_n            (const SimCpus     *c);
/* Let interrupt work preempt running threads (setup time; see above).
 * Off by default. */
void        sim_cpus_set_irq_preempt (SimCpus        *c,
                                   gboolean           on);
/* The run queue's order (setup time, before any thread runs); FIFO by
 * default. */
void        sim_cpus_set_sched    (SimCpus           *c,
                                   SimCpuSched        sched);
/* NUMA nodes (setup time): CPUs are split into @n_nodes nodes of equal
 * size in index order (CPUs 0..k-1 on node 0, as sn2 numbers them), so
 * @n_nodes must divide the CPU count.  One node by default. */
void        sim_cpus_set_nodes    (SimCpus           *c,
                                   guint              n_nodes);
guint       sim_cpus_n_nodes      (const SimCpus     *c);
/* The node of CPU @cpu. */
guint       sim_cpus_node_of      (const SimCpus     *c,
                                   guint              cpu);

/* Fill totals so far; @now_ns must not lie before the last state change
 * (sim_now() always qualifies). */
void        sim_cpus_stats        (const SimCpus     *c,
                                   SimTime            now_ns,
                                   SimCpuStats       *out);
/* The time split of CPU @cpu so far. */
void        sim_cpus_cpu_times    (const SimCpus     *c,
                                   guint              cpu,
                                   SimTime            now_ns,
                                   SimCpuTimes       *out);
/* vmstat's columns for the interval from @prev to @cur (same SimCpus). */
void        sim_cpus_vmstat_row   (const SimCpuStats *prev,
                                   const SimCpuStats *cur,
                                   SimVmstatRow      *out);
/* Assert the invariants: exact accounting on every CPU, the run queue and
 * the counters agree with the threads' states, no CPU idles while work
 * waits, the iowait CPUs number min(idle, blocked on I/O).  Returns TRUE, so
 * that it can sit inside g_assert(). */
gboolean    sim_cpus_check        (const SimCpus     *c,
                                   SimTime            now_ns);

void        sim_thread_init       (SimCpus           *c,
                                   SimThread         *t,
                                   const char        *name);

/* Mark @t a kernel thread (setup time): under SIM_CPU_SCHED_O1 its sleep
 * credit from I/O sleeps is not capped. */
void        sim_thread_set_kernel (SimThread         *t,
                                   gboolean           kernel);
/* @t's O(1) dynamic priority (lower is better; 125 before its first
 * wake-up, and under FIFO). */
gint        sim_thread_prio       (const SimThread   *t);

/* Spend @work_ns of CPU time in @mode (USER or SYS), then call @then.
 * - From @t's own continuation (it is on a CPU): it continues on that CPU
 *   at once, no context switch.
 * - On an idle (new or exited) or blocked thread: it becomes runnable and
 *   runs when a CPU is free (for a blocked thread this is a wake-up).
 * A continuation must end with exactly one of sim_cpu_exec(),
 * sim_thread_block(), sim_thread_exit() or sim_lock_acquire()/hold(), as
 * its last call; returning without one asserts. */
void        sim_cpu_exec          (SimCpus           *c,
                                   SimThread         *t,
                                   SimTime            work_ns,
                                   SimCpuMode         mode,
                                   SimThreadFn        then,
                                   gpointer           data);
/* From @t's continuation: give up the CPU until sim_thread_wake().
 * @io_wait: it sleeps on I/O (vmstat b, idle time becomes iowait).
 * Asserts that @t holds no spinlock. */
void        sim_thread_block      (SimCpus           *c,
                                   SimThread         *t,
                                   gboolean           io_wait);
/* Make a blocked (or idle: a start) thread runnable; @then runs once it is
 * on a CPU.  May be called from any event, interrupt work included. */
void        sim_thread_wake       (SimCpus           *c,
                                   SimThread         *t,
                                   SimThreadFn        then,
                                   gpointer           data);
/* From @t's continuation: leave the CPU for good.  The thread is idle
 * again and may be restarted with sim_cpu_exec() or sim_thread_wake().
 * Asserts that it holds no lock. */
void        sim_thread_exit       (SimCpus           *c,
                                   SimThread         *t);
/* CPU time @t has completed in @mode (USER or SYS; spinning counts as SYS);
 * work in progress is not counted until it ends. */
SimTime     sim_thread_cpu_ns     (const SimThread   *t,
                                   SimCpuMode         mode);

/* The node of the CPU @t runs on (it must be on one). */
guint       sim_thread_node       (const SimThread   *t);

/* Threads waiting on the run queue for a CPU (not counting those on one). */
guint       sim_cpus_waiting      (const SimCpus     *c);

/* Interrupt work of @work_ns on the next free CPU, ahead of runnable
 * threads; @done (may be NULL) is called with t == NULL when it ends. */
void        sim_cpu_irq           (SimCpus           *c,
                                   SimTime            work_ns,
                                   SimThreadFn        done,
                                   gpointer           data);

/* Interrupt work that runs as code: @fn is called on @t, an interrupt
 * context (a SimThread from sim_thread_init used for nothing else, idle
 * when raised), on the CPU that takes the interrupt; the work is queued
 * or preempts exactly as sim_cpu_irq's.  From its continuations @t may
 * sim_cpu_exec() in SYS mode (counted as interrupt time on the CPU, as
 * vmstat folds hi and si into sy), take, hold and release spinlocks
 * (spinning for one is interrupt time too: the CPU is busy in the
 * handler) and must end with sim_thread_exit(), which ends the interrupt
 * work.  Blocking, sleeping locks and USER time assert: a handler cannot
 * sleep.  A handler only takes interrupt-disabling locks
 * (sim_lock_set_irq); any other could be held by the thread it
 * interrupted, the kernel's deadlock that lockdep calls irq-unsafe.  The
 * lock holds of an interrupt therefore contend with threads' holds on
 * other CPUs: spin_lock_irqsave(&mapping->tree_lock) in
 * test_clear_page_writeback against the writer of that file. */
void        sim_cpu_irq_thread    (SimCpus           *c,
                                   SimThread         *t,
                                   SimThreadFn        fn,
                                   gpointer           data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimCpus, sim_cpus_free)

G_END_DECLS
