/* replay-setup.h — tuning a replay target before the replay, and putting
 * every setting back afterwards.
 *
 * What can be set: the elevator (queue/scheduler), its tunables
 * (queue/iosched/KEY), other queue attributes (read_ahead_kb, nr_requests,
 * rotational, ...) and blkio throttling of the device (cgroup v1
 * blkio.throttle.{read,write}_bps_device on the root blkio cgroup, or
 * cgroup v2 io.max of the cgroup iosim runs in when it has one).
 *
 * Every old value is read, written to the journal (replay-journal.h) and
 * logged as a shell command that restores it ("echo OLD > PATH") before
 * the new value is written, so that a run killed with SIGKILL (which no
 * handler sees) is undone by the next run or `iosim restore`.  Every new
 * value is read back: one the kernel did not take is an error, one it
 * adjusted (read_ahead_kb to whole pages, ...) a warning, and each is
 * kept for the JSON report.  replay_setup_restore() writes the old values back, in the
 * order they were recorded: the scheduler first (switching elevators
 * resets nr_requests and drops the old elevator's tunables, so those are
 * recorded too and written after it), then tunables, queue attributes and
 * throttle rules.  It is idempotent; replay_setup_guard() also registers
 * the setup with an atexit() handler that restores whatever is still
 * pending when the process exits through exit() or main's return.  A
 * signal handler must not restore (not async-signal-safe): it raises the
 * stop flag and the main flow restores.
 */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "replay/replay-safety.h"
#include "replay/replay-journal.h"

G_BEGIN_DECLS

typedef struct {
  const char        *scheduler;           /* NULL: leave the elevator */
  const char *const *sched_set;           /* NULL-terminated "key=value", queue/iosched/ */
  const char *const *queue_set;           /* NULL-terminated "key=value", queue/ */
  guint64            throttle_read_bps;   /* 0: no read limit */
  guint64            throttle_write_bps;  /* 0: no write limit */
  const char        *cgroup_root;         /* NULL: /sys/fs/cgroup */
} ReplaySetupSpec;

typedef struct _ReplaySetup ReplaySetup;

/* TRUE when @spec changes nothing. */
gboolean     replay_setup_spec_empty (const ReplaySetupSpec *spec);
/* Syntax of the key=value lists and tunable names (no device needed). */
gboolean     replay_setup_spec_check (const ReplaySetupSpec *spec,
                                      GError               **error);

ReplaySetup *replay_setup_new      (void);
/* Record, log to @log (may be NULL) and change each setting of @spec on
 * @target.  On failure the settings already changed stay recorded: call
 * replay_setup_restore() (every exit path does). */
gboolean     replay_setup_apply    (ReplaySetup           *setup,
                                    const ReplaySetupSpec *spec,
                                    const ReplayTarget    *target,
                                    FILE                  *log,
                                    GError               **error);
/* Write every recorded old value back that differs now; keeps going after
 * a failure and reports the first one.  Nothing pending afterwards. */
gboolean     replay_setup_restore  (ReplaySetup *setup,
                                    FILE        *log,
                                    GError     **error);
/* Number of recorded settings not restored yet. */
guint        replay_setup_pending  (const ReplaySetup *setup);
/* Restore @setup at process exit if still pending (atexit); @setup must
 * stay alive until then or be passed to replay_setup_unguard() first. */
void         replay_setup_guard    (ReplaySetup *setup);
void         replay_setup_unguard  (ReplaySetup *setup);
/* What replay_setup_apply() would do (--dry-run): touches nothing. */
void         replay_setup_describe (const ReplaySetupSpec *spec,
                                    const ReplayTarget    *target,
                                    FILE                  *out);
void         replay_setup_free     (ReplaySetup *setup);

/* From now on every change is first written to @journal (taken); a clean
 * restore removes the journal file.  Without one nothing is journaled. */
void         replay_setup_set_journal  (ReplaySetup *setup, ReplayJournal *journal);
/* The journal file, or NULL. */
const char  *replay_setup_journal_file (const ReplaySetup *setup);
/* Put back the originals of a loaded journal whose owner is gone (files
 * gone since are skipped and said); with @dry_run say on @log what would
 * be written.  On success (not dry) the journal file is removed. */
gboolean     replay_setup_restore_journal (ReplayJournal *journal,
                                           gboolean       dry_run,
                                           FILE          *log,
                                           GError       **error);
/* "MAJ:MIN" of @target's whole disk (a partition's queue is its disk's). */
char        *replay_setup_disk_devno  (const ReplayTarget *target, GError **error);
/* Add "target_settings": [{path, requested, in_force, adjusted}] (every
 * setting written, as read back) to the JSON object in @json_path. */
gboolean     replay_setup_amend_json  (const ReplaySetup *setup,
                                       const char        *json_path,
                                       GError           **error);

/* Where --isolate looks; NULL fields (or a NULL struct) are the real
 * system's paths. */
typedef struct {
  const char *cpu_online;      /* /sys/devices/system/cpu/online */
  const char *workqueue_mask;  /* /sys/devices/virtual/workqueue/cpumask */
  const char *irq_dir;         /* /proc/irq */
  const char *cgroup_root;     /* /sys/fs/cgroup */
} ReplayIsolatePaths;

/* --isolate (replay-isolate.c): keep other work off @cpus (int CPU
 * numbers, the replay's --cpus) until restore: the root cpuset's
 * processes into a shield cpuset of the other online CPUs, unbound
 * workqueues and every movable IRQ there too.  Each change is recorded
 * (and logged) in @setup first.  Fails when @cpus leaves no CPU, names
 * one that is offline, or there is no cpuset cgroup. */
gboolean     replay_setup_isolate  (ReplaySetup              *setup,
                                    const GArray             *cpus,
                                    const ReplayIsolatePaths *paths,
                                    FILE                     *log,
                                    GError                  **error);
/* What replay_setup_isolate() would do (--dry-run). */
void         replay_setup_describe_isolate (const GArray             *cpus,
                                            const ReplayIsolatePaths *paths,
                                            FILE                     *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplaySetup, replay_setup_free)

G_END_DECLS
