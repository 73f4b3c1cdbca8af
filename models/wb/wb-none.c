/* wb-none.c — no write-back caching: a buffered write goes to the device
 * at once and write() returns when its pages are clean (write-through).
 * The trivial member of the writeback family. */
#include "models/wb/wb.h"

/* No tunables: a [writeback] group belongs to the other eras a scenario
 * compares this one with. */
static gboolean
none_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  return TRUE;
}

static void
none_check (WbPolicy *w, SimPageWrite *wr)
{
  if (sim_page_cache_write_clean (w->pc, wr))
    sim_page_cache_write_finish (w->pc, wr);
  else
    sim_page_cache_wait_writeback (w->pc, wr);
}

static void
none_dirtied (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  sim_page_cache_start_writeback (w->pc, wr->file->bdi, G_MAXUINT64, SIM_TIME_NEVER, wr->ioc);
  sim_queue_unplug (wr->file->q, wr->ioc);
  none_check (w, wr);
}

static void
none_resume (WbPolicy *w, SimPageWrite *wr, SimTime now_ns)
{
  /* Pages redirtied meanwhile by another writer are written again. */
  sim_page_cache_start_writeback (w->pc, wr->file->bdi, G_MAXUINT64, SIM_TIME_NEVER, wr->ioc);
  none_check (w, wr);
}

const WbOps wb_none_ops = {
  .name     = "none",
  .era      = "-",
  .summary  = "write-through: write() returns when its pages are on the device",
  .init     = none_init,
  .dirtied  = none_dirtied,
  .resume   = none_resume,
};
