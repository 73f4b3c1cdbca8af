/* fit-ssd.c — the `ssd` kind of device model in `iosim fit`: the shape
 * models/dev/dev-ssd.c simulates, fitted to rebuilt service times.
 *
 * dev-ssd.c serves up to `parallelism` requests at once (a flash drive's
 * independent dies and channels behind one controller and one host link,
 * the organisation Agrawal et al. describe in "Design tradeoffs for SSD
 * performance", USENIX ATC 2008); each pays its latency, overlapped with
 * the others', then moves its data through one transfer pipeline shared by
 * all of them, reserved in start order:
 *   end = max (start + latency, pipeline free) + bytes / bandwidth.
 * In a trace the pipeline is free when the requests started before this
 * one have completed (their completion is the end of their transfer), so
 * with w = that latest completion - start (fit_ssd_pipe_waits):
 *   service = max (latency, w) + bytes / bandwidth.
 * For requests whose latency outlasted w this is latency + bytes * s; for
 * the others w + bytes * s.  Both are linear in the unknowns once the
 * classes are known, and the classes follow from the latency; so the fit
 * alternates (the usual way with segmented regression): start with a
 * latency of 0 (every request that overlapped a transfer waited), solve
 * both classes together by linear least squares (gsl_multifit_linear,
 * columns latency and s per op), classify again with the fitted latency,
 * and stop when no request changes class.  The standard errors are those
 * of the last solve, given its classes.
 *
 * The servers: a pipeline reserved in start order completes requests in
 * the order they started, so such a device passes fit_device_queue's test
 * of a serial one, whose rebuilt "service" of a queued request is then
 * its transfer alone (its latency ran while the one before it moved its
 * data).  The ssd kind therefore rebuilds the starts itself for each
 * parallelism p from fit_device_queue's up to the deepest queue seen (at
 * most FIT_SSD_MAX_PARALLELISM) and keeps the p whose fit predicts the
 * held-out requests best: each error is the request's completion
 * predicted from its start under p.  Too few servers start requests late
 * and the latency then overshoots; too many start them early and hide the
 * latency where it bound.  Fewer servers than fit_device_queue found are
 * not tried: a later start leaves less to predict, so the figure would
 * favour them for that alone (on the SNIA MSR Cambridge sample, one
 * server "beat" the fixed kind's fourteen), while more servers than the
 * fixed kind's only make the ssd kind's task harder.  With p = 1, w <= 0
 * always and the ssd kind is the fixed kind's line without its spread.
 */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/fit/fit-private.h"

/* Alternations before giving up on a fixed point (each one moves requests
 * between the classes; a handful suffice on every trace seen so far). */
#define FIT_SSD_MAX_ITERATIONS 50
/* The most servers tried: dev-ssd.c's SATA default is 8 and NCQ queues 32;
 * a loop device's 128 tags (loop.c, hw_queue_depth) bound what a trace of
 * one can show. */
#define FIT_SSD_MAX_PARALLELISM 128

typedef struct {
  double  start_ns;
  gint64  complete_ns;
  gsize   index;
} FitSsdOrder;

static int
fit_ssd_order_cmp (const void *a, const void *b)
{
  const FitSsdOrder *x = a, *y = b;

  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  if (x->complete_ns != y->complete_ns)
    return x->complete_ns < y->complete_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Per request, the pipe_wait_ns of its row: its rebuilt start is its
 * completion minus @service_ns; requests are taken in start order and the
 * wait is the latest completion among those started before it minus its
 * start.  NaN for requests that are not rows. */
static void
fit_ssd_pipe_waits (const TraceRequest *requests, const double *service_ns, gsize n,
                    double *pipe_wait_ns)
{
  g_autofree FitSsdOrder *order = g_new (FitSsdOrder, n + 1);
  gint64 latest_complete_ns = G_MININT64;
  gsize m = 0;

  for (gsize i = 0; i < n; i++)
    {
      pipe_wait_ns[i] = NAN;
      if (fit_request_has_data (&requests[i]) && !isnan (service_ns[i]) && service_ns[i] >= 0)
        order[m++] = (FitSsdOrder) { (double) requests[i].complete_ns - service_ns[i],
                                     requests[i].complete_ns, i };
    }
  qsort (order, m, sizeof *order, fit_ssd_order_cmp);
  for (gsize k = 0; k < m; k++)
    {
      pipe_wait_ns[order[k].index] = latest_complete_ns == G_MININT64
                                       ? -INFINITY
                                       : (double) latest_complete_ns - order[k].start_ns;
      latest_complete_ns = MAX (latest_complete_ns, order[k].complete_ns);
    }
}

static int
fit_ssd_op (const FitRow *row)
{
  return row->write ? 1 : 0;
}

static gboolean
fit_ssd_used (const gboolean *use, gsize i)
{
  return use == NULL || use[i];
}

/* The columns of the ops with rows; FALSE when no op has enough. */
static gboolean
fit_ssd_ops (const FitRow *rows, gsize n, const gboolean *use, FitSsdFit *out)
{
  guint64 count[2] = { 0, 0 };

  for (gsize i = 0; i < n; i++)
    if (fit_ssd_used (use, i))
      count[fit_ssd_op (&rows[i])]++;
  for (int w = 0; w < 2; w++)
    out->op_fitted[w] = count[w] >= FIT_MIN_REQUESTS;
  out->n_used = count[0] * out->op_fitted[0] + count[1] * out->op_fitted[1];
  if (!out->op_fitted[0] && !out->op_fitted[1])
    {
      out->why_not = "fewer than 3 reads and fewer than 3 writes";
      return FALSE;
    }
  return TRUE;
}

/* Whether each op's latency and s can be told apart under @waited: some
 * requests that did not wait, and either two sizes among them or some that
 * waited (whose time past the wait is the transfer alone). */
static gboolean
fit_ssd_identified (const FitRow *rows, gsize n, const gboolean *use, const gboolean *waited,
                    FitSsdFit *out)
{
  for (int w = 0; w < 2; w++)
    {
      guint64 free_rows = 0, waited_rows = 0;
      double size = NAN;
      gboolean two_sizes = FALSE;

      if (!out->op_fitted[w])
        continue;
      for (gsize i = 0; i < n; i++)
        {
          if (!fit_ssd_used (use, i) || fit_ssd_op (&rows[i]) != w)
            continue;
          if (waited[i])
            {
              waited_rows++;
              continue;
            }
          free_rows++;
          if (isnan (size))
            size = rows[i].bytes;
          else if (rows[i].bytes != size)
            two_sizes = TRUE;
        }
      if (free_rows == 0)
        {
          out->why_not = "every request of an op waited for the transfer pipeline: its "
                         "latency cannot be told";
          return FALSE;
        }
      if (!two_sizes && waited_rows == 0)
        {
          out->why_not = "one request size and no request waited for the transfer "
                         "pipeline: latency and bandwidth cannot be told apart";
          return FALSE;
        }
    }
  return TRUE;
}

/* The column of @w's latency (@slope FALSE) or s (TRUE), -1 if not fitted. */
static int
fit_ssd_col (const FitSsdFit *f, int w, gboolean slope)
{
  int col = 0;

  if (!f->op_fitted[w])
    return -1;
  if (w == 1 && f->op_fitted[0])
    col = 2;
  return col + (slope ? 1 : 0);
}

/* One least-squares solve under @waited; FALSE if the fit is not a device. */
static gboolean
fit_ssd_solve (const FitRow *rows, gsize n, const gboolean *use, const gboolean *waited,
               FitSsdFit *out)
{
  guint k = 2 * (guint) (out->op_fitted[0] + out->op_fitted[1]);
  gsl_matrix *x = gsl_matrix_calloc (out->n_used, k);
  gsl_vector *y = gsl_vector_alloc (out->n_used);
  gsl_vector *c = gsl_vector_alloc (k);
  gsl_matrix *cov = gsl_matrix_alloc (k, k);
  gsl_multifit_linear_workspace *work = gsl_multifit_linear_alloc (out->n_used, k);
  double chisq;
  gboolean ok = TRUE;
  gsize row = 0;

  for (gsize i = 0; i < n; i++)
    {
      int w = fit_ssd_op (&rows[i]);

      if (!fit_ssd_used (use, i) || !out->op_fitted[w])
        continue;
      if (!waited[i])
        gsl_matrix_set (x, row, (size_t) fit_ssd_col (out, w, FALSE), 1.0);
      gsl_matrix_set (x, row, (size_t) fit_ssd_col (out, w, TRUE), rows[i].bytes);
      gsl_vector_set (y, row, rows[i].service_ns - (waited[i] ? rows[i].pipe_wait_ns : 0.0));
      row++;
    }
  gsl_multifit_linear (x, y, c, cov, &chisq, work);
  out->t95 = gsl_cdf_tdist_Pinv (0.975, (double) (out->n_used - k));
  for (int w = 0; w < 2; w++)
    {
      int cl = fit_ssd_col (out, w, FALSE), cs = fit_ssd_col (out, w, TRUE);

      if (cl < 0)
        continue;
      out->latency_ns[w] = gsl_vector_get (c, (size_t) cl);
      out->latency_se_ns[w] = sqrt (MAX (0.0, gsl_matrix_get (cov, (size_t) cl, (size_t) cl)));
      out->ns_per_byte[w] = gsl_vector_get (c, (size_t) cs);
      out->ns_per_byte_se[w] = sqrt (MAX (0.0, gsl_matrix_get (cov, (size_t) cs, (size_t) cs)));
      if (!(out->latency_ns[w] >= 0) || !(out->ns_per_byte[w] > 0))
        ok = FALSE;
    }
  if (!ok)
    out->why_not = "the fitted latency is negative or larger requests are not slower";
  gsl_multifit_linear_free (work);
  gsl_matrix_free (cov);
  gsl_vector_free (c);
  gsl_vector_free (y);
  gsl_matrix_free (x);
  return ok;
}

/* An op without rows takes the other's figures, as the fixed kind does. */
static void
fit_ssd_fill_absent (FitSsdFit *out)
{
  for (int w = 0; w < 2; w++)
    if (!out->op_fitted[w])
      {
        out->latency_ns[w] = out->latency_ns[1 - w];
        out->latency_se_ns[w] = out->latency_se_ns[1 - w];
        out->ns_per_byte[w] = out->ns_per_byte[1 - w];
        out->ns_per_byte_se[w] = out->ns_per_byte_se[1 - w];
      }
  for (int w = 0; w < 2; w++)
    out->bandwidth_bytes_per_s[w] = 1e9 / out->ns_per_byte[w];
}

/* R^2 and residual RMS of the service times themselves. */
static void
fit_ssd_goodness (const FitRow *rows, gsize n, const gboolean *use, FitSsdFit *out)
{
  double mean = 0.0, sst = 0.0, sse = 0.0;
  guint64 m = 0;

  for (gsize i = 0; i < n; i++)
    if (fit_ssd_used (use, i) && out->op_fitted[fit_ssd_op (&rows[i])])
      {
        mean += rows[i].service_ns;
        m++;
      }
  mean /= (double) m;
  for (gsize i = 0; i < n; i++)
    if (fit_ssd_used (use, i) && out->op_fitted[fit_ssd_op (&rows[i])])
      {
        double e = rows[i].service_ns - fit_ssd_predict (out, &rows[i]);

        sse += e * e;
        sst += (rows[i].service_ns - mean) * (rows[i].service_ns - mean);
      }
  out->r2 = sst > 0 ? 1.0 - sse / sst : NAN;
  out->residual_rms_ns = sqrt (sse / (double) m);
}

/* Classify under the current latencies; TRUE if any request moved. */
static gboolean
fit_ssd_classify (const FitRow *rows, gsize n, const gboolean *use, const FitSsdFit *f,
                  gboolean *waited, guint64 *n_waited)
{
  gboolean moved = FALSE;

  *n_waited = 0;
  for (gsize i = 0; i < n; i++)
    {
      int w = fit_ssd_op (&rows[i]);
      gboolean now = fit_ssd_used (use, i) && f->op_fitted[w]
                     && rows[i].pipe_wait_ns > f->latency_ns[w];

      moved |= now != waited[i];
      waited[i] = now;
      *n_waited += now;
    }
  return moved;
}

/* The ssd kind on the rows in @use (NULL: all). */
static void
fit_ssd_regress (const FitRow *rows, gsize n, const gboolean *use, FitSsdFit *out)
{
  g_autofree gboolean *waited = g_new0 (gboolean, n + 1);

  memset (out, 0, sizeof *out);
  out->t95 = out->r2 = out->residual_rms_ns = out->held_out_mae_ns = NAN;
  if (!fit_ssd_ops (rows, n, use, out))
    return;
  /* Latency 0 to begin: every request that overlapped a transfer waited. */
  fit_ssd_classify (rows, n, use, out, waited, &out->n_waited);
  for (out->iterations = 1; out->iterations <= FIT_SSD_MAX_ITERATIONS; out->iterations++)
    {
      if (!fit_ssd_identified (rows, n, use, waited, out)
          || out->n_used <= 2 * (guint64) (out->op_fitted[0] + out->op_fitted[1])
          || !fit_ssd_solve (rows, n, use, waited, out))
        {
          if (out->why_not == NULL)
            out->why_not = "no more requests than parameters";
          return;
        }
      if (!fit_ssd_classify (rows, n, use, out, waited, &out->n_waited))
        {
          out->converged = TRUE;
          break;
        }
    }
  out->iterations = MIN (out->iterations, FIT_SSD_MAX_ITERATIONS);
  fit_ssd_fill_absent (out);
  fit_ssd_goodness (rows, n, use, out);
  out->fitted = TRUE;
}

double
fit_ssd_predict (const FitSsdFit *fit, const FitRow *row)
{
  int w = fit_ssd_op (row);

  return MAX (fit->latency_ns[w], row->pipe_wait_ns) + row->bytes * fit->ns_per_byte[w];
}

char *
fit_ssd_device_keys (const FitSsdFit *fit)
{
  g_return_val_if_fail (fit->fitted, NULL);
  g_autofree char *read_rate = fit_rate_text (fit->bandwidth_bytes_per_s[0], 2);
  g_autofree char *write_rate = fit_rate_text (fit->bandwidth_bytes_per_s[1], 2);
  return g_strdup_printf ("kind = ssd\nread_latency = %.3fus\nwrite_latency = %.3fus\n"
                          "read_bandwidth = %s\nwrite_bandwidth = %s\nparallelism = %u\n",
                          fit->latency_ns[0] / 1e3, fit->latency_ns[1] / 1e3, read_rate,
                          write_rate, fit->parallelism);
}

/* ---- The servers: one fit per parallelism ------------------------------- */

static int
fit_ssd_dispatch_cmp (const void *a, const void *b)
{
  const TraceRequest *const *x = a, *const *y = b;

  if ((*x)->issue_ns != (*y)->issue_ns)
    return (*x)->issue_ns < (*y)->issue_ns ? -1 : 1;
  if ((*x)->complete_ns != (*y)->complete_ns)
    return (*x)->complete_ns < (*y)->complete_ns ? -1 : 1;
  return (*x > *y) - (*x < *y);
}

gboolean *
fit_ssd_held_out (const TraceRequest *requests, gsize n)
{
  g_autofree const TraceRequest **order = g_new (const TraceRequest *, n + 1);
  gboolean *held = g_new0 (gboolean, n + 1);
  gsize m = 0;

  for (gsize i = 0; i < n; i++)
    if (fit_request_has_data (&requests[i]))
      order[m++] = &requests[i];
  qsort (order, m, sizeof *order, fit_ssd_dispatch_cmp);
  for (gsize k = 0; k < m; k++)
    held[order[k] - requests] = k % FIT_HOLD_OUT_EVERY == FIT_HOLD_OUT_EVERY - 1;
  return held;
}

GArray *
fit_ssd_rows (const TraceRequest *requests, const double *service_ns, gsize n)
{
  g_autofree double *wait_ns = g_new (double, n + 1);
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (FitRow));

  fit_ssd_pipe_waits (requests, service_ns, n, wait_ns);
  for (gsize i = 0; i < n; i++)
    if (!isnan (wait_ns[i]))
      {
        FitRow row = { .service_ns = service_ns[i],
                       .bytes = (double) requests[i].nr_sectors * 512.0,
                       .d_sectors = NAN,
                       .write = requests[i].op == TRACE_OP_WRITE,
                       .pipe_wait_ns = wait_ns[i],
                       .index = i };
        g_array_append_val (rows, row);
      }
  return rows;
}

/* The ssd kind with @p servers, trained without the held-out requests;
 * their absolute errors into @err_ns (NaN elsewhere).  The mean of those,
 * or NaN when it cannot be fitted or judged (*@why_not then says why). */
static double
fit_ssd_try (const TraceRequest *requests, gsize n, guint p, const gboolean *held_out,
             double *service_ns, double *err_ns, const char **why_not)
{
  g_autoptr(GArray) rows = NULL;
  g_autofree gboolean *train = NULL;
  const FitRow *r;
  FitSsdFit f;
  double sum = 0.0;
  guint64 m = 0;

  fit_device_rebuild (requests, n, p, service_ns);
  rows = fit_ssd_rows (requests, service_ns, n);
  r = (const FitRow *) rows->data;
  train = g_new (gboolean, rows->len + 1);
  for (guint k = 0; k < rows->len; k++)
    train[k] = !held_out[r[k].index];
  fit_ssd_regress (r, rows->len, train, &f);
  for (gsize i = 0; i < n; i++)
    err_ns[i] = NAN;
  if (!f.fitted)
    {
      *why_not = f.why_not;
      return NAN;
    }
  for (guint k = 0; k < rows->len; k++)
    if (!train[k])
      {
        err_ns[r[k].index] = fabs (r[k].service_ns - fit_ssd_predict (&f, &r[k]));
        sum += err_ns[r[k].index];
        m++;
      }
  if (m < 2)
    {
      *why_not = "fewer than 2 requests held out";
      return NAN;
    }
  return sum / (double) m;
}

void
fit_ssd_choose (const TraceRequest *requests, gsize n, guint min_parallelism,
                guint max_parallelism, const gboolean *held_out, FitSsdFit *out,
                double *held_out_error_ns)
{
  g_autofree double *service_ns = g_new (double, n + 1);
  g_autofree double *err_ns = g_new (double, n + 1);
  g_autoptr(GArray) rows = NULL;
  const char *why_not = "no parallelism gave a fit";
  guint first = CLAMP (min_parallelism, 1, FIT_SSD_MAX_PARALLELISM);
  guint candidates = CLAMP (max_parallelism, first, FIT_SSD_MAX_PARALLELISM), best_p = 0;
  double best_mae = INFINITY;

  for (gsize i = 0; i < n; i++)
    held_out_error_ns[i] = NAN;
  /* When no parallelism fits, the reason given is the fewest servers':
   * the simplest device, and the one a reader checks first. */
  for (guint p = first; p <= candidates; p++)
    {
      const char *why_not_here = NULL;
      double mae = fit_ssd_try (requests, n, p, held_out, service_ns, err_ns, &why_not_here);

      if (p == first && why_not_here != NULL)
        why_not = why_not_here;

      if (mae < best_mae)
        {
          best_mae = mae;
          best_p = p;
          memcpy (held_out_error_ns, err_ns, n * sizeof *err_ns);
        }
    }
  if (best_p == 0)
    {
      memset (out, 0, sizeof *out);
      out->t95 = out->r2 = out->residual_rms_ns = out->held_out_mae_ns = NAN;
      out->why_not = why_not;
      out->first_candidate = first;
      out->candidates = candidates;
      return;
    }
  fit_device_rebuild (requests, n, best_p, service_ns);
  rows = fit_ssd_rows (requests, service_ns, n);
  fit_ssd_regress ((const FitRow *) rows->data, rows->len, NULL, out);
  out->parallelism = best_p;
  out->first_candidate = first;
  out->candidates = candidates;
  out->held_out_mae_ns = best_mae;
}
