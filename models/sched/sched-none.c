/* sched-none.c — blk-mq without an I/O scheduler ("none", Linux 6.18
 * block/blk-mq.c; ../shared/reference/kernel-algorithms.md §1 and §5).
 *
 * With no elevator, blk-mq sends each request to the hardware queue in
 * the order it was submitted; what does not fit in the device's queue
 * waits in the software/hardware dispatch lists, still FIFO.  Bios merge
 * only where blk-mq merges them without a scheduler: in the task's plug
 * list and the per-CPU software queue.
 *
 * Simplifications: one FIFO stands for the software and hardware
 * dispatch lists (one CPU, one hardware queue).  Bios merge only in their
 * task's plug (the core's SimPlug, blk_attempt_plug_merge): without
 * SCHED_F_BIO_MERGE the core never merges into this FIFO, because a
 * request waits here only after direct issue failed, on hctx->dispatch,
 * where blk-mq does not merge.  The short window in which a request sits
 * in ctx->rq_lists (blk_mq_sched_bio_merge -> blk_bio_list_merge, its last
 * 8 entries) until the next hardware-queue run takes it is not modelled.
 * There are no request-to-request merges (no former/latter hooks), as in
 * blk-mq; requests of different I/O priorities do not merge (5.17+).  The
 * request pool stays the core's nr_requests per direction, where blk-mq
 * would give a tag set of the hardware depth.  No --trace-sched
 * decisions: there are none.
 */
#include "models/sched/sched.h"
#include "models/sched/sched-mq.h"

typedef struct {
  SimList queue;             /* submission order, through rq->fifo */
  guint   queued;
} NoneData;

static gboolean
none_init (SchedQueue *e, GError **error)
{
  NoneData *nd = e->priv;
  sim_list_init (&nd->queue);
  nd->queued = 0;
  return TRUE;
}

static void
none_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  NoneData *nd = e->priv;
  sim_list_add_tail (&rq->fifo, &nd->queue);
  nd->queued++;
}

static int
none_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  NoneData *nd = e->priv;
  if (sim_list_empty (&nd->queue))
    return 0;
  SimRequest *rq = sim_list_first_entry (&nd->queue, SimRequest, fifo);
  sim_list_del (&rq->fifo);
  nd->queued--;
  /* blk-mq issues in list order: no one-way sort of the dispatch list. */
  sched_dispatch_add_tail (e, rq);
  return 1;
}

static gboolean
none_queue_empty (SchedQueue *e)
{
  NoneData *nd = e->priv;
  return sim_list_empty (&nd->queue);
}

static void
none_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  NoneData *nd = e->priv;
  sim_list_del (&next->fifo);
  nd->queued--;
}

/* blk_rq_merge_ok(): no merges across I/O priorities (5.17+). */
static gboolean
none_allow_merge (SchedQueue *e, const SimRequest *rq, const SimBio *bio)
{
  return sched_mq_same_ioprio (rq->ioc, bio->ioc);
}

static void
none_dump (SchedQueue *e, GString *out)
{
  NoneData *nd = e->priv;
  g_string_append_printf (out, "none queued=%u\n", nd->queued);
}

const SchedOps sched_none_ops = {
  .name           = "none",
  .era            = "blk-mq, 6.18",
  .summary        = "no scheduler: submission order, merges in the task's plug only",
  .tunables       = NULL,
  .priv_size      = sizeof (NoneData),
  .flags          = SCHED_F_MQ,
  .init           = none_init,
  .add_request    = none_add_request,
  .dispatch       = none_dispatch,
  .queue_empty    = none_queue_empty,
  .merge_requests = none_merge_requests,
  .allow_merge    = none_allow_merge,
  .dump           = none_dump,
};
