/* sim-cpu.c — CPUs, the run queue and interrupt work; see sim-cpu.h.
 *
 * Each CPU charges its time to one account (user, sys, irq, idle, iowait)
 * from the instant of its last change; a change closes the interval into
 * that account, so the per-CPU sum is elapsed time exactly.  Idle CPUs are
 * re-split between idle and iowait whenever the number of idle CPUs or of
 * threads blocked on I/O changes (an O(CPUs) walk, skipped when nobody is
 * in I/O wait).
 *
 * SIM_CPU_SCHED_O1 follows kernel/sched.c of 2.6.9-2.6.10: recalc_task_prio
 * at wake-up, the run_time debit of schedule(), effective_prio, and
 * try_to_wake_up's TASK_PREEMPTS_CURR test (constants below).
 */
#include "sim/sim-cpu.h"
#include "sim/sim-cpu-private.h"

#include <string.h>

/* Accounts; the first three are SimCpuMode values. */
enum {
  ACCT_USER = SIM_CPU_USER,
  ACCT_SYS = SIM_CPU_SYS,
  ACCT_IRQ = SIM_CPU_IRQ,
  ACCT_IDLE,
  ACCT_IOWAIT,
  N_ACCT
};

typedef struct _IrqWork IrqWork;
struct _IrqWork {
  SimList      link;       /* pending FIFO or free list */
  SimTime      raised_ns;
  SimTime      work_ns;
  SimThreadFn  done;       /* with ctx: the handler's first continuation */
  gpointer     data;
  SimThread   *ctx;        /* sim_cpu_irq_thread: its interrupt context */
};

typedef struct {
  SimCpus    *cpus;
  guint       index;
  gboolean    idle;        /* counted in n_idle: no thread, no irq work */
  SimThread  *current;
  IrqWork    *irq;
  guint       acct;        /* where time goes now */
  SimTime     since_ns;    /* ... since this instant */
  SimTime     ns[N_ACCT];  /* closed intervals */
} SimCpu;

struct _SimCpus {
  Sim        *sim;
  guint       n_cpus;
  guint       n_nodes;        /* NUMA nodes of n_cpus / n_nodes CPUs each */
  gboolean    irq_preempt;    /* interrupt work may interrupt running threads */
  SimCpuSched sched;
  SimCpu     *cpu;
  SimTime     start_ns;

  SimList     runq;           /* SimThread.run_link, FIFO */
  guint       n_runq;
  SimList     irq_pending;    /* IrqWork, FIFO */
  guint       n_irq_pending;
  SimList     irq_free;
  GPtrArray  *irq_all;        /* every IrqWork ever allocated, owned */

  guint       n_idle;
  guint       n_iowait_cpus;  /* idle CPUs charged to iowait now */
  guint       n_on_cpu;       /* threads with a CPU */
  guint       n_blocked_io;

  guint64     context_switches;
  guint64     wakeup_preemptions;
  guint64     interrupts;
  guint64     interrupts_started;
  SimTime     irq_wait_ns;

  SimTime     levels_since_ns;
  SimTime     runnable_thread_ns;
  SimTime     blocked_io_thread_ns;
};

static const char *const state_names[] = {
  [SIM_THREAD_IDLE] = "idle",
  [SIM_THREAD_RUNNABLE] = "runnable",
  [SIM_THREAD_RUNNING] = "running",
  [SIM_THREAD_CALLBACK] = "in its continuation",
  [SIM_THREAD_SPINNING] = "spinning",
  [SIM_THREAD_BLOCKED] = "blocked",
  [SIM_THREAD_INTERRUPTED] = "interrupted",
};

static inline SimTime
cpus_now (const SimCpus *c)
{
  return sim_now (c->sim);
}

/* 2.6's O(1) interactivity at nice 0 (kernel/sched.c): static priority
 * 120; MAX_BONUS = MAX_USER_PRIO x PRIO_BONUS_RATIO % = 40 x 25 % = 10;
 * DEF_TIMESLICE 100 ms; MAX_SLEEP_AVG = DEF_TIMESLICE x MAX_BONUS = 1 s;
 * INTERACTIVE_SLEEP = MAX_SLEEP_AVG x (MAX_BONUS / 2 + DELTA + 1) /
 * MAX_BONUS - 1 jiffy with DELTA = INTERACTIVE_DELTA = 2 at nice 0, a
 * jiffy at HZ=1000. */
#define O1_STATIC_PRIO          120
#define O1_MAX_BONUS            10
#define O1_DEF_TIMESLICE_NS     (100 * SIM_NS_PER_MS)
#define O1_MAX_SLEEP_AVG_NS     (O1_DEF_TIMESLICE_NS * O1_MAX_BONUS)
#define O1_INTERACTIVE_SLEEP_NS (O1_MAX_SLEEP_AVG_NS * (O1_MAX_BONUS / 2 + 2 + 1) / O1_MAX_BONUS \
                                 - SIM_NS_PER_MS)

/* CURRENT_BONUS: 0..10 from sleep_avg. */
static gint
o1_bonus (const SimThread *t)
{
  return (gint) (t->sleep_avg_ns * O1_MAX_BONUS / O1_MAX_SLEEP_AVG_NS);
}

static gint
o1_effective_prio (const SimThread *t)
{
  return O1_STATIC_PRIO - (o1_bonus (t) - O1_MAX_BONUS / 2);
}

/* recalc_task_prio: credit the sleep that ends now. */
static void
o1_wake_credit (SimCpus *c, SimThread *t, gboolean uninterruptible)
{
  SimTime sleep_ns = MIN (cpus_now (c) - t->slept_since_ns, O1_MAX_SLEEP_AVG_NS);
  if (sleep_ns > 0)
    {
      if (!t->kernel && !uninterruptible && sleep_ns > O1_INTERACTIVE_SLEEP_NS)
        t->sleep_avg_ns = O1_MAX_SLEEP_AVG_NS - O1_DEF_TIMESLICE_NS;
      else
        {
          /* The lower the sleep_avg, the faster it rises. */
          sleep_ns *= MAX (O1_MAX_BONUS - o1_bonus (t), 1);
          /* A user task back from I/O sleep rises no further than
           * INTERACTIVE_SLEEP. */
          if (uninterruptible && !t->kernel)
            {
              if (t->sleep_avg_ns >= O1_INTERACTIVE_SLEEP_NS)
                sleep_ns = 0;
              else if (t->sleep_avg_ns + sleep_ns >= O1_INTERACTIVE_SLEEP_NS)
                {
                  t->sleep_avg_ns = O1_INTERACTIVE_SLEEP_NS;
                  sleep_ns = 0;
                }
            }
          t->sleep_avg_ns = MIN (t->sleep_avg_ns + sleep_ns, O1_MAX_SLEEP_AVG_NS);
        }
    }
  t->prio = o1_effective_prio (t);
}

/* schedule()'s debit when @t leaves its CPU: the run time since it got
 * the CPU (the kernel's timestamp is reset at the wake-up too, so waiting
 * on the run queue counts as neither), divided by its bonus. */
static void
o1_charge_run (SimCpus *c, SimThread *t)
{
  SimTime run_ns = MIN (cpus_now (c) - t->on_cpu_since_ns, O1_MAX_SLEEP_AVG_NS);
  run_ns /= MAX (o1_bonus (t), 1);
  t->sleep_avg_ns = MAX (t->sleep_avg_ns - run_ns, 0);
  t->slept_since_ns = cpus_now (c);
  t->need_resched = FALSE;
}

/* Queue @t: at the tail (FIFO), or under O1 behind every thread of better
 * or (unless @ahead_of_equals) equal priority. */
static void
runq_insert (SimCpus *c, SimThread *t, gboolean ahead_of_equals)
{
  SimList *pos = &c->runq;
  if (c->sched == SIM_CPU_SCHED_O1)
    while (pos->prev != &c->runq)
      {
        const SimThread *p = sim_container_of (pos->prev, SimThread, run_link);
        if (p->prio < t->prio || (p->prio == t->prio && !ahead_of_equals))
          break;
        pos = pos->prev;
      }
  sim_list_add_tail (&t->run_link, pos);
  c->n_runq++;
}

/* try_to_wake_up with every CPU busy: the woken thread's runqueue is that
 * of the CPU it last ran on (task_cpu), whose running thread is marked if
 * @t's priority is better (TASK_PREEMPTS_CURR, resched_task).  A thread
 * that never ran takes the CPU running the worst priority. */
static void
o1_preempt_check (SimCpus *c, const SimThread *t)
{
  SimThread *cur = NULL;
  if (t->last_cpu >= 0)
    cur = c->cpu[t->last_cpu].current;
  else
    for (guint i = 0; i < c->n_cpus; i++)
      {
        SimThread *other = c->cpu[i].current;
        if (other != NULL && (cur == NULL || other->prio > cur->prio))
          cur = other;
      }
  if (cur != NULL && cur->prio > t->prio)
    cur->need_resched = TRUE;
}

SimCpus *
sim_cpus_new (Sim *sim, guint n_cpus)
{
  g_return_val_if_fail (n_cpus > 0, NULL);
  SimCpus *c = g_new0 (SimCpus, 1);
  c->sim = sim;
  c->n_cpus = n_cpus;
  c->n_nodes = 1;
  c->start_ns = sim_now (sim);
  c->levels_since_ns = c->start_ns;
  c->cpu = g_new0 (SimCpu, n_cpus);
  for (guint i = 0; i < n_cpus; i++)
    {
      SimCpu *cpu = &c->cpu[i];
      cpu->cpus = c;
      cpu->index = i;
      cpu->idle = TRUE;
      cpu->acct = ACCT_IDLE;
      cpu->since_ns = c->start_ns;
    }
  c->n_idle = n_cpus;
  sim_list_init (&c->runq);
  sim_list_init (&c->irq_pending);
  sim_list_init (&c->irq_free);
  c->irq_all = g_ptr_array_new_with_free_func (g_free);
  return c;
}

void
sim_cpus_free (SimCpus *c)
{
  if (c == NULL)
    return;
  g_ptr_array_unref (c->irq_all);
  g_free (c->cpu);
  g_free (c);
}

Sim *
sim_cpus_sim (const SimCpus *c)
{
  return c->sim;
}

guint
sim_cpus_n (const SimCpus *c)
{
  return c->n_cpus;
}

void
sim_cpus_set_irq_preempt (SimCpus *c, gboolean on)
{
  c->irq_preempt = on;
}

void
sim_cpus_set_sched (SimCpus *c, SimCpuSched sched)
{
  g_return_if_fail (sched == SIM_CPU_SCHED_FIFO || sched == SIM_CPU_SCHED_O1);
  g_return_if_fail (c->n_on_cpu == 0 && c->n_runq == 0);
  c->sched = sched;
}

void
sim_thread_set_kernel (SimThread *t, gboolean kernel)
{
  t->kernel = kernel;
}

gint
sim_thread_prio (const SimThread *t)
{
  return t->prio;
}

void
sim_cpus_set_nodes (SimCpus *c, guint n_nodes)
{
  g_return_if_fail (n_nodes > 0 && c->n_cpus % n_nodes == 0);
  c->n_nodes = n_nodes;
}

guint
sim_cpus_n_nodes (const SimCpus *c)
{
  return c->n_nodes;
}

guint
sim_cpus_node_of (const SimCpus *c, guint cpu)
{
  g_return_val_if_fail (cpu < c->n_cpus, 0);
  return cpu / (c->n_cpus / c->n_nodes);
}

guint
sim_thread_node (const SimThread *t)
{
  g_assert (t->cpu >= 0);
  return sim_cpus_node_of (t->cpus, (guint) t->cpu);
}

/* Close the current interval of @cpu and charge from now on to @acct. */
static void
cpu_account (SimCpu *cpu, guint acct, SimTime now_ns)
{
  g_assert (now_ns >= cpu->since_ns);
  cpu->ns[cpu->acct] += now_ns - cpu->since_ns;
  cpu->since_ns = now_ns;
  cpu->acct = acct;
}

/* Integrate the runnable and blocked levels up to now; call before any
 * change of n_runq, n_on_cpu or n_blocked_io. */
static void
levels_update (SimCpus *c)
{
  SimTime now_ns = cpus_now (c);
  SimTime d = now_ns - c->levels_since_ns;
  c->runnable_thread_ns += d * (SimTime) (c->n_runq + c->n_on_cpu);
  c->blocked_io_thread_ns += d * (SimTime) c->n_blocked_io;
  c->levels_since_ns = now_ns;
}

/* Give iowait to the lowest-numbered min(idle, blocked on I/O) idle CPUs;
 * call after any change of n_idle or n_blocked_io. */
static void
idle_reclassify (SimCpus *c)
{
  if (c->n_blocked_io == 0 && c->n_iowait_cpus == 0)
    return;
  guint want = MIN (c->n_idle, c->n_blocked_io);
  guint k = 0;
  SimTime now_ns = cpus_now (c);
  for (guint i = 0; i < c->n_cpus; i++)
    {
      SimCpu *cpu = &c->cpu[i];
      if (!cpu->idle)
        continue;
      guint acct = k < want ? ACCT_IOWAIT : ACCT_IDLE;
      k++;
      if (cpu->acct != acct)
        cpu_account (cpu, acct, now_ns);
    }
  c->n_iowait_cpus = want;
}

static SimCpu *
find_idle_cpu (SimCpus *c, gint prefer)
{
  if (c->n_idle == 0)
    return NULL;
  if (prefer >= 0 && c->cpu[prefer].idle)
    return &c->cpu[prefer];
  for (guint i = 0; i < c->n_cpus; i++)
    if (c->cpu[i].idle)
      return &c->cpu[i];
  g_assert_not_reached ();
}

static void
cpu_claim (SimCpus *c, SimCpu *cpu)
{
  g_assert (cpu->idle && cpu->current == NULL && cpu->irq == NULL);
  cpu->idle = FALSE;
  c->n_idle--;
}

static void
cpu_set_idle (SimCpus *c, SimCpu *cpu)
{
  g_assert (!cpu->idle && cpu->current == NULL && cpu->irq == NULL);
  cpu->idle = TRUE;
  c->n_idle++;
  cpu_account (cpu, ACCT_IDLE, cpus_now (c));
}

static void work_done (Sim *sim, gpointer subject, gpointer object);
static void irq_start (SimCpus *c, SimCpu *cpu, IrqWork *w);

static IrqWork *
irq_pop (SimCpus *c)
{
  IrqWork *w = sim_list_first_entry (&c->irq_pending, IrqWork, link);
  sim_list_del (&w->link);
  c->n_irq_pending--;
  return w;
}

/* @t is on its CPU: spend its pending work, then run its continuation.
 * With interrupts on and interrupt work waiting, that work goes first. */
static void
start_work (SimCpus *c, SimThread *t)
{
  SimCpu *cpu = &c->cpu[t->cpu];
  if (c->irq_preempt && t->irqs_off == 0 && c->n_irq_pending > 0)
    {
      t->state = SIM_THREAD_INTERRUPTED;
      irq_start (c, cpu, irq_pop (c));
      return;
    }
  t->state = SIM_THREAD_RUNNING;
  cpu_account (cpu, t->mode, cpus_now (c));
  t->work_start_ns = cpus_now (c);
  t->work_event = sim_schedule_in (c->sim, t->work_ns, work_done, t, NULL);
}

/* Interrupt @cpu's running thread: the work done so far is counted, the
 * rest waits until the CPU's interrupt work is over. */
static void
preempt_work (SimCpus *c, SimCpu *cpu)
{
  SimThread *t = cpu->current;
  g_assert (t->state == SIM_THREAD_RUNNING && t->irqs_off == 0);
  gboolean cancelled = sim_cancel (c->sim, t->work_event);
  g_assert (cancelled);
  SimTime done = cpus_now (c) - t->work_start_ns;
  g_assert (done <= t->work_ns);
  t->cpu_ns[t->mode] += done;
  t->work_ns -= done;
  t->state = SIM_THREAD_INTERRUPTED;
}

/* The CPU interrupt work may preempt: the lowest-numbered one running a
 * thread's work with interrupts on; NULL if none. */
static SimCpu *
find_preemptible_cpu (SimCpus *c)
{
  for (guint i = 0; i < c->n_cpus; i++)
    {
      SimCpu *cpu = &c->cpu[i];
      if (cpu->irq == NULL && cpu->current != NULL && cpu->current->state == SIM_THREAD_RUNNING
          && cpu->current->irqs_off == 0)
        return cpu;
    }
  return NULL;
}

/* Put @t on @cpu (claimed, or just left by its previous owner). */
static void
cpu_run_thread (SimCpus *c, SimCpu *cpu, SimThread *t)
{
  levels_update (c);
  cpu->current = t;
  t->cpu = (gint) cpu->index;
  t->last_cpu = (gint) cpu->index;
  t->on_cpu_since_ns = cpus_now (c);
  c->n_on_cpu++;
  c->context_switches++;
  start_work (c, t);
}

static void irq_done (Sim *sim, gpointer subject, gpointer object);
static void irq_ctx_work_done (Sim *sim, gpointer subject, gpointer object);
static void irq_finish (SimCpus *c, SimCpu *cpu, IrqWork *w);

static void
irq_start (SimCpus *c, SimCpu *cpu, IrqWork *w)
{
  cpu->irq = w;
  c->interrupts_started++;
  c->irq_wait_ns += cpus_now (c) - w->raised_ns;
  cpu_account (cpu, ACCT_IRQ, cpus_now (c));
  if (w->ctx == NULL)
    {
      sim_schedule_in (c->sim, w->work_ns, irq_done, cpu, w);
      return;
    }
  /* An interrupt context: its handler runs from an event of its own. */
  SimThread *t = w->ctx;
  t->cpu = (gint) cpu->index;
  t->irq_work = w;
  t->state = SIM_THREAD_RUNNING;
  t->work_ns = 0;
  t->mode = SIM_CPU_SYS;
  t->then = w->done;
  t->data = w->data;
  t->work_event = sim_schedule_in (c->sim, 0, irq_ctx_work_done, t, NULL);
}

/* @cpu has nothing to run: interrupt work first, then the run queue. */
static void
cpu_next (SimCpus *c, SimCpu *cpu)
{
  if (!sim_list_empty (&c->irq_pending))
    irq_start (c, cpu, irq_pop (c));
  else if (!sim_list_empty (&c->runq))
    {
      SimThread *t = sim_list_first_entry (&c->runq, SimThread, run_link);
      levels_update (c);
      sim_list_del (&t->run_link);
      c->n_runq--;
      cpu_run_thread (c, cpu, t);
    }
  else
    cpu_set_idle (c, cpu);
}

static void
run_continuation (SimCpus *c, SimThread *t)
{
  SimCpu *cpu = &c->cpu[t->cpu];
  SimThreadFn then = t->then;
  gpointer data = t->data;
  t->then = NULL;
  t->data = NULL;
  t->state = SIM_THREAD_CALLBACK;
  then (t, data);
  /* Still on this CPU means @t is alive: it must have moved on. */
  if (cpu->current == t && t->state == SIM_THREAD_CALLBACK)
    g_error ("thread %s returned from its continuation without exec, block, exit or a lock",
             t->name);
}

static void
work_done (Sim *sim, gpointer subject, gpointer object)
{
  SimThread *t = subject;
  g_assert (t->state == SIM_THREAD_RUNNING);
  t->cpu_ns[t->mode] += t->work_ns;
  t->work_ns = 0;
  run_continuation (t->cpus, t);
}

/* @t (idle or blocked, its work and continuation set) wants a CPU. */
static void
make_runnable (SimCpus *c, SimThread *t)
{
  levels_update (c);
  if (t->state == SIM_THREAD_BLOCKED && t->io_wait)
    c->n_blocked_io--;
  if (c->sched == SIM_CPU_SCHED_O1)
    o1_wake_credit (c, t, t->state == SIM_THREAD_BLOCKED && t->io_wait);
  t->io_wait = FALSE;
  SimCpu *cpu = find_idle_cpu (c, t->last_cpu);
  if (cpu != NULL)
    {
      cpu_claim (c, cpu);
      cpu_run_thread (c, cpu, t);
    }
  else
    {
      t->state = SIM_THREAD_RUNNABLE;
      runq_insert (c, t, FALSE);
      if (c->sched == SIM_CPU_SCHED_O1)
        o1_preempt_check (c, t);
    }
  idle_reclassify (c);
}

/* @t leaves its CPU, which takes the next work. */
static void
cpu_leave (SimCpus *c, SimThread *t)
{
  SimCpu *cpu = &c->cpu[t->cpu];
  g_assert (cpu->current == t);
  levels_update (c);
  if (c->sched == SIM_CPU_SCHED_O1)
    o1_charge_run (c, t);
  cpu->current = NULL;
  t->cpu = -1;
  c->n_on_cpu--;
  cpu_next (c, cpu);
}

void
sim_thread_init (SimCpus *c, SimThread *t, const char *name)
{
  memset (t, 0, sizeof *t);
  t->name = name;
  t->cpus = c;
  t->state = SIM_THREAD_IDLE;
  t->cpu = -1;
  t->last_cpu = -1;
  t->slept_since_ns = cpus_now (c);
  t->prio = O1_STATIC_PRIO + O1_MAX_BONUS / 2;
  sim_list_init (&t->run_link);
  sim_list_init (&t->lock_link);
}

/* A preemption point of @t, marked by a better thread's wake-up: with no
 * spinlock held and that better thread still waiting, @t goes back on the
 * run queue ahead of its equals and its CPU takes the queue's head. */
static gboolean
o1_yield (SimCpus *c, SimThread *t)
{
  if (t->spinlocks_held > 0 || t->irqs_off > 0)
    return FALSE;   /* preemption waits for the unlock's next exec */
  t->need_resched = FALSE;
  if (c->n_runq == 0
      || sim_list_first_entry (&c->runq, SimThread, run_link)->prio >= t->prio)
    return FALSE;
  levels_update (c);
  t->state = SIM_THREAD_RUNNABLE;
  runq_insert (c, t, TRUE);
  c->wakeup_preemptions++;
  cpu_leave (c, t);
  return TRUE;
}

void
sim_cpu_exec (SimCpus *c, SimThread *t, SimTime work_ns, SimCpuMode mode,
              SimThreadFn then, gpointer data)
{
  g_return_if_fail (mode == SIM_CPU_USER || mode == SIM_CPU_SYS);
  g_return_if_fail (work_ns >= 0 && then != NULL);
  g_assert (t->cpus == c);
  t->work_ns = work_ns;
  t->mode = mode;
  t->then = then;
  t->data = data;
  switch (t->state)
    {
    case SIM_THREAD_CALLBACK:
      if (t->in_irq)
        {
          /* A handler's work: its CPU stays in the interrupt account. */
          g_assert (mode == SIM_CPU_SYS);
          t->state = SIM_THREAD_RUNNING;
          t->work_event = sim_schedule_in (c->sim, work_ns, irq_ctx_work_done, t, NULL);
          break;
        }
      if (t->need_resched && o1_yield (c, t))
        break;
      start_work (c, t);
      break;
    case SIM_THREAD_IDLE:
    case SIM_THREAD_BLOCKED:
      make_runnable (c, t);
      break;
    default:
      g_error ("sim_cpu_exec: thread %s is %s", t->name, state_names[t->state]);
    }
}

void
sim_thread_block (SimCpus *c, SimThread *t, gboolean io_wait)
{
  g_assert (t->cpus == c);
  if (t->state != SIM_THREAD_CALLBACK)
    g_error ("sim_thread_block: thread %s is %s", t->name, state_names[t->state]);
  if (t->in_irq)
    g_error ("sim_thread_block: %s is an interrupt context, which cannot sleep", t->name);
  /* The kernel's "scheduling while atomic". */
  g_assert (t->spinlocks_held == 0);
  levels_update (c);
  t->state = SIM_THREAD_BLOCKED;
  t->io_wait = io_wait;
  if (io_wait)
    c->n_blocked_io++;
  cpu_leave (c, t);
  idle_reclassify (c);
}

void
sim_thread_wake (SimCpus *c, SimThread *t, SimThreadFn then, gpointer data)
{
  g_return_if_fail (then != NULL);
  g_assert (t->cpus == c);
  if (t->state != SIM_THREAD_BLOCKED && t->state != SIM_THREAD_IDLE)
    g_error ("sim_thread_wake: thread %s is %s", t->name, state_names[t->state]);
  t->work_ns = 0;
  t->mode = SIM_CPU_SYS;
  t->then = then;
  t->data = data;
  make_runnable (c, t);
}

void
sim_thread_exit (SimCpus *c, SimThread *t)
{
  g_assert (t->cpus == c);
  if (t->state != SIM_THREAD_CALLBACK)
    g_error ("sim_thread_exit: thread %s is %s", t->name, state_names[t->state]);
  g_assert (t->locks_held == 0);
  if (t->in_irq)
    {
      /* The end of the handler: its interrupt work is over. */
      SimCpu *cpu = &c->cpu[t->cpu];
      IrqWork *w = t->irq_work;
      g_assert (cpu->irq == w && w->ctx == t);
      t->state = SIM_THREAD_IDLE;
      t->in_irq = FALSE;
      t->irq_work = NULL;
      t->cpu = -1;
      irq_finish (c, cpu, w);
      return;
    }
  t->state = SIM_THREAD_IDLE;
  cpu_leave (c, t);
  idle_reclassify (c);
}

SimTime
sim_thread_cpu_ns (const SimThread *t, SimCpuMode mode)
{
  g_return_val_if_fail (mode == SIM_CPU_USER || mode == SIM_CPU_SYS, 0);
  return t->cpu_ns[mode];
}

void
sim_thread_spin (SimCpus *c, SimThread *t, SimThreadFn then, gpointer data)
{
  g_assert (t->state == SIM_THREAD_CALLBACK);
  t->state = SIM_THREAD_SPINNING;
  t->then = then;
  t->data = data;
  t->spin_start_ns = cpus_now (c);
  /* A handler spins inside its interrupt: the CPU's account stays. */
  if (!t->in_irq)
    cpu_account (&c->cpu[t->cpu], ACCT_SYS, cpus_now (c));
}

void
sim_thread_spin_granted (SimCpus *c, SimThread *t)
{
  g_assert (t->state == SIM_THREAD_SPINNING);
  if (t->in_irq)
    {
      t->state = SIM_THREAD_RUNNING;
      t->work_event = sim_schedule_in (c->sim, 0, irq_ctx_work_done, t, NULL);
      return;
    }
  t->cpu_ns[SIM_CPU_SYS] += cpus_now (c) - t->spin_start_ns;
  /* A zero-length SYS exec, so that the continuation runs from its own
   * event and not inside the releaser's. */
  t->state = SIM_THREAD_RUNNING;
  t->work_ns = 0;
  t->mode = SIM_CPU_SYS;
  t->work_start_ns = cpus_now (c);
  t->work_event = sim_schedule_in (c->sim, 0, work_done, t, NULL);
}

static IrqWork *
irq_alloc (SimCpus *c)
{
  if (!sim_list_empty (&c->irq_free))
    {
      IrqWork *w = sim_list_first_entry (&c->irq_free, IrqWork, link);
      sim_list_del (&w->link);
      return w;
    }
  IrqWork *w = g_new0 (IrqWork, 1);
  sim_list_init (&w->link);
  g_ptr_array_add (c->irq_all, w);
  return w;
}

/* @cpu's interrupt work @w is over: pending interrupt work, the thread
 * it interrupted, or the next work. */
static void
irq_finish (SimCpus *c, SimCpu *cpu, IrqWork *w)
{
  cpu->irq = NULL;
  w->ctx = NULL;
  sim_list_add (&w->link, &c->irq_free);
  SimThread *t = cpu->current;
  if (t != NULL)
    {
      /* An interrupted thread: pending interrupt work first, then its own. */
      g_assert (t->state == SIM_THREAD_INTERRUPTED);
      if (c->n_irq_pending > 0)
        irq_start (c, cpu, irq_pop (c));
      else
        start_work (c, t);
      return;
    }
  cpu_next (c, cpu);
  idle_reclassify (c);
}

static void
irq_done (Sim *sim, gpointer subject, gpointer object)
{
  SimCpu *cpu = subject;
  SimCpus *c = cpu->cpus;
  IrqWork *w = object;
  g_assert (cpu->irq == w);
  /* The handler runs while the CPU is still in the interrupt, so a thread
   * it wakes queues behind pending interrupt work like in the kernel. */
  if (w->done != NULL)
    w->done (NULL, w->data);
  irq_finish (c, cpu, w);
}

/* An interrupt context's work or spin is over: its continuation runs. */
static void
irq_ctx_work_done (Sim *sim, gpointer subject, gpointer object)
{
  SimThread *t = subject;
  g_assert (t->in_irq && t->state == SIM_THREAD_RUNNING);
  SimThreadFn then = t->then;
  gpointer data = t->data;
  t->then = NULL;
  t->data = NULL;
  t->state = SIM_THREAD_CALLBACK;
  then (t, data);
  if (t->state == SIM_THREAD_CALLBACK)
    g_error ("interrupt context %s returned from its handler without exec, exit or a lock",
             t->name);
}

/* Queue @w, or start it on an idle CPU, or preempt a running thread. */
static void
irq_raise (SimCpus *c, IrqWork *w)
{
  w->raised_ns = cpus_now (c);
  c->interrupts++;
  SimCpu *cpu = find_idle_cpu (c, -1);
  if (cpu != NULL)
    {
      cpu_claim (c, cpu);
      irq_start (c, cpu, w);
      idle_reclassify (c);
    }
  else if (c->irq_preempt && (cpu = find_preemptible_cpu (c)) != NULL)
    {
      preempt_work (c, cpu);
      irq_start (c, cpu, w);
    }
  else
    {
      sim_list_add_tail (&w->link, &c->irq_pending);
      c->n_irq_pending++;
    }
}

void
sim_cpu_irq (SimCpus *c, SimTime work_ns, SimThreadFn done, gpointer data)
{
  g_return_if_fail (work_ns >= 0);
  IrqWork *w = irq_alloc (c);
  w->work_ns = work_ns;
  w->done = done;
  w->data = data;
  w->ctx = NULL;
  irq_raise (c, w);
}

void
sim_cpu_irq_thread (SimCpus *c, SimThread *t, SimThreadFn fn, gpointer data)
{
  g_return_if_fail (fn != NULL);
  g_assert (t->cpus == c);
  if (t->state != SIM_THREAD_IDLE || t->in_irq)
    g_error ("sim_cpu_irq_thread: context %s is %s", t->name, state_names[t->state]);
  t->in_irq = TRUE;
  IrqWork *w = irq_alloc (c);
  w->work_ns = 0;
  w->done = fn;
  w->data = data;
  w->ctx = t;
  irq_raise (c, w);
}

static void
cpu_times_at (const SimCpu *cpu, SimTime now_ns, SimCpuTimes *out)
{
  g_assert (now_ns >= cpu->since_ns);
  SimTime ns[N_ACCT];
  memcpy (ns, cpu->ns, sizeof ns);
  ns[cpu->acct] += now_ns - cpu->since_ns;
  out->user_ns = ns[ACCT_USER];
  out->sys_ns = ns[ACCT_SYS];
  out->irq_ns = ns[ACCT_IRQ];
  out->idle_ns = ns[ACCT_IDLE];
  out->iowait_ns = ns[ACCT_IOWAIT];
}

static SimTime
times_sum (const SimCpuTimes *t)
{
  return t->user_ns + t->sys_ns + t->irq_ns + t->idle_ns + t->iowait_ns;
}

void
sim_cpus_cpu_times (const SimCpus *c, guint cpu, SimTime now_ns, SimCpuTimes *out)
{
  g_return_if_fail (cpu < c->n_cpus);
  cpu_times_at (&c->cpu[cpu], now_ns, out);
}

void
sim_cpus_stats (const SimCpus *c, SimTime now_ns, SimCpuStats *out)
{
  memset (out, 0, sizeof *out);
  g_assert (now_ns >= c->levels_since_ns);
  out->at_ns = now_ns;
  out->elapsed_ns = now_ns - c->start_ns;
  out->n_cpus = c->n_cpus;
  for (guint i = 0; i < c->n_cpus; i++)
    {
      SimCpuTimes t;
      cpu_times_at (&c->cpu[i], now_ns, &t);
      out->total.user_ns += t.user_ns;
      out->total.sys_ns += t.sys_ns;
      out->total.irq_ns += t.irq_ns;
      out->total.idle_ns += t.idle_ns;
      out->total.iowait_ns += t.iowait_ns;
    }
  g_assert (times_sum (&out->total) == out->elapsed_ns * (SimTime) c->n_cpus);
  out->context_switches = c->context_switches;
  out->interrupts = c->interrupts;
  out->wakeup_preemptions = c->wakeup_preemptions;
  out->interrupts_started = c->interrupts_started;
  out->irq_wait_ns = c->irq_wait_ns;
  out->nr_runnable = c->n_runq + c->n_on_cpu;
  out->nr_blocked_io = c->n_blocked_io;
  SimTime d = now_ns - c->levels_since_ns;
  out->runnable_thread_ns = c->runnable_thread_ns + d * (SimTime) out->nr_runnable;
  out->blocked_io_thread_ns = c->blocked_io_thread_ns + d * (SimTime) c->n_blocked_io;
}

void
sim_cpus_vmstat_row (const SimCpuStats *prev, const SimCpuStats *cur, SimVmstatRow *out)
{
  g_return_if_fail (cur->at_ns >= prev->at_ns && cur->n_cpus == prev->n_cpus);
  memset (out, 0, sizeof *out);
  SimTime dt = cur->at_ns - prev->at_ns;
  if (dt == 0)
    return;
  out->r = (double) (cur->runnable_thread_ns - prev->runnable_thread_ns) / (double) dt;
  out->b = (double) (cur->blocked_io_thread_ns - prev->blocked_io_thread_ns) / (double) dt;
  out->in_per_s = (double) (cur->interrupts - prev->interrupts) * 1e9 / (double) dt;
  out->cs_per_s = (double) (cur->context_switches - prev->context_switches) * 1e9 / (double) dt;
  guint64 started = cur->interrupts_started - prev->interrupts_started;
  out->irq_wait_mean_ns = started ? (double) (cur->irq_wait_ns - prev->irq_wait_ns) / (double) started : 0.0;
  /* The CPU-time total is dt x CPUs exactly, by the accounting invariant. */
  double total = (double) dt * cur->n_cpus;
  out->us = 100.0 * (double) (cur->total.user_ns - prev->total.user_ns) / total;
  out->sy = 100.0 * (double) (cur->total.sys_ns - prev->total.sys_ns
                              + cur->total.irq_ns - prev->total.irq_ns) / total;
  out->id = 100.0 * (double) (cur->total.idle_ns - prev->total.idle_ns) / total;
  out->wa = 100.0 * (double) (cur->total.iowait_ns - prev->total.iowait_ns) / total;
}

gboolean
sim_cpus_check (const SimCpus *c, SimTime now_ns)
{
  guint idle = 0, iowait = 0, on_cpu = 0, busy_irq = 0;
  for (guint i = 0; i < c->n_cpus; i++)
    {
      const SimCpu *cpu = &c->cpu[i];
      SimCpuTimes t;
      cpu_times_at (cpu, now_ns, &t);
      g_assert_cmpint (times_sum (&t), ==, now_ns - c->start_ns);
      /* A thread shares its CPU with interrupt work only while interrupted. */
      g_assert (cpu->current == NULL || cpu->irq == NULL
                || cpu->current->state == SIM_THREAD_INTERRUPTED);
      g_assert (cpu->idle == (cpu->current == NULL && cpu->irq == NULL));
      if (cpu->idle)
        {
          idle++;
          g_assert (cpu->acct == ACCT_IDLE || cpu->acct == ACCT_IOWAIT);
          iowait += cpu->acct == ACCT_IOWAIT;
        }
      else if (cpu->irq != NULL)
        {
          busy_irq++;
          g_assert (cpu->acct == ACCT_IRQ);
          if (cpu->current != NULL)
            {
              on_cpu++;
              g_assert (cpu->current->cpu == (gint) i && cpu->current->irqs_off == 0);
            }
        }
      else
        {
          const SimThread *th = cpu->current;
          on_cpu++;
          g_assert (th->cpu == (gint) i);
          g_assert (th->state == SIM_THREAD_RUNNING || th->state == SIM_THREAD_SPINNING
                    || th->state == SIM_THREAD_CALLBACK);
          if (th->state == SIM_THREAD_RUNNING)
            g_assert (cpu->acct == th->mode);
          if (th->state == SIM_THREAD_SPINNING)
            g_assert (cpu->acct == ACCT_SYS);
        }
    }
  g_assert_cmpuint (idle, ==, c->n_idle);
  g_assert_cmpuint (on_cpu, ==, c->n_on_cpu);
  g_assert_cmpuint (iowait, ==, MIN (c->n_idle, c->n_blocked_io));
  g_assert_cmpuint (sim_list_length (&c->runq), ==, c->n_runq);
  g_assert_cmpuint (sim_list_length (&c->irq_pending), ==, c->n_irq_pending);
  for (const SimList *p = c->runq.next; p != &c->runq; p = p->next)
    g_assert (sim_container_of (p, SimThread, run_link)->state == SIM_THREAD_RUNNABLE);
  /* Work-conserving: no CPU idles while something waits for one. */
  if (c->n_idle > 0)
    g_assert (c->n_runq == 0 && c->n_irq_pending == 0);
  return TRUE;
}

guint
sim_cpus_waiting (const SimCpus *c)
{
  return c->n_runq;
}
