/* replay.c — `iosim replay` as a library call: load a trace file's I/Os
 * (traces/trace-lifecycle.h pairs Q/D/C events as btt does) and replay
 * them with replay_run_ios().  Kept apart from the engine so that tests and
 * callers that already hold TraceIo arrays do not need the trace readers.
 */
#include "replay/replay.h"
#include "traces/trace-nfs.h"

ReplayResult *
replay_run (const char *trace_path, const ReplayOptions *opts, GError **error)
{
  g_autoptr (GArray) ios = NULL;
  TraceLifecycleStats stats;

  g_return_val_if_fail (trace_path != NULL && opts != NULL, NULL);

  /* NFS operations are file operations: they replay on a server's file
   * system, not on a block device's sectors. */
  if (trace_is_capture (trace_path))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "%s: an NFS capture replays as file operations on a directory of a file "
                   "system (replay_nfs_run(), `iosim replay CAPTURE --target-dir DIR`), not on "
                   "a block device", trace_path);
      return NULL;
    }
  ios = trace_load_ios (trace_path, opts->dev_major, opts->dev_minor, NULL, &stats, error);
  if (ios == NULL)
    return NULL;
  if (ios->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "%s: no I/Os in %" G_GUINT64_FORMAT " records", trace_path,
                   stats.records);
      return NULL;
    }
  return replay_run_ios (ios, opts, error);
}
