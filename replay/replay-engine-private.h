/* replay-engine-private.h — what the replay engines share: one run's
 * state (start gate, shared counters, queue-depth slots), the
 * sleep-then-spin wait on the absolute schedule, and per-thread setup
 * (timer slack, comm, SCHED_FIFO, CPU pinning).  Engines: psync in
 * replay-engine.c, io_uring and libaio in replay-engine-async.c.
 */
#pragma once

#include "replay/replay.h"

G_BEGIN_DECLS

/* Threads are created first and wait at the gate; t0 is set once all
 * exist, so the lead need not cover thread creation. */
typedef struct {
  GMutex   lock;
  GCond    cond;
  gboolean go;
  gint64   t0_ns;
} ReplayStartGate;

typedef struct {
  const ReplayOptions *opts;
  ReplayPlan  *plan;
  GPtrArray   *io_results;   /* per process: GArray of ReplayIoResult, pre-sized */
  guint       *issued;       /* per process: results valid so far (a prefix) */
  const int   *fds;          /* per target: ReplayIo.target_index */
  const guint64 *target_bytes; /* per target: size of the open device (BLKGETSIZE64, at
                                * most the probed size); each I/O is checked against it */
  guint        n_targets;
  ReplayStartGate gate;
  guint        iodepth;      /* per process, effective */
  guint        device_depth; /* 0 = no limit */
  guint32      align_bytes;
  gboolean     yield_in_spin;
  gint         done_ios;     /* atomic */
  gint         finished;     /* atomic: threads that returned */
  gint         abort;        /* atomic */
  gint        *device_inflight;     /* per target, atomic: device_depth is per device */
  gint         max_device_inflight; /* atomic: most on any one target */
  gint         max_process_inflight;/* atomic */
  guint32     *tids;         /* per process: the thread that issues its I/Os (gettid), 0 when
                              * several share it (psync pool) */
  gint         outside;      /* atomic: set once, by the first I/O refused as outside */
  guint        outside_process, outside_index; /* that I/O (written by its setter only) */
} ReplayRun;

/* Defence in depth for the write path: the plan is checked against the
 * open targets before the first I/O (replay_plan_check_ranges), and every
 * engine checks each I/O again just before issuing it, so no plan, however
 * it was built, makes an engine touch bytes outside a target.  A compare,
 * no allocation: it stays on the hot path. */
static inline gboolean
replay_io_inside (const ReplayRun *run, const ReplayIo *io)
{
  guint64 size;

  if (io->target_index >= run->n_targets)
    return FALSE;
  size = run->target_bytes[io->target_index];
  return io->bytes > 0 && io->bytes <= size && io->offset_bytes <= size - io->bytes;
}
/* Refuse I/O @index of process @process (not issued): the first refusal
 * is noted for the run's error, and the run aborts.  Always FALSE. */
gboolean replay_run_refuse_outside (ReplayRun *run, guint process, guint index);
/* replay_io_inside(), refusing the I/O when it is not. */
static inline gboolean
replay_io_check (ReplayRun *run, guint process, guint index)
{
  const ReplayProcess *proc = g_ptr_array_index (run->plan->processes, process);

  if (G_LIKELY (replay_io_inside (run, &g_array_index (proc->ios, ReplayIo, index))))
    return TRUE;
  return replay_run_refuse_outside (run, process, index);
}

/* replay_run_ios() from a built plan (taken): probe and open the targets,
 * check the plan against them when @check_first (replay_run_ios always
 * does; FALSE only lets tests reach the engines' own per-I/O check), set
 * up and run.  NULL with @error on any refusal. */
ReplayResult *replay_run_plan (ReplayPlan          *plan,
                               const ReplayOptions *opts,
                               gboolean             check_first,
                               GError             **error);

gint64   replay_now_ns          (void);
gboolean replay_run_stopped     (ReplayRun *run);
/* Sleep (in slices, asking @stopped) until @spin_ns before @target_ns on
 * CLOCK_MONOTONIC, then spin, yielding if @yield; FALSE once @stopped.
 * Block and NFS replays both wait this way. */
gboolean replay_sleep_spin_until (gint64 target_ns, gint64 spin_ns, gboolean yield,
                                  gboolean (*stopped) (gpointer data), gpointer data);
/* The same with @run's spin, yield and stop. */
gboolean replay_wait_until_ns   (ReplayRun *run, gint64 target_ns);
/* Wait at the gate; returns t0.  Then timer slack, comm, priority, and
 * the CPU: --cpus entry @cpu_slot modulo the list's length (-1: none), so
 * that which thread runs where does not depend on start order. */
gint64   replay_thread_start    (ReplayRun *run, const char *process_name, gint cpu_slot);
/* Take a slot on target device @target (device_depth) and in
 * @process_inflight (@limit, 0 = none), spinning until one is free;
 * FALSE on stop. */
gboolean replay_slots_acquire   (ReplayRun *run, guint target, gint *process_inflight,
                                 guint limit);
/* The same without waiting: FALSE when either is full. */
gboolean replay_slots_try_acquire (ReplayRun *run, guint target, gint *process_inflight,
                                   guint limit);
void     replay_slots_release   (ReplayRun *run, guint target, gint *process_inflight);
/* Intended absolute time of I/O @i for closed and afap timing, or the
 * recorded schedule.  @prev_complete: when I/O i - 1 completed (afap);
 * @dep_complete: when I/O dep_index completed (closed, when >= 0). */
gint64   replay_intended_abs_ns (ReplayTiming timing, const ReplayProcess *proc, guint i,
                                 gint64 t0_ns, gint64 prev_intended, gint64 prev_complete,
                                 gint64 dep_complete);
/* Run @n threads of @func (data: @datas + k * @data_size) from a common t0,
 * reporting progress, and join them. */
gboolean replay_threads_run     (ReplayRun *run, guint n, GThreadFunc func, gpointer datas,
                                 gsize data_size, GError **error);

/* Engines: fill run->io_results / run->issued. */
gboolean replay_engine_run_async (ReplayRun *run, GError **error);

G_END_DECLS
