/* test-trace-nfs-loopback.c — a live check of the NFS capture decoder
 * (suite 'slow', about 10 s): nfs-loopback-capture.sh starts rpcbind and
 * nfs-ganesha (FSAL VFS on a temporary directory) in a private network
 * namespace, captures loopback with tcpdump while libnfs's nfs-cp/nfs-cat
 * write and read back random files over NFSv3 and NFSv4.0; then the
 * decode must account for every byte: per file handle, the WRITE and READ
 * byte counts of the replies add up to the sizes the client moved, the
 * written ranges cover each file, and nothing is lost on the way (no gaps,
 * unanswered calls, resynchronisations or stopped COMPOUND walks).  Then
 * each capture is replayed server-side (`iosim replay --allow-write`,
 * IOSIM_BIN) and the tree it leaves must be the server's: the files the
 * capture touched, at their names, with the sizes they have in the
 * exported directory (NFSv3: made by the replayed CREATEs and WRITEs;
 * NFSv4.0: one made by OPEN with OPEN4_CREATE, the files it only read
 * made at setup with their traced sizes).
 * Skips unless root with unshare, rpcbind, ganesha.nfsd, nfs-cp, nfs-cat
 * and tcpdump (apt-get install nfs-ganesha nfs-ganesha-vfs libnfs-utils
 * rpcbind tcpdump).
 */
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "traces/trace-nfs.h"

static int
cmp_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

static gboolean
can_run (char **why)
{
  static const char *const progs[] = { "unshare", "ip", "rpcbind", "ganesha.nfsd", "nfs-cp", "nfs-cat", "tcpdump" };
  const char *argv[] = { "unshare", "--net", "--mount", "true", NULL };
  gint status = -1;

  if (getuid () != 0)
    {
      *why = g_strdup ("needs root (network namespace, ganesha)");
      return FALSE;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (progs); i++)
    {
      g_autofree char *p = g_find_program_in_path (progs[i]);
      if (p == NULL)
        {
          *why = g_strdup_printf ("%s not installed (apt-get install nfs-ganesha nfs-ganesha-vfs libnfs-utils rpcbind tcpdump)", progs[i]);
          return FALSE;
        }
    }
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, &status, NULL) || !g_spawn_check_wait_status (status, NULL))
    {
      *why = g_strdup ("cannot create namespaces here (unshare --net --mount)");
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  GHashTable *written;   /* fh → bytes written (WRITE reply counts) */
  GHashTable *read;      /* fh → bytes read (READ reply counts) */
  GHashTable *covered;   /* fh → highest contiguous end of written ranges */
} Totals;

static void
add (GHashTable *h, guint64 fh, guint64 n)
{
  guint64 *v = g_hash_table_lookup (h, &fh);

  if (v == NULL)
    {
      guint64 *k = g_new (guint64, 1);
      *k = fh;
      v = g_new0 (guint64, 1);
      g_hash_table_insert (h, k, v);
    }
  *v += n;
}

static GArray *
sorted_values (GHashTable *h)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint64));
  GHashTableIter it;
  gpointer v;

  g_hash_table_iter_init (&it, h);
  while (g_hash_table_iter_next (&it, NULL, &v))
    g_array_append_val (a, *(guint64 *) v);
  g_array_sort (a, cmp_u64);
  return a;
}

static GArray *
sizes_of (const char *sizes, guint vers, const char *what)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_auto(GStrv) lines = g_strsplit (sizes, "\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, " ", -1);
      if (g_strv_length (f) == 4 && g_ascii_strtoull (f[0], NULL, 10) == vers && strcmp (f[1], what) == 0)
        {
          guint64 n = g_ascii_strtoull (f[3], NULL, 10);
          g_array_append_val (a, n);
        }
    }
  g_array_sort (a, cmp_u64);
  return a;
}

static void
assert_same (GArray *ours, GArray *client, const char *what)
{
  GString *a = g_string_new (NULL), *b = g_string_new (NULL);

  for (guint i = 0; i < ours->len; i++)
    g_string_append_printf (a, " %" G_GUINT64_FORMAT, g_array_index (ours, guint64, i));
  for (guint i = 0; i < client->len; i++)
    g_string_append_printf (b, " %" G_GUINT64_FORMAT, g_array_index (client, guint64, i));
  g_test_message ("%s per file handle: decoded%s; client%s", what, a->str, b->str);
  g_assert_cmpstr (a->str, ==, b->str);
  g_string_free (a, TRUE);
  g_string_free (b, TRUE);
}

static void
check_version (const char *dir, const char *sizes, guint vers)
{
  g_autofree char *name = g_strdup_printf ("v%u.pcap", vers);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = trace_nfs_reader_open (path, &error);
  g_autoptr(GHashTable) written = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr(GHashTable) read = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr(GHashTable) ends = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr(GArray) w = NULL, rd = NULL, cw = NULL, cr = NULL, cov = NULL;
  const TraceNfsStats *st;
  TraceNfsRecord rec;
  guint n = 0;

  g_assert_no_error (error);
  while (trace_nfs_reader_next (r, &rec, &error))
    {
      n++;
      g_assert_cmpuint (rec.vers, ==, vers);
      g_assert_cmpint (rec.status, ==, 0);
      g_assert_cmpint (rec.latency_ns, >=, 0);
      g_assert_false (rec.partial);
      if (strcmp (rec.op, "WRITE") == 0)
        {
          guint64 *end = g_hash_table_lookup (ends, &rec.fh_hash);
          g_assert_cmpuint (rec.reply_count, ==, rec.count);
          add (written, rec.fh_hash, rec.reply_count);
          /* libnfs writes each file front to back */
          g_assert_cmpuint (rec.offset, ==, end != NULL ? *end : 0);
          add (ends, rec.fh_hash, rec.count);
        }
      else if (strcmp (rec.op, "READ") == 0)
        add (read, rec.fh_hash, rec.reply_count);
    }
  g_assert_no_error (error);
  st = trace_nfs_reader_stats (r);
  g_test_message ("NFSv%u: %" G_GUINT64_FORMAT " frames, %u records, %" G_GUINT64_FORMAT " TCP retransmissions",
                  vers, st->frames, n, st->tcp_retransmissions);
  g_assert_cmpuint (st->tcp_gaps, ==, 0);
  g_assert_cmpuint (st->rpc_resyncs, ==, 0);
  g_assert_cmpuint (st->rpc_malformed, ==, 0);
  g_assert_cmpuint (st->calls_without_reply, ==, 0);
  g_assert_cmpuint (st->replies_without_call, ==, 0);
  g_assert_cmpuint (st->v4_walk_stopped, ==, 0);
  w = sorted_values (written);
  rd = sorted_values (read);
  cov = sorted_values (ends);
  cw = sizes_of (sizes, vers, "write");
  cr = sizes_of (sizes, vers, "read");
  assert_same (w, cw, "bytes written");
  assert_same (cov, cw, "contiguous written range");
  assert_same (rd, cr, "bytes read");
}

/* Names of version @vers's lines in sizes.txt ("vers write|read name bytes"). */
static GHashTable *
names_of (const char *sizes, guint vers)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit (sizes, "\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, " ", -1);
      if (g_strv_length (f) == 4 && g_ascii_strtoull (f[0], NULL, 10) == vers)
        g_hash_table_add (names, g_strdup (f[2]));
    }
  return names;
}

/* Replay v@vers.pcap into @dir/replay-v@vers and compare its tree with the
 * exported directory. */
static void
replay_version (const char *dir, const char *sizes, guint vers)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autofree char *name = g_strdup_printf ("v%u.pcap", vers);
  g_autofree char *cap = g_build_filename (dir, name, NULL);
  g_autofree char *target_name = g_strdup_printf ("replay-v%u", vers);
  g_autofree char *target = g_build_filename (dir, target_name, NULL);
  g_autofree char *tree = g_build_filename (target, "iosim-nfs-replay", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GHashTable) want = names_of (sizes, vers);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = NULL;
  const char *argv[] = { bin, "replay", cap, "--target-dir", target, "--allow-write", "--timing", "afap", NULL };
  const char *entry;
  gint status = -1;
  guint n = 0;

  if (bin == NULL)
    {
      g_test_message ("IOSIM_BIN not set: NFSv%u capture not replayed", vers);
      return;
    }
  g_assert_cmpint (g_mkdir (target, 0755), ==, 0);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("iosim replay of the NFSv%u capture failed:\n%s\n%s", vers, out, err);
  d = g_dir_open (tree, 0, &error);
  g_assert_no_error (error);
  while ((entry = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *ours = g_build_filename (tree, entry, NULL);
      g_autofree char *server = g_build_filename (dir, "export", entry, NULL);
      GStatBuf a, b;

      g_assert_true (g_hash_table_contains (want, entry));
      g_assert_cmpint (g_lstat (ours, &a), ==, 0);
      g_assert_cmpint (g_lstat (server, &b), ==, 0);
      g_assert_true (S_ISREG (a.st_mode));
      g_assert_cmpint (a.st_size, ==, b.st_size);
      n++;
    }
  g_assert_cmpuint (n, ==, g_hash_table_size (want));
  g_test_message ("NFSv%u replay: %u files at their names and server sizes", vers, n);
}

static void
test_loopback (void)
{
  g_autofree char *why = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "traces", "nfs-loopback-capture.sh", NULL);
  g_autofree char *sizes_path = NULL;
  g_autofree char *sizes = NULL;
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { script, NULL, NULL };
  gint status = -1;
  gint64 t0 = g_get_monotonic_time ();

  if (!can_run (&why))
    {
      g_test_skip (why);
      return;
    }
  dir = g_dir_make_tmp ("iosim-nfs-loopback-XXXXXX", &error);
  g_assert_no_error (error);
  argv[1] = dir;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("nfs-loopback-capture.sh failed:\n%s\n%s", out, err);
  g_test_message ("capture took %.1f s", (g_get_monotonic_time () - t0) / 1e6);
  sizes_path = g_build_filename (dir, "sizes.txt", NULL);
  g_assert_true (g_file_get_contents (sizes_path, &sizes, NULL, NULL));
  check_version (dir, sizes, 3);
  check_version (dir, sizes, 4);
  replay_version (dir, sizes, 3);
  replay_version (dir, sizes, 4);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
    g_assert_cmpint (system (cmd), ==, 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace-nfs/loopback/ganesha-libnfs", test_loopback);
  return g_test_run ();
}
