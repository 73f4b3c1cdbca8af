/* test-replay-engines.c — every replay engine (psync, psync pool,
 * io_uring, libaio; O_DIRECT and buffered) on a loop device: all I/Os
 * complete at the planned offsets and sizes (per-I/O results and the
 * device's /sys/block/loopN/stat), queue-depth limits hold (in flight
 * reconstructed from the per-I/O times), closed timing keeps each
 * process's order.  The asynchronous engines run twice more: with --poll
 * (the submitter reaps), and with one process whose submitter and reaper
 * are pinned to one CPU at SCHED_FIFO: a submitter spinning for a slot
 * there without yielding would never let the reaper free one (threads
 * that share a pinned CPU must yield even when the machine has more).  Needs root and /dev/loop-control; skips otherwise, and
 * skips an engine this build lacks.
 */
#include <string.h>
#include <sys/resource.h>

#include "loopdev.h"
#include "replay/replay.h"

#define DEV_BYTES (32u << 20)

typedef struct {
  const char  *name;
  ReplayEngine engine;
  guint        threads;
  gboolean     buffered;
  gboolean     poll;
  gboolean     one_cpu_fifo;   /* every thread on CPU 0, SCHED_FIFO 1 */
} EngineCase;

static const EngineCase cases[] = {
  { "psync", REPLAY_ENGINE_PSYNC, 0, FALSE },
  { "psync-pool", REPLAY_ENGINE_PSYNC, 3, FALSE },
  { "io_uring", REPLAY_ENGINE_IO_URING, 0, FALSE },
  { "io_uring-buffered", REPLAY_ENGINE_IO_URING, 0, TRUE },
  { "libaio", REPLAY_ENGINE_LIBAIO, 0, FALSE },
  { "io_uring-poll", REPLAY_ENGINE_IO_URING, 0, FALSE, TRUE },
  { "libaio-poll", REPLAY_ENGINE_LIBAIO, 0, FALSE, TRUE },
  { "libaio-one-cpu-fifo", REPLAY_ENGINE_LIBAIO, 0, FALSE, FALSE, TRUE },
};

/* Processes of a test's workload: @usual, or one where two threads
 * must share a CPU (more would make them yield anyway: more threads
 * than CPUs). */
static guint
case_procs (const EngineCase *c, guint usual)
{
  return c->one_cpu_fifo ? 1 : usual;
}

static GArray *
cpu_zero (void)
{
  GArray *cpus = g_array_new (FALSE, FALSE, sizeof (int));
  int cpu = 0;

  g_array_append_val (cpus, cpu);
  return cpus;
}

typedef struct {
  LoopDev *dev;
  GArray  *cpus;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  const EngineCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = NULL;

  if (!replay_engine_available (c->engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  f->dev = loopdev_new (DEV_BYTES, &reason);
  if (f->dev == NULL)
    g_test_skip (reason);
  if (c->one_cpu_fifo)
    f->cpus = cpu_zero ();
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->dev, loopdev_free);
  g_clear_pointer (&f->cpus, g_array_unref);
}

static void
engine_options (ReplayOptions *opts, const EngineCase *c, const Fixture *f)
{
  replay_options_init (opts);
  opts->target = f->dev->path;
  opts->engine = c->engine;
  opts->threads = c->threads;
  opts->buffered = c->buffered;
  opts->poll = c->poll;
  if (c->one_cpu_fifo)
    {
      opts->cpus = f->cpus;
      opts->rt_priority = 1;
    }
}

/* @procs processes, @n reads each, every @gap_ns, in bursts of @burst I/Os
 * at the same time; sectors 32 apart and distinct per process so that no
 * two I/Os can merge. */
static GArray *
workload (guint procs, guint n, gint64 gap_ns, guint burst)
{
  GArray *ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));

  for (guint i = 0; i < n; i++)
    for (guint p = 0; p < procs; p++)
      {
        TraceIo io;

        memset (&io, 0, sizeof io);
        io.pid = 1000 + p;
        g_strlcpy (io.comm, "eng", sizeof io.comm);
        io.op = TRACE_OP_READ;
        io.sector = (guint64) (p * n + i) * 32 + 8 * (i % 3 == 0);
        io.nr_sectors = 8 * (1 + i % 2);       /* 4 and 8 KiB */
        io.queue_ns = 1000000 + (gint64) (i / burst) * gap_ns + p * 1000;
        io.issue_ns = io.queue_ns + 1000;
        io.complete_ns = io.queue_ns + 50000;
        g_array_append_val (ios, io);
      }
  return ios;
}

/* Fields of /sys/block/loopN/stat: reads completed (0), sectors read (2). */
static void
read_stat (const LoopDev *dev, guint64 *reads, guint64 *sectors)
{
  g_autofree char *name = g_path_get_basename (dev->path);
  g_autofree char *path = g_build_filename ("/sys/block", name, "stat", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) fields = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  fields = g_strsplit_set (g_strstrip (text), " \t", -1);
  {
    guint k = 0;
    guint64 v[3] = { 0 };
    for (guint i = 0; fields[i] && k < 3; i++)
      if (*fields[i])
        v[k++] = g_ascii_strtoull (fields[i], NULL, 10);
    *reads = v[0];
    *sectors = v[2];
  }
}

/* Most I/Os of @results (one process or all) in flight at an issue time:
 * I/O j counts at I/O i's issue when issue_j <= issue_i < complete_j. */
static guint
max_overlap (GPtrArray *result_sets)
{
  guint most = 0;

  for (guint a = 0; a < result_sets->len; a++)
    {
      const GArray *ra = g_ptr_array_index (result_sets, a);
      for (guint i = 0; i < ra->len; i++)
        {
          gint64 t = g_array_index (ra, ReplayIoResult, i).issue_ns;
          guint count = 0;
          for (guint b = 0; b < result_sets->len; b++)
            {
              const GArray *rb = g_ptr_array_index (result_sets, b);
              for (guint j = 0; j < rb->len; j++)
                {
                  const ReplayIoResult *r = &g_array_index (rb, ReplayIoResult, j);
                  if (r->issue_ns <= t && t < r->complete_ns)
                    count++;
                }
            }
          most = MAX (most, count);
        }
    }
  return most;
}

static void
test_all_complete (Fixture *f, gconstpointer data)
{
  const EngineCase *c = data;
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;
  guint64 reads0, sectors0, reads1, sectors1, want_sectors = 0;

  if (f->dev == NULL)
    return;
  ios = workload (case_procs (c, 3), 200, 200 * 1000, 1);
  for (guint i = 0; i < ios->len; i++)
    want_sectors += g_array_index (ios, TraceIo, i).nr_sectors;
  engine_options (&opts, c, f);
  read_stat (f->dev, &reads0, &sectors0);
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  read_stat (f->dev, &reads1, &sectors1);
  g_assert_cmpint (res->engine, ==, c->engine);
  g_assert_cmpuint (res->ios, ==, ios->len);
  g_assert_cmpuint (res->plan->processes->len, ==, case_procs (c, 3));
  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      const GArray *results = g_ptr_array_index (res->io_results, p);
      guint k = 0;

      g_assert_cmpuint (results->len, ==, proc->ios->len);
      for (guint i = 0; i < ios->len; i++)
        {
          const TraceIo *t = &g_array_index (ios, TraceIo, i);
          const ReplayIo *io;
          const ReplayIoResult *r;

          if (t->pid != proc->pid)
            continue;
          io = &g_array_index (proc->ios, ReplayIo, k);
          r = &g_array_index (results, ReplayIoResult, k);
          g_assert_cmpuint (io->offset_bytes, ==, t->sector * 512);
          g_assert_cmpuint (io->bytes, ==, t->nr_sectors * 512);
          if (r->error != 0)
            g_test_message ("p%u i%u off %" G_GUINT64_FORMAT " bytes %u err %d\n", p, k, io->offset_bytes, io->bytes, r->error);
          g_assert_cmpint (r->error, ==, 0);
          g_assert_cmpint (r->issue_ns, >=, r->intended_ns);
          g_assert_cmpint (r->complete_ns, >, r->issue_ns);
          /* The submit call's return: after the issue (async), none for psync. */
          if (c->engine == REPLAY_ENGINE_PSYNC)
            g_assert_cmpint (r->submitted_ns, ==, 0);
          else
            g_assert_cmpint (r->submitted_ns, >, r->issue_ns);
          /* Recorded timing: issue order is the process's trace order. */
          if (k > 0)
            g_assert_cmpint (r->issue_ns, >=, g_array_index (results, ReplayIoResult, k - 1).issue_ns);
          k++;
        }
      g_assert_cmpuint (k, ==, proc->ios->len);
    }
  g_assert_cmpuint (res->errors, ==, 0);
  /* What the device saw: O_DIRECT I/Os one for one; buffered reads go
   * through the page cache (readahead may read more, a cached page less),
   * so only direct I/O is counted exactly. */
  if (!c->buffered)
    {
      g_assert_cmpuint (reads1 - reads0, ==, ios->len);
      g_assert_cmpuint (sectors1 - sectors0, ==, want_sectors);
    }
  else
    g_assert_cmpuint (reads1 - reads0, >, 0);
  g_assert_cmpfloat (res->intended_iops, >, 0);
  g_assert_cmpfloat (res->achieved_iops, >, 0);
  if (c->engine != REPLAY_ENGINE_PSYNC)
    {
      g_assert_cmpint (res->submit_call_p50_ns, >, 0);
      g_assert_cmpint (res->submit_call_p99_ns, >=, res->submit_call_p50_ns);
    }
  else
    g_assert_cmpint (res->submit_call_p99_ns, ==, 0);
}

/* Bursts of 8 I/Os at one instant per process: the limits bind. */
static void
test_depth_limits (Fixture *f, gconstpointer data)
{
  const EngineCase *c = data;
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;
  guint process_limit = 2, device_limit = 3;

  if (f->dev == NULL)
    return;
  if (c->engine == REPLAY_ENGINE_PSYNC && c->threads == 0)
    process_limit = 1;   /* a thread per process: depth 1 by construction */
  ios = workload (case_procs (c, 3), 80, 2 * 1000 * 1000, 8);
  engine_options (&opts, c, f);
  opts.iodepth = c->engine == REPLAY_ENGINE_PSYNC && c->threads == 0 ? 0 : process_limit;
  opts.device_depth = device_limit;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->ios, ==, ios->len);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->iodepth, ==, process_limit);
  g_assert_cmpuint (res->max_inflight_process, <=, process_limit);
  g_assert_cmpuint (res->max_inflight_device, <=, device_limit);
  for (guint p = 0; p < res->io_results->len; p++)
    {
      g_autoptr (GPtrArray) one = g_ptr_array_new ();
      g_ptr_array_add (one, g_ptr_array_index (res->io_results, p));
      g_assert_cmpuint (max_overlap (one), <=, process_limit);
    }
  g_assert_cmpuint (max_overlap (res->io_results), <=, device_limit);
  /* The bursts did reach the device limit (async: 3 processes x depth 2
   * want 6), so the limit, not a light load, kept the figure down. */
  if (c->engine != REPLAY_ENGINE_PSYNC)
    g_assert_cmpuint (res->max_inflight_device, ==,
                      MIN (device_limit, case_procs (c, 3) * process_limit));
  else
    g_assert_cmpuint (res->max_inflight_device, >=, 2);
}

/* Closed timing: each I/O that a completion released in the trace (every
 * burst's first: the previous burst had completed) is issued its think
 * time after that I/O completed in the replay, and in process order; the
 * rest of a burst, queued together in the trace, follows without waiting,
 * so the asynchronous engines keep a burst in flight together (never more:
 * each burst waits for the last), submitting it in one call, and psync,
 * synchronous, one at a time. */
static void
test_closed_order (Fixture *f, gconstpointer data)
{
  const EngineCase *c = data;
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;

  if (f->dev == NULL)
    return;
  if (c->threads > 0)
    {
      g_test_skip ("a psync pool replays recorded timing only");
      return;
    }
  ios = workload (case_procs (c, 2), 100, 100 * 1000, 4);
  engine_options (&opts, c, f);
  opts.timing = REPLAY_TIMING_CLOSED;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->ios, ==, ios->len);
  for (guint p = 0; p < res->io_results->len; p++)
    {
      const GArray *results = g_ptr_array_index (res->io_results, p);
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);

      for (guint i = 1; i < results->len; i++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
          const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
          const ReplayIoResult *prev = &g_array_index (results, ReplayIoResult, i - 1);

          /* Bursts of 4: the first of each is released by the last one
           * of the burst before, 100 us - 50 us after it completed. */
          g_assert_cmpint (io->dep_index, ==, i % 4 == 0 ? (gint32) i - 1 : -1);
          if (io->dep_index >= 0)
            g_assert_cmpint (r->issue_ns, >=,
                             g_array_index (results, ReplayIoResult, io->dep_index).complete_ns
                             + io->think_ns);
          g_assert_cmpint (r->issue_ns, >=, prev->issue_ns);
          if (c->engine == REPLAY_ENGINE_PSYNC)
            g_assert_cmpint (r->issue_ns, >=, prev->complete_ns);
          /* A burst is due at once: one submit call carries it. */
          else if (io->dep_index < 0)
            g_assert_cmpint (r->submitted_ns, ==, prev->submitted_ns);
        }
    }
  if (c->engine == REPLAY_ENGINE_PSYNC)
    g_assert_cmpuint (res->max_inflight_process, ==, 1);
  else
    {
      g_assert_cmpuint (res->max_inflight_process, >=, 2);
      g_assert_cmpuint (res->max_inflight_process, <=, 4);
    }
}

static gint64
cpu_time_ns (void)
{
  struct rusage ru;

  g_assert_cmpint (getrusage (RUSAGE_SELF, &ru), ==, 0);
  return ((gint64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000
         + ((gint64) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* --poll spins only from spin_ns before each I/O: a trace with 50 ms
 * gaps costs a few ms of CPU, not the whole span (a busy-wait all the
 * way would cost about the span). */
static void
test_poll_idle (Fixture *f, gconstpointer data)
{
  const EngineCase *c = data;
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;
  gint64 cpu0, cpu, span_ns;

  if (f->dev == NULL)
    return;
  ios = workload (1, 10, 50 * 1000 * 1000, 1);
  engine_options (&opts, c, f);
  opts.spin_ns = REPLAY_POLL_SPIN_NS;
  cpu0 = cpu_time_ns ();
  res = replay_run_ios (ios, &opts, &error);
  cpu = cpu_time_ns () - cpu0;
  g_assert_no_error (error);
  g_assert_cmpuint (res->ios, ==, 10);
  g_assert_cmpuint (res->errors, ==, 0);
  span_ns = res->elapsed_ns;
  g_test_message ("CPU %.1f ms over a %.1f ms replay", cpu / 1e6, span_ns / 1e6);
  /* The schedule was kept: no I/O went before its time, and the last went
   * 450 ms after the first was due (elapsed_ns starts at the first issue,
   * which a loaded machine may delay). */
  const GArray *done = g_ptr_array_index (res->io_results, 0);
  const ReplayIoResult *first = &g_array_index (done, ReplayIoResult, 0);
  const ReplayIoResult *last = &g_array_index (done, ReplayIoResult, done->len - 1);
  for (guint i = 0; i < done->len; i++)
    g_assert_cmpint (g_array_index (done, ReplayIoResult, i).issue_ns, >=,
                     g_array_index (done, ReplayIoResult, i).intended_ns);
  g_assert_cmpint (last->issue_ns - first->intended_ns, >=, 9 * 50 * 1000 * 1000);
  g_assert_cmpint (cpu, <, span_ns / 4);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *a = g_strdup_printf ("/replay/engine/%s/all-complete", cases[i].name);
      g_autofree char *b = g_strdup_printf ("/replay/engine/%s/depth-limits", cases[i].name);
      g_autofree char *d = g_strdup_printf ("/replay/engine/%s/closed-order", cases[i].name);

      g_test_add (a, Fixture, &cases[i], fixture_setup, test_all_complete, fixture_teardown);
      g_test_add (b, Fixture, &cases[i], fixture_setup, test_depth_limits, fixture_teardown);
      g_test_add (d, Fixture, &cases[i], fixture_setup, test_closed_order, fixture_teardown);
      if (cases[i].poll)
        {
          g_autofree char *e = g_strdup_printf ("/replay/engine/%s/idle-sleeps", cases[i].name);
          g_test_add (e, Fixture, &cases[i], fixture_setup, test_poll_idle, fixture_teardown);
        }
    }
  return g_test_run ();
}
