/* wb-global.c — "global-2.6": writeback before per-BDI limits (2.6.x up to
 * 2.6.23; ../shared/reference/kernel-algorithms.md §7.2).
 *
 *  - one global pair of thresholds from dirty_ratio and
 *    dirty_background_ratio over dirtyable memory (wb-limits.c, era from
 *    the `kernel` tunable, default 2.6.20 with its 40/10 defaults);
 *  - balance_dirty_pages: a writer over the dirty threshold writes back up
 *    to write_chunk pages of its own device itself, then sleeps in
 *    congestion_wait (100 ms) and looks again, until the dirty + writeback
 *    count is under the threshold or it has written its chunk;
 *  - pdflush background writeback once dirty pages pass the background
 *    threshold, oldest pages first across devices, skipping congested
 *    queues (nonblocking), sleeping 100 ms when all are congested;
 *  - kupdate every dirty_writeback_centisecs writes pages older than
 *    dirty_expire_centisecs;
 *  - a throttled writer's congestion_wait sleep (blk_congestion_wait in
 *    2.6.9 drivers/block/ll_rw_blk.c: "Waits for up to @timeout jiffies
 *    for a queue (any queue) to exit congestion") ends early when any
 *    device's queue frees a write request below its congestion-off
 *    threshold: freed_request -> clear_queue_congested ->
 *    wake_up(&congestion_wqh[WRITE]), one wait queue for the machine, so
 *    every sleeping writer wakes and makes another pass, on its CPU when
 *    it has one (sim_page_cache_write_pass).
 * With the host model and a profile with a writeback path
 * (host_start_flushers), background writeout and kupdate run on two
 * pdflush threads on the host's CPUs (2.6.9 mm/pdflush.c hands each
 * operation to an idle thread of its pool), each batch of a device
 * submitted once its thread has run that path for the batch's pages
 * (WB_F_FLUSHER_CPU); without, their work takes no simulated time.
 * Simplified: balance_dirty_pages runs once per write() call instead of
 * every ratelimit pages; no inode ordering (pages of a device are written
 * in the order they were dirtied); a batch checks its queue's congestion
 * before its work, not per page (mpage_writepages' bdi_write_congested).
 */
#include "models/wb/wb.h"
#include "models/wb/wb-limits.h"
#include "sim/sim-units.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  WbDirtyTunables t;
  guint           kver;
  WbPdflush       pdflush;
  WbKupdate       kupdate;
  SimList         sleepers;      /* SimPageWrite.wait_link: in congestion_wait */
} GlobalData;


static void
limits (WbPolicy *w, guint64 *bg, guint64 *thresh)
{
  GlobalData *g = w->priv;
  guint64 max = sim_page_cache_max_pages (w->pc);
  guint64 used = sim_page_cache_pages (w->pc);
  WbMemInfo mem = { .total_pages = max, .free_pages = max - used, .reclaimable_pages = used };
  wb_global_dirty_limits (g->kver, &g->t, &mem, FALSE, bg, thresh);
}

static void
wake_background (WbPolicy *w)
{
  GlobalData *g = w->priv;
  wb_pdflush_wake (w, &g->pdflush);
}

static void balance_step (WbPolicy *w, SimPageWrite *wr);

static void
balance_pass (gpointer policy, SimPageWrite *wr)
{
  balance_step (policy, wr);
}

static void
pause_done (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  SimPageWrite *wr = object;
  wr->pause = 0;
  sim_list_del (&wr->wait_link);
  sim_list_init (&wr->wait_link);
  sim_page_cache_write_pass (w->pc, wr, balance_pass, w);
}

/* wake_up(&congestion_wqh[WRITE]): every sleeping writer. */
static void
congestion_wake (gpointer data)
{
  WbPolicy *w = data;
  GlobalData *g = w->priv;
  guint woken = 0;
  for (SimList *l = g->sleepers.next; l != &g->sleepers; l = l->next)
    {
      SimPageWrite *wr = sim_container_of (l, SimPageWrite, wait_link);
      if (wr->pause_until_ns > sim_now (w->sim))
        woken += wb_pause_cut (w, wr, pause_done);
    }
  if (woken)
    sim_page_cache_congestion_woken (w->pc, woken);
}

/* balance_dirty_pages of 2.6.20. */
static void
balance_step (WbPolicy *w, SimPageWrite *wr)
{
  GlobalData *g = w->priv;
  guint64 bg, thresh;
  limits (w, &bg, &thresh);
  guint64 nr = sim_page_cache_nr_dirty (w->pc) + sim_page_cache_nr_writeback (w->pc);
  guint64 chunk = wb_write_chunk_pages (g->kver,
                                        wb_ratelimit_pages (sim_page_cache_max_pages (w->pc), 1),
                                        wr->dirtied);
  if (nr > thresh && wr->written < chunk)
    {
      sim_page_cache_throttle (w->pc, wr);
      guint64 n = sim_page_cache_start_writeback (w->pc, wr->file->bdi, chunk - wr->written,
                                                  SIM_TIME_NEVER, wr->ioc);
      wr->written += n;
      if (n)
        sim_queue_unplug (wr->file->q, wr->ioc);
      nr = sim_page_cache_nr_dirty (w->pc) + sim_page_cache_nr_writeback (w->pc);
    }
  if (nr <= thresh || wr->written >= chunk)
    {
      wake_background (w);
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  wb_pause (w, wr, WB_CONGESTION_WAIT_NS, pause_done);
  sim_list_add_tail (&wr->wait_link, &g->sleepers);
}

/* One global limit; no per-device ones. */
static void
global_limits (WbPolicy *w, const SimBdi *bdi, guint64 *bg, guint64 *thresh)
{
  if (bdi == NULL)
    limits (w, bg, thresh);
}

static void
global_dirtied (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  balance_step (w, wr);
}

static gboolean
global_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  GlobalData *g = w->priv;
  static const char *const keys[] = { "policy", "kernel", "dirty_ratio", "dirty_background_ratio",
                                      "dirty_expire_centisecs", "dirty_writeback_centisecs", NULL };
  g->kver = WB_KERNEL_VERSION (2, 6, 20);
  if (kf && g_key_file_has_group (kf, "writeback"))
    {
      g_auto (GStrv) present = g_key_file_get_keys (kf, "writeback", NULL, NULL);
      for (guint i = 0; present && present[i]; i++)
        if (!g_strv_contains (keys, present[i]))
          {
            g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                         "[writeback] %s: unknown key (kernel, dirty_ratio, dirty_background_ratio, "
                         "dirty_expire_centisecs, dirty_writeback_centisecs)", present[i]);
            return FALSE;
          }
      g_autofree char *kernel = g_key_file_get_string (kf, "writeback", "kernel", NULL);
      unsigned a, b, c;
      if (kernel && (sscanf (kernel, "%u.%u.%u", &a, &b, &c) != 3 || a != 2 || b != 6 || c >= 24))
        {
          g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                       "[writeback] kernel: '%s' is not a 2.6 version before 2.6.24 "
                       "(global-2.6 covers 2.6.0 to 2.6.23)", kernel);
          return FALSE;
        }
      if (kernel)
        g->kver = WB_KERNEL_VERSION (a, b, c);
    }
  wb_dirty_tunables_init (&g->t, g->kver);
  if (kf && (!wb_get_uint (kf, "dirty_ratio", &g->t.dirty_ratio_pct, 100, error)
             || !wb_get_uint (kf, "dirty_background_ratio", &g->t.dirty_background_ratio_pct, 100, error)
             || !wb_get_uint (kf, "dirty_expire_centisecs", &g->t.dirty_expire_centisecs, 1000000, error)
             || !wb_get_uint (kf, "dirty_writeback_centisecs", &g->t.dirty_writeback_centisecs, 1000000, error)))
    return FALSE;
  g->pdflush.limits = limits;
  sim_list_init (&g->sleepers);
  sim_page_cache_set_congestion_wake (w->pc, congestion_wake, w);
  wb_kupdate_start (w, &g->kupdate, &g->t, NULL);
  return TRUE;
}

static void
global_exit (WbPolicy *w)
{
  GlobalData *g = w->priv;
  wb_kupdate_stop (w, &g->kupdate);
  wb_pdflush_stop (w, &g->pdflush);
  sim_page_cache_set_congestion_wake (w->pc, NULL, NULL);
}

const WbOps wb_global_ops = {
  .name      = "global-2.6",
  .era       = "2.6.0-2.6.23",
  .summary   = "global dirty thresholds, writers write back their device inline, pdflush, kupdate",
  .priv_size = sizeof (GlobalData),
  .flags     = WB_F_FLUSHER_CPU | WB_F_RECLAIM_PUTBACK,
  .init      = global_init,
  .exit      = global_exit,
  .dirtied   = global_dirtied,
  .limits    = global_limits,
};
