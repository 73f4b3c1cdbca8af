/* replay-emulate-cleanup.c — undo what an emulator left: its loop device,
 * its FUSE mount, its temporary files (replay-emulate.h).  Used by the
 * emulator's own stop path and, from its journal, by a later emulator or
 * `iosim restore` after a SIGKILL.  Needs no libfuse: a dead emulator's
 * mount is taken away with umount2 (MNT_DETACH), as fusermount3 -u -z does.
 *
 * Every step is checked against the emulator's directory, which the
 * journal reader accepts only as TMP/iosim-emulate-XXXXXX: a loop device
 * is detached only while its backing file is DIR/mnt/disk, only a FUSE
 * mount at DIR/mnt is unmounted, and only DIR/backing and the two
 * directories are deleted, after lstat shows they are ours.
 */
#include "replay/replay-setup-private.h"
#include "replay/replay-emulate.h"
#include "replay/replay-safety.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a LOOP_CLR_FD may take to become a detach: the kernel defers
 * it to the last close (drivers/block/loop.c loop_clr_fd sets
 * LO_FLAGS_AUTOCLEAR when others have the device open, e.g. udev's probe). */
#define CLEANUP_DETACH_WAIT_US (5 * G_USEC_PER_SEC)
#define CLEANUP_POLL_US (20 * 1000)

GStrv
replay_emulate_loops_backed_by (const char *file)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_autoptr (GDir) d = g_dir_open ("/sys/block", 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *attr = NULL, *text = NULL;

      if (!g_str_has_prefix (name, "loop"))
        continue;
      attr = g_build_filename ("/sys/block", name, "loop", "backing_file", NULL);
      if (!g_file_get_contents (attr, &text, NULL, NULL))
        continue;
      g_strchomp (text);
      if (strcmp (text, file) == 0)
        {
          g_autofree char *dev = g_strconcat ("/dev/", name, NULL);
          g_strv_builder_add (b, dev);
        }
    }
  return g_strv_builder_end (b);
}

/* Field 5 of a /proc/self/mountinfo line is the mount point (octal escapes
 * for blanks, which our names never hold); the type follows " - ". */
static gboolean
mountinfo_line_at (const char *line, const char *mount_point, gboolean *is_fuse)
{
  g_auto (GStrv) f = g_strsplit (line, " ", -1);
  const char *sep = strstr (line, " - ");

  if (g_strv_length (f) < 5 || strcmp (f[4], mount_point) != 0)
    return FALSE;
  *is_fuse = sep != NULL && g_str_has_prefix (sep + 3, "fuse");
  return TRUE;
}

static gboolean
mounted_at (const char *mount_point, gboolean *is_fuse)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;

  *is_fuse = FALSE;
  if (!g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (mountinfo_line_at (lines[i], mount_point, is_fuse))
      return TRUE;
  return FALSE;
}

gboolean
replay_emulate_is_mounted (const char *mount_point)
{
  gboolean is_fuse;

  return mounted_at (mount_point, &is_fuse);
}

/* LOOP_CLR_FD, then wait until the kernel really let the file go. */
static gboolean
detach_loop (const char *loop, const char *file, GError **error)
{
  g_autofree char *attr = g_strdup_printf ("/sys/block/%s/loop/backing_file", loop + 5);
  gint64 deadline = g_get_monotonic_time () + CLEANUP_DETACH_WAIT_US;
  int fd = open (loop, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot open %s to detach it: %s", loop,
                   g_strerror (errno));
      return FALSE;
    }
  if (ioctl (fd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO)
    {
      int e = errno;
      close (fd);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "LOOP_CLR_FD on %s: %s", loop,
                   g_strerror (e));
      return FALSE;
    }
  close (fd);
  for (;;)
    {
      g_autofree char *text = NULL;

      if (!g_file_get_contents (attr, &text, NULL, NULL) || strcmp (g_strchomp (text), file) != 0)
        return TRUE;
      if (g_get_monotonic_time () > deadline)
        break;
      g_usleep (CLEANUP_POLL_US);
    }
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO,
               "%s is still attached to %s (open by another process?); it detaches when the "
               "last user closes it", loop, file);
  return FALSE;
}

static gboolean
detach_loops (const char *file, gboolean dry_run, FILE *log, GError **error)
{
  g_auto (GStrv) loops = replay_emulate_loops_backed_by (file);

  for (guint i = 0; loops[i]; i++)
    {
      if (log)
        fprintf (log, "iosim: %s %s (backing file %s)\n", dry_run ? "would detach" : "detaching",
                 loops[i], file);
      if (!dry_run && !detach_loop (loops[i], file, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
unmount_fuse (const char *mount_point, gboolean dry_run, FILE *log, GError **error)
{
  gboolean is_fuse;

  /* A mount may be stacked on another; each round takes the top one. */
  for (guint round = 0; round < 8 && mounted_at (mount_point, &is_fuse); round++)
    {
      if (!is_fuse)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                       "%s has a mount that is not FUSE; not unmounting it", mount_point);
          return FALSE;
        }
      if (log)
        fprintf (log, "iosim: %s %s\n", dry_run ? "would unmount" : "unmounting", mount_point);
      if (dry_run)
        return TRUE;
      /* Lazy: a dead server's mount answers ENOTCONN, and the loop device
       * may still hold the file for a moment. */
      if (umount2 (mount_point, MNT_DETACH) != 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot unmount %s: %s", mount_point,
                       g_strerror (errno));
          return FALSE;
        }
    }
  return TRUE;
}

/* @path, if it exists, is of type @mode_type and ours. */
static gboolean
ours (const char *path, mode_t mode_type, gboolean *exists)
{
  struct stat st;

  *exists = lstat (path, &st) == 0;
  return !*exists || ((st.st_mode & S_IFMT) == mode_type && st.st_uid == geteuid ());
}

static gboolean
remove_files (const char *dir, gboolean temp_backing, gboolean dry_run, FILE *log,
              GError **error)
{
  g_autofree char *mnt = g_build_filename (dir, REPLAY_EMULATE_MOUNT_NAME, NULL);
  g_autofree char *backing = g_build_filename (dir, REPLAY_EMULATE_BACKING_NAME, NULL);
  gboolean exists;

  if (!ours (dir, S_IFDIR, &exists))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "%s is not a directory of uid %u; not deleting anything in it", dir,
                   (unsigned) geteuid ());
      return FALSE;
    }
  if (!exists)
    return TRUE;
  if (log)
    fprintf (log, "iosim: %s %s%s\n", dry_run ? "would remove" : "removing", dir,
             temp_backing ? " and its temporary backing file" : "");
  if (dry_run)
    return TRUE;
  if (temp_backing && ours (backing, S_IFREG, &exists) && exists && unlink (backing) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot delete %s: %s", backing,
                   g_strerror (errno));
      return FALSE;
    }
  if ((ours (mnt, S_IFDIR, &exists) && exists && rmdir (mnt) != 0) || rmdir (dir) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot remove %s: %s", dir,
                   g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

gboolean
replay_emulate_cleanup_dir (const char *emulate_dir, gboolean temp_backing, gboolean dry_run,
                            FILE *log, GError **error)
{
  g_autofree char *mnt = NULL, *file = NULL;

  if (!replay_journal_emulate_dir_allowed (emulate_dir))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "%s is not an emulator's directory (TMP/" REPLAY_EMULATE_DIR_PREFIX "XXXXXX)",
                   emulate_dir);
      return FALSE;
    }
  mnt = g_build_filename (emulate_dir, REPLAY_EMULATE_MOUNT_NAME, NULL);
  file = g_build_filename (mnt, REPLAY_EMULATE_FILE_NAME, NULL);
  /* Loop devices first: once the mount is detached the loop's backing
   * file no longer reads as DIR/mnt/disk and could not be recognised. */
  return detach_loops (file, dry_run, log, error)
         && unmount_fuse (mnt, dry_run, log, error)
         && remove_files (emulate_dir, temp_backing, dry_run, log, error);
}

/* ---- the dirty limits ----
 *
 * mm/page-writeback.c (6.18, checked on this machine): dirty_bytes_handler
 * sets vm_dirty_ratio to 0 when it changes vm_dirty_bytes, and
 * dirty_ratio_handler sets vm_dirty_bytes to 0 when it changes the ratio;
 * dirty_background_bytes_handler and dirty_background_ratio_handler do
 * the same for the background pair.  dirty_bytes has a minimum of 2 pages
 * (dirty_bytes_min = 2 * PAGE_SIZE, extra1 of its ctl_table): writing 0
 * (or 4096) answers EINVAL.  So only one member of a pair is in force, the
 * non-zero one, and a restore writes that one alone: writing the other
 * (0) would be refused, or would zero the one just written. */

typedef struct {
  const char *bytes;       /* file names under PROC/sys/vm */
  const char *ratio;
} DirtyPair;

static const DirtyPair dirty_pairs[] = {
  { "dirty_bytes", "dirty_ratio" },
  { "dirty_background_bytes", "dirty_background_ratio" },
};

static char *
vm_path (const char *proc_root, const char *name)
{
  return g_build_filename (proc_root ? proc_root : "/proc", "sys", "vm", name, NULL);
}

/* @path's value, stripped, in *@out. */
static gboolean
sysctl_read (const char *path, char **out, GError **error)
{
  *out = replay_setup_read_stripped (path, error);
  return *out != NULL;
}

/* Write @value to @path and read it back: a sysctl may refuse a value or
 * clamp it without an error. */
static gboolean
sysctl_write_checked (const char *path, const char *value, GError **error)
{
  g_autofree char *back = NULL;

  if (!replay_setup_write_value (path, value, error))
    return FALSE;
  if (!sysctl_read (path, &back, error))
    return FALSE;
  if (strcmp (back, value) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s reads %s after writing %s", path,
                   back, value);
      return FALSE;
    }
  return TRUE;
}

/* Journal both members of @pair, then write @bytes to its bytes file. */
static gboolean
set_pair (ReplayJournal *journal, const char *proc_root, const DirtyPair *pair, guint64 bytes,
          FILE *log, GError **error)
{
  g_autofree char *bytes_path = vm_path (proc_root, pair->bytes);
  g_autofree char *ratio_path = vm_path (proc_root, pair->ratio);
  g_autofree char *old_bytes = NULL, *old_ratio = NULL;
  g_autofree char *value = g_strdup_printf ("%" G_GUINT64_FORMAT, bytes);

  if (!sysctl_read (bytes_path, &old_bytes, error) || !sysctl_read (ratio_path, &old_ratio, error)
      || !replay_journal_add (journal, bytes_path, old_bytes, 0, error)
      || !replay_journal_add (journal, ratio_path, old_ratio, 0, error))
    return FALSE;
  if (log)
    fprintf (log, "iosim emulate: vm.%s = %s (was %s, %s %s)\n", pair->bytes, value, old_bytes,
             pair->ratio, old_ratio);
  if (!sysctl_write_checked (bytes_path, value, error))
    {
      g_prefix_error (error, "--%s: ", strcmp (pair->bytes, "dirty_bytes") == 0
                                         ? "dirty-bytes" : "dirty-background-bytes");
      return FALSE;
    }
  return TRUE;
}

/* Another running emulator that journaled dirty limits in the same
 * directory: ours would journal its lowered values as the originals, and
 * whichever stopped last would leave the machine with them. */
static gboolean
limits_free (ReplayJournal *journal, const char *proc_root, GError **error)
{
  const ReplayJournalRoots roots = { .proc_root = proc_root };
  g_autofree char *dir = g_path_get_dirname (replay_journal_file (journal));
  g_autoptr (GPtrArray) files = replay_journal_list (dir, error);

  if (files == NULL)
    return FALSE;
  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr (ReplayJournal) other = replay_journal_load (files->pdata[i], &roots, NULL);

      if (other == NULL || replay_journal_emulate_dir (other) == NULL
          || replay_journal_n_entries (other) == 0 || replay_journal_is_own (other, &roots)
          || !replay_journal_owner_alive (other, &roots))
        continue;
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "iosim emulate pid %d holds the dirty limits (journal %s); only one emulator "
                   "may set --dirty-bytes or --dirty-background-bytes at a time",
                   (int) replay_journal_pid (other), replay_journal_file (other));
      return FALSE;
    }
  return TRUE;
}

gboolean
replay_emulate_sysctl_set (ReplayJournal *journal, const char *proc_root, guint64 dirty_bytes,
                           guint64 dirty_background_bytes, FILE *log, GError **error)
{
  const guint64 values[] = { dirty_bytes, dirty_background_bytes };

  if ((dirty_bytes != 0 || dirty_background_bytes != 0) && !limits_free (journal, proc_root, error))
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (dirty_pairs); i++)
    if (values[i] != 0 && !set_pair (journal, proc_root, &dirty_pairs[i], values[i], log, error))
      return FALSE;
  return TRUE;
}

/* The journal's entry for @name (a file of PROC/sys/vm), or NULL. */
static const ReplayJournalEntry *
find_entry (ReplayJournal *journal, const char *name)
{
  for (guint i = 0; i < replay_journal_n_entries (journal); i++)
    {
      const ReplayJournalEntry *e = replay_journal_entry (journal, i);
      g_autofree char *base = g_path_get_basename (e->path);

      if (strcmp (base, name) == 0)
        return e;
    }
  return NULL;
}

static gboolean
restore_pair (ReplayJournal *journal, const DirtyPair *pair, gboolean dry_run, FILE *log,
              GError **error)
{
  const ReplayJournalEntry *bytes = find_entry (journal, pair->bytes);
  const ReplayJournalEntry *ratio = find_entry (journal, pair->ratio);
  const ReplayJournalEntry *in_force;

  if (bytes == NULL && ratio == NULL)
    return TRUE;
  /* The bytes original is in force unless it was 0 (then the ratio was). */
  in_force = bytes != NULL && strcmp (bytes->old_value, "0") != 0 ? bytes : ratio;
  if (in_force == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "journal %s records %s = 0 but not %s: nothing to write back",
                   replay_journal_file (journal), pair->bytes, pair->ratio);
      return FALSE;
    }
  if (log)
    fprintf (log, "iosim: %s %s = %s\n", dry_run ? "would write back" : "writing back",
             in_force->path, in_force->old_value);
  return dry_run || sysctl_write_checked (in_force->path, in_force->old_value, error);
}

gboolean
replay_emulate_sysctl_restore (ReplayJournal *journal, gboolean dry_run, FILE *log,
                               GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (dirty_pairs); i++)
    if (!restore_pair (journal, &dirty_pairs[i], dry_run, log, error))
      return FALSE;
  return TRUE;
}

gboolean
replay_emulate_cleanup_journal (ReplayJournal *journal, gboolean dry_run, FILE *log,
                                GError **error)
{
  const char *dir = replay_journal_emulate_dir (journal);

  g_return_val_if_fail (dir != NULL, FALSE);
  /* The limits first: a machine left with low dirty limits is slow for
   * everyone, whatever else could not be undone. */
  if (!replay_emulate_sysctl_restore (journal, dry_run, log, error))
    return FALSE;
  if (!replay_emulate_cleanup_dir (dir, replay_journal_emulate_temp_backing (journal), dry_run,
                                   log, error))
    return FALSE;
  replay_emulate_route_remove_stale (dry_run, log);
  if (dry_run)
    return TRUE;
  if (!replay_journal_remove (journal, error))
    return FALSE;
  if (log)
    fprintf (log, "iosim: %s cleaned up and removed\n", replay_journal_file (journal));
  return TRUE;
}
