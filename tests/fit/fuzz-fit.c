/* fuzz-fit.c — libFuzzer entry point for the trace -> fit -> scenario
 * pipeline: the input is read as a trace (any format traces/ knows), fitted
 * as `iosim fit` does, with and without a host's memory (writeback as
 * buffered writers), and the scenario it writes is loaded back and
 * simulated for 20 ms.  A trace may be refused with an error; a scenario
 * the fit wrote must load and run, and nothing crashes.  Built only with
 * clang (-fsanitize=fuzzer); run as
 *   build/tests/fit/fuzz-fit CORPUS_DIR tests/data/
 * The deterministic test-fit-mutants.c runs a similar loop in CI without
 * libFuzzer. */
#include <stdlib.h>

#include <glib.h>

#include "models/fit/fit.h"
#include "models/scenario.h"
#include "tests/fuzz-memfd.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static const char *const fuzz_sets[] = { "sim.duration=20ms", NULL };

/* abort(), which libFuzzer catches and saves the input for (g_error's
 * breakpoint trap it does not). */
#define FUZZ_FAIL(...) (g_printerr (__VA_ARGS__), abort ())

static void
fit_and_run (const char *path, const FitOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (FitResult) r = fit_trace (path, options, &error);
  if (r == NULL)
    {
      if (error == NULL || error->message[0] == '\0')
        FUZZ_FAIL ("fit refused the trace without a message\n");
      return;
    }
  g_autofree char *json = fit_result_to_json (r);
  g_assert_nonnull (json);
  g_autofree char *ini = fit_scenario_to_data (r);
  g_autoptr (Scenario) s = scenario_load_data (ini, "fitted.ini", "/", fuzz_sets, &error);
  if (s == NULL)
    FUZZ_FAIL ("the fitted scenario does not load: %s\n%s", error->message, ini);
  for (guint run = 0; run < MIN (scenario_n_runs (s), 2u); run++)
    {
      SimRunResult *result = scenario_run (s, run, NULL, &error);
      if (result == NULL)
        FUZZ_FAIL ("the fitted scenario does not run: %s\n%s", error->message, ini);
      sim_run_result_free (result);
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *path = NULL;
  int fd = fuzz_memory_file (data, size, &path);
  if (fd < 0)
    return 0;
  const FitOptions plain = { 0 };
  fit_and_run (path, &plain);
  const FitOptions with_host = {
    .host = { .given = FIT_HOST_MEMORY, .memory_bytes = G_GUINT64_CONSTANT (1) << 30 },
  };
  fit_and_run (path, &with_host);
  close (fd);
  return 0;
}
