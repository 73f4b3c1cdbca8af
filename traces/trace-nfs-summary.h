/* trace-nfs-summary.h — what `iosim trace info` says about an NFS capture:
 * per client and operation, counts, bytes, errors, unanswered calls and
 * latency statistics, plus the decoder's counters.  Latency percentiles
 * come from a log-linear histogram (1/16 relative resolution), so memory
 * does not grow with the capture. */
#pragma once

#include <glib.h>
#include "traces/trace-nfs.h"

G_BEGIN_DECLS

#define TRACE_NFS_HIST_BUCKETS (64 * 16)

typedef struct {
  guint64  count;
  guint64  answered;
  guint64  errors;          /* replies with a non-zero status */
  guint64  bytes;           /* READ/WRITE: bytes the reply says moved (else asked) */
  gint64   latency_sum_ns;
  gint64   latency_max_ns;
  guint64  hist[TRACE_NFS_HIST_BUCKETS];
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
/* The latency at quantile @q (0..1) of the answered calls; 0 when none. */
gint64   trace_nfs_op_latency_quantile_ns (const TraceNfsOpStats *s, double q);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceNfsSummary, trace_nfs_summary_free)

G_END_DECLS
