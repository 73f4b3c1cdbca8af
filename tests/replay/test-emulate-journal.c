/* test-emulate-journal.c — the emulator's journal records: written and
 * read back; only TMP/iosim-emulate-XXXXXX directories and /dev/loopN
 * devices accepted (a journal is never a way to unmount or delete an
 * arbitrary path); a dead emulator's journal is cleaned up by recovery
 * (nothing left to undo: the steps are no-ops) while a live one is left
 * alone without refusing.  No root needed. */
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
  g_test_add ("/emulate/journal/recover-dead", Fixture, NULL, fixture_setup, test_recover_dead,
              fixture_teardown);
  return g_test_run ();
}
