/* test-dev-models.c — device service-time models (models/dev/): the fixed
 * and SSD formulas, the disk's seek curve, rotation, zones and lookahead,
 * parameter errors, and the model files shipped in models/devices/. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "models/dev/dev.h"
#include "sim/sim.h"

#define MB  1e6

static DevModel *
model_new (const char *ini)
{
  g_autoptr(GError) error = NULL;
  DevModel *dev = dev_model_new_from_data ("test", ini, &error);

  g_assert_no_error (error);
  g_assert_nonnull (dev);
  return dev;
}

/* Build must fail with DEV_ERROR @code, and the message must contain
 * every string in @needles. */
static void
assert_model_error (const char *ini, gint code, const char *const *needles)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DevModel) dev = dev_model_new_from_data ("bad", ini, &error);

  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, code);
  for (gsize i = 0; needles[i] != NULL; i++)
    if (strstr (error->message, needles[i]) == NULL)
      g_error ("error message '%s' lacks '%s'", error->message, needles[i]);
}

static SimTime
transfer_ns (guint32 nr_sectors, double rate)
{
  return (SimTime) llround (nr_sectors * 512.0 * 1e9 / rate);
}

/* ---------------------------------------------------------------- registry */

static void
test_registry (void)
{
  const DevOps *const *all = dev_ops_all ();
  const char *names[] = { "fixed", "disk", "ssd", "empirical" };
  gsize n = 0;

  for (; all[n] != NULL; n++)
    g_assert_true (dev_ops_lookup (all[n]->name) == all[n]);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (names));
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GString) s = g_string_new (NULL);
      const DevOps *ops = dev_ops_lookup (names[i]);

      g_assert_nonnull (ops);
      dev_ops_describe_params (ops, s);
      g_assert_nonnull (strstr (s->str, "capacity"));
      g_assert_nonnull (strstr (s->str, "queue_depth"));
    }
  g_assert_null (dev_ops_lookup ("tape"));
}

/* ------------------------------------------------------------------ fixed */

static void
test_fixed_formula (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = fixed\n"
                                       "overhead = 29ms\nbandwidth = 1.4MB/s\n"
                                       "write_overhead = 31ms\nwrite_bandwidth = 0.7MB/s\n");
  guint32 sizes[] = { 1, 8, 256, 2048 };

  g_assert_cmpuint (dev->parallelism, ==, 1);
  g_assert_false (dev->rotational);
  g_assert_cmpuint (dev->queue_depth, ==, 1);
  g_assert_cmpuint (dev->capacity_bytes, ==, G_GUINT64_CONSTANT (64) << 30);
  g_assert_cmpuint (dev->max_sectors, ==, 1024);
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      /* Position and time must not matter. */
      SimTime r1 = dev_model_service_time (dev, SIM_OP_READ, 1000, sizes[i], 0);
      SimTime r2 = dev_model_service_time (dev, SIM_OP_READ, 99999, sizes[i], 123456789);
      SimTime w = dev_model_service_time (dev, SIM_OP_WRITE, 1000, sizes[i], 0);

      g_assert_cmpint (r1, ==, 29 * SIM_NS_PER_MS + transfer_ns (sizes[i], 1.4 * MB));
      g_assert_cmpint (r2, ==, r1);
      g_assert_cmpint (w, ==, 31 * SIM_NS_PER_MS + transfer_ns (sizes[i], 0.7 * MB));
    }
}

static void
test_fixed_defaults (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = fixed\n");
  g_autoptr(DevModel) dev2 = model_new ("[device]\nkind = fixed\noverhead = 2ms\n"
                                        "bandwidth = 20MB/s\nparallelism = 3\n");

  /* 1ms + 4096 B at 10 MB/s = 1ms + 409.6us, for reads and writes alike. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0), ==, 1409600);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 0, 8, 0), ==, 1409600);
  /* Without sequential_* keys, continuing requests pay the same. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 8, 8, 0), ==, 1409600);
  /* write_* follow the read values the user gave. */
  g_assert_cmpint (dev_model_service_time (dev2, SIM_OP_WRITE, 0, 8, 0), ==,
                   2 * SIM_NS_PER_MS + transfer_ns (8, 20 * MB));
  g_assert_cmpuint (dev2->parallelism, ==, 3);
}

/* A request continuing the previous one pays the sequential overhead, per
 * operation; anything else pays the full overhead. */
static void
test_fixed_sequential (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = fixed\noverhead = 100ms\nbandwidth = 10MB/s\n"
                                       "write_overhead = 150ms\nsequential_overhead = 1ms\n"
                                       "sequential_write_overhead = 2ms\n");

  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0), ==, 100409600);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 8, 8, 0), ==, 1409600);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 16, 8, 0), ==, 2409600);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 100, 8, 0), ==, 150409600);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 100, 8, 0), ==, 100409600);
}

/* ---------------------------------------------------- fixed: quantiles */

/* Dvoretzky–Kiefer–Wolfowitz: sup |F_n - F| > eps with probability at most
 * 2 exp (-2 n eps^2); eps for a false-failure probability of 1e-9. */
static double
dkw_eps (guint n)
{
  return sqrt (log (2.0 / 1e-9) / (2.0 * n));
}

/* The overheads a fixed model at 1 TB/s draws from @rng_name of a Sim
 * seeded @seed: @n read service times of 1 sector, less its transfer time
 * (512 ps, rounded to 1 ns). */
static SimTime *
draw_overheads (const char *ini, guint64 seed, const char *rng_name, guint n)
{
  g_autoptr(Sim) sim = sim_new (seed);
  g_autoptr(DevModel) dev = model_new (ini);
  SimTime *t = g_new (SimTime, n);

  dev->rng = sim_rng (sim, rng_name);
  for (guint i = 0; i < n; i++)
    /* Sector 0 after a request that ended at 1: never sequential. */
    t[i] = dev_model_service_time (dev, SIM_OP_READ, 0, 1, 0) - transfer_ns (1, 1e12);
  return t;
}

static double
fraction_at_most (const SimTime *t, guint n, SimTime x)
{
  guint k = 0;

  for (guint i = 0; i < n; i++)
    k += t[i] <= x;
  return (double) k / n;
}

/* Inverse transform: the empirical CDF of the draws must match the
 * piecewise-linear CDF the quantiles define, at the quantiles themselves
 * (F = k / (n - 1)) and between them (F interpolated). */
static void
test_fixed_quantiles_draws (void)
{
  const guint n = 20000;
  const double eps = dkw_eps (n);
  const SimTime q[] = { 0, 100000, 200000, 1000000 };
  g_autofree SimTime *t = draw_overheads ("[device]\nkind = fixed\nbandwidth = 1000000MB/s\n"
                                          "overhead = 5ms\n"
                                          "overhead_quantiles = 0us, 100us,200us ,1ms\n",
                                          7, "x", n);

  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpint (t[i], >=, q[0]);
      g_assert_cmpint (t[i], <=, q[3]);
    }
  for (guint k = 1; k < G_N_ELEMENTS (q) - 1; k++)
    g_assert_cmpfloat (fabs (fraction_at_most (t, n, q[k]) - k / 3.0), <=, eps);
  /* Halfway between 200us and 1ms: F = 2/3 + 1/6. */
  g_assert_cmpfloat (fabs (fraction_at_most (t, n, 600000) - 5.0 / 6.0), <=, eps);
  /* A quarter of the way into the first bin: F = 1/12. */
  g_assert_cmpfloat (fabs (fraction_at_most (t, n, 25000) - 1.0 / 12.0), <=, eps);
  /* `overhead` (5ms) is ignored: nothing comes near it. */
  g_assert_cmpfloat (fraction_at_most (t, n, 1000000), ==, 1.0);
}

/* Repeated quantiles are an atom: half the draws are exactly 50us. */
static void
test_fixed_quantiles_atom (void)
{
  const guint n = 20000;
  const double eps = dkw_eps (n);
  g_autofree SimTime *t = draw_overheads ("[device]\nkind = fixed\nbandwidth = 1000000MB/s\n"
                                          "overhead_quantiles = 50us,50us,150us\n",
                                          3, "x", n);

  g_assert_cmpfloat (fraction_at_most (t, n, 49999), ==, 0.0);
  g_assert_cmpfloat (fabs (fraction_at_most (t, n, 50000) - 0.5), <=, eps);
  g_assert_cmpfloat (fabs (fraction_at_most (t, n, 100000) - 0.75), <=, eps);
}

/* Same seed and stream, same draws; another seed, other draws. */
static void
test_fixed_quantiles_deterministic (void)
{
  const char *ini = "[device]\nkind = fixed\noverhead_quantiles = 10us,1ms\n";
  const guint n = 100;
  g_autofree SimTime *a = draw_overheads (ini, 11, "device.d.service", n);
  g_autofree SimTime *b = draw_overheads (ini, 11, "device.d.service", n);
  g_autofree SimTime *c = draw_overheads (ini, 12, "device.d.service", n);

  g_assert_cmpmem (a, n * sizeof *a, b, n * sizeof *b);
  g_assert_true (memcmp (a, c, n * sizeof *a) != 0);
}

/* Without a random stream the overhead is the median of the list; writes
 * inherit the read list unless they have their own; a distinct
 * sequential_overhead is a discount that still applies. */
static void
test_fixed_quantiles_median (void)
{
  g_autoptr(DevModel) even = model_new ("[device]\nkind = fixed\nbandwidth = 10MB/s\n"
                                        "overhead = 9ms\n"
                                        "overhead_quantiles = 10us,20us,40us,80us\n");
  g_autoptr(DevModel) odd = model_new ("[device]\nkind = fixed\nbandwidth = 10MB/s\n"
                                       "overhead_quantiles = 1ms,2ms,7ms\n"
                                       "write_overhead = 3ms\n"
                                       "write_overhead_quantiles = 4ms,6ms\n"
                                       "sequential_overhead = 100us\n");
  g_autoptr(GString) dump = g_string_new (NULL);

  g_assert_null (even->rng);
  /* h = 0.5 * 3 = 1.5: halfway between 20us and 40us. */
  g_assert_cmpint (dev_model_service_time (even, SIM_OP_READ, 0, 8, 0), ==,
                   30000 + transfer_ns (8, 10 * MB));
  g_assert_cmpint (dev_model_service_time (even, SIM_OP_WRITE, 100, 8, 0), ==,
                   30000 + transfer_ns (8, 10 * MB));
  /* Sequential, no discount configured: the median again. */
  g_assert_cmpint (dev_model_service_time (even, SIM_OP_READ, 108, 8, 0), ==,
                   30000 + transfer_ns (8, 10 * MB));
  g_assert_cmpint (dev_model_service_time (odd, SIM_OP_READ, 0, 8, 0), ==,
                   2 * SIM_NS_PER_MS + transfer_ns (8, 10 * MB));
  g_assert_cmpint (dev_model_service_time (odd, SIM_OP_READ, 8, 8, 0), ==,
                   100000 + transfer_ns (8, 10 * MB));
  g_assert_cmpint (dev_model_service_time (odd, SIM_OP_WRITE, 1000, 8, 0), ==,
                   5 * SIM_NS_PER_MS + transfer_ns (8, 10 * MB));
  dev_model_dump (even, dump);
  g_assert_nonnull (strstr (dump->str, "read: overhead drawn from 4 quantiles, min 10000 ns, "
                                       "median 30000 ns, max 80000 ns"));
}

static void
test_fixed_quantiles_errors (void)
{
  static const struct {
    const char *line;
    const char *needles[3];
  } cases[] = {
    { "overhead_quantiles = 5us", { "'overhead_quantiles'", "1 item", NULL } },
    { "overhead_quantiles = 1ms,500us", { "'overhead_quantiles'", "item 2", "must not decrease" } },
    { "overhead_quantiles = 1ms,2parsecs", { "'overhead_quantiles'", "item 2", "parsecs" } },
    { "overhead_quantiles = 1,2", { "'overhead_quantiles'", "item 1", "unit" } },
    { "overhead_quantiles = -1ms,2ms", { "'overhead_quantiles'", "item 1", "negative" } },
    { "overhead_quantiles = 1ms,,2ms", { "'overhead_quantiles'", "item 2", "empty" } },
    { "write_overhead_quantiles = 2ms,1ms", { "'write_overhead_quantiles'", "item 2", NULL } },
    { "overhead_quantiles = 1ms,2ms\nwrite_overhead = 3ms",
      { "'write_overhead_quantiles'", "write_overhead", NULL } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *ini = g_strdup_printf ("[device]\nkind = fixed\n%s\n", cases[i].line);
      const char *needles[4] = { cases[i].needles[0], cases[i].needles[1],
                                 cases[i].needles[2], NULL };

      assert_model_error (ini, DEV_ERROR_PARAM, needles);
    }
}

/* -------------------------------------------------------------- empirical */

/* Two size classes of reads, the small one split into sequential and
 * moved; writes have one cell of their own. */
static const char empirical_ini[] =
  "[device]\nkind = empirical\n"
  "read_cells = 0-4096/0-0 n=10: 0:10us 1:30us; 0-4096/1-inf n=20: 0:1ms 0.5:2ms 1:6ms;"
  " 4096-inf/0-inf n=5: 0:50us 1:50us\n"
  "write_cells = 0-inf/0-inf n=7: 0:100us 0.5:300us 1:301us\n";

/* Without a stream each request takes its cell's median; the cell is
 * chosen by size and by the distance from the last request started. */
static void
test_empirical_cells (void)
{
  g_autoptr(DevModel) dev = model_new (empirical_ini);
  g_autoptr(GString) dump = g_string_new (NULL);

  /* The first request has no predecessor: infinitely far, so moved. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 1000, 8, 0), ==, 2000000);
  /* Starts where it ended: sequential, median of 10us..30us. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 1008, 8, 0), ==, 20000);
  /* 8 KiB is the larger class whatever the distance. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 1016, 16, 0), ==, 50000);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 5, 16, 0), ==, 50000);
  /* 4096 bytes exactly is the small class (upper bound included). */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 9000, 8, 0), ==, 2000000);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 1, 8, 0), ==, 300000);
  g_assert_cmpuint (dev->parallelism, ==, 1);
  dev_model_dump (dev, dump);
  g_assert_nonnull (strstr (dump->str, "read: 3 cells, distance over the last 1 started, "
                                       "0 requests outside every cell"));
}

/* A window of 2: a request that continues the one before last is
 * sequential too (two interleaved streams). */
static void
test_empirical_window (void)
{
  g_autofree char *ini = g_strconcat (empirical_ini, "distance_window = 2\nparallelism = 4\n",
                                      NULL);
  g_autoptr(DevModel) dev = model_new (ini);

  g_assert_cmpuint (dev->parallelism, ==, 4);
  dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0);
  dev_model_service_time (dev, SIM_OP_READ, 100000, 8, 0);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 8, 8, 0), ==, 20000);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 100008, 8, 0), ==, 20000);
}

/* Outside every cell: the nearest in size, then in distance, counted. */
static void
test_empirical_outside (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = empirical\n"
                                       "read_cells = 0-4096/0-0 n=10: 0:10us 1:10us;"
                                       " 0-4096/1-2048 n=10: 0:1ms 1:1ms;"
                                       " 8192-16384/0-inf n=3: 0:7ms 1:7ms\n");
  g_autoptr(GString) dump = g_string_new (NULL);

  dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0);
  /* 4 KiB moved 1 GiB: nearest distance class of its size, 1..2048. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 2097152, 8, 0), ==, 1000000);
  /* 6 KiB lies between the classes, nearer 8 KiB in log2 (0.58 against
   * 0.42 of a doubling): the larger class. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 12, 0), ==, 7000000);
  /* 64 KiB: only the 8-16 KiB class is near. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 128, 0), ==, 7000000);
  dev_model_dump (dev, dump);
  /* The first request (infinitely far) is outside too. */
  g_assert_nonnull (strstr (dump->str, "4 requests outside every cell"));
}

/* Draws follow the cell's quantiles (inverse transform), as for the
 * fixed kind: the empirical CDF at the middle quantile. */
static void
test_empirical_draws (void)
{
  const guint n = 20000;
  g_autoptr(Sim) sim = sim_new (5);
  g_autoptr(DevModel) dev = model_new (empirical_ini);
  guint at_most_2ms = 0, in_range = 0;

  dev->rng = sim_rng (sim, "x");
  for (guint i = 0; i < n; i++)
    {
      /* Each moves far from the previous: the 1ms..6ms cell. */
      SimTime t = dev_model_service_time (dev, SIM_OP_READ, (i % 2) * 1000000, 8, 0);
      at_most_2ms += t <= 2000000;
      in_range += t >= 1000000 && t <= 6000000;
    }
  g_assert_cmpuint (in_range, ==, n);
  g_assert_cmpfloat (fabs ((double) at_most_2ms / n - 0.5), <=, dkw_eps (n));
}

static void
test_empirical_errors (void)
{
  static const struct {
    const char *line;
    const char *needles[3];
  } cases[] = {
    { "read_cells = ", { "'read_cells'", "0 cells", NULL } },
    { "read_cells = 0-4096/0-0 n=1 0 1", { "'read_cells'", "no ':'", NULL } },
    { "read_cells = 4096-4096/0-0 n=1: 0:1us 1:2us", { "'read_cells'", "cell 1", "LO below HI" } },
    { "read_cells = 0-4096/5-1 n=1: 0:1us 1:2us", { "'read_cells'", "cell 1", NULL } },
    { "read_cells = 0-4096/0-0 x=1: 0:1us 1:2us", { "'read_cells'", "n=N", NULL } },
    { "read_cells = 0-4096/0-0 n=1: 0:1us", { "'read_cells'", "at least two", NULL } },
    { "read_cells = 0-4096/0-0 n=1: 0:2us 1:1us", { "'read_cells'", "must not fall", NULL } },
    { "read_cells = 0-4096/0-0 n=1: 0.5:1us 0.5:2us 1:3us", { "'read_cells'", "rise", NULL } },
    { "read_cells = 0-4096/0-0 n=1: 0:1us 0.5:2us", { "'read_cells'", "p 0 to p 1", NULL } },
    { "read_cells = 0-4096/0-0 n=1: 0:1us 1:2parsecs", { "'read_cells'", "parsecs", NULL } },
    { "read_cells = 0-1/0-0 n=1: 0:1us 1:2us; x", { "'read_cells'", "cell 2", NULL } },
    { "read_cells = 0-1/0-0 n=1: 0:1us 1:2us\ndistance_window = 0",
      { "'distance_window'", NULL, NULL } },
    { "read_cells = 0-1/0-0 n=1: 0:1us 1:2us\nparallelism = 0", { "'parallelism'", NULL, NULL } },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *ini = g_strdup_printf ("[device]\nkind = empirical\n%s\n", cases[i].line);
      const char *needles[4] = { cases[i].needles[0], cases[i].needles[1],
                                 cases[i].needles[2], NULL };

      assert_model_error (ini, DEV_ERROR_PARAM, needles);
    }
}

/* Mutated cell lists (bytes replaced, dropped, doubled) either load or
 * fail with an error naming the key: never a crash, never a model whose
 * draws leave its cells (run under the sanitizers in CI). */
static void
test_empirical_mutations (void)
{
  static const char alphabet[] = "0123456789-/:;. =ninfus";
  const char *base = "0-4096/0-0 n=10: 0:10us 0.5:20us 1:30us; 4096-inf/1-inf n=5: 0:1ms 1:2ms";
  GRand *rng = g_rand_new_with_seed (17);
  guint loaded = 0;

  for (guint round = 0; round < 3000; round++)
    {
      GString *cells = g_string_new (base);
      g_autoptr(GError) error = NULL;
      g_autofree char *ini = NULL;
      DevModel *dev;

      for (guint k = g_rand_int_range (rng, 1, 4); k > 0; k--)
        {
          guint at = g_rand_int_range (rng, 0, (gint32) cells->len);
          switch (g_rand_int_range (rng, 0, 3))
            {
            case 0:
              cells->str[at] = alphabet[g_rand_int_range (rng, 0, sizeof alphabet - 1)];
              break;
            case 1:
              g_string_erase (cells, at, 1);
              break;
            default:
              g_string_insert_c (cells, at, cells->str[at]);
              break;
            }
        }
      ini = g_strdup_printf ("[device]\nkind = empirical\nread_cells = %s\n", cells->str);
      g_string_free (cells, TRUE);
      dev = dev_model_new_from_data ("m", ini, &error);
      if (dev == NULL)
        {
          g_assert_nonnull (error);
          g_assert_nonnull (strstr (error->message, "read_cells"));
          continue;
        }
      loaded++;
      for (guint i = 0; i < 16; i++)
        {
          SimTime t = dev_model_service_time (dev, i % 2 ? SIM_OP_WRITE : SIM_OP_READ,
                                              (guint64) g_rand_int (rng) % 100000,
                                              g_rand_int_range (rng, 1, 4096), 0);
          g_assert_cmpint (t, >=, 0);
        }
      dev_model_free (dev);
    }
  g_test_message ("%u of 3000 mutated lists loaded", loaded);
  g_rand_free (rng);
}

/* -------------------------------------------------------------------- ssd */

/* Each request pays its latency, then its transfer at the full bandwidth
 * through the one pipeline; when the pipeline is idle, that is
 * latency + bytes / bandwidth. */
static void
test_ssd_formula (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\n");
  g_autoptr(DevModel) dev4 = model_new ("[device]\nkind = ssd\nparallelism = 4\n"
                                        "read_latency = 100us\nwrite_latency = 30us\n"
                                        "read_bandwidth = 400MB/s\nwrite_bandwidth = 200MB/s\n"
                                        "queue_depth = 8\n");

  g_assert_cmpuint (dev->parallelism, ==, 8);
  g_assert_cmpuint (dev->queue_depth, ==, 32);
  g_assert_false (dev->rotational);
  /* 80us + 4096 B / 500MB/s */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 8, 0), ==,
                   80 * SIM_NS_PER_US + transfer_ns (8, 500 * MB));
  /* Long after the read: the pipeline is idle again. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 77, 256, SIM_NS_PER_S), ==,
                   20 * SIM_NS_PER_US + transfer_ns (256, 450 * MB));

  g_assert_cmpuint (dev4->parallelism, ==, 4);
  g_assert_cmpuint (dev4->queue_depth, ==, 8);
  /* 1 MiB read: 100us + 1048576 B / 400 MB/s = 100us + 2621.44us */
  g_assert_cmpint (dev_model_service_time (dev4, SIM_OP_READ, 0, 2048, 0), ==, 2721440);
  g_assert_cmpint (dev_model_service_time (dev4, SIM_OP_WRITE, 0, 2048, SIM_NS_PER_S), ==,
                   30 * SIM_NS_PER_US + transfer_ns (2048, 200 * MB));
}

/* A lone 512 KiB read gets the whole bandwidth, not 1/parallelism of it,
 * and so does every later one at queue depth 1. */
static void
test_ssd_lone_large (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\nread_latency = 90us\n"
                                       "read_bandwidth = 540MB/s\nparallelism = 8\n");
  const SimTime expect = 90 * SIM_NS_PER_US + transfer_ns (1024, 540 * MB);
  SimTime now = 12345;

  /* 90us + 524288 B / 540 MB/s = 90us + 970.904us */
  g_assert_cmpint (expect, ==, 1060904);
  for (guint i = 0; i < 4; i++)
    {
      SimTime t = dev_model_service_time (dev, SIM_OP_READ, 1024 * i, 1024, now);

      g_assert_cmpint (t, ==, expect);
      now += t;
    }
}

/* Two 4 KiB reads started together: both latencies run at once, the
 * transfers one after the other. */
static void
test_ssd_overlap (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\nread_latency = 90us\n"
                                       "read_bandwidth = 540MB/s\n");
  const SimTime now = 5 * SIM_NS_PER_MS;
  const SimTime lat = 90 * SIM_NS_PER_US, xfer = transfer_ns (8, 540 * MB);
  SimTime a = dev_model_service_time (dev, SIM_OP_READ, 800, 8, now);
  SimTime b = dev_model_service_time (dev, SIM_OP_READ, 9000, 8, now);

  /* 4096 B / 540 MB/s = 7585.185 ns */
  g_assert_cmpint (xfer, ==, 7585);
  g_assert_cmpint (a, ==, lat + xfer);
  g_assert_cmpint (b, ==, lat + 2 * xfer);
  /* A third started 1 us later finishes its latency before the pipeline
   * frees, so it waits for both earlier transfers. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 100, 8, now + SIM_NS_PER_US), ==,
                   lat + 3 * xfer - SIM_NS_PER_US);
  /* One starting later than the pipeline frees pays only its own cost. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 100, 8, now + SIM_NS_PER_MS), ==,
                   lat + xfer);
}

/* Drive the model as sim-device.c does: `parallelism` servers, each
 * starting the next request as soon as its previous one ends.  However
 * many large requests overlap, the bytes moved never outrun the bandwidth:
 * for every completion, the bytes done by then over the time since the
 * first start stay <= the bandwidth.  Requests of 128 KiB and more keep
 * the pipeline busy ((P - 1) transfers > one latency), so the span is
 * exactly one latency plus the sum of the transfers. */
static void
test_ssd_aggregate (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\nread_latency = 90us\n"
                                       "read_bandwidth = 540MB/s\nparallelism = 8\n");
  const guint32 sizes[] = { 256, 2048, 1024, 512, 768 };
  const guint P = 8, n = 4000;
  const double bw = 540 * MB;
  SimTime free_at[8] = { 0 };
  SimTime last_end = 0, transfers = 0;
  double bytes = 0.0;

  for (guint i = 0; i < n; i++)
    {
      guint srv = 0;
      guint32 nr = sizes[i % G_N_ELEMENTS (sizes)];
      SimTime t, end;

      for (guint k = 1; k < P; k++)
        if (free_at[k] < free_at[srv])
          srv = k;
      t = dev_model_service_time (dev, SIM_OP_READ, (guint64) i * 2048, nr, free_at[srv]);
      end = free_at[srv] + t;
      /* Transfers leave the pipeline in start order, back to back. */
      g_assert_cmpint (end, >, last_end);
      if (i > 0)
        g_assert_cmpint (end - last_end, ==, transfer_ns (nr, bw));
      last_end = end;
      free_at[srv] = end;
      transfers += transfer_ns (nr, bw);
      bytes += nr * 512.0;
      g_assert_cmpfloat (bytes / (end / 1e9), <=, bw);
    }
  g_assert_cmpint (last_end, ==, 90 * SIM_NS_PER_US + transfers);
  g_test_message ("%u requests, %.1f MB/s", n, bytes / (last_end / 1e9) / MB);
}

/* Writes use the write latency and bandwidth, and share the pipeline with
 * reads. */
static void
test_ssd_write (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\nread_latency = 90us\n"
                                       "write_latency = 30us\nread_bandwidth = 540MB/s\n"
                                       "write_bandwidth = 520MB/s\n");
  const SimTime rx = transfer_ns (1024, 540 * MB), wx = transfer_ns (1024, 520 * MB);
  SimTime now = SIM_NS_PER_S;

  g_assert_cmpint (wx, !=, rx);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 0, 1024, now), ==,
                   30 * SIM_NS_PER_US + wx);
  now += SIM_NS_PER_S;
  /* A write started with a read transfers after it. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 1024, now), ==,
                   90 * SIM_NS_PER_US + rx);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 5000, 1024, now), ==,
                   90 * SIM_NS_PER_US + rx + wx);
  /* A request without data (a flush) skips the busy pipeline. */
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 0, 0, now), ==,
                   30 * SIM_NS_PER_US);
}

static void
test_ssd_dump (void)
{
  g_autoptr(DevModel) dev = model_new ("[device]\nkind = ssd\n");
  g_autoptr(GString) s = g_string_new (NULL);
  g_autofree char *free_at = NULL;
  SimTime t = dev_model_service_time (dev, SIM_OP_READ, 0, 8, 1000);

  dev_model_dump (dev, s);
  g_test_message ("%s", s->str);
  free_at = g_strdup_printf ("transfer_free_at_ns = %" SIM_TIME_FORMAT "\n", 1000 + t);
  g_assert_nonnull (strstr (s->str, "kind = ssd"));
  g_assert_nonnull (strstr (s->str, "read: latency_ns = 80000"));
  g_assert_nonnull (strstr (s->str, "write: latency_ns = 20000"));
  g_assert_nonnull (strstr (s->str, "pipeline ns_per_byte = 2,"));
  g_assert_nonnull (strstr (s->str, free_at));
}

/* ------------------------------------------------------------------- disk */

static const char disk_ini[] =
  "[device]\nkind = disk\nrpm = 7200\nseek_track = 0.8ms\nseek_avg = 8.5ms\n"
  "seek_full = 16ms\ncylinders = 100000\nouter_rate = 100MB/s\ninner_rate = 50MB/s\n"
  "overhead = 0.2ms\ncapacity = 100GB\n";

static void
test_disk_seek_curve (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  DevDiskGeometry g;
  double prev = -1.0, sum = 0.0;
  const guint64 C = 100000;

  dev_disk_get_geometry (dev, &g);
  g_assert_cmpuint (g.cylinders, ==, C);
  g_assert_cmpfloat (g.seek_b_ns, >=, 0.0);
  g_assert_cmpfloat (g.seek_c_ns, >=, 0.0);
  g_assert_cmpfloat (dev_disk_seek_ns (dev, 0), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (dev_disk_seek_ns (dev, 1), 0.8e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (dev_disk_seek_ns (dev, C - 1), 16e6, 1e-3);

  /* Monotonic over every distance, and the exact mean over random pairs
   * of distinct cylinders (the datasheet's weighted average): P(d = k) =
   * (C - k) / (C (C - 1) / 2). */
  for (guint64 k = 0; k < C; k++)
    {
      double s = dev_disk_seek_ns (dev, k);

      g_assert_cmpfloat (s, >=, prev);
      prev = s;
      if (k > 0)
        sum += (double) (C - k) * s;
    }
  sum /= (double) C * (double) (C - 1) / 2.0;
  /* Only floating-point summation error separates the two: 1e-6 ns. */
  g_assert_cmpfloat_with_epsilon (sum, 8.5e6, 1e-3);
  g_assert_cmpfloat_with_epsilon (g.seek_mean_ns, 8.5e6, 1e-3);
}

/* The continuous view of the same figure: X, Y uniform on [0, 1], distance
 * density 2(1 - x), d = x (C - 1) cylinders, midpoint rule on M cells.
 * The model's mean is over distinct cylinders (d >= 1), this one over the
 * continuum; they differ by at most about seek_full * 2 / C (density <= 2,
 * a monotone integrand bounded by seek_full, cells of 1/C, and a d < 1
 * sliver of weight ~2/C), and the midpoint rule adds less than
 * seek_full * 2 / M for M = 8 C. */
static void
test_disk_seek_mean_quadrature (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  const guint64 C = 100000, M = 8 * C;
  DevDiskGeometry g;
  double sum = 0.0;

  dev_disk_get_geometry (dev, &g);
  for (guint64 i = 0; i < M; i++)
    {
      double x = (i + 0.5) / M;
      double d = x * (C - 1);
      double s = 0.0;

      if (d >= 1.0)
        s = g.seek_a_ns + g.seek_b_ns * sqrt (d - 1.0) + g.seek_c_ns * (d - 1.0);
      sum += 2.0 * (1.0 - x) * s / M;
    }
  g_assert_cmpfloat (fabs (sum - 8.5e6), <=, 2.0 * 16e6 / C + 2.0 * 16e6 / M);
}

static void
test_disk_rotation (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  DevDiskGeometry g;
  SimTime period;
  gboolean seen_small = FALSE, seen_large = FALSE;

  dev_disk_get_geometry (dev, &g);
  period = g.period_ns;
  g_assert_cmpint (period, ==, 8333333);     /* 60 s / 7200 */
  /* 100 MB/s * 8.333 ms / 512 B */
  g_assert_cmpuint (g.spt_outer, ==, (guint) (100e6 * 8333333e-9 / 512));
  g_assert_cmpuint (g.spt_inner, ==, (guint) (50e6 * 8333333e-9 / 512));

  /* Sector 0 is at angle 0: under the head at t = 0, one period later
   * after it has just passed. */
  g_assert_cmpint (dev_disk_rotational_latency_ns (dev, 0, 0), ==, 0);
  g_assert_cmpint (dev_disk_rotational_latency_ns (dev, 0, 1), ==, period - 1);
  g_assert_cmpint (dev_disk_rotational_latency_ns (dev, 0, 5 * period), ==, 0);

  for (guint64 i = 0; i < 20000; i++)
    {
      guint64 sector = i * 7919 * 1013;
      SimTime at = (SimTime) (i * 104729);
      SimTime lat = dev_disk_rotational_latency_ns (dev, sector, at);

      g_assert_cmpint (lat, >=, 0);
      g_assert_cmpint (lat, <, period);
      seen_small |= lat < period / 10;
      seen_large |= lat > period * 9 / 10;
    }
  g_assert_true (seen_small && seen_large);
}

/* A random read costs overhead + seek + rotation + transfer, each part as
 * the model's own pieces compute it. */
static void
test_disk_random_read (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  guint64 sectors = G_GUINT64_CONSTANT (100000000000) / 512;
  guint64 sector = sectors / 3;
  guint64 cyl = dev_disk_sector_cylinder (dev, sector);
  double rate = 100e6 - 50e6 * cyl / (100000.0 - 1);
  SimTime now = 7777777;
  SimTime seek = (SimTime) llround (dev_disk_seek_ns (dev, cyl));   /* head starts at 0 */
  SimTime rot = dev_disk_rotational_latency_ns (dev, sector, now + 200000 + seek);
  SimTime t = dev_model_service_time (dev, SIM_OP_READ, sector, 8, now);

  g_assert_cmpuint (cyl, ==, 33333);
  g_assert_cmpint (t, ==, 200000 + seek + rot + transfer_ns (8, rate));

  /* Head now at cyl: a second read there needs no seek. */
  rot = dev_disk_rotational_latency_ns (dev, sector + 100, now + t + 200000);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, sector + 100, 8, now + t), ==,
                   200000 + rot + transfer_ns (8, rate));
}

/* Over many random 4 KiB reads the parts average out to the figures the
 * model was built from: overhead + seek_avg + half a turn + the mean
 * transfer.  Positions come from a fixed xorshift sequence; the tolerance
 * is five standard errors of the sample mean. */
static void
test_disk_random_mean (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  const guint64 sectors = G_GUINT64_CONSTANT (100000000000) / 512;
  const guint n = 200000;
  guint64 x = G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  double sum = 0.0, sum2 = 0.0, mean, sd, expect;
  SimTime now = 0;

  for (guint i = 0; i < n; i++)
    {
      SimTime t;

      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      t = dev_model_service_time (dev, SIM_OP_READ, x % (sectors - 8), 8, now);
      now += t + 1000 * (x % 997);
      sum += t;
      sum2 += (double) t * t;
    }
  mean = sum / n;
  sd = sqrt ((sum2 / n - mean * mean) / n);
  /* E[1/rate] for a rate uniform on [50, 100] MB/s is ln 2 / 50 MB/s. */
  expect = 0.2e6 + 8.5e6 + 8333333 / 2.0 + 4096 * 1e9 * log (2.0) / 50e6;
  g_test_message ("mean %.0f ns, expected %.0f, standard error %.0f", mean, expect, sd);
  g_assert_cmpfloat (fabs (mean - expect), <=, 5 * sd);
}

static void
test_disk_sequential_lookahead (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  g_autoptr(DevModel) nola = NULL;
  g_autofree char *ini = g_strconcat (disk_ini, "read_lookahead = false\n", NULL);
  SimTime t1 = dev_model_service_time (dev, SIM_OP_READ, 0, 256, 0);
  SimTime t2 = dev_model_service_time (dev, SIM_OP_READ, 256, 256, t1 + 50000);
  SimTime t3, t4, rot;

  g_assert_cmpint (t2, ==, 200000 + transfer_ns (256, 100 * MB));
  g_assert_cmpint (t1, >=, t2);
  /* A gap of one sector is not sequential. */
  rot = dev_disk_rotational_latency_ns (dev, 513, t1 + t2 + 300000);
  t3 = dev_model_service_time (dev, SIM_OP_READ, 513, 256, t1 + t2 + 100000);
  g_assert_cmpint (t3, ==, 200000 + rot + transfer_ns (256, 100 * MB));

  /* Without lookahead the sequential read waits for the platter. */
  nola = model_new (ini);
  t1 = dev_model_service_time (nola, SIM_OP_READ, 0, 256, 0);
  rot = dev_disk_rotational_latency_ns (nola, 256, t1 + 50000 + 200000);
  t4 = dev_model_service_time (nola, SIM_OP_READ, 256, 256, t1 + 50000);
  g_assert_cmpint (t4, ==, 200000 + rot + transfer_ns (256, 100 * MB));
  g_assert_cmpint (rot, >, 0);
}

static void
test_disk_write_cache (void)
{
  g_autofree char *on_ini = g_strconcat (disk_ini, "write_cache = true\nwrite_overhead = 0.3ms\n", NULL);
  g_autoptr(DevModel) off = model_new (disk_ini);
  g_autoptr(DevModel) on = model_new (on_ini);
  SimTime t1, t2, rot;

  t1 = dev_model_service_time (on, SIM_OP_WRITE, 1000, 64, 0);
  t2 = dev_model_service_time (on, SIM_OP_WRITE, 1064, 64, t1);
  g_assert_cmpint (t2, ==, 300000 + transfer_ns (64, 100 * MB));

  t1 = dev_model_service_time (off, SIM_OP_WRITE, 1000, 64, 0);
  rot = dev_disk_rotational_latency_ns (off, 1064, t1 + 200000);
  t2 = dev_model_service_time (off, SIM_OP_WRITE, 1064, 64, t1);
  g_assert_cmpint (t2, ==, 200000 + rot + transfer_ns (64, 100 * MB));
}

static void
test_disk_zones (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  /* 1953.125 sectors per cylinder: this and the next 512 lie in the last. */
  guint64 last = G_GUINT64_CONSTANT (100000000000) / 512 - 1900;
  SimTime outer, inner;

  g_assert_cmpuint (dev_disk_sector_cylinder (dev, 0), ==, 0);
  g_assert_cmpuint (dev_disk_sector_cylinder (dev, last), ==, 100000 - 1);
  g_assert_cmpuint (dev_disk_sector_cylinder (dev, G_MAXUINT64 / 2), ==, 100000 - 1);

  /* Sequential 256 KiB reads, so that only overhead + transfer remain. */
  dev_model_service_time (dev, SIM_OP_READ, 0, 512, 0);
  outer = dev_model_service_time (dev, SIM_OP_READ, 512, 512, SIM_NS_PER_S) - 200000;
  dev_model_service_time (dev, SIM_OP_READ, last, 512, 2 * SIM_NS_PER_S);
  inner = dev_model_service_time (dev, SIM_OP_READ, last + 512, 512, 3 * SIM_NS_PER_S) - 200000;
  g_assert_cmpint (outer, ==, transfer_ns (512, 100 * MB));
  g_assert_cmpint (inner, ==, transfer_ns (512, 50 * MB));
  g_assert_cmpfloat_with_epsilon ((double) inner / outer, 100.0 / 50.0, 1e-6);
}

static void
test_disk_dump (void)
{
  g_autoptr(DevModel) dev = model_new (disk_ini);
  g_autoptr(GString) s = g_string_new (NULL);

  dev_model_dump (dev, s);
  g_assert_nonnull (strstr (s->str, "kind = disk"));
  g_assert_nonnull (strstr (s->str, "rotational = true"));
  g_assert_nonnull (strstr (s->str, "period_ns = 8333333"));
  g_assert_nonnull (strstr (s->str, "spt_outer"));
  g_assert_nonnull (strstr (s->str, "sqrt(d-1)"));
}

/* ----------------------------------------------------------------- errors */

static void
test_error_unknown_key (void)
{
  assert_model_error ("[device]\nkind = disk\nrpmm = 7200\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'rpmm'", "[device]", "valid keys", "seek_avg", NULL });
  assert_model_error ("[device]\nkind = ssd\noverhead = 1ms\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'overhead'", "ssd", NULL });
}

static void
test_error_bad_values (void)
{
  assert_model_error ("[device]\nkind = disk\nseek_avg = -3ms\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'seek_avg'", "[device]", "negative", NULL });
  assert_model_error ("[device]\nkind = fixed\nbandwidth = -1MB/s\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'bandwidth'", NULL });
  assert_model_error ("[device]\nkind = fixed\nbandwidth = 0MB/s\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'bandwidth'", NULL });
  assert_model_error ("[device]\nkind = fixed\noverhead = 5\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'overhead'", "unit", NULL });
  assert_model_error ("[device]\nkind = ssd\nparallelism = 0\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'parallelism'", NULL });
  assert_model_error ("[device]\nkind = ssd\nqueue_depth = -4\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'queue_depth'", NULL });
  assert_model_error ("[device]\nkind = disk\nread_lookahead = maybe\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'read_lookahead'", NULL });
  assert_model_error ("[device]\nkind = disk\nrpm = fast\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'rpm'", NULL });
  assert_model_error ("[device]\nkind = disk\nrpm = 10\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'rpm'", NULL });
  assert_model_error ("[device]\nkind = disk\ninner_rate = 200MB/s\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'inner_rate'", NULL });
  assert_model_error ("[device]\nkind = disk\ncapacity = 100B\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'capacity'", NULL });
  assert_model_error ("[device]\nkind = fixed\nmax_sectors_kb = 1\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'max_sectors_kb'", NULL });
  /* The write twin inherits a bad read value and the read key is named. */
  assert_model_error ("[device]\nkind = fixed\noverhead = 1parsec\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'overhead'", NULL });
  /* Not UTF-8: GKeyFile would have returned the value as missing. */
  assert_model_error ("[device]\nkind = fixed\noverhead = 1\xb5s\n", DEV_ERROR_PARAM,
                      (const char *[]) { "line 3, column 13: byte 0xb5 is not UTF-8 text", NULL });
}

static void
test_error_inconsistent_seek (void)
{
  /* avg / full too close: no b, c >= 0 reaches it. */
  assert_model_error ("[device]\nkind = disk\nseek_track = 1ms\nseek_avg = 12ms\nseek_full = 18ms\n",
                      DEV_ERROR_PARAM,
                      (const char *[]) { "'seek_avg'", "too high", "seek_full", NULL });
  /* avg far below a third of the full stroke. */
  assert_model_error ("[device]\nkind = disk\nseek_track = 1ms\nseek_avg = 3ms\nseek_full = 20ms\n",
                      DEV_ERROR_PARAM,
                      (const char *[]) { "'seek_avg'", "too low", NULL });
  assert_model_error ("[device]\nkind = disk\nseek_avg = 20ms\nseek_full = 16ms\n",
                      DEV_ERROR_PARAM, (const char *[]) { "'seek_avg'", NULL });
  assert_model_error ("[device]\nkind = disk\nseek_track = 9ms\n",
                      DEV_ERROR_PARAM, (const char *[]) { "'seek_track'", NULL });
}

static void
test_error_kind (void)
{
  assert_model_error ("[device]\nrpm = 7200\n", DEV_ERROR_PARAM,
                      (const char *[]) { "'kind'", "[device]", "fixed", NULL });
  assert_model_error ("[device]\nkind = tape\n", DEV_ERROR_UNKNOWN_KIND,
                      (const char *[]) { "'kind'", "tape", "disk", NULL });
}

/* ------------------------------------------------------- model loading */

static const char *
models_dir (void)
{
  const char *dir = g_getenv ("IOSIM_MODELS_DIR");

  if (dir == NULL)
    g_test_skip ("IOSIM_MODELS_DIR is not set");
  return dir;
}

static DevModel *
load_from_scenario (const char *scenario_text, const char *group,
                    const char *const *dirs, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  const char *ignore[] = { "sched", "bus", NULL };

  g_assert_true (g_key_file_load_from_data (kf, scenario_text, -1, G_KEY_FILE_NONE, NULL));
  return dev_model_load ("hda", kf, group, dirs, ignore, error);
}

/* Every shipped model loads and gives plausible times: a random 4 KiB read
 * takes between 10 us and 1 s, and streaming 1 MiB reads run between
 * 100 KB/s and 2 GB/s. */
static void
test_shipped_models (void)
{
  const char *dir = models_dir ();
  g_autofree char *devdir = NULL;
  g_autoptr(GDir) d = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  if (dir == NULL)
    return;
  devdir = g_build_filename (dir, "devices", NULL);
  d = g_dir_open (devdir, 0, NULL);
  g_assert_nonnull (d);
  while ((entry = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (entry, ".ini"))
      g_ptr_array_add (names, g_strndup (entry, strlen (entry) - 4));
  g_assert_cmpuint (names->len, >=, 7);

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *text = g_strdup_printf ("[device hda]\nmodel = %s\nsched = cfq\n", name);
      const char *dirs[] = { dir, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(DevModel) dev = load_from_scenario (text, "device hda", dirs, &error);
      g_autoptr(GString) dump = g_string_new (NULL);
      guint64 sectors;
      SimTime now = 0, t, total = 0;
      double rate;

      g_assert_no_error (error);
      g_assert_nonnull (dev);
      g_assert_cmpstr (dev->model_name, ==, name);
      g_test_message ("%s: kind %s, capacity %" G_GUINT64_FORMAT, name, dev->ops->name,
                      dev->capacity_bytes);
      sectors = dev->capacity_bytes / 512;

      t = dev_model_service_time (dev, SIM_OP_READ, sectors / 2 + 17, 8, now);
      g_assert_cmpint (t, >=, 10 * SIM_NS_PER_US);
      g_assert_cmpint (t, <=, SIM_NS_PER_S);
      now += t;
      for (guint j = 0; j < 16; j++)
        {
          t = dev_model_service_time (dev, SIM_OP_READ, 2048 * j, 2048, now);
          now += t;
          total += t;
        }
      rate = 16.0 * 1048576 / (total / 1e9);
      g_assert_cmpfloat (rate, >=, 100e3);
      g_assert_cmpfloat (rate, <=, 2e9);
      t = dev_model_service_time (dev, SIM_OP_WRITE, sectors / 3, 8, now);
      g_assert_cmpint (t, >=, SIM_NS_PER_US);
      g_assert_cmpint (t, <=, SIM_NS_PER_S);
      dev_model_dump (dev, dump);
      g_assert_cmpuint (dump->len, >, 0);
    }
}

static void
test_load_overlay (void)
{
  const char *dir = models_dir ();
  const char *dirs[] = { dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(DevModel) dev = NULL;
  DevDiskGeometry g;

  if (dir == NULL)
    return;
  /* Scenario keys override the file's; trailing "; comments" are cut. */
  dev = load_from_scenario ("[device hda]\nmodel = disk-7200-sata   ; the usual\n"
                            "rpm = 5400\nbus = ide0\nqueue_depth = 4\n",
                            "device hda", dirs, &error);
  g_assert_no_error (error);
  dev_disk_get_geometry (dev, &g);
  g_assert_cmpint (g.period_ns, ==, 11111111);
  g_assert_cmpuint (dev->queue_depth, ==, 4);
  g_assert_cmpstr (dev->name, ==, "hda");
  g_assert_cmpstr (dev->model_name, ==, "disk-7200-sata");
  g_clear_pointer (&dev, dev_model_free);

  /* Without "model", the group is the model. */
  dev = load_from_scenario ("[device hdb]\nkind = fixed\nsched = noop\n", "device hdb", dirs, &error);
  g_assert_no_error (error);
  g_assert_true (dev->ops == &dev_fixed_ops);
  g_assert_cmpstr (dev->model_name, ==, "fixed");
  g_clear_pointer (&dev, dev_model_free);

  /* An overriding key with a bad value is reported against the scenario. */
  dev = load_from_scenario ("[device hda]\nmodel = disk-7200-sata\nseek_full = 1ms\n",
                            "device hda", dirs, &error);
  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, DEV_ERROR_PARAM);
  g_assert_nonnull (strstr (error->message, "[device hda]"));
  g_clear_error (&error);

  /* An ignored key is the caller's, not an unknown key. */
  dev = load_from_scenario ("[device hda]\nmodel = ssd-sata\nsched = cfq\n", "device hda", dirs, &error);
  g_assert_no_error (error);
  g_assert_true (dev->ops == &dev_ssd_ops);
}

/* The shipped SATA SSD serves one large read near its datasheet rate:
 * 90us + 524288 B / 540 MB/s, about 494 MB/s at queue depth 1. */
static void
test_load_ssd_sata (void)
{
  const char *dir = models_dir ();
  const char *dirs[] = { dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(DevModel) dev = NULL;

  if (dir == NULL)
    return;
  dev = load_from_scenario ("[device sda]\nmodel = ssd-sata\n", "device sda", dirs, &error);
  g_assert_no_error (error);
  g_assert_true (dev->ops == &dev_ssd_ops);
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_READ, 0, 1024, 0), ==,
                   90 * SIM_NS_PER_US + transfer_ns (1024, 540 * MB));
  g_assert_cmpint (dev_model_service_time (dev, SIM_OP_WRITE, 0, 1024, SIM_NS_PER_S), ==,
                   30 * SIM_NS_PER_US + transfer_ns (1024, 520 * MB));
}

static void
test_load_not_found (void)
{
  const char *dirs[] = { "/nonexistent-a", "/nonexistent-b", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(DevModel) dev = load_from_scenario ("[device hda]\nmodel = no-such-disk\n",
                                                "device hda", dirs, &error);

  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, DEV_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "no-such-disk"));
  g_assert_nonnull (strstr (error->message, "/nonexistent-b"));
}

/* Errors in keys that come from a model file name that file. */
static void
test_load_bad_model_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("iosim-dev-XXXXXX", &error);
  g_autofree char *path = NULL;
  g_autofree char *path2 = NULL;
  g_autofree char *scenario = NULL;
  g_autoptr(DevModel) dev = NULL;
  const char *dirs[2] = { NULL, NULL };

  g_assert_no_error (error);
  dirs[0] = tmp;
  path = g_build_filename (tmp, "weird.ini", NULL);
  g_assert_true (g_file_set_contents (path, "# test\n[device]\nkind = fixed\nbandwith = 3MB/s\n", -1, NULL));

  dev = load_from_scenario ("[device sda]\nmodel = weird\n", "device sda", dirs, &error);
  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, DEV_ERROR_PARAM);
  g_assert_nonnull (strstr (error->message, "'bandwith'"));
  g_assert_nonnull (strstr (error->message, "weird.ini"));
  g_clear_error (&error);

  /* A path works as well as a name; a file without [device] is refused. */
  path2 = g_build_filename (tmp, "nodev.ini", NULL);
  g_assert_true (g_file_set_contents (path2, "[disk]\nkind = fixed\n", -1, NULL));
  scenario = g_strdup_printf ("[device sda]\nmodel = %s\n", path2);
  dev = load_from_scenario (scenario, "device sda", NULL, &error);
  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, DEV_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "[device]"));

  g_clear_error (&error);

  /* Neither the file nor the scenario gives a kind. */
  g_assert_true (g_file_set_contents (path, "[device]\nbandwidth = 3MB/s\n", -1, NULL));
  dev = load_from_scenario ("[device sda]\nmodel = weird\noverhead = 2ms\n", "device sda", dirs, &error);
  g_assert_null (dev);
  g_assert_error (error, DEV_ERROR, DEV_ERROR_PARAM);
  g_assert_nonnull (strstr (error->message, "'kind'"));

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_unlink (path2), ==, 0);
  g_assert_cmpint (g_rmdir (tmp), ==, 0);
}

static void
test_load_default_dirs (void)
{
  g_auto(GStrv) dirs = NULL;
  g_autofree char *saved = g_strdup (g_getenv ("IOSIM_MODELS_DIR"));

  g_setenv ("IOSIM_MODELS_DIR", "/somewhere/models", TRUE);
  dirs = dev_model_default_search_dirs ();
  g_assert_cmpuint (g_strv_length (dirs), ==, 3);
  g_assert_cmpstr (dirs[0], ==, "/somewhere/models");
  g_clear_pointer (&dirs, g_strfreev);

  g_unsetenv ("IOSIM_MODELS_DIR");
  dirs = dev_model_default_search_dirs ();
  g_assert_cmpuint (g_strv_length (dirs), ==, 2);
  if (saved != NULL)
    g_setenv ("IOSIM_MODELS_DIR", saved, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/dev/registry", test_registry);
  g_test_add_func ("/dev/fixed/formula", test_fixed_formula);
  g_test_add_func ("/dev/empirical/cells", test_empirical_cells);
  g_test_add_func ("/dev/empirical/window", test_empirical_window);
  g_test_add_func ("/dev/empirical/outside", test_empirical_outside);
  g_test_add_func ("/dev/empirical/draws", test_empirical_draws);
  g_test_add_func ("/dev/empirical/errors", test_empirical_errors);
  g_test_add_func ("/dev/empirical/mutations", test_empirical_mutations);
  g_test_add_func ("/dev/fixed/defaults", test_fixed_defaults);
  g_test_add_func ("/dev/fixed/sequential", test_fixed_sequential);
  g_test_add_func ("/dev/fixed/quantiles/draws", test_fixed_quantiles_draws);
  g_test_add_func ("/dev/fixed/quantiles/atom", test_fixed_quantiles_atom);
  g_test_add_func ("/dev/fixed/quantiles/deterministic", test_fixed_quantiles_deterministic);
  g_test_add_func ("/dev/fixed/quantiles/median", test_fixed_quantiles_median);
  g_test_add_func ("/dev/fixed/quantiles/errors", test_fixed_quantiles_errors);
  g_test_add_func ("/dev/ssd/formula", test_ssd_formula);
  g_test_add_func ("/dev/ssd/lone-large", test_ssd_lone_large);
  g_test_add_func ("/dev/ssd/overlap", test_ssd_overlap);
  g_test_add_func ("/dev/ssd/aggregate", test_ssd_aggregate);
  g_test_add_func ("/dev/ssd/write", test_ssd_write);
  g_test_add_func ("/dev/ssd/dump", test_ssd_dump);
  g_test_add_func ("/dev/disk/seek-curve", test_disk_seek_curve);
  g_test_add_func ("/dev/disk/seek-mean-quadrature", test_disk_seek_mean_quadrature);
  g_test_add_func ("/dev/disk/rotation", test_disk_rotation);
  g_test_add_func ("/dev/disk/random-read", test_disk_random_read);
  g_test_add_func ("/dev/disk/random-mean", test_disk_random_mean);
  g_test_add_func ("/dev/disk/sequential-lookahead", test_disk_sequential_lookahead);
  g_test_add_func ("/dev/disk/write-cache", test_disk_write_cache);
  g_test_add_func ("/dev/disk/zones", test_disk_zones);
  g_test_add_func ("/dev/disk/dump", test_disk_dump);
  g_test_add_func ("/dev/error/unknown-key", test_error_unknown_key);
  g_test_add_func ("/dev/error/bad-values", test_error_bad_values);
  g_test_add_func ("/dev/error/inconsistent-seek", test_error_inconsistent_seek);
  g_test_add_func ("/dev/error/kind", test_error_kind);
  g_test_add_func ("/dev/load/shipped-models", test_shipped_models);
  g_test_add_func ("/dev/load/overlay", test_load_overlay);
  g_test_add_func ("/dev/load/ssd-sata", test_load_ssd_sata);
  g_test_add_func ("/dev/load/not-found", test_load_not_found);
  g_test_add_func ("/dev/load/bad-model-file", test_load_bad_model_file);
  g_test_add_func ("/dev/load/default-dirs", test_load_default_dirs);

  return g_test_run ();
}
