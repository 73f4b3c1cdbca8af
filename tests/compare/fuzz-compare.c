/* fuzz-compare.c — libFuzzer entry point for `iosim compare`: the input,
 * cut at its first NUL byte (or in the middle without one), gives the
 * simulated and the measured per-I/O results files
 * (traces/trace-results.h); they are compared as the command compares
 * them, and the report printed as text and JSON.  Either file may be
 * refused with an error; nothing crashes.  Built only with clang
 * (-fsanitize=fuzzer); run as
 *   build/tests/compare/fuzz-compare CORPUS_DIR
 * seeded with pairs of tests/compare/data files joined by a NUL byte.
 * test-trace-results.c reads the valid and failing samples in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "replay/replay-compare.h"
#include "tests/fuzz-memfd.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  const guint8 *nul = memchr (data, '\0', size);
  size_t cut = nul ? (size_t) (nul - data) : size / 2;
  size_t rest = nul ? size - cut - 1 : size - cut;
  g_autofree char *sim_path = NULL, *meas_path = NULL;
  int sim_fd = fuzz_memory_file (data, cut, &sim_path);
  int meas_fd = fuzz_memory_file (data + size - rest, rest, &meas_path);
  if (sim_fd >= 0 && meas_fd >= 0)
    {
      g_autoptr (GError) error = NULL;
      ReplayCompareReport *report = replay_compare_files (sim_path, meas_path, &error);
      if (report == NULL && (error == NULL || error->message[0] == '\0'))
        {
          g_printerr ("refused without a message\n");
          abort ();
        }
      if (report != NULL)
        {
          FILE *null = fopen ("/dev/null", "w");
          replay_compare_report_print (report, null);
          fclose (null);
          g_free (replay_compare_report_to_json (report));
          replay_compare_report_free (report);
        }
    }
  if (sim_fd >= 0)
    close (sim_fd);
  if (meas_fd >= 0)
    close (meas_fd);
  return 0;
}
