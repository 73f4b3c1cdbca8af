/* scenario-trace.h — the I/Os of trace-driven processes: each trace file
 * read once, streaming, for every [process] group that replays part of it.
 *
 * Loading registers each process's wish (a pid, or for a pool the threads
 * of one name) with scenario_traces_want; scenario_traces_read then
 * streams each trace file once through its reader and lifecycle
 * (traces/trace.h trace_stream_ios), puts its reads and writes back in
 * queue order (by queue time, pid, then completion order, the order
 * trace_load_ios gives) and hands each to the processes that want it.  A
 * private process keeps its I/Os in blocks of a store with a memory budget
 * ([sim] trace_memory); past it, blocks go to an unlinked temporary file,
 * and the process reads them a window at a time while it runs
 * (SimTraceSource).  A pool keeps its I/Os in memory: when each may be
 * taken depends on all of them (scenario-trace.c pool_arrivals).
 *
 * The reorder holds at most SCENARIO_TRACE_REORDER_IOS I/Os: the lifecycle
 * gives I/Os at their completion, rarely that far from queue order.  When
 * a trace is more out of order than that, it is read a second time and
 * held whole; so is a capture of a replay, whose pid map comes at its end,
 * and an NFS capture.
 */
#pragma once

#include <glib.h>
#include "sim/sim-process.h"

G_BEGIN_DECLS

/* I/Os the reorder holds before it gives the earliest queued one. */
#define SCENARIO_TRACE_REORDER_IOS 65536
/* [sim] trace_memory's default: I/Os of private trace-driven processes
 * held in memory (48 bytes each: about 1.4 M I/Os). */
#define SCENARIO_TRACE_MEMORY_DEFAULT (64 * 1024 * 1024)

typedef struct _ScenarioTraces    ScenarioTraces;
typedef struct _ScenarioTraceFeed ScenarioTraceFeed;

ScenarioTraces *scenario_traces_new  (guint64 memory_bytes);
void            scenario_traces_free (ScenarioTraces *traces);

/* One process's wish: the reads and writes of pid @pid (G_MAXUINT32 with
 * @comm: of the threads named @comm, a pool) in the trace at @path, of
 * device @major,@minor (G_MAXUINT32: any).  @closed: an I/O that came
 * after every earlier one completed waits for their simulated completion
 * (else each comes at its recorded gap).  @capacity_bytes: the device's,
 * for scenario_trace_feed_beyond.  @group names the process in errors
 * about the trace file.  The feed is filled by scenario_traces_read and
 * lives as long as @traces. */
ScenarioTraceFeed *scenario_traces_want (ScenarioTraces *traces,
                                         const char     *group,
                                         const char     *path,
                                         guint32         major,
                                         guint32         minor,
                                         guint32         pid,
                                         const char     *comm,
                                         gboolean        closed,
                                         guint64         capacity_bytes);

/* Read every trace wished for, once (twice where the header above says),
 * filling the feeds.  An error names the first group that wished for the
 * trace file that failed ("[GROUP] trace: ..."). */
gboolean scenario_traces_read        (ScenarioTraces *traces,
                                      GError        **error);

/* Passes over trace files so far (tests: one per file, more when read
 * again). */
guint    scenario_traces_passes      (const ScenarioTraces *traces);

/* A filled feed: its I/Os (zero-length ones left out). */
gsize    scenario_trace_feed_len     (const ScenarioTraceFeed *feed);
/* The first I/O's queue time, from the trace's first I/O of any kind. */
SimTime  scenario_trace_feed_start_ns (const ScenarioTraceFeed *feed);
/* A pool's I/Os (NULL for a private process). */
const SimTraceIo     *scenario_trace_feed_ios    (const ScenarioTraceFeed *feed);
/* A private process's I/Os (NULL for a pool). */
const SimTraceSource *scenario_trace_feed_source (const ScenarioTraceFeed *feed);
/* The first I/O that ends past the device's capacity: TRUE with its index
 * and sector. */
gboolean scenario_trace_feed_beyond  (const ScenarioTraceFeed *feed,
                                      gsize                   *index,
                                      guint64                 *sector);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ScenarioTraces, scenario_traces_free)

G_END_DECLS
