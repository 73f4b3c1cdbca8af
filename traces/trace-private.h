/* trace-private.h — the contract between the reader core (trace.c) and the
 * text formats (trace-blkparse.c, trace-ftrace.c).
 *
 * The core owns opening (plain, .gz, stdin), line splitting with bounded
 * memory, comment and "# iosim-capture" header lines, format sniffing and
 * error locations; a format only turns one line into a record.
 */
#pragma once

#include "traces/trace.h"

G_BEGIN_DECLS

typedef enum {
  TRACE_LINE_RECORD,   /* @out filled */
  TRACE_LINE_SKIP,     /* not a record, skipped on purpose (counted) */
  TRACE_LINE_ERROR,    /* malformed; error set without location */
} TraceLineResult;

typedef struct {
  const char *name;
  /* Confidence 0..100 that @head (the first complete lines of the
   * decompressed input, NUL-terminated, @len bytes) is in this format.
   * @path may be used for its extension; it is never opened. */
  int  (*probe) (const char *head, gsize len, const char *path);
  /* Per-reader state, zero-allocated by the core before the first line. */
  gsize state_size;
  /* Parse one line (NUL-terminated, no newline, no NUL inside, @len bytes).
   * Lines starting with '#' and blank lines never reach this hook.  @out is
   * zeroed by the core with cpu = -1. */
  TraceLineResult (*parse_line) (gpointer     state,
                                 char        *line,
                                 gsize        len,
                                 TraceRecord *out,
                                 GError     **error);
} TraceFormatOps;

extern const TraceFormatOps trace_blkparse_ops;
extern const TraceFormatOps trace_ftrace_blk_ops;
extern const TraceFormatOps trace_ftrace_events_ops;

/* ---- A small cursor for hand-written line parsers --------------------- */

typedef struct {
  const char *p;
  const char *end;
} TraceCursor;

static inline void
trace_cursor_init (TraceCursor *c, const char *line, gsize len)
{
  c->p = line;
  c->end = line + len;
}

static inline void
trace_cursor_skip_ws (TraceCursor *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
    c->p++;
}

static inline gboolean
trace_cursor_at_end (TraceCursor *c)
{
  trace_cursor_skip_ws (c);
  return c->p >= c->end;
}

gboolean trace_cursor_u64     (TraceCursor *c, guint64 *out);
gboolean trace_cursor_u32     (TraceCursor *c, guint32 *out);
gboolean trace_cursor_i32     (TraceCursor *c, gint32 *out);
gboolean trace_cursor_char    (TraceCursor *c, char ch);
/* Skip a "( ... )" group (PC payloads, -t elapsed times, tracepoint cmd). */
gboolean trace_cursor_skip_paren (TraceCursor *c);
/* A whitespace-delimited word, not NUL-terminated. */
gboolean trace_cursor_word    (TraceCursor *c, const char **word, gsize *len);
/* "maj,min" */
gboolean trace_cursor_devno   (TraceCursor *c, guint32 *major, guint32 *minor);
/* "seconds[.fraction]" to nanoseconds, exactly (at most 9 decimals). */
gboolean trace_cursor_time_ns (TraceCursor *c, gint64 *out);

/* Parse the action-specific tail shared by blkparse and the ftrace blk
 * tracer (§1.6, §1.7): "sector + n [comm]", "sector + n (ns) [error]",
 * "[comm] count", "sector / new [comm]", "sector + n <- (maj,min) from",
 * PC forms "bytes (hex) [comm]" and "(hex) [error]"; a message's text is
 * ignored.  @rec->action must be set. */
gboolean trace_parse_blk_tail (TraceCursor *c, TraceRecord *rec, GError **error);

/* Copy a "[comm]" field: text between '[' at the cursor and the last ']'
 * before @limit (comm may hold spaces and brackets). */
gboolean trace_cursor_bracket (TraceCursor *c, const char *limit,
                               const char **text, gsize *len);
void     trace_record_set_comm (TraceRecord *rec, const char *text, gsize len);

/* Parse an action given as letters ("Q", "UT", "m") or, for the ftrace
 * "verbose" option, as a word ("queue", "unplug_timer"). */
gboolean trace_action_parse_word (const char *s, gsize len, TraceAction *out);

G_END_DECLS
