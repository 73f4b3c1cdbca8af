/* replay-engine.c — running replay schedules on a real block device.
 *
 * One thread per traced process, each doing synchronous O_DIRECT
 * pread/pwrite (queue depth 1 per process; an io_uring engine with deeper
 * queues is future work).  Pacing follows reference/anchors.md §C and
 * §E.3: one absolute schedule from a common t0 on CLOCK_MONOTONIC, timer
 * slack 1 ns, clock_nanosleep(TIMER_ABSTIME) to ~50 us before the intended
 * time, then a spin on clock_gettime (the measured sleep overshoot with
 * slack 1 ns is ~4-16 us p50-p99, so 50 us of spinning covers it).
 */
#include "replay/replay.h"
#include "replay/replay-targets.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* How often the controlling thread looks at the workers, and reports. */
#define REPLAY_POLL_INTERVAL_US (10 * 1000)
#define REPLAY_PROGRESS_INTERVAL_US (200 * 1000)

static gint64
monotonic_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* Threads are created first and wait here; t0 is set once all exist, so
 * the lead need not cover thread creation for traces with many processes. */
typedef struct {
  GMutex   lock;
  GCond    cond;
  gboolean go;
  gint64   t0_ns;
} StartGate;

typedef struct {
  const ReplayProcess *proc;
  StartGate   *gate;
  GArray      *results;     /* ReplayIoResult */
  const int   *fds;         /* per target, ReplayIo.target_index */
  gint64       t0_ns;       /* absolute CLOCK_MONOTONIC */
  ReplayTiming timing;
  gint64       spin_ns;
  gboolean     yield_in_spin; /* more threads than CPUs: let the others run */
  int          rt_priority;
  volatile sig_atomic_t *stop;
  guint8      *read_buf;    /* aligned, as large as the process's largest I/O */
  guint8      *write_buf;
  gint        *done_ios;    /* shared, atomic */
  gint        *finished;    /* shared, atomic */
  gint        *abort;       /* shared, atomic */
} Worker;

static gboolean
worker_stopped (const Worker *w)
{
  return g_atomic_int_get (w->abort) || (w->stop != NULL && *w->stop);
}

/* Sleep in slices of at most this, so that a stop request is seen soon
 * even in a long gap of the trace. */
#define REPLAY_MAX_SLEEP_NS (50 * 1000 * 1000)

/* Wait for @target_ns: sleep until spin_ns before it, then spin.  FALSE
 * when asked to stop meanwhile. */
static gboolean
wait_until_ns (const Worker *w, gint64 target_ns)
{
  gint64 spin_ns = w->spin_ns;

  for (;;)
    {
      gint64 now = monotonic_now_ns ();
      gint64 wake;
      struct timespec ts;

      if (worker_stopped (w))
        return FALSE;
      if (target_ns - now <= spin_ns)
        break;
      wake = MIN (target_ns - spin_ns, now + REPLAY_MAX_SLEEP_NS);
      ts.tv_sec = wake / 1000000000;
      ts.tv_nsec = wake % 1000000000;
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
  while (monotonic_now_ns () < target_ns)
    if (w->yield_in_spin)
      sched_yield ();
  return TRUE;
}

/* Absolute intended time of I/O @i, from the schedule and what happened
 * to the previous I/O of this process. */
static gint64
intended_abs_ns (const Worker *w, guint i, gint64 prev_intended, gint64 prev_complete)
{
  const ReplayIo *io = &g_array_index (w->proc->ios, ReplayIo, i);

  if (i == 0 || w->timing == REPLAY_TIMING_RECORDED)
    return w->timing == REPLAY_TIMING_AFAP ? w->t0_ns : w->t0_ns + io->sched_ns;
  if (w->timing == REPLAY_TIMING_AFAP)
    return prev_complete;
  if (io->think_ns >= 0)
    return prev_complete + io->think_ns;
  /* No usable think time: keep the recorded gap from the previous issue,
   * but never before the previous I/O completed (QD1). */
  return MAX (prev_intended + io->gap_ns, prev_complete);
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

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  gint64 prev_intended, prev_complete;

  g_mutex_lock (&w->gate->lock);
  while (!w->gate->go)
    g_cond_wait (&w->gate->cond, &w->gate->lock);
  w->t0_ns = w->gate->t0_ns;
  g_mutex_unlock (&w->gate->lock);
  prev_intended = prev_complete = w->t0_ns;

  /* Timer slack is per thread; the default 50 us makes every wake-up late. */
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  set_thread_comm (w->proc->name);
  if (w->rt_priority > 0)
    {
      /* Checked by the caller first (replay_check_rt); this cannot fail then. */
      struct sched_param sp = { .sched_priority = w->rt_priority };
      pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp);
    }
  for (guint i = 0; i < w->proc->ios->len; i++)
    {
      const ReplayIo *io = &g_array_index (w->proc->ios, ReplayIo, i);
      ReplayIoResult r;
      gint64 intended = intended_abs_ns (w, i, prev_intended, prev_complete);
      gint64 issue, complete;

      if (!wait_until_ns (w, intended))
        break;
      issue = monotonic_now_ns ();
      r.error = do_io (w->fds[io->target_index], io, w->read_buf, w->write_buf);
      complete = monotonic_now_ns ();
      r.intended_ns = intended - w->t0_ns;
      r.issue_ns = issue - w->t0_ns;
      r.complete_ns = complete - w->t0_ns;
      g_array_append_val (w->results, r);
      prev_intended = intended;
      prev_complete = complete;
      g_atomic_int_inc (w->done_ios);
    }
  g_atomic_int_inc (w->finished);
  return NULL;
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

static void
summarise_process (const ReplayProcess *proc, const GArray *results, ReplayProcessSummary *s)
{
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
}

static void
summarise (ReplayResult *res)
{
  g_autoptr (GArray) errors = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 first_issue = G_MAXINT64, last_issue = G_MININT64, last_complete = G_MININT64;
  double err_sum = 0;

  res->processes = g_array_new (FALSE, TRUE, sizeof (ReplayProcessSummary));
  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const GArray *results = g_ptr_array_index (res->io_results, p);
      ReplayProcessSummary s;

      summarise_process (g_ptr_array_index (res->plan->processes, p), results, &s);
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
          first_issue = MIN (first_issue, r->issue_ns);
          last_issue = MAX (last_issue, r->issue_ns);
          last_complete = MAX (last_complete, r->complete_ns);
        }
    }
  if (res->ios == 0)
    return;
  g_array_sort (errors, compare_i64);
  res->issue_error_p50_ns = replay_percentile_ns ((gint64 *) errors->data, errors->len, 50);
  res->issue_error_p99_ns = replay_percentile_ns ((gint64 *) errors->data, errors->len, 99);
  res->issue_error_max_ns = g_array_index (errors, gint64, errors->len - 1);
  res->issue_error_mean_ns = err_sum / errors->len;
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

/* Buffers before the clock starts: allocation failure is an error, not a
 * late first I/O.  Written data is a fixed pattern; only timing matters. */
static gboolean
worker_alloc (Worker *w, guint32 align_bytes, GError **error)
{
  guint32 max_bytes = 0;

  for (guint i = 0; i < w->proc->ios->len; i++)
    max_bytes = MAX (max_bytes, g_array_index (w->proc->ios, ReplayIo, i).bytes);
  if (posix_memalign ((void **) &w->read_buf, align_bytes, max_bytes) != 0
      || posix_memalign ((void **) &w->write_buf, align_bytes, max_bytes) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot allocate %u bytes of I/O buffer for %s", max_bytes, w->proc->name);
      return FALSE;
    }
  memset (w->read_buf, 0, max_bytes);
  memset (w->write_buf, 0x5a, max_bytes);
  return TRUE;
}

static void
workers_free (Worker *workers, guint n)
{
  for (guint p = 0; p < n; p++)
    {
      free (workers[p].read_buf);
      free (workers[p].write_buf);
    }
  g_free (workers);
}

/* Wait until @started workers have finished, reporting progress. */
static void
watch_workers (gint *finished, guint started, gint *done_ios, guint64 total_ios, gint64 t0,
               const ReplayOptions *opts)
{
  gint64 last_report = monotonic_now_ns ();

  while ((guint) g_atomic_int_get (finished) < started)
    {
      gint64 now;

      g_usleep (REPLAY_POLL_INTERVAL_US);
      now = monotonic_now_ns ();
      if (opts->progress && now - last_report >= REPLAY_PROGRESS_INTERVAL_US * 1000)
        {
          opts->progress ((guint64) g_atomic_int_get (done_ios), total_ios, now - t0,
                          opts->progress_data);
          last_report = now;
        }
    }
}

/* Start one thread per process at a common t0 and wait for all of them. */
static gboolean
run_threads (ReplayResult *res, const int *fds, const ReplayOptions *opts, GError **error)
{
  guint n = res->plan->processes->len;
  Worker *workers = g_new0 (Worker, n);
  g_autofree GThread **threads = g_new0 (GThread *, n);
  gint done_ios = 0, finished = 0, abort_flag = 0;
  guint32 align_bytes = MAX (res->plan->block_bytes, 4096);
  gint64 t0;
  guint started = 0;
  StartGate gate = { .go = FALSE };
  g_autoptr (GError) thread_error = NULL;

  for (guint p = 0; p < n; p++)
    {
      workers[p] = (Worker) {
        .proc = g_ptr_array_index (res->plan->processes, p), .gate = &gate,
        .results = g_ptr_array_index (res->io_results, p), .fds = fds,
        .timing = res->plan->timing, .spin_ns = opts->spin_ns, .stop = opts->stop,
        .yield_in_spin = n > g_get_num_processors (), .rt_priority = opts->rt_priority,
        .done_ios = &done_ios, .finished = &finished, .abort = &abort_flag,
      };
      if (!worker_alloc (&workers[p], align_bytes, error))
        {
          workers_free (workers, n);
          return FALSE;
        }
    }
  if (opts->rt_priority > 0 && !check_rt (opts->rt_priority, error))
    {
      workers_free (workers, n);
      return FALSE;
    }
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  for (guint p = 0; p < n; p++)
    {
      g_autofree char *name = g_strdup_printf ("replay-%u", workers[p].proc->pid);

      threads[p] = g_thread_try_new (name, worker_main, &workers[p], &thread_error);
      if (threads[p] == NULL)
        {
          g_atomic_int_set (&abort_flag, 1);
          break;
        }
      started++;
    }
  g_mutex_lock (&gate.lock);
  t0 = gate.t0_ns = monotonic_now_ns () + opts->lead_ns;
  gate.go = TRUE;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
  watch_workers (&finished, started, &done_ios, res->plan->n_ios, t0, opts);
  for (guint p = 0; p < started; p++)
    g_thread_join (threads[p]);
  workers_free (workers, n);
  g_cond_clear (&gate.cond);
  g_mutex_clear (&gate.lock);
  res->interrupted = opts->stop != NULL && *opts->stop;
  if (thread_error != NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot start a replay thread for process %u of %u: %s",
                   started + 1, n, thread_error->message);
      return FALSE;
    }
  return TRUE;
}

ReplayResult *
replay_run_ios (const GArray *ios, const ReplayOptions *opts, GError **error)
{
  g_autoptr (ReplayResult) res = g_new0 (ReplayResult, 1);
  int *fds;
  gboolean ok;

  g_return_val_if_fail (ios != NULL && opts != NULL, NULL);
  g_return_val_if_fail (opts->target != NULL || opts->n_maps > 0, NULL);

  /* Targets, mounted/in-use refusals and the plan: replay-targets.c. */
  if ((res->targets = replay_targets_probe (opts, error)) == NULL
      || !replay_target_probe (g_array_index (res->targets, ReplayTarget, 0).path,
                               &res->target, error)
      || (res->plan = replay_targets_plan (ios, opts, res->targets, error)) == NULL)
    return NULL;
  res->dry_run = opts->dry_run;
  res->io_results = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      g_ptr_array_add (res->io_results,
                       g_array_sized_new (FALSE, TRUE, sizeof (ReplayIoResult), proc->ios->len));
    }
  if (opts->dry_run)
    {
      summarise (res);
      return g_steal_pointer (&res);
    }
  if ((fds = replay_targets_open (res->targets, res->plan, opts, error)) == NULL)
    return NULL;
  ok = (opts->prepared == NULL || opts->prepared (res->targets, opts->prepared_data, error))
       && run_threads (res, fds, opts, error);
  replay_targets_close (fds, res->targets->len);
  if (!ok)
    return NULL;
  summarise (res);
  return g_steal_pointer (&res);
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
