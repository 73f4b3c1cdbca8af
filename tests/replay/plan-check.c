/* plan-check.c — see plan-check.h.  The oracle is written apart from
 * replay-plan.c: extents in 128-bit arithmetic, the target of each record
 * looked up again, the offsets of untouched I/Os recomputed. */
#include "plan-check.h"

#include <string.h>

typedef unsigned __int128 u128;

static gint
oracle_target (const TraceIo *io, const ReplayPlanTarget *targets, guint n)
{
  for (guint i = 0; i < n; i++)
    if (targets[i].dev_major == G_MAXUINT32
        || (targets[i].dev_major == io->dev_major && targets[i].dev_minor == io->dev_minor))
      return (gint) i;
  return -1;
}

/* A record the plan looks at whose byte end is 2^64 or more. */
static gboolean
oracle_overflows (const GArray *ios, const ReplayPlanTarget *targets, guint n)
{
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      u128 end = ((u128) io->sector + io->nr_sectors) * 512;

      if (oracle_target (io, targets, n) >= 0 && end > G_MAXUINT64)
        return TRUE;
    }
  return FALSE;
}

static void
check_refusal (const GError *error, gboolean overflow, PlanCheckStats *stats)
{
  if (error == NULL || error->domain != REPLAY_ERROR)
    g_error ("plan refused without a replay error: %s", error ? error->message : "(none)");
  stats->refused++;
  if (overflow)
    {
      if (error->code != REPLAY_ERROR_RANGE || strstr (error->message, "64-bit") == NULL)
        g_error ("an overflowing record refused for another reason: %s", error->message);
      stats->overflowed++;
    }
  if (error->code == REPLAY_ERROR_RANGE
      && (strstr (error->message, "I/O of pid ") == NULL || strstr (error->message, " at sector ") == NULL
          || strstr (error->message, "trace time") == NULL))
    g_error ("a range refusal that does not name the record: %s", error->message);
  if (error->code != REPLAY_ERROR_RANGE && error->code != REPLAY_ERROR_EMPTY)
    g_error ("unexpected refusal: %s", error->message);
}

static void
check_io (const ReplayProcess *proc, const ReplayIo *io, const ReplayPlan *plan,
          const ReplayOptions *opts, const ReplayPlanTarget *targets, guint n_targets)
{
  const ReplayPlanTarget *t;

  if (io->target_index >= n_targets || io->target_index >= plan->targets->len)
    g_error ("%s: I/O on target %u of %u", proc->name, io->target_index, n_targets);
  t = &targets[io->target_index];
  if (io->bytes == 0 || (u128) io->offset_bytes + io->bytes > t->size_bytes)
    g_error ("%s: I/O at byte %" G_GUINT64_FORMAT " (+%u) outside target %u of %" G_GUINT64_FORMAT
             " bytes (trace sector %" G_GUINT64_FORMAT ")", proc->name, io->offset_bytes,
             io->bytes, io->target_index, t->size_bytes, io->trace_sector);
  if (io->offset_bytes % t->block_bytes != 0 || io->bytes % t->block_bytes != 0)
    g_error ("%s: I/O at byte %" G_GUINT64_FORMAT " (+%u) not aligned to %u", proc->name,
             io->offset_bytes, io->bytes, t->block_bytes);
  if (io->op != TRACE_OP_READ && io->op != TRACE_OP_WRITE)
    g_error ("%s: planned an I/O that is neither read nor write", proc->name);
  if (io->op == TRACE_OP_WRITE && !opts->allow_write)
    g_error ("%s: planned a write without --allow-write", proc->name);
  /* Nothing asked to move it: it is where the trace says, aligned down. */
  if (!opts->wrap && !opts->scale_offsets
      && io->offset_bytes != io->trace_sector * 512 - io->trace_sector * 512 % t->block_bytes)
    g_error ("%s: trace sector %" G_GUINT64_FORMAT " moved to byte %" G_GUINT64_FORMAT
             " without --wrap or --scale-offsets", proc->name, io->trace_sector, io->offset_bytes);
}

static void
check_plan (const ReplayPlan *plan, const ReplayOptions *opts, const ReplayPlanTarget *targets,
            guint n_targets, PlanCheckStats *stats)
{
  guint64 n = 0, reads = 0;
  g_autoptr (GError) error = NULL;

  for (guint p = 0; p < plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, p);

      for (guint i = 0; i < proc->ios->len; i++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);

          check_io (proc, io, plan, opts, targets, n_targets);
          reads += io->op == TRACE_OP_READ;
          n++;
        }
    }
  if (n != plan->n_ios || reads != plan->n_reads || n - reads != plan->n_writes || n == 0)
    g_error ("plan counts %" G_GUINT64_FORMAT " I/Os (%" G_GUINT64_FORMAT " reads), its "
             "schedules hold %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " reads)", plan->n_ios,
             plan->n_reads, n, reads);
  for (guint i = 0; i < plan->targets->len; i++)
    {
      const ReplayPlanTarget *t = &g_array_index (plan->targets, ReplayPlanTarget, i);
      if (t->n_ios > 0 && (t->end_offset_bytes > t->size_bytes
                           || t->first_offset_bytes >= t->end_offset_bytes))
        g_error ("target %u: range [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ") of %"
                 G_GUINT64_FORMAT " bytes", i, t->first_offset_bytes, t->end_offset_bytes,
                 t->size_bytes);
    }
  if (!replay_plan_check_ranges (plan, NULL, &error))
    g_error ("replay_plan_check_ranges refuses a plan the oracle accepts: %s", error->message);
  stats->ios += n;
}

void
plan_check_one (const GArray *ios, const ReplayOptions *opts, const ReplayPlanTarget *targets,
                guint n_targets, PlanCheckStats *stats)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = replay_plan_build_mapped (ios, opts, targets, n_targets, &error);
  gboolean overflow = oracle_overflows (ios, targets, n_targets);

  stats->plans++;
  if (plan == NULL)
    {
      check_refusal (error, overflow, stats);
      return;
    }
  if (error != NULL)
    g_error ("a plan and an error: %s", error->message);
  if (overflow)
    g_error ("a record whose extent overflows 64 bits was planned");
  check_plan (plan, opts, targets, n_targets, stats);
}

/* The first two distinct devices of @ios, FALSE when there is only one. */
static gboolean
two_devices (const GArray *ios, guint32 dev[2][2])
{
  guint found = 0;

  for (guint i = 0; i < ios->len && found < 2; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);

      if (found == 1 && io->dev_major == dev[0][0] && io->dev_minor == dev[0][1])
        continue;
      dev[found][0] = io->dev_major;
      dev[found][1] = io->dev_minor;
      found++;
    }
  return found == 2;
}

void
plan_check_combinations (const GArray *ios, guint64 size_bytes, PlanCheckStats *stats)
{
  static const guint32 blocks[] = { 512, 4096 };
  guint32 dev[2][2];
  gboolean mapped = two_devices (ios, dev);

  for (guint b = 0; b < G_N_ELEMENTS (blocks); b++)
    for (guint combo = 0; combo < 8; combo++)
      {
        ReplayOptions opts;
        ReplayPlanTarget one = { .dev_major = G_MAXUINT32, .dev_minor = G_MAXUINT32,
                                 .size_bytes = size_bytes, .block_bytes = blocks[b] };

        replay_options_init (&opts);
        opts.wrap = (combo & 1) != 0;
        opts.scale_offsets = (combo & 2) != 0;
        opts.allow_write = (combo & 4) == 0;
        opts.reads_only = (combo & 4) != 0;
        plan_check_one (ios, &opts, &one, 1, stats);
        if (mapped)
          {
            ReplayPlanTarget two[2] = {
              { .dev_major = dev[0][0], .dev_minor = dev[0][1], .size_bytes = size_bytes,
                .block_bytes = blocks[b] },
              { .dev_major = dev[1][0], .dev_minor = dev[1][1], .size_bytes = size_bytes / 3,
                .block_bytes = blocks[1 - b] },
            };
            plan_check_one (ios, &opts, two, 2, stats);
          }
      }
}
