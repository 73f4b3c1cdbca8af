/* fit-trace.c — fit_trace(): read a block trace with the traces/ readers,
 * pick one device and hand the arrays to fit_arrays().  The capture
 * metadata ("# iosim-capture device= devno= scheduler= size_bytes=")
 * describes one device; it is used only when that device is the one fitted.
 * A partition's capture ("partition= disk= start_sector=") records the
 * disk, which is fitted.
 */
#include <stdio.h>
#include "models/fit/fit.h"
#include "traces/trace-nfs.h"

static gboolean
fit_parse_devno (const char *text, guint32 *major, guint32 *minor)
{
  unsigned int ma, mi;
  char sep, extra;

  if (text == NULL
      || sscanf (text, "%u%c%u%c", &ma, &sep, &mi, &extra) != 3
      || (sep != ',' && sep != ':'))
    return FALSE;
  *major = ma;
  *minor = mi;
  return TRUE;
}

static int
fit_uint_key_cmp (gconstpointer a, gconstpointer b)
{
  guint x = GPOINTER_TO_UINT (a), y = GPOINTER_TO_UINT (b);

  return (x > y) - (x < y);
}

/* Without a filter, the trace must hold a single device. */
static gboolean
fit_check_one_device (const char *path, GArray *requests, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr(GString) list = g_string_new (NULL);
  g_autoptr(GList) keys = NULL;

  for (guint i = 0; i < requests->len; i++)
    {
      const TraceRequest *rq = &g_array_index (requests, TraceRequest, i);
      guint key = (rq->dev_major << 20) | rq->dev_minor;

      g_hash_table_add (seen, GUINT_TO_POINTER (key));
    }
  if (g_hash_table_size (seen) <= 1)
    return TRUE;
  keys = g_list_sort (g_hash_table_get_keys (seen), fit_uint_key_cmp);
  for (GList *l = keys; l != NULL; l = l->next)
    {
      guint key = GPOINTER_TO_UINT (l->data);

      g_string_append_printf (list, " %u,%u", key >> 20, key & 0xfffff);
    }
  g_set_error (error, FIT_ERROR, FIT_ERROR_DEVICE,
               "%s: the trace holds %u devices (%s); choose one with --device MAJ,MIN",
               path, g_hash_table_size (seen), list->str + 1);
  return FALSE;
}

/* TRUE when @ios hold I/Os of a device other than the one of @requests
 * (the only one, fit_check_one_device), which is then in @major, @minor. */
static gboolean
fit_other_device_ios (GArray *ios, GArray *requests, guint32 *major, guint32 *minor)
{
  if (requests->len == 0)
    return FALSE;
  const TraceRequest *rq = &g_array_index (requests, TraceRequest, 0);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      if (io->dev_major != rq->dev_major || io->dev_minor != rq->dev_minor)
        {
          *major = rq->dev_major;
          *minor = rq->dev_minor;
          return TRUE;
        }
    }
  return FALSE;
}

FitResult *
fit_trace (const char *trace_path, const FitOptions *options, GError **error)
{
  g_autoptr(TraceReader) reader = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GArray) requests = NULL;
  g_autofree char *abs_path = NULL;
  g_autofree char *meta_device = NULL;
  g_autofree char *meta_scheduler = NULL;
  g_autofree char *meta_size = NULL;
  TraceLifecycleStats stats = { 0 };
  FitOptions opts = { 0 };
  guint32 meta_major = 0, meta_minor = 0;
  gboolean capture, meta_has_devno, meta_applies;
  FitResult *result;

  g_return_val_if_fail (trace_path != NULL, NULL);

  if (g_strcmp0 (trace_path, "-") == 0)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_FAILED,
                   "fit needs a trace file, not standard input");
      return NULL;
    }
  if (options != NULL)
    opts = *options;

  /* Block traces may carry capture metadata; NFS captures have none (the
   * server is the device: trace_load_ios maps it). */
  meta_has_devno = FALSE;
  capture = trace_is_capture (trace_path);
  if (!capture)
    {
      reader = trace_reader_open (trace_path, NULL, error);
      if (reader == NULL)
        return NULL;
      meta_device = g_strdup (trace_reader_meta (reader, "device"));
      meta_scheduler = g_strdup (trace_reader_meta (reader, "scheduler"));
      meta_size = g_strdup (trace_reader_meta (reader, "size_bytes"));
      meta_has_devno = fit_parse_devno (trace_reader_meta (reader, "devno"),
                                        &meta_major, &meta_minor);
      const char *disk = trace_reader_meta (reader, "disk");
      if (trace_reader_meta (reader, "partition") != NULL && disk != NULL)
        {
          /* A partition's capture records its disk (the kernel remaps its
           * bios there): the header's devno and size are the partition's,
           * the records' sectors the disk's.  Fit the disk, sized by the
           * I/Os' extent. */
          meta_has_devno = FALSE;
          g_free (meta_device);
          meta_device = g_strconcat ("/dev/", disk, NULL);
          g_clear_pointer (&meta_size, g_free);
        }
      g_clear_pointer (&reader, trace_reader_free);
    }

  if (!opts.has_device && meta_has_devno)
    {
      opts.has_device = TRUE;
      opts.dev_major = meta_major;
      opts.dev_minor = meta_minor;
    }
  ios = trace_load_ios (trace_path,
                        opts.has_device ? opts.dev_major : G_MAXUINT32,
                        opts.has_device ? opts.dev_minor : G_MAXUINT32,
                        &requests, &stats, error);
  if (ios == NULL)
    return NULL;
  if (requests->len == 0 && !opts.has_device && capture)
    {
      g_set_error (error, FIT_ERROR, FIT_ERROR_NO_DATA,
                   "%s: no NFS READ or WRITE answered by a reply to fit (`iosim trace info` "
                   "shows what the capture holds)", trace_path);
      return NULL;
    }
  if (!opts.has_device && !fit_check_one_device (trace_path, requests, error))
    return NULL;
  if (!opts.has_device && fit_other_device_ios (ios, requests, &opts.dev_major, &opts.dev_minor))
    {
      /* The scenario's processes read the trace with trace_devno, which
       * leaves out the other devices' records (a dm device above, say):
       * fit what they will re-issue. */
      opts.has_device = TRUE;
      g_clear_pointer (&requests, g_array_unref);
      g_clear_pointer (&ios, g_array_unref);
      ios = trace_load_ios (trace_path, opts.dev_major, opts.dev_minor, &requests, &stats, error);
      if (ios == NULL)
        return NULL;
    }
  meta_applies = !meta_has_devno
                 || (meta_major == opts.dev_major && meta_minor == opts.dev_minor);

  abs_path = g_canonicalize_filename (trace_path, NULL);
  result = fit_arrays (abs_path,
                       (const TraceIo *) ios->data, ios->len,
                       (const TraceRequest *) requests->data, requests->len,
                       meta_applies ? meta_device : NULL,
                       meta_applies ? meta_scheduler : NULL,
                       meta_applies ? meta_size : NULL,
                       &opts, error);
  if (result == NULL)
    return NULL;
  result->stats = stats;
  result->have_stats = TRUE;
  return result;
}
