/* replay-targets.h — the block devices a replay writes to: one with
 * --target, one per traced device with --map MAJ,MIN=/dev/X.  Probing and
 * the mounted/in-use refusals come first, the plan is built against every
 * target's size and block size, and only then are the targets checked for
 * signatures (when written) and opened with O_EXCL. */
#pragma once

#include "replay/replay.h"

G_BEGIN_DECLS

/* ReplayTarget for each target, refusing size 0, mounted, swap, held and
 * the same device given twice; a regular file (or a missing one with
 * opts->target_size_bytes) is a file target, refused when it backs a loop
 * device or is swap; --target-size on a block device is refused. */
GArray     *replay_targets_probe (const ReplayOptions *opts,
                                  GError             **error);
ReplayPlan *replay_targets_plan  (const GArray        *ios,
                                  const ReplayOptions *opts,
                                  const GArray        *targets,
                                  GError             **error);
/* Signature refusal (unless opts->force) for every target the plan writes
 * to, then open each (O_DIRECT | O_EXCL; a file is created or extended to
 * its size first and may fall back to buffered, which its ReplayTarget
 * records); fds in target order, or NULL with everything closed again. */
int        *replay_targets_open  (GArray              *targets,
                                  const ReplayPlan    *plan,
                                  const ReplayOptions *opts,
                                  GError             **error);
void        replay_targets_close (int  *fds,
                                  guint n);
/* What limits a replay's figures on these targets, as sentences appended
 * to @warnings (char *): a file's buffered fallback, a file system in
 * memory, reads that start in a hole of a file (SEEK_DATA; beyond its end
 * in a dry run, where --target-size would extend it). */
void        replay_targets_warnings (const GArray     *targets,
                                     const ReplayPlan *plan,
                                     GPtrArray        *warnings);

G_END_DECLS
