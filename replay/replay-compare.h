/* replay-compare.h — comparing simulated with measured per-I/O results.
 *
 * Both inputs are results CSVs (traces/trace-results.h): A is simulated,
 * B is measured.  Each process present in both (matched by name) and the
 * whole of each file are compared by:
 *   - the Ruemmler–Wilkes demerit figure: RMS horizontal distance between
 *     the response-time (latency_ns) CDFs, sampled at 10,000 probability
 *     points p = k/10000, k = 1..10000, with linear interpolation between
 *     CDF points, as DiskSim's rms.c does (anchors.md §A.1.4, §D.1);
 *     reported in ms and as % of the measured mean;
 *   - the mean horizontal distance (Wasserstein-1) on the same points;
 *   - the Kolmogorov–Smirnov statistic D (largest vertical CDF gap);
 *   - signed relative errors (sim - measured) / measured in % of mean, p50,
 *     p95, p99 latency, throughput and IOPS.
 * Throughput and IOPS of a process are taken over that process's own span
 * (first issue to last completion); "overall" uses the whole file's span.
 *
 * Both files must time the same span of an I/O: two files whose
 * latency_kind (trace-results.h) is known and differs (a replay's syscall
 * latency against fit --measured's block Q2C) are refused, unless
 * REPLAY_COMPARE_ALLOW_MIXED_LATENCY; a file of unknown kind compares with
 * any, and the report says which kinds it compared.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "traces/trace-results.h"

G_BEGIN_DECLS

#define REPLAY_COMPARE_POINTS 10000

/* ---- Distribution metrics on sorted samples (pure, for tests) ---------- */

/* Quantile of ascending @sorted (n >= 1) at @p in [0, 1]: linear
 * interpolation between order statistics, x(h) with h = p * (n - 1), i.e.
 * the CDF is the polyline through (x_i, i / (n - 1)). */
double replay_compare_quantile (const double *sorted,
                                gsize         n,
                                double        p);

/* Demerit (RMS of Q_a(p) - Q_b(p) over the 10,000 points), in the unit of
 * the samples.  @mean_distance (may be NULL) receives the mean |Δx|. */
double replay_compare_demerit  (const double *a_sorted,
                                gsize         n_a,
                                const double *b_sorted,
                                gsize         n_b,
                                double       *mean_distance);

/* Two-sample KS statistic D = sup_x |F_a(x) - F_b(x)| of the empirical
 * step CDFs; ties are handled by stepping past equal values together. */
double replay_compare_ks       (const double *a_sorted,
                                gsize         n_a,
                                const double *b_sorted,
                                gsize         n_b);

/* ---- Comparing two results files -------------------------------------- */

/* Summary of one side (simulated or measured) of one group. */
typedef struct {
  guint64 ios;
  guint64 bytes;
  double  span_s;          /* first issue to last completion */
  double  mean_ms;
  double  p50_ms;
  double  p95_ms;
  double  p99_ms;
  double  max_ms;
  double  mb_per_s;        /* 10^6 bytes per second over span_s */
  double  iops;
} ReplayCompareSide;

/* One row of the comparison: a process, or "overall". */
typedef struct {
  char              *name;
  ReplayCompareSide  sim;
  ReplayCompareSide  meas;
  double  demerit_ms;
  double  demerit_pct;         /* of the measured mean latency */
  double  mean_distance_ms;
  double  ks_d;
  double  mean_error_pct;      /* signed: (sim - meas) / meas */
  double  p50_error_pct;
  double  p95_error_pct;
  double  p99_error_pct;
  double  throughput_error_pct;
  double  iops_error_pct;
  /* The samples behind both CDFs: gint64 latency_ns (complete_ns -
   * issue_ns), ascending; for --cdf and plots. */
  GArray *sim_latency_ns;
  GArray *meas_latency_ns;
} ReplayCompareRow;

typedef struct {
  TraceLatencyKind  simulated_latency_kind;
  TraceLatencyKind  measured_latency_kind;
  GPtrArray        *processes;        /* ReplayCompareRow *, sorted by name */
  ReplayCompareRow *overall;
  GPtrArray        *only_simulated;   /* char *, process names, sorted */
  GPtrArray        *only_measured;    /* char *, sorted */
  char             *simulated_path;
  char             *measured_path;
} ReplayCompareReport;

typedef enum {
  REPLAY_COMPARE_FLAGS_NONE = 0,
  /* Compare files of two different known latency kinds anyway. */
  REPLAY_COMPARE_ALLOW_MIXED_LATENCY = 1 << 0,
} ReplayCompareFlags;

/* Error when either file holds no I/O (G_IO_ERROR_INVALID_DATA) or, without
 * REPLAY_COMPARE_ALLOW_MIXED_LATENCY, when their latency kinds are known
 * and differ (G_IO_ERROR_INVALID_ARGUMENT, saying which side has which and
 * how to get matching files).  Percentages whose reference is zero are NaN
 * (printed as "-", JSON null). */
ReplayCompareReport *replay_compare_results (const TraceResults *simulated,
                                             const TraceResults *measured,
                                             GError            **error);
ReplayCompareReport *replay_compare_results_full (const TraceResults *simulated,
                                                  const TraceResults *measured,
                                                  ReplayCompareFlags  flags,
                                                  GError            **error);
/* Load both files and compare them; errors name the file and line (the
 * latency-kind refusal names both files). */
ReplayCompareReport *replay_compare_files   (const char  *simulated_path,
                                             const char  *measured_path,
                                             GError     **error);
ReplayCompareReport *replay_compare_files_full (const char         *simulated_path,
                                                const char         *measured_path,
                                                ReplayCompareFlags  flags,
                                                GError            **error);
void  replay_compare_report_free  (ReplayCompareReport *report);
/* Aligned text table. */
void  replay_compare_report_print (const ReplayCompareReport *report,
                                   FILE                      *out);
/* JSON: {"simulated": path, "measured": path, "simulated_latency_kind":
 * "syscall" | "block-q2c" | "unknown", "measured_latency_kind": ...,
 * "processes": [{"name": ...,
 * "demerit_ms": ..., ...}], "overall": {...}, "only_in_simulated": [...],
 * "only_in_measured": [...]}; caller frees. */
char *replay_compare_report_to_json (const ReplayCompareReport *report);

/* ---- Response-time CDFs as data ---------------------------------------- */

#define REPLAY_COMPARE_CDF_MAX_POINTS 1000

/* One point (x_i, i / n) of the empirical step CDF of n samples, i 1-based. */
typedef struct {
  gint64 latency_ns;
  double cum_fraction;
} ReplayCompareCdfPoint;

/* The points of the empirical CDF of ascending @sorted_ns (gint64, n >= 1)
 * to write or draw: every sample when n <= @max_points (>= 2), else the
 * @max_points evenly spaced order statistics
 *   i_k = 1 + round ((k - 1) (n - 1) / (max_points - 1)),  k = 1..max_points,
 * a deterministic subset of the full CDF that keeps the minimum and the
 * maximum and ends at cum_fraction 1.  Returns a GArray of
 * ReplayCompareCdfPoint. */
GArray *replay_compare_cdf_points (const GArray *sorted_ns,
                                   guint         max_points);

/* CSV of the CDFs, header "process,side,latency_ns,cum_fraction": for each
 * process present in both files (sorted by name), then "overall", the
 * simulated then the measured points of replay_compare_cdf_points() with
 * REPLAY_COMPARE_CDF_MAX_POINTS.  Names with a comma, quote or line break
 * are quoted as RFC 4180 says.  Caller frees. */
char *replay_compare_report_to_cdf_csv (const ReplayCompareReport *report);

/* ---- Summaries: iosim run --json against fio's JSON -------------------- */

/* "Simulate my fio job, then run it": the simulated side is iosim run
 * --json of one run (one elevator), the measured side fio 3.33's
 * --output-format=json or json+ (a few "note:" or "fio:" lines before the
 * JSON are skipped).  Per fio job entry, in order, the name is jobname, or
 * jobname.K for the K-th clone of a job with numjobs > 1 (as iosim names
 * a job file's clones); the direction is the one the simulated process
 * ran.  Measured: read|write io_bytes, total_ios, bw_bytes (10^6 B/s =
 * MB/s), iops, runtime, and completion latency clat_ns mean, max and the
 * 50th, 95th and 99th percentiles (NaN when fio's percentile_list has
 * none).  Simulated: the process's ios, bytes, mb_per_s, iops and
 * latency_ns (issue to completion as the process saw it). */
typedef struct {
  char              *name;
  char              *op;           /* "read" or "write" */
  ReplayCompareSide  sim;          /* span_s: NaN (the JSON has rates) */
  ReplayCompareSide  meas;         /* span_s: fio's runtime */
  double  mean_error_pct;          /* signed: (sim - meas) / meas */
  double  p50_error_pct;
  double  p95_error_pct;
  double  p99_error_pct;
  double  max_error_pct;
  double  throughput_error_pct;
  double  iops_error_pct;
} ReplayCompareSummaryRow;

typedef struct {
  GPtrArray *processes;            /* ReplayCompareSummaryRow *, sorted by name */
  GPtrArray *only_simulated;       /* char *, sorted */
  GPtrArray *only_measured;        /* char *, sorted */
  char      *simulated_path;
  char      *measured_path;
  char      *run_label;            /* the simulated run's elevators */
  char      *fio_version;
} ReplayCompareSummary;

/* Whether @path holds JSON (its first character past "note:"/"fio:"
 * lines is '{'), not a results CSV. */
gboolean replay_compare_file_is_json (const char *path);
/* Errors name the file and the job entry or key (G_IO_ERROR_INVALID_DATA):
 * not iosim's or fio's JSON, the sides swapped, several simulated runs,
 * a job fio reports an error for, a job with reads and writes, a
 * direction other than simulated, clones
 * that fio merged (group_reporting). */
ReplayCompareSummary *replay_compare_summary_files (const char  *simulated_path,
                                                   const char  *measured_path,
                                                   GError     **error);
void  replay_compare_summary_free  (ReplayCompareSummary *summary);
/* Aligned text table. */
void  replay_compare_summary_print (const ReplayCompareSummary *summary,
                                    FILE                       *out);
/* JSON: {"simulated", "measured", "run", "fio_version", "processes":
 * [{"name", "op", errors in %, "simulated": {...}, "measured": {...}}],
 * "only_in_simulated", "only_in_measured"}; caller frees. */
char *replay_compare_summary_to_json (const ReplayCompareSummary *summary);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayCompareReport, replay_compare_report_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayCompareSummary, replay_compare_summary_free)

G_END_DECLS
