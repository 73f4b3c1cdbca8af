/* test-compare-fio.c — iosim compare with fio's JSON as the measured side
 * (replay_compare_summary_files, replay/replay-compare.h).
 *
 * /compare-fio/real runs fio 3.x here on a 1 MiB regular file in a
 * temporary folder (skips without fio) with numjobs=2, simulates the same
 * job file with iosim and checks that the two sides meet clone by clone
 * under the names job.0 and job.1, with fio's own counts; /compare-fio/cli
 * does the same with the iosim binary (README "fio jobs").  Nothing fio
 * writes is kept.  The other tests feed small hand-written JSON objects
 * (fio's field names) for the refusals. */
#include <math.h>
#include <sys/wait.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "models/scenario.h"
#include "replay/replay-compare.h"
#include "sim/sim-report.h"

typedef struct {
  char *dir;
} Tmp;

static void
tmp_setup (Tmp *t, gconstpointer data)
{
  (void) data;
  t->dir = g_dir_make_tmp ("iosim-compare-fio-XXXXXX", NULL);
  g_assert_nonnull (t->dir);
}

static void
tmp_teardown (Tmp *t, gconstpointer data)
{
  (void) data;
  g_autoptr (GDir) d = g_dir_open (t->dir, 0, NULL);
  for (const char *n; d && (n = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *p = g_build_filename (t->dir, n, NULL);
      g_assert_cmpint (g_remove (p), ==, 0);
    }
  g_assert_cmpint (g_rmdir (t->dir), ==, 0);
  g_free (t->dir);
}

static char *
tmp_write (const Tmp *t, const char *name, const char *text)
{
  char *path = g_build_filename (t->dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

/* iosim run JOB --device-model ssd-sata --json SIM, through the library. */
static char *
simulate (const Tmp *t, const char *job_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_fio (job_path, "ssd-sata", NULL, &error);
  g_assert_no_error (error);
  ScenarioOutputs outputs = { 0 };
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  g_ptr_array_add (runs, scenario_run (s, 0, &outputs, &error));
  g_assert_no_error (error);
  g_autofree char *json = sim_report_json (scenario_name (s), scenario_seed (s), runs);
  return tmp_write (t, "sim.json", json);
}

/* fio JOB --output-format=json --output=OUT, in the temporary folder. */
static char *
run_fio (const Tmp *t, const char *fio, const char *job_path)
{
  g_autofree char *out = g_build_filename (t->dir, "real.json", NULL);
  g_autofree char *output_arg = g_strconcat ("--output=", out, NULL);
  const char *argv[] = { fio, "--output-format=json", output_arg, job_path, NULL };
  g_autofree char *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_spawn_sync (t->dir, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("fio failed: %s", err);
  return g_steal_pointer (&out);
}

#define JOB_TEXT "[global]\nfilename=data\nsize=1m\nbs=4k\nrw=read\n[job]\nnumjobs=2\n"

static void
test_real (Tmp *t, gconstpointer data)
{
  (void) data;
  g_autofree char *fio = g_find_program_in_path ("fio");
  if (fio == NULL)
    {
      g_test_skip ("fio is not installed");
      return;
    }
  g_autofree char *job = tmp_write (t, "job.fio", JOB_TEXT);
  g_autofree char *real = run_fio (t, fio, job);
  g_autofree char *sim = simulate (t, job);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayCompareSummary) s = replay_compare_summary_files (sim, real, &error);

  g_assert_no_error (error);
  g_assert_true (replay_compare_file_is_json (sim));
  g_assert_true (replay_compare_file_is_json (real));
  g_assert_true (g_str_has_prefix (s->fio_version, "fio-"));
  g_assert_cmpuint (s->only_simulated->len, ==, 0);
  g_assert_cmpuint (s->only_measured->len, ==, 0);
  g_assert_cmpuint (s->processes->len, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      const ReplayCompareSummaryRow *r = g_ptr_array_index (s->processes, i);
      g_autofree char *name = g_strdup_printf ("job.%u", i);
      g_assert_cmpstr (r->name, ==, name);
      g_assert_cmpstr (r->op, ==, "read");
      /* Both sides read the whole 1 MiB in 4 KiB requests. */
      g_assert_cmpuint (r->meas.ios, ==, 256);
      g_assert_cmpuint (r->meas.bytes, ==, 1 << 20);
      g_assert_cmpuint (r->sim.ios, ==, 256);
      g_assert_cmpfloat (r->meas.mb_per_s, >, 0);
      g_assert_cmpfloat (r->meas.iops, >, 0);
      g_assert_cmpfloat (r->meas.mean_ms, >, 0);
      g_assert_cmpfloat (r->meas.p50_ms, <=, r->meas.p99_ms);
      g_assert_cmpfloat (r->meas.p99_ms, <=, r->meas.max_ms);
      g_assert_cmpfloat (fabs (r->throughput_error_pct
                               - (r->sim.mb_per_s - r->meas.mb_per_s) / r->meas.mb_per_s * 100),
                         <, 1e-9);
      g_assert_cmpfloat (fabs (r->p99_error_pct
                               - (r->sim.p99_ms - r->meas.p99_ms) / r->meas.p99_ms * 100),
                         <, 1e-9);
    }
  g_autofree char *json = replay_compare_summary_to_json (s);
  g_assert_nonnull (strstr (json, "\"name\" : \"job.1\""));

  /* group_reporting folds the clones into one entry: refused, saying why. */
  g_autofree char *grouped = tmp_write (t, "grouped.fio", JOB_TEXT "group_reporting\n");
  g_autofree char *real2 = run_fio (t, fio, grouped);
  g_autoptr (ReplayCompareSummary) s2 = replay_compare_summary_files (sim, real2, &error);
  g_assert_null (s2);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "group_reporting"));
}

/* The two commands of README "fio jobs" through the iosim binary, and the
 * refusal of a job file without a device model. */
static void
test_cli (Tmp *t, gconstpointer data)
{
  (void) data;
  const char *iosim = g_getenv ("IOSIM_BIN");
  g_autofree char *fio = g_find_program_in_path ("fio");
  if (iosim == NULL || !g_file_test (iosim, G_FILE_TEST_IS_EXECUTABLE) || fio == NULL)
    {
      g_test_skip (fio == NULL ? "fio is not installed"
                               : "IOSIM_BIN is not set or not built (run through meson test)");
      return;
    }
  g_autofree char *job = tmp_write (t, "job.fio", JOB_TEXT);
  g_autofree char *real = run_fio (t, fio, job);
  g_autofree char *sim = g_build_filename (t->dir, "sim.json", NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;

  const char *bare[] = { iosim, "run", job, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) bare, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, NULL));
  g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  g_assert_nonnull (strstr (err, "--device-model"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  const char *run[] = { iosim, "run", job, "--device-model", "ssd-sata", "--json", sim, "-q",
                        NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) run, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  const char *cmp[] = { iosim, "compare", sim, real, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) cmp, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, NULL));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("iosim compare failed: %s", err);
  g_assert_nonnull (strstr (out, "\njob.0 "));
  g_assert_nonnull (strstr (out, "\njob.1 "));
  g_assert_null (strstr (out, "only in"));
}

#define SIM_JSON(runs) "{\"scenario\": \"x\", \"runs\": [" runs "]}"
#define SIM_RUN(op) "{\"sched\": \"deadline\", \"processes\": [{\"name\": \"job\", \"op\": \"" op \
  "\", \"ios\": 10, \"bytes\": 40960, \"mb_per_s\": 2.0, \"iops\": 500.0, \"latency_ns\": " \
  "{\"mean\": 2000000.0, \"p50\": 2000000, \"p95\": 3000000, \"p99\": 4000000, \"max\": 5000000}}]}"
#define FIO_DIR(ios) "{\"io_bytes\": 40960, \"total_ios\": " ios ", \"bw_bytes\": 1000000, " \
  "\"iops\": 250.0, \"runtime\": 40, \"clat_ns\": {\"mean\": 1000000.0, \"max\": 4000000, " \
  "\"percentile\": {\"50.000000\": 1000000, \"95.000000\": 2000000, \"99.000000\": 2000000}}}"
#define FIO_JSON(r, w) "note: both iodepth >= 1 and synchronous I/O engine are selected\n" \
  "{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"job\", \"job options\": {}, " \
  "\"read\": " FIO_DIR (r) ", \"write\": " FIO_DIR (w) "}]}"

typedef struct {
  const char *path;
  const char *sim;
  const char *meas;
  const char *expect;    /* NULL: compares */
} SummaryCase;

static const SummaryCase summary_cases[] = {
  { "/compare-fio/json/read", SIM_JSON (SIM_RUN ("read")), FIO_JSON ("10", "0"), NULL },
  { "/compare-fio/json/swapped", FIO_JSON ("10", "0"), FIO_JSON ("10", "0"),
    "sim.json: this is fio's JSON: give iosim run --json first" },
  { "/compare-fio/json/two-runs", SIM_JSON (SIM_RUN ("read") "," SIM_RUN ("read")),
    FIO_JSON ("10", "0"), "sim.json: 2 runs" },
  { "/compare-fio/json/mixed", SIM_JSON (SIM_RUN ("read")), FIO_JSON ("10", "10"),
    "real.json: jobs[0] (job) did reads and writes" },
  { "/compare-fio/json/direction", SIM_JSON (SIM_RUN ("write")), FIO_JSON ("10", "0"),
    "real.json: jobs[0] (job): fio read, the simulated process writes" },
  { "/compare-fio/json/fio-error", SIM_JSON (SIM_RUN ("read")),
    "{\"jobs\": [{\"jobname\": \"job\", \"error\": 5, \"read\": " FIO_DIR ("0") ", "
    "\"write\": " FIO_DIR ("0") "}]}", "real.json: jobs[0] (job): fio reported error 5" },
  { "/compare-fio/json/not-fio", SIM_JSON (SIM_RUN ("read")), "{\"x\": 1}",
    "real.json: no \"jobs\"" },
  { "/compare-fio/json/broken", SIM_JSON (SIM_RUN ("read")), "{\"jobs\": [",
    "real.json: " },
};

static void
test_summary_case (Tmp *t, gconstpointer data)
{
  const SummaryCase *c = data;
  g_autofree char *sim = tmp_write (t, "sim.json", c->sim);
  g_autofree char *meas = tmp_write (t, "real.json", c->meas);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayCompareSummary) s = replay_compare_summary_files (sim, meas, &error);

  if (c->expect == NULL)
    {
      g_assert_no_error (error);
      g_assert_cmpuint (s->processes->len, ==, 1);
      const ReplayCompareSummaryRow *r = g_ptr_array_index (s->processes, 0);
      /* sim 2 MB/s against fio's 10^6 B/s; clat mean 2 ms against 1 ms. */
      g_assert_cmpfloat (fabs (r->throughput_error_pct - 100.0), <, 1e-9);
      g_assert_cmpfloat (fabs (r->iops_error_pct - 100.0), <, 1e-9);
      g_assert_cmpfloat (fabs (r->mean_error_pct - 100.0), <, 1e-9);
      g_assert_cmpfloat (fabs (r->p95_error_pct - 50.0), <, 1e-9);
      g_assert_cmpfloat (fabs (r->max_error_pct - 25.0), <, 1e-9);
      g_assert_cmpfloat (fabs (r->meas.span_s - 0.04), <, 1e-12);
      return;
    }
  g_assert_null (s);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_autofree char *prefix = g_build_filename (t->dir, c->expect, NULL);
  if (!g_str_has_prefix (error->message, prefix))
    g_error ("got '%s', expected it to start '%s'", error->message, prefix);
}

/* Truncations and byte changes of both sides: each comparison succeeds
 * or fails with an error naming the file; nothing crashes. */
static void
test_mutation_smoke (Tmp *t, gconstpointer data)
{
  (void) data;
  static const char replacements[] = "{}[]\":,0-9 ne";
  const char *const texts[] = { SIM_JSON (SIM_RUN ("read")), FIO_JSON ("10", "0") };
  g_autofree char *sim_path = g_build_filename (t->dir, "sim.json", NULL);
  g_autofree char *meas_path = g_build_filename (t->dir, "real.json", NULL);
  guint n_ok = 0, n_err = 0;

  for (guint side = 0; side < 2; side++)
    {
      gsize len = strlen (texts[side]);
      g_assert_true (g_file_set_contents (side ? sim_path : meas_path, texts[!side], -1, NULL));
      for (gsize i = 0; i < len; i++)
        for (guint r = 0; r <= sizeof replacements - 1; r++)
          {
            g_autofree char *m = r == sizeof replacements - 1 ? g_strndup (texts[side], i)
                                                               : g_strdup (texts[side]);
            g_autoptr (GError) error = NULL;
            if (r < sizeof replacements - 1)
              m[i] = replacements[r];
            /* No fsync: thousands of small files. */
            g_assert_true (g_file_set_contents_full (side ? meas_path : sim_path, m, -1,
                                                     G_FILE_SET_CONTENTS_NONE, 0644, NULL));
            g_autoptr (ReplayCompareSummary) s = replay_compare_summary_files (sim_path,
                                                                               meas_path, &error);
            if (s != NULL)
              {
                n_ok++;
                continue;
              }
            n_err++;
            if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA)
                || !(g_str_has_prefix (error->message, sim_path)
                     || g_str_has_prefix (error->message, meas_path)))
              g_error ("unlocated error: %s", error->message);
          }
    }
  g_test_message ("%u mutants compared, %u refused", n_ok, n_err);
  g_assert_cmpuint (n_ok, >, 100);
  g_assert_cmpuint (n_err, >, 100);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/compare-fio/real", Tmp, NULL, tmp_setup, test_real, tmp_teardown);
  g_test_add ("/compare-fio/cli", Tmp, NULL, tmp_setup, test_cli, tmp_teardown);
  g_test_add ("/compare-fio/mutation-smoke", Tmp, NULL, tmp_setup, test_mutation_smoke,
              tmp_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (summary_cases); i++)
    g_test_add (summary_cases[i].path, Tmp, &summary_cases[i], tmp_setup, test_summary_case,
                tmp_teardown);
  return g_test_run ();
}
