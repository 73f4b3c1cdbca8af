/* replay-safety.h — what a real block device is, and whether iosim may touch it.
 *
 * A target is described from sysfs (/sys/dev/block/MAJ:MIN), never by
 * opening it, so `--dry-run` and capture headers touch nothing.  Before a
 * replay opens a device, replay_target_check_unused() refuses a device
 * that is mounted (/proc/self/mountinfo, the device or any of its
 * partitions), used as swap (/proc/swaps) or held by a stacked device
 * (/sys/class/block/X/holders: dm, md, bcache); replay_target_open() then
 * opens with O_EXCL, which the kernel answers with EBUSY while anyone else
 * has the device mounted or exclusively open (Linux 6.x bdev_open()).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define REPLAY_ERROR (replay_error_quark ())
GQuark replay_error_quark (void);

typedef enum {
  REPLAY_ERROR_FAILED,     /* generic */
  REPLAY_ERROR_TARGET,     /* not a block device, sysfs unreadable */
  REPLAY_ERROR_UNSAFE,     /* mounted, swap, held or busy */
  REPLAY_ERROR_WRITES,     /* trace writes without --allow-write / --reads-only */
  REPLAY_ERROR_RANGE,      /* an I/O lies beyond the target */
  REPLAY_ERROR_IO,         /* reading or writing the target failed */
  REPLAY_ERROR_EMPTY,      /* nothing to replay */
  REPLAY_ERROR_TRACEFS,    /* tracefs or the blk tracer unavailable */
  REPLAY_ERROR_PARSE,      /* a recorded file (wbt events) that does not read back */
} ReplayError;

/* A block device as sysfs describes it. */
typedef struct {
  char    *path;                 /* as given, e.g. /dev/loop3 */
  char    *name;                 /* sysfs name: loop3, sda1 */
  char    *disk_name;            /* whole disk: equal to name unless a partition */
  char    *sysfs_root;           /* "/sys" (tests use a fake tree) */
  char    *sysfs_dir;            /* /sys/devices/.../block/loop3 (resolved) */
  gboolean is_partition;
  guint32  major;
  guint32  minor;
  guint64  size_bytes;
  guint32  logical_block_bytes;  /* queue/logical_block_size of the disk */
  guint64  start_sector;         /* partitions: first sector on the disk; else 0 */
  /* A regular file (replay-target-file.c): major/minor are its file
   * system's device, name and disk_name its base name, no sysfs. */
  gboolean is_file;
  guint64  file_ino;             /* with major/minor, tells two files apart */
  gboolean file_exists;          /* FALSE: created at open (--target-size) */
  guint64  file_size_bytes;      /* st_size when probed (0 when absent); size_bytes is
                                  * what the replay may use, which can be more */
  char    *fs_type;              /* "ext4", "tmpfs", ... (statfs), for messages */
  gboolean fs_in_memory;         /* tmpfs or ramfs: no device under the file */
  gboolean buffered_fallback;    /* set at open: the file system refused O_DIRECT */
} ReplayTarget;

gboolean replay_target_probe   (const char    *path,
                                ReplayTarget  *out,
                                GError       **error);
/* The same for a known device number under another sysfs root, without
 * looking at @path (for tests with a fake sysfs tree). */
gboolean replay_target_probe_at (const char   *sysfs_root,
                                 const char   *path,
                                 guint32       major,
                                 guint32       minor,
                                 ReplayTarget *out,
                                 GError      **error);
void     replay_target_clear   (ReplayTarget  *target);
/* Deep copy of @src into @dst. */
void     replay_target_copy    (const ReplayTarget *src,
                                ReplayTarget       *dst);

/* ---- Regular files as targets (replay-target-file.c) --------------------
 *
 * For users without a spare device: the replay reads and writes a file.
 * Its size bounds the replay unless @want_size_bytes (--target-size) says
 * how much of it to use: a file shorter than that is extended (sparse,
 * ftruncate) at open, a missing one created (O_EXCL); nothing is ever
 * written beyond it and a file is never shrunk.  The alignment is the
 * file's direct-I/O offset alignment (statx STATX_DIOALIGN, Linux 6.1),
 * else 4096.  A file that backs a loop device or is in use as swap is
 * refused; there is no mounted check (a file is not mounted), and writes
 * still need --allow-write and pass the signature check (a file can hold
 * a file system image). */

/* TRUE when @path names a regular file, or nothing yet (a file target
 * --target-size may create); FALSE for block devices and the rest. */
gboolean replay_target_path_is_file (const char *path);
/* Describe @path as a file target; 0 @want_size_bytes: the file must
 * exist and is used whole. */
gboolean replay_target_probe_file (const char    *path,
                                   guint64        want_size_bytes,
                                   ReplayTarget  *out,
                                   GError       **error);
/* Refuse a file that backs a loop device (/sys/block/loopN/loop/backing_file
 * under @sysfs_root, NULL = /sys) or is a swap file (/proc/swaps). */
gboolean replay_target_check_file_unused (const ReplayTarget *target,
                                          const char         *sysfs_root,
                                          GError            **error);
/* Create or extend the file to target->size_bytes if needed, then open it
 * with O_DIRECT; where the file system refuses O_DIRECT (EINVAL: ramfs,
 * some FUSE and network file systems), open it buffered and set
 * target->buffered_fallback.  -1 with REPLAY_ERROR_IO otherwise. */
int      replay_target_open_file (ReplayTarget *target,
                                  gboolean      writable,
                                  GError      **error);
/* What a replay on @target should say before its figures are trusted
 * (buffered fallback, a file system in memory), appended to @warnings
 * (char *); none for a block device. */
void     replay_target_file_warnings (const ReplayTarget *target,
                                      GPtrArray          *warnings);

/* A queue attribute of the target's disk (SYSFS/block/DISK/queue/ATTR),
 * stripped; NULL if unreadable.  Caller frees. */
char    *replay_target_queue_attr (const ReplayTarget *target,
                                   const char         *attr);
/* The active elevator: the bracketed word of queue/scheduler ("none"). */
char    *replay_target_scheduler  (const ReplayTarget *target);

/* Find a mount of any of @devnos (pairs major,minor; @n_devnos pairs) in
 * mountinfo text (proc(5) format).  A line matches on its major:minor
 * field, or when its mount source is a block device node with one of those
 * numbers.  Returns TRUE and the mount point and source (caller frees;
 * either out pointer may be NULL) of the first match. */
gboolean replay_mountinfo_find (const char    *mountinfo_text,
                                const guint32 *devnos,
                                guint          n_devnos,
                                char         **out_mount_point,
                                char         **out_source);

/* The first swap area of /proc/swaps whose path @match accepts (caller
 * frees), or NULL (none, or no /proc/swaps). */
typedef gboolean (*ReplaySwapMatch) (const char *swap_path, gconstpointer data);
char    *replay_swaps_find     (ReplaySwapMatch match,
                                gconstpointer   data);

/* Refuse a target that is mounted (reading @mountinfo_path, NULL =
 * /proc/self/mountinfo), swap, or held, naming what uses it. */
gboolean replay_target_check_unused (const ReplayTarget *target,
                                     const char         *mountinfo_path,
                                     GError            **error);

/* Refuse a target that carries a file system, RAID/LVM member or
 * partition table signature (libblkid superblock and partition probes,
 * read-only): writing would destroy what it holds.  Checked before the
 * target is opened for writing; --force skips this check only. */
gboolean replay_target_check_signature (const ReplayTarget *target,
                                        GError            **error);

/* Open for direct I/O with O_EXCL; returns the fd or -1 with
 * REPLAY_ERROR_UNSAFE when busy, REPLAY_ERROR_IO otherwise. */
int      replay_target_open    (const ReplayTarget *target,
                                gboolean            writable,
                                GError            **error);

G_END_DECLS
