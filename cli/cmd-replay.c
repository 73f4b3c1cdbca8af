/* cmd-replay.c — `iosim replay TRACE --target /dev/X`: option parsing and
 * output files around replay_run() (replay/replay.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd-replay-nfs.h"
#include "cli/cmd-replay-setup.h"
#include "replay/replay.h"
#include "sim/sim-units.h"
#include "traces/trace-nfs.h"

typedef struct {
  char    *target, *events, *timing, *csv, *json, *device, *lead, *spin;
  char    *engine, *cpus, *target_dir, *max_setup_bytes, *max_io_bytes, *target_size;
  double   speed;
  gint     realtime, iodepth, device_depth, threads;
  gboolean allow_write, reads_only, wrap, dry_run, buffered, poll, per_bio;
  GArray  *cpu_list;       /* parsed --cpus, owned */
} ReplayArgs;


static gboolean
parse_time_option (const char *name, const char *text, gint64 *out)
{
  g_autoptr (GError) error = NULL;
  SimTime ns;

  if (!sim_parse_time_ns (text, 0, &ns, &error))
    {
      fprintf (stderr, "iosim replay: --%s: %s\n", name, error->message);
      return FALSE;
    }
  *out = (gint64) ns;
  return TRUE;
}

static void
progress_line (guint64 done, guint64 total, gint64 elapsed_ns, gpointer data)
{
  fprintf (stderr, "\r  replay: %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " I/Os  %.1f s   ",
           done, total, elapsed_ns > 0 ? elapsed_ns / 1e9 : 0.0);
  fflush (stderr);
}

static gboolean
parse_devno (const char *text, guint32 *maj, guint32 *min)
{
  g_auto (GStrv) parts = g_strsplit_set (text, ",:", 2);
  guint64 a, b;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32 - 1, &a, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32 - 1, &b, NULL))
    return FALSE;
  *maj = (guint32) a;
  *min = (guint32) b;
  return TRUE;
}

static gboolean G_GNUC_PRINTF (1, 2)
bad_option (const char *format, ...)
{
  va_list args;

  fputs ("iosim replay: ", stderr);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
  return FALSE;
}

/* --engine, --iodepth, --device-depth, --threads, --buffered, --cpus. */
static gboolean
fill_engine_options (ReplayArgs *a, ReplayOptions *opts)
{
  g_autoptr (GError) error = NULL;

  if (a->engine && !replay_engine_parse (a->engine, &opts->engine))
    return bad_option ("--engine must be psync, io_uring or libaio, not '%s'", a->engine);
  if (!replay_engine_available (opts->engine, &error))
    return bad_option ("%s", error->message);
  if (a->iodepth < 0 || a->iodepth > 65536)
    return bad_option ("--iodepth takes a depth from 1 to 65536");
  if (a->device_depth < 0 || a->device_depth > 65536)
    return bad_option ("--device-depth takes a depth from 1 to 65536");
  if (a->threads < 0 || a->threads > 4096)
    return bad_option ("--threads takes a count from 1 to 4096");
  opts->iodepth = (guint) a->iodepth;
  opts->device_depth = (guint) a->device_depth;
  opts->threads = (guint) a->threads;
  opts->buffered = a->buffered;
  opts->poll = a->poll;
  /* Polling spins from 1 ms before each I/O: at 1k IOPS and above it
   * never sleeps, and an idle stretch of the trace costs no CPU. */
  if (a->poll && a->spin == NULL)
    opts->spin_ns = REPLAY_POLL_SPIN_NS;
  if (a->cpus)
    {
      a->cpu_list = replay_cpus_parse (a->cpus, &error);
      if (a->cpu_list == NULL)
        return bad_option ("--cpus: %s", error->message);
      opts->cpus = a->cpu_list;
    }
  return TRUE;
}

/* Fill @opts from the parsed arguments; FALSE with a message on stderr. */
static gboolean
fill_options (ReplayArgs *a, ReplayOptions *opts)
{
  opts->target = a->target;
  opts->speed = a->speed;
  opts->allow_write = a->allow_write;
  opts->reads_only = a->reads_only;
  opts->wrap = a->wrap;
  opts->dry_run = a->dry_run;
  opts->per_bio = a->per_bio;
  if (a->events && !replay_events_parse (a->events, &opts->events))
    return bad_option ("--events must be queue or issue, not '%s'", a->events);
  if (a->timing && !replay_timing_parse (a->timing, &opts->timing))
    return bad_option ("--timing must be recorded, closed or afap, not '%s'",
                    a->timing);
  if (a->realtime < 0 || a->realtime > 99)
    return bad_option ("--realtime takes a priority from 1 to 99");
  opts->rt_priority = a->realtime;
  if (!(opts->speed > 0))
    return bad_option ("--speed must be a positive factor");
  if (a->device && !parse_devno (a->device, &opts->dev_major, &opts->dev_minor))
    return bad_option ("--device takes MAJOR,MINOR, not '%s'", a->device);
  if (a->lead && !parse_time_option ("lead", a->lead, &opts->lead_ns))
    return FALSE;
  if (a->spin && !parse_time_option ("spin", a->spin, &opts->spin_ns))
    return FALSE;
  if (a->allow_write && a->reads_only)
    return bad_option ("--allow-write and --reads-only contradict each other");
  if (a->target_size != NULL
      && (!sim_parse_size_bytes (a->target_size, &opts->target_size_bytes, NULL)
          || opts->target_size_bytes == 0))
    return bad_option ("--target-size takes a positive size (e.g. 1GiB), not '%s'",
                       a->target_size);
  if (a->target_size != NULL && a->target == NULL)
    return bad_option ("--target-size sizes the one --target FILE; with --map, size each file "
                       "first (e.g. truncate -s SIZE FILE)");
  return fill_engine_options (a, opts);
}

static gboolean
write_outputs (const ReplayResult *result, const ReplayArgs *a, GError **error)
{
  if (a->csv)
    {
      FILE *out = fopen (a->csv, "w");
      if (out == NULL)
        {
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", a->csv,
                       g_strerror (errno));
          return FALSE;
        }
      replay_result_write_csv (result, out);
      if (fclose (out) != 0)
        {
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", a->csv,
                       g_strerror (errno));
          return FALSE;
        }
    }
  return a->json == NULL || replay_result_write_json (result, a->json, error);
}

static void
args_clear (ReplayArgs *a)
{
  g_free (a->target);
  g_free (a->events);
  g_free (a->timing);
  g_free (a->csv);
  g_free (a->json);
  g_free (a->device);
  g_free (a->lead);
  g_free (a->spin);
  g_free (a->engine);
  g_free (a->cpus);
  g_free (a->target_dir);
  g_free (a->max_setup_bytes);
  g_free (a->max_io_bytes);
  g_free (a->target_size);
  if (a->cpu_list)
    g_array_unref (a->cpu_list);
}

int
cli_cmd_replay (int argc, char **argv)
{
  ReplayArgs a = { .speed = 1.0 };
  ReplayTargetArgs ta = { 0 };
  GOptionEntry entries[] = {
    { "target", 't', 0, G_OPTION_ARG_FILENAME, &a.target,
      "Block device or regular file to replay on (or --map)", "/dev/X|FILE" },
    { "target-size", 0, 0, G_OPTION_ARG_STRING, &a.target_size,
      "A FILE target: use SIZE bytes of it, creating or extending it (sparse) first if shorter",
      "SIZE" },
    { "target-dir", 0, 0, G_OPTION_ARG_FILENAME, &a.target_dir,
      "NFS capture: replay its file operations in DIR/iosim-nfs-replay/ (threads default 8)", "DIR" },
    { "max-setup-bytes", 0, 0, G_OPTION_ARG_STRING, &a.max_setup_bytes,
      "NFS capture: most data setup may write, only in DIR/iosim-nfs-replay/ (default 1GiB; never "
      "more than the free space)", "SIZE" },
    { "max-io-bytes", 0, 0, G_OPTION_ARG_STRING, &a.max_io_bytes,
      "NFS capture: largest READ/WRITE count replayed (default: the capture's FSINFO or "
      "CREATE_SESSION limit, else 1MiB; larger ones are skipped and counted)", "SIZE" },
    { "events", 0, 0, G_OPTION_ARG_STRING, &a.events, "Replay Q (queue, default) or D (issue) times", "queue|issue" },
    { "timing", 0, 0, G_OPTION_ARG_STRING, &a.timing,
      "recorded: trace times (default); closed: the completion that released each I/O in the trace + "
      "think time (I/Os the trace queued together keep their gaps); afap: no waits", "MODE" },
    { "speed", 0, 0, G_OPTION_ARG_DOUBLE, &a.speed, "Time compression factor (2 = twice as fast)", "FACTOR" },
    { "allow-write", 0, 0, G_OPTION_ARG_NONE, &a.allow_write, "Replay writes too (destroys data on the target)", NULL },
    { "reads-only", 0, 0, G_OPTION_ARG_NONE, &a.reads_only, "Skip the trace's writes", NULL },
    { "wrap", 0, 0, G_OPTION_ARG_NONE, &a.wrap, "Wrap offsets beyond the target modulo its size", NULL },
    { "per-bio", 0, 0, G_OPTION_ARG_NONE, &a.per_bio,
      "One I/O per traced bio (default: the bios a request carried replay as one I/O)", NULL },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &a.dry_run, "Print the plan; open nothing", NULL },
    { "device", 0, 0, G_OPTION_ARG_STRING, &a.device, "Replay only this traced device", "MAJ,MIN" },
    { "lead", 0, 0, G_OPTION_ARG_STRING, &a.lead, "Delay before the first I/O (default 20ms)", "TIME" },
    { "spin", 0, 0, G_OPTION_ARG_STRING, &a.spin, "Spin instead of sleeping this long before each I/O (default 50us)", "TIME" },
    { "realtime", 0, 0, G_OPTION_ARG_INT, &a.realtime,
      "Run the replay threads SCHED_FIFO at this priority (1-99; root), for wake-ups on time under load", "PRIO" },
    { "engine", 0, 0, G_OPTION_ARG_STRING, &a.engine,
      "psync (default: synchronous, a thread per process or --threads), io_uring or libaio", "ENGINE" },
    { "iodepth", 0, 0, G_OPTION_ARG_INT, &a.iodepth,
      "I/Os in flight per process (io_uring/libaio default 32; psync pool default: no limit)", "N" },
    { "device-depth", 0, 0, G_OPTION_ARG_INT, &a.device_depth,
      "I/Os in flight on each target device across processes (default: no limit)", "N" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &a.threads,
      "psync: a pool of N threads taking I/Os in per-process order (recorded timing)", "N" },
    { "buffered", 0, 0, G_OPTION_ARG_NONE, &a.buffered, "Go through the page cache (default O_DIRECT)", NULL },
    { "poll", 0, 0, G_OPTION_ARG_NONE, &a.poll,
      "io_uring/libaio: no reaper thread; each submitter spins, reaping, from --spin (here 1ms) before each I/O instead of sleeping (best timing; a CPU per process while busy)", NULL },
    { "cpus", 0, 0, G_OPTION_ARG_STRING, &a.cpus,
      "Pin the replay threads to these CPUs, round-robin (each async engine's reaper after its submitter; e.g. 0,1 or 2-3)", "LIST" },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &a.csv, "Per-I/O results (intended, issue, completion)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &a.json, "Summary as JSON (with --dry-run: the plan, dry_run true)", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - replay a block trace on a real device or a file");
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  ReplayOptions opts;
  int status = 1;
  gboolean restored;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_main_entries (ctx, cli_replay_target_entries (&ta), NULL);
  g_option_context_set_description (ctx,
    "Engines: psync (one thread per traced process, synchronous O_DIRECT I/O,\n"
    "queue depth 1 per process; or --threads N), io_uring and libaio (a submitting\n"
    "and a reaping thread per process, --iodepth per process, --device-depth per\n"
    "target device), all paced on one absolute CLOCK_MONOTONIC schedule; every engine\n"
    "issues each I/O on its own device's target (--target, or --map per traced device).\n"
    "Reads only unless --allow-write; never on a mounted or busy device, and writes\n"
    "never over a file system or partition table signature unless --force.\n"
    "Every I/O lies inside its target: one beyond the end is refused unless --wrap or\n"
    "--scale-offsets moves it in, and a record whose sector * 512 + length does not\n"
    "fit in 64 bits is refused whatever the options, all before the first I/O (the\n"
    "engines check each I/O against the device's size again).  --dry-run plans the\n"
    "same way and prints the counts the run would have (aligned, wrapped, scaled,\n"
    "moved back inside the end), or the same refusal; it writes nothing, so a trace's\n"
    "writes are planned without --allow-write and the plan says that the real run\n"
    "needs it for them (JSON: plan.writes_need_allow_write).\n\n"
    "A regular file may be the target, for a replay without a spare device: O_DIRECT\n"
    "where its file system allows it, else buffered with a warning (the latencies are\n"
    "then page-cache times).  The file's size bounds the replay: a trace that reaches\n"
    "beyond it is refused, naming the byte it reaches, unless --target-size SIZE lets\n"
    "the replay create or extend the file (sparse) to SIZE, or --wrap/--scale-offsets\n"
    "fit the trace in.  Writes still need --allow-write; a file that backs a loop\n"
    "device or is swap is refused; --sched and the other target settings, and\n"
    "--capture, act on a block device and are refused for a file.\n\n"
    "Traces of submissions only (fio iologs, UMass SPC and DiskSim traces, Q-only\n"
    "blkparse) replay at their submission times; their trace latency is \"not\n"
    "recorded\" in the report, and --timing closed, which waits for the trace's\n"
    "completions, is refused for them (recorded or afap work).\n\n"
    "A process's contiguous bios that the trace shows merged into one request (same\n"
    "D and C) replay as one I/O of their total size at the first one's time, as the\n"
    "device saw them: a buffered writer's writeback of 4 KiB pages merged into 512 KiB\n"
    "requests replays as 512 KiB writes (plan: coalesced); --per-bio replays each bio.\n\n"
    "Timing: each thread sleeps to --spin before an I/O's time, then spins.  For the\n"
    "tightest issue times give each traced process a CPU of its own: --poll (the\n"
    "submitter spins and reaps from 1 ms before each I/O, no reaper thread), --cpus to pin the\n"
    "submitters, and --isolate to move other processes, unbound workqueues (the loop\n"
    "driver's workers) and IRQs off those CPUs for the replay, e.g. on 2 CPUs:\n"
    "  --engine libaio --poll --cpus 1 --isolate\n"
    "Avoid --realtime with --poll: a SCHED_FIFO thread that never sleeps loses its\n"
    "CPU to the kernel's fair-class reservation (tens of ms each second).\n\n"
    "Target settings (--sched, --sched-set, --set-queue, --read-ahead-kb, --nr-requests,\n"
    "--rotational, --throttle-*) are applied once the targets are open, before the\n"
    "first I/O of any engine, and restored after the replay, after an error and\n"
    "after Ctrl-C/SIGTERM.  Each setting is read back (a value the kernel did not take\n"
    "is an error; one it adjusted, a warning; --json lists them as target_settings).\n"
    "Each original value is first written to a journal in $IOSIM_JOURNAL_DIR (default\n"
    "/run/iosim): after a SIGKILL the next replay on the device, or 'iosim restore',\n"
    "puts it back.\n\n"
    "NFS captures (pcap/pcapng) replay as file operations on --target-dir DIR: one\n"
    "file per file handle in DIR/iosim-nfs-replay/, sized from the capture, then a pool\n"
    "of --threads N (default 8) workers taking operations in trace order, as nfsd\n"
    "threads (--timing recorded|afap, --speed, --allow-write, --dry-run, --csv, --json).\n"
    "Setup writes only inside DIR/iosim-nfs-replay/: files sparse at their traced sizes,\n"
    "data only where the replay will read, refused before a byte is written when that\n"
    "is more than --max-setup-bytes or the free space.\n\n"
    "Example: iosim replay trace.txt --target /dev/loop3 --csv replay.csv --json replay.json\n"
    "         iosim replay job.iolog --target /var/tmp/replay.img --target-size 4GiB --reads-only");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim replay: %s\n", error->message);
      args_clear (&a);
      cli_replay_target_clear (&ta);
      return 2;
    }
  /* An NFS capture replays as file operations (cmd-replay-nfs.c). */
  if (argc == 2 && trace_is_capture (argv[1]))
    {
      CliReplayNfsArgs na = {
        .capture = argv[1], .target_dir = a.target_dir, .target = a.target,
        .has_maps = ta.maps != NULL, .timing = a.timing, .lead = a.lead, .spin = a.spin,
        .csv = a.csv, .json = a.json, .speed = a.speed, .threads = a.threads,
        .allow_write = a.allow_write, .reads_only = a.reads_only, .dry_run = a.dry_run,
        .max_setup_bytes = a.max_setup_bytes, .max_io_bytes = a.max_io_bytes,
      };
      status = cli_replay_nfs (&na);
      args_clear (&a);
      cli_replay_target_clear (&ta);
      return status;
    }
  if (a.target_dir != NULL)
    {
      fprintf (stderr, "iosim replay: --target-dir is for NFS captures; a block trace replays on "
               "--target /dev/X\n");
      args_clear (&a);
      cli_replay_target_clear (&ta);
      return 2;
    }
  if (argc != 2 || (a.target == NULL && ta.maps == NULL))
    {
      fprintf (stderr, "iosim replay: need one TRACE and --target /dev/X|FILE or --map (see --help)\n");
      args_clear (&a);
      cli_replay_target_clear (&ta);
      return 2;
    }
  replay_options_init (&opts);
  if (!fill_options (&a, &opts) || !cli_replay_target_fill (&ta, &opts))
    {
      args_clear (&a);
      cli_replay_target_clear (&ta);
      return 2;
    }
  if (!opts.dry_run && isatty (STDERR_FILENO))
    opts.progress = progress_line;
  opts.stop = &cli_stop_requested;
  cli_install_stop_handlers ();

  result = replay_run (argv[1], &opts, &error);
  if (opts.progress)
    fputc ('\n', stderr);
  /* Restore from the main flow on every path (success, error, Ctrl-C). */
  restored = cli_replay_target_finish (&ta);
  /* The capture recorded the replaying threads: map them to the trace's pids. */
  if (!cli_replay_target_note_pids (&ta, result))
    restored = FALSE;
  if (result == NULL)
    fprintf (stderr, "iosim replay: %s\n", error->message);
  else if (result->dry_run)
    {
      for (guint i = 0; result->warnings && i < result->warnings->len; i++)
        fprintf (stderr, "iosim replay: warning: %s\n",
                 (const char *) g_ptr_array_index (result->warnings, i));
      replay_plan_print (result->plan, &result->target, stdout);
      cli_replay_target_print_plan (&ta, result, stdout);
      /* The plan's counts in JSON too, the members a real run writes, so
       * that a dry run can be compared with the run it stands for. */
      if (a.json != NULL && !replay_result_write_json (result, a.json, &error))
        fprintf (stderr, "iosim replay: %s\n", error->message);
      else
        status = 0;
    }
  else
    {
      for (guint i = 0; result->warnings && i < result->warnings->len; i++)
        fprintf (stderr, "iosim replay: warning: %s\n",
                 (const char *) g_ptr_array_index (result->warnings, i));
      replay_result_print (result, stdout);
      if (!write_outputs (result, &a, &error)
          || (a.json && !cli_replay_target_amend_json (&ta, a.json, &error)))
        fprintf (stderr, "iosim replay: %s\n", error->message);
      else if (result->interrupted)
        status = 130;
      else if (result->errors > 0)
        fprintf (stderr, "iosim replay: %" G_GUINT64_FORMAT " I/Os failed (see the error column)\n",
                 result->errors);
      else
        status = 0;
    }
  if (!restored && status == 0)
    status = 1;
  args_clear (&a);
  cli_replay_target_clear (&ta);
  return status;
}
