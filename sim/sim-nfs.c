/* sim-nfs.c — an NFS client, its link and an nfsd thread pool (see
 * sim-nfs.h).  Sources read: Linux 2.6.27 fs/nfsd/vfs.c (nfsd_read,
 * nfsd_vfs_read, nfsd_get_raparms), net/sunrpc/svc_xprt.c
 * (svc_xprt_enqueue, svc_thread_enqueue, svc_recv), net/sunrpc/svcsock.c
 * (svc_tcp_recvfrom: svc_xprt_received once a record is read),
 * net/sunrpc/xprtsock.c and include/linux/sunrpc/xprt.h (slot table),
 * fs/nfs/read.c and fs/nfs/client.c (rsize pages, ra_pages); message sizes
 * from RFC 5531 (RPC, AUTH_UNIX) and RFC 1813 (READ3args, READ3resok).
 *
 * Steady state allocates nothing: RPCs come from a free list grown in
 * chunks, threads and the client's page states are allocated at setup.
 */
#include "sim/sim-nfs.h"

#include <string.h>

/* ---- message sizes ------------------------------------------------------ */

/* RPC record marker (RFC 5531 §11). */
#define RECORD_MARK_BYTES   4u
/* Call header: xid, msg_type, rpcvers, prog, vers, proc. */
#define CALL_HDR_BYTES      24u
/* AUTH_UNIX credential: flavor, length, stamp, an 8-byte machine name with
 * its length, uid, gid, no supplementary gids; then a null verifier. */
#define CALL_CRED_BYTES     (8u + 4u + 4u + 8u + 4u + 4u + 4u)
#define NULL_VERF_BYTES     8u
/* READ3args: nfs_fh3 (length + 32 bytes, a knfsd v3 handle), offset, count. */
#define READ_ARGS_BYTES     (4u + 32u + 8u + 4u)
/* Accepted reply: xid, msg_type, reply_stat, null verifier, accept_stat. */
#define REPLY_HDR_BYTES     (12u + NULL_VERF_BYTES + 4u)
/* READ3resok: status, post_op_attr (follows + fattr3 of 84), count, eof,
 * data length; the data padded to 4. */
#define READ_RES_BYTES      (4u + 4u + 84u + 4u + 4u + 4u)

guint64
sim_nfs_read_call_bytes (void)
{
  return RECORD_MARK_BYTES + CALL_HDR_BYTES + CALL_CRED_BYTES + NULL_VERF_BYTES
         + READ_ARGS_BYTES;
}

guint64
sim_nfs_read_reply_bytes (guint64 data_bytes)
{
  return RECORD_MARK_BYTES + REPLY_HDR_BYTES + READ_RES_BYTES + (data_bytes + 3) / 4 * 4;
}

guint64
sim_nfs_wire_bytes (guint64 payload_bytes, guint mtu_bytes)
{
  g_assert (mtu_bytes > SIM_NFS_IP_TCP_BYTES);
  guint64 mss = mtu_bytes - SIM_NFS_IP_TCP_BYTES;
  guint64 segments = MAX (G_GUINT64_CONSTANT (1), (payload_bytes + mss - 1) / mss);
  return payload_bytes + segments * (SIM_NFS_IP_TCP_BYTES + SIM_NFS_ETH_OVERHEAD_BYTES);
}

/* ---- state -------------------------------------------------------------- */

/* Per client page: an RPC asked for it, its data arrived, PG_readahead. */
enum {
  PG_REQUESTED = 1u << 0,
  PG_UPTODATE  = 1u << 1,
  PG_MARKER    = 1u << 2,
  /* bits 3-6: the marker's folio order (sim_ra_window_folio_order) */
  PG_ORDER_SHIFT = 3,
};

typedef struct _NfsRpc NfsRpc;
struct _NfsRpc {
  SimList  link;              /* client backlog, or the server's socket */
  NfsRpc  *next_free;
  guint64  index;             /* first page */
  guint64  pages;
  SimTime  slot_ns;           /* when it got its slot */
};

#define RPC_CHUNK 64

typedef struct {
  SimTime busy_until_ns;      /* the last queued bit leaves then */
} NfsLink;

typedef struct {
  SimNfs      *nfs;
  guint        index;
  char        *name;
  SimIoContext ioc;
  SimThread    thread;
  SimList      idle_link;     /* on the pool's idle stack */
  NfsRpc      *rpc;           /* being served */
  SimRaState   f_ra;          /* its struct file's readahead state */
  guint64      ra_gen_taken;  /* raparms generation when it took its copy */
  SimPageRead  rd;
  SimThreadFn  after_cpu;     /* no CPU model: what follows the CPU time */
  guint64      rpcs;
} NfsThread;

struct _SimNfs {
  Sim          *sim;
  SimPageCache *pc;
  SimFile      *file;
  SimCpus      *cpus;
  SimNfsConfig  cfg;
  char         *name;
  SimNfsStats   stats;

  /* client */
  guint64       file_pages;
  guint64       rsize_pages;
  guint64       read_pages;
  guint8       *page_state;
  SimRaState    ra;
  guint64       dd_index;     /* next page the reader needs */
  guint64       dd_read_start;
  guint64       dd_read_end;  /* end of the current read() */
  gboolean      dd_waiting;
  SimList       backlog;      /* NfsRpc waiting for a slot */
  guint         slots_used;
  NfsRpc       *rpc_free;
  GPtrArray    *rpc_chunks;

  /* link: client to server, server to client */
  NfsLink       up;
  NfsLink       down;

  /* server */
  NfsThread    *threads;
  SimList       idle;         /* NfsThread.idle_link; the head is woken first */
  SimList       socket;       /* NfsRpc received, not yet read by a thread */
  gboolean      xprt_busy;    /* XPT_BUSY: a thread owns the transport */
  gboolean      xprt_queued;  /* on the pool's sp_sockets, no thread free */
  SimRaState    p_ra;         /* the raparms entry of the file */
  gboolean      p_set;
  guint64       p_gen;        /* write-backs so far */
  gboolean      replied_any;
  guint64       replied_max_index; /* furthest READ replied to so far */
};

static void client_continue (SimNfs *nfs);
static void xprt_enqueue (SimNfs *nfs);
static void thread_recv (SimThread *t, gpointer data);

/* ---- RPCs ---------------------------------------------------------------- */

static NfsRpc *
rpc_alloc (SimNfs *nfs)
{
  if (nfs->rpc_free == NULL)
    {
      NfsRpc *chunk = g_new0 (NfsRpc, RPC_CHUNK);
      g_ptr_array_add (nfs->rpc_chunks, chunk);
      for (guint i = 0; i < RPC_CHUNK; i++)
        {
          chunk[i].next_free = nfs->rpc_free;
          nfs->rpc_free = &chunk[i];
        }
    }
  NfsRpc *rpc = nfs->rpc_free;
  nfs->rpc_free = rpc->next_free;
  memset (rpc, 0, sizeof *rpc);
  sim_list_init (&rpc->link);
  return rpc;
}

static void
rpc_release (SimNfs *nfs, NfsRpc *rpc)
{
  rpc->next_free = nfs->rpc_free;
  nfs->rpc_free = rpc;
}

/* ---- the link ------------------------------------------------------------ */

/* Queue @payload_bytes on @link; @fn(@nfs, @rpc) runs when the message has
 * arrived at the far end.  Messages leave in the order they were queued. */
static void
link_send (SimNfs *nfs, NfsLink *link, guint64 payload_bytes, SimEventFunc fn, NfsRpc *rpc)
{
  SimTime now = sim_now (nfs->sim);
  guint64 wire = sim_nfs_wire_bytes (payload_bytes, nfs->cfg.mtu_bytes);
  SimTime tx_ns = (SimTime) ((wire * 8 * (guint64) SIM_NS_PER_S + nfs->cfg.link_bits_per_s - 1)
                             / nfs->cfg.link_bits_per_s);
  SimTime start = MAX (now, link->busy_until_ns);
  link->busy_until_ns = start + tx_ns;
  sim_schedule_at (nfs->sim, link->busy_until_ns + nfs->cfg.one_way_ns, fn, nfs, rpc);
}

/* ---- client: slots and readahead ----------------------------------------- */

static void
reply_arrived (Sim *sim, gpointer subject, gpointer object)
{
  SimNfs *nfs = subject;
  NfsRpc *rpc = object;
  for (guint64 i = rpc->index; i < rpc->index + rpc->pages; i++)
    nfs->page_state[i] |= PG_UPTODATE;
  nfs->stats.rpcs++;
  sim_hist_add (&nfs->stats.rpc_latency, sim_now (sim) - rpc->slot_ns);
  g_assert (nfs->slots_used > 0);
  nfs->slots_used--;
  rpc_release (nfs, rpc);
  client_continue (nfs);
}

static void
call_arrived (Sim *sim, gpointer subject, gpointer object)
{
  SimNfs *nfs = subject;
  NfsRpc *rpc = object;
  sim_list_add_tail (&rpc->link, &nfs->socket);
  xprt_enqueue (nfs);
}

/* xprt_reserve: RPCs take free slots in the order they were made, and are
 * transmitted one after another. */
static void
client_kick (SimNfs *nfs)
{
  while (nfs->slots_used < nfs->cfg.slots && !sim_list_empty (&nfs->backlog))
    {
      NfsRpc *rpc = sim_list_first_entry (&nfs->backlog, NfsRpc, link);
      sim_list_del (&rpc->link);
      nfs->slots_used++;
      nfs->stats.max_slots_used = MAX (nfs->stats.max_slots_used, nfs->slots_used);
      rpc->slot_ns = sim_now (nfs->sim);
      link_send (nfs, &nfs->up, sim_nfs_read_call_bytes (), call_arrived, rpc);
    }
}

static void
client_queue_rpc (SimNfs *nfs, guint64 start, guint64 pages)
{
  NfsRpc *rpc = rpc_alloc (nfs);
  rpc->index = start;
  rpc->pages = pages;
  sim_list_add_tail (&rpc->link, &nfs->backlog);
}

/* nfs_readpages: the window's pages not yet asked for, in READs of at most
 * rsize contiguous bytes. */
static void
client_issue_window (SimNfs *nfs, const SimRaWindow *w)
{
  guint64 end = MIN (w->start + w->nr_pages, nfs->file_pages);
  guint64 run_start = 0, run_len = 0;
  for (guint64 i = w->start; i < end; i++)
    {
      if (nfs->page_state[i] & PG_REQUESTED)
        {
          if (run_len)
            client_queue_rpc (nfs, run_start, run_len);
          run_len = 0;
          continue;
        }
      nfs->page_state[i] |= PG_REQUESTED;
      if (i == w->marker)
        nfs->page_state[i] |= PG_MARKER
                              | (guint8) (sim_ra_window_folio_order (w, i) << PG_ORDER_SHIFT);
      if (run_len == 0)
        run_start = i;
      if (++run_len == nfs->rsize_pages)
        {
          client_queue_rpc (nfs, run_start, run_len);
          run_len = 0;
        }
    }
  if (run_len)
    client_queue_rpc (nfs, run_start, run_len);
}

/* The reader's do_generic_file_read over the client's page cache, from
 * dd_index on, until it waits for a page or has read the file. */
static void
client_read_pages (SimNfs *nfs)
{
  while (nfs->dd_index < nfs->file_pages)
    {
      if (nfs->dd_index == nfs->dd_read_end)
        {
          /* read() returned (none before the first). */
          if (nfs->dd_read_end > nfs->dd_read_start)
            sim_ra_read_done (&nfs->ra, nfs->dd_read_start,
                              nfs->dd_read_end - nfs->dd_read_start);
          nfs->stats.bytes = MIN (nfs->cfg.file_bytes, nfs->dd_read_end * SIM_PAGE_BYTES);
          nfs->dd_read_start = nfs->dd_index;
          nfs->dd_read_end = MIN (nfs->dd_index + nfs->read_pages, nfs->file_pages);
        }
      guint64 index = nfs->dd_index;
      guint64 left = nfs->dd_read_end - index;
      SimRaWindow w;
      if (!(nfs->page_state[index] & PG_REQUESTED))
        {
          if (sim_ra_sync (&nfs->ra, index, left, &w))
            client_issue_window (nfs, &w);
          if (!(nfs->page_state[index] & PG_REQUESTED))
            {
              /* No readahead: readpage asks for this page alone. */
              nfs->page_state[index] |= PG_REQUESTED;
              client_queue_rpc (nfs, index, 1);
            }
        }
      if (nfs->page_state[index] & PG_MARKER)
        {
          guint order = (nfs->page_state[index] >> PG_ORDER_SHIFT) & 0xfu;
          nfs->page_state[index] &= (guint8) ~(PG_MARKER | (0xfu << PG_ORDER_SHIFT));
          if (sim_ra_async (&nfs->ra, index, left, order, &w))
            client_issue_window (nfs, &w);
        }
      if (!(nfs->page_state[index] & PG_UPTODATE))
        {
          nfs->dd_waiting = TRUE;
          return;
        }
      nfs->dd_index++;
    }
  if (!nfs->stats.done)
    {
      sim_ra_read_done (&nfs->ra, nfs->dd_read_start, nfs->dd_read_end - nfs->dd_read_start);
      nfs->stats.bytes = nfs->cfg.file_bytes;
      nfs->stats.end_ns = sim_now (nfs->sim);
      nfs->stats.done = TRUE;
    }
}

static void
client_continue (SimNfs *nfs)
{
  if (nfs->dd_waiting && (nfs->page_state[nfs->dd_index] & PG_UPTODATE))
    {
      nfs->dd_waiting = FALSE;
      client_read_pages (nfs);
    }
  client_kick (nfs);
}

static void
client_start (Sim *sim, gpointer subject, gpointer object)
{
  SimNfs *nfs = subject;
  nfs->stats.first_ns = sim_now (sim);
  nfs->dd_read_start = nfs->dd_read_end = 0;
  client_read_pages (nfs);
  client_kick (nfs);
}

/* The client's page cache as readahead probes it: a page an RPC asked for
 * is in the cache (locked until its reply arrives). */
static gboolean
client_cached (guint64 index, gpointer data)
{
  SimNfs *nfs = data;
  return index < nfs->file_pages && (nfs->page_state[index] & PG_REQUESTED);
}

/* ---- server threads: CPU ---------------------------------------------------- */

static void
cpu_done_fired (Sim *sim, gpointer subject, gpointer object)
{
  NfsThread *th = subject;
  th->after_cpu (NULL, th);
}

/* Spend @work_ns of system time on the thread's CPU, then @then. */
static void
thread_cpu (NfsThread *th, SimTime work_ns, SimThreadFn then)
{
  SimNfs *nfs = th->nfs;
  if (nfs->cpus)
    {
      sim_cpu_exec (nfs->cpus, &th->thread, work_ns, SIM_CPU_SYS, then, th);
      return;
    }
  th->after_cpu = then;
  sim_schedule_in (nfs->sim, work_ns, cpu_done_fired, th, NULL);
}

static void
thread_sleep (NfsThread *th, gboolean io_wait)
{
  if (th->nfs->cpus)
    sim_thread_block (th->nfs->cpus, &th->thread, io_wait);
}

static void
thread_wake (NfsThread *th, SimThreadFn then)
{
  SimNfs *nfs = th->nfs;
  if (nfs->cpus)
    sim_thread_wake (nfs->cpus, &th->thread, then, th);
  else
    {
      th->after_cpu = then;
      sim_schedule_in (nfs->sim, 0, cpu_done_fired, th, NULL);
    }
}

/* ---- server: transport and dispatch ------------------------------------------ */

/* svc_xprt_enqueue: data waits and no thread owns the transport; the
 * thread on top of the idle stack gets it, or the transport waits for the
 * next thread to finish. */
static void
xprt_enqueue (SimNfs *nfs)
{
  if (nfs->xprt_busy || sim_list_empty (&nfs->socket))
    return;
  nfs->xprt_busy = TRUE;
  if (sim_list_empty (&nfs->idle))
    {
      nfs->xprt_queued = TRUE;
      nfs->stats.queued++;
      return;
    }
  NfsThread *th = sim_list_first_entry (&nfs->idle, NfsThread, idle_link);
  sim_list_del (&th->idle_link);
  thread_wake (th, thread_recv);
}

static void thread_served (SimThread *t, gpointer data);

/* svc_recv, on the thread's CPU: take the transport if it waits for a
 * thread, else go on the idle stack (svc_thread_enqueue) and sleep. */
static void
thread_next (NfsThread *th)
{
  SimNfs *nfs = th->nfs;
  if (nfs->xprt_queued)
    {
      nfs->xprt_queued = FALSE;
      thread_recv (&th->thread, th);
      return;
    }
  sim_list_add (&th->idle_link, &nfs->idle);
  thread_sleep (th, FALSE);
}

static void thread_received (SimThread *t, gpointer data);

/* The thread owns the transport: it reads one record off the socket. */
static void
thread_recv (SimThread *t, gpointer data)
{
  NfsThread *th = data;
  thread_cpu (th, th->nfs->cfg.cpu_recv_ns, thread_received);
}

static void thread_decoded (SimThread *t, gpointer data);

/* svc_xprt_received: the record is in; the transport is free for the
 * next idle thread while this one serves the call. */
static void
thread_received (SimThread *t, gpointer data)
{
  NfsThread *th = data;
  SimNfs *nfs = th->nfs;
  g_assert (nfs->xprt_busy && !sim_list_empty (&nfs->socket));
  th->rpc = sim_list_first_entry (&nfs->socket, NfsRpc, link);
  sim_list_del (&th->rpc->link);
  nfs->xprt_busy = FALSE;
  xprt_enqueue (nfs);
  thread_cpu (th, nfs->cfg.cpu_rpc_ns, thread_decoded);
}

static void
read_done (Sim *sim, SimPageRead *rd, SimTime now)
{
  NfsThread *th = rd->done_data;
  thread_wake (th, thread_served);
}

/* nfsd_read: a new struct file, its f_ra from the raparms entry, the read
 * through the page cache. */
static void
thread_decoded (SimThread *t, gpointer data)
{
  NfsThread *th = data;
  SimNfs *nfs = th->nfs;
  NfsRpc *rpc = th->rpc;
  if (nfs->cfg.raparams && nfs->p_set)
    th->f_ra = nfs->p_ra;
  else
    sim_page_cache_ra_init (nfs->pc, nfs->file, &th->f_ra);
  th->ra_gen_taken = nfs->p_gen;
  /* The copy's last window ends before this read: the entry lags the
   * stream (a sequential reader's window always reaches its next read). */
  if (nfs->p_set && th->f_ra.start + th->f_ra.size < rpc->index)
    nfs->stats.ra_stale++;
  nfs->stats.served++;
  th->rpcs++;
  th->rd.file = nfs->file;
  th->rd.ra = &th->f_ra;
  th->rd.ioc = &th->ioc;
  th->rd.offset_bytes = rpc->index * SIM_PAGE_BYTES;
  th->rd.bytes = MIN (rpc->pages * SIM_PAGE_BYTES,
                      nfs->file->size_bytes - rpc->index * SIM_PAGE_BYTES);
  th->rd.done = read_done;
  th->rd.done_data = th;
  sim_page_cache_read (nfs->pc, &th->rd);
  thread_sleep (th, TRUE);
}

static void thread_encoded (SimThread *t, gpointer data);

/* The read returned: write f_ra back over the entry (whatever other
 * threads wrote there meanwhile is lost), then encode the reply. */
static void
thread_served (SimThread *t, gpointer data)
{
  NfsThread *th = data;
  SimNfs *nfs = th->nfs;
  if (nfs->cfg.raparams)
    {
      if (nfs->p_gen != th->ra_gen_taken)
        nfs->stats.ra_lost++;
      nfs->p_ra = th->f_ra;
      nfs->p_set = TRUE;
      nfs->p_gen++;
      nfs->stats.ra_copybacks++;
    }
  thread_cpu (th, nfs->cfg.cpu_page_ns * (SimTime) th->rpc->pages, thread_encoded);
}

/* svc_send: the reply goes out on the link; the thread looks for work. */
static void
thread_encoded (SimThread *t, gpointer data)
{
  NfsThread *th = data;
  SimNfs *nfs = th->nfs;
  NfsRpc *rpc = th->rpc;
  th->rpc = NULL;
  guint64 data_bytes = MIN (rpc->pages * SIM_PAGE_BYTES,
                            nfs->cfg.file_bytes - rpc->index * SIM_PAGE_BYTES);
  if (nfs->replied_any && rpc->index < nfs->replied_max_index)
    nfs->stats.out_of_order++;
  nfs->replied_any = TRUE;
  nfs->replied_max_index = MAX (nfs->replied_max_index, rpc->index);
  link_send (nfs, &nfs->down, sim_nfs_read_reply_bytes (data_bytes), reply_arrived, rpc);
  thread_next (th);
}

static void
thread_start (SimThread *t, gpointer data)
{
  thread_next (data);
}

/* ---- setup ------------------------------------------------------------------- */

SimNfs *
sim_nfs_new (Sim *sim, SimPageCache *pc, SimFile *file, SimCpus *cpus, const SimNfsConfig *cfg)
{
  g_return_val_if_fail (cfg->threads >= 1 && cfg->slots >= 1, NULL);
  g_return_val_if_fail (cfg->rsize_bytes >= SIM_PAGE_BYTES && cfg->read_bytes > 0, NULL);
  g_return_val_if_fail (cfg->link_bits_per_s > 0 && cfg->mtu_bytes > SIM_NFS_IP_TCP_BYTES, NULL);
  g_return_val_if_fail (cfg->file_bytes > 0 && cfg->file_bytes <= file->size_bytes, NULL);
  SimNfs *nfs = g_new0 (SimNfs, 1);
  nfs->sim = sim;
  nfs->pc = pc;
  nfs->file = file;
  nfs->cpus = cpus;
  nfs->cfg = *cfg;
  nfs->name = g_strdup (cfg->name ? cfg->name : "nfs");
  nfs->cfg.name = nfs->name;
  sim_hist_init (&nfs->stats.rpc_latency);

  nfs->file_pages = (cfg->file_bytes + SIM_PAGE_BYTES - 1) / SIM_PAGE_BYTES;
  nfs->rsize_pages = cfg->rsize_bytes / SIM_PAGE_BYTES;
  nfs->read_pages = MAX (G_GUINT64_CONSTANT (1),
                         (cfg->read_bytes + SIM_PAGE_BYTES - 1) / SIM_PAGE_BYTES);
  nfs->page_state = g_new0 (guint8, nfs->file_pages);
  guint64 ra_pages = cfg->client_ra_pages ? cfg->client_ra_pages
                                          : nfs->rsize_pages * SIM_NFS_MAX_READAHEAD_RPCS;
  sim_ra_init (&nfs->ra, sim_page_cache_era (pc), ra_pages);
  sim_ra_set_file_pages (&nfs->ra, nfs->file_pages);
  sim_ra_set_cache_probe (&nfs->ra, client_cached, nfs);
  sim_list_init (&nfs->backlog);
  nfs->rpc_chunks = g_ptr_array_new_with_free_func (g_free);

  sim_list_init (&nfs->idle);
  sim_list_init (&nfs->socket);
  sim_page_cache_ra_init (pc, file, &nfs->p_ra);
  nfs->threads = g_new0 (NfsThread, cfg->threads);
  for (guint i = 0; i < cfg->threads; i++)
    {
      NfsThread *th = &nfs->threads[i];
      th->nfs = nfs;
      th->index = i;
      th->name = g_strdup_printf ("%s.nfsd%u", nfs->name, i);
      th->ioc.pid = sim_next_pid (sim);
      th->ioc.comm = th->name;
      th->ioc.nr_tasks = 1;
      sim_list_init (&th->idle_link);
      sim_list_init (&th->rd.wait_link);
      if (cpus)
        {
          sim_thread_init (cpus, &th->thread, th->name);
          sim_thread_set_kernel (&th->thread, TRUE);   /* nfsd is a kernel thread */
        }
    }
  return nfs;
}

void
sim_nfs_free (SimNfs *nfs)
{
  if (nfs == NULL)
    return;
  for (guint i = 0; i < nfs->cfg.threads; i++)
    g_free (nfs->threads[i].name);
  g_free (nfs->threads);
  g_free (nfs->page_state);
  g_ptr_array_unref (nfs->rpc_chunks);
  sim_hist_clear (&nfs->stats.rpc_latency);
  g_free (nfs->name);
  g_free (nfs);
}

/* The threads start in index order, so the last started tops the idle
 * stack, as rpc.nfsd's threads do after their first svc_recv. */
void
sim_nfs_start (SimNfs *nfs)
{
  for (guint i = 0; i < nfs->cfg.threads; i++)
    thread_wake (&nfs->threads[i], thread_start);
  sim_schedule_at (nfs->sim, MAX (nfs->cfg.start_ns, sim_now (nfs->sim)), client_start, nfs,
                   NULL);
}

const SimNfsStats *
sim_nfs_stats (const SimNfs *nfs)
{
  return &nfs->stats;
}

const char *
sim_nfs_name (const SimNfs *nfs)
{
  return nfs->name;
}

guint
sim_nfs_n_threads (const SimNfs *nfs)
{
  return nfs->cfg.threads;
}

guint64
sim_nfs_rsize_bytes (const SimNfs *nfs)
{
  return nfs->cfg.rsize_bytes;
}

const SimIoContext *
sim_nfs_thread_ioc (const SimNfs *nfs, guint i)
{
  g_return_val_if_fail (i < nfs->cfg.threads, NULL);
  return &nfs->threads[i].ioc;
}

guint64
sim_nfs_thread_rpcs (const SimNfs *nfs, guint i)
{
  g_return_val_if_fail (i < nfs->cfg.threads, 0);
  return nfs->threads[i].rpcs;
}
