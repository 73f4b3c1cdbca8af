/* sim-wbt.c — blk-wbt writeback throttling (see sim-wbt.h for the Linux
 * 6.18 block/blk-wbt.c, block/blk-rq-qos.c and block/blk-stat.c rules it
 * follows).  The hot path (throttle, issue, stat_add, done) allocates
 * nothing: sleepers are the callers' embedded SimBioWaiters. */
#include "sim/sim-wbt.h"

#include <string.h>

/* ---- rq_depth and the limits (block/blk-rq-qos.c, block/blk-wbt.c) ----- */

gboolean
sim_rq_depth_calc_max_depth (SimRqDepth *rqd)
{
  /* A queue of depth 1 gets 2, so that one request is ready when the
   * other completes; 1 once scaled down. */
  if (rqd->queue_depth == 1)
    {
      if (rqd->scale_step > 0)
        {
          rqd->max_depth = 1;
          return FALSE;
        }
      rqd->max_depth = 2;
      return TRUE;
    }
  gboolean ret = FALSE;
  guint depth = MIN (rqd->default_depth, rqd->queue_depth);
  if (rqd->scale_step > 0)
    depth = 1 + ((depth - 1) >> MIN (31, rqd->scale_step));
  else if (rqd->scale_step < 0)
    {
      /* Writes only: a temporarily deeper queue, at most 3/4 of it. */
      guint maxd = 3 * rqd->queue_depth / 4;
      guint shift = (guint) -rqd->scale_step;
      guint64 d = shift >= 32 ? G_MAXUINT64 : 1 + ((guint64) (depth - 1) << shift);
      if (d > maxd)
        {
          d = maxd;
          ret = TRUE;
        }
      depth = (guint) d;
    }
  rqd->max_depth = depth;
  return ret;
}

gboolean
sim_rq_depth_scale_up (SimRqDepth *rqd)
{
  /* Hit the maximum in the previous round: stop here. */
  if (rqd->scaled_max)
    return FALSE;
  rqd->scale_step--;
  rqd->scaled_max = sim_rq_depth_calc_max_depth (rqd);
  return TRUE;
}

gboolean
sim_rq_depth_scale_down (SimRqDepth *rqd, gboolean hard_throttle)
{
  /* At the floor: also keeps scale_step from running away when the
   * device cannot keep up. */
  if (rqd->max_depth == 1)
    return FALSE;
  if (rqd->scale_step < 0 && hard_throttle)
    rqd->scale_step = 0;
  else
    rqd->scale_step++;
  rqd->scaled_max = FALSE;
  sim_rq_depth_calc_max_depth (rqd);
  return TRUE;
}

void
sim_wbt_calc_limits (guint max_depth, SimTime min_lat_ns, guint *wb_normal, guint *wb_background)
{
  if (min_lat_ns == 0)
    *wb_normal = *wb_background = 0;
  else if (max_depth <= 2)
    {
      *wb_normal = max_depth;
      *wb_background = 1;
    }
  else
    {
      *wb_normal = (max_depth + 1) / 2;
      *wb_background = (max_depth + 3) / 4;
    }
}

/* int_sqrt: the integer square root, rounded down. */
static guint64
int_sqrt (guint64 x)
{
  guint64 r = 0;
  for (guint64 bit = G_GUINT64_CONSTANT (1) << 62; bit; bit >>= 2)
    {
      if (x >= r + bit)
        {
          x -= r + bit;
          r = (r >> 1) + bit;
        }
      else
        r >>= 1;
    }
  return r;
}

SimTime
sim_wbt_window_ns (SimTime win_ns, gint scale_step)
{
  /* Shorter windows at positive steps react faster; negative steps keep
   * the default window. */
  if (scale_step <= 0)
    return win_ns;
  return (SimTime) (((guint64) win_ns << 4) / int_sqrt ((guint64) (scale_step + 1) << 8));
}

SimTime
sim_wbt_default_latency_ns (gboolean rotational)
{
  return rotational ? SIM_WBT_LAT_ROT_NS : SIM_WBT_LAT_NONROT_NS;
}

/* ---- time in jiffies --------------------------------------------------- */

static SimTime
ns_per_jiffy (const SimWbt *w)
{
  return SIM_NS_PER_S / (SimTime) w->cfg.hz;
}

static gint64
jiffies_now (const SimWbt *w)
{
  return sim_now (w->q->sim) / ns_per_jiffy (w);
}

/* time_before (jiffies, @then_j + @delta_j). */
static gboolean
before (const SimWbt *w, gint64 then_j, gint64 delta_j)
{
  return jiffies_now (w) < then_j + delta_j;
}

/* ---- state --------------------------------------------------------------- */

static void
wbt_log (SimWbt *w, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
wbt_log (SimWbt *w, const char *fmt, ...)
{
  if (w->log == NULL)
    return;
  char buf[256];
  va_list ap;
  va_start (ap, fmt);
  g_vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  w->log (w->log_data, sim_now (w->q->sim), w->q->name, buf);
}

gboolean
sim_wbt_enabled (const SimWbt *w)
{
  return w != NULL && w->cfg.state != SIM_WBT_STATE_OFF_DEFAULT
         && w->cfg.state != SIM_WBT_STATE_OFF_MANUAL;
}

/* wb_recent_wait: a task slept in balance_dirty_pages on this queue's
 * BDI within the last second (bdi->last_bdp_sleep + HZ). */
static gboolean
wb_recent_wait (const SimWbt *w)
{
  const SimTime *slept = w->q->last_bdp_sleep_ns;
  if (slept == NULL || *slept == SIM_TIME_NEVER)
    return FALSE;
  return before (w, *slept / ns_per_jiffy (w), (gint64) w->cfg.hz);
}

/* close_io: a read was issued or completed within HZ / 10. */
static gboolean
close_io (const SimWbt *w)
{
  gint64 tenth = (gint64) w->cfg.hz / 10;
  return before (w, w->last_issue_j, tenth) || before (w, w->last_comp_j, tenth);
}

/* wb_timestamp: only while enabled. */
static void
wb_timestamp (const SimWbt *w, gint64 *var)
{
  if (sim_wbt_enabled (w))
    *var = jiffies_now (w);
}

static void
note_step (SimWbt *w)
{
  w->stats.min_step = MIN (w->stats.min_step, w->rq_depth.scale_step);
  w->stats.max_step = MAX (w->stats.max_step, w->rq_depth.scale_step);
}

static void
calc_wb_limits (SimWbt *w)
{
  sim_wbt_calc_limits (w->rq_depth.max_depth, w->cfg.min_lat_ns, &w->wb_normal, &w->wb_background);
}

/* rwb_trace_step (trace_wbt_step). */
static void
trace_step (SimWbt *w, const char *msg)
{
  wbt_log (w, "wbt_step msg=%s step=%d window_us=%" SIM_TIME_FORMAT " background=%u normal=%u max=%u",
           msg, w->rq_depth.scale_step, w->cur_win_ns / SIM_NS_PER_US, w->wb_background,
           w->wb_normal, w->rq_depth.max_depth);
}

/* ---- the throttle (wbt_wait, rq_qos_wait) ------------------------------- */

guint8
sim_wbt_bio_flags (const SimWbt *w, const SimBio *bio)
{
  if (!sim_wbt_enabled (w))
    return 0;
  if (bio->op == SIM_OP_READ)
    return SIM_WBT_READ;
  /* wbt_should_throttle: not WRITE_ODIRECT (REQ_SYNC | REQ_IDLE). */
  const guint32 odirect = SIM_BIO_SYNC | SIM_BIO_IDLE;
  if ((bio->flags & odirect) == odirect)
    return 0;
  return SIM_WBT_TRACKED;
}

guint
sim_wbt_get_limit (const SimWbt *w, guint32 bio_flags)
{
  /* REQ_HIPRIO (REQ_SYNC | REQ_META | REQ_PRIO): WB_SYNC_ALL writeback
   * gets the whole depth, as does writeback while writers are held in
   * balance_dirty_pages. */
  if ((bio_flags & (SIM_BIO_SYNC | SIM_BIO_META)) || wb_recent_wait (w))
    return w->rq_depth.max_depth;
  /* Background writeback, or any while reads are about (within 100 ms). */
  if ((bio_flags & SIM_BIO_BACKGROUND) || close_io (w))
    return w->wb_background;
  return w->wb_normal;
}

/* rq_wait_inc_below. */
static gboolean
inc_below (SimWbt *w, guint limit)
{
  if (w->inflight >= limit)
    return FALSE;
  w->inflight++;
  w->stats.max_inflight = MAX (w->stats.max_inflight, w->inflight);
  return TRUE;
}

static void arm_timer (SimWbt *w);

/* The end of wbt_wait: with its token, the task arms the window unless it
 * is active, so that it runs while tracked writes are about. */
static void
start_window (SimWbt *w)
{
  if (w->timer == 0)
    arm_timer (w);
}

gboolean
sim_wbt_throttle (SimWbt *w, SimBio *bio, SimBioWaiter *waiter)
{
  guint8 flags = sim_wbt_bio_flags (w, bio);
  if (!(flags & SIM_WBT_TRACKED))
    {
      if (flags & SIM_WBT_READ)
        wb_timestamp (w, &w->last_issue_j);
      return TRUE;
    }
  w->stats.tracked++;
  /* rq_qos_wait: a token at once only if nobody waits. */
  if (w->n_waiting == 0 && inc_below (w, sim_wbt_get_limit (w, bio->flags)))
    {
      start_window (w);
      return TRUE;
    }
  g_assert (waiter != NULL);
  waiter->bio = bio;
  sim_list_add_tail (&waiter->link, &w->waiters);
  w->n_waiting++;
  w->stats.waits++;
  w->stats.max_waiting = MAX (w->stats.max_waiting, w->n_waiting);
  return FALSE;
}

/* wake_up_all with rq_qos_wake_function: in FIFO order, each sleeper takes
 * a token under its own limit; the first that cannot stops the walk. */
static void
wake_all (SimWbt *w)
{
  while (w->n_waiting > 0)
    {
      SimBioWaiter *waiter = sim_list_first_entry (&w->waiters, SimBioWaiter, link);
      if (!inc_below (w, sim_wbt_get_limit (w, waiter->bio->flags)))
        return;
      sim_list_del (&waiter->link);
      w->n_waiting--;
      start_window (w);
      w->grant (w->q, waiter);
    }
}

SimBioWaiter *
sim_wbt_first_waiter (SimWbt *w)
{
  if (w->n_waiting == 0)
    return NULL;
  return sim_list_first_entry (&w->waiters, SimBioWaiter, link);
}

void
sim_wbt_unqueue (SimWbt *w, SimBioWaiter *waiter)
{
  g_assert (w->n_waiting > 0);
  sim_list_del (&waiter->link);
  w->n_waiting--;
}

/* wbt_rqw_done. */
static void
rqw_done (SimWbt *w)
{
  g_assert (w->inflight > 0);
  guint inflight = --w->inflight;
  /* With a write-back cache a completion says little about the media:
   * drain further before waking anyone, unless writers are being held. */
  guint limit = w->cfg.write_cache && !wb_recent_wait (w) ? 0 : w->wb_normal;
  if (inflight && inflight >= limit)
    return;
  if (w->n_waiting > 0)
    {
      gint diff = (gint) limit - (gint) inflight;
      if (!inflight || diff >= (gint) (w->wb_background / 2))
        wake_all (w);
    }
}

void
sim_wbt_done (SimWbt *w, guint8 wbt_flags, guint64 seq)
{
  if (!(wbt_flags & SIM_WBT_TRACKED))
    {
      if (wbt_flags & SIM_WBT_READ)
        {
          if (w->sync_cookie == seq + 1)
            {
              w->sync_issue_ns = 0;
              w->sync_cookie = 0;
            }
          wb_timestamp (w, &w->last_comp_j);
        }
      return;
    }
  rqw_done (w);
}

/* ---- issue and the window's samples -------------------------------------- */

void
sim_wbt_issue (SimWbt *w, const SimRequest *rq)
{
  if (!sim_wbt_enabled (w))
    return;
  /* Watch one read at a time: a read stuck behind writes for a whole
   * window counts against the latency even before it completes. */
  if ((rq->wbt_flags & SIM_WBT_READ) && w->sync_issue_ns == 0)
    {
      w->sync_cookie = rq->seq + 1;
      w->sync_issue_ns = rq->dispatch_ns;
    }
}

void
sim_wbt_stat_add (SimWbt *w, const SimRequest *rq)
{
  /* blk_stat_add feeds active callbacks only; wbt_data_dir buckets by
   * direction. */
  if (w->timer == 0)
    return;
  SimTime now = sim_now (w->q->sim);
  SimTime lat = now >= rq->dispatch_ns ? now - rq->dispatch_ns : 0;
  if (w->stat[rq->op].nr_samples == 0 || lat < w->stat[rq->op].min_ns)
    w->stat[rq->op].min_ns = lat;
  w->stat[rq->op].nr_samples++;
}

/* ---- the window (wb_timer_fn, latency_exceeded) ------------------------- */

static SimTime
sync_issue_lat (const SimWbt *w)
{
  if (w->sync_issue_ns == 0 || w->sync_cookie == 0)
    return 0;
  return sim_now (w->q->sim) - w->sync_issue_ns;
}

static SimWbtStatus
latency_exceeded (SimWbt *w)
{
  /* A flooded device may hold one read longer than the window, or longer
   * than the target while no read completes at all. */
  SimTime thislat = sync_issue_lat (w);
  if (thislat > w->cur_win_ns
      || (thislat > w->cfg.min_lat_ns && w->stat[SIM_OP_READ].nr_samples == 0))
    {
      w->stats.sync_issue_exceeded++;
      wbt_log (w, "wbt_lat lat_us=%" SIM_TIME_FORMAT, thislat / SIM_NS_PER_US);
      return SIM_WBT_LAT_EXCEEDED;
    }
  /* stat_sample_valid: at least one read and RWB_MIN_WRITE_SAMPLES writes,
   * so that it is writes that slow the reads down. */
  if (w->stat[SIM_OP_READ].nr_samples < 1
      || w->stat[SIM_OP_WRITE].nr_samples < SIM_WBT_MIN_WRITE_SAMPLES)
    {
      if (w->stat[SIM_OP_WRITE].nr_samples || wb_recent_wait (w) || w->inflight)
        return SIM_WBT_LAT_UNKNOWN_WRITES;
      return SIM_WBT_LAT_UNKNOWN;
    }
  if (w->stat[SIM_OP_READ].min_ns > w->cfg.min_lat_ns)
    {
      wbt_log (w, "wbt_lat lat_us=%" SIM_TIME_FORMAT,
               w->stat[SIM_OP_READ].min_ns / SIM_NS_PER_US);
      return SIM_WBT_LAT_EXCEEDED;
    }
  return SIM_WBT_LAT_OK;
}

SimWbtScale
sim_wbt_apply_verdict (SimRqDepth *rqd, SimWbtStatus status, guint *unknown_cnt)
{
  gboolean up = FALSE, down = FALSE, hard = FALSE;

  switch (status)
    {
    case SIM_WBT_LAT_EXCEEDED:
      down = hard = TRUE;
      break;
    case SIM_WBT_LAT_OK:
    case SIM_WBT_LAT_UNKNOWN_WRITES:
      /* Writes only: the step may go negative for more write depth. */
      up = TRUE;
      break;
    case SIM_WBT_LAT_UNKNOWN:
      /* No data for RWB_UNKNOWN_BUMP windows: back towards step 0. */
      if (++*unknown_cnt < SIM_WBT_UNKNOWN_BUMP)
        break;
      up = rqd->scale_step > 0;
      down = rqd->scale_step < 0;
      break;
    }
  if (up && sim_rq_depth_scale_up (rqd))
    {
      *unknown_cnt = 0;
      return SIM_WBT_SCALED_UP;
    }
  if (down && sim_rq_depth_scale_down (rqd, hard))
    {
      *unknown_cnt = 0;
      return SIM_WBT_SCALED_DOWN;
    }
  return SIM_WBT_SCALE_NONE;
}

static const char *
status_name (SimWbtStatus s)
{
  switch (s)
    {
    case SIM_WBT_LAT_OK:
      return "ok";
    case SIM_WBT_LAT_UNKNOWN:
      return "unknown";
    case SIM_WBT_LAT_UNKNOWN_WRITES:
      return "unknown_writes";
    case SIM_WBT_LAT_EXCEEDED:
    default:
      return "exceeded";
    }
}

static void
window_end (Sim *sim, gpointer subject, gpointer object)
{
  SimWbt *w = subject;
  w->timer = 0;
  guint inflight = w->inflight;
  SimWbtStatus status = latency_exceeded (w);
  w->stats.windows++;
  w->stats.status[status]++;
  wbt_log (w, "wbt_timer status=%s step=%d inflight=%u reads=%" G_GUINT64_FORMAT
           " writes=%" G_GUINT64_FORMAT, status_name (status), w->rq_depth.scale_step, inflight,
           w->stat[SIM_OP_READ].nr_samples, w->stat[SIM_OP_WRITE].nr_samples);
  /* blk_stat_timer_fn hands over the window's samples and starts afresh. */
  memset (w->stat, 0, sizeof w->stat);
  switch (sim_wbt_apply_verdict (&w->rq_depth, status, &w->unknown_cnt))
    {
    case SIM_WBT_SCALED_UP:
      calc_wb_limits (w);
      w->stats.scale_ups++;
      note_step (w);
      trace_step (w, "scale_up");
      wake_all (w);
      break;
    case SIM_WBT_SCALED_DOWN:
      calc_wb_limits (w);
      w->stats.scale_downs++;
      note_step (w);
      trace_step (w, "scale_down");
      break;
    case SIM_WBT_SCALE_NONE:
      break;
    }
  if ((w->rq_depth.scale_step || inflight) && w->timer == 0)
    arm_timer (w);
}

/* rwb_arm_timer -> blk_stat_activate_nsecs: mod_timer (jiffies +
 * nsecs_to_jiffies (window)). */
static void
arm_timer (SimWbt *w)
{
  w->cur_win_ns = sim_wbt_window_ns (w->win_ns, w->rq_depth.scale_step);
  SimTime jiffies = MAX (1, w->cur_win_ns / ns_per_jiffy (w));
  w->timer = sim_schedule_in (w->q->sim, jiffies * ns_per_jiffy (w), window_end, w, NULL);
}

/* ---- lifetime ------------------------------------------------------------ */

SimWbt *
sim_wbt_new (SimRequestQueue *q, const SimWbtConfig *cfg, SimWbtGrantFunc grant)
{
  g_return_val_if_fail (q != NULL && cfg != NULL && grant != NULL, NULL);
  g_assert (cfg->hz >= 10 && cfg->queue_depth >= 1);
  SimWbt *w = g_new0 (SimWbt, 1);
  w->q = q;
  w->cfg = *cfg;
  w->grant = grant;
  sim_list_init (&w->waiters);
  /* wbt_init: the window, the timestamps of now, the depth from the
   * queue's (wbt_update_limits). */
  w->win_ns = w->cur_win_ns = SIM_WBT_WINDOW_NS;
  w->last_issue_j = w->last_comp_j = jiffies_now (w);
  w->rq_depth.default_depth = SIM_WBT_DEF_DEPTH;
  w->rq_depth.queue_depth = cfg->queue_depth;
  sim_rq_depth_calc_max_depth (&w->rq_depth);
  calc_wb_limits (w);
  return w;
}

void
sim_wbt_free (SimWbt *w)
{
  if (w == NULL)
    return;
  /* Sleepers belong to their submitters; a timed run may end with some. */
  if (w->timer)
    sim_cancel (w->q->sim, w->timer);
  g_free (w);
}

void
sim_wbt_set_log (SimWbt *w, SimWbtLogFunc fn, gpointer data)
{
  w->log = fn;
  w->log_data = data;
}
