/* trace.h — the block trace record model, streaming readers and writers.
 *
 * traces/ knows formats only, nothing about simulation.  Every reader turns
 * one source line (or binary record) into a TraceRecord with times in
 * nanoseconds, sectors of 512 bytes and the blktrace action letters, and
 * reports bad input through GError naming the file and line (text) or byte
 * offset (binary).  Readers stream: memory does not grow with the length
 * of the trace.
 *
 * Formats (see ../shared/reference/trace-formats.md):
 *   "blkparse"   blkparse default text output (§1.6), statistics tail skipped
 *   "ftrace-blk" the ftrace blk tracer's text (§1.7) as Linux 6.x prints it
 *                through tracefs, including the header lines iosim capture
 *                writes ("# iosim-capture key=value ...")
 *   "ftrace-events" block tracepoint text, events/block/ (§1.8)
 *   "blktrace"   blktrace binary records (§1.1-1.4): struct blk_io_trace
 *                version 7 and the 64-byte version 8 (blk_io_trace2), either
 *                byte order, per-CPU files or blkparse -d merged dumps.  A
 *                path NAME.blktrace.N, or the prefix NAME.blktrace or NAME
 *                itself (as blkparse -i NAME) where no file of that name
 *                exists, opens the whole set
 *                NAME.blktrace.0, .1, ... in its directory (any numbers,
 *                gaps allowed; each record's cpu field trusted), merged by
 *                time; any other name is one file (a dump).  Times are the
 *                file's (absolute monotonic ns): subtract
 *                trace_reader_genesis() for blkparse's relative times.
 *                PROCESS notes fill comm, TIMESTAMP gives the
 *                "start_realtime" metadata, MESSAGE notes become "m"
 *                records (whole text: trace_reader_message); sequence
 *                numbers are kept (TraceRecord.sequence) and gaps counted
 *                (trace_reader_lost).
 *   "fio-iolog"  fio iolog versions 2 and 3 (§2), one Q record per I/O
 *   "msr-csv", "systor17-csv"  SNIA MSR Cambridge and SYSTOR '17 CSV (§3):
 *                an issue (D) at the arrival time and a completion (C) at
 *                arrival + response time, released in time order
 *   "umass-spc", "disksim-ascii"  UMass/SPC and DiskSim ASCII (§3): one Q
 *                record per I/O (these traces hold no completion times)
 *   "tencent-cbs" SNIA IOTTA Tencent Cloud Block Storage (2018):
 *                Timestamp,Offset,Size,IOType,VolumeID, Unix seconds,
 *                512-byte sectors, IOType 0 read / 1 write; one Q record per
 *                I/O on device 0,VolumeID.  Sniffed by its header line or a
 *                first row of five numbers with a 2000..2100 timestamp and
 *                an IOType of 0 or 1; otherwise force it (-f tencent-cbs)
 *   "iosim-csv"  the CSV that trace_format_csv writes
 * Every reader refuses a record whose extent does not fit: the end byte
 * (sector + nr_sectors) * 512 (a remap's origin and a split's second
 * sector too) must be below 2^64, byte offsets + lengths must not wrap
 * (trace_record_check_extent in trace-private.h; a flush completion at
 * sector (u64) -1 with no data is kept).  A last line without a newline
 * that ends in a number, which a truncated file would also give, is
 * refused naming the line (DiskSim's one-digit flags excepted).  Times
 * going back within a stream are counted (trace_reader_time_backwards).
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
  /* Actions only binary blktrace carries (blkparse prints none of them;
   * the letters are iosim's): */
  TRACE_ACT_ABORT,         /* AB request aborted (defined, not emitted by current kernels) */
  TRACE_ACT_DRV_DATA,      /* DD driver-private payload */
  TRACE_ACT_ZONE_PLUG,     /* ZP zone write plug plugged (version 8) */
  TRACE_ACT_ZONE_UNPLUG,   /* ZU zone write plug unplugged (version 8) */
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
  /* B: a barrier request, as kernels up to 2.6.36 traced REQ_HARDBARRIER
   * (BLK_TC_BARRIER, the bit later reused for BLK_TC_FLUSH) and blkparse
   * before 1.0.2 and the 2.6.29-2.6.36 ftrace blk tracer printed it:
   * after A, before S ("WBS", "RB", "WAB"). */
  TRACE_RWBS_BARRIER = 1 << 10,
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
  guint32  sequence;             /* the source's sequence number (blktrace: the kernel's,
                                  * per device and CPU from 1; blkparse text: its
                                  * column); 0 where the source gives none */
  guint64  new_sector;           /* X: sector of the second half */
  guint32  from_major;           /* A: device and sector remapped from */
  guint32  from_minor;
  guint64  from_sector;
  guint64  cgroup_id;            /* binary blktrace with the blk_cgroup option, else 0 */
  char     comm[TRACE_COMM_MAX]; /* "" when the source gives none; m: the message text, cut
                                  * (the whole text: trace_reader_message) */
  guint64  line;                 /* 1-based source line (binary: record index in its file,
                                  * notify records included) */
  /* Byte-exact extent for sources that count bytes (fio iologs, the CSV
   * families): the I/O is [sector * 512 + head_bytes, + length_bytes),
   * and sector/nr_sectors cover it rounded out to whole sectors.  Both 0
   * for sources that count sectors; read them through
   * trace_record_offset_bytes and trace_record_length_bytes. */
  guint32  head_bytes;           /* 0..511 */
  guint32  length_bytes;
  /* Which I/O a D or C belongs to, where the source says it and sectors
   * cannot (msr-csv, systor17-csv: two I/Os may be in flight at one
   * sector; the tag is the row's line); 0 otherwise.  The lifecycle pairs
   * records by (device, sector, io_tag). */
  guint64  io_tag;
} TraceRecord;

/* The I/O's first byte and length in bytes: exact for byte sources,
 * sector * 512 and nr_sectors * 512 otherwise. */
guint64     trace_record_offset_bytes (const TraceRecord *rec);
guint64     trace_record_length_bytes (const TraceRecord *rec);

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
/* The whole text of the message ("m") record that trace_reader_next
 * returned last, which TraceRecord.comm holds cut to TRACE_COMM_MAX - 1
 * bytes (old schedulers' notes run longer); NULL when the last record is
 * not a message.  Valid until the next trace_reader_next. */
const char  *trace_reader_message  (const TraceReader *reader);
/* Lines that were not records and were skipped on purpose (comments, the
 * blkparse statistics tail, other ftrace events), for reporting. */
guint64      trace_reader_skipped  (const TraceReader *reader);
/* Metadata found in "# iosim-capture key=value ..." header lines, e.g.
 * "device", "devno", "scheduler", "rotational", and what a format
 * publishes as it reads: "file.N" (fio-iolog: the name of the file whose
 * records carry dev 0,N), "iolog.version", "host.N" (msr-csv: the
 * Hostname of dev N,*), "time_unit" (disksim-ascii), "start_realtime"
 * (blktrace: the TIMESTAMP note's wall clock); NULL if absent. */
const char  *trace_reader_meta     (const TraceReader *reader,
                                    const char  *key);

/* Keys of the metadata seen so far (header lines and what the format
 * published), sorted (free with g_strfreev). */
GStrv        trace_reader_meta_keys (const TraceReader *reader);
/* Lines read so far (1-based number of the last line); binary formats:
 * records read so far, notify records included. */
guint64      trace_reader_lines    (const TraceReader *reader);
/* The trace's smallest event time (blkparse's "genesis"), known right
 * after open for formats that give absolute times (blktrace): TRUE with
 * *@genesis_ns set; FALSE where the format cannot tell. */
gboolean     trace_reader_genesis  (const TraceReader *reader,
                                    gint64      *genesis_ns);
/* Whether the format records only when I/Os were queued, never their
 * completions (fio-iolog, umass-spc, disksim-ascii): every record is a Q
 * that no D or C will follow. */
gboolean     trace_reader_issue_only (const TraceReader *reader);
/* Events the source says were lost (blktrace: gaps in the per-device,
 * per-CPU sequence numbers); 0 where the format cannot tell. */
guint64      trace_reader_lost     (const TraceReader *reader);

/* Records whose time is earlier than the previous record of their
 * stream, and the largest such step back in ns (0 when none).  A stream
 * is one (device, CPU) for blkparse, ftrace-blk, ftrace-events and
 * blktrace, whose times the kernel keeps ordered per CPU buffer (several
 * CPUs may legitimately interleave out of order), and the whole input for
 * the other formats. */
guint64      trace_reader_time_backwards        (const TraceReader *reader);
guint64      trace_reader_time_backwards_max_ns (const TraceReader *reader);

/* Names of every known reader format, NULL-terminated. */
const char *const *trace_formats   (void);

/* ---- Writers ---------------------------------------------------------- */

/* Append one blkparse default-format line (with '\n') for @rec. */
void         trace_format_blkparse (const TraceRecord *rec,
                                    guint64      sequence,
                                    GString     *out);

/* blkparse's text output with its -f/-F formats (traces/trace-blkparse.c,
 * blkparse 1.2.0): the default layout, or per action a format of
 * blkparse's specifiers %a %c %C %d %D %e %g %M %m %n %N %p %P %s %S %t %T
 * %U with optional '-' and width ("%5T.%9t", "%-8C"), "%%" and the escapes
 * \b \n \r \t.  %P prints nothing (iosim keeps no passthrough payload);
 * %u (blkparse -t's elapsed time) and %z (wall clock) are refused.
 * Messages always get blkparse's message line (its -F has no "m"). */
typedef struct _TraceBlkparseFormat TraceBlkparseFormat;

TraceBlkparseFormat *trace_blkparse_format_new    (void);
void                 trace_blkparse_format_free   (TraceBlkparseFormat *f);
/* @action: one of "ABCDFGIMPQRSTUWX" (blkparse -F A,SPEC; 'U' covers U and
 * UT), or '\0' for every action without its own (blkparse -f SPEC).
 * FALSE with @error set for an unknown action or a spec iosim cannot
 * print. */
gboolean             trace_blkparse_format_set    (TraceBlkparseFormat *f,
                                                   char         action,
                                                   const char  *spec,
                                                   GError     **error);
/* Append @rec's line(s); @f NULL: the default layout.  @sequence is
 * printed as is; @message: a message record's whole text (NULL: its
 * comm).  Times are printed as the record holds them. */
void                 trace_blkparse_format_append (const TraceBlkparseFormat *f,
                                                   const TraceRecord *rec,
                                                   guint32      sequence,
                                                   const char  *message,
                                                   GString     *out);

/* Binary blktrace writer (traces/trace-blktrace-write.c): version-7
 * records in host byte order, each record's time as it is given (the
 * output files below choose the times).  A PROCESS
 * note precedes the first record of every pid (and every change of its
 * comm) so that blkparse shows the names; sequence numbers count per
 * device and CPU.  Lossy where version 7 cannot say it: a read of 0 bytes
 * reads back as "N"; nr_sectors is clamped to what 32-bit bytes hold; a
 * barrier (B) is written as old kernels wrote it, in the bit that became
 * BLK_TC_FLUSH, and reads back as a flush (F). */
typedef struct _TraceBlktraceWriter TraceBlktraceWriter;

TraceBlktraceWriter *trace_blktrace_writer_new    (void);
void                 trace_blktrace_writer_free   (TraceBlktraceWriter *writer);
/* Append the bytes for @rec (its PROCESS note first when due) to @out. */
void                 trace_blktrace_writer_append (TraceBlktraceWriter *writer,
                                                   const TraceRecord   *rec,
                                                   GByteArray          *out);
/* The same with @message, a message record's whole text
 * (trace_reader_message; NULL: the record's comm, which holds it cut). */
void                 trace_blktrace_writer_append_message (TraceBlktraceWriter *writer,
                                                           const TraceRecord   *rec,
                                                           const char          *message,
                                                           GByteArray          *out);

/* Output files for a converted trace (trace-blktrace-write.c says why):
 * times are the source's relative to its first record, written from 1 ns
 * (not 0, which blkparse reading a pipe takes for "no genesis yet"), so
 * that blkparse shows the source's times and btt's idle periods are the
 * source's (btt measures from 0), to 1 ns.
 *  - @per_cpu: the set NAME.blktrace.0 .. .N that blktrace writes and
 *    `blkparse -i NAME` reads, each record in the file of its cpu (-1:
 *    CPU 0), an empty file for each CPU below the highest without
 *    records.  @name may be NAME, NAME.blktrace or NAME.blktrace.N.
 *    CPUs above 4095 are refused (write a dump).
 *  - otherwise one merged dump at @name ("-": standard output) as
 *    `blkparse -d` writes it, for `btt -i FILE` and `blkparse -i - < FILE`.
 * A record earlier than the first is written at the first's time and
 * counted (trace_blktrace_output_clamped). */
typedef struct _TraceBlktraceOutput TraceBlktraceOutput;

/* The layout `iosim trace convert -t blktrace -o NAME` picks: a dump for
 * "-" and names ending in ".bin", the per-CPU set otherwise. */
gboolean             trace_blktrace_output_is_dump (const char         *name);
TraceBlktraceOutput *trace_blktrace_output_open   (const char          *name,
                                                   gboolean             per_cpu,
                                                   GError             **error);
/* Write @rec (errors: the file cannot be opened or written, a CPU too
 * large for a set). */
gboolean             trace_blktrace_output_add    (TraceBlktraceOutput *out,
                                                   const TraceRecord   *rec,
                                                   GError             **error);
/* The same with @message, a message record's whole text (NULL: its comm). */
gboolean             trace_blktrace_output_add_message (TraceBlktraceOutput *out,
                                                        const TraceRecord   *rec,
                                                        const char          *message,
                                                        GError             **error);
/* Flush and close every file (creating the missing empty ones). */
gboolean             trace_blktrace_output_close  (TraceBlktraceOutput *out,
                                                   GError             **error);
/* Files in the output (per-CPU: highest CPU + 1). */
guint                trace_blktrace_output_n_files (const TraceBlktraceOutput *out);
/* What was written, for messages: the dump's path or "NAME.blktrace.0..N
 * (blkparse -i NAME)". */
char                *trace_blktrace_output_describe (const TraceBlktraceOutput *out);
guint64              trace_blktrace_output_clamped (const TraceBlktraceOutput *out);
void                 trace_blktrace_output_free   (TraceBlktraceOutput *out);

/* Convert the trace at @in_path (format sniffed or forced by @format) to
 * one blktrace dump at @out_path, times as a TraceBlktraceOutput dump
 * gives them; @records (may be NULL) receives the count of records
 * written (notes not counted). */
gboolean             trace_convert_to_blktrace    (const char          *in_path,
                                                   const char          *format,
                                                   const char          *out_path,
                                                   guint64             *records,
                                                   GError             **error);

/* CSV with one header row (RFC 4180; comm quoted when it holds a comma,
 * quote or line break):
 *   time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,
 *   offset_bytes,length_bytes,error,io_tag,comm
 * action is the blkparse letter(s), rwbs as blkparse prints it, cpu -1
 * when unknown, offset/length from trace_record_offset_bytes/_length_bytes,
 * comm the process name (a message's text for "m").  The unplug count, a
 * split's second sector, a remap's origin and the cgroup id are not
 * carried.  "iosim-csv" reads it back. */
void         trace_csv_header      (GString     *out);
/* Append @text as one CSV field (RFC 4180 §2): as it is, or in double
 * quotes with inner quotes doubled when it holds a comma, a double quote,
 * CR or LF.  For every CSV iosim writes. */
void         trace_csv_field       (GString     *out,
                                    const char  *text);
void         trace_format_csv      (const TraceRecord *rec,
                                    GString     *out);
/* The same with @comm in the last column: a message's whole text
 * (trace_reader_message), which rec->comm holds cut. */
void         trace_format_csv_text (const TraceRecord *rec,
                                    const char  *comm,
                                    GString     *out);

/* fio iolog version 3 (§2.3), the interchange format for replaying a
 * trace with fio: "fio version 3 iolog", then per file an "add" and an
 * "open" line before its first I/O, read/write/trim/sync/datasync lines
 * "<usec> <file> <op> <offset_bytes> <length_bytes>", and "close" lines at
 * the end.  Times are microseconds from the first I/O, starting at 1
 * (fio's replay takes a previous time of 0 for "none") and never going
 * back (an earlier record is written at the previous time and counted).
 * One I/O per record of the chosen action: TRACE_ACT_QUEUE for traces with
 * Q events, TRACE_ACT_ISSUE for traces with only D and C.  Data lengths
 * above 4 GiB - 512 (fio reads a 32-bit length) are split into several
 * lines.  Records with no data direction and no flush are counted and
 * left out. */
typedef struct _TraceIologWriter TraceIologWriter;

typedef struct {
  guint64 ios;                    /* I/O lines written (after splitting) */
  guint64 reads, writes, trims, syncs;
  guint64 read_bytes, write_bytes, trim_bytes;
  guint64 split;                  /* records written as more than one line */
  guint64 clamped;                /* records earlier than the one before */
  guint64 not_io;                 /* records of the action with nothing to replay */
  guint   files;
} TraceIologWriterStats;

/* @single_file: every I/O goes to this file (fio's filename); NULL: one
 * file per device, named "/dev/block/MAJ:MIN" unless set_file names it.
 * NULL with @error set when a name holds white space (fio splits on it). */
TraceIologWriter *trace_iolog_writer_new      (TraceAction  io_action,
                                               const char  *single_file,
                                               GError     **error);
gboolean     trace_iolog_writer_set_file     (TraceIologWriter *w,
                                              guint32      dev_major,
                                              guint32      dev_minor,
                                              const char  *name,
                                              GError     **error);
/* Name each device 0,N not named by set_file, at its first I/O, after
 * @reader's "file.N" metadata (a fio-iolog reader publishes it as it reads
 * the add lines, before the first I/O on the file).  @reader must outlive
 * the writer's add calls. */
void         trace_iolog_writer_names_from_reader (TraceIologWriter *w,
                                              const TraceReader *reader);
/* Append the lines for @rec (none unless it is of the writer's action). */
void         trace_iolog_writer_add          (TraceIologWriter *w,
                                              const TraceRecord *rec,
                                              GString     *out);
/* Append the header if nothing was written yet, and the close lines. */
void         trace_iolog_writer_finish       (TraceIologWriter *w,
                                              GString     *out);
const TraceIologWriterStats *trace_iolog_writer_stats (const TraceIologWriter *w);
void         trace_iolog_writer_free         (TraceIologWriter *w);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceReader, trace_reader_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceIologWriter, trace_iolog_writer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceBlktraceWriter, trace_blktrace_writer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceBlktraceOutput, trace_blktrace_output_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceBlkparseFormat, trace_blkparse_format_free)

G_END_DECLS
