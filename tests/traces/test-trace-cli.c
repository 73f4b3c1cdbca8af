/* test-trace-cli.c — `iosim trace info` as a user runs it ($IOSIM_BIN):
 * the JSON object agrees with the library summary, errors are
 * "iosim trace: FILE:LINE: message" with exit status 1, --help teaches.
 */
#include "test-tmpdir.h"
#include <string.h>
#include <sys/wait.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs-summary.h"

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  return bin;
}

/* Run @args in @cwd (NULL: the test's own). */
static void
run_in (const char *cwd, const char *const *args, char **out, char **err, int *status)
{
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  g_assert_true (g_spawn_sync (cwd, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &wait_status, &error));
  g_assert_no_error (error);
  *status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static void
run (const char *const *args, char **out, char **err, int *status)
{
  run_in (NULL, args, out, err, status);
}

static void
test_info_json (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-events-mqdeadline-6.18.ftrace", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) s = NULL;
  JsonObject *root, *lat, *d2c, *events;
  int status;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  {
    const char *args[] = { bin, "trace", "info", "--json", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));

  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (root, "format"), ==, "ftrace-events");
  g_assert_cmpint (json_object_get_int_member (root, "records"), ==, (gint64) s->lifecycle.records);
  g_assert_cmpint (json_object_get_int_member (root, "skipped_lines"), ==, (gint64) s->skipped_lines);
  events = json_object_get_object_member (root, "events");
  g_assert_cmpint (json_object_get_int_member (events, "M"), ==,
                   (gint64) s->lifecycle.by_action[TRACE_ACT_BACKMERGE]);
  g_assert_cmpint (json_object_get_int_member (events, "M"), >, 0);
  lat = json_object_get_object_member (root, "latency_us");
  d2c = json_object_get_object_member (lat, "d2c");
  g_assert_cmpint (json_object_get_int_member (d2c, "count"), ==, (gint64) s->d2c.count);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (d2c, "p99"), s->d2c.p99_ns / 1000.0, 1e-9);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "devices")), ==,
                    s->devices->len);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (root, "requests"), "count"),
                   >, 0);
}

static void
test_info_text_and_errors (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *good = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autofree char *bad = g_test_build_filename (G_TEST_DIST, "data", "fail-blkparse-garbage.blkparse", NULL);
  int status;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { bin, "trace", "info", good, NULL };
    run (args, &out, &err, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (out, "Format:    blkparse"));
    g_assert_nonnull (strstr (out, "D2C"));
    g_assert_nonnull (strstr (out, "Web Content"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *want = g_strdup_printf ("iosim trace: %s:4: ", bad);
    const char *args[] = { bin, "trace", "info", bad, NULL };
    run (args, &out, &err, &status);
    g_assert_cmpint (status, ==, 1);
    g_assert_true (g_str_has_prefix (err, want));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { bin, "trace", "info", "--format", "blkparse",
                           g_test_get_filename (G_TEST_DIST, "data", "valid-blk-classic-6.18.ftrace", NULL),
                           NULL };
    run (args, &out, &err, &status);
    /* classic blk lines are not blkparse lines (no sequence column) */
    g_assert_cmpint (status, ==, 1);
    g_assert_nonnull (strstr (err, "valid-blk-classic-6.18.ftrace:9: "));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { bin, "trace", "--help", NULL };
    run (args, &out, &err, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (out, "info"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { bin, "trace", "info", "--help", NULL };
    run (args, &out, &err, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (out, "Examples:"));
    g_assert_nonnull (strstr (out, "ftrace-events"));
  }
}

/* Every record of @path, through the library. */
static GArray *
read_all (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceReader) r = trace_reader_open (path, NULL, &error);
  g_assert_no_error (error);
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord rec;
  while (trace_reader_next (r, &rec, &error))
    g_array_append_val (recs, rec);
  g_assert_no_error (error);
  return recs;
}

static guint
count_lines (const char *text)
{
  guint n = 0;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  return n;
}

/* cat with filters and --csv, convert's round trip, merge of a file with
 * itself, and the errors. */
static void
test_cat_convert_merge (void)
{
  const char *bin = iosim_bin ();
  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autoptr (GArray) all = read_all (path);
  guint d_and_c = 0;
  for (guint i = 0; i < all->len; i++)
    {
      TraceAction a = g_array_index (all, TraceRecord, i).action;
      d_and_c += a == TRACE_ACT_ISSUE || a == TRACE_ACT_COMPLETE;
    }
  g_assert_cmpuint (d_and_c, >, 0);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "trace", "cat", "--action", "D,C", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (count_lines (out), ==, d_and_c);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--csv", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (out, "time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,"
                                        "nr_sectors,"));
  g_assert_cmpuint (count_lines (out), ==, all->len + 1);
  const TraceRecord *first = &g_array_index (all, TraceRecord, 0);
  g_autofree char *row = g_strdup_printf ("%" G_GINT64_FORMAT ",%u,%u,", first->time_ns,
                                          first->dev_major, first->dev_minor);
  g_assert_true (g_str_has_prefix (strchr (out, '\n') + 1, row));

  /* convert: blkparse text again, the same records. */
  g_autofree char *dir = g_dir_make_tmp ("trace-cli-XXXXXX", NULL);
  g_autofree char *converted = g_build_filename (dir, "converted.txt", NULL);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "convert", "-o", converted, path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (GArray) again = read_all (converted);
  g_assert_cmpuint (again->len, ==, all->len);
  for (guint i = 0; i < all->len; i++)
    {
      const TraceRecord *x = &g_array_index (all, TraceRecord, i);
      const TraceRecord *y = &g_array_index (again, TraceRecord, i);
      g_assert_cmpint (x->time_ns, ==, y->time_ns);
      g_assert_cmpint (x->action, ==, y->action);
      g_assert_cmpuint (x->sector, ==, y->sector);
      g_assert_cmpuint (x->nr_sectors, ==, y->nr_sectors);
      g_assert_cmpuint (x->pid, ==, y->pid);
    }

  /* merge: twice the records, in time order. */
  g_autofree char *merged = g_build_filename (dir, "merged.txt", NULL);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "merge", "-o", merged, path, converted, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (GArray) both = read_all (merged);
  g_assert_cmpuint (both->len, ==, 2 * all->len);
  for (guint i = 1; i < both->len; i++)
    g_assert_cmpint (g_array_index (both, TraceRecord, i - 1).time_ns, <=,
                     g_array_index (both, TraceRecord, i).time_ns);
  g_unlink (converted);
  g_unlink (merged);
  g_rmdir (dir);

  /* Errors: a missing file (1), a bad filter (2). */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "/nonexistent.blkparse", NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "/nonexistent.blkparse"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--device", "sda", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 2);
  g_assert_nonnull (strstr (err, "MAJOR,MINOR"));
}

/* convert -t iolog: fio replays the log, and does exactly the trace's I/Os. */
static void
test_convert_iolog_fio (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *fio = g_find_program_in_path ("fio");
  if (bin == NULL || fio == NULL)
    {
      g_test_skip (bin ? "fio not installed" : "IOSIM_BIN not built");
      return;
    }
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autoptr (GArray) all = read_all (path);
  guint issued = 0;
  guint64 bytes = 0;
  for (guint i = 0; i < all->len; i++)
    {
      const TraceRecord *r = &g_array_index (all, TraceRecord, i);
      if (r->action == TRACE_ACT_ISSUE && r->nr_sectors > 0 && (r->rwbs & TRACE_RWBS_READ))
        {
          issued++;
          bytes += (guint64) r->nr_sectors * 512;
        }
    }
  g_autofree char *dir = g_dir_make_tmp ("trace-iolog-XXXXXX", NULL);
  g_autofree char *log = g_build_filename (dir, "replay.iolog", NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "trace", "convert", "-t", "iolog", "-o", log, path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_autofree char *opt = g_strdup_printf ("--read_iolog=%s", log);
  {
    const char *args[] = { fio, "--name=replay", opt, "--ioengine=null", "--output-format=json", NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, strchr (out, '{'), -1, &error));
  JsonObject *job = json_array_get_object_element (
    json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "jobs"), 0);
  JsonObject *read = json_object_get_object_member (job, "read");
  g_assert_cmpint (json_object_get_int_member (read, "total_ios"), ==, issued);
  g_assert_cmpint (json_object_get_int_member (read, "io_bytes"), ==, (gint64) bytes);
  g_unlink (log);
  g_rmdir (dir);
}

/* `iosim trace info` and `cat` on an NFS capture: the per-client tables
 * add up to the decoded operations, and the CSV has one row per operation
 * under the documented header. */
static void
test_nfs_capture (void)
{
  const char *bin = iosim_bin ();
  const char *data = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *path = data ? g_build_filename (data, "generated-nfs-loopback",
                                                   "nfsv3-tcp-libnfs-ganesha.pcap", NULL) : NULL;
  if (bin == NULL || path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("IOSIM_BIN or the shared NFS capture is missing");
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceNfsSummary) s = trace_nfs_summarize (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->records, ==, 37);
  /* The two files written: 300,000 and 3,000 bytes. */
  const TraceNfsClientStats *all = g_ptr_array_index (s->clients, s->clients->len - 1);
  g_assert_cmpstr (all->client, ==, "all");
  guint64 calls = 0, write_bytes = 0;
  for (guint i = 0; i < all->ops->len; i++)
    {
      const TraceNfsOpRow *row = g_ptr_array_index (all->ops, i);
      calls += row->s.count;
      if (strcmp (row->op, "v3 WRITE") == 0)
        write_bytes = row->s.bytes;
    }
  g_assert_cmpuint (calls, ==, s->records);
  g_assert_cmpuint (write_bytes, ==, 303000);

  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "trace", "info", "--json", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "format"), ==, "capture");
  g_assert_cmpint (json_object_get_int_member (root, "records"), ==, 37);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "clients")), ==,
                    s->clients->len);
  /* Every decoder counter the text prints is in the JSON, with its value. */
  JsonObject *decoder = json_object_get_object_member (root, "decoder");
  g_autoptr (GString) counters = g_string_new (NULL);
  trace_nfs_stats_format (&s->stats, counters);
  g_auto (GStrv) lines = g_strsplit (counters->str, "\n", -1);
  guint n_counters = 0;
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++, n_counters++)
    {
      g_auto (GStrv) kv = g_strsplit_set (lines[i], " ", -1);
      const char *value = kv[g_strv_length (kv) - 1];
      g_assert_true (json_object_has_member (decoder, kv[0]));
      g_assert_cmpint (json_object_get_int_member (decoder, kv[0]), ==,
                       g_ascii_strtoll (value, NULL, 10));
    }
  g_assert_cmpuint (json_object_get_size (decoder), ==, n_counters);
  g_assert_cmpint (json_object_get_int_member (decoder, "rpc_calls"), ==, 72);
  g_assert_cmpint (json_object_get_int_member (root, "bytes"), ==, (gint64) s->stats.bytes);
  g_assert_cmpint (json_object_get_int_member (root, "duration_ns"), ==, s->last_ns - s->first_ns);
  JsonObject *op0 = json_array_get_object_element (
    json_object_get_array_member (json_array_get_object_element (
      json_object_get_array_member (root, "clients"), 0), "operations"), 0);
  g_assert_true (json_object_has_member (op0, "lost"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "warnings")), ==,
                    s->warnings->len);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--csv", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (out, "time_ns,client,server,xid,vers,op,fh,offset,count,status,latency_ns"));
  g_assert_cmpuint (count_lines (out), ==, 37 + 1);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--action", "D", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 2);
  g_assert_nonnull (strstr (err, "packet capture"));
}

/* A binary blktrace file (the blkparse sample through the blktrace
 * writer) through `trace info`, `trace cat` with old and binary-only
 * action letters, and `trace convert -t csv`. */
static void
test_binary_blktrace (void)
{
  const char *bin = iosim_bin ();
  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_autofree char *text = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autofree char *dir = g_dir_make_tmp ("trace-cli-bin-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sample.bin", NULL);
  g_autofree char *csv = g_build_filename (dir, "sample.csv", NULL);
  g_autoptr (GError) error = NULL;
  guint64 written = 0;
  g_assert_true (trace_convert_to_blktrace (text, NULL, path, &written, &error));
  g_assert_no_error (error);
  g_autoptr (GArray) all = read_all (path);
  g_assert_cmpuint (all->len, ==, written);
  guint d_and_c = 0, issued = 0;
  for (guint i = 0; i < all->len; i++)
    {
      TraceAction a = g_array_index (all, TraceRecord, i).action;
      d_and_c += a == TRACE_ACT_ISSUE || a == TRACE_ACT_COMPLETE;
      issued += a == TRACE_ACT_ISSUE;
    }
  g_assert_cmpuint (issued, >, 0);

  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "trace", "info", "--json", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *events = json_object_get_object_member (root, "events");
  g_assert_cmpstr (json_object_get_string_member (root, "format"), ==, "blktrace");
  g_assert_cmpint (json_object_get_int_member (root, "records"), ==, (gint64) all->len);
  g_assert_cmpint (json_object_get_int_member (events, "D"), ==, issued);
  g_assert_true (json_object_has_member (events, "ZP"));
  g_assert_cmpint (json_object_get_int_member (events, "ZP"), ==, 0);

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--action", "D,C", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (count_lines (out), ==, d_and_c);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "cat", "--action", "AB,DD,ZP,ZU", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "");

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "trace", "convert", "-t", "csv", "-o", csv, path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_autoptr (GArray) again = read_all (csv);
  g_assert_cmpuint (again->len, ==, all->len);
  for (guint i = 0; i < all->len; i++)
    {
      const TraceRecord *x = &g_array_index (all, TraceRecord, i);
      const TraceRecord *y = &g_array_index (again, TraceRecord, i);
      g_assert_cmpint (x->time_ns, ==, y->time_ns);
      g_assert_cmpint (x->action, ==, y->action);
      g_assert_cmpuint (x->sector, ==, y->sector);
      g_assert_cmpuint (x->nr_sectors, ==, y->nr_sectors);
    }
  g_unlink (path);
  g_unlink (csv);
  g_rmdir (dir);
}

/* convert -t blktrace: btt reads our binary and counts the trace's I/Os. */
static void
test_convert_blktrace_btt (void)
{
  const char *bin = iosim_bin ();
  g_autofree char *btt = g_find_program_in_path ("btt");
  if (bin == NULL || btt == NULL)
    {
      g_test_skip (bin ? "btt not installed" : "IOSIM_BIN not built");
      return;
    }
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-events-mqdeadline-6.18.ftrace", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceSummary) summary = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (summary->btt_d2c.count, >, 0);
  g_autofree char *dir = g_dir_make_tmp ("trace-btt-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (dir, "trace.bin", NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "trace", "convert", "-t", "blktrace", "-o", out_path, path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    /* In the scratch directory: btt writes its .dat files into the
     * current one. */
    const char *args[] = { btt, "-i", out_path, NULL };
    run_in (dir, args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  /* btt's D2C row: "D2C  min avg max N". */
  const char *d2c = strstr (out, "\nD2C ");
  g_assert_nonnull (d2c);
  g_auto (GStrv) fields = g_strsplit_set (d2c + 1, " \n", -1);
  guint n = 0;
  guint64 count = 0;
  for (guint i = 0; fields[i] && n < 5; i++)
    if (fields[i][0] && ++n == 5)
      count = g_ascii_strtoull (fields[i], NULL, 10);
  g_assert_cmpuint (count, ==, summary->btt_d2c.count);
  g_unlink (out_path);
  /* Nothing else may be left there but btt's own files. */
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    g_assert_true (g_str_has_suffix (name, ".dat"));
  g_assert_true (test_remove_tree (dir));
}

/* An NFS capture as I/O streams (trace_load_ios): its answered READs and
 * WRITEs, one client per pid, and `iosim fit` on it writes a scenario that
 * `iosim run` runs. */
static void
test_nfs_fit (void)
{
  const char *bin = iosim_bin ();
  const char *data = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *path = data ? g_build_filename (data, "generated-nfs-loopback",
                                                   "nfsv3-tcp-libnfs-ganesha.pcap", NULL) : NULL;
  if (bin == NULL || path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("IOSIM_BIN or the shared NFS capture is missing");
      return;
    }
  g_autoptr (GError) error = NULL;
  GArray *requests = NULL;
  g_autoptr (GArray) ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, &requests, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) rqs = requests;
  /* nfs-cp wrote 300,000 and 3,000 bytes, nfs-cat read them back. */
  g_assert_cmpuint (ios->len, ==, 4);
  g_assert_cmpuint (rqs->len, ==, 4);
  guint reads = 0;
  guint64 sectors = 0;
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      reads += io->op == TRACE_OP_READ;
      sectors += io->nr_sectors;
      g_assert_cmpint (io->complete_ns, >, io->issue_ns);
      g_assert_cmpuint (io->pid, ==, 1000 + i);
    }
  g_assert_cmpuint (reads, ==, 2);
  g_assert_cmpuint (sectors, ==, 2 * ((300000 + 511) / 512 + (3000 + 511) / 512));

  g_autofree char *dir = g_dir_make_tmp ("trace-nfs-fit-XXXXXX", NULL);
  g_autofree char *ini = g_build_filename (dir, "nfs.ini", NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  {
    const char *args[] = { bin, "fit", path, "-o", ini, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { bin, "run", "--json", "-", "-q", ini, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "\"processes\""));
  g_unlink (ini);
  g_rmdir (dir);
}

/* Issue 12: a DiskSim trace (one stream) whose times go back twice, its
 * last row the earliest: duration is latest minus earliest (3 ms, was
 * last minus first, -1 ms), and both steps back are reported. */
static void
test_info_time_backwards (void)
{
  const char *bin = iosim_bin ();
  static const char rows[] = "2.000000 0 1000 8 1\n"
                             "3.000000 0 2000 8 1\n"
                             "0.500000 0 3000 8 0\n"
                             "1.000000 0 4000 8 1\n"
                             "0.000000 0 5000 8 1\n";
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "iosim-backwards.trace", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *text = NULL, *text_err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root, *back;
  int status;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_assert_true (g_file_set_contents (path, rows, -1, &error));
  {
    const char *args[] = { bin, "trace", "info", "--json", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "first_ns"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (root, "last_ns"), ==, 3000000);
  g_assert_cmpint (json_object_get_int_member (root, "duration_ns"), ==, 3000000);
  back = json_object_get_object_member (root, "time_backwards");
  g_assert_nonnull (back);
  g_assert_cmpint (json_object_get_int_member (back, "records"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (back, "max_step_ns"), ==, 2500000);
  {
    const char *args[] = { bin, "trace", "info", path, NULL };
    run (args, &text, &text_err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "Duration:  0.003000 s"));
  g_assert_nonnull (strstr (text, "Backwards: 2 records"));
  g_assert_nonnull (strstr (text, "largest step back 0.002500 s"));
  g_unlink (path);
}

/* Times at both ends of the 64-bit range (iosim-csv allows negative
 * ones): the span and the step back saturate instead of overflowing
 * (UBSan in CI would stop on a signed overflow). */
static void
test_info_time_extremes (void)
{
  const char *bin = iosim_bin ();
  static const char rows[] =
    "time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,offset_bytes,length_bytes,error,io_tag,comm\n"
    "9223372036854775807,8,0,0,1,Q,R,0,8,0,4096,0,0,dd\n"
    "-9223372036854775807,8,0,0,1,Q,R,8,8,4096,4096,0,0,dd\n";
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "iosim-extremes.csv", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root, *back;
  int status;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_assert_true (g_file_set_contents (path, rows, -1, &error));
  {
    const char *args[] = { bin, "trace", "info", "--json", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "duration_ns"), ==, G_MAXINT64);
  back = json_object_get_object_member (root, "time_backwards");
  g_assert_cmpint (json_object_get_int_member (back, "records"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (back, "max_step_ns"), ==, G_MAXINT64);
  g_unlink (path);
}

/* A latency past 1,000 ms (1000000.000 us) widens its columns instead of
 * pushing its row out of line: in the text of trace info every latency
 * line ends each column where the header does. */
static void
test_info_long_latency_aligned (void)
{
  const char *bin = iosim_bin ();
  static const char rows[] =
    "time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,offset_bytes,length_bytes,error,io_tag,comm\n"
    "0,8,0,0,1,Q,R,0,8,0,4096,0,0,dd\n"
    "1000,8,0,0,1,D,R,0,8,0,4096,0,0,dd\n"
    "2345678901,8,0,0,1,C,R,0,8,0,4096,0,0,dd\n"
    "2345679901,8,0,0,1,Q,R,8,8,4096,4096,0,0,dd\n"
    "2345680901,8,0,0,1,D,R,8,8,4096,4096,0,0,dd\n"
    "2345780901,8,0,0,1,C,R,8,8,4096,4096,0,0,dd\n";
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "iosim-long-latency.csv", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_assert_true (g_file_set_contents (path, rows, -1, &error));
  {
    const char *args[] = { bin, "trace", "info", path, NULL };
    run (args, &out, &err, &status);
  }
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "2345678.901"));
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  guint headers = 0, rows_seen = 0;
  for (guint h = 0; lines[h] != NULL; h++)
    {
      if (!g_str_has_prefix (lines[h], "          count"))
        continue;
      headers++;
      /* Each column's last character in the header and in its rows. */
      const char *hl = lines[h];
      for (guint i = h + 1; lines[i] != NULL && (g_str_has_prefix (lines[i], "  Q2")
                                                 || g_str_has_prefix (lines[i], "  D2")); i++)
        {
          const char *rl = lines[i];
          for (gsize c = 1; hl[c] != '\0'; c++)
            if (hl[c] != ' ' && (hl[c + 1] == ' ' || hl[c + 1] == '\0'))
              {
                g_assert_cmpuint (strlen (rl), >, c);
                if (rl[c] == ' ' || (rl[c + 1] != ' ' && rl[c + 1] != '\0'))
                  g_error ("column ending at %" G_GSIZE_FORMAT " of '%s' misses row '%s'", c, hl,
                           rl);
              }
          rows_seen++;
        }
    }
  /* Q2C and D2C, then btt's Q2C, D2C and Q2D. */
  g_assert_cmpuint (headers, ==, 2);
  g_assert_cmpuint (rows_seen, ==, 5);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  char *tmpdir = test_tmpdir_enter ();
  int status;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/cli/info-json", test_info_json);
  g_test_add_func ("/trace/cli/info-text-and-errors", test_info_text_and_errors);
  g_test_add_func ("/trace/cli/info-time-backwards", test_info_time_backwards);
  g_test_add_func ("/trace/cli/info-time-extremes", test_info_time_extremes);
  g_test_add_func ("/trace/cli/info-long-latency-aligned", test_info_long_latency_aligned);
  g_test_add_func ("/trace/cli/cat-convert-merge", test_cat_convert_merge);
  g_test_add_func ("/trace/cli/convert-iolog-fio", test_convert_iolog_fio);
  g_test_add_func ("/trace/cli/nfs-capture", test_nfs_capture);
  g_test_add_func ("/trace/cli/nfs-fit", test_nfs_fit);
  g_test_add_func ("/trace/cli/binary-blktrace", test_binary_blktrace);
  g_test_add_func ("/trace/cli/convert-blktrace-btt", test_convert_blktrace_btt);
  status = g_test_run ();
  test_tmpdir_leave (tmpdir);
  return status;
}
