/* scenario-fio.h — fio job files read as scenario processes.
 *
 * Follows fio 3.33's job file format and option semantics (HOWTO.rst
 * "Job file format", "Job file parameters"; parse.c for size and time
 * suffixes): an INI-like file of [global] and job sections, full-line ';'
 * and '#' comments, key=value options and bare flags.  Sizes take fio's
 * suffixes with kb_base = 1024 by default (k = 1024, KiB = 1000, the other
 * way round with kb_base=1000); times take us, ms, s, m (minutes), h, d.
 *
 * Each job becomes one [process NAME] group (numjobs = N: NAME.0 ...
 * NAME.N-1, one per clone, as fio's files are named) in the keys of
 * models/scenario.c, on one [device]: it stands for the job's filename
 * (shared by its clones; size defaults to the whole device), and a job
 * without filename= gets a file of its own per clone, as fio lays them
 * out, placed one after another on the device (size= needed).
 * An option iosim cannot model is refused with the reason; an unknown
 * option is refused; options that do not change the I/O (reporting, logs)
 * are accepted.  Errors name the file, the line and the option.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The device every job's filename stands for. */
typedef struct {
  const char *device;          /* its [device NAME] */
  guint64     capacity_bytes;  /* fio's default size: the whole device */
  /* If not NULL, filled as jobs are added: job name -> GPtrArray of its
   * process names in clone order (one, the job's own, without numjobs),
   * for --set 'process JOB.KEY=VALUE' to reach every clone. */
  GHashTable *jobs;
} ScenarioFioTarget;

/* Read the job file @path and add its jobs to @kf as [process NAME]
 * groups.  A job whose process group already exists is an error. */
gboolean scenario_fio_add_jobs      (GKeyFile                *kf,
                                     const char              *path,
                                     const ScenarioFioTarget *target,
                                     GError                 **error);
/* The same from @text; @name stands for the file in errors. */
gboolean scenario_fio_add_jobs_data (GKeyFile                *kf,
                                     const char              *text,
                                     const char              *name,
                                     const ScenarioFioTarget *target,
                                     GError                 **error);

/* For --help: the fio options read, those accepted without effect on the
 * simulated I/O, and those refused with their reasons.  Caller frees. */
char    *scenario_fio_help          (void);

G_END_DECLS
