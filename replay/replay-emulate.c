/* replay-emulate.c — `iosim emulate` (see replay-emulate.h): the FUSE
 * server, the model's queue, the completion schedule, the loop device and
 * the emulator's self-measurement.
 *
 * Threads:
 *   receiver   reads /dev/fuse (fuse_session_receive_buf), and for each
 *              READ/WRITE stamps the arrival, computes the modelled start
 *              and end (FIFO over `parallelism` servers, as sim-device.c
 *              serves), copies the data (pread/pwrite on the backing file)
 *              and hands the request to the completer.  The kernel does
 *              not wait for a reply before sending the next request, so
 *              one receiver sees the full concurrency.
 *   completer  keeps the requests in a heap by modelled end, sleeps until
 *              spin_ns before the earliest, spins to it and replies
 *              (fuse_reply_buf / fuse_reply_write are thread-safe).
 *   caller     attaches the loop device, waits for a stop, tears down.
 */
#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

#include "replay/replay-emulate.h"
#include "sim/sim-json.h"
#include "sim/sim-output.h"
#include "replay/replay-report-private.h"
#include "replay/replay-safety.h"
#include "models/dev/dev.h"
#include "sim/sim-units.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Largest FUSE request asked for: the kernel's FUSE_MAX_MAX_PAGES (256
 * pages, fs/fuse/fuse_i.h; libfuse derives max_pages from max_write). */
#define EMU_MAX_IO_BYTES (1u << 20)
/* O_DIRECT on the backing file: buffers aligned to 4 KiB (any logical
 * block size), offsets and sizes of 512-byte sectors, which file systems on
 * 512-byte devices take (ext4 with 1 KiB blocks writes 1 KiB-aligned data);
 * where the file system wants more, the pwrite fails with EINVAL and the
 * request goes through the page cache. */
#define EMU_DIO_ALIGN 4096u
#define EMU_DIO_SECTOR 512u
/* FUSE async direct I/O goes through the kernel's background queue
 * (fs/fuse/file.c fuse_async_req_send -> fuse_simple_background), of
 * max_background requests (default 12, fs/fuse/inode.c
 * FUSE_DEFAULT_MAX_BACKGROUND).  Above the loop driver's 128 tags
 * (drivers/block/loop.c hw_queue_depth) times its splits, so that FUSE adds
 * no hidden queue and the depth the emulator sees is the kernel's. */
#define EMU_MAX_BACKGROUND 512
#define EMU_CONGESTION_THRESHOLD 384
/* The emulator's time is what decides; attributes never change. */
#define EMU_ATTR_TIMEOUT_S 3600.0
#define EMU_FILE_INO 2
/* Default spin before a reply is due.  A timed wait of a SCHED_FIFO
 * thread wakes 20-80 us late on an idle VM, but up to ~1 ms late on a busy
 * one with the kernel's default CONFIG_PREEMPT_NONE (the CPU is given up
 * only at the running task's next cond_resched): measured here with a
 * 200 us spin, 1 reply in 100 was 0.8-1.1 ms late. */
#define EMU_DEFAULT_SPIN_NS (500 * 1000)
/* Route probes at start: 4 KiB O_DIRECT reads of the device's middle
 * (blkid and udev read its start and end). */
#define EMU_ROUTE_PROBES 31
#define EMU_ROUTE_PROBE_BYTES 4096
/* Apart, so that the CPUs idle between them as they do between a slow
 * device's requests: back to back the route measured 18-37 us, one at a
 * time every 27 ms ~100 us (tracefs: block_rq_issue to the arrival). */
#define EMU_ROUTE_PROBE_GAP_US 5000
/* The completer's nap after each reply (let_completions_run). */
#define EMU_COMPLETION_NAP_NS 1000
/* Replies remembered until their completion is read from the trace. */
#define EMU_REPLIED_RING 256
/* Size classes (log2 of the bytes) of the reply-cost estimate. */
#define EMU_COST_CLASSES 32
#define EMU_DEPTH_HIST 1024
#define EMU_INITIAL_SLOTS 256
/* Interrupting the receiver: every 1 ms for this long, then every 10 ms. */
#define EMU_RX_STOP_WAIT_US (G_USEC_PER_SEC / 10)

typedef enum { EMU_OP_READ, EMU_OP_WRITE, EMU_OP_FLUSH, EMU_N_OPS } EmuOp;
static const char *const emu_op_names[EMU_N_OPS] = { "read", "write", "flush" };

/* A request between arrival and reply; slots are reused (free list). */
typedef struct _EmuSlot {
  struct _EmuSlot *next_free;
  fuse_req_t       req;
  EmuOp            op;
  int              err;             /* errno of the data copy, 0 if fine */
  guint64          offset_bytes;
  guint32          bytes;           /* asked for */
  guint32          done_bytes;      /* copied */
  guint32          depth;           /* in flight at arrival, this one included */
  gint64           arrival_ns;      /* model time: CLOCK_MONOTONIC - t0 */
  gint64           issue_ns;        /* the kernel's block_rq_issue, model time; -1: unknown */
  gint64           start_ns;
  gint64           end_ns;
  gint64           ready_ns;        /* the data copy was done */
  gboolean         probe;           /* a route probe: answered at once, not recorded */
  char            *buf;             /* the data, aligned for O_DIRECT (EMU_DIO_ALIGN) */
  gsize            buf_bytes;
} EmuSlot;

/* A reply whose kernel completion has not been read yet. */
typedef struct {
  guint64 sector;
  gint64  reply_abs_ns;             /* the reply's write returned; 0: slot unused */
  guint   cost_class;
} EmuReplied;

/* What is kept per request for the statistics. */
typedef struct {
  gint64  arrival_ns, start_ns, end_ns;
  gint64  ready_ns;                 /* the data copy was done */
  gint64  send_ns;                  /* the reply's write to /dev/fuse began */
  gint64  reply_ns;                 /* it returned: the kernel completed the request */
  guint64 offset_bytes;
  guint32 bytes;
  guint32 depth;
  guint8  op;
} EmuRecord;

struct _ReplayEmulator {
  ReplayEmulateOptions opts;
  char        *model_arg, *backing_arg, *journal_dir;
  DevModel    *model;
  char        *dir, *mnt, *file, *backing_path;
  gboolean     temp_backing;
  ReplayJournal *journal;
  int          backing_fd;
  int          backing_dio_fd;      /* O_DIRECT on the same file; -1: not supported */
  guint64      size_bytes;

  struct fuse_session *se;
  gboolean     mounted;
  pthread_t    rx_thread, done_thread;
  gboolean     rx_started, done_started;
  gint         rx_done;             /* atomic */
  int          rx_error;

  char        *loop_path;
  int          loop_fd;
  gboolean     loop_dio;

  gint64       t0_ns;
  gint64       spin_ns;
  /* The route from a submitting system call to this process (loop
   * worker, FUSE queue, the receiver's wakeup): a request's modelled
   * start is its arrival minus this, so that the model's clock runs from
   * when the kernel sent the request rather than when it reached us.
   * Measured at start (route probes) unless given. */
  gint64       route_ns;
  gboolean     route_measured;
  char        *route_source;        /* what the route was timed from */
  /* Receiver only: the kernel's block_rq_issue of each request, read
   * live, so that its modelled time starts at its own issue (NULL: the
   * route estimate for every request). */
  ReplayEmulateRoute *issues;
  guint64      timed_from_issue, timed_from_route;
  gint         probing;             /* atomic: requests now are route probes */
  gint64       probe_arrival_abs_ns;/* under lock: the last probe's arrival */
  /* Completer only: what a reply's write to /dev/fuse takes, by size
   * class (EWMA, ns), so that it is sent that much before the modelled
   * end and the kernel has the completion at the end: a 512 KiB read's
   * reply copies the data and takes ~300 us here. */
  gint64       reply_cost_ns[EMU_COST_CLASSES];
  /* Under lock: from a reply's return to the kernel's block_rq_complete
   * of it (the softirq's path), by size class (EWMA, ns), learned from the
   * live trace: the reply goes that much earlier again.  The last replies
   * wait in @replied for their completion to be read. */
  gint64       complete_lag_ns[EMU_COST_CLASSES];
  EmuReplied   replied[EMU_REPLIED_RING];
  guint        replied_next;

  /* The model's queue and the completer's heap, under lock. */
  pthread_mutex_t lock;
  pthread_cond_t  cond;
  gint64      *server_free_ns;
  guint        parallelism;
  GPtrArray   *heap;                /* EmuSlot *, min-heap by end_ns */
  EmuSlot     *free_slots;
  GPtrArray   *all_slots;
  guint        in_flight;
  gint         stopping;           /* atomic; also read while spinning */

  /* Statistics: arrivals (receiver), records (completer). */
  GArray      *records;             /* EmuRecord */
  guint64      depth_hist[EMU_DEPTH_HIST + 1];
  guint        max_depth;
  GHashTable  *sizes;               /* request bytes -> count */
  guint64      count[EMU_N_OPS], bytes[EMU_N_OPS];
  /* What the kernel negotiated (FUSE_INIT). */
  guint        conn_max_write, conn_max_read, conn_max_background;
  gboolean     conn_async_dio;
};

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static void
emu_log (ReplayEmulator *emu, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
emu_log (ReplayEmulator *emu, const char *format, ...)
{
  va_list ap;

  if (emu->opts.log == NULL)
    return;
  va_start (ap, format);
  fputs ("iosim emulate: ", emu->opts.log);
  vfprintf (emu->opts.log, format, ap);
  fputc ('\n', emu->opts.log);
  va_end (ap);
}

/* ---- the completer's heap (by modelled end, then arrival) ---- */

static gboolean
slot_before (const EmuSlot *a, const EmuSlot *b)
{
  return a->end_ns < b->end_ns || (a->end_ns == b->end_ns && a->arrival_ns < b->arrival_ns);
}

static void
heap_push (GPtrArray *h, EmuSlot *s)
{
  guint i = h->len;

  g_ptr_array_add (h, s);
  while (i > 0 && slot_before (s, h->pdata[(i - 1) / 2]))
    {
      h->pdata[i] = h->pdata[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  h->pdata[i] = s;
}

static EmuSlot *
heap_pop (GPtrArray *h)
{
  EmuSlot *top = h->pdata[0];
  EmuSlot *last = h->pdata[h->len - 1];
  guint i = 0, n = h->len - 1;

  g_ptr_array_set_size (h, n);
  if (n == 0)
    return top;
  for (;;)
    {
      guint c = 2 * i + 1;
      if (c >= n)
        break;
      if (c + 1 < n && slot_before (h->pdata[c + 1], h->pdata[c]))
        c++;
      if (!slot_before (h->pdata[c], last))
        break;
      h->pdata[i] = h->pdata[c];
      i = c;
    }
  h->pdata[i] = last;
  return top;
}

/* ---- slots ---- */

static EmuSlot *
slot_get (ReplayEmulator *emu)
{
  EmuSlot *s = emu->free_slots;

  if (s != NULL)
    emu->free_slots = s->next_free;
  else
    {
      s = g_new0 (EmuSlot, 1);
      g_ptr_array_add (emu->all_slots, s);
    }
  s->next_free = NULL;
  return s;
}

static void
slot_free (gpointer data)
{
  EmuSlot *s = data;

  free (s->buf);
  g_free (s);
}

/* ---- the model's queue ---- */

/* Called in arrival order: the request starts when a server frees (FIFO
 * among waiting requests, as sim/sim-device.c), and takes what the model
 * says from then.  Start times are non-decreasing, so the model's state
 * (the head) moves in the order it serves.  Under lock. */
static void
model_schedule (ReplayEmulator *emu, EmuSlot *s)
{
  guint best = 0;
  SimTime service;

  for (guint i = 1; i < emu->parallelism; i++)
    if (emu->server_free_ns[i] < emu->server_free_ns[best])
      best = i;
  s->start_ns = MAX (s->issue_ns >= 0 ? s->issue_ns : s->arrival_ns - emu->route_ns,
                     emu->server_free_ns[best]);
  service = dev_model_service_time (emu->model, s->op == EMU_OP_WRITE ? SIM_OP_WRITE : SIM_OP_READ,
                                    s->offset_bytes / 512, (s->bytes + 511) / 512, s->start_ns);
  s->end_ns = s->start_ns + MAX (service, 0);
  emu->server_free_ns[best] = s->end_ns;
}

/* Under lock (completer). */
static void
remember_reply (ReplayEmulator *emu, const EmuSlot *s, gint64 reply_abs_ns)
{
  EmuReplied *r = &emu->replied[emu->replied_next];

  r->sector = s->offset_bytes / 512;
  r->reply_abs_ns = reply_abs_ns;
  r->cost_class = g_bit_storage (s->bytes);
  emu->replied_next = (emu->replied_next + 1) % EMU_REPLIED_RING;
}

/* Under lock (receiver, after the trace was read): each new completion
 * of a remembered reply teaches its class's lag.  Lags above a
 * millisecond are a preemption of ksoftirqd, not its path: left out. */
static void
learn_complete_lags (ReplayEmulator *emu)
{
  guint n;
  const ReplayEmulateCompletion *c = replay_emulate_route_new_completions (emu->issues, &n);

  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < EMU_REPLIED_RING; k++)
      {
        EmuReplied *r = &emu->replied[k];
        gint64 lag = c[i].complete_ns - r->reply_abs_ns;
        gint64 *l;

        if (r->reply_abs_ns == 0 || r->sector != c[i].sector || lag < 0)
          continue;
        r->reply_abs_ns = 0;
        if (lag > 1000 * 1000)
          break;
        l = &emu->complete_lag_ns[r->cost_class];
        *l = *l == 0 ? lag : *l + (lag - *l) / 8;
        break;
      }
}

static void
count_arrival (ReplayEmulator *emu, EmuSlot *s)
{
  gpointer key = GUINT_TO_POINTER (s->bytes);

  emu->count[s->op]++;
  emu->bytes[s->op] += s->bytes;
  s->depth = ++emu->in_flight;
  emu->depth_hist[MIN (s->depth, EMU_DEPTH_HIST)]++;
  emu->max_depth = MAX (emu->max_depth, s->depth);
  if (s->op != EMU_OP_FLUSH)
    g_hash_table_insert (emu->sizes, key,
                         GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (emu->sizes, key))
                                           + 1));
}

/* @s's buffer holds at least @bytes, aligned for O_DIRECT. */
static void
slot_reserve (EmuSlot *s, gsize bytes)
{
  if (s->buf_bytes >= bytes)
    return;
  free (s->buf);
  if (posix_memalign ((void **) &s->buf, EMU_DIO_ALIGN, bytes) != 0)
    g_error ("iosim emulate: out of memory for a %" G_GSIZE_FORMAT "-byte buffer", bytes);
  s->buf_bytes = bytes;
}

/* Move the data of @s between its buffer (reads) or @wbuf (writes) and the
 * backing file: through O_DIRECT where the file and the request allow it,
 * else through the page cache. */
static ssize_t
backing_io (ReplayEmulator *emu, EmuSlot *s, EmuOp op, guint64 offset, gsize bytes,
            const char *wbuf)
{
  if (emu->backing_dio_fd >= 0 && offset % EMU_DIO_SECTOR == 0 && bytes % EMU_DIO_SECTOR == 0)
    {
      ssize_t n;
      if (op == EMU_OP_WRITE)
        memcpy (s->buf, wbuf, bytes);
      n = op == EMU_OP_READ ? pread (emu->backing_dio_fd, s->buf, bytes, (off_t) offset)
                            : pwrite (emu->backing_dio_fd, s->buf, bytes, (off_t) offset);
      if (n >= 0 || errno != EINVAL)
        return n;
    }
  return op == EMU_OP_READ ? pread (emu->backing_fd, s->buf, bytes, (off_t) offset)
                           : pwrite (emu->backing_fd, wbuf, bytes, (off_t) offset);
}

/* TRUE when [offset, offset + bytes) of the backing file holds no data:
 * zeros without reading (a fresh device is all hole, and reading holes
 * through the page cache cost 12-15 ms per 8 MiB of readahead here). */
static gboolean
backing_hole (ReplayEmulator *emu, guint64 offset, gsize bytes)
{
  off_t data = lseek (emu->backing_fd, (off_t) offset, SEEK_DATA);

  if (data < 0)
    return errno == ENXIO;   /* no data from offset to the end */
  return (guint64) data >= offset + bytes;
}

/* A READ or WRITE arrived: time it, copy the data, queue the reply. */
static void
emu_submit (ReplayEmulator *emu, fuse_req_t req, EmuOp op, guint64 offset, gsize bytes,
            const char *wbuf)
{
  EmuSlot *s;
  ssize_t n;
  gint64 arrival_abs_ns = now_ns (), issue_abs_ns = -1;
  gboolean issued = !g_atomic_int_get (&emu->probing)
                    && replay_emulate_route_issue_of (emu->issues, offset / 512, &issue_abs_ns);

  pthread_mutex_lock (&emu->lock);
  if (issued || emu->issues != NULL)
    learn_complete_lags (emu);
  s = slot_get (emu);
  s->req = req;
  s->op = op;
  s->err = 0;
  s->offset_bytes = offset;
  s->bytes = (guint32) bytes;
  s->arrival_ns = arrival_abs_ns - emu->t0_ns;
  /* Issued after it arrived is another request's (a stale match). */
  s->issue_ns = issued && issue_abs_ns <= arrival_abs_ns ? issue_abs_ns - emu->t0_ns : -1;
  s->probe = g_atomic_int_get (&emu->probing);
  if (s->probe)
    {
      /* Answered at once and kept out of the model and the counts. */
      emu->probe_arrival_abs_ns = s->arrival_ns + emu->t0_ns;
      s->start_ns = s->end_ns = s->arrival_ns;
      emu->in_flight++;
    }
  else
    {
      count_arrival (emu, s);
      model_schedule (emu, s);
      if (s->issue_ns >= 0)
        emu->timed_from_issue++;
      else
        emu->timed_from_route++;
    }
  pthread_mutex_unlock (&emu->lock);

  /* The data move now, before the modelled end: off the critical path. */
  slot_reserve (s, bytes);
  if (op == EMU_OP_READ && backing_hole (emu, offset, bytes))
    {
      memset (s->buf, 0, bytes);
      n = (ssize_t) bytes;
    }
  else
    n = backing_io (emu, s, op, offset, bytes, wbuf);
  s->err = n < 0 ? errno : 0;
  s->done_bytes = n < 0 ? 0 : (guint32) n;
  /* Past the backing file's end (a shorter --backing): zeros, as a hole. */
  if (op == EMU_OP_READ && n >= 0 && (gsize) n < bytes)
    {
      memset (s->buf + n, 0, bytes - (gsize) n);
      s->done_bytes = (guint32) bytes;
    }

  s->ready_ns = now_ns () - emu->t0_ns;
  pthread_mutex_lock (&emu->lock);
  heap_push (emu->heap, s);
  pthread_cond_signal (&emu->cond);
  pthread_mutex_unlock (&emu->lock);
}

static void
reply (EmuSlot *s)
{
  if (s->err != 0)
    fuse_reply_err (s->req, s->err);
  else if (s->op == EMU_OP_READ)
    fuse_reply_buf (s->req, s->buf, s->done_bytes);
  else
    fuse_reply_write (s->req, s->done_bytes);
}

static void
record (ReplayEmulator *emu, const EmuSlot *s, gint64 send_ns, gint64 reply_ns)
{
  EmuRecord r = { s->arrival_ns, s->start_ns, s->end_ns, s->ready_ns, send_ns, reply_ns,
                  s->offset_bytes, s->bytes, s->depth, (guint8) s->op };

  g_array_append_val (emu->records, r);
}

/* EWMA with weight 1/8 (as TCP's srtt); a first sample is taken whole.
 * Costs above a millisecond are a preemption, not the copy: left out. */
static void
learn_reply_cost (ReplayEmulator *emu, const EmuSlot *s, gint64 cost_ns)
{
  gint64 *c = &emu->reply_cost_ns[g_bit_storage (s->bytes)];

  if (cost_ns > 1000 * 1000)
    return;
  *c = *c == 0 ? cost_ns : *c + (cost_ns - *c) / 8;
}

static void
timespec_at (struct timespec *ts, gint64 abs_ns)
{
  ts->tv_sec = abs_ns / 1000000000;
  ts->tv_nsec = abs_ns % 1000000000;
}

/* The emulator's threads run SCHED_FIFO when allowed (root): on a busy
 * machine a CFS thread waits milliseconds for a CPU, which would become
 * the device's timing error.  Each spins at most spin_ns per reply, and
 * the kernel's RT throttling (sched_rt_runtime_us) bounds the rest. */
#define EMU_RT_PRIORITY 10

static void
thread_realtime (void)
{
  struct sched_param sp = { .sched_priority = EMU_RT_PRIORITY };
  sigset_t stop_signals;

  /* Stop signals go to the caller's thread, whose wait they end at once. */
  sigemptyset (&stop_signals);
  sigaddset (&stop_signals, SIGINT);
  sigaddset (&stop_signals, SIGTERM);
  sigaddset (&stop_signals, SIGHUP);
  pthread_sigmask (SIG_BLOCK, &stop_signals, NULL);

  /* Timed waits end when asked, not up to 50 us later (timer slack). */
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp);
}

/* A moment off the CPU after a reply.  The request's completion
 * (blk_mq_complete_request, raised from the reply's write) runs in
 * ksoftirqd, a CFS thread that this SCHED_FIFO thread, spinning towards
 * its next reply, would starve: with four requests queued the kernel's
 * block_rq_complete came 0.4-0.8 ms after the reply (p90), and a fit of
 * the trace saw 74 us + 9.5 ns/B where the emulator served 300 us + 5 ns/B. */
static void
let_completions_run (void)
{
  const struct timespec nap = { 0, EMU_COMPLETION_NAP_NS };

  nanosleep (&nap, NULL);
}

/* The completer: wait for the earliest modelled end, reply at it. */
static void *
completer_main (gpointer data)
{
  ReplayEmulator *emu = data;

  thread_realtime ();
  pthread_mutex_lock (&emu->lock);
  for (;;)
    {
      EmuSlot *s;
      gint64 target;
      gboolean queued_behind;
      gint64 reply_abs_ns;

      if (emu->heap->len == 0)
        {
          if (g_atomic_int_get (&emu->stopping))
            break;
          pthread_cond_wait (&emu->cond, &emu->lock);
          continue;
        }
      s = emu->heap->pdata[0];
      target = emu->t0_ns + s->end_ns - emu->reply_cost_ns[g_bit_storage (s->bytes)]
               - emu->complete_lag_ns[g_bit_storage (s->bytes)];
      /* An earlier end may arrive meanwhile (parallelism > 1): wait on
       * the condition, not in a sleep, until the spin window. */
      if (!g_atomic_int_get (&emu->stopping) && target - now_ns () > emu->spin_ns)
        {
          struct timespec ts;
          timespec_at (&ts, target - emu->spin_ns);
          pthread_cond_timedwait (&emu->cond, &emu->lock, &ts);
          continue;
        }
      heap_pop (emu->heap);
      /* With nothing queued the completer blocks next anyway. */
      queued_behind = emu->heap->len > 0;
      pthread_mutex_unlock (&emu->lock);
      gint64 send;
      while ((send = now_ns ()) < target && !g_atomic_int_get (&emu->stopping))
        ;
      reply (s);
      reply_abs_ns = now_ns ();
      learn_reply_cost (emu, s, reply_abs_ns - send);
      if (!s->probe)
        record (emu, s, send - emu->t0_ns, reply_abs_ns - emu->t0_ns);
      if (queued_behind)
        let_completions_run ();
      pthread_mutex_lock (&emu->lock);
      if (!s->probe && s->op != EMU_OP_FLUSH)
        remember_reply (emu, s, reply_abs_ns);
      emu->in_flight--;
      s->next_free = emu->free_slots;
      emu->free_slots = s;
    }
  pthread_mutex_unlock (&emu->lock);
  return NULL;
}

/* ---- FUSE operations: one directory holding one file ---- */

static void
file_attr (ReplayEmulator *emu, fuse_ino_t ino, struct stat *st)
{
  memset (st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_uid = geteuid ();
  st->st_gid = getegid ();
  if (ino == FUSE_ROOT_ID)
    {
      st->st_mode = S_IFDIR | 0700;
      st->st_nlink = 2;
      return;
    }
  st->st_mode = S_IFREG | 0600;
  st->st_nlink = 1;
  st->st_size = (off_t) emu->size_bytes;
  st->st_blksize = 4096;
  st->st_blocks = (blkcnt_t) (emu->size_bytes / 512);
}

static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  ReplayEmulator *emu = userdata;

  conn->max_write = EMU_MAX_IO_BYTES;
  /* Must equal the max_read mount option (libfuse checks). */
  conn->max_read = EMU_MAX_IO_BYTES;
  conn->max_readahead = EMU_MAX_IO_BYTES;
  conn->max_background = EMU_MAX_BACKGROUND;
  conn->congestion_threshold = EMU_CONGESTION_THRESHOLD;
  if (conn->capable & FUSE_CAP_ASYNC_DIO)
    conn->want |= FUSE_CAP_ASYNC_DIO;
  /* Replies are memory buffers; splice would only add a pipe. */
  conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
  emu->conn_max_write = conn->max_write;
  emu->conn_max_read = conn->max_read;
  emu->conn_max_background = conn->max_background;
  emu->conn_async_dio = (conn->want & FUSE_CAP_ASYNC_DIO) != 0;
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  ReplayEmulator *emu = fuse_req_userdata (req);
  struct fuse_entry_param e;

  if (parent != FUSE_ROOT_ID || strcmp (name, REPLAY_EMULATE_FILE_NAME) != 0)
    {
      fuse_reply_err (req, ENOENT);
      return;
    }
  memset (&e, 0, sizeof e);
  e.ino = EMU_FILE_INO;
  e.attr_timeout = EMU_ATTR_TIMEOUT_S;
  e.entry_timeout = EMU_ATTR_TIMEOUT_S;
  file_attr (emu, EMU_FILE_INO, &e.attr);
  fuse_reply_entry (req, &e);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);
  struct stat st;

  if (ino != FUSE_ROOT_ID && ino != EMU_FILE_INO)
    {
      fuse_reply_err (req, ENOENT);
      return;
    }
  file_attr (emu, ino, &st);
  fuse_reply_attr (req, &st, EMU_ATTR_TIMEOUT_S);
}

/* The size is the device's: truncation is refused, times are ignored. */
static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
            struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);

  if ((to_set & FUSE_SET_ATTR_SIZE) && (guint64) attr->st_size != emu->size_bytes)
    {
      fuse_reply_err (req, EPERM);
      return;
    }
  op_getattr (req, ino, fi);
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  if (ino != EMU_FILE_INO)
    {
      fuse_reply_err (req, EISDIR);
      return;
    }
  /* Not FOPEN_DIRECT_IO: O_DIRECT opens (the loop driver's direct I/O)
   * then take the kernel's direct_IO path, and buffered opens the page
   * cache, as on any file. */
  fi->direct_io = 0;
  fi->keep_cache = 1;
  fuse_reply_open (req, fi);
}

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);

  if ((guint64) off >= emu->size_bytes)
    {
      fuse_reply_buf (req, NULL, 0);
      return;
    }
  size = MIN (size, emu->size_bytes - (guint64) off);
  emu_submit (emu, req, EMU_OP_READ, (guint64) off, size, NULL);
}

static void
op_write (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
          struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);

  if ((guint64) off + size > emu->size_bytes)
    {
      fuse_reply_err (req, ENOSPC);
      return;
    }
  emu_submit (emu, req, EMU_OP_WRITE, (guint64) off, size, buf);
}

/* A cache flush costs nothing in the models (no flush op in DevOps); the
 * data are in the backing file already (page cache of the host). */
static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);

  pthread_mutex_lock (&emu->lock);
  emu->count[EMU_OP_FLUSH]++;
  pthread_mutex_unlock (&emu->lock);
  fuse_reply_err (req, 0);
}

static void
op_flush (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  fuse_reply_err (req, 0);
}

static void
op_release (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  fuse_reply_err (req, 0);
}

static void
op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  ReplayEmulator *emu = fuse_req_userdata (req);
  const char *const names[] = { ".", "..", REPLAY_EMULATE_FILE_NAME };
  const fuse_ino_t inos[] = { FUSE_ROOT_ID, FUSE_ROOT_ID, EMU_FILE_INO };
  char buf[512];
  size_t used = 0;

  if (ino != FUSE_ROOT_ID)
    {
      fuse_reply_err (req, ENOTDIR);
      return;
    }
  for (off_t i = off; i < (off_t) G_N_ELEMENTS (names); i++)
    {
      struct stat st;
      size_t n;

      file_attr (emu, inos[i], &st);
      n = fuse_add_direntry (req, buf + used, MIN (size, sizeof buf) - used, names[i], &st, i + 1);
      if (n > MIN (size, sizeof buf) - used)
        break;
      used += n;
    }
  fuse_reply_buf (req, buf, used);
}

static const struct fuse_lowlevel_ops emu_ops = {
  .init = op_init,
  .lookup = op_lookup,
  .getattr = op_getattr,
  .setattr = op_setattr,
  .open = op_open,
  .read = op_read,
  .write = op_write,
  .flush = op_flush,
  .release = op_release,
  .fsync = op_fsync,
  .readdir = op_readdir,
};

static void *
receiver_main (gpointer data)
{
  ReplayEmulator *emu = data;
  struct fuse_buf fbuf = { .mem = NULL };

  thread_realtime ();
  while (!fuse_session_exited (emu->se))
    {
      int res = fuse_session_receive_buf (emu->se, &fbuf);

      if (res == -EINTR)
        continue;
      if (res <= 0)
        {
          emu->rx_error = res < 0 ? -res : 0;
          break;
        }
      fuse_session_process_buf (emu->se, &fbuf);
    }
  free (fbuf.mem);
  g_atomic_int_set (&emu->rx_done, 1);
  return NULL;
}

/* Interrupts the receiver's read of /dev/fuse when it must stop. */
static void
on_wake_signal (int signo)
{
}

/* ---- start ---- */

static DevModel *
load_model (const char *model, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_auto (GStrv) dirs = dev_model_default_search_dirs ();
  g_autofree char *here = g_build_filename (".", model, NULL);

  /* A command-line FILE.ini is a path from the current directory, as
   * for any other tool, before it is a NAME in the model directories. */
  if (g_str_has_suffix (model, ".ini") && !g_path_is_absolute (model)
      && g_file_test (here, G_FILE_TEST_IS_REGULAR))
    model = here;
  g_key_file_set_string (kf, "device emulated", "model", model);
  return dev_model_load ("emulated", kf, "device emulated", (const char *const *) dirs, NULL,
                         error);
}

static gboolean
open_backing (ReplayEmulator *emu, GError **error)
{
  struct stat st;

  emu->temp_backing = emu->backing_arg == NULL;
  emu->backing_path = emu->temp_backing
                      ? g_build_filename (emu->dir, REPLAY_EMULATE_BACKING_NAME, NULL)
                      : g_strdup (emu->backing_arg);
  emu->backing_fd = open (emu->backing_path,
                          O_RDWR | O_CREAT | O_CLOEXEC | (emu->temp_backing ? O_EXCL : 0), 0600);
  if (emu->backing_fd < 0 || fstat (emu->backing_fd, &st) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "backing file %s: %s", emu->backing_path,
                   g_strerror (errno));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "backing file %s is not a regular file",
                   emu->backing_path);
      return FALSE;
    }
  /* The kernel's readahead would read megabytes of it at once, in one
   * request's copy time (the device's readahead is the model's). */
  posix_fadvise (emu->backing_fd, 0, 0, POSIX_FADV_RANDOM);
  /* Sparse: only what is written takes space.  A longer file is kept. */
  if ((guint64) st.st_size < emu->size_bytes && ftruncate (emu->backing_fd, (off_t) emu->size_bytes) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot size %s to %" G_GUINT64_FORMAT
                   " bytes: %s", emu->backing_path, emu->size_bytes, g_strerror (errno));
      return FALSE;
    }
  /* The data go around the page cache: buffered, the writes served would
   * be dirty pages of the backing file's disk, counted against the same
   * dirty limits as the workload's own (vm.dirty_bytes is global), and
   * their writeback would throttle the writer under test (measured: a
   * buffered writer's pauses of 16-684 ms, against 42-204 ms with the
   * backing on tmpfs, whose pages are not dirty-accounted). */
  emu->backing_dio_fd = open (emu->backing_path, O_RDWR | O_DIRECT | O_CLOEXEC);
  if (emu->backing_dio_fd < 0)
    fprintf (stderr, "iosim emulate: warning: %s: no O_DIRECT (%s): the data written go through "
             "the page cache, whose dirty pages count against the workload's dirty limits\n",
             emu->backing_path, g_strerror (errno));
  return TRUE;
}

static gboolean
start_fuse (ReplayEmulator *emu, GError **error)
{
  g_autofree char *opts = g_strdup_printf ("fsname=iosim-emulate,subtype=iosim-emulate,max_read=%u",
                                           EMU_MAX_IO_BYTES);
  char *argv[] = { (char *) "iosim-emulate", (char *) "-o", opts, NULL };
  struct fuse_args args = FUSE_ARGS_INIT (3, argv);
  struct sigaction sa;

  if (mkdir (emu->mnt, 0700) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot create %s: %s", emu->mnt,
                   g_strerror (errno));
      return FALSE;
    }
  emu->se = fuse_session_new (&args, &emu_ops, sizeof emu_ops, emu);
  fuse_opt_free_args (&args);
  if (emu->se == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot create the FUSE session "
                   "(libfuse said why above)");
      return FALSE;
    }
  if (fuse_session_mount (emu->se, emu->mnt) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot mount FUSE at %s (is /dev/fuse "
                   "there and are we root?)", emu->mnt);
      return FALSE;
    }
  emu->mounted = TRUE;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_wake_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGUSR1, &sa, NULL);
  emu->t0_ns = now_ns ();
  if (pthread_create (&emu->done_thread, NULL, completer_main, emu) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot start a thread");
      return FALSE;
    }
  emu->done_started = TRUE;
  if (pthread_create (&emu->rx_thread, NULL, receiver_main, emu) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "cannot start a thread");
      return FALSE;
    }
  emu->rx_started = TRUE;
  return TRUE;
}

/* One try at /dev/loopN: journal it, then LOOP_CONFIGURE.  EBUSY: taken
 * meanwhile by someone else (other loop users race for free numbers). */
static int
configure_loop (ReplayEmulator *emu, int n, int file_fd, GError **error)
{
  g_autofree char *path = g_strdup_printf ("/dev/loop%d", n);
  struct loop_config cfg;
  int fd;

  if (!replay_journal_set_emulate_loop (emu->journal, path, error))
    return -1;
  fd = open (path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", path, g_strerror (errno));
      return -1;
    }
  memset (&cfg, 0, sizeof cfg);
  cfg.fd = (guint32) file_fd;
  /* Autoclear: if this process dies, its fd on the device closes and the
   * kernel detaches the loop (drivers/block/loop.c lo_release). */
  cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (emu->opts.direct_io ? LO_FLAGS_DIRECT_IO : 0);
  g_strlcpy ((char *) cfg.info.lo_file_name, emu->file, sizeof cfg.info.lo_file_name);
  if (ioctl (fd, LOOP_CONFIGURE, &cfg) == 0)
    {
      emu->loop_fd = fd;
      emu->loop_path = g_steal_pointer (&path);
      return 1;
    }
  {
    int e = errno;
    close (fd);
    if (e == EBUSY)
      return 0;
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "LOOP_CONFIGURE of %s on %s%s: %s", path,
                 emu->file, emu->opts.direct_io ? " with direct I/O" : "", g_strerror (e));
    return -1;
  }
}

static gboolean
attach_loop (ReplayEmulator *emu, GError **error)
{
  struct loop_info64 info;
  int ctl, file_fd, res = 0;

  ctl = open ("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "/dev/loop-control: %s", g_strerror (errno));
      return FALSE;
    }
  file_fd = open (emu->file, O_RDWR | O_CLOEXEC);
  if (file_fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", emu->file, g_strerror (errno));
      close (ctl);
      return FALSE;
    }
  for (guint attempt = 0; attempt < 16 && res == 0; attempt++)
    {
      int n = ioctl (ctl, LOOP_CTL_GET_FREE);
      if (n < 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "LOOP_CTL_GET_FREE: %s", g_strerror (errno));
          res = -1;
          break;
        }
      res = configure_loop (emu, n, file_fd, error);
    }
  close (file_fd);
  close (ctl);
  if (res == 0)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "no free loop device after 16 tries");
  if (res != 1)
    return FALSE;
  /* The kernel may fall back to buffered I/O without failing: ask. */
  emu->loop_dio = ioctl (emu->loop_fd, LOOP_GET_STATUS64, &info) == 0
                  && (info.lo_flags & LO_FLAGS_DIRECT_IO);
  if (emu->opts.direct_io && !emu->loop_dio)
    emu_log (emu, "warning: the kernel did not enable direct I/O on %s; the FUSE file's page "
             "cache is in the path", emu->loop_path);
  return TRUE;
}

static int
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* The route over the probes: from the kernel's issue when the
 * tracefs instance saw exactly one issue per probe, else from the call. */
static void
route_from_probes (ReplayEmulator *emu, const gint64 *call_ns, const gint64 *arrival_ns, guint n,
                   GArray *issue_ns, const char *why_not_issue)
{
  g_autofree gint64 *samples = g_new0 (gint64, n);
  gboolean from_issue = issue_ns != NULL && issue_ns->len == n;
  guint used = 0;

  for (guint i = 0; i < n; i++)
    {
      gint64 from = from_issue ? g_array_index (issue_ns, gint64, i) : call_ns[i];

      /* Not ours (another reader's request) when it came before the call. */
      if (arrival_ns[i] > call_ns[i] && arrival_ns[i] > from)
        samples[used++] = arrival_ns[i] - from;
    }
  g_free (emu->route_source);
  if (from_issue)
    emu->route_source = g_strdup ("block_rq_issue");
  else
    {
      emu->route_source = g_strdup ("system call");
      emu_log (emu, "the route is timed from the system call, not the kernel's "
               "issue: %s", why_not_issue != NULL ? why_not_issue
                                                 : "the trace saw other requests at the probes' sector");
    }
  if (used == 0)
    return;
  /* The first quartile, not the median: a request whose route was shorter
   * than the estimate would start before the kernel sent it, and the
   * device would be faster than its model; between the probes and a
   * workload that keeps the CPUs awake the route only gets shorter. */
  qsort (samples, used, sizeof *samples, cmp_i64);
  emu->route_ns = samples[used / 4];
  emu->route_measured = TRUE;
}

/* Time EMU_ROUTE_PROBES 4 KiB O_DIRECT reads to their arrival here, from
 * their block_rq_issue (a private tracefs instance, where tracefs is
 * mounted) or else from the system call.  The call's own path into the
 * block layer (read() entry to block_rq_issue, 30-47 us here) is not the
 * device's: from the call, the kernel's D2C on the emulated device comes
 * out that much shorter than the model (the caller's time is closer). */
static gboolean
measure_route (ReplayEmulator *emu, GError **error)
{
  g_autofree gint64 *call_ns = g_new0 (gint64, EMU_ROUTE_PROBES);
  g_autofree gint64 *arrival_ns = g_new0 (gint64, EMU_ROUTE_PROBES);
  g_autoptr (GArray) issue_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GError) trace_error = NULL;
  ReplayEmulateRoute *trace = NULL;
  off_t probe_offset = (off_t) (emu->size_bytes / 2) & ~(off_t) (EMU_ROUTE_PROBE_BYTES - 1);
  guint n = 0;
  void *buf = NULL;
  int fd = open (emu->loop_path, O_RDONLY | O_DIRECT | O_CLOEXEC);

  if (fd < 0 || posix_memalign (&buf, EMU_ROUTE_PROBE_BYTES, EMU_ROUTE_PROBE_BYTES) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: cannot probe the route: %s",
                   emu->loop_path, g_strerror (errno));
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  trace = replay_emulate_route_start (emu->loop_path, &trace_error);
  g_atomic_int_set (&emu->probing, 1);
  for (guint i = 0; i < EMU_ROUTE_PROBES; i++)
    {
      g_usleep (EMU_ROUTE_PROBE_GAP_US);
      call_ns[n] = now_ns ();
      if (pread (fd, buf, EMU_ROUTE_PROBE_BYTES, probe_offset) != EMU_ROUTE_PROBE_BYTES)
        continue;
      pthread_mutex_lock (&emu->lock);
      arrival_ns[n++] = emu->probe_arrival_abs_ns;
      pthread_mutex_unlock (&emu->lock);
    }
  g_atomic_int_set (&emu->probing, 0);
  free (buf);
  close (fd);
  if (trace != NULL
      && !replay_emulate_route_issues (trace, (guint64) probe_offset / 512, issue_ns, &trace_error))
    g_array_set_size (issue_ns, 0);
  route_from_probes (emu, call_ns, arrival_ns, n, trace_error == NULL ? issue_ns : NULL,
                     trace_error != NULL ? trace_error->message : NULL);
  /* From now on each request is timed from its own issue. */
  if (trace != NULL && trace_error == NULL && replay_emulate_route_follow (trace, &trace_error))
    emu->issues = trace;
  else
    {
      if (trace != NULL && trace_error != NULL)
        emu_log (emu, "requests are timed from the route estimate: %s", trace_error->message);
      replay_emulate_route_free (trace);
    }
  if (!emu->route_measured)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO,
                   "%s: no route probe reached the emulator", emu->loop_path);
      return FALSE;
    }
  return TRUE;
}

static ReplayEmulator *
emulator_new (const ReplayEmulateOptions *opts)
{
  ReplayEmulator *emu = g_new0 (ReplayEmulator, 1);

  emu->opts = *opts;
  emu->model_arg = g_strdup (opts->model);
  emu->backing_arg = g_strdup (opts->backing);
  emu->journal_dir = g_strdup (opts->journal_dir ? opts->journal_dir : replay_journal_default_dir ());
  emu->opts.model = emu->model_arg;
  emu->opts.backing = emu->backing_arg;
  emu->opts.journal_dir = emu->journal_dir;
  emu->size_bytes = opts->size_bytes;
  emu->spin_ns = opts->spin_ns > 0 ? opts->spin_ns : EMU_DEFAULT_SPIN_NS;
  emu->route_ns = MAX (opts->route_ns, 0);
  emu->backing_fd = -1;
  emu->backing_dio_fd = -1;
  emu->loop_fd = -1;
  emu->heap = g_ptr_array_sized_new (EMU_INITIAL_SLOTS);
  emu->all_slots = g_ptr_array_new_with_free_func (slot_free);
  emu->records = g_array_sized_new (FALSE, FALSE, sizeof (EmuRecord), 1 << 16);
  emu->sizes = g_hash_table_new (g_direct_hash, g_direct_equal);
  {
    pthread_condattr_t ca;
    pthread_condattr_init (&ca);
    pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
    pthread_cond_init (&emu->cond, &ca);
    pthread_condattr_destroy (&ca);
  }
  pthread_mutex_init (&emu->lock, NULL);
  /* Preallocated slots: the hot path takes them from the free list. */
  for (guint i = 0; i < EMU_INITIAL_SLOTS; i++)
    {
      EmuSlot *s = g_new0 (EmuSlot, 1);
      g_ptr_array_add (emu->all_slots, s);
      s->next_free = emu->free_slots;
      emu->free_slots = s;
    }
  return emu;
}

static gboolean
check_model (ReplayEmulator *emu, GError **error)
{
  emu->model = load_model (emu->opts.model, error);
  if (emu->model == NULL)
    return FALSE;
  if (emu->size_bytes == 0 || emu->size_bytes % 512 != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--size must be a positive multiple of 512 bytes");
      return FALSE;
    }
  if (emu->size_bytes > emu->model->capacity_bytes)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--size %" G_GUINT64_FORMAT " bytes is more than model %s's capacity of %"
                   G_GUINT64_FORMAT " bytes (the emulated device is the model's first --size bytes)",
                   emu->size_bytes, emu->opts.model, emu->model->capacity_bytes);
      return FALSE;
    }
  emu->parallelism = MAX (1u, emu->model->parallelism);
  emu->server_free_ns = g_new0 (gint64, emu->parallelism);
  return TRUE;
}

ReplayEmulator *
replay_emulator_start (const ReplayEmulateOptions *opts, GError **error)
{
  const char *const scopes[] = { REPLAY_JOURNAL_SCOPE_EMULATE, NULL };
  g_autoptr (ReplayEmulator) emu = NULL;
  g_autofree char *template = NULL;

  g_return_val_if_fail (opts != NULL && opts->model != NULL, NULL);
  emu = emulator_new (opts);
  if (!check_model (emu, error))
    return NULL;
  if (!replay_journal_recover (emu->journal_dir, scopes, NULL, "iosim emulate", opts->log, error))
    return NULL;
  template = g_build_filename (g_get_tmp_dir (), REPLAY_EMULATE_DIR_PREFIX "XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "cannot create %s: %s", template,
                   g_strerror (errno));
      return NULL;
    }
  emu->dir = g_steal_pointer (&template);
  emu->mnt = g_build_filename (emu->dir, REPLAY_EMULATE_MOUNT_NAME, NULL);
  emu->file = g_build_filename (emu->mnt, REPLAY_EMULATE_FILE_NAME, NULL);
  emu->journal = replay_journal_create_emulate (emu->journal_dir, emu->dir, opts->backing == NULL,
                                                error);
  if (emu->journal == NULL)
    {
      rmdir (emu->dir);
      return NULL;
    }
  if (!open_backing (emu, error) || !start_fuse (emu, error) || !attach_loop (emu, error)
      || (opts->route_ns < 0 && !measure_route (emu, error))
      || !replay_emulate_sysctl_set (emu->journal, NULL, opts->dirty_bytes,
                                     opts->dirty_background_bytes, opts->log, error))
    {
      g_autoptr (GError) undo = NULL;
      if (!replay_emulator_stop (emu, &undo))
        emu_log (emu, "undoing the start failed too: %s", undo->message);
      return NULL;
    }
  return g_steal_pointer (&emu);
}

const char *
replay_emulator_device (const ReplayEmulator *emu)
{
  return emu->loop_path;
}

gboolean
replay_emulator_serve (ReplayEmulator *emu, GError **error)
{
  while (!(emu->opts.stop && *emu->opts.stop))
    {
      if (g_atomic_int_get (&emu->rx_done))
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                       "the FUSE session at %s ended (%s)", emu->mnt,
                       emu->rx_error ? g_strerror (emu->rx_error) : "unmounted from outside?");
          return FALSE;
        }
      /* A stop signal interrupts the poll (handlers without SA_RESTART). */
      poll (NULL, 0, 100);
    }
  return TRUE;
}

/* ---- stop ---- */

static void
stop_receiver (ReplayEmulator *emu)
{
  gint64 deadline = g_get_monotonic_time () + EMU_RX_STOP_WAIT_US;

  if (!emu->rx_started)
    return;
  fuse_session_exit (emu->se);
  /* It sits in read(/dev/fuse): interrupt it (EINTR, then it sees the
   * session exited); again if the signal came just before the read. */
  while (!g_atomic_int_get (&emu->rx_done))
    {
      pthread_kill (emu->rx_thread, SIGUSR1);
      g_usleep (g_get_monotonic_time () < deadline ? 1000 : 10 * 1000);
    }
  pthread_join (emu->rx_thread, NULL);
  emu->rx_started = FALSE;
}

static void
stop_completer (ReplayEmulator *emu)
{
  if (!emu->done_started)
    return;
  pthread_mutex_lock (&emu->lock);
  g_atomic_int_set (&emu->stopping, 1);
  pthread_cond_signal (&emu->cond);
  pthread_mutex_unlock (&emu->lock);
  pthread_join (emu->done_thread, NULL);
  emu->done_started = FALSE;
}

/* LOOP_CLR_FD while the server still answers the loop's last I/O; the
 * kernel detaches at the last close (drivers/block/loop.c loop_clr_fd),
 * so wait until the loop lets the file go. */
static void
detach_own_loop (ReplayEmulator *emu)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  if (emu->loop_fd < 0)
    return;
  if (ioctl (emu->loop_fd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO)
    emu_log (emu, "warning: LOOP_CLR_FD on %s: %s", emu->loop_path, g_strerror (errno));
  close (emu->loop_fd);
  emu->loop_fd = -1;
  for (;;)
    {
      g_auto (GStrv) loops = replay_emulate_loops_backed_by (emu->file);
      if (loops[0] == NULL)
        return;
      if (g_get_monotonic_time () > deadline)
        {
          emu_log (emu, "warning: %s is still open by another process; it detaches when that "
                   "closes it, and its I/O fails from now on", loops[0]);
          return;
        }
      g_usleep (10 * 1000);
    }
}

gboolean
replay_emulator_stop (ReplayEmulator *emu, GError **error)
{
  GError *local = NULL;
  gboolean ok = TRUE;

  /* 0. The dirty limits, whatever else fails: lowered, they slow the
   * whole machine.  On failure the journal is kept for `iosim restore`. */
  if (emu->journal != NULL)
    ok = replay_emulate_sysctl_restore (emu->journal, FALSE, emu->opts.log, &local);
  /* 1. The loop device, while the server still serves. */
  detach_own_loop (emu);
  /* 2. The threads (nothing more comes once the loop is gone), then the
   * mount: unmounting closes /dev/fuse under a receiver still reading. */
  stop_receiver (emu);
  stop_completer (emu);
  if (emu->mounted)
    {
      fuse_session_unmount (emu->se);
      emu->mounted = FALSE;
    }
  if (emu->se != NULL)
    {
      fuse_session_destroy (emu->se);
      emu->se = NULL;
    }
  if (emu->backing_fd >= 0)
    {
      close (emu->backing_fd);
      emu->backing_fd = -1;
    }
  if (emu->backing_dio_fd >= 0)
    {
      close (emu->backing_dio_fd);
      emu->backing_dio_fd = -1;
    }
  /* 3. What is left, through the same checked cleanup a later run would
   * do after a SIGKILL: a loop still held, the mount, the files. */
  if (ok && emu->dir != NULL)
    ok = replay_emulate_cleanup_dir (emu->dir, emu->temp_backing, FALSE, NULL, &local);
  if (ok && emu->journal != NULL && replay_journal_remove (emu->journal, &local))
    g_clear_pointer (&emu->journal, replay_journal_free);
  else if (emu->journal != NULL)
    ok = FALSE;
  if (!ok)
    {
      g_autofree char *hint = emu->journal ? replay_journal_restore_hint (emu->journal)
                                           : g_strdup ("iosim restore");
      g_propagate_prefixed_error (error, local, "cleanup incomplete (run '%s' later): ", hint);
      return FALSE;
    }
  g_clear_pointer (&emu->dir, g_free);
  return TRUE;
}

void
replay_emulator_free (ReplayEmulator *emu)
{
  if (emu == NULL)
    return;
  /* Threads are gone after stop; free never tears down a live device. */
  g_assert (!emu->rx_started && !emu->done_started);
  if (emu->backing_fd >= 0)
    close (emu->backing_fd);
  if (emu->backing_dio_fd >= 0)
    close (emu->backing_dio_fd);
  replay_journal_free (emu->journal);
  dev_model_free (emu->model);
  g_free (emu->server_free_ns);
  g_free (emu->route_source);
  replay_emulate_route_free (emu->issues);
  g_ptr_array_unref (emu->heap);
  g_ptr_array_unref (emu->all_slots);
  g_array_unref (emu->records);
  g_hash_table_unref (emu->sizes);
  pthread_mutex_destroy (&emu->lock);
  pthread_cond_destroy (&emu->cond);
  g_free (emu->model_arg);
  g_free (emu->backing_arg);
  g_free (emu->journal_dir);
  g_free (emu->dir);
  g_free (emu->mnt);
  g_free (emu->file);
  g_free (emu->backing_path);
  g_free (emu->loop_path);
  g_free (emu);
}

/* ---- statistics ---- */

static int
cmp_uint (gconstpointer a, gconstpointer b)
{
  guint x = GPOINTER_TO_UINT (*(gconstpointer const *) a);
  guint y = GPOINTER_TO_UINT (*(gconstpointer const *) b);

  return x < y ? -1 : x > y;
}

typedef struct {
  gint64 p50, p99, max, mean;
} EmuQuantiles;

/* Nearest-rank quantiles of actual minus modelled end (the end of the
 * reply: when the kernel has the completion), or with @syscall of the
 * reply's own duration. */
static EmuQuantiles
quantiles_of (gint64 *v, guint n)
{
  EmuQuantiles q = { 0 };
  double sum = 0;

  if (n == 0)
    return q;
  for (guint i = 0; i < n; i++)
    sum += (double) v[i];
  qsort (v, n, sizeof *v, cmp_i64);
  q.p50 = v[(n - 1) / 2];
  q.p99 = v[MIN (n - 1, (guint) ((n * 99ull + 99) / 100) - 1)];
  q.max = v[n - 1];
  q.mean = (gint64) (sum / n);
  return q;
}

static EmuQuantiles
timing_error (ReplayEmulator *emu, gboolean syscall)
{
  g_autofree gint64 *err = g_new (gint64, emu->records->len + 1);
  guint n = emu->records->len;

  for (guint i = 0; i < n; i++)
    {
      const EmuRecord *r = &g_array_index (emu->records, EmuRecord, i);
      err[i] = r->reply_ns - (syscall ? r->send_ns : r->end_ns);
    }
  return quantiles_of (err, n);
}

/* The error the kernel saw: its block_rq_complete of each request minus
 * the modelled end.  Requests are matched to completions of their sector
 * in order, each to the first at or after its reply began; the pieces of
 * a request the FUSE layer cut (beyond the first) have none.  *@matched
 * is how many were found (0 without the live trace). */
static EmuQuantiles
kernel_completion_error (ReplayEmulator *emu, guint *matched)
{
  g_autoptr (GHashTable) by_sector = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autofree gint64 *err = NULL;
  g_autofree guint *next = NULL;
  const GArray *c;
  guint n = 0;

  *matched = 0;
  if (emu->issues == NULL)
    return (EmuQuantiles) { 0 };
  c = replay_emulate_route_completions (emu->issues);
  next = g_new0 (guint, c->len + 1);
  /* A chain per sector through @next, in trace order (index + 1; 0 ends). */
  for (guint i = c->len; i-- > 0;)
    {
      const ReplayEmulateCompletion *e = &g_array_index (c, ReplayEmulateCompletion, i);
      gpointer head = g_hash_table_lookup (by_sector, &e->sector);

      next[i + 1] = GPOINTER_TO_UINT (head);
      g_hash_table_insert (by_sector, (gpointer) &e->sector, GUINT_TO_POINTER (i + 1));
    }
  err = g_new (gint64, emu->records->len + 1);
  for (guint i = 0; i < emu->records->len; i++)
    {
      const EmuRecord *r = &g_array_index (emu->records, EmuRecord, i);
      guint64 sector = r->offset_bytes / 512;
      guint k = r->op == EMU_OP_FLUSH ? 0
                                      : GPOINTER_TO_UINT (g_hash_table_lookup (by_sector, &sector));

      while (k != 0
             && g_array_index (c, ReplayEmulateCompletion, k - 1).complete_ns - emu->t0_ns
                  < r->send_ns)
        k = next[k];
      if (k == 0)
        continue;
      err[n++] = g_array_index (c, ReplayEmulateCompletion, k - 1).complete_ns - emu->t0_ns
                 - r->end_ns;
      g_hash_table_insert (by_sector, &g_array_index (c, ReplayEmulateCompletion, k - 1).sector,
                           GUINT_TO_POINTER (next[k]));
    }
  *matched = n;
  return quantiles_of (err, n);
}

static void
add_sizes (ReplayEmulator *emu, JsonBuilder *b)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, emu->sizes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (keys, key);

  g_ptr_array_sort (keys, cmp_uint);
  json_builder_set_member_name (b, "request_sizes_bytes");
  json_builder_begin_object (b);
  for (guint i = 0; i < keys->len; i++)
    {
      g_autofree char *k = g_strdup_printf ("%u", GPOINTER_TO_UINT (keys->pdata[i]));
      sim_json_int (b, k, GPOINTER_TO_UINT (g_hash_table_lookup (emu->sizes, keys->pdata[i])));
    }
  json_builder_end_object (b);
  sim_json_int (b, "max_request_bytes",
                keys->len ? GPOINTER_TO_UINT (keys->pdata[keys->len - 1]) : 0);
}

static void
add_depth (ReplayEmulator *emu, JsonBuilder *b)
{
  double sum = 0, n = 0;

  json_builder_set_member_name (b, "in_flight");
  json_builder_begin_object (b);
  sim_json_int (b, "max", emu->max_depth);
  for (guint d = 1; d <= EMU_DEPTH_HIST; d++)
    {
      sum += (double) d * emu->depth_hist[d];
      n += emu->depth_hist[d];
    }
  json_builder_set_member_name (b, "mean_at_arrival");
  json_builder_add_double_value (b, n > 0 ? sum / n : 0);
  json_builder_set_member_name (b, "histogram_at_arrival");
  json_builder_begin_object (b);
  for (guint d = 1; d <= EMU_DEPTH_HIST; d++)
    if (emu->depth_hist[d])
      {
        g_autofree char *k = g_strdup_printf ("%u", d);
        sim_json_int (b, k, (gint64) emu->depth_hist[d]);
      }
  json_builder_end_object (b);
  json_builder_end_object (b);
}

static void
add_model_times (ReplayEmulator *emu, JsonBuilder *b)
{
  double wait = 0, service = 0;
  guint n = emu->records->len;

  for (guint i = 0; i < n; i++)
    {
      const EmuRecord *r = &g_array_index (emu->records, EmuRecord, i);
      wait += (double) (r->start_ns - r->arrival_ns);
      service += (double) (r->end_ns - r->start_ns);
    }
  sim_json_int (b, "mean_wait_ns", n ? (gint64) (wait / n) : 0);
  sim_json_int (b, "mean_service_ns", n ? (gint64) (service / n) : 0);
}

JsonNode *
replay_emulator_stats_json (ReplayEmulator *emu)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  EmuQuantiles q = timing_error (emu, FALSE);
  EmuQuantiles sys = timing_error (emu, TRUE);
  guint kc_matched;
  EmuQuantiles kc = kernel_completion_error (emu, &kc_matched);
  gint64 last = 0;

  for (guint i = 0; i < emu->records->len; i++)
    last = MAX (last, g_array_index (emu->records, EmuRecord, i).reply_ns);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, emu->opts.model);
  sim_json_int (b, "size_bytes", (gint64) emu->size_bytes);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, emu->loop_path ? emu->loop_path : "");
  json_builder_set_member_name (b, "loop_direct_io");
  json_builder_add_boolean_value (b, emu->loop_dio);
  sim_json_int (b, "parallelism", emu->parallelism);
  sim_json_int (b, "model_queue_depth", emu->model ? emu->model->queue_depth : 0);
  json_builder_set_member_name (b, "route");
  json_builder_begin_object (b);
  sim_json_int (b, "ns", emu->route_ns);
  json_builder_set_member_name (b, "measured");
  json_builder_add_boolean_value (b, emu->route_measured);
  json_builder_set_member_name (b, "from");
  json_builder_add_string_value (b, emu->route_measured ? emu->route_source : "--route");
  /* Requests whose modelled time started at their own block_rq_issue,
   * and those that started at arrival minus the route. */
  sim_json_int (b, "timed_from_issue", (gint64) emu->timed_from_issue);
  sim_json_int (b, "timed_from_route", (gint64) emu->timed_from_route);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "fuse");
  json_builder_begin_object (b);
  sim_json_int (b, "max_write", emu->conn_max_write);
  sim_json_int (b, "max_read", emu->conn_max_read);
  sim_json_int (b, "max_background", emu->conn_max_background);
  json_builder_set_member_name (b, "async_dio");
  json_builder_add_boolean_value (b, emu->conn_async_dio);
  json_builder_end_object (b);
  sim_json_int (b, "last_reply_ns", last);
  json_builder_set_member_name (b, "requests");
  json_builder_begin_object (b);
  for (guint op = 0; op < EMU_N_OPS; op++)
    {
      json_builder_set_member_name (b, emu_op_names[op]);
      json_builder_begin_object (b);
      sim_json_int (b, "count", (gint64) emu->count[op]);
      sim_json_int (b, "bytes", (gint64) emu->bytes[op]);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "timing_error_ns");
  json_builder_begin_object (b);
  sim_json_int (b, "replies", emu->records->len);
  sim_json_int (b, "p50", q.p50);
  sim_json_int (b, "p99", q.p99);
  sim_json_int (b, "max", q.max);
  sim_json_int (b, "mean", q.mean);
  json_builder_end_object (b);
  /* What the kernel saw: its block_rq_complete minus the modelled end
   * (with the live trace; matched 0 without). */
  json_builder_set_member_name (b, "kernel_completion_error_ns");
  json_builder_begin_object (b);
  sim_json_int (b, "matched", kc_matched);
  sim_json_int (b, "p50", kc.p50);
  sim_json_int (b, "p99", kc.p99);
  sim_json_int (b, "max", kc.max);
  sim_json_int (b, "mean", kc.mean);
  json_builder_end_object (b);
  /* Part of the error: the reply's write, in which the kernel completes
   * the request (and the loop's bio) before it returns. */
  json_builder_set_member_name (b, "reply_syscall_ns");
  json_builder_begin_object (b);
  sim_json_int (b, "p50", sys.p50);
  sim_json_int (b, "p99", sys.p99);
  sim_json_int (b, "max", sys.max);
  json_builder_end_object (b);
  add_model_times (emu, b);
  add_depth (emu, b);
  add_sizes (emu, b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

gboolean
replay_emulator_write_requests (ReplayEmulator *emu, const char *path, GError **error)
{
  g_autoptr (GString) out = g_string_new ("op,offset_bytes,bytes,depth,arrival_ns,start_ns,end_ns,"
                                          "ready_ns,send_ns,reply_ns\n");

  for (guint i = 0; i < emu->records->len; i++)
    {
      const EmuRecord *r = &g_array_index (emu->records, EmuRecord, i);
      g_string_append_printf (out, "%s,%" G_GUINT64_FORMAT ",%u,%u,%" G_GINT64_FORMAT ",%"
                              G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                              G_GINT64_FORMAT ",%" G_GINT64_FORMAT "\n", emu_op_names[r->op],
                              r->offset_bytes, r->bytes, r->depth, r->arrival_ns, r->start_ns,
                              r->end_ns, r->ready_ns, r->send_ns, r->reply_ns);
    }
  if (!sim_output_write (path, out->str, (gssize) out->len, error))
    return FALSE;
  return TRUE;
}

char *
replay_emulator_summary (ReplayEmulator *emu)
{
  EmuQuantiles q = timing_error (emu, FALSE);
  guint kc_matched;
  EmuQuantiles kc = kernel_completion_error (emu, &kc_matched);
  g_autofree char *kernel = kc_matched > 0
    ? g_strdup_printf ("; the kernel's completion minus the end p50 %.1f us p99 %.1f us",
                       kc.p50 / 1e3, kc.p99 / 1e3)
    : g_strdup ("");

  return g_strdup_printf ("%" G_GUINT64_FORMAT " reads (%.1f MB), %" G_GUINT64_FORMAT
                          " writes (%.1f MB), %" G_GUINT64_FORMAT " flushes; timing error p50 %.1f us"
                          " p99 %.1f us max %.1f us%s; in flight max %u; route %.1f us (%s)",
                          emu->count[EMU_OP_READ], emu->bytes[EMU_OP_READ] / 1e6,
                          emu->count[EMU_OP_WRITE], emu->bytes[EMU_OP_WRITE] / 1e6,
                          emu->count[EMU_OP_FLUSH], q.p50 / 1e3, q.p99 / 1e3, q.max / 1e3, kernel,
                          emu->max_depth, emu->route_ns / 1e3,
                          emu->route_measured ? emu->route_source : "given");
}

gboolean
replay_emulator_write_stats (ReplayEmulator *emu, const char *path, GError **error)
{
  g_autoptr (JsonNode) root = replay_emulator_stats_json (emu);
  return replay_json_write_file (root, path, error);
}
