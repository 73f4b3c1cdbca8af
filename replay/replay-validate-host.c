/* replay-validate-host.c — what `iosim validate` takes from the machine it
 * measures on, for the fit (replay-validate.h): the host's memory and dirty
 * limits from /proc (the page cache of the fitted buffered writers), and
 * the simulated block trace turned into per-I/O results like the captures'.
 */
#include <errno.h>
#include <string.h>

#include "replay/replay-validate.h"
#include "traces/trace-lifecycle.h"
#include "traces/trace-results.h"

#define SECTOR_BYTES 512

static const char *const host_source = "the measuring machine (/proc/meminfo, /proc/sys/vm)";

/* The first line of @path as an unsigned number. */
static gboolean
read_proc_uint (const char *proc_dir, const char *name, guint64 max, guint64 *out,
                GError **error)
{
  g_autofree char *path = g_build_filename (proc_dir, "sys", "vm", name, NULL);
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  g_strstrip (text);
  if (!g_ascii_string_to_unsigned (text, 10, 0, max, out, NULL))
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "%s: '%s' is not a number up to %" G_GUINT64_FORMAT, path, text, max);
      return FALSE;
    }
  return TRUE;
}

/* MemTotal of meminfo, which gives it in KiB ("kB"). */
static gboolean
read_mem_total (const char *proc_dir, guint64 *bytes, GError **error)
{
  g_autofree char *path = g_build_filename (proc_dir, "meminfo", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      guint64 kib;
      char unit[4];

      if (sscanf (lines[i], "MemTotal: %" G_GUINT64_FORMAT " %3s", &kib, unit) == 2
          && strcmp (unit, "kB") == 0 && kib > 0 && kib < G_MAXUINT64 / 1024)
        {
          *bytes = kib * 1024;
          return TRUE;
        }
    }
  g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
               "%s: no 'MemTotal: N kB' line", path);
  return FALSE;
}

gboolean
replay_validate_read_host (const char *proc_dir, FitHost *host, GError **error)
{
  guint64 ratio, bg_ratio, expire, period;

  g_return_val_if_fail (host != NULL, FALSE);
  if (proc_dir == NULL)
    proc_dir = "/proc";
  memset (host, 0, sizeof *host);
  if (!read_mem_total (proc_dir, &host->memory_bytes, error)
      || !read_proc_uint (proc_dir, "dirty_ratio", 100, &ratio, error)
      || !read_proc_uint (proc_dir, "dirty_background_ratio", 100, &bg_ratio, error)
      || !read_proc_uint (proc_dir, "dirty_bytes", G_MAXUINT64, &host->dirty_bytes, error)
      || !read_proc_uint (proc_dir, "dirty_background_bytes", G_MAXUINT64,
                          &host->dirty_background_bytes, error)
      || !read_proc_uint (proc_dir, "dirty_expire_centisecs", G_MAXUINT32, &expire, error)
      || !read_proc_uint (proc_dir, "dirty_writeback_centisecs", G_MAXUINT32, &period, error))
    return FALSE;
  host->dirty_ratio_pct = (guint) ratio;
  host->dirty_background_ratio_pct = (guint) bg_ratio;
  host->dirty_expire_centisecs = (guint) expire;
  host->dirty_writeback_centisecs = (guint) period;
  host->given = FIT_HOST_MEMORY | FIT_HOST_DIRTY_RATIO | FIT_HOST_DIRTY_BACKGROUND_RATIO
                | FIT_HOST_DIRTY_BYTES | FIT_HOST_DIRTY_BACKGROUND_BYTES
                | FIT_HOST_DIRTY_EXPIRE | FIT_HOST_DIRTY_WRITEBACK;
  host->source = host_source;
  return TRUE;
}

/* ---- The simulated side, bio by bio --------------------------------------- */

static gboolean
write_sim_rows (FILE *out, const GArray *ios)
{
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      gint64 start_ns = io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
      g_autofree char *device = g_strdup_printf ("dev%u_%u", io->dev_major, io->dev_minor);
      TraceResult row = {
        .process = (char *) io->comm, .pid = io->pid, .device = device, .op = io->op,
        .offset_bytes = io->sector * SECTOR_BYTES,
        .bytes = (guint64) io->nr_sectors * SECTOR_BYTES,
        .intended_ns = start_ns, .issue_ns = start_ns, .complete_ns = io->complete_ns,
        .error = io->error, .latency_kind = TRACE_LATENCY_BLOCK_Q2C,
      };

      trace_results_write_row (out, &row);
    }
  return ferror (out) == 0;
}

gboolean
replay_validate_sim_trace_results (const char *trace_path, const char *results_path,
                                   GError **error)
{
  g_autoptr(GArray) ios = NULL;
  FILE *out;
  gboolean ok;

  ios = trace_load_ios (trace_path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, error);
  if (ios == NULL)
    return FALSE;
  out = fopen (results_path, "w");
  if (out == NULL)
    {
      int saved = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s",
                   results_path, g_strerror (saved));
      return FALSE;
    }
  trace_results_write_header_kind (out, TRACE_LATENCY_BLOCK_Q2C);
  ok = write_sim_rows (out, ios);
  /* fclose flushes: its failure is a write failure too. */
  if (fclose (out) != 0)
    ok = FALSE;
  if (!ok)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", results_path);
  return ok;
}
