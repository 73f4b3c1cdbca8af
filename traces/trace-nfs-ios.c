/* trace-nfs-ios.c — NFS captures as I/O streams for `iosim fit` and
 * trace-driven scenarios (trace_load_ios): each answered READ or WRITE is
 * one I/O of its client on its server, from the call to the reply.
 *
 * Mapping (NFS has files, the fitters have devices and sectors):
 *   device   0,N: the N-th server seen (one "device" per server address);
 *   pid      1000 + the client's index, comm its address ("ip:port");
 *   sector   the file's base + offset / 512, files laid out in the order
 *            they are first seen, 2^31 sectors (1 TiB) apart, so each
 *            file's own offsets stay contiguous and files never overlap;
 *   size     the bytes the reply says moved (else the bytes asked),
 *            rounded up to whole sectors.
 * Calls without a reply, and other operations, are left out and counted in
 * the stats (incomplete_at_end for unanswered READ/WRITE). */
#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs.h"

#include <string.h>

#define FILE_SPAN_SECTORS (G_GUINT64_CONSTANT (1) << 31)

static guint
index_of (GHashTable *table, const char *key)
{
  gpointer v;
  if (g_hash_table_lookup_extended (table, key, NULL, &v))
    return GPOINTER_TO_UINT (v);
  guint n = g_hash_table_size (table);
  g_hash_table_insert (table, g_strdup (key), GUINT_TO_POINTER (n));
  return n;
}

static gint
by_issue (gconstpointer a, gconstpointer b)
{
  const TraceIo *x = a, *y = b;
  if (x->issue_ns != y->issue_ns)
    return x->issue_ns < y->issue_ns ? -1 : 1;
  return x->complete_ns < y->complete_ns ? -1 : x->complete_ns > y->complete_ns;
}

/* Requests in flight on each server when each one was issued. */
static GArray *
requests_of (GArray *ios)
{
  GArray *rqs = g_array_sized_new (FALSE, FALSE, sizeof (TraceRequest), ios->len);
  g_autoptr (GHashTable) open = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                       (GDestroyNotify) g_array_unref);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      GArray *ends = g_hash_table_lookup (open, GUINT_TO_POINTER (io->dev_minor));
      if (ends == NULL)
        {
          ends = g_array_new (FALSE, FALSE, sizeof (gint64));
          g_hash_table_insert (open, GUINT_TO_POINTER (io->dev_minor), ends);
        }
      /* Drop the requests done by now (few in flight: a linear pass). */
      for (guint j = 0; j < ends->len;)
        if (g_array_index (ends, gint64, j) <= io->issue_ns)
          g_array_remove_index_fast (ends, j);
        else
          j++;
      g_array_append_val (ends, io->complete_ns);
      TraceRequest rq = { io->dev_major, io->dev_minor, io->op, io->sector, io->nr_sectors,
                          io->issue_ns, io->complete_ns, io->error, ends->len };
      g_array_append_val (rqs, rq);
    }
  return rqs;
}

GArray *
trace_nfs_load_ios (const char *path, guint32 dev_major, guint32 dev_minor, GArray **requests,
                    TraceLifecycleStats *stats, GError **error)
{
  g_autoptr (TraceNfsReader) r = trace_nfs_reader_open (path, error);
  if (r == NULL)
    return NULL;
  g_autoptr (GHashTable) servers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) clients = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  TraceLifecycleStats st = { 0 };
  st.first_ns = st.last_ns = -1;
  TraceNfsRecord rec;
  while (trace_nfs_reader_next (r, &rec, error))
    {
      st.records++;
      gboolean read = strcmp (rec.op, "READ") == 0, write = strcmp (rec.op, "WRITE") == 0;
      if (!read && !write)
        continue;
      if (rec.latency_ns < 0)
        {
          st.incomplete_at_end++;
          continue;
        }
      guint server = index_of (servers, rec.server);
      if ((dev_major != G_MAXUINT32 && dev_major != 0)
          || (dev_minor != G_MAXUINT32 && dev_minor != server))
        continue;
      char fh[24];
      g_snprintf (fh, sizeof fh, "%" G_GINT64_MODIFIER "x", rec.fh_hash);
      guint64 base = (guint64) index_of (files, fh) * FILE_SPAN_SECTORS;
      guint64 bytes = rec.reply_count ? rec.reply_count : rec.count;
      TraceIo io = { 0 };
      io.dev_major = 0;
      io.dev_minor = server;
      io.pid = 1000 + index_of (clients, rec.client);
      g_strlcpy (io.comm, rec.client, sizeof io.comm);
      io.op = read ? TRACE_OP_READ : TRACE_OP_WRITE;
      io.sector = base + rec.offset / 512;
      io.nr_sectors = (guint32) MAX (G_GUINT64_CONSTANT (1), (bytes + 511) / 512);
      io.queue_ns = io.issue_ns = rec.time_ns;
      io.complete_ns = rec.reply_time_ns;
      io.error = rec.status;
      io.request_only = TRUE;
      g_array_append_val (ios, io);
      st.first_ns = st.first_ns < 0 ? rec.time_ns : MIN (st.first_ns, rec.time_ns);
      st.last_ns = MAX (st.last_ns, rec.reply_time_ns);
    }
  if (error && *error)
    return NULL;
  g_array_sort (ios, by_issue);
  st.ios = st.requests = ios->len;
  if (requests)
    *requests = requests_of (ios);
  if (stats)
    *stats = st;
  return g_steal_pointer (&ios);
}
