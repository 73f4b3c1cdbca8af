/* sim-elevator.h — the elevator (I/O scheduler) interface the block layer
 * owns: the ops table, the per-queue elevator instance and the core helpers.
 *
 * Modelled on the 2.6 single-queue elevator interface (block/elevator.c,
 * include/linux/elevator.h) with blk-mq's short hook names.  The engine
 * (sim/sim-queue.c) calls policies only through this table, as the
 * kernel's block core keeps elevator.h; policies (models/sched/) include
 * this header, never the reverse.  The names keep the sched_ prefix the
 * policies know them by, as the kernel keeps elv_ in the block core.
 *
 * A policy is an ops table, a private struct the core allocates
 * (priv_size) and a table of tunables the core parses from the scenario.
 * Policies never read a clock: every hook gets @now_ns, and timers go
 * through sched_arm_timer().  The core owns the merge hash, last_merge and
 * the dispatch list; policies move requests to the dispatch list with
 * sched_dispatch_add_tail() or sched_dispatch_sort().
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-request.h"
#include "sim/sim-queue.h"

G_BEGIN_DECLS

#define SCHED_ERROR (sched_error_quark ())
GQuark sched_error_quark (void);

typedef enum {
  SCHED_ERROR_FAILED,
  SCHED_ERROR_UNKNOWN,      /* no policy of that name */
  SCHED_ERROR_TUNABLE,      /* unknown tunable or bad value; names key and group */
} SchedError;

typedef enum {
  SCHED_NO_MERGE,
  SCHED_FRONT_MERGE,
  SCHED_BACK_MERGE,
} SchedMerge;

typedef enum {
  SCHED_TUNABLE_JIFFIES,    /* stored as jiffies (int); written in the scenario as a time
                             * ("500ms", bare numbers are ms as in sysfs), converted with
                             * msecs_to_jiffies (rounded up) like the kernel's store */
  SCHED_TUNABLE_INT,        /* a count */
  SCHED_TUNABLE_BOOL,       /* 0/1, true/false */
  SCHED_TUNABLE_TIME_NS,    /* a gint64 of nanoseconds (blk-mq era tunables kept in ns or
                             * us by the kernel); written with a unit; default_ns */
  SCHED_TUNABLE_VERSION,    /* a kernel version "2.6.28" stored as 20628 (int) */
} SchedTunableType;

/* One tunable (sysfs attribute) row. */
typedef struct {
  const char      *name;
  SchedTunableType type;
  int              default_value;  /* INT/BOOL: the value; JIFFIES: see hz_num/hz_den */
  int              hz_num;         /* JIFFIES default = HZ * hz_num / hz_den, truncated */
  int              hz_den;
  int              min;            /* clamp as the kernel's store does */
  int              max;
  gsize            offset;         /* of an int (gint64 for TIME_NS) in the private struct */
  const char      *unit;           /* "ms", "requests", "bool", ... for listings */
  const char      *help;
  gint64           default_ns;     /* TIME_NS only: default; min/max do not apply */
  int              default_min;    /* JIFFIES: the default is at least this many jiffies
                                    * (AS's antic_expire: HZ/150, or 1), while an
                                    * explicit value may still go down to min */
} SchedTunable;

/* Answer of the optional may_queue hook (elv_may_queue). */
typedef enum {
  SCHED_MAY_QUEUE_DEFAULT,  /* follow the pool rules */
  SCHED_MAY_QUEUE_MUST,     /* allocate even past nr_requests (up to 3/2 of it): AS's
                             * anticipated process, CFQ's queue being waited for */
} SchedMayQueue;

/* Flags of a policy. */
typedef enum {
  SCHED_F_MQ = 1 << 0,      /* blk-mq scheduler: per-task plugging (bios of one
                             * submission gather, then flush), no queue plug timer */
  SCHED_F_BIO_MERGE = 1 << 1, /* blk-mq: the scheduler merges bios into the requests
                             * it still holds (elevator_mq_ops.bio_merge: mq-deadline,
                             * bfq, kyber); without it ("none") bios merge only in
                             * their task's plug.  Legacy elevators always merge. */
  SCHED_F_NO_WBT = 1 << 2,  /* blk-mq: the scheduler turns blk-wbt's default off
                             * (bfq_init_queue -> wbt_disable_default, 6.18
                             * block/bfq-iosched.c); a wbt_lat_usec set by hand
                             * still applies */
  SCHED_F_SCAN_MERGE = 1 << 3, /* 2.4: the elevator's merge hook is the only merge
                             * lookup (elevator_linus_merge walks the queue and
                             * charges the requests it passes); the core's
                             * last_merge cache and back-merge hash are not
                             * consulted, as 2.4's __make_request had neither;
                             * requires the merge hook */
} SchedFlags;

typedef struct _SchedTimer SchedTimer;
typedef struct _SchedQueue SchedQueue;

/* A timer a policy embeds in its private data (CFQ idle, AS antic_expire,
 * kyber's statistics window).  The core runs the queue after @fn. */
struct _SchedTimer {
  SimEventId  id;
  void      (*fn) (SchedQueue *e, SchedTimer *timer, SimTime now_ns);
};

/* Where --trace-sched lines go: one decision per call, already formatted. */
typedef void (*SchedLogFunc) (gpointer data, SimTime now_ns, const char *device,
                              const char *sched, const char *message);

typedef struct _SchedOps   SchedOps;

/* One elevator attached to one request queue (elevator_queue). */
struct _SchedQueue {
  const SchedOps  *ops;
  gpointer         priv;          /* priv_size bytes, zeroed, tunables filled in */
  SimRequestQueue *q;
  Sim             *sim;
  guint            hz;
  SimEventId       timer;         /* managed by sched_arm_timer() */
  const char      *label;         /* name the scenario gave ("cfq-2.6.28"), for logs */
  SchedLogFunc     log;           /* NULL: --trace-sched is off */
  gpointer         log_data;
  GHashTable      *ioc_data;      /* SimIoContext -> per-process data (sched_ioc_data) */
  GHashTable      *ioc_seen;      /* SimIoContext -> TRUE, for exit_ioc */
};

struct _SchedOps {
  const char         *name;       /* "deadline" */
  const char         *era;        /* "2.6.28-2.6.33" */
  const char         *summary;
  const SchedTunable *tunables;   /* terminated by a row with name == NULL; may be NULL */
  gsize               priv_size;
  guint               flags;      /* SchedFlags */
  gsize               ioc_data_size; /* bytes of per-process data (sched_ioc_data) */
  guint               default_nr_requests; /* the queue's requests per direction when
                                     * the scenario sets no nr_requests; 0: the
                                     * core's 128 (2.6 BLKDEV_MAX_RQ) */

  /* Required.  Tunables are already parsed into priv; set up structures. */
  gboolean    (*init)           (SchedQueue *e, GError **error);
  /* Optional.  Called at teardown; the core asserts queue_empty() first. */
  void        (*exit)           (SchedQueue *e);
  /* Required.  A new request enters the elevator (sorted insert). */
  void        (*add_request)    (SchedQueue *e, SimRequest *rq, SimTime now_ns);
  /* Required.  Move requests to the dispatch list (sched_dispatch_*);
   * return how many were moved; 0 = nothing now (or idling on purpose).
   * @force: drain everything (elevator switch, teardown). */
  int         (*dispatch)       (SchedQueue *e, gboolean force, SimTime now_ns);
  /* Required.  TRUE if the elevator holds no request. */
  gboolean    (*queue_empty)    (SchedQueue *e);

  /* Optional: front-merge lookup beyond the core's back-merge hash.
   * Return SCHED_FRONT_MERGE with *rq set to a request starting at the
   * bio's end sector. */
  SchedMerge  (*merge)          (SchedQueue *e, const SimBio *bio, SimRequest **rq);
  /* Optional: @rq grew by a bio merge of @type (reposition in sort trees). */
  void        (*merged)         (SchedQueue *e, SimRequest *rq, SchedMerge type);
  /* Optional: @next was merged into @rq and must leave the elevator. */
  void        (*merge_requests) (SchedQueue *e, SimRequest *rq, SimRequest *next);
  /* Optional: veto a merge of @bio into @rq (CFQ: other queue). */
  gboolean    (*allow_merge)    (SchedQueue *e, const SimRequest *rq, const SimBio *bio);
  /* Optional: neighbours in sort order, for request-to-request merges. */
  SimRequest *(*former_request) (SchedQueue *e, SimRequest *rq);
  SimRequest *(*latter_request) (SchedQueue *e, SimRequest *rq);
  /* Optional: the device started @rq. */
  void        (*activate)       (SchedQueue *e, SimRequest *rq, SimTime now_ns);
  /* Optional: @rq completed. */
  void        (*completed)      (SchedQueue *e, SimRequest *rq, SimTime now_ns);
  /* Optional: the timer armed with sched_arm_timer() fired.  The core runs
   * the queue afterwards. */
  void        (*timer)          (SchedQueue *e, SimTime now_ns);
  /* Optional: text dump of internal state for tests. */
  void        (*dump)           (SchedQueue *e, GString *out);
  /* Optional: may @ioc allocate a request of @op when the pool of that
   * direction is full (elv_may_queue)?  Default: SCHED_MAY_QUEUE_DEFAULT. */
  SchedMayQueue (*may_queue)    (SchedQueue *e, const SimIoContext *ioc, SimOp op,
                                 gboolean sync);
  /* Optional: the last task using @ioc exited (AS's exit_prob, CFQ's
   * cic teardown).  Its per-process data stays valid until the elevator
   * goes away; requests of it may still be queued. */
  void        (*exit_ioc)       (SchedQueue *e, SimIoContext *ioc, SimTime now_ns);
};

/* Create an elevator for @q: tunables from @group of @kf (may be NULL or a
 * group that does not exist: defaults), HZ-scaled. */
SchedQueue *sched_queue_new   (const SchedOps  *ops,
                               SimRequestQueue *q,
                               Sim             *sim,
                               guint            hz,
                               GKeyFile        *kf,
                               const char      *group,
                               GError         **error);
void        sched_queue_free  (SchedQueue *e);

/* Default of a tunable at @hz (jiffies for JIFFIES rows). */
int         sched_tunable_default (const SchedTunable *t, guint hz);
/* A tunable's current value (jiffies for JIFFIES rows). */
int         sched_tunable_get     (const SchedQueue *e, const SchedTunable *t);

/* Helpers for policies. */
static inline SimTime
sched_jiffies_to_ns (const SchedQueue *e, int jiffies)
{
  return (SimTime) jiffies * (SIM_NS_PER_S / (SimTime) e->hz);
}

/* The jiffies counter at @now_ns (simulation starts at jiffy 0). */
static inline gint64
sched_now_jiffies (const SchedQueue *e, SimTime now_ns)
{
  return now_ns / (SIM_NS_PER_S / (SimTime) e->hz);
}

/* The kernel's msecs_to_jiffies: rounds up. */
int         sched_msecs_to_jiffies (guint hz, gint64 msecs);

void        sched_dispatch_add_tail (SchedQueue *e, SimRequest *rq);
void        sched_dispatch_sort     (SchedQueue *e, SimRequest *rq);
/* Arm (or re-arm) the elevator's single timer at absolute @at_ns. */
void        sched_arm_timer         (SchedQueue *e, SimTime at_ns);
void        sched_cancel_timer      (SchedQueue *e);

/* Per-process data of this elevator for @ioc (ioc_data_size bytes, zeroed
 * at first use, freed with the elevator): AS's as_io_context, CFQ's cic.
 * Allocates only the first time a process is seen. */
gpointer    sched_ioc_data          (SchedQueue *e, SimIoContext *ioc);

/* Embedded timers.  sched_timer_init() once; arm re-arms. */
void        sched_timer_init        (SchedQueue *e, SchedTimer *t,
                                     void (*fn) (SchedQueue *, SchedTimer *, SimTime));
void        sched_timer_arm         (SchedQueue *e, SchedTimer *t, SimTime at_ns);
void        sched_timer_cancel      (SchedQueue *e, SchedTimer *t);
gboolean    sched_timer_pending     (const SchedQueue *e, const SchedTimer *t);

/* Run the queue soon, from an event of its own (the kernel's kblockd
 * kick: blk_schedule_dispatch / cfq_schedule_dispatch). */
void        sched_kick              (SchedQueue *e);

/* What the policies may know about the device and queue. */
gboolean    sched_device_rotational (const SchedQueue *e);
guint       sched_device_queue_depth (const SchedQueue *e);
guint       sched_in_flight         (const SchedQueue *e);   /* started on the device */

/* The request pool's wakeup rule (sim-queue.h SimPoolWake) and its
 * batch_requests, for elevators of kernels whose block layer woke request
 * waiters differently from 2.6 (2.4's linus).  No-op without a queue. */
void        sched_set_pool_wake     (SchedQueue *e, SimPoolWake wake, guint batch_requests);

/* --trace-sched: a decision, as "<what> key=value ...".  Formats only
 * when logging is on: use SCHED_LOG. */
void        sched_log               (SchedQueue *e, SimTime now_ns, const char *fmt, ...)
                                     G_GNUC_PRINTF (3, 4);
#define SCHED_LOG(e, now_ns, ...) \
  G_STMT_START { if ((e)->log) sched_log ((e), (now_ns), __VA_ARGS__); } G_STMT_END

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SchedQueue, sched_queue_free)

/* The required hooks are set (and a SCHED_F_SCAN_MERGE policy has merge). */
gboolean    sched_ops_complete      (const SchedOps *ops);

G_END_DECLS
