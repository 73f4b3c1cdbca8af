/* trace-blktrace.c — the binary blktrace reader: struct blk_io_trace
 * (version 7) and, through a small adapter, struct blk_io_trace2 (version
 * 8: 64-byte header, pid before a 64-bit action word whose category bits
 * 16-22 add zone operations and write-zeroes).  Follows the kernel's
 * include/uapi/linux/blktrace_api.h and kernel/trace/blktrace.c, blkparse
 * 1.2.0 (RWBS, notify handling, genesis) and fio's blktrace.c (byte order
 * from the magic); shared/reference/trace-formats.md §1.1-1.4.
 *
 * One cursor per input file: per-CPU files NAME.blktrace.N (any set, gaps
 * allowed, each record's own cpu field trusted) or one merged dump
 * (blkparse -d).  Each cursor holds its next output record; a min-heap on
 * (time, device, cpu, file) merges them.  Notify records are consumed as
 * the cursors advance: PROCESS fills a pid -> comm table (applied when a
 * record is returned), TIMESTAMP gives the wall clock at genesis, MESSAGE
 * becomes a TRACE_ACT_MESSAGE record.  Each file's byte order comes from
 * its first magic; any version other than 7 or 8 is refused, naming the
 * file, byte offset and version.  Memory: one buffer per file plus the
 * pid and (device, cpu) tables.
 */
#include "traces/trace-private.h"
#include "traces/trace-blktrace.h"

#include <stdarg.h>
#include <string.h>

typedef struct {
  TraceInput *in;
  guint       index;        /* position in the set: the last tie-break */
  gboolean    order_known;
  gboolean    swap;         /* the file is in the other byte order */
  guint64     records;      /* records read from this file, notes included */
  gboolean    has_head;
  TraceRecord head;         /* the next record this file contributes */
  GString    *message;      /* head is a message: its whole text */
} BtCursor;

typedef struct {
  BtCursor   *cursors;
  guint       n_cursors;
  guint      *heap;          /* indices of cursors with a head */
  guint       heap_len;
  gint        pending;       /* cursor whose head went out last, -1: none */
  GHashTable *comms;         /* pid -> comm (g_strdup) */
  GHashTable *sequences;     /* (device << 32 | cpu) -> BtSeq */
  gboolean    have_timestamp;
  gint64      timestamp_realtime_ns;
  gint64      timestamp_mono_ns;
  gboolean    start_meta_done;
  GString    *message;       /* the message record that went out last */
} BtState;

typedef struct {
  guint64 key;               /* device << 32 | cpu */
  guint32 last;              /* last sequence number seen */
} BtSeq;

/* One record as the file gives it, in host order. */
typedef struct {
  guint32       sequence;
  guint64       time;
  guint64       sector;
  guint32       bytes;
  guint64       action;     /* version 7 widened: category bits from 16 on */
  guint32       pid;
  guint32       device;
  guint32       cpu;
  guint16       error;
  const guint8 *pdu;
  guint16       pdu_len;
} BtRaw;

/* ---- Byte order --------------------------------------------------------- */

static inline guint16
rd16 (const guint8 *p, gboolean swap)
{
  guint16 v;
  memcpy (&v, p, sizeof v);
  return swap ? GUINT16_SWAP_LE_BE (v) : v;
}

static inline guint32
rd32 (const guint8 *p, gboolean swap)
{
  guint32 v;
  memcpy (&v, p, sizeof v);
  return swap ? GUINT32_SWAP_LE_BE (v) : v;
}

static inline guint64
rd64 (const guint8 *p, gboolean swap)
{
  guint64 v;
  memcpy (&v, p, sizeof v);
  return swap ? GUINT64_SWAP_LE_BE (v) : v;
}

/* The payloads of U, X and A are big-endian whatever the host (§1.4). */
static inline guint32
be32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, sizeof v);
  return GUINT32_FROM_BE (v);
}

static inline guint64
be64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_BE (v);
}

/* ---- Errors ------------------------------------------------------------- */

static TraceRecordResult G_GNUC_PRINTF (5, 6)
bt_fail (GError **error, int code, const BtCursor *c, guint64 offset, const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list args;

  va_start (args, fmt);
  msg = g_strdup_vprintf (fmt, args);
  va_end (args);
  g_set_error (error, TRACE_ERROR, code, "%s: byte offset %" G_GUINT64_FORMAT ": %s",
               trace_input_name (c->in), offset, msg);
  return TRACE_RECORD_ERROR;
}

/* ---- Sniffing and sets -------------------------------------------------- */

static gboolean
is_magic (guint32 word)
{
  return (word & BT_MAGIC_MASK) == BT_MAGIC
         || (GUINT32_SWAP_LE_BE (word) & BT_MAGIC_MASK) == BT_MAGIC;
}

/* Any version scores: an unknown one is then refused with its number
 * rather than reported as an unknown format. */
static int
blktrace_probe_bytes (const guint8 *head, gsize len, const char *path)
{
  return len >= 4 && is_magic (rd32 (head, FALSE)) ? 100 : 0;
}

static gboolean
all_digits (const char *s)
{
  if (*s == '\0')
    return FALSE;
  for (; *s != '\0'; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

static int
compare_cpu_suffix (gconstpointer a, gconstpointer b)
{
  const char *x = strrchr (*(char *const *) a, '.') + 1;
  const char *y = strrchr (*(char *const *) b, '.') + 1;
  guint64 cx = g_ascii_strtoull (x, NULL, 10);
  guint64 cy = g_ascii_strtoull (y, NULL, 10);
  return cx < cy ? -1 : cx > cy;
}

static GPtrArray *expand_set (const char *path);

/* "DIR/NAME.blktrace.N", the prefix "DIR/NAME.blktrace", or, where no
 * file DIR/NAME exists, the device name "DIR/NAME" as `blkparse -i NAME`
 * takes it (blkparse.c setup_file: NAME.blktrace.CPU): every
 * NAME.blktrace.<digits> in DIR, by CPU number (blkparse's name_fixup, but
 * without stopping at the first missing number). */
static GPtrArray *
blktrace_expand_path (const char *path)
{
  GPtrArray *set = expand_set (path);

  if (set == NULL && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *prefix = g_strconcat (path, ".blktrace", NULL);
      set = expand_set (prefix);
    }
  return set;
}

static GPtrArray *
expand_set (const char *path)
{
  static const char tag[] = ".blktrace";
  const char *slash = strrchr (path, '/');
  const char *base = slash != NULL ? slash + 1 : path;
  g_autofree char *dir_prefix = g_strndup (path, (gsize) (base - path));
  g_autofree char *stem = NULL;
  g_autoptr(GDir) dir = NULL;
  GPtrArray *set;
  const char *name;
  const char *found = strstr (base, tag);

  if (found == NULL)
    return NULL;
  /* The tag must end the name or be followed by ".<digits>"; a file that
   * is itself called NAME.blktrace (a dump) is just that file. */
  if (found[sizeof tag - 1] == '\0')
    {
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return NULL;
    }
  else if (!(found[sizeof tag - 1] == '.' && all_digits (found + sizeof tag)))
    return NULL;
  stem = g_strndup (base, (gsize) (found - base) + sizeof tag - 1);
  dir = g_dir_open (dir_prefix[0] != '\0' ? dir_prefix : ".", 0, NULL);
  if (dir == NULL)
    return NULL;
  set = g_ptr_array_new ();
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, stem) && name[strlen (stem)] == '.'
        && all_digits (name + strlen (stem) + 1))
      g_ptr_array_add (set, g_strconcat (dir_prefix, name, NULL));
  if (set->len == 0)
    {
      g_ptr_array_free (set, TRUE);
      return NULL;
    }
  g_ptr_array_sort (set, compare_cpu_suffix);
  return set;
}

/* ---- Decoding ----------------------------------------------------------- */

static const TraceAction action_of_code[] = {
  [BT_TA_QUEUE]        = TRACE_ACT_QUEUE,
  [BT_TA_BACKMERGE]    = TRACE_ACT_BACKMERGE,
  [BT_TA_FRONTMERGE]   = TRACE_ACT_FRONTMERGE,
  [BT_TA_GETRQ]        = TRACE_ACT_GETRQ,
  [BT_TA_SLEEPRQ]      = TRACE_ACT_SLEEPRQ,
  [BT_TA_REQUEUE]      = TRACE_ACT_REQUEUE,
  [BT_TA_ISSUE]        = TRACE_ACT_ISSUE,
  [BT_TA_COMPLETE]     = TRACE_ACT_COMPLETE,
  [BT_TA_PLUG]         = TRACE_ACT_PLUG,
  [BT_TA_UNPLUG_IO]    = TRACE_ACT_UNPLUG_IO,
  [BT_TA_UNPLUG_TIMER] = TRACE_ACT_UNPLUG_TIMER,
  [BT_TA_INSERT]       = TRACE_ACT_INSERT,
  [BT_TA_SPLIT]        = TRACE_ACT_SPLIT,
  [BT_TA_BOUNCE]       = TRACE_ACT_BOUNCE,
  [BT_TA_REMAP]        = TRACE_ACT_REMAP,
  [BT_TA_ABORT]        = TRACE_ACT_ABORT,
  [BT_TA_DRV_DATA]     = TRACE_ACT_DRV_DATA,
  [BT_TA_ZONE_PLUG]    = TRACE_ACT_ZONE_PLUG,
  [BT_TA_ZONE_UNPLUG]  = TRACE_ACT_ZONE_UNPLUG,
};

/* blkparse's fill_rwbs(): a direction of R needs data, else N. */
static guint32
rwbs_of (guint64 action, guint32 bytes)
{
  guint32 cat = (guint32) (action >> BT_TC_SHIFT) & 0xffff;
  guint64 cat2 = action >> BT_TC_SHIFT;
  guint32 rwbs = 0;

  if (cat & BT_TC_FLUSH)
    rwbs |= TRACE_RWBS_FLUSH;
  if (cat & BT_TC_DISCARD)
    rwbs |= TRACE_RWBS_DISCARD;
  else if ((cat & BT_TC_WRITE) || (cat2 & (BT_TC2_ZONE_APPEND | BT_TC2_WRITE_ZEROES)))
    rwbs |= TRACE_RWBS_WRITE;
  else if (bytes > 0)
    rwbs |= TRACE_RWBS_READ;
  else
    rwbs |= TRACE_RWBS_NONE;
  if (cat & BT_TC_FUA)
    rwbs |= TRACE_RWBS_FUA;
  if (cat & BT_TC_AHEAD)
    rwbs |= TRACE_RWBS_AHEAD;
  if (cat & BT_TC_SYNC)
    rwbs |= TRACE_RWBS_SYNC;
  if (cat & BT_TC_META)
    rwbs |= TRACE_RWBS_META;
  return rwbs;
}

/* The version-8 adapter: both headers into one BtRaw (version 7's 32-bit
 * action is the low half of version 8's). */
static void
decode_header (const guint8 *p, int version, gboolean swap, BtRaw *raw)
{
  if (version == BT_VERSION_7)
    {
      raw->sequence = rd32 (p + BT7_SEQUENCE, swap);
      raw->time = rd64 (p + BT7_TIME, swap);
      raw->sector = rd64 (p + BT7_SECTOR, swap);
      raw->bytes = rd32 (p + BT7_BYTES, swap);
      raw->action = rd32 (p + BT7_ACTION, swap);
      raw->pid = rd32 (p + BT7_PID, swap);
      raw->device = rd32 (p + BT7_DEVICE, swap);
      raw->cpu = rd32 (p + BT7_CPU, swap);
      raw->error = rd16 (p + BT7_ERROR, swap);
      raw->pdu_len = rd16 (p + BT7_PDU_LEN, swap);
      raw->pdu = p + BT_HEADER_7;
    }
  else
    {
      raw->sequence = rd32 (p + BT8_SEQUENCE, swap);
      raw->time = rd64 (p + BT8_TIME, swap);
      raw->sector = rd64 (p + BT8_SECTOR, swap);
      raw->bytes = rd32 (p + BT8_BYTES, swap);
      raw->pid = rd32 (p + BT8_PID, swap);
      raw->action = rd64 (p + BT8_ACTION, swap);
      raw->device = rd32 (p + BT8_DEVICE, swap);
      raw->cpu = rd32 (p + BT8_CPU, swap);
      raw->error = rd16 (p + BT8_ERROR, swap);
      raw->pdu_len = rd16 (p + BT8_PDU_LEN, swap);
      raw->pdu = p + BT_HEADER_8;
    }
}

static void
copy_text (char *dst, gsize dst_size, const guint8 *src, gsize len)
{
  const guint8 *nul = memchr (src, '\0', len);
  gsize n = MIN (nul != NULL ? (gsize) (nul - src) : len, dst_size - 1);

  memcpy (dst, src, n);
  dst[n] = '\0';
}

static void
update_start_meta (TraceReader *reader, BtState *st)
{
  gint64 genesis;
  gint64 at_genesis;
  char value[64];

  if (st->start_meta_done || !st->have_timestamp || !trace_reader_genesis (reader, &genesis))
    return;
  /* blkparse's correct_abs_start_time(): the wall clock at genesis. */
  at_genesis = st->timestamp_realtime_ns + (genesis - st->timestamp_mono_ns);
  g_snprintf (value, sizeof value, "%" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT,
              at_genesis / 1000000000, ABS (at_genesis % 1000000000));
  trace_reader_set_meta (reader, "start_realtime", value);
  st->start_meta_done = TRUE;
}

/* PROCESS and TIMESTAMP notes change state only; TRUE when @raw was one. */
static gboolean
apply_note (TraceReader *reader, BtState *st, const BtCursor *c, guint code,
            const guint8 *payload, gsize payload_len)
{
  switch (code)
    {
    case BT_TN_PROCESS:
      {
        char comm[TRACE_COMM_MAX];
        copy_text (comm, sizeof comm, payload, payload_len);
        g_hash_table_replace (st->comms, GUINT_TO_POINTER (c->head.pid), g_strdup (comm));
        return TRUE;
      }
    case BT_TN_TIMESTAMP:
      if (payload_len >= 8)
        {
          st->have_timestamp = TRUE;
          st->timestamp_realtime_ns = (gint64) rd32 (payload, c->swap) * 1000000000
                                      + rd32 (payload + 4, c->swap);
          st->timestamp_mono_ns = c->head.time_ns;
          update_start_meta (reader, st);
        }
      return TRUE;
    case BT_TN_MESSAGE:
      return FALSE;
    default:
      return TRUE;   /* unknown note: skipped, counted */
    }
}

/* Gaps in the kernel's per-device, per-CPU counter are lost events
 * (relay buffer overruns); a sequence that goes back is a new trace
 * session or another file of the same CPU, not a loss. */
static void
check_sequence (TraceReader *reader, BtState *st, const BtRaw *raw)
{
  guint64 key = ((guint64) raw->device << 32) | raw->cpu;
  BtSeq *seq = g_hash_table_lookup (st->sequences, &key);

  if (seq == NULL)
    {
      seq = g_new (BtSeq, 1);
      seq->key = key;
      seq->last = raw->sequence;
      g_hash_table_insert (st->sequences, &seq->key, seq);
      return;
    }
  if ((guint64) raw->sequence > (guint64) seq->last + 1)
    trace_reader_count_lost (reader, (guint64) raw->sequence - seq->last - 1);
  seq->last = raw->sequence;
}

/* The payload fields of U/UT, X and A (§1.4); FALSE when too short. */
static gboolean
decode_payload (TraceRecord *rec, const guint8 *payload, gsize len)
{
  switch (rec->action)
    {
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      if (len < 8)
        return FALSE;
      rec->unplug_count = (guint32) MIN (be64 (payload), (guint64) G_MAXUINT32);
      return TRUE;
    case TRACE_ACT_SPLIT:
      if (len < 8)
        return FALSE;
      rec->new_sector = be64 (payload);
      return TRUE;
    case TRACE_ACT_REMAP:
      {
        guint32 from;
        if (len < BT_REMAP_LEN)
          return FALSE;
        from = be32 (payload);
        rec->from_major = from >> BT_MINOR_BITS;
        rec->from_minor = from & BT_MINOR_MASK;
        rec->from_sector = be64 (payload + 8);
        return TRUE;
      }
    default:
      return TRUE;   /* PC command bytes, driver data: not kept */
    }
}

static gsize
payload_need (TraceAction action)
{
  switch (action)
    {
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
    case TRACE_ACT_SPLIT:
      return 8;
    case TRACE_ACT_REMAP:
      return BT_REMAP_LEN;
    default:
      return 0;
    }
}

/* Read the header of the record at the cursor: its version and total
 * size, with every check that names the offset. */
static TraceRecordResult
peek_record (BtCursor *c, const guint8 **p, int *version, gsize *total, GError **error)
{
  guint64 off = trace_input_offset (c->in);
  int code = c->records == 0 ? TRACE_ERROR_FORMAT : TRACE_ERROR_PARSE;
  gssize n = trace_input_peek (c->in, 4, p, error);
  guint32 magic;
  gsize header;

  if (n < 0)
    return TRACE_RECORD_ERROR;
  if (n == 0)
    return TRACE_RECORD_END;
  if (n < 4)
    return bt_fail (error, code, c, off,
                    "truncated record: %zd byte(s) where a 4-byte magic should start", n);
  magic = rd32 (*p, FALSE);
  if (!c->order_known)
    {
      if (!is_magic (magic))
        return bt_fail (error, code, c, off, "not a blktrace record (magic 0x%08x, expected 0x%08x "
                        "with the version in the low byte, in either byte order)",
                        magic, BT_MAGIC | BT_VERSION_7);
      c->swap = (magic & BT_MAGIC_MASK) != BT_MAGIC;
      c->order_known = TRUE;
    }
  magic = rd32 (*p, c->swap);
  if ((magic & BT_MAGIC_MASK) != BT_MAGIC)
    return bt_fail (error, code, c, off, "bad magic 0x%08x (corrupt file, or a record cut "
                    "short before this one)", magic);
  *version = (int) (magic & 0xff);
  if (*version != BT_VERSION_7 && *version != BT_VERSION_8)
    return bt_fail (error, code, c, off, "blktrace version %d is not supported "
                    "(versions 7 and 8 are)", *version);
  header = *version == BT_VERSION_7 ? BT_HEADER_7 : BT_HEADER_8;
  n = trace_input_peek (c->in, header, p, error);
  if (n < 0)
    return TRACE_RECORD_ERROR;
  if ((gsize) n < header)
    return bt_fail (error, TRACE_ERROR_PARSE, c, off,
                    "truncated record: the version-%d header needs %zu bytes, %zd left",
                    *version, header, n);
  *total = header + rd16 (*p + (*version == BT_VERSION_7 ? BT7_PDU_LEN : BT8_PDU_LEN), c->swap);
  n = trace_input_peek (c->in, *total, p, error);
  if (n < 0)
    return TRACE_RECORD_ERROR;
  if ((gsize) n < *total)
    return bt_fail (error, TRACE_ERROR_PARSE, c, off,
                    "truncated record: header and payload need %zu bytes, %zd left", *total, n);
  return TRACE_RECORD_OK;
}

/* Fill c->head from @raw; TRACE_RECORD_END here means "not an output
 * record" (a note or an unknown action), to be skipped. */
static TraceRecordResult
decode_record (TraceReader *reader, BtState *st, BtCursor *c, const BtRaw *raw,
               guint64 off, GError **error)
{
  TraceRecord *rec = &c->head;
  guint32 what = (guint32) (raw->action & 0xffff);
  guint code = what & ~BT_TA_CGROUP;
  guint32 cat = (guint32) (raw->action >> BT_TC_SHIFT) & 0xffff;
  const guint8 *payload = raw->pdu;
  gsize payload_len = raw->pdu_len;
  GError *local = NULL;

  memset (rec, 0, sizeof *rec);
  if (raw->time > (guint64) G_MAXINT64)
    return bt_fail (error, TRACE_ERROR_PARSE, c, off, "time %" G_GUINT64_FORMAT " ns out of range", raw->time);
  if (raw->cpu > (guint32) G_MAXINT32)
    return bt_fail (error, TRACE_ERROR_PARSE, c, off, "cpu %u out of range", raw->cpu);
  if (what & BT_TA_CGROUP)
    {
      if (payload_len < 8)
        return bt_fail (error, TRACE_ERROR_PARSE, c, off,
                        "the cgroup flag is set but the payload has only %zu byte(s)", payload_len);
      rec->cgroup_id = rd64 (payload, c->swap);
      payload += 8;
      payload_len -= 8;
    }
  rec->time_ns = (gint64) raw->time;
  rec->dev_major = raw->device >> BT_MINOR_BITS;
  rec->dev_minor = raw->device & BT_MINOR_MASK;
  rec->cpu = (gint32) raw->cpu;
  rec->pid = raw->pid;
  rec->sector = raw->sector;
  rec->nr_sectors = raw->bytes >> 9;
  rec->error = (gint16) raw->error;
  rec->sequence = raw->sequence;
  rec->rwbs = rwbs_of (raw->action, raw->bytes);
  rec->line = c->records;

  if (cat & BT_TC_NOTIFY)
    {
      if (apply_note (reader, st, c, code, payload, payload_len))
        return TRACE_RECORD_END;
      rec->action = TRACE_ACT_MESSAGE;
      copy_text (rec->comm, sizeof rec->comm, payload, payload_len);
      /* The comm holds 31 bytes; trace_reader_message gives it all. */
      if (c->message == NULL)
        c->message = g_string_new (NULL);
      g_string_truncate (c->message, 0);
      {
        const guint8 *nul = memchr (payload, '\0', payload_len);
        g_string_append_len (c->message, (const char *) payload,
                             (gssize) (nul != NULL ? (gsize) (nul - payload) : payload_len));
      }
      return TRACE_RECORD_OK;
    }
  if (code == 0 || code >= G_N_ELEMENTS (action_of_code))
    return TRACE_RECORD_END;
  rec->action = action_of_code[code];
  if (!decode_payload (rec, payload, payload_len))
    return bt_fail (error, TRACE_ERROR_PARSE, c, off,
                    "%s record with a %zu-byte payload (needs %zu)",
                    trace_action_letters (rec->action), payload_len, payload_need (rec->action));
  if (!trace_record_check_extent (rec, &local))
    {
      bt_fail (error, TRACE_ERROR_PARSE, c, off, "%s record: %s", trace_action_letters (rec->action),
               local->message);
      g_error_free (local);
      return TRACE_RECORD_ERROR;
    }
  check_sequence (reader, st, raw);
  return TRACE_RECORD_OK;
}

/* Move @c to its next output record (c->has_head), consuming notes. */
static TraceRecordResult
cursor_advance (TraceReader *reader, BtState *st, BtCursor *c, GError **error)
{
  c->has_head = FALSE;
  for (;;)
    {
      guint64 off = trace_input_offset (c->in);
      const guint8 *p;
      int version = 0;
      gsize total = 0;
      BtRaw raw;
      TraceRecordResult r = peek_record (c, &p, &version, &total, error);

      if (r != TRACE_RECORD_OK)
        return r;
      decode_header (p, version, c->swap, &raw);
      c->records++;
      trace_reader_count_read (reader, 1);
      r = decode_record (reader, st, c, &raw, off, error);
      trace_input_consume (c->in, total);
      if (r == TRACE_RECORD_ERROR)
        return r;
      if (r == TRACE_RECORD_OK)
        {
          c->has_head = TRUE;
          return TRACE_RECORD_OK;
        }
      trace_reader_count_skipped (reader, 1);
    }
}

/* ---- Merging ------------------------------------------------------------ */

static gboolean
head_before (const BtState *st, guint a, guint b)
{
  const TraceRecord *x = &st->cursors[a].head;
  const TraceRecord *y = &st->cursors[b].head;

  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns;
  if (x->dev_major != y->dev_major)
    return x->dev_major < y->dev_major;
  if (x->dev_minor != y->dev_minor)
    return x->dev_minor < y->dev_minor;
  if (x->cpu != y->cpu)
    return x->cpu < y->cpu;
  return a < b;
}

static void
heap_sift_down (BtState *st, guint i)
{
  for (;;)
    {
      guint l = 2 * i + 1;
      guint r = l + 1;
      guint m = i;
      guint tmp;

      if (l < st->heap_len && head_before (st, st->heap[l], st->heap[m]))
        m = l;
      if (r < st->heap_len && head_before (st, st->heap[r], st->heap[m]))
        m = r;
      if (m == i)
        return;
      tmp = st->heap[i];
      st->heap[i] = st->heap[m];
      st->heap[m] = tmp;
      i = m;
    }
}

static void
heap_push (BtState *st, guint cursor)
{
  guint i = st->heap_len++;

  st->heap[i] = cursor;
  while (i > 0)
    {
      guint parent = (i - 1) / 2;
      guint tmp;
      if (!head_before (st, st->heap[i], st->heap[parent]))
        break;
      tmp = st->heap[i];
      st->heap[i] = st->heap[parent];
      st->heap[parent] = tmp;
      i = parent;
    }
}

static void
heap_pop (BtState *st)
{
  g_assert (st->heap_len > 0);
  st->heap[0] = st->heap[--st->heap_len];
  heap_sift_down (st, 0);
}

/* ---- Hooks -------------------------------------------------------------- */

static void
blktrace_clear_state (gpointer state)
{
  BtState *st = state;

  for (guint i = 0; i < st->n_cursors; i++)
    {
      trace_input_free (st->cursors[i].in);
      if (st->cursors[i].message != NULL)
        g_string_free (st->cursors[i].message, TRUE);
    }
  if (st->message != NULL)
    g_string_free (st->message, TRUE);
  g_free (st->cursors);
  g_free (st->heap);
  g_clear_pointer (&st->comms, g_hash_table_unref);
  g_clear_pointer (&st->sequences, g_hash_table_unref);
}

static gboolean
blktrace_open_records (TraceReader *reader, gpointer state, TraceInput *first,
                       GPtrArray *more, GError **error)
{
  BtState *st = state;

  st->n_cursors = 1 + more->len;
  st->cursors = g_new0 (BtCursor, st->n_cursors);
  st->heap = g_new0 (guint, st->n_cursors);
  st->pending = -1;
  st->comms = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  st->sequences = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  st->cursors[0].in = first;
  for (guint i = 0; i < more->len; i++)
    {
      st->cursors[i + 1].in = trace_input_open (more->pdata[i], error);
      if (st->cursors[i + 1].in == NULL)
        return FALSE;
    }
  /* Prime every file: the heads give the merge order and the genesis. */
  for (guint i = 0; i < st->n_cursors; i++)
    {
      st->cursors[i].index = i;
      if (cursor_advance (reader, st, &st->cursors[i], error) == TRACE_RECORD_ERROR)
        return FALSE;
      if (st->cursors[i].has_head)
        heap_push (st, i);
    }
  if (st->heap_len > 0)
    trace_reader_set_genesis (reader, st->cursors[st->heap[0]].head.time_ns);
  update_start_meta (reader, st);
  return TRUE;
}

static TraceRecordResult
blktrace_read_record (TraceReader *reader, gpointer state, TraceRecord *out, GError **error)
{
  BtState *st = state;
  BtCursor *c;

  /* The cursor whose record went out last advances only now, so that an
   * error in its next record is reported after that record, not instead. */
  if (st->pending >= 0)
    {
      c = &st->cursors[st->pending];
      g_assert (st->heap_len > 0 && st->heap[0] == (guint) st->pending);
      st->pending = -1;
      if (cursor_advance (reader, st, c, error) == TRACE_RECORD_ERROR)
        return TRACE_RECORD_ERROR;
      if (c->has_head)
        heap_sift_down (st, 0);
      else
        heap_pop (st);
    }
  if (st->heap_len == 0)
    return TRACE_RECORD_END;
  c = &st->cursors[st->heap[0]];
  *out = c->head;
  if (out->action == TRACE_ACT_MESSAGE)
    {
      if (st->message == NULL)
        st->message = g_string_new (NULL);
      g_string_assign (st->message, c->message->str);
    }
  else
    {
      const char *comm = g_hash_table_lookup (st->comms, GUINT_TO_POINTER (out->pid));
      if (comm != NULL)
        g_strlcpy (out->comm, comm, sizeof out->comm);
    }
  st->pending = (gint) st->heap[0];
  return TRACE_RECORD_OK;
}

static const char *
blktrace_message (gpointer state)
{
  BtState *st = state;
  return st->message != NULL ? st->message->str : NULL;
}

const TraceFormatOps trace_blktrace_ops = {
  .name = "blktrace",
  .time_per_cpu = TRUE,
  .state_size = sizeof (BtState),
  .probe_bytes = blktrace_probe_bytes,
  .expand_path = blktrace_expand_path,
  .open_records = blktrace_open_records,
  .read_record = blktrace_read_record,
  .clear_state = blktrace_clear_state,
  .message = blktrace_message,
};
