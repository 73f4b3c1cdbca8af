/* fuzz-scenario.c — libFuzzer entry point for scenario files
 * (models/scenario.h): the input read as a scenario .ini, its device
 * models looked up in the source tree, and every run it describes (at
 * most four) simulated for 20 ms.  A scenario either runs or is refused
 * with an error message (the command line puts the file's name before
 * it); nothing crashes, hangs or leaks.
 * Built only with clang (-fsanitize=fuzzer); run as
 *   build/tests/sim/fuzz-scenario CORPUS_DIR models/scenarios/
 * The deterministic /scenario/mutation-smoke test in test-scenario.c runs
 * a similar loop in CI without libFuzzer. */
#include <string.h>

#include <glib.h>

#include "iosim-config.h"
#include "models/scenario.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* Short enough for many inputs a second; long enough for every kind of
 * process to issue and complete I/O. */
static const char *const fuzz_sets[] = { "sim.duration=20ms", NULL };

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "fuzz.ini", IOSIM_SOURCE_MODELS_DIR "/scenarios",
                                               fuzz_sets, &error);
  if (s == NULL)
    {
      if (error == NULL || error->message[0] == '\0')
        g_error ("refused without a message");
      return 0;
    }
  const ScenarioOutputs outputs = { 0 };
  for (guint run = 0; run < MIN (scenario_n_runs (s), 4u); run++)
    {
      g_autoptr (GError) run_error = NULL;
      SimRunResult *r = scenario_run (s, run, &outputs, &run_error);
      if (r == NULL)
        {
          if (run_error == NULL || run_error->message[0] == '\0')
            g_error ("run refused without a message");
          return 0;
        }
      sim_run_result_free (r);
    }
  return 0;
}
