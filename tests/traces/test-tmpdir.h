/* test-tmpdir.h — a private temporary directory for one test program.
 *
 * The trace tests write their scratch files under g_get_tmp_dir () with
 * fixed names; two runs at once (the normal and the sanitizer build, or a
 * slow-suite rerun of the same program) would overwrite each other's, and
 * the files stayed in /tmp.  test_tmpdir_enter () points TMPDIR (which
 * g_get_tmp_dir () and spawned iosim processes read) at a fresh directory
 * before anything asks for it; test_tmpdir_leave () removes it with what
 * the tests left there.
 */
#pragma once

#include <errno.h>
#include <glib.h>

#include "tests/test-tree.h"

/* Call first in main (), before g_test_init: g_get_tmp_dir () caches. */
static inline char *
test_tmpdir_enter (void)
{
  /* Not g_dir_make_tmp: it would ask g_get_tmp_dir () first and fix it. */
  const char *base = g_getenv ("TMPDIR");
  char *dir = g_build_filename (base && *base ? base : "/tmp", "iosim-test-XXXXXX", NULL);

  if (g_mkdtemp (dir) == NULL)
    g_error ("cannot make a temporary directory %s: %s", dir, g_strerror (errno));
  g_setenv ("TMPDIR", dir, TRUE);
  return dir;
}

/* Remove @dir and everything below it; frees @dir. */
static inline void
test_tmpdir_leave (char *dir)
{
  if (!test_remove_tree (dir))
    g_printerr ("could not remove %s\n", dir);
  g_free (dir);
}
