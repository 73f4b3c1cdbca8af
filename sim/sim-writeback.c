/* sim-writeback.c — a writeback policy's lifetime: the page cache's side
 * of the interface (sim/sim-writeback.h). */
#include "sim/sim-writeback.h"

static SimReclaimMode
reclaim_mode_of (guint flags)
{
  g_assert (!((flags & WB_F_RECLAIM_ROTATES) && (flags & WB_F_RECLAIM_PUTBACK)));
  if (flags & WB_F_RECLAIM_ROTATES)
    return SIM_RECLAIM_ROTATE;
  if (flags & WB_F_RECLAIM_PUTBACK)
    return SIM_RECLAIM_PUTBACK;
  if (flags & WB_F_RECLAIM_LAUNDER)
    return (flags & WB_F_RECLAIM_WAIT_ALL) ? SIM_RECLAIM_LAUNDER_ALL : SIM_RECLAIM_LAUNDER_OWN;
  return SIM_RECLAIM_KEEP_COLD;
}

WbPolicy *
wb_policy_new (const WbOps *ops, SimPageCache *pc, Sim *sim, guint hz, GKeyFile *kf,
               GError **error)
{
  WbPolicy *w = g_new0 (WbPolicy, 1);
  w->ops = ops;
  w->pc = pc;
  w->sim = sim;
  w->hz = hz;
  w->priv = ops->priv_size ? g_malloc0 (ops->priv_size) : NULL;
  w->flusher.pid = sim_next_pid (sim);
  w->flusher.comm = "flush";
  w->flusher.ioprio_class = 2;
  w->flusher.ioprio_level = 4;
  w->flusher.nr_tasks = 1;
  sim_page_cache_set_reclaim_mode (pc, reclaim_mode_of (ops->flags));
  sim_page_cache_set_flusher (pc, &w->flusher);
  if (!ops->init (w, kf, error))
    {
      wb_policy_free (w);
      return NULL;
    }
  return w;
}

void
wb_policy_free (WbPolicy *w)
{
  if (w == NULL)
    return;
  if (w->ops->exit)
    w->ops->exit (w);
  g_free (w->priv);
  if (w->samples)
    g_array_unref (w->samples);
  g_free (w);
}
