/* replay-setup.c — elevator, queue attributes and blkio throttling of a
 * replay target, with every old value recorded (and logged as a shell
 * command) before it changes and written back by replay_setup_restore().
 * Sysfs paths follow Linux 6.x: /sys/block/DISK/queue/{scheduler,
 * iosched/KEY, read_ahead_kb, nr_requests, rotational}; elevator_switch()
 * resets nr_requests, so a scheduler change records it too.
 */
#include "replay/replay-setup.h"
#include "replay/replay-setup-private.h"

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

struct _ReplaySetup {
  GArray  *entries;         /* SetupEntry, in recording order */
  guint    restored;        /* entries[0..restored) are done */
  gboolean guarded;
};

static GPtrArray *guarded_setups;   /* ReplaySetup * still to restore at exit */

static void
entry_clear (gpointer data)
{
  SetupEntry *e = data;

  g_free (e->path);
  g_free (e->old_value);
}

ReplaySetup *
replay_setup_new (void)
{
  ReplaySetup *setup = g_new0 (ReplaySetup, 1);

  setup->entries = g_array_new (FALSE, TRUE, sizeof (SetupEntry));
  g_array_set_clear_func (setup->entries, entry_clear);
  return setup;
}

void
replay_setup_free (ReplaySetup *setup)
{
  if (setup == NULL)
    return;
  replay_setup_unguard (setup);
  g_array_unref (setup->entries);
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

/* The value to write back for what a sysfs file reads: the bracketed
 * choice of "none [mq-deadline] kyber". */
static char *
writable_value (const char *text)
{
  const char *open = strchr (text, '[');
  const char *close = open ? strchr (open, ']') : NULL;

  if (open && close)
    return g_strndup (open + 1, close - open - 1);
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

void
replay_setup_record (ReplaySetup *setup, const char *path, const char *old_value,
                     gboolean compare, FILE *log)
{
  g_autofree char *dir = g_path_get_dirname (path);
  SetupEntry e = { g_strdup (path), g_strdup (old_value), compare,
                   g_str_has_suffix (dir, "/iosched") };

  g_array_append_val (setup->entries, e);
  /* Before the change: what to type if this process dies by SIGKILL. */
  if (log)
    {
      fprintf (log, "iosim replay: old setting (restore by hand if killed): echo '%s' > %s\n",
               old_value, path);
      fflush (log);
    }
}

/* Record @path's current value, then write @value. */
gboolean
replay_setup_change_file (ReplaySetup *setup, const char *path, const char *value, FILE *log, GError **error)
{
  g_autofree char *now = replay_setup_read_stripped (path, error);
  g_autofree char *old = NULL;

  if (now == NULL)
    return FALSE;
  old = writable_value (now);
  replay_setup_record (setup, path, old, TRUE, log);
  return replay_setup_write_value (path, value, error);
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
      if ((value = replay_setup_read_stripped (path, error)) == NULL)
        return FALSE;
      replay_setup_record (setup, path, value, TRUE, log);
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
  if ((nr = replay_setup_read_stripped (nr_path, error)) == NULL)
    return FALSE;
  replay_setup_record (setup, sched_path, current, TRUE, log);
  /* Written back after the scheduler, in this order. */
  replay_setup_record (setup, nr_path, nr, TRUE, log);
  if (!record_iosched (setup, queue_dir, log, error))
    return FALSE;
  if (!replay_setup_write_value (sched_path, wanted, error))
    {
      g_prefix_error (error, "--sched %s: ", wanted);
      return FALSE;
    }
  return TRUE;
}

static gboolean
apply_list (ReplaySetup *setup, const char *dir, const char *const *list, const char *option,
            FILE *log, GError **error)
{
  for (guint i = 0; list && list[i]; i++)
    {
      g_autofree char *key = NULL, *value = NULL, *path = NULL;

      if (!split_setting (list[i], option, &key, &value, error))
        return FALSE;
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
  replay_setup_record (setup, path, line ? line : absent_value, FALSE, log);
  return replay_setup_write_value (path, new_value, error);
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
  devno = g_strdup_printf ("%u:%u", t->major, t->minor);
  if (t->is_partition)
    {
      g_autofree char *dev = g_build_filename (t->sysfs_root, "block", t->disk_name, "dev", NULL);
      g_autofree char *text = replay_setup_read_stripped (dev, error);
      if (text == NULL)
        return FALSE;
      g_free (devno);
      devno = g_strdup (text);
    }
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

static char *
queue_dir (const ReplayTarget *t)
{
  return g_build_filename (t->sysfs_root ? t->sysfs_root : "/sys", "block", t->disk_name,
                           "queue", NULL);
}

gboolean
replay_setup_apply (ReplaySetup *setup, const ReplaySetupSpec *spec, const ReplayTarget *target,
                    FILE *log, GError **error)
{
  g_autofree char *qdir = queue_dir (target);
  g_autofree char *iosched = g_build_filename (qdir, "iosched", NULL);

  g_return_val_if_fail (setup != NULL && spec != NULL && target != NULL, FALSE);

  if (!replay_setup_spec_check (spec, error))
    return FALSE;
  /* Scheduler first: its tunables exist only once it is active. */
  if ((spec->scheduler && !apply_scheduler (setup, qdir, spec->scheduler, log, error))
      || !apply_list (setup, iosched, spec->sched_set, "--sched-set", log, error)
      || !apply_list (setup, qdir, spec->queue_set, "--set-queue", log, error)
      || !apply_throttle (setup, spec, target, log, error))
    {
      g_prefix_error (error, "setting up %s: ", target->path);
      return FALSE;
    }
  return TRUE;
}

gboolean
replay_setup_restore (ReplaySetup *setup, FILE *log, GError **error)
{
  GError *first = NULL;
  g_autoptr (GHashTable) done = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = setup->restored; i < setup->entries->len; i++)
    {
      const SetupEntry *e = &g_array_index (setup->entries, SetupEntry, i);
      GError *local = NULL;

      if (e->cpuset)
        {
          if (!replay_setup_empty_cpuset (e->path, e->old_value, log, &local))
            {
              if (first == NULL)
                first = local;
              else
                g_error_free (local);
            }
          continue;
        }
      /* A file recorded twice (nr_requests before the elevator switch and
       * again for --nr-requests) goes back to its first, original value;
       * the later value existed only under the replay's elevator. */
      if (e->compare && !g_hash_table_add (done, e->path))
        continue;
      /* A tunable of the replay's elevator left with it. */
      if (e->may_vanish && !g_file_test (e->path, G_FILE_TEST_EXISTS))
        continue;
      if (e->compare)
        {
          g_autofree char *now = replay_setup_read_stripped (e->path, NULL);
          g_autofree char *now_value = now ? writable_value (now) : NULL;
          if (g_strcmp0 (now_value, e->old_value) == 0)
            continue;
        }
      if (!replay_setup_write_value (e->path, e->old_value, &local))
        {
          if (first == NULL)
            first = local;
          else
            g_error_free (local);
        }
      else if (log)
        fprintf (log, "iosim replay: restored %s = %s\n", e->path, e->old_value);
    }
  setup->restored = setup->entries->len;
  if (first != NULL)
    {
      g_propagate_prefixed_error (error, first, "restoring the target settings: ");
      return FALSE;
    }
  return TRUE;
}

static void
restore_guarded_at_exit (void)
{
  for (guint i = 0; guarded_setups && i < guarded_setups->len; i++)
    {
      ReplaySetup *setup = g_ptr_array_index (guarded_setups, i);
      g_autoptr (GError) error = NULL;

      if (replay_setup_pending (setup) > 0 && !replay_setup_restore (setup, stderr, &error))
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

void
replay_setup_record_cpuset (ReplaySetup *setup, const char *shield_dir, const char *back_procs,
                            FILE *log)
{
  SetupEntry e = { g_strdup (shield_dir), g_strdup (back_procs), FALSE, FALSE, TRUE };

  g_array_append_val (setup->entries, e);
  if (log)
    {
      fprintf (log, "iosim replay: CPU shield (undo by hand if killed): for p in $(cat %s/cgroup.procs); "
               "do echo $p > %s; done; rmdir %s\n", shield_dir, back_procs, shield_dir);
      fflush (log);
    }
}

void
replay_setup_forget_last (ReplaySetup *setup)
{
  g_assert (setup->entries->len > setup->restored);
  g_array_set_size (setup->entries, setup->entries->len - 1);
}
