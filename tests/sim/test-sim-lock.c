/* test-sim-lock.c — spinning and sleeping locks: lock_stat numbers equal
 * hand-computed values in a scripted case, spin waiters burn system time
 * and sleep waiters do not, FIFO grants follow arrival order, UNFAIR grants
 * depart from it for some seed and repeat for a given seed, many threads
 * never find two holders, per-call-site figures (lockmeter's rows) add up
 * to the lock's, and misuse asserts. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-cpu.h"
#include "sim/sim-lock.h"
#include "sim/sim-rng.h"
#include "sim-worker.h"

#define MS SIM_NS_PER_MS
#define US SIM_NS_PER_US

/* Three CPUs; A holds 0-4 ms; B arrives at 1 ms and holds 2 ms; C arrives
 * at 2 ms and holds 3 ms.  FIFO hand-over: B 4-6 ms (waited 3), C 6-9 ms
 * (waited 4).  Queried at 10 ms. */
typedef struct {
  SimLockStats lock;
  SimCpuStats  cpu;
  SimTime      sys_ns[3];
  SimTime      end_ns[3];
  GString     *report;
} Scripted;

static void
run_scripted (SimLockKind kind, Scripted *out)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 3);
  g_autoptr (SimLock) l = sim_lock_new (c, "BKL", kind, SIM_LOCK_FIFO);
  g_autoptr (SimLock) idle = sim_lock_new (c, "isem", SIM_LOCK_SLEEP, SIM_LOCK_FIFO);
  WStep a[] = { { W_HOLD, 4 * MS, l }, { W_END } };
  WStep b[] = { { W_USER, 1 * MS }, { W_HOLD, 2 * MS, l }, { W_END } };
  WStep cc[] = { { W_USER, 2 * MS }, { W_HOLD, 3 * MS, l }, { W_END } };
  Worker w[3];
  worker_init (&w[0], sim, c, "a", a, 0);
  worker_init (&w[1], sim, c, "b", b, 0);
  worker_init (&w[2], sim, c, "c", cc, 0);
  sim_run_until (sim, SIM_TIME_NEVER);
  SimTime at = 10 * MS;
  g_assert_true (sim_cpus_check (c, at));
  sim_lock_stats (l, at, &out->lock);
  sim_cpus_stats (c, at, &out->cpu);
  for (guint i = 0; i < 3; i++)
    {
      out->sys_ns[i] = sim_thread_cpu_ns (&w[i].thread, SIM_CPU_SYS);
      out->end_ns[i] = w[i].end_ns;
    }
  out->report = g_string_new (NULL);
  SimLock *const locks[] = { l, idle };
  sim_lock_report_text (out->report, locks, G_N_ELEMENTS (locks), at);
}

static void
assert_scripted_lock_stats (const SimLockStats *s)
{
  g_assert_cmpint (s->elapsed_ns, ==, 10 * MS);
  g_assert_cmpuint (s->acquisitions, ==, 3);
  g_assert_cmpuint (s->contentions, ==, 2);
  g_assert_cmpfloat_with_epsilon (s->contention_pct, 200.0 / 3.0, 1e-9);
  g_assert_cmpint (s->wait_total_ns, ==, 7 * MS);
  g_assert_cmpint (s->wait_max_ns, ==, 4 * MS);
  g_assert_cmpfloat_with_epsilon (s->wait_mean_ns, 3.5 * MS, 1e-6);
  g_assert_cmpuint (s->releases, ==, 3);
  g_assert_cmpint (s->hold_total_ns, ==, 9 * MS);
  g_assert_cmpint (s->hold_max_ns, ==, 4 * MS);
  g_assert_cmpfloat_with_epsilon (s->hold_mean_ns, 3.0 * MS, 1e-6);
  g_assert_cmpint (s->held_ns, ==, 9 * MS);
  g_assert_cmpfloat_with_epsilon (s->utilisation, 0.9, 1e-12);
  g_assert_cmpuint (s->waiters, ==, 0);
  g_assert_cmpuint (s->max_waiters, ==, 2);
}

static void
test_spin_stats_and_burn (void)
{
  Scripted r;
  run_scripted (SIM_LOCK_SPIN, &r);
  assert_scripted_lock_stats (&r.lock);
  g_assert_cmpint (r.end_ns[0], ==, 4 * MS);
  g_assert_cmpint (r.end_ns[1], ==, 6 * MS);
  g_assert_cmpint (r.end_ns[2], ==, 9 * MS);
  /* System time: 9 ms of holds plus 7 ms of spinning; B spun 3, C 4. */
  g_assert_cmpint (r.cpu.total.sys_ns, ==, 16 * MS);
  g_assert_cmpint (r.cpu.total.user_ns, ==, 3 * MS);
  g_assert_cmpint (r.cpu.total.idle_ns, ==, 11 * MS);
  g_assert_cmpint (r.cpu.total.iowait_ns, ==, 0);
  g_assert_cmpint (r.sys_ns[0], ==, 4 * MS);
  g_assert_cmpint (r.sys_ns[1], ==, 3 * MS + 2 * MS);
  g_assert_cmpint (r.sys_ns[2], ==, 4 * MS + 3 * MS);
  /* Spinners never left their CPUs. */
  g_assert_cmpuint (r.cpu.context_switches, ==, 3);
  g_assert_cmpstr (r.report->str, ==,
                   "lock kind         acq  contended   cont% wait-mean-us  wait-max-us hold-mean-us  hold-max-us   util%\n"
                   "BKL  spin           3          2   66.67     3500.000     4000.000     3000.000     4000.000   90.00\n"
                   "isem sleep          0          0    0.00        0.000        0.000        0.000        0.000    0.00\n");
  g_string_free (r.report, TRUE);
}

static void
test_sleep_stats_no_burn (void)
{
  Scripted r;
  run_scripted (SIM_LOCK_SLEEP, &r);
  /* The same grants and holds: every waiter found its CPU idle when woken. */
  assert_scripted_lock_stats (&r.lock);
  g_assert_cmpint (r.end_ns[2], ==, 9 * MS);
  /* Sleepers free their CPUs: only the holds are system time, and the
   * wait is idle, not iowait. */
  g_assert_cmpint (r.cpu.total.sys_ns, ==, 9 * MS);
  g_assert_cmpint (r.cpu.total.user_ns, ==, 3 * MS);
  g_assert_cmpint (r.cpu.total.idle_ns, ==, 18 * MS);
  g_assert_cmpint (r.cpu.total.iowait_ns, ==, 0);
  g_assert_cmpint (r.sys_ns[1], ==, 2 * MS);
  g_assert_cmpint (r.sys_ns[2], ==, 3 * MS);
  /* Three starts and two wake-ups after the hand-over. */
  g_assert_cmpuint (r.cpu.context_switches, ==, 5);
  g_string_free (r.report, TRUE);
}

/* A sleeping lock handed to a thread that must wait for a CPU: the hold
 * runs from the hand-over, so it includes that wait (the convoy). */
static void
test_sleep_handover_waits_for_cpu (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  g_autoptr (SimLock) l = sim_lock_new (c, "i_sem", SIM_LOCK_SLEEP, SIM_LOCK_FIFO);
  /* A takes the lock and sleeps on I/O holding it (2.4 i_sem across a
   * write); B blocks on it; C computes while A's I/O is in flight. */
  WStep a[] = { { W_ACQ, 0, l }, { W_IO, 3 * MS }, { W_SYS, 1 * MS }, { W_REL, 0, l }, { W_USER, 2 * MS }, { W_END } };
  WStep b[] = { { W_HOLD, 1 * MS, l }, { W_END } };
  WStep cc[] = { { W_USER, 4 * MS }, { W_END } };
  Worker wa, wb, wc;
  worker_init (&wa, sim, c, "a", a, 0);
  worker_init (&wb, sim, c, "b", b, 0);
  worker_init (&wc, sim, c, "c", cc, 0);
  sim_run_until (sim, SIM_TIME_NEVER);
  /* 0: a takes it, sleeps to 3 ms; b blocks at 0; c runs 0-4; a (woken at
   * 3) runs 4-5 and releases at 5, keeps the CPU to 7; b, granted at 5,
   * runs 7-8. */
  g_assert_cmpint (wa.end_ns, ==, 7 * MS);
  g_assert_cmpint (wb.end_ns, ==, 8 * MS);
  SimLockStats s;
  sim_lock_stats (l, sim_now (sim), &s);
  g_assert_cmpuint (s.contentions, ==, 1);
  g_assert_cmpint (s.wait_total_ns, ==, 5 * MS);
  g_assert_cmpint (s.hold_max_ns, ==, 5 * MS);
  g_assert_cmpint (s.hold_total_ns, ==, 5 * MS + 3 * MS);
  g_assert_cmpfloat_with_epsilon (s.utilisation, 1.0, 1e-12);
}

/* Holder h takes the lock at 0 for 10 ms; w1..w4 ask at 1, 2, 3, 4 ms. */
static char *
grant_order (SimLockKind kind, SimLockOrder order, guint64 seed)
{
  g_autoptr (Sim) sim = sim_new (seed);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 5);
  g_autoptr (SimLock) l = sim_lock_new (c, "tree_lock", kind, order);
  GString *grants = g_string_new (NULL);
  guint inside = 0;
  WStep hs[] = { { W_ACQ, 0, l }, { W_SYS, 10 * MS }, { W_REL, 0, l }, { W_END } };
  WStep ws[] = { { W_ACQ, 0, l }, { W_SYS, 1 * MS }, { W_REL, 0, l }, { W_END } };
  static const char *const names[] = { "h", "w1", "w2", "w3", "w4" };
  Worker w[5];
  for (guint i = 0; i < 5; i++)
    {
      worker_init (&w[i], sim, c, names[i], i == 0 ? hs : ws, (SimTime) i * MS);
      w[i].grants = grants;
      w[i].inside = &inside;
    }
  sim_run_until (sim, SIM_TIME_NEVER);
  for (guint i = 0; i < 5; i++)
    g_assert_true (w[i].done);
  g_assert_cmpint (sim_now (sim), ==, 14 * MS);
  SimLockStats s;
  sim_lock_stats (l, sim_now (sim), &s);
  g_assert_cmpuint (s.contentions, ==, 4);
  g_assert_cmpuint (s.max_waiters, ==, 4);
  return g_string_free (grants, FALSE);
}

static void
test_fifo_order (void)
{
  for (guint64 seed = 1; seed <= 3; seed++)
    {
      g_autofree char *spin = grant_order (SIM_LOCK_SPIN, SIM_LOCK_FIFO, seed);
      g_autofree char *sleep = grant_order (SIM_LOCK_SLEEP, SIM_LOCK_FIFO, seed);
      g_assert_cmpstr (spin, ==, "h w1 w2 w3 w4 ");
      g_assert_cmpstr (sleep, ==, "h w1 w2 w3 w4 ");
    }
}

static void
test_unfair_order (void)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint not_fifo = 0;
  for (guint64 seed = 1; seed <= 20; seed++)
    {
      char *order = grant_order (SIM_LOCK_SPIN, SIM_LOCK_UNFAIR, seed);
      g_autofree char *again = grant_order (SIM_LOCK_SPIN, SIM_LOCK_UNFAIR, seed);
      g_assert_cmpstr (order, ==, again);             /* deterministic per seed */
      g_assert_true (g_str_has_prefix (order, "h "));
      for (guint i = 1; i <= 4; i++)
        {
          g_autofree char *name = g_strdup_printf (" w%u ", i);
          g_assert_nonnull (strstr (order, name));    /* each waiter exactly once */
        }
      g_assert_cmpuint (strlen (order), ==, strlen ("h w1 w2 w3 w4 "));
      not_fifo += g_strcmp0 (order, "h w1 w2 w3 w4 ") != 0;
      g_hash_table_add (seen, order);
    }
  g_assert_cmpuint (not_fifo, >, 0);
  g_assert_cmpuint (g_hash_table_size (seen), >, 2);
  /* Sleeping locks draw from the same kind of stream. */
  guint sleep_not_fifo = 0;
  for (guint64 seed = 1; seed <= 20; seed++)
    {
      g_autofree char *order = grant_order (SIM_LOCK_SLEEP, SIM_LOCK_UNFAIR, seed);
      sleep_not_fifo += g_strcmp0 (order, "h w1 w2 w3 w4 ") != 0;
    }
  g_assert_cmpuint (sleep_not_fifo, >, 0);
}

/* Many threads on few CPUs, every kind and order, an outer sleeping lock
 * held across I/O around an inner spinlock: never two holders (the workers
 * count who is inside; grant() asserts too), every acquisition served,
 * and spinning is exactly the system time beyond the scripted work. */
static void
stress (SimLockKind kind, SimLockOrder order, gboolean nested)
{
  enum { N_THREADS = 12, N_ITER = 60, N_CPUS = 4 };
  g_autoptr (Sim) sim = sim_new (3 + kind * 2 + order);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, N_CPUS);
  g_autoptr (SimLock) outer = sim_lock_new (c, "i_mutex", SIM_LOCK_SLEEP, order);
  g_autoptr (SimLock) l = sim_lock_new (c, "lru_lock", kind, order);
  SimRng *rng = sim_rng (sim, "test.stress");
  guint inside[2] = { 0, 0 };
  Worker w[N_THREADS];
  WStep *steps[N_THREADS];
  char names[N_THREADS][8];
  SimTime want_sys = 0;
  for (guint i = 0; i < N_THREADS; i++)
    {
      GArray *a = g_array_new (FALSE, TRUE, sizeof (WStep));
      for (guint k = 0; k < N_ITER; k++)
        {
          WStep s[] = {
            { W_USER, (SimTime) (1 + sim_rng_uniform_int (rng, 50)) * US },
            { W_ACQ, 0, outer, 0 },
            { W_ACQ, 0, l, 1 },
            { W_SYS, (SimTime) (1 + sim_rng_uniform_int (rng, 20)) * US },
            { W_REL, 0, l, 1 },
            { W_IO, (SimTime) (1 + sim_rng_uniform_int (rng, 100)) * US },
            { W_REL, 0, outer, 0 },
            { sim_rng_uniform_int (rng, 2) ? W_IO : W_SLEEP,
              (SimTime) (1 + sim_rng_uniform_int (rng, 100)) * US },
          };
          want_sys += s[3].ns;
          if (nested)
            g_array_append_vals (a, s, G_N_ELEMENTS (s));
          else
            {
              g_array_append_vals (a, &s[0], 1);
              g_array_append_vals (a, &s[2], 3);
              g_array_append_vals (a, &s[7], 1);
            }
        }
      WStep end = { W_END };
      g_array_append_val (a, end);
      steps[i] = (WStep *) (void *) g_array_free (a, FALSE);
      g_snprintf (names[i], sizeof names[i], "t%u", i);
      worker_init (&w[i], sim, c, names[i], steps[i], (SimTime) i * US);
      w[i].inside = inside;
    }
  sim_run_until (sim, SIM_TIME_NEVER);
  SimTime now = sim_now (sim);
  for (guint i = 0; i < N_THREADS; i++)
    {
      g_assert_true (w[i].done);
      g_free (steps[i]);
    }
  g_assert_cmpuint (inside[0] + inside[1], ==, 0);
  g_assert_null (sim_lock_holder (l));
  g_assert_true (sim_cpus_check (c, now));

  SimLockStats s;
  sim_lock_stats (l, now, &s);
  g_assert_cmpuint (s.acquisitions, ==, N_THREADS * N_ITER);
  g_assert_cmpuint (s.releases, ==, N_THREADS * N_ITER);
  g_assert_cmpuint (s.waiters, ==, 0);
  g_assert_cmpfloat (s.utilisation, <=, 1.0);
  g_assert_cmpint (s.hold_total_ns, >=, want_sys);
  if (!nested)
    g_assert_cmpuint (s.contentions, >, 0);
  SimCpuStats cs;
  sim_cpus_stats (c, now, &cs);
  if (kind == SIM_LOCK_SPIN)
    g_assert_cmpint (cs.total.sys_ns, ==, want_sys + s.wait_total_ns);
  else
    g_assert_cmpint (cs.total.sys_ns, ==, want_sys);
  if (nested)
    {
      SimLockStats so;
      sim_lock_stats (outer, now, &so);
      g_assert_cmpuint (so.acquisitions, ==, N_THREADS * N_ITER);
      g_assert_cmpuint (so.contentions, >, 0);
      /* The outer mutex serialises everything, so the inner lock never
       * waits. */
      g_assert_cmpuint (s.contentions, ==, 0);
    }
}

static void
test_stress_never_two_holders (void)
{
  for (int kind = SIM_LOCK_SPIN; kind <= SIM_LOCK_SLEEP; kind++)
    for (int order = SIM_LOCK_FIFO; order <= SIM_LOCK_UNFAIR; order++)
      {
        stress (kind, order, FALSE);
        stress (kind, order, TRUE);
      }
}

/* Utilisation counts a hold in progress. */
static void
test_hold_in_progress (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 1);
  g_autoptr (SimLock) l = sim_lock_new (c, "BKL", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
  WStep a[] = { { W_USER, 2 * MS }, { W_HOLD, 4 * MS, l }, { W_END } };
  Worker wa;
  worker_init (&wa, sim, c, "a", a, 0);
  sim_run_until (sim, 4 * MS);
  SimLockStats s;
  sim_lock_stats (l, sim_now (sim), &s);
  g_assert_true (sim_lock_holder (l) == &wa.thread);
  g_assert_cmpuint (s.acquisitions, ==, 1);
  g_assert_cmpuint (s.releases, ==, 0);
  g_assert_cmpint (s.held_ns, ==, 2 * MS);
  g_assert_cmpfloat_with_epsilon (s.utilisation, 0.5, 1e-12);
  sim_run_until (sim, SIM_TIME_NEVER);
  sim_lock_stats (l, 8 * MS, &s);
  g_assert_cmpint (s.hold_total_ns, ==, 4 * MS);
  g_assert_cmpfloat_with_epsilon (s.utilisation, 0.5, 1e-12);
}

static void
release_unheld (SimThread *t, gpointer data)
{
  sim_lock_release (data, t);
}

static void
block_holding_spin (SimThread *t, gpointer data)
{
  sim_thread_block (t->cpus, t, TRUE);
}

static void
take_and_block (SimThread *t, gpointer data)
{
  sim_lock_acquire (data, t, block_holding_spin, NULL);
}

static void
take_again (SimThread *t, gpointer data)
{
  sim_lock_acquire (data, t, release_unheld, data);
}

static void
take_twice (SimThread *t, gpointer data)
{
  sim_lock_acquire (data, t, take_again, data);
}

/* In a subprocess: thread "x" starts with @start (data: spinlock "L"). */
static void
run_misuse (SimThreadFn start)
{
  Sim *sim = sim_new (1);
  SimCpus *c = sim_cpus_new (sim, 1);
  SimLock *l = sim_lock_new (c, "L", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
  SimThread t;
  sim_thread_init (c, &t, "x");
  sim_thread_wake (c, &t, start, l);
  sim_run_until (sim, SIM_TIME_NEVER);
}

static void
test_release_unheld_asserts (void)
{
  if (g_test_subprocess ())
    {
      run_misuse (release_unheld);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*thread x does not hold L*");
}

static void
test_acquire_held_asserts (void)
{
  if (g_test_subprocess ())
    {
      run_misuse (take_twice);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*thread x already holds L*");
}

static void
test_block_holding_spinlock_asserts (void)
{
  if (g_test_subprocess ())
    {
      run_misuse (take_and_block);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*spinlocks_held == 0*");
}

/* The scripted case with call sites: A and C take the lock at site "x",
 * B at site "y".  x: two grants, C's waited 4 ms, holds 4 + 3 ms; y: one
 * grant that waited 3 ms, held 2 ms.  Mid-run (5 ms, B holding since
 * 4 ms) y's utilisation counts B's hold in progress. */
static void
test_call_sites (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimCpus) c = sim_cpus_new (sim, 3);
  g_autoptr (SimLock) l = sim_lock_new (c, "BKL", SIM_LOCK_SPIN, SIM_LOCK_FIFO);
  guint x = sim_lock_add_site (l, "x");
  guint y = sim_lock_add_site (l, "y");
  g_assert_cmpuint (x, ==, 1);
  g_assert_cmpuint (y, ==, 2);
  g_assert_cmpuint (sim_lock_n_sites (l), ==, 3);
  g_assert_null (sim_lock_site_name (l, 0));
  g_assert_cmpstr (sim_lock_site_name (l, y), ==, "y");
  WStep a[] = { { W_HOLD, 4 * MS, l, 0, x }, { W_END } };
  WStep b[] = { { W_USER, 1 * MS }, { W_HOLD, 2 * MS, l, 0, y }, { W_END } };
  WStep cc[] = { { W_USER, 2 * MS }, { W_HOLD, 3 * MS, l, 0, x }, { W_END } };
  Worker w[3];
  worker_init (&w[0], sim, c, "a", a, 0);
  worker_init (&w[1], sim, c, "b", b, 0);
  worker_init (&w[2], sim, c, "c", cc, 0);
  sim_run_until (sim, 5 * MS);
  SimLockStats mid;
  sim_lock_site_stats (l, y, 5 * MS, &mid);
  g_assert_cmpuint (mid.releases, ==, 0);
  g_assert_cmpint (mid.held_ns, ==, 1 * MS);
  sim_run_until (sim, SIM_TIME_NEVER);
  SimTime at = 10 * MS;
  SimLockStats sx, sy, s0, total;
  sim_lock_site_stats (l, x, at, &sx);
  sim_lock_site_stats (l, y, at, &sy);
  sim_lock_site_stats (l, 0, at, &s0);
  sim_lock_stats (l, at, &total);
  g_assert_cmpuint (sx.acquisitions, ==, 2);
  g_assert_cmpuint (sx.contentions, ==, 1);
  g_assert_cmpfloat_with_epsilon (sx.contention_pct, 50.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (sx.nowait_pct, 50.0, 1e-9);
  g_assert_cmpint (sx.wait_total_ns, ==, 4 * MS);
  g_assert_cmpint (sx.wait_max_ns, ==, 4 * MS);
  g_assert_cmpint (sx.hold_total_ns, ==, 7 * MS);
  g_assert_cmpint (sx.hold_max_ns, ==, 4 * MS);
  g_assert_cmpfloat_with_epsilon (sx.hold_mean_ns, 3.5 * MS, 1e-6);
  g_assert_cmpfloat_with_epsilon (sx.utilisation, 0.7, 1e-12);
  /* 4 ms of spinning out of 3 CPUs x 10 ms. */
  g_assert_cmpfloat_with_epsilon (sx.wait_cpu_pct, 100.0 * 4.0 / 30.0, 1e-9);
  g_assert_cmpuint (sy.acquisitions, ==, 1);
  g_assert_cmpuint (sy.contentions, ==, 1);
  g_assert_cmpint (sy.wait_total_ns, ==, 3 * MS);
  g_assert_cmpint (sy.hold_total_ns, ==, 2 * MS);
  g_assert_cmpfloat_with_epsilon (sy.utilisation, 0.2, 1e-12);
  g_assert_cmpuint (s0.acquisitions, ==, 0);
  /* The sites add up to the lock. */
  g_assert_cmpuint (sx.acquisitions + sy.acquisitions + s0.acquisitions, ==, total.acquisitions);
  g_assert_cmpuint (sx.contentions + sy.contentions, ==, total.contentions);
  g_assert_cmpint (sx.wait_total_ns + sy.wait_total_ns, ==, total.wait_total_ns);
  g_assert_cmpint (sx.hold_total_ns + sy.hold_total_ns, ==, total.hold_total_ns);
  g_assert_cmpint (MAX (sx.hold_max_ns, sy.hold_max_ns), ==, total.hold_max_ns);
  g_assert_cmpfloat_with_epsilon (sx.utilisation + sy.utilisation, total.utilisation, 1e-12);
  assert_scripted_lock_stats (&total);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/lock/spin-stats-and-burn", test_spin_stats_and_burn);
  g_test_add_func ("/sim/lock/sleep-stats-no-burn", test_sleep_stats_no_burn);
  g_test_add_func ("/sim/lock/sleep-handover-waits-for-cpu", test_sleep_handover_waits_for_cpu);
  g_test_add_func ("/sim/lock/fifo-order", test_fifo_order);
  g_test_add_func ("/sim/lock/call-sites", test_call_sites);
  g_test_add_func ("/sim/lock/unfair-order", test_unfair_order);
  g_test_add_func ("/sim/lock/stress-never-two-holders", test_stress_never_two_holders);
  g_test_add_func ("/sim/lock/hold-in-progress", test_hold_in_progress);
  g_test_add_func ("/sim/lock/release-unheld-asserts", test_release_unheld_asserts);
  g_test_add_func ("/sim/lock/acquire-held-asserts", test_acquire_held_asserts);
  g_test_add_func ("/sim/lock/block-holding-spinlock-asserts", test_block_holding_spinlock_asserts);
  return g_test_run ();
}
