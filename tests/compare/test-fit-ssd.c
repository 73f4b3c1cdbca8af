/* test-fit-ssd.c — the `ssd` kind of models/fit (fit-ssd.c) on traces of
 * devices whose truth is known: open Poisson arrivals of reads (and
 * writes) to a device that serves `parallelism` at once in arrival order,
 * every service time taken from the simulator's own device model
 * (models/dev/dev-ssd.c or dev-fixed.c, called in start order as the
 * engine calls it).  The fit must find the parallelism, recover dev-ssd's
 * latencies and bandwidths, prefer the ssd kind on held-out requests where
 * the device is one, and not where it is a fixed-rate device with its
 * own spread; the scenario it writes must load as that model.  Randomness
 * comes from seeded gsl_rng streams and the device's SimRng. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit-private.h"
#include "sim/sim-rng.h"
#include "sim/sim-units.h"
#include "fit-kind-test.h"

#define N_REQUESTS 3000
#define STROKE_SECTORS (G_GUINT64_CONSTANT (1) << 28)

typedef struct {
  const char   *name;
  const char   *device;          /* [device] keys of the truth */
  guint         parallelism;     /* the truth's, for the check */
  double        write_share;
  const guint32 *sizes;          /* request sizes in sectors, drawn uniformly */
  guint         n_sizes;
  double        mean_gap_ns;     /* Poisson arrivals */
  double        jitter_ns;       /* completions reported up to this late (0: exact) */
  FitModelKind  expect;          /* what auto chooses */
  gulong        seed;
} SsdCase;

static const guint32 two_sizes[] = { 8, 256 };
static const guint32 four_sizes[] = { 8, 16, 64, 256 };

/* Loads of 80-90 % of the transfer pipeline (4 KiB and 128 KiB reads at
 * 500 MB/s: 135 us of transfer per request on average), so requests queue
 * for servers and for the pipeline; the fixed-rate device at a similar
 * share of its four servers. */
static const SsdCase cases[] = {
  { "ssd-reads-p4",
    "kind = ssd\nread_latency = 80us\nread_bandwidth = 500MB/s\nparallelism = 4\n"
    "queue_depth = 128\n",
    4, 0.0, two_sizes, G_N_ELEMENTS (two_sizes), 160000, 0, FIT_MODEL_SSD, 31 },
  { "ssd-mixed-p8",
    "kind = ssd\nread_latency = 90us\nwrite_latency = 25us\nread_bandwidth = 550MB/s\n"
    "write_bandwidth = 450MB/s\nparallelism = 8\nqueue_depth = 128\n",
    8, 0.3, four_sizes, G_N_ELEMENTS (four_sizes), 140000, 0, FIT_MODEL_SSD, 32 },
  /* Completions reported 0-2 us late, as an interrupt and softirq would. */
  { "ssd-jitter-p4",
    "kind = ssd\nread_latency = 80us\nread_bandwidth = 500MB/s\nparallelism = 4\n"
    "queue_depth = 128\n",
    4, 0.0, four_sizes, G_N_ELEMENTS (four_sizes), 110000, 2000, FIT_MODEL_SSD, 33 },
  /* Independent servers, each at the full rate, overheads spread 30-200 us. */
  { "fixed-p4",
    "kind = fixed\noverhead = 60us\nbandwidth = 200MB/s\nparallelism = 4\nqueue_depth = 128\n"
    "overhead_quantiles = 30us,40us,50us,60us,200us\n",
    4, 0.0, four_sizes, G_N_ELEMENTS (four_sizes), 150000, 0, FIT_MODEL_FIXED, 34 },
};

/* The trace of @c: requests in arrival order, each dispatched on arrival
 * (the device takes them all) and started when a server is free. */
static GArray *
generate (const SsdCase *c)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *ini = g_strconcat ("[device]\n", c->device, NULL);
  g_autoptr(DevModel) dev = dev_model_new_from_data ("truth", ini, &error);
  g_autoptr(SimRng) stream = sim_rng_new (c->seed, "device.truth.service");
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (TraceRequest), N_REQUESTS);
  g_autofree gint64 *free_at = g_new0 (gint64, c->parallelism);
  gint64 now = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (dev->parallelism, ==, c->parallelism);
  dev->rng = stream;
  gsl_rng_set (rng, c->seed);
  for (guint k = 0; k < N_REQUESTS; k++)
    {
      TraceRequest rq = { .dev_major = 8, .in_flight_at_issue = 1 };
      guint server = 0;
      gint64 start;

      now += (gint64) llround (gsl_ran_exponential (rng, c->mean_gap_ns)) + 1;
      rq.op = gsl_rng_uniform (rng) < c->write_share ? TRACE_OP_WRITE : TRACE_OP_READ;
      rq.nr_sectors = c->sizes[gsl_rng_uniform_int (rng, c->n_sizes)];
      rq.sector = gsl_rng_uniform_int (rng, STROKE_SECTORS / 8 - 64) * 8;
      rq.issue_ns = now;
      for (guint s = 1; s < c->parallelism; s++)
        if (free_at[s] < free_at[server])
          server = s;
      start = MAX (now, free_at[server]);
      rq.complete_ns = start + dev_model_service_time (dev, rq.op == TRACE_OP_WRITE
                                                              ? SIM_OP_WRITE : SIM_OP_READ,
                                                       rq.sector, rq.nr_sectors, start);
      free_at[server] = rq.complete_ns;
      if (c->jitter_ns > 0)
        rq.complete_ns += (gint64) llround (gsl_rng_uniform (rng) * c->jitter_ns);
      for (guint j = 0; j < k; j++)
        rq.in_flight_at_issue += g_array_index (out, TraceRequest, j).complete_ns > now;
      g_array_append_val (out, rq);
    }
  dev->rng = NULL;
  gsl_rng_free (rng);
  return out;
}

static void
choose (GArray *rqs, FitModelKind requested, guint *parallelism, FitModelChoice *out)
{
  fit_kind_test_choose (rqs, STROKE_SECTORS, requested, parallelism, out);
}

/* The truth's figure @key of op @w, from the model's own parameters. */
static double
truth (const SsdCase *c, const char *key)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *data = g_strconcat ("[d]\n", c->device, NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  SimTime ns;
  double rate;

  g_assert_true (g_key_file_load_from_data (kf, data, -1, G_KEY_FILE_NONE, &error));
  text = g_key_file_get_string (kf, "d", key, NULL);
  if (text == NULL)
    /* dev-ssd's documented defaults: write_latency 20us, write_bandwidth 450MB/s */
    text = g_strdup (strstr (key, "latency") != NULL ? "20us" : "450MB/s");
  if (strstr (key, "latency") != NULL)
    {
      g_assert_true (sim_parse_time_ns (text, 0, &ns, &error));
      return (double) ns;
    }
  g_assert_true (sim_parse_rate_bytes_per_s (text, &rate, &error));
  return rate;
}

/* A noiseless trace of dev-ssd gives back its own figures (to the
 * nanosecond rounding of its transfer times); completions reported up to
 * J late shift the latency by at most J and leave the bandwidth. */
static void
assert_recovered (const SsdCase *c, const FitSsdFit *f)
{
  static const char *const ops[] = { "read", "write" };

  for (int w = 0; w < 2; w++)
    {
      g_autofree char *lat_key = g_strdup_printf ("%s_latency", ops[w]);
      g_autofree char *bw_key = g_strdup_printf ("%s_bandwidth", ops[w]);
      double lat = truth (c, lat_key), bw = truth (c, bw_key);

      if (!f->op_fitted[w])
        continue;
      g_test_message ("%s: latency %.3f us (true %.3f, +- %.3f), bandwidth %.2f MB/s (true %.2f)",
                      ops[w], f->latency_ns[w] / 1e3, lat / 1e3,
                      f->t95 * f->latency_se_ns[w] / 1e3, f->bandwidth_bytes_per_s[w] / 1e6,
                      bw / 1e6);
      if (c->jitter_ns == 0)
        {
          g_assert_cmpfloat (fabs (f->latency_ns[w] - lat), <, 1.0);
          g_assert_cmpfloat (fabs (f->bandwidth_bytes_per_s[w] / bw - 1), <, 1e-4);
        }
      else
        {
          g_assert_cmpfloat (f->latency_ns[w], >=, lat - c->jitter_ns);
          g_assert_cmpfloat (f->latency_ns[w], <=, lat + c->jitter_ns);
          g_assert_cmpfloat (fabs (f->bandwidth_bytes_per_s[w] / bw - 1), <, 0.02);
        }
    }
}

static void
test_choice (gconstpointer data)
{
  const SsdCase *c = data;
  g_autoptr(GArray) rqs = generate (c);
  FitModelChoice m;
  guint p;

  choose (rqs, FIT_MODEL_AUTO, &p, &m);
  g_test_message ("queue parallelism %u, ssd's %u; held out %" G_GUINT64_FORMAT ": MAE fixed "
                  "%.2f us, ssd %.2f us, t %.2f; ssd waited %" G_GUINT64_FORMAT " of %"
                  G_GUINT64_FORMAT ", %u alternations; chosen %s (%s)", p, m.ssd.parallelism,
                  m.ssd_n_held_out, m.ssd_fixed_held_out_mae_ns / 1e3,
                  m.ssd_held_out_mae_ns / 1e3, m.ssd_gain_t, m.ssd.n_waited, m.ssd.n_used,
                  m.ssd.iterations, fit_model_kind_name (m.chosen), m.reason);
  g_assert_true (m.ssd_compared);
  g_assert_cmpint (m.chosen, ==, c->expect);
  if (c->expect == FIT_MODEL_SSD)
    {
      g_assert_cmpuint (m.ssd.parallelism, ==, c->parallelism);
      g_assert_true (m.ssd.fitted);
      g_assert_true (m.ssd.converged);
      g_assert_cmpuint (m.ssd.n_waited, >, 0);
      assert_recovered (c, &m.ssd);
    }
  else
    {
      g_assert_cmpuint (p, ==, c->parallelism);
      g_assert_cmpfloat (m.ssd_gain_t, <=, 3.0);
    }
  fit_model_choice_clear (&m);
}

/* On a serial device nothing waits for the pipeline: the ssd kind finds
 * one server and is the fixed kind's line, so auto keeps the fixed kind;
 * --model ssd still writes it. */
static void
test_serial (void)
{
  static const SsdCase serial = {
    "ssd-serial", "kind = ssd\nread_latency = 80us\nread_bandwidth = 500MB/s\nparallelism = 1\n",
    1, 0.0, two_sizes, G_N_ELEMENTS (two_sizes), 400000, 0, FIT_MODEL_SSD, 35 };
  g_autoptr(GArray) rqs = generate (&serial);
  FitModelChoice m;
  guint p;

  choose (rqs, FIT_MODEL_AUTO, &p, &m);
  g_assert_cmpuint (p, ==, 1);
  g_assert_cmpuint (m.ssd.parallelism, ==, 1);
  g_assert_cmpint (m.chosen, !=, FIT_MODEL_SSD);
  g_assert_cmpuint (m.ssd.n_waited, ==, 0);
  fit_model_choice_clear (&m);
  choose (rqs, FIT_MODEL_SSD, &p, &m);
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_SSD);
  g_assert_cmpstr (m.reason, ==, "forced by --model ssd");
  assert_recovered (&serial, &m.ssd);
  fit_model_choice_clear (&m);
}

/* One request size on a serial device: latency and bandwidth cannot be
 * told apart, so --model ssd falls back to fixed and says why. */
static void
test_unidentified (void)
{
  static const guint32 one_size[] = { 8 };
  static const SsdCase one = {
    "ssd-one-size", "kind = ssd\nread_latency = 80us\nparallelism = 1\n",
    1, 0.0, one_size, 1, 400000, 0, FIT_MODEL_FIXED, 36 };
  g_autoptr(GArray) rqs = generate (&one);
  FitModelChoice m;
  guint p;

  choose (rqs, FIT_MODEL_SSD, &p, &m);
  g_test_message ("ssd: %s", m.ssd.why_not);
  g_assert_false (m.ssd.fitted);
  g_assert_nonnull (strstr (m.ssd.why_not, "cannot be told apart"));
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_FIXED);
  g_assert_nonnull (strstr (m.reason, "--model ssd asked"));
  fit_model_choice_clear (&m);
}

/* Through fit_arrays: the scenario's device is kind = ssd with the fitted
 * figures and parallelism, and loads as dev-ssd; the JSON says so. */
static void
test_scenario (void)
{
  const SsdCase *c = &cases[0];
  g_autoptr(GArray) rqs = generate (c);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = NULL;
  g_autoptr(DevModel) dev = NULL;
  g_autofree char *ini = NULL, *json = NULL;

  r = fit_arrays ("synthetic", NULL, 0, (const TraceRequest *) rqs->data, rqs->len, NULL, NULL,
                  "137438953472", NULL, &error);
  g_assert_no_error (error);
  ini = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (ini, "kind = ssd\nread_latency = 80.000us\n"));
  g_assert_nonnull (strstr (ini, "read_bandwidth = 500.00MB/s\n"));
  g_assert_nonnull (strstr (ini, "parallelism = 4\n"));
  json = fit_result_to_json (r);
  g_assert_nonnull (strstr (json, "\"scenario_kind\" : \"ssd\""));
  dev = fit_kind_test_load_device (r, ini);
  g_assert_cmpstr (dev->ops->name, ==, "ssd");
  /* dev-ssd's own trace: each prediction is the rebuilt service time, so
   * the two distributions are one (to the nanosecond rounding). */
  g_assert_cmpuint (r->model.demerit_n, ==, N_REQUESTS);
  g_assert_cmpfloat (r->model.demerit_ns, <, 1.0);
  g_assert_cmpuint (dev->parallelism, ==, 4);
  /* A lone 4 KiB read: the latency and its transfer, 80 + 8.192 us. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0), ==, 88192);
}

/* The demerit the fit reports for the fixed kind on its own device: its
 * drawn overheads are those very requests' quantiles, so what is left is
 * how transfer times and overheads mix across sizes, a few per cent
 * (1.4 % measured).  A demerit is of distributions: a kind can match one
 * while placing its times on the wrong requests, which is why the kinds
 * are chosen on held-out requests (test_choice), not on this. */
static void
test_demerit_fixed (void)
{
  g_autoptr(GArray) rqs = generate (&cases[3]);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = NULL;
  FitOptions opts = { .model = FIT_MODEL_FIXED };
  double pct;

  r = fit_arrays ("synthetic", NULL, 0, (const TraceRequest *) rqs->data, rqs->len, NULL, NULL,
                  "137438953472", &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (r->model.chosen, ==, FIT_MODEL_FIXED);
  pct = 100.0 * r->model.demerit_ns / r->model.demerit_observed_mean_ns;
  g_test_message ("demerit %.3f us, %.3f %% of %.3f us", r->model.demerit_ns / 1e3, pct,
                  r->model.demerit_observed_mean_ns / 1e3);
  /* Every request but the first, which has no distance for a row. */
  g_assert_cmpuint (r->model.demerit_n, ==, N_REQUESTS - 1);
  g_assert_cmpfloat (pct, >, 0);
  g_assert_cmpfloat (pct, <, 5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-ssd/choice/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_choice);
    }
  g_test_add_func ("/fit-ssd/serial", test_serial);
  g_test_add_func ("/fit-ssd/unidentified", test_unidentified);
  g_test_add_func ("/fit-ssd/scenario", test_scenario);
  g_test_add_func ("/fit-ssd/demerit-fixed", test_demerit_fixed);
  return g_test_run ();
}
