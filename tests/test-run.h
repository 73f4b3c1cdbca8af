/* test-run.h — running the iosim binary from a test (IOSIM_BIN, set by
 * meson) and keeping its exit status and output. */
#pragma once

#include <sys/wait.h>
#include <glib.h>

typedef struct {
  int   status;
  char *out;
  char *err;
} TestRun;

static inline void
test_run_clear (TestRun *r)
{
  g_free (r->out);
  g_free (r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TestRun, test_run_clear)

/* The iosim binary under test, or NULL where IOSIM_BIN names none (the
 * test skips). */
static inline const char *
test_iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  return bin;
}

/* Run @argv (NULL-terminated, program first) in environment @envp (NULL:
 * this process's); it must exit, its status in r->status. */
static inline void
test_run_argv (TestRun *r, char **envp, const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  int wait_status;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &r->out, &r->err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  r->status = WEXITSTATUS (wait_status);
}
