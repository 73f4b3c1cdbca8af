/* cmd-compare.c — `iosim compare SIMULATED MEASURED [--json FILE] [--cdf FILE]
 * [--plot FILE.png|.svg] [--allow-mixed-latency]`: option parsing around
 * replay_compare_files_full()
 * (replay/replay-compare.h) and replay_plot_compare_cdf()
 * (replay/replay-plot.h).  The table goes to standard output; the plot is
 * drawn last, so a missing gnuplot costs only the plot. */
#include <stdio.h>

#include "cli/cli.h"
#include "sim/sim-output.h"
#include "replay/replay-compare.h"
#include "replay/replay-plot.h"

/* Write @text to @path; on failure print why and return FALSE. */
static gboolean
compare_write_text (const char *path, const char *text)
{
  g_autoptr (GError) error = NULL;

  if (!sim_output_write (path, text, -1, &error))
    {
      fprintf (stderr, "iosim compare: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
compare_plot (const ReplayCompareReport *report, const char *path)
{
  g_autoptr (GError) error = NULL;

  if (replay_plot_compare_cdf (report, path, &error))
    return TRUE;
  if (g_error_matches (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_GNUPLOT))
    fprintf (stderr, "iosim compare: --plot %s: gnuplot not found: install gnuplot-nox, "
             "or use --cdf and plot it yourself\n", path);
  else
    fprintf (stderr, "iosim compare: --plot: %s\n", error->message);
  return FALSE;
}

/* One side of unknown kind compares with anything; say so, since the
 * user may be comparing a system call with a block request. */
static void
compare_note_kinds (const ReplayCompareReport *report, const char *sim_path,
                    const char *meas_path)
{
  TraceLatencyKind sim = report->simulated_latency_kind;
  TraceLatencyKind meas = report->measured_latency_kind;

  if (sim == meas || (sim != TRACE_LATENCY_UNKNOWN && meas != TRACE_LATENCY_UNKNOWN))
    return;
  fprintf (stderr, "iosim compare: note: %s has no latency_kind column (unknown), %s holds %s "
           "latencies: make sure both time the same span of an I/O\n",
           sim == TRACE_LATENCY_UNKNOWN ? sim_path : meas_path,
           sim == TRACE_LATENCY_UNKNOWN ? meas_path : sim_path,
           trace_latency_kind_name (sim == TRACE_LATENCY_UNKNOWN ? meas : sim));
}

/* iosim run --json against fio's JSON: summaries, no per-I/O samples. */
static int
compare_summaries (const char *sim_path, const char *meas_path, const char *json,
                   gboolean per_io_output)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayCompareSummary) summary = NULL;

  if (per_io_output)
    {
      fprintf (stderr, "iosim compare: --cdf, --plot and --allow-mixed-latency need per-I/O "
               "results CSVs; JSON summaries hold percentiles only\n");
      return 2;
    }
  summary = replay_compare_summary_files (sim_path, meas_path, &error);
  if (summary == NULL)
    {
      fprintf (stderr, "iosim compare: %s\n", error->message);
      return 1;
    }
  replay_compare_summary_print (summary, stdout);
  fflush (stdout);
  if (json != NULL)
    {
      g_autofree char *text = replay_compare_summary_to_json (summary);
      g_autofree char *with_nl = g_strconcat (text, "\n", NULL);

      if (!compare_write_text (json, with_nl))
        return 1;
    }
  return 0;
}

int
cli_cmd_compare (int argc, char **argv)
{
  gboolean allow_mixed = FALSE;
  g_autofree char *json = NULL;
  g_autofree char *cdf = NULL;
  g_autofree char *plot = NULL;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Also write the comparison as JSON", "FILE" },
    { "cdf", 0, 0, G_OPTION_ARG_FILENAME, &cdf,
      "Also write the response-time CDFs as CSV", "FILE" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
      "Also draw the overall CDFs with gnuplot (.png or .svg)", "FILE" },
    { "allow-mixed-latency", 0, 0, G_OPTION_ARG_NONE, &allow_mixed,
      "Compare files whose latency kinds differ (syscall against block-q2c)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SIMULATED MEASURED - compare per-I/O results, or a fio job's");
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayCompareReport) report = NULL;
  ReplayPlotFormat format;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Both files are per-I/O results CSVs (iosim run --io-log, iosim replay).  Per process\n"
    "(matched by name) and overall: Ruemmler-Wilkes demerit (RMS horizontal distance\n"
    "between the latency CDFs at 10,000 points, as DiskSim's rms.c), mean distance,\n"
    "KS statistic D, and (simulated - measured) / measured errors of mean, p50, p95,\n"
    "p99 latency, throughput and IOPS.\n\n"
    "Each file says what its latencies span in its latency_kind column: syscall\n"
    "(iosim replay: the system call as the replaying process saw it) or block-q2c\n"
    "(iosim fit --measured: the trace's block-layer queue to completion).  Two\n"
    "different kinds are refused unless --allow-mixed-latency; a file without the\n"
    "column (iosim run --io-log, older files) is of unknown kind and compares with\n"
    "either, with a note.\n\n"
    "--cdf writes CSV with header process,side,latency_ns,cum_fraction: for each\n"
    "process in both files, then \"overall\", side simulated then measured, the points\n"
    "(x_i, i/n) of the empirical CDF of the n sorted latencies, ending at 1.  Up to\n"
    "1000 I/Os every sample is a row; above, the 1000 evenly spaced order\n"
    "statistics i = 1 + round((k - 1)(n - 1) / 999), k = 1..1000 (a fixed subset\n"
    "from the minimum to the maximum).\n\n"
    "--plot draws the overall CDFs, simulated against measured, on a log latency\n"
    "axis in ms, titled with the demerit; it runs gnuplot from PATH (Debian package\n"
    "gnuplot-nox).  Without gnuplot the rest of the output is still written and the\n"
    "exit status is 1.\n\n"
    "Example: iosim compare sim.csv measured.csv --json cmp.json --cdf cdf.csv --plot cdf.png\n\n"
    "fio jobs: with two JSON files, SIMULATED is iosim run --json (one run) and\n"
    "MEASURED fio's --output-format=json (or json+).  Per job (jobname, or\n"
    "jobname.K for clone K of numjobs > 1, as iosim run names them) in the\n"
    "simulated process's direction: I/Os, MB/s (10^6 B/s) and IOPS, and fio's\n"
    "completion latency clat_ns (mean, p50, p95, p99, max) against the simulated\n"
    "issue-to-completion latency.  Run fio without group_reporting.\n"
    "  iosim run job.fio --device-model ssd-sata --json sim.json\n"
    "  fio job.fio --output-format=json > real.json\n"
    "  iosim compare sim.json real.json");
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
  gboolean sim_json = replay_compare_file_is_json (argv[1]);
  gboolean meas_json = replay_compare_file_is_json (argv[2]);
  if (sim_json != meas_json)
    {
      fprintf (stderr, "iosim compare: %s is JSON and %s is not: compare two results CSVs, or "
               "iosim run --json with fio's JSON\n", sim_json ? argv[1] : argv[2],
               sim_json ? argv[2] : argv[1]);
      return 2;
    }
  if (sim_json)
    return compare_summaries (argv[1], argv[2], json, cdf || plot || allow_mixed);
  if (plot != NULL && !replay_plot_format_from_path (plot, &format, &error))
    {
      fprintf (stderr, "iosim compare: --plot %s\n", error->message);
      return 2;
    }
  report = replay_compare_files_full (argv[1], argv[2],
                                      allow_mixed ? REPLAY_COMPARE_ALLOW_MIXED_LATENCY
                                                  : REPLAY_COMPARE_FLAGS_NONE, &error);
  if (report == NULL)
    {
      fprintf (stderr, "iosim compare: %s\n", error->message);
      return 1;
    }
  compare_note_kinds (report, argv[1], argv[2]);
  replay_compare_report_print (report, stdout);
  fflush (stdout);
  if (json != NULL)
    {
      g_autofree char *text = replay_compare_report_to_json (report);
      g_autofree char *with_nl = g_strconcat (text, "\n", NULL);

      if (!compare_write_text (json, with_nl))
        return 1;
    }
  if (cdf != NULL)
    {
      g_autofree char *text = replay_compare_report_to_cdf_csv (report);

      if (!compare_write_text (cdf, text))
        return 1;
    }
  if (plot != NULL && !compare_plot (report, plot))
    return 1;
  return 0;
}
