/* test-validate-nfs-realdev.c — `iosim validate` with an NFS capture end
 * to end: a loop device over a file in /dev/shm, mkfs.ext4 (inode tables
 * and journal initialised at once, so that no ext4lazyinit writes land in
 * the captures), mounted in a temporary directory without the block
 * bitmap prefetch (its reads would land there too); the stored NFSv3
 * loopback capture validated there under mq-deadline and none with
 * --repeat 2, reads only and with --allow-write.  Asserts the report has
 * both schedulers in order, exactly the first trained, measured and
 * predicted figures present and positive with their intervals, the
 * workload as an NFS capture with four replays without error, the replay
 * workers (iosim-nfsd) named alike in every measured and simulated run,
 * the fitted scenario saying how the pool was fitted; reads only: that no
 * run's capture holds the setup's writes (the 300,000-byte file setup
 * fills) and that every run read that file from the device (cold); that
 * nothing was written in the mount outside iosim-nfs-replay/, and that the
 * scheduler is put back.  A SIGTERM during the first scheduler's replays
 * (of a longer capture made by tests/bench/gen-nfs-pcap.py craft) ends
 * validate with status 130, the scheduler and the device's block tracing
 * as they were.  The checks run in a subprocess; the parent
 * unmounts, detaches and deletes whatever the outcome.  Needs root,
 * losetup, mkfs.ext4, a tmpfs /dev/shm, the blk tracer, mq-deadline and
 * none, and the stored capture (IOSIM_SHARED_TESTDATA), python3 for the
 * SIGTERM case; skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <linux/magic.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay-capture.h"
#include "tests/replay/realdev-sched.h"
#include "replay/replay-nfs.h"
#include "traces/trace-results.h"

#define CAPTURE "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap"
#define BACKING_BYTES (128 * 1024 * 1024)
/* The capture's larger file: setup fills it (it is read), and its READ
 * reads all of it. */
#define BIG_FILE_BYTES 300000
#define FIRST "mq-deadline"
#define SECOND "none"

typedef struct {
  RealdevLoop dev;            /* in /dev/shm/iosim-validate-nfs-XXXXXX */
  char       *mnt;            /* DIR/mnt */
  gboolean    mounted;
} Fixture;

static char *
capture_path (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *path = dir ? g_build_filename (dir, CAPTURE, NULL) : NULL;

  if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    return NULL;
  return g_steal_pointer (&path);
}

static char *
skip_reason (void)
{
  struct statfs sfs;
  g_autofree char *filesystems = NULL;
  g_autofree char *losetup = g_find_program_in_path ("losetup");
  g_autofree char *mkfs = g_find_program_in_path ("mkfs.ext4");
  g_autofree char *capture = capture_path ();

  if (geteuid () != 0)
    return g_strdup ("needs root (loop devices, mount, queue/scheduler, tracefs)");
  if (g_getenv ("IOSIM_BIN") == NULL)
    return g_strdup ("IOSIM_BIN not set (run through meson test)");
  if (capture == NULL)
    return g_strdup ("stored capture " CAPTURE " not available (IOSIM_SHARED_TESTDATA)");
  if (losetup == NULL || mkfs == NULL)
    return g_strdup ("needs losetup and mkfs.ext4 on PATH");
  if (statfs ("/dev/shm", &sfs) != 0 || sfs.f_type != TMPFS_MAGIC)
    return g_strdup ("/dev/shm is not a tmpfs");
  if (!g_file_get_contents ("/proc/filesystems", &filesystems, NULL, NULL)
      || strstr (filesystems, "ext4") == NULL)
    return g_strdup ("the kernel has no ext4");
  return realdev_blk_tracer_missing ();
}

/* NULL when ready, else why not (what was made is left for teardown). */
static char *
fixture_setup (Fixture *f)
{
  g_autofree char *err = NULL;
  char *why = realdev_loop_attach (&f->dev, "iosim-validate-nfs", BACKING_BYTES);
  int status = -1;

  if (why != NULL)
    return why;
  if (!realdev_sched_available (f->dev.sched_file, FIRST)
      || !realdev_sched_available (f->dev.sched_file, SECOND))
    return g_strdup ("the loop device does not offer both " FIRST " and " SECOND);
  {
    const char *argv[] = { "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                           f->dev.loop, NULL };
    if (!realdev_run (argv, NULL, &err, &status) || !g_spawn_check_wait_status (status, NULL))
      return g_strdup_printf ("mkfs.ext4 failed: %s", err ? g_strstrip (err) : "?");
  }
  f->mnt = g_build_filename (f->dev.dir, "mnt", NULL);
  g_assert_cmpint (g_mkdir (f->mnt, 0755), ==, 0);
  /* ext4lazyinit reads the block bitmaps after a mount (Linux 5.9 on)
   * unless told not to; a kernel without the option mounts without it. */
  if (mount (f->dev.loop, f->mnt, "ext4", 0, "no_prefetch_block_bitmaps") != 0
      && (errno != EINVAL || mount (f->dev.loop, f->mnt, "ext4", 0, NULL) != 0))
    return g_strdup_printf ("mount %s: %s", f->dev.loop, g_strerror (errno));
  f->mounted = TRUE;
  return NULL;
}

/* Remove @dir's contents (not the backing file, which goes once the loop
 * device is detached), never following a link. */
static void
remove_contents (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);

      if (strcmp (name, "backing.img") == 0)
        continue;
      if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
        {
          remove_contents (p);
          g_rmdir (p);
        }
      else
        g_unlink (p);
    }
}

/* Every step on every path; what fails is said in the test log. */
static void
fixture_teardown (Fixture *f)
{
  if (f->mounted && umount2 (f->mnt, 0) != 0)
    {
      g_test_message ("umount %s: %s; detaching lazily", f->mnt, g_strerror (errno));
      if (umount2 (f->mnt, MNT_DETACH) != 0)
        g_test_message ("umount -l %s: %s", f->mnt, g_strerror (errno));
    }
  if (f->dev.dir)
    remove_contents (f->dev.dir);
  realdev_loop_detach (&f->dev);
  g_free (f->mnt);
}

/* ---- The checks (in the subprocess) -------------------------------------- */

#define ENV_LOOP "IOSIM_TEST_VALIDATE_NFS_LOOP"
#define ENV_DIR "IOSIM_TEST_VALIDATE_NFS_DIR"

typedef struct {
  const char *name;
  gboolean    allow_write;
  gboolean    sigterm;       /* stop it during the first scheduler's runs */
} Case;

typedef struct {
  const Case *c;
  const char *loop, *dir;
  char       *mnt, *work, *json, *skip, *capture;
} Child;

static double
member_number (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);

  g_assert_nonnull (n);
  g_assert_cmpint (json_node_get_value_type (n), ==, G_TYPE_DOUBLE);
  return json_node_get_double (n);
}

static gboolean
has_process (JsonObject *side, const char *name)
{
  JsonArray *processes = json_object_get_array_member (side, "processes");

  for (guint i = 0; processes && i < json_array_get_length (processes); i++)
    if (g_strcmp0 (json_object_get_string_member (json_array_get_object_element (processes, i),
                                                  "name"), name) == 0)
      return TRUE;
  return FALSE;
}

/* Present and positive, over two runs, with intervals holding the mean;
 * the replay workers among the processes. */
static void
check_side (JsonObject *sched, const char *side_name)
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
      JsonArray *interval = json_object_get_array_member (ci, figures[i]);

      g_printerr ("# %s %s %s = %g\n", json_object_get_string_member (sched, "sched"), side_name,
                  figures[i], v);
      g_assert_cmpfloat (v, >, 0);
      g_assert_nonnull (interval);
      g_assert_cmpfloat (json_array_get_double_element (interval, 0), <=, v);
      g_assert_cmpfloat (json_array_get_double_element (interval, 1), >=, v);
    }
  g_assert_true (has_process (side, REPLAY_NFS_WORKER_COMM ".1"));
}

static void
check_workload (JsonObject *root, const Child *c)
{
  JsonObject *w = json_object_get_object_member (root, "workload");
  JsonArray *runs;

  g_assert_nonnull (w);
  g_assert_cmpstr (json_object_get_string_member (w, "kind"), ==, "nfs");
  g_assert_cmpstr (json_object_get_string_member (w, "capture"), ==, c->capture);
  g_assert_cmpstr (json_object_get_string_member (w, "target_dir"), ==, c->mnt);
  g_assert_cmpint (json_object_get_int_member (w, "threads"), ==, 8);
  runs = json_object_get_array_member (w, "runs");
  g_assert_cmpuint (json_array_get_length (runs), ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      JsonObject *r = json_array_get_object_element (runs, i);

      g_assert_cmpstr (json_object_get_string_member (r, "sched"), ==, i < 2 ? FIRST : SECOND);
      g_assert_cmpint (json_object_get_int_member (r, "run"), ==, i % 2 + 1);
      g_assert_cmpint (json_object_get_int_member (r, "ops"), >, 0);
      g_assert_cmpint (json_object_get_int_member (r, "errors"), ==, 0);
      g_assert_true (g_file_test (json_object_get_string_member (r, "replay_json"),
                                  G_FILE_TEST_IS_REGULAR));
      g_assert_true (g_file_test (json_object_get_string_member (r, "replay_csv"),
                                  G_FILE_TEST_IS_REGULAR));
    }
}

static void
check_json (const Child *c)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *root;
  JsonArray *scheds;

  g_assert_true (json_parser_load_from_file (parser, c->json, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  scheds = json_object_get_array_member (root, "schedulers");
  g_assert_cmpuint (json_array_get_length (scheds), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *s = json_array_get_object_element (scheds, i);

      g_assert_cmpstr (json_object_get_string_member (s, "sched"), ==, i == 0 ? FIRST : SECOND);
      g_assert_cmpint (json_object_get_boolean_member (s, "trained"), ==, i == 0);
      check_side (s, "predicted");
      check_side (s, "measured");
      g_assert_cmpfloat (member_number (s, "demerit_ns"), >=, 0);
    }
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root,
                                                                         "ranking_measured")),
                    ==, 2);
  check_workload (root, c);
}

typedef struct {
  guint64  read_bytes, write_bytes;
  guint64  worker_read_bytes;   /* reads by the replay's workers */
  gboolean has_worker;          /* a row of any of the replay's workers */
  gboolean has_worker_1;        /* a row of REPLAY_NFS_WORKER_COMM ".1" */
} RunBytes;

static RunBytes
run_bytes (const Child *c, const char *prefix, const char *sched, char kind, guint r)
{
  g_autofree char *base = g_strdup_printf ("%s-%s-%c%u.csv", prefix, sched, kind, r);
  g_autofree char *path = g_build_filename (c->work, base, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceResults) results = trace_results_load (path, &error);
  RunBytes b = { 0 };

  g_assert_no_error (error);
  for (guint i = 0; i < trace_results_len (results); i++)
    {
      const TraceResult *row = trace_results_get (results, i);
      gboolean worker = g_str_has_prefix (row->process, REPLAY_NFS_WORKER_COMM ".");

      if (row->op == TRACE_OP_READ)
        {
          b.read_bytes += row->bytes;
          b.worker_read_bytes += worker ? row->bytes : 0;
        }
      else if (row->op == TRACE_OP_WRITE)
        b.write_bytes += row->bytes;
      b.has_worker |= worker;
      b.has_worker_1 |= strcmp (row->process, REPLAY_NFS_WORKER_COMM ".1") == 0;
    }
  g_printerr ("# %s: read %" G_GUINT64_FORMAT " bytes (workers %" G_GUINT64_FORMAT "), wrote %"
              G_GUINT64_FORMAT "\n", base, b.read_bytes, b.worker_read_bytes, b.write_bytes);
  return b;
}

/* Every run, measured and simulated, has the first worker under one name
 * wherever a worker reached the device: with writes, a measured run's
 * only device read can be 1 KiB of metadata that another task happened to
 * read first (seen once in CI: no worker row at all, the writes being the
 * flusher's), and then there is no worker to name.  Reads only: no
 * capture holds setup's writes, and each read the big file from the
 * device, so the workers are always there. */
static void
check_runs (const Child *c)
{
  static const char *const scheds[] = { FIRST, SECOND };

  for (guint s = 0; s < 2; s++)
    for (guint r = 1; r <= 2; r++)
      {
        RunBytes m = run_bytes (c, "measured", scheds[s], 'r', r);
        RunBytes p = run_bytes (c, "predicted", scheds[s], 's', r);

        g_assert_true (m.has_worker_1 || !m.has_worker);
        g_assert_true (p.has_worker_1);
        if (!c->c->allow_write)
          {
            g_assert_cmpuint (m.write_bytes, <, BIG_FILE_BYTES);
            g_assert_cmpuint (m.worker_read_bytes, >=, BIG_FILE_BYTES);
          }
      }
}

/* The mount holds the file system's own lost+found and the replay's
 * folder, nothing else. */
static void
check_mount (const Child *c)
{
  g_autoptr (GDir) d = g_dir_open (c->mnt, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_printerr ("# in the mount: %s\n", name);
      g_assert_true (strcmp (name, "lost+found") == 0 || strcmp (name, REPLAY_NFS_SUBDIR) == 0);
    }
}

static void
check_scenario (const Child *c)
{
  g_autofree char *path = g_build_filename (c->work, "fitted.ini", NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "by a pool of 8 worker threads (comm " REPLAY_NFS_WORKER_COMM));
  g_assert_nonnull (strstr (text, "The pool is fitted as a pool"));
  /* The workers that did block I/O with data are one pool of the
   * simulator; the stored capture moves so few blocks that sometimes only
   * one worker did (a single traced process then, not a pool). */
  if (strstr (text, "[process " REPLAY_NFS_WORKER_COMM "]\n") != NULL)
    {
      g_assert_nonnull (strstr (text, "\ntrace_comm = " REPLAY_NFS_WORKER_COMM "\n"));
      g_assert_nonnull (strstr (text, "\nstream = shared\n"));
      g_assert_null (strstr (text, "[process " REPLAY_NFS_WORKER_COMM "-"));
    }
  else
    {
      const char *one = strstr (text, "[process " REPLAY_NFS_WORKER_COMM "-");
      g_assert_nonnull (one);
      g_assert_null (strstr (one + 1, "[process " REPLAY_NFS_WORKER_COMM "-"));
    }
}

/* TRUE (and the reason in DIR/skip) when tracefs or the device is someone
 * else's now: nothing this test can judge. */
static gboolean
skip_if_not_ours (const Child *c, int status, const char *err)
{
  g_autofree char *why = NULL;

  if (g_spawn_check_wait_status (status, NULL)
      || (strstr (err, "another iosim") == NULL && strstr (err, "tracer is in use") == NULL))
    return FALSE;
  why = g_strdup_printf ("tracefs or the device is not ours to use: %s", err);
  g_assert_true (g_file_set_contents (c->skip, why, -1, NULL));
  return TRUE;
}

/* 1,000 READs of 4 KiB of one 16 MiB file, 1 ms apart: a run of about
 * a second, so that a signal finds the replay running. */
static char *
craft_long_capture (const char *dir)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *gen = g_test_build_filename (G_TEST_DIST, "bench", "gen-nfs-pcap.py", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (dir, "long.pcap", NULL);
  int status = -1;

  g_ptr_array_add (argv, g_strdup (python));
  g_ptr_array_add (argv, g_strdup (gen));
  g_ptr_array_add (argv, g_strdup ("craft"));
  g_ptr_array_add (argv, g_strdup (path));
  g_ptr_array_add (argv, g_strdup ("lookup:long.dat:fhl"));
  g_ptr_array_add (argv, g_strdup ("getattr:fhl:16777216"));
  for (guint i = 0; i < 1000; i++)
    g_ptr_array_add (argv, g_strdup_printf ("read:fhl:%u:4096", (i * 397u % 4096u) * 4096u));
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return path;
}

static char *
read_trimmed (const char *path)
{
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strdup (g_strstrip (text));
}

/* SIGTERM a quarter of a second into the first scheduler's replays: exit
 * 130, and the capture's block tracing switched off again (the scheduler
 * is checked by the caller). */
static void
child_sigterm (Child *c, const char *sched_file)
{
  g_autofree char *capture = craft_long_capture (c->dir);
  g_autofree char *err_path = g_build_filename (c->dir, "sigterm.err", NULL);
  g_autofree char *err = NULL;
  g_autofree char *enable_path = g_strdup_printf ("/sys/block/%s/trace/enable",
                                                  strrchr (c->loop, '/') + 1);
  g_autofree char *enable_before = read_trimmed (enable_path);
  g_autofree char *enable_after = NULL;
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", c->loop, "--target-dir",
                         c->mnt, "--sched", FIRST "," SECOND, "--repeat", "3", "--work-dir",
                         c->work, capture, NULL };
  g_autoptr (GError) error = NULL;
  gboolean switched = FALSE;
  int status = -1, err_fd;
  GPid pid;

  err_fd = g_open (err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (err_fd, >=, 0);
  g_assert_true (g_spawn_async_with_fds (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                         NULL, NULL, &pid, -1, -1, err_fd, &error));
  g_assert_no_error (error);
  g_assert_cmpint (close (err_fd), ==, 0);
  for (int i = 0; i < 2000 && !switched; i++)
    {
      g_autofree char *now = realdev_active_sched (sched_file);

      switched = g_strcmp0 (now, FIRST) == 0;
      if (!switched)
        g_usleep (10000);
    }
  g_usleep (250000);
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
  g_assert_nonnull (strstr (err, "interrupted"));
  enable_after = read_trimmed (enable_path);
  g_assert_cmpstr (enable_after, ==, enable_before);
  check_mount (c);
}

static void
run_child (const Case *cs, const char *loop, const char *dir)
{
  Child c = { .c = cs, .loop = loop, .dir = dir };
  g_autofree char *sched_file = g_strdup_printf ("/sys/block/%s/queue/scheduler",
                                                 strrchr (loop, '/') + 1);
  g_autofree char *out = NULL, *err = NULL, *after = NULL;
  /* A start that neither validated scheduler is, where the device has one. */
  const char *start = realdev_sched_available (sched_file, "kyber") ? "kyber" : SECOND;
  int status = -1;

  c.mnt = g_build_filename (dir, "mnt", NULL);
  c.work = g_build_filename (dir, "work", NULL);
  c.json = g_build_filename (dir, "validate.json", NULL);
  c.skip = g_build_filename (dir, "skip", NULL);
  c.capture = capture_path ();
  g_assert_true (realdev_write_sched (sched_file, start));
  if (cs->sigterm)
    {
      child_sigterm (&c, sched_file);
      goto restored;
    }
  {
    const char *argv[] = { g_getenv ("IOSIM_BIN"), "validate", "--target", loop, "--target-dir",
                           c.mnt, "--sched", FIRST "," SECOND, "--repeat", "2", "--json", c.json,
                           "--work-dir", c.work, cs->allow_write ? "--allow-write" : c.capture,
                           cs->allow_write ? c.capture : NULL, NULL };
    g_assert_true (realdev_run (argv, &out, &err, &status));
  }
  g_printerr ("# iosim validate's stderr:\n%s\n# its table:\n%s", err, out);
  if (!skip_if_not_ours (&c, status, err))
    {
      g_assert_true (g_spawn_check_wait_status (status, NULL));
      g_assert_nonnull (strstr (out, "workload: NFS capture"));
      check_json (&c);
      check_runs (&c);
      check_scenario (&c);
      check_mount (&c);
    }
restored:
  after = realdev_active_sched (sched_file);
  g_assert_cmpstr (after, ==, start);
  g_free (c.mnt);
  g_free (c.work);
  g_free (c.json);
  g_free (c.skip);
  g_free (c.capture);
}

/* ---- The parent ------------------------------------------------------------ */

static void
test_case (gconstpointer data)
{
  const Case *cs = data;
  Fixture f = { 0 };
  g_autofree char *reason = NULL, *skip = NULL, *child_reason = NULL, *python = NULL;
  gboolean passed;

  if (g_test_subprocess ())
    {
      run_child (cs, g_getenv (ENV_LOOP), g_getenv (ENV_DIR));
      return;
    }
  python = g_find_program_in_path ("python3");
  reason = skip_reason ();
  if (reason == NULL && cs->sigterm && python == NULL)
    reason = g_strdup ("python3 not installed (tests/bench/gen-nfs-pcap.py makes the capture)");
  if (reason == NULL)
    reason = fixture_setup (&f);
  if (reason != NULL)
    {
      fixture_teardown (&f);
      g_test_skip (reason);
      return;
    }
  g_setenv (ENV_LOOP, f.dev.loop, TRUE);
  g_setenv (ENV_DIR, f.dev.dir, TRUE);
  g_test_trap_subprocess (NULL, 100 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  passed = g_test_trap_has_passed ();
  skip = g_build_filename (f.dev.dir, "skip", NULL);
  if (g_file_get_contents (skip, &child_reason, NULL, NULL))
    g_test_skip (child_reason);
  fixture_teardown (&f);
  g_assert_true (passed);
}

static const Case cases[] = {
  { "reads-only", FALSE, FALSE },
  { "allow-write", TRUE, FALSE },
  { "sigterm-restores", FALSE, TRUE },
};

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/validate/nfs-realdev/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  return g_test_run ();
}
