/* test-emulate-journal.c — the emulator's journal records: written and
 * read back; only TMP/iosim-emulate-XXXXXX directories and /dev/loopN
 * devices accepted (a journal is never a way to unmount or delete an
 * arbitrary path); a dead emulator's journal is cleaned up by recovery
 * (nothing left to undo: the steps are no-ops) while a live one is left
 * alone without refusing.  The dirty limits: only the four vm.dirty_*
 * files accepted, and a restore writes back the member of each pair that
 * was in force (on a fake /proc tree).  No root needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay/replay-emulate.h"
#include "replay/replay-journal.h"
#include "replay/replay-safety.h"

#include <glib/gstdio.h>

typedef struct {
  char *journal_dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  GError *error = NULL;

  f->journal_dir = g_dir_make_tmp ("iosim-emujournal-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) files = replay_journal_list (f->journal_dir, NULL);

  for (guint i = 0; files && i < files->len; i++)
    unlink (files->pdata[i]);
  g_rmdir (f->journal_dir);
  g_free (f->journal_dir);
}

static char *
make_emulate_dir (void)
{
  g_autofree char *t = g_build_filename (g_get_tmp_dir (), REPLAY_EMULATE_DIR_PREFIX "XXXXXX", NULL);

  g_assert_nonnull (g_mkdtemp_full (t, 0700));
  return g_steal_pointer (&t);
}

static void
test_round_trip (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_emulate_dir ();
  g_autoptr (ReplayJournal) j = replay_journal_create_emulate (f->journal_dir, dir, TRUE, &error);
  g_autoptr (ReplayJournal) back = NULL;

  g_assert_no_error (error);
  g_assert_true (replay_journal_set_emulate_loop (j, "/dev/loop7", &error));
  g_assert_no_error (error);
  g_assert_false (replay_journal_set_emulate_loop (j, "/dev/sda", &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_clear_error (&error);
  back = replay_journal_load (replay_journal_file (j), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (replay_journal_kind (back), ==, "emulate");
  g_assert_cmpstr (replay_journal_emulate_dir (back), ==, dir);
  g_assert_cmpstr (replay_journal_emulate_loop (back), ==, "/dev/loop7");
  g_assert_true (replay_journal_emulate_temp_backing (back));
  g_assert_cmpuint (replay_journal_n_entries (back), ==, 0);
  g_assert_true (replay_journal_remove (j, &error));
  g_rmdir (dir);
}

static const char *const bad_dirs[] = {
  "/etc",
  "/",
  "/tmp",
  "/tmp/iosim-emulate-",
  "/tmp/iosim-emulate-ABC",
  "/tmp/iosim-emulate-ABCDEFG",
  "/tmp/iosim-emulate-AB/DEF",
  "/tmp/iosim-emulate-A.CDEF",
  "/tmp/other-ABCDEF",
  "/home/iosim-emulate-ABCDEF",
  "/tmp/x/iosim-emulate-ABCDEF",
  "/tmp/../etc/iosim-emulate-ABCDEF",
  "/tmp//iosim-emulate-ABCDEF",
  "/tmp/iosim-emulate-ABCDEF/",
  "tmp/iosim-emulate-ABCDEF",
};

static void
test_dir_allowed (void)
{
  g_assert_true (replay_journal_emulate_dir_allowed ("/tmp/iosim-emulate-Ab12Z9"));
  g_assert_true (replay_journal_emulate_dir_allowed ("/var/tmp/iosim-emulate-Ab12Z9"));
  for (guint i = 0; i < G_N_ELEMENTS (bad_dirs); i++)
    {
      g_test_message ("%s", bad_dirs[i]);
      g_assert_false (replay_journal_emulate_dir_allowed (bad_dirs[i]));
    }
  g_assert_true (replay_journal_loop_path_allowed ("/dev/loop0"));
  g_assert_true (replay_journal_loop_path_allowed ("/dev/loop123"));
  g_assert_false (replay_journal_loop_path_allowed ("/dev/loop"));
  g_assert_false (replay_journal_loop_path_allowed ("/dev/loop-control"));
  g_assert_false (replay_journal_loop_path_allowed ("/dev/loop0p1"));
  g_assert_false (replay_journal_loop_path_allowed ("/dev/sda"));
  g_assert_false (replay_journal_loop_path_allowed ("/dev/loop/../sda"));
}

/* A hand-written journal of a dead pid with these [journal] lines. */
static char *
write_journal (Fixture *f, const char *name, guint entries, const char *extra)
{
  g_autofree char *path = g_build_filename (f->journal_dir, name, NULL);
  g_autofree char *text = g_strdup_printf ("[journal]\nversion=1\nkind=emulate\npid=999999999\n"
                                           "start_time=1\nscopes=emulate;\ndevices=\nentries=%u\n%s",
                                           entries, extra);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return g_steal_pointer (&path);
}

typedef struct {
  const char *name;
  guint       entries;
  const char *extra;
} BadJournal;

static const BadJournal bad_journals[] = {
  { "dir-etc", 0, "emulate_dir=/etc\nemulate_loop=\nemulate_temp_backing=true\n" },
  { "dir-missing", 0, "emulate_loop=\nemulate_temp_backing=true\n" },
  { "loop-sda", 0, "emulate_dir=/tmp/iosim-emulate-ABCDEF\nemulate_loop=/dev/sda\n"
                   "emulate_temp_backing=false\n" },
#define SYSCTL_JOURNAL(path, old) \
  "emulate_dir=/tmp/iosim-emulate-ABCDEF\nemulate_loop=\nemulate_temp_backing=false\n" \
  "[entry 0]\npath=" path "\nold=" old "\ncompare=false\nmay_vanish=false\ncpuset=false\n"
  { "sysctl-swappiness", 1, SYSCTL_JOURNAL ("/proc/sys/vm/swappiness", "60") },
  { "sysctl-kernel", 1, SYSCTL_JOURNAL ("/proc/sys/kernel/dirty_bytes", "0") },
  { "sysctl-dotdot", 1, SYSCTL_JOURNAL ("/proc/sys/vm/../vm/dirty_bytes", "0") },
  { "sysctl-fs", 1, SYSCTL_JOURNAL ("/proc/sys/fs/file-max", "100") },
  { "sysctl-not-number", 1, SYSCTL_JOURNAL ("/proc/sys/vm/dirty_ratio", "20x") },
  { "sysctl-negative", 1, SYSCTL_JOURNAL ("/proc/sys/vm/dirty_ratio", "-1") },
  { "sysctl-too-many", 5, SYSCTL_JOURNAL ("/proc/sys/vm/dirty_ratio", "20") },
  { "entries", 1, "emulate_dir=/tmp/iosim-emulate-ABCDEF\nemulate_loop=\n"
                  "emulate_temp_backing=false\n[entry 0]\npath=/sys/block/loop0/queue/rotational\n"
                  "old=0\ncompare=false\nmay_vanish=false\ncpuset=false\n" },
};

static void
test_bad_journal (Fixture *f, gconstpointer data)
{
  const BadJournal *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_journal (f, "bad.journal", c->entries, c->extra);
  g_autoptr (ReplayJournal) j = NULL;

  j = replay_journal_load (path, NULL, &error);
  g_assert_null (j);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_test_message ("%s", error->message);
}

static const char *const good_sysctls[] = {
  "/proc/sys/vm/dirty_bytes", "/proc/sys/vm/dirty_ratio",
  "/proc/sys/vm/dirty_background_bytes", "/proc/sys/vm/dirty_background_ratio",
};
static const char *const bad_sysctls[] = {
  "/proc/sys/vm/swappiness", "/proc/sys/vm/dirty_expire_centisecs",
  "/proc/sys/vm/dirty_writeback_centisecs", "/proc/sys/vm/drop_caches",
  "/proc/sys/kernel/sysrq", "/proc/sys/vm", "/proc/sys/vm/", "/proc/sys/vm//dirty_bytes",
  "/proc/sys/vm/../vm/dirty_bytes", "/proc/sys/vm/dirty_bytes/x", "/sys/vm/dirty_bytes",
  "proc/sys/vm/dirty_bytes", "/proc/1/sys/vm/dirty_bytes", "/etc/dirty_bytes",
};

static void
test_sysctl_allowed (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (good_sysctls); i++)
    g_assert_true (replay_journal_sysctl_path_allowed (good_sysctls[i], NULL));
  for (guint i = 0; i < G_N_ELEMENTS (bad_sysctls); i++)
    {
      g_test_message ("%s", bad_sysctls[i]);
      g_assert_false (replay_journal_sysctl_path_allowed (bad_sysctls[i], NULL));
    }
  /* Never one of the replay's paths either (those journals are checked
   * by replay_journal_path_allowed, which has no /proc/sys). */
  for (guint i = 0; i < G_N_ELEMENTS (good_sysctls); i++)
    g_assert_false (replay_journal_path_allowed (good_sysctls[i], NULL, FALSE));
}

/* The originals of one pair, and which member a restore must write. */
typedef struct {
  const char *name;
  const char *bytes_file, *ratio_file;
  const char *old_bytes, *old_ratio;
  gboolean    bytes_in_force;
} PairCase;

static const PairCase pair_cases[] = {
  { "ratio-in-force", "dirty_bytes", "dirty_ratio", "0", "20", FALSE },
  { "bytes-in-force", "dirty_bytes", "dirty_ratio", "67108864", "0", TRUE },
  { "bg-ratio-in-force", "dirty_background_bytes", "dirty_background_ratio", "0", "10", FALSE },
  { "bg-bytes-in-force", "dirty_background_bytes", "dirty_background_ratio", "16777216", "0",
    TRUE },
};

static void
put (const char *vm, const char *name, const char *value)
{
  g_autofree char *path = g_build_filename (vm, name, NULL);
  g_autofree char *text = g_strconcat (value, "\n", NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static char *
get (const char *vm, const char *name)
{
  g_autofree char *path = g_build_filename (vm, name, NULL);
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strstrip (text);
}

/* Set a limit on a fake /proc, act as the kernel (the twin goes to 0),
 * then restore from the journal as `iosim restore` would: only the
 * member in force is written (a fake file takes 0, the kernel would
 * refuse it for dirty_bytes), the other keeps its run-time value. */
static void
test_sysctl_pair (Fixture *f, gconstpointer data)
{
  const PairCase *c = data;
  const guint64 lowered = 50331648;
  g_autoptr (GError) error = NULL;
  g_autofree char *proc = g_build_filename (f->journal_dir, "proc", NULL);
  g_autofree char *vm = g_build_filename (proc, "sys", "vm", NULL);
  g_autofree char *file = NULL, *text = NULL, *b = NULL, *r = NULL;
  g_autoptr (ReplayJournal) j = NULL;
  g_autoptr (ReplayJournal) back = NULL;
  const ReplayJournalRoots roots = { .proc_root = proc };
  const char *names[] = { "dirty_bytes", "dirty_ratio", "dirty_background_bytes",
                          "dirty_background_ratio" };
  gboolean bg = strstr (c->bytes_file, "background") != NULL;
  char *log_text = NULL;
  gsize log_len = 0;
  FILE *log;

  g_assert_cmpint (g_mkdir_with_parents (vm, 0700), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    put (vm, names[i], "7");
  put (vm, c->bytes_file, c->old_bytes);
  put (vm, c->ratio_file, c->old_ratio);
  j = replay_journal_create_emulate (f->journal_dir, "/tmp/iosim-emulate-PAIR00", FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (replay_emulate_sysctl_set (j, proc, bg ? 0 : lowered, bg ? lowered : 0, NULL,
                                            &error));
  g_assert_no_error (error);
  b = get (vm, c->bytes_file);
  g_assert_cmpstr (b, ==, "50331648");
  put (vm, c->ratio_file, "0");
  file = g_strdup (replay_journal_file (j));

  back = replay_journal_load (file, &roots, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (replay_journal_n_entries (back), ==, 2);
  /* Without the fake root the same journal is refused. */
  g_assert_null (replay_journal_load (file, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_clear_error (&error);

  log = open_memstream (&log_text, &log_len);
  g_assert_true (replay_journal_restore (back, TRUE, log, &error));
  g_assert_no_error (error);
  fclose (log);
  g_assert_nonnull (strstr (log_text, "would write back"));
  g_assert_nonnull (strstr (log_text, c->bytes_in_force ? c->bytes_file : c->ratio_file));
  free (log_text);
  g_free (r);
  r = get (vm, c->ratio_file);
  g_assert_cmpstr (r, ==, "0");                 /* dry run: nothing written */
  g_assert_true (g_file_test (file, G_FILE_TEST_EXISTS));

  g_assert_true (replay_journal_restore (back, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_free (b);
  g_free (r);
  b = get (vm, c->bytes_file);
  r = get (vm, c->ratio_file);
  if (c->bytes_in_force)
    {
      g_assert_cmpstr (b, ==, c->old_bytes);
      g_assert_cmpstr (r, ==, "0");
    }
  else
    {
      g_assert_cmpstr (r, ==, c->old_ratio);
      g_assert_cmpstr (b, ==, "50331648");      /* not written: the kernel zeroes it */
    }
  /* The other pair was never journaled nor touched. */
  g_free (text);
  text = get (vm, bg ? "dirty_bytes" : "dirty_background_bytes");
  g_assert_cmpstr (text, ==, "7");
  g_assert_false (g_file_test (file, G_FILE_TEST_EXISTS));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *p = g_build_filename (vm, names[i], NULL);
      unlink (p);
    }
  g_rmdir (vm);
  g_free (text);
  text = g_build_filename (proc, "sys", NULL);
  g_rmdir (text);
  g_rmdir (proc);
}

/* A value the kernel would not take (fake file that reads back
 * otherwise: a directory cannot be written) fails the set. */
static void
test_sysctl_not_taken (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *proc = g_build_filename (f->journal_dir, "proc", NULL);
  g_autofree char *vm = g_build_filename (proc, "sys", "vm", NULL);
  g_autofree char *ratio = g_build_filename (vm, "dirty_ratio", NULL);
  g_autofree char *bytes = g_build_filename (vm, "dirty_bytes", NULL);
  g_autofree char *sys = g_build_filename (proc, "sys", NULL);
  g_autoptr (ReplayJournal) j = NULL;

  g_assert_cmpint (g_mkdir_with_parents (bytes, 0700), ==, 0);
  g_assert_true (g_file_set_contents (ratio, "20\n", -1, NULL));
  j = replay_journal_create_emulate (f->journal_dir, "/tmp/iosim-emulate-PAIR01", FALSE, &error);
  g_assert_no_error (error);
  g_assert_false (replay_emulate_sysctl_set (j, proc, 1 << 20, 0, NULL, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  replay_journal_remove (j, NULL);
  unlink (ratio);
  g_rmdir (bytes);
  g_rmdir (vm);
  g_rmdir (sys);
  g_rmdir (proc);
}

/* A running emulator (here: our parent, start time unknown so a live
 * pid counts) whose journal holds dirty limits: a second one may not set
 * them, it would take the lowered values for the originals. */
static void
test_sysctl_one_owner (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *proc = g_build_filename (f->journal_dir, "proc", NULL);
  g_autofree char *vm = g_build_filename (proc, "sys", "vm", NULL);
  g_autofree char *extra = g_strdup_printf (
    "emulate_dir=/tmp/iosim-emulate-OTHER0\nemulate_loop=\nemulate_temp_backing=false\n"
    "[entry 0]\npath=%s/dirty_bytes\nold=0\ncompare=false\nmay_vanish=false\ncpuset=false\n",
    vm);
  g_autofree char *name = g_strdup_printf ("emulate-%d-0.journal", (int) getppid ());
  g_autofree char *path = g_build_filename (f->journal_dir, name, NULL);
  g_autofree char *text = g_strdup_printf ("[journal]\nversion=1\nkind=emulate\npid=%d\n"
                                           "start_time=0\nscopes=emulate;\ndevices=\n"
                                           "entries=1\n%s", (int) getppid (), extra);
  g_autoptr (ReplayJournal) j = NULL;

  g_assert_cmpint (g_mkdir_with_parents (vm, 0700), ==, 0);
  put (vm, "dirty_bytes", "33554432");
  put (vm, "dirty_ratio", "0");
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  j = replay_journal_create_emulate (f->journal_dir, "/tmp/iosim-emulate-PAIR02", FALSE, &error);
  g_assert_no_error (error);
  g_assert_false (replay_emulate_sysctl_set (j, proc, 50331648, 0, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpuint (replay_journal_n_entries (j), ==, 0);
  g_free (text);
  text = get (vm, "dirty_bytes");
  g_assert_cmpstr (text, ==, "33554432");
  /* Without limits of its own to set, the second emulator runs. */
  g_assert_true (replay_emulate_sysctl_set (j, proc, 0, 0, NULL, &error));
  g_assert_no_error (error);
  replay_journal_remove (j, NULL);
  unlink (path);
  g_free (text);
  text = g_build_filename (vm, "dirty_bytes", NULL);
  unlink (text);
  g_free (text);
  text = g_build_filename (vm, "dirty_ratio", NULL);
  unlink (text);
  g_rmdir (vm);
  g_free (text);
  text = g_build_filename (proc, "sys", NULL);
  g_rmdir (text);
  g_rmdir (proc);
}

static void
test_recover_dead (Fixture *f, gconstpointer data)
{
  const char *const scopes[] = { REPLAY_JOURNAL_SCOPE_EMULATE, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_emulate_dir ();
  g_autofree char *extra = g_strdup_printf ("emulate_dir=%s\nemulate_loop=/dev/loop999\n"
                                            "emulate_temp_backing=true\n", dir);
  g_autofree char *path = write_journal (f, "emulate-999999999-1.journal", 0, extra);
  g_autofree char *mnt = g_build_filename (dir, REPLAY_EMULATE_MOUNT_NAME, NULL);
  g_autofree char *backing = g_build_filename (dir, REPLAY_EMULATE_BACKING_NAME, NULL);
  g_autofree char *other = g_build_filename (dir, "not-ours", NULL);
  g_autoptr (ReplayJournal) live = NULL;

  g_assert_cmpint (g_mkdir (mnt, 0700), ==, 0);
  g_assert_true (g_file_set_contents (backing, "data", -1, NULL));
  /* A live emulator's journal (this process) does not make recovery refuse. */
  live = replay_journal_create_emulate (f->journal_dir, "/tmp/iosim-emulate-LIVE00", FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (replay_journal_recover (f->journal_dir, scopes, NULL, "test", NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (replay_journal_file (live), G_FILE_TEST_EXISTS));

  /* A file the emulator never makes stops the deletion (only backing and
   * mnt are removed, never a whole tree): the journal is kept. */
  g_free (dir);
  dir = make_emulate_dir ();
  g_free (extra);
  extra = g_strdup_printf ("emulate_dir=%s\nemulate_loop=\nemulate_temp_backing=true\n", dir);
  g_free (path);
  path = write_journal (f, "emulate-999999999-2.journal", 0, extra);
  g_free (other);
  other = g_build_filename (dir, "not-ours", NULL);
  g_assert_true (g_file_set_contents (other, "keep", -1, NULL));
  g_assert_false (replay_journal_recover (f->journal_dir, scopes, NULL, "test", NULL, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (g_file_test (other, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  unlink (other);
  unlink (path);
  g_rmdir (dir);
  replay_journal_remove (live, NULL);
}

/* Bad options of `iosim emulate` are refused before anything is made: a
 * clear message naming the option, a non-zero exit, no journal written. */
typedef struct {
  const char *name;
  const char *args[6];
  const char *says;
} BadOption;

static const BadOption bad_options[] = {
  { "size", { "--model", "disk-7200-sata", "--size", "lots" }, "--size: 'lots' is not a size" },
  { "no-size", { "--model", "disk-7200-sata" }, "--size" },
  { "model", { "--model", "nosuch", "--size", "1GiB" }, "model 'nosuch' not found" },
  { "direct-io", { "--model", "disk-7200-sata", "--size", "1GiB", "--direct-io", "maybe" },
    "--direct-io: 'maybe' is neither on nor off" },
  { "spin", { "--model", "disk-7200-sata", "--size", "1GiB", "--spin", "forever" },
    "--spin: 'forever' is not a time" },
  { "route", { "--model", "disk-7200-sata", "--size", "1GiB", "--route", "soon" },
    "--route: 'soon' is not a time" },
  { "dirty-bytes", { "--model", "disk-7200-sata", "--size", "1GiB", "--dirty-bytes", "0" },
    "--dirty-bytes: must be more than 0 bytes" },
};

static void
test_bad_option (Fixture *f, gconstpointer data)
{
  const BadOption *c = data;
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *dir_arg = g_strconcat ("--journal-dir=", f->journal_dir, NULL);
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) journals = NULL;
  int status = 0;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set (run through meson test)");
      return;
    }
  g_ptr_array_add (argv, (char *) bin);
  g_ptr_array_add (argv, "emulate");
  g_ptr_array_add (argv, dir_arg);
  for (guint i = 0; i < G_N_ELEMENTS (c->args) && c->args[i]; i++)
    g_ptr_array_add (argv, (char *) c->args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                               NULL, NULL, NULL, &err, &status, &error));
  g_assert_no_error (error);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  if (strstr (err, c->says) == NULL)
    g_error ("%s: stderr '%s' does not say '%s'", c->name, err, c->says);
  journals = replay_journal_list (f->journal_dir, NULL);
  g_assert_true (journals == NULL || journals->len == 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/emulate/journal/round-trip", Fixture, NULL, fixture_setup, test_round_trip,
              fixture_teardown);
  g_test_add_func ("/emulate/journal/dir-allowed", test_dir_allowed);
  for (guint i = 0; i < G_N_ELEMENTS (bad_journals); i++)
    {
      g_autofree char *p = g_strdup_printf ("/emulate/journal/bad/%s", bad_journals[i].name);
      g_test_add (p, Fixture, &bad_journals[i], fixture_setup, test_bad_journal, fixture_teardown);
    }
  g_test_add_func ("/emulate/journal/sysctl-allowed", test_sysctl_allowed);
  for (guint i = 0; i < G_N_ELEMENTS (pair_cases); i++)
    {
      g_autofree char *p = g_strdup_printf ("/emulate/journal/sysctl-pair/%s", pair_cases[i].name);
      g_test_add (p, Fixture, &pair_cases[i], fixture_setup, test_sysctl_pair, fixture_teardown);
    }
  g_test_add ("/emulate/journal/sysctl-not-taken", Fixture, NULL, fixture_setup,
              test_sysctl_not_taken, fixture_teardown);
  g_test_add ("/emulate/journal/sysctl-one-owner", Fixture, NULL, fixture_setup,
              test_sysctl_one_owner, fixture_teardown);
  g_test_add ("/emulate/journal/recover-dead", Fixture, NULL, fixture_setup, test_recover_dead,
              fixture_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (bad_options); i++)
    {
      g_autofree char *path = g_strdup_printf ("/emulate/cli/bad-option/%s", bad_options[i].name);
      g_test_add (path, Fixture, &bad_options[i], fixture_setup, test_bad_option, fixture_teardown);
    }
  return g_test_run ();
}
