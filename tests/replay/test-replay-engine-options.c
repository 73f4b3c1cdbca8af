/* test-replay-engine-options.c — engine names, CPU lists, and the engine
 * options replay_run_ios() refuses before it touches any device. */
#include <string.h>

#include "replay/replay.h"

static void
test_engine_names (void)
{
  ReplayEngine e;

  for (ReplayEngine k = REPLAY_ENGINE_PSYNC; k <= REPLAY_ENGINE_LIBAIO; k++)
    {
      g_assert_true (replay_engine_parse (replay_engine_name (k), &e));
      g_assert_cmpint (e, ==, k);
    }
  g_assert_cmpstr (replay_engine_name (REPLAY_ENGINE_IO_URING), ==, "io_uring");
  g_assert_false (replay_engine_parse ("sync", &e));
  g_assert_false (replay_engine_parse ("", &e));
  /* psync needs nothing; the others are there or refused with the
   * library's name. */
  g_assert_true (replay_engine_available (REPLAY_ENGINE_PSYNC, NULL));
  for (ReplayEngine k = REPLAY_ENGINE_IO_URING; k <= REPLAY_ENGINE_LIBAIO; k++)
    {
      g_autoptr (GError) error = NULL;
      if (!replay_engine_available (k, &error))
        g_assert_nonnull (strstr (error->message, k == REPLAY_ENGINE_IO_URING ? "liburing" : "libaio"));
    }
}

static void
test_cpus_parse (void)
{
  const char *bad[] = { "", "a", "1,", "3-1", "-2", "0-", "99999" };
  g_autoptr (GArray) cpus = replay_cpus_parse ("0,2-4, 1", NULL);
  int want[] = { 0, 2, 3, 4, 1 };

  g_assert_nonnull (cpus);
  g_assert_cmpuint (cpus->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    g_assert_cmpint (g_array_index (cpus, int, i), ==, want[i]);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) none = replay_cpus_parse (bad[i], &error);
      g_assert_null (none);
      g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
    }
}

/* Contradictions fail before the target is looked at (it does not exist). */
static void
test_refusals (void)
{
  g_autoptr (GArray) ios = g_array_new (FALSE, TRUE, sizeof (TraceIo));
  struct { ReplayEngine engine; guint iodepth, threads; ReplayTiming timing; const char *what; } cases[] = {
    { REPLAY_ENGINE_PSYNC, 4, 0, REPLAY_TIMING_RECORDED, "--threads" },
    { REPLAY_ENGINE_IO_URING, 0, 2, REPLAY_TIMING_RECORDED, "--threads is for the psync" },
    { REPLAY_ENGINE_PSYNC, 0, 2, REPLAY_TIMING_CLOSED, "recorded timing only" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ReplayResult) res = NULL;
      ReplayOptions opts;

      replay_options_init (&opts);
      opts.target = "/nonexistent/iosim-target";
      opts.engine = cases[i].engine;
      opts.iodepth = cases[i].iodepth;
      opts.threads = cases[i].threads;
      opts.timing = cases[i].timing;
      res = replay_run_ios (ios, &opts, &error);
      g_assert_null (res);
      g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, cases[i].what));
    }
}

static void
test_bad_cpu (void)
{
  g_autoptr (GArray) ios = g_array_new (FALSE, TRUE, sizeof (TraceIo));
  g_autoptr (GArray) cpus = replay_cpus_parse ("1000", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) res = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.target = "/nonexistent/iosim-target";
  opts.cpus = cpus;
  res = replay_run_ios (ios, &opts, &error);
  g_assert_null (res);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "CPU 1000"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/engine-options/names", test_engine_names);
  g_test_add_func ("/replay/engine-options/cpus", test_cpus_parse);
  g_test_add_func ("/replay/engine-options/refusals", test_refusals);
  g_test_add_func ("/replay/engine-options/bad-cpu", test_bad_cpu);
  return g_test_run ();
}
