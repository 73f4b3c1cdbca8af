/* test-replay-iolog-cli.c — `iosim replay` of fio iologs onto a regular
 * file in a temporary directory, end to end through the binary
 * ($IOSIM_BIN): a file too small is refused naming the byte the trace
 * reaches and left as it was; with --target-size every I/O of the log is
 * replayed, at the log's times (version 2: the "wait" deadlines;
 * version 3: the timestamps, relative to the first I/O) in the log's
 * order, and the report says that the trace latency is not recorded.
 *
 * Needs trace_load_ios() to return I/Os without completions
 * (TraceIo.no_completion, the stream branch of issue 16); before that an
 * iolog gives no I/Os and this test fails on its first replay. */
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "traces/trace-results.h"

#include "iosim-run.h"

#define MS (G_GINT64_CONSTANT (1000000))
#define US (G_GINT64_CONSTANT (1000))

typedef struct {
  const char *name;
  const char *sample;          /* under tests/ */
  const char *reaches;         /* the byte the refusal names */
  gint64      intended_ns[8];  /* every replayed I/O's due time, in order */
  guint       n_ios;
  guint       reads, writes;
  guint       skipped_other;   /* trims and syncs */
} IologCase;

static const IologCase cases[] = {
  { "v2-waits", "replay/data/iolog-v2-waits.iolog", "135168",
    { 0, 0, 20 * MS, 20 * MS, 45 * MS }, 5, 4, 1, 0 },
  /* Two files (dev 0,0 and 0,1) onto the one target; the trim and the
   * datasync are not replayed; the I/Os are due at 358, 746 and 1016 us
   * of the log, so 0, 388 and 658 us of the replay. */
  { "v3-files", "data/valid-iolog-v3-files.iolog", "778240",
    { 0, 388 * US, 658 * US }, 3, 1, 2, 2 },
};

static void
test_iolog (gconstpointer data)
{
  const IologCase *c = data;
  g_autofree char *sample = g_test_build_filename (G_TEST_DIST, c->sample, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-iolog-XXXXXX", &error);
  g_autofree char *target = g_build_filename (dir, "target.img", NULL);
  g_autofree char *csv = g_build_filename (dir, "replay.csv", NULL);
  g_autofree char *json = g_build_filename (dir, "replay.json", NULL);
  g_autofree char *reaches = g_strdup_printf ("reaches byte %s", c->reaches);
  g_autoptr (TraceResults) results = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *root, *plan, *tl;
  Run small = { 0 }, full = { 0 };
  gchar zeros[4096] = { 0 };
  guint64 first_io_bytes;

  g_assert_no_error (error);
  /* A file of 4 KiB: too small; refused before it is touched. */
  g_assert_true (g_file_set_contents (target, zeros, sizeof zeros, NULL));
  run_iosim (&small, (const char *const[]) { "replay", sample, "--target", target,
                                             "--allow-write", NULL });
  g_assert_false (g_spawn_check_wait_status (small.status, NULL));
  g_assert_nonnull (strstr (small.err, reaches));
  g_assert_nonnull (strstr (small.err, "--target-size"));
  g_assert_cmpint (g_file_test (target, G_FILE_TEST_IS_REGULAR), ==, TRUE);
  {
    GStatBuf st;
    g_assert_cmpint (g_stat (target, &st), ==, 0);
    g_assert_cmpint (st.st_size, ==, sizeof zeros);
  }

  run_iosim (&full, (const char *const[]) { "replay", sample, "--target", target,
                                            "--target-size", "1MiB", "--allow-write",
                                            "--csv", csv, "--json", json, NULL });
  if (!g_spawn_check_wait_status (full.status, NULL))
    g_error ("iosim replay failed:\n%s%s", full.out, full.err);
  g_assert_nonnull (strstr (full.out, "trace latency not recorded"));

  json_parser_load_from_file (parser, json, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  plan = json_object_get_object_member (root, "plan");
  g_assert_cmpint (json_object_get_int_member (root, "ios"), ==, c->n_ios);
  g_assert_cmpint (json_object_get_int_member (root, "errors"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (plan, "reads"), ==, c->reads);
  g_assert_cmpint (json_object_get_int_member (plan, "writes"), ==, c->writes);
  g_assert_cmpint (json_object_get_int_member (plan, "skipped_other"), ==, c->skipped_other);
  g_assert_cmpint (json_object_get_int_member (plan, "no_completion"), ==, c->n_ios);
  g_assert_cmpint (json_object_get_int_member (plan, "span_ns"), ==,
                   c->intended_ns[c->n_ios - 1]);
  tl = json_object_get_object_member (root, "trace_latency");
  g_assert_false (json_object_get_boolean_member (tl, "recorded"));
  g_assert_cmpint (json_object_get_int_member (tl, "not_recorded_ios"), ==, c->n_ios);
  g_assert_cmpstr (json_object_get_string_member (root, "target_kind"), ==, "file");

  /* Every I/O, due when the log says, issued in the log's order: one
   * process, synchronous, so each after the previous completed. */
  results = trace_results_load (csv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (results), ==, c->n_ios);
  first_io_bytes = trace_results_get (results, 0)->bytes;
  g_assert_cmpuint (first_io_bytes, >, 0);
  for (guint i = 0; i < c->n_ios; i++)
    {
      const TraceResult *r = trace_results_get (results, i);

      g_assert_cmpint (r->intended_ns, ==, c->intended_ns[i]);
      g_assert_cmpint (r->issue_ns, >=, r->intended_ns);
      g_assert_cmpint (r->complete_ns, >=, r->issue_ns);
      g_assert_cmpint (r->error, ==, 0);
      if (i > 0)
        g_assert_cmpint (r->issue_ns, >=, trace_results_get (results, i - 1)->complete_ns);
    }

  run_clear (&small);
  run_clear (&full);
  g_unlink (csv);
  g_unlink (json);
  g_unlink (target);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/iolog-cli/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_iolog);
    }
  return g_test_run ();
}
