/* trace-blktrace-write.c — TraceRecords to binary blktrace, version 7
 * (struct blk_io_trace) in host byte order, the form `blkparse -d` writes
 * and btt reads.  The action word is built as kernel/trace/blktrace.c
 * builds it (Linux 6.18): the action's category (QUEUE for Q/M/F/G/S/P/
 * U/UT/I/A, REQUEUE, ISSUE, COMPLETE; none for X and B), FS on request
 * events (I, D, C, R), and the direction and flag categories from the
 * RWBS; payloads as §1.4 of shared/reference/trace-formats.md: big-endian
 * unplug count, split sector and remap struct, the message text, a
 * host-order cgroup id in front when the record has one.  Process names
 * go out as PROCESS notes before a pid's first record (and when its name
 * changes), which is what blkparse needs to print them.
 */
#include "traces/trace-private.h"
#include "traces/trace-blktrace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct _TraceBlktraceWriter {
  GHashTable *comms;       /* pid -> comm last noted (g_strdup) */
  GHashTable *sequences;   /* device << 32 | cpu -> BtWriteSeq */
};

typedef struct {
  guint64 key;
  guint32 next;
} BtWriteSeq;

TraceBlktraceWriter *
trace_blktrace_writer_new (void)
{
  TraceBlktraceWriter *w = g_new0 (TraceBlktraceWriter, 1);

  w->comms = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  w->sequences = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  return w;
}

void
trace_blktrace_writer_free (TraceBlktraceWriter *writer)
{
  if (writer == NULL)
    return;
  g_hash_table_unref (writer->comms);
  g_hash_table_unref (writer->sequences);
  g_free (writer);
}

static guint32
device_of (const TraceRecord *rec)
{
  return ((rec->dev_major & 0xfff) << BT_MINOR_BITS) | (rec->dev_minor & BT_MINOR_MASK);
}

static guint32
cpu_of (const TraceRecord *rec)
{
  return rec->cpu < 0 ? 0 : (guint32) rec->cpu;
}

/* Per device and CPU, counting from 1, as the kernel's per-CPU counter. */
static guint32
next_sequence (TraceBlktraceWriter *w, const TraceRecord *rec)
{
  guint64 key = ((guint64) device_of (rec) << 32) | cpu_of (rec);
  BtWriteSeq *seq = g_hash_table_lookup (w->sequences, &key);

  if (seq == NULL)
    {
      seq = g_new (BtWriteSeq, 1);
      seq->key = key;
      seq->next = 1;
      g_hash_table_insert (w->sequences, &seq->key, seq);
    }
  return seq->next++;
}

static guint32
action_category (TraceAction action)
{
  switch (action)
    {
    case TRACE_ACT_QUEUE:
    case TRACE_ACT_BACKMERGE:
    case TRACE_ACT_FRONTMERGE:
    case TRACE_ACT_GETRQ:
    case TRACE_ACT_SLEEPRQ:
    case TRACE_ACT_PLUG:
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
    case TRACE_ACT_REMAP:
    case TRACE_ACT_ABORT:
    case TRACE_ACT_ZONE_PLUG:
    case TRACE_ACT_ZONE_UNPLUG:
      return BT_TC_QUEUE;
    case TRACE_ACT_INSERT:
      return BT_TC_QUEUE | BT_TC_FS;
    case TRACE_ACT_REQUEUE:
      return BT_TC_REQUEUE | BT_TC_FS;
    case TRACE_ACT_ISSUE:
      return BT_TC_ISSUE | BT_TC_FS;
    case TRACE_ACT_COMPLETE:
      return BT_TC_COMPLETE | BT_TC_FS;
    case TRACE_ACT_DRV_DATA:
      return BT_TC_DRV_DATA;
    case TRACE_ACT_MESSAGE:
      return BT_TC_NOTIFY;
    case TRACE_ACT_SPLIT:
    case TRACE_ACT_BOUNCE:
    case TRACE_ACT_N_ACTIONS:
    default:
      return 0;
    }
}

static const guint8 code_of_action[TRACE_ACT_N_ACTIONS] = {
  [TRACE_ACT_QUEUE]        = BT_TA_QUEUE,
  [TRACE_ACT_BACKMERGE]    = BT_TA_BACKMERGE,
  [TRACE_ACT_FRONTMERGE]   = BT_TA_FRONTMERGE,
  [TRACE_ACT_GETRQ]        = BT_TA_GETRQ,
  [TRACE_ACT_SLEEPRQ]      = BT_TA_SLEEPRQ,
  [TRACE_ACT_REQUEUE]      = BT_TA_REQUEUE,
  [TRACE_ACT_ISSUE]        = BT_TA_ISSUE,
  [TRACE_ACT_COMPLETE]     = BT_TA_COMPLETE,
  [TRACE_ACT_PLUG]         = BT_TA_PLUG,
  [TRACE_ACT_UNPLUG_IO]    = BT_TA_UNPLUG_IO,
  [TRACE_ACT_UNPLUG_TIMER] = BT_TA_UNPLUG_TIMER,
  [TRACE_ACT_INSERT]       = BT_TA_INSERT,
  [TRACE_ACT_SPLIT]        = BT_TA_SPLIT,
  [TRACE_ACT_BOUNCE]       = BT_TA_BOUNCE,
  [TRACE_ACT_REMAP]        = BT_TA_REMAP,
  [TRACE_ACT_MESSAGE]      = BT_TN_MESSAGE,
  [TRACE_ACT_ABORT]        = BT_TA_ABORT,
  [TRACE_ACT_DRV_DATA]     = BT_TA_DRV_DATA,
  [TRACE_ACT_ZONE_PLUG]    = BT_TA_ZONE_PLUG,
  [TRACE_ACT_ZONE_UNPLUG]  = BT_TA_ZONE_UNPLUG,
};

/* The kernel sets READ for every non-write operation, flushes and
 * plugs included; blkparse prints R or N by the byte count. */
static guint32
rwbs_category (guint32 rwbs)
{
  guint32 cat = 0;

  if (rwbs & TRACE_RWBS_DISCARD)
    cat |= BT_TC_DISCARD | BT_TC_WRITE;
  else if (rwbs & TRACE_RWBS_WRITE)
    cat |= BT_TC_WRITE;
  else
    cat |= BT_TC_READ;
  if (rwbs & TRACE_RWBS_FLUSH)
    cat |= BT_TC_FLUSH;
  if (rwbs & TRACE_RWBS_FUA)
    cat |= BT_TC_FUA;
  if (rwbs & TRACE_RWBS_SYNC)
    cat |= BT_TC_SYNC;
  if (rwbs & TRACE_RWBS_META)
    cat |= BT_TC_META;
  if (rwbs & TRACE_RWBS_AHEAD)
    cat |= BT_TC_AHEAD;
  return cat;
}

static void
put32 (guint8 *p, guint32 v)
{
  memcpy (p, &v, sizeof v);
}

static void
put64 (guint8 *p, guint64 v)
{
  memcpy (p, &v, sizeof v);
}

static void
put16 (guint8 *p, guint16 v)
{
  memcpy (p, &v, sizeof v);
}

/* One record: the header, then [cgroup id][payload]. */
static void
append_raw (GByteArray *out, guint32 sequence, gint64 time_ns, guint64 sector, guint32 bytes,
            guint32 action, guint32 pid, guint32 device, guint32 cpu, gint32 error,
            guint64 cgroup_id, const guint8 *payload, gsize payload_len)
{
  guint8 h[BT_HEADER_7] = { 0 };
  gsize cg_len = cgroup_id != 0 ? 8 : 0;
  gsize pdu_len = MIN (payload_len + cg_len, (gsize) G_MAXUINT16);

  if (cg_len > 0)
    action |= BT_TA_CGROUP;
  put32 (h + BT7_MAGIC, BT_MAGIC | BT_VERSION_7);
  put32 (h + BT7_SEQUENCE, sequence);
  put64 (h + BT7_TIME, (guint64) MAX (time_ns, 0));
  put64 (h + BT7_SECTOR, sector);
  put32 (h + BT7_BYTES, bytes);
  put32 (h + BT7_ACTION, action);
  put32 (h + BT7_PID, pid);
  put32 (h + BT7_DEVICE, device);
  put32 (h + BT7_CPU, cpu);
  put16 (h + BT7_ERROR, (guint16) error);
  put16 (h + BT7_PDU_LEN, (guint16) pdu_len);
  g_byte_array_append (out, h, sizeof h);
  if (cg_len > 0)
    {
      guint8 cg[8];
      put64 (cg, cgroup_id);
      g_byte_array_append (out, cg, sizeof cg);
    }
  g_byte_array_append (out, payload, (guint) (pdu_len - cg_len));
}

/* A PROCESS note when @rec's pid has not been named yet, or was named
 * otherwise.  Completions run in interrupt context under whatever task was
 * current, so they name nobody new; messages carry text, not a name. */
static void
maybe_note_process (TraceBlktraceWriter *w, const TraceRecord *rec, GByteArray *out)
{
  guint8 comm[BT_COMM_LEN] = { 0 };
  const char *noted;

  if (rec->comm[0] == '\0' || rec->action == TRACE_ACT_MESSAGE)
    return;
  noted = g_hash_table_lookup (w->comms, GUINT_TO_POINTER (rec->pid));
  if (noted != NULL && strcmp (noted, rec->comm) == 0)
    return;
  g_hash_table_replace (w->comms, GUINT_TO_POINTER (rec->pid), g_strdup (rec->comm));
  memcpy (comm, rec->comm, MIN (strlen (rec->comm), sizeof comm - 1));
  append_raw (out, 0, rec->time_ns, 0, 0, ((guint32) BT_TC_NOTIFY << BT_TC_SHIFT) | BT_TN_PROCESS,
              rec->pid, device_of (rec), cpu_of (rec), 0, 0, comm, sizeof comm);
}

void
trace_blktrace_writer_append (TraceBlktraceWriter *writer, const TraceRecord *rec, GByteArray *out)
{
  guint8 payload[BT_REMAP_LEN];
  gsize payload_len = 0;
  const guint8 *payload_ptr = payload;
  guint32 category;
  guint32 bytes;
  guint32 sequence = 0;

  g_return_if_fail (writer != NULL && rec != NULL && out != NULL);
  g_return_if_fail (rec->action < TRACE_ACT_N_ACTIONS);

  maybe_note_process (writer, rec, out);
  category = action_category (rec->action);
  if (rec->action != TRACE_ACT_MESSAGE)
    {
      category |= rwbs_category (rec->rwbs);
      sequence = next_sequence (writer, rec);
    }
  bytes = (guint32) MIN ((guint64) rec->nr_sectors << 9, (guint64) (G_MAXUINT32 & ~511u));
  switch (rec->action)
    {
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      put64 (payload, GUINT64_TO_BE ((guint64) rec->unplug_count));
      payload_len = 8;
      break;
    case TRACE_ACT_SPLIT:
      put64 (payload, GUINT64_TO_BE (rec->new_sector));
      payload_len = 8;
      break;
    case TRACE_ACT_REMAP:
      {
        guint32 from = ((rec->from_major & 0xfff) << BT_MINOR_BITS) | (rec->from_minor & BT_MINOR_MASK);
        put32 (payload, GUINT32_TO_BE (from));
        put32 (payload + 4, GUINT32_TO_BE (device_of (rec)));
        put64 (payload + 8, GUINT64_TO_BE (rec->from_sector));
        payload_len = BT_REMAP_LEN;
      }
      break;
    case TRACE_ACT_MESSAGE:
      payload_ptr = (const guint8 *) rec->comm;
      payload_len = strlen (rec->comm);
      bytes = 0;
      break;
    default:
      break;
    }
  append_raw (out, sequence, rec->time_ns, rec->sector, bytes,
              (category << BT_TC_SHIFT) | code_of_action[rec->action],
              rec->pid, device_of (rec), cpu_of (rec), rec->error, rec->cgroup_id,
              payload_ptr, payload_len);
}

gboolean
trace_convert_to_blktrace (const char *in_path, const char *format, const char *out_path,
                           guint64 *records, GError **error)
{
  g_autoptr(TraceReader) reader = NULL;
  g_autoptr(TraceBlktraceWriter) writer = NULL;
  g_autoptr(GByteArray) buf = NULL;
  FILE *fp;
  TraceRecord rec;
  GError *local = NULL;
  guint64 n = 0;
  gboolean ok = TRUE;

  g_return_val_if_fail (in_path != NULL && out_path != NULL, FALSE);

  reader = trace_reader_open (in_path, format, error);
  if (reader == NULL)
    return FALSE;
  fp = fopen (out_path, "wb");
  if (fp == NULL)
    {
      int saved = errno;
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", out_path, g_strerror (saved));
      return FALSE;
    }
  writer = trace_blktrace_writer_new ();
  buf = g_byte_array_sized_new (64 * 1024);
  while (ok && trace_reader_next (reader, &rec, &local))
    {
      trace_blktrace_writer_append (writer, &rec, buf);
      n++;
      if (buf->len >= 60 * 1024)
        {
          ok = fwrite (buf->data, 1, buf->len, fp) == buf->len;
          g_byte_array_set_size (buf, 0);
        }
    }
  if (ok && buf->len > 0)
    ok = fwrite (buf->data, 1, buf->len, fp) == buf->len;
  if (fclose (fp) != 0)
    ok = FALSE;
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (!ok)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: write error", out_path);
      return FALSE;
    }
  if (records != NULL)
    *records = n;
  return TRUE;
}
