/* sched-noop.c — the noop elevator (block/noop-iosched.c, 2.6.x): one FIFO.
 * Merging happens only through the core (last_merge and the back-merge
 * hash); dispatch moves one request per call with the one-way sort of the
 * dispatch list, so with a shallow device queue the order is FIFO. */
#include "models/sched/sched.h"

typedef struct {
  SimList queue;
} NoopData;

static gboolean
noop_init (SchedQueue *e, GError **error)
{
  NoopData *nd = e->priv;
  sim_list_init (&nd->queue);
  return TRUE;
}

static void
noop_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  NoopData *nd = e->priv;
  sim_list_add_tail (&rq->fifo, &nd->queue);
}

static int
noop_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  NoopData *nd = e->priv;
  if (sim_list_empty (&nd->queue))
    return 0;
  SimRequest *rq = sim_list_first_entry (&nd->queue, SimRequest, fifo);
  sim_list_del (&rq->fifo);
  sched_dispatch_sort (e, rq);
  return 1;
}

static gboolean
noop_queue_empty (SchedQueue *e)
{
  NoopData *nd = e->priv;
  return sim_list_empty (&nd->queue);
}

static void
noop_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  sim_list_del (&next->fifo);
}

static SimRequest *
noop_former_request (SchedQueue *e, SimRequest *rq)
{
  NoopData *nd = e->priv;
  if (rq->fifo.prev == &nd->queue)
    return NULL;
  return sim_container_of (rq->fifo.prev, SimRequest, fifo);
}

static SimRequest *
noop_latter_request (SchedQueue *e, SimRequest *rq)
{
  NoopData *nd = e->priv;
  if (rq->fifo.next == &nd->queue)
    return NULL;
  return sim_container_of (rq->fifo.next, SimRequest, fifo);
}

static void
noop_dump (SchedQueue *e, GString *out)
{
  NoopData *nd = e->priv;
  g_string_append_printf (out, "noop queued=%" G_GSIZE_FORMAT "\n", sim_list_length (&nd->queue));
}

const SchedOps sched_noop_ops = {
  .name           = "noop",
  .era            = "2.6.x (blk-mq 'none' is its successor)",
  .summary        = "one FIFO; merging by the core only",
  .tunables       = NULL,
  .priv_size      = sizeof (NoopData),
  .init           = noop_init,
  .add_request    = noop_add_request,
  .dispatch       = noop_dispatch,
  .queue_empty    = noop_queue_empty,
  .merge_requests = noop_merge_requests,
  .former_request = noop_former_request,
  .latter_request = noop_latter_request,
  .dump           = noop_dump,
};
