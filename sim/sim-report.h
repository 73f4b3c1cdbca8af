/* sim-report.h — results of one simulated run, and their text and JSON
 * forms.  Text tables line up (each column as wide as its widest cell,
 * never narrower than its historical width); JSON follows the shape in README
 * ({"scenario", "seed", "runs": [{"sched", "processes", "devices"}]}). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include "sim/sim.h"
#include "sim/sim-pagecache.h"
#include "sim/sim-cpu.h"
#include "sim/sim-lock.h"
#include "sim/sim-queue.h"
#include "sim/sim-wbt.h"

G_BEGIN_DECLS

typedef struct {
  char    *name;
  guint    pid;
  char    *device;
  char    *op;            /* read | write | mixed | sync */
  guint64  ios;
  guint64  bytes;
  SimTime  active_ns;     /* from start to last completion */
  double   mb_per_s;      /* 10^6 bytes per second over active_ns */
  double   iops;
  double   lat_mean_ns;
  SimTime  lat_p50_ns;
  SimTime  lat_p95_ns;
  SimTime  lat_p99_ns;
  SimTime  lat_max_ns;
  guint64  sleeps;        /* waits for a free request */
  guint64  iocbs;         /* the 2.5.35 aio raw port: iocbs submitted (0: none) */
  guint64  short_events;  /* of them, events with fewer bytes than asked, the
                           * rest resubmitted */
  double   disk_share;    /* its io context's share of the device's service time */
  guint64  fsyncs;        /* fsync() calls completed (fsync, end_fsync) */
  double   fsync_mean_ns;
  SimTime  fsync_p99_ns;
  SimTime  fsync_max_ns;
} SimProcessResult;

/* The threads of one [process NAME] group together (a pool, a dump run). */
typedef struct {
  char    *name;
  char    *device;
  guint    threads;
  guint64  ios;
  guint64  bytes;
  SimTime  active_ns;     /* first start to last completion */
  double   mb_per_s;
  double   iops;
  double   lat_mean_ns;
  SimTime  lat_p50_ns;
  SimTime  lat_p99_ns;
  SimTime  lat_max_ns;
  double   disk_share;    /* share of the device's service time */
  /* An [nfs] group (sim/sim-nfs.h): how the server served its READs. */
  gboolean is_nfs;
  guint64  nfs_out_of_order;   /* replies sent below an offset replied to before */
  guint64  nfs_queued;         /* times the transport waited for a thread */
  guint64  nfs_ra_lost;        /* raparms write-backs over another thread's */
  guint64  nfs_ra_stale;       /* reads that began from a window ending before them */
  guint    nfs_threads_used;   /* threads that served at least one READ */
  guint64  nfs_rsize_bytes;    /* the mount's rsize */
} SimGroupResult;

/* The loop driver in front of a device ([device] via = loop, sim-loop.h). */
typedef struct {
  guint    tags;
  guint64  max_io_bytes;        /* FUSE piece size */
  guint    max_background;      /* FUSE pieces at the server at once */
  guint32  max_sectors;         /* the loop queue's */
  gboolean rotational;          /* as the elevators saw it */
  guint    max_in_flight;       /* loop requests at once (what the elevator dispatched) */
  guint64  pieces;              /* handed to the model */
  double   mean_model_in_flight;/* pieces outstanding at the model, time-weighted */
  guint    max_model_in_flight;
  guint    max_pending;         /* pieces waiting for a model slot at once */
} SimLoopResult;

/* blk-wbt on the device's queue (sim-wbt.h), at the end of the run. */
typedef struct {
  gboolean    enabled;
  SimTime     min_lat_ns;       /* wbt_lat_usec * 1000 (0 when off) */
  guint       queue_depth;
  gboolean    write_cache;
  gint        scale_step;
  guint       max_depth;
  guint       wb_normal;
  guint       wb_background;
  guint       inflight;
  SimWbtStats stats;
} SimWbtResult;

typedef struct {
  char    *name;
  char    *sched;
  char    *model;
  gboolean via_loop;      /* the fields of @loop are set */
  SimLoopResult loop;
  gboolean has_wbt;       /* a blk-mq queue: the fields of @wbt are set */
  SimWbtResult wbt;
  double   utilisation;
  guint64  merges;        /* back + front + request merges */
  double   mean_queue_depth;
  double   mean_in_flight;
  double   jain_index;    /* Jain's fairness index over the disk-time shares of the
                           * groups using the device (1 = equal shares) */
  SimQueueCounters counters;
} SimDeviceResult;

/* One bus or adapter at the end of a run (sim/sim-topology.h SimTopoStats). */
typedef struct {
  char    *name;
  char    *kind;          /* adapter, shared, ide-channel */
  char    *parent;        /* may be NULL */
  guint    devices;
  guint64  commands;
  guint64  bytes;
  double   throughput_bytes_per_s;
  double   utilisation;
  double   mean_wait_ns;
  double   mean_slot_wait_ns;
  guint    max_outstanding;
  guint    can_queue;
  guint    max_active_devices;
  const char *arbitration;  /* IDE channel: "fifo" or "choose-drive" (static) */
  guint64  stalls;          /* IDE channel: drives stalled by choose_drive */
  SimTime  snooze_ns;       /* IDE channel: busy without a command */
} SimBusResult;

/* One call site of a lock (lockmeter's rows under the lock's). */
typedef struct {
  char         *name;         /* "(other)" for the unnamed site */
  SimLockStats  stats;
} SimLockSiteResult;

/* One lock instance's lock_stat figures at the end of a run. */
typedef struct {
  char         *name;
  SimLockKind   kind;
  SimLockOrder  order;
  SimLockStats  stats;
  GPtrArray    *sites;        /* SimLockSiteResult: the named sites in the
                               * profile's order, then "(other)" if it took
                               * the lock; empty for a lock without named sites */
} SimLockResult;

/* One row of the run's kernel profile (the host model): CPU time charged to
 * a function of the era profile, or spent spinning for a lock. */
typedef struct {
  char    *name;          /* a profile symbol, or "spin: LOCK" */
  SimTime  cpu_ns;
  gboolean irqs_off;      /* run with interrupts off (irq lock held or sought) */
} SimSymbolResult;

typedef struct {
  char      *label;       /* elevator(s) of this run */
  char      *writeback;
  guint64    seed;
  guint      hz;
  SimTime    elapsed_ns;
  guint64    events;
  GPtrArray *processes;   /* SimProcessResult */
  GPtrArray *groups;      /* SimGroupResult, in scenario order */
  GPtrArray *devices;     /* SimDeviceResult */
  gboolean   has_page_cache;
  SimPageCacheStats page_cache;   /* at the end of the run */
  /* The host model ([host] cpus): */
  guint      n_cpus;      /* 0: none */
  char      *profile;
  SimVmstatRow cpu;       /* over the whole run */
  GPtrArray *locks;       /* SimLockResult, busiest first */
  GPtrArray *symbols;     /* SimSymbolResult, most CPU first (readprofile) */
  guint64    journal_commits; /* kjournald (a profile's [journal]): commits, */
  guint64    journal_pages;   /* ... ordered data pages they wrote, */
  guint64    journal_wakes;   /* ... lock retaken after a sleep, */
  guint64    journal_request_waits; /* ... sleeps on a full request pool */
  guint64    flusher_batches; /* pdflush threads (a profile's writeback path,
                               * global-2.6): batches, */
  guint64    flusher_pages;   /* ... pages they ran the path for, */
  SimTime    flusher_sys_ns;  /* ... their SYS time */
  char      *vmstat;      /* vmstat's table, when asked for */
  /* Buses and adapters ([bus], [adapter] groups): */
  char      *topology;    /* their table; NULL without */
  GPtrArray *buses;       /* SimBusResult, creation order */
} SimRunResult;

SimRunResult *sim_run_result_new  (void);
/* An empty array of SimLockSiteResult that frees its elements. */
GPtrArray    *sim_lock_site_results_new (void);
void          sim_run_result_free (SimRunResult *r);

void   sim_report_run_text      (GString *out, const SimRunResult *r);
/* The run's kernel profile as readprofile prints it, most CPU first (at most
 * @rows rows; 0: all); nothing without the host model. */
void   sim_report_profile_text  (GString *out, const SimRunResult *r, guint rows);
/* The same as CSV rows "run,function,cpu_s,share_pct,irqs_off" (no header). */
void   sim_report_profile_csv   (GString *out, const SimRunResult *r);
#define SIM_REPORT_PROFILE_CSV_HEADER "run,function,cpu_s,share_pct,irqs_off\n"
/* Side-by-side table of several runs of one scenario (rows: process groups). */
void   sim_report_compare_text  (GString *out, GPtrArray *runs);
/* The whole scenario as a JSON document (pretty, deterministic). */
char  *sim_report_json          (const char *scenario, guint64 seed, GPtrArray *runs);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRunResult, sim_run_result_free)

G_END_DECLS
