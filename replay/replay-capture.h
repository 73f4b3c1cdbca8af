/* replay-capture.h — recording a device's block events through tracefs.
 *
 * The ftrace "blk" tracer (kernel/trace/blktrace.c) routes blktrace events
 * of every device whose /sys/block/DISK/trace/enable is 1 into the ftrace
 * ring buffer; trace_pipe streams them as text (reference/trace-formats.md
 * §1.7).  Capture saves every setting it changes, switches trace_clock to
 * "mono" so the times are CLOCK_MONOTONIC like the replayer's, and
 * restores every setting afterwards — on success, on error, and when the
 * caller's stop flag is raised (Ctrl-C).  Before changing anything it
 * restores what a capture killed earlier left behind (its journal,
 * replay-journal.h, scope "tracefs": tracefs is global) and journals the
 * saved values, so that a capture killed with SIGKILL is undone by the
 * next capture or `iosim restore`.  Every value written is read back.
 *
 * Output: "# tracer: blk", one "# iosim-capture key=value ..." line
 * describing the device, then trace_pipe's lines verbatim.
 */
#pragma once

#include <glib.h>
#include <signal.h>
#include <stdio.h>

#include "replay/replay-journal.h"

G_BEGIN_DECLS

typedef struct {
  const char *device;                /* /dev/X; a partition traces its disk */
  gint64      duration_ns;           /* > 0: record this long ... */
  char      **argv;                  /* ... else run this command, stop when it exits */
  const char *output_path;
  guint       buffer_size_kb;        /* per-CPU ring buffer; 0 = 16384 */
  const char *tracefs_dir;           /* NULL: /sys/kernel/tracing, then debugfs, mounting if needed */
  volatile sig_atomic_t *stop;       /* may be NULL; nonzero = stop now, restore, return */
  gboolean    until_stopped;         /* no period, no command: record until *stop rises */
  const char *const *more_devices;   /* NULL-terminated further devices traced too (may be NULL) */
  volatile gint *recording;          /* may be NULL; set to 1 once events are recorded */
  const char *journal_dir;           /* NULL: replay_journal_default_dir () */
  FILE       *log;                   /* recovery, journal and read-back messages; NULL: none */
  const char *wbt_output_path;       /* non-NULL: blk-wbt's window events of the device
                                      * (replay-wbt-probe.h) written here; none if the
                                      * kernel has no wbt events */
} ReplayCaptureOptions;

typedef struct {
  guint64  lines;                    /* trace_pipe lines written */
  guint64  bytes;
  gint64   elapsed_ns;
  int      command_status;           /* waitpid() status of the command; -1 without one */
  gboolean stopped;                  /* ended by the stop flag */
} ReplayCaptureStats;

gboolean replay_capture_run (const ReplayCaptureOptions *opts,
                             ReplayCaptureStats         *stats,
                             GError                    **error);

/* A capture on its own thread, recording (independently of the caller's
 * clock) until replay_capture_finish(): for `iosim replay --capture`.
 * replay_capture_start() returns once the tracer records, or NULL with
 * the capture's error (tracer settings already restored).  @opts is
 * copied except its strings, which must outlive the capture; its stop,
 * until_stopped and recording fields are the thread's own. */
typedef struct _ReplayCaptureThread ReplayCaptureThread;

ReplayCaptureThread *replay_capture_start  (const ReplayCaptureOptions *opts,
                                            GError                    **error);
/* Stop, take what the ring buffer holds, restore, join. */
gboolean             replay_capture_finish (ReplayCaptureThread *capture,
                                            ReplayCaptureStats  *stats,
                                            GError             **error);

/* The tracefs directory: @dir if given and usable, else the standard
 * places; mounts tracefs on /sys/kernel/tracing when none is found and
 * @mount_if_absent (sets *@mounted).  Caller frees. */
char    *replay_tracefs_find (const char *dir,
                              gboolean    mount_if_absent,
                              gboolean   *mounted,
                              GError    **error);

/* Remove the tracefs instances named PREFIX<pid> whose process is gone
 * (private instances of a killed `iosim emulate` or capture; an instance
 * holds its own ring buffer until removed).  Says what it does on @log. */
void     replay_tracefs_remove_stale_instances (const char *prefix,
                                                gboolean    dry_run,
                                                FILE       *log);

/* A private tracefs instance @tracefs_dir/instances/PREFIX<pid> (its own
 * ring buffer, clock and event switches), made after removing the stale
 * ones of @prefix; the caller removes it (g_rmdir) and frees the path. */
char    *replay_tracefs_make_instance (const char  *tracefs_dir,
                                       const char  *prefix,
                                       GError     **error);

/* Saved tracer and per-disk settings: current_tracer, tracing_on,
 * trace_clock, buffer_size_kb, and /sys/block/DISK/trace/{enable,
 * act_mask, start_lba, end_lba, pid}. */
typedef struct _ReplayTracefsState ReplayTracefsState;

ReplayTracefsState *replay_tracefs_save    (const char  *tracefs_dir,
                                            const char  *disk_name,
                                            GError     **error);
/* Write every saved value back; keeps going after a failure and reports
 * the first one. */
gboolean            replay_tracefs_restore (ReplayTracefsState *state,
                                            GError            **error);
void                replay_tracefs_state_free (ReplayTracefsState *state);
/* Journal @state's saved values in the order restore writes them: the
 * disk's files, then (@with_tracefs) the tracer's. */
gboolean            replay_tracefs_journal (const ReplayTracefsState *state,
                                            ReplayJournal            *journal,
                                            gboolean                  with_tracefs,
                                            GError                  **error);

/* The files the state covers, relative to tracefs and to /sys/block/DISK
 * ("trace/enable"), for tests comparing before and after. */
const char *const  *replay_tracefs_saved_files (void);
const char *const  *replay_tracefs_saved_disk_files (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayTracefsState, replay_tracefs_state_free)

G_END_DECLS
