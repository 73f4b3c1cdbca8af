/* test-trace-process.c — trace-driven processes: closed loop (an I/O that
 * waited for its predecessor in the trace waits for the simulated
 * completion plus the recorded think time) versus open loop (recorded
 * inter-arrival gaps), checked on the per-I/O log; and byte-identical
 * per-I/O logs and --trace-out text across two runs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "models/fit/fit.h"
#include "models/scenario.h"
#include "models/scenario-private.h"
#include "traces/trace-results.h"

/* pid 100: I/O 1 at 0 completes at 1 ms; I/O 2 queued at 3 ms (2 ms think
 * after that completion); I/O 3 queued at 3.1 ms while I/O 2 is in flight
 * (open: 100 us after I/O 2). */
static const char trace_text[] =
  "  8,0    0        1     0.000000000   100  Q   R 0 + 8 [app]\n"
  "  8,0    0        2     0.000001000   100  G   R 0 + 8 [app]\n"
  "  8,0    0        3     0.000002000   100  I   R 0 + 8 [app]\n"
  "  8,0    0        4     0.000010000   100  D   R 0 + 8 [app]\n"
  "  8,0    0        5     0.001000000     0  C   R 0 + 8 [0]\n"
  "  8,0    0        6     0.003000000   100  Q   R 8 + 8 [app]\n"
  "  8,0    0        7     0.003001000   100  G   R 8 + 8 [app]\n"
  "  8,0    0        8     0.003002000   100  I   R 8 + 8 [app]\n"
  "  8,0    0        9     0.003010000   100  D   R 8 + 8 [app]\n"
  "  8,0    0       10     0.003100000   100  Q   R 800 + 8 [app]\n"
  "  8,0    0       11     0.003101000   100  G   R 800 + 8 [app]\n"
  "  8,0    0       12     0.003102000   100  I   R 800 + 8 [app]\n"
  "  8,0    0       13     0.004000000     0  C   R 8 + 8 [0]\n"
  "  8,0    0       14     0.004010000   100  D   R 800 + 8 [app]\n"
  "  8,0    0       15     0.005000000     0  C   R 800 + 8 [0]\n";

static char *
run_with_log (const char *dir, const char *timing, char **trace_out_text)
{
  g_autofree char *trace = g_build_filename (dir, "t.blkparse", NULL);
  g_assert_true (g_file_set_contents (trace, trace_text, -1, NULL));
  g_autofree char *ini = g_strdup_printf (
    "[device d]\nkind = fixed\noverhead = 10ms\nbandwidth = 1000MB/s\nsched = noop\n"
    "[process app-100]\npattern = trace\ntrace = t.blkparse\ntrace_pid = 100\ntiming = %s\n",
    timing);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "trace", dir, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *log_path = g_build_filename (dir, "io.csv", NULL);
  g_autofree char *out_path = g_build_filename (dir, "out.blkparse", NULL);
  FILE *log = fopen (log_path, "w");
  FILE *out = fopen (out_path, "w");
  trace_results_write_header (log);
  ScenarioOutputs outputs = { log, out, NULL };
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (log);
  fclose (out);
  g_assert_cmpuint (((SimProcessResult *) g_ptr_array_index (r->processes, 0))->ios, ==, 3);
  char *text = NULL;
  g_assert_true (g_file_get_contents (log_path, &text, NULL, NULL));
  if (trace_out_text)
    g_assert_true (g_file_get_contents (out_path, trace_out_text, NULL, NULL));
  return text;
}

/* ---- A traced pool ---------------------------------------------------------- */

/* Six reads queued 1 ms apart by four nfsd threads (pids 201..204), each
 * completing 3 ms after its queue time in the trace. */
static char *
pool_trace_text (void)
{
  GString *t = g_string_new (NULL);
  guint seq = 1;

  for (guint k = 0; k < 6; k++)
    {
      guint pid = 201 + k % 4;
      guint64 sector = 1000 * (k + 1);
      double q = k * 0.001;

      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   R %" G_GUINT64_FORMAT
                              " + 8 [nfsd]\n", seq++, q, pid, sector);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   R %" G_GUINT64_FORMAT
                              " + 8 [nfsd]\n", seq++, q + 0.000001, pid, sector);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   R %" G_GUINT64_FORMAT
                              " + 8 [0]\n", seq++, q + 0.003, sector);
    }
  return g_string_free (t, FALSE);
}

typedef struct {
  const char *name;
  guint       threads;
  gint64      issue_ns[6];   /* in issue order */
} PoolCase;

/* A device serving four at once in 3 ms and 4 ns each (4 KiB at 10^12
 * B/s): with 2 threads the third read (arrived at 2 ms) waits for the
 * first thread to free at 3 ms, the fourth (3 ms) for the second at 4, the
 * fifth (4 ms) for the first again at 6, the sixth (5 ms) for the second
 * at 7; with 6 threads each goes at its arrival; with 1 thread they go one
 * after another. */
#define SVC 3000004
static const PoolCase pool_cases[] = {
  { "two-threads", 2, { 0, 1000000, SVC, 1000000 + SVC, 2 * SVC, 1000000 + 2 * SVC } },
  { "six-threads", 6, { 0, 1000000, 2000000, 3000000, 4000000, 5000000 } },
  { "one-thread", 1, { 0, SVC, 2 * SVC, 3 * SVC, 4 * SVC, 5 * SVC } },
};

static int
cmp_gint64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

static GArray *issue_times (const char *csv);

/* Run the scenario @ini (its trace files in @dir) with a per-I/O log in
 * @dir; the issue times the log holds, in order, and the run's result. */
static GArray *
run_issue_times (const char *ini, const char *dir, SimRunResult **result)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *log_path = g_build_filename (dir, "io.csv", NULL);
  g_autofree char *csv = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "pool", dir, NULL, &error);
  GArray *issues;
  FILE *log;

  g_assert_no_error (error);
  log = fopen (log_path, "w");
  trace_results_write_header (log);
  ScenarioOutputs outputs = { .io_log = log };
  *result = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (log);
  g_assert_true (g_file_get_contents (log_path, &csv, NULL, NULL));
  g_unlink (log_path);
  issues = issue_times (csv);
  g_array_sort (issues, cmp_gint64);
  return issues;
}

static void
test_pool (gconstpointer data)
{
  const PoolCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-trace-pool-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "pool.blkparse", NULL);
  g_autofree char *text = pool_trace_text ();
  g_autofree char *ini = g_strdup_printf (
    "[device d]\nkind = fixed\noverhead = 3ms\nbandwidth = 1000000MB/s\nparallelism = 4\n"
    "queue_depth = 4\nsched = noop\n"
    "[process nfsd]\npattern = trace\ntrace = pool.blkparse\ntrace_comm = nfsd\n"
    "stream = shared\nthreads = %u\n", c->threads);
  g_autoptr (GArray) issues = NULL;
  g_autoptr (SimRunResult) r = NULL;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (trace, text, -1, NULL));
  issues = run_issue_times (ini, dir, &r);
  g_assert_cmpuint (r->processes->len, ==, c->threads);
  g_assert_cmpstr (((SimProcessResult *) g_ptr_array_index (r->processes, 0))->name, ==, "nfsd-1");
  g_assert_cmpuint (issues->len, ==, 6);
  for (guint k = 0; k < 6; k++)
    g_assert_cmpint (g_array_index (issues, gint64, k), ==, c->issue_ns[k]);
  g_unlink (trace);
  g_rmdir (dir);
}

/* A chain across two nfsd threads: each read queued 100 us after the one
 * before completed (3 ms each in the trace).  Five of six come that soon
 * after a completion, where 1 ms x 6 / 18.5 ms = 32 % would by chance:
 * causal.  On a device of 5 ms the pool keeps the chain: read k + 1 goes
 * 100 us after read k's simulated completion, not at its recorded time. */
static void
test_pool_chain (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-trace-pool-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "chain.blkparse", NULL);
  g_autoptr (GString) t = g_string_new (NULL);
  g_autoptr (GArray) issues = NULL;
  g_autoptr (SimRunResult) r = NULL;
  const gint64 svc = 5000004, gap = 100000;
  guint seq = 1;

  for (guint k = 0; k < 6; k++)
    {
      double q = k * 0.0031;
      guint pid = 201 + k % 2;
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   R %u + 8 [nfsd]\n", seq++, q,
                              pid, 1000 * (k + 1));
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   R %u + 8 [nfsd]\n", seq++,
                              q + 0.000001, pid, 1000 * (k + 1));
      g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   R %u + 8 [0]\n", seq++,
                              q + 0.003, 1000 * (k + 1));
    }
  g_assert_true (g_file_set_contents (trace, t->str, -1, NULL));
  issues = run_issue_times (
    "[device d]\nkind = fixed\noverhead = 5ms\nbandwidth = 1000000MB/s\nparallelism = 4\n"
    "queue_depth = 4\nsched = noop\n"
    "[process nfsd]\npattern = trace\ntrace = chain.blkparse\ntrace_comm = nfsd\n"
    "stream = shared\nthreads = 2\n", dir, &r);
  g_assert_cmpuint (issues->len, ==, 6);
  for (guint k = 0; k < 6; k++)
    g_assert_cmpint (g_array_index (issues, gint64, k), ==, (gint64) k * (svc + gap));
  g_unlink (trace);
  g_rmdir (dir);
}

/* iosim fit writes the four nfsd threads as one pool of four, and the
 * scenario it writes runs as the pool above; one nfsd thread alone stays
 * a traced process of its own. */
static void
test_pool_fit (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-trace-pool-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "pool.blkparse", NULL);
  g_autofree char *text = pool_trace_text ();
  FitOptions opts = { 0 };
  g_autoptr (FitResult) fit = NULL;
  g_autofree char *ini = NULL;

  g_assert_true (g_file_set_contents (trace, text, -1, NULL));
  fit = fit_trace (trace, &opts, &error);
  g_assert_no_error (error);
  ini = fit_scenario_to_data (fit);
  g_assert_nonnull (strstr (ini, "[process nfsd]\n"));
  g_assert_nonnull (strstr (ini, "\ntrace_comm = nfsd\n"));
  g_assert_nonnull (strstr (ini, "\nstream = shared\nthreads = 4\n"));
  g_assert_null (strstr (ini, "trace_pid"));
  {
    g_autoptr (Scenario) s = scenario_load_data (ini, "fitted", dir, NULL, &error);
    g_assert_no_error (error);
    g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (r->processes->len, ==, 4);
  }
  /* Only pid 201's reads: one thread, no pool. */
  {
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_autoptr (GString) one = g_string_new (NULL);
    g_autoptr (FitResult) fit1 = NULL;
    g_autofree char *ini1 = NULL;

    for (guint i = 0; lines[i] != NULL; i++)
      if (strstr (lines[i], " 201 ") != NULL || strstr (lines[i], " C ") != NULL)
        g_string_append_printf (one, "%s\n", lines[i]);
    g_assert_true (g_file_set_contents (trace, one->str, -1, NULL));
    fit1 = fit_trace (trace, &opts, &error);
    g_assert_no_error (error);
    ini1 = fit_scenario_to_data (fit1);
    g_assert_null (strstr (ini1, "trace_comm"));
    g_assert_nonnull (strstr (ini1, "trace_pid = 201\n"));
  }
  g_unlink (trace);
  g_rmdir (dir);
}

/* trace_comm is for pools; a pool needs trace_comm or a pid. */
static void
test_pool_errors (void)
{
  static const struct { const char *keys; const char *needle; } cases[] = {
    { "trace_comm = nfsd\n", "stream = shared" },
    { "stream = shared\nthreads = 2\n", "trace_comm" },
    { "trace_pid = 201\nthreads = 2\n", "stream = shared makes the threads a pool" },
    { "stream = sideways\ntrace_pid = 201\n", "private, or a pool" },
    { "trace_comm = mountd\nstream = shared\nthreads = 2\n", "no completed read or write of a process named 'mountd'" },
  };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-trace-pool-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "pool.blkparse", NULL);
  g_autofree char *text = pool_trace_text ();

  g_assert_true (g_file_set_contents (trace, text, -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) e = NULL;
      g_autofree char *ini = g_strdup_printf (
        "[device d]\nkind = fixed\n[process nfsd]\npattern = trace\ntrace = pool.blkparse\n%s",
        cases[i].keys);
      g_autoptr (Scenario) s = scenario_load_data (ini, "pool", dir, NULL, &e);
      g_assert_null (s);
      if (strstr (e->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' lacks '%s'", i, e->message, cases[i].needle);
    }
  g_unlink (trace);
  g_rmdir (dir);
}

/* issue_ns of each row of a results CSV, in file order (completion order). */
static GArray *
issue_times (const char *csv)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 11);
      gint64 t = g_ascii_strtoll (f[7], NULL, 10);
      g_array_append_val (a, t);
    }
  return a;
}

static void
test_closed_and_open (void)
{
  g_autofree char *dir = g_dir_make_tmp ("iosim-trace-XXXXXX", NULL);
  g_autofree char *closed = run_with_log (dir, "closed", NULL);
  g_autoptr (GArray) c = issue_times (closed);
  g_assert_cmpuint (c->len, ==, 3);
  const gint64 service = 10 * 1000000 + 4096;   /* overhead + 4 KiB at 1000 MB/s */
  g_assert_cmpint (g_array_index (c, gint64, 0), ==, 0);
  /* Closed: after the simulated completion plus the 2 ms think time. */
  g_assert_cmpint (g_array_index (c, gint64, 1), ==, service + 2000000);
  /* I/O 3 overlapped I/O 2 in the trace: 100 us after I/O 2's issue. */
  g_assert_cmpint (g_array_index (c, gint64, 2), ==, service + 2000000 + 100000);

  g_autofree char *open = run_with_log (dir, "open", NULL);
  g_autoptr (GArray) o = issue_times (open);
  g_assert_cmpint (g_array_index (o, gint64, 0), ==, 0);
  g_assert_cmpint (g_array_index (o, gint64, 1), ==, 3000000);
  g_assert_cmpint (g_array_index (o, gint64, 2), ==, 3100000);

  g_autofree char *t1 = NULL, *t2 = NULL;
  g_autofree char *again1 = run_with_log (dir, "closed", &t1);
  g_autofree char *again2 = run_with_log (dir, "closed", &t2);
  g_assert_cmpstr (again1, ==, again2);
  g_assert_cmpstr (t1, ==, t2);
  g_assert_nonnull (strstr (t1, " Q ") );
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
}

/* A trace with Q events only (no completion times): two processes of
 * it, read once for both, replay open loop although timing = closed (no
 * completion to wait for): pid 100's second read goes at its recorded
 * 5 ms, before the first one's 10 ms service ends. */
/* ---- Streamed I/Os ---------------------------------------------------------- */

/* Two processes of one trace, their I/Os kept in memory or every block
 * spooled to the temporary file ([sim] trace_memory = 0): the trace is
 * read once for both, and the per-I/O logs are the same byte for byte. */
static char *
run_spool (const char *dir, const char *memory, guint *passes)
{
  g_autofree char *trace = g_build_filename (dir, "two.blkparse", NULL);
  g_autoptr (GString) t = g_string_new (NULL);
  guint seq = 1;
  /* 3000 reads each of pids 100 and 200 (three store blocks apiece), 50 us
   * apart, each done 20 us after it was queued. */
  for (guint i = 0; i < 6000; i++)
    {
      guint pid = i % 2 ? 200 : 100;
      double q = i * 50e-6;
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   R %u + 8 [app]\n", seq++, q, pid,
                              (i * 97 % 5000) * 8);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   R %u + 8 [app]\n", seq++, q + 1e-6,
                              pid, (i * 97 % 5000) * 8);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   R %u + 8 [0]\n", seq++, q + 20e-6,
                              (i * 97 % 5000) * 8);
    }
  g_assert_true (g_file_set_contents (trace, t->str, -1, NULL));
  g_autofree char *ini = g_strdup_printf (
    "[sim]\ntrace_memory = %s\n"
    "[device d]\nkind = fixed\noverhead = 30us\nbandwidth = 1000MB/s\nsched = noop\n"
    "[process a]\npattern = trace\ntrace = two.blkparse\ntrace_pid = 100\n"
    "[process b]\npattern = trace\ntrace = two.blkparse\ntrace_pid = 200\ntiming = open\n",
    memory);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "spool", dir, NULL, &error);
  g_assert_no_error (error);
  *passes = scenario_trace_passes (s);
  g_autofree char *log_path = g_build_filename (dir, "spool.csv", NULL);
  FILE *log = fopen (log_path, "w");
  trace_results_write_header (log);
  ScenarioOutputs outputs = { log, NULL, NULL };
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (log);
  for (guint i = 0; i < 2; i++)
    g_assert_cmpuint (((SimProcessResult *) g_ptr_array_index (r->processes, i))->ios, ==, 3000);
  char *text = NULL;
  g_assert_true (g_file_get_contents (log_path, &text, NULL, NULL));
  g_remove (log_path);
  g_remove (trace);
  return text;
}

static void
test_spool (void)
{
  g_autofree char *dir = g_dir_make_tmp ("iosim-spool-XXXXXX", NULL);
  guint passes_memory = 0, passes_spool = 0;
  g_autofree char *in_memory = run_spool (dir, "64MiB", &passes_memory);
  g_autofree char *spooled = run_spool (dir, "0", &passes_spool);
  g_assert_cmpuint (passes_memory, ==, 1);
  g_assert_cmpuint (passes_spool, ==, 1);
  g_assert_cmpstr (in_memory, ==, spooled);
  g_rmdir (dir);
}

/* [sim] trace_memory takes a size; anything else names the key. */
static void
test_spool_bad_memory (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (
    "[sim]\ntrace_memory = lots\n[device d]\nkind = fixed\noverhead = 1ms\n"
    "bandwidth = 100MB/s\n[process p]\npattern = random\nbs = 4KiB\nsize = 1MiB\n",
    "bad-memory", NULL, NULL, &error);
  g_assert_null (s);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "[sim] trace_memory"));
}

/* Pid 1's first read is queued first and completes last; with @fillers
 * reads of pid 2 completing in between, the lifecycle gives it after more
 * than the reorder holds (SCENARIO_TRACE_REORDER_IOS), and the trace is
 * read a second time, whole.  Pid 1's process must see the same I/Os
 * either way. */
typedef struct {
  guint64 ios;
  guint64 bytes;
  char    op[8];
  SimTime active_ns;
  double  lat_mean_ns;
  SimTime lat_max_ns;
} LateResult;

static LateResult
run_late (const char *dir, guint fillers, guint *passes)
{
  g_autofree char *trace = g_build_filename (dir, "late.blkparse", NULL);
  g_autoptr (GString) t = g_string_new (NULL);
  guint seq = 1;
  g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   R 0 + 8 [one]\n", seq++, 0.0, 1);
  g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   R 0 + 8 [one]\n", seq++, 1e-6, 1);
  for (guint i = 0; i < fillers; i++)
    {
      double q = 0.001 + i * 10e-6;
      guint sector = 8 + (i % 100000) * 8;
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   R %u + 8 [two]\n", seq++, q, 2, sector);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   R %u + 8 [two]\n", seq++, q + 1e-6, 2, sector);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   R %u + 8 [0]\n", seq++, q + 5e-6, sector);
    }
  for (guint i = 0; i < 3; i++)
    {
      double q = 1.5 + i * 0.1;
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  Q   W %u + 8 [one]\n", seq++, q, 1, 900000 + i * 8);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f %5u  D   W %u + 8 [one]\n", seq++, q + 1e-6, 1, 900000 + i * 8);
      g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   W %u + 8 [0]\n", seq++, q + 1e-3, 900000 + i * 8);
    }
  g_string_append_printf (t, "  8,0    0 %8u %14.9f     0  C   R 0 + 8 [0]\n", seq++, 2.0);
  g_assert_true (g_file_set_contents (trace, t->str, -1, NULL));
  const char *ini =
    "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\nsched = noop\n"
    "[process one]\npattern = trace\ntrace = late.blkparse\ntrace_pid = 1\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "late", dir, NULL, &error);
  g_assert_no_error (error);
  *passes = scenario_trace_passes (s);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  g_remove (trace);
  const SimProcessResult *p = g_ptr_array_index (r->processes, 0);
  LateResult out = { p->ios, p->bytes, "", p->active_ns, p->lat_mean_ns, p->lat_max_ns };
  g_strlcpy (out.op, p->op, sizeof out.op);
  return out;
}

static void
test_reorder_overflow (void)
{
  g_autofree char *dir = g_dir_make_tmp ("iosim-late-XXXXXX", NULL);
  guint passes_few = 0, passes_many = 0;
  LateResult few = run_late (dir, 10, &passes_few);
  LateResult many = run_late (dir, 70000, &passes_many);
  g_assert_cmpuint (passes_few, ==, 1);
  g_assert_cmpuint (passes_many, ==, 2);
  g_assert_cmpuint (few.ios, ==, 4);
  g_assert_cmpuint (many.ios, ==, few.ios);
  g_assert_cmpuint (many.bytes, ==, few.bytes);
  g_assert_cmpstr (many.op, ==, "mixed");
  g_assert_cmpint (many.active_ns, ==, few.active_ns);
  g_assert_cmpfloat (many.lat_mean_ns, ==, few.lat_mean_ns);
  g_assert_cmpint (many.lat_max_ns, ==, few.lat_max_ns);
  g_rmdir (dir);
}

static void
test_issue_only (void)
{
  static const char q_only[] =
    "  8,0    0        1     0.000000000   100  Q   R 0 + 8 [app]\n"
    "  8,0    0        2     0.002000000   200  Q   W 1000 + 8 [other]\n"
    "  8,0    0        3     0.005000000   100  Q   R 8 + 8 [app]\n"
    "  8,0    0        4     0.005100000   100  Q   R 800 + 8 [app]\n";
  static const gint64 want[] = { 0, 2000000, 5000000, 5100000 };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-trace-qonly-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "q.blkparse", NULL);
  static const char ini[] =
    "[device d]\nkind = fixed\noverhead = 10ms\nbandwidth = 1000000MB/s\nparallelism = 4\n"
    "queue_depth = 4\nsched = noop\n"
    "[process app]\npattern = trace\ntrace = q.blkparse\ntrace_pid = 100\ntiming = closed\n"
    "[process other]\npattern = trace\ntrace = q.blkparse\ntrace_pid = 200\n";
  g_autoptr (GArray) issues = NULL;
  g_autoptr (SimRunResult) r = NULL;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (trace, q_only, -1, NULL));
  issues = run_issue_times (ini, dir, &r);
  g_assert_cmpuint (r->processes->len, ==, 2);
  g_assert_cmpuint (issues->len, ==, G_N_ELEMENTS (want));
  for (guint k = 0; k < G_N_ELEMENTS (want); k++)
    g_assert_cmpint (g_array_index (issues, gint64, k), ==, want[k]);
  g_unlink (trace);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/trace-process/closed-open", test_closed_and_open);
  for (guint i = 0; i < G_N_ELEMENTS (pool_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/scenario/trace-process/pool/%s",
                                               pool_cases[i].name);
      g_test_add_data_func (path, &pool_cases[i], test_pool);
    }
  g_test_add_func ("/scenario/trace-process/pool-errors", test_pool_errors);
  g_test_add_func ("/scenario/trace-process/pool-fit", test_pool_fit);
  g_test_add_func ("/scenario/trace-process/pool-chain", test_pool_chain);
  g_test_add_func ("/scenario/trace-process/issue-only", test_issue_only);
  g_test_add_func ("/scenario/trace-process/spool", test_spool);
  g_test_add_func ("/scenario/trace-process/spool-bad-memory", test_spool_bad_memory);
  g_test_add_func ("/scenario/trace-process/reorder-overflow", test_reorder_overflow);
  return g_test_run ();
}
