/* cmd-sweep.c — `iosim sweep SCENARIO --vary ... -o DIR`: run a scenario
 * over the cartesian product of --set values and seeds, on local cores or
 * as one shard of a cluster job, resumable; `iosim sweep merge` joins the
 * shards.  The logic is models/sweep.h; plots are cmd-sweep-plot.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd-sweep.h"
#include "cli/cmd-sweep-slurm.h"
#include "models/sweep.h"
#include "sim/sim-progress.h"

typedef struct {
  SimProgress line;
} Progress;

static void
show_progress (gpointer data, guint done, guint total)
{
  Progress *pr = data;
  gint64 now = g_get_monotonic_time ();
  SimProgress *p = &pr->line;
  if (!p->enabled || total == 0 || (p->last_us >= 0 && now - p->last_us < SIM_PROGRESS_MIN_INTERVAL_US))
    return;
  double fraction = (double) done / (double) total;
  g_autofree char *eta = sim_progress_format_eta (sim_progress_eta_us (fraction, now - p->start_us));
  g_autofree char *line = g_strdup_printf ("  point %u/%u %5.1f%%, ETA %s", done, total,
                                           100.0 * fraction, eta);
  gsize len = strlen (line);
  fprintf (stderr, "\r%s%*s", line, p->last_len > len ? (int) (p->last_len - len) : 0, "");
  fflush (stderr);
  p->last_us = now;
  p->last_len = len;
}

/* The first Ctrl-C (or SIGTERM, SIGHUP) lets the points in progress
 * finish and their rows be kept; the handler then resets itself, so a
 * second one ends the sweep at once (the row store survives a kill). */
static void
on_stop (int signo)
{
  static const char msg[] = "\niosim sweep: stopping after the points in progress "
                            "(again to quit at once; the same command resumes)\n";
  (void) signo;
  cli_stop_requested = 1;
  if (write (STDERR_FILENO, msg, sizeof msg - 1) < 0)
    cli_stop_requested = 1;   /* nothing to do about a closed stderr */
}

static void
install_stop_handlers (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
}

static const char summary_text[] =
  "Run a scenario over every combination of the --vary lists (the points),\n"
  "each with --seeds seeds, and write per-run figures and their means with\n"
  "95% confidence intervals across seeds.  Points run in parallel (-j); an\n"
  "interrupted sweep, re-run with the same arguments and -o, runs only the\n"
  "points it had not finished.  --shard I/N runs a slice of the points (for\n"
  "a cluster job array); 'iosim sweep merge DIR -o OUT' joins the shards into\n"
  "the files a local run writes, byte for byte.";

static const char description_text[] =
  "Example: deadline's fifo_batch against read_expire, 3 seeds each:\n"
  "  iosim sweep models/scenarios/sweep-deadline.ini \\\n"
  "      --vary 'sched deadline.fifo_batch=1,4,16' \\\n"
  "      --vary 'sched deadline.read_expire=50ms,500ms' --seeds 3 -o study\n"
  "  column -s, -t study/summary.csv | less -S\n\n"
  "Points: --vary 'GROUP.KEY=V1,V2,...' is --set's syntax with a list; a comma\n"
  "inside a value is written '\\,' (a backslash '\\\\').  Several --vary give\n"
  "their product, the last varying fastest; point numbers count in that order.\n"
  "--set applies to every point.  A device listing several elevators gives\n"
  "several runs per point: the 'run' column.\n\n"
  "Seeds: replicate r of a point runs with\n"
  "  splitmix64 (master ^ splitmix64 (fnv1a64 (point's KEY=VALUE lines) + r)) >> 11\n"
  "master being --seed, else the scenario's [sim] seed.  Seeds depend on the\n"
  "point's values, never on -j, the shard or the order of completion.\n\n"
  "Files in DIR:\n"
  "  results.csv, results.json  one row per point, replicate and run: the\n"
  "      varied values, replicate, seed, run, then process.NAME.FIGURE\n"
  "      (ios, mb_per_s, iops, lat_mean_ms, lat_p50_ms, lat_p99_ms, lat_max_ms)\n"
  "      and device.NAME.FIGURE (util, merges, mean_queue_depth,\n"
  "      mean_in_flight, jain_index)\n"
  "  summary.csv, summary.json  one row per point and run: seeds, then FIGURE.mean\n"
  "      and FIGURE.ci95, the half-width t(0.975, n-1) * s / sqrt(n) of Student's\n"
  "      t; empty (null in JSON) with one seed, where there is no spread\n"
  "  plot-KEY.png    per varied key, mean MB/s of each process with its CI,\n"
  "                  one line per value of the other keys (gnuplot on PATH)\n"
  "  heatmap-PROCESS[-RUN].png  with exactly two varied keys: mean MB/s over both\n"
  "  manifest.json   what identifies the sweep: a re-run into DIR with other\n"
  "                  arguments is refused unless --force\n"
  "  .rows.csv       rows as points finish, read back on resume\n"
  "Numbers: C locale, whole numbers as such, others with 6 significant digits.\n\n"
  "Shards: --shard I/N runs the points whose number % N is I-1 and writes\n"
  "results-shard-I-of-N.csv and manifest-shard-I-of-N.json (and its own row\n"
  "store .rows-shard-I-of-N.csv, to resume), no final files:\n"
  "  for i in 1 2 3; do iosim sweep S.ini --vary ... --shard $i/3 -o parts; done\n"
  "  iosim sweep merge parts -o study\n"
  "merge refuses missing or unfinished shards and shards of different sweeps.\n\n"
  "Ctrl-C lets the points in progress finish (a second one quits at once)\n"
  "and exits with status 3; run the same command again to finish.  Other\n"
  "exit statuses: 0 done, 1 error, 2 usage.";

static int
cmd_sweep_merge (int argc, char **argv)
{
  g_autofree char *out_dir = NULL;
  gboolean no_plots = FALSE, force = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Folder for results.csv, summary.csv, their JSON and plots", "OUT" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      "Write over another sweep's files in OUT", NULL },
    { "no-plots", 0, 0, G_OPTION_ARG_NONE, &no_plots, "Draw no plots", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("DIR -o OUT");
  g_option_context_set_summary (ctx,
    "Join the shard files of one sweep (results-shard-I-of-N.csv and\n"
    "manifest-shard-I-of-N.json, all in DIR) into the files a local run of the\n"
    "same sweep writes, byte for byte.  Missing or unfinished shards and\n"
    "shards of different sweeps are refused, naming them; so is an OUT that\n"
    "holds another sweep's files, unless --force.");
  g_option_context_set_description (ctx, "Example:\n  iosim sweep merge parts -o study\n");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim sweep merge: %s\n", error->message);
      return 2;
    }
  if (argc != 2 || out_dir == NULL)
    {
      fprintf (stderr, "iosim sweep merge: expected DIR -o OUT (see --help)\n");
      return 2;
    }
  if (!sweep_merge (argv[1], out_dir, force, &error))
    {
      fprintf (stderr, "iosim sweep merge: %s\n", error->message);
      return 1;
    }
  if (!no_plots && !cli_sweep_plots (out_dir, &error))
    {
      fprintf (stderr, "iosim sweep merge: plots: %s\n", error->message);
      return 1;
    }
  return 0;
}

int
cli_cmd_sweep (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "merge") == 0)
    return cmd_sweep_merge (argc - 1, argv + 1);

  g_auto (GStrv) vary = NULL;
  g_auto (GStrv) sets = NULL;
  g_autofree char *out_dir = NULL;
  g_autofree char *shard_text = NULL;
  gint64 seed = -1;
  gint seeds = 3;
  gint jobs = 0;
  gint max_points = 0;
  gboolean force = FALSE, no_plots = FALSE;
  GOptionEntry entries[] = {
    { "vary", 'v', 0, G_OPTION_ARG_STRING_ARRAY, &vary,
      "Values of one scenario key, e.g. 'sched deadline.fifo_batch=1,16' (repeatable: "
      "their product)", "GROUP.KEY=V1,V2,..." },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
      "Override a scenario value at every point (repeatable)", "GROUP.KEY=VALUE" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &seeds, "Seeds per point (default 3)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Master seed (overrides [sim] seed)", "N" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Points run at once (default: the CPUs)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir, "Output folder (created)", "DIR" },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard_text,
      "Run only slice I of N of the points (1 <= I <= N), for iosim sweep merge", "I/N" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      "Start afresh in a DIR that holds another sweep", NULL },
    { "no-plots", 0, 0, G_OPTION_ARG_NONE, &no_plots, "Draw no plots", NULL },
    /* Tests: stop after K points, as an interruption would, deterministically. */
    { "max-points", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &max_points, NULL, "K" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SCENARIO.ini --vary GROUP.KEY=V1,V2,... "
                                                         "-o DIR | merge DIR -o OUT");
  g_option_context_set_summary (ctx, summary_text);
  g_autofree char *description = g_strconcat (description_text, "\n\n", cli_sweep_slurm_help, NULL);
  g_option_context_set_description (ctx, description);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_auto (CliSweepSlurm) slurm;
  cli_sweep_slurm_init (&slurm);
  g_option_context_add_main_entries (ctx, slurm.entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim sweep: %s\n", error->message);
      return 2;
    }
  if (argc != 2 || out_dir == NULL)
    {
      fprintf (stderr, "iosim sweep: expected one scenario file and -o DIR (see --help)\n");
      return 2;
    }
  if (seeds < 1 || jobs < 0 || max_points < 0)
    {
      fprintf (stderr, "iosim sweep: --seeds must be at least 1, -j and --max-points "
               "not negative\n");
      return 2;
    }
  SweepRunOptions opt = { .jobs = jobs ? (guint) jobs : g_get_num_processors (),
                          .max_points = (guint) max_points, .force = force,
                          .stop = &cli_stop_requested };
  if (shard_text && !sweep_parse_shard (shard_text, &opt.shard_i, &opt.shard_n, &error))
    {
      fprintf (stderr, "iosim sweep: %s\n", error->message);
      return 2;
    }
  g_autoptr (Sweep) sw = sweep_new (argv[1], (const char *const *) vary,
                                    (const char *const *) sets, (guint) seeds, seed, &error);
  if (sw == NULL)
    {
      fprintf (stderr, "iosim sweep: %s\n", error->message);
      return error->domain == SWEEP_ERROR ? 2 : 1;
    }
  if (slurm.emit_dir != NULL)
    return cli_sweep_emit_slurm (&slurm, sw, out_dir, shard_text != NULL);
  if (!cli_sweep_slurm_unused (&slurm))
    return 2;

  install_stop_handlers ();
  /* A progress line with an ETA for people watching; never in redirected
   * output. */
  Progress progress;
  sim_progress_init (&progress.line, isatty (fileno (stderr)), 1, g_get_monotonic_time ());
  if (progress.line.enabled)
    {
      opt.progress = show_progress;
      opt.progress_data = &progress;
    }
  SweepRunReport report;
  gboolean ok = sweep_run (sw, out_dir, &opt, &report, &error);
  sim_progress_clear (&progress.line, stderr);
  if (!ok)
    {
      fprintf (stderr, "iosim sweep: %s\n", error->message);
      return 1;
    }
  printf ("points: %u, seeds: %u, skipped (already complete): %u, run: %u\n", report.n_points,
          sw->n_seeds, report.skipped, report.run);
  if (!report.complete)
    {
      fprintf (stderr, "iosim sweep: stopped with %u of %u points done; run the same command "
               "again to finish\n", report.skipped + report.run, report.n_points);
      return 3;
    }
  if (opt.shard_n == 0 && !no_plots && !cli_sweep_plots (out_dir, &error))
    {
      fprintf (stderr, "iosim sweep: plots: %s\n", error->message);
      return 1;
    }
  return 0;
}
