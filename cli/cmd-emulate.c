/* cmd-emulate.c — `iosim emulate`: serve a block device whose timing
 * follows a device model (replay/replay-emulate.h); options, the device
 * node on stdout, the stop signals, the stats file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "replay/replay-emulate.h"
#include "sim/sim-units.h"

static gboolean
parse_direct_io (const char *text, gboolean *out)
{
  if (text == NULL || strcmp (text, "on") == 0)
    *out = TRUE;
  else if (strcmp (text, "off") == 0)
    *out = FALSE;
  else
    return FALSE;
  return TRUE;
}

/* A dirty limit: a size with units, not 0 (0 would mean "use the ratio",
 * which the kernel answers with EINVAL for dirty_bytes). */
static gboolean
parse_dirty (const char *text, const char *option, guint64 *out)
{
  g_autoptr (GError) error = NULL;

  if (text == NULL)
    return TRUE;
  if (!sim_parse_size_bytes (text, out, &error))
    {
      fprintf (stderr, "iosim emulate: %s: %s\n", option, error->message);
      return FALSE;
    }
  if (*out == 0)
    {
      fprintf (stderr, "iosim emulate: %s: must be more than 0 bytes\n", option);
      return FALSE;
    }
  return TRUE;
}

static const char emulate_description[] =
  "Serves a real block device (/dev/loopN) whose every request takes the time an\n"
  "iosim device model says: the kernel's elevators, page cache and writeback run\n"
  "on top of it unchanged, so they can be compared with iosim's simulation of the\n"
  "same device, and any workload can run on \"a 7200 rpm disk\" or \"a USB stick\".\n\n"
  "How: a FUSE file system in a private directory (TMP/iosim-emulate-XXXXXX)\n"
  "holds one file of --size bytes, kept in a sparse backing file (temporary\n"
  "unless --backing) written and read with O_DIRECT, so that the data served\n"
  "add no dirty pages to the dirty limits of the workload under test; a loop\n"
  "device is attached to the FUSE file with direct I/O (so its page cache does\n"
  "not absorb requests).  Each read or write the kernel sends is queued as the\n"
  "simulator queues it (the model's parallelism, FIFO), timed by the same\n"
  "models/dev code (seek, rotation, zones, cache, overheads; fixed-rate; SSD),\n"
  "and answered at its modelled completion time.  The model's time starts when\n"
  "the emulator does.  A request reaches the emulator only after the loop\n"
  "worker and FUSE have passed it on (~100 us here); its modelled time starts\n"
  "at the kernel's block_rq_issue of it, read live from a private tracefs\n"
  "instance, as a real device's starts when the kernel sends it; without\n"
  "tracefs, at its arrival minus the route measured at start (--route).\n\n"
  "When the device is ready its node is printed alone on the first line of\n"
  "stdout; it is served until SIGINT or SIGTERM, then the loop device is\n"
  "detached, the file system unmounted and the temporary files deleted.  A\n"
  "journal in $IOSIM_JOURNAL_DIR (default /run/iosim) records them first: after\n"
  "a SIGKILL the next 'iosim emulate' or 'iosim restore' cleans up.  At exit a\n"
  "one-line summary goes to stderr (requests, timing error = reply time minus\n"
  "modelled completion, the largest number in flight); --stats writes the full\n"
  "measurement as JSON (counts, bytes, timing error p50/p99/max, in-flight depth\n"
  "histogram, the request sizes the kernel sent).  Needs root, /dev/fuse and\n"
  "/dev/loop-control.\n\n"
  "The kernel sees the loop driver's queue (128 tags), not the model's\n"
  "queue_depth: requests wait in the emulator's FIFO instead.  The loop device\n"
  "keeps the loop driver's settings (rotational = 0, its max_sectors_kb); set\n"
  "them yourself if the elevator should see a disk, and put them back after.\n\n"
  "--dirty-bytes and --dirty-background-bytes set vm.dirty_bytes and\n"
  "vm.dirty_background_bytes for the run (a small page cache makes writeback\n"
  "reach the slow device soon).  The originals of each pair (bytes and ratio)\n"
  "are journaled first; at exit, or by 'iosim restore' after a SIGKILL, the one\n"
  "that was in force is written back (the kernel zeroes its twin).\n\n"
  "Examples (bash):\n"
  "  exec 3< <(iosim emulate --model disk-7200-sata --size 4GiB)   # serve\n"
  "  pid=$!; read -r dev <&3                      # waits until it is ready\n"
  "  dd if=$dev of=/dev/null bs=512k count=200 iflag=direct          # ~70 MB/s\n"
  "  kill $pid; wait $pid; exec 3<&-             # detach, unmount, clean up\n\n"
  "  iosim emulate --model disk-7200-sata --size 4GiB > dev.txt &   # or a file\n"
  "  pid=$!; until [ -s dev.txt ]; do sleep 0.1; done; dev=$(head -1 dev.txt)\n"
  "  (not dev=$(iosim emulate ... | head -1): that waits for the emulator to end)\n\n"
  "  iosim emulate --model usb-stick --size 1GiB --backing stick.img --stats s.json\n"
  "  iosim emulate --model usb-stick --size 1GiB --dirty-bytes 32MiB \\\n"
  "      --dirty-background-bytes 8MiB     # writeback study: a small page cache\n"
  "  iosim restore      # after a 'kill -9': detach, unmount, delete what is left";

int
cli_cmd_emulate (int argc, char **argv)
{
  g_autofree char *model = NULL, *size_text = NULL, *backing = NULL, *dio_text = NULL;
  g_autofree char *stats = NULL, *journal_dir = NULL, *requests = NULL, *spin_text = NULL;
  g_autofree char *dirty_text = NULL, *dirty_bg_text = NULL, *route_text = NULL;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
      "Device model: a NAME under models/devices/ or an .ini FILE", "FILE|NAME" },
    { "size", 's', 0, G_OPTION_ARG_STRING, &size_text,
      "Size of the device (units: KiB, MiB, GiB, GB...); the model's first SIZE bytes", "SIZE" },
    { "backing", 'b', 0, G_OPTION_ARG_FILENAME, &backing,
      "Keep the data in FILE (created sparse; kept at exit) instead of a temporary file",
      "FILE" },
    { "direct-io", 0, 0, G_OPTION_ARG_STRING, &dio_text,
      "Loop device with direct I/O on the FUSE file (default on)", "on|off" },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &stats,
      "Write the emulator's measurement of itself as JSON at exit", "FILE.json" },
    { "requests", 0, 0, G_OPTION_ARG_FILENAME, &requests,
      "Write every request at exit as CSV: op, offset, bytes, depth, arrival, modelled "
      "start and end, reply times (ns)", "FILE.csv" },
    { "spin", 0, 0, G_OPTION_ARG_STRING, &spin_text,
      "Spin this long before each reply is due instead of sleeping (default 500us; "
      "less CPU, later replies on a busy machine)", "TIME" },
    { "route", 0, 0, G_OPTION_ARG_STRING, &route_text,
      "Start each request's modelled time TIME before it reached the emulator instead of at "
      "the kernel's issue (default auto: the issue from tracefs, else the route through loop "
      "and FUSE measured at start with 31 probe reads; 0: at its arrival)", "auto|TIME" },
    { "dirty-bytes", 0, 0, G_OPTION_ARG_STRING, &dirty_text,
      "Set vm.dirty_bytes for the run (journaled, restored at exit; at least 8KiB)", "SIZE" },
    { "dirty-background-bytes", 0, 0, G_OPTION_ARG_STRING, &dirty_bg_text,
      "Set vm.dirty_background_bytes for the run (journaled, restored at exit)", "SIZE" },
    { "journal-dir", 0, 0, G_OPTION_ARG_FILENAME, &journal_dir,
      "Journal directory (default $" REPLAY_JOURNAL_DIR_ENV ", else " REPLAY_JOURNAL_DEFAULT_DIR ")",
      "DIR" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx =
    g_option_context_new ("- serve a block device timed by an iosim device model");
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayEmulator) emu = NULL;
  g_autofree char *summary = NULL;
  ReplayEmulateOptions opts = { 0 };
  gboolean served, stopped;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx, emulate_description);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim emulate: %s\n", error->message);
      return 2;
    }
  if (model == NULL || size_text == NULL)
    {
      fprintf (stderr, "iosim emulate: --model and --size are required (see --help)\n");
      return 2;
    }
  if (!sim_parse_size_bytes (size_text, &opts.size_bytes, &error))
    {
      fprintf (stderr, "iosim emulate: --size: %s\n", error->message);
      return 2;
    }
  if (!parse_direct_io (dio_text, &opts.direct_io))
    {
      fprintf (stderr, "iosim emulate: --direct-io: '%s' is neither on nor off\n", dio_text);
      return 2;
    }
  if (spin_text != NULL && !sim_parse_time_ns (spin_text, 1000, &opts.spin_ns, &error))
    {
      fprintf (stderr, "iosim emulate: --spin: %s\n", error->message);
      return 2;
    }
  opts.route_ns = REPLAY_EMULATE_ROUTE_MEASURE;
  if (route_text != NULL && strcmp (route_text, "auto") != 0
      && !sim_parse_time_ns (route_text, 1000, &opts.route_ns, &error))
    {
      fprintf (stderr, "iosim emulate: --route: %s (auto or a time such as 80us)\n",
               error->message);
      return 2;
    }
  if (!parse_dirty (dirty_text, "--dirty-bytes", &opts.dirty_bytes)
      || !parse_dirty (dirty_bg_text, "--dirty-background-bytes", &opts.dirty_background_bytes))
    return 2;
  opts.model = model;
  opts.backing = backing;
  opts.journal_dir = journal_dir;
  opts.stop = &cli_stop_requested;
  opts.log = stderr;
  cli_install_stop_handlers ();
  emu = replay_emulator_start (&opts, &error);
  if (emu == NULL)
    {
      fprintf (stderr, "iosim emulate: %s\n", error->message);
      return 1;
    }
  printf ("%s\n", replay_emulator_device (emu));
  fflush (stdout);
  served = replay_emulator_serve (emu, &error);
  if (!served)
    fprintf (stderr, "iosim emulate: %s\n", error->message);
  g_clear_error (&error);
  stopped = replay_emulator_stop (emu, &error);
  if (!stopped)
    fprintf (stderr, "iosim emulate: %s\n", error->message);
  g_clear_error (&error);
  summary = replay_emulator_summary (emu);
  fprintf (stderr, "iosim emulate: %s\n", summary);
  if (stats != NULL && !replay_emulator_write_stats (emu, stats, &error))
    {
      fprintf (stderr, "iosim emulate: %s\n", error->message);
      return 1;
    }
  if (requests != NULL && !replay_emulator_write_requests (emu, requests, &error))
    {
      fprintf (stderr, "iosim emulate: %s\n", error->message);
      return 1;
    }
  return served && stopped ? 0 : 1;
}
