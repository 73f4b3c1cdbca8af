/* fit.c — the analysis half of `iosim fit`: per-process loop/think-time
 * detection on arrays of TraceIo, and the whole fit (the device's queue and
 * service times are fitted in fit-device.c).  Reading the trace is
 * in fit-trace.c, writing the scenario and reports in fit-output.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/fit/fit.h"
#include "models/fit/fit-private.h"

G_DEFINE_QUARK (fit-error-quark, fit_error)

/* The scenario comment and the tests read [FIT_N_QUANTILES / 2] as p = 0.5. */
G_STATIC_ASSERT (FIT_N_QUANTILES % 2 == 1);

#define FIT_SECTOR_BYTES 512

/* Kernel elevator names to the simulator's (models/sched/ .name).  blk-mq
 * (Linux 3.13+, the only block layer since 5.0) names its schedulers
 * "mq-deadline", "bfq", "kyber" and "none"; the simulator models each under
 * the same name.  The legacy single-queue elevators (2.6 to 4.20) were
 * "noop", "deadline", "anticipatory" (to 2.6.32) and "cfq" (to 4.20); each
 * maps only to its legacy model, never to a blk-mq one.  mq-deadline's
 * elevator_alias "deadline" (block/mq-deadline.c, 4.11+) lets `echo
 * deadline > scheduler` select it, but sysfs prints "mq-deadline", so a
 * trace saying "deadline" comes from the legacy layer.  "as" is the boot
 * parameter alias of anticipatory (block/elevator.c elevator_setup, 2.6). */
char *
fit_sched_from_kernel (const char *kernel_name)
{
  static const struct {
    const char *kernel;
    const char *sim;
  } map[] = {
    { "none", "none" },
    { "mq-deadline", "mq-deadline" },
    { "bfq", "bfq" },
    { "kyber", "kyber" },
    { "noop", "noop" },
    { "deadline", "deadline" },
    { "anticipatory", "anticipatory" },
    { "as", "anticipatory" },
    { "cfq", "cfq" },
  };
  g_autofree char *name = NULL;
  const char *open_bracket;

  g_return_val_if_fail (kernel_name != NULL, NULL);

  /* sysfs lists every scheduler with the active one in brackets. */
  open_bracket = strchr (kernel_name, '[');
  if (open_bracket != NULL && strchr (open_bracket, ']') != NULL)
    name = g_strndup (open_bracket + 1,
                      (gsize) (strchr (open_bracket, ']') - open_bracket - 1));
  else
    name = g_strdup (kernel_name);
  g_strstrip (name);
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (g_ascii_strcasecmp (name, map[i].kernel) == 0)
      return g_strdup (map[i].sim);
  return NULL;
}

#define FIT_SCHED_NAMES "blk-mq: mq-deadline, bfq, kyber, none; legacy: noop, deadline, " \
                        "anticipatory, cfq"

/* The scheduler the scenario names: --sched, else the capture's, else
 * blk-mq's "none", marked "assumed".  A trace without a scheduler gives no
 * way to tell the kernel's default: since Linux 5.0 there is only blk-mq,
 * and elevator_set_default() (block/elevator.c, 6.16; elevator_get_default
 * before) picks "none" for a driver with BLK_MQ_F_NO_SCHED_BY_DEFAULT (loop,
 * drivers/block/loop.c loop_add) or several unshared hardware queues
 * (NVMe), mq-deadline otherwise -- flags and queue counts that no trace
 * format records.  "none" is the choice that adds no scheduling of its
 * own.  iosim capture writes "scheduler=unknown" when sysfs could not be
 * read: that says nothing either. */
/* --sched A,B,...: each name mapped; the scenario then runs once per
 * scheduler, as its sched = list does. */
static char *
fit_sched_list_from_option (const char *option, GError **error)
{
  g_auto(GStrv) names = g_strsplit (option, ",", -1);
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree char *sim = fit_sched_from_kernel (names[i]);

      if (sim == NULL)
        {
          g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED,
                       "--sched '%s': '%s' is not a scheduler the simulator has ("
                       FIT_SCHED_NAMES ")", option, g_strstrip (names[i]));
          return NULL;
        }
      g_string_append_printf (out, "%s%s", i > 0 ? "," : "", sim);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static gboolean
fit_choose_sched (FitResult *r, const char *option, const char *meta_scheduler,
                  GError **error)
{
  if (option != NULL)
    {
      r->sched = fit_sched_list_from_option (option, error);
      r->sched_source = g_strdup ("option");
      return r->sched != NULL;
    }
  if (meta_scheduler != NULL && meta_scheduler[0] != '\0'
      && strcmp (meta_scheduler, "unknown") != 0)
    {
      r->sched = fit_sched_from_kernel (meta_scheduler);
      r->sched_source = g_strdup ("trace");
      if (r->sched == NULL)
        g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED,
                     "%s: the capture's scheduler '%s' is not one the simulator has ("
                     FIT_SCHED_NAMES "); choose one with --sched", r->trace_path,
                     meta_scheduler);
      return r->sched != NULL;
    }
  r->sched = g_strdup ("none");
  r->sched_source = g_strdup ("assumed");
  return TRUE;
}

/* ---- Order statistics --------------------------------------------------- */

int
fit_double_cmp (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, h = p (n - 1). */
double
fit_quantile (const double *sorted, gsize n, double p)
{
  double h = p * (double) (n - 1);
  gsize lo = (gsize) floor (h);

  if (lo >= n - 1)
    return sorted[n - 1];
  return sorted[lo] + (h - (double) lo) * (sorted[lo + 1] - sorted[lo]);
}

/* ---- Processes ---------------------------------------------------------- */

gboolean
fit_io_is_flush (const TraceIo *io)
{
  g_return_val_if_fail (io != NULL, FALSE);
  return io->op == TRACE_OP_FLUSH
         || (io->nr_sectors == 0 && (io->rwbs & TRACE_RWBS_FLUSH) != 0);
}

/* The counts of what the scenario's trace-driven process will and will not
 * issue, by the rule of models/scenario.c load_trace_stream. */
static void
fit_process_count_kept (FitProcess *p, const TraceIo *io)
{
  if (fit_io_is_flush (io))
    p->flushes++;
  else if ((io->op == TRACE_OP_READ || io->op == TRACE_OP_WRITE) && io->nr_sectors > 0)
    {
      p->simulated_ios++;
      if (io->op == TRACE_OP_WRITE && (io->rwbs & (TRACE_RWBS_FUA | TRACE_RWBS_FLUSH)) != 0)
        p->fua_writes++;
    }
}

typedef struct {
  FitProcess *proc;
  GArray     *think_ns;       /* double */
  /* Per step pair: the gap between the steps' queue times, and the
   * latency of the earlier step (its queue to its last completion). */
  GArray     *step_gap_ns;    /* double */
  GArray     *step_latency_ns;/* double */
  gint64      step_queue_ns;  /* the current step's queue time */
  /* The current step: bios of one submission (see fit_processes). */
  gint64      step_complete_ns;   /* latest completion in the step */
  gint64      last_complete_ns;   /* completion of the last bio */
  guint64     last_end_sector;
  TraceOp     last_op;
  /* Completions of the stream's bios not yet passed by a later queue time:
   * a binary min-heap of gint64. */
  GArray     *pending_complete_ns;
} FitProcessState;

/* ---- A min-heap of completion times ------------------------------------ */

static void
fit_heap_push (GArray *heap, gint64 value)
{
  guint i = heap->len;

  g_array_append_val (heap, value);
  while (i > 0)
    {
      guint parent = (i - 1) / 2;
      gint64 *a = &g_array_index (heap, gint64, parent), *b = &g_array_index (heap, gint64, i);

      if (*a <= *b)
        break;
      gint64 t = *a;
      *a = *b;
      *b = t;
      i = parent;
    }
}

static void
fit_heap_pop (GArray *heap)
{
  guint i = 0, n;

  g_assert (heap->len > 0);
  g_array_index (heap, gint64, 0) = g_array_index (heap, gint64, heap->len - 1);
  g_array_set_size (heap, heap->len - 1);
  n = heap->len;
  for (;;)
    {
      guint l = 2 * i + 1, r = l + 1, m = i;

      if (l < n && g_array_index (heap, gint64, l) < g_array_index (heap, gint64, m))
        m = l;
      if (r < n && g_array_index (heap, gint64, r) < g_array_index (heap, gint64, m))
        m = r;
      if (m == i)
        break;
      gint64 t = g_array_index (heap, gint64, m);
      g_array_index (heap, gint64, m) = g_array_index (heap, gint64, i);
      g_array_index (heap, gint64, i) = t;
      i = m;
    }
}

/* Drop the stream's completions at or before @queue_ns; TRUE when there was
 * one, i.e. one of its bios completed since its previous bio was queued
 * (those before were dropped then). */
static gboolean
fit_completed_since_last_queue (FitProcessState *st, gint64 queue_ns)
{
  gboolean any = FALSE;

  while (st->pending_complete_ns->len > 0
         && g_array_index (st->pending_complete_ns, gint64, 0) <= queue_ns)
    {
      fit_heap_pop (st->pending_complete_ns);
      any = TRUE;
    }
  return any;
}

static void
fit_process_free (gpointer data)
{
  FitProcess *p = data;

  if (p == NULL)
    return;
  g_free (p->comm);
  g_free (p->name);
  g_free (p);
}

static void
fit_process_state_free (gpointer data)
{
  FitProcessState *st = data;

  g_array_unref (st->think_ns);
  g_array_unref (st->step_gap_ns);
  g_array_unref (st->step_latency_ns);
  g_array_unref (st->pending_complete_ns);
  g_free (st);
}

static int
fit_process_cmp (gconstpointer a, gconstpointer b)
{
  const FitProcess *x = *(FitProcess *const *) a;
  const FitProcess *y = *(FitProcess *const *) b;

  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The share of step pairs that would be dependent (the next queued after
 * the previous completed) if the gaps between steps had nothing to do
 * with the latencies: P(gap >= latency) for a gap and a latency drawn
 * independently from the process's own, over every pairing. */
static double
fit_chance_dependent (GArray *gaps, GArray *latencies)
{
  double hits = 0.0;

  if (gaps->len == 0)
    return NAN;
  g_array_sort (gaps, fit_double_cmp);
  for (guint j = 0; j < latencies->len; j++)
    {
      double l = g_array_index (latencies, double, j);
      guint lo = 0, hi = gaps->len;

      while (lo < hi)
        {
          guint mid = (lo + hi) / 2;
          if (g_array_index (gaps, double, mid) < l)
            lo = mid + 1;
          else
            hi = mid;
        }
      hits += gaps->len - lo;
    }
  return hits / ((double) gaps->len * latencies->len);
}

/* Closed loop when most steps waited for the one before.  A stream of
 * independent arrivals (many clients folded into one trace process, as in
 * the SNIA traces) also has steps that come after the previous one
 * completed, as often as a gap exceeds a latency; that share is reported
 * (dependent_chance) but does not decide.  Tried on the SYSTOR '17 sample
 * (51 % dependent, 47 % by chance), open timing gave a mean 38 % too slow
 * and a demerit of 72 % against closed's +2.7 % and 24 %: in closed timing
 * only the steps the trace shows waiting wait, each for its simulated
 * predecessor, which keeps the simulated queue from running away when
 * independent service draws pile up, where open timing holds every
 * arrival to the recorded schedule. */
static void
fit_process_timing (FitProcessState *st)
{
  FitProcess *p = st->proc;

  p->closed_loop = p->pairs > 0 && p->dependent_pairs * 2 > p->pairs;
  p->dependent_chance = fit_chance_dependent (st->step_gap_ns, st->step_latency_ns);
}

static void
fit_process_finish (FitProcessState *st)
{
  FitProcess *p = st->proc;
  GArray *t = st->think_ns;
  double sum = 0.0;

  fit_process_timing (st);
  p->name = trace_process_name (p->comm, p->pid);
  if (t->len == 0)
    {
      p->think_mean_ns = p->think_p50_ns = p->think_p95_ns = NAN;
      return;
    }
  g_array_sort (t, fit_double_cmp);
  for (guint i = 0; i < t->len; i++)
    sum += g_array_index (t, double, i);
  p->think_mean_ns = sum / t->len;
  p->think_p50_ns = fit_quantile ((const double *) t->data, t->len, 0.50);
  p->think_p95_ns = fit_quantile ((const double *) t->data, t->len, 0.95);
}

GPtrArray *
fit_processes (const TraceIo *ios, gsize n_ios)
{
  g_autoptr(GHashTable) states = g_hash_table_new_full (g_direct_hash,
                                                        g_direct_equal, NULL,
                                                        fit_process_state_free);
  GPtrArray *out = g_ptr_array_new_with_free_func (fit_process_free);
  GHashTableIter iter;
  gpointer value;

  for (gsize i = 0; i < n_ios; i++)
    {
      const TraceIo *io = &ios[i];
      gint64 start_ns = io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
      FitProcessState *st = g_hash_table_lookup (states, GUINT_TO_POINTER (io->pid));
      guint64 bytes = (guint64) io->nr_sectors * FIT_SECTOR_BYTES;
      FitProcess *p;

      g_assert ((guint) io->op <= TRACE_OP_OTHER);
      if (st == NULL)
        {
          st = g_new0 (FitProcessState, 1);
          st->think_ns = g_array_new (FALSE, FALSE, sizeof (double));
          st->step_gap_ns = g_array_new (FALSE, FALSE, sizeof (double));
          st->step_latency_ns = g_array_new (FALSE, FALSE, sizeof (double));
          st->step_queue_ns = start_ns;
          st->pending_complete_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
          st->proc = g_new0 (FitProcess, 1);
          st->proc->pid = io->pid;
          st->proc->comm = g_strdup ("");
          st->proc->first_queue_ns = start_ns;
          st->proc->last_complete_ns = io->complete_ns;
          st->step_complete_ns = io->complete_ns;
          g_hash_table_insert (states, GUINT_TO_POINTER (io->pid), st);
          g_ptr_array_add (out, st->proc);
        }
      else if (start_ns < st->last_complete_ns && io->op == st->last_op
               && io->sector == st->last_end_sector
               && !fit_completed_since_last_queue (st, start_ns))
        {
          /* A contiguous bio queued while the previous one was in flight,
           * with none of the stream's bios completing in between: the same
           * submission split up (max_sectors_kb, max_segments), or pages
           * written back in one go, not a new step.  One queued after a
           * completion may have waited for it (a request, or a slot at
           * its depth): a new step (fit.h). */
          st->step_complete_ns = MAX (st->step_complete_ns, io->complete_ns);
        }
      else
        {
          /* A new step depends on the previous one when it was queued
           * after every bio of that step had completed. */
          double gap = (double) (start_ns - st->step_queue_ns);
          double latency = (double) (st->step_complete_ns - st->step_queue_ns);

          g_array_append_val (st->step_gap_ns, gap);
          g_array_append_val (st->step_latency_ns, latency);
          st->step_queue_ns = start_ns;
          st->proc->pairs++;
          if (start_ns >= st->step_complete_ns)
            {
              double think = (double) (start_ns - st->step_complete_ns);

              st->proc->dependent_pairs++;
              g_array_append_val (st->think_ns, think);
            }
          st->step_complete_ns = io->complete_ns;
        }
      p = st->proc;
      if (p->comm[0] == '\0' && io->comm[0] != '\0')
        {
          g_free (p->comm);
          p->comm = g_strndup (io->comm, sizeof io->comm);
        }
      p->ios++;
      fit_process_count_kept (p, io);
      p->bytes += bytes;
      p->ios_by_op[io->op]++;
      p->bytes_by_op[io->op] += bytes;
      p->first_queue_ns = MIN (p->first_queue_ns, start_ns);
      p->last_complete_ns = MAX (p->last_complete_ns, io->complete_ns);
      fit_completed_since_last_queue (st, start_ns);
      fit_heap_push (st->pending_complete_ns, io->complete_ns);
      st->last_complete_ns = io->complete_ns;
      st->last_end_sector = io->sector + io->nr_sectors;
      st->last_op = io->op;
    }

  g_hash_table_iter_init (&iter, states);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    fit_process_finish (value);
  g_ptr_array_sort (out, fit_process_cmp);
  return out;
}

/* ---- Whole fit ---------------------------------------------------------- */

void
fit_result_free (FitResult *result)
{
  if (result == NULL)
    return;
  g_free (result->trace_path);
  g_free (result->device_name);
  g_free (result->kernel_name);
  g_free (result->sched);
  g_free (result->sched_source);
  fit_device_queue_clear (&result->queue);
  fit_model_choice_clear (&result->model);
  if (result->processes != NULL)
    g_ptr_array_unref (result->processes);
  if (result->ios != NULL)
    g_array_unref (result->ios);
  if (result->writers != NULL)
    g_ptr_array_unref (result->writers);
  g_free (result->writeback_note);
  g_free (result);
}

/* The kernel's name of the device, from the capture's "device=/dev/loop0"
 * (its basename, with characters a scenario or CSV cannot hold as '_');
 * NULL without one.  It labels the device; the scenario names it from
 * MAJ,MIN (fit_arrays) so that every format of one trace names it alike. */
static char *
fit_kernel_name (const char *meta_device)
{
  g_autofree char *base = NULL;

  if (meta_device == NULL || meta_device[0] == '\0')
    return NULL;
  base = g_path_get_basename (meta_device);
  for (char *p = base; *p != '\0'; p++)
    if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p) || strchr ("[],=#\"", *p) != NULL)
      *p = '_';
  return g_steal_pointer (&base);
}

/* Where the trace's requests and I/Os end, in bytes. */
static guint64
fit_extent_bytes (const TraceIo *ios, gsize n_ios, const TraceRequest *requests,
                  gsize n_requests)
{
  guint64 end = 0;

  for (gsize i = 0; i < n_requests; i++)
    end = MAX (end, (requests[i].sector + requests[i].nr_sectors) * FIT_SECTOR_BYTES);
  for (gsize i = 0; i < n_ios; i++)
    end = MAX (end, (ios[i].sector + ios[i].nr_sectors) * FIT_SECTOR_BYTES);
  return end;
}

static guint64
fit_capacity_from_extent (const TraceIo *ios, gsize n_ios,
                          const TraceRequest *requests, gsize n_requests)
{
  const guint64 mib = 1024 * 1024;
  guint64 end = fit_extent_bytes (ios, n_ios, requests, n_requests);

  return MAX (1, (end + mib - 1) / mib) * mib;
}

/* Issue-only traces (TraceIo.no_completion: fio iologs, DiskSim ascii,
 * SNIA/MSR without response times) give I/Os but no requests to fit. */
static gboolean
fit_all_issue_only (const TraceIo *ios, gsize n_ios)
{
  for (gsize i = 0; i < n_ios; i++)
    if (!ios[i].no_completion)
      return FALSE;
  return TRUE;
}

gboolean
fit_process_traced (const FitProcess *p)
{
  return !p->in_writer && p->simulated_ios > 0;
}

/* The scenario will have a process: one re-issuing its own reads and
 * writes from the trace, or a buffered writer standing for writeback.
 * (Fitting a device to requests alone, without I/Os, is the callers'
 * other use.) */
static gboolean
fit_has_workload (const FitResult *r)
{
  if (r->writers->len > 0)
    return TRUE;
  for (guint i = 0; i < r->processes->len; i++)
    if (fit_process_traced (g_ptr_array_index (r->processes, i)))
      return TRUE;
  return FALSE;
}

FitResult *
fit_arrays (const char *trace_path, const TraceIo *ios, gsize n_ios,
            const TraceRequest *requests, gsize n_requests,
            const char *meta_device, const char *meta_scheduler,
            const char *meta_size_bytes, const FitOptions *options,
            GError **error)
{
  g_autoptr(FitResult) r = NULL;
  guint64 size_bytes;

  g_return_val_if_fail (trace_path != NULL, NULL);

  if (options != NULL && !fit_host_check (&options->host, error))
    return NULL;
  if (n_requests == 0 && options != NULL && options->has_device)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_NO_DATA,
                   "%s: no completed requests (D and C) of device %u,%u to fit",
                   trace_path, options->dev_major, options->dev_minor);
      return NULL;
    }
  if (n_requests == 0 && n_ios > 0 && fit_all_issue_only (ios, n_ios))
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_NO_DATA,
                   "%s: its %" G_GSIZE_FORMAT " I/Os have no completion times (the format "
                   "records when each was issued, not when it finished), and a device model "
                   "is fitted to service times: replay it on the device (`iosim replay`) "
                   "while `iosim capture` records, and fit the capture",
                   trace_path, n_ios);
      return NULL;
    }
  if (n_requests == 0)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_NO_DATA,
                   "%s: no completed requests (D and C) to fit", trace_path);
      return NULL;
    }
  r = g_new0 (FitResult, 1);
  r->trace_path = g_strdup (trace_path);
  if (options != NULL && options->has_device)
    {
      r->dev_major = options->dev_major;
      r->dev_minor = options->dev_minor;
    }
  else
    {
      r->dev_major = requests[0].dev_major;
      r->dev_minor = requests[0].dev_minor;
    }
  /* Only the device number is in every trace format; a name from it is the
   * same whichever format (or capture header) the trace came in. */
  r->device_name = g_strdup_printf ("dev%u_%u", r->dev_major, r->dev_minor);
  r->kernel_name = fit_kernel_name (meta_device);

  if (!fit_choose_sched (r, options != NULL ? options->sched : NULL, meta_scheduler, error))
    return NULL;

  if (meta_size_bytes != NULL
      && g_ascii_string_to_unsigned (meta_size_bytes, 10, 1, G_MAXUINT64,
                                     &size_bytes, NULL))
    {
      /* A device holds at least a sector. */
      guint64 reached = MAX (fit_extent_bytes (ios, n_ios, requests, n_requests),
                             (guint64) FIT_SECTOR_BYTES);
      if (size_bytes < reached)
        {
          g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED,
                       "%s: the capture header's size_bytes=%" G_GUINT64_FORMAT " is smaller "
                       "than the trace's I/Os reach (%" G_GUINT64_FORMAT " bytes): the header "
                       "does not belong to this trace", trace_path, size_bytes, reached);
          return NULL;
        }
      r->capacity_bytes = size_bytes;
      r->capacity_from_meta = TRUE;
    }
  else
    r->capacity_bytes = fit_capacity_from_extent (ios, n_ios, requests, n_requests);

  r->max_in_flight = 1;
  for (gsize i = 0; i < n_requests; i++)
    {
      g_assert ((guint) requests[i].op <= TRACE_OP_OTHER);
      r->max_in_flight = MAX (r->max_in_flight, requests[i].in_flight_at_issue);
      r->requests_by_op[requests[i].op]++;
    }
  r->n_requests = n_requests;
  r->n_ios = n_ios;
  r->model.requested = options != NULL ? options->model : FIT_MODEL_AUTO;
  fit_device (requests, n_requests, r);
  r->processes = fit_processes (ios, n_ios);
  r->ios = g_array_sized_new (FALSE, FALSE, sizeof (TraceIo), n_ios);
  if (n_ios > 0)
    g_array_append_vals (r->ios, ios, n_ios);
  fit_writeback (r, requests, n_requests, options != NULL ? &options->host : NULL);
  if (n_ios > 0 && !fit_has_workload (r))
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_NO_DATA,
                   "%s: no read or write with data to re-create: its %" G_GSIZE_FORMAT
                   " I/Os are flushes, discards or empty (the simulated processes issue reads "
                   "and writes only)", trace_path, n_ios);
      return NULL;
    }
  return g_steal_pointer (&r);
}
