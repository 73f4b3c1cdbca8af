/* sim-timeseries.h — per-interval samples of a run, for time-series CSV
 * and plots: what the devices and processes did in each interval, not just
 * over the whole run.
 *
 * Rows are tidy CSV, "run,time_s,kind,name,metric,value", one per entity
 * and metric at the end of each interval:
 *   device  mb_per_s, read_mb_per_s, write_mb_per_s, util (busy fraction),
 *           queue_depth and in_flight (at the sample instant)
 *   process mb_per_s, iops, lat_mean_ms (of I/Os completed in the interval)
 *   bdi     dirty_pages, writeback_pages (at the sample instant; buffered I/O)
 * Sampling only reads state, so a run's results do not change with it; it
 * stops when nothing else is left to happen.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-process.h"

G_BEGIN_DECLS

#define SIM_TIMESERIES_HEADER "run,time_s,kind,name,metric,value\n"

/* One process's MB/s over time, kept for plotting. */
typedef struct {
  char   *label;      /* "run process" */
  GArray *time_s;     /* double */
  GArray *mb_per_s;   /* double */
} SimSeries;

void sim_series_free (SimSeries *series);

typedef struct _SimTimeSeries SimTimeSeries;

/* Rows go to @out (may be NULL); with @keep non-NULL, each process's MB/s
 * series is appended to it (SimSeries, owned by the array). */
SimTimeSeries *sim_timeseries_new         (Sim         *sim,
                                           const char  *run_label,
                                           SimTime      interval_ns,
                                           FILE        *out,
                                           GPtrArray   *keep);
void           sim_timeseries_add_device  (SimTimeSeries *ts,
                                           SimRequestQueue *q,
                                           SimDevice     *dev);
void           sim_timeseries_add_process (SimTimeSeries *ts,
                                           SimProcess    *p);
void           sim_timeseries_add_bdi     (SimTimeSeries *ts,
                                           const SimBdi  *bdi);
void           sim_timeseries_start       (SimTimeSeries *ts);
void           sim_timeseries_free        (SimTimeSeries *ts);

G_END_DECLS
