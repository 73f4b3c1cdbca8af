/* test-replay-isolate-realdev.c — --isolate on the real machine
 * (replay_setup_isolate): while it holds, init (pid 1) and this test's
 * parent may not run on the replay CPU, unbound workqueues avoid it, and
 * a thread pinned there still runs; after restore every one of them is
 * back as it was and the shield cpuset is gone.  The same after the
 * process that isolated dies by SIGKILL: its journal restores it.  Needs
 * root, a cpuset cgroup and two online CPUs; skips otherwise.
 */
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay-journal.h"
#include "replay/replay-setup.h"

#define WQ_MASK "/sys/devices/virtual/workqueue/cpumask"

static char *
read_text (const char *path)
{
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

static gboolean
may_run_on (pid_t pid, int cpu)
{
  cpu_set_t set;

  g_assert_cmpint (sched_getaffinity (pid, sizeof set, &set), ==, 0);
  return CPU_ISSET (cpu, &set);
}

static void
test_isolate_and_restore (void)
{
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree char *wq_before = read_text (WQ_MASK), *wq_during = NULL, *wq_after = NULL;
  g_autofree char *shield = NULL;
  int cpu = (int) g_get_num_processors () - 1;
  pid_t parent = getppid ();
  gboolean init_before, parent_before;

  if (getuid () != 0)
    {
      g_test_skip ("needs root (cpusets, IRQ affinity)");
      return;
    }
  if (cpu < 1)
    {
      g_test_skip ("needs two CPUs");
      return;
    }
  init_before = may_run_on (1, cpu);
  parent_before = may_run_on (parent, cpu);
  g_array_append_val (cpus, cpu);
  if (!replay_setup_isolate (setup, cpus, NULL, NULL, &error))
    {
      gboolean no_cpuset = strstr (error->message, "no cpuset cgroup") != NULL;

      g_assert_true (replay_setup_restore (setup, NULL, NULL));
      if (no_cpuset)
        {
          g_test_skip (error->message);
          return;
        }
      g_assert_no_error (error);
    }
  shield = g_strdup_printf ("/sys/fs/cgroup/cpuset/iosim-shield-%d", (int) getpid ());
  /* Processes of the root cpuset cannot use the CPU; we still can. */
  g_assert_false (may_run_on (1, cpu));
  g_assert_false (may_run_on (parent, cpu));
  g_assert_true (may_run_on (0, cpu));
  if (wq_before != NULL)
    {
      wq_during = read_text (WQ_MASK);
      g_assert_cmpstr (wq_during, !=, wq_before);
    }
  g_assert_true (replay_setup_restore (setup, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (may_run_on (1, cpu), ==, init_before);
  g_assert_cmpint (may_run_on (parent, cpu), ==, parent_before);
  if (wq_before != NULL)
    {
      wq_after = read_text (WQ_MASK);
      g_assert_cmpstr (wq_after, ==, wq_before);
    }
  g_assert_false (g_file_test (shield, G_FILE_TEST_EXISTS));
}

/* A child isolates with a journal and dies by SIGKILL: the shield and the
 * masks stay; recovering the journal ("isolate" scope) undoes them. */
static void
test_isolate_sigkill (void)
{
  const char *scopes[] = { REPLAY_JOURNAL_SCOPE_ISOLATE, NULL };
  g_autofree char *jdir = NULL, *wq_before = read_text (WQ_MASK), *wq_after = NULL;
  g_autofree char *shield = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) left = NULL;
  int cpu = (int) g_get_num_processors () - 1;
  gboolean init_before, ok;
  int status;
  pid_t child;

  if (getuid () != 0 || cpu < 1)
    {
      g_test_skip ("needs root and two CPUs");
      return;
    }
  if (!g_file_test ("/sys/fs/cgroup/cpuset/cpuset.cpus", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no cgroup v1 cpuset at /sys/fs/cgroup/cpuset");
      return;
    }
  jdir = g_dir_make_tmp ("iosim-isolate-journal-XXXXXX", &error);
  g_assert_no_error (error);
  init_before = may_run_on (1, cpu);
  fflush (NULL);
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (int));
      ReplaySetup *setup = replay_setup_new ();
      ReplayJournal *j = replay_journal_create (jdir, "replay", scopes, NULL, NULL);

      g_array_append_val (cpus, cpu);
      if (j == NULL)
        _exit (3);
      replay_setup_set_journal (setup, j);
      if (!replay_setup_isolate (setup, cpus, NULL, NULL, NULL))
        _exit (4);
      raise (SIGKILL);
      _exit (5);
    }
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  shield = g_strdup_printf ("/sys/fs/cgroup/cpuset/iosim-shield-%d", (int) child);
  g_assert_true (g_file_test (shield, G_FILE_TEST_IS_DIR));
  g_assert_false (may_run_on (1, cpu));
  /* This process is in the shield now (the child moved it): recovery
   * moves it back too. */
  ok = replay_journal_recover (jdir, scopes, NULL, "test", stderr, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_false (g_file_test (shield, G_FILE_TEST_EXISTS));
  g_assert_cmpint (may_run_on (1, cpu), ==, init_before);
  if (wq_before != NULL)
    {
      wq_after = read_text (WQ_MASK);
      g_assert_cmpstr (wq_after, ==, wq_before);
    }
  left = replay_journal_list (jdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (left->len, ==, 0);
  g_assert_cmpint (rmdir (jdir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/isolate/real-machine", test_isolate_and_restore);
  g_test_add_func ("/replay/isolate/sigkill-then-recover", test_isolate_sigkill);
  return g_test_run ();
}
