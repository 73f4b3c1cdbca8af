/* cmd-trace-btt.c — `iosim trace btt`: btt's report (traces/trace-btt.c
 * computes it) as btt's text, CSV or JSON.  Also the JSON block that
 * `iosim trace info --json` embeds. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/sim-json.h"
#include "cli/cmd-trace.h"
#include "traces/trace-btt.h"

static void
json_avg (JsonBuilder *b, const char *member, const TraceBttAvg *a)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  sim_json_int (b, "n", (gint64) a->n);
  sim_json_int (b, "min_ns", (gint64) a->min_ns);
  json_builder_set_member_name (b, "avg_s");
  json_builder_add_double_value (b, trace_btt_avg_s (a));
  sim_json_int (b, "max_ns", (gint64) a->max_ns);
  sim_json_int (b, "total_ns", (gint64) a->total_ns);
  json_builder_end_object (b);
}

/* Only the rows btt prints (N > 0). */
static void
json_phases (JsonBuilder *b, const TraceBttAvg *phase)
{
  json_builder_set_member_name (b, "latency");
  json_builder_begin_object (b);
  for (int p = 0; p < TRACE_BTT_N_PHASES; p++)
    if (phase[p].n > 0)
      json_avg (b, trace_btt_phase_name ((TraceBttPhase) p), &phase[p]);
  json_builder_end_object (b);
}

static void
json_seek (JsonBuilder *b, const char *member, const TraceBttSeek *s)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  sim_json_int (b, "nseeks", (gint64) s->nseeks);
  json_builder_set_member_name (b, "mean_sectors");
  json_builder_add_double_value (b, s->mean_sectors);
  sim_json_int (b, "median_sectors", s->median_sectors);
  sim_json_int (b, "mode_sectors", s->mode_sectors);
  sim_json_int (b, "mode_count", (gint64) s->mode_count);
  sim_json_int (b, "n_modes", s->n_modes);
  json_builder_end_object (b);
}

static void
json_device (JsonBuilder *b, const TraceBttDevice *d)
{
  g_autofree char *name = g_strdup_printf ("%u,%u", d->dev_major, d->dev_minor);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, name);
  json_phases (b, d->phase);
  json_builder_set_member_name (b, "merge");
  json_builder_begin_object (b);
  sim_json_int (b, "n_q", (gint64) d->n_qs);
  sim_json_int (b, "n_d", (gint64) d->n_ds);
  sim_json_int (b, "blk_min", (gint64) d->blocks.min_ns);
  sim_json_int (b, "blk_max", (gint64) d->blocks.max_ns);
  sim_json_int (b, "blk_total", (gint64) d->blocks.total_ns);
  json_builder_end_object (b);
  json_seek (b, "q2q_seek", &d->q2q_seek);
  json_seek (b, "d2d_seek", &d->d2d_seek);
  json_builder_set_member_name (b, "plug");
  json_builder_begin_object (b);
  sim_json_int (b, "n_plugs", (gint64) d->n_plugs);
  sim_json_int (b, "n_timer_unplugs", (gint64) d->n_timer_unplugs);
  sim_json_int (b, "n_plugs_timer", (gint64) d->n_plugs_timer);
  sim_json_int (b, "ios_unplugged", (gint64) d->ios_unplugged);
  sim_json_int (b, "ios_unplugged_timer", (gint64) d->ios_unplugged_timer);
  json_builder_set_member_name (b, "plugged_s");
  json_builder_add_double_value (b, d->plugged_s);
  json_builder_end_object (b);
  sim_json_int (b, "active_q_total", (gint64) d->t_act_q);
  json_builder_end_object (b);
}

void
cli_trace_btt_json (JsonBuilder *b, const TraceBtt *btt)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "all");
  json_builder_begin_object (b);
  for (int p = 0; p < TRACE_BTT_N_PHASES; p++)
    if (trace_btt_all (btt, (TraceBttPhase) p)->n > 0)
      json_avg (b, trace_btt_phase_name ((TraceBttPhase) p), trace_btt_all (btt, (TraceBttPhase) p));
  json_builder_end_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < trace_btt_n_devices (btt); i++)
    json_device (b, trace_btt_device (btt, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < trace_btt_n_processes (btt); i++)
    {
      const TraceBttProcess *p = trace_btt_process (btt, i);
      g_autofree char *name = g_utf8_make_valid (p->name, -1);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, name);
      json_phases (b, p->phase);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

int
cli_trace_btt (int argc, char **argv)
{
  g_autofree char *format = NULL;
  gboolean json = FALSE;
  gboolean csv = FALSE;
  gboolean all_data = FALSE;
  g_autoptr(GOptionContext) ctx = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBtt) btt = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  GOptionEntry entries[] = {
    { "input-format", 0, 0, G_OPTION_ARG_STRING, &format,
      "Read the trace as NAME instead of guessing from its first lines (as in trace cat)",
      "NAME" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, "The same as --input-format", "NAME" },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &csv,
      "Print section,scope,name,field,value rows instead of btt's tables", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of btt's tables", NULL },
    { "all-data", 'A', 0, G_OPTION_ARG_NONE, &all_data,
      "Also the Per Process and Per Device tables and the Q2D histogram (btt -A)", NULL },
    { NULL }
  };

  ctx = g_option_context_new ("FILE - btt's report on a block trace");
  g_option_context_set_summary (ctx,
      "Prints what btt (blktrace 1.3's btt 2.09) prints by default, with its\n"
      "definitions: the latency phases Q2Q, Q2G, S2G, G2I, Q2M, I2D, M2D, D2C, Q2C\n"
      "(and Q2Qdm, Q2Adm, Q2Cdm for md/dm devices) as MIN AVG MAX N in seconds; the\n"
      "Device Overhead (each phase as % of Q2C); Device Merge Information (#Q bios,\n"
      "#D requests, C sizes in sectors); Q2Q and D2D seek distances (NSEEKS, MEAN,\n"
      "MEDIAN, MODE); Plug Information; Active Requests At Q; I/O Active Periods;\n"
      "and the activity periods of the system, each device and each process.\n\n"
      "btt's counting: a device counts from its first Q (earlier events are of\n"
      "requests already in flight), so a trace of D and C events only has no\n"
      "latencies; Q2C and D2C count once per bio, merged bios included.\n"
      "Times are the trace's own (btt prints a binary trace's absolute clock).\n"
      "-A adds what btt -A adds: the phases per process and per device, and the\n"
      "Q2D histogram.\n\n"
      "Examples:\n"
      "  iosim trace btt sda.blktrace.0             btt -i sda.blktrace.0\n"
      "  iosim trace btt -A sda.blktrace.0          btt -A -i sda.blktrace.0\n"
      "  iosim trace btt capture.ftrace             any format iosim reads\n"
      "  iosim trace btt --json sda.blktrace.0 | jq '.all.Q2C.avg_s'\n"
      "  iosim trace btt --csv sda.blktrace.0 | grep ^seek,");
  if (!cli_trace_parse_one_file (ctx, entries, "btt", &argc, &argv))
    return 2;
  if (json && csv)
    {
      fprintf (stderr, "iosim trace btt: --csv and --json exclude each other\n");
      return 2;
    }

  btt = trace_btt_from_file (argv[1], format, &error);
  if (btt == NULL)
    {
      fprintf (stderr, "iosim trace: %s\n", error->message);
      return 1;
    }
  if (json)
    {
      g_autoptr(JsonBuilder) b = json_builder_new ();
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *text = NULL;

      cli_trace_btt_json (b, btt);
      root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, TRUE);
      text = json_generator_to_data (gen, NULL);
      g_string_append_printf (out, "%s\n", text);
    }
  else if (csv)
    trace_btt_format_csv (btt, out);
  else if (all_data)
    trace_btt_format_text_all (btt, out);
  else
    trace_btt_format_text (btt, out);
  fwrite (out->str, 1, out->len, stdout);
  return 0;
}
