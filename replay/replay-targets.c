/* replay-targets.c — probing, planning onto and opening the replay
 * targets (--target, or --map MAJ,MIN=/dev/X per traced device). */
#include "replay/replay-targets.h"

#include <unistd.h>

static void
target_clear (gpointer data)
{
  replay_target_clear (data);
}

static gboolean
probe_one (const char *path, const ReplayOptions *opts, GArray *targets, GError **error)
{
  ReplayTarget t;

  if (!replay_target_probe (path, &t, error))
    return FALSE;
  g_array_append_val (targets, t);
  if (t.size_bytes == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s has size 0 (no medium, or not set up)", path);
      return FALSE;
    }
  for (guint i = 0; i + 1 < targets->len; i++)
    {
      const ReplayTarget *o = &g_array_index (targets, ReplayTarget, i);
      /* O_EXCL would refuse the second open anyway; say why. */
      if (o->major == t.major && o->minor == t.minor)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                       "%s and %s are the same device: map each traced device to its own target",
                       o->path, path);
          return FALSE;
        }
    }
  return replay_target_check_unused (&t, opts->mountinfo_path, error);
}

GArray *
replay_targets_probe (const ReplayOptions *opts, GError **error)
{
  g_autoptr (GArray) targets = g_array_new (FALSE, TRUE, sizeof (ReplayTarget));

  g_array_set_clear_func (targets, target_clear);
  if (opts->n_maps == 0)
    return probe_one (opts->target, opts, targets, error) ? g_steal_pointer (&targets) : NULL;
  for (guint i = 0; i < opts->n_maps; i++)
    if (!probe_one (opts->maps[i].target, opts, targets, error))
      return NULL;
  return g_steal_pointer (&targets);
}

ReplayPlan *
replay_targets_plan (const GArray *ios, const ReplayOptions *opts, const GArray *targets,
                     GError **error)
{
  g_autofree ReplayPlanTarget *pt = g_new0 (ReplayPlanTarget, targets->len);

  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);

      pt[i].dev_major = opts->n_maps ? opts->maps[i].dev_major : G_MAXUINT32;
      pt[i].dev_minor = opts->n_maps ? opts->maps[i].dev_minor : G_MAXUINT32;
      pt[i].size_bytes = t->size_bytes;
      pt[i].block_bytes = t->logical_block_bytes;
    }
  return replay_plan_build_mapped (ios, opts, pt, targets->len, error);
}

void
replay_targets_close (int *fds, guint n)
{
  if (fds == NULL)
    return;
  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  g_free (fds);
}

int *
replay_targets_open (const GArray *targets, const ReplayPlan *plan, const ReplayOptions *opts,
                     GError **error)
{
  int *fds = g_new (int, targets->len);

  for (guint i = 0; i < targets->len; i++)
    fds[i] = -1;
  /* Every signature check before the first open for writing. */
  for (guint i = 0; i < targets->len && !opts->force; i++)
    if (g_array_index (plan->targets, ReplayPlanTarget, i).n_writes > 0
        && !replay_target_check_signature (&g_array_index (targets, ReplayTarget, i), error))
      {
        g_free (fds);
        return NULL;
      }
  for (guint i = 0; i < targets->len; i++)
    {
      gboolean writes = g_array_index (plan->targets, ReplayPlanTarget, i).n_writes > 0;

      fds[i] = replay_target_open (&g_array_index (targets, ReplayTarget, i), writes, error);
      if (fds[i] < 0)
        {
          replay_targets_close (fds, targets->len);
          return NULL;
        }
    }
  return fds;
}
