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
 */
#include "models/dev/dev.h"

#include <math.h>

typedef struct {
  SimTime overhead_ns;          /* read */
  double  bandwidth_bytes_per_s;
  SimTime write_overhead_ns;
  double  write_bandwidth_bytes_per_s;
  guint   parallelism;
  SimTime sequential_overhead_ns;
  SimTime sequential_write_overhead_ns;
  /* derived */
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
  { NULL },
};

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

static SimTime
dev_fixed_service_time (DevModel *dev, SimOp op, guint64 sector,
                        guint32 nr_sectors, SimTime now_ns)
{
  DevFixed *f = dev->priv;
  double bytes = (double) nr_sectors * SIM_SECTOR_BYTES;
  SimTime overhead_ns;

  g_assert (op < SIM_N_OPS);
  overhead_ns = sector == f->last_end_sector ? f->sequential_op_ns[op] : f->overhead_op_ns[op];
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
