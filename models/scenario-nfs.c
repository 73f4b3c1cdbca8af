/* scenario-nfs.c — [nfs NAME] groups (see scenario-nfs.h).
 *
 * Defaults and where they come from:
 *   - threads 8: nfs-utils' RPCNFSDCOUNT, the number rpc.nfsd starts
 *     unless told otherwise (distribution init scripts of the 2.6 era).
 *   - rsize: what a mount without rsize= gets from a 2.6.19-2.6.27
 *     server (scenario_nfs_default_rsize, from the server's memory).
 *   - slots 16: xprt_tcp_slot_table_entries = RPC_DEF_SLOT_TABLE.
 *   - link 1 Gbit/s: gigabit Ethernet, 125 MB/s raw.
 *   - rtt 200 us: an estimate for a switched gigabit LAN, interrupt
 *     coalescing and both hosts' stacks included (not a measurement).  It
 *     hardly matters for one streaming client: 16 slots x 32 KiB in flight
 *     are many times the bandwidth-delay product (125 MB/s x 0.2 ms =
 *     25 KB); classic-nfsd-2.6.27.ini gives the same MB/s at 100 and 400 us.
 *   - mtu 1500: Ethernet without jumbo frames.
 *   - CPU: estimates from the work each step does on a 2008 server, not
 *     measurements: receiving one 120-byte record (tcp_recvmsg, svc_recv)
 *     ~5 us; decode, fh_verify, nfsd_open, vfs_getattr, encode and
 *     svc_send ~15 us; per page of reply the splice actor and the TCP
 *     sendpage of its frames ~1 us.  Calibrate against a capture.
 */
#include "models/scenario-nfs.h"
#include "models/scenario-private.h"
#include "sim/sim-units.h"

#include <string.h>

#define DEFAULT_THREADS      8u
#define DEFAULT_READ_BYTES   (1024u * 1024u)
#define DEFAULT_LINK_BITS    G_GUINT64_CONSTANT (1000000000)
#define DEFAULT_RTT_NS       (200 * SIM_NS_PER_US)
#define DEFAULT_MTU          1500u
#define DEFAULT_CPU_RECV_NS  (5 * SIM_NS_PER_US)
#define DEFAULT_CPU_RPC_NS   (15 * SIM_NS_PER_US)
#define DEFAULT_CPU_PAGE_NS  (1 * SIM_NS_PER_US)
/* NFS_MAX_FILE_IO_SIZE and RPCSVC_MAXPAYLOAD_TCP: 1 MiB. */
#define MAX_RSIZE_BYTES      (1024u * 1024u)

guint64
scenario_nfs_default_rsize (guint64 server_memory_bytes)
{
  /* nfsd_create_serv: nfsd_max_blksize = NFSSVC_MAXBLKSIZE, halved while
   * it exceeds totalram in 4 KiB units (1/4096 of memory in bytes) and is
   * at least 16 KiB. */
  guint64 target = server_memory_bytes / 4096;
  guint64 size = MAX_RSIZE_BYTES;
  while (size > target && size >= 16 * 1024)
    size /= 2;
  return size;
}

static const char *const nfs_keys[] = {
  "device", "size", "offset", "threads", "rsize", "bs", "slots", "client_readahead",
  "link", "rtt", "mtu", "cpu_recv", "cpu_rpc", "cpu_page", "raparams", "start", NULL
};

static gboolean
nfs_size (GKeyFile *kf, const char *group, const char *key, guint64 dflt, guint64 *out,
          GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  g_autoptr (GError) local = NULL;
  *out = dflt;
  if (text != NULL && !sim_parse_size_bytes (text, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

static gboolean
nfs_time (GKeyFile *kf, const char *group, const char *key, SimTime dflt, SimTime *out,
          GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  g_autoptr (GError) local = NULL;
  *out = dflt;
  if (text != NULL && !sim_parse_time_ns (text, 0, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

static gboolean
nfs_count (GKeyFile *kf, const char *group, const char *key, guint dflt, guint max,
           guint *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  if (text == NULL)
    return TRUE;
  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-' || v < 1 || v > max)
    return scenario_invalid (error, group, key, "'%s' is not a whole number in [1, %u]", text, max);
  *out = (guint) v;
  return TRUE;
}

/* A link rate in bits (1Gbit/s, 100Mbit/s) or bytes (125MB/s) per second. */
static gboolean
nfs_link (GKeyFile *kf, const char *group, guint64 *out_bits, GError **error)
{
  static const struct { const char *unit; double factor; } bit_units[] = {
    { "bit/s", 1.0 }, { "kbit/s", 1e3 }, { "Mbit/s", 1e6 }, { "Gbit/s", 1e9 },
  };
  g_autofree char *text = scenario_get_string (kf, group, "link");
  *out_bits = DEFAULT_LINK_BITS;
  if (text == NULL)
    return TRUE;
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  if (end != text && v > 0)
    {
      const char *unit = end;
      while (*unit == ' ')
        unit++;
      for (guint i = 0; i < G_N_ELEMENTS (bit_units); i++)
        if (strcmp (unit, bit_units[i].unit) == 0)
          {
            *out_bits = (guint64) (v * bit_units[i].factor);
            return TRUE;
          }
    }
  double bytes_per_s;
  g_autoptr (GError) local = NULL;
  if (!sim_parse_rate_bytes_per_s (text, &bytes_per_s, &local))
    return scenario_invalid (error, group, "link", "'%s' is not a rate in bits (1Gbit/s) or "
                             "bytes (125MB/s) per second", text);
  *out_bits = (guint64) (bytes_per_s * 8.0);
  return TRUE;
}

static gboolean
nfs_check (const ScenarioNfs *n, const char *group, GError **error)
{
  const SimNfsConfig *c = &n->cfg;
  if (c->file_bytes == 0)
    return scenario_invalid (error, group, "size", "the file's size is required (the client "
                             "reads it whole)");
  if (c->file_bytes % SIM_SECTOR_BYTES)
    return scenario_invalid (error, group, "size", "must be a multiple of 512 bytes");
  if (n->offset_bytes % SIM_PAGE_BYTES)
    return scenario_invalid (error, group, "offset", "the file must start on a whole 4 KiB page");
  if (c->rsize_bytes < SIM_PAGE_BYTES || c->rsize_bytes > MAX_RSIZE_BYTES
      || c->rsize_bytes % SIM_PAGE_BYTES)
    return scenario_invalid (error, group, "rsize", "must be whole 4 KiB pages from 4KiB to 1MiB "
                             "(NFS_MAX_FILE_IO_SIZE)");
  if (c->read_bytes == 0)
    return scenario_invalid (error, group, "bs", "must be positive");
  if (c->mtu_bytes <= SIM_NFS_IP_TCP_BYTES)
    return scenario_invalid (error, group, "mtu", "must exceed the %u bytes of IP and TCP headers",
                             SIM_NFS_IP_TCP_BYTES);
  if (c->link_bits_per_s == 0)
    return scenario_invalid (error, group, "link", "must be positive");
  return TRUE;
}

ScenarioNfs *
scenario_nfs_load (GKeyFile *kf, const char *group, guint64 server_memory_bytes, GError **error)
{
  g_autoptr (ScenarioNfs) n = g_new0 (ScenarioNfs, 1);
  n->name = g_strdup (group + strlen ("nfs "));
  if (n->name[0] == '\0' || strchr (n->name, ',') || strchr (n->name, ' '))
    {
      scenario_invalid (error, group, NULL, "an nfs group needs a name without spaces or commas");
      return NULL;
    }
  if (!scenario_check_keys (kf, group, nfs_keys, error))
    return NULL;
  SimNfsConfig *c = &n->cfg;
  c->name = n->name;
  n->device = scenario_get_string (kf, group, "device");
  SimTime rtt_ns;
  guint mtu;
  if (!nfs_size (kf, group, "size", 0, &c->file_bytes, error)
      || !nfs_size (kf, group, "offset", 0, &n->offset_bytes, error)
      || !nfs_count (kf, group, "threads", DEFAULT_THREADS, 1024, &c->threads, error)
      || !nfs_size (kf, group, "rsize", scenario_nfs_default_rsize (server_memory_bytes),
                    &c->rsize_bytes, error)
      || !nfs_size (kf, group, "bs", DEFAULT_READ_BYTES, &c->read_bytes, error)
      || !nfs_count (kf, group, "slots", SIM_NFS_DEFAULT_SLOTS, 65536, &c->slots, error)
      || !nfs_size (kf, group, "client_readahead", 0, &c->client_ra_pages, error)
      || !nfs_link (kf, group, &c->link_bits_per_s, error)
      || !nfs_time (kf, group, "rtt", DEFAULT_RTT_NS, &rtt_ns, error)
      || !nfs_count (kf, group, "mtu", DEFAULT_MTU, 65535, &mtu, error)
      || !nfs_time (kf, group, "cpu_recv", DEFAULT_CPU_RECV_NS, &c->cpu_recv_ns, error)
      || !nfs_time (kf, group, "cpu_rpc", DEFAULT_CPU_RPC_NS, &c->cpu_rpc_ns, error)
      || !nfs_time (kf, group, "cpu_page", DEFAULT_CPU_PAGE_NS, &c->cpu_page_ns, error)
      || !scenario_get_bool (kf, group, "raparams", TRUE, &c->raparams, error)
      || !nfs_time (kf, group, "start", 0, &c->start_ns, error))
    return NULL;
  c->client_ra_pages /= SIM_PAGE_BYTES;
  c->one_way_ns = rtt_ns / 2;
  c->mtu_bytes = mtu;
  if (!nfs_check (n, group, error))
    return NULL;
  return g_steal_pointer (&n);
}

void
scenario_nfs_free (ScenarioNfs *n)
{
  if (n == NULL)
    return;
  g_free (n->name);
  g_free (n->device);
  g_free (n);
}
