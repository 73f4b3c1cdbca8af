/* test-sim-cpu.c — CPUs and threads: the run queue (2 CPUs, 4 threads),
 * exact accounting (user+sys+irq+idle+iowait == elapsed x CPUs, mid-run and
 * at the end, under a random mix of work, blocking and interrupts), iowait
 * only while a thread sleeps on I/O with a CPU idle, interrupt work ahead of
 * runnable threads without preemption (and, when asked, preempting running
 * work but not a thread with interrupts off), interrupt handlers that take
 * interrupt-disabling locks against threads on other CPUs, NUMA node
 * numbering, vmstat rows, and the continuation contract. */
#include <glib.h>

#include "sim/sim.h"
#include "sim/sim-cpu.h"
#include "sim/sim-rng.h"
#include "sim-worker.h"

#define MS SIM_NS_PER_MS
#define US SIM_NS_PER_US

static void
assert_times (const SimCpuTimes *t, SimTime user, SimTime sys, SimTime irq, SimTime idle,
              SimTime iowait)
{
  g_assert_cmpint (t->user_ns, ==, user);
  g_assert_cmpint (t->sys_ns, ==, sys);
  g_assert_cmpint (t->irq_ns, ==, irq);
  g_assert_cmpint (t->idle_ns, ==, idle);
  g_assert_cmpint (t->iowait_ns, ==, iowait);
}

static void
test_two_cpus_four_threads (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 2);
  static const WStep script[] = { { W_USER, 10 * MS }, { W_END } };
  static const char *const names[] = { "t0", "t1", "t2", "t3" };
  Worker w[4];
  for (guint i = 0; i < 4; i++)
    worker_init (&w[i], sim, c, names[i], script, 0);

  sim_run_until (sim, 5 * MS);
  SimCpuStats st;
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.nr_runnable, ==, 4);
  g_assert_cmpuint (st.context_switches, ==, 2);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));

  sim_run_until (sim, SIM_TIME_NEVER);
  /* FIFO: the first two run 0-10 ms, the other two 10-20 ms. */
  g_assert_cmpint (w[0].end_ns, ==, 10 * MS);
  g_assert_cmpint (w[1].end_ns, ==, 10 * MS);
  g_assert_cmpint (w[2].end_ns, ==, 20 * MS);
  g_assert_cmpint (w[3].end_ns, ==, 20 * MS);
  g_assert_cmpint (sim_now (sim), ==, 20 * MS);
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.context_switches, ==, 4);
  g_assert_cmpuint (st.nr_runnable, ==, 0);
  assert_times (&st.total, 40 * MS, 0, 0, 0, 0);
  /* Four threads for 10 ms, two for the next 10: mean r over 20 ms is 3. */
  g_assert_cmpint (st.runnable_thread_ns, ==, 60 * MS);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (sim_thread_cpu_ns (&w[i].thread, SIM_CPU_USER), ==, 10 * MS);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));
}

/* A chained exec keeps the CPU: no context switch, no idle gap. */
static void
test_chained_exec_no_switch (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  static const WStep a[] = { { W_USER, 1 * MS }, { W_SYS, 2 * MS }, { W_USER, 3 * MS }, { W_END } };
  static const WStep b[] = { { W_SYS, 1 * MS }, { W_END } };
  Worker wa, wb;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 0);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpint (wa.end_ns, ==, 6 * MS);
  g_assert_cmpint (wb.end_ns, ==, 7 * MS);
  SimCpuStats st;
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.context_switches, ==, 2);
  assert_times (&st.total, 4 * MS, 3 * MS, 0, 0, 0);
  g_assert_cmpint (sim_thread_cpu_ns (&wa.thread, SIM_CPU_SYS), ==, 2 * MS);
}

/* A woken thread goes back to the CPU it last ran on when that one is idle
 * (cache affinity), not to the lowest-numbered idle CPU. */
/* NUMA nodes: 8 CPUs in 4 nodes of 2, numbered in index order; a thread
 * reports the node of the CPU it runs on. */
static void
node_seen (SimThread *t, gpointer data)
{
  guint *seen = data;
  seen[t->cpu] = sim_thread_node (t);
  sim_thread_exit (t->cpus, t);
}

static void
test_nodes (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 8);
  g_assert_cmpuint (sim_cpus_n_nodes (c), ==, 1);
  g_assert_cmpuint (sim_cpus_node_of (c, 7), ==, 0);
  sim_cpus_set_nodes (c, 4);
  g_assert_cmpuint (sim_cpus_n_nodes (c), ==, 4);
  static const guint expected[] = { 0, 0, 1, 1, 2, 2, 3, 3 };
  for (guint i = 0; i < 8; i++)
    g_assert_cmpuint (sim_cpus_node_of (c, i), ==, expected[i]);
  /* Eight threads started at once take CPUs 0..7 in order. */
  SimThread t[8];
  guint seen[8] = { 0 };
  static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
  for (guint i = 0; i < 8; i++)
    {
      sim_thread_init (c, &t[i], names[i]);
      seen[i] = G_MAXUINT;
      sim_cpu_exec (c, &t[i], 1 * US, SIM_CPU_SYS, node_seen, seen);
    }
  sim_run_until (sim, SIM_TIME_NEVER);
  for (guint i = 0; i < 8; i++)
    g_assert_cmpuint (seen[i], ==, expected[i]);
}

static void
test_wake_affinity (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 2);
  static const WStep a[] = { { W_USER, 1 * MS }, { W_END } };
  static const WStep b[] = { { W_USER, 1 * MS }, { W_SLEEP, 1 * MS }, { W_USER, 1 * MS }, { W_END } };
  Worker wa, wb;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 0);
  sim_run_until (sim, SIM_TIME_NEVER);
  SimCpuTimes cpu0, cpu1;
  sim_cpus_cpu_times (c, 0, sim_now (sim), &cpu0);
  sim_cpus_cpu_times (c, 1, sim_now (sim), &cpu1);
  assert_times (&cpu0, 1 * MS, 0, 0, 2 * MS, 0);
  assert_times (&cpu1, 2 * MS, 0, 0, 1 * MS, 0);
}

/* A sleeps on I/O 1-5 ms; B computes 0-3 ms; two CPUs. */
static void
run_iowait_case (gboolean io_wait, SimCpuStats *mid, SimCpuStats *end, SimCpuTimes *cpu0,
                 SimCpuTimes *cpu1)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 2);
  WStep a[] = { { W_USER, 1 * MS }, { io_wait ? W_IO : W_SLEEP, 4 * MS }, { W_USER, 1 * MS }, { W_END } };
  static const WStep b[] = { { W_USER, 3 * MS }, { W_END } };
  Worker wa, wb;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 0);
  sim_run_until (sim, 2 * MS);
  sim_cpus_stats (c, sim_now (sim), mid);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpint (wa.end_ns, ==, 6 * MS);
  sim_cpus_stats (c, sim_now (sim), end);
  sim_cpus_cpu_times (c, 0, sim_now (sim), cpu0);
  sim_cpus_cpu_times (c, 1, sim_now (sim), cpu1);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));
}

static void
test_iowait (void)
{
  SimCpuStats mid, end;
  SimCpuTimes cpu0, cpu1;
  run_iowait_case (TRUE, &mid, &end, &cpu0, &cpu1);
  /* At 2 ms: A asleep on I/O since 1 ms, its CPU idle, B computing. */
  g_assert_cmpuint (mid.nr_blocked_io, ==, 1);
  g_assert_cmpuint (mid.nr_runnable, ==, 1);
  assert_times (&mid.total, 3 * MS, 0, 0, 0, 1 * MS);
  /* 1-3 ms: one idle CPU, in iowait; 3-5 ms: two idle CPUs, one thread
   * on I/O, so one iowait and one idle; 5-6 ms: A runs, CPU 1 idle. */
  assert_times (&end.total, 5 * MS, 0, 0, 3 * MS, 4 * MS);
  assert_times (&cpu0, 2 * MS, 0, 0, 0, 4 * MS);      /* iowait goes to the lowest idle CPU */
  assert_times (&cpu1, 3 * MS, 0, 0, 3 * MS, 0);
  g_assert_cmpint (end.blocked_io_thread_ns, ==, 4 * MS);
  g_assert_cmpuint (end.nr_blocked_io, ==, 0);

  run_iowait_case (FALSE, &mid, &end, &cpu0, &cpu1);
  g_assert_cmpuint (mid.nr_blocked_io, ==, 0);
  assert_times (&end.total, 5 * MS, 0, 0, 7 * MS, 0);
  g_assert_cmpint (end.blocked_io_thread_ns, ==, 0);
}

/* One CPU never idle: a thread on I/O gives no iowait. */
static void
test_no_iowait_when_busy (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  static const WStep a[] = { { W_USER, 1 * MS }, { W_IO, 4 * MS }, { W_USER, 1 * MS }, { W_END } };
  static const WStep b[] = { { W_USER, 5 * MS }, { W_END } };
  Worker wa, wb;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 0);
  SimCpuStats st;
  sim_run_until (sim, 3 * MS);
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.nr_blocked_io, ==, 1);
  g_assert_cmpuint (st.nr_runnable, ==, 1);
  sim_run_until (sim, 5 * MS + 500 * US);
  /* A was woken at 5 ms and waits for B's CPU. */
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.nr_blocked_io, ==, 0);
  g_assert_cmpuint (st.nr_runnable, ==, 2);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpint (wb.end_ns, ==, 6 * MS);
  g_assert_cmpint (wa.end_ns, ==, 7 * MS);
  sim_cpus_stats (c, sim_now (sim), &st);
  assert_times (&st.total, 7 * MS, 0, 0, 0, 0);
  g_assert_cmpuint (st.context_switches, ==, 3);
}

typedef struct {
  Sim     *sim;
  SimCpus *cpus;
  GString *log;
} IrqLog;

static void
irq_logged (SimThread *t, gpointer data)
{
  IrqLog *l = data;
  g_assert_null (t);
  g_string_append_printf (l->log, "irq@%" SIM_TIME_FORMAT "us ", sim_now (l->sim) / US);
}

/* @object: the work in microseconds. */
static void
raise_irq (Sim *sim, gpointer subject, gpointer object)
{
  IrqLog *l = subject;
  sim_cpu_irq (l->cpus, (SimTime) GPOINTER_TO_UINT (object) * US, irq_logged, l);
}

/* One CPU: an interrupt raised while a thread computes waits for it (no
 * preemption), then goes ahead of a runnable thread; on an idle CPU it runs
 * at once. */
static void
test_irq (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  static const WStep a[] = { { W_USER, 10 * MS }, { W_END } };
  static const WStep b[] = { { W_USER, 1 * MS }, { W_END } };
  IrqLog log = { sim, c, g_string_new (NULL) };
  Worker wa, wb;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 3 * MS);
  sim_schedule_at (sim, 2 * MS, raise_irq, &log, GUINT_TO_POINTER (1000));
  sim_schedule_at (sim, 20 * MS, raise_irq, &log, GUINT_TO_POINTER (500)); /* idle CPU */
  sim_run_until (sim, 10 * MS + 500 * US);
  SimCpuStats mid;
  sim_cpus_stats (c, sim_now (sim), &mid);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));
  g_assert_cmpuint (mid.interrupts, ==, 1);
  g_assert_cmpuint (mid.nr_runnable, ==, 1);             /* b waits behind the irq */
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "irq@11000us irq@20500us ");
  g_assert_cmpint (wb.end_ns, ==, 12 * MS);
  SimCpuStats st;
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.interrupts, ==, 2);
  g_assert_cmpuint (st.context_switches, ==, 2);
  assert_times (&st.total, 11 * MS, 0, 1500 * US, 8 * MS, 0);

  /* vmstat over 0-12 ms: 11 ms user, 1 ms interrupt shown as system. */
  SimCpuStats zero = { .n_cpus = 1 };
  SimCpuStats at12;
  g_autoptr (Sim) sim2 = sim_new (1);
  g_autoptr (SimCpus) c2 = sim_cpus_new (sim2, 1);
  Worker wa2, wb2;
  worker_init (&wa2, sim2, c2, "a", a, 0);
  worker_init (&wb2, sim2, c2, "b", b, 3 * MS);
  IrqLog log2 = { sim2, c2, g_string_new (NULL) };
  sim_schedule_at (sim2, 2 * MS, raise_irq, &log2, GUINT_TO_POINTER (1000));
  sim_run_until (sim2, 12 * MS);
  sim_cpus_stats (c2, sim_now (sim2), &at12);
  SimVmstatRow row;
  sim_cpus_vmstat_row (&zero, &at12, &row);
  g_assert_cmpfloat_with_epsilon (row.us, 100.0 * 11 / 12, 1e-9);
  g_assert_cmpfloat_with_epsilon (row.sy, 100.0 * 1 / 12, 1e-9);
  g_assert_cmpfloat_with_epsilon (row.id, 0.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (row.wa, 0.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (row.in_per_s, 1000.0 / 12, 1e-9);
  g_assert_cmpfloat_with_epsilon (row.cs_per_s, 2000.0 / 12, 1e-9);
  /* r: a alone 0-3 ms, a and b 3-10, then b alone (waiting behind the
   * irq 10-11, running 11-12): (3 + 2 x 7 + 1 x 2) / 12. */
  g_assert_cmpfloat_with_epsilon (row.r, (3.0 + 14.0 + 2.0) / 12.0, 1e-9);
  g_string_free (log.log, TRUE);
  g_string_free (log2.log, TRUE);
}

/* A random mix of user and system work, sleeps with and without I/O wait,
 * I/O completions through interrupts and stray interrupts, on 3 CPUs;
 * every 250 us the invariants are checked. */
typedef struct {
  Sim      *sim;
  SimCpus  *cpus;
  Worker   *workers;
  guint     n_workers;
  guint     probes;
  SimCpuStats last;
  guint     stray_left;
  SimTime   stray_ns;
} Mix;

static gboolean
mix_all_done (const Mix *m)
{
  for (guint i = 0; i < m->n_workers; i++)
    if (!m->workers[i].done)
      return FALSE;
  return m->stray_left == 0;
}

static void
mix_probe (Sim *sim, gpointer subject, gpointer object)
{
  Mix *m = subject;
  SimTime now = sim_now (sim);
  g_assert_true (sim_cpus_check (m->cpus, now));
  SimCpuStats st;
  sim_cpus_stats (m->cpus, now, &st);
  /* Cumulative counters never go back. */
  g_assert_cmpint (st.total.user_ns, >=, m->last.total.user_ns);
  g_assert_cmpint (st.total.iowait_ns, >=, m->last.total.iowait_ns);
  g_assert_cmpuint (st.context_switches, >=, m->last.context_switches);
  g_assert_cmpuint (st.nr_runnable, <=, m->n_workers);
  m->last = st;
  m->probes++;
  if (!mix_all_done (m))
    sim_schedule_in (sim, 250 * US, mix_probe, m, NULL);
}

static void
mix_stray_irq (Sim *sim, gpointer subject, gpointer object)
{
  Mix *m = subject;
  sim_cpu_irq (m->cpus, m->stray_ns, NULL, NULL);
  if (--m->stray_left > 0)
    sim_schedule_in (sim, 700 * US, mix_stray_irq, m, NULL);
}

static void
run_accounting_random_mix (gboolean irq_preempt, SimCpuSched sched)
{
  enum { N_WORKERS = 8, N_STEPS = 40, N_STRAY = 150 };
  g_autoptr (Sim) sim = sim_new (7);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 3);
  sim_cpus_set_irq_preempt (c, irq_preempt);
  sim_cpus_set_sched (c, sched);
  SimRng *rng = sim_rng (sim, "test.script");
  Worker workers[N_WORKERS];
  WStep steps[N_WORKERS][N_STEPS + 1];
  char names[N_WORKERS][8];
  SimTime want_user = 0, want_sys = 0, want_irq = 0;
  SimTime want_thread[N_WORKERS][2] = { { 0 } };
  static const WStepKind kinds[] = { W_USER, W_SYS, W_IO, W_IO_IRQ, W_SLEEP };
  for (guint i = 0; i < N_WORKERS; i++)
    {
      for (guint s = 0; s < N_STEPS; s++)
        {
          WStepKind k = kinds[sim_rng_uniform_int (rng, G_N_ELEMENTS (kinds))];
          SimTime ns = (SimTime) (1 + sim_rng_uniform_int (rng, 2000)) * US;
          steps[i][s] = (WStep) { k, ns, NULL };
          if (k == W_USER)
            want_thread[i][0] += ns;
          else if (k == W_SYS)
            want_thread[i][1] += ns;
        }
      steps[i][N_STEPS] = (WStep) { W_END };
      want_user += want_thread[i][0];
      want_sys += want_thread[i][1];
      g_snprintf (names[i], sizeof names[i], "w%u", i);
      worker_init (&workers[i], sim, c, names[i], steps[i],
                   (SimTime) sim_rng_uniform_int (rng, 5000) * US);
      workers[i].irq_ns = (SimTime) (10 + sim_rng_uniform_int (rng, 90)) * US;
      for (guint s = 0; s < N_STEPS; s++)
        if (steps[i][s].kind == W_IO_IRQ)
          want_irq += workers[i].irq_ns;
    }
  Mix m = { sim, c, workers, N_WORKERS, 0, { 0 }, N_STRAY, 30 * US };
  want_irq += N_STRAY * m.stray_ns;
  sim_schedule_at (sim, 100 * US, mix_stray_irq, &m, NULL);
  sim_schedule_at (sim, 0, mix_probe, &m, NULL);
  sim_run_until (sim, SIM_TIME_NEVER);

  g_assert_true (mix_all_done (&m));
  g_assert_cmpuint (m.probes, >, 100);
  SimTime now = sim_now (sim);
  g_assert_true (sim_cpus_check (c, now));
  SimCpuStats st;
  sim_cpus_stats (c, now, &st);
  g_assert_cmpint (st.total.user_ns, ==, want_user);
  g_assert_cmpint (st.total.sys_ns, ==, want_sys);
  g_assert_cmpint (st.total.irq_ns, ==, want_irq);
  g_assert_cmpint (st.total.user_ns + st.total.sys_ns + st.total.irq_ns + st.total.idle_ns
                   + st.total.iowait_ns, ==, 3 * now);
  g_assert_cmpint (st.total.iowait_ns, >, 0);
  g_assert_cmpint (st.total.idle_ns, >, 0);
  g_assert_cmpuint (st.nr_runnable, ==, 0);
  g_assert_cmpuint (st.nr_blocked_io, ==, 0);
  /* Every start, every wake-up and every wake-up preemption is one
   * switch; chained execs are none. */
  guint64 wakes = N_WORKERS, io_irqs = 0;
  for (guint i = 0; i < N_WORKERS; i++)
    {
      for (guint s = 0; s < N_STEPS; s++)
        {
          wakes += steps[i][s].kind == W_IO || steps[i][s].kind == W_IO_IRQ
                   || steps[i][s].kind == W_SLEEP;
          io_irqs += steps[i][s].kind == W_IO_IRQ;
        }
      g_assert_cmpint (sim_thread_cpu_ns (&workers[i].thread, SIM_CPU_USER), ==, want_thread[i][0]);
      g_assert_cmpint (sim_thread_cpu_ns (&workers[i].thread, SIM_CPU_SYS), ==, want_thread[i][1]);
    }
  g_assert_cmpuint (st.context_switches, ==, wakes + st.wakeup_preemptions);
  if (sched == SIM_CPU_SCHED_FIFO)
    g_assert_cmpuint (st.wakeup_preemptions, ==, 0);
  else
    g_assert_cmpuint (st.wakeup_preemptions, >, 0);
  g_assert_cmpuint (st.interrupts, ==, N_STRAY + io_irqs);

  /* Idle time keeps adding up after the last event. */
  sim_cpus_stats (c, now + 3 * MS, &st);
  g_assert_cmpint (st.elapsed_ns, ==, now + 3 * MS);
  g_assert_true (sim_cpus_check (c, now + 3 * MS));
  g_assert_cmpint (st.total.user_ns + st.total.sys_ns + st.total.irq_ns + st.total.idle_ns
                   + st.total.iowait_ns, ==, 3 * (now + 3 * MS));
}

static void
do_nothing (SimThread *t, gpointer data)
{
}

static void
test_continuation_must_move_on (void)
{
  if (g_test_subprocess ())
    {
      Sim *sim = sim_new (1);
      SimCpus *c = sim_cpus_new (sim, 1);
      SimThread t;
      sim_thread_init (c, &t, "lazy");
      sim_cpu_exec (c, &t, 1 * MS, SIM_CPU_USER, do_nothing, NULL);
      sim_run_until (sim, SIM_TIME_NEVER);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*thread lazy returned from its continuation*");
}

static void
test_accounting_random_mix (void)
{
  run_accounting_random_mix (FALSE, SIM_CPU_SCHED_FIFO);
}

/* The same mix with interrupts preempting running work: the accounting
 * still adds up, every thread still gets exactly its work. */
static void
test_accounting_random_mix_preempt (void)
{
  run_accounting_random_mix (TRUE, SIM_CPU_SCHED_FIFO);
}

/* The mix again under the O(1) run queue, where woken workers preempt
 * running ones: the accounting adds up, each worker gets exactly its
 * work, and each preemption is one more switch. */
static void
test_accounting_random_mix_o1 (void)
{
  run_accounting_random_mix (TRUE, SIM_CPU_SCHED_O1);
}

/* O(1) priorities after one sleep (kernel/sched.c recalc_task_prio,
 * effective_prio at nice 0): a thread runs 1 ms, sleeps, runs 1 ms; its
 * priority is what the wake-up gave it. */
typedef struct {
  const char *name;
  SimCpuSched sched;
  gboolean    kernel;
  WStepKind   sleep;      /* W_IO (uninterruptible) or W_SLEEP */
  SimTime     sleep_ns;
  gint        want_prio;
} PrioCase;

static const PrioCase prio_cases[] = {
  /* A 1 s sleep is worth 10 s at bonus 0; a user thread back from I/O
   * stops at INTERACTIVE_SLEEP, 799 ms: bonus 7. */
  { "user-io-2s", SIM_CPU_SCHED_O1, FALSE, W_IO, 2000 * MS, 118 },
  /* A kernel thread is not capped: 1 s, bonus 10. */
  { "kernel-io-2s", SIM_CPU_SCHED_O1, TRUE, W_IO, 2000 * MS, 115 },
  /* A user thread that slept longer than INTERACTIVE_SLEEP jumps to
   * MAX_SLEEP_AVG - DEF_TIMESLICE, 900 ms: bonus 9. */
  { "user-sleep-2s", SIM_CPU_SCHED_O1, FALSE, W_SLEEP, 2000 * MS, 116 },
  /* 20 ms x 10 = 200 ms: bonus 2. */
  { "user-io-20ms", SIM_CPU_SCHED_O1, FALSE, W_IO, 20 * MS, 123 },
  { "kernel-sleep-20ms", SIM_CPU_SCHED_O1, TRUE, W_SLEEP, 20 * MS, 123 },
  /* 5 ms x 10 = 50 ms: bonus 0. */
  { "user-io-5ms", SIM_CPU_SCHED_O1, FALSE, W_IO, 5 * MS, 125 },
  { "fifo-kernel-io-2s", SIM_CPU_SCHED_FIFO, TRUE, W_IO, 2000 * MS, 125 },
};

static void
test_o1_prio (gconstpointer data)
{
  const PrioCase *pc = data;
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  sim_cpus_set_sched (c, pc->sched);
  const WStep script[] = { { W_SYS, 1 * MS }, { pc->sleep, pc->sleep_ns }, { W_SYS, 1 * MS },
                           { W_END } };
  Worker w;
  worker_init (&w, sim, c, pc->name, script, 0);
  sim_thread_set_kernel (&w.thread, pc->kernel);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_true (w.done);
  g_assert_cmpint (sim_thread_prio (&w.thread), ==, pc->want_prio);
}

/* Wake-up preemption on one CPU: a user hog runs 1000 execs of 1 ms from
 * 0; a kernel thread that slept since 0 wakes at 500 ms for 0.1 ms.  Under
 * O1 (priority 115 against the hog's 125) it takes the CPU at the hog's
 * next exec; with the hog inside a spinlock from 495 to 505 ms, only at
 * the first exec after the unlock.  Under FIFO it waits for the hog's end. */
typedef struct {
  const char *name;
  SimCpuSched sched;
  gboolean    hog_holds_lock;
  SimTime     want_end_min_ns;
  SimTime     want_end_max_ns;
  SimTime     want_hog_end_ns;
  guint64     want_preemptions;
} PreemptCase;

static const PreemptCase preempt_cases[] = {
  { "o1", SIM_CPU_SCHED_O1, FALSE, 500 * MS + 100 * US, 501 * MS + 100 * US, 1000 * MS + 100 * US,
    1 },
  { "o1-spinlock", SIM_CPU_SCHED_O1, TRUE, 505 * MS + 100 * US, 506 * MS + 100 * US,
    1000 * MS + 100 * US, 1 },
  { "fifo", SIM_CPU_SCHED_FIFO, FALSE, 1000 * MS + 100 * US, 1000 * MS + 100 * US, 1000 * MS, 0 },
};

static void
test_o1_wakeup_preempt (gconstpointer data)
{
  const PreemptCase *pc = data;
  enum { HOG_STEPS = 1000 };
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  sim_cpus_set_sched (c, pc->sched);
  g_autoptr (SimLock) lock = sim_lock_new (c, "lock", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
  g_autofree WStep *hog = g_new0 (WStep, HOG_STEPS + 3);
  guint n = 0;
  for (guint i = 0; i < HOG_STEPS; i++)
    {
      if (pc->hog_holds_lock && i == 495)
        hog[n++] = (WStep) { W_ACQ, 0, lock };
      hog[n++] = (WStep) { W_SYS, 1 * MS };
      if (pc->hog_holds_lock && i == 504)
        hog[n++] = (WStep) { W_REL, 0, lock };
    }
  hog[n] = (WStep) { W_END };
  static const WStep kthread[] = { { W_SYS, 100 * US }, { W_END } };
  Worker wh, wk;
  worker_init (&wh, sim, c, "hog", hog, 0);
  worker_init (&wk, sim, c, "kthread", kthread, 500 * MS);
  sim_thread_set_kernel (&wk.thread, TRUE);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpint (wk.end_ns, >=, pc->want_end_min_ns);
  g_assert_cmpint (wk.end_ns, <=, pc->want_end_max_ns);
  g_assert_cmpint (wh.end_ns, ==, pc->want_hog_end_ns);
  g_assert_cmpint (sim_thread_cpu_ns (&wh.thread, SIM_CPU_SYS), ==, 1000 * MS);
  SimCpuStats st;
  sim_cpus_stats (c, sim_now (sim), &st);
  g_assert_cmpuint (st.wakeup_preemptions, ==, pc->want_preemptions);
  g_assert_true (sim_cpus_check (c, sim_now (sim)));
}

/* Interrupts that preempt (sim_cpus_set_irq_preempt): one CPU, a 1 ms
 * interrupt raised at 2 ms while a thread works 10 ms then 1 ms.  Running
 * work is interrupted and resumes after it; a thread holding an
 * interrupt-disabling lock keeps the interrupt waiting until its unlock,
 * where the interrupt runs before the thread's next work; a plain
 * spinlock's holder is interrupted and its hold grows by the interrupt. */
typedef enum { HOLD_NONE, HOLD_IRQ_LOCK, HOLD_SPIN_LOCK } HoldKind;

static void
test_irq_preempt (void)
{
  static const struct {
    gboolean preempt;
    HoldKind hold;
    const char *irq_at;
    SimTime end_ns;
    SimTime hold_max_ns;
    SimTime irq_wait_ns;
  } cases[] = {
    { TRUE, HOLD_NONE, "irq@3000us ", 12 * MS, 0, 0 },
    { TRUE, HOLD_IRQ_LOCK, "irq@11000us ", 12 * MS, 10 * MS, 8 * MS },
    { TRUE, HOLD_SPIN_LOCK, "irq@3000us ", 12 * MS, 11 * MS, 0 },
    { FALSE, HOLD_NONE, "irq@12000us ", 11 * MS, 0, 9 * MS },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (Sim) sim = sim_new (1);
      g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
      sim_cpus_set_irq_preempt (c, cases[i].preempt);
      g_autoptr (SimLock) l = sim_lock_new (c, "tree_lock", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
      sim_lock_set_irq (l, cases[i].hold == HOLD_IRQ_LOCK);
      g_assert_true (sim_lock_irq (l) == (cases[i].hold == HOLD_IRQ_LOCK));
      WStep a[] = { { W_SYS, 10 * MS }, { W_SYS, 1 * MS }, { W_END } };
      if (cases[i].hold != HOLD_NONE)
        a[0] = (WStep) { W_HOLD, 10 * MS, l };
      g_autoptr (GString) text = g_string_new (NULL);
      IrqLog log = { sim, c, text };
      Worker wa;
      worker_init (&wa, sim, c, "a", a, 0);
      sim_schedule_at (sim, 2 * MS, raise_irq, &log, GUINT_TO_POINTER (1000));
      sim_run_until (sim, 2 * MS + 500 * US);
      g_assert_true (sim_cpus_check (c, sim_now (sim)));
      sim_run_until (sim, SIM_TIME_NEVER);
      g_test_message ("case %u: %s end %" SIM_TIME_FORMAT, i, text->str, wa.end_ns);
      g_assert_cmpstr (text->str, ==, cases[i].irq_at);
      g_assert_cmpint (wa.end_ns, ==, cases[i].end_ns);
      g_assert_true (sim_cpus_check (c, sim_now (sim)));
      SimCpuStats st;
      sim_cpus_stats (c, sim_now (sim), &st);
      /* The thread's own work is 11 ms whatever interrupts it. */
      g_assert_cmpint (sim_thread_cpu_ns (&wa.thread, SIM_CPU_SYS), ==, 11 * MS);
      g_assert_cmpint (st.total.sys_ns, ==, 11 * MS);
      g_assert_cmpint (st.total.irq_ns, ==, 1 * MS);
      g_assert_cmpuint (st.interrupts_started, ==, 1);
      g_assert_cmpint (st.irq_wait_ns, ==, cases[i].irq_wait_ns);
      SimLockStats ls;
      sim_lock_stats (l, sim_now (sim), &ls);
      g_assert_cmpint (ls.hold_max_ns, ==, cases[i].hold_max_ns);
    }
}

/* An interrupt that runs as code (sim_cpu_irq_thread): a handler works
 * pre_ns, takes an interrupt-disabling lock for hold_ns and ends.
 * - a thread on the other CPU holds the lock 0-10 ms: the handler, raised
 *   at 2 ms on the idle CPU, works to 3 ms, spins to 10 ms (interrupt
 *   time: sy in vmstat) and holds 10-13 ms;
 * - the handler holds it 1-6 ms: the thread, asking at 2 ms, spins 4 ms
 *   (its own system time) and holds 6-7 ms;
 * - one CPU: the handler preempts the running thread at 2 ms, finds the
 *   lock free and holds it 3-4 ms; the thread's 10 ms end at 12 ms. */
typedef struct {
  SimThread  ctx;
  SimCpus   *cpus;
  Sim       *sim;
  SimLock   *lock;
  SimTime    pre_ns;
  SimTime    hold_ns;
  SimTime    end_ns;
} Handler;

static void
handler_exit (SimThread *t, gpointer data)
{
  Handler *h = data;
  h->end_ns = sim_now (h->sim);
  sim_thread_exit (h->cpus, t);
}

static void
handler_hold (SimThread *t, gpointer data)
{
  Handler *h = data;
  sim_lock_hold (h->lock, t, h->hold_ns, handler_exit, h);
}

static void
handler_start (SimThread *t, gpointer data)
{
  Handler *h = data;
  g_assert_true (t == &h->ctx);
  sim_cpu_exec (h->cpus, t, h->pre_ns, SIM_CPU_SYS, handler_hold, h);
}

static void
raise_handler (Sim *sim, gpointer subject, gpointer object)
{
  Handler *h = subject;
  sim_cpu_irq_thread (h->cpus, &h->ctx, handler_start, h);
}

static void
test_irq_thread_locks (void)
{
  static const struct {
    guint   cpus;
    SimTime thread_sys_ns;   /* before its hold (0: none) */
    SimTime thread_hold_ns;  /* 0: no hold */
    SimTime thread_after_ns; /* system work after the hold (or alone) */
    SimTime raise_ns, pre_ns, hold_ns;
    SimTime handler_end_ns, thread_end_ns;
    SimTime irq_ns, sys_ns;  /* CPU totals */
    guint64 contentions;
    SimTime wait_ns;
  } cases[] = {
    { 2, 0, 10 * MS, 1 * MS, 2 * MS, 1 * MS, 3 * MS, 13 * MS, 11 * MS, 11 * MS, 11 * MS, 1, 7 * MS },
    { 2, 2 * MS, 1 * MS, 0, 1 * MS, 0, 5 * MS, 6 * MS, 7 * MS, 5 * MS, 7 * MS, 1, 4 * MS },
    { 1, 0, 0, 10 * MS, 2 * MS, 1 * MS, 1 * MS, 4 * MS, 12 * MS, 2 * MS, 10 * MS, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (Sim) sim = sim_new (1);
      g_autoptr (SimCpus) c = sim_cpus_new (sim, cases[i].cpus);
      sim_cpus_set_irq_preempt (c, TRUE);
      g_autoptr (SimLock) l = sim_lock_new (c, "tree_lock", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
      sim_lock_set_irq (l, TRUE);
      WStep a[4];
      guint n = 0;
      if (cases[i].thread_sys_ns)
        a[n++] = (WStep) { W_SYS, cases[i].thread_sys_ns };
      if (cases[i].thread_hold_ns)
        a[n++] = (WStep) { W_HOLD, cases[i].thread_hold_ns, l };
      if (cases[i].thread_after_ns)
        a[n++] = (WStep) { W_SYS, cases[i].thread_after_ns };
      a[n] = (WStep) { W_END };
      Worker wa;
      worker_init (&wa, sim, c, "a", a, 0);
      Handler h = { .cpus = c, .sim = sim, .lock = l, .pre_ns = cases[i].pre_ns,
                    .hold_ns = cases[i].hold_ns };
      sim_thread_init (c, &h.ctx, "irq");
      sim_schedule_at (sim, cases[i].raise_ns, raise_handler, &h, NULL);
      sim_run_until (sim, cases[i].raise_ns + 1500 * US);
      g_assert_true (sim_cpus_check (c, sim_now (sim)));
      sim_run_until (sim, SIM_TIME_NEVER);
      g_test_message ("case %u: handler end %" SIM_TIME_FORMAT " thread end %" SIM_TIME_FORMAT,
                      i, h.end_ns, wa.end_ns);
      g_assert_cmpint (h.end_ns, ==, cases[i].handler_end_ns);
      g_assert_cmpint (wa.end_ns, ==, cases[i].thread_end_ns);
      g_assert_true (sim_cpus_check (c, sim_now (sim)));
      SimCpuStats st;
      sim_cpus_stats (c, sim_now (sim), &st);
      g_assert_cmpint (st.total.irq_ns, ==, cases[i].irq_ns);
      g_assert_cmpint (st.total.sys_ns, ==, cases[i].sys_ns);
      g_assert_cmpint (st.total.user_ns, ==, 0);
      g_assert_cmpuint (st.interrupts_started, ==, 1);
      SimLockStats ls;
      sim_lock_stats (l, sim_now (sim), &ls);
      g_assert_cmpuint (ls.acquisitions, ==, cases[i].thread_hold_ns ? 2 : 1);
      g_assert_cmpuint (ls.contentions, ==, cases[i].contentions);
      g_assert_cmpint (ls.wait_total_ns, ==, cases[i].wait_ns);
      g_assert_cmpint (ls.hold_total_ns, ==, cases[i].thread_hold_ns + cases[i].hold_ns);
      /* The context can be raised again once its handler ended. */
      g_assert_false (h.ctx.in_irq);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/cpu/two-cpus-four-threads", test_two_cpus_four_threads);
  g_test_add_func ("/sim/cpu/chained-exec-no-switch", test_chained_exec_no_switch);
  g_test_add_func ("/sim/cpu/wake-affinity", test_wake_affinity);
  g_test_add_func ("/sim/cpu/nodes", test_nodes);
  g_test_add_func ("/sim/cpu/iowait", test_iowait);
  g_test_add_func ("/sim/cpu/no-iowait-when-busy", test_no_iowait_when_busy);
  g_test_add_func ("/sim/cpu/irq", test_irq);
  g_test_add_func ("/sim/cpu/irq-preempt", test_irq_preempt);
  g_test_add_func ("/sim/cpu/irq-thread-locks", test_irq_thread_locks);
  g_test_add_func ("/sim/cpu/accounting-random-mix", test_accounting_random_mix);
  g_test_add_func ("/sim/cpu/accounting-random-mix-preempt", test_accounting_random_mix_preempt);
  g_test_add_func ("/sim/cpu/continuation-must-move-on", test_continuation_must_move_on);
  g_test_add_func ("/sim/cpu/o1/accounting-random-mix", test_accounting_random_mix_o1);
  for (guint i = 0; i < G_N_ELEMENTS (prio_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/cpu/o1/prio/%s", prio_cases[i].name);
      g_test_add_data_func (path, &prio_cases[i], test_o1_prio);
    }
  for (guint i = 0; i < G_N_ELEMENTS (preempt_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/cpu/o1/wakeup-preempt/%s", preempt_cases[i].name);
      g_test_add_data_func (path, &preempt_cases[i], test_o1_wakeup_preempt);
    }
  return g_test_run ();
}
