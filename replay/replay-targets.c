/* replay-targets.c — probing, planning onto and opening the replay
 * targets (--target, or --map MAJ,MIN=/dev/X per traced device): block
 * devices, or regular files (replay-target-file.c). */
#include "replay/replay-targets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void
target_clear (gpointer data)
{
  replay_target_clear (data);
}

/* A block device as sysfs describes it, or a regular file. */
static gboolean
probe_path (const char *path, const ReplayOptions *opts, ReplayTarget *t, GError **error)
{
  if (replay_target_path_is_file (path))
    return replay_target_probe_file (path, opts->target_size_bytes, t, error);
  if (!replay_target_probe (path, t, error))
    return FALSE;
  if (opts->target_size_bytes > 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "--target-size sizes a regular-file target; %s is a block device of %"
                   G_GUINT64_FORMAT " bytes", path, t->size_bytes);
      return FALSE;
    }
  return TRUE;
}

static gboolean
probe_one (const char *path, const ReplayOptions *opts, GArray *targets, GError **error)
{
  ReplayTarget t;

  if (!probe_path (path, opts, &t, error))
    {
      replay_target_clear (&t);
      return FALSE;
    }
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
      /* O_EXCL would refuse the second open anyway; say why.  A file
       * not created yet is the same as another only by its path. */
      if (o->is_file == t.is_file && o->major == t.major && o->minor == t.minor
          && o->file_ino == t.file_ino && (t.file_exists || g_strcmp0 (o->path, path) == 0))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                       "%s and %s are the same %s: map each traced device to its own target",
                       o->path, path, t.is_file ? "file" : "device");
          return FALSE;
        }
    }
  if (t.is_file)
    return replay_target_check_file_unused (&t, NULL, error);
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

/* End of the furthest read or write of @ios that replays on target
 * @index (as the plan selects them); 0 when none.  Extents that overflow
 * are left to the plan, which refuses them. */
static guint64
trace_end_bytes (const GArray *ios, const ReplayOptions *opts, guint index, guint64 *sector)
{
  guint64 end = 0;

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      guint64 offset, e;

      if ((io->op != TRACE_OP_READ && io->op != TRACE_OP_WRITE)
          || (io->op == TRACE_OP_WRITE && opts->reads_only)
          || (opts->dev_major != G_MAXUINT32 && io->dev_major != opts->dev_major)
          || (opts->dev_minor != G_MAXUINT32 && io->dev_minor != opts->dev_minor)
          || (opts->n_maps > 0 && (io->dev_major != opts->maps[index].dev_major
                                   || io->dev_minor != opts->maps[index].dev_minor))
          || !g_uint64_checked_mul (&offset, io->sector, 512)
          || !g_uint64_checked_add (&e, offset, (guint64) io->nr_sectors * 512))
        continue;
      if (e > end)
        {
          end = e;
          *sector = io->sector;
        }
    }
  return end;
}

/* A file target the trace reaches beyond: say how far, and the ways out
 * (the plan's own message names only the first I/O it met). */
static void
explain_file_range (const GArray *ios, const ReplayOptions *opts, const GArray *targets,
                    GError **error)
{
  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);
      guint64 sector = 0;
      guint64 end = t->is_file ? trace_end_bytes (ios, opts, i, &sector) : 0;

      if (end <= t->size_bytes)
        continue;
      g_clear_error (error);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
                   "%s has %" G_GUINT64_FORMAT " bytes%s and the trace reaches byte %"
                   G_GUINT64_FORMAT " (its largest offset + length, the I/O at sector %"
                   G_GUINT64_FORMAT "): --target-size %" G_GUINT64_FORMAT " (or more) extends "
                   "the file to hold it (sparse; nothing is written beyond that size), or "
                   "--wrap / --scale-offsets fit the trace into the file as it is", t->path,
                   t->size_bytes, opts->target_size_bytes ? " (--target-size)" : "", end,
                   sector, end);
      return;
    }
}

ReplayPlan *
replay_targets_plan (const GArray *ios, const ReplayOptions *opts, const GArray *targets,
                     GError **error)
{
  g_autofree ReplayPlanTarget *pt = g_new0 (ReplayPlanTarget, targets->len);
  ReplayPlan *plan;

  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);

      pt[i].dev_major = opts->n_maps ? opts->maps[i].dev_major : G_MAXUINT32;
      pt[i].dev_minor = opts->n_maps ? opts->maps[i].dev_minor : G_MAXUINT32;
      pt[i].size_bytes = t->size_bytes;
      pt[i].block_bytes = t->logical_block_bytes;
    }
  plan = replay_plan_build_mapped (ios, opts, pt, targets->len, error);
  if (plan == NULL && !opts->wrap && !opts->scale_offsets
      && g_error_matches (*error, REPLAY_ERROR, REPLAY_ERROR_RANGE))
    explain_file_range (ios, opts, targets, error);
  return plan;
}

/* Planned reads of target @index that start in a hole of @t's file: a
 * part never written, or beyond its end (what --target-size will add).
 * One lseek(SEEK_DATA) per read: about a microsecond each, before the
 * clock starts.  File systems without hole tracking report all data. */
static guint64
count_hole_reads (const ReplayTarget *t, guint index, const ReplayPlan *plan)
{
  int fd = t->file_exists ? open (t->path, O_RDONLY | O_CLOEXEC) : -1;
  struct stat st;
  guint64 size = fd >= 0 && fstat (fd, &st) == 0 ? (guint64) st.st_size : 0;
  guint64 holes = 0;

  for (guint p = 0; p < plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, p);

      for (guint k = 0; k < proc->ios->len; k++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, k);

          if (io->target_index != index || io->op != TRACE_OP_READ)
            continue;
          holes += io->offset_bytes >= size
                   || lseek (fd, (off_t) io->offset_bytes, SEEK_DATA) != (off_t) io->offset_bytes;
        }
    }
  if (fd >= 0)
    close (fd);
  return holes;
}

void
replay_targets_warnings (const GArray *targets, const ReplayPlan *plan, GPtrArray *warnings)
{
  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);
      guint64 hole_reads;

      replay_target_file_warnings (t, warnings);
      if (!t->is_file || (hole_reads = count_hole_reads (t, i, plan)) == 0)
        continue;
      g_ptr_array_add (warnings, g_strdup_printf (
        "%s: %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT " reads start in a hole (never "
        "written, or added by --target-size): unless the replay writes there first, the file "
        "system answers them with zeros without device I/O; write the file first (e.g. dd or "
        "fio) for device latencies", t->path, hole_reads,
        g_array_index (plan->targets, ReplayPlanTarget, i).n_reads));
    }
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
replay_targets_open (GArray *targets, const ReplayPlan *plan, const ReplayOptions *opts,
                     GError **error)
{
  int *fds = g_new (int, targets->len);

  for (guint i = 0; i < targets->len; i++)
    fds[i] = -1;
  /* Every signature check before the first open for writing. */
  for (guint i = 0; i < targets->len && !opts->force; i++)
    if (g_array_index (plan->targets, ReplayPlanTarget, i).n_writes > 0
        && (!g_array_index (targets, ReplayTarget, i).is_file
            || g_array_index (targets, ReplayTarget, i).file_size_bytes > 0)
        && !replay_target_check_signature (&g_array_index (targets, ReplayTarget, i), error))
      {
        g_free (fds);
        return NULL;
      }
  for (guint i = 0; i < targets->len; i++)
    {
      gboolean writes = g_array_index (plan->targets, ReplayPlanTarget, i).n_writes > 0;

      ReplayTarget *t = &g_array_index (targets, ReplayTarget, i);

      fds[i] = t->is_file ? replay_target_open_file (t, writes, error)
                          : replay_target_open (t, writes, error);
      if (fds[i] < 0)
        {
          replay_targets_close (fds, targets->len);
          return NULL;
        }
    }
  return fds;
}
