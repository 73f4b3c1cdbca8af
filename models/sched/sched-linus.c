/* sched-linus.c — the Linux 2.4 elevator, elevator_linus, with the 2.4
 * block layer's request pool around it.  Follows 2.4.18
 * drivers/block/elevator.c (elevator_linus_merge, bh_rq_in_between,
 * elevator_linus_merge_cleanup, elevator_linus_merge_req; the file was the
 * same from July 2001 through 2.4.20-pre1, as the base of Jens Axboe's
 * "[patch] elevator seek accounting fixes", LKML 15 Aug 2002, shows),
 * include/linux/elevator.h (ELEVATOR_LINUS) and drivers/block/ll_rw_blk.c
 * of 2.4.18 and 2.4.19 (__make_request, get_request, __get_request_wait,
 * blkdev_release_request, attempt_merge).
 *
 *  - One list in service order (q->queue_head): the driver takes its head.
 *    Each request carries elevator_sequence, set to read_latency or
 *    write_latency when it is created.
 *  - Every buffer head walks the list from the tail.  Each request passed
 *    loses one; one whose sequence was already <= 0 ends the walk: nothing
 *    new goes in front of it (a barrier).  On the way the walk notes the
 *    first request after which the block falls in sector order
 *    (bh_rq_in_between: the insertion point, else the tail), and stops at
 *    a request of the same direction that the block extends at the back or
 *    the front, provided that request's sequence still covers the block's
 *    sectors.  A front merge costs the request the block's sectors; after
 *    any merge the requests behind it lose the block's sectors too
 *    (merge_cleanup).  Two requests that meet keep the smaller sequence.
 *  - Request pool: 64 requests per direction (blk_dev_init: 128 per queue
 *    above 32 MB of RAM, half for reads, half for writes), batch_requests
 *    = a quarter of the queue's requests.  era 2.4.18: one wait queue for
 *    both directions, every sleeper woken once batch_requests are free;
 *    era 2.4.19 (from 2.4.19-pre2: Andrew Morton's "[patch] get_request
 *    starvation fix", LKML Feb 2002): a FIFO wait queue per direction,
 *    one sleeper woken per freed request while batch_requests are free
 *    (SimPoolWake in sim-queue.h).  The elevator itself did not change
 *    between the two.
 *  - max_bomb_segments > 0 selects the read-latency variant Red Hat
 *    shipped in its 2.4.18 kernels (Andrew Morton's read-latency2, LKML
 *    "[patch, CFT] improved disk read latency", Jan 2002): a spent
 *    sequence no longer ends the walk but only stops insertions in front
 *    of it (merges still happen), no merge charges, and a read that merges
 *    nowhere goes in front of all but max_bomb_segments write "segments"
 *    (a write counts 1 + its sectors / 64).  Vanilla 2.4.18 had removed
 *    max_bomb_segments (elevator.c, Dave Jones, 20 Aug 2000).
 *  - era 2.4.20 (2.4.20 and 2.4.21): Jens Axboe's "[patch] elevator seek
 *    accounting fixes" (LKML 15 Aug 2002, for 2.4.20-pre2; the same code
 *    is the base of Andrea Arcangeli's June 2003 diffs against 2.4.21-rc7).
 *    The walk no longer ages what it passes; nothing new is put in front
 *    of a spent sequence, but merges go on past it; afterwards every
 *    request behind the merge point loses 1, or behind the insertion
 *    point ELV_LINUS_SEEK_COST = 16 (nothing when the block goes to the
 *    tail);
 *    a front merge costs its request 1; no merge_cleanup; read_latency
 *    2048 and write_latency 8192.  The request pool is 2.4.19's.
 *
 * Buffer heads: 2.4 submitted one buffer head per block and each walked the
 * queue; a simulated bio of N blocks is charged as N buffer heads, the
 * first walking as above and the others merging into the request it
 * landed in, charged as the era charges a merge (2.4.18: passing that
 * request and those behind it once more and charging those behind it the
 * block's sectors; 2.4.20: one to those behind it).  Not modelled:
 * READA failing on a short pool (2.4.19 final compiles it out); 2.4.22's
 * rework (Andrea Arcangeli and Chris Mason: one free list,
 * max_queue_sectors, ELV_LINUS_SEEK_COST 1, latencies 128/512).  2.4's
 * plugging through tq_disk, and a sleeper woken with its request looking
 * for a merge again (__make_request's "goto again"), are the queue
 * core's, with [host] kernel = 2.4 (sim/sim-queue.c's plug list,
 * sim_queue_set_merge_after_wait).
 */
#include "models/sched/sched.h"

#include <limits.h>

/* ELEVATOR_LINUS, include/linux/elevator.h of 2.4.18 ("read passovers",
 * "write passovers"), and of 2.4.20 (Jens Axboe's seek accounting). */
#define LINUS_READ_LATENCY_2_4_18  8192
#define LINUS_WRITE_LATENCY_2_4_18 16384
#define LINUS_READ_LATENCY_2_4_20  2048
#define LINUS_WRITE_LATENCY_2_4_20 8192
/* 2.4.20 include/linux/elevator.h: an insertion costs the requests behind
 * it 16 times what a merge (1) does. */
#define LINUS_SEEK_COST_2_4_20 16
/* blk_dev_init (2.4.18) / blk_init_free_list (2.4.19): 128 requests per
 * queue above 32 MB of RAM, alternately on the READ and WRITE lists. */
#define LINUS_NR_REQUESTS_PER_DIRECTION 64
/* 2.4.19 blk_grow_request_list: batch_requests at most 32. */
#define LINUS_BATCH_MAX_2_4_19 32
/* read-latency2: a write counts 1 + nr_sectors / 64 against max_bomb_segments. */
#define LINUS_BOMB_SECTORS_PER_SEGMENT 64

#define ERA_2_4_18 20418
#define ERA_2_4_19 20419
#define ERA_2_4_20 20420
#define ERA_2_4_21 20421

typedef struct {
  SimList     queue;               /* service order; requests linked by rq->fifo */
  guint64     gen;                 /* changes whenever the list does */

  /* The last walk's answer for the bio it was made for: where a request
   * for it goes if the core does not merge it (the merge failed on the
   * segment limit, or none was found). */
  SimList    *hint_pos;            /* insert after this node */
  guint64     hint_gen;
  guint64     hint_sector;
  SimOp       hint_op;
  gboolean    hint_valid;

  /* A bio merged by the last walk, charged once the core has merged it. */
  SimRequest *pending;
  guint32     pending_sectors;

  guint32     bh_sectors;
  gboolean    seek_accounting;     /* era >= 2.4.20 */
  guint64     walks;
  guint64     barrier_stops;       /* walks ended by a spent sequence */

  /* tunables */
  int         era;
  int         latency[SIM_N_OPS];
  int         max_bomb_segments;
  int         block_size;
} LinusData;

static const SchedTunable linus_tunables[] = {
  { "era", SCHED_TUNABLE_VERSION, ERA_2_4_18, 0, 0, 0, INT_MAX,
    G_STRUCT_OFFSET (LinusData, era), "version",
    "2.4.18: one wait queue, every request sleeper woken at batch_requests free; "
    "2.4.19: FIFO per direction, one woken (ll_rw_blk.c __get_request_wait); "
    "2.4.20-2.4.21: also Axboe's seek accounting (elevator.c)" },
  { "read_latency", SCHED_TUNABLE_INT, -1, 0, 0, -1, INT_MAX,
    G_STRUCT_OFFSET (LinusData, latency[SIM_OP_READ]), "passovers",
    "sequence of a new read (elevator.h ELEVATOR_LINUS; elvtune -r); "
    "-1: 8192 (2.4.18-19), 2048 (2.4.20-21)" },
  { "write_latency", SCHED_TUNABLE_INT, -1, 0, 0, -1, INT_MAX,
    G_STRUCT_OFFSET (LinusData, latency[SIM_OP_WRITE]), "passovers",
    "sequence of a new write (elevator.h ELEVATOR_LINUS; elvtune -w); "
    "-1: 16384 (2.4.18-19), 8192 (2.4.20-21)" },
  { "max_bomb_segments", SCHED_TUNABLE_INT, 0, 0, 0, 0, INT_MAX,
    G_STRUCT_OFFSET (LinusData, max_bomb_segments), "segments",
    "0: vanilla (removed in 2.4.0-test); >0: read-latency2 as in Red Hat 2.4.18 (shipped 6)" },
  { "block_size", SCHED_TUNABLE_INT, 4096, 0, 0, 512, 4096,
    G_STRUCT_OFFSET (LinusData, block_size), "bytes",
    "buffer head size: each block walks the queue (4096 ext2/ext3; 1024 a bare block device)" },
  { NULL }
};

/* elevator_sequence lives in the request's first elevator word. */
static int
seq_get (const SimRequest *rq)
{
  return (int) GPOINTER_TO_INT (rq->elv_priv[0]);
}

static void
seq_set (SimRequest *rq, int v)
{
  rq->elv_priv[0] = GINT_TO_POINTER (v);
}

static void
seq_sub (SimRequest *rq, gint64 cost)
{
  gint64 v = (gint64) seq_get (rq) - cost;
  seq_set (rq, (int) MAX (v, (gint64) INT_MIN));
}

static SimRequest *
entry_rq (SimList *l)
{
  return sim_container_of (l, SimRequest, fifo);
}

static gboolean
linus_rl2 (const LinusData *ld)
{
  return ld->max_bomb_segments > 0;
}

static gboolean
linus_init (SchedQueue *e, GError **error)
{
  LinusData *ld = e->priv;
  if (ld->era < ERA_2_4_18 || ld->era > ERA_2_4_21)
    {
      g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                   "linus era %d.%d.%d is not modelled (2.4.18 to 2.4.21)", ld->era / 10000,
                   ld->era / 100 % 100, ld->era % 100);
      return FALSE;
    }
  ld->seek_accounting = ld->era >= ERA_2_4_20;
  if (ld->seek_accounting && ld->max_bomb_segments > 0)
    {
      g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                   "linus max_bomb_segments (read-latency2) patches the 2.4.18-2.4.19 "
                   "elevator, not era %d.%d.%d", ld->era / 10000, ld->era / 100 % 100,
                   ld->era % 100);
      return FALSE;
    }
  if (ld->latency[SIM_OP_READ] < 0)
    ld->latency[SIM_OP_READ] = ld->seek_accounting ? LINUS_READ_LATENCY_2_4_20
                                                   : LINUS_READ_LATENCY_2_4_18;
  if (ld->latency[SIM_OP_WRITE] < 0)
    ld->latency[SIM_OP_WRITE] = ld->seek_accounting ? LINUS_WRITE_LATENCY_2_4_20
                                                    : LINUS_WRITE_LATENCY_2_4_18;
  if (ld->block_size % SIM_SECTOR_BYTES != 0)
    {
      g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                   "linus block_size %d is not a whole number of sectors", ld->block_size);
      return FALSE;
    }
  sim_list_init (&ld->queue);
  ld->bh_sectors = (guint32) ld->block_size / SIM_SECTOR_BYTES;
  if (e->q)
    {
      /* queue_nr_requests counts both lists; batch_requests is a quarter
       * of it (2.4.18 blk_dev_init), at most 32 (2.4.19). */
      guint batch = MAX (1u, 2 * e->q->limits.nr_requests / 4);
      if (ld->era >= ERA_2_4_19)
        sched_set_pool_wake (e, SIM_POOL_WAKE_BATCH_ONE, MIN (batch, LINUS_BATCH_MAX_2_4_19));
      else
        sched_set_pool_wake (e, SIM_POOL_WAKE_BATCH_ALL, batch);
    }
  return TRUE;
}

/* bh_rq_in_between: does a block at @sector belong right after @rq?  Yes
 * between @rq and its successor in sector order, or, where the list wraps
 * (successor below @rq), above @rq or below the successor; never after the
 * tail. */
static gboolean
linus_in_between (LinusData *ld, guint64 sector, SimRequest *rq)
{
  if (rq->fifo.next == &ld->queue)
    return FALSE;
  const SimRequest *next = entry_rq (rq->fifo.next);
  if (sector < next->sector && sector > rq->sector)
    return TRUE;
  if (next->sector > rq->sector)
    return FALSE;
  return sector > rq->sector || sector < next->sector;
}

/* read-latency2: a read that merged nowhere goes in front of all but
 * max_bomb_segments worth of writes, but no further back than the walk
 * put it. */
static SimRequest *
linus_bomb_position (LinusData *ld, SimRequest *walk_pos)
{
  int segments = 0;
  for (SimList *l = ld->queue.next; l != &ld->queue; l = l->next)
    {
      SimRequest *rq = entry_rq (l);
      if (rq == walk_pos)
        break;
      if (rq->op != SIM_OP_WRITE)
        continue;
      segments += 1 + (int) (rq->nr_sectors / LINUS_BOMB_SECTORS_PER_SEGMENT);
      if (segments >= ld->max_bomb_segments)
        return rq;
    }
  return walk_pos;
}

/* The merge @rq offers a block at @sector of @nr_sectors by position:
 * back, front or none (its direction and size checked by the caller). */
static SchedMerge
linus_adjacent (const SimRequest *rq, guint64 sector, guint32 nr_sectors)
{
  if (sim_request_end_sector (rq) == sector)
    return SCHED_BACK_MERGE;
  if (rq->sector == sector + nr_sectors)
    return SCHED_FRONT_MERGE;
  return SCHED_NO_MERGE;
}

/* 2.4.18 elevator_linus_merge for the first block of an I/O at @sector of
 * @nr_sectors (read-latency2's with max_bomb_segments): ages what it
 * passes; returns the merge target or the request to insert after. */
static SimRequest *
linus_walk_2_4_18 (SchedQueue *e, guint64 sector, guint32 nr_sectors, SimOp op,
                   SchedMerge *merge)
{
  LinusData *ld = e->priv;
  gboolean rl2 = linus_rl2 (ld);
  int count = (int) MIN (nr_sectors, ld->bh_sectors);
  guint64 max_sectors = e->q ? e->q->limits.max_sectors : G_MAXUINT32;
  gboolean merge_only = FALSE;
  SimRequest *req = NULL;

  for (SimList *l = ld->queue.prev; l != &ld->queue; l = l->prev)
    {
      SimRequest *rq = entry_rq (l);
      int seq = seq_get (rq);
      seq_set (rq, seq - 1);
      if (seq <= 0)
        {
          if (!rl2)
            {
              ld->barrier_stops++;
              break;
            }
          merge_only = TRUE;
        }
      if (req == NULL && !merge_only && linus_in_between (ld, sector, rq))
        req = rq;
      if (rq->op != op || (guint64) rq->nr_sectors + nr_sectors > max_sectors)
        continue;
      if (seq - 1 < count)
        {
          if (!rl2)
            break;
          merge_only = TRUE;
        }
      SchedMerge m = linus_adjacent (rq, sector, nr_sectors);
      if (m == SCHED_NO_MERGE)
        continue;
      *merge = m;
      if (m == SCHED_FRONT_MERGE && !rl2)
        seq_set (rq, seq - 1 - count);
      return rq;
    }
  return req;
}

/* 2.4.20 elevator_linus_merge: nothing is aged on the way; a spent
 * sequence stops insertions behind it, not merges; then the requests
 * behind the merge (1) or insertion point (LINUS_SEEK_COST_2_4_20) pay. */
static SimRequest *
linus_walk_2_4_20 (SchedQueue *e, guint64 sector, guint32 nr_sectors, SimOp op,
                   SchedMerge *merge)
{
  LinusData *ld = e->priv;
  guint64 max_sectors = e->q ? e->q->limits.max_sectors : G_MAXUINT32;
  gboolean merge_only = FALSE;
  SimRequest *req = NULL;

  for (SimList *l = ld->queue.prev; l != &ld->queue; l = l->prev)
    {
      SimRequest *rq = entry_rq (l);
      if (seq_get (rq) <= 0)
        merge_only = TRUE;
      if (req == NULL && !merge_only && linus_in_between (ld, sector, rq))
        req = rq;
      if (rq->op != op || (guint64) rq->nr_sectors + nr_sectors > max_sectors)
        continue;
      SchedMerge m = linus_adjacent (rq, sector, nr_sectors);
      if (m == SCHED_NO_MERGE)
        continue;
      *merge = m;
      if (m == SCHED_FRONT_MERGE)
        seq_sub (rq, 1);
      req = rq;
      break;
    }
  if (req)
    {
      gint64 cost = *merge != SCHED_NO_MERGE ? 1 : LINUS_SEEK_COST_2_4_20;
      for (SimList *l = req->fifo.next; l != &ld->queue; l = l->next)
        seq_sub (entry_rq (l), cost);
    }
  return req;
}

typedef struct {
  SchedMerge  merge;
  SimRequest *rq;        /* merge target */
  SimList    *pos;       /* insert after this node when no merge happens */
} LinusWalk;

/* The era's elevator_linus_merge; where a new request would go. */
static void
linus_walk (SchedQueue *e, guint64 sector, guint32 nr_sectors, SimOp op, LinusWalk *out)
{
  LinusData *ld = e->priv;
  ld->walks++;
  out->merge = SCHED_NO_MERGE;
  SimRequest *req = ld->seek_accounting
                    ? linus_walk_2_4_20 (e, sector, nr_sectors, op, &out->merge)
                    : linus_walk_2_4_18 (e, sector, nr_sectors, op, &out->merge);
  out->rq = req;
  if (out->merge == SCHED_BACK_MERGE)
    out->pos = &req->fifo;               /* the merge failed: right behind it */
  else if (out->merge == SCHED_FRONT_MERGE)
    out->pos = req->fifo.prev;           /* ... or right in front of it */
  else
    {
      if (linus_rl2 (ld) && op == SIM_OP_READ)
        req = linus_bomb_position (ld, req);
      out->pos = req ? &req->fifo : ld->queue.prev;
    }
}

static guint32
linus_blocks (const LinusData *ld, guint32 nr_sectors)
{
  return MAX (1u, (nr_sectors + ld->bh_sectors - 1) / ld->bh_sectors);
}

/* The blocks of an I/O after its first, each merging into @r.  2.4.18:
 * each walk passes every request from the tail down to @r once more, and
 * merge_cleanup charges the requests behind @r the block's sectors
 * (@cleanup_sectors: those charges in all, the first block's included
 * when it merged); read-latency2 has no cleanup.  2.4.20: each merge
 * costs the requests behind @r one. */
static void
linus_charge (LinusData *ld, SimRequest *r, guint32 extra_blocks, guint64 cleanup_sectors)
{
  gint64 behind = extra_blocks;
  gint64 self = ld->seek_accounting ? 0 : extra_blocks;
  if (!ld->seek_accounting && !linus_rl2 (ld))
    behind += (gint64) cleanup_sectors;
  for (SimList *l = r->fifo.next; l != &ld->queue; l = l->next)
    seq_sub (entry_rq (l), behind);
  seq_sub (r, self);
}

/* The merged bio of the last walk is now part of its request. */
static void
linus_charge_pending (LinusData *ld)
{
  if (ld->pending == NULL)
    return;
  guint32 extra = linus_blocks (ld, ld->pending_sectors) - 1;
  linus_charge (ld, ld->pending, extra, ld->pending_sectors);
  ld->pending = NULL;
}

static SchedMerge
linus_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  LinusData *ld = e->priv;
  LinusWalk walk;
  linus_walk (e, bio->sector, bio->nr_sectors, bio->op, &walk);
  ld->hint_pos = walk.pos;
  ld->hint_gen = ld->gen;
  ld->hint_sector = bio->sector;
  ld->hint_op = bio->op;
  ld->hint_valid = TRUE;
  ld->pending = NULL;
  if (walk.merge == SCHED_NO_MERGE)
    return SCHED_NO_MERGE;
  ld->pending = walk.rq;
  ld->pending_sectors = bio->nr_sectors;
  *out = walk.rq;
  return walk.merge;
}

static void
linus_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  LinusData *ld = e->priv;
  g_assert (ld->pending == rq);
  linus_charge_pending (ld);
  ld->gen++;
}

/* elevator_linus_merge_req: @next joins @rq, which keeps the smaller
 * sequence. */
static void
linus_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  LinusData *ld = e->priv;
  linus_charge_pending (ld);
  if (seq_get (next) < seq_get (rq))
    seq_set (rq, seq_get (next));
  sim_list_del (&next->fifo);
  ld->gen++;
}

/* __make_request after ELEVATOR_NO_MERGE (or a merge the segment limit
 * refused): the new request goes where the walk said, with a full
 * sequence.  A walk made before the submitter slept for a request is
 * stale: walk again, as 2.4 did from "again:". */
static void
linus_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  LinusData *ld = e->priv;
  SimList *pos;
  if (ld->hint_valid && ld->hint_gen == ld->gen && ld->hint_sector == rq->sector
      && ld->hint_op == rq->op)
    pos = ld->hint_pos;
  else
    {
      LinusWalk walk;
      linus_walk (e, rq->sector, rq->nr_sectors, rq->op, &walk);
      pos = walk.pos;
    }
  ld->hint_valid = FALSE;
  ld->pending = NULL;
  sim_list_add (&rq->fifo, pos);
  seq_set (rq, ld->latency[rq->op]);
  guint32 blocks = linus_blocks (ld, rq->nr_sectors);
  guint32 first = MIN (rq->nr_sectors, ld->bh_sectors);
  linus_charge (ld, rq, blocks - 1, rq->nr_sectors - first);
  ld->gen++;
  SCHED_LOG (e, now_ns, "insert %s sector=%" G_GUINT64_FORMAT " seq=%d",
             sim_op_name (rq->op), rq->sector, seq_get (rq));
}

/* The driver takes the head of the list (blkdev_dequeue_request). */
static int
linus_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  LinusData *ld = e->priv;
  int moved = 0;
  while (!sim_list_empty (&ld->queue))
    {
      SimRequest *rq = sim_list_first_entry (&ld->queue, SimRequest, fifo);
      sim_list_del (&rq->fifo);
      sched_dispatch_add_tail (e, rq);
      ld->gen++;
      moved++;
      if (!force)
        break;
    }
  return moved;
}

static gboolean
linus_queue_empty (SchedQueue *e)
{
  LinusData *ld = e->priv;
  return sim_list_empty (&ld->queue);
}

/* attempt_back_merge / attempt_front_merge look at list neighbours. */
static SimRequest *
linus_former_request (SchedQueue *e, SimRequest *rq)
{
  LinusData *ld = e->priv;
  return rq->fifo.prev == &ld->queue ? NULL : entry_rq (rq->fifo.prev);
}

static SimRequest *
linus_latter_request (SchedQueue *e, SimRequest *rq)
{
  LinusData *ld = e->priv;
  return rq->fifo.next == &ld->queue ? NULL : entry_rq (rq->fifo.next);
}

static void
linus_dump (SchedQueue *e, GString *out)
{
  LinusData *ld = e->priv;
  g_string_append_printf (out,
                          "linus era=%d queued=%" G_GSIZE_FORMAT " walks=%" G_GUINT64_FORMAT
                          " barrier_stops=%" G_GUINT64_FORMAT "\n",
                          ld->era, sim_list_length (&ld->queue), ld->walks, ld->barrier_stops);
  for (SimList *l = ld->queue.next; l != &ld->queue; l = l->next)
    {
      const SimRequest *rq = entry_rq (l);
      g_string_append_printf (out, "rq %c%" G_GUINT64_FORMAT " sectors=%u seq=%d\n",
                              rq->op == SIM_OP_WRITE ? 'W' : 'R', rq->sector, rq->nr_sectors,
                              seq_get (rq));
    }
}

const SchedOps sched_linus_ops = {
  .name                = "linus",
  .era                 = "2.4.18-2.4.21",
  .summary             = "2.4 elevator_linus: one sorted list, per-request passover budgets; "
                         "2.4 request free lists",
  .tunables            = linus_tunables,
  .priv_size           = sizeof (LinusData),
  .flags               = SCHED_F_SCAN_MERGE,
  .default_nr_requests = LINUS_NR_REQUESTS_PER_DIRECTION,
  .init                = linus_init,
  .add_request         = linus_add_request,
  .dispatch            = linus_dispatch,
  .queue_empty         = linus_queue_empty,
  .merge               = linus_merge,
  .merged              = linus_merged,
  .merge_requests      = linus_merge_requests,
  .former_request      = linus_former_request,
  .latter_request      = linus_latter_request,
  .dump                = linus_dump,
};
