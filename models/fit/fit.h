/* fit.h — fitting a fixed-rate device model and trace-driven processes to
 * a block trace, and writing the scenario that re-creates the trace.
 *
 * Device (fit-device.c), kept apart from the scheduler: the time from a
 * request's dispatch (D) to its completion (C) includes waiting inside the
 * device behind the requests dispatched before it, which depends on the
 * scheduler and the depth the trace was taken under.  So:
 *  - the in-flight count n(t) is rebuilt from the D and C times: the busy
 *    time at each depth, the completions at it, and each request's depth
 *    at dispatch.  Little's law, mean in flight = completion rate x mean
 *    D2C over the busy time, is reported as the check of those counts;
 *  - each request's service time is rebuilt for p servers: for p = 1
 *    service = C - max(D, previous completion), exact for any serial
 *    device (it completes in the order it serves); for p > 1 a FIFO device
 *    (as sim-device.c): a request starts at max(D, the earliest time one
 *    of the p servers is free, i.e. the completion of the request that
 *    server held);
 *  - the parallelism p: under p FIFO servers no request may complete
 *    before its rebuilt start (for p = 1: completions come in dispatch
 *    order, within one request in a hundred: requests reach a loop
 *    device's server through threads on different CPUs and a few overtake);
 *    and a request dispatched at depth 2 .. p found a server free, so its
 *    service is its D2C, while those dispatched deeper get the rebuilt
 *    time: with p too small they are cut short (their start is put after
 *    completions they overlapped), with the true p both groups show the
 *    device's own time (t of "deeper than p" > -3, least squares of
 *    service on 1, size and that flag).  Requests dispatched to an idle
 *    device are left out of that comparison: part of their time is a
 *    latency a busy device overlaps with the previous service.  p is the
 *    smallest that passes; it is identified, not a lower bound, when
 *    requests dispatched at depth p + 1 waited (their D2C is longer than
 *    at depth <= p, t > 3); a trace that kept one depth cannot tell;
 *  - per op, ordinary least squares (gsl_fit_linear) of service time on
 *    size: service = overhead + bytes / bandwidth, with standard errors
 *    and 95 % confidence intervals (Student t, n - 2 degrees of freedom).
 *    With a single request size the slope is not identifiable: the
 *    overhead is the mean service time (transfer included) and no
 *    bandwidth is written, so the model default applies; the same when
 *    larger requests are not slower, or when the line's intercept is
 *    below 0 (no request takes less than nothing);
 *  - the spread around that line: quantiles of the per-request overhead
 *    (service minus the fitted transfer time) every 5 % up to p95, then
 *    finer in the tail (p96 .. p99, p99.1 .. p99.9, ...) as far as the
 *    requests reach, then the second-largest and the largest value, so
 *    the last step to the maximum holds the mass of one request instead
 *    of 5 %.  The scenario gives them to the fixed model with their
 *    probabilities (overhead_quantiles, overhead_quantile_p).
 *  - the kind of model (fit-disk.c): `fixed` (the above) or `disk`, which
 *    adds a seek curve over the distance from the previous request served
 *    (serial devices only), chosen by the mean absolute error on every
 *    5th request held out of both fits, or forced by --model; then `ssd`
 *    (fit-ssd.c: overlapped latencies, one shared transfer pipeline, its
 *    own servers) against `fixed` the same way, and `empirical`.
 *
 * Processes: per pid, counts, bytes, op mix, and whether the stream is
 * closed-loop: its I/Os are taken in queue order as steps (a bio that is
 * contiguous with the previous one, of the same op, and queued while that
 * one was in flight belongs to the same step: one submission split into
 * several bios); a step is dependent when it was queued after every bio of
 * the previous step completed; the stream is closed when most steps are
 * dependent.  Think time = queue time - previous step's last completion,
 * over the dependent steps.  A contiguous bio queued after one of the
 * stream's own bios completed starts a new step even when others are
 * still in flight: the kernel queues the bios of one submission without
 * waiting for the device, and a submitter that does wait (for a request
 * in blk_mq_get_tag / get_request, or for a completion at its iodepth) is
 * woken by a completion; so a kworker writing at the device's pace is a
 * stream of steps, not one burst.  Flushes are counted, not simulated (the
 * trace-driven process issues reads and writes only), and said so.
 *
 * Writeback (fit-writeback.c): page-cache writeback is the kernel's, not
 * the process's, so it is fitted as a buffered writer of the simulator
 * ([process] io = buffered, op = write) whose simulated page cache and
 * writeback era pace the writes, given the host (memory, dirty limits)
 * that no trace records.  What is writeback:
 *  - the data writes of a flusher thread without the sync flag
 *    (wbc_to_write_flags, 4.10+: REQ_SYNC only for WB_SYNC_ALL; before,
 *    WRITE_SYNC only for WB_SYNC_ALL too): kworker/ (the bdi_wq workers,
 *    wb_workfn, 3.10+; not the high-priority kworker/N:MH of kblockd),
 *    flush-MAJ:MIN (per-bdi flushers, 2.6.32-3.9), pdflush (2.6.0-2.6.31),
 *    bdflush and kupdated (2.4);
 *  - the sync writes of an fsync: a process's sync data writes followed by
 *    its own flush (vfs_fsync -> file_write_and_wait_range with
 *    WB_SYNC_ALL, then blkdev_issue_flush), each burst of more than one
 *    bio queued without waiting for the previous one (writeback submits
 *    the dirty pages in one go; O_DIRECT writes at iodepth 1 wait).
 * A process is folded into a writer only when all its data I/O is such
 * writeback; otherwise it stays trace-driven, whole.
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
  FIT_ERROR_OPTIONS,        /* options that cannot hold (the host: fit_host_check) */
} FitError;

/* Fewer requests than this of an op: no fit for that op. */
#define FIT_MIN_REQUESTS   3
/* The body of the overhead quantiles: p = 0, 0.05, ..., 1 (21 values);
 * the fitted list keeps p = 0 .. 0.95 of them and refines the tail. */
#define FIT_N_QUANTILES   21
/* At most this many quantiles in a fitted list (body, tail, maximum). */
#define FIT_MAX_QUANTILES 64
/* Candidate parallelism is 1 .. min (max in flight, this). */
#define FIT_MAX_PARALLELISM 1024

/* The fit of one op (read or write). */
typedef struct {
  TraceOp  op;
  guint64  n_total;              /* completed requests of this op */
  guint64  n_used;               /* requests the fit used: rebuilt service >= 0 */
  guint64  n_inconsistent;       /* completed before the rebuilt start: left out */
  guint    n_sizes;              /* distinct sizes among the used requests */
  gboolean fitted;               /* n_used >= FIT_MIN_REQUESTS */
  gboolean bandwidth_identified; /* >= 2 sizes, a positive slope and intercept */
  double   overhead_ns;          /* intercept, or mean service if not identified */
  double   overhead_se_ns;       /* standard error of the intercept (OLS) */
  double   overhead_ci95_ns;     /* half-width of its 95 % confidence interval */
  double   ns_per_byte;          /* slope; 0 if not identified */
  double   ns_per_byte_se;       /* standard error of the slope */
  double   ns_per_byte_ci95;     /* half-width of its 95 % confidence interval */
  double   bandwidth_bytes_per_s;/* 1e9 / slope; 0 if not identified */
  double   bandwidth_lo_bytes_per_s;  /* 1e9 / (slope + ci95) */
  double   bandwidth_hi_bytes_per_s;  /* 1e9 / (slope - ci95); inf if it reaches 0 */
  double   r2;                   /* NaN if not identified */
  double   residual_rms_ns;      /* sqrt(mean residual^2) */
  double   mean_service_ns;      /* mean rebuilt service time of the used requests */
  double   mean_d2c_ns;          /* mean D2C of the same requests (waiting included) */
  double   mean_bytes;           /* mean size of the used requests */
  /* Quantiles at probabilities quantile_p[k] (0 first, 1 last, rising) of
   * the used requests' overhead: service - bytes * ns_per_byte (the service
   * itself when the bandwidth is not identified), each clamped at >= 0;
   * linear interpolation between order statistics, so [FIT_N_QUANTILES / 2]
   * is the usual median.  Valid when fitted; n_quantiles = 0 otherwise. */
  guint    n_quantiles;
  double   quantile_p[FIT_MAX_QUANTILES];
  double   overhead_quantiles_ns[FIT_MAX_QUANTILES];
} FitDeviceOp;

/* One in-flight level: rates over the busy time, and the requests
 * dispatched at it (this one included). */
typedef struct {
  guint    in_flight;            /* n >= 1 */
  double   time_ns;              /* time spent with n in flight */
  guint64  completions;          /* completions that happened at n (n before the C) */
  guint64  dispatched;           /* requests dispatched at depth n */
  double   mean_d2c_ns;          /* of those; NaN if none */
  double   mean_service_ns;      /* their rebuilt service; NaN if none */
} FitDepthLevel;

/* The device's queue, separated from its service (fit-device.c). */
typedef struct {
  guint    parallelism;          /* fitted: requests served at once */
  guint    identified_up_to;     /* highest depth at dispatch */
  gboolean parallelism_bounded;  /* p + 1 was rejected: the fit is not a lower bound */
  double   depth_t;              /* t of "dispatched deeper than p" in the service (0: untold) */
  double   next_depth_t;         /* t of "dispatched at depth p + 1" in D2C; NaN at the deepest */
  double   busy_ns;              /* time with at least one request in flight */
  double   completion_rate_per_s;/* completions / busy time */
  double   mean_in_flight;       /* time average of n over the busy time */
  double   mean_d2c_ns;          /* over every completed request */
  double   little_in_flight;     /* completion rate x mean D2C: = mean_in_flight */
  double   mean_service_ns;      /* rebuilt service times, all ops */
  GArray  *levels;               /* FitDepthLevel, by in_flight, levels with busy time */
  gboolean loop;                 /* a loop device (major 7): written via = loop */
} FitDeviceQueue;

/* Model kinds of the device (fit-disk.c): `fixed` is overhead + bytes /
 * bandwidth per op; `disk` adds a seek curve over the distance from the
 * previous request served; `ssd` (fit-ssd.c) overlaps latencies across
 * the device's servers and passes every transfer through one shared
 * pipeline; `empirical` (fit-empirical.c) keeps the measured service times
 * by size and distance class.  AUTO chooses by held-out goodness of fit. */
typedef enum {
  FIT_MODEL_AUTO,
  FIT_MODEL_FIXED,
  FIT_MODEL_DISK,
  FIT_MODEL_EMPIRICAL,
  FIT_MODEL_SSD,
} FitModelKind;

/* The empirical kind (fit-empirical.c): per op, cells of size class x
 * distance class, each with the quantiles of its requests' service times
 * (models/dev/dev-empirical.c draws from them). */
typedef struct {
  guint64  bytes_lo, bytes_hi;   /* (lo, hi] */
  guint64  dist_lo, dist_hi;     /* [lo, hi] sectors; hi G_MAXUINT64: no bound */
  guint64  n;                    /* requests in the cell */
  guint    n_quantiles;
  double   p[FIT_MAX_QUANTILES];
  double   q_ns[FIT_MAX_QUANTILES];
} FitEmpiricalCell;

typedef struct {
  gboolean fitted;
  const char *why_not;           /* static text when not fitted, else NULL */
  guint    window;               /* a request's distance is from the last this many started */
  GArray  *cells[2];             /* FitEmpiricalCell: [0] reads, [1] writes */
} FitEmpiricalFit;

/* Columns of the disk regression, at most (fit-disk.c). */
#define FIT_DISK_MAX_COLS 6

/* The disk kind: for a serial device, each request's service time against
 * the seek distance d (sectors from the end of the previous request served
 * to its start) by linear least squares:
 *   service = overhead + write_extra [write] + [d > 0] (a + rotation)
 *             + b sqrt(d) + c d + bytes / bandwidth.
 * The mean rotational latency (half a revolution) of a request that moved
 * cannot be told from the seek curve's a: seek_a_rot_ns holds both.  With
 * no sequential request (d = 0) the overhead cannot be told from them
 * either: seek_a_rot_ns then holds overhead + a + rotation and
 * overhead_separated is FALSE. */
typedef struct {
  gboolean fitted;
  const char *why_not;           /* static text when not fitted, else NULL */
  guint64  n_used;               /* requests in the regression */
  guint64  n_sequential;         /* d = 0 */
  guint64  n_random;             /* d > 0 */
  guint    n_sizes;
  gboolean overhead_separated;   /* sequential and random requests present */
  gboolean writes_separate;      /* reads and writes present: write_extra fitted */
  gboolean bandwidth_identified; /* >= 2 sizes */
  double   overhead_ns, overhead_se_ns;          /* NaN when not separated */
  double   write_extra_ns, write_extra_se_ns;    /* 0 / NaN when not fitted */
  double   seek_a_rot_ns, seek_a_rot_se_ns;      /* a + mean rotation (+ overhead, see above) */
  double   seek_b_ns, seek_b_se_ns;              /* ns per sqrt(sector) */
  double   seek_c_ns, seek_c_se_ns;              /* ns per sector */
  double   ns_per_byte, ns_per_byte_se;          /* 0 / NaN when not identified */
  double   bandwidth_bytes_per_s;                /* 1e9 / ns_per_byte; 0 if not identified */
  double   t95;                  /* Student t, 97.5 %, n - k degrees of freedom */
  double   r2;                   /* of the whole regression */
  double   residual_rms_ns;
  double   residual_rms_moved_ns;  /* of the requests with d > 0 */
  guint64  stroke_sectors;       /* the capacity: the longest seek */
  /* The seek curve (a + rotation + b sqrt(d) + c d, with the overhead when
   * not separated) at a third of the stroke, with its 95 % half-width. */
  double   seek_third_ns, seek_third_ci95_ns;
  /* Internal: which column holds what (-1 absent), and the covariance. */
  int      col_intercept, col_write, col_random, col_sqrt, col_lin, col_bytes;
  guint    n_cols;
  double   coef[FIT_DISK_MAX_COLS];
  double   cov[FIT_DISK_MAX_COLS * FIT_DISK_MAX_COLS];
} FitDiskFit;

/* The ssd kind (fit-ssd.c; models/dev/dev-ssd.c simulates it): per op a
 * latency that the device's servers overlap and a transfer through one
 * pipeline shared by all of them,
 *   service = max (latency, pipe_wait) + bytes / bandwidth,
 * where pipe_wait is how long after the request's start the transfers of
 * the requests started before it still ran (their completions, in the
 * model the end of their transfers).  Which requests waited for the
 * pipeline depends on the latency being fitted, so the fit alternates:
 * classify, solve the linear least squares of both classes together,
 * classify again, until the classes no longer change.  The servers are
 * its own: a shared pipeline completes requests in the order they started,
 * which makes the device look serial to fit_device_queue, so the ssd
 * kind's parallelism is the one whose fit predicts held-out requests best. */
typedef struct {
  gboolean fitted;
  const char *why_not;           /* static text when not fitted, else NULL */
  guint    parallelism;          /* servers whose latencies overlap */
  guint    first_candidate;      /* parallelisms tried: first_candidate .. candidates */
  guint    candidates;
  double   held_out_mae_ns;      /* of the chosen parallelism, fitted without them */
  guint64  n_used;
  guint64  n_waited;             /* requests whose transfer waited for the pipeline */
  guint    iterations;
  gboolean converged;            /* the classes stopped changing */
  gboolean op_fitted[2];         /* [0] reads, [1] writes; the other op takes its values */
  double   latency_ns[2], latency_se_ns[2];
  double   ns_per_byte[2], ns_per_byte_se[2];
  double   bandwidth_bytes_per_s[2];
  double   t95;                  /* Student t, 97.5 %, n - k degrees of freedom */
  double   r2;                   /* of the service times */
  double   residual_rms_ns;
} FitSsdFit;

/* The choice of kind: fitted on four requests in five (service order),
 * judged on the fifth.  fixed against disk (a serial device) by the mean
 * absolute error of their predictions; where fixed stands, fixed against
 * ssd the same way; then the empirical kind against the one chosen by the
 * continuous ranked probability score of what each simulates (the fixed
 * kind's distribution, the disk and ssd kinds' points, the empirical
 * cell). */
typedef struct {
  FitModelKind requested;
  FitModelKind chosen;
  const char  *reason;           /* static text: why this kind */
  gboolean     compared;         /* fixed and disk fitted and judged */
  guint64      n_train;
  guint64      n_held_out;
  double       fixed_r2, disk_r2;                 /* on the training requests */
  double       fixed_held_out_mae_ns, disk_held_out_mae_ns;
  double       mae_gain_t;       /* t of mean(|e_fixed| - |e_disk|) over the held out */
  FitDiskFit   disk;             /* on every usable request */
  /* fixed (as fit_device_queue's servers rebuilt its times) against ssd
   * (with its own servers), on the requests fit_ssd_held_out holds out:
   * the absolute error of each one's completion given its start. */
  gboolean     ssd_compared;
  guint64      ssd_n_held_out;
  double       ssd_fixed_held_out_mae_ns, ssd_held_out_mae_ns;
  double       ssd_gain_t;       /* t of mean(|e_fixed| - |e_ssd|) over the held out */
  FitSsdFit    ssd;              /* on every usable request */
  /* The empirical kind against the fixed/disk choice. */
  gboolean     empirical_compared;
  FitModelKind empirical_rival;  /* the kind it was judged against */
  guint64      empirical_n_train, empirical_n_held_out;
  double       rival_held_out_crps_ns, empirical_held_out_crps_ns;
  double       crps_gain_t;      /* t of mean(crps_rival - crps_empirical) */
  FitEmpiricalFit empirical;     /* on every usable request */
  /* The chosen kind against the service times it was fitted to
   * (fit_model_demerit): the Ruemmler-Wilkes demerit of what it simulates
   * (the fixed and empirical kinds' distributions, drawn at 16 stratified
   * probabilities per request; the disk and ssd kinds' points) against the
   * observed times; NaN when not computed. */
  double       demerit_ns;
  double       demerit_observed_mean_ns;
  guint64      demerit_n;        /* observed service times compared */
} FitModelChoice;

/* Free what @choice holds (the empirical cells). */
void        fit_model_choice_clear (FitModelChoice *choice);

const char *fit_model_kind_name  (FitModelKind kind);
/* "fixed", "disk", "ssd", "empirical", "auto"; FALSE for anything else. */
gboolean    fit_model_kind_parse (const char   *text,
                                  FitModelKind *out);

/* The disk kind on @requests with the service times fit_device_queue
 * rebuilt, for a device serving @parallelism at once (only 1 is fitted:
 * the service order is then the completion order); @stroke_sectors is
 * the capacity. */
void        fit_disk_fit         (const TraceRequest *requests,
                                  const double       *service_ns,
                                  gsize               n_requests,
                                  guint               parallelism,
                                  guint64             stroke_sectors,
                                  FitDiskFit         *out);
/* The seek curve of @fit at @d sectors (0 at d = 0) and its 95 % half-width. */
double      fit_disk_seek_ns     (const FitDiskFit   *fit,
                                  double              d_sectors,
                                  double             *ci95_ns);
/* The [device] keys of a `kind = disk` device (models/dev/dev-disk.c)
 * that reproduce @fit, for a disk of @capacity_bytes: the rpm and the
 * cylinders are dev-disk's documented defaults (not identified: the mean
 * rotation is taken off a + rotation), one rate for all zones, lookahead
 * and write cache on (a sequential request paid no rotation in the fit).
 * NULL and @error when that would not reproduce the fit: overhead or
 * bandwidth not identified, residuals with no room for the rotation,
 * parameters dev-disk refuses, or its seek curve off the fitted one by
 * more than the fit's 95 % half-width at some distance. */
char       *fit_disk_device_keys (const FitDiskFit   *fit,
                                  guint64             capacity_bytes,
                                  GError            **error);
/* Fit both kinds and choose (see FitModelChoice). */
void        fit_model_choose     (const TraceRequest *requests,
                                  const double       *service_ns,
                                  gsize               n_requests,
                                  guint               parallelism,
                                  guint64             stroke_sectors,
                                  FitModelKind        requested,
                                  FitModelChoice     *out);

/* The demerit of @choice's chosen kind (see FitModelChoice): the service
 * times are those fit_device_queue rebuilt for @parallelism servers (the
 * ssd kind's own servers for it), @read and @write the fixed kind's fits. */
void        fit_model_demerit    (const TraceRequest *requests,
                                  const double       *service_ns,
                                  gsize               n_requests,
                                  guint               parallelism,
                                  const FitDeviceOp  *read,
                                  const FitDeviceOp  *write,
                                  FitModelChoice     *choice);

/* What a process's I/O was, for the writeback fit (fit-writeback.c). */
typedef enum {
  FIT_WRITEBACK_NONE,            /* its own I/O: trace-driven */
  FIT_WRITEBACK_FLUSHER,         /* a flusher thread's async data writes */
  FIT_WRITEBACK_FSYNC,           /* sync writes each followed by its own flush */
} FitWritebackKind;

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
  gboolean closed_loop;          /* dependent_pairs > pairs / 2 (fit.c
                                  * fit_process_timing says why not more) */
  double   dependent_chance;     /* share of dependent pairs independent gaps
                                  * and latencies would give; NaN: no pairs */
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
  FitWritebackKind writeback;    /* what its writes were (fit-writeback.c) */
  guint    fsyncs;               /* FSYNC: bursts ended by its flush */
  gboolean in_writer;            /* folded into a FitWriter: no trace-driven process */
} FitProcess;

/* The host the page cache needs, which no block trace records: iosim fit's
 * --host-memory and --dirty-* options, or the measuring machine's /proc
 * (iosim validate).  @given says which fields were given; the others take
 * the kernel's defaults (3.2+: 20 % / 10 %, 30 s expiry, 5 s period). */
typedef enum {
  FIT_HOST_MEMORY                 = 1 << 0,
  FIT_HOST_DIRTY_RATIO            = 1 << 1,
  FIT_HOST_DIRTY_BACKGROUND_RATIO = 1 << 2,
  FIT_HOST_DIRTY_BYTES            = 1 << 3,
  FIT_HOST_DIRTY_BACKGROUND_BYTES = 1 << 4,
  FIT_HOST_DIRTY_EXPIRE           = 1 << 5,
  FIT_HOST_DIRTY_WRITEBACK        = 1 << 6,
} FitHostField;

typedef struct {
  guint        given;                      /* FitHostField bits */
  guint64      memory_bytes;
  guint        dirty_ratio_pct;
  guint        dirty_background_ratio_pct;
  guint64      dirty_bytes;                /* 0: the ratio applies, as the sysctl */
  guint64      dirty_background_bytes;     /* 0: the ratio applies */
  guint        dirty_expire_centisecs;
  guint        dirty_writeback_centisecs;
  const char  *source;                     /* where the given values come from
                                            * (static text); NULL: "options" */
} FitHost;

/* The kernel's defaults since 2.6.30 (mm/page-writeback.c): assumed for
 * what the host does not give. */
#define FIT_HOST_DEFAULT_DIRTY_RATIO_PCT            20
#define FIT_HOST_DEFAULT_DIRTY_BACKGROUND_RATIO_PCT 10
#define FIT_HOST_DEFAULT_DIRTY_EXPIRE_CENTISECS     3000
#define FIT_HOST_DEFAULT_DIRTY_WRITEBACK_CENTISECS  500

/* The simulated writer's write() size: the page, the unit the page cache
 * dirties and writes back; the application's own size is not in a block
 * trace. */
#define FIT_WRITER_BS_BYTES 4096u

/* A buffered writer of the scenario: the writeback of one process (its
 * fsyncs, and the flusher's writes when it is the only process that
 * fsync'd), or of the device (pid 0) when no single process can be named. */
typedef struct {
  char    *name;                 /* [process NAME] */
  guint32  pid;                  /* the process it stands for; 0: the device's writeback */
  guint64  flusher_bios;
  guint64  flusher_bytes;
  guint64  fsync_bios;
  guint64  fsync_bytes;
  guint    fsyncs;               /* bursts ended by a flush of the process */
  gboolean ends_with_fsync;      /* nothing of it was written after its last flush */
  guint64  offset_bytes;         /* first page written */
  guint64  region_bytes;         /* first to last page written, whole pages */
  guint64  size_bytes;           /* distinct pages written, in bytes */
  gboolean sequential;           /* every page of the region was written */
  guint    fsync_every;          /* writes of FIT_WRITER_BS_BYTES between fsyncs; 0: none */
  gint64   first_queue_ns;       /* its first writeback bio (trace time) */
  gint64   start_ns;             /* the process's start, from the trace's first I/O */
  gboolean expiry_start;         /* start moved back by the expiry interval (see fit_writeback) */
  guint64  background_thresh_bytes; /* the simulated era's background threshold at start */
  char    *flusher_comms;        /* the flusher threads seen, comma-separated; "" if none */
} FitWriter;

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
  FitDeviceQueue queue;
  FitDeviceOp read;
  FitDeviceOp write;
  FitModelChoice model;         /* kind of device model (fit-disk.c) */
  gboolean have_stats;           /* fit_trace fills @stats */
  TraceLifecycleStats stats;
  GPtrArray *processes;          /* FitProcess *, sorted by pid */
  GArray    *ios;                /* TraceIo of the fitted device, queue order */
  /* Writeback (fit-writeback.c). */
  FitHost    host;               /* as given, defaults filled in where not */
  guint64    writeback_bios;     /* bios of processes whose writes were writeback */
  GPtrArray *writers;            /* FitWriter *; empty without the host's memory */
  char      *writeback_note;     /* why writeback stays trace-driven, or NULL */
  guint32    request_cap_sectors;/* largest request, when a queue limit (see
                                  * fit_writeback); 0: not identified */
  guint64    request_cap_count;  /* requests of exactly that size */
  guint32    max_bio_sectors;    /* largest data bio */
  /* The writeback submitters' time per page: the median over their
   * back-to-back writeback bios of (next bio's queue time - this one's) /
   * this one's pages; 0 when fewer than FIT_WB_PAGE_COST_MIN gaps. */
  double     writeback_page_cost_ns;
  guint64    writeback_page_cost_gaps;
  guint64    writeback_bio_max_bytes; /* largest writeback bio (data): the path's bio size */
} FitResult;

/* Gaps a submitter's per-page time needs, and the longest gap that still
 * counts as back to back (longer: it slept, on a tag, wbt or the timer). */
#define FIT_WB_PAGE_COST_MIN      32
#define FIT_WB_PAGE_COST_GAP_NS   (1000 * 1000)

typedef struct {
  gboolean    has_device;        /* restrict to dev_major,dev_minor */
  guint32     dev_major;
  guint32     dev_minor;
  const char *sched;             /* override the trace's scheduler, "A" or "A,B,..."
                                  * (kernel names; NULL: the trace's) */
  FitModelKind model;            /* --model; 0 = auto */
  FitHost     host;              /* zero: no host given (writeback stays trace-driven) */
} FitOptions;

/* TRUE for the comm of a kernel flusher thread of any era (see above):
 * "kworker/..." but not a high-priority "kworker/...H" worker, "flush-...",
 * "pdflush", "bdflush", "kupdated". */
gboolean   fit_comm_is_flusher   (const char         *comm);
/* TRUE for the comm of a server's pool threads, which take requests from
 * one queue, whichever thread is free: "nfsd" (svc_recv: any nfsd thread
 * takes the next RPC of the transport's queue) and "iosim-nfsd" (iosim
 * replay's NFS workers, replay-nfs.h).  The fit writes two or more such
 * threads of one comm as one pool: [process COMM] pattern = trace,
 * trace_comm = COMM, stream = shared, threads = their number. */
gboolean   fit_comm_is_pool      (const char         *comm);

/* Check @host as given: ratios up to 100, a ratio and its _bytes twin not
 * both non-zero, dirty limits only with the memory.  The error names the
 * option (--dirty-ratio, ...). */
gboolean   fit_host_check        (const FitHost      *host,
                                  GError            **error);

/* Map a kernel scheduler name ("none", "mq-deadline", "[bfq] none") to the
 * simulator's of the same block layer: blk-mq names (none, mq-deadline,
 * bfq, kyber) to the blk-mq models, legacy ones (noop, deadline,
 * anticipatory or "as", cfq) to the legacy models.  NULL for a name the
 * simulator does not have. */
char      *fit_sched_from_kernel (const char *kernel_name);

/* Rebuild the in-flight levels, choose the parallelism and rebuild each
 * request's service time (fit-device.c).  @requests in any order;
 * @service_ns gets one value per request, in the order of @requests (NAN
 * for a request without D or C, negative where the completion came before
 * the rebuilt start).  @out->levels is allocated; free with
 * fit_device_queue_clear. */
void       fit_device_queue      (const TraceRequest *requests,
                                  gsize               n_requests,
                                  FitDeviceQueue     *out,
                                  double             *service_ns);
void       fit_device_queue_clear (FitDeviceQueue    *queue);

/* Fit one op on @requests with the service times @service_ns that
 * fit_device_queue rebuilt (other ops are ignored). */
void       fit_device_op_service (const TraceRequest *requests,
                                  const double       *service_ns,
                                  gsize               n_requests,
                                  TraceOp             op,
                                  FitDeviceOp        *out);

/* Both steps for one op (any order of @requests). */
void       fit_device_op         (const TraceRequest *requests,
                                  gsize               n_requests,
                                  TraceOp             op,
                                  FitDeviceOp        *out);

/* A flush as the trace shows it: a REQ_OP_FLUSH request ("FN", "FF"), or the
 * empty preflush bio (REQ_OP_WRITE | REQ_PREFLUSH, no data: blkparse "FWS
 * 0 + 0") that fsync and sync submit (blkdev_issue_flush, block/blk-flush.c). */
gboolean   fit_io_is_flush       (const TraceIo      *io);

/* Quantiles of @n sorted values at the fitted probabilities (body every
 * 5 % to p95, then the tail as far as @n reaches, then the maximum). */
void       fit_tail_quantiles    (const double       *sorted,
                                  gsize               n,
                                  FitDeviceOp        *out);

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
/* One "# " comment line of a scenario, for callers that add their own
 * above the fit's; control characters (from a path) become '?', so that a
 * name cannot end the comment, and so do bytes that are not UTF-8. */
void       fit_append_comment    (GString         *out,
                                  const char      *format,
                                  ...) G_GNUC_PRINTF (2, 3);
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
