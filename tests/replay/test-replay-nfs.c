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

/* A name operation's record: @name in directory @dir (and @name2 in @dir2). */
static TraceNfsRecord
name_rec (gint64 t_ns, const char *op, guint64 dir, const char *name, guint64 obj)
{
  TraceNfsRecord r = rec (t_ns, op, dir, 0, 0);

  r.vers = 3;
  r.dir_fh_hash = dir;
  g_strlcpy (r.name, name, sizeof r.name);
  r.name_len = (guint32) strlen (name);
  r.obj_fh_hash = obj;
  return r;
}

static void
set_name2 (TraceNfsRecord *r, guint64 dir2, const char *name2)
{
  r->dir2_fh_hash = dir2;
  g_strlcpy (r->name2, name2, sizeof r->name2);
  r->name2_len = (guint32) strlen (name2);
}

#define T_ROOT 100
#define T_SRC  101
#define T_DATA 102
#define T_OLD  103
#define T_OUT  104
#define T_F    105
#define T_SL   106
#define T_TMP  107
#define T_O4   108
#define T_NONAME 200

/* A capture with every name operation, as records: what exists before
 * (src/, src/data, a file "old" the capture renames before looking it up,
 * a handle never named), what it makes (out/, out/f written then renamed
 * out/g, a hard link f-link, a symbolic link, an NFSv4 OPEN-created
 * out/o4 opened again by handle, tmp/ made and removed), a READLINK of
 * the link, an FSSTAT and an FSINFO, and a LOOKUP that failed. */
static GArray *
names_records (void)
{
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  gint64 t = 0;
  TraceNfsRecord r;

#define ADD(x) G_STMT_START { r = (x); g_array_append_val (recs, r); } G_STMT_END
#define T (t += 1000)
  ADD (name_rec (T, "LOOKUP", T_ROOT, "src", T_SRC));
  ADD (name_rec (T, "LOOKUP", T_SRC, "data", T_DATA));
  r = rec (T, "READ", T_DATA, 0, 8192); r.file_size = 10000; g_array_append_val (recs, r);
  ADD (rec (T, "READ", T_NONAME, 4096, 4096));
  r = name_rec (T, "RENAME", T_ROOT, "old", 0); set_name2 (&r, T_SRC, "new"); g_array_append_val (recs, r);
  ADD (name_rec (T, "LOOKUP", T_SRC, "new", T_OLD));
  r = rec (T, "GETATTR", T_OLD, 0, 0); r.file_size = 4096; g_array_append_val (recs, r);
  r = name_rec (T, "LOOKUP", T_ROOT, "missing", 0); r.status = 2; g_array_append_val (recs, r);
  r = name_rec (T, "MKDIR", T_ROOT, "out", T_OUT); r.create_type = 2; g_array_append_val (recs, r);
  r = name_rec (T, "CREATE", T_OUT, "f", T_F); r.create_type = 1; g_array_append_val (recs, r);
  ADD (rec (T, "WRITE", T_F, 0, 5000));
  r = name_rec (T, "LINK", T_ROOT, "f-link", 0); r.fh_hash = r.src_fh_hash = T_F; g_array_append_val (recs, r);
  r = name_rec (T, "SYMLINK", T_OUT, "sl", T_SL); r.create_type = 5; r.name2_len = 1; g_strlcpy (r.name2, "f", sizeof r.name2);
  g_array_append_val (recs, r);
  ADD (rec (T, "READLINK", T_SL, 0, 0));
  ADD (rec (T, "FSSTAT", T_ROOT, 0, 0));
  ADD (rec (T, "FSINFO", T_ROOT, 0, 0));
  r = name_rec (T, "RENAME", T_OUT, "f", 0); set_name2 (&r, T_OUT, "g"); g_array_append_val (recs, r);
  ADD (name_rec (T, "REMOVE", T_SRC, "data", 0));
  r = name_rec (T, "MKDIR", T_ROOT, "tmp", T_TMP); r.create_type = 2; g_array_append_val (recs, r);
  ADD (name_rec (T, "READDIR", T_TMP, "", 0));
  ADD (name_rec (T, "RMDIR", T_ROOT, "tmp", 0));
  r = name_rec (T, "OPEN", T_OUT, "o4", T_O4); r.vers = 4; r.open_create = TRUE; r.create_type = 1;
  g_array_append_val (recs, r);
  r = rec (T, "WRITE", T_O4, 0, 100); r.vers = 4; g_array_append_val (recs, r);
  r = rec (T, "CLOSE", T_O4, 0, 0); r.vers = 4; g_array_append_val (recs, r);
  /* NFSv4.1 OPEN by handle (CLAIM_FH): no name, the current handle is the file */
  r = rec (T, "OPEN", T_O4, 0, 0); r.vers = 4; g_array_append_val (recs, r);
  r = rec (T, "READ", T_O4, 0, 100); r.vers = 4; g_array_append_val (recs, r);
  r = rec (T, "CLOSE", T_O4, 0, 0); r.vers = 4; g_array_append_val (recs, r);
#undef T
#undef ADD
  return recs;
}

static const ReplayNfsFile *
node_by_fh (const ReplayNfsPlan *plan, guint64 fh)
{
  for (guint i = 0; i < plan->files->len; i++)
    if (g_array_index (plan->files, ReplayNfsFile, i).fh_hash == fh)
      return &g_array_index (plan->files, ReplayNfsFile, i);
  g_assert_not_reached ();
}

/* The plan's name space: start paths, what setup makes, placeholders merged. */
static void
test_plan_names (void)
{
  g_autoptr (GArray) recs = names_records ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsPlan) plan = NULL;
  ReplayNfsOptions opts;

  replay_nfs_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, plan->root).fh_hash, ==, T_ROOT);
  g_assert_cmpstr (node_by_fh (plan, T_SRC)->path, ==, "src");
  g_assert_cmpuint (node_by_fh (plan, T_SRC)->type, ==, REPLAY_NFS_NODE_DIR);
  g_assert_cmpstr (node_by_fh (plan, T_DATA)->path, ==, "src/data");
  g_assert_cmpuint (node_by_fh (plan, T_DATA)->size_bytes, ==, 10000);
  /* "old" was renamed before its handle showed: it started as "old" */
  g_assert_cmpstr (node_by_fh (plan, T_OLD)->path, ==, "old");
  g_assert_false (node_by_fh (plan, T_OLD)->created);
  g_assert_cmpuint (node_by_fh (plan, T_OLD)->size_bytes, ==, 4096);
  g_assert_cmpstr (node_by_fh (plan, T_NONAME)->path, ==, REPLAY_NFS_UNNAMED "/fh-00000000000000c8");
  g_assert_false (node_by_fh (plan, T_NONAME)->named);
  g_assert_true (node_by_fh (plan, T_OUT)->created);
  g_assert_cmpstr (node_by_fh (plan, T_F)->path, ==, "out/f");
  g_assert_true (node_by_fh (plan, T_F)->created);
  g_assert_cmpuint (node_by_fh (plan, T_SL)->type, ==, REPLAY_NFS_NODE_SYMLINK);
  g_assert_true (node_by_fh (plan, T_O4)->created);
  /* no placeholder is left: every node has a handle */
  for (guint i = 0; i < plan->files->len; i++)
    g_assert_cmpuint (g_array_index (plan->files, ReplayNfsFile, i).fh_hash, !=, 0);
  g_assert_cmpuint (plan->files->len, ==, 10);
  g_assert_cmpuint (plan->n_created, ==, 5);
  g_assert_cmpuint (plan->n_type[REPLAY_NFS_NODE_DIR], ==, 4);
  g_assert_cmpuint (plan->max_depth, ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_MKDIR], ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_RENAME], ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_OPEN], ==, 2);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_READLINK], ==, 1);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_STATFS], ==, 1);
  g_assert_cmpuint (plan->n_by_kind[REPLAY_NFS_CLOSE], ==, 2);
  g_assert_cmpuint (g_hash_table_size (plan->skipped_ops), ==, 0);
}

static void
assert_node (const char *dir, const char *rel, char type, gint64 size)
{
  g_autofree char *path = g_build_filename (dir, REPLAY_NFS_SUBDIR, rel, NULL);
  struct stat st;

  if (type == 0)
    {
      g_assert_cmpint (lstat (path, &st), !=, 0);
      return;
    }
  g_assert_cmpint (lstat (path, &st), ==, 0);
  if (type == 'd')
    g_assert_true (S_ISDIR (st.st_mode));
  else if (type == 'l')
    g_assert_true (S_ISLNK (st.st_mode));
  else
    g_assert_true (S_ISREG (st.st_mode));
  if (size >= 0)
    g_assert_cmpint (st.st_size, ==, size);
}

/* Replayed (one worker, then eight), the directory tree is the one the
 * capture implies. */
static void
test_replay_names (void)
{
  g_autoptr (GArray) recs = names_records ();
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  static const guint threads[] = { 1, 8 };

  for (guint k = 0; k < G_N_ELEMENTS (threads); k++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ReplayNfsResult) res = NULL;
      g_autofree char *g = g_build_filename (dir, REPLAY_NFS_SUBDIR, "out", "g", NULL);
      g_autofree char *link = g_build_filename (dir, REPLAY_NFS_SUBDIR, "f-link", NULL);
      g_autofree char *sl = g_build_filename (dir, REPLAY_NFS_SUBDIR, "out", "sl", NULL);
      g_autofree char *target = NULL;
      ReplayNfsOptions opts;
      ReplayNfsPlan *plan;
      struct stat a, b;

      replay_nfs_options_init (&opts);
      opts.allow_write = TRUE;
      opts.target_dir = dir;
      opts.timing = REPLAY_TIMING_AFAP;
      opts.threads = threads[k];
      plan = replay_nfs_plan_build (recs, &opts, &error);
      g_assert_no_error (error);
      res = replay_nfs_run_plan (plan, &opts, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
      /* the failed LOOKUP failed again, as traced: not an error */
      g_assert_cmpuint (res->errors, ==, 0);
      assert_node (dir, "src", 'd', -1);
      assert_node (dir, "src/data", 0, -1);
      assert_node (dir, "src/new", 'f', 4096);
      assert_node (dir, "old", 0, -1);
      assert_node (dir, REPLAY_NFS_UNNAMED "/fh-00000000000000c8", 'f', 8192);
      assert_node (dir, "out", 'd', -1);
      assert_node (dir, "out/f", 0, -1);
      assert_node (dir, "out/g", 'f', 5000);
      assert_node (dir, "f-link", 'f', 5000);
      assert_node (dir, "out/sl", 'l', -1);
      assert_node (dir, "out/o4", 'f', 100);
      assert_node (dir, "tmp", 0, -1);
      /* the link is the same file; the symbolic link says what was traced */
      g_assert_cmpint (stat (g, &a), ==, 0);
      g_assert_cmpint (stat (link, &b), ==, 0);
      g_assert_cmpuint (a.st_ino, ==, b.st_ino);
      g_assert_cmpuint (a.st_nlink, ==, 2);
      target = g_file_read_link (sl, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (target, ==, "f");
    }
  remove_tree (dir);
}

/* The stored NFSv3 capture with every name procedure (suricata-verify
 * nfs3-01, from Wireshark's samples): the client creates "a", renames it
 * "am", links "b" as "bln", makes the symbolic link "blns" -> "b", makes
 * "d", writes 17 bytes in "d/h", and removes all of them again, leaving
 * the 11-byte "b" it read.  Every operation succeeds or fails as traced. */
static void
test_capture_names_v3 (void)
{
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *capture = NULL;
  g_autofree char *dir = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autofree char *sub = NULL;
  g_autoptr (GDir) d = NULL;
  guint entries = 0;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return;
    }
  capture = g_build_filename (shared, "nfs-pcap-suricata-verify", "nfsv3-udp.pcap", NULL);
  if (!g_file_test (capture, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("nfs-pcap-suricata-verify/nfsv3-udp.pcap not available");
      return;
    }
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  res = replay (capture, dir, REPLAY_TIMING_AFAP, 4, TRUE, FALSE);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
  for (guint k = REPLAY_NFS_MKDIR; k <= REPLAY_NFS_SYMLINK; k++)
    g_assert_cmpuint (res->plan->n_by_kind[k], ==, 1);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_CREATE], ==, 2);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_REMOVE], ==, 4);
  g_assert_cmpuint (res->plan->n_unnamed, ==, 0);
  assert_node (dir, "b", 'f', 11);
  sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  d = g_dir_open (sub, 0, NULL);
  while (g_dir_read_name (d) != NULL)
    entries++;
  g_assert_cmpuint (entries, ==, 1);
  remove_tree (dir);
}

/* The NFSv4.0 loopback capture: OPEN of an existing file (made at setup
 * with its traced size) and OPEN with OPEN4_CREATE of w4.bin, written and
 * closed by the replay. */
static void
test_capture_names_v4 (void)
{
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *capture = NULL;
  g_autofree char *dir = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;

  if (shared == NULL)
    {
      g_test_skip ("IOSIM_SHARED_TESTDATA not available");
      return;
    }
  capture = g_build_filename (shared, "generated-nfs-loopback", "nfsv40-tcp-libnfs-ganesha-sll2.pcap", NULL);
  if (!g_file_test (capture, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("generated-nfs-loopback/nfsv40-tcp-libnfs-ganesha-sll2.pcap not available");
      return;
    }
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  res = replay (capture, dir, REPLAY_TIMING_AFAP, 4, TRUE, FALSE);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_OPEN], ==, 2);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_CLOSE], ==, 2);
  g_assert_cmpuint (res->plan->n_created, ==, 1);
  for (guint i = 0; i < res->plan->files->len; i++)
    {
      const ReplayNfsFile *f = &g_array_index (res->plan->files, ReplayNfsFile, i);
      if (f->type == REPLAY_NFS_NODE_FILE)
        g_assert_cmpint (f->created, ==, strcmp (f->path, "w4.bin") == 0);
    }
  /* O_CREAT only for the OPEN that created its file */
  for (guint i = 0; i < res->plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, i);
      if (op->kind == REPLAY_NFS_OPEN)
        g_assert_cmpint (op->create, ==, strcmp (op->name, "w4.bin") == 0);
    }
  assert_node (dir, "f300k.bin", 'f', 300000);
  assert_node (dir, "w4.bin", 'f', 3000);
  remove_tree (dir);
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
  g_test_add_func ("/replay-nfs/plan/names", test_plan_names);
  g_test_add_func ("/replay-nfs/names/tree", test_replay_names);
  g_test_add_func ("/replay-nfs/names/nfsv3-capture", test_capture_names_v3);
  g_test_add_func ("/replay-nfs/names/nfsv4-capture", test_capture_names_v4);
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
