/* wb-none.c — no write-back caching: a buffered write goes to the device
 * at once and write() returns when its pages are clean (write-through).
 * The trivial member of the writeback family. */
#include "models/wb/wb.h"

static gboolean
none_init (WbPolicy *w, GKeyFile *kf, GError **error)
{
  gsize n = 0;
  g_auto (GStrv) keys = kf ? g_key_file_get_keys (kf, "writeback", &n, NULL) : NULL;
  if (n > 0)
    {
      g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                   "[writeback] %s: the none era (write-through) has no tunables", keys[0]);
      return FALSE;
    }
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
