/* replay-engine-async.c — the io_uring and libaio replay engines.
 *
 * Per traced process, one submitting thread and one reaping thread over a
 * private ring (io_uring) or context (libaio) of the process's queue
 * depth.  The submitter waits on the absolute schedule (sleep, then spin,
 * as psync), takes a process slot and a slot on the I/O's target device
 * (--iodepth, --device-depth per device), records the issue time and
 * submits the I/O on its target's fd (--map), with any later ones already
 * due when it is behind (one system call for a batch, as fio does; each
 * keeps its own intended time); it never waits for a completion in recorded timing, so a slow I/O does not delay
 * the next one while the queue has room.  The reaper blocks in the kernel
 * (io_uring_wait_cqe, io_getevents) and stamps the completion time right
 * after the kernel hands the completion over, then frees the slots.
 * Afap timing waits for the previous completion, as psync does; closed
 * timing waits for the completion that released each I/O in the trace
 * (ReplayIo.dep_index), so I/Os the trace kept in flight together overlap.
 *
 * With --poll there is no reaper thread: the submitter busy-waits for the
 * last spin_ns before each I/O (no wake-up latency; the CLI makes that
 * 1 ms, so at rates above 1k IOPS it never sleeps) and reaps completions
 * from user space meanwhile; farther away it blocks in the completion wait,
 * stamping completions as they arrive, or sleeps when none is in flight.
 * libaio's completion ring is mapped in the process (as fio's
 * userspace_reap reads it); io_uring is set up with COOP_TASKRUN, so a
 * completion does not interrupt the submitter with an IPI but raises a
 * flag that the next peek acts on.
 *
 * The submitter only touches the submission side and the reaper only the
 * completion side, which liburing and the AIO syscalls allow from two
 * threads.  Without the library at build time the engine is refused
 * (replay_engine_available()).
 */
#include "replay/replay-engine-private.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef IOSIM_HAVE_LIBURING
#include <liburing.h>
#endif
#ifdef IOSIM_HAVE_LIBAIO
#include <libaio.h>
#endif

#ifdef IOSIM_HAVE_LIBAIO
/* The completion ring an AIO context id points at (struct aio_ring in
 * the kernel's fs/aio.c): user space may consume events by moving head. */
struct aio_user_ring {
  unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
  struct io_event events[];
};
#define AIO_USER_RING_MAGIC 0xa10a10a1u
#endif

/* io_uring user_data of the no-op that tells the reaper submission ended. */
#define SENTINEL_USER_DATA G_MAXUINT64
/* Most I/Os submitted in one call when several are already due. */
#define REPLAY_ASYNC_MAX_BATCH 32
/* How long a libaio reaper blocks before looking at the end flag. */
#define AIO_REAP_TIMEOUT_NS (10 * 1000 * 1000)
/* --poll: longest block in one go, so that a stop request is seen soon. */
#define POLL_MAX_BLOCK_NS (50 * 1000 * 1000)

typedef struct {
  ReplayRun *run;
  guint      process;
  gboolean   poll;          /* --poll: the submitter reaps */
  const ReplayProcess *proc;
  GArray    *results;       /* ReplayIoResult, pre-sized */
  gint64     t0_ns;         /* set by the submitter at the gate */
  gint       t0_set;        /* atomic */
  gint       inflight;      /* atomic */
  gint       submitted;     /* atomic */
  gint       reaped;        /* atomic */
  gint      *done;          /* per I/O, atomic: 1 once its completion time is stamped */
  gint       submit_done;   /* atomic */
  guint8    *read_buf, *write_buf; /* shared by the process's I/Os: only timing matters */
#ifdef IOSIM_HAVE_LIBURING
  struct io_uring ring;
  gboolean   ring_ready;
#endif
#ifdef IOSIM_HAVE_LIBAIO
  io_context_t ctx;
  gboolean   ctx_ready;
  struct aio_user_ring *user_ring;   /* --poll: the context's ring, if its layout is known */
  struct iocb *iocbs;       /* one per I/O of the process */
#endif
} AsyncProc;

typedef struct {
  AsyncProc *ap;
  gboolean   reaper;
} AsyncThread;

/* Which target I/O @index goes to: its fd and its device's depth slots. */
static guint
io_target (const AsyncProc *ap, guint index)
{
  return g_array_index (ap->proc->ios, ReplayIo, index).target_index;
}

/* A completion of I/O @index with the kernel's result @res at @now. */
static void
complete_io (AsyncProc *ap, guint index, gint64 res, gint64 now)
{
  ReplayIoResult *r = &g_array_index (ap->results, ReplayIoResult, index);
  const ReplayIo *io = &g_array_index (ap->proc->ios, ReplayIo, index);
  guint32 bytes = io->bytes;

  r->complete_ns = now - ap->t0_ns;
  r->error = res < 0 ? (gint32) res : res == (gint64) bytes ? 0 : -EIO;
  replay_slots_release (ap->run, io->target_index, &ap->inflight);
  /* A full barrier: the submitter that sees done reads complete_ns. */
  g_atomic_int_set (&ap->done[index], 1);
  g_atomic_int_inc (&ap->reaped);
  g_atomic_int_inc (&ap->run->done_ios);
}

static gboolean
reaper_may_stop (AsyncProc *ap)
{
  return g_atomic_int_get (&ap->submit_done)
         && g_atomic_int_get (&ap->reaped) == g_atomic_int_get (&ap->submitted);
}

/* ---- backend: io_uring ---- */

#ifdef IOSIM_HAVE_LIBURING
static gboolean
uring_setup (AsyncProc *ap, guint depth, GError **error)
{
  /* One entry more than the depth, for the end-of-submission no-op.
   * Polling: completions flag the ring instead of interrupting us. */
  unsigned flags = ap->poll ? IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG : 0;
  int rc = io_uring_queue_init (depth + 1, &ap->ring, flags);

  if (rc == -EINVAL && flags != 0)   /* kernels before 5.19 */
    rc = io_uring_queue_init (depth + 1, &ap->ring, 0);

  if (rc < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "io_uring_queue_init (%u entries) for %s: %s", depth + 1, ap->proc->name,
                   g_strerror (-rc));
      return FALSE;
    }
  ap->ring_ready = TRUE;
  return TRUE;
}

/* Queue I/Os @first .. @first + @count - 1 and submit them in one call. */
static void
uring_submit (AsyncProc *ap, guint first, guint count)
{
  guint queued = 0;
  int rc;

  for (guint k = first; k < first + count; k++)
    {
      const ReplayIo *io = &g_array_index (ap->proc->ios, ReplayIo, k);
      struct io_uring_sqe *sqe = io_uring_get_sqe (&ap->ring);
      int fd = ap->run->fds[io->target_index];   /* the I/O's own target (--map) */

      if (sqe == NULL)   /* cannot happen: in flight <= depth < entries */
        {
          complete_io (ap, k, -EBUSY, replay_now_ns ());
          continue;
        }
      if (io->op == TRACE_OP_WRITE)
        io_uring_prep_write (sqe, fd, ap->write_buf, io->bytes, io->offset_bytes);
      else
        io_uring_prep_read (sqe, fd, ap->read_buf, io->bytes, io->offset_bytes);
      io_uring_sqe_set_data64 (sqe, k);
      queued++;
    }
  /* Errors of an I/O come back as completions; a failed submit leaves
   * the entries in the ring, for the next submit (at worst the final
   * no-op's) to pass on. */
  while (queued > 0)
    {
      rc = io_uring_submit (&ap->ring);
      if (rc > 0)
        queued -= MIN ((guint) rc, queued);
      else if (rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
        {
          g_warning ("io_uring_submit for %s: %s", ap->proc->name, g_strerror (-rc));
          return;
        }
      else
        sched_yield ();
    }
}

static void
uring_end (AsyncProc *ap)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&ap->ring);

  if (sqe == NULL)
    return;
  io_uring_prep_nop (sqe);
  io_uring_sqe_set_data64 (sqe, SENTINEL_USER_DATA);
  io_uring_submit (&ap->ring);
}

/* Hand the completions now in the ring to complete_io(); TRUE if the
 * end-of-submission no-op was among them. */
static gboolean
uring_harvest (AsyncProc *ap, guint *handled)
{
  struct io_uring_cqe *cqe;
  unsigned head, seen = 0;
  gboolean ended = FALSE;
  /* Count, then read the clock: every completion handled in this round
   * was posted before @now.  One posted later (an I/O submitted and
   * completed inline meanwhile) waits for the next round rather than
   * getting a completion time before its issue time. */
  unsigned ready = io_uring_cq_ready (&ap->ring);
  gint64 now = replay_now_ns ();

  io_uring_for_each_cqe (&ap->ring, head, cqe)
    {
      if (seen == ready)
        break;
      if (cqe->user_data == SENTINEL_USER_DATA)
        ended = TRUE;
      else
        complete_io (ap, (guint) cqe->user_data, cqe->res, now);
      seen++;
    }
  io_uring_cq_advance (&ap->ring, seen);
  *handled = seen;
  return ended;
}

static void
uring_reap (AsyncProc *ap)
{
  gboolean ended = FALSE;

  while (!(ended && reaper_may_stop (ap)))
    {
      struct io_uring_cqe *cqe;
      guint handled;
      int rc = io_uring_wait_cqe (&ap->ring, &cqe);

      if (rc == -EINTR || rc == -EAGAIN)
        continue;
      if (rc < 0)
        {
          g_warning ("io_uring_wait_cqe for %s: %s", ap->proc->name, g_strerror (-rc));
          g_atomic_int_set (&ap->run->abort, 1);
          return;
        }
      ended = uring_harvest (ap, &handled) || ended;
    }
}

/* --poll: whatever has completed, without blocking.  With COOP_TASKRUN
 * the kernel leaves completions as task work and sets IORING_SQ_TASKRUN;
 * only then is a system call needed to run it. */
static guint
uring_poll (AsyncProc *ap)
{
  guint handled;

  if (io_uring_cq_ready (&ap->ring) == 0)
    {
      if (!(IO_URING_READ_ONCE (*ap->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)))
        return 0;
      io_uring_get_events (&ap->ring);
    }
  uring_harvest (ap, &handled);
  return handled;
}

/* --poll, far from the next I/O: block up to @left_ns for a completion. */
static void
uring_wait (AsyncProc *ap, gint64 left_ns)
{
  struct __kernel_timespec ts = { left_ns / 1000000000, left_ns % 1000000000 };
  struct io_uring_cqe *cqe;
  guint handled;

  if (io_uring_wait_cqe_timeout (&ap->ring, &cqe, &ts) == 0)
    uring_harvest (ap, &handled);
}
#endif

/* ---- backend: libaio ---- */

#ifdef IOSIM_HAVE_LIBAIO
static gboolean
aio_setup (AsyncProc *ap, guint depth, GError **error)
{
  int rc = io_setup ((int) depth, &ap->ctx);

  if (rc < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "io_setup (%u) for %s: %s (see /proc/sys/fs/aio-max-nr)", depth,
                   ap->proc->name, g_strerror (-rc));
      return FALSE;
    }
  ap->ctx_ready = TRUE;
  ap->iocbs = g_new0 (struct iocb, MAX (ap->proc->ios->len, 1));
  if (ap->poll)
    {
      struct aio_user_ring *ring = (struct aio_user_ring *) ap->ctx;

      /* Any other layout: io_getevents with a zero timeout instead. */
      if (ring->magic == AIO_USER_RING_MAGIC && ring->incompat_features == 0)
        ap->user_ring = ring;
    }
  return TRUE;
}

/* Submit I/Os @first .. @first + @count - 1 in as few calls as the
 * kernel allows; one it refuses completes at once with the error. */
static void
aio_submit (AsyncProc *ap, guint first, guint count)
{
  struct iocb *cbs[REPLAY_ASYNC_MAX_BATCH];
  guint done = 0;

  for (guint k = 0; k < count; k++)
    {
      const ReplayIo *io = &g_array_index (ap->proc->ios, ReplayIo, first + k);
      struct iocb *cb = &ap->iocbs[first + k];
      int fd = ap->run->fds[io->target_index];   /* the I/O's own target (--map) */

      if (io->op == TRACE_OP_WRITE)
        io_prep_pwrite (cb, fd, ap->write_buf, io->bytes, (long long) io->offset_bytes);
      else
        io_prep_pread (cb, fd, ap->read_buf, io->bytes, (long long) io->offset_bytes);
      cbs[k] = cb;
    }
  while (done < count)
    {
      int rc = io_submit (ap->ctx, (long) (count - done), cbs + done);

      if (rc > 0)
        done += (guint) rc;
      else if (rc == -EAGAIN || rc == -EINTR)
        sched_yield ();
      else
        {
          complete_io (ap, first + done, rc < 0 ? rc : -EIO, replay_now_ns ());
          done++;
        }
    }
}

/* The @n events of @events, reaped at @now (each names its iocb). */
static void
aio_complete_events (AsyncProc *ap, const struct io_event *events, int n, gint64 now)
{
  for (int k = 0; k < n; k++)
    complete_io (ap, (guint) (events[k].obj - ap->iocbs), (gint64) (long) events[k].res, now);
}

/* io_getevents: at least @min_nr events within @timeout, each completed
 * as it comes; the count, or -errno (-EINTR included).  A failure other
 * than an interruption is warned about and aborts the run. */
static int
aio_get_events (AsyncProc *ap, long min_nr, struct timespec *timeout)
{
  struct io_event events[64];
  int n = io_getevents (ap->ctx, min_nr, G_N_ELEMENTS (events), events, timeout);

  if (n < 0 && n != -EINTR)
    {
      g_warning ("io_getevents for %s: %s", ap->proc->name, g_strerror (-n));
      g_atomic_int_set (&ap->run->abort, 1);
    }
  aio_complete_events (ap, events, n, replay_now_ns ());
  return n;
}

static void
aio_reap (AsyncProc *ap)
{
  while (!reaper_may_stop (ap))
    {
      struct timespec timeout = { 0, AIO_REAP_TIMEOUT_NS };
      int n = aio_get_events (ap, 1, &timeout);

      if (n < 0 && n != -EINTR)
        return;
    }
}

/* --poll, far from the next I/O: block up to @left_ns for a completion. */
static void
aio_wait (AsyncProc *ap, gint64 left_ns)
{
  struct timespec ts = { left_ns / 1000000000, left_ns % 1000000000 };

  aio_get_events (ap, 1, &ts);
}

/* --poll: whatever has completed, without blocking, straight from the
 * ring when its layout is known. */
static guint
aio_poll (AsyncProc *ap)
{
  struct aio_user_ring *ring = ap->user_ring;
  unsigned head, tail;
  guint handled = 0;
  gint64 now;

  if (ring == NULL)
    {
      struct timespec zero = { 0, 0 };
      int n = aio_get_events (ap, 0, &zero);

      return n > 0 ? (guint) n : 0;
    }
  /* Only this thread moves head; the kernel publishes events by moving
   * tail after writing them.  The clock is read after tail, so every
   * event taken was posted before @now. */
  head = ring->head;
  tail = __atomic_load_n (&ring->tail, __ATOMIC_ACQUIRE);
  if (head == tail)
    return 0;
  now = replay_now_ns ();
  while (head != tail)
    {
      const struct io_event *ev = &ring->events[head];

      aio_complete_events (ap, ev, 1, now);
      head = (head + 1) % ring->nr;
      handled++;
    }
  __atomic_store_n (&ring->head, head, __ATOMIC_RELEASE);
  return handled;
}
#endif

/* ---- engine-independent ---- */

/* --poll: reap what has completed meanwhile. */
static void
poll_completions (AsyncProc *ap)
{
#ifdef IOSIM_HAVE_LIBURING
  if (ap->run->opts->engine == REPLAY_ENGINE_IO_URING)
    uring_poll (ap);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->run->opts->engine == REPLAY_ENGINE_LIBAIO)
    aio_poll (ap);
#endif
}

/* One turn of a busy wait: reap (--poll), and let other threads on this
 * CPU run when there are more threads than CPUs. */
static void
spin_once (AsyncProc *ap)
{
  if (ap->poll)
    poll_completions (ap);
  if (ap->run->yield_in_spin)
    sched_yield ();
}

/* --poll, far from the next I/O: wait until @wake_ns for completions in
 * the kernel (stamped as they arrive), or sleep when none is in flight,
 * so that an idle stretch of the trace costs no CPU. */
static void
block_until (AsyncProc *ap, gint64 wake_ns)
{
  gint64 left = wake_ns - replay_now_ns ();

  if (left <= 0)
    return;
  if (g_atomic_int_get (&ap->reaped) == g_atomic_int_get (&ap->submitted))
    {
      struct timespec ts = { wake_ns / 1000000000, wake_ns % 1000000000 };
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
      return;
    }
#ifdef IOSIM_HAVE_LIBURING
  if (ap->run->opts->engine == REPLAY_ENGINE_IO_URING)
    uring_wait (ap, left);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->run->opts->engine == REPLAY_ENGINE_LIBAIO)
    aio_wait (ap, left);
#endif
}

/* Until @target_ns: sleep, then spin.  With --poll: up to spin_ns before
 * it, block in the completion wait (or sleep); from there spin, reaping. */
static gboolean
wait_until (AsyncProc *ap, gint64 target_ns)
{
  gint64 spin_ns = ap->run->opts->spin_ns;

  if (!ap->poll)
    return replay_wait_until_ns (ap->run, target_ns);
  for (gint64 now = replay_now_ns (); now < target_ns; now = replay_now_ns ())
    {
      if (replay_run_stopped (ap->run))
        return FALSE;
      if (target_ns - now > spin_ns)
        block_until (ap, MIN (target_ns - spin_ns, now + POLL_MAX_BLOCK_NS));
      else
        spin_once (ap);
    }
  return TRUE;
}

/* A process slot and a slot on I/O @index's device; FALSE on stop. */
static gboolean
acquire_slots (AsyncProc *ap, guint index)
{
  ReplayRun *run = ap->run;

  if (!ap->poll)
    return replay_slots_acquire (run, io_target (ap, index), &ap->inflight, run->iodepth);
  while (!replay_slots_try_acquire (run, io_target (ap, index), &ap->inflight, run->iodepth))
    {
      if (replay_run_stopped (run))
        return FALSE;
      spin_once (ap);
    }
  return TRUE;
}

static void
backend_submit (AsyncProc *ap, guint first, guint count)
{
#ifdef IOSIM_HAVE_LIBURING
  if (ap->run->opts->engine == REPLAY_ENGINE_IO_URING)
    uring_submit (ap, first, count);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->run->opts->engine == REPLAY_ENGINE_LIBAIO)
    aio_submit (ap, first, count);
#endif
}

/* The intended time of the I/O after one intended at @prev_intended, if
 * it can join that one's submission: recorded timing, its schedule; closed
 * timing, the recorded gap when no completion has to release it (a burst
 * the trace queued together); -1 otherwise (afap, or a release to wait for). */
static gint64
batch_intended (const AsyncProc *ap, const ReplayIo *io, gint64 t0, gint64 prev_intended)
{
  switch (ap->run->plan->timing)
    {
    case REPLAY_TIMING_RECORDED:
      return t0 + io->sched_ns;
    case REPLAY_TIMING_CLOSED:
      return io->dep_index < 0 ? prev_intended + io->gap_ns : -1;
    case REPLAY_TIMING_AFAP:
    default:
      return -1;
    }
}

/* I/Os after @first (intended at @first_intended) that are due by @now
 * and have slots: submitted with it in one call, since waking for each
 * would only make them later, and each system call costs the submitter
 * tens of microseconds.  Their intended times go to their results. */
static guint
due_batch (AsyncProc *ap, guint first, gint64 t0, gint64 now, gint64 first_intended)
{
  gint64 intended = first_intended;
  guint count = 1;

  while (first + count < ap->proc->ios->len && count < REPLAY_ASYNC_MAX_BATCH)
    {
      const ReplayIo *io = &g_array_index (ap->proc->ios, ReplayIo, first + count);

      intended = batch_intended (ap, io, t0, intended);
      if (intended < 0 || intended > now
          /* one outside its target ends the batch; the next round refuses it */
          || !replay_io_inside (ap->run, io)
          || !replay_slots_try_acquire (ap->run, io_target (ap, first + count), &ap->inflight,
                                        ap->run->iodepth))
        break;
      g_array_index (ap->results, ReplayIoResult, first + count).intended_ns = intended - t0;
      count++;
    }
  return count;
}

/* Wait until I/O @index has completed (its time is stamped). */
static gboolean
wait_done (AsyncProc *ap, guint index)
{
  while (!g_atomic_int_get (&ap->done[index]))
    {
      if (replay_run_stopped (ap->run))
        return FALSE;
      spin_once (ap);
    }
  return TRUE;
}

/* Afap: the next I/O waits for the previous one (*prev_complete); closed:
 * for the one that released it in the trace, if any (*dep_complete).
 * Absolute times; FALSE when stopped. */
static gboolean
wait_release (AsyncProc *ap, guint i, gint64 t0, gint64 *prev_complete, gint64 *dep_complete)
{
  const ReplayIo *io = &g_array_index (ap->proc->ios, ReplayIo, i);
  ReplayTiming timing = ap->run->plan->timing;

  if (i == 0 || timing == REPLAY_TIMING_RECORDED)
    return TRUE;
  if (timing == REPLAY_TIMING_AFAP)
    {
      if (!wait_done (ap, i - 1))
        return FALSE;
      *prev_complete = t0 + g_array_index (ap->results, ReplayIoResult, i - 1).complete_ns;
      return TRUE;
    }
  if (io->dep_index < 0)
    return TRUE;
  if (!wait_done (ap, (guint) io->dep_index))
    return FALSE;
  *dep_complete = t0 + g_array_index (ap->results, ReplayIoResult, io->dep_index).complete_ns;
  return TRUE;
}

static void
submitter (AsyncProc *ap)
{
  ReplayRun *run = ap->run;
  /* --cpus: the submitter of process p takes entry p with --poll, 2p
   * otherwise, and its reaper 2p + 1. */
  gint64 t0 = replay_thread_start (run, ap->proc->name,
                                   (gint) (ap->poll ? ap->process : 2 * ap->process));
  gint64 prev_intended = t0, prev_complete = t0, dep_complete = t0;

  ap->t0_ns = t0;
  /* The submitter queues the process's bios (io_submit, and io_uring when
   * it issues inline): a capture records them under this thread. */
  run->tids[ap->process] = (guint32) gettid ();
  g_atomic_int_set (&ap->t0_set, 1);
  for (guint i = 0; i < ap->proc->ios->len;)
    {
      gint64 intended, issue, submitted;
      guint count;

      if (!wait_release (ap, i, t0, &prev_complete, &dep_complete))
        break;
      intended = replay_intended_abs_ns (run->plan->timing, ap->proc, i, t0, prev_intended,
                                         prev_complete, dep_complete);
      if (!replay_io_check (run, ap->process, i) || !wait_until (ap, intended)
          || !acquire_slots (ap, i))
        break;
      count = due_batch (ap, i, t0, replay_now_ns (), intended);
      issue = replay_now_ns ();
      g_array_index (ap->results, ReplayIoResult, i).intended_ns = intended - t0;
      for (guint k = i; k < i + count; k++)
        g_array_index (ap->results, ReplayIoResult, k).issue_ns = issue - t0;
      g_atomic_int_add (&ap->submitted, (gint) count);
      run->issued[ap->process] = i + count;
      backend_submit (ap, i, count);
      submitted = replay_now_ns () - t0;
      for (guint k = i; k < i + count; k++)
        g_array_index (ap->results, ReplayIoResult, k).submitted_ns = submitted;
      /* The batch's last: the next I/O's gap counts from it. */
      prev_intended = t0 + g_array_index (ap->results, ReplayIoResult, i + count - 1).intended_ns;
      i += count;
    }
  g_atomic_int_set (&ap->submit_done, 1);
  if (ap->poll)
    {
      /* In flight at the end (or at a stop) still get their completions. */
      while (g_atomic_int_get (&ap->reaped) < g_atomic_int_get (&ap->submitted)
             && !g_atomic_int_get (&run->abort))
        spin_once (ap);
      return;
    }
#ifdef IOSIM_HAVE_LIBURING
  if (run->opts->engine == REPLAY_ENGINE_IO_URING)
    uring_end (ap);
#endif
  /* Stay alive until the reaper has everything: io_uring hands requests it
   * cannot start inline (buffered reads that miss the cache) to workers
   * tied to the submitting thread, which fail with EFAULT or ECANCELED
   * once that thread has exited. */
  while (g_atomic_int_get (&ap->reaped) < g_atomic_int_get (&ap->submitted)
         && !g_atomic_int_get (&run->abort))
    g_usleep (100);
}

static void
reaper (AsyncProc *ap)
{
  /* Pinned too (--cpus, round-robin after its submitter): a reaper that
   * migrates delays completions as much as a submitter delays issues. */
  replay_thread_start (ap->run, NULL, (gint) (2 * ap->process + 1));
  /* complete_io() needs t0, which the submitter reads at the gate too. */
  while (!g_atomic_int_get (&ap->t0_set))
    g_usleep (100);
#ifdef IOSIM_HAVE_LIBURING
  if (ap->run->opts->engine == REPLAY_ENGINE_IO_URING)
    uring_reap (ap);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->run->opts->engine == REPLAY_ENGINE_LIBAIO)
    aio_reap (ap);
#endif
}

static gpointer
async_thread_main (gpointer data)
{
  AsyncThread *t = data;

  if (t->reaper)
    reaper (t->ap);
  else
    submitter (t->ap);
  g_atomic_int_inc (&t->ap->run->finished);
  return NULL;
}

static gboolean
proc_setup (AsyncProc *ap, GError **error)
{
  guint32 max_bytes = 512;

  for (guint i = 0; i < ap->proc->ios->len; i++)
    max_bytes = MAX (max_bytes, g_array_index (ap->proc->ios, ReplayIo, i).bytes);
  if (posix_memalign ((void **) &ap->read_buf, ap->run->align_bytes, max_bytes) != 0
      || posix_memalign ((void **) &ap->write_buf, ap->run->align_bytes, max_bytes) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot allocate %u bytes of I/O buffer for %s", max_bytes, ap->proc->name);
      return FALSE;
    }
  memset (ap->read_buf, 0, max_bytes);
  memset (ap->write_buf, 0x5a, max_bytes);
#ifdef IOSIM_HAVE_LIBURING
  if (ap->run->opts->engine == REPLAY_ENGINE_IO_URING)
    return uring_setup (ap, ap->run->iodepth, error);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->run->opts->engine == REPLAY_ENGINE_LIBAIO)
    return aio_setup (ap, ap->run->iodepth, error);
#endif
  return replay_engine_available (ap->run->opts->engine, error);
}

static void
proc_clear (AsyncProc *ap)
{
#ifdef IOSIM_HAVE_LIBURING
  if (ap->ring_ready)
    io_uring_queue_exit (&ap->ring);
#endif
#ifdef IOSIM_HAVE_LIBAIO
  if (ap->ctx_ready)
    io_destroy (ap->ctx);
  g_free (ap->iocbs);
#endif
  free (ap->read_buf);
  free (ap->write_buf);
  g_free (ap->done);
}

gboolean
replay_engine_run_async (ReplayRun *run, GError **error)
{
  guint n = run->plan->processes->len;
  g_autofree AsyncProc *procs = g_new0 (AsyncProc, n);
  g_autofree AsyncThread *threads = g_new0 (AsyncThread, 2 * n);
  guint per_process = run->opts->poll ? 1 : 2;
  gboolean ok = TRUE;

  for (guint p = 0; p < n && ok; p++)
    {
      procs[p].run = run;
      procs[p].process = p;
      procs[p].poll = run->opts->poll;
      procs[p].proc = g_ptr_array_index (run->plan->processes, p);
      procs[p].results = g_ptr_array_index (run->io_results, p);
      procs[p].done = g_new0 (gint, MAX (procs[p].proc->ios->len, 1));
      ok = proc_setup (&procs[p], error);
    }
  for (guint p = 0; p < n; p++)
    {
      threads[per_process * p] = (AsyncThread) { &procs[p], FALSE };
      if (per_process == 2)
        threads[2 * p + 1] = (AsyncThread) { &procs[p], TRUE };
    }
  if (ok)
    ok = replay_threads_run (run, per_process * n, async_thread_main, threads,
                             sizeof (AsyncThread), error);
  for (guint p = 0; p < n; p++)
    proc_clear (&procs[p]);
  return ok;
}
