/* dev-ssd.c — a flash SSD: per-request latencies overlap across internal
 * units, data moves through one pipeline at the full bandwidth.
 *
 * A request that starts at `now` first pays its fixed latency (flash page
 * read or buffer acknowledgement plus controller work); up to `parallelism`
 * of these run at once (the engine runs that many servers), as the flash
 * dies and channels work independently.  Its data then crosses one shared
 * transfer pipeline (controller striping over all channels, and the host
 * link) at the datasheet bandwidth:
 *
 *   begin = max (now + latency(op), transfer_free_at_ns)
 *   end   = begin + bytes / bandwidth(op)
 *   service = end - now;  transfer_free_at_ns = end
 *
 * So a lone 512 KiB read runs at nearly the full sequential rate, as a real
 * drive striping it across its channels does, a lone 4 KiB read costs about
 * the read latency, and many concurrent requests never exceed the bandwidth
 * in aggregate.  The engine calls service_time once per request, when it
 * starts and in start order, so the pipeline state is deterministic.  A
 * request without data (nr_sectors 0) costs its latency and skips the
 * pipeline.
 * Simplifications: the pipeline is reserved in start order and never
 * backfilled (a write started just after a read waits for the read's
 * transfer even if the pipeline idles during the read's latency); reads
 * and writes share the one pipeline; a request keeps its server while it
 * waits for the pipeline; no garbage collection, write amplification, SLC
 * cache exhaustion or thermal throttling; no position dependence at all.
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
  double  bandwidth_bytes_per_s[SIM_N_OPS];
  /* state: when the shared transfer pipeline finishes its last booking */
  SimTime transfer_free_at_ns;
} DevSsd;

#define DEV_SSD_MAX_PARALLELISM 1024u

static const DevParam dev_ssd_params[] = {
  { "read_latency", DEV_PARAM_TIME, "80us", G_STRUCT_OFFSET (DevSsd, read_latency_ns),
    "fixed cost of a read (flash page read plus controller); SATA drives show 60-100us at QD1" },
  { "write_latency", DEV_PARAM_TIME, "20us", G_STRUCT_OFFSET (DevSsd, write_latency_ns),
    "fixed cost of a write; small because the drive's DRAM/SLC buffer acknowledges it" },
  { "read_bandwidth", DEV_PARAM_RATE, "500MB/s", G_STRUCT_OFFSET (DevSsd, read_bandwidth_bytes_per_s),
    "sequential read rate of the shared transfer pipeline; SATA 6Gb/s tops out near 550MB/s" },
  { "write_bandwidth", DEV_PARAM_RATE, "450MB/s", G_STRUCT_OFFSET (DevSsd, write_bandwidth_bytes_per_s),
    "sequential write rate of the shared transfer pipeline" },
  { "parallelism", DEV_PARAM_UINT, "8", G_STRUCT_OFFSET (DevSsd, parallelism),
    "requests whose latencies overlap (flash channels); 8 is typical of SATA controllers" },
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
  s->bandwidth_bytes_per_s[SIM_OP_READ] = s->read_bandwidth_bytes_per_s;
  s->bandwidth_bytes_per_s[SIM_OP_WRITE] = s->write_bandwidth_bytes_per_s;
  s->transfer_free_at_ns = 0;
  dev->parallelism = s->parallelism;
  return TRUE;
}

static SimTime
dev_ssd_transfer_ns (const DevSsd *s, SimOp op, double bytes)
{
  return (SimTime) llround (bytes * 1e9 / s->bandwidth_bytes_per_s[op]);
}

static SimTime
dev_ssd_service_time (DevModel *dev, SimOp op, guint64 sector,
                      guint32 nr_sectors, SimTime now_ns)
{
  DevSsd *s = dev->priv;
  SimTime begin_ns, end_ns;

  g_assert (op < SIM_N_OPS);
  /* A request without data never touches the pipeline. */
  if (nr_sectors == 0)
    return s->latency_ns[op];
  begin_ns = MAX (now_ns + s->latency_ns[op], s->transfer_free_at_ns);
  end_ns = begin_ns + dev_ssd_transfer_ns (s, op, (double) nr_sectors * SIM_SECTOR_BYTES);
  s->transfer_free_at_ns = end_ns;
  return end_ns - now_ns;
}

static void
dev_ssd_dump (DevModel *dev, GString *out)
{
  const DevSsd *s = dev->priv;

  for (int op = 0; op < SIM_N_OPS; op++)
    {
      const double bw = s->bandwidth_bytes_per_s[op];

      g_string_append_printf (out, "%s: latency_ns = %" SIM_TIME_FORMAT
                              ", pipeline ns_per_byte = %.6g"
                              ", 4KiB at QD1 = %.1f us, 512KiB at QD1 = %.1f us",
                              op == SIM_OP_READ ? "read" : "write",
                              s->latency_ns[op], 1e9 / bw,
                              (s->latency_ns[op] + dev_ssd_transfer_ns (s, op, 4096)) / 1e3,
                              (s->latency_ns[op] + dev_ssd_transfer_ns (s, op, 524288)) / 1e3);
      /* With every server busy, each cycles through latency + transfer, so
       * P servers of b-byte requests want P b / (lat + b / bw) bytes/s: the
       * pipeline saturates from b = bw lat / (P - 1); one server never
       * saturates it because the pipeline idles during each latency. */
      if (s->parallelism > 1)
        g_string_append_printf (out, ", bandwidth-bound from %.0f B/request\n",
                                bw * s->latency_ns[op] / 1e9 / (s->parallelism - 1));
      else
        g_string_append (out, ", never bandwidth-bound\n");
    }
  g_string_append_printf (out, "transfer_free_at_ns = %" SIM_TIME_FORMAT "\n",
                          s->transfer_free_at_ns);
}

const DevOps dev_ssd_ops = {
  .name = "ssd",
  .summary = "flash SSD: latencies overlap across channels, transfers share the full bandwidth",
  .params = dev_ssd_params,
  .priv_size = sizeof (DevSsd),
  .init = dev_ssd_init,
  .service_time = dev_ssd_service_time,
  .dump = dev_ssd_dump,
  .common_defaults = dev_ssd_common_defaults,
};
