/* cmd-trace.c — `iosim trace`: inspect block traces.  Only `info` exists so
 * far; the numbers come from trace_summarize() (traces/trace-summary.c),
 * this file only parses options and prints. */
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli/cli.h"
#include "sim/sim-json.h"
#include "sim/sim-table.h"
#include "cli/cmd-trace.h"
#include "traces/trace-btt.h"
#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs.h"

static const char *const op_order[] = { "read", "write", "discard", "flush", "other" };

static void
trace_usage (FILE *out)
{
  fprintf (out,
           "Usage: iosim trace SUBCOMMAND [OPTIONS...] FILE\n\n"
           "Inspect block traces (blkparse text, ftrace blk tracer, ftrace block events;\n"
           ".gz files are read directly, '-' reads standard input).\n\n"
           "Subcommands:\n"
           "  info      summarise a trace: events, devices, processes, requests,\n"
           "            Q2C and D2C latencies, unpaired events\n"
           "  cat       print records (blkparse text or --csv), filtered by device,\n"
           "            pid, action and time window; several files merged by time\n"
           "  convert   the same into a file (-o), blkparse text or CSV\n"
           "  merge     several traces into one, in time order\n"
           "  btt       btt's report: latency phases, overhead, merges, seeks, plugs\n\n"
           "Run 'iosim trace SUBCOMMAND --help' for the options.\n"
           "Example: iosim trace info sda.blkparse.txt\n");
}

static double
us (double ns)
{
  return ns / 1000.0;
}

typedef struct {
  const char              *name;
  const TraceLatencyStats *stats;
} LatencyRow;

/* Latencies in microseconds, the columns as wide as their widest value
 * (a 1,234 ms p99 is 1234000.000 us). */
static void
print_latency_table (const LatencyRow *rows, guint n_rows)
{
  static const int widths[] = { -4, 8, 10, 10, 10, 10, 10 };
  static const char *const heads[] = { "", "count", "mean", "p50", "p95", "p99", "max" };
  g_autoptr (SimTable) t = sim_table_new (G_N_ELEMENTS (widths), widths, heads);
  for (guint i = 0; i < n_rows; i++)
    {
      const TraceLatencyStats *st = rows[i].stats;
      sim_table_cell (t, "%s", rows[i].name);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, st->count);
      if (st->count == 0)
        {
          for (guint c = 0; c < 5; c++)
            sim_table_cell (t, "-");
          sim_table_end_row (t, NULL);
          continue;
        }
      const double v[] = { us (st->mean_ns), us ((double) st->p50_ns), us ((double) st->p95_ns),
                           us ((double) st->p99_ns), us ((double) st->max_ns) };
      for (guint c = 0; c < G_N_ELEMENTS (v); c++)
        sim_table_cell (t, "%.3f", v[c]);
      /* Past 65,536 samples the percentiles come from a sketch. */
      g_autofree char *tail = st->relative_error > 0
                              ? g_strdup_printf ("  (p50-p99 within %.1f %%)",
                                                 st->relative_error * 100)
                              : NULL;
      sim_table_end_row (t, tail);
    }
  g_autoptr (GString) out = g_string_new (NULL);
  sim_table_append (t, out, "  ");
  fputs (out->str, stdout);
}

static void
print_op_table (const char *title, const TraceSummaryOpCount *by_op)
{
  guint64 total = 0;
  guint64 total_bytes = 0;

  for (int op = 0; op < TRACE_OP_COUNT; op++)
    {
      total += by_op[op].count;
      total_bytes += by_op[op].bytes;
    }
  printf ("\n%s: %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " bytes)\n", title, total, total_bytes);
  for (int op = 0; op < TRACE_OP_COUNT; op++)
    if (by_op[op].count > 0)
      printf ("  %-8s %10" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " bytes\n",
              op_order[op], by_op[op].count, by_op[op].bytes);
}

/* Latest minus earliest record time, saturated: times may be negative
 * (iosim-csv), so the span may exceed G_MAXINT64. */
static gint64
duration_ns (const TraceLifecycleStats *lc)
{
  guint64 span;

  if (lc->records == 0)
    return 0;
  span = (guint64) lc->last_ns - (guint64) lc->first_ns;
  return (gint64) MIN (span, (guint64) G_MAXINT64);
}

/* btt's own figures (traces/trace-btt.c: per bio its way, merged bios
 * included), to set beside `btt -i`; `iosim trace btt` prints them all. */
static void
print_btt (const TraceBtt *btt, const TraceSummary *s)
{
  printf ("\nAs btt computes them (us; 'iosim trace btt' gives btt's whole report):\n");
  const LatencyRow rows[] = { { "Q2C", &s->btt_q2c }, { "D2C", &s->btt_d2c },
                              { "Q2D", &s->btt_q2d } };
  print_latency_table (rows, G_N_ELEMENTS (rows));
  for (guint i = 0; i < trace_btt_n_devices (btt); i++)
    {
      const TraceBttDevice *d = trace_btt_device (btt, i);
      if (d->n_qs == 0 || d->n_ds == 0)
        continue;
      printf ("  %u,%u: #Q %" G_GUINT64_FORMAT ", #D %" G_GUINT64_FORMAT ", merged bios (Q2M) %"
              G_GUINT64_FORMAT ", completed sectors min/max/total %" G_GUINT64_FORMAT "/%"
              G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "\n",
              d->dev_major, d->dev_minor, d->n_qs, d->n_ds, d->phase[TRACE_BTT_Q2M].n,
              d->blocks.min_ns, d->blocks.max_ns, d->blocks.total_ns);
    }
}

static void
print_text (const TraceSummary *s)
{
  const TraceLifecycleStats *lc = &s->lifecycle;

  printf ("File:      %s\n", s->path);
  printf ("Format:    %s\n", s->format);
  for (char **m = s->meta; *m != NULL; m++)
    printf ("Capture:   %s\n", *m);
  printf ("Records:   %" G_GUINT64_FORMAT "\n", lc->records);
  printf ("Skipped:   %" G_GUINT64_FORMAT " lines (comments, statistics, other events)\n",
          s->skipped_lines);
  if (lc->records > 0)
    printf ("Duration:  %.6f s (earliest record at %.6f s, latest at %.6f s)\n",
            (double) duration_ns (lc) / 1e9, (double) lc->first_ns / 1e9,
            (double) lc->last_ns / 1e9);

  printf ("\nEvents by action:\n");
  for (int a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    if (lc->by_action[a] > 0)
      printf ("  %-3s %12" G_GUINT64_FORMAT "\n", trace_action_letters ((TraceAction) a), lc->by_action[a]);

  printf ("\nDevices:\n  %-9s %12s %10s\n", "device", "records", "requests");
  for (guint i = 0; i < s->devices->len; i++)
    {
      const TraceSummaryDevice *d = &g_array_index (s->devices, TraceSummaryDevice, i);
      g_autofree char *name = g_strdup_printf ("%u,%u", d->dev_major, d->dev_minor);
      printf ("  %-9s %12" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT "\n", name, d->records, d->requests);
    }

  print_op_table ("Requests completed (D to C)", s->requests_by_op);
  /* Without Q events an I/O is a D..C request: no Q to C to speak of. */
  print_op_table (lc->by_action[TRACE_ACT_QUEUE] > 0 ? "I/Os completed (Q to C)"
                  : "I/Os completed (D to C; the trace has no Q events)", s->ios_by_op);
  if (lc->ios_without_completion > 0)
    print_op_table (s->issue_only
                    ? "I/Os queued (no completion times in this format)"
                    : "I/Os queued (no completion times in this trace: Q events only)",
                    s->ios_no_completion_by_op);

  printf ("\nProcesses (by pid; I/Os they queued):\n  %8s  %-16s %10s %14s\n", "pid", "comm", "ios", "bytes");
  for (guint i = 0; i < s->processes->len; i++)
    {
      const TraceSummaryProcess *p = &g_array_index (s->processes, TraceSummaryProcess, i);
      printf ("  %8u  %-16s %10" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT "\n",
              p->pid, p->comm[0] != '\0' ? p->comm : "?", p->ios, p->bytes);
    }

  printf ("\nLatency (us):\n");
  /* Without Q events there is no Q2C row. */
  const LatencyRow rows[] = { { "Q2C", &s->q2c }, { "D2C", &s->d2c } };
  gboolean q2c = lc->by_action[TRACE_ACT_QUEUE] > 0;
  print_latency_table (q2c ? rows : rows + 1, q2c ? 2 : 1);
  if (s->btt_q2c.count || s->btt_d2c.count)
    print_btt (s->btt, s);
  if (s->has_genesis)
    printf ("\nGenesis:   %.9f s (the first event's clock; blkparse prints times from here)\n",
            (double) s->genesis_ns / 1e9);
  printf ("Lost:      %" G_GUINT64_FORMAT " events (sequence gaps in binary blktrace)\n",
          s->lost_events);
  printf ("Backwards: %" G_GUINT64_FORMAT " records earlier than the one before in their stream "
          "(per device and CPU for blktrace, blkparse, ftrace; else the file)",
          s->time_backwards);
  if (s->time_backwards > 0)
    printf (", largest step back %.6f s", (double) s->time_backwards_max_ns / 1e9);
  printf ("\n");

  printf ("\nUnpaired:\n");
  printf ("  completed without issue (in flight at start): %" G_GUINT64_FORMAT "\n", lc->completed_without_issue);
  printf ("  issued without queue (request-only trace):    %" G_GUINT64_FORMAT "\n", lc->issued_without_queue);
  printf ("  incomplete at end:                            %" G_GUINT64_FORMAT "\n", lc->incomplete_at_end);
  printf ("  merges/requeues matching no request:          %" G_GUINT64_FORMAT "\n", lc->unpaired);
}

static void
json_op_counts (JsonBuilder *b, const char *member, const TraceSummaryOpCount *by_op)
{
  guint64 total = 0;
  guint64 total_bytes = 0;

  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  for (int op = 0; op < TRACE_OP_COUNT; op++)
    {
      total += by_op[op].count;
      total_bytes += by_op[op].bytes;
      json_builder_set_member_name (b, op_order[op]);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "count");
      json_builder_add_int_value (b, (gint64) by_op[op].count);
      json_builder_set_member_name (b, "bytes");
      json_builder_add_int_value (b, (gint64) by_op[op].bytes);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "count");
  json_builder_add_int_value (b, (gint64) total);
  json_builder_set_member_name (b, "bytes");
  json_builder_add_int_value (b, (gint64) total_bytes);
  json_builder_end_object (b);
}

static void
json_latency (JsonBuilder *b, const char *member, const TraceLatencyStats *s)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "count");
  json_builder_add_int_value (b, (gint64) s->count);
  json_builder_set_member_name (b, "mean");
  json_builder_add_double_value (b, us (s->mean_ns));
  json_builder_set_member_name (b, "p50");
  json_builder_add_double_value (b, us ((double) s->p50_ns));
  json_builder_set_member_name (b, "p95");
  json_builder_add_double_value (b, us ((double) s->p95_ns));
  json_builder_set_member_name (b, "p99");
  json_builder_add_double_value (b, us ((double) s->p99_ns));
  json_builder_set_member_name (b, "max");
  json_builder_add_double_value (b, us ((double) s->max_ns));
  json_builder_set_member_name (b, "relative_error");
  json_builder_add_double_value (b, s->relative_error);
  json_builder_end_object (b);
}

static char *
json_text (const TraceSummary *s)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  const TraceLifecycleStats *lc = &s->lifecycle;
  g_autofree char *file = g_filename_display_name (s->path);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, file);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, s->format);
  json_builder_set_member_name (b, "capture");
  json_builder_begin_object (b);
  for (char **m = s->meta; *m != NULL; m++)
    {
      const char *eq = strchr (*m, '=');
      g_autofree char *key = g_utf8_make_valid (*m, eq - *m);
      g_autofree char *value = g_utf8_make_valid (eq + 1, -1);
      json_builder_set_member_name (b, key);
      json_builder_add_string_value (b, value);
    }
  json_builder_end_object (b);
  sim_json_int (b, "records", lc->records);
  sim_json_int (b, "skipped_lines", s->skipped_lines);
  json_builder_set_member_name (b, "first_ns");
  json_builder_add_int_value (b, lc->first_ns);
  json_builder_set_member_name (b, "last_ns");
  json_builder_add_int_value (b, lc->last_ns);
  json_builder_set_member_name (b, "duration_ns");
  json_builder_add_int_value (b, duration_ns (lc));
  json_builder_set_member_name (b, "time_backwards");
  json_builder_begin_object (b);
  sim_json_int (b, "records", s->time_backwards);
  sim_json_int (b, "max_step_ns", (gint64) MIN (s->time_backwards_max_ns, (guint64) G_MAXINT64));
  json_builder_end_object (b);

  json_builder_set_member_name (b, "events");
  json_builder_begin_object (b);
  for (int a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    sim_json_int (b, trace_action_letters ((TraceAction) a), lc->by_action[a]);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->devices->len; i++)
    {
      const TraceSummaryDevice *d = &g_array_index (s->devices, TraceSummaryDevice, i);
      g_autofree char *name = g_strdup_printf ("%u,%u", d->dev_major, d->dev_minor);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "device");
      json_builder_add_string_value (b, name);
      sim_json_int (b, "major", d->dev_major);
      sim_json_int (b, "minor", d->dev_minor);
      sim_json_int (b, "records", d->records);
      sim_json_int (b, "requests", d->requests);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_op_counts (b, "requests", s->requests_by_op);
  json_op_counts (b, "ios", s->ios_by_op);
  json_op_counts (b, "ios_no_completion", s->ios_no_completion_by_op);

  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->processes->len; i++)
    {
      const TraceSummaryProcess *p = &g_array_index (s->processes, TraceSummaryProcess, i);
      g_autofree char *comm = g_utf8_make_valid (p->comm, -1);
      json_builder_begin_object (b);
      sim_json_int (b, "pid", p->pid);
      json_builder_set_member_name (b, "comm");
      json_builder_add_string_value (b, comm);
      sim_json_int (b, "ios", p->ios);
      sim_json_int (b, "bytes", p->bytes);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "latency_us");
  json_builder_begin_object (b);
  json_latency (b, "q2c", &s->q2c);
  json_latency (b, "d2c", &s->d2c);
  json_latency (b, "btt_q2c", &s->btt_q2c);
  json_latency (b, "btt_d2c", &s->btt_d2c);
  json_latency (b, "btt_q2d", &s->btt_q2d);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "btt");
  cli_trace_btt_json (b, s->btt);

  json_builder_set_member_name (b, "unpaired");
  json_builder_begin_object (b);
  sim_json_int (b, "completed_without_issue", lc->completed_without_issue);
  sim_json_int (b, "issued_without_queue", lc->issued_without_queue);
  sim_json_int (b, "incomplete_at_end", lc->incomplete_at_end);
  sim_json_int (b, "unmatched_merge_or_requeue", lc->unpaired);
  json_builder_end_object (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

gboolean
cli_trace_parse_one_file (GOptionContext *ctx, const GOptionEntry *entries, const char *name,
                          int *argc, char ***argv)
{
  g_autofree char *formats = g_strjoinv (", ", (char **) trace_formats ());
  g_autofree char *description = g_strdup_printf (
    "Formats: %s.\nErrors name the file and line: iosim trace: FILE:LINE: message.", formats);
  g_autoptr(GError) error = NULL;

  g_option_context_set_description (ctx, description);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      fprintf (stderr, "iosim trace: %s\n", error->message);
      return FALSE;
    }
  if (*argc != 2)
    {
      fprintf (stderr, "iosim trace %s: expected exactly one FILE (see --help)\n", name);
      return FALSE;
    }
  return TRUE;
}

static int
trace_info (int argc, char **argv)
{
  g_autofree char *format = NULL;
  gboolean json = FALSE;
  g_autoptr(GOptionContext) ctx = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) summary = NULL;
  GOptionEntry entries[] = {
    { "input-format", 0, 0, G_OPTION_ARG_STRING, &format,
      "Read the trace as NAME instead of guessing from its first lines (as in trace cat)",
      "NAME" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, "The same as --input-format", "NAME" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of text", NULL },
    { NULL }
  };

  ctx = g_option_context_new ("FILE - summarise a block trace");
  g_option_context_set_summary (ctx,
      "Reads a block trace once and reports: format, records, events by action,\n"
      "devices, duration, completed requests and I/Os by operation (count, bytes),\n"
      "processes with their I/O counts, Q2C and D2C latencies (count, mean, p50,\n"
      "p95, p99, max in microseconds; btt's definitions) and the events that\n"
      "could not be paired (in flight at start or end, request-only traces).\n"
      "Percentiles are nearest ranks: exact up to 65,536 samples, then from a\n"
      "DDSketch within 0.5 % (printed beside the row; JSON relative_error);\n"
      "count, mean, min and max are always exact.  Formats that record no\n"
      "completions (fio-iolog, umass-spc, disksim-ascii), and block traces of Q\n"
      "events only, give I/Os without latencies (\"I/Os queued\", JSON\n"
      "ios_no_completion).  Memory is bounded by the I/Os in flight (a block\n"
      "trace of Q events only holds its Qs to the end).\n"
      "Duration is the latest time minus the earliest; records whose time goes\n"
      "back within their stream (per device and CPU for blktrace, blkparse and\n"
      "ftrace, else the file) are counted under Backwards (JSON time_backwards).\n\n"
      "Examples:\n"
      "  iosim trace info sda.blkparse.txt          blkparse -i sda > sda.blkparse.txt\n"
      "  iosim trace info capture.ftrace.gz         tracefs text, compressed\n"
      "  iosim trace info --json trace.txt | jq .latency_us.d2c\n"
      "  cat /sys/kernel/tracing/trace | iosim trace info -");
  if (!cli_trace_parse_one_file (ctx, entries, "info", &argc, &argv))
    return 2;

  if (format == NULL && trace_is_capture (argv[1]))
    return cli_trace_nfs_info (argv[1], json);
  summary = trace_summarize (argv[1], format, &error);
  if (summary == NULL)
    {
      fprintf (stderr, "iosim trace: %s\n", error->message);
      return 1;
    }
  if (json)
    {
      g_autofree char *text = json_text (summary);
      printf ("%s\n", text);
    }
  else
    print_text (summary);
  return 0;
}

int
cli_cmd_trace (int argc, char **argv)
{
  if (argc < 2)
    {
      trace_usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      trace_usage (stdout);
      return 0;
    }
  static const struct { const char *name; int (*fn) (int, char **); } subcommands[] = {
    { "info", trace_info },
    { "cat", cli_trace_cat },
    { "convert", cli_trace_convert },
    { "merge", cli_trace_merge },
    { "btt", cli_trace_btt },
  };
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    if (strcmp (argv[1], subcommands[i].name) == 0)
      {
        g_autofree char *prgname = g_strdup_printf ("%s %s", argv[0], argv[1]);
        argv[1] = prgname;
        g_set_prgname (prgname);   /* GOption's "Usage:" line */
        return subcommands[i].fn (argc - 1, argv + 1);
      }
  fprintf (stderr, "iosim trace: unknown subcommand '%s'\n\n", argv[1]);
  trace_usage (stderr);
  return 2;
}
