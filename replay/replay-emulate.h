/* replay-emulate.h — `iosim emulate`: a real block device whose every
 * request takes the time an iosim device model (models/dev/) says.
 *
 * The stack: a FUSE file system (libfuse3 low-level API) in a private
 * directory TMP/iosim-emulate-XXXXXX/mnt holds one regular file "disk" of
 * the emulated size; its data live in a sparse backing file (pread/pwrite).
 * A loop device is attached to that file, with direct I/O by default so
 * that the page cache of the FUSE file does not absorb requests.  The
 * kernel's block layer, elevator and page cache run on the loop device;
 * each FUSE read or write the loop driver sends is queued the way
 * sim/sim-device.c queues it (parallelism servers, FIFO among waiting
 * requests), gets its modelled start and end from the model's
 * service_time, has its data copied at once, and is answered when its
 * modelled end comes (absolute CLOCK_MONOTONIC schedule: sleep, then
 * spin).  Model time 0 is the emulator's start.
 *
 * Before mounting, a journal (replay-journal.h, kind "emulate") names the
 * directory and, before attaching, the loop device, and once the device
 * is up the original vm.dirty_* limits (--dirty-bytes,
 * --dirty-background-bytes) before they are lowered, so that after a
 * SIGKILL a later `iosim emulate` or `iosim restore` writes the limits
 * back, detaches, unmounts and deletes what was left
 * (replay_emulate_cleanup_journal).
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>

#include "replay/replay-journal.h"

G_BEGIN_DECLS

/* The emulator's private directory is TMP/REPLAY_EMULATE_DIR_PREFIX"XXXXXX". */
#define REPLAY_EMULATE_DIR_PREFIX "iosim-emulate-"
/* Inside it: the mount point, the file in the mount, the temporary backing. */
#define REPLAY_EMULATE_MOUNT_NAME "mnt"
#define REPLAY_EMULATE_FILE_NAME "disk"
#define REPLAY_EMULATE_BACKING_NAME "backing"
/* The file system type in /proc/self/mountinfo (fuse.SUBTYPE). */
#define REPLAY_EMULATE_FSTYPE "fuse.iosim-emulate"

#define REPLAY_EMULATE_ROUTE_MEASURE (-1)

typedef struct {
  const char *model;             /* a model NAME (models/devices/NAME.ini) or FILE */
  guint64     size_bytes;        /* of the emulated device; <= the model's capacity */
  const char *backing;           /* keep the data here; NULL: a temporary file */
  gboolean    direct_io;         /* loop device with LO_FLAGS_DIRECT_IO */
  const char *journal_dir;       /* NULL: replay_journal_default_dir () */
  gint64      spin_ns;           /* spin this long before a reply is due (0: default) */
  /* A request's modelled start is its arrival minus this (the route from
   * the submitting call through loop and FUSE; 0: none);
   * REPLAY_EMULATE_ROUTE_MEASURE: measured at start with probe reads. */
  gint64      route_ns;
  volatile sig_atomic_t *stop;   /* serve until *stop (SIGINT/SIGTERM handler) */
  FILE       *log;               /* warnings and cleanup notes; may be NULL */
  /* vm.dirty_bytes / vm.dirty_background_bytes for the run (0: left
   * alone); journaled, restored at stop (replay_emulate_sysctl_set). */
  guint64     dirty_bytes;
  guint64     dirty_background_bytes;
} ReplayEmulateOptions;

typedef struct _ReplayEmulator ReplayEmulator;

/* Load the model, clean up what dead emulators left, create the
 * directory, journal, backing file, mount and loop device.  On failure
 * everything made so far is undone and NULL is returned with @error. */
ReplayEmulator *replay_emulator_start   (const ReplayEmulateOptions *opts,
                                         GError                    **error);
/* /dev/loopN. */
const char     *replay_emulator_device  (const ReplayEmulator *emu);
/* Serve until *opts->stop or until the FUSE session ends on its own
 * (unmounted from outside: FALSE with @error). */
gboolean        replay_emulator_serve   (ReplayEmulator *emu,
                                         GError        **error);
/* Detach the loop device, unmount, delete the temporary files, remove
 * the journal.  Safe to call once after start succeeded, whatever serve
 * returned.  FALSE when something could not be undone (said in @error;
 * the journal is then kept for `iosim restore`). */
gboolean        replay_emulator_stop    (ReplayEmulator *emu,
                                         GError        **error);
/* Counts by op, bytes, timing error (actual minus modelled end)
 * p50/p99/max, in-flight depth seen, the request sizes the kernel sent. */
JsonNode       *replay_emulator_stats_json (ReplayEmulator *emu);
/* The same, written to @path (indented); errors name the path. */
gboolean        replay_emulator_write_stats (ReplayEmulator *emu, const char *path, GError **error);
/* Per request, in reply order, CSV: op, offset, bytes, in-flight depth at
 * arrival, arrival, modelled start and end, data copied, reply sent and
 * returned (ns of model time). */
gboolean        replay_emulator_write_requests (ReplayEmulator *emu,
                                                const char     *path,
                                                GError        **error);
/* One line: requests, MB, timing error p50/p99/max, max depth. */
char           *replay_emulator_summary (ReplayEmulator *emu);
void            replay_emulator_free    (ReplayEmulator *emu);

/* The cleanup of an emulator journal (replay_journal_restore calls it):
 * detach every loop device whose backing file is DIR/mnt/disk, lazily
 * unmount a FUSE mount at DIR/mnt, delete DIR/backing when it was
 * temporary, remove the directories and the journal.  Every step is
 * checked against the journal's directory first and is a no-op when
 * already done.  With @dry_run only says what it would do. */
gboolean        replay_emulate_cleanup_journal (ReplayJournal *journal,
                                                gboolean       dry_run,
                                                FILE          *log,
                                                GError       **error);
/* The same on a directory (used by the emulator's own stop path). */
gboolean        replay_emulate_cleanup_dir (const char *emulate_dir,
                                            gboolean    temp_backing,
                                            gboolean    dry_run,
                                            FILE       *log,
                                            GError    **error);
/* Lower the writeback limits for the run: for each of @dirty_bytes and
 * @dirty_background_bytes that is not 0, journal the originals of its
 * pair (PROC/sys/vm/dirty_bytes and dirty_ratio, or dirty_background_bytes
 * and dirty_background_ratio; PROC: @proc_root, NULL for /proc), then write
 * it and read it back (an error if the kernel did not take it: below its
 * minimum of 2 pages, or no root).  Refused while another running
 * emulator's journal in the same directory holds dirty limits. */
gboolean        replay_emulate_sysctl_set (ReplayJournal *journal,
                                           const char    *proc_root,
                                           guint64        dirty_bytes,
                                           guint64        dirty_background_bytes,
                                           FILE          *log,
                                           GError       **error);
/* Write back the journal's dirty limits: of each pair the member that was
 * in force (bytes when its original is not 0, else the ratio), read back.
 * The journal is kept (its other steps may remain).  With @dry_run only
 * says what it would write. */
gboolean        replay_emulate_sysctl_restore (ReplayJournal *journal,
                                               gboolean       dry_run,
                                               FILE          *log,
                                               GError       **error);
/* The loop devices (/dev/loopN, NULL-terminated) whose backing file is
 * @file, from /sys/block/loop*\/loop/backing_file. */
GStrv           replay_emulate_loops_backed_by (const char *file);
/* TRUE when /proc/self/mountinfo has a mount at @mount_point. */
gboolean        replay_emulate_is_mounted (const char *mount_point);

/* Route probes (replay-emulate-route.c): block_rq_issue of @device_path
 * traced in a private tracefs instance (removed by _free; a dead
 * emulator's is removed by the next start).  NULL with @error when tracefs
 * is not mounted or the instance cannot be made. */
typedef struct _ReplayEmulateRoute ReplayEmulateRoute;

ReplayEmulateRoute *replay_emulate_route_start  (const char         *device_path,
                                                 GError            **error);
/* Stop tracing; append to @issue_ns (gint64, CLOCK_MONOTONIC ns) the issue
 * time of every traced request starting at @sector, in trace order. */
gboolean            replay_emulate_route_issues (ReplayEmulateRoute *route,
                                                 guint64             sector,
                                                 GArray             *issue_ns,
                                                 GError            **error);
/* Keep tracing, from now on read live (trace_pipe, non-blocking). */
gboolean            replay_emulate_route_follow (ReplayEmulateRoute *route,
                                                 GError            **error);
/* The issue time (CLOCK_MONOTONIC ns) of the request that holds @sector
 * and has not been matched yet; FALSE if the trace has none (yet). */
gboolean            replay_emulate_route_issue_of (ReplayEmulateRoute *route,
                                                   guint64             sector,
                                                   gint64             *issue_ns);
void                replay_emulate_route_free   (ReplayEmulateRoute *route);
/* The kernel's block_rq_complete of each request since _follow (read
 * from trace_pipe now too), in trace order. */
typedef struct {
  guint64 sector;
  gint64  complete_ns;           /* CLOCK_MONOTONIC */
} ReplayEmulateCompletion;

const GArray       *replay_emulate_route_completions (ReplayEmulateRoute *route);
/* The completions read since the last call (by _issue_of or _completions),
 * *@n of them; valid until the next read. */
const ReplayEmulateCompletion *replay_emulate_route_new_completions (ReplayEmulateRoute *route,
                                                                   guint              *n);
/* Remove the route instances of emulators that are no longer running
 * (SIGKILL leaves them; a tracefs that is not mounted has none). */
void                replay_emulate_route_remove_stale (gboolean dry_run,
                                                       FILE    *log);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayEmulateRoute, replay_emulate_route_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayEmulator, replay_emulator_free)

G_END_DECLS
