/* sched-mq.h — helpers shared by the blk-mq schedulers mq-deadline and kyber
 * (Linux 6.18 block/blk-mq.c, block/mq-deadline.c, block/kyber-iosched.c;
 * ../shared/reference/kernel-algorithms.md §5).
 *
 * Shallow tag depth: both schedulers restrict some requests to the lowest
 * N scheduler tags (blk_mq_alloc_data.shallow_depth), so that they cannot
 * take every tag from synchronous reads.  The simulated queue's request pool
 * is not a tag set (it is the 2.6 pool, nr_requests per direction), so the
 * limit is modelled on top of it: a limited request holds a "shallow tag"
 * from the moment it enters the scheduler until it completes or is merged
 * away; when none is free it waits, outside the scheduler's lists, in FIFO
 * order, and enters the scheduler when a holder releases its tag.  This is
 * the effect of the allocating task sleeping in blk_mq_get_tag(), except
 * that the sleeping request is already formed (bios may still back-merge
 * into it through the core).  These helpers are inline: they are on the
 * hot path.  The header also declares what tests may ask mq-deadline and
 * kyber (sched-mq-deadline.c, sched-kyber.c).
 */
#pragma once

#include "models/sched/sched.h"
#include "sim/sim-queue.h"

G_BEGIN_DECLS

/* op_is_sync(): reads are always synchronous in the kernel; writes only
 * when flagged (O_DIRECT, O_SYNC, fsync). */
static inline gboolean
sched_mq_rq_is_sync (const SimRequest *rq)
{
  return rq->op == SIM_OP_READ || rq->sync;
}

/* The scheduler-tag count the shallow depths are relative to: the queue's
 * nr_requests (1 while probing tunables without a queue). */
static inline guint
sched_mq_nr_requests (const SchedQueue *e)
{
  return e->q ? e->q->limits.nr_requests : 1;
}

/* blk_rq_merge_ok(): since 5.17 requests of different I/O priorities do
 * not merge.  A NULL context is best effort, level 4. */
static inline gboolean
sched_mq_same_ioprio (const SimIoContext *a, const SimIoContext *b)
{
  int ca = a ? sim_ioc_class (a) : 2, cb = b ? sim_ioc_class (b) : 2;
  int la = a ? sim_ioc_level (a) : 4, lb = b ? sim_ioc_level (b) : 4;
  return ca == cb && la == lb;
}

typedef struct {
  SimList waiting;          /* limited requests without a tag (rq->fifo) */
  guint   held;             /* shallow tags in use */
  guint   waiting_count;
} SchedMqShallow;

/* rq->elv_priv[1] says whether a limited request holds a shallow tag or
 * waits for one (NULL: neither, e.g. a sync read). */
#define SCHED_MQ_SHALLOW_HELD    GINT_TO_POINTER (1)
#define SCHED_MQ_SHALLOW_WAITING GINT_TO_POINTER (2)

static inline void
sched_mq_shallow_init (SchedMqShallow *s)
{
  sim_list_init (&s->waiting);
  s->held = 0;
  s->waiting_count = 0;
}

static inline gboolean
sched_mq_shallow_holds (const SimRequest *rq)
{
  return rq->elv_priv[1] == SCHED_MQ_SHALLOW_HELD;
}

static inline gboolean
sched_mq_shallow_is_waiting (const SimRequest *rq)
{
  return rq->elv_priv[1] == SCHED_MQ_SHALLOW_WAITING;
}

/* Take a shallow tag for @rq if one of @depth is free: TRUE, the caller
 * inserts it.  Otherwise park it (FALSE). */
static inline gboolean
sched_mq_shallow_get (SchedMqShallow *s, SimRequest *rq, guint depth)
{
  if (s->held < depth && s->waiting_count == 0)
    {
      s->held++;
      rq->elv_priv[1] = SCHED_MQ_SHALLOW_HELD;
      return TRUE;
    }
  rq->elv_priv[1] = SCHED_MQ_SHALLOW_WAITING;
  sim_list_add_tail (&rq->fifo, &s->waiting);
  s->waiting_count++;
  return FALSE;
}

/* @rq leaves (completion or merged away): release its tag if it held one,
 * or take it off the waiting list.  Returns the waiting request that now
 * gets a tag (the caller inserts it), or NULL. */
static inline SimRequest *
sched_mq_shallow_put (SchedMqShallow *s, SimRequest *rq, guint depth)
{
  if (sched_mq_shallow_holds (rq))
    {
      g_assert (s->held > 0);
      s->held--;
      rq->elv_priv[1] = NULL;
    }
  else if (sched_mq_shallow_is_waiting (rq))
    {
      rq->elv_priv[1] = NULL;
      sim_list_del (&rq->fifo);
      s->waiting_count--;
      return NULL;
    }
  if (s->waiting_count == 0 || s->held >= depth)
    return NULL;
  SimRequest *next = sim_list_first_entry (&s->waiting, SimRequest, fifo);
  sim_list_del (&next->fifo);
  s->waiting_count--;
  s->held++;
  next->elv_priv[1] = SCHED_MQ_SHALLOW_HELD;
  return next;
}

/* For tests (g_assert inside them): internal consistency of the
 * scheduler's lists, trees and counters. */
gboolean sched_mq_deadline_check_invariants (SchedQueue *e);
gboolean sched_kyber_check_invariants       (SchedQueue *e);

/* Kyber's scheduling domains (6.18: by operation). */
typedef enum {
  SCHED_KYBER_READ,
  SCHED_KYBER_WRITE,
  SCHED_KYBER_DISCARD,
  SCHED_KYBER_OTHER,
  SCHED_KYBER_N_DOMAINS,
} SchedKyberDomain;

SchedKyberDomain sched_kyber_rq_domain    (const SimRequest *rq);
/* Current token depth of a domain, and tokens held (dispatched, not completed). */
guint            sched_kyber_domain_depth (SchedQueue *e, SchedKyberDomain domain);
guint            sched_kyber_domain_tokens_used (SchedQueue *e, SchedKyberDomain domain);

G_END_DECLS
