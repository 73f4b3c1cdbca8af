/* trace-csv.c — iosim's own CSV of TraceRecords: the writer
 * (trace_csv_header, trace_format_csv) and the "iosim-csv" reader.
 *
 * One header row, then one row per record (RFC 4180):
 *   time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,
 *   offset_bytes,length_bytes,error,io_tag,comm
 * The fields are blkparse's (action letters and RWBS as blkparse prints
 * them, cpu -1 when unknown) plus the byte extent, which is exact for
 * sources that count bytes (fio iologs, the published CSV traces) and
 * sector * 512 otherwise, and the io_tag that pairs a D with its C (0
 * where sectors do); comm is quoted when it holds a comma or a quote.
 * The reader gives back every field the writer wrote (a message's whole
 * text through trace_reader_message); a record whose extent is whole
 * sectors reads back as a sector-counted one.
 */
#include "traces/trace-private.h"

#include <string.h>

#define IOSIM_CSV_HEADER \
  "time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,offset_bytes,length_bytes,error,io_tag,comm"
#define IOSIM_CSV_FIELDS 14

void
trace_csv_header (GString *out)
{
  g_string_append (out, IOSIM_CSV_HEADER "\n");
}

void
trace_csv_field (GString *out, const char *s)
{
  if (strpbrk (s, ",\"\r\n") == NULL)
    {
      g_string_append (out, s);
      return;
    }
  g_string_append_c (out, '"');
  for (; *s != '\0'; s++)
    {
      if (*s == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *s);
    }
  g_string_append_c (out, '"');
}

void
trace_format_csv (const TraceRecord *rec, GString *out)
{
  trace_format_csv_text (rec, rec->comm, out);
}

void
trace_format_csv_text (const TraceRecord *rec, const char *comm, GString *out)
{
  char rwbs[8];

  g_return_if_fail (rec->action < TRACE_ACT_N_ACTIONS);
  trace_rwbs_format (rec->rwbs, rwbs);
  g_string_append_printf (out, "%" G_GINT64_FORMAT ",%u,%u,%d,%u,%s,%s,%" G_GUINT64_FORMAT ",%u,%"
                          G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%" G_GUINT64_FORMAT ",",
                          rec->time_ns, rec->dev_major, rec->dev_minor, rec->cpu, rec->pid,
                          trace_action_letters (rec->action), rwbs, rec->sector, rec->nr_sectors,
                          trace_record_offset_bytes (rec), trace_record_length_bytes (rec), rec->error,
                          rec->io_tag);
  trace_csv_field (out, comm);
  g_string_append_c (out, '\n');
}

/* ---- Reader -------------------------------------------------------------- */

/* The reader's state: a message row's comm column holds the whole text
 * (trace cat --csv writes trace_reader_message there); the record's comm
 * keeps only TRACE_COMM_MAX - 1 bytes of it, trace_reader_message all. */
typedef struct {
  GString *message;
} IosimCsvState;

typedef struct {
  const char *p;
  gsize       len;
} CsvField;

/* The first fields are plain; the last (comm) may be quoted. */
static gboolean
split_row (char *line, gsize len, CsvField *f, GError **error)
{
  char *p = line;
  char *end = line + len;

  for (guint i = 0; i < IOSIM_CSV_FIELDS - 1; i++)
    {
      char *comma = memchr (p, ',', (gsize) (end - p));
      if (comma == NULL)
        {
          trace_line_fail (error, "expected " G_STRINGIFY (IOSIM_CSV_FIELDS) " comma-separated fields (" IOSIM_CSV_HEADER ")");
          return FALSE;
        }
      f[i].p = p;
      f[i].len = (gsize) (comma - p);
      p = comma + 1;
    }
  if (p < end && *p == '"')
    {
      /* Unquote in place: "" is one quote. */
      char *w = p;
      char *r = p + 1;
      for (;;)
        {
          if (r >= end)
            {
              trace_line_fail (error, "unterminated quoted comm field");
              return FALSE;
            }
          if (*r == '"')
            {
              if (r + 1 < end && r[1] == '"')
                {
                  *w++ = '"';
                  r += 2;
                  continue;
                }
              r++;
              break;
            }
          *w++ = *r++;
        }
      if (r != end)
        {
          trace_line_fail (error, "text after the quoted comm field");
          return FALSE;
        }
      f[IOSIM_CSV_FIELDS - 1].p = p;
      f[IOSIM_CSV_FIELDS - 1].len = (gsize) (w - p);
      return TRUE;
    }
  if (memchr (p, ',', (gsize) (end - p)) != NULL || memchr (p, '"', (gsize) (end - p)) != NULL)
    {
      trace_line_fail (error, "more than " G_STRINGIFY (IOSIM_CSV_FIELDS) " fields, or a stray quote in comm");
      return FALSE;
    }
  f[IOSIM_CSV_FIELDS - 1].p = p;
  f[IOSIM_CSV_FIELDS - 1].len = (gsize) (end - p);
  return TRUE;
}

static gboolean
whole_u64 (const CsvField *f, guint64 *out)
{
  TraceCursor c;

  trace_cursor_init (&c, f->p, f->len);
  return f->len > 0 && g_ascii_isdigit (f->p[0]) && trace_cursor_u64 (&c, out) && c.p == c.end;
}

static gboolean
whole_u32 (const CsvField *f, guint32 *out)
{
  guint64 v;

  if (!whole_u64 (f, &v) || v > G_MAXUINT32)
    return FALSE;
  *out = (guint32) v;
  return TRUE;
}

static gboolean
whole_i32 (const CsvField *f, gint32 *out)
{
  TraceCursor c;

  trace_cursor_init (&c, f->p, f->len);
  return f->len > 0 && !g_ascii_isspace (f->p[0]) && trace_cursor_i32 (&c, out) && c.p == c.end;
}

static gboolean
whole_word (const CsvField *f, char *buf, gsize size)
{
  if (f->len == 0 || f->len >= size)
    return FALSE;
  memcpy (buf, f->p, f->len);
  buf[f->len] = '\0';
  return TRUE;
}

static TraceLineResult
iosim_csv_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  IosimCsvState *st = state;
  CsvField f[IOSIM_CSV_FIELDS];
  char word[16];
  guint64 time, offset, length;
  TraceCursor c;
  gboolean neg;

  if (g_str_has_prefix (line, "time_ns,"))
    return TRACE_LINE_SKIP;
  if (!split_row (line, len, f, error))
    return TRACE_LINE_ERROR;

  neg = f[0].len > 0 && f[0].p[0] == '-';
  trace_cursor_init (&c, f[0].p + neg, f[0].len - neg);
  if (!trace_cursor_u64 (&c, &time) || c.p != c.end || time > (guint64) G_MAXINT64)
    return trace_line_fail (error, "time_ns is not a number");
  out->time_ns = neg ? -(gint64) time : (gint64) time;
  if (!whole_u32 (&f[1], &out->dev_major) || !whole_u32 (&f[2], &out->dev_minor))
    return trace_line_fail (error, "dev_major/dev_minor are not numbers");
  if (!whole_i32 (&f[3], &out->cpu) || out->cpu < -1)
    return trace_line_fail (error, "cpu is not a number (-1 for unknown)");
  if (!whole_u32 (&f[4], &out->pid))
    return trace_line_fail (error, "pid is not a number");
  if (!whole_word (&f[5], word, sizeof word) || !trace_action_from_letters (word, &out->action))
    return trace_line_fail (error, "unknown action");
  if (!whole_word (&f[6], word, sizeof word) || !trace_rwbs_parse (word, &out->rwbs))
    return trace_line_fail (error, "malformed rwbs");
  if (!whole_u64 (&f[7], &out->sector) || !whole_u32 (&f[8], &out->nr_sectors))
    return trace_line_fail (error, "sector/nr_sectors are not numbers");
  if (!whole_u64 (&f[9], &offset) || !whole_u64 (&f[10], &length))
    return trace_line_fail (error, "offset_bytes/length_bytes are not numbers");
  if (!whole_i32 (&f[11], &out->error))
    return trace_line_fail (error, "error is not a number");
  if (!whole_u64 (&f[12], &out->io_tag))
    return trace_line_fail (error, "io_tag is not a number");
  trace_record_set_comm (out, f[13].p, f[13].len);
  if (out->action == TRACE_ACT_MESSAGE)
    {
      if (st->message == NULL)
        st->message = g_string_new (NULL);
      g_string_truncate (st->message, 0);
      g_string_append_len (st->message, f[13].p, (gssize) f[13].len);
    }

  /* A byte-exact extent differs from the sectors' own. */
  if (offset != trace_record_offset_bytes (out) || length != trace_record_length_bytes (out))
    {
      TraceRecord probe = *out;
      if (!trace_record_set_bytes (&probe, offset, length) || probe.sector != out->sector
          || probe.nr_sectors != out->nr_sectors)
        return trace_line_fail (error, "offset_bytes/length_bytes do not lie in sector/nr_sectors");
      out->head_bytes = probe.head_bytes;
      out->length_bytes = probe.length_bytes;
    }
  return TRACE_LINE_RECORD;
}

static const char *
iosim_csv_message (gpointer state)
{
  IosimCsvState *st = state;
  return st->message != NULL ? st->message->str : NULL;
}

static void
iosim_csv_clear_state (gpointer state)
{
  IosimCsvState *st = state;
  if (st->message != NULL)
    g_string_free (st->message, TRUE);
}

/* The last field is comm: a cut row either loses fields or shortens a
 * name, never changes an I/O. */
static gboolean
iosim_csv_last_line_whole (const char *line, gsize len)
{
  (void) line;
  (void) len;
  return TRUE;
}

static int
iosim_csv_probe (const char *head, gsize len, const char *path)
{
  const char *p = head;
  const char *end = head + len;

  (void) path;
  while (p < end && *p == '#')
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      p = nl != NULL ? nl + 1 : end;
    }
  return (gsize) (end - p) >= 8 && memcmp (p, "time_ns,", 8) == 0 ? 100 : 0;
}

const TraceFormatOps trace_iosim_csv_ops = {
  .name = "iosim-csv",
  .probe = iosim_csv_probe,
  .state_size = sizeof (IosimCsvState),
  .parse_line = iosim_csv_parse_line,
  .last_line_whole = iosim_csv_last_line_whole,
  .message = iosim_csv_message,
  .clear_state = iosim_csv_clear_state,
};
