/* fit-empirical.c — the `empirical` kind of device model in `iosim fit`:
 * the measured service times themselves, by op, size class and distance
 * class (models/dev/dev-empirical.c draws from them), and the continuous
 * ranked probability score that judges it against the other kinds on
 * held-out requests (fit-disk.c makes the choice).
 *
 * Rows.  A serial device's rows are fit-disk.c's (completion order, the
 * distance from the end of the request served before).  A device serving
 * p at once has no single head: its requests are taken in dispatch order
 * (the order its p FIFO servers start them) and a request's distance is
 * the smallest from the ends of the p requests started before it (does it
 * continue a recent one?); the model is given the same window.
 *
 * Classes.  Sizes in power-of-two bins (..., (4 KiB, 8 KiB], ...), then
 * within each size class the distance in five bins: 0 (sequential),
 * 1..64 sectors (a skip within 32 KiB), ..2048 (1 MiB), ..262144 (128
 * MiB), beyond.  The bounds are round numbers, not fitted; a bin with fewer
 * than FIT_EMPIRICAL_MIN_CELL requests is merged with its smaller
 * neighbour until none is left (or one bin holds all), so that no cell's
 * distribution rests on a handful of requests.  Each cell keeps the
 * quantiles fit-device.c keeps for the fixed kind's overhead (every 5 % to
 * p95, then the tail as far as the cell's requests reach, the maximum).
 *
 * The score.  For a kind whose simulated service time is a distribution F
 * (fixed: the transfer line plus the overhead quantiles; empirical: its
 * cell), the CRPS of a held-out request y is integral (F(x) - [x >= y])^2
 * dx = 2 integral_0^1 ([y < Q(u)] - u) (Q(u) - y) du over the quantile
 * function Q (Gneiting & Raftery, "Strictly proper scoring rules,
 * prediction, and estimation", JASA 2007): a proper score, the absolute
 * error of a point prediction (the disk kind) generalised to a
 * distribution, so that the three kinds are scored alike request by
 * request.  Q is piecewise linear, so the integral is exact, segment by
 * segment.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/fit/fit-private.h"

/* A cell needs this many requests; fewer are merged into a neighbour. */
#define FIT_EMPIRICAL_MIN_CELL 30
/* The distance window of a device serving many at once, at most. */
#define FIT_EMPIRICAL_MAX_WINDOW 64
#define FIT_EMPIRICAL_SECTOR_BYTES 512

/* Upper bounds (sectors) of the distance bins below the last, open one. */
static const guint64 fit_empirical_dist_bounds[] = { 0, 64, 2048, 262144 };

typedef struct {
  guint64 lo, hi;      /* sizes: (lo, hi] bytes; distances: [lo, hi] sectors */
  guint64 n;
} FitEmpiricalBin;

/* ---- Rows of a device serving several at once --------------------------- */

typedef struct {
  gint64 issue_ns;
  gint64 complete_ns;
  gsize  index;
} FitEmpiricalOrder;

static int
fit_empirical_order_cmp (const void *a, const void *b)
{
  const FitEmpiricalOrder *x = a, *y = b;

  if (x->issue_ns != y->issue_ns)
    return x->issue_ns < y->issue_ns ? -1 : 1;
  if (x->complete_ns != y->complete_ns)
    return x->complete_ns < y->complete_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

gboolean
fit_request_has_data (const TraceRequest *rq)
{
  return (rq->op == TRACE_OP_READ || rq->op == TRACE_OP_WRITE) && rq->nr_sectors > 0
         && rq->issue_ns >= 0 && rq->complete_ns >= rq->issue_ns;
}

GArray *
fit_empirical_window_rows (const TraceRequest *requests, const double *service_ns, gsize n,
                           guint window)
{
  g_autofree FitEmpiricalOrder *order = g_new (FitEmpiricalOrder, n + 1);
  g_autofree guint64 *ends = g_new0 (guint64, MAX (window, 1));
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (FitRow));
  guint n_ends = 0, next = 0;
  gsize m = 0;

  g_return_val_if_fail (window >= 1, rows);
  for (gsize i = 0; i < n; i++)
    if (fit_request_has_data (&requests[i]))
      order[m++] = (FitEmpiricalOrder) { requests[i].issue_ns, requests[i].complete_ns, i };
  qsort (order, m, sizeof *order, fit_empirical_order_cmp);
  for (gsize k = 0; k < m; k++)
    {
      const TraceRequest *rq = &requests[order[k].index];
      double s = service_ns[order[k].index];

      if (n_ends > 0 && !isnan (s) && s >= 0)
        {
          guint64 best = G_MAXUINT64;
          for (guint e = 0; e < n_ends; e++)
            best = MIN (best, rq->sector >= ends[e] ? rq->sector - ends[e] : ends[e] - rq->sector);
          FitRow row = { .service_ns = s,
                         .bytes = (double) rq->nr_sectors * FIT_EMPIRICAL_SECTOR_BYTES,
                         .d_sectors = (double) best,
                         .write = rq->op == TRACE_OP_WRITE,
                         .pipe_wait_ns = NAN,
                         .index = order[k].index };
          g_array_append_val (rows, row);
        }
      ends[next] = rq->sector + rq->nr_sectors;
      next = (next + 1) % window;
      n_ends = MIN (n_ends + 1, window);
    }
  return rows;
}

guint
fit_empirical_window (guint parallelism)
{
  return CLAMP (parallelism, 1, FIT_EMPIRICAL_MAX_WINDOW);
}

/* ---- Classes ------------------------------------------------------------ */

/* Merge the bin with the fewest requests into its smaller neighbour while
 * one has fewer than FIT_EMPIRICAL_MIN_CELL (ties: the first). */
static void
fit_empirical_merge_small (GArray *bins)
{
  while (bins->len > 1)
    {
      FitEmpiricalBin *b = (FitEmpiricalBin *) bins->data;
      guint i = 0, j;

      for (guint k = 1; k < bins->len; k++)
        if (b[k].n < b[i].n)
          i = k;
      if (b[i].n >= FIT_EMPIRICAL_MIN_CELL)
        return;
      if (i == 0)
        j = 1;
      else if (i == bins->len - 1)
        j = i - 1;
      else
        j = b[i - 1].n <= b[i + 1].n ? i - 1 : i + 1;
      b[MIN (i, j)].lo = MIN (b[i].lo, b[j].lo);
      b[MIN (i, j)].hi = MAX (b[i].hi, b[j].hi);
      b[MIN (i, j)].n = b[i].n + b[j].n;
      g_array_remove_index (bins, MAX (i, j));
    }
}

/* (2^(k-1), 2^k] holds @bytes for k = bit length of bytes - 1. */
static guint
fit_empirical_size_bin (double bytes)
{
  return g_bit_storage ((guint64) bytes - 1);
}

static GArray *
fit_empirical_size_classes (const FitRow *rows, gsize n, const gboolean *use, gboolean write)
{
  guint64 count[65] = { 0 };
  GArray *bins = g_array_new (FALSE, FALSE, sizeof (FitEmpiricalBin));
  guint64 lo = 0;

  for (gsize i = 0; i < n; i++)
    if ((use == NULL || use[i]) && rows[i].write == write)
      count[fit_empirical_size_bin (rows[i].bytes)]++;
  for (guint k = 0; k < G_N_ELEMENTS (count); k++)
    if (count[k] > 0)
      {
        guint64 hi = k >= 64 ? G_MAXUINT64 : G_GUINT64_CONSTANT (1) << k;
        FitEmpiricalBin b = { lo, hi, count[k] };
        g_array_append_val (bins, b);
        lo = hi;
      }
  fit_empirical_merge_small (bins);
  return bins;
}

static guint
fit_empirical_dist_bin (double d_sectors)
{
  guint k = 0;

  while (k < G_N_ELEMENTS (fit_empirical_dist_bounds) && d_sectors > fit_empirical_dist_bounds[k])
    k++;
  return k;
}

static gboolean
fit_empirical_in_size (const FitRow *row, const FitEmpiricalBin *size)
{
  return row->bytes > (double) size->lo && row->bytes <= (double) size->hi;
}

/* The distance classes of one size class, tiling [0, inf]. */
static GArray *
fit_empirical_dist_classes (const FitRow *rows, gsize n, const gboolean *use, gboolean write,
                            const FitEmpiricalBin *size)
{
  guint64 count[G_N_ELEMENTS (fit_empirical_dist_bounds) + 1] = { 0 };
  GArray *bins = g_array_new (FALSE, FALSE, sizeof (FitEmpiricalBin));
  guint64 lo = 0;

  for (gsize i = 0; i < n; i++)
    if ((use == NULL || use[i]) && rows[i].write == write && fit_empirical_in_size (&rows[i], size))
      count[fit_empirical_dist_bin (rows[i].d_sectors)]++;
  for (guint k = 0; k < G_N_ELEMENTS (count); k++)
    if (count[k] > 0)
      {
        guint64 hi = k < G_N_ELEMENTS (fit_empirical_dist_bounds) ? fit_empirical_dist_bounds[k]
                                                                  : G_MAXUINT64;
        FitEmpiricalBin b = { lo, hi, count[k] };
        g_array_append_val (bins, b);
        lo = hi + 1;
      }
  fit_empirical_merge_small (bins);
  /* Tile: a distance between two measured classes belongs to the one
   * after it, and the last reaches infinity. */
  if (bins->len > 0)
    {
      FitEmpiricalBin *b = (FitEmpiricalBin *) bins->data;
      b[0].lo = 0;
      b[bins->len - 1].hi = G_MAXUINT64;
    }
  return bins;
}

static gboolean
fit_empirical_in_dist (const FitRow *row, const FitEmpiricalBin *dist)
{
  return row->d_sectors >= (double) dist->lo
         && (dist->hi == G_MAXUINT64 || row->d_sectors <= (double) dist->hi);
}

static void
fit_empirical_cell_quantiles (const FitRow *rows, gsize n, const gboolean *use, gboolean write,
                              FitEmpiricalCell *c)
{
  g_autoptr(GArray) v = g_array_new (FALSE, FALSE, sizeof (double));
  FitDeviceOp q = { 0 };
  const FitEmpiricalBin size = { c->bytes_lo, c->bytes_hi, 0 };
  const FitEmpiricalBin dist = { c->dist_lo, c->dist_hi, 0 };

  for (gsize i = 0; i < n; i++)
    if ((use == NULL || use[i]) && rows[i].write == write
        && fit_empirical_in_size (&rows[i], &size) && fit_empirical_in_dist (&rows[i], &dist))
      g_array_append_val (v, rows[i].service_ns);
  g_assert (v->len > 0);
  qsort (v->data, v->len, sizeof (double), fit_double_cmp);
  fit_tail_quantiles ((const double *) v->data, v->len, &q);
  c->n = v->len;
  c->n_quantiles = q.n_quantiles;
  memcpy (c->p, q.quantile_p, q.n_quantiles * sizeof (double));
  memcpy (c->q_ns, q.overhead_quantiles_ns, q.n_quantiles * sizeof (double));
}

static void
fit_empirical_op_cells (const FitRow *rows, gsize n, const gboolean *use, gboolean write,
                        GArray *cells)
{
  g_autoptr(GArray) sizes = fit_empirical_size_classes (rows, n, use, write);

  for (guint s = 0; s < sizes->len; s++)
    {
      const FitEmpiricalBin *size = &g_array_index (sizes, FitEmpiricalBin, s);
      g_autoptr(GArray) dists = fit_empirical_dist_classes (rows, n, use, write, size);

      for (guint d = 0; d < dists->len; d++)
        {
          const FitEmpiricalBin *dist = &g_array_index (dists, FitEmpiricalBin, d);
          FitEmpiricalCell c = { .bytes_lo = size->lo, .bytes_hi = size->hi,
                                 .dist_lo = dist->lo, .dist_hi = dist->hi };

          fit_empirical_cell_quantiles (rows, n, use, write, &c);
          g_array_append_val (cells, c);
        }
    }
}

void
fit_empirical_fit_rows (const FitRow *rows, gsize n, const gboolean *use, guint window,
                        FitEmpiricalFit *out)
{
  fit_empirical_clear (out);
  out->window = window;
  for (int w = 0; w < 2; w++)
    {
      out->cells[w] = g_array_new (FALSE, FALSE, sizeof (FitEmpiricalCell));
      fit_empirical_op_cells (rows, n, use, w == 1, out->cells[w]);
    }
  out->fitted = out->cells[0]->len + out->cells[1]->len > 0;
  out->why_not = out->fitted ? NULL : "no request with a service time";
}

void
fit_empirical_clear (FitEmpiricalFit *fit)
{
  for (int w = 0; w < 2; w++)
    g_clear_pointer (&fit->cells[w], g_array_unref);
  memset (fit, 0, sizeof *fit);
}

/* ---- Cells as the model finds them -------------------------------------- */

static double
fit_empirical_log_gap (double v, double lo, double hi)
{
  if (v < lo)
    return log2 (lo + 1.0) - log2 (v + 1.0);
  if (v > hi)
    return log2 (v + 1.0) - log2 (hi + 1.0);
  return 0.0;
}

/* dev-empirical.c's find_cell on fitted cells: the cell of @row, else the
 * nearest in log2 size, then distance, then the one with most requests. */
const FitEmpiricalCell *
fit_empirical_cell_of (const FitEmpiricalFit *fit, const FitRow *row)
{
  const GArray *cells = fit->cells[row->write ? 1 : 0];
  const FitEmpiricalCell *best = NULL;
  double best_size = INFINITY, best_dist = INFINITY;

  if (cells == NULL || cells->len == 0)
    cells = fit->cells[row->write ? 0 : 1];
  for (guint i = 0; cells != NULL && i < cells->len; i++)
    {
      const FitEmpiricalCell *c = &g_array_index (cells, FitEmpiricalCell, i);
      double hi_d = c->dist_hi == G_MAXUINT64 ? INFINITY : (double) c->dist_hi;
      double gs = fit_empirical_log_gap (row->bytes, (double) c->bytes_lo + 1.0, (double) c->bytes_hi);
      double gd = fit_empirical_log_gap (row->d_sectors, (double) c->dist_lo, hi_d);

      if (gs == 0.0 && gd == 0.0)
        return c;
      if (gs < best_size || (gs == best_size && gd < best_dist)
          || (gs == best_size && gd == best_dist && c->n > best->n))
        {
          best = c;
          best_size = gs;
          best_dist = gd;
        }
    }
  return best;
}

/* ---- The score ---------------------------------------------------------- */

/* integral over [u0, u1] of (c - u) (a + s u) du. */
static double
fit_crps_piece (double c, double a, double s, double u0, double u1)
{
  double f1 = c * a * u1 + (c * s - a) * u1 * u1 / 2.0 - s * u1 * u1 * u1 / 3.0;
  double f0 = c * a * u0 + (c * s - a) * u0 * u0 / 2.0 - s * u0 * u0 * u0 / 3.0;

  return f1 - f0;
}

double
fit_crps_quantiles (const double *p, const double *q, guint n, double shift, double y)
{
  double total = 0.0;

  for (guint k = 0; k + 1 < n; k++)
    {
      double u0 = p[k], u1 = p[k + 1], q0 = q[k] + shift, q1 = q[k + 1] + shift;
      double s = (q1 - q0) / (u1 - u0);
      double a = q0 - s * u0 - y;      /* Q(u) - y = a + s u on this piece */

      if (q0 >= y || q1 <= y)
        /* One side of y all along (a flat piece at y scores 0 either way). */
        total += fit_crps_piece (q0 > y || (q0 == y && q1 > y) ? 1.0 : 0.0, a, s, u0, u1);
      else
        {
          double u_star = u0 + (y - q0) / s;
          total += fit_crps_piece (0.0, a, s, u0, u_star) + fit_crps_piece (1.0, a, s, u_star, u1);
        }
    }
  return 2.0 * total;
}

double
fit_empirical_crps (const FitEmpiricalFit *fit, const FitRow *row)
{
  const FitEmpiricalCell *c = fit_empirical_cell_of (fit, row);

  g_return_val_if_fail (c != NULL, NAN);
  return fit_crps_quantiles (c->p, c->q_ns, c->n_quantiles, 0.0, row->service_ns);
}

/* ---- The scenario's device keys (models/dev/dev-empirical.c) ------------ */

static void
fit_empirical_bound (GString *out, guint64 v)
{
  if (v == G_MAXUINT64)
    g_string_append (out, "inf");
  else
    g_string_append_printf (out, "%" G_GUINT64_FORMAT, v);
}

static void
fit_empirical_cells_text (GString *out, const GArray *cells)
{
  for (guint i = 0; i < cells->len; i++)
    {
      const FitEmpiricalCell *c = &g_array_index (cells, FitEmpiricalCell, i);

      if (i > 0)
        g_string_append (out, "; ");
      g_string_append_printf (out, "%" G_GUINT64_FORMAT "-", c->bytes_lo);
      fit_empirical_bound (out, c->bytes_hi);
      g_string_append_printf (out, "/%" G_GUINT64_FORMAT "-", c->dist_lo);
      fit_empirical_bound (out, c->dist_hi);
      g_string_append_printf (out, " n=%" G_GUINT64_FORMAT ":", c->n);
      for (guint k = 0; k < c->n_quantiles; k++)
        g_string_append_printf (out, " %.9g:%.3fus", c->p[k], MAX (0.0, c->q_ns[k]) / 1e3);
    }
}

char *
fit_empirical_device_keys (const FitEmpiricalFit *fit, guint parallelism)
{
  GString *out = g_string_new ("kind = empirical\n");
  const GArray *reads = fit->cells[0]->len > 0 ? fit->cells[0] : fit->cells[1];

  g_return_val_if_fail (fit->fitted, g_string_free (out, TRUE));
  g_string_append (out, "read_cells = ");
  fit_empirical_cells_text (out, reads);
  g_string_append_c (out, '\n');
  if (fit->cells[1]->len > 0)
    {
      g_string_append (out, "write_cells = ");
      fit_empirical_cells_text (out, fit->cells[1]);
      g_string_append_c (out, '\n');
    }
  g_string_append_printf (out, "parallelism = %u\ndistance_window = %u\n", parallelism,
                          fit->window);
  return g_string_free (out, FALSE);
}
