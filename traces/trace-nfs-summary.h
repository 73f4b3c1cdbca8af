/* trace-nfs-summary.h — what `iosim trace info` says about an NFS capture:
 * per client and operation, counts, bytes, errors, unanswered calls and
 * latency statistics, plus the decoder's counters.  Latency percentiles
 * are nearest ranks from a TraceSketch (traces/trace-sketch.h): exact up
 * to 65,536 answered calls per row, within 0.5 % beyond, so memory does
 * not grow with the capture. */
#pragma once

#include <glib.h>
#include "traces/trace-nfs.h"
#include "traces/trace-sketch.h"

G_BEGIN_DECLS

typedef struct {
  guint64  count;
  guint64  answered;
  guint64  errors;          /* replies with a non-zero status */
  guint64  bytes;           /* READ/WRITE: bytes the reply says moved (else asked) */
  TraceSketch *latency;     /* answered calls' latencies, their sum and max
                             * (owned by the row) */
} TraceNfsOpStats;

typedef struct {
  char       *client;       /* "ip:port", or "all" for the totals */
  GPtrArray  *ops;          /* TraceNfsOpRow, by name */
} TraceNfsClientStats;

typedef struct {
  char           *op;       /* "READ", "v4 SEQUENCE" ... */
  TraceNfsOpStats s;
} TraceNfsOpRow;

typedef struct {
  char          *path;
  char          *linktype;
  guint64        records;
  gint64         first_ns, last_ns;
  TraceNfsStats  stats;
  GPtrArray     *clients;   /* TraceNfsClientStats, by address; the last one is "all" */
  GPtrArray     *warnings;  /* char *, the decoder's first distinct problems */
} TraceNfsSummary;

TraceNfsSummary *trace_nfs_summarize   (const char *path, GError **error);
void             trace_nfs_summary_free (TraceNfsSummary *s);

double   trace_nfs_op_latency_mean_ns (const TraceNfsOpStats *s);
/* The longest answered call; 0 when none. */
gint64   trace_nfs_op_latency_max_ns (const TraceNfsOpStats *s);
/* The latency at quantile @q (0 < q <= 1) of the answered calls, by
 * nearest rank (the value of rank ceil (q x answered)); 0 when none. */
gint64   trace_nfs_op_latency_quantile_ns (const TraceNfsOpStats *s, double q);
/* 0 when the row's quantiles are exact, else their relative error bound. */
double   trace_nfs_op_latency_relative_error (const TraceNfsOpStats *s);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceNfsSummary, trace_nfs_summary_free)

G_END_DECLS
