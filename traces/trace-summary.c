/* trace-summary.c — what `iosim trace info` reports about one trace:
 * record and action counts, devices, processes, completed requests and
 * I/Os by operation, Q2C and D2C latency statistics (btt's names), and the
 * counts of everything that could not be paired.  Streams the trace once;
 * latencies go into bounded sketches (trace-sketch.h).
 */
#include "traces/trace-lifecycle.h"

#include <string.h>

/* The values of an array through a sketch, so that both give the same
 * figures by the same rules (exact while small). */
void
trace_latency_stats (GArray *values_ns, TraceLatencyStats *out)
{
  g_autoptr (TraceSketch) sketch = trace_sketch_new ();
  for (guint i = 0; i < values_ns->len; i++)
    trace_sketch_add (sketch, g_array_index (values_ns, gint64, i));
  trace_latency_stats_sketch (sketch, out);
}

void
trace_latency_stats_sketch (TraceSketch *sketch, TraceLatencyStats *out)
{
  memset (out, 0, sizeof *out);
  out->count = trace_sketch_count (sketch);
  if (out->count == 0)
    return;
  out->mean_ns = trace_sketch_mean_ns (sketch);
  out->min_ns = trace_sketch_min_ns (sketch);
  out->max_ns = trace_sketch_max_ns (sketch);
  out->p50_ns = trace_sketch_percentile_ns (sketch, 50);
  out->p95_ns = trace_sketch_percentile_ns (sketch, 95);
  out->p99_ns = trace_sketch_percentile_ns (sketch, 99);
  out->relative_error = trace_sketch_relative_error (sketch);
}

void
trace_summary_free (TraceSummary *summary)
{
  if (summary == NULL)
    return;
  g_free (summary->path);
  g_free (summary->format);
  g_strfreev (summary->meta);
  if (summary->devices != NULL)
    g_array_unref (summary->devices);
  if (summary->processes != NULL)
    g_array_unref (summary->processes);
  trace_btt_free (summary->btt);
  g_free (summary);
}

static guint64
devno_key (guint32 major, guint32 minor)
{
  return ((guint64) major << 32) | minor;
}

typedef struct {
  TraceSummary *summary;
  GHashTable   *devices;     /* guint64 devno* -> TraceSummaryDevice* */
  GHashTable   *processes;   /* pid -> TraceSummaryProcess* */
  TraceSketch  *q2c;
  TraceSketch  *d2c;
  TraceSketch  *btt_q2c;
  TraceSketch  *btt_d2c;
  TraceSketch  *btt_q2d;
} Collector;

static TraceSummaryDevice *
device_entry (Collector *col, guint32 major, guint32 minor)
{
  guint64 key = devno_key (major, minor);
  TraceSummaryDevice *d = g_hash_table_lookup (col->devices, &key);

  if (d == NULL)
    {
      guint64 *k = g_new (guint64, 1);
      *k = key;
      d = g_new0 (TraceSummaryDevice, 1);
      d->dev_major = major;
      d->dev_minor = minor;
      g_hash_table_insert (col->devices, k, d);
    }
  return d;
}

/* The values trace-btt counts, kept for percentiles. */
static void
collect_btt (TraceBttPhase phase, gboolean is_q2d, guint64 value_ns, gpointer data)
{
  Collector *col = data;
  gint64 v = (gint64) MIN (value_ns, (guint64) G_MAXINT64);

  if (is_q2d)
    trace_sketch_add (col->btt_q2d, v);
  else if (phase == TRACE_BTT_Q2C)
    trace_sketch_add (col->btt_q2c, v);
  else if (phase == TRACE_BTT_D2C)
    trace_sketch_add (col->btt_d2c, v);
}

static void
collect_outputs (Collector *col, TraceLifecycle *lc)
{
  TraceIo io;
  TraceRequest rq;

  while (trace_lifecycle_pop_io (lc, &io))
    {
      guint64 bytes = (guint64) io.nr_sectors * 512;
      TraceSummaryProcess *p = g_hash_table_lookup (col->processes, GUINT_TO_POINTER (io.pid));

      TraceSummaryOpCount *by_op = io.no_completion ? col->summary->ios_no_completion_by_op
                                                    : col->summary->ios_by_op;

      by_op[io.op].count++;
      by_op[io.op].bytes += bytes;
      if (p == NULL)
        {
          p = g_new0 (TraceSummaryProcess, 1);
          p->pid = io.pid;
          g_hash_table_insert (col->processes, GUINT_TO_POINTER (io.pid), p);
        }
      if (p->comm[0] == '\0')
        memcpy (p->comm, io.comm, sizeof p->comm);
      p->ios++;
      p->bytes += bytes;
      /* No completion: no latency (complete_ns is -1). */
      if (!io.no_completion && io.queue_ns >= 0 && io.complete_ns >= io.queue_ns)
        trace_sketch_add (col->q2c, io.complete_ns - io.queue_ns);
    }
  while (trace_lifecycle_pop_request (lc, &rq))
    {
      col->summary->requests_by_op[rq.op].count++;
      col->summary->requests_by_op[rq.op].bytes += (guint64) rq.nr_sectors * 512;
      device_entry (col, rq.dev_major, rq.dev_minor)->requests++;
      if (rq.issue_ns >= 0 && rq.complete_ns >= rq.issue_ns)
        trace_sketch_add (col->d2c, rq.complete_ns - rq.issue_ns);
    }
}

static gboolean
is_plug_action (TraceAction action)
{
  return action == TRACE_ACT_PLUG || action == TRACE_ACT_UNPLUG_IO
         || action == TRACE_ACT_UNPLUG_TIMER;
}

static int
compare_devices (gconstpointer a, gconstpointer b)
{
  const TraceSummaryDevice *x = a;
  const TraceSummaryDevice *y = b;
  guint64 kx = devno_key (x->dev_major, x->dev_minor);
  guint64 ky = devno_key (y->dev_major, y->dev_minor);
  return kx < ky ? -1 : kx > ky;
}

static int
compare_processes (gconstpointer a, gconstpointer b)
{
  const TraceSummaryProcess *x = a;
  const TraceSummaryProcess *y = b;
  return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static GArray *
sorted_values (GHashTable *table, gsize elt_size, GCompareFunc cmp)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, (guint) elt_size, g_hash_table_size (table));
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, NULL, &value))
    g_array_append_vals (out, value, 1);
  g_array_sort (out, cmp);
  return out;
}

TraceSummary *
trace_summarize (const char *path, const char *format, GError **error)
{
  g_autoptr(TraceReader) reader = NULL;
  g_autoptr(TraceLifecycle) lc = NULL;
  g_autoptr(TraceSummary) summary = NULL;
  g_autoptr(GHashTable) devices = NULL;
  g_autoptr(GHashTable) processes = NULL;
  g_autoptr(TraceSketch) q2c = trace_sketch_new ();
  g_autoptr(TraceSketch) d2c = trace_sketch_new ();
  g_autoptr(TraceSketch) btt_q2c = trace_sketch_new ();
  g_autoptr(TraceSketch) btt_d2c = trace_sketch_new ();
  g_autoptr(TraceSketch) btt_q2d = trace_sketch_new ();
  g_auto(GStrv) keys = NULL;
  Collector col;
  TraceRecord rec;
  GError *local = NULL;
  GPtrArray *meta;

  reader = trace_reader_open (path, format, error);
  if (reader == NULL)
    return NULL;

  summary = g_new0 (TraceSummary, 1);
  summary->path = g_strdup (path);
  summary->format = g_strdup (trace_reader_format (reader));
  summary->issue_only = trace_reader_issue_only (reader);
  devices = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  processes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  col = (Collector) { summary, devices, processes, q2c, d2c, btt_q2c, btt_d2c, btt_q2d };
  lc = trace_lifecycle_new ();
  trace_lifecycle_set_issue_only (lc, trace_reader_issue_only (reader));
  summary->btt = trace_btt_new ();
  trace_btt_set_sample_func (summary->btt, collect_btt, &col);

  while (trace_reader_next (reader, &rec, &local))
    {
      /* Plug/unplug tracepoints name no device (0,0): not a device;
       * any other record at 0,0 is one (DiskSim's devno 0). */
      if (rec.dev_major != 0 || rec.dev_minor != 0 || !is_plug_action (rec.action))
        device_entry (&col, rec.dev_major, rec.dev_minor)->records++;
      trace_lifecycle_feed (lc, &rec);
      /* btt keeps each Q until a completion covers it: in a format that
       * records none it would hold the whole trace, and say nothing. */
      if (!summary->issue_only)
        trace_btt_feed (summary->btt, &rec);
      collect_outputs (&col, lc);
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  trace_lifecycle_finish (lc);
  collect_outputs (&col, lc);
  trace_btt_finish (summary->btt);
  trace_btt_set_sample_func (summary->btt, NULL, NULL);

  summary->skipped_lines = trace_reader_skipped (reader);
  summary->lifecycle = *trace_lifecycle_stats (lc);
  summary->devices = sorted_values (devices, sizeof (TraceSummaryDevice), compare_devices);
  summary->processes = sorted_values (processes, sizeof (TraceSummaryProcess), compare_processes);
  trace_latency_stats_sketch (q2c, &summary->q2c);
  trace_latency_stats_sketch (d2c, &summary->d2c);
  trace_latency_stats_sketch (btt_q2c, &summary->btt_q2c);
  trace_latency_stats_sketch (btt_d2c, &summary->btt_d2c);
  trace_latency_stats_sketch (btt_q2d, &summary->btt_q2d);
  summary->lost_events = trace_reader_lost (reader);
  summary->time_backwards = trace_reader_time_backwards (reader);
  summary->time_backwards_max_ns = trace_reader_time_backwards_max_ns (reader);
  summary->has_genesis = trace_reader_genesis (reader, &summary->genesis_ns);

  keys = trace_reader_meta_keys (reader);
  meta = g_ptr_array_new ();
  for (char **k = keys; *k != NULL; k++)
    g_ptr_array_add (meta, g_strdup_printf ("%s=%s", *k, trace_reader_meta (reader, *k)));
  g_ptr_array_add (meta, NULL);
  summary->meta = (GStrv) g_ptr_array_free (meta, FALSE);
  return g_steal_pointer (&summary);
}
