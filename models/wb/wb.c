/* wb.c — writeback policy registry and lifetime. */
#include "models/wb/wb.h"

#include <string.h>

static const WbOps *const registry[] = {
  &wb_none_ops,
  &wb_global_ops,
  &wb_bdflush_ops,
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
  g_free (w);
}
