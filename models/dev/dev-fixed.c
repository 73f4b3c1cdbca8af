/* dev-fixed.c — the trivial device: a fixed per-request overhead plus size
 * over bandwidth, separately for reads and writes.
 *
 *   service = overhead(op) + bytes / bandwidth(op)
 *
 * The time does not depend on where the request lies.  Good enough for slow
 * removable devices whose access time dwarfs the position effects (optical
 * drives, ZIP, USB sticks) and the form `iosim fit` writes when it fits a
 * device to a trace (it writes overhead, bandwidth, write_overhead,
 * write_bandwidth and parallelism).  `parallelism` > 1 lets several
 * requests be served at once, each at the full per-request rate.
 *
 * One optional refinement, off by default: a request that starts where the
 * previously started one ended pays sequential_overhead(op) instead, since
 * optical drives and sticks stream from their read cache or write buffer
 * and do not pay the access time again.  Without those keys the formula
 * above holds exactly.
 *
 * Measured service times are spread, not one value, so the overhead may
 * instead be a distribution: overhead_quantiles = "q0, q1, ..., q(n-1)",
 * n >= 2 non-decreasing times read as the quantiles at probabilities
 * 0, 1/(n-1), ..., 1 (what `iosim fit` writes: 21 values, every 5%).  Each
 * request then draws its overhead by inverse transform sampling: u uniform
 * on [0, 1) from the device's stream (dev->rng), interpolated linearly
 * between neighbouring quantiles (a piecewise-uniform density).  The list
 * wins over `overhead`, which is ignored for that op (fit writes both, the
 * constant for readers); without dev->rng (a model built outside a
 * simulation) the overhead is the list's median.  write_overhead_quantiles
 * defaults to overhead_quantiles as write_overhead defaults to overhead; a
 * model that sets a write_overhead of its own next to an inherited list is
 * refused, since the list would silently override it.  A sequential
 * request draws too unless sequential_overhead differs from overhead (an
 * explicit discount).
 *
 * A list spaced every 5 % puts the whole top 5 % of the mass on one
 * uniform step from p95 to the maximum, which makes the tail far fatter
 * than measured (one outlier spreads 5 % of the draws up to it).  So the
 * probabilities may be given too: overhead_quantile_p = "p0, p1, ...,
 * p(n-1)", as many as quantiles, strictly increasing from 0 to 1 (what
 * `iosim fit` writes: every 5 % up to p95, then finer steps up to the
 * second-largest value, so that the last step to the maximum carries the
 * mass of one request).  Without it the list is evenly spaced as above.
 */
#include "models/dev/dev.h"

#include <math.h>
#include <string.h>

#include "sim/sim-units.h"

/* Percentiles are as fine as a list in an .ini file is useful. */
#define DEV_FIXED_MAX_QUANTILES 101u

typedef struct {
  SimTime overhead_ns;          /* read */
  double  bandwidth_bytes_per_s;
  SimTime write_overhead_ns;
  double  write_bandwidth_bytes_per_s;
  guint   parallelism;
  SimTime sequential_overhead_ns;
  SimTime sequential_write_overhead_ns;
  char   *overhead_quantiles;   /* raw text; "" = not given */
  char   *write_overhead_quantiles;
  char   *overhead_quantile_p;  /* raw text; "" = evenly spaced */
  char   *write_overhead_quantile_p;
  /* derived */
  guint   n_quantiles[SIM_N_OPS];   /* 0 = constant overhead */
  SimTime quantiles_ns[SIM_N_OPS][DEV_FIXED_MAX_QUANTILES];
  double  quantile_p[SIM_N_OPS][DEV_FIXED_MAX_QUANTILES];
  double  ns_per_byte[SIM_N_OPS];
  SimTime overhead_op_ns[SIM_N_OPS];
  SimTime sequential_op_ns[SIM_N_OPS];
  /* state */
  guint64 last_end_sector;      /* G_MAXUINT64 before the first request */
} DevFixed;

#define DEV_FIXED_MAX_PARALLELISM 1024u

static const DevParam dev_fixed_params[] = {
  { "overhead", DEV_PARAM_TIME, "1ms", G_STRUCT_OFFSET (DevFixed, overhead_ns),
    "per-request cost of a read: command, access; 1ms is a USB-stick-like order of magnitude" },
  { "bandwidth", DEV_PARAM_RATE, "10MB/s", G_STRUCT_OFFSET (DevFixed, bandwidth_bytes_per_s),
    "read transfer rate; 10MB/s is a slow USB 2.0 stick" },
  { "write_overhead", DEV_PARAM_TIME, "=overhead", G_STRUCT_OFFSET (DevFixed, write_overhead_ns),
    "per-request cost of a write (default: as for reads)" },
  { "write_bandwidth", DEV_PARAM_RATE, "=bandwidth", G_STRUCT_OFFSET (DevFixed, write_bandwidth_bytes_per_s),
    "write transfer rate (default: as for reads)" },
  { "parallelism", DEV_PARAM_UINT, "1", G_STRUCT_OFFSET (DevFixed, parallelism),
    "requests served at once; 1 for any single-spindle or single-channel device" },
  { "sequential_overhead", DEV_PARAM_TIME, "=overhead", G_STRUCT_OFFSET (DevFixed, sequential_overhead_ns),
    "cost of a read that continues the previous request (default: overhead, no discount)" },
  { "sequential_write_overhead", DEV_PARAM_TIME, "=write_overhead",
    G_STRUCT_OFFSET (DevFixed, sequential_write_overhead_ns),
    "cost of a write that continues the previous request (default: write_overhead)" },
  { "overhead_quantiles", DEV_PARAM_STRING, "", G_STRUCT_OFFSET (DevFixed, overhead_quantiles),
    "read overhead as n>=2 quantiles at p=0..1 (\"10us,52us,400us\"); drawn per request, "
    "overrides overhead (default: none, constant overhead)" },
  { "write_overhead_quantiles", DEV_PARAM_STRING, "=overhead_quantiles",
    G_STRUCT_OFFSET (DevFixed, write_overhead_quantiles),
    "write overhead quantiles, overrides write_overhead (default: as for reads)" },
  { "overhead_quantile_p", DEV_PARAM_STRING, "", G_STRUCT_OFFSET (DevFixed, overhead_quantile_p),
    "probabilities of overhead_quantiles, 0 first, 1 last, increasing (\"0,0.5,0.99,1\"); "
    "(default: evenly spaced)" },
  { "write_overhead_quantile_p", DEV_PARAM_STRING, "=overhead_quantile_p",
    G_STRUCT_OFFSET (DevFixed, write_overhead_quantile_p),
    "probabilities of write_overhead_quantiles (default: as for reads)" },
  { NULL },
};

/* Parse @text ("" = not given) into @out_ns; *@out_n = 0 when not given. */
static gboolean
dev_fixed_parse_quantiles (const char *key, const char *text, SimTime *out_ns,
                           guint *out_n, GError **error)
{
  g_auto(GStrv) items = NULL;
  guint n;

  *out_n = 0;
  if (text == NULL || text[0] == '\0')
    return TRUE;
  items = g_strsplit (text, ",", -1);
  n = g_strv_length (items);
  if (n < 2 || n > DEV_FIXED_MAX_QUANTILES)
    {
      dev_set_param_error (error, key, "'%s' has %u item%s; give between 2 and %u "
                           "comma-separated times", text, n, n == 1 ? "" : "s",
                           DEV_FIXED_MAX_QUANTILES);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) local = NULL;
      const char *item = g_strstrip (items[i]);

      if (item[0] == '-')
        {
          dev_set_param_error (error, key, "item %u '%s' is negative", i + 1, item);
          return FALSE;
        }
      if (!sim_parse_time_ns (item, 0, &out_ns[i], &local))
        {
          dev_set_param_error (error, key, "item %u: %s", i + 1,
                               item[0] == '\0' ? "empty" : local->message);
          return FALSE;
        }
      if (i > 0 && out_ns[i] < out_ns[i - 1])
        {
          dev_set_param_error (error, key, "item %u '%s' is less than item %u: "
                               "quantiles must not decrease", i + 1, item, i);
          return FALSE;
        }
    }
  *out_n = n;
  return TRUE;
}

/* Parse the probabilities @text of a list of @n quantiles into @out_p:
 * evenly spaced when not given, else n values rising strictly from 0 to 1. */
static gboolean
dev_fixed_parse_probabilities (const char *key, const char *text, guint n,
                               double *out_p, GError **error)
{
  g_auto(GStrv) items = NULL;
  guint n_items;

  if (text == NULL || text[0] == '\0')
    {
      for (guint i = 0; i < n; i++)
        out_p[i] = n > 1 ? (double) i / (double) (n - 1) : 0.0;
      return TRUE;
    }
  items = g_strsplit (text, ",", -1);
  n_items = g_strv_length (items);
  if (n_items != n)
    {
      dev_set_param_error (error, key, "has %u item%s but the quantiles %u", n_items,
                           n_items == 1 ? "" : "s", n);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      const char *item = g_strstrip (items[i]);
      char *end = NULL;

      out_p[i] = g_ascii_strtod (item, &end);
      if (item[0] == '\0' || end == NULL || *end != '\0' || !(out_p[i] >= 0.0 && out_p[i] <= 1.0))
        {
          dev_set_param_error (error, key, "item %u '%s' is not a probability in [0, 1]",
                               i + 1, item);
          return FALSE;
        }
      if (i > 0 && !(out_p[i] > out_p[i - 1]))
        {
          dev_set_param_error (error, key, "item %u '%s' is not above item %u: "
                               "probabilities must increase", i + 1, item, i);
          return FALSE;
        }
    }
  if (out_p[0] != 0.0 || out_p[n - 1] != 1.0)
    {
      dev_set_param_error (error, key, "must run from 0 to 1 (the minimum and the maximum)");
      return FALSE;
    }
  return TRUE;
}

static gboolean
dev_fixed_init (DevModel *dev, GError **error)
{
  DevFixed *f = dev->priv;

  if (f->parallelism < 1 || f->parallelism > DEV_FIXED_MAX_PARALLELISM)
    {
      dev_set_param_error (error, "parallelism", "%u is outside [1, %u]",
                           f->parallelism, DEV_FIXED_MAX_PARALLELISM);
      return FALSE;
    }
  if (!dev_fixed_parse_quantiles ("overhead_quantiles", f->overhead_quantiles,
                                  f->quantiles_ns[SIM_OP_READ],
                                  &f->n_quantiles[SIM_OP_READ], error)
      || !dev_fixed_parse_quantiles ("write_overhead_quantiles", f->write_overhead_quantiles,
                                     f->quantiles_ns[SIM_OP_WRITE],
                                     &f->n_quantiles[SIM_OP_WRITE], error))
    return FALSE;
  if ((f->n_quantiles[SIM_OP_READ] == 0 && f->overhead_quantile_p[0] != '\0')
      || (f->n_quantiles[SIM_OP_WRITE] == 0 && f->write_overhead_quantile_p[0] != '\0'
          && strcmp (f->write_overhead_quantile_p, f->overhead_quantile_p) != 0))
    {
      dev_set_param_error (error, f->n_quantiles[SIM_OP_READ] == 0 ? "overhead_quantile_p"
                                                                   : "write_overhead_quantile_p",
                           "given without the quantiles it describes");
      return FALSE;
    }
  if ((f->n_quantiles[SIM_OP_READ] > 0
       && !dev_fixed_parse_probabilities ("overhead_quantile_p", f->overhead_quantile_p,
                                          f->n_quantiles[SIM_OP_READ],
                                          f->quantile_p[SIM_OP_READ], error))
      || (f->n_quantiles[SIM_OP_WRITE] > 0
          && !dev_fixed_parse_probabilities ("write_overhead_quantile_p",
                                             f->write_overhead_quantile_p,
                                             f->n_quantiles[SIM_OP_WRITE],
                                             f->quantile_p[SIM_OP_WRITE], error)))
    return FALSE;
  /* write_overhead_quantiles inherited from the reads while write_overhead
   * was set apart from overhead: the list would silently win. */
  if (f->n_quantiles[SIM_OP_WRITE] > 0
      && strcmp (f->overhead_quantiles, f->write_overhead_quantiles) == 0
      && f->write_overhead_ns != f->overhead_ns)
    {
      dev_set_param_error (error, "write_overhead_quantiles", "writes take overhead_quantiles, "
                           "which override write_overhead; give write_overhead_quantiles "
                           "or drop write_overhead");
      return FALSE;
    }
  f->overhead_op_ns[SIM_OP_READ] = f->overhead_ns;
  f->overhead_op_ns[SIM_OP_WRITE] = f->write_overhead_ns;
  f->sequential_op_ns[SIM_OP_READ] = f->sequential_overhead_ns;
  f->sequential_op_ns[SIM_OP_WRITE] = f->sequential_write_overhead_ns;
  f->last_end_sector = G_MAXUINT64;
  f->ns_per_byte[SIM_OP_READ] = 1e9 / f->bandwidth_bytes_per_s;
  f->ns_per_byte[SIM_OP_WRITE] = 1e9 / f->write_bandwidth_bytes_per_s;
  dev->parallelism = f->parallelism;
  return TRUE;
}

/* Quantile of @op's list at probability @u in [0, 1], interpolating
 * linearly between the neighbouring quantiles (binary search for the step
 * holding @u: O(log n)). */
static SimTime
dev_fixed_quantile_ns (const DevFixed *f, SimOp op, double u)
{
  const SimTime *q = f->quantiles_ns[op];
  const double *p = f->quantile_p[op];
  guint lo = 0, hi = f->n_quantiles[op] - 1;

  if (u >= p[hi])
    return q[hi];
  while (hi - lo > 1)
    {
      guint mid = (lo + hi) / 2;

      if (p[mid] <= u)
        lo = mid;
      else
        hi = mid;
    }
  return q[lo] + (SimTime) llround ((u - p[lo]) / (p[hi] - p[lo]) * (double) (q[hi] - q[lo]));
}

/* The constant overhead, or one draw from the op's quantiles (the median
 * when the model has no random stream). */
static SimTime
dev_fixed_overhead_ns (DevModel *dev, SimOp op, gboolean sequential)
{
  DevFixed *f = dev->priv;

  if (sequential && f->sequential_op_ns[op] != f->overhead_op_ns[op])
    return f->sequential_op_ns[op];
  if (f->n_quantiles[op] == 0)
    return f->overhead_op_ns[op];
  return dev_fixed_quantile_ns (f, op, dev->rng != NULL ? sim_rng_uniform (dev->rng) : 0.5);
}

static SimTime
dev_fixed_service_time (DevModel *dev, SimOp op, guint64 sector,
                        guint32 nr_sectors, SimTime now_ns)
{
  DevFixed *f = dev->priv;
  double bytes = (double) nr_sectors * SIM_SECTOR_BYTES;
  SimTime overhead_ns;

  g_assert (op < SIM_N_OPS);
  overhead_ns = dev_fixed_overhead_ns (dev, op, sector == f->last_end_sector);
  f->last_end_sector = sector + nr_sectors;
  return overhead_ns + (SimTime) llround (bytes * f->ns_per_byte[op]);
}

static void
dev_fixed_dump (DevModel *dev, GString *out)
{
  const DevFixed *f = dev->priv;

  for (int op = 0; op < SIM_N_OPS; op++)
    g_string_append_printf (out, "%s: overhead_ns = %" SIM_TIME_FORMAT
                            ", sequential_overhead_ns = %" SIM_TIME_FORMAT
                            ", bandwidth = %.6g B/s, ns_per_byte = %.6g\n",
                            op == SIM_OP_READ ? "read" : "write",
                            f->overhead_op_ns[op], f->sequential_op_ns[op],
                            1e9 / f->ns_per_byte[op], f->ns_per_byte[op]);
  for (int op = 0; op < SIM_N_OPS; op++)
    if (f->n_quantiles[op] > 0)
      g_string_append_printf (out, "%s: overhead drawn from %u quantiles, "
                              "min %" SIM_TIME_FORMAT " ns, median %" SIM_TIME_FORMAT
                              " ns, max %" SIM_TIME_FORMAT " ns\n",
                              op == SIM_OP_READ ? "read" : "write", f->n_quantiles[op],
                              f->quantiles_ns[op][0], dev_fixed_quantile_ns (f, op, 0.5),
                              f->quantiles_ns[op][f->n_quantiles[op] - 1]);
}

const DevOps dev_fixed_ops = {
  .name = "fixed",
  .summary = "per-request overhead plus bandwidth (optical, ZIP, USB sticks, fitted models)",
  .params = dev_fixed_params,
  .priv_size = sizeof (DevFixed),
  .init = dev_fixed_init,
  .service_time = dev_fixed_service_time,
  .dump = dev_fixed_dump,
};
