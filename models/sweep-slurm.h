/* sweep-slurm.h — a sweep's shards as a Slurm job array.
 *
 * Follows sbatch(1) of Slurm 22.05 (Debian 12's slurm-wlm): #SBATCH lines
 * before the first command, --array=1-N%K (K: at most K tasks at once),
 * --output file name patterns %A (array job id) and %a (task index), the
 * --time formats "minutes", "minutes:seconds", "hours:minutes:seconds",
 * "days-hours", "days-hours:minutes", "days-hours:minutes:seconds", and
 * --mem sizes with the units K, M, G, T (powers of 1024, M when none).
 *
 * Task i (SLURM_ARRAY_TASK_ID, 1-based) runs "iosim sweep ... --shard i/N",
 * so the cluster needs the iosim binary and the scenario files and nothing
 * else; the shards' outputs are merged afterwards with "iosim sweep merge".
 * The time and memory asked for come from a probe (one point, one seed,
 * run locally) scaled by sweep_slurm_estimate; the rule is written into the
 * script so that whoever submits it sees where the figures came from.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SWEEP_SLURM_ERROR (sweep_slurm_error_quark ())
GQuark sweep_slurm_error_quark (void);

typedef enum {
  SWEEP_SLURM_ERROR_INVALID,   /* an option value; the message names it */
} SweepSlurmError;

/* The safety rule of sweep_slurm_estimate: the time of one task is the
 * probe's wall time times the runs per task (points x seeds), doubled
 * (points differ in cost, cluster cores may be slower), never under a
 * minute, up to whole minutes; memory is
 * the probe's peak resident set plus half again plus a margin for the
 * runtime and the results kept, and never under 64 MiB. */
#define SWEEP_SLURM_TIME_FACTOR      2
#define SWEEP_SLURM_TIME_MIN_S       60
#define SWEEP_SLURM_MEM_MARGIN_MIB   32
#define SWEEP_SLURM_MEM_MIN_MIB      64

typedef struct {
  const char         *job_name;     /* [A-Za-z0-9._-] only */
  guint               n_tasks;      /* array tasks = shards, >= 1 */
  guint               throttle;     /* %K; 0: no limit */
  guint64             time_s;       /* --time, >= 1 */
  guint64             mem_mib;      /* --mem, >= 1 */
  const char         *partition;    /* NULL: the cluster's default */
  const char         *account;      /* NULL: the user's default */
  const char         *log_dir;      /* absolute; one %A_%a.out per task */
  const char         *note;         /* comment lines (how time and memory
                                       were chosen), or NULL */
  /* The command of a task without --shard and -j (sweep_argv of
   * models/sweep.h): the absolute iosim path, "sweep", the absolute
   * scenario path, the sweep's options and "-o RESULTS" (absolute).
   * Quoted for the shell here. */
  const char *const  *task_argv;
} SweepSlurmJob;

/* sbatch's --time text to seconds; the error names @text. */
gboolean sweep_slurm_parse_time   (const char  *text,
                                   guint64     *out_s,
                                   GError     **error);
/* sbatch's --mem text to MiB (rounded up); the error names @text. */
gboolean sweep_slurm_parse_mem    (const char  *text,
                                   guint64     *out_mib,
                                   GError     **error);
/* "HH:MM:SS", or "D-HH:MM:SS" from a day on; caller frees. */
char    *sweep_slurm_format_time  (guint64      s);

/* Time and memory of one task from a probe of one point with one seed
 * (wall time and peak resident set of the process that ran it) and the
 * most runs one task makes (its points x the seeds); the rule is the one
 * spelled out above. */
void     sweep_slurm_estimate     (guint64      probe_wall_ns,
                                   guint64      probe_max_rss_bytes,
                                   guint        runs_per_task,
                                   guint64     *out_time_s,
                                   guint64     *out_mem_mib);

/* The points task @task (1-based) of @n_tasks runs when points are dealt
 * round-robin (point p to task p % n + 1), the slicing of --shard. */
guint    sweep_slurm_task_points  (guint        n_points,
                                   guint        n_tasks,
                                   guint        task);

/* The sbatch script (bash) of @job; refuses what sbatch would misread
 * (a log folder with blanks, quotes or '%', a job name outside
 * [A-Za-z0-9._-], a partition or account with blanks).  Caller frees. */
char    *sweep_slurm_script       (const SweepSlurmJob *job,
                                   GError             **error);

/* The merge step as a bash script: "iosim sweep merge RESULTS -o OUT",
 * quoted.  Caller frees. */
char    *sweep_slurm_merge_script (const char  *iosim_path,
                                   const char  *results_dir,
                                   const char  *out_dir);

/* @argv joined into one shell command line, each word quoted only where
 * the shell would otherwise split or expand it (g_shell_quote).  Caller
 * frees. */
char    *sweep_slurm_shell_join   (const char *const *argv);

G_END_DECLS
