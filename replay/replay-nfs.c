/* replay-nfs.c — server-side replay of NFS captures (replay/replay-nfs.h):
 * the plan (file set and operation list), the file set on the target
 * directory, the worker pool and its pacing, the summary and its outputs.
 */
#include "replay/replay-nfs.h"
#include "replay/replay-engine-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#define REPLAY_NFS_DEFAULT_THREADS 8
#define REPLAY_NFS_CREATED_PREFIX "created-"
/* Sleep in slices of at most this so that a stop request is seen soon. */
#define REPLAY_NFS_MAX_SLEEP_NS (50 * 1000 * 1000)
#define REPLAY_NFS_FILL_CHUNK (1024 * 1024)

static const char *const kind_names[REPLAY_NFS_N_KINDS] = {
  "read", "write", "commit", "create", "remove", "stat", "truncate", "readdir",
};

const char *
replay_nfs_kind_name (ReplayNfsKind kind)
{
  return kind < REPLAY_NFS_N_KINDS ? kind_names[kind] : "?";
}

void
replay_nfs_options_init (ReplayNfsOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->threads = REPLAY_NFS_DEFAULT_THREADS;
  opts->timing = REPLAY_TIMING_RECORDED;
  opts->speed = 1.0;
  opts->lead_ns = 20 * 1000 * 1000;
  opts->spin_ns = 50 * 1000;
}

/* ---- plan -------------------------------------------------------------- */

static gboolean
op_is (const TraceNfsRecord *rec, const char *const *names)
{
  for (; *names; names++)
    if (strcmp (rec->op, *names) == 0)
      return TRUE;
  return FALSE;
}

/* Operations whose file handle is a directory (name space operations). */
static const char *const dir_ops[] = {
  "CREATE", "LOOKUP", "READDIR", "READDIRPLUS", "MKDIR", "REMOVE", "RMDIR", "RENAME",
  "LINK", "SYMLINK", "MKNOD", "FSINFO", "FSSTAT", "PATHCONF", "LOOKUPP", NULL,
};
static const char *const stat_ops[] = { "LOOKUP", "GETATTR", "ACCESS", NULL };
static const char *const io_ops[] = { "READ", "WRITE", NULL };

typedef struct {
  GHashTable *dirs;         /* fh_hash set */
  GHashTable *file_index;   /* fh_hash -> index + 1 */
  GHashTable *object_ops;   /* file index (or NO_FILE) -> GArray of op indices */
} PlanMaps;

/* How far back an operation looks for the one it depends on. */
#define REPLAY_NFS_DEP_SCAN 64

static guint32
plan_file (ReplayNfsPlan *plan, PlanMaps *m, guint64 fh)
{
  gpointer v;
  ReplayNfsFile f = { .fh_hash = fh };

  if (fh == 0 || g_hash_table_contains (m->dirs, &fh))
    return REPLAY_NFS_NO_FILE;
  if (g_hash_table_lookup_extended (m->file_index, &fh, NULL, &v))
    return GPOINTER_TO_UINT (v) - 1;
  g_snprintf (f.name, sizeof f.name, "%016" G_GINT64_MODIFIER "x", fh);
  g_array_append_val (plan->files, f);
  g_hash_table_insert (m->file_index, g_memdup2 (&fh, sizeof fh),
                       GUINT_TO_POINTER (plan->files->len));
  return plan->files->len - 1;
}

/* First pass: which handles are directories, then every other handle's
 * largest extent.  A READ counts what the reply returned when there is one
 * (a read past the end asks for more than the file holds). */
static void
plan_files (ReplayNfsPlan *plan, PlanMaps *m, const GArray *records)
{
  for (guint i = 0; i < records->len; i++)
    {
      const TraceNfsRecord *rec = &g_array_index (records, TraceNfsRecord, i);
      if (rec->fh_hash != 0 && op_is (rec, dir_ops))
        g_hash_table_add (m->dirs, g_memdup2 (&rec->fh_hash, sizeof rec->fh_hash));
    }
  for (guint i = 0; i < records->len; i++)
    {
      const TraceNfsRecord *rec = &g_array_index (records, TraceNfsRecord, i);
      guint32 f = plan_file (plan, m, rec->fh_hash);
      ReplayNfsFile *file;
      guint64 end = 0;

      if (rec->obj_fh_hash != 0)
        plan_file (plan, m, rec->obj_fh_hash);
      if (f == REPLAY_NFS_NO_FILE)
        continue;
      file = &g_array_index (plan->files, ReplayNfsFile, f);
      if (strcmp (rec->op, "READ") == 0)
        {
          guint32 n = rec->status == 0 && rec->reply_time_ns >= 0 ? rec->reply_count : rec->count;
          end = rec->offset + n;
          file->read = TRUE;
        }
      else if (strcmp (rec->op, "WRITE") == 0)
        {
          end = rec->offset + rec->count;
          file->written = TRUE;
        }
      if (rec->file_size > 0)
        end = MAX (end, (guint64) rec->file_size);
      file->size_bytes = MAX (file->size_bytes, end);
    }
}

static void
count_skipped (ReplayNfsPlan *plan, const char *op)
{
  guint64 *n = g_hash_table_lookup (plan->skipped_ops, op);

  if (n == NULL)
    {
      n = g_new0 (guint64, 1);
      g_hash_table_insert (plan->skipped_ops, g_strdup (op), n);
    }
  (*n)++;
}

/* The local equivalent of a traced operation; FALSE when there is none. */
static gboolean
classify (const TraceNfsRecord *rec, ReplayNfsKind *kind)
{
  static const struct { const char *op; ReplayNfsKind kind; } map[] = {
    { "READ", REPLAY_NFS_READ }, { "WRITE", REPLAY_NFS_WRITE },
    { "COMMIT", REPLAY_NFS_COMMIT }, { "CREATE", REPLAY_NFS_CREATE },
    { "REMOVE", REPLAY_NFS_REMOVE }, { "SETATTR", REPLAY_NFS_TRUNCATE },
    { "READDIR", REPLAY_NFS_READDIR }, { "READDIRPLUS", REPLAY_NFS_READDIR },
  };

  if (op_is (rec, stat_ops))
    {
      *kind = REPLAY_NFS_STAT;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (rec->op, map[i].op) == 0)
      {
        *kind = map[i].kind;
        return TRUE;
      }
  return FALSE;
}

static gboolean
kind_modifies (ReplayNfsKind kind)
{
  return kind == REPLAY_NFS_WRITE || kind == REPLAY_NFS_CREATE || kind == REPLAY_NFS_REMOVE
         || kind == REPLAY_NFS_TRUNCATE;
}

/* The latest earlier operation on the same object whose traced reply came
 * before this call (@call_ns), and record this one for later ones. */
static gint32
plan_dependency (ReplayNfsPlan *plan, PlanMaps *m, guint32 object, gint64 call_ns)
{
  GArray *list = g_hash_table_lookup (m->object_ops, GUINT_TO_POINTER (object));
  gint32 after = -1;

  if (list == NULL)
    {
      list = g_array_new (FALSE, FALSE, sizeof (guint));
      g_hash_table_insert (m->object_ops, GUINT_TO_POINTER (object), list);
    }
  for (guint k = list->len, n = 0; k > 0 && n < REPLAY_NFS_DEP_SCAN; k--, n++)
    {
      guint j = g_array_index (list, guint, k - 1);
      const ReplayNfsOp *prev = &g_array_index (plan->ops, ReplayNfsOp, j);
      if (prev->traced_reply_ns >= 0 && prev->traced_reply_ns <= call_ns)
        {
          after = (gint32) j;
          break;
        }
    }
  g_array_append_val (list, plan->ops->len);
  return after;
}

/* Second half of the plan: one ReplayNfsOp per replayable record. */
static void
plan_op (ReplayNfsPlan *plan, PlanMaps *m, const TraceNfsRecord *rec, gint64 first_ns)
{
  ReplayNfsOp op = { 0 };

  if (!classify (rec, &op.kind))
    {
      count_skipped (plan, rec->op);
      return;
    }
  /* SETATTR only changes what we can replay when it sets a size; the
   * reply's post-operation size is the size it left (v3 wcc_data). */
  if (op.kind == REPLAY_NFS_TRUNCATE && rec->file_size < 0)
    {
      count_skipped (plan, "SETATTR (no size)");
      return;
    }
  if (kind_modifies (op.kind) && !plan->allow_write)
    {
      plan->skipped_writes++;
      return;
    }
  g_strlcpy (op.op, rec->op, sizeof op.op);
  op.file = plan_file (plan, m, rec->fh_hash);
  /* LOOKUP's handle is the directory: stat what it found. */
  if (strcmp (rec->op, "LOOKUP") == 0 && rec->obj_fh_hash != 0)
    op.file = plan_file (plan, m, rec->obj_fh_hash);
  if (op.file == REPLAY_NFS_NO_FILE
      && (op_is (rec, io_ops) || op.kind == REPLAY_NFS_COMMIT || op.kind == REPLAY_NFS_TRUNCATE))
    {
      plan->skipped_no_file++;
      return;
    }
  if (op.kind == REPLAY_NFS_READ || op.kind == REPLAY_NFS_WRITE)
    {
      op.offset = rec->offset;
      op.count = rec->count;
      if (op.count == 0)
        {
          count_skipped (plan, op.kind == REPLAY_NFS_READ ? "READ (0 bytes)" : "WRITE (0 bytes)");
          return;
        }
      if (op.kind == REPLAY_NFS_READ)
        plan->bytes_read += op.count;
      else
        plan->bytes_written += op.count;
    }
  if (op.kind == REPLAY_NFS_TRUNCATE)
    op.size_bytes = (guint64) rec->file_size;
  op.sched_ns = plan->timing == REPLAY_TIMING_AFAP
                  ? 0 : (gint64) ((double) (rec->time_ns - first_ns) / plan->speed);
  op.traced_latency_ns = rec->latency_ns;
  op.traced_reply_ns = rec->reply_time_ns >= 0 ? rec->reply_time_ns - first_ns : -1;
  op.xid = rec->xid;
  op.after = plan_dependency (plan, m, op.file, rec->time_ns - first_ns);
  plan->n_by_kind[op.kind]++;
  plan->span_ns = MAX (plan->span_ns, op.sched_ns);
  g_array_append_val (plan->ops, op);
}

static gboolean
check_plan_options (const ReplayNfsOptions *opts, GError **error)
{
  if (opts->timing != REPLAY_TIMING_RECORDED && opts->timing != REPLAY_TIMING_AFAP)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "NFS replay timing is recorded or afap (closed timing needs a per-client "
                   "order the server does not keep)");
      return FALSE;
    }
  if (!(opts->speed > 0))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "speed must be positive");
      return FALSE;
    }
  return TRUE;
}

ReplayNfsPlan *
replay_nfs_plan_build (const GArray *records, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (ReplayNfsPlan) plan = g_new0 (ReplayNfsPlan, 1);
  PlanMaps m;
  gint64 first_ns = records->len > 0 ? g_array_index (records, TraceNfsRecord, 0).time_ns : 0;

  if (!check_plan_options (opts, error))
    return NULL;
  plan->timing = opts->timing;
  plan->speed = opts->speed;
  plan->allow_write = opts->allow_write;
  plan->files = g_array_new (FALSE, FALSE, sizeof (ReplayNfsFile));
  plan->ops = g_array_new (FALSE, FALSE, sizeof (ReplayNfsOp));
  plan->skipped_ops = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  plan->records = records->len;
  m.dirs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  m.file_index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  m.object_ops = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  plan_files (plan, &m, records);
  for (guint i = 0; i < records->len; i++)
    plan_op (plan, &m, &g_array_index (records, TraceNfsRecord, i), first_ns);
  g_hash_table_unref (m.dirs);
  g_hash_table_unref (m.file_index);
  g_hash_table_unref (m.object_ops);
  for (guint i = 0; i < plan->files->len; i++)
    plan->file_bytes += g_array_index (plan->files, ReplayNfsFile, i).size_bytes;
  if (plan->ops->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "no replayable NFS operation in %" G_GUINT64_FORMAT " records%s",
                   plan->records,
                   plan->skipped_writes > 0 ? " (writes need --allow-write)" : "");
      return NULL;
    }
  return g_steal_pointer (&plan);
}

ReplayNfsPlan *
replay_nfs_plan_load (const char *capture_path, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (TraceNfsReader) reader = NULL;
  g_autoptr (GArray) records = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
  TraceNfsRecord rec;
  GError *local = NULL;
  ReplayNfsPlan *plan;

  reader = trace_nfs_reader_open (capture_path, error);
  if (reader == NULL)
    return NULL;
  while (trace_nfs_reader_next (reader, &rec, &local))
    g_array_append_val (records, rec);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  plan = replay_nfs_plan_build (records, opts, error);
  if (plan == NULL)
    g_prefix_error (error, "%s: ", capture_path);
  return plan;
}

void
replay_nfs_plan_free (ReplayNfsPlan *plan)
{
  if (plan == NULL)
    return;
  g_clear_pointer (&plan->files, g_array_unref);
  g_clear_pointer (&plan->ops, g_array_unref);
  g_clear_pointer (&plan->skipped_ops, g_hash_table_unref);
  g_free (plan);
}

static void
print_skipped (const ReplayNfsPlan *plan, FILE *out)
{
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (plan->skipped_ops),
                                        (GCompareFunc) strcmp);

  if (plan->skipped_writes > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " modifying operations (no --allow-write)\n",
             plan->skipped_writes);
  if (plan->skipped_no_file > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " operations without a file handle\n",
             plan->skipped_no_file);
  for (GList *l = keys; l; l = l->next)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " %s\n",
             *(guint64 *) g_hash_table_lookup (plan->skipped_ops, l->data), (char *) l->data);
}

void
replay_nfs_plan_print (const ReplayNfsPlan *plan, FILE *out)
{
  fprintf (out, "NFS replay plan: %" G_GUINT64_FORMAT " records, %u operations, timing %s, speed %g\n",
           plan->records, plan->ops->len, replay_timing_name (plan->timing), plan->speed);
  fprintf (out, "  files: %u, %" G_GUINT64_FORMAT " bytes in " REPLAY_NFS_SUBDIR "/\n",
           plan->files->len, plan->file_bytes);
  for (guint i = 0; i < plan->files->len; i++)
    {
      const ReplayNfsFile *f = &g_array_index (plan->files, ReplayNfsFile, i);
      fprintf (out, "    %s  %12" G_GUINT64_FORMAT " bytes%s%s\n", f->name, f->size_bytes,
               f->read ? "  read (filled)" : "", f->written ? "  written" : "");
    }
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    if (plan->n_by_kind[k] > 0)
      fprintf (out, "  %-9s %10" G_GUINT64_FORMAT "\n", kind_names[k], plan->n_by_kind[k]);
  fprintf (out, "  bytes to read: %" G_GUINT64_FORMAT ", to write: %" G_GUINT64_FORMAT "\n",
           plan->bytes_read, plan->bytes_written);
  fprintf (out, "  span: %.6f s\n", plan->span_ns / 1e9);
  print_skipped (plan, out);
}

/* ---- the target directory and its files --------------------------------- */

char *
replay_nfs_check_dir (const char *target_dir, GError **error)
{
  char *real;
  struct stat st;

  if (target_dir == NULL || *target_dir == '\0')
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "an NFS replay needs --target-dir DIR");
      return NULL;
    }
  if (stat (target_dir, &st) != 0 || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: not an existing directory",
                   target_dir);
      return NULL;
    }
  real = realpath (target_dir, NULL);
  if (real == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: %s", target_dir,
                   g_strerror (errno));
      return NULL;
    }
  if (strcmp (real, "/") == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "%s: refusing the root directory; give a directory of the file system to "
                   "replay on", target_dir);
      free (real);
      return NULL;
    }
  {
    char *copy = g_strdup (real);
    free (real);
    return copy;
  }
}

/* The replay subdirectory, made if missing, never through a symbolic link. */
static int
open_replay_dir (const char *dir, GError **error)
{
  int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd;

  if (dfd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: %s", dir, g_strerror (errno));
      return -1;
    }
  if (mkdirat (dfd, REPLAY_NFS_SUBDIR, 0755) != 0 && errno != EEXIST)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s/" REPLAY_NFS_SUBDIR ": %s", dir,
                   g_strerror (errno));
      close (dfd);
      return -1;
    }
  fd = openat (dfd, REPLAY_NFS_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                 "%s/" REPLAY_NFS_SUBDIR ": %s (a symbolic link is refused)", dir,
                 g_strerror (errno));
  close (dfd);
  return fd;
}

/* The byte at file offset @pos of the fill pattern: reads and the tests
 * can tell it from zeros, and it varies with the position. */
static inline guint8
pattern_byte (guint64 pos)
{
  return (guint8) (0xa5 ^ (pos * 131) ^ (pos >> 12));
}

static gboolean
fill_file (int fd, const ReplayNfsFile *f, GError **error)
{
  g_autofree guint8 *buf = g_malloc (REPLAY_NFS_FILL_CHUNK);

  for (guint64 pos = 0; pos < f->size_bytes; )
    {
      gsize n = (gsize) MIN ((guint64) REPLAY_NFS_FILL_CHUNK, f->size_bytes - pos);
      ssize_t w;

      for (gsize i = 0; i < n; i++)
        buf[i] = pattern_byte (pos + i);
      w = pwrite (fd, buf, n, (off_t) pos);
      if (w <= 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", f->name,
                       w < 0 ? g_strerror (errno) : "short write");
          return FALSE;
        }
      pos += (guint64) w;
    }
  return TRUE;
}

/* Recreate one file: truncated to its size; a file that is read gets real
 * blocks (a pattern), so that reads reach the device instead of the holes
 * a sparse file would answer from nothing.  Its pages are then dropped so
 * that the replay starts with a cold cache, as a server after a restart. */
static int
make_file (int dirfd, const ReplayNfsFile *f, gboolean allow_write, GError **error)
{
  int fd = openat (dirfd, f->name, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", f->name, g_strerror (errno));
      return -1;
    }
  if (ftruncate (fd, (off_t) f->size_bytes) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: ftruncate: %s", f->name,
                   g_strerror (errno));
      close (fd);
      return -1;
    }
  if (f->read && !fill_file (fd, f, error))
    {
      close (fd);
      return -1;
    }
  fdatasync (fd);
  posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
  if (!allow_write)
    {
      /* Reopen read-only: the replay itself cannot modify the file. */
      int ro = openat (dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      if (ro < 0)
        g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", f->name, g_strerror (errno));
      return ro;
    }
  return fd;
}

/* Raise the open-file limit to cover one descriptor per file. */
static gboolean
ensure_fd_limit (guint n_files, GError **error)
{
  struct rlimit rl;
  rlim_t need = (rlim_t) n_files + 64;

  if (getrlimit (RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
    return TRUE;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%u files need more open files than RLIMIT_NOFILE allows (%lu)", n_files,
                   (unsigned long) rl.rlim_max);
      return FALSE;
    }
  rl.rlim_cur = need;
  return setrlimit (RLIMIT_NOFILE, &rl) == 0 || (g_set_error (error, REPLAY_ERROR,
                    REPLAY_ERROR_FAILED, "setrlimit: %s", g_strerror (errno)), FALSE);
}

/* ---- the worker pool ------------------------------------------------------ */

typedef struct {
  const ReplayNfsOptions *opts;
  const ReplayNfsPlan *plan;
  GArray  *results;
  int      dirfd;
  int     *fds;             /* per file */
  ReplayStartGate gate;
  gint     next;            /* atomic: the queue head */
  gint     abort;           /* atomic */
  gint     done;            /* atomic */
  gint     issued;          /* atomic */
  gint     created_seq;     /* atomic: names of fresh files */
  GMutex   created_lock;    /* created: names of CREATEd files not yet removed */
  GPtrArray *created;
  guint32  max_count;
  gboolean yield_in_spin;
  gint    *completed;       /* per op, atomic: 1 once complete */
  GMutex   done_lock;       /* with done_cond: waiting for a dependency */
  GCond    done_cond;
} NfsRun;

/* Wait until op @after completed; FALSE on stop. */
static gboolean
nfs_wait_dependency (NfsRun *run, gint32 after)
{
  if (after < 0 || g_atomic_int_get (&run->completed[after]))
    return TRUE;
  g_mutex_lock (&run->done_lock);
  while (!g_atomic_int_get (&run->completed[after]) && !g_atomic_int_get (&run->abort)
         && (run->opts->stop == NULL || !*run->opts->stop))
    g_cond_wait_until (&run->done_cond, &run->done_lock,
                       g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND);
  g_mutex_unlock (&run->done_lock);
  return g_atomic_int_get (&run->completed[after]);
}

static void
nfs_mark_complete (NfsRun *run, guint i)
{
  g_mutex_lock (&run->done_lock);
  g_atomic_int_set (&run->completed[i], 1);
  g_cond_broadcast (&run->done_cond);
  g_mutex_unlock (&run->done_lock);
}

typedef struct {
  NfsRun *run;
  guint   index;
} NfsWorker;

static gboolean
nfs_stopped (NfsRun *run)
{
  return g_atomic_int_get (&run->abort) || (run->opts->stop != NULL && *run->opts->stop);
}

/* Sleep to spin_ns before @target_ns, then spin (as replay_wait_until_ns,
 * which needs a block replay's ReplayRun). */
static gboolean
nfs_wait_until (NfsRun *run, gint64 target_ns)
{
  for (;;)
    {
      gint64 now = replay_now_ns ();
      gint64 wake;
      struct timespec ts;

      if (nfs_stopped (run))
        return FALSE;
      if (target_ns - now <= run->opts->spin_ns)
        break;
      wake = MIN (target_ns - run->opts->spin_ns, now + REPLAY_NFS_MAX_SLEEP_NS);
      ts.tv_sec = wake / 1000000000;
      ts.tv_nsec = wake % 1000000000;
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
  while (replay_now_ns () < target_ns)
    if (run->yield_in_spin)
      sched_yield ();
  return TRUE;
}

static gint32
do_readdir (NfsRun *run)
{
  int fd = openat (run->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;

  if (fd < 0)
    return -errno;
  d = fdopendir (fd);
  if (d == NULL)
    {
      gint32 e = -errno;
      close (fd);
      return e;
    }
  errno = 0;
  while (readdir (d) != NULL)
    ;
  {
    gint32 e = -errno;
    closedir (d);
    return e;
  }
}

static gint32
do_create (NfsRun *run)
{
  char name[48];
  int fd;

  g_snprintf (name, sizeof name, REPLAY_NFS_CREATED_PREFIX "%d",
              g_atomic_int_add (&run->created_seq, 1));
  fd = openat (run->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  close (fd);
  g_mutex_lock (&run->created_lock);
  g_ptr_array_add (run->created, g_strdup (name));
  g_mutex_unlock (&run->created_lock);
  return 0;
}

static gint32
do_remove (NfsRun *run)
{
  char *name = NULL;
  gint32 e = 0;

  g_mutex_lock (&run->created_lock);
  if (run->created->len > 0)
    name = g_ptr_array_steal_index (run->created, run->created->len - 1);
  g_mutex_unlock (&run->created_lock);
  if (name == NULL)
    return -ENOENT;
  if (unlinkat (run->dirfd, name, 0) != 0)
    e = -errno;
  g_free (name);
  return e;
}

static gint32
do_stat (NfsRun *run, const ReplayNfsOp *op)
{
  struct stat st;
  const char *name = op->file == REPLAY_NFS_NO_FILE
                       ? "." : g_array_index (run->plan->files, ReplayNfsFile, op->file).name;

  return fstatat (run->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static gint32
do_op (NfsRun *run, const ReplayNfsOp *op, guint8 *read_buf, const guint8 *write_buf)
{
  int fd = op->file == REPLAY_NFS_NO_FILE ? -1 : run->fds[op->file];
  ssize_t n;

  switch (op->kind)
    {
    case REPLAY_NFS_READ:
      n = pread (fd, read_buf, op->count, (off_t) op->offset);
      /* A read at or past the end is short on the server too: only an
       * error counts. */
      return n < 0 ? -errno : 0;
    case REPLAY_NFS_WRITE:
      n = pwrite (fd, write_buf, op->count, (off_t) op->offset);
      return n < 0 ? -errno : (n == (ssize_t) op->count ? 0 : -EIO);
    case REPLAY_NFS_COMMIT:
      return fdatasync (fd) == 0 ? 0 : -errno;
    case REPLAY_NFS_TRUNCATE:
      return ftruncate (fd, (off_t) op->size_bytes) == 0 ? 0 : -errno;
    case REPLAY_NFS_CREATE:
      return do_create (run);
    case REPLAY_NFS_REMOVE:
      return do_remove (run);
    case REPLAY_NFS_STAT:
      return do_stat (run, op);
    case REPLAY_NFS_READDIR:
      return do_readdir (run);
    default:
      return -EINVAL;
    }
}

static gpointer
nfs_worker_main (gpointer data)
{
  NfsWorker *w = data;
  NfsRun *run = w->run;
  g_autofree guint8 *read_buf = g_malloc (MAX (run->max_count, 1));
  g_autofree guint8 *write_buf = g_malloc (MAX (run->max_count, 1));
  gint64 t0;
  char comm[16];

  for (guint32 i = 0; i < run->max_count; i++)
    write_buf[i] = pattern_byte (i);
  g_mutex_lock (&run->gate.lock);
  while (!run->gate.go)
    g_cond_wait (&run->gate.cond, &run->gate.lock);
  t0 = run->gate.t0_ns;
  g_mutex_unlock (&run->gate.lock);
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  g_snprintf (comm, sizeof comm, "nfsreplay%u", w->index);
  prctl (PR_SET_NAME, comm, 0, 0, 0);

  for (;;)
    {
      /* Free: take the next operation of the one queue, as nfsd does. */
      guint i = (guint) g_atomic_int_add (&run->next, 1);
      const ReplayNfsOp *op;
      ReplayNfsOpResult *r;
      gint64 intended;

      if (i >= run->plan->ops->len || nfs_stopped (run))
        break;
      op = &g_array_index (run->plan->ops, ReplayNfsOp, i);
      r = &g_array_index (run->results, ReplayNfsOpResult, i);
      /* afap: now, but never before the common t0 (the lead). */
      intended = run->plan->timing == REPLAY_TIMING_AFAP ? MAX (replay_now_ns (), t0)
                                                         : t0 + op->sched_ns;
      if (!nfs_wait_until (run, intended))
        break;
      /* The client waited for this one's reply before calling. */
      {
        gint64 before = replay_now_ns ();
        if (!nfs_wait_dependency (run, op->after))
          break;
        r->dep_wait_ns = replay_now_ns () - before;
      }
      r->take_seq = i;
      r->worker = w->index;
      r->intended_ns = intended - t0;
      r->issue_ns = replay_now_ns () - t0;
      r->error = do_op (run, op, read_buf, write_buf);
      r->complete_ns = replay_now_ns () - t0;
      nfs_mark_complete (run, i);
      g_atomic_int_inc (&run->issued);
      g_atomic_int_inc (&run->done);
    }
  return NULL;
}

static gboolean
nfs_threads_run (NfsRun *run, guint n, GError **error)
{
  g_autofree NfsWorker *workers = g_new0 (NfsWorker, n);
  g_autofree GThread **threads = g_new0 (GThread *, n);
  guint started = 0;
  gboolean ok = TRUE;

  g_mutex_init (&run->gate.lock);
  g_cond_init (&run->gate.cond);
  for (; started < n; started++)
    {
      char name[16];
      workers[started] = (NfsWorker) { run, started };
      g_snprintf (name, sizeof name, "nfsreplay%u", started);
      threads[started] = g_thread_try_new (name, nfs_worker_main, &workers[started], error);
      if (threads[started] == NULL)
        {
          g_atomic_int_set (&run->abort, 1);
          ok = FALSE;
          break;
        }
    }
  /* t0 once every worker exists, so the lead need not cover their creation. */
  g_mutex_lock (&run->gate.lock);
  run->gate.t0_ns = replay_now_ns () + run->opts->lead_ns;
  run->gate.go = TRUE;
  g_cond_broadcast (&run->gate.cond);
  g_mutex_unlock (&run->gate.lock);
  for (guint i = 0; i < started; i++)
    g_thread_join (threads[i]);
  g_mutex_clear (&run->gate.lock);
  g_cond_clear (&run->gate.cond);
  return ok;
}

/* ---- summary -------------------------------------------------------------- */

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

static void
summarise_kind (ReplayNfsResult *res, ReplayNfsKind kind)
{
  const ReplayNfsPlan *plan = res->plan;
  ReplayNfsKindSummary *s = &res->kinds[kind];
  g_autoptr (GArray) lat = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) traced = g_array_new (FALSE, FALSE, sizeof (gint64));
  double sum = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      gint64 l;

      if (op->kind != kind || r->issue_ns < 0)
        continue;
      l = r->complete_ns - r->issue_ns;
      g_array_append_val (lat, l);
      sum += (double) l;
      s->ops++;
      s->errors += r->error != 0;
      if (op->traced_latency_ns >= 0)
        g_array_append_val (traced, op->traced_latency_ns);
    }
  g_array_sort (lat, compare_i64);
  g_array_sort (traced, compare_i64);
  s->latency_mean_ns = s->ops > 0 ? sum / (double) s->ops : 0;
  s->latency_p50_ns = replay_percentile_ns ((gint64 *) lat->data, lat->len, 50);
  s->latency_p99_ns = replay_percentile_ns ((gint64 *) lat->data, lat->len, 99);
  s->latency_max_ns = lat->len > 0 ? g_array_index (lat, gint64, lat->len - 1) : 0;
  s->traced_latency_p50_ns = traced->len > 0
                               ? replay_percentile_ns ((gint64 *) traced->data, traced->len, 50)
                               : -1;
}

static void
summarise (ReplayNfsResult *res)
{
  const ReplayNfsPlan *plan = res->plan;
  g_autoptr (GArray) err = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 first = G_MAXINT64, last = G_MININT64;
  double sum = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      gint64 e;

      if (r->issue_ns < 0)
        continue;
      e = r->issue_ns - r->intended_ns;
      g_array_append_val (err, e);
      sum += (double) e;
      res->ops++;
      res->errors += r->error != 0;
      res->dep_waits += r->dep_wait_ns > 1000;
      if (op->kind == REPLAY_NFS_READ || op->kind == REPLAY_NFS_WRITE)
        res->bytes += op->count;
      first = MIN (first, r->issue_ns);
      last = MAX (last, r->complete_ns);
    }
  g_array_sort (err, compare_i64);
  res->issue_error_p50_ns = replay_percentile_ns ((gint64 *) err->data, err->len, 50);
  res->issue_error_p99_ns = replay_percentile_ns ((gint64 *) err->data, err->len, 99);
  res->issue_error_max_ns = err->len > 0 ? g_array_index (err, gint64, err->len - 1) : 0;
  res->issue_error_mean_ns = err->len > 0 ? sum / (double) err->len : 0;
  res->elapsed_ns = res->ops > 0 ? last - first : 0;
  res->achieved_iops = res->elapsed_ns > 0 ? (double) res->ops * 1e9 / (double) res->elapsed_ns : 0;
  res->intended_iops = plan->timing == REPLAY_TIMING_RECORDED && plan->span_ns > 0
                         ? (double) plan->ops->len * 1e9 / (double) plan->span_ns : 0;
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    summarise_kind (res, (ReplayNfsKind) k);
}

/* ---- running --------------------------------------------------------------- */

static void
close_files (int *fds, guint n)
{
  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* Recreate every file of the plan; fds[] -1 where not opened. */
static gboolean
make_files (int dirfd, const ReplayNfsPlan *plan, int *fds, GError **error)
{
  for (guint i = 0; i < plan->files->len; i++)
    fds[i] = -1;
  if (!ensure_fd_limit (plan->files->len, error))
    return FALSE;
  for (guint i = 0; i < plan->files->len; i++)
    {
      fds[i] = make_file (dirfd, &g_array_index (plan->files, ReplayNfsFile, i),
                          plan->allow_write, error);
      if (fds[i] < 0)
        return FALSE;
    }
  return TRUE;
}

static guint32
plan_max_count (const ReplayNfsPlan *plan)
{
  guint32 m = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    m = MAX (m, g_array_index (plan->ops, ReplayNfsOp, i).count);
  return m;
}

static gboolean
run_pool (ReplayNfsResult *res, const ReplayNfsOptions *opts, int dirfd, int *fds,
          GError **error)
{
  NfsRun run = {
    .opts = opts, .plan = res->plan, .results = res->results, .dirfd = dirfd, .fds = fds,
    .created = g_ptr_array_new_with_free_func (g_free),
    .max_count = plan_max_count (res->plan),
    .yield_in_spin = res->threads > g_get_num_processors (),
    .completed = g_new0 (gint, MAX (res->plan->ops->len, 1)),
  };
  gboolean ok;

  g_mutex_init (&run.created_lock);
  g_mutex_init (&run.done_lock);
  g_cond_init (&run.done_cond);
  ok = nfs_threads_run (&run, res->threads, error);
  g_mutex_clear (&run.created_lock);
  g_mutex_clear (&run.done_lock);
  g_cond_clear (&run.done_cond);
  g_free (run.completed);
  g_ptr_array_unref (run.created);
  res->issued = (guint64) g_atomic_int_get (&run.issued);
  res->interrupted = opts->stop != NULL && *opts->stop;
  return ok;
}

ReplayNfsResult *
replay_nfs_run_plan (ReplayNfsPlan *plan_in, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (ReplayNfsPlan) plan = plan_in;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autofree char *dir = replay_nfs_check_dir (opts->target_dir, error);
  g_autofree int *fds = NULL;
  int dirfd;
  gboolean ok;

  if (dir == NULL)
    return NULL;
  res = g_new0 (ReplayNfsResult, 1);
  res->plan = g_steal_pointer (&plan);
  res->replay_dir = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  res->threads = opts->threads > 0 ? opts->threads : REPLAY_NFS_DEFAULT_THREADS;
  res->dry_run = opts->dry_run;
  res->results = g_array_new (FALSE, TRUE, sizeof (ReplayNfsOpResult));
  if (opts->dry_run)
    return g_steal_pointer (&res);
  g_array_set_size (res->results, res->plan->ops->len);
  for (guint i = 0; i < res->results->len; i++)
    g_array_index (res->results, ReplayNfsOpResult, i).issue_ns = -1;

  dirfd = open_replay_dir (dir, error);
  if (dirfd < 0)
    return NULL;
  fds = g_new (int, MAX (res->plan->files->len, 1));
  ok = make_files (dirfd, res->plan, fds, error)
       && run_pool (res, opts, dirfd, fds, error);
  close_files (fds, res->plan->files->len);
  close (dirfd);
  if (!ok)
    return NULL;
  summarise (res);
  return g_steal_pointer (&res);
}

ReplayNfsResult *
replay_nfs_run (const char *capture_path, const ReplayNfsOptions *opts, GError **error)
{
  g_autofree char *dir = replay_nfs_check_dir (opts->target_dir, error);
  ReplayNfsPlan *plan;

  /* Check the directory before decoding a capture that may be large. */
  if (dir == NULL)
    return NULL;
  plan = replay_nfs_plan_load (capture_path, opts, error);
  return plan ? replay_nfs_run_plan (plan, opts, error) : NULL;
}

void
replay_nfs_result_free (ReplayNfsResult *result)
{
  if (result == NULL)
    return;
  replay_nfs_plan_free (result->plan);
  g_free (result->replay_dir);
  if (result->results)
    g_array_unref (result->results);
  g_free (result);
}

/* ---- outputs ------------------------------------------------------------- */

void
replay_nfs_result_print (const ReplayNfsResult *res, FILE *out)
{
  fprintf (out, "NFS replay on %s: %u threads, timing %s, speed %g%s\n", res->replay_dir,
           res->threads, replay_timing_name (res->plan->timing), res->plan->speed,
           res->interrupted ? " (interrupted: partial results)" : "");
  fprintf (out, "  operations  %" G_GUINT64_FORMAT " of %u, errors %" G_GUINT64_FORMAT
           ", %" G_GUINT64_FORMAT " bytes read/written\n",
           res->ops, res->plan->ops->len, res->errors, res->bytes);
  fprintf (out, "  elapsed     %.6f s\n", res->elapsed_ns / 1e9);
  fprintf (out, "  ops/s       achieved %.1f, intended %.1f\n", res->achieved_iops,
           res->intended_iops);
  fprintf (out, "  issue error p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us\n",
           res->issue_error_p50_ns / 1e3, res->issue_error_p99_ns / 1e3,
           res->issue_error_max_ns / 1e3, res->issue_error_mean_ns / 1e3);
  fprintf (out, "  dependency waits %" G_GUINT64_FORMAT " (an earlier operation on the file not "
           "yet complete)\n", res->dep_waits);
  fprintf (out, "  %-9s %8s %7s %10s %10s %10s %12s\n", "op", "count", "errors", "p50 us",
           "p99 us", "max us", "traced p50 us");
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    {
      const ReplayNfsKindSummary *s = &res->kinds[k];
      if (s->ops == 0)
        continue;
      fprintf (out, "  %-9s %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %10.1f %10.1f %10.1f %12.1f\n",
               kind_names[k], s->ops, s->errors, s->latency_p50_ns / 1e3, s->latency_p99_ns / 1e3,
               s->latency_max_ns / 1e3, s->traced_latency_p50_ns / 1e3);
    }
  print_skipped (res->plan, out);
}

void
replay_nfs_result_write_csv (const ReplayNfsResult *res, FILE *out)
{
  fputs ("index,op,kind,file,offset,count,intended_ns,issue_ns,complete_ns,latency_ns,"
         "traced_latency_ns,error,worker\n", out);
  for (guint i = 0; i < res->plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      const char *file = op->file == REPLAY_NFS_NO_FILE
                           ? "." : g_array_index (res->plan->files, ReplayNfsFile, op->file).name;

      if (r->issue_ns < 0)
        continue;
      fprintf (out, "%u,%s,%s,%s,%" G_GUINT64_FORMAT ",%u,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
               ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%d,%u\n",
               i, op->op, kind_names[op->kind], file, op->offset, op->count, r->intended_ns,
               r->issue_ns, r->complete_ns, r->complete_ns - r->issue_ns, op->traced_latency_ns,
               r->error, r->worker);
    }
}

static void
add_int (JsonBuilder *b, const char *key, gint64 value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, value);
}

static void
add_double (JsonBuilder *b, const char *key, double value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_double_value (b, value);
}

static void
add_kinds (JsonBuilder *b, const ReplayNfsResult *res)
{
  json_builder_set_member_name (b, "operations");
  json_builder_begin_object (b);
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    {
      const ReplayNfsKindSummary *s = &res->kinds[k];
      if (s->ops == 0)
        continue;
      json_builder_set_member_name (b, kind_names[k]);
      json_builder_begin_object (b);
      add_int (b, "ops", (gint64) s->ops);
      add_int (b, "errors", (gint64) s->errors);
      add_double (b, "latency_mean_ns", s->latency_mean_ns);
      add_int (b, "latency_p50_ns", s->latency_p50_ns);
      add_int (b, "latency_p99_ns", s->latency_p99_ns);
      add_int (b, "latency_max_ns", s->latency_max_ns);
      add_int (b, "traced_latency_p50_ns", s->traced_latency_p50_ns);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

gboolean
replay_nfs_result_write_json (const ReplayNfsResult *res, const char *path, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "target_dir");
  json_builder_add_string_value (b, res->replay_dir);
  json_builder_set_member_name (b, "timing");
  json_builder_add_string_value (b, replay_timing_name (res->plan->timing));
  add_double (b, "speed", res->plan->speed);
  add_int (b, "threads", res->threads);
  json_builder_set_member_name (b, "allow_write");
  json_builder_add_boolean_value (b, res->plan->allow_write);
  json_builder_set_member_name (b, "interrupted");
  json_builder_add_boolean_value (b, res->interrupted);
  add_int (b, "files", res->plan->files->len);
  add_int (b, "file_bytes", (gint64) res->plan->file_bytes);
  add_int (b, "planned_ops", res->plan->ops->len);
  add_int (b, "skipped_writes", (gint64) res->plan->skipped_writes);
  add_int (b, "ops", (gint64) res->ops);
  add_int (b, "bytes", (gint64) res->bytes);
  add_int (b, "errors", (gint64) res->errors);
  add_int (b, "elapsed_ns", res->elapsed_ns);
  add_double (b, "intended_iops", res->intended_iops);
  add_double (b, "achieved_iops", res->achieved_iops);
  add_double (b, "issue_error_mean_ns", res->issue_error_mean_ns);
  add_int (b, "issue_error_p50_ns", res->issue_error_p50_ns);
  add_int (b, "issue_error_p99_ns", res->issue_error_p99_ns);
  add_int (b, "issue_error_max_ns", res->issue_error_max_ns);
  add_int (b, "dependency_waits", (gint64) res->dep_waits);
  add_kinds (b, res);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  if (!json_generator_to_file (gen, path, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  return TRUE;
}
