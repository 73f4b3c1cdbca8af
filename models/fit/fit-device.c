/* fit-device.c — the device half of `iosim fit`, kept apart from the
 * scheduler the trace was taken under (see fit.h for the method):
 *
 *  1. the in-flight count n(t) from the D and C times: busy time and
 *     completions at each depth, each request's depth at dispatch;
 *  2. each request's service time: for one server C - max(D, previous
 *     completion), exact for any serial device since it completes in the
 *     order it serves (the kernel's loop worker takes its cmd_list in
 *     order: drivers/block/loop.c loop_queue_work(), loop_process_work(),
 *     Linux 6.x); for p servers a FIFO device, as sim-device.c serves: a
 *     request starts at max(D, the earliest completion among the requests
 *     the servers hold);
 *  3. the parallelism p: the smallest for which no request completes
 *     before its start under p FIFO servers (p = 1: completions come in
 *     dispatch order) and the requests dispatched deeper than p get the
 *     same service time (given their size) as those that started at once
 *     on a busy device (t of the difference above -3): too few servers cut
 *     the deeper ones short; it is identified, not a lower bound, when
 *     requests dispatched at depth p + 1 waited (their D2C is longer than
 *     at depth <= p, t > 3);
 *  4. per op, least squares of service time on size (gsl_fit_linear) with
 *     95 % confidence intervals (gsl_cdf_tdist_Pinv), and quantiles of the
 *     residual overhead with a tail that follows the data.
 *
 * Cost: O(n log n) for the sorts, O(n log p) per rebuild and O(n) per
 * regression, for each candidate 1 .. p.
 */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/fit/fit.h"
#include "models/fit/fit-private.h"

#define FIT_DEVICE_SECTOR_BYTES 512
/* include/uapi/linux/major.h: LOOP_MAJOR. */
#define FIT_LOOP_MAJOR 7
/* |t| beyond which a difference in service (deeper against started at
 * once) or in D2C (one deeper against started at once) counts: a 1-in-740
 * miss on either side for a device where there is none. */
#define FIT_DEPTH_T 3.0
/* Completions before the rebuilt start that a right p may still show:
 * requests reach a loop device's server through worker threads on
 * different CPUs, so a few overtake one another: on an emulated serial
 * loop device 2 to 3 in 1,600 (0.1-0.2 %) did, where a device serving 4
 * at once completes a third of its requests before one dispatched earlier.
 * One in a hundred. */
#define FIT_NEGATIVE_SHARE 0.01

static gboolean
fit_request_usable (const TraceRequest *rq)
{
  return rq->issue_ns >= 0 && rq->complete_ns >= rq->issue_ns;
}

/* ---- 1. In-flight levels ------------------------------------------------ */

typedef struct {
  gint64 t_ns;
  int    delta;       /* +1 dispatch, -1 completion, 0 both at once (D2C = 0) */
} FitEdge;

/* By time; at one instant completions first, so that a request dispatched
 * as another completes (a closed loop without think time) does not count
 * as a deeper level. */
static int
fit_edge_cmp (const void *a, const void *b)
{
  const FitEdge *x = a, *y = b;

  if (x->t_ns != y->t_ns)
    return x->t_ns < y->t_ns ? -1 : 1;
  return x->delta - y->delta;
}

static void
fit_level_add (GArray *levels, guint n, double dt_ns, guint64 completions)
{
  while (levels->len < n)
    {
      FitDepthLevel l = { .in_flight = levels->len + 1 };
      g_array_append_val (levels, l);
    }
  g_array_index (levels, FitDepthLevel, n - 1).time_ns += dt_ns;
  g_array_index (levels, FitDepthLevel, n - 1).completions += completions;
}

/* Busy time and completions by level; Little's law figures. */
static void
fit_device_levels (const TraceRequest *requests, gsize n_requests, FitDeviceQueue *out)
{
  g_autofree FitEdge *edges = g_new (FitEdge, 2 * n_requests + 1);
  gsize n_edges = 0;
  guint64 n_done = 0;
  double d2c_sum = 0.0, area = 0.0;
  guint n = 0;

  for (gsize i = 0; i < n_requests; i++)
    if (fit_request_usable (&requests[i]))
      {
        if (requests[i].complete_ns == requests[i].issue_ns)
          edges[n_edges++] = (FitEdge) { requests[i].issue_ns, 0 };
        else
          {
            edges[n_edges++] = (FitEdge) { requests[i].issue_ns, +1 };
            edges[n_edges++] = (FitEdge) { requests[i].complete_ns, -1 };
          }
        d2c_sum += (double) (requests[i].complete_ns - requests[i].issue_ns);
        n_done++;
      }
  qsort (edges, n_edges, sizeof *edges, fit_edge_cmp);
  for (gsize i = 0; i < n_edges; i++)
    {
      if (i > 0 && n > 0)
        {
          double dt = (double) (edges[i].t_ns - edges[i - 1].t_ns);

          fit_level_add (out->levels, n, dt, 0);
          out->busy_ns += dt;
          area += dt * n;
        }
      if (edges[i].delta < 0)
        {
          g_assert (n > 0);
          fit_level_add (out->levels, n, 0.0, 1);
          n--;
        }
      else if (edges[i].delta == 0)
        fit_level_add (out->levels, n + 1, 0.0, 1);
      else
        n++;
    }
  g_assert (n == 0);
  out->mean_d2c_ns = n_done > 0 ? d2c_sum / (double) n_done : NAN;
  if (out->busy_ns > 0)
    {
      out->completion_rate_per_s = (double) n_done / out->busy_ns * 1e9;
      out->mean_in_flight = area / out->busy_ns;
      out->little_in_flight = out->completion_rate_per_s / 1e9 * out->mean_d2c_ns;
    }
  else
    out->completion_rate_per_s = out->mean_in_flight = out->little_in_flight = NAN;
}

/* ---- 2. Service times for p servers ------------------------------------ */

typedef struct {
  gint64 issue_ns;
  gint64 complete_ns;
  gsize  index;
} FitDispatch;

/* Dispatch order; ties by completion, then by position (stable).  Ties
 * come from traces with microsecond times (ftrace): a serial device
 * completes in the order it serves, so completion order is its order;
 * with several servers it is a guess. */
static int
fit_dispatch_cmp (const void *a, const void *b)
{
  const FitDispatch *x = a, *y = b;

  if (x->issue_ns != y->issue_ns)
    return x->issue_ns < y->issue_ns ? -1 : 1;
  if (x->complete_ns != y->complete_ns)
    return x->complete_ns < y->complete_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* A binary min-heap of times (completions, or when servers become free). */
typedef struct {
  gint64 *t;
  guint   n;
} FitHeap;

static void
fit_heap_push (FitHeap *h, gint64 v)
{
  guint i = h->n++;

  h->t[i] = v;
  while (i > 0 && h->t[(i - 1) / 2] > h->t[i])
    {
      gint64 tmp = h->t[i];
      h->t[i] = h->t[(i - 1) / 2];
      h->t[(i - 1) / 2] = tmp;
      i = (i - 1) / 2;
    }
}

static gint64
fit_heap_pop (FitHeap *h)
{
  gint64 top = h->t[0];
  guint i = 0;

  h->t[0] = h->t[--h->n];
  for (;;)
    {
      guint l = 2 * i + 1, r = l + 1, m = i;
      gint64 tmp;

      if (l < h->n && h->t[l] < h->t[m])
        m = l;
      if (r < h->n && h->t[r] < h->t[m])
        m = r;
      if (m == i)
        break;
      tmp = h->t[i];
      h->t[i] = h->t[m];
      h->t[m] = tmp;
      i = m;
    }
  return top;
}

/* The usable requests in dispatch order, and each one's depth at dispatch
 * (in flight then, itself included; a completion at the same instant has
 * left).  Returns the count; *@max_depth the deepest. */
static gsize
fit_dispatch_order (const TraceRequest *requests, gsize n_requests, FitDispatch *order,
                    guint *depth, guint *max_depth)
{
  g_autofree gint64 *pending = g_new (gint64, n_requests + 1);
  FitHeap heap = { pending, 0 };
  gsize n = 0;

  for (gsize i = 0; i < n_requests; i++)
    if (fit_request_usable (&requests[i]))
      order[n++] = (FitDispatch) { requests[i].issue_ns, requests[i].complete_ns, i };
  qsort (order, n, sizeof *order, fit_dispatch_cmp);
  *max_depth = 0;
  for (gsize k = 0; k < n; k++)
    {
      while (heap.n > 0 && heap.t[0] <= order[k].issue_ns)
        fit_heap_pop (&heap);
      depth[k] = heap.n + 1;
      *max_depth = MAX (*max_depth, depth[k]);
      fit_heap_push (&heap, order[k].complete_ns);
    }
  return n;
}

/* Completion order, for one server; ties by dispatch. */
static int
fit_completion_cmp (const void *a, const void *b)
{
  const FitDispatch *x = a, *y = b;

  if (x->complete_ns != y->complete_ns)
    return x->complete_ns < y->complete_ns ? -1 : 1;
  if (x->issue_ns != y->issue_ns)
    return x->issue_ns < y->issue_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* One server: a serial device completes in the order it serves, whatever
 * order it was handed them in, so request i started when it was both
 * dispatched and the previous completion had happened:
 * service = C - max(D, previous C).  Never negative. */
static void
fit_rebuild_serial (const FitDispatch *order, gsize n, double *service_ns)
{
  g_autofree FitDispatch *by_c = g_new (FitDispatch, n + 1);
  gint64 prev_c = G_MININT64;

  /* index holds the position in @order here. */
  for (gsize k = 0; k < n; k++)
    by_c[k] = (FitDispatch) { order[k].issue_ns, order[k].complete_ns, k };
  qsort (by_c, n, sizeof *by_c, fit_completion_cmp);
  for (gsize j = 0; j < n; j++)
    {
      gint64 start = MAX (by_c[j].issue_ns, prev_c);

      service_ns[by_c[j].index] = (double) (by_c[j].complete_ns - start);
      prev_c = by_c[j].complete_ns;
    }
}

/* @service_ns[k] for order[k]: C - max(D, when a server was free).  With
 * several servers the completion order does not give the order of service;
 * the device is taken to serve in dispatch order (FIFO, as sim-device.c),
 * the server that frees first taking the next request. */
static void
fit_rebuild_fifo (const FitDispatch *order, gsize n, guint p, double *service_ns)
{
  g_autofree gint64 *free_ns = g_new (gint64, p);
  FitHeap heap = { free_ns, 0 };

  for (gsize k = 0; k < n; k++)
    {
      gint64 start = order[k].issue_ns;

      if (heap.n == p)
        {
          gint64 free_at = fit_heap_pop (&heap);

          start = MAX (start, free_at);
        }
      service_ns[k] = (double) (order[k].complete_ns - start);
      fit_heap_push (&heap, order[k].complete_ns);
    }
}

static void
fit_rebuild_service (const FitDispatch *order, gsize n, guint p, double *service_ns)
{
  if (p == 1)
    fit_rebuild_serial (order, n, service_ns);
  else
    fit_rebuild_fifo (order, n, p, service_ns);
}

/* ---- 3. Parallelism ----------------------------------------------------- */

/* The t statistic of the coefficient of @flag in the least squares of @y
 * on 1, bytes, flag (and, with writes, a write intercept and a write
 * slope) over the rows with @use; 0 where it cannot be told (no row or
 * every row flagged, or an effect below a part per million of the mean:
 * noise-free data). */
static double
fit_flag_t (const TraceRequest *requests, const FitDispatch *order, const double *y_ns,
            const gboolean *use, const gboolean *flag, gsize n)
{
  gboolean writes = FALSE;
  guint k_cols, col;
  gsize rows = 0, flagged = 0, row = 0;
  double chisq, mean_abs = 0.0, coef, se;
  gsl_matrix *x, *cov;
  gsl_vector *y, *c;
  gsl_multifit_linear_workspace *work;

  for (gsize k = 0; k < n; k++)
    if (use[k])
      {
        writes |= requests[order[k].index].op == TRACE_OP_WRITE;
        rows++;
        flagged += flag[k];
        mean_abs += fabs (y_ns[k]);
      }
  k_cols = writes ? 5 : 3;
  if (flagged == 0 || flagged == rows || rows < k_cols + 2)
    return 0.0;
  mean_abs /= (double) rows;
  x = gsl_matrix_alloc (rows, k_cols);
  y = gsl_vector_alloc (rows);
  c = gsl_vector_alloc (k_cols);
  cov = gsl_matrix_alloc (k_cols, k_cols);
  work = gsl_multifit_linear_alloc (rows, k_cols);
  for (gsize k = 0; k < n; k++)
    {
      const TraceRequest *rq = &requests[order[k].index];
      double bytes = (double) rq->nr_sectors * FIT_DEVICE_SECTOR_BYTES;
      double w = rq->op == TRACE_OP_WRITE ? 1.0 : 0.0;

      if (!use[k])
        continue;
      col = 0;
      gsl_matrix_set (x, row, col++, 1.0);
      gsl_matrix_set (x, row, col++, bytes);
      if (writes)
        {
          gsl_matrix_set (x, row, col++, w);
          gsl_matrix_set (x, row, col++, w * bytes);
        }
      gsl_matrix_set (x, row, col, flag[k] ? 1.0 : 0.0);
      gsl_vector_set (y, row, y_ns[k]);
      row++;
    }
  gsl_multifit_linear (x, y, c, cov, &chisq, work);
  coef = gsl_vector_get (c, k_cols - 1);
  se = sqrt (gsl_matrix_get (cov, k_cols - 1, k_cols - 1));
  gsl_multifit_linear_free (work);
  gsl_matrix_free (cov);
  gsl_vector_free (c);
  gsl_vector_free (y);
  gsl_matrix_free (x);
  if (fabs (coef) <= 1e-6 * mean_abs)
    return 0.0;
  if (!(se > 0))
    return coef > 0 ? INFINITY : -INFINITY;
  return coef / se;
}

/* Requests that completed before one dispatched earlier than them by more
 * than @window_ns: a serial FIFO device cannot do that.  Requests
 * dispatched closer together may reach the device in either order (they
 * travel through the driver on different CPUs: the loop worker, FUSE);
 * no request reaches the device later than it completes, so the window
 * is the shortest D2C. */
static guint64
fit_count_out_of_order (const FitDispatch *order, gsize n)
{
  gint64 window_ns = G_MAXINT64, max_c = G_MININT64;
  guint64 count = 0;
  gsize j = 0;

  for (gsize k = 0; k < n; k++)
    window_ns = MIN (window_ns, order[k].complete_ns - order[k].issue_ns);
  for (gsize k = 0; k < n; k++)
    {
      while (j < k && order[j].issue_ns < order[k].issue_ns - window_ns)
        max_c = MAX (max_c, order[j++].complete_ns);
      count += order[k].complete_ns < max_c;
    }
  return count;
}

/* Candidate p, for a FIFO device of p servers: a request completing
 * before its rebuilt start (for p = 1: before one dispatched earlier, see
 * fit_count_out_of_order) is impossible, counted in *@n_negative.  And requests dispatched at depth
 * 2 .. p found a server free, so their service is their D2C; those
 * dispatched deeper get the rebuilt one; for the true p both show the
 * device's own time, for a smaller p the deeper ones are cut short (their
 * start is put after completions they overlapped).  Returns the t of
 * "dispatched deeper than p" (0 for p = 1: nothing to compare).  Requests
 * dispatched to an idle device are left out of the comparison: part of
 * their time is a latency the next request overlaps when the device is
 * busy (measured on an emulated loop device: alone 790 us, back to back
 * 540-590 us of a 570 us model service; the loop worker's wake-up and
 * the FUSE round trip), which is not service at a server. */
static double
fit_candidate_t (const TraceRequest *requests, const FitDispatch *order, const guint *depth,
                 gsize n, guint p, double *scratch_ns, gboolean *use, gboolean *flag,
                 guint64 *n_negative)
{
  if (p == 1)
    {
      *n_negative = fit_count_out_of_order (order, n);
      return 0.0;
    }
  fit_rebuild_fifo (order, n, p, scratch_ns);
  *n_negative = 0;
  for (gsize k = 0; k < n; k++)
    {
      use[k] = depth[k] >= 2;
      flag[k] = depth[k] > p;
      *n_negative += scratch_ns[k] < 0;
    }
  return fit_flag_t (requests, order, scratch_ns, use, flag, n);
}

/* Whether p + 1 servers are ruled out: under p + 1 a request dispatched at
 * depth p + 1 would start at once, so its D2C would match those dispatched
 * at depth <= p; a significantly longer D2C is waiting.  Returns its t. */
static double
fit_next_t (const TraceRequest *requests, const FitDispatch *order, const guint *depth,
            gsize n, guint p, double *scratch_ns, gboolean *use, gboolean *flag)
{
  for (gsize k = 0; k < n; k++)
    {
      scratch_ns[k] = (double) (order[k].complete_ns - order[k].issue_ns);
      use[k] = depth[k] <= p + 1;
      flag[k] = depth[k] == p + 1;
    }
  return fit_flag_t (requests, order, scratch_ns, use, flag, n);
}

/* The smallest p from 1 up under which requests do not complete before
 * they start (a p too small does that where completions overlapped) and
 * whose deeper requests are not significantly short (t > -3); at the
 * deepest depth every request started at once.  O(p) rebuilds. */
static void
fit_device_parallelism (const TraceRequest *requests, const FitDispatch *order,
                        const guint *depth, gsize n, FitDeviceQueue *out)
{
  g_autofree double *scratch = g_new (double, n + 1);
  g_autofree gboolean *use = g_new (gboolean, n + 1);
  g_autofree gboolean *flag = g_new (gboolean, n + 1);
  guint max_p = MAX (1u, MIN (out->identified_up_to, FIT_MAX_PARALLELISM));
  guint64 n_negative = 0;
  guint p = 1;

  for (p = 1; p <= max_p; p++)
    {
      out->depth_t = fit_candidate_t (requests, order, depth, n, p, scratch, use, flag,
                                      &n_negative);
      if (p == max_p
          || (out->depth_t > -FIT_DEPTH_T && n_negative <= FIT_NEGATIVE_SHARE * (double) n))
        break;
    }
  out->parallelism = p;
  out->next_depth_t = p < out->identified_up_to
                        ? fit_next_t (requests, order, depth, n, p, scratch, use, flag) : NAN;
  out->parallelism_bounded = out->next_depth_t > FIT_DEPTH_T;
}

/* Per-depth means of the requests dispatched at each depth. */
static void
fit_depth_means (const TraceRequest *requests, const FitDispatch *order, const guint *depth,
                 const double *service_ns, gsize n, GArray *levels)
{
  for (gsize k = 0; k < n; k++)
    {
      FitDepthLevel *l;

      fit_level_add (levels, depth[k], 0.0, 0);
      l = &g_array_index (levels, FitDepthLevel, depth[k] - 1);
      l->dispatched++;
      l->mean_d2c_ns += (double) (order[k].complete_ns - order[k].issue_ns);
      l->mean_service_ns += service_ns[k];
    }
  for (guint i = 0; i < levels->len; i++)
    {
      FitDepthLevel *l = &g_array_index (levels, FitDepthLevel, i);

      l->mean_d2c_ns = l->dispatched > 0 ? l->mean_d2c_ns / (double) l->dispatched : NAN;
      l->mean_service_ns = l->dispatched > 0 ? l->mean_service_ns / (double) l->dispatched
                                             : NAN;
    }
}

void
fit_device_queue_clear (FitDeviceQueue *queue)
{
  if (queue->levels != NULL)
    g_array_unref (queue->levels);
  queue->levels = NULL;
}

void
fit_device_queue (const TraceRequest *requests, gsize n_requests, FitDeviceQueue *out,
                  double *service_ns)
{
  g_autofree FitDispatch *order = g_new (FitDispatch, n_requests + 1);
  g_autofree guint *depth = g_new (guint, n_requests + 1);
  g_autofree double *service = g_new (double, n_requests + 1);
  double sum = 0.0;
  guint64 n_valid = 0;
  gsize n;

  g_return_if_fail (out != NULL);
  memset (out, 0, sizeof *out);
  out->levels = g_array_new (FALSE, TRUE, sizeof (FitDepthLevel));
  fit_device_levels (requests, n_requests, out);
  n = fit_dispatch_order (requests, n_requests, order, depth, &out->identified_up_to);
  fit_device_parallelism (requests, order, depth, n, out);
  fit_rebuild_service (order, n, out->parallelism, service);
  fit_depth_means (requests, order, depth, service, n, out->levels);
  for (gsize i = 0; i < n_requests; i++)
    service_ns[i] = NAN;
  for (gsize k = 0; k < n; k++)
    {
      service_ns[order[k].index] = service[k];
      if (service[k] >= 0)
        {
          sum += service[k];
          n_valid++;
        }
    }
  out->mean_service_ns = n_valid > 0 ? sum / (double) n_valid : NAN;
}

void
fit_device_rebuild (const TraceRequest *requests, gsize n_requests, guint parallelism,
                    double *service_ns)
{
  g_autofree FitDispatch *order = g_new (FitDispatch, n_requests + 1);
  g_autofree guint *depth = g_new (guint, n_requests + 1);
  g_autofree double *service = g_new (double, n_requests + 1);
  guint max_depth;
  gsize n;

  g_return_if_fail (parallelism >= 1);
  n = fit_dispatch_order (requests, n_requests, order, depth, &max_depth);
  fit_rebuild_service (order, n, parallelism, service);
  for (gsize i = 0; i < n_requests; i++)
    service_ns[i] = NAN;
  for (gsize k = 0; k < n; k++)
    service_ns[order[k].index] = service[k];
}

/* ---- 4. Least squares and quantiles ------------------------------------- */

/* Probabilities of the fitted quantiles below the last two: every 5 % to
 * p95 (the body, as before), then each decade of the tail in tenths. */
static guint
fit_candidate_probabilities (double *p)
{
  guint n = 0;
  double step = 0.01;

  for (guint k = 0; k < FIT_N_QUANTILES - 1; k++)
    p[n++] = (double) k / (FIT_N_QUANTILES - 1);
  for (guint k = 96; k <= 99; k++)
    p[n++] = k / 100.0;
  for (guint decade = 0; decade < 4; decade++)
    {
      double base = 1.0 - step;

      step /= 10.0;
      for (guint k = 1; k <= 9; k++)
        p[n++] = base + k * step;
    }
  return n;
}

void
fit_tail_quantiles (const double *sorted, gsize n, FitDeviceOp *out)
{
  double cand[FIT_MAX_QUANTILES];
  guint n_cand = fit_candidate_probabilities (cand);
  /* The second-largest value's probability: beyond it the data hold one
   * request, so finer steps would interpolate nothing measured. */
  double p_second = n >= 3 ? (double) (n - 2) / (double) (n - 1) : 0.0;

  G_STATIC_ASSERT (FIT_N_QUANTILES - 1 + 4 + 4 * 9 + 2 <= FIT_MAX_QUANTILES);
  g_return_if_fail (n >= 1);
  out->n_quantiles = 0;
  for (guint k = 0; k < n_cand && cand[k] < p_second - 1e-12; k++)
    out->quantile_p[out->n_quantiles++] = cand[k];
  if (n >= 3)
    out->quantile_p[out->n_quantiles++] = p_second;
  if (out->n_quantiles == 0 || out->quantile_p[0] != 0.0)
    {
      memmove (out->quantile_p + 1, out->quantile_p, out->n_quantiles * sizeof (double));
      out->quantile_p[0] = 0.0;
      out->n_quantiles++;
    }
  out->quantile_p[out->n_quantiles++] = 1.0;
  for (guint k = 0; k < out->n_quantiles; k++)
    out->overhead_quantiles_ns[k] = fit_quantile (sorted, n, out->quantile_p[k]);
}

/* The per-request overhead left once the fitted transfer time is taken
 * off, clamped at 0 because a request cannot take less than nothing. */
static void
fit_overhead_quantiles (const double *bytes, const double *service, gsize n, FitDeviceOp *out)
{
  g_autofree double *resid = g_new (double, n);

  for (gsize i = 0; i < n; i++)
    resid[i] = MAX (0.0, service[i] - bytes[i] * out->ns_per_byte);
  qsort (resid, n, sizeof *resid, fit_double_cmp);
  fit_tail_quantiles (resid, n, out);
}

/* Mean and residual RMS around the mean (population form); the interval
 * is the mean's (Student t, n - 1 degrees of freedom). */
static void
fit_mean_only (const double *y, gsize n, FitDeviceOp *out)
{
  double sum = 0.0, ss = 0.0;

  for (gsize i = 0; i < n; i++)
    sum += y[i];
  out->overhead_ns = sum / (double) n;
  for (gsize i = 0; i < n; i++)
    ss += (y[i] - out->overhead_ns) * (y[i] - out->overhead_ns);
  out->residual_rms_ns = sqrt (ss / (double) n);
  out->overhead_se_ns = n > 1 ? sqrt (ss / (double) (n - 1) / (double) n) : NAN;
  out->overhead_ci95_ns = n > 1 ? gsl_cdf_tdist_Pinv (0.975, (double) (n - 1)) * out->overhead_se_ns
                                : NAN;
  out->ns_per_byte = 0.0;
  out->ns_per_byte_se = out->ns_per_byte_ci95 = NAN;
  out->bandwidth_bytes_per_s = out->bandwidth_lo_bytes_per_s = out->bandwidth_hi_bytes_per_s = 0.0;
  out->r2 = NAN;
  out->bandwidth_identified = FALSE;
}

static guint
fit_count_distinct (const double *x, gsize n)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (gsize i = 0; i < n; i++)
    g_hash_table_add (seen, GSIZE_TO_POINTER ((gsize) x[i]));
  return g_hash_table_size (seen);
}

static void
fit_linear (const double *x, const double *y, gsize n, double mean_y, FitDeviceOp *out)
{
  double c0, c1, cov00, cov01, cov11, sumsq, sst = 0.0, t;

  gsl_fit_linear (x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  if (!(c1 > 0.0) || c0 < 0.0)
    {
      /* Larger requests are not slower: no transfer rate can be read off.
       * Or the line crosses zero before the smallest request (few sizes,
       * one of them rare): no request takes less than nothing, so it is
       * no device's cost, and the per-request overheads under it would be
       * negative, which the device model cannot draw; the service times
       * themselves can. */
      fit_mean_only (y, n, out);
      return;
    }
  for (gsize i = 0; i < n; i++)
    sst += (y[i] - mean_y) * (y[i] - mean_y);
  t = n > 2 ? gsl_cdf_tdist_Pinv (0.975, (double) (n - 2)) : NAN;
  out->bandwidth_identified = TRUE;
  out->overhead_ns = c0;
  out->overhead_se_ns = sqrt (cov00);
  out->overhead_ci95_ns = t * out->overhead_se_ns;
  out->ns_per_byte = c1;
  out->ns_per_byte_se = sqrt (cov11);
  out->ns_per_byte_ci95 = t * out->ns_per_byte_se;
  out->bandwidth_bytes_per_s = 1e9 / c1;
  out->bandwidth_lo_bytes_per_s = 1e9 / (c1 + out->ns_per_byte_ci95);
  out->bandwidth_hi_bytes_per_s = c1 > out->ns_per_byte_ci95 ? 1e9 / (c1 - out->ns_per_byte_ci95)
                                                             : INFINITY;
  out->r2 = sst > 0 ? 1.0 - sumsq / sst : NAN;
  out->residual_rms_ns = sqrt (sumsq / (double) n);
}

void
fit_device_op_service (const TraceRequest *requests, const double *service_ns,
                       gsize n_requests, TraceOp op, FitDeviceOp *out)
{
  g_autoptr(GArray) x = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) y = g_array_new (FALSE, FALSE, sizeof (double));
  double mean = 0.0, d2c = 0.0;
  gsize n;

  g_return_if_fail (out != NULL);
  memset (out, 0, sizeof *out);
  out->op = op;
  out->r2 = out->overhead_se_ns = out->overhead_ci95_ns = NAN;
  out->ns_per_byte_se = out->ns_per_byte_ci95 = NAN;
  out->mean_d2c_ns = out->mean_service_ns = NAN;

  for (gsize i = 0; i < n_requests; i++)
    {
      const TraceRequest *rq = &requests[i];
      double bytes = (double) rq->nr_sectors * FIT_DEVICE_SECTOR_BYTES;

      if (rq->op != op || isnan (service_ns[i]))
        continue;
      out->n_total++;
      if (service_ns[i] < 0)
        {
          out->n_inconsistent++;
          continue;
        }
      g_array_append_val (x, bytes);
      g_array_append_val (y, service_ns[i]);
      d2c += (double) (rq->complete_ns - rq->issue_ns);
    }
  n = x->len;
  out->n_used = n;
  out->fitted = n >= FIT_MIN_REQUESTS;
  if (!out->fitted)
    return;

  out->n_sizes = fit_count_distinct ((const double *) x->data, n);
  for (gsize i = 0; i < n; i++)
    {
      mean += g_array_index (y, double, i);
      out->mean_bytes += g_array_index (x, double, i);
    }
  out->mean_service_ns = mean / (double) n;
  out->mean_bytes /= (double) n;
  out->mean_d2c_ns = d2c / (double) n;
  if (out->n_sizes < 2)
    fit_mean_only ((const double *) y->data, n, out);
  else
    fit_linear ((const double *) x->data, (const double *) y->data, n,
                out->mean_service_ns, out);
  fit_overhead_quantiles ((const double *) x->data, (const double *) y->data, n, out);
}

void
fit_device_op (const TraceRequest *requests, gsize n_requests, TraceOp op, FitDeviceOp *out)
{
  g_autofree double *service_ns = g_new (double, n_requests + 1);
  FitDeviceQueue queue;

  fit_device_queue (requests, n_requests, &queue, service_ns);
  fit_device_op_service (requests, service_ns, n_requests, op, out);
  fit_device_queue_clear (&queue);
}

void
fit_device (const TraceRequest *requests, gsize n_requests, FitResult *r)
{
  g_autofree double *service_ns = g_new (double, n_requests + 1);

  fit_device_queue (requests, n_requests, &r->queue, service_ns);
  r->queue.loop = r->dev_major == FIT_LOOP_MAJOR;
  fit_device_op_service (requests, service_ns, n_requests, TRACE_OP_READ, &r->read);
  fit_device_op_service (requests, service_ns, n_requests, TRACE_OP_WRITE, &r->write);
  /* The kind of model (fit-disk.c): the requested one, else the better on
   * held-out requests; r->model.requested is the caller's. */
  fit_model_choose (requests, service_ns, n_requests, r->queue.parallelism,
                    r->capacity_bytes / FIT_DEVICE_SECTOR_BYTES, r->model.requested, &r->model);
  fit_model_demerit (requests, service_ns, n_requests, r->queue.parallelism, &r->read,
                     &r->write, &r->model);
}
