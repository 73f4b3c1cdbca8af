/* test-scenario-mutants.c — the deterministic counterpart of
 * fuzz-scenario.c for CI: shipped scenarios with one byte replaced, or cut
 * short, are each either refused with a message or run for 5 ms of
 * simulated time; nothing crashes (the parser suite runs again under
 * AddressSanitizer and UBSan).  The quick run takes four files, each
 * covering another part of the scenario reader (elevators and processes,
 * the host model, writeback, NFS pools); the slow suite's thorough run
 * (-m thorough) takes every shipped scenario. */
#include <string.h>

#include <glib.h>

#include "models/scenario.h"
#include "tests/test-mutants.h"

static const char *const short_run[] = { "sim.duration=5ms", NULL };

typedef struct {
  const char *base_dir;
  guint       ran;
  guint       refused;
} MutantCounts;

static void
check_mutant (const char *text, gsize len, gpointer data)
{
  MutantCounts *counts = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "mutant.ini", counts->base_dir, short_run,
                                               &error);
  if (s == NULL)
    {
      g_assert_nonnull (error);
      g_assert_cmpstr (error->message, !=, "");
      counts->refused++;
      return;
    }
  for (guint run = 0; run < MIN (scenario_n_runs (s), 2u); run++)
    {
      SimRunResult *r = scenario_run (s, run, NULL, &error);
      if (r == NULL)
        {
          g_assert_nonnull (error);
          g_assert_cmpstr (error->message, !=, "");
          counts->refused++;
          return;
        }
      sim_run_result_free (r);
    }
  counts->ran++;
}

static void
test_mutants (gconstpointer data)
{
  const char *name = data;
  /* Characters that change a scenario's structure (groups, keys,
   * comments, lines) or its numbers and units, and a byte that is not
   * UTF-8. */
  static const char replacements[] = "=[]#;\n 09-xk,\xff";
  /* About 150 positions a file keeps the run short under the sanitizers. */
  const guint positions = g_test_thorough () ? 200 : 150;
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios", name,
                                                 NULL);
  g_autofree char *base_dir = g_path_get_dirname (path);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  MutantCounts counts = { base_dir, 0, 0 };

  test_each_mutant (text, strlen (text), positions, replacements, TRUE, check_mutant, &counts);
  g_test_message ("%s: %u mutants ran, %u refused", name, counts.ran, counts.refused);
  /* Both outcomes occur: the mutations reach past the syntax checks into
   * the models' own validation and into runs. */
  g_assert_cmpuint (counts.ran, >, 50);
  g_assert_cmpuint (counts.refused, >, 50);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

static void
add_file (const char *name)
{
  g_autofree char *test_path = g_strdup_printf ("/scenario/mutants/%s", name);
  g_test_add_data_func_full (test_path, g_strdup (name), test_mutants, g_free);
}

int
main (int argc, char **argv)
{
  static const char *const quick[] = {
    "default.ini", "host-lock-scaling.ini", "ioless-dirtier.ini", "nfs-pool.ini",
  };
  g_test_init (&argc, &argv, NULL);
  if (!g_test_thorough ())
    {
      for (guint i = 0; i < G_N_ELEMENTS (quick); i++)
        add_file (quick[i]);
      return g_test_run ();
    }
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".ini"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    add_file (g_ptr_array_index (names, i));
  return g_test_run ();
}
