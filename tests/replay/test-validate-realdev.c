/* test-validate-realdev.c — one `iosim validate` end to end on a loop
 * device over a tmpfs file (attached with losetup --find --show, detached
 * afterwards): two dd readers, two schedulers, --repeat 2.  Asserts the
 * JSON's shape, that exactly the first scheduler is trained, that every
 * figure is present and positive on both sides (also when a captured
 * trace is replayed instead of a command run), and that the target's
 * scheduler afterwards is the one it had before (a starting scheduler
 * different from both validated ones is set first, and the device's own
 * is put back at the end).  The figures themselves are reported with
 * stderr (the test log), not judged: the fit is not accurate yet.  The
 * checks run in a subprocess, so that a failed assertion still leaves the
 * parent to detach the loop device and put its scheduler back.  Needs
 * root, losetup, a tmpfs /dev/shm and the blk tracer; skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <linux/magic.h>
#include <string.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay-capture.h"
#include "tests/replay/realdev-sched.h"

#define BACKING_BYTES (64 * 1024 * 1024)

typedef RealdevLoop Fixture;

static char *
skip_reason (void)
{
  struct statfs sfs;
  g_autofree char *losetup = g_find_program_in_path ("losetup");

  if (geteuid () != 0)
    return g_strdup ("needs root (loop devices, queue/scheduler, tracefs)");
  if (g_getenv ("IOSIM_BIN") == NULL)
    return g_strdup ("IOSIM_BIN not set (run through meson test)");
  if (losetup == NULL)
    return g_strdup ("no losetup on PATH");
  if (statfs ("/dev/shm", &sfs) != 0 || sfs.f_type != TMPFS_MAGIC)
    return g_strdup ("/dev/shm is not a tmpfs");
  return realdev_blk_tracer_missing ();
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *reason = skip_reason ();

  if (reason == NULL)
    reason = realdev_loop_attach (f, "iosim-validate-test", BACKING_BYTES);
  if (reason != NULL)
    g_test_skip (reason);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  realdev_loop_detach (f);
}

static double
member_number (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);

  g_assert_nonnull (n);
  g_assert_cmpint (json_node_get_value_type (n), ==, G_TYPE_DOUBLE);
  return json_node_get_double (n);
}

/* The figures of one side: present and positive; the interval of two
 * repeats exists and holds the mean. */
static void
check_side (JsonObject *sched, const char *side_name, gboolean with_ci)
{
  static const char *const figures[] = { "mb_per_s", "mean_latency_ns", "p50_latency_ns",
                                         "p95_latency_ns", "p99_latency_ns", "jain_index" };
  JsonObject *side = json_object_get_object_member (sched, side_name);
  JsonObject *ci;

  g_assert_nonnull (side);
  g_assert_cmpint (json_object_get_int_member (side, "runs"), ==, 2);
  ci = json_object_get_object_member (side, "ci95");
  g_assert_nonnull (ci);
  for (guint i = 0; i < G_N_ELEMENTS (figures); i++)
    {
      double v = member_number (side, figures[i]);

      g_assert_cmpfloat (v, >, 0);
      g_printerr ("# %s %s %s = %g\n", json_object_get_string_member (sched, "sched"), side_name,
                      figures[i], v);
      if (with_ci)
        {
          JsonArray *interval = json_object_get_array_member (ci, figures[i]);
          g_assert_nonnull (interval);
          g_assert_cmpuint (json_array_get_length (interval), ==, 2);
          g_assert_cmpfloat (json_array_get_double_element (interval, 0), <=, v);
          g_assert_cmpfloat (json_array_get_double_element (interval, 1), >=, v);
        }
    }
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (side, "processes")),
                    >=, 1);
}

static void
check_ranking (JsonObject *root, const char *name, const char *a, const char *b)
{
  JsonArray *r = json_object_get_array_member (root, name);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  g_assert_nonnull (r);
  g_assert_cmpuint (json_array_get_length (r), ==, 2);
  for (guint i = 0; i < 2; i++)
    g_ptr_array_add (names, (gpointer) json_array_get_string_element (r, i));
  g_assert_true ((g_strcmp0 (names->pdata[0], a) == 0 && g_strcmp0 (names->pdata[1], b) == 0)
                 || (g_strcmp0 (names->pdata[0], b) == 0 && g_strcmp0 (names->pdata[1], a) == 0));
  g_printerr ("# %s: %s, %s\n", name, (char *) names->pdata[0], (char *) names->pdata[1]);
}

static void
check_json (const char *path, const char *first, const char *second)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *root;
  JsonArray *scheds;

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  scheds = json_object_get_array_member (root, "schedulers");
  g_assert_nonnull (scheds);
  g_assert_cmpuint (json_array_get_length (scheds), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *s = json_array_get_object_element (scheds, i);

      g_assert_cmpstr (json_object_get_string_member (s, "sched"), ==, i == 0 ? first : second);
      /* Exactly the first is trained. */
      g_assert_cmpint (json_object_get_boolean_member (s, "trained"), ==, i == 0);
      check_side (s, "predicted", TRUE);
      check_side (s, "measured", TRUE);
      g_assert_cmpfloat (member_number (s, "demerit_ns"), >=, 0);
      g_printerr ("# %s demerit_ns = %g (%g %% of the measured mean)\n",
                      json_object_get_string_member (s, "sched"), member_number (s, "demerit_ns"),
                      member_number (s, "demerit_pct"));
      g_assert_nonnull (json_object_get_object_member (s, "change_from_trained"));
    }
  check_ranking (root, "ranking_predicted", first, second);
  check_ranking (root, "ranking_measured", first, second);
}

/* The first two of mq-deadline, none, bfq, kyber that the device offers;
 * the start: one it offers besides those (else the second validated, so
 * that the first one's setting still changes something). */
static gboolean
pick_scheds (const char *sched_file, const char **first, const char **second, const char **start)
{
  static const char *const order[] = { "mq-deadline", "none", "bfq", "kyber" };
  const char *chosen[4];
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    if (realdev_sched_available (sched_file, order[i]))
      chosen[n++] = order[i];
  if (n < 2)
    return FALSE;
  *first = chosen[0];
  *second = chosen[1];
  *start = n > 2 ? chosen[n - 1] : chosen[1];
  return TRUE;
}

static gboolean
tracefs_mounted (void)
{
  g_autofree char *dir = replay_tracefs_find (NULL, FALSE, NULL, NULL);

  return dir != NULL;
}

#define ENV_LOOP "IOSIM_TEST_VALIDATE_LOOP"
#define ENV_DIR "IOSIM_TEST_VALIDATE_DIR"

/* What a case's subprocess knows. */
typedef struct {
  const char *loop, *dir;
  char       *sched_file, *list, *skip;
  const char *first, *second, *start;   /* validated, validated, set before */
} Child;

typedef void (*ChildFunc) (Child *c);

/* TRUE (and the reason in DIR/skip) when validate failed because tracefs
 * or the device belongs to someone else now, or the kernel lacks the
 * tracer: nothing this test can judge. */
static gboolean
skip_if_not_ours (Child *c, int status, const char *err)
{
  g_autofree char *why = NULL;

  if (g_spawn_check_wait_status (status, NULL)
      || (strstr (err, "another iosim") == NULL && strstr (err, "tracer is in use") == NULL
          && strstr (err, "CONFIG_BLK_DEV_IO_TRACE") == NULL))
    return FALSE;
  why = g_strdup_printf ("tracefs or the device is not ours to use: %s", err);
  g_assert_true (g_file_set_contents (c->skip, why, -1, NULL));
  return TRUE;
}

/* Two dd readers, two schedulers, --repeat 2: the whole report. */
static void
child_end_to_end (Child *c)
{
  g_autofree char *work = g_build_filename (c->dir, "work", NULL);
  g_autofree char *json = g_build_filename (c->dir, "validate.json", NULL);
  g_autofree char *script = NULL, *out = NULL, *err = NULL;
  int status = -1;

  /* Two direct readers of 16 MiB in 128 KiB reads, 32 MiB apart. */
  script = g_strdup_printf ("dd if=%s of=/dev/null bs=128k count=128 iflag=direct 2>/dev/null & "
                            "dd if=%s of=/dev/null bs=128k count=128 skip=256 iflag=direct "
                            "2>/dev/null; wait", c->loop, c->loop);
  {
    const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", c->loop,
                           "--sched", c->list, "--repeat", "2", "--json", json, "--work-dir", work,
                           "--", "sh", "-c", script, NULL };
    g_assert_true (realdev_run (argv, &out, &err, &status));
  }
  g_printerr ("# iosim validate's stderr:\n%s\n# its table:\n%s", err, out);
  if (skip_if_not_ours (c, status, err))
    return;
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "ranking by mean latency"));
  check_json (json, c->first, c->second);
}

/* A trace instead of a command: captured here from two dd readers, then
 * replayed (reads only) under each scheduler with a capture running. */
static void
child_trace (Child *c)
{
  g_autofree char *trace = g_build_filename (c->dir, "trace.txt", NULL);
  g_autofree char *json = g_build_filename (c->dir, "validate.json", NULL);
  g_autofree char *script = NULL, *out = NULL, *err = NULL;
  int status = -1;

  script = g_strdup_printf ("dd if=%s of=/dev/null bs=64k count=256 iflag=direct 2>/dev/null & "
                            "dd if=%s of=/dev/null bs=4k count=1000 skip=8192 iflag=direct "
                            "2>/dev/null; wait", c->loop, c->loop);
  {
    const char *argv[] = { g_getenv ("IOSIM_BIN"), "capture", "--device", c->loop, "-o", trace,
                           "--", "sh", "-c", script, NULL };
    g_assert_true (realdev_run (argv, &out, &err, &status));
    if (skip_if_not_ours (c, status, err))
      return;
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", c->loop, "--sched",
                           c->list, "--repeat", "2", "--json", json, trace, NULL };
    g_assert_true (realdev_run (argv, &out, &err, &status));
  }
  g_printerr ("# iosim validate's stderr:\n%s\n# its table:\n%s", err, out);
  if (skip_if_not_ours (c, status, err))
    return;
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  check_json (json, c->first, c->second);
}

/* A command that fails: an error naming its status, nothing reported. */
static void
child_failing_command (Child *c)
{
  g_autofree char *json = g_build_filename (c->dir, "validate.json", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", c->loop, "--sched",
                         c->list, "--repeat", "1", "--json", json, "--", "sh", "-c", "exit 3",
                         NULL };
  int status = -1;

  g_assert_true (realdev_run (argv, &out, &err, &status));
  g_printerr ("# iosim validate's stderr:\n%s", err);
  if (skip_if_not_ours (c, status, err))
    return;
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 1);
  g_assert_nonnull (strstr (err, "exited with status 3"));
  g_assert_false (g_file_test (json, G_FILE_TEST_EXISTS));
}

/* SIGTERM while the first scheduler's command runs: exit 130, restored. */
static void
child_sigterm (Child *c)
{
  g_autofree char *script = g_strdup_printf ("while :; do dd if=%s of=/dev/null bs=4k "
                                             "iflag=direct 2>/dev/null; done", c->loop);
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", c->loop, "--sched",
                         c->list, "--repeat", "1", "--", "sh", "-c", script, NULL };
  g_autofree char *err_path = g_build_filename (c->dir, "sigterm.err", NULL);
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  GPid pid;
  int status = -1, err_fd;
  gboolean switched = FALSE;

  err_fd = g_open (err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (err_fd, >=, 0);
  g_assert_true (g_spawn_async_with_fds (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                         NULL, NULL, &pid, -1, -1, err_fd, &error));
  g_assert_no_error (error);
  g_assert_cmpint (close (err_fd), ==, 0);
  /* Wait (up to 20 s) for the first scheduler to be set, then let the
   * capture run a little. */
  for (int i = 0; i < 2000 && !switched; i++)
    {
      g_autofree char *now = realdev_active_sched (c->sched_file);

      switched = g_strcmp0 (now, c->first) == 0;
      if (!switched)
        g_usleep (10000);
    }
  g_usleep (500000);
  g_assert_cmpint (kill (pid, SIGTERM), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (g_file_get_contents (err_path, &err, NULL, NULL));
  g_printerr ("# iosim validate's stderr:\n%s", err);
  if (skip_if_not_ours (c, status, err))
    return;
  g_assert_true (switched);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 130);
}

/* In the subprocess: set a starting scheduler, run the case, and check
 * that the scheduler and tracefs are as they were, whatever the outcome.
 * A reason to skip goes to DIR/skip. */
static void
run_child (const char *loop, const char *dir, ChildFunc func)
{
  Child c = { .loop = loop, .dir = dir };
  g_autofree char *after = NULL;
  gboolean tracefs_before;

  c.sched_file = g_strdup_printf ("/sys/block/%s/queue/scheduler", strrchr (loop, '/') + 1);
  c.skip = g_build_filename (dir, "skip", NULL);
  if (!pick_scheds (c.sched_file, &c.first, &c.second, &c.start))
    g_assert_true (g_file_set_contents (c.skip, "the loop device offers fewer than two blk-mq "
                                        "schedulers", -1, NULL));
  else
    {
      g_assert_true (realdev_write_sched (c.sched_file, c.start));
      tracefs_before = tracefs_mounted ();
      c.list = g_strdup_printf ("%s,%s", c.first, c.second);
      func (&c);
      /* Restored whatever the outcome. */
      after = realdev_active_sched (c.sched_file);
      g_assert_cmpstr (after, ==, c.start);
      /* tracefs is left mounted or not as it was. */
      g_assert_cmpint (tracefs_mounted (), ==, tracefs_before);
    }
  g_free (c.sched_file);
  g_free (c.skip);
  g_free (c.list);
}

static void
remove_files (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);

      /* The loop's backing file goes after the loop is detached. */
      if (strcmp (name, "backing.img") == 0)
        continue;
      if (g_file_test (p, G_FILE_TEST_IS_DIR))
        {
          remove_files (p);
          g_rmdir (p);
        }
      else
        g_unlink (p);
    }
}

/* Each case in a subprocess with its own loop device, so that a failed
 * assertion still leaves this process to detach it. */
static void
test_case (gconstpointer data)
{
  ChildFunc func = (ChildFunc) data;
  Fixture f = { 0 };
  g_autofree char *skip = NULL, *reason = NULL;
  gboolean passed;

  if (g_test_subprocess ())
    {
      run_child (g_getenv (ENV_LOOP), g_getenv (ENV_DIR), func);
      return;
    }
  fixture_setup (&f, NULL);
  if (f.loop == NULL)
    {
      fixture_teardown (&f, NULL);
      return;
    }
  g_setenv (ENV_LOOP, f.loop, TRUE);
  g_setenv (ENV_DIR, f.dir, TRUE);
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  passed = g_test_trap_has_passed ();
  skip = g_build_filename (f.dir, "skip", NULL);
  if (g_file_get_contents (skip, &reason, NULL, NULL))
    g_test_skip (reason);
  remove_files (f.dir);
  fixture_teardown (&f, NULL);
  g_assert_true (passed);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/validate/realdev/two-scheds-repeat-2", child_end_to_end, test_case);
  g_test_add_data_func ("/validate/realdev/trace-replay", child_trace, test_case);
  g_test_add_data_func ("/validate/realdev/failing-command", child_failing_command, test_case);
  g_test_add_data_func ("/validate/realdev/sigterm-restores", child_sigterm, test_case);
  return g_test_run ();
}
