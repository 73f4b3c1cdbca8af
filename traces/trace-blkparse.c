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
  GString *message;         /* the last message record's whole text */
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
  /* Kept as read: wider than the kernel's 32 bits is not from blktrace. */
  rec->sequence = (guint32) MIN (seq, (guint64) G_MAXUINT32);
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

/* A message's text runs to the end of the line; the record's comm keeps
 * only TRACE_COMM_MAX - 1 bytes of it, trace_reader_message all. */
static gboolean
keep_message (BlkparseState *st, const TraceCursor *header_end, const TraceRecord *rec)
{
  TraceCursor c = *header_end;

  if (rec->action != TRACE_ACT_MESSAGE)
    return TRUE;
  trace_cursor_skip_ws (&c);
  if (st->message == NULL)
    st->message = g_string_new (NULL);
  g_string_truncate (st->message, 0);
  g_string_append_len (st->message, c.p, (gssize) (c.end - c.p));
  return TRUE;
}

static const char *
blkparse_message (gpointer state)
{
  BlkparseState *st = state;
  return st->message != NULL ? st->message->str : NULL;
}

static void
blkparse_clear_state (gpointer state)
{
  BlkparseState *st = state;
  if (st->message != NULL)
    g_string_free (st->message, TRUE);
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
  if (!parse_header (&c, out, &local) || !keep_message (st, &c, out)
      || !trace_parse_blk_tail (&c, out, &local))
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
  .message = blkparse_message,
  .clear_state = blkparse_clear_state,
};

/* ---- Writer: blkparse's output formats ------------------------------------
 *
 * blkparse 1.2.0 (blkparse_fmt.c, doc/blkparse.1): without -f/-F every
 * action gets the default layout, HEADER "%D %2c %8s %5T.%9t %5p %2a %3d "
 * and a tail per action (process_default); -f FMT replaces the layout of
 * every action, -F A,FMT of one ("U" covers U and UT).  Message lines keep
 * their own layout whatever the format: blkparse prints them from
 * handle_notify, with sequence "0", pid 0 and RWBS "N".
 */

#define FORMAT_ACTIONS "ABCDFGIMPQRSTUWX"   /* what -F accepts, as blkparse */

struct _TraceBlkparseFormat {
  char *spec[128];          /* per action letter; NULL: the default layout */
};

TraceBlkparseFormat *
trace_blkparse_format_new (void)
{
  return g_new0 (TraceBlkparseFormat, 1);
}

void
trace_blkparse_format_free (TraceBlkparseFormat *f)
{
  if (f == NULL)
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (f->spec); i++)
    g_free (f->spec[i]);
  g_free (f);
}

/* A specifier's optional '-' and width, then its letter. */
typedef struct {
  gboolean left;
  gboolean has_width;
  guint    width;
  char     field;
} FormatField;

static const char *
scan_field (const char *p, FormatField *ff)
{
  memset (ff, 0, sizeof *ff);
  if (*p == '-')
    {
      ff->left = TRUE;
      p++;
    }
  while (g_ascii_isdigit (*p))
    {
      ff->has_width = TRUE;
      ff->width = MIN (ff->width * 10 + (guint) (*p - '0'), 4096u);
      p++;
    }
  ff->field = *p;
  return *p != '\0' ? p + 1 : p;
}

/* Refuse what blkparse would refuse (bad escapes) and what iosim cannot
 * print: %u needs blkparse -t's per-I/O elapsed times, %z the wall clock. */
static gboolean
check_spec (const char *spec, GError **error)
{
  for (const char *p = spec; *p != '\0';)
    {
      if (*p == '\\')
        {
          if (p[1] == '\0' || strchr ("bnrt", p[1]) == NULL)
            {
              g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED,
                           "format '%s': invalid escape '\\%c' (known: \\b \\n \\r \\t)", spec,
                           p[1] != '\0' ? p[1] : ' ');
              return FALSE;
            }
          p += 2;
          continue;
        }
      if (*p++ != '%' || *p == '%' || *p == '\0')
        {
          if (*p == '%')
            p++;
          continue;
        }
      FormatField ff;
      p = scan_field (p, &ff);
      if (ff.field == 'u' || ff.field == 'z')
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED,
                       "format '%s': %%%c is not supported (%s)", spec, ff.field,
                       ff.field == 'u' ? "blkparse -t's elapsed times are not tracked"
                                       : "wall-clock times are not printed");
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
trace_blkparse_format_set (TraceBlkparseFormat *f, char action, const char *spec, GError **error)
{
  g_return_val_if_fail (f != NULL && spec != NULL, FALSE);
  if (action != '\0' && strchr (FORMAT_ACTIONS, action) == NULL)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED,
                   "no format for action '%c' (blkparse -F takes one of %s)", action, FORMAT_ACTIONS);
      return FALSE;
    }
  if (!check_spec (spec, error))
    return FALSE;
  if (action != '\0')
    {
      g_free (f->spec[(guchar) action]);
      f->spec[(guchar) action] = g_strdup (spec);
      return TRUE;
    }
  /* -f: every action not already given its own with -F. */
  for (const char *a = FORMAT_ACTIONS; *a != '\0'; a++)
    if (f->spec[(guchar) *a] == NULL)
      f->spec[(guchar) *a] = g_strdup (spec);
  return TRUE;
}

/* blkparse prints a missing process name through printf's "%s" of NULL. */
static const char *
comm_or_null (const TraceRecord *rec)
{
  return rec->comm[0] != '\0' ? rec->comm : "(null)";
}

/* The 8-byte payload blkparse reads as an integer (%U): a U/UT's count,
 * an X's second sector (truncated to 32 bits as blkparse prints it). */
static guint32
payload_int (const TraceRecord *rec)
{
  switch (rec->action)
    {
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      return rec->unplug_count;
    case TRACE_ACT_SPLIT:
      return (guint32) rec->new_sector;
    default:
      return 0;
    }
}

static void
append_padded (GString *out, const FormatField *ff, const char *text)
{
  if (!ff->has_width)
    g_string_append (out, text);
  else if (ff->left)
    g_string_append_printf (out, "%-*s", (int) ff->width, text);
  else
    g_string_append_printf (out, "%*s", (int) ff->width, text);
}

static void
append_field (GString *out, const FormatField *ff, const TraceRecord *rec, guint32 sequence)
{
  char num[48];
  char rwbs[8];
  gint64 t = MAX (rec->time_ns, 0);

  switch (ff->field)
    {
    case 'a': append_padded (out, ff, trace_action_letters (rec->action)); return;
    case 'c': g_snprintf (num, sizeof num, "%d", MAX (rec->cpu, 0)); break;
    case 'C': append_padded (out, ff, comm_or_null (rec)); return;
    case 'd':
      trace_rwbs_format (rec->rwbs, rwbs);
      append_padded (out, ff, rwbs);
      return;
    case 'D':   /* width ignored, as blkparse */
      g_string_append_printf (out, "%3u,%-3u", rec->dev_major, rec->dev_minor);
      return;
    case 'e': g_snprintf (num, sizeof num, "%d", rec->error); break;
    case 'g':
      g_snprintf (num, sizeof num, "%x,%x", (guint32) rec->cgroup_id, (guint32) (rec->cgroup_id >> 32));
      break;
    case 'M': g_snprintf (num, sizeof num, "%u", rec->dev_major); break;
    case 'm': g_snprintf (num, sizeof num, "%u", rec->dev_minor); break;
    case 'n': g_snprintf (num, sizeof num, "%u", rec->nr_sectors); break;
    case 'N': g_snprintf (num, sizeof num, "%u", (guint32) ((guint64) rec->nr_sectors << 9)); break;
    case 'p': g_snprintf (num, sizeof num, "%u", rec->pid); break;
    case 'P': return;   /* only SCSI passthrough requests carry one; not kept */
    case 's': g_snprintf (num, sizeof num, "%u", sequence); break;
    case 'S': g_snprintf (num, sizeof num, "%" G_GUINT64_FORMAT, rec->sector); break;
    case 't':   /* zero-padded, 9 digits unless a width says otherwise */
      g_string_append_printf (out, "%0*" G_GINT64_FORMAT, ff->has_width ? (int) ff->width : 9,
                              t % 1000000000);
      return;
    case 'T': g_snprintf (num, sizeof num, "%" G_GINT64_FORMAT, t / 1000000000); break;
    case 'U': g_snprintf (num, sizeof num, "%u", payload_int (rec)); break;
    default:   /* an unknown letter prints itself, as blkparse */
      num[0] = ff->field;
      num[1] = '\0';
      break;
    }
  append_padded (out, ff, num);
}

static void
append_spec (GString *out, const char *spec, const TraceRecord *rec, guint32 sequence)
{
  for (const char *p = spec; *p != '\0';)
    {
      if (*p == '\\')
        {
          static const char from[] = "bnrt", to[] = "\b\n\r\t";
          g_assert (p[1] != '\0' && strchr (from, p[1]) != NULL);   /* check_spec */
          g_string_append_c (out, to[strchr (from, p[1]) - from]);
          p += 2;
        }
      else if (*p != '%')
        g_string_append_c (out, *p++);
      else if (p[1] == '%' || p[1] == '\0')
        {
          g_string_append_c (out, '%');
          p += p[1] == '%' ? 2 : 1;
        }
      else
        {
          FormatField ff;
          p = scan_field (p + 1, &ff);
          append_field (out, &ff, rec, sequence);
        }
    }
}

/* process_default leaves out "sector + 0" where a request carries no
 * data (an empty flush): a completion prints "sector [error]", the
 * request actions "[name]"; other tails have no such case. */
typedef enum { NO_DATA_SAME, NO_DATA_COMPLETION, NO_DATA_NAME } NoDataTail;

static NoDataTail
no_data_tail (const TraceRecord *rec)
{
  if (rec->nr_sectors != 0)
    return NO_DATA_SAME;
  switch (rec->action)
    {
    case TRACE_ACT_COMPLETE:
    case TRACE_ACT_REQUEUE:
      return NO_DATA_COMPLETION;
    case TRACE_ACT_QUEUE:
    case TRACE_ACT_ISSUE:
    case TRACE_ACT_INSERT:
    case TRACE_ACT_BOUNCE:
    case TRACE_ACT_BACKMERGE:
    case TRACE_ACT_FRONTMERGE:
    case TRACE_ACT_GETRQ:
    case TRACE_ACT_SLEEPRQ:
      return NO_DATA_NAME;
    default:
      return NO_DATA_SAME;
    }
}

void
trace_blkparse_format_append (const TraceBlkparseFormat *f, const TraceRecord *rec,
                              guint32 sequence, const char *message, GString *out)
{
  const char *letters = trace_action_letters (rec->action);
  const char *spec = f != NULL ? f->spec[(guchar) letters[0]] : NULL;

  g_return_if_fail (rec->action < TRACE_ACT_N_ACTIONS);
  if (rec->action == TRACE_ACT_MESSAGE)
    {
      gint64 t = MAX (rec->time_ns, 0);
      g_string_append_printf (out, "%3u,%-3u %2d %8s %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                              " %5u %2s %3s %s\n", rec->dev_major, rec->dev_minor,
                              MAX (rec->cpu, 0), "0", t / 1000000000, t % 1000000000, 0u, "m", "N",
                              message != NULL ? message : rec->comm);
      return;
    }
  /* iosim's own letters (AB, DD, ZP, ZU) have no -F slot: default layout. */
  if (spec != NULL && rec->action < TRACE_ACT_ABORT)
    append_spec (out, spec, rec, sequence);
  else if (no_data_tail (rec) != NO_DATA_SAME)
    {
      append_spec (out, "%D %2c %8s %5T.%9t %5p %2a %3d ", rec, sequence);
      if (no_data_tail (rec) == NO_DATA_COMPLETION)
        g_string_append_printf (out, "%" G_GUINT64_FORMAT " [%d]\n", rec->sector, rec->error);
      else
        g_string_append_printf (out, "[%s]\n", comm_or_null (rec));
    }
  else
    trace_format_blkparse (rec, sequence, out);
}
