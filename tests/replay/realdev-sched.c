/* realdev-sched.c — see realdev-sched.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "replay/replay-capture.h"
#include "tests/replay/realdev-sched.h"

gboolean
realdev_run (const char *const *argv, char **out, char **err, int *status)
{
  g_autoptr (GError) error = NULL;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, err,
                     status, &error))
    {
      g_test_message ("%s: %s", argv[0], error->message);
      return FALSE;
    }
  return TRUE;
}

char *
realdev_active_sched (const char *sched_file)
{
  g_autofree char *text = NULL;
  const char *open, *close;

  if (!g_file_get_contents (sched_file, &text, NULL, NULL)
      || (open = strchr (text, '[')) == NULL || (close = strchr (open, ']')) == NULL)
    return NULL;
  return g_strndup (open + 1, close - open - 1);
}

gboolean
realdev_sched_available (const char *sched_file, const char *name)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) words = NULL;

  if (!g_file_get_contents (sched_file, &text, NULL, NULL))
    return FALSE;
  words = g_strsplit_set (g_strstrip (text), " []", -1);
  return g_strv_contains ((const char *const *) words, name);
}

gboolean
realdev_write_sched (const char *sched_file, const char *name)
{
  g_autofree char *now = NULL;

  if (!g_file_set_contents_full (sched_file, name, -1, G_FILE_SET_CONTENTS_NONE, 0644, NULL))
    return FALSE;
  now = realdev_active_sched (sched_file);
  return g_strcmp0 (now, name) == 0;
}

char *
realdev_blk_tracer_missing (void)
{
  g_autofree char *filesystems = NULL, *tracefs = NULL, *tracers = NULL, *tracers_path = NULL;

  if (!g_file_get_contents ("/proc/filesystems", &filesystems, NULL, NULL)
      || strstr (filesystems, "tracefs") == NULL)
    return g_strdup ("the kernel has no tracefs (CONFIG_FTRACE)");
  tracefs = replay_tracefs_find (NULL, FALSE, NULL, NULL);
  if (tracefs == NULL)
    return NULL;
  tracers_path = g_build_filename (tracefs, "available_tracers", NULL);
  if (!g_file_get_contents (tracers_path, &tracers, NULL, NULL) || strstr (tracers, "blk") == NULL)
    return g_strdup ("the kernel has no blk tracer (CONFIG_BLK_DEV_IO_TRACE)");
  return NULL;
}

char *
realdev_loop_attach (RealdevLoop *dev, const char *prefix, guint64 size_bytes)
{
  g_autofree char *out = NULL, *err = NULL;
  int fd, status = -1;

  dev->dir = g_strdup_printf ("/dev/shm/%s-XXXXXX", prefix);
  if (g_mkdtemp (dev->dir) == NULL)
    return g_strdup_printf ("mkdtemp %s: %s", dev->dir, g_strerror (errno));
  dev->backing = g_build_filename (dev->dir, "backing.img", NULL);
  fd = g_open (dev->backing, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate (fd, (off_t) size_bytes) != 0)
    {
      int saved = errno;

      if (fd >= 0)
        close (fd);
      return g_strdup_printf ("%s: %s", dev->backing, g_strerror (saved));
    }
  close (fd);
  {
    const char *argv[] = { "losetup", "--find", "--show", dev->backing, NULL };

    if (!realdev_run (argv, &out, &err, &status) || !g_spawn_check_wait_status (status, NULL))
      return g_strdup_printf ("losetup --find --show failed: %s", err ? g_strstrip (err) : "?");
  }
  dev->loop = g_strdup (g_strstrip (out));
  dev->sched_file = g_strdup_printf ("/sys/block/%s/queue/scheduler", strrchr (dev->loop, '/') + 1);
  dev->original_sched = realdev_active_sched (dev->sched_file);
  if (dev->original_sched == NULL)
    return g_strdup_printf ("%s: no scheduler in force", dev->sched_file);
  return NULL;
}

void
realdev_loop_detach (RealdevLoop *dev)
{
  if (dev->loop)
    {
      const char *argv[] = { "losetup", "-d", dev->loop, NULL };
      int status = -1;

      if (dev->original_sched && !realdev_write_sched (dev->sched_file, dev->original_sched))
        g_test_message ("could not put back %s's scheduler %s", dev->loop, dev->original_sched);
      if (!realdev_run (argv, NULL, NULL, &status) || !g_spawn_check_wait_status (status, NULL))
        g_test_message ("losetup -d %s failed", dev->loop);
    }
  if (dev->backing)
    g_unlink (dev->backing);
  if (dev->dir && g_rmdir (dev->dir) != 0)
    g_test_message ("rmdir %s: %s", dev->dir, g_strerror (errno));
  g_clear_pointer (&dev->dir, g_free);
  g_clear_pointer (&dev->backing, g_free);
  g_clear_pointer (&dev->loop, g_free);
  g_clear_pointer (&dev->sched_file, g_free);
  g_clear_pointer (&dev->original_sched, g_free);
}
