/* dev-empirical.c — a device known only from its measured service times,
 * as `iosim fit --model empirical` writes it: each request's service time
 * is drawn from the measured distribution of the requests like it, those
 * of its op in its size class and its distance class.  No mechanism is
 * assumed (no seek curve, no transfer rate): what a trace of an unknown
 * device shows is what the model gives back, so it cannot say anything
 * about sizes or distances the trace never had (see the fallback below).
 *
 * Cells.  read_cells (and write_cells, default: the read cells) list
 * cells separated by ';', each
 *     BYTES_LO-BYTES_HI/DIST_LO-DIST_HI n=N: P:TIME P:TIME ...
 * A request of b bytes at distance d (sectors) falls in the cell with
 * BYTES_LO < b <= BYTES_HI and DIST_LO <= d <= DIST_HI; a HI may be "inf".
 * N is the number of measured requests behind the cell; the P:TIME pairs
 * are quantiles of their service times at probabilities rising strictly
 * from 0 to 1 (the times must not fall).  A draw is inverse transform
 * sampling from the device's stream (dev->rng), linear between quantiles,
 * as the fixed kind's overhead_quantiles (dev-fixed.c); without a stream
 * (a model used outside a simulation) it is the cell's median.
 *
 * Distance.  d is the smallest |start - end| over the last distance_window
 * requests started (the engine calls service_time once per request in
 * start order): with 1, the seek distance of a serial device from the
 * request it served before (0: sequential); a device serving several at
 * once has no single head, so the fit gives it its parallelism, and d
 * then says whether a request continues a recent one (a cache or stripe
 * readahead hit).  Before the first request d is infinite.
 *
 * A request no cell holds (a size or distance the trace never had) takes
 * the nearest cell: the least gap in log2 of the size, then in log2 of
 * the distance, then the most requests, then the first listed.  Counted
 * in dump(), so that a simulation far outside the measured range shows.
 *
 * Simplifications: cells do not depend on the depth in flight (a fit
 * takes service times with the queueing already taken out, fit-device.c)
 * nor on time (no cache warm-up, no garbage collection phases); draws are
 * independent from request to request.
 */
#include "models/dev/dev.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-units.h"

/* As the fixed kind: a list is as fine as an .ini line is useful. */
#define DEV_EMPIRICAL_MAX_QUANTILES 101u
#define DEV_EMPIRICAL_MAX_CELLS     256u
#define DEV_EMPIRICAL_MAX_WINDOW    1024u
#define DEV_EMPIRICAL_MAX_PARALLELISM 1024u

typedef struct {
  guint64  bytes_lo, bytes_hi;     /* (lo, hi]; hi G_MAXUINT64 = inf */
  guint64  dist_lo, dist_hi;       /* [lo, hi]; hi G_MAXUINT64 = inf */
  guint64  n;
  guint    n_quantiles;
  double   p[DEV_EMPIRICAL_MAX_QUANTILES];
  SimTime  q_ns[DEV_EMPIRICAL_MAX_QUANTILES];
} DevEmpiricalCell;

typedef struct {
  char    *read_cells;             /* raw text */
  char    *write_cells;
  guint    parallelism;
  guint    distance_window;
  /* derived */
  DevEmpiricalCell *cells[SIM_N_OPS];
  guint    n_cells[SIM_N_OPS];
  /* state: the ends of the last distance_window requests started (ring) */
  guint64 *recent_end;
  guint    recent_len, recent_next;
  guint64  outside[SIM_N_OPS];     /* requests no cell held */
} DevEmpirical;

static const DevParam dev_empirical_params[] = {
  { "read_cells", DEV_PARAM_STRING, NULL, G_STRUCT_OFFSET (DevEmpirical, read_cells),
    "measured read service times by size and distance class: \"LO-HI/LO-HI n=N: P:TIME ...; "
    "...\" (what iosim fit --model empirical writes)" },
  { "write_cells", DEV_PARAM_STRING, "=read_cells", G_STRUCT_OFFSET (DevEmpirical, write_cells),
    "the same for writes (default: as for reads)" },
  { "parallelism", DEV_PARAM_UINT, "1", G_STRUCT_OFFSET (DevEmpirical, parallelism),
    "requests served at once, as the fit found them" },
  { "distance_window", DEV_PARAM_UINT, "1", G_STRUCT_OFFSET (DevEmpirical, distance_window),
    "a request's distance is from the nearest end of the last N started (1: the seek distance "
    "of a serial device)" },
  { NULL },
};

/* "4096", "inf": a count of bytes or sectors. */
static gboolean
parse_bound (const char *text, guint64 *out)
{
  char *end = NULL;

  if (strcmp (text, "inf") == 0)
    {
      *out = G_MAXUINT64;
      return TRUE;
    }
  if (!g_ascii_isdigit (text[0]))
    return FALSE;
  *out = g_ascii_strtoull (text, &end, 10);
  return end != NULL && *end == '\0';
}

/* "LO-HI" into *lo, *hi with lo <= hi. */
static gboolean
parse_range (const char *text, guint64 *lo, guint64 *hi)
{
  g_auto (GStrv) ends = g_strsplit (text, "-", -1);

  return g_strv_length (ends) == 2 && parse_bound (ends[0], lo) && parse_bound (ends[1], hi)
         && *lo <= *hi && *lo != G_MAXUINT64;
}

/* "LO-HI/LO-HI n=N" */
static gboolean
parse_cell_head (const char *key, guint index, const char *head, DevEmpiricalCell *c,
                 GError **error)
{
  g_auto (GStrv) words = g_strsplit_set (g_strstrip ((char *) head), " \t", -1);
  g_auto (GStrv) ranges = NULL;
  guint n_words = 0;
  const char *count = NULL;

  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      {
        if (n_words == 0)
          ranges = g_strsplit (words[i], "/", -1);
        else if (n_words == 1)
          count = words[i];
        n_words++;
      }
  if (n_words != 2 || g_strv_length (ranges) != 2 || !g_str_has_prefix (count, "n=")
      || !parse_range (ranges[0], &c->bytes_lo, &c->bytes_hi) || c->bytes_lo == c->bytes_hi
      || !parse_range (ranges[1], &c->dist_lo, &c->dist_hi)
      || !parse_bound (count + 2, &c->n) || c->n == G_MAXUINT64)
    {
      dev_set_param_error (error, key, "cell %u: '%s' is not BYTES_LO-BYTES_HI/DIST_LO-DIST_HI "
                           "n=N (bytes LO below HI, distances LO at most HI, HI may be inf)",
                           index + 1, head);
      return FALSE;
    }
  return TRUE;
}

/* "P:TIME P:TIME ..." */
static gboolean
parse_cell_quantiles (const char *key, guint index, const char *body, DevEmpiricalCell *c,
                      GError **error)
{
  g_auto (GStrv) pairs = g_strsplit_set (body, " \t", -1);

  c->n_quantiles = 0;
  for (guint i = 0; pairs[i] != NULL; i++)
    {
      g_autoptr (GError) local = NULL;
      const char *colon = strchr (pairs[i], ':');
      char *end = NULL;
      guint k = c->n_quantiles;

      if (pairs[i][0] == '\0')
        continue;
      if (k == DEV_EMPIRICAL_MAX_QUANTILES)
        {
          dev_set_param_error (error, key, "cell %u has more than %u quantiles", index + 1,
                               DEV_EMPIRICAL_MAX_QUANTILES);
          return FALSE;
        }
      if (colon == NULL)
        {
          dev_set_param_error (error, key, "cell %u: '%s' is not P:TIME", index + 1, pairs[i]);
          return FALSE;
        }
      c->p[k] = g_ascii_strtod (pairs[i], &end);
      if (end != colon || !(c->p[k] >= 0.0 && c->p[k] <= 1.0)
          || (k > 0 && !(c->p[k] > c->p[k - 1])))
        {
          dev_set_param_error (error, key, "cell %u: '%s': probabilities must rise strictly "
                               "within [0, 1]", index + 1, pairs[i]);
          return FALSE;
        }
      if (colon[1] == '-' || !sim_parse_time_ns (colon + 1, 0, &c->q_ns[k], &local)
          || (k > 0 && c->q_ns[k] < c->q_ns[k - 1]))
        {
          dev_set_param_error (error, key, "cell %u: '%s': %s", index + 1, pairs[i],
                               local ? local->message : "times must not fall and not be negative");
          return FALSE;
        }
      c->n_quantiles++;
    }
  if (c->n_quantiles < 2 || c->p[0] != 0.0 || c->p[c->n_quantiles - 1] != 1.0)
    {
      dev_set_param_error (error, key, "cell %u needs quantiles from p 0 to p 1 (at least two)",
                           index + 1);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_cells (const char *key, const char *text, DevEmpiricalCell **out, guint *n_out,
             GError **error)
{
  g_auto (GStrv) items = g_strsplit (text, ";", -1);
  guint n = 0;

  for (guint i = 0; items[i] != NULL; i++)
    if (g_strstrip (items[i])[0] != '\0')
      n++;
  if (n == 0 || n > DEV_EMPIRICAL_MAX_CELLS)
    {
      dev_set_param_error (error, key, "has %u cells; give between 1 and %u", n,
                           DEV_EMPIRICAL_MAX_CELLS);
      return FALSE;
    }
  *out = g_new0 (DevEmpiricalCell, n);
  *n_out = n;
  for (guint i = 0, k = 0; items[i] != NULL; i++)
    {
      char *colon;

      if (items[i][0] == '\0')
        continue;
      colon = strchr (items[i], ':');
      if (colon == NULL)
        {
          dev_set_param_error (error, key, "cell %u: '%s' has no ':' before its quantiles",
                               k + 1, items[i]);
          return FALSE;
        }
      *colon = '\0';
      if (!parse_cell_head (key, k, items[i], &(*out)[k], error)
          || !parse_cell_quantiles (key, k, colon + 1, &(*out)[k], error))
        return FALSE;
      k++;
    }
  return TRUE;
}

static gboolean
dev_empirical_init (DevModel *dev, GError **error)
{
  DevEmpirical *e = dev->priv;

  if (e->parallelism < 1 || e->parallelism > DEV_EMPIRICAL_MAX_PARALLELISM)
    {
      dev_set_param_error (error, "parallelism", "%u is outside [1, %u]", e->parallelism,
                           DEV_EMPIRICAL_MAX_PARALLELISM);
      return FALSE;
    }
  if (e->distance_window < 1 || e->distance_window > DEV_EMPIRICAL_MAX_WINDOW)
    {
      dev_set_param_error (error, "distance_window", "%u is outside [1, %u]",
                           e->distance_window, DEV_EMPIRICAL_MAX_WINDOW);
      return FALSE;
    }
  if (!parse_cells ("read_cells", e->read_cells, &e->cells[SIM_OP_READ],
                    &e->n_cells[SIM_OP_READ], error)
      || !parse_cells ("write_cells", e->write_cells, &e->cells[SIM_OP_WRITE],
                       &e->n_cells[SIM_OP_WRITE], error))
    return FALSE;
  e->recent_end = g_new0 (guint64, e->distance_window);
  dev->parallelism = e->parallelism;
  return TRUE;
}

/* log2 of how far @v lies outside [lo, hi] (0 inside). */
static double
log_gap (guint64 v, guint64 lo, guint64 hi)
{
  if (v < lo)
    return log2 ((double) lo + 1.0) - log2 ((double) v + 1.0);
  if (v > hi)
    return log2 ((double) v + 1.0) - log2 ((double) hi + 1.0);
  return 0.0;
}

static const DevEmpiricalCell *
find_cell (DevEmpirical *e, SimOp op, guint64 bytes, guint64 dist)
{
  const DevEmpiricalCell *best = NULL;
  double best_size = INFINITY, best_dist = INFINITY;

  for (guint i = 0; i < e->n_cells[op]; i++)
    {
      const DevEmpiricalCell *c = &e->cells[op][i];
      double gs = log_gap (bytes, c->bytes_lo + 1, c->bytes_hi);
      double gd = log_gap (dist, c->dist_lo, c->dist_hi);

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
  e->outside[op]++;
  return best;
}

/* The cell's quantile at @u in [0, 1], linear between neighbours. */
static SimTime
cell_quantile_ns (const DevEmpiricalCell *c, double u)
{
  guint lo = 0, hi = c->n_quantiles - 1;

  if (u >= c->p[hi])
    return c->q_ns[hi];
  while (hi - lo > 1)
    {
      guint mid = (lo + hi) / 2;

      if (c->p[mid] <= u)
        lo = mid;
      else
        hi = mid;
    }
  return c->q_ns[lo]
         + (SimTime) llround ((u - c->p[lo]) / (c->p[hi] - c->p[lo])
                              * (double) (c->q_ns[hi] - c->q_ns[lo]));
}

/* The smallest |@sector - end| over the recent ends; G_MAXUINT64 before
 * the first request. */
static guint64
distance_sectors (const DevEmpirical *e, guint64 sector)
{
  guint64 best = G_MAXUINT64;

  for (guint i = 0; i < e->recent_len; i++)
    {
      guint64 end = e->recent_end[i];
      guint64 d = sector >= end ? sector - end : end - sector;

      best = MIN (best, d);
    }
  return best;
}

static SimTime
dev_empirical_service_time (DevModel *dev, SimOp op, guint64 sector, guint32 nr_sectors,
                            SimTime now_ns)
{
  DevEmpirical *e = dev->priv;
  guint64 bytes = (guint64) nr_sectors * SIM_SECTOR_BYTES;
  const DevEmpiricalCell *c;

  (void) now_ns;
  g_assert (op < SIM_N_OPS);
  c = find_cell (e, op, bytes, distance_sectors (e, sector));
  e->recent_end[e->recent_next] = sector + nr_sectors;
  e->recent_next = (e->recent_next + 1) % e->distance_window;
  e->recent_len = MIN (e->recent_len + 1, e->distance_window);
  return cell_quantile_ns (c, dev->rng != NULL ? sim_rng_uniform (dev->rng) : 0.5);
}

static void
dev_empirical_dump (DevModel *dev, GString *out)
{
  const DevEmpirical *e = dev->priv;

  for (int op = 0; op < SIM_N_OPS; op++)
    {
      g_string_append_printf (out, "%s: %u cells, distance over the last %u started, "
                              "%" G_GUINT64_FORMAT " requests outside every cell\n",
                              op == SIM_OP_READ ? "read" : "write", e->n_cells[op],
                              e->distance_window, e->outside[op]);
      for (guint i = 0; i < e->n_cells[op]; i++)
        {
          const DevEmpiricalCell *c = &e->cells[op][i];
          g_string_append_printf (out, "  bytes (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                                  "], distance [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                                  "]: n %" G_GUINT64_FORMAT ", median %" SIM_TIME_FORMAT " ns\n",
                                  c->bytes_lo, c->bytes_hi, c->dist_lo, c->dist_hi, c->n,
                                  cell_quantile_ns (c, 0.5));
        }
    }
}

static void
dev_empirical_finalize (DevModel *dev)
{
  DevEmpirical *e = dev->priv;

  for (int op = 0; op < SIM_N_OPS; op++)
    g_free (e->cells[op]);
  g_free (e->recent_end);
}

const DevOps dev_empirical_ops = {
  .name = "empirical",
  .summary = "measured service-time distributions by size and distance class (fitted to a trace)",
  .params = dev_empirical_params,
  .priv_size = sizeof (DevEmpirical),
  .init = dev_empirical_init,
  .service_time = dev_empirical_service_time,
  .dump = dev_empirical_dump,
  .finalize = dev_empirical_finalize,
};
