/* replay-setup.c — elevator, queue attributes and blkio throttling of a
 * replay target, with every old value recorded (and logged as a shell
 * command) before it changes and written back by replay_setup_restore().
 * Sysfs paths follow Linux 6.x: /sys/block/DISK/queue/{scheduler,
 * iosched/KEY, read_ahead_kb, nr_requests, rotational}; elevator_switch()
 * resets nr_requests, so a scheduler change records it too.
 */
#include "replay/replay-setup.h"
#include "sim/sim-output.h"
#include "replay/replay-setup-private.h"
#include "replay/replay-journal.h"

#include <json-glib/json-glib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  char    *path;            /* a file; for a cpuset: the shield cgroup's directory */
  char    *old_value;       /* what to write back; for a cpuset: the cgroup.procs to
                             * move its tasks back to */
  gboolean compare;         /* skip the write when the file already reads old_value */
  gboolean may_vanish;      /* an elevator tunable: gone once the old elevator is back */
  gboolean cpuset;          /* a shield cpuset (--isolate): empty it, then remove it */
} SetupEntry;

/* A setting as written and as read back. */
typedef struct {
  char    *path;
  char    *requested;       /* what was written */
  char    *in_force;        /* what the kernel shows right after */
  gboolean adjusted;        /* differs, legitimately (rounding, a minimum) */
  gboolean rule;            /* a throttle rule (one line of a list): checked where written */
} SetupNote;

struct _ReplaySetup {
  GArray        *entries;   /* SetupEntry, in recording order */
  guint          restored;  /* entries[0..restored) are done */
  gboolean       guarded;
  ReplayJournal *journal;   /* NULL: none (tests, --dry-run) */
  GArray        *notes;     /* SetupNote, in writing order */
};

static GPtrArray *guarded_setups;   /* ReplaySetup * still to restore at exit */

static void
entry_clear (gpointer data)
{
  SetupEntry *e = data;

  g_free (e->path);
  g_free (e->old_value);
}

static void
note_clear (gpointer data)
{
  SetupNote *n = data;

  g_free (n->path);
  g_free (n->requested);
  g_free (n->in_force);
}

ReplaySetup *
replay_setup_new (void)
{
  ReplaySetup *setup = g_new0 (ReplaySetup, 1);

  setup->entries = g_array_new (FALSE, TRUE, sizeof (SetupEntry));
  g_array_set_clear_func (setup->entries, entry_clear);
  setup->notes = g_array_new (FALSE, TRUE, sizeof (SetupNote));
  g_array_set_clear_func (setup->notes, note_clear);
  return setup;
}

void
replay_setup_set_journal (ReplaySetup *setup, ReplayJournal *journal)
{
  g_clear_pointer (&setup->journal, replay_journal_free);
  setup->journal = journal;
}

const char *
replay_setup_journal_file (const ReplaySetup *setup)
{
  return setup->journal ? replay_journal_file (setup->journal) : NULL;
}

void
replay_setup_free (ReplaySetup *setup)
{
  if (setup == NULL)
    return;
  replay_setup_unguard (setup);
  g_array_unref (setup->entries);
  g_array_unref (setup->notes);
  replay_journal_free (setup->journal);
  g_free (setup);
}

guint
replay_setup_pending (const ReplaySetup *setup)
{
  return setup->entries->len - setup->restored;
}

gboolean
replay_setup_spec_empty (const ReplaySetupSpec *spec)
{
  return spec->scheduler == NULL && (spec->sched_set == NULL || spec->sched_set[0] == NULL)
         && (spec->queue_set == NULL || spec->queue_set[0] == NULL)
         && spec->throttle_read_bps == 0 && spec->throttle_write_bps == 0;
}

/* Split "key=value"; the key must be a plain file name. */
static gboolean
split_setting (const char *text, const char *option, char **key, char **value, GError **error)
{
  const char *eq = strchr (text, '=');

  if (eq == NULL || eq == text || eq[1] == '\0' || memchr (text, '/', eq - text) != NULL
      || (eq - text == 2 && text[0] == '.' && text[1] == '.'))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%s takes KEY=VALUE with a plain attribute name, not '%s'", option, text);
      return FALSE;
    }
  if (key)
    *key = g_strndup (text, eq - text);
  if (value)
    *value = g_strdup (eq + 1);
  return TRUE;
}

gboolean
replay_setup_spec_check (const ReplaySetupSpec *spec, GError **error)
{
  for (guint i = 0; spec->sched_set && spec->sched_set[i]; i++)
    if (!split_setting (spec->sched_set[i], "--sched-set", NULL, NULL, error))
      return FALSE;
  for (guint i = 0; spec->queue_set && spec->queue_set[i]; i++)
    if (!split_setting (spec->queue_set[i], "--set-queue", NULL, NULL, error))
      return FALSE;
  if (spec->scheduler && (spec->scheduler[0] == '\0' || strpbrk (spec->scheduler, "/ \n")))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--sched takes an elevator name, not '%s'", spec->scheduler);
      return FALSE;
    }
  return TRUE;
}

char *
replay_setup_read_stripped (const char *path, GError **error)
{
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  return g_strstrip (text);
}

/* The value to write back for what a sysfs or tracefs file reads: the
 * bracketed choice of "none [mq-deadline] kyber", the number of
 * buffer_size_kb's "7 (expanded: 1408)". */
static char *
writable_value (const char *text)
{
  const char *open = strchr (text, '[');
  const char *close = open ? strchr (open, ']') : NULL;
  const char *paren = strchr (text, '(');

  if (open && close)
    return g_strndup (open + 1, close - open - 1);
  if (paren && paren > text)
    return g_strstrip (g_strndup (text, paren - text));
  return g_strdup (text);
}

gboolean
replay_setup_write_value (const char *path, const char *value, GError **error)
{
  int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  gsize len = strlen (value);
  ssize_t done;

  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot open %s for writing: %s",
                   path, g_strerror (errno));
      return FALSE;
    }
  done = write (fd, value, len);
  if (done != (ssize_t) len)
    {
      int saved = done < 0 ? errno : EIO;
      close (fd);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot write '%s' to %s: %s",
                   value, path, g_strerror (saved));
      return FALSE;
    }
  if (close (fd) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot write '%s' to %s: %s",
                   value, path, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

gboolean
replay_setup_write_in (const char *dir, const char *file, const char *value, GError **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  return replay_setup_write_value (path, value, error);
}

gboolean
replay_setup_record (ReplaySetup *setup, const char *path, const char *old_value,
                     gboolean compare, FILE *log, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  SetupEntry e = { g_strdup (path), g_strdup (old_value), compare,
                   g_str_has_suffix (dir, "/iosched") };
  guint flags = (e.compare ? REPLAY_JOURNAL_COMPARE : 0)
                | (e.may_vanish ? REPLAY_JOURNAL_MAY_VANISH : 0);

  /* On disk before the change: a later run restores it if we die. */
  if (setup->journal && !replay_journal_add (setup->journal, path, old_value, flags, error))
    {
      entry_clear (&e);
      return FALSE;
    }
  g_array_append_val (setup->entries, e);
  if (log)
    {
      fprintf (log, "iosim replay: old setting (restore by hand if killed): echo '%s' > %s\n",
               old_value, path);
      fflush (log);
    }
  return TRUE;
}

static gboolean
parse_u64 (const char *text, guint64 *out)
{
  return g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, out, NULL);
}

/* Where the kernel legitimately shows another value than the one written:
 *  - read_ahead_kb is kept in pages (block/blk-sysfs.c queue_ra_store:
 *    ra_kb >> (PAGE_SHIFT - 10)): rounded down to whole pages;
 *  - nr_requests below BLKDEV_MIN_RQ (4) is raised to it
 *    (block/blk-sysfs.c queue_requests_store);
 *  - elevator times in ms are kept in jiffies (block/mq-deadline.c,
 *    bfq-iosched.c STORE_JIFFIES: msecs_to_jiffies rounds up), so 123
 *    reads 124 at HZ=250: up to one jiffy (10 ms at HZ=100) more;
 *  - tracefs buffer_size_kb is kept in whole ring-buffer pages of
 *    PAGE_SIZE less their header (kernel/trace/ring_buffer.c), so 16384
 *    reads 16387: up to one page more. */
static gboolean
legit_adjustment (const char *path, const char *wanted, const char *shown)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = g_path_get_dirname (path);
  guint64 w, s;

  if (!parse_u64 (wanted, &w) || !parse_u64 (shown, &s))
    return FALSE;
  if (strcmp (base, "read_ahead_kb") == 0)
    {
      guint64 page_kb = (guint64) sysconf (_SC_PAGESIZE) / 1024;
      return page_kb > 0 && s == w / page_kb * page_kb;
    }
  if (strcmp (base, "nr_requests") == 0)
    return w < 4 && s == 4;
  if (g_str_has_suffix (dir, "/iosched"))
    return s >= w && s - w <= 10;
  if (strcmp (base, "buffer_size_kb") == 0)
    return s >= w && s - w <= (guint64) sysconf (_SC_PAGESIZE) / 1024;
  return FALSE;
}

static void
add_note (ReplaySetup *setup, const char *path, const char *requested, const char *in_force,
          gboolean adjusted)
{
  SetupNote n = { g_strdup (path), g_strdup (requested), g_strdup (in_force), adjusted, FALSE };

  g_array_append_val (setup->notes, n);
}

gboolean
replay_setup_read_back (const char *path, const char *wanted, char **in_force,
                        gboolean *adjusted, GError **error)
{
  g_autofree char *now = replay_setup_read_stripped (path, error);
  g_autofree char *shown = NULL;

  if (now == NULL)
    {
      g_prefix_error (error, "reading back %s: ", path);
      return FALSE;
    }
  shown = writable_value (now);
  *adjusted = strcmp (shown, wanted) != 0;
  if (*adjusted && !legit_adjustment (path, wanted, shown))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%s: wrote '%s' but the kernel shows '%s' (not taken)", path, wanted, shown);
      return FALSE;
    }
  *in_force = g_steal_pointer (&shown);
  return TRUE;
}

gboolean
replay_setup_check_written (ReplaySetup *setup, const char *path, const char *wanted, FILE *log,
                            GError **error)
{
  g_autofree char *shown = NULL;
  gboolean adjusted;

  if (!replay_setup_read_back (path, wanted, &shown, &adjusted, error))
    return FALSE;
  add_note (setup, path, wanted, shown, adjusted);
  if (adjusted && log)
    fprintf (log, "iosim: warning: %s: asked for %s, the kernel keeps %s (in force)\n",
             path, wanted, shown);
  return TRUE;
}

/* Record @path's current value, write @value, read it back. */
gboolean
replay_setup_change_file (ReplaySetup *setup, const char *path, const char *value, FILE *log, GError **error)
{
  g_autofree char *now = replay_setup_read_stripped (path, error);
  g_autofree char *old = NULL;

  if (now == NULL)
    return FALSE;
  old = writable_value (now);
  return replay_setup_record (setup, path, old, TRUE, log, error)
         && replay_setup_write_value (path, value, error)
         && replay_setup_check_written (setup, path, value, log, error);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Record every writable tunable of the active elevator: they vanish with
 * it and come back at their defaults unless written again. */
static gboolean
record_iosched (ReplaySetup *setup, const char *queue_dir, FILE *log, GError **error)
{
  g_autofree char *dir = g_build_filename (queue_dir, "iosched", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (d == NULL)
    return TRUE;    /* "none" has no tunables */
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, g_ptr_array_index (names, i), NULL);
      g_autofree char *value = NULL;
      struct stat st;

      if (stat (path, &st) != 0 || !S_ISREG (st.st_mode) || !(st.st_mode & S_IWUSR))
        continue;
      if ((value = replay_setup_read_stripped (path, error)) == NULL
          || !replay_setup_record (setup, path, value, TRUE, log, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
apply_scheduler (ReplaySetup *setup, const char *queue_dir, const char *wanted, FILE *log,
                 GError **error)
{
  g_autofree char *sched_path = g_build_filename (queue_dir, "scheduler", NULL);
  g_autofree char *nr_path = g_build_filename (queue_dir, "nr_requests", NULL);
  g_autofree char *text = replay_setup_read_stripped (sched_path, error);
  g_autofree char *current = NULL;
  g_autofree char *nr = NULL;

  if (text == NULL)
    return FALSE;
  current = writable_value (text);
  if (strcmp (current, wanted) == 0)
    return TRUE;
  if ((nr = replay_setup_read_stripped (nr_path, error)) == NULL
      || !replay_setup_record (setup, sched_path, current, TRUE, log, error)
      /* Written back after the scheduler, in this order. */
      || !replay_setup_record (setup, nr_path, nr, TRUE, log, error)
      || !record_iosched (setup, queue_dir, log, error))
    return FALSE;
  if (!replay_setup_write_value (sched_path, wanted, error)
      || !replay_setup_check_written (setup, sched_path, wanted, log, error))
    {
      g_prefix_error (error, "--sched %s: ", wanted);
      return FALSE;
    }
  return TRUE;
}

/* Writing a queue limit (rotational, max_sectors_kb, ...) commits the
 * queue limits, and since Linux 6.11 that sets the read-ahead again from
 * io_opt (block/blk-settings.c blk_apply_bdi_limits): read_ahead_kb
 * written before rotational is lost.  So read_ahead_kb is written after
 * every other queue attribute, and restored after them too. */
#define SETUP_LAST_KEY "read_ahead_kb"

/* @list's settings; with @last only SETUP_LAST_KEY's, else all others. */
static gboolean
apply_list (ReplaySetup *setup, const char *dir, const char *const *list, const char *option,
            gboolean last, FILE *log, GError **error)
{
  for (guint i = 0; list && list[i]; i++)
    {
      g_autofree char *key = NULL, *value = NULL, *path = NULL;

      if (!split_setting (list[i], option, &key, &value, error))
        return FALSE;
      if ((strcmp (key, SETUP_LAST_KEY) == 0) != last)
        continue;
      path = g_build_filename (dir, key, NULL);
      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                       "%s %s: no attribute '%s' (%s does not exist)", option, list[i], key, path);
          return FALSE;
        }
      if (!replay_setup_change_file (setup, path, value, log, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- blkio throttling ---- */

typedef enum { THROTTLE_V1, THROTTLE_V2 } ThrottleKind;

/* The v2 cgroup this process is in, from /proc/self/cgroup ("0::/path"). */
static char *
own_v2_cgroup (void)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/cgroup", &text, NULL, NULL))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "0::"))
      return g_strdup (lines[i] + 3);
  return NULL;
}

/* The throttle interface: v1 blkio on the root cgroup, else v2 io.max of
 * the cgroup we run in (the v2 root has no io.max). */
static char *
find_throttle (const char *cgroup_root, ThrottleKind *kind, GError **error)
{
  const char *root = cgroup_root ? cgroup_root : "/sys/fs/cgroup";
  g_autofree char *v1 = g_build_filename (root, "blkio", NULL);
  g_autofree char *v1_file = g_build_filename (v1, "blkio.throttle.read_bps_device", NULL);
  g_autofree char *v1_flat = g_build_filename (root, "blkio.throttle.read_bps_device", NULL);
  g_autofree char *own = own_v2_cgroup ();

  *kind = THROTTLE_V1;
  if (g_file_test (v1_file, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&v1);
  if (g_file_test (v1_flat, G_FILE_TEST_EXISTS))
    return g_strdup (root);
  *kind = THROTTLE_V2;
  if (own != NULL)
    {
      g_autofree char *a = g_build_filename (root, own, "io.max", NULL);
      g_autofree char *b = g_build_filename (root, "unified", own, "io.max", NULL);

      if (g_file_test (a, G_FILE_TEST_EXISTS))
        return g_path_get_dirname (a);
      if (g_file_test (b, G_FILE_TEST_EXISTS))
        return g_path_get_dirname (b);
    }
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "no blkio throttling under %s: neither cgroup v1 blkio.throttle.*_bps_device "
               "nor a cgroup v2 io.max for this process's cgroup (%s; the v2 root has none)",
               root, own ? own : "unknown");
  return NULL;
}

/* The line of @text for device "MAJ:MIN", or NULL. */
static char *
rule_line (const char *text, const char *devno)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *prefix = g_strdup_printf ("%s ", devno);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (g_strstrip (lines[i]), prefix))
      return g_strdup (lines[i]);
  return NULL;
}

/* The device's rule as the kernel lists it holds every "key=value" (v2)
 * or the "MAJ:MIN BPS" (v1) written. */
static gboolean
check_throttle (ReplaySetup *setup, const char *path, const char *devno, const char *written,
                GError **error)
{
  g_autofree char *text = replay_setup_read_stripped (path, error);
  g_autofree char *line = text ? rule_line (text, devno) : NULL;
  g_auto (GStrv) want = g_strsplit (written, " ", -1);
  g_auto (GStrv) have = line ? g_strsplit (g_strstrip (line), " ", -1) : NULL;

  if (text == NULL)
    return FALSE;
  for (guint i = 0; have && want[i]; i++)
    if (want[i][0] && !g_strv_contains ((const char *const *) have, want[i]))
      g_clear_pointer (&have, g_strfreev);
  if (have == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%s: wrote '%s' but the kernel lists '%s' for %s (not taken)", path, written,
                   line ? line : "no rule", devno);
      return FALSE;
    }
  add_note (setup, path, written, line, FALSE);
  g_array_index (setup->notes, SetupNote, setup->notes->len - 1).rule = TRUE;
  return TRUE;
}

static gboolean
apply_throttle_file (ReplaySetup *setup, const char *path, const char *devno,
                     const char *absent_value, const char *new_value, FILE *log, GError **error)
{
  g_autofree char *text = replay_setup_read_stripped (path, error);
  g_autofree char *line = NULL;

  if (text == NULL)
    return FALSE;
  line = rule_line (text, devno);
  /* The file lists every device: always rewrite this device's rule. */
  return replay_setup_record (setup, path, line ? line : absent_value, FALSE, log, error)
         && replay_setup_write_value (path, new_value, error)
         && check_throttle (setup, path, devno, new_value, error);
}

static gboolean
apply_throttle (ReplaySetup *setup, const ReplaySetupSpec *spec, const ReplayTarget *t,
                FILE *log, GError **error)
{
  ThrottleKind kind;
  g_autofree char *dir = NULL;
  g_autofree char *devno = NULL;

  if (spec->throttle_read_bps == 0 && spec->throttle_write_bps == 0)
    return TRUE;
  if ((dir = find_throttle (spec->cgroup_root, &kind, error)) == NULL)
    return FALSE;
  /* Throttling applies to whole disks. */
  if ((devno = replay_setup_disk_devno (t, error)) == NULL)
    return FALSE;
  if (kind == THROTTLE_V1)
    {
      const char *files[] = { "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device" };
      guint64 bps[] = { spec->throttle_read_bps, spec->throttle_write_bps };
      g_autofree char *absent = g_strdup_printf ("%s 0", devno);

      for (guint i = 0; i < 2; i++)
        {
          g_autofree char *path = g_build_filename (dir, files[i], NULL);
          g_autofree char *value = g_strdup_printf ("%s %" G_GUINT64_FORMAT, devno, bps[i]);
          if (bps[i] > 0 && !apply_throttle_file (setup, path, devno, absent, value, log, error))
            return FALSE;
        }
      return TRUE;
    }
  else
    {
      g_autofree char *path = g_build_filename (dir, "io.max", NULL);
      g_autofree char *absent = g_strdup_printf ("%s rbps=max wbps=max riops=max wiops=max", devno);
      g_autoptr (GString) value = g_string_new (devno);

      if (spec->throttle_read_bps)
        g_string_append_printf (value, " rbps=%" G_GUINT64_FORMAT, spec->throttle_read_bps);
      if (spec->throttle_write_bps)
        g_string_append_printf (value, " wbps=%" G_GUINT64_FORMAT, spec->throttle_write_bps);
      return apply_throttle_file (setup, path, devno, absent, value->str, log, error);
    }
}

char *
replay_setup_disk_devno (const ReplayTarget *t, GError **error)
{
  g_autofree char *dev = NULL;

  if (!t->is_partition)
    return g_strdup_printf ("%u:%u", t->major, t->minor);
  dev = g_build_filename (t->sysfs_root ? t->sysfs_root : "/sys", "block", t->disk_name, "dev",
                          NULL);
  return replay_setup_read_stripped (dev, error);
}

static char *
queue_dir (const ReplayTarget *t)
{
  return g_build_filename (t->sysfs_root ? t->sysfs_root : "/sys", "block", t->disk_name,
                           "queue", NULL);
}

/* Every setting written since @first still shows what it showed right
 * after its write: a later write (a queue limit, an elevator switch)
 * must not have undone an earlier one. */
static gboolean
verify_notes (ReplaySetup *setup, guint first, GError **error)
{
  for (guint i = first; i < setup->notes->len; i++)
    {
      const SetupNote *n = &g_array_index (setup->notes, SetupNote, i);
      g_autofree char *now = NULL, *shown = NULL;

      if (n->rule)
        continue;
      if ((now = replay_setup_read_stripped (n->path, error)) == NULL)
        return FALSE;
      shown = writable_value (now);
      if (strcmp (shown, n->in_force) != 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                       "%s shows '%s' once the other settings are written, not the '%s' it "
                       "showed after its own write: a later setting reset it", n->path, shown,
                       n->in_force);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
replay_setup_apply (ReplaySetup *setup, const ReplaySetupSpec *spec, const ReplayTarget *target,
                    FILE *log, GError **error)
{
  g_autofree char *qdir = queue_dir (target);
  g_autofree char *iosched = g_build_filename (qdir, "iosched", NULL);
  guint first_note;

  g_return_val_if_fail (setup != NULL && spec != NULL && target != NULL, FALSE);

  if (!replay_setup_spec_check (spec, error))
    return FALSE;
  first_note = setup->notes->len;
  /* Scheduler first: its tunables exist only once it is active (and the
   * switch resets nr_requests); read_ahead_kb after the queue limits. */
  if ((spec->scheduler && !apply_scheduler (setup, qdir, spec->scheduler, log, error))
      || !apply_list (setup, iosched, spec->sched_set, "--sched-set", FALSE, log, error)
      || !apply_list (setup, qdir, spec->queue_set, "--set-queue", FALSE, log, error)
      || !apply_list (setup, qdir, spec->queue_set, "--set-queue", TRUE, log, error)
      || !apply_throttle (setup, spec, target, log, error)
      || !verify_notes (setup, first_note, error))
    {
      g_prefix_error (error, "setting up %s: ", target->path);
      return FALSE;
    }
  return TRUE;
}

static void
keep_first (GError **first, GError *local)
{
  if (*first == NULL)
    *first = local;
  else
    g_error_free (local);
}

typedef struct {
  gboolean    dry_run;      /* say what would be written; write nothing */
  gboolean    missing_ok;   /* a file gone since (the device was detached): skip it */
  GHashTable *done;         /* compare paths already handled */
  GPtrArray  *written;      /* const SetupEntry *, to read back */
  GError     *first;
} RestoreRun;

static void
restore_cpuset (const SetupEntry *e, RestoreRun *run, FILE *log)
{
  GError *local = NULL;

  if (run->dry_run)
    {
      if (log && g_file_test (e->path, G_FILE_TEST_IS_DIR))
        fprintf (log, "  would move the tasks of %s back to %s and remove it\n", e->path,
                 e->old_value);
      return;
    }
  if (!replay_setup_empty_cpuset (e->path, e->old_value, log, &local))
    keep_first (&run->first, local);
}

static void
restore_entry (const SetupEntry *e, RestoreRun *run, FILE *log)
{
  g_autofree char *now = NULL, *now_value = NULL;
  GError *local = NULL;

  if (e->cpuset)
    {
      restore_cpuset (e, run, log);
      return;
    }
  /* A file recorded twice (nr_requests before the elevator switch and
   * again for --nr-requests) goes back to its first, original value;
   * the later value existed only under the replay's elevator. */
  if (e->compare && !g_hash_table_add (run->done, e->path))
    return;
  if (!g_file_test (e->path, G_FILE_TEST_EXISTS))
    {
      /* A tunable of the replay's elevator left with it. */
      if (e->may_vanish)
        return;
      if (run->missing_ok)
        {
          if (log)
            fprintf (log, "iosim: skipped %s: it no longer exists\n", e->path);
          return;
        }
    }
  now = replay_setup_read_stripped (e->path, NULL);
  now_value = now ? writable_value (now) : NULL;
  if (e->compare && g_strcmp0 (now_value, e->old_value) == 0)
    return;
  if (run->dry_run)
    {
      if (log)
        fprintf (log, "  would write '%s' to %s (now '%s')\n", e->old_value, e->path,
                 now_value ? now_value : "?");
      return;
    }
  if (!replay_setup_write_value (e->path, e->old_value, &local))
    keep_first (&run->first, local);
  else
    {
      if (e->compare)
        g_ptr_array_add (run->written, (gpointer) e);
      if (log)
        fprintf (log, "iosim: restored %s = %s\n", e->path, e->old_value);
    }
}

/* Each value written back reads back (after every write: read_ahead_kb
 * must survive the queue-limit writes). */
static void
restore_verify (RestoreRun *run)
{
  for (guint i = 0; i < run->written->len; i++)
    {
      const SetupEntry *e = g_ptr_array_index (run->written, i);
      g_autofree char *now = replay_setup_read_stripped (e->path, NULL);
      g_autofree char *now_value = now ? writable_value (now) : NULL;

      if (g_strcmp0 (now_value, e->old_value) != 0)
        keep_first (&run->first,
                    g_error_new (REPLAY_ERROR, REPLAY_ERROR_FAILED,
                                 "%s shows '%s' after the restore, not the original '%s'",
                                 e->path, now_value ? now_value : "(unreadable)", e->old_value));
    }
}

static gboolean
is_last_key (const SetupEntry *e)
{
  g_autofree char *base = g_path_get_basename (e->path);

  return strcmp (base, SETUP_LAST_KEY) == 0;
}

static gboolean
setup_restore (ReplaySetup *setup, gboolean dry_run, gboolean missing_ok, FILE *log,
               GError **error)
{
  g_autoptr (GHashTable) done = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) written = g_ptr_array_new ();
  RestoreRun run = { dry_run, missing_ok, done, written, NULL };

  /* In recording order, read_ahead_kb after everything else. */
  for (guint pass = 0; pass < 2; pass++)
    for (guint i = setup->restored; i < setup->entries->len; i++)
      {
        const SetupEntry *e = &g_array_index (setup->entries, SetupEntry, i);
        if (is_last_key (e) == (pass == 1))
          restore_entry (e, &run, log);
      }
  if (dry_run)
    return TRUE;
  restore_verify (&run);
  setup->restored = setup->entries->len;
  if (run.first != NULL)
    {
      g_propagate_prefixed_error (error, run.first, "restoring the target settings: ");
      if (setup->journal && log)
        fprintf (log, "iosim: journal %s kept: 'iosim restore' retries once this process "
                 "has ended\n", replay_journal_file (setup->journal));
      return FALSE;
    }
  /* Clean: nothing left for a later run to do. */
  if (setup->journal)
    {
      GError *local = NULL;
      if (!replay_journal_remove (setup->journal, &local))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_clear_pointer (&setup->journal, replay_journal_free);
    }
  return TRUE;
}

gboolean
replay_setup_restore (ReplaySetup *setup, FILE *log, GError **error)
{
  return setup_restore (setup, FALSE, FALSE, log, error);
}

gboolean
replay_setup_restore_journal (ReplayJournal *journal, gboolean dry_run, FILE *log,
                              GError **error)
{
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  gboolean ok;

  for (guint i = 0; i < replay_journal_n_entries (journal); i++)
    {
      const ReplayJournalEntry *je = replay_journal_entry (journal, i);
      g_autofree char *why = NULL;

      if (!replay_journal_same_device (journal, je->path, &why))
        {
          if (log)
            fprintf (log, "iosim: skipped %s: %s\n", je->path, why);
          continue;
        }
      SetupEntry e = { g_strdup (je->path), g_strdup (je->old_value),
                       (je->flags & REPLAY_JOURNAL_COMPARE) != 0,
                       (je->flags & REPLAY_JOURNAL_MAY_VANISH) != 0,
                       (je->flags & REPLAY_JOURNAL_CPUSET) != 0 };
      g_array_append_val (setup->entries, e);
    }
  /* The journal stays the caller's; removed below once all is back. */
  ok = setup_restore (setup, dry_run, TRUE, log, error);
  if (ok && !dry_run && !replay_journal_remove (journal, error))
    return FALSE;
  if (ok && !dry_run && log)
    fprintf (log, "iosim: %s restored and removed\n", replay_journal_file (journal));
  return ok;
}

static void
restore_guarded_at_exit (void)
{
  for (guint i = 0; guarded_setups && i < guarded_setups->len; i++)
    {
      ReplaySetup *setup = g_ptr_array_index (guarded_setups, i);
      g_autoptr (GError) error = NULL;

      if ((replay_setup_pending (setup) > 0 || setup->journal != NULL)
          && !replay_setup_restore (setup, stderr, &error))
        fprintf (stderr, "iosim: %s\n", error->message);
    }
}

void
replay_setup_guard (ReplaySetup *setup)
{
  static gboolean registered;

  if (setup->guarded)
    return;
  if (!registered)
    {
      atexit (restore_guarded_at_exit);
      registered = TRUE;
    }
  if (guarded_setups == NULL)
    guarded_setups = g_ptr_array_new ();
  g_ptr_array_add (guarded_setups, setup);
  setup->guarded = TRUE;
}

void
replay_setup_unguard (ReplaySetup *setup)
{
  if (!setup->guarded)
    return;
  g_ptr_array_remove (guarded_setups, setup);
  setup->guarded = FALSE;
}

void
replay_setup_describe (const ReplaySetupSpec *spec, const ReplayTarget *target, FILE *out)
{
  g_autofree char *qdir = queue_dir (target);
  g_autofree char *sched = replay_target_scheduler (target);

  if (replay_setup_spec_empty (spec))
    return;
  fprintf (out, "setup       %s (restored afterwards):\n", target->path);
  if (spec->scheduler)
    fprintf (out, "  %s/scheduler: %s -> %s\n", qdir, sched ? sched : "?", spec->scheduler);
  for (guint i = 0; spec->sched_set && spec->sched_set[i]; i++)
    fprintf (out, "  %s/iosched/%s\n", qdir, spec->sched_set[i]);
  for (guint i = 0; spec->queue_set && spec->queue_set[i]; i++)
    {
      g_autofree char *key = NULL, *value = NULL, *old = NULL;
      if (!split_setting (spec->queue_set[i], "--set-queue", &key, &value, NULL))
        continue;
      old = replay_target_queue_attr (target, key);
      fprintf (out, "  %s/%s: %s -> %s\n", qdir, key, old ? old : "?", value);
    }
  if (spec->throttle_read_bps)
    fprintf (out, "  blkio throttle read  %" G_GUINT64_FORMAT " B/s\n", spec->throttle_read_bps);
  if (spec->throttle_write_bps)
    fprintf (out, "  blkio throttle write %" G_GUINT64_FORMAT " B/s\n", spec->throttle_write_bps);
}

gboolean
replay_setup_record_cpuset (ReplaySetup *setup, const char *shield_dir, const char *back_procs,
                            FILE *log, GError **error)
{
  SetupEntry e = { g_strdup (shield_dir), g_strdup (back_procs), FALSE, FALSE, TRUE };

  if (setup->journal
      && !replay_journal_add (setup->journal, shield_dir, back_procs, REPLAY_JOURNAL_CPUSET, error))
    {
      entry_clear (&e);
      return FALSE;
    }
  g_array_append_val (setup->entries, e);
  if (log)
    {
      fprintf (log, "iosim replay: CPU shield (undo by hand if killed): for p in $(cat %s/cgroup.procs); "
               "do echo $p > %s; done; rmdir %s\n", shield_dir, back_procs, shield_dir);
      fflush (log);
    }
  return TRUE;
}

void
replay_setup_forget_last (ReplaySetup *setup)
{
  g_assert (setup->entries->len > setup->restored);
  g_array_set_size (setup->entries, setup->entries->len - 1);
}

gboolean
replay_setup_amend_json (const ReplaySetup *setup, const char *json_path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  JsonArray *settings = json_array_new ();
  JsonNode *root;

  if (!json_parser_load_from_file (parser, json_path, error))
    {
      json_array_unref (settings);
      return FALSE;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      json_array_unref (settings);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "%s: not a JSON object", json_path);
      return FALSE;
    }
  for (guint i = 0; i < setup->notes->len; i++)
    {
      const SetupNote *n = &g_array_index (setup->notes, SetupNote, i);
      JsonObject *o = json_object_new ();

      json_object_set_string_member (o, "path", n->path);
      json_object_set_string_member (o, "requested", n->requested);
      json_object_set_string_member (o, "in_force", n->in_force);
      json_object_set_boolean_member (o, "adjusted", n->adjusted);
      json_array_add_object_element (settings, o);
    }
  json_object_set_array_member (json_node_get_object (root), "target_settings", settings);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  gsize len = 0;
  g_autofree char *text = json_generator_to_data (gen, &len);
  return sim_output_write (json_path, text, (gssize) len, error);
}
