/* test-replay-nfs.c — NFS capture replay on a temporary directory (no
 * root): the plan from synthetic records (directories, extents, write
 * policy, skipped operations), and on the stored loopback capture
 * ($IOSIM_SHARED_TESTDATA/generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap,
 * skipped without it): file sizes, every READ/WRITE issued with its traced
 * offset and count, afap and recorded timing, reads only, dry runs, the
 * pool's trace order, and the directory checks. */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "tests/test-tree.h"
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
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
  test_remove_tree (dir);
}

/* ---- hostile sizes: count limits, sparse setup, setup limits ------------- */

/* One READ or WRITE after what the server announced (an FSINFO or a
 * CREATE_SESSION record), and whether the plan replays it. */
typedef struct {
  const char *name;
  guint32     vers;
  const char *announce;     /* "FSINFO", "CREATE_SESSION" or NULL */
  guint32     announced_read, announced_write;
  guint32     max_io_bytes; /* ReplayNfsOptions.max_io_bytes */
  const char *op;
  guint64     offset;
  guint32     count;
  const char *skipped;      /* the skip reason, NULL: replayed */
} IoLimitCase;

static const IoLimitCase io_limit_cases[] = {
  { "v3-default-at-limit", 3, NULL, 0, 0, 0, "READ", 0, 1048576, NULL },
  { "v3-default-above", 3, NULL, 0, 0, 0, "READ", 0, 1048577,
    "READ (count above the 1048576-byte NFSv3 limit)" },
  { "v3-write-4gib", 3, NULL, 0, 0, 0, "WRITE", 0, 0xfffffff0u,
    "WRITE (count above the 1048576-byte NFSv3 limit)" },
  { "v3-fsinfo-raises", 3, "FSINFO", 4u << 20, 4u << 20, 0, "READ", 0, 2u << 20, NULL },
  { "v3-fsinfo-lowers", 3, "FSINFO", 65536, 65536, 0, "WRITE", 0, 131072,
    "WRITE (count above the 65536-byte NFSv3 limit)" },
  { "v3-fsinfo-forged", 3, "FSINFO", G_MAXUINT32, G_MAXUINT32, 0, "WRITE", 0, 0xfffffff0u,
    "WRITE (count above the 16777216-byte NFSv3 limit)" },
  { "v3-option-raises", 3, NULL, 0, 0, 8u << 20, "READ", 0, 4u << 20, NULL },
  { "v2-default", 2, NULL, 0, 0, 0, "READ", 0, 16384, "READ (count above the 8192-byte NFSv2 limit)" },
  { "v4-session", 4, "CREATE_SESSION", 1u << 20, 262144, 0, "WRITE", 0, 524288,
    "WRITE (count above the 262144-byte NFSv4 limit)" },
  { "v4-session-read-ok", 4, "CREATE_SESSION", 2u << 20, 262144, 0, "READ", 0, 2u << 20, NULL },
  { "offset-past-off_t", 3, NULL, 0, 0, 0, "READ", G_MAXUINT64 - 100, 4096,
    "READ (extent past the largest file offset)" },
};

static void
test_io_limits (gconstpointer data)
{
  const IoLimitCase *c = data;
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsPlan) plan = NULL;
  ReplayNfsKind kind = strcmp (c->op, "READ") == 0 ? REPLAY_NFS_READ : REPLAY_NFS_WRITE;
  ReplayNfsOptions opts;
  TraceNfsRecord r;

  if (c->announce != NULL)
    {
      r = rec (500, c->announce, 1, 0, 0);
      r.vers = c->vers;
      r.max_read_bytes = c->announced_read;
      r.max_write_bytes = c->announced_write;
      g_array_append_val (recs, r);
    }
  r = rec (1000, c->op, 2, c->offset, c->count);   r.vers = c->vers; g_array_append_val (recs, r);
  r = rec (2000, "GETATTR", 2, 0, 0);              r.vers = c->vers; g_array_append_val (recs, r);
  replay_nfs_options_init (&opts);
  opts.allow_write = TRUE;
  opts.max_io_bytes = c->max_io_bytes;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_by_kind[kind], ==, c->skipped == NULL ? 1 : 0);
  g_assert_cmpuint (plan->skipped_io_limit, ==, c->skipped == NULL ? 0 : 1);
  if (c->skipped != NULL)
    {
      guint64 *n = g_hash_table_lookup (plan->skipped_ops, c->skipped);
      g_assert_nonnull (n);
      g_assert_cmpuint (*n, ==, 1);
      /* a skipped operation does not size the file either */
      g_assert_cmpuint (node_by_fh (plan, 2)->size_bytes, ==, 0);
    }
  else
    g_assert_cmpuint (node_by_fh (plan, 2)->size_bytes, ==, c->offset + c->count);
}

#define TIB (G_GUINT64_CONSTANT (1) << 40)

/* Setup writes only what the READs read, in whole 4 KiB blocks within the
 * file, merged: a READ 1 TiB out makes a sparse file, not a full disk. */
static void
test_sparse_setup (void)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autofree char *path = NULL;
  ReplayNfsOptions opts;
  ReplayNfsPlan *plan;
  const ReplayNfsExtent *e;
  guint8 buf[64], zeros[64] = { 0 };
  struct stat st;
  TraceNfsRecord r;
  int fd;

  r = rec (1000, "READ", 2, TIB, 4096);                     g_array_append_val (recs, r);
  r = rec (2000, "READ", 2, 100, 10);                       g_array_append_val (recs, r);
  r = rec (3000, "READ", 2, 2000, 5000);                    g_array_append_val (recs, r);
  /* at the end of the file: the reply returned 100 bytes of the 200 asked */
  r = rec (4000, "READ", 2, TIB + 3996, 200); r.reply_count = 100; g_array_append_val (recs, r);
  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.timing = REPLAY_TIMING_AFAP;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->file_bytes, ==, TIB + 4096);
  g_assert_cmpuint (plan->fill->len, ==, 2);
  e = &g_array_index (plan->fill, ReplayNfsExtent, 0);
  g_assert_cmpuint (e->offset, ==, 0);
  g_assert_cmpuint (e->length, ==, 8192);
  e = &g_array_index (plan->fill, ReplayNfsExtent, 1);
  g_assert_cmpuint (e->offset, ==, TIB);
  g_assert_cmpuint (e->length, ==, 4096);
  g_assert_cmpuint (plan->setup_bytes, ==, 12288);
  res = replay_nfs_run_plan (plan, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->ops, ==, 4);
  path = g_build_filename (dir, REPLAY_NFS_SUBDIR, node_by_fh (res->plan, 2)->path, NULL);
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_assert_cmpuint ((guint64) st.st_size, ==, TIB + 4096);
  /* 12 KiB of data and the file system's own blocks, nothing like 1 TiB */
  g_assert_cmpuint ((guint64) st.st_blocks * 512, <=, 1024 * 1024);
  fd = open (path, O_RDONLY);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pread (fd, buf, sizeof buf, (off_t) TIB + 10), ==, sizeof buf);
  g_assert_true (memcmp (buf, zeros, sizeof buf) != 0);
  g_assert_cmpint (pread (fd, buf, sizeof buf, 1 << 20), ==, sizeof buf);
  g_assert_true (memcmp (buf, zeros, sizeof buf) == 0);
  close (fd);
  /* buffers: the largest READ replayed, per worker */
  g_assert_cmpuint (res->buffer_bytes, <=, (guint64) res->threads * 5000 + 1);
  g_assert_cmpuint (res->peak_rss_bytes, >, 0);
  test_remove_tree (dir);
}

/* A size the file system refuses (here RLIMIT_FSIZE makes ftruncate fail
 * with EFBIG, as a file system's largest file size does): a clear error
 * naming the file and the size, before any data is written. */
static void
test_setup_efbig (void)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autoptr (GError) error = NULL;
  ReplayNfsOptions opts;
  ReplayNfsPlan *plan;
  struct rlimit old, small;
  void (*old_handler) (int);
  TraceNfsRecord r;
  ReplayNfsResult *res;

  r = rec (1000, "GETATTR", 2, 0, 0);  r.file_size = G_GINT64_CONSTANT (2) << 30;  g_array_append_val (recs, r);
  r = rec (2000, "READ", 2, 0, 4096);                                              g_array_append_val (recs, r);
  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.timing = REPLAY_TIMING_AFAP;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  small = old;
  small.rlim_cur = 1u << 30;
  old_handler = signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &small), ==, 0);
  res = replay_nfs_run_plan (plan, &opts, &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  signal (SIGXFSZ, old_handler);
  g_assert_null (res);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "2147483648 bytes"));
  g_assert_nonnull (strstr (error->message, "larger than this file system allows"));
  g_assert_nonnull (strstr (error->message, "fh-0000000000000002"));
  test_remove_tree (dir);
}

/* Three READs of 1 MiB each: setup needs 3 MiB. */
static GArray *
three_mib_records (void)
{
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  TraceNfsRecord r;

  for (guint k = 0; k < 3; k++)
    {
      r = rec (1000 * (k + 1), "READ", 2, (guint64) k << 22, 1u << 20);
      g_array_append_val (recs, r);
    }
  return recs;
}

/* Over --max-setup-bytes: refused before anything is made, saying how much,
 * the limit and the option; at the limit it runs. */
static void
test_setup_limit (void)
{
  g_autoptr (GArray) recs = three_mib_records ();
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  ReplayNfsOptions opts;
  ReplayNfsPlan *plan;

  replay_nfs_options_init (&opts);
  g_assert_cmpuint (opts.max_setup_bytes, ==, REPLAY_NFS_DEFAULT_MAX_SETUP_BYTES);
  opts.target_dir = dir;
  opts.timing = REPLAY_TIMING_AFAP;
  opts.max_setup_bytes = 2u << 20;
  /* a dry run says it would be refused */
  opts.dry_run = TRUE;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  res = replay_nfs_run_plan (plan, &opts, &error);
  g_assert_no_error (error);
  g_assert_nonnull (res->setup_refusal);
  g_assert_nonnull (strstr (res->setup_refusal, "--max-setup-bytes"));
  g_clear_pointer (&res, replay_nfs_result_free);
  opts.dry_run = FALSE;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->setup_bytes, ==, 3u << 20);
  g_assert_null (replay_nfs_run_plan (plan, &opts, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "3145728 bytes"));
  g_assert_nonnull (strstr (error->message, "2097152 bytes"));
  g_assert_nonnull (strstr (error->message, "--max-setup-bytes"));
  g_assert_false (g_file_test (sub, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  opts.max_setup_bytes = 3u << 20;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  res = replay_nfs_run_plan (plan, &opts, &error);
  g_assert_no_error (error);
  g_assert_null (res->setup_refusal);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->plan->setup_bytes, ==, 3u << 20);
  test_remove_tree (dir);
}

/* More than the file system holds (READs of 4 GiB, allowed by
 * max_io_bytes, 16 TiB in all): refused by the free space, nothing made. */
static void
test_setup_free_space (void)
{
  g_autoptr (GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = NULL;
  ReplayNfsOptions opts;
  ReplayNfsPlan *plan;
  struct statvfs sv;
  TraceNfsRecord r;

  for (guint k = 0; k < 4096; k++)
    {
      r = rec (1000 * (k + 1), "READ", 2, (guint64) k << 32, 0xfffff000u);
      g_array_append_val (recs, r);
    }
  g_assert_cmpint (statvfs (dir, &sv), ==, 0);
  if ((guint64) sv.f_bavail * sv.f_frsize >= 4096 * (guint64) 0xfffff000u)
    {
      g_test_skip ("the temporary directory has more than 16 TiB free");
      test_remove_tree (dir);
      return;
    }
  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.max_io_bytes = G_MAXUINT32;
  opts.max_setup_bytes = G_MAXINT64;
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->setup_bytes, ==, 4096 * (guint64) 0xfffff000u);
  g_assert_null (replay_nfs_run_plan (plan, &opts, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "free"));
  g_assert_nonnull (strstr (error->message, "nothing was written"));
  d = g_dir_open (sub, 0, NULL);
  g_assert_nonnull (d);
  g_assert_null (g_dir_read_name (d));
  test_remove_tree (dir);
}

/* ---- names in the outputs --------------------------------------------------- */

static const char *const odd_names[] = {
  "a,b", "q\"uote\"", "new\nline", "cr\rx", "esc\033[31m", "plain",
};

/* LOOKUPs of files whose names need quoting or escaping, then a GETATTR
 * of each. */
static GArray *
odd_name_records (void)
{
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  TraceNfsRecord r;

  for (guint i = 0; i < G_N_ELEMENTS (odd_names); i++)
    {
      r = name_rec (1000 + 2000 * i, "LOOKUP", T_ROOT, odd_names[i], 300 + i);
      g_array_append_val (recs, r);
      r = rec (2000 + 2000 * i, "GETATTR", 300 + i, 0, 0);
      r.file_size = 10;
      g_array_append_val (recs, r);
    }
  return recs;
}

/* RFC 4180 rows of @text: fields split at commas outside quotes, quoted
 * fields unquoted ("" is one quote). */
static GPtrArray *
csv_parse (const char *text)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  GPtrArray *row = g_ptr_array_new_with_free_func (g_free);
  GString *field = g_string_new (NULL);
  gboolean quoted = FALSE;

  for (const char *c = text; *c != '\0'; c++)
    {
      if (quoted)
        {
          if (*c == '"' && c[1] == '"')
            g_string_append_c (field, *c++);
          else if (*c == '"')
            quoted = FALSE;
          else
            g_string_append_c (field, *c);
        }
      else if (*c == '"')
        quoted = TRUE;
      else if (*c == ',' || *c == '\n')
        {
          g_ptr_array_add (row, g_string_free (field, FALSE));
          field = g_string_new (NULL);
          if (*c == '\n')
            {
              g_ptr_array_add (rows, row);
              row = g_ptr_array_new_with_free_func (g_free);
            }
        }
      else
        g_string_append_c (field, *c);
    }
  g_assert_false (quoted);
  g_assert_cmpuint (field->len, ==, 0);
  g_string_free (field, TRUE);
  g_ptr_array_unref (row);
  return rows;
}

/* Names with a comma, quotes, CR or LF come out of --csv as one field
 * each (RFC 4180), unchanged once unquoted. */
static void
test_csv_quoting (void)
{
  g_autoptr (GArray) recs = odd_name_records ();
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autoptr (GPtrArray) rows = NULL;
  char *text = NULL;
  size_t len = 0;
  ReplayNfsOptions opts;
  FILE *out;

  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.timing = REPLAY_TIMING_AFAP;
  opts.threads = 1;
  res = replay_nfs_run_plan (replay_nfs_plan_build (recs, &opts, &error), &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->errors, ==, 0);
  out = open_memstream (&text, &len);
  replay_nfs_result_write_csv (res, out);
  fclose (out);
  g_assert_nonnull (strstr (text, "\"a,b\""));
  g_assert_nonnull (strstr (text, "\"q\"\"uote\"\"\""));
  g_assert_nonnull (strstr (text, ",plain,"));
  rows = csv_parse (text);
  g_assert_cmpuint (rows->len, ==, 1 + 2 * G_N_ELEMENTS (odd_names));
  for (guint i = 0; i < rows->len; i++)
    {
      GPtrArray *row = g_ptr_array_index (rows, i);
      g_assert_cmpuint (row->len, ==, 13);
      if (i > 0)
        g_assert_cmpstr (g_ptr_array_index (row, 3), ==, odd_names[(i - 1) / 2]);
    }
  free (text);
  test_remove_tree (dir);
}

/* --dry-run prints names escaped: no control byte, every line of the plan
 * its own (a name's newline does not start one). */
static void
test_dry_run_escaped (void)
{
  g_autoptr (GArray) recs = odd_name_records ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsPlan) plan = NULL;
  g_auto (GStrv) lines = NULL;
  char *text = NULL;
  size_t len = 0;
  ReplayNfsOptions opts;
  FILE *out;

  replay_nfs_options_init (&opts);
  plan = replay_nfs_plan_build (recs, &opts, &error);
  g_assert_no_error (error);
  out = open_memstream (&text, &len);
  replay_nfs_plan_print (plan, out);
  fclose (out);
  for (size_t i = 0; i < len; i++)
    g_assert_true (text[i] == '\n' || g_ascii_isprint (text[i]));
  g_assert_nonnull (strstr (text, "new\\nline"));
  g_assert_nonnull (strstr (text, "cr\\rx"));
  g_assert_nonnull (strstr (text, "esc\\033[31m"));
  g_assert_nonnull (strstr (text, "q\\\"uote\\\""));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    g_assert_true (g_str_has_prefix (lines[i], "  ") || g_str_has_prefix (lines[i], "NFS replay plan:"));
  free (text);
}

/* ---- the command, on crafted captures ---------------------------------------- */

/* A capture made by tests/bench/gen-nfs-pcap.py craft from @ops (NULL
 * ended), in @dir; NULL (test skipped) without python3. */
static char *
craft_capture (const char *dir, const char *name, const char *const *ops)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *gen = g_test_build_filename (G_TEST_DIST, "bench", "gen-nfs-pcap.py", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);
  int status = -1;

  if (python == NULL || !g_file_test (gen, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("python3 or tests/bench/gen-nfs-pcap.py not available");
      g_free (path);
      return NULL;
    }
  g_ptr_array_add (argv, python);
  g_ptr_array_add (argv, gen);
  g_ptr_array_add (argv, (gpointer) "craft");
  g_ptr_array_add (argv, path);
  for (; *ops; ops++)
    g_ptr_array_add (argv, (gpointer) *ops);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return path;
}

/* `iosim replay` with --max-setup-bytes: refused with the figures and
 * the option, in a dry run too; raised, it runs; --max-io-bytes lets a
 * larger READ through. */
static void
test_cli_limits (void)
{
  static const char *const ops[] = {
    "lookup:data:fh-data", "read:fh-data:0:1048576", "read:fh-data:0x200000:1048576",
    "read:fh-data:0x400000:2097152", NULL,
  };
  g_autofree char *dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  g_autofree char *capture = NULL;
  g_autofree char *json = g_build_filename (dir, "r.json", NULL);

  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set");
      test_remove_tree (dir);
      return;
    }
  capture = craft_capture (dir, "limits.pcap", ops);
  if (capture == NULL)
    {
      test_remove_tree (dir);
      return;
    }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--max-setup-bytes", "1MiB", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 1);
    g_assert_nonnull (strstr (err, "2097152 bytes"));
    g_assert_nonnull (strstr (err, "1048576 bytes"));
    g_assert_nonnull (strstr (err, "--max-setup-bytes"));
    g_assert_false (g_file_test (sub, G_FILE_TEST_EXISTS));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--max-setup-bytes", "1MiB",
                           "--dry-run", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 1);
    g_assert_nonnull (strstr (out, "setup: refused"));
    g_assert_nonnull (strstr (out, "READ (count above the 1048576-byte NFSv3 limit)"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    g_autoptr (JsonParser) parser = json_parser_new ();
    g_autoptr (GError) error = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--max-setup-bytes", "2MiB",
                           "--timing", "afap", "--json", json, NULL };
    JsonObject *o, *skipped;
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
    g_assert_true (json_parser_load_from_file (parser, json, &error));
    g_assert_no_error (error);
    o = json_node_get_object (json_parser_get_root (parser));
    g_assert_cmpint (json_object_get_int_member (o, "setup_bytes"), ==, 2097152);
    g_assert_cmpint (json_object_get_int_member (o, "skipped_io_limit"), ==, 1);
    g_assert_cmpint (json_object_get_int_member (o, "peak_rss_bytes"), >, 0);
    skipped = json_object_get_object_member (o, "skipped");
    g_assert_cmpint (json_object_get_int_member (skipped, "READ (count above the 1048576-byte NFSv3 limit)"),
                     ==, 1);
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--max-io-bytes", "2MiB",
                           "--max-setup-bytes", "4MiB", "--timing", "afap", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "setup wrote 4194304 bytes"));
    g_assert_null (strstr (out, "skipped"));
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "replay", capture, "--target-dir", dir, "--max-io-bytes", "0", NULL };
    g_assert_cmpint (run_iosim (args, &out, &err), ==, 2);
  }
  test_remove_tree (dir);
}

/* ---- the prepared hook ------------------------------------------------- */

typedef struct {
  const char *dir;
  guint       calls;
  gint64      big_size_at_call;    /* f300k.bin's size when the hook ran */
  gint64      big_blocks_at_call;  /* and its allocated bytes: setup filled it */
  gboolean    fail;                /* return FALSE with an error */
  GThread    *poller;              /* looks for the workers' comm */
  gint        poll_stop;           /* atomic */
  gint        comm_seen;           /* atomic: a thread named REPLAY_NFS_WORKER_COMM */
} Prepared;

/* Some thread of this process is named @comm. */
static gboolean
thread_named (const char *comm)
{
  g_autoptr (GDir) d = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;

  while (d && (tid = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/task", tid, "comm", NULL);
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL) && strcmp (g_strstrip (text), comm) == 0)
        return TRUE;
    }
  return FALSE;
}

static gpointer
poll_comm (gpointer data)
{
  Prepared *p = data;

  while (!g_atomic_int_get (&p->poll_stop) && !g_atomic_int_get (&p->comm_seen))
    {
      if (thread_named (REPLAY_NFS_WORKER_COMM))
        g_atomic_int_set (&p->comm_seen, 1);
      g_usleep (1000);
    }
  return NULL;
}

static gboolean
on_prepared (const char *replay_dir, gpointer data, GError **error)
{
  Prepared *p = data;
  g_autofree char *big = g_build_filename (replay_dir, "f300k.bin", NULL);
  g_autofree char *expected = g_build_filename (p->dir, REPLAY_NFS_SUBDIR, NULL);
  struct stat st;

  g_assert_cmpstr (replay_dir, ==, expected);
  p->calls++;
  g_assert_cmpint (stat (big, &st), ==, 0);
  p->big_size_at_call = st.st_size;
  p->big_blocks_at_call = (gint64) st.st_blocks * 512;
  if (p->fail)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "prepared refused");
      return FALSE;
    }
  p->poller = g_thread_new ("poll-comm", poll_comm, p);
  return TRUE;
}

/* The hook runs once, after setup made and filled the files and before
 * any operation; the workers carry the pool's one comm; a hook that fails
 * ends the run with its error before any operation is issued. */
static void
test_capture_prepared (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *dir = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  ReplayNfsOptions opts;
  Prepared p = { 0 };

  if (capture == NULL)
    return;
  dir = g_dir_make_tmp ("iosim-nfs-XXXXXX", NULL);
  p.dir = dir;
  replay_nfs_options_init (&opts);
  opts.target_dir = dir;
  opts.threads = 3;
  /* Slowed down to about 0.3 s, so that the poller sees the workers. */
  opts.speed = 0.05;
  opts.prepared = on_prepared;
  opts.prepared_data = &p;
  res = replay_nfs_run (capture, &opts, &error);
  g_atomic_int_set (&p.poll_stop, 1);
  if (p.poller)
    g_thread_join (p.poller);
  g_assert_no_error (error);
  g_assert_cmpuint (p.calls, ==, 1);
  g_assert_cmpint (p.big_size_at_call, ==, 300000);
  g_assert_cmpint (p.big_blocks_at_call, >=, 300000);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->issued, ==, res->plan->ops->len);
  g_assert_true (g_atomic_int_get (&p.comm_seen));
  g_assert_false (thread_named (REPLAY_NFS_WORKER_COMM));
  g_clear_pointer (&res, replay_nfs_result_free);

  memset (&p, 0, sizeof p);
  p.dir = dir;
  p.fail = TRUE;
  res = replay_nfs_run (capture, &opts, &error);
  g_assert_null (res);
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpuint (p.calls, ==, 1);
  test_remove_tree (dir);
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
  g_test_add_func ("/replay-nfs/capture/prepared", test_capture_prepared);
  g_test_add_func ("/replay-nfs/cli", test_cli);
  for (guint i = 0; i < G_N_ELEMENTS (io_limit_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/replay-nfs/limits/io-count/%s", io_limit_cases[i].name);
      g_test_add_data_func (name, &io_limit_cases[i], test_io_limits);
    }
  g_test_add_func ("/replay-nfs/limits/sparse-setup", test_sparse_setup);
  g_test_add_func ("/replay-nfs/limits/setup-limit", test_setup_limit);
  g_test_add_func ("/replay-nfs/limits/setup-free-space", test_setup_free_space);
  g_test_add_func ("/replay-nfs/limits/setup-efbig", test_setup_efbig);
  g_test_add_func ("/replay-nfs/limits/cli", test_cli_limits);
  g_test_add_func ("/replay-nfs/names/csv-quoting", test_csv_quoting);
  g_test_add_func ("/replay-nfs/names/dry-run-escaped", test_dry_run_escaped);
  return g_test_run ();
}
