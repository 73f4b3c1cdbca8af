/* scenario.h — scenario files (GKeyFile .ini) turned into simulated runs.
 *
 * Groups: [sim] (duration, seed, hz), [device NAME] (model or kind with
 * device parameters, sched = one or several elevators, nr_requests, devno),
 * [sched NAME] (tunables of one elevator), [process NAME] (a generator or a
 * trace-driven stream).  A device listing several elevators gives one run
 * per elevator (per combination when several devices list several); the
 * runs share everything else, seed included.  See README "Scenarios".
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "sim/sim-report.h"

G_BEGIN_DECLS

#define SCENARIO_ERROR (scenario_error_quark ())
GQuark scenario_error_quark (void);

typedef enum {
  SCENARIO_ERROR_FAILED,
  SCENARIO_ERROR_INVALID,     /* message names group and key */
} ScenarioError;

typedef struct _Scenario Scenario;

/* @sets: NULL-terminated "group.key=value" overrides (may be NULL).
 * Relative paths inside the file are taken from the file's folder;
 * device model files are searched there, in $IOSIM_MODELS_DIR/devices, the
 * source tree's models/devices and the installed models/devices. */
Scenario   *scenario_load_file  (const char         *path,
                                 const char *const  *sets,
                                 GError            **error);
Scenario   *scenario_load_data  (const char         *text,
                                 const char         *name,
                                 const char         *base_dir,
                                 const char *const  *sets,
                                 GError            **error);
/* A fio job file (models/scenario-fio.h) on one device of model @model
 * (a name of models/devices, or a path): [device MODEL] with one process
 * per job and clone; the scenario is named after the file. */
Scenario   *scenario_load_fio   (const char         *path,
                                 const char         *model,
                                 const char *const  *sets,
                                 GError            **error);
void        scenario_free       (Scenario *s);

const char *scenario_name       (const Scenario *s);
guint64     scenario_seed       (const Scenario *s);
void        scenario_set_seed   (Scenario *s, guint64 seed);
guint       scenario_n_runs     (const Scenario *s);
const char *scenario_run_label  (const Scenario *s, guint run);

typedef struct {
  FILE *io_log;       /* per-I/O results CSV (traces/trace-results.h), or NULL */
  FILE *trace_out;    /* blkparse-format text of the simulated events, or NULL */
  FILE *sched_log;    /* --trace-sched: "<time_ns> <device> <sched> <decision>" lines */
  FILE *wbt_log;      /* blk-wbt's lines of sched_log alone (also without sched_log) */
  FILE *timeseries;   /* per-interval rows (sim/sim-timeseries.h), or NULL */
  GPtrArray *series;  /* if not NULL: each process's MB/s over time (SimSeries) */
  GPtrArray *writeback_series;  /* if not NULL: per device dirty, writeback and
                                 * threshold MiB over time (SimSeries) */
  FILE *vmstat;       /* with [host] cpus: per-interval vmstat rows as CSV
                       * (models/host/host.h), or NULL */
  gboolean vmstat_text;  /* keep vmstat's table in each run's result */
  SimTime sample_ns;  /* interval of all of these; 0 = 1 s */
  /* If set, called every second or so of wall time with the simulated
   * time reached (for a progress line on a terminal); adds no events. */
  void (*progress) (gpointer data, guint run, SimTime now_ns, SimTime end_ns);
  gpointer progress_data;
} ScenarioOutputs;

SimRunResult *scenario_run      (Scenario              *s,
                                 guint                  run,
                                 const ScenarioOutputs *outputs,
                                 GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Scenario, scenario_free)

G_END_DECLS
