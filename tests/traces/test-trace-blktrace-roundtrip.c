/* test-trace-blktrace-roundtrip.c — text -> binary blktrace -> blkparse /
 * btt gives the source back (issue 16): the converted files' times count
 * from the source's first record (written at 1 ns, so that blkparse's pipe
 * mode does not restart them at record 513 and btt's idle periods are the
 * source's), `blkparse -i NAME` reads the per-CPU set, remaps keep their
 * origin.
 *
 * The sample, tests/data/valid-blk-loop-partition-6.18.ftrace, is a real
 * capture made on this machine with `iosim capture -d /dev/loop0` (tracefs
 * blk tracer, trace_clock=mono, so absolute times of 42,724 s) while dd
 * wrote and read through an MBR partition on the loop device: 1,168 events
 * on two CPUs, every I/O with its remap (A) record from 259,0.  blktrace
 * itself could not record here (debugfs's trace files refuse to open on
 * this kernel), and no device-mapper is loaded, hence the partition;
 * tests/traces/capture-partition-sample.sh makes it again.
 * The takeoverjp sample's blkparse text (shared test data, used where
 * present) gives the byte-for-byte check: 6,741 events from t = 0.
 * blkparse and btt run where installed; the test skips them with the
 * reason otherwise.
 */
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "traces/trace.h"
#include "tests/traces/test-tmpdir.h"
#include "tests/test-run.h"

#define SAMPLE "valid-blk-loop-partition-6.18.ftrace"
#define SAMPLE_RECORDS 1168

/* ---- helpers ------------------------------------------------------------- */

static GArray *
read_records (const char *path, const char *format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, format, &error);
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord rec;

  g_assert_no_error (error);
  while (trace_reader_next (r, &rec, &error))
    g_array_append_val (recs, rec);
  g_assert_no_error (error);
  return recs;
}

static GArray *
sample_records (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", SAMPLE, NULL);
  GArray *recs = read_records (path, NULL);

  g_assert_cmpuint (recs->len, ==, SAMPLE_RECORDS);
  return recs;
}

/* Write @recs through a TraceBlktraceOutput at @name. */
static void
write_output (GArray *recs, const char *name, gboolean per_cpu)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (name, per_cpu, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < recs->len; i++)
    {
      g_assert_true (trace_blktrace_output_add (out, &g_array_index (recs, TraceRecord, i), &error));
      g_assert_no_error (error);
    }
  g_assert_true (trace_blktrace_output_close (out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (trace_blktrace_output_clamped (out), ==, 0);
}

/* blkparse's event lines (its "Input file ... added" notes dropped) read
 * back with iosim's blkparse reader. */
static GArray *
parse_blkparse_output (const char *text, const char *dir)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GString) events = g_string_new (NULL);
  g_autofree char *path = g_build_filename (dir, "blkparse-output.txt", NULL);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; lines[i] != NULL; i++)
    if (!g_str_has_prefix (lines[i], "Input file ") && lines[i][0] != '\0')
      g_string_append_printf (events, "%s\n", lines[i]);
  g_assert_true (g_file_set_contents (path, events->str, (gssize) events->len, &error));
  g_assert_no_error (error);
  return read_records (path, "blkparse");
}

/* What blkparse prints of @src, time rebased by @shift_ns. */
static void
assert_same_event (const TraceRecord *src, gint64 shift_ns, const TraceRecord *got, guint i)
{
  if (src->time_ns + shift_ns != got->time_ns || src->action != got->action
      || src->sector != got->sector)
    g_test_message ("event %u: %s at %" G_GINT64_FORMAT " ns, got %s at %" G_GINT64_FORMAT " ns",
                    i + 1, trace_action_letters (src->action), src->time_ns + shift_ns,
                    trace_action_letters (got->action), got->time_ns);
  g_assert_cmpint (got->time_ns, ==, src->time_ns + shift_ns);
  g_assert_cmpuint (got->dev_major, ==, src->dev_major);
  g_assert_cmpuint (got->dev_minor, ==, src->dev_minor);
  g_assert_cmpint (got->cpu, ==, src->cpu);
  g_assert_cmpuint (got->pid, ==, src->pid);
  g_assert_cmpint (got->action, ==, src->action);
  g_assert_cmpuint (got->rwbs, ==, src->rwbs);
  g_assert_cmpuint (got->sector, ==, src->sector);
  g_assert_cmpuint (got->nr_sectors, ==, src->nr_sectors);
  g_assert_cmpint (got->error, ==, src->error);
  g_assert_cmpuint (got->unplug_count, ==, src->unplug_count);
  g_assert_cmpuint (got->from_major, ==, src->from_major);
  g_assert_cmpuint (got->from_minor, ==, src->from_minor);
  g_assert_cmpuint (got->from_sector, ==, src->from_sector);
  /* blkparse prints a name where the line has one (not on C or A) */
  if (got->comm[0] != '\0')
    g_assert_cmpstr (got->comm, ==, src->comm);
}

static void
assert_same_events (GArray *src, gint64 shift_ns, GArray *got)
{
  g_assert_cmpuint (got->len, ==, src->len);
  for (guint i = 0; i < src->len; i++)
    assert_same_event (&g_array_index (src, TraceRecord, i), shift_ns,
                       &g_array_index (got, TraceRecord, i), i);
}

/* The time of a version-7 record header (host order, as we write it). */
typedef struct {
  guint32 cpu;
  guint64 time_ns;
  guint32 action;
} RawHead;

/* Every record header of a file we wrote. */
static GArray *
raw_heads (const char *path)
{
  g_autofree guint8 *data = NULL;
  gsize len = 0, off = 0;
  GArray *heads = g_array_new (FALSE, FALSE, sizeof (RawHead));

  g_assert_true (g_file_get_contents (path, (char **) &data, &len, NULL));
  while (off < len)
    {
      RawHead h;
      guint32 magic;
      guint16 pdu_len;
      g_assert_cmpuint (len - off, >=, 48);
      memcpy (&magic, data + off, 4);
      g_assert_cmphex (magic, ==, 0x65617407);
      memcpy (&h.time_ns, data + off + 8, 8);
      memcpy (&h.action, data + off + 28, 4);
      memcpy (&h.cpu, data + off + 40, 4);
      memcpy (&pdu_len, data + off + 46, 2);
      g_array_append_val (heads, h);
      off += 48 + pdu_len;
    }
  return heads;
}

/* ---- without tools ------------------------------------------------------- */

/* The per-CPU set: NAME.blktrace.0 and .1, each record's cpu its file's,
 * times from 1 ns; read back as a set, the records are the source's. */
static void
test_per_cpu_set (void)
{
  g_autoptr(GArray) src = sample_records ();
  g_autofree char *dir = test_scratch_dir ("btroundtrip");
  g_autofree char *name = g_build_filename (dir, "part", NULL);
  g_autofree char *set = g_build_filename (dir, "part.blktrace", NULL);
  gint64 first_ns = g_array_index (src, TraceRecord, 0).time_ns;
  guint per_cpu[2] = { 0, 0 };
  guint remaps = 0;

  write_output (src, name, TRUE);
  for (guint cpu = 0; cpu < 3; cpu++)
    {
      g_autofree char *path = g_strdup_printf ("%s.blktrace.%u", name, cpu);
      g_autoptr(GArray) heads = NULL;

      if (cpu == 2)
        {
          g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
          break;
        }
      heads = raw_heads (path);
      for (guint i = 0; i < heads->len; i++)
        {
          const RawHead *h = &g_array_index (heads, RawHead, i);
          g_assert_cmpuint (h->cpu, ==, cpu);
          g_assert_cmpuint (h->time_ns, >=, 1);
          /* notes (category NOTIFY) are not events */
          per_cpu[cpu] += ((h->action >> 16) & (1u << 10)) == 0;
        }
    }
  g_assert_cmpuint (per_cpu[0], >, 0);
  g_assert_cmpuint (per_cpu[1], >, 0);
  g_assert_cmpuint (per_cpu[0] + per_cpu[1], ==, SAMPLE_RECORDS);

  {
    g_autoptr(GArray) back = read_records (set, NULL);
    assert_same_events (src, 1 - first_ns, back);
    for (guint i = 0; i < back->len; i++)
      remaps += g_array_index (back, TraceRecord, i).action == TRACE_ACT_REMAP;
    /* 110 + 30 + 6 I/Os through the partition */
    g_assert_cmpuint (remaps, ==, 146);
  }
  g_assert_true (test_remove_tree (dir));
}

/* A CPU number too large for a set is refused, naming the record; an
 * empty trace still leaves NAME.blktrace.0 for blkparse to open. */
static void
test_per_cpu_limits (void)
{
  g_autofree char *dir = test_scratch_dir ("btroundtrip");
  g_autofree char *name = g_build_filename (dir, "big", NULL);
  g_autofree char *empty = g_build_filename (dir, "empty", NULL);
  g_autofree char *empty0 = g_build_filename (dir, "empty.blktrace.0", NULL);
  g_autoptr(GError) error = NULL;
  TraceRecord rec = { .time_ns = 5, .dev_major = 8, .cpu = 5000, .action = TRACE_ACT_QUEUE,
                      .rwbs = TRACE_RWBS_READ, .nr_sectors = 8, .line = 7 };

  {
    g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (name, TRUE, &error);
    g_assert_no_error (error);
    g_assert_false (trace_blktrace_output_add (out, &rec, &error));
    g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, "source line 7"));
    g_assert_nonnull (strstr (error->message, "cpu 5000"));
    g_clear_error (&error);
  }
  {
    g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (empty, TRUE, &error);
    g_assert_no_error (error);
    g_assert_true (trace_blktrace_output_close (out, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_test (empty0, G_FILE_TEST_IS_REGULAR));
  }
  g_assert_true (trace_blktrace_output_is_dump ("-"));
  g_assert_true (trace_blktrace_output_is_dump ("sda.bin"));
  g_assert_false (trace_blktrace_output_is_dump ("sda"));
  g_assert_false (trace_blktrace_output_is_dump ("sda.blktrace.0"));
  g_assert_true (test_remove_tree (dir));
}

/* Naming: NAME, NAME.blktrace and NAME.blktrace.N all give NAME.blktrace.N. */
static void
test_per_cpu_names (void)
{
  static const char *const given[] = { "x", "x.blktrace", "x.blktrace.3" };
  g_autofree char *dir = test_scratch_dir ("btroundtrip");
  TraceRecord rec = { .time_ns = 5, .dev_major = 8, .cpu = 1, .action = TRACE_ACT_QUEUE,
                      .rwbs = TRACE_RWBS_READ, .nr_sectors = 8 };

  for (guint i = 0; i < G_N_ELEMENTS (given); i++)
    {
      g_autofree char *name = g_build_filename (dir, given[i], NULL);
      g_autofree char *f0 = g_build_filename (dir, "x.blktrace.0", NULL);
      g_autofree char *f1 = g_build_filename (dir, "x.blktrace.1", NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (name, TRUE, &error);

      g_assert_no_error (error);
      g_assert_true (trace_blktrace_output_add (out, &rec, &error));
      g_assert_true (trace_blktrace_output_close (out, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (trace_blktrace_output_n_files (out), ==, 2);
      g_assert_true (g_file_test (f0, G_FILE_TEST_IS_REGULAR));
      g_assert_true (g_file_test (f1, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpint (g_remove (f0), ==, 0);
      g_assert_cmpint (g_remove (f1), ==, 0);
    }
  g_assert_true (test_remove_tree (dir));
}

/* A record earlier than the first is written at the first's time and
 * counted; a span beyond 2^63 ns is cut at the largest time, not wrapped. */
static void
test_clamped (void)
{
  g_autofree char *dir = test_scratch_dir ("btroundtrip");
  g_autofree char *dump = g_build_filename (dir, "clamp.bin", NULL);
  static const gint64 in_ns[] = { 100, 50, 200, G_MININT64 + 1, G_MAXINT64 };
  static const gint64 want_ns[] = { 1, 1, 101, 1, G_MAXINT64 };
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) back = NULL;

  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(TraceBlktraceOutput) out = trace_blktrace_output_open (dump, FALSE, &error);
      guint first = pass == 0 ? 0 : 3;
      guint last = pass == 0 ? 3 : 5;

      g_assert_no_error (error);
      for (guint i = first; i < last; i++)
        {
          TraceRecord rec = { .time_ns = in_ns[i], .dev_major = 8, .cpu = 0,
                              .action = TRACE_ACT_QUEUE, .rwbs = TRACE_RWBS_READ,
                              .sector = i * 8, .nr_sectors = 8 };
          g_assert_true (trace_blktrace_output_add (out, &rec, &error));
        }
      g_assert_true (trace_blktrace_output_close (out, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (trace_blktrace_output_clamped (out), ==, pass == 0 ? 1 : 0);
      back = read_records (dump, "blktrace");
      g_assert_cmpuint (back->len, ==, last - first);
      for (guint i = first; i < last; i++)
        {
          const TraceRecord *x = &g_array_index (back, TraceRecord, i - first);
          g_assert_cmpuint (x->sector, ==, i * 8);
          g_assert_cmpint (x->time_ns, ==, want_ns[i]);
        }
      g_clear_pointer (&back, g_array_unref);
    }
  g_assert_true (test_remove_tree (dir));
}

/* ---- with blkparse --------------------------------------------------------- */

/* The sample rebased so that its first record is at 0, as blkparse text
 * gives it: the case whose times blkparse restarted at record 513. */
static GArray *
sample_from_zero (void)
{
  GArray *src = sample_records ();
  gint64 first_ns = g_array_index (src, TraceRecord, 0).time_ns;

  for (guint i = 0; i < src->len; i++)
    g_array_index (src, TraceRecord, i).time_ns -= first_ns;
  g_assert_cmpuint (src->len, >, 512);
  return src;
}

/* blkparse -i NAME on the per-CPU set, and blkparse -i - on the dump and
 * on one per-CPU file through a pipe: every event the source's, times
 * from 0 (not again from 0 at record 513). */
static void
test_blkparse (gconstpointer data)
{
  gboolean from_zero = GPOINTER_TO_INT (data);
  g_autoptr(GArray) src = from_zero ? sample_from_zero () : sample_records ();
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autofree char *dump = NULL;
  gint64 shift_ns = -g_array_index (src, TraceRecord, 0).time_ns;

  if (!test_have_tool ("blkparse"))
    return;
  dir = test_scratch_dir ("btroundtrip");
  name = g_build_filename (dir, "part", NULL);
  dump = g_build_filename (dir, "part.bin", NULL);
  write_output (src, name, TRUE);
  write_output (src, dump, FALSE);
  {
    const char *argv[] = { "blkparse", "-q", "-i", "part", NULL };
    g_autofree char *text = test_tool_output (argv, NULL, dir);
    g_autoptr(GArray) got = parse_blkparse_output (text, dir);
    assert_same_events (src, shift_ns, got);
  }
  {
    const char *argv[] = { "blkparse", "-q", "-i", "-", NULL };
    g_autofree char *text = test_tool_output (argv, dump, dir);
    g_autoptr(GArray) got = parse_blkparse_output (text, dir);
    assert_same_events (src, shift_ns, got);
  }
  {
    /* CPU 1's file alone through a pipe: its own records, same times */
    g_autofree char *cpu1 = g_build_filename (dir, "part.blktrace.1", NULL);
    const char *argv[] = { "blkparse", "-q", "-i", "-", NULL };
    g_autofree char *text = test_tool_output (argv, cpu1, dir);
    g_autoptr(GArray) got = parse_blkparse_output (text, dir);
    g_autoptr(GArray) want = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
    gint64 cpu1_shift_ns = 0;
    for (guint i = 0; i < src->len; i++)
      if (g_array_index (src, TraceRecord, i).cpu == 1)
        g_array_append_val (want, g_array_index (src, TraceRecord, i));
    g_assert_cmpuint (want->len, >, 512);
    /* blkparse's genesis is this file's first record */
    cpu1_shift_ns = -g_array_index (want, TraceRecord, 0).time_ns;
    assert_same_events (want, cpu1_shift_ns, got);
  }
  g_assert_true (test_remove_tree (dir));
}

/* The takeoverjp sample's blkparse text (shared test data; 6,741 events
 * from t = 0, one CPU, a remap per I/O): blkparse's lines for our set and
 * for our dump through a pipe are the source's lines, byte for byte. */
static void
test_blkparse_text_identical (void)
{
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *text_path = NULL;
  g_autofree char *source = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autofree char *dump = NULL;
  g_autoptr(GArray) src = NULL;
  g_auto(GStrv) want = NULL;

  if (shared != NULL)
    text_path = g_build_filename (shared, "blktrace-takeoverjp-sample", "derived",
                                  "sample.blkparse.txt", NULL);
  if (text_path == NULL || !g_file_test (text_path, G_FILE_TEST_IS_REGULAR))
    {
      g_test_skip ("the takeoverjp sample (IOSIM_SHARED_TESTDATA) is not available");
      return;
    }
  if (!test_have_tool ("blkparse"))
    return;
  g_assert_true (g_file_get_contents (text_path, &source, NULL, NULL));
  want = g_strsplit (source, "\n", -1);
  src = read_records (text_path, "blkparse");
  g_assert_cmpuint (src->len, ==, 6741);
  dir = test_scratch_dir ("btroundtrip");
  name = g_build_filename (dir, "sample", NULL);
  dump = g_build_filename (dir, "sample.bin", NULL);
  write_output (src, name, TRUE);
  write_output (src, dump, FALSE);
  for (guint pass = 0; pass < 2; pass++)
    {
      const char *by_name[] = { "blkparse", "-q", "-i", "sample", NULL };
      const char *by_pipe[] = { "blkparse", "-q", "-i", "-", NULL };
      g_autofree char *text = pass == 0 ? test_tool_output (by_name, NULL, dir) : test_tool_output (by_pipe, dump, dir);
      g_auto(GStrv) got = g_strsplit (text, "\n", -1);
      guint k = 0;

      for (guint i = 0; got[i] != NULL && k < src->len; i++)
        {
          if (g_str_has_prefix (got[i], "Input file "))
            continue;
          g_assert_cmpstr (got[i], ==, want[k]);
          k++;
        }
      g_assert_cmpuint (k, ==, src->len);
    }
  g_assert_true (test_remove_tree (dir));
}

/* ---- with btt --------------------------------------------------------------- */

/* The nanoseconds of a "%.9f" time. */
static gint64
parse_ns (const char *s)
{
  g_auto(GStrv) parts = g_strsplit (s, ".", 2);

  g_assert_nonnull (parts[1]);
  g_assert_cmpuint (strlen (parts[1]), ==, 9);
  return g_ascii_strtoll (parts[0], NULL, 10) * 1000000000 + g_ascii_strtoll (parts[1], NULL, 10);
}

/* btt on our dump against btt on the dump blkparse -d makes of our
 * per-CPU set (times from 0): every table the same, the activity lists
 * 1 ns later (our first record's time); the idle time is the source's
 * (the capture's 42,724 s absolute times gave btt an idle period of that
 * length before), and D2C / Q2C are the source's. */
static void
test_btt (void)
{
  g_autoptr(GArray) src = sample_records ();
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autofree char *ours = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *btt_ours = NULL;
  g_autofree char *btt_ref = NULL;
  g_auto(GStrv) a = NULL;
  g_auto(GStrv) b = NULL;
  gboolean listing = FALSE;
  guint times = 0;

  if (!test_have_tool ("blkparse") || !test_have_tool ("btt"))
    return;
  dir = test_scratch_dir ("btroundtrip");
  name = g_build_filename (dir, "part", NULL);
  ours = g_build_filename (dir, "ours.bin", NULL);
  ref = g_build_filename (dir, "ref.bin", NULL);
  write_output (src, name, TRUE);
  write_output (src, ours, FALSE);
  {
    const char *argv[] = { "blkparse", "-q", "-O", "-i", "part", "-d", "ref.bin", NULL };
    g_free (test_tool_output (argv, NULL, dir));
  }
  {
    const char *argv[] = { "btt", "-i", "ours.bin", NULL };
    btt_ours = test_tool_output (argv, NULL, dir);
  }
  {
    const char *argv[] = { "btt", "-i", "ref.bin", NULL };
    btt_ref = test_tool_output (argv, NULL, dir);
  }
  a = g_strsplit (btt_ours, "\n", -1);
  b = g_strsplit (btt_ref, "\n", -1);
  g_assert_cmpuint (g_strv_length (a), ==, g_strv_length (b));
  g_assert_cmpuint (g_strv_length (a), >, 40);
  for (guint i = 0; a[i] != NULL; i++)
    {
      g_auto(GStrv) fa = NULL;
      g_auto(GStrv) fb = NULL;
      if (g_str_has_prefix (a[i], "# Total System"))
        listing = TRUE;
      if (!listing || a[i][0] == '#' || a[i][0] == '\0')
        {
          g_assert_cmpstr (a[i], ==, b[i]);
          continue;
        }
      /* "  <time> <level>" */
      fa = g_strsplit_set (g_strstrip (a[i]), " ", -1);
      fb = g_strsplit_set (g_strstrip (b[i]), " ", -1);
      g_assert_cmpint (parse_ns (fa[0]) - parse_ns (fb[0]), ==, 1);
      g_assert_cmpstr (fa[g_strv_length (fa) - 1], ==, fb[g_strv_length (fb) - 1]);
      times++;
    }
  g_assert_cmpuint (times, >, 0);
  {
    /* "(  7,  0) |        146   0.000103863   0.002894262   3.49": the
     * source's 146 idle gaps add up to its span less its busy time */
    const char *row = strstr (btt_ours, " (  7,  0) |        146 ");
    g_assert_nonnull (row);
  }
  g_assert_true (test_remove_tree (dir));
}

/* ---- the command line ------------------------------------------------------ */

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

/* `iosim trace convert -t blktrace -o NAME` writes the per-CPU set,
 * `-o NAME.bin` one dump; both read back as the source. */
static void
test_cli (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *sample = g_test_build_filename (G_TEST_DIST, "data", SAMPLE, NULL);
  g_autofree char *dir = NULL;
  g_autoptr(GArray) src = NULL;

  if (bin == NULL)
    return;
  src = sample_records ();
  dir = test_scratch_dir ("btroundtrip");
  {
    const char *argv[] = { bin, "trace", "convert", "-t", "blktrace", "-o", "cap", sample, NULL };
    g_autofree char *set = g_build_filename (dir, "cap.blktrace", NULL);
    g_autofree char *f1 = g_build_filename (dir, "cap.blktrace.1", NULL);
    g_free (test_tool_output (argv, NULL, dir));
    g_assert_true (g_file_test (f1, G_FILE_TEST_IS_REGULAR));
    g_autoptr(GArray) back = read_records (set, "blktrace");
    assert_same_events (src, 1 - g_array_index (src, TraceRecord, 0).time_ns, back);
  }
  {
    const char *argv[] = { bin, "trace", "convert", "-t", "blktrace", "-o", "cap.bin", sample, NULL };
    g_autofree char *dump = g_build_filename (dir, "cap.bin", NULL);
    g_free (test_tool_output (argv, NULL, dir));
    g_autoptr(GArray) back = read_records (dump, NULL);
    assert_same_events (src, 1 - g_array_index (src, TraceRecord, 0).time_ns, back);
  }
  g_assert_true (test_remove_tree (dir));
}

int
main (int argc, char **argv)
{
  char *tmp = test_tmpdir_enter ();
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/blktrace-roundtrip/per-cpu-set", test_per_cpu_set);
  g_test_add_func ("/blktrace-roundtrip/per-cpu-limits", test_per_cpu_limits);
  g_test_add_func ("/blktrace-roundtrip/per-cpu-names", test_per_cpu_names);
  g_test_add_func ("/blktrace-roundtrip/clamped", test_clamped);
  g_test_add_data_func ("/blktrace-roundtrip/blkparse/capture-times", GINT_TO_POINTER (FALSE),
                        test_blkparse);
  g_test_add_data_func ("/blktrace-roundtrip/blkparse/from-zero-over-512", GINT_TO_POINTER (TRUE),
                        test_blkparse);
  g_test_add_func ("/blktrace-roundtrip/blkparse/text-identical", test_blkparse_text_identical);
  g_test_add_func ("/blktrace-roundtrip/btt", test_btt);
  g_test_add_func ("/blktrace-roundtrip/cli", test_cli);
  rc = g_test_run ();
  test_tmpdir_leave (tmp);
  return rc;
}
