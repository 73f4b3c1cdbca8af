/* sim-stats.h — latency histograms and time-weighted averages.
 *
 * SimHist is a log-linear histogram (HdrHistogram's idea): values below 256
 * are exact, larger ones fall in buckets 1/128 of their power of two wide,
 * so a percentile is within 0.8 % of the true value while memory stays
 * fixed (about 46 KiB) however many samples arrive.  Count, sum, min and
 * max are exact.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"

G_BEGIN_DECLS

#define SIM_HIST_SUB_BITS 7
#define SIM_HIST_BUCKETS  (128 * 45)

typedef struct {
  guint64  count;
  guint64  sum;
  SimTime  min;
  SimTime  max;
  guint64 *buckets;      /* SIM_HIST_BUCKETS counters */
} SimHist;

void     sim_hist_init        (SimHist       *hist);
void     sim_hist_clear       (SimHist       *hist);
void     sim_hist_add         (SimHist       *hist,
                               SimTime        value);
double   sim_hist_mean        (const SimHist *hist);
/* Value at quantile @q in [0, 1] (nearest rank, bucket midpoint clamped to
 * [min, max]); 0 for an empty histogram. */
SimTime  sim_hist_quantile    (const SimHist *hist,
                               double         q);
void     sim_hist_merge       (SimHist       *into,
                               const SimHist *from);

/* Time-weighted average of a level (queue depth, busy servers). */
typedef struct {
  SimTime  start_ns;
  SimTime  last_ns;
  double   level;
  double   area;
} SimTimeAvg;

void     sim_time_avg_init    (SimTimeAvg *avg, SimTime now_ns);
void     sim_time_avg_set     (SimTimeAvg *avg, SimTime now_ns, double level);
double   sim_time_avg_mean    (const SimTimeAvg *avg, SimTime now_ns);
/* The integral of the level from start to @now_ns (level x ns). */
double   sim_time_avg_area    (const SimTimeAvg *avg, SimTime now_ns);

G_END_DECLS
