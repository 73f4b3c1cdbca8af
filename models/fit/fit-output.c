/* fit-output.c — what `iosim fit` writes: the scenario .ini that re-creates
 * the trace (GKeyFile syntax, read by the simulator), an aligned text
 * report and JSON with the same numbers.  Output never depends on the
 * clock or on hash order, so the same trace gives byte-identical files.
 */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit.h"
#include "sim/sim-units.h"
#include "traces/trace-results.h"

#define FIT_RESULTS_SECTOR_BYTES 512

static const char *
fit_op_name (TraceOp op)
{
  static const char *const names[] = {
    [TRACE_OP_READ] = "read",
    [TRACE_OP_WRITE] = "write",
    [TRACE_OP_DISCARD] = "discard",
    [TRACE_OP_FLUSH] = "flush",
    [TRACE_OP_OTHER] = "other",
  };

  g_return_val_if_fail ((guint) op < G_N_ELEMENTS (names), "other");
  return names[op];
}

/* A string value as GKeyFile escapes it (g_key_file_set_value rules). */
static void
fit_append_keyfile_value (GString *out, const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '\\')
        g_string_append (out, "\\\\");
      else if (*p == '\n')
        g_string_append (out, "\\n");
      else if (*p == '\r')
        g_string_append (out, "\\r");
      else if (*p == '\t')
        g_string_append (out, "\\t");
      else if (*p == ' ' && p == value)
        g_string_append (out, "\\s");
      else
        g_string_append_c (out, *p);
    }
}

/* A comment line: control characters would end it early. */
static void G_GNUC_PRINTF (2, 3)
fit_append_comment (GString *out, const char *format, ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  for (char *p = text; *p != '\0'; p++)
    if (g_ascii_iscntrl (*p))
      *p = '?';
  g_string_append_printf (out, "# %s\n", text);
}

/* Where a trace shows one request size, the slope of D2C over bytes is
 * unknown and the mean D2C (transfer included) becomes the overhead; the
 * scenario then gets a bandwidth so high that it adds nothing measurable,
 * rather than the model's default, which would count the transfer twice. */
#define FIT_UNIDENTIFIED_BANDWIDTH "1000000MB/s"

static void
fit_append_size (GString *out, guint64 bytes)
{
  const guint64 mib = 1024 * 1024;

  if (bytes % mib == 0)
    g_string_append_printf (out, "%" G_GUINT64_FORMAT "MiB", bytes / mib);
  else
    g_string_append_printf (out, "%" G_GUINT64_FORMAT, bytes);
}

static void
fit_describe_op (GString *out, const FitResult *r, const FitDeviceOp *f)
{
  const char *name = fit_op_name (f->op);

  if (f->n_total == 0)
    return;
  if (!f->fitted)
    {
      fit_append_comment (out, "%s: %" G_GUINT64_FORMAT " requests, too few to fit "
                          "(need %d); model defaults apply", name, f->n_total,
                          FIT_MIN_REQUESTS);
      return;
    }
  fit_append_comment (out, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                      " requests used (%s), %u size%s",
                      name, f->n_used, f->n_total,
                      f->isolated_only ? "issued with nothing else in flight"
                                       : "all: too few were issued alone",
                      f->n_sizes, f->n_sizes == 1 ? "" : "s");
  if (f->bandwidth_identified)
    fit_append_comment (out, "%s: least squares D2C = overhead + bytes / bandwidth, "
                        "R^2 %.4f, residual RMS %.3fus", name, f->r2,
                        f->residual_rms_ns / 1e3);
  else
    fit_append_comment (out, "%s: bandwidth not identifiable from this trace "
                        "(%s); overhead is the mean D2C, transfer included; "
                        "bandwidth " FIT_UNIDENTIFIED_BANDWIDTH " adds no transfer time", name,
                        f->n_sizes < 2 ? "one request size" : "no positive slope");
}

static void
fit_append_op_keys (GString *out, const FitDeviceOp *f, const char *prefix)
{
  if (!f->fitted)
    return;
  g_string_append_printf (out, "%soverhead = %.3fus\n", prefix, f->overhead_ns / 1e3);
  if (f->bandwidth_identified)
    g_string_append_printf (out, "%sbandwidth = %.2fMB/s\n", prefix,
                            f->bandwidth_bytes_per_s / 1e6);
  else
    g_string_append_printf (out, "%sbandwidth = " FIT_UNIDENTIFIED_BANDWIDTH "\n", prefix);
  fit_append_comment (out, "%s: quantiles at p = 0, %g, ..., 1 of the per-request overhead "
                      "(D2C minus bytes / bandwidth, at least 0; median %.3fus); the model "
                      "draws each request's overhead from them and ignores %soverhead, "
                      "which stays for readers", fit_op_name (f->op),
                      1.0 / (FIT_N_QUANTILES - 1),
                      f->overhead_quantiles_ns[FIT_N_QUANTILES / 2] / 1e3, prefix);
  g_string_append_printf (out, "%soverhead_quantiles = ", prefix);
  for (guint k = 0; k < FIT_N_QUANTILES; k++)
    g_string_append_printf (out, "%s%.3fus", k > 0 ? "," : "",
                            f->overhead_quantiles_ns[k] / 1e3);
  g_string_append_c (out, '\n');
}

static void
fit_append_process (GString *out, const FitResult *r, const FitProcess *p)
{
  fit_append_comment (out, "%" G_GUINT64_FORMAT " bios, %" G_GUINT64_FORMAT
                      " bytes (read %" G_GUINT64_FORMAT ", write %" G_GUINT64_FORMAT
                      "); %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                      " steps queued after the previous step completed",
                      p->ios, p->bytes, p->ios_by_op[TRACE_OP_READ],
                      p->ios_by_op[TRACE_OP_WRITE], p->dependent_pairs, p->pairs);
  if (!isnan (p->think_mean_ns))
    fit_append_comment (out, "think time: mean %.3fus, p50 %.3fus, p95 %.3fus",
                        p->think_mean_ns / 1e3, p->think_p50_ns / 1e3,
                        p->think_p95_ns / 1e3);
  g_string_append_printf (out, "[process %s]\ndevice = %s\npattern = trace\ntrace = ",
                          p->name, r->device_name);
  fit_append_keyfile_value (out, r->trace_path);
  g_string_append_printf (out, "\ntrace_pid = %u\ntrace_devno = %u,%u\ntiming = %s\n",
                          p->pid, r->dev_major, r->dev_minor,
                          p->closed_loop ? "closed" : "open");
}

char *
fit_scenario_to_data (const FitResult *r)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (r != NULL, NULL);

  fit_append_comment (out, "written by iosim fit from %s", r->trace_path);
  g_string_append (out, "[sim]\nseed = 1\nhz = 1000\n\n");

  fit_append_comment (out, "device %u,%u: %" G_GUINT64_FORMAT " requests, at most %u in flight",
                      r->dev_major, r->dev_minor, r->n_requests, r->max_in_flight);
  fit_describe_op (out, r, &r->read);
  fit_describe_op (out, r, &r->write);
  if (!r->capacity_from_meta)
    fit_append_comment (out, "capacity: highest sector reached, rounded up to MiB");
  if (g_strcmp0 (r->sched_source, "assumed") == 0)
    fit_append_comment (out, "scheduler not recorded in the trace: noop assumed");
  g_string_append_printf (out, "[device %s]\nkind = fixed\n", r->device_name);
  fit_append_op_keys (out, &r->read, "");
  fit_append_op_keys (out, &r->write, "write_");
  g_string_append_printf (out, "parallelism = %u\nqueue_depth = %u\ncapacity = ",
                          r->max_in_flight, r->max_in_flight);
  fit_append_size (out, r->capacity_bytes);
  g_string_append (out, "\nsched = ");
  fit_append_keyfile_value (out, r->sched);
  g_string_append_printf (out, "\ndevno = %u,%u\n", r->dev_major, r->dev_minor);

  for (guint i = 0; i < r->processes->len; i++)
    {
      g_string_append_c (out, '\n');
      fit_append_process (out, r, g_ptr_array_index (r->processes, i));
    }
  return g_string_free (out, FALSE);
}

gboolean
fit_write_scenario (const FitResult *result, const char *path, GError **error)
{
  g_autofree char *text = fit_scenario_to_data (result);

  return g_file_set_contents (path, text, -1, error);
}

gboolean
fit_write_measured_results (const FitResult *r, const char *path, GError **error)
{
  g_autoptr(GHashTable) names = g_hash_table_new (g_direct_hash, g_direct_equal);
  gint64 origin_ns = G_MAXINT64;
  FILE *out;
  int saved;
  gboolean failed;

  for (guint i = 0; i < r->processes->len; i++)
    {
      FitProcess *p = g_ptr_array_index (r->processes, i);

      g_hash_table_insert (names, GUINT_TO_POINTER (p->pid), p->name);
      origin_ns = MIN (origin_ns, p->first_queue_ns);
    }
  out = fopen (path, "w");
  if (out == NULL)
    {
      saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: %s", path, g_strerror (saved));
      return FALSE;
    }
  trace_results_write_header_kind (out, TRACE_LATENCY_BLOCK_Q2C);
  for (guint i = 0; i < r->ios->len; i++)
    {
      const TraceIo *io = &g_array_index (r->ios, TraceIo, i);
      gint64 start_ns = io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
      TraceResult row = {
        .process = g_hash_table_lookup (names, GUINT_TO_POINTER (io->pid)),
        .pid = io->pid,
        .device = r->device_name,
        .op = io->op,
        .offset_bytes = io->sector * FIT_RESULTS_SECTOR_BYTES,
        .bytes = (guint64) io->nr_sectors * FIT_RESULTS_SECTOR_BYTES,
        .intended_ns = start_ns - origin_ns,
        .issue_ns = start_ns - origin_ns,
        .complete_ns = io->complete_ns - origin_ns,
        .error = io->error, .latency_kind = TRACE_LATENCY_BLOCK_Q2C,
      };

      trace_results_write_row (out, &row);
    }
  failed = ferror (out) != 0;
  /* fclose flushes: its failure is a write failure too. */
  if (fclose (out) != 0)
    failed = TRUE;
  if (failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", path);
      return FALSE;
    }
  return TRUE;
}

/* ---- Text report -------------------------------------------------------- */

static void
fit_print_value (FILE *out, int width, int precision, double v, gboolean known)
{
  if (!known || isnan (v))
    fprintf (out, " %*s", width, "-");
  else
    fprintf (out, " %*.*f", width, precision, v);
}

static void
fit_print_op_row (FILE *out, const FitDeviceOp *f)
{
  fprintf (out, "%-6s %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %6u", fit_op_name (f->op), f->n_total, f->n_isolated, f->n_used, f->n_sizes);
  fit_print_value (out, 12, 3, f->overhead_ns / 1e3, f->fitted);
  fit_print_value (out, 10, 3, f->overhead_se_ns / 1e3, f->fitted);
  fit_print_value (out, 12, 2, f->bandwidth_bytes_per_s / 1e6, f->bandwidth_identified);
  fit_print_value (out, 7, 4, f->r2, f->bandwidth_identified);
  fit_print_value (out, 11, 3, f->residual_rms_ns / 1e3, f->fitted);
  fputc ('\n', out);
}

static void
fit_print_op_note (FILE *out, const FitResult *r, const FitDeviceOp *f)
{
  const char *name = fit_op_name (f->op);

  if (f->n_total == 0)
    return;
  if (!f->fitted)
    fprintf (out, "note: %s: only %" G_GUINT64_FORMAT " requests; no fit, model "
             "defaults apply\n", name, f->n_used);
  else if (!f->bandwidth_identified)
    fprintf (out, "note: %s: bandwidth is not identifiable from this trace (%s among "
             "the requests used); overhead is the mean D2C with the transfer "
             "included, and the scenario sets %sbandwidth = " FIT_UNIDENTIFIED_BANDWIDTH
             " so that no transfer time is added\n", name,
             f->n_sizes < 2 ? "one request size" : "no positive slope",
             f->op == TRACE_OP_WRITE ? "write_" : "");
  if (f->fitted && !f->isolated_only)
    fprintf (out, "note: %s: only %" G_GUINT64_FORMAT " requests were issued alone "
             "(need %d); all %" G_GUINT64_FORMAT " were used, so D2C includes "
             "waiting inside the device\n", name, f->n_isolated, FIT_MIN_ISOLATED,
             f->n_used);
}

static void
fit_print_processes (FILE *out, const FitResult *r)
{
  int w = (int) strlen ("process");

  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);
      w = MAX (w, (int) strlen (p->name));
    }
  fprintf (out, "%-*s %8s %8s %10s %6s %6s %7s %15s %10s %10s %10s\n", w, "process",
           "pid", "ios", "MB", "read%", "write%", "timing", "dependent",
           "think_us", "p50_us", "p95_us");
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);
      g_autofree char *dep = g_strdup_printf ("%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                                              p->dependent_pairs, p->pairs);

      fprintf (out, "%-*s %8u %8" G_GUINT64_FORMAT " %10.3f %6.1f %6.1f %7s %15s", w,
               p->name, p->pid, p->ios, (double) p->bytes / 1e6,
               100.0 * (double) p->ios_by_op[TRACE_OP_READ] / (double) p->ios,
               100.0 * (double) p->ios_by_op[TRACE_OP_WRITE] / (double) p->ios,
               p->closed_loop ? "closed" : "open", dep);
      fit_print_value (out, 10, 3, p->think_mean_ns / 1e3, TRUE);
      fit_print_value (out, 10, 3, p->think_p50_ns / 1e3, TRUE);
      fit_print_value (out, 10, 3, p->think_p95_ns / 1e3, TRUE);
      fputc ('\n', out);
    }
}

void
fit_print_report (const FitResult *r, FILE *out)
{
  g_autoptr(GString) cap = g_string_new (NULL);

  fit_append_size (cap, r->capacity_bytes);
  fprintf (out, "trace      %s\n", r->trace_path);
  fprintf (out, "device     %s (%u,%u), capacity %s (%s), scheduler %s (%s)\n",
           r->device_name, r->dev_major, r->dev_minor, cap->str,
           r->capacity_from_meta ? "from capture" : "highest sector reached",
           r->sched, r->sched_source);
  fprintf (out, "requests   %" G_GUINT64_FORMAT " (read %" G_GUINT64_FORMAT ", write %"
           G_GUINT64_FORMAT ", other %" G_GUINT64_FORMAT "), bios %" G_GUINT64_FORMAT
           ", max in flight %u (parallelism, queue_depth)\n",
           r->n_requests, r->requests_by_op[TRACE_OP_READ],
           r->requests_by_op[TRACE_OP_WRITE],
           r->n_requests - r->requests_by_op[TRACE_OP_READ] - r->requests_by_op[TRACE_OP_WRITE],
           r->n_ios, r->max_in_flight);
  if (r->have_stats)
    fprintf (out, "skipped    %" G_GUINT64_FORMAT " incomplete at end, %" G_GUINT64_FORMAT
             " completed without issue (in flight at start)\n",
             r->stats.incomplete_at_end, r->stats.completed_without_issue);
  fputc ('\n', out);
  fprintf (out, "%-6s %9s %9s %9s %6s %12s %10s %12s %7s %11s\n", "op", "requests",
           "alone", "used", "sizes", "overhead_us", "se_us", "bw_MB/s", "R^2",
           "resid_us");
  fit_print_op_row (out, &r->read);
  fit_print_op_row (out, &r->write);
  fit_print_op_note (out, r, &r->read);
  fit_print_op_note (out, r, &r->write);
  fputc ('\n', out);
  fit_print_processes (out, r);
}

/* ---- JSON --------------------------------------------------------------- */

static void
fit_json_num (JsonBuilder *b, const char *key, double v, gboolean known)
{
  json_builder_set_member_name (b, key);
  if (!known || isnan (v) || isinf (v))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, v);
}

/* Trace text (comm, paths) need not be UTF-8; JSON must be. */
static void
fit_json_text (JsonBuilder *b, const char *key, const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  json_builder_set_member_name (b, key);
  json_builder_add_string_value (b, valid);
}

static void
fit_json_int (JsonBuilder *b, const char *key, gint64 v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, v);
}

static void
fit_json_op (JsonBuilder *b, const FitDeviceOp *f)
{
  json_builder_set_member_name (b, fit_op_name (f->op));
  json_builder_begin_object (b);
  fit_json_int (b, "requests", (gint64) f->n_total);
  fit_json_int (b, "isolated", (gint64) f->n_isolated);
  fit_json_int (b, "used", (gint64) f->n_used);
  json_builder_set_member_name (b, "isolated_only");
  json_builder_add_boolean_value (b, f->isolated_only);
  fit_json_int (b, "sizes", f->n_sizes);
  json_builder_set_member_name (b, "fitted");
  json_builder_add_boolean_value (b, f->fitted);
  json_builder_set_member_name (b, "bandwidth_identified");
  json_builder_add_boolean_value (b, f->bandwidth_identified);
  fit_json_num (b, "overhead_us", f->overhead_ns / 1e3, f->fitted);
  fit_json_num (b, "overhead_se_us", f->overhead_se_ns / 1e3, f->fitted);
  fit_json_num (b, "bandwidth_mb_per_s", f->bandwidth_bytes_per_s / 1e6,
                f->bandwidth_identified);
  fit_json_num (b, "r2", f->r2, f->bandwidth_identified);
  fit_json_num (b, "residual_rms_us", f->residual_rms_ns / 1e3, f->fitted);
  fit_json_num (b, "mean_d2c_us", f->mean_d2c_ns / 1e3, f->fitted);
  fit_json_num (b, "mean_bytes", f->mean_bytes, f->fitted);
  /* p = k / (n - 1), the same values the scenario's overhead_quantiles holds. */
  json_builder_set_member_name (b, "overhead_quantiles_us");
  if (!f->fitted)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_array (b);
      for (guint k = 0; k < FIT_N_QUANTILES; k++)
        json_builder_add_double_value (b, f->overhead_quantiles_ns[k] / 1e3);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
}

static void
fit_json_process (JsonBuilder *b, const FitProcess *p)
{
  json_builder_begin_object (b);
  fit_json_text (b, "name", p->name);
  fit_json_int (b, "pid", p->pid);
  fit_json_text (b, "comm", p->comm);
  fit_json_int (b, "ios", (gint64) p->ios);
  fit_json_int (b, "bytes", (gint64) p->bytes);
  fit_json_int (b, "read_ios", (gint64) p->ios_by_op[TRACE_OP_READ]);
  fit_json_int (b, "write_ios", (gint64) p->ios_by_op[TRACE_OP_WRITE]);
  fit_json_int (b, "read_bytes", (gint64) p->bytes_by_op[TRACE_OP_READ]);
  fit_json_int (b, "write_bytes", (gint64) p->bytes_by_op[TRACE_OP_WRITE]);
  fit_json_int (b, "pairs", (gint64) p->pairs);
  fit_json_int (b, "dependent_pairs", (gint64) p->dependent_pairs);
  json_builder_set_member_name (b, "timing");
  json_builder_add_string_value (b, p->closed_loop ? "closed" : "open");
  fit_json_num (b, "think_mean_us", p->think_mean_ns / 1e3, TRUE);
  fit_json_num (b, "think_p50_us", p->think_p50_ns / 1e3, TRUE);
  fit_json_num (b, "think_p95_us", p->think_p95_ns / 1e3, TRUE);
  json_builder_end_object (b);
}

char *
fit_result_to_json (const FitResult *r)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *devno = g_strdup_printf ("%u,%u", r->dev_major, r->dev_minor);

  json_builder_begin_object (b);
  fit_json_text (b, "trace", r->trace_path);
  json_builder_set_member_name (b, "device");
  json_builder_begin_object (b);
  fit_json_text (b, "name", r->device_name);
  json_builder_set_member_name (b, "devno");
  json_builder_add_string_value (b, devno);
  fit_json_int (b, "capacity_bytes", (gint64) r->capacity_bytes);
  json_builder_set_member_name (b, "capacity_from_capture");
  json_builder_add_boolean_value (b, r->capacity_from_meta);
  fit_json_text (b, "sched", r->sched);
  json_builder_set_member_name (b, "sched_source");
  json_builder_add_string_value (b, r->sched_source);
  fit_json_int (b, "requests", (gint64) r->n_requests);
  fit_json_int (b, "ios", (gint64) r->n_ios);
  fit_json_int (b, "max_in_flight", r->max_in_flight);
  fit_json_op (b, &r->read);
  fit_json_op (b, &r->write);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < r->processes->len; i++)
    fit_json_process (b, g_ptr_array_index (r->processes, i));
  json_builder_end_array (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
