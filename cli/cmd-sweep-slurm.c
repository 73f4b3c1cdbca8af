/* cmd-sweep-slurm.c — `iosim sweep ... --emit-slurm DIR`; see
 * cmd-sweep-slurm.h.  The script itself is models/sweep-slurm.c; here are
 * the options, the absolute paths, the probe and what is printed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <glib/gstdio.h>

#include "cli/cmd-sweep-slurm.h"
#include "models/sweep-slurm.h"
#include "sim/sim-output.h"

/* Array tasks when --shards is not given: one per point up to this many;
 * sites often cap array sizes (MaxArraySize defaults to 1001). */
#define DEFAULT_MAX_TASKS 100

const char cli_sweep_slurm_help[] =
  "On a cluster: --emit-slurm DIR writes DIR/sweep.sbatch, a Slurm job array\n"
  "whose task i runs --shard i/N into -o's folder/shards, and DIR/merge.sh,\n"
  "which merges them into -o's folder as a local run would fill it.  --time\n"
  "and --mem come from a probe (the first point with one seed, run here):\n"
  "its wall time x the runs of a task (points x seeds) x 2, at least a minute;\n"
  "its peak resident set x 1.5 + 32 MiB, at least 64 MiB.  --shards N gives\n"
  "N tasks (default: one per point, at most 100; more tasks than points are\n"
  "refused); --throttle K runs at most K at once:\n"
  "  iosim sweep S.ini --vary ... -o study --emit-slurm job --throttle 10\n"
  "  sbatch job/sweep.sbatch      (sbatch --wait ... waits for the last task)\n"
  "  bash job/merge.sh\n"
  "Only the iosim binary (--iosim PATH when it lives elsewhere there), the\n"
  "scenario's folder and the output folder need to be visible on the nodes.\n"
  "GNU parallel runs the same shards without a scheduler (-q keeps a value\n"
  "with blanks one argument through the shell parallel starts):\n"
  "  parallel -j 8 -q iosim sweep S.ini --vary 'sched deadline.fifo_batch=1,16' \\\n"
  "    --shard {}/8 -o parts ::: $(seq 8) && iosim sweep merge parts -o study";

void
cli_sweep_slurm_init (CliSweepSlurm *o)
{
  memset (o, 0, sizeof *o);
  o->throttle = -1;
  const GOptionEntry entries[] = {
    { "emit-slurm", 0, 0, G_OPTION_ARG_FILENAME, &o->emit_dir,
      "Run nothing; write a Slurm job array of the shards and its merge step to DIR", "DIR" },
    { "shards", 0, 0, G_OPTION_ARG_INT, &o->n_tasks,
      "With --emit-slurm: array tasks (shards), at most the points (default min(points, 100))", "N" },
    { "array", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &o->n_tasks, "Same as --shards", "N" },
    { "throttle", 0, 0, G_OPTION_ARG_INT, &o->throttle,
      "With --emit-slurm: at most K array tasks at once (--array=1-N%K)", "K" },
    { "partition", 0, 0, G_OPTION_ARG_STRING, &o->partition,
      "With --emit-slurm: sbatch --partition", "NAME" },
    { "account", 0, 0, G_OPTION_ARG_STRING, &o->account,
      "With --emit-slurm: sbatch --account", "NAME" },
    { "time", 0, 0, G_OPTION_ARG_STRING, &o->time_text,
      "With --emit-slurm: time limit of a task, in sbatch's forms (MINUTES, H:MM:SS, D-HH...); "
      "default from the probe", "TIME" },
    { "mem", 0, 0, G_OPTION_ARG_STRING, &o->mem_text,
      "With --emit-slurm: memory of a task, NUMBER[K|M|G|T]; default from the probe", "SIZE" },
    { "probe", 0, 0, G_OPTION_ARG_STRING, &o->probe,
      "With --emit-slurm: yes (default) runs one point here to size --time and --mem; "
      "no needs both given", "yes|no" },
    { "iosim", 0, 0, G_OPTION_ARG_FILENAME, &o->iosim_path,
      "With --emit-slurm: the iosim binary on the cluster (default: this one)", "PATH" },
    { NULL }
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (entries) == G_N_ELEMENTS (o->entries));
  memcpy (o->entries, entries, sizeof entries);
}

void
cli_sweep_slurm_clear (CliSweepSlurm *o)
{
  g_free (o->emit_dir);
  g_free (o->partition);
  g_free (o->account);
  g_free (o->time_text);
  g_free (o->mem_text);
  g_free (o->probe);
  g_free (o->iosim_path);
}

gboolean
cli_sweep_slurm_unused (const CliSweepSlurm *o)
{
  const char *given = o->n_tasks != 0 ? "--shards"
                      : o->throttle != -1 ? "--throttle"
                      : o->partition ? "--partition"
                      : o->account ? "--account"
                      : o->time_text ? "--time"
                      : o->mem_text ? "--mem"
                      : o->probe ? "--probe"
                      : o->iosim_path ? "--iosim" : NULL;
  if (given == NULL)
    return TRUE;
  fprintf (stderr, "iosim sweep: %s is an option of --emit-slurm, which was not given\n", given);
  return FALSE;
}

static int
fail (int status, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static int
fail (int status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  fprintf (stderr, "iosim sweep: %s\n", msg);
  return status;
}

/* Remove the probe's scratch folder and what the shard wrote there. */
static void
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

typedef struct {
  guint64 wall_ns;
  guint64 max_rss_bytes;
} Probe;

/* Run point 1 with one seed in a child iosim (shard 1 of n_points, -j 1)
 * and measure its wall time and, through RUSAGE_CHILDREN, the peak resident
 * set of that child alone: this process has waited for no other. */
static gboolean
run_probe (const Sweep *sw, const char *self_exe, Probe *probe, GError **error)
{
  g_autofree char *tmp = g_dir_make_tmp ("iosim-probe-XXXXXX", error);
  if (tmp == NULL)
    return FALSE;
  g_auto (GStrv) base = sweep_shard_argv (sw, self_exe, tmp, 1, sw->n_points);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  for (guint i = 0; base[i] != NULL; i++)
    {
      g_ptr_array_add (argv, base[i]);
      if (strcmp (base[i], "--seeds") == 0 && base[i + 1] != NULL)
        {
          g_ptr_array_add (argv, (gpointer) "1");
          i++;
        }
    }
  g_ptr_array_add (argv, (gpointer) "-j");
  g_ptr_array_add (argv, (gpointer) "1");
  g_ptr_array_add (argv, NULL);

  g_autofree char *child_err = NULL;
  int wait_status = 0;
  gint64 start_us = g_get_monotonic_time ();
  gboolean ok = g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                              NULL, NULL, NULL, &child_err, &wait_status, error);
  gint64 end_us = g_get_monotonic_time ();
  remove_tree (tmp);
  if (!ok)
    return FALSE;
  g_autoptr (GError) status_error = NULL;
  if (!g_spawn_check_wait_status (wait_status, &status_error))
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "the probe (point 1, one seed) "
                   "failed: %s\n%s", status_error->message, child_err ? child_err : "");
      return FALSE;
    }
  struct rusage ru;
  if (getrusage (RUSAGE_CHILDREN, &ru) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "getrusage: %s", g_strerror (saved));
      return FALSE;
    }
  probe->wall_ns = (guint64) (end_us - start_us) * 1000;
  probe->max_rss_bytes = (guint64) ru.ru_maxrss * 1024;   /* Linux: KiB */
  return TRUE;
}

/* "iosim-" and the scenario's name in the characters sbatch shows as is. */
static char *
job_name (const Sweep *sw)
{
  g_autofree char *name = g_strconcat ("iosim-", sw->scenario_name, NULL);
  for (char *c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && !strchr ("._-", *c))
      *c = '_';
  return g_steal_pointer (&name);
}

static gboolean
write_script (const char *path, const char *text, GError **error)
{
  if (!sim_output_write (path, text, -1, error))
    return FALSE;
  if (g_chmod (path, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: chmod: %s", path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
make_dir (const char *path, GError **error)
{
  if (g_mkdir_with_parents (path, 0755) == 0)
    return TRUE;
  int saved = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
               "%s: %s", path, g_strerror (saved));
  return FALSE;
}

int
cli_sweep_emit_slurm (const CliSweepSlurm *o, const Sweep *sw, const char *out_dir,
                      gboolean shard_given)
{
  g_autoptr (GError) error = NULL;

  if (shard_given)
    return fail (2, "--shard and --emit-slurm: the job array gives each task its shard");
  if (o->throttle == 0 || o->throttle < -1)
    return fail (2, "--throttle %d: at least 1 task at once", o->throttle);
  if (o->n_tasks < 0)
    return fail (2, "--shards %d: at least 1", o->n_tasks);
  /* A task with no point would only wait in the queue and start a process
   * that writes an empty shard; refused rather than submitted. */
  if ((guint) o->n_tasks > sw->n_points)
    return fail (2, "--shards %d: more array tasks than the %u points; at most %u",
                 o->n_tasks, sw->n_points, sw->n_points);
  guint n_tasks = o->n_tasks > 0 ? (guint) o->n_tasks : MIN (sw->n_points, DEFAULT_MAX_TASKS);
  gboolean probe = TRUE;
  if (o->probe != NULL && strcmp (o->probe, "no") == 0)
    probe = FALSE;
  else if (o->probe != NULL && strcmp (o->probe, "yes") != 0)
    return fail (2, "--probe '%s': yes or no", o->probe);
  if (!probe && (o->time_text == NULL || o->mem_text == NULL))
    return fail (2, "--probe=no needs both --time and --mem");

  guint64 time_s = 0, mem_mib = 0;
  if ((o->time_text && !sweep_slurm_parse_time (o->time_text, &time_s, &error))
      || (o->mem_text && !sweep_slurm_parse_mem (o->mem_text, &mem_mib, &error)))
    return fail (2, "%s", error->message);

  g_autofree char *self_exe = g_file_read_link ("/proc/self/exe", &error);
  if (self_exe == NULL)
    return fail (1, "%s", error->message);
  g_autofree char *iosim = g_canonicalize_filename (o->iosim_path ? o->iosim_path : self_exe, NULL);
  g_autofree char *emit_dir = g_canonicalize_filename (o->emit_dir, NULL);
  g_autofree char *log_dir = g_build_filename (emit_dir, "logs", NULL);
  g_autofree char *final_dir = g_canonicalize_filename (out_dir, NULL);
  g_autofree char *shards_dir = g_build_filename (final_dir, "shards", NULL);
  g_autofree char *scenario = g_canonicalize_filename (sw->scenario_path, NULL);
  g_autofree char *scenario_dir = g_path_get_dirname (scenario);

  guint runs_per_task = sweep_slurm_task_points (sw->n_points, n_tasks, 1) * sw->n_seeds;
  g_autoptr (GString) note = g_string_new (NULL);
  if (probe)
    {
      Probe p;
      if (!run_probe (sw, self_exe, &p, &error))
        return fail (1, "%s", error->message);
      guint64 est_time_s, est_mem_mib;
      sweep_slurm_estimate (p.wall_ns, p.max_rss_bytes, runs_per_task, &est_time_s, &est_mem_mib);
      g_autofree char *est_time = sweep_slurm_format_time (est_time_s);
      g_string_append_printf (note,
                              "Probe on this machine: point 1 of %u with one seed ran in %.3f s,\n"
                              "peak resident set %.1f MiB.  A task runs at most %u runs (points x seeds):\n"
                              "time %.3f s x %u x %d, at least %d s, whole minutes = %s%s\n"
                              "memory %.1f MiB x 1.5 + %d MiB, at least %d MiB = %" G_GUINT64_FORMAT "M%s\n",
                              sw->n_points, p.wall_ns / 1e9, p.max_rss_bytes / 1048576.0,
                              runs_per_task, p.wall_ns / 1e9, runs_per_task,
                              SWEEP_SLURM_TIME_FACTOR, SWEEP_SLURM_TIME_MIN_S, est_time,
                              o->time_text ? " (--time given instead)" : "",
                              p.max_rss_bytes / 1048576.0, SWEEP_SLURM_MEM_MARGIN_MIB,
                              SWEEP_SLURM_MEM_MIN_MIB, est_mem_mib,
                              o->mem_text ? " (--mem given instead)" : "");
      if (!o->time_text)
        time_s = est_time_s;
      if (!o->mem_text)
        mem_mib = est_mem_mib;
    }
  else
    g_string_append_printf (note, "No probe: --time %s --mem %s as given.\n",
                            o->time_text, o->mem_text);
  g_string_append (note, "More CPUs per task (sbatch --cpus-per-task=C) run C points at once:\n"
                         "time shrinks, memory grows.\n");

  g_auto (GStrv) task_argv = sweep_argv (sw, iosim, shards_dir, NULL);
  /* sweep_argv gives the scenario path as typed; a task starts in another
   * folder, so it gets the absolute one. */
  g_assert (g_strcmp0 (task_argv[2], sw->scenario_path) == 0);
  g_free (task_argv[2]);
  task_argv[2] = g_strdup (scenario);

  g_autofree char *name = job_name (sw);
  SweepSlurmJob job = {
    .job_name = name,
    .n_tasks = n_tasks,
    .throttle = o->throttle > 0 ? (guint) o->throttle : 0,
    .time_s = time_s,
    .mem_mib = mem_mib,
    .partition = o->partition,
    .account = o->account,
    .log_dir = log_dir,
    .note = note->str,
    .task_argv = (const char *const *) task_argv,
  };
  g_autofree char *script = sweep_slurm_script (&job, &error);
  if (script == NULL)
    return fail (2, "%s", error->message);
  g_autofree char *merge = sweep_slurm_merge_script (iosim, shards_dir, final_dir);

  g_autofree char *sbatch_path = g_build_filename (emit_dir, "sweep.sbatch", NULL);
  g_autofree char *merge_path = g_build_filename (emit_dir, "merge.sh", NULL);
  /* Slurm opens the --output files itself and does not create folders. */
  if (!make_dir (log_dir, &error) || !make_dir (shards_dir, &error)
      || !write_script (sbatch_path, script, &error) || !write_script (merge_path, merge, &error))
    return fail (1, "%s", error->message);

  const char *submit[] = { "sbatch", sbatch_path, NULL };
  const char *then[] = { "bash", merge_path, NULL };
  g_autofree char *submit_line = sweep_slurm_shell_join (submit);
  g_autofree char *then_line = sweep_slurm_shell_join (then);
  g_autofree char *time_text = sweep_slurm_format_time (time_s);
  printf ("%u points x %u seeds in %u array tasks", sw->n_points, sw->n_seeds, n_tasks);
  if (job.throttle > 0)
    printf (", at most %u at once", job.throttle);
  printf (", each --time=%s --mem=%" G_GUINT64_FORMAT "M\n%s", time_text, mem_mib, note->str);
  printf ("Wrote %s and %s.\nSubmit: %s\nAfter the last task (or submit with sbatch --wait): %s\n"
          "  (it merges %s into %s)\n",
          sbatch_path, merge_path, submit_line, then_line, shards_dir, final_dir);
  fprintf (stderr, "iosim sweep: note: the compute nodes must see %s, %s and %s at these paths; "
           "paths inside the scenario are taken from its folder %s\n",
           iosim, scenario, final_dir, scenario_dir);
  return 0;
}
