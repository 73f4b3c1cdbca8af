/* sched-bfq.c — BFQ, Budget Fair Queueing, as in Linux 6.18
 * (block/bfq-iosched.c; ../shared/reference/kernel-algorithms.md §5.2).
 *
 *  - one sync queue per process (io context), async queues shared per
 *    priority class and level; weight = (8 - level) * 10 (idle class 10);
 *  - a queue in service keeps the device until it exhausts its budget (in
 *    sectors; async charged 3x in symmetric scenarios), empties (with or
 *    without idling), hits its budget timeout (timeout_sync x weight-raise
 *    ratio) or is preempted; the budget is then fed back (BUDGET_EXHAUSTED
 *    4x, BUDGET_TIMEOUT 2x, TOO_IDLE shrinks, NO_MORE_REQUESTS = service
 *    received); slow (seeky) queues and queues that time out early are
 *    charged time, not sectors;
 *  - B-WF2Q+ picks the next queue (sched-bfq-wf2q.c): classes are strict
 *    (RT, BE, IDLE; IDLE served after 200 ms of starvation); a queue that
 *    comes back in time after emptying continues its budget (hole recovery)
 *    and may preempt the in-service queue;
 *  - idling (slice_idle) when the in-service sync queue empties and
 *    bfq_better_to_idle() says so: for throughput (rotational without
 *    queueing, or a sequential I/O-bound queue with a short think time on a
 *    rotational or non-queueing device, with no raised queue busy) or for
 *    guarantees (raised queue, asymmetric weights or classes, only busy
 *    queue); I/O-bound means idle less than 1/5 of the time;
 *  - low_latency weight raising (x30) of interactive queues (default weight,
 *    busy again after 2 s idle, or new; for a duration from the estimated
 *    peak rate, 3-25 s; ends after 120000 sectors) and soft real-time ones
 *    (x3000, 300 ms windows); large bursts (8 queues created within 180 ms)
 *    are not raised;
 *  - early queue merge of sync queues whose requests land within 8192
 *    sectors of each other, within 100 ms of a queue's first I/O, looked
 *    for both when a request is added and when a bio tries to merge
 *    (bfq_allow_bio_merge: the bio's queue is merged first, so the bio can
 *    join a cooperator's adjacent request); a shared queue found seeky at
 *    expiry is split at its next request; "stable" merge of a queue
 *    created within 180 ms of the previous one, once both are 600 ms old,
 *    unless idling would serve it better (at once on a non-rotational
 *    queueing device; never split).  Note: two processes
 *    started together (seq-vs-random) are stably merged, as in the kernel;
 *  - max_budget autotunes to peak rate x timeout_sync once enough budgets
 *    were assigned (an average: about 11 assignments reach the 194 mark);
 *    the peak rate is estimated from dispatches as the kernel does; hw_tag
 *    (device queueing) is detected from in-driver counts.
 * Simplified: no cgroups (one flat level); no I/O injection while idling;
 * no waker/wakee detection, no tag depth limits, no multi-actuator, no
 * saved state restored on split; the B-WF2Q+ "next_in_service" cache is
 * not kept, so preemption treats "another queue may be next" as true; a
 * FIFO check inside a request merge, and a queue merge found at a bio
 * merge, use the time of the last hook that was given one; no
 * blk_mq_sched_try_insert_merge of a new request (the core has no insert
 * merge); queues live in their process's data, so a process owning a
 * shared queue keeps it on a split while the others leave.
 *
 * --trace-sched: budget_assign pid=N sectors=N, slice_expire pid=N
 * reason=(budget|timeout|too_idle|empty|preempted|forced), idle_arm pid=N
 * until_us=N, idle_fire pid=N, idle_cancel pid=N reason=rq, weight_raise
 * pid=N coeff=N kind=(interactive|softrt|async|merge|end), queue_merge
 * pid=N with=M reason=(close|stable), queue_split pid=N, dispatch pid=N
 * sector=N.
 */
#include "models/sched/sched-bfq-private.h"

#include <limits.h>
#include <string.h>

#define BFQ_DEFAULT_MAX_BUDGET   (16 * 1024)
#define BFQ_STATS_MIN_BUDGETS    194
#define BFQ_ASYNC_CHARGE_FACTOR  3
#define BFQ_MIN_TT_NS            (2 * SIM_NS_PER_MS)
#define BFQ_HW_QUEUE_THRESHOLD   3
#define BFQ_HW_QUEUE_SAMPLES     32
#define BFQQ_SEEK_THR            800
#define BFQQ_SECT_THR_NONROT     64
#define BFQQ_CLOSE_THR           (8 * 1024)
#define BFQ_RATE_MIN_SAMPLES     32
#define BFQ_RATE_MIN_INTERVAL_NS (300 * SIM_NS_PER_MS)
#define BFQ_RATE_REF_INTERVAL_NS SIM_NS_PER_S
#define BFQ_RATE_SHIFT           16
#define BFQ_SOFTRT_WEIGHT_FACTOR 100
#define BFQ_DEFAULT_WEIGHT       40
#define BFQ_MAX_SERVICE_FROM_WR  120000
#define FAR_PAST_J               (G_MININT64 / 4)
#define BFQ_STABLE_MERGING_MS    600   /* bfq_activation_stable_merging, bfq_late_stable_merging */

/* Reference peak rates (sectors/us << 16) and raising durations (ms):
 * [0] rotational, [1] non-rotational. */
static const guint32 ref_rate[2] = { 14000, 33000 };
static const int ref_wr_duration_ms[2] = { 7000, 2500 };

static const SchedTunable bfq_tunables[] = {
  { .name = "slice_idle", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (BfqData, slice_idle_ns), .unit = "ms",
    .help = "idle wait for the in-service sync queue's next request (0: never idle)",
    .default_ns = 8 * SIM_NS_PER_MS },
  { .name = "slice_idle_us", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (BfqData, slice_idle_ns), .unit = "us",
    .help = "slice_idle with microsecond resolution (same setting)",
    .default_ns = 8 * SIM_NS_PER_MS },
  { .name = "timeout_sync", .type = SCHED_TUNABLE_JIFFIES, .hz_num = 1, .hz_den = 8,
    .min = 1, .max = INT_MAX, .offset = G_STRUCT_OFFSET (BfqData, timeout_j), .unit = "ms",
    .help = "budget timeout (HZ/8): longest a queue keeps the device per budget" },
  { .name = "max_budget", .type = SCHED_TUNABLE_INT, .default_value = 0, .min = 0,
    .max = INT_MAX, .offset = G_STRUCT_OFFSET (BfqData, user_max_budget), .unit = "sectors",
    .help = "largest budget; 0 = autotune to peak rate x timeout_sync" },
  { .name = "back_seek_max", .type = SCHED_TUNABLE_INT, .default_value = 16 * 1024, .min = 0,
    .max = INT_MAX, .offset = G_STRUCT_OFFSET (BfqData, back_max_kib), .unit = "KiB",
    .help = "longest backward seek preferred to a forward one" },
  { .name = "back_seek_penalty", .type = SCHED_TUNABLE_INT, .default_value = 2, .min = 1,
    .max = INT_MAX, .offset = G_STRUCT_OFFSET (BfqData, back_penalty), .unit = "factor",
    .help = "cost of a backward seek relative to a forward one" },
  { .name = "fifo_expire_sync", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (BfqData, fifo_expire_ns[1]), .unit = "ms",
    .help = "age after which a sync request is served out of sector order",
    .default_ns = 125 * SIM_NS_PER_MS },
  { .name = "fifo_expire_async", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (BfqData, fifo_expire_ns[0]), .unit = "ms",
    .help = "age after which an async request is served out of sector order",
    .default_ns = 250 * SIM_NS_PER_MS },
  { .name = "low_latency", .type = SCHED_TUNABLE_BOOL, .default_value = 1, .min = 0, .max = 1,
    .offset = G_STRUCT_OFFSET (BfqData, low_latency), .unit = "bool",
    .help = "raise the weight of interactive and soft real-time queues" },
  { .name = "strict_guarantees", .type = SCHED_TUNABLE_BOOL, .default_value = 0, .min = 0,
    .max = 1, .offset = G_STRUCT_OFFSET (BfqData, strict_guarantees), .unit = "bool",
    .help = "always idle, one request in the drive at a time" },
  { NULL }
};

/* ---- small helpers ----------------------------------------------------- */

static inline gint64
jiffies (const BfqData *d, SimTime now_ns)
{
  return sched_now_jiffies (d->e, now_ns);
}

static inline gint64
msecs_to_j (const BfqData *d, gint64 ms)
{
  return sched_msecs_to_jiffies (d->e->hz, ms);
}

static inline gint64
jiffies_to_msecs (const BfqData *d, gint64 j)
{
  return j * 1000 / (gint64) d->e->hz;
}

static inline BfqServiceTree *
st_of (BfqData *d, const BfqQueue *q)
{
  return &d->st[q->class_idx];
}

static inline int
ioprio_to_weight (int level)
{
  return (8 - level) * 10;
}

static inline gboolean
queue_empty (const BfqQueue *q)
{
  return q->sort_list.count == 0;
}

static inline int
budget_left (const BfqQueue *q)
{
  return q->entity.budget - q->entity.service;
}

static inline gboolean
nonrot (const BfqData *d)
{
  return !sched_device_rotational (d->e);
}

/* Assumed for a non-rotational device until hw_tag detection says no. */
static inline gboolean
nonrot_with_queueing (const BfqData *d)
{
  return nonrot (d) && d->hw_tag != 0;
}

gboolean
sched_bfq_seeky (const BfqQueue *q)
{
  return __builtin_popcount (q->seek_history) > 19;
}

static gboolean
totally_seeky (const BfqQueue *q)
{
  return q->seek_history == G_MAXUINT32;
}


static int
bfq_max_budget (const BfqData *d)
{
  return d->budgets_assigned < BFQ_STATS_MIN_BUDGETS ? BFQ_DEFAULT_MAX_BUDGET : d->bfq_max_budget;
}

int
sched_bfq_min_budget (const BfqData *d)
{
  return (d->budgets_assigned < BFQ_STATS_MIN_BUDGETS ? BFQ_DEFAULT_MAX_BUDGET
                                                     : d->bfq_max_budget) / 32;
}

static const char *
reason_name (BfqExpiration r)
{
  switch (r)
    {
    case BFQQE_TOO_IDLE:         return "too_idle";
    case BFQQE_BUDGET_TIMEOUT:   return "timeout";
    case BFQQE_BUDGET_EXHAUSTED: return "budget";
    case BFQQE_NO_MORE_REQUESTS: return "empty";
    case BFQQE_PREEMPTED:        return "preempted";
    default:                     return "forced";
    }
}

/* ---- weights and raising ------------------------------------------------ */

/* queue_weights_tree: busy (or dispatching) queues that are not raised. */
static void
weights_remove (BfqData *d, BfqQueue *q)
{
  for (int i = 0; i < d->n_weights; i++)
    if (d->weights[i] == q->counted_weight)
      {
        if (--d->weight_counts[i] == 0)
          {
            d->n_weights--;
            d->weights[i] = d->weights[d->n_weights];
            d->weight_counts[i] = d->weight_counts[d->n_weights];
          }
        q->in_weights = FALSE;
        return;
      }
  g_assert_not_reached ();
}

static void
weights_update (BfqData *d, BfqQueue *q)
{
  gboolean want = (q->busy || q->dispatched > 0) && q->wr_coeff == 1;
  if (q->in_weights && (!want || q->counted_weight != q->entity.weight))
    weights_remove (d, q);
  if (!want || q->in_weights)
    return;
  q->counted_weight = q->entity.weight;
  q->in_weights = TRUE;
  for (int i = 0; i < d->n_weights; i++)
    if (d->weights[i] == q->counted_weight)
      {
        d->weight_counts[i]++;
        return;
      }
  g_assert (d->n_weights < BFQ_MAX_WEIGHTS);
  d->weights[d->n_weights] = q->counted_weight;
  d->weight_counts[d->n_weights++] = 1;
}

/* bfq_asymmetric_scenario. */
static gboolean
asymmetric (const BfqData *d, const BfqQueue *q)
{
  gboolean smallest = FALSE;
  if (q && q->in_weights)
    {
      smallest = TRUE;
      for (int i = 0; i < d->n_weights; i++)
        if (d->weights[i] < q->counted_weight)
          smallest = FALSE;
    }
  int classes = 0;
  for (int c = 0; c < BFQ_N_CLASSES; c++)
    classes += d->busy_per_class[c] > 0;
  return (!smallest && d->n_weights > 1) || classes > 1;
}

/* Async sectors cost 3x, unless raised or weights/classes differ. */
static int
serv_to_charge (const BfqData *d, const SimRequest *rq, const BfqQueue *q)
{
  if (q->sync || q->wr_coeff > 1 || asymmetric (d, q))
    return (int) rq->nr_sectors;
  return (int) rq->nr_sectors * BFQ_ASYNC_CHARGE_FACTOR;
}

static gint64
wr_duration (const BfqData *d)
{
  gint64 dur = (gint64) (d->rate_dur_prod / MAX (d->peak_rate, 1u));
  return CLAMP (dur, msecs_to_j (d, 3000), msecs_to_j (d, 25000));
}

/* Apply wr_coeff to the weight and the busy counters. */
static void
set_wr_coeff (BfqData *d, BfqQueue *q, int coeff, const char *kind, SimTime now)
{
  if (q->busy && q->wr_coeff > 1)
    d->wr_busy_queues--;
  q->wr_coeff = coeff;
  if (q->busy && q->wr_coeff > 1)
    d->wr_busy_queues++;
  bfq_entity_set_weight (st_of (d, q), &q->entity, q->entity.orig_weight * coeff);
  weights_update (d, q);
  SCHED_LOG (d->e, now, "weight_raise pid=%u coeff=%d kind=%s", q->pid, coeff, kind);
}

static void
end_wr (BfqData *d, BfqQueue *q, SimTime now)
{
  if (q->wr_cur_max_time_j != d->wr_rt_max_time_j)
    q->soft_rt_next_start_j = jiffies (d, now);
  q->wr_cur_max_time_j = 0;
  q->last_wr_start_finish_j = jiffies (d, now);
  set_wr_coeff (d, q, 1, "end", now);
}

static void
switch_back_to_interactive_wr (BfqData *d, BfqQueue *q, SimTime now)
{
  q->wr_cur_max_time_j = wr_duration (d);
  q->last_wr_start_finish_j = q->wr_start_at_switch_to_srt_j;
  set_wr_coeff (d, q, d->wr_coeff, "interactive", now);
}

/* bfq_update_wr_data: at each dispatch of the in-service queue. */
static void
update_wr_data (BfqData *d, BfqQueue *q, SimTime now)
{
  if (q->wr_coeff == 1)
    return;
  gint64 j = jiffies (d, now);
  if (q->in_large_burst)
    end_wr (d, q, now);
  else if (q->last_wr_start_finish_j + q->wr_cur_max_time_j < j)
    {
      if (q->wr_cur_max_time_j != d->wr_rt_max_time_j
          || q->wr_start_at_switch_to_srt_j + wr_duration (d) < j)
        end_wr (d, q, now);
      else
        switch_back_to_interactive_wr (d, q, now);
    }
  if (q->wr_coeff > 1 && q->wr_cur_max_time_j != d->wr_rt_max_time_j
      && q->service_from_wr > BFQ_MAX_SERVICE_FROM_WR)
    end_wr (d, q, now);
}

/* ---- queues ------------------------------------------------------------ */

/* The per-queue heuristics of a new queue (bfq_init_bfqq). */
static void
queue_reset_heuristics (BfqData *d, BfqQueue *q, SimTime now)
{
  gint64 j = jiffies (d, now);
  q->has_short_ttime = q->sync && q->class_idx != BFQ_CLASS_IDLE;
  q->just_created = q->sync;
  q->last_end_request_ns = now + 1;   /* "minus infinity": first think time is long */
  q->ttime_samples = q->ttime_total = q->ttime_mean_ns = 0;
  q->io_start_ns = now;
  q->tot_idle_ns = 0;
  q->io_bound = TRUE;
  q->max_budget = 2 * bfq_max_budget (d) / 3;
  q->budget_timeout_j = FAR_PAST_J;
  q->last_wr_start_finish_j = j;
  q->wr_start_at_switch_to_srt_j = FAR_PAST_J;
  q->split_time_j = FAR_PAST_J;
  q->soft_rt_next_start_j = j;
  q->seek_history = 1;   /* the first request is almost certainly seeky */
  q->last_request_pos = 0;
  q->coop = q->split_coop = FALSE;
}

static void
queue_init (BfqData *d, BfqQueue *q, guint pid, int class_idx, int level, gboolean sync,
            SimTime now)
{
  memset (q, 0, sizeof *q);
  sim_rb_tree_init (&q->sort_list);
  sim_list_init (&q->fifo);
  sim_list_init (&q->busy_link);
  sim_rb_node_clear (&q->entity.node);
  q->pid = pid;
  q->class_idx = class_idx;
  q->level = level;
  q->sync = sync;
  q->wr_coeff = 1;
  q->entity.orig_weight = q->entity.weight = ioprio_to_weight (level);
  q->initialised = TRUE;
  q->creation_time_j = jiffies (d, now);
  queue_reset_heuristics (d, q, now);
}

static void
ioc_prio (const SimIoContext *ioc, int *class_idx, int *level)
{
  if (ioc == NULL)
    {
      *class_idx = BFQ_CLASS_BE;
      *level = 4;
      return;
    }
  int cls = sim_ioc_class (ioc);
  *class_idx = cls == 1 ? BFQ_CLASS_RT : cls == 3 ? BFQ_CLASS_IDLE : BFQ_CLASS_BE;
  *level = *class_idx == BFQ_CLASS_IDLE ? 7 : CLAMP (sim_ioc_level (ioc), 0, 7);
}

static BfqIoc *
bic_of (BfqData *d, SimIoContext *ioc)
{
  if (ioc == NULL)
    return &d->null_ioc;
  BfqIoc *bic = sched_ioc_data (d->e, ioc);
  bic->ioc = ioc;
  return bic;
}

static BfqQueue *
async_queue (BfqData *d, SimIoContext *ioc, SimTime now)
{
  int class_idx, level;
  ioc_prio (ioc, &class_idx, &level);
  BfqQueue *q = &d->async_q[class_idx][level];
  if (!q->initialised)
    {
      queue_init (d, q, ioc ? ioc->pid : 0, class_idx, level, FALSE, now);
      q->nr_procs = 1;   /* pinned, like the kernel's group reference */
    }
  return q;
}

/* bfq_do_or_sched_stable_merge: a queue created within burst_interval of
 * the previous one (same priority) is paired with it (the QEMU I/O-worker
 * case): merged at its first request on a non-rotational queueing device,
 * else once both are 600 ms old, unless idling would serve it better. */
static void
schedule_stable_merge (BfqData *d, BfqIoc *bic, BfqQueue *q)
{
  BfqQueue *last = d->last_created;
  if (last == NULL
      || last->creation_time_j + msecs_to_j (d, BFQ_STABLE_MERGING_MS) < q->creation_time_j
      || last->class_idx != q->class_idx || last->level != q->level)
    d->last_created = q;
  else if (last->creation_time_j + d->burst_interval_j >= q->creation_time_j)
    {
      bic->stable_merge_q = last;
      bic->stable_early = nonrot_with_queueing (d);
    }
}

static BfqQueue *
sync_queue (BfqData *d, BfqIoc *bic, SimTime now)
{
  if (bic->sync_q == NULL)
    {
      int class_idx, level;
      ioc_prio (bic->ioc, &class_idx, &level);
      queue_init (d, &bic->own_sync, bic->ioc ? bic->ioc->pid : 0, class_idx, level, TRUE, now);
      bic->own_sync.nr_procs = 1;
      bic->own_sync.owner = bic;
      bic->sync_q = &bic->own_sync;
      schedule_stable_merge (d, bic, &bic->own_sync);
    }
  return bic->sync_q;
}

/* The queue a bio of @ioc would join, without creating it. */
static BfqQueue *
bio_queue (BfqData *d, SimIoContext *ioc, gboolean sync)
{
  if (sync)
    return bic_of (d, ioc)->sync_q;
  int class_idx, level;
  ioc_prio (ioc, &class_idx, &level);
  BfqQueue *q = &d->async_q[class_idx][level];
  return q->initialised ? q : NULL;
}

/* ---- request choice (bfq_choose_req, bfq_find_next_rq) ------------------ */

static SimRequest *
choose_req (const BfqData *d, SimRequest *rq1, SimRequest *rq2, guint64 last)
{
  if (rq1 == NULL || rq1 == rq2)
    return rq2;
  if (rq2 == NULL)
    return rq1;
  if (rq1->sync != rq2->sync)
    return rq1->sync ? rq1 : rq2;

  guint64 s1 = rq1->sector, s2 = rq2->sector, d1 = 0, d2 = 0;
  guint64 back_max = (guint64) d->back_max_kib * 2;
  gboolean wrap1 = FALSE, wrap2 = FALSE;
  /* One-way elevator, except short backward seeks at a penalty. */
  if (s1 >= last)
    d1 = s1 - last;
  else if (s1 + back_max >= last)
    d1 = (last - s1) * (guint64) d->back_penalty;
  else
    wrap1 = TRUE;
  if (s2 >= last)
    d2 = s2 - last;
  else if (s2 + back_max >= last)
    d2 = (last - s2) * (guint64) d->back_penalty;
  else
    wrap2 = TRUE;

  if (!wrap1 && !wrap2)
    {
      if (d1 != d2)
        return d1 < d2 ? rq1 : rq2;
      return s1 >= s2 ? rq1 : rq2;
    }
  if (wrap1 != wrap2)
    return wrap2 ? rq1 : rq2;
  /* Both behind: start with the one further back (one backward seek). */
  return s1 <= s2 ? rq1 : rq2;
}

static SimRequest *
check_fifo (BfqData *d, BfqQueue *q, SimRequest *last)
{
  if (q->fifo_expire)
    return NULL;
  q->fifo_expire = TRUE;
  SimRequest *rq = sim_list_first_entry (&q->fifo, SimRequest, fifo);
  if (rq == last || d->now_ns < rq->fifo_deadline_ns)
    return NULL;
  return rq;
}

static SimRequest *
find_next_rq (BfqData *d, BfqQueue *q, SimRequest *last)
{
  SimRequest *next = check_fifo (d, q, last);
  if (next)
    return next;
  SimRequest *prev = sched_rb_prev (last);
  next = sched_rb_next (last);
  if (next == NULL)
    {
      next = sched_rb_first (&q->sort_list);
      if (next == last)
        next = NULL;
    }
  return choose_req (d, next, prev, last->sector);
}

/* ---- busy / idle transitions ------------------------------------------- */

static void
add_busy (BfqData *d, BfqQueue *q)
{
  g_assert (!q->busy);
  q->busy = TRUE;
  d->busy_queues++;
  d->busy_per_class[q->class_idx]++;
  sim_list_add_tail (&q->busy_link, &d->busy_list);
  if (q->wr_coeff > 1)
    d->wr_busy_queues++;
  bfq_entity_activate (st_of (d, q), &q->entity, q->non_blocking_wait_rq, q->wr_coeff);
  q->non_blocking_wait_rq = FALSE;
  weights_update (d, q);
}

static void
del_busy (BfqData *d, BfqQueue *q)
{
  g_assert (q->busy);
  q->busy = FALSE;
  d->busy_queues--;
  d->busy_per_class[q->class_idx]--;
  sim_list_del (&q->busy_link);
  if (q->wr_coeff > 1)
    d->wr_busy_queues--;
  bfq_entity_deactivate (st_of (d, q), &q->entity, q == d->in_service);
  weights_update (d, q);
}

/* bfq_updated_next_req: the budget must fit the new first request. */
static void
updated_next_req (BfqData *d, BfqQueue *q)
{
  if (q->next_rq == NULL || q == d->in_service)
    return;
  int new_budget = MAX (MAX (q->max_budget, serv_to_charge (d, q->next_rq, q)),
                        q->entity.service);
  if (q->entity.budget != new_budget)
    {
      q->entity.budget = new_budget;
      if (q->entity.where == BFQ_ENT_ACTIVE)
        bfq_entity_requeue (st_of (d, q), &q->entity, FALSE);
    }
}

static void
served (BfqData *d, BfqQueue *q, int n, SimTime now)
{
  if (q->service_from_backlogged == 0)
    q->first_io_time_j = jiffies (d, now);
  if (q->wr_coeff > 1)
    q->service_from_wr += (guint64) n;
  q->service_from_backlogged += (guint64) n;
  bfq_st_served (st_of (d, q), &q->entity, n);
}

/* ---- idling decisions -------------------------------------------------- */

static gboolean
idling_boosts_thr_without_issues (const BfqData *d, const BfqQueue *q)
{
  if (q->nr_procs == 0)
    return FALSE;
  gboolean rot = !nonrot (d);
  gboolean rot_without_queueing = rot && d->hw_tag == 0;
  gboolean seq_io_bound = !sched_bfq_seeky (q) && q->io_bound && q->has_short_ttime;
  gboolean boosts = rot_without_queueing || ((rot || d->hw_tag == 0) && seq_io_bound);
  return boosts && d->wr_busy_queues == 0;
}

static gboolean
idling_needed_for_service_guarantees (const BfqData *d, const BfqQueue *q)
{
  if (q->nr_procs == 0)
    return FALSE;
  return (q->wr_coeff > 1
          && (d->wr_busy_queues < d->busy_queues || d->rq_in_driver >= q->dispatched + 4))
         || asymmetric (d, q) || d->busy_queues == 1;
}

gboolean
sched_bfq_better_to_idle (BfqData *d, BfqQueue *q)
{
  if (d->draining)
    return FALSE;
  if (d->strict_guarantees)
    return TRUE;
  if (d->slice_idle_ns == 0 || !q->sync || q->class_idx == BFQ_CLASS_IDLE)
    return FALSE;
  return idling_boosts_thr_without_issues (d, q) || idling_needed_for_service_guarantees (d, q);
}

static gboolean
must_idle (BfqData *d, BfqQueue *q)
{
  return queue_empty (q) && sched_bfq_better_to_idle (d, q);
}

static gboolean
budget_timed_out (const BfqData *d, const BfqQueue *q, SimTime now)
{
  return q->budget_timeout_j <= jiffies (d, now);
}

static gboolean
may_expire_for_budg_timeout (const BfqData *d, const BfqQueue *q, SimTime now)
{
  return (!q->wait_request || budget_left (q) >= q->entity.budget / 3)
         && budget_timed_out (d, q, now);
}

static void
cancel_idle (BfqData *d, BfqQueue *q, const char *reason, SimTime now)
{
  if (!q->wait_request)
    return;
  q->wait_request = FALSE;
  sched_timer_cancel (d->e, &d->idle_timer);
  SCHED_LOG (d->e, now, "idle_cancel pid=%u reason=%s", q->pid, reason);
}

static void
arm_slice_timer (BfqData *d, SimTime now)
{
  BfqQueue *q = d->in_service;
  q->wait_request = TRUE;
  SimTime sl = d->slice_idle_ns;
  /* Seeky queues in a symmetric scenario get a minimal wait; raised
   * queues a long one. */
  if (sched_bfq_seeky (q) && q->wr_coeff == 1 && !asymmetric (d, q))
    sl = MIN (sl, BFQ_MIN_TT_NS);
  else if (q->wr_coeff > 1)
    sl = MAX (sl, 20 * SIM_NS_PER_MS);
  d->last_idling_start_ns = now;
  sched_timer_arm (d->e, &d->idle_timer, now + sl);
  SCHED_LOG (d->e, now, "idle_arm pid=%u until_us=%" G_GINT64_FORMAT, q->pid,
             (now + sl) / SIM_NS_PER_US);
}

/* ---- expiration --------------------------------------------------------- */

void
sched_bfq_recalc_budget (BfqData *d, BfqQueue *q, BfqExpiration reason)
{
  int min_budget = sched_bfq_min_budget (d);
  int budget = q->wr_coeff == 1 ? q->max_budget : 2 * min_budget;

  if (q->sync && q->wr_coeff == 1)
    switch (reason)
      {
      case BFQQE_TOO_IDLE:
        /* Only shrink when nothing is outstanding: the batch fitted a
         * smaller budget.  With requests in flight, grow instead. */
        if (q->dispatched > 0)
          budget = MIN (budget * 2, d->bfq_max_budget);
        else if (budget > 5 * min_budget)
          budget -= 4 * min_budget;
        else
          budget = min_budget;
        break;
      case BFQQE_BUDGET_TIMEOUT:
        budget = MIN (budget * 2, d->bfq_max_budget);
        break;
      case BFQQE_BUDGET_EXHAUSTED:
        budget = MIN (budget * 4, d->bfq_max_budget);
        break;
      case BFQQE_NO_MORE_REQUESTS:
        budget = MAX (q->entity.service, min_budget);
        break;
      default:
        return;
      }
  else if (!q->sync)
    budget = d->bfq_max_budget;

  q->max_budget = budget;
  if (d->budgets_assigned >= BFQ_STATS_MIN_BUDGETS && d->user_max_budget == 0)
    q->max_budget = MIN (q->max_budget, d->bfq_max_budget);
  if (q->next_rq)
    q->entity.budget = MAX (q->max_budget, serv_to_charge (d, q->next_rq, q));
}

/* bfq_bfqq_is_slow: sets *delta_ms to the time in service. */
static gboolean
is_slow (const BfqData *d, const BfqQueue *q, gboolean compensate, gint64 *delta_ms,
         SimTime now)
{
  gboolean slow = sched_bfq_seeky (q);
  if (!q->sync)
    return FALSE;
  SimTime end = compensate ? d->last_idling_start_ns : now;
  gint64 delta_us = (end - d->last_budget_start_ns) / SIM_NS_PER_US;
  if (delta_us < 1000)
    {
      *delta_ms = nonrot (d) ? BFQ_MIN_TT_NS / SIM_NS_PER_MS : d->slice_idle_ns / SIM_NS_PER_MS;
      return slow;
    }
  *delta_ms = delta_us / 1000;
  /* Only long intervals say something about the rate. */
  if (delta_us > 20000)
    slow = q->entity.service < d->bfq_max_budget / 2;
  return slow;
}

static void
charge_time (BfqData *d, BfqQueue *q, gint64 time_ms, SimTime now)
{
  /* bfq_bfqq_charge_time uses the default HZ/8, not the tunable. */
  gint64 timeout_ms = MAX (jiffies_to_msecs (d, d->e->hz / 8), 1);
  gint64 bounded = MIN (time_ms, timeout_ms);
  int for_time = (int) ((gint64) d->bfq_max_budget * bounded / timeout_ms);
  int tot = MAX (for_time, q->entity.service);
  if (tot > q->entity.budget)
    q->entity.budget = tot;
  served (d, q, MAX (0, tot - q->entity.service), now);
}

static gint64
softrt_next_start (const BfqData *d, const BfqQueue *q, SimTime now)
{
  gint64 a = q->soft_rt_next_start_j;
  gint64 b = q->last_idle_bklogged_j
             + (gint64) ((guint64) d->e->hz * q->service_from_backlogged
                         / (guint64) d->wr_max_softrt_rate);
  gint64 c = jiffies (d, now) + d->slice_idle_ns / (SIM_NS_PER_S / (SimTime) d->e->hz) + 4;
  return MAX (a, MAX (b, c));
}

static void
reset_in_service (BfqData *d, SimTime now)
{
  BfqQueue *q = d->in_service;
  if (q->wait_request)
    {
      q->wait_request = FALSE;
      sched_timer_cancel (d->e, &d->idle_timer);
    }
  d->in_service = NULL;
}

/* __bfq_bfqq_expire: off the device, to the idle tree or requeued. */
static void
expire_common (BfqData *d, BfqQueue *q, BfqExpiration reason, SimTime now)
{
  if (q->coop && sched_bfq_seeky (q))
    q->split_coop = TRUE;
  if (queue_empty (q)
      && !(reason == BFQQE_PREEMPTED && idling_needed_for_service_guarantees (d, q)))
    {
      if (q->dispatched == 0)
        q->budget_timeout_j = jiffies (d, now);   /* when it went idle (for raising) */
      del_busy (d, q);
    }
  else
    bfq_entity_requeue (st_of (d, q), &q->entity, TRUE);
  reset_in_service (d, now);
}

static void
expire (BfqData *d, BfqQueue *q, gboolean compensate, BfqExpiration reason, SimTime now)
{
  g_assert (q == d->in_service);
  gint64 delta_ms = 0;
  gboolean slow = is_slow (d, q, compensate, &delta_ms, now);
  /* Slow and early-timed-out queues pay for time, not sectors. */
  if (q->wr_coeff == 1
      && (slow || (reason == BFQQE_BUDGET_TIMEOUT && budget_left (q) >= q->entity.budget / 3)))
    charge_time (d, q, delta_ms, now);
  if (d->low_latency && q->wr_coeff == 1)
    q->last_wr_start_finish_j = jiffies (d, now);
  if (d->low_latency && d->wr_max_softrt_rate > 0 && queue_empty (q))
    {
      if (q->dispatched == 0)
        q->soft_rt_next_start_j = softrt_next_start (d, q, now);
      else
        q->softrt_update = TRUE;
    }
  SCHED_LOG (d->e, now, "slice_expire pid=%u reason=%s service=%d budget=%d", q->pid,
             reason_name (reason), q->entity.service, q->entity.budget);
  sched_bfq_recalc_budget (d, q, reason);
  expire_common (d, q, reason, now);
  /* Waiting for a request: keep the service so that a request arriving
   * in time continues the same budget. */
  if (!q->busy && reason != BFQQE_BUDGET_TIMEOUT && reason != BFQQE_BUDGET_EXHAUSTED)
    q->non_blocking_wait_rq = TRUE;
  else
    q->entity.service = 0;
}

/* ---- selection ---------------------------------------------------------- */

static BfqQueue *
get_next_queue (BfqData *d, SimTime now)
{
  gint64 j = jiffies (d, now);
  int class_idx = BFQ_CLASS_RT;
  /* The idle class gets the device after 200 ms of starvation. */
  if (d->class_idle_last_service_j + d->e->hz / 5 < j)
    {
      if (d->st[BFQ_CLASS_IDLE].active.count > 0)
        class_idx = BFQ_CLASS_IDLE;
      d->class_idle_last_service_j = j;
    }
  for (; class_idx < BFQ_N_CLASSES; class_idx++)
    {
      BfqEntity *ent = bfq_st_lookup (&d->st[class_idx], FALSE);
      if (ent)
        {
          bfq_st_set_in_service (&d->st[class_idx], ent);
          return sim_container_of (ent, BfqQueue, entity);
        }
    }
  return NULL;
}

static BfqQueue *
set_in_service (BfqData *d, SimTime now)
{
  BfqQueue *q = get_next_queue (d, now);
  if (q)
    {
      gint64 j = jiffies (d, now);
      q->fifo_expire = FALSE;
      d->budgets_assigned = (d->budgets_assigned * 7 + 256) / 8;
      /* Soft real-time raising does not run down while the queue waits. */
      if (q->last_wr_start_finish_j < j && q->wr_coeff > 1
          && q->wr_cur_max_time_j == d->wr_rt_max_time_j && q->budget_timeout_j < j)
        {
          if (q->budget_timeout_j > q->last_wr_start_finish_j)
            q->last_wr_start_finish_j += j - q->budget_timeout_j;
          else
            q->last_wr_start_finish_j = j;
        }
      int coeff = q->wr_cur_max_time_j == d->wr_rt_max_time_j
                  ? 1 : q->entity.weight / q->entity.orig_weight;
      d->last_budget_start_ns = now;
      q->budget_timeout_j = j + (gint64) d->timeout_j * coeff;
      SCHED_LOG (d->e, now, "budget_assign pid=%u sectors=%d", q->pid, q->entity.budget);
    }
  d->in_service = q;
  d->in_serv_last_pos = 0;
  return q;
}

/* bfq_select_queue: keep the in-service queue, or expire it and pick. */
static BfqQueue *
select_queue (BfqData *d, SimTime now)
{
  BfqQueue *q = d->in_service;
  BfqExpiration reason = BFQQE_BUDGET_TIMEOUT;
  if (q == NULL)
    goto new_queue;
  if (may_expire_for_budg_timeout (d, q, now) && !must_idle (d, q))
    goto expire;

check_queue:
  if (q->next_rq)
    {
      if (serv_to_charge (d, q->next_rq, q) > budget_left (q))
        {
          reason = BFQQE_BUDGET_EXHAUSTED;
          goto expire;
        }
      cancel_idle (d, q, "rq", now);
      return q;
    }
  /* Empty: keep it while idling, or while its requests in flight may
   * still lead to idling. */
  if (q->wait_request || (q->dispatched != 0 && sched_bfq_better_to_idle (d, q)))
    return NULL;
  reason = BFQQE_NO_MORE_REQUESTS;

expire:
  expire (d, q, FALSE, reason, now);
new_queue:
  q = set_in_service (d, now);
  if (q)
    goto check_queue;
  return NULL;
}

/* ---- peak rate and device queueing ------------------------------------- */

static void
reset_rate_computation (BfqData *d, const SimRequest *rq, SimTime now)
{
  if (rq)
    {
      d->last_dispatch_ns = d->first_dispatch_ns = now;
      d->peak_rate_samples = 1;
      d->sequential_samples = 0;
      d->tot_sectors_dispatched = d->last_rq_max_size = rq->nr_sectors;
    }
  else
    d->peak_rate_samples = 0;
}

/* bfq_calc_max_budget: what the peak rate transfers in timeout_sync. */
static int
calc_max_budget (const BfqData *d)
{
  return (int) ((guint64) d->peak_rate * 1000 * (guint64) jiffies_to_msecs (d, d->timeout_j)
                >> BFQ_RATE_SHIFT);
}

static void
update_rate_reset (BfqData *d, const SimRequest *rq, SimTime now)
{
  if (d->peak_rate_samples < BFQ_RATE_MIN_SAMPLES
      || d->delta_from_first_ns < BFQ_RATE_MIN_INTERVAL_NS)
    goto reset;
  d->delta_from_first_ns = MAX (d->delta_from_first_ns,
                                d->last_completion_ns - d->first_dispatch_ns);
  guint64 us = MAX ((guint64) (d->delta_from_first_ns / SIM_NS_PER_US), 1u);
  guint64 rate = (d->tot_sectors_dispatched << BFQ_RATE_SHIFT) / us;
  /* Mostly random samples may only raise the estimate; absurd rates are
   * ignored. */
  if ((d->sequential_samples < (3 * d->peak_rate_samples) >> 2 && rate <= d->peak_rate)
      || rate > (20u << BFQ_RATE_SHIFT))
    goto reset;
  guint64 weight = (9 * (guint64) d->sequential_samples) / d->peak_rate_samples;
  weight = MIN (8u, weight * (guint64) d->delta_from_first_ns / BFQ_RATE_REF_INTERVAL_NS);
  guint64 divisor = 10 - weight;
  guint64 peak = (guint64) d->peak_rate * (divisor - 1) / divisor + rate / divisor;
  d->peak_rate = (guint32) MAX (1u, MIN (peak, G_MAXUINT32));
  if (d->user_max_budget == 0)
    d->bfq_max_budget = calc_max_budget (d);
reset:
  reset_rate_computation (d, rq, now);
}

static guint64
sdist (guint64 last_pos, const SimRequest *rq)
{
  if (last_pos == 0)
    return 0;
  return rq->sector > last_pos ? rq->sector - last_pos : last_pos - rq->sector;
}

static void
update_peak_rate (BfqData *d, const SimRequest *rq, SimTime now)
{
  if (d->peak_rate_samples == 0)
    {
      reset_rate_computation (d, rq, now);
      goto update_last;
    }
  /* A long idle device closes the observation interval. */
  if (now - d->last_dispatch_ns > 100 * SIM_NS_PER_MS && d->rq_in_driver == 0)
    goto update_rate_and_reset;
  d->peak_rate_samples++;
  if ((d->rq_in_driver > 0 || now - d->last_completion_ns < BFQ_MIN_TT_NS)
      && sdist (d->last_position, rq) < BFQQ_SEEK_THR)
    d->sequential_samples++;
  d->tot_sectors_dispatched += rq->nr_sectors;
  if (d->peak_rate_samples % 32)
    d->last_rq_max_size = MAX (rq->nr_sectors, d->last_rq_max_size);
  else
    d->last_rq_max_size = rq->nr_sectors;
  d->delta_from_first_ns = now - d->first_dispatch_ns;
  if (d->delta_from_first_ns < BFQ_RATE_REF_INTERVAL_NS)
    goto update_last;
update_rate_and_reset:
  update_rate_reset (d, rq, now);
update_last:
  d->last_position = sim_request_end_sector (rq);
  if (rq->elv_priv[0] == d->in_service)
    d->in_serv_last_pos = d->last_position;
  d->last_dispatch_ns = now;
}

static void
update_hw_tag (BfqData *d)
{
  BfqQueue *q = d->in_service;
  d->max_rq_in_driver = MAX (d->max_rq_in_driver, d->rq_in_driver);
  if (d->hw_tag == 1)
    return;
  if (d->rq_in_driver + d->queued <= BFQ_HW_QUEUE_THRESHOLD)
    return;
  /* An idling queue may not feed the drive enough to show its depth. */
  if (q && q->has_short_ttime && q->dispatched + (int) q->sort_list.count < BFQ_HW_QUEUE_THRESHOLD
      && d->rq_in_driver < BFQ_HW_QUEUE_THRESHOLD)
    return;
  if (d->hw_tag_samples++ < BFQ_HW_QUEUE_SAMPLES)
    return;
  d->hw_tag = d->max_rq_in_driver > BFQ_HW_QUEUE_THRESHOLD;   /* nonrot_with_queueing follows */
  d->max_rq_in_driver = 0;
  d->hw_tag_samples = 0;
}

/* ---- bursts and queue merging ------------------------------------------ */

static void
burst_forget (BfqData *d, BfqQueue *q)
{
  for (int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
    if (d->burst_list[i] == q)
      d->burst_list[i] = NULL;
  q->in_burst_list = FALSE;
}

static void
burst_reset (BfqData *d, BfqQueue *q)
{
  for (int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
    if (d->burst_list[i])
      d->burst_list[i]->in_burst_list = FALSE;
  memset (d->burst_list, 0, sizeof d->burst_list);
  /* A queue created while others are busy does not start a burst. */
  if (d->busy_queues == 0)
    {
      d->burst_list[0] = q;
      q->in_burst_list = TRUE;
      d->burst_size = 1;
    }
  else
    d->burst_size = 0;
}

/* bfq_handle_burst: 8 queues created within 180 ms of each other form a
 * large burst, whose queues are neither raised nor idled for guarantees. */
static void
handle_burst (BfqData *d, BfqQueue *q, SimTime now)
{
  gint64 j = jiffies (d, now);
  if (q->in_burst_list || q->in_large_burst || q->split_time_j + msecs_to_j (d, 10) >= j)
    return;
  if (d->last_ins_in_burst_j + d->burst_interval_j < j)
    {
      d->large_burst = FALSE;
      burst_reset (d, q);
    }
  else if (d->large_burst)
    q->in_large_burst = TRUE;
  else if (++d->burst_size == BFQ_LARGE_BURST_THRESH)
    {
      d->large_burst = TRUE;
      for (int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
        if (d->burst_list[i])
          {
            d->burst_list[i]->in_large_burst = TRUE;
            d->burst_list[i]->in_burst_list = FALSE;
            d->burst_list[i] = NULL;
          }
      q->in_large_burst = TRUE;
    }
  else
    {
      for (int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
        if (d->burst_list[i] == NULL)
          {
            d->burst_list[i] = q;
            break;
          }
      q->in_burst_list = TRUE;
    }
  d->last_ins_in_burst_j = j;
}

static gboolean
too_late_for_merging (const BfqData *d, const BfqQueue *q, SimTime now)
{
  return q->service_from_backlogged > 0
         && q->first_io_time_j + (gint64) (d->e->hz / 10) < jiffies (d, now);
}

static gboolean
may_be_close_cooperator (const BfqData *d, const BfqQueue *q, const BfqQueue *nq, SimTime now)
{
  if (too_late_for_merging (d, nq, now))
    return FALSE;
  if (q->class_idx == BFQ_CLASS_IDLE || q->class_idx != nq->class_idx)
    return FALSE;
  /* A seeky queue would not become sequential by merging. */
  if (sched_bfq_seeky (q) || sched_bfq_seeky (nq))
    return FALSE;
  return q->sync && nq->sync && nq->nr_procs > 0 && q->nr_procs > 0;
}

static gboolean
close_to (guint64 a, guint64 b)
{
  return (a > b ? a - b : b - a) <= BFQQ_CLOSE_THR;
}

/* bfq_setup_merge: schedule @q's merge into @nq (or the queue @nq was
 * itself merged into); NULL for a cycle or a queue no process uses. */
static BfqQueue *
setup_merge (BfqQueue *q, BfqQueue *nq)
{
  if (nq->nr_procs == 0)
    return NULL;
  while (nq->new_q)
    {
      if (nq->new_q == q)
        return NULL;
      nq = nq->new_q;
    }
  if (q->nr_procs == 0 || nq->nr_procs == 0 || nq == q)
    return NULL;
  q->new_q = nq;
  return nq;
}

/* bfq_setup_stable_merge / bfq_do_early_stable_merge. */
static BfqQueue *
setup_stable_merge (BfqData *d, BfqIoc *bic, BfqQueue *q, gboolean early)
{
  BfqQueue *nq = bic->stable_merge_q;
  bic->stable_merge_q = NULL;
  if ((!early && idling_boosts_thr_without_issues (d, q)) || q->nr_procs == 0
      || nq->nr_procs == 0)
    return NULL;
  nq = setup_merge (q, nq);
  if (nq == NULL)
    return NULL;
  bic->stably_merged = TRUE;
  if (!nq->coop && nq->owner)
    nq->owner->stably_merged = TRUE;
  return nq;
}

/* bfq_setup_cooperator: a queue to merge @q into, or NULL. */
static BfqQueue *
setup_cooperator (BfqData *d, BfqIoc *bic, BfqQueue *q, guint64 sector, SimTime now)
{
  gint64 j = jiffies (d, now);
  gint64 late = msecs_to_j (d, BFQ_STABLE_MERGING_MS);
  /* A merge already set up: follow it. */
  if (q->new_q)
    {
      BfqQueue *nq = q->new_q;
      while (nq->new_q && nq->new_q != q)
        nq = nq->new_q;
      return nq;
    }
  if (q->sync && bic->stable_merge_q && bic->stable_early && q->just_created)
    return setup_stable_merge (d, bic, q, TRUE);
  if (!nonrot_with_queueing (d) && q->sync && bic->stable_merge_q && !q->just_created
      && q->split_time_j + late < j && q->creation_time_j + late < j)
    return setup_stable_merge (d, bic, q, FALSE);
  if (nonrot_with_queueing (d))
    return NULL;
  if (too_late_for_merging (d, q, now) || d->busy_queues == 1)
    return NULL;
  BfqQueue *in_serv = d->in_service;
  if (in_serv && in_serv != q && close_to (sector, d->in_serv_last_pos)
      && may_be_close_cooperator (d, q, in_serv, now))
    {
      BfqQueue *nq = setup_merge (q, in_serv);
      if (nq)
        return nq;
    }
  /* The rq_pos_tree: the closest next request of another queue. */
  BfqQueue *best = NULL;
  guint64 best_dist = G_MAXUINT64;
  for (SimList *l = d->busy_list.next; l != &d->busy_list; l = l->next)
    {
      BfqQueue *o = sim_container_of (l, BfqQueue, busy_link);
      if (o == q || o->next_rq == NULL || o->class_idx == BFQ_CLASS_IDLE
          || too_late_for_merging (d, o, now))
        continue;
      guint64 pos = o->next_rq->sector;
      guint64 dist = pos > sector ? pos - sector : sector - pos;
      if (dist < best_dist)
        {
          best_dist = dist;
          best = o;
        }
    }
  if (best && best_dist <= BFQQ_CLOSE_THR && may_be_close_cooperator (d, q, best, now))
    return setup_merge (q, best);
  return NULL;
}

/* bfq_release_process_ref: a queue no process uses leaves the busy set
 * once empty. */
static void
release_process_ref (BfqData *d, BfqQueue *q)
{
  q->nr_procs--;
  if (q->busy && queue_empty (q) && q != d->in_service)
    del_busy (d, q);
}

static void
merge_queues (BfqData *d, BfqIoc *bic, BfqQueue *q, BfqQueue *nq, SimTime now)
{
  SCHED_LOG (d->e, now, "queue_merge pid=%u with=%u reason=%s", q->pid, nq->pid,
             bic->stably_merged ? "stable" : "close");
  if (q->io_bound)
    nq->io_bound = TRUE;
  q->io_bound = FALSE;
  if (nq->wr_coeff == 1 && q->wr_coeff > 1)
    {
      nq->wr_cur_max_time_j = q->wr_cur_max_time_j;
      nq->last_wr_start_finish_j = q->last_wr_start_finish_j;
      nq->wr_start_at_switch_to_srt_j = q->wr_start_at_switch_to_srt_j;
      set_wr_coeff (d, nq, q->wr_coeff, "merge", now);
    }
  if (q->wr_coeff > 1)
    set_wr_coeff (d, q, 1, "end", now);
  bic->sync_q = nq;
  if (bic->stable_merge_q == nq)
    bic->stable_merge_q = NULL;   /* already where a stable merge would put it */
  nq->coop = TRUE;
  nq->nr_procs++;
  if (d->last_created == q)
    d->last_created = nq;
  release_process_ref (d, q);
  q->just_created = FALSE;
}

/* bfq_split_bfqq: the process gets a queue of its own again.  Queues live
 * inside their owner's per-process data, so the owner of a shared queue
 * keeps it and the other processes leave it; the last one left clears the
 * shared state. */
static BfqQueue *
split_queue (BfqData *d, BfqIoc *bic, BfqQueue *q, SimTime now)
{
  BfqQueue *own = &bic->own_sync;
  if (q->nr_procs == 1 || own == q)
    {
      if (q->nr_procs == 1)
        {
          SCHED_LOG (d->e, now, "queue_split pid=%u", bic->ioc ? bic->ioc->pid : 0);
          q->coop = q->split_coop = FALSE;
        }
      return q;
    }
  SCHED_LOG (d->e, now, "queue_split pid=%u", bic->ioc ? bic->ioc->pid : 0);
  release_process_ref (d, q);
  g_assert (own->nr_procs == 0);
  own->nr_procs = 1;
  own->new_q = NULL;
  bic->sync_q = own;
  if (!own->busy && own->dispatched == 0)
    {
      int budget = own->entity.budget;
      queue_reset_heuristics (d, own, now);
      own->entity.budget = budget;
      own->just_created = FALSE;
    }
  own->split_time_j = jiffies (d, now);
  return own;
}

/* ---- request arrival ---------------------------------------------------- */

static gboolean
update_budg_for_activation (BfqData *d, BfqQueue *q, gboolean arrived_in_time)
{
  if (q->non_blocking_wait_rq && arrived_in_time && budget_left (q) > 0)
    {
      /* Continue the budget it expired with (hole recovery), and ask to
       * preempt so that the hole can be recovered. */
      q->entity.budget = MIN (budget_left (q), q->max_budget);
      q->entity.service = 0;
      return TRUE;
    }
  q->entity.service = 0;
  q->entity.budget = MAX (q->max_budget, serv_to_charge (d, q->next_rq, q));
  q->non_blocking_wait_rq = FALSE;
  return FALSE;
}

static void
update_wr_on_rq_arrival (BfqData *d, BfqQueue *q, int old_wr, gboolean wr_or_deserves,
                         gboolean interactive, gboolean in_burst, gboolean soft_rt,
                         SimTime now)
{
  gint64 j = jiffies (d, now);
  if (old_wr == 1 && wr_or_deserves)
    {
      if (interactive)
        {
          q->service_from_wr = 0;
          q->wr_cur_max_time_j = wr_duration (d);
          set_wr_coeff (d, q, d->wr_coeff, "interactive", now);
        }
      else
        {
          q->wr_start_at_switch_to_srt_j = FAR_PAST_J;
          q->wr_cur_max_time_j = d->wr_rt_max_time_j;
          set_wr_coeff (d, q, d->wr_coeff * BFQ_SOFTRT_WEIGHT_FACTOR, "softrt", now);
        }
      /* A budget close to the backlog, for latency. */
      q->entity.budget = MIN (q->entity.budget, 2 * sched_bfq_min_budget (d));
    }
  else if (old_wr > 1)
    {
      if (interactive)
        {
          q->wr_cur_max_time_j = wr_duration (d);
          if (q->wr_coeff != d->wr_coeff)
            set_wr_coeff (d, q, d->wr_coeff, "interactive", now);
        }
      else if (in_burst)
        set_wr_coeff (d, q, 1, "end", now);
      else if (soft_rt)
        {
          if (q->wr_cur_max_time_j != d->wr_rt_max_time_j)
            {
              q->wr_start_at_switch_to_srt_j = q->last_wr_start_finish_j;
              q->wr_cur_max_time_j = d->wr_rt_max_time_j;
              set_wr_coeff (d, q, d->wr_coeff * BFQ_SOFTRT_WEIGHT_FACTOR, "softrt", now);
            }
          q->last_wr_start_finish_j = j;
        }
    }
}

static gboolean
higher_class_or_weight (const BfqQueue *q, const BfqQueue *in_serv)
{
  if (q->class_idx < in_serv->class_idx)
    return TRUE;
  return q->entity.weight > in_serv->entity.weight;
}

/* bfq_bfqq_handle_idle_busy_switch. */
static void
handle_idle_busy_switch (BfqData *d, BfqQueue *q, int old_wr, gboolean stably_merged,
                         gboolean *interactive, SimTime now)
{
  gint64 j = jiffies (d, now);
  gboolean idle_for_long = q->dispatched == 0 && q->budget_timeout_j + d->wr_min_idle_time_j < j;
  gboolean arrived_in_time = now <= q->last_end_request_ns + 3 * d->slice_idle_ns;
  gboolean in_burst = q->in_large_burst;
  gboolean soft_rt = d->wr_max_softrt_rate > 0 && !totally_seeky (q) && !in_burst
                     && q->soft_rt_next_start_j < j && q->dispatched == 0
                     && q->entity.orig_weight == BFQ_DEFAULT_WEIGHT;
  *interactive = !in_burst && idle_for_long && q->entity.orig_weight == BFQ_DEFAULT_WEIGHT;
  /* Merged queues stay out of raising, unless merged for being created
   * together. */
  gboolean wr_or_deserves = d->low_latency
                            && (q->wr_coeff > 1
                                || (q->sync && (!q->coop || stably_merged)
                                    && (*interactive || soft_rt)));
  gboolean wants_preempt = update_budg_for_activation (d, q, arrived_in_time);

  /* Idle far longer than an interactive queue: its part of a burst is over. */
  if (!q->just_created && idle_for_long && q->budget_timeout_j + msecs_to_j (d, 10000) < j)
    {
      burst_forget (d, q);
      q->in_large_burst = FALSE;
    }
  q->just_created = FALSE;

  if (d->low_latency && q->split_time_j + d->wr_min_idle_time_j < j)
    update_wr_on_rq_arrival (d, q, old_wr, wr_or_deserves, *interactive, in_burst, soft_rt, now);

  q->last_idle_bklogged_j = j;
  q->service_from_backlogged = 0;
  q->softrt_update = FALSE;
  add_busy (d, q);

  BfqQueue *in_serv = d->in_service;
  if (in_serv && in_serv != q
      && ((wants_preempt && q->wr_coeff >= in_serv->wr_coeff)
          || higher_class_or_weight (q, in_serv) || !sched_bfq_better_to_idle (d, in_serv)))
    expire (d, in_serv, FALSE, BFQQE_PREEMPTED, now);
}

/* bfq_update_io_intensity: I/O-bound unless idle more than 1/5 of the time. */
static void
update_io_intensity (BfqQueue *q, SimTime now)
{
  SimTime tot_io = now - q->io_start_ns;
  if (queue_empty (q) && q->dispatched == 0 && now > q->last_end_request_ns)
    q->tot_idle_ns += now - q->last_end_request_ns;
  if (q->just_created)
    return;
  q->io_bound = !(q->tot_idle_ns * 5 > tot_io);
  if (tot_io > 200 * SIM_NS_PER_MS)
    {
      q->io_start_ns = now - tot_io / 2;
      q->tot_idle_ns /= 2;
    }
}

static void
add_request (BfqData *d, BfqQueue *q, SimRequest *rq, gboolean stably_merged, SimTime now)
{
  int old_wr = q->wr_coeff;
  gboolean interactive = FALSE;
  d->queued++;
  if (q->sync)
    update_io_intensity (q, now);
  sched_rb_add (&q->sort_list, rq);
  SimRequest *prev = q->next_rq;
  q->next_rq = choose_req (d, q->next_rq, rq, d->last_position);

  if (!q->busy)
    handle_idle_busy_switch (d, q, old_wr, stably_merged, &interactive, now);
  else
    {
      /* Async queues with sparse arrivals are raised too. */
      if (d->low_latency && old_wr == 1 && !rq->sync
          && q->last_wr_start_finish_j + d->wr_min_inter_arr_async_j < jiffies (d, now))
        {
          q->wr_cur_max_time_j = wr_duration (d);
          set_wr_coeff (d, q, d->wr_coeff, "async", now);
        }
      if (prev != q->next_rq)
        updated_next_req (d, q);
    }
  if (d->low_latency && (old_wr == 1 || q->wr_coeff == 1 || interactive))
    q->last_wr_start_finish_j = jiffies (d, now);
}

static void
update_io_thinktime (BfqData *d, BfqQueue *q, SimTime now)
{
  /* Only the time a queue spends with nothing queued or in flight. */
  if (q->dispatched > 0 || q->busy)
    return;
  SimTime cap = 2 * d->slice_idle_ns;
  SimTime elapsed = now >= q->last_end_request_ns ? now - q->last_end_request_ns : cap;
  elapsed = MIN (elapsed, cap);
  q->ttime_samples = (7 * q->ttime_samples + 256) / 8;
  q->ttime_total = (7 * q->ttime_total + 256 * (guint64) elapsed) / 8;
  q->ttime_mean_ns = (q->ttime_total + 128) / q->ttime_samples;
}

static void
update_has_short_ttime (BfqData *d, BfqQueue *q, SimTime now)
{
  if (!q->sync || q->class_idx == BFQ_CLASS_IDLE || d->slice_idle_ns == 0)
    return;
  if (q->split_time_j + d->wr_min_idle_time_j >= jiffies (d, now))
    return;   /* idle window just restored after a split */
  q->has_short_ttime = !(q->nr_procs == 0
                         || (q->ttime_samples > 80
                             && q->ttime_mean_ns > (guint64) (d->slice_idle_ns >> 1)));
}

static void
update_io_seektime (BfqData *d, BfqQueue *q, const SimRequest *rq, SimTime now)
{
  q->seek_history <<= 1;
  q->seek_history |= sdist (q->last_request_pos, rq) > BFQQ_SEEK_THR
                     && (!nonrot (d) || rq->nr_sectors < BFQQ_SECT_THR_NONROT);
  /* A totally seeky queue is no soft real-time application. */
  if (q->wr_coeff > 1 && q->wr_cur_max_time_j == d->wr_rt_max_time_j && totally_seeky (q))
    {
      if (q->wr_start_at_switch_to_srt_j + wr_duration (d) < jiffies (d, now))
        end_wr (d, q, now);
      else
        switch_back_to_interactive_wr (d, q, now);
    }
}


/* bfq_rq_enqueued. */
static void
rq_enqueued (BfqData *d, BfqQueue *q, SimRequest *rq, SimTime now)
{
  q->last_request_pos = sim_request_end_sector (rq);
  if (q == d->in_service && q->wait_request)
    {
      gboolean small_req = q->sort_list.count == 1 && rq->nr_sectors < 32;
      gboolean timed_out = budget_timed_out (d, q, now);
      /* A lone small request may grow by merges before dispatch; blk-mq
       * runs the queue right after insertion anyway. */
      if (small_req && idling_boosts_thr_without_issues (d, q) && !timed_out)
        return;
      cancel_idle (d, q, "rq", now);
      if (timed_out)
        expire (d, q, FALSE, BFQQE_BUDGET_TIMEOUT, now);
    }
}

static void
bfq_add_request_hook (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  BfqData *d = e->priv;
  d->now_ns = now_ns;
  BfqIoc *bic = bic_of (d, rq->ioc);
  BfqQueue *q;
  if (rq->sync)
    {
      q = sync_queue (d, bic, now_ns);
      /* Stably merged queues stay merged even when seeky. */
      if (q->coop && q->split_coop && !bic->stably_merged)
        q = split_queue (d, bic, q, now_ns);
      if (q->just_created && (d->burst_size > 0 || d->busy_queues == 0))
        handle_burst (d, q, now_ns);
      BfqQueue *nq = setup_cooperator (d, bic, q, rq->sector, now_ns);
      if (nq)
        {
          merge_queues (d, bic, q, nq, now_ns);
          q = nq;
        }
    }
  else
    q = async_queue (d, rq->ioc, now_ns);
  rq->elv_priv[0] = q;
  update_io_thinktime (d, q, now_ns);
  update_has_short_ttime (d, q, now_ns);
  update_io_seektime (d, q, rq, now_ns);
  add_request (d, q, rq, rq->sync && bic->stably_merged, now_ns);
  rq->fifo_deadline_ns = now_ns + d->fifo_expire_ns[rq->sync ? 1 : 0];
  sim_list_add_tail (&rq->fifo, &q->fifo);
  rq_enqueued (d, q, rq, now_ns);
}

/* ---- request removal, merging ------------------------------------------ */

static void
remove_request (BfqData *d, SimRequest *rq)
{
  BfqQueue *q = rq->elv_priv[0];
  if (q->next_rq == rq)
    {
      q->next_rq = find_next_rq (d, q, rq);
      updated_next_req (d, q);
    }
  sim_list_del (&rq->fifo);
  d->queued--;
  sched_rb_del (&q->sort_list, rq);
  if (queue_empty (q))
    {
      q->next_rq = NULL;
      if (q->busy && q != d->in_service)
        {
          del_busy (d, q);
          q->entity.budget = q->entity.service = 0;
        }
    }
}

static SchedMerge
bfq_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  BfqData *d = e->priv;
  BfqQueue *q = bio_queue (d, bio->ioc, (bio->flags & SIM_BIO_SYNC) != 0);
  if (q == NULL)
    return SCHED_NO_MERGE;
  SimRequest *rq = sched_rb_find_start (&q->sort_list, bio->sector + bio->nr_sectors);
  if (rq == NULL)
    return SCHED_NO_MERGE;
  *out = rq;
  return SCHED_FRONT_MERGE;
}

/* bfq_allow_bio_merge: the bio may join @rq only if both go to the same
 * queue.  As in the kernel, this is also where cooperating processes are
 * first merged: the bio's queue is merged (setup_cooperator) before the
 * comparison, so the bio of an interleaved reader can join the adjacent
 * request another reader left in the shared queue.  Without this the
 * requests stay separate, and one that falls behind the disk head can lose
 * next_rq to every new arrival (bfq_add_request) for as long as the
 * shared queue stays busy. */
static gboolean
bfq_allow_merge (SchedQueue *e, const SimRequest *rq, const SimBio *bio)
{
  BfqData *d = e->priv;
  gboolean sync = (bio->flags & SIM_BIO_SYNC) != 0;
  if (sync && !rq->sync)
    return FALSE;
  BfqQueue *q = bio_queue (d, bio->ioc, sync);
  if (q == NULL)
    return FALSE;
  if (sync)
    {
      BfqIoc *bic = bic_of (d, bio->ioc);
      BfqQueue *nq = setup_cooperator (d, bic, q, bio->sector, d->now_ns);
      if (nq)
        {
          merge_queues (d, bic, q, nq, d->now_ns);
          q = nq;
        }
    }
  return q == rq->elv_priv[0];
}

static void
bfq_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  BfqData *d = e->priv;
  if (type != SCHED_FRONT_MERGE)
    return;
  BfqQueue *q = rq->elv_priv[0];
  sched_rb_del (&q->sort_list, rq);
  sched_rb_add (&q->sort_list, rq);
  SimRequest *prev = q->next_rq;
  q->next_rq = choose_req (d, q->next_rq, rq, d->last_position);
  if (prev != q->next_rq)
    updated_next_req (d, q);
}

static void
bfq_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  BfqData *d = e->priv;
  BfqQueue *q = rq->elv_priv[0];
  /* Keep the older FIFO time, and its place. */
  if (q == next->elv_priv[0] && next->fifo_deadline_ns < rq->fifo_deadline_ns)
    {
      sim_list_del (&rq->fifo);
      sim_list_add (&rq->fifo, &next->fifo);
      rq->fifo_deadline_ns = next->fifo_deadline_ns;
    }
  if (q->next_rq == next)
    q->next_rq = rq;
  remove_request (d, next);
}

static SimRequest *
bfq_former_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_prev (rq);
}

static SimRequest *
bfq_latter_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_next (rq);
}

/* ---- dispatch ------------------------------------------------------------ */

static SimRequest *
dispatch_rq_from_queue (BfqData *d, BfqQueue *q, SimTime now)
{
  SimRequest *rq = q->next_rq;
  served (d, q, serv_to_charge (d, rq, q), now);
  q->dispatched++;
  update_peak_rate (d, rq, now);
  remove_request (d, rq);
  if (q == d->in_service)
    {
      update_wr_data (d, q, now);
      /* The idle class leaves the device as soon as others wait. */
      if (d->busy_queues > 1 && q->class_idx == BFQ_CLASS_IDLE)
        expire (d, q, FALSE, BFQQE_BUDGET_EXHAUSTED, now);
    }
  return rq;
}

static gboolean
dispatch_one (SchedQueue *e, BfqData *d, SimTime now)
{
  BfqQueue *q = select_queue (d, now);
  if (q == NULL)
    return FALSE;
  SimRequest *rq = dispatch_rq_from_queue (d, q, now);
  d->rq_in_driver++;
  SCHED_LOG (e, now, "dispatch pid=%u sector=%" G_GUINT64_FORMAT, q->pid, rq->sector);
  sched_dispatch_add_tail (e, rq);
  return TRUE;
}

static int
bfq_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  BfqData *d = e->priv;
  d->now_ns = now_ns;
  if (d->busy_queues == 0)
    return 0;
  if (!force)
    {
      /* strict_guarantees: one request in the drive at a time. */
      if (d->strict_guarantees && d->rq_in_driver > 0)
        return 0;
      return dispatch_one (e, d, now_ns) ? 1 : 0;
    }
  d->draining = TRUE;
  if (d->in_service)
    cancel_idle (d, d->in_service, "forced", now_ns);
  int n = 0;
  while (d->queued > 0 && dispatch_one (e, d, now_ns))
    n++;
  d->draining = FALSE;
  return n;
}

/* ---- completion, idle timer, process exit -------------------------------- */

static void
bfq_completed (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  BfqData *d = e->priv;
  BfqQueue *q = rq->elv_priv[0];
  d->now_ns = now_ns;
  update_hw_tag (d);
  g_assert (d->rq_in_driver > 0 && q->dispatched > 0);
  d->rq_in_driver--;
  q->dispatched--;
  if (q->dispatched == 0 && !q->busy)
    {
      q->budget_timeout_j = jiffies (d, now_ns);
      weights_update (d, q);
    }
  q->last_end_request_ns = now_ns;

  /* A completion slower than 1M sectors/s closes the rate interval. */
  gint64 delta_us = (now_ns - d->last_completion_ns) / SIM_NS_PER_US;
  if (delta_us > BFQ_MIN_TT_NS / SIM_NS_PER_US
      && ((guint64) d->last_rq_max_size << BFQ_RATE_SHIFT) / (guint64) delta_us
         < (1u << (BFQ_RATE_SHIFT - 10)))
    update_rate_reset (d, NULL, now_ns);
  d->last_completion_ns = now_ns;

  if (q->softrt_update && q->dispatched == 0 && queue_empty (q) && q->wr_coeff != d->wr_coeff)
    q->soft_rt_next_start_j = softrt_next_start (d, q, now_ns);

  if (d->in_service != q)
    return;
  if (must_idle (d, q))
    {
      if (q->dispatched == 0)
        arm_slice_timer (d, now_ns);
    }
  else if (may_expire_for_budg_timeout (d, q, now_ns))
    expire (d, q, FALSE, BFQQE_BUDGET_TIMEOUT, now_ns);
  else if (queue_empty (q) && (q->dispatched == 0 || !sched_bfq_better_to_idle (d, q)))
    expire (d, q, FALSE, BFQQE_NO_MORE_REQUESTS, now_ns);
}

static void
idle_timer_fired (SchedQueue *e, SchedTimer *t, SimTime now_ns)
{
  BfqData *d = e->priv;
  BfqQueue *q = d->in_service;
  d->now_ns = now_ns;
  if (q == NULL)
    return;
  q->wait_request = FALSE;
  SCHED_LOG (e, now_ns, "idle_fire pid=%u", q->pid);
  if (budget_timed_out (d, q, now_ns))
    expire (d, q, TRUE, BFQQE_BUDGET_TIMEOUT, now_ns);
  else if (queue_empty (q))
    expire (d, q, TRUE, BFQQE_TOO_IDLE, now_ns);
}

static void
bfq_exit_ioc (SchedQueue *e, SimIoContext *ioc, SimTime now_ns)
{
  BfqData *d = e->priv;
  BfqIoc *bic = bic_of (d, ioc);
  BfqQueue *q = bic->sync_q;
  d->now_ns = now_ns;
  if (q == NULL || q->nr_procs == 0)
    return;
  if (q == d->in_service)
    {
      SCHED_LOG (e, now_ns, "slice_expire pid=%u reason=forced service=%d budget=%d", q->pid,
                 q->entity.service, q->entity.budget);
      expire_common (d, q, BFQQE_BUDGET_TIMEOUT, now_ns);
      sched_kick (e);
    }
  if (d->last_created == q)
    d->last_created = NULL;
  bic->stable_merge_q = NULL;
  release_process_ref (d, q);
}

/* ---- setup ----------------------------------------------------------------- */

static gboolean
bfq_init (SchedQueue *e, GError **error)
{
  BfqData *d = e->priv;
  d->e = e;
  if (d->slice_idle_ns < 0 || d->fifo_expire_ns[0] < 0 || d->fifo_expire_ns[1] < 0)
    {
      g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                   "bfq: slice_idle and fifo_expire_* must not be negative");
      return FALSE;
    }
  /* The kernel's stores clamp FIFO expiry to at least 1 ms. */
  for (int i = 0; i < 2; i++)
    d->fifo_expire_ns[i] = MAX (d->fifo_expire_ns[i], SIM_NS_PER_MS);
  for (int c = 0; c < BFQ_N_CLASSES; c++)
    bfq_st_init (&d->st[c]);
  sim_list_init (&d->busy_list);
  sched_timer_init (e, &d->idle_timer, idle_timer_fired);
  d->bfq_max_budget = d->user_max_budget > 0 ? d->user_max_budget : BFQ_DEFAULT_MAX_BUDGET;
  /* The kernel's stores: strict_guarantees wants at least 8 ms of idling. */
  if (d->strict_guarantees && d->slice_idle_ns < 8 * SIM_NS_PER_MS)
    d->slice_idle_ns = 8 * SIM_NS_PER_MS;
  d->hw_tag = -1;
  d->wr_coeff = 30;
  d->wr_rt_max_time_j = msecs_to_j (d, 300);
  d->wr_min_idle_time_j = msecs_to_j (d, 2000);
  d->wr_min_inter_arr_async_j = msecs_to_j (d, 500);
  d->wr_max_softrt_rate = 7000;
  d->burst_interval_j = msecs_to_j (d, 180);
  d->last_ins_in_burst_j = FAR_PAST_J;
  int nr = nonrot (d) ? 1 : 0;
  d->rate_dur_prod = (guint64) ref_rate[nr] * (guint64) msecs_to_j (d, ref_wr_duration_ms[nr]);
  d->peak_rate = ref_rate[nr] * 2 / 3;
  /* Storing timeout_sync recomputes an automatic max_budget from the
   * (initial) peak rate. */
  if (d->user_max_budget == 0 && d->timeout_j != MAX ((int) e->hz / 8, 1))
    d->bfq_max_budget = calc_max_budget (d);
  return TRUE;
}

static gboolean
bfq_queue_empty (SchedQueue *e)
{
  BfqData *d = e->priv;
  return d->queued == 0;
}

static void
bfq_exit (SchedQueue *e)
{
  BfqData *d = e->priv;
  sched_timer_cancel (e, &d->idle_timer);
}

static void
bfq_dump (SchedQueue *e, GString *out)
{
  BfqData *d = e->priv;
  g_string_append_printf (out, "bfq busy=%d queued=%d in_driver=%d max_budget=%d peak_rate=%u"
                          " in_service=%u\n", d->busy_queues, d->queued, d->rq_in_driver,
                          d->bfq_max_budget, d->peak_rate, d->in_service ? d->in_service->pid : 0);
  for (SimList *l = d->busy_list.next; l != &d->busy_list; l = l->next)
    {
      BfqQueue *q = sim_container_of (l, BfqQueue, busy_link);
      g_string_append_printf (out, "  pid=%u %s w=%d budget=%d service=%d queued=%" G_GSIZE_FORMAT
                              " S=%" G_GUINT64_FORMAT " F=%" G_GUINT64_FORMAT "\n",
                              q->pid, q->sync ? "sync" : "async", q->entity.weight,
                              q->entity.budget, q->entity.service, q->sort_list.count,
                              q->entity.start, q->entity.finish);
    }
}

BfqData *
sched_bfq_data (SchedQueue *e)
{
  g_assert (e->ops == &sched_bfq_ops);
  return e->priv;
}

BfqQueue *
sched_bfq_queue_of (SchedQueue *e, SimIoContext *ioc, gboolean sync)
{
  return bio_queue (sched_bfq_data (e), ioc, sync);
}

gboolean
sched_bfq_check_invariants (SchedQueue *e)
{
  BfqData *d = sched_bfq_data (e);
  int busy = 0, wr_busy = 0, queued = 0;
  int per_class[BFQ_N_CLASSES] = { 0 };
  for (SimList *l = d->busy_list.next; l != &d->busy_list; l = l->next)
    {
      BfqQueue *q = sim_container_of (l, BfqQueue, busy_link);
      if (!q->busy)
        return FALSE;
      /* A busy queue is either in service or waiting on the active tree. */
      if (q != d->in_service && q->entity.where != BFQ_ENT_ACTIVE)
        return FALSE;
      if (q != d->in_service && queue_empty (q))
        return FALSE;
      busy++;
      per_class[q->class_idx]++;
      wr_busy += q->wr_coeff > 1;
      queued += (int) q->sort_list.count;
    }
  for (int c = 0; c < BFQ_N_CLASSES; c++)
    if (per_class[c] != d->busy_per_class[c] || !bfq_st_check (&d->st[c]))
      return FALSE;
  if (d->in_service && (!d->in_service->busy || d->in_service->entity.where != BFQ_ENT_NONE))
    return FALSE;
  return busy == d->busy_queues && wr_busy == d->wr_busy_queues && queued == d->queued;
}

const SchedOps sched_bfq_ops = {
  .name           = "bfq",
  .era            = "6.18",
  .summary        = "budget fair queueing: B-WF2Q+ over sector budgets, idling, weight raising",
  .tunables       = bfq_tunables,
  .priv_size      = sizeof (BfqData),
  .flags          = SCHED_F_MQ | SCHED_F_BIO_MERGE | SCHED_F_NO_WBT,
  .ioc_data_size  = sizeof (BfqIoc),
  .init           = bfq_init,
  .exit           = bfq_exit,
  .add_request    = bfq_add_request_hook,
  .dispatch       = bfq_dispatch,
  .queue_empty    = bfq_queue_empty,
  .merge          = bfq_merge,
  .merged         = bfq_merged,
  .merge_requests = bfq_merge_requests,
  .allow_merge    = bfq_allow_merge,
  .former_request = bfq_former_request,
  .latter_request = bfq_latter_request,
  .completed      = bfq_completed,
  .dump           = bfq_dump,
  .exit_ioc       = bfq_exit_ioc,
};
