/* cmd-replay-nfs.c — `iosim replay CAPTURE --target-dir DIR`: checks the
 * options that make sense for an NFS capture and runs replay_nfs_run()
 * (replay/replay-nfs.h), printing the plan (--dry-run) or the summary and
 * writing --csv / --json. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd-replay-nfs.h"
#include "replay/replay-nfs.h"
#include "sim/sim-units.h"

static int
refuse (const char *message)
{
  fprintf (stderr, "iosim replay: %s\n", message);
  return 2;
}

static gboolean
parse_time (const char *name, const char *text, gint64 *out)
{
  g_autoptr (GError) error = NULL;
  SimTime ns;

  if (text == NULL)
    return TRUE;
  if (!sim_parse_time_ns (text, 0, &ns, &error))
    {
      fprintf (stderr, "iosim replay: --%s: %s\n", name, error->message);
      return FALSE;
    }
  *out = (gint64) ns;
  return TRUE;
}

static gboolean
parse_size (const char *name, const char *text, guint64 max, guint64 *out)
{
  g_autoptr (GError) error = NULL;
  guint64 bytes;

  if (text == NULL)
    return TRUE;
  if (!sim_parse_size_bytes (text, &bytes, &error))
    {
      fprintf (stderr, "iosim replay: --%s: %s\n", name, error->message);
      return FALSE;
    }
  if (bytes > max)
    {
      fprintf (stderr, "iosim replay: --%s: %s is more than %" G_GUINT64_FORMAT " bytes\n", name,
               text, max);
      return FALSE;
    }
  *out = bytes;
  return TRUE;
}

/* FALSE with a message when the options do not fit a capture. */
static int
fill_options (const CliReplayNfsArgs *a, ReplayNfsOptions *opts)
{
  if (a->target || a->has_maps)
    return refuse ("an NFS capture replays as file operations on a directory: use --target-dir "
                   "DIR (a directory of the file system to test), not --target/--map");
  if (a->target_dir == NULL)
    return refuse ("an NFS capture needs --target-dir DIR (files go in DIR/" REPLAY_NFS_SUBDIR "/)");
  if (a->allow_write && a->reads_only)
    return refuse ("--allow-write and --reads-only contradict each other");
  if (a->threads < 0 || a->threads > 4096)
    return refuse ("--threads takes a count from 1 to 4096");
  if (!(a->speed > 0))
    return refuse ("--speed must be a positive factor");
  opts->target_dir = a->target_dir;
  opts->threads = a->threads > 0 ? (guint) a->threads : opts->threads;
  opts->speed = a->speed;
  opts->allow_write = a->allow_write;
  opts->dry_run = a->dry_run;
  if (a->timing && (!replay_timing_parse (a->timing, &opts->timing)
                    || opts->timing == REPLAY_TIMING_CLOSED))
    return refuse ("--timing for an NFS capture is recorded or afap");
  if (!parse_time ("lead", a->lead, &opts->lead_ns) || !parse_time ("spin", a->spin, &opts->spin_ns))
    return 2;
  {
    guint64 io = 0;
    /* a READ/WRITE count is 32 bits on the wire */
    if (!parse_size ("max-setup-bytes", a->max_setup_bytes, G_MAXINT64, &opts->max_setup_bytes)
        || !parse_size ("max-io-bytes", a->max_io_bytes, G_MAXUINT32, &io))
      return 2;
    if (a->max_io_bytes != NULL && io == 0)
      return refuse ("--max-io-bytes must be at least 1 byte");
    opts->max_io_bytes = (guint32) io;
  }
  return 0;
}

static gboolean
write_csv (const ReplayNfsResult *result, const char *path, GError **error)
{
  FILE *out = fopen (path, "w");

  if (out == NULL)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path,
                   g_strerror (errno));
      return FALSE;
    }
  replay_nfs_result_write_csv (result, out);
  if (fclose (out) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path,
                   g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

int
cli_replay_nfs (const CliReplayNfsArgs *a)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) result = NULL;
  ReplayNfsOptions opts;
  int status;

  replay_nfs_options_init (&opts);
  status = fill_options (a, &opts);
  if (status != 0)
    return status;
  opts.stop = &cli_stop_requested;
  cli_install_stop_handlers ();
  result = replay_nfs_run (a->capture, &opts, &error);
  if (result == NULL)
    {
      fprintf (stderr, "iosim replay: %s\n", error->message);
      return 1;
    }
  if (result->dry_run)
    {
      printf ("target directory: %s (nothing created: --dry-run)\n", result->replay_dir);
      replay_nfs_plan_print (result->plan, stdout);
      if (result->setup_refusal != NULL)
        {
          printf ("  setup: refused: %s\n", result->setup_refusal);
          return 1;
        }
      return 0;
    }
  replay_nfs_result_print (result, stdout);
  if ((a->csv && !write_csv (result, a->csv, &error))
      || (a->json && !replay_nfs_result_write_json (result, a->json, &error)))
    {
      fprintf (stderr, "iosim replay: %s\n", error->message);
      return 1;
    }
  if (result->interrupted)
    return 130;
  if (result->errors > 0)
    {
      fprintf (stderr, "iosim replay: %" G_GUINT64_FORMAT " operations failed (see the error column)\n",
               result->errors);
      return 1;
    }
  return 0;
}
