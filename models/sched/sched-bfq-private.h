/* sched-bfq-private.h — BFQ's internal data, shared by sched-bfq.c (the
 * policy), sched-bfq-wf2q.c (B-WF2Q+ virtual time) and the unit tests.
 *
 * Follows Linux 6.18 block/bfq-iosched.h and block/bfq-wf2q.c
 * (../shared/reference/kernel-algorithms.md §5.2), without cgroups: one
 * flat scheduling level with one service tree per I/O priority class.
 */
#pragma once

#include <glib.h>
#include "models/sched/sched.h"

G_BEGIN_DECLS

/* Fixed-point shift of virtual times (WFQ_SERVICE_SHIFT). */
#define BFQ_SERVICE_SHIFT 22

/* Service trees, one per class, served strictly in this order. */
enum {
  BFQ_CLASS_RT,
  BFQ_CLASS_BE,
  BFQ_CLASS_IDLE,
  BFQ_N_CLASSES
};

/* Where an entity is. */
typedef enum {
  BFQ_ENT_NONE,       /* not on a tree (new, forgotten, or in service) */
  BFQ_ENT_ACTIVE,     /* backlogged, waiting for service */
  BFQ_ENT_IDLE,       /* empty, but its finish time is still ahead of V */
} BfqEntityWhere;

/* A schedulable entity (struct bfq_entity): a queue, here always. */
typedef struct {
  SimRbNode      node;          /* in the active or idle tree, by finish time */
  BfqEntityWhere where;
  gboolean       on_st;         /* its weight counts in the tree's wsum */
  guint64        start;         /* virtual start S */
  guint64        finish;        /* virtual finish F */
  guint64        seq;           /* insertion order: ties on F are FIFO */
  int            orig_weight;   /* from the I/O priority */
  int            weight;        /* orig_weight * wr_coeff */
  int            budget;        /* sectors */
  int            service;       /* sectors received in this budget */
} BfqEntity;

/* One service tree (struct bfq_service_tree). */
typedef struct {
  SimRbTree active;             /* backlogged entities, by F */
  SimRbTree idle;               /* idle entities with F > V, by F */
  guint64   vtime;              /* V */
  guint64   wsum;               /* weights of active, idle and in-service entities */
  guint64   next_seq;
} BfqServiceTree;

/* bfq-wf2q.c */
guint64    bfq_delta               (guint64 service, guint64 weight);
void       bfq_st_init             (BfqServiceTree *st);
/* Activate an entity that is not backlogged (new, or on the idle tree);
 * @backshift: it expired while waiting for a request that came in time,
 * keep its old timestamps (pushed up by (V - F) / @wr_coeff if behind). */
void       bfq_entity_activate     (BfqServiceTree *st, BfqEntity *e, gboolean backshift,
                                    int wr_coeff);
/* Requeue: the in-service entity after expiry (S moves past its service),
 * or reposition an active entity whose budget changed. */
void       bfq_entity_requeue      (BfqServiceTree *st, BfqEntity *e, gboolean in_service);
/* The entity has no more requests: to the idle tree if F > V, else forgotten. */
void       bfq_entity_deactivate   (BfqServiceTree *st, BfqEntity *e, gboolean in_service);
/* Charge @served sectors to @e and advance V by served / wsum. */
void       bfq_st_served           (BfqServiceTree *st, BfqEntity *e, int served);
/* The eligible entity (S <= V) with the smallest F; V first jumps to the
 * smallest S if no entity is in service and none is eligible. */
BfqEntity *bfq_st_lookup           (BfqServiceTree *st, gboolean has_in_service);
/* Take @e off the active tree to serve it. */
void       bfq_st_set_in_service   (BfqServiceTree *st, BfqEntity *e);
/* Change the weight, keeping wsum right. */
void       bfq_entity_set_weight   (BfqServiceTree *st, BfqEntity *e, int weight);
gboolean   bfq_st_check            (const BfqServiceTree *st);

/* Expiration reasons (enum bfqq_expiration). */
typedef enum {
  BFQQE_TOO_IDLE,
  BFQQE_BUDGET_TIMEOUT,
  BFQQE_BUDGET_EXHAUSTED,
  BFQQE_NO_MORE_REQUESTS,
  BFQQE_PREEMPTED,
} BfqExpiration;

typedef struct _BfqQueue BfqQueue;
typedef struct _BfqData  BfqData;
typedef struct _BfqIoc   BfqIoc;

/* struct bfq_queue. */
struct _BfqQueue {
  BfqEntity    entity;
  SimRbTree    sort_list;       /* requests by sector */
  SimList      fifo;            /* requests by arrival, rq->fifo */
  SimRequest  *next_rq;
  SimList      busy_link;       /* BfqData.busy_list */
  guint        pid;
  int          class_idx;       /* BFQ_CLASS_* */
  int          level;           /* ioprio level 0..7 */
  gboolean     sync;
  gboolean     initialised;
  gboolean     busy;
  gboolean     wait_request;    /* the device idles for it */
  gboolean     non_blocking_wait_rq;
  gboolean     fifo_expire;     /* FIFO already checked in this slot */
  gboolean     has_short_ttime;
  gboolean     io_bound;
  gboolean     in_large_burst;
  gboolean     in_burst_list;
  gboolean     just_created;
  gboolean     coop;            /* shared by merged processes */
  gboolean     split_coop;      /* seeky while shared: split at next request */
  gboolean     softrt_update;
  gboolean     in_weights;      /* counted in BfqData.weights */
  int          counted_weight;
  int          nr_procs;        /* processes whose I/O goes here (process refs) */
  BfqIoc      *owner;           /* per-process data it lives in (NULL: async) */
  BfqQueue    *new_q;           /* merged into: its processes follow at their next request */
  int          dispatched;      /* in the driver */
  int          max_budget;
  gint64       budget_timeout_j;
  /* weight raising (low_latency) */
  int          wr_coeff;
  gint64       wr_cur_max_time_j;
  gint64       last_wr_start_finish_j;
  gint64       wr_start_at_switch_to_srt_j;
  gint64       soft_rt_next_start_j;
  gint64       last_idle_bklogged_j;
  guint64      service_from_backlogged;
  guint64      service_from_wr;
  gint64       first_io_time_j;
  gint64       split_time_j;
  gint64       creation_time_j;
  /* think time, I/O intensity and seeks */
  SimTime      io_start_ns;
  SimTime      tot_idle_ns;
  SimTime      last_end_request_ns;
  guint64      ttime_samples;
  guint64      ttime_total;
  guint64      ttime_mean_ns;
  guint32      seek_history;
  guint64      last_request_pos;
};

/* Per-process data (struct bfq_io_cq) through sched_ioc_data(). */
struct _BfqIoc {
  BfqQueue      own_sync;       /* this process's own sync queue */
  BfqQueue     *sync_q;         /* own_sync, or the shared queue after a merge */
  BfqQueue     *stable_merge_q; /* a queue created just before ours: merge later */
  gboolean      stable_early;   /* ...at once (non-rotational with queueing) */
  gboolean      stably_merged;  /* merged for that reason: raised, never split */
  SimIoContext *ioc;
};

#define BFQ_MAX_WEIGHTS 32
#define BFQ_LARGE_BURST_THRESH 8

struct _BfqData {
  BfqServiceTree st[BFQ_N_CLASSES];
  BfqQueue      *in_service;
  SimList        busy_list;
  int            busy_queues;
  int            busy_per_class[BFQ_N_CLASSES];
  int            wr_busy_queues;
  int            queued;
  int            rq_in_driver;
  BfqQueue       async_q[BFQ_N_CLASSES][8];
  BfqIoc         null_ioc;      /* requests without an io context */
  SchedTimer     idle_timer;
  SchedQueue    *e;
  gboolean       draining;
  SimTime        now_ns;        /* time of the last hook that was told it */
  /* distinct weights of busy non-raised queues (queue_weights_tree) */
  int            weights[BFQ_MAX_WEIGHTS];
  int            weight_counts[BFQ_MAX_WEIGHTS];
  int            n_weights;
  /* budgets */
  int            bfq_max_budget;
  int            budgets_assigned;
  SimTime        last_budget_start_ns;
  SimTime        last_idling_start_ns;
  gint64         class_idle_last_service_j;
  /* peak rate (sectors/us << 16) */
  guint32        peak_rate;
  guint64        rate_dur_prod;
  guint32        peak_rate_samples;
  guint32        sequential_samples;
  guint64        tot_sectors_dispatched;
  guint32        last_rq_max_size;
  SimTime        first_dispatch_ns;
  SimTime        last_dispatch_ns;
  SimTime        last_completion_ns;
  SimTime        delta_from_first_ns;
  guint64        last_position;
  /* hw_tag detection */
  int            hw_tag;        /* -1 unknown, 0, 1 */
  int            max_rq_in_driver;
  int            hw_tag_samples;
  /* large bursts */
  BfqQueue      *burst_list[BFQ_LARGE_BURST_THRESH];
  int            burst_size;
  gboolean       large_burst;
  gint64         last_ins_in_burst_j;
  guint64        in_serv_last_pos;  /* end of the in-service queue's last dispatch */
  BfqQueue      *last_created;  /* last sync queue created, for stable merging */
  /* tunables */
  gint64         slice_idle_ns;
  int            timeout_j;
  int            user_max_budget;
  int            back_max_kib;
  int            back_penalty;
  gint64         fifo_expire_ns[2];   /* [0] async, [1] sync */
  int            low_latency;
  int            strict_guarantees;
  /* constants (kernel defaults, jiffies at this HZ) */
  int            wr_coeff;
  gint64         wr_rt_max_time_j;
  gint64         wr_min_idle_time_j;
  gint64         wr_min_inter_arr_async_j;
  int            wr_max_softrt_rate;
  gint64         burst_interval_j;
};

/* sched-bfq.c, for tests. */
BfqData   *sched_bfq_data          (SchedQueue *e);
/* The queue @ioc's requests of @sync go to now (NULL before its first one). */
BfqQueue  *sched_bfq_queue_of      (SchedQueue *e, SimIoContext *ioc, gboolean sync);
/* __bfq_bfqq_recalc_budget. */
void       sched_bfq_recalc_budget (BfqData *bfqd, BfqQueue *bfqq, BfqExpiration reason);
int        sched_bfq_min_budget    (const BfqData *bfqd);
gboolean   sched_bfq_seeky         (const BfqQueue *bfqq);
gboolean   sched_bfq_better_to_idle (BfqData *bfqd, BfqQueue *bfqq);
/* Structural invariants; for g_assert in tests. */
gboolean   sched_bfq_check_invariants (SchedQueue *e);

G_END_DECLS
