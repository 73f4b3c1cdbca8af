/* trace-iolog.c — fio I/O logs, versions 2 and 3 (fio iolog.c, read_iolog
 * and log_io_u; shared/reference/trace-formats.md §2): the "fio-iolog"
 * reader and the version 3 writer.
 *
 * Reader.  The first line names the version ("fio version 2 iolog" or
 * "fio version 3 iolog", a prefix as fio matches it).  Every I/O action
 * (read, write, trim, sync, datasync) becomes one Q record: fio logs the
 * issue order and, in version 3, the submission time in microseconds
 * since the log was opened (time_ns = usec * 1000).  Version 2 has no
 * times; its I/Os carry the latest "wait" deadline before them (fio's
 * replay treats "wait N" as N ms since the job started), 0 before any.
 * The extent is byte-exact (TraceRecord head_bytes/length_bytes), so
 * offsets that are not multiples of 512 are kept.  Files are numbered in
 * the order of their "add" lines: records carry dev 0,N and the reader's
 * metadata "file.N" holds the name.  File actions (add, open, close),
 * waits and the version line are skipped and counted
 * (trace_reader_skipped); a "wait" in a version 3 log, which fio ignores
 * with a message, is skipped too.  Lines that fio would report as "bad
 * iolog" (a wrong token count, an unknown action, an I/O on a file never
 * added, numbers out of range) are errors here.
 *
 * rwbs: read R, write W, trim D (discard), sync F (flush), datasync F S.
 */
#include "traces/trace-private.h"

#include <string.h>

#define IOLOG_MAX_TOKENS 6
#define IOLOG_MAX_FILES  (1u << 16)

typedef struct {
  int          version;      /* 0 until the version line */
  GHashTable  *meta;         /* the reader's */
  GHashTable  *files;        /* name -> GUINT_TO_POINTER (index + 1) */
  guint        n_files;
  gint64       wait_ns;      /* version 2: the latest wait deadline */
} IologState;

typedef struct {
  const char *p;
  gsize       len;
} IologToken;

static gboolean
token_is (const IologToken *t, const char *word)
{
  return t->len == strlen (word) && memcmp (t->p, word, t->len) == 0;
}

/* Split on blanks; returns the number of tokens, at most @max + 1 (more
 * than @max means too many). */
static guint
split_tokens (const char *line, gsize len, IologToken *tok, guint max)
{
  TraceCursor c;
  guint n = 0;

  trace_cursor_init (&c, line, len);
  while (n <= max)
    {
      const char *w;
      gsize wlen;
      if (!trace_cursor_word (&c, &w, &wlen))
        break;
      if (n < max)
        {
          tok[n].p = w;
          tok[n].len = wlen;
        }
      n++;
    }
  return n;
}

static gboolean
token_u64 (const IologToken *t, guint64 *out)
{
  TraceCursor c;

  trace_cursor_init (&c, t->p, t->len);
  return trace_cursor_u64 (&c, out) && c.p == c.end;
}

static void
iolog_attach (gpointer state, GHashTable *meta)
{
  IologState *st = state;

  st->meta = meta;
  st->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
iolog_clear (gpointer state)
{
  IologState *st = state;

  g_clear_pointer (&st->files, g_hash_table_unref);
}

/* "fio version N iolog": fio compares the first line's prefix. */
static TraceLineResult
parse_version (IologState *st, const char *line, GError **error)
{
  static const char pre[] = "fio version ";
  const char *p;
  char *end = NULL;
  guint64 v;

  if (!g_str_has_prefix (line, pre))
    return trace_line_fail (error, "not a fio iolog: the first line must be "
                 "'fio version 2 iolog' or 'fio version 3 iolog'");
  p = line + sizeof pre - 1;
  v = g_ascii_strtoull (p, &end, 10);
  if (end == p || !g_str_has_prefix (end, " iolog"))
    return trace_line_fail (error, "not a fio iolog: the first line must be "
                 "'fio version 2 iolog' or 'fio version 3 iolog'");
  if (v != 2 && v != 3)
    return trace_line_fail (error, "fio iolog version %" G_GUINT64_FORMAT " is not supported "
                 "(versions 2 and 3 are; fio itself dropped version 1)", v);
  st->version = (int) v;
  g_hash_table_replace (st->meta, g_strdup ("iolog.version"), g_strdup_printf ("%d", st->version));
  return TRACE_LINE_SKIP;
}

/* Index + 1 of the file named @name, 0 if unknown (or added with @add).
 * The name is looked up in place, NUL-terminated for the moment: no
 * allocation per I/O line. */
static guint
file_index (IologState *st, const IologToken *name, gboolean add)
{
  char *end = (char *) name->p + name->len;
  char saved = *end;
  gpointer v;

  *end = '\0';
  v = g_hash_table_lookup (st->files, name->p);
  if (v == NULL && add)
    {
      /* The caller checked the file limit. */
      g_hash_table_insert (st->files, g_strdup (name->p), GUINT_TO_POINTER (st->n_files + 1));
      g_hash_table_replace (st->meta, g_strdup_printf ("file.%u", st->n_files), g_strdup (name->p));
      v = GUINT_TO_POINTER (++st->n_files);
    }
  *end = saved;
  return GPOINTER_TO_UINT (v);
}

static TraceLineResult
file_action (IologState *st, const IologToken *name, const IologToken *act, GError **error)
{
  if (token_is (act, "add"))
    {
      if (st->n_files >= IOLOG_MAX_FILES)
        return trace_line_fail (error, "more than %u files added", IOLOG_MAX_FILES);
      /* fio keeps the first file of a name: a re-add names the same file. */
      file_index (st, name, TRUE);
      return TRACE_LINE_SKIP;
    }
  if (token_is (act, "open") || token_is (act, "close"))
    {
      if (file_index (st, name, FALSE) == 0)
        return trace_line_fail (error, "'%.*s' of file '%.*s', which was never added",
                     (int) act->len, act->p, (int) name->len, name->p);
      return TRACE_LINE_SKIP;
    }
  return trace_line_fail (error, "unknown file action '%.*s' (expected add, open or close)",
               (int) MIN (act->len, 64), act->p);
}

static gboolean
io_rwbs (const IologToken *act, guint32 *rwbs)
{
  if (token_is (act, "read"))
    *rwbs = TRACE_RWBS_READ;
  else if (token_is (act, "write"))
    *rwbs = TRACE_RWBS_WRITE;
  else if (token_is (act, "trim"))
    *rwbs = TRACE_RWBS_DISCARD;
  else if (token_is (act, "sync"))
    *rwbs = TRACE_RWBS_FLUSH;
  else if (token_is (act, "datasync"))
    *rwbs = TRACE_RWBS_FLUSH | TRACE_RWBS_SYNC;
  else
    return FALSE;
  return TRUE;
}

/* tok[0..3] = file action offset length (after the v3 time). */
static TraceLineResult
io_action (IologState *st, const IologToken *tok, gint64 time_ns, TraceRecord *out, GError **error)
{
  guint64 offset, length;
  guint index;

  if (tok[2].p[0] == '-')
    return trace_line_fail (error, "the offset '%.*s' is negative", (int) MIN (tok[2].len, 64), tok[2].p);
  if (!token_u64 (&tok[2], &offset))
    return trace_line_fail (error, "the offset '%.*s' is not a byte count", (int) MIN (tok[2].len, 64), tok[2].p);
  if (tok[3].p[0] == '-')
    return trace_line_fail (error, "the length '%.*s' is negative", (int) MIN (tok[3].len, 64), tok[3].p);
  if (!token_u64 (&tok[3], &length) || length > G_MAXUINT32)
    return trace_line_fail (error, "the length '%.*s' is not a byte count below 4 GiB (fio reads 32 bits)",
                 (int) MIN (tok[3].len, 64), tok[3].p);
  if (token_is (&tok[1], "wait"))
    {
      if (st->version == 3)
        return TRACE_LINE_SKIP;   /* fio: "ignoring wait command with version 3" */
      if (offset > (guint64) G_MAXINT64 / 1000000)
        return trace_line_fail (error, "wait deadline out of range");
      st->wait_ns = MAX (st->wait_ns, (gint64) offset * 1000000);
      return TRACE_LINE_SKIP;
    }
  if (!io_rwbs (&tok[1], &out->rwbs))
    return trace_line_fail (error, "unknown I/O action '%.*s' (expected read, write, trim, sync, datasync%s)",
                 (int) MIN (tok[1].len, 64), tok[1].p, st->version == 2 ? " or wait" : "");
  index = file_index (st, &tok[0], FALSE);
  if (index == 0)
    return trace_line_fail (error, "I/O on file '%.*s', which was never added",
                 (int) MIN (tok[0].len, 256), tok[0].p);
  if (!trace_record_set_bytes (out, offset, length))
    return trace_line_fail (error, "offset %" G_GUINT64_FORMAT " + length %" G_GUINT64_FORMAT
                            " ends beyond the 64-bit byte range", offset, length);
  out->action = TRACE_ACT_QUEUE;
  out->time_ns = time_ns;
  out->dev_major = 0;
  out->dev_minor = index - 1;
  return TRACE_LINE_RECORD;
}

static TraceLineResult
iolog_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  IologState *st = state;
  IologToken tok[IOLOG_MAX_TOKENS];
  guint n;

  if (st->version == 0)
    return parse_version (st, line, error);

  n = split_tokens (line, len, tok, IOLOG_MAX_TOKENS - 1);
  if (st->version == 2)
    {
      if (n == 2)
        return file_action (st, &tok[0], &tok[1], error);
      if (n == 4)
        return io_action (st, tok, st->wait_ns, out, error);
      return trace_line_fail (error, "expected 2 fields (file action) or 4 (file action offset length), found %s%u",
                   n > IOLOG_MAX_TOKENS - 1 ? "more than " : "", MIN (n, IOLOG_MAX_TOKENS - 1));
    }

  if (n == 3 || n == 5)
    {
      guint64 usec;
      if (!token_u64 (&tok[0], &usec) || usec > (guint64) G_MAXINT64 / 1000)
        return trace_line_fail (error, "the time '%.*s' is not a count of microseconds",
                     (int) MIN (tok[0].len, 64), tok[0].p);
      if (n == 3)
        return file_action (st, &tok[1], &tok[2], error);
      return io_action (st, tok + 1, (gint64) usec * 1000, out, error);
    }
  return trace_line_fail (error, "expected 3 fields (time file action) or 5 (time file action offset length), found %s%u",
               n > IOLOG_MAX_TOKENS - 1 ? "more than " : "", MIN (n, IOLOG_MAX_TOKENS - 1));
}

static int
iolog_probe (const char *head, gsize len, const char *path)
{
  const char *p = head;
  const char *end = head + len;

  /* The version line comes first; the core skips '#' and blank lines. */
  while (p < end && (*p == '#' || *p == '\n' || *p == '\r'))
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      p = nl != NULL ? nl + 1 : end;
    }
  if (p < end && g_str_has_prefix (p, "fio version "))
    return 100;
  return g_str_has_suffix (path, ".iolog") || g_str_has_suffix (path, ".iolog.gz") ? 40 : 0;
}

const TraceFormatOps trace_fio_iolog_ops = {
  .name = "fio-iolog",
  .probe = iolog_probe,
  .issue_only = TRUE,
  .state_size = sizeof (IologState),
  .parse_line = iolog_parse_line,
  .attach = iolog_attach,
  .clear_state = iolog_clear,
};

/* ---- Writer ------------------------------------------------------------- */

/* fio reads the length with "%u": the longest whole-sector length. */
#define IOLOG_MAX_CHUNK (G_MAXUINT32 & ~(guint64) 511)

typedef struct {
  char    *name;
  gboolean opened;
} IologFile;

struct _TraceIologWriter {
  TraceAction  action;
  gboolean     single;
  GHashTable  *names;        /* dev key -> name (set_file) */
  GHashTable  *by_dev;       /* dev key -> index + 1 into files */
  GPtrArray   *files;        /* IologFile, in order of first use */
  const TraceReader *reader; /* names devices 0,N after its "file.N" */
  gboolean     header_done;
  gboolean     started;
  gint64       t0_ns;
  guint64      last_us;
  TraceIologWriterStats stats;
};

static void
iolog_file_free (gpointer p)
{
  IologFile *f = p;

  g_free (f->name);
  g_free (f);
}

static gboolean
check_name (const char *name, GError **error)
{
  if (name == NULL || name[0] == '\0')
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED, "an iolog file name may not be empty");
      return FALSE;
    }
  for (const char *p = name; *p != '\0'; p++)
    if (g_ascii_isspace (*p))
      {
        g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED,
                     "iolog file name '%s' holds white space, which fio cannot read back", name);
        return FALSE;
      }
  return TRUE;
}

static guint64
dev_key (guint32 major, guint32 minor)
{
  return ((guint64) major << 32) | minor;
}

TraceIologWriter *
trace_iolog_writer_new (TraceAction io_action, const char *single_file, GError **error)
{
  TraceIologWriter *w;

  g_return_val_if_fail (io_action < TRACE_ACT_N_ACTIONS, NULL);
  if (single_file != NULL && !check_name (single_file, error))
    return NULL;
  w = g_new0 (TraceIologWriter, 1);
  w->action = io_action;
  w->names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  w->by_dev = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  w->files = g_ptr_array_new_with_free_func (iolog_file_free);
  if (single_file != NULL)
    {
      IologFile *f = g_new0 (IologFile, 1);
      f->name = g_strdup (single_file);
      g_ptr_array_add (w->files, f);
      w->single = TRUE;
    }
  return w;
}

void
trace_iolog_writer_free (TraceIologWriter *w)
{
  if (w == NULL)
    return;
  g_hash_table_unref (w->names);
  g_hash_table_unref (w->by_dev);
  g_ptr_array_unref (w->files);
  g_free (w);
}

gboolean
trace_iolog_writer_set_file (TraceIologWriter *w, guint32 dev_major, guint32 dev_minor,
                             const char *name, GError **error)
{
  gint64 *key;

  g_return_val_if_fail (w != NULL, FALSE);
  if (!check_name (name, error))
    return FALSE;
  key = g_new (gint64, 1);
  *key = (gint64) dev_key (dev_major, dev_minor);
  g_hash_table_replace (w->names, key, g_strdup (name));
  return TRUE;
}

void
trace_iolog_writer_names_from_reader (TraceIologWriter *w, const TraceReader *reader)
{
  g_return_if_fail (w != NULL);
  w->reader = reader;
}

const TraceIologWriterStats *
trace_iolog_writer_stats (const TraceIologWriter *w)
{
  return &w->stats;
}

static void
write_header (TraceIologWriter *w, GString *out)
{
  if (w->header_done)
    return;
  g_string_append (out, "fio version 3 iolog\n");
  w->header_done = TRUE;
}

static IologFile *
file_for (TraceIologWriter *w, const TraceRecord *rec)
{
  gint64 key = (gint64) dev_key (rec->dev_major, rec->dev_minor);
  gpointer idx;
  IologFile *f;
  gint64 *k;
  const char *name;

  if (w->single)
    return w->files->pdata[0];
  idx = g_hash_table_lookup (w->by_dev, &key);
  if (idx != NULL)
    return w->files->pdata[GPOINTER_TO_UINT (idx) - 1];
  name = g_hash_table_lookup (w->names, &key);
  if (name == NULL && w->reader != NULL && rec->dev_major == 0)
    {
      char meta_key[32];
      g_snprintf (meta_key, sizeof meta_key, "file.%u", rec->dev_minor);
      name = trace_reader_meta (w->reader, meta_key);
      if (name != NULL && !check_name (name, NULL))
        name = NULL;
    }
  f = g_new0 (IologFile, 1);
  f->name = name != NULL ? g_strdup (name)
                         : g_strdup_printf ("/dev/block/%u:%u", rec->dev_major, rec->dev_minor);
  g_ptr_array_add (w->files, f);
  k = g_new (gint64, 1);
  *k = key;
  g_hash_table_insert (w->by_dev, k, GUINT_TO_POINTER (w->files->len));
  w->stats.files = w->files->len;
  return f;
}

/* µs since the first I/O, from 1, never decreasing. */
static guint64
record_usec (TraceIologWriter *w, gint64 time_ns)
{
  guint64 us;

  if (!w->started)
    {
      w->started = TRUE;
      w->t0_ns = time_ns;
      w->last_us = 1;
    }
  if (time_ns < w->t0_ns)
    us = 0;
  else
    us = 1 + (guint64) (time_ns - w->t0_ns) / 1000;
  if (us < w->last_us)
    {
      w->stats.clamped++;
      us = w->last_us;
    }
  w->last_us = us;
  return us;
}

static const char *
op_word (guint32 rwbs)
{
  if (rwbs & TRACE_RWBS_DISCARD)
    return "trim";
  if (rwbs & TRACE_RWBS_WRITE)
    return "write";
  if (rwbs & TRACE_RWBS_READ)
    return "read";
  if (rwbs & TRACE_RWBS_FLUSH)
    return (rwbs & TRACE_RWBS_SYNC) ? "datasync" : "sync";
  return NULL;
}

static void
count_io (TraceIologWriter *w, const char *op, guint64 bytes)
{
  w->stats.ios++;
  switch (op[0])
    {
    case 'r': w->stats.reads++; w->stats.read_bytes += bytes; break;
    case 'w': w->stats.writes++; w->stats.write_bytes += bytes; break;
    case 't': w->stats.trims++; w->stats.trim_bytes += bytes; break;
    default: w->stats.syncs++; break;
    }
}

void
trace_iolog_writer_add (TraceIologWriter *w, const TraceRecord *rec, GString *out)
{
  const char *op;
  IologFile *f;
  guint64 us, offset, length;

  g_return_if_fail (w != NULL && rec != NULL && out != NULL);
  if (rec->action != w->action)
    return;
  op = op_word (rec->rwbs);
  if (op == NULL)
    {
      w->stats.not_io++;
      return;
    }
  write_header (w, out);
  us = record_usec (w, rec->time_ns);
  f = file_for (w, rec);
  if (!f->opened)
    {
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " %s add\n", us, f->name);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " %s open\n", us, f->name);
      f->opened = TRUE;
      w->stats.files = w->files->len;
    }

  if (op[0] == 's' || op[0] == 'd')
    {
      /* fio writes "sync <offset> 0"; a flush has no meaningful offset. */
      offset = rec->sector == G_MAXUINT64 ? 0 : trace_record_offset_bytes (rec);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " %s %s %" G_GUINT64_FORMAT " 0\n",
                              us, f->name, op, offset);
      count_io (w, op, 0);
      return;
    }

  offset = trace_record_offset_bytes (rec);
  length = trace_record_length_bytes (rec);
  if (length > IOLOG_MAX_CHUNK)
    w->stats.split++;
  do
    {
      guint64 chunk = MIN (length, IOLOG_MAX_CHUNK);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " %s %s %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                              us, f->name, op, offset, chunk);
      count_io (w, op, chunk);
      offset += chunk;
      length -= chunk;
    }
  while (length > 0);
}

void
trace_iolog_writer_finish (TraceIologWriter *w, GString *out)
{
  g_return_if_fail (w != NULL && out != NULL);
  write_header (w, out);
  for (guint i = 0; i < w->files->len; i++)
    {
      IologFile *f = w->files->pdata[i];
      if (!f->opened)
        continue;
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " %s close\n", w->last_us, f->name);
      f->opened = FALSE;
    }
}
