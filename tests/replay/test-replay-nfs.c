/* test-replay-nfs.c — NFS capture replay on a temporary directory (no
 * root): the plan from synthetic records (directories, extents, write
 * policy, skipped operations), and on the stored loopback capture
 * ($IOSIM_SHARED_TESTDATA/generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap,
 * skipped without it): file sizes, every READ/WRITE issued with its traced
 * offset and count, afap and recorded timing, reads only, dry runs, the
 * pool's trace order, and the directory checks. */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "replay/replay-nfs.h"

#define CAPTURE "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap"
#define FH_DIR  G_GUINT64_CONSTANT (0x26bc7bfa656c6885)
#define FH_BIG  G_GUINT64_CONSTANT (0x7264515d13f86c7c)
#define FH_SMALL G_GUINT64_CONSTANT (0xfeeef389b3668bf1)

/* ---- helpers ------------------------------------------------------------ */

static char *
capture_path (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  char *path;

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return NULL;
    }
  path = g_build_filename (dir, CAPTURE, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("stored capture " CAPTURE " not available");
      g_free (path);
      return NULL;
    }
  return path;
}

static GArray *
load_records (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceNfsReader) r = trace_nfs_reader_open (path, &error);
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  TraceNfsRecord rec;

  g_assert_no_error (error);
  while (trace_nfs_reader_next (r, &rec, &error))
    g_array_append_val (recs, rec);
  g_assert_no_error (error);
  return recs;
}

static void
remove_tree (const char *path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  const char *name;

  if (d == NULL)
    {
      g_remove (path);
      return;
    }
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      remove_tree (child);
    }
  g_dir_close (d);
  g_rmdir (path);
}

/* Size of @rel under DIR/iosim-nfs-replay/, -1 if missing. */
static gint64
file_size (const char *dir, const char *rel)
{
  g_autofree char *path = g_build_filename (dir, REPLAY_NFS_SUBDIR, rel, NULL);
  struct stat st;

  if (lstat (path, &st) != 0)
    return -1;
  return st.st_size;
}

static ReplayNfsResult *
replay (const char *capture, const char *dir, ReplayTiming timing, guint threads,
        gboolean allow_write, gboolean dry_run)
{
  g_autoptr (GError) error = NULL;
  ReplayNfsOptions opts;
  ReplayNfsResult *res;

  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.timing = timing;
  opts.threads = threads;
  opts.allow_write = allow_write;
  opts.dry_run = dry_run;
  res = replay_nfs_run (capture, &opts, &error);
  g_assert_no_error (error);
  g_assert_nonnull (res);
  return res;
}

static guint
count_ops (const GArray *recs, const char *op)
{
  guint n = 0;

  for (guint i = 0; i < recs->len; i++)
    n += strcmp (g_array_index (recs, TraceNfsRecord, i).op, op) == 0;
  return n;
}

/* Every traced READ (and WRITE when @writes) is in the results, in trace
 * order, issued without error with the traced offset and count. */
static void
assert_io_matches (const ReplayNfsResult *res, const GArray *recs, gboolean writes)
{
  guint j = 0, matched = 0;

  for (guint i = 0; i < recs->len; i++)
    {
      const TraceNfsRecord *rec = &g_array_index (recs, TraceNfsRecord, i);
      gboolean want = strcmp (rec->op, "READ") == 0 || (writes && strcmp (rec->op, "WRITE") == 0);

      if (!want)
        continue;
      for (; j < res->plan->ops->len; j++)
        {
          const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, j);
          if (op->xid == rec->xid && strcmp (op->op, rec->op) == 0)
            break;
        }
      g_assert_cmpuint (j, <, res->plan->ops->len);
      {
        const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, j);
        const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, j);
        g_assert_cmpuint (op->offset, ==, rec->offset);
        g_assert_cmpuint (op->count, ==, rec->count);
        g_assert_cmpint (r->issue_ns, >=, 0);
        g_assert_cmpint (r->complete_ns, >=, r->issue_ns);
        g_assert_cmpint (r->error, ==, 0);
      }
      matched++;
    }
  g_assert_cmpuint (matched, >, 0);
}

/* ---- synthetic plans ------------------------------------------------------ */

static TraceNfsRecord
rec (gint64 t_ns, const char *op, guint64 fh, guint64 offset, guint32 count)
{
  TraceNfsRecord r;

  memset (&r, 0, sizeof r);
  r.time_ns = t_ns;
  r.reply_time_ns = t_ns + 1000;
  r.latency_ns = 1000;
  g_strlcpy (r.op, op, sizeof r.op);
  r.fh_hash = fh;
  r.offset = offset;
  r.count = count;
  r.reply_count = count;
  r.file_size = -1;
  return r;
}

static void
test_plan_synthetic (void)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsPlan) plan = NULL;
  ReplayNfsOptions opts;
  TraceNfsRecord r;

  r = rec (1000, "LOOKUP", 1, 0, 0);  r.obj_fh_hash = 2;        g_array_append_val (recs, r);
  r = rec (2000, "READ", 2, 4096, 8192);                         g_array_append_val (recs, r);
  /* A read past the end: the reply returned 100 bytes only. */
  r = rec (3000, "READ", 2, 65536, 32768); r.reply_count = 100;  g_array_append_val (recs, r);
  r = rec (4000, "WRITE", 3, 0, 512);                            g_array_append_val (recs, r);
  r = rec (5000, "GETATTR", 4, 0, 0); r.file_size = 1000000;     g_array_append_val (recs, r);
  r = rec (6000, "READDIRPLUS", 1, 0, 0);                        g_array_append_val (recs, r);
  r = rec (7000, "SETATTR", 3, 0, 0);                            g_array_append_val (recs, r);
  r = rec (8000, "RENAME", 1, 0, 0);                             g_array_append_val (recs, r);
  r = rec (9000, "READ", 0, 0, 10);                              g_array_append_val (recs, r);

  replay_nfs_options_init (&opts);
  opts.speed = 2;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  /* Handle 1 is a directory (the root); 2, 3, 4 are files whose names the
   * records do not give: they go to unnamed/. */
  g_assert_cmpuint (plan->files->len, ==, 4);
  g_assert_cmpuint (plan->root, ==, 0);
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, 0).type, ==, REPLAY_NFS_NODE_DIR);
  g_assert_cmpstr (g_array_index (plan->files, ReplayNfsFile, 0).path, ==, "");
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, 1).fh_hash, ==, 2);
  g_assert_cmpstr (g_array_index (plan->files, ReplayNfsFile, 1).path, ==, "unnamed/fh-0000000000000002");
  g_assert_false (g_array_index (plan->files, ReplayNfsFile, 1).named);
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, 1).size_bytes, ==, 65536 + 100);
  g_assert_true (g_array_index (plan->files, ReplayNfsFile, 1).read);
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, 2).size_bytes, ==, 512);
  g_assert_false (g_array_index (plan->files, ReplayNfsFile, 2).read);
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, 3).size_bytes, ==, 1000000);
  g_assert_cmpuint (plan->n_unnamed, ==, 3);
  /* Reads only: the WRITE is skipped and counted; SETATTR without a size
   * is skipped by name, RENAME without names cannot be replayed, the READ
   * without a handle cannot run. */
  g_assert_cmpuint (plan->skipped_writes, ==, 1);
  g_assert_cmpuint (plan->skipped_no_file, ==, 1);
  g_assert_nonnull (g_hash_table_lookup (plan->skipped_ops, "RENAME (names or directories unknown)"));
  g_assert_nonnull (g_hash_table_lookup (plan->skipped_ops, "SETATTR (no size)"));
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_READ], ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_STAT], ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_READDIR], ==, 1);
  g_assert_cmpuint (plan->bytes_read, ==, 8192 + 32768);
  /* LOOKUP stats the file it found; times are relative and divided by the speed. */
  g_assert_cmpuint (g_array_index (plan->ops, ReplayNfsOp, 0).file, ==, 1);
  g_assert_cmpint (g_array_index (plan->ops, ReplayNfsOp, 1).sched_ns, ==, 500);
  g_assert_cmpint (plan->span_ns, ==, (6000 - 1000) / 2);
  /* Each READ of handle 2 came after the reply to the previous operation
   * on it, so it waits for it; the first operation waits for nothing. */
  g_assert_cmpint (g_array_index (plan->ops, ReplayNfsOp, 0).after, ==, -1);
  g_assert_cmpint (g_array_index (plan->ops, ReplayNfsOp, 1).after, ==, 0);
  g_assert_cmpint (g_array_index (plan->ops, ReplayNfsOp, 2).after, ==, 1);
  /* GETATTR of another file depends on nothing. */
  g_assert_cmpint (g_array_index (plan->ops, ReplayNfsOp, 3).after, ==, -1);
}

static void
test_plan_empty_and_timing (void)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autoptr (GError) error = NULL;
  ReplayNfsOptions opts;
  TraceNfsRecord r = rec (1000, "WRITE", 3, 0, 512);

  g_array_append_val (recs, r);
  replay_nfs_options_init (&opts);
  g_assert_null (replay_nfs_plan_build (recs, &opts, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY);
  g_assert_nonnull (strstr (error->message, "--allow-write"));
  g_clear_error (&error);
  opts.allow_write = TRUE;
  opts.timing = REPLAY_TIMING_CLOSED;
  g_assert_null (replay_nfs_plan_build (recs, &opts, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
}

static void
test_check_dir (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "plain", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing", NULL);
  g_autofree char *ok = NULL;

  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  g_assert_null (replay_nfs_check_dir ("/", &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_clear_error (&error);
  /* "/" spelt another way is still the root. */
  g_assert_null (replay_nfs_check_dir ("/tmp/..", &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_clear_error (&error);
  g_assert_null (replay_nfs_check_dir (missing, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);
  g_clear_error (&error);
  g_assert_null (replay_nfs_check_dir (file, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);
  g_clear_error (&error);
  ok = replay_nfs_check_dir (dir, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ok);
  remove_tree (dir);
}

/* ---- the stored capture --------------------------------------------------- */

static void
test_capture_allow_write (gconstpointer data)
{
  ReplayTiming timing = GPOINTER_TO_INT (data);
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autoptr (GArray) recs = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;

  if (capture == NULL)
    return;
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  recs = load_records (capture);
  /* Several rounds: with 8 workers and no waits, only the dependencies
   * keep SETATTR (size 0) before the WRITE that fills the file. */
  for (guint round = 0; round < (timing == REPLAY_TIMING_AFAP ? 20u : 1u); round++)
    {
      g_clear_pointer (&res, replay_nfs_result_free);
      res = replay (capture, dir, timing, 8, TRUE, FALSE);
      g_assert_cmpint (file_size (dir, "f300k.bin"), ==, 300000);
      g_assert_cmpint (file_size (dir, "small.bin"), ==, 3000);
    }
  g_assert_cmpint (file_size (dir, "f300k.bin"), ==, 300000);
  g_assert_cmpint (file_size (dir, "small.bin"), ==, 3000);
  /* The export's directory is the replay directory; both files were made
   * by the replayed CREATEs. */
  g_assert_cmpuint (res->plan->files->len, ==, 3);
  g_assert_cmpuint (g_array_index (res->plan->files, ReplayNfsFile, res->plan->root).fh_hash, ==, FH_DIR);
  g_assert_cmpuint (res->plan->n_created, ==, 2);
  g_assert_cmpint (file_size (dir, REPLAY_NFS_UNNAMED), ==, -1);
  g_assert_cmpuint (res->plan->skipped_writes, ==, 0);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_WRITE], ==, count_ops (recs, "WRITE"));
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_READ], ==, count_ops (recs, "READ"));
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_CREATE], ==, count_ops (recs, "CREATE"));
  g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
  g_assert_cmpuint (res->errors, ==, 0);
  assert_io_matches (res, recs, TRUE);
  g_assert_cmpfloat (res->achieved_iops, >, 0);
  if (timing == REPLAY_TIMING_RECORDED)
    {
      g_assert_cmpfloat (res->intended_iops, >, 0);
      /* On the recorded schedule: intended is the trace's relative time,
       * and nothing goes out early. */
      for (guint i = 0; i < res->plan->ops->len; i++)
        {
          const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, i);
          const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
          g_assert_cmpint (r->intended_ns, ==, op->sched_ns);
          g_assert_cmpint (r->issue_ns, >=, r->intended_ns);
        }
    }
  else
    g_assert_cmpfloat (res->intended_iops, ==, 0);
  remove_tree (dir);
}

static void
test_capture_reads_only (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autofree char *json = NULL;
  g_autoptr (GArray) recs = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *big_path = NULL;
  g_autofree char *content = NULL;
  gsize len;
  JsonObject *o;
  struct stat st;

  if (capture == NULL)
    return;
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  recs = load_records (capture);
  res = replay (capture, dir, REPLAY_TIMING_AFAP, 4, FALSE, FALSE);
  /* The traced sizes, even though the writes that made them are skipped. */
  g_assert_cmpint (file_size (dir, "f300k.bin"), ==, 300000);
  g_assert_cmpint (file_size (dir, "small.bin"), ==, 3000);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_WRITE], ==, 0);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_CREATE], ==, 0);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_TRUNCATE], ==, 0);
  g_assert_cmpuint (res->plan->skipped_writes, ==,
                    count_ops (recs, "WRITE") + count_ops (recs, "CREATE")
                    + count_ops (recs, "SETATTR") + count_ops (recs, "REMOVE"));
  g_assert_cmpuint (res->errors, ==, 0);
  assert_io_matches (res, recs, FALSE);
  /* Read files hold real blocks with the pattern, not holes. */
  big_path = g_build_filename (dir, REPLAY_NFS_SUBDIR, "f300k.bin", NULL);
  g_assert_cmpint (stat (big_path, &st), ==, 0);
  g_assert_cmpint ((gint64) st.st_blocks * 512, >=, 300000);
  g_assert_true (g_file_get_contents (big_path, &content, &len, NULL));
  g_assert_cmpuint (len, ==, 300000);
  g_assert_cmpint ((guint8) content[0], !=, 0);
  /* Without --allow-write the replay creates nothing: the files the
   * capture created were made at setup, at their names. */
  g_assert_cmpuint (res->plan->n_created, ==, 0);
  g_assert_cmpuint (res->plan->n_named, ==, 3);
  g_assert_cmpint (file_size (dir, REPLAY_NFS_UNNAMED), ==, -1);

  json = g_build_filename (dir, "out.json", NULL);
  g_assert_true (replay_nfs_result_write_json (res, json, &error));
  g_assert_no_error (error);
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_has_member (o, "intended_iops"));
  g_assert_true (json_object_has_member (o, "issue_error_p50_ns"));
  g_assert_true (json_object_has_member (o, "issue_error_p99_ns"));
  g_assert_cmpfloat (json_object_get_double_member (o, "achieved_iops"), >, 0);
  g_assert_cmpint (json_object_get_int_member (o, "skipped_writes"), ==,
                   (gint64) res->plan->skipped_writes);
  g_assert_true (json_object_has_member (json_object_get_object_member (o, "operations"), "read"));
  remove_tree (dir);
}

static void
test_capture_dry_run (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autofree char *sub = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  GDir *d;

  if (capture == NULL)
    return;
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  res = replay (capture, dir, REPLAY_TIMING_RECORDED, 8, TRUE, TRUE);
  g_assert_true (res->dry_run);
  /* The two files are made by the replayed CREATEs: nothing at setup. */
  g_assert_cmpuint (res->plan->files->len, ==, 3);
  g_assert_cmpuint (res->plan->n_created, ==, 2);
  g_assert_cmpuint (res->plan->file_bytes, ==, 0);
  g_assert_cmpuint (res->ops, ==, 0);
  sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  g_assert_false (g_file_test (sub, G_FILE_TEST_EXISTS));
  d = g_dir_open (dir, 0, NULL);
  g_assert_null (g_dir_read_name (d));
  g_dir_close (d);
  remove_tree (dir);
}

/* One worker takes operations in trace order: each starts after the
 * previous one completed, at or after its intended time, and intended
 * times never go back. */
static void
test_capture_pool_order (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;

  if (capture == NULL)
    return;
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  res = replay (capture, dir, REPLAY_TIMING_RECORDED, 1, TRUE, FALSE);
  g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
  for (guint i = 0; i < res->results->len; i++)
    {
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      g_assert_cmpuint (r->worker, ==, 0);
      g_assert_cmpuint (r->take_seq, ==, i);
      g_assert_cmpint (r->issue_ns, >=, r->intended_ns);
      if (i > 0)
        {
          const ReplayNfsOpResult *p = &g_array_index (res->results, ReplayNfsOpResult, i - 1);
          g_assert_cmpint (r->intended_ns, >=, p->intended_ns);
          g_assert_cmpint (r->issue_ns, >=, p->complete_ns);
        }
    }
  remove_tree (dir);
}

/* ---- the command ---------------------------------------------------------- */

static int
run_iosim (const char *const *args, char **out, char **err)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int status = -1;

  g_ptr_array_add (argv, (gpointer) bin);
  for (; *args; args++)
    g_ptr_array_add (argv, (gpointer) *args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, 0, NULL, NULL, out, err,
                               &status, &error));
  g_assert_no_error (error);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void
test_cli (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autofree char *file = NULL;
  g_autofree char *sub = NULL;

  if (capture == NULL)
    return;
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set");
      return;
    }
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  file = g_build_filename (dir, "plain", NULL);
  sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target", "/dev/null", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 2);
    g_assert_nonnull (strstr (err, "--target-dir"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", "/", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 1);
    g_assert_nonnull (strstr (err, "root directory"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", file, NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 1);
    g_assert_nonnull (strstr (err, "not an existing directory"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--timing", "closed", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 2);
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--allow-write", "--dry-run", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "300000 bytes"));
    g_assert_nonnull (strstr (out, "bytes to read: 303000, to write: 303000"));
    g_assert_false (g_file_test (sub, G_FILE_TEST_EXISTS));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *json = g_build_filename (dir, "r.json", NULL);
    const char *args[] = { "replay", capture, "--target-dir", dir, "--timing", "afap",
                           "--threads", "2", "--json", json, NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "issue error p50"));
    g_assert_true (g_file_test (json, G_FILE_TEST_EXISTS));
    g_assert_cmpint (file_size (dir, "f300k.bin"), ==, 300000);
  }
  {
    /* A block trace still refuses --target-dir. */
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", file, "--target-dir", dir, NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 2);
  }
  remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay-nfs/plan/synthetic", test_plan_synthetic);
  g_test_add_func ("/replay-nfs/plan/empty-and-timing", test_plan_empty_and_timing);
  g_test_add_func ("/replay-nfs/check-dir", test_check_dir);
  g_test_add_data_func ("/replay-nfs/capture/allow-write-afap",
                        GINT_TO_POINTER (REPLAY_TIMING_AFAP), test_capture_allow_write);
  g_test_add_data_func ("/replay-nfs/capture/allow-write-recorded",
                        GINT_TO_POINTER (REPLAY_TIMING_RECORDED), test_capture_allow_write);
  g_test_add_func ("/replay-nfs/capture/reads-only", test_capture_reads_only);
  g_test_add_func ("/replay-nfs/capture/dry-run", test_capture_dry_run);
  g_test_add_func ("/replay-nfs/capture/pool-order", test_capture_pool_order);
  g_test_add_func ("/replay-nfs/cli", test_cli);
  return g_test_run ();
}
