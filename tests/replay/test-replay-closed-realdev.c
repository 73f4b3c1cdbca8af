/* test-replay-closed-realdev.c — a closed-timing replay lasts about as
 * long as its recording (issue 14: closed replays ran 1.2-4.3x longer).
 *
 * Each case records a workload on a loop device over a tmpfs file with the
 * replayer itself (its per-I/O issue and completion times are the
 * "recording"), rewrites that recording as the block layer traces such a
 * workload (each I/O a request of several merged bios: Q per bio, the
 * request's D and C on every one of them, as trace_load_ios() gives them),
 * replays it with closed timing on the same device and compares the
 * durations (first issue to last completion).
 *
 * Bound: the closed replay reissues what the recording did (the same
 * requests, released by the same completions, as many in flight), so its
 * duration is the recording's up to run-to-run noise, which on this shared
 * 2-CPU machine (load 3-7 from other builds) was 0.54-1.4x, once 1.9x;
 * replaying one I/O per bio, each waiting for the one before (the bug),
 * costs a structural factor: 7.5-10.5x in this test for the 128-bio
 * writeback requests (13-17x through the CLI on a 200-request trace), and
 * 4.2-8.4x for the queue-depth-4 reader (800 bios one at a time where the
 * recording had 4 requests in flight).  2x lies between.
 * Load from other processes can only lengthen one run, so each case tries
 * up to five times (a fresh recording each) and passes on the first try
 * within the bound.
 * Needs root and /dev/loop-control (and io_uring for its case); skips
 * otherwise. */
#include <string.h>

#include "loopdev.h"
#include "replay/replay.h"

#define DEVICE_BYTES (160u << 20)
#define MAX_RATIO 2.0
#define TRIES 5

typedef struct {
  const char  *name;
  ReplayEngine engine;
  guint        iodepth;      /* 0: the engine's default */
  TraceOp      op;
  guint        n_ios;
  guint32      io_sectors;   /* of each recorded I/O */
  guint        bios;         /* bios per request in the rewritten trace */
} ClosedCase;

static const ClosedCase cases[] = {
  /* A buffered writer's writeback: 512 KiB requests of 128 4 KiB bios. */
  { "writeback-psync", REPLAY_ENGINE_PSYNC, 0, TRACE_OP_WRITE, 60, 1024, 128 },
  /* An asynchronous reader keeping 4 requests of 4 x 32 KiB in flight. */
  { "qd4-io_uring", REPLAY_ENGINE_IO_URING, 4, TRACE_OP_READ, 800, 256, 4 },
};

static TraceIo
base_io (const ClosedCase *c, guint i)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.dev_major = 7;
  io.pid = 4242;
  g_strlcpy (io.comm, "closed", sizeof io.comm);
  io.op = c->op;
  io.sector = 2048 + (guint64) i * c->io_sectors;
  io.nr_sectors = c->io_sectors;
  /* All due at once: recorded timing issues them as fast as the engine
   * and its depth allow. */
  io.queue_ns = 1000000 + i * 1000;
  io.issue_ns = io.queue_ns;
  io.complete_ns = io.queue_ns + 1;
  return io;
}

/* The recording as a block trace: per I/O, @bios bios queued 100 ns apart
 * from its issue, the request dispatched 100 ns after the last (plus 10 ns
 * per I/O: requests of one batch are dispatched one after the other, and
 * only one request's bios share a D) and completed when the system call
 * returned. */
static GArray *
recording_as_trace (const ClosedCase *c, const ReplayResult *rec)
{
  const GArray *results = g_ptr_array_index (rec->io_results, 0);
  const ReplayProcess *proc = g_ptr_array_index (rec->plan->processes, 0);
  GArray *trace = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  guint32 part = c->io_sectors / c->bios;

  for (guint i = 0; i < results->len; i++)
    {
      const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
      const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
      gint64 d = r->issue_ns + (gint64) c->bios * 100 + (gint64) i * 10;

      for (guint b = 0; b < c->bios; b++)
        {
          TraceIo t = base_io (c, i);

          t.sector = io->offset_bytes / 512 + (guint64) b * part;
          t.nr_sectors = part;
          t.queue_ns = r->issue_ns + (gint64) b * 100;
          t.issue_ns = d;
          t.complete_ns = MAX (r->complete_ns, d + 100);
          g_array_append_val (trace, t);
        }
    }
  return trace;
}

static ReplayResult *
replay (const ClosedCase *c, const LoopDev *dev, const GArray *ios, ReplayTiming timing)
{
  g_autoptr (GError) error = NULL;
  ReplayOptions opts;
  ReplayResult *res;

  replay_options_init (&opts);
  opts.target = dev->path;
  opts.timing = timing;
  opts.engine = c->engine;
  opts.iodepth = c->iodepth;
  /* The writes go to this test's own loop device only. */
  opts.allow_write = c->op == TRACE_OP_WRITE;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->errors, ==, 0);
  return res;
}

static void
test_closed_duration (gconstpointer data)
{
  const ClosedCase *c = data;
  g_autofree char *reason = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) base = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr (GString) ratios = g_string_new (NULL);
  LoopDev *dev;
  gboolean within = FALSE;

  if (!replay_engine_available (c->engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  dev = loopdev_new (DEVICE_BYTES, &reason);
  if (dev == NULL)
    {
      g_test_skip (reason);
      return;
    }
  for (guint i = 0; i < c->n_ios; i++)
    {
      TraceIo io = base_io (c, i);
      g_array_append_val (base, io);
    }
  /* Once before measuring: the first writes to the tmpfs file allocate
   * its pages, which made the recording slower than any replay after it. */
  replay_result_free (replay (c, dev, base, REPLAY_TIMING_RECORDED));
  for (guint t = 0; t < TRIES && !within; t++)
    {
      g_autoptr (ReplayResult) rec = replay (c, dev, base, REPLAY_TIMING_RECORDED);
      g_autoptr (GArray) trace = recording_as_trace (c, rec);
      g_autoptr (ReplayResult) closed = replay (c, dev, trace, REPLAY_TIMING_CLOSED);
      double ratio = (double) closed->elapsed_ns / (double) rec->elapsed_ns;

      /* One I/O per request, as the recording issued them. */
      g_assert_cmpuint (closed->ios, ==, c->n_ios);
      g_assert_cmpuint (closed->plan->coalesced, ==, (guint64) c->n_ios * (c->bios - 1));
      g_string_append_printf (ratios, " %.3f (%.1f ms closed, %.1f ms recorded)", ratio,
                              closed->elapsed_ns / 1e6, rec->elapsed_ns / 1e6);
      within = ratio <= MAX_RATIO;
    }
  g_test_message ("%s: closed / recorded duration:%s", c->name, ratios->str);
  loopdev_free (dev);
  if (!within)
    g_error ("%s: every closed replay ran more than %.1fx its recording:%s", c->name,
             MAX_RATIO, ratios->str);
}

int
main (int argc, char **argv)
{
  /* The loop device's backing file on tmpfs (g_dir_make_tmp follows
   * TMPDIR), so that no disk beneath the loop adds its own noise. */
  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR))
    g_setenv ("TMPDIR", "/dev/shm", TRUE);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strconcat ("/replay/closed-duration/", cases[i].name, NULL);
      g_test_add_data_func (path, &cases[i], test_closed_duration);
    }
  return g_test_run ();
}
