/* trace-blkparse.c — blkparse default text output (blkparse 1.2.0,
 * HEADER "%D %2c %8s %5T.%9t %5p %2a %3d " and the tails of
 * process_default(); shared/reference/trace-formats.md §1.6), including the
 * "-t" variants with "(ns)" fields, "m N" messages, "[(null)]" names and the
 * statistics block at the end, which is skipped and counted.
 *
 * The action tails are shared with the ftrace blk tracer (§1.7), which
 * prints them with the same code in kernel/trace/blktrace.c.
 */
#include "traces/trace-private.h"

#include <string.h>

typedef struct {
  gboolean in_statistics;   /* past the first line of the statistics block */
} BlkparseState;

static gboolean
fail (GError **error, const char *what)
{
  g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s", what);
  return FALSE;
}

static gboolean
peek (TraceCursor *c, char ch)
{
  trace_cursor_skip_ws (c);
  return c->p < c->end && *c->p == ch;
}

static gboolean
parse_comm (TraceCursor *c, TraceRecord *rec, GError **error)
{
  const char *text;
  gsize len;

  if (!trace_cursor_bracket (c, c->end, &text, &len))
    return fail (error, "expected [command] field");
  /* blkparse prints "(null)" for a pid whose name it never saw. */
  if (len == 6 && memcmp (text, "(null)", 6) == 0)
    len = 0;
  trace_record_set_comm (rec, text, len);
  return TRUE;
}

static gboolean
parse_error_field (TraceCursor *c, TraceRecord *rec, GError **error)
{
  const char *text;
  gsize len;
  TraceCursor inner;

  if (!trace_cursor_bracket (c, c->end, &text, &len))
    return fail (error, "expected [error] field");
  trace_cursor_init (&inner, text, len);
  if (!trace_cursor_i32 (&inner, &rec->error) || !trace_cursor_at_end (&inner))
    return fail (error, "the [error] field of a completion is not a number");
  return TRUE;
}

static gboolean
parse_tail_end (TraceCursor *c, GError **error)
{
  if (!trace_cursor_at_end (c))
    return fail (error, "unexpected text after the record");
  return TRUE;
}

static gboolean
parse_generic_tail (TraceCursor *c, TraceRecord *rec, GError **error)
{
  gboolean completion = rec->action == TRACE_ACT_COMPLETE || rec->action == TRACE_ACT_REQUEUE;

  if (!peek (c, '(') && !peek (c, '['))
    {
      guint64 first;

      if (!trace_cursor_u64 (c, &first))
        return fail (error, "expected a sector number");
      if (trace_cursor_char (c, '+'))
        {
          rec->sector = first;
          if (!trace_cursor_u32 (c, &rec->nr_sectors))
            return fail (error, "expected a sector count after '+'");
        }
      else if (peek (c, '('))
        {
          /* Passthrough request: "bytes (cdb) [comm]". */
          rec->nr_sectors = (guint32) MIN (first >> 9, (guint64) G_MAXUINT32);
        }
      else
        rec->sector = first;
    }
  /* PC payload and/or blkparse -t "(elapsed ns)". */
  while (peek (c, '('))
    if (!trace_cursor_skip_paren (c))
      return fail (error, "unterminated '(' group");
  if (completion)
    return parse_error_field (c, rec, error);
  return parse_comm (c, rec, error);
}

gboolean
trace_parse_blk_tail (TraceCursor *c, TraceRecord *rec, GError **error)
{
  switch (rec->action)
    {
    case TRACE_ACT_MESSAGE:
      {
        const char *text = c->p;
        trace_cursor_skip_ws (c);
        text = c->p;
        trace_record_set_comm (rec, text, (gsize) (c->end - text));
        c->p = c->end;
        return TRUE;
      }

    case TRACE_ACT_PLUG:
      return parse_comm (c, rec, error) && parse_tail_end (c, error);

    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      {
        /* "[comm] count": the comm ends at the last ']' before the count. */
        const char *text;
        gsize len;
        const char *close = c->end;
        while (close > c->p && close[-1] != ']')
          close--;
        if (!trace_cursor_bracket (c, close, &text, &len))
          return fail (error, "expected [command] field");
        if (len == 6 && memcmp (text, "(null)", 6) == 0)
          len = 0;
        trace_record_set_comm (rec, text, len);
        if (!trace_cursor_u32 (c, &rec->unplug_count))
          return fail (error, "expected the request count of an unplug");
        return parse_tail_end (c, error);
      }

    case TRACE_ACT_SPLIT:
      if (!trace_cursor_u64 (c, &rec->sector) || !trace_cursor_char (c, '/')
          || !trace_cursor_u64 (c, &rec->new_sector))
        return fail (error, "expected 'sector / new_sector' of a split");
      return parse_comm (c, rec, error) && parse_tail_end (c, error);

    case TRACE_ACT_REMAP:
      if (!trace_cursor_u64 (c, &rec->sector) || !trace_cursor_char (c, '+')
          || !trace_cursor_u32 (c, &rec->nr_sectors))
        return fail (error, "expected 'sector + count' of a remap");
      if (!trace_cursor_char (c, '<') || c->p >= c->end || *c->p != '-')
        return fail (error, "expected '<- (maj,min) sector' of a remap");
      c->p++;
      if (!trace_cursor_char (c, '(') || !trace_cursor_devno (c, &rec->from_major, &rec->from_minor)
          || !trace_cursor_char (c, ')') || !trace_cursor_u64 (c, &rec->from_sector))
        return fail (error, "expected '<- (maj,min) sector' of a remap");
      return TRUE;   /* block_rq_remap adds "len nr_bios": ignored */

    default:
      return parse_generic_tail (c, rec, error) && parse_tail_end (c, error);
    }
}

/* "maj,min cpu seq sec.nsec pid ACT RWBS": everything before the tail. */
static gboolean
parse_header (TraceCursor *c, TraceRecord *rec, GError **error)
{
  guint32 cpu;
  guint64 seq;
  const char *w;
  gsize wlen;
  char rwbs[16];

  if (!trace_cursor_devno (c, &rec->dev_major, &rec->dev_minor))
    return fail (error, "expected 'major,minor' device");
  if (!trace_cursor_u32 (c, &cpu) || cpu > G_MAXINT32)
    return fail (error, "expected a CPU number");
  rec->cpu = (gint32) cpu;
  if (!trace_cursor_u64 (c, &seq))
    return fail (error, "expected a sequence number");
  if (!trace_cursor_time_ns (c, &rec->time_ns))
    return fail (error, "expected a time 'seconds.nanoseconds'");
  if (!trace_cursor_u32 (c, &rec->pid))
    return fail (error, "expected a pid");
  if (!trace_cursor_word (c, &w, &wlen))
    return fail (error, "expected an action");
  if (wlen > 2 || !trace_action_parse_word (w, wlen, &rec->action))
    return fail (error, "unknown action");
  if (!trace_cursor_word (c, &w, &wlen) || wlen >= sizeof rwbs)
    return fail (error, "expected an RWBS field");
  memcpy (rwbs, w, wlen);
  rwbs[wlen] = '\0';
  if (!trace_rwbs_parse (rwbs, &rec->rwbs))
    return fail (error, "malformed RWBS field");
  return TRUE;
}

static gboolean
starts_with_devno (const char *line, gsize len)
{
  TraceCursor c;
  guint32 a, b;

  trace_cursor_init (&c, line, len);
  return trace_cursor_devno (&c, &a, &b);
}

/* The statistics block (per-process, per-CPU, totals) and blkparse's
 * "Input file ... added" notes. */
static gboolean
starts_statistics (const char *line)
{
  static const char *const starts[] = {
    "CPU", "Total (", "Throughput", "Events (", "Skips:", "Input file ",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (starts); i++)
    if (g_str_has_prefix (line, starts[i]))
      return TRUE;
  return FALSE;
}

static TraceLineResult
blkparse_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  BlkparseState *st = state;
  TraceCursor c;
  GError *local = NULL;

  if (!starts_with_devno (line, len))
    {
      if (st->in_statistics || starts_statistics (line))
        {
          if (!g_str_has_prefix (line, "Input file "))
            st->in_statistics = TRUE;
          return TRACE_LINE_SKIP;
        }
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "not a blkparse record (expected 'major,minor cpu sequence time pid action rwbs ...')");
      return TRACE_LINE_ERROR;
    }

  trace_cursor_init (&c, line, len);
  if (!parse_header (&c, out, &local) || !trace_parse_blk_tail (&c, out, &local))
    {
      /* Inside the statistics block nothing is a record; keep going. */
      if (st->in_statistics)
        {
          g_clear_error (&local);
          return TRACE_LINE_SKIP;
        }
      g_propagate_error (error, local);
      return TRACE_LINE_ERROR;
    }
  return TRACE_LINE_RECORD;
}

static gboolean
has_suffix_any (const char *path, const char *const *suffixes)
{
  for (; *suffixes != NULL; suffixes++)
    if (g_str_has_suffix (path, *suffixes))
      return TRUE;
  return FALSE;
}

static int
blkparse_probe (const char *head, gsize len, const char *path)
{
  static const char *const exts[] = {
    ".blkparse", ".blkparse.gz", ".blkparse.txt", ".blkparse.txt.gz", NULL
  };
  const char *p = head;
  const char *end = head + len;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *eol = nl != NULL ? nl : end;
      gsize n = (gsize) (eol - p);
      TraceCursor c;
      TraceRecord rec;

      trace_cursor_init (&c, p, n);
      if (n > 0 && *p != '#' && !trace_cursor_at_end (&c) && !g_str_has_prefix (p, "Input file "))
        {
          guint32 a, b, cpu;
          guint64 seq;
          trace_cursor_init (&c, p, n);
          memset (&rec, 0, sizeof rec);
          if (parse_header (&c, &rec, NULL))
            return 90;
          /* A damaged first record still looks like "maj,min cpu seq". */
          trace_cursor_init (&c, p, n);
          if (!trace_cursor_devno (&c, &a, &b) || !trace_cursor_u32 (&c, &cpu)
              || !trace_cursor_u64 (&c, &seq))
            return 0;
          trace_cursor_skip_ws (&c);
          return c.p < c.end && g_ascii_isdigit (*c.p) ? 60 : 0;
        }
      p = eol + 1;
    }
  return has_suffix_any (path, exts) ? 50 : 0;
}

const TraceFormatOps trace_blkparse_ops = {
  .name = "blkparse",
  .time_per_cpu = TRUE,
  .probe = blkparse_probe,
  .state_size = sizeof (BlkparseState),
  .parse_line = blkparse_parse_line,
};
