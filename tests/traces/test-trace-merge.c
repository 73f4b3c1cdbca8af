/* test-trace-merge.c — several traces read as one stream in time order,
 * and the record filters behind `iosim trace cat|convert|merge`. */
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/merge/order", test_merge_order);
  g_test_add_func ("/trace/merge/filters", test_filters);
  g_test_add_func ("/trace/merge/bad-input", test_bad_input);
  return g_test_run ();
}
