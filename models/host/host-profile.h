/* host-profile.h — era profiles of the host's CPU and lock costs: which
 * locks the buffered write and read paths, request submission and
 * completion take, and what each step costs (kernel-algorithms.md §8).
 *
 * A profile is data, a GKeyFile in models/profiles/NAME.ini:
 *
 *   [profile]   era, summary, interrupts = queue | preempt (queue: interrupt
 *               work waits for a free CPU, the default; preempt: it
 *               interrupts running work on a CPU with interrupts on,
 *               sim_cpus_set_irq_preempt), scheduler = fifo | o1 (fifo: one
 *               run queue in wake-up order, the default; o1: 2.6's O(1)
 *               dynamic priorities with wake-up preemption,
 *               sim_cpus_set_sched)
 *   [costs]     named times (syscall = 0.7us, page_cache_insert = 1.5us ...)
 *               and copy_bandwidth (bytes/s of __copy_from_user)
 *   [lock NAME] scope = global | fs | inode | mapping | queue | node | adapter,
 *               kind = spin | sleep, irq = false | true (spin_lock_irq:
 *               interrupts off while spinning for it and holding it),
 *               order = fifo | unfair
 *   [path NAME] call = STEPS (once per system call), each = STEPS (per page
 *               for read and write, per request for submit and complete,
 *               per iocb for aio_submit and aio_reap, per buffer_head
 *               for bh_submit and bh_complete)
 *
 * Paths: write, read (buffered), submit (one request to the block layer),
 * complete (its completion, in interrupt context), aio_submit, aio_reap,
 * reclaim (per page a buffered write's allocations reclaimed: direct
 * reclaim on the writer's CPU), writeback (per page a writer throttled
 * in balance_dirty_pages wrote back itself), bh_submit and bh_complete
 * (raw I/O of 2.4 and 2.5.35: one buffer_head per sector submitted, and
 * its end_io in interrupt context).  Reclaim and writeback run after the
 * write's page-cache work, on the writer's thread.  A path a profile
 * leaves out costs nothing.  end_writeback: per 4 KiB block of a completed
 * buffered-write request, in interrupt context after the complete path
 * (fs/buffer.c end_buffer_async_write, mm/filemap.c end_page_writeback).
 * Interrupt paths (complete, bh_complete, end_writeback, wake) really take the locks
 * declared irq = true (spin_lock_irqsave: they contend with the threads
 * holding them on other CPUs, sim_cpu_irq_thread); a lock without irq =
 * true is counted there as CPU time only (a profile that does not say how
 * the lock is taken), and a lock held to the end of the call is refused.
 * balance: each pass of a throttled writer's balance_dirty_pages loop
 * after a sleep, on its thread: call steps once, per-unit steps once per
 * device with dirty pages (2.6.9 writeback_inodes visits every superblock
 * with dirty inodes, sync_sb_inodes under inode_lock for each).
 * wake: in the interrupt of a completion whose freed request ended
 * congestion_wait sleeps, per task woken (__wake_up's try_to_wake_up);
 * an interrupt path like complete and end_writeback.
 * STEPS is a comma-separated list of
 *   LOCK:TIME  take LOCK, hold it TIME (system CPU), release it;
 *   LOCK@SITE:TIME  the same, taken at call site SITE (a kernel function:
 *              bkl@ext3_commit_write:5us); the run reports each site's
 *              figures under the lock's, as lockmeter did.  Any lock step
 *              may name a site (LOCK@SITE:TIME/N, LOCK@SITE+);
 *   LOCK:TIME/N  the same once every N units (a 14-page pagevec: lru_lock
 *              taken once per 14 pages, held for all of them);
 *   LOCK+      take LOCK and hold it to the end of the call (call steps only);
 *   copy       copy one page (4 KiB) at copy_bandwidth (per-page steps only);
 *   COST       a time from [costs], or a literal time (2us);
 *   COST/N     the same once every N units (work per 16 KiB ia64 page in
 *              a path counted in 4 KiB units: COST/4).
 *   [journal]   kjournald, one per file system (2.4 JBD, fs/jbd/journal.c and
 *               commit.c of 2.4.18); optional, see host.h:
 *               enabled = true | false (no kjournald; default true),
 *               commit_interval = TIME (j_commit_interval), batch = N (data
 *               buffers per ll_rw_block, wbuf[64]), lock = LOCK@SITE (held
 *               whenever kjournald is on a CPU, retaken at SITE after each
 *               sleep: lock_kernel in kjournald, reacquire_kernel_lock in
 *               schedule), and STEPS lists (locks and costs only):
 *               lock_down (once per commit, before the data), submit (per
 *               data buffer written), cleanup (per data buffer once
 *               written), finish (once per commit, after the data)
 * A scenario may override any key (its own [costs], [lock NAME] groups). */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-cpu.h"

G_BEGIN_DECLS

#define HOST_ERROR (host_error_quark ())
GQuark host_error_quark (void);

typedef enum {
  HOST_ERROR_NOT_FOUND,
  HOST_ERROR_INVALID,        /* message names group and key */
} HostError;

typedef enum {
  HOST_LOCK_GLOBAL,          /* one for the machine (BKL, io_request_lock) */
  HOST_LOCK_FS,              /* one per file system (device) */
  HOST_LOCK_INODE,           /* one per file (i_sem, i_mutex; "mapping":
                              * tree_lock, one address space per file) */
  HOST_LOCK_QUEUE,           /* one per request queue (queue_lock) */
  HOST_LOCK_NODE,            /* one per NUMA node ([host] nodes), the node of
                              * the CPU taking it: a zone's lru_lock for the
                              * pages a CPU allocates on its own node */
  HOST_LOCK_ADAPTER,         /* one per host adapter (2.5 SCSI's host_lock, the
                              * queue_lock of all its disks); a device on no
                              * adapter has its own */
} HostLockScope;

typedef struct {
  char          *name;
  HostLockScope  scope;
  gboolean       spin;       /* spinlock (waiters burn CPU); else sleeping */
  gboolean       fifo;       /* hand-off in arrival order; else unfair */
  gboolean       irq;        /* taken with interrupts off (spin_lock_irq) */
  GPtrArray     *sites;      /* char *: call sites named by the steps, in
                              * order of first appearance */
} HostLockDef;

typedef enum {
  HOST_STEP_HOLD,            /* take lock, hold ns, release */
  HOST_STEP_TAKE,            /* take lock until the end of the call */
  HOST_STEP_COPY,            /* one page at copy bandwidth */
  HOST_STEP_CPU,             /* ns of system CPU */
} HostStepKind;

typedef struct {
  HostStepKind kind;
  guint        lock;         /* index into HostProfile.locks */
  guint        site;         /* 0: unnamed; else 1 + index into the lock's sites
                              * (the SimLock site index, sim_lock_add_site) */
  SimTime      ns;
  guint        every;        /* per-unit steps: run on one unit in @every (>= 1) */
  guint        symbol;       /* index into HostProfile.symbols: what its CPU time
                              * is charged to (HOLD, COPY, CPU steps) */
} HostStep;

typedef enum {
  HOST_PATH_WRITE,
  HOST_PATH_READ,
  HOST_PATH_SUBMIT,
  HOST_PATH_COMPLETE,
  HOST_PATH_AIO_SUBMIT,
  HOST_PATH_AIO_REAP,
  HOST_PATH_RECLAIM,
  HOST_PATH_WRITEBACK,
  HOST_PATH_BH_SUBMIT,
  HOST_PATH_BH_COMPLETE,
  HOST_PATH_END_WRITEBACK,
  HOST_PATH_BALANCE,
  HOST_PATH_WAKE,
  HOST_N_PATHS
} HostPathId;

typedef struct {
  GArray *call;              /* HostStep, once per call */
  GArray *each;              /* HostStep, per page / request / iocb */
} HostPath;

/* [journal]: kjournald per file system (host.h); enabled = FALSE without
 * the group. */
typedef struct {
  gboolean  enabled;
  SimTime   commit_interval_ns;
  guint     batch_buffers;
  HostStep  lock;            /* HOLD kind unused: lock and site only */
  GArray   *lock_down;       /* HostStep (HOLD, CPU) */
  GArray   *submit;
  GArray   *cleanup;
  GArray   *finish;
} HostJournalDef;

typedef struct {
  char      *name;
  char      *era;
  char      *summary;
  double     copy_bytes_per_s;
  gboolean   irq_preempt;    /* [profile] interrupts = preempt */
  SimCpuSched sched;         /* [profile] scheduler */
  GPtrArray *locks;          /* HostLockDef */
  GPtrArray *symbols;        /* char *: the functions a profile charges CPU time to,
                              * as readprofile would name them: a lock step's
                              * call site (else its lock), a [costs] key, "copy" */
  GArray    *symbol_irq;     /* gboolean per symbol: run with interrupts off (a
                              * hold of an irq lock) */
  HostPath   paths[HOST_N_PATHS];
  HostJournalDef journal;
} HostProfile;

/* Load profile @name from the first of @search_dirs holding NAME.ini (or
 * @name itself when it is a path), then apply @overrides' [costs] and
 * [lock NAME] groups (may be NULL). */
HostProfile *host_profile_load  (const char         *name,
                                 const char *const  *search_dirs,
                                 GKeyFile           *overrides,
                                 GError            **error);
/* From text (tests, embedded profiles); @name labels errors. */
HostProfile *host_profile_load_data (const char     *text,
                                 const char         *name,
                                 GKeyFile           *overrides,
                                 GError            **error);
void         host_profile_free  (HostProfile *p);

/* The run queue named @name ("fifo" or "o1", as [profile] and [host]
 * scheduler spell it); FALSE for any other name. */
gboolean     host_sched_from_name (const char  *name,
                                 SimCpuSched        *out);
const char  *host_path_name     (HostPathId id);
const char  *host_lock_scope_name (HostLockScope scope);
/* CPU time of @steps without lock waits (holds, copies and costs); a step
 * run once every N units counts 1/N of its time. */
SimTime      host_steps_cpu_ns  (const HostProfile *p, const GArray *steps);
/* Whether @id holds an interrupt-disabling lock in any step (an interrupt
 * path with one runs as code on an interrupt context). */
gboolean     host_path_takes_irq_locks (const HostProfile *p, HostPathId id);
/* Time to copy one 4 KiB page. */
SimTime      host_profile_copy_page_ns (const HostProfile *p);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (HostProfile, host_profile_free)

G_END_DECLS
