/* cmd-run.c — `iosim run SCENARIO`: simulate every run of a scenario and
 * print per-process and per-device results, a comparison table when the
 * scenario lists several elevators, and optionally JSON, a per-I/O CSV and
 * a blkparse-format trace of the simulated block events. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "models/scenario.h"
#include "models/scenario-fio.h"
#include "replay/replay-plot.h"
#include "models/host/host.h"
#include "sim/sim-progress.h"
#include "sim/sim-timeseries.h"
#include "sim/sim-units.h"
#include "traces/trace-results.h"

static FILE *
open_output (const char *path, GError **error)
{
  if (strcmp (path, "-") == 0)
    return stdout;
  FILE *f = fopen (path, "w");
  if (f == NULL)
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                 "cannot write %s: %s", path, g_strerror (errno));
  return f;
}

static void
close_output (FILE *f)
{
  if (f && f != stdout)
    fclose (f);
}

typedef struct {
  SimProgress  line;
  const char  *label;
} Progress;

static void
show_progress (gpointer data, guint run, SimTime now_ns, SimTime end_ns)
{
  Progress *pr = data;
  sim_progress_update (&pr->line, stderr, run, pr->label, now_ns, end_ns, g_get_monotonic_time ());
}

static gboolean
plot_series (GPtrArray *series, const char *title, const char *y_label, const char *path,
             GError **error)
{
  g_autofree ReplayPlotSeries *lines = g_new0 (ReplayPlotSeries, series->len);
  for (guint i = 0; i < series->len; i++)
    {
      const SimSeries *ss = g_ptr_array_index (series, i);
      lines[i] = (ReplayPlotSeries) { ss->label, (const double *) (void *) ss->time_s->data,
                                      (const double *) (void *) ss->value->data, ss->time_s->len,
                                      ss->panel };
    }
  return replay_plot_timeseries (lines, series->len, title, y_label, path, error);
}

int
cli_cmd_run (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *io_log_path = NULL;
  g_autofree char *trace_path = NULL;
  g_autofree char *sched_log_path = NULL;
  g_autofree char *timeseries_path = NULL;
  g_autofree char *plot_path = NULL;
  g_autofree char *plot_wb_path = NULL;
  g_autofree char *vmstat_path = NULL;
  gboolean vmstat_text = FALSE;
  g_autofree char *readprofile_path = NULL;
  gboolean readprofile_text = FALSE;
  g_autofree char *interval_text = NULL;
  gint64 seed = -1;
  gboolean quiet = FALSE;
  g_autofree char *device_model = NULL;
  GOptionEntry entries[] = {
    { "device-model", 0, 0, G_OPTION_ARG_STRING, &device_model,
      "Read the file as a fio job file, its jobs on one device of this model "
      "(a name of models/devices, e.g. ssd-sata, or a model file)", "NAME" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
      "Override a scenario value, e.g. --set 'device hda.sched=noop' (repeatable)", "GROUP.KEY=VALUE" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Master seed (overrides [sim] seed)", "N" },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &json_path, "Write results as JSON ('-' = stdout)", "FILE" },
    { "io-log", 0, 0, G_OPTION_ARG_FILENAME, &io_log_path,
      "Write one CSV row per completed I/O (the format iosim compare reads)", "FILE" },
    { "trace-out", 0, 0, G_OPTION_ARG_FILENAME, &trace_path,
      "Write the simulated block events as blkparse text (replayable with iosim replay)", "FILE" },
    { "trace-sched", 0, 0, G_OPTION_ARG_FILENAME, &sched_log_path,
      "Log every elevator decision (slices, idling, anticipation, merges of queues) "
      "as '<time_ns> <device> <sched> <decision>' lines", "FILE" },
    { "timeseries", 0, 0, G_OPTION_ARG_FILENAME, &timeseries_path,
      "Write per-interval samples (run,time_s,kind,name,metric,value) of devices, processes "
      "and, with buffered I/O, the page cache and writeback (dirty, writeback and threshold "
      "pages, throttled tasks and their pauses, flusher pages)", "FILE" },
    { "interval", 0, 0, G_OPTION_ARG_STRING, &interval_text,
      "Sampling interval of --timeseries and the plots (default 1s)", "TIME" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot_path,
      "Draw each process's MB/s over time, every run, with gnuplot (.png or .svg); lines "
      "whose peaks differ by more than 10x get a log axis, or charts of their own where "
      "some are at zero (the title says which)", "FILE" },
    { "plot-writeback", 0, 0, G_OPTION_ARG_FILENAME, &plot_wb_path,
      "Draw dirty, writeback and threshold MiB per device and the global dirty threshold "
      "over time, every run (buffered I/O), with gnuplot (.png or .svg)", "FILE" },
    { "vmstat", 0, 0, G_OPTION_ARG_FILENAME, &vmstat_path,
      "With [host] cpus: write vmstat's columns per interval as CSV "
      "(run,time_s,r,b,bi,bo,in,cs,us,sy,id,wa)", "FILE" },
    { "vmstat-text", 0, 0, G_OPTION_ARG_NONE, &vmstat_text,
      "With [host] cpus: print vmstat's table per interval under each run", NULL },
    { "readprofile", 0, 0, G_OPTION_ARG_FILENAME, &readprofile_path,
      "With [host] cpus: write each run's kernel profile as CSV "
      "(run,function,cpu_s,share_pct,irqs_off): system CPU time by function of the era "
      "profile (a lock step's call site, a [costs] key, copy) and spinning by lock", "FILE" },
    { "readprofile-text", 0, 0, G_OPTION_ARG_NONE, &readprofile_text,
      "With [host] cpus: print the 20 functions with the most system CPU under each run, "
      "as readprofile would ('*': run with interrupts off)", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No text report", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SCENARIO.ini | JOB.fio --device-model NAME");
  g_option_context_set_summary (ctx,
    "Simulate a scenario: devices with their elevators, processes issuing I/O.\n"
    "A device with 'sched = noop,deadline' gives one run per elevator, compared\n"
    "side by side.  Same scenario and seed give byte-identical output.\n"
    "On a terminal, stderr shows the run, the share of simulated time done and\n"
    "an ETA while it simulates; redirected, it shows nothing.");
  g_autofree char *fio_help = scenario_fio_help ();
  g_autofree char *description = g_strdup_printf (
    "Examples:\n"
    "  iosim run models/scenarios/default.ini\n"
    "  iosim run models/scenarios/default.ini --set 'sched deadline.read_expire=100ms'\n"
    "  iosim run my.ini --json results.json --io-log ios.csv\n"
    "  iosim run job.fio --device-model ssd-sata --json sim.json\n\n"
    "fio job files: with --device-model, SCENARIO is a fio job file, read with\n"
    "fio 3.33's syntax and defaults (rw=read, bs=4k, ioengine=psync, iodepth=1,\n"
    "direct=0).  The device stands for a job's filename=, shared by its clones\n"
    "(size defaults to the whole device); without filename= each clone has a\n"
    "file of its own (give size=), laid out one after another on the device.\n"
    "Each job is one process named after it, NAME.0 ... NAME.N-1 with\n"
    "numjobs=N (fio's JSON lists clones in that order, for iosim compare).  In\n"
    "a scenario, '[process NAME] fio = FILE' (and device = DEVICE) adds a job\n"
    "file's jobs.  io_uring is simulated as libaio (same depth; host-model CPU\n"
    "costs are libaio's), fdatasync as fsync; sync engines keep one I/O in\n"
    "flight whatever iodepth says, as fio does.  --set 'process JOB.N.KEY=V'\n"
    "sets clone N of a job, --set 'process JOB.KEY=V' all its clones.\n\n"
    "%s\n", fio_help);
  g_option_context_set_description (ctx, description);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim run: %s\n", error->message);
      return 2;
    }
  if (argc != 2)
    {
      fprintf (stderr, "iosim run: expected one scenario file (see --help)\n");
      return 2;
    }

  if (device_model == NULL && g_str_has_suffix (argv[1], ".fio"))
    {
      fprintf (stderr, "iosim run: %s looks like a fio job file: give the device it runs on "
               "with --device-model NAME (see --help)\n", argv[1]);
      return 2;
    }
  g_autoptr (Scenario) s = device_model
                           ? scenario_load_fio (argv[1], device_model, (const char *const *) sets,
                                                &error)
                           : scenario_load_file (argv[1], (const char *const *) sets, &error);
  if (s == NULL)
    {
      fprintf (stderr, "iosim run: %s\n", error->message);
      return 1;
    }
  if (seed >= 0)
    scenario_set_seed (s, (guint64) seed);

  ScenarioOutputs outputs = { NULL, NULL, NULL };
  FILE *readprofile = NULL;
  if ((io_log_path && !(outputs.io_log = open_output (io_log_path, &error)))
      || (trace_path && !(outputs.trace_out = open_output (trace_path, &error)))
      || (sched_log_path && !(outputs.sched_log = open_output (sched_log_path, &error)))
      || (timeseries_path && !(outputs.timeseries = open_output (timeseries_path, &error)))
      || (vmstat_path && !(outputs.vmstat = open_output (vmstat_path, &error)))
      || (readprofile_path && !(readprofile = open_output (readprofile_path, &error))))
    {
      fprintf (stderr, "iosim run: %s\n", error->message);
      close_output (outputs.io_log);
      close_output (outputs.trace_out);
      close_output (outputs.sched_log);
      close_output (outputs.timeseries);
      close_output (outputs.vmstat);
      return 1;
    }
  outputs.vmstat_text = vmstat_text;
  if (readprofile)
    fputs (SIM_REPORT_PROFILE_CSV_HEADER, readprofile);
  if (interval_text && (!sim_parse_time_ns (interval_text, 0, &outputs.sample_ns, &error)
                        || outputs.sample_ns <= 0))
    {
      fprintf (stderr, "iosim run: --interval: %s\n", error ? error->message : "must be positive");
      return 2;
    }
  g_autoptr (GPtrArray) series = NULL;
  if (plot_path)
    series = outputs.series = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_series_free);
  g_autoptr (GPtrArray) wb_series = NULL;
  if (plot_wb_path)
    wb_series = outputs.writeback_series
              = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_series_free);
  if (outputs.io_log)
    trace_results_write_header (outputs.io_log);
  if (outputs.timeseries)
    fputs (SIM_TIMESERIES_HEADER, outputs.timeseries);
  if (outputs.vmstat)
    fputs (HOST_VMSTAT_CSV_HEADER, outputs.vmstat);

  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  g_autoptr (GString) text = g_string_new (NULL);
  g_string_append_printf (text, "scenario: %s  seed: %" G_GUINT64_FORMAT "  runs: %u\n",
                          scenario_name (s), scenario_seed (s), scenario_n_runs (s));
  int status = 0;
  /* A progress line with an ETA on stderr, for people watching long runs;
   * never in output that is not a terminal. */
  Progress progress = { .label = NULL };
  sim_progress_init (&progress.line, isatty (fileno (stderr)), scenario_n_runs (s),
                     g_get_monotonic_time ());
  if (progress.line.enabled)
    {
      outputs.progress = show_progress;
      outputs.progress_data = &progress;
    }
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      progress.label = scenario_run_label (s, r);
      SimRunResult *result = scenario_run (s, r, &outputs, &error);
      if (result == NULL)
        {
          fprintf (stderr, "iosim run: %s\n", error->message);
          status = 1;
          break;
        }
      g_ptr_array_add (runs, result);
      g_string_append_c (text, '\n');
      sim_report_run_text (text, result);
      if (readprofile_text)
        sim_report_profile_text (text, result, 20);
      if (readprofile)
        {
          g_autoptr (GString) rows = g_string_new (NULL);
          sim_report_profile_csv (rows, result);
          fputs (rows->str, readprofile);
        }
    }
  sim_progress_clear (&progress.line, stderr);
  close_output (outputs.io_log);
  close_output (outputs.trace_out);
  close_output (outputs.sched_log);
  close_output (outputs.timeseries);
  close_output (outputs.vmstat);
  close_output (readprofile);
  if (status != 0)
    return status;
  if (runs->len > 1)
    {
      g_string_append_c (text, '\n');
      sim_report_compare_text (text, runs);
    }
  if (!quiet)
    fputs (text->str, stdout);
  if (plot_path)
    {
      g_autofree char *title = g_strdup_printf ("%s: throughput per process and run",
                                                scenario_name (s));
      if (!plot_series (series, title, "MB/s", plot_path, &error))
        {
          fprintf (stderr, "iosim run: --plot: %s\n", error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  if (plot_wb_path)
    {
      g_autofree char *title = g_strdup_printf ("%s: dirty, writeback and thresholds per device",
                                                scenario_name (s));
      if (wb_series->len == 0)
        {
          fprintf (stderr, "iosim run: --plot-writeback: no buffered I/O in this scenario, "
                   "nothing to plot\n");
          status = 1;
        }
      else if (!plot_series (wb_series, title, "MiB", plot_wb_path, &error))
        {
          fprintf (stderr, "iosim run: --plot-writeback: %s\n", error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  if (json_path)
    {
      g_autofree char *json = sim_report_json (scenario_name (s), scenario_seed (s), runs);
      FILE *f = open_output (json_path, &error);
      if (f == NULL)
        {
          fprintf (stderr, "iosim run: %s\n", error->message);
          return 1;
        }
      fputs (json, f);
      fputc ('\n', f);
      close_output (f);
    }
  return status;
}
