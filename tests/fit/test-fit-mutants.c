/* test-fit-mutants.c — the deterministic counterpart of fuzz-fit.c for CI:
 * traces of tests/data with one byte replaced are fitted as
 * `iosim fit` does, and every scenario the fit writes must load and run
 * for 5 ms; a trace may be refused with a message.  fuzz-fit found five
 * ways a fitted scenario did not load (a comm that was not UTF-8, in a
 * process name or a comment; a bandwidth written as 0.00MB/s; a process
 * with I/Os only on another device; a capture header's size smaller than
 * a sector) and one fit with no process at all. */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "models/fit/fit.h"
#include "models/scenario.h"
#include "tests/test-mutants.h"

static const char *const short_run[] = { "sim.duration=5ms", NULL };

typedef struct {
  const char *path;            /* where each mutant is written */
  guint       fitted;
  guint       refused;
} FitCounts;

static void
check_mutant (const char *mutant, gsize len, gpointer data)
{
  FitCounts *counts = data;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (counts->path, mutant, (gssize) len, NULL));
  g_autoptr (FitResult) r = fit_trace (counts->path, NULL, &error);
  if (r == NULL)
    {
      g_assert_nonnull (error);
      g_assert_cmpstr (error->message, !=, "");
      counts->refused++;
      return;
    }
  g_autofree char *ini = fit_scenario_to_data (r);
  g_autoptr (Scenario) s = scenario_load_data (ini, "fitted.ini", "/", short_run, &error);
  if (s == NULL)
    g_error ("the scenario fitted to a mutant does not load: %s\n%s", error->message, ini);
  for (guint run = 0; run < scenario_n_runs (s); run++)
    {
      SimRunResult *result = scenario_run (s, run, NULL, &error);
      if (result == NULL)
        g_error ("the scenario fitted to a mutant does not run: %s\n%s", error->message, ini);
      sim_run_result_free (result);
    }
  counts->fitted++;
}

static void
test_mutants (gconstpointer data)
{
  const char *name = data;
  /* Digits and separators move times, sectors, pids and devices; the
   * others change actions, names and the lines themselves. */
  static const char replacements[] = "09 .,+-RWDCQ\n\xb5";
  /* The slow suite's fuzz-run-fit (-m thorough) tries eight times more. */
  const guint positions = g_test_thorough () ? 640 : 80;
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", name, NULL);
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  g_autofree char *dir = g_dir_make_tmp ("test-fit-mutants-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *mutant = g_build_filename (dir, name, NULL);
  FitCounts counts = { mutant, 0, 0 };

  gsize stride = test_each_mutant (text, len, positions, replacements, FALSE, check_mutant,
                                   &counts);
  g_assert_cmpint (g_unlink (mutant), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  g_test_message ("%s: %u mutants fitted and run, %u refused", name, counts.fitted,
                  counts.refused);
  /* Many mutants still fit (at least one per position on average): the
   * mutations reach the fit and the fitted scenario, not only the
   * parsers. */
  g_assert_cmpuint (counts.fitted, >=, len / stride);
}

int
main (int argc, char **argv)
{
  /* blkparse text, the blk tracer, binary blktrace, iosim's CSV. */
  static const char *const files[] = {
    "valid-blkparse-2.6.35-cfq-barrier.blkparse",
    "valid-blk-loop-mqdeadline-6.18.ftrace",
    "btt-dc-only-6.18.blktrace",
    "valid-iosim.csv",
  };
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *test_path = g_strdup_printf ("/fit/mutants/%s", files[i]);
      g_test_add_data_func (test_path, files[i], test_mutants);
    }
  return g_test_run ();
}
