/* replay-validate-stats.c — the arithmetic of `iosim validate` on plain
 * numbers: means with confidence intervals across repeats, the change
 * from the trained scheduler against the measured spread, Jain's index,
 * rankings and the process names that match across runs.  Pure: no files,
 * no clock (replay-validate.h). */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay-validate.h"

const char *
replay_validate_metric_name (ValidateMetric metric)
{
  static const char *const names[VALIDATE_N_METRICS] = {
    [VALIDATE_MB_PER_S] = "mb_per_s",
    [VALIDATE_MEAN_LATENCY_NS] = "mean_latency_ns",
    [VALIDATE_P50_LATENCY_NS] = "p50_latency_ns",
    [VALIDATE_P95_LATENCY_NS] = "p95_latency_ns",
    [VALIDATE_P99_LATENCY_NS] = "p99_latency_ns",
    [VALIDATE_JAIN_INDEX] = "jain_index",
  };

  g_return_val_if_fail ((guint) metric < VALIDATE_N_METRICS, "?");
  return names[metric];
}

/* Student's t quantile for a two-sided 95 % interval with @df degrees of
 * freedom (GSL's inverse CDF; df need not be whole, as Welch's is not). */
static double
t975 (double df)
{
  return gsl_cdf_tdist_Pinv (0.975, df);
}

ValidateEstimate
replay_validate_estimate (const double *values, guint n)
{
  ValidateEstimate e = { 0, NAN, NAN, NAN, NAN };
  double sum = 0, sum_sq = 0;

  for (guint i = 0; i < n; i++)
    if (!isnan (values[i]))
      {
        sum += values[i];
        e.n++;
      }
  if (e.n == 0)
    return e;
  e.mean = sum / e.n;
  if (e.n < 2)
    return e;
  /* Two passes: the deviations, not sum x^2 - n mean^2, which loses the
   * spread of large latencies to cancellation. */
  for (guint i = 0; i < n; i++)
    if (!isnan (values[i]))
      sum_sq += (values[i] - e.mean) * (values[i] - e.mean);
  e.sd = sqrt (sum_sq / (e.n - 1));
  e.ci95_lo = e.mean - t975 (e.n - 1) * e.sd / sqrt (e.n);
  e.ci95_hi = e.mean + t975 (e.n - 1) * e.sd / sqrt (e.n);
  return e;
}

static int
sign_of (double x)
{
  return (x > 0) - (x < 0);
}

/* Welch's interval for mean(b) - mean(a): standard error from both
 * variances, Welch-Satterthwaite degrees of freedom.  Without spread on
 * either side the interval is the difference itself. */
static void
welch_interval (const ValidateEstimate *a, const ValidateEstimate *b, double *lo, double *hi)
{
  double va = a->sd * a->sd / a->n, vb = b->sd * b->sd / b->n;
  double se = sqrt (va + vb), diff = b->mean - a->mean, df;

  if (se == 0)
    {
      *lo = *hi = diff;
      return;
    }
  df = (va + vb) * (va + vb) / (va * va / (a->n - 1) + vb * vb / (b->n - 1));
  *lo = diff - t975 (df) * se;
  *hi = diff + t975 (df) * se;
}

int
replay_validate_measured_order (const ValidateEstimate *a, const ValidateEstimate *b,
                                gboolean lower_is_better)
{
  double lo, hi;

  if (a->n < 2 || b->n < 2 || isnan (a->mean) || isnan (b->mean))
    return 0;
  welch_interval (a, b, &lo, &hi);
  /* The interval is of b - a: above 0, b's figure is larger. */
  if (lo > 0)
    return lower_is_better ? -1 : 1;
  if (hi < 0)
    return lower_is_better ? 1 : -1;
  return 0;
}

ValidateChange
replay_validate_change (const ValidateEstimate *measured_trained, const ValidateEstimate *measured,
                        double predicted_trained, double predicted)
{
  ValidateChange c = { NAN, NAN, NAN, NAN, -1, -1, -1 };
  double base = measured_trained->mean, lo, hi;

  if (predicted_trained != 0 && !isnan (predicted_trained) && !isnan (predicted))
    c.predicted_pct = 100.0 * (predicted - predicted_trained) / predicted_trained;
  if (base != 0 && !isnan (base) && !isnan (measured->mean))
    c.measured_pct = 100.0 * (measured->mean - base) / base;
  if (!isnan (c.predicted_pct) && !isnan (c.measured_pct))
    c.sign_agrees = sign_of (c.predicted_pct) == sign_of (c.measured_pct);
  if (isnan (c.measured_pct) || measured_trained->n < 2 || measured->n < 2)
    return c;
  welch_interval (measured_trained, measured, &lo, &hi);
  c.measured_lo_pct = 100.0 * lo / base;
  c.measured_hi_pct = 100.0 * hi / base;
  /* A negative base flips the interval; figures here are positive, but
   * keep lo <= hi whatever they are. */
  if (c.measured_lo_pct > c.measured_hi_pct)
    {
      double t = c.measured_lo_pct;
      c.measured_lo_pct = c.measured_hi_pct;
      c.measured_hi_pct = t;
    }
  c.significant = c.measured_lo_pct > 0 || c.measured_hi_pct < 0;
  if (!isnan (c.predicted_pct))
    c.inside = c.predicted_pct >= c.measured_lo_pct && c.predicted_pct <= c.measured_hi_pct;
  return c;
}

double
replay_validate_jain (const double *values, guint n)
{
  double sum = 0, sum_sq = 0;
  guint used = 0;

  for (guint i = 0; i < n; i++)
    if (!isnan (values[i]))
      {
        sum += values[i];
        sum_sq += values[i] * values[i];
        used++;
      }
  if (used == 0 || sum_sq == 0)
    return NAN;
  return sum * sum / (used * sum_sq);
}

void
replay_validate_rank (const double *values, guint n, gboolean lower_is_better, guint *order)
{
  /* Insertion sort: a handful of schedulers, and it is stable. */
  for (guint i = 0; i < n; i++)
    {
      guint j = i;

      order[i] = i;
      while (j > 0)
        {
          double a = values[order[j - 1]], b = values[i];
          gboolean before;

          if (isnan (b))
            break;
          before = isnan (a) || (lower_is_better ? b < a : b > a);
          if (!before)
            break;
          order[j] = order[j - 1];
          j--;
        }
      order[j] = i;
    }
}

char *
replay_validate_ranking_text (const double *values, const guint *order, guint n,
                              const char *const *names)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append (out, values[order[i]] == values[order[i - 1]] ? " = " : ", ");
      g_string_append (out, names[order[i]]);
    }
  return g_string_free (out, FALSE);
}

/* "COMM" of "COMM-PID"; a name without a "-DIGITS" tail is its own. */
static char *
comm_of (const char *name)
{
  const char *dash = strrchr (name, '-');

  if (dash == NULL || dash == name || dash[1] == '\0')
    return g_strdup (name);
  for (const char *p = dash + 1; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return g_strdup (name);
  return g_strndup (name, dash - name);
}

typedef struct {
  char       *comm;
  const char *name;
  guint64     first_offset_bytes;
  gint64      first_issue_ns;
  guint       index;
} NamedProcess;

static gint
named_process_cmp (const void *pa, const void *pb)
{
  const NamedProcess *a = pa, *b = pb;
  int c = strcmp (a->comm, b->comm);

  if (c != 0)
    return c;
  if (a->first_offset_bytes != b->first_offset_bytes)
    return a->first_offset_bytes < b->first_offset_bytes ? -1 : 1;
  if (a->first_issue_ns != b->first_issue_ns)
    return a->first_issue_ns < b->first_issue_ns ? -1 : 1;
  return strcmp (a->name, b->name);
}

GStrv
replay_validate_canonical_names (const char *const *names, const guint64 *first_offset_bytes,
                                 const gint64 *first_issue_ns, guint n)
{
  g_autofree NamedProcess *procs = g_new0 (NamedProcess, MAX (n, 1));
  GStrv out = g_new0 (char *, n + 1);
  guint k = 0;

  for (guint i = 0; i < n; i++)
    procs[i] = (NamedProcess) { comm_of (names[i]), names[i], first_offset_bytes[i],
                                 first_issue_ns[i], i };
  qsort (procs, n, sizeof *procs, named_process_cmp);
  for (guint i = 0; i < n; i++)
    {
      k = i > 0 && strcmp (procs[i].comm, procs[i - 1].comm) == 0 ? k + 1 : 1;
      out[procs[i].index] = g_strdup_printf ("%s.%u", procs[i].comm, k);
    }
  for (guint i = 0; i < n; i++)
    g_free (procs[i].comm);
  return out;
}
