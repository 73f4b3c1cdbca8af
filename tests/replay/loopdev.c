/* loopdev.c — see loopdev.h. */
#include "loopdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

LoopDev *
loopdev_new (guint64 size_bytes, char **skip_reason)
{
  g_autoptr (GError) error = NULL;
  LoopDev *dev;
  int ctl, backing_fd;

  if (geteuid () != 0)
    {
      *skip_reason = g_strdup ("needs root for loop devices");
      return NULL;
    }
  ctl = open ("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0)
    {
      *skip_reason = g_strdup_printf ("no /dev/loop-control: %s", g_strerror (errno));
      return NULL;
    }
  dev = g_new0 (LoopDev, 1);
  dev->fd = -1;
  dev->size_bytes = size_bytes;
  dev->dir = g_dir_make_tmp ("iosim-loop-XXXXXX", &error);
  g_assert_no_error (error);
  dev->backing = g_build_filename (dev->dir, "backing.img", NULL);
  backing_fd = open (dev->backing, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (backing_fd, >=, 0);
  g_assert_cmpint (ftruncate (backing_fd, (off_t) size_bytes), ==, 0);

  /* Another process may take the free device first: retry a few times. */
  for (int attempt = 0; attempt < 20 && dev->fd < 0; attempt++)
    {
      int n = ioctl (ctl, LOOP_CTL_GET_FREE);
      int fd;
      if (n < 0)
        break;
      g_free (dev->path);
      dev->path = g_strdup_printf ("/dev/loop%d", n);
      fd = open (dev->path, O_RDWR | O_CLOEXEC);
      if (fd < 0)
        continue;
      if (ioctl (fd, LOOP_SET_FD, backing_fd) == 0)
        {
          struct loop_info64 info;
          /* Detach by itself when the last opener (our fd) closes, so a
           * test that aborts does not leak the device. */
          memset (&info, 0, sizeof info);
          if (ioctl (fd, LOOP_GET_STATUS64, &info) == 0)
            {
              info.lo_flags |= LO_FLAGS_AUTOCLEAR;
              ioctl (fd, LOOP_SET_STATUS64, &info);
            }
          dev->fd = fd;
        }
      else
        close (fd);
    }
  close (backing_fd);
  close (ctl);
  if (dev->fd < 0)
    {
      *skip_reason = g_strdup_printf ("cannot attach a loop device: %s", g_strerror (errno));
      loopdev_free (dev);
      return NULL;
    }
  return dev;
}

gboolean
loopdev_read_backing (LoopDev *dev, guint64 offset, gsize len, guint8 *out)
{
  int fd;
  gboolean ok;

  ioctl (dev->fd, BLKFLSBUF, 0);
  fsync (dev->fd);
  fd = open (dev->backing, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  ok = pread (fd, out, len, (off_t) offset) == (ssize_t) len;
  close (fd);
  return ok;
}

void
loopdev_free (LoopDev *dev)
{
  if (dev == NULL)
    return;
  if (dev->fd >= 0)
    {
      ioctl (dev->fd, LOOP_CLR_FD, 0);
      close (dev->fd);
    }
  if (dev->backing)
    unlink (dev->backing);
  if (dev->dir)
    rmdir (dev->dir);
  g_free (dev->backing);
  g_free (dev->dir);
  g_free (dev->path);
  g_free (dev);
}
