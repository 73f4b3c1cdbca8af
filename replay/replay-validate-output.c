/* replay-validate-output.c — what `iosim validate` hands back: aligned
 * tables, the JSON document and the gnuplot charts of a report
 * (replay-validate.h).  Nothing here depends on the clock or on hash
 * order: one report gives byte-identical outputs. */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "replay/replay-plot.h"
#include "replay/replay-validate.h"

/* ---- Text ---------------------------------------------------------------- */

/* Figures as printed: MB/s with 2 decimals, latencies in us, Jain with 3. */
static double
shown (ValidateMetric m, double v)
{
  return m == VALIDATE_MB_PER_S || m == VALIDATE_JAIN_INDEX ? v : v / 1e3;
}

static void
print_number (FILE *out, int width, int precision, double v)
{
  if (isnan (v))
    fprintf (out, " %*s", width, "-");
  else
    fprintf (out, " %*.*f", width, precision, v);
}

static void
print_interval (FILE *out, int width, int precision, double lo, double hi, const char *unit)
{
  g_autofree char *text = isnan (lo) ? g_strdup ("-")
                        : g_strdup_printf ("[%.*f, %.*f]%s", precision, lo, precision, hi, unit);
  fprintf (out, " %-*s", width, text);
}

static int
sched_width (const ReplayValidateReport *report)
{
  int w = (int) strlen ("sched") + 1;

  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      w = MAX (w, (int) strlen (s->sched) + 1);
    }
  return w;
}

static void
print_side (FILE *out, int w, const char *sched, const char *side_name, const ValidateSide *side)
{
  const ValidateEstimate *e = side->estimate;

  fprintf (out, "%-*s %-9s", w, sched, side_name);
  print_number (out, 9, 2, e[VALIDATE_MB_PER_S].mean);
  print_interval (out, 20, 2, e[VALIDATE_MB_PER_S].ci95_lo, e[VALIDATE_MB_PER_S].ci95_hi, "");
  print_number (out, 10, 1, shown (VALIDATE_MEAN_LATENCY_NS, e[VALIDATE_MEAN_LATENCY_NS].mean));
  print_interval (out, 20, 1, shown (VALIDATE_MEAN_LATENCY_NS, e[VALIDATE_MEAN_LATENCY_NS].ci95_lo),
                  shown (VALIDATE_MEAN_LATENCY_NS, e[VALIDATE_MEAN_LATENCY_NS].ci95_hi), "");
  for (guint m = VALIDATE_P50_LATENCY_NS; m <= VALIDATE_P99_LATENCY_NS; m++)
    print_number (out, 9, 1, shown (m, e[m].mean));
  print_number (out, 6, 3, e[VALIDATE_JAIN_INDEX].mean);
  fputc ('\n', out);
}

static void
print_figures (const ReplayValidateReport *report, FILE *out)
{
  int w = sched_width (report);

  fprintf (out, "%-*s %-9s %9s %-20s %10s %-20s %9s %9s %9s %6s\n", w, "sched", "side", "MB/s",
           " 95% CI", "mean_us", " 95% CI", "p50_us", "p95_us", "p99_us", "jain");
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      g_autofree char *name = g_strdup_printf ("%s%s", s->sched, s->trained ? "*" : "");

      print_side (out, w, name, "predicted", &s->predicted);
      print_side (out, w, "", "measured", &s->measured);
    }
  fprintf (out, "(* trained: the fit is of its first run; means over %u run%s, Student-t 95 %% "
           "intervals)\n", report->repeat, report->repeat == 1 ? "" : "s");
}

static void
print_demerits (const ReplayValidateReport *report, FILE *out)
{
  int w = sched_width (report);

  fprintf (out, "\n%-*s %12s %10s %16s %10s\n", w, "sched", "demerit_us", "% of mean",
           "repeats_demerit", "% of mean");
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);

      fprintf (out, "%-*s", w, s->sched);
      print_number (out, 12, 1, s->demerit_ns / 1e3);
      print_number (out, 10, 1, s->demerit_pct);
      print_number (out, 16, 1, s->repeat_demerit_ns / 1e3);
      print_number (out, 10, 1, s->repeat_demerit_pct);
      fputc ('\n', out);
    }
  fprintf (out, "(demerit: RMS distance of the response-time CDFs, predicted against measured; "
           "repeats: of each measured repeat against the one before, the floor the device's own "
           "spread sets)\n");
}

static const char *
tri_state (int v)
{
  return v < 0 ? "-" : v ? "yes" : "no";
}

static void
print_change_row (FILE *out, int w, const char *sched, const char *metric, const ValidateChange *c)
{
  g_autofree char *pred = isnan (c->predicted_pct) ? g_strdup ("-")
                        : g_strdup_printf ("%+.1f%%", c->predicted_pct);
  g_autofree char *meas = isnan (c->measured_pct) ? g_strdup ("-")
                        : g_strdup_printf ("%+.1f%%", c->measured_pct);
  g_autofree char *ci = isnan (c->measured_lo_pct) ? g_strdup ("-")
                      : g_strdup_printf ("[%+.1f%%, %+.1f%%]", c->measured_lo_pct,
                                         c->measured_hi_pct);

  fprintf (out, "%-*s %-14s %10s %10s %-22s %-7s %-12s %s\n", w, sched, metric, pred, meas, ci,
           tri_state (c->inside), tri_state (c->significant), tri_state (c->sign_agrees));
}

static void
print_changes (const ReplayValidateReport *report, FILE *out)
{
  const ValidateSched *trained = g_ptr_array_index (report->scheds, 0);
  int w = sched_width (report);

  if (report->scheds->len < 2)
    return;
  fprintf (out, "\nchange from %s (trained)\n%-*s %-14s %10s %10s %-22s %-7s %-12s %s\n",
           trained->sched, w, "sched", "figure", "predicted", "measured", "measured 95% CI",
           "inside", "significant", "same sign");
  for (guint i = 1; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);

      print_change_row (out, w, s->sched, "mean latency", &s->change[VALIDATE_MEAN_LATENCY_NS]);
      print_change_row (out, w, "", "p99 latency", &s->change[VALIDATE_P99_LATENCY_NS]);
      print_change_row (out, w, "", "throughput", &s->change[VALIDATE_MB_PER_S]);
    }
}

/* The estimate of process @name on @side, or NULL. */
static const ValidateEstimate *
process_estimate (const ValidateSide *side, const char *name)
{
  for (guint i = 0; i < side->process_names->len; i++)
    if (strcmp (g_ptr_array_index (side->process_names, i), name) == 0)
      return &g_array_index (side->process_mb_per_s, ValidateEstimate, i);
  return NULL;
}

static void
print_processes (const ReplayValidateReport *report, FILE *out)
{
  int w = sched_width (report), pw = (int) strlen ("process");

  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      for (guint k = 0; k < s->measured.process_names->len; k++)
        pw = MAX (pw, (int) strlen (g_ptr_array_index (s->measured.process_names, k)));
      for (guint k = 0; k < s->predicted.process_names->len; k++)
        pw = MAX (pw, (int) strlen (g_ptr_array_index (s->predicted.process_names, k)));
    }
  fprintf (out, "\nthroughput per process (MB/s; COMM.K: the processes of COMM by where their "
           "first I/O with data went)\n"
           "%-*s %-*s %10s %10s %-20s\n", w, "sched", pw, "process", "predicted", "measured",
           " 95% CI");
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      g_autoptr (GPtrArray) names = g_ptr_array_new ();

      /* Measured processes first, then those only the simulation has. */
      g_ptr_array_extend (names, s->measured.process_names, NULL, NULL);
      for (guint k = 0; k < s->predicted.process_names->len; k++)
        {
          const char *name = g_ptr_array_index (s->predicted.process_names, k);
          if (process_estimate (&s->measured, name) == NULL)
            g_ptr_array_add (names, (gpointer) name);
        }
      for (guint k = 0; k < names->len; k++)
        {
          const char *name = g_ptr_array_index (names, k);
          const ValidateEstimate *p = process_estimate (&s->predicted, name);
          const ValidateEstimate *m = process_estimate (&s->measured, name);

          fprintf (out, "%-*s %-*s", w, k == 0 ? s->sched : "", pw, name);
          print_number (out, 10, 2, p ? p->mean : NAN);
          print_number (out, 10, 2, m ? m->mean : NAN);
          print_interval (out, 20, 2, m ? m->ci95_lo : NAN, m ? m->ci95_hi : NAN, "");
          fputc ('\n', out);
        }
    }
}

/* Both rankings, then what the measurement could tell: the pairs whose
 * measured means differ significantly, and whether the model put each in
 * the same order. */
static void
print_ranking (FILE *out, const char *by, const char *predicted, const char *measured,
               const ValidateRankingCheck *check)
{
  fprintf (out, "ranking by %s:\n  predicted  %s\n  measured   %s   (%s)\n", by, predicted,
           measured, strcmp (predicted, measured) == 0 ? "same" : "differ");
  if (check->significant == 0)
    fprintf (out, "  measured apart: none of %u pair%s (nothing to predict)\n", check->pairs,
             check->pairs == 1 ? "" : "s");
  else
    fprintf (out, "  measured apart: %u of %u pair%s (%s); predicted in that order: %u\n",
             check->significant, check->pairs, check->pairs == 1 ? "" : "s", check->text,
             check->predicted);
}

void
replay_validate_report_print (const ReplayValidateReport *report, FILE *out)
{
  const ValidateSched *trained = g_ptr_array_index (report->scheds, 0);

  fprintf (out,
           "validate %s: %u scheduler%s x %u run%s; trained on %s; scenario %s (device %s)\n\n",
           report->target ? report->target : "-", report->scheds->len,
           report->scheds->len == 1 ? "" : "s", report->repeat, report->repeat == 1 ? "" : "s",
           trained->sched,
           report->scenario_path ? report->scenario_path : "not kept (--work-dir DIR keeps it)",
           report->sim_device ? report->sim_device : "-");
  print_figures (report, out);
  print_demerits (report, out);
  print_changes (report, out);
  print_processes (report, out);
  fputc ('\n', out);
  print_ranking (out, "mean latency (best first; = a tie)", report->ranking_predicted_text,
                 report->ranking_measured_text, &report->ranking_check);
  print_ranking (out, "throughput (best first; = a tie)", report->ranking_predicted_mb_per_s_text,
                 report->ranking_measured_mb_per_s_text, &report->ranking_check_mb_per_s);
  replay_validate_nfs_print (report, out);
  replay_validate_wbt_print (report, out);
}

/* ---- JSON ---------------------------------------------------------------- */

static void
add_number (JsonBuilder *b, const char *name, double v)
{
  json_builder_set_member_name (b, name);
  if (isnan (v) || isinf (v))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, v);
}

static void
add_tri_state (JsonBuilder *b, const char *name, int v)
{
  json_builder_set_member_name (b, name);
  if (v < 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_boolean_value (b, v);
}

static void
add_interval (JsonBuilder *b, const char *name, double lo, double hi)
{
  json_builder_set_member_name (b, name);
  if (isnan (lo) || isnan (hi))
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  json_builder_add_double_value (b, lo);
  json_builder_add_double_value (b, hi);
  json_builder_end_array (b);
}

static void
add_string (JsonBuilder *b, const char *name, const char *v)
{
  json_builder_set_member_name (b, name);
  if (v)
    json_builder_add_string_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
add_strv (JsonBuilder *b, const char *name, GStrv v)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; v && v[i]; i++)
    json_builder_add_string_value (b, v[i]);
  json_builder_end_array (b);
}

static void
add_side (JsonBuilder *b, const char *name, const ValidateSide *side)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  for (guint m = 0; m < VALIDATE_N_METRICS; m++)
    add_number (b, replay_validate_metric_name (m), side->estimate[m].mean);
  json_builder_set_member_name (b, "runs");
  json_builder_add_int_value (b, side->runs->len);
  json_builder_set_member_name (b, "ci95");
  json_builder_begin_object (b);
  for (guint m = 0; m < VALIDATE_N_METRICS; m++)
    add_interval (b, replay_validate_metric_name (m), side->estimate[m].ci95_lo,
                  side->estimate[m].ci95_hi);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "per_run");
  json_builder_begin_array (b);
  for (guint r = 0; r < side->runs->len; r++)
    {
      const ValidateRun *run = g_ptr_array_index (side->runs, r);
      json_builder_begin_object (b);
      for (guint m = 0; m < VALIDATE_N_METRICS; m++)
        add_number (b, replay_validate_metric_name (m), run->values[m]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < side->process_names->len; i++)
    {
      const ValidateEstimate *e = &g_array_index (side->process_mb_per_s, ValidateEstimate, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, g_ptr_array_index (side->process_names, i));
      add_number (b, "mb_per_s", e->mean);
      add_interval (b, "ci95", e->ci95_lo, e->ci95_hi);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
add_changes (JsonBuilder *b, const ValidateSched *s)
{
  json_builder_set_member_name (b, "change_from_trained");
  json_builder_begin_object (b);
  for (guint m = 0; m < VALIDATE_N_METRICS; m++)
    {
      const ValidateChange *c = &s->change[m];
      json_builder_set_member_name (b, replay_validate_metric_name (m));
      json_builder_begin_object (b);
      add_number (b, "predicted_pct", c->predicted_pct);
      add_number (b, "measured_pct", c->measured_pct);
      add_interval (b, "measured_ci95_pct", c->measured_lo_pct, c->measured_hi_pct);
      add_tri_state (b, "inside", c->inside);
      add_tri_state (b, "significant", c->significant);
      add_tri_state (b, "sign_agrees", c->sign_agrees);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static void
add_sched (JsonBuilder *b, const ValidateSched *s)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "sched");
  json_builder_add_string_value (b, s->sched);
  json_builder_set_member_name (b, "sim_sched");
  if (s->sim_sched)
    json_builder_add_string_value (b, s->sim_sched);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "trained");
  json_builder_add_boolean_value (b, s->trained);
  add_side (b, "predicted", &s->predicted);
  add_side (b, "measured", &s->measured);
  add_number (b, "demerit_ns", s->demerit_ns);
  add_number (b, "demerit_pct", s->demerit_pct);
  add_number (b, "repeat_demerit_ns", s->repeat_demerit_ns);
  add_number (b, "repeat_demerit_pct", s->repeat_demerit_pct);
  /* (predicted - measured) / measured of each figure's mean, in %. */
  json_builder_set_member_name (b, "error_pct");
  json_builder_begin_object (b);
  for (guint m = 0; m < VALIDATE_N_METRICS; m++)
    {
      double meas = s->measured.estimate[m].mean, pred = s->predicted.estimate[m].mean;
      add_number (b, replay_validate_metric_name (m),
                  meas != 0 ? 100.0 * (pred - meas) / meas : NAN);
    }
  json_builder_end_object (b);
  add_changes (b, s);
  json_builder_end_object (b);
}

static void
add_workload (JsonBuilder *b, const ReplayValidateReport *report)
{
  json_builder_set_member_name (b, "workload");
  json_builder_begin_object (b);
  if (report->argv)
    {
      add_string (b, "kind", "command");
      add_strv (b, "command", report->argv);
    }
  else if (report->target_dir)
    replay_validate_nfs_add_json (b, report);
  else if (report->trace_path)
    {
      add_string (b, "kind", "trace");
      json_builder_set_member_name (b, "trace");
      json_builder_add_string_value (b, report->trace_path);
    }
  json_builder_end_object (b);
}

/* {"pairs", "measured_apart", "predicted_in_order", "apart": "a before
 * b, ...", "agrees"}: agrees when every pair the measurement tells apart
 * is predicted in its order (vacuously so when none is). */
static void
add_ranking_check (JsonBuilder *b, const char *name, const ValidateRankingCheck *check)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "pairs");
  json_builder_add_int_value (b, check->pairs);
  json_builder_set_member_name (b, "measured_apart");
  json_builder_add_int_value (b, check->significant);
  json_builder_set_member_name (b, "predicted_in_order");
  json_builder_add_int_value (b, check->predicted);
  add_string (b, "apart", check->text);
  json_builder_set_member_name (b, "agrees");
  json_builder_add_boolean_value (b, check->predicted == check->significant);
  json_builder_end_object (b);
}

char *
replay_validate_report_to_json (const ReplayValidateReport *report)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "target");
  if (report->target)
    json_builder_add_string_value (b, report->target);
  else
    json_builder_add_null_value (b);
  add_workload (b, report);
  json_builder_set_member_name (b, "repeat");
  json_builder_add_int_value (b, report->repeat);
  json_builder_set_member_name (b, "scenario");
  if (report->scenario_path)
    json_builder_add_string_value (b, report->scenario_path);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "latency");
  json_builder_add_string_value (b, "block layer: queue (Q) to completion (C) measured, "
                                 "submission to completion simulated");
  json_builder_set_member_name (b, "schedulers");
  json_builder_begin_array (b);
  for (guint i = 0; i < report->scheds->len; i++)
    add_sched (b, g_ptr_array_index (report->scheds, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "ranking_by");
  json_builder_add_string_value (b, "mean_latency_ns");
  add_strv (b, "ranking_predicted", report->ranking_predicted);
  add_strv (b, "ranking_measured", report->ranking_measured);
  add_string (b, "ranking_predicted_text", report->ranking_predicted_text);
  add_string (b, "ranking_measured_text", report->ranking_measured_text);
  /* A tie in one ranking and an order in the other do not agree. */
  json_builder_set_member_name (b, "ranking_agrees");
  json_builder_add_boolean_value (b, strcmp (report->ranking_predicted_text,
                                             report->ranking_measured_text) == 0);
  add_strv (b, "ranking_predicted_mb_per_s", report->ranking_predicted_mb_per_s);
  add_strv (b, "ranking_measured_mb_per_s", report->ranking_measured_mb_per_s);
  add_string (b, "ranking_predicted_mb_per_s_text", report->ranking_predicted_mb_per_s_text);
  add_string (b, "ranking_measured_mb_per_s_text", report->ranking_measured_mb_per_s_text);
  json_builder_set_member_name (b, "ranking_mb_per_s_agrees");
  json_builder_add_boolean_value (b, strcmp (report->ranking_predicted_mb_per_s_text,
                                             report->ranking_measured_mb_per_s_text) == 0);
  add_ranking_check (b, "ranking_significant", &report->ranking_check);
  add_ranking_check (b, "ranking_mb_per_s_significant", &report->ranking_check_mb_per_s);
  replay_validate_wbt_json (b, report);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

/* ---- Plots --------------------------------------------------------------- */

static const char *const plot_colours[] = {
  "#1f6fb4", "#d2301e", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
};

/* $NAME: the CDF of @latency_ns in ms, zeros left out (log axis). */
static gboolean
append_cdf (GString *script, const char *name, const GArray *latency_ns, double *x_min,
            double *x_max)
{
  g_autoptr (GArray) points = NULL;
  g_autoptr (GArray) x = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) y = g_array_new (FALSE, FALSE, sizeof (double));

  if (latency_ns->len == 0)
    return FALSE;
  points = replay_compare_cdf_points (latency_ns, REPLAY_COMPARE_CDF_MAX_POINTS);
  for (guint i = 0; i < points->len; i++)
    {
      const ReplayCompareCdfPoint *pt = &g_array_index (points, ReplayCompareCdfPoint, i);
      double ms = pt->latency_ns / 1e6;

      if (pt->latency_ns <= 0)
        continue;
      g_array_append_val (x, ms);
      g_array_append_val (y, pt->cum_fraction);
      *x_min = MIN (*x_min, ms);
      *x_max = MAX (*x_max, ms);
    }
  replay_plot_append_datablock (script, name, (const double *) (void *) x->data,
                                (const double *) (void *) y->data, x->len);
  return x->len > 0;
}

static gboolean
plot_cdfs (const ReplayValidateReport *report, const char *path, GError **error)
{
  g_autoptr (GString) script = g_string_new (NULL);
  g_autoptr (GString) plot = g_string_new ("plot ");
  double x_min = INFINITY, x_max = -INFINITY;

  replay_plot_begin (script, REPLAY_PLOT_PNG, path);
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      const char *colour = plot_colours[i % G_N_ELEMENTS (plot_colours)];
      const ValidateRun *p = g_ptr_array_index (s->predicted.runs, 0);
      const ValidateRun *m = g_ptr_array_index (s->measured.runs, 0);
      g_autofree char *pn = g_strdup_printf ("p%u", i), *mn = g_strdup_printf ("m%u", i);
      g_autofree char *pl = g_strdup_printf ("%s predicted", s->sched);
      g_autofree char *ml = g_strdup_printf ("%s measured%s", s->sched,
                                             s->trained ? " (trained)" : "");

      if (!append_cdf (script, pn, p->latency_ns, &x_min, &x_max)
          || !append_cdf (script, mn, m->latency_ns, &x_min, &x_max))
        {
          g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_DATA,
                       "%s: no latency above 0 under %s", path, s->sched);
          return FALSE;
        }
      g_string_append_printf (plot, "%s$%s using 1:2 with steps lw 2 dt 2 lc rgb '%s' title ",
                              i > 0 ? ", \\\n     " : "", pn, colour);
      replay_plot_append_quoted (plot, pl);
      g_string_append_printf (plot, ", \\\n     $%s using 1:2 with steps lw 2.5 lc rgb '%s' title ",
                              mn, colour);
      replay_plot_append_quoted (plot, ml);
    }
  g_string_append_printf (script, "set xrange [%.12g:%.12g]\n", x_min / 1.3, x_max * 1.3);
  g_string_append (script,
    "set title 'response time per scheduler: predicted (dashed) against measured (solid), run 1'\n"
    "set xlabel 'response time (ms, log scale)'\nset ylabel 'cumulative fraction of I/Os'\n"
    "set logscale x 10\nset yrange [0:1]\nset ytics 0.1\n"
    "set grid xtics ytics lt 1 lc rgb '#c8c8c8' lw 1\n"
    "set key bottom right box opaque spacing 1.2\n");
  g_string_append (script, plot->str);
  g_string_append (script, "\nunset output\n");
  return replay_plot_run (script->str, path, error);
}

/* Rows "index predicted measured lo hi" of @metric, shown units. */
static void
append_bars (GString *script, const char *name, const ReplayValidateReport *report,
             ValidateMetric metric)
{
  g_string_append_printf (script, "$%s << EOD\n", name);
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      const ValidateEstimate *m = &s->measured.estimate[metric];
      double lo = isnan (m->ci95_lo) ? m->mean : m->ci95_lo;
      double hi = isnan (m->ci95_hi) ? m->mean : m->ci95_hi;

      g_string_append_printf (script, "%u %.9g %.9g %.9g %.9g\n", i,
                              shown (metric, s->predicted.estimate[metric].mean),
                              shown (metric, m->mean), shown (metric, lo), shown (metric, hi));
    }
  g_string_append (script, "EOD\n");
}

static gboolean
plot_bars (const ReplayValidateReport *report, const char *path, GError **error)
{
  g_autoptr (GString) script = g_string_new (NULL);
  g_autoptr (GString) xtics = g_string_new ("set xtics (");

  replay_plot_begin (script, REPLAY_PLOT_PNG, path);
  append_bars (script, "lat", report, VALIDATE_MEAN_LATENCY_NS);
  append_bars (script, "tput", report, VALIDATE_MB_PER_S);
  for (guint i = 0; i < report->scheds->len; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      g_autofree char *label = g_strdup_printf ("%s%s", s->sched, s->trained ? "*" : "");

      if (i > 0)
        g_string_append (xtics, ", ");
      replay_plot_append_quoted (xtics, label);
      g_string_append_printf (xtics, " %u", i);
    }
  g_string_append (xtics, ")\n");
  g_string_append_printf (script,
    "set multiplot layout 1,2 title 'predicted against measured (error bars: measured 95%% "
    "interval; * trained)'\n"
    "set style fill solid 0.8 border -1\nset boxwidth 0.35\nset grid ytics\n"
    "set xrange [-0.6:%u.6]\nset yrange [0:*]\nset key below\n%s",
    report->scheds->len - 1, xtics->str);
  g_string_append (script,
    "set title 'mean response time'\nset ylabel 'us'\n"
    "plot $lat using ($1-0.18):2 with boxes lc rgb '#1f6fb4' title 'predicted', \\\n"
    "     $lat using ($1+0.18):3 with boxes lc rgb '#d2301e' title 'measured', \\\n"
    "     $lat using ($1+0.18):3:4:5 with yerrorbars lc rgb 'black' pt 0 notitle\n"
    "set title 'throughput'\nset ylabel 'MB/s'\n"
    "plot $tput using ($1-0.18):2 with boxes lc rgb '#1f6fb4' title 'predicted', \\\n"
    "     $tput using ($1+0.18):3 with boxes lc rgb '#d2301e' title 'measured', \\\n"
    "     $tput using ($1+0.18):3:4:5 with yerrorbars lc rgb 'black' pt 0 notitle\n"
    "unset multiplot\nunset output\n");
  return replay_plot_run (script->str, path, error);
}

gboolean
replay_validate_plot (const ReplayValidateReport *report, const char *dir, GError **error)
{
  g_autofree char *cdf = g_build_filename (dir, "latency-cdf.png", NULL);
  g_autofree char *bars = g_build_filename (dir, "predicted-vs-measured.png", NULL);
  g_autofree char *gnuplot = replay_plot_find_gnuplot (error);

  if (gnuplot == NULL)
    return FALSE;
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }
  return plot_cdfs (report, cdf, error) && plot_bars (report, bars, error);
}
