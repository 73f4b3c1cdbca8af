/* test-replay-nfs-realdev.c — NFS capture replay on a real file system:
 * mkfs.ext4 on a loop device, mounted in a temporary directory, the stored
 * loopback capture replayed there with writes (files at their traced
 * names with the traced sizes, every operation without error, reads
 * hitting real blocks), the stored NFSv3 and NFSv2 captures with every
 * name procedure (CREATE, MKDIR, SYMLINK, LINK, RENAME, REMOVE, RMDIR)
 * replayed by name with eight workers on the recorded schedule, then the
 * `iosim replay` command on the same mount, and unmount.  Needs root,
 * /dev/loop-control, mkfs.ext4 and the stored captures; skips otherwise. */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "loopdev.h"
#include "replay/replay-nfs.h"

#define CAPTURE "generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap"
#define DEV_BYTES (64u << 20)

static char *
capture_path (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *path = dir ? g_build_filename (dir, CAPTURE, NULL) : NULL;

  if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("stored capture " CAPTURE " not available (IOSIM_SHARED_TESTDATA)");
      return NULL;
    }
  return g_steal_pointer (&path);
}

static gint64
file_size (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, REPLAY_NFS_SUBDIR, name, NULL);
  struct stat st;

  return stat (path, &st) == 0 ? st.st_size : -1;
}

static gboolean
run_command (const char *const *argv, char **out)
{
  g_autoptr (GError) error = NULL;
  int status = -1;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, NULL,
                     &status, &error))
    {
      g_test_message ("%s: %s", argv[0], error->message);
      return FALSE;
    }
  return g_spawn_check_wait_status (status, NULL);
}

static void
replay_on_mount (const char *capture, const char *mnt)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  ReplayNfsOptions opts;

  replay_nfs_options_init (&opts);
  opts.target_dir = mnt;
  opts.allow_write = TRUE;
  res = replay_nfs_run (capture, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
  g_assert_cmpuint (res->errors, ==, 0);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_READ], ==, 2);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_WRITE], ==, 2);
  g_assert_cmpuint (res->plan->n_by_kind[REPLAY_NFS_COMMIT], ==, 2);
  g_assert_cmpint (file_size (mnt, "f300k.bin"), ==, 300000);
  g_assert_cmpint (file_size (mnt, "small.bin"), ==, 3000);
  g_assert_cmpuint (res->plan->n_created, ==, 2);
  g_test_message ("ext4 on loop: %" G_GUINT64_FORMAT " ops, achieved %.0f ops/s, intended %.0f, "
                  "issue error p50 %" G_GINT64_FORMAT " ns p99 %" G_GINT64_FORMAT " ns",
                  res->ops, res->achieved_iops, res->intended_iops, res->issue_error_p50_ns,
                  res->issue_error_p99_ns);
}

/* The name procedures by name on ext4 (suricata-verify nfs3-01 and its
 * NFSv2 twin): the client creates "a", renames it "am", links "b" as
 * "bln", makes "blns" -> "b", makes "d" and "d/h", and removes them all;
 * on the recorded schedule with eight workers every operation succeeds or
 * fails as traced, and only the 11-byte "b" is left. */
static void
names_on_mount (const char *rel, const char *mnt)
{
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *capture = g_build_filename (shared, rel, NULL);
  g_autofree char *sub = g_build_filename (mnt, REPLAY_NFS_SUBDIR, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autoptr (GDir) d = NULL;
  ReplayNfsOptions opts;
  guint entries = 0;
  guint64 by_name;

  if (!g_file_test (capture, G_FILE_TEST_EXISTS))
    {
      g_test_message ("%s not available: name operations not replayed", rel);
      return;
    }
  replay_nfs_options_init (&opts);
  opts.target_dir = mnt;
  opts.allow_write = TRUE;
  opts.threads = 8;
  res = replay_nfs_run (capture, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->ops, ==, res->plan->ops->len);
  g_assert_cmpuint (res->errors, ==, 0);
  for (guint k = REPLAY_NFS_MKDIR; k <= REPLAY_NFS_SYMLINK; k++)
    g_assert_cmpuint (res->plan->n_by_kind[k], ==, 1);
  g_assert_cmpint (file_size (mnt, "b"), ==, 11);
  d = g_dir_open (sub, 0, NULL);
  while (g_dir_read_name (d) != NULL)
    entries++;
  g_assert_cmpuint (entries, ==, 1);
  by_name = res->plan->n_by_kind[REPLAY_NFS_CREATE] + res->plan->n_by_kind[REPLAY_NFS_REMOVE];
  for (guint k = REPLAY_NFS_MKDIR; k <= REPLAY_NFS_SYMLINK; k++)
    by_name += res->plan->n_by_kind[k];
  g_test_message ("ext4 on loop, %s: %" G_GUINT64_FORMAT " ops (%" G_GUINT64_FORMAT " by name), "
                  "issue error p50 %" G_GINT64_FORMAT " ns p99 %" G_GINT64_FORMAT " ns", rel, res->ops,
                  by_name, res->issue_error_p50_ns, res->issue_error_p99_ns);
}

/* The command: reads only (the files are recreated), --json. */
static void
cli_on_mount (const char *capture, const char *mnt)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autofree char *json = g_build_filename (mnt, "..", "replay.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  JsonObject *o;

  if (bin == NULL)
    return;
  {
    const char *argv[] = { bin, "replay", capture, "--target-dir", mnt, "--timing", "afap",
                           "--threads", "4", "--json", json, NULL };
    g_assert_true (run_command (argv, &out));
  }
  g_assert_nonnull (strstr (out, "NFS replay on"));
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (o, "errors"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (o, "skipped_writes"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "achieved_iops"), >, 0);
  g_unlink (json);
}

static void
test_ext4_loop (void)
{
  g_autofree char *capture = capture_path ();
  g_autofree char *reason = NULL;
  g_autofree char *mkfs = g_find_program_in_path ("mkfs.ext4");
  g_autofree char *mnt = NULL;
  g_autofree char *top = NULL;
  LoopDev *dev;

  if (capture == NULL)
    return;
  if (mkfs == NULL)
    {
      g_test_skip ("mkfs.ext4 not installed (e2fsprogs)");
      return;
    }
  dev = loopdev_new (DEV_BYTES, &reason);
  if (dev == NULL)
    {
      g_test_skip (reason);
      return;
    }
  {
    const char *argv[] = { mkfs, "-q", "-F", dev->path, NULL };
    g_assert_true (run_command (argv, NULL));
  }
  top = g_dir_make_tmp ("iosim-nfs-mnt-XXXXXX", NULL);
  mnt = g_build_filename (top, "mnt", NULL);
  g_assert_cmpint (g_mkdir (mnt, 0755), ==, 0);
  if (mount (dev->path, mnt, "ext4", 0, NULL) != 0)
    {
      g_autofree char *why = g_strdup_printf ("mount ext4: %s", g_strerror (errno));
      g_rmdir (mnt);
      g_rmdir (top);
      loopdev_free (dev);
      g_test_skip (why);
      return;
    }
  replay_on_mount (capture, mnt);
  names_on_mount ("nfs-pcap-suricata-verify/nfsv3-udp.pcap", mnt);
  names_on_mount ("nfs-pcap-suricata-verify/nfsv2-udp.pcap", mnt);
  cli_on_mount (capture, mnt);
  g_assert_cmpint (umount2 (mnt, 0), ==, 0);
  g_rmdir (mnt);
  g_rmdir (top);
  loopdev_free (dev);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay-nfs/realdev/ext4-loop", test_ext4_loop);
  return g_test_run ();
}
