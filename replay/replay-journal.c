/* replay-journal.c — the recovery journal of replay and capture (see
 * replay-journal.h): durable writes, a defensive reader, owner liveness
 * by pid and start time, and the recovery a new run does first.
 */
#include "replay/replay-journal.h"
#include "replay/replay-emulate.h"
#include "replay/replay-setup.h"
#include "replay/replay-safety.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define JOURNAL_VERSION 1
#define JOURNAL_GROUP "journal"
#define JOURNAL_SUFFIX ".journal"
/* tracefs's magic (include/uapi/linux/magic.h TRACEFS_MAGIC): a tracefs
 * mounted somewhere else than /sys/kernel/tracing (capture --tracefs DIR). */
#define JOURNAL_TRACEFS_MAGIC 0x74726163
/* A journal of a few hundred IRQs is tens of KiB; anything far larger is
 * not one of ours. */
#define JOURNAL_MAX_BYTES (4u << 20)
#define JOURNAL_MAX_ENTRIES 100000

struct _ReplayJournal {
  char      *file;
  char      *sys_root;      /* where its block paths are checked ("/sys") */
  char      *kind;
  gint64     pid;
  guint64    start_time;
  GPtrArray *scopes;        /* char * */
  GPtrArray *devices;       /* char *, "MAJ:MIN PATH", NULL-terminated */
  GArray    *entries;       /* ReplayJournalEntry */
  /* kind "emulate" only: */
  char      *emulate_dir;   /* TMP/iosim-emulate-XXXXXX */
  char      *emulate_loop;  /* /dev/loopN, NULL before one is chosen */
  gboolean   emulate_temp_backing;
};

/* The tracefs files capture saves (replay-capture.c), and the per-disk
 * blk trace attributes (kernel/trace/blktrace.c sysfs_blk_trace_attr). */
static const char *const tracefs_files[] = {
  "tracing_on", "buffer_size_kb", "trace_clock", "current_tracer", NULL,
};
static const char *const disk_trace_files[] = {
  "enable", "act_mask", "start_lba", "end_lba", "pid", NULL,
};
/* The writeback limits `iosim emulate --dirty-bytes` lowers
 * (Documentation/admin-guide/sysctl/vm.rst). */
static const char *const dirty_sysctl_files[] = {
  "dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio", NULL,
};
static const char *const throttle_files[] = {
  "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device", "io.max", NULL,
};

static gboolean in_list (const char *name, const char *const *list);

const char *
replay_journal_default_dir (void)
{
  const char *dir = g_getenv (REPLAY_JOURNAL_DIR_ENV);

  return dir && dir[0] ? dir : REPLAY_JOURNAL_DEFAULT_DIR;
}

static void
entry_clear (gpointer data)
{
  ReplayJournalEntry *e = data;

  g_free (e->path);
  g_free (e->old_value);
}

static ReplayJournal *
journal_alloc (void)
{
  ReplayJournal *j = g_new0 (ReplayJournal, 1);

  j->scopes = g_ptr_array_new_with_free_func (g_free);
  j->devices = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (j->devices, NULL);
  j->entries = g_array_new (FALSE, TRUE, sizeof (ReplayJournalEntry));
  g_array_set_clear_func (j->entries, entry_clear);
  return j;
}

void
replay_journal_free (ReplayJournal *journal)
{
  if (journal == NULL)
    return;
  g_free (journal->file);
  g_free (journal->sys_root);
  g_free (journal->kind);
  g_ptr_array_unref (journal->scopes);
  g_ptr_array_unref (journal->devices);
  g_array_unref (journal->entries);
  g_free (journal->emulate_dir);
  g_free (journal->emulate_loop);
  g_free (journal);
}

static const char *
root_or (const char *root, const char *fallback)
{
  return root ? root : fallback;
}

guint64
replay_journal_start_time (pid_t pid, const ReplayJournalRoots *roots)
{
  g_autofree char *pid_text = g_strdup_printf ("%d", (int) pid);
  g_autofree char *path = g_build_filename (root_or (roots ? roots->proc_root : NULL, "/proc"),
                                            pid_text, "stat", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) fields = NULL;
  const char *after;
  guint64 start = 0;

  if (pid <= 0 || !g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  /* "PID (COMM) STATE ...": COMM may hold spaces and ')', so fields count
   * from the last ')'; starttime is field 22 (proc(5)), the 20th after it. */
  after = strrchr (text, ')');
  if (after == NULL)
    return 0;
  fields = g_strsplit_set (after + 1, " \n", -1);
  for (guint i = 0, n = 0; fields[i]; i++)
    if (fields[i][0] != '\0' && ++n == 20)
      {
        if (!g_ascii_string_to_unsigned (fields[i], 10, 0, G_MAXUINT64, &start, NULL))
          return 0;
        return start;
      }
  return 0;
}

/* @dir exists (created 0700 if not), is a directory of ours, and no one
 * else may write it: otherwise another user could plant a journal. */
static gboolean
check_dir (const char *dir, gboolean create, GError **error)
{
  struct stat st;

  if (create && g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot create the journal directory %s: %s",
                   dir, g_strerror (errno));
      return FALSE;
    }
  if (lstat (dir, &st) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "journal directory %s: %s", dir,
                   g_strerror (errno));
      return FALSE;
    }
  /* Read: ours or root's (root's journals are trusted as far as their
   * paths check out); written: ours only. */
  if (!S_ISDIR (st.st_mode) || (st.st_uid != geteuid () && (create || st.st_uid != 0))
      || (st.st_mode & (S_IWGRP | S_IWOTH)))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "journal directory %s is not a directory owned by uid %u and writable only "
                   "by it; refusing to use it", dir, (unsigned) geteuid ());
      return FALSE;
    }
  return TRUE;
}

static char *
journal_text (const ReplayJournal *j)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();

  g_key_file_set_integer (kf, JOURNAL_GROUP, "version", JOURNAL_VERSION);
  g_key_file_set_string (kf, JOURNAL_GROUP, "kind", j->kind);
  g_key_file_set_int64 (kf, JOURNAL_GROUP, "pid", j->pid);
  g_key_file_set_uint64 (kf, JOURNAL_GROUP, "start_time", j->start_time);
  g_key_file_set_string_list (kf, JOURNAL_GROUP, "scopes", (const char *const *) j->scopes->pdata,
                              j->scopes->len);
  g_key_file_set_string_list (kf, JOURNAL_GROUP, "devices",
                              (const char *const *) j->devices->pdata, j->devices->len - 1);
  g_key_file_set_integer (kf, JOURNAL_GROUP, "entries", (gint) j->entries->len);
  if (j->emulate_dir != NULL)
    {
      g_key_file_set_string (kf, JOURNAL_GROUP, "emulate_dir", j->emulate_dir);
      g_key_file_set_string (kf, JOURNAL_GROUP, "emulate_loop",
                             j->emulate_loop ? j->emulate_loop : "");
      g_key_file_set_boolean (kf, JOURNAL_GROUP, "emulate_temp_backing", j->emulate_temp_backing);
    }
  for (guint i = 0; i < j->entries->len; i++)
    {
      const ReplayJournalEntry *e = &g_array_index (j->entries, ReplayJournalEntry, i);
      g_autofree char *group = g_strdup_printf ("entry %u", i);

      g_key_file_set_string (kf, group, "path", e->path);
      g_key_file_set_string (kf, group, "old", e->old_value);
      g_key_file_set_boolean (kf, group, "compare", (e->flags & REPLAY_JOURNAL_COMPARE) != 0);
      g_key_file_set_boolean (kf, group, "may_vanish", (e->flags & REPLAY_JOURNAL_MAY_VANISH) != 0);
      g_key_file_set_boolean (kf, group, "cpuset", (e->flags & REPLAY_JOURNAL_CPUSET) != 0);
    }
  return g_key_file_to_data (kf, NULL, NULL);
}

/* A new file, fsynced, renamed over the old one: a reader sees the old
 * journal or the new one, never half of one. */
static gboolean
journal_write (const ReplayJournal *j, GError **error)
{
  g_autofree char *text = journal_text (j);
  g_autofree char *dir = g_path_get_dirname (j->file);
  GError *local = NULL;
  int dfd;

  if (!g_file_set_contents_full (j->file, text, -1,
                                 G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
                                 0600, &local))
    {
      g_propagate_prefixed_error (error, local, "writing the journal: ");
      return FALSE;
    }
  /* The rename itself made durable. */
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    {
      fsync (dfd);
      close (dfd);
    }
  return TRUE;
}

/* A journal of this process in @dir, not written yet. */
static ReplayJournal *
journal_prepare (const char *dir, const char *kind, const char *const *scopes,
                 const char *const *devices, GError **error)
{
  g_autoptr (ReplayJournal) j = journal_alloc ();
  g_autofree char *name = NULL;

  if (!check_dir (dir, TRUE, error))
    return NULL;
  j->kind = g_strdup (kind);
  j->sys_root = g_strdup ("/sys");
  j->pid = getpid ();
  j->start_time = replay_journal_start_time (getpid (), NULL);
  for (guint i = 0; scopes && scopes[i]; i++)
    g_ptr_array_add (j->scopes, g_strdup (scopes[i]));
  for (guint i = 0; devices && devices[i]; i++)
    g_ptr_array_insert (j->devices, j->devices->len - 1, g_strdup (devices[i]));
  name = g_strdup_printf ("%s-%" G_GINT64_FORMAT "-%" G_GUINT64_FORMAT JOURNAL_SUFFIX, kind,
                          j->pid, j->start_time);
  j->file = g_build_filename (dir, name, NULL);
  if (g_file_test (j->file, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "journal %s exists already (this process has one open)", j->file);
      return NULL;
    }
  return g_steal_pointer (&j);
}

ReplayJournal *
replay_journal_create (const char *dir, const char *kind, const char *const *scopes,
                       const char *const *devices, GError **error)
{
  g_autoptr (ReplayJournal) j = NULL;

  g_return_val_if_fail (dir != NULL && kind != NULL, NULL);
  j = journal_prepare (dir, kind, scopes, devices, error);
  if (j == NULL || !journal_write (j, error))
    return NULL;
  return g_steal_pointer (&j);
}

ReplayJournal *
replay_journal_create_emulate (const char *dir, const char *emulate_dir, gboolean temp_backing,
                               GError **error)
{
  const char *const scopes[] = { REPLAY_JOURNAL_SCOPE_EMULATE, NULL };
  g_autoptr (ReplayJournal) j = NULL;

  g_return_val_if_fail (dir != NULL && emulate_dir != NULL, NULL);
  if (!replay_journal_emulate_dir_allowed (emulate_dir))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%s is not a directory an emulator journal may name", emulate_dir);
      return NULL;
    }
  j = journal_prepare (dir, REPLAY_JOURNAL_KIND_EMULATE, scopes, NULL, error);
  if (j == NULL)
    return NULL;
  j->emulate_dir = g_strdup (emulate_dir);
  j->emulate_temp_backing = temp_backing;
  if (!journal_write (j, error))
    return NULL;
  return g_steal_pointer (&j);
}

gboolean
replay_journal_set_emulate_loop (ReplayJournal *journal, const char *loop_path, GError **error)
{
  char *old = journal->emulate_loop;

  g_return_val_if_fail (journal->emulate_dir != NULL, FALSE);
  if (!replay_journal_loop_path_allowed (loop_path))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "%s is not a loop device", loop_path);
      return FALSE;
    }
  journal->emulate_loop = g_strdup (loop_path);
  if (journal_write (journal, error))
    {
      g_free (old);
      return TRUE;
    }
  g_free (journal->emulate_loop);
  journal->emulate_loop = old;
  g_prefix_error (error, "not attaching %s: ", loop_path);
  return FALSE;
}

const char *
replay_journal_emulate_dir (const ReplayJournal *journal)
{
  return journal->emulate_dir;
}

const char *
replay_journal_emulate_loop (const ReplayJournal *journal)
{
  return journal->emulate_loop;
}

gboolean
replay_journal_emulate_temp_backing (const ReplayJournal *journal)
{
  return journal->emulate_temp_backing;
}

gboolean
replay_journal_emulate_dir_allowed (const char *dir)
{
  const char *const tmps[] = { "/tmp", "/var/tmp", g_get_tmp_dir () };
  const char *prefix = REPLAY_EMULATE_DIR_PREFIX;
  g_autofree char *parent = NULL;
  g_autofree char *base = NULL;
  gboolean parent_ok = FALSE;

  if (dir == NULL || !g_path_is_absolute (dir) || strstr (dir, "//") || strstr (dir, "/.")
      || g_str_has_suffix (dir, "/"))
    return FALSE;
  parent = g_path_get_dirname (dir);
  base = g_path_get_basename (dir);
  for (guint i = 0; i < G_N_ELEMENTS (tmps); i++)
    parent_ok |= tmps[i] != NULL && strcmp (parent, tmps[i]) == 0;
  if (!parent_ok || !g_str_has_prefix (base, prefix)
      || strlen (base) != strlen (prefix) + 6)
    return FALSE;
  for (const char *c = base + strlen (prefix); *c; c++)
    if (!g_ascii_isalnum (*c))
      return FALSE;
  return TRUE;
}

gboolean
replay_journal_loop_path_allowed (const char *path)
{
  guint64 n;

  return path != NULL && g_str_has_prefix (path, "/dev/loop") && path[9] != '\0'
         && g_ascii_string_to_unsigned (path + 9, 10, 0, 1u << 20, &n, NULL);
}

gboolean
replay_journal_sysctl_path_allowed (const char *path, const ReplayJournalRoots *roots)
{
  g_autofree char *vm = g_build_filename (root_or (roots ? roots->proc_root : NULL, "/proc"),
                                          "sys", "vm", NULL);
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;

  if (path == NULL || !g_path_is_absolute (path) || strstr (path, "//") != NULL)
    return FALSE;
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  return strcmp (dir, vm) == 0 && in_list (base, dirty_sysctl_files);
}

gboolean
replay_journal_restore (ReplayJournal *journal, gboolean dry_run, FILE *log, GError **error)
{
  if (journal->emulate_dir != NULL)
    return replay_emulate_cleanup_journal (journal, dry_run, log, error);
  return replay_setup_restore_journal (journal, dry_run, log, error);
}

gboolean
replay_journal_add (ReplayJournal *journal, const char *path, const char *old_value, guint flags,
                    GError **error)
{
  ReplayJournalEntry e = { g_strdup (path), g_strdup (old_value), flags };

  g_array_append_val (journal->entries, e);
  if (journal_write (journal, error))
    return TRUE;
  g_array_set_size (journal->entries, journal->entries->len - 1);
  g_prefix_error (error, "not changing %s: ", path);
  return FALSE;
}

char *
replay_journal_restore_hint (const ReplayJournal *journal)
{
  g_autofree char *dir = g_path_get_dirname (journal->file);
  g_autofree char *quoted = g_shell_quote (dir);

  if (strcmp (dir, REPLAY_JOURNAL_DEFAULT_DIR) == 0)
    return g_strdup ("iosim restore");
  return g_strdup_printf ("iosim restore --dir %s", quoted);
}

gboolean
replay_journal_remove (ReplayJournal *journal, GError **error)
{
  if (unlink (journal->file) != 0 && errno != ENOENT)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot remove the journal %s: %s",
                   journal->file, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

const char *
replay_journal_file (const ReplayJournal *journal)
{
  return journal->file;
}

const char *
replay_journal_kind (const ReplayJournal *journal)
{
  return journal->kind;
}

pid_t
replay_journal_pid (const ReplayJournal *journal)
{
  return (pid_t) journal->pid;
}

const char *const *
replay_journal_devices (const ReplayJournal *journal)
{
  return (const char *const *) journal->devices->pdata;
}

guint
replay_journal_n_entries (const ReplayJournal *journal)
{
  return journal->entries->len;
}

const ReplayJournalEntry *
replay_journal_entry (const ReplayJournal *journal, guint i)
{
  g_return_val_if_fail (i < journal->entries->len, NULL);
  return &g_array_index (journal->entries, ReplayJournalEntry, i);
}

gboolean
replay_journal_owner_alive (const ReplayJournal *journal, const ReplayJournalRoots *roots)
{
  guint64 start = replay_journal_start_time ((pid_t) journal->pid, roots);

  /* Written without /proc (no start time): a running pid is taken for
   * the owner, the safe side. */
  if (journal->start_time == 0)
    return kill ((pid_t) journal->pid, 0) == 0 || errno == EPERM;
  return start != 0 && start == journal->start_time;
}

gboolean
replay_journal_is_own (const ReplayJournal *journal, const ReplayJournalRoots *roots)
{
  return journal->pid == getpid () && replay_journal_owner_alive (journal, roots);
}

gboolean
replay_journal_claims_any (const ReplayJournal *journal, const char *const *scopes)
{
  for (guint i = 0; scopes && scopes[i]; i++)
    for (guint k = 0; k < journal->scopes->len; k++)
      if (strcmp (scopes[i], g_ptr_array_index (journal->scopes, k)) == 0)
        return TRUE;
  return FALSE;
}

/* ---- which paths a journal may name ---- */

/* A plain file name: no separator, not "." or "..", printable. */
static gboolean
plain_name (const char *name, gsize len)
{
  if (len == 0 || (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (name[i] == '/' || !g_ascii_isgraph (name[i]))
      return FALSE;
  return TRUE;
}

/* @path is @root "/" and then names separated by single slashes, each
 * plain; the part after @root is returned split (NULL otherwise). */
static GStrv
below (const char *path, const char *root)
{
  gsize n = strlen (root);
  GStrv parts;

  while (n > 1 && root[n - 1] == '/')
    n--;
  if (strncmp (path, root, n) != 0 || path[n] != '/')
    return NULL;
  parts = g_strsplit (path + n + 1, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (!plain_name (parts[i], strlen (parts[i])))
      {
        g_strfreev (parts);
        return NULL;
      }
  return parts;
}

static gboolean
in_list (const char *name, const char *const *list)
{
  return name != NULL && g_strv_contains (list, name);
}

/* /sys/block/DISK/queue/ATTR, .../queue/iosched/TUNABLE,
 * /sys/block/DISK/trace/ATTR. */
static gboolean
block_path_allowed (const char *path, const char *sys_root)
{
  g_autofree char *block = g_build_filename (sys_root, "block", NULL);
  g_auto (GStrv) p = below (path, block);
  guint n = p ? g_strv_length (p) : 0;

  if (n == 3 && strcmp (p[1], "queue") == 0)
    return TRUE;
  if (n == 4 && strcmp (p[1], "queue") == 0 && strcmp (p[2], "iosched") == 0)
    return TRUE;
  return n == 3 && strcmp (p[1], "trace") == 0 && in_list (p[2], disk_trace_files);
}

static gboolean
tracefs_path_allowed (const char *path, const char *sys_root, gboolean real)
{
  const char *const places[] = { "kernel/tracing", "kernel/debug/tracing" };
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  struct statfs fs;

  if (!in_list (base, tracefs_files))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (places); i++)
    {
      g_autofree char *place = g_build_filename (sys_root, places[i], NULL);
      if (strcmp (dir, place) == 0)
        return TRUE;
    }
  /* capture --tracefs DIR: a tracefs mount elsewhere, checked as one. */
  return real && g_path_is_absolute (dir) && strstr (path, "/../") == NULL
         && statfs (dir, &fs) == 0 && fs.f_type == JOURNAL_TRACEFS_MAGIC;
}

/* Throttle files, cgroup.procs, and iosim's own shield cpusets. */
static gboolean
cgroup_path_allowed (const char *path, const char *cgroup_root, gboolean cpuset_dir)
{
  g_auto (GStrv) p = below (path, cgroup_root);
  guint n = p ? g_strv_length (p) : 0;
  guint64 pid;

  if (n == 0)
    return FALSE;
  if (cpuset_dir)
    return g_str_has_prefix (p[n - 1], "iosim-shield-")
           && g_ascii_string_to_unsigned (p[n - 1] + strlen ("iosim-shield-"), 10, 1, G_MAXINT,
                                          &pid, NULL);
  return in_list (p[n - 1], throttle_files) || strcmp (p[n - 1], "cgroup.procs") == 0;
}

static gboolean
irq_path_allowed (const char *path, const char *irq_dir)
{
  g_auto (GStrv) p = below (path, irq_dir);
  guint64 irq;

  return p && g_strv_length (p) == 2 && strcmp (p[1], "smp_affinity") == 0
         && g_ascii_string_to_unsigned (p[0], 10, 0, G_MAXUINT32, &irq, NULL);
}

gboolean
replay_journal_path_allowed (const char *path, const ReplayJournalRoots *roots,
                             gboolean cpuset_dir)
{
  gboolean real = roots == NULL || roots->sys_root == NULL;
  const char *sys = root_or (roots ? roots->sys_root : NULL, "/sys");
  const char *cg = root_or (roots ? roots->cgroup_root : NULL, "/sys/fs/cgroup");
  const char *irq = root_or (roots ? roots->irq_dir : NULL, "/proc/irq");
  const char *wq = root_or (roots ? roots->workqueue_mask : NULL,
                            "/sys/devices/virtual/workqueue/cpumask");

  if (path == NULL || !g_path_is_absolute (path))
    return FALSE;
  if (cpuset_dir)
    return cgroup_path_allowed (path, cg, TRUE);
  return block_path_allowed (path, sys) || tracefs_path_allowed (path, sys, real)
         || cgroup_path_allowed (path, cg, FALSE) || irq_path_allowed (path, irq)
         || strcmp (path, wq) == 0;
}

gboolean
replay_journal_same_device (const ReplayJournal *journal, const char *path, char **why)
{
  g_autofree char *block = g_build_filename (journal->sys_root, "block", NULL);
  g_auto (GStrv) p = below (path, block);
  g_autofree char *dev_file = NULL, *devno = NULL;

  if (p == NULL || p[0] == NULL)
    return TRUE;    /* not a disk's file */
  dev_file = g_build_filename (block, p[0], "dev", NULL);
  if (!g_file_get_contents (dev_file, &devno, NULL, NULL))
    {
      *why = g_strdup_printf ("%s is gone", p[0]);
      return FALSE;
    }
  g_strstrip (devno);
  for (guint i = 0; i + 1 < journal->devices->len; i++)
    {
      const char *d = g_ptr_array_index (journal->devices, i);
      gsize n = strcspn (d, " ");
      if (strlen (devno) == n && strncmp (d, devno, n) == 0)
        return TRUE;
    }
  *why = g_strdup_printf ("%s is now device %s, not one the journal names", p[0], devno);
  return FALSE;
}

/* ---- reading ---- */

static gboolean
load_fail (GError **error, const char *file, const char *what)
{
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "journal %s: %s; not trusted", file, what);
  return FALSE;
}

/* A value iosim wrote: one line of printable text. */
static gboolean
value_ok (const char *value)
{
  for (const char *c = value; *c; c++)
    if (*c == '\n' || *c == '\r' || (guchar) *c < 0x20)
      return FALSE;
  return strlen (value) < 4096;
}

/* An emulator journal's entries are the originals of its dirty limits:
 * one of four sysctl paths, a decimal value, no flags.  NULL when fine. */
static char *
emulate_entry_problem (const char *group, const ReplayJournalEntry *e, gboolean flagged,
                       const ReplayJournalRoots *roots)
{
  guint64 v;

  if (!replay_journal_sysctl_path_allowed (e->path, roots))
    return g_strdup_printf ("[%s]: path '%s' is not a dirty limit an emulator sets", group,
                            e->path);
  if (!g_ascii_string_to_unsigned (e->old_value, 10, 0, G_MAXUINT64, &v, NULL))
    return g_strdup_printf ("[%s]: value '%s' of %s is not a decimal number", group,
                            e->old_value, e->path);
  if (flagged)
    return g_strdup_printf ("[%s]: %s carries a flag no dirty limit has", group, e->path);
  return NULL;
}

static gboolean
load_entry (ReplayJournal *j, GKeyFile *kf, guint i, const ReplayJournalRoots *roots,
            GError **error)
{
  g_autofree char *group = g_strdup_printf ("entry %u", i);
  g_autofree char *what = NULL;
  GError *local = NULL;
  ReplayJournalEntry e = { 0 };
  gboolean compare, vanish, cpuset;

  e.path = g_key_file_get_string (kf, group, "path", &local);
  if (e.path != NULL)
    e.old_value = g_key_file_get_string (kf, group, "old", &local);
  compare = local ? FALSE : g_key_file_get_boolean (kf, group, "compare", &local);
  vanish = local ? FALSE : g_key_file_get_boolean (kf, group, "may_vanish", &local);
  cpuset = local ? FALSE : g_key_file_get_boolean (kf, group, "cpuset", &local);
  if (local != NULL)
    what = g_strdup_printf ("[%s]: %s", group, local->message);
  else if (j->emulate_dir != NULL)
    what = emulate_entry_problem (group, &e, compare || vanish || cpuset, roots);
  else if (!replay_journal_path_allowed (e.path, roots, cpuset))
    what = g_strdup_printf ("[%s]: path '%s' is not one iosim writes", group, e.path);
  else if (!value_ok (e.old_value))
    what = g_strdup_printf ("[%s]: value of %s is not one line of text", group, e.path);
  else if (cpuset && !replay_journal_path_allowed (e.old_value, roots, FALSE))
    what = g_strdup_printf ("[%s]: cpuset %s would move its tasks to '%s', not a cgroup.procs "
                            "file iosim uses", group, e.path, e.old_value);
  g_clear_error (&local);
  if (what != NULL)
    {
      g_free (e.path);
      g_free (e.old_value);
      return load_fail (error, j->file, what);
    }
  e.flags = (compare ? REPLAY_JOURNAL_COMPARE : 0) | (vanish ? REPLAY_JOURNAL_MAY_VANISH : 0)
            | (cpuset ? REPLAY_JOURNAL_CPUSET : 0);
  g_array_append_val (j->entries, e);
  return TRUE;
}

/* The emulator's keys; checked by load_header. */
static void
load_emulate (ReplayJournal *j, GKeyFile *kf, GError **local)
{
  j->emulate_dir = g_key_file_get_string (kf, JOURNAL_GROUP, "emulate_dir", local);
  if (*local == NULL)
    j->emulate_loop = g_key_file_get_string (kf, JOURNAL_GROUP, "emulate_loop", local);
  if (*local == NULL)
    j->emulate_temp_backing = g_key_file_get_boolean (kf, JOURNAL_GROUP, "emulate_temp_backing",
                                                      local);
  if (j->emulate_loop != NULL && j->emulate_loop[0] == '\0')
    g_clear_pointer (&j->emulate_loop, g_free);
}

static gboolean
load_header (ReplayJournal *j, GKeyFile *kf, gint *n_entries, GError **error)
{
  GError *local = NULL;
  g_auto (GStrv) scopes = NULL, devices = NULL;
  gint version = g_key_file_get_integer (kf, JOURNAL_GROUP, "version", &local);

  if (local == NULL && version != JOURNAL_VERSION)
    return load_fail (error, j->file, "unknown version");
  if (local == NULL)
    j->kind = g_key_file_get_string (kf, JOURNAL_GROUP, "kind", &local);
  if (local == NULL)
    j->pid = g_key_file_get_int64 (kf, JOURNAL_GROUP, "pid", &local);
  if (local == NULL)
    j->start_time = g_key_file_get_uint64 (kf, JOURNAL_GROUP, "start_time", &local);
  if (local == NULL)
    scopes = g_key_file_get_string_list (kf, JOURNAL_GROUP, "scopes", NULL, &local);
  if (local == NULL)
    devices = g_key_file_get_string_list (kf, JOURNAL_GROUP, "devices", NULL, &local);
  if (local == NULL)
    *n_entries = g_key_file_get_integer (kf, JOURNAL_GROUP, "entries", &local);
  if (local == NULL && j->kind != NULL && strcmp (j->kind, REPLAY_JOURNAL_KIND_EMULATE) == 0)
    load_emulate (j, kf, &local);
  if (local != NULL)
    {
      g_autofree char *what = g_strdup_printf ("[journal]: %s", local->message);
      g_error_free (local);
      return load_fail (error, j->file, what);
    }
  if (strcmp (j->kind, "replay") != 0 && strcmp (j->kind, "capture") != 0
      && strcmp (j->kind, REPLAY_JOURNAL_KIND_EMULATE) != 0)
    return load_fail (error, j->file, "kind is neither replay, capture nor emulate");
  if (j->emulate_dir != NULL && !replay_journal_emulate_dir_allowed (j->emulate_dir))
    return load_fail (error, j->file, "emulate_dir is not TMP/" REPLAY_EMULATE_DIR_PREFIX "XXXXXX");
  if (j->emulate_loop != NULL && !replay_journal_loop_path_allowed (j->emulate_loop))
    return load_fail (error, j->file, "emulate_loop is not /dev/loopN");
  /* Two pairs of dirty limits at most. */
  if (j->emulate_dir != NULL && *n_entries > 4)
    return load_fail (error, j->file, "an emulator journal has at most 4 entries");
  if (j->pid <= 0 || j->pid > G_MAXINT)
    return load_fail (error, j->file, "pid out of range");
  if (*n_entries < 0 || *n_entries > JOURNAL_MAX_ENTRIES)
    return load_fail (error, j->file, "entry count out of range");
  for (guint i = 0; scopes[i]; i++)
    g_ptr_array_add (j->scopes, g_strdup (scopes[i]));
  for (guint i = 0; devices[i]; i++)
    if (value_ok (devices[i]))
      g_ptr_array_insert (j->devices, j->devices->len - 1, g_strdup (devices[i]));
  return TRUE;
}

ReplayJournal *
replay_journal_load (const char *file, const ReplayJournalRoots *roots, GError **error)
{
  g_autoptr (ReplayJournal) j = journal_alloc ();
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = NULL;
  GError *local = NULL;
  gsize len = 0;
  gint n = 0;

  j->file = g_strdup (file);
  j->sys_root = g_strdup (root_or (roots ? roots->sys_root : NULL, "/sys"));
  if (!g_file_get_contents (file, &text, &len, &local))
    {
      g_propagate_prefixed_error (error, local, "journal: ");
      return NULL;
    }
  if (len > JOURNAL_MAX_BYTES || memchr (text, '\0', len) != NULL)
    {
      load_fail (error, file, "too large or not text");
      return NULL;
    }
  if (!g_key_file_load_from_data (kf, text, len, G_KEY_FILE_NONE, &local))
    {
      g_autofree char *what = g_strdup_printf ("not a key file (%s)", local->message);
      g_error_free (local);
      load_fail (error, file, what);
      return NULL;
    }
  if (!load_header (j, kf, &n, error))
    return NULL;
  for (gint i = 0; i < n; i++)
    if (!load_entry (j, kf, (guint) i, roots, error))
      return NULL;
  return g_steal_pointer (&j);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

GPtrArray *
replay_journal_list (const char *dir, GError **error)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = NULL;
  GError *local = NULL;
  const char *name;

  if (!g_file_test (dir, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&files);
  if (!check_dir (dir, FALSE, error))
    return NULL;
  if ((d = g_dir_open (dir, 0, &local)) == NULL)
    {
      g_propagate_prefixed_error (error, local, "journal directory: ");
      return NULL;
    }
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, JOURNAL_SUFFIX) && name[0] != '.')
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (files, compare_names);
  return g_steal_pointer (&files);
}

gboolean
replay_journal_recover (const char *dir, const char *const *scopes,
                        const ReplayJournalRoots *roots, const char *who, FILE *log,
                        GError **error)
{
  g_autoptr (GPtrArray) files = replay_journal_list (dir, error);

  if (files == NULL)
    return FALSE;
  for (guint i = 0; i < files->len; i++)
    {
      const char *file = g_ptr_array_index (files, i);
      g_autoptr (GError) local = NULL;
      g_autoptr (ReplayJournal) j = replay_journal_load (file, roots, &local);

      if (j == NULL)
        {
          if (log)
            fprintf (log, "%s: warning: %s (left in place; see iosim restore --help)\n", who,
                     local->message);
          continue;
        }
      if (!replay_journal_claims_any (j, scopes) || replay_journal_is_own (j, roots))
        continue;
      /* Each emulator has its own mount, loop device and files. */
      if (j->emulate_dir != NULL && replay_journal_owner_alive (j, roots))
        continue;
      if (replay_journal_owner_alive (j, roots))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                       "another iosim %s (pid %" G_GINT64_FORMAT ") is using %s (journal %s); "
                       "wait for it to end or stop it", j->kind, j->pid,
                       j->devices->len > 1 ? (const char *) g_ptr_array_index (j->devices, 0)
                                           : "the same settings", file);
          return FALSE;
        }
      if (log && j->emulate_dir != NULL)
        fprintf (log, "%s: journal %s: iosim emulate pid %" G_GINT64_FORMAT " ended without "
                 "cleaning up %s; cleaning up first\n", who, file, j->pid, j->emulate_dir);
      else if (log)
        fprintf (log, "%s: journal %s: iosim %s pid %" G_GINT64_FORMAT " ended without restoring "
                 "%u settings; restoring them first\n", who, file, j->kind, j->pid,
                 j->entries->len);
      if (!replay_journal_restore (j, FALSE, log, error))
        {
          g_prefix_error (error, "restoring the settings left by pid %" G_GINT64_FORMAT
                          " (journal %s kept): ", j->pid, file);
          return FALSE;
        }
    }
  return TRUE;
}
