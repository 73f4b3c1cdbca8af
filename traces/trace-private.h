/* trace-private.h — the contract between the reader core (trace.c) and the
 * formats: line formats (trace-blkparse.c, trace-ftrace.c, trace-iolog.c,
 * trace-published.c, trace-csv.c) and record (binary) formats
 * (trace-blktrace.c).
 *
 * The core owns opening (plain, .gz, stdin) through a buffered byte stream
 * (TraceInput), format sniffing in one place (binary magic first, then the
 * text probes), and for line formats the line splitting with bounded
 * memory, comment and "# iosim-capture" header lines and error locations
 * (FILE:LINE).  A line format only turns one line into a record; a line
 * format whose lines yield records out of step with the lines (the CSV
 * traces with response times: an issue now, a completion later) queues
 * them in a TraceReorder and hands them out through ->pending.  A record
 * format reads its own records from one or more TraceInputs and names FILE
 * and byte offset in its errors itself.  Both kinds share one metadata
 * table (->attach, trace_reader_set_meta) and one ->clear_state.
 */
#pragma once

#include "traces/trace.h"

G_BEGIN_DECLS

typedef enum {
  TRACE_LINE_RECORD,   /* @out filled */
  TRACE_LINE_SKIP,     /* not a record, skipped on purpose (counted) */
  TRACE_LINE_ERROR,    /* malformed; error set without location */
  TRACE_LINE_QUEUED,   /* consumed: its records come out through ->pending */
} TraceLineResult;

/* A line format's parse error: sets @error (TRACE_ERROR_PARSE; the core
 * adds FILE:LINE) and returns TRACE_LINE_ERROR. */
TraceLineResult trace_line_fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

typedef enum {
  TRACE_RECORD_OK,     /* @out filled */
  TRACE_RECORD_END,    /* no more records */
  TRACE_RECORD_ERROR,  /* error set, naming FILE and byte offset */
} TraceRecordResult;

/* ---- Buffered byte stream (the core's; record formats read through it) - */

typedef struct _TraceInput TraceInput;

/* The largest @want trace_input_peek accepts: a blktrace record is at most
 * a 64-byte header plus a 65,535-byte payload. */
#define TRACE_INPUT_MAX_PEEK  (96 * 1024)

/* Open @path ("-": standard input), decompressing gzip (recognised by its
 * magic bytes) on the fly. */
TraceInput  *trace_input_open    (const char   *path,
                                  GError      **error);
void         trace_input_free    (TraceInput   *input);
/* The name errors give the input ("<stdin>" for "-"). */
const char  *trace_input_name    (const TraceInput *input);
/* Byte offset (in the decompressed data) of the next unconsumed byte. */
guint64      trace_input_offset  (const TraceInput *input);
/* Make at least @want bytes (<= TRACE_INPUT_MAX_PEEK) available at *@data
 * without consuming them.  Returns the number available: >= @want, or
 * fewer only at the end of the input; -1 on a read error (@error set,
 * naming the file). */
gssize       trace_input_peek    (TraceInput   *input,
                                  gsize         want,
                                  const guint8 **data,
                                  GError      **error);
/* Consume @n bytes, no more than the last peek made available. */
void         trace_input_consume (TraceInput   *input,
                                  gsize         n);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceInput, trace_input_free)

/* ---- Formats ------------------------------------------------------------ */

/* A format is either line based (probe + parse_line, optionally pending)
 * or record based (probe_bytes + open_records + read_record). */
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
   * zeroed by the core with cpu = -1 and line set to the line's number. */
  TraceLineResult (*parse_line) (gpointer     state,
                                 char        *line,
                                 gsize        len,
                                 TraceRecord *out,
                                 GError     **error);
  /* Optional: a record the format holds ready (TRUE, @out filled whole,
   * line included).  Called before every line is read and, with @at_eof,
   * after the last one, until it returns FALSE. */
  gboolean (*pending) (gpointer state, gboolean at_eof, TraceRecord *out);
  /* Optional: whether @line, the input's last line, which parsed but has
   * no newline, is known whole: a file cut inside a final number still
   * parses, as another record.  NULL: whole unless it ends in a digit
   * (then the core refuses it, naming the line). */
  gboolean (*last_line_whole) (const char *line, gsize len);

  /* ---- record (binary) formats ---- */

  /* Confidence 0..100 from the raw first bytes (@len may be 0): magic
   * numbers.  Binary probes run before the text probes. */
  int  (*probe_bytes) (const guint8 *head, gsize len, const char *path);
  /* Optional: the files @path stands for when it names a set (blktrace
   * per-CPU files), in read order; NULL when it names a single input. */
  GPtrArray *(*expand_path) (const char *path);
  /* Take @first (already sniffed, nothing consumed) and open @more (other
   * members of the set, may be empty); may read ahead (e.g. to find the
   * genesis).  Errors name the file and byte offset. */
  gboolean (*open_records) (TraceReader  *reader,
                            gpointer      state,
                            TraceInput   *first,
                            GPtrArray    *more,
                            GError      **error);
  /* Next record into @out (zeroed by the core with cpu = -1). */
  TraceRecordResult (*read_record) (TraceReader *reader,
                                    gpointer     state,
                                    TraceRecord *out,
                                    GError     **error);

  /* ---- both kinds ---- */

  /* Times are ordered per (device, CPU) only, as the kernel's per-CPU
   * buffers hold them (blktrace relay files, the ftrace ring buffer):
   * the core checks time order per such stream; FALSE: the whole input
   * is one stream.  Records earlier than their stream's previous one are
   * counted (trace_reader_time_backwards), not refused. */
  gboolean time_per_cpu;

  /* The format records when I/Os were queued and nothing after (fio
   * iologs, UMass/SPC, DiskSim): every record is a Q whose completion
   * never comes, so the lifecycle emits each one at once
   * (trace_reader_issue_only) instead of holding it. */
  gboolean issue_only;

  /* Optional: called once after the state is allocated (before the first
   * line, or before open_records), with the reader's metadata table
   * (char * -> char *, g_free'd by the reader; the one
   * trace_reader_set_meta fills), which the format may fill as it reads
   * ("file.N", "host.N"). */
  void (*attach) (gpointer state, GHashTable *meta);
  /* Optional: the whole text of the message record just returned (the
   * record's comm holds it cut), or NULL to use the comm. */
  const char *(*message) (gpointer state);
  /* Optional: release what the state owns (not the state itself). */
  void (*clear_state) (gpointer state);
} TraceFormatOps;

extern const TraceFormatOps trace_blkparse_ops;
extern const TraceFormatOps trace_ftrace_blk_ops;
extern const TraceFormatOps trace_ftrace_events_ops;
extern const TraceFormatOps trace_fio_iolog_ops;
extern const TraceFormatOps trace_msr_csv_ops;
extern const TraceFormatOps trace_systor17_csv_ops;
extern const TraceFormatOps trace_umass_spc_ops;
extern const TraceFormatOps trace_tencent_cbs_ops;
extern const TraceFormatOps trace_disksim_ascii_ops;
extern const TraceFormatOps trace_iosim_csv_ops;
extern const TraceFormatOps trace_blktrace_ops;

/* What record formats tell the core while reading (see trace.h for the
 * public getters). */
void trace_reader_count_read    (TraceReader *reader, guint64 n);  /* trace_reader_lines */
void trace_reader_count_skipped (TraceReader *reader, guint64 n);
void trace_reader_count_lost    (TraceReader *reader, guint64 n);
void trace_reader_set_genesis   (TraceReader *reader, gint64 genesis_ns);
void trace_reader_set_meta      (TraceReader *reader, const char *key, const char *value);

/* Set sector/nr_sectors (rounded out) and the byte-exact extent of a
 * record from a byte offset and length; FALSE when the end overflows or
 * the rounded-out end sector passes TRACE_SECTOR_END_MAX. */
gboolean trace_record_set_bytes (TraceRecord *rec, guint64 offset, guint64 length);

/* The largest end (exclusive) of an extent in 512-byte sectors: its end
 * byte, (sector + nr_sectors) * 512, must fit in 64 bits, so that every
 * consumer may compute byte offsets without wrapping (2^55 - 1). */
#define TRACE_SECTOR_END_MAX (G_MAXUINT64 / 512)

/* The one extent check every reader's records pass, where they are parsed
 * (the core calls it for every line format's record, record formats call
 * it before they hand a record out): sector + nr_sectors, a remap's
 * from_sector + nr_sectors and a split's new_sector must end at or below
 * TRACE_SECTOR_END_MAX.  Exempt: messages (no extent) and the
 * tracepoints' flush completion at sector (u64) -1 with no data.  FALSE
 * with a TRACE_ERROR_PARSE @error that gives the numbers but no location
 * (the caller prefixes FILE:LINE or FILE: byte offset N). */
gboolean trace_record_check_extent (const TraceRecord *rec, GError **error);

/* ---- Reordering records by time --------------------------------------- */

/* A bounded min-heap of records keyed by (time, arrival order) for the
 * traces that give an arrival and a response time per row: each row's
 * issue (its arrival) and completion (arrival + response) are pushed, and
 * a record is released once the input's latest arrival is @window_ns past
 * its time, so rows may be out of time order by up to @window_ns (SYSTOR
 * '17 rows are sorted by completion, their arrivals by up to 97 ms out of
 * order) and completions come out in time order among later arrivals.
 * Memory: the I/Os still awaiting completion plus the rows of the last
 * window; past @limit entries, or for a row earlier than a record already
 * released, push fails with an error. */
typedef struct {
  GArray  *heap;           /* TraceReorderEntry */
  guint64  seq;            /* insertion counter: ties come out FIFO */
  gint64   watermark_ns;   /* latest arrival pushed; -1 before the first */
  gint64   released_ns;    /* time of the last record released; -1 before */
  gint64   window_ns;
  guint    limit;
  guint    peak;           /* most entries held at once */
} TraceReorder;

#define TRACE_REORDER_WINDOW_NS  G_GINT64_CONSTANT (1000000000)   /* 1 s */
#define TRACE_REORDER_LIMIT      (1u << 19)

void     trace_reorder_init  (TraceReorder *ro, gint64 window_ns, guint limit);
void     trace_reorder_clear (TraceReorder *ro);
/* Queue @rec (time_ns >= 0); @arrival: its time advances the watermark
 * (an issue; a completion does not). */
gboolean trace_reorder_push  (TraceReorder      *ro,
                              const TraceRecord *rec,
                              gboolean           arrival,
                              GError           **error);
/* The earliest record if it is released (or @at_eof: whatever is left). */
gboolean trace_reorder_pop   (TraceReorder *ro, gboolean at_eof, TraceRecord *out);
guint    trace_reorder_held  (const TraceReorder *ro);

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
