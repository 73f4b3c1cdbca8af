/* test-host-scenarios.c — processes on the host model's CPUs: system
 * calls cost exactly their profile's steps, asynchronous I/O costs more
 * CPU per I/O than synchronous I/O, a global lock stops buffered writes
 * from scaling where a per-file-system lock does not, and runs stay
 * deterministic with unfair locks.  scenario_run asserts the CPU
 * accounting (user + sys + idle + iowait = elapsed x CPUs) at each end. */
#include <glib.h>
#include <string.h>

#include "models/scenario.h"
#include "models/host/host-profile.h"

static SimRunResult *
run_text (const char *text, const char *const *sets)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "host", NULL, sets, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  return r;
}

static HostProfile *
profile (const char *name)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "models", "profiles", NULL);
  const char *const dirs[] = { dir, NULL };
  g_autoptr (GError) error = NULL;
  HostProfile *p = host_profile_load (name, dirs, NULL, &error);
  g_assert_no_error (error);
  return p;
}

static SimTime
path_ns (const HostProfile *p, HostPathId id)
{
  return host_steps_cpu_ns (p, p->paths[id].call) + host_steps_cpu_ns (p, p->paths[id].each);
}

static guint64
total_ios (const SimRunResult *r)
{
  guint64 n = 0;
  for (guint i = 0; i < r->processes->len; i++)
    n += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->ios;
  return n;
}

/* System time of the run in ns, from the sy percentage. */
static double
sys_ns (const SimRunResult *r)
{
  return r->cpu.sy / 100.0 * (double) r->elapsed_ns * r->n_cpus;
}

static const char direct_reader[] =
  "[host]\ncpus = 1\nprofile = 2.4-ext3\n[sim]\nduration = 2s\n"
  "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\n"
  "[process p]\ndevice = d\npattern = random\nbs = 64KiB\n";

/* One synchronous direct reader, nothing contended: each I/O costs the
 * submit path (one request: 64 KiB < max_sectors) on the thread and the
 * complete path as interrupt work, nothing else. */
static void
test_direct_costs (void)
{
  g_autoptr (SimRunResult) r = run_text (direct_reader, NULL);
  g_autoptr (HostProfile) p = profile ("2.4-ext3");
  guint64 ios = total_ios (r);
  g_assert_cmpuint (ios, >, 1000);
  double per_io = path_ns (p, HOST_PATH_SUBMIT) + path_ns (p, HOST_PATH_COMPLETE);
  /* The I/O in flight at the end has paid its submission only. */
  double expected = (double) ios * per_io;
  g_test_message ("sys %.0f ns, expected %.0f", sys_ns (r), expected);
  g_assert_cmpfloat (sys_ns (r), >=, expected - 1);
  g_assert_cmpfloat (sys_ns (r), <=, expected + path_ns (p, HOST_PATH_SUBMIT) + 1);
  g_assert_cmpfloat (r->cpu.us, ==, 0.0);
  /* Waiting on the device: the rest is iowait, none of it idle. */
  g_assert_cmpfloat (r->cpu.id, <, 0.01);
  g_assert_cmpfloat (r->cpu.wa, >, 90.0);
  /* One interrupt per completed request. */
  g_assert_cmpfloat (r->cpu.in_per_s * (double) r->elapsed_ns / 1e9, ==, (double) ios);
}

/* libaio costs more CPU per I/O than synchronous reads, at depth 1 and 4. */
static void
test_aio_costs_more (void)
{
  g_autoptr (SimRunResult) sync = run_text (direct_reader, NULL);
  double sync_per_io = sys_ns (sync) / (double) total_ios (sync);
  for (guint depth = 1; depth <= 4; depth += 3)
    {
      g_autofree char *set = g_strdup_printf ("process p.iodepth=%u", depth);
      const char *const sets[] = { set, "process p.engine=libaio", NULL };
      g_autoptr (SimRunResult) aio = run_text (direct_reader, sets);
      double aio_per_io = sys_ns (aio) / (double) total_ios (aio);
      g_test_message ("depth %u: %.0f ns per I/O (sync %.0f)", depth, aio_per_io, sync_per_io);
      g_assert_cmpfloat (aio_per_io, >, sync_per_io);
      /* Deeper queues keep the device busier; at depth 1 the dearer
       * calls only add to each I/O's time. */
      if (depth > 1)
        g_assert_cmpuint (total_ios (aio), >, total_ios (sync));
      else
        g_assert_cmpuint (total_ios (aio), <=, total_ios (sync));
    }
}

static const char lock_scaling[] =
  "[host]\ncpus = 8\nprofile = 2.4-ext3\nmemory = 1GiB\nwriteback = global-2.6\n"
  "[sim]\nduration = 3s\n"
  "[device d]\ncount = 8\nkind = fixed\noverhead = 0.2ms\nbandwidth = 200MB/s\n"
  "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 8KiB\n";

static const SimLockResult *
lock_named (const SimRunResult *r, const char *name)
{
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      if (strcmp (l->name, name) == 0)
        return l;
    }
  return NULL;
}

static double
total_mb_per_s (const SimRunResult *r)
{
  guint64 bytes = 0;
  for (guint i = 0; i < r->processes->len; i++)
    bytes += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->bytes;
  return (double) bytes / ((double) r->elapsed_ns / 1e9) / 1e6;
}

/* Eight writers on eight CPUs: 2.4 ext3's global BKL makes them spin in
 * turn; the same lock per file system lets them run side by side. */
static void
test_global_lock_limits_scaling (void)
{
  g_autoptr (SimRunResult) global = run_text (lock_scaling, NULL);
  const char *const per_fs[] = { "lock bkl.scope=fs", NULL };
  g_autoptr (SimRunResult) fs = run_text (lock_scaling, per_fs);
  const SimLockResult *bkl = lock_named (global, "bkl");
  g_assert_nonnull (bkl);
  g_assert_nonnull (lock_named (fs, "bkl[d0]"));
  g_assert_null (lock_named (fs, "bkl"));
  g_test_message ("global BKL %.1f MB/s (contention %.1f%%, util %.1f%%), per-fs %.1f MB/s",
                  total_mb_per_s (global), bkl->stats.contention_pct,
                  100 * bkl->stats.utilisation, total_mb_per_s (fs));
  g_assert_cmpfloat (bkl->stats.contention_pct, >, 50.0);
  g_assert_cmpfloat (bkl->stats.utilisation, >, 0.8);
  g_assert_cmpfloat (total_mb_per_s (fs), >, 1.5 * total_mb_per_s (global));
  /* Spinning on the BKL is system time that writes nothing. */
  g_assert_cmpfloat (global->cpu.sy, >, 50.0);
}

static void
test_deterministic (void)
{
  const char *const per_fs[] = { "sim.duration=1s", NULL };
  g_autoptr (SimRunResult) a = run_text (lock_scaling, per_fs);
  g_autoptr (SimRunResult) b = run_text (lock_scaling, per_fs);
  g_autoptr (GPtrArray) ra = g_ptr_array_new ();
  g_autoptr (GPtrArray) rb = g_ptr_array_new ();
  g_ptr_array_add (ra, a);
  g_ptr_array_add (rb, b);
  g_autofree char *ja = sim_report_json ("d", 1, ra);
  g_autofree char *jb = sim_report_json ("d", 1, rb);
  g_assert_cmpstr (ja, ==, jb);
  g_assert_nonnull (strstr (ja, "\"host\""));
}

static void
test_bad_host_keys (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { "[host]\nprofile = 2.4-ext3\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n", "cpus" },
    { "[host]\ncpus = 2\nprofile = 2.2-ext2\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n",
      "2.2-ext2" },
    { "[host]\ncpus = 2\n[lock bkl]\nscope = planet\n[device d]\nkind = fixed\n"
      "[process p]\nsize = 1MiB\n", "scope" },
    { "[host]\ncpus = 2\n[sim]\nduration = 1s\n[device d]\nkind = fixed\n[process p]\nop = sync\nthink = 1s\n",
      "op = sync" },
    { "[costs]\nsyscall = 1us\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n", "cpus" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (cases[i].text, "bad", NULL, NULL, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' does not mention '%s'", i, error->message, cases[i].needle);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/host/direct-costs", test_direct_costs);
  g_test_add_func ("/host/aio-costs-more", test_aio_costs_more);
  g_test_add_func ("/host/global-lock-limits-scaling", test_global_lock_limits_scaling);
  g_test_add_func ("/host/deterministic", test_deterministic);
  g_test_add_func ("/host/bad-keys", test_bad_host_keys);
  return g_test_run ();
}
