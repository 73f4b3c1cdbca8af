/* sim-nfs.h — one NFSv3-over-TCP client reading a file from a server's
 * nfsd threads: the client's readahead and RPC slot table, a full-duplex
 * link, the server's transport queue and idle-thread stack, each thread's
 * CPU, nfsd's readahead-parameter cache and the server's page cache.
 *
 * Follows Linux 2.6.27:
 *   - client (fs/nfs/read.c, fs/nfs/client.c, net/sunrpc/xprt.c): a
 *     sequential reader (dd) reads through the client's page cache; its
 *     on-demand readahead (bdi ra_pages = rpages * NFS_MAX_READAHEAD, 15)
 *     turns windows into READ RPCs of at most rsize contiguous bytes
 *     (nfs_pageio coalescing); an RPC needs a slot of the transport's
 *     table (xprt_tcp_slot_table_entries, RPC_DEF_SLOT_TABLE = 16) and
 *     waits FIFO for one (xprt->backlog).
 *   - link: each direction serialises its messages at the link's bit rate
 *     (TCP segments of MTU - 52 payload bytes, each with 52 bytes of
 *     IPv4 + TCP-with-timestamps headers and 38 bytes of Ethernet framing:
 *     preamble + SFD 8, header 14, FCS 4, inter-frame gap 12); a message
 *     arrives one-way latency after its last bit left.  No TCP windowing,
 *     ACK traffic, loss or Nagle.
 *   - server (net/sunrpc/svc_xprt.c): arriving data queues on the one TCP
 *     transport; svc_xprt_enqueue marks it busy and wakes the thread on top
 *     of the pool's idle stack (svc_thread_enqueue: list_add, "a stack
 *     rather than a queue"), or queues the transport for the next thread
 *     that finishes.  The woken thread reads one RPC record and releases
 *     the transport (svc_xprt_received), which wakes the next idle thread
 *     if more data waits; so one client's stream spreads over threads.
 *   - nfsd_read (fs/nfsd/vfs.c): every READ opens a new struct file; its
 *     f_ra is copied from the raparms entry of (dev, ino) when one is set
 *     (nfsd_get_raparms), the read runs through the page cache with that
 *     copy (splice, no data copy), and the copy is written back over the
 *     entry when the read returns.  Threads reading at once each start
 *     from the entry as the last finished read left it, and the last to
 *     finish overwrites the others' progress: that is the mechanism.
 *   - each thread spends CPU per RPC (receive, then decode/open/encode)
 *     and per page of reply on the host's CPUs (sim-cpu.h) if given, or
 *     on a CPU of its own.
 * Not modelled: UDP, NFSv4, WRITE, the client's dd CPU time and page
 * reclaim, TCP congestion and receive windows, the raparms hash's LRU
 * eviction (one file: its entry is always found).  The mount's rsize is
 * the caller's (models/scenario-nfs.h negotiates the default).
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-cpu.h"
#include "sim/sim-pagecache.h"
#include "sim/sim-stats.h"

G_BEGIN_DECLS

typedef struct _SimNfs SimNfs;

/* RPC_DEF_SLOT_TABLE (include/linux/sunrpc/xprt.h, 2.6.27). */
#define SIM_NFS_DEFAULT_SLOTS        16u
/* NFS_MAX_READAHEAD = RPC_DEF_SLOT_TABLE - 1 (fs/nfs/internal.h). */
#define SIM_NFS_MAX_READAHEAD_RPCS   15u
/* Ethernet per frame: preamble + SFD 8, MAC header 14, FCS 4, IFG 12. */
#define SIM_NFS_ETH_OVERHEAD_BYTES   38u
/* IPv4 header 20 + TCP header 20 + timestamp option 12 (tcp_timestamps=1). */
#define SIM_NFS_IP_TCP_BYTES         52u

typedef struct {
  const char *name;
  guint    threads;           /* nfsd threads (rpc.nfsd N) */
  guint64  file_bytes;        /* the file the client reads whole */
  guint64  rsize_bytes;       /* mount's rsize: bytes per READ */
  guint64  read_bytes;        /* the reader's read() size (dd bs) */
  guint    slots;             /* RPC slot table entries */
  guint64  client_ra_pages;   /* 0: rsize pages x SIM_NFS_MAX_READAHEAD_RPCS */
  guint64  link_bits_per_s;
  SimTime  one_way_ns;        /* half the round-trip time */
  guint    mtu_bytes;
  SimTime  cpu_recv_ns;       /* per RPC, transport held: svc_recv */
  SimTime  cpu_rpc_ns;        /* per RPC: decode, open, attributes, encode, send */
  SimTime  cpu_page_ns;       /* per page of reply data */
  gboolean raparams;          /* nfsd's readahead-parameter cache; FALSE: a
                               * fresh f_ra every READ */
  SimTime  start_ns;
} SimNfsConfig;

typedef struct {
  guint64 rpcs;               /* READ replies the client received */
  guint64 bytes;              /* bytes the reader has read */
  SimTime first_ns;           /* the reader's start */
  SimTime end_ns;             /* its last byte (done) */
  gboolean done;
  guint64 served;             /* nfsd_read calls begun */
  guint64 out_of_order;       /* replies sent for an offset below one replied to before */
  guint64 queued;             /* times a READ waited on the transport for a
                               * thread (svc_xprt_enqueue found none idle) */
  guint64 ra_copybacks;       /* raparms write-backs */
  guint64 ra_lost;            /* write-backs over another thread's write-back
                               * made after this read took its copy */
  guint64 ra_stale;           /* reads whose copied f_ra window ended before
                               * their first page */
  guint   max_slots_used;
  SimHist rpc_latency;        /* slot taken to reply received */
} SimNfsStats;

/* A server reading @file through @pc (both borrowed), its threads on
 * @cpus (borrowed; NULL: a CPU each). */
SimNfs            *sim_nfs_new (Sim *sim, SimPageCache *pc, SimFile *file, SimCpus *cpus,
                                const SimNfsConfig *cfg);
void               sim_nfs_free (SimNfs *nfs);
void               sim_nfs_start (SimNfs *nfs);
const SimNfsStats *sim_nfs_stats (const SimNfs *nfs);
const char        *sim_nfs_name (const SimNfs *nfs);
guint              sim_nfs_n_threads (const SimNfs *nfs);
/* The mount's rsize: bytes per READ. */
guint64            sim_nfs_rsize_bytes (const SimNfs *nfs);
/* Thread @i's identity as the elevators see it, and READs it served. */
const SimIoContext *sim_nfs_thread_ioc (const SimNfs *nfs, guint i);
guint64            sim_nfs_thread_rpcs (const SimNfs *nfs, guint i);
/* Bytes on the wire for a TCP message of @payload_bytes at @mtu_bytes. */
guint64            sim_nfs_wire_bytes (guint64 payload_bytes, guint mtu_bytes);
/* Bytes of a READ call, and of a READ reply carrying @data_bytes. */
guint64            sim_nfs_read_call_bytes (void);
guint64            sim_nfs_read_reply_bytes (guint64 data_bytes);

G_END_DECLS
