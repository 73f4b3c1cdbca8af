/* test-wb-ioless.c — the io-less-3.2 era (models/wb/wb-ioless.c): writers
 * are paced by per-device bandwidth estimates instead of waiting for the
 * global dirty count, so a fast device's writer is not held to a slow
 * device's speed (two-writers.ini), and a lone dirtier to a slow device
 * settles at the device's bandwidth with short pauses (issue 4, scenario 3).
 * scenario_run itself asserts that no page is lost. */
#include <glib.h>
#include <string.h>

#include "models/scenario.h"
#include "sim/sim-timeseries.h"

static const SimProcessResult *
process (const SimRunResult *r, const char *name)
{
  for (guint j = 0; j < r->processes->len; j++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, j);
      if (strcmp (p->name, name) == 0)
        {
          g_test_message ("%-22s %-12s %8.2f MB/s  lat_max %.1f ms", r->label, name,
                          p->mb_per_s, p->lat_max_ns / 1e6);
          return p;
        }
    }
  g_error ("no %s in %s", name, r->label);
}

static void
test_two_writers (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "two-writers.ini", NULL);
  const char *const sets[] = { "host.writeback=global-2.6,io-less-3.2", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 2);
  g_autoptr (SimRunResult) global = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) ioless = scenario_run (s, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (global->label, "global-2.6"));
  g_assert_nonnull (strstr (ioless->label, "io-less-3.2"));
  double disk_global = process (global, "disk-writer")->mb_per_s;
  double disk_ioless = process (ioless, "disk-writer")->mb_per_s;
  double usb_ioless = process (ioless, "usb-writer")->mb_per_s;
  /* Each device's writer is paced by its own device's bandwidth ... */
  g_assert_cmpfloat (disk_ioless, >=, 3.0 * usb_ioless);
  /* ... so the disk writer escapes the stick's pace of the global era. */
  g_assert_cmpfloat (disk_ioless, >=, 3.0 * disk_global);
}

/* The shipped scenario 3 (models/scenarios/ioless-dirtier.ini). */
#define SLOW_DEVICE_MB_PER_S 10.0

static void
check_slow_device (const char *const *sets)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "ioless-dirtier.ini", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) series = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_series_free);
  ScenarioOutputs outputs = { .series = series, .sample_ns = SIM_NS_PER_S };
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  const SimProcessResult *p = process (r, "dirtier");
  g_assert_cmpuint (series->len, ==, 1);
  const SimSeries *ser = g_ptr_array_index (series, 0);
  double sum = 0;
  guint n = 0;
  for (guint i = 0; i < ser->time_s->len; i++)
    if (g_array_index (ser->time_s, double, i) > 40.0)
      {
        sum += g_array_index (ser->value, double, i);
        n++;
      }
  g_assert_cmpuint (n, >=, 19);
  double tail = sum / n;
  g_test_message ("last 20 s: %.2f MB/s over %u samples", tail, n);
  /* Throttled to what the device takes, once the estimate has settled ... */
  g_assert_cmpfloat (tail, >=, 0.85 * SLOW_DEVICE_MB_PER_S);
  g_assert_cmpfloat (tail, <=, 1.15 * SLOW_DEVICE_MB_PER_S);
  /* ... in pauses of at most MAX_PAUSE (HZ/5): no write() waits longer. */
  g_assert_cmpint (p->lat_max_ns, <=, 200 * SIM_NS_PER_MS);
}

static void
test_slow_device (void)
{
  check_slow_device (NULL);
}

/* With strict_limit the device's own (at first zero) share of the limit
 * governs: background writeback must start on the device's excess alone,
 * or the writer would wait for completions that never come. */
static void
test_strict_limit (void)
{
  const char *sets[] = { "writeback.strict_limit=true", NULL };
  check_slow_device (sets);
}

static void
expect_error (const char *writeback_group, const char *key)
{
  g_autofree char *ini = g_strdup_printf (
    "[host]\nmemory = 256MiB\nwriteback = io-less-3.2\n"
    "[device slow]\nkind = fixed\nbandwidth = 10MB/s\n"
    "[process dirtier]\ndevice = slow\nop = write\nio = buffered\nbs = 64KiB\nsize = 1MiB\n"
    "[writeback]\n%s", writeback_group);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "bad", NULL, NULL, &error);
  if (s != NULL)
    {
      g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
      g_assert_null (r);
    }
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, key));
}

static void
test_tunables (void)
{
  expect_error ("dirty_ratio = 101\n", "dirty_ratio");
  expect_error ("strict_limit = maybe\n", "strict_limit");
  expect_error ("dirty_bytes = lots\n", "dirty_bytes");
  expect_error ("dirty_level = 3\n", "dirty_level");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/wb/ioless/two-writers", test_two_writers);
  g_test_add_func ("/wb/ioless/slow-device", test_slow_device);
  g_test_add_func ("/wb/ioless/strict-limit", test_strict_limit);
  g_test_add_func ("/wb/ioless/tunables", test_tunables);
  return g_test_run ();
}
