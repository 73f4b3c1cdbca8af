/* test-compare-cli.c — `iosim compare` and `iosim fit` as a user runs them
 * ($IOSIM_BIN): exit codes, the table, --json, --cdf, --plot (drawn when
 * gnuplot is on PATH; its absence simulated with an empty PATH), and errors
 * naming file and line.  Fixtures: tests/compare/data/cli-*.csv; `fit` also reads a
 * blkparse trace this test writes, with noise-free service times. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include "tests/test-run.h"

/* TestRun iosim with @args (NULL-terminated) in environment @envp (NULL: this
 * process's); exit status in r->status. */
static void
run_iosim_env (TestRun *r, char **envp, const char *const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (gpointer) test_iosim_bin ());
  for (const char *const *a = args; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  test_run_argv (r, envp, (const char *const *) argv->pdata);
}

static void
run_iosim (TestRun *r, const char *const *args)
{
  run_iosim_env (r, NULL, args);
}

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "compare", "data", name, NULL);
}

static JsonObject *
load_json (JsonParser *parser, const char *path)
{
  g_autoptr(GError) error = NULL;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_compare_fixtures (void)
{
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *meas = fixture ("cli-meas.csv");
  g_autofree char *json = g_build_filename (g_get_user_cache_dir (), "cmp.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(TestRun) r = { 0 };
  JsonObject *root, *dd;
  JsonArray *procs;

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  run_iosim (&r, (const char *const[]) { "compare", sim, meas, "--json", json, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\ndd-1 "));
  g_assert_nonnull (strstr (r.out, "\noverall "));
  g_assert_nonnull (strstr (r.out, "only in simulated (1): only-sim-2"));
  g_assert_nonnull (strstr (r.out, "only in measured (1): only-meas-3"));

  root = load_json (parser, json);
  procs = json_object_get_array_member (root, "processes");
  g_assert_cmpuint (json_array_get_length (procs), ==, 1);
  dd = json_array_get_object_element (procs, 0);
  g_assert_cmpstr (json_object_get_string_member (dd, "name"), ==, "dd-1");
  /* Measured = simulated + 0.5 ms for every I/O. */
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "demerit_ms"), 0.5, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "demerit_pct"),
                                  0.5 / 3.0 * 100, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "mean_error_pct"),
                                  (2.5 - 3.0) / 3.0 * 100, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "p50_error_pct"),
                                  (2.5 - 3.0) / 3.0 * 100, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "ks_d"), 0.25, 1e-12);
  /* Spans 13 ms simulated, 13.5 ms measured, same bytes. */
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (dd, "throughput_error_pct"),
                                  (13.5 / 13.0 - 1) * 100, 1e-9);
  g_assert_true (json_object_has_member (root, "overall"));
  g_assert_cmpstr (json_array_get_string_element (
                     json_object_get_array_member (root, "only_in_measured"), 0), ==,
                   "only-meas-3");
}

static void
test_compare_errors (void)
{
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *bad = fixture ("fail-bad-number.csv");
  g_auto(TestRun) r1 = { 0 };
  g_auto(TestRun) r2 = { 0 };
  g_autofree char *where = NULL;

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  run_iosim (&r1, (const char *const[]) { "compare", sim, bad, NULL });
  g_assert_cmpint (r1.status, ==, 1);
  where = g_strconcat (bad, ":4: bad issue_ns", NULL);
  g_assert_nonnull (strstr (r1.err, where));

  run_iosim (&r2, (const char *const[]) { "compare", sim, NULL });
  g_assert_cmpint (r2.status, ==, 2);
}

/* Latency kinds: a block-layer file against a system-call one is refused
 * naming each file's kind, compared with --allow-mixed-latency; a file of
 * unknown kind compares with a note. */
static void
test_compare_latency_kinds (void)
{
  g_autofree char *q2c = fixture ("cli-sim-q2c.csv");
  g_autofree char *syscall = fixture ("cli-meas-syscall.csv");
  g_autofree char *unknown = fixture ("cli-sim.csv");
  g_autofree char *sim_says = NULL, *meas_says = NULL, *note = NULL;
  g_auto(TestRun) refused = { 0 };
  g_auto(TestRun) allowed = { 0 };
  g_auto(TestRun) noted = { 0 };
  g_auto(TestRun) same = { 0 };

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  run_iosim (&refused, (const char *const[]) { "compare", q2c, syscall, NULL });
  g_assert_cmpint (refused.status, ==, 1);
  g_assert_cmpstr (refused.out, ==, "");
  sim_says = g_strdup_printf ("simulated %s holds block-q2c latencies", q2c);
  meas_says = g_strdup_printf ("measured %s holds syscall latencies", syscall);
  g_assert_nonnull (strstr (refused.err, sim_says));
  g_assert_nonnull (strstr (refused.err, meas_says));
  g_assert_nonnull (strstr (refused.err, "--capture"));

  run_iosim (&allowed, (const char *const[]) { "compare", q2c, syscall,
                                               "--allow-mixed-latency", NULL });
  g_assert_cmpint (allowed.status, ==, 0);
  g_assert_nonnull (strstr (allowed.out, "latency kind: simulated block-q2c, measured syscall\n"));
  g_assert_nonnull (strstr (allowed.out, "\ndd-1 "));

  run_iosim (&noted, (const char *const[]) { "compare", unknown, syscall, NULL });
  g_assert_cmpint (noted.status, ==, 0);
  note = g_strdup_printf ("note: %s has no latency_kind column (unknown), %s holds syscall",
                          unknown, syscall);
  g_assert_nonnull (strstr (noted.err, note));

  run_iosim (&same, (const char *const[]) { "compare", q2c, q2c, NULL });
  g_assert_cmpint (same.status, ==, 0);
  g_assert_cmpstr (same.err, ==, "");
  g_assert_nonnull (strstr (same.out, "latency kind: simulated block-q2c, measured block-q2c\n"));
}

/* A blkparse trace of one closed-loop reader (pid 4756, "dd") on 7,0 with
 * D2C = 40 us + bytes / 400 MB/s exactly, two sizes, 10 us think time, and
 * a capture header naming the device. */
static char *
write_blkparse_trace (void)
{
  char *path = g_build_filename (g_get_user_cache_dir (), "dd.blkparse", NULL);
  g_autoptr(GString) s = g_string_new ("# iosim-capture device=/dev/loop0 devno=7,0 "
                                       "scheduler=mq-deadline size_bytes=134217728\n");
  gint64 t = 1000000;
  guint seq = 1;

  for (int i = 0; i < 60; i++)
    {
      guint32 sectors = i % 2 == 0 ? 8 : 256;
      guint64 sector = 2048 + (guint64) i * 256;
      gint64 d2c = 40000 + (gint64) sectors * 512 * 10 / 4;   /* 2.5 ns per byte */
      gint64 q = t, d = t + 2000, c = d + d2c;

      g_string_append_printf (s, "  7,0    0 %8u %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                              "  4756  Q   R %" G_GUINT64_FORMAT " + %u [dd]\n",
                              seq++, q / 1000000000, q % 1000000000, sector, sectors);
      g_string_append_printf (s, "  7,0    0 %8u %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                              "  4756  D   R %" G_GUINT64_FORMAT " + %u [dd]\n",
                              seq++, d / 1000000000, d % 1000000000, sector, sectors);
      g_string_append_printf (s, "  7,0    0 %8u %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                              "     0  C   R %" G_GUINT64_FORMAT " + %u [0]\n",
                              seq++, c / 1000000000, c % 1000000000, sector, sectors);
      t = c + 10000;
    }
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  return path;
}

/* The whole loop: fit the trace, simulate the scenario, compare the
 * simulated I/Os with the trace's own.  A fixed-rate device fitted on
 * noise-free data must meet the project's acceptance bar for disk-like
 * models (anchors.md §D.2: mean within 5 %, demerit at most 5 % of the
 * mean); the only modelled difference is the 2 us from Q to D. */
static void
check_round_trip (const char *ini, const char *measured)
{
  g_autofree char *sim = g_build_filename (g_get_user_cache_dir (), "dd-sim.csv", NULL);
  g_autofree char *json = g_build_filename (g_get_user_cache_dir (), "dd-cmp.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(TestRun) run = { 0 };
  g_auto(TestRun) cmp = { 0 };
  JsonObject *root, *dd;

  run_iosim (&run, (const char *const[]) { "run", ini, "--io-log", sim, "-q", NULL });
  if (run.status != 0)
    g_error ("iosim run on the fitted scenario failed (%d): %s", run.status, run.err);
  run_iosim (&cmp, (const char *const[]) { "compare", sim, measured, "--json", json, NULL });
  g_assert_cmpint (cmp.status, ==, 0);
  root = load_json (parser, json);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "processes")), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "only_in_simulated")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "only_in_measured")), ==, 0);
  dd = json_array_get_object_element (json_object_get_array_member (root, "processes"), 0);
  g_assert_cmpstr (json_object_get_string_member (dd, "name"), ==, "dd-4756");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (dd, "simulated"), "ios"), ==, 60);
  g_assert_cmpfloat (fabs (json_object_get_double_member (dd, "mean_error_pct")), <=, 5.0);
  g_assert_cmpfloat (json_object_get_double_member (dd, "demerit_pct"), <=, 5.0);
}

static void
test_fit_blkparse (void)
{
  g_autofree char *trace = NULL;
  g_autofree char *ini = g_build_filename (g_get_user_cache_dir (), "dd.ini", NULL);
  g_autofree char *json = g_build_filename (g_get_user_cache_dir (), "dd.json", NULL);
  g_autofree char *measured = g_build_filename (g_get_user_cache_dir (), "dd.csv", NULL);
  g_autofree char *csv = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(TestRun) r = { 0 };
  g_autofree char *overhead = NULL, *bandwidth = NULL, *sched = NULL;
  g_autofree char *capacity = NULL, *timing = NULL;
  JsonObject *read;

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  trace = write_blkparse_trace ();
  run_iosim (&r, (const char *const[]) { "fit", trace, "-o", ini, "--json", json,
                                         "--measured", measured, NULL });
  if (r.status != 0)
    g_error ("iosim fit failed (%d): %s", r.status, r.err);
  g_assert_nonnull (strstr (r.out, "dd-4756"));

  g_key_file_load_from_file (kf, ini, G_KEY_FILE_NONE, &error);
  g_assert_no_error (error);
  overhead = g_key_file_get_string (kf, "device dev7_0", "overhead", &error);
  g_assert_no_error (error);
  bandwidth = g_key_file_get_string (kf, "device dev7_0", "bandwidth", &error);
  g_assert_no_error (error);
  /* Noise-free data: least squares is exact up to rounding. */
  g_assert_cmpstr (overhead, ==, "40.000us");
  g_assert_cmpstr (bandwidth, ==, "400.00MB/s");
  sched = g_key_file_get_string (kf, "device dev7_0", "sched", &error);
  g_assert_cmpstr (sched, ==, "mq-deadline");
  capacity = g_key_file_get_string (kf, "device dev7_0", "capacity", &error);
  g_assert_cmpstr (capacity, ==, "128MiB");
  timing = g_key_file_get_string (kf, "process dd-4756", "timing", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (timing, ==, "closed");
  g_assert_false (g_key_file_has_key (kf, "device dev7_0", "write_overhead", NULL));

  read = json_object_get_object_member (
           json_object_get_object_member (load_json (parser, json), "device"), "read");
  g_assert_cmpint (json_object_get_int_member (read, "used"), ==, 60);

  /* The measured side: a header and one row per bio, Q2C of the first is
   * 2 us (Q to D) + 40 us + 4096 B at 2.5 ns/B = 52,240 ns, each row saying
   * that its latency is the block layer's Q to C. */
  g_assert_true (g_file_get_contents (measured, &csv, NULL, NULL));
  g_assert_true (g_str_has_prefix (csv, "process,pid,device,op,offset_bytes,bytes,intended_ns,"
                                   "issue_ns,complete_ns,latency_ns,error,latency_kind\n"));
  g_assert_nonnull (strstr (csv, "\ndd-4756,4756,dev7_0,read,1048576,4096,0,0,52240,52240,0,"
                                 "block-q2c\n"));

  check_round_trip (ini, measured);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (read, "r2"), 1.0, 1e-9);
}

/* ---- --cdf and --plot ---------------------------------------------------- */

static const char PNG_SIGNATURE[8] = { '\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n' };

static char *
tmp_dir_new (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("iosim-compare-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

/* Remove @dir and the files and empty folders in it. */
static void
tmp_dir_remove (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        g_assert_cmpint (g_rmdir (path), ==, 0);
      else
        g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static int
int64_cmp (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* The latency_ns column of a results CSV for @process ("overall": every
 * row), sorted; read here independently of iosim.  Fixtures' names hold no
 * commas or quotes. */
static GArray *
load_latencies (const char *path, const char *process)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  GArray *lat = g_array_new (FALSE, FALSE, sizeof (gint64));
  int col_process = -1, col_latency = -1;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = NULL;

      g_strchomp (*l);
      if (**l == '\0' || **l == '#')
        continue;
      f = g_strsplit (*l, ",", -1);
      if (col_process < 0)
        {
          for (int i = 0; f[i] != NULL; i++)
            {
              if (strcmp (f[i], "process") == 0)
                col_process = i;
              if (strcmp (f[i], "latency_ns") == 0)
                col_latency = i;
            }
          g_assert_cmpint (col_process, >=, 0);
          g_assert_cmpint (col_latency, >=, 0);
          continue;
        }
      if (strcmp (process, "overall") == 0 || strcmp (f[col_process], process) == 0)
        {
          gint64 ns = g_ascii_strtoll (f[col_latency], NULL, 10);
          g_array_append_val (lat, ns);
        }
    }
  g_array_sort (lat, int64_cmp);
  return lat;
}

typedef struct {
  gint64 latency_ns;
  double cum_fraction;
} CdfRow;

/* One group of rows ("dd-1,simulated") as @cdf lists it from line
 * *@line on; advances *@line past the group. */
static GArray *
read_cdf_group (char **lines, guint *line, const char *process, const char *side)
{
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (CdfRow));

  for (; lines[*line] != NULL && lines[*line][0] != '\0'; (*line)++)
    {
      g_auto(GStrv) f = g_strsplit (lines[*line], ",", -1);
      CdfRow r;
      char *end;

      g_assert_cmpuint (g_strv_length (f), ==, 4);
      if (strcmp (f[0], process) != 0 || strcmp (f[1], side) != 0)
        break;
      r.latency_ns = g_ascii_strtoll (f[2], &end, 10);
      g_assert_true (*end == '\0' && end != f[2]);
      r.cum_fraction = g_ascii_strtod (f[3], &end);
      g_assert_true (*end == '\0' && end != f[3]);
      g_array_append_val (rows, r);
    }
  return rows;
}

/* The rows of one group must be points (x_i, i / n) of the empirical CDF of
 * the input's latencies: all of them up to 1000, else 1000 ranks from the
 * first to the last; cum_fraction rising strictly to exactly 1. */
static void
check_cdf_group (const GArray *rows, const GArray *input)
{
  guint n = input->len;
  guint64 prev_rank = 0;

  g_assert_cmpuint (n, >, 0);
  g_assert_cmpuint (rows->len, ==, MIN (n, 1000));
  for (guint k = 0; k < rows->len; k++)
    {
      const CdfRow *r = &g_array_index (rows, CdfRow, k);
      double rank_f = r->cum_fraction * n;
      guint64 rank = (guint64) (rank_f + 0.5);

      /* Printed with 12 significant digits. */
      g_assert_cmpfloat (fabs (rank_f - (double) rank), <, 1e-6);
      g_assert_cmpuint (rank, >, prev_rank);
      g_assert_cmpuint (rank, <=, n);
      if (n <= 1000)
        g_assert_cmpuint (rank, ==, k + 1);
      g_assert_cmpint (r->latency_ns, ==, g_array_index (input, gint64, rank - 1));
      if (k > 0)
        {
          g_assert_cmpfloat (r->cum_fraction, >, g_array_index (rows, CdfRow, k - 1).cum_fraction);
          g_assert_cmpint (r->latency_ns, >=, g_array_index (rows, CdfRow, k - 1).latency_ns);
        }
      prev_rank = rank;
    }
  g_assert_cmpfloat (g_array_index (rows, CdfRow, 0).cum_fraction * n, <, 1.5);
  g_assert_cmpfloat (g_array_index (rows, CdfRow, rows->len - 1).cum_fraction, ==, 1.0);
}

/* @cdf holds, in order, @processes (then "overall"), each simulated then
 * measured, matching @sim and @meas, and nothing else. */
static void
check_cdf_file (const char *cdf, const char *sim, const char *meas,
                const char *const *processes)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint line = 1;

  g_assert_true (g_file_get_contents (cdf, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "process,side,latency_ns,cum_fraction");
  for (const char *const *p = processes; *p != NULL; p++)
    for (int side = 0; side < 2; side++)
      {
        const char *side_name = side == 0 ? "simulated" : "measured";
        g_autoptr(GArray) rows = read_cdf_group (lines, &line, *p, side_name);
        g_autoptr(GArray) input = load_latencies (side == 0 ? sim : meas, *p);

        g_test_message ("%s %s: %u rows for %u I/Os", *p, side_name, rows->len, input->len);
        check_cdf_group (rows, input);
      }
  /* Only the final empty string after the last newline is left. */
  g_assert_cmpstr (lines[line], ==, "");
  g_assert_null (lines[line + 1]);
}

static void
test_compare_cdf (void)
{
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *meas = fixture ("cli-meas.csv");
  g_autofree char *dir = NULL;
  g_autofree char *cdf = NULL;
  g_auto(TestRun) r = { 0 };

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  dir = tmp_dir_new ();
  cdf = g_build_filename (dir, "cdf.csv", NULL);
  run_iosim (&r, (const char *const[]) { "compare", sim, meas, "--cdf", cdf, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\noverall "));
  /* Processes in one file only (only-sim-2, only-meas-3) have no CDF pair. */
  check_cdf_file (cdf, sim, meas, (const char *const[]) { "dd-1", "overall", NULL });
  tmp_dir_remove (dir);
}

/* A results file with @n I/Os of @process; latencies a permutation-driven
 * spread (so the input is not sorted) with ties. */
static void
append_results (GString *s, const char *process, guint pid, guint n,
                guint64 mult, gint64 base_ns, gint64 step_ns)
{
  for (guint i = 0; i < n; i++)
    {
      gint64 issue = (gint64) i * 1000000;
      gint64 lat = base_ns + (gint64) ((i * mult) % n / 2) * step_ns;

      g_string_append_printf (s, "%s,%u,loop0,read,%u,4096,%" G_GINT64_FORMAT ",%"
                              G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",0\n",
                              process, pid, i * 4096, issue, issue, issue + lat, lat);
    }
}

static void
test_compare_cdf_large (void)
{
  const char *header = "process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,"
                       "complete_ns,latency_ns,error\n";
  g_autofree char *dir = NULL;
  g_autofree char *sim = NULL, *meas = NULL, *cdf = NULL;
  g_autoptr(GString) s = g_string_new (header);
  g_autoptr(GString) m = g_string_new (header);
  g_auto(TestRun) r = { 0 };

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  dir = tmp_dir_new ();
  sim = g_build_filename (dir, "sim.csv", NULL);
  meas = g_build_filename (dir, "meas.csv", NULL);
  cdf = g_build_filename (dir, "cdf.csv", NULL);
  /* Above, at and below the 1000-point limit, and a tiny group. */
  append_results (s, "big-7", 7, 2503, 7919, 40000, 1000);
  append_results (m, "big-7", 7, 1001, 389, 45000, 1500);
  append_results (s, "mid-8", 8, 1000, 13, 90000, 700);
  append_results (m, "mid-8", 8, 999, 17, 80000, 900);
  append_results (s, "one-9", 9, 1, 1, 5000, 1);
  append_results (m, "one-9", 9, 2, 1, 6000, 10);
  g_assert_true (g_file_set_contents (sim, s->str, -1, NULL));
  g_assert_true (g_file_set_contents (meas, m->str, -1, NULL));

  run_iosim (&r, (const char *const[]) { "compare", sim, meas, "--cdf", cdf, NULL });
  g_assert_cmpint (r.status, ==, 0);
  check_cdf_file (cdf, sim, meas,
                  (const char *const[]) { "big-7", "mid-8", "one-9", "overall", NULL });
  tmp_dir_remove (dir);
}

static void
test_compare_plot (void)
{
  g_autofree char *gnuplot = g_find_program_in_path ("gnuplot");
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *meas = fixture ("cli-meas.csv");
  g_autofree char *dir = NULL;
  g_autofree char *png = NULL, *svg = NULL, *json = NULL;
  g_autofree char *data = NULL, *svg_text = NULL, *demerit = NULL, *pct = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(TestRun) r1 = { 0 };
  g_auto(TestRun) r2 = { 0 };
  JsonObject *overall;
  gsize len;

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  if (gnuplot == NULL)
    {
      g_test_skip ("gnuplot is not on PATH (Debian package gnuplot-nox); --plot not drawn");
      return;
    }
  dir = tmp_dir_new ();
  png = g_build_filename (dir, "cdf.png", NULL);
  svg = g_build_filename (dir, "cdf.svg", NULL);
  json = g_build_filename (dir, "cmp.json", NULL);
  run_iosim (&r1, (const char *const[]) { "compare", sim, meas, "--plot", png,
                                          "--json", json, NULL });
  g_assert_cmpstr (r1.err, ==, "");
  g_assert_cmpint (r1.status, ==, 0);
  g_assert_true (g_file_get_contents (png, &data, &len, NULL));
  g_assert_cmpuint (len, >, sizeof PNG_SIGNATURE);
  g_assert_cmpmem (data, sizeof PNG_SIGNATURE, PNG_SIGNATURE, sizeof PNG_SIGNATURE);

  /* The SVG is text: the title must carry the overall demerit. */
  run_iosim (&r2, (const char *const[]) { "compare", sim, meas, "--plot", svg, NULL });
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_true (g_file_get_contents (svg, &svg_text, NULL, NULL));
  g_assert_nonnull (strstr (svg_text, "<svg"));
  overall = json_object_get_object_member (load_json (parser, json), "overall");
  demerit = g_strdup_printf ("demerit %.3f ms",
                             json_object_get_double_member (overall, "demerit_ms"));
  pct = g_strdup_printf ("%.1f %%", json_object_get_double_member (overall, "demerit_pct"));
  g_assert_nonnull (strstr (svg_text, demerit));
  g_assert_nonnull (strstr (svg_text, pct));
  g_assert_nonnull (strstr (svg_text, "cli-meas.csv"));
  tmp_dir_remove (dir);
}

/* With no gnuplot on PATH only --plot fails: the table, --json and --cdf
 * are still written, and the message says what to do. */
static void
test_compare_plot_no_gnuplot (void)
{
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *meas = fixture ("cli-meas.csv");
  g_autofree char *dir = NULL;
  g_autofree char *bin = NULL, *png = NULL, *cdf = NULL, *json = NULL;
  g_auto(GStrv) env = NULL;
  g_auto(TestRun) r = { 0 };

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  dir = tmp_dir_new ();
  bin = g_build_filename (dir, "empty-bin", NULL);
  png = g_build_filename (dir, "cdf.png", NULL);
  cdf = g_build_filename (dir, "cdf.csv", NULL);
  json = g_build_filename (dir, "cmp.json", NULL);
  g_assert_cmpint (g_mkdir (bin, 0700), ==, 0);
  env = g_environ_setenv (g_get_environ (), "PATH", bin, TRUE);
  run_iosim_env (&r, env, (const char *const[]) { "compare", sim, meas, "--plot", png,
                                                  "--cdf", cdf, "--json", json, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "gnuplot not found: install gnuplot-nox, "
                                   "or use --cdf and plot it yourself"));
  g_assert_nonnull (strstr (r.out, "\ndd-1 "));
  g_assert_nonnull (strstr (r.out, "\noverall "));
  g_assert_true (g_file_test (json, G_FILE_TEST_IS_REGULAR));
  check_cdf_file (cdf, sim, meas, (const char *const[]) { "dd-1", "overall", NULL });
  g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
  tmp_dir_remove (dir);
}

/* A plot name that is neither .png nor .svg is a usage error found before
 * any work. */
static void
test_compare_plot_bad_name (void)
{
  g_autofree char *sim = fixture ("cli-sim.csv");
  g_autofree char *meas = fixture ("cli-meas.csv");
  g_auto(TestRun) r = { 0 };

  if (test_iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  run_iosim (&r, (const char *const[]) { "compare", sim, meas, "--plot", "cdf.jpg", NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "cdf.jpg: a plot file name must end in .png or .svg"));
  g_assert_cmpstr (r.out, ==, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cli/compare/fixtures", test_compare_fixtures);
  g_test_add_func ("/cli/compare/errors", test_compare_errors);
  g_test_add_func ("/cli/compare/latency-kinds", test_compare_latency_kinds);
  g_test_add_func ("/cli/compare/cdf", test_compare_cdf);
  g_test_add_func ("/cli/compare/cdf-large", test_compare_cdf_large);
  g_test_add_func ("/cli/compare/plot", test_compare_plot);
  g_test_add_func ("/cli/compare/plot-no-gnuplot", test_compare_plot_no_gnuplot);
  g_test_add_func ("/cli/compare/plot-bad-name", test_compare_plot_bad_name);
  g_test_add_func ("/cli/fit/blkparse", test_fit_blkparse);
  return g_test_run ();
}
