/* sched-deadline.c — the deadline elevator, 2.6.28-2.6.33 rules
 * (block/deadline-iosched.c; ../shared/reference/kernel-algorithms.md §2).
 *
 *  - per direction: a sector-sorted tree and a FIFO; each request gets a
 *    deadline of now + read_expire or write_expire, in jiffies;
 *  - dispatch continues the current batch (next request in sector order of
 *    the batch's direction) until fifo_batch requests were sent;
 *  - a new batch prefers reads, unless writes have waited writes_starved
 *    read batches; it starts at the FIFO head when that request expired (or
 *    no sector successor exists), else at the sector successor;
 *  - deadlines are only checked between batches.
 * Not modelled: the 2.6.28 "alias" rule that dispatches a request at once
 * when another already starts at the same sector (the tree keeps both).
 */
#include "models/sched/sched.h"

#include <limits.h>

typedef struct {
  /* run time data */
  SimRbTree   sort_list[SIM_N_OPS];
  SimList     fifo_list[SIM_N_OPS];
  SimRequest *next_rq[SIM_N_OPS];  /* next in sector order after the last dispatched */
  int         batching;            /* requests dispatched in this batch */
  int         starved;             /* read batches chosen while writes waited */

  /* settings that change how the i/o scheduler behaves */
  int         fifo_expire[SIM_N_OPS];  /* jiffies */
  int         fifo_batch;
  int         writes_starved;
  int         front_merges;
} DeadlineData;

static const SchedTunable deadline_tunables[] = {
  { "read_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 2, 0, INT_MAX,
    G_STRUCT_OFFSET (DeadlineData, fifo_expire[SIM_OP_READ]), "ms",
    "soft deadline of a read (HZ/2: reads are waited on)" },
  { "write_expire", SCHED_TUNABLE_JIFFIES, 0, 5, 1, 0, INT_MAX,
    G_STRUCT_OFFSET (DeadlineData, fifo_expire[SIM_OP_WRITE]), "ms",
    "soft deadline of a write (5*HZ: writes are mostly asynchronous)" },
  { "writes_starved", SCHED_TUNABLE_INT, 2, 0, 0, INT_MIN, INT_MAX,
    G_STRUCT_OFFSET (DeadlineData, writes_starved), "read batches",
    "read batches allowed while writes wait" },
  { "front_merges", SCHED_TUNABLE_BOOL, 1, 0, 0, 0, 1,
    G_STRUCT_OFFSET (DeadlineData, front_merges), "bool",
    "look up front merges in the sector tree (rarely useful, cheap)" },
  { "fifo_batch", SCHED_TUNABLE_INT, 16, 0, 0, 0, INT_MAX,
    G_STRUCT_OFFSET (DeadlineData, fifo_batch), "requests",
    "requests per batch: longer batches seek less, raise latency" },
  { NULL }
};

static gboolean
deadline_init (SchedQueue *e, GError **error)
{
  DeadlineData *dd = e->priv;
  for (guint d = 0; d < SIM_N_OPS; d++)
    {
      sim_rb_tree_init (&dd->sort_list[d]);
      sim_list_init (&dd->fifo_list[d]);
    }
  return TRUE;
}

static void
deadline_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  DeadlineData *dd = e->priv;
  sched_rb_add (&dd->sort_list[rq->op], rq);
  gint64 deadline_j = sched_now_jiffies (e, now_ns) + dd->fifo_expire[rq->op];
  rq->fifo_deadline_ns = deadline_j * (SIM_NS_PER_S / (SimTime) e->hz);
  sim_list_add_tail (&rq->fifo, &dd->fifo_list[rq->op]);
}

static void
deadline_remove_request (DeadlineData *dd, SimRequest *rq)
{
  if (dd->next_rq[rq->op] == rq)
    dd->next_rq[rq->op] = sched_rb_next (rq);
  sim_list_del (&rq->fifo);
  sched_rb_del (&dd->sort_list[rq->op], rq);
}

static SchedMerge
deadline_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  DeadlineData *dd = e->priv;
  if (!dd->front_merges)
    return SCHED_NO_MERGE;
  SimRequest *rq = sched_rb_find_start (&dd->sort_list[bio->op],
                                        bio->sector + bio->nr_sectors);
  if (rq == NULL)
    return SCHED_NO_MERGE;
  *out = rq;
  return SCHED_FRONT_MERGE;
}

static void
deadline_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  DeadlineData *dd = e->priv;
  /* A front merge moved the start sector: re-sort. */
  if (type == SCHED_FRONT_MERGE)
    {
      sched_rb_del (&dd->sort_list[rq->op], rq);
      sched_rb_add (&dd->sort_list[rq->op], rq);
    }
}

static void
deadline_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  DeadlineData *dd = e->priv;
  /* Keep the earlier deadline, and its place in the FIFO. */
  if (sim_list_is_linked (&rq->fifo) && sim_list_is_linked (&next->fifo)
      && next->fifo_deadline_ns < rq->fifo_deadline_ns)
    {
      sim_list_del (&rq->fifo);
      sim_list_add (&rq->fifo, &next->fifo);
      rq->fifo_deadline_ns = next->fifo_deadline_ns;
    }
  deadline_remove_request (dd, next);
}

static SimRequest *
deadline_former_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_prev (rq);
}

static SimRequest *
deadline_latter_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_next (rq);
}

static void
deadline_move_request (SchedQueue *e, DeadlineData *dd, SimRequest *rq)
{
  dd->next_rq[SIM_OP_READ] = NULL;
  dd->next_rq[SIM_OP_WRITE] = NULL;
  dd->next_rq[rq->op] = sched_rb_next (rq);
  deadline_remove_request (dd, rq);
  sched_dispatch_add_tail (e, rq);
}

/* TRUE if the oldest request of @op has passed its deadline. */
static gboolean
deadline_check_fifo (SchedQueue *e, DeadlineData *dd, SimOp op, SimTime now_ns)
{
  SimRequest *rq = sim_list_first_entry (&dd->fifo_list[op], SimRequest, fifo);
  gint64 deadline_j = rq->fifo_deadline_ns / (SIM_NS_PER_S / (SimTime) e->hz);
  return sched_now_jiffies (e, now_ns) > deadline_j;
}

static int
deadline_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  DeadlineData *dd = e->priv;
  gboolean reads = !sim_list_empty (&dd->fifo_list[SIM_OP_READ]);
  gboolean writes = !sim_list_empty (&dd->fifo_list[SIM_OP_WRITE]);
  SimRequest *rq;
  SimOp op;

  /* Batches are reads XOR writes: continue the current one. */
  rq = dd->next_rq[SIM_OP_WRITE] ? dd->next_rq[SIM_OP_WRITE] : dd->next_rq[SIM_OP_READ];
  if (rq && dd->batching < dd->fifo_batch)
    goto dispatch_request;

  if (reads)
    {
      g_assert (dd->sort_list[SIM_OP_READ].count > 0);
      if (writes && dd->starved++ >= dd->writes_starved)
        goto dispatch_writes;
      op = SIM_OP_READ;
      goto dispatch_find_request;
    }
  if (writes)
    {
    dispatch_writes:
      g_assert (dd->sort_list[SIM_OP_WRITE].count > 0);
      dd->starved = 0;
      op = SIM_OP_WRITE;
      goto dispatch_find_request;
    }
  return 0;

dispatch_find_request:
  /* An expired FIFO head, or no sector successor: start from the oldest. */
  if (deadline_check_fifo (e, dd, op, now_ns) || dd->next_rq[op] == NULL)
    rq = sim_list_first_entry (&dd->fifo_list[op], SimRequest, fifo);
  else
    rq = dd->next_rq[op];
  dd->batching = 0;

dispatch_request:
  dd->batching++;
  deadline_move_request (e, dd, rq);
  return 1;
}

static gboolean
deadline_queue_empty (SchedQueue *e)
{
  DeadlineData *dd = e->priv;
  return sim_list_empty (&dd->fifo_list[SIM_OP_READ])
         && sim_list_empty (&dd->fifo_list[SIM_OP_WRITE]);
}

static void
deadline_dump (SchedQueue *e, GString *out)
{
  DeadlineData *dd = e->priv;
  g_string_append_printf (out,
                          "deadline reads=%" G_GSIZE_FORMAT " writes=%" G_GSIZE_FORMAT
                          " batching=%d starved=%d",
                          dd->sort_list[SIM_OP_READ].count, dd->sort_list[SIM_OP_WRITE].count,
                          dd->batching, dd->starved);
  for (guint d = 0; d < SIM_N_OPS; d++)
    if (dd->next_rq[d])
      g_string_append_printf (out, " next_%s=%" G_GUINT64_FORMAT, sim_op_name (d),
                              dd->next_rq[d]->sector);
  g_string_append_c (out, '\n');
}

const SchedOps sched_deadline_ops = {
  .name           = "deadline",
  .era            = "2.6.28-2.6.33",
  .summary        = "per-direction sector trees and FIFOs with expiry; read-preferring batches",
  .tunables       = deadline_tunables,
  .priv_size      = sizeof (DeadlineData),
  .init           = deadline_init,
  .add_request    = deadline_add_request,
  .dispatch       = deadline_dispatch,
  .queue_empty    = deadline_queue_empty,
  .merge          = deadline_merge,
  .merged         = deadline_merged,
  .merge_requests = deadline_merge_requests,
  .former_request = deadline_former_request,
  .latter_request = deadline_latter_request,
  .dump           = deadline_dump,
};
