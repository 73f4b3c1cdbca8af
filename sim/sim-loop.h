/* sim-loop.h — a loop device with direct I/O in front of a device model:
 * the stack `iosim emulate` builds (a loop device on a FUSE file whose
 * user-space server takes its service times from the model), so that a
 * simulated and an emulated device describe one system.
 *
 * What the real stack does (Linux 6.x, checked on 6.18):
 *  - drivers/block/loop.c loop_add(): one hardware queue with
 *    tag_set.queue_depth = hw_queue_depth (LOOP_DEFAULT_HW_Q_DEPTH 128,
 *    /sys/module/loop/parameters/hw_queue_depth), so blk-mq and its
 *    elevator may have 128 requests at the loop driver at once; the queue's
 *    max_hw_sectors is BLK_DEF_MAX_SECTORS (measured here: max_sectors_kb =
 *    max_hw_sectors_kb = 1280), the logical block 512 bytes on a backing
 *    file without a block device; max_segments 128 and max_segment_size
 *    64 KiB (measured), so that requests of scattered 4 KiB pages (the
 *    page cache's, an O_DIRECT buffer's) stop at 512 KiB, the queue's
 *    max_segments (sim-queue.h);
 *  - loop_update_rotational(): rotational only when the backing file's
 *    superblock has a rotational s_bdev; a FUSE file has none, so the loop
 *    device is non-rotational (sysfs queue/rotational may override it);
 *  - lo_rw_aio(): with direct I/O each request becomes one IOCB_DIRECT
 *    kiocb on the backing file;
 *  - fs/fuse/file.c fuse_direct_io(): the kiocb is cut into pieces of
 *    min(count, max_read or max_write) bytes (max_pages * 4 KiB, at most
 *    fs.fuse.max_pages_limit = 256 pages = 1 MiB by default), which an
 *    async kiocb sends without waiting for each other (fuse_async_req_send);
 *  - fuse_async_req_send() sends each piece with fuse_simple_background():
 *    at most fc->max_background of them are at the server at once
 *    (FUSE_DEFAULT_MAX_BACKGROUND 12 in fs/fuse/inode.c, unless the server
 *    raises it in its FUSE_INIT reply, as iosim emulate does to 512), the
 *    rest wait in the connection's bg_queue in order (flush_bg_queue);
 *  - the user-space server hands the pieces to the model in arrival order;
 *    the model has its own queue_depth and parallelism, and pieces beyond
 *    them wait FIFO.  The loop request completes when its last piece does
 *    (lo_rw_aio_complete -> blk_mq_complete_request).
 *
 * So: the block layer sees `tags` as the device's queue depth; each request
 * it starts becomes ceil(bytes / max_io) pieces; at most min (the model's
 * queue_depth, max_background) pieces are outstanding at the model (the
 * rest wait in one FIFO: the two FIFO stages in a row order and time them
 * as one), of which the device serves `parallelism` at once as for any
 * command (sim-device.c).  Pieces come from a pool sized at creation for
 * the worst case (tags full requests), so the hot path allocates nothing.
 *
 * Simplifications: the loop worker's and the FUSE round trip's CPU time
 * are not charged (the emulator measures them as its timing error); the
 * server is assumed to negotiate FUSE_ASYNC_DIO (libfuse 3 asks for it,
 * iosim emulate checks it; without it fuse_direct_IO sends the pieces of
 * one request one after another); the request pool stays per direction
 * (sim-queue.h) where blk-mq's is shared; a loop device cannot sit behind
 * a simulated adapter or bus.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"
#include "sim/sim-request.h"
#include "sim/sim-stats.h"

G_BEGIN_DECLS

typedef struct _SimDevice SimDevice;

#define SIM_LOOP_DEFAULT_TAGS          128u      /* LOOP_DEFAULT_HW_Q_DEPTH */
#define SIM_LOOP_DEFAULT_MAX_SECTORS   2560u     /* 1280 KiB, measured max_sectors_kb */
#define SIM_LOOP_DEFAULT_MAX_IO_BYTES  (1024u * 1024u)  /* FUSE 256 pages of 4 KiB */
#define SIM_LOOP_PAGE_BYTES            4096u     /* FUSE max_read is in whole pages */
#define SIM_LOOP_MAX_MAX_IO_BYTES      (65535u * SIM_LOOP_PAGE_BYTES)  /* max_pages_limit's ceiling */
#define SIM_LOOP_FUSE_DEFAULT_MAX_BACKGROUND 12u /* FUSE_DEFAULT_MAX_BACKGROUND, any server */
/* What `iosim emulate` asks for in its FUSE_INIT reply (replay/replay-
 * emulate.c EMU_MAX_BACKGROUND): more than 128 tags of two pieces each, so
 * that FUSE adds no queue of its own.  Keep the two equal. */
#define SIM_LOOP_DEFAULT_MAX_BACKGROUND 512u
#define SIM_LOOP_MAX_MAX_BACKGROUND    65535u    /* fuse_init_out.max_background is a u16 */

/* Whether the loop device reports itself rotational to the elevators. */
typedef enum {
  SIM_LOOP_ROT_OFF,      /* the kernel's choice for a file on FUSE (no s_bdev) */
  SIM_LOOP_ROT_ON,       /* echo 1 > /sys/block/loopN/queue/rotational */
  SIM_LOOP_ROT_INHERIT,  /* whatever the device model says */
} SimLoopRotational;

typedef struct {
  guint             tags;            /* hw_queue_depth: requests at the driver */
  guint32           max_sectors;     /* the loop queue's max_sectors */
  guint32           max_io_sectors;  /* FUSE max_read/max_write, as sectors */
  guint             max_background;  /* FUSE pieces at the server at once */
  SimLoopRotational rotational;
} SimLoopConfig;

void        sim_loop_config_init     (SimLoopConfig *cfg);
/* "false", "true" or "inherit" (also 0 and 1). */
gboolean    sim_loop_rotational_parse (const char        *text,
                                       SimLoopRotational *out);
const char *sim_loop_rotational_name (SimLoopRotational rot);

/* One piece of a loop request at the model: a command the device serves
 * like any other (its SimRequest is what sim-device.c sees). */
typedef struct {
  SimRequest  rq;
  SimRequest *parent;
} SimLoopPiece;

typedef struct _SimLoop SimLoop;
struct _SimLoop {
  SimDevice     *dev;
  SimLoopConfig  cfg;
  guint          model_depth;       /* min (the model's queue_depth, max_background) */
  guint          model_in_flight;   /* pieces handed to the model, not done */
  SimList        pending;           /* pieces waiting for a model slot (FIFO) */
  guint          n_pending;
  SimLoopPiece  *pool;              /* all pieces; owned */
  guint          pool_size;
  SimLoopPiece  *free_list;         /* linked through rq.hash_next */
  /* statistics */
  guint64        requests;          /* loop requests started */
  guint64        pieces;            /* pieces handed to the model */
  guint          max_in_flight;     /* loop requests at once */
  guint          max_model_in_flight;
  guint          max_pending;
  SimTimeAvg     model_in_flight_avg;
};

/* Puts @dev behind a loop driver: dev->queue_depth becomes cfg->tags.
 * Call before the first request; @dev must not be attached to an adapter. */
void      sim_device_set_loop     (SimDevice           *dev,
                                   const SimLoopConfig *cfg);

/* For sim-device.c. */
void      sim_loop_free           (SimLoop    *loop);
void      sim_loop_start          (SimLoop    *loop,
                                   SimRequest *rq);
/* @piece_rq finished its service at the model. */
void      sim_loop_piece_done     (SimLoop    *loop,
                                   SimRequest *piece_rq);
/* What the elevators are told, given what the model says. */
gboolean  sim_loop_rotational     (const SimLoop *loop,
                                   gboolean       model_rotational);

/* Pieces a request of @nr_sectors becomes (fuse_direct_io's loop). */
static inline guint
sim_loop_pieces_for (const SimLoopConfig *cfg, guint32 nr_sectors)
{
  return (nr_sectors + cfg->max_io_sectors - 1) / cfg->max_io_sectors;
}

G_END_DECLS
