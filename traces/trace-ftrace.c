/* trace-ftrace.c — ftrace text as tracefs prints it on Linux 6.x (checked
 * on 6.18): the "blk" tracer (kernel/trace/blktrace.c, §1.7 of
 * shared/reference/trace-formats.md, also its blk_classic, verbose and
 * blk_cgroup variants) and the block tracepoints (include/trace/events/
 * block.h, §1.8, with and without the ≥6.10 "class,hint,level" ioprio).
 *
 * The ftrace prefix is "comm-pid [(tgid)] [cpu] [flags] seconds.frac:";
 * comm may hold spaces and dashes, so the pid is split at the last '-'
 * before the " [cpu]" field; flags are 4 or 5 characters or absent
 * (trace-cmd report).  Timestamps "seconds.fraction" become nanoseconds
 * exactly; the counter and x86-tsc clocks print integers, kept as ticks.
 * A blk tracer message line (blk_log_msg: a scheduler's note) keeps its
 * whole text for trace_reader_message.
 */
#include "traces/trace-private.h"

#include <string.h>

static TraceLineResult
fail (GError **error, const char *what)
{
  g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s", what);
  return TRACE_LINE_ERROR;
}

static gboolean
fail_bool (GError **error, const char *what)
{
  g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE, "%s", what);
  return FALSE;
}

/* The " [ddd] " CPU field: first '[' preceded by a blank and followed by
 * digits and ']'. */
static const char *
find_cpu_field (const char *line, const char *end)
{
  for (const char *p = line + 1; p < end; p++)
    {
      const char *q;
      if (*p != '[' || (p[-1] != ' ' && p[-1] != '\t'))
        continue;
      q = p + 1;
      while (q < end && g_ascii_isdigit (*q))
        q++;
      if (q > p + 1 && q < end && *q == ']')
        return p;
    }
  return NULL;
}

/* Parse the ftrace prefix up to and including "timestamp:". */
static gboolean
parse_prefix (TraceCursor *c, TraceRecord *rec, GError **error)
{
  const char *line = c->p;
  const char *bracket = find_cpu_field (line, c->end);
  const char *left_end;
  const char *dash;
  const char *comm_start;
  guint32 cpu;
  const char *w;
  gsize wlen;
  TraceCursor pc;

  if (bracket == NULL)
    return fail_bool (error, "expected an ftrace line 'comm-pid [cpu] flags time: ...'");

  left_end = bracket;
  while (left_end > line && (left_end[-1] == ' ' || left_end[-1] == '\t'))
    left_end--;
  /* record-tgid: "comm-pid (  tgid) [cpu]" */
  if (left_end > line && left_end[-1] == ')')
    {
      const char *open = left_end - 1;
      while (open > line && *open != '(')
        open--;
      if (*open != '(')
        return fail_bool (error, "unbalanced '(tgid)' field");
      left_end = open;
      while (left_end > line && (left_end[-1] == ' ' || left_end[-1] == '\t'))
        left_end--;
    }
  dash = left_end;
  while (dash > line && dash[-1] != '-')
    dash--;
  if (dash == line)
    return fail_bool (error, "expected 'comm-pid' before the [cpu] field");
  trace_cursor_init (&pc, dash, (gsize) (left_end - dash));
  if (!trace_cursor_u32 (&pc, &rec->pid) || !trace_cursor_at_end (&pc))
    return fail_bool (error, "the pid in 'comm-pid' is not a number");
  comm_start = line;
  while (comm_start < dash - 1 && (*comm_start == ' ' || *comm_start == '\t'))
    comm_start++;
  /* "<...>": ftrace did not record the name. */
  if ((gsize) (dash - 1 - comm_start) == 5 && memcmp (comm_start, "<...>", 5) == 0)
    trace_record_set_comm (rec, "", 0);
  else
    trace_record_set_comm (rec, comm_start, (gsize) (dash - 1 - comm_start));

  c->p = bracket + 1;
  if (!trace_cursor_u32 (c, &cpu) || cpu > G_MAXINT32 || !trace_cursor_char (c, ']'))
    return fail_bool (error, "malformed [cpu] field");
  rec->cpu = (gint32) cpu;

  if (!trace_cursor_word (c, &w, &wlen))
    return fail_bool (error, "expected a timestamp after the [cpu] field");
  if (w[wlen - 1] != ':')
    {
      /* the irqs-off/need-resched/... flags column */
      if (wlen < 4 || wlen > 5)
        return fail_bool (error, "expected a 4- or 5-character flags field");
      if (!trace_cursor_word (c, &w, &wlen) || w[wlen - 1] != ':')
        return fail_bool (error, "expected 'seconds.fraction:' timestamp");
    }
  {
    TraceCursor tc;
    trace_cursor_init (&tc, w, wlen - 1);
    if (memchr (w, '.', wlen) == NULL)
      {
        /* counter/x86-tsc clocks print raw ticks: kept as they are */
        guint64 ticks;
        if (!trace_cursor_u64 (&tc, &ticks) || tc.p != tc.end || ticks > G_MAXINT64)
          return fail_bool (error, "malformed timestamp");
        rec->time_ns = (gint64) ticks;
      }
    else if (!trace_cursor_time_ns (&tc, &rec->time_ns) || tc.p != tc.end)
      return fail_bool (error, "malformed timestamp");
  }
  return TRUE;
}

static gboolean
parse_rwbs_word (TraceCursor *c, guint32 *rwbs)
{
  const char *w;
  gsize wlen;
  char buf[16];

  if (!trace_cursor_word (c, &w, &wlen) || wlen >= sizeof buf)
    return FALSE;
  memcpy (buf, w, wlen);
  buf[wlen] = '\0';
  return trace_rwbs_parse (buf, rwbs);
}

static gboolean
is_lost_events (const char *line)
{
  return g_str_has_prefix (line, "CPU:") && strstr (line, "[LOST ") != NULL;
}

static gboolean
word_is_devno (const char *w, gsize wlen)
{
  TraceCursor c;
  guint32 a, b;

  trace_cursor_init (&c, w, wlen);
  return trace_cursor_devno (&c, &a, &b) && c.p == c.end;
}

/* ---- "blk" tracer ------------------------------------------------------ */

/* The blk tracer's state: the last message line's whole text. */
typedef struct {
  GString *message;
} FtraceBlkState;

/* The tail of a blk line; for a message (blk_log_msg: the text to the end
 * of the line) the whole text goes to @message too (may be NULL: probing),
 * as the record's comm keeps only TRACE_COMM_MAX - 1 bytes of it. */
static gboolean
parse_blk_tail_keep (TraceCursor *c, TraceRecord *rec, GString *message, GError **error)
{
  if (rec->action == TRACE_ACT_MESSAGE && message != NULL)
    {
      TraceCursor text = *c;
      trace_cursor_skip_ws (&text);
      g_string_truncate (message, 0);
      g_string_append_len (message, text.p, (gssize) (text.end - text.p));
    }
  return trace_parse_blk_tail (c, rec, error);
}

/* "maj,min [cgroup] ACT RWBS tail" after the prefix or the classic header. */
static TraceLineResult
parse_blk_body (TraceCursor *c, TraceRecord *rec, GString *message, GError **error)
{
  const char *w;
  gsize wlen;

  if (!trace_cursor_devno (c, &rec->dev_major, &rec->dev_minor))
    return fail (error, "expected 'major,minor' device");
  if (!trace_cursor_word (c, &w, &wlen))
    return fail (error, "expected an action");
  if (!trace_action_parse_word (w, wlen, &rec->action))
    {
      /* blk_cgroup ("id_lo,id_hi") or blk_cgname ("/path") column */
      if (memchr (w, ',', wlen) == NULL && w[0] != '/')
        return fail (error, "unknown action");
      if (!trace_cursor_word (c, &w, &wlen) || !trace_action_parse_word (w, wlen, &rec->action))
        return fail (error, "unknown action");
    }
  if (!parse_rwbs_word (c, &rec->rwbs))
    return fail (error, "malformed RWBS field");
  if (!parse_blk_tail_keep (c, rec, message, error))
    return TRACE_LINE_ERROR;
  return TRACE_LINE_RECORD;
}

/* blk_classic: "maj,min cpu sec.nsec pid ACT RWBS tail" */
static TraceLineResult
parse_blk_classic (TraceCursor *c, TraceRecord *rec, GString *message, GError **error)
{
  guint32 cpu;
  const char *w;
  gsize wlen;

  if (!trace_cursor_devno (c, &rec->dev_major, &rec->dev_minor))
    return fail (error, "expected 'major,minor' device");
  if (!trace_cursor_u32 (c, &cpu) || cpu > G_MAXINT32)
    return fail (error, "expected a CPU number");
  rec->cpu = (gint32) cpu;
  if (!trace_cursor_time_ns (c, &rec->time_ns))
    return fail (error, "expected a time 'seconds.nanoseconds'");
  if (!trace_cursor_u32 (c, &rec->pid))
    return fail (error, "expected a pid");
  if (!trace_cursor_word (c, &w, &wlen) || !trace_action_parse_word (w, wlen, &rec->action))
    return fail (error, "unknown action");
  if (!parse_rwbs_word (c, &rec->rwbs))
    return fail (error, "malformed RWBS field");
  if (!parse_blk_tail_keep (c, rec, message, error))
    return TRACE_LINE_ERROR;
  return TRACE_LINE_RECORD;
}

static TraceLineResult
ftrace_blk_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  FtraceBlkState *st = state;
  TraceCursor c;
  const char *w;
  gsize wlen;

  if (st->message == NULL)
    st->message = g_string_new (NULL);
  trace_cursor_init (&c, line, len);
  if (is_lost_events (line))
    return TRACE_LINE_SKIP;
  {
    TraceCursor probe = c;
    if (trace_cursor_word (&probe, &w, &wlen))
      {
        const char *comma = memchr (w, ',', wlen);
        if (comma != NULL && word_is_devno (w, wlen))
          return parse_blk_classic (&c, out, st->message, error);
      }
  }
  if (!parse_prefix (&c, out, error))
    return TRACE_LINE_ERROR;
  {
    TraceCursor probe = c;
    /* Another tracer's or event's line in the same buffer: "name: ..." */
    if (trace_cursor_word (&probe, &w, &wlen) && w[wlen - 1] == ':')
      return TRACE_LINE_SKIP;
  }
  return parse_blk_body (&c, out, st->message, error);
}

static const char *
ftrace_blk_message (gpointer state)
{
  FtraceBlkState *st = state;
  return st->message != NULL ? st->message->str : NULL;
}

static void
ftrace_blk_clear_state (gpointer state)
{
  FtraceBlkState *st = state;
  if (st->message != NULL)
    g_string_free (st->message, TRUE);
}

/* ---- Block tracepoints ------------------------------------------------- */

typedef enum {
  EV_BIO,          /* "maj,min rwbs sector + n [comm]" (complete: [error]) */
  EV_RQ_BYTES,     /* "maj,min rwbs bytes (cmd) sector + n [ioprio] [comm]" */
  EV_RQ_DONE,      /* "maj,min rwbs (cmd) sector + n [ioprio] [error]" */
  EV_PLUG,         /* "[comm]" */
  EV_UNPLUG,       /* "[comm] n" */
  EV_SPLIT,        /* "maj,min rwbs sector / new [comm]" */
  EV_REMAP,        /* "maj,min rwbs sector + n <- (maj,min) old [len n]" */
} EventShape;

static const struct {
  const char *name;
  TraceAction action;
  EventShape shape;
} block_events[] = {
  { "block_bio_queue",      TRACE_ACT_QUEUE,      EV_BIO },
  { "block_getrq",          TRACE_ACT_GETRQ,      EV_BIO },
  { "block_sleeprq",        TRACE_ACT_SLEEPRQ,    EV_BIO },
  { "block_bio_backmerge",  TRACE_ACT_BACKMERGE,  EV_BIO },
  { "block_bio_frontmerge", TRACE_ACT_FRONTMERGE, EV_BIO },
  { "block_bio_bounce",     TRACE_ACT_BOUNCE,     EV_BIO },
  { "block_bio_complete",   TRACE_ACT_COMPLETE,   EV_BIO },
  { "block_rq_insert",      TRACE_ACT_INSERT,     EV_RQ_BYTES },
  { "block_rq_issue",       TRACE_ACT_ISSUE,      EV_RQ_BYTES },
  { "block_rq_complete",    TRACE_ACT_COMPLETE,   EV_RQ_DONE },
  { "block_rq_requeue",     TRACE_ACT_REQUEUE,    EV_RQ_DONE },
  { "block_plug",           TRACE_ACT_PLUG,       EV_PLUG },
  { "block_unplug",         TRACE_ACT_UNPLUG_IO,  EV_UNPLUG },
  { "block_split",          TRACE_ACT_SPLIT,      EV_SPLIT },
  { "block_bio_remap",      TRACE_ACT_REMAP,      EV_REMAP },
  { "block_rq_remap",       TRACE_ACT_REMAP,      EV_REMAP },
};

static TraceLineResult
parse_bracket_tail (TraceCursor *c, TraceRecord *rec, gboolean error_field, GError **error)
{
  const char *text;
  gsize len;

  /* skip the ioprio "class,hint,level" (Linux ≥ 6.10) or other words */
  for (int i = 0; i < 3 && c->p < c->end; i++)
    {
      const char *w;
      gsize wlen;
      TraceCursor probe = *c;
      trace_cursor_skip_ws (&probe);
      if (probe.p < probe.end && *probe.p == '[')
        break;
      if (!trace_cursor_word (c, &w, &wlen))
        break;
    }
  if (!trace_cursor_bracket (c, c->end, &text, &len))
    return fail (error, error_field ? "expected [error] field" : "expected [command] field");
  if (error_field)
    {
      TraceCursor inner;
      trace_cursor_init (&inner, text, len);
      if (!trace_cursor_i32 (&inner, &rec->error) || !trace_cursor_at_end (&inner))
        return fail (error, "the [error] field of a completion is not a number");
    }
  else
    trace_record_set_comm (rec, text, len);
  if (!trace_cursor_at_end (c))
    return fail (error, "unexpected text after the record");
  return TRACE_LINE_RECORD;
}

static TraceLineResult
parse_event_fields (TraceCursor *c, TraceRecord *rec, EventShape shape, GError **error)
{
  if (shape == EV_PLUG || shape == EV_UNPLUG)
    {
      /* Same text as the blk tracer's P and U tails. */
      rec->rwbs = TRACE_RWBS_NONE;
      if (!trace_parse_blk_tail (c, rec, error))
        return TRACE_LINE_ERROR;
      return TRACE_LINE_RECORD;
    }
  if (!trace_cursor_devno (c, &rec->dev_major, &rec->dev_minor))
    return fail (error, "expected 'major,minor' device");
  if (!parse_rwbs_word (c, &rec->rwbs))
    return fail (error, "malformed RWBS field");
  switch (shape)
    {
    case EV_SPLIT:
    case EV_REMAP:
      if (!trace_parse_blk_tail (c, rec, error))
        return TRACE_LINE_ERROR;
      return TRACE_LINE_RECORD;
    case EV_RQ_BYTES:
      {
        guint64 bytes;
        if (!trace_cursor_u64 (c, &bytes))
          return fail (error, "expected the byte count of a request");
      }
      if (!trace_cursor_skip_paren (c))
        return fail (error, "expected the '(cmd)' field of a request");
      break;
    case EV_RQ_DONE:
      if (!trace_cursor_skip_paren (c))
        return fail (error, "expected the '(cmd)' field of a request");
      break;
    case EV_BIO:
    case EV_PLUG:
    case EV_UNPLUG:
    default:
      break;
    }
  if (!trace_cursor_u64 (c, &rec->sector) || !trace_cursor_char (c, '+')
      || !trace_cursor_u32 (c, &rec->nr_sectors))
    return fail (error, "expected 'sector + count'");
  return parse_bracket_tail (c, rec, rec->action == TRACE_ACT_COMPLETE || rec->action == TRACE_ACT_REQUEUE,
                             error);
}

static TraceLineResult
ftrace_events_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  TraceCursor c;
  const char *w;
  gsize wlen;

  if (is_lost_events (line))
    return TRACE_LINE_SKIP;
  trace_cursor_init (&c, line, len);
  if (!parse_prefix (&c, out, error))
    return TRACE_LINE_ERROR;
  if (!trace_cursor_word (&c, &w, &wlen) || w[wlen - 1] != ':')
    return fail (error, "expected an event name 'name:' after the timestamp");
  for (gsize i = 0; i < G_N_ELEMENTS (block_events); i++)
    {
      const char *name = block_events[i].name;
      if (strlen (name) == wlen - 1 && memcmp (name, w, wlen - 1) == 0)
        {
          out->action = block_events[i].action;
          return parse_event_fields (&c, out, block_events[i].shape, error);
        }
    }
  /* block_io_start/io_done, block_rq_error, block_dirty_buffer, other
   * subsystems: not part of the request lifecycle. */
  return TRACE_LINE_SKIP;
}

/* ---- Probes ------------------------------------------------------------- */

typedef enum { LINE_OTHER, LINE_BLK, LINE_BLK_CLASSIC, LINE_BLOCK_EVENT } LineKind;

static LineKind
classify (const char *line, gsize len)
{
  TraceRecord rec;
  TraceCursor c;
  const char *w;
  gsize wlen;

  memset (&rec, 0, sizeof rec);
  trace_cursor_init (&c, line, len);
  if (trace_cursor_word (&c, &w, &wlen) && word_is_devno (w, wlen))
    {
      trace_cursor_init (&c, line, len);
      return parse_blk_classic (&c, &rec, NULL, NULL) == TRACE_LINE_RECORD ? LINE_BLK_CLASSIC : LINE_OTHER;
    }
  trace_cursor_init (&c, line, len);
  if (!parse_prefix (&c, &rec, NULL))
    return LINE_OTHER;
  if (!trace_cursor_word (&c, &w, &wlen))
    return LINE_OTHER;
  if (wlen > 7 && w[wlen - 1] == ':' && g_str_has_prefix (w, "block_"))
    return LINE_BLOCK_EVENT;
  if (word_is_devno (w, wlen))
    return LINE_BLK;
  return LINE_OTHER;
}

/* Scores for both ftrace formats from one pass over the head. */
static void
probe_ftrace (const char *head, gsize len, const char *path, int *blk, int *events)
{
  const char *p = head;
  const char *end = head + len;
  int lines = 0;

  *blk = 0;
  *events = 0;
  if (strstr (head, "# tracer: blk") != NULL || strstr (head, "# DEV   CPU TIMESTAMP") != NULL)
    *blk = 95;
  while (p < end && lines < 200)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *eol = nl != NULL ? nl : end;
      if (eol > p && *p != '#')
        {
          lines++;
          switch (classify (p, (gsize) (eol - p)))
            {
            case LINE_BLK:
              *blk = MAX (*blk, 90);
              return;
            case LINE_BLK_CLASSIC:
              *blk = MAX (*blk, 85);
              return;
            case LINE_BLOCK_EVENT:
              if (*blk < 95)
                *events = 90;
              return;
            case LINE_OTHER:
            default:
              break;
            }
        }
      p = eol + 1;
    }
  /* No block line in the head: an empty capture or other events first. */
  if (*blk == 0 && strstr (head, "# tracer: nop") != NULL)
    *events = 40;
  if (*blk == 0 && *events == 0 && (g_str_has_suffix (path, ".ftrace") || g_str_has_suffix (path, ".ftrace.gz")))
    *events = 30;
}

static int
ftrace_blk_probe (const char *head, gsize len, const char *path)
{
  int blk, events;

  probe_ftrace (head, len, path, &blk, &events);
  return blk;
}

static int
ftrace_events_probe (const char *head, gsize len, const char *path)
{
  int blk, events;

  probe_ftrace (head, len, path, &blk, &events);
  return events;
}

const TraceFormatOps trace_ftrace_blk_ops = {
  .name = "ftrace-blk",
  .time_per_cpu = TRUE,
  .probe = ftrace_blk_probe,
  .state_size = sizeof (FtraceBlkState),
  .parse_line = ftrace_blk_parse_line,
  .message = ftrace_blk_message,
  .clear_state = ftrace_blk_clear_state,
};

const TraceFormatOps trace_ftrace_events_ops = {
  .name = "ftrace-events",
  .time_per_cpu = TRUE,
  .probe = ftrace_events_probe,
  .state_size = 0,
  .parse_line = ftrace_events_parse_line,
};
