/* test-replay-realdev.c — replay on a loop device: reads, closed and afap
 * timing, the write policy, refusal of a busy or mounted target, dry runs
 * that touch nothing, and the `iosim replay` command on a trace file.
 * Issue 12: a write at sector 2^55 (whose byte offset wrapped to 0) in
 * blkparse text and binary blktrace is refused with and without --wrap and
 * leaves the device's first bytes as they were; a dry run reports the
 * counts the run has; every engine refuses a plan that reaches past the
 * open device, before or at the I/O.
 * Needs root and /dev/loop-control; skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include <linux/loop.h>
#include <sys/ioctl.h>

#include "loopdev.h"
#include "replay/replay-engine-private.h"
#include "replay/replay.h"
#include "traces/trace.h"

#define DEV_BYTES (16u << 20)

typedef struct {
  LoopDev *dev;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *reason = NULL;

  f->dev = loopdev_new (DEV_BYTES, &reason);
  if (f->dev == NULL)
    g_test_skip (reason);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->dev, loopdev_free);
}

static TraceIo
mkio (guint32 pid, const char *comm, TraceOp op, guint64 sector, gint64 queue_ns)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.pid = pid;
  g_strlcpy (io.comm, comm, sizeof io.comm);
  io.op = op;
  io.sector = sector;
  io.nr_sectors = 8;
  io.queue_ns = queue_ns;
  io.issue_ns = queue_ns + 10000;
  io.complete_ns = queue_ns + 60000;
  return io;
}

/* @n reads per process from two processes, @gap_ns apart, plus @writes
 * writes from a third. */
static GArray *
workload (guint n, gint64 gap_ns, guint writes)
{
  GArray *ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));

  for (guint i = 0; i < n; i++)
    {
      TraceIo a = mkio (1000, "reader", TRACE_OP_READ, 8 * i, 1000000 + i * gap_ns);
      TraceIo b = mkio (2000, "", TRACE_OP_READ, 16384 + 8 * i, 1000000 + i * gap_ns + gap_ns / 2);
      g_array_append_val (ios, a);
      g_array_append_val (ios, b);
    }
  for (guint i = 0; i < writes; i++)
    {
      TraceIo w = mkio (3000, "writer", TRACE_OP_WRITE, 4096 + 8 * i, 1000000 + i * gap_ns);
      g_array_append_val (ios, w);
    }
  return ios;
}

static guint64
reads_completed (const LoopDev *dev)
{
  g_autofree char *name = g_path_get_basename (dev->path);
  g_autofree char *path = g_build_filename ("/sys/block", name, "stat", NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_ascii_strtoull (g_strchug (text), NULL, 10);
}

static gboolean
backing_all_bytes (LoopDev *dev, guint64 offset, gsize len, guint8 value)
{
  g_autofree guint8 *buf = g_malloc (len);

  g_assert_true (loopdev_read_backing (dev, offset, len, buf));
  for (gsize i = 0; i < len; i++)
    if (buf[i] != value)
      return FALSE;
  return TRUE;
}

static void
test_reads (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  g_autofree char *dir = NULL, *csv = NULL, *json = NULL, *text = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  ReplayOptions opts;
  guint64 reads_before;
  FILE *out;

  if (f->dev == NULL)
    return;
  ios = workload (50, 500000, 0);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  reads_before = reads_completed (f->dev);
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->ios, ==, 100);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->bytes, ==, 100 * 4096);
  /* The device really served them (O_DIRECT: no page cache in between). */
  g_assert_cmpuint (reads_completed (f->dev) - reads_before, >=, 100);
  g_assert_cmpuint (res->processes->len, ==, 2);
  g_assert_cmpstr (g_array_index (res->processes, ReplayProcessSummary, 0).name, ==, "reader-1000");
  g_assert_cmpstr (g_array_index (res->processes, ReplayProcessSummary, 1).name, ==, "pid2000");
  for (guint p = 0; p < res->io_results->len; p++)
    {
      const GArray *r = g_ptr_array_index (res->io_results, p);
      g_assert_cmpuint (r->len, ==, 50);
      for (guint i = 0; i < r->len; i++)
        {
          const ReplayIoResult *x = &g_array_index (r, ReplayIoResult, i);
          /* Never early: the thread waits for the intended time. */
          g_assert_cmpint (x->issue_ns, >=, x->intended_ns);
          g_assert_cmpint (x->complete_ns, >=, x->issue_ns);
        }
    }
  g_assert_cmpint (res->issue_error_p50_ns, >=, 0);
  g_assert_cmpint (res->issue_error_p50_ns, <=, res->issue_error_p99_ns);
  g_assert_cmpint (res->issue_error_p99_ns, <=, res->issue_error_max_ns);
  g_assert_cmpfloat (res->intended_iops, >, 0);
  g_test_message ("intended %.0f IOPS, achieved %.0f IOPS, issue error p50 %" G_GINT64_FORMAT
                  " ns p99 %" G_GINT64_FORMAT " ns", res->intended_iops, res->achieved_iops,
                  res->issue_error_p50_ns, res->issue_error_p99_ns);

  dir = g_dir_make_tmp ("iosim-replay-XXXXXX", &error);
  g_assert_no_error (error);
  csv = g_build_filename (dir, "replay.csv", NULL);
  json = g_build_filename (dir, "replay.json", NULL);
  out = fopen (csv, "w");
  g_assert_nonnull (out);
  replay_result_write_csv (res, out);
  g_assert_cmpint (fclose (out), ==, 0);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  {
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), ==, 1 + 100 + 1);  /* header, rows, "" after the last \n */
    g_assert_true (g_str_has_prefix (lines[0], "process,pid,device,op,offset_bytes"));
  }
  g_assert_true (replay_result_write_json (res, json, &error));
  g_assert_no_error (error);
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  {
    JsonObject *root = json_node_get_object (json_parser_get_root (parser));
    g_assert_cmpint (json_object_get_int_member (root, "ios"), ==, 100);
    g_assert_true (json_object_has_member (root, "issue_error_p50_ns"));
    g_assert_true (json_object_has_member (root, "issue_error_p99_ns"));
    g_assert_true (json_object_has_member (root, "achieved_iops"));
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "processes")), ==, 2);
  }
  unlink (csv);
  unlink (json);
  rmdir (dir);
}

/* Closed and afap timing keep per-process order and queue depth 1. */
static void
check_qd1 (const ReplayResult *res, gboolean closed)
{
  for (guint p = 0; p < res->io_results->len; p++)
    {
      const GArray *r = g_ptr_array_index (res->io_results, p);
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      for (guint i = 1; i < r->len; i++)
        {
          const ReplayIoResult *prev = &g_array_index (r, ReplayIoResult, i - 1);
          const ReplayIoResult *x = &g_array_index (r, ReplayIoResult, i);
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
          g_assert_cmpint (x->issue_ns, >=, prev->complete_ns);
          if (closed && io->think_ns >= 0)
            g_assert_cmpint (x->issue_ns - prev->complete_ns, >=, io->think_ns);
        }
    }
}

static void
test_closed_afap (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) closed = NULL, afap = NULL;
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  ios = workload (40, 200000, 0);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.timing = REPLAY_TIMING_CLOSED;
  closed = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (closed->ios, ==, 80);
  check_qd1 (closed, TRUE);

  opts.timing = REPLAY_TIMING_AFAP;
  afap = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (afap->ios, ==, 80);
  g_assert_cmpfloat (afap->intended_iops, ==, 0);
  check_qd1 (afap, FALSE);
}

/* The intended times of process @p's I/Os: @key's times (Q or D) of its
 * trace I/Os in order, less the trace's first such time, over @speed. */
static void
check_intended (const ReplayResult *res, const GArray *ios, guint p, gboolean issue_events,
                double speed)
{
  const GArray *r = g_ptr_array_index (res->io_results, p);
  const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
  gint64 first = G_MAXINT64;
  guint k = 0;

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *t = &g_array_index (ios, TraceIo, i);
      first = MIN (first, issue_events ? t->issue_ns : t->queue_ns);
    }
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *t = &g_array_index (ios, TraceIo, i);
      gint64 want;

      if (t->pid != proc->pid)
        continue;
      want = (gint64) (((issue_events ? t->issue_ns : t->queue_ns) - first) / speed);
      g_assert_cmpint (llabs (g_array_index (r, ReplayIoResult, k).intended_ns - want), <=, 1);
      g_assert_cmpint (g_array_index (r, ReplayIoResult, k).issue_ns, >=, want);
      k++;
    }
  g_assert_cmpuint (k, ==, r->len);
}

/* Scaled timing (--speed) and D instead of Q times (--events issue) on a
 * real device: each I/O's intended time is its trace time, rescaled, and
 * it is never issued before it.  D - Q grows along the trace, so Q and D
 * schedules differ. */
static void
test_speed_events (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = workload (30, 400000, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) fast = NULL, issue = NULL;
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  for (guint i = 0; i < ios->len; i++)
    g_array_index (ios, TraceIo, i).issue_ns += (gint64) i * 7000;
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.speed = 2.5;
  fast = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fast->ios, ==, 60);
  opts.speed = 1.0;
  opts.events = REPLAY_EVENTS_ISSUE;
  issue = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (issue->ios, ==, 60);
  for (guint p = 0; p < 2; p++)
    {
      check_intended (fast, ios, p, FALSE, 2.5);
      check_intended (issue, ios, p, TRUE, 1.0);
    }
  /* The intended rate follows the speed. */
  g_assert_cmpfloat (fabs (fast->intended_iops / issue->intended_iops - 2.5), <, 0.25);
}

static void
test_write_policy (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) refused = NULL, reads = NULL, writes = NULL;
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  ios = workload (10, 100000, 5);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  refused = replay_run_ios (ios, &opts, &error);
  g_assert_null (refused);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES);
  g_assert_nonnull (strstr (error->message, "5 writes"));
  g_clear_error (&error);
  g_assert_true (backing_all_bytes (f->dev, 4096 * 512, 5 * 4096, 0));

  opts.reads_only = TRUE;
  reads = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (reads->ios, ==, 20);
  g_assert_cmpuint (reads->plan->skipped_writes, ==, 5);
  g_assert_true (backing_all_bytes (f->dev, 4096 * 512, 5 * 4096, 0));

  opts.reads_only = FALSE;
  opts.allow_write = TRUE;
  writes = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (writes->ios, ==, 25);
  g_assert_cmpuint (writes->errors, ==, 0);
  g_assert_true (backing_all_bytes (f->dev, 4096 * 512, 5 * 4096, 0x5a));
}

static void
test_in_use (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;
  int holder;

  if (f->dev == NULL)
    return;
  holder = open (f->dev->path, O_RDONLY | O_EXCL | O_CLOEXEC);
  g_assert_cmpint (holder, >=, 0);
  ios = workload (5, 100000, 0);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_null (res);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "in use"));
  g_assert_nonnull (strstr (error->message, f->dev->path));
  close (holder);
}

static void
test_mounted (Fixture *f, gconstpointer data)
{
  g_autofree char *mkfs = g_find_program_in_path ("mkfs.ext2");
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  g_autofree char *mnt = NULL;
  ReplayOptions opts;
  int status = 0;

  if (f->dev == NULL)
    return;
  if (mkfs == NULL)
    {
      g_test_skip ("mkfs.ext2 not installed");
      return;
    }
  {
    const char *argv[] = { mkfs, "-q", "-F", f->dev->path, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                                 NULL, NULL, NULL, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  mnt = g_dir_make_tmp ("iosim-mnt-XXXXXX", &error);
  g_assert_no_error (error);
  if (mount (f->dev->path, mnt, "ext2", MS_RDONLY, NULL) != 0)
    {
      g_test_skip_printf ("cannot mount ext2 on %s: %s", f->dev->path, g_strerror (errno));
      rmdir (mnt);
      return;
    }
  ios = workload (5, 100000, 0);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_cmpint (umount2 (mnt, 0), ==, 0);
  rmdir (mnt);
  g_assert_null (res);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "mounted"));
}

static void
test_dry_run (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;
  guint64 before;
  int holder;

  if (f->dev == NULL)
    return;
  /* Held exclusively: a dry run must not even try to open the device. */
  holder = open (f->dev->path, O_RDONLY | O_EXCL | O_CLOEXEC);
  g_assert_cmpint (holder, >=, 0);
  ios = workload (20, 100000, 3);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.allow_write = TRUE;
  opts.dry_run = TRUE;
  before = reads_completed (f->dev);
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_true (res->dry_run);
  g_assert_cmpuint (res->plan->n_ios, ==, 43);
  g_assert_cmpuint (res->plan->n_writes, ==, 3);
  g_assert_cmpuint (res->ios, ==, 0);
  g_assert_cmpuint (reads_completed (f->dev), ==, before);
  g_assert_true (backing_all_bytes (f->dev, 4096 * 512, 3 * 4096, 0));
  close (holder);
}

/* SCHED_FIFO workers where allowed; a clear error where not. */
static void
test_realtime (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  ios = workload (20, 200000, 0);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.rt_priority = 1;
  res = replay_run_ios (ios, &opts, &error);
  if (res == NULL)
    {
      g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "SCHED_FIFO"));
      g_test_skip_printf ("SCHED_FIFO not allowed here: %s", error->message);
      return;
    }
  g_assert_cmpuint (res->ios, ==, 40);
  g_assert_cmpuint (res->errors, ==, 0);
}

static gpointer
raise_later (gpointer data)
{
  g_usleep (300 * 1000);
  *(volatile sig_atomic_t *) data = 1;
  return NULL;
}

/* A stop request (Ctrl-C in the command) ends a long replay soon and keeps
 * what was measured. */
static void
test_stop (Fixture *f, gconstpointer data)
{
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  volatile sig_atomic_t stop = 0;
  ReplayOptions opts;
  GThread *raiser;
  gint64 start;

  if (f->dev == NULL)
    return;
  ios = workload (100, 100 * 1000 * 1000, 0);   /* 10 s of trace */
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.stop = &stop;
  raiser = g_thread_new ("raise", raise_later, (gpointer) &stop);
  start = g_get_monotonic_time ();
  res = replay_run_ios (ios, &opts, &error);
  g_thread_join (raiser);
  g_assert_no_error (error);
  g_assert_true (res->interrupted);
  g_assert_cmpuint (res->ios, >=, 1);
  g_assert_cmpuint (res->ios, <, 200);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 3 * G_USEC_PER_SEC);
}

/* ftrace blk text as `iosim capture` writes it: Q, D, C per I/O. */
static char *
write_ftrace_trace (const char *dir, guint n, gboolean with_write)
{
  g_autoptr (GString) s = g_string_new ("# tracer: blk\n#\n");
  char *path = g_build_filename (dir, "trace.txt", NULL);

  for (guint i = 0; i < n; i++)
    {
      guint pid = i % 2 ? 4757 : 4756;
      const char *comm = i % 2 ? "fio" : "dd";
      const char *rwbs = with_write && i == n - 1 ? "WS" : "RS";
      double t = 408.0 + i * 0.001;
      guint64 sector = 8 * i;

      g_string_append_printf (s, "%16s-%-5u [001] d..1. %10.6f: %3d,%-3d %2s %3s %" G_GUINT64_FORMAT
                              " + 8 [%s]\n", comm, pid, t, 7, 0, "Q", rwbs, sector, comm);
      g_string_append_printf (s, "%16s-%-5u [001] d..1. %10.6f: %3d,%-3d %2s %3s %" G_GUINT64_FORMAT
                              " + 8 [%s]\n", comm, pid, t + 0.00001, 7, 0, "D", rwbs, sector, comm);
      g_string_append_printf (s, "%16s-%-5u [001] d.h1. %10.6f: %3d,%-3d %2s %3s %" G_GUINT64_FORMAT
                              " + 8 [0]\n", "<idle>", 0, t + 0.0002, 7, 0, "C", rwbs, sector);
    }
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  return path;
}

static int
run_iosim (const char *const *args, char **out, char **err)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_ptr_array_add (argv, (gpointer) bin);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &status, &error));
  g_assert_no_error (error);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static void
test_cli (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *trace = NULL, *trace_w = NULL, *csv = NULL, *json = NULL;
  g_autofree char *out = NULL, *err = NULL, *text = NULL;

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  dir = g_dir_make_tmp ("iosim-replay-cli-XXXXXX", &error);
  g_assert_no_error (error);
  trace = write_ftrace_trace (dir, 60, FALSE);
  csv = g_build_filename (dir, "out.csv", NULL);
  json = g_build_filename (dir, "out.json", NULL);
  {
    const char *args[] = { "replay", trace, "--target", f->dev->path, "--csv", csv,
                           "--json", json, NULL };
    int rc = run_iosim (args, &out, &err);
    g_test_message ("stdout:\n%s\nstderr:\n%s", out, err);
    g_assert_cmpint (rc, ==, 0);
  }
  g_assert_nonnull (strstr (out, "issue error"));
  g_assert_nonnull (strstr (out, "dd-4756"));
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  {
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), ==, 1 + 60 + 1);
  }
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (json, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"issue_error_p50_ns\""));

  /* A trace with a write: refused without a choice, with a message that says what to do. */
  unlink (trace);
  trace_w = write_ftrace_trace (dir, 10, TRUE);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { "replay", trace_w, "--target", f->dev->path, NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), !=, 0);
    g_assert_nonnull (strstr (err, "1 write"));
    g_assert_nonnull (strstr (err, "--reads-only"));
  }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { "replay", trace_w, "--target", f->dev->path, "--dry-run",
                           "--reads-only", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, f->dev->path));
    g_assert_nonnull (strstr (out, "1 writes (--reads-only)"));
  }
  unlink (trace_w);
  unlink (csv);
  unlink (json);
  rmdir (dir);
}

/* ---- issue 12: the overflow trace ---------------------------------------- */

/* Sector 2^55: times 512 it is 2^64, which wrapped to byte 0. */
#define OVERFLOW_SECTOR (G_GUINT64_CONSTANT (1) << 55)
#define PATTERN_BYTES (64u << 10)

typedef struct {
  const char *name;
  gboolean    binary;       /* blktrace instead of blkparse text */
  gboolean    wrap;
} OverflowCli;

static const OverflowCli overflow_cli_cases[] = {
  { "blkparse", FALSE, FALSE },
  { "blkparse-wrap", FALSE, TRUE },
  { "blktrace", TRUE, FALSE },
  { "blktrace-wrap", TRUE, TRUE },
};

/* Q, D, C of one 8-sector I/O. */
static void
add_lifecycle (GArray *recs, guint32 pid, const char *comm, guint32 rwbs, guint64 sector,
               gint64 t_ns)
{
  static const TraceAction actions[] = { TRACE_ACT_QUEUE, TRACE_ACT_ISSUE, TRACE_ACT_COMPLETE };

  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    {
      TraceRecord r;

      memset (&r, 0, sizeof r);
      r.time_ns = t_ns + (gint64) i * 20000;
      r.dev_major = 7;
      r.dev_minor = 0;
      r.cpu = 0;
      r.pid = actions[i] == TRACE_ACT_COMPLETE ? 0 : pid;
      r.action = actions[i];
      r.rwbs = rwbs;
      r.sector = sector;
      r.nr_sectors = 8;
      if (actions[i] != TRACE_ACT_COMPLETE)
        g_strlcpy (r.comm, comm, sizeof r.comm);
      g_array_append_val (recs, r);
    }
}

/* A read at sector 8 and a write at sector 64, both inside, and between
 * them the write at sector 2^55: refused, none of them may happen. */
static char *
write_overflow_trace (const char *dir, gboolean binary)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, TRUE, sizeof (TraceRecord));
  char *path = g_build_filename (dir, binary ? "overflow.blktrace.0" : "overflow.blkparse", NULL);

  add_lifecycle (recs, 1234, "dd", TRACE_RWBS_READ, 8, 1000000);
  add_lifecycle (recs, 1234, "dd", TRACE_RWBS_WRITE, OVERFLOW_SECTOR, 2000000);
  add_lifecycle (recs, 1234, "dd", TRACE_RWBS_WRITE, 64, 3000000);
  if (binary)
    {
      g_autoptr (TraceBlktraceWriter) w = trace_blktrace_writer_new ();
      g_autoptr (GByteArray) bytes = g_byte_array_new ();

      for (guint i = 0; i < recs->len; i++)
        trace_blktrace_writer_append (w, &g_array_index (recs, TraceRecord, i), bytes);
      g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len, NULL));
    }
  else
    {
      g_autoptr (GString) text = g_string_new (NULL);

      for (guint i = 0; i < recs->len; i++)
        trace_format_blkparse (&g_array_index (recs, TraceRecord, i), i + 1, text);
      g_assert_nonnull (strstr (text->str, " 36028797018963968 + 8"));
      g_assert_true (g_file_set_contents (path, text->str, (gssize) text->len, NULL));
    }
  return path;
}

/* A pattern no replay writes (replays write 0x5a), on the device's first
 * PATTERN_BYTES, through the loop device and flushed to the backing file. */
static void
fill_pattern (LoopDev *dev, guint8 *pattern)
{
  for (guint i = 0; i < PATTERN_BYTES; i++)
    pattern[i] = (guint8) (i * 7 + 3);
  g_assert_cmpint (pwrite (dev->fd, pattern, PATTERN_BYTES, 0), ==, PATTERN_BYTES);
  g_assert_cmpint (fsync (dev->fd), ==, 0);
}

static void
test_overflow_cli (Fixture *f, gconstpointer data)
{
  const OverflowCli *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *trace = NULL, *base = NULL;
  g_autofree guint8 *pattern = g_malloc (PATTERN_BYTES), *after = g_malloc (PATTERN_BYTES);

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  dir = g_dir_make_tmp ("iosim-replay-overflow-XXXXXX", &error);
  g_assert_no_error (error);
  trace = write_overflow_trace (dir, c->binary);
  base = g_path_get_basename (trace);
  fill_pattern (f->dev, pattern);
  for (guint dry = 0; dry < 2; dry++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_autoptr (GPtrArray) args = g_ptr_array_new ();
      int rc;

      g_ptr_array_add (args, (gpointer) "replay");
      g_ptr_array_add (args, trace);
      g_ptr_array_add (args, (gpointer) "--target");
      g_ptr_array_add (args, f->dev->path);
      g_ptr_array_add (args, (gpointer) "--allow-write");
      if (dry)
        g_ptr_array_add (args, (gpointer) "--dry-run");
      if (c->wrap)
        g_ptr_array_add (args, (gpointer) "--wrap");
      g_ptr_array_add (args, NULL);
      rc = run_iosim ((const char *const *) args->pdata, &out, &err);

      g_test_message ("%s%s: rc %d\nstdout:\n%s\nstderr:\n%s", c->name, dry ? " --dry-run" : "",
                      rc, out, err);
      g_assert_cmpint (rc, !=, 0);
      /* The refusal names the record: the planner by pid and sector, a
       * reader that refuses it at parse time by file and record. */
      g_assert_true ((strstr (err, "36028797018963968") != NULL && strstr (err, "pid 1234") != NULL)
                     || strstr (err, base) != NULL);
      g_assert_null (strstr (out, "wrapped"));
    }
  /* Nothing written: not the 4 KiB at byte 0 where the wrapped offset
   * pointed, nor the good write at sector 64 (refused before any I/O). */
  g_assert_true (loopdev_read_backing (f->dev, 0, PATTERN_BYTES, after));
  g_assert_cmpmem (after, 4096, pattern, 4096);
  g_assert_cmpmem (after, PATTERN_BYTES, pattern, PATTERN_BYTES);
  unlink (trace);
  rmdir (dir);
}

/* An unaligned trace, partly beyond the device, on 4 KiB logical blocks. */
static char *
write_misfit_trace (const char *dir)
{
  g_autoptr (GString) text = g_string_new (NULL);
  char *path = g_build_filename (dir, "misfit.blkparse", NULL);
  g_autoptr (GArray) recs = g_array_new (FALSE, TRUE, sizeof (TraceRecord));
  const guint64 dev_sectors = DEV_BYTES / 512;
  const guint64 sectors[] = { 3, 8, 16, dev_sectors - 1, dev_sectors + 100, 3 * dev_sectors + 5,
                              dev_sectors / 2 + 1, 2 * dev_sectors - 8 };

  for (guint i = 0; i < G_N_ELEMENTS (sectors); i++)
    add_lifecycle (recs, 1000 + i % 2, "io", i % 3 == 0 ? TRACE_RWBS_WRITE : TRACE_RWBS_READ,
                   sectors[i], 1000000 + (gint64) i * 1000000);
  for (guint i = 0; i < recs->len; i++)
    trace_format_blkparse (&g_array_index (recs, TraceRecord, i), i + 1, text);
  g_assert_true (g_file_set_contents (path, text->str, (gssize) text->len, NULL));
  return path;
}

static JsonObject *
json_plan (JsonParser *parser, const char *path)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  return json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                        "plan");
}

/* --dry-run of a trace with writes, without --allow-write: exit 0, the
 * plan of a run with --allow-write (same counts in the JSON), the writes
 * it needs the flag for named on stdout and in plan.writes_need_allow_write,
 * and nothing written or even read. */
static void
test_dry_run_writes_cli (Fixture *f, gconstpointer data)
{
  static const char *const members[] = { "ios", "reads", "writes", "bytes_read",
                                         "bytes_written", "skipped_writes" };
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) dry_parser = json_parser_new ();
  g_autoptr (JsonParser) allowed_parser = json_parser_new ();
  g_autofree char *dir = NULL, *trace = NULL, *dry_json = NULL, *allowed_json = NULL;
  g_autofree char *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;
  JsonObject *dry, *allowed;
  guint64 before;

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  dir = g_dir_make_tmp ("iosim-replay-dryw-XXXXXX", &error);
  g_assert_no_error (error);
  /* 10 I/Os at sectors 0..72, the last a write. */
  trace = write_ftrace_trace (dir, 10, TRUE);
  dry_json = g_build_filename (dir, "dry.json", NULL);
  allowed_json = g_build_filename (dir, "allowed.json", NULL);
  before = reads_completed (f->dev);
  {
    const char *args[] = { "replay", trace, "--target", f->dev->path, "--dry-run",
                           "--json", dry_json, NULL };
    int rc = run_iosim (args, &out, &err);
    g_test_message ("stdout:\n%s\nstderr:\n%s", out, err);
    g_assert_cmpint (rc, ==, 0);
  }
  g_assert_nonnull (strstr (out, "ios         10 (9 reads, 1 writes)"));
  g_assert_nonnull (strstr (out, "--allow-write for the 1 write "));
  g_assert_nonnull (strstr (out, "bytes would be written with --allow-write"));
  {
    const char *args[] = { "replay", trace, "--target", f->dev->path, "--dry-run",
                           "--allow-write", "--json", allowed_json, NULL };
    g_assert_cmpint (run_iosim (args, &out2, &err2), ==, 0);
  }
  g_assert_null (strstr (out2, "--allow-write for"));
  dry = json_plan (dry_parser, dry_json);
  allowed = json_plan (allowed_parser, allowed_json);
  for (guint m = 0; m < G_N_ELEMENTS (members); m++)
    g_assert_cmpint (json_object_get_int_member (dry, members[m]), ==,
                     json_object_get_int_member (allowed, members[m]));
  g_assert_cmpint (json_object_get_int_member (dry, "writes"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (dry, "writes_need_allow_write"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (allowed, "writes_need_allow_write"), ==, 0);
  g_assert_cmpuint (reads_completed (f->dev), ==, before);
  g_assert_true (backing_all_bytes (f->dev, 0, 80 * 512, 0));
  unlink (trace);
  unlink (dry_json);
  unlink (allowed_json);
  rmdir (dir);
}

/* --dry-run reports what the run does: the same plan counts (aligned,
 * wrapped, scaled, moved back) as the real run's JSON, and the run issues
 * every I/O the dry run planned. */
static void
test_dry_run_matches (Fixture *f, gconstpointer data)
{
  static const char *const members[] = { "ios", "reads", "writes", "bytes_read", "bytes_written",
                                         "aligned", "wrapped", "scaled", "clamped",
                                         "skipped_writes", "skipped_other" };
  static const char *const fits[] = { "--wrap", "--scale-offsets" };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *trace = NULL, *dry_json = NULL, *run_json = NULL;
  int block = 4096;

  if (f->dev == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set (run through meson test)");
      return;
    }
  /* 4 KiB logical blocks, so that alignment has work to do. */
  if (ioctl (f->dev->fd, LOOP_SET_BLOCK_SIZE, (unsigned long) block) != 0)
    {
      g_test_skip ("LOOP_SET_BLOCK_SIZE not supported");
      return;
    }
  dir = g_dir_make_tmp ("iosim-replay-dry-XXXXXX", &error);
  g_assert_no_error (error);
  trace = write_misfit_trace (dir);
  dry_json = g_build_filename (dir, "dry.json", NULL);
  run_json = g_build_filename (dir, "run.json", NULL);
  for (guint k = 0; k < G_N_ELEMENTS (fits); k++)
    {
      g_autoptr (JsonParser) dry_parser = json_parser_new ();
      g_autoptr (JsonParser) run_parser = json_parser_new ();
      g_autofree char *out = NULL, *err = NULL;
      JsonObject *dry, *run;

      {
        const char *args[] = { "replay", trace, "--target", f->dev->path, "--allow-write",
                               fits[k], "--dry-run", "--json", dry_json, NULL };
        int rc = run_iosim (args, &out, &err);
        g_test_message ("%s --dry-run: stdout:\n%s\nstderr:\n%s", fits[k], out, err);
        g_assert_cmpint (rc, ==, 0);
        g_assert_nonnull (strstr (out, "moved back inside the end"));
      }
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
      {
        const char *args[] = { "replay", trace, "--target", f->dev->path, "--allow-write",
                               fits[k], "--json", run_json, NULL };
        int rc = run_iosim (args, &out, &err);
        g_test_message ("%s: stdout:\n%s\nstderr:\n%s", fits[k], out, err);
        g_assert_cmpint (rc, ==, 0);
      }
      dry = json_plan (dry_parser, dry_json);
      run = json_plan (run_parser, run_json);
      for (guint m = 0; m < G_N_ELEMENTS (members); m++)
        g_assert_cmpint (json_object_get_int_member (dry, members[m]), ==,
                         json_object_get_int_member (run, members[m]));
      g_assert_true (json_object_get_boolean_member (json_node_get_object (
                       json_parser_get_root (dry_parser)), "dry_run"));
      /* The run issued exactly what was planned, without errors. */
      g_assert_cmpint (json_object_get_int_member (json_node_get_object (
                         json_parser_get_root (run_parser)), "ios"), ==,
                       json_object_get_int_member (dry, "ios"));
      g_assert_cmpint (json_object_get_int_member (json_node_get_object (
                         json_parser_get_root (run_parser)), "errors"), ==, 0);
      g_assert_cmpint (json_object_get_int_member (dry, "ios"), ==, 8);
      g_assert_cmpint (json_object_get_int_member (dry, "aligned"), >, 0);
      g_assert_cmpint (json_object_get_int_member (dry, k == 0 ? "wrapped" : "scaled"), >, 0);
      unlink (dry_json);
      unlink (run_json);
    }
  unlink (trace);
  rmdir (dir);
}

typedef struct {
  const char  *name;
  ReplayEngine engine;
  guint        threads;
} EngineRange;

static const EngineRange engine_range_cases[] = {
  { "psync", REPLAY_ENGINE_PSYNC, 0 },
  { "psync-pool", REPLAY_ENGINE_PSYNC, 2 },
  { "io_uring", REPLAY_ENGINE_IO_URING, 0 },
  { "libaio", REPLAY_ENGINE_LIBAIO, 0 },
};

/* A plan made for a device twice as large as the loop device: its reads
 * in the lower half are fine, its write at the very end is not.  Checked
 * first (as replay_run_ios does), the run is refused before any I/O; sent
 * to the engine unchecked, the engine refuses that I/O itself and aborts
 * the run with an error instead of issuing it. */
static void
test_engine_range (Fixture *f, gconstpointer data)
{
  const EngineRange *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *pattern = g_malloc (PATTERN_BYTES), *after = g_malloc (PATTERN_BYTES);
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  if (!replay_engine_available (c->engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  fill_pattern (f->dev, pattern);
  replay_options_init (&opts);
  opts.target = f->dev->path;
  opts.allow_write = TRUE;
  opts.engine = c->engine;
  opts.threads = c->threads;
  for (guint check_first = 0; check_first < 2; check_first++)
    {
      g_autoptr (GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
      g_autoptr (ReplayPlan) plan = NULL;
      g_autoptr (ReplayResult) res = NULL;

      for (guint i = 0; i < 4; i++)
        {
          TraceIo r = mkio (1000, "reader", TRACE_OP_READ, 1024 + 8 * i, 1000000 + i * 100000);
          g_array_append_val (ios, r);
        }
      {
        TraceIo w = mkio (2000, "writer", TRACE_OP_WRITE, 2 * DEV_BYTES / 512 - 8, 1200000);
        g_array_append_val (ios, w);
      }
      plan = replay_plan_build (ios, &opts, 2 * (guint64) DEV_BYTES, 512, &error);
      g_assert_no_error (error);
      res = replay_run_plan (g_steal_pointer (&plan), &opts, check_first, &error);
      g_assert_null (res);
      g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
      g_test_message ("%s, %s: %s", c->name, check_first ? "checked first" : "unchecked",
                      error->message);
      g_assert_nonnull (strstr (error->message, "writer-2000"));
      g_assert_nonnull (strstr (error->message, check_first ? "refusing to replay"
                                                            : "it was not issued"));
      g_clear_error (&error);
    }
  g_assert_true (loopdev_read_backing (f->dev, 0, PATTERN_BYTES, after));
  g_assert_cmpmem (after, PATTERN_BYTES, pattern, PATTERN_BYTES);
}

/* The engines' own compare at the boundaries: the last block fits, one
 * byte more does not, nor a wrapped end, nor an unknown target. */
static void
test_io_inside (void)
{
  const guint64 sizes[] = { 8192 };
  ReplayRun run = { .target_bytes = sizes, .n_targets = 1 };
  ReplayIo io = { .offset_bytes = 4096, .bytes = 4096 };

  g_assert_true (replay_io_inside (&run, &io));
  io.offset_bytes = 4097;
  g_assert_false (replay_io_inside (&run, &io));
  io.offset_bytes = G_MAXUINT64 - 100;
  g_assert_false (replay_io_inside (&run, &io));
  io.offset_bytes = 0;
  io.bytes = 0;
  g_assert_false (replay_io_inside (&run, &io));
  io.bytes = 8192;
  g_assert_true (replay_io_inside (&run, &io));
  io.bytes = 8193;
  g_assert_false (replay_io_inside (&run, &io));
  io.bytes = 512;
  io.target_index = 1;
  g_assert_false (replay_io_inside (&run, &io));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/replay/realdev/reads", test_reads);
  ADD ("/replay/realdev/closed-afap", test_closed_afap);
  ADD ("/replay/realdev/speed-events", test_speed_events);
  ADD ("/replay/realdev/write-policy", test_write_policy);
  ADD ("/replay/realdev/in-use", test_in_use);
  ADD ("/replay/realdev/mounted", test_mounted);
  ADD ("/replay/realdev/dry-run", test_dry_run);
  ADD ("/replay/realdev/stop", test_stop);
  ADD ("/replay/realdev/realtime", test_realtime);
  ADD ("/replay/realdev/cli", test_cli);
  for (guint i = 0; i < G_N_ELEMENTS (overflow_cli_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/realdev/overflow/%s",
                                               overflow_cli_cases[i].name);
      g_test_add (path, Fixture, &overflow_cli_cases[i], fixture_setup, test_overflow_cli,
                  fixture_teardown);
    }
  ADD ("/replay/realdev/dry-run-matches", test_dry_run_matches);
  ADD ("/replay/realdev/dry-run-writes-cli", test_dry_run_writes_cli);
  for (guint i = 0; i < G_N_ELEMENTS (engine_range_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/realdev/engine-range/%s",
                                               engine_range_cases[i].name);
      g_test_add (path, Fixture, &engine_range_cases[i], fixture_setup, test_engine_range,
                  fixture_teardown);
    }
  g_test_add_func ("/replay/realdev/io-inside", test_io_inside);
#undef ADD
  return g_test_run ();
}
