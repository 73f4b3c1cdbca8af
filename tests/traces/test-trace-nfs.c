/* test-trace-nfs.c — the NFS capture decoder against tshark and the
 * survival checklist of shared/reference/trace-formats.md §4.8.
 *
 * For every stored capture with a tshark field dump (derived/ *.tshark-rpc.tsv)
 * the NFS calls we emit must be exactly tshark's NFS calls (frame and XID),
 * with the same version, procedure or operation list, offsets, counts,
 * file-handle CRC-32 (nfs.fh.hash), reply status and latency (rpc.time,
 * compared to the nanosecond).  Where tshark is not authoritative the test
 * says what it compares instead (see each case).  A live tshark run is
 * compared the same way when tshark is installed.  Then: each checklist
 * item with its sample, bad input naming file and offset, hand-built
 * captures for link layers, reassembly, record marking and matching, and a
 * deterministic mutation smoke test (the CI face of fuzz-trace-nfs.c).
 */
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "traces/trace.h"
#include "traces/trace-nfs.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *
shared_testdata (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    return NULL;
  return dir;
}

/* Path of a stored sample, or NULL (the test is then skipped). */
static char *
sample (const char *rel)
{
  const char *shared = shared_testdata ();
  char *path;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return NULL;
    }
  path = g_build_filename (shared, rel, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip_printf ("%s missing", rel);
      g_free (path);
      return NULL;
    }
  return path;
}

/* A capture the reader can open: bzip2 files are decompressed to a
 * temporary file when this build has no libbz2.  *tmp gets the file to
 * remove (or NULL). */
static char *
readable_capture (const char *path, char **tmp)
{
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int fd;
  const char *argv[] = { "bzip2", "-dc", path, NULL };
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GSubprocess) p = NULL;
  g_autoptr(GBytes) bytes = NULL;

  *tmp = NULL;
  if (!g_str_has_suffix (path, ".bz2") || trace_nfs_have_bzip2 ())
    return g_strdup (path);
  p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate (p, NULL, NULL, &bytes, NULL, &error));
  g_assert_no_error (error);
  fd = g_file_open_tmp ("iosim-nfs-XXXXXX.pcap", &out, &error);
  g_assert_no_error (error);
  close (fd);
  data = g_bytes_unref_to_data (g_steal_pointer (&bytes), &len);
  g_assert_true (g_file_set_contents (out, data, (gssize) len, NULL));
  *tmp = g_strdup (out);
  return g_steal_pointer (&out);
}

/* Whole text of a file, gunzipped when it ends in .gz. */
static char *
read_text (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) f = g_file_new_for_path (path);
  g_autoptr(GInputStream) in = G_INPUT_STREAM (g_file_read (f, NULL, &error));
  g_autoptr(GInputStream) src = NULL;
  g_autoptr(GOutputStream) mem = g_memory_output_stream_new_resizable ();

  g_assert_no_error (error);
  if (g_str_has_suffix (path, ".gz"))
    {
      g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
      src = g_converter_input_stream_new (in, G_CONVERTER (z));
    }
  else
    src = g_object_ref (in);
  g_output_stream_splice (mem, src, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_write (mem, "", 1, NULL, NULL);
  return g_memory_output_stream_steal_data (G_MEMORY_OUTPUT_STREAM (mem));
}

/* "0.009363000" / "-0.001532000" → ns */
static gint64
parse_seconds_ns (const char *s)
{
  gboolean neg = *s == '-';
  gint64 sec, frac = 0;
  int digits = 0;
  const char *dot;

  if (neg)
    s++;
  sec = g_ascii_strtoll (s, NULL, 10);
  dot = strchr (s, '.');
  if (dot != NULL)
    for (const char *p = dot + 1; g_ascii_isdigit (*p) && digits < 9; p++, digits++)
      frac = frac * 10 + (*p - '0');
  for (; digits < 9; digits++)
    frac *= 10;
  return (neg ? -1 : 1) * (sec * 1000000000 + frac);
}

static GArray *
parse_u64_list (const char *s, int base)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_auto(GStrv) parts = NULL;

  if (s == NULL || *s == '\0')
    return a;
  parts = g_strsplit (s, ",", -1);
  for (char **p = parts; *p != NULL; p++)
    {
      guint64 v = g_ascii_strtoull (*p, NULL, base);
      g_array_append_val (a, v);
    }
  return a;
}

/* ---- tshark field dumps ------------------------------------------------- */

typedef struct {
  guint64  frame;
  guint32  xid;
  char    *client;
  guint32  vers;
  guint32  proc;
  gboolean multi;          /* the frame carries several RPCs: fields are joined */
  GArray  *ops;            /* nfs.opcode */
  GArray  *offsets;        /* nfs.offset3 / nfs.offset4 */
  GArray  *counts;         /* nfs.count3 / nfs.count4 */
  GArray  *fh;             /* nfs.fh.hash */
  char    *proc_v3;        /* nfs.procedure_v3 (number) */
  /* its reply */
  gboolean replied;
  gint64   rpc_time_ns;
  GArray  *status;         /* nfs.status (v2/v3) / nfs.nfsstat4 (compound status first) */
  gboolean retransmission; /* the same client and XID was called before */
} TshCall;

static void
tsh_call_free (gpointer p)
{
  TshCall *c = p;
  g_free (c->client);
  g_free (c->proc_v3);
  g_array_unref (c->ops);
  g_array_unref (c->offsets);
  g_array_unref (c->counts);
  g_array_unref (c->fh);
  if (c->status != NULL)
    g_array_unref (c->status);
  g_free (c);
}

static guint64
call_key (guint64 frame, guint32 xid)
{
  return (frame << 32) ^ xid;
}

typedef struct {
  GPtrArray  *calls;       /* TshCall, in frame order */
  GHashTable *by_key;      /* call_key → TshCall */
} TshDump;

static void
tsh_dump_free (TshDump *d)
{
  g_hash_table_destroy (d->by_key);
  g_ptr_array_unref (d->calls);
  g_free (d);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TshDump, tsh_dump_free)

static const char *
field (char **cols, guint ncols, GHashTable *idx, const char *name)
{
  gpointer v;

  if (!g_hash_table_lookup_extended (idx, name, NULL, &v))
    return "";
  return GPOINTER_TO_UINT (v) < ncols ? cols[GPOINTER_TO_UINT (v)] : "";
}

/* Parse a tshark -T fields dump (header line, tab separated, values of a
 * field occurring several times comma-joined). */
static TshDump *
tsh_parse (const char *text)
{
  TshDump *d = g_new0 (TshDump, 1);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GHashTable) idx = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) head = NULL;

  d->calls = g_ptr_array_new_with_free_func (tsh_call_free);
  d->by_key = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_assert_nonnull (lines[0]);
  head = g_strsplit (lines[0], "\t", -1);
  for (guint i = 0; head[i] != NULL; i++)
    g_hash_table_insert (idx, g_strdup (head[i]), GUINT_TO_POINTER (i));

  for (guint li = 1; lines[li] != NULL; li++)
    {
      g_auto(GStrv) cols = g_strsplit (lines[li], "\t", -1);
      guint n = g_strv_length (cols);
      g_autoptr(GArray) xids = NULL, types = NULL, progs = NULL, vers = NULL, procs = NULL;
      const char *f6 = field (cols, n, idx, "ipv6.src");
      const char *src = *f6 != '\0' ? f6 : field (cols, n, idx, "ip.src");
      const char *sport = *field (cols, n, idx, "tcp.srcport") != '\0' ? field (cols, n, idx, "tcp.srcport")
                          : field (cols, n, idx, "udp.srcport");
      const char *other;
      guint64 frame;

      if (n < 2)
        continue;
      frame = g_ascii_strtoull (cols[0], NULL, 10);
      xids = parse_u64_list (field (cols, n, idx, "rpc.xid"), 16);
      types = parse_u64_list (field (cols, n, idx, "rpc.msgtyp"), 10);
      progs = parse_u64_list (field (cols, n, idx, "rpc.program"), 10);
      vers = parse_u64_list (field (cols, n, idx, "rpc.programversion"), 10);
      procs = parse_u64_list (field (cols, n, idx, "rpc.procedure"), 10);
      /* the call/reply frame link: tshark fills one of the two columns */
      other = *field (cols, n, idx, "rpc.reqframe") != '\0' ? field (cols, n, idx, "rpc.reqframe")
              : field (cols, n, idx, "rpc.repframe");
      for (guint k = 0; k < xids->len && k < types->len && k < progs->len; k++)
        {
          guint32 xid = (guint32) g_array_index (xids, guint64, k);
          guint64 prog = g_array_index (progs, guint64, k);
          guint64 type = g_array_index (types, guint64, k);
          gboolean multi = xids->len > 1;

          if (prog != 100003)
            continue;
          if (type == 0)
            {
              TshCall *c = g_new0 (TshCall, 1);
              g_autofree char *who = NULL;
              guint64 key;

              c->frame = frame;
              c->xid = xid;
              c->client = g_strdup_printf (*f6 != '\0' ? "[%s]:%s" : "%s:%s", src, sport);
              /* rpc.programversion occurs twice per RPC */
              c->vers = vers->len >= 2 * xids->len ? (guint32) g_array_index (vers, guint64, 2 * k)
                        : (guint32) g_array_index (vers, guint64, MIN (k, vers->len - 1));
              c->proc = k < procs->len ? (guint32) g_array_index (procs, guint64, k) : 0;
              c->multi = multi;
              c->ops = parse_u64_list (multi ? "" : field (cols, n, idx, "nfs.opcode"), 10);
              c->offsets = parse_u64_list (multi ? "" : field (cols, n, idx, c->vers == 4 ? "nfs.offset4" : "nfs.offset3"), 10);
              c->counts = parse_u64_list (multi ? "" : field (cols, n, idx, c->vers == 4 ? "nfs.count4" : "nfs.count3"), 10);
              c->fh = parse_u64_list (multi ? "" : field (cols, n, idx, "nfs.fh.hash"), 16);
              c->proc_v3 = g_strdup (field (cols, n, idx, "nfs.procedure_v3"));
              who = g_strdup_printf ("%s/%08x", c->client, xid);
              c->retransmission = g_hash_table_contains (seen, who);
              g_hash_table_add (seen, g_steal_pointer (&who));
              key = call_key (frame, xid);
              g_ptr_array_add (d->calls, c);
              if (!g_hash_table_contains (d->by_key, &key))
                {
                  guint64 *kp = g_new (guint64, 1);
                  *kp = key;
                  g_hash_table_insert (d->by_key, kp, c);
                }
            }
          else if (type == 1 && *other != '\0')
            {
              /* the reply names its call's frame; tshark may pair a reply
               * seen before its call (negative rpc.time): keep the first
               * reply after the call, as the call's repframe says.  In a
               * frame with several replies the links and times are one per
               * RPC, the statuses cannot be told apart. */
              g_autoptr(GArray) others = parse_u64_list (other, 10);
              g_auto(GStrv) times = g_strsplit (field (cols, n, idx, "rpc.time"), ",", -1);
              guint64 key;
              TshCall *c;
              gint64 t;

              if (k >= others->len || k >= g_strv_length (times))
                continue;
              key = call_key (g_array_index (others, guint64, k), xid);
              c = g_hash_table_lookup (d->by_key, &key);
              t = parse_seconds_ns (times[k]);
              if (c == NULL || c->replied || t < 0)
                continue;
              c->replied = TRUE;
              c->rpc_time_ns = t;
              if (!multi)
                c->status = parse_u64_list (field (cols, n, idx, c->vers == 4 ? "nfs.nfsstat4" : "nfs.status"), 10);
            }
        }
    }
  return d;
}

/* ---- our side ----------------------------------------------------------- */

typedef struct {
  GArray *recs;    /* TraceNfsRecord of one call */
} OurCall;

static void
our_call_free (gpointer p)
{
  OurCall *c = p;
  g_array_unref (c->recs);
  g_free (c);
}

typedef struct {
  GHashTable *calls;     /* call_key → OurCall */
  guint64     records;
  TraceNfsStats stats;
  GPtrArray  *warnings;
} OurDecode;

static void
our_decode_free (OurDecode *o)
{
  g_hash_table_destroy (o->calls);
  g_ptr_array_unref (o->warnings);
  g_free (o);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OurDecode, our_decode_free)

static OurDecode *
decode_all (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *readable = readable_capture (path, &tmp);
  g_autoptr(TraceNfsReader) r = trace_nfs_reader_open (readable, &error);
  OurDecode *o = g_new0 (OurDecode, 1);
  TraceNfsRecord rec;
  gint64 last_t = G_MININT64;
  const GPtrArray *w;

  g_assert_no_error (error);
  o->calls = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, our_call_free);
  o->warnings = g_ptr_array_new_with_free_func (g_free);
  while (trace_nfs_reader_next (r, &rec, &error))
    {
      guint64 key = call_key (rec.frame, rec.xid);
      OurCall *c = g_hash_table_lookup (o->calls, &key);

      /* records come out in call-time order */
      g_assert_cmpint (rec.time_ns, >=, last_t);
      last_t = rec.time_ns;
      if (c == NULL)
        {
          guint64 *kp = g_new (guint64, 1);
          *kp = key;
          c = g_new0 (OurCall, 1);
          c->recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
          g_hash_table_insert (o->calls, kp, c);
        }
      g_array_append_val (c->recs, rec);
      o->records++;
    }
  g_assert_no_error (error);
  o->stats = *trace_nfs_reader_stats (r);
  w = trace_nfs_reader_warnings (r);
  for (guint i = 0; i < w->len; i++)
    g_ptr_array_add (o->warnings, g_strdup (w->pdata[i]));
  if (tmp != NULL)
    g_unlink (tmp);
  return o;
}

/* ---- comparison ----------------------------------------------------------- */

typedef struct {
  gboolean skip_latency;      /* tshark pairs differently (documented per case) */
  gboolean skip_fields;       /* compare the call set only */
} CompareOpts;

typedef struct {
  guint calls;
  guint replies;
  guint ops;
  guint offsets;
  guint latencies;
  GHashTable *op_counts;      /* op name → count (ours, for the report) */
} CompareFigures;

#define MISMATCH(...) G_STMT_START { \
    if (bad < 20) g_string_append_printf (report, __VA_ARGS__); \
    g_string_append_c (report, bad < 20 ? '\n' : '\0'); \
    bad++; \
  } G_STMT_END

static void
compare_call (const TshCall *t, const OurCall *o, const CompareOpts *opt, CompareFigures *fig,
              GString *report, guint *bad_out)
{
  guint bad = *bad_out;
  const TraceNfsRecord *r0 = &g_array_index (o->recs, TraceNfsRecord, 0);
  guint n = o->recs->len;

  if (r0->vers != t->vers || r0->proc != t->proc)
    MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: vers/proc %u/%u, tshark %u/%u", t->frame, t->xid,
              r0->vers, r0->proc, t->vers, t->proc);
  if (g_strcmp0 (r0->client, t->client) != 0)
    MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: client %s, tshark %s", t->frame, t->xid, r0->client, t->client);
  if (!t->multi && !opt->skip_fields)
    {
      if (t->vers == 4 && t->proc == 1)
        {
          guint k_off = 0, k_cnt = 0, k_fh = 0;
          if (t->ops->len != n)
            MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: %u ops, tshark %u", t->frame, t->xid, n, t->ops->len);
          for (guint i = 0; i < n && i < t->ops->len; i++)
            {
              const TraceNfsRecord *r = &g_array_index (o->recs, TraceNfsRecord, i);
              if (r->opnum != g_array_index (t->ops, guint64, i))
                MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x op %u: %u (%s), tshark %" G_GUINT64_FORMAT,
                          t->frame, t->xid, i, r->opnum, r->op, g_array_index (t->ops, guint64, i));
              /* operations tshark gives an nfs.offset4 for */
              if (r->opnum == 25 || r->opnum == 38 || r->opnum == 5 || (r->opnum >= 12 && r->opnum <= 14)
                  || (r->opnum >= 49 && r->opnum <= 51))
                {
                  if (k_off < t->offsets->len && r->offset != g_array_index (t->offsets, guint64, k_off))
                    MISMATCH ("frame %" G_GUINT64_FORMAT " %s offset %" G_GUINT64_FORMAT ", tshark %" G_GUINT64_FORMAT,
                              t->frame, r->op, r->offset, g_array_index (t->offsets, guint64, k_off));
                  k_off++;
                  fig->offsets++;
                }
              /* tshark has nfs.count4 for READ and COMMIT calls, not WRITE */
              if (r->opnum == 25 || r->opnum == 5)
                {
                  if (k_cnt < t->counts->len && r->count != g_array_index (t->counts, guint64, k_cnt))
                    MISMATCH ("frame %" G_GUINT64_FORMAT " %s count %u, tshark %" G_GUINT64_FORMAT,
                              t->frame, r->op, r->count, g_array_index (t->counts, guint64, k_cnt));
                  k_cnt++;
                }
              if (r->opnum == 22)
                {
                  if (k_fh < t->fh->len && r->fh_crc32 != g_array_index (t->fh, guint64, k_fh))
                    MISMATCH ("frame %" G_GUINT64_FORMAT " PUTFH fh %08x, tshark %08" G_GINT64_MODIFIER "x",
                              t->frame, r->fh_crc32, g_array_index (t->fh, guint64, k_fh));
                  k_fh++;
                }
              fig->ops++;
            }
          if (k_off != t->offsets->len)
            MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: %u offsets, tshark %u", t->frame, t->xid, k_off, t->offsets->len);
        }
      else if (t->vers <= 3 && t->proc != 0)
        {
          fig->ops++;
          if (t->fh->len > 0 && r0->fh_crc32 != g_array_index (t->fh, guint64, 0))
            MISMATCH ("frame %" G_GUINT64_FORMAT " %s fh %08x, tshark %08" G_GINT64_MODIFIER "x", t->frame, r0->op,
                      r0->fh_crc32, g_array_index (t->fh, guint64, 0));
          if (t->offsets->len > 0)
            {
              fig->offsets++;
              if (r0->offset != g_array_index (t->offsets, guint64, 0))
                MISMATCH ("frame %" G_GUINT64_FORMAT " %s offset %" G_GUINT64_FORMAT ", tshark %" G_GUINT64_FORMAT,
                          t->frame, r0->op, r0->offset, g_array_index (t->offsets, guint64, 0));
            }
          if (t->counts->len > 0 && r0->count != g_array_index (t->counts, guint64, 0))
            MISMATCH ("frame %" G_GUINT64_FORMAT " %s count %u, tshark %" G_GUINT64_FORMAT, t->frame, r0->op,
                      r0->count, g_array_index (t->counts, guint64, 0));
        }
    }
  if (!opt->skip_latency)
    {
      if (t->replied)
        {
          gint64 rpc_time = r0->reply_time_ns - r0->call_done_ns;
          fig->replies++;
          if (r0->reply_time_ns < 0 || rpc_time != t->rpc_time_ns)
            MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x %s: rpc.time %" G_GINT64_FORMAT " ns, tshark %" G_GINT64_FORMAT,
                      t->frame, t->xid, r0->op, r0->reply_time_ns < 0 ? -1 : rpc_time, t->rpc_time_ns);
          else
            fig->latencies++;
          if (r0->latency_ns != r0->reply_time_ns - r0->time_ns || r0->latency_ns < rpc_time)
            MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: latency %" G_GINT64_FORMAT, t->frame, t->xid, r0->latency_ns);
          if (!t->multi && !opt->skip_fields && t->status != NULL && t->status->len > 0)
            {
              if (t->vers <= 3 && t->proc != 0 && r0->status != (gint32) g_array_index (t->status, guint64, 0))
                MISMATCH ("frame %" G_GUINT64_FORMAT " %s status %d, tshark %" G_GUINT64_FORMAT, t->frame, r0->op,
                          r0->status, g_array_index (t->status, guint64, 0));
              if (t->vers == 4)
                for (guint i = 0; i < n && i + 1 < t->status->len; i++)
                  {
                    const TraceNfsRecord *r = &g_array_index (o->recs, TraceNfsRecord, i);
                    if (r->status != (gint32) g_array_index (t->status, guint64, i + 1))
                      MISMATCH ("frame %" G_GUINT64_FORMAT " op %u %s status %d, tshark %" G_GUINT64_FORMAT, t->frame,
                                i, r->op, r->status, g_array_index (t->status, guint64, i + 1));
                  }
            }
        }
      else if (r0->latency_ns != -1)
        MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x %s: latency %" G_GINT64_FORMAT ", tshark saw no reply",
                  t->frame, t->xid, r0->op, r0->latency_ns);
    }
  for (guint i = 0; i < n; i++)
    {
      const char *op = g_array_index (o->recs, TraceNfsRecord, i).op;
      gpointer v = g_hash_table_lookup (fig->op_counts, op);
      g_hash_table_insert (fig->op_counts, (gpointer) g_intern_string (op), GUINT_TO_POINTER (GPOINTER_TO_UINT (v) + 1));
    }
  *bad_out = bad;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static char *
format_op_counts (GHashTable *counts)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new ();
  GString *s = g_string_new (NULL);
  GHashTableIter it;
  gpointer k;

  g_hash_table_iter_init (&it, counts);
  while (g_hash_table_iter_next (&it, &k, NULL))
    g_ptr_array_add (keys, k);

  g_ptr_array_sort (keys, cmp_str);
  for (guint i = 0; i < keys->len; i++)
    g_string_append_printf (s, "%s%s=%u", i ? " " : "", (char *) keys->pdata[i],
                            GPOINTER_TO_UINT (g_hash_table_lookup (counts, keys->pdata[i])));
  return g_string_free (s, FALSE);
}

/* Compare a decode with a tshark dump; returns the figures. */
static void
compare_with_tshark (const char *name, OurDecode *ours, TshDump *tsh, const CompareOpts *opt)
{
  g_autoptr(GString) report = g_string_new (NULL);
  g_autoptr(GHashTable) matched = g_hash_table_new (g_int64_hash, g_int64_equal);
  CompareFigures fig = { 0 };
  g_autofree char *counts = NULL;
  guint bad = 0;
  GHashTableIter it;
  gpointer k, v;

  fig.op_counts = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < tsh->calls->len; i++)
    {
      TshCall *t = tsh->calls->pdata[i];
      guint64 key = call_key (t->frame, t->xid);
      OurCall *o = g_hash_table_lookup (ours->calls, &key);

      if (t->retransmission)
        {
          /* tshark lists a retransmitted call again; we emit the first */
          if (o != NULL)
            MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: a retransmission emitted as a new call", t->frame, t->xid);
          continue;
        }
      if (o == NULL)
        {
          MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x: tshark's NFS call missing", t->frame, t->xid);
          continue;
        }
      g_hash_table_add (matched, g_hash_table_lookup_extended (ours->calls, &key, &k, NULL) ? k : NULL);
      fig.calls++;
      compare_call (t, o, opt, &fig, report, &bad);
    }
  g_hash_table_iter_init (&it, ours->calls);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (!g_hash_table_contains (matched, k))
      {
        OurCall *o = v;
        const TraceNfsRecord *r = &g_array_index (o->recs, TraceNfsRecord, 0);
        MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x %s: not an NFS call for tshark", r->frame, r->xid, r->op);
      }
  counts = format_op_counts (fig.op_counts);
  g_test_message ("%s: %u calls, %u operations, %u offsets, %u replies, %u latencies equal tshark's; ops: %s",
                  name, fig.calls, fig.ops, fig.offsets, fig.replies, fig.latencies, counts);
  g_hash_table_destroy (fig.op_counts);
  if (bad > 0)
    g_error ("%s: %u differences from tshark:\n%s", name, bad, report->str);
}

/* ---- stored dumps ----------------------------------------------------------- */

typedef struct {
  const char *capture;        /* relative to shared testdata */
  const char *tsv;
  guint       min_calls;      /* sanity: the dump is not empty */
  CompareOpts opt;
} TsvCase;

static const TsvCase tsv_cases[] = {
  { "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap",
    "generated-nfs-loopback/derived/nfsv3-tcp-libnfs-ganesha.pcap.tshark-rpc.tsv", 37, { 0 } },
  { "generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcap",
    "generated-nfs-loopback/derived/nfsv40-tcp-libnfs-ganesha-sll2.pcap.tshark-rpc.tsv", 23, { 0 } },
  { "generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcapng",
    "generated-nfs-loopback/derived/nfsv40-tcp-libnfs-ganesha-sll2.pcapng.tshark-rpc.tsv", 23, { 0 } },
  { "nfs-pcap-suricata-verify/nfsv2-udp.pcap",
    "nfs-pcap-suricata-verify/derived/nfsv2-udp.pcap.tshark-rpc.tsv", 70, { 0 } },
  { "nfs-pcap-suricata-verify/nfsv3-udp.pcap",
    "nfs-pcap-suricata-verify/derived/nfsv3-udp.pcap.tshark-rpc.tsv", 50, { 0 } },
  { "nfs-pcap-suricata-verify/nfsv3-tcp-readdirplus.pcap",
    "nfs-pcap-suricata-verify/derived/nfsv3-tcp-readdirplus.pcap.tshark-rpc.tsv", 1, { 0 } },
  { "nfs-pcap-suricata-verify/nfsv41-tcp.pcap",
    "nfs-pcap-suricata-verify/derived/nfsv41-tcp.pcap.tshark-rpc.tsv", 30, { 0 } },
  { "nfs-pcap-nfstrace/1-packet.pcap.bz2",
    "nfs-pcap-nfstrace/derived/1-packet.pcap.tshark-rpc.tsv.gz", 0, { 0 } },
  { "nfs-pcap-nfstrace/2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2",
    "nfs-pcap-nfstrace/derived/2sessions-tcp-wsize32k-tcp-wsize512k.pcap.tshark-rpc.tsv.gz", 400, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv3.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-tcp-nfsv3.pcap.tshark-rpc.tsv.gz", 3000, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv4-incorrect_mount.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-tcp-nfsv4-incorrect_mount.pcap.tshark-rpc.tsv.gz", 3, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv4.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-tcp-nfsv4.pcap.tshark-rpc.tsv.gz", 1600, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv41.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-tcp-nfsv41.pcap.tshark-rpc.tsv.gz", 500, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-udp-nfsv3-dup-retransm.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-udp-nfsv3-dup-retransm.pcap.tshark-rpc.tsv.gz", 10, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv4-udp-nfsv3-reply-first.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv4-udp-nfsv3-reply-first.pcap.tshark-rpc.tsv.gz", 50, { 0 } },
  { "nfs-pcap-nfstrace/eth-ipv6-tcp-nfsv3.pcap.bz2",
    "nfs-pcap-nfstrace/derived/eth-ipv6-tcp-nfsv3.pcap.tshark-rpc.tsv.gz", 1600, { 0 } },
  { "nfs-pcap-nfstrace/lo-ipv4-tcp-nfsv3-nfsacl.pcap.bz2",
    "nfs-pcap-nfstrace/derived/lo-ipv4-tcp-nfsv3-nfsacl.pcap.tshark-rpc.tsv.gz", 5, { 0 } },
};

static void
test_tshark_dump (gconstpointer data)
{
  const TsvCase *tc = data;
  g_autofree char *cap = sample (tc->capture);
  g_autofree char *tsv = NULL;
  g_autofree char *text = NULL;
  g_autoptr(TshDump) tsh = NULL;
  g_autoptr(OurDecode) ours = NULL;

  if (cap == NULL)
    return;
  tsv = sample (tc->tsv);
  if (tsv == NULL)
    return;
  text = read_text (tsv);
  tsh = tsh_parse (text);
  g_assert_cmpuint (tsh->calls->len, >=, tc->min_calls);
  ours = decode_all (cap);
  compare_with_tshark (tc->capture, ours, tsh, &tc->opt);
}

/* ---- reading helpers ---------------------------------------------------- */

typedef struct {
  GArray        *recs;
  TraceNfsStats  stats;
  GError        *error;
} Decoded;

static void
decoded_free (Decoded *d)
{
  g_array_unref (d->recs);
  g_clear_error (&d->error);
  g_free (d);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Decoded, decoded_free)

static Decoded *
decode_reader (TraceNfsReader *r)
{
  Decoded *d = g_new0 (Decoded, 1);
  TraceNfsRecord rec;

  d->recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  while (trace_nfs_reader_next (r, &rec, &d->error))
    g_array_append_val (d->recs, rec);
  d->stats = *trace_nfs_reader_stats (r);
  return d;
}

static Decoded *
decode_path (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *readable = readable_capture (path, &tmp);
  g_autoptr(TraceNfsReader) r = trace_nfs_reader_open (readable, &error);
  Decoded *d;

  g_assert_no_error (error);
  d = decode_reader (r);
  if (tmp != NULL)
    g_unlink (tmp);
  return d;
}

static Decoded *
decode_bytes (const GByteArray *b, const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = trace_nfs_reader_open_buffer (b->data, b->len, name, &error);

  g_assert_no_error (error);
  return decode_reader (r);
}

static guint
count_op (const Decoded *d, const char *op)
{
  guint n = 0;
  for (guint i = 0; i < d->recs->len; i++)
    if (strcmp (g_array_index (d->recs, TraceNfsRecord, i).op, op) == 0)
      n++;
  return n;
}

static const TraceNfsRecord *
find_xid (const Decoded *d, guint32 xid, guint index)
{
  for (guint i = 0; i < d->recs->len; i++)
    {
      const TraceNfsRecord *r = &g_array_index (d->recs, TraceNfsRecord, i);
      if (r->xid == xid && index-- == 0)
        return r;
    }
  return NULL;
}

/* ---- nfstrace's reference where tshark is lost ----------------------------- */

/* tcp-seq-overlap-in-fragment-12721 keeps only the segments that carry RPC
 * headers (and overlaps inside records); tshark reassembles 3 calls out of
 * 6171, so tshark is not the reference here.  nfstrace's breakdown
 * (references-breakdown/…ref, times with 3 decimals) is: 6168 WRITE, 1
 * GETATTR, 1 SETATTR, 1 ACCESS answered; WRITE latency min 0.001 max 0.721
 * avg 0.012 s.  We compare answered calls per operation and the WRITE
 * latency figures (latency_ns) within half a millisecond. */
static void
test_overlap_vs_nfstrace (void)
{
  g_autofree char *cap = sample ("nfs-pcap-nfstrace/tcp-seq-overlap-in-fragment-12721.pcap.bz2");
  g_autoptr(Decoded) d = NULL;
  guint writes = 0, getattr = 0, setattr = 0, access = 0;
  gint64 min = G_MAXINT64, max = 0, sum = 0;

  if (cap == NULL)
    return;
  d = decode_path (cap);
  g_assert_no_error (d->error);
  for (guint i = 0; i < d->recs->len; i++)
    {
      const TraceNfsRecord *r = &g_array_index (d->recs, TraceNfsRecord, i);
      if (r->latency_ns < 0)
        continue;
      if (strcmp (r->op, "WRITE") == 0)
        {
          writes++;
          min = MIN (min, r->latency_ns);
          max = MAX (max, r->latency_ns);
          sum += r->latency_ns;
          g_assert_cmpuint (r->count, ==, 65536);
        }
      getattr += strcmp (r->op, "GETATTR") == 0;
      setattr += strcmp (r->op, "SETATTR") == 0;
      access += strcmp (r->op, "ACCESS") == 0;
    }
  g_test_message ("overlap capture: %u WRITE answered, latency min %.4f max %.4f avg %.4f s; %" G_GUINT64_FORMAT
                  " TCP gaps, %" G_GUINT64_FORMAT " overlaps", writes, min / 1e9, max / 1e9, sum / 1e9 / writes,
                  d->stats.tcp_gaps, d->stats.tcp_overlaps);
  g_assert_cmpuint (writes, ==, 6168);
  g_assert_cmpuint (getattr, ==, 1);
  g_assert_cmpuint (setattr, ==, 1);
  g_assert_cmpuint (access, ==, 1);
  g_assert_cmpfloat (ABS (min / 1e9 - 0.001), <=, 0.0005);
  g_assert_cmpfloat (ABS (max / 1e9 - 0.721), <=, 0.0005);
  g_assert_cmpfloat (ABS (sum / 1e9 / writes - 0.012), <=, 0.0005);
  /* the WRITE cut by the end of the capture */
  g_assert_cmpuint (d->stats.calls_without_reply, ==, 1);
  g_assert_cmpuint (d->stats.replies_without_call, ==, 0);
}

/* ---- snaplen truncation ------------------------------------------------------ */

/* nfsv3-tcp-libnfs-ganesha-snap200.pcap is the full capture cut to 200
 * bytes a frame; tshark cannot reassemble it, so the reference is our own
 * decode of the full capture (itself equal to tshark's dump): the same
 * calls, operations, file handles, statuses and latencies; offsets and
 * counts where they fit in the 200 bytes (READ/WRITE/COMMIT headers do). */
static void
test_snaplen (void)
{
  g_autofree char *full = sample ("generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap");
  g_autofree char *cut = sample ("generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha-snap200.pcap");
  g_autoptr(Decoded) a = NULL;
  g_autoptr(Decoded) b = NULL;

  if (full == NULL || cut == NULL)
    return;
  a = decode_path (full);
  b = decode_path (cut);
  g_assert_no_error (b->error);
  g_assert_cmpuint (b->stats.truncated_frames, ==, 442);
  g_assert_cmpuint (b->stats.tcp_snaplen_bytes, >, 500000);
  g_assert_cmpuint (b->stats.tcp_gaps, ==, 0);
  g_assert_cmpuint (b->stats.rpc_resyncs, ==, 0);        /* record marking kept in step */
  g_assert_cmpuint (a->recs->len, ==, b->recs->len);
  for (guint i = 0; i < a->recs->len; i++)
    {
      const TraceNfsRecord *x = &g_array_index (a->recs, TraceNfsRecord, i);
      const TraceNfsRecord *y = &g_array_index (b->recs, TraceNfsRecord, i);
      g_assert_cmpuint (x->xid, ==, y->xid);
      g_assert_cmpuint (x->frame, ==, y->frame);
      g_assert_cmpstr (x->op, ==, y->op);
      g_assert_cmpuint (x->fh_hash, ==, y->fh_hash);
      g_assert_cmpint (x->status, ==, y->status);
      g_assert_cmpint (x->latency_ns, ==, y->latency_ns);
      g_assert_cmpuint (x->offset, ==, y->offset);
      g_assert_cmpuint (x->count, ==, y->count);
      g_assert_cmpuint (x->stable, ==, y->stable);
    }
}

/* ---- the survival checklist (§4.8), item by item ---------------------------- */

/* v4.1 with a backchannel: the server's CB calls on the client's
 * connection are classified by message type, not by port. */
static void
test_checklist_backchannel (void)
{
  g_autofree char *a = sample ("nfs-pcap-suricata-verify/nfsv41-tcp.pcap");
  g_autofree char *b = sample ("nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv41.pcap.bz2");
  g_autoptr(Decoded) da = NULL;
  g_autoptr(Decoded) db = NULL;

  if (a == NULL || b == NULL)
    return;
  da = decode_path (a);
  db = decode_path (b);
  g_assert_cmpuint (da->stats.callback_calls, ==, 1);
  g_assert_cmpuint (db->stats.callback_calls, ==, 1);
  g_assert_cmpuint (da->stats.calls_without_reply + db->stats.calls_without_reply, ==, 0);
  g_assert_cmpuint (da->stats.v4_walk_stopped + db->stats.v4_walk_stopped, ==, 0);
  g_assert_cmpuint (count_op (db, "SEQUENCE"), >, 500);
  for (guint i = 0; i < db->recs->len; i++)
    if (g_array_index (db->recs, TraceNfsRecord, i).proc == 1)
      g_assert_cmpuint (g_array_index (db->recs, TraceNfsRecord, i).minorvers, ==, 1);
}

/* IPv4 fragment trains of UDP WRITEs, retransmitted calls, a reply before
 * its call. */
static void
test_checklist_udp_fragments_retransmissions (void)
{
  g_autofree char *cap = sample ("nfs-pcap-nfstrace/eth-ipv4-udp-nfsv3-dup-retransm.pcap.bz2");
  g_autoptr(Decoded) d = NULL;
  const TraceNfsRecord *r;

  if (cap == NULL)
    return;
  d = decode_path (cap);
  /* 16 KiB WRITEs in 12 fragments each */
  g_assert_cmpuint (d->stats.ip_reassembled, ==, 15);
  g_assert_cmpuint (d->stats.ip_fragments, ==, 187);
  /* 0x7673855e, 0xe23e865e sent twice while pending; 0xe53e865e again after its reply */
  g_assert_cmpuint (d->stats.retransmitted_calls, ==, 3);
  g_assert_cmpuint (count_op (d, "WRITE"), ==, 12);
  r = find_xid (d, 0x7673855e, 0);
  g_assert_nonnull (r);
  g_assert_cmpuint (r->frame, ==, 57);                  /* timed from the first transmission */
  g_assert_cmpint (r->reply_time_ns - r->call_done_ns, ==, 233384000);
  g_assert_null (find_xid (d, 0x7673855e, 1));
  /* 0xc16b855e: a reply (frame 18) before the call (frame 30), then the real one (frame 42) */
  g_assert_cmpuint (d->stats.replies_before_call, ==, 1);
  r = find_xid (d, 0xc16b855e, 0);
  g_assert_nonnull (r);
  g_assert_cmpuint (r->reply_frame, ==, 42);
  g_assert_cmpint (r->reply_time_ns - r->call_done_ns, ==, 2203000);
  /* 0x6273855e never answered */
  r = find_xid (d, 0x6273855e, 0);
  g_assert_nonnull (r);
  g_assert_cmpint (r->latency_ns, ==, -1);
  g_assert_cmpint (r->status, ==, -1);
  g_assert_cmpuint (d->stats.calls_without_reply, ==, 1);
}

static void
test_checklist_reply_first (void)
{
  g_autofree char *cap = sample ("nfs-pcap-nfstrace/eth-ipv4-udp-nfsv3-reply-first.pcap.bz2");
  g_autoptr(Decoded) d = NULL;

  if (cap == NULL)
    return;
  d = decode_path (cap);
  g_assert_cmpuint (d->stats.replies_without_call, ==, 1);
  g_assert_cmpuint (d->stats.calls_without_reply, ==, 0);
}

typedef struct {
  const char *file;
  guint64 frames, non_ip, tcp_segments, reassembled, records;
} LinkCase;

/* Figures checked with tshark 4.0.17 (frames, "ip or ipv6", "tcp"). */
static const LinkCase link_cases[] = {
  { "linklayer-pcap-zeek/vlan-qinqinq.pcap",            14, 0, 14, 0, 0 },
  { "linklayer-pcap-zeek/http-vlan-0.pcap",             14, 0, 14, 0, 0 },
  { "linklayer-pcap-zeek/mixed-vlan-mpls.pcap",         47, 0, 47, 0, 0 },
  { "linklayer-pcap-zeek/linuxsll-arp.pcap",            12, 12, 0, 0, 0 },
  { "linklayer-pcap-zeek/linux_dlt_sll2.pcap",           6, 2, 0, 0, 0 },
  { "linklayer-pcap-zeek/pcapng-multi-interface.pcapng", 6, 0, 0, 0, 0 },
  { "linklayer-pcap-zeek/tcp_retransmit-timeout.pcapng", 3, 0, 3, 0, 0 },
  { "linklayer-pcap-zeek/ipv4_fragmented-1.pcap",        3, 0, 0, 1, 0 },
  { "linklayer-pcap-zeek/ipv4_fragmented-4.pcap",        6, 0, 3, 1, 0 },
  { "linklayer-pcap-zeek/ipv6-fragmented-dns.pcap",      8, 0, 0, 1, 0 },
  { "generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcapng", 367, 0, 367, 0, 52 },
};

/* VLAN / QinQ / MPLS / SLL / SLL2 / pcapng with two interfaces / fragments:
 * every IP frame reaches the transport layer. */
static void
test_checklist_link_layers (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (link_cases); i++)
    {
      const LinkCase *c = &link_cases[i];
      g_autofree char *cap = sample (c->file);
      g_autoptr(Decoded) d = NULL;

      if (cap == NULL)
        return;
      d = decode_path (cap);
      g_test_message ("%s: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " non-IP", c->file,
                      d->stats.frames, d->stats.non_ip_frames);
      g_assert_no_error (d->error);
      g_assert_cmpuint (d->stats.frames, ==, c->frames);
      g_assert_cmpuint (d->stats.non_ip_frames, ==, c->non_ip);
      g_assert_cmpuint (d->stats.malformed_frames, ==, 0);
      g_assert_cmpuint (d->stats.tcp_segments, ==, c->tcp_segments);
      g_assert_cmpuint (d->stats.ip_reassembled, ==, c->reassembled);
      g_assert_cmpuint (d->recs->len, ==, c->records);
      /* nothing here is RPC: every frame is accounted for */
      if (c->records == 0)
        g_assert_cmpuint (d->stats.non_nfs_frames + d->stats.non_ip_frames
                          + d->stats.ip_fragments - d->stats.ip_reassembled, >=, 1);
    }
}

typedef struct {
  const char *file;
  guint records;
  guint64 malformed;
} EdgeCase;

/* tcpdump's NFS crash regressions and fuzz cases: no crash, no fatal
 * error, problems counted. */
static const EdgeCase edge_cases[] = {
  { "nfs-pcap-tcpdump-edgecases/hoobr_nfs_xid_map_enter.pcap", 0, 0 },   /* EtherType 0x3030 garbage */
  { "nfs-pcap-tcpdump-edgecases/nfs-cannot-pad-32-bit.pcap", 1, 0 },     /* LOOKUP name cannot be padded */
  { "nfs-pcap-tcpdump-edgecases/nfs-seg-fault-1.pcapng", 1, 0 },         /* sizes beyond the data */
  { "nfs-pcap-tcpdump-edgecases/nfs-write-verf-cookie.pcapng", 1, 0 },   /* valid WRITE + reply, port 993 */
  { "nfs-pcap-tcpdump-edgecases/nfs_large_credentials_length.pcap", 0, 1 },
  { "nfs-pcap-tcpdump-edgecases/unaligned-nfs-1.pcap", 0, 0 },           /* a reply with no call */
};

static void
test_checklist_edge_cases (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (edge_cases); i++)
    {
      g_autofree char *cap = sample (edge_cases[i].file);
      g_autoptr(Decoded) d = NULL;

      if (cap == NULL)
        return;
      d = decode_path (cap);
      g_assert_no_error (d->error);
      g_assert_cmpuint (d->recs->len, ==, edge_cases[i].records);
      g_assert_cmpuint (d->stats.rpc_malformed, ==, edge_cases[i].malformed);
    }
  {
    g_autofree char *cap = sample ("nfs-pcap-tcpdump-edgecases/nfs-write-verf-cookie.pcapng");
    g_autoptr(Decoded) d = cap != NULL ? decode_path (cap) : NULL;
    const TraceNfsRecord *r;

    if (d == NULL)
      return;
    r = &g_array_index (d->recs, TraceNfsRecord, 0);
    /* as tcpdump prints it: "write fh ... 3 (3) bytes @ 0 <filesync>" */
    g_assert_cmpstr (r->op, ==, "WRITE");
    g_assert_cmpuint (r->count, ==, 3);
    g_assert_cmpuint (r->stable, ==, 2);
    g_assert_cmpint (r->status, ==, 0);
    g_assert_cmpint (r->latency_ns, ==, 2063000);
  }
  {
    g_autofree char *cap = sample ("nfs-pcap-tcpdump-edgecases/nfs-seg-fault-1.pcapng");
    g_autoptr(Decoded) d = cap != NULL ? decode_path (cap) : NULL;

    if (d == NULL)
      return;
    g_assert_true (g_array_index (d->recs, TraceNfsRecord, 0).partial);
    g_assert_cmpuint (d->stats.nfs_partial, ==, 1);
  }
}

/* A mount that fails: error statuses reach the records. */
static void
test_checklist_failing_mount (void)
{
  g_autofree char *cap = sample ("nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv4-incorrect_mount.pcap.bz2");
  g_autoptr(Decoded) d = NULL;
  guint errors = 0;

  if (cap == NULL)
    return;
  d = decode_path (cap);
  for (guint i = 0; i < d->recs->len; i++)
    errors += g_array_index (d->recs, TraceNfsRecord, i).status != 0;
  g_assert_cmpuint (d->stats.rpc_denied, ==, 2);
  g_assert_cmpuint (errors, >=, 2);
}

/* The large captures, for throughput (figures in the test log). */
static void
test_checklist_large (void)
{
  static const char *const files[] = {
    "nfs-pcap-nfstrace/eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *cap = sample (files[i]);
      g_autoptr(Decoded) d = NULL;
      gint64 t0;
      double s;

      if (cap == NULL)
        return;
      t0 = g_get_monotonic_time ();
      d = decode_path (cap);
      s = (g_get_monotonic_time () - t0) / 1e6;
      g_test_message ("%s: %" G_GUINT64_FORMAT " frames, %.1f MB, %u records in %.2f s (bzip2 included)",
                      files[i], d->stats.frames, d->stats.bytes / 1e6, d->recs->len, s);
      g_assert_no_error (d->error);
      g_assert_cmpuint (d->stats.frames, ==, 71387);
      /* NFSv3, v4.0 and v4.1 sessions and SMB in one capture */
      g_assert_cmpuint (count_op (d, "WRITE"), >, 1000);
      g_assert_cmpuint (d->stats.v4_compounds, >, 10000);
    }
}

/* ---- hand-built captures ---------------------------------------------------- */

static void
put8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

static void
put16 (GByteArray *b, guint16 v)
{
  guint8 x[2] = { v >> 8, v & 0xff };
  g_byte_array_append (b, x, 2);
}

static void
put32 (GByteArray *b, guint32 v)
{
  guint8 x[4] = { v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff };
  g_byte_array_append (b, x, 4);
}

static void
put32le (GByteArray *b, guint32 v)
{
  guint8 x[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
  g_byte_array_append (b, x, 4);
}

static void
put64 (GByteArray *b, guint64 v)
{
  put32 (b, (guint32) (v >> 32));
  put32 (b, (guint32) v);
}

static void
put_bytes (GByteArray *b, const guint8 *p, gsize n)
{
  g_byte_array_append (b, p, (guint) n);
}

static void
put_opaque (GByteArray *b, const guint8 *p, guint32 n)
{
  static const guint8 zero[4] = { 0 };
  put32 (b, n);
  if (p != NULL)
    put_bytes (b, p, n);
  else
    for (guint32 i = 0; i < n; i++)
      put8 (b, (guint8) (i * 7));
  put_bytes (b, zero, (4 - (n & 3)) & 3);
}

static const guint8 test_fh[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static const guint8 test_fh4[7] = { 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x1 };   /* not a multiple of 4 */

static GByteArray *
rpc_call (guint32 xid, guint32 prog, guint32 vers, guint32 proc)
{
  GByteArray *b = g_byte_array_new ();
  put32 (b, xid); put32 (b, 0); put32 (b, 2); put32 (b, prog); put32 (b, vers); put32 (b, proc);
  /* AUTH_SYS: stamp, machine "nfs", uid, gid, 1 gid */
  put32 (b, 1); put32 (b, 28);
  put32 (b, 7); put_opaque (b, (const guint8 *) "nfs", 3); put32 (b, 0); put32 (b, 0); put32 (b, 1); put32 (b, 0);
  put32 (b, 0); put32 (b, 0);
  return b;
}

static GByteArray *
rpc_reply (guint32 xid)
{
  GByteArray *b = g_byte_array_new ();
  put32 (b, xid); put32 (b, 1); put32 (b, 0); put32 (b, 0); put32 (b, 0); put32 (b, 0);
  return b;
}

static GByteArray *
v3_read_call (guint32 xid, guint64 off, guint32 count)
{
  GByteArray *b = rpc_call (xid, 100003, 3, 6);
  put_opaque (b, test_fh, sizeof test_fh); put64 (b, off); put32 (b, count);
  return b;
}

static GByteArray *
v3_read_reply (guint32 xid, guint32 count)
{
  GByteArray *b = rpc_reply (xid);
  put32 (b, 0); put32 (b, 0); put32 (b, count); put32 (b, 1); put_opaque (b, NULL, count);
  return b;
}

static GByteArray *
v3_write_call (guint32 xid, guint64 off, guint32 count)
{
  GByteArray *b = rpc_call (xid, 100003, 3, 7);
  put_opaque (b, test_fh, sizeof test_fh); put64 (b, off); put32 (b, count); put32 (b, 2);
  put_opaque (b, NULL, count);
  return b;
}

static GByteArray *
v3_write_reply (guint32 xid, guint32 count)
{
  GByteArray *b = rpc_reply (xid);
  put32 (b, 0); put32 (b, 0); put32 (b, 0); put32 (b, count); put32 (b, 2); put64 (b, 0x1234);
  return b;
}

static GByteArray *
v3_getattr_call (guint32 xid)
{
  GByteArray *b = rpc_call (xid, 100003, 3, 1);
  put_opaque (b, test_fh, sizeof test_fh);
  return b;
}

static GByteArray *
v3_getattr_reply (guint32 xid, guint32 status)
{
  GByteArray *b = rpc_reply (xid);
  put32 (b, status);
  if (status == 0)
    {
      put32 (b, 1); put32 (b, 0644); put32 (b, 1); put32 (b, 0); put32 (b, 0);
      put64 (b, 123456); put64 (b, 0); put64 (b, 0); put64 (b, 1); put64 (b, 2);
      for (int i = 0; i < 6; i++)
        put32 (b, 0);
    }
  return b;
}

/* Record marking: fragments of at most @frag bytes (0: one). */
static void
put_record (GByteArray *stream, const GByteArray *msg, guint frag)
{
  guint off = 0;

  if (frag == 0)
    frag = msg->len;
  while (off < msg->len)
    {
      guint n = MIN (frag, msg->len - off);
      put32 (stream, (off + n == msg->len ? 0x80000000u : 0) | n);
      put_bytes (stream, msg->data + off, n);
      off += n;
    }
}

static void
unref (GByteArray *b)
{
  g_byte_array_unref (b);
}

/* The pcap file being built: nanosecond magic, little endian. */
static GByteArray *
cap_new (guint32 linktype)
{
  GByteArray *b = g_byte_array_new ();
  put32le (b, 0xa1b23c4d);
  put32le (b, 0x00040002);
  put32le (b, 0); put32le (b, 0); put32le (b, 262144); put32le (b, linktype);
  return b;
}

static void
cap_frame (GByteArray *cap, gint64 t_ns, const GByteArray *frame, guint32 caplen)
{
  put32le (cap, (guint32) (t_ns / 1000000000));
  put32le (cap, (guint32) (t_ns % 1000000000));
  put32le (cap, MIN (caplen, frame->len));
  put32le (cap, frame->len);
  put_bytes (cap, frame->data, MIN (caplen, frame->len));
}

static const guint8 cli4[4] = { 10, 0, 0, 1 }, srv4[4] = { 10, 0, 0, 2 };
static const guint8 cli6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, srv6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

static GByteArray *
ipv4 (const guint8 *src, const guint8 *dst, guint8 proto, guint16 id, guint32 frag_off, gboolean more,
      const guint8 *payload, guint32 len)
{
  GByteArray *b = g_byte_array_new ();
  put8 (b, 0x45); put8 (b, 0); put16 (b, (guint16) (20 + len)); put16 (b, id);
  put16 (b, (guint16) ((more ? 0x2000 : 0) | (frag_off / 8)));
  put8 (b, 64); put8 (b, proto); put16 (b, 0);
  put_bytes (b, src, 4); put_bytes (b, dst, 4);
  put_bytes (b, payload, len);
  return b;
}

static GByteArray *
tcp (guint16 sport, guint16 dport, guint32 seq, guint32 ack, guint8 flags, const guint8 *p, guint32 n)
{
  GByteArray *b = g_byte_array_new ();
  put16 (b, sport); put16 (b, dport); put32 (b, seq); put32 (b, ack);
  put8 (b, 5 << 4); put8 (b, flags); put16 (b, 65535); put16 (b, 0); put16 (b, 0);
  put_bytes (b, p, n);
  return b;
}

static GByteArray *
udp (guint16 sport, guint16 dport, const GByteArray *msg)
{
  GByteArray *b = g_byte_array_new ();
  put16 (b, sport); put16 (b, dport); put16 (b, (guint16) (8 + msg->len)); put16 (b, 0);
  put_bytes (b, msg->data, msg->len);
  return b;
}

/* Ethernet with optional VLAN tags (QinQ) around an IPv4 packet. */
static GByteArray *
eth (guint16 type, const GByteArray *ip, guint n_tags)
{
  GByteArray *b = g_byte_array_new ();
  static const guint8 macs[12] = { 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6 };
  put_bytes (b, macs, 12);
  for (guint i = 0; i < n_tags; i++)
    {
      put16 (b, i == 0 && n_tags > 1 ? 0x88a8 : 0x8100);
      put16 (b, (guint16) (100 + i));
    }
  put16 (b, type);
  put_bytes (b, ip->data, ip->len);
  return b;
}

#define TCP_SYN 0x02
#define TCP_ACK 0x10
#define TCP_PSH 0x08

typedef struct {
  guint32 seq;
  guint   len;
  gint64  t;
} Seg;

/* A TCP conversation: SYN, SYN-ACK, the client's byte stream as the
 * segments @segs (offset, length) in capture order, then the server's
 * stream in @mss segments acknowledging everything. */
static GByteArray *
tcp_conversation_segs (const GByteArray *cstream, const GByteArray *sstream, guint mss,
                       const Seg *segs, guint n_segs, guint n_tags)
{
  GByteArray *cap = cap_new (1);
  guint32 c0 = 1000, s0 = 5000;
  gint64 t = G_GINT64_CONSTANT (1700000000) * 1000000000;

#define EMIT(SRC, DST, SP, DP, SEQ, ACK, FL, P, LEN) G_STMT_START { \
    GByteArray *seg_ = tcp (SP, DP, SEQ, ACK, FL, P, LEN); \
    GByteArray *ip_ = ipv4 (SRC, DST, 6, 1, 0, FALSE, seg_->data, seg_->len); \
    GByteArray *fr_ = eth (0x0800, ip_, n_tags); \
    cap_frame (cap, t, fr_, G_MAXUINT32); \
    t += 100000; \
    unref (seg_); unref (ip_); unref (fr_); \
  } G_STMT_END

  EMIT (cli4, srv4, 800, 2049, c0, 0, TCP_SYN, NULL, 0);
  EMIT (srv4, cli4, 2049, 800, s0, c0 + 1, TCP_SYN | TCP_ACK, NULL, 0);
  for (guint k = 0; k < n_segs; k++)
    EMIT (cli4, srv4, 800, 2049, c0 + 1 + segs[k].seq, s0 + 1, TCP_ACK, cstream->data + segs[k].seq, segs[k].len);
  for (guint off = 0; off < sstream->len; off += mss)
    EMIT (srv4, cli4, 2049, 800, s0 + 1 + off, c0 + 1 + cstream->len, TCP_ACK | TCP_PSH,
          sstream->data + off, MIN (mss, sstream->len - off));
#undef EMIT
  return cap;
}

/* The client stream in @mss segments; @order lists segment indexes in
 * capture order (NULL: in order); @drop leaves one out (-1: none). */
static GByteArray *
tcp_conversation (const GByteArray *cstream, const GByteArray *sstream, guint mss,
                  const gint *order, guint n_order, gint drop, guint n_tags)
{
  guint n = (cstream->len + mss - 1) / mss;
  g_autoptr(GArray) segs = g_array_new (FALSE, FALSE, sizeof (Seg));

  for (guint k = 0; k < (order != NULL ? n_order : n); k++)
    {
      guint i = order != NULL ? (guint) order[k] : k;
      Seg sg = { i * mss, MIN (mss, cstream->len - i * mss), 0 };
      if ((gint) i != drop)
        g_array_append_val (segs, sg);
    }
  return tcp_conversation_segs (cstream, sstream, mss, (Seg *) segs->data, segs->len, n_tags);
}

typedef struct {
  GByteArray *c, *s;
} Streams;

/* READ (offset 4096, 2000 bytes), WRITE (offset 8192, 3000 bytes, in two
 * record fragments), GETATTR; the replies in order. */
static Streams
streams_basic (guint write_frag)
{
  Streams st = { g_byte_array_new (), g_byte_array_new () };
  GByteArray *m;

  m = v3_read_call (1, 4096, 2000); put_record (st.c, m, 0); unref (m);
  m = v3_write_call (2, 8192, 3000); put_record (st.c, m, write_frag); unref (m);
  m = v3_getattr_call (3); put_record (st.c, m, 0); unref (m);
  m = v3_read_reply (1, 2000); put_record (st.s, m, 0); unref (m);
  m = v3_write_reply (2, 3000); put_record (st.s, m, 0); unref (m);
  m = v3_getattr_reply (3, 0); put_record (st.s, m, 0); unref (m);
  return st;
}

static void
check_basic_records (const Decoded *d)
{
  const TraceNfsRecord *r;

  g_assert_no_error (d->error);
  g_assert_cmpuint (d->recs->len, ==, 3);
  r = &g_array_index (d->recs, TraceNfsRecord, 0);
  g_assert_cmpstr (r->op, ==, "READ");
  g_assert_cmpuint (r->xid, ==, 1);
  g_assert_cmpuint (r->offset, ==, 4096);
  g_assert_cmpuint (r->count, ==, 2000);
  g_assert_cmpuint (r->reply_count, ==, 2000);
  g_assert_true (r->eof);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->client, ==, "10.0.0.1:800");
  g_assert_cmpstr (r->server, ==, "10.0.0.2:2049");
  g_assert_cmpuint (r->fh_hash, ==, trace_nfs_fnv1a64 (test_fh, sizeof test_fh));
  g_assert_cmpint (r->latency_ns, >, 0);
  r = &g_array_index (d->recs, TraceNfsRecord, 1);
  g_assert_cmpstr (r->op, ==, "WRITE");
  g_assert_cmpuint (r->offset, ==, 8192);
  g_assert_cmpuint (r->count, ==, 3000);
  g_assert_cmpuint (r->stable, ==, 2);
  g_assert_cmpuint (r->reply_count, ==, 3000);
  g_assert_cmpuint (r->committed, ==, 2);
  g_assert_cmpint (r->status, ==, 0);
  r = &g_array_index (d->recs, TraceNfsRecord, 2);
  g_assert_cmpstr (r->op, ==, "GETATTR");
  g_assert_cmpint (r->file_size, ==, 123456);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpuint (d->stats.calls_without_reply + d->stats.replies_without_call, ==, 0);
}

static void
test_handmade_tcp_in_order (void)
{
  Streams st = streams_basic (1000);
  g_autoptr(GByteArray) cap = tcp_conversation (st.c, st.s, 700, NULL, 0, -1, 0);
  g_autoptr(GByteArray) one = tcp_conversation (st.c, st.s, 65000, NULL, 0, -1, 2);
  g_autoptr(Decoded) d = decode_bytes (cap, "in-order");
  g_autoptr(Decoded) d1 = decode_bytes (one, "one-segment");

  check_basic_records (d);
  g_assert_cmpuint (d->stats.tcp_out_of_order + d->stats.tcp_gaps + d->stats.rpc_resyncs, ==, 0);
  /* several RPCs in one segment, and a multi-fragment record, behind QinQ */
  check_basic_records (d1);
  g_assert_cmpuint (d1->stats.rpc_records, ==, 6);
  unref (st.c);
  unref (st.s);
}

static void
test_handmade_tcp_reordered (void)
{
  Streams st = streams_basic (1000);
  guint n = (st.c->len + 699) / 700;
  g_autoptr(GArray) order = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr(GByteArray) cap = NULL;
  g_autoptr(Decoded) d = NULL;

  /* swap neighbours, send segment 2 twice (a retransmission) */
  for (guint i = 0; i < n; i++)
    {
      gint v = (gint) ((i % 2 == 0 && i + 1 < n) ? i + 1 : (i % 2 == 1 ? i - 1 : i));
      g_array_append_val (order, v);
      if (i == 4)
        {
          gint two = 2;
          g_array_append_val (order, two);
        }
    }
  cap = tcp_conversation (st.c, st.s, 700, (gint *) order->data, order->len, -1, 1);
  d = decode_bytes (cap, "reordered");
  check_basic_records (d);
  g_assert_cmpuint (d->stats.tcp_out_of_order, ==, 2);
  g_assert_cmpuint (d->stats.tcp_retransmissions, ==, 1);
  g_assert_cmpuint (d->stats.tcp_gaps, ==, 0);
  unref (st.c);
  unref (st.s);
}

/* Overlapping segments: the same bytes sent again cut differently. */
static void
test_handmade_tcp_overlap (void)
{
  Streams st = streams_basic (0);
  g_autoptr(GArray) segs = g_array_new (FALSE, FALSE, sizeof (Seg));
  g_autoptr(GByteArray) cap = NULL;
  g_autoptr(Decoded) d = NULL;

  for (guint off = 0; off < st.c->len; off += 700)
    {
      Seg sg = { off, MIN (700, st.c->len - off), 0 };
      g_array_append_val (segs, sg);
      if (off == 700)
        {
          Seg extra = { 350, 1050, 0 };     /* half old, half new */
          g_array_append_val (segs, extra);
        }
    }
  /* ... and one that starts in a hole and ends in buffered data */
  {
    Seg a = { 2800, 700, 0 }, b = { 2450, 700, 0 };
    Seg *v = (Seg *) segs->data;
    for (guint i = 0; i < segs->len; i++)
      if (v[i].seq == 2100)
        {
          g_array_insert_val (segs, i, a);
          g_array_insert_val (segs, i + 1, b);
          break;
        }
  }
  cap = tcp_conversation_segs (st.c, st.s, 700, (Seg *) segs->data, segs->len, 0);
  d = decode_bytes (cap, "overlap");
  check_basic_records (d);
  g_assert_cmpuint (d->stats.tcp_overlaps, >=, 2);
  g_assert_cmpuint (d->stats.tcp_gaps, ==, 0);
  unref (st.c);
  unref (st.s);
}

/* A lost segment inside WRITE's payload: the record length keeps the
 * stream in step.  A lost segment over a record marker: resynchronise on
 * the next record. */
static void
test_handmade_tcp_gaps (void)
{
  Streams st = streams_basic (0);
  g_autoptr(GByteArray) a = NULL;
  g_autoptr(GByteArray) b = NULL;
  g_autoptr(Decoded) da = NULL;
  g_autoptr(Decoded) db = NULL;
  const TraceNfsRecord *r;
  guint write_start, payload_seg;

  /* the WRITE record starts after the READ call's record */
  {
    GByteArray *m = v3_read_call (1, 4096, 2000);
    write_start = m->len + 4;
    unref (m);
  }
  payload_seg = (write_start + 1000) / 200;      /* deep inside the 3000-byte data */
  a = tcp_conversation (st.c, st.s, 200, NULL, 0, (gint) payload_seg, 0);
  da = decode_bytes (a, "gap-in-payload");
  check_basic_records (da);
  g_assert_cmpuint (da->stats.tcp_gaps, ==, 1);
  g_assert_cmpuint (da->stats.tcp_gap_bytes, ==, 200);
  g_assert_cmpuint (da->stats.rpc_resyncs, ==, 0);

  /* segments as long as the READ record: drop the one that starts with
   * the WRITE record's marker */
  b = tcp_conversation (st.c, st.s, write_start, NULL, 0, 1, 0);
  db = decode_bytes (b, "gap-over-marker");
  g_assert_no_error (db->error);
  g_assert_cmpuint (db->stats.tcp_gaps, ==, 1);
  g_assert_cmpuint (db->stats.rpc_resyncs, ==, 1);
  r = find_xid (db, 3, 0);
  g_assert_nonnull (r);                          /* GETATTR found again */
  g_assert_cmpstr (r->op, ==, "GETATTR");
  g_assert_cmpint (r->status, ==, 0);
  g_assert_nonnull (find_xid (db, 1, 0));        /* the READ before the hole is whole */
  g_assert_null (find_xid (db, 2, 0));           /* the WRITE is lost ... */
  g_assert_cmpuint (db->stats.replies_without_call, ==, 1);   /* ... its reply counted */
  unref (st.c);
  unref (st.s);
}

/* UDP: one call and reply under every link layer. */
static GByteArray *
wrap_link (guint32 linktype, guint16 ethertype, const GByteArray *ip)
{
  GByteArray *b = g_byte_array_new ();
  static const guint8 sll_addr[8] = { 0 };

  switch (linktype)
    {
    case 1:
      unref (b);
      return eth (ethertype, ip, 0);
    case 113:
      put16 (b, 0); put16 (b, 772); put16 (b, 6); put_bytes (b, sll_addr, 8); put16 (b, ethertype);
      break;
    case 276:
      put16 (b, ethertype); put16 (b, 0); put32 (b, 1); put16 (b, 772); put8 (b, 0); put8 (b, 6);
      put_bytes (b, sll_addr, 8);
      break;
    case 0:
      put32le (b, ethertype == 0x0800 ? 2 : 10);
      break;
    case 108:
      put32 (b, ethertype == 0x0800 ? 2 : 24);
      break;
    default:   /* raw IP */
      break;
    }
  put_bytes (b, ip->data, ip->len);
  return b;
}

static GByteArray *
mpls_eth (const GByteArray *ip)
{
  GByteArray *b = g_byte_array_new ();
  static const guint8 macs[12] = { 0 };
  put_bytes (b, macs, 12);
  put16 (b, 0x8100); put16 (b, 7);
  put16 (b, 0x8847);
  put32 (b, (16 << 12) | 64);              /* label 16 */
  put32 (b, (17 << 12) | 0x100 | 64);      /* label 17, bottom of stack */
  put_bytes (b, ip->data, ip->len);
  return b;
}

static void
test_handmade_link_layers (void)
{
  static const guint32 links[] = { 1, 113, 276, 0, 108, 101, 228, 1 | 0x10000u /* MPLS */ };

  for (gsize i = 0; i < G_N_ELEMENTS (links); i++)
    {
      gboolean mpls = links[i] > 0xffff;
      guint32 lt = mpls ? 1 : links[i];
      g_autoptr(GByteArray) cap = cap_new (lt);
      g_autoptr(Decoded) d = NULL;
      GByteArray *call = v3_getattr_call (0x10), *reply = v3_getattr_reply (0x10, 0);
      GByteArray *u1 = udp (700, 2049, call), *u2 = udp (2049, 700, reply);
      GByteArray *i1 = ipv4 (cli4, srv4, 17, 1, 0, FALSE, u1->data, u1->len);
      GByteArray *i2 = ipv4 (srv4, cli4, 17, 2, 0, FALSE, u2->data, u2->len);
      GByteArray *f1 = mpls ? mpls_eth (i1) : wrap_link (lt, 0x0800, i1);
      GByteArray *f2 = mpls ? mpls_eth (i2) : wrap_link (lt, 0x0800, i2);
      const TraceNfsRecord *r;

      cap_frame (cap, 1000000000, f1, G_MAXUINT32);
      cap_frame (cap, 1000250000, f2, G_MAXUINT32);
      d = decode_bytes (cap, "link");
      g_test_message ("link type %u%s: %u records", lt, mpls ? " + MPLS" : "", d->recs->len);
      g_assert_no_error (d->error);
      g_assert_cmpuint (d->recs->len, ==, 1);
      r = &g_array_index (d->recs, TraceNfsRecord, 0);
      g_assert_cmpstr (r->op, ==, "GETATTR");
      g_assert_false (r->tcp);
      g_assert_cmpint (r->latency_ns, ==, 250000);
      g_assert_cmpuint (r->frame, ==, 1);
      g_assert_cmpuint (r->reply_frame, ==, 2);
      unref (call); unref (reply); unref (u1); unref (u2); unref (i1); unref (i2); unref (f1); unref (f2);
    }
}

/* IPv6 with hop-by-hop and destination options, the call in three
 * fragments sent out of order; IPv4 fragments out of order with a
 * duplicate. */
static GByteArray *
ipv6_frag (guint8 first_nh, gboolean ext, guint32 id, guint32 off, gboolean more,
           const guint8 *p, guint32 n, gboolean frag)
{
  GByteArray *b = g_byte_array_new ();
  GByteArray *body = g_byte_array_new ();

  if (ext)
    {
      /* hop-by-hop (8 bytes), then destination options (16 bytes) */
      put8 (body, 60); put8 (body, 0); put8 (body, 1); put8 (body, 4); put32 (body, 0);
      put8 (body, frag ? 44 : first_nh); put8 (body, 1); put8 (body, 1); put8 (body, 12);
      for (int i = 0; i < 12; i++)
        put8 (body, 0);
    }
  if (frag)
    {
      put8 (body, first_nh); put8 (body, 0); put16 (body, (guint16) (off | (more ? 1 : 0))); put32 (body, id);
    }
  put_bytes (body, p, n);
  put32 (b, 0x60000000); put16 (b, (guint16) body->len);
  put8 (b, ext ? 0 : (frag ? 44 : first_nh)); put8 (b, 64);
  put_bytes (b, cli6, 16); put_bytes (b, srv6, 16);
  put_bytes (b, body->data, body->len);
  unref (body);
  return b;
}

static void
test_handmade_ip_fragments (void)
{
  GByteArray *call = v3_read_call (0x20, 1 << 20, 4096);
  GByteArray *reply = v3_getattr_reply (0x20, 0);   /* any v3 status-first reply */
  GByteArray *u = udp (700, 2049, call);
  g_autoptr(GByteArray) cap6 = cap_new (101);
  g_autoptr(GByteArray) cap4 = cap_new (1);
  g_autoptr(Decoded) d6 = NULL;
  g_autoptr(Decoded) d4 = NULL;
  guint32 third = (u->len / 3) & ~7u;
  const guint32 offs[3] = { 2 * third, 0, third };
  const TraceNfsRecord *r;

  for (int k = 0; k < 3; k++)
    {
      guint32 off = offs[k];
      guint32 n = off == 2 * third ? u->len - off : third;
      GByteArray *p = ipv6_frag (17, TRUE, 77, off, off != 2 * third, u->data + off, n, TRUE);
      GByteArray *p4 = ipv4 (cli4, srv4, 17, 99, off, off != 2 * third, u->data + off, n);
      GByteArray *f4 = eth (0x0800, p4, 0);
      cap_frame (cap6, 2000000000 + k * 1000, p, G_MAXUINT32);
      cap_frame (cap4, 2000000000 + k * 1000, f4, G_MAXUINT32);
      if (k == 1)
        cap_frame (cap4, 2000000000 + k * 1000 + 1, f4, G_MAXUINT32);    /* duplicate */
      unref (p); unref (p4); unref (f4);
    }
  {
    GByteArray *ur = udp (2049, 700, reply);
    GByteArray *p = ipv6_frag (17, TRUE, 0, 0, FALSE, ur->data, ur->len, FALSE);
    GByteArray *p4 = ipv4 (srv4, cli4, 17, 100, 0, FALSE, ur->data, ur->len);
    GByteArray *f4 = eth (0x0800, p4, 0);
    /* swap the addresses of the IPv6 reply */
    memcpy (p->data + 8, srv6, 16);
    memcpy (p->data + 24, cli6, 16);
    cap_frame (cap6, 2000500000, p, G_MAXUINT32);
    cap_frame (cap4, 2000500000, f4, G_MAXUINT32);
    unref (ur); unref (p); unref (p4); unref (f4);
  }
  d6 = decode_bytes (cap6, "ipv6-fragments");
  g_assert_no_error (d6->error);
  g_assert_cmpuint (d6->stats.ip_reassembled, ==, 1);
  g_assert_cmpuint (d6->recs->len, ==, 1);
  r = &g_array_index (d6->recs, TraceNfsRecord, 0);
  g_assert_cmpstr (r->op, ==, "READ");
  g_assert_cmpuint (r->offset, ==, 1 << 20);
  g_assert_cmpuint (r->count, ==, 4096);
  g_assert_cmpstr (r->client, ==, "[2001:db8::1]:700");
  g_assert_cmpuint (r->frame, ==, 3);                  /* completed by the third fragment */
  g_assert_cmpint (r->time_ns, ==, 2000000000);       /* timed from the first */
  g_assert_cmpint (r->latency_ns, ==, 500000);

  d4 = decode_bytes (cap4, "ipv4-fragments");
  g_assert_cmpuint (d4->stats.ip_reassembled, ==, 1);
  g_assert_cmpuint (d4->stats.ip_frag_overlaps, ==, 1);
  g_assert_cmpuint (d4->recs->len, ==, 1);
  g_assert_cmpuint (g_array_index (d4->recs, TraceNfsRecord, 0).offset, ==, 1 << 20);
  unref (call); unref (reply); unref (u);
}

/* UDP matching: a reply before its call, a retransmitted call, a duplicate
 * reply, a reply nobody asked for, a call never answered. */
static void
test_handmade_matching (void)
{
  g_autoptr(GByteArray) cap = cap_new (101);
  g_autoptr(Decoded) d = NULL;
  const struct { gboolean call; guint32 xid; gint64 t; guint32 status; } ev[] = {
    { FALSE, 0x31, 100, 0 },    /* reply before its call, no later reply */
    { TRUE,  0x31, 200, 0 },
    { TRUE,  0x32, 300, 0 },
    { TRUE,  0x32, 400, 0 },    /* retransmission */
    { FALSE, 0x32, 500, 5 },    /* NFS3ERR_IO */
    { FALSE, 0x32, 600, 5 },    /* duplicate (server DRC) */
    { FALSE, 0x99, 700, 0 },    /* no call */
    { TRUE,  0x33, 800, 0 },    /* never answered */
  };
  const TraceNfsRecord *r;

  for (gsize i = 0; i < G_N_ELEMENTS (ev); i++)
    {
      GByteArray *m = ev[i].call ? v3_getattr_call (ev[i].xid) : v3_getattr_reply (ev[i].xid, ev[i].status);
      GByteArray *u = ev[i].call ? udp (700, 2049, m) : udp (2049, 700, m);
      GByteArray *ip = ev[i].call ? ipv4 (cli4, srv4, 17, (guint16) i, 0, FALSE, u->data, u->len)
                                  : ipv4 (srv4, cli4, 17, (guint16) i, 0, FALSE, u->data, u->len);
      cap_frame (cap, 5000000000 + ev[i].t * 1000, ip, G_MAXUINT32);
      unref (m); unref (u); unref (ip);
    }
  d = decode_bytes (cap, "matching");
  g_assert_cmpuint (d->recs->len, ==, 3);
  g_assert_cmpuint (d->stats.replies_before_call, ==, 1);
  g_assert_cmpuint (d->stats.retransmitted_calls, ==, 1);
  g_assert_cmpuint (d->stats.duplicate_replies, ==, 1);
  g_assert_cmpuint (d->stats.replies_without_call, ==, 1);
  g_assert_cmpuint (d->stats.calls_without_reply, ==, 2);   /* 0x31 (only an earlier reply) and 0x33 */
  r = find_xid (d, 0x31, 0);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpint (r->latency_ns, ==, -1);
  g_assert_cmpint (r->reply_time_ns, ==, 5000000000 + 100000);
  r = find_xid (d, 0x32, 0);
  g_assert_cmpint (r->status, ==, 5);
  g_assert_cmpint (r->latency_ns, ==, 200000);              /* from the first transmission */
  r = find_xid (d, 0x33, 0);
  g_assert_cmpint (r->status, ==, -1);
  g_assert_cmpint (r->reply_time_ns, ==, -1);
}

/* NFSv4.1 COMPOUND: SEQUENCE, PUTFH (7-byte handle), WRITE of 20000 bytes
 * (past the kept head: GETATTR comes from the kept tail), GETATTR; then an
 * unknown operation stops a walk. */
static GByteArray *
v4_compound_call (guint32 xid, gboolean unknown)
{
  GByteArray *b = rpc_call (xid, 100003, 4, 1);
  static const guint8 sess[16] = { 9 };
  put_opaque (b, (const guint8 *) "t", 1); put32 (b, 1); put32 (b, unknown ? 2 : 4);
  if (unknown)
    {
      put32 (b, 22); put_opaque (b, test_fh4, sizeof test_fh4);
      put32 (b, 9999); put32 (b, 0);
      return b;
    }
  put32 (b, 53); put_bytes (b, sess, 16); put32 (b, 1); put32 (b, 0); put32 (b, 0); put32 (b, 0);
  put32 (b, 22); put_opaque (b, test_fh4, sizeof test_fh4);
  put32 (b, 38); put32 (b, 0); put_bytes (b, sess, 12); put64 (b, 65536); put32 (b, 1); put_opaque (b, NULL, 20000);
  put32 (b, 9); put32 (b, 1); put32 (b, 1 << 4);
  return b;
}

static GByteArray *
v4_compound_reply (guint32 xid)
{
  GByteArray *b = rpc_reply (xid);
  static const guint8 sess[16] = { 9 };
  put32 (b, 0); put_opaque (b, (const guint8 *) "t", 1); put32 (b, 4);
  put32 (b, 53); put32 (b, 0); put_bytes (b, sess, 16); for (int i = 0; i < 5; i++) put32 (b, 0);
  put32 (b, 22); put32 (b, 0);
  put32 (b, 38); put32 (b, 0); put32 (b, 20000); put32 (b, 1); put64 (b, 7);
  put32 (b, 9); put32 (b, 0); put32 (b, 1); put32 (b, 1 << 4); put32 (b, 8); put64 (b, 85536);
  return b;
}

static void
test_handmade_v4 (void)
{
  GByteArray *cs = g_byte_array_new (), *ss = g_byte_array_new (), *m;
  g_autoptr(GByteArray) cap = NULL;
  g_autoptr(Decoded) d = NULL;
  const TraceNfsRecord *r;
  guint64 fh = trace_nfs_fnv1a64 (test_fh4, sizeof test_fh4);

  m = v4_compound_call (0x40, FALSE); put_record (cs, m, 0); unref (m);
  m = v4_compound_call (0x41, TRUE); put_record (cs, m, 0); unref (m);
  m = v4_compound_reply (0x40); put_record (ss, m, 0); unref (m);
  cap = tcp_conversation (cs, ss, 1448, NULL, 0, -1, 0);
  d = decode_bytes (cap, "v4");
  g_assert_no_error (d->error);
  g_assert_cmpuint (d->recs->len, ==, 6);
  r = &g_array_index (d->recs, TraceNfsRecord, 0);
  g_assert_cmpstr (r->op, ==, "SEQUENCE");
  g_assert_cmpuint (r->minorvers, ==, 1);
  g_assert_cmpuint (r->fh_hash, ==, 0);
  r = &g_array_index (d->recs, TraceNfsRecord, 1);
  g_assert_cmpstr (r->op, ==, "PUTFH");
  g_assert_cmpuint (r->fh_hash, ==, fh);
  r = &g_array_index (d->recs, TraceNfsRecord, 2);
  g_assert_cmpstr (r->op, ==, "WRITE");
  g_assert_cmpuint (r->fh_hash, ==, fh);
  g_assert_cmpuint (r->offset, ==, 65536);
  g_assert_cmpuint (r->count, ==, 20000);
  g_assert_cmpuint (r->stable, ==, 1);
  g_assert_cmpuint (r->reply_count, ==, 20000);
  g_assert_cmpuint (r->op_index, ==, 2);
  r = &g_array_index (d->recs, TraceNfsRecord, 3);
  g_assert_cmpstr (r->op, ==, "GETATTR");
  g_assert_cmpint (r->file_size, ==, 85536);
  g_assert_false (r->partial);
  g_assert_cmpint (r->status, ==, 0);
  /* the second compound stops at op 9999 */
  r = &g_array_index (d->recs, TraceNfsRecord, 5);
  g_assert_cmpstr (r->op, ==, "OP_9999");
  g_assert_true (r->partial);
  g_assert_cmpuint (d->stats.v4_stop_unknown_op, ==, 1);
  g_assert_cmpuint (d->stats.v4_walk_stopped, ==, 1);
  unref (cs);
  unref (ss);
}

/* The limits a server announces: NFSv3 FSINFO (rtmax 262144, wtmax
 * 131072) and NFSv4.1 CREATE_SESSION (fore channel ca_maxrequestsize
 * 1049620, ca_maxresponsesize 1049480), as the replay's count limits. */
static void
test_handmade_io_limits (void)
{
  GByteArray *cs = g_byte_array_new (), *ss = g_byte_array_new (), *m;
  static const guint8 sess[16] = { 7 };
  g_autoptr(GByteArray) cap = NULL;
  g_autoptr(Decoded) d = NULL;
  const TraceNfsRecord *r;

  m = rpc_call (0x60, 100003, 3, 19); put_opaque (m, test_fh, sizeof test_fh);
  put_record (cs, m, 0); unref (m);
  m = rpc_call (0x61, 100003, 4, 1);
  put_opaque (m, (const guint8 *) "t", 1); put32 (m, 1); put32 (m, 1);
  put32 (m, 43); put64 (m, 0x1122); put32 (m, 1); put32 (m, 0);
  for (int ch = 0; ch < 2; ch++)
    {
      put32 (m, 0); put32 (m, 1049620); put32 (m, 1049480); put32 (m, 4096); put32 (m, 16); put32 (m, 64);
      put32 (m, 0);
    }
  put32 (m, 0x40000000); put32 (m, 1); put32 (m, 0);
  put_record (cs, m, 0); unref (m);
  m = rpc_reply (0x60);
  put32 (m, 0); put32 (m, 0);
  put32 (m, 262144); put32 (m, 262144); put32 (m, 4096);
  put32 (m, 131072); put32 (m, 131072); put32 (m, 4096); put32 (m, 4096);
  put64 (m, G_MAXINT64); put32 (m, 0); put32 (m, 1); put32 (m, 0x1b);
  put_record (ss, m, 0); unref (m);
  m = rpc_reply (0x61);
  put32 (m, 0); put_opaque (m, (const guint8 *) "t", 1); put32 (m, 1);
  put32 (m, 43); put32 (m, 0); put_bytes (m, sess, 16); put32 (m, 1); put32 (m, 0);
  for (int ch = 0; ch < 2; ch++)
    {
      put32 (m, 0); put32 (m, 1049620); put32 (m, 1049480); put32 (m, 4096); put32 (m, 16); put32 (m, 64);
      put32 (m, 0);
    }
  put_record (ss, m, 0); unref (m);
  cap = tcp_conversation (cs, ss, 1448, NULL, 0, -1, 0);
  d = decode_bytes (cap, "limits");
  g_assert_no_error (d->error);
  g_assert_cmpuint (d->recs->len, ==, 2);
  r = &g_array_index (d->recs, TraceNfsRecord, 0);
  g_assert_cmpstr (r->op, ==, "FSINFO");
  g_assert_false (r->partial);
  g_assert_cmpuint (r->max_read_bytes, ==, 262144);
  g_assert_cmpuint (r->max_write_bytes, ==, 131072);
  g_assert_cmpint (r->file_size, ==, -1);
  r = &g_array_index (d->recs, TraceNfsRecord, 1);
  g_assert_cmpstr (r->op, ==, "CREATE_SESSION");
  g_assert_false (r->partial);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpuint (r->max_write_bytes, ==, 1049620);
  g_assert_cmpuint (r->max_read_bytes, ==, 1049480);
  unref (cs);
  unref (ss);
}

/* NFSv4.0 name operations in one COMPOUND: RENAME and LINK between the
 * saved handle and the current one, CREATE of a directory (its handle
 * from GETFH) and of a symbolic link, REMOVE, OPEN with OPEN4_CREATE. */
static void
test_handmade_v4_names (void)
{
  static const guint8 new_fh[5] = { 7, 7, 7, 7, 7 };
  GByteArray *cs = g_byte_array_new (), *ss = g_byte_array_new (), *m;
  g_autoptr(GByteArray) cap = NULL;
  g_autoptr(Decoded) d = NULL;
  const TraceNfsRecord *r;
  guint64 a = trace_nfs_fnv1a64 (test_fh4, sizeof test_fh4), b = trace_nfs_fnv1a64 (test_fh, sizeof test_fh);

  m = rpc_call (0x50, 100003, 4, 1);
  put_opaque (m, (const guint8 *) "n", 1); put32 (m, 0); put32 (m, 12);
  put32 (m, 22); put_opaque (m, test_fh4, sizeof test_fh4);                 /* PUTFH A */
  put32 (m, 32);                                                             /* SAVEFH */
  put32 (m, 22); put_opaque (m, test_fh, sizeof test_fh);                   /* PUTFH B */
  put32 (m, 29); put_opaque (m, (const guint8 *) "x", 1); put_opaque (m, (const guint8 *) "y", 1);
  put32 (m, 11); put_opaque (m, (const guint8 *) "l", 1);                   /* LINK */
  put32 (m, 6); put32 (m, 2); put_opaque (m, (const guint8 *) "d", 1); put32 (m, 0); put32 (m, 0);
  put32 (m, 10);                                                             /* GETFH */
  put32 (m, 22); put_opaque (m, test_fh, sizeof test_fh);
  put32 (m, 6); put32 (m, 5); put_opaque (m, (const guint8 *) "tgt", 3); put_opaque (m, (const guint8 *) "s", 1);
  put32 (m, 0); put32 (m, 0);
  /* CREATE made the link the current handle: back to B */
  put32 (m, 22); put_opaque (m, test_fh, sizeof test_fh);
  put32 (m, 28); put_opaque (m, (const guint8 *) "gone", 4);               /* REMOVE */
  put32 (m, 18); put32 (m, 1); put32 (m, 2); put32 (m, 0); put64 (m, 5); put_opaque (m, (const guint8 *) "ow", 2);
  put32 (m, 1); put32 (m, 0); put32 (m, 0); put32 (m, 0);                  /* OPEN4_CREATE, UNCHECKED4 */
  put32 (m, 0); put_opaque (m, (const guint8 *) "o", 1);                   /* CLAIM_NULL */
  put_record (cs, m, 0); unref (m);
  m = rpc_reply (0x50);
  put32 (m, 0); put_opaque (m, (const guint8 *) "n", 1); put32 (m, 7);
  put32 (m, 22); put32 (m, 0);
  put32 (m, 32); put32 (m, 0);
  put32 (m, 22); put32 (m, 0);
  put32 (m, 29); put32 (m, 0); put_opaque (m, NULL, 0); for (int i = 0; i < 9; i++) put32 (m, 0);
  put32 (m, 11); put32 (m, 0); for (int i = 0; i < 5; i++) put32 (m, 0);
  put32 (m, 6); put32 (m, 0); for (int i = 0; i < 5; i++) put32 (m, 0); put32 (m, 0);
  put32 (m, 10); put32 (m, 0); put_opaque (m, new_fh, sizeof new_fh);
  put_record (ss, m, 0); unref (m);
  cap = tcp_conversation (cs, ss, 1448, NULL, 0, -1, 0);
  d = decode_bytes (cap, "v4-names");
  g_assert_no_error (d->error);
  g_assert_cmpuint (d->recs->len, ==, 12);
  for (guint i = 0; i < d->recs->len; i++)
    g_assert_false (g_array_index (d->recs, TraceNfsRecord, i).partial);
  r = &g_array_index (d->recs, TraceNfsRecord, 3);
  g_assert_cmpstr (r->op, ==, "RENAME");
  g_assert_cmpstr (r->name, ==, "x");
  g_assert_cmpstr (r->name2, ==, "y");
  g_assert_cmpuint (r->dir_fh_hash, ==, a);
  g_assert_cmpuint (r->dir2_fh_hash, ==, b);
  r = &g_array_index (d->recs, TraceNfsRecord, 4);
  g_assert_cmpstr (r->op, ==, "LINK");
  g_assert_cmpstr (r->name, ==, "l");
  g_assert_cmpuint (r->dir_fh_hash, ==, b);
  g_assert_cmpuint (r->src_fh_hash, ==, a);
  r = &g_array_index (d->recs, TraceNfsRecord, 5);
  g_assert_cmpstr (r->op, ==, "CREATE");
  g_assert_cmpuint (r->create_type, ==, 2);
  g_assert_cmpstr (r->name, ==, "d");
  g_assert_cmpuint (r->dir_fh_hash, ==, b);
  g_assert_cmpuint (r->obj_fh_hash, ==, trace_nfs_fnv1a64 (new_fh, sizeof new_fh));
  r = &g_array_index (d->recs, TraceNfsRecord, 8);
  g_assert_cmpuint (r->create_type, ==, 5);
  g_assert_cmpstr (r->name, ==, "s");
  g_assert_cmpstr (r->name2, ==, "tgt");
  g_assert_cmpuint (r->name2_len, ==, 3);
  g_assert_cmpuint (r->dir_fh_hash, ==, b);
  r = &g_array_index (d->recs, TraceNfsRecord, 10);
  g_assert_cmpstr (r->op, ==, "REMOVE");
  g_assert_cmpstr (r->name, ==, "gone");
  g_assert_cmpuint (r->dir_fh_hash, ==, b);
  r = &g_array_index (d->recs, TraceNfsRecord, 11);
  g_assert_cmpstr (r->op, ==, "OPEN");
  g_assert_cmpstr (r->name, ==, "o");
  g_assert_true (r->open_create);
  g_assert_cmpuint (r->create_type, ==, 1);
  g_assert_cmpuint (r->dir_fh_hash, ==, b);
  unref (cs);
  unref (ss);
}

/* ---- bad input ------------------------------------------------------------------- */

static char *
write_temp (const guint8 *data, gsize len, const char *suffix)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpl = g_strdup_printf ("iosim-nfs-XXXXXX%s", suffix);
  char *path = NULL;
  int fd = g_file_open_tmp (tmpl, &path, &error);

  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, (const char *) data, (gssize) len, NULL));
  return path;
}

static GByteArray *
small_capture (void)
{
  Streams st = streams_basic (0);
  GByteArray *cap = tcp_conversation (st.c, st.s, 700, NULL, 0, -1, 0);
  unref (st.c);
  unref (st.s);
  return cap;
}

/* A file cut inside a frame: the records decoded before the cut come
 * out, then a GError naming the file, the frame and its byte offset. */
static void
test_bad_truncated (void)
{
  g_autoptr(GByteArray) cap = small_capture ();
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = NULL;
  g_autoptr(Decoded) d = NULL;
  guint pos = 24, frame = 0, cut_frame = 0, cut_offset = 0;
  g_autofree char *want = NULL;

  /* cut the last frame in half */
  while (pos < cap->len)
    {
      guint32 caplen = cap->data[pos + 8] | (cap->data[pos + 9] << 8) | (cap->data[pos + 10] << 16);
      frame++;
      if (pos + 16 + caplen >= cap->len)
        {
          cut_frame = frame;
          cut_offset = pos;
          break;
        }
      pos += 16 + caplen;
    }
  path = write_temp (cap->data, cut_offset + 30, ".pcap");
  r = trace_nfs_reader_open (path, &error);
  g_assert_no_error (error);
  d = decode_reader (r);
  g_assert_error (d->error, TRACE_ERROR, TRACE_ERROR_PARSE);
  want = g_strdup_printf ("%s: frame %u (byte offset %u)", path, cut_frame, cut_offset);
  g_test_message ("%s", d->error->message);
  g_assert_true (g_str_has_prefix (d->error->message, want));
  g_assert_nonnull (strstr (d->error->message, "truncated"));
  /* the READ and WRITE were answered before the cut; GETATTR lost its reply */
  g_assert_cmpuint (d->recs->len, ==, 3);
  g_assert_cmpint (g_array_index (d->recs, TraceNfsRecord, 0).status, ==, 0);
  g_unlink (path);
}

static void
test_bad_magic (void)
{
  static const char *const inputs[] = {
    "GET / HTTP/1.1\r\nHost: x\r\n\r\n",      /* wrong magic */
    "\xd4\xc3\xb2\xa1\x02\x00",               /* header cut short */
    "",                                       /* empty */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autofree char *path = write_temp ((const guint8 *) inputs[i], strlen (inputs[i]), ".pcap");
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceNfsReader) r = trace_nfs_reader_open (path, &error);
      g_autofree char *want = g_strdup_printf ("%s: byte offset 0", path);

      g_assert_null (r);
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_true (g_error_matches (error, TRACE_ERROR, TRACE_ERROR_FORMAT)
                     || g_error_matches (error, TRACE_ERROR, TRACE_ERROR_PARSE));
      g_assert_true (g_str_has_prefix (error->message, want));
      g_assert_true (trace_is_capture (path) == (i == 1));   /* the cut header has the magic */
      g_unlink (path);
    }
  {
    g_autoptr(GError) error = NULL;
    g_assert_null (trace_nfs_reader_open ("/nonexistent/x.pcap", &error));
    g_assert_error (error, TRACE_ERROR, TRACE_ERROR_IO);
    g_assert_nonnull (strstr (error->message, "/nonexistent/x.pcap"));
  }
}

/* Garbage after a valid header: frames of junk are counted, not fatal;
 * a record length beyond the file is a located error. */
static void
test_bad_garbage_frames (void)
{
  g_autoptr(GByteArray) cap = cap_new (1);
  g_autoptr(Decoded) d = NULL;
  guint64 s = 0x12345;

  for (int i = 0; i < 200; i++)
    {
      GByteArray *f = g_byte_array_new ();
      guint n = 14 + (guint) (i * 37 % 300);
      for (guint k = 0; k < n; k++)
        {
          s = s * 6364136223846793005ULL + 1442695040888963407ULL;
          put8 (f, (guint8) (s >> 56));
        }
      if (i % 3 == 0)
        {
          f->data[12] = 0x08;     /* claims IPv4 */
          f->data[13] = 0x00;
          f->data[14] = 0x45;
        }
      cap_frame (cap, i * 1000, f, G_MAXUINT32);
      unref (f);
    }
  d = decode_bytes (cap, "garbage");
  g_assert_no_error (d->error);
  g_assert_cmpuint (d->stats.frames, ==, 200);
  g_assert_cmpuint (d->stats.non_ip_frames + d->stats.malformed_frames + d->stats.non_nfs_frames
                    + d->stats.ip_fragments + d->stats.tcp_segments, >=, 200);
}

/* pcapng whose second interface has another link type: libpcap refuses
 * it; the message says so, with file, frame and offset. */
static void
put_block (GByteArray *b, guint32 type, const GByteArray *body)
{
  guint32 len = 12 + ((body->len + 3) & ~3u);
  static const guint8 zero[4] = { 0 };
  put32le (b, type);
  put32le (b, len);
  put_bytes (b, body->data, body->len);
  put_bytes (b, zero, (4 - (body->len & 3)) & 3);
  put32le (b, len);
}

static void
test_bad_pcapng_mixed_linktypes (void)
{
  g_autoptr(GByteArray) ng = g_byte_array_new ();
  g_autoptr(GByteArray) shb = g_byte_array_new ();
  g_autoptr(GByteArray) idb1 = g_byte_array_new ();
  g_autoptr(GByteArray) idb2 = g_byte_array_new ();
  g_autoptr(GByteArray) epb = g_byte_array_new ();
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = NULL;
  g_autoptr(Decoded) d = NULL;
  GByteArray *call = v3_getattr_call (1), *u = udp (700, 2049, call), *ip = ipv4 (cli4, srv4, 17, 1, 0, FALSE, u->data, u->len);
  GByteArray *fr = eth (0x0800, ip, 0);

  put32le (shb, 0x1a2b3c4d); put32le (shb, 0x00000001); put32le (shb, 0xffffffff); put32le (shb, 0xffffffff);
  put_block (ng, 0x0a0d0d0a, shb);
  put32le (idb1, 1); put32le (idb1, 0);            /* EN10MB, snaplen 0 */
  put_block (ng, 1, idb1);
  put32le (epb, 0); put32le (epb, 0); put32le (epb, 1000); put32le (epb, fr->len); put32le (epb, fr->len);
  put_bytes (epb, fr->data, fr->len);
  put_block (ng, 6, epb);
  put32le (idb2, 113); put32le (idb2, 0);          /* LINUX_SLL */
  put_block (ng, 1, idb2);
  put_block (ng, 6, epb);
  path = write_temp (ng->data, ng->len, ".pcapng");
  g_assert_true (trace_is_capture (path));
  r = trace_nfs_reader_open (path, &error);
  g_assert_no_error (error);
  d = decode_reader (r);
  g_assert_nonnull (d->error);
  g_test_message ("%s", d->error->message);
  g_assert_true (g_str_has_prefix (d->error->message, path));
  g_assert_nonnull (strstr (d->error->message, "frame 2"));
  g_assert_nonnull (strstr (d->error->message, "link type"));
  g_assert_cmpuint (d->recs->len, ==, 1);     /* the call before the refusal still comes out */
  g_unlink (path);
  unref (call); unref (u); unref (ip); unref (fr);
}

static void
test_is_capture_and_compression (void)
{
  g_autoptr(GByteArray) cap = small_capture ();
  g_autofree char *plain = write_temp (cap->data, cap->len, ".pcap");
  g_autofree char *gz = g_strconcat (plain, ".gz", NULL);
  g_autofree char *cmd = g_strdup_printf ("gzip -c '%s' > '%s'", plain, gz);
  g_autoptr(GError) error = NULL;
  g_autoptr(Decoded) d = NULL;
  g_autoptr(TraceNfsReader) r = NULL;

  g_assert_true (trace_is_capture (plain));
  g_assert_cmpint (system (cmd), ==, 0);
  g_assert_true (trace_is_capture (gz));
  r = trace_nfs_reader_open (gz, &error);
  g_assert_no_error (error);
  d = decode_reader (r);
  check_basic_records (d);
  g_unlink (plain);
  g_unlink (gz);
  {
    /* byte-swapped and µs magics */
    static const guint8 m1[] = { 0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1 };
    g_autofree char *p1 = write_temp (m1, sizeof m1, ".pcap");
    g_autoptr(GError) e2 = NULL;
    g_autoptr(TraceNfsReader) r2 = NULL;
    TraceNfsRecord rec;
    g_assert_true (trace_is_capture (p1));
    r2 = trace_nfs_reader_open (p1, &e2);
    g_assert_no_error (e2);
    g_assert_false (trace_nfs_reader_next (r2, &rec, &e2));
    g_assert_no_error (e2);
    g_assert_cmpstr (trace_nfs_reader_linktype (r2), ==, "EN10MB");
    g_unlink (p1);
  }
}

static void
test_csv (void)
{
  g_autoptr(GByteArray) cap = small_capture ();
  g_autoptr(Decoded) d = decode_bytes (cap, "csv");
  g_autoptr(GString) s = g_string_new (NULL);
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) cols = NULL;

  trace_nfs_csv_header (s);
  g_assert_true (g_str_has_prefix (s->str, "time_ns,client,server,xid,vers,op,fh,offset,count,status,latency_ns"));
  for (guint i = 0; i < d->recs->len; i++)
    trace_nfs_format_csv (&g_array_index (d->recs, TraceNfsRecord, i), s);
  lines = g_strsplit (s->str, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  cols = g_strsplit (lines[2], ",", -1);
  {
    g_auto(GStrv) head = g_strsplit (lines[0], ",", -1);
    g_assert_cmpuint (g_strv_length (cols), ==, g_strv_length (head));
  }
  g_assert_cmpstr (cols[1], ==, "10.0.0.1:800");
  g_assert_cmpstr (cols[3], ==, "0x00000002");
  g_assert_cmpstr (cols[5], ==, "WRITE");
  g_assert_cmpstr (cols[7], ==, "8192");
  g_assert_cmpstr (cols[8], ==, "3000");
  g_assert_cmpstr (cols[9], ==, "0");
  /* the hashes: FNV-1a 64 offset basis and a known CRC-32 */
  g_assert_cmpuint (trace_nfs_fnv1a64 ((const guint8 *) "", 0), ==, G_GUINT64_CONSTANT (0xcbf29ce484222325));
  g_assert_cmpuint (trace_nfs_crc32 ((const guint8 *) "123456789", 9), ==, 0xcbf43926);
  {
    g_autoptr(GString) st = g_string_new (NULL);
    trace_nfs_stats_format (&d->stats, st);
    g_assert_nonnull (strstr (st->str, "rpc_calls"));
  }
}

/* ---- mutation smoke (the CI face of fuzz-trace-nfs.c) ------------------------------ */

static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

static void
mutate_run (const guint8 *src, gsize len, guint64 seed, guint *errors)
{
  guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
  g_autoptr(GByteArray) m = g_byte_array_new ();
  guint edits = 1 + (guint) (next_rand (&s) % 16);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = NULL;
  TraceNfsRecord rec;
  g_autoptr(GString) csv = g_string_new (NULL);

  g_byte_array_append (m, src, (guint) len);
  for (guint e = 0; e < edits && m->len > 24; e++)
    {
      /* mostly past the file header, where the decoder lives */
      gsize pos = 24 + (gsize) (next_rand (&s) % (m->len - 24));
      switch (next_rand (&s) % 6)
        {
        case 0: m->data[pos] = (guint8) next_rand (&s); break;
        case 1: m->data[pos] ^= (guint8) (1u << (next_rand (&s) % 8)); break;
        case 2:
          {
            gsize run = 1 + next_rand (&s) % 64;
            g_byte_array_remove_range (m, (guint) pos, (guint) MIN (m->len - pos, run));
          }
          break;
        case 3: g_byte_array_set_size (m, (guint) pos); break;
        case 4: memset (m->data + pos, 0xff, MIN (m->len - pos, 4)); break;
        default: m->data[next_rand (&s) % 24] = (guint8) next_rand (&s); break;
        }
    }
  r = trace_nfs_reader_open_buffer (m->data, m->len, "mutant", &error);
  if (r == NULL)
    {
      g_assert_true (g_str_has_prefix (error->message, "mutant: "));
      (*errors)++;
      return;
    }
  while (trace_nfs_reader_next (r, &rec, &error))
    {
      g_string_truncate (csv, 0);
      trace_nfs_format_csv (&rec, csv);
      g_assert_cmpuint (csv->len, >, 0);
    }
  if (error != NULL)
    {
      g_assert_true (g_error_matches (error, TRACE_ERROR, TRACE_ERROR_PARSE));
      g_assert_true (g_str_has_prefix (error->message, "mutant: frame "));
      (*errors)++;
    }
}

static void
test_mutation_smoke (void)
{
  static const char *const samples[] = {
    "generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcapng",
    "nfs-pcap-suricata-verify/nfsv41-tcp.pcap",
    "nfs-pcap-suricata-verify/nfsv3-udp.pcap",
    "nfs-pcap-tcpdump-edgecases/nfs-write-verf-cookie.pcapng",
  };
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint runs = 0, errors = 0;
  guint per = g_test_thorough () ? 2000 : 150;

  {
    g_autoptr(GByteArray) cap = small_capture ();
    g_ptr_array_add (inputs, g_bytes_new (cap->data, cap->len));
  }
  if (shared_testdata () != NULL)
    for (gsize i = 0; i < G_N_ELEMENTS (samples); i++)
      {
        g_autofree char *path = g_build_filename (shared_testdata (), samples[i], NULL);
        char *data;
        gsize len;
        if (g_file_get_contents (path, &data, &len, NULL))
          g_ptr_array_add (inputs, g_bytes_new_take (data, len));
      }
  for (guint i = 0; i < inputs->len; i++)
    for (guint k = 0; k < per; k++)
      {
        gsize len;
        const guint8 *p = g_bytes_get_data (inputs->pdata[i], &len);
        mutate_run (p, len, (guint64) i * 100003 + k, &errors);
        runs++;
      }
  g_test_message ("%u mutants, %u ended in a located error, none crashed", runs, errors);
}

/* ---- tshark, live ---------------------------------------------------------------- */

static void
test_tshark_live (void)
{
  static const char *const files[] = {
    "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap",
    "nfs-pcap-suricata-verify/nfsv41-tcp.pcap",
    "nfs-pcap-suricata-verify/nfsv3-udp.pcap",
  };
  g_autofree char *tshark = g_find_program_in_path ("tshark");

  if (tshark == NULL)
    {
      g_test_skip ("tshark not installed (apt-get install tshark)");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *cap = sample (files[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocess) p = NULL;
      g_autofree char *out = NULL;
      g_autoptr(TshDump) tsh = NULL;
      g_autoptr(OurDecode) ours = NULL;
      CompareOpts opt = { 0 };
      const char *argv[] = {
        tshark, "-2", "-r", NULL, "-Y", "rpc", "-T", "fields", "-E", "header=y", "-E", "separator=/t",
        "-E", "occurrence=a", "-E", "aggregator=,",
        "-e", "frame.number", "-e", "frame.time_epoch", "-e", "ip.src", "-e", "ip.dst", "-e", "ipv6.src",
        "-e", "ipv6.dst", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "udp.srcport", "-e", "udp.dstport",
        "-e", "rpc.xid", "-e", "rpc.msgtyp", "-e", "rpc.program", "-e", "rpc.programversion",
        "-e", "rpc.procedure", "-e", "nfs.procedure_v3", "-e", "nfs.opcode", "-e", "nfs.fh.hash",
        "-e", "nfs.offset3", "-e", "nfs.count3", "-e", "nfs.offset4", "-e", "nfs.count4", "-e", "nfs.status",
        "-e", "nfs.nfsstat4", "-e", "rpc.reqframe", "-e", "rpc.repframe", "-e", "rpc.time", NULL
      };

      if (cap == NULL)
        return;
      argv[3] = cap;
      p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_successful (p));
      tsh = tsh_parse (out);
      g_assert_cmpuint (tsh->calls->len, >, 0);
      ours = decode_all (cap);
      compare_with_tshark (files[i], ours, tsh, &opt);
    }
}

/* ---- names against tshark ------------------------------------------------------------ */

/* Run tshark on @cap for NFS calls with the name fields; NULL (skipped) when
 * tshark is missing. */
static char *
tshark_names_dump (const char *tshark, const char *cap)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p = NULL;
  char *out = NULL;
  const char *argv[] = {
    tshark, "-2", "-r", cap, "-Y", "rpc.msgtyp == 0 && nfs", "-T", "fields", "-E", "separator=/t",
    "-E", "occurrence=a", "-E", "aggregator=|",
    "-e", "frame.number", "-e", "rpc.xid", "-e", "rpc.programversion", "-e", "nfs.name",
    "-e", "nfs.pathname.component", "-e", "nfs.symlink.to", "-e", "nfs.fh.hash",
    "-e", "nfs.open.opentype", NULL
  };

  p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (p));
  return out;
}

static int
cmp_strv_item (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* "a|b|c" (tshark's values of one field) appended to @list. */
static void
add_split (GPtrArray *list, const char *joined)
{
  g_auto(GStrv) parts = NULL;

  if (*joined == '\0')
    return;
  parts = g_strsplit (joined, "|", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    g_ptr_array_add (list, g_strdup (parts[i]));
}

static char *
join_sorted (GPtrArray *list)
{
  g_ptr_array_sort (list, cmp_strv_item);
  g_ptr_array_add (list, NULL);
  return g_strjoinv ("|", (char **) list->pdata);
}

typedef struct {
  guint names, symlinks, handles, opens_created;
} NameFigures;

/* One tshark call line against our records of that call. */
static void
compare_names_call (char **cols, const OurCall *o, NameFigures *fig, GString *report, guint *bad_out)
{
  guint bad = *bad_out;
  g_autoptr(GPtrArray) tsh_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) our_names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *tn = NULL, *on = NULL;
  g_autoptr(GString) our_to = g_string_new (NULL);
  g_autoptr(GString) our_fh = g_string_new (NULL);
  g_autoptr(GString) our_open = g_string_new (NULL);
  const TraceNfsRecord *r0 = &g_array_index (o->recs, TraceNfsRecord, 0);
  guint64 frame = g_ascii_strtoull (cols[0], NULL, 10);

  add_split (tsh_names, cols[3]);
  add_split (tsh_names, cols[4]);
  for (guint i = 0; i < o->recs->len; i++)
    {
      const TraceNfsRecord *r = &g_array_index (o->recs, TraceNfsRecord, i);
      gboolean rename = strcmp (r->op, "RENAME") == 0, symlink = strcmp (r->op, "SYMLINK") == 0;

      if (r->name_len > 0)
        g_ptr_array_add (our_names, g_strdup (r->name));
      if (rename && r->name2_len > 0)
        g_ptr_array_add (our_names, g_strdup (r->name2));
      if (symlink && r->vers <= 3)
        g_string_append_printf (our_to, "%s%s", our_to->len ? "|" : "", r->name2);
      if (strcmp (r->op, "OPEN") == 0)
        g_string_append_printf (our_open, "%s%d", our_open->len ? "|" : "", r->open_create ? 1 : 0);
    }
  /* the handles tshark hashes in a v2/v3 name call, in wire order */
  if (r0->vers <= 3 && r0->name_len > 0)
    {
      if (strcmp (r0->op, "LINK") == 0)
        g_string_printf (our_fh, "0x%08x|0x%08x", r0->fh_crc32, r0->dir_fh_crc32);
      else if (strcmp (r0->op, "RENAME") == 0)
        g_string_printf (our_fh, "0x%08x|0x%08x", r0->dir_fh_crc32, r0->dir2_fh_crc32);
      else
        g_string_printf (our_fh, "0x%08x", r0->dir_fh_crc32);
      if (strcmp (our_fh->str, cols[6]) != 0)
        MISMATCH ("frame %" G_GUINT64_FORMAT " %s: directory handles %s, tshark %s", frame, r0->op,
                  our_fh->str, cols[6]);
      fig->handles++;
    }
  fig->names += our_names->len;
  tn = join_sorted (tsh_names);
  on = join_sorted (our_names);
  if (strcmp (tn, on) != 0)
    MISMATCH ("frame %" G_GUINT64_FORMAT " xid %08x %s: names [%s], tshark [%s]", frame, r0->xid, r0->op, on, tn);
  if (strcmp (our_to->str, cols[5]) != 0)
    MISMATCH ("frame %" G_GUINT64_FORMAT " %s: link text [%s], tshark [%s]", frame, r0->op, our_to->str, cols[5]);
  fig->symlinks += our_to->len > 0;
  /* tshark prints the open type of OPEN4_CREATE / OPEN4_NOCREATE */
  if (strcmp (our_open->str, cols[7]) != 0)
    MISMATCH ("frame %" G_GUINT64_FORMAT " OPEN create [%s], tshark opentype [%s]", frame, our_open->str, cols[7]);
  fig->opens_created += strstr (our_open->str, "1") != NULL;
  *bad_out = bad;
}

/* The names of name-space calls (nfs.name, nfs.pathname.component for
 * NFSv4 LOOKUP, nfs.symlink.to), the directory handles of v2/v3 name calls
 * (nfs.fh.hash, both for RENAME and LINK) and OPEN's create flag
 * (nfs.open.opentype) are tshark's, call by call. */
static void
test_tshark_names (void)
{
  static const struct { const char *file; guint min_names; } files[] = {
    { "nfs-pcap-suricata-verify/nfsv3-udp.pcap", 30 },
    { "nfs-pcap-suricata-verify/nfsv2-udp.pcap", 30 },
    { "nfs-pcap-suricata-verify/nfsv41-tcp.pcap", 3 },
    { "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap", 6 },
    { "generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcap", 5 },
  };
  g_autofree char *tshark = g_find_program_in_path ("tshark");

  if (tshark == NULL)
    {
      g_test_skip ("tshark not installed (apt-get install tshark)");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *cap = sample (files[i].file);
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;
      g_autoptr(OurDecode) ours = NULL;
      g_autoptr(GString) report = g_string_new (NULL);
      NameFigures fig = { 0 };
      guint bad = 0, calls = 0;

      if (cap == NULL)
        return;
      out = tshark_names_dump (tshark, cap);
      ours = decode_all (cap);
      lines = g_strsplit (out, "\n", -1);
      for (guint li = 0; lines[li] != NULL; li++)
        {
          g_auto(GStrv) cols = g_strsplit (lines[li], "\t", -1);
          guint64 key;
          OurCall *o;

          /* one RPC per frame only; NFS_ACL and MOUNT calls are not ours */
          if (g_strv_length (cols) < 8 || strchr (cols[1], '|') != NULL)
            continue;
          key = call_key (g_ascii_strtoull (cols[0], NULL, 10), (guint32) g_ascii_strtoull (cols[1], NULL, 16));
          o = g_hash_table_lookup (ours->calls, &key);
          if (o == NULL)
            continue;
          calls++;
          compare_names_call (cols, o, &fig, report, &bad);
        }
      g_test_message ("%s: %u calls; %u names, %u link texts, %u v2/v3 directory handle sets, "
                      "%u OPEN creates equal tshark's", files[i].file, calls, fig.names, fig.symlinks,
                      fig.handles, fig.opens_created);
      if (bad > 0)
        g_error ("%s: %u name differences from tshark:\n%s", files[i].file, bad, report->str);
      g_assert_cmpuint (fig.names, >=, files[i].min_names);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (tsv_cases); i++)
    {
      g_autofree char *base = g_path_get_basename (tsv_cases[i].capture);
      g_autofree char *name = g_strdup_printf ("/trace-nfs/tshark-dump/%s", base);
      g_test_add_data_func (name, &tsv_cases[i], test_tshark_dump);
    }
  g_test_add_func ("/trace-nfs/tshark-live", test_tshark_live);
  g_test_add_func ("/trace-nfs/tshark-names", test_tshark_names);
  g_test_add_func ("/trace-nfs/nfstrace/tcp-seq-overlap", test_overlap_vs_nfstrace);
  g_test_add_func ("/trace-nfs/checklist/snaplen", test_snaplen);
  g_test_add_func ("/trace-nfs/checklist/backchannel", test_checklist_backchannel);
  g_test_add_func ("/trace-nfs/checklist/udp-fragments-retransmissions", test_checklist_udp_fragments_retransmissions);
  g_test_add_func ("/trace-nfs/checklist/reply-first", test_checklist_reply_first);
  g_test_add_func ("/trace-nfs/checklist/link-layers", test_checklist_link_layers);
  g_test_add_func ("/trace-nfs/checklist/edge-cases", test_checklist_edge_cases);
  g_test_add_func ("/trace-nfs/checklist/failing-mount", test_checklist_failing_mount);
  g_test_add_func ("/trace-nfs/checklist/large", test_checklist_large);
  g_test_add_func ("/trace-nfs/handmade/tcp-in-order", test_handmade_tcp_in_order);
  g_test_add_func ("/trace-nfs/handmade/tcp-reordered", test_handmade_tcp_reordered);
  g_test_add_func ("/trace-nfs/handmade/tcp-overlap", test_handmade_tcp_overlap);
  g_test_add_func ("/trace-nfs/handmade/tcp-gaps", test_handmade_tcp_gaps);
  g_test_add_func ("/trace-nfs/handmade/link-layers", test_handmade_link_layers);
  g_test_add_func ("/trace-nfs/handmade/ip-fragments", test_handmade_ip_fragments);
  g_test_add_func ("/trace-nfs/handmade/matching", test_handmade_matching);
  g_test_add_func ("/trace-nfs/handmade/nfsv4", test_handmade_v4);
  g_test_add_func ("/trace-nfs/handmade/nfsv4-names", test_handmade_v4_names);
  g_test_add_func ("/trace-nfs/handmade/io-limits", test_handmade_io_limits);
  g_test_add_func ("/trace-nfs/bad/truncated", test_bad_truncated);
  g_test_add_func ("/trace-nfs/bad/magic", test_bad_magic);
  g_test_add_func ("/trace-nfs/bad/garbage-frames", test_bad_garbage_frames);
  g_test_add_func ("/trace-nfs/bad/pcapng-mixed-linktypes", test_bad_pcapng_mixed_linktypes);
  g_test_add_func ("/trace-nfs/open/compressed-and-magic", test_is_capture_and_compression);
  g_test_add_func ("/trace-nfs/csv", test_csv);
  g_test_add_func ("/trace-nfs/mutation-smoke", test_mutation_smoke);
  return g_test_run ();
}
