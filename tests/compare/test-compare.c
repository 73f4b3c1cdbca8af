/* test-compare.c — the comparison metrics of replay/replay-compare.h:
 * demerit figure (RMS horizontal CDF distance, DiskSim rms.c method), mean
 * distance, KS statistic, quantiles, and the per-process report. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "replay/replay-compare.h"

static void
test_quantile (void)
{
  const double v[] = { 1, 2, 3, 4, 5 };

  g_assert_cmpfloat (replay_compare_quantile (v, 5, 0.0), ==, 1.0);
  g_assert_cmpfloat (replay_compare_quantile (v, 5, 0.5), ==, 3.0);
  g_assert_cmpfloat (replay_compare_quantile (v, 5, 1.0), ==, 5.0);
  /* h = 0.95 * 4 = 3.8: 4 + 0.8 * (5 - 4) */
  g_assert_cmpfloat_with_epsilon (replay_compare_quantile (v, 5, 0.95), 4.8, 1e-12);
  g_assert_cmpfloat (replay_compare_quantile (v, 1, 0.3), ==, 1.0);
}

static void
test_demerit_identical (void)
{
  const double a[] = { 0.1, 0.5, 0.5, 2.0, 7.25, 9.0 };
  double mean_dist = -1;

  g_assert_cmpfloat (replay_compare_demerit (a, 6, a, 6, &mean_dist), ==, 0.0);
  g_assert_cmpfloat (mean_dist, ==, 0.0);
  g_assert_cmpfloat (replay_compare_ks (a, 6, a, 6), ==, 0.0);
}

/* Every quantile moves by c, so both distances are exactly c. */
static void
test_demerit_shift (void)
{
  double a[50], b[50];
  const double c = 0.375;   /* a binary fraction: the sums stay exact */
  double mean_dist;

  /* Ascending, uneven gaps and ties. */
  for (int i = 0; i < 50; i++)
    a[i] = (double) ((i / 2) * (i / 2)) / 8.0;
  for (int i = 0; i < 50; i++)
    b[i] = a[i] + c;
  g_assert_cmpfloat_with_epsilon (replay_compare_demerit (b, 50, a, 50, &mean_dist), c, 1e-12);
  g_assert_cmpfloat_with_epsilon (mean_dist, c, 1e-12);
}

/* Uniform grids on [0, A] and [0, B] have linear quantile functions Q(p) =
 * A p and B p whatever the sample counts, so the 10,000-point sums have a
 * closed form: demerit = |B - A| sqrt(sum (k/N)^2 / N) and mean distance
 * = |B - A| (N + 1) / (2N), N = 10,000.  As N grows these tend to the
 * continuous values |B - A| / sqrt(3) and |B - A| / 2. */
static void
test_demerit_uniform_scales (void)
{
  const gsize n_a = 101, n_b = 1001;
  const double A = 2.0, B = 5.0, N = REPLAY_COMPARE_POINTS;
  g_autofree double *a = g_new (double, n_a);
  g_autofree double *b = g_new (double, n_b);
  double mean_dist, demerit, expected, expected_mean;

  for (gsize i = 0; i < n_a; i++)
    a[i] = A * (double) i / (double) (n_a - 1);
  for (gsize i = 0; i < n_b; i++)
    b[i] = B * (double) i / (double) (n_b - 1);
  demerit = replay_compare_demerit (a, n_a, b, n_b, &mean_dist);
  expected = (B - A) * sqrt ((N + 1) * (2 * N + 1) / (6 * N * N));
  expected_mean = (B - A) * (N + 1) / (2 * N);
  g_assert_cmpfloat_with_epsilon (demerit, expected, 1e-9);
  g_assert_cmpfloat_with_epsilon (mean_dist, expected_mean, 1e-9);
  /* The continuous limit, within the O(1/N) discretisation: 3 * 1e-4. */
  g_assert_cmpfloat_with_epsilon (demerit, (B - A) / sqrt (3.0), 3e-4);
  g_assert_cmpfloat_with_epsilon (mean_dist, (B - A) / 2.0, 3e-4);
  /* Symmetric. */
  g_assert_cmpfloat_with_epsilon (replay_compare_demerit (b, n_b, a, n_a, NULL), demerit, 1e-12);
}

static void
test_ks_known (void)
{
  const double a[] = { 1, 2, 3, 4 };
  const double b[] = { 3, 4, 5, 6 };
  const double far[] = { 10, 11 };
  const double t1[] = { 1, 1, 2 };
  const double t2[] = { 1, 2, 2 };

  /* At x in [2, 3): F_a = 1/2, F_b = 0. */
  g_assert_cmpfloat_with_epsilon (replay_compare_ks (a, 4, b, 4), 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (replay_compare_ks (a, 4, far, 2), 1.0, 1e-12);
  /* Ties: at x = 1, F = 2/3 vs 1/3; at 2 both reach 1. */
  g_assert_cmpfloat_with_epsilon (replay_compare_ks (t1, 3, t2, 3), 1.0 / 3.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (replay_compare_ks (b, 4, a, 4), 0.5, 1e-12);
}

/* ---- Report on results files ---------------------------------------- */

typedef struct {
  const char *process;
  guint32     pid;
  guint64     bytes;
  gint64      issue_ns;
  gint64      latency_ns;
} Io;

static char *
write_results_kind (const char *name, const Io *ios, gsize n, TraceLatencyKind kind)
{
  char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);
  FILE *out;

  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  out = fopen (path, "w");
  g_assert_nonnull (out);
  trace_results_write_header_kind (out, kind);
  for (gsize i = 0; i < n; i++)
    {
      TraceResult r = { (char *) ios[i].process, ios[i].pid, (char *) "loop0",
                        TRACE_OP_READ, 0, ios[i].bytes, ios[i].issue_ns,
                        ios[i].issue_ns, ios[i].issue_ns + ios[i].latency_ns, 0, kind };
      trace_results_write_row (out, &r);
    }
  g_assert_cmpint (fclose (out), ==, 0);
  return path;
}

static char *
write_results (const char *name, const Io *ios, gsize n)
{
  return write_results_kind (name, ios, n, TRACE_LATENCY_UNKNOWN);
}

/* Simulated latencies are the measured ones times 1.25 for "a", equal for
 * "b"; "c" is only simulated and "d" only measured. */
static void
test_report (void)
{
  Io meas[40], sim[41];
  gsize nm = 0, ns = 0;
  g_autofree char *meas_path = NULL, *sim_path = NULL;
  g_autoptr(ReplayCompareReport) report = NULL;
  g_autoptr(GError) error = NULL;
  const ReplayCompareRow *a, *b;
  g_autofree char *json = NULL;

  for (int i = 0; i < 20; i++)
    {
      gint64 lat = 1000000 + 50000 * i;   /* 1 ms .. 1.95 ms */

      meas[nm++] = (Io) { "a-1", 1, 4096, 2000000 * i, lat };
      sim[ns++] = (Io) { "a-1", 1, 4096, 2000000 * i, lat * 5 / 4 };
      meas[nm++] = (Io) { "b-2", 2, 8192, 2000000 * i + 1, lat };
      sim[ns++] = (Io) { "b-2", 2, 8192, 2000000 * i + 1, lat };
    }
  sim[ns++] = (Io) { "c-3", 3, 512, 5, 10 };
  meas[nm - 1].process = "d-4";

  sim_path = write_results ("sim.csv", sim, ns);
  meas_path = write_results ("meas.csv", meas, nm);
  report = replay_compare_files (sim_path, meas_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (report->processes->len, ==, 2);
  a = g_ptr_array_index (report->processes, 0);
  b = g_ptr_array_index (report->processes, 1);
  g_assert_cmpstr (a->name, ==, "a-1");
  g_assert_cmpstr (b->name, ==, "b-2");

  g_assert_cmpfloat_with_epsilon (a->mean_error_pct, 25.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (a->p50_error_pct, 25.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (a->p95_error_pct, 25.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (a->p99_error_pct, 25.0, 1e-9);
  /* Scaling by 1.25 moves every quantile by 0.25 Q(p): the demerit is
   * 0.25 times the RMS of the measured quantile function. */
  {
    g_autofree double *v = g_new (double, 20);
    double ss = 0;

    for (int i = 0; i < 20; i++)
      v[i] = (1000000 + 50000 * i) / 1e6;
    for (int k = 1; k <= REPLAY_COMPARE_POINTS; k++)
      {
        double q = replay_compare_quantile (v, 20, (double) k / REPLAY_COMPARE_POINTS);
        ss += q * q;
      }
    g_assert_cmpfloat_with_epsilon (a->demerit_ms, 0.25 * sqrt (ss / REPLAY_COMPARE_POINTS), 1e-9);
    g_assert_cmpfloat_with_epsilon (a->demerit_pct, a->demerit_ms / a->meas.mean_ms * 100, 1e-9);
  }
  /* Same issue times, longer last completion: throughput drops. */
  g_assert_cmpfloat (a->throughput_error_pct, <, 0.0);
  g_assert_cmpfloat_with_epsilon (a->throughput_error_pct, a->iops_error_pct, 1e-9);
  {
    double span_meas = (2000000.0 * 19 + 1950000) / 1e9;
    double span_sim = (2000000.0 * 19 + 1950000 * 1.25) / 1e9;

    g_assert_cmpfloat_with_epsilon (a->meas.mb_per_s, 20 * 4096 / 1e6 / span_meas, 1e-9);
    g_assert_cmpfloat_with_epsilon (a->throughput_error_pct,
                                    (span_meas / span_sim - 1) * 100, 1e-9);
  }

  /* b-2 differs only by its last I/O, which became d-4 in the measured file. */
  g_assert_cmpuint (b->sim.ios, ==, 20);
  g_assert_cmpuint (b->meas.ios, ==, 19);
  g_assert_cmpfloat (b->ks_d, >, 0.0);
  g_assert_cmpfloat_with_epsilon (b->ks_d, 1.0 / 20, 1e-12);

  g_assert_cmpuint (report->only_simulated->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (report->only_simulated, 0), ==, "c-3");
  g_assert_cmpuint (report->only_measured->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (report->only_measured, 0), ==, "d-4");
  g_assert_cmpuint (report->overall->sim.ios, ==, 41);
  g_assert_cmpuint (report->overall->meas.ios, ==, 40);

  json = replay_compare_report_to_json (report);
  g_assert_nonnull (strstr (json, "\"demerit_ms\""));
  g_assert_nonnull (strstr (json, "\"overall\""));
  g_assert_nonnull (strstr (json, "\"only_in_measured\""));
}

static void
test_report_empty (void)
{
  const Io one = { "a-1", 1, 4096, 0, 100 };
  g_autofree char *empty = write_results ("empty.csv", NULL, 0);
  g_autofree char *full = write_results ("one.csv", &one, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(ReplayCompareReport) report = replay_compare_files (empty, full, &error);

  g_assert_null (report);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "simulated"));
}

/* Which latency kinds compare: equal ones, and unknown with anything;
 * two different known kinds are refused unless allowed. */
typedef struct {
  TraceLatencyKind sim, meas;
  gboolean         refused;
} KindCase;

static const KindCase kind_cases[] = {
  { TRACE_LATENCY_SYSCALL, TRACE_LATENCY_SYSCALL, FALSE },
  { TRACE_LATENCY_BLOCK_Q2C, TRACE_LATENCY_BLOCK_Q2C, FALSE },
  { TRACE_LATENCY_UNKNOWN, TRACE_LATENCY_SYSCALL, FALSE },
  { TRACE_LATENCY_BLOCK_Q2C, TRACE_LATENCY_UNKNOWN, FALSE },
  { TRACE_LATENCY_UNKNOWN, TRACE_LATENCY_UNKNOWN, FALSE },
  { TRACE_LATENCY_BLOCK_Q2C, TRACE_LATENCY_SYSCALL, TRUE },
  { TRACE_LATENCY_SYSCALL, TRACE_LATENCY_BLOCK_Q2C, TRUE },
};

static void
test_report_kinds (gconstpointer data)
{
  const KindCase *c = data;
  const Io sim[] = { { "a-1", 1, 4096, 0, 100 }, { "a-1", 1, 4096, 200, 100 } };
  const Io meas[] = { { "a-1", 1, 4096, 0, 150 }, { "a-1", 1, 4096, 200, 150 } };
  g_autofree char *sim_path = write_results_kind ("kind-sim.csv", sim, 2, c->sim);
  g_autofree char *meas_path = write_results_kind ("kind-meas.csv", meas, 2, c->meas);
  g_autoptr(GError) error = NULL;
  g_autoptr(ReplayCompareReport) report = replay_compare_files (sim_path, meas_path, &error);
  g_autoptr(ReplayCompareReport) allowed = NULL;
  g_autofree char *json = NULL;
  g_autofree char *sim_member = NULL, *meas_member = NULL;

  if (c->refused)
    {
      g_autofree char *sim_says = g_strdup_printf ("%s holds %s latencies", sim_path,
                                                   trace_latency_kind_name (c->sim));
      g_autofree char *meas_says = g_strdup_printf ("%s holds %s latencies", meas_path,
                                                    trace_latency_kind_name (c->meas));

      g_assert_null (report);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      /* Which file has which, and how to get matching ones. */
      g_assert_nonnull (strstr (error->message, sim_says));
      g_assert_nonnull (strstr (error->message, meas_says));
      g_assert_nonnull (strstr (error->message, "--capture"));
      g_assert_nonnull (strstr (error->message, "fit --measured"));
      g_assert_nonnull (strstr (error->message, "--allow-mixed-latency"));
      g_clear_error (&error);
      allowed = replay_compare_files_full (sim_path, meas_path,
                                           REPLAY_COMPARE_ALLOW_MIXED_LATENCY, &error);
      g_assert_no_error (error);
      report = g_steal_pointer (&allowed);
    }
  g_assert_no_error (error);
  g_assert_nonnull (report);
  g_assert_cmpint (report->simulated_latency_kind, ==, c->sim);
  g_assert_cmpint (report->measured_latency_kind, ==, c->meas);
  g_assert_cmpfloat_with_epsilon (report->overall->mean_error_pct, -100.0 / 3.0, 1e-9);
  json = replay_compare_report_to_json (report);
  sim_member = g_strdup_printf ("\"simulated_latency_kind\" : \"%s\"",
                                trace_latency_kind_name (c->sim));
  meas_member = g_strdup_printf ("\"measured_latency_kind\" : \"%s\"",
                                 trace_latency_kind_name (c->meas));
  g_assert_nonnull (strstr (json, sim_member));
  g_assert_nonnull (strstr (json, meas_member));
}

/* The in-memory entry point refuses too, naming the sides. */
static void
test_report_kinds_results (void)
{
  const Io one = { "a-1", 1, 4096, 0, 100 };
  g_autofree char *sim_path = write_results_kind ("kind-r-sim.csv", &one, 1,
                                                  TRACE_LATENCY_SYSCALL);
  g_autofree char *meas_path = write_results_kind ("kind-r-meas.csv", &one, 1,
                                                   TRACE_LATENCY_BLOCK_Q2C);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceResults) sim = trace_results_load (sim_path, &error);
  g_autoptr(TraceResults) meas = trace_results_load (meas_path, &error);
  g_autoptr(ReplayCompareReport) report = NULL;

  g_assert_no_error (error);
  report = replay_compare_results (sim, meas, &error);
  g_assert_null (report);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "the simulated file holds syscall latencies"));
  g_assert_nonnull (strstr (error->message, "the measured file holds block-q2c latencies"));
}

static void
add_kind_tests (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (kind_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/compare/report/kinds/%s-%s",
                                               trace_latency_kind_name (kind_cases[i].sim),
                                               trace_latency_kind_name (kind_cases[i].meas));
      g_test_add_data_func (path, &kind_cases[i], test_report_kinds);
    }
  g_test_add_func ("/compare/report/kinds/results", test_report_kinds_results);
}

/* Every sample below the limit; above it, evenly spaced ranks
 * 1 + round((k - 1)(n - 1) / (max - 1)) that keep the minimum and the
 * maximum, each point being (x_i, i / n) of the full step CDF. */
static void
check_cdf_points (gsize n, guint max_points)
{
  g_autoptr(GArray) v = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GArray) points = NULL;
  const ReplayCompareCdfPoint *p;
  guint expect_len = (guint) MIN (n, max_points);

  /* Ascending with ties: 0, 0, 3, 3, 6, 6, ... scaled to ns. */
  for (gsize i = 0; i < n; i++)
    {
      gint64 ns = (gint64) (i / 2) * 3000 + 17;
      g_array_append_val (v, ns);
    }
  points = replay_compare_cdf_points (v, max_points);
  g_assert_cmpuint (points->len, ==, expect_len);
  p = (const ReplayCompareCdfPoint *) points->data;
  for (guint k = 0; k < points->len; k++)
    {
      guint64 rank = n <= max_points
                     ? k + 1
                     : 1 + ((guint64) k * (n - 1) + (max_points - 1) / 2) / (max_points - 1);

      g_assert_cmpint (p[k].latency_ns, ==, g_array_index (v, gint64, rank - 1));
      g_assert_cmpfloat (p[k].cum_fraction, ==, (double) rank / (double) n);
      if (k > 0)
        {
          g_assert_cmpfloat (p[k].cum_fraction, >, p[k - 1].cum_fraction);
          g_assert_cmpint (p[k].latency_ns, >=, p[k - 1].latency_ns);
        }
    }
  g_assert_cmpint (p[0].latency_ns, ==, g_array_index (v, gint64, 0));
  g_assert_cmpint (p[points->len - 1].latency_ns, ==, g_array_index (v, gint64, n - 1));
  g_assert_cmpfloat (p[points->len - 1].cum_fraction, ==, 1.0);
}

static void
test_cdf_points (void)
{
  check_cdf_points (1, 1000);
  check_cdf_points (7, 1000);
  check_cdf_points (1000, 1000);
  check_cdf_points (1001, 1000);
  check_cdf_points (2500, 1000);
  check_cdf_points (10, 4);      /* ranks 1, 4, 7, 10 */
  check_cdf_points (12345, 7);
}

/* The CSV holds the common processes then overall, simulated before
 * measured, and quotes a name with a comma and a quote. */
static void
test_cdf_csv (void)
{
  const Io sim[] = { { "p,\"q\"-1", 1, 512, 0, 300 }, { "p,\"q\"-1", 1, 512, 1000, 100 },
                     { "z-2", 2, 512, 0, 50 } };
  const Io meas[] = { { "p,\"q\"-1", 1, 512, 0, 200 }, { "z-2", 2, 512, 0, 70 } };
  g_autofree char *sim_path = write_results ("cdf-sim.csv", sim, G_N_ELEMENTS (sim));
  g_autofree char *meas_path = write_results ("cdf-meas.csv", meas, G_N_ELEMENTS (meas));
  g_autoptr(GError) error = NULL;
  g_autoptr(ReplayCompareReport) report = replay_compare_files (sim_path, meas_path, &error);
  g_autofree char *csv = NULL;

  g_assert_no_error (error);
  csv = replay_compare_report_to_cdf_csv (report);
  g_assert_cmpstr (csv, ==,
                   "process,side,latency_ns,cum_fraction\n"
                   "\"p,\"\"q\"\"-1\",simulated,100,0.5\n"
                   "\"p,\"\"q\"\"-1\",simulated,300,1\n"
                   "\"p,\"\"q\"\"-1\",measured,200,1\n"
                   "z-2,simulated,50,1\n"
                   "z-2,measured,70,1\n"
                   "overall,simulated,50,0.333333333333\n"
                   "overall,simulated,100,0.666666666667\n"
                   "overall,simulated,300,1\n"
                   "overall,measured,70,0.5\n"
                   "overall,measured,200,1\n");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/compare/quantile", test_quantile);
  g_test_add_func ("/compare/demerit/identical", test_demerit_identical);
  g_test_add_func ("/compare/demerit/shift", test_demerit_shift);
  g_test_add_func ("/compare/demerit/uniform-scales", test_demerit_uniform_scales);
  g_test_add_func ("/compare/ks/known", test_ks_known);
  g_test_add_func ("/compare/report", test_report);
  g_test_add_func ("/compare/report/empty", test_report_empty);
  add_kind_tests ();
  g_test_add_func ("/compare/cdf/points", test_cdf_points);
  g_test_add_func ("/compare/cdf/csv", test_cdf_csv);
  return g_test_run ();
}
