/* test-fit-empirical.c — the `empirical` kind of models/fit
 * (fit-empirical.c): the continuous ranked probability score against
 * values worked out by hand, the cells a fit makes (classes, merging of
 * small ones, medians), the held-out choice against the disk kind, and
 * the scenario it writes, loaded and run as the scenario loader does.
 *
 * CRPS by hand: for X uniform on [0, 1] and y in it, CRPS = integral of
 * F(x)^2 below y plus (1 - F(x))^2 above = y^3 / 3 + (1 - y)^3 / 3 (1/12 at
 * y = 1/2); above the support, E|X - y| - E|X - X'| / 2 = (y - 1/2) - 1/6;
 * a point mass at c scores |y - c|.  Randomness comes from seeded gsl_rng
 * streams. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit-private.h"
#include "models/scenario.h"
#include "fit-kind-test.h"

#define N_REQUESTS 3000
#define STROKE_SECTORS (G_GUINT64_CONSTANT (1) << 31)

/* ---- The score ------------------------------------------------------------ */

typedef struct {
  const char *name;
  double      p[4], q[4];
  guint       n;
  double      shift, y, crps;
} CrpsCase;

static const CrpsCase crps_cases[] = {
  { "uniform-middle", { 0, 1 }, { 0, 1 }, 2, 0, 0.5, 1.0 / 12.0 },
  { "uniform-quarter", { 0, 1 }, { 0, 1 }, 2, 0, 0.25, (0.015625 + 0.421875) / 3.0 },
  { "uniform-above", { 0, 1 }, { 0, 1 }, 2, 0, 2.0, 1.5 - 1.0 / 6.0 },
  { "uniform-below", { 0, 1 }, { 0, 1 }, 2, 0, -1.0, 1.5 - 1.0 / 6.0 },
  /* the shift moves the distribution, not the observation */
  { "uniform-shifted", { 0, 1 }, { 0, 1 }, 2, 10, 10.5, 1.0 / 12.0 },
  { "point", { 0, 1 }, { 2, 2 }, 2, 0, 5, 3 },
  { "point-hit", { 0, 1 }, { 2, 2 }, 2, 0, 2, 0 },
  /* uniform on [0, 2] as two pieces: twice the [0, 1] figure at y = 1 */
  { "two-pieces", { 0, 0.5, 1 }, { 0, 1, 2 }, 3, 0, 1.0, 2.0 / 12.0 },
};

static void
test_crps (gconstpointer data)
{
  const CrpsCase *c = data;

  g_assert_cmpfloat_with_epsilon (fit_crps_quantiles (c->p, c->q, c->n, c->shift, c->y),
                                  c->crps, 1e-12);
}

/* ---- Cells ----------------------------------------------------------------- */

typedef struct {
  double   seq_ns;        /* a sequential request, any size */
  double   moved_lo_ns;   /* a request that moved: uniform on [lo, hi] */
  double   moved_hi_ns;
  double   seq_share;
  gulong   seed;
} CacheDevice;

/* A serial device whose sequential requests come from its cache and whose
 * other requests wait a random, distance-free time (no seek curve to
 * find): reads of 4 KiB, and a few of 64 KiB. */
static GArray *
generate (const CacheDevice *c, guint n)
{
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  guint64 prev_end = 0;
  gint64 now = 0;

  gsl_rng_set (rng, c->seed);
  for (guint k = 0; k < n; k++)
    {
      TraceRequest rq = { .dev_major = 8, .op = TRACE_OP_READ, .in_flight_at_issue = 1 };
      gboolean seq = k > 0 && gsl_rng_uniform (rng) < c->seq_share;
      double s;

      rq.nr_sectors = k % 100 == 0 ? 128 : 8;
      rq.sector = seq ? prev_end : (guint64) (gsl_rng_uniform (rng) * (STROKE_SECTORS - 256)) & ~7ull;
      s = seq ? c->seq_ns : c->moved_lo_ns + gsl_rng_uniform (rng) * (c->moved_hi_ns - c->moved_lo_ns);
      now += 500000;
      rq.issue_ns = now;
      rq.complete_ns = now + (gint64) llround (s);
      now = rq.complete_ns;
      prev_end = rq.sector + rq.nr_sectors;
      g_array_append_val (out, rq);
    }
  gsl_rng_free (rng);
  return out;
}

static const CacheDevice cache_device = { 50000, 1e6, 9e6, 0.4, 7 };

static void
choose (GArray *rqs, FitModelKind requested, FitModelChoice *out)
{
  guint parallelism;

  fit_kind_test_choose (rqs, STROKE_SECTORS, requested, &parallelism, out);
  g_assert_cmpuint (parallelism, ==, 1);
}

static double
cell_median_ns (const FitEmpiricalCell *c)
{
  for (guint k = 1; k < c->n_quantiles; k++)
    if (c->p[k] >= 0.5)
      return c->q_ns[k - 1] + (0.5 - c->p[k - 1]) / (c->p[k] - c->p[k - 1])
                                * (c->q_ns[k] - c->q_ns[k - 1]);
  return c->q_ns[c->n_quantiles - 1];
}

/* 4 KiB reads: sequential (one cell at distance 0) and moved (one cell of
 * every distance above the 2049-sector bound, the rest merged into it:
 * random places over 1 TiB are almost never nearer); the 30 reads of
 * 64 KiB (every 100th) are too few for a size class of their own, so
 * they join the 4 KiB class, which becomes (0, 65536]. */
static void
test_cells (void)
{
  g_autoptr(GArray) rqs = generate (&cache_device, N_REQUESTS);
  FitModelChoice m;
  const GArray *reads;
  const FitEmpiricalCell *seq = NULL, *moved = NULL;

  choose (rqs, FIT_MODEL_EMPIRICAL, &m);
  g_assert_true (m.empirical.fitted);
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_EMPIRICAL);
  g_assert_cmpuint (m.empirical.window, ==, 1);
  reads = m.empirical.cells[0];
  g_assert_cmpuint (m.empirical.cells[1]->len, ==, 0);
  for (guint i = 0; i < reads->len; i++)
    {
      const FitEmpiricalCell *c = &g_array_index (reads, FitEmpiricalCell, i);
      g_test_message ("cell (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "] [%" G_GUINT64_FORMAT
                      ", %" G_GUINT64_FORMAT "] n %" G_GUINT64_FORMAT " median %.0f", c->bytes_lo,
                      c->bytes_hi, c->dist_lo, c->dist_hi, c->n, cell_median_ns (c));
      g_assert_cmpuint (c->bytes_lo, ==, 0);
      g_assert_cmpuint (c->bytes_hi, ==, 65536);
      g_assert_cmpuint (c->n, >=, 30);
      if (c->dist_hi == 0)
        seq = c;
      else
        moved = c;
    }
  g_assert_cmpuint (reads->len, ==, 2);
  g_assert_nonnull (seq);
  g_assert_nonnull (moved);
  g_assert_cmpuint (moved->dist_lo, ==, 1);
  g_assert_cmpuint (moved->dist_hi, ==, G_MAXUINT64);
  /* Sequential: every one 50 us. */
  g_assert_cmpfloat (seq->q_ns[0], ==, 50000);
  g_assert_cmpfloat (seq->q_ns[seq->n_quantiles - 1], ==, 50000);
  /* Moved: uniform on 1..9 ms, median 5 ms; ~1800 draws give the median
   * within 8 ms * 1.96 * sqrt (1/4 / 1800) = 0.19 ms (95 %): 0.3 ms. */
  g_assert_cmpfloat (fabs (cell_median_ns (moved) - 5e6), <, 3e5);
  g_assert_cmpfloat (moved->q_ns[0], >=, 1e6);
  g_assert_cmpfloat (moved->q_ns[moved->n_quantiles - 1], <=, 9e6);
  fit_model_choice_clear (&m);
}

/* Against the disk kind, which can only put the moved requests at their
 * mean (5 ms: absolute error 2 ms on average), the cell's uniform scores
 * 8 ms / 6 = 1.33 ms: auto takes the empirical kind. */
static void
test_choice (void)
{
  g_autoptr(GArray) rqs = generate (&cache_device, N_REQUESTS);
  FitModelChoice m;

  choose (rqs, FIT_MODEL_AUTO, &m);
  g_test_message ("rival %s: CRPS %.1fus, empirical %.1fus, t %.2f",
                  fit_model_kind_name (m.empirical_rival), m.rival_held_out_crps_ns / 1e3,
                  m.empirical_held_out_crps_ns / 1e3, m.crps_gain_t);
  g_assert_true (m.empirical_compared);
  g_assert_cmpint (m.empirical_rival, ==, FIT_MODEL_DISK);
  g_assert_cmpfloat (m.crps_gain_t, >, 3.0);
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_EMPIRICAL);
  g_assert_nonnull (strstr (m.reason, "ranked probability"));
  fit_model_choice_clear (&m);
}

/* --model fixed and disk still win over a better empirical fit. */
static void
test_forced (void)
{
  g_autoptr(GArray) rqs = generate (&cache_device, N_REQUESTS);
  static const FitModelKind kinds[] = { FIT_MODEL_FIXED, FIT_MODEL_DISK };

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      FitModelChoice m;

      choose (rqs, kinds[k], &m);
      g_assert_cmpint (m.chosen, ==, kinds[k]);
      g_assert_false (m.empirical_compared);
      fit_model_choice_clear (&m);
    }
}

/* The parser knows the kind. */
static void
test_parse (void)
{
  FitModelKind k = FIT_MODEL_AUTO;

  g_assert_true (fit_model_kind_parse ("empirical", &k));
  g_assert_cmpint (k, ==, FIT_MODEL_EMPIRICAL);
  g_assert_cmpstr (fit_model_kind_name (FIT_MODEL_EMPIRICAL), ==, "empirical");
}

/* Through fit_arrays: the scenario gets kind = empirical, its device draws
 * (without a stream) each cell's median, and a run completes on it. */
static void
test_scenario (void)
{
  g_autoptr(GArray) rqs = generate (&cache_device, N_REQUESTS);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = NULL;
  g_autoptr(DevModel) dev = NULL;
  g_autofree char *ini = NULL, *json = NULL;
  FitOptions opts = { .model = FIT_MODEL_EMPIRICAL };
  SimTime seq_ns, moved_ns;

  r = fit_arrays ("synthetic", NULL, 0, (const TraceRequest *) rqs->data, rqs->len, NULL, NULL,
                  "1099511627776", &opts, &error);
  g_assert_no_error (error);
  ini = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (ini, "kind = empirical\n"));
  g_assert_nonnull (strstr (ini, "read_cells = 0-65536/0-0 n="));
  g_assert_nonnull (strstr (ini, "distance_window = 1\n"));
  g_assert_null (strstr (ini, "kind = fixed\n"));
  json = fit_result_to_json (r);
  g_assert_nonnull (strstr (json, "\"scenario_kind\" : \"empirical\""));
  dev = fit_kind_test_load_device (r, ini);
  g_assert_cmpstr (dev->ops->name, ==, "empirical");
  /* Far from everything (the first request), then sequential. */
  moved_ns = dev_model_service_time (dev, SIM_OP_READ, 1 << 20, 8, 0);
  seq_ns = dev_model_service_time (dev, SIM_OP_READ, (1 << 20) + 8, 8, 0);
  g_assert_cmpint (seq_ns, ==, 50000);
  g_assert_cmpfloat (fabs ((double) moved_ns - 5e6), <, 3e5);
  {
    g_autofree char *full = g_strconcat (ini, "\n[process p]\nop = read\npattern = random\n"
                                         "io = direct\nbs = 4KiB\nsize = 1MiB\n", NULL);
    g_autoptr(Scenario) s = scenario_load_data (full, "fitted", NULL, NULL, &error);
    g_autoptr(SimRunResult) run = NULL;

    g_assert_no_error (error);
    run = scenario_run (s, 0, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (run);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (crps_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-empirical/crps/%s", crps_cases[i].name);
      g_test_add_data_func (path, &crps_cases[i], test_crps);
    }
  g_test_add_func ("/fit-empirical/cells", test_cells);
  g_test_add_func ("/fit-empirical/choice", test_choice);
  g_test_add_func ("/fit-empirical/forced", test_forced);
  g_test_add_func ("/fit-empirical/parse", test_parse);
  g_test_add_func ("/fit-empirical/scenario", test_scenario);
  return g_test_run ();
}
