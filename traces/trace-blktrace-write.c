/* trace-blktrace-write.c — TraceRecords to binary blktrace, version 7
 * (struct blk_io_trace) in host byte order, the form `blkparse -d` writes
 * and btt reads.  The action word is built as kernel/trace/blktrace.c
 * builds it (Linux 6.18): the action's category (QUEUE for Q/M/F/G/S/P/
 * U/UT/I/A, REQUEUE, ISSUE, COMPLETE; none for X and B), FS on request
 * events (I, D, C, R), and the direction and flag categories from the
 * RWBS; payloads as §1.4 of shared/reference/trace-formats.md: big-endian
 * unplug count, split sector and remap struct (device_from, device_to,
 * sector_from), the message's whole text (given by the caller, as the
 * record's comm holds it cut), a host-order cgroup id in front when the
 * record has one.  A barrier (B, kernels up to 2.6.36) goes in the
 * category bit those kernels used, BLK_TC_BARRIER, which 2.6.37 renamed
 * BLK_TC_FLUSH.  Process names go out as PROCESS notes before a
 * pid's first record (and when its name changes), which is what blkparse
 * needs to print them.
 *
 * The output files (TraceBlktraceOutput, the convert path) follow what
 * blktrace 1.3 and blkparse 1.3 do with times and files:
 *  - blktrace writes one file per CPU, NAME.blktrace.CPU, every record's
 *    cpu field that CPU; `blkparse -i NAME` opens NAME.blktrace.0, .1, ...
 *    up to the first number missing (an empty file counts as present),
 *    takes the earliest first time of the files as its genesis and prints
 *    times relative to it (blkparse.c do_file()).
 *  - `blkparse -d` dumps records with that genesis already subtracted, so
 *    a dump starts at 0; btt reads such a dump and measures from 0, not
 *    from the first record (btt/p_live.c: t_start = 0), so a dump with
 *    absolute times gives btt an idle period from 0 to the first I/O.
 *  - blkparse reading a pipe (`-i -`) takes a genesis of 0 as "not found
 *    yet" and looks for it again in every batch of 512 records
 *    (blkparse.c sort_entries()): a trace whose first record is at 0 has
 *    its times start again at 0 at record 513.
 * So both layouts carry the source's times relative to its first record,
 * plus 1 ns: the first record at 1 ns is a genesis no reader takes for
 * "none", and btt's idle time is off by that 1 ns only (spread over the
 * idle periods).
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
  /* Kernels up to 2.6.36 traced barriers with this bit (BLK_TC_BARRIER,
   * include/linux/blktrace_api.h); 2.6.37 renamed it BLK_TC_FLUSH.  The
   * file cannot tell the two apart: blkparse since 1.0.2 prints it 'F'. */
  if (rwbs & (TRACE_RWBS_FLUSH | TRACE_RWBS_BARRIER))
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
  trace_blktrace_writer_append_message (writer, rec, NULL, out);
}

void
trace_blktrace_writer_append_message (TraceBlktraceWriter *writer, const TraceRecord *rec,
                                      const char *message, GByteArray *out)
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
      /* The whole text: the kernel's notes run to BLK_TN_MAX_MSG (128)
       * bytes, the comm holds TRACE_COMM_MAX - 1; append_raw caps the
       * payload at 65,535. */
      if (message == NULL)
        message = rec->comm;
      payload_ptr = (const guint8 *) message;
      payload_len = strlen (message);
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

/* ---- Output files -------------------------------------------------------- */

/* One output file: a stream and the bytes awaiting it. */
typedef struct {
  FILE       *fp;
  char       *path;            /* for errors ("<stdout>" for standard output) */
  GByteArray *buf;
} BtOutFile;

struct _TraceBlktraceOutput {
  TraceBlktraceWriter *writer;
  gboolean   per_cpu;
  char      *stem;             /* per-CPU: NAME of NAME.blktrace.N */
  GPtrArray *files;            /* BtOutFile *, per CPU (NULL until used); the dump: one */
  gboolean   have_genesis;
  gint64     genesis_ns;       /* the first record's time in the source */
  guint64    records;
  guint64    clamped;
};

/* The time written for the first record: not 0, which blkparse reading
 * a pipe takes for "no genesis yet". */
#define BT_GENESIS_NS 1
/* CPU numbers a per-CPU set may hold: blkparse opens every file from 0 up,
 * so a stray large number would otherwise mean that many empty files. */
#define BT_MAX_CPU 4095
#define BT_FLUSH_BYTES (60 * 1024)

static void
bt_out_file_free (gpointer data)
{
  BtOutFile *f = data;

  if (f == NULL)
    return;
  if (f->fp != NULL && f->fp != stdout)
    fclose (f->fp);
  g_free (f->path);
  g_byte_array_unref (f->buf);
  g_free (f);
}

gboolean
trace_blktrace_output_is_dump (const char *name)
{
  g_return_val_if_fail (name != NULL, TRUE);
  return strcmp (name, "-") == 0 || g_str_has_suffix (name, ".bin");
}

/* NAME from "NAME", "NAME.blktrace" or "NAME.blktrace.N". */
static char *
per_cpu_stem (const char *name)
{
  const char *tag = g_strrstr (name, ".blktrace");

  if (tag != NULL && (tag[9] == '\0' || tag[9] == '.'))
    {
      const char *p = tag + 9;
      gboolean digits = *p == '\0';
      if (*p == '.')
        {
          p++;
          digits = *p != '\0';
          for (; *p != '\0'; p++)
            digits = digits && g_ascii_isdigit (*p);
        }
      if (digits)
        return g_strndup (name, (gsize) (tag - name));
    }
  return g_strdup (name);
}

static BtOutFile *
bt_out_file_open (const char *path, GError **error)
{
  BtOutFile *f;
  FILE *fp = strcmp (path, "-") == 0 ? stdout : fopen (path, "wb");

  if (fp == NULL)
    {
      int saved = errno;
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path, g_strerror (saved));
      return NULL;
    }
  f = g_new0 (BtOutFile, 1);
  f->fp = fp;
  f->path = g_strdup (fp == stdout ? "<stdout>" : path);
  f->buf = g_byte_array_sized_new (BT_FLUSH_BYTES + 1024);
  return f;
}

static gboolean
bt_out_file_flush (BtOutFile *f, GError **error)
{
  gboolean ok = f->buf->len == 0 || fwrite (f->buf->data, 1, f->buf->len, f->fp) == f->buf->len;

  g_byte_array_set_size (f->buf, 0);
  if (!ok)
    g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: write error", f->path);
  return ok;
}

TraceBlktraceOutput *
trace_blktrace_output_open (const char *name, gboolean per_cpu, GError **error)
{
  g_autoptr(TraceBlktraceOutput) out = NULL;

  g_return_val_if_fail (name != NULL, NULL);

  out = g_new0 (TraceBlktraceOutput, 1);
  out->writer = trace_blktrace_writer_new ();
  out->files = g_ptr_array_new_with_free_func (bt_out_file_free);
  out->per_cpu = per_cpu;
  if (out->per_cpu)
    {
      out->stem = per_cpu_stem (name);
      if (out->stem[0] == '\0' || g_str_has_suffix (out->stem, "/"))
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO,
                       "%s: a per-CPU blktrace set needs a NAME for NAME.blktrace.N", name);
          return NULL;
        }
    }
  else
    {
      BtOutFile *f = bt_out_file_open (name, error);
      if (f == NULL)
        return NULL;
      g_ptr_array_add (out->files, f);
    }
  return g_steal_pointer (&out);
}

static char *
per_cpu_path (const TraceBlktraceOutput *out, guint cpu)
{
  return g_strdup_printf ("%s.blktrace.%u", out->stem, cpu);
}

/* The file of @cpu, opened (with the empty files of the CPUs below it
 * that have none yet) on first use. */
static BtOutFile *
file_for (TraceBlktraceOutput *out, guint cpu, GError **error)
{
  if (!out->per_cpu)
    return out->files->pdata[0];
  if (cpu >= out->files->len)
    g_ptr_array_set_size (out->files, (gint) cpu + 1);
  if (out->files->pdata[cpu] == NULL)
    {
      g_autofree char *path = per_cpu_path (out, cpu);
      out->files->pdata[cpu] = bt_out_file_open (path, error);
    }
  return out->files->pdata[cpu];
}

gboolean
trace_blktrace_output_add (TraceBlktraceOutput *out, const TraceRecord *rec, GError **error)
{
  return trace_blktrace_output_add_message (out, rec, NULL, error);
}

gboolean
trace_blktrace_output_add_message (TraceBlktraceOutput *out, const TraceRecord *rec,
                                   const char *message, GError **error)
{
  TraceRecord shifted;
  BtOutFile *f;
  guint64 since_ns;
  guint cpu;

  g_return_val_if_fail (out != NULL && rec != NULL, FALSE);

  cpu = rec->cpu < 0 ? 0 : (guint) rec->cpu;
  if (out->per_cpu && cpu > BT_MAX_CPU)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT,
                   "record %" G_GUINT64_FORMAT " (source line %" G_GUINT64_FORMAT "): cpu %u: "
                   "a per-CPU set holds CPUs 0..%u; write one dump instead (a NAME.bin or -)",
                   out->records + 1, rec->line, cpu, BT_MAX_CPU);
      return FALSE;
    }
  f = file_for (out, cpu, error);
  if (f == NULL)
    return FALSE;
  if (!out->have_genesis)
    {
      out->have_genesis = TRUE;
      out->genesis_ns = rec->time_ns;
    }
  shifted = *rec;
  /* A record before the first (sources interleaving CPUs) cannot go
   * below blkparse's genesis: it is written at the first record's time. */
  if (rec->time_ns < out->genesis_ns)
    {
      shifted.time_ns = out->genesis_ns;
      out->clamped++;
    }
  /* In unsigned arithmetic: a source may span more than 2^63 ns from a
   * negative first time; such a span is cut at the largest time. */
  since_ns = (guint64) shifted.time_ns - (guint64) out->genesis_ns;
  shifted.time_ns = since_ns < (guint64) G_MAXINT64 - BT_GENESIS_NS
                    ? (gint64) since_ns + BT_GENESIS_NS : G_MAXINT64;
  shifted.cpu = (gint32) cpu;
  trace_blktrace_writer_append_message (out->writer, &shifted, message, f->buf);
  out->records++;
  return f->buf->len < BT_FLUSH_BYTES || bt_out_file_flush (f, error);
}

gboolean
trace_blktrace_output_close (TraceBlktraceOutput *out, GError **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (out != NULL, FALSE);

  /* blkparse stops at the first CPU number without a file: the CPUs
   * below the highest get empty ones (and CPU 0 one for an empty trace). */
  if (out->per_cpu && out->files->len == 0 && file_for (out, 0, error) == NULL)
    return FALSE;
  for (guint cpu = 0; cpu < out->files->len; cpu++)
    {
      BtOutFile *f = out->per_cpu ? file_for (out, cpu, error) : out->files->pdata[cpu];
      if (f == NULL)
        return FALSE;
      if (ok && !bt_out_file_flush (f, error))
        ok = FALSE;
      if (f->fp == stdout)
        {
          if (fflush (stdout) != 0 && ok)
            {
              g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: write error", f->path);
              ok = FALSE;
            }
        }
      else
        {
          int rc = fclose (f->fp);
          f->fp = NULL;
          if (rc != 0 && ok)
            {
              g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: write error", f->path);
              ok = FALSE;
            }
        }
    }
  return ok;
}

guint
trace_blktrace_output_n_files (const TraceBlktraceOutput *out)
{
  g_return_val_if_fail (out != NULL, 0);
  return out->files->len;
}

char *
trace_blktrace_output_describe (const TraceBlktraceOutput *out)
{
  g_return_val_if_fail (out != NULL, NULL);
  if (!out->per_cpu)
    return g_strdup (((BtOutFile *) out->files->pdata[0])->path);
  if (out->files->len <= 1)
    return g_strdup_printf ("%s.blktrace.0 (blkparse -i %s)", out->stem, out->stem);
  return g_strdup_printf ("%s.blktrace.0..%u (blkparse -i %s)", out->stem,
                          out->files->len - 1, out->stem);
}

guint64
trace_blktrace_output_clamped (const TraceBlktraceOutput *out)
{
  g_return_val_if_fail (out != NULL, 0);
  return out->clamped;
}

void
trace_blktrace_output_free (TraceBlktraceOutput *out)
{
  if (out == NULL)
    return;
  trace_blktrace_writer_free (out->writer);
  g_ptr_array_unref (out->files);
  g_free (out->stem);
  g_free (out);
}

gboolean
trace_convert_to_blktrace (const char *in_path, const char *format, const char *out_path,
                           guint64 *records, GError **error)
{
  g_autoptr(TraceReader) reader = NULL;
  g_autoptr(TraceBlktraceOutput) out = NULL;
  TraceRecord rec;
  GError *local = NULL;

  g_return_val_if_fail (in_path != NULL && out_path != NULL, FALSE);

  reader = trace_reader_open (in_path, format, error);
  if (reader == NULL)
    return FALSE;
  out = trace_blktrace_output_open (out_path, FALSE, error);
  if (out == NULL)
    return FALSE;
  while (trace_reader_next (reader, &rec, &local))
    if (!trace_blktrace_output_add_message (out, &rec, trace_reader_message (reader), error))
      return FALSE;
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (!trace_blktrace_output_close (out, error))
    return FALSE;
  if (records != NULL)
    *records = out->records;
  return TRUE;
}
