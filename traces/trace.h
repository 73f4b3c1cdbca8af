/* trace.h — the block trace record model, streaming readers and writers.
 *
 * traces/ knows formats only, nothing about simulation.  Every reader turns
 * one source line (or binary record) into a TraceRecord with times in
 * nanoseconds, sectors of 512 bytes and the blktrace action letters, and
 * reports bad input through GError naming the file and line.  Readers
 * stream: memory does not grow with the length of the trace.
 *
 * Formats (see ../shared/reference/trace-formats.md):
 *   "blkparse"   blkparse default text output (§1.6), statistics tail skipped
 *   "ftrace-blk" the ftrace blk tracer's text (§1.7) as Linux 6.x prints it
 *                through tracefs, including the header lines iosim capture
 *                writes ("# iosim-capture key=value ...")
 *   "ftrace-events" block tracepoint text, events/block/ (§1.8)
 * Gzip input (recognised by its magic bytes, .gz or not) is decompressed
 * on the fly; "-" is standard input.  Extra declarations: trace_reader_meta_keys,
 * trace_reader_lines; the format contract is in trace-private.h.
 */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

#define TRACE_ERROR (trace_error_quark ())
GQuark trace_error_quark (void);

typedef enum {
  TRACE_ERROR_FAILED,      /* generic */
  TRACE_ERROR_IO,          /* cannot open or read the file */
  TRACE_ERROR_FORMAT,      /* unknown or unsupported format */
  TRACE_ERROR_PARSE,       /* a malformed record: message names file:line */
} TraceError;

/* blktrace actions (blkparse letters in comments). */
typedef enum {
  TRACE_ACT_QUEUE,         /* Q  bio queued */
  TRACE_ACT_BACKMERGE,     /* M  bio back-merged into a request */
  TRACE_ACT_FRONTMERGE,    /* F  bio front-merged */
  TRACE_ACT_GETRQ,         /* G  request allocated */
  TRACE_ACT_SLEEPRQ,       /* S  waited for a free request */
  TRACE_ACT_REQUEUE,       /* R  request requeued */
  TRACE_ACT_ISSUE,         /* D  request issued to the driver */
  TRACE_ACT_COMPLETE,      /* C  request completed */
  TRACE_ACT_PLUG,          /* P  queue plugged */
  TRACE_ACT_UNPLUG_IO,     /* U  explicit unplug */
  TRACE_ACT_UNPLUG_TIMER,  /* UT unplug by timer */
  TRACE_ACT_INSERT,        /* I  request inserted into the elevator */
  TRACE_ACT_SPLIT,         /* X  bio split */
  TRACE_ACT_BOUNCE,        /* B  bounce */
  TRACE_ACT_REMAP,         /* A  remapped from another device */
  TRACE_ACT_MESSAGE,       /* m  text message (scheduler notes) */
  TRACE_ACT_N_ACTIONS
} TraceAction;

/* The RWBS column as flags. */
typedef enum {
  TRACE_RWBS_READ    = 1 << 0,   /* R */
  TRACE_RWBS_WRITE   = 1 << 1,   /* W */
  TRACE_RWBS_DISCARD = 1 << 2,   /* D */
  TRACE_RWBS_FLUSH   = 1 << 3,   /* F (preflush, leading position) */
  TRACE_RWBS_FUA     = 1 << 4,   /* F after the direction */
  TRACE_RWBS_SYNC    = 1 << 5,   /* S */
  TRACE_RWBS_META    = 1 << 6,   /* M */
  TRACE_RWBS_AHEAD   = 1 << 7,   /* A */
  TRACE_RWBS_NONE    = 1 << 8,   /* N (no data, e.g. messages) */
  TRACE_RWBS_ATOMIC  = 1 << 9,   /* U */
} TraceRwbs;

#define TRACE_COMM_MAX 32

typedef struct {
  gint64   time_ns;              /* as the source gives it (blkparse: since trace start) */
  guint32  dev_major;
  guint32  dev_minor;
  gint32   cpu;                  /* -1 when unknown */
  guint32  pid;
  TraceAction action;
  guint32  rwbs;                 /* TraceRwbs flags */
  guint64  sector;               /* 512-byte units */
  guint32  nr_sectors;
  gint32   error;                /* C and R records: completion status */
  guint32  unplug_count;         /* U/UT: requests unplugged */
  guint64  new_sector;           /* X: sector of the second half */
  guint32  from_major;           /* A: device and sector remapped from */
  guint32  from_minor;
  guint64  from_sector;
  char     comm[TRACE_COMM_MAX]; /* "" when the source gives none; m: the message text, truncated */
  guint64  line;                 /* 1-based source line (record index for binary) */
} TraceRecord;

const char *trace_action_letters   (TraceAction action);   /* "Q", "UT", ... */
gboolean    trace_action_from_letters (const char *s,
                                    TraceAction *out);
/* Format rwbs flags as blkparse prints them ("WS", "RA", "N"). */
void        trace_rwbs_format      (guint32      rwbs,
                                    char         out[8]);
gboolean    trace_rwbs_parse       (const char  *s,
                                    guint32     *out);

/* ---- Readers ---------------------------------------------------------- */

typedef struct _TraceReader TraceReader;

/* Open @path, sniffing its format (magic, header line, extension) in one
 * place; "-" reads standard input.  @format may force a format by name
 * (NULL: sniff). */
TraceReader *trace_reader_open     (const char  *path,
                                    const char  *format,
                                    GError     **error);
void         trace_reader_free     (TraceReader *reader);
const char  *trace_reader_format   (const TraceReader *reader);
const char  *trace_reader_path     (const TraceReader *reader);
/* Next record: TRUE with @out filled; FALSE at end of file (error unset)
 * or on a malformed record (error set, naming file and line). */
gboolean     trace_reader_next     (TraceReader *reader,
                                    TraceRecord *out,
                                    GError     **error);
/* Lines that were not records and were skipped on purpose (comments, the
 * blkparse statistics tail, other ftrace events), for reporting. */
guint64      trace_reader_skipped  (const TraceReader *reader);
/* Metadata found in "# iosim-capture key=value ..." header lines, e.g.
 * "device", "devno", "scheduler", "rotational"; NULL if absent. */
const char  *trace_reader_meta     (const TraceReader *reader,
                                    const char  *key);

/* Keys of the "# iosim-capture" metadata seen so far, sorted (free with
 * g_strfreev). */
GStrv        trace_reader_meta_keys (const TraceReader *reader);
/* Lines read so far (1-based number of the last line). */
guint64      trace_reader_lines    (const TraceReader *reader);

/* Names of every known reader format, NULL-terminated. */
const char *const *trace_formats   (void);

/* ---- Writers ---------------------------------------------------------- */

/* Append one blkparse default-format line (with '\n') for @rec. */
void         trace_format_blkparse (const TraceRecord *rec,
                                    guint64      sequence,
                                    GString     *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceReader, trace_reader_free)

G_END_DECLS
