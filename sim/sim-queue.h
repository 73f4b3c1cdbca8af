/* sim-queue.h — the request queue of one block device (Linux 2.6 single
 * queue, 2.6.28-2.6.33 rules; ../shared/reference/kernel-algorithms.md
 * "Common single-queue elevator framework", §6.1-6.4).
 *
 *  - bios back- and front-merge into requests up to max_sectors: the
 *    one-entry last_merge cache, a back-merge hash by end sector, then the
 *    elevator's front-merge lookup; a grown request tries to merge with its
 *    neighbour (request-to-request merge);
 *  - requests come from a pool of nr_requests per direction (default 128);
 *    when it is empty the submitting process sleeps (blktrace S) in FIFO
 *    order until a request is freed (2.4's batched wakeups: SimPoolWake);
 *  - plugging: a request added to an empty elevator plugs the queue and arms
 *    a 3 ms unplug timer; the queue unplugs when unplug_thresh (4) requests
 *    wait, when the timer fires, or when a task waits on its I/O;
 *  - dispatch: while the device has fewer than its queue depth in flight,
 *    the dispatch list is refilled from the elevator and its head started.
 *
 * Plugging of 2.4 and 2.5.3x (unplug_delay_ns = 0 and unplug_thresh = 0,
 * the queue on a SimPlugList; 2.4 drivers/block/ll_rw_blk.c
 * __make_request/plug_device, 2.5.3x drivers/block/ll_rw_blk.c
 * blk_plug_device/blk_run_queues):
 *  - a request added to a queue with none waiting (requests in flight do
 *    not count: the driver has dequeued them) plugs it and puts it on the
 *    machine's plug list (tq_disk in 2.4, blk_plug_list in 2.5.3x); there
 *    is no unplug timer and no unplug threshold (both came later, with
 *    2.6's per-queue plugging);
 *  - the driver takes nothing from a plugged queue, not even when a
 *    completion calls it (2.4 and 2.5 scsi_request_fn return at once while
 *    the queue is plugged);
 *  - the queue is unplugged alone by a submitter about to sleep for a
 *    request (get_request_wait -> generic_unplug_device), and together
 *    with every other plugged queue by sim_plug_list_run: a task that
 *    waits on its I/O (run_task_queue(&tq_disk), blk_run_queues) and the
 *    periodic kupdate writeback (2.4 kupdate -> sync_old_buffers ->
 *    run_task_queue(&tq_disk); 2.5.3x mm/page-writeback.c wb_kupdate ->
 *    blk_run_queues, every dirty_writeback_centisecs = 5 s).
 *
 * With a blk-mq elevator (SCHED_F_MQ; Linux 6.18 block/blk-mq.c,
 * blk-merge.c, blk-mq-sched.c) there is no queue plug and merging follows
 * blk_mq_submit_bio instead:
 *  - a task that submits inside a plug section (SimPlug: blk_start_plug ..
 *    blk_finish_plug) first merges the bio into the newest request of its
 *    own plug (blk_attempt_plug_merge); its new requests gather there and go
 *    to the elevator when the section ends, when the task sleeps (for a
 *    request: blk_flush_plug from schedule) or at the plug's limit;
 *  - then, only with an elevator that merges bios (SCHED_F_BIO_MERGE:
 *    mq-deadline, bfq, kyber), into requests still waiting in its queues
 *    (blk_mq_sched_bio_merge -> ops.bio_merge); "none" merges in the plug
 *    only;
 *  - requests on the dispatch list or on the device never merge.
 *
 * Request size: a request grows up to max_sectors and max_segments
 * (6.18 block/blk-merge.c ll_back_merge_fn, ll_front_merge_fn ->
 * ll_new_hw_segment, ll_merge_requests_fn; 2.6.28 the same with
 * max_phys_segments/max_hw_segments, ../shared/reference/
 * kernel-algorithms.md §6.1).  Page-cache pages and the pages of a user
 * buffer are scattered in memory, so every page is a segment of its own
 * (no two are physically contiguous): 128 segments hold 512 KiB.  A bio
 * larger than the limits is built in pieces that fit (what
 * bio_split_to_limits would cut it into).
 *
 * blk-wbt (sim-wbt.h), on blk-mq queues that have one: a bio that does
 * not merge is throttled before its request is allocated
 * (blk_mq_get_new_requests -> rq_qos_throttle), the request records the
 * bio's wbt flags (rq_qos_track), issue and completion are reported
 * (rq_qos_issue, blk_stat_add, rq_qos_done), as is a request freed by a
 * request-to-request merge.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-request.h"
#include "sim/sim-stats.h"
#include "traces/trace.h"

G_BEGIN_DECLS

typedef struct _SchedQueue SchedQueue;
typedef struct _SimDevice  SimDevice;
typedef struct _SimPlug    SimPlug;
typedef struct _SimWbt     SimWbt;
typedef struct _SimWbtConfig SimWbtConfig;

#define SIM_QUEUE_HASH_BUCKETS 64

typedef struct {
  guint    nr_requests;        /* per direction; default 128, minimum 4 */
  guint32  max_sectors;        /* largest request; default 1024 (512 KiB) */
  guint    max_segments;       /* segments of a request; default 128 (BLK_MAX_SEGMENTS) */
  SimTime  unplug_delay_ns;    /* default 3 ms (at least one jiffy); 0: no
                                * unplug timer (2.4, 2.5.3x) */
  guint    unplug_thresh;      /* default 4; 0: no threshold (2.4, 2.5.3x) */
} SimQueueLimits;

/* BLK_MAX_SEGMENTS (include/linux/blkdev.h); 2.6's MAX_PHYS_SEGMENTS and
 * MAX_HW_SEGMENTS were 128 as well. */
#define SIM_QUEUE_DEFAULT_MAX_SEGMENTS 128u
/* One segment per page: pages are scattered in memory. */
#define SIM_QUEUE_SEGMENT_BYTES        4096u

void sim_queue_limits_init (SimQueueLimits *limits, guint hz);

/* Segments of @bytes of data that start @buf_offset_bytes into a page-
 * aligned buffer: the pages they touch. */
static inline guint32
sim_segments_for (guint64 buf_offset_bytes, guint64 bytes)
{
  if (bytes == 0)
    return 0;
  guint64 first = buf_offset_bytes / SIM_QUEUE_SEGMENT_BYTES;
  guint64 last = (buf_offset_bytes + bytes - 1) / SIM_QUEUE_SEGMENT_BYTES;
  return (guint32) (last - first + 1);
}

/* The sectors of the next bio of an I/O with @sectors_left sectors still to
 * go, its data @buf_offset_bytes into a page-aligned buffer: at most
 * max_sectors, and no more pages than max_segments (bio_split_to_limits ->
 * bio_split_rw_at: a bio is cut where either limit is reached). */
guint32 sim_queue_limits_bio_sectors (const SimQueueLimits *limits,
                                      guint64               buf_offset_bytes,
                                      guint64               sectors_left);

/* How a freed request wakes the submitters sleeping for one (the request
 * pool is per direction in every mode).
 *  - EACH (2.6.28 freed_request): one waiter per freed request, as soon as
 *    the direction is below nr_requests.
 *  - BATCH_ALL (2.4.18 blkdev_release_request, __get_request_wait): one
 *    wait queue for both directions (q->wait_for_request), woken with a
 *    plain wake_up - every sleeper - once the freed request's direction has
 *    batch_requests free; each woken sleeper takes one request of its own
 *    direction if one is free and sleeps again otherwise.
 *  - BATCH_ONE (2.4.19-pre2 on, akpm's "get_request starvation fix", LKML
 *    Feb 2002): a wait queue per direction, exclusive: while the direction
 *    has batch_requests free, each freed request wakes the first sleeper
 *    (FIFO), which takes one.
 * In every mode a running submitter takes a free request even when others
 * sleep (get_request does not look at the wait queue). */
typedef enum {
  SIM_POOL_WAKE_EACH,
  SIM_POOL_WAKE_BATCH_ALL,
  SIM_POOL_WAKE_BATCH_ONE,
} SimPoolWake;

/* Called for every blktrace-like event when tracing is on (--trace-out). */
typedef void (*SimQueueTraceFunc) (gpointer data, const TraceRecord *rec);

typedef struct {
  guint64  bios;
  guint64  back_merges;
  guint64  front_merges;
  guint64  request_merges;     /* request-to-request */
  guint64  requests;           /* allocated */
  guint64  dispatched;
  guint64  completed;
  guint64  sleeps;             /* bios that waited for a free request */
  guint64  plugs;
  guint64  unplugs_thresh;     /* blk-mq: plug flushes at the plug's limit */
  guint64  unplugs_timer;      /* blk-mq: plug flushes as the task slept */
  guint64  unplugs_io;         /* blk-mq: explicit plug flushes (blk_finish_plug) */
  guint64  plug_merges;        /* blk-mq: bios merged in their task's plug (also counted
                                * as back or front merges, as /sys/block/X/stat does) */
  guint64  segment_limited;    /* merges refused because of max_segments alone */
  guint64  bytes[SIM_N_OPS];
  guint64  ios[SIM_N_OPS];     /* completed requests by direction */
} SimQueueCounters;

/* The machine's list of plugged queues of 2.4 (tq_disk) and 2.5.3x
 * (blk_plug_list): queues join it in the order they plug; running it
 * unplugs them all in that order.  Owned by whoever builds the queues;
 * outlives them. */
typedef struct {
  Sim       *sim;
  SimList    queues;             /* plugged queues (SimRequestQueue.plug_link) */
  SimTime    kupdate_interval_ns; /* the writeback daemon runs the list this
                                 * often (phase from time 0); 0: never */
  SimEventId kupdate_event;
  guint64    runs;               /* runs that found a plugged queue */
  guint64    kupdate_runs;       /* of them, by the writeback daemon */
} SimPlugList;

struct _SimRequestQueue {
  Sim             *sim;
  char            *name;
  guint32          dev_major;
  guint32          dev_minor;
  SimQueueLimits   limits;
  SchedQueue      *elevator;
  SimDevice       *device;

  /* request pool */
  SimRequest      *rq_free;
  guint            rq_count[SIM_N_OPS];
  SimList          wait_list[SIM_N_OPS];  /* SimBioWaiter of sleeping submitters */
  SimBio          *bio_free;
  guint64          next_rq_seq;
  SimPoolWake      pool_wake;             /* default EACH */
  guint            batch_requests;        /* free requests that wake (BATCH_*) */
  gboolean         merge_after_wait;      /* sim_queue_set_merge_after_wait */
  gboolean         bh_bios_seen;          /* a SIM_BIO_BH bio was ever submitted */

  /* merging */
  SimRequest      *hash[SIM_QUEUE_HASH_BUCKETS];
  SimRequest      *last_merge;
  guint            nr_sorted;             /* requests inside the elevator */

  /* plugging */
  gboolean         plugged;
  SimEventId       unplug_timer;
  SimPlugList     *plug_list;             /* 2.4/2.5.3x: the machine's; NULL: 2.6 */
  SimList          plug_link;             /* on plug_list while plugged */
  SimPlug         *current_plug;          /* blk-mq: the running submitter's plug */

  /* dispatch */
  SimList          dispatch;
  guint64          end_sector;            /* boundary for the dispatch sort */
  SimRequest      *boundary_rq;           /* last added at the tail; its start moves end_sector */
  guint            in_flight;

  /* statistics */
  SimQueueCounters counters;
  SimTimeAvg       depth_avg;             /* requests allocated (queued + in flight) */

  /* blk-wbt (sim-wbt.h); NULL: none (legacy elevators, or not set up). */
  SimWbt           *wbt;
  /* Its BDI's last sleep of a writer in balance_dirty_pages
   * (bdi->last_bdp_sleep, SIM_TIME_NEVER: none yet); NULL without a page
   * cache on the queue.  Set by sim-pagecache.c, read by blk-wbt. */
  const SimTime    *last_bdp_sleep_ns;

  SimQueueTraceFunc trace;
  gpointer          trace_data;
  /* Called as each request completes (the host model's interrupt work). */
  void            (*complete_hook) (gpointer data, SimRequestQueue *q, const SimRequest *rq);
  gpointer          complete_hook_data;
  /* Called as each request is freed (freed_request), after the pool's own
   * wake-ups (the page cache's: congestion_wait sleepers, sim-pagecache.h). */
  void            (*freed_hook) (gpointer data, SimRequestQueue *q, SimOp op);
  gpointer          freed_hook_data;
  GPtrArray        *chunks;                /* request and bio storage */
};

/* blk-mq: the limits of a task's plug (6.18 block/blk.h: BLK_MAX_REQUEST_COUNT,
 * BLK_PLUG_FLUSH_SIZE).  blk_add_rq_to_plug flushes the plug before adding
 * a request when it already holds 32 requests (64 when it spans several
 * queues, not modelled: a simulated plug serves one queue) or when the
 * request at the head of its list is at least 128 KiB. */
#define SIM_PLUG_MAX_REQUEST_COUNT 32
#define SIM_PLUG_FLUSH_BYTES       (128 * 1024)

/* A task's plug (struct blk_plug, current->plug), embedded in whoever
 * submits: requests of one task wait here, unseen by other tasks, until
 * the plug is flushed into the elevator.  Used by blk-mq elevators only;
 * under a legacy elevator a plug section changes nothing (2.6 plugs the
 * queue instead). */
struct _SimPlug {
  SimRequestQueue    *q;
  const SimIoContext *ioc;      /* its task's context (traces) */
  SimList             list;     /* requests in submission order (rq->queuelist) */
  guint               rq_count;
  SimPlug            *prev;     /* the plug that was current when this one started */
};

/* A submitter waiting for a request: embedded in the process. */
typedef struct {
  SimList  link;
  SimBio  *bio;
  void   (*resume) (Sim *sim, gpointer data, SimTime now_ns);
  gpointer resume_data;
} SimBioWaiter;

SimRequestQueue *sim_queue_new       (Sim                  *sim,
                                      const char           *name,
                                      const SimQueueLimits *limits);
void             sim_queue_free      (SimRequestQueue      *q);
/* Takes ownership of @elevator. */
void             sim_queue_set_elevator (SimRequestQueue   *q,
                                      SchedQueue           *elevator);
void             sim_queue_set_device (SimRequestQueue     *q,
                                      SimDevice            *device);
void             sim_queue_set_trace (SimRequestQueue      *q,
                                      SimQueueTraceFunc     fn,
                                      gpointer              data);
/* The pool's wakeup rule (SimPoolWake); @batch_requests >= 1 for the
 * BATCH modes.  Call before the first bio. */
void             sim_queue_set_pool_wake (SimRequestQueue  *q,
                                      SimPoolWake           wake,
                                      guint                 batch_requests);
/* With @on, a bio that slept for a request tries to merge into a queued
 * request when it is handed one, and gives the request back if it merged:
 * __make_request of 2.4, 2.5 and early 2.6 (2.6.9 among them) goes back
 * to its merge attempt (`goto again`) after __get_request_wait; later 2.6
 * keeps the request.  Default off. */
void             sim_queue_set_merge_after_wait (SimRequestQueue *q,
                                      gboolean              on);
/* wbt_init on a blk-mq queue (@cfg: sim-wbt.h SimWbtConfig); call before
 * the first bio.  The queue owns its wbt. */
void             sim_queue_init_wbt  (SimRequestQueue      *q,
                                      const SimWbtConfig   *cfg);

/* The next bio's sectors (sim_queue_limits_bio_sectors with @q's limits). */
guint32          sim_queue_bio_sectors (const SimRequestQueue *q,
                                      guint64               buf_offset_bytes,
                                      guint64               sectors_left);

/* A bio from the queue's free list; fields zeroed. */
SimBio          *sim_queue_bio_alloc (SimRequestQueue      *q);

/* Submit @bio (Q).  Returns TRUE when it was queued; FALSE when no request
 * was free: the bio is parked on @waiter (which must stay valid) and
 * waiter->resume is called once it has been queued. */
gboolean         sim_queue_submit_bio (SimRequestQueue     *q,
                                      SimBio               *bio,
                                      SimBioWaiter         *waiter);

/* blk_start_plug, or the task of @plug running again inside its plug
 * section: until sim_queue_finish_plug, bios of @ioc submitted to @q
 * gather in @plug (blk-mq elevators; with a legacy one this does
 * nothing).  One plug is current at a time: the simulated submitter runs
 * alone.  A section may start inside another task's (a submitter woken
 * synchronously by a request freed in a merge); the other plug is current
 * again when it ends. */
void             sim_queue_start_plug (SimRequestQueue     *q,
                                      SimPlug              *plug,
                                      const SimIoContext   *ioc);
/* blk_finish_plug: flush @plug into the elevator (U) and end the section. */
void             sim_queue_finish_plug (SimRequestQueue    *q,
                                      SimPlug              *plug);
/* A plug section that spans several events of one busy task (a writeback
 * submitter preparing page after page): suspend when the event ends
 * (the plug keeps its requests, unlike a sleep, which flushes them; the
 * task is not sleeping, only other tasks run meanwhile), resume in the
 * task's next event before it submits again.  Every resume is followed
 * by a suspend or finish in the same event. */
void             sim_queue_suspend_plug (SimRequestQueue   *q,
                                      SimPlug              *plug);
void             sim_queue_resume_plug (SimRequestQueue    *q,
                                      SimPlug              *plug);

/* A task (@ioc, may be NULL) waits on its I/O, or submitted a direct I/O:
 * unplug (U). */
void             sim_queue_unplug    (SimRequestQueue      *q,
                                      const SimIoContext   *ioc);
/* A task is about to sleep until its I/O completes: 2.6 unplugs @q
 * (blk_run_address_space); on a plug list every plugged queue of the
 * machine is run (2.4 run_task_queue(&tq_disk), 2.5.3x blk_run_queues). */
void             sim_queue_unplug_wait (SimRequestQueue    *q,
                                      const SimIoContext   *ioc);

/* The 2.4/2.5.3x plug list of a machine (see SimPlugList). */
void             sim_plug_list_init  (SimPlugList          *list,
                                      Sim                  *sim,
                                      SimTime               kupdate_interval_ns);
/* Before its first bio: @q plugs onto @list; its limits must have no
 * unplug timer and no threshold. */
void             sim_queue_set_plug_list (SimRequestQueue  *q,
                                      SimPlugList          *list);
/* blk_run_queues / run_task_queue(&tq_disk): unplug every plugged queue
 * on @list, in the order they plugged.  @ioc: the running task (traces). */
void             sim_plug_list_run   (SimPlugList          *list,
                                      const SimIoContext   *ioc);

/* Start requests while the device has room (the driver's request_fn). */
void             sim_queue_run       (SimRequestQueue      *q);

/* Called by the device when @rq finishes (C). */
void             sim_queue_complete_request (SimRequestQueue *q,
                                      SimRequest           *rq);

guint            sim_queue_requests_allocated (const SimRequestQueue *q);

/* blk_queue_congested for writes (2.6): the write request pool is past
 * nr_requests - nr_requests/8.  Writeback skips congested queues. */
gboolean         sim_queue_write_congested (const SimRequestQueue *q);
/* Below the congestion-off threshold for @op (2.6 ll_rw_blk.c
 * blk_queue_congestion_threshold: nr_congestion_off = nr_requests -
 * nr_requests/8 - nr_requests/16 - 1, at least 1): freed_request then
 * calls clear_queue_congested, which wakes every congestion_wait sleeper. */
gboolean         sim_queue_congestion_off (const SimRequestQueue *q, SimOp op);

/* The last task of @ioc exited: tell the elevator (exit_ioc hook). */
void             sim_queue_exit_ioc  (SimRequestQueue      *q,
                                      SimIoContext         *ioc);

/* Called by sched core helpers. */
void             sim_queue_dispatch_add_tail (SimRequestQueue *q,
                                      SimRequest           *rq);
void             sim_queue_dispatch_sort (SimRequestQueue  *q,
                                      SimRequest           *rq);

G_END_DECLS
