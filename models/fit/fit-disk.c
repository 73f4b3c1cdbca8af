/* fit-disk.c — the `disk` kind of device model in `iosim fit`, and the
 * choice between it and `fixed` by held-out goodness of fit.
 *
 * A serial device (parallelism 1, fit-device.c) serves in the order it
 * completes, so the rebuilt service times in completion order are the
 * requests as the head met them, and each one's seek distance d is the
 * distance in sectors from the end of the previous request served to its
 * start (d = 0: sequential).  After Ruemmler & Wilkes, "An introduction to
 * disk drive modeling" (IEEE Computer, 1994), the shape dev-disk.c
 * simulates:
 *   service = overhead + write_extra [write] + [d > 0] (a + rotation)
 *             + b sqrt(d) + c d + bytes / bandwidth.
 * For a given d this is linear in its unknowns (overhead, write_extra,
 * a + rotation, b, c, 1 / bandwidth), so it is fitted by ordinary linear
 * least squares (gsl_multifit_linear, with the covariance sigma^2
 * (X'X)^-1): one exact optimum, no starting values or iterations to
 * converge, which gsl_multifit_nlinear would only approach; nonlinear
 * least squares would be needed only if the exponent of d were fitted too.
 *
 * Rotation: a request that moved waits on average half a revolution for
 * its sector; that mean is a constant for every d > 0, so it cannot be
 * told from the seek curve's a, and the fit reports a + rotation as one
 * figure.  The rpm is not identifiable from service times alone (the
 * rotational wait's spread is in the residuals, mixed with everything
 * else), so none is claimed.
 *
 * The choice: every 5th request in service order is held out (no random
 * draw: the same trace gives the same split); both kinds are fitted on the
 * rest and predict each held-out request's service time.  The figure is
 * the mean absolute error of those predictions: it scores each request
 * against its own prediction, where a distance of CDFs would not (the
 * fixed kind draws its overhead from quantiles, so it can match the
 * distribution of a seek-bound device's times while placing every long
 * one on the wrong request).  `disk` has more parameters and never fits the
 * training part worse, so it is chosen only when its held-out error is
 * lower by more than 3 standard errors of the paired difference (the
 * 1-in-740 one-sided miss fit-device.c uses for the depth); otherwise the
 * simpler kind stands.
 */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit-private.h"

#define FIT_DISK_SECTOR_BYTES 512
/* Requests that moved (d > 0) needed before a, b, c are fitted: three
 * seek parameters and enough left over for their errors. */
#define FIT_DISK_MIN_RANDOM 10
/* The held-out gain of `disk` over `fixed`, in standard errors, needed to
 * choose the richer kind. */
#define FIT_MODEL_GAIN_T 3.0

typedef FitRow FitDiskRow;

const char *
fit_model_kind_name (FitModelKind kind)
{
  switch (kind)
    {
    case FIT_MODEL_FIXED:
      return "fixed";
    case FIT_MODEL_DISK:
      return "disk";
    case FIT_MODEL_EMPIRICAL:
      return "empirical";
    case FIT_MODEL_SSD:
      return "ssd";
    case FIT_MODEL_AUTO:
    default:
      return "auto";
    }
}

gboolean
fit_model_kind_parse (const char *text, FitModelKind *out)
{
  static const FitModelKind kinds[] = { FIT_MODEL_AUTO, FIT_MODEL_FIXED, FIT_MODEL_DISK,
                                        FIT_MODEL_SSD, FIT_MODEL_EMPIRICAL };

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    if (g_strcmp0 (text, fit_model_kind_name (kinds[k])) == 0)
      {
        *out = kinds[k];
        return TRUE;
      }
  return FALSE;
}

/* ---- Rows in service order ---------------------------------------------- */

typedef struct {
  gint64 complete_ns;
  gint64 issue_ns;
  gsize  index;
} FitDiskOrder;

static int
fit_disk_order_cmp (const void *a, const void *b)
{
  const FitDiskOrder *x = a, *y = b;

  if (x->complete_ns != y->complete_ns)
    return x->complete_ns < y->complete_ns ? -1 : 1;
  if (x->issue_ns != y->issue_ns)
    return x->issue_ns < y->issue_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Reads and writes with data in completion order (the serial device's
 * service order).  Every one moves the head; those with a rebuilt service
 * time >= 0 and a previous request become rows. */
static GArray *
fit_disk_rows (const TraceRequest *requests, const double *service_ns, gsize n)
{
  g_autofree FitDiskOrder *order = g_new (FitDiskOrder, n + 1);
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (FitDiskRow));
  gboolean have_prev = FALSE;
  guint64 prev_end = 0;
  gsize m = 0;

  for (gsize i = 0; i < n; i++)
    if (fit_request_has_data (&requests[i]))
      order[m++] = (FitDiskOrder) { requests[i].complete_ns, requests[i].issue_ns, i };
  qsort (order, m, sizeof *order, fit_disk_order_cmp);
  for (gsize k = 0; k < m; k++)
    {
      const TraceRequest *rq = &requests[order[k].index];
      double s = service_ns[order[k].index];

      if (have_prev && !isnan (s) && s >= 0)
        {
          FitDiskRow row = {
            .service_ns = s,
            .bytes = (double) rq->nr_sectors * FIT_DISK_SECTOR_BYTES,
            .d_sectors = rq->sector >= prev_end ? (double) (rq->sector - prev_end)
                                                : (double) (prev_end - rq->sector),
            .write = rq->op == TRACE_OP_WRITE,
            .pipe_wait_ns = NAN,
            .index = order[k].index,
          };
          g_array_append_val (rows, row);
        }
      prev_end = rq->sector + rq->nr_sectors;
      have_prev = TRUE;
    }
  return rows;
}

/* ---- The disk regression ------------------------------------------------ */

static double
fit_disk_x (const FitDiskFit *f, const FitDiskRow *row, int col)
{
  if (col == f->col_intercept)
    return 1.0;
  if (col == f->col_write)
    return row->write ? 1.0 : 0.0;
  if (col == f->col_random)
    return row->d_sectors > 0 ? 1.0 : 0.0;
  if (col == f->col_sqrt)
    return sqrt (row->d_sectors);
  if (col == f->col_lin)
    return row->d_sectors;
  g_assert (col == f->col_bytes);
  return row->bytes;
}

static double
fit_disk_predict (const FitDiskFit *f, const FitDiskRow *row)
{
  double y = 0.0;

  for (guint j = 0; j < f->n_cols; j++)
    y += f->coef[j] * fit_disk_x (f, row, (int) j);
  return y;
}

static int
fit_disk_next_col (FitDiskFit *f, gboolean want)
{
  return want ? (int) f->n_cols++ : -1;
}

/* Which regressors the rows in use can identify; FALSE (and why_not) when
 * the seek curve cannot be fitted at all. */
static gboolean
fit_disk_columns (const FitDiskRow *rows, gsize n, const gboolean *use, FitDiskFit *out)
{
  g_autoptr(GHashTable) sizes = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint64 reads = 0, writes = 0;

  for (gsize i = 0; i < n; i++)
    if (use == NULL || use[i])
      {
        out->n_used++;
        out->n_random += rows[i].d_sectors > 0;
        writes += rows[i].write;
        reads += !rows[i].write;
        g_hash_table_add (sizes, GSIZE_TO_POINTER ((gsize) rows[i].bytes));
      }
  out->n_sequential = out->n_used - out->n_random;
  out->n_sizes = g_hash_table_size (sizes);
  out->overhead_separated = out->n_sequential > 0 && out->n_random > 0;
  out->writes_separate = reads > 0 && writes > 0;
  out->bandwidth_identified = out->n_sizes >= 2;
  out->col_intercept = fit_disk_next_col (out, TRUE);
  out->col_write = fit_disk_next_col (out, out->writes_separate);
  out->col_random = fit_disk_next_col (out, out->overhead_separated);
  out->col_sqrt = fit_disk_next_col (out, TRUE);
  out->col_lin = fit_disk_next_col (out, TRUE);
  out->col_bytes = fit_disk_next_col (out, out->bandwidth_identified);
  if (out->n_random < FIT_DISK_MIN_RANDOM)
    {
      out->why_not = "fewer than 10 requests moved the head (seek distance > 0): "
                     "no seek curve to fit";
      return FALSE;
    }
  if (out->n_used < out->n_cols + 3)
    {
      out->why_not = "too few requests for the regressors";
      return FALSE;
    }
  return TRUE;
}

static double
fit_disk_coef_se (const FitDiskFit *f, int col, double *se)
{
  if (col < 0)
    {
      *se = NAN;
      return 0.0;
    }
  *se = sqrt (f->cov[col * FIT_DISK_MAX_COLS + col]);
  return f->coef[col];
}

/* Named figures from the coefficients. */
static void
fit_disk_name_coefs (FitDiskFit *f)
{
  double intercept_se;
  double intercept = fit_disk_coef_se (f, f->col_intercept, &intercept_se);
  double d_third = (double) f->stroke_sectors / 3.0;

  f->write_extra_ns = fit_disk_coef_se (f, f->col_write, &f->write_extra_se_ns);
  f->seek_b_ns = fit_disk_coef_se (f, f->col_sqrt, &f->seek_b_se_ns);
  f->seek_c_ns = fit_disk_coef_se (f, f->col_lin, &f->seek_c_se_ns);
  f->ns_per_byte = fit_disk_coef_se (f, f->col_bytes, &f->ns_per_byte_se);
  f->bandwidth_bytes_per_s = f->ns_per_byte > 0 ? 1e9 / f->ns_per_byte : 0.0;
  if (f->overhead_separated)
    {
      f->overhead_ns = intercept;
      f->overhead_se_ns = intercept_se;
      f->seek_a_rot_ns = fit_disk_coef_se (f, f->col_random, &f->seek_a_rot_se_ns);
    }
  else
    {
      f->overhead_ns = f->overhead_se_ns = NAN;
      f->seek_a_rot_ns = intercept;
      f->seek_a_rot_se_ns = intercept_se;
    }
  f->seek_third_ns = fit_disk_seek_ns (f, d_third, &f->seek_third_ci95_ns);
}

/* The residual RMS of the requests that moved: where rotation shows. */
static void
fit_disk_moved_rms (const FitDiskRow *rows, gsize n, const gboolean *use, FitDiskFit *out)
{
  double ss = 0.0;

  for (gsize i = 0; i < n; i++)
    if ((use == NULL || use[i]) && rows[i].d_sectors > 0)
      {
        double e = rows[i].service_ns - fit_disk_predict (out, &rows[i]);

        ss += e * e;
      }
  out->residual_rms_moved_ns = sqrt (ss / (double) MAX (out->n_random, 1));
}

/* Least squares over the rows with @use (NULL: all). */
static void
fit_disk_regress (const FitDiskRow *rows, gsize n, const gboolean *use,
                  guint64 stroke_sectors, FitDiskFit *out)
{
  double chisq, mean = 0.0, sst = 0.0;
  gsl_matrix *x, *cov;
  gsl_vector *y, *c;
  gsl_multifit_linear_workspace *work;
  gsize row = 0;

  memset (out, 0, sizeof *out);
  out->stroke_sectors = stroke_sectors;
  out->r2 = out->residual_rms_ns = out->t95 = NAN;
  if (!fit_disk_columns (rows, n, use, out))
    return;
  x = gsl_matrix_alloc (out->n_used, out->n_cols);
  y = gsl_vector_alloc (out->n_used);
  c = gsl_vector_alloc (out->n_cols);
  cov = gsl_matrix_alloc (out->n_cols, out->n_cols);
  work = gsl_multifit_linear_alloc (out->n_used, out->n_cols);
  for (gsize i = 0; i < n; i++)
    {
      if (use != NULL && !use[i])
        continue;
      for (guint j = 0; j < out->n_cols; j++)
        gsl_matrix_set (x, row, j, fit_disk_x (out, &rows[i], (int) j));
      gsl_vector_set (y, row, rows[i].service_ns);
      mean += rows[i].service_ns;
      row++;
    }
  mean /= (double) out->n_used;
  for (gsize k = 0; k < out->n_used; k++)
    sst += (gsl_vector_get (y, k) - mean) * (gsl_vector_get (y, k) - mean);
  gsl_multifit_linear (x, y, c, cov, &chisq, work);
  for (guint j = 0; j < out->n_cols; j++)
    {
      out->coef[j] = gsl_vector_get (c, j);
      for (guint l = 0; l < out->n_cols; l++)
        out->cov[j * FIT_DISK_MAX_COLS + l] = gsl_matrix_get (cov, j, l);
    }
  out->fitted = TRUE;
  out->t95 = gsl_cdf_tdist_Pinv (0.975, (double) (out->n_used - out->n_cols));
  out->r2 = sst > 0 ? 1.0 - chisq / sst : NAN;
  out->residual_rms_ns = sqrt (chisq / (double) out->n_used);
  fit_disk_name_coefs (out);
  fit_disk_moved_rms (rows, n, use, out);
  gsl_multifit_linear_free (work);
  gsl_matrix_free (cov);
  gsl_vector_free (c);
  gsl_vector_free (y);
  gsl_matrix_free (x);
}

double
fit_disk_seek_ns (const FitDiskFit *fit, double d_sectors, double *ci95_ns)
{
  double g[FIT_DISK_MAX_COLS] = { 0 };
  double value = 0.0, var = 0.0;

  g_return_val_if_fail (fit != NULL && fit->fitted, NAN);
  if (d_sectors <= 0)
    {
      if (ci95_ns != NULL)
        *ci95_ns = 0.0;
      return 0.0;
    }
  g[fit->overhead_separated ? fit->col_random : fit->col_intercept] = 1.0;
  g[fit->col_sqrt] = sqrt (d_sectors);
  g[fit->col_lin] = d_sectors;
  for (guint j = 0; j < fit->n_cols; j++)
    {
      value += g[j] * fit->coef[j];
      for (guint l = 0; l < fit->n_cols; l++)
        var += g[j] * fit->cov[j * FIT_DISK_MAX_COLS + l] * g[l];
    }
  if (ci95_ns != NULL)
    *ci95_ns = fit->t95 * sqrt (MAX (var, 0.0));
  return value;
}

void
fit_disk_fit (const TraceRequest *requests, const double *service_ns, gsize n_requests,
              guint parallelism, guint64 stroke_sectors, FitDiskFit *out)
{
  g_autoptr(GArray) rows = NULL;

  g_return_if_fail (out != NULL);
  if (parallelism != 1)
    {
      memset (out, 0, sizeof *out);
      out->why_not = "the device serves several requests at once: no single head, "
                     "so no seek distance";
      return;
    }
  rows = fit_disk_rows (requests, service_ns, n_requests);
  fit_disk_regress ((const FitDiskRow *) rows->data, rows->len, NULL, stroke_sectors, out);
}

/* ---- The fixed kind on the training rows -------------------------------- */

typedef struct {
  double overhead_ns[2];         /* [0] reads, [1] writes */
  double ns_per_byte[2];
  /* What the fixed kind simulates around the line: the quantiles of the
   * training rows' overhead (service - bytes * slope, at least 0), as
   * fit-device.c writes them; n 0 when the op had no rows. */
  FitDeviceOp overhead[2];
} FitFixedLine;

static void
fit_fixed_overhead_quantiles (const double *bytes, const double *service, gsize n,
                              double ns_per_byte, FitDeviceOp *out)
{
  g_autofree double *resid = g_new (double, n + 1);

  memset (out, 0, sizeof *out);
  if (n == 0)
    return;
  for (gsize i = 0; i < n; i++)
    resid[i] = MAX (0.0, service[i] - bytes[i] * ns_per_byte);
  qsort (resid, n, sizeof *resid, fit_double_cmp);
  fit_tail_quantiles (resid, n, out);
}

/* service = overhead + bytes * slope per op by least squares, as
 * fit-device.c fits it: the mean where the slope is not positive or
 * there is one size. */
static void
fit_fixed_train (const FitDiskRow *rows, gsize n, const gboolean *use, FitFixedLine *out)
{
  for (int w = 0; w < 2; w++)
    {
      g_autoptr(GArray) x = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr(GArray) y = g_array_new (FALSE, FALSE, sizeof (double));
      double c0 = 0.0, c1 = 0.0, cov00, cov01, cov11, sumsq, mean = 0.0;

      for (gsize i = 0; i < n; i++)
        if (use[i] && rows[i].write == (w == 1))
          {
            g_array_append_val (x, rows[i].bytes);
            g_array_append_val (y, rows[i].service_ns);
            mean += rows[i].service_ns;
          }
      mean = x->len > 0 ? mean / x->len : NAN;
      if (x->len >= 3)
        gsl_fit_linear ((const double *) x->data, 1, (const double *) y->data, 1, x->len,
                        &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
      if (x->len < 3 || !(c1 > 0) || !isfinite (c0))
        {
          c0 = mean;
          c1 = 0.0;
        }
      out->overhead_ns[w] = c0;
      out->ns_per_byte[w] = c1;
      fit_fixed_overhead_quantiles ((const double *) x->data, (const double *) y->data, x->len,
                                    c1, &out->overhead[w]);
    }
  /* An op absent from the training rows takes the other's line. */
  for (int w = 0; w < 2; w++)
    if (isnan (out->overhead_ns[w]))
      {
        out->overhead_ns[w] = out->overhead_ns[1 - w];
        out->ns_per_byte[w] = out->ns_per_byte[1 - w];
        out->overhead[w] = out->overhead[1 - w];
      }
}

static double
fit_fixed_predict (const FitFixedLine *f, const FitDiskRow *row)
{
  int w = row->write ? 1 : 0;

  return f->overhead_ns[w] + f->ns_per_byte[w] * row->bytes;
}

/* CRPS of @row under what the fixed kind simulates: the transfer time on
 * the line plus a draw of the overhead quantiles. */
static double
fit_fixed_crps (const FitFixedLine *f, const FitRow *row)
{
  int w = row->write ? 1 : 0;
  const FitDeviceOp *q = &f->overhead[w];

  return fit_crps_quantiles (q->quantile_p, q->overhead_quantiles_ns, q->n_quantiles,
                             f->ns_per_byte[w] * row->bytes, row->service_ns);
}

static double
fit_fixed_r2 (const FitFixedLine *f, const FitDiskRow *rows, gsize n, const gboolean *use)
{
  double mean = 0.0, sst = 0.0, sse = 0.0;
  gsize m = 0;

  for (gsize i = 0; i < n; i++)
    if (use[i])
      {
        mean += rows[i].service_ns;
        m++;
      }
  if (m == 0)
    return NAN;
  mean /= (double) m;
  for (gsize i = 0; i < n; i++)
    if (use[i])
      {
        double e = rows[i].service_ns - fit_fixed_predict (f, &rows[i]);

        sse += e * e;
        sst += (rows[i].service_ns - mean) * (rows[i].service_ns - mean);
      }
  return sst > 0 ? 1.0 - sse / sst : NAN;
}

/* ---- The choice --------------------------------------------------------- */

/* Two kinds' scores on the same held-out requests (a is the incumbent):
 * their sums and the sums of their differences a - b. */
typedef struct {
  double  sum_a, sum_b, sum_d, sum_d2;
  guint64 m;
} FitPaired;

static void
fit_paired_add (FitPaired *p, double a, double b)
{
  p->sum_a += a;
  p->sum_b += b;
  p->sum_d += a - b;
  p->sum_d2 += (a - b) * (a - b);
  p->m++;
}

/* Each kind's mean score, and the t of the mean difference (b's gain over
 * a; infinite when every difference is the same positive figure).  m >= 2. */
static double
fit_paired_finish (const FitPaired *p, double *mean_a, double *mean_b)
{
  double m = (double) p->m, mean = p->sum_d / m;
  double se = sqrt (MAX (0.0, (p->sum_d2 - m * mean * mean) / (m - 1)) / m);

  *mean_a = p->sum_a / m;
  *mean_b = p->sum_b / m;
  return se > 0 ? mean / se : (mean > 0 ? INFINITY : 0.0);
}

/* Every FIT_HOLD_OUT_EVERY-th row held out; sets the counts of @out. */
static gboolean *
fit_model_split (gsize n, FitModelChoice *out)
{
  gboolean *train = g_new (gboolean, n + 1);

  for (gsize i = 0; i < n; i++)
    train[i] = i % FIT_HOLD_OUT_EVERY != FIT_HOLD_OUT_EVERY - 1;
  out->n_held_out = n / FIT_HOLD_OUT_EVERY;
  out->n_train = n - out->n_held_out;
  return train;
}

/* Both kinds on the training rows, judged on the held-out ones. */
static void
fit_model_compare (const FitDiskRow *rows, gsize n, guint64 stroke_sectors,
                   FitModelChoice *out)
{
  g_autofree gboolean *train = fit_model_split (n, out);
  FitDiskFit disk;
  FitFixedLine fixed;
  FitPaired errors = { 0 };

  fit_disk_regress (rows, n, train, stroke_sectors, &disk);
  if (!disk.fitted || out->n_held_out < 2)
    return;
  fit_fixed_train (rows, n, train, &fixed);
  out->fixed_r2 = fit_fixed_r2 (&fixed, rows, n, train);
  out->disk_r2 = disk.r2;
  for (gsize i = 0; i < n; i++)
    if (!train[i])
      fit_paired_add (&errors,
                      fabs (rows[i].service_ns - fit_fixed_predict (&fixed, &rows[i])),
                      fabs (rows[i].service_ns - fit_disk_predict (&disk, &rows[i])));
  out->mae_gain_t = fit_paired_finish (&errors, &out->fixed_held_out_mae_ns,
                                       &out->disk_held_out_mae_ns);
  out->compared = TRUE;
}

/* fixed (on @service_ns, fit_device_queue's servers) against ssd (its
 * own servers, at least as many: fit_ssd_choose) on the requests
 * fit_ssd_held_out holds out:
 * each one's completion predicted from its start under each kind's
 * servers.  *@held_out and *@ssd_error_ns stay for the empirical kind. */
static void
fit_model_compare_ssd (const TraceRequest *requests, const double *service_ns, gsize n,
                       guint min_parallelism, guint max_parallelism, gboolean **held_out,
                       double **ssd_error_ns, FitModelChoice *out)
{
  g_autoptr(GArray) rows = fit_ssd_rows (requests, service_ns, n);
  const FitRow *r = (const FitRow *) rows->data;
  g_autofree gboolean *train = g_new (gboolean, rows->len + 1);
  FitFixedLine fixed;
  FitPaired errors = { 0 };

  *held_out = fit_ssd_held_out (requests, n);
  *ssd_error_ns = g_new (double, n + 1);
  fit_ssd_choose (requests, n, min_parallelism, max_parallelism, *held_out, &out->ssd,
                  *ssd_error_ns);
  if (!out->ssd.fitted)
    return;
  for (guint k = 0; k < rows->len; k++)
    train[k] = !(*held_out)[r[k].index];
  fit_fixed_train (r, rows->len, train, &fixed);
  for (guint k = 0; k < rows->len; k++)
    if (!train[k] && !isnan ((*ssd_error_ns)[r[k].index]))
      fit_paired_add (&errors, fabs (r[k].service_ns - fit_fixed_predict (&fixed, &r[k])),
                      (*ssd_error_ns)[r[k].index]);
  if (errors.m < 2)
    return;
  out->ssd_n_held_out = errors.m;
  out->ssd_gain_t = fit_paired_finish (&errors, &out->ssd_fixed_held_out_mae_ns,
                                       &out->ssd_held_out_mae_ns);
  out->ssd_compared = TRUE;
}

/* fixed against disk, as far as the request allows. */
static void
fit_model_decide (FitModelChoice *out)
{
  if (out->requested == FIT_MODEL_FIXED)
    {
      out->chosen = FIT_MODEL_FIXED;
      out->reason = "forced by --model fixed";
    }
  else if (!out->disk.fitted)
    {
      out->chosen = FIT_MODEL_FIXED;
      out->reason = out->requested == FIT_MODEL_DISK
                      ? "--model disk asked, but the disk kind cannot be fitted to this trace"
                      : "the disk kind cannot be fitted to this trace";
    }
  else if (out->requested == FIT_MODEL_DISK)
    {
      out->chosen = FIT_MODEL_DISK;
      out->reason = "forced by --model disk";
    }
  else if (!out->compared)
    {
      out->chosen = FIT_MODEL_FIXED;
      out->reason = "too few requests to judge the disk kind on held-out ones";
    }
  else if (out->mae_gain_t > FIT_MODEL_GAIN_T)
    {
      out->chosen = FIT_MODEL_DISK;
      out->reason = "held-out mean absolute error lower by more than 3 standard errors";
    }
  else
    {
      out->chosen = FIT_MODEL_FIXED;
      out->reason = "the disk kind's held-out error is not lower by more than 3 "
                    "standard errors: the simpler kind stands";
    }
}

/* ssd, asked for or better than fixed on held-out requests. */
static void
fit_model_decide_ssd (FitModelChoice *out)
{
  if (out->requested == FIT_MODEL_SSD)
    {
      out->chosen = out->ssd.fitted ? FIT_MODEL_SSD : FIT_MODEL_FIXED;
      out->reason = out->ssd.fitted ? "forced by --model ssd"
                                    : "--model ssd asked, but the ssd kind cannot be fitted "
                                      "to this trace";
      return;
    }
  /* With no request waiting for the pipeline the ssd kind is the fixed
   * kind's line without its spread (if on as many servers): nothing to
   * choose, whatever a t of two near-equal fits says. */
  if (out->requested == FIT_MODEL_AUTO && out->chosen == FIT_MODEL_FIXED && out->ssd_compared
      && out->ssd.n_waited == 0)
    {
      out->reason = "no request waited for the ssd kind's transfer pipeline, so it is the "
                    "fixed kind's line without its spread: the fixed kind stands";
      return;
    }
  if (out->requested == FIT_MODEL_AUTO && out->chosen == FIT_MODEL_FIXED && out->ssd_compared)
    {
      out->chosen = out->ssd_gain_t > FIT_MODEL_GAIN_T ? FIT_MODEL_SSD : FIT_MODEL_FIXED;
      out->reason = out->ssd_gain_t > FIT_MODEL_GAIN_T
                      ? "held-out mean absolute error lower than the fixed kind's by more "
                        "than 3 standard errors"
                      : "the ssd kind's held-out error is not lower than the fixed kind's "
                        "by more than 3 standard errors: the fixed kind stands";
    }
}

/* CRPS of @row under what @kind simulates: the fixed kind's distribution,
 * the disk kind's point (a point's score is its absolute error). */
static double
fit_model_rival_crps (FitModelKind kind, const FitFixedLine *fixed, const FitDiskFit *disk,
                      const FitRow *row)
{
  if (kind == FIT_MODEL_DISK)
    return fabs (row->service_ns - fit_disk_predict (disk, row));
  return fit_fixed_crps (fixed, row);
}

/* The empirical kind and the kind chosen so far (its rival), fitted on
 * the training rows, scored on the held-out ones by CRPS. */
static void
fit_model_compare_empirical (const FitRow *rows, gsize n, guint window, guint64 stroke_sectors,
                             const gboolean *ssd_held_out, const double *ssd_error_ns,
                             FitModelChoice *out)
{
  g_autofree gboolean *train = g_new (gboolean, n + 1);
  FitEmpiricalFit emp = { 0 };
  FitFixedLine fixed;
  FitDiskFit disk = { 0 };
  FitPaired scores = { 0 };

  /* Against ssd, the requests its choice held out (its errors are on them). */
  out->empirical_n_held_out = 0;
  for (gsize i = 0; i < n; i++)
    {
      train[i] = out->chosen == FIT_MODEL_SSD
                   ? !ssd_held_out[rows[i].index] || isnan (ssd_error_ns[rows[i].index])
                   : i % FIT_HOLD_OUT_EVERY != FIT_HOLD_OUT_EVERY - 1;
      out->empirical_n_held_out += !train[i];
    }
  out->empirical_rival = out->chosen;
  out->empirical_n_train = n - out->empirical_n_held_out;
  if (out->empirical_n_held_out < 2)
    return;
  fit_empirical_fit_rows (rows, n, train, window, &emp);
  fit_fixed_train (rows, n, train, &fixed);
  if (out->chosen == FIT_MODEL_DISK)
    fit_disk_regress (rows, n, train, stroke_sectors, &disk);
  if (!emp.fitted || (out->chosen == FIT_MODEL_DISK && !disk.fitted))
    {
      fit_empirical_clear (&emp);
      return;
    }
  for (gsize i = 0; i < n; i++)
    if (!train[i])
      fit_paired_add (&scores,
                      out->chosen == FIT_MODEL_SSD
                        ? ssd_error_ns[rows[i].index]
                        : fit_model_rival_crps (out->chosen, &fixed, &disk, &rows[i]),
                      fit_empirical_crps (&emp, &rows[i]));
  fit_empirical_clear (&emp);
  out->crps_gain_t = fit_paired_finish (&scores, &out->rival_held_out_crps_ns,
                                        &out->empirical_held_out_crps_ns);
  out->empirical_compared = TRUE;
}

/* The empirical kind, asked for or better on held-out requests. */
static void
fit_model_decide_empirical (FitModelChoice *out)
{
  if (out->requested == FIT_MODEL_EMPIRICAL)
    {
      if (out->empirical.fitted)
        {
          out->chosen = FIT_MODEL_EMPIRICAL;
          out->reason = "forced by --model empirical";
        }
      else
        {
          out->chosen = FIT_MODEL_FIXED;
          out->reason = "--model empirical asked, but no request has a service time";
        }
      return;
    }
  if (out->requested == FIT_MODEL_AUTO && out->empirical.fitted && out->empirical_compared
      && out->crps_gain_t > FIT_MODEL_GAIN_T)
    {
      out->chosen = FIT_MODEL_EMPIRICAL;
      out->reason = "held-out continuous ranked probability score lower than the other "
                    "kind's by more than 3 standard errors";
    }
}

/* The deepest queue at the device: the most servers a trace can show. */
static guint
fit_model_max_depth (const TraceRequest *requests, gsize n)
{
  guint depth = 1;

  for (gsize i = 0; i < n; i++)
    if (fit_request_has_data (&requests[i]))
      depth = MAX (depth, requests[i].in_flight_at_issue);
  return depth;
}

void
fit_model_choose (const TraceRequest *requests, const double *service_ns, gsize n_requests,
                  guint parallelism, guint64 stroke_sectors, FitModelKind requested,
                  FitModelChoice *out)
{
  g_autoptr(GArray) rows = NULL;
  g_autofree gboolean *ssd_held_out = NULL;
  g_autofree double *ssd_error_ns = NULL;
  guint window = fit_empirical_window (parallelism);

  g_return_if_fail (out != NULL);
  memset (out, 0, sizeof *out);
  out->requested = requested;
  out->fixed_r2 = out->disk_r2 = NAN;
  out->fixed_held_out_mae_ns = out->disk_held_out_mae_ns = out->mae_gain_t = NAN;
  out->ssd_fixed_held_out_mae_ns = out->ssd_held_out_mae_ns = out->ssd_gain_t = NAN;
  out->rival_held_out_crps_ns = out->empirical_held_out_crps_ns = out->crps_gain_t = NAN;
  out->demerit_ns = out->demerit_observed_mean_ns = NAN;
  fit_disk_fit (requests, service_ns, n_requests, parallelism, stroke_sectors, &out->disk);
  rows = parallelism == 1 ? fit_disk_rows (requests, service_ns, n_requests)
                          : fit_empirical_window_rows (requests, service_ns, n_requests, window);
  if (parallelism == 1)
    fit_model_compare ((const FitDiskRow *) rows->data, rows->len, stroke_sectors, out);
  fit_model_decide (out);
  fit_model_compare_ssd (requests, service_ns, n_requests, parallelism,
                         fit_model_max_depth (requests, n_requests), &ssd_held_out,
                         &ssd_error_ns, out);
  fit_model_decide_ssd (out);
  fit_empirical_fit_rows ((const FitRow *) rows->data, rows->len, NULL, window, &out->empirical);
  if (requested == FIT_MODEL_AUTO)
    fit_model_compare_empirical ((const FitRow *) rows->data, rows->len, window,
                                 stroke_sectors, ssd_held_out, ssd_error_ns, out);
  fit_model_decide_empirical (out);
}

/* ---- The demerit of the chosen kind ------------------------------------- */

/* Probability points of the demerit: those of iosim compare
 * (replay-compare.c, after DiskSim's rms.c). */
#define FIT_DEMERIT_POINTS 10000
/* Draws of a distributional kind, in all: per request at most 16, fewer on
 * long traces (a 2-million-value sort). */
#define FIT_DEMERIT_MAX_DRAWS (1u << 21)

/* RMS of the quantile functions' difference at p = k / 10000, k = 1 ..
 * 10000, linear between order statistics. */
static double
fit_demerit_sorted (const double *a, gsize na, const double *b, gsize nb)
{
  double sum_sq = 0.0;

  for (guint k = 1; k <= FIT_DEMERIT_POINTS; k++)
    {
      double p = (double) k / FIT_DEMERIT_POINTS;
      double dx = fit_quantile (a, na, p) - fit_quantile (b, nb, p);

      sum_sq += dx * dx;
    }
  return sqrt (sum_sq / FIT_DEMERIT_POINTS);
}

/* The piecewise-linear quantile function through (@p[k], @q[k]) at @u. */
static double
fit_quantile_function (const double *p, const double *q, guint n, double u)
{
  for (guint k = 1; k < n; k++)
    if (u <= p[k])
      return q[k - 1] + (u - p[k - 1]) / (p[k] - p[k - 1]) * (q[k] - q[k - 1]);
  return q[n - 1];
}

/* What the fixed kind draws for @row at probability @u: its transfer time
 * plus the overhead quantile (fit_append_op_keys writes both). */
static double
fit_fixed_draw (const FitDeviceOp *read, const FitDeviceOp *write, const FitRow *row, double u)
{
  const FitDeviceOp *op = row->write ? write : read;

  if (!op->fitted)
    op = row->write ? read : write;
  return op->ns_per_byte * row->bytes
         + fit_quantile_function (op->quantile_p, op->overhead_quantiles_ns, op->n_quantiles, u);
}

static double
fit_model_draw (const FitModelChoice *m, const FitDeviceOp *read, const FitDeviceOp *write,
                const FitRow *row, double u)
{
  const FitEmpiricalCell *cell;

  switch (m->chosen)
    {
    case FIT_MODEL_DISK:
      return fit_disk_predict (&m->disk, row);
    case FIT_MODEL_SSD:
      return fit_ssd_predict (&m->ssd, row);
    case FIT_MODEL_EMPIRICAL:
      cell = fit_empirical_cell_of (&m->empirical, row);
      return fit_quantile_function (cell->p, cell->q_ns, cell->n_quantiles, u);
    default:
      return fit_fixed_draw (read, write, row, u);
    }
}

/* The rows the chosen kind was fitted on. */
static GArray *
fit_model_rows (const TraceRequest *requests, const double *service_ns, gsize n,
                guint parallelism, const FitModelChoice *m)
{
  g_autofree double *ssd_service_ns = NULL;

  if (m->chosen == FIT_MODEL_SSD)
    {
      ssd_service_ns = g_new (double, n + 1);
      fit_device_rebuild (requests, n, m->ssd.parallelism, ssd_service_ns);
      return fit_ssd_rows (requests, ssd_service_ns, n);
    }
  return parallelism == 1
           ? fit_disk_rows (requests, service_ns, n)
           : fit_empirical_window_rows (requests, service_ns, n,
                                        fit_empirical_window (parallelism));
}

void
fit_model_demerit (const TraceRequest *requests, const double *service_ns, gsize n_requests,
                   guint parallelism, const FitDeviceOp *read, const FitDeviceOp *write,
                   FitModelChoice *m)
{
  g_autoptr(GArray) rows = fit_model_rows (requests, service_ns, n_requests, parallelism, m);
  const FitRow *r = (const FitRow *) rows->data;
  gboolean points = m->chosen == FIT_MODEL_DISK || m->chosen == FIT_MODEL_SSD;
  guint draws = points ? 1 : CLAMP (FIT_DEMERIT_MAX_DRAWS / MAX (rows->len, 1), 1, 16);
  g_autofree double *observed = g_new (double, rows->len + 1);
  g_autofree double *model = g_new (double, (gsize) rows->len * draws + 1);
  double sum = 0.0;

  m->demerit_ns = m->demerit_observed_mean_ns = NAN;
  m->demerit_n = rows->len;
  if (rows->len == 0 || (!read->fitted && !write->fitted && m->chosen == FIT_MODEL_FIXED))
    return;
  for (guint i = 0; i < rows->len; i++)
    {
      observed[i] = r[i].service_ns;
      sum += observed[i];
      /* Stratified, so that the figure is the model's and not a draw's:
       * request i at (k + phase_i) / draws, its phase the golden-ratio
       * sequence, so that together the requests reach into the tails
       * (the same probabilities for all would stop every cell at its
       * 1 - 1 / (2 draws) quantile and cut the tail the figure weighs). */
      double phase = fmod ((double) i * 0.6180339887498949, 1.0);

      for (guint k = 0; k < draws; k++)
        model[(gsize) i * draws + k] = fit_model_draw (m, read, write, &r[i],
                                                       (k + phase) / draws);
    }
  qsort (observed, rows->len, sizeof *observed, fit_double_cmp);
  qsort (model, (gsize) rows->len * draws, sizeof *model, fit_double_cmp);
  m->demerit_observed_mean_ns = sum / rows->len;
  m->demerit_ns = fit_demerit_sorted (model, (gsize) rows->len * draws, observed, rows->len);
}

void
fit_model_choice_clear (FitModelChoice *choice)
{
  fit_empirical_clear (&choice->empirical);
}

/* ---- The disk kind as a scenario device (models/dev/dev-disk.c) --------- */

/* dev-disk.c's documented defaults for what a fit of service times cannot
 * identify: the spindle speed ("7200 is the common desktop drive") and the
 * cylinders ("only the ratio of distances matters"). */
#define FIT_DISK_RPM        7200.0
#define FIT_DISK_CYLINDERS  100000u

/* The fitted seek curve at @d_sectors without the mean rotation. */
static double
fit_disk_seek_only_ns (const FitDiskFit *d, double d_sectors, double half_turn_ns)
{
  return fit_disk_seek_ns (d, d_sectors, NULL) - half_turn_ns;
}

/* Whether the fit can become dev-disk's parameters at all. */
static gboolean
fit_disk_mappable (const FitDiskFit *d, double period_ns, GError **error)
{
  double spread_ns = period_ns / sqrt (12.0);
  /* The RMS of n residuals estimates its sigma within about 1 / sqrt(2 n)
   * (normal theory); three of those are allowed. */
  double allow = 1.0 - 3.0 / sqrt (2.0 * (double) MAX (d->n_random, 1));

  if (!d->overhead_separated)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED, "no sequential request: the overhead "
                   "cannot be told from the seek curve");
      return FALSE;
    }
  if (!(d->bandwidth_identified && d->ns_per_byte > 0))
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED, "the bandwidth is not identified");
      return FALSE;
    }
  /* A request that moved waits a uniform share of a revolution, spread
   * period / sqrt(12); residuals smaller than that leave no room for the
   * rotation a disk model would add. */
  if (!(d->residual_rms_moved_ns >= allow * spread_ns))
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED, "the residuals of requests that moved "
                   "(RMS %.1fus) are smaller than the rotational spread of a %.0f rpm disk "
                   "(%.1fus): the trace shows no rotation", d->residual_rms_moved_ns / 1e3,
                   FIT_DISK_RPM, spread_ns / 1e3);
      return FALSE;
    }
  return TRUE;
}

/* The fitted curve against dev-disk's, which passes through seek_track,
 * seek_avg and seek_full in its own shape: every cylinder distance in
 * a geometric ladder must lie within the fit's 95 % half-width there. */
static gboolean
fit_disk_check_curve (const FitDiskFit *d, DevModel *dev, double sectors_per_cyl,
                      double half_turn_ns, double *worst_ns, GError **error)
{
  *worst_ns = 0.0;
  for (guint64 k = 1; k < FIT_DISK_CYLINDERS; k = k * 2 + 1)
    {
      double dist = (double) k * sectors_per_cyl, ci;
      double want = fit_disk_seek_ns (d, dist, &ci) - half_turn_ns;
      double got = dev_disk_seek_ns (dev, k);

      *worst_ns = MAX (*worst_ns, fabs (got - want));
      if (fabs (got - want) > ci)
        {
          g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED, "dev-disk's seek curve through "
                       "seek_track, seek_avg and seek_full is %.1fus off the fitted one at "
                       "%" G_GUINT64_FORMAT " cylinders (95%% half-width %.1fus)",
                       (got - want) / 1e3, k, ci / 1e3);
          return FALSE;
        }
    }
  return TRUE;
}

char *
fit_disk_device_keys (const FitDiskFit *d, guint64 capacity_bytes, GError **error)
{
  const double period_ns = 60e9 / FIT_DISK_RPM, half_turn_ns = period_ns / 2.0;
  const double c_cyl = FIT_DISK_CYLINDERS;
  double sectors_per_cyl = (double) (capacity_bytes / FIT_DISK_SECTOR_BYTES) / c_cyl;
  double track_ns, full_ns, avg_sum = 0.0, worst_ns;
  g_autoptr(GString) keys = g_string_new (NULL);
  g_autofree char *ini = NULL;
  g_autoptr(DevModel) dev = NULL;
  GError *local = NULL;

  g_return_val_if_fail (d != NULL && d->fitted, NULL);
  if (!fit_disk_mappable (d, period_ns, error))
    return NULL;
  track_ns = fit_disk_seek_only_ns (d, sectors_per_cyl, half_turn_ns);
  full_ns = fit_disk_seek_only_ns (d, (c_cyl - 1) * sectors_per_cyl, half_turn_ns);
  /* dev-disk.c's average seek: over pairs of distinct cylinders, distance k
   * weighted C - k (dev_disk_solve_seek). */
  for (guint64 k = 1; k < FIT_DISK_CYLINDERS; k++)
    avg_sum += (c_cyl - (double) k) * fit_disk_seek_only_ns (d, (double) k * sectors_per_cyl,
                                                             half_turn_ns);
  g_autofree char *rate = fit_rate_text (d->bandwidth_bytes_per_s, 3);
  g_string_append_printf (keys,
    "kind = disk\nrpm = %.0f\nseek_track = %.3fus\nseek_avg = %.3fus\nseek_full = %.3fus\n"
    "cylinders = %u\nouter_rate = %s\ninner_rate = %s\noverhead = %.3fus\n"
    "write_overhead = %.3fus\nread_lookahead = true\nwrite_cache = true\n",
    FIT_DISK_RPM, track_ns / 1e3, avg_sum / (c_cyl * (c_cyl - 1) / 2.0) / 1e3, full_ns / 1e3,
    FIT_DISK_CYLINDERS, rate, rate, d->overhead_ns / 1e3,
    (d->overhead_ns + d->write_extra_ns) / 1e3);
  ini = g_strdup_printf ("[device]\n%scapacity = %" G_GUINT64_FORMAT "\n", keys->str,
                         capacity_bytes);
  dev = dev_model_new_from_data ("fit", ini, &local);
  if (dev == NULL)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED, "dev-disk refuses the mapped "
                   "parameters: %s", local->message);
      g_error_free (local);
      return NULL;
    }
  if (!fit_disk_check_curve (d, dev, sectors_per_cyl, half_turn_ns, &worst_ns, error))
    return NULL;
  return g_string_free (g_steal_pointer (&keys), FALSE);
}
