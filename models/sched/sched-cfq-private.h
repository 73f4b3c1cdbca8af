/* sched-cfq-private.h — what the CFQ tests may inspect of sched-cfq.c:
 * resolved era switches, slice lengths, per-process statistics and an
 * invariant check.  Not for other policies or the core. */
#pragma once

#include "models/sched/sched.h"

G_BEGIN_DECLS

/* Era switches after init resolved the "-1 = per era" defaults. */
typedef struct {
  int era;              /* 20628, 20631, 20633 ... */
  int close_cooperator;
  int queue_merge;
  int low_latency;
  int workload_trees;
} SchedCfqSwitches;

void     sched_cfq_switches        (SchedQueue *e, SchedCfqSwitches *out);

/* cfq_prio_slice(): the slice in jiffies of a sync or async queue of
 * priority level @prio (0..7) at the elevator's HZ. */
int      sched_cfq_prio_slice      (SchedQueue *e, gboolean sync, int prio);
/* cfq_prio_to_maxrq(): async requests per slice when others are busy. */
int      sched_cfq_async_maxrq     (SchedQueue *e, int prio);

/* What CFQ knows about the sync queue of @ioc; FALSE if it has none.
 * Means are in the kernel's units (jiffies, sectors). */
typedef struct {
  gboolean idle_window;
  gboolean seeky;
  gboolean coop;            /* 2.6.33: a merged (shared) queue */
  guint    ttime_samples;
  guint64  ttime_mean;
  guint    seek_samples;
  guint64  seek_mean;
  guint    shared_by;       /* processes whose sync requests go to this queue */
} SchedCfqProcInfo;

gboolean sched_cfq_proc_info       (SchedQueue *e, SimIoContext *ioc, SchedCfqProcInfo *out);
/* TRUE if @a and @b currently send sync requests to the same queue. */
gboolean sched_cfq_same_queue      (SchedQueue *e, SimIoContext *a, SimIoContext *b);
/* hw_tag as detected so far. */
gboolean sched_cfq_hw_tag          (SchedQueue *e);

/* Structural invariants (trees, counters); for g_assert in tests. */
gboolean sched_cfq_check_invariants (SchedQueue *e);

G_END_DECLS
