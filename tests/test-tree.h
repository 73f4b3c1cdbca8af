/* test-tree.h — removing a scratch directory tree in tests. */
#pragma once

#include <ftw.h>
#include <stdio.h>
#include <glib.h>

static int
test_tree_remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st;
  (void) flag;
  (void) ftw;
  return remove (path) == 0 ? 0 : -1;
}

/* Remove @path and everything below it, children first, never following a
 * symbolic link (a replayed tree holds links); a missing @path is fine.
 * FALSE when something could not be removed. */
static inline gboolean
test_remove_tree (const char *path)
{
  if (!g_file_test (path, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
    return TRUE;
  return nftw (path, test_tree_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

/* A new scratch directory under g_get_tmp_dir (), named @prefix-XXXXXX
 * (caller frees; remove it with test_remove_tree). */
static inline char *
test_scratch_dir (const char *prefix)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmpl = g_strconcat (prefix, "-XXXXXX", NULL);
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}
