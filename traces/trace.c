/* trace.c — the reader core: action and RWBS tables, byte extents, the
 * buffered byte stream (plain, gzip, stdin), the format registry and
 * sniffing in one place (binary magic first, then the text probes),
 * bounded-memory line reading with the line formats' queued records
 * (->pending), record formats' hooks, the metadata table ("# iosim-capture"
 * lines and what formats publish), and error locations (FILE:LINE for
 * text; record formats name FILE and byte offset).
 *
 * Action letters and RWBS follow blkparse 1.2.0 and Linux 6.18
 * kernel/trace/blktrace.c (see shared/reference/trace-formats.md §1.3).
 */
#include "traces/trace-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>

G_DEFINE_QUARK (trace-error-quark, trace_error)

/* ---- Actions ------------------------------------------------------------ */

static const struct {
  const char *letters;
  const char *word;         /* the ftrace "verbose" spelling */
} action_names[TRACE_ACT_N_ACTIONS] = {
  [TRACE_ACT_QUEUE]        = { "Q",  "queue" },
  [TRACE_ACT_BACKMERGE]    = { "M",  "backmerge" },
  [TRACE_ACT_FRONTMERGE]   = { "F",  "frontmerge" },
  [TRACE_ACT_GETRQ]        = { "G",  "getrq" },
  [TRACE_ACT_SLEEPRQ]      = { "S",  "sleeprq" },
  [TRACE_ACT_REQUEUE]      = { "R",  "requeue" },
  [TRACE_ACT_ISSUE]        = { "D",  "issue" },
  [TRACE_ACT_COMPLETE]     = { "C",  "complete" },
  [TRACE_ACT_PLUG]         = { "P",  "plug" },
  [TRACE_ACT_UNPLUG_IO]    = { "U",  "unplug_io" },
  [TRACE_ACT_UNPLUG_TIMER] = { "UT", "unplug_timer" },
  [TRACE_ACT_INSERT]       = { "I",  "insert" },
  [TRACE_ACT_SPLIT]        = { "X",  "split" },
  [TRACE_ACT_BOUNCE]       = { "B",  "bounce" },
  [TRACE_ACT_REMAP]        = { "A",  "remap" },
  [TRACE_ACT_MESSAGE]      = { "m",  "message" },
  [TRACE_ACT_ABORT]        = { "AB", "abort" },
  [TRACE_ACT_DRV_DATA]     = { "DD", "drv_data" },
  [TRACE_ACT_ZONE_PLUG]    = { "ZP", "zone_plug" },
  [TRACE_ACT_ZONE_UNPLUG]  = { "ZU", "zone_unplug" },
};

const char *
trace_action_letters (TraceAction action)
{
  g_return_val_if_fail (action < TRACE_ACT_N_ACTIONS, "?");
  return action_names[action].letters;
}

gboolean
trace_action_parse_word (const char *s, gsize len, TraceAction *out)
{
  for (guint a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    {
      const char *l = action_names[a].letters;
      const char *w = action_names[a].word;
      if ((strlen (l) == len && memcmp (l, s, len) == 0)
          || (strlen (w) == len && memcmp (w, s, len) == 0))
        {
          *out = (TraceAction) a;
          return TRUE;
        }
    }
  return FALSE;
}

gboolean
trace_action_from_letters (const char *s, TraceAction *out)
{
  g_return_val_if_fail (s != NULL && out != NULL, FALSE);
  for (guint a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    if (strcmp (action_names[a].letters, s) == 0)
      {
        *out = (TraceAction) a;
        return TRUE;
      }
  return FALSE;
}

/* ---- RWBS --------------------------------------------------------------- */

/* blkparse order: F (preflush), direction D/W/R/N, then F (FUA), A, S, M;
 * the tracepoints may add U (atomic); old kernels' B (barrier) sits
 * between A and S, as blkparse_fmt.c's fill_rwbs of 2008 and the
 * 2.6.29-2.6.36 kernel/trace/blktrace.c print it. */
void
trace_rwbs_format (guint32 rwbs, char out[8])
{
  int i = 0;

  if (rwbs & TRACE_RWBS_FLUSH)
    out[i++] = 'F';
  if (rwbs & TRACE_RWBS_DISCARD)
    out[i++] = 'D';
  else if (rwbs & TRACE_RWBS_WRITE)
    out[i++] = 'W';
  else if (rwbs & TRACE_RWBS_READ)
    out[i++] = 'R';
  else if (rwbs & TRACE_RWBS_NONE)
    out[i++] = 'N';
  if (rwbs & TRACE_RWBS_FUA)
    out[i++] = 'F';
  if (rwbs & TRACE_RWBS_AHEAD)
    out[i++] = 'A';
  /* Eight bytes hold F + direction + five flags + NUL: drop the rarest
   * (a barrier never comes with a preflush or FUA: they replaced it). */
  if ((rwbs & TRACE_RWBS_BARRIER) && i < 7)
    out[i++] = 'B';
  if ((rwbs & TRACE_RWBS_SYNC) && i < 7)
    out[i++] = 'S';
  if ((rwbs & TRACE_RWBS_META) && i < 7)
    out[i++] = 'M';
  if ((rwbs & TRACE_RWBS_ATOMIC) && i < 7)
    out[i++] = 'U';
  if (i == 0)
    out[i++] = 'N';
  out[i] = '\0';
}

/* Accepts blkparse's and the 6.18 tracepoints' spellings: "FN" and "FF"
 * (flush), "DE" (secure erase), "Z?" zone operations, "U" (atomic), and
 * old kernels' "B" (barrier: "WBS", "RB"). */
gboolean
trace_rwbs_parse (const char *s, guint32 *out)
{
  guint32 f = 0;
  gsize i = 0;
  gsize n;

  g_return_val_if_fail (s != NULL && out != NULL, FALSE);
  n = strlen (s);
  if (n == 0 || n > 10)
    return FALSE;

  if (s[0] == 'F')
    {
      f |= TRACE_RWBS_FLUSH;
      i++;
    }
  if (i < n)
    switch (s[i])
      {
      case 'R': f |= TRACE_RWBS_READ; i++; break;
      case 'W': f |= TRACE_RWBS_WRITE; i++; break;
      case 'N': f |= TRACE_RWBS_NONE; i++; break;
      case 'D':
        f |= TRACE_RWBS_DISCARD;
        i++;
        if (i < n && s[i] == 'E')
          i++;
        break;
      case 'F':
        /* "FF": a REQ_OP_FLUSH request as the tracepoints print it. */
        if (i == 1)
          i++;
        break;
      case 'Z':
        f |= TRACE_RWBS_WRITE;
        i++;
        while (i < n && strchr ("ARFOC", s[i]) != NULL)
          i++;
        break;
      default:
        break;
      }
  for (; i < n; i++)
    switch (s[i])
      {
      case 'F': f |= TRACE_RWBS_FUA; break;
      case 'A': f |= TRACE_RWBS_AHEAD; break;
      case 'S': f |= TRACE_RWBS_SYNC; break;
      case 'M': f |= TRACE_RWBS_META; break;
      case 'U': f |= TRACE_RWBS_ATOMIC; break;
      case 'B': f |= TRACE_RWBS_BARRIER; break;
      default: return FALSE;
      }
  if (f == 0)
    return FALSE;
  *out = f;
  return TRUE;
}

/* ---- Cursor helpers ----------------------------------------------------- */

gboolean
trace_cursor_u64 (TraceCursor *c, guint64 *out)
{
  guint64 v = 0;
  const char *start;

  trace_cursor_skip_ws (c);
  start = c->p;
  while (c->p < c->end && g_ascii_isdigit (*c->p))
    {
      guint d = (guint) (*c->p - '0');
      if (v > (G_MAXUINT64 - d) / 10)
        return FALSE;
      v = v * 10 + d;
      c->p++;
    }
  if (c->p == start)
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
trace_cursor_u32 (TraceCursor *c, guint32 *out)
{
  guint64 v;

  if (!trace_cursor_u64 (c, &v) || v > G_MAXUINT32)
    return FALSE;
  *out = (guint32) v;
  return TRUE;
}

gboolean
trace_cursor_i32 (TraceCursor *c, gint32 *out)
{
  gboolean neg = FALSE;
  guint64 v;

  trace_cursor_skip_ws (c);
  if (c->p < c->end && *c->p == '-')
    {
      neg = TRUE;
      c->p++;
    }
  if (!trace_cursor_u64 (c, &v) || v > (guint64) G_MAXINT32 + (neg ? 1 : 0))
    return FALSE;
  *out = neg ? (gint32) -(gint64) v : (gint32) v;
  return TRUE;
}

gboolean
trace_cursor_char (TraceCursor *c, char ch)
{
  trace_cursor_skip_ws (c);
  if (c->p < c->end && *c->p == ch)
    {
      c->p++;
      return TRUE;
    }
  return FALSE;
}

gboolean
trace_cursor_skip_paren (TraceCursor *c)
{
  const char *close;

  if (!trace_cursor_char (c, '('))
    return FALSE;
  close = memchr (c->p, ')', (gsize) (c->end - c->p));
  if (close == NULL)
    return FALSE;
  c->p = close + 1;
  return TRUE;
}

gboolean
trace_cursor_word (TraceCursor *c, const char **word, gsize *len)
{
  const char *start;

  trace_cursor_skip_ws (c);
  start = c->p;
  while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
    c->p++;
  if (c->p == start)
    return FALSE;
  *word = start;
  *len = (gsize) (c->p - start);
  return TRUE;
}

gboolean
trace_cursor_devno (TraceCursor *c, guint32 *major, guint32 *minor)
{
  if (!trace_cursor_u32 (c, major))
    return FALSE;
  if (c->p >= c->end || *c->p != ',')
    return FALSE;
  c->p++;
  /* blkparse pads the minor on the right only ("8,0  "), never inside. */
  if (c->p >= c->end || !g_ascii_isdigit (*c->p))
    return FALSE;
  return trace_cursor_u32 (c, minor);
}

gboolean
trace_cursor_time_ns (TraceCursor *c, gint64 *out)
{
  guint64 sec;
  guint64 frac = 0;
  int digits = 0;

  if (!trace_cursor_u64 (c, &sec) || sec > (guint64) G_MAXINT64 / G_GUINT64_CONSTANT (1000000000) - 1)
    return FALSE;
  if (c->p < c->end && *c->p == '.')
    {
      c->p++;
      while (c->p < c->end && g_ascii_isdigit (*c->p))
        {
          if (digits == 9)
            return FALSE;
          frac = frac * 10 + (guint64) (*c->p - '0');
          digits++;
          c->p++;
        }
      if (digits == 0)
        return FALSE;
      for (; digits < 9; digits++)
        frac *= 10;
    }
  *out = (gint64) (sec * G_GUINT64_CONSTANT (1000000000) + frac);
  return TRUE;
}

gboolean
trace_cursor_bracket (TraceCursor *c, const char *limit, const char **text, gsize *len)
{
  const char *close;

  trace_cursor_skip_ws (c);
  if (c->p >= c->end || *c->p != '[')
    return FALSE;
  close = limit;
  while (close > c->p && close[-1] != ']')
    close--;
  if (close <= c->p + 1)
    return FALSE;
  *text = c->p + 1;
  *len = (gsize) (close - 1 - (c->p + 1));
  c->p = close;
  return TRUE;
}

gboolean
trace_record_set_bytes (TraceRecord *rec, guint64 offset, guint64 length)
{
  guint64 end;
  guint64 end_sector;

  if (length > G_MAXUINT32 || offset > G_MAXUINT64 - length)
    return FALSE;
  end = offset + length;
  end_sector = end / 512 + (end % 512 != 0);
  if (end_sector > TRACE_SECTOR_END_MAX)
    return FALSE;
  rec->sector = offset / 512;
  rec->nr_sectors = (guint32) (end_sector - rec->sector);   /* <= 2^23 + 1 */
  rec->head_bytes = (guint32) (offset % 512);
  rec->length_bytes = (guint32) length;
  return TRUE;
}

/* block/blk-mq.c blk_mq_rq_ctx_init() starts a request at sector
 * (sector_t) -1; the block_rq_* tracepoints print blk_rq_pos() as it is,
 * so a flush (no data, never positioned) completes at that sector. */
static gboolean
is_unpositioned_flush (const TraceRecord *rec)
{
  return rec->sector == G_MAXUINT64 && rec->nr_sectors == 0;
}

static gboolean
extent_fits (guint64 sector, guint32 nr_sectors)
{
  return sector <= TRACE_SECTOR_END_MAX - nr_sectors;
}

gboolean
trace_record_check_extent (const TraceRecord *rec, GError **error)
{
  if (rec->action == TRACE_ACT_MESSAGE || is_unpositioned_flush (rec))
    return TRUE;
  if (!extent_fits (rec->sector, rec->nr_sectors))
    {
      if (rec->head_bytes != 0 || rec->length_bytes != 0)
        g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                     "byte offset %" G_GUINT64_FORMAT " + %u bytes ends beyond the 64-bit byte range",
                     trace_record_offset_bytes (rec), rec->length_bytes);
      else
        g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                     "sector %" G_GUINT64_FORMAT " + %u sectors ends beyond the 64-bit byte range "
                     "(the end byte (sector + count) * 512 must be below 2^64)",
                     rec->sector, rec->nr_sectors);
      return FALSE;
    }
  if (rec->action == TRACE_ACT_REMAP && !extent_fits (rec->from_sector, rec->nr_sectors))
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "remapped from sector %" G_GUINT64_FORMAT " + %u sectors, which ends beyond "
                   "the 64-bit byte range", rec->from_sector, rec->nr_sectors);
      return FALSE;
    }
  if (rec->action == TRACE_ACT_SPLIT && rec->new_sector > TRACE_SECTOR_END_MAX)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "split at sector %" G_GUINT64_FORMAT ", beyond the 64-bit byte range",
                   rec->new_sector);
      return FALSE;
    }
  return TRUE;
}

guint64
trace_record_offset_bytes (const TraceRecord *rec)
{
  /* a flush completion's sector is (u64) -1: saturate, never wrap */
  if (rec->sector > (G_MAXUINT64 - rec->head_bytes) / 512)
    return G_MAXUINT64;
  return rec->sector * 512 + rec->head_bytes;
}

guint64
trace_record_length_bytes (const TraceRecord *rec)
{
  if (rec->length_bytes != 0 || rec->head_bytes != 0)
    return rec->length_bytes;
  return (guint64) rec->nr_sectors * 512;
}

void
trace_record_set_comm (TraceRecord *rec, const char *text, gsize len)
{
  gsize n = MIN (len, (gsize) TRACE_COMM_MAX - 1);

  memcpy (rec->comm, text, n);
  rec->comm[n] = '\0';
}

/* ---- Buffered input ----------------------------------------------------- */

#define TRACE_INPUT_CAPACITY (128 * 1024)
#define TRACE_HEAD_BYTES     (16 * 1024)
#define TRACE_HEAD_MAX       (64 * 1024)
#define TRACE_MAX_LINE       (64 * 1024)

G_STATIC_ASSERT (TRACE_INPUT_MAX_PEEK <= TRACE_INPUT_CAPACITY);

struct _TraceInput {
  char         *name;
  GInputStream *stream;
  guint8       *buf;          /* TRACE_INPUT_CAPACITY bytes */
  gsize         pos;          /* next unconsumed byte */
  gsize         end;          /* end of valid data */
  gboolean      eof;
  guint64       offset;       /* input offset of buf[pos] */
};

static GInputStream *
open_input (const char *path, const char *display, GError **error)
{
  int fd;

  if (strcmp (path, "-") == 0)
    return g_unix_input_stream_new (STDIN_FILENO, FALSE);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", display, g_strerror (saved));
      return NULL;
    }
  return g_unix_input_stream_new (fd, TRUE);
}

/* Wrap @raw in a gzip decompressor when it starts with the gzip magic. */
static GInputStream *
maybe_gunzip (GInputStream *raw, const char *display, GError **error)
{
  g_autoptr(GInputStream) buffered = g_buffered_input_stream_new (raw);
  GBufferedInputStream *b = G_BUFFERED_INPUT_STREAM (buffered);
  const guint8 *peek;
  gsize avail = 0;

  while ((avail = g_buffered_input_stream_get_available (b)) < 2)
    {
      g_autoptr(GError) local = NULL;
      gssize n = g_buffered_input_stream_fill (b, 2 - (gssize) avail, NULL, &local);
      if (n < 0)
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: byte offset 0: read error: %s",
                       display, local->message);
          return NULL;
        }
      if (n == 0)
        break;
    }
  peek = g_buffered_input_stream_peek_buffer (b, &avail);
  if (avail >= 2 && peek[0] == 0x1f && peek[1] == 0x8b)
    {
      g_autoptr(GZlibDecompressor) dec = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
      return g_converter_input_stream_new (buffered, G_CONVERTER (dec));
    }
  return g_steal_pointer (&buffered);
}

TraceInput *
trace_input_open (const char *path, GError **error)
{
  g_autoptr(TraceInput) in = NULL;
  g_autoptr(GInputStream) raw = NULL;

  g_return_val_if_fail (path != NULL, NULL);

  in = g_new0 (TraceInput, 1);
  in->name = g_strdup (strcmp (path, "-") == 0 ? "<stdin>" : path);
  raw = open_input (path, in->name, error);
  if (raw == NULL)
    return NULL;
  in->stream = maybe_gunzip (raw, in->name, error);
  if (in->stream == NULL)
    return NULL;
  in->buf = g_malloc (TRACE_INPUT_CAPACITY);
  return g_steal_pointer (&in);
}

void
trace_input_free (TraceInput *input)
{
  if (input == NULL)
    return;
  g_free (input->name);
  g_clear_object (&input->stream);
  g_free (input->buf);
  g_free (input);
}

const char *
trace_input_name (const TraceInput *input)
{
  return input->name;
}

guint64
trace_input_offset (const TraceInput *input)
{
  return input->offset;
}

gssize
trace_input_peek (TraceInput *input, gsize want, const guint8 **data, GError **error)
{
  g_return_val_if_fail (want <= TRACE_INPUT_MAX_PEEK, -1);

  while (input->end - input->pos < want && !input->eof)
    {
      GError *local = NULL;
      gssize n;

      /* Move the unconsumed tail to the front when @want would not fit
       * behind it; at most once per buffer's worth of input. */
      if (TRACE_INPUT_CAPACITY - input->pos < want || input->end == input->pos)
        {
          memmove (input->buf, input->buf + input->pos, input->end - input->pos);
          input->end -= input->pos;
          input->pos = 0;
        }
      n = g_input_stream_read (input->stream, input->buf + input->end,
                               TRACE_INPUT_CAPACITY - input->end, NULL, &local);
      if (n < 0)
        {
          /* GIO's own domain would hide where: a corrupt gzip member, an
           * unreadable block. */
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: byte offset %" G_GUINT64_FORMAT
                       ": read error: %s", input->name,
                       input->offset + (input->end - input->pos), local->message);
          g_error_free (local);
          return -1;
        }
      if (n == 0)
        input->eof = TRUE;
      input->end += (gsize) n;
    }
  *data = input->buf + input->pos;
  return (gssize) (input->end - input->pos);
}

void
trace_input_consume (TraceInput *input, gsize n)
{
  g_assert (n <= input->end - input->pos);
  input->pos += n;
  input->offset += n;
}

/* ---- Reader ------------------------------------------------------------- */

/* The registry: sniff() asks every record format's probe_bytes (magic
 * numbers), then every line format's probe (header line, field count,
 * extension), and takes the most confident. */
static const TraceFormatOps *const formats[] = {
  &trace_blkparse_ops,
  &trace_ftrace_blk_ops,
  &trace_ftrace_events_ops,
  &trace_blktrace_ops,
  &trace_fio_iolog_ops,
  &trace_msr_csv_ops,
  &trace_systor17_csv_ops,
  &trace_umass_spc_ops,
  &trace_tencent_cbs_ops,
  &trace_disksim_ascii_ops,
  &trace_iosim_csv_ops,
};

/* Time order is checked per stream: for formats whose times are ordered
 * per CPU (TraceFormatOps.time_per_cpu) a stream is one (device, CPU),
 * otherwise the whole input.  Bounded: records of streams beyond the
 * first TRACE_MAX_TIME_STREAMS are not checked. */
#define TRACE_MAX_TIME_STREAMS 4096

typedef struct {
  guint64 dev;                /* major << 32 | minor */
  gint32  cpu;
  gint64  last_ns;            /* time of the stream's previous record */
} TimeStream;

struct _TraceReader {
  char                 *path;
  char                 *display;      /* path as errors name it */
  const TraceFormatOps *ops;
  gpointer              state;
  TraceInput           *input;        /* line formats; record formats own theirs */
  GString              *line;
  guint64               lineno;
  guint64               skipped;
  guint64               lost;
  guint64               backwards;     /* records earlier than their stream's previous one */
  guint64               backwards_max_ns;
  GHashTable           *streams;       /* TimeStream* (key and value) */
  gboolean              unterminated;  /* the line just read ended the input without '\n' */
  gboolean              has_genesis;
  gint64                genesis_ns;
  GHashTable           *meta;
  GError               *failure;      /* sticky: repeated on later calls */
  GString              *message;      /* the last record's whole message text */
  gboolean              has_message;  /* the last record is a message */
};

static guint
time_stream_hash (gconstpointer p)
{
  const TimeStream *s = p;
  return g_int64_hash (&s->dev) ^ (guint) s->cpu * 2654435761u;
}

static gboolean
time_stream_equal (gconstpointer a, gconstpointer b)
{
  const TimeStream *x = a;
  const TimeStream *y = b;
  return x->dev == y->dev && x->cpu == y->cpu;
}

const char *const *
trace_formats (void)
{
  static const char *const names[] = {
    "blkparse", "ftrace-blk", "ftrace-events", "blktrace", "fio-iolog",
    "msr-csv", "systor17-csv", "umass-spc", "tencent-cbs", "disksim-ascii", "iosim-csv", NULL
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (names) == G_N_ELEMENTS (formats) + 1);
  return names;
}

static const TraceFormatOps *
find_format (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_strcmp0 (formats[i]->name, name) == 0)
      return formats[i];
  return NULL;
}

void
trace_reader_free (TraceReader *reader)
{
  if (reader == NULL)
    return;
  if (reader->state != NULL && reader->ops != NULL && reader->ops->clear_state != NULL)
    reader->ops->clear_state (reader->state);
  g_free (reader->path);
  g_free (reader->display);
  g_free (reader->state);
  g_clear_pointer (&reader->input, trace_input_free);
  if (reader->line != NULL)
    g_string_free (reader->line, TRUE);
  if (reader->message != NULL)
    g_string_free (reader->message, TRUE);
  g_clear_pointer (&reader->meta, g_hash_table_unref);
  g_clear_pointer (&reader->streams, g_hash_table_unref);
  g_clear_error (&reader->failure);
  g_free (reader);
}

const char *
trace_reader_format (const TraceReader *reader)
{
  return reader->ops->name;
}

const char *
trace_reader_path (const TraceReader *reader)
{
  return reader->path;
}

guint64
trace_reader_skipped (const TraceReader *reader)
{
  return reader->skipped;
}

gboolean
trace_reader_issue_only (const TraceReader *reader)
{
  return reader->ops->issue_only;
}

guint64
trace_reader_lost (const TraceReader *reader)
{
  return reader->lost;
}

guint64
trace_reader_time_backwards (const TraceReader *reader)
{
  return reader->backwards;
}

guint64
trace_reader_time_backwards_max_ns (const TraceReader *reader)
{
  return reader->backwards_max_ns;
}

gboolean
trace_reader_genesis (const TraceReader *reader, gint64 *genesis_ns)
{
  g_return_val_if_fail (reader != NULL, FALSE);
  if (reader->has_genesis && genesis_ns != NULL)
    *genesis_ns = reader->genesis_ns;
  return reader->has_genesis;
}

const char *
trace_reader_meta (const TraceReader *reader, const char *key)
{
  return g_hash_table_lookup (reader->meta, key);
}

void
trace_reader_count_read (TraceReader *reader, guint64 n)
{
  reader->lineno += n;
}

void
trace_reader_count_skipped (TraceReader *reader, guint64 n)
{
  reader->skipped += n;
}

void
trace_reader_count_lost (TraceReader *reader, guint64 n)
{
  reader->lost += n;
}

void
trace_reader_set_genesis (TraceReader *reader, gint64 genesis_ns)
{
  reader->has_genesis = TRUE;
  reader->genesis_ns = genesis_ns;
}

void
trace_reader_set_meta (TraceReader *reader, const char *key, const char *value)
{
  g_hash_table_replace (reader->meta, g_strdup (key), g_strdup (value));
}

/* "# iosim-capture key=value key=value ..." */
static void
parse_meta_line (TraceReader *reader, const char *line, gsize len)
{
  static const char tag[] = "# iosim-capture";
  g_autofree char *copy = NULL;
  g_auto(GStrv) tokens = NULL;

  if (len < sizeof tag - 1 || memcmp (line, tag, sizeof tag - 1) != 0)
    return;
  copy = g_strndup (line + sizeof tag - 1, len - (sizeof tag - 1));
  tokens = g_strsplit_set (copy, " \t", -1);
  for (char **t = tokens; *t != NULL; t++)
    {
      char *eq = strchr (*t, '=');
      if (eq == NULL || eq == *t)
        continue;
      g_hash_table_replace (reader->meta, g_strndup (*t, (gsize) (eq - *t)), g_strdup (eq + 1));
    }
}

/* Next line into reader->line (without '\n' and '\r').  Returns 1 for a
 * line, 0 at end of input, -1 on error. */
static int
read_line (TraceReader *reader, GError **error)
{
  TraceInput *in = reader->input;

  g_string_truncate (reader->line, 0);
  reader->unterminated = FALSE;
  for (;;)
    {
      const guint8 *data;
      const guint8 *nl;
      gssize avail = trace_input_peek (in, 1, &data, error);

      if (avail < 0)
        return -1;
      if (avail == 0)
        break;
      nl = memchr (data, '\n', (gsize) avail);
      if (nl != NULL)
        {
          g_string_append_len (reader->line, (const char *) data, nl - data);
          trace_input_consume (in, (gsize) (nl - data) + 1);
          reader->lineno++;
          goto got_line;
        }
      g_string_append_len (reader->line, (const char *) data, avail);
      trace_input_consume (in, (gsize) avail);
      if (reader->line->len > TRACE_MAX_LINE)
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                       "%s:%" G_GUINT64_FORMAT ": line longer than %d bytes (not a text trace?)",
                       reader->display, reader->lineno + 1, TRACE_MAX_LINE);
          return -1;
        }
    }
  if (reader->line->len == 0)
    return 0;
  reader->lineno++;   /* last line without a newline */
  reader->unterminated = TRUE;

got_line:
  if (reader->line->len > 0 && reader->line->str[reader->line->len - 1] == '\r')
    g_string_truncate (reader->line, reader->line->len - 1);
  if (reader->line->len > TRACE_MAX_LINE)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "%s:%" G_GUINT64_FORMAT ": line longer than %d bytes (not a text trace?)",
                   reader->display, reader->lineno, TRACE_MAX_LINE);
      return -1;
    }
  if (memchr (reader->line->str, '\0', reader->line->len) != NULL)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "%s:%" G_GUINT64_FORMAT ": NUL byte in line (binary data, not a text trace)",
                   reader->display, reader->lineno);
      return -1;
    }
  return 1;
}

static gboolean
is_blank (const char *s, gsize len)
{
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isspace (s[i]))
      return FALSE;
  return TRUE;
}

static void
scan_head_meta (TraceReader *reader, const char *head, gsize len)
{
  const char *p = head;
  const char *end = head + len;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *eol = nl != NULL ? nl : end;
      if (*p == '#')
        parse_meta_line (reader, p, (gsize) (eol - p));
      p = eol + 1;
    }
}

/* The one place formats are recognised: binary magic numbers first (a
 * text probe could mistake binary data for nothing at all), then the text
 * probes on whole lines. */
static const TraceFormatOps *
sniff (const guint8 *bytes, gsize n_bytes, const char *text, gsize text_len, const char *path)
{
  const TraceFormatOps *best = NULL;
  int best_score = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i]->probe_bytes != NULL)
      {
        int score = formats[i]->probe_bytes (bytes, n_bytes, path);
        if (score > best_score)
          {
            best = formats[i];
            best_score = score;
          }
      }
  if (best != NULL)
    return best;
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i]->probe != NULL)
      {
        int score = formats[i]->probe (text, text_len, path);
        if (score > best_score)
          {
            best = formats[i];
            best_score = score;
          }
      }
  return best;
}

/* A path may stand for a set of files (blktrace per-CPU files): the set's
 * files in read order, and which format recognised it. */
static GPtrArray *
expand_path (const char *path, const TraceFormatOps *forced, const TraceFormatOps **expander)
{
  *expander = NULL;
  if (strcmp (path, "-") == 0)
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      GPtrArray *set;

      if (formats[i]->expand_path == NULL || (forced != NULL && forced != formats[i]))
        continue;
      set = formats[i]->expand_path (path);
      if (set != NULL)
        {
          g_assert (set->len > 0);
          *expander = formats[i];
          return set;
        }
    }
  return NULL;
}

/* The member of a set to sniff: blktrace leaves an empty file for every
 * CPU that saw no I/O, and an empty file tells no format. */
static const char *
first_nonempty (GPtrArray *set)
{
  for (guint i = 0; i < set->len; i++)
    {
      GStatBuf st;
      if (g_stat (set->pdata[i], &st) == 0 && st.st_size > 0)
        return set->pdata[i];
    }
  return set->pdata[0];
}

static gboolean
open_record_format (TraceReader *reader, const char *first_path, GPtrArray *set,
                    gboolean set_is_ours, GError **error)
{
  g_autoptr(GPtrArray) more = g_ptr_array_new ();

  if (set != NULL && set_is_ours)
    for (guint i = 0; i < set->len; i++)
      if (strcmp (set->pdata[i], first_path) != 0)
        g_ptr_array_add (more, set->pdata[i]);
  return reader->ops->open_records (reader, reader->state, g_steal_pointer (&reader->input),
                                    more, error);
}

TraceReader *
trace_reader_open (const char *path, const char *format, GError **error)
{
  g_autoptr(TraceReader) reader = NULL;
  g_autoptr(GPtrArray) set = NULL;
  const TraceFormatOps *expander = NULL;
  const char *first_path = path;
  g_autofree char *head = NULL;
  const guint8 *bytes;
  gssize avail;
  gsize head_len;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  reader = g_new0 (TraceReader, 1);
  reader->path = g_strdup (path);
  reader->display = g_strdup (strcmp (path, "-") == 0 ? "<stdin>" : path);
  reader->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  reader->streams = g_hash_table_new_full (time_stream_hash, time_stream_equal, NULL, g_free);
  reader->line = g_string_sized_new (256);
  reader->message = g_string_new (NULL);

  if (format != NULL)
    {
      reader->ops = find_format (format);
      if (reader->ops == NULL)
        {
          g_autofree char *known = g_strjoinv (", ", (char **) trace_formats ());
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT,
                       "%s: unknown trace format '%s' (known: %s)", reader->display, format, known);
          return NULL;
        }
    }

  set = expand_path (path, reader->ops, &expander);
  if (set != NULL)
    g_ptr_array_set_free_func (set, g_free);
  if (set != NULL && !g_file_test (path, G_FILE_TEST_EXISTS))
    first_path = first_nonempty (set);

  reader->input = trace_input_open (first_path, error);
  if (reader->input == NULL)
    return NULL;
  avail = trace_input_peek (reader->input, TRACE_HEAD_BYTES, &bytes, error);
  if (avail < 0)
    return NULL;

  /* Probe only whole lines, so no text format sees a cut record. */
  head_len = MIN ((gsize) avail, (gsize) TRACE_HEAD_MAX);
  if ((gsize) avail > head_len || !reader->input->eof)
    while (head_len > 0 && bytes[head_len - 1] != '\n')
      head_len--;
  head = g_strndup ((const char *) bytes, head_len);
  head_len = strlen (head);

  if (reader->ops == NULL)
    reader->ops = sniff (bytes, (gsize) avail, head, head_len, path);
  if (reader->ops == NULL)
    {
      g_autofree char *known = g_strjoinv (", ", (char **) trace_formats ());
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT,
                   "%s: cannot tell the trace format from its first lines "
                   "(known: %s; force one with --format)", reader->display, known);
      return NULL;
    }
  reader->state = g_malloc0 (MAX (reader->ops->state_size, 1));
  if (reader->ops->attach != NULL)
    reader->ops->attach (reader->state, reader->meta);
  if (reader->ops->read_record != NULL)
    {
      if (!open_record_format (reader, first_path, set, expander == reader->ops, error))
        return NULL;
      return g_steal_pointer (&reader);
    }
  scan_head_meta (reader, head, head_len);
  return g_steal_pointer (&reader);
}

static gboolean
fail_sticky (TraceReader *reader, GError *local, GError **error)
{
  reader->failure = g_error_copy (local);
  g_propagate_error (error, local);
  return FALSE;
}

/* Count @rec when it is earlier than the previous record of its stream.
 * Per CPU: blktrace's relay buffers and ftrace's ring buffers are per
 * CPU, each written in time order, while blkparse's and ftrace's merged
 * output may interleave CPUs out of order; other formats are one stream. */
static void
note_time (TraceReader *reader, const TraceRecord *rec)
{
  TimeStream key = { 0, -1, 0 };
  TimeStream *s;

  if (reader->ops->time_per_cpu)
    {
      key.dev = ((guint64) rec->dev_major << 32) | rec->dev_minor;
      key.cpu = rec->cpu;
    }
  s = g_hash_table_lookup (reader->streams, &key);
  if (s == NULL)
    {
      if (g_hash_table_size (reader->streams) >= TRACE_MAX_TIME_STREAMS)
        return;
      s = g_memdup2 (&key, sizeof key);
      s->last_ns = rec->time_ns;
      g_hash_table_add (reader->streams, s);
      return;
    }
  if (rec->time_ns < s->last_ns)
    {
      /* unsigned: the step may exceed G_MAXINT64 (iosim-csv times may be
       * negative) */
      guint64 step_ns = (guint64) s->last_ns - (guint64) rec->time_ns;

      reader->backwards++;
      reader->backwards_max_ns = MAX (reader->backwards_max_ns, step_ns);
    }
  s->last_ns = rec->time_ns;
}

/* A line format's record, from the line just read or queued from line
 * @rec->line: the extent check and time order, the same for every
 * format. */
static gboolean
accept_line_record (TraceReader *reader, const TraceRecord *rec, GError **error)
{
  GError *local = NULL;

  if (!trace_record_check_extent (rec, &local))
    {
      g_prefix_error (&local, "%s:%" G_GUINT64_FORMAT ": ", reader->display, rec->line);
      return fail_sticky (reader, local, error);
    }
  note_time (reader, rec);
  return TRUE;
}

/* A malformed last line without a newline is most likely a cut one. */
static void
append_cut_hint (GError *local)
{
  char *message = g_strconcat (local->message,
                               " (the last line, which has no newline: a truncated file?)", NULL);

  g_free (local->message);
  local->message = message;
}

static gboolean
ends_in_digit (const char *line, gsize len)
{
  return len > 0 && g_ascii_isdigit (line[len - 1]);
}

/* The input's last line had no newline: a file cut inside the last line's
 * final number still parses, as another record (a 40-byte write for a
 * 4096-byte one).  Such a line is refused unless the format can tell it
 * whole (TraceFormatOps.last_line_whole). */
static gboolean
refuse_cut_line (TraceReader *reader, const char *line, gsize len, GError **error)
{
  gboolean whole = reader->ops->last_line_whole != NULL
                   ? reader->ops->last_line_whole (line, len)
                   : !ends_in_digit (line, len);
  GError *local = NULL;

  if (whole)
    return FALSE;
  g_set_error (&local, TRACE_ERROR, TRACE_ERROR_PARSE,
               "%s:%" G_GUINT64_FORMAT ": the last line has no newline and ends in a number, "
               "which may have been cut short (truncated file?); end the line with a newline "
               "if it is complete", reader->display, reader->lineno);
  fail_sticky (reader, local, error);
  return TRUE;
}

static gboolean
next_from_records (TraceReader *reader, TraceRecord *out, GError **error)
{
  GError *local = NULL;

  memset (out, 0, sizeof *out);
  out->cpu = -1;
  switch (reader->ops->read_record (reader, reader->state, out, &local))
    {
    case TRACE_RECORD_OK:
      note_time (reader, out);
      return TRUE;
    case TRACE_RECORD_END:
      return FALSE;
    case TRACE_RECORD_ERROR:
    default:
      g_assert (local != NULL);
      return fail_sticky (reader, local, error);
    }
}

static gboolean next_record (TraceReader *reader, TraceRecord *out, GError **error);

gboolean
trace_reader_next (TraceReader *reader, TraceRecord *out, GError **error)
{
  g_return_val_if_fail (reader != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  reader->has_message = FALSE;
  if (!next_record (reader, out, error))
    return FALSE;
  if (out->action == TRACE_ACT_MESSAGE)
    {
      const char *text = reader->ops->message != NULL ? reader->ops->message (reader->state) : NULL;
      g_string_assign (reader->message, text != NULL ? text : out->comm);
      reader->has_message = TRUE;
    }
  return TRUE;
}

const char *
trace_reader_message (const TraceReader *reader)
{
  g_return_val_if_fail (reader != NULL, NULL);
  return reader->has_message ? reader->message->str : NULL;
}

static gboolean
next_record (TraceReader *reader, TraceRecord *out, GError **error)
{
  if (reader->failure != NULL)
    {
      g_propagate_error (error, g_error_copy (reader->failure));
      return FALSE;
    }
  if (reader->ops->read_record != NULL)
    return next_from_records (reader, out, error);

  for (;;)
    {
      GError *local = NULL;
      TraceLineResult result;
      const char *s;
      gsize len;
      int got;

      if (reader->ops->pending != NULL && reader->ops->pending (reader->state, FALSE, out))
        return accept_line_record (reader, out, error);
      got = read_line (reader, &local);
      if (got == 0)
        return reader->ops->pending != NULL && reader->ops->pending (reader->state, TRUE, out)
               && accept_line_record (reader, out, error);
      if (got < 0)
        return fail_sticky (reader, local, error);
      s = reader->line->str;
      len = reader->line->len;
      if (is_blank (s, len))
        {
          reader->skipped++;
          continue;
        }
      if (s[0] == '#')
        {
          parse_meta_line (reader, s, len);
          reader->skipped++;
          continue;
        }

      memset (out, 0, sizeof *out);
      out->cpu = -1;
      out->line = reader->lineno;
      result = reader->ops->parse_line (reader->state, reader->line->str, len, out, &local);
      if (reader->unterminated && (result == TRACE_LINE_RECORD || result == TRACE_LINE_QUEUED)
          && refuse_cut_line (reader, s, len, error))
        return FALSE;
      switch (result)
        {
        case TRACE_LINE_RECORD:
          return accept_line_record (reader, out, error);
        case TRACE_LINE_SKIP:
          reader->skipped++;
          continue;
        case TRACE_LINE_QUEUED:
          continue;
        case TRACE_LINE_ERROR:
        default:
          g_assert (local != NULL);
          g_prefix_error (&local, "%s:%" G_GUINT64_FORMAT ": ", reader->display, reader->lineno);
          if (reader->unterminated)
            append_cut_hint (local);
          return fail_sticky (reader, local, error);
        }
    }
}

/* ---- Writer ------------------------------------------------------------- */

/* blkparse HEADER "%D %2c %8s %5T.%9t %5p %2a %3d " then the tail of
 * process_default() (blkparse 1.2.0). */
void
trace_format_blkparse (const TraceRecord *rec, guint64 sequence, GString *out)
{
  char dev[32];
  char rwbs[8];
  const char *comm = rec->comm[0] != '\0' ? rec->comm : "(null)";
  gint64 t = rec->time_ns < 0 ? 0 : rec->time_ns;

  g_return_if_fail (rec->action < TRACE_ACT_N_ACTIONS);

  g_snprintf (dev, sizeof dev, "%3u,%-3u", rec->dev_major, rec->dev_minor);
  trace_rwbs_format (rec->rwbs, rwbs);
  g_string_append_printf (out, "%s %2d %8" G_GUINT64_FORMAT " %5" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT
                          " %5u %2s %3s ",
                          dev, rec->cpu < 0 ? 0 : rec->cpu,
                          rec->action == TRACE_ACT_MESSAGE ? 0 : sequence,
                          t / 1000000000, t % 1000000000, rec->pid,
                          trace_action_letters (rec->action), rwbs);
  switch (rec->action)
    {
    case TRACE_ACT_COMPLETE:
    case TRACE_ACT_REQUEUE:
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " + %u [%d]\n",
                              rec->sector, rec->nr_sectors, rec->error);
      break;
    case TRACE_ACT_PLUG:
      g_string_append_printf (out, "[%s]\n", comm);
      break;
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      g_string_append_printf (out, "[%s] %u\n", comm, rec->unplug_count);
      break;
    case TRACE_ACT_SPLIT:
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT " [%s]\n",
                              rec->sector, rec->new_sector, comm);
      break;
    case TRACE_ACT_REMAP:
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " + %u <- (%u,%u) %" G_GUINT64_FORMAT "\n",
                              rec->sector, rec->nr_sectors, rec->from_major, rec->from_minor,
                              rec->from_sector);
      break;
    case TRACE_ACT_MESSAGE:
      g_string_append_printf (out, "%s\n", rec->comm);
      break;
    default:
      g_string_append_printf (out, "%" G_GUINT64_FORMAT " + %u [%s]\n",
                              rec->sector, rec->nr_sectors, comm);
      break;
    }
}

static gint
compare_strings (gconstpointer a, gconstpointer b, gpointer unused)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

GStrv
trace_reader_meta_keys (const TraceReader *reader)
{
  g_autofree gpointer *keys = NULL;
  guint n = 0;
  GStrv out;

  keys = g_hash_table_get_keys_as_array (reader->meta, &n);
  out = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    out[i] = g_strdup (keys[i]);
  g_qsort_with_data (out, (gint) n, sizeof (char *), compare_strings, NULL);
  return out;
}

guint64
trace_reader_lines (const TraceReader *reader)
{
  return reader->lineno;
}

TraceLineResult
trace_line_fail (GError **error, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, TRACE_ERROR, TRACE_ERROR_PARSE, msg);
  return TRACE_LINE_ERROR;
}
