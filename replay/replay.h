/* replay.h — replaying a block trace on a real block device.
 *
 * Engines (replay-engine*.c): psync, one thread per traced process
 * (QD1, synchronous pread/pwrite) or a pool of N threads taking I/Os in
 * per-process order; io_uring and libaio, one submitting thread per
 * process plus a reaper thread, with per-process and per-device
 * queue-depth limits.  O_DIRECT unless buffered.  All threads share one
 * time base: an absolute schedule on CLOCK_MONOTONIC from a common start t0, so lateness never accumulates
 * (unlike fio's relative pacing, reference/anchors.md §C, §G).  Threads
 * set PR_SET_TIMERSLACK to 1 ns, sleep with clock_nanosleep(TIMER_ABSTIME)
 * until ~50 us before each I/O and spin on clock_gettime for the rest
 * (yielding while spinning when there are more threads than CPUs; optional
 * SCHED_FIFO for wake-ups on time on a loaded machine).  Every I/O's
 * intended, issue and completion times are kept, so the issue error is
 * reported, not assumed.
 *
 * The work splits in two so that tests can reach each half:
 *   replay_plan_build()  pure: trace I/Os -> per-process schedules, with
 *                        alignment, wrapping and the write policy applied;
 *   replay_run_ios()     safety checks, the target, the range check of
 *                        every I/O against the open targets (again in the
 *                        engines, per I/O), the threads, the per-I/O
 *                        results and the summary.
 * replay_run() loads a trace file and does both.
 */
#pragma once

#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include "traces/trace-lifecycle.h"
#include "replay/replay-safety.h"

G_BEGIN_DECLS

typedef enum {
  REPLAY_EVENTS_QUEUE,    /* replay Q times (what processes submitted) */
  REPLAY_EVENTS_ISSUE,    /* replay D times (what the device saw) */
} ReplayEvents;

typedef enum {
  REPLAY_TIMING_RECORDED, /* open loop: absolute schedule from the trace times */
  REPLAY_TIMING_CLOSED,   /* each I/O after the completion that released it in the trace +
                           * the recorded think time; the trace's back-to-back submissions
                           * keep their gaps (async engines overlap them; psync is QD1) */
  REPLAY_TIMING_AFAP,     /* as fast as possible, per-process order kept */
} ReplayTiming;

const char *replay_events_name (ReplayEvents events);
const char *replay_timing_name (ReplayTiming timing);
gboolean    replay_events_parse (const char *text, ReplayEvents *out);
gboolean    replay_timing_parse (const char *text, ReplayTiming *out);

typedef enum {
  REPLAY_ENGINE_PSYNC,    /* synchronous pread/pwrite (the default) */
  REPLAY_ENGINE_IO_URING, /* liburing, when built with it */
  REPLAY_ENGINE_LIBAIO,   /* Linux native AIO (libaio), when built with it */
} ReplayEngine;

const char *replay_engine_name (ReplayEngine engine);
gboolean    replay_engine_parse (const char *text, ReplayEngine *out);
/* FALSE with a message naming the missing library when this build lacks
 * @engine. */
gboolean    replay_engine_available (ReplayEngine engine, GError **error);
/* "0,2-3" -> CPU numbers in order (duplicates kept: round-robin order is
 * the user's).  NULL with an error for bad syntax. */
GArray     *replay_cpus_parse (const char *text, GError **error);

/* One traced device replayed onto its own target (--map MAJ,MIN=/dev/X). */
typedef struct {
  guint32     dev_major;        /* traced device */
  guint32     dev_minor;
  const char *target;           /* block device (or regular file) it replays on */
} ReplayMap;

/* Called once the targets are checked and open, just before the replay
 * threads start (target setup, capture); FALSE with @error aborts the
 * replay before its first I/O.  @targets: ReplayTarget, in map order. */
typedef gboolean (*ReplayPreparedFunc) (const GArray *targets, gpointer user_data,
                                        GError **error);

/* Called from the controlling thread about every 200 ms while a replay runs. */
typedef void (*ReplayProgressFunc) (guint64 done_ios, guint64 total_ios,
                                    gint64 elapsed_ns, gpointer user_data);

typedef struct {
  const char  *target;          /* block device or regular file (required unless planning
                                 * only; files: replay-safety.h, replay-target-file.c) */
  guint64      target_size_bytes; /* --target-size: use this much of a regular-file target,
                                   * creating or extending it (sparse) first when shorter;
                                   * 0 = the file's size.  Refused for block devices */
  ReplayEvents events;
  ReplayTiming timing;
  double       speed;           /* time compression: 2 = twice as fast; > 0 */
  gboolean     allow_write;     /* replay writes (destroys data on the target) */
  gboolean     reads_only;      /* skip writes (counted) */
  gboolean     per_bio;         /* one I/O per traced bio, even where bios were merged into
                                 * one request (default: one I/O per request's run of a
                                 * process's bios, as the device saw it) */
  gboolean     wrap;            /* wrap offsets beyond the target modulo its size */
  gboolean     dry_run;         /* plan and print; open nothing */
  guint32      dev_major;       /* trace filter, G_MAXUINT32 = every device */
  guint32      dev_minor;
  gint64       lead_ns;         /* t0 = now + lead_ns */
  gint64       spin_ns;         /* spin (not sleep) this long before each I/O */
  int          rt_priority;     /* > 0: workers run SCHED_FIFO at this priority (root) */
  volatile sig_atomic_t *stop;  /* may be NULL; nonzero: stop issuing, keep what was measured */
  const char  *mountinfo_path;  /* NULL = /proc/self/mountinfo */
  ReplayProgressFunc progress;  /* may be NULL */
  gpointer     progress_data;
  /* Engine choice; every field's zero is the default. */
  ReplayEngine engine;          /* psync */
  guint        iodepth;         /* per process; 0 = default: 32 for io_uring/libaio, none for a
                                 * psync pool; a psync thread per process is 1 */
  guint        device_depth;    /* in flight on each target device across processes (with
                                 * --map: per mapped device); 0 = no limit */
  guint        threads;         /* psync: 0 = a thread per process, N = a pool of N */
  gboolean     buffered;        /* page cache instead of O_DIRECT */
  gboolean     poll;            /* io_uring/libaio: each submitter reaps its own completions
                                 * (no reaper thread): it spins, reaping, for spin_ns before
                                 * each I/O, and blocks in the completion wait before that */
  const GArray *cpus;           /* int CPU numbers; workers pinned round-robin; NULL = none */

  const ReplayMap *maps;        /* n_maps > 0: each mapped traced device on its own
                                 * target, other devices skipped; target unused */
  guint        n_maps;
  gboolean     scale_offsets;   /* map each traced device's extent linearly onto its target */
  gboolean     force;           /* write even over a file system / partition table signature */
  ReplayPreparedFunc prepared;  /* may be NULL */
  gpointer     prepared_data;
} ReplayOptions;

/* Defaults: queue events, recorded timing, speed 1, reads only unless told,
 * every device, 20 ms lead, 50 us spin. */
/* Long enough to start a few hundred threads before the first I/O is due. */
#define REPLAY_DEFAULT_LEAD_NS (20 * 1000 * 1000)
/* Sleep overshoot with 1 ns timer slack is ~4-16 us p50-p99 on an idle VM
 * (reference/anchors.md §E.3); 50 us of spinning covers it. */
#define REPLAY_DEFAULT_SPIN_NS (50 * 1000)
#define REPLAY_POLL_SPIN_NS (1000 * 1000)   /* the CLI's spin with --poll */
void replay_options_init (ReplayOptions *opts);

/* One I/O of a process's schedule.  Times are nanoseconds, already divided
 * by the speed factor. */
typedef struct {
  guint64  offset_bytes;   /* on the target, aligned */
  guint32  bytes;          /* aligned, >= one logical block */
  TraceOp  op;             /* TRACE_OP_READ or TRACE_OP_WRITE */
  guint32  target_index;   /* which target (ReplayOptions.maps order; 0 with --target) */
  guint64  trace_sector;   /* as the trace gives it, for messages */
  gint64   sched_ns;       /* recorded timing: intended issue, relative to t0 */
  gint64   think_ns;       /* closed timing: gap after dep_index's completion, -1 = none */
  gint64   gap_ns;         /* closed timing: gap after the previous I/O's intended issue,
                            * used when no completion released this I/O (dep_index -1) */
  gint32   dep_index;      /* closed timing: the earlier I/O of the process whose completion
                            * released this one in the trace (the last to complete before
                            * its event, after the previous I/O's event), -1 = none */
  gint64   trace_latency_ns; /* what the trace recorded from the replayed event to the
                              * completion (Q2C, or D2C with issue events), unscaled;
                              * -1 = not recorded (TraceIo.no_completion: fio iologs, SPC,
                              * DiskSim, Q-only blkparse) */
} ReplayIo;

typedef struct {
  char    *name;           /* "<comm>-<pid>", or "pid<N>" without a comm */
  guint32  pid;
  GArray  *ios;            /* ReplayIo, in the process's trace order */
} ReplayProcess;

/* A target as the plan sees it: which traced device goes there, its size. */
typedef struct {
  guint32  dev_major;      /* traced device; G_MAXUINT32 = every device */
  guint32  dev_minor;
  guint64  size_bytes;
  guint32  block_bytes;    /* logical block size, a power of two */
  /* Filled by the plan: */
  guint64  traced_extent_bytes; /* end of the furthest traced I/O (--scale-offsets) */
  guint64  n_ios, n_reads, n_writes;
  guint64  bytes_read, bytes_written;
  guint64  first_offset_bytes, end_offset_bytes; /* range touched on the target */
} ReplayPlanTarget;

typedef struct {
  GPtrArray *processes;    /* ReplayProcess *, sorted by pid */
  GArray    *targets;      /* ReplayPlanTarget, ReplayIo.target_index order */
  ReplayEvents events;     /* what was used (issue when the trace has no Q) */
  ReplayTiming timing;
  double   speed;
  guint64  target_size_bytes;
  guint32  block_bytes;
  guint64  n_ios;          /* planned */
  guint    n_devices;      /* distinct traced devices replayed onto the one target */
  guint64  n_reads, n_writes;
  guint64  bytes_read, bytes_written;
  guint64  skipped_writes; /* --reads-only */
  guint64  skipped_other;  /* discards, flushes, zero-length I/Os */
  guint64  skipped_untimed;/* no time for the chosen event */
  guint64  fell_back_to_issue; /* I/Os without Q replayed at their D time */
  guint64  aligned;        /* offset or length adjusted to the block size */
  guint64  wrapped;        /* --wrap applied */
  guint64  scaled;         /* --scale-offsets applied */
  guint64  clamped;        /* moved back so that they end at the target's end (their
                            * tail stuck out after --wrap, --scale-offsets or alignment) */
  guint64  skipped_unmapped; /* I/Os of traced devices without a --map */
  guint64  coalesced;      /* bios folded into the I/O of the request that carried them */
  guint64  writes_need_allow_write; /* dry run without --allow-write or --reads-only: the
                                     * planned writes a real run would refuse */
  guint64  no_completion;  /* planned I/Os whose trace recorded no completion: replayed at
                            * their event time, their trace latency not recorded */
  gint64   span_ns;        /* last intended issue, relative to t0 (recorded timing) */
} ReplayPlan;

/* Build the schedules.  @ios: TraceIo sorted as trace_load_ios() returns
 * them, from any source: nothing about their values is trusted.  I/Os
 * without a completion in the trace (TraceIo.no_completion) replay at
 * their queue time like the others; ReplayIo.trace_latency_ns says -1 and
 * the plan counts them (no_completion).  Unless
 * per_bio, the contiguous bios of one process that one request carried
 * (same device, op, D and C times) replay as one I/O of their total size,
 * at the first one's time: a buffered writer's writeback (4 KiB bios
 * merged into 512 KiB requests) replays as the requests the device saw,
 * not as one 4 KiB O_DIRECT write per page.  Fails
 * with REPLAY_ERROR_WRITES when the trace writes and neither allow_write
 * nor reads_only is set (a dry run, which writes nothing, plans the writes
 * as --allow-write would and counts them in writes_need_allow_write),
 * REPLAY_ERROR_FAILED for closed timing when no planned I/O has a
 * completion in the trace (nothing could release anything; recorded and
 * afap timing replay such traces), REPLAY_ERROR_EMPTY for --events issue
 * on a trace without issue (D) times, REPLAY_ERROR_RANGE for an I/O beyond the target
 * (without wrap or scale_offsets) or larger than it, and for any I/O whose
 * extent does not fit in 64-bit bytes (sector * 512 + length overflows),
 * whatever wrap and scale_offsets say; REPLAY_ERROR_EMPTY when nothing is
 * left.  On success every planned I/O's [offset_bytes, offset_bytes +
 * bytes) lies inside its target (replay_plan_check_ranges() holds). */
ReplayPlan *replay_plan_build  (const GArray        *ios,
                                const ReplayOptions *opts,
                                guint64              target_size_bytes,
                                guint32              block_bytes,
                                GError             **error);
/* The same with one target per traced device (@targets[i].dev_major/minor;
 * I/Os of other devices are skipped), or one catch-all target. */
ReplayPlan *replay_plan_build_mapped (const GArray           *ios,
                                      const ReplayOptions    *opts,
                                      const ReplayPlanTarget *targets,
                                      guint                   n_targets,
                                      GError                **error);
void        replay_plan_free   (ReplayPlan *plan);
/* TRUE when every I/O of @plan lies inside its target: a non-empty
 * [offset_bytes, offset_bytes + bytes) within [0, size), size being
 * @size_bytes[target_index] (one per plan target; NULL: the plan's own
 * ReplayPlanTarget.size_bytes).  REPLAY_ERROR_RANGE naming the first I/O
 * outside otherwise.  O(I/Os), no allocation. */
gboolean    replay_plan_check_ranges (const ReplayPlan *plan,
                                      const guint64    *size_bytes,
                                      GError          **error);
/* Human-readable plan (what --dry-run prints). */
void        replay_plan_print  (const ReplayPlan   *plan,
                                const ReplayTarget *target,
                                FILE               *out);
/* Per target: device, traced device, ranges, request counts, bytes to
 * read and write.  @targets: ReplayTarget, in the plan's target order. */
void        replay_plan_print_targets (const ReplayPlan *plan,
                                       const GArray     *targets,
                                       FILE             *out);

/* The measured outcome of one I/O, parallel to ReplayProcess.ios.  Times
 * relative to t0. */
typedef struct {
  gint64 intended_ns;
  gint64 issue_ns;
  gint64 complete_ns;
  gint64 submitted_ns;     /* io_uring/libaio: when the submit call that carried it
                            * returned; psync: 0 (the call is the whole I/O) */
  gint32 error;            /* 0 or -errno; a short transfer is -EIO */
} ReplayIoResult;

/* The trace's own latency of the replayed I/Os beside the replay's, over
 * the I/Os that have one (ReplayIo.trace_latency_ns >= 0).  The spans
 * differ (the trace's Q2C or D2C in the block layer, the replay's system
 * call), so the ratio is a guide, not a validation.  ios == 0: not
 * recorded, every figure 0 and nothing compared. */
typedef struct {
  guint64  ios;                /* replayed I/Os with a trace latency */
  guint64  not_recorded;       /* replayed I/Os whose trace has no completion */
  double   mean_ns;            /* as recorded, unscaled */
  gint64   p50_ns, p99_ns;
  double   replayed_mean_ns;   /* the replay's latency of the same I/Os */
} ReplayTraceLatency;

typedef struct {
  char    *name;
  guint32  pid;
  guint64  ios;
  guint64  bytes;
  guint64  errors;
  double   latency_mean_ns;
  gint64   latency_p50_ns, latency_p95_ns, latency_p99_ns, latency_max_ns;
  ReplayTraceLatency trace_latency;
} ReplayProcessSummary;

typedef struct {
  ReplayTarget target;       /* the first target */
  GArray      *targets;      /* ReplayTarget, every target in plan order */
  ReplayPlan  *plan;
  gboolean     dry_run;      /* nothing below is measured */
  gboolean     interrupted;  /* the stop flag rose: results are partial */
  GPtrArray   *io_results;   /* per process: GArray of ReplayIoResult */
  GArray      *processes;    /* ReplayProcessSummary, same order as plan->processes */
  guint64      ios, bytes, errors;
  gint64       elapsed_ns;   /* first issue to last completion */
  double       intended_iops;/* 0 when the schedule has no span (afap) */
  double       achieved_iops;
  double       mb_per_s;     /* 10^6 bytes per second */
  gint64       issue_error_p50_ns, issue_error_p99_ns, issue_error_max_ns;
  double       issue_error_mean_ns;
  /* io_uring/libaio: time inside the submit call, per I/O (the call that
   * carried it): near the gap between I/Os, the submitter is CPU-bound
   * and lateness comes from the kernel's submission path.  psync: 0. */
  gint64       submit_call_p50_ns, submit_call_p99_ns;
  ReplayEngine engine;       /* what ran, with its effective limits */
  guint        iodepth;
  guint        device_depth; /* 0 = none */
  guint        threads;      /* submitting/issuing threads */
  gboolean     buffered;
  guint32     *process_tids; /* per process (plan order): the thread id that issued its I/Os,
                             * as a capture taken during the replay records it; 0 when
                             * threads share processes (psync pool) or before a run */
  ReplayTraceLatency trace_latency;   /* over every process */
  guint        max_inflight_process;  /* most I/Os one process had in flight */
  guint        max_inflight_device;   /* most I/Os in flight on one target device */
  GPtrArray   *warnings;     /* char *: what limits the figures (a file target's buffered
                              * fallback, a file system in memory, reads of holes) */
} ReplayResult;

ReplayResult *replay_run_ios   (const GArray        *ios,
                                const ReplayOptions *opts,
                                GError             **error);
ReplayResult *replay_run       (const char          *trace_path,
                                const ReplayOptions *opts,
                                GError             **error);
void          replay_result_free (ReplayResult *result);

/* Outputs: per-I/O CSV (trace-results.h format), a JSON summary, and an
 * aligned text summary. */
void          replay_result_write_csv  (const ReplayResult *result,
                                        FILE               *out);
gboolean      replay_result_write_json (const ReplayResult *result,
                                        const char         *path,
                                        GError            **error);
void          replay_result_print      (const ReplayResult *result,
                                        FILE               *out);

/* The "# iosim-capture replay_pids=TID:PID:COMM,..." line (with its
 * newline) that maps each replaying thread of @result to the traced pid and
 * comm (as in its process name, maybe empty) it replayed,
 * for a capture taken during the replay: trace_load_ios() then gives the
 * capture's I/Os the trace's pids, so that fit --measured of the capture
 * names processes as the trace does.  NULL when no thread maps to one
 * process.  Caller frees. */
char         *replay_result_pid_map_line (const ReplayResult *result);

/* Percentile by nearest rank of @n sorted values (p in [0,100]); 0 when empty. */
gint64        replay_percentile_ns     (const gint64 *sorted,
                                        gsize         n,
                                        double        p);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayPlan, replay_plan_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayResult, replay_result_free)

G_END_DECLS
