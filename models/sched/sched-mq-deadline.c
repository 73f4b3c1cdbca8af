/* sched-mq-deadline.c — the blk-mq deadline scheduler, Linux 6.18 rules
 * (block/mq-deadline.c; ../shared/reference/kernel-algorithms.md §5.1).
 *
 *  - three priority levels (RT, BE, IDLE from the process's I/O priority
 *    class; "none" is BE), each with a sector-sorted tree and a FIFO per
 *    direction and the sector of its last dispatched request per direction
 *    (latest_pos); batching, starved and the batch direction are shared;
 *  - a request's deadline is now + read_expire / write_expire in jiffies;
 *    it has expired once jiffies >= deadline (6.18; 2.6 deadline used >);
 *  - dispatch, one request per call: first "aging": when two or more levels
 *    own requests (queued or in the driver), BE then IDLE are tried with
 *    only requests that entered more than prio_aging_expire ago; otherwise
 *    the levels are tried RT, BE, IDLE, stopping at the first that owns any
 *    request even when it returned none;
 *  - within a level: continue the batch in the last direction from the first
 *    request at or above latest_pos while batching < fifo_batch; else pick a
 *    direction (reads, unless writes waited writes_starved read batches),
 *    and start from the FIFO head when it expired or nothing lies above
 *    latest_pos, else from latest_pos;
 *  - requests of different I/O priorities never merge (5.17+);
 *  - async_depth: writes may hold at most async_depth scheduler tags (sync
 *    reads are never limited).  6.18 sets it to nr_requests, which leaves
 *    the limit idle; older kernels used 3/4 of nr_requests.  Modelled as in
 *    sched-mq.h (a write without a tag waits outside the scheduler); the
 *    tunable's 0 means "nr_requests" of the simulated queue.
 * Not modelled: the head-insert dispatch list (requeues, flushes and
 * passthrough requests do not exist in the simulator); zoned writes.
 *
 * --trace-sched: "batch_start dir=read|write prio=rt|be|idle sector=N
 * expired=0|1 starved=N", "prio_aged prio=be|idle dir=.. sector=N
 * waited_ms=N" (a request served by aging), "tag_wait sector=N held=N"
 * (a write waits for a shallow tag).
 */
#include "models/sched/sched.h"
#include "models/sched/sched-mq.h"

#include <limits.h>

enum {
  DD_RT_PRIO,
  DD_BE_PRIO,
  DD_IDLE_PRIO,
  DD_PRIO_COUNT,
};

static const char *const dd_prio_names[DD_PRIO_COUNT] = { "rt", "be", "idle" };

typedef struct {
  SimRbTree sort_list[SIM_N_OPS];
  SimList   fifo_list[SIM_N_OPS];
  guint64   latest_pos[SIM_N_OPS];  /* start sector of the last dispatched request */
  guint     owned;                  /* inserted - completed: queued or in the driver */
  guint     prio;
} DdPerPrio;

typedef struct {
  /* run time data */
  DdPerPrio      per_prio[DD_PRIO_COUNT];
  SimOp          last_dir;
  guint          batching;          /* requests dispatched in this batch */
  guint          starved;           /* read batches chosen while writes waited */
  SchedMqShallow shallow;           /* async_depth */

  /* settings that change how the i/o scheduler behaves */
  int            fifo_expire[SIM_N_OPS];  /* jiffies */
  int            fifo_batch;
  int            writes_starved;
  int            front_merges;
  int            async_depth;             /* 0: nr_requests */
  int            prio_aging_expire;       /* jiffies */
} MqDeadlineData;

static const SchedTunable mq_deadline_tunables[] = {
  { "read_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 2, 0, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, fifo_expire[SIM_OP_READ]), "ms",
    "soft deadline of a read (HZ/2)" },
  { "write_expire", SCHED_TUNABLE_JIFFIES, 0, 5, 1, 0, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, fifo_expire[SIM_OP_WRITE]), "ms",
    "soft deadline of a write (5*HZ)" },
  { "writes_starved", SCHED_TUNABLE_INT, 2, 0, 0, INT_MIN, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, writes_starved), "read batches",
    "read batches allowed while writes wait" },
  { "front_merges", SCHED_TUNABLE_BOOL, 1, 0, 0, 0, 1,
    G_STRUCT_OFFSET (MqDeadlineData, front_merges), "bool",
    "look up front merges in the sector tree" },
  { "async_depth", SCHED_TUNABLE_INT, 0, 0, 0, 0, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, async_depth), "tags",
    "scheduler tags writes may hold; 0 = nr_requests (the 6.18 default)" },
  { "fifo_batch", SCHED_TUNABLE_INT, 16, 0, 0, 0, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, fifo_batch), "requests",
    "requests per batch" },
  { "prio_aging_expire", SCHED_TUNABLE_JIFFIES, 0, 10, 1, 0, INT_MAX,
    G_STRUCT_OFFSET (MqDeadlineData, prio_aging_expire), "ms",
    "a lower-priority request waiting longer than this is served first (10*HZ)" },
  { NULL }
};

/* ioprio_class_to_prio[]: NONE and BE map to BE. */
static guint
dd_prio_of_ioc (const SimIoContext *ioc)
{
  switch (ioc ? sim_ioc_class (ioc) : 2)
    {
    case 1:
      return DD_RT_PRIO;
    case 3:
      return DD_IDLE_PRIO;
    default:
      return DD_BE_PRIO;
    }
}

static DdPerPrio *
dd_rq_per_prio (const SimRequest *rq)
{
  DdPerPrio *pp = rq->elv_priv[0];
  g_assert (pp != NULL);
  return pp;
}

static guint
dd_async_depth (SchedQueue *e, const MqDeadlineData *dd)
{
  return dd->async_depth > 0 ? (guint) dd->async_depth : sched_mq_nr_requests (e);
}

/* dd_limit_depth(): only sync reads are exempt, and reads are always sync. */
static gboolean
dd_rq_limited (const SimRequest *rq)
{
  return rq->op == SIM_OP_WRITE;
}

static SimTime
dd_ns_per_jiffy (const SchedQueue *e)
{
  return SIM_NS_PER_S / (SimTime) e->hz;
}

static gint64
dd_fifo_jiffies (const SchedQueue *e, const SimRequest *rq)
{
  return rq->fifo_deadline_ns / dd_ns_per_jiffy (e);
}

static gboolean
mq_deadline_init (SchedQueue *e, GError **error)
{
  MqDeadlineData *dd = e->priv;
  for (guint p = 0; p < DD_PRIO_COUNT; p++)
    {
      DdPerPrio *pp = &dd->per_prio[p];
      pp->prio = p;
      for (guint d = 0; d < SIM_N_OPS; d++)
        {
          sim_rb_tree_init (&pp->sort_list[d]);
          sim_list_init (&pp->fifo_list[d]);
        }
    }
  dd->last_dir = SIM_OP_WRITE;
  sched_mq_shallow_init (&dd->shallow);
  return TRUE;
}

/* dd_insert_request(): into the tree and the FIFO, with its deadline. */
static void
dd_insert (SchedQueue *e, MqDeadlineData *dd, SimRequest *rq, SimTime now_ns)
{
  DdPerPrio *pp = dd_rq_per_prio (rq);
  pp->owned++;
  sched_rb_add (&pp->sort_list[rq->op], rq);
  gint64 deadline_j = sched_now_jiffies (e, now_ns) + dd->fifo_expire[rq->op];
  rq->fifo_deadline_ns = deadline_j * dd_ns_per_jiffy (e);
  sim_list_add_tail (&rq->fifo, &pp->fifo_list[rq->op]);
}

static void
mq_deadline_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  MqDeadlineData *dd = e->priv;
  rq->elv_priv[0] = &dd->per_prio[dd_prio_of_ioc (rq->ioc)];
  rq->elv_priv[1] = NULL;
  if (dd_rq_limited (rq) && !sched_mq_shallow_get (&dd->shallow, rq, dd_async_depth (e, dd)))
    {
      SCHED_LOG (e, now_ns, "tag_wait sector=%" G_GUINT64_FORMAT " held=%u", rq->sector,
                 dd->shallow.held);
      return;
    }
  dd_insert (e, dd, rq, now_ns);
}

static void
dd_remove_request (DdPerPrio *pp, SimRequest *rq)
{
  sim_list_del (&rq->fifo);
  sched_rb_del (&pp->sort_list[rq->op], rq);
}

/* A limited request gave up its tag (or left the wait): the first waiter
 * takes it and enters the scheduler now. */
static void
dd_put_tag (SchedQueue *e, MqDeadlineData *dd, SimRequest *rq, SimTime now_ns)
{
  if (!dd_rq_limited (rq))
    return;
  SimRequest *woken = sched_mq_shallow_put (&dd->shallow, rq, dd_async_depth (e, dd));
  if (woken)
    dd_insert (e, dd, woken, now_ns);
}

static SchedMerge
mq_deadline_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  MqDeadlineData *dd = e->priv;
  if (!dd->front_merges)
    return SCHED_NO_MERGE;
  DdPerPrio *pp = &dd->per_prio[dd_prio_of_ioc (bio->ioc)];
  SimRequest *rq = sched_rb_find_start (&pp->sort_list[bio->op], bio->sector + bio->nr_sectors);
  if (rq == NULL)
    return SCHED_NO_MERGE;
  *out = rq;
  return SCHED_FRONT_MERGE;
}

static gboolean
mq_deadline_allow_merge (SchedQueue *e, const SimRequest *rq, const SimBio *bio)
{
  return sched_mq_same_ioprio (rq->ioc, bio->ioc);
}

static void
mq_deadline_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  /* A front merge moved the start sector: re-sort (a request waiting for
   * a tag is in no tree yet). */
  if (type == SCHED_FRONT_MERGE && sim_rb_node_linked (&rq->rb_node))
    {
      DdPerPrio *pp = dd_rq_per_prio (rq);
      sched_rb_del (&pp->sort_list[rq->op], rq);
      sched_rb_add (&pp->sort_list[rq->op], rq);
    }
}

static void
mq_deadline_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  MqDeadlineData *dd = e->priv;
  DdPerPrio *pp = dd_rq_per_prio (next);
  /* former/latter only pair requests of one tree. */
  g_assert (sim_rb_node_linked (&rq->rb_node) && sim_rb_node_linked (&next->rb_node));
  /* Keep the earlier deadline, and its place in the FIFO. */
  if (next->fifo_deadline_ns < rq->fifo_deadline_ns)
    {
      sim_list_del (&rq->fifo);
      sim_list_add (&rq->fifo, &next->fifo);
      rq->fifo_deadline_ns = next->fifo_deadline_ns;
    }
  dd_remove_request (pp, next);
  /* The absorbed request is freed: dd_finish_request counts it completed. */
  g_assert (pp->owned > 0);
  pp->owned--;
  dd_put_tag (e, dd, next, e->sim ? sim_now (e->sim) : 0);
}

/* Sort-tree neighbours of the same I/O priority (attempt_merge refuses
 * requests of different priorities). */
static SimRequest *
dd_same_prio_or_null (const SimRequest *rq, SimRequest *other)
{
  return other && sched_mq_same_ioprio (rq->ioc, other->ioc) ? other : NULL;
}

static SimRequest *
mq_deadline_former_request (SchedQueue *e, SimRequest *rq)
{
  if (!sim_rb_node_linked (&rq->rb_node))
    return NULL;
  return dd_same_prio_or_null (rq, sched_rb_prev (rq));
}

static SimRequest *
mq_deadline_latter_request (SchedQueue *e, SimRequest *rq)
{
  if (!sim_rb_node_linked (&rq->rb_node))
    return NULL;
  return dd_same_prio_or_null (rq, sched_rb_next (rq));
}

static void
mq_deadline_completed (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  MqDeadlineData *dd = e->priv;
  DdPerPrio *pp = dd_rq_per_prio (rq);
  g_assert (pp->owned > 0);
  pp->owned--;
  dd_put_tag (e, dd, rq, now_ns);
}

/* ---- dispatch ----------------------------------------------------------- */

static int
rq_cmp_start (const SimRbNode *node, gconstpointer key)
{
  const SimRequest *rq = sim_container_of (node, SimRequest, rb_node);
  guint64 pos = *(const guint64 *) key;
  if (rq->sector == pos)
    return 0;
  return rq->sector < pos ? -1 : 1;
}

/* deadline_from_pos(): the first request starting at or after @pos. */
static SimRequest *
dd_from_pos (DdPerPrio *pp, SimOp dir, guint64 pos)
{
  SimRbNode *n = sim_rb_lower_bound (&pp->sort_list[dir], &pos, rq_cmp_start);
  return n ? sim_container_of (n, SimRequest, rb_node) : NULL;
}

static SimRequest *
dd_fifo_head (DdPerPrio *pp, SimOp dir)
{
  if (sim_list_empty (&pp->fifo_list[dir]))
    return NULL;
  return sim_list_first_entry (&pp->fifo_list[dir], SimRequest, fifo);
}

/* deadline_check_fifo(): the oldest request's deadline has come. */
static gboolean
dd_check_fifo (SchedQueue *e, DdPerPrio *pp, SimOp dir, gint64 now_j)
{
  return dd_fifo_jiffies (e, dd_fifo_head (pp, dir)) <= now_j;
}

/* started_after(): the request entered (deadline - expire) after @latest_j. */
static gboolean
dd_started_after (SchedQueue *e, MqDeadlineData *dd, const SimRequest *rq, gint64 latest_j)
{
  return dd_fifo_jiffies (e, rq) - dd->fifo_expire[rq->op] > latest_j;
}

/* __dd_dispatch_request(): deadline's batch rules within one level, for
 * requests that entered no later than @latest_j. */
static SimRequest *
dd_dispatch_from (SchedQueue *e, MqDeadlineData *dd, DdPerPrio *pp, gint64 latest_j,
                  gint64 now_j, SimTime now_ns)
{
  SimRequest *rq;
  SimOp dir;
  gboolean expired = FALSE, new_batch = FALSE;

  /* Batches are reads XOR writes: continue the current one. */
  rq = dd_from_pos (pp, dd->last_dir, pp->latest_pos[dd->last_dir]);
  if (rq && dd->batching < (guint) dd->fifo_batch)
    {
      dir = rq->op;
      goto dispatch_request;
    }

  if (!sim_list_empty (&pp->fifo_list[SIM_OP_READ]))
    {
      g_assert (pp->sort_list[SIM_OP_READ].count > 0);
      /* The kernel compares unsigned starved with int writes_starved, so a
       * negative setting never lets writes in: keep that. */
      if (dd_fifo_head (pp, SIM_OP_WRITE) && dd->starved++ >= (guint) dd->writes_starved)
        goto dispatch_writes;
      dir = SIM_OP_READ;
      goto dispatch_find_request;
    }
  if (!sim_list_empty (&pp->fifo_list[SIM_OP_WRITE]))
    {
    dispatch_writes:
      g_assert (pp->sort_list[SIM_OP_WRITE].count > 0);
      dd->starved = 0;
      dir = SIM_OP_WRITE;
      goto dispatch_find_request;
    }
  return NULL;

dispatch_find_request:
  {
    SimRequest *next_rq = dd_from_pos (pp, dir, pp->latest_pos[dir]);
    expired = dd_check_fifo (e, pp, dir, now_j);
    /* Expired, or nothing above the last position: start from the oldest. */
    rq = (expired || next_rq == NULL) ? dd_fifo_head (pp, dir) : next_rq;
    if (rq == NULL)
      return NULL;
    dd->last_dir = dir;
    dd->batching = 0;
    new_batch = TRUE;
  }

dispatch_request:
  /* Aging looks only at requests that entered before latest_j; the batch
   * state chosen above stays, as in the kernel. */
  if (dd_started_after (e, dd, rq, latest_j))
    return NULL;
  if (new_batch)
    SCHED_LOG (e, now_ns, "batch_start dir=%s prio=%s sector=%" G_GUINT64_FORMAT
               " expired=%d starved=%u", sim_op_name (dir), dd_prio_names[pp->prio],
               rq->sector, expired, dd->starved);
  dd->batching++;
  dd_remove_request (pp, rq);
  pp->latest_pos[dir] = rq->sector;
  return rq;
}

/* dd_dispatch_prio_aged_requests(). */
static SimRequest *
dd_dispatch_aged (SchedQueue *e, MqDeadlineData *dd, gint64 now_j, SimTime now_ns)
{
  guint levels = 0;
  for (guint p = 0; p < DD_PRIO_COUNT; p++)
    levels += dd->per_prio[p].owned > 0;
  if (levels < 2)
    return NULL;
  gint64 latest_j = now_j - dd->prio_aging_expire;
  for (guint p = DD_BE_PRIO; p < DD_PRIO_COUNT; p++)
    {
      SimRequest *rq = dd_dispatch_from (e, dd, &dd->per_prio[p], latest_j, now_j, now_ns);
      if (rq)
        {
          SCHED_LOG (e, now_ns, "prio_aged prio=%s dir=%s sector=%" G_GUINT64_FORMAT
                     " waited_ms=%" G_GINT64_FORMAT, dd_prio_names[p], sim_op_name (rq->op),
                     rq->sector, (now_ns - (rq->fifo_deadline_ns
                                            - sched_jiffies_to_ns (e, dd->fifo_expire[rq->op])))
                                 / SIM_NS_PER_MS);
          return rq;
        }
    }
  return NULL;
}

static int
mq_deadline_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  MqDeadlineData *dd = e->priv;
  gint64 now_j = sched_now_jiffies (e, now_ns);
  SimRequest *rq = dd_dispatch_aged (e, dd, now_j, now_ns);
  /* Then by priority; a level that owns requests blocks the lower ones
   * even when it has nothing to dispatch now. */
  for (guint p = 0; rq == NULL && p < DD_PRIO_COUNT; p++)
    {
      rq = dd_dispatch_from (e, dd, &dd->per_prio[p], now_j, now_j, now_ns);
      if (dd->per_prio[p].owned > 0)
        break;
    }
  if (rq == NULL)
    return 0;
  sched_dispatch_add_tail (e, rq);
  return 1;
}

static gboolean
mq_deadline_queue_empty (SchedQueue *e)
{
  MqDeadlineData *dd = e->priv;
  if (dd->shallow.waiting_count > 0)
    return FALSE;
  for (guint p = 0; p < DD_PRIO_COUNT; p++)
    for (guint d = 0; d < SIM_N_OPS; d++)
      if (!sim_list_empty (&dd->per_prio[p].fifo_list[d]))
        return FALSE;
  return TRUE;
}

gboolean
sched_mq_deadline_check_invariants (SchedQueue *e)
{
  g_return_val_if_fail (e->ops == &sched_mq_deadline_ops, FALSE);
  MqDeadlineData *dd = e->priv;
  guint held = 0;
  for (guint p = 0; p < DD_PRIO_COUNT; p++)
    {
      DdPerPrio *pp = &dd->per_prio[p];
      gsize queued = 0;
      for (guint d = 0; d < SIM_N_OPS; d++)
        {
          if (sim_list_length (&pp->fifo_list[d]) != pp->sort_list[d].count)
            return FALSE;
          queued += pp->sort_list[d].count;
          SimTime last = 0;
          for (SimList *l = pp->fifo_list[d].next; l != &pp->fifo_list[d]; l = l->next)
            {
              SimRequest *rq = sim_container_of (l, SimRequest, fifo);
              if (rq->elv_priv[0] != pp || rq->op != d || rq->fifo_deadline_ns < last
                  || !sim_rb_node_linked (&rq->rb_node))
                return FALSE;
              last = rq->fifo_deadline_ns;
              held += sched_mq_shallow_holds (rq);
            }
        }
      if (queued > pp->owned)
        return FALSE;
    }
  if (held > dd->shallow.held
      || sim_list_length (&dd->shallow.waiting) != dd->shallow.waiting_count)
    return FALSE;
  if (dd->shallow.waiting_count > 0 && dd->shallow.held < dd_async_depth (e, dd))
    return FALSE;
  return TRUE;
}

static void
mq_deadline_dump (SchedQueue *e, GString *out)
{
  MqDeadlineData *dd = e->priv;
  g_string_append_printf (out, "mq-deadline last_dir=%s batching=%u starved=%u tags_held=%u "
                          "tag_waiting=%u", sim_op_name (dd->last_dir), dd->batching,
                          dd->starved, dd->shallow.held, dd->shallow.waiting_count);
  for (guint p = 0; p < DD_PRIO_COUNT; p++)
    {
      DdPerPrio *pp = &dd->per_prio[p];
      g_string_append_printf (out, " %s=%" G_GSIZE_FORMAT "r/%" G_GSIZE_FORMAT "w/%uowned",
                              dd_prio_names[p], pp->sort_list[SIM_OP_READ].count,
                              pp->sort_list[SIM_OP_WRITE].count, pp->owned);
    }
  g_string_append_c (out, '\n');
}

const SchedOps sched_mq_deadline_ops = {
  .name           = "mq-deadline",
  .era            = "blk-mq, 6.18",
  .summary        = "deadline per I/O priority level (RT, BE, IDLE) with aging; async tag depth",
  .tunables       = mq_deadline_tunables,
  .priv_size      = sizeof (MqDeadlineData),
  .flags          = SCHED_F_MQ | SCHED_F_BIO_MERGE,
  .init           = mq_deadline_init,
  .add_request    = mq_deadline_add_request,
  .dispatch       = mq_deadline_dispatch,
  .queue_empty    = mq_deadline_queue_empty,
  .merge          = mq_deadline_merge,
  .merged         = mq_deadline_merged,
  .merge_requests = mq_deadline_merge_requests,
  .allow_merge    = mq_deadline_allow_merge,
  .former_request = mq_deadline_former_request,
  .latter_request = mq_deadline_latter_request,
  .completed      = mq_deadline_completed,
  .dump           = mq_deadline_dump,
};
