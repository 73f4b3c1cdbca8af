/* replay-validate.c — stages 1 to 3 of `iosim validate` (replay-validate.h):
 * measure under each kernel scheduler, fit the first one's capture,
 * simulate the fit under each scheduler; then stage 4
 * (replay-validate-compare.c).  Only calls into the stages' libraries:
 * replay-setup.h with its journal for the scheduler, replay-capture.h for
 * captures, replay.h for trace replays, models/fit/fit.h and
 * models/scenario.h.
 *
 * Restore: each scheduler's setting is applied by its own ReplaySetup,
 * journaled before the write (so `iosim restore` or the next run undoes a
 * SIGKILL) and guarded at exit(); it is restored after that scheduler's
 * runs on every path, including the stop flag (SIGINT/SIGTERM in the
 * CLI), before the next scheduler is set. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "models/fit/fit.h"
#include "models/scenario.h"
#include "replay/replay.h"
#include "replay/replay-capture.h"
#include "replay/replay-setup.h"
#include "replay/replay-validate.h"
#include "traces/trace-results.h"

/* blk-mq schedulers of Linux 5.0 and later (block/elevator.c registers
 * mq-deadline, bfq and kyber; "none" is no elevator).  The simulator has a
 * model of each under the same name (models/sched/sched-mq-deadline.c,
 * sched-bfq.c, sched-kyber.c, sched-none.c). */
static const char *const blk_mq_scheds[] = { "mq-deadline", "bfq", "kyber", "none" };

G_DEFINE_QUARK (replay-validate-error-quark, replay_validate_error)

const char *
replay_validate_sim_sched (const char *kernel_name)
{
  for (guint i = 0; kernel_name && i < G_N_ELEMENTS (blk_mq_scheds); i++)
    if (strcmp (kernel_name, blk_mq_scheds[i]) == 0)
      return blk_mq_scheds[i];
  return NULL;
}

static gboolean
check_scheds (const char *const *scheds, GError **error)
{
  if (scheds == NULL || scheds[0] == NULL)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "--sched: name at least one scheduler (the first is trained)");
      return FALSE;
    }
  for (guint i = 0; scheds[i] != NULL; i++)
    {
      if (replay_validate_sim_sched (scheds[i]) == NULL)
        {
          g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                       "--sched: '%s' is not a blk-mq scheduler (mq-deadline, bfq, kyber, none)",
                       scheds[i]);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (strcmp (scheds[i], scheds[j]) == 0)
          {
            g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                         "--sched: '%s' is listed twice", scheds[i]);
            return FALSE;
          }
    }
  return TRUE;
}

gboolean
replay_validate_check (const ReplayValidateOptions *opts, GError **error)
{
  if (opts->target == NULL)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "need --target /dev/X");
      return FALSE;
    }
  if (!check_scheds (opts->scheds, error))
    return FALSE;
  if (opts->repeat < 1 || opts->repeat > REPLAY_VALIDATE_MAX_REPEAT)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "--repeat takes a count from 1 to %d", REPLAY_VALIDATE_MAX_REPEAT);
      return FALSE;
    }
  if ((opts->trace_path == NULL) == (opts->argv == NULL || opts->argv[0] == NULL))
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "give either one TRACE or -- COMMAND [ARGS...]");
      return FALSE;
    }
  if (opts->trace_path != NULL && !g_file_test (opts->trace_path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "%s: no such trace file", opts->trace_path);
      return FALSE;
    }
  if (opts->work_dir == NULL || !g_file_test (opts->work_dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS,
                   "work directory %s: not a directory",
                   opts->work_dir ? opts->work_dir : "(none)");
      return FALSE;
    }
  return replay_validate_nfs_check (opts, error);
}

/* ---- The state of one validation ---------------------------------------- */

typedef struct {
  const ReplayValidateOptions *opts;
  ReplayTarget target;
  guint        n_scheds;
  guint        step, n_steps;
  gint64       start_us;
  guint        measured_done, simulated_done;   /* runs so far, and their wall time */
  gint64       measure_us, simulate_us;
  GPtrArray   *captures;      /* char *, [s * repeat + r] */
  GPtrArray   *measured;      /* char *, raw measured results, same order */
  GPtrArray   *predicted;     /* char *, raw simulated results, same order */
  GPtrArray   *nfs_runs;      /* ValidateNfsRun *, same order; NULL unless an NFS capture */
  char        *scenario_path;
  char        *sim_device;
} Validate;

static void
validate_clear (Validate *v)
{
  replay_target_clear (&v->target);
  g_clear_pointer (&v->captures, g_ptr_array_unref);
  g_clear_pointer (&v->measured, g_ptr_array_unref);
  g_clear_pointer (&v->predicted, g_ptr_array_unref);
  g_clear_pointer (&v->nfs_runs, g_ptr_array_unref);
  g_free (v->scenario_path);
  g_free (v->sim_device);
}

static char *
work_file (const Validate *v, const char *prefix, const char *sched, char kind, guint r,
           const char *ext)
{
  g_autofree char *base = g_strdup_printf ("%s-%s-%c%u.%s", prefix, sched, kind, r + 1, ext);

  return g_build_filename (v->opts->work_dir, base, NULL);
}

/* What is left, from the mean wall time of the runs of each kind done so
 * far (measured runs outlast simulated ones by far); a kind not started
 * yet counts as nothing, and before the first measured run nothing is
 * known (-1). */
static gint64
eta_ns (const Validate *v)
{
  guint total = v->n_scheds * v->opts->repeat;
  double eta_us;

  if (v->measured_done == 0)
    return -1;
  eta_us = (double) v->measure_us / v->measured_done * (total - v->measured_done);
  if (v->simulated_done > 0)
    eta_us += (double) v->simulate_us / v->simulated_done * (total - v->simulated_done);
  return (gint64) (eta_us * 1000);
}

static void
progress (Validate *v, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
progress (Validate *v, const char *format, ...)
{
  g_autofree char *label = NULL;
  va_list args;

  if (v->opts->progress == NULL)
    return;
  va_start (args, format);
  label = g_strdup_vprintf (format, args);
  va_end (args);
  v->opts->progress (v->step, v->n_steps, label, (g_get_monotonic_time () - v->start_us) * 1000,
                     eta_ns (v), v->opts->progress_data);
}

static gboolean
stopped (const Validate *v, GError **error)
{
  if (v->opts->stop == NULL || !*v->opts->stop)
    return FALSE;
  g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_INTERRUPTED,
               "interrupted; the target's scheduler is restored");
  return TRUE;
}

/* ---- Stage 1: measure ---------------------------------------------------- */

/* What a run killed earlier left on the target is put back first, then
 * this scheduler's journal (as `iosim replay` does, cmd-replay-setup.c). */
static gboolean
journal_setup (Validate *v, ReplaySetup *setup, GError **error)
{
  const char *dir = v->opts->journal_dir ? v->opts->journal_dir : replay_journal_default_dir ();
  g_autofree char *devno = replay_setup_disk_devno (&v->target, error);
  g_autofree char *scope = NULL, *device = NULL, *hint = NULL;
  const char *scopes[2] = { NULL, NULL }, *devices[2] = { NULL, NULL };
  ReplayJournal *journal;

  if (devno == NULL)
    return FALSE;
  scopes[0] = scope = g_strdup_printf ("dev:%s", devno);
  devices[0] = device = g_strdup_printf ("%s %s", devno, v->target.path);
  if (!replay_journal_recover (dir, scopes, NULL, "iosim validate", v->opts->log, error))
    return FALSE;
  journal = replay_journal_create (dir, "replay", scopes, devices, error);
  if (journal == NULL)
    return FALSE;
  hint = replay_journal_restore_hint (journal);
  if (v->opts->log)
    {
      fprintf (v->opts->log, "iosim validate: journal %s; if killed, run: %s\n",
               replay_journal_file (journal), hint);
      fflush (v->opts->log);
    }
  replay_setup_set_journal (setup, journal);
  return TRUE;
}

static gboolean
command_failed (int status, const char *capture, GError **error)
{
  if (status != -1 && WIFEXITED (status) && WEXITSTATUS (status) != 0)
    g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN,
                 "the command exited with status %d (its capture: %s)", WEXITSTATUS (status),
                 capture);
  else if (status != -1 && WIFSIGNALED (status))
    g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN,
                 "the command was killed by signal %d (its capture: %s)", WTERMSIG (status),
                 capture);
  else
    return FALSE;
  return TRUE;
}

static gboolean
capture_command (Validate *v, const char *capture, const char *wbt, GError **error)
{
  ReplayCaptureOptions co = { 0 };
  ReplayCaptureStats stats;

  co.device = v->target.path;
  co.argv = v->opts->argv;
  co.output_path = capture;
  co.wbt_output_path = wbt;
  co.stop = v->opts->stop;
  co.journal_dir = v->opts->journal_dir;
  co.log = v->opts->log;
  if (!replay_capture_run (&co, &stats, error))
    return FALSE;
  if (stats.stopped)
    return !stopped (v, error);
  return !command_failed (stats.command_status, capture, error);
}

typedef struct {
  const Validate      *v;
  const char          *capture;
  const char          *wbt;
  ReplayCaptureThread *thread;
} ReplayCapture;

/* The replay's target is open: record it until the replay ends. */
static gboolean
start_replay_capture (const GArray *targets, gpointer data, GError **error)
{
  ReplayCapture *rc = data;
  ReplayCaptureOptions co = { 0 };

  co.device = rc->v->target.path;
  co.output_path = rc->capture;
  co.wbt_output_path = rc->wbt;
  co.journal_dir = rc->v->opts->journal_dir;
  co.log = rc->v->opts->log;
  rc->thread = replay_capture_start (&co, error);
  return rc->thread != NULL;
}

static gboolean
capture_replay (Validate *v, const char *capture, const char *wbt, GError **error)
{
  ReplayOptions ro;
  ReplayCapture rc = { v, capture, wbt, NULL };
  g_autoptr (ReplayResult) result = NULL;
  ReplayCaptureStats stats;
  GError *local = NULL;

  replay_options_init (&ro);
  ro.target = v->target.path;
  ro.allow_write = v->opts->allow_write;
  ro.stop = v->opts->stop;
  ro.prepared = start_replay_capture;
  ro.prepared_data = &rc;
  result = replay_run (v->opts->trace_path, &ro, &local);
  /* The capture stops on every path once it started; the replay's own
   * error, if any, is the one to report. */
  if (rc.thread != NULL)
    {
      GError *capture_error = NULL;

      if (!replay_capture_finish (rc.thread, &stats, &capture_error))
        {
          if (local == NULL)
            g_propagate_prefixed_error (&local, capture_error, "capture of the replay: ");
          else
            g_error_free (capture_error);
        }
    }
  if (local != NULL || result == NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (result->interrupted)
    return !stopped (v, error);
  if (result->errors > 0)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN,
                   "%" G_GUINT64_FORMAT " I/Os of the replay failed", result->errors);
      return FALSE;
    }
  return TRUE;
}

/* An NFS capture, replayed server-side; its own results files are kept
 * beside the block capture. */
static gboolean
capture_nfs (Validate *v, const char *sched, guint r, const char *capture, GError **error)
{
  ValidateNfsRun *run = g_new0 (ValidateNfsRun, 1);

  run->sched = g_strdup (sched);
  run->run = r + 1;
  run->json_path = work_file (v, "nfs-replay", sched, 'r', r, "json");
  run->csv_path = work_file (v, "nfs-replay", sched, 'r', r, "csv");
  g_ptr_array_add (v->nfs_runs, run);
  return replay_validate_nfs_measure (v->opts, capture, run, error);
}

static gboolean
measure_repeats (Validate *v, const char *sched, GError **error)
{
  for (guint r = 0; r < v->opts->repeat; r++)
    {
      char *capture = work_file (v, "capture", sched, 'r', r, "txt");
      g_autofree char *wbt = work_file (v, "wbt-kernel", sched, 'r', r, "txt");
      gint64 t0_us;

      g_ptr_array_add (v->captures, capture);
      progress (v, "measure %s %u/%u", sched, r + 1, v->opts->repeat);
      if (stopped (v, error))
        return FALSE;
      t0_us = g_get_monotonic_time ();
      if (!(v->opts->argv         ? capture_command (v, capture, wbt, error)
            : v->opts->target_dir ? capture_nfs (v, sched, r, capture, error)
                                  : capture_replay (v, capture, wbt, error)))
        {
          g_prefix_error (error, "under %s, run %u: ", sched, r + 1);
          return FALSE;
        }
      v->measure_us += g_get_monotonic_time () - t0_us;
      v->measured_done++;
      v->step++;
    }
  return TRUE;
}

/* Set @sched, run the repeats, restore whatever happened. */
static gboolean
measure_sched (Validate *v, const char *sched, GError **error)
{
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  ReplaySetupSpec spec = { .scheduler = sched };
  GError *local = NULL;
  gboolean ok;

  replay_setup_guard (setup);
  ok = journal_setup (v, setup, &local)
       && replay_setup_apply (setup, &spec, &v->target, v->opts->log, &local)
       && measure_repeats (v, sched, &local);
  if (!replay_setup_restore (setup, v->opts->log, ok ? &local : NULL))
    ok = FALSE;
  if (!ok)
    g_propagate_error (error, local);
  return ok;
}

/* ---- Stage 2: fit -------------------------------------------------------- */

/* Each capture's I/Os as measured results; the first one's fit becomes
 * the scenario. */
static gboolean
fit_captures (Validate *v, GError **error)
{
  FitHost host;

  /* The workload ran on this machine: its memory and dirty limits are the
   * host the fitted buffered writers' page cache needs. */
  if (!replay_validate_read_host (v->opts->proc_dir, &host, error))
    return FALSE;
  for (guint i = 0; i < v->captures->len; i++)
    {
      const char *capture = g_ptr_array_index (v->captures, i);
      const char *sched = v->opts->scheds[i / v->opts->repeat];
      FitOptions fo = { .sched = sched, .model = v->opts->model, .host = host };
      g_autoptr (FitResult) fit = NULL;
      g_autofree char *base = g_path_get_basename (capture);
      char *measured = work_file (v, "measured-raw", sched, 'r', i % v->opts->repeat, "csv");

      g_ptr_array_add (v->measured, measured);
      progress (v, "fit %s", base);
      fit = fit_trace (capture, &fo, error);
      if (fit == NULL || !fit_write_measured_results (fit, measured, error))
        {
          /* No I/O on the target is the usual cause: say which run. */
          g_prefix_error (error, "under %s, run %u (did it do I/O on %s?): ", sched,
                          i % v->opts->repeat + 1, v->target.path);
          return FALSE;
        }
      if (i == 0)
        {
          v->scenario_path = g_build_filename (v->opts->work_dir, "fitted.ini", NULL);
          v->sim_device = g_strdup (fit->device_name);
          if (!(v->opts->target_dir
                  ? replay_validate_nfs_write_scenario (v->opts, fit, v->scenario_path, error)
                  : fit_write_scenario (fit, v->scenario_path, error)))
            return FALSE;
        }
    }
  v->step++;
  return TRUE;
}

/* ---- Stage 3: simulate --------------------------------------------------- */

/* @path opened for writing, or NULL with @error naming it. */
static FILE *
open_work_output (const char *path, GError **error)
{
  FILE *f = fopen (path, "w");

  if (f == NULL)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", path,
                   g_strerror (saved));
    }
  return f;
}

/* Close @f; a write error on it replaces what *@error held (a run's error
 * means little when its outputs are lost). */
static gboolean
close_work_output (FILE *f, const char *path, GError **error)
{
  gboolean failed = ferror (f) != 0;

  if (fclose (f) == 0 && !failed)
    return TRUE;
  if (error != NULL)
    {
      g_clear_error (error);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", path);
    }
  return FALSE;
}

static gboolean
simulate_one (Validate *v, const char *sched, guint r, GError **error)
{
  g_autofree char *set = g_strdup_printf ("device %s.sched=%s", v->sim_device,
                                          replay_validate_sim_sched (sched));
  const char *sets[] = { set, NULL };
  g_autoptr (Scenario) scenario = scenario_load_file (v->scenario_path, sets, error);
  char *path = work_file (v, "predicted-raw", sched, 's', r, "csv");
  g_autofree char *trace = work_file (v, "simtrace", sched, 's', r, "blk");
  g_autofree char *wbt = work_file (v, "wbt-sim", sched, 's', r, "txt");
  ScenarioOutputs outputs = { 0 };
  g_autoptr (SimRunResult) result = NULL;
  gboolean trace_ok, wbt_ok;

  g_ptr_array_add (v->predicted, path);
  if (scenario == NULL)
    return FALSE;
  /* Seeds 1..N: the same under every scheduler. */
  scenario_set_seed (scenario, r + 1);
  /* The block trace, not the per-I/O log: a buffered writer's I/Os in the
   * log are its write() calls, while the captures' are bios. */
  if ((outputs.trace_out = open_work_output (trace, error)) == NULL)
    return FALSE;
  if ((outputs.wbt_log = open_work_output (wbt, error)) == NULL)
    {
      fclose (outputs.trace_out);
      return FALSE;
    }
  result = scenario_run (scenario, 0, &outputs, error);
  trace_ok = close_work_output (outputs.trace_out, trace, error);
  wbt_ok = close_work_output (outputs.wbt_log, wbt, trace_ok ? error : NULL);
  if (!trace_ok || !wbt_ok)
    return FALSE;
  return result != NULL && replay_validate_sim_trace_results (trace, path, error);
}

static gboolean
simulate (Validate *v, GError **error)
{
  for (guint s = 0; s < v->n_scheds; s++)
    for (guint r = 0; r < v->opts->repeat; r++)
      {
        const char *sched = v->opts->scheds[s];
        gint64 t0_us;

        progress (v, "simulate %s seed %u", sched, r + 1);
        if (stopped (v, error))
          return FALSE;
        t0_us = g_get_monotonic_time ();
        if (!simulate_one (v, sched, r, error))
          {
            g_prefix_error (error, "simulating %s under %s: ", v->scenario_path, sched);
            return FALSE;
          }
        v->simulate_us += g_get_monotonic_time () - t0_us;
        v->simulated_done++;
        v->step++;
      }
  return TRUE;
}

/* ---- blk-wbt, kernel against simulation ---------------------------------- */

static void
validate_wbt_free (ValidateWbt *w)
{
  g_free (w->sched);
  g_free (w->kernel_path);
  g_free (w->sim_path);
  g_free (w);
}

/* Each scheduler's first measured run against seed 1, where the kernel
 * recorded wbt windows for it (a kernel without the events writes no
 * file; wbt off, as under bfq, records none). */
static gboolean
compare_wbt (Validate *v, ReplayValidateReport *report, GError **error)
{
  report->wbt = g_ptr_array_new_with_free_func ((GDestroyNotify) validate_wbt_free);
  for (guint s = 0; s < v->n_scheds; s++)
    {
      const char *sched = v->opts->scheds[s];
      g_autofree char *kernel_path = work_file (v, "wbt-kernel", sched, 'r', 0, "txt");
      g_autofree char *sim_path = work_file (v, "wbt-sim", sched, 's', 0, "txt");
      g_autoptr (GArray) kernel = NULL, sim = NULL;
      ValidateWbt *w;

      if (!g_file_test (kernel_path, G_FILE_TEST_EXISTS))
        continue;
      if ((kernel = replay_wbt_events_load (kernel_path, error)) == NULL
          || (sim = replay_wbt_events_load (sim_path, error)) == NULL)
        return FALSE;
      if (kernel->len == 0 && sim->len == 0)
        continue;
      w = g_new0 (ValidateWbt, 1);
      w->sched = g_strdup (sched);
      w->kernel_path = g_steal_pointer (&kernel_path);
      w->sim_path = g_steal_pointer (&sim_path);
      replay_wbt_summarize (kernel, &w->kernel);
      replay_wbt_summarize (sim, &w->sim);
      w->first_difference = replay_wbt_first_difference (kernel, sim);
      g_ptr_array_add (report->wbt, w);
    }
  return TRUE;
}

/* ---- All of it ----------------------------------------------------------- */

static ReplayValidateReport *
compare (Validate *v, GError **error)
{
  ReplayValidateReport *report;

  progress (v, "compare");
  report = replay_validate_compare_files (v->opts->scheds, v->opts->repeat,
                                          (const char *const *) v->measured->pdata,
                                          (const char *const *) v->predicted->pdata,
                                          v->opts->work_dir, error);
  if (report == NULL)
    return NULL;
  v->step++;
  progress (v, "done");
  report->target = g_strdup (v->opts->target);
  report->trace_path = g_strdup (v->opts->trace_path);
  report->argv = v->opts->argv ? g_strdupv (v->opts->argv) : NULL;
  report->scenario_path = g_strdup (v->scenario_path);
  report->sim_device = g_strdup (v->sim_device);
  if (v->opts->target_dir)
    replay_validate_nfs_report_take (report, v->opts, g_steal_pointer (&v->nfs_runs));
  if (!compare_wbt (v, report, error))
    {
      replay_validate_report_free (report);
      return NULL;
    }
  return report;
}

ReplayValidateReport *
replay_validate_run (const ReplayValidateOptions *opts, GError **error)
{
  Validate v = { .opts = opts };
  ReplayValidateReport *report = NULL;

  if (!replay_validate_check (opts, error) || !replay_target_probe (opts->target, &v.target, error))
    return NULL;
  v.n_scheds = g_strv_length ((char **) opts->scheds);
  /* Measured runs, the fits, simulated runs, the comparison. */
  v.n_steps = 2 * v.n_scheds * opts->repeat + 2;
  v.start_us = g_get_monotonic_time ();
  v.captures = g_ptr_array_new_with_free_func (g_free);
  v.measured = g_ptr_array_new_with_free_func (g_free);
  v.predicted = g_ptr_array_new_with_free_func (g_free);
  if (opts->target_dir)
    v.nfs_runs = g_ptr_array_new_with_free_func ((GDestroyNotify) replay_validate_nfs_run_free);
  for (guint s = 0; s < v.n_scheds; s++)
    if (!measure_sched (&v, opts->scheds[s], error))
      goto out;
  if (stopped (&v, error) || !fit_captures (&v, error) || !simulate (&v, error))
    goto out;
  report = compare (&v, error);
out:
  validate_clear (&v);
  return report;
}
