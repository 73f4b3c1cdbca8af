/* test-trace-merge.c — several traces read as one stream in time order,
 * and the record filters behind `iosim trace cat|convert|merge`: every
 * action letter (the binary-only AB, DD, ZP, ZU too) has its filter bit,
 * and a binary blktrace file merges with an iosim CSV file, each keeping
 * what only its format carries (cgroup id, byte-exact extent, io_tag). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "traces/trace-merge.h"

/* Write @text to a temporary blkparse file; the caller unlinks it. */
static char *
temp_trace (const char *text)
{
  g_autoptr (GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp ("merge-XXXXXX.blkparse", &path, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
  close (fd);
  return path;
}

static const char a_text[] =
  "  8,0    0        1     0.000000000   100  Q   R 100 + 8 [a]\n"
  "  8,0    0        2     0.000002000   100  D   R 100 + 8 [a]\n"
  "  8,0    0        3     0.000005000     0  C   R 100 + 8 [0]\n";
static const char b_text[] =
  "  8,16   1        1     0.000001000   200  Q   W 500 + 16 [b]\n"
  "  8,16   1        2     0.000002000   200  D   W 500 + 16 [b]\n"
  "  8,16   1        3     0.000009000     0  C   W 500 + 16 [0]\n";

static void
test_merge_order (void)
{
  g_autofree char *a = temp_trace (a_text);
  g_autofree char *b = temp_trace (b_text);
  const char *const paths[] = { a, b, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceMerge) m = trace_merge_open (paths, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_merge_n_inputs (m), ==, 2);
  /* Times 0, 1, 2 (a), 2 (b), 5, 9 us: the tie goes to the first input. */
  static const struct { gint64 t; guint input; TraceAction act; } want[] = {
    { 0, 0, TRACE_ACT_QUEUE }, { 1000, 1, TRACE_ACT_QUEUE }, { 2000, 0, TRACE_ACT_ISSUE },
    { 2000, 1, TRACE_ACT_ISSUE }, { 5000, 0, TRACE_ACT_COMPLETE }, { 9000, 1, TRACE_ACT_COMPLETE },
  };
  TraceRecord rec;
  guint input, n = 0;
  while (trace_merge_next (m, &rec, &input, &error))
    {
      g_assert_cmpuint (n, <, G_N_ELEMENTS (want));
      g_assert_cmpint (rec.time_ns, ==, want[n].t);
      g_assert_cmpuint (input, ==, want[n].input);
      g_assert_cmpint (rec.action, ==, want[n].act);
      n++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
  g_unlink (a);
  g_unlink (b);
}

static guint
count_matching (const TraceFilter *f, const char *const *paths)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceMerge) m = trace_merge_open (paths, NULL, &error);
  g_assert_no_error (error);
  TraceRecord rec;
  guint n = 0;
  while (trace_merge_next (m, &rec, NULL, &error))
    n += trace_filter_match (f, &rec);
  g_assert_no_error (error);
  return n;
}

static void
test_filters (void)
{
  g_autofree char *a = temp_trace (a_text);
  g_autofree char *b = temp_trace (b_text);
  const char *const paths[] = { a, b, NULL };
  g_autoptr (GError) error = NULL;
  TraceFilter f = { 0 };
  g_assert_cmpuint (count_matching (&f, paths), ==, 6);
  g_assert_true (trace_filter_set_device (&f, "8,16", &error));
  g_assert_cmpuint (count_matching (&f, paths), ==, 3);
  g_assert_true (trace_filter_set_actions (&f, "D,C", &error));
  g_assert_cmpuint (count_matching (&f, paths), ==, 2);
  memset (&f, 0, sizeof f);
  f.have_pid = TRUE;
  f.pid = 100;
  g_assert_cmpuint (count_matching (&f, paths), ==, 2);
  memset (&f, 0, sizeof f);
  f.have_from = f.have_to = TRUE;
  f.from_ns = 1000;
  f.to_ns = 5000;        /* [1, 5) us: b's Q, both D */
  g_assert_cmpuint (count_matching (&f, paths), ==, 3);
  memset (&f, 0, sizeof f);
  g_assert_true (trace_filter_set_actions (&f, "QUT", &error));
  g_assert_cmpuint (f.actions, ==, (1u << TRACE_ACT_QUEUE) | (1u << TRACE_ACT_UNPLUG_TIMER));
  g_assert_false (trace_filter_set_actions (&f, "Q,Z", &error));
  g_assert_nonnull (strstr (error->message, "'Z'"));
  g_clear_error (&error);
  g_assert_false (trace_filter_set_device (&f, "sda", &error));
  g_assert_nonnull (strstr (error->message, "sda"));
  g_unlink (a);
  g_unlink (b);
}

static void
test_bad_input (void)
{
  g_autofree char *a = temp_trace (a_text);
  g_autofree char *bad = temp_trace ("  8,0    0        1     0.000000000   100  Q   R 100 + 8 [a]\n"
                                     "this is not a record\n");
  const char *const paths[] = { a, bad, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceMerge) m = trace_merge_open (paths, "blkparse", &error);
  g_assert_no_error (error);
  TraceRecord rec;
  while (trace_merge_next (m, &rec, NULL, &error))
    ;
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, bad));
  g_assert_nonnull (strstr (error->message, ":2"));
  const char *const missing[] = { a, "/nonexistent/trace", NULL };
  g_clear_error (&error);
  g_assert_null (trace_merge_open (missing, NULL, &error));
  g_assert_nonnull (strstr (error->message, "/nonexistent/trace"));
  g_unlink (a);
  g_unlink (bad);
}

/* Each action's letters select that action alone; two-letter actions
 * are read before one-letter ones. */
static void
test_action_letters (void)
{
  g_autoptr (GError) error = NULL;
  TraceFilter f = { 0 };

  for (guint a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    {
      const char *letters = trace_action_letters ((TraceAction) a);
      g_test_message ("action %u: %s", a, letters);
      g_assert_true (trace_filter_set_actions (&f, letters, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (f.actions, ==, 1u << a);
    }
  g_assert_true (trace_filter_set_actions (&f, "AB", &error));
  g_assert_cmpuint (f.actions, ==, 1u << TRACE_ACT_ABORT);
  g_assert_true (trace_filter_set_actions (&f, "A,B", &error));
  g_assert_cmpuint (f.actions, ==, (1u << TRACE_ACT_REMAP) | (1u << TRACE_ACT_BOUNCE));
  g_assert_true (trace_filter_set_actions (&f, "QDDC", &error));
  g_assert_cmpuint (f.actions, ==, (1u << TRACE_ACT_QUEUE) | (1u << TRACE_ACT_DRV_DATA)
                                   | (1u << TRACE_ACT_COMPLETE));
  g_assert_true (trace_filter_set_actions (&f, "ZP,ZU", &error));
  g_assert_cmpuint (f.actions, ==, (1u << TRACE_ACT_ZONE_PLUG) | (1u << TRACE_ACT_ZONE_UNPLUG));
  g_assert_false (trace_filter_set_actions (&f, "ZX", &error));
  g_assert_nonnull (strstr (error->message, "'Z'"));
}

static TraceRecord
make_rec (gint64 t, guint32 minor, const char *act, const char *rwbs, guint64 sector, guint32 nr)
{
  TraceRecord r;

  memset (&r, 0, sizeof r);
  r.time_ns = t;
  r.dev_major = 8;
  r.dev_minor = minor;
  r.cpu = 0;
  r.pid = 100 + minor;
  g_assert_true (trace_action_from_letters (act, &r.action));
  g_assert_true (trace_rwbs_parse (rwbs, &r.rwbs));
  r.sector = sector;
  r.nr_sectors = nr;
  g_strlcpy (r.comm, "fio", sizeof r.comm);
  return r;
}

static char *
temp_file (const char *pattern, const void *data, gsize len)
{
  g_autoptr (GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp (pattern, &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, data, (gssize) len, &error));
  g_assert_no_error (error);
  return path;
}

/* A binary blktrace file (8,0, absolute times, a cgroup id and a zone
 * plug) and an iosim CSV file (8,16, one I/O not on sector boundaries,
 * with an io_tag) read as one stream. */
static void
test_binary_and_csv (void)
{
  g_autoptr (TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr (GByteArray) bin = g_byte_array_new ();
  g_autoptr (GString) csv = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  TraceRecord b[4], c[2];

  b[0] = make_rec (5000000000, 0, "Q", "W", 2048, 8);
  b[0].cgroup_id = 77;
  b[1] = make_rec (5000002000, 0, "ZP", "W", 2048, 8);
  b[2] = make_rec (5000004000, 0, "D", "W", 2048, 8);
  b[3] = make_rec (5000009000, 0, "C", "W", 2048, 8);
  for (guint i = 0; i < G_N_ELEMENTS (b); i++)
    trace_blktrace_writer_append (w, &b[i], bin);

  /* bytes [1000, 4000): sectors 1..7, 488 bytes into the first */
  c[0] = make_rec (5000003000, 16, "D", "R", 1, 7);
  c[0].head_bytes = 488;
  c[0].length_bytes = 3000;
  c[0].io_tag = 42;
  c[1] = c[0];
  c[1].action = TRACE_ACT_COMPLETE;
  c[1].time_ns = 5000008000;
  trace_csv_header (csv);
  for (guint i = 0; i < G_N_ELEMENTS (c); i++)
    trace_format_csv (&c[i], csv);

  g_autofree char *bin_path = temp_file ("merge-XXXXXX.blktrace.bin", bin->data, bin->len);
  g_autofree char *csv_path = temp_file ("merge-XXXXXX.csv", csv->str, csv->len);
  const char *const paths[] = { bin_path, csv_path, NULL };
  g_autoptr (TraceMerge) m = trace_merge_open (paths, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (trace_reader_format (trace_merge_reader (m, 0)), ==, "blktrace");
  g_assert_cmpstr (trace_reader_format (trace_merge_reader (m, 1)), ==, "iosim-csv");

  static const struct { guint input, index; } want[] = {
    { 0, 0 }, { 0, 1 }, { 1, 0 }, { 0, 2 }, { 1, 1 }, { 0, 3 },
  };
  TraceFilter zones = { 0 };
  TraceRecord rec;
  guint input, n = 0, zone_records = 0;
  g_assert_true (trace_filter_set_actions (&zones, "ZP,ZU", &error));
  while (trace_merge_next (m, &rec, &input, &error))
    {
      const TraceRecord *exp;
      g_assert_cmpuint (n, <, G_N_ELEMENTS (want));
      g_assert_cmpuint (input, ==, want[n].input);
      exp = want[n].input == 0 ? &b[want[n].index] : &c[want[n].index];
      g_assert_cmpint (rec.time_ns, ==, exp->time_ns);
      g_assert_cmpint (rec.action, ==, exp->action);
      g_assert_cmpuint (rec.dev_minor, ==, exp->dev_minor);
      g_assert_cmpuint (rec.sector, ==, exp->sector);
      g_assert_cmpuint (rec.nr_sectors, ==, exp->nr_sectors);
      g_assert_cmpuint (rec.cgroup_id, ==, exp->cgroup_id);
      g_assert_cmpuint (rec.io_tag, ==, exp->io_tag);
      g_assert_cmpuint (trace_record_offset_bytes (&rec), ==, trace_record_offset_bytes (exp));
      g_assert_cmpuint (trace_record_length_bytes (&rec), ==, trace_record_length_bytes (exp));
      zone_records += trace_filter_match (&zones, &rec);
      n++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
  g_assert_cmpuint (zone_records, ==, 1);
  g_assert_cmpuint (trace_record_offset_bytes (&c[0]), ==, 1000);
  g_assert_cmpuint (trace_record_length_bytes (&c[0]), ==, 3000);
  g_unlink (bin_path);
  g_unlink (csv_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/merge/order", test_merge_order);
  g_test_add_func ("/trace/merge/filters", test_filters);
  g_test_add_func ("/trace/merge/bad-input", test_bad_input);
  g_test_add_func ("/trace/merge/action-letters", test_action_letters);
  g_test_add_func ("/trace/merge/binary-and-csv", test_binary_and_csv);
  return g_test_run ();
}
