/* wb-perbdi.c — "per-bdi-2.6.24": per-device dirty limits from floating
 * proportions (2.6.24 to 3.1; ../shared/reference/kernel-algorithms.md
 * §7.3, mm/page-writeback.c and lib/proportions.c of 2.6.24–2.6.32).
 *
 *  - global background and dirty thresholds as in global-2.6, but over the
 *    2.6.24+ dirtyable memory (free + reclaimable) and with the era's
 *    defaults (`kernel` tunable, 2.6.24 to 3.1, default 2.6.24: 5/10 %);
 *  - every completed writeback page is an event of the global proportion
 *    descriptor (vm_completions) and of its device's local count
 *    (__bdi_writeout_inc), so a device's share p = its recent completions
 *    over all recent completions, decaying by halves per period;
 *  - bdi_thresh = dirty_thresh·p within min_ratio/max_ratio, clipped to
 *    what is still free globally plus the device's own dirty pages;
 *  - balance_dirty_pages (2.6.24–2.6.32): a writer is throttled only while
 *    its own device is over bdi_thresh (and global dirty+writeback is past
 *    (background + dirty)/2); it writes back up to write_chunk pages of its
 *    device, sleeps congestion_wait (HZ/10; back-off from 2.6.33) and looks
 *    again;
 *  - the task adjustment (task_dirty_limit): every dirtied page is an event
 *    of a second proportion descriptor (vm_dirties) and of the task's own
 *    count, and a writer's bdi_thresh is lowered by up to 1/8 by its share
 *    of recent dirtying, so heavy dirtiers are throttled first;
 *  - background writeback and kupdate as in global-2.6 (pdflush: one
 *    nonblocking thread for all devices, sleeping 100 ms whenever every
 *    device with dirty pages is congested); from 2.6.32 one flusher thread
 *    per device ("flush-MAJ:MIN") does that device's background writeback,
 *    blocking on its own queue only (it waits for the device's next
 *    completion when the queue is congested), woken by the device's
 *    writers when global dirty pages pass the background threshold.
 * Simplified: kupdate-style expiry stays one pass over all devices;
 * min_ratio/max_ratio apply to every device (a device whose min_ratio would
 * bring the sum to 100 % gets 0, as the kernel refuses that write);
 * balance_dirty_pages runs once per write().
 */
#include "models/wb/wb.h"
#include "models/wb/wb-limits.h"
#include "models/wb/wb-perbdi.h"
#include "sim/sim-units.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  SimBdi      *bdi;
  WbPropLocal  completions;   /* bdi->completions */
  guint        min_ratio_pct;
  /* 2.6.32+: the device's flusher thread. */
  SimEventId   flusher_event;
  gboolean     flusher_running;
  gboolean     flusher_blocked;  /* waiting for a completion of its queue */
} PerBdi;

/* A task's dirtying count (task->dirties). */
typedef struct {
  WbPropLocal  dirties;
} PerBdiTask;

typedef struct {
  WbDirtyTunables t;
  guint           kver;
  guint           min_ratio_pct;
  guint           max_ratio_pct;
  guint           sum_min_ratio_pct;  /* bdi_min_ratio */
  WbPropGlobal    completions;        /* vm_completions */
  WbPropGlobal    dirties;            /* vm_dirties */
  GHashTable     *tasks;              /* SimIoContext* -> PerBdiTask* */
  PerBdi         *bdis;
  guint           n_bdis;
  WbPdflush       pdflush;            /* before 2.6.32 */
  WbKupdate       kupdate;
} PerBdiData;


/* The device's entry, added the first time it is seen (bdi_init). */
static PerBdi *
per_bdi (WbPolicy *w, SimBdi *bdi)
{
  PerBdiData *g = w->priv;
  for (guint i = 0; i < g->n_bdis; i++)
    if (g->bdis[i].bdi == bdi)
      return &g->bdis[i];
  g->bdis = g_renew (PerBdi, g->bdis, g->n_bdis + 1);
  PerBdi *p = &g->bdis[g->n_bdis++];
  /* g_renew does not zero: the flusher fields must not start as garbage. */
  memset (p, 0, sizeof *p);
  p->bdi = bdi;
  wb_prop_local_init (&p->completions);
  /* bdi_set_min_ratio refuses a value that brings the sum to 100 %. */
  p->min_ratio_pct = 0;
  if (g->sum_min_ratio_pct + g->min_ratio_pct < 100)
    {
      p->min_ratio_pct = g->min_ratio_pct;
      g->sum_min_ratio_pct += g->min_ratio_pct;
    }
  return p;
}

static void
limits (WbPolicy *w, guint64 *bg, guint64 *thresh)
{
  PerBdiData *g = w->priv;
  guint64 max = sim_page_cache_max_pages (w->pc);
  guint64 used = sim_page_cache_pages (w->pc);
  WbMemInfo mem = { .total_pages = max, .free_pages = max - used, .reclaimable_pages = used };
  wb_global_dirty_limits (g->kver, &g->t, &mem, FALSE, bg, thresh);
}

static guint64
global_nr (WbPolicy *w)
{
  return sim_page_cache_nr_dirty (w->pc) + sim_page_cache_nr_writeback (w->pc);
}

/* get_dirty_limits' per-BDI part. */
static guint64
bdi_thresh (WbPolicy *w, PerBdi *p, guint64 thresh)
{
  PerBdiData *g = w->priv;
  guint64 num, den;
  wb_prop_fraction (&g->completions, &p->completions, &num, &den);
  guint64 t = wb_bdi_dirty_limit (thresh, num, den, p->min_ratio_pct, g->sum_min_ratio_pct,
                                  g->max_ratio_pct);
  return wb_bdi_clip_dirty_limit (t, thresh, global_nr (w),
                                  p->bdi->nr_dirty + p->bdi->nr_writeback);
}

guint64
wb_perbdi_bdi_thresh_pages (WbPolicy *w, SimBdi *bdi)
{
  g_assert (w->ops == &wb_perbdi_ops);
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  return bdi_thresh (w, per_bdi (w, bdi), thresh);
}


static void
perbdi_limits (WbPolicy *w, const SimBdi *bdi, guint64 *bg, guint64 *thresh)
{
  limits (w, bg, thresh);
  if (bdi == NULL)
    return;
  /* Only devices already written to: sampling must not add state. */
  PerBdiData *g = w->priv;
  guint64 global_thresh = *thresh;
  *bg = *thresh = 0;
  for (guint i = 0; i < g->n_bdis; i++)
    if (g->bdis[i].bdi == bdi)
      *thresh = bdi_thresh (w, &g->bdis[i], global_thresh);
}

static gboolean
per_device_flushers (const PerBdiData *g)
{
  return g->kver >= WB_KERNEL_VERSION (2, 6, 32);
}

static void flusher_step (Sim *sim, gpointer subject, gpointer object);

/* Background writeback past the background threshold: pdflush, or from
 * 2.6.32 the flusher of the writer's device @p (bdi_start_writeback). */
static void
wake_background (WbPolicy *w, PerBdi *p)
{
  PerBdiData *g = w->priv;
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  if (sim_page_cache_nr_dirty (w->pc) <= bg)
    return;
  if (per_device_flushers (g))
    {
      if (p->flusher_running)
        return;
      p->flusher_running = TRUE;
      p->flusher_event = sim_schedule_in (w->sim, 0, flusher_step, w,
                                          GUINT_TO_POINTER ((guint) (p - g->bdis)));
      return;
    }
  wb_pdflush_wake (w, &g->pdflush);
}

/* One pass of a 2.6.32 flusher thread: write a batch of its device while
 * global dirty pages are over the background threshold; a congested
 * queue blocks it until the device completes a write. */
static void
flusher_step (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  PerBdiData *g = w->priv;
  PerBdi *p = &g->bdis[GPOINTER_TO_UINT (object)];
  p->flusher_event = 0;
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  if (sim_page_cache_nr_dirty (w->pc) <= bg || p->bdi->nr_dirty == 0)
    {
      p->flusher_running = FALSE;
      return;
    }
  if (sim_queue_write_congested (p->bdi->q))
    {
      p->flusher_blocked = TRUE;
      return;
    }
  if (sim_page_cache_start_writeback (w->pc, p->bdi, WB_FLUSH_BATCH_PAGES, SIM_TIME_NEVER,
                                      &w->flusher))
    sim_queue_unplug (p->bdi->q, &w->flusher);
  p->flusher_event = sim_schedule_in (sim, 0, flusher_step, w, object);
}

static void balance_step (WbPolicy *w, SimPageWrite *wr);

static void
pause_done (Sim *sim, gpointer subject, gpointer object)
{
  SimPageWrite *wr = object;
  wr->pause = 0;
  balance_step (subject, wr);
}

static PerBdiTask *
task_state (PerBdiData *g, const SimIoContext *ioc)
{
  PerBdiTask *task = g_hash_table_lookup (g->tasks, ioc);
  if (task == NULL)
    {
      task = g_new0 (PerBdiTask, 1);
      wb_prop_local_init (&task->dirties);
      g_hash_table_insert (g->tasks, (gpointer) ioc, task);
    }
  return task;
}

/* bdi_thresh lowered by task_dirty_limit for the writer @ioc. */
static guint64
task_bdi_thresh (WbPolicy *w, PerBdi *p, guint64 thresh, const SimIoContext *ioc)
{
  PerBdiData *g = w->priv;
  guint64 num, den;
  wb_prop_fraction (&g->dirties, &task_state (g, ioc)->dirties, &num, &den);
  return wb_task_dirty_limit (bdi_thresh (w, p, thresh), num, den);
}

/* The writer's device over its (task-adjusted) bdi_thresh: the loop's exit
 * test. */
static gboolean
over_bdi_thresh (WbPolicy *w, PerBdi *p, const SimIoContext *ioc)
{
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  return p->bdi->nr_dirty + p->bdi->nr_writeback > task_bdi_thresh (w, p, thresh, ioc);
}

/* One round of balance_dirty_pages (2.6.24–2.6.32); wr->step holds the
 * previous sleep in jiffies (for 2.6.33's back-off). */
static void
balance_step (WbPolicy *w, SimPageWrite *wr)
{
  PerBdiData *g = w->priv;
  PerBdi *p = per_bdi (w, wr->file->bdi);
  guint64 chunk = wb_write_chunk_pages (g->kver,
                                        wb_ratelimit_pages (sim_page_cache_max_pages (w->pc), 1),
                                        wr->dirtied);
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  gboolean throttle = wb_per_bdi_should_throttle (p->bdi->nr_dirty + p->bdi->nr_writeback,
                                                  task_bdi_thresh (w, p, thresh, wr->ioc),
                                                  global_nr (w),
                                                  bg, thresh);
  if (throttle && p->bdi->nr_dirty > 0 && wr->written < chunk)
    {
      sim_page_cache_throttle (w->pc, wr);
      guint64 n = sim_page_cache_start_writeback (w->pc, p->bdi, chunk - wr->written,
                                                  SIM_TIME_NEVER, wr->ioc);
      wr->written += n;
      if (n)
        sim_queue_unplug (wr->file->q, wr->ioc);
      throttle = over_bdi_thresh (w, p, wr->ioc);
    }
  if (!throttle || wr->written >= chunk)
    {
      wake_background (w, p);
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  guint64 jiffies = wb_per_bdi_pause_jiffies (g->kver, w->hz, (guint64) wr->step);
  wr->step = (gint) jiffies;
  wb_pause (w, wr, (SimTime) wb_jiffies_to_ns (jiffies, w->hz), pause_done);
}

static void
perbdi_dirtied (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  PerBdiData *g = w->priv;
  /* task_dirty_inc per page: the task's share of recent dirtying. */
  PerBdiTask *task = task_state (g, wr->ioc);
  for (guint64 i = 0; i < wr->dirtied; i++)
    wb_prop_inc (&g->dirties, &task->dirties);
  wr->step = 0;
  balance_step (w, wr);
}

/* __bdi_writeout_inc per completed page: a global and a local event. */
static void
perbdi_written (WbPolicy *w, SimBdi *bdi, guint64 pages, SimTime now_ns)
{
  PerBdiData *g = w->priv;
  PerBdi *p = per_bdi (w, bdi);
  if (p->flusher_blocked)
    {
      /* Its queue has room again: the blocked flusher goes on. */
      p->flusher_blocked = FALSE;
      p->flusher_event = sim_schedule_in (w->sim, 0, flusher_step, w,
                                          GUINT_TO_POINTER ((guint) (p - g->bdis)));
    }
  gboolean with_max = g->kver >= WB_KERNEL_VERSION (2, 6, 25);
  for (guint64 i = 0; i < pages; i++)
    {
      if (with_max)
        wb_prop_inc_max (&g->completions, &p->completions, g->max_ratio_pct);
      else
        wb_prop_inc (&g->completions, &p->completions);
    }
}

/* `kernel`: a version from 2.6.24 to 3.1. */
static gboolean
get_kernel (GKeyFile *kf, guint *kver, GError **error)
{
  g_autofree char *kernel = g_key_file_get_string (kf, "writeback", "kernel", NULL);
  if (kernel == NULL)
    return TRUE;
  g_strstrip (kernel);
  unsigned a, b, c = 0;
  char tail;
  int n = sscanf (kernel, "%u.%u.%u%c", &a, &b, &c, &tail);
  guint v = WB_KERNEL_VERSION (a, b, c);
  if ((n != 2 && n != 3) || a > 255 || b > 255 || c > 255
      || v < WB_KERNEL_VERSION (2, 6, 24) || v > WB_KERNEL_VERSION (3, 1, 255))
    {
      g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                   "[writeback] kernel: '%s' is not a version from 2.6.24 to 3.1 "
                   "(per-bdi-2.6.24 covers 2.6.24 to 3.1)", kernel);
      return FALSE;
    }
  *kver = v;
  return TRUE;
}

static gboolean
perbdi_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  PerBdiData *g = w->priv;
  static const char *const keys[] = { "policy", "kernel", "dirty_ratio", "dirty_background_ratio",
                                      "dirty_expire_centisecs", "dirty_writeback_centisecs",
                                      "min_ratio", "max_ratio", NULL };
  g->kver = WB_KERNEL_VERSION (2, 6, 24);
  g->min_ratio_pct = 0;
  g->max_ratio_pct = 100;
  gboolean have = kf && g_key_file_has_group (kf, "writeback");
  if (have)
    {
      g_auto (GStrv) present = g_key_file_get_keys (kf, "writeback", NULL, NULL);
      for (guint i = 0; present && present[i]; i++)
        if (!g_strv_contains (keys, present[i]))
          {
            g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                         "[writeback] %s: unknown key (kernel, dirty_ratio, dirty_background_ratio, "
                         "dirty_expire_centisecs, dirty_writeback_centisecs, min_ratio, max_ratio)",
                         present[i]);
            return FALSE;
          }
      if (!get_kernel (kf, &g->kver, error))
        return FALSE;
    }
  wb_dirty_tunables_init (&g->t, g->kver);
  if (have && (!wb_get_uint (kf, "dirty_ratio", &g->t.dirty_ratio_pct, 100, error)
               || !wb_get_uint (kf, "dirty_background_ratio", &g->t.dirty_background_ratio_pct, 100, error)
               || !wb_get_uint (kf, "dirty_expire_centisecs", &g->t.dirty_expire_centisecs, 1000000, error)
               || !wb_get_uint (kf, "dirty_writeback_centisecs", &g->t.dirty_writeback_centisecs, 1000000, error)
               || !wb_get_uint (kf, "min_ratio", &g->min_ratio_pct, 99, error)
               || !wb_get_uint (kf, "max_ratio", &g->max_ratio_pct, 100, error)))
    return FALSE;
  if (g->min_ratio_pct > g->max_ratio_pct)
    {
      g_set_error (error, WB_ERROR, WB_ERROR_RANGE,
                   "[writeback] min_ratio: %u is above max_ratio %u", g->min_ratio_pct,
                   g->max_ratio_pct);
      return FALSE;
    }
  /* page_writeback_init: the period follows the dirty limit at boot, with
   * all memory free. */
  guint64 max = sim_page_cache_max_pages (w->pc);
  WbMemInfo mem = { .total_pages = max, .free_pages = max };
  guint64 bg, thresh;
  wb_global_dirty_limits (g->kver, &g->t, &mem, FALSE, &bg, &thresh);
  wb_prop_global_init (&g->completions, wb_prop_period_shift (thresh));
  wb_prop_global_init (&g->dirties, wb_prop_period_shift (thresh));
  g->tasks = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  g->pdflush.limits = limits;
  wb_kupdate_start (w, &g->kupdate, &g->t, NULL);
  return TRUE;
}

static void
perbdi_exit (WbPolicy *w)
{
  PerBdiData *g = w->priv;
  wb_kupdate_stop (w, &g->kupdate);
  wb_pdflush_stop (w, &g->pdflush);
  for (guint i = 0; i < g->n_bdis; i++)
    if (g->bdis[i].flusher_event)
      sim_cancel (w->sim, g->bdis[i].flusher_event);
  g_clear_pointer (&g->tasks, g_hash_table_unref);
  g_clear_pointer (&g->bdis, g_free);
  g->n_bdis = 0;
}

const WbOps wb_perbdi_ops = {
  .name      = "per-bdi-2.6.24",
  .era       = "2.6.24-3.1",
  .summary   = "per-device dirty limits from writeback-completion proportions, "
               "writers throttled only when their own device is over its share",
  .priv_size = sizeof (PerBdiData),
  .flags     = WB_F_RECLAIM_PUTBACK,
  .init      = perbdi_init,
  .exit      = perbdi_exit,
  .dirtied   = perbdi_dirtied,
  .written   = perbdi_written,
  .limits    = perbdi_limits,
};
