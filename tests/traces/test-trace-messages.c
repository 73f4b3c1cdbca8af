/* test-trace-messages.c — whole message texts ("m" records: the CFQ/BFQ
 * notes, up to the kernel's 128 bytes) through every reader and writer
 * that carries them, past the 31 bytes TraceRecord.comm keeps, and the
 * barrier flag (B, kernels up to 2.6.36) through the blktrace writer
 * (issue 16).
 *
 * Samples: tests/data/valid-blk-bfq-messages{,-verbose,-classic}-6.18.ftrace
 * (hand-written in the 6.18 blk tracer's three layouts; their headers say
 * how) and valid-blkparse-2.6.35-cfq-barrier.blkparse (hand-written 2.6.35
 * blkparse text with barriers and CFQ notes).  blkparse runs where
 * installed (the test skips that part with the reason otherwise); the
 * command-line parts need IOSIM_BIN (set by meson).
 */
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "traces/trace.h"
#include "tests/traces/test-tmpdir.h"
#include "tests/test-run.h"

/* The notes of the three ftrace samples, in order: 31 bytes is what
 * TraceRecord.comm holds, 32 is one byte more. */
static const char *const bfq_notes[] = {
  "bfq12086S bfq_add_request: 1 rq",
  "bfq12086S insert rq 0",
  "bfq12086S set_in_service_queue, cur-budget = 16384",
  "bfq12086S expire (budget timeout), served 8 sectors of a budget of 16376; "
  "weight-raising ended, idle slice not armed",
  "bfq12086S bfq_add_request: 2 rqs",
};

#define CFQ_SAMPLE "valid-blkparse-2.6.35-cfq-barrier.blkparse"

/* ---- helpers ------------------------------------------------------------- */

/* A trace read whole: its records and, per record, the message text
 * (NULL for records that are not messages). */
typedef struct {
  GArray    *recs;
  GPtrArray *msgs;
} Trace;

static void
trace_clear (Trace *t)
{
  g_clear_pointer (&t->recs, g_array_unref);
  g_clear_pointer (&t->msgs, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Trace, trace_clear)

static void
read_trace (const char *path, const char *format, Trace *t)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, format, &error);
  TraceRecord rec;

  g_assert_no_error (error);
  t->recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  t->msgs = g_ptr_array_new_with_free_func (g_free);
  while (trace_reader_next (r, &rec, &error))
    {
      const char *msg = trace_reader_message (r);

      g_assert_true ((msg != NULL) == (rec.action == TRACE_ACT_MESSAGE));
      g_array_append_val (t->recs, rec);
      g_ptr_array_add (t->msgs, g_strdup (msg));
    }
  g_assert_no_error (error);
}

static char *
data_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

/* The record's comm holds the first TRACE_COMM_MAX - 1 bytes of the
 * whole text. */
static void
assert_comm_is_cut_message (const TraceRecord *rec, const char *msg)
{
  gsize want = MIN (strlen (msg), (gsize) TRACE_COMM_MAX - 1);

  g_assert_cmpuint (strlen (rec->comm), ==, want);
  g_assert_true (strncmp (rec->comm, msg, want) == 0);
}

/* The message texts of @b equal @a's, record for record; @a has some
 * longer than the comm. */
static void
assert_same_messages (const Trace *a, const Trace *b)
{
  guint long_ones = 0;

  g_assert_cmpuint (a->recs->len, ==, b->recs->len);
  for (guint i = 0; i < a->recs->len; i++)
    {
      const char *ma = a->msgs->pdata[i];
      const char *mb = b->msgs->pdata[i];

      g_assert_cmpint (g_array_index (a->recs, TraceRecord, i).action, ==,
                       g_array_index (b->recs, TraceRecord, i).action);
      g_assert_cmpstr (ma, ==, mb);
      if (ma != NULL && strlen (ma) >= TRACE_COMM_MAX)
        long_ones++;
    }
  g_assert_cmpuint (long_ones, >, 0);
}

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");

  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("IOSIM_BIN is not set to the iosim binary");
      return NULL;
    }
  return bin;
}

/* ---- ftrace-blk ---------------------------------------------------------- */

static const char *const ftrace_samples[] = {
  "valid-blk-bfq-messages-6.18.ftrace",
  "valid-blk-bfq-messages-verbose-6.18.ftrace",
  "valid-blk-bfq-messages-classic-6.18.ftrace",
};

/* Each layout gives every note whole, the comm its first 31 bytes. */
static void
test_ftrace (gconstpointer data)
{
  g_autofree char *path = data_path (data);
  g_auto(Trace) t = { 0 };
  guint n = 0;

  read_trace (path, "ftrace-blk", &t);
  for (guint i = 0; i < t.recs->len; i++)
    {
      const char *msg = t.msgs->pdata[i];

      if (msg == NULL)
        continue;
      g_assert_cmpuint (n, <, G_N_ELEMENTS (bfq_notes));
      g_assert_cmpstr (msg, ==, bfq_notes[n]);
      assert_comm_is_cut_message (&g_array_index (t.recs, TraceRecord, i), msg);
      n++;
    }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (bfq_notes));
}

/* `iosim trace cat` of a blk tracer capture prints blkparse's message
 * lines with the whole text. */
static void
test_ftrace_cat (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *path = data_path (ftrace_samples[0]);
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint n = 0;

  if (bin == NULL)
    return;
  dir = test_scratch_dir ("messages");
  {
    const char *argv[] = { bin, "trace", "cat", path, NULL };
    out = test_tool_output (argv, NULL, dir);
  }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *m = strstr (lines[i], "  m   N ");

      if (m == NULL)
        continue;
      g_assert_cmpuint (n, <, G_N_ELEMENTS (bfq_notes));
      g_assert_cmpstr (m + strlen ("  m   N "), ==, bfq_notes[n]);
      n++;
    }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (bfq_notes));
  g_assert_true (test_remove_tree (dir));
}

/* ---- blktrace writer ----------------------------------------------------- */

/* What the binary says of @rwbs: the barrier bit is BLK_TC_FLUSH's. */
static guint32
barrier_as_flush (guint32 rwbs)
{
  if (rwbs & TRACE_RWBS_BARRIER)
    rwbs = (rwbs & ~(guint32) TRACE_RWBS_BARRIER) | TRACE_RWBS_FLUSH;
  return rwbs;
}

static void
write_blktrace (const Trace *t, const char *name, gboolean per_cpu)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (name, per_cpu, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < t->recs->len; i++)
    {
      g_assert_true (trace_blktrace_output_add_message (out, &g_array_index (t->recs, TraceRecord, i),
                                                        t->msgs->pdata[i], &error));
      g_assert_no_error (error);
    }
  g_assert_true (trace_blktrace_output_close (out, &error));
  g_assert_no_error (error);
}

/* @got's records are @src's, barriers as flushes. */
static void
assert_same_ios (const Trace *src, const Trace *got)
{
  g_assert_cmpuint (src->recs->len, ==, got->recs->len);
  for (guint i = 0; i < src->recs->len; i++)
    {
      const TraceRecord *a = &g_array_index (src->recs, TraceRecord, i);
      const TraceRecord *b = &g_array_index (got->recs, TraceRecord, i);

      g_assert_cmpint (a->action, ==, b->action);
      if (a->action == TRACE_ACT_MESSAGE)
        continue;
      g_assert_cmpuint (barrier_as_flush (a->rwbs), ==, b->rwbs);
      g_assert_cmpuint (a->sector, ==, b->sector);
      g_assert_cmpuint (a->nr_sectors, ==, b->nr_sectors);
    }
}

static const struct {
  const char *sample;
  const char *format;
  guint       barriers;  /* records with B in the sample */
} blktrace_cases[] = {
  { CFQ_SAMPLE, "blkparse", 8 },
  { "valid-blk-bfq-messages-6.18.ftrace", "ftrace-blk", 0 },
};

static guint
count_barriers (const Trace *t)
{
  guint n = 0;

  for (guint i = 0; i < t->recs->len; i++)
    if (g_array_index (t->recs, TraceRecord, i).rwbs & TRACE_RWBS_BARRIER)
      n++;
  return n;
}

/* text -> binary dump -> iosim's blktrace reader: whole messages; a
 * barrier reads back as what the bit means to every reader since 2.6.37,
 * a flush. */
static void
test_blktrace_reader (gconstpointer data)
{
  guint c = GPOINTER_TO_UINT (data);
  g_autofree char *path = data_path (blktrace_cases[c].sample);
  g_autofree char *dir = test_scratch_dir ("messages");
  g_autofree char *dump = g_build_filename (dir, "dump.bin", NULL);
  g_auto(Trace) src = { 0 };
  g_auto(Trace) got = { 0 };

  read_trace (path, blktrace_cases[c].format, &src);
  g_assert_cmpuint (count_barriers (&src), ==, blktrace_cases[c].barriers);
  write_blktrace (&src, dump, FALSE);
  read_trace (dump, "blktrace", &got);
  assert_same_messages (&src, &got);
  assert_same_ios (&src, &got);
  g_assert_true (test_remove_tree (dir));
}

/* Whether @line starts with a device "maj,min " after blkparse's padding. */
static gboolean
is_event_line (const char *line)
{
  const char *p = line + strspn (line, " ");
  gsize major = strspn (p, "0123456789");
  gsize minor;

  if (p - line > 3 || major == 0 || p[major] != ',')
    return FALSE;
  minor = strspn (p + major + 1, "0123456789");
  return minor > 0 && p[major + 1 + minor] == ' ';
}

/* blkparse's event lines (not its notes and summaries). */
static GPtrArray *
event_lines (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GPtrArray *events = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; lines[i] != NULL; i++)
    if (is_event_line (lines[i]))
      g_ptr_array_add (events, g_strdup (lines[i]));
  return events;
}

/* @line of blkparse text with its RWBS field (the 7th) as blkparse since
 * 1.0.2 prints the barrier bit: B dropped, F first (same width). */
static char *
barrier_as_printed (const char *line)
{
  char *out = g_strdup (line);
  char *p = out;

  for (int field = 0; field < 7; field++)
    {
      char *start, *end;
      while (*p == ' ')
        p++;
      start = p;
      while (*p != '\0' && *p != ' ')
        p++;
      end = p;
      if (field == 6 && memchr (start, 'B', (gsize) (end - start)) != NULL)
        {
          g_autofree char *rest = g_strndup (start, (gsize) (end - start));
          char *w = start;
          *w++ = 'F';
          for (const char *r = rest; *r != '\0'; r++)
            if (*r != 'B')
              *w++ = *r;
          g_assert_true (w == end);
        }
    }
  return out;
}

/* text -> per-CPU set -> `blkparse -i NAME` prints the 2.6.35 source's
 * lines, byte for byte: every note whole; WBS as FWS (blkparse >= 1.0.2
 * reads bit 2 as a flush, as it does for a 2.6.35 kernel's own file). */
static void
test_blkparse_cfq (void)
{
  g_autofree char *path = data_path (CFQ_SAMPLE);
  g_autofree char *dir = NULL;
  g_autofree char *stem = NULL;
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GPtrArray) want = NULL;
  g_autoptr(GPtrArray) got = NULL;
  g_auto(Trace) src = { 0 };
  guint long_notes = 0;

  if (!test_have_tool ("blkparse"))
    return;
  dir = test_scratch_dir ("messages");
  stem = g_build_filename (dir, "cfq", NULL);
  read_trace (path, "blkparse", &src);
  write_blktrace (&src, stem, TRUE);
  {
    const char *argv[] = { "blkparse", "-i", "cfq", NULL };
    out = test_tool_output (argv, NULL, dir);
  }
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  want = event_lines (text);
  got = event_lines (out);
  g_assert_cmpuint (want->len, ==, src.recs->len);
  g_assert_cmpuint (got->len, ==, want->len);
  for (guint i = 0; i < want->len; i++)
    {
      g_autofree char *w = barrier_as_printed (want->pdata[i]);
      const char *m = src.msgs->pdata[i];

      g_assert_cmpstr (got->pdata[i], ==, w);
      if (m != NULL && strlen (m) >= TRACE_COMM_MAX)
        long_notes++;
    }
  g_assert_cmpuint (long_notes, >, 0);
  g_assert_true (test_remove_tree (dir));
}

/* The same through `iosim trace convert -t blktrace` and blkparse, for
 * the ftrace sample: blkparse's notes are the sample's, whole. */
static void
test_blkparse_convert_cli (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *path = data_path (ftrace_samples[0]);
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GPtrArray) got = NULL;
  guint n = 0;

  if (bin == NULL || !test_have_tool ("blkparse"))
    return;
  dir = test_scratch_dir ("messages");
  {
    const char *argv[] = { bin, "trace", "convert", "-t", "blktrace", "-o", "bfq", path, NULL };
    g_free (test_tool_output (argv, NULL, dir));
  }
  {
    const char *argv[] = { "blkparse", "-i", "bfq", NULL };
    out = test_tool_output (argv, NULL, dir);
  }
  got = event_lines (out);
  for (guint i = 0; i < got->len; i++)
    {
      const char *m = strstr (got->pdata[i], "  m   N ");
      if (m == NULL)
        continue;
      g_assert_cmpuint (n, <, G_N_ELEMENTS (bfq_notes));
      g_assert_cmpstr (m + strlen ("  m   N "), ==, bfq_notes[n]);
      n++;
    }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (bfq_notes));
  g_assert_true (test_remove_tree (dir));
}

/* ---- iosim-csv ----------------------------------------------------------- */

static void
write_csv (const Trace *t, const char *path)
{
  g_autoptr(GString) s = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  trace_csv_header (s);
  for (guint i = 0; i < t->recs->len; i++)
    {
      const TraceRecord *rec = &g_array_index (t->recs, TraceRecord, i);
      const char *m = t->msgs->pdata[i];
      trace_format_csv_text (rec, m != NULL ? m : rec->comm, s);
    }
  g_assert_true (g_file_set_contents (path, s->str, (gssize) s->len, &error));
  g_assert_no_error (error);
}

/* The samples' notes written to CSV read back whole. */
static void
test_csv_samples (gconstpointer data)
{
  g_autofree char *path = data_path (data);
  g_autofree char *dir = test_scratch_dir ("messages");
  g_autofree char *csv = g_build_filename (dir, "trace.csv", NULL);
  g_auto(Trace) src = { 0 };
  g_auto(Trace) got = { 0 };

  read_trace (path, NULL, &src);
  write_csv (&src, csv);
  read_trace (csv, "iosim-csv", &got);
  assert_same_messages (&src, &got);
  g_assert_true (test_remove_tree (dir));
}

/* Texts the comm column quotes or that sit at the comm's size. */
static const char *const csv_texts[] = {
  "cfq2887 Not idling. st->count:1 slice_end:4294937",
  "bfq1A \"quoted\" note, with a comma and \"\" two quotes",
  "bfq12086S bfq_add_request: 1 rq",
  "bfq12086S bfq_add_request: 2 rqs",
  ",leading comma and trailing comma,",
  "bfq12086S 127 bytes: ......................................................"
  "....................................................",
};

static void
test_csv_texts (void)
{
  g_autofree char *dir = test_scratch_dir ("messages");
  g_autofree char *csv = g_build_filename (dir, "texts.csv", NULL);
  g_auto(Trace) src = { 0 };
  g_auto(Trace) got = { 0 };

  g_assert_cmpuint (strlen (csv_texts[G_N_ELEMENTS (csv_texts) - 1]), ==, 127);
  src.recs = g_array_new (FALSE, TRUE, sizeof (TraceRecord));
  src.msgs = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < G_N_ELEMENTS (csv_texts); i++)
    {
      TraceRecord rec = { 0 };
      rec.time_ns = 1000 * (gint64) i;
      rec.dev_major = 8;
      rec.action = TRACE_ACT_MESSAGE;
      rec.rwbs = TRACE_RWBS_NONE;
      g_strlcpy (rec.comm, csv_texts[i], sizeof rec.comm);
      g_array_append_val (src.recs, rec);
      g_ptr_array_add (src.msgs, g_strdup (csv_texts[i]));
    }
  write_csv (&src, csv);
  read_trace (csv, NULL, &got);
  assert_same_messages (&src, &got);
  for (guint i = 0; i < got.recs->len; i++)
    assert_comm_is_cut_message (&g_array_index (got.recs, TraceRecord, i), got.msgs->pdata[i]);
  g_assert_true (test_remove_tree (dir));
}

/* `iosim trace cat --csv` of the ftrace sample reads back whole. */
static void
test_csv_cli (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *path = data_path (ftrace_samples[0]);
  g_autofree char *dir = NULL;
  g_autofree char *csv = NULL;
  g_auto(Trace) src = { 0 };
  g_auto(Trace) got = { 0 };

  if (bin == NULL)
    return;
  dir = test_scratch_dir ("messages");
  csv = g_build_filename (dir, "cat.csv", NULL);
  {
    const char *argv[] = { bin, "trace", "cat", "--csv", path, NULL };
    g_autofree char *out = test_tool_output (argv, NULL, dir);
    g_assert_true (g_file_set_contents (csv, out, -1, NULL));
  }
  read_trace (path, NULL, &src);
  read_trace (csv, NULL, &got);
  assert_same_messages (&src, &got);
  g_assert_true (test_remove_tree (dir));
}

/* ---- mutation ------------------------------------------------------------ */

/* xorshift64*: a fixed sequence from the seed */
static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

/* Byte flips, insertions (quotes and commas among them), cuts. */
static GString *
mutate (const GString *src, guint64 seed)
{
  static const char alphabet[] = "\",\n m N 0123456789abc\t\xff";
  guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
  GString *m = g_string_new_len (src->str, (gssize) src->len);
  guint edits = 1 + (guint) (next_rand (&s) % 6);

  for (guint e = 0; e < edits && m->len > 0; e++)
    {
      gsize pos = (gsize) (next_rand (&s) % m->len);
      switch (next_rand (&s) % 4)
        {
        case 0:
          m->str[pos] = alphabet[next_rand (&s) % (sizeof alphabet - 1)];
          break;
        case 1:
          g_string_insert_c (m, (gssize) pos, alphabet[next_rand (&s) % (sizeof alphabet - 1)]);
          break;
        case 2:
          g_string_erase (m, (gssize) pos, (gssize) MIN (m->len - pos, 1 + next_rand (&s) % 24));
          break;
        default:
          g_string_truncate (m, pos);
          break;
        }
    }
  return m;
}

/* The CSV made from the samples, mutated: every record read is whole or
 * the error names FILE:LINE; a message's comm is its text cut, and only
 * messages have a text. */
static void
test_csv_mutation (void)
{
  g_autofree char *dir = test_scratch_dir ("messages");
  g_autofree char *csv = g_build_filename (dir, "good.csv", NULL);
  g_autofree char *bad = g_build_filename (dir, "mutant.csv", NULL);
  g_autoptr(GString) good = g_string_new (NULL);
  guint failures = 0, runs = 0, long_seen = 0;

  for (guint i = 0; i < G_N_ELEMENTS (ftrace_samples); i++)
    {
      g_autofree char *path = data_path (ftrace_samples[i]);
      g_autofree char *text = NULL;
      g_auto(Trace) src = { 0 };

      read_trace (path, NULL, &src);
      write_csv (&src, csv);
      g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
      /* one header row for all */
      g_string_append (good, i == 0 ? text : strchr (text, '\n') + 1);
    }
  for (guint64 seed = 1; seed <= (g_test_thorough () ? 3000u : 300u); seed++)
    {
      g_autoptr(GString) m = mutate (good, seed);
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceReader) r = NULL;
      TraceRecord rec;

      g_assert_true (g_file_set_contents (bad, m->str, (gssize) m->len, NULL));
      runs++;
      r = trace_reader_open (bad, "iosim-csv", &error);
      g_assert_no_error (error);
      while (trace_reader_next (r, &rec, &error))
        {
          const char *msg = trace_reader_message (r);
          g_assert_true ((msg != NULL) == (rec.action == TRACE_ACT_MESSAGE));
          if (msg == NULL)
            continue;
          assert_comm_is_cut_message (&rec, msg);
          if (strlen (msg) >= TRACE_COMM_MAX)
            long_seen++;
        }
      if (error != NULL)
        {
          g_autofree char *where = g_strdup_printf ("%s:%" G_GUINT64_FORMAT ": ", bad,
                                                    trace_reader_lines (r));
          g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
          g_assert_true (g_str_has_prefix (error->message, where));
          failures++;
        }
    }
  /* the mutations reach both the error paths and the long texts */
  g_assert_cmpuint (failures, >, runs / 10);
  g_assert_cmpuint (long_seen, >, runs);
  g_test_message ("%u runs, %u parse errors, %u long notes read", runs, failures, long_seen);
  g_assert_true (test_remove_tree (dir));
}

int
main (int argc, char **argv)
{
  char *tmp = test_tmpdir_enter ();
  int rc;

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (ftrace_samples); i++)
    {
      g_autofree char *name = g_strdup_printf ("/trace/messages/ftrace/%s", ftrace_samples[i]);
      g_test_add_data_func (name, ftrace_samples[i], test_ftrace);
    }
  g_test_add_func ("/trace/messages/ftrace/cat", test_ftrace_cat);
  for (guint i = 0; i < G_N_ELEMENTS (blktrace_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/trace/messages/blktrace/%s", blktrace_cases[i].sample);
      g_test_add_data_func (name, GUINT_TO_POINTER (i), test_blktrace_reader);
    }
  g_test_add_func ("/trace/messages/blktrace/blkparse-cfq-barrier", test_blkparse_cfq);
  g_test_add_func ("/trace/messages/blktrace/convert-cli-blkparse", test_blkparse_convert_cli);
  g_test_add_data_func ("/trace/messages/csv/" CFQ_SAMPLE, CFQ_SAMPLE, test_csv_samples);
  for (guint i = 0; i < G_N_ELEMENTS (ftrace_samples); i++)
    {
      g_autofree char *name = g_strdup_printf ("/trace/messages/csv/%s", ftrace_samples[i]);
      g_test_add_data_func (name, ftrace_samples[i], test_csv_samples);
    }
  g_test_add_func ("/trace/messages/csv/texts", test_csv_texts);
  g_test_add_func ("/trace/messages/csv/cat-cli", test_csv_cli);
  g_test_add_func ("/trace/messages/csv/mutation", test_csv_mutation);
  rc = g_test_run ();
  test_tmpdir_leave (tmp);
  return rc;
}
