/* test-compare-cli.c — `iosim compare` and `iosim fit` as a user runs them
 * ($IOSIM_BIN): exit codes, the table, --json, and errors naming file and
 * line.  Fixtures: tests/compare/data/cli-*.csv; `fit` also reads a
 * blkparse trace this test writes, with noise-free service times. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

typedef struct {
  int   status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");

  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  return bin;
}

/* Run iosim with @args (NULL-terminated); exit status in r->status. */
static void
run_iosim (Run *r, const char *const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int wait_status;

  g_ptr_array_add (argv, (gpointer) iosim_bin ());
  for (const char *const *a = args; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT,
                               NULL, NULL, &r->out, &r->err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  r->status = WEXITSTATUS (wait_status);
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
  g_auto(Run) r = { 0 };
  JsonObject *root, *dd;
  JsonArray *procs;

  if (iosim_bin () == NULL)
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
  g_auto(Run) r1 = { 0 };
  g_auto(Run) r2 = { 0 };
  g_autofree char *where = NULL;

  if (iosim_bin () == NULL)
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
  g_auto(Run) run = { 0 };
  g_auto(Run) cmp = { 0 };
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
  g_auto(Run) r = { 0 };
  g_autofree char *overhead = NULL, *bandwidth = NULL, *sched = NULL;
  g_autofree char *capacity = NULL, *timing = NULL;
  JsonObject *read;

  if (iosim_bin () == NULL)
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
  overhead = g_key_file_get_string (kf, "device loop0", "overhead", &error);
  g_assert_no_error (error);
  bandwidth = g_key_file_get_string (kf, "device loop0", "bandwidth", &error);
  g_assert_no_error (error);
  /* Noise-free data: least squares is exact up to rounding. */
  g_assert_cmpstr (overhead, ==, "40.000us");
  g_assert_cmpstr (bandwidth, ==, "400.00MB/s");
  sched = g_key_file_get_string (kf, "device loop0", "sched", &error);
  g_assert_cmpstr (sched, ==, "deadline");
  capacity = g_key_file_get_string (kf, "device loop0", "capacity", &error);
  g_assert_cmpstr (capacity, ==, "128MiB");
  timing = g_key_file_get_string (kf, "process dd-4756", "timing", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (timing, ==, "closed");
  g_assert_false (g_key_file_has_key (kf, "device loop0", "write_overhead", NULL));

  read = json_object_get_object_member (
           json_object_get_object_member (load_json (parser, json), "device"), "read");
  g_assert_cmpint (json_object_get_int_member (read, "used"), ==, 60);

  /* The measured side: a header and one row per bio, Q2C of the first is
   * 2 us (Q to D) + 40 us + 4096 B at 2.5 ns/B = 52,240 ns. */
  g_assert_true (g_file_get_contents (measured, &csv, NULL, NULL));
  g_assert_true (g_str_has_prefix (csv, "process,pid,device,op,offset_bytes,bytes,"));
  g_assert_nonnull (strstr (csv, "\ndd-4756,4756,loop0,read,1048576,4096,0,0,52240,52240,0\n"));

  check_round_trip (ini, measured);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (read, "r2"), 1.0, 1e-9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cli/compare/fixtures", test_compare_fixtures);
  g_test_add_func ("/cli/compare/errors", test_compare_errors);
  g_test_add_func ("/cli/fit/blkparse", test_fit_blkparse);
  return g_test_run ();
}
