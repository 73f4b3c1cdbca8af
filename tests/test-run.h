/* test-run.h — running programs from a test: the iosim binary (IOSIM_BIN,
 * set by meson) keeping its exit status and output, and reference tools
 * (blkparse, btt) whose standard output a test compares with iosim's. */
#pragma once

#include <sys/wait.h>
#include <glib.h>
#include <gio/gio.h>

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

/* Is @name on PATH?  Skips the test, naming it, where not. */
static inline gboolean
test_have_tool (const char *name)
{
  g_autofree char *p = g_find_program_in_path (name);

  if (p == NULL)
    g_test_skip_printf ("%s is not installed", name);
  return p != NULL;
}

/* Standard output of @argv (program first, NULL-terminated), run in @cwd
 * (NULL: here) reading @stdin_path (NULL: none); it must exit with 0. */
static inline char *
test_tool_output (const char *const *argv, const char *stdin_path, const char *cwd)
{
  g_autoptr (GSubprocessLauncher) l =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr (GSubprocess) p = NULL;
  g_autoptr (GError) error = NULL;
  char *out = NULL;

  if (stdin_path != NULL)
    g_subprocess_launcher_set_stdin_file_path (l, stdin_path);
  if (cwd != NULL)
    g_subprocess_launcher_set_cwd (l, cwd);
  p = g_subprocess_launcher_spawnv (l, argv, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 0);
  return out;
}
