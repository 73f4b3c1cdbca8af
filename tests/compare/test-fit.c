/* test-fit.c — models/fit on synthetic requests and I/Os: least-squares
 * recovery of overhead and bandwidth, waiting inside the device removed,
 * the single-size case, closed/open loop detection, and the scenario file
 * loaded back with GKeyFile, and the quantiles of the residual overhead
 * that the fixed model draws from.  Noise comes from a seeded gsl_rng. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit.h"
#include "models/fit/fit-private.h"
#include "models/scenario.h"
#include "models/sched/sched.h"
#include "sim/sim-units.h"
#include "traces/trace-results.h"

#define OVERHEAD_NS   50000.0   /* 50 us */
#define NS_PER_BYTE   5.0       /* 200 MB/s */
#define NOISE_NS      2000.0    /* sigma of the Gaussian noise, 2 us */

static TraceRequest
make_request (TraceOp op, guint32 nr_sectors, gint64 issue_ns, gint64 d2c_ns,
              guint32 in_flight)
{
  TraceRequest rq = { 0 };

  rq.dev_major = 7;
  rq.dev_minor = 0;
  rq.op = op;
  rq.sector = 2048;
  rq.nr_sectors = nr_sectors;
  rq.issue_ns = issue_ns;
  rq.complete_ns = issue_ns + d2c_ns;
  rq.in_flight_at_issue = in_flight;
  return rq;
}

/* @n isolated requests of random sizes from 4 KiB to 128 KiB with D2C =
 * overhead + bytes * ns_per_byte + N(0, NOISE_NS). */
static GArray *
make_linear_requests (gsize n, TraceOp op, unsigned long seed)
{
  static const guint32 sectors[] = { 8, 16, 32, 64, 128, 256 };
  GArray *a = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gint64 t = 0;

  gsl_rng_set (rng, seed);
  for (gsize i = 0; i < n; i++)
    {
      guint32 s = sectors[gsl_rng_uniform_int (rng, G_N_ELEMENTS (sectors))];
      double d2c = OVERHEAD_NS + NS_PER_BYTE * s * 512 + gsl_ran_gaussian (rng, NOISE_NS);
      TraceRequest rq = make_request (op, s, t, (gint64) llround (d2c), 1);

      g_array_append_val (a, rq);
      t = rq.complete_ns + 10000;
    }
  gsl_rng_free (rng);
  return a;
}

/* The standard errors OLS would have with the true sigma, from the x values. */
static void
true_standard_errors (GArray *a, double *se_intercept, double *se_slope)
{
  double n = a->len, xbar = 0, sxx = 0;

  for (guint i = 0; i < a->len; i++)
    xbar += g_array_index (a, TraceRequest, i).nr_sectors * 512.0;
  xbar /= n;
  for (guint i = 0; i < a->len; i++)
    {
      double d = g_array_index (a, TraceRequest, i).nr_sectors * 512.0 - xbar;
      sxx += d * d;
    }
  *se_slope = NOISE_NS / sqrt (sxx);
  *se_intercept = NOISE_NS * sqrt (1.0 / n + xbar * xbar / sxx);
}

static void
test_ols_recovery (void)
{
  g_autoptr(GArray) a = make_linear_requests (600, TRACE_OP_READ, 42);
  FitDeviceOp f;
  double se_int, se_slope;

  fit_device_op ((const TraceRequest *) a->data, a->len, TRACE_OP_READ, &f);
  true_standard_errors (a, &se_int, &se_slope);

  g_assert_true (f.fitted);
  g_assert_true (f.bandwidth_identified);
  g_assert_cmpuint (f.n_inconsistent, ==, 0);
  g_assert_cmpuint (f.n_used, ==, 600);
  g_assert_cmpuint (f.n_sizes, ==, 6);
  /* Unbiased estimates: within 4 standard errors (a 1-in-15,000 miss). */
  g_assert_cmpfloat (fabs (f.overhead_ns - OVERHEAD_NS), <, 4 * se_int);
  g_assert_cmpfloat (fabs (f.ns_per_byte - NS_PER_BYTE), <, 4 * se_slope);
  g_assert_cmpfloat (fabs (f.bandwidth_bytes_per_s - 1e9 / NS_PER_BYTE), <,
                     1e9 / NS_PER_BYTE * 4 * se_slope / NS_PER_BYTE * 1.01);
  /* sigma estimated from 600 residuals: relative sd ~ 1/sqrt(2n) = 2.9%,
   * so 15% is five of them.  The reported standard errors scale with it. */
  g_assert_cmpfloat (fabs (f.residual_rms_ns - NOISE_NS), <, 0.15 * NOISE_NS);
  g_assert_cmpfloat (fabs (f.overhead_se_ns - se_int), <, 0.15 * se_int);
  g_assert_cmpfloat (fabs (f.ns_per_byte_se - se_slope), <, 0.15 * se_slope);
  /* Transfer times span 20..655 us against 2 us of noise. */
  g_assert_cmpfloat (f.r2, >, 0.999);
  g_assert_cmpfloat (f.r2, <=, 1.0);
}

/* Requests dispatched while others were in flight wait inside the device:
 * 300 of them dispatched 1 us apart to a serial device queue up (D2C grows
 * to hundreds of ms), but their rebuilt service times C - max(D, previous
 * C) are the device's, so they neither bias the fit nor are left out. */
static void
test_waiting_removed (void)
{
  g_autoptr(GArray) a = make_linear_requests (100, TRACE_OP_READ, 7);
  FitDeviceOp f;
  double se_int, se_slope;
  gint64 prev_c = 0;

  true_standard_errors (a, &se_int, &se_slope);
  for (int i = 0; i < 300; i++)
    {
      gint64 d = 1000000000 + i * 1000;
      gint64 service = (gint64) (OVERHEAD_NS + NS_PER_BYTE * (4096 << (i % 6)));
      TraceRequest rq = make_request (TRACE_OP_READ, 8 << (i % 6), d, 0, 1);

      rq.complete_ns = MAX (d, prev_c) + service;
      prev_c = rq.complete_ns;
      g_array_append_val (a, rq);
    }
  fit_device_op ((const TraceRequest *) a->data, a->len, TRACE_OP_READ, &f);
  g_assert_cmpuint (f.n_total, ==, 400);
  g_assert_cmpuint (f.n_used, ==, 400);
  g_assert_cmpuint (f.n_inconsistent, ==, 0);
  g_assert_cmpfloat (fabs (f.overhead_ns - OVERHEAD_NS), <, 4 * se_int);
  g_assert_cmpfloat (fabs (f.ns_per_byte - NS_PER_BYTE), <, 4 * se_slope);
  /* What fitting D2C would have taken in. */
  g_assert_cmpfloat (f.mean_d2c_ns, >, f.mean_service_ns + 1e6);
}

static void
test_single_size (void)
{
  g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *scenario = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *out;
  double sum = 0;

  for (int i = 0; i < 30; i++)
    {
      TraceRequest rq = make_request (TRACE_OP_READ, 8, i * 1000000, 60000 + 100 * (i % 7), 1);
      g_array_append_val (a, rq);
      sum += 60000 + 100 * (i % 7);
    }
  r = fit_arrays ("/traces/one-size.txt", NULL, 0, (const TraceRequest *) a->data,
                  a->len, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (r->read.fitted);
  g_assert_false (r->read.bandwidth_identified);
  g_assert_cmpuint (r->read.n_sizes, ==, 1);
  g_assert_cmpfloat_with_epsilon (r->read.overhead_ns, sum / 30, 1e-6);
  g_assert_true (isnan (r->read.r2));
  g_assert_false (r->write.fitted);

  scenario = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (scenario, "\noverhead = "));
  /* The transfer is inside the overhead: the bandwidth must add nothing. */
  g_assert_nonnull (strstr (scenario, "\nbandwidth = 1000000MB/s\n"));
  g_assert_nonnull (strstr (scenario, "bandwidth not identifiable"));

  out = open_memstream (&buf, &len);
  fit_print_report (r, out);
  fclose (out);
  g_assert_nonnull (strstr (buf, "read: bandwidth is not identifiable from this trace"));
  g_assert_nonnull (strstr (buf, "one request size"));
  free (buf);
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* The residual overheads of @op's isolated requests of @a after the fit
 * @f, clamped at 0, sorted; *@n_negative counts those that were clamped. */
static GArray *
sorted_residuals (GArray *a, TraceOp op, const FitDeviceOp *f, guint *n_negative)
{
  GArray *r = g_array_new (FALSE, FALSE, sizeof (double));

  *n_negative = 0;
  for (guint i = 0; i < a->len; i++)
    {
      const TraceRequest *rq = &g_array_index (a, TraceRequest, i);
      double v;

      if (rq->op != op || rq->in_flight_at_issue != 1)
        continue;
      v = (double) (rq->complete_ns - rq->issue_ns) - rq->nr_sectors * 512.0 * f->ns_per_byte;
      *n_negative += v < 0;
      v = MAX (v, 0.0);
      g_array_append_val (r, v);
    }
  g_array_sort (r, cmp_double);
  return r;
}

/* Order-statistic bounds of every quantile at its probability, exact
 * ends, exact median. */
static void
assert_quantiles_of (const FitDeviceOp *f, GArray *sorted)
{
  const double *v = (const double *) sorted->data;
  guint n = sorted->len;

  g_assert_cmpuint (f->n_quantiles, >=, 3);
  g_assert_cmpfloat (f->quantile_p[0], ==, 0.0);
  g_assert_cmpfloat (f->quantile_p[f->n_quantiles - 1], ==, 1.0);
  g_assert_cmpfloat (f->quantile_p[FIT_N_QUANTILES / 2], ==, 0.5);
  g_assert_cmpfloat (f->overhead_quantiles_ns[0], ==, v[0]);
  g_assert_cmpfloat (f->overhead_quantiles_ns[f->n_quantiles - 1], ==, v[n - 1]);
  /* The last step, to the maximum, holds one request. */
  g_assert_cmpfloat (f->overhead_quantiles_ns[f->n_quantiles - 2], ==, v[n - 2]);
  for (guint k = 0; k < f->n_quantiles; k++)
    {
      double h = f->quantile_p[k] * (n - 1);

      g_assert_cmpfloat (f->overhead_quantiles_ns[k], >=, v[(guint) floor (h)]);
      g_assert_cmpfloat (f->overhead_quantiles_ns[k], <=, v[MIN ((guint) ceil (h), n - 1)]);
      if (k > 0)
        {
          g_assert_cmpfloat (f->quantile_p[k], >, f->quantile_p[k - 1]);
          g_assert_cmpfloat (f->overhead_quantiles_ns[k], >=, f->overhead_quantiles_ns[k - 1]);
        }
    }
  if (n % 2 == 1)
    g_assert_cmpfloat (f->overhead_quantiles_ns[FIT_N_QUANTILES / 2], ==, v[n / 2]);
  else
    g_assert_cmpfloat (f->overhead_quantiles_ns[FIT_N_QUANTILES / 2], ==,
                       v[n / 2 - 1] + 0.5 * (v[n / 2] - v[n / 2 - 1]));
}

/* The written list: @n times with units, non-decreasing, in ns. */
static void
parse_written_quantiles (GKeyFile *kf, const char *key, guint n, SimTime *out_ns)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_key_file_get_string (kf, "device dev7_0", key, &error);
  g_auto(GStrv) items = NULL;

  g_assert_no_error (error);
  items = g_strsplit (text, ",", -1);
  g_assert_cmpuint (g_strv_length (items), ==, n);
  for (guint k = 0; k < n; k++)
    {
      g_assert_true (g_str_has_suffix (items[k], "us"));
      g_assert_true (sim_parse_time_ns (items[k], 0, &out_ns[k], &error));
      g_assert_no_error (error);
      if (k > 0)
        g_assert_cmpint (out_ns[k], >=, out_ns[k - 1]);
    }
}

/* Place the requests of @a back to back in array order, 10 us apart,
 * keeping each one's D2C: a serial device that is never kept waiting, so
 * that every service time is the D2C. */
static void
respace_serial (GArray *a)
{
  gint64 t = 0;

  for (guint i = 0; i < a->len; i++)
    {
      TraceRequest *rq = &g_array_index (a, TraceRequest, i);
      gint64 d2c = rq->complete_ns - rq->issue_ns;

      rq->issue_ns = t;
      rq->complete_ns = t + d2c;
      t = rq->complete_ns + 10000;
    }
}

/* Skewed residuals (exponential) around the line, plus a few requests far
 * below it whose residual is clamped to 0.  Odd counts, so that the median
 * is one order statistic. */
static void
test_overhead_quantiles (void)
{
  g_autoptr(GArray) a = make_linear_requests (201, TRACE_OP_READ, 5);
  g_autoptr(GArray) wr = make_linear_requests (51, TRACE_OP_WRITE, 6);
  g_autoptr(GArray) res_r = NULL, res_w = NULL;
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(DevModel) dev = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL, *json = NULL, *bw_text = NULL;
  double bw;
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  const char *const ignore[] = { "sched", "devno", "via", "loop_max_io", NULL };
  SimTime written[FIT_MAX_QUANTILES], wwritten[FIT_MAX_QUANTILES];
  JsonArray *jq;
  guint n_negative;

  gsl_rng_set (rng, 99);
  for (guint i = 0; i < a->len; i++)
    {
      TraceRequest *rq = &g_array_index (a, TraceRequest, i);

      rq->complete_ns += (gint64) llround (gsl_ran_exponential (rng, 30000.0));
      if (i % 50 == 0)
        rq->complete_ns = rq->issue_ns + 1000;
    }
  gsl_rng_free (rng);
  g_array_append_vals (a, wr->data, wr->len);
  respace_serial (a);
  r = fit_arrays ("/x", NULL, 0, (const TraceRequest *) a->data, a->len,
                  "/dev/loop0", NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (r->read.bandwidth_identified && r->write.bandwidth_identified);

  res_r = sorted_residuals (a, TRACE_OP_READ, &r->read, &n_negative);
  g_assert_cmpuint (res_r->len, ==, 201);
  g_assert_cmpuint (n_negative, >=, 5);
  g_assert_cmpfloat (r->read.overhead_quantiles_ns[0], ==, 0.0);
  assert_quantiles_of (&r->read, res_r);
  res_w = sorted_residuals (a, TRACE_OP_WRITE, &r->write, &n_negative);
  assert_quantiles_of (&r->write, res_w);
  /* Skewed: the median lies below the mean residual of OLS (zero). */
  g_assert_cmpfloat (r->read.overhead_quantiles_ns[FIT_N_QUANTILES / 2], <, r->read.overhead_ns);

  text = fit_scenario_to_data (r);
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  parse_written_quantiles (kf, "overhead_quantiles", r->read.n_quantiles, written);
  parse_written_quantiles (kf, "write_overhead_quantiles", r->write.n_quantiles, wwritten);
  /* To the written precision (1 ns), the median is the residuals'. */
  g_assert_cmpint (written[FIT_N_QUANTILES / 2], ==,
                   llround (g_array_index (res_r, double, res_r->len / 2)));
  g_assert_cmpint (wwritten[FIT_N_QUANTILES / 2], ==,
                   llround (g_array_index (res_w, double, res_w->len / 2)));
  g_assert_nonnull (strstr (text, "quantiles of the per-request overhead (service minus"));
  g_assert_nonnull (strstr (text, "\noverhead_quantile_p = 0,0.05,"));
  g_assert_nonnull (strstr (text, "\nwrite_overhead_quantile_p = 0,0.05,"));
  g_assert_nonnull (strstr (text, "ignores write_overhead"));

  /* The device group builds a fixed model; without a random stream it pays
   * the median overhead. */
  dev = dev_model_new_from_keyfile ("dev7_0", kf, "device dev7_0", ignore, &error);
  g_assert_no_error (error);
  bw_text = g_key_file_get_string (kf, "device dev7_0", "bandwidth", &error);
  g_assert_true (sim_parse_rate_bytes_per_s (bw_text, &bw, &error));
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0), ==,
                   written[FIT_N_QUANTILES / 2] + llround (4096 * (1e9 / bw)));

  json = fit_result_to_json (r);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  jq = json_object_get_array_member (
         json_object_get_object_member (
           json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                          "device"), "read"), "overhead_quantiles_us");
  g_assert_cmpuint (json_array_get_length (jq), ==, r->read.n_quantiles);
  for (guint k = 0; k < r->read.n_quantiles; k++)
    g_assert_cmpfloat_with_epsilon (json_array_get_double_element (jq, k),
                                    r->read.overhead_quantiles_ns[k] / 1e3, 1e-9);
}

/* One request size: the quantiles are those of D2C itself (even count:
 * the median is the mean of the two middle values). */
static void
test_overhead_quantiles_single_size (void)
{
  g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  g_autoptr(GArray) res = NULL;
  FitDeviceOp f;
  guint n_negative;

  for (int i = 0; i < 30; i++)
    {
      TraceRequest rq = make_request (TRACE_OP_READ, 8, i * 1000000, 60000 + 100 * ((i * 7) % 11), 1);
      g_array_append_val (a, rq);
    }
  fit_device_op ((const TraceRequest *) a->data, a->len, TRACE_OP_READ, &f);
  g_assert_false (f.bandwidth_identified);
  res = sorted_residuals (a, TRACE_OP_READ, &f, &n_negative);
  g_assert_cmpuint (n_negative, ==, 0);
  assert_quantiles_of (&f, res);
  g_assert_cmpfloat (f.overhead_quantiles_ns[0], ==, 60000.0);
  g_assert_cmpfloat (f.overhead_quantiles_ns[f.n_quantiles - 1], ==, 61000.0);
}

static TraceIo
make_io (guint32 pid, const char *comm, gint64 queue_ns, gint64 complete_ns)
{
  TraceIo io = { 0 };

  io.dev_major = 7;
  io.pid = pid;
  g_strlcpy (io.comm, comm, sizeof io.comm);
  io.op = TRACE_OP_READ;
  io.sector = 0;
  io.nr_sectors = 8;
  io.queue_ns = queue_ns;
  io.issue_ns = queue_ns;
  io.complete_ns = complete_ns;
  return io;
}

static int
cmp_io_queue (gconstpointer a, gconstpointer b)
{
  const TraceIo *x = a, *y = b;

  if (x->queue_ns != y->queue_ns)
    return x->queue_ns < y->queue_ns ? -1 : 1;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* pid 10 (dd) waits for each I/O, then thinks 10, 20, ..., 200 us; pid 20
 * (fio) queues every 100 us I/Os that take 500 us; pid 30 has no comm. */
static GArray *
make_streams (void)
{
  GArray *ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  gint64 t = 0;

  for (int i = 0; i < 21; i++)
    {
      TraceIo io = make_io (10, "dd", t, t + 300000);

      g_array_append_val (ios, io);
      t = io.complete_ns + 10000 * (i + 1);
    }
  for (int i = 0; i < 40; i++)
    {
      TraceIo io = make_io (20, "fio worker", 5000 + i * 100000, 5000 + i * 100000 + 500000);
      g_array_append_val (ios, io);
    }
  {
    TraceIo io = make_io (30, "", 1, 2);
    g_array_append_val (ios, io);
  }
  g_array_sort (ios, cmp_io_queue);
  return ios;
}

/* Flushes kept in sight: pid 40 reads, writes with FUA and with preflush,
 * then fsyncs (an empty preflush bio and a REQ_OP_FLUSH request); pid 50
 * only syncs.  The trace-driven process cannot issue a flush, so each is
 * counted as dropped with the reason in the scenario, report and JSON; the
 * flagged data writes stay (as plain writes); pid 50 has nothing to issue
 * and is left out of the scenario, said so; the measured CSV marks the
 * flushes op = flush. */
static void
test_flushes_dropped (void)
{
  static const struct { guint32 pid; TraceOp op; guint32 rwbs, nr_sectors; } spec[] = {
    { 40, TRACE_OP_READ, TRACE_RWBS_READ, 8 },
    { 40, TRACE_OP_READ, TRACE_RWBS_READ, 8 },
    { 40, TRACE_OP_READ, TRACE_RWBS_READ | TRACE_RWBS_SYNC, 8 },
    { 40, TRACE_OP_WRITE, TRACE_RWBS_WRITE | TRACE_RWBS_FUA | TRACE_RWBS_SYNC, 8 },
    { 40, TRACE_OP_WRITE, TRACE_RWBS_FLUSH | TRACE_RWBS_WRITE, 16 },
    { 40, TRACE_OP_WRITE, TRACE_RWBS_FLUSH | TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 0 },
    { 40, TRACE_OP_FLUSH, TRACE_RWBS_FLUSH, 0 },
    { 50, TRACE_OP_WRITE, TRACE_RWBS_FLUSH | TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 0 },
  };
  g_autoptr(GArray) rq = make_linear_requests (30, TRACE_OP_READ, 11);
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL, *json = NULL, *report = NULL, *csv_text = NULL;
  g_autofree char *csv = g_build_filename (g_get_user_cache_dir (), "flush-measured.csv", NULL);
  g_auto(GStrv) groups = NULL;
  const FitProcess *db, *sync;
  JsonObject *flushes;
  gsize report_len = 0;
  FILE *mem;
  guint n_flush_rows = 0;

  for (guint i = 0; i < G_N_ELEMENTS (spec); i++)
    {
      TraceIo io = make_io (spec[i].pid, spec[i].pid == 40 ? "db" : "sync",
                            (gint64) i * 100000, (gint64) i * 100000 + 50000);

      io.op = spec[i].op;
      io.rwbs = spec[i].rwbs;
      io.nr_sectors = spec[i].nr_sectors;
      io.sector = spec[i].nr_sectors > 0 ? 2048 + i * 64 : 0;
      g_array_append_val (ios, io);
    }
  r = fit_arrays ("/x", (const TraceIo *) ios->data, ios->len,
                  (const TraceRequest *) rq->data, rq->len, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  db = g_ptr_array_index (r->processes, 0);
  sync = g_ptr_array_index (r->processes, 1);
  g_assert_cmpuint (db->simulated_ios, ==, 5);
  g_assert_cmpuint (db->flushes, ==, 2);
  g_assert_cmpuint (db->fua_writes, ==, 2);
  g_assert_cmpuint (sync->simulated_ios, ==, 0);
  g_assert_cmpuint (sync->flushes, ==, 1);

  text = fit_scenario_to_data (r);
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  groups = g_key_file_get_groups (kf, NULL);
  g_assert_cmpuint (g_strv_length (groups), ==, 3);
  g_assert_cmpstr (groups[2], ==, "process db-40");
  g_assert_nonnull (strstr (text, "# flushes dropped: 2 (" FIT_FLUSH_DROPPED_REASON ")\n"
                                  "# 2 writes carry FUA or preflush; simulated as plain writes\n"
                                  "[process db-40]\n"));
  g_assert_nonnull (strstr (text, "# process sync-50 (pid 50): no read or write with data in "
                                  "the trace, left out of the scenario\n"
                                  "# flushes dropped: 1 ("));

  mem = open_memstream (&report, &report_len);
  fit_print_report (r, mem);
  g_assert_cmpint (fclose (mem), ==, 0);
  g_assert_nonnull (strstr (report, "\nflushes dropped: 3 (" FIT_FLUSH_DROPPED_REASON ")\n"));
  g_assert_nonnull (strstr (report, "\nnote: sync-50 has no read or write with data"));

  json = fit_result_to_json (r);
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  flushes = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                           "flushes");
  g_assert_cmpint (json_object_get_int_member (flushes, "dropped"), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (flushes, "reason"), ==, FIT_FLUSH_DROPPED_REASON);
  g_assert_cmpint (json_object_get_int_member (flushes, "fua_or_preflush_writes"), ==, 2);

  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  g_assert_true (fit_write_measured_results (r, csv, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (csv, &csv_text, NULL, NULL));
  for (const char *p = csv_text; (p = strstr (p, ",flush,")) != NULL; p++)
    n_flush_rows++;
  g_assert_cmpuint (n_flush_rows, ==, 3);
}

static void
test_closed_open (void)
{
  g_autoptr(GArray) ios = make_streams ();
  g_autoptr(GPtrArray) procs = fit_processes ((const TraceIo *) ios->data, ios->len);
  const FitProcess *dd, *fio, *anon;

  g_assert_cmpuint (procs->len, ==, 3);
  dd = g_ptr_array_index (procs, 0);
  fio = g_ptr_array_index (procs, 1);
  anon = g_ptr_array_index (procs, 2);

  g_assert_cmpstr (dd->name, ==, "dd-10");
  g_assert_cmpuint (dd->ios, ==, 21);
  g_assert_cmpuint (dd->pairs, ==, 20);
  g_assert_cmpuint (dd->dependent_pairs, ==, 20);
  g_assert_true (dd->closed_loop);
  /* Think times 10..200 us: mean 105, median 105, p95 at h = 18.05. */
  g_assert_cmpfloat_with_epsilon (dd->think_mean_ns, 105000, 1e-6);
  g_assert_cmpfloat_with_epsilon (dd->think_p50_ns, 105000, 1e-6);
  g_assert_cmpfloat_with_epsilon (dd->think_p95_ns, 190000 + 0.05 * 10000, 1e-6);
  g_assert_cmpuint (dd->bytes, ==, 21 * 4096);

  g_assert_cmpstr (fio->name, ==, "fio_worker-20");
  g_assert_cmpuint (fio->pairs, ==, 39);
  g_assert_cmpuint (fio->dependent_pairs, ==, 0);
  g_assert_false (fio->closed_loop);
  g_assert_true (isnan (fio->think_mean_ns));

  g_assert_cmpstr (anon->name, ==, "pid30");
  g_assert_cmpuint (anon->pairs, ==, 0);
  g_assert_false (anon->closed_loop);
}

/* Half the pairs dependent is not "most": the stream is open. */
static void
test_half_dependent_is_open (void)
{
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(GPtrArray) procs = NULL;
  const gint64 q[] = { 0, 1000, 5000 };    /* I/Os take 2 us */
  const FitProcess *p;

  for (guint i = 0; i < G_N_ELEMENTS (q); i++)
    {
      TraceIo io = make_io (1, "x", q[i], q[i] + 2000);
      g_array_append_val (ios, io);
    }
  procs = fit_processes ((const TraceIo *) ios->data, ios->len);
  p = g_ptr_array_index (procs, 0);
  g_assert_cmpuint (p->pairs, ==, 2);
  g_assert_cmpuint (p->dependent_pairs, ==, 1);
  g_assert_false (p->closed_loop);
  g_assert_cmpfloat_with_epsilon (p->think_mean_ns, 2000, 1e-9);
  /* Gaps 1 and 4 us against latencies 2 and 2 us: of the four pairings,
   * the two with the 4 us gap would come after completion by chance. */
  g_assert_cmpfloat_with_epsilon (p->dependent_chance, 0.5, 1e-12);
}

/* dd with a large block size: each read is split into 4 contiguous bios
 * queued together; the next read comes 30 us after the last of them
 * completed.  Steps, not bios, are compared. */
static void
test_split_submissions (void)
{
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(GPtrArray) procs = NULL;
  const FitProcess *p;
  gint64 t = 0;

  for (int step = 0; step < 10; step++)
    {
      gint64 last = 0;

      for (int k = 0; k < 4; k++)
        {
          TraceIo io = make_io (5, "dd", t + k * 1000, t + 200000 + k * 50000);

          io.sector = (guint64) (step * 4 + k) * 256;
          io.nr_sectors = 256;
          last = io.complete_ns;
          g_array_append_val (ios, io);
        }
      t = last + 30000;
    }
  procs = fit_processes ((const TraceIo *) ios->data, ios->len);
  p = g_ptr_array_index (procs, 0);
  g_assert_cmpuint (p->ios, ==, 40);
  g_assert_cmpuint (p->pairs, ==, 9);
  g_assert_cmpuint (p->dependent_pairs, ==, 9);
  g_assert_true (p->closed_loop);
  g_assert_cmpfloat_with_epsilon (p->think_mean_ns, 30000, 1e-9);
  g_assert_cmpfloat_with_epsilon (p->think_p95_ns, 30000, 1e-9);
}

static void
test_scenario_keyfile (void)
{
  g_autoptr(GArray) rq = make_linear_requests (200, TRACE_OP_READ, 3);
  g_autoptr(GArray) wr = make_linear_requests (50, TRACE_OP_WRITE, 4);
  g_autoptr(GArray) ios = make_streams ();
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = NULL, *again = NULL, *json = NULL;
  g_autofree char *path = NULL, *s = NULL;
  g_auto(GStrv) groups = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root, *read;
  const char *trace = "/data/my traces\\x/cap.txt";
  FitOptions opts = { 0 };

  /* A loop device (7,0) that never held two requests at once. */
  g_array_append_vals (rq, wr->data, wr->len);
  respace_serial (rq);
  r = fit_arrays (trace, (const TraceIo *) ios->data, ios->len,
                  (const TraceRequest *) rq->data, rq->len, "/dev/loop0",
                  "[mq-deadline] none", "67108864", &opts, &error);
  g_assert_no_error (error);
  text = fit_scenario_to_data (r);
  again = fit_scenario_to_data (r);
  g_assert_cmpstr (text, ==, again);

  path = g_build_filename (g_get_user_cache_dir (), "fit.ini", NULL);
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  g_assert_true (fit_write_scenario (r, path, &error));
  g_assert_no_error (error);
  g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &error);
  g_assert_no_error (error);

  groups = g_key_file_get_groups (kf, NULL);
  g_assert_cmpuint (g_strv_length (groups), ==, 5);
  g_assert_cmpstr (groups[0], ==, "sim");
  g_assert_cmpstr (groups[1], ==, "device dev7_0");
  g_assert_cmpstr (groups[2], ==, "process dd-10");
  g_assert_cmpstr (groups[3], ==, "process fio_worker-20");
  g_assert_cmpstr (groups[4], ==, "process pid30");

  g_assert_cmpint (g_key_file_get_integer (kf, "sim", "seed", NULL), ==, 1);
  g_assert_cmpint (g_key_file_get_integer (kf, "sim", "hz", NULL), ==, 1000);
#define CHECK_KEY(group, key, expected)                                   \
  G_STMT_START {                                                          \
    g_autofree char *v_ = g_key_file_get_string (kf, group, key, &error); \
    g_assert_no_error (error);                                            \
    g_assert_cmpstr (v_, ==, expected);                                   \
  } G_STMT_END
  CHECK_KEY ("device dev7_0", "kind", "fixed");
  CHECK_KEY ("device dev7_0", "parallelism", "1");
  CHECK_KEY ("device dev7_0", "queue_depth", "1");
  CHECK_KEY ("device dev7_0", "via", "loop");
  CHECK_KEY ("device dev7_0", "capacity", "64MiB");
  CHECK_KEY ("device dev7_0", "sched", "mq-deadline");
  CHECK_KEY ("device dev7_0", "devno", "7,0");
  CHECK_KEY ("process dd-10", "device", "dev7_0");
  CHECK_KEY ("process dd-10", "pattern", "trace");
  CHECK_KEY ("process dd-10", "trace", trace);
  CHECK_KEY ("process dd-10", "trace_pid", "10");
  CHECK_KEY ("process dd-10", "trace_devno", "7,0");
  CHECK_KEY ("process dd-10", "timing", "closed");
  CHECK_KEY ("process fio_worker-20", "timing", "open");

  /* Values carry units and match the fit to the printed precision. */
  s = g_key_file_get_string (kf, "device dev7_0", "overhead", &error);
  g_assert_true (g_str_has_suffix (s, "us"));
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (s, NULL), r->read.overhead_ns / 1e3, 0.0005);
  g_clear_pointer (&s, g_free);
  s = g_key_file_get_string (kf, "device dev7_0", "bandwidth", &error);
  g_assert_true (g_str_has_suffix (s, "MB/s"));
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (s, NULL), r->read.bandwidth_bytes_per_s / 1e6, 0.005);
  g_clear_pointer (&s, g_free);
  s = g_key_file_get_string (kf, "device dev7_0", "write_bandwidth", &error);
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (s, NULL), r->write.bandwidth_bytes_per_s / 1e6, 0.005);
  g_assert_true (g_key_file_has_key (kf, "device dev7_0", "write_overhead", NULL));

  /* JSON carries the same numbers. */
  json = fit_result_to_json (r);
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  read = json_object_get_object_member (json_object_get_object_member (root, "device"), "read");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (read, "overhead_us"),
                                  r->read.overhead_ns / 1e3, 1e-9);
  g_assert_cmpint (json_object_get_int_member (read, "used"), ==, 200);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "processes")), ==, 3);
}

/* The measured side for iosim compare: one row per bio, named like the
 * scenario's processes, Q2C latencies, times from the first I/O. */
static void
test_measured_results (void)
{
  g_autoptr(GArray) rq = make_linear_requests (30, TRACE_OP_READ, 9);
  g_autoptr(GArray) ios = make_streams ();
  g_autoptr(FitResult) r = NULL;
  g_autoptr(TraceResults) loaded = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "measured.csv", NULL);
  gint64 origin = G_MAXINT64;

  /* Shift the trace so that "times from the first I/O" is visible. */
  for (guint i = 0; i < ios->len; i++)
    {
      TraceIo *io = &g_array_index (ios, TraceIo, i);

      io->queue_ns += 5000000000;
      io->issue_ns += 5000000000;
      io->complete_ns += 5000000000;
      origin = MIN (origin, io->queue_ns);
    }
  r = fit_arrays ("/x", (const TraceIo *) ios->data, ios->len,
                  (const TraceRequest *) rq->data, rq->len, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  g_assert_true (fit_write_measured_results (r, path, &error));
  g_assert_no_error (error);
  loaded = trace_results_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (loaded), ==, ios->len);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      const TraceResult *row = trace_results_get (loaded, i);
      g_autofree char *name = trace_process_name (io->comm, io->pid);

      g_assert_cmpstr (row->process, ==, name);
      g_assert_cmpuint (row->pid, ==, io->pid);
      g_assert_cmpstr (row->device, ==, "dev7_0");
      g_assert_cmpint (row->issue_ns, ==, io->queue_ns - origin);
      g_assert_cmpint (row->complete_ns - row->issue_ns, ==, io->complete_ns - io->queue_ns);
      g_assert_cmpuint (row->bytes, ==, io->nr_sectors * 512);
    }
}

static void
test_no_requests (void)
{
  g_autoptr(GError) error = NULL;
  FitResult *r = fit_arrays ("/x", NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, &error);

  g_assert_null (r);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_NO_DATA);
}

/* A capture header whose size_bytes cannot hold the trace's I/Os does not
 * describe it: refused, not a device smaller than a sector (found by
 * fuzz-fit: size_bytes=6 became capacity = 6, which the scenario refused). */
static void
test_header_size_too_small (void)
{
  TraceIo io = { .pid = 7, .op = TRACE_OP_READ, .sector = 2048, .nr_sectors = 8,
                 .queue_ns = 0, .issue_ns = 100, .complete_ns = 300 };
  TraceRequest rq = { .op = TRACE_OP_READ, .sector = 2048, .nr_sectors = 8, .issue_ns = 100,
                      .complete_ns = 300, .in_flight_at_issue = 1 };
  static const struct { const char *size; const char *needle; } cases[] = {
    { "6", "size_bytes=6 is smaller than the trace's I/Os reach (1052672 bytes)" },
    { "1048576", "size_bytes=1048576 is smaller than the trace's I/Os reach (1052672 bytes)" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      FitResult *r = fit_arrays ("/x.ftrace", &io, 1, &rq, 1, "/dev/loop0", "none",
                                 cases[i].size, NULL, &error);
      g_assert_null (r);
      g_assert_error (error, FIT_ERROR, FIT_ERROR_FAILED);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("'%s' lacks '%s'", error->message, cases[i].needle);
    }
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_arrays ("/x.ftrace", &io, 1, &rq, 1, "/dev/loop0", "none",
                                       "1052672", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->capacity_bytes, ==, 1052672);
}

/* Comment lines of a fitted scenario hold comms and paths: a control
 * character would end the comment, bytes that are not UTF-8 would make the
 * scenario unreadable (found by fuzz-fit: a flusher's comm in Latin-1). */
static void
test_comment_text (void)
{
  g_autoptr(GString) out = g_string_new (NULL);
  fit_append_comment (out, "flusher threads (%s) of %s", "kworker/u8:\x9c" "1", "/tmp/a\nb");
  fit_append_comment (out, "kept: %s", "caf\xc3\xa9");
  g_assert_cmpstr (out->str, ==, "# flusher threads (kworker/u8:?1) of /tmp/a?b\n"
                                 "# kept: caf\xc3\xa9\n");
}

/* Rates as the fitted scenario writes them: MB/s as always where that
 * keeps the value above zero, B/s below, and each one a rate the device
 * keys accept (a fitted 2.7 B/s had been written as 0.00MB/s, which the
 * scenario then refused; found by fuzz-fit). */
static void
test_rate_text (void)
{
  static const struct { double bytes_per_s; int decimals; const char *text; } cases[] = {
    { 40e6, 2, "40.00MB/s" },
    { 123456789.0, 3, "123.457MB/s" },
    { 5000.0, 2, "0.01MB/s" },
    { 4999.0, 2, "4999B/s" },
    { 2.735718, 2, "2.73572B/s" },
    { 499.0, 3, "499B/s" },
    { 1e-9, 2, "1e-09B/s" },
    { INFINITY, 2, "1000000000000.00MB/s" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = fit_rate_text (cases[i].bytes_per_s, cases[i].decimals);
      g_autoptr(GError) error = NULL;
      double parsed = 0;
      g_assert_cmpstr (text, ==, cases[i].text);
      g_assert_true (sim_parse_rate_bytes_per_s (text, &parsed, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat (parsed, >, 0);
    }
}

/* A trace of a discard and a flush has requests to fit the device to but
 * nothing a simulated process re-issues: refused, not a scenario without
 * processes (found by fuzz-fit). */
static void
test_no_data_ios (void)
{
  g_autoptr(GError) error = NULL;
  TraceIo ios[2] = {
    { .pid = 7, .op = TRACE_OP_DISCARD, .sector = 0, .nr_sectors = 2048,
      .queue_ns = 0, .issue_ns = 100, .complete_ns = 300 },
    { .pid = 8, .op = TRACE_OP_FLUSH, .queue_ns = 400, .issue_ns = 500, .complete_ns = 900 },
  };
  TraceRequest rqs[2] = {
    { .op = TRACE_OP_DISCARD, .sector = 0, .nr_sectors = 2048, .issue_ns = 100,
      .complete_ns = 300, .in_flight_at_issue = 1 },
    { .op = TRACE_OP_FLUSH, .issue_ns = 500, .complete_ns = 900, .in_flight_at_issue = 1 },
  };
  FitResult *r = fit_arrays ("/x.blkparse", ios, 2, rqs, 2, NULL, NULL, NULL, NULL, &error);

  g_assert_null (r);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_NO_DATA);
  g_assert_nonnull (strstr (error->message, "/x.blkparse: no read or write with data to re-create: "
                                            "its 2 I/Os are flushes, discards or empty"));
}

/* A capture without NFS (one Ethernet ARP frame in a libpcap file) says
 * what fit looked for, not the block layer's D and C. */
static void
test_capture_without_nfs (void)
{
  static const guint8 pcap[] = {
    /* libpcap header: magic, version 2.4, zone, sigfigs, snaplen, EN10MB */
    0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
    0xff, 0xff, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    /* record: 1 s, 0 us, 42 bytes captured of 42 */
    0x01, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 42, 0, 0, 0,
    /* broadcast destination, source, EtherType ARP, then the request */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x06,
    0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x01,
    10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-fit-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "arp.pcap", NULL);

  g_assert_true (g_file_set_contents (path, (const char *) pcap, sizeof pcap, NULL));
  g_autoptr(FitResult) r = fit_trace (path, NULL, &error);
  g_assert_null (r);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_NO_DATA);
  g_assert_nonnull (strstr (error->message, "arp.pcap: no NFS READ or WRITE answered by a reply"));
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* An issue-only trace (an fio iolog's I/Os) names why there is nothing to
 * fit and how to get a trace that has completions. */
static void
test_issue_only (void)
{
  g_autoptr(GError) error = NULL;
  TraceIo ios[2] = {
    { .sector = 0, .nr_sectors = 8, .op = TRACE_OP_READ, .queue_ns = 0, .no_completion = TRUE },
    { .sector = 8, .nr_sectors = 8, .op = TRACE_OP_WRITE, .queue_ns = 1000, .no_completion = TRUE },
  };
  FitResult *r = fit_arrays ("/x.iolog", ios, 2, NULL, 0, NULL, NULL, NULL, NULL, &error);

  g_assert_null (r);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_NO_DATA);
  g_assert_nonnull (strstr (error->message, "/x.iolog: its 2 I/Os have no completion times"));
  g_assert_nonnull (strstr (error->message, "iosim capture"));
}

/* Kernel names (as sysfs prints them, or as a user types them) map to the
 * simulator's scheduler of the same block layer; NULL for names it lacks. */
static const struct { const char *in, *out; } sched_names[] = {
  { "none", "none" },
  { "mq-deadline", "mq-deadline" },
  { "[mq-deadline] none", "mq-deadline" },
  { "mq-deadline kyber [none]", "none" },
  { "[bfq] mq-deadline none", "bfq" },
  { " kyber\n", "kyber" },
  { "noop", "noop" },
  { "deadline", "deadline" },
  { "noop deadline [cfq]", "cfq" },
  { "[anticipatory] noop", "anticipatory" },
  { "as", "anticipatory" },
  { "weird", NULL },
  { "[] none", NULL },
};

static void
test_sched_name (gconstpointer data)
{
  const typeof (sched_names[0]) *c = data;
  g_autofree char *got = fit_sched_from_kernel (c->in);

  g_assert_cmpstr (got, ==, c->out);
  /* Every name it returns is one the simulator has registered. */
  if (got != NULL)
    g_assert_nonnull (sched_ops_lookup (got));
}

static void
test_names (void)
{
  {
    g_autofree char *a = trace_process_name ("kworker/u8:2", 12);
    g_autofree char *b = trace_process_name ("a b[c],d=e#", 3);
    g_autofree char *c = trace_process_name ("", 99);
    /* A comm in Latin-1, and a UTF-8 one that stays (found by fuzz-fit:
     * the bytes went into the scenario, which then did not load). */
    g_autofree char *d = trace_process_name ("caf\xe9\xb5", 7);
    g_autofree char *e = trace_process_name ("caf\xc3\xa9", 8);

    g_assert_cmpstr (a, ==, "kworker/u8:2-12");
    g_assert_cmpstr (b, ==, "a_b_c__d_e_-3");
    g_assert_cmpstr (c, ==, "pid99");
    g_assert_cmpstr (d, ==, "caf__-7");
    g_assert_cmpstr (e, ==, "caf\xc3\xa9-8");
  }
}

/* ---- fit_trace on small written traces --------------------------------- */

/* A blkparse trace with @n reads on each of 7,0 and 8,16 (Q, D, C), and
 * @header as its first line if not NULL. */
static char *
write_two_device_trace (const char *name, const char *header, int n)
{
  char *path = g_build_filename (g_get_user_cache_dir (), name, NULL);
  g_autoptr(GString) s = g_string_new (header);
  guint seq = 1;
  gint64 t = 1000000;

  for (int i = 0; i < n; i++)
    for (int dev = 0; dev < 2; dev++)
      {
        const char *devno = dev == 0 ? "7,0" : "8,16";
        guint64 sector = 4096 + (guint64) i * 8;
        const char *act[] = { "Q", "D", "C" };
        gint64 at[] = { t, t + 1000, t + 60000 };

        for (int a = 0; a < 3; a++)
          g_string_append_printf (s, "%5s %4d %8u %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                                  " %5u  %s   R %" G_GUINT64_FORMAT " + 8 [%s]\n",
                                  devno, 0, seq++, at[a] / 1000000000, at[a] % 1000000000,
                                  a == 2 ? 0 : 100 + dev, act[a], sector,
                                  a == 2 ? "0" : "cat");
        t += 100000;
      }
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  return path;
}

static void
test_trace_several_devices (void)
{
  g_autofree char *path = write_two_device_trace ("two.blkparse", NULL, 5);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_trace (path, NULL, &error);
  FitOptions opts = { .has_device = TRUE, .dev_major = 8, .dev_minor = 16 };

  g_assert_null (r);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_DEVICE);
  g_assert_nonnull (strstr (error->message, "2 devices (7,0 8,16)"));
  g_clear_error (&error);

  r = fit_trace (path, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->dev_major, ==, 8);
  g_assert_cmpuint (r->dev_minor, ==, 16);
  g_assert_cmpuint (r->n_requests, ==, 5);
  g_assert_cmpstr (r->device_name, ==, "dev8_16");
  g_assert_cmpuint (r->processes->len, ==, 1);
  g_assert_cmpstr (((FitProcess *) g_ptr_array_index (r->processes, 0))->name, ==, "cat-101");
}

/* A device-mapper device above 8,0: dd's bio is queued on 253,0 and
 * remapped to 8,0, where it is served; cat's bio on 253,0 completes with
 * no record on 8,0 (a trace that lost them).  Only 8,0 has requests, so it
 * is fitted, and its processes are what a scenario reading the trace with
 * trace_devno = 8,0 re-issues: dd's one read, not cat (whose process would
 * find nothing and refuse to load; found by fuzz-fit). */
static void
test_trace_stacked_device (void)
{
  static const char trace[] =
    "253,0    1        1     1.000000000   500  Q   R 0 + 8 [dd]\n"
    "  8,0    1        1     1.000001000   500  A   R 2048 + 8 <- (253,0) 0\n"
    "  8,0    1        2     1.000002000   500  Q   R 2048 + 8 [dd]\n"
    "  8,0    1        3     1.000003000   500  G   R 2048 + 8 [dd]\n"
    "  8,0    1        4     1.000004000   500  D   R 2048 + 8 [dd]\n"
    "  8,0    1        5     1.000100000     0  C   R 2048 + 8 [0]\n"
    "253,0    1        2     1.000101000     0  C   R 0 + 8 [0]\n"
    "253,0    1        3     2.000000000   600  Q   R 64 + 8 [cat]\n"
    "253,0    1        4     2.000200000     0  C   R 64 + 8 [0]\n";
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "stacked.blkparse", NULL);
  g_autoptr(GError) error = NULL;

  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  g_assert_true (g_file_set_contents (path, trace, -1, NULL));
  g_autoptr(FitResult) r = fit_trace (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->dev_major, ==, 8);
  g_assert_cmpuint (r->dev_minor, ==, 0);
  g_assert_cmpuint (r->processes->len, ==, 1);
  const FitProcess *p = g_ptr_array_index (r->processes, 0);
  g_assert_cmpstr (p->name, ==, "dd-500");
  g_assert_cmpuint (p->simulated_ios, ==, 1);
  g_autofree char *ini = fit_scenario_to_data (r);
  g_autoptr(Scenario) s = scenario_load_data (ini, "stacked.ini", "/", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
}

/* The capture header describes 7,0: it chooses that device, and applies
 * only to it. */
static void
test_trace_capture_meta (void)
{
  g_autofree char *path = write_two_device_trace (
    "meta.blkparse", "# iosim-capture device=/dev/loop0 devno=7,0 scheduler=bfq "
    "size_bytes=1073741824\n", 4);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_trace (path, NULL, &error);
  g_autoptr(FitResult) other = NULL;
  FitOptions opts = { .has_device = TRUE, .dev_major = 8, .dev_minor = 16, .sched = "none" };

  g_assert_no_error (error);
  g_assert_cmpuint (r->dev_major, ==, 7);
  g_assert_cmpstr (r->device_name, ==, "dev7_0");
  g_assert_cmpstr (r->kernel_name, ==, "loop0");
  g_assert_cmpstr (r->sched, ==, "bfq");
  g_assert_cmpstr (r->sched_source, ==, "trace");
  g_assert_true (r->capacity_from_meta);
  g_assert_cmpuint (r->capacity_bytes, ==, 1073741824);
  g_assert_cmpuint (r->n_requests, ==, 4);

  other = fit_trace (path, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (other->device_name, ==, "dev8_16");
  g_assert_null (other->kernel_name);
  g_assert_cmpstr (other->sched, ==, "none");
  g_assert_cmpstr (other->sched_source, ==, "option");
  g_assert_false (other->capacity_from_meta);
  /* Highest sector end 4096 + 3 * 8 + 8 = 4128 sectors = 2,113,536 bytes,
   * just over 2 MiB: rounded up to 3 MiB. */
  g_assert_cmpuint (other->capacity_bytes, ==, 3 * 1024 * 1024);
}

/* Where the scenario's scheduler comes from: --sched first, then the
 * capture's (blk-mq names stay blk-mq), else "none", assumed; names the
 * simulator lacks are errors naming what to do. */
static const struct {
  const char *scheduler;        /* the capture header's scheduler=, NULL: no header */
  const char *option;           /* --sched */
  const char *sched;            /* expected, NULL: an error */
  const char *source;
  const char *message;          /* in the error */
} sched_sources[] = {
  { "mq-deadline", NULL, "mq-deadline", "trace", NULL },
  { "none", NULL, "none", "trace", NULL },
  { "mq-deadline", "bfq", "bfq", "option", NULL },
  { "bfq", "mq-deadline", "mq-deadline", "option", NULL },
  { "bfq", "deadline", "deadline", "option", NULL },
  { NULL, NULL, "none", "assumed", NULL },
  { "unknown", NULL, "none", "assumed", NULL },
  { "bfq", "mq-deadline, bfq,none", "mq-deadline,bfq,none", "option", NULL },
  { "bfq", "weird", NULL, NULL, "--sched 'weird': 'weird' is not a scheduler the simulator has" },
  { "bfq", "none,cfq2", NULL, NULL, "--sched 'none,cfq2': 'cfq2' is not a scheduler" },
  { "adios", NULL, NULL, NULL, "the capture's scheduler 'adios' is not one the simulator has" },
};

static void
test_trace_sched_source (gconstpointer data)
{
  const typeof (sched_sources[0]) *c = data;
  g_autofree char *header = c->scheduler == NULL ? NULL
    : g_strdup_printf ("# iosim-capture device=/dev/loop0 devno=7,0 scheduler=%s\n", c->scheduler);
  g_autofree char *path = write_two_device_trace ("sched.blkparse", header, 3);
  FitOptions opts = { .has_device = TRUE, .dev_major = 7, .dev_minor = 0, .sched = c->option };
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_trace (path, &opts, &error);

  if (c->sched == NULL)
    {
      g_assert_null (r);
      g_assert_error (error, FIT_ERROR, FIT_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, c->message));
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpstr (r->sched, ==, c->sched);
  g_assert_cmpstr (r->sched_source, ==, c->source);
}

/* iosim run --set on a fitted scenario: a device, process, bus or adapter
 * the scenario lacks is named with the ones it has (it used to be created
 * empty and fail with "key 'kind' is missing"); tunable groups may be
 * added. */
static const struct {
  const char *set;
  const char *message;          /* NULL: the scenario loads */
} sets_cases[] = {
  { "device dev7_0.sched=bfq", NULL },
  { "sim.seed=3", NULL },
  { "sched bfq.slice_idle=0", NULL },
  { "device loop0.sched=bfq",
    "--set 'device loop0.sched=bfq': the scenario has no device 'loop0' (its devices: dev7_0)" },
  { "process nobody.think=1ms",
    "--set 'process nobody.think=1ms': the scenario has no process 'nobody' (its processes: cat-100)" },
  { "bus ide0.kind=ide-channel", "the scenario has no bus 'ide0' (its buses: none)" },
  { "loop0.sched=bfq", "--set 'loop0.sched=bfq': the scenario has no group [loop0] (it has [sim], "
    "[device dev7_0], [process cat-100]; its devices: dev7_0; a device is set as "
    "'device NAME.KEY=VALUE')" },
};

static void
test_set_on_fitted (gconstpointer data)
{
  const typeof (sets_cases[0]) *c = data;
  g_autofree char *path = write_two_device_trace ("set.blkparse", NULL, 3);
  FitOptions opts = { .has_device = TRUE, .dev_major = 7, .dev_minor = 0 };
  const char *const sets[] = { c->set, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_trace (path, &opts, &error);
  g_autofree char *text = NULL;
  g_autoptr(Scenario) s = NULL;

  g_assert_no_error (error);
  text = fit_scenario_to_data (r);
  s = scenario_load_data (text, "fitted.ini", "/", sets, &error);
  if (c->message == NULL)
    {
      g_assert_no_error (error);
      g_assert_nonnull (s);
      return;
    }
  g_assert_null (s);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, c->message));
  g_assert_null (strstr (error->message, "is missing"));
}

/* Real 6.18 captures of loop 7,0 (tests/data): one with the capture header
 * (scheduler=mq-deadline), one without.  The scenario names the blk-mq
 * scheduler, says when it was assumed, counts the dropped flushes, and
 * loads in the simulator. */
static const struct {
  const char *file;
  const char *sched;
  const char *source;
  gint64      flushes;          /* dropped: sync's empty preflush bio */
} real_scheds[] = {
  { "valid-blk-loop-mqdeadline-6.18.ftrace", "mq-deadline", "trace", 1 },
  { "valid-blk-loop-none-6.18.ftrace", "none", "assumed", 0 },
};

static void
test_real_sched (gconstpointer data)
{
  const typeof (real_scheds[0]) *c = data;
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", c->file, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FitResult) r = fit_trace (path, NULL, &error);
  g_autofree char *text = NULL, *json = NULL;
  g_autoptr(Scenario) s = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root, *dev;
  gboolean assumed = strcmp (c->source, "assumed") == 0;

  g_assert_no_error (error);
  g_assert_cmpstr (r->sched, ==, c->sched);
  g_assert_cmpstr (r->sched_source, ==, c->source);
  text = fit_scenario_to_data (r);
  g_assert_cmpint (strstr (text, "blk-mq none assumed") != NULL, ==, assumed);
  /* A process that only flushed is left out, so the scenario loads. */
  s = scenario_load_data (text, "fitted.ini", "/", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);

  json = fit_result_to_json (r);
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  dev = json_object_get_object_member (root, "device");
  g_assert_cmpstr (json_object_get_string_member (dev, "sched"), ==, c->sched);
  g_assert_cmpstr (json_object_get_string_member (dev, "sched_source"), ==, c->source);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (root, "flushes"),
                                               "dropped"), ==, c->flushes);
}

/* One device, several trace formats: each fit names it devMAJ_MIN, the
 * capture header's kernel name ("loop0") only labelling it.  Inputs are
 * real 6.18 captures of loop devices, fitted as they are and converted to
 * binary blktrace (which carries no header); "shared:" files come from
 * $IOSIM_SHARED_TESTDATA and are skipped where it is absent. */
typedef struct {
  const char *file;             /* tests/data name, or "shared:" + relative path */
  const char *kernel_name;      /* expected from the header, NULL: none */
  gboolean    to_blktrace;      /* fit its conversion to blktrace instead */
} NamedInput;

static const struct {
  const char *name;
  guint32     major, minor;
  const char *expected;
  NamedInput  inputs[3];
} same_names[] = {
  { "loop0", 7, 0, "dev7_0",
    { { "valid-blk-loop-mqdeadline-6.18.ftrace", "loop0", FALSE },
      { "valid-blk-loop-mqdeadline-6.18.ftrace", NULL, TRUE },
      { "valid-events-mqdeadline-6.18.ftrace", NULL, FALSE } } },
  { "loop2", 7, 2, "dev7_2",
    { { "shared:generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz", NULL, FALSE },
      { "shared:generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz", NULL, TRUE } } },
};

static char *testdata (const char *relative);

static char *
named_input_path (const NamedInput *in, const char *tmp_dir)
{
  g_autofree char *src = g_str_has_prefix (in->file, "shared:")
    ? testdata (in->file + strlen ("shared:"))
    : g_test_build_filename (G_TEST_DIST, "data", in->file, NULL);
  g_autoptr(GError) error = NULL;
  char *out;

  if (src == NULL || !in->to_blktrace)
    return g_steal_pointer (&src);
  out = g_build_filename (tmp_dir, "converted.blktrace", NULL);
  g_assert_true (trace_convert_to_blktrace (src, NULL, out, NULL, &error));
  g_assert_no_error (error);
  return out;
}

static void
test_same_device_name (gconstpointer data)
{
  const typeof (same_names[0]) *c = data;
  FitOptions opts = { .has_device = TRUE, .dev_major = c->major, .dev_minor = c->minor };
  g_autofree char *tmp_dir = g_dir_make_tmp ("test-fit-XXXXXX", NULL);

  g_assert_nonnull (tmp_dir);
  for (guint i = 0; i < G_N_ELEMENTS (c->inputs) && c->inputs[i].file != NULL; i++)
    {
      const NamedInput *in = &c->inputs[i];
      g_autofree char *path = named_input_path (in, tmp_dir);
      g_autoptr(GError) error = NULL;
      g_autoptr(FitResult) r = NULL;
      g_autoptr(GKeyFile) kf = g_key_file_new ();
      g_autofree char *text = NULL, *group = NULL, *proc_device = NULL;
      g_auto(GStrv) groups = NULL;

      if (path == NULL)
        {
          g_test_skip ("$IOSIM_SHARED_TESTDATA does not hold the trace");
          break;
        }
      r = fit_trace (path, &opts, &error);
      if (in->to_blktrace)
        g_assert_cmpint (g_unlink (path), ==, 0);
      g_assert_no_error (error);
      g_assert_cmpstr (r->device_name, ==, c->expected);
      g_assert_cmpstr (r->kernel_name, ==, in->kernel_name);

      /* The scenario's device group and its processes use that name. */
      text = fit_scenario_to_data (r);
      g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
      g_assert_no_error (error);
      group = g_strconcat ("device ", c->expected, NULL);
      g_assert_true (g_key_file_has_group (kf, group));
      groups = g_key_file_get_groups (kf, NULL);
      g_assert_true (g_str_has_prefix (groups[2], "process "));
      proc_device = g_key_file_get_string (kf, groups[2], "device", &error);
      g_assert_no_error (error);
      g_assert_cmpstr (proc_device, ==, c->expected);
    }
  g_assert_cmpint (g_rmdir (tmp_dir), ==, 0);
}

/* ---- Real traces from $IOSIM_SHARED_TESTDATA --------------------------- */

static char *
testdata (const char *relative)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  char *path;

  if (dir == NULL)
    return NULL;
  path = g_build_filename (dir, relative, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    g_clear_pointer (&path, g_free);
  return path;
}

/* btt's D2C average (seconds) and count from its summary table. */
static gboolean
read_btt_d2c (const char *path, double *avg_s, guint64 *n)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      double min, avg, max;
      unsigned long long count;

      if (sscanf (*l, "D2C %lf %lf %lf %llu", &min, &avg, &max, &count) == 4)
        {
          *avg_s = avg;
          *n = count;
          return TRUE;
        }
    }
  return FALSE;
}

/* One 4 KiB size throughout: the overhead is the mean D2C, which btt
 * computed independently (printed to the nanosecond). */
static void
test_real_blkparse_btt (void)
{
  g_autofree char *trace = testdata ("blktrace-takeoverjp-sample/derived/sample.blkparse.txt");
  g_autofree char *btt = testdata ("blktrace-takeoverjp-sample/derived/sample.btt.txt");
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  double avg_s = 0;
  guint64 n = 0;

  if (trace == NULL || btt == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA with the takeoverjp blktrace sample is not available");
      return;
    }
  g_assert_true (read_btt_d2c (btt, &avg_s, &n));
  r = fit_trace (trace, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->read.n_total, ==, n);
  g_assert_cmpuint (r->read.n_sizes, ==, 1);
  g_assert_false (r->read.bandwidth_identified);
  g_assert_cmpfloat_with_epsilon (r->read.overhead_ns, avg_s * 1e9, 0.5);
  g_assert_cmpuint (r->dev_major, ==, 259);
  g_assert_cmpuint (r->dev_minor, ==, 0);
  g_assert_cmpstr (r->device_name, ==, "dev259_0");
}

/* Count "write"/"read" actions in a fio v3 iolog. */
static guint
count_iolog (const char *path, const char *action)
{
  g_autofree char *text = NULL;
  g_autofree char *needle = g_strdup_printf (" %s ", action);
  guint n = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  for (const char *p = strstr (text, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* fio on loop 7,2: randrw4k (libaio, iodepth 4, 400 IOPS) and seqwrite64k
 * (iodepth 2, 50 IOPS: each 64 KiB write is issued 20 ms after the last,
 * long after it completed, so that stream is closed-loop). */
static void
test_real_ftrace_fio (void)
{
  g_autofree char *trace = testdata ("generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz");
  g_autofree char *rw_log = testdata ("generated-block-loop-kernel6.18/randrw4k.v3.iolog");
  g_autofree char *seq_log = testdata ("generated-block-loop-kernel6.18/seqwrite64k.v3.iolog");
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  const FitProcess *rw = NULL, *seq = NULL;

  if (trace == NULL || rw_log == NULL || seq_log == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA with the loop-device fio capture is not available");
      return;
    }
  r = fit_trace (trace, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->dev_major, ==, 7);
  g_assert_cmpuint (r->dev_minor, ==, 2);
  /* Two fio jobs of depth 4 and 2. */
  g_assert_cmpuint (r->max_in_flight, >=, 2);
  g_assert_cmpuint (r->max_in_flight, <=, 6);
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);

      if (p->bytes_by_op[TRACE_OP_READ] > 0)
        rw = p;
      else
        seq = p;
    }
  g_assert_nonnull (rw);
  g_assert_nonnull (seq);
  g_assert_cmpuint (rw->ios_by_op[TRACE_OP_READ], ==, count_iolog (rw_log, "read"));
  g_assert_cmpuint (rw->ios_by_op[TRACE_OP_WRITE], ==, count_iolog (rw_log, "write"));
  g_assert_cmpuint (seq->ios_by_op[TRACE_OP_WRITE], ==, count_iolog (seq_log, "write"));
  g_assert_cmpuint (seq->bytes, ==, seq->ios * 65536);
  g_assert_true (seq->closed_loop);
  g_assert_cmpuint (seq->dependent_pairs, ==, seq->pairs);
  /* 50 IOPS: about 20 ms from one issue to the next, minus the service time. */
  g_assert_cmpfloat (seq->think_p50_ns, >, 15e6);
  g_assert_cmpfloat (seq->think_p50_ns, <, 20e6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/fit/ols-recovery", test_ols_recovery);
  g_test_add_func ("/fit/waiting-removed", test_waiting_removed);
  g_test_add_func ("/fit/single-size", test_single_size);
  g_test_add_func ("/fit/overhead-quantiles", test_overhead_quantiles);
  g_test_add_func ("/fit/overhead-quantiles/single-size", test_overhead_quantiles_single_size);
  g_test_add_func ("/fit/processes/closed-open", test_closed_open);
  g_test_add_func ("/fit/processes/half-dependent-is-open", test_half_dependent_is_open);
  g_test_add_func ("/fit/processes/split-submissions", test_split_submissions);
  g_test_add_func ("/fit/processes/flushes-dropped", test_flushes_dropped);
  g_test_add_func ("/fit/scenario/keyfile", test_scenario_keyfile);
  g_test_add_func ("/fit/no-requests", test_no_requests);
  g_test_add_func ("/fit/no-requests/issue-only", test_issue_only);
  g_test_add_func ("/fit/no-requests/capture-without-nfs", test_capture_without_nfs);
  g_test_add_func ("/fit/no-requests/no-data-ios", test_no_data_ios);
  g_test_add_func ("/fit/rate-text", test_rate_text);
  g_test_add_func ("/fit/comment-text", test_comment_text);
  g_test_add_func ("/fit/header-size-too-small", test_header_size_too_small);
  g_test_add_func ("/fit/measured-results", test_measured_results);
  g_test_add_func ("/fit/names", test_names);
  for (guint i = 0; i < G_N_ELEMENTS (sched_names); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/sched-name/%u", i);

      g_test_add_data_func (path, &sched_names[i], test_sched_name);
    }
  g_test_add_func ("/fit/trace/several-devices", test_trace_several_devices);
  g_test_add_func ("/fit/trace/capture-meta", test_trace_capture_meta);
  g_test_add_func ("/fit/trace/stacked-device", test_trace_stacked_device);
  for (guint i = 0; i < G_N_ELEMENTS (sched_sources); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/trace/sched-source/%u", i);

      g_test_add_data_func (path, &sched_sources[i], test_trace_sched_source);
    }
  for (guint i = 0; i < G_N_ELEMENTS (sets_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/scenario/set/%u", i);

      g_test_add_data_func (path, &sets_cases[i], test_set_on_fitted);
    }
  for (guint i = 0; i < G_N_ELEMENTS (real_scheds); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/real/sched/%s", real_scheds[i].file);

      g_test_add_data_func (path, &real_scheds[i], test_real_sched);
    }
  for (guint i = 0; i < G_N_ELEMENTS (same_names); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/real/same-device-name/%s", same_names[i].name);

      g_test_add_data_func (path, &same_names[i], test_same_device_name);
    }
  g_test_add_func ("/fit/real/blkparse-btt", test_real_blkparse_btt);
  g_test_add_func ("/fit/real/ftrace-fio", test_real_ftrace_fio);
  return g_test_run ();
}
