/* cmd-compare.c — `iosim compare SIMULATED MEASURED [--json FILE]`: option
 * parsing around replay_compare_files() (replay/replay-compare.h).  The
 * table goes to standard output. */
#include <stdio.h>

#include "cli/cli.h"
#include "replay/replay-compare.h"

int
cli_cmd_compare (int argc, char **argv)
{
  g_autofree char *json = NULL;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Also write the comparison as JSON", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SIMULATED MEASURED - compare per-I/O results");
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayCompareReport) report = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Both files are per-I/O results CSVs (iosim run --io-log, iosim replay).  Per process\n"
    "(matched by name) and overall: Ruemmler-Wilkes demerit (RMS horizontal distance\n"
    "between the latency CDFs at 10,000 points, as DiskSim's rms.c), mean distance,\n"
    "KS statistic D, and (simulated - measured) / measured errors of mean, p50, p95,\n"
    "p99 latency, throughput and IOPS.\n\n"
    "Example: iosim compare sim.csv measured.csv --json cmp.json");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim compare: %s\n", error->message);
      return 2;
    }
  if (argc != 3)
    {
      fprintf (stderr, "iosim compare: need SIMULATED and MEASURED results files (see --help)\n");
      return 2;
    }
  report = replay_compare_files (argv[1], argv[2], &error);
  if (report == NULL)
    {
      fprintf (stderr, "iosim compare: %s\n", error->message);
      return 1;
    }
  replay_compare_report_print (report, stdout);
  if (json != NULL)
    {
      g_autofree char *text = replay_compare_report_to_json (report);
      g_autofree char *with_nl = g_strconcat (text, "\n", NULL);

      if (!g_file_set_contents (json, with_nl, -1, &error))
        {
          fprintf (stderr, "iosim compare: %s\n", error->message);
          return 1;
        }
    }
  return 0;
}
