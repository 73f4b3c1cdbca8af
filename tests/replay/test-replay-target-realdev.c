/* test-replay-target-realdev.c — `iosim replay` on loop devices: the
 * safety refusals (mounted, file system signature, in use, writes without
 * --allow-write) and what --force overrides; target setup restored after a
 * normal run, an error and SIGTERM/SIGINT mid-replay; after SIGKILL
 * mid-replay, by `iosim restore` or by the next replay (the journal);
 * --read-ahead-kb with --rotational in force as asked; --map onto two
 * devices, also with the io_uring and libaio engines; --scale-offsets;
 * --capture.  Runs the iosim binary ($IOSIM_BIN) as a child.  Needs root
 * and /dev/loop-control; skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "loopdev.h"
#include "replay/replay.h"
#include "replay/replay-journal.h"

#define DEV_BYTES (16u << 20)
#define THROTTLE_DIR "/sys/fs/cgroup/blkio"

typedef struct {
  LoopDev *a, *b;
  char    *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *reason = NULL;
  g_autoptr (GError) error = NULL;

  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  f->a = loopdev_new (DEV_BYTES, &reason);
  if (f->a != NULL)
    f->b = loopdev_new (DEV_BYTES, &reason);
  if (f->b == NULL)
    {
      g_clear_pointer (&f->a, loopdev_free);
      g_test_skip (reason);
      return;
    }
  f->dir = g_dir_make_tmp ("iosim-replay-target-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->a, loopdev_free);
  g_clear_pointer (&f->b, loopdev_free);
  if (f->dir)
    {
      g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->dir);
      g_assert_cmpint (system (cmd), ==, 0);
      g_free (f->dir);
    }
}

static char *
disk_name (const LoopDev *dev)
{
  return g_path_get_basename (dev->path);
}

static char *
sys_attr (const LoopDev *dev, const char *attr)
{
  g_autofree char *name = disk_name (dev);
  g_autofree char *path = g_build_filename ("/sys/block", name, attr, NULL);
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strstrip (text);
}

static void
devno (const LoopDev *dev, guint *maj, guint *min)
{
  struct stat st;

  g_assert_cmpint (stat (dev->path, &st), ==, 0);
  *maj = major (st.st_rdev);
  *min = minor (st.st_rdev);
}

/* This device's rule in a throttle file, "" without one (0 = none). */
static char *
throttle_rule (const LoopDev *dev, const char *file)
{
  g_autofree char *path = g_build_filename (THROTTLE_DIR, file, NULL);
  g_autofree char *text = NULL, *prefix = NULL;
  g_auto (GStrv) lines = NULL;
  guint maj, min;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_strdup ("(none)");
  devno (dev, &maj, &min);
  prefix = g_strdup_printf ("%u:%u ", maj, min);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix) && !g_str_has_suffix (lines[i], " 0"))
      return g_strdup (lines[i]);
  return g_strdup ("");
}

static gboolean
have_throttle (void)
{
  return g_file_test (THROTTLE_DIR "/blkio.throttle.read_bps_device", G_FILE_TEST_EXISTS);
}

/* Everything the setup options touch, to compare before and after. */
static char *
snapshot (const LoopDev *dev)
{
  g_autofree char *sched = sys_attr (dev, "queue/scheduler");
  g_autofree char *ra = sys_attr (dev, "queue/read_ahead_kb");
  g_autofree char *nr = sys_attr (dev, "queue/nr_requests");
  g_autofree char *rot = sys_attr (dev, "queue/rotational");
  g_autofree char *tr = throttle_rule (dev, "blkio.throttle.read_bps_device");
  g_autofree char *tw = throttle_rule (dev, "blkio.throttle.write_bps_device");

  return g_strdup_printf ("scheduler=%s read_ahead_kb=%s nr_requests=%s rotational=%s "
                          "throttle_read=%s throttle_write=%s", sched, ra, nr, rot, tr, tw);
}

/* ftrace blk text: per traced device 7,MINOR (one process each), @n[i]
 * reads (a write at the end when @with_write) @gap_s apart, @step sectors
 * apart. */
static char *
write_trace (const char *dir, const char *name, const guint *minors, const guint *n, guint n_devs,
             double gap_s, guint64 step, gboolean with_write)
{
  g_autoptr (GString) s = g_string_new ("# tracer: blk\n#\n");
  char *path = g_build_filename (dir, name, NULL);

  for (guint d = 0; d < n_devs; d++)
    for (guint i = 0; i < n[d]; i++)
      {
        guint pid = 4000 + d;
        const char *rwbs = with_write && i == n[d] - 1 ? "WS" : "RS";
        double t = 100.0 + i * gap_s + d * 0.0001;
        guint64 sector = step * i;

        g_string_append_printf (s, "%16s-%-5u [001] d..1. %12.6f: %3d,%-3u %2s %3s %" G_GUINT64_FORMAT
                                " + 8 [dd]\n", "dd", pid, t, 7, minors[d], "Q", rwbs, sector);
        g_string_append_printf (s, "%16s-%-5u [001] d..1. %12.6f: %3d,%-3u %2s %3s %" G_GUINT64_FORMAT
                                " + 8 [dd]\n", "dd", pid, t + 0.00001, 7, minors[d], "D", rwbs, sector);
        g_string_append_printf (s, "%16s-%-5u [001] d.h1. %12.6f: %3d,%-3u %2s %3s %" G_GUINT64_FORMAT
                                " + 8 [0]\n", "<idle>", 0, t + 0.0002, 7, minors[d], "C", rwbs, sector);
      }
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  return path;
}

static char *
one_device_trace (Fixture *f, guint n, double gap_s, gboolean with_write)
{
  const guint minors[] = { 0 }, counts[] = { n };

  return write_trace (f->dir, with_write ? "w.txt" : "r.txt", minors, counts, 1, gap_s, 8,
                      with_write);
}

static char *last_stdout;   /* of the last run_iosim() */

static int
run_iosim (const char *const *args, char **err)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_ptr_array_add (argv, (gpointer) g_getenv ("IOSIM_BIN"));
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_clear_pointer (&last_stdout, g_free);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT,
                               NULL, NULL, &last_stdout, err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("iosim %s ...: status %d\n%s", args[0], status, *err);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

#define RUN(err, ...) \
  ({ const char *args_[] = { __VA_ARGS__, NULL }; g_clear_pointer (err, g_free); run_iosim (args_, err); })

static gboolean
have_mkfs (void)
{
  g_autofree char *p = g_find_program_in_path ("mkfs.ext4");
  return p != NULL;
}

static void
test_refusals (Fixture *f, gconstpointer data)
{
  g_autofree char *w = NULL, *err = NULL, *mnt = NULL, *cmd = NULL;
  int fd;

  if (f->a == NULL)
    return;
  w = one_device_trace (f, 20, 0.001, TRUE);

  /* Writes without --allow-write: --force does not override that. */
  g_assert_cmpint (RUN (&err, "replay", w, "--target", f->a->path, "--force"), !=, 0);
  g_assert_nonnull (strstr (err, "--allow-write"));

  /* In use: another open with O_EXCL.  --force does not override it. */
  fd = open (f->a->path, O_RDONLY | O_EXCL);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (RUN (&err, "replay", w, "--target", f->a->path, "--allow-write", "--force"), !=, 0);
  g_assert_nonnull (strstr (err, "in use"));
  close (fd);

  if (!have_mkfs ())
    {
      g_test_message ("mkfs.ext4 missing: signature and mount refusals not checked");
      g_test_incomplete ("no mkfs.ext4");
      return;
    }
  cmd = g_strdup_printf ("mkfs.ext4 -q -F %s", f->a->path);
  g_assert_cmpint (system (cmd), ==, 0);

  /* Mounted: --force does not override it. */
  mnt = g_build_filename (f->dir, "mnt", NULL);
  g_assert_cmpint (mkdir (mnt, 0700), ==, 0);
  if (mount (f->a->path, mnt, "ext4", MS_RDONLY, NULL) == 0)
    {
      int rc = RUN (&err, "replay", w, "--target", f->a->path, "--allow-write", "--force");
      umount (mnt);
      g_assert_cmpint (rc, !=, 0);
      g_assert_nonnull (strstr (err, "mounted"));
    }
  else
    g_test_message ("mount failed (%s): mounted refusal not checked here", g_strerror (errno));

  /* A file system signature refuses writes ... */
  g_assert_cmpint (RUN (&err, "replay", w, "--target", f->a->path, "--allow-write"), !=, 0);
  g_assert_nonnull (strstr (err, "ext4"));
  g_assert_nonnull (strstr (err, "--force"));
  /* ... not reads ... */
  g_assert_cmpint (RUN (&err, "replay", w, "--target", f->a->path, "--reads-only"), ==, 0);
  /* ... and --force overrides it. */
  g_assert_cmpint (RUN (&err, "replay", w, "--target", f->a->path, "--allow-write", "--force"), ==, 0);
}

/* Setting values for the restore tests, each different from what the
 * device has now (a setting already at the asked value changes nothing
 * and logs nothing: a test asking for a fixed value fails on a machine an
 * earlier run left at it). */
typedef struct {
  char *sched;          /* an elevator other than the active one */
  char *tunable;        /* "KEY=VALUE" of that elevator, NULL for none */
  char *tunable_file;   /* "/queue/iosched/KEY", NULL for none */
  char *read_ahead_kb;  /* not the current value, nor the 128 a queue-limit write resets to */
  char *nr_requests;
  char *rotational;     /* the other one */
} Picks;

static char *
active_elevator (const LoopDev *dev)
{
  g_autofree char *s = sys_attr (dev, "queue/scheduler");
  const char *open = strchr (s, '[');

  g_assert_nonnull (open);
  return g_strndup (open + 1, strcspn (open + 1, "]"));
}

static void
picks_init (Picks *p, const LoopDev *dev)
{
  /* An elevator with a tunable each, in order of preference. */
  const struct { const char *name, *tunable; } elevators[] = {
    { "mq-deadline", "read_expire=123" }, { "kyber", "read_lat_nsec=1234567" },
    { "bfq", "slice_idle=3" }, { "none", NULL },
  };
  g_autofree char *list = sys_attr (dev, "queue/scheduler");
  g_autofree char *active = active_elevator (dev);
  g_autofree char *ra = sys_attr (dev, "queue/read_ahead_kb");
  g_autofree char *nr = sys_attr (dev, "queue/nr_requests");
  g_autofree char *rot = sys_attr (dev, "queue/rotational");
  g_auto (GStrv) names = g_strsplit_set (list, " []", -1);

  memset (p, 0, sizeof *p);
  for (guint i = 0; i < G_N_ELEMENTS (elevators) && p->sched == NULL; i++)
    if (strcmp (elevators[i].name, active) != 0
        && g_strv_contains ((const char *const *) names, elevators[i].name))
      {
        p->sched = g_strdup (elevators[i].name);
        p->tunable = g_strdup (elevators[i].tunable);
        if (p->tunable)
          p->tunable_file = g_strdup_printf ("/queue/iosched/%.*s",
                                             (int) strcspn (p->tunable, "="), p->tunable);
      }
  g_assert_nonnull (p->sched);
  p->read_ahead_kb = g_strdup (strcmp (ra, "4096") == 0 ? "2048" : "4096");
  p->nr_requests = g_strdup (strcmp (nr, "16") == 0 ? "32" : "16");
  p->rotational = g_strdup (strcmp (rot, "1") == 0 ? "0" : "1");
}

static void
picks_clear (Picks *p)
{
  g_free (p->sched);
  g_free (p->tunable);
  g_free (p->tunable_file);
  g_free (p->read_ahead_kb);
  g_free (p->nr_requests);
  g_free (p->rotational);
}

/* The setup options used by the restore tests (throttling where the
 * machine has cgroup v1 blkio). */
static void
add_setup_args (GPtrArray *args, const Picks *p)
{
  const char *fixed[] = { "--sched", p->sched, "--read-ahead-kb", p->read_ahead_kb,
                          "--nr-requests", p->nr_requests, "--rotational", p->rotational };

  for (guint i = 0; i < G_N_ELEMENTS (fixed); i++)
    g_ptr_array_add (args, (gpointer) fixed[i]);
  if (p->tunable)
    {
      g_ptr_array_add (args, (gpointer) "--sched-set");
      g_ptr_array_add (args, p->tunable);
    }
  if (have_throttle ())
    {
      g_ptr_array_add (args, (gpointer) "--throttle-read-bps");
      g_ptr_array_add (args, (gpointer) "500MiB");
    }
}

static int
run_argv (GPtrArray *args, char **err)
{
  g_ptr_array_add (args, NULL);
  g_clear_pointer (err, g_free);
  return run_iosim ((const char *const *) args->pdata, err);
}

static void
test_restore_normal (Fixture *f, gconstpointer data)
{
  g_autofree char *r = NULL, *err = NULL, *before = NULL, *after = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  Picks p;

  if (f->a == NULL)
    return;
  picks_init (&p, f->a);
  r = one_device_trace (f, 30, 0.001, FALSE);
  before = snapshot (f->a);
  g_ptr_array_add (args, (gpointer) "replay");
  g_ptr_array_add (args, r);
  g_ptr_array_add (args, (gpointer) "--target");
  g_ptr_array_add (args, f->a->path);
  add_setup_args (args, &p);
  g_assert_cmpint (run_argv (args, &err), ==, 0);
  /* It was applied: every old value logged before its change. */
  g_assert_nonnull (strstr (err, "/queue/scheduler"));
  if (p.tunable_file)
    g_assert_nonnull (strstr (err, p.tunable_file));
  g_assert_nonnull (strstr (err, "/queue/read_ahead_kb"));
  g_assert_nonnull (strstr (err, "/queue/rotational"));
  if (have_throttle ())
    g_assert_nonnull (strstr (err, "blkio.throttle.read_bps_device"));
  g_assert_nonnull (strstr (err, "if killed, run: iosim restore --dir "));
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
  picks_clear (&p);
}

/* A bad name after the elevator and its tunable were applied. */
static void
test_restore_error (Fixture *f, gconstpointer data)
{
  g_autofree char *r = NULL, *err = NULL, *before = NULL, *after = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  Picks p;

  if (f->a == NULL)
    return;
  picks_init (&p, f->a);
  r = one_device_trace (f, 30, 0.001, FALSE);
  before = snapshot (f->a);
  g_ptr_array_add (args, (gpointer) "replay");
  g_ptr_array_add (args, r);
  g_ptr_array_add (args, (gpointer) "--target");
  g_ptr_array_add (args, f->a->path);
  add_setup_args (args, &p);
  g_ptr_array_add (args, (gpointer) "--sched-set");
  g_ptr_array_add (args, (gpointer) "no_such_tunable=1");
  g_assert_cmpint (run_argv (args, &err), !=, 0);
  g_assert_nonnull (strstr (err, "no_such_tunable"));
  g_assert_nonnull (strstr (err, "/queue/scheduler"));   /* applied, then restored */
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
  picks_clear (&p);
}

static gboolean
wait_for_scheduler (const LoopDev *dev, const char *name, gint64 timeout_us)
{
  gint64 end = g_get_monotonic_time () + timeout_us;
  g_autofree char *want = g_strdup_printf ("[%s]", name);

  while (g_get_monotonic_time () < end)
    {
      g_autofree char *s = sys_attr (dev, "queue/scheduler");
      if (strstr (s, want))
        return TRUE;
      g_usleep (2000);
    }
  return FALSE;
}

static char *journal_dir;   /* $IOSIM_JOURNAL_DIR of every iosim the tests start */

static guint
n_journals (void)
{
  g_autoptr (GPtrArray) files = replay_journal_list (journal_dir, NULL);

  g_assert_nonnull (files);
  return files->len;
}

/* Until the picked elevator and read_ahead_kb (written last) are in force. */
static gboolean
wait_applied (const LoopDev *dev, const Picks *p, gint64 timeout_us)
{
  gint64 end = g_get_monotonic_time () + timeout_us;

  if (!wait_for_scheduler (dev, p->sched, timeout_us))
    return FALSE;
  while (g_get_monotonic_time () < end)
    {
      g_autofree char *ra = sys_attr (dev, "queue/read_ahead_kb");
      if (strcmp (ra, p->read_ahead_kb) == 0)
        return TRUE;
      g_usleep (2000);
    }
  return FALSE;
}

/* `iosim replay` of the 10 s trace @r with the picked settings, in the
 * background; returns once they are in force. */
static GPid
start_long_replay (Fixture *f, const Picks *p, const char *r)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  GPid pid;

  g_ptr_array_add (args, (gpointer) g_getenv ("IOSIM_BIN"));
  g_ptr_array_add (args, (gpointer) "replay");
  g_ptr_array_add (args, (gpointer) r);
  g_ptr_array_add (args, (gpointer) "--target");
  g_ptr_array_add (args, f->a->path);
  add_setup_args (args, p);
  g_ptr_array_add (args, NULL);
  g_assert_true (g_spawn_async (NULL, (char **) args->pdata, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  g_assert_true (wait_applied (f->a, p, 5 * G_USEC_PER_SEC));
  g_usleep (300 * 1000);   /* into the replay, past the setup */
  return pid;
}

/* Killed mid-replay by @signo: the settings come back, exit status 130. */
static void
test_restore_signal (Fixture *f, gconstpointer data)
{
  int signo = GPOINTER_TO_INT (data);
  g_autofree char *r = NULL, *before = NULL, *after = NULL;
  GPid pid;
  int status;
  Picks p;

  if (f->a == NULL)
    return;
  picks_init (&p, f->a);
  r = one_device_trace (f, 400, 0.025, FALSE);   /* 10 s */
  before = snapshot (f->a);
  pid = start_long_replay (f, &p, r);
  g_assert_cmpint (kill (pid, signo), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 130);
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (n_journals (), ==, 0);
  picks_clear (&p);
}

typedef enum { AFTER_KILL_RESTORE, AFTER_KILL_NEXT_REPLAY } AfterKill;

/* Killed by SIGKILL mid-replay: no handler runs, the settings stay
 * changed and the journal holds the originals.  `iosim restore` (after a
 * --dry-run that writes nothing), or the next replay on the device, puts
 * them back; the next replay takes the true originals for its own. */
static void
test_restore_sigkill (Fixture *f, gconstpointer data)
{
  AfterKill after_kill = GPOINTER_TO_INT (data);
  g_autofree char *r = NULL, *before = NULL, *during = NULL, *after = NULL, *err = NULL;
  g_autofree char *active = NULL, *ra = NULL, *orig_ra = NULL, *orig_line = NULL;
  GPid pid;
  int status;
  Picks p;

  if (f->a == NULL)
    return;
  picks_init (&p, f->a);
  r = one_device_trace (f, 400, 0.025, FALSE);   /* 10 s */
  before = snapshot (f->a);
  orig_ra = sys_attr (f->a, "queue/read_ahead_kb");
  pid = start_long_replay (f, &p, r);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  during = snapshot (f->a);
  active = active_elevator (f->a);
  ra = sys_attr (f->a, "queue/read_ahead_kb");
  g_assert_cmpstr (during, !=, before);
  g_assert_cmpstr (active, ==, p.sched);
  g_assert_cmpstr (ra, ==, p.read_ahead_kb);
  g_assert_cmpuint (n_journals (), ==, 1);

  if (after_kill == AFTER_KILL_RESTORE)
    {
      g_autofree char *still = NULL;

      g_assert_cmpint (RUN (&err, "restore", "--dry-run"), ==, 0);
      g_assert_nonnull (strstr (last_stdout, "(gone)"));
      g_assert_nonnull (strstr (last_stdout, "would write"));
      still = snapshot (f->a);
      g_assert_cmpstr (still, ==, during);
      g_assert_cmpuint (n_journals (), ==, 1);
      g_assert_cmpint (RUN (&err, "restore"), ==, 0);
      g_assert_nonnull (strstr (last_stdout, "restored and removed"));
    }
  else
    {
      g_autofree char *short_trace = one_device_trace (f, 20, 0.001, FALSE);
      g_autoptr (GPtrArray) args = g_ptr_array_new ();

      g_ptr_array_add (args, (gpointer) "replay");
      g_ptr_array_add (args, short_trace);
      g_ptr_array_add (args, (gpointer) "--target");
      g_ptr_array_add (args, f->a->path);
      add_setup_args (args, &p);
      g_assert_cmpint (run_argv (args, &err), ==, 0);
      g_assert_nonnull (strstr (err, "restoring them first"));
      /* Its own originals are the device's, not the killed run's. */
      orig_line = g_strdup_printf ("echo '%s' > /sys/block/", orig_ra);
      g_assert_nonnull (strstr (err, orig_line));
    }
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (n_journals (), ==, 0);
  picks_clear (&p);
}

/* The issue's case: --read-ahead-kb with --rotational.  Writing rotational
 * (a queue limit) resets read_ahead_kb on Linux 6.11+, so read_ahead_kb
 * goes last; the report shows it in force, and the restore puts it back
 * after rotational too. */
static void
test_read_ahead_with_rotational (Fixture *f, gconstpointer data)
{
  g_autofree char *r = NULL, *err = NULL, *before = NULL, *after = NULL, *json = NULL;
  g_autofree char *ra_now = NULL, *rot_now = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  const char *ra;
  JsonArray *settings;
  guint seen = 0;

  if (f->a == NULL)
    return;
  /* Neither the current value nor the 128 KiB a queue-limit write resets to. */
  ra_now = sys_attr (f->a, "queue/read_ahead_kb");
  ra = strcmp (ra_now, "64") == 0 ? "96" : "64";
  rot_now = sys_attr (f->a, "queue/rotational");
  r = one_device_trace (f, 30, 0.001, FALSE);
  json = g_build_filename (f->dir, "ra.json", NULL);
  before = snapshot (f->a);
  g_assert_cmpint (RUN (&err, "replay", r, "--target", f->a->path, "--read-ahead-kb", ra,
                        "--rotational", strcmp (rot_now, "1") == 0 ? "0" : "1",
                        "--nr-requests", "1", "--json", json), ==, 0);
  /* Below BLKDEV_MIN_RQ: the kernel keeps 4, a warning, in force. */
  g_assert_nonnull (strstr (err, "nr_requests: asked for 1, the kernel keeps 4 (in force)"));
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  settings = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                           "target_settings");
  g_assert_nonnull (settings);
  for (guint i = 0; i < json_array_get_length (settings); i++)
    {
      JsonObject *o = json_array_get_object_element (settings, i);
      if (!g_str_has_suffix (json_object_get_string_member (o, "path"), "/read_ahead_kb"))
        continue;
      g_assert_cmpstr (json_object_get_string_member (o, "requested"), ==, ra);
      g_assert_cmpstr (json_object_get_string_member (o, "in_force"), ==, ra);
      g_assert_false (json_object_get_boolean_member (o, "adjusted"));
      seen++;
    }
  for (guint i = 0; i < json_array_get_length (settings); i++)
    {
      JsonObject *o = json_array_get_object_element (settings, i);
      if (!g_str_has_suffix (json_object_get_string_member (o, "path"), "/nr_requests"))
        continue;
      g_assert_cmpstr (json_object_get_string_member (o, "requested"), ==, "1");
      g_assert_cmpstr (json_object_get_string_member (o, "in_force"), ==, "4");
      g_assert_true (json_object_get_boolean_member (o, "adjusted"));
      seen++;
    }
  g_assert_cmpuint (seen, ==, 2);
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
}

/* A value the kernel does not take: rotational stores any non-zero as 1
 * (block/blk-sysfs.c), so 2 reads back 1.  An error naming the file; what
 * was applied is restored. */
static void
test_not_taken (Fixture *f, gconstpointer data)
{
  g_autofree char *r = NULL, *err = NULL, *before = NULL, *after = NULL;

  if (f->a == NULL)
    return;
  r = one_device_trace (f, 10, 0.001, FALSE);
  before = snapshot (f->a);
  g_assert_cmpint (RUN (&err, "replay", r, "--target", f->a->path, "--rotational", "2"), !=, 0);
  g_assert_nonnull (strstr (err, "/queue/rotational: wrote '2' but the kernel shows '1' "
                                 "(not taken)"));
  after = snapshot (f->a);
  g_assert_cmpstr (after, ==, before);
}

static guint64
reads_completed (const LoopDev *dev)
{
  g_autofree char *text = sys_attr (dev, "stat");

  return g_ascii_strtoull (text, NULL, 10);
}

static char *
map_arg (guint minor, const LoopDev *dev)
{
  return g_strdup_printf ("7,%u=%s", minor, dev->path);
}

/* Two traced devices onto two loop devices: each gets its own I/Os. */
static void
test_map (Fixture *f, gconstpointer data)
{
  const guint minors[] = { 0, 1 }, counts[] = { 20, 60 };
  g_autofree char *t = NULL, *err = NULL, *m0 = NULL, *m1 = NULL, *csv = NULL, *text = NULL;
  g_autofree char *col_a = NULL, *col_b = NULL;
  guint64 a0, b0, a1, b1;
  guint rows_a = 0, rows_b = 0;
  g_auto (GStrv) lines = NULL;

  if (f->a == NULL)
    return;
  t = write_trace (f->dir, "two.txt", minors, counts, 2, 0.002, 8, FALSE);
  m0 = map_arg (0, f->a);
  m1 = map_arg (1, f->b);
  csv = g_build_filename (f->dir, "map.csv", NULL);
  a0 = reads_completed (f->a);
  b0 = reads_completed (f->b);
  g_assert_cmpint (RUN (&err, "replay", t, "--map", m0, "--map", m1, "--csv", csv), ==, 0);
  a1 = reads_completed (f->a);
  b1 = reads_completed (f->b);
  g_assert_cmpuint (a1 - a0, >=, 20);
  g_assert_cmpuint (a1 - a0, <, 60);
  g_assert_cmpuint (b1 - b0, >=, 60);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  col_a = g_strdup_printf (",%s,", f->a->path);
  col_b = g_strdup_printf (",%s,", f->b->path);
  for (guint i = 1; lines[i]; i++)
    {
      rows_a += strstr (lines[i], col_a) != NULL;
      rows_b += strstr (lines[i], col_b) != NULL;
    }
  g_assert_cmpuint (rows_a, ==, 20);
  g_assert_cmpuint (rows_b, ==, 60);
  /* --target and --map together, and a traced device twice onto one target. */
  g_assert_cmpint (RUN (&err, "replay", t, "--map", m0, "--target", f->b->path), ==, 2);
  g_clear_pointer (&m1, g_free);
  m1 = map_arg (1, f->a);
  g_assert_cmpint (RUN (&err, "replay", t, "--map", m0, "--map", m1), !=, 0);
  g_assert_nonnull (strstr (err, "same device"));
}

/* An engine other than psync with --map: every I/O on its own device's
 * target (per-device read counts in /sys/block/loopN/stat), with a
 * per-device depth of 1 that must not starve either device. */
static void
test_map_engine (Fixture *f, gconstpointer data)
{
  const char *engine_name = data;
  const guint minors[] = { 0, 1 }, counts[] = { 30, 90 };
  g_autofree char *t = NULL, *err = NULL, *m0 = NULL, *m1 = NULL;
  g_autoptr (GError) error = NULL;
  ReplayEngine engine;
  guint64 a0, b0, a1, b1;

  if (f->a == NULL)
    return;
  g_assert_true (replay_engine_parse (engine_name, &engine));
  if (!replay_engine_available (engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  t = write_trace (f->dir, "two-engine.txt", minors, counts, 2, 0.001, 8, FALSE);
  m0 = map_arg (0, f->a);
  m1 = map_arg (1, f->b);
  a0 = reads_completed (f->a);
  b0 = reads_completed (f->b);
  g_assert_cmpint (RUN (&err, "replay", t, "--engine", engine_name, "--iodepth", "4",
                        "--device-depth", "1", "--map", m0, "--map", m1), ==, 0);
  a1 = reads_completed (f->a);
  b1 = reads_completed (f->b);
  /* Each device got its own I/Os and not the other's (udev may add a few
   * probing reads, never 60). */
  g_assert_cmpuint (a1 - a0, >=, 30);
  g_assert_cmpuint (a1 - a0, <, 90);
  g_assert_cmpuint (b1 - b0, >=, 90);
  g_assert_nonnull (strstr (last_stdout, engine_name));
}

/* The dry run's per-target row: path traced ios reads writes bytes_read bytes_written ... */
static void
check_target_row (const char *out, const char *path, const char *traced, const char *ios,
                  const char *reads, const char *writes)
{
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      g_auto (GStrv) cols = g_strsplit_set (lines[i], " ", -1);
      g_autoptr (GPtrArray) words = g_ptr_array_new ();

      for (guint j = 0; cols[j]; j++)
        if (cols[j][0])
          g_ptr_array_add (words, cols[j]);
      if (words->len < 7 || strcmp (g_ptr_array_index (words, 0), path) != 0
          || strcmp (g_ptr_array_index (words, 1), traced) != 0)
        continue;
      g_assert_cmpstr (g_ptr_array_index (words, 2), ==, ios);
      g_assert_cmpstr (g_ptr_array_index (words, 3), ==, reads);
      g_assert_cmpstr (g_ptr_array_index (words, 4), ==, writes);
      g_assert_cmpstr (g_ptr_array_index (words, 6), ==, "4096");
      return;
    }
  g_assert_not_reached ();
}

/* --dry-run prints devices, ranges, counts, bytes to write and the setup,
 * and touches nothing: no setting, no capture file, no I/O. */
static void
test_dry_run (Fixture *f, gconstpointer data)
{
  const guint minors[] = { 0, 1 }, counts[] = { 10, 30 };
  g_autofree char *t = NULL, *err = NULL, *m0 = NULL, *m1 = NULL, *cap = NULL;
  g_autofree char *before_a = NULL, *before_b = NULL, *after_a = NULL, *after_b = NULL;
  guint64 a0, b0;

  if (f->a == NULL)
    return;
  t = write_trace (f->dir, "dry.txt", minors, counts, 2, 0.002, 8, TRUE);
  m0 = map_arg (0, f->a);
  m1 = map_arg (1, f->b);
  cap = g_build_filename (f->dir, "dry-cap.txt", NULL);
  before_a = snapshot (f->a);
  before_b = snapshot (f->b);
  a0 = reads_completed (f->a);
  b0 = reads_completed (f->b);
  g_assert_cmpint (RUN (&err, "replay", t, "--map", m0, "--map", m1, "--dry-run", "--allow-write",
                        "--sched", "mq-deadline", "--read-ahead-kb", "4096", "--capture", cap), ==, 0);
  g_assert_nonnull (strstr (last_stdout, f->a->path));
  g_assert_nonnull (strstr (last_stdout, f->b->path));
  /* 9 reads + 1 write of 4 KiB on the first, 29 + 1 on the second. */
  check_target_row (last_stdout, f->a->path, "7,0", "10", "9", "1");
  check_target_row (last_stdout, f->b->path, "7,1", "30", "29", "1");
  g_assert_nonnull (strstr (last_stdout, "8192 bytes would be written"));
  g_assert_nonnull (strstr (last_stdout, "-> mq-deadline"));
  g_assert_nonnull (strstr (last_stdout, "read_ahead_kb: "));
  g_assert_nonnull (strstr (last_stdout, "capture "));
  g_assert_null (strstr (err, "old setting"));
  g_assert_false (g_file_test (cap, G_FILE_TEST_EXISTS));
  after_a = snapshot (f->a);
  after_b = snapshot (f->b);
  g_assert_cmpstr (after_a, ==, before_a);
  g_assert_cmpstr (after_b, ==, before_b);
  g_assert_cmpuint (reads_completed (f->a), ==, a0);
  g_assert_cmpuint (reads_completed (f->b), ==, b0);
}

/* A 64 MiB traced extent onto the 16 MiB target. */
static void
test_scale (Fixture *f, gconstpointer data)
{
  const guint minors[] = { 0 }, counts[] = { 100 };
  g_autofree char *t = NULL, *err = NULL, *csv = NULL, *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autofree char *bs = NULL;
  guint64 block, max_end = 0;

  if (f->a == NULL)
    return;
  t = write_trace (f->dir, "wide.txt", minors, counts, 1, 0.001, (64u << 20) / 512 / 100 + 1, FALSE);
  csv = g_build_filename (f->dir, "scale.csv", NULL);
  g_assert_cmpint (RUN (&err, "replay", t, "--target", f->a->path), !=, 0);
  g_assert_nonnull (strstr (err, "--scale-offsets"));
  g_assert_cmpint (RUN (&err, "replay", t, "--target", f->a->path, "--scale-offsets", "--csv", csv),
                   ==, 0);
  bs = sys_attr (f->a, "queue/logical_block_size");
  block = g_ascii_strtoull (bs, NULL, 10);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_true (g_str_has_prefix (lines[0], "process,pid,device,op,offset_bytes,bytes,"));
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) cols = g_strsplit (lines[i], ",", -1);
      guint64 off = g_ascii_strtoull (cols[4], NULL, 10);
      guint64 len = g_ascii_strtoull (cols[5], NULL, 10);
      g_assert_cmpuint (off % block, ==, 0);
      g_assert_cmpuint (off + len, <=, DEV_BYTES);
      g_assert_cmpstr (cols[10], ==, "0");
      max_end = MAX (max_end, off + len);
    }
  /* Spread over the target, not folded into its start. */
  g_assert_cmpuint (max_end, >, DEV_BYTES / 2);
}

/* What the block layer saw during the replay, per device. */
static guint
captured_ios (const char *path, const LoopDev *dev)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = NULL;
  guint maj, min, n = 0;

  devno (dev, &maj, &min);
  ios = trace_load_ios (path, maj, min, NULL, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      n += io->issue_ns >= 0 && io->complete_ns >= 0;
    }
  return n;
}

static void
test_capture (Fixture *f, gconstpointer data)
{
  const guint minors[] = { 0, 1 }, counts[] = { 25, 40 };
  g_autofree char *t = NULL, *err = NULL, *m0 = NULL, *m1 = NULL, *cap = NULL;
  g_autofree char *tracer_before = NULL, *tracer_after = NULL;

  if (f->a == NULL)
    return;
  if (!g_file_test ("/sys/kernel/tracing/trace", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no tracefs at /sys/kernel/tracing");
      return;
    }
  g_file_get_contents ("/sys/kernel/tracing/current_tracer", &tracer_before, NULL, NULL);
  t = write_trace (f->dir, "cap-in.txt", minors, counts, 2, 0.002, 8, FALSE);
  m0 = map_arg (0, f->a);
  m1 = map_arg (1, f->b);
  cap = g_build_filename (f->dir, "cap.txt", NULL);
  if (RUN (&err, "replay", t, "--map", m0, "--map", m1, "--capture", cap) != 0
      && (strstr (err, "tracefs") || strstr (err, "blk tracer") || strstr (err, "in use")
          || strstr (err, "another iosim capture") || strstr (err, "resource busy")))
    {
      /* Shared kernel state: another tracer user on the machine. */
      g_test_skip ("tracefs unavailable or busy with another user");
      return;
    }
  g_assert_nonnull (strstr (err, "captured"));
  g_assert_cmpuint (captured_ios (cap, f->a), ==, 25);
  g_assert_cmpuint (captured_ios (cap, f->b), ==, 40);
  g_file_get_contents ("/sys/kernel/tracing/current_tracer", &tracer_after, NULL, NULL);
  g_assert_cmpstr (tracer_after, ==, tracer_before);
}

/* `iosim restore` on journals it must not act on: a corrupt one is
 * reported (exit 1) and kept; one whose owner runs (this test) is listed
 * and left alone (exit 0). */
static void
test_restore_refusals (void)
{
  g_autofree char *err = NULL, *bad = NULL, *live = NULL, *text = NULL;

  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  bad = g_build_filename (journal_dir, "replay-1-1.journal", NULL);
  g_assert_true (g_file_set_contents (bad, "[journal]\nversion=1\nkind=replay\npid=1\n"
                                      "start_time=1\nscopes=dev:7:0;\ndevices=;\nentries=1\n\n"
                                      "[entry 0]\npath=/etc/passwd\nold=x\ncompare=true\n"
                                      "may_vanish=false\ncpuset=false\n", -1, NULL));
  g_assert_cmpint (RUN (&err, "restore"), ==, 1);
  g_assert_nonnull (strstr (err, bad));
  g_assert_nonnull (strstr (err, "not one iosim writes"));
  g_assert_true (g_file_test (bad, G_FILE_TEST_EXISTS));
  g_assert_cmpint (unlink (bad), ==, 0);

  live = g_build_filename (journal_dir, "replay-live.journal", NULL);
  text = g_strdup_printf ("[journal]\nversion=1\nkind=replay\npid=%d\nstart_time=%" G_GUINT64_FORMAT
                          "\nscopes=dev:7:0;\ndevices=;\nentries=0\n", (int) getpid (),
                          replay_journal_start_time (getpid (), NULL));
  g_assert_true (g_file_set_contents (live, text, -1, NULL));
  g_assert_cmpint (RUN (&err, "restore"), ==, 0);
  g_assert_nonnull (strstr (last_stdout, "still running"));
  g_assert_nonnull (strstr (last_stdout, "left alone"));
  g_assert_true (g_file_test (live, G_FILE_TEST_EXISTS));
  g_assert_cmpint (unlink (live), ==, 0);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  /* A journal directory of the tests' own: a user's journals are not
   * touched, and none may be left behind. */
  journal_dir = g_dir_make_tmp ("iosim-test-journals-XXXXXX", NULL);
  g_assert_nonnull (journal_dir);
  g_setenv (REPLAY_JOURNAL_DIR_ENV, journal_dir, TRUE);
#define ADD(path, fn, data) g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)
  ADD ("/replay/target/refusals", test_refusals, NULL);
  ADD ("/replay/target/restore-normal", test_restore_normal, NULL);
  ADD ("/replay/target/restore-error", test_restore_error, NULL);
  ADD ("/replay/target/restore-sigterm", test_restore_signal, GINT_TO_POINTER (SIGTERM));
  ADD ("/replay/target/restore-sigint", test_restore_signal, GINT_TO_POINTER (SIGINT));
  ADD ("/replay/target/sigkill-then-restore", test_restore_sigkill,
       GINT_TO_POINTER (AFTER_KILL_RESTORE));
  ADD ("/replay/target/sigkill-then-replay", test_restore_sigkill,
       GINT_TO_POINTER (AFTER_KILL_NEXT_REPLAY));
  ADD ("/replay/target/read-ahead-with-rotational", test_read_ahead_with_rotational, NULL);
  ADD ("/replay/target/not-taken", test_not_taken, NULL);
  g_test_add_func ("/replay/target/restore-refusals", test_restore_refusals);
  ADD ("/replay/target/map", test_map, NULL);
  ADD ("/replay/target/map-io_uring", test_map_engine, "io_uring");
  ADD ("/replay/target/map-libaio", test_map_engine, "libaio");
  ADD ("/replay/target/dry-run", test_dry_run, NULL);
  ADD ("/replay/target/scale-offsets", test_scale, NULL);
  ADD ("/replay/target/capture", test_capture, NULL);
#undef ADD
  rc = g_test_run ();
  g_free (last_stdout);
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
