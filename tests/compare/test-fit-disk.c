/* test-fit-disk.c — the `disk` kind of models/fit (fit-disk.c) and the
 * choice between it and `fixed` on held-out requests.
 *
 * A serial device serves one request at a time at depth 1 (each dispatched
 * when the previous completes, after a think time): service = overhead +
 * write extra + [moved] (a + rotation) + b sqrt(d) + c d + bytes / bandwidth
 * + Gaussian noise, with d the distance in sectors from the end of the
 * previous request; a share of the requests starts where the previous one
 * ended (d = 0).  The fit must recover every parameter and the seek curve
 * at several distances within their 95 % confidence intervals; a fixed-rate
 * device (a = b = c = 0) must choose `fixed`, a seek-bound one `disk`;
 * --model forces either.  Requests served by the simulator's own disk model
 * (models/devices/disk-7200-sata.ini) must choose `disk` with a seek curve
 * at a third of the stroke that exceeds the model's by the rotational wait
 * the fit cannot separate: between none and one revolution.
 * Randomness comes from seeded gsl_rng streams. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit.h"
#include "models/scenario.h"
#include "sim/sim.h"
#include "fit-kind-test.h"

#define N_REQUESTS       3000
/* 1 TiB: the stroke in sectors. */
#define STROKE_SECTORS   (G_GUINT64_CONSTANT (1) << 31)
#define THINK_MAX_NS     1000000.0

typedef struct {
  const char  *name;
  double       sequential_share;  /* requests that start where the previous ended */
  double       write_share;
  double       overhead_ns;
  double       write_extra_ns;
  double       a_rot_ns;          /* a + mean rotation, for a request that moved */
  double       b_ns;              /* per sqrt(sector) */
  double       c_ns;              /* per sector */
  double       ns_per_byte;
  double       noise_ns;          /* sigma */
  FitModelKind expect;            /* the kind auto must choose */
  gulong       seed;
} DiskCase;

/* Seek-bound: a third of the stroke costs 5 ms + 1.34 ms + 2.15 ms on top
 * of a 0.15 ms overhead (a 7200 rpm drive's scale, Ruemmler & Wilkes
 * 1994); fixed-rate: the same overhead and rate, no seek.  The noise stays
 * small against the shortest service (0.15 ms + 4 KiB): a clamp at zero
 * would bias the generator, not the fit. */
static const DiskCase disk_cases[] = {
  { "seek-mixed",        0.4, 0.3, 150000, 100000, 5000000, 50.0, 3e-6, 6.67, 50000,
    FIT_MODEL_DISK, 31 },
  { "seek-random",       0.0, 0.0, 150000, 0,      5000000, 50.0, 3e-6, 6.67, 50000,
    FIT_MODEL_DISK, 32 },
  { "seek-sequential",   0.9, 0.0, 150000, 0,      5000000, 50.0, 3e-6, 6.67, 50000,
    FIT_MODEL_DISK, 33 },
  { "fixed-random",      0.0, 0.0, 150000, 0,      0,       0.0,  0.0,  6.67, 30000,
    FIT_MODEL_FIXED, 34 },
  { "fixed-mixed",       0.4, 0.3, 150000, 100000, 0,       0.0,  0.0,  6.67, 30000,
    FIT_MODEL_FIXED, 35 },
};

static guint32
gen_sectors (gsl_rng *rng)
{
  static const guint32 sizes[] = { 8, 32, 64, 128, 256 };

  return sizes[gsl_rng_uniform_int (rng, G_N_ELEMENTS (sizes))];
}

static double
true_service (const DiskCase *c, const TraceRequest *rq, guint64 prev_end)
{
  double d = rq->sector >= prev_end ? (double) (rq->sector - prev_end)
                                    : (double) (prev_end - rq->sector);
  double t = c->overhead_ns + c->ns_per_byte * rq->nr_sectors * 512.0;

  if (rq->op == TRACE_OP_WRITE)
    t += c->write_extra_ns;
  if (d > 0)
    t += c->a_rot_ns + c->b_ns * sqrt (d) + c->c_ns * d;
  return t;
}

/* The next request's position: where the previous ended, or anywhere. */
static void
gen_place (gsl_rng *rng, double sequential_share, guint64 prev_end, TraceRequest *rq)
{
  if (prev_end + rq->nr_sectors < STROKE_SECTORS && gsl_rng_uniform (rng) < sequential_share)
    rq->sector = prev_end;
  else
    rq->sector = (guint64) (gsl_rng_uniform (rng) * (double) (STROKE_SECTORS - 256)) & ~7ull;
}

static GArray *
generate (const DiskCase *c)
{
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  guint64 prev_end = 0;
  gint64 now = 0;

  gsl_rng_set (rng, c->seed);
  for (guint k = 0; k < N_REQUESTS; k++)
    {
      TraceRequest rq = { .dev_major = 8, .in_flight_at_issue = 1 };
      double s;

      rq.op = gsl_rng_uniform (rng) < c->write_share ? TRACE_OP_WRITE : TRACE_OP_READ;
      rq.nr_sectors = gen_sectors (rng);
      gen_place (rng, c->sequential_share, prev_end, &rq);
      s = true_service (c, &rq, prev_end) + gsl_ran_gaussian (rng, c->noise_ns);
      now += (gint64) llround (gsl_rng_uniform (rng) * THINK_MAX_NS);
      rq.issue_ns = now;
      rq.complete_ns = now + MAX ((gint64) llround (s), 1);
      now = rq.complete_ns;
      prev_end = rq.sector + rq.nr_sectors;
      g_array_append_val (out, rq);
    }
  gsl_rng_free (rng);
  return out;
}

static void
choose (GArray *rqs, FitModelKind requested, guint *parallelism, FitModelChoice *out)
{
  fit_kind_test_choose (rqs, STROKE_SECTORS, requested, parallelism, out);
}

/* Each recovered figure is checked against the truth at a level that holds
 * for the whole family of checks in this program (Bonferroni): at most 9
 * figures in each of the 5 recovery cases, so each interval is the
 * 1 - 0.05 / 45 one, for a 5 % chance that any check of a correct fit
 * fails.  A plain 95 % interval per figure would fail a correct fit in
 * about 9 runs in 10 over 45 checks.  Misses of the plain 95 % interval
 * are logged. */
#define FAMILY_CHECKS 45

static void
assert_within (const FitDiskFit *d, const char *what, double fitted, double se, double truth)
{
  double dof = (double) (d->n_used - d->n_cols);
  double t_family = gsl_cdf_tdist_Pinv (1.0 - 0.025 / FAMILY_CHECKS, dof);
  double miss = fabs (fitted - truth) / se;

  g_test_message ("%s: fitted %.6g, se %.3g, true %.6g: %.2f se off%s", what, fitted, se,
                  truth, miss, miss > d->t95 ? " (outside the plain 95 % interval)" : "");
  if (!(miss <= t_family))
    g_error ("%s: fitted %.6g misses the true %.6g by %.2f standard errors (> %.2f)", what,
             fitted, truth, miss, t_family);
}

static double
true_seek (const DiskCase *c, double d, gboolean with_overhead)
{
  return c->a_rot_ns + c->b_ns * sqrt (d) + c->c_ns * d + (with_overhead ? c->overhead_ns : 0);
}

static void
test_recover (gconstpointer data)
{
  const DiskCase *c = data;
  g_autoptr(GArray) rqs = generate (c);
  static const double fractions[] = { 0.01, 1.0 / 3.0, 0.9 };
  FitModelChoice m;
  const FitDiskFit *d = &m.disk;
  guint p;

  choose (rqs, FIT_MODEL_AUTO, &p, &m);
  g_assert_cmpuint (p, ==, 1);
  g_assert_true (d->fitted);
  g_assert_true (m.compared);
  g_assert_cmpuint (d->overhead_separated, ==, c->sequential_share > 0);
  g_assert_cmpuint (d->writes_separate, ==, c->write_share > 0);
  if (d->overhead_separated)
    {
      assert_within (d, "overhead_ns", d->overhead_ns, d->overhead_se_ns, c->overhead_ns);
      assert_within (d, "a + rotation ns", d->seek_a_rot_ns, d->seek_a_rot_se_ns, c->a_rot_ns);
    }
  else
    assert_within (d, "overhead + a + rotation ns", d->seek_a_rot_ns, d->seek_a_rot_se_ns,
                   c->overhead_ns + c->a_rot_ns);
  if (d->writes_separate)
    assert_within (d, "write extra ns", d->write_extra_ns, d->write_extra_se_ns,
                   c->write_extra_ns);
  assert_within (d, "b ns/sqrt(sector)", d->seek_b_ns, d->seek_b_se_ns, c->b_ns);
  assert_within (d, "c ns/sector", d->seek_c_ns, d->seek_c_se_ns, c->c_ns);
  assert_within (d, "ns per byte", d->ns_per_byte, d->ns_per_byte_se, c->ns_per_byte);
  for (guint k = 0; k < G_N_ELEMENTS (fractions); k++)
    {
      double dist = fractions[k] * (double) STROKE_SECTORS, ci;
      double fitted = fit_disk_seek_ns (d, dist, &ci);
      g_autofree char *what = g_strdup_printf ("seek at %.3g of the stroke", fractions[k]);

      assert_within (d, what, fitted, ci / d->t95, true_seek (c, dist, !d->overhead_separated));
    }
  g_test_message ("held out %" G_GUINT64_FORMAT ": MAE fixed %.1fus disk %.1fus, t %.2f; "
                  "R^2 fixed %.4f disk %.4f; chosen %s", m.n_held_out,
                  m.fixed_held_out_mae_ns / 1e3, m.disk_held_out_mae_ns / 1e3, m.mae_gain_t,
                  m.fixed_r2, m.disk_r2, fit_model_kind_name (m.chosen));
  g_assert_cmpuint (m.n_held_out, ==, (N_REQUESTS - 1) / 5);
  g_assert_cmpint (m.chosen, ==, c->expect);
}

/* --model forces a kind whatever the held-out figures say. */
typedef struct {
  const char  *name;
  const DiskCase *device;
  FitModelKind requested;
} ForceCase;

static const ForceCase force_cases[] = {
  { "fixed-on-seek-bound", &disk_cases[0], FIT_MODEL_FIXED },
  { "disk-on-fixed-rate",  &disk_cases[3], FIT_MODEL_DISK },
};

static void
test_force (gconstpointer data)
{
  const ForceCase *f = data;
  g_autoptr(GArray) rqs = generate (f->device);
  FitModelChoice m;
  guint p;

  choose (rqs, f->requested, &p, &m);
  g_assert_true (m.compared);
  g_assert_cmpint (m.chosen, ==, f->requested);
  g_assert_cmpint (m.requested, ==, f->requested);
  g_assert_nonnull (strstr (m.reason, "forced"));
}

/* No head to move on a device that serves several at once: never disk. */
static void
test_parallel_not_disk (void)
{
  g_autoptr(GArray) rqs = generate (&disk_cases[0]);
  g_autofree double *service = g_new (double, rqs->len);
  FitDeviceQueue queue;
  FitModelChoice m;

  fit_device_queue ((const TraceRequest *) rqs->data, rqs->len, &queue, service);
  fit_model_choose ((const TraceRequest *) rqs->data, service, rqs->len, 2, STROKE_SECTORS,
                    FIT_MODEL_DISK, &m);
  fit_device_queue_clear (&queue);
  g_assert_false (m.disk.fitted);
  g_assert_nonnull (m.disk.why_not);
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_FIXED);
}

static void
test_parse (void)
{
  FitModelKind k = FIT_MODEL_AUTO;

  g_assert_true (fit_model_kind_parse ("disk", &k));
  g_assert_cmpint (k, ==, FIT_MODEL_DISK);
  g_assert_true (fit_model_kind_parse ("fixed", &k));
  g_assert_cmpint (k, ==, FIT_MODEL_FIXED);
  g_assert_true (fit_model_kind_parse ("auto", &k));
  g_assert_cmpint (k, ==, FIT_MODEL_AUTO);
  g_assert_true (fit_model_kind_parse ("ssd", &k));
  g_assert_cmpint (k, ==, FIT_MODEL_SSD);
  g_assert_false (fit_model_kind_parse ("tape", &k));
  g_assert_false (fit_model_kind_parse (NULL, &k));
}

/* Through fit_arrays: the choice reaches the JSON and the scenario, which
 * keeps kind = fixed and says why. */
static void
test_outputs (void)
{
  g_autoptr(GArray) rqs = generate (&disk_cases[0]);
  g_autoptr(GError) error = NULL;
  FitOptions opts = { .model = FIT_MODEL_AUTO };
  g_autoptr(FitResult) r = fit_arrays ("synthetic", NULL, 0, (const TraceRequest *) rqs->data,
                                       rqs->len, NULL, NULL, "1099511627776", &opts, &error);
  g_autofree char *json = NULL, *ini = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *model;

  g_assert_no_error (error);
  g_assert_cmpint (r->model.chosen, ==, FIT_MODEL_DISK);
  json = fit_result_to_json (r);
  root = json_from_string (json, &error);
  g_assert_no_error (error);
  model = json_object_get_object_member (
    json_object_get_object_member (json_node_get_object (root), "device"), "model");
  g_assert_cmpstr (json_object_get_string_member (model, "chosen"), ==, "disk");
  g_assert_cmpstr (json_object_get_string_member (model, "requested"), ==, "auto");
  g_assert_cmpstr (json_object_get_string_member (model, "scenario_kind"), ==, "fixed");
  g_assert_true (json_object_get_double_member (model, "disk_held_out_mae_us")
                 < json_object_get_double_member (model, "fixed_held_out_mae_us"));
  g_assert_true (json_object_get_boolean_member (
    json_object_get_object_member (model, "disk"), "fitted"));
  ini = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (ini, "kind = fixed\n"));
  g_assert_nonnull (strstr (ini, "# model kind disk (asked: auto)"));
  g_assert_nonnull (strstr (ini, "is not written as kind = disk"));
}

/* ---- Requests served by the simulator's own disk model ----------------- */

/* disk-7200-sata.ini through dev_model_load, as the scenario loader does. */
static DevModel *
load_sata_disk (void)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) dirs = dev_model_default_search_dirs ();
  DevModel *dev;

  g_assert_true (g_key_file_load_from_data (kf, "[device hda]\nmodel = disk-7200-sata\n", -1,
                                            G_KEY_FILE_NONE, NULL));
  dev = dev_model_load ("hda", kf, "device hda", (const char *const *) dirs, NULL, &error);
  g_assert_no_error (error);
  return dev;
}

/* N_REQUESTS reads served one at a time by @dev, 40 % sequential, each
 * dispatched a uniform 0 .. 1 ms after the previous completion (so the
 * platter's angle at each start varies). */
static GArray *
generate_simulated (DevModel *dev)
{
  GArray *rqs = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  guint64 stroke = dev->capacity_bytes / 512, prev_end = 0;
  gint64 now = 0;

  gsl_rng_set (rng, 41);
  for (guint k = 0; k < N_REQUESTS; k++)
    {
      TraceRequest rq = { .dev_major = 8, .op = TRACE_OP_READ, .in_flight_at_issue = 1 };

      rq.nr_sectors = gen_sectors (rng);
      if (k > 0 && gsl_rng_uniform (rng) < 0.4 && prev_end + rq.nr_sectors < stroke)
        rq.sector = prev_end;
      else
        rq.sector = (guint64) (gsl_rng_uniform (rng) * (double) (stroke - 256)) & ~7ull;
      now += (gint64) llround (gsl_rng_uniform (rng) * THINK_MAX_NS);
      rq.issue_ns = now;
      rq.complete_ns = now + dev_model_service_time (dev, SIM_OP_READ, rq.sector,
                                                     rq.nr_sectors, now);
      now = rq.complete_ns;
      prev_end = rq.sector + rq.nr_sectors;
      g_array_append_val (rqs, rq);
    }
  gsl_rng_free (rng);
  return rqs;
}

static gboolean
skip_without_models (void)
{
  if (g_getenv ("IOSIM_MODELS_DIR") != NULL)
    return FALSE;
  g_test_skip ("IOSIM_MODELS_DIR is not set (run under meson test)");
  return TRUE;
}

static void
test_simulated_disk (void)
{
  g_autoptr(DevModel) dev = NULL;
  g_autoptr(GArray) rqs = NULL;
  DevDiskGeometry geo;
  FitModelChoice m;
  guint64 stroke, third;
  double fitted, ci, model_seek, excess;
  guint p;

  if (skip_without_models ())
    return;
  dev = load_sata_disk ();
  dev_disk_get_geometry (dev, &geo);
  stroke = dev->capacity_bytes / 512;
  rqs = generate_simulated (dev);
  {
    g_autofree double *service = g_new (double, rqs->len);
    FitDeviceQueue queue;

    fit_device_queue ((const TraceRequest *) rqs->data, rqs->len, &queue, service);
    p = queue.parallelism;
    fit_model_choose ((const TraceRequest *) rqs->data, service, rqs->len, p, stroke,
                      FIT_MODEL_AUTO, &m);
    fit_device_queue_clear (&queue);
  }
  g_assert_cmpuint (p, ==, 1);
  g_assert_cmpint (m.chosen, ==, FIT_MODEL_DISK);
  g_assert_true (m.disk.overhead_separated);
  third = stroke / 3;
  fitted = fit_disk_seek_ns (&m.disk, (double) third, &ci);
  model_seek = dev_disk_seek_ns (dev, dev_disk_sector_cylinder (dev, third));
  excess = fitted - model_seek;
  g_test_message ("a third of the stroke: fitted %.1fus +- %.1fus, model seek %.1fus, "
                  "excess %.1fus (one revolution %.1fus); held-out MAE fixed %.1fus, "
                  "disk %.1fus", fitted / 1e3, ci / 1e3, model_seek / 1e3, excess / 1e3,
                  geo.period_ns / 1e3, m.fixed_held_out_mae_ns / 1e3,
                  m.disk_held_out_mae_ns / 1e3);
  /* The fitted curve holds the mean rotational wait of a request that
   * moved, which the model adds on top of its seek: at least nothing, at
   * most one revolution. */
  g_assert_cmpfloat (excess, >=, 0.0);
  g_assert_cmpfloat (excess, <=, (double) geo.period_ns);
}

/* The same requests through fit_arrays: the scenario gets kind = disk, its
 * device loads as the scenario loader loads it, and its seek curve plus
 * half its revolution is the fitted one within the fit's 95 % half-width
 * at a third of the stroke. */
static void
test_simulated_scenario (void)
{
  g_autoptr(DevModel) truth = NULL, written = NULL;
  g_autoptr(GArray) rqs = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = NULL;
  g_autofree char *ini = NULL, *cap = NULL;
  FitOptions opts = { .model = FIT_MODEL_AUTO };
  DevDiskGeometry geo;
  guint64 third_cyl;
  double fitted, ci, got;

  if (skip_without_models ())
    return;
  truth = load_sata_disk ();
  rqs = generate_simulated (truth);
  cap = g_strdup_printf ("%" G_GUINT64_FORMAT, truth->capacity_bytes);
  r = fit_arrays ("simulated", NULL, 0, (const TraceRequest *) rqs->data, rqs->len, NULL, NULL,
                  cap, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (r->model.chosen, ==, FIT_MODEL_DISK);
  ini = fit_scenario_to_data (r);
  g_test_message ("%s", ini);
  g_assert_nonnull (strstr (ini, "kind = disk\n"));
  g_assert_null (strstr (ini, "kind = fixed\n"));
  written = fit_kind_test_load_device (r, ini);
  g_assert_cmpstr (written->ops->name, ==, "disk");
  dev_disk_get_geometry (written, &geo);
  third_cyl = geo.cylinders / 3;
  fitted = fit_disk_seek_ns (&r->model.disk,
                             (double) third_cyl * (double) (truth->capacity_bytes / 512)
                               / (double) geo.cylinders, &ci);
  got = dev_disk_seek_ns (written, third_cyl) + geo.period_ns / 2.0;
  g_test_message ("written model at a third of the stroke: %.1fus + half a turn; fitted "
                  "%.1fus +- %.1fus", (got - geo.period_ns / 2.0) / 1e3, fitted / 1e3, ci / 1e3);
  g_assert_cmpfloat (fabs (got - fitted), <=, ci);

  /* The scenario loader itself takes it (a process added: the fit had no
   * bios, so the scenario has none) and a run completes on it. */
  {
    g_autofree char *full = g_strconcat (ini, "\n[process p]\nop = read\npattern = random\n"
                                         "io = direct\nbs = 4KiB\nsize = 4MiB\n", NULL);
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
  for (gsize i = 0; i < G_N_ELEMENTS (disk_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-disk/recover/%s", disk_cases[i].name);
      g_test_add_data_func (path, &disk_cases[i], test_recover);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (force_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-disk/force/%s", force_cases[i].name);
      g_test_add_data_func (path, &force_cases[i], test_force);
    }
  g_test_add_func ("/fit-disk/parallel-not-disk", test_parallel_not_disk);
  g_test_add_func ("/fit-disk/parse", test_parse);
  g_test_add_func ("/fit-disk/outputs", test_outputs);
  g_test_add_func ("/fit-disk/simulated-disk", test_simulated_disk);
  g_test_add_func ("/fit-disk/simulated-scenario", test_simulated_scenario);
  return g_test_run ();
}
