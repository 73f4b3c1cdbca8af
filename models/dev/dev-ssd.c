/* dev-ssd.c — a flash SSD as a set of identical channels.
 *
 *   service = latency(op) + bytes / (bandwidth(op) / parallelism)
 *
 * The device serves up to `parallelism` requests at once (the engine runs
 * that many servers); each channel moves data at 1/parallelism of the
 * aggregate bandwidth, so the datasheet bandwidth is reached only with at
 * least `parallelism` large requests in flight, and a lone 4 KiB read costs
 * about the read latency, as on real drives at queue depth 1.
 * Simplifications: no garbage collection, write amplification, SLC cache
 * exhaustion or thermal throttling; no position dependence at all.
 */
#include "models/dev/dev.h"

#include <math.h>

typedef struct {
  SimTime read_latency_ns;
  SimTime write_latency_ns;
  double  read_bandwidth_bytes_per_s;
  double  write_bandwidth_bytes_per_s;
  guint   parallelism;
  /* derived */
  SimTime latency_ns[SIM_N_OPS];
  double  ns_per_byte[SIM_N_OPS];   /* per channel */
} DevSsd;

#define DEV_SSD_MAX_PARALLELISM 1024u

static const DevParam dev_ssd_params[] = {
  { "read_latency", DEV_PARAM_TIME, "80us", G_STRUCT_OFFSET (DevSsd, read_latency_ns),
    "fixed cost of a read (flash page read plus controller); SATA drives show 60-100us at QD1" },
  { "write_latency", DEV_PARAM_TIME, "20us", G_STRUCT_OFFSET (DevSsd, write_latency_ns),
    "fixed cost of a write; small because the drive's DRAM/SLC buffer acknowledges it" },
  { "read_bandwidth", DEV_PARAM_RATE, "500MB/s", G_STRUCT_OFFSET (DevSsd, read_bandwidth_bytes_per_s),
    "aggregate sequential read rate; SATA 6Gb/s tops out near 550MB/s" },
  { "write_bandwidth", DEV_PARAM_RATE, "450MB/s", G_STRUCT_OFFSET (DevSsd, write_bandwidth_bytes_per_s),
    "aggregate sequential write rate" },
  { "parallelism", DEV_PARAM_UINT, "8", G_STRUCT_OFFSET (DevSsd, parallelism),
    "independent flash channels; 8 is typical of SATA controllers" },
  { NULL },
};

/* NCQ allows 32 outstanding commands; SSDs are not rotational. */
static const DevDefault dev_ssd_common_defaults[] = {
  { "queue_depth", "32" },
  { NULL },
};

static gboolean
dev_ssd_init (DevModel *dev, GError **error)
{
  DevSsd *s = dev->priv;

  if (s->parallelism < 1 || s->parallelism > DEV_SSD_MAX_PARALLELISM)
    {
      dev_set_param_error (error, "parallelism", "%u is outside [1, %u]",
                           s->parallelism, DEV_SSD_MAX_PARALLELISM);
      return FALSE;
    }
  s->latency_ns[SIM_OP_READ] = s->read_latency_ns;
  s->latency_ns[SIM_OP_WRITE] = s->write_latency_ns;
  s->ns_per_byte[SIM_OP_READ] = 1e9 * s->parallelism / s->read_bandwidth_bytes_per_s;
  s->ns_per_byte[SIM_OP_WRITE] = 1e9 * s->parallelism / s->write_bandwidth_bytes_per_s;
  dev->parallelism = s->parallelism;
  return TRUE;
}

static SimTime
dev_ssd_service_time (DevModel *dev, SimOp op, guint64 sector,
                      guint32 nr_sectors, SimTime now_ns)
{
  const DevSsd *s = dev->priv;
  double bytes = (double) nr_sectors * SIM_SECTOR_BYTES;

  g_assert (op < SIM_N_OPS);
  return s->latency_ns[op] + (SimTime) llround (bytes * s->ns_per_byte[op]);
}

static void
dev_ssd_dump (DevModel *dev, GString *out)
{
  const DevSsd *s = dev->priv;

  for (int op = 0; op < SIM_N_OPS; op++)
    g_string_append_printf (out, "%s: latency_ns = %" SIM_TIME_FORMAT
                            ", per-channel ns_per_byte = %.6g, 4KiB at QD1 = %.1f us\n",
                            op == SIM_OP_READ ? "read" : "write",
                            s->latency_ns[op], s->ns_per_byte[op],
                            (s->latency_ns[op] + 4096 * s->ns_per_byte[op]) / 1e3);
}

const DevOps dev_ssd_ops = {
  .name = "ssd",
  .summary = "flash SSD: latency by operation, bandwidth shared by parallel channels",
  .params = dev_ssd_params,
  .priv_size = sizeof (DevSsd),
  .init = dev_ssd_init,
  .service_time = dev_ssd_service_time,
  .dump = dev_ssd_dump,
  .common_defaults = dev_ssd_common_defaults,
};
