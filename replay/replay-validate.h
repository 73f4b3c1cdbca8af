/* replay-validate.h — `iosim validate`: does the model's answer to "what
 * if I used another scheduler?" hold on the real device?
 *
 * The stages are the existing ones, called in order (DESIGN.md, round 2):
 *   1. measure: for each kernel scheduler (replay-setup.h sets it with a
 *      journal and restores it), run a command --repeat times under a
 *      tracefs capture (replay-capture.h), or replay a trace (replay.h)
 *      with a capture running, or an NFS capture server-side in a
 *      directory of the target's file system (replay-validate-nfs.c);
 *   2. fit (models/fit/fit.h) the first scheduler's first capture: the
 *      trained scheduler;
 *   3. simulate (models/scenario.h) the fitted scenario under each
 *      scheduler ("device NAME.sched=..." override), --repeat seeds 1..N;
 *      the fit is given the machine's host (memory, dirty limits), so that
 *      page-cache writeback is simulated by buffered writers;
 *   4. compare (replay-compare.h) predicted with measured: figures per
 *      scheduler, their spread across repeats, the change from the
 *      trained scheduler, demerit, rankings.
 * Every intermediate is a file in the work directory (captures, fitted
 * scenario, per-I/O results CSVs), so each step can be rerun by hand with
 * iosim capture, fit, run and compare.
 *
 * Both sides' latency is block-layer latency, bio by bio: measured from
 * the captures (queue to completion, fit_write_measured_results),
 * predicted from the simulator's block trace the same way
 * (replay_validate_sim_trace_results).  Process names
 * carry pids, which differ between runs; both sides are renamed to
 * "COMM.K", K counting the processes of one COMM by where and when their
 * first I/O with data went (replay_validate_canonical_names; processes of
 * flushes only, which the simulation drops, come last), so that processes
 * match across schedulers, repeats and the simulation.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>

#include "models/fit/fit.h"
#include "replay/replay-wbt-probe.h"
#include "replay/replay-compare.h"

G_BEGIN_DECLS

#define REPLAY_VALIDATE_ERROR (replay_validate_error_quark ())
GQuark replay_validate_error_quark (void);

typedef enum {
  REPLAY_VALIDATE_ERROR_OPTIONS,      /* unusable options (no device touched) */
  REPLAY_VALIDATE_ERROR_INTERRUPTED,  /* the stop flag rose; settings restored */
  REPLAY_VALIDATE_ERROR_RUN,          /* a measured run failed (command status, I/O errors) */
} ReplayValidateError;

/* ---- The figures and their arithmetic (replay-validate-stats.c; pure) -- */

/* The figures of one run, both sides alike. */
typedef enum {
  VALIDATE_MB_PER_S,          /* 10^6 bytes per second, first issue to last completion */
  VALIDATE_MEAN_LATENCY_NS,
  VALIDATE_P50_LATENCY_NS,
  VALIDATE_P95_LATENCY_NS,
  VALIDATE_P99_LATENCY_NS,
  VALIDATE_JAIN_INDEX,        /* over the processes' throughputs */
  VALIDATE_N_METRICS,
} ValidateMetric;

/* The JSON member name of @metric ("mb_per_s", "mean_latency_ns", ...). */
const char *replay_validate_metric_name (ValidateMetric metric);

/* A mean over repeats with its Student-t 95 % confidence interval. */
typedef struct {
  guint  n;
  double mean;
  double sd;                  /* sample standard deviation; NaN for n < 2 */
  double ci95_lo, ci95_hi;    /* mean -/+ t(0.975, n-1) sd / sqrt(n); NaN for n < 2 */
} ValidateEstimate;

/* NaN values are left out (a repeat that lacks the figure). */
ValidateEstimate replay_validate_estimate (const double *values,
                                           guint         n);

/* A scheduler's change from the trained one, in % of the trained value. */
typedef struct {
  double   predicted_pct;     /* (pred - pred_trained) / pred_trained */
  double   measured_pct;      /* the same on the measured means */
  double   measured_lo_pct;   /* Welch 95 % interval of the difference of the */
  double   measured_hi_pct;   /* measured means, over the trained mean; NaN for n < 2 */
  int      inside;            /* predicted_pct within [lo, hi]: 1, 0, -1 = unknown */
  int      significant;       /* the interval excludes 0: 1, 0, -1 = unknown */
  int      sign_agrees;       /* predicted and measured change have one sign: 1, 0
                               * (a zero change agrees only with zero), -1 = unknown */
} ValidateChange;

ValidateChange replay_validate_change (const ValidateEstimate *measured_trained,
                                       const ValidateEstimate *measured,
                                       double                  predicted_trained,
                                       double                  predicted);

/* Jain's fairness index (sum x)^2 / (n sum x^2) (Jain, Chiu, Hawe 1984):
 * 1 when all n values are equal, 1/n when one takes everything.  NaN
 * values (a process of one instantaneous I/O has no throughput) are left
 * out; NaN when none is left or every value is 0. */
double replay_validate_jain (const double *values,
                             guint         n);

/* Indexes 0..n-1 of @values, best first: ascending when @lower_is_better,
 * else descending; equal values (and NaNs, last) keep their order. */
void   replay_validate_rank (const double *values,
                             guint         n,
                             gboolean      lower_is_better,
                             guint        *order);

/* @names in @order (from replay_validate_rank), "a, b": a better than b;
 * neighbours with equal @values are joined by " = " ("a = b, c"), so that
 * a tie does not pass for an order.  Caller frees. */
char  *replay_validate_ranking_text (const double      *values,
                                     const guint       *order,
                                     guint              n,
                                     const char *const *names);

/* How the measured means of schedulers a and b order, for @metric's
 * direction: -1 when a is better, +1 when b is better, each only when
 * Welch's 95 % interval of the difference excludes 0; 0 when it holds 0
 * or either side has fewer than two repeats (no order can be told). */
int    replay_validate_measured_order (const ValidateEstimate *a,
                                       const ValidateEstimate *b,
                                       gboolean                lower_is_better);

/* A ranking checked where the measurement can tell: over the pairs of
 * schedulers, those whose measured means differ significantly, and how
 * many of them the prediction orders the same way (a predicted tie does
 * not).  An exact match of two rankings asks the model to reproduce the
 * order of schedulers the device could not tell apart. */
typedef struct {
  guint  pairs;
  guint  significant;
  guint  predicted;
  char  *text;                /* "a before b, c before b" (significant pairs), or "" */
} ValidateRankingCheck;

/* New names for the processes of one run: @names[i] "COMM-PID" (or
 * "pidN", any name without a "-DIGITS" tail being its own COMM), whose
 * first I/O (in issue order) starts at @first_offset_bytes[i] and was
 * issued at @first_issue_ns[i], becomes "COMM.K", K = 1, 2, ... over the
 * processes of that COMM in order of that first offset, then of first
 * issue, then of name.  The offset comes first because it belongs to the
 * workload (dd skip=, fio offset= or its seeded random offsets), while
 * which of two processes started at once issues first is a race.
 * Returns a NULL-terminated array parallel to @names. */
GStrv  replay_validate_canonical_names (const char *const *names,
                                        const guint64     *first_offset_bytes,
                                        const gint64      *first_issue_ns,
                                        guint              n);

/* ---- The run ------------------------------------------------------------ */

#define REPLAY_VALIDATE_MAX_REPEAT 100

/* Called before each step (and once when done): steps done, of how many,
 * what comes next, wall time so far, and an estimate of the time left
 * from the runs timed so far (-1 before the first measured run ends). */
typedef void (*ReplayValidateProgressFunc) (guint        step,
                                            guint        n_steps,
                                            const char  *label,
                                            gint64       elapsed_ns,
                                            gint64       eta_ns,
                                            gpointer     data);

typedef struct {
  const char        *target;        /* /dev/X, a block device */
  const char *const *scheds;        /* kernel names, NULL-terminated; the first is trained */
  guint              repeat;        /* runs per scheduler and simulated seeds; >= 1 */
  const char        *trace_path;    /* replay this trace ... */
  char             **argv;          /* ... or run this command (exactly one of the two) */
  const char        *target_dir;    /* with an NFS capture as trace_path: replay it server-side
                                     * in DIR/iosim-nfs-replay/; DIR is on the target's file
                                     * system (replay-validate-nfs.c) */
  guint              threads;       /* NFS replay worker threads; 0 = 8 */
  gboolean           allow_write;   /* a trace's writes are replayed */
  FitModelKind       model;         /* the fit's device model kind (0: auto) */
  const char        *work_dir;      /* existing directory for every intermediate file */
  const char        *journal_dir;   /* NULL: replay_journal_default_dir () */
  volatile sig_atomic_t *stop;      /* may be NULL; nonzero: stop, restore, fail */
  ReplayValidateProgressFunc progress; /* may be NULL */
  gpointer           progress_data;
  FILE              *log;           /* setup, journal and capture messages; NULL: none */
  const char        *proc_dir;      /* where the host is read (replay_validate_read_host);
                                     * NULL: /proc */
} ReplayValidateOptions;

/* One process's throughput in one run, by canonical name. */
typedef struct {
  char   *name;
  double  mb_per_s;
} ValidateProcessFigure;

/* One run (a measured repeat or a simulated seed). */
typedef struct {
  char      *results_path;            /* per-I/O CSV with canonical names */
  double     values[VALIDATE_N_METRICS];
  GPtrArray *processes;               /* ValidateProcessFigure *, by name */
  GArray    *latency_ns;              /* gint64, ascending (for the CDF plots) */
} ValidateRun;

/* One side of one scheduler across its runs. */
typedef struct {
  GPtrArray        *runs;             /* ValidateRun * */
  ValidateEstimate  estimate[VALIDATE_N_METRICS];
  GPtrArray        *process_names;    /* char *, sorted; each seen in some run */
  GArray           *process_mb_per_s; /* ValidateEstimate, parallel to process_names */
} ValidateSide;

typedef struct {
  char          *sched;               /* kernel name */
  const char    *sim_sched;           /* the simulator's name of it */
  gboolean       trained;
  ValidateSide   predicted;
  ValidateSide   measured;
  double         demerit_ns;          /* mean over repeats r of the demerit of seed r
                                       * against measured repeat r */
  double         demerit_pct;         /* of the measured mean latency */
  /* The same figure between the measured repeats themselves (repeat r
   * against r + 1, averaged): what the device's own spread from run to
   * run gives, the floor a prediction of one run can reach.  NaN with one
   * repeat. */
  double         repeat_demerit_ns;
  double         repeat_demerit_pct;
  ValidateChange change[VALIDATE_N_METRICS];   /* from the trained scheduler */
} ValidateSched;

/* One measured run of an NFS capture: what the server-side replay
 * itself reports (replay-nfs.h), next to its block capture. */
typedef struct {
  char    *sched;
  guint    run;                       /* 1..repeat */
  char    *json_path, *csv_path;      /* the replay's own summary and per-operation results */
  guint64  ops, errors;
  double   achieved_ops_per_s;
  gint64   issue_error_p99_ns;
  double   latency_mean_ns;           /* issue to completion, over the operations replayed */
} ValidateNfsRun;

/* blk-wbt under one scheduler: the kernel's windows in the first measured
 * run (replay-wbt-probe.h) against the simulator's in seed 1. */
typedef struct {
  char            *sched;
  char            *kernel_path, *sim_path;   /* the two event files (work dir) */
  ReplayWbtSummary kernel, sim;
  int              first_difference;  /* window index, -1: none as far as both go */
} ValidateWbt;

typedef struct {
  char      *target;
  char      *trace_path;              /* or NULL */
  GStrv      argv;                    /* or NULL */
  char      *target_dir;              /* NFS capture (trace_path): replayed here, else NULL */
  guint      nfs_threads;
  GPtrArray *nfs_runs;                /* ValidateNfsRun *, [s * repeat + r]; NULL unless NFS */
  guint      repeat;
  char      *scenario_path;           /* the fitted scenario */
  char      *sim_device;              /* its device name */
  GPtrArray *scheds;                  /* ValidateSched *, in --sched order */
  /* Rankings, scheduler names best first. */
  GStrv      ranking_predicted;       /* by mean latency, lowest first */
  GStrv      ranking_measured;
  GStrv      ranking_predicted_mb_per_s;  /* by throughput, highest first */
  GStrv      ranking_measured_mb_per_s;
  /* The same with ties shown (replay_validate_ranking_text); two rankings
   * agree when these are equal. */
  char      *ranking_predicted_text, *ranking_measured_text;
  char      *ranking_predicted_mb_per_s_text, *ranking_measured_mb_per_s_text;
  /* The same rankings checked on the significantly different pairs only. */
  ValidateRankingCheck ranking_check, ranking_check_mb_per_s;
  /* ValidateWbt *, per scheduler whose first run recorded blk-wbt events
   * (none: a kernel without them, an NFS capture, or wbt never ran). */
  GPtrArray *wbt;
} ReplayValidateReport;

/* The blk-wbt section (replay-validate-wbt.c): a table after the rankings,
 * and "wbt": [{"sched", "kernel_events", "simulated_events", "kernel" and
 * "simulated": {"windows", "ok", "unknown", "unknown_writes", "exceeded",
 * "scale_ups", "scale_downs", "first_step", "min_step", "max_step",
 * "max_inflight"},
 * "first_different_window" (1-based, null: none)}]. */
void        replay_validate_wbt_print (const ReplayValidateReport *report,
                                       FILE                       *out);
void        replay_validate_wbt_json  (JsonBuilder                *b,
                                       const ReplayValidateReport *report);

/* The simulator's name of a blk-mq kernel scheduler (mq-deadline, bfq,
 * kyber, none map to themselves), or NULL for another name. */
const char *replay_validate_sim_sched (const char *kernel_name);

/* The host the fit's buffered writers need (fit.h, FitHost), read from the
 * machine the workload runs on, since validate measures there: MemTotal of
 * @proc_dir/meminfo and vm.dirty_ratio, dirty_background_ratio,
 * dirty_bytes, dirty_background_bytes, dirty_expire_centisecs and
 * dirty_writeback_centisecs of @proc_dir/sys/vm.  Every field is given;
 * the error names the file that is missing or unreadable. */
gboolean    replay_validate_read_host (const char *proc_dir,
                                       FitHost    *host,
                                       GError    **error);

/* A simulated block trace (the simulator's --trace-out, blkparse text) as
 * per-I/O results (traces/trace-results.h): one row per bio from its queue
 * (Q) to its completion, as the captures' rows (fit_write_measured_results),
 * so that both sides' latency is block-layer latency bio by bio, buffered
 * writers' writeback included (the simulator's per-I/O log has their
 * write() calls instead).  Rows are named by the trace's comm, which is the
 * scenario's process name ("flush" for the simulated flusher). */
gboolean    replay_validate_sim_trace_results (const char *trace_path,
                                               const char *results_path,
                                               GError    **error);

/* Check the options (no device touched): a block device target, known
 * schedulers without repeats, repeat within 1..REPLAY_VALIDATE_MAX_REPEAT,
 * one workload; an NFS capture with a target_dir on the target's file
 * system, and a target_dir only with one (replay_validate_nfs_check). */
gboolean    replay_validate_check (const ReplayValidateOptions *opts,
                                   GError                     **error);

/* Run all four stages.  The target's scheduler is restored after each
 * scheduler's runs, on every path. */
ReplayValidateReport *replay_validate_run (const ReplayValidateOptions *opts,
                                           GError                     **error);

/* Stage 4 alone, from per-I/O results files (traces/trace-results.h):
 * @measured[s * repeat + r] and @predicted[s * repeat + r] for scheduler
 * s of @scheds (NULL-terminated, the first trained) and repeat r.  The
 * processes are renamed as above and each file rewritten with the new
 * names into @work_dir as measured-SCHED-rR.csv and predicted-SCHED-sR.csv
 * (R from 1).  For tests and for reruns by hand. */
ReplayValidateReport *replay_validate_compare_files (const char *const *scheds,
                                                     guint              repeat,
                                                     const char *const *measured,
                                                     const char *const *predicted,
                                                     const char        *work_dir,
                                                     GError           **error);

void   replay_validate_report_free  (ReplayValidateReport *report);
/* Aligned tables. */
void   replay_validate_report_print (const ReplayValidateReport *report,
                                     FILE                       *out);
/* The JSON document (pretty, deterministic); caller frees. */
char  *replay_validate_report_to_json (const ReplayValidateReport *report);
/* --plot DIR: DIR/latency-cdf.png (the first repeat's response-time CDFs,
 * predicted dashed and measured solid, one colour per scheduler) and
 * DIR/predicted-vs-measured.png (mean latency and throughput bars with
 * the measured 95 % intervals).  REPLAY_PLOT_ERROR_NO_GNUPLOT without
 * gnuplot. */
gboolean replay_validate_plot (const ReplayValidateReport *report,
                               const char                 *dir,
                               GError                    **error);

/* ---- NFS captures (replay-validate-nfs.c) --------------------------------
 * An NFS capture is replayed server-side (replay-nfs.h) in target_dir, on
 * the file system of the target, with the block capture running on the
 * target; the fit is of that block capture. */

/* The NFS half of replay_validate_check: a capture needs target_dir and
 * target_dir needs a capture; threads only with it; target_dir is an
 * existing directory whose file system's device (st_dev) is the target
 * (st_rdev), both named when not.  Stats only: no device is opened. */
gboolean replay_validate_nfs_check   (const ReplayValidateOptions *opts,
                                      GError                     **error);

/* One measured run: replay the capture in target_dir with a block
 * capture of the target written to @block_capture.  The replay's setup
 * (files made and filled under DIR/iosim-nfs-replay/) runs first, then
 * sync(2) and /proc/sys/vm/drop_caches = 1 so the run starts cold, then
 * the block capture starts, the workers run, the file system is synced
 * (syncfs) so the run's writes are recorded whenever writeback would have
 * sent them, and the capture stops.  @run's sched, run, json_path and
 * csv_path are the caller's; the figures are filled in, and both files
 * written, also when operations failed (then an error names them). */
gboolean replay_validate_nfs_measure (const ReplayValidateOptions *opts,
                                      const char                  *block_capture,
                                      ValidateNfsRun              *run,
                                      GError                     **error);

/* The fitted scenario with a header saying what the workload was: the
 * pool of workers, how many of its threads did block I/O, and that they
 * are fitted as independent trace-driven processes (what that loses). */
gboolean replay_validate_nfs_write_scenario (const ReplayValidateOptions *opts,
                                             const FitResult             *fit,
                                             const char                  *path,
                                             GError                     **error);

void     replay_validate_nfs_run_free (ValidateNfsRun *run);
/* Give @report the NFS workload's members (target_dir, nfs_threads) and
 * take @runs (ValidateNfsRun *, freed with the report). */
void     replay_validate_nfs_report_take (ReplayValidateReport        *report,
                                          const ReplayValidateOptions *opts,
                                          GPtrArray                   *runs);
/* The NFS lines of the text report (the workload, then one per run), and
 * its members of the JSON "workload" object; nothing for other workloads. */
void     replay_validate_nfs_print    (const ReplayValidateReport *report,
                                       FILE                       *out);
struct _JsonBuilder;
void     replay_validate_nfs_add_json (struct _JsonBuilder        *builder,
                                       const ReplayValidateReport *report);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayValidateReport, replay_validate_report_free)

G_END_DECLS
