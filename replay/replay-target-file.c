/* replay-target-file.c — a regular file as a replay target, for users
 * without a spare block device (replay-safety.h describes the rules).
 * Follows Linux 6.x: statx(2) STATX_DIOALIGN gives a file's direct-I/O
 * offset alignment (6.1), open(2) with O_DIRECT fails with EINVAL where
 * the file system cannot do direct I/O (ramfs; tmpfs before 6.6), and a
 * loop device names its backing file in /sys/block/loopN/loop/backing_file.
 */
#include "replay/replay-safety.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Offsets and lengths are aligned to this where statx cannot tell: a page
 * satisfies every file system's direct-I/O alignment on 4 KiB-block
 * devices and smaller. */
#define FILE_DEFAULT_ALIGN_BYTES 4096

gboolean
replay_target_path_is_file (const char *path)
{
  struct stat st;

  if (stat (path, &st) != 0)
    return errno == ENOENT;
  return S_ISREG (st.st_mode);
}

/* The file system type of @path's directory (the file may not exist). */
static void
probe_fs (const char *path, ReplayTarget *out)
{
  g_autofree char *dir = g_path_get_dirname (path);
  struct statfs sf;
  const struct { long magic; const char *name; } known[] = {
    { EXT4_SUPER_MAGIC, "ext4" }, { XFS_SUPER_MAGIC, "xfs" }, { BTRFS_SUPER_MAGIC, "btrfs" },
    { TMPFS_MAGIC, "tmpfs" }, { RAMFS_MAGIC, "ramfs" }, { NFS_SUPER_MAGIC, "nfs" },
    { FUSE_SUPER_MAGIC, "fuse" }, { OVERLAYFS_SUPER_MAGIC, "overlayfs" },
  };

  if (statfs (path, &sf) != 0 && statfs (dir, &sf) != 0)
    {
      out->fs_type = g_strdup ("unknown");
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    if ((long) sf.f_type == known[i].magic)
      {
        out->fs_type = g_strdup (known[i].name);
        out->fs_in_memory = known[i].magic == TMPFS_MAGIC || known[i].magic == RAMFS_MAGIC;
        return;
      }
  out->fs_type = g_strdup_printf ("0x%lx", (unsigned long) sf.f_type);
}

/* The direct-I/O offset alignment of the open file, or the default. */
static guint32
dio_align_bytes (const char *path)
{
  struct statx stx;

  if (statx (AT_FDCWD, path, 0, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)
      && stx.stx_dio_offset_align >= 512 && stx.stx_dio_offset_align <= (1u << 20)
      && (stx.stx_dio_offset_align & (stx.stx_dio_offset_align - 1)) == 0)
    return stx.stx_dio_offset_align;
  return FILE_DEFAULT_ALIGN_BYTES;
}

gboolean
replay_target_probe_file (const char *path, guint64 want_size_bytes, ReplayTarget *out,
                          GError **error)
{
  struct stat st;

  g_return_val_if_fail (path != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->path = g_strdup (path);
  out->name = g_path_get_basename (path);
  out->disk_name = g_strdup (out->name);
  out->is_file = TRUE;
  out->logical_block_bytes = FILE_DEFAULT_ALIGN_BYTES;
  if (stat (path, &st) == 0)
    {
      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                       "%s: neither a block device nor a regular file", path);
          return FALSE;
        }
      out->file_exists = TRUE;
      out->file_size_bytes = (guint64) st.st_size;
      out->major = major (st.st_dev);
      out->minor = minor (st.st_dev);
      out->file_ino = st.st_ino;
      out->logical_block_bytes = dio_align_bytes (path);
    }
  else if (errno != ENOENT || want_size_bytes == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: %s%s", path, g_strerror (errno),
                   errno == ENOENT ? " (--target-size SIZE creates a file of that size)" : "");
      return FALSE;
    }
  probe_fs (path, out);
  out->size_bytes = want_size_bytes > 0 ? want_size_bytes : out->file_size_bytes;
  if (out->size_bytes == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s is an empty file: give --target-size SIZE to extend it (sparse) to the "
                   "size the trace needs", path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
same_file (const char *path, const ReplayTarget *target)
{
  struct stat st;

  return stat (path, &st) == 0 && major (st.st_dev) == target->major
         && minor (st.st_dev) == target->minor && st.st_ino == target->file_ino;
}

/* A loop device's backing_file holds a path, " (deleted)" appended once
 * the file is unlinked (then it cannot be ours). */
static gboolean
check_loop_backing (const ReplayTarget *target, const char *sysfs_root, GError **error)
{
  g_autofree char *block_dir = g_build_filename (sysfs_root, "block", NULL);
  g_autoptr (GDir) dir = g_dir_open (block_dir, 0, NULL);
  const char *entry;

  while (dir && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (block_dir, entry, "loop", "backing_file", NULL);
      g_autofree char *backing = NULL;

      if (!g_file_get_contents (file, &backing, NULL, NULL))
        continue;
      g_strchomp (backing);
      if (same_file (backing, target))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                       "%s backs the loop device /dev/%s (%s): replaying on it would go "
                       "around that device and whatever holds it; refusing to touch it "
                       "(replay on /dev/%s instead)", target->path, entry, file, entry);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
swap_is_target (const char *swap_path, gconstpointer data)
{
  return swap_path[0] == '/' && same_file (swap_path, data);
}

static gboolean
check_swap_file (const ReplayTarget *target, GError **error)
{
  g_autofree char *swap = replay_swaps_find (swap_is_target, target);

  if (swap == NULL)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
               "%s is in use as swap (/proc/swaps); refusing to touch it", target->path);
  return FALSE;
}

gboolean
replay_target_check_file_unused (const ReplayTarget *target, const char *sysfs_root,
                                 GError **error)
{
  g_return_val_if_fail (target != NULL && target->is_file, FALSE);

  /* A file created by the replay cannot be in use yet. */
  if (!target->file_exists)
    return TRUE;
  return check_loop_backing (target, sysfs_root ? sysfs_root : "/sys", error)
         && check_swap_file (target, error);
}

/* Create the file or extend it to target->size_bytes; never shrinks. */
static gboolean
size_file (ReplayTarget *target, GError **error)
{
  struct stat st;
  int fd = open (target->path, O_RDWR | O_CLOEXEC | (target->file_exists ? 0 : O_CREAT | O_EXCL),
                 0644);
  gboolean ok;

  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: cannot %s it to %" G_GUINT64_FORMAT
                   " bytes (--target-size): %s", target->path,
                   target->file_exists ? "extend" : "create", target->size_bytes,
                   g_strerror (errno));
      return FALSE;
    }
  ok = fstat (fd, &st) == 0
       && ((guint64) st.st_size >= target->size_bytes
           || ftruncate (fd, (off_t) target->size_bytes) == 0);
  if (!ok)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: cannot extend it to %"
                 G_GUINT64_FORMAT " bytes (--target-size): %s", target->path,
                 target->size_bytes, g_strerror (errno));
  close (fd);
  if (ok && !target->file_exists)
    {
      target->file_exists = TRUE;
      target->major = major (st.st_dev);
      target->minor = minor (st.st_dev);
      target->file_ino = st.st_ino;
    }
  return ok;
}

int
replay_target_open_file (ReplayTarget *target, gboolean writable, GError **error)
{
  int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  int fd;

  g_return_val_if_fail (target != NULL && target->is_file, -1);

  if ((!target->file_exists || target->file_size_bytes < target->size_bytes)
      && !size_file (target, error))
    return -1;
  fd = open (target->path, flags | O_DIRECT);
  if (fd < 0 && errno == EINVAL)
    {
      fd = open (target->path, flags);
      target->buffered_fallback = fd >= 0;
    }
  if (fd < 0)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: cannot open: %s", target->path,
                 g_strerror (errno));
  return fd;
}

void
replay_target_file_warnings (const ReplayTarget *target, GPtrArray *warnings)
{
  if (!target->is_file)
    return;
  if (target->buffered_fallback)
    g_ptr_array_add (warnings, g_strdup_printf (
      "%s: its file system (%s) refused O_DIRECT, so the replay goes through the page "
      "cache: reads of cached data and writes that only dirty pages take memory-copy time, "
      "and the device sees writeback later, so the measured latencies are lower than the "
      "device's and do not show its queueing", target->path, target->fs_type));
  if (target->fs_in_memory)
    g_ptr_array_add (warnings, g_strdup_printf (
      "%s is on %s, in memory: there is no device under it, so the latencies measure "
      "memory copies (and O_DIRECT, where accepted, changes nothing)", target->path,
      target->fs_type));
}
