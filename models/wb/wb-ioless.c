/* wb-ioless.c — "io-less-3.2": IO-less dirty throttling (Wu Fengguang,
 * mm/page-writeback.c of 3.2; ../shared/reference/kernel-algorithms.md §7.4).
 *
 *  - writers never write back themselves: balance_dirty_pages only sleeps,
 *    for HZ·pages_dirtied/task_ratelimit jiffies (at most bdi_max_pause,
 *    200 ms), where task_ratelimit = dirty_ratelimit·pos_ratio;
 *  - per device: write bandwidth estimated every 200 ms from its written
 *    counter, dirty_ratelimit moved towards the balanced rate, and a share
 *    of the global threshold from floating proportions of writeback
 *    completions (bdi_writeout_inc);
 *  - below the freerun ceiling (thresh + bg)/2 a writer is not throttled;
 *    a task calls balance_dirty_pages only once it has dirtied
 *    nr_dirtied_pause pages (balance_dirty_pages_ratelimited);
 *  - balance_dirty_pages starts background writeback only on global
 *    counts: in its loop when dirty + writeback pages are over the freerun
 *    ceiling and no writeback is in progress, and on its way out when the
 *    dirty pages alone are over the background threshold;
 *  - the flusher, once started or woken by its dirty_writeback_interval
 *    timer (wb_do_writeback: wb_check_old_data_flush, then
 *    wb_check_background_flush), writes back while dirty pages are over
 *    the background threshold, globally or a device over its share of it
 *    (over_bground_thresh(bdi), per device since 3.2), skipping congested
 *    queues; kupdate writes expired pages.
 * All arithmetic is in wb-limits.c.  Simplified: one flusher for all
 * devices; bandwidth is only updated from balance_dirty_pages (3.2 also
 * updates the write bandwidth from wb_writeback); strict_limit (3.14's
 * BDI_CAP_STRICTLIMIT) can be set for every device at once.
 */
#include "models/wb/wb.h"
#include "models/wb/wb-limits.h"
#include "sim/sim-units.h"

/* One backing device's throttling state (the 3.2 backing_dev_info fields). */
typedef struct {
  SimBdi         *bdi;
  WbBdiBandwidth  bw;
  WbPropLocal     completions;   /* bdi->completions */
} IolessBdi;

/* A task's balance_dirty_pages_ratelimited state. */
typedef struct {
  guint64  nr_dirtied;
  guint64  nr_dirtied_pause;
} IolessTask;

typedef struct {
  WbDirtyTunables     t;
  gboolean            strict_limit;
  gboolean            started;
  WbGlobalDirtyLimit  global;
  WbPropGlobal        prop;        /* vm_completions */
  GArray             *bdis;        /* IolessBdi, in sim_page_cache_bdis() order */
  GHashTable         *tasks;       /* SimIoContext* -> IolessTask* */
  gboolean            background_running;
  SimEventId          background_event;
  WbKupdate           kupdate;
} IolessData;

#define IOLESS_KVER        WB_KERNEL_VERSION (3, 2, 0)
/* Initial nr_dirtied_pause: 128 KiB (copy_process in 3.2). */
#define INIT_DIRTIED_PAUSE_PAGES 32u

static guint64
to_jiffies (const WbPolicy *w, SimTime ns)
{
  return (guint64) ns / (guint64) (SIM_NS_PER_S / w->hz);
}

static void
limits (WbPolicy *w, guint64 *bg, guint64 *thresh)
{
  IolessData *d = w->priv;
  guint64 max = sim_page_cache_max_pages (w->pc);
  guint64 used = sim_page_cache_pages (w->pc);
  WbMemInfo mem = { .total_pages = max, .free_pages = max - used, .reclaimable_pages = used };
  wb_global_dirty_limits (IOLESS_KVER, &d->t, &mem, FALSE, bg, thresh);
}

/* The state of @bdi; devices that appeared since the last call are added
 * (the only allocation, once per device). */
static IolessBdi *
bdi_state (WbPolicy *w, const SimBdi *bdi, SimTime now_ns)
{
  IolessData *d = w->priv;
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  while (d->bdis->len < bdis->len)
    {
      IolessBdi ib = { .bdi = g_ptr_array_index (bdis, d->bdis->len) };
      wb_bdi_bandwidth_init (&ib.bw, w->hz, to_jiffies (w, now_ns));
      ib.bw.dirtied_stamp = ib.bdi->dirtied;
      ib.bw.written_stamp = ib.bdi->written;
      wb_prop_local_init (&ib.completions);
      g_array_append_val (d->bdis, ib);
    }
  for (guint i = 0; i < d->bdis->len; i++)
    {
      IolessBdi *ib = &g_array_index (d->bdis, IolessBdi, i);
      if (ib->bdi == bdi)
        return ib;
    }
  g_assert_not_reached ();
}

static void
start_once (WbPolicy *w, SimTime now_ns)
{
  IolessData *d = w->priv;
  if (d->started)
    return;
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  /* writeback_init / update_completion_period: period from the limit. */
  wb_prop_global_init (&d->prop, wb_prop_period_shift (thresh));
  wb_global_dirty_limit_init (&d->global, thresh, to_jiffies (w, now_ns));
  d->started = TRUE;
}

/* over_bground_thresh (3.2): global dirty pages over the background
 * threshold, or @b's over its share of it. */
static gboolean
over_bground (WbPolicy *w, SimBdi *b, guint64 bg)
{
  IolessData *d = w->priv;
  if (sim_page_cache_nr_dirty (w->pc) > bg)
    return TRUE;
  if (b->nr_dirty == 0)
    return FALSE;
  guint64 num, den;
  wb_prop_fraction (&d->prop, &bdi_state (w, b, sim_now (w->sim))->completions, &num, &den);
  return b->nr_dirty > wb_bdi_dirty_limit (bg, num, den, 0, 0, 100);
}

static gboolean
any_over_bground (WbPolicy *w, guint64 bg)
{
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  for (guint i = 0; i < bdis->len; i++)
    if (over_bground (w, g_ptr_array_index (bdis, i), bg))
      return TRUE;
  return FALSE;
}

/* Whether writeback of @b should go on: background work while over the
 * background threshold (@background), kupdate while anything is dirty. */
static gboolean
wants_writeback (WbPolicy *w, SimBdi *b, gboolean background, guint64 bg)
{
  return background ? over_bground (w, b, bg) : b->nr_dirty > 0;
}

/* Nonblocking writeback of pages dirtied at or before @before, a batch per
 * device in turn, while some device wants it; FALSE when it stopped
 * because every device with work was congested. */
static gboolean
flush (WbPolicy *w, SimTime before, gboolean background, guint64 bg)
{
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  for (;;)
    {
      guint64 started = 0;
      gboolean any = FALSE, all_congested = TRUE;
      for (guint i = 0; i < bdis->len; i++)
        {
          SimBdi *b = g_ptr_array_index (bdis, i);
          if (b->nr_dirty == 0 || !wants_writeback (w, b, background, bg))
            continue;
          any = TRUE;
          if (sim_queue_write_congested (b->q))
            continue;
          all_congested = FALSE;
          guint64 n = sim_page_cache_start_writeback (w->pc, b, WB_FLUSH_BATCH_PAGES, before, &w->flusher);
          if (n)
            sim_queue_unplug (b->q, &w->flusher);
          started += n;
        }
      if (!any)
        return TRUE;
      if (started == 0)
        return !all_congested;
    }
}

static void background_step (Sim *sim, gpointer subject, gpointer object);

/* bdi_start_background_writeback: the flusher runs background work,
 * which goes on while over_bground_thresh (background_step). */
static void
start_background (WbPolicy *w)
{
  IolessData *d = w->priv;
  if (d->background_running)
    return;
  d->background_running = TRUE;
  d->background_event = sim_schedule_in (w->sim, 0, background_step, w, NULL);
}

/* wb_check_background_flush: a woken flusher looks at every device's
 * over_bground_thresh, its share included. */
static void
check_background (WbPolicy *w, guint64 bg)
{
  if (any_over_bground (w, bg))
    start_background (w);
}

/* balance_dirty_pages (3.2) kicks the flusher on global counts only: a
 * device's share of the background threshold is looked at once the
 * flusher runs.  A fresh device's share is 0, so a kick on it would start
 * writeback at the first dirty page, which the kernel does not do.  Under
 * strictlimit (3.14) the loop's test is the device's own: its dirty and
 * writeback pages against the freerun ceiling of its share (background
 * threshold scaled alike), "small writeouts when the bdi limits are
 * ramping up are the price we consciously pay". */
static void
kick_background (WbPolicy *w, const WbPosInput *pos)
{
  IolessData *d = w->priv;
  guint64 dirty = sim_page_cache_nr_dirty (w->pc);
  gboolean over_freerun;

  if (d->strict_limit)
    {
      guint64 bdi_bg = pos->thresh_pages > 0
                         ? pos->bg_thresh_pages * pos->bdi_thresh_pages / pos->thresh_pages
                         : 0;
      over_freerun = pos->bdi_dirty_pages
                     > wb_dirty_freerun_ceiling (pos->bdi_thresh_pages, bdi_bg);
    }
  else
    over_freerun = pos->dirty_pages > wb_dirty_freerun_ceiling (pos->thresh_pages,
                                                                pos->bg_thresh_pages);
  if (over_freerun || dirty > pos->bg_thresh_pages)
    start_background (w);
}

/* wb_writeback for background work: over_bground_thresh. */
static void
background_step (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  IolessData *d = w->priv;
  guint64 bg, thresh;
  d->background_event = 0;
  limits (w, &bg, &thresh);
  flush (w, SIM_TIME_NEVER, TRUE, bg);
  if (!any_over_bground (w, bg))
    {
      d->background_running = FALSE;
      return;
    }
  d->background_event = sim_schedule_in (sim, WB_CONGESTION_WAIT_NS, background_step, w, NULL);
}

/* The flusher's periodic wakeup (wb_do_writeback): wb_check_old_data_flush
 * writes what has been dirty longer than the expiry, then
 * wb_check_background_flush. */
static void
flush_old (WbPolicy *w, SimTime dirtied_before_ns)
{
  guint64 bg, thresh;

  flush (w, dirtied_before_ns, FALSE, 0);
  limits (w, &bg, &thresh);
  check_background (w, bg);
}

static IolessTask *
task_state (IolessData *d, const SimIoContext *ioc)
{
  IolessTask *task = g_hash_table_lookup (d->tasks, ioc);
  if (task == NULL)
    {
      task = g_new0 (IolessTask, 1);
      task->nr_dirtied_pause = INIT_DIRTIED_PAUSE_PAGES;
      g_hash_table_insert (d->tasks, (gpointer) ioc, task);
    }
  return task;
}

static void balance_step (WbPolicy *w, SimPageWrite *wr);

/* The end of a sleep: 3.2 leaves balance_dirty_pages after a sleep at a
 * non-zero task_ratelimit (step 1) and looks again after one at zero. */
static void
pause_done (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  IolessData *d = w->priv;
  SimPageWrite *wr = object;
  wr->pause = 0;
  if (wr->step == 0)
    {
      balance_step (w, wr);
      return;
    }
  task_state (d, wr->ioc)->nr_dirtied = 0;
  sim_page_cache_write_finish (w->pc, wr);
}

/* One round of balance_dirty_pages (3.2) for the task's nr_dirtied pages. */
static void
balance_step (WbPolicy *w, SimPageWrite *wr)
{
  IolessData *d = w->priv;
  SimTime now = sim_now (w->sim);
  guint64 now_j = to_jiffies (w, now);
  IolessTask *task = task_state (d, wr->ioc);
  IolessBdi *ib = bdi_state (w, wr->file->bdi, now);
  guint64 bg, thresh, num, den;

  limits (w, &bg, &thresh);
  wb_prop_fraction (&d->prop, &ib->completions, &num, &den);
  WbPosInput pos = {
    .thresh_pages = thresh,
    .bg_thresh_pages = bg,
    .dirty_pages = sim_page_cache_nr_dirty (w->pc) + sim_page_cache_nr_writeback (w->pc),
    .global_dirty_limit_pages = d->global.limit_pages,
    .bdi_thresh_pages = wb_bdi_dirty_limit (thresh, num, den, 0, 0, 100),
    .bdi_dirty_pages = ib->bdi->nr_dirty + ib->bdi->nr_writeback,
    .write_bw_pages_per_s = ib->bw.avg_write_bandwidth,
    .strictlimit = d->strict_limit,
  };
  wb_bdi_update_bandwidth (&ib->bw, &d->global, &pos, ib->bdi->dirtied, ib->bdi->written,
                           now_j, now_j);
  pos.global_dirty_limit_pages = d->global.limit_pages;
  pos.write_bw_pages_per_s = ib->bw.avg_write_bandwidth;

  WbPause p;
  wb_balance_dirty_pages_pause (&pos, &ib->bw, task->nr_dirtied, task->nr_dirtied_pause, &p);
  kick_background (w, &pos);
  if (p.sleep_jiffies == 0)
    {
      task->nr_dirtied = 0;
      task->nr_dirtied_pause = p.nr_dirtied_pause;
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  if (!p.repeat)
    {
      task->nr_dirtied_pause = p.nr_dirtied_pause;
      wr->step = 1;
    }
  wb_pause (w, wr, (SimTime) wb_jiffies_to_ns (p.sleep_jiffies, w->hz), pause_done);
}

/* The global limits, or @bdi's share of the dirty threshold. */
static void
ioless_limits (WbPolicy *w, const SimBdi *bdi, guint64 *bg, guint64 *thresh)
{
  IolessData *d = w->priv;
  limits (w, bg, thresh);
  if (bdi == NULL)
    return;
  /* Only devices already known: sampling must not add state. */
  guint64 global_thresh = *thresh;
  *bg = *thresh = 0;
  for (guint i = 0; i < d->bdis->len; i++)
    {
      IolessBdi *ib = &g_array_index (d->bdis, IolessBdi, i);
      if (ib->bdi != bdi)
        continue;
      guint64 num, den;
      wb_prop_fraction (&d->prop, &ib->completions, &num, &den);
      *thresh = wb_bdi_dirty_limit (global_thresh, num, den, 0, 0, 100);
    }
}

/* balance_dirty_pages_ratelimited: the task only enters
 * balance_dirty_pages once it has dirtied nr_dirtied_pause pages. */
static void
ioless_dirtied (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  IolessData *d = w->priv;
  start_once (w, now_ns);
  bdi_state (w, wr->file->bdi, now_ns);
  IolessTask *task = task_state (d, wr->ioc);
  task->nr_dirtied += wr->dirtied;
  wr->step = 0;
  if (task->nr_dirtied < task->nr_dirtied_pause)
    {
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  balance_step (w, wr);
}

/* bdi_writeout_inc: each completion is an event of the device's share. */
static void
ioless_written (WbPolicy *w, SimBdi *bdi, guint64 pages, SimTime now_ns)
{
  IolessData *d = w->priv;
  start_once (w, now_ns);
  IolessBdi *ib = bdi_state (w, bdi, now_ns);
  for (guint64 i = 0; i < pages; i++)
    wb_prop_inc_max (&d->prop, &ib->completions, 100);
}

static gboolean
get_bytes (GKeyFile *kf, const char *key, guint64 *out, gboolean *present, GError **error)
{
  g_autofree char *text = g_key_file_get_string (kf, "writeback", key, NULL);
  g_autoptr (GError) local = NULL;
  *present = text != NULL;
  if (text == NULL)
    return TRUE;
  g_strstrip (text);
  if (!sim_parse_size_bytes (text, out, &local))
    {
      g_set_error (error, WB_ERROR, WB_ERROR_PARSE, "[writeback] %s: %s", key, local->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_tunables (IolessData *d, GKeyFile *kf, GError **error)
{
  static const char *const keys[] = { "policy", "dirty_ratio", "dirty_background_ratio",
                                      "dirty_bytes", "dirty_background_bytes",
                                      "dirty_expire_centisecs", "dirty_writeback_centisecs",
                                      "strict_limit", NULL };
  g_auto (GStrv) present = g_key_file_get_keys (kf, "writeback", NULL, NULL);
  for (guint i = 0; present && present[i]; i++)
    if (!g_strv_contains (keys, present[i]))
      {
        g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                     "[writeback] %s: unknown key (dirty_ratio, dirty_background_ratio, "
                     "dirty_bytes, dirty_background_bytes, dirty_expire_centisecs, "
                     "dirty_writeback_centisecs, strict_limit)", present[i]);
        return FALSE;
      }
  guint ratio = d->t.dirty_ratio_pct, bg_ratio = d->t.dirty_background_ratio_pct;
  guint64 bytes = 0, bg_bytes = 0;
  gboolean has_bytes, has_bg_bytes;
  if (!wb_get_uint (kf, "dirty_ratio", &ratio, 100, error)
      || !wb_get_uint (kf, "dirty_background_ratio", &bg_ratio, 100, error)
      || !get_bytes (kf, "dirty_bytes", &bytes, &has_bytes, error)
      || !get_bytes (kf, "dirty_background_bytes", &bg_bytes, &has_bg_bytes, error)
      || !wb_get_uint (kf, "dirty_expire_centisecs", &d->t.dirty_expire_centisecs, 1000000, error)
      || !wb_get_uint (kf, "dirty_writeback_centisecs", &d->t.dirty_writeback_centisecs, 1000000, error))
    return FALSE;
  /* The sysctls: a _bytes value overrides its ratio. */
  wb_dirty_tunables_set_ratio (&d->t, ratio);
  wb_dirty_tunables_set_background_ratio (&d->t, bg_ratio);
  if (has_bytes)
    wb_dirty_tunables_set_bytes (&d->t, bytes);
  if (has_bg_bytes)
    wb_dirty_tunables_set_background_bytes (&d->t, bg_bytes);
  if (g_key_file_has_key (kf, "writeback", "strict_limit", NULL))
    {
      g_autoptr (GError) local = NULL;
      d->strict_limit = g_key_file_get_boolean (kf, "writeback", "strict_limit", &local);
      if (local)
        {
          g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                       "[writeback] strict_limit: not a boolean (true or false)");
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
ioless_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  IolessData *d = w->priv;
  wb_dirty_tunables_init (&d->t, IOLESS_KVER);
  if (kf && g_key_file_has_group (kf, "writeback") && !read_tunables (d, kf, error))
    return FALSE;
  d->bdis = g_array_new (FALSE, TRUE, sizeof (IolessBdi));
  d->tasks = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  wb_kupdate_start (w, &d->kupdate, &d->t, flush_old);
  return TRUE;
}

static void
ioless_exit (WbPolicy *w)
{
  IolessData *d = w->priv;
  wb_kupdate_stop (w, &d->kupdate);
  if (d->background_event)
    sim_cancel (w->sim, d->background_event);
  g_clear_pointer (&d->bdis, g_array_unref);
  g_clear_pointer (&d->tasks, g_hash_table_unref);
}

const WbOps wb_ioless_ops = {
  .name      = "io-less-3.2",
  .era       = "3.2+",
  .summary   = "IO-less throttling: writers only pause, at a rate from per-device bandwidth "
               "estimates and position control; flusher writes back",
  .priv_size = sizeof (IolessData),
  .flags     = WB_F_RECLAIM_ROTATES,
  .init      = ioless_init,
  .exit      = ioless_exit,
  .dirtied   = ioless_dirtied,
  .written   = ioless_written,
  .limits    = ioless_limits,
};
