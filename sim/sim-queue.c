/* sim-queue.c — the request queue: merging, the request pool, plugging and
 * dispatch, following 2.6.28 block/blk-core.c (__make_request, get_request,
 * freed_request), block/elevator.c (elv_merge, elv_dispatch_sort,
 * elv_rqhash_*) and block/blk-merge.c (attempt_back/front_merge).
 * Segments: max_segments with every page a segment of its own (see
 * sim-queue.h), except that a raw device's one-sector bio continuing the
 * page of the bio it merges behind adds none.  2.4 and 2.5.3x queues
 * (plug_list) plug onto the machine's list with no timer or threshold,
 * as 2.4 and 2.5.3x drivers/block/ll_rw_blk.c did (blk_plug_device,
 * generic_unplug_device, blk_run_queues).  Simplifications, each a candidate for later issues: a
 * woken submitter gets the freed request at once (no batching window of
 * BLK_BATCH_REQ); barriers do not exist.  2.4 rules where an elevator
 * of that era asks for them: its wakeups of request waiters (SimPoolWake,
 * 2.4.18 and 2.4.19 drivers/block/ll_rw_blk.c blkdev_release_request,
 * __get_request_wait) and merging by the elevator's queue walk alone
 * (SCHED_F_SCAN_MERGE).
 *
 * blk-mq elevators (SCHED_F_MQ) take the 6.18 path instead (block/blk-mq.c
 * blk_mq_submit_bio, blk_add_rq_to_plug, blk_mq_flush_plug_list;
 * block/blk-merge.c blk_attempt_plug_merge; block/blk-mq-sched.c
 * blk_mq_sched_bio_merge): per-task plugs, scheduler merges only with
 * SCHED_F_BIO_MERGE.  Simplifications there: the plug flush inserts and
 * runs the queue at once (the kernel's run after a flush from schedule()
 * is async, through kblockd); a request that a sleeping submitter gets
 * when it wakes goes to the elevator, not to its plug; no insert merges
 * at flush time (elv_attempt_insert_merge); none's software-queue merges
 * (blk_bio_list_merge on ctx->rq_lists, reached only while direct issue
 * fails) are not modelled, so none merges in the plug only; a plug merge
 * does not ask BFQ's allow_merge (bfq_allow_bio_merge: one task's sync and
 * async bios in one plug, which direct I/O never mixes); threads sharing
 * an I/O context (CLONE_IO) are one task to the plug.
 */
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-wbt.h"
#include "sim/sim-elevator.h"

#include <string.h>

/* ---- tracing ----------------------------------------------------------- */

static void
emit (SimRequestQueue *q, TraceAction action, guint64 sector, guint32 nr_sectors,
      SimOp op, gboolean sync, const SimIoContext *ioc, guint32 count)
{
  if (q->trace == NULL)
    return;
  TraceRecord rec;
  memset (&rec, 0, sizeof rec);
  rec.time_ns = sim_now (q->sim);
  rec.dev_major = q->dev_major;
  rec.dev_minor = q->dev_minor;
  rec.cpu = 0;
  rec.pid = ioc ? ioc->pid : 0;
  rec.action = action;
  if (action == TRACE_ACT_PLUG || action == TRACE_ACT_UNPLUG_IO
      || action == TRACE_ACT_UNPLUG_TIMER)
    rec.rwbs = TRACE_RWBS_NONE;
  else
    rec.rwbs = (op == SIM_OP_WRITE ? TRACE_RWBS_WRITE : TRACE_RWBS_READ)
               | (sync ? TRACE_RWBS_SYNC : 0);
  rec.sector = sector;
  rec.nr_sectors = nr_sectors;
  rec.unplug_count = count;
  if (ioc && ioc->comm)
    g_strlcpy (rec.comm, ioc->comm, sizeof rec.comm);
  q->trace (q->trace_data, &rec);
}

static void
emit_rq (SimRequestQueue *q, TraceAction action, const SimRequest *rq)
{
  emit (q, action, rq->sector, rq->nr_sectors, rq->op, rq->sync, rq->ioc, 0);
}

/* ---- setup ------------------------------------------------------------- */

void
sim_queue_limits_init (SimQueueLimits *limits, guint hz)
{
  limits->nr_requests = 128;
  limits->max_sectors = 1024;
  limits->max_segments = SIM_QUEUE_DEFAULT_MAX_SEGMENTS;
  /* unplug_delay = msecs_to_jiffies(3), at least one jiffy. */
  gint64 jiffies = MAX (1, (3 * (gint64) hz + 999) / 1000);
  limits->unplug_delay_ns = jiffies * (SIM_NS_PER_S / (SimTime) hz);
  limits->unplug_thresh = 4;
}

guint32
sim_queue_limits_bio_sectors (const SimQueueLimits *limits, guint64 buf_offset_bytes,
                              guint64 sectors_left)
{
  g_assert (limits->max_segments >= 1 && sectors_left > 0);
  /* The end of the max_segments-th page from the bio's first one. */
  guint64 page_end = (buf_offset_bytes / SIM_QUEUE_SEGMENT_BYTES + limits->max_segments)
                     * SIM_QUEUE_SEGMENT_BYTES;
  guint64 by_segments = (page_end - buf_offset_bytes) / SIM_SECTOR_BYTES;
  return (guint32) MIN (MIN (sectors_left, (guint64) limits->max_sectors), by_segments);
}

guint32
sim_queue_bio_sectors (const SimRequestQueue *q, guint64 buf_offset_bytes, guint64 sectors_left)
{
  return sim_queue_limits_bio_sectors (&q->limits, buf_offset_bytes, sectors_left);
}

SimRequestQueue *
sim_queue_new (Sim *sim, const char *name, const SimQueueLimits *limits)
{
  SimRequestQueue *q = g_new0 (SimRequestQueue, 1);
  q->sim = sim;
  q->name = g_strdup (name);
  q->limits = *limits;
  g_assert (q->limits.nr_requests >= 1 && q->limits.max_segments >= 1);
  sim_list_init (&q->dispatch);
  sim_list_init (&q->plug_link);
  for (guint d = 0; d < SIM_N_OPS; d++)
    sim_list_init (&q->wait_list[d]);
  sim_time_avg_init (&q->depth_avg, sim_now (sim));
  q->chunks = g_ptr_array_new_with_free_func (g_free);
  return q;
}

void
sim_queue_free (SimRequestQueue *q)
{
  if (q == NULL)
    return;
  if (q->elevator)
    sched_queue_free (q->elevator);
  sim_wbt_free (q->wbt);
  /* Requests and bios still in use when a timed run ends live in the same
   * chunks as the free ones; freeing the chunks releases all of them. */
  g_ptr_array_unref (q->chunks);
  g_free (q->name);
  g_free (q);
}

void
sim_queue_set_elevator (SimRequestQueue *q, SchedQueue *elevator)
{
  g_assert (q->elevator == NULL);
  q->elevator = elevator;
}

void
sim_queue_set_device (SimRequestQueue *q, SimDevice *device)
{
  q->device = device;
}

void
sim_queue_set_trace (SimRequestQueue *q, SimQueueTraceFunc fn, gpointer data)
{
  q->trace = fn;
  q->trace_data = data;
}

/* ---- bios and requests ------------------------------------------------- */

#define CHUNK_OBJECTS 64

/* Grow a free list by one chunk; objects are freed with the queue. */
static void
grow_requests (SimRequestQueue *q)
{
  SimRequest *chunk = g_new0 (SimRequest, CHUNK_OBJECTS);
  g_ptr_array_add (q->chunks, chunk);
  for (guint i = 0; i < CHUNK_OBJECTS; i++)
    {
      chunk[i].hash_next = q->rq_free;
      q->rq_free = &chunk[i];
    }
}

static void
grow_bios (SimRequestQueue *q)
{
  SimBio *chunk = g_new0 (SimBio, CHUNK_OBJECTS);
  g_ptr_array_add (q->chunks, chunk);
  for (guint i = 0; i < CHUNK_OBJECTS; i++)
    {
      chunk[i].next = q->bio_free;
      q->bio_free = &chunk[i];
    }
}

SimBio *
sim_queue_bio_alloc (SimRequestQueue *q)
{
  if (q->bio_free == NULL)
    grow_bios (q);
  SimBio *bio = q->bio_free;
  q->bio_free = bio->next;
  memset (bio, 0, sizeof *bio);
  return bio;
}

static void
bio_free (SimRequestQueue *q, SimBio *bio)
{
  bio->next = q->bio_free;
  q->bio_free = bio;
}

guint
sim_queue_requests_allocated (const SimRequestQueue *q)
{
  return q->rq_count[SIM_OP_READ] + q->rq_count[SIM_OP_WRITE];
}

static void
update_depth (SimRequestQueue *q)
{
  sim_time_avg_set (&q->depth_avg, sim_now (q->sim),
                    (double) sim_queue_requests_allocated (q));
}

static SimRequest *
request_alloc (SimRequestQueue *q, SimBio *bio)
{
  if (q->rq_free == NULL)
    grow_requests (q);
  SimRequest *rq = q->rq_free;
  q->rq_free = rq->hash_next;
  memset (rq, 0, sizeof *rq);
  sim_list_init (&rq->queuelist);
  sim_list_init (&rq->fifo);
  sim_rb_node_clear (&rq->rb_node);
  rq->q = q;
  rq->state = SIM_RQ_PENDING;
  rq->sector = bio->sector;
  rq->nr_sectors = bio->nr_sectors;
  rq->nr_segments = bio->nr_segments;
  rq->op = bio->op;
  rq->sync = (bio->flags & SIM_BIO_SYNC) != 0;
  /* rq_qos_track -> wbt_track. */
  rq->wbt_flags = q->wbt ? sim_wbt_bio_flags (q->wbt, bio) : 0;
  rq->ioc = bio->ioc;
  rq->bio = rq->biotail = bio;
  rq->nr_bios = 1;
  bio->next = NULL;
  rq->alloc_ns = sim_now (q->sim);
  rq->seq = q->next_rq_seq++;
  q->rq_count[rq->op]++;
  q->counters.requests++;
  update_depth (q);
  emit_rq (q, TRACE_ACT_GETRQ, rq);
  return rq;
}

static void add_new_request (SimRequestQueue *q, SimRequest *rq);
static gboolean bio_merge (SimRequestQueue *q, SimBio *bio);
static gboolean elv_queue_empty (SimRequestQueue *q);

typedef enum {
  WAKE_NONE,         /* no sleeper, or no free request */
  WAKE_TOOK,         /* the first sleeper's bio took a free request */
  WAKE_MERGED,       /* it merged instead; the request is still free */
} WakeResult;

/* Hand a free request of @op to the first sleeping submitter, if there are
 * both.  With merge_after_wait its bio first tries to merge, as it would
 * when its task woke: 2.4's and 2.5's __make_request go back to `again:`
 * (elevator merge) after __get_request_wait, and release the request they
 * were given if the bio merged. */
static WakeResult
wake_waiter (SimRequestQueue *q, SimOp op)
{
  if (sim_list_empty (&q->wait_list[op]) || q->rq_count[op] >= q->limits.nr_requests)
    return WAKE_NONE;
  SimBioWaiter *w = sim_list_first_entry (&q->wait_list[op], SimBioWaiter, link);
  sim_list_del (&w->link);
  SimBio *bio = w->bio;
  w->bio = NULL;
  gboolean merged = q->merge_after_wait && !elv_queue_empty (q) && bio_merge (q, bio);
  if (!merged)
    add_new_request (q, request_alloc (q, bio));
  if (w->resume)
    w->resume (q->sim, w->resume_data, sim_now (q->sim));
  return merged ? WAKE_MERGED : WAKE_TOOK;
}

static guint
pool_free (const SimRequestQueue *q, SimOp op)
{
  return q->rq_count[op] >= q->limits.nr_requests ? 0 : q->limits.nr_requests - q->rq_count[op];
}

/* 2.4.18: wake_up on the shared wait queue wakes every sleeper; each takes
 * one request of its direction if one is free.  Only those asleep now
 * wake: a woken submitter that sleeps again, at the tail, waits for the
 * next wakeup. */
static void
wake_all_waiters (SimRequestQueue *q)
{
  for (guint d = 0; d < SIM_N_OPS; d++)
    {
      gsize asleep = sim_list_length (&q->wait_list[d]);
      for (gsize i = 0; i < asleep && wake_waiter (q, (SimOp) d) != WAKE_NONE; i++)
        ;
    }
}

/* A request of @op was freed: wake sleepers by the pool's rule. */
static void
freed_request (SimRequestQueue *q, SimOp op)
{
  switch (q->pool_wake)
    {
    case SIM_POOL_WAKE_BATCH_ALL:
      if (pool_free (q, op) >= q->batch_requests
          && (!sim_list_empty (&q->wait_list[SIM_OP_READ])
              || !sim_list_empty (&q->wait_list[SIM_OP_WRITE])))
        wake_all_waiters (q);
      break;
    case SIM_POOL_WAKE_BATCH_ONE:
      /* A sleeper whose bio merged gives the request back, which wakes
       * the next by the same rule. */
      while (pool_free (q, op) >= q->batch_requests && wake_waiter (q, op) == WAKE_MERGED)
        ;
      break;
    case SIM_POOL_WAKE_EACH:
    default:
      while (wake_waiter (q, op) == WAKE_MERGED)
        ;
      break;
    }
}

static void
request_free (SimRequestQueue *q, SimRequest *rq)
{
  g_assert (q->rq_count[rq->op] > 0);
  SimOp op = rq->op;
  q->rq_count[op]--;
  rq->state = SIM_RQ_FREE;
  rq->hash_next = q->rq_free;
  q->rq_free = rq;
  update_depth (q);
  freed_request (q, op);
  if (q->freed_hook)
    q->freed_hook (q->freed_hook_data, q, op);
}

/* ---- merge hash (elv_rqhash_*), keyed by end sector -------------------- */

static guint
hash_bucket (guint64 end_sector)
{
  return (guint) ((end_sector * G_GUINT64_CONSTANT (0x9e37fffffffc0001)) >> 58)
         % SIM_QUEUE_HASH_BUCKETS;
}

static void
hash_add (SimRequestQueue *q, SimRequest *rq)
{
  g_assert (rq->hash_pprev == NULL);
  SimRequest **head = &q->hash[hash_bucket (sim_request_end_sector (rq))];
  rq->hash_next = *head;
  if (*head)
    (*head)->hash_pprev = &rq->hash_next;
  *head = rq;
  rq->hash_pprev = head;
}

static void
hash_del (SimRequest *rq)
{
  if (rq->hash_pprev == NULL)
    return;
  *rq->hash_pprev = rq->hash_next;
  if (rq->hash_next)
    rq->hash_next->hash_pprev = rq->hash_pprev;
  rq->hash_next = NULL;
  rq->hash_pprev = NULL;
}

static SimRequest *
hash_find (SimRequestQueue *q, guint64 end_sector)
{
  for (SimRequest *rq = q->hash[hash_bucket (end_sector)]; rq; rq = rq->hash_next)
    if (sim_request_end_sector (rq) == end_sector)
      return rq;
  return NULL;
}

/* ---- merging ----------------------------------------------------------- */

static gboolean
rq_merge_ok (SimRequestQueue *q, const SimRequest *rq, const SimBio *bio)
{
  if (rq->state != SIM_RQ_PENDING || rq->op != bio->op)
    return FALSE;
  if (q->elevator->ops->allow_merge
      && !q->elevator->ops->allow_merge (q->elevator, rq, bio))
    return FALSE;
  return TRUE;
}

static SchedMerge
try_merge (SimRequestQueue *q, const SimRequest *rq, const SimBio *bio)
{
  if (!rq_merge_ok (q, rq, bio))
    return SCHED_NO_MERGE;
  if (sim_request_end_sector (rq) == bio->sector)
    return SCHED_BACK_MERGE;
  if (rq->sector == bio->sector + bio->nr_sectors)
    return SCHED_FRONT_MERGE;
  return SCHED_NO_MERGE;
}

/* elv_merge(): last_merge, then the back-merge hash, then the elevator;
 * 2.4 (SCHED_F_SCAN_MERGE): the elevator alone. */
static SchedMerge
find_merge (SimRequestQueue *q, const SimBio *bio, SimRequest **out)
{
  if (q->elevator->ops->flags & SCHED_F_SCAN_MERGE)
    {
      SchedMerge m = q->elevator->ops->merge (q->elevator, bio, out);
      return m != SCHED_NO_MERGE && rq_merge_ok (q, *out, bio) ? m : SCHED_NO_MERGE;
    }
  if (q->last_merge)
    {
      SchedMerge m = try_merge (q, q->last_merge, bio);
      if (m != SCHED_NO_MERGE)
        {
          *out = q->last_merge;
          return m;
        }
    }
  SimRequest *rq = hash_find (q, bio->sector);
  if (rq && rq_merge_ok (q, rq, bio))
    {
      *out = rq;
      return SCHED_BACK_MERGE;
    }
  if (q->elevator->ops->merge)
    {
      SchedMerge m = q->elevator->ops->merge (q->elevator, bio, out);
      if (m != SCHED_NO_MERGE && rq_merge_ok (q, *out, bio))
        return m;
    }
  return SCHED_NO_MERGE;
}

/* ll_back/front_merge_fn, ll_merge_requests_fn: the merged request stays
 * within max_sectors and, its segments simply adding up (scattered pages,
 * never physically contiguous), within max_segments. */
static gboolean
size_ok (SimRequestQueue *q, guint64 sectors_a, guint64 sectors_b, guint32 segs_a, guint32 segs_b)
{
  if (sectors_a + sectors_b > q->limits.max_sectors)
    return FALSE;
  if (segs_a + segs_b > q->limits.max_segments)
    {
      q->counters.segment_limited++;
      return FALSE;
    }
  return TRUE;
}

/* A bio whose data continues the page of the bio before it, merged right
 * behind that one: its first segment is the tail segment of the request
 * (blk_phys_contig_segment; 2.4 blk_seg_merge_ok). */
static guint32
contig_segment (const SimBio *bio)
{
  return (bio->flags & SIM_BIO_PHYS_CONTIG) && bio->nr_segments > 0 ? 1 : 0;
}

/* attempt_merge(): merge @next into @rq when contiguous. */
static gboolean
attempt_merge (SimRequestQueue *q, SimRequest *rq, SimRequest *next)
{
  if (rq->state != SIM_RQ_PENDING || next->state != SIM_RQ_PENDING)
    return FALSE;
  if (sim_request_end_sector (rq) != next->sector || rq->op != next->op)
    return FALSE;
  guint32 next_segs = next->nr_segments - contig_segment (next->bio);
  if (!size_ok (q, rq->nr_sectors, next->nr_sectors, rq->nr_segments, next_segs))
    return FALSE;

  rq->biotail->next = next->bio;
  rq->biotail = next->biotail;
  rq->nr_bios += next->nr_bios;
  rq->nr_sectors += next->nr_sectors;
  rq->nr_segments += next_segs;
  next->bio = next->biotail = NULL;
  next->nr_bios = 0;
  if (next->alloc_ns < rq->alloc_ns)
    rq->alloc_ns = next->alloc_ns;

  if (q->elevator->ops->merge_requests)
    q->elevator->ops->merge_requests (q->elevator, rq, next);
  hash_del (rq);
  hash_add (q, rq);
  hash_del (next);
  if (q->last_merge == next)
    q->last_merge = NULL;
  q->nr_sorted--;
  q->last_merge = rq;
  q->counters.request_merges++;
  /* blk_mq_free_request -> rq_qos_done: the absorbed request's token. */
  guint8 wbt_flags = next->wbt_flags;
  guint64 seq = next->seq;
  request_free (q, next);
  if (q->wbt)
    sim_wbt_done (q->wbt, wbt_flags, seq);
  return TRUE;
}

static gboolean
attempt_back_merge (SimRequestQueue *q, SimRequest *rq)
{
  if (!q->elevator->ops->latter_request)
    return FALSE;
  SimRequest *next = q->elevator->ops->latter_request (q->elevator, rq);
  return next && attempt_merge (q, rq, next);
}

static gboolean
attempt_front_merge (SimRequestQueue *q, SimRequest *rq)
{
  if (!q->elevator->ops->former_request)
    return FALSE;
  SimRequest *prev = q->elevator->ops->former_request (q->elevator, rq);
  return prev && attempt_merge (q, prev, rq);
}

static void
merged_request (SimRequestQueue *q, SimRequest *rq, SchedMerge type)
{
  if (q->elevator->ops->merged)
    q->elevator->ops->merged (q->elevator, rq, type);
  if (type == SCHED_BACK_MERGE)
    {
      hash_del (rq);
      hash_add (q, rq);
    }
  q->last_merge = rq;
}

static gboolean
bio_merge (SimRequestQueue *q, SimBio *bio)
{
  SimRequest *rq = NULL;
  SchedMerge type = find_merge (q, bio, &rq);
  if (type == SCHED_NO_MERGE)
    return FALSE;
  guint32 segs = bio->nr_segments - (type == SCHED_BACK_MERGE ? contig_segment (bio) : 0);
  if (!size_ok (q, rq->nr_sectors, bio->nr_sectors, rq->nr_segments, segs))
    return FALSE;

  if (type == SCHED_BACK_MERGE)
    {
      emit (q, TRACE_ACT_BACKMERGE, bio->sector, bio->nr_sectors, bio->op,
            (bio->flags & SIM_BIO_SYNC) != 0, bio->ioc, 0);
      rq->biotail->next = bio;
      rq->biotail = bio;
      bio->next = NULL;
      rq->nr_sectors += bio->nr_sectors;
      rq->nr_segments += segs;
      rq->nr_bios++;
      q->counters.back_merges++;
      if (!attempt_back_merge (q, rq))
        merged_request (q, rq, type);
    }
  else
    {
      emit (q, TRACE_ACT_FRONTMERGE, bio->sector, bio->nr_sectors, bio->op,
            (bio->flags & SIM_BIO_SYNC) != 0, bio->ioc, 0);
      bio->next = rq->bio;
      rq->bio = bio;
      rq->sector = bio->sector;
      rq->nr_sectors += bio->nr_sectors;
      rq->nr_segments += bio->nr_segments;
      rq->nr_bios++;
      q->counters.front_merges++;
      if (!attempt_front_merge (q, rq))
        merged_request (q, rq, type);
    }
  return TRUE;
}

/* ---- plugging ---------------------------------------------------------- */

static gboolean
elv_queue_empty (SimRequestQueue *q)
{
  return sim_list_empty (&q->dispatch) && q->elevator->ops->queue_empty (q->elevator);
}

static void
unplug_timer_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimRequestQueue *q = subject;
  q->unplug_timer = 0;
  if (!q->plugged)
    return;
  q->plugged = FALSE;
  q->counters.unplugs_timer++;
  emit (q, TRACE_ACT_UNPLUG_TIMER, 0, 0, SIM_OP_READ, FALSE, NULL,
        sim_queue_requests_allocated (q) - q->in_flight);
  sim_queue_run (q);
}

static void kupdate_fired (Sim *sim, gpointer subject, gpointer object);

/* The writeback daemon's next periodic run (wb_timer, kupdate's interval),
 * armed while some queue is plugged: its phase is fixed from time 0, as a
 * periodic timer's. */
static void
kupdate_arm (SimPlugList *list)
{
  if (list->kupdate_interval_ns == 0 || list->kupdate_event != 0)
    return;
  SimTime next = (sim_now (list->sim) / list->kupdate_interval_ns + 1) * list->kupdate_interval_ns;
  list->kupdate_event = sim_schedule_at (list->sim, next, kupdate_fired, list, NULL);
}

/* No queue plugged: a run would find nothing to do, so the timer need not
 * stay armed (it is re-armed, in the same phase, at the next plug). */
static void
kupdate_disarm_if_idle (SimPlugList *list)
{
  if (list->kupdate_event == 0 || !sim_list_empty (&list->queues))
    return;
  sim_cancel (list->sim, list->kupdate_event);
  list->kupdate_event = 0;
}

static void
queue_plug (SimRequestQueue *q, const SimIoContext *ioc)
{
  if (q->plugged)
    return;
  q->plugged = TRUE;
  q->counters.plugs++;
  emit (q, TRACE_ACT_PLUG, 0, 0, SIM_OP_READ, FALSE, ioc, 0);
  if (q->plug_list)
    {
      sim_list_add_tail (&q->plug_link, &q->plug_list->queues);
      kupdate_arm (q->plug_list);
    }
  if (q->limits.unplug_delay_ns > 0)
    q->unplug_timer = sim_schedule_in (q->sim, q->limits.unplug_delay_ns,
                                       unplug_timer_fired, q, NULL);
}

/* Remove the plug; TRUE if the queue was plugged. */
static gboolean
remove_plug (SimRequestQueue *q)
{
  if (!q->plugged)
    return FALSE;
  q->plugged = FALSE;
  if (q->plug_list)
    {
      sim_list_del (&q->plug_link);
      kupdate_disarm_if_idle (q->plug_list);
    }
  if (q->unplug_timer)
    sim_cancel (q->sim, q->unplug_timer);
  q->unplug_timer = 0;
  return TRUE;
}

void
sim_queue_unplug (SimRequestQueue *q, const SimIoContext *ioc)
{
  if (remove_plug (q))
    {
      q->counters.unplugs_io++;
      emit (q, TRACE_ACT_UNPLUG_IO, 0, 0, SIM_OP_READ, FALSE, ioc,
            sim_queue_requests_allocated (q) - q->in_flight);
    }
  sim_queue_run (q);
}

void
sim_queue_unplug_wait (SimRequestQueue *q, const SimIoContext *ioc)
{
  if (q->plug_list)
    sim_plug_list_run (q->plug_list, ioc);
  else
    sim_queue_unplug (q, ioc);
}

void
sim_plug_list_init (SimPlugList *list, Sim *sim, SimTime kupdate_interval_ns)
{
  memset (list, 0, sizeof *list);
  list->sim = sim;
  list->kupdate_interval_ns = kupdate_interval_ns;
  sim_list_init (&list->queues);
}

void
sim_queue_set_merge_after_wait (SimRequestQueue *q, gboolean on)
{
  q->merge_after_wait = on;
}

void
sim_queue_set_plug_list (SimRequestQueue *q, SimPlugList *list)
{
  g_assert (q->counters.bios == 0 && !q->plugged);
  g_assert (q->limits.unplug_delay_ns == 0 && q->limits.unplug_thresh == 0);
  q->plug_list = list;
}

/* Unplug the queues on @list; @by_kupdate: the writeback daemon's run
 * (blktrace UT), else a task's (U). */
static void
plug_list_run (SimPlugList *list, const SimIoContext *ioc, gboolean by_kupdate)
{
  if (sim_list_empty (&list->queues))
    return;
  list->runs++;
  if (by_kupdate)
    list->kupdate_runs++;
  /* blk_run_queues splices the list away first: a queue that plugs again
   * while another is unplugged waits for the next run. */
  SimList local;
  local.next = list->queues.next;
  local.prev = list->queues.prev;
  local.next->prev = &local;
  local.prev->next = &local;
  sim_list_init (&list->queues);
  while (!sim_list_empty (&local))
    {
      SimRequestQueue *q = sim_list_first_entry (&local, SimRequestQueue, plug_link);
      sim_list_del (&q->plug_link);
      q->plugged = FALSE;
      if (q->unplug_timer)
        sim_cancel (q->sim, q->unplug_timer);
      q->unplug_timer = 0;
      guint waiting = sim_queue_requests_allocated (q) - q->in_flight;
      if (by_kupdate)
        {
          q->counters.unplugs_timer++;
          emit (q, TRACE_ACT_UNPLUG_TIMER, 0, 0, SIM_OP_READ, FALSE, NULL, waiting);
        }
      else
        {
          q->counters.unplugs_io++;
          emit (q, TRACE_ACT_UNPLUG_IO, 0, 0, SIM_OP_READ, FALSE, ioc, waiting);
        }
      sim_queue_run (q);
    }
  kupdate_disarm_if_idle (list);
}

void
sim_plug_list_run (SimPlugList *list, const SimIoContext *ioc)
{
  plug_list_run (list, ioc, FALSE);
}

static void
kupdate_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimPlugList *list = subject;
  list->kupdate_event = 0;
  plug_list_run (list, NULL, TRUE);
}

/* ---- insertion --------------------------------------------------------- */

static gboolean
queue_is_mq (const SimRequestQueue *q)
{
  return (q->elevator->ops->flags & SCHED_F_MQ) != 0;
}

/* elv_insert with sort semantics: the request enters the elevator and
 * becomes a merge candidate (hash, last_merge). */
static void
elv_insert (SimRequestQueue *q, SimRequest *rq)
{
  SimTime now = sim_now (q->sim);
  rq->state = SIM_RQ_PENDING;
  rq->insert_ns = now;
  emit_rq (q, TRACE_ACT_INSERT, rq);
  q->nr_sorted++;
  q->elevator->ops->add_request (q->elevator, rq, now);
  hash_add (q, rq);
  if (q->last_merge == NULL)
    q->last_merge = rq;
}

static void
add_new_request (SimRequestQueue *q, SimRequest *rq)
{
  /* blk-mq schedulers have no queue plug: tasks plug (SimPlug). */
  if (elv_queue_empty (q) && !queue_is_mq (q))
    queue_plug (q, rq->ioc);

  elv_insert (q, rq);

  if (q->plugged)
    {
      guint nrq = sim_queue_requests_allocated (q) - q->in_flight;
      if (q->limits.unplug_thresh > 0 && nrq >= q->limits.unplug_thresh)
        {
          remove_plug (q);
          q->counters.unplugs_thresh++;
          emit (q, TRACE_ACT_UNPLUG_IO, 0, 0, SIM_OP_READ, FALSE, rq->ioc, nrq);
          sim_queue_run (q);
        }
    }
  else
    sim_queue_run (q);
}

/* ---- blk-mq: per-task plugs -------------------------------------------- */

/* blk_mq_flush_plug_list: the plug's requests enter the elevator in
 * submission order (6.18 keeps the order: "block: do not reverse request
 * order when flushing plug list"), then the queue runs.  trace_block_unplug
 * reports the depth, explicit (U) or from schedule() (UT). */
static void
plug_flush (SimRequestQueue *q, SimPlug *plug, gboolean from_schedule)
{
  if (plug->rq_count == 0)
    return;
  emit (q, from_schedule ? TRACE_ACT_UNPLUG_TIMER : TRACE_ACT_UNPLUG_IO, 0, 0, SIM_OP_READ,
        FALSE, plug->ioc, plug->rq_count);
  while (!sim_list_empty (&plug->list))
    {
      SimRequest *rq = sim_list_first_entry (&plug->list, SimRequest, queuelist);
      sim_list_del (&rq->queuelist);
      g_assert (rq->state == SIM_RQ_PLUGGED);
      elv_insert (q, rq);
    }
  plug->rq_count = 0;
  sim_queue_run (q);
}

/* blk_add_rq_to_plug (6.18): flush first when the plug holds
 * BLK_MAX_REQUEST_COUNT requests or the request rq_list_peek() returns -
 * the list's head, the oldest, since 6.12 adds at the tail - is at least
 * BLK_PLUG_FLUSH_SIZE. */
static void
plug_add (SimRequestQueue *q, SimPlug *plug, SimRequest *rq)
{
  if (plug->rq_count == 0)
    {
      q->counters.plugs++;
      emit (q, TRACE_ACT_PLUG, 0, 0, SIM_OP_READ, FALSE, plug->ioc, 0);
    }
  else
    {
      const SimRequest *head = sim_list_first_entry (&plug->list, SimRequest, queuelist);
      if (plug->rq_count >= SIM_PLUG_MAX_REQUEST_COUNT
          || sim_request_bytes (head) >= SIM_PLUG_FLUSH_BYTES)
        {
          q->counters.unplugs_thresh++;
          plug_flush (q, plug, FALSE);
          q->counters.plugs++;
          emit (q, TRACE_ACT_PLUG, 0, 0, SIM_OP_READ, FALSE, plug->ioc, 0);
        }
    }
  rq->state = SIM_RQ_PLUGGED;
  sim_list_add_tail (&rq->queuelist, &plug->list);
  plug->rq_count++;
}

/* blk_rq_merge_ok for a plugged request: same direction.  Its I/O
 * priority check (5.17+) always passes here: a plug holds one task's
 * requests and the simulated priority is the task's. */
static gboolean
plug_rq_merge_ok (const SimRequest *rq, const SimBio *bio)
{
  return rq->state == SIM_RQ_PLUGGED && rq->op == bio->op;
}

/* blk_attempt_plug_merge (6.18 block/blk-merge.c): only the newest request
 * of the plug (plug->mq_list.tail) is tried, back then front
 * (blk_attempt_bio_merge -> blk_try_merge).  No request-to-request merge:
 * bio_attempt_back_merge does not look for one in a plug. */
static gboolean
plug_merge (SimRequestQueue *q, SimPlug *plug, SimBio *bio)
{
  if (plug->rq_count == 0)
    return FALSE;
  SimRequest *rq = sim_container_of (plug->list.prev, SimRequest, queuelist);
  if (!plug_rq_merge_ok (rq, bio))
    return FALSE;
  gboolean back = sim_request_end_sector (rq) == bio->sector;
  if (!back && rq->sector != bio->sector + bio->nr_sectors)
    return FALSE;
  /* bio_attempt_back/front_merge -> ll_back/front_merge_fn. */
  if (!size_ok (q, rq->nr_sectors, bio->nr_sectors, rq->nr_segments, bio->nr_segments))
    return FALSE;
  gboolean sync = (bio->flags & SIM_BIO_SYNC) != 0;
  if (back)
    {
      emit (q, TRACE_ACT_BACKMERGE, bio->sector, bio->nr_sectors, bio->op, sync, bio->ioc, 0);
      rq->biotail->next = bio;
      rq->biotail = bio;
      bio->next = NULL;
      q->counters.back_merges++;
    }
  else
    {
      emit (q, TRACE_ACT_FRONTMERGE, bio->sector, bio->nr_sectors, bio->op, sync, bio->ioc, 0);
      bio->next = rq->bio;
      rq->bio = bio;
      rq->sector = bio->sector;
      q->counters.front_merges++;
    }
  rq->nr_sectors += bio->nr_sectors;
  rq->nr_segments += bio->nr_segments;
  rq->nr_bios++;
  q->counters.plug_merges++;
  return TRUE;
}

void
sim_queue_start_plug (SimRequestQueue *q, SimPlug *plug, const SimIoContext *ioc)
{
  if (!queue_is_mq (q))
    return;
  if (plug->q != q)
    {
      plug->q = q;
      plug->rq_count = 0;
      sim_list_init (&plug->list);
    }
  plug->ioc = ioc;
  g_assert (plug->rq_count == 0);
  if (q->current_plug == plug)
    return;
  plug->prev = q->current_plug;
  q->current_plug = plug;
}

/* @plug stops being current (its section ended, or its task slept). */
static void
plug_leave (SimRequestQueue *q, SimPlug *plug)
{
  if (q->current_plug == plug)
    q->current_plug = plug->prev;
  plug->prev = NULL;
}

void
sim_queue_finish_plug (SimRequestQueue *q, SimPlug *plug)
{
  if (!queue_is_mq (q))
    return;
  g_assert (plug->q == q);
  plug_leave (q, plug);
  if (plug->rq_count)
    q->counters.unplugs_io++;
  plug_flush (q, plug, FALSE);
}

void
sim_queue_suspend_plug (SimRequestQueue *q, SimPlug *plug)
{
  if (!queue_is_mq (q))
    return;
  g_assert (plug->q == q && q->current_plug == plug);
  plug_leave (q, plug);
}

void
sim_queue_resume_plug (SimRequestQueue *q, SimPlug *plug)
{
  if (!queue_is_mq (q))
    return;
  g_assert (plug->q == q && q->current_plug != plug);
  plug->prev = q->current_plug;
  q->current_plug = plug;
}

/* The submitter sleeps (for a request): schedule() flushes its plug
 * (sched_submit_work -> blk_flush_plug(plug, true)); it is no longer the
 * running task. */
static void
plug_sleep (SimRequestQueue *q, SimPlug *plug)
{
  if (plug == NULL)
    return;
  plug_leave (q, plug);
  if (plug->rq_count)
    q->counters.unplugs_timer++;
  plug_flush (q, plug, TRUE);
}

/* elv_may_queue: the elevator may let a process it is waiting for take a
 * request past nr_requests, up to the hard cap of 3/2 nr_requests. */
static gboolean
may_exceed_pool (SimRequestQueue *q, const SimBio *bio)
{
  const SchedOps *ops = q->elevator->ops;
  if (ops->may_queue == NULL || bio->ioc == NULL)
    return FALSE;
  if (q->rq_count[bio->op] >= q->limits.nr_requests * 3 / 2)
    return FALSE;
  return ops->may_queue (q->elevator, bio->ioc, bio->op, (bio->flags & SIM_BIO_SYNC) != 0)
         == SCHED_MAY_QUEUE_MUST;
}

/* No request of @bio's direction is free for it. */
static gboolean
pool_empty (SimRequestQueue *q, const SimBio *bio)
{
  return q->rq_count[bio->op] >= q->limits.nr_requests && !may_exceed_pool (q, bio);
}

/* A request for @bio (blk_mq_get_new_requests after the throttle; 2.6
 * get_request), into @cur's plug or the elevator; or, with the pool of
 * its direction empty, its task sleeps (get_request_wait /
 * blk_mq_get_tag): FALSE with @bio parked on @waiter, which wake_waiter
 * resumes once the bio has its request.  The queue is unplugged (2.6) or
 * the task's plug flushed (blk-mq) first so that it drains. */
static gboolean
get_request (SimRequestQueue *q, SimBio *bio, SimBioWaiter *waiter, SimPlug *cur)
{
  if (pool_empty (q, bio))
    {
      g_assert (waiter != NULL);
      q->counters.sleeps++;
      emit (q, TRACE_ACT_SLEEPRQ, bio->sector, bio->nr_sectors, bio->op,
            (bio->flags & SIM_BIO_SYNC) != 0, bio->ioc, 0);
      waiter->bio = bio;
      sim_list_add_tail (&waiter->link, &q->wait_list[bio->op]);
      plug_sleep (q, cur);
      sim_queue_unplug (q, bio->ioc);
      return FALSE;
    }
  SimRequest *rq = request_alloc (q, bio);
  if (cur)
    plug_add (q, cur, rq);
  else
    add_new_request (q, rq);
  return TRUE;
}

/* A throttled task woke with its token and got @rq: it goes on building
 * its I/O (write_cache_pages after rq_qos_wait returns), and its next
 * bios merge into the request in its plug (blk_attempt_plug_merge) without
 * a token, until one does not fit.  The simulation has already cut those
 * bios and parked them behind it: the contiguous ones of the same task
 * back-merge into @rq here, before it leaves for the elevator; their
 * waiters join @woken. */
static void
absorb_parked_bios (SimRequestQueue *q, SimRequest *rq, SimList *woken)
{
  for (;;)
    {
      SimBioWaiter *next = sim_wbt_first_waiter (q->wbt);
      if (next == NULL)
        return;
      SimBio *bio = next->bio;
      if (bio->ioc != rq->ioc || bio->op != rq->op || bio->sector != sim_request_end_sector (rq)
          || !size_ok (q, rq->nr_sectors, bio->nr_sectors, rq->nr_segments, bio->nr_segments))
        return;
      sim_wbt_unqueue (q->wbt, next);
      next->bio = NULL;
      emit (q, TRACE_ACT_BACKMERGE, bio->sector, bio->nr_sectors, bio->op,
            (bio->flags & SIM_BIO_SYNC) != 0, bio->ioc, 0);
      rq->biotail->next = bio;
      rq->biotail = bio;
      bio->next = NULL;
      rq->nr_sectors += bio->nr_sectors;
      rq->nr_segments += bio->nr_segments;
      rq->nr_bios++;
      q->counters.back_merges++;
      q->counters.plug_merges++;
      sim_list_add_tail (&next->link, woken);
    }
}

/* blk-wbt woke a throttled task with its token: it goes on to allocate
 * its request.  As after a sleep for a request, that request goes to the
 * elevator, not to the task's plug. */
static void
wbt_granted (SimRequestQueue *q, SimBioWaiter *w)
{
  SimBio *bio = w->bio;
  w->bio = NULL;
  if (pool_empty (q, bio))
    {
      get_request (q, bio, w, NULL);
      return;
    }
  SimRequest *rq = request_alloc (q, bio);
  SimList woken;
  sim_list_init (&woken);
  absorb_parked_bios (q, rq, &woken);
  add_new_request (q, rq);
  SimTime now = sim_now (q->sim);
  if (w->resume)
    w->resume (q->sim, w->resume_data, now);
  while (!sim_list_empty (&woken))
    {
      SimBioWaiter *next = sim_list_first_entry (&woken, SimBioWaiter, link);
      sim_list_del (&next->link);
      if (next->resume)
        next->resume (q->sim, next->resume_data, now);
    }
}

void
sim_queue_set_pool_wake (SimRequestQueue *q, SimPoolWake wake, guint batch_requests)
{
  g_assert (wake == SIM_POOL_WAKE_EACH || batch_requests >= 1);
  g_assert (q->counters.bios == 0);
  q->pool_wake = wake;
  q->batch_requests = batch_requests;
}

void
sim_queue_init_wbt (SimRequestQueue *q, const SimWbtConfig *cfg)
{
  g_assert (q->wbt == NULL && q->counters.bios == 0);
  q->wbt = sim_wbt_new (q, cfg, wbt_granted);
}

gboolean
sim_queue_submit_bio (SimRequestQueue *q, SimBio *bio, SimBioWaiter *waiter)
{
  g_assert (bio->nr_sectors > 0 && bio->nr_sectors <= q->limits.max_sectors);
  g_assert (bio->end_io != NULL);
  /* Built within the limits (bio_split_to_limits has nothing to cut). */
  if (bio->nr_segments == 0)
    bio->nr_segments = sim_segments_for (0, (guint64) bio->nr_sectors * SIM_SECTOR_BYTES);
  g_assert (bio->nr_segments <= q->limits.max_segments);
  bio->queue_ns = sim_now (q->sim);
  q->counters.bios++;
  if (bio->flags & SIM_BIO_BH)
    q->bh_bios_seen = TRUE;
  emit (q, TRACE_ACT_QUEUE, bio->sector, bio->nr_sectors, bio->op,
        (bio->flags & SIM_BIO_SYNC) != 0, bio->ioc, 0);

  /* blk-mq (blk_mq_submit_bio -> blk_mq_attempt_bio_merge): the task's
   * own plug first, then the scheduler's queues if it merges bios at all.
   * Legacy (__make_request -> elv_merge): the elevator queue, any task. */
  SimPlug *cur = q->current_plug;
  gboolean mq = queue_is_mq (q);
  /* A bio of another task than the plug's (completion work, a flusher)
   * is not submitted inside that plug section. */
  if (cur && cur->ioc != bio->ioc)
    cur = NULL;
  if (cur && plug_merge (q, cur, bio))
    return TRUE;
  if ((!mq || (q->elevator->ops->flags & SCHED_F_BIO_MERGE))
      && !elv_queue_empty (q) && bio_merge (q, bio))
    return TRUE;

  /* rq_qos_throttle: over wbt's limit the task sleeps (rq_qos_wait ->
   * io_schedule, which flushes its plug) until wbt gives it a token. */
  if (q->wbt && !sim_wbt_throttle (q->wbt, bio, waiter))
    {
      plug_sleep (q, cur);
      return FALSE;
    }
  return get_request (q, bio, waiter, cur);
}

/* ---- dispatch ---------------------------------------------------------- */

static void
leave_elevator (SimRequestQueue *q, SimRequest *rq)
{
  g_assert (rq->state == SIM_RQ_PENDING);
  if (q->last_merge == rq)
    q->last_merge = NULL;
  hash_del (rq);
  g_assert (q->nr_sorted > 0);
  q->nr_sorted--;
  rq->state = SIM_RQ_DISPATCH;
}

void
sim_queue_dispatch_add_tail (SimRequestQueue *q, SimRequest *rq)
{
  leave_elevator (q, rq);
  q->end_sector = sim_request_end_sector (rq);
  q->boundary_rq = rq;
  sim_list_add_tail (&rq->queuelist, &q->dispatch);
}

void
sim_queue_dispatch_sort (SimRequestQueue *q, SimRequest *rq)
{
  leave_elevator (q, rq);
  guint64 boundary = q->end_sector;
  SimList *entry;
  for (entry = q->dispatch.prev; entry != &q->dispatch; entry = entry->prev)
    {
      SimRequest *pos = sim_container_of (entry, SimRequest, queuelist);
      if (pos->op != rq->op)
        break;
      if (rq->sector >= boundary)
        {
          if (pos->sector < boundary)
            continue;
        }
      else if (pos->sector >= boundary)
        break;
      if (rq->sector >= pos->sector)
        break;
    }
  sim_list_add (&rq->queuelist, entry);
}

static SimRequest *
next_request (SimRequestQueue *q)
{
  if (sim_list_empty (&q->dispatch))
    {
      if (q->elevator->ops->queue_empty (q->elevator))
        return NULL;
      if (q->elevator->ops->dispatch (q->elevator, FALSE, sim_now (q->sim)) == 0)
        return NULL;
      g_assert (!sim_list_empty (&q->dispatch));
    }
  return sim_list_first_entry (&q->dispatch, SimRequest, queuelist);
}

void
sim_queue_run (SimRequestQueue *q)
{
  if (q->plugged)
    return;
  while (sim_device_can_start (q->device))
    {
      SimRequest *rq = next_request (q);
      if (rq == NULL)
        break;
      sim_list_del (&rq->queuelist);
      /* elv_next_request: starting the boundary request (or any, when
       * there is none) moves the head position the dispatch sort uses. */
      if (q->boundary_rq == NULL || q->boundary_rq == rq)
        {
          q->end_sector = sim_request_end_sector (rq);
          q->boundary_rq = NULL;
        }
      rq->state = SIM_RQ_STARTED;
      rq->dispatch_ns = sim_now (q->sim);
      q->in_flight++;
      q->counters.dispatched++;
      emit_rq (q, TRACE_ACT_ISSUE, rq);
      if (q->wbt)
        sim_wbt_issue (q->wbt, rq);
      if (q->elevator->ops->activate)
        q->elevator->ops->activate (q->elevator, rq, rq->dispatch_ns);
      sim_device_start (q->device, rq);
    }
}

/* ---- completion -------------------------------------------------------- */

void
sim_queue_complete_request (SimRequestQueue *q, SimRequest *rq)
{
  SimTime now = sim_now (q->sim);
  g_assert (rq->state == SIM_RQ_STARTED);
  g_assert (q->in_flight > 0);
  q->in_flight--;
  q->counters.completed++;
  q->counters.bytes[rq->op] += sim_request_bytes (rq);
  q->counters.ios[rq->op]++;
  emit_rq (q, TRACE_ACT_COMPLETE, rq);
  if (q->complete_hook)
    q->complete_hook (q->complete_hook_data, q, rq);
  if (q->elevator->ops->completed)
    q->elevator->ops->completed (q->elevator, rq, now);

  /* As in the kernel, the driver refills the device from the completion
   * path (scsi_run_queue) before the tasks woken by end_io get to run and
   * submit their next I/O: the dispatch decision made here does not see a
   * reader's next request, which is what anticipation and idling are for.
   * The request is freed first so that a woken submitter finds the pool
   * consistent.  blk-wbt (blk_mq_end_request): the window's sample
   * (blk_stat_add), then rq_qos_done as the request is freed; the tasks
   * it wakes take their tokens then and run, like those woken by end_io,
   * after the refill. */
  if (q->wbt)
    sim_wbt_stat_add (q->wbt, rq);
  guint8 wbt_flags = rq->wbt_flags;
  guint64 seq = rq->seq;
  SimBio *bio = rq->bio;
  rq->bio = rq->biotail = NULL;
  request_free (q, rq);
  sim_queue_run (q);
  if (q->wbt)
    sim_wbt_done (q->wbt, wbt_flags, seq);
  while (bio)
    {
      SimBio *next = bio->next;
      /* A request's bios come from anywhere in the pool: while this one
       * ends, start loading the one after next and the first thing the
       * next one's end_io touches (a page-cache bio's first page). */
      if (next != NULL)
        {
          __builtin_prefetch (next->next);
          __builtin_prefetch (next->end_io_item);
        }
      bio->end_io (q->sim, bio, now);
      bio_free (q, bio);
      bio = next;
    }
}

const char *
sim_op_name (SimOp op)
{
  return op == SIM_OP_WRITE ? "write" : "read";
}

void
sim_queue_exit_ioc (SimRequestQueue *q, SimIoContext *ioc)
{
  if (q->elevator->ops->exit_ioc)
    q->elevator->ops->exit_ioc (q->elevator, ioc, sim_now (q->sim));
}

gboolean
sim_queue_write_congested (const SimRequestQueue *q)
{
  return q->rq_count[SIM_OP_WRITE] >= q->limits.nr_requests - q->limits.nr_requests / 8;
}

gboolean
sim_queue_congestion_off (const SimRequestQueue *q, SimOp op)
{
  gint nr = (gint) q->limits.nr_requests;
  gint off = MAX (1, nr - nr / 8 - nr / 16 - 1);
  return (gint) q->rq_count[op] < off;
}
