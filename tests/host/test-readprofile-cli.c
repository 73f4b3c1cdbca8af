/* test-readprofile-cli.c — `iosim run --readprofile FILE` and
 * `--readprofile-text` as a user runs them ($IOSIM_BIN): the CSV's header
 * and rows, the text table, and a file that cannot be written refused with
 * its path, before any run. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "test-run.h"

static char *
scenario_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios", name, NULL);
}

static void
test_csv_and_text (void)
{
  const char *bin = test_iosim_bin ();
  if (bin == NULL)
    {
      g_test_skip ("no iosim binary (IOSIM_BIN)");
      return;
    }
  g_autofree char *ini = scenario_path ("host-altix-writers.ini");
  g_autofree char *dir = g_dir_make_tmp ("iosim-readprofile-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *csv = g_build_filename (dir, "profile.csv", NULL);
  g_auto (TestRun) r = { 0 };
  test_run_argv (&r, NULL, (const char *const[]) { bin, "run", ini, "--set", "sim.duration=200ms",
                                                   "--readprofile", csv, "--readprofile-text",
                                                   NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "kernel profile (system CPU by function"));
  g_assert_nonnull (strstr (r.out, "  copy\n"));
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "run,function,cpu_s,share_pct,irqs_off");
  guint rows = 0;
  double share = 0;
  for (guint i = 1; lines[i] && lines[i][0]; i++, rows++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 5);
      g_assert_cmpstr (f[0], ==, "deadline");
      share += g_ascii_strtod (f[3], NULL);
      g_assert_true (strcmp (f[4], "0") == 0 || strcmp (f[4], "1") == 0);
    }
  g_assert_cmpuint (rows, >, 3);
  g_assert_cmpfloat (share, >, 99.9);
  g_assert_cmpfloat (share, <, 100.1);
  g_remove (csv);
  g_rmdir (dir);
}

static void
test_unwritable_file (void)
{
  const char *bin = test_iosim_bin ();
  if (bin == NULL)
    {
      g_test_skip ("no iosim binary (IOSIM_BIN)");
      return;
    }
  g_autofree char *ini = scenario_path ("host-altix-writers.ini");
  const char *csv = "/nonexistent-iosim-dir/profile.csv";
  g_auto (TestRun) r = { 0 };
  test_run_argv (&r, NULL, (const char *const[]) { bin, "run", ini, "--readprofile", csv, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, csv));
  g_assert_null (strstr (r.out, "run: sched="));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/readprofile-cli/csv-and-text", test_csv_and_text);
  g_test_add_func ("/readprofile-cli/unwritable-file", test_unwritable_file);
  return g_test_run ();
}
