/* sim-process.h — simulated processes that generate block I/O.
 *
 * A process issues I/Os of bs bytes (split into bios of at most the
 * queue's max_sectors) to one device: sequential or random offsets within a
 * region, reads or writes, O_DIRECT: synchronous (iodepth 1) or keeping up
 * to iodepth I/Os outstanding (libaio-like), with a think time between a
 * completion and the next issue, from a start time until a stop time or a
 * byte count.  Trace-driven processes replay a recorded I/O stream: closed
 * loop where the trace shows that an I/O waited for the previous ones
 * (issued after their completion plus the recorded think time), open loop
 * (recorded inter-arrival gap) where I/Os overlapped.
 * Buffered writers may fsync() every N writes or before they exit; a
 * "syncer" calls sync() in a loop (with its think time between calls).
 * Every process has its own pid and I/O context.
 *
 * Raw devices of 2.4 and 2.5.35 (SimRawPath) take their own ways to the
 * queue, on queues with 2.4/2.5.3x plugging (sim-queue.h SimPlugList):
 *  - 2.4 rw_raw_dev -> brw_kiovec (drivers/char/raw.c, fs/buffer.c,
 *    fs/iobuf.c): one buffer_head per hardware sector (512 B), each
 *    submitted alone (submit_bh), in chunks of at most KIO_MAX_SECTORS
 *    (KIO_MAX_ATOMIC_IO = 512 KiB); after each chunk kiobuf_wait_for_io
 *    runs tq_disk and sleeps until the chunk is done, then the next chunk;
 *  - 2.5.35 raw read()/write(): blockdev direct I/O (fs/direct-io.c of
 *    2002): bios built with bio_add_page up to the queue's max_sectors
 *    in whole pages, all submitted, then blk_run_queues and a sleep;
 *  - 2.5.35 with the aio-20020619 raw port (Shailabh Nagar, Sept 2002):
 *    io_submit of one iocb moves at most aio_max_size = 128 KiB
 *    (generic_aio_rw truncates; generic_aio_next_chunk was not ported),
 *    as one buffer_head per sector (brw_kvec_async, submit_bh each), and
 *    unplugs nothing; its event reports the short count.  The process
 *    wants whole transfers and submits the rest as a new iocb once it
 *    has reaped the short event (short_events counts them);
 *  - 2.5.35 with the async-DIO patch (Badari Pulavarty, fs/direct-io.c
 *    "06Nov2002 added asynchronous IO support", in mainline from 2.5.47):
 *    io_submit of one iocb runs the same blockdev direct I/O as read()
 *    (whole-page bios up to max_sectors, no size cap), then
 *    direct_io_worker's is_async branch runs blk_run_queues() and
 *    returns -EIOCBQUEUED without waiting; the last bio's completion
 *    calls aio_complete (finished_one_bio).
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-request.h"
#include "sim/sim-queue.h"
#include "sim/sim-stats.h"
#include "sim/sim-pagecache.h"
#include "sim/sim-cpu.h"
#include "sim/sim-lock.h"

G_BEGIN_DECLS

typedef struct _SimProcess SimProcess;

/* The system-call paths whose CPU steps a host profile describes
 * (models/host/host-profile.h, same order). */
typedef enum {
  SIM_HOST_WRITE,          /* buffered write(): per page */
  SIM_HOST_READ,           /* buffered read(): per page */
  SIM_HOST_SUBMIT,         /* synchronous O_DIRECT: per request */
  SIM_HOST_COMPLETE,       /* a request's completion: interrupt work */
  SIM_HOST_AIO_SUBMIT,     /* io_submit(): per iocb */
  SIM_HOST_AIO_REAP,       /* io_getevents(): per event */
  SIM_HOST_RECLAIM,        /* a buffered write's page allocations: per page
                            * they reclaimed (direct reclaim) */
  SIM_HOST_WRITEBACK,      /* a buffered write throttled in
                            * balance_dirty_pages: per page it wrote back */
  SIM_HOST_BH_SUBMIT,      /* raw I/O of 2.4/2.5.35: per buffer_head */
  SIM_HOST_BH_COMPLETE,    /* its completion (interrupt work): per buffer_head */
  SIM_HOST_END_WRITEBACK,  /* a completed buffered-write request: per 4 KiB
                            * block, interrupt work (run by the host) */
  SIM_HOST_BALANCE,        /* a throttled writer's balance_dirty_pages pass
                            * after a sleep: per device with dirty pages */
  SIM_HOST_WAKE,           /* a completion's wake-up of congestion_wait
                            * sleepers: per task woken, interrupt work (run
                            * by the host) */
  SIM_HOST_N_PATHS
} SimHostPath;

/* How a direct process's I/O reaches the queue (see the header comment). */
typedef enum {
  SIM_RAW_NONE,            /* O_DIRECT of 2.6+ (fs/direct-io.c, block/fops.c) */
  SIM_RAW_2_4,             /* 2.4 raw: brw_kiovec, per-sector bhs, 512 KiB chunks */
  SIM_RAW_2_5_DIO,         /* 2.5.35 raw: blockdev direct I/O */
  SIM_RAW_2_5_AIO,         /* 2.5.35 + aio raw port: brw_kvec_async, 128 KiB iocbs */
  SIM_RAW_2_5_ASYNC_DIO,   /* 2.5.35 + async-DIO: blockdev direct I/O per iocb, unplugged */
} SimRawPath;

/* 2.4 include/linux/iobuf.h: KIO_MAX_ATOMIC_IO = 512 (KiB), and
 * KIO_MAX_SECTORS = KIO_MAX_ATOMIC_IO * 2 sectors: brw_kiovec waits after
 * this many buffer_heads. */
#define SIM_RAW_KIO_MAX_SECTORS 1024u
/* The aio raw port's fs/aio.c: aio_max_size = 0x20000 ("128KB per chunk"). */
#define SIM_RAW_AIO_MAX_BYTES   (128u * 1024u)

/* The host model's side of a process's system calls (models/host/host.c).
 * A process with a host runs on a SimThread: its calls cost CPU time and
 * take the profile's locks. */
typedef struct {
  /* On @p's CPU: run @path's call steps (when @call) and @n times its
   * per-unit steps, then @then on the CPU. */
  void (*run)     (gpointer host, SimProcess *p, SimHostPath path, gboolean call, guint64 n,
                   SimThreadFn then, gpointer data);
  /* On @p's CPU: release the locks the call holds to its end. */
  void (*release) (gpointer host, SimProcess *p);
  /* Whether @path has any step: a path without is not run at all. */
  gboolean (*has_steps) (gpointer host, SimHostPath path);
} SimHostOps;

/* The host's step executor state of one process (models/host/host.c). */
typedef struct {
  gconstpointer path;        /* the profile's path being run */
  gboolean      with_call;   /* run its call steps first */
  guint         phase;       /* 0: call steps, 1: per-unit steps */
  guint         index;
  guint64       left;        /* per-unit repetitions left */
  SimTime       batch_ns;    /* lock-free per-unit steps, as one slice */
  SimHostPath   path_id;
  guint64       units[SIM_HOST_N_PATHS]; /* per-unit repetitions run so far, per
                              * path (all calls): steps run once every N units
                              * count on it */
  SimLock      *taking;      /* a lock being taken for the rest of the call */
  SimLock      *held[4];     /* taken for the rest of the call */
  guint         n_held;
  SimThreadFn   then;
  gpointer      data;
  gpointer      runner;      /* the host's executor of this state */
} SimHostExec;

typedef enum {
  SIM_PATTERN_SEQUENTIAL,
  SIM_PATTERN_RANDOM,
  SIM_PATTERN_TRACE,
} SimPattern;

/* One recorded I/O of a trace-driven process. */
typedef struct {
  guint64  sector;
  guint32  nr_sectors;
  SimOp    op;
  gboolean depends;      /* issued only after every earlier I/O completed */
  SimTime  gap_ns;       /* depends: think time after the last completion;
                          * else: delay after the previous I/O's issue */
  SimTime  arrival_ns;   /* its recorded queue time, from the trace's first I/O
                          * (a pool's stream: when it may be taken) */
  gint32   after;        /* a pool's stream: the I/O (index) whose completion
                          * it followed, -1 none; it may be taken gap_ns after
                          * that one's simulated completion */
} SimTraceIo;

/* A trace-driven process's I/Os kept outside the process, read a window
 * at a time (a trace too long to hold: models/scenario-trace.c keeps it in
 * blocks, spooled to a temporary file past its memory budget).  @read
 * fills @buf with the I/Os @first, @first + 1, ... (at most @max, fewer at
 * the end) and returns how many; it keeps no state of its own, so several
 * processes and runs may read at once. */
typedef struct {
  gsize    (*read) (gconstpointer data, gsize first, SimTraceIo *buf, gsize max);
  gconstpointer data;
  gboolean reads;        /* the trace holds reads (for reports) */
  gboolean writes;       /* ... and writes */
} SimTraceSource;

/* I/Os a process holds of its SimTraceSource at a time. */
#define SIM_TRACE_WINDOW_IOS 256

/* How the threads of one [process] group share a file (sequential only). */
typedef enum {
  SIM_STREAM_PRIVATE,     /* each thread streams through its own slice */
  SIM_STREAM_SHARED,      /* a pool: each thread takes the next chunk of one
                           * file (an NFS server's threads serving a client) */
  SIM_STREAM_INTERLEAVED, /* thread i of N reads chunks i, i+N, i+2N, ...
                           * (dump(8)'s reader processes) */
} SimStreamMode;

/* A client's sequential request stream served by a pool of threads, owned
 * by whoever built the threads.  The client keeps at most @window requests
 * outstanding; each new request goes to the thread that has been idle the
 * longest (the pool's FIFO of idle threads).  2.6.27's sunrpc wakes the
 * thread idle the shortest instead (a stack); sim/sim-nfs.c models that
 * server.  With fewer requests in flight than threads, consecutive chunks
 * are read by different threads. */
typedef struct {
  guint64 next_bytes;
  guint64 end_bytes;
  guint   window;
  guint   outstanding;
  SimList idle;           /* SimProcess.pool_link */
  /* A traced pool (sim_shared_cursor_init_trace): the pool's I/Os in queue
   * order, each handed at its recorded arrival to the thread idle longest,
   * or to the first that frees up when all are busy (sunrpc's queue in
   * front of nfsd threads).  NULL: the sequential file above. */
  const SimTraceIo *trace;
  gsize   n_trace;
  gsize   trace_next;         /* the first I/O not yet taken */
  Sim    *sim;
  SimEventId arrival_event;   /* the next arrival, while threads idle */
  SimTime arrival_at;         /* when it fires */
  SimTime *done_ns;           /* each I/O's simulated completion; SIM_TIME_NEVER before */
  guint8  *taken;
} SimSharedCursor;

void sim_shared_cursor_init (SimSharedCursor *c, guint64 start_bytes, guint64 end_bytes,
                             guint window);
/* A pool serving @n traced I/Os (borrowed) of @sim: each may be taken at
 * its arrival_ns, or, when it follows another (after >= 0), gap_ns after
 * that one's simulated completion; the first such in trace order goes to
 * the thread idle longest.  Allocates the per-I/O state once; free it
 * with sim_shared_cursor_clear. */
void sim_shared_cursor_init_trace (SimSharedCursor *c, Sim *sim, const SimTraceIo *trace,
                                   gsize n);
void sim_shared_cursor_clear (SimSharedCursor *c);

typedef struct {
  const char      *name;
  SimOp            op;
  SimPattern       pattern;
  guint64          bs_bytes;        /* multiple of 512 */
  guint            iodepth;         /* 1 = synchronous */
  SimTime          think_ns;
  gboolean         think_exponential;
  SimTime          start_ns;
  SimTime          stop_ns;         /* 0 = none */
  guint64          size_bytes;      /* 0 = no limit */
  guint64          offset_bytes;    /* region start */
  guint64          region_bytes;    /* region length */
  const SimTraceIo *trace_ios;      /* SIM_PATTERN_TRACE; borrowed */
  const SimTraceSource *trace_source; /* SIM_PATTERN_TRACE without trace_ios:
                                     * read a window at a time; borrowed */
  gsize            n_trace_ios;
  gboolean         async_writes;    /* writes reach the block layer as async
                                     * (writeback); default: sync (O_DIRECT) */
  int              ioprio_class;    /* 0 none (from nice), 1 RT, 2 BE, 3 IDLE */
  int              ioprio_level;    /* 0..7 */
  int              nice;            /* -20..19 */
  SimIoContext    *shared_ioc;      /* borrowed: threads sharing one io context
                                     * (CLONE_IO); NULL = own context */
  SimStreamMode    stream;
  SimSharedCursor *cursor;          /* SIM_STREAM_SHARED; borrowed */
  guint            thread_index;    /* SIM_STREAM_INTERLEAVED */
  guint            n_threads;
  /* Buffered reads through the page cache (NULL: O_DIRECT). */
  SimPageCache    *page_cache;      /* borrowed */
  SimFile         *file;            /* borrowed; covers the process's region */
  SimRaState      *shared_ra;       /* borrowed: one readahead state for a pool
                                     * (nfsd's per-file cache); NULL = own open */
  SimRaAdvice      fadvise;         /* posix_fadvise() on its own open file */
  guint            fsync_every;     /* buffered writes: fsync() after every N
                                     * writes (fio's fsync=N); 0 = never */
  gboolean         end_fsync;       /* fsync() the file before exiting */
  gboolean         syncer;          /* each I/O is a sync() call (no bytes) */
  gboolean         aio;             /* direct I/O through io_submit/io_getevents
                                     * (libaio), even at iodepth 1 */
  SimTime          user_ns;         /* host model: the application's own CPU
                                     * work (user mode) before each I/O */
  SimRawPath       raw;             /* direct I/O to a raw device of 2.4/2.5.35 */
  /* Generated streams only: */
  gboolean         rwmix;           /* each I/O reads with rwmix_read_percent % odds,
                                     * else writes (fio's rw=randrw/readwrite with
                                     * rwmixread: a draw per I/O, separate sequential
                                     * positions per direction); op is ignored */
  guint            rwmix_read_percent; /* 0..100 */
  double           rate_iops;       /* 0 = none: no I/O starts before start +
                                     * n / rate_iops (fio's rate_iops with
                                     * rate_process=linear) */
} SimProcessConfig;

typedef struct _SimIo      SimIo;

/* Called when one I/O of @p completed (for per-I/O logs). */
typedef void (*SimIoDoneFunc) (gpointer data, SimProcess *p, SimOp op,
                               guint64 offset_bytes, guint64 bytes,
                               SimTime issue_ns, SimTime complete_ns);

struct _SimProcess {
  Sim             *sim;
  SimRequestQueue *q;
  char            *name;
  guint            pid;
  SimIoContext     own_ioc;
  SimIoContext    *ioc;               /* own_ioc, or a shared one */
  SimList          pool_link;         /* idle in a shared stream's pool */
  SimRaState       own_ra;            /* readahead state of its own open file */
  SimProcessConfig cfg;
  SimRng          *rng;
  SimRng          *rwmix_rng;        /* cfg.rwmix: the direction of each I/O */

  /* state */
  SimIo           *io_free;
  GPtrArray       *io_chunks;
  SimIo           *cur_io;            /* being split into bios */
  guint64          cur_sector;
  guint64          cur_sectors_left;
  SimBioWaiter     waiter;
  SimPlug          plug;              /* its blk_plug while it submits direct I/O */
  gboolean         blocked;           /* sleeping for a free request */
  gboolean         started;
  gboolean         finished;
  guint            outstanding;
  guint64          next_offset;
  guint64          next_write_offset; /* cfg.rwmix, sequential: the writes' position */
  guint64          slots_ahead[2];    /* the next two I/Os' (draw_random_slot) */
  gboolean         drawn_ahead;
  guint64          rate_started;      /* cfg.rate_iops: I/Os started so far */
  SimTime          rate_t0_ns;        /* cfg.rate_iops: when the first one could start */
  guint64          bytes_issued;
  gsize            trace_pos;
  SimTraceIo      *trace_window;      /* cfg.trace_source: SIM_TRACE_WINDOW_IOS I/Os */
  gsize            window_first;      /* the trace index of trace_window[0] */
  gsize            window_len;
  gsize            pool_item;         /* a traced pool: the I/O it serves */
  SimEventId       wake;
  SimTime          last_issue_ns;
  SimTime          last_complete_ns;
  SimTime          ready_ns;          /* no new I/O before (think time) */

  /* results */
  SimHist          latency;
  SimHist          fsync_latency;     /* fsync() calls (fsync_every, end_fsync) */
  guint            writes_since_fsync;
  SimPageSync      end_sync;
  guint64          ios;
  guint64          bytes;
  guint64          sleeps;
  SimTime          first_issue_ns;
  SimTime          end_ns;            /* last completion */

  SimIoDoneFunc    io_done;
  gpointer         io_done_data;

  /* The host model (sim_process_set_host); NULL: system calls are free. */
  SimCpus         *cpus;
  gpointer         host;
  const SimHostOps *host_ops;
  SimThread        thread;
  SimHostExec      host_exec;
  gboolean         in_call;           /* its thread is in a system call */
  gboolean         waiting_io;        /* blocked until an I/O completes */
  gboolean         waiting_cache;     /* blocked in the page cache */
  gboolean         waiting_think;     /* sleeping its think time */
  SimTime          timeslice_ns;      /* back of the run queue after this long
                                       * on a CPU while others wait (0: never) */
  SimList          completed;         /* SimIo done, not yet seen by the thread */
  /* raw I/O (cfg.raw) */
  SimIo           *raw_next_chunk;    /* 2.4: its chunk is done, the next one waits */
  SimList          reissue;           /* 2.5 aio: short events reaped, rest to submit */
  guint64          short_events;      /* 2.5 aio: events with fewer bytes than asked */
  guint64          iocbs;             /* 2.5 aio: iocbs submitted */
};

/* @cfg is copied (name duplicated; trace_ios borrowed). */
SimProcess *sim_process_new   (Sim                    *sim,
                               SimRequestQueue        *q,
                               const SimProcessConfig *cfg);
void        sim_process_free  (SimProcess             *p);
/* Run @p on @cpus: its system calls cost the host's CPU steps (@ops on
 * @host).  Before sim_process_start; generated streams only (no trace
 * replay, shared pools or sync loops), buffered I/O synchronous. */
void        sim_process_set_host (SimProcess          *p,
                               SimCpus                *cpus,
                               gpointer                host,
                               const SimHostOps       *ops);
/* Schedule the process's start. */
void        sim_process_start (SimProcess             *p);

G_END_DECLS
