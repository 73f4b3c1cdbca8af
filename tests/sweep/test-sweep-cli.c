/* test-sweep-cli.c — `iosim sweep` as a user runs it ($IOSIM_BIN) on
 * tests/sweep/tiny.ini (half a second of simulated time: a random reader
 * and a streaming writer on a small disk), 2 x 3 points x 2 seeds:
 * shards merged equal a local run byte for byte; an interrupted sweep
 * resumes running only what is missing and ends with the same files; the
 * same sweep twice, and with -j 1 and -j 2, gives the same files; seeds
 * differ per point and replicate; errors name what is wrong. */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

#include "tests/test-tree.h"
#include "tests/test-run.h"

/* iosim sweep with the test's sweep (tiny.ini, its --vary and --seeds),
 * then @extra (NULL-terminated; the first may be "merge" for the merge
 * subcommand alone). */
static void
run_sweep (TestRun *r, const char *const *extra)
{
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) test_iosim_bin ());
  g_ptr_array_add (argv, "sweep");
  if (strcmp (extra[0], "merge") != 0)
    {
      g_ptr_array_add (argv, scenario);
      g_ptr_array_add (argv, "--vary");
      g_ptr_array_add (argv, "sched deadline.fifo_batch=1,16");
      g_ptr_array_add (argv, "--vary");
      g_ptr_array_add (argv, "sched deadline.read_expire=10ms,100ms,500ms");
      g_ptr_array_add (argv, "--no-plots");
    }
  for (const char *const *a = extra; *a; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  test_run_argv (r, NULL, (const char *const *) argv->pdata);
}

#define SWEEP_OK(...) do {                                                 \
    const char *const args_[] = { __VA_ARGS__, NULL };                     \
    g_auto (TestRun) r_ = { 0 };                                               \
    run_sweep (&r_, args_);                                                \
    if (r_.status != 0)                                                    \
      g_printerr ("%s", r_.err);                                           \
    g_assert_cmpint (r_.status, ==, 0);                                    \
    /* No progress line when stderr is not a terminal. */                 \
    g_assert_cmpstr (r_.err, ==, "");                                      \
  } while (0)

static const char *const final_files[] = {
  "results.csv", "summary.csv", "results.json", "summary.json", "manifest.json",
};

static void
assert_same_files (const char *a, const char *b)
{
  for (gsize i = 0; i < G_N_ELEMENTS (final_files); i++)
    {
      g_autofree char *pa = g_build_filename (a, final_files[i], NULL);
      g_autofree char *pb = g_build_filename (b, final_files[i], NULL);
      g_autofree char *ta = NULL, *tb = NULL;
      gsize la, lb;
      g_assert_true (g_file_get_contents (pa, &ta, &la, NULL));
      g_assert_true (g_file_get_contents (pb, &tb, &lb, NULL));
      if (la != lb || memcmp (ta, tb, la) != 0)
        g_error ("%s and %s differ", pa, pb);
    }
}

/* Run each command of the NULL-terminated @cmds in turn; each must exit
 * with status 0. */
static void
run_all_ok (const char *const *const *cmds)
{
  for (gsize c = 0; cmds[c] != NULL; c++)
    {
      g_auto (TestRun) r = { 0 };
      test_run_argv (&r, NULL, cmds[c]);
      if (r.status != 0)
        g_error ("%s %s exited with %d: %s", cmds[c][0], cmds[c][1], r.status, r.err);
    }
}

static gboolean
skip_without_bin (void)
{
  if (test_iosim_bin () != NULL)
    return FALSE;
  g_test_skip ("IOSIM_BIN is not set to the built iosim");
  return TRUE;
}

/* A local run of the sweep (2 seeds, -j 2) into @tmp/local, once per test
 * program. */
static const char *
local_dir (const char *tmp)
{
  static char *dir;
  if (dir == NULL)
    {
      dir = g_build_filename (tmp, "local", NULL);
      SWEEP_OK ("--seeds", "2", "-j", "2", "-o", dir);
    }
  return dir;
}

static char *scratch;

/* The output directory of case @n of the tests named @what. */
static char *
case_dir (const char *what, guint n)
{
  g_autofree char *name = g_strdup_printf ("%s-%u", what, n);
  return g_build_filename (scratch, name, NULL);
}

static void
test_shards_merge (gconstpointer data)
{
  guint n = GPOINTER_TO_UINT (data);
  if (skip_without_bin ())
    return;
  const char *local = local_dir (scratch);
  g_autofree char *parts = case_dir ("shards", n);
  g_autofree char *merged = g_strconcat (parts, "-merged", NULL);
  /* Shards run in reverse order: the merge sorts. */
  for (guint i = n; i >= 1; i--)
    {
      g_autofree char *shard = g_strdup_printf ("%u/%u", i, n);
      SWEEP_OK ("--seeds", "2", "-j", "1", "--shard", shard, "-o", parts);
    }
  SWEEP_OK ("merge", parts, "-o", merged, "--no-plots");
  assert_same_files (local, merged);
  /* A shard writes only its own files, no final ones. */
  g_autofree char *stray = g_build_filename (parts, "results.csv", NULL);
  g_assert_false (g_file_test (stray, G_FILE_TEST_EXISTS));
}

/* "points: P, seeds: S, skipped (already complete): K, run: R" */
static void
parse_counts (const char *out, guint *skipped, guint *run)
{
  const char *s = strstr (out, "skipped (already complete): ");
  const char *r = strstr (out, ", run: ");
  g_assert_nonnull (s);
  g_assert_nonnull (r);
  *skipped = (guint) atoi (s + strlen ("skipped (already complete): "));
  *run = (guint) atoi (r + strlen (", run: "));
}

/* Run the sweep with @args: it exits with @status, having skipped
 * @skipped finished points and run @ran; @err_has: text its stderr must
 * hold, or NULL. */
static void
run_counted (const char *const *args, int status, guint skipped, guint ran, const char *err_has)
{
  g_auto (TestRun) r = { 0 };
  guint got_skipped, got_ran;
  run_sweep (&r, args);
  g_assert_cmpint (r.status, ==, status);
  if (err_has != NULL)
    g_assert_nonnull (strstr (r.err, err_has));
  parse_counts (r.out, &got_skipped, &got_ran);
  g_assert_cmpuint (got_skipped, ==, skipped);
  g_assert_cmpuint (got_ran, ==, ran);
}

static void
test_resume (gconstpointer data)
{
  guint k = GPOINTER_TO_UINT (data);
  if (skip_without_bin ())
    return;
  const char *local = local_dir (scratch);
  g_autofree char *dir = case_dir ("resume", k);
  g_autofree char *max = g_strdup_printf ("%u", k);
  {
    const char *const args[] = { "--seeds", "2", "-j", "2", "--max-points", max, "-o", dir, NULL };
    run_counted (args, 3, 0, k, "run the same command again");
  }
  /* An interruption in the middle of writing a point: the store ends in
   * half a line of a point without its #done line, and that point runs
   * again. */
  g_autofree char *store = g_build_filename (dir, ".rows.csv", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (store, &text, NULL, NULL));
  g_autoptr (GString) cut = g_string_new (text);
  g_autofree char *local_store = g_build_filename (local, ".rows.csv", NULL);
  g_autofree char *local_text = NULL;
  g_assert_true (g_file_get_contents (local_store, &local_text, NULL, NULL));
  const char *point5 = strstr (local_text, "\n5,0,");
  g_assert_nonnull (point5);
  const char *eol = strchr (point5 + 1, '\n');
  g_string_append_len (cut, point5 + 1, eol + 1 - (point5 + 1));
  g_string_append_len (cut, eol + 1, 9);
  g_assert_true (g_file_set_contents (store, cut->str, -1, NULL));
  {
    const char *const args[] = { "--seeds", "2", "-j", "2", "-o", dir, NULL };
    run_counted (args, 0, k, 6 - k, NULL);
  }
  assert_same_files (local, dir);
  /* Everything done: a re-run runs nothing and rewrites the same files. */
  {
    const char *const args[] = { "--seeds", "2", "-o", dir, NULL };
    run_counted (args, 0, 6, 0, NULL);
  }
  assert_same_files (local, dir);
}

/* The same sweep twice, and with -j 1 against -j 2: the same files. */
static void
test_determinism (void)
{
  if (skip_without_bin ())
    return;
  const char *local = local_dir (scratch);
  g_autofree char *j1 = g_build_filename (scratch, "j1", NULL);
  g_autofree char *j2 = g_build_filename (scratch, "j2", NULL);
  SWEEP_OK ("--seeds", "2", "-j", "1", "-o", j1);
  SWEEP_OK ("--seeds", "2", "-j", "2", "-o", j2);
  assert_same_files (local, j1);
  assert_same_files (local, j2);
}

static JsonArray *
load_rows (JsonParser *parser, const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "results.json", NULL);
  g_autoptr (GError) error = NULL;
  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  return json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "rows");
}

/* Seeds differ per point and replicate, and so do the figures of the
 * random reader: replicates are not copies of one run. */
static void
test_seeds_differ (void)
{
  if (skip_without_bin ())
    return;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *rows = load_rows (parser, local_dir (scratch));
  g_assert_cmpuint (json_array_get_length (rows), ==, 6 * 2);
  g_autoptr (GArray) seeds = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint differ = 0;
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);
      gint64 seed = json_object_get_int_member (row, "seed");
      for (guint k = 0; k < seeds->len; k++)
        g_assert_cmpint (g_array_index (seeds, gint64, k), !=, seed);
      g_array_append_val (seeds, seed);
      g_assert_cmpuint (json_object_get_int_member (row, "replicate"), ==, i % 2);
      if (i % 2 == 0)
        continue;
      JsonObject *a = json_object_get_object_member (json_array_get_object_element (rows, i - 1),
                                                     "figures");
      JsonObject *b = json_object_get_object_member (row, "figures");
      if (json_object_get_double_member (a, "process.reader.lat_mean_ms")
          != json_object_get_double_member (b, "process.reader.lat_mean_ms"))
        differ++;
    }
  g_assert_cmpuint (differ, >, 0);
}

/* Several runs per point (a device listing two elevators at one point, an
 * escaped comma) and the 'run' column; shards of it merge the same. */
static void
test_runs_column (void)
{
  if (skip_without_bin ())
    return;
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
  g_autofree char *dir = g_build_filename (scratch, "runs", NULL);
  g_autofree char *parts = g_build_filename (scratch, "runs-parts", NULL);
  g_autofree char *merged = g_build_filename (scratch, "runs-merged", NULL);
  const char *vary = "device hda.sched=noop\\,deadline,deadline";
  const char *bin = test_iosim_bin ();
  const char *local[] = { bin, "sweep", scenario, "--vary", vary, "--seeds", "2", "--no-plots",
                          "-o", dir, NULL };
  const char *s1[] = { bin, "sweep", scenario, "--vary", vary, "--seeds", "2", "--shard", "1/2",
                       "-o", parts, NULL };
  const char *s2[] = { bin, "sweep", scenario, "--vary", vary, "--seeds", "2", "--shard", "2/2",
                       "-o", parts, NULL };
  const char *merge[] = { bin, "sweep", "merge", parts, "-o", merged, "--no-plots", NULL };
  run_all_ok ((const char *const *const[]) { local, s1, s2, merge, NULL });
  assert_same_files (dir, merged);
  g_autofree char *csv_path = g_build_filename (dir, "summary.csv", NULL);
  g_autofree char *csv = NULL;
  g_assert_true (g_file_get_contents (csv_path, &csv, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  /* header, point 0 noop, point 0 deadline, point 1 deadline, "" */
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  g_assert_true (g_str_has_prefix (lines[0], "point,device hda.sched,run,seeds,"));
  g_assert_true (g_str_has_prefix (lines[1], "0,\"noop,deadline\",noop,2,"));
  g_assert_true (g_str_has_prefix (lines[2], "0,\"noop,deadline\",deadline,2,"));
  g_assert_true (g_str_has_prefix (lines[3], "1,deadline,deadline,2,"));
}

/* With gnuplot: plots per key and, with two keys, heat maps per process,
 * the same drawn from a merge as from a local run. */
static void
test_plots (void)
{
  if (skip_without_bin ())
    return;
  g_autofree char *gnuplot = g_find_program_in_path ("gnuplot");
  if (gnuplot == NULL)
    {
      g_test_skip ("gnuplot is not on PATH");
      return;
    }
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
  g_autofree char *dir = g_build_filename (scratch, "plots", NULL);
  g_autofree char *parts = g_build_filename (scratch, "plots-parts", NULL);
  g_autofree char *merged = g_build_filename (scratch, "plots-merged", NULL);
  const char *bin = test_iosim_bin ();
  const char *v1 = "sched deadline.fifo_batch=1,16", *v2 = "sched deadline.read_expire=10ms,500ms";
  const char *local[] = { bin, "sweep", scenario, "--vary", v1, "--vary", v2, "--seeds", "2",
                          "-o", dir, NULL };
  const char *s1[] = { bin, "sweep", scenario, "--vary", v1, "--vary", v2, "--seeds", "2",
                       "--shard", "1/2", "-o", parts, NULL };
  const char *s2[] = { bin, "sweep", scenario, "--vary", v1, "--vary", v2, "--seeds", "2",
                       "--shard", "2/2", "-o", parts, NULL };
  const char *merge[] = { bin, "sweep", "merge", parts, "-o", merged, NULL };
  run_all_ok ((const char *const *const[]) { local, s1, s2, merge, NULL });
  static const char *const pngs[] = {
    "plot-sched_deadline.fifo_batch.png", "plot-sched_deadline.read_expire.png",
    "heatmap-reader.png", "heatmap-writer.png",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (pngs); i++)
    {
      g_autofree char *a = g_build_filename (dir, pngs[i], NULL);
      g_autofree char *b = g_build_filename (merged, pngs[i], NULL);
      g_autofree char *ta = NULL, *tb = NULL;
      gsize la, lb;
      g_assert_true (g_file_get_contents (a, &ta, &la, NULL));
      g_assert_true (g_file_get_contents (b, &tb, &lb, NULL));
      g_assert_cmpuint (la, >, 8);
      g_assert_cmpmem (ta, 8, "\x89PNG\r\n\x1a\n", 8);
      g_assert_cmpmem (ta, la, tb, lb);
    }
}

/* ---- errors ------------------------------------------------------------- */

typedef struct {
  const char *name;
  const char *args[8];
  int         status;
  const char *message;
} ErrorCase;

static const ErrorCase error_cases[] = {
  { "vary-syntax", { "--vary", "fifo_batch=1,2", "-o", "@" }, 2, "expected GROUP.KEY=V1,V2" },
  { "vary-seed", { "--vary", "sim.seed=1,2", "-o", "@" }, 2, "give --seeds N" },
  { "vary-empty", { "--vary", "sim.duration=1s,,2s", "-o", "@" }, 2, "empty value" },
  { "unknown-key", { "--vary", "sched deadline.fifo_batches=1,2", "-o", "@" }, 1,
    "no tunable 'fifo_batches'" },
  { "unknown-group", { "--vary", "device hdz.sched=noop", "-o", "@" }, 1, "no device 'hdz'" },
  { "bad-value", { "--vary", "sched deadline.fifo_batch=4,many", "-o", "@" }, 1,
    "point 1 (sched deadline.fifo_batch=many)" },
  { "shard-zero", { "--shard", "0/2", "-o", "@" }, 2, "--shard '0/2': expected I/N" },
  { "shard-over", { "--shard", "3/2", "-o", "@" }, 2, "--shard '3/2': expected I/N" },
  { "seeds-zero", { "--seeds", "0", "-o", "@" }, 2, "--seeds must be at least 1" },
  { "no-output", { "--seeds", "2" }, 2, "-o DIR" },
};

static void
test_error (gconstpointer data)
{
  const ErrorCase *c = data;
  if (skip_without_bin ())
    return;
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
  g_autofree char *dir = g_build_filename (scratch, c->name, NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) test_iosim_bin ());
  g_ptr_array_add (argv, "sweep");
  g_ptr_array_add (argv, scenario);
  for (guint i = 0; c->args[i]; i++)
    g_ptr_array_add (argv, strcmp (c->args[i], "@") == 0 ? dir : (gpointer) c->args[i]);
  g_ptr_array_add (argv, NULL);
  g_auto (TestRun) r = { 0 };
  test_run_argv (&r, NULL, (const char *const *) argv->pdata);
  g_assert_cmpint (r.status, ==, c->status);
  if (strstr (r.err, c->message) == NULL)
    g_error ("stderr '%s' lacks '%s'", r.err, c->message);
}

static void
expect_merge_error (const char *parts, const char *message)
{
  g_autofree char *out = g_strconcat (parts, "-out", NULL);
  const char *const args[] = { "merge", parts, "-o", out, "--no-plots", NULL };
  g_auto (TestRun) r = { 0 };
  run_sweep (&r, args);
  g_assert_cmpint (r.status, ==, 1);
  if (strstr (r.err, message) == NULL)
    g_error ("stderr '%s' lacks '%s'", r.err, message);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_merge_errors (void)
{
  if (skip_without_bin ())
    return;
  g_autofree char *missing = g_build_filename (scratch, "merge-missing", NULL);
  SWEEP_OK ("--seeds", "1", "--shard", "1/4", "-o", missing);
  SWEEP_OK ("--seeds", "1", "--shard", "3/4", "-o", missing);
  expect_merge_error (missing, "shards 2, 4 of 4 missing");

  g_autofree char *unfinished = g_build_filename (scratch, "merge-unfinished", NULL);
  SWEEP_OK ("--seeds", "1", "--shard", "1/2", "-o", unfinished);
  {
    const char *const args[] = { "--seeds", "1", "--shard", "2/2", "--max-points", "1", "-o",
                                 unfinished, NULL };
    g_auto (TestRun) r = { 0 };
    run_sweep (&r, args);
    g_assert_cmpint (r.status, ==, 3);
  }
  expect_merge_error (unfinished, "shard 2 of 2 not finished");

  g_autofree char *mixed = g_build_filename (scratch, "merge-mixed", NULL);
  SWEEP_OK ("--seeds", "1", "--shard", "1/2", "-o", mixed);
  SWEEP_OK ("--seeds", "2", "--shard", "2/2", "-o", mixed);
  expect_merge_error (mixed, "are not shards of one sweep (--seeds differ)");

  g_autofree char *counts = g_build_filename (scratch, "merge-counts", NULL);
  SWEEP_OK ("--seeds", "1", "--shard", "1/2", "-o", counts);
  SWEEP_OK ("--seeds", "1", "--shard", "2/3", "-o", counts);
  expect_merge_error (counts, "shard counts differ");

  g_autofree char *none = g_build_filename (scratch, "merge-none", NULL);
  g_assert_cmpint (g_mkdir (none, 0755), ==, 0);
  expect_merge_error (none, "no manifest-shard-I-of-N.json");

  /* OUT holding another sweep (the local run, 2 seeds): refused and left
   * as it was; with --force written over. */
  const char *local = local_dir (scratch);
  g_autofree char *local_manifest = g_build_filename (local, "manifest.json", NULL);
  g_autofree char *before = NULL, *after = NULL;
  g_assert_true (g_file_get_contents (local_manifest, &before, NULL, NULL));
  g_autofree char *one_seed = g_build_filename (scratch, "merge-one-seed", NULL);
  SWEEP_OK ("--seeds", "1", "--shard", "1/1", "-o", one_seed);
  {
    const char *const args[] = { "merge", one_seed, "-o", local, "--no-plots", NULL };
    g_auto (TestRun) r = { 0 };
    run_sweep (&r, args);
    g_assert_cmpint (r.status, ==, 1);
    g_assert_nonnull (strstr (r.err, "holds another sweep (--seeds differ)"));
  }
  g_assert_true (g_file_get_contents (local_manifest, &after, NULL, NULL));
  g_assert_cmpstr (before, ==, after);
  g_autofree char *forced = g_build_filename (scratch, "merge-forced", NULL);
  SWEEP_OK ("--seeds", "2", "-j", "1", "-o", forced);
  SWEEP_OK ("merge", one_seed, "-o", forced, "--no-plots", "--force");
  g_autofree char *forced_manifest = g_build_filename (forced, "manifest.json", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (forced_manifest, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"seeds\" : 1,"));
}

/* A re-run with other arguments into the same folder is refused, naming
 * what differs, unless --force. */
static void
test_other_sweep_refused (void)
{
  if (skip_without_bin ())
    return;
  g_autofree char *dir = g_build_filename (scratch, "refuse", NULL);
  SWEEP_OK ("--seeds", "1", "-o", dir);
  const char *const again[] = { "--seeds", "2", "--set", "sim.hz=250", "-o", dir, NULL };
  g_auto (TestRun) r = { 0 };
  run_sweep (&r, again);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "holds another sweep (--set, --seeds differ)"));
  g_assert_nonnull (strstr (r.err, "--force"));
  SWEEP_OK ("--seeds", "2", "--set", "sim.hz=250", "--force", "-o", dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  scratch = test_scratch_dir ("iosim-sweep");
  static const guint shard_counts[] = { 1, 2, 3, 8 };   /* 8 > 6 points: empty shards */
  for (gsize i = 0; i < G_N_ELEMENTS (shard_counts); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep-cli/shards-merge/%u", shard_counts[i]);
      g_test_add_data_func (name, GUINT_TO_POINTER (shard_counts[i]), test_shards_merge);
    }
  static const guint resume_after[] = { 1, 4 };
  for (gsize i = 0; i < G_N_ELEMENTS (resume_after); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep-cli/resume/%u", resume_after[i]);
      g_test_add_data_func (name, GUINT_TO_POINTER (resume_after[i]), test_resume);
    }
  g_test_add_func ("/sweep-cli/determinism", test_determinism);
  g_test_add_func ("/sweep-cli/seeds-differ", test_seeds_differ);
  g_test_add_func ("/sweep-cli/runs-column", test_runs_column);
  g_test_add_func ("/sweep-cli/plots", test_plots);
  for (gsize i = 0; i < G_N_ELEMENTS (error_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep-cli/error/%s", error_cases[i].name);
      g_test_add_data_func (name, &error_cases[i], test_error);
    }
  g_test_add_func ("/sweep-cli/merge-errors", test_merge_errors);
  g_test_add_func ("/sweep-cli/other-sweep-refused", test_other_sweep_refused);
  int status = g_test_run ();
  g_assert_true (test_remove_tree (scratch));
  g_free (scratch);
  return status;
}
