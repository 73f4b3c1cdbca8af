/* fit.h — fitting a fixed-rate device model and trace-driven processes to
 * a block trace, and writing the scenario that re-creates the trace.
 *
 * Device: per op, ordinary least squares (GSL gsl_fit_linear) of the
 * request service time D2C on its size:  D2C = overhead + bytes / bandwidth.
 * Requests issued while others were in flight wait inside the device, so
 * only requests with in_flight_at_issue == 1 are used when there are at
 * least FIT_MIN_ISOLATED of them.  With a single request size the slope
 * is not identifiable: the overhead is the mean D2C (transfer included)
 * and no bandwidth is written, so the model default applies.
 * The spread around that line is kept too: 21 quantiles of the per-request
 * overhead (D2C minus the fitted transfer time), which the scenario gives
 * the fixed model as overhead_quantiles so that it draws service times
 * from the measured distribution instead of paying the intercept always.
 *
 * Processes: per pid, counts, bytes, op mix, and whether the stream is
 * closed-loop: its I/Os are taken in queue order as steps (a bio that is
 * contiguous with the previous one, of the same op, and queued while that
 * one was in flight belongs to the same step: one submission split into
 * several bios); a step is dependent when it was queued after every bio of
 * the previous step completed; the stream is closed when most steps are
 * dependent.  Think time = queue time - previous step's last completion,
 * over the dependent steps.  Flushes are counted, not simulated (the
 * trace-driven process issues reads and writes only), and said so.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "traces/trace-lifecycle.h"

G_BEGIN_DECLS

#define FIT_ERROR (fit_error_quark ())
GQuark fit_error_quark (void);

typedef enum {
  FIT_ERROR_FAILED,
  FIT_ERROR_NO_DATA,        /* nothing to fit (no completed requests) */
  FIT_ERROR_DEVICE,         /* several devices and none chosen, or bad --device */
} FitError;

/* Requests issued alone: the minimum count to fit on them only. */
#define FIT_MIN_ISOLATED  20
/* Fewer requests than this of an op: no fit for that op. */
#define FIT_MIN_REQUESTS   3
/* Quantiles of the residual overhead: p = 0, 0.05, ..., 1. */
#define FIT_N_QUANTILES   21

/* The fit of one op (read or write). */
typedef struct {
  TraceOp  op;
  guint64  n_total;              /* completed requests of this op */
  guint64  n_isolated;           /* of which issued with nothing else in flight */
  guint64  n_used;               /* requests the fit used */
  gboolean isolated_only;        /* n_used are the isolated ones */
  guint    n_sizes;              /* distinct sizes among the used requests */
  gboolean fitted;               /* n_used >= FIT_MIN_REQUESTS */
  gboolean bandwidth_identified; /* >= 2 sizes and a positive slope */
  double   overhead_ns;          /* intercept, or mean D2C if not identified */
  double   overhead_se_ns;       /* standard error of the intercept (OLS) */
  double   ns_per_byte;          /* slope; 0 if not identified */
  double   ns_per_byte_se;       /* standard error of the slope */
  double   bandwidth_bytes_per_s;/* 1e9 / slope; 0 if not identified */
  double   r2;                   /* NaN if not identified */
  double   residual_rms_ns;      /* sqrt(mean residual^2) */
  double   mean_d2c_ns;
  double   mean_bytes;           /* mean size of the used requests */
  /* Quantiles at p = k / (FIT_N_QUANTILES - 1) of the used requests' overhead
   * D2C - bytes * ns_per_byte (D2C itself when the bandwidth is not
   * identified), each clamped at >= 0; linear interpolation between order
   * statistics, so [FIT_N_QUANTILES / 2] is the usual median.  Valid when
   * fitted; zeros otherwise. */
  double   overhead_quantiles_ns[FIT_N_QUANTILES];
} FitDeviceOp;

/* One traced process (pid). */
typedef struct {
  guint32  pid;
  char    *comm;                 /* "" when the trace gives none */
  char    *name;                 /* trace_process_name (comm, pid) */
  guint64  ios;
  guint64  bytes;
  guint64  ios_by_op[TRACE_OP_OTHER + 1];
  guint64  bytes_by_op[TRACE_OP_OTHER + 1];
  guint64  pairs;                /* consecutive step pairs (steps - 1) */
  guint64  dependent_pairs;      /* next step queued at or after the previous one completed */
  gboolean closed_loop;          /* dependent_pairs > pairs / 2 */
  double   think_mean_ns;        /* over dependent pairs; NaN if none */
  double   think_p50_ns;
  double   think_p95_ns;
  gint64   first_queue_ns;
  gint64   last_complete_ns;
  /* What a pattern = trace process re-issues (models/scenario.c
   * load_trace_stream): reads and writes with data, nothing else. */
  guint64  simulated_ios;
  guint64  flushes;              /* fit_io_is_flush: dropped, FIT_FLUSH_DROPPED_REASON */
  guint64  fua_writes;           /* simulated writes the trace flags FUA or preflush:
                                  * simulated as plain writes */
} FitProcess;

/* Why the fitted workload cannot keep a flush: said wherever one is dropped. */
#define FIT_FLUSH_DROPPED_REASON \
  "the simulator's trace-driven process issues reads and writes only; sim/ has no flush request"

typedef struct {
  char    *trace_path;           /* absolute */
  char    *device_name;          /* "devMAJ_MIN", whatever the trace format */
  char    *kernel_name;          /* basename of the capture's "device", or NULL */
  guint32  dev_major;
  guint32  dev_minor;
  char    *sched;                /* simulator name: none, mq-deadline, ... */
  char    *sched_source;         /* "option", "trace", or "assumed" */
  guint64  capacity_bytes;
  gboolean capacity_from_meta;
  guint    max_in_flight;        /* >= 1 */
  guint64  n_requests;
  guint64  n_ios;
  guint64  requests_by_op[TRACE_OP_OTHER + 1];
  FitDeviceOp read;
  FitDeviceOp write;
  gboolean have_stats;           /* fit_trace fills @stats */
  TraceLifecycleStats stats;
  GPtrArray *processes;          /* FitProcess *, sorted by pid */
  GArray    *ios;                /* TraceIo of the fitted device, queue order */
} FitResult;

typedef struct {
  gboolean    has_device;        /* restrict to dev_major,dev_minor */
  guint32     dev_major;
  guint32     dev_minor;
  const char *sched;             /* override the trace's scheduler, "A" or "A,B,..."
                                  * (kernel names; NULL: the trace's) */
} FitOptions;

/* Map a kernel scheduler name ("none", "mq-deadline", "[bfq] none") to the
 * simulator's of the same block layer: blk-mq names (none, mq-deadline,
 * bfq, kyber) to the blk-mq models, legacy ones (noop, deadline,
 * anticipatory or "as", cfq) to the legacy models.  NULL for a name the
 * simulator does not have. */
char      *fit_sched_from_kernel (const char *kernel_name);

/* Fit one op on @requests (any order; other ops are ignored). */
void       fit_device_op         (const TraceRequest *requests,
                                  gsize               n_requests,
                                  TraceOp             op,
                                  FitDeviceOp        *out);

/* A flush as the trace shows it: a REQ_OP_FLUSH request ("FN", "FF"), or the
 * empty preflush bio (REQ_OP_WRITE | REQ_PREFLUSH, no data: blkparse "FWS
 * 0 + 0") that fsync and sync submit (blkdev_issue_flush, block/blk-flush.c). */
gboolean   fit_io_is_flush       (const TraceIo      *io);

/* Per-process analysis of @ios (sorted by queue time as trace_load_ios
 * returns them).  Returns FitProcess *, sorted by pid. */
GPtrArray *fit_processes         (const TraceIo      *ios,
                                  gsize               n_ios);

/* Fit from arrays that already hold one device.  @meta_device,
 * @meta_scheduler, @meta_size_bytes are the capture metadata (NULL if
 * absent); @trace_path is recorded as given. */
FitResult *fit_arrays            (const char         *trace_path,
                                  const TraceIo      *ios,
                                  gsize               n_ios,
                                  const TraceRequest *requests,
                                  gsize               n_requests,
                                  const char         *meta_device,
                                  const char         *meta_scheduler,
                                  const char         *meta_size_bytes,
                                  const FitOptions   *options,
                                  GError            **error);

/* Read @trace_path (any format traces/ reads), choose the device (the
 * option, else the capture's "devno", else the only one present) and fit. */
FitResult *fit_trace             (const char         *trace_path,
                                  const FitOptions   *options,
                                  GError            **error);

void       fit_result_free       (FitResult *result);

/* The scenario .ini (GKeyFile syntax, comments on their own lines). */
char      *fit_scenario_to_data  (const FitResult *result);
gboolean   fit_write_scenario    (const FitResult *result,
                                  const char      *path,
                                  GError         **error);
/* The fitted device's I/Os as a per-I/O results CSV (traces/trace-results.h):
 * the measured side for `iosim compare`.  Process names are those of the
 * scenario (trace_process_name); issue = Q (or D without Q), latency = Q2C;
 * times count from the first I/O of the trace.  Needs fit_trace()'s or
 * fit_arrays()'s @ios kept in the result (they are). */
gboolean   fit_write_measured_results (const FitResult *result,
                                  const char      *path,
                                  GError         **error);
/* Human-readable aligned report. */
void       fit_print_report      (const FitResult *result,
                                  FILE            *out);
/* The same numbers as JSON; caller frees. */
char      *fit_result_to_json    (const FitResult *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FitResult, fit_result_free)

G_END_DECLS
