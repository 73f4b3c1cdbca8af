/* fuzz-scenario-fio.c — libFuzzer entry point for the fio job-file reader
 * (models/scenario-fio.h): the input read as a job file on a 1 GiB
 * device; it must give groups GKeyFile can write out, or an error that
 * names the file and a line.  Built only with clang (-fsanitize=fuzzer);
 * run as
 *   build/tests/fio/fuzz-scenario-fio CORPUS_DIR tests/fio/data/
 * The deterministic /scenario-fio/mutation-smoke test in
 * test-scenario-fio.c runs a similar loop in CI without libFuzzer. */
#include <string.h>

#include <glib.h>

#include "models/scenario.h"
#include "models/scenario-fio.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static const ScenarioFioTarget target = { "disk", G_GUINT64_CONSTANT (1) << 30 };
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  if (scenario_fio_add_jobs_data (kf, text, "fuzz.fio", &target, &error))
    {
      g_autofree char *out = g_key_file_to_data (kf, NULL, NULL);
      g_assert_nonnull (out);
      return 0;
    }
  if (error == NULL || error->domain != SCENARIO_ERROR
      || !g_str_has_prefix (error->message, "fuzz.fio:")
      || !g_ascii_isdigit (error->message[strlen ("fuzz.fio:")]))
    g_error ("unlocated error: %s", error ? error->message : "(none)");
  return 0;
}
