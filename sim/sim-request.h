/* sim-request.h — bios, requests and I/O contexts: what every layer passes.
 *
 * A process submits bios; the request queue merges bios into requests
 * (Linux 2.6 single-queue block layer, ../shared/reference/kernel-algorithms.md
 * "Common single-queue elevator framework" and §6).  Requests and bios come
 * from free lists owned by the queue, so the steady state allocates nothing.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"
#include "sim/sim-rbtree.h"

G_BEGIN_DECLS

#define SIM_SECTOR_BYTES 512

typedef enum {
  SIM_OP_READ  = 0,
  SIM_OP_WRITE = 1,
} SimOp;

#define SIM_N_OPS 2

const char *sim_op_name (SimOp op);

/* The request flags the elevators and blk-wbt look at (include/linux/
 * blk_types.h REQ_*).  Who sets which, as the kernel does:
 *  - reads: SYNC (plus AHEAD for readahead windows);
 *  - O_DIRECT writes: SYNC | IDLE (block/fops.c dio_bio_write_op,
 *    fs/iomap/direct-io.c iomap_dio_bio_opflags), which blk-wbt never
 *    throttles;
 *  - writeback for fsync()/sync() (WB_SYNC_ALL): SYNC;
 *  - the flusher's background and periodic writeback (for_background,
 *    for_kupdate): BACKGROUND (include/linux/writeback.h
 *    wbc_to_write_flags);
 *  - other writeback (a writer cleaning its own pages, reclaim): none. */
typedef enum {
  SIM_BIO_SYNC       = 1 << 0,    /* REQ_SYNC */
  SIM_BIO_AHEAD      = 1 << 1,    /* REQ_RAHEAD: readahead */
  SIM_BIO_META       = 1 << 2,    /* REQ_META */
  SIM_BIO_IDLE       = 1 << 3,    /* REQ_IDLE: no more I/O follows soon (O_DIRECT writes) */
  SIM_BIO_BACKGROUND = 1 << 4,    /* REQ_BACKGROUND: background writeback */
  SIM_BIO_PHYS_CONTIG = 1 << 5,   /* its data continues, in the same page, the
                                   * data of the bio before it in the buffer
                                   * (a raw device's per-sector buffer_heads):
                                   * merged behind that bio it adds no segment
                                   * (2.4 blk_seg_merge_ok, 2.5
                                   * blk_phys_contig_segment) */
  SIM_BIO_BH         = 1 << 6,    /* a buffer_head submitted alone (submit_bh of
                                   * a raw device): its end is the bh's end_io */
} SimBioFlags;

typedef struct _SimBio       SimBio;
typedef struct _SimRequest   SimRequest;
typedef struct _SimIoContext SimIoContext;
typedef struct _SimRequestQueue SimRequestQueue;

/* Per-task I/O identity that the elevators key on (CFQ's cic, AS's aic).
 * Threads that share an io context (CLONE_IO) point to the same one. */
struct _SimIoContext {
  guint    pid;              /* of the task that created it */
  const char *comm;          /* its name, for traces; owned by the process */
  int      ioprio_class;     /* 0 none, 1 RT, 2 BE, 3 IDLE (IOPRIO_CLASS_*) */
  int      ioprio_level;     /* 0..7; with class 0 the kernel derives it from nice */
  int      nice;             /* -20..19 */
  guint    nr_tasks;         /* tasks sharing it (CLONE_IO threads) */
  gboolean exited;           /* every task using it has exited */
  SimTime  service_ns;       /* device time its requests used (for disk-time shares) */
  const void *service_dev;   /* the SimDevice whose time service_ns counts; NULL: any
                              * (a task's reclaim may write to other devices) */
  guint    parked_writes;    /* its write bios waiting for a request: a legacy
                              * get_request_wait returns once this is 0 */
};

/* The effective priority class and level of @ioc as CFQ/BFQ see them:
 * class NONE means best effort with level (nice + 20) / 5. */
static inline int
sim_ioc_class (const SimIoContext *ioc)
{
  return ioc->ioprio_class == 0 ? 2 : ioc->ioprio_class;
}

static inline int
sim_ioc_level (const SimIoContext *ioc)
{
  return ioc->ioprio_class == 0 ? (ioc->nice + 20) / 5 : ioc->ioprio_level;
}

/* Called when a bio completes; runs inside the completion event. */
typedef void (*SimBioEndIo) (Sim *sim, SimBio *bio, SimTime now_ns);

struct _SimBio {
  SimBio       *next;        /* chain inside a request, or free list */
  guint64       sector;
  guint32       nr_sectors;
  SimOp         op;
  guint32       flags;       /* SimBioFlags */
  guint32       nr_segments; /* pages its data spans (each a segment of its own:
                              * scattered pages); 0: the queue counts whole pages */
  SimIoContext *ioc;
  SimTime       queue_ns;    /* when it was submitted (Q) */
  SimBioEndIo   end_io;
  gpointer      end_io_data;
  gpointer      end_io_item; /* the submitter's, for end_io: the page cache's first
                              * page, so that completion need not look it up */
};

/* Request state, for asserts and for the dispatch-sort walk. */
typedef enum {
  SIM_RQ_FREE,
  SIM_RQ_PLUGGED,            /* blk-mq: in its task's plug list (SimPlug), not yet in the elevator */
  SIM_RQ_PENDING,            /* allocated, waiting for the queue plug or in the elevator */
  SIM_RQ_DISPATCH,           /* on the dispatch list */
  SIM_RQ_STARTED,            /* handed to the device */
} SimRequestState;

struct _SimRequest {
  /* managed by the request queue core */
  SimList        queuelist;  /* dispatch list, or its task's plug list (SIM_RQ_PLUGGED) */
  SimRequest    *hash_next;  /* back-merge hash chain (by end sector) */
  SimRequest   **hash_pprev;
  SimRequestQueue *q;
  SimRequestState state;
  guint64        sector;
  guint32        nr_sectors;
  guint32        nr_segments;/* nr_phys_segments: at most the queue's max_segments */
  SimOp          op;
  gboolean       sync;
  guint8         wbt_flags;  /* SimWbtFlags of its first bio (wbt_track) */
  SimIoContext  *ioc;        /* of the first bio */
  SimBio        *bio;
  SimBio        *biotail;
  guint32        nr_bios;
  SimTime        alloc_ns;   /* G */
  SimTime        insert_ns;  /* I */
  SimTime        dispatch_ns;/* D */
  guint64        seq;        /* allocation order, for stable tie-breaks */
  guint32        loop_pieces_left; /* via a loop driver: pieces not yet done (sim-loop.h) */
  SimTime        path_ready_ns; /* behind an adapter: when the stage upstream has
                                 * delivered its last byte (sim-topology.c) */

  /* for the elevator */
  SimRbNode      rb_node;    /* sector-sorted tree */
  SimList        fifo;       /* elevator FIFO (deadline: per direction) */
  SimTime        fifo_deadline_ns;
  gpointer       elv_priv[2];
};

static inline guint64
sim_request_end_sector (const SimRequest *rq)
{
  return rq->sector + rq->nr_sectors;
}

static inline guint64
sim_request_bytes (const SimRequest *rq)
{
  return (guint64) rq->nr_sectors * SIM_SECTOR_BYTES;
}

G_END_DECLS
