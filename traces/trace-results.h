/* trace-results.h — per-I/O result files shared by simulation and replay.
 *
 * One CSV format carries what `iosim run --io-log`, `iosim replay` and
 * `iosim compare` exchange.  A header row names the columns:
 *
 *   process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,error
 *
 * and, from producers that know what their latency measures, a last column
 *
 *   latency_kind
 *
 * process  name of the (traced or simulated) process
 * op       read | write | discard | flush | other
 * intended_ns  when the I/O should have been issued (replay schedule;
 *              equal to issue_ns in simulation)
 * issue_ns, complete_ns  times since the start of the run
 * latency_ns   complete_ns - issue_ns
 * error    0 or a negative errno
 * latency_kind  what latency_ns spans (TraceLatencyKind): syscall (iosim
 *              replay: the system call, as the replaying process saw it) or
 *              block-q2c (iosim fit --measured: the trace's block-layer
 *              queue to completion); the same on every row of a file.  A
 *              file without the column (simulations, files written before
 *              it) is read as before, its kind "unknown".
 *
 * Readers accept the columns in any order and ignore unknown ones; a
 * missing required column or a malformed field is a GError naming the file
 * and line.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "traces/trace-lifecycle.h"

G_BEGIN_DECLS

/* What a file's latencies span.  Two kinds time different parts of an
 * I/O's life (a system call adds the syscall entry, page pinning and the
 * wake-up of the caller to the block layer's Q to C), so `iosim compare`
 * refuses to compare two different known kinds. */
typedef enum {
  TRACE_LATENCY_UNKNOWN,    /* not said: no latency_kind column */
  TRACE_LATENCY_SYSCALL,    /* issue to return of the system call (iosim replay) */
  TRACE_LATENCY_BLOCK_Q2C,  /* block layer Q to C of a trace (iosim fit --measured) */
  TRACE_LATENCY_N_KINDS
} TraceLatencyKind;

/* "unknown", "syscall", "block-q2c". */
const char *trace_latency_kind_name  (TraceLatencyKind kind);
gboolean    trace_latency_kind_parse (const char       *text,
                                      TraceLatencyKind *out);

typedef struct {
  char    *process;       /* owned by the TraceResults that holds it */
  guint32  pid;
  char    *device;
  TraceOp  op;
  guint64  offset_bytes;
  guint64  bytes;
  gint64   intended_ns;
  gint64   issue_ns;
  gint64   complete_ns;
  gint32   error;
  /* Written as the latency_kind column when not UNKNOWN: it must be the
   * kind given to trace_results_write_header_kind(), on every row. */
  TraceLatencyKind latency_kind;
} TraceResult;

#define TRACE_RESULTS_HEADER \
  "process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,error\n"

/* Writer: plain stdio, one line per I/O.  write_header() is the header
 * of a file of unknown kind (no latency_kind column); write_header_kind()
 * adds the column unless @kind is TRACE_LATENCY_UNKNOWN. */
void      trace_results_write_header (FILE              *out);
void      trace_results_write_header_kind (FILE             *out,
                                           TraceLatencyKind  kind);
void      trace_results_write_row    (FILE              *out,
                                      const TraceResult *row);

typedef struct _TraceResults TraceResults;

TraceResults *trace_results_load    (const char   *path,
                                     GError      **error);
void          trace_results_free    (TraceResults *results);
guint         trace_results_len     (const TraceResults *results);
const TraceResult *trace_results_get (const TraceResults *results,
                                     guint          i);
/* The file's kind: UNKNOWN without the column (or with no rows). */
TraceLatencyKind trace_results_latency_kind (const TraceResults *results);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceResults, trace_results_free)

G_END_DECLS
