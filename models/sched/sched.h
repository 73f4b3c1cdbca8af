/* sched.h — the elevator policies: their registry and the helpers they
 * share (request choice, sector-sorted trees: block/elevator.c elv_rb_*).
 *
 * The interface every policy implements (SchedOps, SchedQueue and the
 * core's helpers) belongs to the engine: sim/sim-elevator.h.
 */
#pragma once

#include <glib.h>
#include "sim/sim-elevator.h"
#include "sim/sim-rbtree.h"

G_BEGIN_DECLS

/* Registry. */
const SchedOps       *sched_ops_lookup (const char *name);
const SchedOps *const *sched_ops_all   (void);

extern const SchedOps sched_noop_ops;
extern const SchedOps sched_deadline_ops;
extern const SchedOps sched_as_ops;           /* sched-as.c, "anticipatory" */
extern const SchedOps sched_cfq_ops;          /* sched-cfq.c */
extern const SchedOps sched_none_ops;         /* sched-none.c (blk-mq) */
extern const SchedOps sched_mq_deadline_ops;  /* sched-mq-deadline.c */
extern const SchedOps sched_bfq_ops;          /* sched-bfq*.c */
extern const SchedOps sched_kyber_ops;        /* sched-kyber.c */
extern const SchedOps sched_linus_ops;        /* sched-linus.c (2.4) */

/* Invariant checks of policies, for g_assert() in tests only. */
gboolean sched_as_check_invariants (SchedQueue *e);

/* The better of two requests for a head at @last_sector (as_choose_req,
 * cfq_choose_req, bfq_choose_req): a sync request beats an async one; one
 * ahead of the head costs its distance, one up to @back_max_sectors behind
 * costs @back_penalty times its distance, one further back "wraps" and
 * loses to any that does not; of two wrapped, the lower sector (one long
 * backward seek); equal costs: the higher sector.  NULL-tolerant. */
SimRequest *sched_choose_req        (SimRequest *rq1, SimRequest *rq2, guint64 last_sector,
                                     guint64 back_max_sectors, guint back_penalty);

/* Sector-sorted tree helpers (elv_rb_*): requests are ordered by start
 * sector, then allocation order. */
void        sched_rb_add            (SimRbTree *tree, SimRequest *rq);
void        sched_rb_del            (SimRbTree *tree, SimRequest *rq);
SimRequest *sched_rb_find_start     (const SimRbTree *tree, guint64 sector);
SimRequest *sched_rb_next           (SimRequest *rq);
SimRequest *sched_rb_prev           (SimRequest *rq);
SimRequest *sched_rb_first          (const SimRbTree *tree);

G_END_DECLS
