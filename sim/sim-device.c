/* sim-device.c — servers and completions of a simulated device.  The host
 * may have queue_depth commands outstanding; the device serves up to
 * parallelism of them at once, the rest wait in FIFO order (no internal
 * reordering yet).  Service times come from the DevModel.  Commands of an
 * attached device go through sim-topology.c between start and entering the
 * servers, and between service and completion; those of a device behind a
 * loop driver go through sim-loop.c, which cuts them into pieces. */
#include "sim/sim-device.h"
#include "sim/sim-queue.h"
#include "sim/sim-topology.h"
#include "sim/sim-loop.h"
#include "sim/sim-devmodel.h"

SimDevice *
sim_device_new (Sim *sim, DevModel *model)
{
  SimDevice *dev = g_new0 (SimDevice, 1);
  dev->sim = sim;
  dev->model = model;
  dev->queue_depth = MAX (1u, model->queue_depth);
  dev->parallelism = MAX (1u, model->parallelism);
  g_autofree char *stream = g_strdup_printf ("device.%s.service", model->name ? model->name : "dev");
  model->rng = sim_rng (sim, stream);
  sim_list_init (&dev->waiting);
  sim_time_avg_init (&dev->busy_avg, sim_now (sim));
  sim_time_avg_init (&dev->in_flight_avg, sim_now (sim));
  return dev;
}

void
sim_device_free (SimDevice *dev)
{
  if (dev == NULL)
    return;
  if (dev->attachment != NULL)
    sim_device_detach (dev);
  sim_loop_free (dev->loop);
  dev_model_free (dev->model);
  g_free (dev);
}

gboolean
sim_device_can_start (const SimDevice *dev)
{
  if (dev->in_flight >= dev->queue_depth)
    return FALSE;
  return dev->attachment == NULL || sim_attachment_can_start (dev->attachment);
}

static void serve (SimDevice *dev, SimRequest *rq);

static void
service_done (Sim *sim, gpointer subject, gpointer object)
{
  SimDevice *dev = subject;
  SimRequest *rq = object;
  g_assert (dev->busy > 0 && dev->in_flight > 0);
  dev->busy--;
  if (!sim_list_empty (&dev->waiting))
    {
      SimRequest *next = sim_list_first_entry (&dev->waiting, SimRequest, queuelist);
      sim_list_del (&next->queuelist);
      serve (dev, next);
    }
  sim_time_avg_set (&dev->busy_avg, sim_now (sim), dev->busy > 0 ? 1.0 : 0.0);
  /* The server is free for the next command while a read's data still
   * crosses the bus path. */
  if (dev->loop != NULL)
    sim_loop_piece_done (dev->loop, rq);
  else if (dev->attachment != NULL)
    sim_attachment_served (dev->attachment, rq);
  else
    {
      sim_device_unbusy (dev);
      sim_queue_complete_request (dev->q, rq);
    }
}

void
sim_device_unbusy (SimDevice *dev)
{
  g_assert (dev->in_flight > 0);
  dev->in_flight--;
  dev->completed++;
  sim_time_avg_set (&dev->in_flight_avg, sim_now (dev->sim), dev->in_flight);
}

static void
serve (SimDevice *dev, SimRequest *rq)
{
  SimTime now = sim_now (dev->sim);
  SimTime t = dev_model_service_time (dev->model, rq->op, rq->sector, rq->nr_sectors, now);
  g_assert (t >= 0);
  dev->busy++;
  dev->service_ns_total += t;
  if (rq->ioc && (rq->ioc->service_dev == NULL || rq->ioc->service_dev == dev))
    rq->ioc->service_ns += t;
  sim_schedule_at (dev->sim, now + t, service_done, dev, rq);
  if (dev->loop == NULL && dev->attachment != NULL)
    sim_attachment_serving (dev->attachment, rq, now + t);
}

void
sim_device_enter (SimDevice *dev, SimRequest *rq)
{
  if (dev->busy < dev->parallelism)
    serve (dev, rq);
  else
    sim_list_add_tail (&rq->queuelist, &dev->waiting);
  sim_time_avg_set (&dev->busy_avg, sim_now (dev->sim), dev->busy > 0 ? 1.0 : 0.0);
}

void
sim_device_start (SimDevice *dev, SimRequest *rq)
{
  g_assert (sim_device_can_start (dev));
  dev->in_flight++;
  dev->max_in_flight = MAX (dev->max_in_flight, dev->in_flight);
  if (dev->loop != NULL)
    sim_loop_start (dev->loop, rq);
  else if (dev->attachment != NULL)
    sim_attachment_start (dev->attachment, rq);
  else
    sim_device_enter (dev, rq);
  sim_time_avg_set (&dev->in_flight_avg, sim_now (dev->sim), dev->in_flight);
}

double
sim_device_utilisation (const SimDevice *dev, SimTime now_ns)
{
  return sim_time_avg_mean (&dev->busy_avg, now_ns);
}

gboolean
sim_device_rotational (const SimDevice *dev)
{
  if (dev->loop != NULL)
    return sim_loop_rotational (dev->loop, dev->model->rotational);
  return dev->model->rotational;
}

gboolean
sim_device_write_cache (const SimDevice *dev)
{
  return dev->loop != NULL || dev->model->write_cache;
}
