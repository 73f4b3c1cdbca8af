/* replay-report.c — writing what a replay measured: per-I/O rows in the
 * shared results CSV (traces/trace-results.h, read by `iosim compare`),
 * a JSON summary shaped like `iosim run --json` processes, and an aligned
 * text table.
 */
#include "replay/replay.h"
#include "sim/sim-json.h"
#include "sim/sim-output.h"
#include "replay/replay-report-private.h"
#include "traces/trace-results.h"

#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  gint64 intended_ns;
  guint  process;
  guint  index;
} RowKey;

static int
row_key_compare (gconstpointer a, gconstpointer b)
{
  const RowKey *x = a, *y = b;

  if (x->intended_ns != y->intended_ns)
    return x->intended_ns < y->intended_ns ? -1 : 1;
  if (x->process != y->process)
    return x->process < y->process ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

void
replay_result_write_csv (const ReplayResult *result, FILE *out)
{
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (RowKey));

  /* The engines time each I/O around its system call (or its submission
   * and reaped completion), not the block layer's Q to C. */
  trace_results_write_header_kind (out, TRACE_LATENCY_SYSCALL);
  if (result->io_results == NULL)
    return;
  /* One time-ordered file across processes; ties in a fixed order. */
  for (guint p = 0; p < result->io_results->len; p++)
    {
      const GArray *results = g_ptr_array_index (result->io_results, p);
      for (guint i = 0; i < results->len; i++)
        {
          RowKey k = { g_array_index (results, ReplayIoResult, i).intended_ns, p, i };
          g_array_append_val (keys, k);
        }
    }
  g_array_sort (keys, row_key_compare);
  for (guint k = 0; k < keys->len; k++)
    {
      const RowKey *key = &g_array_index (keys, RowKey, k);
      const ReplayProcess *proc = g_ptr_array_index (result->plan->processes, key->process);
      const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, key->index);
      const ReplayIoResult *r = &g_array_index ((GArray *) g_ptr_array_index (result->io_results, key->process),
                                                ReplayIoResult, key->index);
      TraceResult row = {
        .process = proc->name, .pid = proc->pid,
        /* With --map, the target this I/O went to. */
        .device = result->targets && io->target_index < result->targets->len
                  ? g_array_index (result->targets, ReplayTarget, io->target_index).path
                  : result->target.path,
        .op = io->op, .offset_bytes = io->offset_bytes, .bytes = io->bytes,
        .intended_ns = r->intended_ns, .issue_ns = r->issue_ns,
        .complete_ns = r->complete_ns, .error = r->error,
        .latency_kind = TRACE_LATENCY_SYSCALL,
      };
      trace_results_write_row (out, &row);
    }
}

/* The traced comm in a process name (trace_process_name: "<comm>-<pid>",
 * "pid<N>" without one), already free of spaces and commas. */
static char *
process_comm (const ReplayProcess *proc)
{
  g_autofree char *suffix = g_strdup_printf ("-%u", proc->pid);

  if (g_str_has_suffix (proc->name, suffix) && strlen (proc->name) > strlen (suffix))
    return g_strndup (proc->name, strlen (proc->name) - strlen (suffix));
  return g_strdup ("");
}

char *
replay_result_pid_map_line (const ReplayResult *result)
{
  g_autoptr (GString) line = g_string_new ("# iosim-capture replay_pids=");
  gsize empty = line->len;

  g_return_val_if_fail (result != NULL, NULL);
  for (guint p = 0; result->process_tids && p < result->plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (result->plan->processes, p);
      g_autofree char *comm = NULL;

      if (result->process_tids[p] == 0)
        continue;
      /* The comm too: a thread's comm holds 15 characters, and a process
       * the trace does not name ran under the replayer's. */
      comm = process_comm (proc);
      g_string_append_printf (line, "%s%u:%u:%s", line->len > empty ? "," : "",
                              result->process_tids[p], proc->pid, comm);
    }
  if (line->len == empty)
    return NULL;
  g_string_append_c (line, '\n');
  return g_string_free (g_steal_pointer (&line), FALSE);
}

/* "trace_latency": {"recorded": bool, "recorded_ios", "not_recorded_ios"}
 * and, only when recorded, the figures: no zero stands in for a latency
 * the trace does not have, and no ratio divides by zero. */
static void
add_trace_latency (JsonBuilder *b, const ReplayTraceLatency *t)
{
  json_builder_set_member_name (b, "trace_latency");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "recorded");
  json_builder_add_boolean_value (b, t->ios > 0);
  sim_json_int (b, "recorded_ios", (gint64) t->ios);
  sim_json_int (b, "not_recorded_ios", (gint64) t->not_recorded);
  if (t->ios > 0)
    {
      sim_json_double (b, "mean_ns", t->mean_ns);
      sim_json_int (b, "p50_ns", t->p50_ns);
      sim_json_int (b, "p99_ns", t->p99_ns);
      sim_json_double (b, "replayed_mean_ns", t->replayed_mean_ns);
      json_builder_set_member_name (b, "replayed_to_trace");
      if (t->mean_ns > 0)
        json_builder_add_double_value (b, t->replayed_mean_ns / t->mean_ns);
      else
        json_builder_add_null_value (b);
    }
  json_builder_end_object (b);
}

static void
add_processes (JsonBuilder *b, const ReplayResult *result)
{
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; result->processes && i < result->processes->len; i++)
    {
      const ReplayProcessSummary *s = &g_array_index (result->processes, ReplayProcessSummary, i);
      const GArray *res = g_ptr_array_index (result->io_results, i);
      gint64 span = 0;

      if (res->len > 0)
        span = g_array_index (res, ReplayIoResult, res->len - 1).complete_ns
               - g_array_index (res, ReplayIoResult, 0).issue_ns;
      json_builder_begin_object (b);
      sim_json_string (b, "name", s->name);
      sim_json_int (b, "pid", s->pid);
      sim_json_int (b, "ios", (gint64) s->ios);
      sim_json_int (b, "bytes", (gint64) s->bytes);
      sim_json_int (b, "errors", (gint64) s->errors);
      sim_json_double (b, "mb_per_s", span > 0 ? (double) s->bytes * 1e3 / (double) span : 0);
      sim_json_double (b, "iops", span > 0 ? (double) s->ios * 1e9 / (double) span : 0);
      json_builder_set_member_name (b, "latency_ns");
      json_builder_begin_object (b);
      sim_json_double (b, "mean", s->latency_mean_ns);
      sim_json_int (b, "p50", s->latency_p50_ns);
      sim_json_int (b, "p95", s->latency_p95_ns);
      sim_json_int (b, "p99", s->latency_p99_ns);
      sim_json_int (b, "max", s->latency_max_ns);
      json_builder_end_object (b);
      add_trace_latency (b, &s->trace_latency);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
add_plan (JsonBuilder *b, const ReplayPlan *plan)
{
  json_builder_set_member_name (b, "plan");
  json_builder_begin_object (b);
  sim_json_int (b, "ios", (gint64) plan->n_ios);
  sim_json_int (b, "reads", (gint64) plan->n_reads);
  sim_json_int (b, "writes", (gint64) plan->n_writes);
  sim_json_int (b, "bytes_read", (gint64) plan->bytes_read);
  sim_json_int (b, "bytes_written", (gint64) plan->bytes_written);
  sim_json_int (b, "span_ns", plan->span_ns);
  sim_json_int (b, "traced_devices", plan->n_devices);
  sim_json_int (b, "skipped_writes", (gint64) plan->skipped_writes);
  sim_json_int (b, "skipped_other", (gint64) plan->skipped_other);
  sim_json_int (b, "skipped_untimed", (gint64) plan->skipped_untimed);
  sim_json_int (b, "writes_need_allow_write", (gint64) plan->writes_need_allow_write);
  sim_json_int (b, "no_completion", (gint64) plan->no_completion);
  sim_json_int (b, "fell_back_to_issue", (gint64) plan->fell_back_to_issue);
  sim_json_int (b, "coalesced", (gint64) plan->coalesced);
  sim_json_int (b, "aligned", (gint64) plan->aligned);
  sim_json_int (b, "wrapped", (gint64) plan->wrapped);
  sim_json_int (b, "scaled", (gint64) plan->scaled);
  sim_json_int (b, "clamped", (gint64) plan->clamped);
  json_builder_end_object (b);
}

gboolean
replay_result_write_json (const ReplayResult *result, const char *path, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  sim_json_string (b, "target", result->target.path);
  sim_json_string (b, "target_kind", result->target.is_file ? "file" : "block-device");
  sim_json_int (b, "target_size_bytes", (gint64) result->target.size_bytes);
  sim_json_int (b, "logical_block_bytes", result->target.logical_block_bytes);
  sim_json_string (b, "events", replay_events_name (result->plan->events));
  sim_json_string (b, "timing", replay_timing_name (result->plan->timing));
  sim_json_double (b, "speed", result->plan->speed);
  sim_json_string (b, "engine", replay_engine_name (result->engine));
  sim_json_int (b, "iodepth", result->iodepth);
  sim_json_int (b, "device_depth", result->device_depth);
  sim_json_int (b, "threads", result->threads);
  json_builder_set_member_name (b, "buffered");
  json_builder_add_boolean_value (b, result->buffered);
  sim_json_int (b, "max_inflight_process", result->max_inflight_process);
  sim_json_int (b, "max_inflight_device", result->max_inflight_device);
  json_builder_set_member_name (b, "dry_run");
  json_builder_add_boolean_value (b, result->dry_run);
  json_builder_set_member_name (b, "interrupted");
  json_builder_add_boolean_value (b, result->interrupted);
  sim_json_int (b, "ios", (gint64) result->ios);
  sim_json_int (b, "bytes", (gint64) result->bytes);
  sim_json_int (b, "errors", (gint64) result->errors);
  sim_json_int (b, "elapsed_ns", result->elapsed_ns);
  sim_json_double (b, "intended_iops", result->intended_iops);
  sim_json_double (b, "achieved_iops", result->achieved_iops);
  sim_json_double (b, "mb_per_s", result->mb_per_s);
  sim_json_double (b, "issue_error_mean_ns", result->issue_error_mean_ns);
  sim_json_int (b, "issue_error_p50_ns", result->issue_error_p50_ns);
  sim_json_int (b, "issue_error_p99_ns", result->issue_error_p99_ns);
  sim_json_int (b, "issue_error_max_ns", result->issue_error_max_ns);
  sim_json_int (b, "submit_call_p50_ns", result->submit_call_p50_ns);
  sim_json_int (b, "submit_call_p99_ns", result->submit_call_p99_ns);
  add_trace_latency (b, &result->trace_latency);
  json_builder_set_member_name (b, "warnings");
  json_builder_begin_array (b);
  for (guint i = 0; result->warnings && i < result->warnings->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (result->warnings, i));
  json_builder_end_array (b);
  add_plan (b, result->plan);
  add_processes (b, result);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  return replay_json_write_file (root, path, error);
}

/* The trace's latency of the replayed I/Os beside the replay's, or
 * "not recorded" where the trace has no completions. */
static void
print_trace_latency (const ReplayTraceLatency *t, ReplayEvents events, FILE *out)
{
  /* Nothing replayed (stopped before the first I/O): nothing to say. */
  if (t->ios + t->not_recorded == 0)
    return;
  if (t->ios == 0)
    {
      fprintf (out, "  trace latency not recorded: the trace has no completion for the %"
               G_GUINT64_FORMAT " replayed I/Os, so there is nothing to compare the replay's "
               "latency with\n", t->not_recorded);
      return;
    }
  fprintf (out, "  trace latency %12.1f us mean, %.1f us p50, %.1f us p99 as traced (%s, %"
           G_GUINT64_FORMAT " I/Os); replayed %.1f us mean on the same I/Os",
           t->mean_ns / 1e3, t->p50_ns / 1e3, t->p99_ns / 1e3,
           events == REPLAY_EVENTS_QUEUE ? "Q2C" : "D2C", t->ios, t->replayed_mean_ns / 1e3);
  if (t->mean_ns > 0)
    fprintf (out, " (x%.2f)", t->replayed_mean_ns / t->mean_ns);
  fputc ('\n', out);
  if (t->not_recorded > 0)
    fprintf (out, "                not recorded for %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
             " replayed I/Os (no completion in the trace): left out of both\n",
             t->not_recorded, t->ios + t->not_recorded);
}

void
replay_result_print (const ReplayResult *result, FILE *out)
{
  fprintf (out, "replay of %" G_GUINT64_FORMAT " I/Os on %s (%s events, %s timing, speed %g)\n",
           result->ios, result->target.path, replay_events_name (result->plan->events),
           replay_timing_name (result->plan->timing), result->plan->speed);
  fprintf (out, "  engine        %12s   (%u threads, depth %u per process, device depth %u (0 = none), %s;"
           " most in flight %u per process, %u on the device)\n",
           replay_engine_name (result->engine), result->threads, result->iodepth,
           result->device_depth,
           result->buffered ? "buffered" : "O_DIRECT", result->max_inflight_process,
           result->max_inflight_device);
  if (result->interrupted)
    fprintf (out, "  INTERRUPTED   %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " planned I/Os done\n",
             result->ios, result->plan->n_ios);
  fprintf (out, "  elapsed       %12.6f s\n", result->elapsed_ns / 1e9);
  fprintf (out, "  bytes         %12" G_GUINT64_FORMAT "   (%.2f MB/s)\n", result->bytes, result->mb_per_s);
  fprintf (out, "  errors        %12" G_GUINT64_FORMAT "\n", result->errors);
  fprintf (out, "  iops          %12.1f intended, %.1f achieved\n",
           result->intended_iops, result->achieved_iops);
  fprintf (out, "  issue error   %12.1f us p50, %.1f us p99, %.1f us max, %.1f us mean\n",
           result->issue_error_p50_ns / 1e3, result->issue_error_p99_ns / 1e3,
           result->issue_error_max_ns / 1e3, result->issue_error_mean_ns / 1e3);
  if (result->engine != REPLAY_ENGINE_PSYNC && result->ios > 0)
    fprintf (out, "  submit call   %12.1f us p50, %.1f us p99 (inside io_submit/io_uring_submit; "
             "near the gap between I/Os the submitter is CPU-bound)\n",
             result->submit_call_p50_ns / 1e3, result->submit_call_p99_ns / 1e3);
  print_trace_latency (&result->trace_latency, result->plan->events, out);
  if (result->plan->skipped_writes + result->plan->skipped_other + result->plan->aligned
      + result->plan->wrapped + result->plan->scaled + result->plan->clamped
      + result->plan->fell_back_to_issue > 0)
    fprintf (out, "  adjusted      %" G_GUINT64_FORMAT " writes skipped, %" G_GUINT64_FORMAT
             " discards/flushes skipped, %" G_GUINT64_FORMAT " aligned, %" G_GUINT64_FORMAT
             " wrapped, %" G_GUINT64_FORMAT " scaled, %" G_GUINT64_FORMAT " moved back inside "
             "the end, %" G_GUINT64_FORMAT " at D time\n",
             result->plan->skipped_writes, result->plan->skipped_other, result->plan->aligned,
             result->plan->wrapped, result->plan->scaled, result->plan->clamped,
             result->plan->fell_back_to_issue);
  fprintf (out, "\n%-24s %8s %12s %6s %12s %12s %12s %12s %12s\n", "process", "ios", "bytes",
           "errors", "lat_mean_us", "lat_p50_us", "lat_p95_us", "lat_p99_us", "lat_max_us");
  for (guint i = 0; result->processes && i < result->processes->len; i++)
    {
      const ReplayProcessSummary *s = &g_array_index (result->processes, ReplayProcessSummary, i);
      fprintf (out, "%-24s %8" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT
               " %12.1f %12.1f %12.1f %12.1f %12.1f\n", s->name, s->ios, s->bytes, s->errors,
               s->latency_mean_ns / 1e3, s->latency_p50_ns / 1e3, s->latency_p95_ns / 1e3,
               s->latency_p99_ns / 1e3, s->latency_max_ns / 1e3);
    }
}

gboolean
replay_json_write_file (JsonNode *root, const char *path, GError **error)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();

  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  gsize len = 0;
  g_autofree char *text = json_generator_to_data (gen, &len);
  return sim_output_write (path, text, (gssize) len, error);
}
