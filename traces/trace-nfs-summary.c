/* trace-nfs-summary.c — per-client, per-operation statistics of an NFS
 * capture (see trace-nfs-summary.h). */
#include "traces/trace-nfs-summary.h"

#include <math.h>
#include <string.h>

static void
op_add (TraceNfsOpStats *s, const TraceNfsRecord *rec)
{
  s->count++;
  if (rec->latency_ns >= 0)
    {
      s->answered++;
      trace_sketch_add (s->latency, rec->latency_ns);
    }
  if (rec->status > 0)
    s->errors++;
  if (strcmp (rec->op, "READ") == 0 || strcmp (rec->op, "WRITE") == 0)
    s->bytes += rec->reply_count ? rec->reply_count : rec->count;
}

double
trace_nfs_op_latency_mean_ns (const TraceNfsOpStats *s)
{
  return trace_sketch_mean_ns (s->latency);
}

gint64
trace_nfs_op_latency_max_ns (const TraceNfsOpStats *s)
{
  return trace_sketch_max_ns (s->latency);
}

gint64
trace_nfs_op_latency_quantile_ns (const TraceNfsOpStats *s, double q)
{
  g_return_val_if_fail (q > 0 && q <= 1, 0);
  if (s->answered == 0)
    return 0;
  /* In whole hundredths of a percent, so that 0.99 is exactly 99. */
  return trace_sketch_percentile_ns (s->latency, round (q * 1e6) / 1e4);
}

double
trace_nfs_op_latency_relative_error (const TraceNfsOpStats *s)
{
  return trace_sketch_relative_error (s->latency);
}

static void
client_free (gpointer data)
{
  TraceNfsClientStats *c = data;
  g_free (c->client);
  g_ptr_array_unref (c->ops);
  g_free (c);
}

static void
row_free (gpointer data)
{
  TraceNfsOpRow *r = data;
  trace_sketch_free (r->s.latency);
  g_free (r->op);
  g_free (r);
}

static TraceNfsClientStats *
client_new (const char *name)
{
  TraceNfsClientStats *c = g_new0 (TraceNfsClientStats, 1);
  c->client = g_strdup (name);
  c->ops = g_ptr_array_new_with_free_func (row_free);
  return c;
}

static TraceNfsOpStats *
row_for (TraceNfsClientStats *c, GHashTable *index, const char *op)
{
  TraceNfsOpRow *r = g_hash_table_lookup (index, op);
  if (r == NULL)
    {
      r = g_new0 (TraceNfsOpRow, 1);
      r->op = g_strdup (op);
      r->s.latency = trace_sketch_new ();
      g_ptr_array_add (c->ops, r);
      g_hash_table_insert (index, r->op, r);
    }
  return &r->s;
}

static gint
by_op (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(TraceNfsOpRow *const *) a)->op, (*(TraceNfsOpRow *const *) b)->op);
}

static gint
by_client (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(TraceNfsClientStats *const *) a)->client,
                 (*(TraceNfsClientStats *const *) b)->client);
}

void
trace_nfs_summary_free (TraceNfsSummary *s)
{
  if (s == NULL)
    return;
  g_free (s->path);
  g_free (s->linktype);
  if (s->clients)
    g_ptr_array_unref (s->clients);
  if (s->warnings)
    g_ptr_array_unref (s->warnings);
  g_free (s);
}

TraceNfsSummary *
trace_nfs_summarize (const char *path, GError **error)
{
  g_autoptr (TraceNfsReader) r = trace_nfs_reader_open (path, error);
  if (r == NULL)
    return NULL;
  g_autoptr (TraceNfsSummary) s = g_new0 (TraceNfsSummary, 1);
  s->path = g_strdup (path);
  s->linktype = g_strdup (trace_nfs_reader_linktype (r));
  s->first_ns = s->last_ns = -1;
  s->clients = g_ptr_array_new_with_free_func (client_free);
  /* client name -> (stats, op index) */
  g_autoptr (GHashTable) clients = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) indexes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                          (GDestroyNotify) g_hash_table_unref);
  TraceNfsClientStats *all = client_new ("all");
  GHashTable *all_index = g_hash_table_new (g_str_hash, g_str_equal);
  TraceNfsRecord rec;
  while (trace_nfs_reader_next (r, &rec, error))
    {
      s->records++;
      if (s->first_ns < 0 || rec.time_ns < s->first_ns)
        s->first_ns = rec.time_ns;
      s->last_ns = MAX (s->last_ns, rec.time_ns);
      TraceNfsClientStats *c = g_hash_table_lookup (clients, rec.client);
      if (c == NULL)
        {
          c = client_new (rec.client);
          g_ptr_array_add (s->clients, c);
          g_hash_table_insert (clients, c->client, c);
          g_hash_table_insert (indexes, c, g_hash_table_new (g_str_hash, g_str_equal));
        }
      char op[48];
      if (rec.vers == 4)
        g_snprintf (op, sizeof op, "v4.%u %s", rec.minorvers, rec.op);
      else
        g_snprintf (op, sizeof op, "v%u %s", rec.vers, rec.op);
      op_add (row_for (c, g_hash_table_lookup (indexes, c), op), &rec);
      op_add (row_for (all, all_index, op), &rec);
    }
  g_hash_table_unref (all_index);
  if (error && *error)
    {
      client_free (all);
      return NULL;
    }
  g_ptr_array_sort (s->clients, by_client);
  g_ptr_array_add (s->clients, all);
  for (guint i = 0; i < s->clients->len; i++)
    g_ptr_array_sort (((TraceNfsClientStats *) g_ptr_array_index (s->clients, i))->ops, by_op);
  s->stats = *trace_nfs_reader_stats (r);
  s->warnings = g_ptr_array_new_with_free_func (g_free);
  const GPtrArray *w = trace_nfs_reader_warnings (r);
  for (guint i = 0; w && i < w->len; i++)
    g_ptr_array_add (s->warnings, g_strdup (g_ptr_array_index (w, i)));
  return g_steal_pointer (&s);
}
