/* cmd-capture.c — `iosim capture --device /dev/X (--seconds S | -- CMD...)
 * -o FILE`: option parsing and signal handling around replay_capture_run()
 * (replay/replay-capture.h).  SIGINT, SIGTERM and SIGHUP raise a flag the
 * capture loop polls, so the tracer settings are restored before exit;
 * after SIGKILL the capture's journal (replay-journal.h) is restored by
 * the next capture or `iosim restore`. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "replay/replay-capture.h"


int
cli_cmd_capture (int argc, char **argv)
{
  g_autofree char *device = NULL, *output = NULL, *tracefs = NULL, *wbt = NULL;
  double seconds = 0;
  gint buffer_kb = 0;
  GOptionEntry entries[] = {
    { "device", 'd', 0, G_OPTION_ARG_FILENAME, &device, "Block device to record (required)", "/dev/X" },
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds, "Record this long (or give -- COMMAND)", "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Trace file to write (required)", "FILE" },
    { "buffer-kb", 0, 0, G_OPTION_ARG_INT, &buffer_kb, "Per-CPU ring buffer size (default 16384)", "KB" },
    { "tracefs", 0, 0, G_OPTION_ARG_FILENAME, &tracefs, "tracefs directory (default: find or mount)", "DIR" },
    { "wbt-events", 0, 0, G_OPTION_ARG_FILENAME, &wbt, "Also record blk-wbt's window verdicts and steps of the device's disk to FILE", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[-- COMMAND [ARGS...]] - record block events of a device");
  g_autoptr (GError) error = NULL;
  ReplayCaptureOptions opts = { 0 };
  ReplayCaptureStats stats;
  char **command;
  int opt_argc;

  command = cli_split_command (argc, argv, &opt_argc);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Uses the ftrace blk tracer through tracefs with trace_clock=mono; every tracer\n"
    "setting is restored afterwards, also after Ctrl-C.  Needs root.\n"
    "The original values are first written to a journal in $IOSIM_JOURNAL_DIR\n"
    "(default /run/iosim): after a SIGKILL or a crash the next capture, or\n"
    "'iosim restore', puts them back.\n"
    "--wbt-events records the kernel's blk-wbt tracepoints (wbt_timer: a window's\n"
    "verdict, wbt_step: a change of the throttle's step and limits) in a tracefs\n"
    "instance of its own; 'iosim validate' does this for every measured run and sets\n"
    "them beside the simulator's.  A kernel without them records none and says so.\n\n"
    "Example: iosim capture --device /dev/loop3 -o cap.txt -- dd if=/dev/loop3 of=/dev/null bs=4k count=100 iflag=direct");
  if (!g_option_context_parse (ctx, &opt_argc, &argv, &error))
    {
      fprintf (stderr, "iosim capture: %s\n", error->message);
      return 2;
    }
  if (opt_argc != 1 || device == NULL || output == NULL
      || (command == NULL) == !(seconds > 0) || buffer_kb < 0)
    {
      fprintf (stderr, "iosim capture: need --device, -o FILE and either --seconds S or -- COMMAND "
               "(see --help)\n");
      return 2;
    }
  opts.device = device;
  opts.output_path = output;
  opts.duration_ns = (gint64) (seconds * 1e9);
  opts.argv = command;
  opts.buffer_size_kb = (guint) buffer_kb;
  opts.tracefs_dir = tracefs;
  opts.wbt_output_path = wbt;
  opts.stop = &cli_stop_requested;
  opts.log = stderr;
  cli_install_stop_handlers ();

  if (!replay_capture_run (&opts, &stats, &error))
    {
      fprintf (stderr, "iosim capture: %s\n", error->message);
      return 1;
    }
  fprintf (stderr, "iosim capture: %" G_GUINT64_FORMAT " lines (%" G_GUINT64_FORMAT
           " bytes) in %.3f s to %s%s\n", stats.lines, stats.bytes, stats.elapsed_ns / 1e9,
           output, stats.stopped ? " (interrupted; tracer settings restored)" : "");
  if (stats.stopped)
    return 130;
  if (stats.command_status != -1 && WIFEXITED (stats.command_status)
      && WEXITSTATUS (stats.command_status) != 0)
    {
      fprintf (stderr, "iosim capture: the command exited with status %d\n",
               WEXITSTATUS (stats.command_status));
      return 1;
    }
  if (stats.command_status != -1 && WIFSIGNALED (stats.command_status))
    {
      fprintf (stderr, "iosim capture: the command was killed by signal %d\n",
               WTERMSIG (stats.command_status));
      return 1;
    }
  return 0;
}
