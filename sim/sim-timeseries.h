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
 * and whatever the probes add (the writeback policy's thresholds, throttled
 * tasks and flusher activity: models/wb/wb.h).
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

/* One quantity over time, kept for plotting: a process's MB/s, or a
 * probe's metric (sim_timeseries_keep_metric). */
typedef struct {
  char   *panel;      /* kept metrics: the run (one plot panel each); else NULL */
  char   *label;      /* "run process", or "name metric" in its panel */
  GArray *time_s;     /* double */
  GArray *value;      /* double */
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
/* A probe adds rows at each sample through sim_timeseries_row; @span_s is
 * the interval just ended. */
typedef void (*SimTimeSeriesProbe) (gpointer data, SimTimeSeries *ts, double span_s);
void           sim_timeseries_add_probe   (SimTimeSeries *ts,
                                           SimTimeSeriesProbe probe,
                                           gpointer       data);
/* For probes: one row at the current sample. */
void           sim_timeseries_row         (SimTimeSeries *ts,
                                           const char    *kind,
                                           const char    *name,
                                           const char    *metric,
                                           double         value);
/* Also keep every row of @metric of @kind (any name) as a SimSeries in
 * @keep, scaled by @scale (e.g. pages to MiB); call before starting. */
void           sim_timeseries_keep_metric (SimTimeSeries *ts,
                                           const char    *kind,
                                           const char    *metric,
                                           double         scale,
                                           GPtrArray     *keep);
void           sim_timeseries_start       (SimTimeSeries *ts);
void           sim_timeseries_free        (SimTimeSeries *ts);

G_END_DECLS
