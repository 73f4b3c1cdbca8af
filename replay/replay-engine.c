/* replay-engine.c — running replay schedules on a real block device:
 * the shared pacing and thread machinery, the psync engine, summaries.
 *
 * psync: one thread per traced process doing synchronous pread/pwrite
 * (queue depth 1 per process), or with --threads N a pool of N threads
 * that take I/Os from the merged schedule and issue each process's I/Os
 * in order (a ticket per process), so a process can have up to N in
 * flight.  io_uring and libaio live in replay-engine-async.c.  Pacing
 * follows reference/anchors.md §C and §E.3: one absolute schedule from a
 * common t0 on CLOCK_MONOTONIC, timer slack 1 ns,
 * clock_nanosleep(TIMER_ABSTIME) to ~50 us before the intended time, then
 * a spin on clock_gettime (the measured sleep overshoot with slack 1 ns is
 * ~4-16 us p50-p99, so 50 us of spinning covers it).
 */
#include "replay/replay-engine-private.h"
#include "replay/replay-targets.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How often the controlling thread looks at the workers, and reports. */
#define REPLAY_POLL_INTERVAL_US (10 * 1000)
#define REPLAY_PROGRESS_INTERVAL_US (200 * 1000)
/* Default per-process depth of the asynchronous engines. */
#define REPLAY_ASYNC_DEFAULT_DEPTH 32

gint64
replay_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static const char *const engine_names[] = { "psync", "io_uring", "libaio" };

const char *
replay_engine_name (ReplayEngine engine)
{
  return engine < G_N_ELEMENTS (engine_names) ? engine_names[engine] : "?";
}

gboolean
replay_engine_parse (const char *text, ReplayEngine *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (engine_names); i++)
    if (g_strcmp0 (text, engine_names[i]) == 0)
      {
        *out = (ReplayEngine) i;
        return TRUE;
      }
  return FALSE;
}

gboolean
replay_engine_available (ReplayEngine engine, GError **error)
{
  const char *missing = NULL;

#ifndef IOSIM_HAVE_LIBURING
  if (engine == REPLAY_ENGINE_IO_URING)
    missing = "liburing (Debian: liburing-dev)";
#endif
#ifndef IOSIM_HAVE_LIBAIO
  if (engine == REPLAY_ENGINE_LIBAIO)
    missing = "libaio (Debian: libaio-dev)";
#endif
  if (missing == NULL)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "the %s engine is not in this build of iosim: it needs %s at build time "
               "(install it and reconfigure with meson); --engine psync works everywhere",
               replay_engine_name (engine), missing);
  return FALSE;
}

GArray *
replay_cpus_parse (const char *text, GError **error)
{
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (int));
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);

  for (guint i = 0; parts[i]; i++)
    {
      g_auto (GStrv) range = g_strsplit (g_strstrip (parts[i]), "-", 2);
      guint64 lo, hi;

      if (range[0] == NULL
          || !g_ascii_string_to_unsigned (range[0], 10, 0, CPU_SETSIZE - 1, &lo, NULL)
          || (range[1] != NULL
              && !g_ascii_string_to_unsigned (range[1], 10, lo, CPU_SETSIZE - 1, &hi, NULL)))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                       "bad CPU list '%s' (expected e.g. 0,1 or 0-3)", text);
          return NULL;
        }
      if (range[1] == NULL)
        hi = lo;
      for (guint64 c = lo; c <= hi; c++)
        {
          int cpu = (int) c;
          g_array_append_val (cpus, cpu);
        }
    }
  if (cpus->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "empty CPU list");
      return NULL;
    }
  return g_steal_pointer (&cpus);
}

gboolean
replay_run_refuse_outside (ReplayRun *run, guint process, guint index)
{
  if (g_atomic_int_compare_and_exchange (&run->outside, 0, 1))
    {
      run->outside_process = process;
      run->outside_index = index;
    }
  g_atomic_int_set (&run->abort, 1);
  return FALSE;
}

gboolean
replay_run_stopped (ReplayRun *run)
{
  return g_atomic_int_get (&run->abort) || (run->opts->stop != NULL && *run->opts->stop);
}

/* Sleep in slices of at most this, so that a stop request is seen soon
 * even in a long gap of the trace. */
#define REPLAY_MAX_SLEEP_NS (50 * 1000 * 1000)

gboolean
replay_sleep_spin_until (gint64 target_ns, gint64 spin_ns, gboolean yield,
                         gboolean (*stopped) (gpointer data), gpointer data)
{
  for (;;)
    {
      gint64 now = replay_now_ns ();
      gint64 wake;
      struct timespec ts;

      if (stopped (data))
        return FALSE;
      if (target_ns - now <= spin_ns)
        break;
      wake = MIN (target_ns - spin_ns, now + REPLAY_MAX_SLEEP_NS);
      ts.tv_sec = wake / 1000000000;
      ts.tv_nsec = wake % 1000000000;
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
  while (replay_now_ns () < target_ns)
    if (yield)
      sched_yield ();
  return TRUE;
}

static gboolean
run_stopped (gpointer run)
{
  return replay_run_stopped (run);
}

gboolean
replay_wait_until_ns (ReplayRun *run, gint64 target_ns)
{
  return replay_sleep_spin_until (target_ns, run->opts->spin_ns, run->yield_in_spin,
                                  run_stopped, run);
}

gint64
replay_intended_abs_ns (ReplayTiming timing, const ReplayProcess *proc, guint i, gint64 t0_ns,
                        gint64 prev_intended, gint64 prev_complete, gint64 dep_complete)
{
  const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);

  if (i == 0 || timing == REPLAY_TIMING_RECORDED)
    return timing == REPLAY_TIMING_AFAP ? t0_ns : t0_ns + io->sched_ns;
  if (timing == REPLAY_TIMING_AFAP)
    return prev_complete;
  /* Released by a completion: the think time after it, never before the
   * previous I/O's own time (per-process order). */
  if (io->dep_index >= 0)
    return MAX (dep_complete + io->think_ns, prev_intended);
  /* Submitted right after the previous one: the recorded gap. */
  return prev_intended + io->gap_ns;
}

static void
atomic_max (gint *max, gint value)
{
  gint old = g_atomic_int_get (max);

  while (value > old && !g_atomic_int_compare_and_exchange (max, old, value))
    old = g_atomic_int_get (max);
}

/* Take one unit of @counter if it stays within @limit (0 = none).  A
 * compare-and-exchange lost to another thread (a reaper releasing, another
 * process's submitter taking the device's slot) is tried again: only the
 * limit refuses, or a burst the trace queued together would be cut into
 * several submissions. */
static gboolean
try_take (gint *counter, guint limit, gint *max)
{
  for (;;)
    {
      gint old = g_atomic_int_get (counter);

      if (limit > 0 && old >= (gint) limit)
        return FALSE;
      if (g_atomic_int_compare_and_exchange (counter, old, old + 1))
        {
          atomic_max (max, old + 1);
          return TRUE;
        }
    }
}

gboolean
replay_slots_acquire (ReplayRun *run, guint target, gint *process_inflight, guint limit)
{
  /* Process slot first: it is only contended by this process's own
   * I/Os, so holding it while waiting for the device starves nobody. */
  while (!try_take (process_inflight, limit, &run->max_process_inflight))
    {
      if (replay_run_stopped (run))
        return FALSE;
      if (run->yield_in_spin)
        sched_yield ();
    }
  while (!try_take (&run->device_inflight[target], run->device_depth, &run->max_device_inflight))
    {
      if (replay_run_stopped (run))
        {
          g_atomic_int_dec_and_test (process_inflight);
          return FALSE;
        }
      if (run->yield_in_spin)
        sched_yield ();
    }
  return TRUE;
}

gboolean
replay_slots_try_acquire (ReplayRun *run, guint target, gint *process_inflight, guint limit)
{
  if (!try_take (process_inflight, limit, &run->max_process_inflight))
    return FALSE;
  if (try_take (&run->device_inflight[target], run->device_depth, &run->max_device_inflight))
    return TRUE;
  g_atomic_int_dec_and_test (process_inflight);
  return FALSE;
}

void
replay_slots_release (ReplayRun *run, guint target, gint *process_inflight)
{
  g_atomic_int_dec_and_test (&run->device_inflight[target]);
  g_atomic_int_dec_and_test (process_inflight);
}

/* Name the thread after the traced command ("<comm>-<pid>" without the
 * pid), so that a capture taken during the replay shows the same commands;
 * the kernel keeps 15 characters. */
static void
set_thread_comm (const char *process_name)
{
  char comm[16];
  const char *dash = strrchr (process_name, '-');
  gsize len = dash ? (gsize) (dash - process_name) : strlen (process_name);
  if (len == 0 || g_str_has_prefix (process_name, "pid"))
    return;
  len = MIN (len, sizeof comm - 1);
  memcpy (comm, process_name, len);
  comm[len] = '\0';
  prctl (PR_SET_NAME, comm, 0, 0, 0);
}

gint64
replay_thread_start (ReplayRun *run, const char *process_name, gint cpu_slot)
{
  gint64 t0;

  g_mutex_lock (&run->gate.lock);
  while (!run->gate.go)
    g_cond_wait (&run->gate.cond, &run->gate.lock);
  t0 = run->gate.t0_ns;
  g_mutex_unlock (&run->gate.lock);

  /* Timer slack is per thread; the default 50 us makes every wake-up late. */
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (process_name)
    set_thread_comm (process_name);
  if (run->opts->rt_priority > 0)
    {
      /* Checked by the caller first (check_rt); this cannot fail then. */
      struct sched_param sp = { .sched_priority = run->opts->rt_priority };
      pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp);
    }
  if (cpu_slot >= 0 && run->opts->cpus != NULL && run->opts->cpus->len > 0)
    {
      cpu_set_t set;

      CPU_ZERO (&set);
      CPU_SET (g_array_index (run->opts->cpus, int, (guint) cpu_slot % run->opts->cpus->len),
               &set);
      /* Checked by the caller first (check_cpus). */
      pthread_setaffinity_np (pthread_self (), sizeof set, &set);
    }
  return t0;
}

static gint32
do_io (int fd, const ReplayIo *io, guint8 *read_buf, const guint8 *write_buf)
{
  ssize_t done = io->op == TRACE_OP_WRITE
    ? pwrite (fd, write_buf, io->bytes, (off_t) io->offset_bytes)
    : pread (fd, read_buf, io->bytes, (off_t) io->offset_bytes);

  if (done < 0)
    return -errno;
  return done == (ssize_t) io->bytes ? 0 : -EIO;
}

/* Buffers before the clock starts: allocation failure is an error, not a
 * late first I/O.  Written data is a fixed pattern; only timing matters. */
static gboolean
alloc_buffers (guint32 max_bytes, guint32 align_bytes, guint8 **read_buf, guint8 **write_buf,
               GError **error)
{
  if (posix_memalign ((void **) read_buf, align_bytes, max_bytes) != 0
      || posix_memalign ((void **) write_buf, align_bytes, max_bytes) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot allocate %u bytes of I/O buffer", max_bytes);
      return FALSE;
    }
  memset (*read_buf, 0, max_bytes);
  memset (*write_buf, 0x5a, max_bytes);
  return TRUE;
}

static guint32
plan_max_bytes (const ReplayPlan *plan)
{
  guint32 max_bytes = 512;

  for (guint p = 0; p < plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, p);
      for (guint i = 0; i < proc->ios->len; i++)
        max_bytes = MAX (max_bytes, g_array_index (proc->ios, ReplayIo, i).bytes);
    }
  return max_bytes;
}

/* psync, a thread per process: QD1, the I/O's duration is the call's. */
typedef struct {
  ReplayRun *run;
  guint      process;
  gint       inflight;
  guint8    *read_buf, *write_buf;
} PsyncWorker;

static gpointer
psync_worker_main (gpointer data)
{
  PsyncWorker *w = data;
  ReplayRun *run = w->run;
  const ReplayProcess *proc = g_ptr_array_index (run->plan->processes, w->process);
  GArray *results = g_ptr_array_index (run->io_results, w->process);
  gint64 t0 = replay_thread_start (run, proc->name, (gint) w->process);
  gint64 prev_intended = t0, prev_complete = t0;

  run->tids[w->process] = (guint32) gettid ();

  for (guint i = 0; i < proc->ios->len; i++)
    {
      const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
      ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
      /* Synchronous: every earlier I/O, the releasing one too, is done. */
      gint64 dep_complete = io->dep_index >= 0
        ? t0 + g_array_index (results, ReplayIoResult, io->dep_index).complete_ns : t0;
      gint64 intended = replay_intended_abs_ns (run->plan->timing, proc, i, t0, prev_intended,
                                                prev_complete, dep_complete);
      gint64 issue, complete;

      if (!replay_io_check (run, w->process, i)
          || !replay_wait_until_ns (run, intended)
          || !replay_slots_acquire (run, io->target_index, &w->inflight, 1))
        break;
      issue = replay_now_ns ();
      r->error = do_io (run->fds[io->target_index], io, w->read_buf, w->write_buf);
      complete = replay_now_ns ();
      replay_slots_release (run, io->target_index, &w->inflight);
      r->intended_ns = intended - t0;
      r->issue_ns = issue - t0;
      r->complete_ns = complete - t0;
      run->issued[w->process] = i + 1;
      prev_intended = intended;
      prev_complete = complete;
      g_atomic_int_inc (&run->done_ios);
    }
  g_atomic_int_inc (&run->finished);
  return NULL;
}

static gboolean
run_psync_per_process (ReplayRun *run, GError **error)
{
  guint n = run->plan->processes->len;
  g_autofree PsyncWorker *workers = g_new0 (PsyncWorker, n);
  guint32 max_bytes = plan_max_bytes (run->plan);
  gboolean ok = TRUE;

  for (guint p = 0; p < n && ok; p++)
    {
      workers[p] = (PsyncWorker) { .run = run, .process = p };
      ok = alloc_buffers (max_bytes, run->align_bytes, &workers[p].read_buf,
                          &workers[p].write_buf, error);
    }
  if (ok)
    ok = replay_threads_run (run, n, psync_worker_main, workers, sizeof (PsyncWorker), error);
  for (guint p = 0; p < n; p++)
    {
      free (workers[p].read_buf);
      free (workers[p].write_buf);
    }
  return ok;
}

/* psync pool: the merged schedule (recorded timing), taken in order. */
typedef struct {
  gint64 sched_ns;
  guint  process;
  guint  index;
} PoolItem;

static int
pool_item_compare (gconstpointer a, gconstpointer b)
{
  const PoolItem *x = a, *y = b;

  if (x->sched_ns != y->sched_ns)
    return x->sched_ns < y->sched_ns ? -1 : 1;
  if (x->process != y->process)
    return x->process < y->process ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

typedef struct {
  ReplayRun *run;
  GArray    *items;        /* PoolItem */
  gint      *cursor;       /* atomic, next item to take */
  gint      *ticket;       /* per process, atomic: index of the next I/O to issue */
  gint      *inflight;     /* per process, atomic */
  guint      slot;         /* worker number, for --cpus */
  guint8    *read_buf, *write_buf;
} PoolWorker;

/* Wait for this I/O's turn in its process (earlier I/Os issued). */
static gboolean
pool_wait_turn (PoolWorker *w, const PoolItem *item)
{
  while ((guint) g_atomic_int_get (&w->ticket[item->process]) != item->index)
    {
      if (replay_run_stopped (w->run))
        return FALSE;
      sched_yield ();
    }
  return TRUE;
}

static gpointer
pool_worker_main (gpointer data)
{
  PoolWorker *w = data;
  ReplayRun *run = w->run;
  gint64 t0 = replay_thread_start (run, NULL, (gint) w->slot);

  for (;;)
    {
      gint k = g_atomic_int_add (w->cursor, 1);
      const PoolItem *item;
      const ReplayIo *io;
      ReplayIoResult *r;
      gint64 issue, complete;

      if (k >= (gint) w->items->len)
        break;
      item = &g_array_index (w->items, PoolItem, k);
      io = &g_array_index (((ReplayProcess *) g_ptr_array_index (run->plan->processes,
                                                                 item->process))->ios,
                           ReplayIo, item->index);
      r = &g_array_index ((GArray *) g_ptr_array_index (run->io_results, item->process),
                          ReplayIoResult, item->index);
      if (!replay_io_check (run, item->process, item->index)
          || !replay_wait_until_ns (run, t0 + item->sched_ns)
          || !pool_wait_turn (w, item)
          || !replay_slots_acquire (run, io->target_index, &w->inflight[item->process],
                                    run->iodepth))
        break;
      issue = replay_now_ns ();
      /* The next I/O of this process may go now: order is issue order. */
      r->intended_ns = item->sched_ns;
      r->issue_ns = issue - t0;
      g_atomic_int_inc (&w->ticket[item->process]);
      r->error = do_io (run->fds[io->target_index], io, w->read_buf, w->write_buf);
      complete = replay_now_ns ();
      replay_slots_release (run, io->target_index, &w->inflight[item->process]);
      r->complete_ns = complete - t0;
      g_atomic_int_inc (&run->done_ios);
    }
  g_atomic_int_inc (&run->finished);
  return NULL;
}

static gboolean
run_psync_pool (ReplayRun *run, guint n_threads, GError **error)
{
  guint n_proc = run->plan->processes->len;
  g_autoptr (GArray) items = g_array_new (FALSE, FALSE, sizeof (PoolItem));
  g_autofree gint *ticket = g_new0 (gint, n_proc);
  g_autofree gint *inflight = g_new0 (gint, n_proc);
  g_autofree PoolWorker *workers = g_new0 (PoolWorker, n_threads);
  guint32 max_bytes = plan_max_bytes (run->plan);
  gint cursor = 0;
  gboolean ok = TRUE;

  for (guint p = 0; p < n_proc; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (run->plan->processes, p);
      for (guint i = 0; i < proc->ios->len; i++)
        {
          PoolItem item = { g_array_index (proc->ios, ReplayIo, i).sched_ns, p, i };
          g_array_append_val (items, item);
        }
    }
  g_array_sort (items, pool_item_compare);
  for (guint t = 0; t < n_threads && ok; t++)
    {
      workers[t] = (PoolWorker) { .run = run, .items = items, .cursor = &cursor,
                                  .ticket = ticket, .inflight = inflight, .slot = t };
      ok = alloc_buffers (max_bytes, run->align_bytes, &workers[t].read_buf,
                          &workers[t].write_buf, error);
    }
  if (ok)
    ok = replay_threads_run (run, n_threads, pool_worker_main, workers, sizeof (PoolWorker),
                             error);
  /* Issued I/Os are a prefix of each process (tickets), all completed. */
  for (guint p = 0; p < n_proc; p++)
    run->issued[p] = (guint) ticket[p];
  for (guint t = 0; t < n_threads; t++)
    {
      free (workers[t].read_buf);
      free (workers[t].write_buf);
    }
  return ok;
}

gint64
replay_percentile_ns (const gint64 *sorted, gsize n, double p)
{
  gsize rank;

  if (n == 0)
    return 0;
  rank = (gsize) ceil (p / 100.0 * (double) n);
  rank = CLAMP (rank, 1, n);
  return sorted[rank - 1];
}

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* Trace against replay latency of the I/Os of @results that have a
 * trace latency; @trace_ns collects theirs (for percentiles across
 * processes), @sum_replay_ns the replay's sum over the same I/Os. */
static void
collect_trace_latency (const ReplayProcess *proc, const GArray *results, GArray *trace_ns,
                       ReplayTraceLatency *t, double *sum_replay_ns)
{
  for (guint i = 0; i < results->len; i++)
    {
      const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
      gint64 traced = g_array_index (proc->ios, ReplayIo, i).trace_latency_ns;

      if (traced < 0)
        {
          t->not_recorded++;
          continue;
        }
      g_array_append_val (trace_ns, traced);
      *sum_replay_ns += (double) (r->complete_ns - r->issue_ns);
    }
}

/* Figures of @t from the trace latencies in @trace_ns (sorted here). */
static void
finish_trace_latency (GArray *trace_ns, double sum_replay_ns, ReplayTraceLatency *t)
{
  double sum = 0;

  t->ios = trace_ns->len;
  if (trace_ns->len == 0)
    return;
  for (guint i = 0; i < trace_ns->len; i++)
    sum += (double) g_array_index (trace_ns, gint64, i);
  g_array_sort (trace_ns, compare_i64);
  t->mean_ns = sum / trace_ns->len;
  t->p50_ns = replay_percentile_ns ((gint64 *) trace_ns->data, trace_ns->len, 50);
  t->p99_ns = replay_percentile_ns ((gint64 *) trace_ns->data, trace_ns->len, 99);
  t->replayed_mean_ns = sum_replay_ns / trace_ns->len;
}

static void
summarise_process (const ReplayProcess *proc, const GArray *results, ReplayProcessSummary *s)
{
  g_autoptr (GArray) trace_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  double sum_replay_ns = 0;
  g_autofree gint64 *lat = g_new (gint64, MAX (results->len, 1));
  double sum = 0;

  memset (s, 0, sizeof *s);
  s->name = g_strdup (proc->name);
  s->pid = proc->pid;
  s->ios = results->len;
  for (guint i = 0; i < results->len; i++)
    {
      const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
      lat[i] = r->complete_ns - r->issue_ns;
      sum += (double) lat[i];
      if (r->error != 0)
        s->errors++;
      else
        s->bytes += g_array_index (proc->ios, ReplayIo, i).bytes;
    }
  qsort (lat, results->len, sizeof (gint64), compare_i64);
  s->latency_mean_ns = results->len ? sum / results->len : 0;
  s->latency_p50_ns = replay_percentile_ns (lat, results->len, 50);
  s->latency_p95_ns = replay_percentile_ns (lat, results->len, 95);
  s->latency_p99_ns = replay_percentile_ns (lat, results->len, 99);
  s->latency_max_ns = results->len ? lat[results->len - 1] : 0;
  collect_trace_latency (proc, results, trace_ns, &s->trace_latency, &sum_replay_ns);
  finish_trace_latency (trace_ns, sum_replay_ns, &s->trace_latency);
}

static void
summarise (ReplayResult *res)
{
  g_autoptr (GArray) errors = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 first_issue = G_MAXINT64, last_issue = G_MININT64, last_complete = G_MININT64;
  double err_sum = 0;
  g_autoptr (GArray) submit_calls = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) trace_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  double trace_sum_replay_ns = 0;

  res->processes = g_array_new (FALSE, TRUE, sizeof (ReplayProcessSummary));
  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const GArray *results = g_ptr_array_index (res->io_results, p);
      ReplayProcessSummary s;

      summarise_process (g_ptr_array_index (res->plan->processes, p), results, &s);
      collect_trace_latency (g_ptr_array_index (res->plan->processes, p), results, trace_ns,
                             &res->trace_latency, &trace_sum_replay_ns);
      res->ios += s.ios;
      res->bytes += s.bytes;
      res->errors += s.errors;
      g_array_append_val (res->processes, s);
      for (guint i = 0; i < results->len; i++)
        {
          const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
          gint64 e = r->issue_ns - r->intended_ns;
          g_array_append_val (errors, e);
          err_sum += (double) e;
          if (res->engine != REPLAY_ENGINE_PSYNC)
            {
              gint64 call = r->submitted_ns - r->issue_ns;
              g_array_append_val (submit_calls, call);
            }
          first_issue = MIN (first_issue, r->issue_ns);
          last_issue = MAX (last_issue, r->issue_ns);
          last_complete = MAX (last_complete, r->complete_ns);
        }
    }
  finish_trace_latency (trace_ns, trace_sum_replay_ns, &res->trace_latency);
  if (res->ios == 0)
    return;
  g_array_sort (errors, compare_i64);
  res->issue_error_p50_ns = replay_percentile_ns ((gint64 *) errors->data, errors->len, 50);
  res->issue_error_p99_ns = replay_percentile_ns ((gint64 *) errors->data, errors->len, 99);
  res->issue_error_max_ns = g_array_index (errors, gint64, errors->len - 1);
  res->issue_error_mean_ns = err_sum / errors->len;
  g_array_sort (submit_calls, compare_i64);
  res->submit_call_p50_ns = replay_percentile_ns ((gint64 *) submit_calls->data,
                                                  submit_calls->len, 50);
  res->submit_call_p99_ns = replay_percentile_ns ((gint64 *) submit_calls->data,
                                                  submit_calls->len, 99);
  res->elapsed_ns = last_complete - first_issue;
  /* Rates are issue rates: (n - 1) intervals over the span of issues, so
   * that the intended and achieved figures compare like with like. */
  if (res->ios > 1 && last_issue > first_issue)
    res->achieved_iops = (double) (res->ios - 1) * 1e9 / (double) (last_issue - first_issue);
  if (res->plan->n_ios > 1 && res->plan->span_ns > 0 && res->plan->timing != REPLAY_TIMING_AFAP)
    res->intended_iops = (double) (res->plan->n_ios - 1) * 1e9 / (double) res->plan->span_ns;
  if (res->elapsed_ns > 0)
    res->mb_per_s = (double) res->bytes * 1e3 / (double) res->elapsed_ns;
}

/* Can this process run threads at SCHED_FIFO @priority?  Tried on a
 * short-lived thread so the caller's own policy stays as it was. */
static gpointer
try_rt (gpointer data)
{
  struct sched_param sp = { .sched_priority = GPOINTER_TO_INT (data) };

  return GINT_TO_POINTER (pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp));
}

static gboolean
check_rt (int priority, GError **error)
{
  int rc = GPOINTER_TO_INT (g_thread_join (g_thread_new ("replay-rt-check", try_rt,
                                                         GINT_TO_POINTER (priority))));

  if (rc == 0)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "cannot run replay threads at SCHED_FIFO priority %d: %s", priority,
               g_strerror (rc));
  return FALSE;
}

/* Wait until @started threads have finished, reporting progress. */
static void
watch_threads (ReplayRun *run, guint started, gint64 t0)
{
  gint64 last_report = replay_now_ns ();

  while ((guint) g_atomic_int_get (&run->finished) < started)
    {
      gint64 now;

      g_usleep (REPLAY_POLL_INTERVAL_US);
      now = replay_now_ns ();
      if (run->opts->progress && now - last_report >= REPLAY_PROGRESS_INTERVAL_US * 1000)
        {
          run->opts->progress ((guint64) g_atomic_int_get (&run->done_ios), run->plan->n_ios,
                               now - t0, run->opts->progress_data);
          last_report = now;
        }
    }
}

gboolean
replay_threads_run (ReplayRun *run, guint n, GThreadFunc func, gpointer datas, gsize data_size,
                    GError **error)
{
  g_autofree GThread **threads = g_new0 (GThread *, n);
  g_autoptr (GError) thread_error = NULL;
  guint started = 0;
  gint64 t0;

  for (guint k = 0; k < n; k++)
    {
      g_autofree char *name = g_strdup_printf ("replay-%u", k);

      threads[k] = g_thread_try_new (name, func, (guint8 *) datas + k * data_size, &thread_error);
      if (threads[k] == NULL)
        {
          g_atomic_int_set (&run->abort, 1);
          break;
        }
      started++;
    }
  g_mutex_lock (&run->gate.lock);
  t0 = run->gate.t0_ns = replay_now_ns () + run->opts->lead_ns;
  run->gate.go = TRUE;
  g_cond_broadcast (&run->gate.cond);
  g_mutex_unlock (&run->gate.lock);
  watch_threads (run, started, t0);
  for (guint k = 0; k < started; k++)
    g_thread_join (threads[k]);
  if (thread_error != NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot start replay thread %u of %u: %s", started + 1, n,
                   thread_error->message);
      return FALSE;
    }
  return TRUE;
}

/* How many CPUs the replay threads run on: the distinct entries of
 * --cpus, or every CPU. */
static guint
cpus_usable (const GArray *cpus)
{
  guint distinct = 0;

  if (cpus == NULL || cpus->len == 0)
    return g_get_num_processors ();
  for (guint i = 0; i < cpus->len; i++)
    {
      gboolean seen = FALSE;

      for (guint j = 0; j < i && !seen; j++)
        seen = g_array_index (cpus, int, j) == g_array_index (cpus, int, i);
      distinct += !seen;
    }
  return distinct;
}

/* Every CPU of --cpus must be one this process may run on. */
static gboolean
check_cpus (const GArray *cpus, GError **error)
{
  cpu_set_t allowed;

  if (cpus == NULL)
    return TRUE;
  if (sched_getaffinity (0, sizeof allowed, &allowed) != 0)
    CPU_ZERO (&allowed);
  for (guint i = 0; i < cpus->len; i++)
    {
      int cpu = g_array_index (cpus, int, i);
      if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET (cpu, &allowed))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                       "CPU %d is not available to this process (see taskset -p)", cpu);
          return FALSE;
        }
    }
  return TRUE;
}

/* Engine options that contradict each other, before anything is opened. */
static gboolean
check_engine_options (const ReplayOptions *opts, GError **error)
{
  if (!replay_engine_available (opts->engine, error) || !check_cpus (opts->cpus, error))
    return FALSE;
  if (opts->engine == REPLAY_ENGINE_PSYNC && opts->threads == 0 && opts->iodepth > 1)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "psync with a thread per process has queue depth 1; use --threads N for "
                   "a pool, or --engine io_uring|libaio for --iodepth %u", opts->iodepth);
      return FALSE;
    }
  if (opts->engine == REPLAY_ENGINE_PSYNC && opts->poll)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--poll reaps completions while waiting, which psync does not have; use "
                   "--engine io_uring or libaio");
      return FALSE;
    }
  if (opts->engine != REPLAY_ENGINE_PSYNC && opts->threads > 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--threads is for the psync engine; %s uses one submitting thread per process",
                   replay_engine_name (opts->engine));
      return FALSE;
    }
  if (opts->threads > 0 && opts->timing != REPLAY_TIMING_RECORDED)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "a psync pool (--threads) replays recorded timing only; closed and afap "
                   "timing wait for each process's previous completion, a thread per process");
      return FALSE;
    }
  return TRUE;
}

/* Buffered replays: the targets are opened O_DIRECT (replay-targets.c);
 * fcntl can drop it. */
static gboolean
targets_set_buffered (const GArray *targets, const int *fds, const ReplayOptions *opts,
                      GError **error)
{
  for (guint i = 0; opts->buffered && i < targets->len; i++)
    {
      int flags = fcntl (fds[i], F_GETFL);

      if (flags < 0 || fcntl (fds[i], F_SETFL, flags & ~O_DIRECT) != 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: cannot turn off O_DIRECT: %s",
                       g_array_index (targets, ReplayTarget, i).path, g_strerror (errno));
          return FALSE;
        }
    }
  return TRUE;
}

/* The error of a run that an engine aborted at an I/O outside its target
 * (replay_io_check): which I/O, where, and that it was not issued. */
static void
set_outside_error (const ReplayRun *run, const ReplayResult *res, GError **error)
{
  const ReplayProcess *proc = g_ptr_array_index (run->plan->processes, run->outside_process);
  const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, run->outside_index);
  const ReplayTarget *t = io->target_index < res->targets->len
    ? &g_array_index (res->targets, ReplayTarget, io->target_index) : NULL;

  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
               "replay aborted: I/O %u of %s (trace sector %" G_GUINT64_FORMAT ", %u bytes at byte %"
               G_GUINT64_FORMAT ") lies outside its target %s (%" G_GUINT64_FORMAT " bytes); "
               "it was not issued", run->outside_index, proc->name, io->trace_sector, io->bytes,
               io->offset_bytes, t ? t->path : "(none)",
               t ? run->target_bytes[io->target_index] : 0);
}

static gboolean
run_engine (ReplayResult *res, const int *fds, const guint64 *target_bytes,
            const ReplayOptions *opts, GError **error)
{
  guint n_proc = res->plan->processes->len;
  g_autofree guint *issued = g_new0 (guint, n_proc);
  g_autofree gint *device_inflight = g_new0 (gint, res->targets->len);
  g_autofree guint32 *tids = g_new0 (guint32, MAX (n_proc, 1));
  ReplayRun run = {
    .opts = opts, .plan = res->plan, .io_results = res->io_results, .issued = issued,
    .tids = tids,
    .fds = fds, .target_bytes = target_bytes, .n_targets = res->targets->len,
    .device_inflight = device_inflight,
    .device_depth = opts->device_depth,
    .align_bytes = MAX (res->plan->block_bytes, 4096),
  };
  guint n_threads;
  gboolean ok;

  if (opts->engine != REPLAY_ENGINE_PSYNC)
    run.iodepth = opts->iodepth ? opts->iodepth : REPLAY_ASYNC_DEFAULT_DEPTH;
  else
    run.iodepth = opts->threads ? opts->iodepth /* 0: up to the pool size */ : 1;
  n_threads = opts->threads ? opts->threads : n_proc;
  /* Async engines: a submitter and a reaper per process (--poll: only
   * the submitter).  Spinning threads that share a CPU must yield, or a
   * spinner waiting for a slot starves the thread that would free it. */
  run.yield_in_spin = (opts->engine == REPLAY_ENGINE_PSYNC || opts->poll ? n_threads : 2 * n_threads)
                      > cpus_usable (opts->cpus);
  if (opts->rt_priority > 0 && !check_rt (opts->rt_priority, error))
    return FALSE;
  for (guint p = 0; p < n_proc; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      g_array_set_size (g_ptr_array_index (res->io_results, p), proc->ios->len);
    }
  g_mutex_init (&run.gate.lock);
  g_cond_init (&run.gate.cond);
  if (opts->engine != REPLAY_ENGINE_PSYNC)
    ok = replay_engine_run_async (&run, error);
  else if (opts->threads > 0)
    ok = run_psync_pool (&run, opts->threads, error);
  else
    ok = run_psync_per_process (&run, error);
  g_cond_clear (&run.gate.cond);
  g_mutex_clear (&run.gate.lock);
  /* Results hold what was issued: a prefix of each process's schedule. */
  for (guint p = 0; p < n_proc; p++)
    g_array_set_size (g_ptr_array_index (res->io_results, p), issued[p]);
  res->interrupted = opts->stop != NULL && *opts->stop;
  res->engine = opts->engine;
  res->iodepth = run.iodepth ? run.iodepth : n_threads;
  res->device_depth = run.device_depth;
  res->threads = n_threads;
  /* Written by each thread before it joined, read after the join. */
  g_free (res->process_tids);
  res->process_tids = g_steal_pointer (&tids);
  res->buffered = opts->buffered;
  for (guint i = 0; i < res->targets->len; i++)
    res->buffered |= g_array_index (res->targets, ReplayTarget, i).buffered_fallback;
  res->max_inflight_process = (guint) run.max_process_inflight;
  res->max_inflight_device = (guint) run.max_device_inflight;
  if (run.outside)
    {
      g_clear_error (error);
      set_outside_error (&run, res, error);
      return FALSE;
    }
  return ok;
}

/* The size of each open target: what the kernel says now (BLKGETSIZE64,
 * or a file's st_size), never more than what was probed and planned for,
 * so a device or file that shrank since the probe is caught too. */
static guint64 *
targets_size_bytes (const GArray *targets, const int *fds)
{
  guint64 *sizes = g_new (guint64, MAX (targets->len, 1));

  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);
      guint64 now_bytes;
      struct stat st;

      sizes[i] = t->size_bytes;
      if (t->is_file)
        sizes[i] = fstat (fds[i], &st) == 0 ? MIN (sizes[i], (guint64) st.st_size) : 0;
      else if (ioctl (fds[i], BLKGETSIZE64, &now_bytes) == 0)
        sizes[i] = MIN (sizes[i], now_bytes);
    }
  return sizes;
}

/* @res holds targets, target and plan: open, check, set up, run. */
static ReplayResult *
run_planned (ReplayResult *res_in, const ReplayOptions *opts, gboolean check_first,
             GError **error)
{
  g_autoptr (ReplayResult) res = res_in;
  g_autofree guint64 *sizes = NULL;
  int *fds;
  gboolean ok;

  res->dry_run = opts->dry_run;
  res->engine = opts->engine;
  res->io_results = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      g_ptr_array_add (res->io_results,
                       g_array_sized_new (FALSE, TRUE, sizeof (ReplayIoResult), proc->ios->len));
    }
  res->warnings = g_ptr_array_new_with_free_func (g_free);
  if (opts->dry_run)
    {
      replay_targets_warnings (res->targets, res->plan, res->warnings);
      summarise (res);
      return g_steal_pointer (&res);
    }
  if ((fds = replay_targets_open (res->targets, res->plan, opts, error)) == NULL)
    return NULL;
  /* After the open: whether a file fell back to buffered I/O. */
  replay_targets_warnings (res->targets, res->plan, res->warnings);
  sizes = targets_size_bytes (res->targets, fds);
  /* Every I/O inside its open target before setup, capture and the first
   * I/O; then setup and capture (the prepared hook), then the engine's
   * threads, which check each I/O again. */
  ok = (!check_first || replay_plan_check_ranges (res->plan, sizes, error))
       && targets_set_buffered (res->targets, fds, opts, error)
       && (opts->prepared == NULL || opts->prepared (res->targets, opts->prepared_data, error))
       && run_engine (res, fds, sizes, opts, error);
  replay_targets_close (fds, res->targets->len);
  if (!ok)
    return NULL;
  summarise (res);
  return g_steal_pointer (&res);
}

/* Targets, mounted/in-use refusals: replay-targets.c. */
static ReplayResult *
probe_targets (const ReplayOptions *opts, GError **error)
{
  g_autoptr (ReplayResult) res = g_new0 (ReplayResult, 1);

  if (!check_engine_options (opts, error))
    return NULL;
  if ((res->targets = replay_targets_probe (opts, error)) == NULL)
    return NULL;
  replay_target_copy (&g_array_index (res->targets, ReplayTarget, 0), &res->target);
  return g_steal_pointer (&res);
}

ReplayResult *
replay_run_plan (ReplayPlan *plan, const ReplayOptions *opts, gboolean check_first,
                 GError **error)
{
  g_autoptr (ReplayPlan) owned = plan;
  ReplayResult *res;

  g_return_val_if_fail (plan != NULL && opts != NULL, NULL);
  g_return_val_if_fail (opts->target != NULL || opts->n_maps > 0, NULL);

  if ((res = probe_targets (opts, error)) == NULL)
    return NULL;
  res->plan = g_steal_pointer (&owned);
  if (res->plan->targets->len != res->targets->len)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "the plan has %u targets, the options %u", res->plan->targets->len,
                   res->targets->len);
      replay_result_free (res);
      return NULL;
    }
  return run_planned (res, opts, check_first, error);
}

ReplayResult *
replay_run_ios (const GArray *ios, const ReplayOptions *opts, GError **error)
{
  ReplayResult *res;

  g_return_val_if_fail (ios != NULL && opts != NULL, NULL);
  g_return_val_if_fail (opts->target != NULL || opts->n_maps > 0, NULL);

  if ((res = probe_targets (opts, error)) == NULL)
    return NULL;
  if ((res->plan = replay_targets_plan (ios, opts, res->targets, error)) == NULL)
    {
      replay_result_free (res);
      return NULL;
    }
  return run_planned (res, opts, TRUE, error);
}

void
replay_result_free (ReplayResult *result)
{
  if (result == NULL)
    return;
  replay_target_clear (&result->target);
  if (result->targets)
    g_array_unref (result->targets);
  replay_plan_free (result->plan);
  g_free (result->process_tids);
  if (result->warnings)
    g_ptr_array_unref (result->warnings);
  if (result->io_results)
    g_ptr_array_unref (result->io_results);
  if (result->processes)
    {
      for (guint i = 0; i < result->processes->len; i++)
        g_free (g_array_index (result->processes, ReplayProcessSummary, i).name);
      g_array_unref (result->processes);
    }
  g_free (result);
}
