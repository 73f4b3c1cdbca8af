/* trace-sketch.h — a bounded, mergeable quantile sketch for latencies.
 *
 * Exact while small: the first TRACE_SKETCH_EXACT_MAX values are kept as
 * they are, and percentiles are exact nearest ranks.  Past that the values
 * move into log-spaced buckets as in DDSketch (C. Masson, J. E. Rim,
 * H. K. Lee, "DDSketch: A Fast and Fully-Mergeable Quantile Sketch with
 * Relative-Error Guarantees", PVLDB 12(12), 2019, §2): bucket i holds the
 * values in (gamma^(i-1), gamma^i] with gamma = (1 + a) / (1 - a), and a
 * quantile reports 2 gamma^i / (gamma + 1), within a relative error a of
 * the true nearest-rank value.  iosim uses a = 0.45 % and rounds to whole
 * nanoseconds; values below 1024 ns are counted exactly one by one, so
 * the rounding adds at most 0.05 % and every reported quantile is within
 * TRACE_SKETCH_RELATIVE_ERROR (0.5 %) of the exact one.  The count, sum,
 * min and max are always exact; a quantile is clamped to [min, max], so a
 * p99 is never above the maximum nor below the minimum.  Memory: at most
 * 8 bytes x 65,536 exact values, then a fixed ~40 KB of buckets.
 * Merging two sketches gives what adding both sets of values would.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TRACE_SKETCH_EXACT_MAX      65536
#define TRACE_SKETCH_RELATIVE_ERROR 0.005

typedef struct _TraceSketch TraceSketch;

TraceSketch *trace_sketch_new       (void);
void         trace_sketch_free      (TraceSketch       *sk);
/* @value_ns >= 0. */
void         trace_sketch_add       (TraceSketch       *sk,
                                     gint64             value_ns);
void         trace_sketch_merge     (TraceSketch       *into,
                                     const TraceSketch *from);
guint64      trace_sketch_count     (const TraceSketch *sk);
double       trace_sketch_mean_ns   (const TraceSketch *sk);   /* 0 when empty */
gint64       trace_sketch_min_ns    (const TraceSketch *sk);   /* 0 when empty */
gint64       trace_sketch_max_ns    (const TraceSketch *sk);   /* 0 when empty */
/* The nearest-rank percentile (0 < @percent <= 100): the value of rank
 * ceil(percent / 100 x count), 1-based; 0 when empty.  Not const: the
 * exact values are sorted on the first query after an add. */
gint64       trace_sketch_percentile_ns (TraceSketch *sk,
                                     double             percent);
/* 0 while exact, else TRACE_SKETCH_RELATIVE_ERROR: the bound on the
 * relative error of every percentile (min, max, mean and count exact). */
double       trace_sketch_relative_error (const TraceSketch *sk);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceSketch, trace_sketch_free)

G_END_DECLS
