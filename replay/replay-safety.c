/* replay-safety.c — describing a block device from sysfs and refusing
 * devices that are mounted, swap, held by a stacked device, or busy.
 * Follows Linux 6.x: /sys/dev/block/MAJ:MIN links to the device's sysfs
 * directory, partitions carry a "partition" file and sit inside their
 * disk's directory, and O_EXCL on a block device fails with EBUSY while
 * it is mounted or exclusively opened (block/bdev.c, bd_prepare_to_claim).
 */
#include "replay/replay-safety.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid.h>

G_DEFINE_QUARK (replay-error-quark, replay_error)

static char *
read_sysfs_string (const char *dir, const char *file)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

static gboolean
read_sysfs_u64 (const char *dir, const char *file, guint64 *out)
{
  g_autofree char *text = read_sysfs_string (dir, file);

  if (text == NULL)
    return FALSE;
  return g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, out, NULL);
}

gboolean
replay_target_probe (const char *path, ReplayTarget *out, GError **error)
{
  struct stat st;

  g_return_val_if_fail (path != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);

  if (stat (path, &st) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s: %s", path, g_strerror (errno));
      return FALSE;
    }
  if (!S_ISBLK (st.st_mode))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s: not a block device", path);
      return FALSE;
    }
  return replay_target_probe_at ("/sys", path, major (st.st_rdev), minor (st.st_rdev), out, error);
}

gboolean
replay_target_probe_at (const char *sysfs_root, const char *path, guint32 maj, guint32 min,
                        ReplayTarget *out, GError **error)
{
  guint64 size_sectors = 0, lbs = 0;
  g_autofree char *link = NULL;
  g_autofree char *partition_file = NULL;
  g_autofree char *lbs_text = NULL;
  char *resolved;

  g_return_val_if_fail (sysfs_root != NULL && path != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->path = g_strdup (path);
  out->sysfs_root = g_strdup (sysfs_root);
  out->major = maj;
  out->minor = min;

  link = g_strdup_printf ("%s/dev/block/%u:%u", sysfs_root, maj, min);
  resolved = realpath (link, NULL);
  if (resolved == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s: no sysfs entry %s: %s", path, link, g_strerror (errno));
      replay_target_clear (out);
      return FALSE;
    }
  out->sysfs_dir = g_strdup (resolved);
  free (resolved);
  out->name = g_path_get_basename (out->sysfs_dir);

  partition_file = g_build_filename (out->sysfs_dir, "partition", NULL);
  out->is_partition = g_file_test (partition_file, G_FILE_TEST_EXISTS);
  if (out->is_partition)
    {
      g_autofree char *parent = g_path_get_dirname (out->sysfs_dir);
      out->disk_name = g_path_get_basename (parent);
      read_sysfs_u64 (out->sysfs_dir, "start", &out->start_sector);
    }
  else
    out->disk_name = g_strdup (out->name);

  if (!read_sysfs_u64 (out->sysfs_dir, "size", &size_sectors))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s: cannot read %s/size", path, out->sysfs_dir);
      replay_target_clear (out);
      return FALSE;
    }
  /* sysfs "size" is always in 512-byte sectors, whatever the block size. */
  out->size_bytes = size_sectors * 512;

  lbs_text = replay_target_queue_attr (out, "logical_block_size");
  if (lbs_text == NULL || !g_ascii_string_to_unsigned (lbs_text, 10, 512, 1 << 20, &lbs, NULL))
    lbs = 512;
  out->logical_block_bytes = (guint32) lbs;
  return TRUE;
}

void
replay_target_clear (ReplayTarget *target)
{
  if (target == NULL)
    return;
  g_free (target->path);
  g_free (target->name);
  g_free (target->disk_name);
  g_free (target->sysfs_root);
  g_free (target->sysfs_dir);
  g_free (target->fs_type);
  memset (target, 0, sizeof *target);
}

void
replay_target_copy (const ReplayTarget *src, ReplayTarget *dst)
{
  *dst = *src;
  dst->path = g_strdup (src->path);
  dst->name = g_strdup (src->name);
  dst->disk_name = g_strdup (src->disk_name);
  dst->sysfs_root = g_strdup (src->sysfs_root);
  dst->sysfs_dir = g_strdup (src->sysfs_dir);
  dst->fs_type = g_strdup (src->fs_type);
}

char *
replay_target_queue_attr (const ReplayTarget *target, const char *attr)
{
  g_autofree char *dir = g_build_filename (target->sysfs_root, "block", target->disk_name,
                                          "queue", NULL);

  return read_sysfs_string (dir, attr);
}

char *
replay_target_scheduler (const ReplayTarget *target)
{
  g_autofree char *text = replay_target_queue_attr (target, "scheduler");
  const char *open, *close;

  if (text == NULL)
    return NULL;
  open = strchr (text, '[');
  close = open ? strchr (open, ']') : NULL;
  if (open == NULL || close == NULL)
    return g_strdup (text);   /* a single elevator is printed without brackets */
  return g_strndup (open + 1, close - open - 1);
}

static gboolean
devno_listed (guint32 maj, guint32 min, const guint32 *devnos, guint n_devnos)
{
  for (guint i = 0; i < n_devnos; i++)
    if (devnos[2 * i] == maj && devnos[2 * i + 1] == min)
      return TRUE;
  return FALSE;
}

static gboolean
node_is_listed (const char *node, const guint32 *devnos, guint n_devnos)
{
  struct stat st;

  if (!g_str_has_prefix (node, "/") || stat (node, &st) != 0 || !S_ISBLK (st.st_mode))
    return FALSE;
  return devno_listed (major (st.st_rdev), minor (st.st_rdev), devnos, n_devnos);
}

gboolean
replay_mountinfo_find (const char *mountinfo_text, const guint32 *devnos, guint n_devnos,
                       char **out_mount_point, char **out_source)
{
  g_auto (GStrv) lines = g_strsplit (mountinfo_text, "\n", -1);

  for (guint l = 0; lines[l] != NULL; l++)
    {
      /* id parent maj:min root mount-point options [optional...] - fstype source superopts */
      g_auto (GStrv) f = g_strsplit (lines[l], " ", -1);
      guint n = g_strv_length (f), sep = 0;
      guint maj = 0, min = 0;
      const char *source = NULL;

      if (n < 5)
        continue;
      for (guint i = 5; i < n; i++)
        if (strcmp (f[i], "-") == 0)
          {
            sep = i;
            break;
          }
      if (sep != 0 && sep + 2 < n)
        source = f[sep + 2];
      gboolean by_number = sscanf (f[2], "%u:%u", &maj, &min) == 2
                           && devno_listed (maj, min, devnos, n_devnos);
      gboolean by_source = source != NULL && node_is_listed (source, devnos, n_devnos);
      if (!by_number && !by_source)
        continue;
      if (out_mount_point)
        *out_mount_point = g_strcompress (f[4]);
      if (out_source)
        *out_source = g_strdup (source ? source : "?");
      return TRUE;
    }
  return FALSE;
}

/* The target itself, its partitions (a whole disk) or its disk (a
 * partition): any of them mounted makes the target unsafe. */
static GArray *
related_devnos (const ReplayTarget *target, GPtrArray *sysfs_dirs)
{
  GArray *devnos = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autofree char *disk_dir = target->is_partition
    ? g_path_get_dirname (target->sysfs_dir) : g_strdup (target->sysfs_dir);
  g_autoptr (GDir) dir = g_dir_open (disk_dir, 0, NULL);
  const char *entry;

  g_ptr_array_add (sysfs_dirs, g_strdup (disk_dir));
  g_array_append_val (devnos, target->major);
  g_array_append_val (devnos, target->minor);
  {
    g_autofree char *dev = read_sysfs_string (disk_dir, "dev");
    guint32 maj, min;
    if (dev && sscanf (dev, "%u:%u", &maj, &min) == 2)
      {
        g_array_append_val (devnos, maj);
        g_array_append_val (devnos, min);
      }
  }
  while (dir && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *sub = g_build_filename (disk_dir, entry, NULL);
      g_autofree char *pfile = g_build_filename (sub, "partition", NULL);
      g_autofree char *dev = NULL;
      guint32 maj, min;

      if (!g_file_test (pfile, G_FILE_TEST_EXISTS))
        continue;
      dev = read_sysfs_string (sub, "dev");
      if (dev && sscanf (dev, "%u:%u", &maj, &min) == 2)
        {
          g_array_append_val (devnos, maj);
          g_array_append_val (devnos, min);
        }
      g_ptr_array_add (sysfs_dirs, g_steal_pointer (&sub));
    }
  return devnos;
}

char *
replay_swaps_find (ReplaySwapMatch match, gconstpointer data)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/swaps", &text, NULL, NULL))
    return NULL;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  /* The first line is the header: Filename Type Size Used Priority. */
  for (guint l = 1; lines[l] != NULL; l++)
    {
      g_auto (GStrv) f = g_strsplit_set (lines[l], " \t", 2);
      if (f[0] && match (f[0], data))
        return g_strdup (f[0]);
    }
  return NULL;
}

typedef struct {
  const guint32 *devnos;
  guint          n;
} DevnoList;

static gboolean
swap_on_devnos (const char *swap_path, gconstpointer data)
{
  const DevnoList *l = data;
  return node_is_listed (swap_path, l->devnos, l->n);
}

static gboolean
check_swaps (const ReplayTarget *target, const guint32 *devnos, guint n, GError **error)
{
  DevnoList list = { devnos, n };
  g_autofree char *swap = replay_swaps_find (swap_on_devnos, &list);

  if (swap == NULL)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
               "%s is in use as swap (%s); refusing to touch it", target->path, swap);
  return FALSE;
}

static gboolean
check_holders (const ReplayTarget *target, GPtrArray *sysfs_dirs, GError **error)
{
  for (guint i = 0; i < sysfs_dirs->len; i++)
    {
      g_autofree char *holders = g_build_filename (g_ptr_array_index (sysfs_dirs, i), "holders", NULL);
      g_autoptr (GDir) dir = g_dir_open (holders, 0, NULL);
      const char *holder = dir ? g_dir_read_name (dir) : NULL;

      if (holder != NULL)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                       "%s is in use: held by %s (see %s); refusing to touch it",
                       target->path, holder, holders);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
replay_target_check_unused (const ReplayTarget *target, const char *mountinfo_path, GError **error)
{
  g_autoptr (GPtrArray) sysfs_dirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) devnos = related_devnos (target, sysfs_dirs);
  guint n = devnos->len / 2;
  g_autofree char *text = NULL;
  g_autofree char *mount_point = NULL, *source = NULL;
  g_autoptr (GError) local = NULL;

  if (mountinfo_path == NULL)
    mountinfo_path = "/proc/self/mountinfo";
  if (!g_file_get_contents (mountinfo_path, &text, NULL, &local))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "cannot tell whether %s is mounted: %s", target->path, local->message);
      return FALSE;
    }
  if (replay_mountinfo_find (text, (const guint32 *) devnos->data, n, &mount_point, &source))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "%s is mounted (%s on %s, per %s); refusing to touch a mounted device",
                   target->path, source, mount_point, mountinfo_path);
      return FALSE;
    }
  if (!check_swaps (target, (const guint32 *) devnos->data, n, error))
    return FALSE;
  return check_holders (target, sysfs_dirs, error);
}

int
replay_target_open (const ReplayTarget *target, gboolean writable, GError **error)
{
  int fd = open (target->path, (writable ? O_RDWR : O_RDONLY) | O_DIRECT | O_EXCL | O_CLOEXEC);

  if (fd >= 0)
    return fd;
  if (errno == EBUSY)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                 "%s is in use (mounted or held open exclusively by another process: "
                 "open with O_EXCL failed with EBUSY); refusing to touch it", target->path);
  else
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO,
                 "%s: cannot open for direct I/O: %s", target->path, g_strerror (errno));
  return -1;
}

gboolean
replay_target_check_signature (const ReplayTarget *target, GError **error)
{
  blkid_probe pr = blkid_new_probe_from_filename (target->path);
  const char *type = NULL, *kind = NULL;
  int rc;

  if (pr == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                   "%s: cannot probe for signatures: %s", target->path, g_strerror (errno));
      return FALSE;
    }
  blkid_probe_enable_superblocks (pr, 1);
  blkid_probe_set_superblocks_flags (pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
  blkid_probe_enable_partitions (pr, 1);
  blkid_probe_set_partitions_flags (pr, BLKID_PARTS_ENTRY_DETAILS);
  rc = blkid_do_safeprobe (pr);
  if (rc == 0)
    {
      if (blkid_probe_lookup_value (pr, "TYPE", &type, NULL) == 0)
        kind = "a file system or volume signature";
      else if (blkid_probe_lookup_value (pr, "PTTYPE", &type, NULL) == 0)
        kind = "a partition table";
      else
        kind = "a signature", type = "unknown";
    }
  else if (rc == -2)
    kind = "several conflicting signatures", type = "ambivalent";
  if (kind != NULL)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                 "%s carries %s (%s); replaying writes would destroy it "
                 "(--force replays anyway, wipefs shows it)", target->path, kind, type);
  else if (rc < 0)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET,
                 "%s: probing for signatures failed", target->path);
  blkid_free_probe (pr);
  return kind == NULL && rc >= 0;
}
