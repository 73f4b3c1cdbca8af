/* test-sim-nfs.c — the NFS client, link and nfsd pool of sim/sim-nfs.c
 * (2.6.27 mechanisms: RPC slot table, svc_xprt_enqueue's idle-thread
 * stack, nfsd's readahead-parameter cache) on a 7200 rpm disk model.
 *
 * Each rig reads one file cold through the server's page cache; the
 * control cases (one thread, a local reader) are run in the same rig, so
 * the assertions compare the mechanism's outcome with its own baseline,
 * not with numbers written here.
 */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-pagecache.h"
#include "sim/sim-process.h"
#include "sim/sim-nfs.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"

#define FILE_OFFSET_BYTES (G_GUINT64_CONSTANT (100) << 30)
#define FILE_BYTES        (G_GUINT64_CONSTANT (64) << 20)
#define READ_AHEAD_KB     128u

typedef struct {
  const char *sched;          /* elevator name */
  const char *era;            /* CFQ era, or NULL */
  guint       threads;
  guint64     link_bits_per_s;
  gboolean    raparams;
  gboolean    no_idling;      /* CFQ with slice_idle = 0 */
  guint       slots;          /* 0: SIM_NFS_DEFAULT_SLOTS */
  guint64     rsize_bytes;    /* 0: 32 KiB */
} RigCase;

typedef struct {
  SimNfsStats stats;
  double      mb_per_s;
  guint       pids_queued;    /* distinct nfsd threads whose bios reached the queue */
  guint64     queued_backward; /* bios queued below the furthest one queued before */
  guint64     bios;
  guint64     last_queued_end;
  guint       threads_used;   /* threads that served at least one READ */
  guint64     busiest_rpcs;   /* READs of the thread that served most */
} RigResult;

typedef struct {
  RigResult *res;
  guint      pids[64];
  guint      n_pids;
} Recorder;

static void
record_queue (gpointer data, const TraceRecord *rec)
{
  Recorder *r = data;
  if (rec->action != TRACE_ACT_QUEUE)
    return;
  r->res->bios++;
  if (rec->sector < r->res->last_queued_end)
    r->res->queued_backward++;
  r->res->last_queued_end = MAX (r->res->last_queued_end, rec->sector + rec->nr_sectors);
  for (guint i = 0; i < r->n_pids; i++)
    if (r->pids[i] == rec->pid)
      return;
  g_assert_cmpuint (r->n_pids, <, G_N_ELEMENTS (r->pids));
  r->pids[r->n_pids++] = rec->pid;
}

/* A queue, disk-7200-sata and the case's elevator, as a scenario builds them. */
static SimRequestQueue *
rig_queue (Sim *sim, const RigCase *c, SimDevice **dev_out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_key_file_set_string (kf, "device d", "model", "disk-7200-sata");
  g_key_file_set_string (kf, "device d", "queue_depth", "1");
  if (c->era)
    g_key_file_set_string (kf, "sched s", "era", c->era);
  if (c->no_idling)
    g_key_file_set_string (kf, "sched s", "slice_idle", "0");
  g_auto (GStrv) dirs = dev_model_default_search_dirs ();
  DevModel *model = dev_model_load ("d", kf, "device d", (const char *const *) dirs, NULL, &error);
  g_assert_no_error (error);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  limits.max_sectors = MAX (8u, model->max_sectors);
  SimRequestQueue *q = sim_queue_new (sim, "d", &limits);
  SimDevice *dev = sim_device_new (sim, model);
  dev->q = q;
  sim_queue_set_device (q, dev);
  SchedQueue *e = sched_queue_new (sched_ops_lookup (c->sched), q, sim, 1000, kf, "sched s", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (q, e);
  *dev_out = dev;
  return q;
}

static void
rig_run_nfs (const RigCase *c, RigResult *out)
{
  memset (out, 0, sizeof *out);
  Recorder rec = { .res = out };
  Sim *sim = sim_new (1);
  SimDevice *dev;
  SimRequestQueue *q = rig_queue (sim, c, &dev);
  sim_queue_set_trace (q, record_queue, &rec);
  SimPageCache *pc = sim_page_cache_new (sim, G_GUINT64_CONSTANT (1) << 30,
                                         SIM_RA_ERA_ONDEMAND_2_6_27);
  SimFile *file = sim_page_cache_open (pc, q, "f", FILE_OFFSET_BYTES, FILE_BYTES, READ_AHEAD_KB);
  SimNfsConfig cfg = {
    .name = "nfs", .threads = c->threads, .file_bytes = FILE_BYTES,
    .rsize_bytes = c->rsize_bytes ? c->rsize_bytes : 32 * 1024, .read_bytes = 1024 * 1024,
    .slots = c->slots ? c->slots : SIM_NFS_DEFAULT_SLOTS,
    .link_bits_per_s = c->link_bits_per_s, .one_way_ns = 100 * SIM_NS_PER_US,
    .mtu_bytes = 1500, .cpu_recv_ns = 5 * SIM_NS_PER_US, .cpu_rpc_ns = 15 * SIM_NS_PER_US,
    .cpu_page_ns = SIM_NS_PER_US, .raparams = c->raparams,
  };
  SimNfs *nfs = sim_nfs_new (sim, pc, file, NULL, &cfg);
  sim_nfs_start (nfs);
  sim_run_until (sim, SIM_TIME_NEVER);
  out->stats = *sim_nfs_stats (nfs);
  g_assert_true (out->stats.done);
  g_assert_cmpuint (out->stats.bytes, ==, FILE_BYTES);
  out->mb_per_s = (double) FILE_BYTES / ((double) (out->stats.end_ns - out->stats.first_ns) / 1e9)
                  / 1e6;
  out->pids_queued = rec.n_pids;
  for (guint i = 0; i < sim_nfs_n_threads (nfs); i++)
    {
      guint64 n = sim_nfs_thread_rpcs (nfs, i);
      out->threads_used += n > 0;
      out->busiest_rpcs = MAX (out->busiest_rpcs, n);
    }
  g_assert_true (sim_page_cache_check (pc));
  g_test_message ("%s%s%s%s threads %u link %" G_GUINT64_FORMAT " raparams %d: %.2f MB/s, rpcs %"
                  G_GUINT64_FORMAT ", out of order %" G_GUINT64_FORMAT ", queued %" G_GUINT64_FORMAT
                  ", ra lost %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", stale %" G_GUINT64_FORMAT
                  ", pids %u, bios %" G_GUINT64_FORMAT " backward %" G_GUINT64_FORMAT,
                  c->sched, c->era ? "-" : "", c->era ? c->era : "",
                  c->no_idling ? " slice_idle=0" : "", c->threads,
                  c->link_bits_per_s, c->raparams, out->mb_per_s, out->stats.rpcs,
                  out->stats.out_of_order, out->stats.queued, out->stats.ra_lost,
                  out->stats.ra_copybacks, out->stats.ra_stale,
                  out->pids_queued, out->bios, out->queued_backward);
  sim_nfs_free (nfs);
  sim_page_cache_free (pc);
  sim_queue_free (q);
  sim_device_free (dev);
  sim_free (sim);
}

/* The same file read locally, sequentially, 32 KiB at a time, buffered:
 * what the disk and the server's readahead give one reader. */
static double
rig_local_mb_per_s (void)
{
  RigCase c = { .sched = "deadline" };
  Sim *sim = sim_new (1);
  SimDevice *dev;
  SimRequestQueue *q = rig_queue (sim, &c, &dev);
  SimPageCache *pc = sim_page_cache_new (sim, G_GUINT64_CONSTANT (1) << 30,
                                         SIM_RA_ERA_ONDEMAND_2_6_27);
  SimFile *file = sim_page_cache_open (pc, q, "f", FILE_OFFSET_BYTES, FILE_BYTES, READ_AHEAD_KB);
  SimProcessConfig cfg = {
    .name = "local", .op = SIM_OP_READ, .pattern = SIM_PATTERN_SEQUENTIAL,
    .bs_bytes = 32 * 1024, .iodepth = 1, .size_bytes = FILE_BYTES,
    .offset_bytes = FILE_OFFSET_BYTES, .region_bytes = FILE_BYTES, .page_cache = pc, .file = file,
  };
  SimProcess *p = sim_process_new (sim, q, &cfg);
  sim_process_start (p);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_true (p->finished);
  double mb_per_s = (double) p->bytes / ((double) (p->end_ns - p->first_issue_ns) / 1e9) / 1e6;
  sim_process_free (p);
  sim_page_cache_free (pc);
  sim_queue_free (q);
  sim_device_free (dev);
  sim_free (sim);
  return mb_per_s;
}

/* Payload bytes per second the link carries for 32 KiB READ replies. */
static double
link_payload_mb_per_s (guint64 link_bits_per_s)
{
  guint64 data = 32 * 1024;
  guint64 wire = sim_nfs_wire_bytes (sim_nfs_read_reply_bytes (data), 1500);
  return (double) link_bits_per_s / 8.0 * (double) data / (double) wire / 1e6;
}

/* ---- tests ----------------------------------------------------------------- */

/* A segment carries MTU - 52 bytes; each costs 52 + 38 bytes of headers
 * and framing; the first byte past a full segment starts another. */
static void
test_wire_bytes (void)
{
  guint64 mss = 1500 - SIM_NFS_IP_TCP_BYTES;
  guint64 per = SIM_NFS_IP_TCP_BYTES + SIM_NFS_ETH_OVERHEAD_BYTES;
  g_assert_cmpuint (sim_nfs_wire_bytes (1, 1500), ==, 1 + per);
  g_assert_cmpuint (sim_nfs_wire_bytes (mss, 1500), ==, mss + per);
  g_assert_cmpuint (sim_nfs_wire_bytes (mss + 1, 1500), ==, mss + 1 + 2 * per);
  /* A READ reply is its data plus a header, data padded to 4 bytes. */
  g_assert_cmpuint (sim_nfs_read_reply_bytes (4096), >, 4096);
  g_assert_cmpuint (sim_nfs_read_reply_bytes (4093), ==, sim_nfs_read_reply_bytes (4096));
  g_assert_cmpuint (sim_nfs_read_call_bytes (), <, mss);
}

typedef struct {
  guint64 link_bits_per_s;
  gboolean disk_bound;        /* the link is faster than the disk */
} StreamCase;

/* One nfsd thread, one client: the server streams at the slower of the
 * disk (as a local reader gets it) and the link's payload rate. */
static void
test_one_thread_streams (gconstpointer data)
{
  const StreamCase *sc = data;
  RigCase c = { .sched = "deadline", .threads = 1, .link_bits_per_s = sc->link_bits_per_s,
                .raparams = TRUE };
  RigResult r;
  rig_run_nfs (&c, &r);
  double local = rig_local_mb_per_s ();
  double link = link_payload_mb_per_s (sc->link_bits_per_s);
  g_test_message ("local %.2f MB/s, link payload %.2f MB/s", local, link);
  g_assert_cmpint (sc->disk_bound, ==, local < link);
  double bound = MIN (local, link);
  g_assert_cmpfloat (r.mb_per_s, <=, link);
  g_assert_cmpfloat (r.mb_per_s, >=, 0.9 * bound);
  /* One thread: served in the order sent, one identity at the disk. */
  g_assert_cmpuint (r.stats.out_of_order, ==, 0);
  g_assert_cmpuint (r.pids_queued, ==, 1);
  g_assert_cmpuint (r.stats.ra_lost, ==, 0);
}

/* With several threads the READs of the one sequential stream reach the
 * block layer from several identities (the elevator sees several
 * processes).  Under CFQ 2.6.28 each thread's queue waits its turn while
 * the one being served idles, so a READ that arrived later can be replied
 * to first: the stream is served out of order. */
static void
test_out_of_order (void)
{
  RigCase dl = { .sched = "deadline", .threads = 4, .link_bits_per_s = 1000000000,
                 .raparams = TRUE };
  RigResult r;
  rig_run_nfs (&dl, &r);
  g_assert_cmpuint (r.pids_queued, >=, 2);

  RigCase cfq = { .sched = "cfq", .era = "2.6.28", .threads = 8,
                  .link_bits_per_s = 1000000000, .raparams = TRUE };
  rig_run_nfs (&cfq, &r);
  g_assert_cmpuint (r.pids_queued, >=, 2);
  g_assert_cmpuint (r.stats.out_of_order, >, 0);
}

/* svc_thread_enqueue pushes an idle thread on a stack and
 * svc_xprt_enqueue wakes the top one: with one RPC slot the client never
 * has two READs out, the thread that served one is back on top before the
 * next arrives, and it serves them all (a FIFO of idle threads would
 * rotate through every thread). */
static void
test_idle_stack (void)
{
  RigCase c = { .sched = "deadline", .threads = 8, .link_bits_per_s = 1000000000,
                .raparams = TRUE, .slots = 1 };
  RigResult r;
  rig_run_nfs (&c, &r);
  g_assert_cmpuint (r.threads_used, ==, 1);
  g_assert_cmpuint (r.busiest_rpcs, ==, r.stats.rpcs);
  g_assert_cmpuint (r.stats.max_slots_used, ==, 1);

  c.slots = 0;
  rig_run_nfs (&c, &r);
  g_assert_cmpuint (r.threads_used, >, 1);
  g_assert_cmpuint (r.stats.max_slots_used, >, 1);
  g_assert_cmpuint (r.stats.max_slots_used, <=, SIM_NFS_DEFAULT_SLOTS);
}

/* Concurrent reads each start from the entry as the last finished read
 * left it, and write back over each other: progress is lost, and reads
 * start from windows that end before them.  Without the cache every read
 * starts from a fresh state, so nothing is written back or lost. */
static void
test_raparams_copyback (void)
{
  RigCase one = { .sched = "deadline", .threads = 1, .link_bits_per_s = 1000000000,
                  .raparams = TRUE };
  RigCase four = one;
  four.threads = 4;
  RigResult r1, r4;
  rig_run_nfs (&one, &r1);
  rig_run_nfs (&four, &r4);
  g_assert_cmpuint (r1.stats.ra_lost, ==, 0);
  g_assert_cmpuint (r1.stats.ra_stale, ==, 0);
  g_assert_cmpuint (r4.stats.ra_lost, >, 0);
  g_assert_cmpuint (r4.stats.ra_stale, >, 0);
  RigCase none = one;
  none.raparams = FALSE;
  RigResult r0;
  rig_run_nfs (&none, &r0);
  g_assert_cmpuint (r0.stats.ra_copybacks, ==, 0);
}

/* CFQ idles on each thread's queue for that thread's next request, while
 * the stream's next READ comes from another thread: adding threads takes
 * throughput away.  2.6.31's close-cooperator check finds another queue
 * only if that thread has already queued a request near the head, which
 * the nfsd threads waiting on the same readahead pages often have not.
 * Without idling (slice_idle = 0) the loss is smaller: idling is the
 * cause. */
static void
test_cfq_idling_more_threads_slower (gconstpointer data)
{
  const char *era = data;
  RigCase one = { .sched = "cfq", .era = era, .threads = 1,
                  .link_bits_per_s = 1000000000, .raparams = TRUE };
  RigCase four = one;
  four.threads = 4;
  RigCase four_no_idle = four;
  four_no_idle.no_idling = TRUE;
  RigResult r1, r4, r4n;
  rig_run_nfs (&one, &r1);
  rig_run_nfs (&four, &r4);
  rig_run_nfs (&four_no_idle, &r4n);
  g_assert_cmpfloat (r4.mb_per_s, <, r1.mb_per_s);
  g_assert_cmpfloat (r4n.mb_per_s, >, r4.mb_per_s);
}

/* A thread reads a READ through its own readahead windows, two of 128 KiB
 * in flight.  READs of 256 KiB: the threads' windows abut and deadline
 * queues the bios of two threads in file order, as fast as one thread.
 * READs of 1 MiB: each thread's windows lie in its own megabyte, bios
 * arrive out of file order and the disk alternates between megabytes:
 * two threads are slower than one. */
static void
test_large_reads_interleave (void)
{
  RigCase one = { .sched = "deadline", .threads = 1, .link_bits_per_s = 1000000000,
                  .raparams = TRUE, .rsize_bytes = 1024 * 1024 };
  RigCase two = one;
  two.threads = 2;
  RigCase two_abut = two;
  two_abut.rsize_bytes = 256 * 1024;
  RigResult r1, r2, r2a;
  rig_run_nfs (&one, &r1);
  rig_run_nfs (&two, &r2);
  rig_run_nfs (&two_abut, &r2a);
  g_assert_cmpuint (r1.queued_backward, ==, 0);
  g_assert_cmpuint (r2a.pids_queued, ==, 2);
  g_assert_cmpuint (r2a.queued_backward, ==, 0);
  g_assert_cmpfloat (r2a.mb_per_s, >, 0.95 * r1.mb_per_s);
  g_assert_cmpuint (r2.pids_queued, ==, 2);
  g_assert_cmpuint (r2.queued_backward * 10, >, r2.bios);
  g_assert_cmpfloat (r2.mb_per_s, <, 0.8 * r1.mb_per_s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  static const StreamCase gigabit = { 1000000000, TRUE };
  static const StreamCase fast_ethernet = { 100000000, FALSE };
  g_test_add_func ("/nfs/wire-bytes", test_wire_bytes);
  g_test_add_data_func ("/nfs/one-thread/gigabit", &gigabit, test_one_thread_streams);
  g_test_add_data_func ("/nfs/one-thread/100mbit", &fast_ethernet, test_one_thread_streams);
  g_test_add_func ("/nfs/out-of-order", test_out_of_order);
  g_test_add_func ("/nfs/idle-stack", test_idle_stack);
  g_test_add_func ("/nfs/raparams-copyback", test_raparams_copyback);
  g_test_add_func ("/nfs/large-reads-interleave", test_large_reads_interleave);
  g_test_add_data_func ("/nfs/cfq-idling/2.6.28", "2.6.28", test_cfq_idling_more_threads_slower);
  g_test_add_data_func ("/nfs/cfq-idling/2.6.31", "2.6.31", test_cfq_idling_more_threads_slower);
  return g_test_run ();
}
