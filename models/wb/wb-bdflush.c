/* wb-bdflush.c — writeback of Linux 2.4 (fs/buffer.c; ../shared/reference/
 * kernel-algorithms.md §7.1), in two eras:
 *
 * "bdflush-2.4": 2.4.19-pre5 to 2.4.27, after the "-aa writeout
 * scheduling changes" (Andrea Arcangeli's, split by Andrew Morton as
 * aa-020-sync_buffers and aa-030-writeout_scheduling, LKML 19 Mar 2002,
 * merged in 2.4.19-pre5):
 *  - one global dirty LRU across devices: every writeback takes the oldest
 *    dirty pages whatever their device (sim_page_cache_start_writeback with
 *    no BDI);
 *  - the nine /proc/sys/vm/bdflush parameters, from the [writeback] key
 *    `bdflush` written as users wrote the tuple (2.4.27 defaults; a shorter
 *    tuple sets only its leading fields, as the sysctl does);
 *  - balance_dirty after each write(): above nfract wake bdflush; above
 *    nfract_sync the writer also writes a batch (ndirty pages) of the
 *    oldest pages itself, of any device, and waits for it, then looks
 *    again (2.4.27 writes 32 buffers and is throttled only by sleeping on
 *    full queues; waiting for the batch stands for that here);
 *  - bdflush writes 32-page batches, ndirty pages per cycle, until dirty
 *    pages fall to nfract_stop_bdflush.  A submission to a full request
 *    queue sleeps in get_request_wait: once bios of a batch find a
 *    queue's write pool exhausted (they park), bdflush (and kupdated)
 *    sleeps until they have requests, handed out in the era's order among
 *    the other sleepers' (a task's reclaim writes, a throttled writer's
 *    batch), even when other devices have dirty pages and idle queues,
 *    the pathology pdflush was written to fix (2.4.18 drivers/block/
 *    ll_rw_blk.c __get_request_wait loops until get_request gives the
 *    sleeper a request of its own).  The two threads share one I/O
 *    identity here, so either sleeps while the other's bios wait;
 *  - kupdated every `interval` jiffies writes the pages older than
 *    `age_buffer`, blocking on full queues the same way;
 *  - an allocating task writes the dirty pages it meets a second time and
 *    waits on any page under writeback it meets a second time (aa-020:
 *    try_to_free_buffers throttles on bdflush's writes too;
 *    SIM_RECLAIM_LAUNDER_ALL).
 *
 * "bdflush-2.4.18": 2.4.17-pre2 to 2.4.19-pre4 (the "-" side of those two
 * patches):
 *  - bdf_prm {40, 0, 0, 0, 5 HZ, 30 HZ, 60, 0, 0}: no ndirty, no
 *    nfract_stop_bdflush;
 *  - balance_dirty_state counts dirty and locked buffers (BUF_DIRTY +
 *    BUF_LOCKED, added in 2.4.17-pre2), i.e. pages dirty or under
 *    writeback;
 *  - balance_dirty, once per page a write dirties (__block_commit_write):
 *    above nfract the writer writes one batch of 32 of the oldest dirty
 *    pages (write_some_buffers), sleeping in get_request_wait if their
 *    queue has no free request; above nfract_sync it then waits for one
 *    locked buffer (wait_for_some_buffers: the first on BUF_LOCKED; here
 *    the next page whose writeback ends) and wakes bdflush;
 *  - bdflush writes 32-page batches until dirty and locked pages are back
 *    at nfract;
 *  - an allocating task writes the dirty pages it meets a second time
 *    (sync_page_buffers) and waits only on buffers reclaim wrote
 *    (BH_launder); pages under the flusher's writeback it passes over,
 *    to the head of the list (SIM_RECLAIM_LAUNDER_OWN).
 *
 * Simplified: pages stand for buffers; bdflush-2.4 runs balance_dirty once
 * per write() call; its synchronous writer waits for all writeback in
 * flight when it submitted its batch (which ends with its own batch)
 * rather than for its own buffers one by one; kupdated does not sync
 * inodes or superblocks; 2.4.18's bdflush and kupdated do not wait for a
 * buffer before they sleep.
 */
#include "models/wb/wb.h"
#include "models/wb/wb-limits.h"

#include <string.h>

/* A flushing thread (bdflush or kupdated). */
typedef struct {
  gboolean   running;
  gboolean   in_request_wait; /* sleeping in get_request_wait: some of its
                              * bios wait for requests of full queues */
  gboolean   wait_any;       /* every dirty page is already under writeback */
  SimEventId event;
  SimTime    before;         /* write pages dirtied at or before this */
  guint64    cycle_left;     /* bdflush: pages left in this ndirty cycle */
} Flusher;

typedef struct {
  WbBdflushParams p;
  gboolean        pre_aa;    /* bdflush-2.4.18: before the -aa writeout changes */
  Flusher         bdflush;
  Flusher         kupdated;
  SimEventId      kupdate_timer;
  GArray         *snap;      /* guint64 per BDI: nr_writeback before a batch */
} BdflushData;

static void flusher_step (Sim *sim, gpointer subject, gpointer object);

static guint64
total_pages (WbPolicy *w)
{
  /* nr_free_buffer_pages: cache + free, i.e. all of memory here. */
  return sim_page_cache_max_pages (w->pc);
}

/* What balance_dirty_state counts: dirty buffers, and in 2.4.18 the
 * locked (under writeback) ones too. */
static guint64
counted_dirty (WbPolicy *w)
{
  BdflushData *d = w->priv;
  guint64 dirty = sim_page_cache_nr_dirty (w->pc);
  return d->pre_aa ? dirty + sim_page_cache_nr_writeback (w->pc) : dirty;
}

static WbBdflushState
dirty_state (WbPolicy *w)
{
  BdflushData *d = w->priv;
  return wb_bdflush_balance_state (&d->p, counted_dirty (w), total_pages (w), FALSE);
}

static guint64
batch_pages (const BdflushData *d)
{
  return d->p.ndirty_buffers > 0 ? (guint64) d->p.ndirty_buffers : WB_BDFLUSH_BATCH_BUFFERS;
}

/* Start one batch of the oldest pages dirtied at or before @before and
 * unplug the queues it went to; returns the pages started.  Its bios that
 * found a pool exhausted park, counted in @ioc's parked_writes (the
 * submitter sleeps in get_request_wait). */
static guint64
write_some (WbPolicy *w, guint64 max_pages, SimTime before, const SimIoContext *ioc)
{
  BdflushData *d = w->priv;
  GPtrArray *bdis = sim_page_cache_bdis (w->pc);
  if (d->snap->len < bdis->len)
    g_array_set_size (d->snap, bdis->len);
  guint64 *snap = (guint64 *) (void *) d->snap->data;
  for (guint i = 0; i < bdis->len; i++)
    snap[i] = ((SimBdi *) g_ptr_array_index (bdis, i))->nr_writeback;
  guint64 started = sim_page_cache_start_writeback (w->pc, NULL, max_pages, before, ioc);
  for (guint i = 0; i < bdis->len; i++)
    {
      SimBdi *b = g_ptr_array_index (bdis, i);
      if (b->nr_writeback > snap[i])
        sim_queue_unplug (b->q, ioc);
    }
  return started;
}

/* 2.4.18 bdflush stops once balance_dirty_state is below nfract; later
 * eras at nfract_stop_bdflush (bdflush_stop). */
static gboolean
bdflush_done (WbPolicy *w)
{
  BdflushData *d = w->priv;
  if (d->pre_aa)
    return dirty_state (w) == WB_BDFLUSH_STATE_NONE;
  return wb_bdflush_should_stop (&d->p, sim_page_cache_nr_dirty (w->pc), total_pages (w));
}

/* Runs @f until it is done or must sleep; returns with f->running FALSE
 * when done. */
static void
flusher_run (WbPolicy *w, Flusher *f)
{
  BdflushData *d = w->priv;
  gboolean is_bdflush = f == &d->bdflush;
  for (;;)
    {
      if (sim_page_cache_nr_dirty (w->pc) == 0 || (is_bdflush && bdflush_done (w)))
        {
          f->running = FALSE;
          return;
        }
      if (is_bdflush && f->cycle_left == 0)
        {
          /* End of an ndirty cycle: run tq_disk, look again from a fresh
           * event so that one wake-up never loops unboundedly. */
          f->cycle_left = batch_pages (d);
          f->event = sim_schedule_in (w->sim, 0, flusher_step, w, f);
          return;
        }
      guint64 want = WB_BDFLUSH_BATCH_BUFFERS;
      if (is_bdflush)
        want = MIN (want, f->cycle_left);
      guint64 started = write_some (w, want, f->before, &w->flusher);
      if (is_bdflush)
        f->cycle_left -= MIN (f->cycle_left, started);
      if (w->flusher.parked_writes > 0)
        {
          f->in_request_wait = TRUE;
          return;
        }
      if (started == 0)
        {
          /* kupdated: nothing old enough is left.  bdflush: the dirty
           * pages left are all being written already; wait for one. */
          if (!is_bdflush || sim_page_cache_nr_writeback (w->pc) == 0)
            {
              f->running = FALSE;
              return;
            }
          f->wait_any = TRUE;
          return;
        }
    }
}

static void
flusher_step (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  Flusher *f = object;
  f->event = 0;
  /* get_request_wait returns once the flusher's own bios got requests
   * (the era's pool hands freed requests to the sleepers in its own
   * order); other tasks' bios still waiting do not keep it asleep. */
  if (f->in_request_wait && w->flusher.parked_writes > 0)
    return;
  f->in_request_wait = FALSE;
  flusher_run (w, f);
}

/* wakeup_bdflush */
static void
wake_bdflush (WbPolicy *w)
{
  BdflushData *d = w->priv;
  Flusher *f = &d->bdflush;
  if (f->running)
    return;
  f->running = TRUE;
  f->before = SIM_TIME_NEVER;
  f->cycle_left = batch_pages (d);
  f->event = sim_schedule_in (w->sim, 0, flusher_step, w, f);
}

static void
kupdate_tick (Sim *sim, gpointer subject, gpointer object)
{
  WbPolicy *w = subject;
  BdflushData *d = w->priv;
  Flusher *f = &d->kupdated;
  SimTime now = sim_now (sim);
  SimTime age = wb_jiffies_to_ns ((guint64) d->p.age_buffer_jiffies, w->hz);
  d->kupdate_timer = 0;
  if (!f->running && now >= age)
    {
      f->running = TRUE;
      f->before = now - age;
      flusher_run (w, f);
    }
  /* Keep the timer only while something else goes on. */
  if (sim_events_pending (sim) > 0 || sim_page_cache_nr_dirty (w->pc) > 0)
    d->kupdate_timer = sim_schedule_in (sim, wb_jiffies_to_ns ((guint64) d->p.interval_jiffies, w->hz),
                                        kupdate_tick, w, NULL);
}

/* A write completed: wake a flusher waiting for a request (its bios may
 * wait on any queue its batch went to) or for any write. */
static void
flusher_written (WbPolicy *w, Flusher *f)
{
  if (!f->running || f->event != 0)
    return;
  if (f->in_request_wait || f->wait_any)
    {
      f->wait_any = FALSE;
      f->event = sim_schedule_in (w->sim, 0, flusher_step, w, f);
    }
}

static void
bdflush_written (WbPolicy *w, SimBdi *bdi, guint64 pages, SimTime now_ns)
{
  BdflushData *d = w->priv;
  flusher_written (w, &d->bdflush);
  flusher_written (w, &d->kupdated);
}

/* A synchronous writer keeps in wr->written the page cache's completion
 * count at which everything in flight after its batch has been written. */
static guint64
completions (WbPolicy *w)
{
  return sim_page_cache_stats (w->pc)->written;
}

/* balance_dirty (2.4.27), repeated while the writer stays above nfract_sync. */
static void
balance (WbPolicy *w, SimPageWrite *wr)
{
  BdflushData *d = w->priv;
  WbBdflushState state = wb_bdflush_balance_state (&d->p, sim_page_cache_nr_dirty (w->pc),
                                                   total_pages (w), FALSE);
  if (state == WB_BDFLUSH_STATE_NONE)
    {
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  wake_bdflush (w);
  if (state == WB_BDFLUSH_STATE_WAKE)
    {
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  sim_page_cache_throttle (w->pc, wr);
  write_some (w, batch_pages (d), SIM_TIME_NEVER, wr->ioc);
  if (sim_page_cache_nr_writeback (w->pc) == 0)
    {
      /* Nothing could be written: nothing to wait for either. */
      sim_page_cache_write_finish (w->pc, wr);
      return;
    }
  wr->written = completions (w) + sim_page_cache_nr_writeback (w->pc);
  wr->step = 1;
  sim_page_cache_wait_writeback (w->pc, wr);
}

/* ---- 2.4.18's balance_dirty ------------------------------------------------
 * wr->step while the writer sleeps:
 *   2  in get_request_wait (its batch's bios wait for requests);
 *   3  the same, then wait_for_some_buffers (it was above nfract_sync);
 *   4  in wait_for_some_buffers until the completion count reaches
 *      wr->written. */

/* get_request_wait is over: the writer's own write bios all got
 * requests. */
static gboolean
request_wait_over (const SimPageWrite *wr)
{
  return wr->ioc->parked_writes == 0;
}

static void
sleep_2_4_18 (WbPolicy *w, SimPageWrite *wr, gint step, guint64 arg)
{
  wr->step = step;
  wr->written = arg;
  sim_page_cache_wait_writeback (w->pc, wr);
}

/* wait_for_some_buffers: FALSE when nothing is under writeback. */
static gboolean
wait_some_2_4_18 (WbPolicy *w, SimPageWrite *wr)
{
  if (sim_page_cache_nr_writeback (w->pc) == 0)
    return FALSE;
  sleep_2_4_18 (w, wr, 4, completions (w) + 1);
  return TRUE;
}

/* balance_dirty for each page the write dirtied, until one must sleep. */
static void
balance_2_4_18 (WbPolicy *w, SimPageWrite *wr)
{
  while (wr->balance_left > 0)
    {
      WbBdflushState state = dirty_state (w);
      if (state == WB_BDFLUSH_STATE_NONE)
        break;
      wr->balance_left--;
      write_some (w, WB_BDFLUSH_BATCH_BUFFERS, SIM_TIME_NEVER, wr->ioc);
      if (state == WB_BDFLUSH_STATE_SYNC)
        wake_bdflush (w);
      if (!request_wait_over (wr))
        {
          sleep_2_4_18 (w, wr, state == WB_BDFLUSH_STATE_SYNC ? 3 : 2, 0);
          return;
        }
      if (state == WB_BDFLUSH_STATE_SYNC && wait_some_2_4_18 (w, wr))
        return;
    }
  wr->step = 0;
  sim_page_cache_write_finish (w->pc, wr);
}

static void
resume_2_4_18 (WbPolicy *w, SimPageWrite *wr)
{
  if (wr->step == 2 || wr->step == 3)
    {
      if (!request_wait_over (wr))
        {
          sim_page_cache_wait_writeback (w->pc, wr);
          return;
        }
      if (wr->step == 3 && wait_some_2_4_18 (w, wr))
        return;
    }
  else
    {
      g_assert (wr->step == 4);
      if (completions (w) < wr->written)
        {
          sim_page_cache_wait_writeback (w->pc, wr);
          return;
        }
    }
  balance_2_4_18 (w, wr);
}

/* nfract (bdflush wakes) and nfract_sync (writers write) of cache+free. */
static void
bdflush_limits (WbPolicy *w, const SimBdi *bdi, guint64 *bg, guint64 *thresh)
{
  BdflushData *d = w->priv;
  if (bdi != NULL)
    return;
  *bg = total_pages (w) * (guint64) d->p.nfract_pct / 100;
  *thresh = total_pages (w) * (guint64) d->p.nfract_sync_pct / 100;
}

static void
bdflush_dirtied (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  BdflushData *d = w->priv;
  wr->step = 0;
  if (d->pre_aa)
    {
      wr->balance_left = wr->dirtied;
      balance_2_4_18 (w, wr);
      return;
    }
  balance (w, wr);
}

static void
bdflush_resume (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  BdflushData *d = w->priv;
  if (d->pre_aa)
    {
      resume_2_4_18 (w, wr);
      return;
    }
  g_assert (wr->step == 1);
  if (completions (w) < wr->written)
    {
      sim_page_cache_wait_writeback (w->pc, wr);
      return;
    }
  wr->step = 0;
  balance (w, wr);
}

static gboolean
bdflush_setup (WbPolicy *w, GKeyFile *kf, GError **error)
{
  BdflushData *d = w->priv;
  static const char *const keys[] = { "policy", "bdflush", NULL };
  if (kf && g_key_file_has_group (kf, "writeback"))
    {
      g_auto (GStrv) present = g_key_file_get_keys (kf, "writeback", NULL, NULL);
      for (guint i = 0; present && present[i]; i++)
        if (!g_strv_contains (keys, present[i]))
          {
            g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                         "[writeback] %s: unknown key (%s takes bdflush = \"the nine "
                         "values of /proc/sys/vm/bdflush\")", present[i], w->ops->name);
            return FALSE;
          }
      g_autofree char *text = g_key_file_get_string (kf, "writeback", "bdflush", NULL);
      if (text)
        {
          /* Accept the tuple quoted, as it is usually written. */
          g_strstrip (text);
          gsize len = strlen (text);
          if (len >= 2 && text[0] == '"' && text[len - 1] == '"')
            {
              text[len - 1] = '\0';
              memmove (text, text + 1, len - 1);
            }
          GError *local = NULL;
          if (!wb_bdflush_params_parse (text, &d->p, &local))
            {
              g_propagate_prefixed_error (error, local, "[writeback] ");
              return FALSE;
            }
        }
    }
  d->snap = g_array_new (FALSE, TRUE, sizeof (guint64));
  if (d->p.interval_jiffies > 0)
    d->kupdate_timer = sim_schedule_in (w->sim, wb_jiffies_to_ns ((guint64) d->p.interval_jiffies, w->hz),
                                        kupdate_tick, w, NULL);
  return TRUE;
}

static gboolean
bdflush_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  BdflushData *d = w->priv;
  wb_bdflush_params_init_2_4_27 (&d->p, w->hz);
  return bdflush_setup (w, kf, error);
}

static gboolean
bdflush_2_4_18_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  BdflushData *d = w->priv;
  d->pre_aa = TRUE;
  wb_bdflush_params_init_2_4_18 (&d->p, w->hz);
  return bdflush_setup (w, kf, error);
}

static void
bdflush_exit (WbPolicy *w)
{
  BdflushData *d = w->priv;
  if (d->kupdate_timer)
    sim_cancel (w->sim, d->kupdate_timer);
  if (d->bdflush.event)
    sim_cancel (w->sim, d->bdflush.event);
  if (d->kupdated.event)
    sim_cancel (w->sim, d->kupdated.event);
  if (d->snap)
    g_array_unref (d->snap);
}

const WbOps wb_bdflush_ops = {
  .name      = "bdflush-2.4",
  .era       = "2.4.19-pre5-2.4.x",
  .summary   = "one global dirty LRU, bdflush and kupdated that block on a full request queue",
  .priv_size = sizeof (BdflushData),
  .flags     = WB_F_RECLAIM_LAUNDER | WB_F_RECLAIM_WAIT_ALL,
  .init      = bdflush_init,
  .exit      = bdflush_exit,
  .dirtied   = bdflush_dirtied,
  .resume    = bdflush_resume,
  .written   = bdflush_written,
  .limits    = bdflush_limits,
};

const WbOps wb_bdflush_2_4_18_ops = {
  .name      = "bdflush-2.4.18",
  .era       = "2.4.17-2.4.19-pre4",
  .summary   = "bdflush-2.4 before the -aa writeout changes: dirty and locked buffers "
               "counted, writers write and wait per page, allocators wait only on their own writes",
  .priv_size = sizeof (BdflushData),
  .flags     = WB_F_RECLAIM_LAUNDER,
  .init      = bdflush_2_4_18_init,
  .exit      = bdflush_exit,
  .dirtied   = bdflush_dirtied,
  .resume    = bdflush_resume,
  .written   = bdflush_written,
  .limits    = bdflush_limits,
};
