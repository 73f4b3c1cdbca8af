/* sched.c — the elevator policies' registry, request choice
 * and the shared sector-sorted tree helpers (block/elevator.c elv_rb_*). */
#include "models/sched/sched.h"
#include "sim/sim-queue.h"
#include "sim/sim-units.h"
#include "sim/sim-device.h"

#include <stdio.h>
#include <stdarg.h>

#include <stdlib.h>
#include <string.h>

static const SchedOps *const registry[] = {
  &sched_noop_ops,
  &sched_deadline_ops,
  &sched_as_ops,
  &sched_cfq_ops,
  &sched_none_ops,
  &sched_mq_deadline_ops,
  &sched_bfq_ops,
  &sched_kyber_ops,
  &sched_linus_ops,
  NULL
};

const SchedOps *const *
sched_ops_all (void)
{
  for (guint i = 0; registry[i]; i++)
    g_assert (sched_ops_complete (registry[i]));
  return registry;
}

const SchedOps *
sched_ops_lookup (const char *name)
{
  for (const SchedOps *const *ops = sched_ops_all (); *ops; ops++)
    if (strcmp ((*ops)->name, name) == 0)
      return *ops;
  return NULL;
}

/* ---- request choice ----------------------------------------------------- */

/* Cost of reaching @sector from @last: distance ahead, penalised distance
 * a little behind, or "wraps" (returns FALSE) too far behind. */
static gboolean
seek_cost (guint64 sector, guint64 last, guint64 back_max, guint penalty, guint64 *cost)
{
  if (sector >= last)
    *cost = sector - last;
  else if (sector + back_max >= last)
    *cost = (last - sector) * (guint64) penalty;
  else
    return FALSE;
  return TRUE;
}

SimRequest *
sched_choose_req (SimRequest *rq1, SimRequest *rq2, guint64 last_sector,
                  guint64 back_max_sectors, guint back_penalty)
{
  if (rq1 == NULL || rq1 == rq2)
    return rq2;
  if (rq2 == NULL)
    return rq1;
  if (rq1->sync != rq2->sync)
    return rq1->sync ? rq1 : rq2;
  guint64 d1 = 0, d2 = 0;
  gboolean ok1 = seek_cost (rq1->sector, last_sector, back_max_sectors, back_penalty, &d1);
  gboolean ok2 = seek_cost (rq2->sector, last_sector, back_max_sectors, back_penalty, &d2);
  if (ok1 != ok2)
    return ok1 ? rq1 : rq2;
  if (!ok1)
    return rq1->sector <= rq2->sector ? rq1 : rq2;
  if (d1 != d2)
    return d1 < d2 ? rq1 : rq2;
  return rq1->sector >= rq2->sector ? rq1 : rq2;
}

/* ---- sector-sorted trees ----------------------------------------------- */

#define RQ_OF(node) sim_container_of ((node), SimRequest, rb_node)

static int
rq_compare (const SimRbNode *a, const SimRbNode *b)
{
  const SimRequest *ra = RQ_OF (a);
  const SimRequest *rb = RQ_OF (b);
  if (ra->sector != rb->sector)
    return ra->sector < rb->sector ? -1 : 1;
  if (ra->seq != rb->seq)
    return ra->seq < rb->seq ? -1 : 1;
  return 0;
}

static int
rq_compare_sector (const SimRbNode *node, gconstpointer key)
{
  guint64 sector = *(const guint64 *) key;
  const SimRequest *rq = RQ_OF (node);
  if (rq->sector == sector)
    return 0;
  return rq->sector < sector ? -1 : 1;
}

void
sched_rb_add (SimRbTree *tree, SimRequest *rq)
{
  sim_rb_insert (tree, &rq->rb_node, rq_compare);
}

void
sched_rb_del (SimRbTree *tree, SimRequest *rq)
{
  sim_rb_erase (tree, &rq->rb_node);
}

SimRequest *
sched_rb_find_start (const SimRbTree *tree, guint64 sector)
{
  SimRbNode *n = sim_rb_lower_bound (tree, &sector, rq_compare_sector);
  if (n && RQ_OF (n)->sector == sector)
    return RQ_OF (n);
  return NULL;
}

SimRequest *
sched_rb_next (SimRequest *rq)
{
  SimRbNode *n = sim_rb_next (&rq->rb_node);
  return n ? RQ_OF (n) : NULL;
}

SimRequest *
sched_rb_prev (SimRequest *rq)
{
  SimRbNode *n = sim_rb_prev (&rq->rb_node);
  return n ? RQ_OF (n) : NULL;
}

SimRequest *
sched_rb_first (const SimRbTree *tree)
{
  SimRbNode *n = sim_rb_first (tree);
  return n ? RQ_OF (n) : NULL;
}
