/* test-trace-results.c — the per-I/O results CSV: writer/loader round trip
 * and data-driven parser cases (tests/compare/data/valid-*.csv and
 * fail-*.csv; the first line of each states the expected outcome as
 * "# expect-rows: N" or "# expect-error: TEXT"). */
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include "traces/trace-results.h"

static char *
tmp_path (const char *name)
{
  return g_build_filename (g_get_user_cache_dir (), name, NULL);
}

static void
test_round_trip (void)
{
  static const TraceResult rows[] = {
    { "dd-4756", 4756, "loop0", TRACE_OP_READ, 0, 4096, 100, 120, 52300, 0 },
    { "kworker/u8:2-12", 12, "loop0", TRACE_OP_WRITE, 1 << 20, 65536, 200, 200, 90000, 0 },
    { "a,b", 7, "dev,x", TRACE_OP_DISCARD, G_MAXUINT64 - 1, 0, 5, 6, 7, -5 },
    { "say \"hi\"", 8, "", TRACE_OP_FLUSH, 0, 0, 0, 0, 0, 0 },
    { " lead", 9, "sda", TRACE_OP_OTHER, 512, 512, G_MAXINT64 - 10, G_MAXINT64 - 10,
      G_MAXINT64 - 1, -4095 },
  };
  g_autofree char *path = tmp_path ("round-trip.csv");
  g_autoptr(TraceResults) loaded = NULL;
  g_autoptr(GError) error = NULL;
  FILE *out;

  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  out = fopen (path, "w");
  g_assert_nonnull (out);
  trace_results_write_header (out);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    trace_results_write_row (out, &rows[i]);
  g_assert_cmpint (fclose (out), ==, 0);

  loaded = trace_results_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (loaded), ==, G_N_ELEMENTS (rows));
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      const TraceResult *r = trace_results_get (loaded, i);

      g_assert_cmpstr (r->process, ==, rows[i].process);
      g_assert_cmpuint (r->pid, ==, rows[i].pid);
      g_assert_cmpstr (r->device, ==, rows[i].device);
      g_assert_cmpint (r->op, ==, rows[i].op);
      g_assert_cmpuint (r->offset_bytes, ==, rows[i].offset_bytes);
      g_assert_cmpuint (r->bytes, ==, rows[i].bytes);
      g_assert_cmpint (r->intended_ns, ==, rows[i].intended_ns);
      g_assert_cmpint (r->issue_ns, ==, rows[i].issue_ns);
      g_assert_cmpint (r->complete_ns, ==, rows[i].complete_ns);
      g_assert_cmpint (r->error, ==, rows[i].error);
    }
}

/* A producer that knows its latency kind writes the old header plus a
 * latency_kind column, and the kind on every row; it reads back. */
static void
test_round_trip_kind (gconstpointer data)
{
  TraceLatencyKind kind = GPOINTER_TO_INT (data);
  const TraceResult rows[] = {
    { "fio-7", 7, "loop0", TRACE_OP_READ, 0, 4096, 100, 120, 52300, 0, kind },
    { "fio-8", 8, "loop0", TRACE_OP_WRITE, 4096, 4096, 200, 200, 90000, -5, kind },
  };
  g_autofree char *path = tmp_path ("round-trip-kind.csv");
  g_autofree char *text = NULL;
  g_autofree char *header = NULL;
  g_autoptr(TraceResults) loaded = NULL;
  g_autoptr(GError) error = NULL;
  FILE *out;

  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  out = fopen (path, "w");
  g_assert_nonnull (out);
  trace_results_write_header_kind (out, kind);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    trace_results_write_row (out, &rows[i]);
  g_assert_cmpint (fclose (out), ==, 0);

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  header = g_strconcat ("process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,"
                        "complete_ns,latency_ns,error,latency_kind\nfio-7,7,loop0,read,0,4096,"
                        "100,120,52300,52180,0,", trace_latency_kind_name (kind), "\n", NULL);
  g_assert_true (g_str_has_prefix (text, header));
  loaded = trace_results_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (loaded), ==, 2);
  g_assert_cmpint (trace_results_latency_kind (loaded), ==, kind);
  g_assert_cmpint (trace_results_get (loaded, 1)->latency_kind, ==, kind);
  g_assert_cmpint (trace_results_get (loaded, 1)->error, ==, -5);
}

/* Unknown kind is the old format, byte for byte: no column at all. */
static void
test_write_unknown_kind (void)
{
  const TraceResult row = { "a", 1, "d", TRACE_OP_READ, 0, 512, 0, 0, 1, 0,
                            TRACE_LATENCY_UNKNOWN };
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);

  trace_results_write_header_kind (out, TRACE_LATENCY_UNKNOWN);
  trace_results_write_row (out, &row);
  fclose (out);
  g_assert_cmpstr (buf, ==, TRACE_RESULTS_HEADER "a,1,d,read,0,512,0,0,1,1,0\n");
  free (buf);
}

static void
test_kind_names (void)
{
  for (guint k = 0; k < TRACE_LATENCY_N_KINDS; k++)
    {
      TraceLatencyKind parsed = TRACE_LATENCY_N_KINDS;

      g_assert_true (trace_latency_kind_parse (trace_latency_kind_name (k), &parsed));
      g_assert_cmpint (parsed, ==, k);
    }
  g_assert_cmpstr (trace_latency_kind_name (TRACE_LATENCY_SYSCALL), ==, "syscall");
  g_assert_cmpstr (trace_latency_kind_name (TRACE_LATENCY_BLOCK_Q2C), ==, "block-q2c");
  g_assert_false (trace_latency_kind_parse ("Syscall", &(TraceLatencyKind) { 0 }));
  g_assert_false (trace_latency_kind_parse ("", &(TraceLatencyKind) { 0 }));
}

/* Names the writer cannot represent: control characters become '?'. */
static void
test_write_control_chars (void)
{
  const TraceResult row = { "a\nb\tc", 1, "d", TRACE_OP_READ, 0, 512, 0, 0, 1, 0 };
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);

  trace_results_write_row (out, &row);
  fclose (out);
  g_assert_cmpstr (buf, ==, "a?b?c,1,d,read,0,512,0,0,1,1,0\n");
  free (buf);
}

static void
test_missing_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceResults) r = trace_results_load ("/nonexistent/iosim-results.csv", &error);

  g_assert_null (r);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent/iosim-results.csv"));
}

/* The expectation on the first line of a data file. */
static char *
read_expectation (const char *path, const char *prefix)
{
  g_autofree char *text = NULL;
  char *nl;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  nl = strpbrk (text, "\r\n");
  if (nl != NULL)
    *nl = '\0';
  if (!g_str_has_prefix (text, prefix))
    return NULL;
  return g_strdup (text + strlen (prefix));
}

static void
test_data_file (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = g_path_get_basename (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceResults) r = trace_results_load (path, &error);

  if (g_str_has_prefix (base, "valid-"))
    {
      g_autofree char *rows = read_expectation (path, "# expect-rows: ");

      g_assert_no_error (error);
      g_assert_nonnull (rows);
      g_assert_cmpuint (trace_results_len (r), ==, g_ascii_strtoull (rows, NULL, 10));
    }
  else
    {
      g_autofree char *expected = read_expectation (path, "# expect-error: ");
      g_autofree char *located = NULL;

      g_assert_nonnull (expected);
      g_assert_null (r);
      g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
      /* The message names the file, then the line and the problem. */
      located = g_strconcat (path, expected, NULL);
      if (!g_str_has_prefix (error->message, located))
        g_error ("%s: got \"%s\", expected it to start with \"%s\"", base,
                 error->message, located);
    }
}

/* Values of the valid files, beyond the row count. */
static void
test_valid_values (void)
{
  g_autofree char *basic = g_test_build_filename (G_TEST_DIST, "compare", "data",
                                                  "valid-basic.csv", NULL);
  g_autofree char *reordered = g_test_build_filename (G_TEST_DIST, "compare", "data",
                                                      "valid-reordered.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceResults) a = trace_results_load (basic, &error);
  g_autoptr(TraceResults) b = NULL;
  const TraceResult *r;

  g_assert_no_error (error);
  /* Written before the latency_kind column: read as before, kind unknown. */
  g_assert_cmpint (trace_results_latency_kind (a), ==, TRACE_LATENCY_UNKNOWN);
  r = trace_results_get (a, 1);
  g_assert_cmpstr (r->process, ==, "dd-4756");
  g_assert_cmpint (r->op, ==, TRACE_OP_WRITE);
  g_assert_cmpint (r->intended_ns, ==, 60000);
  g_assert_cmpint (r->issue_ns, ==, 61000);
  r = trace_results_get (a, 2);
  g_assert_cmpstr (r->process, ==, "kworker/u8:2");
  g_assert_cmpint (r->error, ==, -5);

  b = trace_results_load (reordered, &error);
  g_assert_no_error (error);
  r = trace_results_get (b, 0);
  g_assert_cmpstr (r->process, ==, "a,b");
  g_assert_cmpuint (r->pid, ==, 7);
  g_assert_cmpstr (r->device, ==, "");
  g_assert_cmpint (r->intended_ns, ==, 1000);
  g_assert_cmpint (r->complete_ns, ==, 1100);
  r = trace_results_get (b, 1);
  g_assert_cmpstr (r->process, ==, "say \"hi\"");
  g_assert_cmpint (r->op, ==, TRACE_OP_DISCARD);
}

static void
test_valid_kind (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "compare", "data",
                                                 "valid-latency-kind.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceResults) r = trace_results_load (path, &error);

  g_assert_no_error (error);
  g_assert_cmpint (trace_results_latency_kind (r), ==, TRACE_LATENCY_BLOCK_Q2C);
  g_assert_cmpint (trace_results_get (r, 0)->latency_kind, ==, TRACE_LATENCY_BLOCK_Q2C);
}

static int
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
add_data_tests (void)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "compare", "data", NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if ((g_str_has_prefix (name, "valid-") || g_str_has_prefix (name, "fail-"))
        && g_str_has_suffix (name, ".csv"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, cmp_names);
  for (guint i = 0; i < names->len; i++)
    {
      const char *n = g_ptr_array_index (names, i);
      g_autofree char *test_path = g_strconcat ("/results/parse/", n, NULL);

      g_test_add_data_func_full (test_path, g_build_filename (dir, n, NULL),
                                 test_data_file, g_free);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/results/round-trip", test_round_trip);
  g_test_add_data_func ("/results/round-trip-kind/syscall",
                        GINT_TO_POINTER (TRACE_LATENCY_SYSCALL), test_round_trip_kind);
  g_test_add_data_func ("/results/round-trip-kind/block-q2c",
                        GINT_TO_POINTER (TRACE_LATENCY_BLOCK_Q2C), test_round_trip_kind);
  g_test_add_func ("/results/write-unknown-kind", test_write_unknown_kind);
  g_test_add_func ("/results/kind-names", test_kind_names);
  g_test_add_func ("/results/valid-kind", test_valid_kind);
  g_test_add_func ("/results/write-control-chars", test_write_control_chars);
  g_test_add_func ("/results/missing-file", test_missing_file);
  g_test_add_func ("/results/valid-values", test_valid_values);
  add_data_tests ();
  return g_test_run ();
}
