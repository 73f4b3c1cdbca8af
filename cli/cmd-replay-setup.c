/* cmd-replay-setup.c — target setup with guaranteed restore, device
 * mapping and capture for `iosim replay` (see cmd-replay-setup.h).
 *
 * Restore paths: the main flow calls cli_replay_target_finish() after the
 * replay on success, error and after Ctrl-C/SIGTERM/SIGHUP (the handlers
 * in cli-signals.c only raise a flag the replay polls); an atexit()
 * handler (replay_setup_guard) covers exit() from elsewhere.  SIGKILL
 * cannot be caught: every original value is in the run's journal
 * (replay-journal.h) before it changes, and the next replay on the device
 * or `iosim restore` puts it back; the log on stderr also holds one
 * "echo OLD > PATH" line per setting. */
#include "cli/cmd-replay-setup.h"

#include <errno.h>
#include <string.h>

#include "sim/sim-units.h"

const GOptionEntry *
cli_replay_target_entries (ReplayTargetArgs *t)
{
  const GOptionEntry entries[] = {
    { "map", 0, 0, G_OPTION_ARG_STRING_ARRAY, &t->maps,
      "Replay traced device MAJ,MIN on its own target (repeatable; instead of --target)", "MAJ,MIN=/dev/X" },
    { "scale-offsets", 0, 0, G_OPTION_ARG_NONE, &t->scale_offsets,
      "Map each traced device's extent linearly onto a smaller target", NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &t->force,
      "Write even over a file system or partition table signature", NULL },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &t->sched, "Elevator for the replay (restored afterwards)", "NAME" },
    { "sched-set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &t->sched_set,
      "Elevator tunable under queue/iosched/ (repeatable)", "KEY=VALUE" },
    { "set-queue", 0, 0, G_OPTION_ARG_STRING_ARRAY, &t->queue_set,
      "Queue attribute under queue/ (repeatable)", "KEY=VALUE" },
    { "read-ahead-kb", 0, 0, G_OPTION_ARG_INT, &t->read_ahead_kb, "Set queue/read_ahead_kb", "KB" },
    { "nr-requests", 0, 0, G_OPTION_ARG_INT, &t->nr_requests, "Set queue/nr_requests", "N" },
    { "rotational", 0, 0, G_OPTION_ARG_INT, &t->rotational, "Set queue/rotational", "0|1" },
    { "throttle-read-bps", 0, 0, G_OPTION_ARG_STRING, &t->throttle_read,
      "blkio read limit (cgroup v1 root blkio.throttle, or v2 io.max)", "BYTES" },
    { "throttle-write-bps", 0, 0, G_OPTION_ARG_STRING, &t->throttle_write, "blkio write limit", "BYTES" },
    { "isolate", 0, 0, G_OPTION_ARG_NONE, &t->isolate,
      "Keep other work off the --cpus CPUs: root-cgroup processes into a cpuset of the other CPUs, "
      "unbound workqueues and IRQs there too (root; restored afterwards)", NULL },
    { "capture", 0, 0, G_OPTION_ARG_FILENAME, &t->capture,
      "Record what the block layer saw on the target(s) during the replay (tracefs; a last line maps "
      "the replay's threads to the trace's pids, so the capture reads back with them)", "FILE" },
    { NULL }
  };

  t->read_ahead_kb = t->nr_requests = t->rotational = -1;
  g_free (t->entries);
  t->entries = g_memdup2 (entries, sizeof entries);
  return t->entries;
}

static gboolean
parse_bps (const char *option, const char *text, guint64 *out)
{
  g_autoptr (GError) error = NULL;
  double rate;

  if (text == NULL)
    return TRUE;
  if (sim_parse_size_bytes (text, out, NULL) && *out > 0)
    return TRUE;
  if (sim_parse_rate_bytes_per_s (text, &rate, &error) && rate >= 1)
    {
      *out = (guint64) rate;
      return TRUE;
    }
  fprintf (stderr, "iosim replay: --%s takes a positive byte rate (e.g. 10MiB), not '%s'\n",
           option, text);
  return FALSE;
}

static gboolean
parse_map (const char *text, ReplayMap *out)
{
  const char *eq = strchr (text, '=');
  g_autofree char *devno = eq ? g_strndup (text, eq - text) : NULL;
  g_auto (GStrv) parts = devno ? g_strsplit_set (devno, ",:", 2) : NULL;
  guint64 a, b;

  if (parts == NULL || g_strv_length (parts) != 2 || eq[1] == '\0'
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32 - 1, &a, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32 - 1, &b, NULL))
    return FALSE;
  out->dev_major = (guint32) a;
  out->dev_minor = (guint32) b;
  out->target = eq + 1;
  return TRUE;
}

/* "dev:MAJ:MIN" of each target's disk (+ "isolate"), and "MAJ:MIN PATH"
 * of each for the journal's devices. */
static gboolean
journal_scopes (ReplayTargetArgs *t, const GArray *targets, GPtrArray *scopes,
                GPtrArray *devices, GError **error)
{
  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayTarget *target = &g_array_index (targets, ReplayTarget, i);
      g_autofree char *devno = NULL;

      /* A file has no queue settings to journal (refused in fill). */
      if (target->is_file)
        continue;
      if ((devno = replay_setup_disk_devno (target, error)) == NULL)
        return FALSE;
      g_ptr_array_add (scopes, g_strdup_printf ("dev:%s", devno));
      g_ptr_array_add (devices, g_strdup_printf ("%s %s", devno, target->path));
    }
  if (t->isolate)
    g_ptr_array_add (scopes, g_strdup (REPLAY_JOURNAL_SCOPE_ISOLATE));
  g_ptr_array_add (scopes, NULL);
  g_ptr_array_add (devices, NULL);
  return TRUE;
}

/* Before the replay: what a replay killed earlier left on these devices
 * is put back (a replay must not run, nor record originals, under
 * another's leftovers), a replay still running on them refuses; then, if
 * this one changes anything, its own journal. */
static gboolean
open_journal (ReplayTargetArgs *t, const GArray *targets, GError **error)
{
  g_autoptr (GPtrArray) scopes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) devices = g_ptr_array_new_with_free_func (g_free);
  const char *dir = replay_journal_default_dir ();
  ReplayJournal *journal;
  gboolean changes = t->isolate || !replay_setup_spec_empty (&t->spec);
  g_autofree char *hint = NULL;
  GError *local = NULL;

  if (!journal_scopes (t, targets, scopes, devices, error))
    return FALSE;
  if (!replay_journal_recover (dir, (const char *const *) scopes->pdata, NULL, "iosim replay",
                               stderr, &local))
    {
      /* Changing nothing, a replay (perhaps not root) may go on. */
      if (changes || g_error_matches (local, REPLAY_ERROR, REPLAY_ERROR_UNSAFE))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      fprintf (stderr, "iosim replay: warning: %s\n", local->message);
      g_error_free (local);
    }
  if (!changes)
    return TRUE;
  journal = replay_journal_create (dir, "replay", (const char *const *) scopes->pdata,
                                   (const char *const *) devices->pdata, error);
  if (journal == NULL)
    return FALSE;
  hint = replay_journal_restore_hint (journal);
  fprintf (stderr, "iosim replay: journal %s; if killed, run: %s\n",
           replay_journal_file (journal), hint);
  fflush (stderr);
  replay_setup_set_journal (t->setup, journal);
  return TRUE;
}

/* The replay's targets are open: apply the setup, start the capture. */
static gboolean
on_prepared (const GArray *targets, gpointer data, GError **error)
{
  ReplayTargetArgs *t = data;

  if (!open_journal (t, targets, error))
    return FALSE;
  if (t->isolate && !replay_setup_isolate (t->setup, t->isolate_cpus, NULL, stderr, error))
    return FALSE;   /* the main flow restores what was applied */
  for (guint i = 0; i < targets->len && !replay_setup_spec_empty (&t->spec); i++)
    if (!replay_setup_apply (t->setup, &t->spec, &g_array_index (targets, ReplayTarget, i),
                             stderr, error))
      return FALSE;   /* the main flow restores what was applied */
  if (t->capture)
    {
      g_autoptr (GPtrArray) more = g_ptr_array_new ();
      ReplayCaptureOptions copts = { 0 };

      for (guint i = 1; i < targets->len; i++)
        g_ptr_array_add (more, g_array_index (targets, ReplayTarget, i).path);
      g_ptr_array_add (more, NULL);
      copts.device = g_array_index (targets, ReplayTarget, 0).path;
      copts.more_devices = (const char *const *) more->pdata;
      copts.output_path = t->capture;
      copts.log = stderr;
      if ((t->capture_thread = replay_capture_start (&copts, error)) == NULL)
        {
          g_prefix_error (error, "--capture: ");
          return FALSE;
        }
    }
  return TRUE;
}

/* --sched and the other settings live in a block device's queue, and
 * --capture traces one: none of them applies to a regular-file target. */
static gboolean
check_file_targets (const ReplayTargetArgs *t, const ReplayOptions *opts)
{
  const char *file = NULL;

  if (opts->target != NULL && replay_target_path_is_file (opts->target))
    file = opts->target;
  for (guint i = 0; file == NULL && i < opts->n_maps; i++)
    if (replay_target_path_is_file (opts->maps[i].target))
      file = opts->maps[i].target;
  if (file == NULL || (replay_setup_spec_empty (&t->spec) && t->capture == NULL))
    return TRUE;
  fprintf (stderr, "iosim replay: %s is a regular file: --sched, --sched-set, --set-queue, "
           "--read-ahead-kb, --nr-requests, --rotational, --throttle-* and --capture act on a "
           "block device's queue; replay on the device the file system sits on for them\n",
           file);
  return FALSE;
}

gboolean
cli_replay_target_fill (ReplayTargetArgs *t, ReplayOptions *opts)
{
  g_autoptr (GError) error = NULL;
  const struct { const char *key; gint value; } dedicated[] = {
    { "read_ahead_kb", t->read_ahead_kb }, { "nr_requests", t->nr_requests },
    { "rotational", t->rotational },
  };

  t->map_array = g_array_new (FALSE, TRUE, sizeof (ReplayMap));
  for (guint i = 0; t->maps && t->maps[i]; i++)
    {
      ReplayMap m;
      if (!parse_map (t->maps[i], &m))
        {
          fprintf (stderr, "iosim replay: --map takes MAJ,MIN=/dev/X, not '%s'\n", t->maps[i]);
          return FALSE;
        }
      g_array_append_val (t->map_array, m);
    }
  if (t->map_array->len > 0 && opts->target != NULL)
    {
      fprintf (stderr, "iosim replay: give either --target or --map, not both\n");
      return FALSE;
    }
  opts->maps = (const ReplayMap *) t->map_array->data;
  opts->n_maps = t->map_array->len;
  opts->scale_offsets = t->scale_offsets;
  opts->force = t->force;
  if (opts->scale_offsets && opts->wrap)
    {
      fprintf (stderr, "iosim replay: --scale-offsets and --wrap are two ways to fit; pick one\n");
      return FALSE;
    }

  t->queue_list = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; t->queue_set && t->queue_set[i]; i++)
    g_ptr_array_add (t->queue_list, g_strdup (t->queue_set[i]));
  for (guint i = 0; i < G_N_ELEMENTS (dedicated); i++)
    if (dedicated[i].value >= 0)
      g_ptr_array_add (t->queue_list, g_strdup_printf ("%s=%d", dedicated[i].key, dedicated[i].value));
  g_ptr_array_add (t->queue_list, NULL);
  t->spec.scheduler = t->sched;
  t->spec.sched_set = (const char *const *) t->sched_set;
  t->spec.queue_set = (const char *const *) t->queue_list->pdata;
  if (!parse_bps ("throttle-read-bps", t->throttle_read, &t->spec.throttle_read_bps)
      || !parse_bps ("throttle-write-bps", t->throttle_write, &t->spec.throttle_write_bps))
    return FALSE;
  if (!replay_setup_spec_check (&t->spec, &error))
    {
      fprintf (stderr, "iosim replay: %s\n", error->message);
      return FALSE;
    }
  if (!check_file_targets (t, opts))
    return FALSE;
  if (t->isolate && (opts->cpus == NULL || opts->cpus->len == 0))
    {
      fprintf (stderr, "iosim replay: --isolate keeps other work off the replay's CPUs: give "
               "them with --cpus (e.g. --cpus 1 --isolate on a 2-CPU machine)\n");
      return FALSE;
    }
  t->isolate_cpus = opts->cpus;
  t->setup = replay_setup_new ();
  /* Restores at exit() too, should anything leave without finish(). */
  replay_setup_guard (t->setup);
  opts->prepared = on_prepared;
  opts->prepared_data = t;
  return TRUE;
}

gboolean
cli_replay_target_finish (ReplayTargetArgs *t)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = TRUE;

  if (t->capture_thread)
    {
      ReplayCaptureStats stats;

      if (!replay_capture_finish (g_steal_pointer (&t->capture_thread), &stats, &error))
        {
          fprintf (stderr, "iosim replay: --capture: %s\n", error->message);
          g_clear_error (&error);
          ok = FALSE;
        }
      else
        {
          fprintf (stderr, "iosim replay: captured %" G_GUINT64_FORMAT " lines in %.3f s to %s "
                   "(tracer settings restored)\n", stats.lines, stats.elapsed_ns / 1e9,
                   t->capture);
          t->captured = TRUE;
        }
    }
  /* Also with nothing pending: a clean restore removes the journal. */
  if (t->setup && !replay_setup_restore (t->setup, stderr, &error))
    {
      fprintf (stderr, "iosim replay: %s\n", error->message);
      ok = FALSE;
    }
  return ok;
}

gboolean
cli_replay_target_note_pids (ReplayTargetArgs *t, const ReplayResult *result)
{
  g_autofree char *line = NULL;
  FILE *out;
  gboolean ok;

  if (!t->captured || result == NULL || (line = replay_result_pid_map_line (result)) == NULL)
    return TRUE;
  out = fopen (t->capture, "a");
  ok = out != NULL && fputs (line, out) >= 0;
  if (out != NULL && fclose (out) != 0)
    ok = FALSE;
  if (!ok)
    fprintf (stderr, "iosim replay: --capture %s: cannot add the replay's pid map: %s\n",
             t->capture, g_strerror (errno));
  return ok;
}

void
cli_replay_target_print_plan (ReplayTargetArgs *t, const ReplayResult *result, FILE *out)
{
  replay_plan_print_targets (result->plan, result->targets, out);
  fputc ('\n', out);
  for (guint i = 0; i < result->targets->len; i++)
    replay_setup_describe (&t->spec, &g_array_index (result->targets, ReplayTarget, i), out);
  if (t->isolate)
    replay_setup_describe_isolate (t->isolate_cpus, NULL, out);
  if (t->capture)
    fprintf (out, "capture     block events of the target(s) to %s (tracefs, restored afterwards)\n",
             t->capture);
  if (result->plan->n_writes > 0)
    fprintf (out, "writes      %" G_GUINT64_FORMAT " bytes would be written%s%s\n",
             result->plan->bytes_written,
             result->plan->writes_need_allow_write > 0 ? " with --allow-write" : "",
             t->force ? " (--force: signatures ignored)" : "");
}

void
cli_replay_target_clear (ReplayTargetArgs *t)
{
  g_free (t->sched);
  g_free (t->throttle_read);
  g_free (t->throttle_write);
  g_free (t->capture);
  g_strfreev (t->sched_set);
  g_strfreev (t->queue_set);
  g_strfreev (t->maps);
  g_free (t->entries);
  g_clear_pointer (&t->queue_list, g_ptr_array_unref);
  g_clear_pointer (&t->map_array, g_array_unref);
  g_clear_pointer (&t->setup, replay_setup_free);
}

gboolean
cli_replay_target_amend_json (ReplayTargetArgs *t, const char *json_path, GError **error)
{
  return t->setup == NULL || replay_setup_amend_json (t->setup, json_path, error);
}
