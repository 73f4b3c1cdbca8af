/* replay-validate-compare.c — stage 4 of `iosim validate`: per-I/O
 * results files of every scheduler and repeat, predicted and measured,
 * become the report (replay-validate.h).  Every figure of one file comes
 * from the compare library (replay-compare.h): the file compared with
 * itself gives its own side's throughput, latency quantiles and
 * per-process spans exactly as `iosim compare` computes them, so the two
 * commands never disagree on a number. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "replay/replay-validate.h"
#include "replay/replay-safety.h"

static void
process_figure_free (gpointer p)
{
  ValidateProcessFigure *f = p;

  g_free (f->name);
  g_free (f);
}

static void
validate_run_free (gpointer p)
{
  ValidateRun *run = p;

  g_free (run->results_path);
  g_clear_pointer (&run->processes, g_ptr_array_unref);
  g_clear_pointer (&run->latency_ns, g_array_unref);
  g_free (run);
}

static void
validate_side_clear (ValidateSide *side)
{
  g_clear_pointer (&side->runs, g_ptr_array_unref);
  g_clear_pointer (&side->process_names, g_ptr_array_unref);
  g_clear_pointer (&side->process_mb_per_s, g_array_unref);
}

static void
validate_sched_free (gpointer p)
{
  ValidateSched *s = p;

  g_free (s->sched);
  validate_side_clear (&s->predicted);
  validate_side_clear (&s->measured);
  g_free (s);
}

void
replay_validate_report_free (ReplayValidateReport *report)
{
  if (report == NULL)
    return;
  g_free (report->target);
  g_free (report->trace_path);
  g_strfreev (report->argv);
  g_free (report->target_dir);
  g_clear_pointer (&report->nfs_runs, g_ptr_array_unref);
  g_free (report->scenario_path);
  g_free (report->sim_device);
  g_clear_pointer (&report->scheds, g_ptr_array_unref);
  g_clear_pointer (&report->wbt, g_ptr_array_unref);
  g_strfreev (report->ranking_predicted);
  g_strfreev (report->ranking_measured);
  g_strfreev (report->ranking_predicted_mb_per_s);
  g_strfreev (report->ranking_measured_mb_per_s);
  g_free (report->ranking_predicted_text);
  g_free (report->ranking_measured_text);
  g_free (report->ranking_predicted_mb_per_s_text);
  g_free (report->ranking_measured_mb_per_s_text);
  g_free (report->ranking_check.text);
  g_free (report->ranking_check_mb_per_s.text);
  g_free (report);
}

/* ---- Canonical process names ------------------------------------------- */

/* Each process name of @results with the offset and time of its first
 * I/O with data (earliest issue; rows of a results file need not be in
 * issue order), in order of first appearance.  A flush carries no data
 * and no offset of the workload, and the simulated side has none (the fit
 * drops them): a process of flushes only (an NFS worker that only ran a
 * COMMIT, jbd2's cache flushes) sorts after those with data, at offset
 * G_MAXUINT64, so that it does not take the K its reads and writes would
 * have given another process. */
static void
first_ios (const TraceResults *results, GPtrArray *names, GArray *first_offset, GArray *first_ns)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) has_data = g_array_new (FALSE, FALSE, sizeof (gboolean));

  for (guint i = 0; i < trace_results_len (results); i++)
    {
      const TraceResult *row = trace_results_get (results, i);
      gboolean data = row->bytes > 0;
      guint64 offset = data ? row->offset_bytes : G_MAXUINT64;
      gpointer slot;

      if (g_hash_table_lookup_extended (seen, row->process, NULL, &slot))
        {
          guint k = GPOINTER_TO_UINT (slot);
          gint64 *t = &g_array_index (first_ns, gint64, k);
          gboolean *had = &g_array_index (has_data, gboolean, k);

          /* Data beats none; then the earlier issue. */
          if ((data && !*had) || (data == *had && row->issue_ns < *t))
            {
              *t = row->issue_ns;
              g_array_index (first_offset, guint64, k) = offset;
              *had = data;
            }
          continue;
        }
      g_hash_table_insert (seen, row->process, GUINT_TO_POINTER (names->len));
      g_ptr_array_add (names, row->process);
      g_array_append_val (first_offset, offset);
      g_array_append_val (first_ns, row->issue_ns);
      g_array_append_val (has_data, data);
    }
}

static gboolean
write_renamed (const TraceResults *results, GHashTable *rename, const char *out_path,
               GError **error)
{
  FILE *out = fopen (out_path, "w");
  gboolean failed;

  if (out == NULL)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", out_path,
                   g_strerror (saved));
      return FALSE;
    }
  /* The renamed copy keeps the file's latency kind. */
  trace_results_write_header_kind (out, trace_results_latency_kind (results));
  for (guint i = 0; i < trace_results_len (results); i++)
    {
      TraceResult row = *trace_results_get (results, i);

      row.process = g_hash_table_lookup (rename, row.process);
      trace_results_write_row (out, &row);
    }
  failed = ferror (out) != 0;
  if (fclose (out) != 0 || failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", out_path);
      return FALSE;
    }
  return TRUE;
}

/* Copy @in_path to @out_path with the processes renamed COMM.K. */
static gboolean
canonicalize_file (const char *in_path, const char *out_path, GError **error)
{
  g_autoptr (TraceResults) results = trace_results_load (in_path, error);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) first_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) first_offset = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr (GHashTable) rename = g_hash_table_new (g_str_hash, g_str_equal);
  g_auto (GStrv) canonical = NULL;

  if (results == NULL)
    return FALSE;
  first_ios (results, names, first_offset, first_ns);
  canonical = replay_validate_canonical_names ((const char *const *) names->pdata,
                                               (const guint64 *) (void *) first_offset->data,
                                               (const gint64 *) (void *) first_ns->data,
                                               names->len);
  for (guint i = 0; i < names->len; i++)
    g_hash_table_insert (rename, names->pdata[i], canonical[i]);
  return write_renamed (results, rename, out_path, error);
}

/* ---- Figures of one file ----------------------------------------------- */

static ValidateRun *
run_from_file (const char *path, GError **error)
{
  g_autoptr (ReplayCompareReport) self = replay_compare_files (path, path, error);
  const ReplayCompareSide *side;
  g_autoptr (GArray) mb = g_array_new (FALSE, FALSE, sizeof (double));
  ValidateRun *run;

  if (self == NULL)
    return NULL;
  side = &self->overall->sim;
  run = g_new0 (ValidateRun, 1);
  run->results_path = g_strdup (path);
  run->values[VALIDATE_MB_PER_S] = side->mb_per_s;
  run->values[VALIDATE_MEAN_LATENCY_NS] = side->mean_ms * 1e6;
  run->values[VALIDATE_P50_LATENCY_NS] = side->p50_ms * 1e6;
  run->values[VALIDATE_P95_LATENCY_NS] = side->p95_ms * 1e6;
  run->values[VALIDATE_P99_LATENCY_NS] = side->p99_ms * 1e6;
  run->processes = g_ptr_array_new_with_free_func (process_figure_free);
  for (guint i = 0; i < self->processes->len; i++)
    {
      const ReplayCompareRow *row = g_ptr_array_index (self->processes, i);
      ValidateProcessFigure *f = g_new0 (ValidateProcessFigure, 1);

      f->name = g_strdup (row->name);
      f->mb_per_s = row->sim.mb_per_s;
      g_ptr_array_add (run->processes, f);
      g_array_append_val (mb, f->mb_per_s);
    }
  run->values[VALIDATE_JAIN_INDEX] = replay_validate_jain ((const double *) (void *) mb->data,
                                                           mb->len);
  run->latency_ns = g_array_ref (self->overall->sim_latency_ns);
  return run;
}

/* ---- One side across its runs ------------------------------------------ */

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
side_estimate (ValidateSide *side)
{
  g_autofree double *values = g_new0 (double, MAX (side->runs->len, 1));
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint m = 0; m < VALIDATE_N_METRICS; m++)
    {
      for (guint r = 0; r < side->runs->len; r++)
        values[r] = ((ValidateRun *) g_ptr_array_index (side->runs, r))->values[m];
      side->estimate[m] = replay_validate_estimate (values, side->runs->len);
    }
  side->process_names = g_ptr_array_new_with_free_func (g_free);
  for (guint r = 0; r < side->runs->len; r++)
    {
      const ValidateRun *run = g_ptr_array_index (side->runs, r);
      for (guint i = 0; i < run->processes->len; i++)
        {
          const ValidateProcessFigure *f = g_ptr_array_index (run->processes, i);
          if (g_hash_table_add (names, f->name))
            g_ptr_array_add (side->process_names, g_strdup (f->name));
        }
    }
  g_ptr_array_sort (side->process_names, compare_names);
  side->process_mb_per_s = g_array_new (FALSE, TRUE, sizeof (ValidateEstimate));
  for (guint i = 0; i < side->process_names->len; i++)
    {
      const char *name = g_ptr_array_index (side->process_names, i);
      ValidateEstimate e;

      /* A process missing from a run is a missing value, not a zero. */
      for (guint r = 0; r < side->runs->len; r++)
        {
          const ValidateRun *run = g_ptr_array_index (side->runs, r);
          values[r] = NAN;
          for (guint k = 0; k < run->processes->len; k++)
            {
              const ValidateProcessFigure *f = g_ptr_array_index (run->processes, k);
              if (strcmp (f->name, name) == 0)
                values[r] = f->mb_per_s;
            }
        }
      e = replay_validate_estimate (values, side->runs->len);
      g_array_append_val (side->process_mb_per_s, e);
    }
}

/* Rename @raw into @work_dir as PREFIX-SCHED-KR.csv and take its figures. */
static ValidateRun *
load_run (const char *raw, const char *work_dir, const char *prefix, const char *sched, char kind,
          guint r, GError **error)
{
  g_autofree char *base = g_strdup_printf ("%s-%s-%c%u.csv", prefix, sched, kind, r + 1);
  g_autofree char *path = g_build_filename (work_dir, base, NULL);

  if (!canonicalize_file (raw, path, error))
    return NULL;
  return run_from_file (path, error);
}

static gboolean
load_sides (ValidateSched *s, guint index, guint repeat, const char *const *measured,
            const char *const *predicted, const char *work_dir, GError **error)
{
  s->measured.runs = g_ptr_array_new_with_free_func (validate_run_free);
  s->predicted.runs = g_ptr_array_new_with_free_func (validate_run_free);
  for (guint r = 0; r < repeat; r++)
    {
      ValidateRun *m = load_run (measured[index * repeat + r], work_dir, "measured", s->sched,
                                 'r', r, error);
      ValidateRun *p = m ? load_run (predicted[index * repeat + r], work_dir, "predicted",
                                     s->sched, 's', r, error) : NULL;
      if (p == NULL)
        {
          g_clear_pointer (&m, validate_run_free);
          return FALSE;
        }
      g_ptr_array_add (s->measured.runs, m);
      g_ptr_array_add (s->predicted.runs, p);
    }
  side_estimate (&s->measured);
  side_estimate (&s->predicted);
  return TRUE;
}

/* Add the demerit (ns) of run @a's results against run @b's to *@sum_ns. */
static gboolean
add_runs_demerit (const ValidateRun *a, const ValidateRun *b, double *sum_ns, GError **error)
{
  g_autoptr (ReplayCompareReport) cmp = replay_compare_files (a->results_path, b->results_path,
                                                              error);
  if (cmp == NULL)
    return FALSE;
  *sum_ns += cmp->overall->demerit_ms * 1e6;
  return TRUE;
}

/* Mean over repeats r of the demerit of measured repeat r + 1 against r. */
static gboolean
repeat_demerit (ValidateSched *s, GError **error)
{
  double sum_ns = 0;
  guint n = s->measured.runs->len;

  s->repeat_demerit_ns = s->repeat_demerit_pct = NAN;
  if (n < 2)
    return TRUE;
  for (guint r = 0; r + 1 < n; r++)
    {
      const ValidateRun *a = g_ptr_array_index (s->measured.runs, r + 1);
      const ValidateRun *b = g_ptr_array_index (s->measured.runs, r);

      if (!add_runs_demerit (a, b, &sum_ns, error))
        return FALSE;
    }
  s->repeat_demerit_ns = sum_ns / (n - 1);
  s->repeat_demerit_pct = 100.0 * s->repeat_demerit_ns
                          / s->measured.estimate[VALIDATE_MEAN_LATENCY_NS].mean;
  return TRUE;
}

/* Mean over repeats of the demerit of seed r against measured repeat r. */
static gboolean
sched_demerit (ValidateSched *s, GError **error)
{
  double sum_ns = 0;
  guint n = s->measured.runs->len;

  for (guint r = 0; r < n; r++)
    {
      const ValidateRun *p = g_ptr_array_index (s->predicted.runs, r);
      const ValidateRun *m = g_ptr_array_index (s->measured.runs, r);

      if (!add_runs_demerit (p, m, &sum_ns, error))
        return FALSE;
    }
  s->demerit_ns = sum_ns / n;
  s->demerit_pct = 100.0 * s->demerit_ns / s->measured.estimate[VALIDATE_MEAN_LATENCY_NS].mean;
  return repeat_demerit (s, error);
}

/* Scheduler names best first by @metric's mean on one side, and the same
 * as text with ties shown in *@text. */
static GStrv
ranking (const ReplayValidateReport *report, gboolean predicted, ValidateMetric metric,
         gboolean lower_is_better, char **text)
{
  guint n = report->scheds->len;
  g_autofree double *values = g_new0 (double, n);
  g_autofree guint *order = g_new0 (guint, n);
  g_autofree const char **names = g_new0 (const char *, n + 1);
  GStrv out = g_new0 (char *, n + 1);

  for (guint i = 0; i < n; i++)
    {
      const ValidateSched *s = g_ptr_array_index (report->scheds, i);
      values[i] = (predicted ? &s->predicted : &s->measured)->estimate[metric].mean;
      names[i] = s->sched;
    }
  replay_validate_rank (values, n, lower_is_better, order);
  for (guint i = 0; i < n; i++)
    out[i] = g_strdup (names[order[i]]);
  *text = replay_validate_ranking_text (values, order, n, names);
  return out;
}

/* The order of two predicted means as replay_validate_measured_order
 * gives it: a prediction has no spread to test, only its values. */
static int
predicted_order (double a, double b, gboolean lower_is_better)
{
  if (isnan (a) || isnan (b) || a == b)
    return 0;
  return (a < b) == lower_is_better ? -1 : 1;
}

static ValidateRankingCheck
ranking_check (const ReplayValidateReport *report, ValidateMetric metric, gboolean lower_is_better)
{
  ValidateRankingCheck c = { 0, 0, 0, NULL };
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < report->scheds->len; i++)
    for (guint j = i + 1; j < report->scheds->len; j++)
      {
        const ValidateSched *a = g_ptr_array_index (report->scheds, i);
        const ValidateSched *b = g_ptr_array_index (report->scheds, j);
        int measured = replay_validate_measured_order (&a->measured.estimate[metric],
                                                       &b->measured.estimate[metric],
                                                       lower_is_better);
        c.pairs++;
        if (measured == 0)
          continue;
        c.significant++;
        if (predicted_order (a->predicted.estimate[metric].mean,
                             b->predicted.estimate[metric].mean, lower_is_better) == measured)
          c.predicted++;
        g_string_append_printf (text, "%s%s before %s", text->len ? ", " : "",
                                measured < 0 ? a->sched : b->sched,
                                measured < 0 ? b->sched : a->sched);
      }
  c.text = g_string_free (text, FALSE);
  return c;
}

static void
report_changes_and_rankings (ReplayValidateReport *report)
{
  const ValidateSched *trained = g_ptr_array_index (report->scheds, 0);

  for (guint i = 0; i < report->scheds->len; i++)
    {
      ValidateSched *s = g_ptr_array_index (report->scheds, i);
      for (guint m = 0; m < VALIDATE_N_METRICS; m++)
        s->change[m] = replay_validate_change (&trained->measured.estimate[m],
                                               &s->measured.estimate[m],
                                               trained->predicted.estimate[m].mean,
                                               s->predicted.estimate[m].mean);
    }
  report->ranking_predicted = ranking (report, TRUE, VALIDATE_MEAN_LATENCY_NS, TRUE,
                                       &report->ranking_predicted_text);
  report->ranking_measured = ranking (report, FALSE, VALIDATE_MEAN_LATENCY_NS, TRUE,
                                      &report->ranking_measured_text);
  report->ranking_predicted_mb_per_s = ranking (report, TRUE, VALIDATE_MB_PER_S, FALSE,
                                                &report->ranking_predicted_mb_per_s_text);
  report->ranking_measured_mb_per_s = ranking (report, FALSE, VALIDATE_MB_PER_S, FALSE,
                                               &report->ranking_measured_mb_per_s_text);
  report->ranking_check = ranking_check (report, VALIDATE_MEAN_LATENCY_NS, TRUE);
  report->ranking_check_mb_per_s = ranking_check (report, VALIDATE_MB_PER_S, FALSE);
}

ReplayValidateReport *
replay_validate_compare_files (const char *const *scheds, guint repeat,
                               const char *const *measured, const char *const *predicted,
                               const char *work_dir, GError **error)
{
  g_autoptr (ReplayValidateReport) report = g_new0 (ReplayValidateReport, 1);

  g_return_val_if_fail (scheds != NULL && scheds[0] != NULL && repeat >= 1, NULL);
  report->repeat = repeat;
  report->scheds = g_ptr_array_new_with_free_func (validate_sched_free);
  for (guint i = 0; scheds[i] != NULL; i++)
    {
      ValidateSched *s = g_new0 (ValidateSched, 1);

      s->sched = g_strdup (scheds[i]);
      s->sim_sched = replay_validate_sim_sched (scheds[i]);
      s->trained = i == 0;
      g_ptr_array_add (report->scheds, s);
      if (!load_sides (s, i, repeat, measured, predicted, work_dir, error)
          || !sched_demerit (s, error))
        {
          g_prefix_error (error, "comparing under %s: ", scheds[i]);
          return NULL;
        }
    }
  report_changes_and_rankings (report);
  return g_steal_pointer (&report);
}
