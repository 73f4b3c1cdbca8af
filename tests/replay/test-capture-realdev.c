/* test-capture-realdev.c — `iosim capture` through tracefs on a loop
 * device: a dd-driven capture records Q/D/C lines and restores every
 * tracer setting; a capture interrupted with SIGINT restores them too; one
 * killed with SIGKILL leaves them changed and its journal restores them,
 * through `iosim restore` or the next capture.
 * Needs root, /dev/loop-control, tracefs and the blk tracer; skips
 * otherwise. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loopdev.h"
#include "replay/replay.h"
#include "replay/replay-capture.h"
#include "replay/replay-wbt-probe.h"
#include "replay/replay-safety.h"
#include "replay/replay-journal.h"

typedef struct {
  LoopDev *dev;
  char    *tracefs;
  char    *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *reason = NULL;
  g_autofree char *tracers = NULL, *tracers_path = NULL;
  g_autoptr (GError) error = NULL;

  f->dev = loopdev_new (8u << 20, &reason);
  if (f->dev == NULL)
    {
      g_test_skip (reason);
      return;
    }
  f->tracefs = replay_tracefs_find (NULL, FALSE, NULL, NULL);
  if (f->tracefs == NULL)
    {
      g_test_skip ("no tracefs mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing");
      g_clear_pointer (&f->dev, loopdev_free);
      return;
    }
  tracers_path = g_build_filename (f->tracefs, "available_tracers", NULL);
  if (!g_file_get_contents (tracers_path, &tracers, NULL, NULL) || strstr (tracers, "blk") == NULL)
    {
      g_test_skip ("the kernel has no blk tracer (CONFIG_BLK_DEV_IO_TRACE)");
      g_clear_pointer (&f->dev, loopdev_free);
      return;
    }
  f->dir = g_dir_make_tmp ("iosim-capture-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->dev, loopdev_free);
  if (f->dir)
    {
      g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          g_autofree char *p = g_build_filename (f->dir, name, NULL);
          unlink (p);
        }
      rmdir (f->dir);
    }
  g_free (f->dir);
  g_free (f->tracefs);
}

/* Every file capture saves, read independently of the library. */
static GPtrArray *
snapshot (const Fixture *f)
{
  GPtrArray *snap = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *disk = g_path_get_basename (f->dev->path);
  const char *const *files = replay_tracefs_saved_files ();
  const char *const *disk_files = replay_tracefs_saved_disk_files ();

  for (guint i = 0; files[i]; i++)
    {
      g_autofree char *p = g_build_filename (f->tracefs, files[i], NULL);
      char *text = NULL;
      g_assert_true (g_file_get_contents (p, &text, NULL, NULL));
      g_ptr_array_add (snap, g_strdup_printf ("%s=%s", files[i], g_strstrip (text)));
      g_free (text);
    }
  for (guint i = 0; disk_files[i]; i++)
    {
      g_autofree char *p = g_build_filename ("/sys/block", disk, disk_files[i], NULL);
      char *text = NULL;
      g_assert_true (g_file_get_contents (p, &text, NULL, NULL));
      g_ptr_array_add (snap, g_strdup_printf ("%s=%s", disk_files[i], g_strstrip (text)));
      g_free (text);
    }
  return snap;
}

static void
assert_same_snapshot (GPtrArray *before, GPtrArray *after)
{
  g_assert_cmpuint (before->len, ==, after->len);
  for (guint i = 0; i < before->len; i++)
    g_assert_cmpstr (g_ptr_array_index (after, i), ==, g_ptr_array_index (before, i));
}

static guint
count_action_lines (const char *text, guint32 maj, guint32 min, const char *action)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *needle = g_strdup_printf (" %u,%u ", maj, min);
  guint n = 0;

  for (guint i = 0; lines[i]; i++)
    {
      const char *at = strstr (lines[i], needle);
      g_auto (GStrv) words = NULL;
      if (lines[i][0] == '#' || at == NULL)
        continue;
      words = g_strsplit_set (at + strlen (needle), " ", -1);
      for (guint w = 0; words[w]; w++)
        if (words[w][0] != '\0')
          {
            n += strcmp (words[w], action) == 0;
            break;
          }
    }
  return n;
}

static void
test_dd (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) before = NULL, after = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *output = NULL, *text = NULL, *iff = NULL;
  g_autofree char *devno = NULL;
  ReplayCaptureOptions opts = { 0 };
  ReplayCaptureStats stats;
  ReplayTarget target;

  if (f->dev == NULL)
    return;
  g_assert_true (replay_target_probe (f->dev->path, &target, &error));
  before = snapshot (f);
  output = g_build_filename (f->dir, "cap.txt", NULL);
  iff = g_strdup_printf ("if=%s", f->dev->path);
  {
    char *argv[] = { "dd", iff, "of=/dev/null", "bs=4096", "count=64", "iflag=direct",
                     "status=none", NULL };
    opts.device = f->dev->path;
    opts.output_path = output;
    opts.argv = argv;
    gboolean ok = replay_capture_run (&opts, &stats, &error);
    g_assert_no_error (error);
    g_assert_true (ok);
  }
  after = snapshot (f);
  assert_same_snapshot (before, after);
  g_assert_true (WIFEXITED (stats.command_status) && WEXITSTATUS (stats.command_status) == 0);
  g_assert_false (stats.stopped);

  g_assert_true (g_file_get_contents (output, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "# tracer: blk\n# iosim-capture device="));
  devno = g_strdup_printf ("devno=%u,%u ", target.major, target.minor);
  g_assert_nonnull (strstr (text, devno));
  g_assert_nonnull (strstr (text, "trace_clock=mono"));
  g_assert_nonnull (strstr (text, "scheduler="));
  /* 64 direct reads of 4 KiB: at least 64 queued and 64 completed. */
  g_assert_cmpuint (count_action_lines (text, target.major, target.minor, "Q"), >=, 64);
  g_assert_cmpuint (count_action_lines (text, target.major, target.minor, "C"), >=, 64);
  g_assert_cmpuint (stats.lines, >=, 128);
  replay_target_clear (&target);

  /* Round trip: the capture is a trace `iosim replay` reads (trace_clock
   * mono, Q/D/C paired), naming the process as dd-<pid>. */
  {
    g_autoptr (ReplayResult) res = NULL;
    const ReplayProcess *proc;
    ReplayOptions ropts;

    replay_options_init (&ropts);
    ropts.target = f->dev->path;
    res = replay_run (output, &ropts, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (res->plan->n_reads, >=, 64);
    g_assert_cmpuint (res->ios, ==, res->plan->n_ios);
    g_assert_cmpuint (res->errors, ==, 0);
    g_assert_cmpuint (res->plan->processes->len, >=, 1);
    proc = g_ptr_array_index (res->plan->processes, 0);
    g_assert_true (g_str_has_prefix (proc->name, "dd-"));
  }
}

/* No tracefs instance of the wbt probe is left (replay-wbt-probe.h). */
static void
assert_no_wbt_instance (const Fixture *f)
{
  g_autofree char *instances = g_build_filename (f->tracefs, "instances", NULL);
  g_autoptr (GDir) d = g_dir_open (instances, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    g_assert_false (g_str_has_prefix (name, REPLAY_WBT_INSTANCE_PREFIX));
}

/* --wbt-events: the disk's blk-wbt records go to the file, after its
 * header; a file that cannot be written fails the capture with its path,
 * and either way the tracer settings are back and the instance is gone. */
static void
test_wbt_events (Fixture *f, gconstpointer data)
{
  g_autofree char *events_dir = NULL, *output = NULL, *wbt = NULL, *text = NULL;
  g_autofree char *header = NULL, *of = NULL;
  g_autoptr (GPtrArray) before = NULL;
  ReplayTarget target;

  if (f->dev == NULL)
    return;
  events_dir = g_build_filename (f->tracefs, "events", "wbt", NULL);
  if (!g_file_test (events_dir, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("the kernel has no blk-wbt events (CONFIG_BLK_WBT)");
      return;
    }
  g_assert_true (replay_target_probe (f->dev->path, &target, NULL));
  output = g_build_filename (f->dir, "cap.txt", NULL);
  of = g_strdup_printf ("of=%s", f->dev->path);
  before = snapshot (f);
  for (guint writable = 0; writable < 2; writable++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) after = NULL;
      char *argv[] = { "dd", "if=/dev/zero", of, "bs=1M", "count=4", "conv=fsync",
                       "status=none", NULL };
      ReplayCaptureOptions opts = { 0 };
      ReplayCaptureStats stats;
      gboolean ok;

      g_free (wbt);
      wbt = writable ? g_build_filename (f->dir, "wbt.txt", NULL)
                     : g_build_filename (f->dir, "no-such-dir", "wbt.txt", NULL);
      opts.device = f->dev->path;
      opts.output_path = output;
      opts.argv = argv;
      opts.wbt_output_path = wbt;
      ok = replay_capture_run (&opts, &stats, &error);
      after = snapshot (f);
      assert_same_snapshot (before, after);
      assert_no_wbt_instance (f);
      if (!writable)
        {
          g_assert_false (ok);
          g_assert_nonnull (error);
          g_assert_nonnull (strstr (error->message, wbt));
          continue;
        }
      g_assert_no_error (error);
      g_assert_true (ok);
    }
  g_assert_true (g_file_get_contents (wbt, &text, NULL, NULL));
  header = g_strdup_printf ("# iosim-wbt device=%u:%u ", target.major, target.minor);
  g_assert_true (g_str_has_prefix (text, header));
  replay_target_clear (&target);
}

static char *journal_dir;   /* $IOSIM_JOURNAL_DIR of every capture the tests run */

static guint
n_journals (void)
{
  g_autoptr (GPtrArray) files = replay_journal_list (journal_dir, NULL);

  g_assert_nonnull (files);
  return files->len;
}

/* This capture's own sign that it records: the fresh loop device's
 * trace/enable is 1 (the tracer alone may have been "blk" before). */
static gboolean
disk_traced (const Fixture *f)
{
  g_autofree char *disk = g_path_get_basename (f->dev->path);
  g_autofree char *p = g_build_filename ("/sys/block", disk, "trace", "enable", NULL);
  g_autofree char *text = NULL;

  return g_file_get_contents (p, &text, NULL, NULL) && g_str_has_prefix (text, "1");
}

static gboolean
tracer_is_blk (const Fixture *f)
{
  g_autofree char *p = g_build_filename (f->tracefs, "current_tracer", NULL);
  g_autofree char *text = NULL;

  return g_file_get_contents (p, &text, NULL, NULL) && g_str_has_prefix (text, "blk");
}

/* `iosim capture --seconds 30` of the device in the background; returns
 * once it records. */
static GPid
start_capture (const Fixture *f, const char *output)
{
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "capture", "--device", f->dev->path,
                         "--seconds", "30", "-o", output, NULL };
  g_autoptr (GError) error = NULL;
  GPid pid;

  g_assert_false (disk_traced (f));
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  for (int i = 0; i < 100 && !(disk_traced (f) && tracer_is_blk (f)); i++)
    g_usleep (50000);
  g_assert_true (disk_traced (f) && tracer_is_blk (f));
  g_usleep (200000);
  return pid;
}

static void
test_sigint (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) before = NULL, after = NULL;
  g_autofree char *output = NULL, *text = NULL;
  GPid pid;
  int status = 0;

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  before = snapshot (f);
  output = g_build_filename (f->dir, "cap.txt", NULL);
  pid = start_capture (f, output);
  g_assert_cmpint (kill (pid, SIGINT), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 130);
  after = snapshot (f);
  assert_same_snapshot (before, after);
  g_assert_true (g_file_get_contents (output, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "# tracer: blk\n"));
  g_assert_cmpuint (n_journals (), ==, 0);
}

/* Runs iosim with @args; stdout and stderr in *@out, *@err. */
static int
run_iosim (const char *const *args, char **out, char **err)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_ptr_array_add (argv, (gpointer) g_getenv ("IOSIM_BIN"));
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("iosim %s: status %d\n%s\n%s", args[0], status, *out, *err);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

typedef enum { AFTER_KILL_RESTORE, AFTER_KILL_NEXT_CAPTURE } AfterKill;

/* SIGKILL mid-capture: blk tracer, mono clock, 16 MB buffers and the
 * disk's trace/enable stay; `iosim restore` or the next capture puts back
 * what was there before (every file the capture saves). */
static void
test_sigkill (Fixture *f, gconstpointer data)
{
  AfterKill after_kill = GPOINTER_TO_INT (data);
  g_autoptr (GPtrArray) before = NULL, after = NULL;
  g_autofree char *output = NULL, *out = NULL, *err = NULL;
  GPid pid;
  int status = 0;

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  before = snapshot (f);
  output = g_build_filename (f->dir, "cap.txt", NULL);
  pid = start_capture (f, output);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  g_assert_true (tracer_is_blk (f) && disk_traced (f));
  g_assert_cmpuint (n_journals (), ==, 1);
  if (after_kill == AFTER_KILL_RESTORE)
    {
      const char *args[] = { "restore", NULL };
      g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
      g_assert_nonnull (strstr (out, "iosim capture, pid"));
      g_assert_nonnull (strstr (out, "restored and removed"));
    }
  else
    {
      g_autofree char *next = g_build_filename (f->dir, "next.txt", NULL);
      const char *args[] = { "capture", "--device", f->dev->path, "--seconds", "0.2", "-o", next,
                             NULL };
      g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
      g_assert_nonnull (strstr (err, "restoring them first"));
    }
  after = snapshot (f);
  assert_same_snapshot (before, after);
  g_assert_cmpuint (n_journals (), ==, 0);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  /* A journal directory of the tests' own, to be left empty. */
  journal_dir = g_dir_make_tmp ("iosim-test-journals-XXXXXX", NULL);
  g_assert_nonnull (journal_dir);
  g_setenv (REPLAY_JOURNAL_DIR_ENV, journal_dir, TRUE);
  g_test_add ("/capture/realdev/dd", Fixture, NULL, fixture_setup, test_dd, fixture_teardown);
  g_test_add ("/capture/realdev/sigint", Fixture, NULL, fixture_setup, test_sigint, fixture_teardown);
  g_test_add ("/capture/realdev/wbt-events", Fixture, NULL, fixture_setup, test_wbt_events,
              fixture_teardown);
  g_test_add ("/capture/realdev/sigkill-then-restore", Fixture,
              GINT_TO_POINTER (AFTER_KILL_RESTORE), fixture_setup, test_sigkill, fixture_teardown);
  g_test_add ("/capture/realdev/sigkill-then-capture", Fixture,
              GINT_TO_POINTER (AFTER_KILL_NEXT_CAPTURE), fixture_setup, test_sigkill,
              fixture_teardown);
  rc = g_test_run ();
  if (n_journals () > 0)
    {
      fprintf (stderr, "a journal was left in %s: run iosim restore --dir %s\n", journal_dir,
               journal_dir);
      rc = 1;
    }
  else
    rmdir (journal_dir);
  g_free (journal_dir);
  return rc;
}
