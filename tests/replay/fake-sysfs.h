/* fake-sysfs.h — a fake sysfs tree for the target-setup and journal unit
 * tests: files written and read by relative path, the block queue both
 * start from, and the ReplayTarget "fake0" (250:7) that points at it. */
#pragma once

#include <string.h>
#include <glib.h>

#include "replay/replay-safety.h"

static inline void
put (const char *dir, const char *file, const char *text)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* The file's text, stripped; the caller frees it. */
static inline char *
get (const char *dir, const char *file)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strstrip (text);
}

/* The queue attributes both tests start from, in @queue. */
static inline void
fake_queue_fill (const char *queue)
{
  put (queue, "scheduler", "none [mq-deadline] kyber\n");
  put (queue, "read_ahead_kb", "128\n");
  put (queue, "nr_requests", "64\n");
  put (queue, "rotational", "0\n");
  put (queue, "iosched/read_expire", "500\n");
}

/* /dev/fake0, 250:7, whose sysfs is under @root. */
static inline void
fake_target_init (ReplayTarget *target, const char *root)
{
  memset (target, 0, sizeof *target);
  target->path = g_strdup ("/dev/fake0");
  target->name = g_strdup ("fake0");
  target->disk_name = g_strdup ("fake0");
  target->sysfs_root = g_strdup (root);
  target->major = 250;
  target->minor = 7;
}

static inline void
fake_target_clear (ReplayTarget *target)
{
  g_free (target->path);
  g_free (target->name);
  g_free (target->disk_name);
  g_free (target->sysfs_root);
}
