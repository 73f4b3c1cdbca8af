/* wb.c — writeback policy registry and lifetime. */
#include "models/wb/wb.h"

#include <string.h>

static const WbOps *const registry[] = {
  &wb_none_ops,
  &wb_global_ops,
  &wb_bdflush_ops,
  &wb_bdflush_2_4_18_ops,
  &wb_perbdi_ops,
  &wb_ioless_ops,
  NULL
};

const WbOps *const *
wb_ops_all (void)
{
  for (guint i = 0; registry[i]; i++)
    g_assert (registry[i]->name && registry[i]->init && registry[i]->dirtied);
  return registry;
}

const WbOps *
wb_ops_lookup (const char *name)
{
  for (const WbOps *const *ops = wb_ops_all (); *ops; ops++)
    if (strcmp ((*ops)->name, name) == 0)
      return *ops;
  return NULL;
}

void
wb_pause (WbPolicy *w, SimPageWrite *wr, SimTime ns, SimEventFunc fn)
{
  SimBdi *b = wr->file->bdi;
  sim_page_cache_throttle (w->pc, wr);
  b->pauses++;
  b->pause_ns += ns;
  /* balance_dirty_pages: bdi->last_bdp_sleep = jiffies before the sleep
   * (6.18 mm/page-writeback.c), which blk-wbt's wb_recent_wait reads. */
  b->last_bdp_sleep_ns = sim_now (w->sim);
  b->max_pause_ns = MAX (b->max_pause_ns, ns);
  wr->pause_until_ns = sim_now (w->sim) + ns;
  wr->pause = sim_schedule_in (w->sim, ns, fn, w, wr);
}

gboolean
wb_pause_cut (WbPolicy *w, SimPageWrite *wr, SimEventFunc fn)
{
  if (wr->pause == 0)
    return FALSE;
  gboolean cancelled = sim_cancel (w->sim, wr->pause);
  g_assert (cancelled);
  SimTime now = sim_now (w->sim);
  g_assert (wr->pause_until_ns >= now);
  wr->file->bdi->pause_ns -= wr->pause_until_ns - now;
  wr->pause_until_ns = now;
  wr->pause = sim_schedule_in (w->sim, 0, fn, w, wr);
  return TRUE;
}

/* A device's counters at the previous sample. */
typedef struct {
  guint64 pauses;
  SimTime pause_ns;
  guint64 flusher_pages;
} WbBdiSample;

static void
sample_bdi (WbPolicy *w, SimTimeSeries *ts, SimBdi *b, WbBdiSample *last)
{
  const char *name = b->q->name;
  if (w->ops->limits)
    {
      guint64 bg = 0, thresh = 0;
      w->ops->limits (w, b, &bg, &thresh);
      if (thresh)
        sim_timeseries_row (ts, "bdi", name, "thresh_pages", (double) thresh);
    }
  sim_timeseries_row (ts, "bdi", name, "throttled_tasks", b->nr_throttled);
  sim_timeseries_row (ts, "bdi", name, "pauses", (double) (b->pauses - last->pauses));
  sim_timeseries_row (ts, "bdi", name, "pause_ms", (double) (b->pause_ns - last->pause_ns) / 1e6);
  sim_timeseries_row (ts, "bdi", name, "max_pause_ms", (double) b->max_pause_ns / 1e6);
  sim_timeseries_row (ts, "bdi", name, "flusher_pages",
                      (double) (b->flusher_pages - last->flusher_pages));
  last->pauses = b->pauses;
  last->pause_ns = b->pause_ns;
  last->flusher_pages = b->flusher_pages;
  b->max_pause_ns = 0;
}

static void
sample (gpointer data, SimTimeSeries *ts, double span_s)
{
  WbPolicy *w = data;
  sim_timeseries_row (ts, "writeback", "global", "dirty_pages",
                      (double) sim_page_cache_nr_dirty (w->pc));
  sim_timeseries_row (ts, "writeback", "global", "writeback_pages",
                      (double) sim_page_cache_nr_writeback (w->pc));
  if (w->ops->limits)
    {
      guint64 bg = 0, thresh = 0;
      w->ops->limits (w, NULL, &bg, &thresh);
      sim_timeseries_row (ts, "writeback", "global", "bg_thresh_pages", (double) bg);
      sim_timeseries_row (ts, "writeback", "global", "thresh_pages", (double) thresh);
    }
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  if (w->samples->len < bdis->len)
    g_array_set_size (w->samples, bdis->len);
  for (guint i = 0; i < bdis->len; i++)
    sample_bdi (w, ts, g_ptr_array_index (bdis, i), &g_array_index (w->samples, WbBdiSample, i));
}

void
wb_policy_add_timeseries (WbPolicy *w, SimTimeSeries *ts)
{
  g_assert (w->samples == NULL);
  w->samples = g_array_new (FALSE, TRUE, sizeof (WbBdiSample));
  sim_timeseries_add_probe (ts, sample, w);
}

gboolean
wb_get_uint (GKeyFile *kf, const char *key, guint *out, guint max, GError **error)
{
  g_autofree char *text = g_key_file_get_string (kf, "writeback", key, NULL);
  if (text == NULL)
    return TRUE;
  g_strstrip (text);
  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (end == text || *end != '\0' || v > max)
    {
      g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                   "[writeback] %s: '%s' is not a whole number up to %u", key, text, max);
      return FALSE;
    }
  *out = (guint) v;
  return TRUE;
}

gboolean
wb_flush (WbPolicy *w, SimTime before, guint64 target)
{
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  while (sim_page_cache_nr_dirty (w->pc) > target)
    {
      guint64 started = 0;
      gboolean all_congested = TRUE;
      for (guint i = 0; i < bdis->len; i++)
        {
          SimBdi *b = g_ptr_array_index (bdis, i);
          if (b->nr_dirty == 0 || sim_queue_write_congested (b->q))
            continue;
          all_congested = FALSE;
          guint64 n = sim_page_cache_start_writeback (w->pc, b, WB_FLUSH_BATCH_PAGES, before,
                                                      &w->flusher);
          if (n)
            sim_queue_unplug (b->q, &w->flusher);
          started += n;
        }
      if (started == 0)
        return !all_congested;
    }
  return TRUE;
}

/* ---- wb_flush on a flusher thread ---------------------------------------- */

gboolean
wb_policy_set_flusher_cpu (WbPolicy *w, const WbFlusherCpu *cpu)
{
  if (!(w->ops->flags & WB_F_FLUSHER_CPU))
    return FALSE;
  g_assert (cpu && cpu->run);
  w->flusher_cpu = cpu;
  return TRUE;
}

static void flush_run_step (WbFlushRun *f);

static void
flush_run_finish (WbFlushRun *f, gboolean progressed)
{
  f->busy = FALSE;
  f->done (f, progressed);
}

/* The thread has done the batch's pages: they go to the device, as many
 * as are still there (a throttled writer may have taken some of its own
 * device meanwhile). */
static void
flush_run_batch_done (gpointer data)
{
  WbFlushRun *f = data;
  WbPolicy *w = f->w;
  guint64 n = sim_page_cache_start_writeback (w->pc, f->bdi, f->pages, f->before, &w->flusher);
  if (n)
    sim_queue_unplug (f->bdi->q, &w->flusher);
  f->started += n;
  f->bdi = NULL;
  flush_run_step (f);
}

/* wb_flush's loop, one batch on the thread at a time. */
static void
flush_run_step (WbFlushRun *f)
{
  WbPolicy *w = f->w;
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  for (;;)
    {
      if (sim_page_cache_nr_dirty (w->pc) <= f->target)
        {
          flush_run_finish (f, TRUE);
          return;
        }
      while (f->next_bdi < bdis->len)
        {
          SimBdi *b = g_ptr_array_index (bdis, f->next_bdi++);
          if (b->nr_dirty == 0 || sim_queue_write_congested (b->q))
            continue;
          f->all_congested = FALSE;
          const SimFile *file = NULL;
          guint64 n = sim_page_cache_writeback_peek (w->pc, b, WB_FLUSH_BATCH_PAGES, f->before,
                                                     &file);
          if (n == 0)
            continue;
          f->bdi = b;
          f->pages = n;
          w->flusher_cpu->run (w->flusher_cpu->data, f->thread, b, file, n, flush_run_batch_done, f);
          return;
        }
      if (f->started == 0)
        {
          flush_run_finish (f, !f->all_congested);
          return;
        }
      f->next_bdi = 0;
      f->started = 0;
      f->all_congested = TRUE;
    }
}

/* wb_flush (w, @before, @target) on flusher thread @thread; @done when
 * it ends, with wb_flush's result. */
static void
flush_run_start (WbPolicy *w, WbFlushRun *f, guint thread, SimTime before, guint64 target,
                 void (*done) (WbFlushRun *f, gboolean progressed))
{
  g_assert (!f->busy && w->flusher_cpu && thread < WB_N_FLUSHERS);
  f->w = w;
  f->thread = thread;
  f->busy = TRUE;
  f->before = before;
  f->target = target;
  f->next_bdi = 0;
  f->started = 0;
  f->all_congested = TRUE;
  f->bdi = NULL;
  f->done = done;
  flush_run_step (f);
}

/* ---- kupdate and pdflush, shared by the 2.6 eras ----------------------- */

static SimTime
centisecs_ns (guint centisecs)
{
  return (SimTime) centisecs * 10 * SIM_NS_PER_MS;
}

static void kupdate_step (Sim *sim, gpointer subject, gpointer object);

/* The end of wb_kupdate on its thread (2.6.9 mm/page-writeback.c): the
 * timer is re-armed for dirty_writeback_centisecs after the run's start,
 * or one second from now if the run took longer ("if (time_before(next_jif,
 * jiffies + HZ)) next_jif = jiffies + HZ"). */
static void
kupdate_run_done (WbFlushRun *f, gboolean progressed)
{
  WbKupdate *k = sim_container_of (f, WbKupdate, run);
  WbPolicy *w = f->w;
  SimTime now = sim_now (w->sim);
  SimTime next = k->start_ns + centisecs_ns (k->t->dirty_writeback_centisecs);
  next = MAX (next, now + SIM_NS_PER_S);
  if (k->t->dirty_writeback_centisecs > 0
      && (sim_events_pending (w->sim) > 0 || sim_page_cache_nr_dirty (w->pc) > 0))
    k->event = sim_schedule_at (w->sim, next, kupdate_step, w, k);
}

static void
kupdate_step (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  WbKupdate *k = object;
  SimTime now = sim_now (sim);
  SimTime expire = centisecs_ns (k->t->dirty_expire_centisecs);
  if (w->flusher_cpu && k->flush == NULL && now >= expire)
    {
      /* On a pdflush thread; the run re-arms the timer when it ends. */
      k->event = 0;
      k->start_ns = now;
      flush_run_start (w, &k->run, WB_FLUSHER_KUPDATE, now - expire, 0, kupdate_run_done);
      return;
    }
  if (now >= expire)
    {
      if (k->flush)
        k->flush (w, now - expire);
      else
        wb_flush (w, now - expire, 0);
    }
  k->event = 0;
  /* Keep the timer only while something else goes on. */
  if (sim_events_pending (sim) > 0 || sim_page_cache_nr_dirty (w->pc) > 0)
    k->event = sim_schedule_in (sim, centisecs_ns (k->t->dirty_writeback_centisecs), kupdate_step,
                                w, k);
}

void
wb_kupdate_start (WbPolicy *w, WbKupdate *k, const WbDirtyTunables *t, WbFlushOld flush)
{
  k->t = t;
  k->flush = flush;
  k->event = 0;
  if (t->dirty_writeback_centisecs > 0)
    k->event = sim_schedule_in (w->sim, centisecs_ns (t->dirty_writeback_centisecs), kupdate_step,
                                w, k);
}

void
wb_kupdate_stop (WbPolicy *w, WbKupdate *k)
{
  if (k->event)
    sim_cancel (w->sim, k->event);
  k->event = 0;
}

static void pdflush_step (Sim *sim, gpointer subject, gpointer object);

/* After a pass of background_writeout on its thread: done below the
 * background threshold, else congestion_wait and another pass. */
static void
pdflush_pass_done (WbPolicy *w, WbPdflush *p)
{
  guint64 bg, thresh;
  p->limits (w, &bg, &thresh);
  if (sim_page_cache_nr_dirty (w->pc) <= bg)
    {
      p->running = FALSE;
      return;
    }
  p->event = sim_schedule_in (w->sim, WB_CONGESTION_WAIT_NS, pdflush_step, w, p);
}

static void
pdflush_run_done (WbFlushRun *f, gboolean progressed)
{
  pdflush_pass_done (f->w, sim_container_of (f, WbPdflush, run));
}

static void
pdflush_step (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  WbPdflush *p = object;
  guint64 bg, thresh;
  p->event = 0;
  p->limits (w, &bg, &thresh);
  if (w->flusher_cpu)
    {
      flush_run_start (w, &p->run, WB_FLUSHER_BACKGROUND, SIM_TIME_NEVER, bg, pdflush_run_done);
      return;
    }
  wb_flush (w, SIM_TIME_NEVER, bg);
  if (sim_page_cache_nr_dirty (w->pc) <= bg)
    {
      p->running = FALSE;
      return;
    }
  p->event = sim_schedule_in (sim, WB_CONGESTION_WAIT_NS, pdflush_step, w, p);
}

void
wb_pdflush_wake (WbPolicy *w, WbPdflush *p)
{
  guint64 bg, thresh;
  p->limits (w, &bg, &thresh);
  if (p->running || sim_page_cache_nr_dirty (w->pc) <= bg)
    return;
  p->running = TRUE;
  p->event = sim_schedule_in (w->sim, 0, pdflush_step, w, p);
}

void
wb_pdflush_stop (WbPolicy *w, WbPdflush *p)
{
  if (p->event)
    sim_cancel (w->sim, p->event);
  p->event = 0;
}
