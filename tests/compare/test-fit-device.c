/* test-fit-device.c — the device half of models/fit (fit-device.c) on
 * requests from a known device: a small discrete-event generator serves
 * closed-loop threads through a scheduler queue (FIFO, lowest sector
 * first, or random: as different elevators would dispatch) and a number
 * of driver tags to a FIFO device of known overhead, bandwidth and
 * parallelism.  The fit must find the parallelism and the same overhead
 * and bandwidth, within their confidence intervals, whatever the depth
 * and the dispatch order; the overhead quantiles must reproduce the
 * traced tail; a real emulated device, when it can run, is fitted too.
 * Randomness comes from seeded gsl_rng streams. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit.h"
#include "sim/sim.h"
#include "sim/sim-units.h"

#define TRUE_OVERHEAD_NS  50000.0   /* 50 us */
#define TRUE_NS_PER_BYTE  5.0       /* 200 MB/s */
#define NOISE_NS          2000.0    /* sigma of the Gaussian noise on each service */
#define N_REQUESTS        3000

typedef enum {
  ORDER_FIFO,     /* arrival order: none, mq-deadline without expiry */
  ORDER_SECTOR,   /* lowest sector first: a sorting elevator */
  ORDER_RANDOM,   /* any order at all */
} Order;

typedef struct {
  const char *name;
  guint       threads;       /* closed-loop streams: the depth offered */
  guint       tags;          /* requests at the device at once; the rest wait in the scheduler */
  Order       order;
  guint       parallelism;   /* true: requests the device serves at once */
  double      think_ns;      /* mean think time (exponential); 0 = none */
  gulong      seed;
} DevCase;

/* Serial device at depths 1, 4 and 16, FIFO and reordered; one with think
 * time so that the depth varies; parallel devices whose depth varies. */
static const DevCase serial_cases[] = {
  { "depth1-fifo",       1, 128, ORDER_FIFO,   1, 0,      11 },
  { "depth4-fifo",       4, 128, ORDER_FIFO,   1, 0,      12 },
  { "depth16-fifo",     16, 128, ORDER_FIFO,   1, 0,      13 },
  { "depth4-sector",     4,   1, ORDER_SECTOR, 1, 0,      14 },
  { "depth16-sector",   16,   2, ORDER_SECTOR, 1, 0,      15 },
  { "depth16-random",   16,   4, ORDER_RANDOM, 1, 0,      16 },
  { "depth4-think",      4, 128, ORDER_FIFO,   1, 300000, 17 },
};

static const DevCase parallel_cases[] = {
  { "p4-depth8-think",   8, 128, ORDER_FIFO,   4, 400000, 21 },
  { "p4-depth16-random",16,   8, ORDER_RANDOM, 4, 600000, 22 },
  { "p2-depth6-think",   6, 128, ORDER_SECTOR, 2, 250000, 23 },
};

/* ---- The generator ------------------------------------------------------ */

typedef struct {
  TraceRequest rq;
  gint64       arrive_ns;
  gint64       service_ns;
  guint        thread;
  gboolean     started;
} GenRequest;

typedef struct {
  const DevCase *c;
  gsl_rng       *rng;
  GArray        *done;          /* TraceRequest, completion order */
  GPtrArray     *sched;         /* GenRequest * waiting in the scheduler */
  GPtrArray     *device;        /* GenRequest * dispatched, not complete */
  gint64        *next_arrival;  /* per thread; -1 while its request is out */
  guint          busy;          /* requests in service */
  guint          issued;
} Gen;

static guint32
gen_sectors (Gen *g)
{
  static const guint32 sizes[] = { 8, 16, 32, 64, 128, 256 };

  return sizes[gsl_rng_uniform_int (g->rng, G_N_ELEMENTS (sizes))];
}

static void
gen_arrive (Gen *g, guint thread, gint64 now)
{
  GenRequest *r = g_new0 (GenRequest, 1);
  double service;

  r->rq.dev_major = 7;
  r->rq.op = TRACE_OP_READ;
  r->rq.nr_sectors = gen_sectors (g);
  r->rq.sector = gsl_rng_uniform_int (g->rng, 1u << 20) * 8;
  service = TRUE_OVERHEAD_NS + TRUE_NS_PER_BYTE * r->rq.nr_sectors * 512.0
            + gsl_ran_gaussian (g->rng, NOISE_NS);
  r->service_ns = (gint64) llround (service);
  r->arrive_ns = now;
  r->thread = thread;
  g_ptr_array_add (g->sched, r);
  g->next_arrival[thread] = -1;
  g->issued++;
}

/* The waiting request the scheduler picks. */
static guint
gen_pick (Gen *g)
{
  guint best = 0;

  if (g->c->order == ORDER_RANDOM)
    return (guint) gsl_rng_uniform_int (g->rng, g->sched->len);
  for (guint i = 1; i < g->sched->len; i++)
    {
      const GenRequest *a = g_ptr_array_index (g->sched, i);
      const GenRequest *b = g_ptr_array_index (g->sched, best);

      if (g->c->order == ORDER_SECTOR ? a->rq.sector < b->rq.sector
                                      : a->arrive_ns < b->arrive_ns)
        best = i;
    }
  return best;
}

/* Start the oldest dispatched requests while a server is free: the device
 * serves in dispatch order. */
static void
gen_serve (Gen *g, gint64 now)
{
  for (guint i = 0; i < g->device->len && g->busy < g->c->parallelism; i++)
    {
      GenRequest *r = g_ptr_array_index (g->device, i);

      if (r->started)
        continue;
      r->started = TRUE;
      r->rq.complete_ns = now + MAX (r->service_ns, 1);
      g->busy++;
    }
}

static void
gen_dispatch (Gen *g, gint64 now)
{
  while (g->sched->len > 0 && g->device->len < g->c->tags)
    {
      GenRequest *r = g_ptr_array_steal_index (g->sched, gen_pick (g));

      r->rq.issue_ns = now;
      g_ptr_array_add (g->device, r);
      r->rq.in_flight_at_issue = g->device->len;
    }
  gen_serve (g, now);
}

/* The earliest completion, or -1. */
static guint
gen_next_completion (Gen *g, gint64 *at)
{
  guint best = G_MAXUINT;

  for (guint i = 0; i < g->device->len; i++)
    {
      const GenRequest *r = g_ptr_array_index (g->device, i);

      if (r->started && (best == G_MAXUINT || r->rq.complete_ns < *at))
        {
          best = i;
          *at = r->rq.complete_ns;
        }
    }
  return best;
}

static void
gen_complete (Gen *g, guint index, gint64 now)
{
  GenRequest *r = g_ptr_array_index (g->device, index);
  double think = g->c->think_ns > 0 ? gsl_ran_exponential (g->rng, g->c->think_ns) : 0;

  g_array_append_val (g->done, r->rq);
  g->next_arrival[r->thread] = now + (gint64) llround (think);
  g->busy--;
  g_ptr_array_remove_index (g->device, index);
  g_free (r);
}

/* N_REQUESTS requests of @c as a trace would show them (completion order). */
static GArray *
generate (const DevCase *c)
{
  Gen g = { .c = c };

  g.rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (g.rng, c->seed);
  g.done = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  g.sched = g_ptr_array_new ();
  g.device = g_ptr_array_new ();
  g.next_arrival = g_new0 (gint64, c->threads);
  /* The threads start 1 us apart: a trace's nanosecond D times do not tie,
   * and tied dispatches are ordered by completion (right for a serial
   * device only). */
  for (guint th = 0; th < c->threads; th++)
    g.next_arrival[th] = th * 1000;
  for (;;)
    {
      gint64 t_c = 0, t_a = -1;
      guint ci = gen_next_completion (&g, &t_c), ai = 0;

      for (guint th = 0; th < c->threads; th++)
        if (g.next_arrival[th] >= 0 && (t_a < 0 || g.next_arrival[th] < t_a))
          {
            t_a = g.next_arrival[th];
            ai = th;
          }
      if (g.issued == N_REQUESTS)
        t_a = -1;
      if (ci == G_MAXUINT && t_a < 0)
        break;
      /* Completions first at one instant, as the kernel's C precedes the
       * D it makes room for. */
      if (ci != G_MAXUINT && (t_a < 0 || t_c <= t_a))
        {
          gen_complete (&g, ci, t_c);
          gen_dispatch (&g, t_c);
        }
      else
        {
          gen_arrive (&g, ai, t_a);
          gen_dispatch (&g, t_a);
        }
    }
  g_assert_cmpuint (g.done->len, ==, N_REQUESTS);
  g_free (g.next_arrival);
  g_ptr_array_unref (g.sched);
  g_ptr_array_unref (g.device);
  gsl_rng_free (g.rng);
  return g.done;
}

static FitResult *
fit_case (const DevCase *c)
{
  g_autoptr(GArray) rq = generate (c);
  g_autoptr(GError) error = NULL;
  FitResult *r = fit_arrays (c->name, NULL, 0, (const TraceRequest *) rq->data, rq->len,
                             "/dev/loop0", "none", NULL, NULL, &error);

  g_assert_no_error (error);
  return r;
}

/* Within four standard errors: a 1-in-15,000 miss for an unbiased fit. */
static void
assert_truth (const FitDeviceOp *f)
{
  g_assert_true (f->fitted && f->bandwidth_identified);
  g_assert_cmpuint (f->n_inconsistent, ==, 0);
  g_assert_cmpuint (f->n_used, ==, N_REQUESTS);
  g_assert_cmpfloat (fabs (f->overhead_ns - TRUE_OVERHEAD_NS), <, 4 * f->overhead_se_ns);
  g_assert_cmpfloat (fabs (f->ns_per_byte - TRUE_NS_PER_BYTE), <, 4 * f->ns_per_byte_se);
  /* The reported interval is the t interval of those errors. */
  g_assert_cmpfloat (f->overhead_ci95_ns, >, 1.9 * f->overhead_se_ns);
  g_assert_cmpfloat (f->overhead_ci95_ns, <, 2.0 * f->overhead_se_ns);
  g_assert_cmpfloat (f->bandwidth_lo_bytes_per_s, <, f->bandwidth_bytes_per_s);
  g_assert_cmpfloat (f->bandwidth_hi_bytes_per_s, >, f->bandwidth_bytes_per_s);
  /* The noise around the line is the device's own. */
  g_assert_cmpfloat (fabs (f->residual_rms_ns - NOISE_NS), <, 0.15 * NOISE_NS);
}

static void
test_serial (gconstpointer data)
{
  const DevCase *c = data;
  g_autoptr(FitResult) r = fit_case (c);

  if (g_test_verbose ())
    fit_print_report (r, stderr);
  g_assert_cmpuint (r->queue.parallelism, ==, 1);
  assert_truth (&r->read);
  /* Little's law holds for the rebuilt in-flight count. */
  g_assert_cmpfloat (fabs (r->queue.little_in_flight - r->queue.mean_in_flight), <,
                     1e-6 * r->queue.mean_in_flight);
  /* Where the device held more than one request, D2C took the waiting in
   * and the service time does not. */
  if (MIN (c->threads, c->tags) > 1 && c->think_ns == 0)
    {
      g_assert_cmpfloat (r->read.mean_d2c_ns, >,
                         (MIN (c->threads, c->tags) - 0.5) * r->read.mean_service_ns);
      g_assert_cmpfloat (r->queue.mean_in_flight, >, MIN (c->threads, c->tags) - 0.5);
    }
  /* Depths above 1 were reached with think time: parallelism 1 is then
   * identified, not just a lower bound. */
  if (c->think_ns > 0)
    g_assert_true (r->queue.parallelism_bounded);
}

/* The same device from any depth and order: every pair of fits agrees
 * within four standard errors of the difference. */
static void
test_serial_agree (void)
{
  FitDeviceOp fits[G_N_ELEMENTS (serial_cases)];

  for (guint i = 0; i < G_N_ELEMENTS (serial_cases); i++)
    {
      g_autoptr(FitResult) r = fit_case (&serial_cases[i]);

      fits[i] = r->read;
    }
  for (guint i = 0; i < G_N_ELEMENTS (fits); i++)
    for (guint j = i + 1; j < G_N_ELEMENTS (fits); j++)
      {
        double se_a = hypot (fits[i].overhead_se_ns, fits[j].overhead_se_ns);
        double se_b = hypot (fits[i].ns_per_byte_se, fits[j].ns_per_byte_se);

        if (g_test_verbose ())
          g_test_message ("%s / %s: overhead %.0f / %.0f ns", serial_cases[i].name,
                          serial_cases[j].name, fits[i].overhead_ns, fits[j].overhead_ns);
        g_assert_cmpfloat (fabs (fits[i].overhead_ns - fits[j].overhead_ns), <, 4 * se_a);
        g_assert_cmpfloat (fabs (fits[i].ns_per_byte - fits[j].ns_per_byte), <, 4 * se_b);
      }
}

static void
test_parallel (gconstpointer data)
{
  const DevCase *c = data;
  g_autoptr(FitResult) r = fit_case (c);

  if (g_test_verbose ())
    fit_print_report (r, stderr);
  g_assert_cmpuint (r->queue.parallelism, ==, c->parallelism);
  g_assert_true (r->queue.parallelism_bounded);
  assert_truth (&r->read);
}

#define CHECK_KEY(kf, key, expected)                                              \
  G_STMT_START {                                                                  \
    g_autoptr(GError) e_ = NULL;                                                  \
    g_autofree char *v_ = g_key_file_get_string (kf, "device dev7_0", key, &e_);   \
    g_assert_no_error (e_);                                                       \
    g_assert_cmpstr (v_, ==, expected);                                           \
  } G_STMT_END

/* The scenario of a loop device: via = loop with a model of the fitted
 * parallelism, which the simulator's scenario loader accepts; a device of
 * another major gets the depth the trace showed. */
static void
test_scenario_queue (void)
{
  g_autoptr(GArray) rq = generate (&parallel_cases[0]);
  g_autoptr(FitResult) loop = NULL, disk = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = NULL, *other = NULL;
  const char *const ignore[] = { "sched", "devno", "via", "loop_max_io", NULL };
  g_autoptr(DevModel) dev = NULL;

  loop = fit_arrays ("/t", NULL, 0, (const TraceRequest *) rq->data, rq->len, "/dev/loop0",
                     "none", NULL, NULL, &error);
  g_assert_no_error (error);
  text = fit_scenario_to_data (loop);
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  CHECK_KEY (kf, "parallelism", "4");
  CHECK_KEY (kf, "queue_depth", "4");
  CHECK_KEY (kf, "via", "loop");
  CHECK_KEY (kf, "loop_max_io", "1280KiB");
  dev = dev_model_new_from_keyfile ("dev7_0", kf, "device dev7_0", ignore, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (dev->parallelism, ==, 4);

  for (guint i = 0; i < rq->len; i++)
    g_array_index (rq, TraceRequest, i).dev_major = 8;
  disk = fit_arrays ("/t", NULL, 0, (const TraceRequest *) rq->data, rq->len, "/dev/sdb",
                     "none", NULL, NULL, &error);
  g_assert_no_error (error);
  other = fit_scenario_to_data (disk);
  g_assert_null (strstr (other, "via = loop"));
  g_assert_nonnull (strstr (other, "\nparallelism = 4\n"));
  {
    g_autofree char *want = g_strdup_printf ("\nqueue_depth = %u\n", disk->max_in_flight);
    g_assert_nonnull (strstr (other, want));
  }
  g_assert_cmpuint (disk->max_in_flight, >, 4);
}

/* ---- The tail ----------------------------------------------------------- */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

#define TAIL_N          20000
#define TAIL_THRESHOLD  1000000.0   /* 1 ms */

/* The fixed model's fraction of overheads above @x, from its quantiles
 * (piecewise-linear quantile function). */
static double
model_fraction_above (const double *p, const double *q, guint n, double x)
{
  if (x >= q[n - 1])
    return 0.0;
  for (guint k = 0; k + 1 < n; k++)
    if (x < q[k + 1])
      {
        double f = q[k + 1] > q[k] ? (x - q[k]) / (q[k + 1] - q[k]) : 0.0;

        return 1.0 - (p[k] + MAX (0.0, f) * (p[k + 1] - p[k]));
      }
  return 0.0;
}

/* Mean of the piecewise-linear quantile function, and the bound on how far
 * it can lie from the data's mean: half the spread of each step times its
 * mass. */
static double
model_mean (const double *p, const double *q, guint n, double *bound)
{
  double mean = 0.0;

  *bound = 0.0;
  for (guint k = 0; k + 1 < n; k++)
    {
      mean += (p[k + 1] - p[k]) * (q[k] + q[k + 1]) / 2;
      *bound += (p[k + 1] - p[k]) * (q[k + 1] - q[k]) / 2;
    }
  return mean;
}

/* Isolated 4 KiB requests whose overhead is 100 us +- 10 us, but 0.2 % of
 * them 1 ms plus an exponential of 3 ms: the fraction above 1 ms and the
 * mean of the fitted model must be the traced ones, where 21 evenly spaced
 * quantiles (the old fit) put 5 % of the mass between p95 and the maximum. */
static void
test_tail (void)
{
  g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(DevModel) dev = NULL;
  g_autoptr(Sim) sim = sim_new (5);
  g_autofree char *text = NULL;
  g_autofree double *sorted = g_new (double, TAIL_N);
  const char *const ignore[] = { "sched", "devno", "via", "loop_max_io", NULL };
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  double even_p[FIT_N_QUANTILES], even_q[FIT_N_QUANTILES];
  double traced = 0, sum = 0, drawn = 0, bound, m, step = 1.0;
  const FitDeviceOp *f;
  const guint n_draws = 200000;
  gint64 t = 0;

  gsl_rng_set (rng, 77);
  for (guint i = 0; i < TAIL_N; i++)
    {
      TraceRequest rq = { .dev_major = 7, .op = TRACE_OP_READ, .nr_sectors = 8 };
      double o = gsl_rng_uniform (rng) < 0.002 ? TAIL_THRESHOLD + gsl_ran_exponential (rng, 3e6)
                                               : 100000.0 + gsl_ran_gaussian (rng, 10000.0);

      rq.issue_ns = t;
      rq.complete_ns = t + (gint64) llround (o);
      t = rq.complete_ns + 20000;
      g_array_append_val (a, rq);
      sorted[i] = (double) (rq.complete_ns - rq.issue_ns);
      traced += sorted[i] > TAIL_THRESHOLD;
      sum += sorted[i];
    }
  gsl_rng_free (rng);
  traced /= TAIL_N;
  qsort (sorted, TAIL_N, sizeof (double), cmp_double);
  r = fit_arrays ("/tail", NULL, 0, (const TraceRequest *) a->data, a->len, "/dev/loop0",
                  "none", NULL, NULL, &error);
  g_assert_no_error (error);
  f = &r->read;
  g_assert_false (f->bandwidth_identified);

  /* The model's fraction above 1 ms differs from the traced one by at most
   * the mass of the step holding 1 ms, plus one request. */
  for (guint k = 0; k + 1 < f->n_quantiles; k++)
    if (f->overhead_quantiles_ns[k] <= TAIL_THRESHOLD
        && TAIL_THRESHOLD < f->overhead_quantiles_ns[k + 1])
      step = f->quantile_p[k + 1] - f->quantile_p[k];
  g_assert_cmpfloat (step, <=, 0.001 + 1e-12);
  g_assert_cmpfloat (fabs (model_fraction_above (f->quantile_p, f->overhead_quantiles_ns,
                                                 f->n_quantiles, TAIL_THRESHOLD) - traced),
                     <=, step + 1.0 / TAIL_N);
  m = model_mean (f->quantile_p, f->overhead_quantiles_ns, f->n_quantiles, &bound);
  g_assert_cmpfloat (fabs (m - sum / TAIL_N), <=, bound + 1e-6 * m);
  /* The last step to the maximum holds one request's mass. */
  g_assert_cmpfloat (1.0 - f->quantile_p[f->n_quantiles - 2], <=, 1.0 / (TAIL_N - 1) + 1e-12);

  /* The scenario's device draws that tail: 200,000 draws from it lie
   * within four binomial standard errors of the model's fraction. */
  text = fit_scenario_to_data (r);
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  dev = dev_model_new_from_keyfile ("dev7_0", kf, "device dev7_0", ignore, &error);
  g_assert_no_error (error);
  dev->rng = sim_rng (sim, "test.tail");
  for (guint i = 0; i < n_draws; i++)
    drawn += dev_model_service_time (dev, SIM_OP_READ, (guint64) i * 64, 8, 0) > TAIL_THRESHOLD;
  drawn /= n_draws;
  g_assert_cmpfloat (fabs (drawn - traced), <=,
                     step + 1.0 / TAIL_N + 4 * sqrt (traced * (1 - traced) / n_draws));

  /* Against the old list of 21 evenly spaced quantiles of the same data:
   * its last step spreads 5 % from p95 to the maximum, many times the
   * traced fraction and mean. */
  for (guint k = 0; k < FIT_N_QUANTILES; k++)
    {
      double h = (double) k / (FIT_N_QUANTILES - 1) * (TAIL_N - 1);
      guint lo = (guint) floor (h);

      even_p[k] = (double) k / (FIT_N_QUANTILES - 1);
      even_q[k] = lo >= TAIL_N - 1 ? sorted[TAIL_N - 1]
                                   : sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
    }
  g_assert_cmpfloat (model_fraction_above (even_p, even_q, FIT_N_QUANTILES, TAIL_THRESHOLD),
                     >, 5 * traced);
  g_assert_cmpfloat (model_mean (even_p, even_q, FIT_N_QUANTILES, &bound), >, 2 * sum / TAIL_N);
}

/* ---- A line that crosses zero ------------------------------------------ */

/* Three isolated writes of two sizes whose line crosses zero below the
 * smaller size (4 KiB in 10 us, 8 KiB in 60 us: intercept -40 us): no
 * device's cost, so the fit falls back to the service times themselves
 * (mean 43.333 us, no bandwidth), as for one size, and the device model
 * accepts the scenario (a negative time it refuses). */
static void
test_negative_intercept (void)
{
  static const struct { guint32 sectors; gint64 service_ns; } writes[] = {
    { 8, 10000 }, { 16, 60000 }, { 16, 60000 },
  };
  g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(DevModel) dev = NULL;
  g_autofree char *text = NULL;
  const char *const ignore[] = { "sched", "devno", "via", "loop_max_io", NULL };
  gint64 t = 0;

  for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
    {
      TraceRequest rq = { .dev_major = 7, .op = TRACE_OP_WRITE, .nr_sectors = writes[i].sectors,
                          .sector = 1024 * i };

      rq.issue_ns = t;
      rq.complete_ns = t + writes[i].service_ns;
      t = rq.complete_ns + 100000;
      g_array_append_val (a, rq);
    }
  r = fit_arrays ("/negative", NULL, 0, (const TraceRequest *) a->data, a->len, "/dev/loop0",
                  "none", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (r->write.fitted);
  g_assert_false (r->write.bandwidth_identified);
  g_assert_cmpfloat (fabs (r->write.overhead_ns - 130000.0 / 3), <, 1.0);
  text = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (text, "\nwrite_overhead = 43.333us\n"));
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  dev = dev_model_new_from_keyfile ("dev7_0", kf, "device dev7_0", ignore, &error);
  g_assert_no_error (error);
  g_assert_nonnull (dev);
}

/* ---- The fixed model's probabilities ------------------------------------ */

typedef struct {
  const char *keys;
  const char *error;    /* NULL: valid */
} ProbCase;

static const ProbCase prob_cases[] = {
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,0.9,1\n", NULL },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,1\n", "has 2 items but the quantiles 3" },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,0.9,0.99\n", "must run from 0 to 1" },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0.1,0.9,1\n", "must run from 0 to 1" },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,0.9,0.9\n", "must increase" },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,x,1\n", "not a probability" },
  { "overhead_quantiles = 1us,2us,3us\noverhead_quantile_p = 0,1.5,1\n", "not a probability" },
  { "overhead_quantile_p = 0,0.5,1\n", "given without the quantiles" },
};

static void
test_probabilities (gconstpointer data)
{
  const ProbCase *c = data;
  g_autofree char *ini = g_strdup_printf ("[device]\nkind = fixed\nbandwidth = 1000000MB/s\n%s",
                                          c->keys);
  g_autoptr(GError) error = NULL;
  g_autoptr(DevModel) dev = dev_model_new_from_data ("p", ini, &error);

  if (c->error == NULL)
    {
      g_assert_no_error (error);
      /* Without a stream the model pays the median; p = 0.5 lies on the
       * first step, from 1 us at p = 0 to 2 us at p = 0.9. */
      g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 0, 0), ==,
                       1000 + llround (1000 * 0.5 / 0.9));
      return;
    }
  g_assert_null (dev);
  g_assert_nonnull (error);
  if (strstr (error->message, c->error) == NULL)
    g_error ("'%s' does not say '%s'", error->message, c->error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (serial_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-device/serial/%s", serial_cases[i].name);
      g_test_add_data_func (path, &serial_cases[i], test_serial);
    }
  g_test_add_func ("/fit-device/serial/agree", test_serial_agree);
  for (guint i = 0; i < G_N_ELEMENTS (parallel_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-device/parallel/%s", parallel_cases[i].name);
      g_test_add_data_func (path, &parallel_cases[i], test_parallel);
    }
  g_test_add_func ("/fit-device/scenario/queue", test_scenario_queue);
  g_test_add_func ("/fit-device/tail", test_tail);
  g_test_add_func ("/fit-device/scenario/negative-intercept", test_negative_intercept);
  for (guint i = 0; i < G_N_ELEMENTS (prob_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit-device/quantile-p/%u", i);
      g_test_add_data_func (path, &prob_cases[i], test_probabilities);
    }
  return g_test_run ();
}
