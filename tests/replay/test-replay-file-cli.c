/* test-replay-file-cli.c — `iosim replay --target FILE` through the binary
 * ($IOSIM_BIN) with a trace that records completions (the committed
 * sample tests/data/valid-blk-loop-none-6.18.ftrace, 5 reads
 * and 2 writes): the options that act on a
 * block device's queue are refused for a file, --target-size is refused
 * with --map, a dry run creates nothing and says what it would create,
 * and a run reports the trace's latency beside the replay's (text and
 * JSON) with the hole-read warning on stderr and in the JSON. */
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "iosim-run.h"

typedef struct {
  const char *name;
  const char *extra[4];      /* more arguments, NULL-terminated */
  const char *says;          /* on stderr */
} Refusal;

static const Refusal refusals[] = {
  { "sched", { "--sched", "none", NULL }, "is a regular file: --sched" },
  { "capture", { "--capture", "cap.txt", NULL }, "act on a block device's queue" },
  { "read-ahead", { "--read-ahead-kb", "128", NULL }, "is a regular file" },
  { "target-size-zero", { "--target-size", "0", NULL }, "--target-size takes a positive size" },
};

static char *
sample_path (void)
{
  return g_test_build_filename (G_TEST_DIST, "data", "valid-blk-loop-none-6.18.ftrace", NULL);
}

static void
test_refused (gconstpointer data)
{
  const Refusal *c = data;
  g_autofree char *sample = sample_path ();
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-filecli-XXXXXX", &error);
  g_autofree char *target = g_build_filename (dir, "target.img", NULL);
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  Run r = { 0 };

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (target, "", 0, NULL));
  g_ptr_array_add (args, "replay");
  g_ptr_array_add (args, sample);
  g_ptr_array_add (args, "--target");
  g_ptr_array_add (args, target);
  g_ptr_array_add (args, "--reads-only");
  for (guint i = 0; c->extra[i]; i++)
    g_ptr_array_add (args, (gpointer) c->extra[i]);
  g_ptr_array_add (args, NULL);
  run_iosim (&r, (const char *const *) args->pdata);
  g_assert_true (WIFEXITED (r.status));
  g_assert_cmpint (WEXITSTATUS (r.status), ==, 2);
  g_assert_nonnull (strstr (r.err, c->says));
  run_clear (&r);
  g_unlink (target);
  g_rmdir (dir);
}

static void
test_target_size_with_map (void)
{
  g_autofree char *sample = sample_path ();
  Run r = { 0 };

  run_iosim (&r, (const char *const[]) { "replay", sample, "--map", "7,0=/nonexistent.img",
                                         "--target-size", "1MiB", "--reads-only", NULL });
  g_assert_true (WIFEXITED (r.status));
  g_assert_cmpint (WEXITSTATUS (r.status), ==, 2);
  g_assert_nonnull (strstr (r.err, "--target-size sizes the one --target FILE"));
  run_clear (&r);
}

static void
test_dry_run_and_run (void)
{
  g_autofree char *sample = sample_path ();
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-filecli-XXXXXX", &error);
  g_autofree char *target = g_build_filename (dir, "target.img", NULL);
  g_autofree char *json = g_build_filename (dir, "replay.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *root, *tl;
  JsonArray *warnings;
  Run dry = { 0 }, run = { 0 };

  g_assert_no_error (error);
  run_iosim (&dry, (const char *const[]) { "replay", sample, "--target", target,
                                           "--target-size", "64MiB", "--reads-only", "--dry-run",
                                           NULL });
  g_assert_true (g_spawn_check_wait_status (dry.status, NULL));
  g_assert_nonnull (strstr (dry.out, "regular file on"));
  g_assert_nonnull (strstr (dry.out, "to be created with 67108864 bytes"));
  g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));

  run_iosim (&run, (const char *const[]) { "replay", sample, "--target", target,
                                           "--target-size", "64MiB", "--reads-only",
                                           "--json", json, NULL });
  if (!g_spawn_check_wait_status (run.status, NULL))
    g_error ("iosim replay failed:\n%s%s", run.out, run.err);
  /* The sample's reads (its writes skipped) with their traced Q2C. */
  g_assert_nonnull (strstr (run.out, "as traced (Q2C, 5 I/Os)"));
  g_assert_null (strstr (run.out, "not recorded"));
  g_assert_nonnull (strstr (run.err, "warning: "));
  g_assert_nonnull (strstr (run.err, "5 of the 5 reads start in a hole"));

  json_parser_load_from_file (parser, json, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "target_kind"), ==, "file");
  g_assert_cmpint (json_object_get_int_member (root, "ios"), ==, 5);
  g_assert_cmpint (json_object_get_int_member (root, "target_size_bytes"), ==, 64 << 20);
  tl = json_object_get_object_member (root, "trace_latency");
  g_assert_true (json_object_get_boolean_member (tl, "recorded"));
  g_assert_cmpint (json_object_get_int_member (tl, "recorded_ios"), ==, 5);
  g_assert_cmpint (json_object_get_int_member (tl, "not_recorded_ios"), ==, 0);
  g_assert_cmpfloat (json_object_get_double_member (tl, "mean_ns"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (tl, "replayed_to_trace"), >, 0);
  warnings = json_object_get_array_member (root, "warnings");
  g_assert_cmpuint (json_array_get_length (warnings), >=, 1);

  run_clear (&dry);
  run_clear (&run);
  g_unlink (json);
  g_unlink (target);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (refusals); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/file-cli/refused/%s", refusals[i].name);
      g_test_add_data_func (path, &refusals[i], test_refused);
    }
  g_test_add_func ("/replay/file-cli/target-size-with-map", test_target_size_with_map);
  g_test_add_func ("/replay/file-cli/dry-run-and-run", test_dry_run_and_run);
  return g_test_run ();
}
