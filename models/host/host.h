/* host.h — the host model of a run: CPUs, the era profile's locks, and
 * the executor that runs a profile's system-call steps on a process's
 * thread (kernel-algorithms.md §8; sim/sim-cpu.h, sim/sim-lock.h).
 *
 * Lock instances follow their scope: one per machine (global), per device
 * (fs: a file system per device), per file (inode; a direct-I/O process
 * counts as its own file), per request queue or per NUMA node (the node
 * of the CPU the thread runs on when it takes the lock).  Request completions are
 * interrupt work of the profile's complete path and, for a buffered
 * write, its end_writeback path per 4 KiB block; when those take
 * interrupt-disabling locks they run as code on an interrupt context
 * (sim_cpu_irq_thread) and their holds contend with the threads' (the
 * file's tree_lock against its writer), else they are CPU time only.
 * Lock instances of an interrupt: the request's queue, its buffered file
 * (found from the processes on that queue), the node of the CPU. */
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

/* vmstat: one row per @interval_ns, as CSV rows "run,time_s,r,b,bi,bo,
 * in,cs,us,sy,id,wa" to @csv and/or as vmstat's table appended to @table
 * (either may be NULL).  bi/bo in KiB/s (vmstat's 1 KiB blocks) over the
 * queues given to host_add_queue. */
#define HOST_VMSTAT_CSV_HEADER "run,time_s,r,b,bi,bo,in,cs,us,sy,id,wa\n"
void         host_vmstat_start (Host *h, const char *run_label, SimTime interval_ns,
                                FILE *csv, GString *table);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Host, host_free)

G_END_DECLS
