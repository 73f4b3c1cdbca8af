/* test-sim-rng.c — named streams are pinned and independent. */
#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-rng.h"
#include "sim/sim-units.h"
#include <string.h>

/* Reference values from an independent implementation (a few lines of
 * Python: FNV-1a-64, SplitMix64, and MT19937's init_genrand/genrand_int32
 * as in mt19937ar.c).  Scenario outputs depend on them: they must never
 * change. */
static void
test_derive_pinned (void)
{
  g_assert_cmpuint (sim_rng_derive_seed (1, ""), ==, G_GUINT64_CONSTANT (0xadd59ec795ad7f61));
  g_assert_cmpuint (sim_rng_derive_seed (1, "process.reader.offset"), ==,
                    G_GUINT64_CONSTANT (0xc47d2c27fdc469a1));
  g_assert_cmpuint (sim_rng_derive_seed (42, "stream"), ==, G_GUINT64_CONSTANT (0x420cf0198c908c42));
  g_assert_cmpuint (sim_rng_derive_seed (1, "x"), !=, sim_rng_derive_seed (2, "x"));

  g_autoptr (SimRng) r = sim_rng_new (42, "stream");
  g_assert_cmpuint (gsl_rng_get (sim_rng_gsl (r)), ==, 4200070962u);
  g_assert_cmpuint (gsl_rng_get (sim_rng_gsl (r)), ==, 4069599358u);
  g_assert_cmpuint (gsl_rng_get (sim_rng_gsl (r)), ==, 3912114040u);
}

static void
test_stream_reproducible (void)
{
  g_autoptr (SimRng) a = sim_rng_new (42, "stream");
  g_autoptr (SimRng) b = sim_rng_new (42, "stream");
  for (int i = 0; i < 1000; i++)
    g_assert_cmpuint (sim_rng_uniform_int (a, 1000000), ==, sim_rng_uniform_int (b, 1000000));
}

static void
test_streams_independent (void)
{
  /* Drawing from another stream must not change this one's sequence. */
  g_autoptr (Sim) s1 = sim_new (7);
  g_autoptr (Sim) s2 = sim_new (7);
  SimRng *x1 = sim_rng (s1, "x");
  SimRng *x2 = sim_rng (s2, "x");
  SimRng *y2 = sim_rng (s2, "y");
  for (int i = 0; i < 100; i++)
    {
      sim_rng_uniform (y2);
      g_assert_cmpfloat (sim_rng_uniform (x1), ==, sim_rng_uniform (x2));
    }
}

static void
test_uniform_int_range (void)
{
  g_autoptr (SimRng) r = sim_rng_new (3, "range");
  guint64 big = G_GUINT64_CONSTANT (1) << 40;
  gboolean high = FALSE;
  for (int i = 0; i < 1000; i++)
    {
      guint64 v = sim_rng_uniform_int (r, big);
      g_assert_cmpuint (v, <, big);
      high |= v > G_MAXUINT32;
      g_assert_cmpuint (sim_rng_uniform_int (r, 7), <, 7);
    }
  g_assert_true (high);
  double sum = 0;
  for (int i = 0; i < 20000; i++)
    sum += sim_rng_exponential (r, 5.0);
  g_assert_cmpfloat_with_epsilon (sum / 20000, 5.0, 0.25);
}

static void
test_units (void)
{
  guint64 b;
  SimTime t;
  double rate;
  g_assert_true (sim_parse_size_bytes ("4KiB", &b, NULL));
  g_assert_cmpuint (b, ==, 4096);
  g_assert_true (sim_parse_size_bytes (" 1.5 MiB ", &b, NULL));
  g_assert_cmpuint (b, ==, 1572864);
  g_assert_true (sim_parse_size_bytes ("30GB", &b, NULL));
  g_assert_cmpuint (b, ==, 30000000000u);
  g_assert_true (sim_parse_size_bytes ("8s", &b, NULL));
  g_assert_cmpuint (b, ==, 4096);
  g_assert_true (sim_parse_time_ns ("3ms", 0, &t, NULL));
  g_assert_cmpint (t, ==, 3000000);
  g_assert_true (sim_parse_time_ns ("0.5us", 0, &t, NULL));
  g_assert_cmpint (t, ==, 500);
  g_assert_true (sim_parse_time_ns ("7", SIM_NS_PER_MS, &t, NULL));
  g_assert_cmpint (t, ==, 7000000);
  g_assert_true (sim_parse_rate_bytes_per_s ("40MB/s", &rate, NULL));
  g_assert_cmpfloat (rate, ==, 40e6);

  g_autoptr (GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL;
  g_assert_false (sim_parse_size_bytes ("4 parsecs", &b, &e1));
  g_assert_nonnull (strstr (e1->message, "parsecs"));
  g_assert_false (sim_parse_time_ns ("12", 0, &t, &e2));
  g_assert_nonnull (strstr (e2->message, "unit"));
  g_assert_false (sim_parse_rate_bytes_per_s ("40MB", &rate, &e3));
  g_assert_false (sim_parse_size_bytes ("-1KiB", &b, &e4));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/rng/derive", test_derive_pinned);
  g_test_add_func ("/sim/rng/reproducible", test_stream_reproducible);
  g_test_add_func ("/sim/rng/independent", test_streams_independent);
  g_test_add_func ("/sim/rng/uniform-int", test_uniform_int_range);
  g_test_add_func ("/sim/units/parse", test_units);
  return g_test_run ();
}
