/* test-trace-blktrace.c — the binary blktrace reader and writer
 * (traces/trace-blktrace*.c) against the real tools: the takeoverjp sample
 * read record by record against its blkparse text (derived/), both byte
 * orders, a per-CPU set made by splitting the sample, version 8 through
 * the adapter, version refusal and truncation naming the byte offset,
 * notes (process names, messages, wall clock, cgroup ids), lost events;
 * the writer read back by us, by blkparse and by btt (Q2C/D2C, I/O count,
 * merge counts) on the sample, on a synthetic stream with merges,
 * requeues, flushes and remaps, and on the Linux 6.18 ftrace capture;
 * and a deterministic mutation smoke test (the CI twin of fuzz-blktrace).
 * Parts that need blkparse or btt skip when the tool is missing.
 */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "traces/trace-lifecycle.h"
#include "tests/test-run.h"

#define HDR7 48
#define HDR8 64

/* ---- helpers ------------------------------------------------------------ */

static const char *
shared_testdata (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    return NULL;
  return dir;
}

static char *
sample_file (const char *name)
{
  const char *shared = shared_testdata ();
  char *path;

  if (shared == NULL)
    return NULL;
  path = g_build_filename (shared, "blktrace-takeoverjp-sample", name, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_free (path);
      return NULL;
    }
  return path;
}

static gboolean
skip_without (const char *what, const char *path)
{
  if (path != NULL)
    return FALSE;
  g_test_skip (what);
  return TRUE;
}

typedef struct {
  GArray  *recs;         /* TraceRecord */
  guint64  skipped;
  guint64  lines;
  guint64  lost;
  gboolean has_genesis;
  gint64   genesis_ns;
  char    *format;
  char    *start_realtime;
} ReadResult;

static void
read_result_clear (ReadResult *r)
{
  g_clear_pointer (&r->recs, g_array_unref);
  g_clear_pointer (&r->format, g_free);
  g_clear_pointer (&r->start_realtime, g_free);
}

/* Every record of @path; FALSE with @error on the first failure (the
 * records before it are in r->recs). */
static gboolean
read_all (const char *path, const char *format, ReadResult *r, GError **error)
{
  g_autoptr(TraceReader) reader = trace_reader_open (path, format, error);
  TraceRecord rec;

  memset (r, 0, sizeof *r);
  r->recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  if (reader == NULL)
    return FALSE;
  r->format = g_strdup (trace_reader_format (reader));
  r->has_genesis = trace_reader_genesis (reader, &r->genesis_ns);
  while (trace_reader_next (reader, &rec, error))
    g_array_append_val (r->recs, rec);
  r->skipped = trace_reader_skipped (reader);
  r->lines = trace_reader_lines (reader);
  r->lost = trace_reader_lost (reader);
  r->start_realtime = g_strdup (trace_reader_meta (reader, "start_realtime"));
  return error == NULL || *error == NULL;
}

static const TraceRecord *
rec_at (const ReadResult *r, guint i)
{
  g_assert_cmpuint (i, <, r->recs->len);
  return &g_array_index (r->recs, TraceRecord, i);
}

/* Field by field; @line too when asked. */
static void
assert_same (const TraceRecord *a, const TraceRecord *b, gboolean line)
{
  g_assert_cmpint (a->time_ns, ==, b->time_ns);
  g_assert_cmpuint (a->dev_major, ==, b->dev_major);
  g_assert_cmpuint (a->dev_minor, ==, b->dev_minor);
  g_assert_cmpint (a->cpu, ==, b->cpu);
  g_assert_cmpuint (a->pid, ==, b->pid);
  g_assert_cmpint (a->action, ==, b->action);
  g_assert_cmpuint (a->rwbs, ==, b->rwbs);
  g_assert_cmpuint (a->sector, ==, b->sector);
  g_assert_cmpuint (a->nr_sectors, ==, b->nr_sectors);
  g_assert_cmpint (a->error, ==, b->error);
  g_assert_cmpuint (a->unplug_count, ==, b->unplug_count);
  g_assert_cmpuint (a->new_sector, ==, b->new_sector);
  g_assert_cmpuint (a->from_major, ==, b->from_major);
  g_assert_cmpuint (a->from_minor, ==, b->from_minor);
  g_assert_cmpuint (a->from_sector, ==, b->from_sector);
  g_assert_cmpuint (a->cgroup_id, ==, b->cgroup_id);
  g_assert_cmpstr (a->comm, ==, b->comm);
  if (line)
    g_assert_cmpuint (a->line, ==, b->line);
}

static guint32
get32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static guint16
get16 (const guint8 *p)
{
  guint16 v;
  memcpy (&v, p, 2);
  return GUINT16_FROM_LE (v);
}

static void
put32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static void
swap_at (guint8 *p, gsize n)
{
  for (gsize i = 0; i < n / 2; i++)
    {
      guint8 t = p[i];
      p[i] = p[n - 1 - i];
      p[n - 1 - i] = t;
    }
}

/* Start offsets of the records of a little-endian version-7 file. */
static GArray *
record_offsets (const guint8 *data, gsize len)
{
  GArray *offs = g_array_new (FALSE, FALSE, sizeof (gsize));
  gsize off = 0;

  while (off < len)
    {
      g_assert_cmpuint (off + HDR7, <=, len);
      g_assert_cmpuint (get32 (data + off) & 0xffffff00u, ==, 0x65617400u);
      g_array_append_val (offs, off);
      off += HDR7 + get16 (data + off + 46);
    }
  g_assert_cmpuint (off, ==, len);
  return offs;
}

static gboolean
is_note (const guint8 *rec)
{
  return ((get32 (rec + 28) >> 16) & 0x400) != 0;
}

static char *
temp_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("iosim-blktrace-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
remove_dir (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_remove (p);
    }
  g_rmdir (dir);
}

static char *
write_file (const char *dir, const char *name, const guint8 *data, gsize len)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, (const char *) data, (gssize) len, &error);
  g_assert_no_error (error);
  return path;
}

/* blkparse's "Events (DEV): N entries", summed over devices. */
static guint64
blkparse_events (const char *text)
{
  guint64 total = 0;
  const char *p = text;

  while ((p = strstr (p, "\nEvents (")) != NULL)
    {
      const char *colon = strstr (p, "): ");
      g_assert_nonnull (colon);
      total += g_ascii_strtoull (colon + 3, NULL, 10);
      p = colon;
    }
  return total;
}

/* btt "NAME  MIN AVG MAX N" (seconds, 9 decimals). */
static gboolean
btt_row (const char *text, const char *name, char **min, char **avg, char **max, guint64 *n)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) tok = NULL;
      if (!g_str_has_prefix (*l, name) || (*l)[strlen (name)] != ' ')
        continue;
      tok = g_strsplit_set (g_strstrip (*l), " ", -1);
      {
        const char *f[5];
        guint k = 0;
        for (char **t = tok; *t != NULL && k < 5; t++)
          if (**t != '\0')
            f[k++] = *t;
        if (k != 5)
          return FALSE;
        *min = g_strdup (f[1]);
        *avg = g_strdup (f[2]);
        *max = g_strdup (f[3]);
        *n = g_ascii_strtoull (f[4], NULL, 10);
        return TRUE;
      }
    }
  return FALSE;
}

static void
assert_btt_row (const char *btt, const char *name, const TraceLatencyStats *ours)
{
  g_autofree char *min = NULL, *avg = NULL, *max = NULL;
  g_autofree char *our_min = NULL, *our_avg = NULL, *our_max = NULL;
  guint64 n = 0;

  if (ours->count == 0)
    {
      g_assert_false (btt_row (btt, name, &min, &avg, &max, &n));
      return;
    }
  g_assert_true (btt_row (btt, name, &min, &avg, &max, &n));
  our_min = g_strdup_printf ("%.9f", (double) ours->min_ns / 1e9);
  our_avg = g_strdup_printf ("%.9f", ours->mean_ns / 1e9);
  our_max = g_strdup_printf ("%.9f", (double) ours->max_ns / 1e9);
  g_test_message ("%s: btt N=%" G_GUINT64_FORMAT " min=%s avg=%s max=%s; ours N=%" G_GUINT64_FORMAT
                  " min=%s avg=%s max=%s", name, n, min, avg, max, ours->count, our_min, our_avg, our_max);
  g_assert_cmpuint (ours->count, ==, n);
  g_assert_cmpstr (our_min, ==, min);
  g_assert_cmpstr (our_avg, ==, avg);
  g_assert_cmpstr (our_max, ==, max);
}

/* btt's figures for device maj,min (traces/trace-btt.c via the summary). */
static const TraceBttDevice *
btt_dev (const TraceSummary *s, guint maj, guint min)
{
  for (guint i = 0; i < trace_btt_n_devices (s->btt); i++)
    {
      const TraceBttDevice *d = trace_btt_device (s->btt, i);
      if (d->dev_major == maj && d->dev_minor == min)
        return d;
    }
  g_assert_not_reached ();
}

/* btt "Device Merge Information": #Q and #D of device "(maj,min)". */
static gboolean
btt_merge_row (const char *text, guint maj, guint min, guint64 *q, guint64 *d)
{
  g_autofree char *tag = g_strdup_printf ("(%3u,%3u) |", maj, min);
  const char *sec = strstr (text, "Device Merge Information");
  const char *row;

  if (sec == NULL || (row = strstr (sec, tag)) == NULL)
    return FALSE;
  row += strlen (tag);
  *q = g_ascii_strtoull (row, (char **) &row, 10);
  *d = g_ascii_strtoull (row, NULL, 10);
  return TRUE;
}

/* ---- the sample against blkparse's text --------------------------------- */

static void
test_sample_vs_blkparse (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *txt = sample_file ("derived/sample.blkparse.txt");
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  ReadResult b = { 0 }, t = { 0 };
  guint64 by_action_b[TRACE_ACT_N_ACTIONS] = { 0 };
  guint64 by_action_t[TRACE_ACT_N_ACTIONS] = { 0 };

  if (skip_without ("takeoverjp sample not available", bin) || skip_without ("no blkparse text", txt))
    return;
  g_assert_true (read_all (bin, NULL, &b, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (b.format, ==, "blktrace");
  g_assert_true (read_all (txt, NULL, &t, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (t.format, ==, "blkparse");

  /* "Events (sample): 6741 entries"; the two PROCESS notes are skipped */
  g_assert_true (g_file_get_contents (txt, &contents, NULL, NULL));
  g_assert_cmpuint (blkparse_events (contents), ==, 6741);
  g_assert_cmpuint (b.recs->len, ==, 6741);
  g_assert_cmpuint (t.recs->len, ==, 6741);
  g_assert_cmpuint (b.skipped, ==, 2);
  g_assert_cmpuint (b.lines, ==, 6743);
  g_assert_cmpuint (b.lost, ==, 0);
  g_assert_true (b.has_genesis);
  g_assert_cmpint (b.genesis_ns, ==, rec_at (&b, 0)->time_ns);
  g_assert_cmpint (b.genesis_ns, ==, G_GINT64_CONSTANT (175669815001344));

  for (guint i = 0; i < b.recs->len; i++)
    {
      const TraceRecord *x = rec_at (&b, i);
      const TraceRecord *y = rec_at (&t, i);

      by_action_b[x->action]++;
      by_action_t[y->action]++;
      g_assert_cmpint (x->time_ns - b.genesis_ns, ==, y->time_ns);
      g_assert_cmpint (x->cpu, ==, y->cpu);
      g_assert_cmpuint (x->dev_major, ==, y->dev_major);
      g_assert_cmpuint (x->dev_minor, ==, y->dev_minor);
      g_assert_cmpuint (x->pid, ==, y->pid);
      g_assert_cmpint (x->action, ==, y->action);
      g_assert_cmpuint (x->rwbs, ==, y->rwbs);
      g_assert_cmpuint (x->sector, ==, y->sector);
      g_assert_cmpuint (x->nr_sectors, ==, y->nr_sectors);
      g_assert_cmpuint (x->unplug_count, ==, y->unplug_count);
      g_assert_cmpuint (x->from_major, ==, y->from_major);
      g_assert_cmpuint (x->from_minor, ==, y->from_minor);
      g_assert_cmpuint (x->from_sector, ==, y->from_sector);
      if (x->action == TRACE_ACT_COMPLETE || x->action == TRACE_ACT_REQUEUE)
        g_assert_cmpint (x->error, ==, y->error);
      else if (x->action != TRACE_ACT_REMAP)
        g_assert_cmpstr (x->comm, ==, y->comm);   /* "" for [(null)] */
      /* the index in the file counts the notes */
      g_assert_cmpuint (x->line, >=, i + 1);
      g_assert_cmpuint (x->line, <=, i + 3);
    }
  for (int a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    g_assert_cmpuint (by_action_b[a], ==, by_action_t[a]);
  g_assert_cmpuint (by_action_b[TRACE_ACT_REMAP], ==, 963);
  g_assert_cmpuint (by_action_b[TRACE_ACT_UNPLUG_IO], ==, 963);
  /* the PROCESS note names pid 10256, which completes the last I/O */
  g_assert_cmpuint (rec_at (&b, 6740)->pid, ==, 10256);
  g_assert_cmpstr (rec_at (&b, 6740)->comm, ==, "VizCompositorTh");

  /* the pairing on the binary gives btt's numbers for the same file
   * (derived/sample.btt.txt: 963 I/Os, D2C avg 55.9 us, Q2C avg 56.6 us) */
  {
    g_autofree char *btt_ref = sample_file ("derived/sample.btt.txt");
    g_autofree char *ref = NULL;
    g_autoptr(TraceSummary) sum = trace_summarize (bin, NULL, &error);
    guint64 q = 0, d = 0;

    g_assert_no_error (error);
    g_assert_nonnull (btt_ref);
    g_assert_true (g_file_get_contents (btt_ref, &ref, NULL, NULL));
    assert_btt_row (ref, "D2C", &sum->btt_d2c);
    assert_btt_row (ref, "Q2C", &sum->btt_q2c);
    g_assert_true (btt_merge_row (ref, 259, 0, &q, &d));
    g_assert_cmpuint (btt_dev (sum, 259, 0)->n_qs, ==, q);
    g_assert_cmpuint (btt_dev (sum, 259, 0)->n_ds, ==, d);
    g_assert_cmpuint (btt_dev (sum, 259, 0)->phase[TRACE_BTT_Q2M].n, ==, 0);
    g_assert_cmpuint (btt_dev (sum, 259, 0)->blocks.total_ns, ==, 7704);   /* "Total" */
    g_assert_cmpuint (sum->lifecycle.incomplete_at_end, ==, 0);
    g_assert_cmpuint (sum->lifecycle.completed_without_issue, ==, 0);
    g_assert_true (sum->has_genesis);
    g_assert_cmpint (sum->genesis_ns, ==, b.genesis_ns);
  }
  read_result_clear (&b);
  read_result_clear (&t);
}

/* The sample in the other byte order: every header field and the
 * host-order payloads (TIMESTAMP words, cgroup ids) swapped; the
 * big-endian payloads (U, X, A) and the text ones stay. */
static guint8 *
byte_swapped (const guint8 *data, gsize len)
{
  g_autoptr(GArray) offs = record_offsets (data, len);
  guint8 *out = g_memdup2 (data, len);

  for (guint i = 0; i < offs->len; i++)
    {
      guint8 *r = out + g_array_index (offs, gsize, i);
      guint32 action = get32 (r + 28);
      guint16 pdu_len = get16 (r + 46);
      static const gsize u32s[] = { 0, 4, 24, 28, 32, 36, 40 };

      for (gsize k = 0; k < G_N_ELEMENTS (u32s); k++)
        swap_at (r + u32s[k], 4);
      swap_at (r + 8, 8);
      swap_at (r + 16, 8);
      swap_at (r + 44, 2);
      swap_at (r + 46, 2);
      if ((action & 0x100) && pdu_len >= 8)
        swap_at (r + HDR7, 8);
      if (((action >> 16) & 0x400) && (action & 0xff) == 1 && pdu_len >= 8)
        {
          swap_at (r + HDR7, 4);
          swap_at (r + HDR7 + 4, 4);
        }
    }
  return out;
}

static void
test_byte_order (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *swapped_path = NULL;
  g_autofree guint8 *swapped = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;
  ReadResult a = { 0 }, b = { 0 };

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  swapped = byte_swapped ((const guint8 *) data, len);
  g_assert_cmpmem (swapped, 4, "\x65\x61\x74\x07", 4);
  dir = temp_dir ();
  swapped_path = write_file (dir, "swapped.bin", swapped, len);

  g_assert_true (read_all (bin, NULL, &a, &error));
  g_assert_no_error (error);
  g_assert_true (read_all (swapped_path, NULL, &b, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (b.format, ==, "blktrace");
  g_assert_cmpuint (a.recs->len, ==, b.recs->len);
  for (guint i = 0; i < a.recs->len; i++)
    assert_same (rec_at (&a, i), rec_at (&b, i), TRUE);
  g_assert_cmpint (a.genesis_ns, ==, b.genesis_ns);
  read_result_clear (&a);
  read_result_clear (&b);
  remove_dir (dir);
}

/* ---- per-CPU sets ------------------------------------------------------- */

/* The sample (all on CPU 1) dealt to two CPUs, one I/O (7 records) at a
 * time, sequences renumbered per CPU as the kernel counts them: written
 * as one merged dump (@merged) and as the per-CPU files x.blktrace.0/.1
 * (the notes go to CPU 0). */
static void
split_sample (const guint8 *data, gsize len, const char *dir, char **merged)
{
  g_autoptr(GArray) offs = record_offsets (data, len);
  g_autoptr(GByteArray) all = g_byte_array_new ();
  g_autoptr(GByteArray) cpu0 = g_byte_array_new ();
  g_autoptr(GByteArray) cpu1 = g_byte_array_new ();
  GByteArray *cpu_file[2] = { cpu0, cpu1 };
  guint32 seq[2] = { 0, 0 };
  guint actions = 0;

  for (guint i = 0; i < offs->len; i++)
    {
      gsize off = g_array_index (offs, gsize, i);
      gsize end = i + 1 < offs->len ? g_array_index (offs, gsize, i + 1) : len;
      g_autofree guint8 *r = g_memdup2 (data + off, end - off);
      guint cpu = 0;

      if (!is_note (r))
        {
          cpu = (actions++ / 7) % 2;
          put32 (r + 4, ++seq[cpu]);
        }
      put32 (r + 40, cpu);
      g_byte_array_append (all, r, (guint) (end - off));
      g_byte_array_append (cpu_file[cpu], r, (guint) (end - off));
    }
  *merged = write_file (dir, "merged.bin", all->data, all->len);
  g_free (write_file (dir, "x.blktrace.0", cpu_file[0]->data, cpu_file[0]->len));
  g_free (write_file (dir, "x.blktrace.1", cpu_file[1]->data, cpu_file[1]->len));
}

static void
assert_same_stream (const char *path, const ReadResult *want)
{
  g_autoptr(GError) error = NULL;
  ReadResult got = { 0 };

  g_test_message ("%s", path);
  g_assert_true (read_all (path, NULL, &got, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (got.format, ==, "blktrace");
  g_assert_cmpuint (got.recs->len, ==, want->recs->len);
  for (guint i = 0; i < got.recs->len; i++)
    assert_same (rec_at (&got, i), rec_at (want, i), FALSE);
  g_assert_cmpint (got.genesis_ns, ==, want->genesis_ns);
  g_assert_cmpuint (got.lost, ==, 0);
  g_assert_cmpuint (got.skipped, ==, want->skipped);
  read_result_clear (&got);
}

static void
test_per_cpu_set (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *merged = NULL;
  g_autofree char *data = NULL;
  g_autofree char *p0 = NULL, *p1 = NULL, *prefix = NULL, *p3 = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;
  ReadResult want = { 0 };
  guint cpu1 = 0;

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  dir = temp_dir ();
  split_sample ((const guint8 *) data, len, dir, &merged);
  g_assert_true (read_all (merged, NULL, &want, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (want.recs->len, ==, 6741);
  for (guint i = 0; i < want.recs->len; i++)
    cpu1 += rec_at (&want, i)->cpu == 1;
  g_assert_cmpuint (cpu1, ==, 481 * 7);   /* every other I/O of the 963 */

  /* the set through a member's name and through the prefix */
  p0 = g_build_filename (dir, "x.blktrace.0", NULL);
  p1 = g_build_filename (dir, "x.blktrace.1", NULL);
  prefix = g_build_filename (dir, "x.blktrace", NULL);
  assert_same_stream (p0, &want);
  assert_same_stream (p1, &want);
  assert_same_stream (prefix, &want);

  /* a set with a gap (CPUs 0 and 3): blkparse stops at the gap, we don't */
  p3 = g_build_filename (dir, "x.blktrace.3", NULL);
  g_assert_cmpint (g_rename (p1, p3), ==, 0);
  assert_same_stream (prefix, &want);
  g_assert_cmpint (g_rename (p3, p1), ==, 0);

  /* a dump called x.blktrace next to the set is one file, and not a
   * member of the set */
  {
    g_autofree char *contents = NULL;
    gsize n;
    g_assert_true (g_file_get_contents (merged, &contents, &n, NULL));
    g_free (write_file (dir, "x.blktrace", (const guint8 *) contents, n));
    assert_same_stream (prefix, &want);
    assert_same_stream (p0, &want);
    g_assert_cmpint (g_remove (prefix), ==, 0);
  }

  /* blkparse's per-CPU mode on the same files agrees on the count */
  if (test_have_tool ("blkparse"))
    {
      const char *argv[] = { "blkparse", "-i", "x", NULL };
      g_autofree char *out = test_tool_output (argv, NULL, dir);
      g_assert_cmpuint (blkparse_events (out), ==, 6741);
    }
  read_result_clear (&want);
  remove_dir (dir);
}

static void
test_lost_events (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GArray) offs = NULL;
  g_autoptr(GByteArray) cut = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  gsize len;
  ReadResult r = { 0 };

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  offs = record_offsets ((const guint8 *) data, len);
  /* drop records 100..102 (three action records with sequences 100..102) */
  g_byte_array_append (cut, (const guint8 *) data, (guint) g_array_index (offs, gsize, 100));
  g_byte_array_append (cut, (const guint8 *) data + g_array_index (offs, gsize, 103),
                       (guint) (len - g_array_index (offs, gsize, 103)));
  dir = temp_dir ();
  path = write_file (dir, "lost.bin", cut->data, cut->len);
  g_assert_true (read_all (path, NULL, &r, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r.recs->len, ==, 6738);
  g_assert_cmpuint (r.lost, ==, 3);
  read_result_clear (&r);
  remove_dir (dir);
}

/* ---- versions and damage ------------------------------------------------ */

/* The sample as version-8 records: 64-byte headers, pid before a 64-bit
 * action; @zone_append_on_c sets the version-8 zone-append category on the
 * C records and clears their READ bit. */
static GByteArray *
as_version8 (const guint8 *data, gsize len, gboolean zone_append_on_c)
{
  g_autoptr(GArray) offs = record_offsets (data, len);
  GByteArray *out = g_byte_array_new ();

  for (guint i = 0; i < offs->len; i++)
    {
      const guint8 *r = data + g_array_index (offs, gsize, i);
      guint8 h[HDR8] = { 0 };
      guint64 action = get32 (r + 28);
      guint16 pdu_len = get16 (r + 46);

      if (zone_append_on_c && (action & 0xff) == 8 && !is_note (r))
        action = (action & ~(G_GUINT64_CONSTANT (1) << 16)) | (G_GUINT64_CONSTANT (1) << 32);
      memcpy (h, r, 24);            /* magic, sequence, time, sector */
      h[0] = 0x08;
      memcpy (h + 24, r + 24, 4);   /* bytes */
      memcpy (h + 28, r + 32, 4);   /* pid */
      action = GUINT64_TO_LE (action);
      memcpy (h + 32, &action, 8);
      memcpy (h + 40, r + 36, 8);   /* device, cpu */
      memcpy (h + 48, r + 44, 4);   /* error, pdu_len */
      g_byte_array_append (out, h, sizeof h);
      g_byte_array_append (out, r + HDR7, pdu_len);
    }
  return out;
}

static void
test_version8 (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *p8 = NULL, *pz = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GByteArray) v8 = NULL;
  g_autoptr(GByteArray) zone = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;
  ReadResult a = { 0 }, b = { 0 };
  guint writes = 0;

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  dir = temp_dir ();
  v8 = as_version8 ((const guint8 *) data, len, FALSE);
  g_assert_cmpuint (v8->len, ==, len + 6743 * 16);
  p8 = write_file (dir, "v8.bin", v8->data, v8->len);
  g_assert_true (read_all (bin, NULL, &a, &error));
  g_assert_no_error (error);
  g_assert_true (read_all (p8, NULL, &b, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (a.recs->len, ==, b.recs->len);
  for (guint i = 0; i < a.recs->len; i++)
    assert_same (rec_at (&a, i), rec_at (&b, i), TRUE);
  read_result_clear (&b);

  /* zone appends are writes (category bit 16 of the version-8 word) */
  zone = as_version8 ((const guint8 *) data, len, TRUE);
  pz = write_file (dir, "zone.bin", zone->data, zone->len);
  g_assert_true (read_all (pz, NULL, &b, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < b.recs->len; i++)
    if (rec_at (&b, i)->action == TRACE_ACT_COMPLETE)
      {
        g_assert_cmpuint (rec_at (&b, i)->rwbs & (TRACE_RWBS_WRITE | TRACE_RWBS_READ), ==, TRACE_RWBS_WRITE);
        writes++;
      }
  g_assert_cmpuint (writes, ==, 963);
  read_result_clear (&a);
  read_result_clear (&b);
  remove_dir (dir);
}

static void
test_version_refused (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GArray) offs = NULL;
  gsize len;

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  offs = record_offsets ((const guint8 *) data, len);
  dir = temp_dir ();

  /* first record: refused at open, sniffed or forced */
  {
    g_autofree guint8 *m = g_memdup2 (data, len);
    g_autofree char *path = NULL;
    g_autofree char *want = NULL;

    m[0] = 0x06;
    path = write_file (dir, "v6.bin", m, len);
    want = g_strdup_printf ("%s: byte offset 0: blktrace version 6 is not supported", path);
    for (int forced = 0; forced < 2; forced++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(TraceReader) r = trace_reader_open (path, forced ? "blktrace" : NULL, &error);
        g_assert_null (r);
        g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
        g_assert_true (g_str_has_prefix (error->message, want));
      }
  }
  /* record 500: the 500 before it come out, then a located error */
  {
    g_autofree guint8 *m = g_memdup2 (data, len);
    g_autofree char *path = NULL;
    g_autofree char *want = NULL;
    g_autoptr(GError) error = NULL;
    gsize off = g_array_index (offs, gsize, 500);
    ReadResult r = { 0 };

    m[off] = 0x09;
    path = write_file (dir, "v9.bin", m, len);
    want = g_strdup_printf ("%s: byte offset %zu: blktrace version 9 is not supported", path, off);
    g_assert_false (read_all (path, NULL, &r, &error));
    g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
    g_assert_true (g_str_has_prefix (error->message, want));
    g_assert_cmpuint (r.recs->len, ==, 499);   /* 500 records, one a note */
    read_result_clear (&r);
  }
  /* not blktrace at all, forced */
  {
    g_autofree char *path = write_file (dir, "text.txt", (const guint8 *) "hello world\n", 12);
    g_autoptr(GError) error = NULL;
    g_autoptr(TraceReader) r = trace_reader_open (path, "blktrace", &error);
    g_assert_null (r);
    g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, "byte offset 0: not a blktrace record"));
  }
  remove_dir (dir);
}

static void
test_truncated (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GArray) offs = NULL;
  gsize len;
  struct { guint record; gsize extra; const char *what; } cuts[] = {
    { 1000, 20, "the version-7 header needs 48 bytes, 20 left" },
    { 1001, 2, "4-byte magic" },
    { 6736, HDR7 + 5, "header and payload need 64 bytes, 53 left" },   /* the last A */
    { 6742, 0, NULL },                                                 /* a boundary */
  };

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  offs = record_offsets ((const guint8 *) data, len);
  dir = temp_dir ();
  for (gsize i = 0; i < G_N_ELEMENTS (cuts); i++)
    {
      gsize off = g_array_index (offs, gsize, cuts[i].record);
      g_autofree char *path = write_file (dir, "cut.bin", (const guint8 *) data, off + cuts[i].extra);
      g_autoptr(GError) error = NULL;
      ReadResult r = { 0 };
      guint notes = 0;

      for (guint k = 0; k < cuts[i].record; k++)
        notes += is_note ((const guint8 *) data + g_array_index (offs, gsize, k));
      if (cuts[i].what == NULL)
        {
          g_assert_true (read_all (path, NULL, &r, &error));
          g_assert_no_error (error);
        }
      else
        {
          g_autofree char *want = g_strdup_printf ("%s: byte offset %zu: truncated record", path, off);
          g_assert_false (read_all (path, NULL, &r, &error));
          g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
          g_test_message ("%s", error->message);
          g_assert_true (g_str_has_prefix (error->message, want));
          g_assert_nonnull (strstr (error->message, cuts[i].what));
        }
      g_assert_cmpuint (r.recs->len, ==, cuts[i].record - notes);
      read_result_clear (&r);
    }
  remove_dir (dir);
}

/* ---- notes, payloads, odd actions --------------------------------------- */

static TraceRecord
make_rec (gint64 t, const char *act, const char *rwbs, guint64 sector, guint32 nr, guint32 pid,
          const char *comm)
{
  TraceRecord r;

  memset (&r, 0, sizeof r);
  r.time_ns = t;
  r.dev_major = 8;
  r.dev_minor = 0;
  r.cpu = 0;
  r.pid = pid;
  g_assert_true (trace_action_from_letters (act, &r.action));
  g_assert_true (trace_rwbs_parse (rwbs, &r.rwbs));
  r.sector = sector;
  r.nr_sectors = nr;
  g_strlcpy (r.comm, comm, sizeof r.comm);
  return r;
}

/* A raw version-7 record in host order. */
static void
append_raw (GByteArray *out, guint64 time, guint32 action, guint32 pid, const void *pdu, guint16 pdu_len)
{
  guint8 h[HDR7] = { 0 };
  guint32 magic = 0x65617407;
  guint32 dev = 8u << 20;

  memcpy (h, &magic, 4);
  memcpy (h + 8, &time, 8);
  memcpy (h + 28, &action, 4);
  memcpy (h + 32, &pid, 4);
  memcpy (h + 36, &dev, 4);
  memcpy (h + 46, &pdu_len, 2);
  g_byte_array_append (out, h, sizeof h);
  g_byte_array_append (out, pdu, pdu_len);
}

static void
test_notes_and_payloads (void)
{
  g_autoptr(TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  TraceRecord in[8];
  ReadResult r = { 0 };
  guint32 ts[2] = { 1700000000, 5 };
  guint8 zeros[4] = { 0 };

  /* wall clock noted 1000 ns before the first event */
  append_raw (buf, 999000, (0x400u << 16) | 1, 0, ts, sizeof ts);
  in[0] = make_rec (1000000, "Q", "WS", 2048, 8, 100, "fio");
  in[0].cgroup_id = G_GUINT64_CONSTANT (0x123456789);
  in[1] = make_rec (1000100, "X", "WS", 2048, 4, 100, "fio");
  in[1].new_sector = 2052;
  in[2] = make_rec (1000200, "A", "WS", 4096, 8, 100, "fio");
  in[2].from_major = 8;
  in[2].from_minor = 1;
  in[2].from_sector = 2048;
  in[3] = make_rec (1000300, "UT", "N", 0, 0, 100, "fio");
  in[3].unplug_count = 3;
  in[4] = make_rec (1000400, "m", "N", 0, 0, 100, "bfq100S dispatch");
  in[5] = make_rec (1000500, "DD", "R", 64, 1, 7, "kworker/0:1");
  in[6] = make_rec (1000600, "C", "WS", 4096, 8, 0, "");
  in[6].error = -5;
  in[7] = make_rec (1000700, "Q", "R", 64, 8, 100, "fio-renamed");
  for (gsize i = 0; i < G_N_ELEMENTS (in); i++)
    {
      trace_blktrace_writer_append (w, &in[i], buf);
      if (i == 4)   /* an action code no kernel has: skipped and counted */
        append_raw (buf, 1000450, (0x10u << 16) | 0x7f, 100, zeros, 0);
    }
  path = write_file (dir, "notes.bin", buf->data, buf->len);
  g_assert_true (read_all (path, NULL, &r, &error));
  g_assert_no_error (error);

  g_assert_cmpuint (r.recs->len, ==, G_N_ELEMENTS (in));
  /* TIMESTAMP + PROCESS fio, kworker/0:1, fio-renamed + the unknown action */
  g_assert_cmpuint (r.skipped, ==, 5);
  g_assert_cmpuint (r.lines, ==, G_N_ELEMENTS (in) + 5);
  g_assert_cmpint (r.genesis_ns, ==, 1000000);
  g_assert_cmpstr (r.start_realtime, ==, "1700000000.000001005");
  for (gsize i = 0; i < G_N_ELEMENTS (in); i++)
    {
      TraceRecord want = in[i];
      if (want.action == TRACE_ACT_UNPLUG_TIMER || want.action == TRACE_ACT_MESSAGE)
        want.rwbs = TRACE_RWBS_NONE;
      g_test_message ("record %zu: %s", i, trace_action_letters (want.action));
      assert_same (rec_at (&r, (guint) i), &want, FALSE);
    }
  read_result_clear (&r);
  remove_dir (dir);
}

/* ---- extents and time order (issue 12) --------------------------------- */

/* One bad record after a good Q: refused, naming the file and the bad
 * record's byte offset, with the extent check's reason. */
typedef struct {
  const char *name;
  const char *act;
  guint32     nr;
  guint64     sector;
  guint64     from_sector;   /* A */
  guint64     new_sector;    /* X */
  const char *reason;        /* NULL: accepted */
} ExtentCase;

static const ExtentCase extent_cases[] = {
  { "sector-2^55",        "Q", 8, G_GUINT64_CONSTANT (1) << 55, 0, 0, "64-bit byte range" },
  { "sector-max",         "D", 8, G_MAXUINT64, 0, 0, "64-bit byte range" },
  { "last-sector-plus-1", "Q", 1, (G_GUINT64_CONSTANT (1) << 55) - 1, 0, 0, "64-bit byte range" },
  { "remap-origin",       "A", 8, 2048, (G_GUINT64_CONSTANT (1) << 55) - 4, 0, "remapped from sector" },
  { "split-beyond",       "X", 8, 2048, 0, G_GUINT64_CONSTANT (1) << 55, "split at sector" },
  /* accepted: the largest extent, and a flush completion at (u64) -1 */
  { "largest",            "Q", 8, (G_GUINT64_CONSTANT (1) << 55) - 9, 0, 0, NULL },
  { "flush-sentinel",     "C", 0, G_MAXUINT64, 0, 0, NULL },
};

static void
test_extent_case (gconstpointer data)
{
  const ExtentCase *tc = data;
  g_autoptr(TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = NULL;
  g_autofree char *where = NULL;
  g_autoptr(GError) error = NULL;
  TraceRecord good = make_rec (1000, "Q", "W", 0, 8, 100, "dd");
  TraceRecord bad = make_rec (2000, tc->act, "W", tc->sector, tc->nr, 100, "dd");
  guint bad_offset;
  ReadResult r = { 0 };

  bad.from_major = 8;
  bad.from_minor = 1;
  bad.from_sector = tc->from_sector;
  bad.new_sector = tc->new_sector;
  trace_blktrace_writer_append (w, &good, buf);
  bad_offset = buf->len;
  trace_blktrace_writer_append (w, &bad, buf);
  path = write_file (dir, "extent.bin", buf->data, buf->len);
  if (tc->reason == NULL)
    {
      g_assert_true (read_all (path, NULL, &r, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (r.recs->len, ==, 2);
      g_assert_cmpuint (rec_at (&r, 1)->sector, ==, tc->sector);
    }
  else
    {
      g_assert_false (read_all (path, NULL, &r, &error));
      g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
      /* the writer puts no note between the two records (same pid) */
      where = g_strdup_printf ("%s: byte offset %u: ", path, bad_offset);
      g_test_message ("%s", error->message);
      g_assert_true (g_str_has_prefix (error->message, where));
      g_assert_nonnull (strstr (error->message, tc->reason));
      g_assert_cmpuint (r.recs->len, ==, 1);
    }
  read_result_clear (&r);
  remove_dir (dir);
}

/* Per (device, CPU) streams in one dump: CPU 1's records behind CPU 0's
 * are not counted, CPU 0 stepping back 300 ns is, once. */
static void
test_time_backwards (void)
{
  g_autoptr(TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) reader = NULL;
  TraceRecord in[5];
  TraceRecord rec;
  guint n = 0;

  in[0] = make_rec (1000, "Q", "W", 0, 8, 100, "dd");
  in[1] = make_rec (1500, "Q", "W", 8, 8, 100, "dd");
  in[2] = make_rec (1100, "Q", "W", 16, 8, 100, "dd");
  in[2].cpu = 1;
  in[3] = make_rec (1200, "Q", "W", 24, 8, 100, "dd");
  in[4] = make_rec (1600, "Q", "W", 32, 8, 100, "dd");
  in[4].cpu = 1;
  for (gsize i = 0; i < G_N_ELEMENTS (in); i++)
    trace_blktrace_writer_append (w, &in[i], buf);
  path = write_file (dir, "dump.bin", buf->data, buf->len);
  reader = trace_reader_open (path, NULL, &error);
  g_assert_no_error (error);
  while (trace_reader_next (reader, &rec, &error))
    n++;
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (in));
  g_assert_cmpuint (trace_reader_time_backwards (reader), ==, 1);
  g_assert_cmpuint (trace_reader_time_backwards_max_ns (reader), ==, 300);
  g_clear_pointer (&reader, trace_reader_free);
  remove_dir (dir);
}

/* ---- the writer against blkparse and btt -------------------------------- */

static void
test_writer_sample (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *txt = sample_file ("derived/sample.blkparse.txt");
  g_autofree char *btt_ref = sample_file ("derived/sample.btt.txt");
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) s = NULL;
  ReadResult a = { 0 }, b = { 0 };
  guint64 n = 0;

  if (skip_without ("takeoverjp sample not available", bin) || skip_without ("no derived files", btt_ref))
    return;
  dir = temp_dir ();
  out = g_build_filename (dir, "written.bin", NULL);
  g_assert_true (trace_convert_to_blktrace (bin, NULL, out, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 6741);
  g_assert_true (read_all (bin, NULL, &a, &error));
  g_assert_no_error (error);
  g_assert_true (read_all (out, NULL, &b, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (a.recs->len, ==, b.recs->len);
  /* the converted times count from the first record, written at 1 ns */
  g_assert_cmpint (b.genesis_ns, ==, 1);
  for (guint i = 0; i < a.recs->len; i++)
    {
      TraceRecord want = *rec_at (&a, i);
      want.time_ns = want.time_ns - a.genesis_ns + 1;
      assert_same (&want, rec_at (&b, i), FALSE);
    }
  g_assert_cmpuint (b.lost, ==, 0);
  g_assert_cmpuint (b.skipped, ==, 2);   /* swapper/1 and VizCompositorTh noted again */

  /* ours: btt's numbers from the written file */
  s = trace_summarize (out, NULL, &error);
  g_assert_no_error (error);
  {
    g_autofree char *ref = NULL;
    g_assert_true (g_file_get_contents (btt_ref, &ref, NULL, NULL));
    assert_btt_row (ref, "D2C", &s->btt_d2c);
    assert_btt_row (ref, "Q2C", &s->btt_q2c);
    g_assert_cmpuint (s->btt_q2c.count, ==, 963);
    g_assert_cmpuint (btt_dev (s, 259, 0)->n_qs, ==, 963);
    g_assert_cmpuint (btt_dev (s, 259, 0)->n_ds, ==, 963);
  }

  if (test_have_tool ("blkparse"))
    {
      const char *argv[] = { "blkparse", "-i", "-", NULL };
      g_autofree char *text = test_tool_output (argv, out, dir);
      g_autofree char *ref = NULL;
      g_auto(GStrv) got = g_strsplit (text, "\n", -1);
      g_auto(GStrv) want = NULL;

      g_assert_true (g_file_get_contents (txt, &ref, NULL, NULL));
      want = g_strsplit (ref, "\n", -1);
      /* the event lines are blkparse's own lines for the original */
      for (guint i = 0; i < 6741; i++)
        g_assert_cmpstr (got[i], ==, want[i]);
      g_assert_cmpuint (blkparse_events (text), ==, 6741);
    }
  if (test_have_tool ("btt"))
    {
      const char *argv[] = { "btt", "-i", out, NULL };
      g_autofree char *text = test_tool_output (argv, NULL, dir);
      g_autofree char *ref = NULL;
      g_autofree char *min = NULL, *avg = NULL, *max = NULL;
      guint64 btt_n = 0, q = 0, d = 0;

      g_assert_true (g_file_get_contents (btt_ref, &ref, NULL, NULL));
      /* 963 I/Os, D2C avg 55.9 us, Q2C avg 56.6 us, as for the original */
      g_assert_true (btt_row (text, "D2C", &min, &avg, &max, &btt_n));
      g_assert_cmpstr (avg, ==, "0.000055949");
      g_assert_cmpuint (btt_n, ==, 963);
      assert_btt_row (text, "D2C", &s->btt_d2c);
      assert_btt_row (text, "Q2C", &s->btt_q2c);
      g_assert_true (btt_merge_row (text, 259, 0, &q, &d));
      g_assert_cmpuint (q, ==, 963);
      g_assert_cmpuint (d, ==, 963);
    }
  read_result_clear (&a);
  read_result_clear (&b);
  remove_dir (dir);
}

/* Q, G, I, D, C of one I/O on 8,0. */
static void
add_io (GArray *s, gint64 t, guint64 sector, guint32 nr, const char *rwbs, guint32 pid,
        gint64 d_at, gint64 c_at)
{
  TraceRecord r[5];

  r[0] = make_rec (t, "Q", rwbs, sector, nr, pid, "dd");
  r[1] = make_rec (t + 100, "G", rwbs, sector, nr, pid, "dd");
  r[2] = make_rec (t + 200, "I", rwbs, sector, nr, pid, "dd");
  r[3] = make_rec (t + d_at, "D", rwbs, sector, nr, pid, "dd");
  r[4] = make_rec (t + c_at, "C", rwbs, sector, nr, 0, "");
  g_array_append_vals (s, r, 5);
}

static int
by_time (gconstpointer a, gconstpointer b)
{
  const TraceRecord *x = a;
  const TraceRecord *y = b;
  return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Every case the pairing must get through, in one stream on 8,0 (plus
 * remaps from its partition 8,1). */
static GArray *
synthetic_stream (void)
{
  GArray *s = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord r;

  /* in flight at the start: a C with nothing before it */
  r = make_rec (10, "C", "R", 999999, 8, 0, "");
  g_array_append_val (s, r);
  /* plain I/Os of three sizes, two processes */
  for (guint i = 0; i < 20; i++)
    add_io (s, 1000 + (gint64) i * 100000, 8000 + i * 64, 8 << (i % 3), i % 2 ? "W" : "R",
            200 + i % 2, 5000 + (gint64) i * 37, 60000 + (gint64) i * 111);
  /* back and front merges into one request (pid 300) */
  {
    TraceRecord m[] = {
      make_rec (3000000, "Q", "W", 50000, 8, 300, "tar"),
      make_rec (3000100, "G", "W", 50000, 8, 300, "tar"),
      make_rec (3000200, "I", "W", 50000, 8, 300, "tar"),
      make_rec (3000300, "Q", "W", 50008, 8, 300, "tar"),
      make_rec (3000400, "M", "W", 50008, 8, 300, "tar"),
      make_rec (3000500, "Q", "W", 49992, 8, 300, "tar"),
      make_rec (3000600, "F", "W", 49992, 8, 300, "tar"),
      make_rec (3009000, "D", "W", 49992, 24, 300, "tar"),
      make_rec (3090000, "C", "W", 49992, 24, 0, ""),
    };
    g_array_append_vals (s, m, G_N_ELEMENTS (m));
  }
  /* a requeue: D2C restarts at the second D */
  {
    TraceRecord q[] = {
      make_rec (4000000, "Q", "R", 70000, 16, 400, "cat"),
      make_rec (4000100, "G", "R", 70000, 16, 400, "cat"),
      make_rec (4000200, "I", "R", 70000, 16, 400, "cat"),
      make_rec (4001000, "D", "R", 70000, 16, 400, "cat"),
      make_rec (4002000, "R", "R", 70000, 16, 0, ""),
      make_rec (4003000, "I", "R", 70000, 16, 400, "cat"),
      make_rec (4010000, "D", "R", 70000, 16, 400, "cat"),
      make_rec (4050000, "C", "R", 70000, 16, 0, ""),
    };
    g_array_append_vals (s, q, G_N_ELEMENTS (q));
  }
  /* a preflush write of no data: btt ignores it */
  {
    TraceRecord f[] = {
      make_rec (5000000, "Q", "FWS", 0, 0, 500, "sync"),
      make_rec (5000100, "G", "FWS", 0, 0, 500, "sync"),
      make_rec (5000200, "D", "FN", 0, 0, 500, "sync"),
      make_rec (5030000, "C", "FN", 0, 0, 0, ""),
    };
    g_array_append_vals (s, f, G_N_ELEMENTS (f));
  }
  /* partition remaps (A from 8,1) ahead of Q, as in the takeoverjp sample */
  for (guint i = 0; i < 5; i++)
    {
      gint64 t = 6000000 + (gint64) i * 100000;
      r = make_rec (t - 50, "A", "RA", 90000 + i * 8, 8, 600, "");
      r.from_major = 8;
      r.from_minor = 1;
      r.from_sector = 90000 + i * 8 - 2048;
      g_array_append_val (s, r);
      add_io (s, t, 90000 + i * 8, 8, "RA", 600, 700, 40000 + (gint64) i * 5);
    }
  /* a request-only pair (D and C, no Q): no btt Q2C/D2C */
  {
    TraceRecord d[] = {
      make_rec (7000000, "D", "W", 123456, 8, 700, "jbd2/sda1-8"),
      make_rec (7020000, "C", "W", 123456, 8, 0, ""),
    };
    g_array_append_vals (s, d, G_N_ELEMENTS (d));
  }
  /* a second CPU */
  for (guint i = 0; i < s->len; i++)
    if (g_array_index (s, TraceRecord, i).pid == 201)
      g_array_index (s, TraceRecord, i).cpu = 1;
  g_array_sort (s, by_time);
  return s;
}

static char *
write_stream (GArray *s, const char *dir, const char *name)
{
  g_autoptr(TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr(GByteArray) buf = g_byte_array_new ();

  for (guint i = 0; i < s->len; i++)
    trace_blktrace_writer_append (w, &g_array_index (s, TraceRecord, i), buf);
  return write_file (dir, name, buf->data, buf->len);
}

static void
test_writer_synthetic (void)
{
  g_autoptr(GArray) s = synthetic_stream ();
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = write_stream (s, dir, "synthetic.bin");
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) sum = NULL;
  ReadResult r = { 0 };

  /* read back: the same records, names from the PROCESS notes */
  g_assert_true (read_all (path, NULL, &r, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r.recs->len, ==, s->len);
  for (guint i = 0; i < s->len; i++)
    {
      TraceRecord want = g_array_index (s, TraceRecord, i);
      const TraceRecord *got = rec_at (&r, i);
      if (want.comm[0] == '\0')   /* completions run under pid 0 */
        g_strlcpy (want.comm, got->comm, sizeof want.comm);
      assert_same (got, &want, FALSE);
    }
  g_assert_cmpuint (r.lost, ==, 0);
  read_result_clear (&r);

  /* the pairing */
  sum = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sum->lifecycle.completed_without_issue, ==, 1);
  g_assert_cmpuint (sum->lifecycle.issued_without_queue, ==, 1);
  g_assert_cmpuint (sum->lifecycle.incomplete_at_end, ==, 0);
  g_assert_cmpuint (sum->lifecycle.unpaired, ==, 0);
  g_assert_cmpuint (btt_dev (sum, 8, 0)->phase[TRACE_BTT_Q2M].n, ==, 2);
  g_assert_cmpuint (btt_dev (sum, 8, 0)->n_qs, ==, 20 + 3 + 1 + 1 + 5);
  g_assert_cmpuint (btt_dev (sum, 8, 0)->n_ds, ==, 20 + 1 + 2 + 5 + 1);
  g_assert_cmpuint (sum->btt_q2c.count, ==, 29);
  g_assert_cmpuint (sum->btt_d2c.count, ==, 29);
  g_assert_cmpuint (sum->btt_q2d.count, ==, 30);   /* btt takes Q2D at each D: the requeued read twice */
  /* the requeued read: D2C from the second D (40000 ns) */
  g_assert_cmpint (sum->btt_d2c.min_ns, <=, 40000);

  if (test_have_tool ("blkparse"))
    {
      const char *argv[] = { "blkparse", "-i", "-", NULL };
      g_autofree char *text = test_tool_output (argv, path, dir);
      g_assert_cmpuint (blkparse_events (text), ==, s->len);
      g_assert_nonnull (strstr (text, "[tar]"));
      g_assert_nonnull (strstr (text, "[jbd2/sda1-8]"));
      g_assert_nonnull (strstr (text, "<- (8,1) 87952"));
      g_assert_nonnull (strstr (text, " R   R 70000 + 16 [0]"));
    }
  if (test_have_tool ("btt"))
    {
      const char *argv[] = { "btt", "-i", path, NULL };
      g_autofree char *text = test_tool_output (argv, NULL, dir);
      guint64 q = 0, d = 0;

      assert_btt_row (text, "Q2C", &sum->btt_q2c);
      assert_btt_row (text, "D2C", &sum->btt_d2c);
      g_assert_true (btt_merge_row (text, 8, 0, &q, &d));
      g_assert_cmpuint (q, ==, btt_dev (sum, 8, 0)->n_qs);
      g_assert_cmpuint (d, ==, btt_dev (sum, 8, 0)->n_ds);
    }
  remove_dir (dir);
}

/* The Linux 6.18 tracepoint capture through our writer and btt. */
static void
test_loop_618_through_btt (void)
{
  const char *shared = shared_testdata ();
  g_autofree char *src = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) from_text = NULL;
  g_autoptr(TraceSummary) from_bin = NULL;
  guint64 n = 0;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return;
    }
  src = g_build_filename (shared, "generated-block-loop-kernel6.18", "ftrace-block-loop2.txt.gz", NULL);
  if (skip_without ("6.18 capture not available", g_file_test (src, G_FILE_TEST_EXISTS) ? src : NULL))
    return;
  dir = temp_dir ();
  out = g_build_filename (dir, "loop2.blktrace", NULL);
  g_assert_true (trace_convert_to_blktrace (src, NULL, out, &n, &error));
  g_assert_no_error (error);
  from_text = trace_summarize (src, NULL, &error);
  g_assert_no_error (error);
  from_bin = trace_summarize (out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (from_bin->lifecycle.records, ==, n);
  g_assert_cmpuint (from_bin->lifecycle.records, ==, from_text->lifecycle.records);
  g_assert_cmpfloat (from_bin->btt_q2c.mean_ns, ==, from_text->btt_q2c.mean_ns);
  g_assert_cmpuint (from_bin->btt_q2c.count, ==, 1700);
  g_assert_cmpuint (from_bin->btt_d2c.count, ==, 1700);
  if (test_have_tool ("btt"))
    {
      const char *argv[] = { "btt", "-i", out, NULL };
      g_autofree char *text = test_tool_output (argv, NULL, dir);
      assert_btt_row (text, "Q2C", &from_bin->btt_q2c);
      assert_btt_row (text, "D2C", &from_bin->btt_d2c);
    }
  remove_dir (dir);
}

/* ---- mutation smoke ----------------------------------------------------- */

static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

/* Issue 12: no record a reader hands out has an extent whose end byte,
 * (sector + nr_sectors) * 512, wraps 64 bits (messages and the flush
 * completion at sector (u64) -1 with no data carry none). */
static void
assert_extent_fits (const TraceRecord *rec)
{
  const guint64 end_max = G_MAXUINT64 / 512;

  if (rec->action == TRACE_ACT_MESSAGE || (rec->sector == G_MAXUINT64 && rec->nr_sectors == 0))
    return;
  g_assert_cmpuint (rec->sector, <=, end_max - rec->nr_sectors);
  if (rec->action == TRACE_ACT_REMAP)
    g_assert_cmpuint (rec->from_sector, <=, end_max - rec->nr_sectors);
  if (rec->action == TRACE_ACT_SPLIT)
    g_assert_cmpuint (rec->new_sector, <=, end_max);
}

static void
test_mutation_smoke (void)
{
  g_autofree char *bin = sample_file ("sample.blktrace.0");
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  gsize len;
  guint runs = 0, failures = 0;

  if (skip_without ("takeoverjp sample not available", bin))
    return;
  g_assert_true (g_file_get_contents (bin, &data, &len, NULL));
  len = MIN (len, (gsize) 24 * 1024);   /* a few hundred records: enough, and fast */
  dir = temp_dir ();
  for (guint64 seed = 1; seed <= (g_test_thorough () ? 4000u : 400u); seed++)
    {
      guint64 st = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
      g_autofree guint8 *m = g_memdup2 (data, len);
      gsize mlen = len;
      guint edits = 1 + (guint) (next_rand (&st) % 6);
      g_autofree char *path = NULL;

      for (guint e = 0; e < edits && mlen > 0; e++)
        {
          gsize pos = (gsize) (next_rand (&st) % mlen);
          switch (next_rand (&st) % 5)
            {
            case 4:
              {
                /* a sector's high byte (version 7: bytes 16..23),
                 * roughly: extents near and past the limit (issue 12) */
                gsize at = pos - pos % 48 + 16 + 7;
                if (at < mlen)
                  m[at] = (guint8) (next_rand (&st) % 4);
              }
              break;
            case 0:
              mlen = pos;                                   /* truncate */
              break;
            case 1:
              m[pos] ^= (guint8) (1u << (next_rand (&st) % 8));   /* flip a bit */
              break;
            case 2:
              m[pos] = (guint8) next_rand (&st);              /* any byte */
              break;
            default:
              {
                gsize at = pos - pos % 48 + 46;   /* a pdu_len, roughly */
                if (at < mlen)
                  m[at] = (guint8) next_rand (&st);
              }
              break;
            }
        }
      path = write_file (dir, "mutant.bin", m, mlen);
      for (int forced = 0; forced < 2; forced++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(TraceReader) r = trace_reader_open (path, forced ? "blktrace" : NULL, &error);
          g_autoptr(TraceLifecycle) lc = trace_lifecycle_new ();
          TraceRecord rec;
          TraceIo io;
          TraceRequest rq;

          runs++;
          if (r != NULL)
            {
              while (trace_reader_next (r, &rec, &error))
                {
                  assert_extent_fits (&rec);
                  trace_lifecycle_feed (lc, &rec);
                  while (trace_lifecycle_pop_io (lc, &io))
                    ;
                  while (trace_lifecycle_pop_request (lc, &rq))
                    ;
                }
              trace_lifecycle_finish (lc);
              g_assert_cmpuint (trace_lifecycle_held (lc), ==, 0);
            }
          if (error == NULL)
            continue;
          failures++;
          g_assert_true (error->domain == TRACE_ERROR);
          g_assert_true (g_str_has_prefix (error->message, path));
          /* a binary reader always says where */
          if (forced || (r != NULL && strcmp (trace_reader_format (r), "blktrace") == 0))
            g_assert_nonnull (strstr (error->message, ": byte offset "));
        }
    }
  g_test_message ("%u runs, %u errors", runs, failures);
  g_assert_cmpuint (failures, >, runs / 10);
  remove_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/blktrace/sample-vs-blkparse", test_sample_vs_blkparse);
  g_test_add_func ("/blktrace/byte-order", test_byte_order);
  g_test_add_func ("/blktrace/per-cpu-set", test_per_cpu_set);
  g_test_add_func ("/blktrace/lost-events", test_lost_events);
  g_test_add_func ("/blktrace/version8", test_version8);
  g_test_add_func ("/blktrace/version-refused", test_version_refused);
  g_test_add_func ("/blktrace/truncated", test_truncated);
  g_test_add_func ("/blktrace/notes-and-payloads", test_notes_and_payloads);
  g_test_add_func ("/blktrace/writer/sample", test_writer_sample);
  g_test_add_func ("/blktrace/writer/synthetic", test_writer_synthetic);
  g_test_add_func ("/blktrace/writer/loop-6.18-btt", test_loop_618_through_btt);
  g_test_add_func ("/blktrace/mutation-smoke", test_mutation_smoke);
  g_test_add_func ("/blktrace/time-backwards", test_time_backwards);
  for (gsize i = 0; i < G_N_ELEMENTS (extent_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/blktrace/extent/%s", extent_cases[i].name);
      g_test_add_data_func (name, &extent_cases[i], test_extent_case);
    }
  return g_test_run ();
}
