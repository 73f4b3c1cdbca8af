/* replay-compare.c — simulated vs measured per-I/O results: demerit figure
 * (Ruemmler & Wilkes 1994, computed as DiskSim 4.0's rms.c does), KS
 * statistic, percentile, throughput and IOPS errors.  See replay-compare.h.
 */
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "replay/replay-compare.h"
#include "sim/sim-json.h"

/* ---- Distribution metrics ---------------------------------------------- */

double
replay_compare_quantile (const double *sorted, gsize n, double p)
{
  double h, frac;
  gsize lo;

  g_return_val_if_fail (sorted != NULL && n > 0, NAN);
  g_return_val_if_fail (p >= 0.0 && p <= 1.0, NAN);

  h = p * (double) (n - 1);
  lo = (gsize) floor (h);
  if (lo >= n - 1)
    return sorted[n - 1];
  frac = h - (double) lo;
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double
replay_compare_demerit (const double *a_sorted, gsize n_a,
                        const double *b_sorted, gsize n_b,
                        double *mean_distance)
{
  double sum_sq = 0.0, sum_abs = 0.0;

  g_return_val_if_fail (n_a > 0 && n_b > 0, NAN);

  for (guint k = 1; k <= REPLAY_COMPARE_POINTS; k++)
    {
      double p = (double) k / REPLAY_COMPARE_POINTS;
      double dx = replay_compare_quantile (a_sorted, n_a, p)
                  - replay_compare_quantile (b_sorted, n_b, p);

      sum_sq += dx * dx;
      sum_abs += fabs (dx);
    }
  if (mean_distance != NULL)
    *mean_distance = sum_abs / REPLAY_COMPARE_POINTS;
  return sqrt (sum_sq / REPLAY_COMPARE_POINTS);
}

double
replay_compare_ks (const double *a_sorted, gsize n_a,
                   const double *b_sorted, gsize n_b)
{
  gsize i = 0, j = 0;
  double d = 0.0;

  g_return_val_if_fail (n_a > 0 && n_b > 0, NAN);

  /* Walk the distinct values in order; both CDFs jump at once on ties. */
  while (i < n_a || j < n_b)
    {
      double v, gap;

      if (j >= n_b || (i < n_a && a_sorted[i] <= b_sorted[j]))
        v = a_sorted[i];
      else
        v = b_sorted[j];
      while (i < n_a && a_sorted[i] <= v)
        i++;
      while (j < n_b && b_sorted[j] <= v)
        j++;
      gap = fabs ((double) i / (double) n_a - (double) j / (double) n_b);
      d = MAX (d, gap);
    }
  return d;
}

/* ---- Grouping results --------------------------------------------------- */

/* The I/Os of one group on one side. */
typedef struct {
  GArray  *latency_ms;    /* double, sorted before use */
  GArray  *latency_ns;    /* gint64, the same samples, sorted before use */
  guint64  bytes;
  gint64   first_issue_ns;
  gint64   last_complete_ns;
} CompareGroup;

static CompareGroup *
compare_group_new (void)
{
  CompareGroup *g = g_new0 (CompareGroup, 1);

  g->latency_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g->latency_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  g->first_issue_ns = G_MAXINT64;
  g->last_complete_ns = G_MININT64;
  return g;
}

static void
compare_group_free (gpointer data)
{
  CompareGroup *g = data;

  g_array_unref (g->latency_ms);
  g_array_unref (g->latency_ns);
  g_free (g);
}

static void
compare_group_add (CompareGroup *g, const TraceResult *r)
{
  gint64 ns = r->complete_ns - r->issue_ns;
  double ms = (double) ns / 1e6;

  g_array_append_val (g->latency_ms, ms);
  g_array_append_val (g->latency_ns, ns);
  g->bytes += r->bytes;
  g->first_issue_ns = MIN (g->first_issue_ns, r->issue_ns);
  g->last_complete_ns = MAX (g->last_complete_ns, r->complete_ns);
}

static int
compare_double_cmp (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static int
compare_int64_cmp (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* Group rows by process name; also fill @all with every row. */
static GHashTable *
compare_group_by_process (const TraceResults *results, CompareGroup *all)
{
  GHashTable *groups = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                              compare_group_free);

  for (guint i = 0; i < trace_results_len (results); i++)
    {
      const TraceResult *r = trace_results_get (results, i);
      CompareGroup *g = g_hash_table_lookup (groups, r->process);

      if (g == NULL)
        {
          g = compare_group_new ();
          g_hash_table_insert (groups, r->process, g);
        }
      compare_group_add (g, r);
      compare_group_add (all, r);
    }
  return groups;
}

static void
compare_side_fill (CompareGroup *g, ReplayCompareSide *side)
{
  const double *v;
  gsize n = g->latency_ms->len;
  double sum = 0.0;

  g_assert (n > 0);
  g_array_sort (g->latency_ms, compare_double_cmp);
  g_array_sort (g->latency_ns, compare_int64_cmp);
  v = (const double *) g->latency_ms->data;
  for (gsize i = 0; i < n; i++)
    sum += v[i];

  side->ios = n;
  side->bytes = g->bytes;
  side->span_s = (double) (g->last_complete_ns - g->first_issue_ns) / 1e9;
  side->mean_ms = sum / (double) n;
  side->p50_ms = replay_compare_quantile (v, n, 0.50);
  side->p95_ms = replay_compare_quantile (v, n, 0.95);
  side->p99_ms = replay_compare_quantile (v, n, 0.99);
  side->max_ms = v[n - 1];
  /* A span of zero (one instantaneous I/O) has no meaningful rate. */
  side->mb_per_s = side->span_s > 0 ? (double) g->bytes / 1e6 / side->span_s : NAN;
  side->iops = side->span_s > 0 ? (double) n / side->span_s : NAN;
}

static double
compare_error_pct (double sim, double meas)
{
  if (isnan (sim) || isnan (meas) || meas == 0.0)
    return NAN;
  return (sim - meas) / meas * 100.0;
}

static ReplayCompareRow *
compare_row_new (const char *name, CompareGroup *sim, CompareGroup *meas)
{
  ReplayCompareRow *row = g_new0 (ReplayCompareRow, 1);
  double demerit, mean_dist;

  row->name = g_strdup (name);
  compare_side_fill (sim, &row->sim);
  compare_side_fill (meas, &row->meas);
  row->sim_latency_ns = g_array_ref (sim->latency_ns);
  row->meas_latency_ns = g_array_ref (meas->latency_ns);

  demerit = replay_compare_demerit ((const double *) sim->latency_ms->data,
                                    sim->latency_ms->len,
                                    (const double *) meas->latency_ms->data,
                                    meas->latency_ms->len, &mean_dist);
  row->demerit_ms = demerit;
  row->mean_distance_ms = mean_dist;
  row->demerit_pct = row->meas.mean_ms > 0 ? demerit / row->meas.mean_ms * 100.0 : NAN;
  row->ks_d = replay_compare_ks ((const double *) sim->latency_ms->data,
                                 sim->latency_ms->len,
                                 (const double *) meas->latency_ms->data,
                                 meas->latency_ms->len);
  row->mean_error_pct = compare_error_pct (row->sim.mean_ms, row->meas.mean_ms);
  row->p50_error_pct = compare_error_pct (row->sim.p50_ms, row->meas.p50_ms);
  row->p95_error_pct = compare_error_pct (row->sim.p95_ms, row->meas.p95_ms);
  row->p99_error_pct = compare_error_pct (row->sim.p99_ms, row->meas.p99_ms);
  row->throughput_error_pct = compare_error_pct (row->sim.mb_per_s,
                                                 row->meas.mb_per_s);
  row->iops_error_pct = compare_error_pct (row->sim.iops, row->meas.iops);
  return row;
}

static void
compare_row_free (gpointer data)
{
  ReplayCompareRow *row = data;

  if (row == NULL)
    return;
  g_free (row->name);
  g_clear_pointer (&row->sim_latency_ns, g_array_unref);
  g_clear_pointer (&row->meas_latency_ns, g_array_unref);
  g_free (row);
}

static int
compare_str_ptr_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
compare_row_cmp (gconstpointer a, gconstpointer b)
{
  const ReplayCompareRow *x = *(ReplayCompareRow *const *) a;
  const ReplayCompareRow *y = *(ReplayCompareRow *const *) b;

  return strcmp (x->name, y->name);
}

/* How to get a results file of @kind, for the refusal's advice. */
static const char *
compare_kind_source (TraceLatencyKind kind)
{
  switch (kind)
    {
    case TRACE_LATENCY_SYSCALL:
      return "system-call latency, as iosim replay --csv writes";
    case TRACE_LATENCY_BLOCK_Q2C:
      return "block-layer Q to C latency, as iosim fit --measured writes from a trace";
    case TRACE_LATENCY_UNKNOWN:
    case TRACE_LATENCY_N_KINDS:
    default:
      break;
    }
  return "latency of unknown kind";
}

/* Refuse two known kinds that differ: a system call's latency includes
 * the syscall path and the caller's wake-up around the block layer's Q
 * to C, so their difference is not the model's error. */
static gboolean
compare_check_kinds (TraceLatencyKind sim, const char *sim_label, TraceLatencyKind meas,
                     const char *meas_label, GError **error)
{
  if (sim == meas || sim == TRACE_LATENCY_UNKNOWN || meas == TRACE_LATENCY_UNKNOWN)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "%s holds %s latencies (%s) but %s holds %s latencies (%s): they time "
               "different spans of each I/O, so their difference is not the model's error.  "
               "For block-q2c on both sides, replay with --capture TRACE and run iosim fit "
               "--measured on TRACE; for syscall on both sides, compare two iosim replay --csv "
               "files; --allow-mixed-latency compares them anyway",
               sim_label, trace_latency_kind_name (sim), compare_kind_source (sim),
               meas_label, trace_latency_kind_name (meas), compare_kind_source (meas));
  return FALSE;
}

ReplayCompareReport *
replay_compare_results (const TraceResults *simulated,
                        const TraceResults *measured, GError **error)
{
  return replay_compare_results_full (simulated, measured, REPLAY_COMPARE_FLAGS_NONE, error);
}

ReplayCompareReport *
replay_compare_results_full (const TraceResults *simulated, const TraceResults *measured,
                             ReplayCompareFlags flags, GError **error)
{
  g_autoptr(ReplayCompareReport) report = NULL;
  g_autoptr(GHashTable) sim_groups = NULL;
  g_autoptr(GHashTable) meas_groups = NULL;
  CompareGroup *sim_all, *meas_all;
  GHashTableIter iter;
  gpointer key, value;

  g_return_val_if_fail (simulated != NULL && measured != NULL, NULL);

  if (trace_results_len (simulated) == 0 || trace_results_len (measured) == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "the %s results hold no I/O; nothing to compare",
                   trace_results_len (simulated) == 0 ? "simulated" : "measured");
      return NULL;
    }
  if (!(flags & REPLAY_COMPARE_ALLOW_MIXED_LATENCY)
      && !compare_check_kinds (trace_results_latency_kind (simulated), "the simulated file",
                               trace_results_latency_kind (measured), "the measured file",
                               error))
    return NULL;

  report = g_new0 (ReplayCompareReport, 1);
  report->simulated_latency_kind = trace_results_latency_kind (simulated);
  report->measured_latency_kind = trace_results_latency_kind (measured);
  report->processes = g_ptr_array_new_with_free_func (compare_row_free);
  report->only_simulated = g_ptr_array_new_with_free_func (g_free);
  report->only_measured = g_ptr_array_new_with_free_func (g_free);

  sim_all = compare_group_new ();
  meas_all = compare_group_new ();
  sim_groups = compare_group_by_process (simulated, sim_all);
  meas_groups = compare_group_by_process (measured, meas_all);

  g_hash_table_iter_init (&iter, sim_groups);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      CompareGroup *m = g_hash_table_lookup (meas_groups, key);

      if (m == NULL)
        g_ptr_array_add (report->only_simulated, g_strdup (key));
      else
        g_ptr_array_add (report->processes, compare_row_new (key, value, m));
    }
  g_hash_table_iter_init (&iter, meas_groups);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!g_hash_table_contains (sim_groups, key))
      g_ptr_array_add (report->only_measured, g_strdup (key));

  g_ptr_array_sort (report->processes, compare_row_cmp);
  g_ptr_array_sort (report->only_simulated, compare_str_ptr_cmp);
  g_ptr_array_sort (report->only_measured, compare_str_ptr_cmp);
  report->overall = compare_row_new ("overall", sim_all, meas_all);
  compare_group_free (sim_all);
  compare_group_free (meas_all);
  return g_steal_pointer (&report);
}

ReplayCompareReport *
replay_compare_files (const char *simulated_path, const char *measured_path,
                      GError **error)
{
  return replay_compare_files_full (simulated_path, measured_path, REPLAY_COMPARE_FLAGS_NONE,
                                    error);
}

ReplayCompareReport *
replay_compare_files_full (const char *simulated_path, const char *measured_path,
                           ReplayCompareFlags flags, GError **error)
{
  g_autofree char *sim_label = NULL;
  g_autofree char *meas_label = NULL;
  g_autoptr(TraceResults) sim = NULL;
  g_autoptr(TraceResults) meas = NULL;
  ReplayCompareReport *report;

  sim = trace_results_load (simulated_path, error);
  if (sim == NULL)
    return NULL;
  meas = trace_results_load (measured_path, error);
  if (meas == NULL)
    return NULL;
  /* Checked here too, to name the files rather than the sides. */
  sim_label = g_strdup_printf ("simulated %s", simulated_path);
  meas_label = g_strdup_printf ("measured %s", measured_path);
  if (!(flags & REPLAY_COMPARE_ALLOW_MIXED_LATENCY)
      && !compare_check_kinds (trace_results_latency_kind (sim), sim_label,
                               trace_results_latency_kind (meas), meas_label, error))
    return NULL;
  report = replay_compare_results_full (sim, meas, REPLAY_COMPARE_ALLOW_MIXED_LATENCY, error);
  if (report == NULL)
    return NULL;
  report->simulated_path = g_strdup (simulated_path);
  report->measured_path = g_strdup (measured_path);
  return report;
}

void
replay_compare_report_free (ReplayCompareReport *report)
{
  if (report == NULL)
    return;
  g_ptr_array_unref (report->processes);
  g_ptr_array_unref (report->only_simulated);
  g_ptr_array_unref (report->only_measured);
  compare_row_free (report->overall);
  g_free (report->simulated_path);
  g_free (report->measured_path);
  g_free (report);
}

/* ---- Output ------------------------------------------------------------- */

static void
compare_print_num (FILE *out, int width, int precision, double v)
{
  if (isnan (v))
    fprintf (out, " %*s", width, "-");
  else
    fprintf (out, " %*.*f", width, precision, v);
}

static void
compare_print_row (FILE *out, int name_width, const ReplayCompareRow *row)
{
  fprintf (out, "%-*s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT,
           name_width, row->name, row->sim.ios, row->meas.ios);
  compare_print_num (out, 9, 3, row->sim.mean_ms);
  compare_print_num (out, 9, 3, row->meas.mean_ms);
  compare_print_num (out, 9, 3, row->demerit_ms);
  compare_print_num (out, 8, 1, row->demerit_pct);
  compare_print_num (out, 9, 3, row->mean_distance_ms);
  compare_print_num (out, 6, 3, row->ks_d);
  compare_print_num (out, 7, 1, row->mean_error_pct);
  compare_print_num (out, 7, 1, row->p50_error_pct);
  compare_print_num (out, 7, 1, row->p95_error_pct);
  compare_print_num (out, 7, 1, row->p99_error_pct);
  compare_print_num (out, 7, 1, row->throughput_error_pct);
  compare_print_num (out, 7, 1, row->iops_error_pct);
  fputc ('\n', out);
}

static void
compare_print_list (FILE *out, const char *what, GPtrArray *names)
{
  if (names->len == 0)
    return;
  fprintf (out, "only in %s (%u):", what, names->len);
  for (guint i = 0; i < names->len; i++)
    fprintf (out, " %s", (const char *) g_ptr_array_index (names, i));
  fputc ('\n', out);
}

void
replay_compare_report_print (const ReplayCompareReport *report, FILE *out)
{
  int name_width = (int) strlen ("process");

  for (guint i = 0; i < report->processes->len; i++)
    {
      const ReplayCompareRow *row = g_ptr_array_index (report->processes, i);
      name_width = MAX (name_width, (int) strlen (row->name));
    }
  if (report->simulated_path != NULL)
    fprintf (out, "simulated: %s\nmeasured:  %s\n", report->simulated_path,
             report->measured_path);
  fprintf (out, "latency kind: simulated %s, measured %s\n",
           trace_latency_kind_name (report->simulated_latency_kind),
           trace_latency_kind_name (report->measured_latency_kind));
  fprintf (out, "latencies in ms; errors are (simulated - measured) / measured in %%\n");
  fprintf (out, "%-*s %8s %8s %9s %9s %9s %8s %9s %6s %7s %7s %7s %7s %7s %7s\n",
           name_width, "process", "n_sim", "n_meas", "mean_sim", "mean_meas",
           "demerit", "demerit%", "mean_dist", "ks_d", "mean%", "p50%", "p95%",
           "p99%", "MB/s%", "iops%");
  for (guint i = 0; i < report->processes->len; i++)
    compare_print_row (out, name_width, g_ptr_array_index (report->processes, i));
  compare_print_row (out, name_width, report->overall);
  compare_print_list (out, "simulated", report->only_simulated);
  compare_print_list (out, "measured", report->only_measured);
}

static void
compare_json_side (JsonBuilder *b, const char *key, const ReplayCompareSide *s)
{
  json_builder_set_member_name (b, key);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ios");
  json_builder_add_int_value (b, (gint64) s->ios);
  json_builder_set_member_name (b, "bytes");
  json_builder_add_int_value (b, (gint64) s->bytes);
  sim_json_num (b, "span_s", s->span_s, TRUE);
  sim_json_num (b, "mean_ms", s->mean_ms, TRUE);
  sim_json_num (b, "p50_ms", s->p50_ms, TRUE);
  sim_json_num (b, "p95_ms", s->p95_ms, TRUE);
  sim_json_num (b, "p99_ms", s->p99_ms, TRUE);
  sim_json_num (b, "max_ms", s->max_ms, TRUE);
  sim_json_num (b, "mb_per_s", s->mb_per_s, TRUE);
  sim_json_num (b, "iops", s->iops, TRUE);
  json_builder_end_object (b);
}

static void
compare_json_row (JsonBuilder *b, const ReplayCompareRow *row)
{
  json_builder_begin_object (b);
  sim_json_text (b, "name", row->name);
  sim_json_num (b, "demerit_ms", row->demerit_ms, TRUE);
  sim_json_num (b, "demerit_pct", row->demerit_pct, TRUE);
  sim_json_num (b, "mean_distance_ms", row->mean_distance_ms, TRUE);
  sim_json_num (b, "ks_d", row->ks_d, TRUE);
  sim_json_num (b, "mean_error_pct", row->mean_error_pct, TRUE);
  sim_json_num (b, "p50_error_pct", row->p50_error_pct, TRUE);
  sim_json_num (b, "p95_error_pct", row->p95_error_pct, TRUE);
  sim_json_num (b, "p99_error_pct", row->p99_error_pct, TRUE);
  sim_json_num (b, "throughput_error_pct", row->throughput_error_pct, TRUE);
  sim_json_num (b, "iops_error_pct", row->iops_error_pct, TRUE);
  compare_json_side (b, "simulated", &row->sim);
  compare_json_side (b, "measured", &row->meas);
  json_builder_end_object (b);
}

static void
compare_json_names (JsonBuilder *b, const char *key, GPtrArray *names)
{
  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *valid = g_utf8_make_valid (g_ptr_array_index (names, i), -1);
      json_builder_add_string_value (b, valid);
    }
  json_builder_end_array (b);
}

char *
replay_compare_report_to_json (const ReplayCompareReport *report)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  sim_json_text (b, "simulated", report->simulated_path);
  sim_json_text (b, "measured", report->measured_path);
  sim_json_text (b, "simulated_latency_kind",
                 trace_latency_kind_name (report->simulated_latency_kind));
  sim_json_text (b, "measured_latency_kind",
                 trace_latency_kind_name (report->measured_latency_kind));
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < report->processes->len; i++)
    compare_json_row (b, g_ptr_array_index (report->processes, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "overall");
  compare_json_row (b, report->overall);
  compare_json_names (b, "only_in_simulated", report->only_simulated);
  compare_json_names (b, "only_in_measured", report->only_measured);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

/* ---- CDF data ------------------------------------------------------------ */

GArray *
replay_compare_cdf_points (const GArray *sorted_ns, guint max_points)
{
  const gint64 *v;
  guint64 n;
  GArray *points;

  g_return_val_if_fail (sorted_ns != NULL && sorted_ns->len > 0, NULL);
  g_return_val_if_fail (max_points >= 2, NULL);

  v = (const gint64 *) sorted_ns->data;
  n = sorted_ns->len;
  points = g_array_sized_new (FALSE, FALSE, sizeof (ReplayCompareCdfPoint),
                              (guint) MIN (n, max_points));
  if (n <= max_points)
    {
      for (guint64 i = 1; i <= n; i++)
        {
          ReplayCompareCdfPoint p = { v[i - 1], (double) i / (double) n };
          g_array_append_val (points, p);
        }
      return points;
    }
  /* n > max_points, so consecutive ranks are more than one apart before
   * rounding and strictly increase after it; integer arithmetic keeps them
   * exact, from 1 to n. */
  for (guint64 k = 1; k <= max_points; k++)
    {
      guint64 i = 1 + ((k - 1) * (n - 1) + (max_points - 1) / 2) / (max_points - 1);
      ReplayCompareCdfPoint p = { v[i - 1], (double) i / (double) n };

      g_assert (i >= 1 && i <= n);
      g_array_append_val (points, p);
    }
  return points;
}

static void
compare_cdf_side (GString *s, const char *name, const char *side,
                  const GArray *sorted_ns)
{
  g_autoptr(GArray) points = replay_compare_cdf_points (sorted_ns,
                                                        REPLAY_COMPARE_CDF_MAX_POINTS);

  for (guint i = 0; i < points->len; i++)
    {
      const ReplayCompareCdfPoint *p = &g_array_index (points, ReplayCompareCdfPoint, i);

      trace_csv_field (s, name);
      /* 12 significant digits tell i / n apart for any n below 10^11;
       * the last point prints as exactly "1". */
      g_string_append_printf (s, ",%s,%" G_GINT64_FORMAT ",%.12g\n", side,
                              p->latency_ns, p->cum_fraction);
    }
}

static void
compare_cdf_row (GString *s, const ReplayCompareRow *row)
{
  compare_cdf_side (s, row->name, "simulated", row->sim_latency_ns);
  compare_cdf_side (s, row->name, "measured", row->meas_latency_ns);
}

char *
replay_compare_report_to_cdf_csv (const ReplayCompareReport *report)
{
  GString *s = g_string_new ("process,side,latency_ns,cum_fraction\n");

  for (guint i = 0; i < report->processes->len; i++)
    compare_cdf_row (s, g_ptr_array_index (report->processes, i));
  compare_cdf_row (s, report->overall);
  return g_string_free (s, FALSE);
}

/* ---- Summaries: iosim run --json against fio's JSON -------------------- */

/* The JSON text of @contents: fio may print "note: ..." or "fio: ..."
 * lines on standard output before its JSON. */
static const char *
summary_json_start (const char *contents)
{
  const char *p = contents;

  while (g_str_has_prefix (p, "note:") || g_str_has_prefix (p, "fio:"))
    {
      const char *nl = strchr (p, '\n');
      if (nl == NULL)
        return NULL;
      p = nl + 1;
    }
  while (g_ascii_isspace (*p))
    p++;
  return *p == '{' ? p : NULL;
}

gboolean
replay_compare_file_is_json (const char *path)
{
  g_autofree char *head = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = g_file_read (file, NULL, NULL);
  gsize n = 0;

  if (in == NULL)
    return FALSE;
  head = g_malloc0 (4097);
  if (!g_input_stream_read_all (G_INPUT_STREAM (in), head, 4096, &n, NULL, NULL))
    return FALSE;
  return summary_json_start (head) != NULL;
}

static gboolean G_GNUC_PRINTF (3, 4)
summary_invalid (GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path, msg);
  return FALSE;
}

static JsonNode *
summary_load (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local = NULL;
  const char *start;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return NULL;
  start = summary_json_start (contents);
  if (start == NULL)
    {
      summary_invalid (error, path, "not JSON (iosim run --json or fio --output-format=json)");
      return NULL;
    }
  if (!json_parser_load_from_data (parser, start, -1, &local))
    {
      summary_invalid (error, path, "%s", local->message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      summary_invalid (error, path, "the JSON is not an object");
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

/* A number member of @o, or NaN when absent or not a number. */
static double
summary_number (JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member (o, key) : NULL;

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) == G_TYPE_STRING
      || json_node_get_value_type (n) == G_TYPE_BOOLEAN)
    return NAN;
  return json_node_get_double (n);
}

static JsonObject *
summary_object (JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member (o, key) : NULL;

  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

static JsonArray *
summary_array (JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member (o, key) : NULL;

  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

static const char *
summary_string (JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member (o, key) : NULL;

  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : NULL;
}

static void
summary_row_free (gpointer data)
{
  ReplayCompareSummaryRow *row = data;

  g_free (row->name);
  g_free (row->op);
  g_free (row);
}

void
replay_compare_summary_free (ReplayCompareSummary *summary)
{
  if (summary == NULL)
    return;
  g_ptr_array_unref (summary->processes);
  g_ptr_array_unref (summary->only_simulated);
  g_ptr_array_unref (summary->only_measured);
  g_free (summary->simulated_path);
  g_free (summary->measured_path);
  g_free (summary->run_label);
  g_free (summary->fio_version);
  g_free (summary);
}

/* The simulated side: the processes of iosim run --json's only run. */
static JsonArray *
summary_sim_processes (JsonObject *root, const char *path, ReplayCompareSummary *s,
                       GError **error)
{
  JsonArray *runs = summary_array (root, "runs");
  JsonObject *run;

  if (runs == NULL)
    {
      if (summary_array (root, "jobs") != NULL)
        summary_invalid (error, path, "this is fio's JSON: give iosim run --json first "
                         "(SIMULATED MEASURED)");
      else
        summary_invalid (error, path, "no \"runs\": not iosim run --json");
      return NULL;
    }
  if (json_array_get_length (runs) != 1)
    {
      summary_invalid (error, path, "%u runs (one per elevator or writeback era): compare "
                       "needs one; simulate with one elevator", json_array_get_length (runs));
      return NULL;
    }
  run = json_array_get_object_element (runs, 0);
  s->run_label = g_strdup (summary_string (run, "sched"));
  if (summary_array (run, "processes") == NULL)
    summary_invalid (error, path, "runs[0] has no \"processes\"");
  return summary_array (run, "processes");
}

static void
summary_sim_side (JsonObject *p, ReplayCompareSide *side)
{
  JsonObject *lat = summary_object (p, "latency_ns");

  side->ios = (guint64) MAX (0.0, summary_number (p, "ios"));
  side->bytes = (guint64) MAX (0.0, summary_number (p, "bytes"));
  side->span_s = NAN;
  side->mb_per_s = summary_number (p, "mb_per_s");
  side->iops = summary_number (p, "iops");
  side->mean_ms = summary_number (lat, "mean") / 1e6;
  side->p50_ms = summary_number (lat, "p50") / 1e6;
  side->p95_ms = summary_number (lat, "p95") / 1e6;
  side->p99_ms = summary_number (lat, "p99") / 1e6;
  side->max_ms = summary_number (lat, "max") / 1e6;
}

/* fio's percentile keys are "%f" of the percentile: "50.000000". */
static double
summary_fio_percentile (JsonObject *clat, const char *key)
{
  return summary_number (summary_object (clat, "percentile"), key) / 1e6;
}

static void
summary_fio_side (JsonObject *dir, ReplayCompareSide *side)
{
  JsonObject *clat = summary_object (dir, "clat_ns");

  side->ios = (guint64) MAX (0.0, summary_number (dir, "total_ios"));
  side->bytes = (guint64) MAX (0.0, summary_number (dir, "io_bytes"));
  side->span_s = summary_number (dir, "runtime") / 1e3;
  side->mb_per_s = summary_number (dir, "bw_bytes") / 1e6;
  side->iops = summary_number (dir, "iops");
  side->mean_ms = summary_number (clat, "mean") / 1e6;
  side->max_ms = summary_number (clat, "max") / 1e6;
  side->p50_ms = summary_fio_percentile (clat, "50.000000");
  side->p95_ms = summary_fio_percentile (clat, "95.000000");
  side->p99_ms = summary_fio_percentile (clat, "99.000000");
}

/* A job's numjobs from its options, else the global ones, else 1. */
static guint
summary_fio_numjobs (JsonObject *root, JsonObject *job)
{
  const char *text = summary_string (summary_object (job, "job options"), "numjobs");

  if (text == NULL)
    text = summary_string (summary_object (root, "global options"), "numjobs");
  return text ? (guint) MAX (1, g_ascii_strtoull (text, NULL, 10)) : 1;
}

static JsonObject *
summary_find_sim (JsonArray *procs, const char *name)
{
  for (guint i = 0; i < json_array_get_length (procs); i++)
    {
      JsonObject *p = json_array_get_object_element (procs, i);
      const char *n = summary_string (p, "name");
      if (n != NULL && strcmp (n, name) == 0)
        return p;
    }
  return NULL;
}

static gboolean
summary_row_add (ReplayCompareSummary *s, JsonObject *job, guint index, const char *name,
                 JsonObject *sim, GError **error)
{
  JsonObject *dirs[2] = { summary_object (job, "read"), summary_object (job, "write") };
  double ios[2] = { summary_number (dirs[0], "total_ios"), summary_number (dirs[1], "total_ios") };
  const char *op = summary_string (sim, "op");
  ReplayCompareSummaryRow *row;
  int d;

  if (summary_number (job, "error") != 0 && !isnan (summary_number (job, "error")))
    return summary_invalid (error, s->measured_path, "jobs[%u] (%s): fio reported error %.0f "
                            "(an errno): its figures are not a measurement", index, name,
                            summary_number (job, "error"));
  if (dirs[0] == NULL || dirs[1] == NULL || isnan (ios[0]) || isnan (ios[1]))
    return summary_invalid (error, s->measured_path, "jobs[%u] (%s): no read and write "
                            "total_ios: not fio's JSON", index, name);
  if (ios[0] > 0 && ios[1] > 0)
    return summary_invalid (error, s->measured_path, "jobs[%u] (%s) did reads and writes: an "
                            "iosim process does one of them", index, name);
  if (op == NULL || (strcmp (op, "read") != 0 && strcmp (op, "write") != 0))
    return summary_invalid (error, s->simulated_path, "process %s: op '%s' is not read or "
                            "write", name, op ? op : "(missing)");
  d = strcmp (op, "write") == 0;
  if (ios[d] == 0 && ios[!d] > 0)
    return summary_invalid (error, s->measured_path, "jobs[%u] (%s): fio %s, the simulated "
                            "process %ss", index, name, d ? "read" : "wrote", op);
  row = g_new0 (ReplayCompareSummaryRow, 1);
  row->name = g_strdup (name);
  row->op = g_strdup (op);
  summary_sim_side (sim, &row->sim);
  summary_fio_side (dirs[d], &row->meas);
  row->mean_error_pct = compare_error_pct (row->sim.mean_ms, row->meas.mean_ms);
  row->p50_error_pct = compare_error_pct (row->sim.p50_ms, row->meas.p50_ms);
  row->p95_error_pct = compare_error_pct (row->sim.p95_ms, row->meas.p95_ms);
  row->p99_error_pct = compare_error_pct (row->sim.p99_ms, row->meas.p99_ms);
  row->max_error_pct = compare_error_pct (row->sim.max_ms, row->meas.max_ms);
  row->throughput_error_pct = compare_error_pct (row->sim.mb_per_s, row->meas.mb_per_s);
  row->iops_error_pct = compare_error_pct (row->sim.iops, row->meas.iops);
  g_ptr_array_add (s->processes, row);
  return TRUE;
}

/* The measured side: one row per fio job entry found in @procs. */
static gboolean
summary_fio_jobs (ReplayCompareSummary *s, JsonObject *root, JsonArray *procs,
                  GHashTable *measured, GError **error)
{
  JsonArray *jobs = summary_array (root, "jobs");
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (jobs == NULL)
    return summary_invalid (error, s->measured_path, summary_array (root, "runs")
                            ? "this is iosim's JSON: give fio's JSON second (SIMULATED MEASURED)"
                            : "no \"jobs\": not fio --output-format=json");
  s->fio_version = g_strdup (summary_string (root, "fio version"));
  for (guint i = 0; i < json_array_get_length (jobs); i++)
    {
      JsonObject *job = json_array_get_object_element (jobs, i);
      const char *jobname = summary_string (job, "jobname");
      guint numjobs = summary_fio_numjobs (root, job);
      guint clone;
      g_autofree char *name = NULL;
      JsonObject *sim;

      if (jobname == NULL)
        return summary_invalid (error, s->measured_path, "jobs[%u] has no jobname", i);
      clone = GPOINTER_TO_UINT (g_hash_table_lookup (seen, jobname));
      g_hash_table_insert (seen, g_strdup (jobname), GUINT_TO_POINTER (clone + 1));
      name = numjobs > 1 ? g_strdup_printf ("%s.%u", jobname, clone) : g_strdup (jobname);
      if (g_hash_table_contains (measured, name))
        return summary_invalid (error, s->measured_path, "jobs[%u]: a second job named %s",
                                i, name);
      g_hash_table_add (measured, g_strdup (name));
      sim = summary_find_sim (procs, name);
      if (sim == NULL)
        g_ptr_array_add (s->only_measured, g_strdup (name));
      else if (!summary_row_add (s, job, i, name, sim, error))
        return FALSE;
    }
  /* group_reporting folds a job's clones into one entry. */
  for (guint i = 0; i < json_array_get_length (jobs); i++)
    {
      JsonObject *job = json_array_get_object_element (jobs, i);
      const char *jobname = summary_string (job, "jobname");
      guint numjobs = summary_fio_numjobs (root, job);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (seen, jobname));

      if (n < numjobs)
        return summary_invalid (error, s->measured_path, "jobs[%u] (%s): %u entries for "
                                "numjobs=%u: fio merged the clones (group_reporting); run it "
                                "without group_reporting to compare clone by clone",
                                i, jobname, n, numjobs);
    }
  return TRUE;
}

static int
summary_row_cmp (gconstpointer a, gconstpointer b)
{
  const ReplayCompareSummaryRow *x = *(ReplayCompareSummaryRow *const *) a;
  const ReplayCompareSummaryRow *y = *(ReplayCompareSummaryRow *const *) b;

  return strcmp (x->name, y->name);
}

ReplayCompareSummary *
replay_compare_summary_files (const char *simulated_path, const char *measured_path,
                              GError **error)
{
  g_autoptr(ReplayCompareSummary) s = g_new0 (ReplayCompareSummary, 1);
  g_autoptr(JsonNode) sim_root = NULL;
  g_autoptr(JsonNode) meas_root = NULL;
  g_autoptr(GHashTable) measured = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonArray *procs;

  s->processes = g_ptr_array_new_with_free_func (summary_row_free);
  s->only_simulated = g_ptr_array_new_with_free_func (g_free);
  s->only_measured = g_ptr_array_new_with_free_func (g_free);
  s->simulated_path = g_strdup (simulated_path);
  s->measured_path = g_strdup (measured_path);
  sim_root = summary_load (simulated_path, error);
  if (sim_root == NULL)
    return NULL;
  meas_root = summary_load (measured_path, error);
  if (meas_root == NULL)
    return NULL;
  procs = summary_sim_processes (json_node_get_object (sim_root), simulated_path, s, error);
  if (procs == NULL
      || !summary_fio_jobs (s, json_node_get_object (meas_root), procs, measured, error))
    return NULL;
  for (guint i = 0; i < json_array_get_length (procs); i++)
    {
      const char *n = summary_string (json_array_get_object_element (procs, i), "name");
      if (n != NULL && !g_hash_table_contains (measured, n))
        g_ptr_array_add (s->only_simulated, g_strdup (n));
    }
  g_ptr_array_sort (s->processes, summary_row_cmp);
  g_ptr_array_sort (s->only_simulated, compare_str_ptr_cmp);
  g_ptr_array_sort (s->only_measured, compare_str_ptr_cmp);
  return g_steal_pointer (&s);
}

void
replay_compare_summary_print (const ReplayCompareSummary *s, FILE *out)
{
  int w = (int) strlen ("process");

  for (guint i = 0; i < s->processes->len; i++)
    w = MAX (w, (int) strlen (((ReplayCompareSummaryRow *) g_ptr_array_index (s->processes, i))->name));
  fprintf (out, "simulated: %s (iosim run, %s)\nmeasured:  %s (%s)\n", s->simulated_path,
           s->run_label ? s->run_label : "-", s->measured_path,
           s->fio_version ? s->fio_version : "fio");
  fprintf (out, "latencies in ms: simulated issue to completion, measured fio's clat; "
           "errors are (simulated - measured) / measured in %%\n");
  fprintf (out, "%-*s %-5s %8s %8s %9s %9s %7s %7s %9s %9s %7s %7s %7s %7s %7s\n", w, "process",
           "op", "n_sim", "n_meas", "MB/s_sim", "MB/s_meas", "MB/s%", "iops%", "mean_sim",
           "mean_meas", "mean%", "p50%", "p95%", "p99%", "max%");
  for (guint i = 0; i < s->processes->len; i++)
    {
      const ReplayCompareSummaryRow *r = g_ptr_array_index (s->processes, i);
      fprintf (out, "%-*s %-5s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT, w, r->name, r->op,
               r->sim.ios, r->meas.ios);
      compare_print_num (out, 9, 2, r->sim.mb_per_s);
      compare_print_num (out, 9, 2, r->meas.mb_per_s);
      compare_print_num (out, 7, 1, r->throughput_error_pct);
      compare_print_num (out, 7, 1, r->iops_error_pct);
      compare_print_num (out, 9, 3, r->sim.mean_ms);
      compare_print_num (out, 9, 3, r->meas.mean_ms);
      compare_print_num (out, 7, 1, r->mean_error_pct);
      compare_print_num (out, 7, 1, r->p50_error_pct);
      compare_print_num (out, 7, 1, r->p95_error_pct);
      compare_print_num (out, 7, 1, r->p99_error_pct);
      compare_print_num (out, 7, 1, r->max_error_pct);
      fputc ('\n', out);
    }
  compare_print_list (out, "simulated", s->only_simulated);
  compare_print_list (out, "measured", s->only_measured);
}

char *
replay_compare_summary_to_json (const ReplayCompareSummary *s)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  sim_json_text (b, "simulated", s->simulated_path);
  sim_json_text (b, "measured", s->measured_path);
  sim_json_text (b, "run", s->run_label);
  sim_json_text (b, "fio_version", s->fio_version);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->processes->len; i++)
    {
      const ReplayCompareSummaryRow *r = g_ptr_array_index (s->processes, i);
      json_builder_begin_object (b);
      sim_json_text (b, "name", r->name);
      sim_json_text (b, "op", r->op);
      sim_json_num (b, "mean_error_pct", r->mean_error_pct, TRUE);
      sim_json_num (b, "p50_error_pct", r->p50_error_pct, TRUE);
      sim_json_num (b, "p95_error_pct", r->p95_error_pct, TRUE);
      sim_json_num (b, "p99_error_pct", r->p99_error_pct, TRUE);
      sim_json_num (b, "max_error_pct", r->max_error_pct, TRUE);
      sim_json_num (b, "throughput_error_pct", r->throughput_error_pct, TRUE);
      sim_json_num (b, "iops_error_pct", r->iops_error_pct, TRUE);
      compare_json_side (b, "simulated", &r->sim);
      compare_json_side (b, "measured", &r->meas);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  compare_json_names (b, "only_in_simulated", s->only_simulated);
  compare_json_names (b, "only_in_measured", s->only_measured);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
