/* dev-disk.c — a rotating disk after Ruemmler & Wilkes, "An introduction to
 * disk drive modeling" (IEEE Computer, 1994): seek curve, rotation, zoned
 * transfer rate, controller overhead, and a lookahead/write cache that
 * turns sequential streams into pure transfers.
 *
 * A request of n bytes starting at sector s, on cylinder cyl, costs
 *   overhead(op) + seek(|cyl - head|) + rotational latency + n / rate(cyl)
 * or just overhead(op) + n / rate(cyl) if it starts exactly where the
 * previous request ended and the read lookahead (reads) or write cache
 * (writes) is on: the drive already holds or buffers that data.
 *
 * - Seek, for a move of d cylinders: seek(0) = 0 and, for d >= 1,
 *     seek(d) = a + b * sqrt (d - 1) + c * (d - 1)
 *   (Ruemmler & Wilkes' square-root-then-linear shape in one formula).
 *   a = seek_track; b and c are solved at init so that seek(cylinders - 1)
 *   = seek_full and the mean over all seeks between uniformly random pairs
 *   of distinct cylinders equals seek_avg.  That is how datasheets define
 *   "average seek" (HGST: the weighted average of all seek lengths n with
 *   weight max + 1 - n), the discrete form of the distance density
 *   2(1 - x) on [0, 1].  The mean is an exact sum over the distances,
 *   O(cylinders) once at init.  b, c >= 0 holds iff seek_avg lies between
 *   the means of the pure linear and the pure square-root curve, roughly
 *   seek_avg - seek_track in [1/3, 8/15] of seek_full - seek_track; outside
 *   that band the three figures cannot come from one such curve and init
 *   says which way to move them.  (Some laptop datasheets, e.g. 12 ms
 *   average with 20 ms full stroke, fall just outside it.)
 * - Sectors map to cylinders linearly in LBA over the capacity.
 * - Rotation is deterministic, no random draws: with period = 60 / rpm,
 *   a track in the zone of cylinder cyl holds spt = rate(cyl) * period / 512
 *   sectors (rounded down); sector s sits at angle (s mod spt) / spt; the
 *   platter is at angle (t mod period) / period at time t; the rotational
 *   latency is the wait, after overhead and seek, until the target sector
 *   comes under the head.
 * - The transfer rate falls linearly with the cylinder from outer_rate
 *   (cylinder 0) to inner_rate (last cylinder), a continuous stand-in for
 *   zoned recording.
 *
 * Simplifications (candidly): one rate for the whole request even if it
 * crosses tracks or zones; no head or track switch times; no settle time
 * difference between reads and writes; sectors per cylinder (capacity /
 * cylinders) need not agree with spt times the number of heads; one
 * request at a time (command queueing reorders in the elevator, not here);
 * the cache holds only "the next sector", never earlier data, and keeps it
 * however long the drive stays idle; "previous request" means the last one
 * served, read or write.
 */
#include "models/dev/dev.h"

#include <math.h>

typedef struct {
  double   rpm;
  SimTime  seek_track_ns;
  SimTime  seek_avg_ns;
  SimTime  seek_full_ns;
  guint    cylinders;
  double   outer_rate_bytes_per_s;
  double   inner_rate_bytes_per_s;
  SimTime  overhead_ns;
  SimTime  write_overhead_ns;
  gboolean read_lookahead;
  gboolean write_cache;

  /* derived at init */
  double   seek_a_ns;
  double   seek_b_ns;
  double   seek_c_ns;
  double   seek_mean_ns;
  SimTime  period_ns;
  double   period_s_per_sector;   /* period / 512 bytes, seconds: rate * this = spt */
  double   rate_slope;            /* bytes/s lost per cylinder inward */
  double   cyl_per_sector;
  SimTime  overhead_op_ns[SIM_N_OPS];
  gboolean skip_sequential[SIM_N_OPS];

  /* mechanical state */
  guint64  head_cyl;
  guint64  last_end_sector;       /* G_MAXUINT64 before the first request */
} DevDisk;

#define DEV_DISK_MIN_RPM        300.0
#define DEV_DISK_MAX_RPM        60000.0
#define DEV_DISK_MIN_CYLINDERS  3u          /* the curve needs d - 1 >= 1 at full stroke */
#define DEV_DISK_MAX_CYLINDERS  10000000u   /* keeps the init sum cheap; real drives have < 1M */

static const DevParam dev_disk_params[] = {
  { "rpm", DEV_PARAM_DOUBLE, "7200", G_STRUCT_OFFSET (DevDisk, rpm),
    "spindle speed; 7200 is the common desktop drive" },
  { "seek_track", DEV_PARAM_TIME, "0.8ms", G_STRUCT_OFFSET (DevDisk, seek_track_ns),
    "track-to-track seek; datasheets of 7200 rpm drives say 0.8-1ms" },
  { "seek_avg", DEV_PARAM_TIME, "8.5ms", G_STRUCT_OFFSET (DevDisk, seek_avg_ns),
    "mean seek over random pairs of distinct cylinders, as datasheets define average seek" },
  { "seek_full", DEV_PARAM_TIME, "16ms", G_STRUCT_OFFSET (DevDisk, seek_full_ns),
    "full-stroke seek; roughly twice the average on most drives" },
  { "cylinders", DEV_PARAM_UINT, "100000", G_STRUCT_OFFSET (DevDisk, cylinders),
    "tracks per surface; only the ratio of distances matters, so an estimate is fine" },
  { "outer_rate", DEV_PARAM_RATE, "100MB/s", G_STRUCT_OFFSET (DevDisk, outer_rate_bytes_per_s),
    "media rate at the outer edge (LBA 0), the datasheet's maximum sustained rate" },
  { "inner_rate", DEV_PARAM_RATE, "50MB/s", G_STRUCT_OFFSET (DevDisk, inner_rate_bytes_per_s),
    "media rate at the inner edge; about half the outer rate on most drives" },
  { "overhead", DEV_PARAM_TIME, "0.2ms", G_STRUCT_OFFSET (DevDisk, overhead_ns),
    "per-command controller overhead (R&W measured 0.3-1.1ms on early-90s drives; newer are faster)" },
  { "write_overhead", DEV_PARAM_TIME, "=overhead", G_STRUCT_OFFSET (DevDisk, write_overhead_ns),
    "per-command overhead of writes (default: as for reads)" },
  { "read_lookahead", DEV_PARAM_BOOL, "true", G_STRUCT_OFFSET (DevDisk, read_lookahead),
    "a read starting where the last request ended is served from the lookahead cache" },
  { "write_cache", DEV_PARAM_BOOL, "false", G_STRUCT_OFFSET (DevDisk, write_cache),
    "a write starting where the last request ended is absorbed by the write cache (hdparm -W)" },
  { NULL },
};

static const DevDefault dev_disk_common_defaults[] = {
  { "rotational", "true" },
  { NULL },
};

static inline double
dev_disk_seek_curve (const DevDisk *d, guint64 distance)
{
  double u;

  if (distance == 0)
    return 0.0;
  u = (double) (distance - 1);
  return d->seek_a_ns + d->seek_b_ns * sqrt (u) + d->seek_c_ns * u;
}

static gboolean
dev_disk_check_params (const DevDisk *d, GError **error)
{
  if (!(d->rpm >= DEV_DISK_MIN_RPM && d->rpm <= DEV_DISK_MAX_RPM))
    {
      dev_set_param_error (error, "rpm", "%g is outside [%g, %g]",
                           d->rpm, DEV_DISK_MIN_RPM, DEV_DISK_MAX_RPM);
      return FALSE;
    }
  if (d->cylinders < DEV_DISK_MIN_CYLINDERS || d->cylinders > DEV_DISK_MAX_CYLINDERS)
    {
      dev_set_param_error (error, "cylinders", "%u is outside [%u, %u]",
                           d->cylinders, DEV_DISK_MIN_CYLINDERS, DEV_DISK_MAX_CYLINDERS);
      return FALSE;
    }
  if (d->inner_rate_bytes_per_s > d->outer_rate_bytes_per_s)
    {
      dev_set_param_error (error, "inner_rate",
                           "%.6g B/s exceeds outer_rate %.6g B/s; outer tracks are the longer ones",
                           d->inner_rate_bytes_per_s, d->outer_rate_bytes_per_s);
      return FALSE;
    }
  if (d->seek_full_ns <= 0)
    {
      dev_set_param_error (error, "seek_full", "must be positive");
      return FALSE;
    }
  if (d->seek_track_ns > d->seek_avg_ns)
    {
      dev_set_param_error (error, "seek_track", "%.3f ms exceeds seek_avg %.3f ms",
                           d->seek_track_ns / 1e6, d->seek_avg_ns / 1e6);
      return FALSE;
    }
  if (d->seek_avg_ns > d->seek_full_ns)
    {
      dev_set_param_error (error, "seek_avg", "%.3f ms exceeds seek_full %.3f ms",
                           d->seek_avg_ns / 1e6, d->seek_full_ns / 1e6);
      return FALSE;
    }
  return TRUE;
}

/* Solve b, c (see the file header).  With N = cylinders - 2 and the
 * seek distance distribution P(d = k) = (C - k) / (C (C - 1) / 2) for
 * 1 <= k < C (pairs of distinct cylinders):
 *   b sqrt(N) + c N            = full - a
 *   b E[sqrt(d-1)] + c E[d-1]  = avg - a                              */
static gboolean
dev_disk_solve_seek (DevDisk *d, GError **error)
{
  const double C = d->cylinders;
  const double N = C - 2.0;
  const double a = d->seek_track_ns;
  const double full = d->seek_full_ns;
  const double avg = d->seek_avg_ns;
  double sum_sqrt = 0.0, sum_lin = 0.0;
  double pairs, e_sqrt, e_lin, s1, l1, rhs1, rhs2, det, avg_min, avg_max;

  /* Sum (C - k) * f(k - 1) in integers-as-doubles first, scale once. */
  for (guint64 k = 1; k < d->cylinders; k++)
    {
      double w = (double) (d->cylinders - k);
      double u = (double) (k - 1);

      sum_sqrt += w * sqrt (u);
      sum_lin += w * u;
    }
  pairs = C * (C - 1.0) / 2.0;
  e_sqrt = sum_sqrt / pairs;
  e_lin = sum_lin / pairs;
  s1 = sqrt (N);
  l1 = N;
  rhs1 = full - a;
  rhs2 = avg - a;

  /* The band of reachable averages: c = 0 (pure square root) gives the
   * highest, b = 0 (pure linear) the lowest. */
  avg_max = a + rhs1 * e_sqrt / s1;
  avg_min = a + rhs1 * e_lin / l1;
  if (avg > avg_max + 0.5)
    {
      dev_set_param_error (error, "seek_avg",
                           "%.3f ms is too high for seek_track %.3f ms and seek_full %.3f ms: "
                           "even a square-root seek curve averages only %.3f ms; "
                           "lower seek_avg or raise seek_full",
                           avg / 1e6, a / 1e6, full / 1e6, avg_max / 1e6);
      return FALSE;
    }
  if (avg < avg_min - 0.5)
    {
      dev_set_param_error (error, "seek_avg",
                           "%.3f ms is too low for seek_track %.3f ms and seek_full %.3f ms: "
                           "even a linear seek curve averages %.3f ms; "
                           "raise seek_avg or lower seek_full or seek_track",
                           avg / 1e6, a / 1e6, full / 1e6, avg_min / 1e6);
      return FALSE;
    }

  det = s1 * e_lin - e_sqrt * l1;
  g_assert (det < 0.0);
  d->seek_a_ns = a;
  d->seek_b_ns = (rhs1 * e_lin - rhs2 * l1) / det;
  d->seek_c_ns = (s1 * rhs2 - e_sqrt * rhs1) / det;
  /* Inside the band, b and c are >= 0 up to rounding. */
  d->seek_b_ns = MAX (d->seek_b_ns, 0.0);
  d->seek_c_ns = MAX (d->seek_c_ns, 0.0);
  d->seek_mean_ns = a + d->seek_b_ns * e_sqrt + d->seek_c_ns * e_lin;
  return TRUE;
}

static gboolean
dev_disk_init (DevModel *dev, GError **error)
{
  DevDisk *d = dev->priv;
  guint64 capacity_sectors = dev->capacity_bytes / SIM_SECTOR_BYTES;

  if (!dev_disk_check_params (d, error) || !dev_disk_solve_seek (d, error))
    return FALSE;

  d->period_ns = (SimTime) llround (60e9 / d->rpm);
  d->period_s_per_sector = (double) d->period_ns / 1e9 / SIM_SECTOR_BYTES;
  d->rate_slope = (d->outer_rate_bytes_per_s - d->inner_rate_bytes_per_s) / (d->cylinders - 1);
  d->cyl_per_sector = (double) d->cylinders / (double) capacity_sectors;
  d->overhead_op_ns[SIM_OP_READ] = d->overhead_ns;
  d->overhead_op_ns[SIM_OP_WRITE] = d->write_overhead_ns;
  d->skip_sequential[SIM_OP_READ] = d->read_lookahead;
  d->skip_sequential[SIM_OP_WRITE] = d->write_cache;
  dev->write_cache = d->write_cache;
  d->head_cyl = 0;
  d->last_end_sector = G_MAXUINT64;
  dev->parallelism = 1;
  return TRUE;
}

static inline guint64
dev_disk_cylinder (const DevDisk *d, guint64 sector)
{
  guint64 cyl = (guint64) ((double) sector * d->cyl_per_sector);

  return MIN (cyl, (guint64) d->cylinders - 1);
}

static inline double
dev_disk_rate (const DevDisk *d, guint64 cyl)
{
  return d->outer_rate_bytes_per_s - d->rate_slope * (double) cyl;
}

static inline SimTime
dev_disk_rotation (const DevDisk *d, guint64 sector, double rate, SimTime at_ns)
{
  guint64 spt = MAX ((guint64) (rate * d->period_s_per_sector), 1);
  SimTime target_ns = (SimTime) ((sector % spt) * (guint64) d->period_ns / spt);
  SimTime head_ns = at_ns % d->period_ns;

  return (target_ns - head_ns + d->period_ns) % d->period_ns;
}

static SimTime
dev_disk_service_time (DevModel *dev, SimOp op, guint64 sector,
                       guint32 nr_sectors, SimTime now_ns)
{
  DevDisk *d = dev->priv;
  guint64 cyl = dev_disk_cylinder (d, sector);
  double rate = dev_disk_rate (d, cyl);
  SimTime transfer_ns = (SimTime) llround ((double) nr_sectors * SIM_SECTOR_BYTES * 1e9 / rate);
  SimTime t_ns;

  g_assert (op < SIM_N_OPS);
  g_assert (now_ns >= 0);
  t_ns = d->overhead_op_ns[op];

  if (!(sector == d->last_end_sector && d->skip_sequential[op]))
    {
      guint64 dist = cyl > d->head_cyl ? cyl - d->head_cyl : d->head_cyl - cyl;

      t_ns += (SimTime) llround (dev_disk_seek_curve (d, dist));
      t_ns += dev_disk_rotation (d, sector, rate, now_ns + t_ns);
    }
  t_ns += transfer_ns;

  d->last_end_sector = sector + nr_sectors;
  d->head_cyl = dev_disk_cylinder (d, sector + (nr_sectors ? nr_sectors - 1 : 0));
  return t_ns;
}

static void
dev_disk_dump (DevModel *dev, GString *out)
{
  const DevDisk *d = dev->priv;
  double rate_inner = dev_disk_rate (d, d->cylinders - 1);
  double sectors_per_cyl = (double) (dev->capacity_bytes / SIM_SECTOR_BYTES) / d->cylinders;
  guint64 spt_outer = MAX ((guint64) (d->outer_rate_bytes_per_s * d->period_s_per_sector), 1);
  guint64 spt_inner = MAX ((guint64) (rate_inner * d->period_s_per_sector), 1);

  g_string_append_printf (out, "seek_ns(d) = %.1f + %.4f * sqrt(d-1) + %.6f * (d-1), d >= 1\n",
                          d->seek_a_ns, d->seek_b_ns, d->seek_c_ns);
  g_string_append_printf (out, "seek_mean_ns = %.1f (target %" SIM_TIME_FORMAT ")\n",
                          d->seek_mean_ns, d->seek_avg_ns);
  g_string_append_printf (out, "seek_full_ns = %.1f\n", dev_disk_seek_curve (d, d->cylinders - 1));
  g_string_append_printf (out, "period_ns = %" SIM_TIME_FORMAT "\n", d->period_ns);
  g_string_append_printf (out, "spt_outer = %" G_GUINT64_FORMAT "\nspt_inner = %" G_GUINT64_FORMAT "\n",
                          spt_outer, spt_inner);
  g_string_append_printf (out, "sectors_per_cylinder = %.1f (implied heads %.2f outer, %.2f inner)\n",
                          sectors_per_cyl, sectors_per_cyl / spt_outer, sectors_per_cyl / spt_inner);
}

const DevOps dev_disk_ops = {
  .name = "disk",
  .summary = "rotating disk: seek curve, rotation, zoned rate, lookahead (Ruemmler & Wilkes 1994)",
  .params = dev_disk_params,
  .priv_size = sizeof (DevDisk),
  .init = dev_disk_init,
  .service_time = dev_disk_service_time,
  .dump = dev_disk_dump,
  .common_defaults = dev_disk_common_defaults,
};

static DevDisk *
dev_disk_priv (DevModel *dev)
{
  g_assert (dev != NULL && dev->ops == &dev_disk_ops);
  return dev->priv;
}

void
dev_disk_get_geometry (DevModel *dev, DevDiskGeometry *out)
{
  const DevDisk *d = dev_disk_priv (dev);

  out->cylinders = d->cylinders;
  out->seek_a_ns = d->seek_a_ns;
  out->seek_b_ns = d->seek_b_ns;
  out->seek_c_ns = d->seek_c_ns;
  out->seek_mean_ns = d->seek_mean_ns;
  out->period_ns = d->period_ns;
  out->spt_outer = (guint) MAX ((guint64) (d->outer_rate_bytes_per_s * d->period_s_per_sector), 1);
  out->spt_inner = (guint) MAX ((guint64) (dev_disk_rate (d, d->cylinders - 1)
                                           * d->period_s_per_sector), 1);
}

double
dev_disk_seek_ns (DevModel *dev, guint64 distance_cyl)
{
  return dev_disk_seek_curve (dev_disk_priv (dev), distance_cyl);
}

guint64
dev_disk_sector_cylinder (DevModel *dev, guint64 sector)
{
  return dev_disk_cylinder (dev_disk_priv (dev), sector);
}

SimTime
dev_disk_rotational_latency_ns (DevModel *dev, guint64 sector, SimTime at_ns)
{
  const DevDisk *d = dev_disk_priv (dev);

  g_return_val_if_fail (at_ns >= 0, 0);
  return dev_disk_rotation (d, sector, dev_disk_rate (d, dev_disk_cylinder (d, sector)), at_ns);
}
