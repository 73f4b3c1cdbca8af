/* test-mounts.h — a test whose mounts go with it: a mount namespace of
 * its own, so that a file system, FUSE or tracefs it mounted is gone when
 * it and its children have exited, however the test ends. */
#pragma once

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>
#include <glib.h>

/* Mounts made from here on are this process's and its children's: TRUE
 * when so (as root), FALSE when nothing changed. */
static inline gboolean
test_private_mounts (void)
{
  if (getuid () != 0 || unshare (CLONE_NEWNS) != 0)
    return FALSE;
  g_assert_cmpint (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
  return TRUE;
}
