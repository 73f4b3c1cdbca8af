/* cmd-sweep-slurm.h — `iosim sweep ... --emit-slurm DIR`: the sweep as a
 * Slurm job array (models/sweep-slurm.h) instead of a local run.  cmd-sweep.c
 * adds these options to its own and hands over when --emit-slurm is given. */
#pragma once

#include <glib.h>

#include "models/sweep.h"

G_BEGIN_DECLS

typedef struct {
  char       *emit_dir;      /* --emit-slurm: where sweep.sbatch and merge.sh go */
  gint        n_tasks;       /* --shards / --array; 0: min (points, 100) */
  gint        throttle;      /* --throttle; -1: none */
  char       *partition;
  char       *account;
  char       *time_text;     /* --time, sbatch's forms */
  char       *mem_text;      /* --mem, sbatch's units */
  char       *probe;         /* --probe=yes|no */
  char       *iosim_path;    /* --iosim: the binary on the cluster */
  GOptionEntry entries[11];
} CliSweepSlurm;

/* Fill @o's defaults and option entries; add @o->entries to the context. */
void     cli_sweep_slurm_init   (CliSweepSlurm *o);
void     cli_sweep_slurm_clear  (CliSweepSlurm *o);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CliSweepSlurm, cli_sweep_slurm_clear)

/* Without --emit-slurm its options mean nothing: FALSE, and the first one
 * given named on stderr, when one was given. */
gboolean cli_sweep_slurm_unused (const CliSweepSlurm *o);

/* The --help paragraph on clusters: Slurm and GNU parallel. */
extern const char cli_sweep_slurm_help[];

/* Write the job array of @sw whose results a local run would write to
 * @out_dir: @o->emit_dir/sweep.sbatch, merge.sh and logs/; print how the
 * time and memory were chosen and the commands to run.  @shard_given:
 * --shard was on the command line (refused: the array gives the shards).
 * Returns the exit status (0, 1 error, 2 usage). */
int      cli_sweep_emit_slurm   (const CliSweepSlurm *o,
                                 const Sweep         *sw,
                                 const char          *out_dir,
                                 gboolean             shard_given);

G_END_DECLS
