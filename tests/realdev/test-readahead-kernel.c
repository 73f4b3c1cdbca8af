/* test-readahead-kernel.c — the 6.18 readahead of sim/sim-readahead.c
 * against the running kernel.  Each case reads a pattern of pages with
 * buffered pread() from a fresh loop device (the block device's own page
 * cache, which has large folios in 6.18) under `iosim capture`, and
 * compares the bios the kernel queued (Q events: first page, pages) with
 * the runs of pages the model reads for the same pattern (ondemand-6.18,
 * tests/readahead/ra-cache.h):
 *  - one-page reads from page 0 (the windows ramp up to read_ahead_kb);
 *  - one-page reads from page 5, after a random first read;
 *  - read_ahead_kb 512 and 16, one-page reads;
 *  - 128 KiB reads;
 *  - two streams alternating on one open file (dump-style interleaving:
 *    marker hits meet the other stream's state, and the page-cache
 *    probes walk the xarray from inside large folios);
 *  - the first and the last again on a 16 MiB file of ext4 on the loop
 *    device (a regular file's page cache, large folios too), its pages
 *    mapped back from the disk through the file's first extent.
 * Root, loop devices and tracefs (iosim capture mounts it if needed) are
 * needed, and a 6.18 kernel, the era the model follows; otherwise the test
 * skips; the ext4 cases also need mkfs.ext4.  read_ahead_kb is set on the
 * test's own loop device for every case (after the mount, which may set
 * it) and put back before the device goes.  The test runs in a mount
 * namespace of its own, so a file system it mounted goes with it even if
 * it aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tests/readahead/ra-cache.h"
#include "tests/replay/iosim-run.h"
#include "tests/replay/loopdev.h"
#include "tests/test-mounts.h"
#include "traces/trace.h"

#define PAGE_BYTES   4096u
#define DEVICE_BYTES (256u << 20)
#define FILE_BYTES   (16u << 20)

typedef struct {
  guint64 page;
  guint64 nr_pages;
} Step;

typedef struct {
  const char *name;
  guint       read_ahead_kb;
  void      (*steps) (GArray *out);
  gboolean    ext4;       /* read a file of ext4 on the device */
} Case;

static void
add_step (GArray *out, guint64 page, guint64 nr_pages)
{
  Step s = { page, nr_pages };
  g_array_append_val (out, s);
}

static void
steps_from_zero (GArray *out, guint64 last)
{
  for (guint64 p = 0; p <= last; p++)
    add_step (out, p, 1);
}

static void
steps_growth (GArray *out)
{
  steps_from_zero (out, 99);
}

static void
steps_unaligned (GArray *out)
{
  for (guint64 p = 5; p <= 60; p++)
    add_step (out, p, 1);
}

static void
steps_long (GArray *out)
{
  steps_from_zero (out, 249);
}

static void
steps_short (GArray *out)
{
  steps_from_zero (out, 11);
}

static void
steps_large (GArray *out)
{
  for (guint64 p = 0; p < 96; p += 32)
    add_step (out, p, 32);
}

static void
steps_interleaved (GArray *out)
{
  for (guint64 i = 0; i < 64; i++)
    {
      add_step (out, i, 1);
      add_step (out, 1000 + i, 1);
    }
}

static const Case cases[] = {
  { "growth", 128, steps_growth },
  { "unaligned-start", 128, steps_unaligned },
  { "read-ahead-kb-512", 512, steps_long },
  { "read-ahead-kb-16", 16, steps_short },
  { "large-reads", 128, steps_large },
  { "interleaved", 128, steps_interleaved },
  { "ext4-growth", 128, steps_growth, TRUE },
  { "ext4-interleaved", 128, steps_interleaved, TRUE },
};

static const Case *
case_named (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    if (strcmp (cases[i].name, name) == 0)
      return &cases[i];
  return NULL;
}

/* The kernel side, run by iosim capture: this program again, with
 * --read CASE DEVICE. */
static int
read_pattern (const char *name, const char *device)
{
  const Case *c = case_named (name);
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (Step));
  g_autofree guint8 *buf = NULL;
  int fd;

  if (c == NULL)
    return 2;
  c->steps (steps);
  buf = g_malloc (64 * PAGE_BYTES);
  fd = open (device, O_RDONLY);
  if (fd < 0)
    return 1;
  for (guint i = 0; i < steps->len; i++)
    {
      const Step *s = &g_array_index (steps, Step, i);
      gsize len = s->nr_pages * PAGE_BYTES;

      g_assert (s->nr_pages <= 64);
      if (pread (fd, buf, len, (off_t) (s->page * PAGE_BYTES)) != (ssize_t) len)
        return 1;
    }
  close (fd);
  return 0;
}

static char *self_exe;

/* NULL, or why the kernel cannot be compared here. */
static char *
kernel_skip_reason (void)
{
  struct utsname u;

  if (uname (&u) != 0)
    return g_strdup ("uname failed");
  if (!g_str_has_prefix (u.release, "6.18."))
    return g_strdup_printf ("the model follows 6.18's readahead; this kernel is %s", u.release);
  return NULL;
}

static char *
sysfs_ra_path (const LoopDev *dev)
{
  return g_strdup_printf ("/sys/block/%s/queue/read_ahead_kb", dev->path + strlen ("/dev/"));
}

static void
write_sysfs (const char *path, guint value)
{
  g_autofree char *text = g_strdup_printf ("%u\n", value);
  g_autoptr (GError) error = NULL;

  g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error);
  g_assert_no_error (error);
}

/* The read bios the kernel queued on the device, as (first page, pages)
 * counted from @first_page (where the file starts on the device). */
static GArray *
kernel_reads (const char *capture, guint64 first_page)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceReader) reader = trace_reader_open (capture, NULL, &error);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (RaRead));
  TraceRecord rec;

  g_assert_no_error (error);
  while (trace_reader_next (reader, &rec, &error))
    {
      if (rec.action != TRACE_ACT_QUEUE || !(rec.rwbs & TRACE_RWBS_READ))
        continue;
      g_assert_cmpuint (rec.sector % 8, ==, 0);
      g_assert_cmpuint (rec.sector / 8, >=, first_page);
      RaRead rd = { rec.sector / 8 - first_page, rec.nr_sectors / 8 };
      g_array_append_val (out, rd);
    }
  g_assert_no_error (error);
  return out;
}

static GArray *
model_reads (const Case *c)
{
  g_autoptr (Cache) cache = cache_new (SIM_RA_ERA_ONDEMAND_6_18, sim_ra_pages_from_kb (c->read_ahead_kb));
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (Step));

  c->steps (steps);
  for (guint i = 0; i < steps->len; i++)
    {
      const Step *s = &g_array_index (steps, Step, i);
      cache_read (cache, s->page, s->nr_pages);
    }
  return g_array_ref (cache->reads);
}

static char *
reads_text (GArray *reads)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < reads->len; i++)
    {
      const RaRead *r = &g_array_index (reads, RaRead, i);
      g_string_append_printf (s, "[%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ") ", r->start,
                              r->start + r->nr_pages);
    }
  return g_string_free (s, FALSE);
}

/* An ext4 file system on @dev mounted at @mnt, holding a FILE_BYTES file
 * written and synced, its pages dropped from the page cache; its path in
 * *@file and the device page where it starts (its one extent) in
 * *@first_page.  NULL, or why not. */
static char *
ext4_file (const LoopDev *dev, const char *mnt, char **file, guint64 *first_page)
{
  /* 4 KiB blocks (mke2fs would take 1 KiB on a device this small): the
   * file's blocks are then pages of the device. */
  const char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-b", "4096", "-E",
                         "lazy_itable_init=0,lazy_journal_init=0", dev->path, NULL };
  g_autofree guint8 *buf = g_malloc0 (1 << 20);
  g_autofree struct fiemap *fm = g_malloc0 (sizeof *fm + 2 * sizeof (struct fiemap_extent));
  int status = 0, fd;

  if (!g_spawn_sync (NULL, (char **) mkfs, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                     | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    return g_strdup ("mkfs.ext4 is missing or failed");
  g_assert_cmpint (g_mkdir (mnt, 0700), ==, 0);
  g_assert_cmpint (mount (dev->path, mnt, "ext4", 0, NULL), ==, 0);
  *file = g_build_filename (mnt, "data", NULL);
  fd = open (*file, O_CREAT | O_WRONLY, 0600);
  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < FILE_BYTES >> 20; i++)
    g_assert_cmpint (write (fd, buf, 1 << 20), ==, 1 << 20);
  g_assert_cmpint (fsync (fd), ==, 0);
  g_assert_cmpint (posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED), ==, 0);
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_extent_count = 2;
  g_assert_cmpint (ioctl (fd, FS_IOC_FIEMAP, fm), ==, 0);
  close (fd);
  /* The patterns read the first 4.3 MiB: they must lie in one extent. */
  g_assert_cmpuint (fm->fm_mapped_extents, >=, 1);
  g_assert_cmpuint (fm->fm_extents[0].fe_logical, ==, 0);
  g_assert_cmpuint (fm->fm_extents[0].fe_length, >=, FILE_BYTES / 2);
  g_assert_cmpuint (fm->fm_extents[0].fe_physical % PAGE_BYTES, ==, 0);
  *first_page = fm->fm_extents[0].fe_physical / PAGE_BYTES;
  return NULL;
}

/* What a case reads: its loop device, for the ext4 cases the file system
 * mounted at @mnt and the file in it, and the read_ahead_kb to put back. */
typedef struct {
  LoopDev *dev;
  char    *ra_path;
  guint    old_ra_kb;
  char    *mnt;           /* NULL: the device itself is read */
  char    *file;
  guint64  first_page;    /* the file's first page on the device */
} Target;

static void
target_free (Target *t)
{
  write_sysfs (t->ra_path, t->old_ra_kb);
  if (t->mnt != NULL)
    g_assert_cmpint (umount (t->mnt), ==, 0);
  loopdev_free (t->dev);
  g_free (t->ra_path);
  g_free (t->mnt);
  g_free (t->file);
  g_free (t);
}

/* NULL with the reason in *@skip when the machine cannot give @c's target. */
static Target *
target_new (const Case *c, char **skip)
{
  Target *t = g_new0 (Target, 1);
  g_autofree char *old_ra = NULL;

  t->dev = loopdev_new (DEVICE_BYTES, skip);
  if (t->dev == NULL)
    {
      g_free (t);
      return NULL;
    }
  t->ra_path = sysfs_ra_path (t->dev);
  g_assert_true (g_file_get_contents (t->ra_path, &old_ra, NULL, NULL));
  t->old_ra_kb = (guint) g_ascii_strtoull (old_ra, NULL, 10);
  if (c->ext4)
    {
      g_autofree char *mnt = g_build_filename (t->dev->dir, "mnt", NULL);

      *skip = ext4_file (t->dev, mnt, &t->file, &t->first_page);
      if (*skip != NULL)
        {
          target_free (t);
          return NULL;
        }
      t->mnt = g_steal_pointer (&mnt);
    }
  write_sysfs (t->ra_path, c->read_ahead_kb);
  return t;
}

/* The reads the kernel issued for @c on @t; NULL if iosim capture could
 * not record the device. */
static GArray *
capture_kernel_reads (const Case *c, const Target *t)
{
  g_autofree char *capture = g_build_filename (t->dev->dir, "capture.txt", NULL);
  const char *settle[] = { "udevadm", "settle", NULL };
  const char *args[] = { "capture", "--device", t->dev->path, "-o", capture, "--", self_exe,
                         "--read", c->name, t->file != NULL ? t->file : t->dev->path, NULL };
  Run r = { 0 };
  gboolean recorded;

  /* udev's probe of the new device may have cached its first pages. */
  g_spawn_sync (NULL, (char **) settle, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  if (t->file == NULL)
    g_assert_cmpint (ioctl (t->dev->fd, BLKFLSBUF, 0), ==, 0);
  run_iosim (&r, args);
  recorded = g_spawn_check_wait_status (r.status, NULL);
  if (!recorded)
    g_test_message ("iosim capture: %s", r.err);
  run_clear (&r);
  return recorded ? kernel_reads (capture, t->first_page) : NULL;
}

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *skip = kernel_skip_reason ();
  g_autoptr (GArray) kernel = NULL;
  g_autoptr (GArray) model = NULL;
  g_autofree char *kernel_text = NULL, *model_text = NULL;
  Target *t;

  if (skip == NULL && (t = target_new (c, &skip)) != NULL)
    {
      kernel = capture_kernel_reads (c, t);
      target_free (t);
      if (kernel == NULL)
        skip = g_strdup ("iosim capture could not record the device (tracefs, blk tracer)");
    }
  if (skip != NULL)
    {
      g_test_skip (skip);
      return;
    }
  model = model_reads (c);
  kernel_text = reads_text (kernel);
  model_text = reads_text (model);
  g_test_message ("kernel: %s", kernel_text);
  g_test_message ("model:  %s", model_text);
  g_assert_cmpstr (model_text, ==, kernel_text);
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--read") == 0)
    return read_pattern (argv[2], argv[3]);

  g_test_init (&argc, &argv, NULL);
  self_exe = g_file_read_link ("/proc/self/exe", NULL);
  g_assert_nonnull (self_exe);
  /* Its ext4 goes with the test. */
  test_private_mounts ();
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/readahead-kernel/6.18/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  return g_test_run ();
}
