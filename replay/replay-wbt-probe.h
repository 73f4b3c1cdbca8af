/* replay-wbt-probe.h — the kernel's blk-wbt window verdicts on one device,
 * recorded from tracefs while a capture runs, and read back as the same
 * records the simulator's wbt log gives (sim/sim-wbt.c), so that the two
 * can be set side by side.
 *
 * Linux 6.18 include/trace/events/wbt.h: wbt_stat (a window's read and
 * write latency samples), wbt_lat (a read's latency over the target),
 * wbt_step ("scale up"/"scale down", the new step, the window in force,
 * the background, normal and max limits), wbt_timer (wb_timer_fn: status
 * 1 ok, 2 unknown, 3 unknown_writes, 4 exceeded; the step; tracked
 * requests in flight).  Each names the device by its BDI name "MAJ:MIN".
 * The events are enabled in a private tracefs instance (iosim-wbt-PID),
 * so the top-level blk tracer of the capture is not touched; the instance
 * is removed when the probe ends, or by the next probe or `iosim restore`
 * after a kill.  Its ring buffer (an instance's default, 1410 KiB per CPU
 * on this kernel: tens of thousands of windows) is read once, at the end;
 * a run long enough to fill it keeps its latest windows only. */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

#define REPLAY_WBT_INSTANCE_PREFIX "iosim-wbt-"

typedef struct _ReplayWbtProbe ReplayWbtProbe;

/* Enable the wbt events in a new instance of @tracefs_dir, to keep those
 * of the disk @devno ("MAJ:MIN", its BDI name).  NULL with @error when
 * this kernel has no wbt events or the instance cannot be made (nothing
 * is left behind). */
ReplayWbtProbe *replay_wbt_probe_start (const char  *tracefs_dir,
                                        const char  *devno,
                                        GError     **error);
/* Stop the events and write the disk's lines to @path, after a header
 * "# iosim-wbt device=MAJ:MIN ..." line. */
gboolean        replay_wbt_probe_stop  (ReplayWbtProbe *probe,
                                        const char     *path,
                                        GError        **error);
/* Remove the instance (whether stopped or not) and free. */
void            replay_wbt_probe_free  (ReplayWbtProbe *probe);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayWbtProbe, replay_wbt_probe_free)

/* One window or step, from either side. */
typedef enum {
  REPLAY_WBT_TIMER,              /* a window ended: status, step, inflight */
  REPLAY_WBT_STEP,               /* the step changed: step, window, limits */
} ReplayWbtKind;

typedef struct {
  ReplayWbtKind kind;
  gint64  time_ns;               /* the kernel's trace clock, or simulated time */
  int     status;                /* TIMER: 1 ok, 2 unknown, 3 unknown_writes, 4 exceeded */
  int     step;                  /* TIMER: before the verdict; STEP: after it */
  guint   inflight;              /* TIMER */
  gboolean up;                   /* STEP: scaled up (the step went down) */
  guint64 window_us;             /* STEP: the window in force when it changed */
  guint   background, normal, max;   /* STEP: the limits after it */
} ReplayWbtEvent;

/* The events of a probe's file (the kernel's wbt_timer and wbt_step lines
 * of the device its header names), or of a simulated wbt log (`iosim run
 * --trace-sched` lines "<ns> <device> wbt wbt_timer|wbt_step ...").
 * Other lines are skipped; a malformed wbt line is an error naming the
 * file and line. */
GArray *replay_wbt_events_load (const char  *path,
                                GError     **error);

/* What one side did: windows by verdict, steps taken, the deepest and the
 * shallowest step. */
typedef struct {
  guint  windows;
  guint  status[5];              /* [1] .. [4] */
  guint  ups, downs;
  int    first_step;             /* the first window's step: what the run began with */
  int    min_step, max_step;
  guint  max_inflight;
} ReplayWbtSummary;

void    replay_wbt_summarize   (const GArray      *events,
                                ReplayWbtSummary  *out);
/* The first window whose verdict or step differs between @kernel and
 * @sim (window order), or -1 when they agree as far as both go. */
int     replay_wbt_first_difference (const GArray *kernel,
                                     const GArray *sim);
/* Status 1 .. 4 as the simulator's log names it. */
const char *replay_wbt_status_name (int status);

G_END_DECLS
