/* test-replay-file-target.c — regular files as replay targets, with real
 * files and real I/O in a temporary directory (no root needed): the size
 * bound and its refusal naming the byte the trace reaches, --target-size
 * creating or extending a file and never writing beyond it, writes only
 * with allow_write and only where the plan puts them, the signature check,
 * a file backing a loop device (fake sysfs tree), the same file twice,
 * O_DIRECT alignment, a dry run that touches nothing, tmpfs (in memory:
 * a warning), and the buffered fallback where the file system refuses
 * O_DIRECT (ramfs, mounted in a private mount namespace; skipped where
 * this process cannot create one). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "replay/replay.h"
#include "replay/replay-targets.h"
#include "plan-ios.h"

#define KIB 1024u
#define MS (G_GINT64_CONSTANT (1000000))
#define FILL_BYTE 0x11

static TraceIo
mkio (guint32 pid, TraceOp op, guint64 sector, guint32 nr_sectors, gint64 queue_ns)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.pid = pid;
  io.op = op;
  io.sector = sector;
  io.nr_sectors = nr_sectors;
  io.queue_ns = queue_ns;
  io.issue_ns = -1;
  io.complete_ns = -1;
  io.no_completion = TRUE;
  return io;
}

typedef struct {
  char *dir;
  char *file;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const char *base = data;

  f->dir = base != NULL ? g_build_filename (base, "iosim-filetarget-XXXXXX", NULL) : NULL;
  if (f->dir != NULL && g_mkdtemp (f->dir) == NULL)
    g_clear_pointer (&f->dir, g_free);
  if (f->dir == NULL && base == NULL)
    {
      f->dir = g_dir_make_tmp ("iosim-filetarget-XXXXXX", &error);
      g_assert_no_error (error);
    }
  if (f->dir != NULL)
    f->file = g_build_filename (f->dir, "target.img", NULL);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  if (f->dir == NULL)
    return;
  g_unlink (f->file);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->file);
}

/* A file of @bytes, every byte FILL_BYTE. */
static void
write_filled (const char *path, gsize bytes)
{
  g_autofree guint8 *data = g_malloc (bytes);
  g_autoptr (GError) error = NULL;

  memset (data, FILL_BYTE, bytes);
  g_file_set_contents (path, (const char *) data, (gssize) bytes, &error);
  g_assert_no_error (error);
}

static guint64
file_size (const char *path)
{
  struct stat st;

  g_assert_cmpint (stat (path, &st), ==, 0);
  return (guint64) st.st_size;
}

static gboolean
has_warning (const ReplayResult *result, const char *part)
{
  for (guint i = 0; i < result->warnings->len; i++)
    if (strstr (g_ptr_array_index (result->warnings, i), part) != NULL)
      return TRUE;
  return FALSE;
}

/* The trace reaches 1 MiB, the file has 64 KiB: refused before anything
 * is opened, naming the byte reached and the ways out; the file is as
 * it was. */
static void
test_beyond_end (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_READ, 0, 8, 0),
    mkio (1, TRACE_OP_READ, 2040, 8, 1 * MS),   /* ends at byte 1048576 */
    mkio (1, TRACE_OP_READ, 8, 8, 2 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autofree char *contents = NULL;
  gsize len;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 64 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "has 65536 bytes"));
  g_assert_nonnull (strstr (error->message, "reaches byte 1048576"));
  g_assert_nonnull (strstr (error->message, "sector 2040"));
  g_assert_nonnull (strstr (error->message, "--target-size 1048576"));
  g_assert_cmpuint (file_size (f->file), ==, 64 * KIB);
  g_assert_true (g_file_get_contents (f->file, &contents, &len, NULL));
  for (gsize i = 0; i < len; i++)
    g_assert_cmpint ((guint8) contents[i], ==, FILL_BYTE);
}

/* --target-size on a shorter file extends it (sparse) and the replay
 * runs; the read in the added part is said to read a hole. */
static void
test_extend (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_READ, 0, 8, 0),
    mkio (1, TRACE_OP_READ, 2040, 8, 1 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 64 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  opts.target_size_bytes = 1 << 20;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 2);
  g_assert_cmpuint (result->errors, ==, 0);
  g_assert_true (result->target.is_file);
  g_assert_cmpuint (result->target.size_bytes, ==, 1 << 20);
  g_assert_cmpuint (file_size (f->file), ==, 1 << 20);
  g_assert_true (has_warning (result, "1 of the 2 reads start in a hole"));
}

/* A sparse file made beforehand (truncate, then 4 KiB written at 0):
 * the read of the unwritten part is said to read a hole, the other not;
 * a file written throughout gives no such warning. */
static void
test_sparse_file (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_READ, 0, 8, 0),
    mkio (1, TRACE_OP_READ, 1024, 8, 1 * MS),   /* byte 524288 */
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  guint8 page[4096];
  ReplayOptions opts;
  int fd;

  (void) data;
  memset (page, FILL_BYTE, sizeof page);
  fd = open (f->file, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, page, sizeof page, 0), ==, sizeof page);
  g_assert_cmpint (ftruncate (fd, 1 << 20), ==, 0);
  g_assert_cmpint (fsync (fd), ==, 0);
  close (fd);
  replay_options_init (&opts);
  opts.target = f->file;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 2);
  g_assert_true (has_warning (result, "1 of the 2 reads start in a hole"));
  g_clear_pointer (&result, replay_result_free);

  write_filled (f->file, 1 << 20);
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_false (has_warning (result, "in a hole"));
}

/* --target-size below the file's size: the replay uses that much of it
 * and never writes beyond (even wrapping), and the file is not shrunk. */
static void
test_size_limits (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_WRITE, 0, 8, 0),
    mkio (1, TRACE_OP_WRITE, 256, 8, 1 * MS),   /* bytes [131072, 135168) */
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autofree char *contents = NULL;
  gsize len;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 256 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  opts.target_size_bytes = 64 * KIB;
  opts.allow_write = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "has 65536 bytes (--target-size)"));
  g_assert_nonnull (strstr (error->message, "reaches byte 135168"));
  g_clear_error (&error);

  opts.wrap = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 2);
  g_assert_cmpuint (result->plan->wrapped, >=, 1);
  g_assert_cmpuint (file_size (f->file), ==, 256 * KIB);
  g_assert_true (g_file_get_contents (f->file, &contents, &len, NULL));
  for (gsize i = 64 * KIB; i < len; i++)
    g_assert_cmpint ((guint8) contents[i], ==, FILL_BYTE);
  g_assert_cmpint ((guint8) contents[0], ==, 0x5a);
}

/* A missing file: refused without --target-size, created with it; a
 * dry run creates nothing. */
static void
test_create (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = { mkio (1, TRACE_OP_READ, 0, 8, 0) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  ReplayOptions opts;

  (void) data;
  replay_options_init (&opts);
  opts.target = f->file;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);
  g_assert_nonnull (strstr (error->message, "--target-size"));
  g_clear_error (&error);

  opts.target_size_bytes = 128 * KIB;
  opts.dry_run = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_true (result->dry_run);
  g_assert_false (g_file_test (f->file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&result, replay_result_free);

  opts.dry_run = FALSE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 1);
  g_assert_cmpuint (file_size (f->file), ==, 128 * KIB);
}

/* Writes need allow_write; with it they land exactly where the plan put
 * them (the replay's 0x5a pattern) and nowhere else. */
static void
test_writes_in_place (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_WRITE, 16, 8, 0),        /* bytes [8192, 12288) */
    mkio (2, TRACE_OP_WRITE, 64, 16, 1 * MS),  /* bytes [32768, 40960) */
    mkio (1, TRACE_OP_READ, 0, 8, 2 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autofree char *contents = NULL;
  gsize len;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 64 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES);
  g_clear_error (&error);

  opts.allow_write = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 3);
  g_assert_cmpuint (result->errors, ==, 0);
  g_assert_true (g_file_get_contents (f->file, &contents, &len, NULL));
  g_assert_cmpuint (len, ==, 64 * KIB);
  for (gsize i = 0; i < len; i++)
    {
      gboolean written = (i >= 8192 && i < 12288) || (i >= 32768 && i < 40960);
      g_assert_cmpint ((guint8) contents[i], ==, written ? 0x5a : FILL_BYTE);
    }
}

/* A file holding a signature (a swap area's, at the end of its first
 * page) is not written without force. */
static void
test_signature (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = { mkio (1, TRACE_OP_WRITE, 64, 8, 0) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autofree char *contents = NULL;
  gsize len;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 64 * KIB);
  g_assert_true (g_file_get_contents (f->file, &contents, &len, NULL));
  /* libblkid's swap probe: version 1 and a last page at byte 1024 (the
   * header after the boot bits), the magic in the last 10 bytes of the
   * first 4 KiB page. */
  memset (contents + 1024, 0, 1024);
  contents[1024] = 1;
  contents[1028] = 15;
  memcpy (contents + 4096 - 10, "SWAPSPACE2", 10);
  g_assert_true (g_file_set_contents (f->file, contents, (gssize) len, NULL));
  replay_options_init (&opts);
  opts.target = f->file;
  opts.allow_write = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "swap"));
  g_clear_error (&error);

  opts.force = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 1);
}

/* A file that a loop device names as its backing file is refused (a
 * fake sysfs tree stands in for /sys); another file is not. */
static void
test_loop_backing (Fixture *f, gconstpointer data)
{
  g_autofree char *sysfs = g_build_filename (f->dir, "sys", NULL);
  g_autofree char *loop_dir = g_build_filename (sysfs, "block", "loop9", "loop", NULL);
  g_autofree char *backing = g_build_filename (loop_dir, "backing_file", NULL);
  g_autofree char *other = g_build_filename (f->dir, "other.img", NULL);
  g_autofree char *line = g_strdup_printf ("%s\n", f->file);
  g_autoptr (GError) error = NULL;
  ReplayTarget t;

  (void) data;
  write_filled (f->file, 8 * KIB);
  write_filled (other, 8 * KIB);
  g_assert_cmpint (g_mkdir_with_parents (loop_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (backing, line, -1, NULL));

  g_assert_true (replay_target_probe_file (f->file, 0, &t, &error));
  g_assert_false (replay_target_check_file_unused (&t, sysfs, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "loop9"));
  g_clear_error (&error);
  replay_target_clear (&t);

  g_assert_true (replay_target_probe_file (other, 0, &t, &error));
  g_assert_true (replay_target_check_file_unused (&t, sysfs, &error));
  g_assert_no_error (error);
  replay_target_clear (&t);

  g_unlink (backing);
  g_unlink (other);
  g_rmdir (loop_dir);
  g_clear_pointer (&loop_dir, g_free);
  loop_dir = g_build_filename (sysfs, "block", "loop9", NULL);
  g_rmdir (loop_dir);
  g_clear_pointer (&loop_dir, g_free);
  loop_dir = g_build_filename (sysfs, "block", NULL);
  g_rmdir (loop_dir);
  g_rmdir (sysfs);
}

/* Two traced devices mapped onto one file (two names for it) are
 * refused; a FIFO is no target. */
static void
test_same_file_twice (Fixture *f, gconstpointer data)
{
  g_autofree char *link_path = g_build_filename (f->dir, "link.img", NULL);
  const TraceIo in[] = { mkio (1, TRACE_OP_READ, 0, 8, 0) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  ReplayMap maps[2] = { { 0, 0, f->file }, { 0, 1, link_path } };
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 8 * KIB);
  g_assert_cmpint (link (f->file, link_path), ==, 0);
  replay_options_init (&opts);
  opts.maps = maps;
  opts.n_maps = 2;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_null (result);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);
  g_assert_nonnull (strstr (error->message, "same file"));
  g_clear_error (&error);
  g_unlink (link_path);

  /* A FIFO is neither a block device nor a file target. */
  {
    g_autofree char *fifo = g_build_filename (f->dir, "fifo", NULL);
    ReplayTarget t;

    g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
    g_assert_false (replay_target_path_is_file (fifo));
    g_assert_true (replay_target_path_is_file (f->file));
    g_assert_false (replay_target_probe_file (fifo, 0, &t, &error));
    g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);
    g_assert_nonnull (strstr (error->message, "neither a block device nor a regular file"));
    replay_target_clear (&t);
    g_unlink (fifo);
  }
}

/* The plan aligns to the file's direct-I/O alignment (STATX_DIOALIGN):
 * an I/O at sector 1 of one sector is moved where that is above 512
 * bytes, and every I/O succeeds under O_DIRECT. */
static void
test_alignment (Fixture *f, gconstpointer data)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_READ, 1, 1, 0),
    mkio (1, TRACE_OP_READ, 24, 8, 1 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  guint32 block;
  ReplayOptions opts;

  (void) data;
  write_filled (f->file, 64 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  block = result->target.logical_block_bytes;
  g_assert_cmpuint (block, >=, 512);
  g_assert_cmpuint (block & (block - 1), ==, 0);
  /* Sector 1 is aligned only where the file system takes 512-byte
   * direct I/O. */
  g_test_message ("direct-I/O alignment of %s: %u bytes", f->file, block);
  g_assert_cmpuint (result->plan->aligned, ==, block > 512 ? 1 : 0);
  g_assert_cmpuint (result->errors, ==, 0);
  g_assert_cmpuint (result->ios, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      const ReplayIo *io = &g_array_index (((ReplayProcess *) g_ptr_array_index (
        result->plan->processes, 0))->ios, ReplayIo, i);
      g_assert_cmpuint (io->offset_bytes % block, ==, 0);
      g_assert_cmpuint (io->bytes % block, ==, 0);
    }
}

/* Replays on @f->file (in whatever file system @f->dir is on) and checks
 * what the result says about direct I/O against what the open did. */
static ReplayResult *
replay_small (Fixture *f)
{
  const TraceIo in[] = {
    mkio (1, TRACE_OP_READ, 0, 8, 0),
    mkio (1, TRACE_OP_WRITE, 64, 8, 1 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  ReplayResult *result;
  ReplayOptions opts;

  write_filled (f->file, 64 * KIB);
  replay_options_init (&opts);
  opts.target = f->file;
  opts.allow_write = TRUE;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (result->ios, ==, 2);
  g_assert_cmpuint (result->errors, ==, 0);
  g_assert_cmpint (result->buffered, ==,
                   g_array_index (result->targets, ReplayTarget, 0).buffered_fallback);
  g_assert_cmpint (has_warning (result, "refused O_DIRECT"), ==, result->buffered);
  return result;
}

/* tmpfs: in memory, said in a warning.  Linux 6.6 and later accept
 * O_DIRECT there; older kernels refuse it and the replay falls back. */
static void
test_tmpfs (Fixture *f, gconstpointer data)
{
  g_autoptr (ReplayResult) result = NULL;
  struct statfs sf;

  (void) data;
  if (f->dir == NULL || statfs (f->dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC)
    {
      g_test_skip ("/dev/shm is not a writable tmpfs here");
      return;
    }
  result = replay_small (f);
  g_assert_true (has_warning (result, "is on tmpfs, in memory"));
  g_test_message ("tmpfs here %s O_DIRECT", result->buffered ? "refuses" : "accepts");
}

/* Exit status of the child when it cannot mount ramfs (its reason on the
 * pipe): the test skips. */
#define RAMFS_SKIP_STATUS 77

/* The child: a private mount namespace, ramfs in it, the replay there.
 * Assertions abort it; the parent sees the signal. */
static void G_GNUC_NORETURN
ramfs_child (const char *mnt, int reason_fd)
{
  Fixture f = { 0 };
  ReplayResult *result;

  if (unshare (CLONE_NEWNS | (getuid () == 0 ? 0 : CLONE_NEWUSER)) != 0
      || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
      || mount ("none", mnt, "ramfs", 0, NULL) != 0)
    {
      g_autofree char *why = g_strdup_printf ("cannot mount ramfs in a private mount "
                                              "namespace: %s", g_strerror (errno));
      if (write (reason_fd, why, strlen (why)) < 0)
        _exit (1);
      _exit (RAMFS_SKIP_STATUS);
    }
  fixture_setup (&f, mnt);
  g_assert_nonnull (f.dir);
  result = replay_small (&f);
  g_assert_true (result->buffered);
  g_assert_true (has_warning (result, "its file system (ramfs) refused O_DIRECT"));
  g_assert_true (has_warning (result, "is on ramfs, in memory"));
  replay_result_free (result);
  fixture_teardown (&f, NULL);
  _exit (umount (mnt) == 0 ? 0 : 2);
}

/* ramfs refuses O_DIRECT (EINVAL): mounted in a private mount namespace
 * of a child process, so nothing outlives the test. */
static void
test_ramfs_fallback (void)
{
  g_autofree char *mnt = g_dir_make_tmp ("iosim-ramfs-XXXXXX", NULL);
  char reason[512] = "";
  int fds[2], status;
  ssize_t n;
  pid_t pid;

  g_assert_nonnull (mnt);
  g_assert_cmpint (pipe (fds), ==, 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (fds[0]);
      ramfs_child (mnt, fds[1]);
    }
  close (fds[1]);
  n = read (fds[0], reason, sizeof reason - 1);
  close (fds[0]);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_rmdir (mnt);
  if (WIFEXITED (status) && WEXITSTATUS (status) == RAMFS_SKIP_STATUS)
    {
      reason[MAX (n, 0)] = '\0';
      g_test_skip (reason);
      return;
    }
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

int
main (int argc, char **argv)
{
  static const struct {
    const char *path;
    void (*func) (Fixture *, gconstpointer);
  } tests[] = {
    { "/replay/file/beyond-end-refused", test_beyond_end },
    { "/replay/file/extend", test_extend },
    { "/replay/file/create", test_create },
    { "/replay/file/size-limits", test_size_limits },
    { "/replay/file/sparse-file", test_sparse_file },
    { "/replay/file/writes-in-place", test_writes_in_place },
    { "/replay/file/signature", test_signature },
    { "/replay/file/loop-backing", test_loop_backing },
    { "/replay/file/same-file-twice", test_same_file_twice },
    { "/replay/file/alignment", test_alignment },
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    g_test_add (tests[i].path, Fixture, NULL, fixture_setup, tests[i].func, fixture_teardown);
  g_test_add ("/replay/file/tmpfs", Fixture, "/dev/shm", fixture_setup, test_tmpfs,
              fixture_teardown);
  g_test_add_func ("/replay/file/ramfs-fallback", test_ramfs_fallback);
  return g_test_run ();
}
