/* sweep.h — parameter sweeps over a scenario: the cartesian product of
 * lists of --set values (the "points"), each run with several seeds, on
 * local threads or split into shards for a cluster, merged back into the
 * same files (issue 17).
 *
 * It lives in models/ next to scenario.h because a sweep is a family of
 * scenarios: each point is scenario_load_data() of the same text with the
 * point's assignments appended to the --set list, and nothing else.
 *
 * Points.  Axes are given in order, each "GROUP.KEY=v1,v2,..." (the --set
 * syntax of models/scenario.h; a comma inside a value is written '\,' and
 * a backslash '\\').  Point indices run over the product with the LAST
 * axis varying fastest, as nested loops written in the order given.
 *
 * Seeds.  Replicate r (0-based) of a point runs with
 *   seed = splitmix64 (master ^ splitmix64 (point_hash + r))
 * where master is --seed, else the scenario's [sim] seed (after --set),
 * and point_hash is FNV-1a 64 over the point's "GROUP.KEY=VALUE\n" lines,
 * axes in order.  The seed depends on the point's values, not on its index,
 * -j, the shard or the order of completion, so adding a value to an axis
 * keeps the seeds of the points there were.
 *
 * Shards.  Shard i of n (1-based) runs the points whose index % n == i - 1:
 * balanced to within one point, whatever the axes.
 *
 * Rows.  A run of a point gives one row per replicate and scenario run (a
 * device listing several elevators gives several runs): per process
 * ("process.NAME.FIGURE") and per device ("device.NAME.FIGURE") figures
 * from SimRunResult.  Rows are kept, as they finish, in a long-format
 * store (point,replicate,seed,run,run_label,figure,value; values with 17
 * significant digits so that they read back exactly), each point's lines
 * followed by a "#done" line: a point whose "#done" line is missing was
 * interrupted and is run again on resume.  The final files are built from
 * the store's rows, sorted by point, replicate and run, by one function for
 * a local run and for a merge of shards, hence byte-identical.
 */
#pragma once

#include <glib.h>
#include <signal.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SWEEP_ERROR (sweep_error_quark ())
GQuark sweep_error_quark (void);

typedef enum {
  SWEEP_ERROR_SYNTAX,     /* a --vary or --shard argument */
  SWEEP_ERROR_MISMATCH,   /* a manifest of another sweep */
  SWEEP_ERROR_MISSING,    /* shards missing at merge */
  SWEEP_ERROR_STORE,      /* a malformed row store or shard file */
  SWEEP_ERROR_RUN,        /* a point failed to load or run */
} SweepError;

typedef struct {
  char      *key;         /* "GROUP.KEY" */
  GPtrArray *values;      /* char *, unescaped */
} SweepAxis;

typedef struct {
  char      *scenario_path;
  char      *scenario_name;  /* basename without extension, as scenario_load_file */
  char      *scenario_text;  /* NULL in a sweep read back from a manifest */
  char      *scenario_sha256;
  char      *base_dir;
  GPtrArray *axes;           /* SweepAxis, in the order given */
  GStrv      sets;           /* the --set list, applied before the point's */
  guint      n_seeds;
  guint64    master_seed;
  guint      n_points;
} Sweep;

/* Parse one --vary argument into its key and values (unescaped). */
gboolean    sweep_parse_vary   (const char  *spec,
                                char       **key,
                                GPtrArray  **values,
                                GError     **error);

/* Read @scenario_path, parse @vary, resolve the master seed (@seed >= 0
 * wins over the scenario's) and load the first point once so that a bad
 * group, key or value is reported before anything runs. */
Sweep      *sweep_new          (const char         *scenario_path,
                                const char *const  *vary,
                                const char *const  *sets,
                                guint               n_seeds,
                                gint64              seed,
                                GError            **error);
void        sweep_free         (Sweep *sw);

/* Value of axis @axis at @point. */
const char *sweep_point_value  (const Sweep *sw, guint point, guint axis);
/* The --set list followed by the point's "GROUP.KEY=VALUE" assignments. */
GStrv       sweep_point_sets   (const Sweep *sw, guint point);
guint64     sweep_point_seed   (const Sweep *sw, guint point, guint replicate);
/* "GROUP.KEY=V, GROUP.KEY=V" of @point (for messages); newly allocated. */
char       *sweep_point_describe (const Sweep *sw, guint point);

/* Parse "I/N" (1 <= I <= N). */
gboolean    sweep_parse_shard  (const char  *text,
                                guint       *shard_i,
                                guint       *shard_n,
                                GError     **error);
/* Indices of the points of shard @shard_i of @shard_n (0 of 0: all), in
 * order; some shards are empty when n exceeds the number of points. */
GArray     *sweep_shard_points (const Sweep *sw, guint shard_i, guint shard_n);

/* The command that runs this sweep (shard @shard, e.g. "3/8", or NULL for
 * all points) into @dir: @program ("iosim"), "sweep", the scenario path,
 * every --vary (escaped back) and --set, --seeds and --seed (the resolved
 * master), --shard, -o DIR.  Not shell-quoted: one element per argument.
 * A batch-script emitter passes its own @shard text, e.g.
 * "${SLURM_ARRAY_TASK_ID}/8", and quotes the rest with g_shell_quote. */
GStrv       sweep_argv         (const Sweep *sw,
                                const char  *program,
                                const char  *dir,
                                const char  *shard);
/* sweep_argv with shard "I/N" (@shard_n == 0: no --shard). */
GStrv       sweep_shard_argv   (const Sweep *sw,
                                const char  *program,
                                const char  *dir,
                                guint        shard_i,
                                guint        shard_n);

/* File names inside the output folder. */
#define SWEEP_MANIFEST      "manifest.json"
#define SWEEP_STORE         ".rows.csv"
#define SWEEP_RESULTS_CSV   "results.csv"
#define SWEEP_SUMMARY_CSV   "summary.csv"
#define SWEEP_RESULTS_JSON  "results.json"
#define SWEEP_SUMMARY_JSON  "summary.json"
/* "manifest-shard-I-of-N.json", ".rows-shard-I-of-N.csv",
 * "results-shard-I-of-N.csv"; newly allocated. */
char       *sweep_shard_file   (const char *kind, guint shard_i, guint shard_n);

/* Manifest: what identifies the sweep (scenario text hash, axes, sets,
 * seeds, master seed), plus the shard for a shard's manifest (@shard_n 0:
 * none).  sweep_id() is a hash of the identifying part alone. */
JsonNode   *sweep_manifest     (const Sweep *sw, guint shard_i, guint shard_n);
char       *sweep_id           (const Sweep *sw);
/* A sweep read back from a manifest (no scenario text: cannot run). */
Sweep      *sweep_from_manifest (JsonNode    *root,
                                 guint       *shard_i,
                                 guint       *shard_n,
                                 GError     **error);

/* Student-t 95 % confidence interval of the mean of @n values: *@mean and
 * *@half_width = t(0.975, n-1) * s / sqrt(n), s the sample standard
 * deviation.  With n < 2 the half-width is NaN (no spread to measure). */
void        sweep_ci95         (const double *v,
                                gsize         n,
                                double       *mean,
                                double       *half_width);

typedef struct {
  guint     jobs;            /* worker threads (>= 1) */
  guint     shard_i, shard_n;/* 0, 0: all points */
  guint     max_points;      /* stop after running this many (0: no limit; tests) */
  gboolean  force;           /* start afresh over a different sweep's files */
  volatile sig_atomic_t *stop;  /* polled: stop taking points when set */
  /* If set, called from the calling thread as points finish and about
   * four times a second: @done of @total points to run this time. */
  void    (*progress) (gpointer data, guint done, guint total);
  gpointer  progress_data;
} SweepRunOptions;

typedef struct {
  guint n_points;            /* points of this shard (or all) */
  guint skipped;             /* already complete in the store */
  guint run;                 /* run now */
  gboolean complete;         /* every point done, final files written */
} SweepRunReport;

/* Run the points of @sw (or of the shard) not yet complete in @dir,
 * appending to the store, then write the final files (a shard: its
 * results-shard file).  Refuses a @dir holding another sweep's manifest
 * unless @opt->force. */
gboolean    sweep_run          (const Sweep            *sw,
                                const char             *dir,
                                const SweepRunOptions  *opt,
                                SweepRunReport         *report,
                                GError                **error);

/* Merge the shard files in @dir into @out_dir: the files a local run of
 * the same sweep writes.  Errors name missing shards or the manifests
 * that differ.  An @out_dir holding another sweep's manifest is refused
 * unless @force. */
gboolean    sweep_merge        (const char  *dir,
                                const char  *out_dir,
                                gboolean     force,
                                GError     **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sweep, sweep_free)

G_END_DECLS
