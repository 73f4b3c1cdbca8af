/* test-replay-nfs-limits-realdev.c — hostile sizes in an NFS capture,
 * replayed by `iosim replay` onto a 64 MiB tmpfs mounted for the test in a
 * private temporary directory: a READ 1 TiB into a file and a WRITE of
 * 0xfffffff0 bytes, with 8 workers and --allow-write, leave the tmpfs
 * nearly empty (statvfs after), stay under 512 MiB resident (the JSON's
 * peak_rss_bytes and the kernel's ru_maxrss of the process), and the WRITE
 * is skipped and counted with its reason; READs needing more setup data
 * than the tmpfs holds are refused before anything is written.  Captures
 * are made by tests/bench/gen-nfs-pcap.py craft.  Needs root (mount),
 * python3 and IOSIM_BIN; skips otherwise.  Each case runs in a subprocess
 * so that the tmpfs is unmounted whatever the case does. */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "tests/test-tree.h"
#include "replay/replay-nfs.h"

#define TMPFS_BYTES   (G_GUINT64_CONSTANT (64) << 20)
#define RSS_LIMIT     (G_GUINT64_CONSTANT (512) << 20)
#define MOUNT_ENV     "IOSIM_TEST_NFS_TMPFS"
#define WRITE_SKIPPED "WRITE (count above the 1048576-byte NFSv3 limit)"

/* ---- helpers (run in the subprocess) ------------------------------------- */

/* tests/bench/gen-nfs-pcap.py craft @ops into @dir/@name. */
static char *
craft_capture (const char *dir, const char *name, const char *const *ops)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *gen = g_test_build_filename (G_TEST_DIST, "bench", "gen-nfs-pcap.py", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);
  int status = -1;

  g_assert_nonnull (python);
  g_ptr_array_add (argv, python);
  g_ptr_array_add (argv, gen);
  g_ptr_array_add (argv, (gpointer) "craft");
  g_ptr_array_add (argv, path);
  for (; *ops; ops++)
    g_ptr_array_add (argv, (gpointer) *ops);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return path;
}

typedef struct {
  int     status;           /* exit status, -1 if killed */
  guint64 maxrss_bytes;     /* the process's ru_maxrss (wait4) */
  char   *out, *err;
} IosimRun;

static void
iosim_run_clear (IosimRun *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* `iosim replay @capture --target-dir @dir --allow-write --threads 8
 * --timing afap --json @json`, waited for with wait4 so that its own peak
 * RSS is known; its output in @work. */
static IosimRun
run_replay (const char *work, const char *capture, const char *dir, const char *json)
{
  g_autofree char *out_path = g_build_filename (work, "out.txt", NULL);
  g_autofree char *err_path = g_build_filename (work, "err.txt", NULL);
  const char *bin = g_getenv ("IOSIM_BIN");
  const char *argv[] = { bin, "replay", capture, "--target-dir", dir, "--allow-write",
                         "--threads", "8", "--timing", "afap", "--json", json, NULL };
  IosimRun r = { -1, 0, NULL, NULL };
  struct rusage ru;
  int wstatus;
  pid_t pid;

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int o = open (out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      int e = open (err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (o < 0 || e < 0 || dup2 (o, 1) < 0 || dup2 (e, 2) < 0)
        _exit (127);
      execv (bin, (char **) argv);
      _exit (127);
    }
  g_assert_cmpint (wait4 (pid, &wstatus, 0, &ru), ==, pid);
  r.status = WIFEXITED (wstatus) ? WEXITSTATUS (wstatus) : -1;
  r.maxrss_bytes = (guint64) ru.ru_maxrss * 1024;
  g_assert_true (g_file_get_contents (out_path, &r.out, NULL, NULL));
  g_assert_true (g_file_get_contents (err_path, &r.err, NULL, NULL));
  g_test_message ("iosim replay: status %d, ru_maxrss %" G_GUINT64_FORMAT " bytes\n%s%s", r.status,
                  r.maxrss_bytes, r.out, r.err);
  return r;
}

static guint64
used_bytes (const char *mnt)
{
  struct statvfs st;

  g_assert_cmpint (statvfs (mnt, &st), ==, 0);
  return (guint64) (st.f_blocks - st.f_bfree) * st.f_frsize;
}

/* ---- the cases (subprocess bodies) ----------------------------------------- */

/* A READ at 1 TiB and a WRITE of 0xfffffff0 bytes in one file, a small
 * file read and written: the tmpfs is not filled, memory stays bounded,
 * the WRITE is skipped with its reason. */
static void
case_hostile_sizes (const char *mnt)
{
  static const char *const ops[] = {
    "lookup:big:fh-big", "read:fh-big:0x10000000000:4096", "write:fh-big:0:0xfffffff0",
    "lookup:small:fh-small", "read:fh-small:0:65536", "write:fh-small:0:65536", NULL,
  };
  g_autofree char *work = g_dir_make_tmp ("iosim-nfs-limits-XXXXXX", NULL);
  g_autofree char *capture = craft_capture (work, "hostile.pcap", ops);
  g_autofree char *json = g_build_filename (work, "r.json", NULL);
  g_autofree char *big = g_build_filename (mnt, REPLAY_NFS_SUBDIR, "big", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *o, *skipped;
  IosimRun r;
  struct stat st;

  g_assert_cmpuint (used_bytes (mnt), <, 1 << 20);
  r = run_replay (work, capture, mnt, json);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "skipped: 1 " WRITE_SKIPPED));
  /* the tmpfs holds the 68 KiB read (and the small WRITE), not 64 MiB */
  g_assert_cmpuint (used_bytes (mnt), <, 4 << 20);
  g_assert_cmpint (stat (big, &st), ==, 0);
  g_assert_cmpuint ((guint64) st.st_size, ==, (G_GUINT64_CONSTANT (1) << 40) + 4096);
  g_assert_cmpuint ((guint64) st.st_blocks * 512, <=, 1 << 20);
  g_assert_cmpuint (r.maxrss_bytes, >, 0);
  g_assert_cmpuint (r.maxrss_bytes, <, RSS_LIMIT);

  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (o, "threads"), ==, 8);
  g_assert_cmpint (json_object_get_int_member (o, "errors"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (o, "ops"), ==,
                   json_object_get_int_member (o, "planned_ops"));
  g_assert_cmpint (json_object_get_int_member (o, "setup_bytes"), ==, 4096 + 65536);
  g_assert_cmpint (json_object_get_int_member (o, "peak_rss_bytes"), >, 0);
  g_assert_cmpint (json_object_get_int_member (o, "peak_rss_bytes"), <, (gint64) RSS_LIMIT);
  g_assert_cmpint (json_object_get_int_member (o, "skipped_io_limit"), ==, 1);
  skipped = json_object_get_object_member (o, "skipped");
  g_assert_cmpint (json_object_get_int_member (skipped, WRITE_SKIPPED), ==, 1);
  g_assert_true (json_object_has_member (json_object_get_object_member (o, "operations"), "write"));
  iosim_run_clear (&r);
  test_remove_tree (work);
}

/* 80 READs of 1 MiB at distinct offsets: 80 MiB of setup data, under the
 * default --max-setup-bytes but more than the 64 MiB tmpfs holds:
 * refused before anything is written. */
static void
case_over_free_space (const char *mnt)
{
  g_autoptr (GPtrArray) ops = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *work = g_dir_make_tmp ("iosim-nfs-limits-XXXXXX", NULL);
  g_autofree char *capture = NULL;
  g_autofree char *json = g_build_filename (work, "r.json", NULL);
  g_autofree char *sub = g_build_filename (mnt, REPLAY_NFS_SUBDIR, NULL);
  g_autoptr (GDir) d = NULL;
  IosimRun r;

  g_ptr_array_add (ops, g_strdup ("lookup:many:fh-many"));
  for (guint k = 0; k < 80; k++)
    g_ptr_array_add (ops, g_strdup_printf ("read:fh-many:%u:1048576", k << 21));
  g_ptr_array_add (ops, NULL);
  capture = craft_capture (work, "over.pcap", (const char *const *) ops->pdata);
  r = run_replay (work, capture, mnt, json);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "83886080 bytes"));
  g_assert_nonnull (strstr (r.err, "free"));
  g_assert_nonnull (strstr (r.err, "nothing was written"));
  g_assert_cmpuint (used_bytes (mnt), <, 1 << 20);
  /* the replay directory exists (it is where the space was measured), empty */
  d = g_dir_open (sub, 0, NULL);
  g_assert_nonnull (d);
  g_assert_null (g_dir_read_name (d));
  iosim_run_clear (&r);
  test_remove_tree (work);
}

/* ---- the mount, around a subprocess ---------------------------------------- */

typedef struct {
  void (*body) (const char *mnt);
} TmpfsCase;

static const TmpfsCase hostile_sizes = { case_hostile_sizes };
static const TmpfsCase over_free_space = { case_over_free_space };

/* Mount a 64 MiB tmpfs in a private temporary directory, run @data's
 * case in a subprocess, unmount whatever it did, then check it passed. */
static void
test_on_tmpfs (gconstpointer data)
{
  const TmpfsCase *c = data;
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *dir = NULL;
  g_autofree char *mnt = NULL;
  g_autofree char *options = NULL;

  if (g_test_subprocess ())
    {
      c->body (g_getenv (MOUNT_ENV));
      return;
    }
  if (geteuid () != 0)
    {
      g_test_skip ("needs root (mounts a tmpfs)");
      return;
    }
  if (g_getenv ("IOSIM_BIN") == NULL)
    {
      g_test_skip ("IOSIM_BIN not set");
      return;
    }
  if (python == NULL)
    {
      g_test_skip ("python3 not installed (tests/bench/gen-nfs-pcap.py makes the captures)");
      return;
    }
  dir = g_dir_make_tmp ("iosim-nfs-tmpfs-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_assert_cmpint (chmod (dir, 0700), ==, 0);
  mnt = g_build_filename (dir, "mnt", NULL);
  g_assert_cmpint (g_mkdir (mnt, 0700), ==, 0);
  options = g_strdup_printf ("size=%" G_GUINT64_FORMAT ",mode=0755", TMPFS_BYTES);
  if (mount ("iosim-test", mnt, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
    {
      g_autofree char *why = g_strdup_printf ("cannot mount a tmpfs: %s", g_strerror (errno));
      g_rmdir (mnt);
      g_rmdir (dir);
      g_test_skip (why);
      return;
    }
  g_setenv (MOUNT_ENV, mnt, TRUE);
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (umount2 (mnt, 0) != 0)
    g_assert_cmpint (umount2 (mnt, MNT_DETACH), ==, 0);
  g_rmdir (mnt);
  g_rmdir (dir);
  g_unsetenv (MOUNT_ENV);
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/replay-nfs-limits/tmpfs/hostile-sizes", &hostile_sizes, test_on_tmpfs);
  g_test_add_data_func ("/replay-nfs-limits/tmpfs/setup-over-free-space", &over_free_space,
                        test_on_tmpfs);
  return g_test_run ();
}
