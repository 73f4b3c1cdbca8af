/* cmd-trace-nfs.c — `iosim trace info` and `cat` on NFS captures: the
 * per-client, per-operation tables of traces/trace-nfs-summary.c and the
 * decoded operations of traces/trace-nfs.c, as text, JSON or CSV. */
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli/cmd-trace.h"
#include "sim/sim-json.h"
#include "traces/trace-nfs-summary.h"

static double
ms (double ns)
{
  return ns / 1e6;
}

static void
print_client_table (const TraceNfsClientStats *c)
{
  printf ("\n%s %s\n", strcmp (c->client, "all") == 0 ? "All clients" : "Client", 
          strcmp (c->client, "all") == 0 ? "" : c->client);
  printf ("  %-22s %9s %9s %7s %7s %13s %10s %10s %10s %10s\n", "operation", "calls", "answered",
          "errors", "lost", "bytes", "lat_mean", "lat_p50", "lat_p99", "lat_max");
  for (guint i = 0; i < c->ops->len; i++)
    {
      const TraceNfsOpRow *row = g_ptr_array_index (c->ops, i);
      const TraceNfsOpStats *s = &row->s;
      printf ("  %-22s %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT
              " %7" G_GUINT64_FORMAT " %13" G_GUINT64_FORMAT " %8.3fms %8.3fms %8.3fms %8.3fms\n",
              row->op, s->count, s->answered, s->errors, s->count - s->answered, s->bytes,
              ms (trace_nfs_op_latency_mean_ns (s)),
              ms ((double) trace_nfs_op_latency_quantile_ns (s, 0.5)),
              ms ((double) trace_nfs_op_latency_quantile_ns (s, 0.99)),
              ms ((double) trace_nfs_op_latency_max_ns (s)));
    }
  for (guint i = 0; i < c->ops->len; i++)
    {
      const TraceNfsOpRow *row = g_ptr_array_index (c->ops, i);
      double err = trace_nfs_op_latency_relative_error (&row->s);

      /* Rows past 65,536 answers give sketched percentiles. */
      if (err > 0)
        printf ("  %s: lat_p50 and lat_p99 within %.1f %%\n", row->op, err * 100);
    }
}

static void
print_text (const TraceNfsSummary *s)
{
  printf ("File:      %s\n", s->path);
  printf ("Format:    capture (libpcap link type %s)\n", s->linktype);
  printf ("Frames:    %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " bytes captured)\n",
          s->stats.frames, s->stats.bytes);
  printf ("NFS:       %" G_GUINT64_FORMAT " operations from %" G_GUINT64_FORMAT " calls\n",
          s->records, s->stats.nfs_calls);
  if (s->first_ns >= 0)
    printf ("Duration:  %.6f s\n", (double) (s->last_ns - s->first_ns) / 1e9);
  for (guint i = 0; i < s->clients->len; i++)
    print_client_table (g_ptr_array_index (s->clients, i));
  g_autoptr (GString) counters = g_string_new (NULL);
  trace_nfs_stats_format (&s->stats, counters);
  printf ("\nDecoder counters:\n");
  g_auto (GStrv) lines = g_strsplit (counters->str, "\n", -1);
  for (guint i = 0; lines[i] && lines[i][0]; i++)
    printf ("  %s\n", lines[i]);
  if (s->warnings->len)
    {
      printf ("\nWarnings (first %u):\n", s->warnings->len);
      for (guint i = 0; i < s->warnings->len; i++)
        printf ("  %s\n", (const char *) g_ptr_array_index (s->warnings, i));
    }
}

static void
json_counter (const char *name, guint64 value, gpointer data)
{
  sim_json_uint (data, name, value);
}

static char *
json_text (const TraceNfsSummary *s)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, s->path);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "capture");
  json_builder_set_member_name (b, "linktype");
  json_builder_add_string_value (b, s->linktype);
  sim_json_int (b, "frames", s->stats.frames);
  sim_json_uint (b, "bytes", s->stats.bytes);
  if (s->first_ns >= 0)
    sim_json_int (b, "duration_ns", s->last_ns - s->first_ns);
  sim_json_int (b, "records", s->records);
  sim_json_int (b, "nfs_calls", s->stats.nfs_calls);
  sim_json_int (b, "tcp_gaps", s->stats.tcp_gaps);
  sim_json_int (b, "calls_without_reply", s->stats.calls_without_reply);
  sim_json_int (b, "replies_without_call", s->stats.replies_without_call);
  json_builder_set_member_name (b, "clients");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->clients->len; i++)
    {
      const TraceNfsClientStats *c = g_ptr_array_index (s->clients, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "client");
      json_builder_add_string_value (b, c->client);
      json_builder_set_member_name (b, "operations");
      json_builder_begin_array (b);
      for (guint j = 0; j < c->ops->len; j++)
        {
          const TraceNfsOpRow *row = g_ptr_array_index (c->ops, j);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "op");
          json_builder_add_string_value (b, row->op);
          sim_json_int (b, "calls", row->s.count);
          sim_json_int (b, "answered", row->s.answered);
          sim_json_int (b, "errors", row->s.errors);
          sim_json_uint (b, "lost", row->s.count - row->s.answered);
          sim_json_int (b, "bytes", row->s.bytes);
          json_builder_set_member_name (b, "latency_ns");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "mean");
          json_builder_add_double_value (b, trace_nfs_op_latency_mean_ns (&row->s));
          sim_json_int (b, "p50", trace_nfs_op_latency_quantile_ns (&row->s, 0.5));
          sim_json_int (b, "p99", trace_nfs_op_latency_quantile_ns (&row->s, 0.99));
          sim_json_int (b, "max", trace_nfs_op_latency_max_ns (&row->s));
          /* Rows past 65,536 answers give sketched percentiles. */
          double err = trace_nfs_op_latency_relative_error (&row->s);
          if (err > 0)
            sim_json_double (b, "relative_error", err);
          json_builder_end_object (b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  /* Every counter the text prints under "Decoder counters". */
  json_builder_set_member_name (b, "decoder");
  json_builder_begin_object (b);
  trace_nfs_stats_foreach (&s->stats, json_counter, b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "warnings");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->warnings->len; i++)
    {
      /* They quote the capture, which need not be UTF-8. */
      g_autofree char *valid = g_utf8_make_valid (g_ptr_array_index (s->warnings, i), -1);
      json_builder_add_string_value (b, valid);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

int
cli_trace_nfs_info (const char *path, gboolean json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceNfsSummary) s = trace_nfs_summarize (path, &error);
  if (s == NULL)
    {
      fprintf (stderr, "iosim trace: %s\n", error->message);
      return 1;
    }
  if (json)
    {
      g_autofree char *text = json_text (s);
      printf ("%s\n", text);
    }
  else
    print_text (s);
  return 0;
}

/* One readable line per operation. */
static void
format_text (const TraceNfsRecord *rec, gint64 genesis_ns, GString *out)
{
  g_string_append_printf (out, "%12.6f %-21s -> %-21s xid %08x v%u", (double) (rec->time_ns - genesis_ns) / 1e9,
                          rec->client, rec->server, rec->xid, rec->vers);
  if (rec->vers == 4)
    g_string_append_printf (out, ".%u", rec->minorvers);
  g_string_append_printf (out, " %-12s fh %016" G_GINT64_MODIFIER "x", rec->op, rec->fh_hash);
  if (strcmp (rec->op, "READ") == 0 || strcmp (rec->op, "WRITE") == 0 || strcmp (rec->op, "COMMIT") == 0)
    g_string_append_printf (out, " %" G_GUINT64_FORMAT "+%u", rec->offset, rec->count);
  if (rec->latency_ns >= 0)
    g_string_append_printf (out, " status %d %.3f ms\n", rec->status, (double) rec->latency_ns / 1e6);
  else
    g_string_append (out, " (no reply)\n");
}

int
cli_trace_nfs_cat (const char *path, FILE *out, gboolean csv, gboolean have_from, gint64 from_ns,
                   gboolean have_to, gint64 to_ns, const char *cmd)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceNfsReader) r = trace_nfs_reader_open (path, &error);
  if (r == NULL)
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 1;
    }
  g_autoptr (GString) line = g_string_new (NULL);
  if (csv)
    {
      trace_nfs_csv_header (line);
      fputs (line->str, out);
    }
  TraceNfsRecord rec;
  gint64 genesis = -1;
  while (trace_nfs_reader_next (r, &rec, &error))
    {
      /* Calls come out in call-time order: the first is the genesis. */
      if (genesis < 0)
        genesis = rec.time_ns;
      gint64 t = rec.time_ns - genesis;
      if ((have_from && t < from_ns) || (have_to && t >= to_ns))
        continue;
      g_string_truncate (line, 0);
      if (csv)
        trace_nfs_format_csv (&rec, line);
      else
        format_text (&rec, genesis, line);
      fputs (line->str, out);
    }
  if (error)
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 1;
    }
  return 0;
}
