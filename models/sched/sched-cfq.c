/* sched-cfq.c — CFQ, Completely Fair Queueing, from 2.6.28 to 2.6.33 in one
 * implementation whose era features are switches
 * (block/cfq-iosched.c at 2.6.28, 2.6.31, 2.6.33;
 * ../shared/reference/kernel-algorithms.md §4).
 *
 * 2.6.28 base (era = 2.6.28, every switch off):
 *  - a cfq_queue per (process, sync) — the sync queue hangs off the
 *    process's cic (sched_ioc_data) — and shared async queues per
 *    (class, level); each queue has a sector tree, a FIFO and next_rq
 *    chosen AS-style (back_seek_max, back_seek_penalty, from last_position);
 *  - one service tree of busy queues ordered by class, then rb_key =
 *    now + (busy - 1) * (slice(sync, 0) - slice(queue)) + slice_resid;
 *  - the active queue runs a slice of base + base/5 * (4 - prio), started
 *    at its first completion; rounds of quantum requests while others are
 *    busy (a lone queue moves all it has); the FIFO is looked at once per
 *    slice; async queues stop while sync requests are in flight and expire
 *    when a round reaches 2 * (async_rq + async_rq * (7 - prio)) requests
 *    and others are busy (2.6.28 counts the round, so only levels 6-7 can);
 *  - idling: after a completion leaves the active sync queue empty and
 *    nothing is in the driver, wait slice_idle (2 ms when seeky) for the
 *    process's next request; idle_window off by think time (> slice_idle)
 *    or by hw_tag with seeky requests (mean > 8192 sectors);
 *  - preemption on enqueue (slice used, idle class, sync over async, RT
 *    over non-RT, close request while waiting) and by a busy RT queue at
 *    selection (RT preemption is in the 2.6.28 source; the reference dates
 *    it 2.6.30); hw_tag detection; may_queue MUST for the queue being
 *    waited for.
 * close_cooperator (era 2.6.30 and 2.6.31; "cfq-iosched: add close
 *    cooperator code", a36e71f9, Jens Axboe, April 2009, crediting Jeff
 *    Moyer's initial implementation): per-level trees of busy queues keyed
 *    by the sector of next_rq; an empty active queue hands over to a queue
 *    whose next request starts at last_position or is within the active
 *    process's seek mean of it (8192 sectors without valid samples), and
 *    such a queue stops the idle timer at completion.  The queue handed
 *    over to is marked coop; cfq_close_cooperator skips coop queues and
 *    cfq_set_active_queue clears the mark only when the queue is next
 *    picked from the service tree.  So N interleaved readers hand over at
 *    most N times in a row; then every neighbour is marked, the active
 *    queue idles, gets its own next request (N chunks ahead) and keeps its
 *    slice.  That is the code, not a modelling gap: the 2.6.33 merge commit
 *    measured 12 MB/s for dump-like read-test2 on a kernel with this code.
 *    2.6.31 only cached the prio tree root by org_ioprio (no effect without
 *    ioprio changes), so eras 2.6.30 and 2.6.31 behave alike here.  With
 *    era >= 2.6.30 also: one request per dispatch call, a lone queue at
 *    most 4 * quantum in flight, the async cap counted over the slice.
 * queue_merge (2.6.33): seek statistics per queue; the cooperator found by
 *    an empty active queue is merged with it at the next request of the
 *    process (the cic is re-pointed, the queue marked coop); a coop queue
 *    that is seeky at expiry is split again at the next request.  The
 *    search follows the era: from 2.6.33 it wants both queues sync and
 *    non-seeky and no longer skips a coop queue (coop now means merged), so
 *    era 2.6.33 with queue_merge off still hands over at every empty queue.
 * workload_trees (2.6.33): service trees per class (RT, BE) and workload
 *    (ASYNC, SYNC_NOIDLE, SYNC) plus an idle tree; the workload slice is
 *    300 ms * count / busy; tree idling on the last SYNC_NOIDLE queue;
 *    2.6.33 idle rules (deep queues, no 2 ms variant, per-queue in-flight).
 * low_latency (2.6.33): slices scaled so that busy queues fit 300 ms; async
 *    ramp-up after a delayed sync request; async waits for sync in flight.
 * Not modelled: the November 2008 close-cooperator patch of the LKML
 *    thread "Slow file transfer speeds with CFQ IO scheduler in some cases"
 *    (its text is not in the sources this project could read, and the
 *    merged a36e71f9 cannot stand in for it); cgroups (one root group), the
 *    request alias rule,
 *    metadata requests, noidle requests, wait_busy, ioprio changes while a
 *    queue lives, the 2.6.33 hw_tag rework (2.6.28 rules are used).
 *
 * --trace-sched: slice_start pid= slice_ms=, slice_expire pid= reason=
 * (timeout|empty|preempted|budget|forced|coop), idle_arm pid= until_us=,
 * idle_fire pid=, idle_cancel pid= reason=, preempt pid= by= reason=,
 * coop pid= with=, select pid= via=(tree|coop) for every queue made
 * active, queue_merge pid= with=, queue_split pid=,
 * workload class= type= slice_ms=, idle_window pid= on=, and (verbose)
 * dispatch pid= sector= for every request moved to the dispatch list.
 */
#include "models/sched/sched.h"
#include "models/sched/sched-cfq-private.h"

#include <limits.h>
#include <string.h>

#define CFQ_PRIO_LISTS   8
#define CFQ_SLICE_SCALE  5
#define CFQ_HW_QUEUE_MIN 5
#define CFQ_SEEK_THR     8192      /* sectors: seeky above this mean */
#define CFQ_MIN_TT_MS    2
#define CFQ_HW_SAMPLES   50

#define ERA_COOP    20630
#define ERA_MERGE   20633

enum { CFQ_SYNC_ASYNC = 0, CFQ_SYNC_SYNC = 1 };

/* Service classes as tree rows: RT first, then BE, then IDLE. */
enum { CFQ_RT = 0, CFQ_BE = 1, CFQ_IDLE = 2, CFQ_N_CLASSES = 3 };
enum { CFQ_WL_ASYNC = 0, CFQ_WL_SYNC_NOIDLE = 1, CFQ_WL_SYNC = 2, CFQ_N_WL = 3 };

typedef enum {
  EXPIRE_TIMEOUT,
  EXPIRE_EMPTY,
  EXPIRE_PREEMPTED,
  EXPIRE_BUDGET,
  EXPIRE_FORCED,
  EXPIRE_COOP,
} ExpireReason;

static const char *const expire_names[] = {
  "timeout", "empty", "preempted", "budget", "forced", "coop",
};

/* 8.8 fixed point decaying average (7/8 old, 1/8 new). */
typedef struct {
  guint   samples;
  guint64 total;
  guint64 mean;
} CfqAvg;

typedef struct _CfqQueue CfqQueue;
typedef struct _CfqCic   CfqCic;

struct _CfqQueue {
  SimRbTree   sort_list;
  SimList     fifo;
  SimRequest *next_rq;
  int         queued[2];
  int         dispatched;          /* in the driver */
  int         procs;               /* cics pointing here + pending merges */

  SimRbNode   rb_node;             /* in *st */
  SimRbTree  *st;
  gint64      rb_key;              /* jiffies */
  SimRbNode   p_node;              /* in *p_root, keyed by next_rq sector */
  SimRbTree  *p_root;
  guint64     p_key;

  gint64      slice_start;
  gint64      slice_end;
  gint64      slice_resid;
  int         slice_dispatch;

  int         klass;               /* CFQ_RT, CFQ_BE, CFQ_IDLE */
  int         ioprio;              /* 0..7 */
  guint       pid;

  CfqAvg      seek;                /* 2.6.33 layout: per queue */
  guint64     last_request_pos;
  CfqQueue   *new_cfqq;            /* planned merge */
  SimList     link;                /* free list */

  guint       on_rr : 1;
  guint       wait_request : 1;
  guint       must_dispatch : 1;
  guint       fifo_expire : 1;
  guint       idle_window : 1;
  guint       slice_new : 1;
  guint       sync : 1;
  guint       coop : 1;
  guint       split_coop : 1;
  guint       deep : 1;
  guint       must_alloc_slice : 1;
  guint       in_use : 1;
};

struct _CfqCic {
  SimIoContext *ioc;
  CfqQueue     *cfqq;              /* the sync queue */
  CfqAvg        ttime;
  gint64        last_end_request;  /* jiffies */
  CfqAvg        seek;              /* 2.6.28-2.6.32 layout: per process */
  guint64       last_request_pos;
};

typedef struct {
  /* tunables */
  int         quantum;
  int         fifo_expire[2];      /* jiffies, [async, sync] */
  int         back_seek_max;       /* KiB */
  int         back_seek_penalty;
  int         slice[2];            /* jiffies, [async, sync] */
  int         slice_async_rq;
  int         slice_idle;          /* jiffies */
  int         era;
  int         close_cooperator;
  int         queue_merge;
  int         low_latency;
  int         workload_trees;

  /* derived from era */
  gboolean    one_per_call;        /* 2.6.30: one request per dispatch call */
  gboolean    queue_seek;          /* seek statistics per queue (2.6.33) */
  gboolean    idle_33;             /* 2.6.33 idle rules */

  SchedQueue *e;
  SimRbTree   st_single;
  SimRbTree   st[CFQ_N_CLASSES][CFQ_N_WL];
  SimRbTree   prio_trees[CFQ_PRIO_LISTS];
  int         busy_queues;
  int         busy_class[CFQ_N_CLASSES];
  int         busy_async;
  int         rq_queued;
  int         rq_in_driver[2];     /* [async, sync] */
  int         sync_flight;
  int         hw_tag;
  int         hw_tag_samples;
  int         rq_in_driver_peak;
  guint64     last_position;
  CfqQueue   *active_queue;
  CfqCic     *active_cic;
  SchedTimer  idle_timer;
  CfqQueue   *async_cfqq[2][CFQ_PRIO_LISTS];   /* [RT, BE][level] */
  CfqQueue   *async_idle_cfqq;
  GPtrArray  *all_queues;
  SimList     free_queues;

  /* 2.6.33 workload state */
  int         serving_class;
  int         serving_type;
  gint64      workload_expires;
  guint       busy_queues_avg[CFQ_N_CLASSES];
  gint64      last_delayed_sync;   /* jiffies */
} CfqData;

#define CFQ_OFF(f) G_STRUCT_OFFSET (CfqData, f)

static const SchedTunable cfq_tunables[] = {
  { "quantum", SCHED_TUNABLE_INT, 4, 0, 0, 1, INT_MAX, CFQ_OFF (quantum), "requests",
    "requests in flight from the active queue while others wait" },
  { "fifo_expire_sync", SCHED_TUNABLE_JIFFIES, 0, 1, 8, 1, INT_MAX,
    CFQ_OFF (fifo_expire[CFQ_SYNC_SYNC]), "ms", "FIFO deadline of a sync request (HZ/8)" },
  { "fifo_expire_async", SCHED_TUNABLE_JIFFIES, 0, 1, 4, 1, INT_MAX,
    CFQ_OFF (fifo_expire[CFQ_SYNC_ASYNC]), "ms", "FIFO deadline of an async request (HZ/4)" },
  { "back_seek_max", SCHED_TUNABLE_INT, 16384, 0, 0, 0, INT_MAX, CFQ_OFF (back_seek_max),
    "KiB", "backward seeks up to this far are considered (16 MiB)" },
  { "back_seek_penalty", SCHED_TUNABLE_INT, 2, 0, 0, 1, INT_MAX, CFQ_OFF (back_seek_penalty),
    "factor", "a backward seek costs this many times a forward one" },
  { "slice_sync", SCHED_TUNABLE_JIFFIES, 0, 1, 10, 1, INT_MAX,
    CFQ_OFF (slice[CFQ_SYNC_SYNC]), "ms", "base sync slice, priority 4 (HZ/10)" },
  { "slice_async", SCHED_TUNABLE_JIFFIES, 0, 1, 25, 1, INT_MAX,
    CFQ_OFF (slice[CFQ_SYNC_ASYNC]), "ms", "base async slice, priority 4 (HZ/25)" },
  { "slice_async_rq", SCHED_TUNABLE_INT, 2, 0, 0, 1, INT_MAX, CFQ_OFF (slice_async_rq),
    "requests", "base of the async request cap per slice" },
  { "slice_idle", SCHED_TUNABLE_JIFFIES, 0, 1, 125, 0, INT_MAX, CFQ_OFF (slice_idle), "ms",
    "wait for a process's next request (HZ/125: 0, no idling, at HZ=100)" },
  { "era", SCHED_TUNABLE_VERSION, 20633, 0, 0, 0, INT_MAX, CFQ_OFF (era), "version",
    "kernel whose CFQ this is: 2.6.28, 2.6.30, 2.6.31, 2.6.33; sets the switches' defaults" },
  { "close_cooperator", SCHED_TUNABLE_BOOL, -1, 0, 0, -1, 1, CFQ_OFF (close_cooperator),
    "bool", "hand over to a queue reading close by instead of idling (default: era >= 2.6.30)" },
  { "queue_merge", SCHED_TUNABLE_BOOL, -1, 0, 0, -1, 1, CFQ_OFF (queue_merge), "bool",
    "merge cooperating queues, split them when seeky (default: era >= 2.6.33)" },
  { "low_latency", SCHED_TUNABLE_BOOL, -1, 0, 0, -1, 1, CFQ_OFF (low_latency), "bool",
    "scale slices to a 300 ms target latency, ramp async up (default: era >= 2.6.33)" },
  { "workload_trees", SCHED_TUNABLE_BOOL, -1, 0, 0, -1, 1, CFQ_OFF (workload_trees), "bool",
    "service trees per class and workload type (default: era >= 2.6.33)" },
  { NULL }
};

#define RQ_CFQQ(rq) ((CfqQueue *) (rq)->elv_priv[0])
#define RQ_CIC(rq)  ((CfqCic *) (rq)->elv_priv[1])
#define Q_OF_RB(n)  sim_container_of ((n), CfqQueue, rb_node)
#define Q_OF_P(n)   sim_container_of ((n), CfqQueue, p_node)

/* ---- small helpers ------------------------------------------------------ */

static gint64
jiffies (const CfqData *cfqd, SimTime now_ns)
{
  return sched_now_jiffies (cfqd->e, now_ns);
}

static int
klass_of_ioc (const SimIoContext *ioc)
{
  switch (sim_ioc_class (ioc))
    {
    case 1: return CFQ_RT;
    case 3: return CFQ_IDLE;
    default: return CFQ_BE;
    }
}

static int
level_of_ioc (const SimIoContext *ioc)
{
  if (sim_ioc_class (ioc) == 3)
    return CFQ_PRIO_LISTS - 1;
  return CLAMP (sim_ioc_level (ioc), 0, CFQ_PRIO_LISTS - 1);
}

static int
prio_slice (const CfqData *cfqd, gboolean sync, int prio)
{
  int base = cfqd->slice[sync ? 1 : 0];
  return base + (base / CFQ_SLICE_SCALE * (4 - prio));
}

static int
prio_to_maxrq (const CfqData *cfqd, const CfqQueue *cfqq)
{
  int base_rq = cfqd->slice_async_rq;
  return 2 * (base_rq + base_rq * (CFQ_PRIO_LISTS - 1 - cfqq->ioprio));
}

static gboolean
sample_valid (guint samples)
{
  return samples > 80;
}

static void
avg_add (CfqAvg *a, guint64 x)
{
  a->samples = (7 * a->samples + 256) / 8;
  a->total = (7 * a->total + 256 * x) / 8;
  a->mean = (a->total + a->samples / 2) / a->samples;
}

static CfqAvg *
seek_stats (CfqData *cfqd, CfqQueue *cfqq, CfqCic *cic)
{
  return cfqd->queue_seek || cic == NULL ? &cfqq->seek : &cic->seek;
}

static gboolean
avg_seeky (const CfqAvg *a)
{
  return a->mean > CFQ_SEEK_THR;
}

/* CFQQ_SEEKY (2.6.33): the queue's own seek mean. */
static gboolean
queue_seeky (const CfqQueue *cfqq)
{
  return avg_seeky (&cfqq->seek);
}

static int
queue_type (const CfqQueue *cfqq)
{
  if (!cfqq->sync)
    return CFQ_WL_ASYNC;
  return cfqq->idle_window ? CFQ_WL_SYNC : CFQ_WL_SYNC_NOIDLE;
}

static gboolean
slice_used (const CfqData *cfqd, const CfqQueue *cfqq, SimTime now_ns)
{
  if (cfqq->slice_new)
    return FALSE;
  return jiffies (cfqd, now_ns) >= cfqq->slice_end;
}

static guint
queue_pid (const CfqQueue *cfqq)
{
  return cfqq ? cfqq->pid : 0;
}

/* ---- queue life ----------------------------------------------------------- */

static CfqQueue *
queue_new (CfqData *cfqd, gboolean sync, int klass, int ioprio, guint pid)
{
  CfqQueue *cfqq;
  if (!sim_list_empty (&cfqd->free_queues))
    {
      cfqq = sim_list_first_entry (&cfqd->free_queues, CfqQueue, link);
      sim_list_del (&cfqq->link);
      memset (cfqq, 0, sizeof *cfqq);
    }
  else
    {
      cfqq = g_new0 (CfqQueue, 1);
      g_ptr_array_add (cfqd->all_queues, cfqq);
    }
  sim_rb_tree_init (&cfqq->sort_list);
  sim_list_init (&cfqq->fifo);
  sim_list_init (&cfqq->link);
  sim_rb_node_clear (&cfqq->rb_node);
  sim_rb_node_clear (&cfqq->p_node);
  cfqq->in_use = TRUE;
  cfqq->sync = sync;
  cfqq->klass = klass;
  cfqq->ioprio = ioprio;
  cfqq->pid = pid;
  /* cfq_init_cfqq: sync queues start with the idle window on. */
  cfqq->idle_window = sync && klass != CFQ_IDLE;
  return cfqq;
}

static void slice_expired (CfqData *cfqd, gboolean timed_out, ExpireReason why, SimTime now_ns);

/* Drop a queue nobody points to and that holds no request. */
static void
queue_maybe_free (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  if (!cfqq->sync || cfqq->procs > 0 || cfqq->dispatched > 0
      || !sim_list_empty (&cfqq->fifo))
    return;
  if (cfqd->active_queue == cfqq)
    slice_expired (cfqd, FALSE, EXPIRE_EMPTY, now_ns);
  g_assert (!cfqq->on_rr);
  cfqq->in_use = FALSE;
  cfqq->new_cfqq = NULL;
  sim_list_add_tail (&cfqq->link, &cfqd->free_queues);
}

static CfqQueue *
async_queue (CfqData *cfqd, const SimIoContext *ioc)
{
  int klass = klass_of_ioc (ioc);
  int level = level_of_ioc (ioc);
  CfqQueue **slot = klass == CFQ_IDLE ? &cfqd->async_idle_cfqq
                                      : &cfqd->async_cfqq[klass][level];
  if (*slot == NULL)
    {
      *slot = queue_new (cfqd, FALSE, klass, level, ioc->pid);
      (*slot)->procs = 1;           /* held by cfqd for ever */
    }
  return *slot;
}

/* ---- service trees ---------------------------------------------------- */

static int
st_compare (const SimRbNode *a, const SimRbNode *b)
{
  const CfqQueue *qa = Q_OF_RB (a);
  const CfqQueue *qb = Q_OF_RB (b);
  if (qa->klass != qb->klass)
    return qa->klass < qb->klass ? -1 : 1;
  if (qa->rb_key != qb->rb_key)
    return qa->rb_key < qb->rb_key ? -1 : 1;
  return 0;
}

static SimRbTree *
service_tree_for (CfqData *cfqd, int klass, int type)
{
  if (!cfqd->workload_trees)
    return &cfqd->st_single;
  if (klass == CFQ_IDLE)
    return &cfqd->st[CFQ_IDLE][0];
  return &cfqd->st[klass][type];
}

static CfqQueue *
st_first (SimRbTree *st)
{
  SimRbNode *n = sim_rb_first (st);
  return n ? Q_OF_RB (n) : NULL;
}

static int
slice_offset (CfqData *cfqd, CfqQueue *cfqq)
{
  return (cfqd->busy_queues - 1)
         * (prio_slice (cfqd, TRUE, 0) - prio_slice (cfqd, cfqq->sync, cfqq->ioprio));
}

static void
service_tree_add (CfqData *cfqd, CfqQueue *cfqq, gboolean add_front, SimTime now_ns)
{
  gint64 now_j = jiffies (cfqd, now_ns);
  SimRbTree *st = service_tree_for (cfqd, cfqq->klass, queue_type (cfqq));
  gint64 rb_key;

  if (cfqq->klass == CFQ_IDLE)
    {
      SimRbNode *last = sim_rb_last (st);
      rb_key = cfqd->e->hz / 5;     /* CFQ_IDLE_DELAY */
      if (last && last != &cfqq->rb_node)
        rb_key += Q_OF_RB (last)->rb_key;
      else
        rb_key += now_j;
    }
  else if (!add_front)
    {
      rb_key = slice_offset (cfqd, cfqq) + now_j;
      /* 2.6.28 adds the leftover slice; 2.6.33 subtracts it, so that an
       * overrun pushes the queue back and leftover time pulls it forward. */
      if (cfqd->era >= ERA_MERGE)
        rb_key -= cfqq->slice_resid;
      else
        rb_key += cfqq->slice_resid;
      cfqq->slice_resid = 0;
    }
  else if (cfqd->era >= ERA_MERGE)
    {
      CfqQueue *first = st_first (st);
      rb_key = (first ? first->rb_key : now_j) - cfqd->e->hz;
    }
  else
    rb_key = 0;

  if (sim_rb_node_linked (&cfqq->rb_node))
    {
      if (rb_key == cfqq->rb_key && cfqq->st == st)
        return;
      sim_rb_erase (cfqq->st, &cfqq->rb_node);
      sim_rb_node_clear (&cfqq->rb_node);
    }
  cfqq->rb_key = rb_key;
  cfqq->st = st;
  sim_rb_insert (st, &cfqq->rb_node, st_compare);
}

/* ---- prio trees (close cooperators) ----------------------------------- */

static int
p_compare (const SimRbNode *a, const SimRbNode *b)
{
  guint64 ka = Q_OF_P (a)->p_key, kb = Q_OF_P (b)->p_key;
  return ka < kb ? -1 : ka > kb;
}

static int
p_compare_key (const SimRbNode *n, gconstpointer key)
{
  guint64 k = Q_OF_P (n)->p_key, s = *(const guint64 *) key;
  return k < s ? -1 : k > s;
}

static void
prio_tree_del (CfqQueue *cfqq)
{
  if (cfqq->p_root)
    {
      sim_rb_erase (cfqq->p_root, &cfqq->p_node);
      sim_rb_node_clear (&cfqq->p_node);
      cfqq->p_root = NULL;
    }
}

/* cfq_prio_tree_add: a queue is not added if another one already has a
 * request at the same sector (the kernel's lookup finds it first). */
static void
prio_tree_add (CfqData *cfqd, CfqQueue *cfqq)
{
  prio_tree_del (cfqq);
  if (!cfqd->close_cooperator && !cfqd->queue_merge)
    return;
  if (cfqq->klass == CFQ_IDLE || cfqq->next_rq == NULL || !cfqq->on_rr)
    return;
  SimRbTree *root = &cfqd->prio_trees[cfqq->ioprio];
  guint64 key = cfqq->next_rq->sector;
  SimRbNode *n = sim_rb_lower_bound (root, &key, p_compare_key);
  if (n && Q_OF_P (n)->p_key == key)
    return;
  cfqq->p_key = key;
  cfqq->p_root = root;
  sim_rb_insert (root, &cfqq->p_node, p_compare);
}

/* ---- busy (on_rr) bookkeeping ----------------------------------------- */

static void
add_cfqq_rr (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  g_assert (!cfqq->on_rr);
  cfqq->on_rr = TRUE;
  cfqd->busy_queues++;
  cfqd->busy_class[cfqq->klass]++;
  if (!cfqq->sync)
    cfqd->busy_async++;
  service_tree_add (cfqd, cfqq, FALSE, now_ns);
  prio_tree_add (cfqd, cfqq);
}

static void
del_cfqq_rr (CfqData *cfqd, CfqQueue *cfqq)
{
  g_assert (cfqq->on_rr);
  cfqq->on_rr = FALSE;
  if (sim_rb_node_linked (&cfqq->rb_node))
    {
      sim_rb_erase (cfqq->st, &cfqq->rb_node);
      sim_rb_node_clear (&cfqq->rb_node);
    }
  cfqq->st = NULL;
  prio_tree_del (cfqq);
  cfqd->busy_queues--;
  cfqd->busy_class[cfqq->klass]--;
  if (!cfqq->sync)
    cfqd->busy_async--;
}

/* ---- request choice (cfq_choose_req) ---------------------------------- */

static SimRequest *
choose_req (CfqData *cfqd, SimRequest *rq1, SimRequest *rq2)
{
  return sched_choose_req (rq1, rq2, cfqd->last_position,
                           (guint64) cfqd->back_seek_max * 2, (guint) cfqd->back_seek_penalty);
}

static SimRequest *
find_next_rq (CfqData *cfqd, CfqQueue *cfqq, SimRequest *last)
{
  SimRequest *next = sched_rb_next (last);
  SimRequest *prev = sched_rb_prev (last);
  if (next == NULL)
    {
      next = sched_rb_first (&cfqq->sort_list);
      if (next == last)
        next = NULL;
    }
  return choose_req (cfqd, next, prev);
}

static void
set_next_rq (CfqData *cfqd, CfqQueue *cfqq, SimRequest *rq)
{
  if (cfqq->next_rq == rq)
    return;
  cfqq->next_rq = rq;
  prio_tree_add (cfqd, cfqq);
}

/* cfq_add_rq_rb */
static void
add_rq_rb (CfqData *cfqd, CfqQueue *cfqq, SimRequest *rq, SimTime now_ns)
{
  sched_rb_add (&cfqq->sort_list, rq);
  cfqq->queued[rq->sync]++;
  if (!cfqq->on_rr)
    add_cfqq_rr (cfqd, cfqq, now_ns);
  set_next_rq (cfqd, cfqq, choose_req (cfqd, cfqq->next_rq, rq));
}

/* cfq_remove_request */
static void
remove_request (CfqData *cfqd, SimRequest *rq)
{
  CfqQueue *cfqq = RQ_CFQQ (rq);
  if (cfqq->next_rq == rq)
    set_next_rq (cfqd, cfqq, find_next_rq (cfqd, cfqq, rq));
  sim_list_del (&rq->fifo);
  sched_rb_del (&cfqq->sort_list, rq);
  g_assert (cfqq->queued[rq->sync] > 0);
  cfqq->queued[rq->sync]--;
  cfqd->rq_queued--;
  if (cfqq->on_rr && cfqq->sort_list.count == 0)
    del_cfqq_rr (cfqd, cfqq);
}

/* ---- slices -------------------------------------------------------------- */

static guint
avg_busy_queues (CfqData *cfqd, int klass)
{
  guint busy = (guint) cfqd->busy_class[klass];
  if (klass == CFQ_BE)
    busy += (guint) cfqd->busy_class[CFQ_IDLE];
  guint mn = MIN (cfqd->busy_queues_avg[klass], busy);
  guint mx = MAX (cfqd->busy_queues_avg[klass], busy);
  cfqd->busy_queues_avg[klass] = (3 * mx + mn + 2) / 4;
  return cfqd->busy_queues_avg[klass];
}

static int
target_latency (const CfqData *cfqd)
{
  return (int) (cfqd->e->hz * 3 / 10);
}

/* cfq_set_prio_slice: at the first completion of the slice. */
static void
set_prio_slice (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  int slice = prio_slice (cfqd, cfqq->sync, cfqq->ioprio);
  if (cfqd->low_latency)
    {
      int rt = cfqq->klass == CFQ_RT ? CFQ_RT : CFQ_BE;
      int iq = (int) avg_busy_queues (cfqd, rt);
      int sync_slice = cfqd->slice[1];
      int expect = sync_slice * iq;
      int group_slice = target_latency (cfqd);
      if (expect > group_slice)
        {
          int low = MIN (slice, 2 * cfqd->slice_idle * slice / sync_slice);
          slice = MAX (slice * group_slice / expect, low);
        }
    }
  gint64 now_j = jiffies (cfqd, now_ns);
  cfqq->slice_start = now_j;
  cfqq->slice_end = now_j + slice;
  SCHED_LOG (cfqd->e, now_ns, "slice_start pid=%u slice_ms=%" G_GINT64_FORMAT,
             cfqq->pid, sched_jiffies_to_ns (cfqd->e, slice) / SIM_NS_PER_MS);
}

static void
cancel_idle (CfqData *cfqd, const char *reason, SimTime now_ns)
{
  if (!sched_timer_pending (cfqd->e, &cfqd->idle_timer))
    return;
  sched_timer_cancel (cfqd->e, &cfqd->idle_timer);
  SCHED_LOG (cfqd->e, now_ns, "idle_cancel pid=%u reason=%s",
             queue_pid (cfqd->active_queue), reason);
}

/* __cfq_slice_expired */
static void
slice_expired (CfqData *cfqd, gboolean timed_out, ExpireReason why, SimTime now_ns)
{
  CfqQueue *cfqq = cfqd->active_queue;
  if (cfqq == NULL)
    return;
  if (cfqq->wait_request)
    cancel_idle (cfqd, "expired", now_ns);
  cfqq->must_dispatch = FALSE;
  cfqq->wait_request = FALSE;

  /* Bank what is left of the slice when the queue was cut short. */
  if (timed_out && !cfqq->slice_new)
    cfqq->slice_resid = cfqq->slice_end - jiffies (cfqd, now_ns);

  /* 2.6.33: a shared queue that turned seeky is split at the next request. */
  if (cfqd->queue_merge && cfqq->coop && queue_seeky (cfqq))
    cfqq->split_coop = TRUE;

  SCHED_LOG (cfqd->e, now_ns, "slice_expire pid=%u reason=%s", cfqq->pid, expire_names[why]);
  if (cfqq->on_rr)
    service_tree_add (cfqd, cfqq, FALSE, now_ns);
  cfqd->active_queue = NULL;
  cfqd->active_cic = NULL;
}

/* __cfq_set_active_queue */
static void
set_active_queue (CfqData *cfqd, CfqQueue *cfqq)
{
  if (cfqq)
    {
      cfqq->slice_end = 0;
      cfqq->slice_dispatch = 0;
      cfqq->fifo_expire = FALSE;
      cfqq->slice_new = TRUE;
      cfqq->must_dispatch = FALSE;
      cfqq->wait_request = FALSE;
      cfqq->must_alloc_slice = FALSE;
    }
  cfqd->active_queue = cfqq;
}

/* ---- workloads (2.6.33) ------------------------------------------------ */

static int
busy_in_class (CfqData *cfqd, int klass)
{
  int n = cfqd->busy_class[klass];
  if (klass == CFQ_BE)
    n += cfqd->busy_class[CFQ_IDLE];
  return n;
}

/* cfq_choose_wl: the workload whose first queue waited longest. */
static int
choose_wl (CfqData *cfqd, int klass)
{
  int best = CFQ_WL_SYNC_NOIDLE;
  gboolean valid = FALSE;
  gint64 lowest = 0;
  for (int i = 0; i < CFQ_N_WL; i++)
    {
      CfqQueue *q = st_first (service_tree_for (cfqd, klass, i));
      if (q && (!valid || q->rb_key < lowest))
        {
          lowest = q->rb_key;
          best = i;
          valid = TRUE;
        }
    }
  return best;
}

static void
choose_service_tree (CfqData *cfqd, SimTime now_ns)
{
  gint64 now_j = jiffies (cfqd, now_ns);
  if (cfqd->busy_class[CFQ_RT])
    cfqd->serving_class = CFQ_RT;
  else if (cfqd->busy_class[CFQ_BE])
    cfqd->serving_class = CFQ_BE;
  else
    {
      cfqd->serving_class = CFQ_IDLE;
      cfqd->workload_expires = now_j + 1;
      return;
    }
  int klass = cfqd->serving_class;
  SimRbTree *st = service_tree_for (cfqd, klass, cfqd->serving_type);
  if (st->count && now_j <= cfqd->workload_expires)
    return;

  cfqd->serving_type = choose_wl (cfqd, klass);
  st = service_tree_for (cfqd, klass, cfqd->serving_type);
  int count = (int) st->count;
  int group_slice = target_latency (cfqd);
  int busy = MAX ((int) cfqd->busy_queues_avg[klass], busy_in_class (cfqd, klass));
  int slice = group_slice * count / MAX (busy, 1);
  if (cfqd->serving_type == CFQ_WL_ASYNC)
    {
      int tmp = target_latency (cfqd) * cfqd->busy_async / MAX (cfqd->busy_queues, 1);
      slice = MIN (slice, tmp);
      slice = slice * cfqd->slice[0] / cfqd->slice[1];
    }
  else
    slice = MAX (slice, 2 * cfqd->slice_idle);
  slice = MAX (slice, 2);   /* CFQ_MIN_TT, in jiffies here */
  cfqd->workload_expires = now_j + slice;
  SCHED_LOG (cfqd->e, now_ns, "workload class=%s type=%s slice_ms=%" G_GINT64_FORMAT,
             klass == CFQ_RT ? "rt" : "be",
             cfqd->serving_type == CFQ_WL_ASYNC ? "async"
             : cfqd->serving_type == CFQ_WL_SYNC ? "sync" : "sync_noidle",
             sched_jiffies_to_ns (cfqd->e, slice) / SIM_NS_PER_MS);
}

static CfqQueue *
get_next_queue (CfqData *cfqd, SimTime now_ns)
{
  if (cfqd->busy_queues == 0)
    return NULL;
  if (!cfqd->workload_trees)
    return st_first (&cfqd->st_single);
  choose_service_tree (cfqd, now_ns);
  int type = cfqd->serving_class == CFQ_IDLE ? 0 : cfqd->serving_type;
  return st_first (service_tree_for (cfqd, cfqd->serving_class, type));
}

/* ---- cooperators and merging ------------------------------------------- */

static guint64
dist_from_last (const CfqData *cfqd, const SimRequest *rq)
{
  guint64 last = cfqd->last_position;
  return rq->sector >= last ? rq->sector - last : last - rq->sector;
}

/* cfq_rq_close: is @rq as good as what the active process would send? */
static gboolean
rq_close (CfqData *cfqd, CfqQueue *cur, const SimRequest *rq, gboolean for_preempt)
{
  const CfqAvg *s = cfqd->queue_seek ? &cur->seek
                    : cfqd->active_cic ? &cfqd->active_cic->seek : NULL;
  if (s == NULL)
    return FALSE;
  guint64 sdist = s->mean;
  if (!sample_valid (s->samples))
    {
      /* 2.6.28 refuses without history; 2.6.30 assumes the threshold. */
      if (!cfqd->close_cooperator && !cfqd->queue_merge)
        return FALSE;
      sdist = CFQ_SEEK_THR;
    }
  if (cfqd->queue_seek && sdist > CFQ_SEEK_THR && !for_preempt)
    sdist = CFQ_SEEK_THR;
  return dist_from_last (cfqd, rq) <= sdist;
}

/* cfqq_close: a queue of the same level whose next request starts at
 * last_position, else the nearer neighbour in sector order, else the next
 * one on the other side. */
static CfqQueue *
cfqq_close (CfqData *cfqd, CfqQueue *cur)
{
  SimRbTree *root = &cfqd->prio_trees[cur->ioprio];
  if (root->count == 0)
    return NULL;
  guint64 sector = cfqd->last_position;
  SimRbNode *succ = sim_rb_lower_bound (root, &sector, p_compare_key);
  if (succ && Q_OF_P (succ)->p_key == sector && Q_OF_P (succ) != cur)
    return Q_OF_P (succ);
  SimRbNode *pred = succ ? sim_rb_prev (succ) : sim_rb_last (root);
  SimRbNode *first = succ, *second = pred;
  if (succ == NULL || (pred && sector - Q_OF_P (pred)->p_key < Q_OF_P (succ)->p_key - sector))
    {
      first = pred;
      second = succ;
    }
  SimRbNode *cands[2] = { first, second };
  for (int i = 0; i < 2; i++)
    {
      if (cands[i] == NULL)
        continue;
      CfqQueue *q = Q_OF_P (cands[i]);
      if (q != cur && rq_close (cfqd, cur, q->next_rq, TRUE))
        return q;
    }
  return NULL;
}

/* cfq_close_cooperator.  @probe: only look (2.6.30/31 mark the queue coop
 * when it is about to be used).  The rules follow the era, not the merge
 * switch: from 2.6.33 (b3b6d040, "cfq: change the meaning of the cfqq_coop
 * flag") coop means "merged" and no longer makes the search skip a queue,
 * while the search itself wants both queues sync and non-seeky by their
 * per-queue statistics and the same RT-ness. */
static CfqQueue *
close_cooperator (CfqData *cfqd, CfqQueue *cur, gboolean probe)
{
  if (!cfqd->close_cooperator && !cfqd->queue_merge)
    return NULL;
  if (cfqd->queue_seek)
    {
      if (cur->klass == CFQ_IDLE || !cur->sync || queue_seeky (cur))
        return NULL;
      CfqQueue *q = cfqq_close (cfqd, cur);
      if (q == NULL || !q->sync || queue_seeky (q))
        return NULL;
      if ((q->klass == CFQ_RT) != (cur->klass == CFQ_RT))
        return NULL;
      return q;
    }
  if (cfqd->active_cic == NULL)
    return NULL;
  CfqQueue *q = cfqq_close (cfqd, cur);
  if (q == NULL || q->coop)
    return NULL;
  if (!probe)
    q->coop = TRUE;
  return q;
}

static void
setup_merge (CfqQueue *cfqq, CfqQueue *new_cfqq)
{
  CfqQueue *q;
  /* Avoid a circular list and skip interim merges. */
  while ((q = new_cfqq->new_cfqq))
    {
      if (q == cfqq)
        return;
      new_cfqq = q;
    }
  if (cfqq->procs == 0 || new_cfqq == cfqq)
    return;
  /* Merge in the direction of the lesser amount of work. */
  if (new_cfqq->procs >= cfqq->procs)
    {
      cfqq->new_cfqq = new_cfqq;
      new_cfqq->procs += cfqq->procs;
    }
  else
    {
      new_cfqq->new_cfqq = cfqq;
      cfqq->procs += new_cfqq->procs;
    }
}

/* ---- selecting the queue ------------------------------------------------- */

static gboolean
should_idle (CfqData *cfqd, CfqQueue *cfqq)
{
  if (!cfqd->workload_trees)
    return cfqq->idle_window;
  if (cfqq->klass == CFQ_IDLE)
    return FALSE;
  if (cfqq->idle_window && !(!sched_device_rotational (cfqd->e) && cfqd->hw_tag))
    return TRUE;
  /* Tree idling: the last queue of its (SYNC_NOIDLE) tree.  Every request
   * counts as "not noidle" here, so the tree always requires the idle. */
  SimRbTree *st = cfqq->st ? cfqq->st : service_tree_for (cfqd, cfqq->klass, queue_type (cfqq));
  gsize others = st->count - (sim_rb_node_linked (&cfqq->rb_node) ? 1 : 0);
  return cfqq->sync && others == 0;
}

/* The RT queue that will be served next (RT sorts first). */
static CfqQueue *
first_rt_queue (CfqData *cfqd)
{
  if (!cfqd->workload_trees)
    return st_first (&cfqd->st_single);
  for (int w = 0; w < CFQ_N_WL; w++)
    if (cfqd->st[CFQ_RT][w].count)
      return st_first (&cfqd->st[CFQ_RT][w]);
  return NULL;
}

/* cfq_select_queue */
static CfqQueue *
select_queue (CfqData *cfqd, SimTime now_ns)
{
  CfqQueue *cfqq = cfqd->active_queue, *new_cfqq = NULL;
  ExpireReason why = EXPIRE_EMPTY;
  if (cfqq == NULL)
    goto new_queue;

  if (slice_used (cfqd, cfqq, now_ns) && !(cfqd->one_per_call && cfqq->must_dispatch))
    {
      why = EXPIRE_TIMEOUT;
      goto expire;
    }

  /* A busy RT queue preempts a non-RT one, banking its slice (already in
   * 2.6.28's source, though the reference dates it 2.6.30). */
  if (cfqq->klass != CFQ_RT && cfqd->busy_class[CFQ_RT])
    {
      SCHED_LOG (cfqd->e, now_ns, "preempt pid=%u by=%u reason=rt_busy", cfqq->pid,
                 queue_pid (first_rt_queue (cfqd)));
      slice_expired (cfqd, TRUE, EXPIRE_PREEMPTED, now_ns);
      goto new_queue;
    }

  if (cfqq->sort_list.count > 0)
    return cfqq;

  new_cfqq = close_cooperator (cfqd, cfqq, FALSE);
  if (new_cfqq)
    {
      SCHED_LOG (cfqd->e, now_ns, "coop pid=%u with=%u", new_cfqq->pid, cfqq->pid);
      if (cfqd->queue_merge && cfqq->new_cfqq == NULL)
        setup_merge (cfqq, new_cfqq);
      why = EXPIRE_COOP;
      goto expire;
    }

  if (sched_timer_pending (cfqd->e, &cfqd->idle_timer)
      || (cfqq->dispatched && should_idle (cfqd, cfqq)))
    return NULL;

expire:
  slice_expired (cfqd, FALSE, why, now_ns);
new_queue:
  if (new_cfqq == NULL)
    {
      new_cfqq = get_next_queue (cfqd, now_ns);
      /* 2.6.31: chosen normally, the queue may cooperate again later. */
      if (new_cfqq && !cfqd->queue_merge)
        new_cfqq->coop = FALSE;
    }
  set_active_queue (cfqd, new_cfqq);
  if (new_cfqq)
    SCHED_LOG (cfqd->e, now_ns, "select pid=%u via=%s", new_cfqq->pid,
               why == EXPIRE_COOP ? "coop" : "tree");
  return new_cfqq;
}

/* ---- dispatch ------------------------------------------------------------ */

/* cfq_check_fifo: the FIFO head if it expired, looked at once per slice. */
static SimRequest *
check_fifo (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  if (cfqq->fifo_expire)
    return NULL;
  cfqq->fifo_expire = TRUE;
  if (sim_list_empty (&cfqq->fifo))
    return NULL;
  SimRequest *rq = sim_list_first_entry (&cfqq->fifo, SimRequest, fifo);
  gint64 deadline_j = sched_now_jiffies (cfqd->e, rq->fifo_deadline_ns);
  if (jiffies (cfqd, now_ns) < deadline_j)
    return NULL;
  return rq;
}

static void
dispatch_insert (CfqData *cfqd, SimRequest *rq)
{
  CfqQueue *cfqq = RQ_CFQQ (rq);
  remove_request (cfqd, rq);
  cfqq->dispatched++;
  sched_dispatch_sort (cfqd->e, rq);
  if (cfqq->sync)
    cfqd->sync_flight++;
}

static void
dispatch_one (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  SimRequest *rq = check_fifo (cfqd, cfqq, now_ns);
  if (rq == NULL)
    rq = cfqq->next_rq;
  g_assert (rq != NULL);
  if (cfqd->active_cic == NULL && RQ_CIC (rq))
    cfqd->active_cic = RQ_CIC (rq);
  SCHED_LOG (cfqd->e, now_ns, "dispatch pid=%u sector=%" G_GUINT64_FORMAT,
             rq->ioc ? rq->ioc->pid : 0, rq->sector);
  dispatch_insert (cfqd, rq);
  cfqq->slice_dispatch++;
}

/* Expire an async queue that used up its request cap, or an idle-class
 * queue after one round, when others are waiting.  2.6.28 compares the
 * requests of this round (at most quantum, so only the lowest priorities
 * can reach their cap); 2.6.30 counts the whole slice (slice_dispatch). */
static void
maybe_expire_after_dispatch (CfqData *cfqd, CfqQueue *cfqq, int count, SimTime now_ns)
{
  if (cfqd->active_queue != cfqq || cfqd->busy_queues <= 1)
    return;
  if ((!cfqq->sync && count >= prio_to_maxrq (cfqd, cfqq)) || cfqq->klass == CFQ_IDLE)
    {
      cfqq->slice_end = jiffies (cfqd, now_ns) + 1;
      slice_expired (cfqd, FALSE, EXPIRE_BUDGET, now_ns);
    }
}

/* May @cfqq send one more request now? */
static gboolean
may_dispatch (CfqData *cfqd, CfqQueue *cfqq, SimTime now_ns)
{
  int max = cfqq->klass == CFQ_IDLE ? 1 : cfqd->quantum;
  if (cfqd->sync_flight && !cfqq->sync)
    return FALSE;
  /* 2.6.28: a queue alone may move all its requests, round by round. */
  if (!cfqd->one_per_call)
    return cfqq->dispatched < max || cfqd->busy_queues <= 1;
  if (cfqq->dispatched >= max)
    {
      if (cfqq->klass == CFQ_IDLE)
        return FALSE;
      if (cfqd->busy_queues > 1)
        return FALSE;
      /* Alone, up to 4 * quantum; 2.6.33 lifts even that ("sole queue
       * user, no limit"). */
      if (cfqq->dispatched >= 4 * max && cfqd->era < ERA_MERGE)
        return FALSE;
    }
  /* low_latency async ramp-up: depth grows with time since a sync request
   * was last delayed. */
  if (cfqd->low_latency && !cfqq->sync)
    {
      gint64 since = jiffies (cfqd, now_ns) - cfqd->last_delayed_sync;
      gint64 depth = since / MAX (cfqd->slice[1], 1);
      if (depth == 0 && cfqq->dispatched == 0)
        depth = 1;
      if (cfqq->dispatched >= depth)
        return FALSE;
    }
  return TRUE;
}

static int
forced_dispatch (CfqData *cfqd, SimTime now_ns)
{
  int n = 0;
  for (guint i = 0; i < cfqd->all_queues->len; i++)
    {
      CfqQueue *cfqq = g_ptr_array_index (cfqd->all_queues, i);
      while (cfqq->in_use && cfqq->next_rq)
        {
          dispatch_insert (cfqd, cfqq->next_rq);
          n++;
        }
    }
  slice_expired (cfqd, FALSE, EXPIRE_FORCED, now_ns);
  return n;
}

static int
cfq_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  if (cfqd->busy_queues == 0)
    return 0;
  if (force)
    return forced_dispatch (cfqd, now_ns);

  int dispatched = 0;
  CfqQueue *cfqq;
  while ((cfqq = select_queue (cfqd, now_ns)) != NULL)
    {
      if (!may_dispatch (cfqd, cfqq, now_ns))
        break;
      cfqq->must_dispatch = FALSE;
      cfqq->wait_request = FALSE;
      cancel_idle (cfqd, "dispatch", now_ns);

      if (cfqd->one_per_call)
        {
          dispatch_one (cfqd, cfqq, now_ns);
          maybe_expire_after_dispatch (cfqd, cfqq, cfqq->slice_dispatch, now_ns);
          return 1;
        }
      /* 2.6.28: up to quantum requests in one round; a waiting RT queue
       * cuts the round of a non-RT one short. */
      int max = cfqq->klass == CFQ_IDLE ? 1 : cfqd->quantum;
      int round = 0;
      do
        {
          dispatch_one (cfqd, cfqq, now_ns);
          round++;
        }
      while (cfqq->sort_list.count > 0 && round < max
             && !(cfqq->klass != CFQ_RT && cfqd->busy_class[CFQ_RT]));
      dispatched += round;
      maybe_expire_after_dispatch (cfqd, cfqq, round, now_ns);
    }
  return dispatched;
}

/* ---- statistics on enqueue ---------------------------------------------- */

static void
update_thinktime (CfqData *cfqd, CfqCic *cic, SimTime now_ns)
{
  gint64 elapsed = jiffies (cfqd, now_ns) - cic->last_end_request;
  gint64 ttime = MIN (elapsed, 2 * (gint64) cfqd->slice_idle);
  avg_add (&cic->ttime, (guint64) MAX (ttime, 0));
}

/* @first_is_zero: 2.6.33's per-queue statistics count a queue's first
 * request as no seek; 2.6.28's per-process ones measure it from sector 0. */
static void
update_seek (CfqAvg *s, guint64 *last_pos, const SimRequest *rq, gboolean first_is_zero)
{
  guint64 sdist = rq->sector >= *last_pos ? rq->sector - *last_pos : *last_pos - rq->sector;
  if (first_is_zero && *last_pos == 0)
    sdist = 0;
  /* The odd far fragment must not dominate: clamp to 4 means plus a margin. */
  if (s->samples <= 60)
    sdist = MIN (sdist, s->mean * 4 + 2 * 1024 * 1024);
  else
    sdist = MIN (sdist, s->mean * 4 + 2 * 1024 * 64);
  avg_add (s, sdist);
  *last_pos = sim_request_end_sector (rq);
}

static void
update_idle_window (CfqData *cfqd, CfqQueue *cfqq, CfqCic *cic, SimTime now_ns)
{
  if (!cfqq->sync || cfqq->klass == CFQ_IDLE || cic == NULL)
    return;
  gboolean enable = cfqq->idle_window;
  const CfqAvg *seek = seek_stats (cfqd, cfqq, cic);
  gboolean exited = cic->ioc->exited || cic->ioc->nr_tasks == 0;

  if (cfqd->idle_33)
    {
      if (cfqq->queued[0] + cfqq->queued[1] >= 4)
        cfqq->deep = TRUE;
      if (exited || !cfqd->slice_idle
          || (!cfqq->deep && sample_valid (seek->samples) && avg_seeky (seek)))
        enable = FALSE;
      else if (sample_valid (cic->ttime.samples))
        enable = cic->ttime.mean <= (guint64) cfqd->slice_idle;
    }
  else
    {
      if (exited || !cfqd->slice_idle || (cfqd->hw_tag && avg_seeky (seek)))
        enable = FALSE;
      else if (sample_valid (cic->ttime.samples))
        enable = cic->ttime.mean <= (guint64) cfqd->slice_idle;
    }
  if (enable != cfqq->idle_window)
    {
      cfqq->idle_window = enable;
      SCHED_LOG (cfqd->e, now_ns, "idle_window pid=%u on=%d", cfqq->pid, enable);
    }
}

/* cfq_should_preempt: may @new_cfqq's request @rq take the disk now? */
static const char *
should_preempt (CfqData *cfqd, CfqQueue *new_cfqq, SimRequest *rq, SimTime now_ns)
{
  CfqQueue *cfqq = cfqd->active_queue;
  if (cfqq == NULL)
    return NULL;
  if (slice_used (cfqd, cfqq, now_ns))
    return "slice_used";
  if (new_cfqq->klass == CFQ_IDLE)
    return NULL;
  if (cfqq->klass == CFQ_IDLE)
    return "idle_class";
  /* 2.6.33: non-RT never preempts RT. */
  if (new_cfqq->klass != CFQ_RT && cfqq->klass == CFQ_RT && cfqd->workload_trees)
    return NULL;
  if (rq->sync && !cfqq->sync)
    return "sync_over_async";
  if (new_cfqq->klass == CFQ_RT && cfqq->klass != CFQ_RT)
    return "rt";
  if (cfqd->workload_trees && cfqd->serving_type == CFQ_WL_SYNC_NOIDLE
      && cfqq->sort_list.count == 0 && queue_type (new_cfqq) == CFQ_WL_SYNC_NOIDLE
      && new_cfqq->st && new_cfqq->st->count == 2)
    return "noidle_tree";
  if (!cfqq->wait_request || (!cfqd->queue_seek && cfqd->active_cic == NULL))
    return NULL;
  if (rq_close (cfqd, cfqq, rq, TRUE))
    return "close";
  return NULL;
}

/* cfq_preempt_queue */
static void
preempt_queue (CfqData *cfqd, CfqQueue *cfqq, const char *reason, SimTime now_ns)
{
  SCHED_LOG (cfqd->e, now_ns, "preempt pid=%u by=%u reason=%s",
             cfqd->active_queue->pid, cfqq->pid, reason);
  slice_expired (cfqd, TRUE, EXPIRE_PREEMPTED, now_ns);
  g_assert (cfqq->on_rr);
  service_tree_add (cfqd, cfqq, TRUE, now_ns);
  cfqq->slice_end = 0;
  cfqq->slice_new = TRUE;
  if (cfqd->workload_trees)
    {
      cfqd->serving_class = cfqq->klass;
      cfqd->serving_type = queue_type (cfqq);
    }
}

/* ---- request arrival -------------------------------------------------------- */

static void
cic_init (CfqData *cfqd, CfqCic *cic, SimIoContext *ioc, SimTime now_ns)
{
  cic->ioc = ioc;
  cic->last_end_request = jiffies (cfqd, now_ns);
}

/* split_cfqq: a process leaves a shared queue that turned seeky. */
static CfqQueue *
split_queue (CfqData *cfqd, CfqCic *cic, CfqQueue *cfqq, SimTime now_ns)
{
  if (cfqq->procs == 1)
    {
      cfqq->pid = cic->ioc->pid;
      cfqq->coop = FALSE;
      cfqq->split_coop = FALSE;
      return cfqq;
    }
  SCHED_LOG (cfqd->e, now_ns, "queue_split pid=%u", cic->ioc->pid);
  cfqq->procs--;
  cic->cfqq = NULL;
  return NULL;
}

/* The sync queue of @cic, created, merged or split as cfq_set_request does
 * when a process allocates a request. */
static CfqQueue *
sync_queue_for (CfqData *cfqd, CfqCic *cic, SimTime now_ns)
{
  CfqQueue *cfqq = cic->cfqq;
  if (cfqq && cfqd->queue_merge)
    {
      if (cfqq->coop && cfqq->split_coop)
        cfqq = split_queue (cfqd, cic, cfqq, now_ns);
      if (cfqq && cfqq->new_cfqq)
        {
          CfqQueue *to = cfqq->new_cfqq;
          SCHED_LOG (cfqd->e, now_ns, "queue_merge pid=%u with=%u", cic->ioc->pid, to->pid);
          cic->cfqq = to;
          to->coop = TRUE;
          /* The target's count already holds this process (setup_merge). */
          cfqq->procs--;
          if (cfqq->procs == 0)
            cfqq->new_cfqq = NULL;
          queue_maybe_free (cfqd, cfqq, now_ns);
          cfqq = to;
        }
    }
  if (cfqq == NULL)
    {
      const SimIoContext *ioc = cic->ioc;
      cfqq = queue_new (cfqd, TRUE, klass_of_ioc (ioc), level_of_ioc (ioc), ioc->pid);
      cfqq->procs = 1;
      cic->cfqq = cfqq;
    }
  return cfqq;
}

static void
cfq_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  CfqCic *cic = NULL;
  CfqQueue *cfqq;

  if (rq->ioc)
    {
      cic = sched_ioc_data (e, rq->ioc);
      if (cic->ioc == NULL)
        cic_init (cfqd, cic, rq->ioc, now_ns);
    }
  if (rq->sync && cic)
    cfqq = sync_queue_for (cfqd, cic, now_ns);
  else if (rq->ioc)
    cfqq = async_queue (cfqd, rq->ioc);
  else
    {
      static const SimIoContext kernel_ioc = { .ioprio_class = 2, .ioprio_level = 4 };
      cfqq = async_queue (cfqd, &kernel_ioc);
    }
  rq->elv_priv[0] = cfqq;
  rq->elv_priv[1] = cic;

  /* cfq_insert_request */
  cfqd->rq_queued++;
  add_rq_rb (cfqd, cfqq, rq, now_ns);
  gint64 deadline_j = jiffies (cfqd, now_ns) + cfqd->fifo_expire[rq->sync ? 1 : 0];
  rq->fifo_deadline_ns = sched_jiffies_to_ns (e, (int) deadline_j);
  sim_list_add_tail (&rq->fifo, &cfqq->fifo);

  /* cfq_rq_enqueued */
  if (cic)
    {
      update_thinktime (cfqd, cic, now_ns);
      update_seek (&cic->seek, &cic->last_request_pos, rq, FALSE);
    }
  update_seek (&cfqq->seek, &cfqq->last_request_pos, rq, cfqd->queue_seek);
  update_idle_window (cfqd, cfqq, cic, now_ns);

  if (cfqq == cfqd->active_queue)
    {
      /* The request we idled for: let it rip. */
      if (cfqq->wait_request)
        {
          cfqq->must_dispatch = TRUE;
          cancel_idle (cfqd, "request", now_ns);
        }
    }
  else
    {
      const char *reason = should_preempt (cfqd, cfqq, rq, now_ns);
      if (reason)
        {
          preempt_queue (cfqd, cfqq, reason, now_ns);
          cfqq->must_dispatch = TRUE;
        }
    }
}

/* ---- merging hooks -------------------------------------------------------- */

/* The queue a bio of @ioc would go to, without creating anything. */
static CfqQueue *
bio_queue (SchedQueue *e, const SimBio *bio)
{
  CfqData *cfqd = e->priv;
  if (bio->ioc == NULL)
    return NULL;
  if (bio->flags & SIM_BIO_SYNC)
    {
      CfqCic *cic = g_hash_table_lookup (e->ioc_data, bio->ioc);
      return cic ? cic->cfqq : NULL;
    }
  int klass = klass_of_ioc (bio->ioc);
  return klass == CFQ_IDLE ? cfqd->async_idle_cfqq
                           : cfqd->async_cfqq[klass][level_of_ioc (bio->ioc)];
}

static gboolean
cfq_allow_merge (SchedQueue *e, const SimRequest *rq, const SimBio *bio)
{
  /* A sync bio never goes into an async request. */
  if ((bio->flags & SIM_BIO_SYNC) && !rq->sync)
    return FALSE;
  CfqQueue *cfqq = bio_queue (e, bio);
  return cfqq != NULL && cfqq == RQ_CFQQ (rq);
}

static SchedMerge
cfq_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  CfqQueue *cfqq = bio_queue (e, bio);
  if (cfqq == NULL)
    return SCHED_NO_MERGE;
  SimRequest *rq = sched_rb_find_start (&cfqq->sort_list, bio->sector + bio->nr_sectors);
  if (rq == NULL)
    return SCHED_NO_MERGE;
  *out = rq;
  return SCHED_FRONT_MERGE;
}

static void
cfq_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  CfqData *cfqd = e->priv;
  CfqQueue *cfqq = RQ_CFQQ (rq);
  if (type != SCHED_FRONT_MERGE)
    return;
  sched_rb_del (&cfqq->sort_list, rq);
  sched_rb_add (&cfqq->sort_list, rq);
  /* The start sector moved: next_rq and the prio tree key may change. */
  SimRequest *next = cfqq->next_rq == rq ? NULL : cfqq->next_rq;
  cfqq->next_rq = NULL;
  set_next_rq (cfqd, cfqq, choose_req (cfqd, next, rq));
}

static void
cfq_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  CfqData *cfqd = e->priv;
  /* Keep the older FIFO position and deadline of the two. */
  if (sim_list_is_linked (&rq->fifo) && sim_list_is_linked (&next->fifo)
      && next->fifo_deadline_ns < rq->fifo_deadline_ns)
    {
      sim_list_del (&rq->fifo);
      sim_list_add (&rq->fifo, &next->fifo);
      rq->fifo_deadline_ns = next->fifo_deadline_ns;
    }
  remove_request (cfqd, next);
}

static SimRequest *
cfq_former_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_prev (rq);
}

static SimRequest *
cfq_latter_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_next (rq);
}

/* ---- device side ------------------------------------------------------------ */

static void
cfq_activate (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  cfqd->rq_in_driver[rq->sync]++;
  cfqd->last_position = sim_request_end_sector (rq);
}

static int
rq_in_driver (const CfqData *cfqd)
{
  return cfqd->rq_in_driver[0] + cfqd->rq_in_driver[1];
}

/* cfq_update_hw_tag: does the device queue commands? */
static void
update_hw_tag (CfqData *cfqd)
{
  int in_driver = rq_in_driver (cfqd);
  if (in_driver > cfqd->rq_in_driver_peak)
    cfqd->rq_in_driver_peak = in_driver;
  if (cfqd->rq_queued <= CFQ_HW_QUEUE_MIN && in_driver <= CFQ_HW_QUEUE_MIN)
    return;
  if (cfqd->hw_tag_samples++ < CFQ_HW_SAMPLES)
    return;
  cfqd->hw_tag = cfqd->rq_in_driver_peak >= CFQ_HW_QUEUE_MIN;
  cfqd->hw_tag_samples = 0;
  cfqd->rq_in_driver_peak = 0;
}

/* cfq_arm_slice_timer */
static void
arm_slice_timer (CfqData *cfqd, SimTime now_ns)
{
  CfqQueue *cfqq = cfqd->active_queue;
  CfqCic *cic = cfqd->active_cic;

  /* No seek penalty and command queueing: idling buys nothing. */
  if (!sched_device_rotational (cfqd->e) && cfqd->hw_tag)
    return;
  if (!cfqd->slice_idle)
    return;
  if (cfqd->idle_33)
    {
      if (!should_idle (cfqd, cfqq) || cfqq->dispatched)
        return;
    }
  else if (!cfqq->idle_window || rq_in_driver (cfqd))
    return;
  if (cic == NULL || cic->ioc->exited || cic->ioc->nr_tasks == 0)
    return;
  if (cfqd->idle_33 && sample_valid (cic->ttime.samples)
      && cfqq->slice_end - jiffies (cfqd, now_ns) < (gint64) cic->ttime.mean)
    return;

  cfqq->must_dispatch = TRUE;
  cfqq->wait_request = TRUE;

  /* A seeky process gets 2 ms to send its next request (2.6.28). */
  gint64 sl = cfqd->slice_idle;
  const CfqAvg *seek = seek_stats (cfqd, cfqq, cic);
  if (!cfqd->idle_33 && sample_valid (seek->samples) && avg_seeky (seek))
    sl = MIN (sl, (gint64) sched_msecs_to_jiffies (cfqd->e->hz, CFQ_MIN_TT_MS));

  SimTime at = sched_jiffies_to_ns (cfqd->e, (int) (jiffies (cfqd, now_ns) + sl));
  sched_timer_arm (cfqd->e, &cfqd->idle_timer, at);
  SCHED_LOG (cfqd->e, now_ns, "idle_arm pid=%u until_us=%" G_GINT64_FORMAT, cfqq->pid,
             at / SIM_NS_PER_US);
}

static void
cfq_completed (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  CfqQueue *cfqq = RQ_CFQQ (rq);
  CfqCic *cic = RQ_CIC (rq);
  gint64 now_j = jiffies (cfqd, now_ns);

  update_hw_tag (cfqd);
  g_assert (cfqd->rq_in_driver[rq->sync] > 0 && cfqq->dispatched > 0);
  cfqd->rq_in_driver[rq->sync]--;
  cfqq->dispatched--;
  if (cfqq->sync)
    cfqd->sync_flight--;
  if (rq->sync && cic)
    {
      cic->last_end_request = now_j;
      /* low_latency: remember when a sync request was badly delayed. */
      if (now_ns - rq->dispatch_ns >= sched_jiffies_to_ns (e, cfqd->fifo_expire[1]))
        cfqd->last_delayed_sync = now_j;
    }

  if (cfqd->active_queue == cfqq)
    {
      gboolean empty = cfqq->sort_list.count == 0;
      if (cfqq->slice_new)
        {
          set_prio_slice (cfqd, cfqq, now_ns);
          cfqq->slice_new = FALSE;
        }
      if (slice_used (cfqd, cfqq, now_ns) || cfqq->klass == CFQ_IDLE)
        slice_expired (cfqd, TRUE, EXPIRE_TIMEOUT, now_ns);
      else if (empty && rq->sync)
        {
          CfqQueue *coop = close_cooperator (cfqd, cfqq, TRUE);
          /* 2.6.28 has only a stub here (never a cooperator); from
           * 2.6.30 a queue reading next to us means no idling. */
          if (coop == NULL)
            arm_slice_timer (cfqd, now_ns);
        }
    }
  queue_maybe_free (cfqd, cfqq, now_ns);
}

/* cfq_idle_slice_timer */
static void
idle_timer_fn (SchedQueue *e, SchedTimer *t, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  CfqQueue *cfqq = cfqd->active_queue;
  gboolean timed_out = TRUE;
  ExpireReason why = EXPIRE_EMPTY;

  SCHED_LOG (e, now_ns, "idle_fire pid=%u", queue_pid (cfqq));
  if (cfqq)
    {
      timed_out = FALSE;
      if (slice_used (cfqd, cfqq, now_ns))
        {
          why = EXPIRE_TIMEOUT;
          goto expire;
        }
      /* Nobody else wants the disk: keep the slice. */
      if (cfqd->busy_queues == 0)
        return;
      if (cfqq->sort_list.count > 0)
        {
          cfqq->must_dispatch = TRUE;
          return;
        }
      /* 2.6.33: an idle period without a request ends "deep". */
      cfqq->deep = FALSE;
    }
expire:
  slice_expired (cfqd, timed_out, why, now_ns);
}

/* ---- process side ------------------------------------------------------------ */

static SchedMayQueue
cfq_may_queue (SchedQueue *e, const SimIoContext *ioc, SimOp op, gboolean sync)
{
  CfqData *cfqd = e->priv;
  if (!sync)
    return SCHED_MAY_QUEUE_DEFAULT;
  CfqCic *cic = g_hash_table_lookup (e->ioc_data, ioc);
  CfqQueue *cfqq = cic ? cic->cfqq : NULL;
  /* The queue being waited for may get a request, once per slice. */
  if (cfqq && cfqq == cfqd->active_queue && cfqq->wait_request && !cfqq->must_alloc_slice)
    {
      cfqq->must_alloc_slice = TRUE;
      return SCHED_MAY_QUEUE_MUST;
    }
  return SCHED_MAY_QUEUE_DEFAULT;
}

static void
cfq_exit_ioc (SchedQueue *e, SimIoContext *ioc, SimTime now_ns)
{
  CfqData *cfqd = e->priv;
  CfqCic *cic = g_hash_table_lookup (e->ioc_data, ioc);
  if (cic == NULL || cic->cfqq == NULL)
    return;
  CfqQueue *cfqq = cic->cfqq;
  cic->cfqq = NULL;
  if (cfqd->active_cic == cic)
    cfqd->active_cic = NULL;
  /* A pending merge counted this process in its target as well. */
  if (cfqq->new_cfqq && cfqq->new_cfqq->procs > 1)
    cfqq->new_cfqq->procs--;
  g_assert (cfqq->procs > 0);
  cfqq->procs--;
  /* cfq_exit_cfqq: an idling active queue of a dead process stops now. */
  if (cfqd->active_queue == cfqq && cfqq->procs == 0)
    slice_expired (cfqd, FALSE, EXPIRE_EMPTY, now_ns);
  queue_maybe_free (cfqd, cfqq, now_ns);
  sched_kick (e);
}

/* ---- setup ------------------------------------------------------------------ */

static int
resolve_switch (int value, int era, int since)
{
  return value < 0 ? era >= since : value;
}

static gboolean
cfq_init (SchedQueue *e, GError **error)
{
  CfqData *cfqd = e->priv;
  if (cfqd->era < 20618 || cfqd->era >= 50000)
    {
      g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                   "cfq era %d.%d.%d is outside 2.6.18-4.x", cfqd->era / 10000,
                   cfqd->era / 100 % 100, cfqd->era % 100);
      return FALSE;
    }
  cfqd->e = e;
  cfqd->close_cooperator = resolve_switch (cfqd->close_cooperator, cfqd->era, ERA_COOP);
  cfqd->queue_merge = resolve_switch (cfqd->queue_merge, cfqd->era, ERA_MERGE);
  cfqd->low_latency = resolve_switch (cfqd->low_latency, cfqd->era, ERA_MERGE);
  cfqd->workload_trees = resolve_switch (cfqd->workload_trees, cfqd->era, ERA_MERGE);
  cfqd->one_per_call = cfqd->era >= ERA_COOP;
  cfqd->queue_seek = cfqd->era >= ERA_MERGE || cfqd->queue_merge;
  cfqd->idle_33 = cfqd->workload_trees;

  sim_rb_tree_init (&cfqd->st_single);
  for (int c = 0; c < CFQ_N_CLASSES; c++)
    for (int w = 0; w < CFQ_N_WL; w++)
      sim_rb_tree_init (&cfqd->st[c][w]);
  for (int p = 0; p < CFQ_PRIO_LISTS; p++)
    sim_rb_tree_init (&cfqd->prio_trees[p]);
  cfqd->hw_tag = 1;
  cfqd->serving_class = CFQ_BE;
  cfqd->serving_type = CFQ_WL_SYNC;
  cfqd->last_delayed_sync = -(gint64) e->hz;
  cfqd->workload_expires = -1;
  cfqd->all_queues = g_ptr_array_new_with_free_func (g_free);
  sim_list_init (&cfqd->free_queues);
  sched_timer_init (e, &cfqd->idle_timer, idle_timer_fn);
  return TRUE;
}

static void
cfq_exit (SchedQueue *e)
{
  CfqData *cfqd = e->priv;
  /* Also called when the tunables were refused before init ran. */
  if (cfqd->all_queues == NULL)
    return;
  sched_timer_cancel (e, &cfqd->idle_timer);
  g_ptr_array_unref (cfqd->all_queues);
}

static gboolean
cfq_queue_empty (SchedQueue *e)
{
  CfqData *cfqd = e->priv;
  return cfqd->rq_queued == 0;
}

static void
cfq_dump (SchedQueue *e, GString *out)
{
  CfqData *cfqd = e->priv;
  g_string_append_printf (out,
                          "cfq era=%d coop=%d merge=%d low_latency=%d workload_trees=%d"
                          " busy=%d queued=%d in_driver=%d active=%u hw_tag=%d\n",
                          cfqd->era, cfqd->close_cooperator, cfqd->queue_merge,
                          cfqd->low_latency, cfqd->workload_trees, cfqd->busy_queues,
                          cfqd->rq_queued, rq_in_driver (cfqd), queue_pid (cfqd->active_queue),
                          cfqd->hw_tag);
}

const SchedOps sched_cfq_ops = {
  .name           = "cfq",
  .era            = "2.6.28-2.6.33",
  .summary        = "per-process time slices with idling; close cooperators, queue merging, "
                    "workload trees and low_latency by era",
  .tunables       = cfq_tunables,
  .priv_size      = sizeof (CfqData),
  .ioc_data_size  = sizeof (CfqCic),
  .init           = cfq_init,
  .exit           = cfq_exit,
  .add_request    = cfq_add_request,
  .dispatch       = cfq_dispatch,
  .queue_empty    = cfq_queue_empty,
  .merge          = cfq_merge,
  .merged         = cfq_merged,
  .merge_requests = cfq_merge_requests,
  .allow_merge    = cfq_allow_merge,
  .former_request = cfq_former_request,
  .latter_request = cfq_latter_request,
  .activate       = cfq_activate,
  .completed      = cfq_completed,
  .dump           = cfq_dump,
  .may_queue      = cfq_may_queue,
  .exit_ioc       = cfq_exit_ioc,
};

/* ---- for the tests (sched-cfq-private.h) ------------------------------------ */

void
sched_cfq_switches (SchedQueue *e, SchedCfqSwitches *out)
{
  CfqData *cfqd = e->priv;
  out->era = cfqd->era;
  out->close_cooperator = cfqd->close_cooperator;
  out->queue_merge = cfqd->queue_merge;
  out->low_latency = cfqd->low_latency;
  out->workload_trees = cfqd->workload_trees;
}

int
sched_cfq_prio_slice (SchedQueue *e, gboolean sync, int prio)
{
  return prio_slice (e->priv, sync, prio);
}

int
sched_cfq_async_maxrq (SchedQueue *e, int prio)
{
  CfqQueue q = { .ioprio = prio };
  return prio_to_maxrq (e->priv, &q);
}

gboolean
sched_cfq_proc_info (SchedQueue *e, SimIoContext *ioc, SchedCfqProcInfo *out)
{
  CfqData *cfqd = e->priv;
  CfqCic *cic = g_hash_table_lookup (e->ioc_data, ioc);
  if (cic == NULL || cic->cfqq == NULL)
    return FALSE;
  CfqQueue *cfqq = cic->cfqq;
  const CfqAvg *seek = seek_stats (cfqd, cfqq, cic);
  out->idle_window = cfqq->idle_window;
  out->seeky = avg_seeky (seek);
  out->coop = cfqq->coop;
  out->ttime_samples = cic->ttime.samples;
  out->ttime_mean = cic->ttime.mean;
  out->seek_samples = seek->samples;
  out->seek_mean = seek->mean;
  out->shared_by = (guint) cfqq->procs;
  return TRUE;
}

gboolean
sched_cfq_same_queue (SchedQueue *e, SimIoContext *a, SimIoContext *b)
{
  CfqCic *ca = g_hash_table_lookup (e->ioc_data, a);
  CfqCic *cb = g_hash_table_lookup (e->ioc_data, b);
  return ca && cb && ca->cfqq && ca->cfqq == cb->cfqq;
}

gboolean
sched_cfq_hw_tag (SchedQueue *e)
{
  CfqData *cfqd = e->priv;
  return cfqd->hw_tag;
}

static gboolean
queue_consistent (CfqData *cfqd, CfqQueue *cfqq, int *queued, int *busy)
{
  if (!cfqq->in_use)
    return TRUE;
  if ((gsize) (cfqq->queued[0] + cfqq->queued[1]) != cfqq->sort_list.count)
    return FALSE;
  if (sim_list_length (&cfqq->fifo) != cfqq->sort_list.count)
    return FALSE;
  if ((cfqq->sort_list.count > 0) != (cfqq->next_rq != NULL))
    return FALSE;
  if (cfqq->on_rr != (cfqq->sort_list.count > 0))
    return FALSE;
  if (cfqq->on_rr != sim_rb_node_linked (&cfqq->rb_node))
    return FALSE;
  if (cfqq->p_root && (!cfqq->on_rr || cfqq->p_key != cfqq->next_rq->sector))
    return FALSE;
  if (cfqq->dispatched < 0 || cfqq->procs < 0)
    return FALSE;
  *queued += (int) cfqq->sort_list.count;
  *busy += cfqq->on_rr;
  return TRUE;
}

gboolean
sched_cfq_check_invariants (SchedQueue *e)
{
  CfqData *cfqd = e->priv;
  int queued = 0, busy = 0;
  for (guint i = 0; i < cfqd->all_queues->len; i++)
    if (!queue_consistent (cfqd, g_ptr_array_index (cfqd->all_queues, i), &queued, &busy))
      return FALSE;
  if (queued != cfqd->rq_queued || busy != cfqd->busy_queues)
    return FALSE;
  if (cfqd->rq_in_driver[0] < 0 || cfqd->rq_in_driver[1] < 0 || cfqd->sync_flight < 0)
    return FALSE;
  if (cfqd->active_queue && !cfqd->active_queue->in_use)
    return FALSE;
  return TRUE;
}
