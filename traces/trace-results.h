/* trace-results.h — per-I/O result files shared by simulation and replay.
 *
 * One CSV format carries what `iosim run --io-log`, `iosim replay` and
 * `iosim compare` exchange.  A header row names the columns:
 *
 *   process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,error
 *
 * process  name of the (traced or simulated) process
 * op       read | write | discard | flush | other
 * intended_ns  when the I/O should have been issued (replay schedule;
 *              equal to issue_ns in simulation)
 * issue_ns, complete_ns  times since the start of the run
 * latency_ns   complete_ns - issue_ns
 * error    0 or a negative errno
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
} TraceResult;

#define TRACE_RESULTS_HEADER \
  "process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,error\n"

/* Writer: plain stdio, one line per I/O. */
void      trace_results_write_header (FILE              *out);
void      trace_results_write_row    (FILE              *out,
                                      const TraceResult *row);

typedef struct _TraceResults TraceResults;

TraceResults *trace_results_load    (const char   *path,
                                     GError      **error);
void          trace_results_free    (TraceResults *results);
guint         trace_results_len     (const TraceResults *results);
const TraceResult *trace_results_get (const TraceResults *results,
                                     guint          i);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceResults, trace_results_free)

G_END_DECLS
