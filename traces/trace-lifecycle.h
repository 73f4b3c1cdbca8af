/* trace-lifecycle.h — pairing Q/G/I/D/C events into I/Os, as btt does.
 *
 * Requests are keyed by (device, sector, io_tag: 0 except in the CSV
 * traces that tell I/Os apart by row).  A bio (Q) that is merged (M/F)
 * completes with the request it joined; requeues (R) restart D2C at the
 * next D; completions may be partial; a split (X) shortens the queued bio
 * (the kernel queues the rest with its own Q); a remap (A) from a device
 * whose bio is in the trace (dm, md over a disk) gives that upper bio the
 * issue time of the lower request; traces that hold only D and C events
 * yield one I/O per request; requests already in flight when the trace
 * starts (C or D without Q) are counted, not invented.  Memory is bounded
 * by the number of I/Os in flight.
 *
 * Issue-only traces (formats that record no completions: fio iologs,
 * UMass/SPC, DiskSim, told by trace_reader_issue_only) give each Q as an
 * I/O at once, marked no_completion; a block trace that holds Q events
 * but never a D or C (blktrace run with -a queue) gives its queued bios
 * so at the end, in queue order.
 */
#pragma once

#include "traces/trace.h"
#include "traces/trace-sketch.h"
#include "traces/trace-btt.h"

G_BEGIN_DECLS

typedef enum {
  TRACE_OP_READ,
  TRACE_OP_WRITE,
  TRACE_OP_DISCARD,
  TRACE_OP_FLUSH,
  TRACE_OP_OTHER,
} TraceOp;

const char *trace_op_name (TraceOp op);             /* "read", "write", ... */
TraceOp     trace_op_from_rwbs (guint32 rwbs);

/* The name every iosim tool gives a traced process, so that simulated,
 * replayed and fitted results match in `iosim compare`: "<comm>-<pid>", or
 * "pid<N>" without a name (blkparse prints "(null)"); characters that would
 * break CSV or scenario files, and bytes that are not UTF-8, become '_'.
 * Caller frees. */
char       *trace_process_name (const char *comm, guint32 pid);

/* One I/O as a process submitted it: one per Q (bio), or one per D request
 * where the trace has no Q events.  Times are -1 where not seen. */
typedef struct {
  guint32  dev_major;
  guint32  dev_minor;
  guint32  pid;
  char     comm[TRACE_COMM_MAX];
  TraceOp  op;
  guint32  rwbs;
  guint64  sector;
  guint32  nr_sectors;
  gint64   queue_ns;      /* Q */
  gint64   issue_ns;      /* D of the request that carried it */
  gint64   complete_ns;   /* C of that request */
  gint32   error;
  gboolean merged;        /* it joined another request (M/F) */
  gboolean request_only;  /* no Q in the trace: one I/O per D..C request,
                           * queue_ns = issue_ns */
  gboolean issued_below;  /* issue_ns is a lower device's D, through a remap */
  gboolean no_completion; /* the trace records no completion for it (fio iologs,
                           * DiskSim and UMass SPC traces, Q-only blkparse):
                           * queue_ns set, issue_ns = complete_ns = -1,
                           * error 0 */
} TraceIo;

/* One request as the device saw it (D to C). */
typedef struct {
  guint32  dev_major;
  guint32  dev_minor;
  TraceOp  op;
  guint64  sector;
  guint32  nr_sectors;
  gint64   issue_ns;
  gint64   complete_ns;
  gint32   error;
  guint32  in_flight_at_issue;  /* requests in flight on the device, this one included */
} TraceRequest;

typedef struct {
  guint64 records;
  guint64 by_action[TRACE_ACT_N_ACTIONS];
  guint64 ios;                  /* TraceIo emitted, no_completion ones included */
  guint64 ios_without_completion;    /* TraceIo emitted with no_completion */
  guint64 requests;             /* TraceRequest emitted */
  guint64 completed_without_issue;   /* C with no D seen: in flight at start */
  guint64 issued_without_queue;      /* D with no Q: request-only trace or in flight at start */
  guint64 incomplete_at_end;         /* Q or D never completed */
  gint64  first_ns;              /* earliest record time (by time, not file order); */
  gint64  last_ns;               /* latest; both -1 before the first record */
  guint64 unpaired;                  /* M/F/R that matched no request, or a request
                                      * replaced by another at the same sector */
  guint64 remap_links;               /* A records that tied a traced upper bio to a
                                      * lower-device bio */
} TraceLifecycleStats;

typedef struct _TraceLifecycle TraceLifecycle;

TraceLifecycle *trace_lifecycle_new     (void);
void            trace_lifecycle_free    (TraceLifecycle *lc);
/* Issue-only input (trace_reader_issue_only): every Q is emitted at once
 * as a no_completion I/O.  Set before the first record. */
void            trace_lifecycle_set_issue_only (TraceLifecycle *lc,
                                         gboolean           issue_only);
/* Feed records in time order. */
void            trace_lifecycle_feed    (TraceLifecycle    *lc,
                                         const TraceRecord *rec);
/* Flush what is still pending at end of input (counted, not emitted),
 * except in a trace with Q events and no D or C at all: its queued bios
 * are emitted as no_completion I/Os, by queue time. */
void            trace_lifecycle_finish  (TraceLifecycle    *lc);
/* I/Os and requests, in completion order (no_completion I/Os when they
 * are queued). */
gboolean        trace_lifecycle_pop_io  (TraceLifecycle    *lc,
                                         TraceIo           *out);
gboolean        trace_lifecycle_pop_request (TraceLifecycle *lc,
                                         TraceRequest      *out);
const TraceLifecycleStats *trace_lifecycle_stats (const TraceLifecycle *lc);
/* In-flight entries held right now (queued sectors, pending and issued
 * requests): the memory bound, for tests and diagnostics. */
guint           trace_lifecycle_held    (const TraceLifecycle *lc);

/* Convenience for fit, replay and trace-driven simulation: read a whole
 * trace and return its completed I/Os, and those of an issue-only trace
 * (no_completion), sorted by queue time (issue time where there is no Q),
 * then by pid.  An NFS capture gives its answered
 * READs and WRITEs (trace_nfs_load_ios, traces/trace-nfs-ios.c).  Optional filters: @dev_major/@dev_minor
 * (G_MAXUINT32 = any).  @requests (may be NULL) receives the TraceRequests
 * sorted by issue time.  @stats (may be NULL) receives the counts.  A
 * capture of a replay ("# iosim-capture replay_pids=TID:PID,...") gives its
 * I/Os the replayed trace's pids instead of the replaying threads' ids. */
GArray         *trace_load_ios          (const char        *path,
                                         guint32            dev_major,
                                         guint32            dev_minor,
                                         GArray           **requests,
                                         TraceLifecycleStats *stats,
                                         GError           **error);
/* The same I/Os, unsorted, as the lifecycle completes them: @on_io for
 * each I/O, @on_request (may be NULL) for each request, in bounded memory.
 * *@replay_pids (may be NULL) receives a copy of the trace's
 * "replay_pids" metadata (NULL when absent), *@stats (may be NULL) the
 * counts.  Block traces only (not NFS captures). */
typedef void (*TraceIoFunc)      (const TraceIo      *io, gpointer data);
typedef void (*TraceRequestFunc) (const TraceRequest *rq, gpointer data);
gboolean        trace_stream_ios        (const char        *path,
                                         guint32            dev_major,
                                         guint32            dev_minor,
                                         TraceIoFunc        on_io,
                                         TraceRequestFunc   on_request,
                                         gpointer           data,
                                         char             **replay_pids,
                                         TraceLifecycleStats *stats,
                                         GError           **error);
/* NFS captures as I/O streams: device 0,N per server, pid per client,
 * files laid out 1 TiB apart (see traces/trace-nfs-ios.c). */
GArray         *trace_nfs_load_ios      (const char        *path,
                                         guint32            dev_major,
                                         guint32            dev_minor,
                                         GArray           **requests,
                                         TraceLifecycleStats *stats,
                                         GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceLifecycle, trace_lifecycle_free)

/* ---- Whole-trace summary (iosim trace info) ----------------------------- */

/* Latencies in nanoseconds; percentiles by nearest rank (the smallest
 * value with at least p% of the samples at or below it), exact up to
 * TRACE_SKETCH_EXACT_MAX samples and within @relative_error of it beyond
 * (traces/trace-sketch.h); count, mean, min and max always exact. */
typedef struct {
  guint64 count;
  double  mean_ns;
  gint64  min_ns;
  gint64  p50_ns;
  gint64  p95_ns;
  gint64  p99_ns;
  gint64  max_ns;
  double  relative_error;   /* 0: the percentiles are exact */
} TraceLatencyStats;

typedef struct {
  guint32 dev_major;
  guint32 dev_minor;
  guint64 records;
  guint64 requests;
} TraceSummaryDevice;

typedef struct {
  guint32 pid;
  char    comm[TRACE_COMM_MAX];   /* first non-empty name seen for the pid */
  guint64 ios;
  guint64 bytes;
} TraceSummaryProcess;

typedef struct {
  guint64 count;
  guint64 bytes;
} TraceSummaryOpCount;

#define TRACE_OP_COUNT (TRACE_OP_OTHER + 1)

typedef struct {
  char                *path;
  char                *format;
  gboolean             issue_only;         /* trace_reader_issue_only */
  GStrv                meta;               /* sorted "key=value" from # iosim-capture lines */
  guint64              skipped_lines;
  TraceLifecycleStats  lifecycle;          /* records, by_action, unpaired counts, first/last */
  GArray              *devices;            /* TraceSummaryDevice, by (major, minor) */
  GArray              *processes;          /* TraceSummaryProcess, by pid */
  TraceSummaryOpCount  requests_by_op[TRACE_OP_COUNT];  /* completed D..C requests */
  TraceSummaryOpCount  ios_by_op[TRACE_OP_COUNT];       /* completed I/Os */
  TraceSummaryOpCount  ios_no_completion_by_op[TRACE_OP_COUNT];  /* no_completion I/Os */
  TraceLatencyStats    q2c;                /* per I/O with a Q (or D where no Q) */
  TraceLatencyStats    d2c;                /* per request */
  /* As btt computes them (traces/trace-btt.c, which also gives the
   * figures): Q2C (not the dm rows) and D2C per bio, Q2D per bio at each
   * D that issued it (a requeued bio twice), with the percentiles btt does
   * not print; a trace of D and C only gives none. */
  TraceLatencyStats    btt_q2c;
  TraceLatencyStats    btt_d2c;
  TraceLatencyStats    btt_q2d;
  TraceBtt            *btt;                /* btt's whole report, finished */
  guint64              lost_events;        /* the reader's count (blktrace sequence gaps) */
  guint64              time_backwards;     /* trace_reader_time_backwards */
  guint64              time_backwards_max_ns;
  gboolean             has_genesis;
  gint64               genesis_ns;         /* smallest event time, where the format tells */
} TraceSummary;

/* Read @path (format forced by @format, or sniffed when NULL) and
 * summarise it in bounded memory: the I/Os in flight, the devices and
 * processes, and five latency sketches (at most 512 KiB each). */
TraceSummary   *trace_summarize         (const char        *path,
                                         const char        *format,
                                         GError           **error);
void            trace_summary_free      (TraceSummary      *summary);
/* Latency statistics of @sketch, or of @values_ns (non-negative) through
 * one. */
void            trace_latency_stats     (GArray            *values_ns,
                                         TraceLatencyStats *out);
void            trace_latency_stats_sketch (TraceSketch    *sketch,
                                         TraceLatencyStats *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceSummary, trace_summary_free)

G_END_DECLS
