/* replay-capture.c — `iosim capture`: block events of one device through
 * tracefs and the ftrace blk tracer (Linux 6.x kernel/trace/blktrace.c),
 * the same steps as by hand:
 *   echo mono > trace_clock; echo 16384 > buffer_size_kb;
 *   echo blk > current_tracer; : > trace; echo 1 > /sys/block/X/trace/enable;
 *   cat trace_pipe > FILE
 * Every setting touched is saved first and restored on every exit path.
 */
#include "replay/replay-capture.h"
#include "replay/replay-safety.h"
#include "replay/replay-setup.h"
#include "replay/replay-setup-private.h"
#include "replay/replay-wbt-probe.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_DEFAULT_BUFFER_KB 16384
#define CAPTURE_POLL_MS 100

/* Saved in this order, restored in reverse: the tracer first (after
 * trace_pipe is closed: the kernel refuses to switch tracers while a
 * reader holds it), recording (tracing_on) last. */
static const char *const tracefs_files[] = {
  "tracing_on", "buffer_size_kb", "trace_clock", "current_tracer", NULL,
};
/* "enable" first: with enable 0 the kernel has no blk_trace for the disk
 * and the other four read "disabled" (blktrace.c sysfs_blk_trace_attr_show). */
static const char *const disk_files[] = {
  "trace/enable", "trace/act_mask", "trace/start_lba", "trace/end_lba", "trace/pid", NULL,
};

const char *const *
replay_tracefs_saved_files (void)
{
  return tracefs_files;
}

const char *const *
replay_tracefs_saved_disk_files (void)
{
  return disk_files;
}

struct _ReplayTracefsState {
  char *tracefs_dir;
  char *disk_dir;                  /* /sys/block/DISK */
  char *tracefs_values[G_N_ELEMENTS (tracefs_files)];
  char *disk_values[G_N_ELEMENTS (disk_files)];
};

static gboolean
write_file (const char *path, const char *value, GError **error)
{
  int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  gsize len = strlen (value);

  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "cannot open %s for writing: %s", path, g_strerror (errno));
      return FALSE;
    }
  if (len > 0 && write (fd, value, len) != (ssize_t) len)
    {
      int saved = errno;
      close (fd);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "cannot write '%s' to %s: %s", value, path, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  return TRUE;
}

static char *
read_value (const char *dir, const char *file, GError **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  return g_strstrip (text);
}

/* The value to write back for what a tracefs file reads as: the bracketed
 * choice of "[local] global ..." lists, the number of "7 (expanded: 1408)". */
static char *
writable_value (const char *text)
{
  const char *open = strchr (text, '[');
  const char *close = open ? strchr (open, ']') : NULL;
  const char *paren = strchr (text, '(');

  if (open && close)
    return g_strndup (open + 1, close - open - 1);
  if (paren)
    return g_strstrip (g_strndup (text, paren - text));
  return g_strdup (text);
}

void
replay_tracefs_state_free (ReplayTracefsState *state)
{
  if (state == NULL)
    return;
  g_free (state->tracefs_dir);
  g_free (state->disk_dir);
  for (guint i = 0; i < G_N_ELEMENTS (tracefs_files); i++)
    g_free (state->tracefs_values[i]);
  for (guint i = 0; i < G_N_ELEMENTS (disk_files); i++)
    g_free (state->disk_values[i]);
  g_free (state);
}

ReplayTracefsState *
replay_tracefs_save (const char *tracefs_dir, const char *disk_name, GError **error)
{
  g_autoptr (ReplayTracefsState) state = g_new0 (ReplayTracefsState, 1);

  state->tracefs_dir = g_strdup (tracefs_dir);
  state->disk_dir = g_build_filename ("/sys/block", disk_name, NULL);
  for (guint i = 0; tracefs_files[i]; i++)
    if ((state->tracefs_values[i] = read_value (tracefs_dir, tracefs_files[i], error)) == NULL)
      return NULL;
  for (guint i = 0; disk_files[i]; i++)
    if ((state->disk_values[i] = read_value (state->disk_dir, disk_files[i], error)) == NULL)
      return NULL;
  return g_steal_pointer (&state);
}

static void
restore_one (const char *dir, const char *file, const char *saved, GError **first_error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *now = read_value (dir, file, NULL);
  g_autofree char *value = writable_value (saved);
  g_autofree char *now_value = now ? writable_value (now) : NULL;
  GError *local = NULL;

  if (g_strcmp0 (now_value, value) == 0)
    return;
  /* Read back: the value written back must be the one saved (or its
   * rounding: buffer_size_kb). */
  if (write_file (path, value, &local))
    {
      g_autofree char *shown = NULL;
      gboolean adjusted;

      replay_setup_read_back (path, value, &shown, &adjusted, &local);
    }
  if (local != NULL)
    {
      if (*first_error == NULL)
        *first_error = local;
      else
        g_error_free (local);
    }
}

gboolean
replay_tracefs_restore (ReplayTracefsState *state, GError **error)
{
  GError *first = NULL;
  gboolean was_enabled = g_strcmp0 (state->disk_values[0], "1") == 0;

  /* Disabling the disk drops its blk_trace and with it the other four
   * settings; only an enabled one has values to write back. */
  restore_one (state->disk_dir, disk_files[0], state->disk_values[0], &first);
  for (guint i = 1; was_enabled && disk_files[i]; i++)
    restore_one (state->disk_dir, disk_files[i], state->disk_values[i], &first);
  for (gint i = (gint) G_N_ELEMENTS (tracefs_files) - 2; i >= 0; i--)
    restore_one (state->tracefs_dir, tracefs_files[i], state->tracefs_values[i], &first);
  if (first != NULL)
    {
      g_propagate_prefixed_error (error, first, "restoring tracer settings: ");
      return FALSE;
    }
  return TRUE;
}

gboolean
replay_tracefs_journal (const ReplayTracefsState *state, ReplayJournal *journal,
                        gboolean with_tracefs, GError **error)
{
  gboolean was_enabled = g_strcmp0 (state->disk_values[0], "1") == 0;

  /* As replay_tracefs_restore() writes them: the other disk files only
   * exist (and matter) while the disk was enabled. */
  for (guint i = 0; disk_files[i] && (i == 0 || was_enabled); i++)
    {
      g_autofree char *path = g_build_filename (state->disk_dir, disk_files[i], NULL);
      g_autofree char *value = writable_value (state->disk_values[i]);
      if (!replay_journal_add (journal, path, value, REPLAY_JOURNAL_COMPARE, error))
        return FALSE;
    }
  for (gint i = (gint) G_N_ELEMENTS (tracefs_files) - 2; with_tracefs && i >= 0; i--)
    {
      g_autofree char *path = g_build_filename (state->tracefs_dir, tracefs_files[i], NULL);
      g_autofree char *value = writable_value (state->tracefs_values[i]);
      if (!replay_journal_add (journal, path, value, REPLAY_JOURNAL_COMPARE, error))
        return FALSE;
    }
  return TRUE;
}

void
replay_tracefs_remove_stale_instances (const char *prefix, gboolean dry_run, FILE *log)
{
  g_autofree char *tracefs = replay_tracefs_find (NULL, FALSE, NULL, NULL);
  g_autofree char *instances = NULL;
  g_autoptr (GDir) d = NULL;
  const char *name;

  if (tracefs == NULL)
    return;
  instances = g_build_filename (tracefs, "instances", NULL);
  d = g_dir_open (instances, 0, NULL);
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      guint64 pid;

      if (!g_str_has_prefix (name, prefix)
          || !g_ascii_string_to_unsigned (name + strlen (prefix), 10, 1, G_MAXINT, &pid, NULL)
          || kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      g_autofree char *path = g_build_filename (instances, name, NULL);
      if (log)
        fprintf (log, "iosim: %s the tracefs instance %s of dead process %" G_GUINT64_FORMAT "\n",
                 dry_run ? "would remove" : "removing", path, pid);
      if (!dry_run)
        g_rmdir (path);
    }
}

char *
replay_tracefs_make_instance (const char *tracefs_dir, const char *prefix, GError **error)
{
  char *instance;

  replay_tracefs_remove_stale_instances (prefix, FALSE, NULL);
  instance = g_strdup_printf ("%s/instances/%s%d", tracefs_dir, prefix, (int) getpid ());
  if (g_mkdir (instance, 0700) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "cannot create the tracefs instance %s: %s", instance, g_strerror (errno));
      g_free (instance);
      return NULL;
    }
  return instance;
}

static gboolean
tracefs_usable (const char *dir)
{
  g_autofree char *trace = g_build_filename (dir, "trace", NULL);

  return g_file_test (trace, G_FILE_TEST_EXISTS);
}

char *
replay_tracefs_find (const char *dir, gboolean mount_if_absent, gboolean *mounted, GError **error)
{
  static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

  if (mounted)
    *mounted = FALSE;
  if (dir != NULL)
    {
      if (tracefs_usable (dir))
        return g_strdup (dir);
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS, "%s: no tracefs there", dir);
      return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (places); i++)
    if (tracefs_usable (places[i]))
      return g_strdup (places[i]);
  if (mount_if_absent && mount ("nodev", places[0], "tracefs", 0, NULL) == 0)
    {
      if (mounted)
        *mounted = TRUE;
      return g_strdup (places[0]);
    }
  if (!mount_if_absent)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS, "tracefs is not mounted at %s or %s",
                   places[0], places[1]);
      return NULL;
    }
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
               "no tracefs at %s or %s, and mounting it failed: %s (need root and "
               "CONFIG_FTRACE)", places[0], places[1], g_strerror (errno));
  return NULL;
}

static gboolean
check_blk_tracer (const char *tracefs, GError **error)
{
  g_autofree char *tracers = read_value (tracefs, "available_tracers", error);
  g_auto (GStrv) names = NULL;

  if (tracers == NULL)
    return FALSE;
  names = g_strsplit_set (tracers, " \t\n", -1);
  if (g_strv_contains ((const char *const *) names, "blk"))
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
               "%s/available_tracers has no 'blk' (kernel built without "
               "CONFIG_BLK_DEV_IO_TRACE): %s", tracefs, tracers);
  return FALSE;
}

/* One capture at a time: an advisory lock on current_tracer (flock works
 * on any file), and no taking over a tracer someone else is using. */
static int
claim_tracefs (const char *tracefs, GError **error)
{
  g_autofree char *path = g_build_filename (tracefs, "current_tracer", NULL);
  g_autofree char *tracer = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS, "%s: %s", path,
                   errno == EWOULDBLOCK ? "another iosim capture is running" : g_strerror (errno));
      if (fd >= 0)
        close (fd);
      return -1;
    }
  tracer = read_value (tracefs, "current_tracer", NULL);
  if (tracer != NULL && strcmp (tracer, "nop") != 0 && strcmp (tracer, "blk") != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "%s: the '%s' tracer is in use; refusing to take tracefs over "
                   "(set it to nop first if nobody needs it)", path, tracer);
      close (fd);
      return -1;
    }
  return fd;
}

static void
write_header (FILE *out, const ReplayTarget *t)
{
  g_autofree char *sched = replay_target_scheduler (t);
  g_autofree char *rot = replay_target_queue_attr (t, "rotational");
  g_autofree char *nr = replay_target_queue_attr (t, "nr_requests");
  g_autofree char *ra = replay_target_queue_attr (t, "read_ahead_kb");

  fprintf (out, "# tracer: blk\n");
  fprintf (out, "# iosim-capture device=%s devno=%u,%u scheduler=%s rotational=%s "
           "logical_block_size=%u size_bytes=%" G_GUINT64_FORMAT " nr_requests=%s "
           "read_ahead_kb=%s trace_clock=mono",
           t->path, t->major, t->minor, sched ? sched : "unknown", rot ? rot : "unknown",
           t->logical_block_bytes, t->size_bytes, nr ? nr : "unknown", ra ? ra : "unknown");
  if (t->is_partition)
    fprintf (out, " partition=%s disk=%s start_sector=%" G_GUINT64_FORMAT,
             t->name, t->disk_name, t->start_sector);
  fputc ('\n', out);
}

static gint64
now_ns (void)
{
  return g_get_monotonic_time () * 1000;
}

/* Copy what trace_pipe has now (non-blocking) to @out. */
static gboolean
pump (int pipe_fd, FILE *out, ReplayCaptureStats *stats, GError **error)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = read (pipe_fd, buf, sizeof buf);
      if (n > 0)
        {
          if (fwrite (buf, 1, (size_t) n, out) != (size_t) n)
            {
              g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO,
                           "writing the capture: %s", g_strerror (errno));
              return FALSE;
            }
          stats->bytes += (guint64) n;
          for (ssize_t i = 0; i < n; i++)
            stats->lines += buf[i] == '\n';
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
        return TRUE;
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "reading trace_pipe: %s", g_strerror (errno));
      return FALSE;
    }
}

static pid_t
start_command (char **argv, GError **error)
{
  pid_t pid = fork ();

  if (pid < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "fork: %s", g_strerror (errno));
      return -1;
    }
  if (pid == 0)
    {
      execvp (argv[0], argv);
      fprintf (stderr, "iosim capture: cannot run %s: %s\n", argv[0], g_strerror (errno));
      _exit (127);
    }
  return pid;
}

/* blk-wbt's events of the target's disk, when asked for; a kernel without
 * them (or a tracefs without instances) gives none, and says so on the
 * log, since the capture itself does not need them. */
static ReplayWbtProbe *
start_wbt_probe (const ReplayCaptureOptions *opts, const char *tracefs,
                 const ReplayTarget *target)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *devno = NULL;
  ReplayWbtProbe *probe = NULL;

  if (opts->wbt_output_path == NULL)
    return NULL;
  devno = replay_setup_disk_devno (target, &local);
  if (devno != NULL)
    probe = replay_wbt_probe_start (tracefs, devno, &local);
  if (probe == NULL && opts->log)
    fprintf (opts->log, "iosim capture: no blk-wbt events recorded: %s\n", local->message);
  return probe;
}

static gboolean
stop_wbt_probe (const ReplayCaptureOptions *opts, ReplayWbtProbe *probe, GError **error)
{
  if (probe == NULL)
    return TRUE;
  if (!replay_wbt_probe_stop (probe, opts->wbt_output_path, error))
    {
      g_prefix_error (error, "blk-wbt events to %s: ", opts->wbt_output_path);
      return FALSE;
    }
  return TRUE;
}

/* Record until the period ends, the command exits or the stop flag rises. */
static gboolean
record (const ReplayCaptureOptions *opts, int pipe_fd, FILE *out, ReplayCaptureStats *stats,
        GError **error)
{
  gint64 start = now_ns ();
  pid_t child = -1;
  GError *local = NULL;

  if (opts->argv != NULL && (child = start_command (opts->argv, error)) < 0)
    return FALSE;
  for (;;)
    {
      struct pollfd pfd = { .fd = pipe_fd, .events = POLLIN };

      if (poll (&pfd, 1, CAPTURE_POLL_MS) < 0 && errno != EINTR)
        {
          g_set_error (&local, REPLAY_ERROR, REPLAY_ERROR_TRACEFS, "poll: %s", g_strerror (errno));
          break;
        }
      if (!pump (pipe_fd, out, stats, &local))
        break;
      if (opts->stop != NULL && *opts->stop)
        {
          stats->stopped = TRUE;
          break;
        }
      if (child > 0 && waitpid (child, &stats->command_status, WNOHANG) == child)
        {
          child = -1;
          break;
        }
      if (child < 0 && opts->argv == NULL && !opts->until_stopped
          && now_ns () - start >= opts->duration_ns)
        break;
    }
  if (child > 0)
    {
      kill (child, SIGTERM);
      while (waitpid (child, &stats->command_status, 0) < 0 && errno == EINTR)
        ;
    }
  stats->elapsed_ns = now_ns () - start;
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

/* The whole disks of opts->more_devices (a partition traces its disk),
 * without the main disk or repeats. */
static gboolean
probe_more (const ReplayCaptureOptions *opts, const ReplayTarget *main_target, GPtrArray *disks,
            GError **error)
{
  for (guint i = 0; opts->more_devices && opts->more_devices[i]; i++)
    {
      ReplayTarget t;

      if (!replay_target_probe (opts->more_devices[i], &t, error))
        return FALSE;
      g_ptr_array_add (disks, g_strdup (t.disk_name));
      replay_target_clear (&t);
    }
  return TRUE;
}

/* Write @value to @path and read it back: an error when the kernel did
 * not take it, a warning on @log when it adjusted it. */
static gboolean
set_checked (const char *path, const char *value, FILE *log, GError **error)
{
  g_autofree char *shown = NULL;
  gboolean adjusted;

  if (!write_file (path, value, error)
      || !replay_setup_read_back (path, value, &shown, &adjusted, error))
    return FALSE;
  if (adjusted && log)
    fprintf (log, "iosim capture: warning: %s: asked for %s, the kernel keeps %s (in force)\n",
             path, value, shown);
  return TRUE;
}

static gboolean
enable_more (GPtrArray *disks, GError **error)
{
  for (guint i = 0; i < disks->len; i++)
    {
      g_autofree char *enable = g_build_filename ("/sys/block", g_ptr_array_index (disks, i),
                                                  "trace", "enable", NULL);
      if (!set_checked (enable, "1", NULL, error))
        return FALSE;
    }
  return TRUE;
}

/* Switch the tracer on for the disk; on failure the caller restores. */
static gboolean
configure (const char *tracefs, const char *disk_name, guint buffer_kb, FILE *log,
           GError **error)
{
  g_autofree char *clock = g_build_filename (tracefs, "trace_clock", NULL);
  g_autofree char *buffer = g_build_filename (tracefs, "buffer_size_kb", NULL);
  g_autofree char *tracer = g_build_filename (tracefs, "current_tracer", NULL);
  g_autofree char *trace = g_build_filename (tracefs, "trace", NULL);
  g_autofree char *on = g_build_filename (tracefs, "tracing_on", NULL);
  g_autofree char *enable = g_build_filename ("/sys/block", disk_name, "trace", "enable", NULL);
  g_autofree char *kb = g_strdup_printf ("%u", buffer_kb);

  return set_checked (clock, "mono", log, error)
         && set_checked (buffer, kb, log, error)
         && set_checked (tracer, "blk", log, error)
         && write_file (trace, "", error)
         && set_checked (on, "1", log, error)
         && set_checked (enable, "1", log, error);
}

static const char *const tracefs_scope[] = { REPLAY_JOURNAL_SCOPE_TRACEFS, NULL };

static const char *
journal_dir (const ReplayCaptureOptions *opts)
{
  return opts->journal_dir ? opts->journal_dir : replay_journal_default_dir ();
}

/* The journal of this capture, holding every saved value, before the
 * first change; the restore hint goes to the log. */
static ReplayJournal *
open_journal (const ReplayCaptureOptions *opts, const ReplayTarget *target, GPtrArray *more_disks,
              const ReplayTracefsState *state, GPtrArray *more_states, GError **error)
{
  g_autoptr (GPtrArray) devices = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (ReplayJournal) journal = NULL;

  g_autofree char *devno = replay_setup_disk_devno (target, error);

  /* Whole disks, MAJ:MIN first: a restore checks that each still is. */
  if (devno == NULL)
    return NULL;
  g_ptr_array_add (devices, g_strdup_printf ("%s %s", devno, target->path));
  for (guint i = 0; i < more_disks->len; i++)
    {
      const char *disk = g_ptr_array_index (more_disks, i);
      g_autofree char *dev = g_build_filename ("/sys/block", disk, "dev", NULL);
      g_autofree char *more = replay_setup_read_stripped (dev, error);
      if (more == NULL)
        return NULL;
      g_ptr_array_add (devices, g_strdup_printf ("%s %s", more, disk));
    }
  g_ptr_array_add (devices, NULL);
  journal = replay_journal_create (journal_dir (opts), "capture", tracefs_scope,
                                   (const char *const *) devices->pdata, error);
  if (journal == NULL)
    return NULL;
  /* Restored in this order: the further disks, the main one, the tracer. */
  for (guint i = 0; i < more_states->len; i++)
    if (!replay_tracefs_journal (g_ptr_array_index (more_states, i), journal, FALSE, error))
      return NULL;
  if (!replay_tracefs_journal (state, journal, TRUE, error))
    return NULL;
  if (opts->log)
    {
      g_autofree char *hint = replay_journal_restore_hint (journal);
      fprintf (opts->log, "iosim capture: journal %s; if killed, run: %s\n",
               replay_journal_file (journal), hint);
      fflush (opts->log);
    }
  return g_steal_pointer (&journal);
}

gboolean
replay_capture_run (const ReplayCaptureOptions *opts, ReplayCaptureStats *stats, GError **error)
{
  ReplayTarget target;
  g_autofree char *tracefs = NULL;
  g_autoptr (ReplayTracefsState) state = NULL;
  g_autoptr (GPtrArray) more_states = g_ptr_array_new_with_free_func ((GDestroyNotify) replay_tracefs_state_free);
  g_autoptr (GPtrArray) more_disks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) restore_error = NULL;
  g_autoptr (ReplayJournal) journal = NULL;
  gboolean mounted = FALSE, ok = FALSE, restored = TRUE;
  ReplayWbtProbe *wbt = NULL;
  FILE *out = NULL;
  int pipe_fd = -1, lock_fd = -1;

  g_return_val_if_fail (opts && opts->device && opts->output_path && stats, FALSE);
  g_return_val_if_fail (opts->argv != NULL || opts->duration_ns > 0
                        || (opts->until_stopped && opts->stop != NULL), FALSE);
  memset (stats, 0, sizeof *stats);
  stats->command_status = -1;

  if (!replay_target_probe (opts->device, &target, error))
    return FALSE;
  if (!probe_more (opts, &target, more_disks, error))
    {
      replay_target_clear (&target);
      return FALSE;
    }
  if ((tracefs = replay_tracefs_find (opts->tracefs_dir, TRUE, &mounted, error)) == NULL
      || !check_blk_tracer (tracefs, error)
      || (lock_fd = claim_tracefs (tracefs, error)) < 0
      /* What a killed capture left is put back before it is saved. */
      || !replay_journal_recover (journal_dir (opts), tracefs_scope, NULL, "iosim capture",
                                  opts->log, error))
    goto out;
  if ((out = fopen (opts->output_path, "w")) == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", opts->output_path,
                   g_strerror (errno));
      goto out;
    }
  write_header (out, &target);
  for (guint i = 0; opts->more_devices && opts->more_devices[i]; i++)
    fprintf (out, "# also traced: device=%s disk=%s\n", opts->more_devices[i],
             (const char *) g_ptr_array_index (more_disks, i));
  /* Every state saved before anything changes. */
  if ((state = replay_tracefs_save (tracefs, target.disk_name, error)) == NULL)
    goto out;
  for (guint i = 0; i < more_disks->len; i++)
    {
      ReplayTracefsState *more = replay_tracefs_save (tracefs, g_ptr_array_index (more_disks, i),
                                                      error);
      if (more == NULL)
        goto out;
      g_ptr_array_add (more_states, more);
    }

  if ((journal = open_journal (opts, &target, more_disks, state, more_states, error)) == NULL)
    goto restore;
  if (configure (tracefs, target.disk_name,
                 opts->buffer_size_kb ? opts->buffer_size_kb : CAPTURE_DEFAULT_BUFFER_KB,
                 opts->log, error)
      && enable_more (more_disks, error))
    {
      g_autofree char *pipe_path = g_build_filename (tracefs, "trace_pipe", NULL);
      g_autofree char *on = g_build_filename (tracefs, "tracing_on", NULL);

      wbt = start_wbt_probe (opts, tracefs, &target);
      pipe_fd = open (pipe_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (pipe_fd < 0)
        g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS, "%s: %s", pipe_path,
                     g_strerror (errno));
      else if ((opts->recording == NULL || (g_atomic_int_set (opts->recording, 1), TRUE))
               && record (opts, pipe_fd, out, stats, error)
               /* Stop recording, then take what the ring buffer still holds. */
               && write_file (on, "0", error)
               && pump (pipe_fd, out, stats, error)
               && stop_wbt_probe (opts, wbt, error))
        ok = TRUE;
    }
restore:
  g_clear_pointer (&wbt, replay_wbt_probe_free);
  /* The tracer cannot change while trace_pipe is open (EBUSY). */
  if (pipe_fd >= 0)
    close (pipe_fd);
  pipe_fd = -1;
  /* The further disks first: the main state puts the tracer back last. */
  for (guint i = 0; i < more_states->len; i++)
    restored &= replay_tracefs_restore (g_ptr_array_index (more_states, i),
                                        restore_error ? NULL : &restore_error);
  restored &= replay_tracefs_restore (state, restore_error ? NULL : &restore_error);
  /* Everything is back: nothing for a later run to redo. */
  if (restored && journal != NULL)
    restored = replay_journal_remove (journal, &restore_error);
  else if (journal != NULL && opts->log)
    fprintf (opts->log, "iosim capture: journal %s kept: 'iosim restore' retries\n",
             replay_journal_file (journal));
  if (!restored)
    {
      if (ok)
        g_propagate_error (error, g_steal_pointer (&restore_error));
      else
        g_prefix_error (error, "(restoring the tracer settings also failed: %s) ",
                        restore_error->message);
      ok = FALSE;
    }

out:
  if (pipe_fd >= 0)
    close (pipe_fd);
  if (lock_fd >= 0)
    close (lock_fd);
  if (out != NULL && fclose (out) != 0 && ok)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", opts->output_path,
                   g_strerror (errno));
      ok = FALSE;
    }
  if (mounted)
    umount2 (tracefs, MNT_DETACH);
  replay_target_clear (&target);
  return ok;
}

struct _ReplayCaptureThread {
  ReplayCaptureOptions opts;
  volatile sig_atomic_t stop;
  volatile gint        recording;
  volatile gint        done;
  ReplayCaptureStats   stats;
  GError              *error;
  gboolean             ok;
  GThread             *thread;
};

static gpointer
capture_thread_main (gpointer data)
{
  ReplayCaptureThread *c = data;

  c->ok = replay_capture_run (&c->opts, &c->stats, &c->error);
  g_atomic_int_set (&c->done, 1);
  return NULL;
}

ReplayCaptureThread *
replay_capture_start (const ReplayCaptureOptions *opts, GError **error)
{
  ReplayCaptureThread *c = g_new0 (ReplayCaptureThread, 1);

  c->opts = *opts;
  c->opts.stop = &c->stop;
  c->opts.until_stopped = TRUE;
  c->opts.duration_ns = 0;
  c->opts.argv = NULL;
  c->opts.recording = &c->recording;
  c->thread = g_thread_new ("replay-capture", capture_thread_main, c);
  /* The replay must not start before the tracer records. */
  while (!g_atomic_int_get (&c->recording) && !g_atomic_int_get (&c->done))
    g_usleep (1000);
  if (g_atomic_int_get (&c->recording))
    return c;
  g_thread_join (c->thread);
  g_propagate_error (error, c->error);
  g_free (c);
  return NULL;
}

gboolean
replay_capture_finish (ReplayCaptureThread *c, ReplayCaptureStats *stats, GError **error)
{
  gboolean ok;

  c->stop = 1;
  g_thread_join (c->thread);
  ok = c->ok;
  if (stats)
    *stats = c->stats;
  if (!ok)
    g_propagate_error (error, c->error);
  else
    g_clear_error (&c->error);
  g_free (c);
  return ok;
}
