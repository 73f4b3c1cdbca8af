/* cmd-validate.c — `iosim validate --target /dev/X --sched A,B,... [--repeat N]
 * [--json F] [--plot DIR] (TRACE | --target-dir DIR CAPTURE | -- CMD ARGS...)`:
 * option parsing, the
 * work directory, progress and signals around replay_validate_run()
 * (replay/replay-validate.h).  SIGINT, SIGTERM and SIGHUP raise the flag
 * the stages poll: the running capture or replay stops, the target's
 * scheduler is restored, and the command exits 130. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sim/sim-output.h"
#include "replay/replay-plot.h"
#include "replay/replay-validate.h"

typedef struct {
  char    *target, *sched, *json, *plot, *work_dir, *target_dir, *model;
  gint     repeat, threads;
  gboolean allow_write;
} ValidateArgs;

static void
args_clear (ValidateArgs *a)
{
  g_free (a->target);
  g_free (a->sched);
  g_free (a->json);
  g_free (a->plot);
  g_free (a->work_dir);
  g_free (a->target_dir);
  g_free (a->model);
}

/* The progress line is up (no newline yet): a log line clears it first. */
static gboolean progress_shown;

static void
show_progress (guint step, guint n_steps, const char *label, gint64 elapsed_ns, gint64 eta_ns,
               gpointer data)
{
  g_autofree char *left = eta_ns >= 0 && step < n_steps
                        ? g_strdup_printf (", about %.0f s left", eta_ns / 1e9) : g_strdup ("");

  fprintf (stderr, "\r\033[K  validate [%u/%u] %s  %.1f s%s", MIN (step + 1, n_steps), n_steps,
           label, elapsed_ns / 1e9, left);
  fflush (stderr);
  progress_shown = TRUE;
}

static ssize_t
log_write (void *cookie, const char *buf, size_t size)
{
  if (progress_shown)
    {
      fputs ("\r\033[K", stderr);
      progress_shown = FALSE;
    }
  return (ssize_t) fwrite (buf, 1, size, stderr);
}

/* stderr for the stages' messages, clearing the progress line before
 * each: on a terminal the two would otherwise share a line. */
static FILE *
open_log (void)
{
  cookie_io_functions_t io = { .write = log_write };
  FILE *log = fopencookie (NULL, "w", io);

  if (log == NULL)
    return stderr;
  setvbuf (log, NULL, _IOLBF, 0);
  return log;
}

/* Remove the files of a temporary work directory (flat: the stages write
 * no subfolders), then the directory. */
static void
remove_work_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (unlink (path) != 0)
        fprintf (stderr, "iosim validate: cannot remove %s: %s\n", path, g_strerror (errno));
    }
  if (rmdir (dir) != 0)
    fprintf (stderr, "iosim validate: cannot remove %s: %s\n", dir, g_strerror (errno));
}

static int
write_outputs (const ReplayValidateReport *report, const ValidateArgs *a)
{
  g_autoptr (GError) error = NULL;
  int status = 0;

  replay_validate_report_print (report, stdout);
  fflush (stdout);
  if (a->json)
    {
      g_autofree char *json = replay_validate_report_to_json (report);
      g_autofree char *text = g_strconcat (json, "\n", NULL);

      if (!sim_output_write (a->json, text, -1, &error))
        {
          fprintf (stderr, "iosim validate: %s\n", error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  if (a->plot && !replay_validate_plot (report, a->plot, &error))
    {
      if (g_error_matches (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_GNUPLOT))
        fprintf (stderr, "iosim validate: --plot %s: gnuplot not found: install gnuplot-nox; "
                 "the figures are in the table%s\n", a->plot, a->json ? " and the JSON" : "");
      else
        fprintf (stderr, "iosim validate: --plot: %s\n", error->message);
      status = 1;
    }
  else if (a->plot)
    fprintf (stderr, "iosim validate: plots in %s/latency-cdf.png and "
             "%s/predicted-vs-measured.png\n", a->plot, a->plot);
  return status;
}

/* Refusals that need no device; 0 when the options are usable. */
static int
check_args (const ValidateArgs *a, int argc, char **command)
{
  FitModelKind kind;

  if (a->threads < 0)
    {
      fprintf (stderr, "iosim validate: --threads takes a count from 1\n");
      return 2;
    }
  if (a->model && !fit_model_kind_parse (a->model, &kind))
    {
      fprintf (stderr, "iosim validate: --model '%s': fixed, disk, ssd, empirical or auto\n", a->model);
      return 2;
    }
  if (a->target == NULL || a->sched == NULL || (argc == 2) == (command != NULL) || argc > 2)
    {
      fprintf (stderr, "iosim validate: need --target /dev/X, --sched A,B,... and either one "
               "TRACE (an NFS capture with --target-dir DIR) or -- COMMAND [ARGS...] (see "
               "--help)\n");
      return 2;
    }
  return 0;
}

int
cli_cmd_validate (int argc, char **argv)
{
  ValidateArgs a = { .repeat = 3 };
  GOptionEntry entries[] = {
    { "target", 't', 0, G_OPTION_ARG_FILENAME, &a.target, "Block device to measure on (required)",
      "/dev/X" },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &a.sched,
      "Kernel schedulers to compare; the first is the one the model is fitted under (required)",
      "A,B,..." },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &a.repeat,
      "Measured runs per scheduler, and simulated seeds 1..N (default 3)", "N" },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "Write the report as JSON", "FILE" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &a.plot,
      "Draw the response-time CDFs and predicted-against-measured bars into DIR (gnuplot)", "DIR" },
    { "work-dir", 'w', 0, G_OPTION_ARG_FILENAME, &a.work_dir,
      "Keep every intermediate file here (default: a temporary directory, removed)", "DIR" },
    { "allow-write", 0, 0, G_OPTION_ARG_NONE, &a.allow_write,
      "With a TRACE: replay its writes too (a block trace: destroys data on the target; an NFS "
      "capture: only inside DIR/iosim-nfs-replay/)", NULL },
    { "target-dir", 0, 0, G_OPTION_ARG_FILENAME, &a.target_dir,
      "NFS capture: replay it server-side in DIR/iosim-nfs-replay/; DIR is on the file system "
      "mounted from the target",
      "DIR" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &a.threads,
      "NFS capture: worker threads of the replay, as nfsd threads (default 8)", "N" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &a.model,
      "Device model kind for the fit: fixed, disk, ssd, empirical or auto (default: the held-out choice, as "
      "iosim fit)",
      "KIND" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "(TRACE | --target-dir DIR CAPTURE | -- COMMAND [ARGS...]) - check the model's scheduler "
    "predictions on a real device");
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayValidateReport) report = NULL;
  g_auto (GStrv) scheds = NULL;
  g_autofree char *temp_dir = NULL;
  ReplayValidateOptions opts = { 0 };
  char **command;
  int opt_argc, status;

  command = cli_split_command (argc, argv, &opt_argc);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
    "Asks the model \"what if I used another scheduler?\" and lets the device answer too:\n"
    "  1. measure: for each --sched, set it on the target and run COMMAND --repeat times\n"
    "     under a tracefs capture (or replay TRACE, captured the same way; an NFS\n"
    "     CAPTURE replays server-side in --target-dir DIR, see below);\n"
    "  2. fit the first scheduler's first capture (the trained scheduler);\n"
    "  3. simulate the fitted scenario under every scheduler, seeds 1..N;\n"
    "  4. compare per scheduler: throughput (also per process), mean and p50/p95/p99\n"
    "     latency, demerit, Jain's index over the processes' throughputs, each with the\n"
    "     95 % interval of the measured repeats; the change from the trained scheduler,\n"
    "     predicted against measured (inside the measured interval?); the rankings.");
  g_option_context_set_description (ctx,
    "Latency is block-layer latency on both sides, bio by bio, from queue to completion:\n"
    "from the captures and from the simulator's block trace.  The fit gets this machine's\n"
    "memory and dirty limits (/proc/meminfo, /proc/sys/vm), so that page-cache writeback\n"
    "is simulated by buffered writers.  Processes are matched as COMM.K, since pids\n"
    "differ between runs: K counts the processes of that name by the offset of their first\n"
    "I/O with data, then by its time (processes of flushes only last).  Schedulers are\n"
    "the blk-mq ones: mq-deadline, bfq, kyber, none (the simulator has each under that\n"
    "name).\n\n"
    "The target's scheduler is journaled before it changes and restored after each\n"
    "scheduler's runs, also on error and after Ctrl-C/SIGTERM; after a SIGKILL the next\n"
    "replay, capture or validate on the device, or 'iosim restore', puts it back.  Needs\n"
    "root and the blk tracer.  With a block TRACE, writes are replayed only with\n"
    "--allow-write, never on a mounted or busy device (as iosim replay).\n\n"
    "Reading the change table: 'inside' says whether the predicted change lies in the\n"
    "95 % interval of the measured change (Welch's, from the repeats of both schedulers);\n"
    "'significant' whether that interval excludes 0 (the schedulers really differed on\n"
    "this device); 'same sign' whether model and device moved the same way.  With\n"
    "--repeat 1 there are no intervals ('-').  Rankings: by mean latency, lowest first\n"
    "(the JSON's ranking_predicted and ranking_measured), and by throughput, highest first.\n\n"
    "NFS captures (pcap, pcapng) with --target-dir DIR, a directory of the file system\n"
    "mounted from the target (DIR's device must be the target: checked before anything\n"
    "is touched).  Each run replays the capture server-side, as 'iosim replay CAPTURE\n"
    "--target-dir DIR' does: a pool of --threads workers (named iosim-nfsd, as nfsd\n"
    "threads) takes the operations in trace order at their recorded times.  In order:\n"
    "setup (DIR/iosim-nfs-replay/ emptied, the capture's files made and filled), sync\n"
    "and 1 into /proc/sys/vm/drop_caches (clean page cache dropped, so every run\n"
    "starts cold; not a setting, nothing to restore), then the block capture starts,\n"
    "the workers run, the file system is synced (syncfs: the run's writes are\n"
    "recorded) and the capture stops.  Setup is outside the capture, and redone each\n"
    "run so that a run with --allow-write starts from the capture's tree again.\n"
    "Reads, lookups and opens only unless --allow-write; nothing is written outside\n"
    "DIR/iosim-nfs-replay/.  The fit is of the block capture: the workers and the file\n"
    "system's threads (jbd2, kworker) as trace-driven processes, the pool as\n"
    "independent threads (fitted.ini says what that loses).  A freshly made and\n"
    "mounted ext4 initialises its inode tables and reads its block bitmaps in the\n"
    "background (ext4lazyinit) for a while, and that I/O would be captured: make it\n"
    "with mkfs.ext4 -E lazy_itable_init=0,lazy_journal_init=0 and mount it with\n"
    "-o no_prefetch_block_bitmaps.\n\n"
    "Files (--work-dir): capture-SCHED-rN.txt, fitted.ini, simtrace-SCHED-sN.blk (the\n"
    "simulated block trace), measured-SCHED-rN.csv and predicted-SCHED-sN.csv (per-I/O\n"
    "results); with an NFS capture also nfs-replay-SCHED-rN.json and .csv (the replay's\n"
    "own summary and operations); wbt-kernel-SCHED-rN.txt and wbt-sim-SCHED-sN.txt, blk-wbt's\n"
    "window verdicts and steps in the kernel (its tracepoints, where it has them) and in\n"
    "the simulation, summed up side by side after the rankings with the first window\n"
    "whose verdict or step differs.  Each step can be rerun by hand, e.g.\n"
    "  iosim run fitted.ini --set 'device loop3.sched=bfq' --trace-out sim.blk\n"
    "  iosim compare predicted-bfq-s1.csv measured-bfq-r1.csv\n\n"
    "Examples:\n"
    "  iosim validate --target /dev/loop3 --sched mq-deadline,bfq,none --repeat 3 \\\n"
    "      --json val.json --plot plots -- \\\n"
    "      fio --name=r --filename=/dev/loop3 --direct=1 --rw=randread --bs=4k --size=64m "
    "--numjobs=2\n"
    "  mount -o no_prefetch_block_bitmaps /dev/loop3 /mnt/test\n"
    "  iosim validate --target /dev/loop3 --target-dir /mnt/test --allow-write \\\n"
    "      --sched mq-deadline,none --repeat 3 --json val.json server.pcap");
  if (!g_option_context_parse (ctx, &opt_argc, &argv, &error))
    {
      fprintf (stderr, "iosim validate: %s\n", error->message);
      args_clear (&a);
      return 2;
    }
  if ((status = check_args (&a, opt_argc, command)) != 0)
    {
      args_clear (&a);
      return status;
    }
  scheds = g_strsplit (a.sched, ",", -1);
  opts.target = a.target;
  opts.scheds = (const char *const *) scheds;
  opts.repeat = a.repeat < 0 ? 0 : (guint) a.repeat;
  if (a.model != NULL)
    fit_model_kind_parse (a.model, &opts.model);
  opts.trace_path = command ? NULL : argv[1];
  opts.argv = command;
  opts.allow_write = a.allow_write;
  opts.target_dir = a.target_dir;
  opts.threads = (guint) a.threads;
  opts.work_dir = a.work_dir;
  if (a.work_dir == NULL)
    opts.work_dir = temp_dir = g_dir_make_tmp ("iosim-validate-XXXXXX", &error);
  else if (g_mkdir_with_parents (a.work_dir, 0755) != 0)
    {
      fprintf (stderr, "iosim validate: --work-dir %s: %s\n", a.work_dir, g_strerror (errno));
      args_clear (&a);
      return 1;
    }
  if (opts.work_dir == NULL)
    {
      fprintf (stderr, "iosim validate: %s\n", error->message);
      args_clear (&a);
      return 1;
    }
  opts.stop = &cli_stop_requested;
  opts.log = stderr;
  if (isatty (STDERR_FILENO))
    {
      opts.progress = show_progress;
      opts.log = open_log ();
    }
  cli_install_stop_handlers ();

  report = replay_validate_run (&opts, &error);
  if (opts.progress)
    {
      fflush (opts.log);
      fputs ("\r\033[K", stderr);
    }
  if (report == NULL)
    {
      fprintf (stderr, "iosim validate: %s\n", error->message);
      /* 2 for options refused before anything was touched, as check_args. */
      status = g_error_matches (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_INTERRUPTED)
               ? 130
               : g_error_matches (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS)
               ? 2 : 1;
    }
  else
    {
      /* A temporary work directory goes away: do not point at it. */
      if (temp_dir)
        g_clear_pointer (&report->scenario_path, g_free);
      status = write_outputs (report, &a);
    }
  if (temp_dir)
    remove_work_dir (temp_dir);
  if (opts.log != stderr)
    fclose (opts.log);
  args_clear (&a);
  return status;
}
