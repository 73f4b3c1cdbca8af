/* sim-loop.c — the loop driver with direct I/O between the block layer and
 * a device model (see sim-loop.h for the kernel code it follows). */
#include "sim/sim-loop.h"
#include "sim/sim-device.h"
#include "sim/sim-queue.h"

#include <string.h>

void
sim_loop_config_init (SimLoopConfig *cfg)
{
  cfg->tags = SIM_LOOP_DEFAULT_TAGS;
  cfg->max_sectors = SIM_LOOP_DEFAULT_MAX_SECTORS;
  cfg->max_io_sectors = SIM_LOOP_DEFAULT_MAX_IO_BYTES / SIM_SECTOR_BYTES;
  cfg->max_background = SIM_LOOP_DEFAULT_MAX_BACKGROUND;
  cfg->rotational = SIM_LOOP_ROT_OFF;
}

gboolean
sim_loop_rotational_parse (const char *text, SimLoopRotational *out)
{
  if (g_ascii_strcasecmp (text, "false") == 0 || strcmp (text, "0") == 0)
    *out = SIM_LOOP_ROT_OFF;
  else if (g_ascii_strcasecmp (text, "true") == 0 || strcmp (text, "1") == 0)
    *out = SIM_LOOP_ROT_ON;
  else if (g_ascii_strcasecmp (text, "inherit") == 0)
    *out = SIM_LOOP_ROT_INHERIT;
  else
    return FALSE;
  return TRUE;
}

const char *
sim_loop_rotational_name (SimLoopRotational rot)
{
  switch (rot)
    {
    case SIM_LOOP_ROT_ON:
      return "true";
    case SIM_LOOP_ROT_INHERIT:
      return "inherit";
    case SIM_LOOP_ROT_OFF:
    default:
      return "false";
    }
}

void
sim_device_set_loop (SimDevice *dev, const SimLoopConfig *cfg)
{
  g_assert (dev->loop == NULL && dev->attachment == NULL && dev->in_flight == 0);
  g_assert (cfg->tags >= 1 && cfg->max_sectors >= 1 && cfg->max_io_sectors >= 1
            && cfg->max_background >= 1);
  SimLoop *loop = g_new0 (SimLoop, 1);
  loop->dev = dev;
  loop->cfg = *cfg;
  loop->model_depth = MIN (dev->queue_depth, cfg->max_background);
  sim_list_init (&loop->pending);
  /* The worst case: every tag holds a request of max_sectors. */
  loop->pool_size = cfg->tags * sim_loop_pieces_for (cfg, cfg->max_sectors);
  loop->pool = g_new0 (SimLoopPiece, loop->pool_size);
  for (guint i = loop->pool_size; i-- > 0;)
    {
      loop->pool[i].rq.hash_next = loop->free_list ? &loop->free_list->rq : NULL;
      loop->free_list = &loop->pool[i];
    }
  sim_time_avg_init (&loop->model_in_flight_avg, sim_now (dev->sim));
  dev->loop = loop;
  dev->queue_depth = cfg->tags;
}

void
sim_loop_free (SimLoop *loop)
{
  if (loop == NULL)
    return;
  g_free (loop->pool);
  g_free (loop);
}

static SimLoopPiece *
piece_get (SimLoop *loop)
{
  SimLoopPiece *p = loop->free_list;
  g_assert (p != NULL);   /* the pool covers tags * pieces per request */
  loop->free_list = p->rq.hash_next
                    ? sim_container_of (p->rq.hash_next, SimLoopPiece, rq) : NULL;
  memset (p, 0, sizeof *p);
  sim_list_init (&p->rq.queuelist);
  sim_list_init (&p->rq.fifo);
  return p;
}

static void
piece_put (SimLoop *loop, SimLoopPiece *p)
{
  p->parent = NULL;
  p->rq.state = SIM_RQ_FREE;
  p->rq.hash_next = loop->free_list ? &loop->free_list->rq : NULL;
  loop->free_list = p;
}

static void
set_model_in_flight (SimLoop *loop, guint n)
{
  loop->model_in_flight = n;
  loop->max_model_in_flight = MAX (loop->max_model_in_flight, n);
  sim_time_avg_set (&loop->model_in_flight_avg, sim_now (loop->dev->sim), n);
}

/* Pieces go to the server in arrival order while fewer than max_background
 * are there and the model has room. */
static void
kick (SimLoop *loop)
{
  while (loop->n_pending > 0 && loop->model_in_flight < loop->model_depth)
    {
      SimRequest *rq = sim_list_first_entry (&loop->pending, SimRequest, queuelist);
      sim_list_del (&rq->queuelist);
      loop->n_pending--;
      set_model_in_flight (loop, loop->model_in_flight + 1);
      loop->pieces++;
      sim_device_enter (loop->dev, rq);
    }
}

void
sim_loop_start (SimLoop *loop, SimRequest *rq)
{
  g_assert (rq->nr_sectors >= 1 && rq->nr_sectors <= loop->cfg.max_sectors);
  loop->requests++;
  loop->max_in_flight = MAX (loop->max_in_flight, loop->dev->in_flight);
  rq->loop_pieces_left = 0;
  /* fuse_direct_io: nbytes = min (count, nmax), in file order. */
  for (guint32 done = 0; done < rq->nr_sectors;)
    {
      guint32 n = MIN (loop->cfg.max_io_sectors, rq->nr_sectors - done);
      SimLoopPiece *p = piece_get (loop);
      p->parent = rq;
      p->rq.q = rq->q;
      p->rq.state = SIM_RQ_STARTED;
      p->rq.sector = rq->sector + done;
      p->rq.nr_sectors = n;
      p->rq.op = rq->op;
      p->rq.sync = rq->sync;
      p->rq.ioc = rq->ioc;
      p->rq.alloc_ns = p->rq.insert_ns = p->rq.dispatch_ns = sim_now (loop->dev->sim);
      p->rq.seq = rq->seq;
      sim_list_add_tail (&p->rq.queuelist, &loop->pending);
      loop->n_pending++;
      rq->loop_pieces_left++;
      done += n;
    }
  loop->max_pending = MAX (loop->max_pending, loop->n_pending);
  kick (loop);
}

void
sim_loop_piece_done (SimLoop *loop, SimRequest *piece_rq)
{
  SimLoopPiece *p = sim_container_of (piece_rq, SimLoopPiece, rq);
  SimRequest *parent = p->parent;
  g_assert (parent != NULL && parent->loop_pieces_left > 0 && loop->model_in_flight > 0);
  piece_put (loop, p);
  set_model_in_flight (loop, loop->model_in_flight - 1);
  kick (loop);
  if (--parent->loop_pieces_left > 0)
    return;
  /* lo_rw_aio_complete: the last piece ends the loop request. */
  sim_device_unbusy (loop->dev);
  sim_queue_complete_request (loop->dev->q, parent);
}

gboolean
sim_loop_rotational (const SimLoop *loop, gboolean model_rotational)
{
  switch (loop->cfg.rotational)
    {
    case SIM_LOOP_ROT_ON:
      return TRUE;
    case SIM_LOOP_ROT_INHERIT:
      return model_rotational;
    case SIM_LOOP_ROT_OFF:
    default:
      return FALSE;
    }
}
