/* test-trace-parse.c — data-driven reader tests (GLib bookmark-file
 * pattern): every tests/data/valid-* file must parse completely, in the
 * format and with the record count its "# expect-*" lines name; every
 * tests/data/fail-* file must fail with a GError naming FILE:LINE (its
 * "# expect-error-line:").  Plus the real samples in shared/testdata
 * (skipped when absent), the blkparse writer round trip and a
 * deterministic mutation smoke test over every reader.
 */
#include "test-tmpdir.h"
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "traces/trace-lifecycle.h"

/* ---- helpers ------------------------------------------------------------ */

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* tests/data/PREFIX*, sorted (G_TEST_SRCDIR is tests/). */
static GPtrArray *
data_files (const char *prefix)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "data", NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, prefix))
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (files, compare_paths);
  return files;
}

/* Value of "# KEY: value" in @path, or NULL. */
static char *
expectation (const char *path, const char *key)
{
  g_autofree char *contents = NULL;
  g_autofree char *tag = g_strdup_printf ("# %s: ", key);
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    if (g_str_has_prefix (*l, tag))
      return g_strstrip (g_strdup (*l + strlen (tag)));
  return NULL;
}

static const char *
shared_testdata (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    return NULL;
  return dir;
}

/* Read every record; returns the count, or -1 with @error set. */
static gint64
read_all (const char *path, const char *format, GError **error)
{
  g_autoptr(TraceReader) r = trace_reader_open (path, format, error);
  TraceRecord rec;
  gint64 n = 0;

  if (r == NULL)
    return -1;
  while (trace_reader_next (r, &rec, error))
    n++;
  return (error != NULL && *error != NULL) ? -1 : n;
}

/* ---- data-driven -------------------------------------------------------- */

static void
test_valid_files (void)
{
  g_autoptr(GPtrArray) files = data_files ("valid-");

  g_assert_cmpuint (files->len, >=, 8);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = files->pdata[i];
      g_autofree char *want_format = expectation (path, "expect-format");
      g_autofree char *want_records = expectation (path, "expect-records");
      g_autofree char *reordered = expectation (path, "expect-reordered");
      g_autofree char *backwards = expectation (path, "expect-time-backwards");
      /* Formats that emit a completion after later rows (msr-csv,
       * systor17-csv) promise time order instead of line order. */
      gboolean by_time = g_strcmp0 (reordered, "yes") == 0;
      g_autoptr(GHashTable) record_lines = g_hash_table_new (NULL, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceReader) r = NULL;
      TraceRecord rec;
      guint64 n = 0;
      guint64 last_line = 0;
      gint64 last_time = G_MININT64;

      g_test_message ("%s", path);
      g_assert_nonnull (want_format);
      g_assert_nonnull (want_records);
      r = trace_reader_open (path, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (trace_reader_format (r), ==, want_format);
      while (trace_reader_next (r, &rec, &error))
        {
          g_assert_cmpuint (rec.line, >=, 1);
          g_assert_cmpuint (rec.line, <=, trace_reader_lines (r));
          if (by_time)
            g_assert_cmpint (rec.time_ns, >=, last_time);
          else
            g_assert_cmpuint (rec.line, >, last_line);
          g_assert_cmpint (rec.action, <, TRACE_ACT_N_ACTIONS);
          last_line = rec.line;
          last_time = rec.time_ns;
          g_hash_table_add (record_lines, GSIZE_TO_POINTER ((gsize) rec.line));
          n++;
        }
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, g_ascii_strtoull (want_records, NULL, 10));
      if (backwards != NULL)
        g_assert_cmpuint (trace_reader_time_backwards (r), ==, g_ascii_strtoull (backwards, NULL, 10));
      /* every line is either the source of records or counted as skipped */
      g_assert_cmpuint (g_hash_table_size (record_lines) + trace_reader_skipped (r), ==,
                        trace_reader_lines (r));

      /* forcing the sniffed format gives the same result */
      g_assert_cmpint (read_all (path, want_format, &error), ==, (gint64) n);
      g_assert_no_error (error);
    }
}

static void
test_fail_files (void)
{
  g_autoptr(GPtrArray) files = data_files ("fail-");

  g_assert_cmpuint (files->len, >=, 10);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = files->pdata[i];
      g_autofree char *line = expectation (path, "expect-error-line");
      g_autofree char *where = g_strdup_printf ("%s:%s: ", path, line);
      /* optional: a phrase the message must hold, so that the file fails
       * for the reason it was written for */
      g_autofree char *contains = expectation (path, "expect-error-contains");
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", path);
      g_assert_nonnull (line);
      g_assert_cmpint (read_all (path, NULL, &error), ==, -1);
      g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
      g_assert_true (g_str_has_prefix (error->message, where));
      if (contains != NULL)
        g_assert_nonnull (strstr (error->message, contains));
    }
}

/* ---- sniffing, opening, metadata ---------------------------------------- */

static char *
write_temp (const char *name, const char *contents, gssize len)
{
  char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, len, &error);
  g_assert_no_error (error);
  return path;
}

static void
test_unknown_format (void)
{
  g_autofree char *path = write_temp ("mystery.txt", "hello\nworld\n", -1);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, NULL, &error);

  g_assert_null (r);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, path));
  g_clear_error (&error);

  r = trace_reader_open (path, "no-such-format", &error);
  g_assert_null (r);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "no-such-format"));
}

static void
test_missing_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open ("/nonexistent/x.blkparse", NULL, &error);

  g_assert_null (r);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message, "/nonexistent/x.blkparse: "));
}

static void
test_extension_fallback (void)
{
  /* only comments: the extension decides */
  g_autofree char *path = write_temp ("empty.blkparse", "# nothing yet\n", -1);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (read_all (path, NULL, &error), ==, 0);
  g_assert_no_error (error);
}

static void
test_meta (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data",
                                                 "valid-blk-loop-mqdeadline-6.18.ftrace", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, NULL, &error);
  g_auto(GStrv) keys = NULL;

  g_assert_no_error (error);
  /* available right after open: the header is read while sniffing */
  g_assert_cmpstr (trace_reader_meta (r, "device"), ==, "/dev/loop0");
  g_assert_cmpstr (trace_reader_meta (r, "devno"), ==, "7,0");
  g_assert_cmpstr (trace_reader_meta (r, "scheduler"), ==, "mq-deadline");
  g_assert_null (trace_reader_meta (r, "rotational"));
  keys = trace_reader_meta_keys (r);
  g_assert_cmpuint (g_strv_length (keys), ==, 5);
  g_assert_cmpstr (keys[0], ==, "device");
  g_assert_cmpstr (keys[4], ==, "trace_clock");
}

static void
test_gzip (void)
{
  /* compress a valid file with GIO and read it back */
  g_autofree char *src = g_test_build_filename (G_TEST_DIST, "data",
                                                "valid-blk-loop-none-6.18.ftrace", NULL);
  g_autofree char *dst = g_build_filename (g_get_tmp_dir (), "loop.ftrace.gz", NULL);
  g_autofree char *contents = NULL;
  gsize len;
  g_autoptr(GZlibCompressor) comp = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  guint8 out[65536];
  gsize read_bytes, written;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (src, &contents, &len, NULL));
  g_assert_cmpint (g_converter_convert (G_CONVERTER (comp), contents, len, out, sizeof out,
                                        G_CONVERTER_INPUT_AT_END, &read_bytes, &written, &error),
                   ==, G_CONVERTER_FINISHED);
  g_assert_no_error (error);
  g_assert_cmpuint (read_bytes, ==, len);
  g_assert_true (g_file_set_contents (dst, (const char *) out, (gssize) written, NULL));
  g_assert_cmpint (read_all (dst, NULL, &error), ==, read_all (src, NULL, NULL));
  g_assert_no_error (error);
}

static void
test_stdin (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *src = g_test_build_filename (G_TEST_DIST, "data",
                                                    "valid-blkparse-t.blkparse", NULL);
      g_autoptr(GError) error = NULL;
      int fd = open (src, O_RDONLY);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (dup2 (fd, STDIN_FILENO), ==, STDIN_FILENO);
      close (fd);
      g_assert_cmpint (read_all ("-", NULL, &error), ==, 5);
      g_assert_no_error (error);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* ---- field-level checks ------------------------------------------------- */

static void
read_records (const char *name, GArray *out)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", name, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, NULL, &error);
  TraceRecord rec;

  g_assert_no_error (error);
  while (trace_reader_next (r, &rec, &error))
    g_array_append_val (out, rec);
  g_assert_no_error (error);
}

static void
test_fields_ftrace_blk (void)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord *r;

  read_records ("valid-blk-loop-none-6.18.ftrace", recs);
  r = &g_array_index (recs, TraceRecord, 0);
  /* "dd-11764   [001] d..1.  1103.562134:   7,0    Q  RS 0 + 8 [dd]" */
  g_assert_cmpstr (r->comm, ==, "dd");
  g_assert_cmpuint (r->pid, ==, 11764);
  g_assert_cmpint (r->cpu, ==, 1);
  g_assert_cmpint (r->time_ns, ==, G_GINT64_CONSTANT (1103562134000));
  g_assert_cmpuint (r->dev_major, ==, 7);
  g_assert_cmpuint (r->dev_minor, ==, 0);
  g_assert_cmpint (r->action, ==, TRACE_ACT_QUEUE);
  g_assert_cmpuint (r->rwbs, ==, TRACE_RWBS_READ | TRACE_RWBS_SYNC);
  g_assert_cmpuint (r->sector, ==, 0);
  g_assert_cmpuint (r->nr_sectors, ==, 8);
  r = &g_array_index (recs, TraceRecord, 3);
  g_assert_cmpint (r->action, ==, TRACE_ACT_UNPLUG_IO);
  g_assert_cmpuint (r->unplug_count, ==, 1);
  r = &g_array_index (recs, TraceRecord, 5);
  /* "ksoftirqd/0-14      [000] d.s1.  1103.562286:   7,0    C  RS 0 + 8 [0]" */
  g_assert_cmpstr (r->comm, ==, "ksoftirqd/0");
  g_assert_cmpuint (r->pid, ==, 14);
  g_assert_cmpint (r->action, ==, TRACE_ACT_COMPLETE);
  g_assert_cmpint (r->error, ==, 0);

  g_array_set_size (recs, 0);
  read_records ("valid-blk-classic-6.18.ftrace", recs);
  r = &g_array_index (recs, TraceRecord, 0);
  /* "  7,0    1  1122.704856279 12083  Q  RS 0 + 8 [dd]" */
  g_assert_cmpint (r->time_ns, ==, G_GINT64_CONSTANT (1122704856279));
  g_assert_cmpuint (r->pid, ==, 12083);
  g_assert_cmpint (r->cpu, ==, 1);

  g_array_set_size (recs, 0);
  read_records ("valid-blk-verbose-6.18.ftrace", recs);
  g_assert_cmpint (g_array_index (recs, TraceRecord, 3).action, ==, TRACE_ACT_UNPLUG_IO);
  g_assert_cmpint (g_array_index (recs, TraceRecord, 6).action, ==, TRACE_ACT_COMPLETE);
}

static void
test_fields_ftrace_events (void)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord *r;
  gboolean saw_flush = FALSE;

  read_records ("valid-events-old-variants.ftrace", recs);
  r = &g_array_index (recs, TraceRecord, 2);
  g_assert_cmpint (r->action, ==, TRACE_ACT_INSERT);
  g_assert_cmpuint (r->nr_sectors, ==, 8);
  r = &g_array_index (recs, TraceRecord, 5);
  /* record-tgid and a comm with a space and dashes in the prefix; the
   * event's own [comm] field names the task */
  g_assert_cmpstr (r->comm, ==, "Web Content");
  g_assert_cmpuint (r->pid, ==, 4711);
  g_assert_cmpint (r->cpu, ==, 0);
  r = &g_array_index (recs, TraceRecord, 8);
  g_assert_cmpint (r->action, ==, TRACE_ACT_FRONTMERGE);
  r = &g_array_index (recs, TraceRecord, 10);
  /* trace-cmd style: no flags column */
  g_assert_cmpint (r->action, ==, TRACE_ACT_ISSUE);
  g_assert_cmpint (r->time_ns, ==, G_GINT64_CONSTANT (1150000010000));
  r = &g_array_index (recs, TraceRecord, 11);
  g_assert_cmpint (r->action, ==, TRACE_ACT_REQUEUE);
  r = &g_array_index (recs, TraceRecord, 13);
  g_assert_cmpint (r->action, ==, TRACE_ACT_COMPLETE);
  g_assert_cmpint (r->error, ==, -5);
  r = &g_array_index (recs, TraceRecord, 15);
  g_assert_cmpint (r->action, ==, TRACE_ACT_REMAP);
  g_assert_cmpuint (r->from_major, ==, 253);
  g_assert_cmpuint (r->from_minor, ==, 0);
  g_assert_cmpuint (r->from_sector, ==, 0);
  g_assert_cmpuint (r->sector, ==, 2048);
  r = &g_array_index (recs, TraceRecord, 17);
  g_assert_cmpint (r->action, ==, TRACE_ACT_SPLIT);
  g_assert_cmpuint (r->new_sector, ==, 2560);
  r = &g_array_index (recs, TraceRecord, 22);
  /* counter clock: raw ticks, no scaling */
  g_assert_cmpint (r->time_ns, ==, G_GINT64_CONSTANT (123456789012345));

  g_array_set_size (recs, 0);
  read_records ("valid-events-mqdeadline-6.18.ftrace", recs);
  for (guint i = 0; i < recs->len; i++)
    {
      r = &g_array_index (recs, TraceRecord, i);
      if (r->action == TRACE_ACT_COMPLETE && r->sector == G_MAXUINT64)
        {
          g_assert_cmpuint (r->rwbs, ==, TRACE_RWBS_FLUSH);
          saw_flush = TRUE;
        }
    }
  g_assert_true (saw_flush);
}

static void
test_fields_blkparse (void)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord *r;

  read_records ("valid-blkparse-default.blkparse", recs);
  r = &g_array_index (recs, TraceRecord, 0);
  g_assert_cmpint (r->action, ==, TRACE_ACT_REMAP);
  g_assert_cmpuint (r->from_major, ==, 8);
  g_assert_cmpuint (r->from_minor, ==, 2);
  r = &g_array_index (recs, TraceRecord, 9);
  g_assert_cmpint (r->action, ==, TRACE_ACT_UNPLUG_TIMER);
  g_assert_cmpuint (r->unplug_count, ==, 1);
  r = &g_array_index (recs, TraceRecord, 12);
  g_assert_cmpstr (r->comm, ==, "Web Content");
  r = &g_array_index (recs, TraceRecord, 23);
  g_assert_cmpint (r->error, ==, -5);
  r = &g_array_index (recs, TraceRecord, 24);
  g_assert_cmpstr (r->comm, ==, "");   /* [(null)] */
  r = &g_array_index (recs, TraceRecord, 30);
  g_assert_cmpint (r->action, ==, TRACE_ACT_MESSAGE);
  g_assert_cmpstr (r->comm, ==, "cfq1234 slice expired t=0");
  r = &g_array_index (recs, TraceRecord, 33);
  g_assert_cmpuint (r->rwbs, ==, TRACE_RWBS_WRITE | TRACE_RWBS_FUA | TRACE_RWBS_SYNC);

  g_array_set_size (recs, 0);
  read_records ("valid-blkparse-t.blkparse", recs);
  r = &g_array_index (recs, TraceRecord, 4);
  g_assert_cmpint (r->time_ns, ==, 3928331);
  g_assert_cmpuint (r->sector, ==, 24803160);
  g_assert_cmpuint (r->nr_sectors, ==, 160);
}

static void
test_rwbs (void)
{
  static const char *const good[] = { "R", "W", "N", "RA", "WS", "WFS", "FWS", "FN", "D", "RM", "WSM", "RAS" };
  static const char *const bad[] = { "", "Q", "RX", "WSQ", "12" };
  guint32 f;

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      char out[8];
      g_assert_true (trace_rwbs_parse (good[i], &f));
      trace_rwbs_format (f, out);
      g_assert_cmpstr (out, ==, good[i]);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (trace_rwbs_parse (bad[i], &f));
  g_assert_true (trace_rwbs_parse ("FF", &f));
  g_assert_cmpuint (f, ==, TRACE_RWBS_FLUSH);
  g_assert_true (trace_rwbs_parse ("DE", &f));
  g_assert_cmpuint (f, ==, TRACE_RWBS_DISCARD);
}

static void
test_actions (void)
{
  for (int a = 0; a < TRACE_ACT_N_ACTIONS; a++)
    {
      TraceAction back;
      g_assert_true (trace_action_from_letters (trace_action_letters ((TraceAction) a), &back));
      g_assert_cmpint (back, ==, a);
    }
  {
    TraceAction x;
    g_assert_false (trace_action_from_letters ("Z", &x));
  }
}

/* ---- writer round trip -------------------------------------------------- */

static void
assert_same_record (const TraceRecord *a, const TraceRecord *b)
{
  g_assert_cmpint (a->time_ns, ==, b->time_ns);
  g_assert_cmpuint (a->dev_major, ==, b->dev_major);
  g_assert_cmpuint (a->dev_minor, ==, b->dev_minor);
  g_assert_cmpint (MAX (a->cpu, 0), ==, b->cpu);
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
  /* completions and remaps print no command */
  if (a->action != TRACE_ACT_COMPLETE && a->action != TRACE_ACT_REQUEUE && a->action != TRACE_ACT_REMAP)
    g_assert_cmpstr (a->comm, ==, b->comm);
}

static void
test_writer_roundtrip (void)
{
  g_autoptr(GPtrArray) files = data_files ("valid-");
  g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "roundtrip.blkparse", NULL);
  guint64 total = 0;

  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
      g_autoptr(GString) text = g_string_new (NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceReader) r = NULL;
      TraceRecord rec;
      guint n = 0;

      r = trace_reader_open (files->pdata[i], NULL, &error);
      g_assert_no_error (error);
      while (trace_reader_next (r, &rec, &error))
        {
          /* blkparse prints times relative to the trace start; any
           * non-negative time survives. */
          g_array_append_val (recs, rec);
          trace_format_blkparse (&rec, recs->len, text);
        }
      g_assert_no_error (error);
      g_clear_pointer (&r, trace_reader_free);
      g_assert_true (g_file_set_contents (tmp, text->str, (gssize) text->len, NULL));

      r = trace_reader_open (tmp, "blkparse", &error);
      g_assert_no_error (error);
      while (trace_reader_next (r, &rec, &error))
        {
          g_assert_cmpuint (n, <, recs->len);
          assert_same_record (&g_array_index (recs, TraceRecord, n), &rec);
          g_assert_cmpuint (rec.line, ==, n + 1);
          n++;
        }
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, recs->len);
      total += n;
    }
  g_assert_cmpuint (total, >, 300);
}

/* ---- mutation smoke ----------------------------------------------------- */

/* xorshift64*: a fixed, seeded sequence (never g_random_*) */
static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

static char *
mutate (const char *src, gsize len, guint64 seed, gsize *out_len)
{
  guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
  GString *m = g_string_new_len (src, (gssize) len);
  static const char alphabet[] = "0123456789 ,.+-[]()<>:/#\n\tQGDCMFXARUmNWS\xff";
  /* numbers at and past the extent limits (issue 12): 2^55 - 1, 2^55,
   * 2^64 - 1, 2^32 - 1 */
  static const char *const big[] = {
    "36028797018963967", "36028797018963968", "18446744073709551615", "4294967295",
  };
  guint edits = 1 + (guint) (next_rand (&s) % 8);

  for (guint e = 0; e < edits && m->len > 0; e++)
    {
      gsize pos = (gsize) (next_rand (&s) % m->len);
      switch (next_rand (&s) % 6)
        {
        case 0:   /* replace a byte */
          m->str[pos] = alphabet[next_rand (&s) % (sizeof alphabet - 1)];
          break;
        case 1:   /* insert a byte */
          g_string_insert_c (m, (gssize) pos, alphabet[next_rand (&s) % (sizeof alphabet - 1)]);
          break;
        case 2:   /* delete a run */
          {
            gsize run = 1 + (gsize) (next_rand (&s) % 16);
            g_string_erase (m, (gssize) pos, (gssize) MIN (m->len - pos, run));
          }
          break;
        case 3:   /* truncate */
          g_string_truncate (m, pos);
          break;
        case 4:   /* a large number, often in place of a sector or an offset */
          g_string_insert (m, (gssize) pos, big[next_rand (&s) % G_N_ELEMENTS (big)]);
          break;
        default:  /* a random byte, NUL included */
          m->str[pos] = (char) (next_rand (&s) & 0xff);
          break;
        }
    }
  *out_len = m->len;
  return g_string_free (m, FALSE);
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
  g_autoptr(GPtrArray) files = data_files ("valid-");
  g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "mutant.trace", NULL);
  guint failures = 0;
  guint runs = 0;

  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *contents = NULL;
      gsize len;

      g_assert_true (g_file_get_contents (files->pdata[i], &contents, &len, NULL));
      for (guint64 seed = 1; seed <= (g_test_thorough () ? 1000u : 150u); seed++)
        {
          gsize mlen;
          g_autofree char *m = mutate (contents, len, seed * 1000 + i, &mlen);
          const char *const *formats = trace_formats ();

          g_assert_true (g_file_set_contents (tmp, m, (gssize) mlen, NULL));
          /* sniffed, then every reader forced */
          for (int f = -1; formats[f < 0 ? 0 : f] != NULL; f++)
            {
              g_autoptr(GError) error = NULL;
              g_autoptr(TraceReader) r = trace_reader_open (tmp, f < 0 ? NULL : formats[f], &error);
              g_autoptr(TraceLifecycle) lc = trace_lifecycle_new ();
              TraceRecord rec;
              TraceIo io;
              TraceRequest rq;

              runs++;
              if (r == NULL)
                {
                  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
                  continue;
                }
              trace_lifecycle_set_issue_only (lc, trace_reader_issue_only (r));
              while (trace_reader_next (r, &rec, &error))
                {
                  const char *msg = trace_reader_message (r);
                  /* a message's whole text, and only a message's */
                  g_assert_true ((msg != NULL) == (rec.action == TRACE_ACT_MESSAGE));
                  g_assert_true (msg == NULL || g_str_has_prefix (msg, rec.comm));
                  assert_extent_fits (&rec);
                  trace_lifecycle_feed (lc, &rec);
                  /* Issue-only formats: nothing waits for a completion. */
                  if (trace_reader_issue_only (r))
                    g_assert_cmpuint (trace_lifecycle_held (lc), ==, 0);
                  while (trace_lifecycle_pop_io (lc, &io))
                    g_assert_true (!io.no_completion
                                   || (io.issue_ns == -1 && io.complete_ns == -1 && io.error == 0));
                  while (trace_lifecycle_pop_request (lc, &rq))
                    ;
                }
              trace_lifecycle_finish (lc);
              g_assert_cmpuint (trace_lifecycle_held (lc), ==, 0);
              if (error != NULL)
                {
                  g_autofree char *where = g_strdup_printf ("%s:%" G_GUINT64_FORMAT ": ",
                                                            tmp, trace_reader_lines (r));
                  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
                  g_assert_true (g_str_has_prefix (error->message, where));
                  failures++;
                }
            }
        }
    }
  /* the mutations must actually exercise the error paths */
  g_assert_cmpuint (failures, >, runs / 10);
  g_test_message ("%u runs, %u parse errors", runs, failures);
}

/* ---- real samples ------------------------------------------------------- */

static void
test_real_loop2_events (void)
{
  const char *shared = shared_testdata ();
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GArray) requests = NULL;
  TraceLifecycleStats stats;
  guint reads_4k = 0, writes_sync_4k = 0, writes_sync_64k = 0, other = 0;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return;
    }
  path = g_build_filename (shared, "generated-block-loop-kernel6.18", "ftrace-block-loop2.txt.gz", NULL);
  ios = trace_load_ios (path, 7, 2, &requests, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stats.by_action[TRACE_ACT_QUEUE], ==, 1700);
  g_assert_cmpuint (stats.by_action[TRACE_ACT_ISSUE], ==, 1700);
  g_assert_cmpuint (stats.by_action[TRACE_ACT_COMPLETE], ==, 1700);
  g_assert_cmpuint (ios->len, ==, 1700);
  g_assert_cmpuint (requests->len, ==, 1700);
  g_assert_cmpuint (stats.incomplete_at_end, ==, 0);
  g_assert_cmpuint (stats.completed_without_issue, ==, 0);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      gboolean sync = (io->rwbs & TRACE_RWBS_SYNC) != 0;
      g_assert_cmpint (io->queue_ns, <=, io->issue_ns);
      g_assert_cmpint (io->issue_ns, <, io->complete_ns);
      if (i > 0)
        g_assert_cmpint (g_array_index (ios, TraceIo, i - 1).queue_ns, <=, io->queue_ns);
      if (io->op == TRACE_OP_READ && io->nr_sectors == 8)
        reads_4k++;
      else if (io->op == TRACE_OP_WRITE && sync && io->nr_sectors == 8)
        writes_sync_4k++;
      else if (io->op == TRACE_OP_WRITE && sync && io->nr_sectors == 128)
        writes_sync_64k++;
      else
        other++;
    }
  g_assert_cmpuint (reads_4k, ==, 800);
  g_assert_cmpuint (writes_sync_4k, ==, 800);
  g_assert_cmpuint (writes_sync_64k, ==, 100);
  g_assert_cmpuint (other, ==, 0);
  for (guint i = 1; i < requests->len; i++)
    g_assert_cmpint (g_array_index (requests, TraceRequest, i - 1).issue_ns, <=,
                     g_array_index (requests, TraceRequest, i).issue_ns);
}

/* btt prints "NAME  MIN AVG MAX N" with seconds to 9 decimals. */
static gboolean
btt_row (const char *btt_text, const char *name, char **avg, char **min, char **max, guint64 *n)
{
  g_auto(GStrv) lines = g_strsplit (btt_text, "\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = NULL;
      if (!g_str_has_prefix (*l, name) || (*l)[strlen (name)] != ' ')
        continue;
      f = g_strsplit_set (*l, " ", -1);
      {
        GPtrArray *tok = g_ptr_array_new ();
        for (char **t = f; *t != NULL; t++)
          if (**t != '\0')
            g_ptr_array_add (tok, *t);
        if (tok->len == 5)
          {
            *min = g_strdup (tok->pdata[1]);
            *avg = g_strdup (tok->pdata[2]);
            *max = g_strdup (tok->pdata[3]);
            *n = g_ascii_strtoull (tok->pdata[4], NULL, 10);
            g_ptr_array_free (tok, TRUE);
            return TRUE;
          }
        g_ptr_array_free (tok, TRUE);
      }
    }
  return FALSE;
}

static void
check_against_btt (const char *btt_text, const char *name, const TraceLatencyStats *ours)
{
  g_autofree char *avg = NULL, *min = NULL, *max = NULL;
  g_autofree char *our_avg = NULL, *our_min = NULL, *our_max = NULL;
  guint64 n = 0;

  g_assert_true (btt_row (btt_text, name, &avg, &min, &max, &n));
  our_avg = g_strdup_printf ("%.9f", ours->mean_ns / 1e9);
  our_min = g_strdup_printf ("%.9f", (double) ours->min_ns / 1e9);
  our_max = g_strdup_printf ("%.9f", (double) ours->max_ns / 1e9);
  g_test_message ("%s: btt N=%" G_GUINT64_FORMAT " avg=%s min=%s max=%s; ours N=%" G_GUINT64_FORMAT
                  " avg=%s", name, n, avg, min, max, ours->count, our_avg);
  g_assert_cmpuint (ours->count, ==, n);
  g_assert_cmpstr (our_avg, ==, avg);
  g_assert_cmpstr (our_min, ==, min);
  g_assert_cmpstr (our_max, ==, max);
}

static void
test_real_takeoverjp_btt (void)
{
  const char *shared = shared_testdata ();
  g_autofree char *path = NULL;
  g_autofree char *btt_path = NULL;
  g_autofree char *btt_text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) s = NULL;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return;
    }
  path = g_build_filename (shared, "blktrace-takeoverjp-sample", "derived", "sample.blkparse.txt", NULL);
  btt_path = g_build_filename (shared, "blktrace-takeoverjp-sample", "derived", "sample.btt.txt", NULL);
  g_assert_true (g_file_get_contents (btt_path, &btt_text, NULL, NULL));

  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (s->format, ==, "blkparse");
  g_assert_cmpuint (s->lifecycle.records, ==, 6741);     /* "Events (sample): 6741 entries" */
  g_assert_cmpuint (s->lifecycle.by_action[TRACE_ACT_REMAP], ==, 963);
  check_against_btt (btt_text, "D2C", &s->d2c);
  check_against_btt (btt_text, "Q2C", &s->q2c);
  g_assert_cmpuint (s->lifecycle.incomplete_at_end, ==, 0);
}

int
main (int argc, char **argv)
{
  char *tmpdir = test_tmpdir_enter ();
  int status;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/trace/data/valid", test_valid_files);
  g_test_add_func ("/trace/data/fail", test_fail_files);
  g_test_add_func ("/trace/sniff/unknown", test_unknown_format);
  g_test_add_func ("/trace/sniff/extension", test_extension_fallback);
  g_test_add_func ("/trace/open/missing", test_missing_file);
  g_test_add_func ("/trace/open/gzip", test_gzip);
  g_test_add_func ("/trace/open/stdin", test_stdin);
  g_test_add_func ("/trace/meta", test_meta);
  g_test_add_func ("/trace/rwbs", test_rwbs);
  g_test_add_func ("/trace/actions", test_actions);
  g_test_add_func ("/trace/ftrace-blk/fields", test_fields_ftrace_blk);
  g_test_add_func ("/trace/ftrace-events/fields", test_fields_ftrace_events);
  g_test_add_func ("/trace/blkparse/fields", test_fields_blkparse);
  g_test_add_func ("/trace/writer/roundtrip", test_writer_roundtrip);
  g_test_add_func ("/trace/mutation-smoke", test_mutation_smoke);
  g_test_add_func ("/trace/real/loop2-events", test_real_loop2_events);
  g_test_add_func ("/trace/real/takeoverjp-btt", test_real_takeoverjp_btt);
  status = g_test_run ();
  test_tmpdir_leave (tmpdir);
  return status;
}
