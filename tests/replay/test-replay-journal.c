/* test-replay-journal.c — the recovery journal (replay/replay-journal.h)
 * on a fake sysfs tree: a setup journaled by a process killed with
 * SIGKILL is restored by the next run and the journal removed; a journal
 * whose owner runs refuses; a reused pid (same pid, other start time) is
 * not taken for the owner; a disk name now held by another device is
 * skipped; corrupt journals and journals naming files
 * iosim does not write are reported, kept and never acted on; --dry-run
 * writes nothing; the start time is read past a command name holding
 * spaces and parentheses.  No device, no root. */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay-journal.h"
#include "replay/replay-setup.h"
#include "fake-sysfs.h"

typedef struct {
  char              *root;      /* fake tree */
  char              *queue;     /* root/block/fake0/queue */
  char              *jdir;      /* journal directory */
  ReplayJournalRoots roots;
  ReplayTarget       target;
} Fake;

static void
fake_setup (Fake *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->root = g_dir_make_tmp ("iosim-journal-XXXXXX", &error);
  g_assert_no_error (error);
  f->queue = g_build_filename (f->root, "block", "fake0", "queue", NULL);
  f->jdir = g_build_filename (f->root, "run", NULL);
  fake_queue_fill (f->queue);
  put (f->root, "block/fake0/dev", "250:7\n");
  put (f->root, "cgroup/blkio/blkio.throttle.read_bps_device", "");
  put (f->root, "etc/precious", "keep\n");
  f->roots.sys_root = f->root;
  f->roots.cgroup_root = g_build_filename (f->root, "cgroup", NULL);
  f->roots.irq_dir = g_build_filename (f->root, "irq", NULL);
  f->roots.workqueue_mask = g_build_filename (f->root, "wq", "cpumask", NULL);
  fake_target_init (&f->target, f->root);
}

static void
fake_teardown (Fake *f, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->root);
  g_free (f->queue);
  g_free (f->jdir);
  g_free ((char *) f->roots.cgroup_root);
  g_free ((char *) f->roots.irq_dir);
  g_free ((char *) f->roots.workqueue_mask);
  fake_target_clear (&f->target);
}

static char *
snapshot (Fake *f)
{
  const char *files[] = { "scheduler", "read_ahead_kb", "nr_requests", "rotational",
                          "iosched/read_expire" };
  g_autofree char *thr = get (f->root, "cgroup/blkio/blkio.throttle.read_bps_device");
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *v = get (f->queue, files[i]);
      const char *open = strchr (v, '[');
      g_autofree char *active = open ? g_strndup (open + 1, strcspn (open + 1, "]")) : g_strdup (v);
      g_string_append_printf (s, "%s=%s;", files[i], active);
    }
  /* A v1 rule of 0 is no rule. */
  g_string_append_printf (s, "throttle=%s", g_str_equal (thr, "250:7 0") ? "" : thr);
  return g_string_free (s, FALSE);
}

static guint
n_journals (const char *dir)
{
  g_autoptr (GPtrArray) files = replay_journal_list (dir, NULL);

  g_assert_nonnull (files);
  return files->len;
}

static FILE *
memlog (char **buf, gsize *len)
{
  *buf = NULL;
  *len = 0;
  return open_memstream (buf, len);
}

/* A process that journals a setup, applies it and dies by SIGKILL. */
static void
apply_then_die (Fake *f)
{
  const char *sched_set[] = { "read_expire=9", NULL };
  const char *queue_set[] = { "read_ahead_kb=4096", "rotational=1", NULL };
  g_autofree char *cg = g_build_filename (f->root, "cgroup", NULL);
  ReplaySetupSpec spec = { .scheduler = "kyber", .sched_set = sched_set,
                           .queue_set = queue_set, .throttle_read_bps = 5000, .cgroup_root = cg };
  int status;
  pid_t pid;

  fflush (NULL);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      const char *scopes[] = { "dev:250:7", NULL }, *devices[] = { "250:7 /dev/fake0", NULL };
      ReplaySetup *setup = replay_setup_new ();
      ReplayJournal *j = replay_journal_create (f->jdir, "replay", scopes, devices, NULL);

      if (j == NULL)
        _exit (3);
      replay_setup_set_journal (setup, j);
      if (!replay_setup_apply (setup, &spec, &f->target, NULL, NULL))
        _exit (4);
      raise (SIGKILL);
      _exit (5);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);
}

/* Killed: settings stay changed, the journal holds the originals; the
 * next run on the device restores them first and removes the journal. */
static void
test_killed_then_recovered (Fake *f, gconstpointer data)
{
  const char *scopes[] = { "dev:250:7", NULL };
  g_autofree char *before = snapshot (f), *during = NULL, *after = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (ReplayJournal) j = NULL;
  char *buf;
  gsize len;
  FILE *log;

  apply_then_die (f);
  during = snapshot (f);
  g_assert_cmpstr (during, !=, before);
  g_assert_nonnull (strstr (during, "scheduler=kyber;read_ahead_kb=4096"));
  files = replay_journal_list (f->jdir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (files->len, ==, 1);
  j = replay_journal_load (g_ptr_array_index (files, 0), &f->roots, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (replay_journal_kind (j), ==, "replay");
  g_assert_false (replay_journal_owner_alive (j, NULL));
  g_assert_cmpstr (replay_journal_devices (j)[0], ==, "250:7 /dev/fake0");
  /* scheduler, nr_requests and read_expire (the switch), read_expire
   * (--sched-set), rotational, read_ahead_kb (last), the throttle rule. */
  g_assert_cmpuint (replay_journal_n_entries (j), ==, 7);
  g_assert_cmpstr (replay_journal_entry (j, 0)->old_value, ==, "mq-deadline");
  g_assert_true (g_str_has_suffix (replay_journal_entry (j, 5)->path, "/read_ahead_kb"));
  g_assert_cmpstr (replay_journal_entry (j, 5)->old_value, ==, "128");
  g_assert_cmpstr (replay_journal_entry (j, 6)->old_value, ==, "250:7 0");

  /* Another device's run leaves it alone. */
  {
    const char *other[] = { "dev:8:0", NULL };
    g_assert_true (replay_journal_recover (f->jdir, other, &f->roots, "test", NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n_journals (f->jdir), ==, 1);
  }
  log = memlog (&buf, &len);
  g_assert_true (replay_journal_recover (f->jdir, scopes, &f->roots, "test", log, &error));
  g_assert_no_error (error);
  fclose (log);
  g_assert_nonnull (strstr (buf, "ended without restoring 7 settings"));
  g_assert_nonnull (strstr (buf, "restored and removed"));
  g_free (buf);
  after = snapshot (f);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (n_journals (f->jdir), ==, 0);
}

/* The disk name now belongs to another device: its files are skipped, not
 * given the old disk's settings. */
static void
test_device_changed (Fake *f, gconstpointer data)
{
  const char *scopes[] = { "dev:250:7", NULL };
  g_autofree char *during = NULL, *after = NULL;
  g_autoptr (GError) error = NULL;
  char *buf;
  gsize len;
  FILE *log;

  apply_then_die (f);
  during = snapshot (f);
  put (f->root, "block/fake0/dev", "250:8\n");
  log = memlog (&buf, &len);
  g_assert_true (replay_journal_recover (f->jdir, scopes, &f->roots, "test", log, &error));
  g_assert_no_error (error);
  fclose (log);
  g_assert_nonnull (strstr (buf, "fake0 is now device 250:8"));
  g_free (buf);
  after = snapshot (f);
  /* Only the throttle rule (not a disk's file) went back. */
  g_assert_true (g_str_has_prefix (after, "scheduler=kyber;read_ahead_kb=4096;"));
  g_assert_true (g_str_has_suffix (after, "throttle="));
  g_assert_cmpstr (after, !=, during);
  g_assert_cmpuint (n_journals (f->jdir), ==, 0);
}

/* --dry-run says what it would write, writes nothing, keeps the journal. */
static void
test_dry_run (Fake *f, gconstpointer data)
{
  g_autofree char *during = NULL, *after = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (ReplayJournal) j = NULL;
  char *buf;
  gsize len;
  FILE *log;

  apply_then_die (f);
  during = snapshot (f);
  files = replay_journal_list (f->jdir, &error);
  j = replay_journal_load (g_ptr_array_index (files, 0), &f->roots, &error);
  g_assert_no_error (error);
  log = memlog (&buf, &len);
  g_assert_true (replay_setup_restore_journal (j, TRUE, log, &error));
  g_assert_no_error (error);
  fclose (log);
  g_assert_nonnull (strstr (buf, "would write 'mq-deadline' to "));
  g_assert_nonnull (strstr (buf, "would write '128' to "));
  g_free (buf);
  after = snapshot (f);
  g_assert_cmpstr (after, ==, during);
  g_assert_cmpuint (n_journals (f->jdir), ==, 1);
  g_assert_true (replay_setup_restore_journal (j, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_journals (f->jdir), ==, 0);
}

/* A journal file as another process would have left it. */
static void
write_journal (Fake *f, const char *name, gint64 pid, guint64 start, const char *path,
               const char *old)
{
  g_autofree char *text = g_strdup_printf (
    "[journal]\nversion=1\nkind=replay\npid=%" G_GINT64_FORMAT "\nstart_time=%" G_GUINT64_FORMAT
    "\nscopes=dev:250:7;\ndevices=250:7 /dev/fake0;\nentries=1\n\n"
    "[entry 0]\npath=%s\nold=%s\ncompare=true\nmay_vanish=false\ncpuset=false\n",
    pid, start, path, old);

  g_assert_cmpint (g_mkdir_with_parents (f->jdir, 0700), ==, 0);
  put (f->jdir, name, text);
}

/* Owner alive (our parent, with its real start time): refused, nothing
 * written; the same pid with another start time is a reused pid: stale. */
static void
test_alive_and_reused_pid (Fake *f, gconstpointer data)
{
  const char *scopes[] = { "dev:250:7", NULL };
  g_autofree char *ra_path = g_build_filename (f->queue, "read_ahead_kb", NULL);
  g_autofree char *ra = NULL;
  g_autoptr (GError) error = NULL;
  pid_t parent = getppid ();
  guint64 start = replay_journal_start_time (parent, NULL);

  g_assert_cmpuint (start, >, 0);
  write_journal (f, "replay-alive.journal", parent, start, ra_path, "77");
  g_assert_false (replay_journal_recover (f->jdir, scopes, &f->roots, "test", NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "another iosim replay"));
  g_assert_nonnull (strstr (error->message, "250:7 /dev/fake0"));
  g_clear_error (&error);
  ra = get (f->queue, "read_ahead_kb");
  g_assert_cmpstr (ra, ==, "128");
  g_assert_cmpuint (n_journals (f->jdir), ==, 1);

  write_journal (f, "replay-alive.journal", parent, start + 1, ra_path, "77");
  g_assert_true (replay_journal_recover (f->jdir, scopes, &f->roots, "test", NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&ra, g_free);
  ra = get (f->queue, "read_ahead_kb");
  g_assert_cmpstr (ra, ==, "77");
  g_assert_cmpuint (n_journals (f->jdir), ==, 0);
}

/* This process's own journal is never recovered from under it. */
static void
test_own_journal_skipped (Fake *f, gconstpointer data)
{
  const char *scopes[] = { "dev:250:7", NULL };
  g_autofree char *ra_path = g_build_filename (f->queue, "read_ahead_kb", NULL);
  g_autofree char *ra = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayJournal) j = replay_journal_create (f->jdir, "replay", scopes, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (replay_journal_add (j, ra_path, "77", REPLAY_JOURNAL_COMPARE, &error));
  g_assert_true (replay_journal_is_own (j, NULL));
  g_assert_true (replay_journal_recover (f->jdir, scopes, &f->roots, "test", NULL, &error));
  g_assert_no_error (error);
  ra = get (f->queue, "read_ahead_kb");
  g_assert_cmpstr (ra, ==, "128");
  g_assert_true (replay_journal_remove (j, &error));
  g_assert_cmpuint (n_journals (f->jdir), ==, 0);
}

/* Journals that must not be trusted: @ROOT@ stands for the fake tree. */
typedef struct {
  const char *name;
  const char *text;
  const char *why;     /* in the error */
} BadJournal;

#define HDR(entries) "[journal]\nversion=1\nkind=replay\npid=999999999\nstart_time=1\n" \
                     "scopes=dev:250:7;\ndevices=250:7 /dev/fake0;\nentries=" entries "\n"
#define ENTRY(path, old) "[entry 0]\npath=" path "\nold=" old "\ncompare=true\n" \
                         "may_vanish=false\ncpuset=false\n"

static const BadJournal bad_journals[] = {
  { "not-keyfile", "this is not a journal\n", "not a key file" },
  { "no-pid", "[journal]\nversion=1\nkind=replay\nstart_time=1\nscopes=dev:250:7;\n"
              "devices=;\nentries=0\n", "pid" },
  { "version", "[journal]\nversion=2\nkind=replay\npid=5\nstart_time=1\nscopes=dev:250:7;\n"
               "devices=;\nentries=0\n", "unknown version" },
  { "kind", "[journal]\nversion=1\nkind=rm\npid=5\nstart_time=1\nscopes=dev:250:7;\n"
            "devices=;\nentries=0\n", "kind" },
  { "negative-pid", "[journal]\nversion=1\nkind=replay\npid=-4\nstart_time=1\n"
                    "scopes=dev:250:7;\ndevices=;\nentries=0\n", "pid out of range" },
  { "missing-entry", HDR ("2") ENTRY ("@ROOT@/block/fake0/queue/read_ahead_kb", "7"),
    "[entry 1]" },
  { "outside", HDR ("1") ENTRY ("@ROOT@/etc/precious", "owned"), "not one iosim writes" },
  { "absolute-etc", HDR ("1") ENTRY ("/etc/passwd", "x"), "not one iosim writes" },
  { "dotdot", HDR ("1") ENTRY ("@ROOT@/block/fake0/queue/../../../etc/precious", "owned"),
    "not one iosim writes" },
  { "relative", HDR ("1") ENTRY ("block/fake0/queue/read_ahead_kb", "7"),
    "not one iosim writes" },
  { "trace-attr", HDR ("1") ENTRY ("@ROOT@/block/fake0/trace/evil", "1"),
    "not one iosim writes" },
  { "newline-value", HDR ("1") ENTRY ("@ROOT@/block/fake0/queue/read_ahead_kb", "7\\nrm"),
    "not one line" },
  { "cpuset-not-shield", HDR ("1") "[entry 0]\npath=@ROOT@/cgroup/cpuset/system\n"
    "old=@ROOT@/cgroup/cpuset/cgroup.procs\ncompare=false\nmay_vanish=false\ncpuset=true\n",
    "not one iosim writes" },
  { "cpuset-target", HDR ("1") "[entry 0]\npath=@ROOT@/cgroup/cpuset/iosim-shield-12\n"
    "old=@ROOT@/etc/precious\ncompare=false\nmay_vanish=false\ncpuset=true\n",
    "not a cgroup.procs" },
};

/* Reported with the file's name, kept, nothing written, and a run that
 * recovers goes on. */
static void
test_bad_journal (Fake *f, gconstpointer data)
{
  const BadJournal *bad = data;
  const char *scopes[] = { "dev:250:7", NULL };
  g_auto (GStrv) parts = g_strsplit (bad->text, "@ROOT@", -1);
  g_autofree char *text = g_strjoinv (f->root, parts);
  g_autofree char *name = g_strdup_printf ("replay-%s.journal", bad->name);
  g_autofree char *file = g_build_filename (f->jdir, name, NULL);
  g_autofree char *before = snapshot (f), *after = NULL, *precious = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayJournal) j = NULL;
  char *buf;
  gsize len;
  FILE *log;

  g_assert_cmpint (g_mkdir_with_parents (f->jdir, 0700), ==, 0);
  put (f->jdir, name, text);
  j = replay_journal_load (file, &f->roots, &error);
  g_assert_null (j);
  g_assert_nonnull (error);
  g_test_message ("%s: %s", bad->name, error->message);
  g_assert_nonnull (strstr (error->message, file));
  g_assert_nonnull (strstr (error->message, bad->why));
  log = memlog (&buf, &len);
  g_assert_true (replay_journal_recover (f->jdir, scopes, &f->roots, "test", log, NULL));
  fclose (log);
  g_assert_nonnull (strstr (buf, "warning"));
  g_assert_nonnull (strstr (buf, file));
  g_free (buf);
  g_assert_true (g_file_test (file, G_FILE_TEST_EXISTS));
  after = snapshot (f);
  g_assert_cmpstr (after, ==, before);
  precious = get (f->root, "etc/precious");
  g_assert_cmpstr (precious, ==, "keep");
}

/* A journal directory others may write is refused: they could plant one. */
static void
test_dir_refused (Fake *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayJournal) j = NULL;

  g_assert_cmpint (g_mkdir_with_parents (f->jdir, 0700), ==, 0);
  g_assert_cmpint (chmod (f->jdir, 0777), ==, 0);
  j = replay_journal_create (f->jdir, "replay", NULL, NULL, &error);
  g_assert_null (j);
  g_assert_nonnull (strstr (error->message, "refusing"));
  g_clear_error (&error);
  g_assert_null (replay_journal_list (f->jdir, &error));
  g_assert_nonnull (error);
}

/* Written journals read back as written (a round trip through the file). */
static void
test_round_trip (Fake *f, gconstpointer data)
{
  const char *scopes[] = { "dev:250:7", REPLAY_JOURNAL_SCOPE_ISOLATE, NULL };
  const char *devices[] = { "250:7 /dev/fake0", NULL };
  g_autofree char *ra = g_build_filename (f->queue, "read_ahead_kb", NULL);
  g_autofree char *tun = g_build_filename (f->queue, "iosched", "read_expire", NULL);
  g_autofree char *shield = g_build_filename (f->root, "cgroup", "cpuset", "iosim-shield-42", NULL);
  g_autofree char *procs = g_build_filename (f->root, "cgroup", "cpuset", "cgroup.procs", NULL);
  g_autofree char *irq = g_build_filename (f->root, "irq", "17", "smp_affinity", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayJournal) j = replay_journal_create (f->jdir, "replay", scopes, devices, &error);
  g_autoptr (ReplayJournal) back = NULL;
  const char *sched_scope[] = { REPLAY_JOURNAL_SCOPE_ISOLATE, NULL };
  const char *capture_scope[] = { REPLAY_JOURNAL_SCOPE_TRACEFS, NULL };

  g_assert_no_error (error);
  g_assert_true (replay_journal_add (j, ra, "128", REPLAY_JOURNAL_COMPARE, &error));
  g_assert_true (replay_journal_add (j, tun, "a value; with = signs",
                                     REPLAY_JOURNAL_COMPARE | REPLAY_JOURNAL_MAY_VANISH, &error));
  g_assert_true (replay_journal_add (j, shield, procs, REPLAY_JOURNAL_CPUSET, &error));
  g_assert_true (replay_journal_add (j, irq, "ff,ffffffff", REPLAY_JOURNAL_COMPARE, &error));
  back = replay_journal_load (replay_journal_file (j), &f->roots, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (replay_journal_n_entries (back), ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      const ReplayJournalEntry *a = replay_journal_entry (j, i), *b = replay_journal_entry (back, i);
      g_assert_cmpstr (a->path, ==, b->path);
      g_assert_cmpstr (a->old_value, ==, b->old_value);
      g_assert_cmpuint (a->flags, ==, b->flags);
    }
  g_assert_cmpint (replay_journal_pid (back), ==, getpid ());
  g_assert_true (replay_journal_owner_alive (back, NULL));
  g_assert_true (replay_journal_claims_any (back, sched_scope));
  g_assert_false (replay_journal_claims_any (back, capture_scope));
  g_assert_true (replay_journal_remove (j, &error));
  g_assert_false (g_file_test (replay_journal_file (j), G_FILE_TEST_EXISTS));
}

/* Field 22 of /proc/PID/stat, counted from the last ')' of the name. */
static void
test_start_time (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *proc = g_dir_make_tmp ("iosim-proc-XXXXXX", &error);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", proc);
  ReplayJournalRoots roots = { .proc_root = proc };

  g_assert_no_error (error);
  put (proc, "123/stat", "123 (a b) c) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
                         "4242 1000 10 18446744073709551615\n");
  put (proc, "124/stat", "124 (short\n");
  g_assert_cmpuint (replay_journal_start_time (123, &roots), ==, 4242);
  g_assert_cmpuint (replay_journal_start_time (124, &roots), ==, 0);
  g_assert_cmpuint (replay_journal_start_time (125, &roots), ==, 0);
  g_assert_cmpuint (replay_journal_start_time (getpid (), NULL), >, 0);
  g_assert_cmpuint (replay_journal_start_time (getpid (), NULL), ==,
                    replay_journal_start_time (getpid (), NULL));
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn, data) g_test_add (path, Fake, data, fake_setup, fn, fake_teardown)
  ADD ("/replay/journal/killed-then-recovered", test_killed_then_recovered, NULL);
  ADD ("/replay/journal/dry-run", test_dry_run, NULL);
  ADD ("/replay/journal/device-changed", test_device_changed, NULL);
  ADD ("/replay/journal/alive-and-reused-pid", test_alive_and_reused_pid, NULL);
  ADD ("/replay/journal/own-journal-skipped", test_own_journal_skipped, NULL);
  ADD ("/replay/journal/dir-refused", test_dir_refused, NULL);
  ADD ("/replay/journal/round-trip", test_round_trip, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (bad_journals); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/journal/bad/%s", bad_journals[i].name);
      ADD (path, test_bad_journal, &bad_journals[i]);
    }
#undef ADD
  g_test_add_func ("/replay/journal/start-time", test_start_time);
  return g_test_run ();
}
