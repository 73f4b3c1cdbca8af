/* trace-published.c — readers for published block traces in CSV/ASCII
 * form (shared/reference/trace-formats.md §3, §5): "msr-csv" (SNIA MSR
 * Cambridge), "systor17-csv" (SNIA SYSTOR '17), "umass-spc" (UMass Trace
 * Repository, SPC format), "tencent-cbs" (SNIA IOTTA Tencent Cloud Block
 * Storage, 2018) and "disksim-ascii" (DiskSim/MQSim ASCII).
 *
 * One row is one I/O.  Where the row has a response time (MSR, SYSTOR)
 * the reader emits an issue (D) at the arrival and a completion (C) at
 * arrival + response, through a TraceReorder so that records come out in
 * time order (memory: the I/Os awaiting completion plus the rows of the
 * last second; a file more out of order than that is an error naming the
 * row).  A SYSTOR row with an empty Response gives its D only.  Traces
 * without completion times (SPC, Tencent CBS, DiskSim) give one Q per
 * row, in file order.  pid is 0, cpu -1.
 *
 * Devices: msr-csv dev = (index of the Hostname in order of first
 * appearance, DiskNumber), metadata "host.N" = Hostname, comm = Hostname;
 * systor17-csv dev = 0,LUN; umass-spc dev = 0,ASU; tencent-cbs dev =
 * 0,VolumeID; disksim-ascii dev = 0,devno.  Units, converted once: MSR Timestamp is a Windows FILETIME
 * (100 ns ticks since 1601) made Unix nanoseconds, ResponseTime 100 ns
 * ticks; SYSTOR Timestamp Unix seconds, Response seconds; SPC Timestamp
 * seconds since the trace start, LBA 512-byte sectors, Size bytes;
 * Tencent CBS Timestamp Unix seconds, Offset and Size 512-byte sectors,
 * IOType 0 read and 1 write (the README of the IOTTA trace set, "3. I/O
 * trace file format", and the ATC '20 paper it cites, "OSCA: An
 * Online-Model Based Cache Allocation Scheme in Cloud Block Storage
 * Systems"; the trace-utils parsers that read these files take the same
 * units: offset * 512, size * 512, read when IOType is 0); DiskSim times in
 * nanoseconds (the MQSim convention) when the first row's time is an
 * integer, in milliseconds (DiskSim's own, "%f") when it has a fraction:
 * the choice is the metadata "time_unit".  Byte offsets and sizes keep
 * their exact extent (TraceRecord head_bytes/length_bytes).
 */
#include "traces/trace-private.h"

#include <string.h>

#define CSV_MAX_FIELDS 16
#define MSR_MAX_HOSTS  4096
/* 1601-01-01 to 1970-01-01 in 100 ns ticks */
#define FILETIME_UNIX_EPOCH G_GUINT64_CONSTANT (116444736000000000)

typedef struct {
  const char *p;
  gsize       len;
} Field;

/* Fields of a comma-separated line, blanks around each trimmed; returns
 * the count (CSV_MAX_FIELDS + 1 for "more"). */
static guint
split_csv (const char *line, gsize len, Field *f)
{
  const char *p = line;
  const char *end = line + len;
  guint n = 0;

  for (;;)
    {
      const char *comma = memchr (p, ',', (gsize) (end - p));
      const char *fe = comma != NULL ? comma : end;
      const char *fs = p;
      if (n == CSV_MAX_FIELDS)
        return n + 1;
      while (fs < fe && (*fs == ' ' || *fs == '\t'))
        fs++;
      while (fe > fs && (fe[-1] == ' ' || fe[-1] == '\t'))
        fe--;
      f[n].p = fs;
      f[n].len = (gsize) (fe - fs);
      n++;
      if (comma == NULL)
        return n;
      p = comma + 1;
    }
}

/* Blank-separated tokens, as Fields. */
static guint
split_blank (const char *line, gsize len, Field *f, guint max)
{
  TraceCursor c;
  guint n = 0;

  trace_cursor_init (&c, line, len);
  for (;;)
    {
      const char *w;
      gsize wlen;
      if (!trace_cursor_word (&c, &w, &wlen))
        return n;
      if (n == max)
        return n + 1;
      f[n].p = w;
      f[n].len = wlen;
      n++;
    }
}

static gboolean
field_u64 (const Field *f, guint64 *out)
{
  TraceCursor c;

  trace_cursor_init (&c, f->p, f->len);
  return trace_cursor_u64 (&c, out) && c.p == c.end;
}

static gboolean
field_u32 (const Field *f, guint32 *out)
{
  guint64 v;

  if (!field_u64 (f, &v) || v > G_MAXUINT32)
    return FALSE;
  *out = (guint32) v;
  return TRUE;
}

/* "int[.frac]" in a unit of 10^@digits nanoseconds (9: seconds, 6:
 * milliseconds), exactly; at most @digits decimals. */
static gboolean
field_decimal_ns (const Field *f, int digits, gint64 *out)
{
  const char *p = f->p;
  const char *end = f->p + f->len;
  gint64 scale = 1;
  guint64 whole = 0;
  guint64 frac = 0;
  int nfrac = 0;

  for (int i = 0; i < digits; i++)
    scale *= 10;
  if (p == end || !g_ascii_isdigit (*p))
    return FALSE;
  for (; p < end && g_ascii_isdigit (*p); p++)
    {
      whole = whole * 10 + (guint64) (*p - '0');
      if (whole > (guint64) (G_MAXINT64 / scale) - 1)
        return FALSE;
    }
  if (p < end && *p == '.')
    {
      p++;
      for (; p < end && g_ascii_isdigit (*p); p++)
        {
          if (nfrac == digits)
            return FALSE;
          frac = frac * 10 + (guint64) (*p - '0');
          nfrac++;
        }
    }
  if (p != end)
    return FALSE;
  for (; nfrac < digits; nfrac++)
    frac *= 10;
  *out = (gint64) whole * scale + (gint64) frac;
  return TRUE;
}

static gboolean
field_is (const Field *f, const char *word)
{
  return f->len == strlen (word) && g_ascii_strncasecmp (f->p, word, f->len) == 0;
}

static gboolean
field_numeric (const Field *f)
{
  if (f->len == 0)
    return FALSE;
  for (gsize i = 0; i < f->len; i++)
    if (!g_ascii_isdigit (f->p[i]) && f->p[i] != '.')
      return FALSE;
  return TRUE;
}

/* printf arguments for "%.*s": a field as errors quote it, at most 64 bytes. */
#define QUOTE(f) (int) MIN ((f)->len, 64), (f)->p

/* The first line that is not a comment nor blank, in @head. */
static gboolean
first_data_line (const char *head, gsize len, const char **line, gsize *line_len)
{
  const char *p = head;
  const char *end = head + len;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *eol = nl != NULL ? nl : end;
      const char *q = p;
      while (q < eol && g_ascii_isspace (*q))
        q++;
      if (q < eol && *p != '#')
        {
          *line = p;
          *line_len = (gsize) (eol - p);
          if (*line_len > 0 && p[*line_len - 1] == '\r')
            (*line_len)--;
          return TRUE;
        }
      p = eol + 1;
    }
  return FALSE;
}

/* ---- With response times: D now, C later -------------------------------- */

typedef struct {
  TraceReorder  ro;
  GHashTable   *meta;
  GHashTable   *hosts;      /* msr-csv: Hostname -> index + 1 */
  guint         n_hosts;
} TimedState;

static void
timed_attach (gpointer state, GHashTable *meta)
{
  TimedState *st = state;

  trace_reorder_init (&st->ro, TRACE_REORDER_WINDOW_NS, TRACE_REORDER_LIMIT);
  st->meta = meta;
  st->hosts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
timed_clear (gpointer state)
{
  TimedState *st = state;

  trace_reorder_clear (&st->ro);
  g_clear_pointer (&st->hosts, g_hash_table_unref);
}

static gboolean
timed_pending (gpointer state, gboolean at_eof, TraceRecord *out)
{
  TimedState *st = state;

  return trace_reorder_pop (&st->ro, at_eof, out);
}

/* Queue @rec's issue and, with @response_ns >= 0, its completion. */
static TraceLineResult
queue_io (TimedState *st, TraceRecord *rec, gint64 response_ns, GError **error)
{
  TraceRecord done;

  rec->action = TRACE_ACT_ISSUE;
  /* Refused at its row, not when the reorder releases it. */
  if (!trace_record_check_extent (rec, error))
    return TRACE_LINE_ERROR;
  /* Several I/Os may be in flight at one sector (117 of the 1000 rows of
   * the MSR hm_0 sample): the row pairs D with C. */
  rec->io_tag = rec->line;
  if (response_ns >= 0 && response_ns > G_MAXINT64 - rec->time_ns)
    return trace_line_fail (error, "arrival + response time overflows");
  if (!trace_reorder_push (&st->ro, rec, TRUE, error))
    return TRACE_LINE_ERROR;
  if (response_ns < 0)
    return TRACE_LINE_QUEUED;
  done = *rec;
  done.action = TRACE_ACT_COMPLETE;
  done.time_ns += response_ns;
  if (!trace_reorder_push (&st->ro, &done, FALSE, error))
    return TRACE_LINE_ERROR;
  return TRACE_LINE_QUEUED;
}

static gboolean
set_extent (TraceRecord *rec, const Field *offset, const Field *size, GError **error)
{
  guint64 off, len;

  if (!field_u64 (offset, &off))
    {
      trace_line_fail (error, "Offset '%.*s' is not a byte count", QUOTE (offset));
      return FALSE;
    }
  if (size->len > 0 && size->p[0] == '-')
    {
      trace_line_fail (error, "Size '%.*s' is negative", QUOTE (size));
      return FALSE;
    }
  if (!field_u64 (size, &len) || len > G_MAXUINT32)
    {
      trace_line_fail (error, "Size '%.*s' is not a byte count below 4 GiB", QUOTE (size));
      return FALSE;
    }
  if (!trace_record_set_bytes (rec, off, len))
    {
      trace_line_fail (error, "Offset %" G_GUINT64_FORMAT " + Size %" G_GUINT64_FORMAT
                       " ends beyond the 64-bit byte range", off, len);
      return FALSE;
    }
  return TRUE;
}

/* MSR Cambridge: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime */

/* Index + 1 of the host, 0 with @error set past the limit.  Looked up in
 * place (the field NUL-terminated for the moment): no allocation per row. */
static guint32
msr_host (TimedState *st, const Field *name, GError **error)
{
  char *end = (char *) name->p + name->len;
  char saved = *end;
  gpointer v;

  *end = '\0';
  v = g_hash_table_lookup (st->hosts, name->p);
  if (v == NULL)
    {
      if (st->n_hosts >= MSR_MAX_HOSTS)
        trace_line_fail (error, "more than %u host names", MSR_MAX_HOSTS);
      else
        {
          g_hash_table_insert (st->hosts, g_strdup (name->p), GUINT_TO_POINTER (st->n_hosts + 1));
          g_hash_table_replace (st->meta, g_strdup_printf ("host.%u", st->n_hosts), g_strdup (name->p));
          v = GUINT_TO_POINTER (++st->n_hosts);
        }
    }
  *end = saved;
  return GPOINTER_TO_UINT (v);
}

static TraceLineResult
msr_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  TimedState *st = state;
  Field f[CSV_MAX_FIELDS];
  guint n = split_csv (line, len, f);
  guint64 filetime, ticks;
  guint32 host;

  if (n != 7)
    return trace_line_fail (error, "expected 7 comma-separated fields "
                 "(Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found %s%u",
                 n > CSV_MAX_FIELDS ? "more than " : "", MIN (n, CSV_MAX_FIELDS));
  if (field_is (&f[0], "Timestamp"))
    return TRACE_LINE_SKIP;   /* a header some copies carry */
  if (!field_u64 (&f[0], &filetime))
    return trace_line_fail (error, "Timestamp '%.*s' is not a FILETIME (100 ns ticks)", QUOTE (&f[0]));
  if (filetime < FILETIME_UNIX_EPOCH
      || (filetime - FILETIME_UNIX_EPOCH) > (guint64) G_MAXINT64 / 100)
    return trace_line_fail (error, "Timestamp '%.*s' is outside 1970..2262 as a FILETIME", QUOTE (&f[0]));
  out->time_ns = (gint64) (filetime - FILETIME_UNIX_EPOCH) * 100;
  if (f[1].len == 0)
    return trace_line_fail (error, "empty Hostname");
  host = msr_host (st, &f[1], error);
  if (host == 0)
    return TRACE_LINE_ERROR;
  out->dev_major = host - 1;
  trace_record_set_comm (out, f[1].p, f[1].len);
  if (!field_u32 (&f[2], &out->dev_minor))
    return trace_line_fail (error, "DiskNumber '%.*s' is not a number", QUOTE (&f[2]));
  if (field_is (&f[3], "Read"))
    out->rwbs = TRACE_RWBS_READ;
  else if (field_is (&f[3], "Write"))
    out->rwbs = TRACE_RWBS_WRITE;
  else
    return trace_line_fail (error, "Type '%.*s' is neither Read nor Write", QUOTE (&f[3]));
  if (!set_extent (out, &f[4], &f[5], error))
    return TRACE_LINE_ERROR;
  if (!field_u64 (&f[6], &ticks) || ticks > (guint64) G_MAXINT64 / 100)
    return trace_line_fail (error, "ResponseTime '%.*s' is not a count of 100 ns ticks", QUOTE (&f[6]));
  return queue_io (st, out, (gint64) ticks * 100, error);
}

static int
msr_probe (const char *head, gsize len, const char *path)
{
  Field f[CSV_MAX_FIELDS];
  const char *line;
  gsize n;

  if (!first_data_line (head, len, &line, &n))
    return 0;
  if (split_csv (line, n, f) != 7)
    return 0;
  if (field_is (&f[0], "Timestamp") && field_is (&f[1], "Hostname"))
    return 95;
  if (field_numeric (&f[0]) && (field_is (&f[3], "Read") || field_is (&f[3], "Write")))
    return 95;
  return g_str_has_suffix (path, ".csv") ? 10 : 0;
}

const TraceFormatOps trace_msr_csv_ops = {
  .name = "msr-csv",
  .probe = msr_probe,
  .state_size = sizeof (TimedState),
  .parse_line = msr_parse_line,
  .attach = timed_attach,
  .pending = timed_pending,
  .clear_state = timed_clear,
};

/* SYSTOR '17: Timestamp,Response,IOType,LUN,Offset,Size (with a header). */

static TraceLineResult
systor_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  TimedState *st = state;
  Field f[CSV_MAX_FIELDS];
  guint n = split_csv (line, len, f);
  gint64 response_ns = -1;

  if (n != 6)
    return trace_line_fail (error, "expected 6 comma-separated fields "
                 "(Timestamp,Response,IOType,LUN,Offset,Size), found %s%u",
                 n > CSV_MAX_FIELDS ? "more than " : "", MIN (n, CSV_MAX_FIELDS));
  if (field_is (&f[0], "Timestamp"))
    return TRACE_LINE_SKIP;   /* the header, also where files were concatenated */
  if (!field_decimal_ns (&f[0], 9, &out->time_ns))
    return trace_line_fail (error, "Timestamp '%.*s' is not Unix seconds", QUOTE (&f[0]));
  if (f[1].len > 0 && !field_decimal_ns (&f[1], 9, &response_ns))
    return trace_line_fail (error, "Response '%.*s' is not seconds", QUOTE (&f[1]));
  if (field_is (&f[2], "R") || field_is (&f[2], "Read"))
    out->rwbs = TRACE_RWBS_READ;
  else if (field_is (&f[2], "W") || field_is (&f[2], "Write"))
    out->rwbs = TRACE_RWBS_WRITE;
  else
    return trace_line_fail (error, "IOType '%.*s' is neither R nor W", QUOTE (&f[2]));
  out->dev_major = 0;
  if (!field_u32 (&f[3], &out->dev_minor))
    return trace_line_fail (error, "LUN '%.*s' is not a number", QUOTE (&f[3]));
  if (!set_extent (out, &f[4], &f[5], error))
    return TRACE_LINE_ERROR;
  return queue_io (st, out, response_ns, error);
}

static int
systor_probe (const char *head, gsize len, const char *path)
{
  Field f[CSV_MAX_FIELDS];
  const char *line;
  gsize n;

  if (!first_data_line (head, len, &line, &n))
    return 0;
  if (split_csv (line, n, f) != 6)
    return 0;
  if (field_is (&f[0], "Timestamp") && field_is (&f[1], "Response"))
    return 100;
  if (field_numeric (&f[0]) && memchr (f[0].p, '.', f[0].len) != NULL
      && (field_is (&f[2], "R") || field_is (&f[2], "W")))
    return 80;
  return g_str_has_suffix (path, ".csv") ? 10 : 0;
}

const TraceFormatOps trace_systor17_csv_ops = {
  .name = "systor17-csv",
  .probe = systor_probe,
  .state_size = sizeof (TimedState),
  .parse_line = systor_parse_line,
  .attach = timed_attach,
  .pending = timed_pending,
  .clear_state = timed_clear,
};

/* ---- Arrivals only ------------------------------------------------------- */

/* UMass / SPC: ASU,LBA,Size,Opcode,Timestamp[,optional fields...] */

static TraceLineResult
spc_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  Field f[CSV_MAX_FIELDS];
  guint n = split_csv (line, len, f);
  guint64 lba, size;

  (void) state;
  /* SPC 1.0.1 allows further fields after the fifth: ignored. */
  if (n < 5)
    return trace_line_fail (error, "expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found %u", n);
  if (!field_u32 (&f[0], &out->dev_minor))
    return trace_line_fail (error, "ASU '%.*s' is not a number", QUOTE (&f[0]));
  if (!field_u64 (&f[1], &lba))
    return trace_line_fail (error, "LBA '%.*s' is not a sector number", QUOTE (&f[1]));
  if (lba > TRACE_SECTOR_END_MAX)
    return trace_line_fail (error, "LBA %" G_GUINT64_FORMAT " is beyond the 64-bit byte range", lba);
  if (!field_u64 (&f[2], &size) || size > G_MAXUINT32)
    return trace_line_fail (error, "Size '%.*s' is not a byte count below 4 GiB", QUOTE (&f[2]));
  if (field_is (&f[3], "r"))
    out->rwbs = TRACE_RWBS_READ;
  else if (field_is (&f[3], "w"))
    out->rwbs = TRACE_RWBS_WRITE;
  else
    return trace_line_fail (error, "Opcode '%.*s' is neither r nor w", QUOTE (&f[3]));
  if (!field_decimal_ns (&f[4], 9, &out->time_ns))
    return trace_line_fail (error, "Timestamp '%.*s' is not seconds", QUOTE (&f[4]));
  if (!trace_record_set_bytes (out, lba * 512, size))
    return trace_line_fail (error, "LBA %" G_GUINT64_FORMAT " + Size %" G_GUINT64_FORMAT
                            " bytes ends beyond the 64-bit byte range", lba, size);
  out->action = TRACE_ACT_QUEUE;
  return TRACE_LINE_RECORD;
}

static int
spc_probe (const char *head, gsize len, const char *path)
{
  Field f[CSV_MAX_FIELDS];
  const char *line;
  gsize n;
  guint64 v;
  gint64 t;

  if (first_data_line (head, len, &line, &n)
      && split_csv (line, n, f) >= 5
      && field_u64 (&f[0], &v) && field_u64 (&f[1], &v) && field_u64 (&f[2], &v)
      && (field_is (&f[3], "r") || field_is (&f[3], "w"))
      && field_decimal_ns (&f[4], 9, &t))
    return 85;
  return g_str_has_suffix (path, ".spc") || g_str_has_suffix (path, ".spc.gz") ? 40 : 0;
}

const TraceFormatOps trace_umass_spc_ops = {
  .name = "umass-spc",
  .probe = spc_probe,
  .issue_only = TRUE,
  .state_size = 1,
  .parse_line = spc_parse_line,
};

/* Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID (offset and size in
 * sectors, IOType 0 read / 1 write). */

/* Unix seconds from 2000 to 2100: what the probe takes for a CBS
 * timestamp (the published traces are from October 2018), so that other
 * five-number CSV files are not claimed. */
#define TENCENT_PROBE_MIN_S G_GUINT64_CONSTANT (946684800)
#define TENCENT_PROBE_MAX_S G_GUINT64_CONSTANT (4102444800)

static TraceLineResult
tencent_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  Field f[CSV_MAX_FIELDS];
  guint n = split_csv (line, len, f);
  guint64 offset;
  guint32 size;

  (void) state;
  if (n != 5)
    return trace_line_fail (error, "expected 5 comma-separated fields "
                 "(Timestamp,Offset,Size,IOType,VolumeID), found %s%u",
                 n > CSV_MAX_FIELDS ? "more than " : "", MIN (n, CSV_MAX_FIELDS));
  if (field_is (&f[0], "Timestamp"))
    return TRACE_LINE_SKIP;   /* the README's header, where a copy carries it */
  if (!field_decimal_ns (&f[0], 9, &out->time_ns))
    return trace_line_fail (error, "Timestamp '%.*s' is not Unix seconds", QUOTE (&f[0]));
  if (!field_u64 (&f[1], &offset))
    return trace_line_fail (error, "Offset '%.*s' is not a sector number", QUOTE (&f[1]));
  if (!field_u32 (&f[2], &size))
    return trace_line_fail (error, "Size '%.*s' is not a sector count below 2^32", QUOTE (&f[2]));
  if (offset > TRACE_SECTOR_END_MAX || size > TRACE_SECTOR_END_MAX - offset)
    return trace_line_fail (error, "Offset %" G_GUINT64_FORMAT " + Size %u sectors ends beyond "
                            "the 64-bit byte range", offset, size);
  if (field_is (&f[3], "0"))
    out->rwbs = TRACE_RWBS_READ;
  else if (field_is (&f[3], "1"))
    out->rwbs = TRACE_RWBS_WRITE;
  else
    return trace_line_fail (error, "IOType '%.*s' is neither 0 (read) nor 1 (write)", QUOTE (&f[3]));
  if (!field_u32 (&f[4], &out->dev_minor))
    return trace_line_fail (error, "VolumeID '%.*s' is not a number below 2^32", QUOTE (&f[4]));
  out->sector = offset;
  out->nr_sectors = size;
  out->action = TRACE_ACT_QUEUE;
  return TRACE_LINE_RECORD;
}

static int
tencent_probe (const char *head, gsize len, const char *path)
{
  Field f[CSV_MAX_FIELDS];
  const char *line;
  gsize n;
  guint64 v;
  gint64 t;

  (void) path;
  if (!first_data_line (head, len, &line, &n) || split_csv (line, n, f) != 5)
    return 0;
  if (field_is (&f[0], "Timestamp") && field_is (&f[1], "Offset") && field_is (&f[3], "IOType"))
    return 100;
  if (field_decimal_ns (&f[0], 9, &t)
      && (guint64) t / 1000000000 >= TENCENT_PROBE_MIN_S && (guint64) t / 1000000000 < TENCENT_PROBE_MAX_S
      && field_u64 (&f[1], &v) && field_u64 (&f[2], &v) && field_u64 (&f[4], &v)
      && (field_is (&f[3], "0") || field_is (&f[3], "1")))
    return 85;
  return 0;
}

const TraceFormatOps trace_tencent_cbs_ops = {
  .name = "tencent-cbs",
  .probe = tencent_probe,
  .state_size = 1,
  .parse_line = tencent_parse_line,
};

/* DiskSim ASCII: arrival_time devno start_sector size_sectors flags */

typedef struct {
  GHashTable *meta;
  int         time_digits;   /* 0 until the first row, then 6 (ms) or -1 (integer ns) */
} DisksimState;

static void
disksim_attach (gpointer state, GHashTable *meta)
{
  DisksimState *st = state;

  st->meta = meta;
}

static TraceLineResult
disksim_parse_line (gpointer state, char *line, gsize len, TraceRecord *out, GError **error)
{
  DisksimState *st = state;
  Field f[6];
  guint n = split_blank (line, len, f, 5);
  guint64 flags;

  if (n != 5)
    return trace_line_fail (error, "expected 5 fields (arrival_time devno start_sector size_sectors flags), found %s%u",
                 n > 5 ? "more than " : "", MIN (n, 5));
  if (st->time_digits == 0)
    {
      /* The first row decides: "%f" milliseconds (DiskSim) or integer
       * nanoseconds (MQSim). */
      gboolean ms = memchr (f[0].p, '.', f[0].len) != NULL;
      st->time_digits = ms ? 6 : -1;
      g_hash_table_replace (st->meta, g_strdup ("time_unit"), g_strdup (ms ? "ms" : "ns"));
    }
  if (st->time_digits == 6)
    {
      if (!field_decimal_ns (&f[0], 6, &out->time_ns))
        return trace_line_fail (error, "arrival time '%.*s' is not milliseconds", QUOTE (&f[0]));
    }
  else
    {
      guint64 ns;
      if (!field_u64 (&f[0], &ns) || ns > (guint64) G_MAXINT64)
        return trace_line_fail (error, "arrival time '%.*s' is not integer nanoseconds "
                     "(the first row's time had no fraction)", QUOTE (&f[0]));
      out->time_ns = (gint64) ns;
    }
  if (!field_u32 (&f[1], &out->dev_minor))
    return trace_line_fail (error, "devno '%.*s' is not a number", QUOTE (&f[1]));
  if (!field_u64 (&f[2], &out->sector))
    return trace_line_fail (error, "start sector '%.*s' is not a number", QUOTE (&f[2]));
  if (!field_u32 (&f[3], &out->nr_sectors))
    return trace_line_fail (error, "size '%.*s' is not a sector count", QUOTE (&f[3]));
  if (!field_u64 (&f[4], &flags))
    return trace_line_fail (error, "flags '%.*s' are not a number", QUOTE (&f[4]));
  /* DiskSim: bit 0 set = read (MQSim: 1 read, 0 write). */
  out->rwbs = (flags & 1) ? TRACE_RWBS_READ : TRACE_RWBS_WRITE;
  out->action = TRACE_ACT_QUEUE;
  return TRACE_LINE_RECORD;
}

/* The last field is the flags, which DiskSim and MQSim write as one digit
 * (the read bit; MQSim 0 or 1): a cut inside the row leaves four fields
 * or none of the flags, never another one-digit value.  MQSim's published
 * traces end without a newline (wsrch-small.trace). */
static gboolean
disksim_last_line_whole (const char *line, gsize len)
{
  Field f[6];

  return split_blank (line, len, f, 5) == 5 && f[4].len == 1;
}

static int
disksim_probe (const char *head, gsize len, const char *path)
{
  Field f[6];
  const char *line;
  gsize n;
  guint64 v;

  (void) path;
  if (first_data_line (head, len, &line, &n)
      && split_blank (line, n, f, 5) == 5
      && field_numeric (&f[0]) && g_ascii_isdigit (f[0].p[0])
      && field_u64 (&f[1], &v) && field_u64 (&f[2], &v) && field_u64 (&f[3], &v) && field_u64 (&f[4], &v))
    return 60;
  return 0;
}

const TraceFormatOps trace_disksim_ascii_ops = {
  .name = "disksim-ascii",
  .probe = disksim_probe,
  .issue_only = TRUE,
  .state_size = sizeof (DisksimState),
  .parse_line = disksim_parse_line,
  .last_line_whole = disksim_last_line_whole,
  .attach = disksim_attach,
};
