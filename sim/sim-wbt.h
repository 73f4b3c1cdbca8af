/* sim-wbt.h — blk-wbt, the block layer's writeback throttling (Linux 6.18
 * block/blk-wbt.c, block/blk-rq-qos.c, block/blk-stat.c): a cap on the
 * buffered writes one request queue holds, scaled by the read latency it
 * observes.  An engine mechanism of blk-mq queues (sim-queue.c calls it
 * where blk_mq_submit_bio and blk_mq_end_request call rq_qos_*).
 *
 *  - which bios (bio_to_wbt_flags, wbt_should_throttle): reads are only
 *    sampled (WBT_READ); writes are tracked (WBT_TRACKED) unless they are
 *    O_DIRECT writes, REQ_SYNC | REQ_IDLE;
 *  - the throttle (wbt_wait -> __wbt_wait -> rq_qos_wait), called by
 *    blk_mq_get_new_requests before a request is allocated, so a bio that
 *    merges takes nothing: a tracked bio takes a token while the tracked
 *    requests (allocated and not yet freed) are below get_limit() and
 *    nobody waits; otherwise its task sleeps, FIFO;
 *  - get_limit: max_depth for REQ_SYNC or REQ_META writes (fsync and sync,
 *    WB_SYNC_ALL) and while a task slept in balance_dirty_pages within the
 *    last second (wb_recent_wait); wb_background for REQ_BACKGROUND
 *    writeback and while a read was issued or completed within 100 ms
 *    (close_io); wb_normal otherwise;
 *  - the limits (calc_wb_limits): wb_normal = (max_depth + 1) / 2,
 *    wb_background = (max_depth + 3) / 4; max_depth <= 2 gives max_depth
 *    and 1; min_lat_nsec 0 gives 0 and 0;
 *  - max_depth (blk-rq-qos.c rq_depth_calc_max_depth): min (RWB_DEF_DEPTH
 *    16, queue depth) shifted right by a positive scale step, left by a
 *    negative one up to 3/4 of the queue depth; a queue depth of 1 gives 2,
 *    or 1 once scaled down;
 *  - done (wbt_done -> wbt_rqw_done), when a tracked request is freed
 *    (completed, or merged into another): its token is returned and the
 *    sleepers are woken, FIFO while tokens last, once the count is below
 *    the wake limit (0 on a queue with a volatile write cache and no recent
 *    dirty wait, wb_normal otherwise) by at least wb_background / 2, or is 0;
 *  - the window (a blk-stat callback; wbt_wait arms it when idle): 100 ms
 *    (RWB_WINDOW_NSEC), shortened to 100 ms * 16 / int_sqrt ((step + 1) <<
 *    8) at positive steps (rwb_arm_timer).  Every request that completes
 *    while it runs is a sample, its latency from issue to completion
 *    (blk_stat_add).  At its end (wb_timer_fn, latency_exceeded): a read
 *    still in flight for longer than the window, or longer than the target
 *    with no read sample, or a minimum read latency above min_lat_nsec ->
 *    scale down; with fewer than 1 read or 3 write samples: scale up if
 *    writes were seen, are in flight or a task recently waited (the step
 *    may go negative), else after RWB_UNKNOWN_BUMP (5) such windows back
 *    towards step 0; otherwise scale up.  The window is armed again while
 *    the step is not 0 or writes are in flight.
 * The default target (wbt_default_latency_nsec) is 2 ms on a non-rotational
 * queue and 75 ms on a rotational one, picked once when wbt is initialised.
 *
 * Simplifications: the simulation has no discards and no swap, so one wait
 * queue (WBT_RWQ_BG) and no kswapd rule; a woken task takes its token and
 * goes on at once (the kernel makes it runnable); the window ends exactly
 * nsecs_to_jiffies (window) jiffies after it was armed (no tick phase), at
 * least one jiffy; jiffies are the simulated time truncated to the
 * scenario's HZ; the queue depth is fixed (no queue_depth_changed).
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"
#include "sim/sim-request.h"
#include "sim/sim-queue.h"

G_BEGIN_DECLS

#define SIM_WBT_DEF_DEPTH          16u                        /* RWB_DEF_DEPTH */
#define SIM_WBT_WINDOW_NS          (100 * SIM_NS_PER_MS)      /* RWB_WINDOW_NSEC */
#define SIM_WBT_MIN_WRITE_SAMPLES  3u                         /* RWB_MIN_WRITE_SAMPLES */
#define SIM_WBT_UNKNOWN_BUMP       5u                         /* RWB_UNKNOWN_BUMP */
#define SIM_WBT_LAT_NONROT_NS      (2 * SIM_NS_PER_MS)        /* wbt_default_latency_nsec */
#define SIM_WBT_LAT_ROT_NS         (75 * SIM_NS_PER_MS)

/* rq->wbt_flags (enum wbt_flags; no WBT_KSWAPD/WBT_DISCARD here). */
typedef enum {
  SIM_WBT_TRACKED = 1 << 0,   /* a throttled write: holds a token */
  SIM_WBT_READ    = 1 << 1,   /* a read: its issue and completion are noted */
} SimWbtFlags;

/* enable_state: the default states follow the elevator (bfq turns wbt off
 * with wbt_disable_default), the manual ones come from wbt_lat_usec. */
typedef enum {
  SIM_WBT_STATE_ON_DEFAULT  = 1,
  SIM_WBT_STATE_ON_MANUAL   = 2,
  SIM_WBT_STATE_OFF_DEFAULT = 3,
  SIM_WBT_STATE_OFF_MANUAL  = 4,
} SimWbtState;

/* latency_exceeded's verdict on a window. */
typedef enum {
  SIM_WBT_LAT_OK = 1,
  SIM_WBT_LAT_UNKNOWN,
  SIM_WBT_LAT_UNKNOWN_WRITES,
  SIM_WBT_LAT_EXCEEDED,
} SimWbtStatus;

/* struct rq_depth (block/blk-rq-qos.h). */
typedef struct {
  guint    max_depth;
  gint     scale_step;
  gboolean scaled_max;
  guint    queue_depth;
  guint    default_depth;
} SimRqDepth;

/* rq_depth_calc_max_depth: set max_depth from the step; TRUE if the depth
 * cannot grow further by scaling. */
gboolean sim_rq_depth_calc_max_depth (SimRqDepth *rqd);
/* rq_depth_scale_up / rq_depth_scale_down: FALSE when no step was taken. */
gboolean sim_rq_depth_scale_up       (SimRqDepth *rqd);
gboolean sim_rq_depth_scale_down     (SimRqDepth *rqd,
                                      gboolean    hard_throttle);

/* What a window's verdict did to the step. */
typedef enum {
  SIM_WBT_SCALE_NONE,
  SIM_WBT_SCALED_UP,          /* a deeper queue: the step went down */
  SIM_WBT_SCALED_DOWN,
} SimWbtScale;

/* wb_timer_fn's switch on @status: exceeded scales down (hard: a negative
 * step drops to 0), ok and unknown_writes scale up, unknown moves the step
 * towards 0 after RWB_UNKNOWN_BUMP such windows in a row (@unknown_cnt,
 * reset by every step taken).  The limits and the window are the caller's
 * to recompute. */
SimWbtScale sim_wbt_apply_verdict    (SimRqDepth  *rqd,
                                      SimWbtStatus status,
                                      guint       *unknown_cnt);

/* calc_wb_limits. */
void     sim_wbt_calc_limits         (guint       max_depth,
                                      SimTime     min_lat_ns,
                                      guint      *wb_normal,
                                      guint      *wb_background);
/* rwb_arm_timer's window for @scale_step. */
SimTime  sim_wbt_window_ns           (SimTime     win_ns,
                                      gint        scale_step);
/* wbt_default_latency_nsec. */
SimTime  sim_wbt_default_latency_ns  (gboolean    rotational);

/* SimWbtConfig (declared in sim-queue.h). */
struct _SimWbtConfig {
  SimWbtState state;
  SimTime     min_lat_ns;     /* wbt_lat_usec * 1000 */
  guint       queue_depth;    /* blk_queue_depth at wbt_init */
  gboolean    write_cache;    /* QUEUE_FLAG_WC: a volatile write cache */
  guint       hz;             /* for the jiffies-based rules */
};

/* What a run of wbt did, for results. */
typedef struct {
  guint64 tracked;            /* bios that took a token */
  guint64 waits;              /* of them, bios whose task slept first */
  guint64 windows;            /* windows ended (wb_timer_fn runs) */
  guint64 status[SIM_WBT_LAT_EXCEEDED + 1];   /* windows by verdict */
  guint64 sync_issue_exceeded;/* of the exceeded, by a read still in flight */
  guint64 scale_ups;
  guint64 scale_downs;
  gint    min_step;
  gint    max_step;
  guint   max_inflight;       /* tokens out at once */
  guint   max_waiting;        /* sleepers at once */
} SimWbtStats;

/* A sleeper got its token: the queue goes on with its request. */
typedef void (*SimWbtGrantFunc) (SimRequestQueue *q, SimBioWaiter *waiter);
/* --trace-sched lines: "<decision> key=value ...", as the wbt tracepoints. */
typedef void (*SimWbtLogFunc)   (gpointer data, SimTime now_ns, const char *device,
                                 const char *message);

struct _SimWbt {
  SimRequestQueue *q;
  SimWbtConfig     cfg;
  SimRqDepth       rq_depth;
  guint            wb_normal;
  guint            wb_background;
  SimTime          win_ns;
  SimTime          cur_win_ns;
  guint            unknown_cnt;
  gint64           last_issue_j;    /* jiffies of the last read issued (to wbt_wait) */
  gint64           last_comp_j;     /* and completed */
  guint64          sync_cookie;     /* seq + 1 of the read being watched; 0: none */
  SimTime          sync_issue_ns;
  guint            inflight;        /* tokens out: rq_wait[WBT_RWQ_BG].inflight */
  SimList          waiters;         /* SimBioWaiter.link, FIFO */
  guint            n_waiting;
  SimEventId       timer;           /* the window; 0: not active */
  struct {
    guint64 nr_samples;
    SimTime min_ns;
  }                stat[SIM_N_OPS]; /* this window's completions, READ and WRITE */
  SimWbtGrantFunc  grant;
  SimWbtLogFunc    log;
  gpointer         log_data;
  SimWbtStats      stats;
};

/* wbt_init: the queue's wbt with @cfg; @grant continues a woken bio. */
SimWbt  *sim_wbt_new          (SimRequestQueue     *q,
                               const SimWbtConfig  *cfg,
                               SimWbtGrantFunc      grant);
void     sim_wbt_free         (SimWbt              *w);
void     sim_wbt_set_log      (SimWbt              *w,
                               SimWbtLogFunc        fn,
                               gpointer             data);

/* rwb_enabled. */
gboolean sim_wbt_enabled      (const SimWbt        *w);
/* bio_to_wbt_flags: what wbt_track records on the bio's new request. */
guint8   sim_wbt_bio_flags    (const SimWbt        *w,
                               const SimBio        *bio);
/* get_limit for a tracked bio with @bio_flags (SimBioFlags), now. */
guint    sim_wbt_get_limit    (const SimWbt        *w,
                               guint32              bio_flags);

/* wbt_wait: TRUE when @bio may go on to get a request (a token taken, or
 * not tracked); FALSE when its task sleeps: @bio is parked on @waiter and
 * the grant function is called with it once it has its token. */
gboolean sim_wbt_throttle     (SimWbt              *w,
                               SimBio              *bio,
                               SimBioWaiter        *waiter);
/* The first sleeper, or NULL.  For the queue: a woken task goes on to
 * submit its next bios, which the simulation has already cut and parked
 * behind it. */
SimBioWaiter *sim_wbt_first_waiter (SimWbt       *w);
/* Takes @waiter off the wait queue without a token: its bio merged into
 * the request of the task woken before it (a bio that merges is not
 * throttled). */
void     sim_wbt_unqueue      (SimWbt              *w,
                               SimBioWaiter        *waiter);
/* wbt_issue: @rq starts at the device (blk_mq_start_request). */
void     sim_wbt_issue        (SimWbt              *w,
                               const SimRequest    *rq);
/* blk_stat_add: @rq completes now; a sample if the window is active. */
void     sim_wbt_stat_add     (SimWbt              *w,
                               const SimRequest    *rq);
/* wbt_done: a request with @wbt_flags and @seq was freed (completed or
 * merged away); may wake sleepers. */
void     sim_wbt_done         (SimWbt              *w,
                               guint8               wbt_flags,
                               guint64              seq);

G_END_DECLS
