/* sched-as.c — the anticipatory elevator (AS), 2.6.20-2.6.31 rules
 * (block/as-iosched.c of 2.6.31, Documentation/block/as-iosched.txt;
 * ../shared/reference/kernel-algorithms.md §3).
 *
 *  - deadline-like structures per direction, where the direction is
 *    sync/async (reads and sync writes vs writeback): a sector tree, a FIFO
 *    with read_expire/write_expire deadlines (checked at most once per
 *    expire interval), next_rq and the last dispatched sector;
 *  - batches: a read batch lasts read_batch_expire from its first
 *    completion; a write batch write_batch_expire or write_batch_count
 *    requests, the count adapting at each first read completion; a batch
 *    change waits until every request of the old batch completed;
 *  - the next request is the better of the sector successor (or the first
 *    request) and the predecessor: forward seeks count once, backward seeks
 *    up to MAXBACK twice, further back "wraps" (as_choose_req);
 *  - anticipation: after a sync request of process P, AS may leave the disk
 *    idle (OFF -> WAIT_REQ while P's request is in flight -> WAIT_NEXT for
 *    antic_expire after it completed -> FINISHED) hoping that P submits a
 *    close request; arrivals break the wait by the rules of
 *    as_can_break_anticipation, decided from per-process think time and
 *    seek distance (8.8 fixed point, 7/8 decay) and the global priors
 *    new_ttime_mean, new_seek_mean, exit_prob, exit_no_coop.
 * Times are jiffies as in the kernel (the simulation starts at jiffy 0);
 * as_close_req uses the 2.6.31 jiffies form of its window.
 *
 * Kept from the kernel on purpose:
 *  - the initial batch direction is async (as_data is zeroed), so the first
 *    read batch starts with a batch change and the first write-batch
 *    adaptation sees a made-up write time;
 *  - as_merge looks for front merges in the tree indexed by the bio's data
 *    direction (read = 0 = the async tree), so read bios never front-merge
 *    through the tree (the core's last_merge cache still front-merges);
 *  - a request merged away counts as a completion of its process for the
 *    think time (as_put_io_context on the absorbed request);
 *  - aic->nr_dispatched counts requests on the dispatch list only: it drops
 *    when the device starts them (activate), not at completion;
 *  - a request added at the sector of a queued one (an "alias") sends the
 *    queued one to the dispatch list at once.
 * Differences: the kernel runs the dispatch hook after every completion even
 * with an empty elevator, which is where it notices that a write batch went
 * idle (write_batch_idled); the core does not call dispatch on an empty
 * elevator, so the completion hook applies that rule when the elevator is
 * empty.  The tunables are known at init, so write_batch_count starts from
 * the scenario's write_batch_expire (the kernel's from its default, sysfs
 * writes coming later).
 *
 * --trace-sched lines:
 *   antic_start pid=N state=wait_req|wait_next
 *   antic_break pid=N by=M reason=same_process|timeout|queued|dispatched|
 *               close|exit|think_time|new_think_time|exit_prob
 *   antic_skip pid=N by=M reason=...   (the dispatch-time check said "do not
 *               wait" for a reason other than same_process)
 *   antic_timeout pid=N
 *   batch_start dir=read|write wait=N     (N: old-batch requests to drain)
 *   batch_expire dir=read|write
 *   write_batch_count count=N was=M write_jiffies=J
 */
#include "models/sched/sched.h"

#include <limits.h>

/* Indexes as rq_is_sync() gives them in the kernel (BLK_RW_ASYNC/SYNC). */
enum { AS_ASYNC = 0, AS_SYNC = 1, AS_N_DIRS = 2 };

#define AS_MAXBACK      G_GUINT64_CONSTANT (1048576)  /* sectors of backward seek */
#define AS_BACK_PENALTY 2
#define AS_CLOSE_SECTORS G_GUINT64_CONSTANT (8192)    /* as_close_req's base window */

typedef enum {
  ANTIC_OFF,        /* not anticipating */
  ANTIC_WAIT_REQ,   /* the anticipated process's request is still in flight */
  ANTIC_WAIT_NEXT,  /* it completed: the timer runs */
  ANTIC_FINISHED,   /* a candidate was found or the wait timed out */
} AsAnticStatus;

/* Why the anticipation may stop (as_can_break_anticipation, rules 1-7). */
typedef enum {
  AS_KEEP_WAITING,
  AS_BREAK_SAME_PROCESS,
  AS_BREAK_TIMEOUT,
  AS_BREAK_QUEUED,
  AS_BREAK_DISPATCHED,
  AS_BREAK_CLOSE,
  AS_BREAK_EXIT,
  AS_BREAK_THINK_TIME,
  AS_BREAK_NEW_THINK_TIME,
  AS_BREAK_EXIT_PROB,
} AsBreak;

static const char *const as_break_names[] = {
  "none", "same_process", "timeout", "queued", "dispatched", "close", "exit",
  "think_time", "new_think_time", "exit_prob",
};

/* as_io_context: per process, shared by every queue in the kernel; here per
 * elevator (sched_ioc_data), which is the same for one device. */
typedef struct {
  guint    pid;
  gboolean known;              /* pid filled in */
  gboolean exited;             /* AS_TASK_RUNNING cleared */
  gboolean io_started;         /* AS_TASK_IOSTARTED: queued a sync request */
  gboolean io_running;         /* AS_TASK_IORUNNING: a sync request completed */
  int      nr_queued;          /* in the elevator */
  int      nr_dispatched;      /* on the dispatch list, not yet started */
  gint64   last_end_request;   /* jiffies of the last sync completion */
  guint64  last_request_pos;   /* end sector of the last sync request */
  guint64  ttime_total;        /* 8.8 fixed point, jiffies */
  guint64  ttime_samples;
  guint64  ttime_mean;         /* jiffies */
  guint64  seek_total;         /* 8.8 fixed point, sectors */
  guint64  seek_samples;
  guint64  seek_mean;          /* sectors */
} AsIoContext;

typedef struct {
  /* run time data */
  SimRbTree     sort_list[AS_N_DIRS];
  SimList       fifo_list[AS_N_DIRS];
  SimRequest   *next_rq[AS_N_DIRS];
  guint64       last_sector[AS_N_DIRS];

  guint64       exit_prob;          /* 256 = a waited-on process always exits */
  guint64       exit_no_coop;       /* 256 = no cooperator ever saves an exited one */
  guint64       new_ttime_total;    /* priors for processes without history */
  guint64       new_ttime_mean;
  guint64       new_seek_total;
  guint64       new_seek_mean;

  gint64        current_batch_expires;  /* jiffies */
  gint64        last_check_fifo[AS_N_DIRS];
  gboolean      changed_batch;      /* waiting for the old batch to drain */
  gboolean      new_batch;          /* waiting for the first read to complete */
  int           batch_data_dir;
  int           write_batch_count;
  int           current_write_count;
  gboolean      write_batch_idled;

  AsAnticStatus antic_status;
  gint64        antic_start;        /* jiffies */
  SchedTimer    antic_timer;
  SimIoContext *io_context;         /* process of the last dispatched sync request */
  AsIoContext  *io_aic;             /* its as_io_context */
  gboolean      ioc_finished;       /* its request completed */
  int           nr_dispatched;      /* dispatched and not completed */

  /* settings that change how the i/o scheduler behaves (jiffies) */
  int           fifo_expire[AS_N_DIRS];
  int           batch_expire[AS_N_DIRS];
  int           antic_expire;
} AsData;

static const SchedTunable as_tunables[] = {
  { "read_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 8, 0, INT_MAX,
    G_STRUCT_OFFSET (AsData, fifo_expire[AS_SYNC]), "ms",
    "FIFO deadline of sync requests (HZ/8); also how often the FIFO is checked" },
  { "write_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 4, 0, INT_MAX,
    G_STRUCT_OFFSET (AsData, fifo_expire[AS_ASYNC]), "ms",
    "FIFO deadline of async requests (HZ/4)" },
  { "read_batch_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 2, 0, INT_MAX,
    G_STRUCT_OFFSET (AsData, batch_expire[AS_SYNC]), "ms",
    "length of a read batch while writes wait (HZ/2)" },
  { "write_batch_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 8, 0, INT_MAX,
    G_STRUCT_OFFSET (AsData, batch_expire[AS_ASYNC]), "ms",
    "target length of a write batch (HZ/8); drives write_batch_count" },
  { "antic_expire", SCHED_TUNABLE_JIFFIES, 0, 1, 150, 0, INT_MAX,
    G_STRUCT_OFFSET (AsData, antic_expire), "ms",
    "longest wait for a close request: HZ/150, raised to 1 jiffy where that "
    "truncates to 0 (10 ms at HZ=100); 0 = never wait", 0, 1 },
  { NULL }
};

static inline int
as_rq_dir (const SimRequest *rq)
{
  return (rq->op == SIM_OP_READ || rq->sync) ? AS_SYNC : AS_ASYNC;
}

static inline AsIoContext *
as_rq_aic (const SimRequest *rq)
{
  return rq->elv_priv[0];
}

static inline SimTime
as_jiffies_ns (const SchedQueue *e, gint64 jiffies)
{
  return jiffies * (SIM_NS_PER_S / (SimTime) e->hz);
}

static const char *
as_dir_name (int dir)
{
  return dir == AS_SYNC ? "read" : "write";
}

static AsIoContext *
as_get_aic (SchedQueue *e, SimIoContext *ioc)
{
  if (ioc == NULL)
    return NULL;
  AsIoContext *aic = sched_ioc_data (e, ioc);
  if (!aic->known)
    {
      aic->known = TRUE;
      aic->pid = ioc->pid;
    }
  return aic;
}

static void as_antic_timeout (SchedQueue *e, SchedTimer *timer, SimTime now_ns);

static gboolean
as_init (SchedQueue *e, GError **error)
{
  AsData *ad = e->priv;
  for (guint d = 0; d < AS_N_DIRS; d++)
    {
      sim_rb_tree_init (&ad->sort_list[d]);
      sim_list_init (&ad->fifo_list[d]);
    }
  sched_timer_init (e, &ad->antic_timer, as_antic_timeout);
  ad->current_batch_expires = ad->batch_expire[AS_SYNC];
  ad->write_batch_count = MAX (2, ad->batch_expire[AS_ASYNC] / 10);
  return TRUE;
}

/* ---- per-process statistics -------------------------------------------- */

static void
as_update_thinktime (AsData *ad, AsIoContext *aic, guint64 ttime)
{
  if (aic->ttime_samples == 0)
    {
      ad->new_ttime_total = (7 * ad->new_ttime_total + 256 * ttime) / 8;
      ad->new_ttime_mean = ad->new_ttime_total / 256;
      ad->exit_prob = (7 * ad->exit_prob) / 8;
    }
  aic->ttime_samples = (7 * aic->ttime_samples + 256) / 8;
  aic->ttime_total = (7 * aic->ttime_total + 256 * ttime) / 8;
  aic->ttime_mean = (aic->ttime_total + 128) / aic->ttime_samples;
}

static void
as_update_seekdist (AsData *ad, AsIoContext *aic, guint64 sdist)
{
  if (aic->seek_samples == 0)
    {
      ad->new_seek_total = (7 * ad->new_seek_total + 256 * sdist) / 8;
      ad->new_seek_mean = ad->new_seek_total / 256;
    }
  /* One odd far seek (a page-in, a fragment) must not ruin the mean: the
   * first three samples may reach 2 Mi sectors past 4x the mean, later ones
   * 128 Ki. */
  guint64 slack = aic->seek_samples <= 60 ? 2 * 1024 * 1024 : 2 * 1024 * 64;
  sdist = MIN (sdist, aic->seek_mean * 4 + slack);
  aic->seek_samples = (7 * aic->seek_samples + 256) / 8;
  aic->seek_total = (7 * aic->seek_total + 256 * sdist) / 8;
  aic->seek_mean = (aic->seek_total + aic->seek_samples / 2) / aic->seek_samples;
}

/* as_update_iohist: a sync request of (or, for a cooperator, close to) the
 * process of @aic was queued. */
static void
as_update_iohist (SchedQueue *e, AsData *ad, AsIoContext *aic, const SimRequest *rq,
                  gint64 now_j)
{
  if (aic == NULL || as_rq_dir (rq) != AS_SYNC)
    return;
  if (aic->io_running || aic->io_started)
    {
      guint64 thinktime = 0;
      /* Read-to-read think time, only when nothing else of it is pending. */
      if (aic->io_running && aic->nr_queued + aic->nr_dispatched == 0)
        {
          guint64 max_thinktime = e->hz / 50;
          thinktime = (guint64) (now_j - aic->last_end_request);
          if (max_thinktime > 0)
            thinktime = MIN (thinktime, max_thinktime - 1);
        }
      as_update_thinktime (ad, aic, thinktime);
      guint64 pos = rq->sector;
      as_update_seekdist (ad, aic, aic->last_request_pos < pos
                                   ? pos - aic->last_request_pos
                                   : aic->last_request_pos - pos);
    }
  aic->last_request_pos = sim_request_end_sector (rq);
  aic->io_started = TRUE;
}

/* as_put_io_context: a sync request of @aic left (completed or merged). */
static void
as_put_aic (AsIoContext *aic, const SimRequest *rq, gint64 now_j)
{
  if (aic && as_rq_dir (rq) == AS_SYNC)
    {
      aic->io_running = TRUE;
      aic->last_end_request = now_j;
    }
}

/* ---- choosing requests ------------------------------------------------- */

/* as_choose_req: the better of two requests of one direction, by head
 * distance from last_sector; NULL-tolerant. */
static SimRequest *
as_choose_req (AsData *ad, SimRequest *rq1, SimRequest *rq2)
{
  if (rq1 == NULL || rq2 == NULL)
    return rq1 ? rq1 : rq2;
  int dir = as_rq_dir (rq1);
  g_assert (dir == as_rq_dir (rq2));
  return sched_choose_req (rq1, rq2, ad->last_sector[dir], AS_MAXBACK, AS_BACK_PENALTY);
}

/* as_find_next_rq: the request to follow @last in its tree. */
static SimRequest *
as_find_next_rq (AsData *ad, SimRequest *last)
{
  SimRequest *prev = sched_rb_prev (last);
  SimRequest *next = sched_rb_next (last);
  if (next == NULL)
    {
      next = sched_rb_first (&ad->sort_list[as_rq_dir (last)]);
      if (next == last)
        next = NULL;
    }
  return as_choose_req (ad, next, prev);
}

/* ---- anticipation ------------------------------------------------------ */

static gboolean
as_antic_expired (const AsData *ad, gint64 now_j)
{
  gint64 delta = now_j - ad->antic_start;
  if (delta < 0)
    delta = -delta;
  return delta >= ad->antic_expire;
}

static void
as_antic_waitnext (SchedQueue *e, AsData *ad, SimTime now_ns)
{
  g_assert (ad->antic_status == ANTIC_OFF || ad->antic_status == ANTIC_WAIT_REQ);
  SimTime at_ns = as_jiffies_ns (e, ad->antic_start + ad->antic_expire);
  sched_timer_arm (e, &ad->antic_timer, MAX (at_ns, now_ns));
  ad->antic_status = ANTIC_WAIT_NEXT;
}

/* Start anticipating; the timer only starts once the anticipated request
 * completed, i.e. from when the process can be expected to wake up. */
static void
as_antic_waitreq (SchedQueue *e, AsData *ad, SimTime now_ns)
{
  g_assert (ad->antic_status != ANTIC_FINISHED);
  if (ad->antic_status != ANTIC_OFF)
    return;
  if (ad->io_context == NULL || ad->ioc_finished)
    as_antic_waitnext (e, ad, now_ns);
  else
    ad->antic_status = ANTIC_WAIT_REQ;
  SCHED_LOG (e, now_ns, "antic_start pid=%u state=%s", ad->io_aic ? ad->io_aic->pid : 0,
             ad->antic_status == ANTIC_WAIT_REQ ? "wait_req" : "wait_next");
}

/* Stop waiting and run the queue from its own event (kblockd). */
static void
as_antic_stop (SchedQueue *e, AsData *ad)
{
  if (ad->antic_status != ANTIC_WAIT_REQ && ad->antic_status != ANTIC_WAIT_NEXT)
    return;
  if (ad->antic_status == ANTIC_WAIT_NEXT)
    sched_timer_cancel (e, &ad->antic_timer);
  ad->antic_status = ANTIC_FINISHED;
  sched_kick (e);
}

static void
as_antic_timeout (SchedQueue *e, SchedTimer *timer, SimTime now_ns)
{
  AsData *ad = e->priv;
  if (ad->antic_status != ANTIC_WAIT_REQ && ad->antic_status != ANTIC_WAIT_NEXT)
    return;
  AsIoContext *aic = ad->io_aic;
  ad->antic_status = ANTIC_FINISHED;
  SCHED_LOG (e, now_ns, "antic_timeout pid=%u", aic ? aic->pid : 0);
  if (aic == NULL)
    return;
  /* The waited-on process did not come back: a new process (no samples)
   * probably exited; an exited one was not saved by a cooperator. */
  if (aic->ttime_samples == 0)
    ad->exit_prob = (7 * ad->exit_prob + 256) / 8;
  if (aic->exited)
    ad->exit_no_coop = (7 * ad->exit_no_coop + 256) / 8;
}

/* as_close_req: is @rq near enough to the head that serving it instead of
 * waiting costs little?  The window doubles per jiffy waited. */
static gboolean
as_close_req (SchedQueue *e, AsData *ad, const AsIoContext *aic, const SimRequest *rq,
              gint64 now_j)
{
  guint64 last = ad->last_sector[ad->batch_data_dir];
  guint64 next = rq->sector;
  gint64 delay = 0;
  if (ad->antic_status != ANTIC_OFF && ad->ioc_finished)
    delay = now_j - ad->antic_start;

  guint64 delta;
  if (delay == 0)
    delta = AS_CLOSE_SECTORS;
  else if (delay <= (gint64) (20 * e->hz / 1000) && delay <= ad->antic_expire)
    delta = AS_CLOSE_SECTORS << delay;
  else
    return TRUE;

  if (last <= next + (delta >> 1) && next <= last + delta)
    return TRUE;
  guint64 s = last < next ? next - last : last - next;
  guint64 mean = aic->seek_samples == 0 ? ad->new_seek_mean : aic->seek_mean;
  return mean > s;
}

/* as_can_break_anticipation, rules in the kernel's order.  @rq may be NULL
 * (no request of the batch direction is queued). */
static AsBreak
as_can_break (SchedQueue *e, AsData *ad, const SimRequest *rq, gint64 now_j)
{
  g_assert (ad->io_context != NULL);
  if (rq && rq->ioc == ad->io_context)
    return AS_BREAK_SAME_PROCESS;
  if (ad->ioc_finished && as_antic_expired (ad, now_j))
    return AS_BREAK_TIMEOUT;   /* the timer has not run yet */
  AsIoContext *aic = ad->io_aic;
  if (aic == NULL)
    return AS_KEEP_WAITING;
  if (aic->nr_queued > 0)
    return AS_BREAK_QUEUED;
  if (aic->nr_dispatched > 0)
    return AS_BREAK_DISPATCHED;
  if (rq && as_rq_dir (rq) == AS_SYNC && as_close_req (e, ad, aic, rq, now_j))
    {
      /* A cooperating process works near the waited-on one: its request
       * counts in the waited-on process's history. */
      if (aic->exited)
        {
          if (aic->ttime_samples == 0)
            ad->exit_prob = (7 * ad->exit_prob + 256) / 8;
          ad->exit_no_coop = (7 * ad->exit_no_coop) / 8;
        }
      as_update_iohist (e, ad, aic, rq, now_j);
      return AS_BREAK_CLOSE;
    }
  if (aic->exited)
    {
      if (aic->ttime_samples == 0)
        ad->exit_prob = (7 * ad->exit_prob + 256) / 8;
      if (ad->exit_no_coop > 128)
        return AS_BREAK_EXIT;
    }
  if (aic->ttime_samples == 0)
    {
      if (ad->new_ttime_mean > (guint64) ad->antic_expire)
        return AS_BREAK_NEW_THINK_TIME;
      if (ad->exit_prob * ad->exit_no_coop > 128 * 256)
        return AS_BREAK_EXIT_PROB;
    }
  else if (aic->ttime_mean > (guint64) ad->antic_expire)
    return AS_BREAK_THINK_TIME;
  return AS_KEEP_WAITING;
}

/* as_can_anticipate: wait instead of dispatching @rq? */
static gboolean
as_can_anticipate (SchedQueue *e, AsData *ad, const SimRequest *rq, SimTime now_ns)
{
  if (ad->io_context == NULL)          /* the last request was async */
    return FALSE;
  if (ad->antic_status == ANTIC_FINISHED)
    return FALSE;
  AsBreak why = as_can_break (e, ad, rq, sched_now_jiffies (e, now_ns));
  /* Serving the same process is the common case: not worth a line. */
  if (why != AS_KEEP_WAITING && why != AS_BREAK_SAME_PROCESS)
    SCHED_LOG (e, now_ns, "antic_skip pid=%u by=%u reason=%s",
               ad->io_aic ? ad->io_aic->pid : 0,
               rq && as_rq_aic (rq) ? as_rq_aic (rq)->pid : 0, as_break_names[why]);
  return why == AS_KEEP_WAITING;
}

/* ---- queueing ---------------------------------------------------------- */

static void as_move_to_dispatch (SchedQueue *e, AsData *ad, SimRequest *rq);

static void
as_add_rq_rb (SchedQueue *e, AsData *ad, SimRequest *rq)
{
  SimRbTree *tree = &ad->sort_list[as_rq_dir (rq)];
  SimRequest *alias;
  /* Two requests for one sector: the kernel's tree holds one, so the
   * queued one goes to the driver now. */
  while ((alias = sched_rb_find_start (tree, rq->sector)) != NULL)
    {
      as_move_to_dispatch (e, ad, alias);
      as_antic_stop (e, ad);
    }
  sched_rb_add (tree, rq);
}

static void
as_remove_queued_request (AsData *ad, SimRequest *rq)
{
  int dir = as_rq_dir (rq);
  AsIoContext *aic = as_rq_aic (rq);
  if (aic)
    {
      g_assert (aic->nr_queued > 0);
      aic->nr_queued--;
    }
  if (ad->next_rq[dir] == rq)
    ad->next_rq[dir] = as_find_next_rq (ad, rq);
  sim_list_del (&rq->fifo);
  sched_rb_del (&ad->sort_list[dir], rq);
}

static void
as_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  AsData *ad = e->priv;
  gint64 now_j = sched_now_jiffies (e, now_ns);
  int dir = as_rq_dir (rq);
  AsIoContext *aic = as_get_aic (e, rq->ioc);
  rq->elv_priv[0] = aic;
  if (aic)
    {
      as_update_iohist (e, ad, aic, rq, now_j);
      aic->nr_queued++;
    }
  as_add_rq_rb (e, ad, rq);
  rq->fifo_deadline_ns = as_jiffies_ns (e, now_j + ad->fifo_expire[dir]);
  sim_list_add_tail (&rq->fifo, &ad->fifo_list[dir]);

  /* as_update_rq: keep next_rq current, and see whether this is what the
   * anticipation waits for. */
  ad->next_rq[dir] = as_choose_req (ad, rq, ad->next_rq[dir]);
  if (ad->antic_status == ANTIC_WAIT_REQ || ad->antic_status == ANTIC_WAIT_NEXT)
    {
      AsBreak why = as_can_break (e, ad, rq, now_j);
      if (why != AS_KEEP_WAITING)
        {
          SCHED_LOG (e, now_ns, "antic_break pid=%u by=%u reason=%s",
                     ad->io_aic ? ad->io_aic->pid : 0, aic ? aic->pid : 0,
                     as_break_names[why]);
          as_antic_stop (e, ad);
        }
    }
}

static SchedMerge
as_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  AsData *ad = e->priv;
  /* The kernel indexes this lookup by data direction (read 0, write 1),
   * while the trees are indexed by sync (async 0, sync 1). */
  int tree = bio->op == SIM_OP_WRITE ? AS_SYNC : AS_ASYNC;
  SimRequest *rq = sched_rb_find_start (&ad->sort_list[tree], bio->sector + bio->nr_sectors);
  if (rq == NULL)
    return SCHED_NO_MERGE;
  *out = rq;
  return SCHED_FRONT_MERGE;
}

static void
as_merged (SchedQueue *e, SimRequest *rq, SchedMerge type)
{
  AsData *ad = e->priv;
  /* A front merge moved the start sector: re-sort.  next_rq is left as it
   * is, as in the kernel. */
  if (type == SCHED_FRONT_MERGE)
    {
      sched_rb_del (&ad->sort_list[as_rq_dir (rq)], rq);
      as_add_rq_rb (e, ad, rq);
    }
}

static void
as_merge_requests (SchedQueue *e, SimRequest *rq, SimRequest *next)
{
  AsData *ad = e->priv;
  /* Keep the earlier deadline, and its place in the FIFO. */
  if (sim_list_is_linked (&rq->fifo) && sim_list_is_linked (&next->fifo)
      && next->fifo_deadline_ns < rq->fifo_deadline_ns)
    {
      sim_list_del (&rq->fifo);
      sim_list_add (&rq->fifo, &next->fifo);
      rq->fifo_deadline_ns = next->fifo_deadline_ns;
    }
  as_remove_queued_request (ad, next);
  /* The hook gets no time: the merge happens now, when the newest bio of
   * the merged request was submitted. */
  SimTime now_ns = 0;
  for (const SimBio *bio = rq->bio; bio; bio = bio->next)
    now_ns = MAX (now_ns, bio->queue_ns);
  as_put_aic (as_rq_aic (next), next, sched_now_jiffies (e, now_ns));
}

static SimRequest *
as_former_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_prev (rq);
}

static SimRequest *
as_latter_request (SchedQueue *e, SimRequest *rq)
{
  return sched_rb_next (rq);
}

/* ---- dispatch ---------------------------------------------------------- */

static void
as_move_to_dispatch (SchedQueue *e, AsData *ad, SimRequest *rq)
{
  int dir = as_rq_dir (rq);
  as_antic_stop (e, ad);
  ad->antic_status = ANTIC_OFF;
  /* Set before as_find_next_rq, which measures from it. */
  ad->last_sector[dir] = sim_request_end_sector (rq);
  if (dir == AS_SYNC)
    {
      /* In case the next decision is to anticipate this process. */
      ad->io_context = rq->ioc;
      ad->io_aic = as_rq_aic (rq);
    }
  else
    {
      ad->io_context = NULL;
      ad->io_aic = NULL;
      if (ad->current_write_count != 0)
        ad->current_write_count--;
    }
  ad->ioc_finished = FALSE;
  ad->next_rq[dir] = as_find_next_rq (ad, rq);
  as_remove_queued_request (ad, rq);
  sched_dispatch_sort (e, rq);
  if (as_rq_aic (rq))
    as_rq_aic (rq)->nr_dispatched++;
  ad->nr_dispatched++;
}

/* as_fifo_expired, rate-limited to one look per expire interval so that a
 * pile of expired requests does not become a seek storm. */
static gboolean
as_fifo_expired (SchedQueue *e, AsData *ad, int dir, gint64 now_j)
{
  gint64 delta = now_j - ad->last_check_fifo[dir];
  if (delta < 0)
    delta = -delta;
  if (delta < ad->fifo_expire[dir])
    return FALSE;
  ad->last_check_fifo[dir] = now_j;
  if (sim_list_empty (&ad->fifo_list[dir]))
    return FALSE;
  SimRequest *rq = sim_list_first_entry (&ad->fifo_list[dir], SimRequest, fifo);
  return now_j > rq->fifo_deadline_ns / (SIM_NS_PER_S / (SimTime) e->hz);
}

static gboolean
as_batch_expired (AsData *ad, gint64 now_j)
{
  if (ad->changed_batch || ad->new_batch)
    return FALSE;
  if (ad->batch_data_dir == AS_SYNC)
    return now_j > ad->current_batch_expires;
  return now_j > ad->current_batch_expires || ad->current_write_count == 0;
}

/* A write batch with no reads waiting that ran out of work or of count
 * cannot be timed fairly. */
static void
as_note_uncontended_writes (AsData *ad, gboolean reads, gboolean writes)
{
  if (ad->batch_data_dir == AS_ASYNC && !reads
      && (ad->current_write_count == 0 || !writes))
    ad->write_batch_idled = TRUE;
}

static int
as_dispatch_all (SchedQueue *e, AsData *ad, gint64 now_j)
{
  int dispatched = 0;
  /* Reset to sync: write batches are timed at the write-to-read change. */
  ad->batch_data_dir = AS_SYNC;
  ad->changed_batch = FALSE;
  ad->new_batch = FALSE;
  for (int dir = AS_SYNC; dir >= AS_ASYNC; dir--)
    {
      while (ad->next_rq[dir])
        {
          as_move_to_dispatch (e, ad, ad->next_rq[dir]);
          dispatched++;
        }
      ad->last_check_fifo[dir] = now_j;
    }
  return dispatched;
}

/* Pick the direction of a new batch and its first request (the FIFO head):
 * writes after a read batch when both wait, else reads. */
static SimRequest *
as_start_batch (SchedQueue *e, AsData *ad, gboolean reads, gboolean writes, gint64 now_j,
                SimTime now_ns)
{
  int dir = reads && !(writes && ad->batch_data_dir == AS_SYNC) ? AS_SYNC : AS_ASYNC;
  g_assert (ad->sort_list[dir].count > 0);
  if (dir == AS_SYNC)
    {
      if (ad->batch_data_dir == AS_ASYNC)
        {
          g_assert (!ad->new_batch);
          ad->changed_batch = TRUE;
        }
    }
  else
    {
      if (ad->batch_data_dir == AS_SYNC)
        {
          ad->changed_batch = TRUE;
          /* The reads may have run out before the first one completed. */
          ad->new_batch = FALSE;
        }
      ad->current_write_count = ad->write_batch_count;
      ad->write_batch_idled = FALSE;
    }
  if (ad->changed_batch)
    SCHED_LOG (e, now_ns, "batch_start dir=%s wait=%d", as_dir_name (dir), ad->nr_dispatched);
  ad->batch_data_dir = dir;
  ad->last_check_fifo[dir] = now_j;
  return sim_list_first_entry (&ad->fifo_list[dir], SimRequest, fifo);
}

static int
as_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  AsData *ad = e->priv;
  gint64 now_j = sched_now_jiffies (e, now_ns);
  gboolean reads = !sim_list_empty (&ad->fifo_list[AS_SYNC]);
  gboolean writes = !sim_list_empty (&ad->fifo_list[AS_ASYNC]);
  SimRequest *rq = NULL;
  gboolean take_fifo_head = FALSE;

  if (force)
    return as_dispatch_all (e, ad, now_j);

  as_note_uncontended_writes (ad, reads, writes);
  if (!(reads || writes) || ad->antic_status == ANTIC_WAIT_REQ
      || ad->antic_status == ANTIC_WAIT_NEXT || ad->changed_batch)
    return 0;

  if (!(reads && writes && as_batch_expired (ad, now_j)))
    {
      /* The batch goes on (or only one direction has work). */
      rq = ad->next_rq[ad->batch_data_dir];
      if (ad->batch_data_dir == AS_SYNC && ad->antic_expire)
        {
          if (as_fifo_expired (e, ad, AS_SYNC, now_j))
            take_fifo_head = TRUE;
          else if (as_can_anticipate (e, ad, rq, now_ns))
            {
              as_antic_waitreq (e, ad, now_ns);
              return 0;
            }
        }
      /* Reads alone: the read batch never ends. */
      if (!take_fifo_head && rq && reads && !writes)
        ad->current_batch_expires = now_j + ad->batch_expire[AS_SYNC];
    }
  else
    SCHED_LOG (e, now_ns, "batch_expire dir=%s", as_dir_name (ad->batch_data_dir));

  if (!take_fifo_head)
    {
      if (rq == NULL)
        rq = as_start_batch (e, ad, reads, writes, now_j, now_ns);
      /* An expired request of the batch direction overrides the choice. */
      take_fifo_head = as_fifo_expired (e, ad, ad->batch_data_dir, now_j);
    }
  if (take_fifo_head)
    rq = sim_list_first_entry (&ad->fifo_list[ad->batch_data_dir], SimRequest, fifo);

  if (ad->changed_batch)
    {
      g_assert (!ad->new_batch);
      if (ad->nr_dispatched)
        return 0;   /* the completion that drains the old batch kicks the queue */
      if (ad->batch_data_dir == AS_ASYNC)
        ad->current_batch_expires = now_j + ad->batch_expire[AS_ASYNC];
      else
        ad->new_batch = TRUE;
      ad->changed_batch = FALSE;
    }
  as_move_to_dispatch (e, ad, rq);
  return 1;
}

static gboolean
as_queue_empty (SchedQueue *e)
{
  AsData *ad = e->priv;
  return sim_list_empty (&ad->fifo_list[AS_SYNC]) && sim_list_empty (&ad->fifo_list[AS_ASYNC]);
}

/* ---- completion -------------------------------------------------------- */

static void
as_activate (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  AsIoContext *aic = as_rq_aic (rq);
  if (aic)
    {
      g_assert (aic->nr_dispatched > 0);
      aic->nr_dispatched--;
    }
}

/* update_write_batch: at the first completion of a read batch, compare the
 * last write batch's real length with write_batch_expire. */
static void
as_update_write_batch (SchedQueue *e, AsData *ad, gint64 now_j, SimTime now_ns)
{
  gint64 batch = ad->batch_expire[AS_ASYNC];
  gint64 write_time = MAX (0, now_j - ad->current_batch_expires + batch);
  int was = ad->write_batch_count;

  if (write_time > batch && !ad->write_batch_idled)
    {
      if (write_time > batch * 3)
        ad->write_batch_count /= 2;
      else
        ad->write_batch_count--;
    }
  else if (write_time < batch && ad->current_write_count == 0)
    {
      if (batch > write_time * 3)
        ad->write_batch_count *= 2;
      else
        ad->write_batch_count++;
    }
  if (ad->write_batch_count < 1)
    ad->write_batch_count = 1;
  SCHED_LOG (e, now_ns, "write_batch_count count=%d was=%d write_jiffies=%" G_GINT64_FORMAT,
             ad->write_batch_count, was, write_time);
}

static void
as_completed (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  AsData *ad = e->priv;
  gint64 now_j = sched_now_jiffies (e, now_ns);
  int dir = as_rq_dir (rq);

  if (ad->changed_batch && ad->nr_dispatched == 1)
    {
      /* The old batch drained: the new one may start. */
      ad->current_batch_expires = now_j + ad->batch_expire[ad->batch_data_dir];
      sched_kick (e);
      ad->changed_batch = FALSE;
      if (ad->batch_data_dir == AS_SYNC)
        ad->new_batch = TRUE;
    }
  g_assert (ad->nr_dispatched > 0);
  ad->nr_dispatched--;

  /* A read batch is timed from its first completion: devices with deep
   * queues and write caches accept writes long before doing them. */
  if (ad->new_batch && ad->batch_data_dir == dir)
    {
      as_update_write_batch (e, ad, now_j, now_ns);
      ad->current_batch_expires = now_j + ad->batch_expire[AS_SYNC];
      ad->new_batch = FALSE;
    }

  if (ad->io_context != NULL && ad->io_context == rq->ioc)
    {
      ad->antic_start = now_j;
      ad->ioc_finished = TRUE;
      if (ad->antic_status == ANTIC_WAIT_REQ)
        as_antic_waitnext (e, ad, now_ns);
    }
  as_put_aic (as_rq_aic (rq), rq, now_j);

  /* Where the kernel's dispatch hook runs on an empty elevator. */
  if (as_queue_empty (e))
    as_note_uncontended_writes (ad, FALSE, FALSE);
}

/* ---- processes --------------------------------------------------------- */

static SchedMayQueue
as_may_queue (SchedQueue *e, const SimIoContext *ioc, SimOp op, gboolean sync)
{
  AsData *ad = e->priv;
  /* The process being waited for must never sleep on the request pool. */
  if ((ad->antic_status == ANTIC_WAIT_REQ || ad->antic_status == ANTIC_WAIT_NEXT)
      && ad->io_context == ioc)
    return SCHED_MAY_QUEUE_MUST;
  return SCHED_MAY_QUEUE_DEFAULT;
}

static void
as_exit_ioc (SchedQueue *e, SimIoContext *ioc, SimTime now_ns)
{
  as_get_aic (e, ioc)->exited = TRUE;
}

static void
as_exit (SchedQueue *e)
{
  AsData *ad = e->priv;
  sched_timer_cancel (e, &ad->antic_timer);
}

/* ---- tests ------------------------------------------------------------- */

static const char *const as_status_names[] = { "off", "wait_req", "wait_next", "finished" };

static gint
as_aic_compare_pid (gconstpointer a, gconstpointer b)
{
  const AsIoContext *x = *(AsIoContext *const *) a;
  const AsIoContext *y = *(AsIoContext *const *) b;
  return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static GPtrArray *
as_aics_by_pid (SchedQueue *e)
{
  GPtrArray *aics = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, e->ioc_data);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (aics, value);
  g_ptr_array_sort (aics, as_aic_compare_pid);
  return aics;
}

static void
as_dump (SchedQueue *e, GString *out)
{
  AsData *ad = e->priv;
  g_string_append_printf (out,
                          "as antic=%s batch=%s changed_batch=%d new_batch=%d"
                          " write_batch_count=%d current_write_count=%d write_batch_idled=%d"
                          " nr_dispatched=%d antic_expire=%d"
                          " exit_prob=%" G_GUINT64_FORMAT " exit_no_coop=%" G_GUINT64_FORMAT
                          " new_ttime_total=%" G_GUINT64_FORMAT " new_ttime_mean=%" G_GUINT64_FORMAT
                          " new_seek_total=%" G_GUINT64_FORMAT " new_seek_mean=%" G_GUINT64_FORMAT
                          " reads=%" G_GSIZE_FORMAT " writes=%" G_GSIZE_FORMAT "\n",
                          as_status_names[ad->antic_status], as_dir_name (ad->batch_data_dir),
                          ad->changed_batch, ad->new_batch, ad->write_batch_count,
                          ad->current_write_count, ad->write_batch_idled, ad->nr_dispatched,
                          ad->antic_expire, ad->exit_prob, ad->exit_no_coop,
                          ad->new_ttime_total, ad->new_ttime_mean, ad->new_seek_total,
                          ad->new_seek_mean, ad->sort_list[AS_SYNC].count,
                          ad->sort_list[AS_ASYNC].count);
  g_autoptr (GPtrArray) aics = as_aics_by_pid (e);
  for (guint i = 0; i < aics->len; i++)
    {
      const AsIoContext *aic = aics->pdata[i];
      g_string_append_printf (out,
                              "aic pid=%u ttime_samples=%" G_GUINT64_FORMAT
                              " ttime_total=%" G_GUINT64_FORMAT " ttime_mean=%" G_GUINT64_FORMAT
                              " seek_samples=%" G_GUINT64_FORMAT " seek_total=%" G_GUINT64_FORMAT
                              " seek_mean=%" G_GUINT64_FORMAT " last_request_pos=%" G_GUINT64_FORMAT
                              " nr_queued=%d nr_dispatched=%d exited=%d\n",
                              aic->pid, aic->ttime_samples, aic->ttime_total, aic->ttime_mean,
                              aic->seek_samples, aic->seek_total, aic->seek_mean,
                              aic->last_request_pos, aic->nr_queued, aic->nr_dispatched,
                              aic->exited);
    }
}

/* Consistency of the structures, for g_assert in tests: every queued
 * request is in its tree and FIFO and counted by its process, next_rq is
 * queued, and anticipation always has a process to wait for.  Declared
 * here (no header of its own); tests declare it too. */
gboolean
sched_as_check_invariants (SchedQueue *e)
{
  AsData *ad = e->priv;
  int queued_by_aic = 0;
  for (guint d = 0; d < AS_N_DIRS; d++)
    {
      gsize in_fifo = 0;
      for (SimList *l = ad->fifo_list[d].next; l != &ad->fifo_list[d]; l = l->next)
        {
          SimRequest *rq = sim_container_of (l, SimRequest, fifo);
          if (as_rq_dir (rq) != (int) d || rq->state != SIM_RQ_PENDING)
            return FALSE;
          if (as_rq_aic (rq) == NULL)
            queued_by_aic++;   /* balances the sum below */
          in_fifo++;
        }
      if (in_fifo != ad->sort_list[d].count)
        return FALSE;
      if ((ad->next_rq[d] == NULL) != (in_fifo == 0))
        return FALSE;
      if (ad->next_rq[d] && ad->next_rq[d]->state != SIM_RQ_PENDING)
        return FALSE;
    }
  g_autoptr (GPtrArray) aics = as_aics_by_pid (e);
  for (guint i = 0; i < aics->len; i++)
    {
      const AsIoContext *aic = aics->pdata[i];
      if (aic->nr_queued < 0 || aic->nr_dispatched < 0)
        return FALSE;
      queued_by_aic += aic->nr_queued;
    }
  if ((gsize) queued_by_aic != ad->sort_list[AS_SYNC].count + ad->sort_list[AS_ASYNC].count)
    return FALSE;
  if (ad->nr_dispatched < 0 || ad->write_batch_count < 1)
    return FALSE;
  if ((ad->antic_status == ANTIC_WAIT_REQ || ad->antic_status == ANTIC_WAIT_NEXT)
      && ad->io_context == NULL)
    return FALSE;
  if (ad->antic_status == ANTIC_WAIT_NEXT && !sched_timer_pending (e, &ad->antic_timer))
    return FALSE;
  return TRUE;
}

const SchedOps sched_as_ops = {
  .name           = "anticipatory",
  .era            = "2.6.20-2.6.31",
  .summary        = "deadline-like sync/async batches; waits after a sync request for the "
                    "same process's next close request",
  .tunables       = as_tunables,
  .priv_size      = sizeof (AsData),
  .ioc_data_size  = sizeof (AsIoContext),
  .init           = as_init,
  .exit           = as_exit,
  .add_request    = as_add_request,
  .dispatch       = as_dispatch,
  .queue_empty    = as_queue_empty,
  .merge          = as_merge,
  .merged         = as_merged,
  .merge_requests = as_merge_requests,
  .former_request = as_former_request,
  .latter_request = as_latter_request,
  .activate       = as_activate,
  .completed      = as_completed,
  .dump           = as_dump,
  .may_queue      = as_may_queue,
  .exit_ioc       = as_exit_ioc,
};
