/* host.h — the host model of a run: CPUs, the era profile's locks, and
 * the executor that runs a profile's system-call steps on a process's
 * thread (kernel-algorithms.md §8; sim/sim-cpu.h, sim/sim-lock.h).
 *
 * Lock instances follow their scope: one per machine (global), per device
 * (fs: a file system per device), per file (inode; a direct-I/O process
 * counts as its own file), per request queue, per NUMA node (the node
 * of the CPU the thread runs on when it takes the lock) or per host
 * adapter (a device on no adapter: its own).  Request completions are
 * interrupt work of the profile's complete path, bh_complete per raw
 * buffer_head and, for a buffered write, its end_writeback path per 4 KiB
 * block; when those take interrupt-disabling locks they run as code on an
 * interrupt context (sim_cpu_irq_thread) and their holds contend with the
 * threads' (the file's tree_lock against its writer), else they are CPU
 * time only.  Lock instances of an interrupt: the request's queue, its
 * buffered file (found from the processes on that queue), the node of the
 * CPU.
 *
 * kjournald (a profile's [journal] group; 2.4.18 fs/jbd/journal.c and
 * commit.c): one kernel thread per file system (device with a page
 * cache), holding the journal's lock (the BKL: kjournald calls
 * lock_kernel() once and never unlocks it) whenever it is on a CPU;
 * schedule() drops it while kjournald sleeps and retakes it, spinning,
 * when it runs again (release_kernel_lock/reacquire_kernel_lock), at the
 * lock's site the profile names.  A buffered write opens a transaction
 * when none runs (journal_start -> get_transaction), due commit_interval
 * later (t_expires); at that time kjournald wakes and commits:
 * - lock_down steps (T_LOCKED, revoke records, the switch to T_FLUSH);
 *   the transaction's data is what the file system dirtied until then;
 * - write_out_data: batches of `batch` of those pages, oldest first,
 *   started as async writes (ll_rw_block), each page costing the submit
 *   steps; with the queue's write pool full, kjournald sleeps in
 *   __get_request_wait until a quarter of it is free (batch_requests), or
 *   takes its turn at the next completion once the writeback policy's
 *   flusher has taken requests there meanwhile (the waiters' FIFO);
 * - wait_on_buffer until every page of the file system under writeback
 *   then has been written (woken from a completion's interrupt work),
 *   asleep without the lock, then the cleanup steps per page;
 * - the finish steps (metadata to the log, commit record, phase 7), then
 *   sleep until the next transaction expires.
 * Simplified: the log's own writes (descriptor, metadata copies, commit
 * block) are CPU only, with no I/O and no sleep; a transaction is not
 * committed early when full (ordered data uses no log space); writers are
 * not stalled while the transaction is T_LOCKED; a timer that fires during
 * a commit starts the next one right after it. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "sim/sim.h"
#include "sim/sim-cpu.h"
#include "sim/sim-lock.h"
#include "sim/sim-process.h"
#include "sim/sim-queue.h"
#include "sim/sim-pagecache.h"
#include "models/host/host-profile.h"
#include "models/wb/wb.h"

G_BEGIN_DECLS

typedef struct _Host Host;

/* Takes ownership of @profile. */
Host        *host_new          (Sim *sim, guint n_cpus, HostProfile *profile);
void         host_free         (Host *h);
/* NUMA nodes (sim_cpus_set_nodes): node-scoped locks get one instance
 * per node.  @n_nodes must divide the CPU count. */
void         host_set_nodes    (Host *h, guint n_nodes);
SimCpus     *host_cpus         (Host *h);
const HostProfile *host_profile (const Host *h);
/* Run @p on the host's CPUs with the profile's system-call costs; it
 * yields its CPU between calls after @timeslice_ns while others wait. */
void         host_add_process  (Host *h, SimProcess *p, SimTime timeslice_ns);
/* The page cache whose congestion wake-ups the completions pay for: the
 * interrupt that freed a request runs the wake path once per task it
 * woke (may stay unset: none). */
void         host_set_page_cache (Host *h, SimPageCache *pc);
/* Charge @q's request completions as interrupt work. */
void         host_add_queue    (Host *h, SimRequestQueue *q);
/* Every lock instance created so far, in creation order. */
GPtrArray   *host_locks        (Host *h);
/* CPU time run so far per symbol of its profile (HostProfile.symbols, same
 * order): what a readprofile of the run would charge each function. */
const SimTime *host_symbol_ns  (const Host *h);

/* vmstat: one row per @interval_ns, as CSV rows "run,time_s,r,b,bi,bo,
 * in,cs,us,sy,id,wa" to @csv and/or as vmstat's table appended to @table
 * (either may be NULL).  bi/bo in KiB/s (vmstat's 1 KiB blocks) over the
 * queues given to host_add_queue. */
#define HOST_VMSTAT_CSV_HEADER "run,time_s,r,b,bi,bo,in,cs,us,sy,id,wa\n"
void         host_vmstat_start (Host *h, const char *run_label, SimTime interval_ns,
                                FILE *csv, GString *table);

/* kjournald's totals, summed over file systems. */
typedef struct {
  guint64 commits;   /* commits finished */
  guint64 pages;     /* data pages they wrote (ordered mode) */
  guint64 wakes;     /* times kjournald retook its lock after a sleep */
  guint64 request_waits; /* sleeps in __get_request_wait (write pool full) */
} HostJournalStats;

/* Start a kjournald for each device of @pc (none without a [journal]
 * group in the profile).  After host_add_queue for those queues. */
void         host_start_journals (Host *h, SimPageCache *pc);
void         host_journal_stats  (Host *h, HostJournalStats *out);

/* pdflush threads (2.6.9 mm/pdflush.c; mm/page-writeback.c
 * background_writeout and wb_kupdate -> fs/fs-writeback.c
 * writeback_inodes -> sync_sb_inodes -> do_writepages ->
 * mpage_writepages): when the profile's writeback path has steps and @w's
 * policy lets its flusher run on threads (WB_F_FLUSHER_CPU), its
 * background writeout and kupdate run on kernel threads on the host's
 * CPUs, "pdflush/0" and "pdflush/1" (WB_FLUSHER_*).  Before each batch of
 * one device goes out, its thread runs the writeback path: the call steps
 * once (sync_sb_inodes' inode_lock for that superblock) and the per-unit
 * steps per page (test_clear_page_dirty, test_set_page_writeback under
 * the file's tree_lock, the buffer heads, bio_alloc, __make_request under
 * the queue's lock); lock instances are those of the batch's queue, its
 * first page's file and the thread's CPU's node.  So the flusher's CPU
 * time and lock holds are real, and CPU contention delays its
 * submissions.  Between runs a thread sleeps (interruptible).  FALSE (and
 * the flusher's work stays free) otherwise.  @w must outlive the run. */
gboolean     host_start_flushers (Host *h, WbPolicy *w);

/* The pdflush threads' totals. */
typedef struct {
  guint64 batches;   /* writeback path runs (one per device batch) */
  guint64 pages;     /* pages their per-unit steps ran for */
  SimTime sys_ns;    /* their completed SYS time (spins included) */
} HostFlusherStats;
void         host_flusher_stats  (Host *h, HostFlusherStats *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Host, host_free)

G_END_DECLS
