/* test-bench-cli.c — `iosim bench` as a user runs it ($IOSIM_BIN): each
 * workload simulates the requests asked for (8 processes, a multiple of 8)
 * and reports them in text and JSON; the trace workload leaves nothing in
 * TMPDIR; bad arguments exit 2 saying why. */
#include <string.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tests/test-tree.h"

typedef struct {
  const char *name;
  const char *args[8];
  int         status;
  const char *out_text;    /* in stdout, or NULL */
  const char *err_text;    /* in stderr, or NULL */
} BenchCase;

static const BenchCase cases[] = {
  { "direct-read", { "-n", "160", NULL }, 0, "direct-read    160 requests", NULL },
  { "buffered-write", { "-w", "buffered-write", "-n", "160", NULL }, 0,
    "buffered-write 160 requests", NULL },
  { "host", { "-w", "host", "-n", "160", NULL }, 0, "host           160 requests", NULL },
  { "trace", { "-w", "trace", "-n", "160", NULL }, 0, "trace          160 requests", NULL },
  { "all", { "-w", "all", "-n", "160", NULL }, 0, "x direct-read's speed", NULL },
  { "unknown-workload", { "-w", "buffered", NULL }, 2, NULL, "unknown workload 'buffered'" },
  { "all-scheds-with-workload", { "--all", "-w", "host", NULL }, 2, NULL,
    "--all measures direct-read" },
  { "too-few", { "-n", "7", NULL }, 2, NULL, "--requests must be >= 8" },
};

/* Run `iosim bench ARGS` with TMPDIR = @tmpdir. */
static void
run_bench (const char *const *args, const char *tmpdir, int *status, char **out, char **err)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) bin);
  g_ptr_array_add (argv, "bench");
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "TMPDIR", tmpdir, TRUE);
  g_autoptr (GError) error = NULL;
  int wait_status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  *status = WEXITSTATUS (wait_status);
}

static gboolean
dir_empty (const char *path)
{
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  return d != NULL && g_dir_read_name (d) == NULL;
}

static void
test_case (gconstpointer data)
{
  const BenchCase *c = data;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  g_autofree char *tmpdir = test_scratch_dir ("bench-cli");
  g_autofree char *out = NULL, *err = NULL;
  int status;
  run_bench (c->args, tmpdir, &status, &out, &err);
  if (status != c->status)
    g_error ("iosim bench exited %d, expected %d: %s", status, c->status, err);
  if (c->out_text)
    g_assert_nonnull (strstr (out, c->out_text));
  if (c->err_text)
    g_assert_nonnull (strstr (err, c->err_text));
  if (status == 0)
    {
      /* The last line is for scripts. */
      g_auto (GStrv) lines = g_strsplit (g_strchomp (out), "\n", -1);
      const char *last = lines[g_strv_length (lines) - 1];
      g_assert_true (g_str_has_prefix (last, "simulated_requests_per_s: "));
      g_assert_cmpfloat (g_ascii_strtod (last + strlen ("simulated_requests_per_s: "), NULL), >, 0);
    }
  g_assert_true (dir_empty (tmpdir));
  g_rmdir (tmpdir);
}

/* --json -: every workload in order, each with the requests asked for,
 * and the speeds relative to direct-read's. */
static void
test_json (void)
{
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  static const char *const args[] = { "-w", "all", "-n", "800", "--json", "-", NULL };
  static const char *const names[] = { "direct-read", "buffered-write", "host", "trace" };
  g_autofree char *tmpdir = test_scratch_dir ("bench-cli-json");
  g_autofree char *out = NULL, *err = NULL;
  int status;
  run_bench (args, tmpdir, &status, &out, &err);
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "sched"), ==, "deadline");
  JsonArray *w = json_object_get_array_member (root, "workloads");
  g_assert_cmpuint (json_array_get_length (w), ==, G_N_ELEMENTS (names));
  double direct = 0;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      JsonObject *o = json_array_get_object_element (w, i);
      g_assert_cmpstr (json_object_get_string_member (o, "workload"), ==, names[i]);
      g_assert_cmpint (json_object_get_int_member (o, "requests"), ==, 800);
      g_assert_cmpint (json_object_get_int_member (o, "events"), >=, 800);
      g_assert_cmpfloat (json_object_get_double_member (o, "simulated_s"), >, 0);
      double rate = json_object_get_double_member (o, "requests_per_s");
      double wall = json_object_get_double_member (o, "wall_s");
      g_assert_cmpfloat_with_epsilon (rate * wall, 800, 1e-6 * 800);
      if (i == 0)
        direct = rate;
      g_assert_cmpfloat_with_epsilon (json_object_get_double_member (o, "ratio_to_direct_read"),
                                      rate / direct, 1e-9);
    }
  g_assert_true (dir_empty (tmpdir));
  g_rmdir (tmpdir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/bench-cli/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  g_test_add_func ("/bench-cli/json", test_json);
  return g_test_run ();
}
