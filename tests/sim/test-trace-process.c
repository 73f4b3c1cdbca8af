/* test-trace-process.c — trace-driven processes: closed loop (an I/O that
 * waited for its predecessor in the trace waits for the simulated
 * completion plus the recorded think time) versus open loop (recorded
 * inter-arrival gaps), checked on the per-I/O log; and byte-identical
 * per-I/O logs and --trace-out text across two runs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "models/scenario.h"
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/trace-process/closed-open", test_closed_and_open);
  return g_test_run ();
}
