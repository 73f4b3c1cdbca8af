/* sim-timeseries.c — see sim-timeseries.h. */
#include "sim/sim-timeseries.h"
#include "sim/sim-loop.h"

#include <string.h>

typedef struct {
  SimRequestQueue *q;
  SimDevice       *dev;
  guint64          last_bytes[SIM_N_OPS];
  double           last_busy_ns;
} DeviceProbe;

typedef struct {
  SimProcess *p;
  guint64     last_bytes;
  guint64     last_ios;
  guint64     last_lat_sum;
  SimSeries  *series;        /* NULL unless kept */
} ProcessProbe;

typedef struct {
  SimTimeSeriesProbe fn;
  gpointer           data;
} Probe;

/* A metric kept as series, one per name, created on first sight. */
typedef struct {
  char       *kind;
  char       *metric;
  double      scale;
  GPtrArray  *keep;
  GHashTable *by_name;       /* name -> SimSeries (owned by keep) */
} KeptMetric;

struct _SimTimeSeries {
  Sim        *sim;
  char       *run_label;
  SimTime     interval_ns;
  SimTime     last_ns;
  FILE       *out;
  GPtrArray  *keep;
  GArray     *devices;       /* DeviceProbe */
  GArray     *processes;     /* ProcessProbe */
  GPtrArray  *bdis;          /* const SimBdi * */
  GArray     *probes;        /* Probe */
  GPtrArray  *kept;          /* KeptMetric */
  double      now_s;         /* the sample being written */
};

static void
kept_metric_free (gpointer data)
{
  KeptMetric *km = data;
  g_free (km->kind);
  g_free (km->metric);
  g_hash_table_unref (km->by_name);
  g_free (km);
}

static SimSeries *
series_new (GPtrArray *keep, char *label)
{
  SimSeries *series = g_new0 (SimSeries, 1);
  series->label = label;
  series->time_s = g_array_new (FALSE, FALSE, sizeof (double));
  series->value = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (keep, series);
  return series;
}

void
sim_series_free (SimSeries *series)
{
  if (series == NULL)
    return;
  g_free (series->panel);
  g_free (series->label);
  g_array_unref (series->time_s);
  g_array_unref (series->value);
  g_free (series);
}

SimTimeSeries *
sim_timeseries_new (Sim *sim, const char *run_label, SimTime interval_ns, FILE *out,
                    GPtrArray *keep)
{
  g_assert (interval_ns > 0);
  SimTimeSeries *ts = g_new0 (SimTimeSeries, 1);
  ts->sim = sim;
  ts->run_label = g_strdup (run_label);
  ts->interval_ns = interval_ns;
  ts->out = out;
  ts->keep = keep;
  ts->devices = g_array_new (FALSE, TRUE, sizeof (DeviceProbe));
  ts->processes = g_array_new (FALSE, TRUE, sizeof (ProcessProbe));
  ts->bdis = g_ptr_array_new ();
  ts->probes = g_array_new (FALSE, FALSE, sizeof (Probe));
  ts->kept = g_ptr_array_new_with_free_func (kept_metric_free);
  return ts;
}

void
sim_timeseries_free (SimTimeSeries *ts)
{
  if (ts == NULL)
    return;
  g_array_unref (ts->devices);
  g_array_unref (ts->processes);
  g_ptr_array_unref (ts->bdis);
  g_array_unref (ts->probes);
  g_ptr_array_unref (ts->kept);
  g_free (ts->run_label);
  g_free (ts);
}

void
sim_timeseries_add_device (SimTimeSeries *ts, SimRequestQueue *q, SimDevice *dev)
{
  DeviceProbe probe = { q, dev, { 0, 0 }, 0 };
  g_array_append_val (ts->devices, probe);
}

void
sim_timeseries_add_process (SimTimeSeries *ts, SimProcess *p)
{
  ProcessProbe probe = { p, 0, 0, 0, NULL };
  if (ts->keep)
    probe.series = series_new (ts->keep, g_strdup_printf ("%s %s", ts->run_label, p->name));
  g_array_append_val (ts->processes, probe);
}

void
sim_timeseries_add_bdi (SimTimeSeries *ts, const SimBdi *bdi)
{
  g_ptr_array_add (ts->bdis, (gpointer) bdi);
}

static void
keep_row (SimTimeSeries *ts, double t_s, const char *kind, const char *name,
          const char *metric, double value)
{
  for (guint i = 0; i < ts->kept->len; i++)
    {
      KeptMetric *km = g_ptr_array_index (ts->kept, i);
      if (strcmp (km->kind, kind) != 0 || strcmp (km->metric, metric) != 0)
        continue;
      SimSeries *series = g_hash_table_lookup (km->by_name, name);
      if (series == NULL)
        {
          /* "usb dirty" for usb's dirty_pages, in the run's panel. */
          gsize stem = strlen (metric);
          if (g_str_has_suffix (metric, "_pages"))
            stem -= strlen ("_pages");
          series = series_new (km->keep, g_strdup_printf ("%s %.*s", name, (int) stem, metric));
          series->panel = g_strdup (ts->run_label);
          g_hash_table_insert (km->by_name, g_strdup (name), series);
        }
      double scaled = value * km->scale;
      g_array_append_val (series->time_s, t_s);
      g_array_append_val (series->value, scaled);
    }
}

static void
row (SimTimeSeries *ts, double t_s, const char *kind, const char *name,
     const char *metric, double value)
{
  if (ts->out)
    fprintf (ts->out, "%s,%.6f,%s,%s,%s,%.6g\n", ts->run_label, t_s, kind, name, metric, value);
  if (ts->kept->len)
    keep_row (ts, t_s, kind, name, metric, value);
}

void
sim_timeseries_row (SimTimeSeries *ts, const char *kind, const char *name, const char *metric,
                    double value)
{
  row (ts, ts->now_s, kind, name, metric, value);
}

void
sim_timeseries_add_probe (SimTimeSeries *ts, SimTimeSeriesProbe fn, gpointer data)
{
  Probe probe = { fn, data };
  g_array_append_val (ts->probes, probe);
}

void
sim_timeseries_keep_metric (SimTimeSeries *ts, const char *kind, const char *metric,
                            double scale, GPtrArray *keep)
{
  KeptMetric *km = g_new0 (KeptMetric, 1);
  km->kind = g_strdup (kind);
  km->metric = g_strdup (metric);
  km->scale = scale;
  km->keep = keep;
  km->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_ptr_array_add (ts->kept, km);
}

static void
sample_devices (SimTimeSeries *ts, SimTime now, double span_s, double t_s)
{
  for (guint i = 0; i < ts->devices->len; i++)
    {
      DeviceProbe *d = &g_array_index (ts->devices, DeviceProbe, i);
      const SimQueueCounters *c = &d->q->counters;
      double mb[SIM_N_OPS];
      for (guint op = 0; op < SIM_N_OPS; op++)
        {
          mb[op] = (double) (c->bytes[op] - d->last_bytes[op]) / span_s / 1e6;
          d->last_bytes[op] = c->bytes[op];
        }
      double busy_ns = sim_time_avg_area (&d->dev->busy_avg, now);
      double util = (busy_ns - d->last_busy_ns) / (span_s * 1e9);
      d->last_busy_ns = busy_ns;
      const char *name = d->q->name;
      row (ts, t_s, "device", name, "mb_per_s", mb[SIM_OP_READ] + mb[SIM_OP_WRITE]);
      row (ts, t_s, "device", name, "read_mb_per_s", mb[SIM_OP_READ]);
      row (ts, t_s, "device", name, "write_mb_per_s", mb[SIM_OP_WRITE]);
      row (ts, t_s, "device", name, "util", util);
      row (ts, t_s, "device", name, "queue_depth", sim_queue_requests_allocated (d->q));
      row (ts, t_s, "device", name, "in_flight", d->dev->in_flight);
      if (d->dev->loop != NULL)
        {
          /* Behind a loop driver: the pieces at the model and those waiting. */
          row (ts, t_s, "device", name, "model_in_flight", d->dev->loop->model_in_flight);
          row (ts, t_s, "device", name, "pieces_waiting", d->dev->loop->n_pending);
        }
    }
}

static void
sample_processes (SimTimeSeries *ts, double span_s, double t_s)
{
  for (guint i = 0; i < ts->processes->len; i++)
    {
      ProcessProbe *pp = &g_array_index (ts->processes, ProcessProbe, i);
      SimProcess *p = pp->p;
      guint64 ios = p->latency.count - pp->last_ios;
      double mbps = (double) (p->bytes - pp->last_bytes) / span_s / 1e6;
      double lat_ms = ios ? (double) (p->latency.sum - pp->last_lat_sum) / (double) ios / 1e6 : 0;
      row (ts, t_s, "process", p->name, "mb_per_s", mbps);
      row (ts, t_s, "process", p->name, "iops", (double) ios / span_s);
      row (ts, t_s, "process", p->name, "lat_mean_ms", lat_ms);
      if (pp->series)
        {
          g_array_append_val (pp->series->time_s, t_s);
          g_array_append_val (pp->series->value, mbps);
        }
      pp->last_bytes = p->bytes;
      pp->last_ios = p->latency.count;
      pp->last_lat_sum = p->latency.sum;
    }
}

static void
tick (Sim *sim, gpointer subject, gpointer object)
{
  SimTimeSeries *ts = subject;
  SimTime now = sim_now (sim);
  double span_s = (double) (now - ts->last_ns) / 1e9;
  double t_s = (double) now / 1e9;
  ts->last_ns = now;
  sample_devices (ts, now, span_s, t_s);
  sample_processes (ts, span_s, t_s);
  for (guint i = 0; i < ts->bdis->len; i++)
    {
      const SimBdi *b = g_ptr_array_index (ts->bdis, i);
      row (ts, t_s, "bdi", b->q->name, "dirty_pages", (double) b->nr_dirty);
      row (ts, t_s, "bdi", b->q->name, "writeback_pages", (double) b->nr_writeback);
    }
  ts->now_s = t_s;
  for (guint i = 0; i < ts->probes->len; i++)
    {
      const Probe *probe = &g_array_index (ts->probes, Probe, i);
      probe->fn (probe->data, ts, span_s);
    }
  /* Keep sampling only while the run has something left to do. */
  if (sim_events_pending (sim) > 0)
    sim_schedule_in (sim, ts->interval_ns, tick, ts, NULL);
}

void
sim_timeseries_start (SimTimeSeries *ts)
{
  ts->last_ns = sim_now (ts->sim);
  sim_schedule_in (ts->sim, ts->interval_ns, tick, ts, NULL);
}
