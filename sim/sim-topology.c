/* sim-topology.c — buses, host adapters and the path of a command between
 * host and device (see sim-topology.h for the model and the kernel code it
 * follows).  A command of an attached device goes
 *
 *   start: take an adapter slot -> [IDE: wait for the channel] -> begin
 *   begin: write: host bus, adapter, bus transfers -> device servers
 *          read:  device servers, and from the start of service the
 *                 bus, adapter, host bus transfers, each timed to end
 *                 just after the data upstream of it -> complete
 *   served: write: complete
 *   complete: [IDE: release the channel to the next waiter] -> free the
 *             slot and the device's count -> run the starved devices'
 *             queues -> the queue's completion (which refills the device)
 *
 * A command's position on the path is the transfer server it is in: the
 * path of its device is at most three servers long, so the next one is
 * found by a scan; SimRequest.path_ready_ns carries when the stage before
 * the next one delivers its last byte.  Nothing here allocates once
 * devices are attached.
 */
#include "sim/sim-topology.h"
#include "sim/sim-device.h"
#include "sim/sim-queue.h"
#include "sim/sim-devmodel.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (sim-topology-error-quark, sim_topology_error)

/* One bus or adapter, in creation order. */
typedef struct {
  SimBus     *bus;
  SimAdapter *adapter;
} TopoNode;

struct _SimTopology {
  Sim                  *sim;
  GArray               *nodes;        /* TopoNode */
  SimTopologyTraceFunc  trace;
  gpointer              trace_data;
};

static void
emit (SimTopology *topo, SimTopoEventKind kind, const char *object,
      const SimRequest *rq, guint64 bytes)
{
  if (topo->trace == NULL)
    return;
  SimTopoEvent ev = {
    .kind = kind,
    .time_ns = sim_now (topo->sim),
    .object = object,
    .device = rq->q ? rq->q->device : NULL,
    .rq = rq,
    .bytes = bytes,
  };
  topo->trace (topo->trace_data, &ev);
}

static SimDevice *
rq_device (const SimRequest *rq)
{
  g_assert (rq->q != NULL && rq->q->device != NULL);
  return rq->q->device;
}

/* ---- setup ------------------------------------------------------------- */

const char *
sim_bus_kind_name (SimBusKind kind)
{
  return kind == SIM_BUS_IDE_CHANNEL ? "ide-channel" : "shared";
}

gboolean
sim_bus_kind_parse (const char *text, SimBusKind *kind, GError **error)
{
  if (g_strcmp0 (text, "shared") == 0)
    *kind = SIM_BUS_SHARED;
  else if (g_strcmp0 (text, "ide-channel") == 0)
    *kind = SIM_BUS_IDE_CHANNEL;
  else
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "unknown bus kind '%s' (shared, ide-channel)", text ? text : "");
      return FALSE;
    }
  return TRUE;
}

const char *
sim_channel_arbitration_name (SimChannelArbitration arbitration)
{
  return arbitration == SIM_CHANNEL_CHOOSE_DRIVE ? "choose-drive" : "fifo";
}

gboolean
sim_channel_arbitration_parse (const char *text, SimChannelArbitration *arbitration,
                               GError **error)
{
  if (g_strcmp0 (text, "fifo") == 0)
    *arbitration = SIM_CHANNEL_FIFO;
  else if (g_strcmp0 (text, "choose-drive") == 0)
    *arbitration = SIM_CHANNEL_CHOOSE_DRIVE;
  else
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "unknown IDE channel arbitration '%s' (fifo: the oldest command first; "
                   "choose-drive: drivers/ide of 2.2 to 2.6.29)", text ? text : "");
      return FALSE;
    }
  return TRUE;
}

SimTopology *
sim_topology_new (Sim *sim)
{
  SimTopology *topo = g_new0 (SimTopology, 1);
  topo->sim = sim;
  topo->nodes = g_array_new (FALSE, FALSE, sizeof (TopoNode));
  return topo;
}

void
sim_topology_free (SimTopology *topo)
{
  if (topo == NULL)
    return;
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      SimAdapter *a = g_array_index (topo->nodes, TopoNode, i).adapter;
      while (a != NULL && !sim_list_empty (&a->devices))
        sim_device_detach (sim_list_first_entry (&a->devices, SimAttachment, adapter_link)->dev);
    }
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      TopoNode *n = &g_array_index (topo->nodes, TopoNode, i);
      if (n->bus)
        g_free (n->bus->name);
      else
        g_free (n->adapter->name);
      g_free (n->bus ? (gpointer) n->bus : (gpointer) n->adapter);
    }
  g_array_unref (topo->nodes);
  g_free (topo);
}

void
sim_topology_set_trace (SimTopology *topo, SimTopologyTraceFunc fn, gpointer data)
{
  topo->trace = fn;
  topo->trace_data = data;
}

SimBus *
sim_topology_lookup_bus (SimTopology *topo, const char *name)
{
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      SimBus *b = g_array_index (topo->nodes, TopoNode, i).bus;
      if (b != NULL && g_strcmp0 (b->name, name) == 0)
        return b;
    }
  return NULL;
}

SimAdapter *
sim_topology_lookup_adapter (SimTopology *topo, const char *name)
{
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      SimAdapter *a = g_array_index (topo->nodes, TopoNode, i).adapter;
      if (a != NULL && g_strcmp0 (a->name, name) == 0)
        return a;
    }
  return NULL;
}

static gboolean
check_rate (const char *what, const char *name, double bandwidth_bytes_per_s,
            SimTime overhead_ns, GError **error)
{
  if (!isfinite (bandwidth_bytes_per_s) || bandwidth_bytes_per_s < 0)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "%s '%s': bandwidth must be a finite number >= 0 (0 = unlimited), not %g",
                   what, name, bandwidth_bytes_per_s);
      return FALSE;
    }
  if (overhead_ns < 0)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "%s '%s': overhead must be >= 0, not %" SIM_TIME_FORMAT " ns",
                   what, name, overhead_ns);
      return FALSE;
    }
  return TRUE;
}

static void
xfer_init (SimXfer *x, SimTopology *topo, const char *name,
           double bandwidth_bytes_per_s, SimTime overhead_ns)
{
  SimTime now = sim_now (topo->sim);
  x->topo = topo;
  x->name = name;
  x->bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  x->overhead_ns = overhead_ns;
  sim_list_init (&x->queue);
  x->last_end_ns = now;
  x->created_ns = now;
  sim_time_avg_init (&x->busy_avg, now);
  sim_time_avg_init (&x->queue_avg, now);
}

SimBus *
sim_topology_add_bus (SimTopology *topo, const char *name, SimBusKind kind,
                      double bandwidth_bytes_per_s, SimTime overhead_ns,
                      SimAdapter *owner, GError **error)
{
  g_return_val_if_fail (name != NULL, NULL);
  if (sim_topology_lookup_bus (topo, name) != NULL)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "bus '%s' is defined twice", name);
      return NULL;
    }
  if (!check_rate ("bus", name, bandwidth_bytes_per_s, overhead_ns, error))
    return NULL;
  if (kind == SIM_BUS_IDE_CHANNEL && owner == NULL)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "bus '%s': an IDE channel belongs to a controller (adapter)", name);
      return NULL;
    }
  g_assert (owner == NULL || owner->topo == topo);

  SimBus *b = g_new0 (SimBus, 1);
  b->topo = topo;
  b->name = g_strdup (name);
  b->kind = kind;
  b->owner = owner;
  xfer_init (&b->xfer, topo, b->name, bandwidth_bytes_per_s, overhead_ns);
  sim_list_init (&b->devices);
  sim_list_init (&b->waiters);
  sim_time_avg_init (&b->hold_avg, sim_now (topo->sim));
  sim_time_avg_init (&b->waiters_avg, sim_now (topo->sim));
  TopoNode node = { .bus = b };
  g_array_append_val (topo->nodes, node);
  return b;
}

void
sim_bus_set_arbitration (SimBus *bus, SimChannelArbitration arbitration, guint hz)
{
  g_return_if_fail (bus->kind == SIM_BUS_IDE_CHANNEL && hz > 0);
  g_assert (bus->grants == 0 && bus->holder == NULL);
  bus->arbitration = arbitration;
  bus->hz = hz;
  bus->tick_ns = SIM_NS_PER_S / hz;
}

SimAdapter *
sim_topology_add_adapter (SimTopology *topo, const char *name,
                          double bandwidth_bytes_per_s, SimTime overhead_ns,
                          guint can_queue, SimBus *host_bus, GError **error)
{
  g_return_val_if_fail (name != NULL, NULL);
  if (sim_topology_lookup_adapter (topo, name) != NULL)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "adapter '%s' is defined twice", name);
      return NULL;
    }
  if (!check_rate ("adapter", name, bandwidth_bytes_per_s, overhead_ns, error))
    return NULL;
  if (can_queue == 0)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "adapter '%s': can_queue must be >= 1", name);
      return NULL;
    }
  if (host_bus != NULL && host_bus->owner != NULL)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "adapter '%s': bus '%s' belongs to adapter '%s'; an adapter sits on a host bus",
                   name, host_bus->name, host_bus->owner->name);
      return NULL;
    }
  g_assert (host_bus == NULL || host_bus->topo == topo);

  SimAdapter *a = g_new0 (SimAdapter, 1);
  a->topo = topo;
  a->name = g_strdup (name);
  a->host_bus = host_bus;
  a->can_queue = can_queue;
  xfer_init (&a->xfer, topo, a->name, bandwidth_bytes_per_s, overhead_ns);
  sim_list_init (&a->devices);
  sim_list_init (&a->starved);
  sim_time_avg_init (&a->starved_avg, sim_now (topo->sim));
  TopoNode node = { .adapter = a };
  g_array_append_val (topo->nodes, node);
  return a;
}

static void
leave_starved (SimAdapter *a, SimAttachment *att)
{
  sim_list_del (&att->starved_link);
  g_assert (a->n_starved > 0);
  a->n_starved--;
  sim_time_avg_set (&a->starved_avg, sim_now (a->topo->sim), a->n_starved);
}

static const char *
device_name (const SimDevice *dev)
{
  if (dev->model->name != NULL)
    return dev->model->name;
  return dev->q != NULL ? dev->q->name : "device";
}

gboolean
sim_device_attach (SimDevice *dev, SimAdapter *adapter, SimBus *channel_or_bus,
                   GError **error)
{
  g_return_val_if_fail (adapter != NULL, FALSE);
  g_assert (dev->in_flight == 0);
  SimBus *bus = channel_or_bus;
  if (dev->loop != NULL)
    {
      /* Its commands are loop pieces served by a user-space process. */
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "device '%s' is behind a loop driver and cannot be attached to adapter '%s'",
                   device_name (dev), adapter->name);
      return FALSE;
    }
  if (dev->attachment != NULL)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "device '%s' is already attached to adapter '%s'",
                   device_name (dev), dev->attachment->adapter->name);
      return FALSE;
    }
  if (bus != NULL && bus->owner != adapter)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM,
                   "device '%s': bus '%s' is %s%s%s, not a bus of adapter '%s'",
                   device_name (dev), bus->name,
                   bus->owner ? "a bus of adapter '" : "a host bus",
                   bus->owner ? bus->owner->name : "", bus->owner ? "'" : "",
                   adapter->name);
      return FALSE;
    }
  if (bus != NULL && bus->kind == SIM_BUS_IDE_CHANNEL
      && bus->n_devices >= SIM_IDE_CHANNEL_MAX_DEVICES)
    {
      g_set_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_FULL,
                   "device '%s': IDE channel '%s' already has a master and a slave",
                   device_name (dev), bus->name);
      return FALSE;
    }

  SimAttachment *att = g_new0 (SimAttachment, 1);
  att->dev = dev;
  att->adapter = adapter;
  att->bus = bus;
  if (adapter->host_bus != NULL)
    att->path[att->n_path++] = &adapter->host_bus->xfer;
  att->path[att->n_path++] = &adapter->xfer;
  if (bus != NULL)
    att->path[att->n_path++] = &bus->xfer;
  sim_list_add_tail (&att->adapter_link, &adapter->devices);
  adapter->n_devices++;
  sim_list_init (&att->bus_link);
  if (bus != NULL)
    {
      sim_list_add_tail (&att->bus_link, &bus->devices);
      bus->n_devices++;
    }
  sim_list_init (&att->starved_link);
  dev->attachment = att;
  return TRUE;
}

void
sim_device_detach (SimDevice *dev)
{
  SimAttachment *att = dev->attachment;
  if (att == NULL)
    return;
  SimAdapter *a = att->adapter;
  if (sim_list_is_linked (&att->starved_link))
    leave_starved (a, att);
  sim_list_del (&att->adapter_link);
  a->n_devices--;
  if (att->bus != NULL)
    {
      sim_list_del (&att->bus_link);
      att->bus->n_devices--;
      if (att->bus->last_drive == att)
        att->bus->last_drive = NULL;
    }
  g_free (att);
  dev->attachment = NULL;
}

/* ---- transfer servers -------------------------------------------------- */

static void path_handoff (SimXfer *x, SimRequest *rq);
static void path_last_done (SimXfer *x, SimRequest *rq);

/* bytes / bandwidth, rounded up so the bandwidth is never exceeded. */
static SimTime
xfer_data_ns (const SimXfer *x, guint64 bytes)
{
  if (x->bandwidth_bytes_per_s <= 0)
    return 0;
  return (SimTime) ceil ((double) bytes * 1e9 / x->bandwidth_bytes_per_s);
}

/* How long a command occupies the stage: its overhead plus the burst. */
static SimTime
xfer_time_ns (const SimXfer *x, guint64 bytes)
{
  return x->overhead_ns + xfer_data_ns (x, bytes);
}

/* Cut-through: a stage forwards data as it arrives, so its transfer can
 * end no sooner than the last sector after the stage upstream ended
 * (rq->path_ready_ns) plus its overhead (status phase, completion).  For
 * a read's last stage this is never before the device's service_done,
 * and at the same time it runs after it: events of equal time fire in
 * the order they were scheduled, and serve() schedules service_done
 * before it hands the read to the path. */
static SimTime
xfer_earliest_end_ns (const SimXfer *x, const SimRequest *rq)
{
  guint64 unit = MIN (sim_request_bytes (rq), (guint64) SIM_SECTOR_BYTES);
  return rq->path_ready_ns + x->overhead_ns + xfer_data_ns (x, unit);
}

static void xfer_begin (SimXfer *x, SimRequest *rq);

static void
xfer_end (Sim *sim, gpointer subject, gpointer object)
{
  SimXfer *x = subject;
  SimRequest *rq = object;
  SimTime now = sim_now (sim);
  g_assert (x->current == rq);
  guint64 bytes = sim_request_bytes (rq);
  x->busy_ns += now - x->begin_ns;
  x->commands++;
  x->bytes += bytes;
  x->last_end_ns = now;
  x->current = NULL;
  sim_time_avg_set (&x->busy_avg, now, 0.0);
  emit (x->topo, SIM_TOPO_XFER_END, x->name, rq, bytes);
  if (!sim_list_empty (&x->queue))
    {
      SimRequest *next = sim_list_first_entry (&x->queue, SimRequest, queuelist);
      sim_list_del (&next->queuelist);
      x->queued--;
      sim_time_avg_set (&x->queue_avg, now, x->queued);
      xfer_begin (x, next);
    }
  path_last_done (x, rq);
}

/* The burst starts late enough to end no sooner than the data upstream
 * allows (an earlier start would hold the stage idle between bursts;
 * disks and adapters buffer instead), so a stage is busy only for
 * overhead + bytes / bandwidth. */
static void
xfer_begin (SimXfer *x, SimRequest *rq)
{
  SimTime now = sim_now (x->topo->sim);
  x->max_concurrent = MAX (x->max_concurrent, x->current != NULL ? 2u : 1u);
  g_assert (x->current == NULL);
  g_assert (now >= x->last_end_ns);
  SimTime end = now + xfer_time_ns (x, sim_request_bytes (rq));
  g_assert (end >= xfer_earliest_end_ns (x, rq));
  x->current = rq;
  x->begin_ns = now;
  x->started++;
  sim_time_avg_set (&x->busy_avg, now, 1.0);
  emit (x->topo, SIM_TOPO_XFER_BEGIN, x->name, rq, sim_request_bytes (rq));
  sim_schedule_at (x->topo->sim, end, xfer_end, x, rq);
  rq->path_ready_ns = end;
  path_handoff (x, rq);
}

static void
xfer_enqueue (SimXfer *x, SimRequest *rq)
{
  if (x->current == NULL)
    {
      xfer_begin (x, rq);
      return;
    }
  g_assert (!sim_list_is_linked (&rq->queuelist));
  sim_list_add_tail (&rq->queuelist, &x->queue);
  x->queued++;
  sim_time_avg_set (&x->queue_avg, sim_now (x->topo->sim), x->queued);
}

static void
xfer_enqueue_fired (Sim *sim, gpointer subject, gpointer object)
{
  (void) sim;
  xfer_enqueue (subject, object);
}

/* The command joins the stage's FIFO once the data upstream is close
 * enough to its end that a burst started then would not outrun it. */
static void
xfer_submit (SimXfer *x, SimRequest *rq)
{
  SimTime now = sim_now (x->topo->sim);
  SimTime duration = xfer_time_ns (x, sim_request_bytes (rq));
  SimTime earliest_end = xfer_earliest_end_ns (x, rq);
  if (earliest_end > now + duration)
    sim_schedule_at (x->topo->sim, earliest_end - duration, xfer_enqueue_fired, x, rq);
  else
    xfer_enqueue (x, rq);
}

/* ---- the life of a command --------------------------------------------- */

static guint
path_index (const SimAttachment *att, const SimXfer *x)
{
  for (guint i = 0; i < att->n_path; i++)
    if (att->path[i] == x)
      return i;
  g_assert_not_reached ();
}

static void complete (SimAttachment *att, SimRequest *rq);

/* Writes move towards the device (path[0] first), reads away from it
 * (path[n_path - 1] first).  The stage after @x, or NULL at the end. */
static SimXfer *
path_after (const SimAttachment *att, const SimXfer *x, SimOp op)
{
  guint i = path_index (att, x);
  if (op == SIM_OP_WRITE)
    return i + 1 < att->n_path ? att->path[i + 1] : NULL;
  return i > 0 ? att->path[i - 1] : NULL;
}

/* A stage began moving the data: the next one may start as soon as the
 * data it forwards would not run out (cut-through). */
static void
path_handoff (SimXfer *x, SimRequest *rq)
{
  SimAttachment *att = rq_device (rq)->attachment;
  SimXfer *next = path_after (att, x, rq->op);
  if (next != NULL)
    xfer_submit (next, rq);
}

/* A stage finished; after the last one a write is in the device's buffer
 * and a read in host memory. */
static void
path_last_done (SimXfer *x, SimRequest *rq)
{
  SimDevice *dev = rq_device (rq);
  SimAttachment *att = dev->attachment;
  if (path_after (att, x, rq->op) != NULL)
    return;
  if (rq->op == SIM_OP_WRITE)
    sim_device_enter (dev, rq);
  else
    complete (att, rq);
}

static void
set_active (SimAttachment *att, gboolean more)
{
  SimBus *bus = att->bus;
  if (more)
    att->active++;
  else
    {
      g_assert (att->active > 0);
      att->active--;
    }
  if (bus == NULL || att->active != (more ? 1u : 0u))
    return;
  if (more)
    {
      bus->active_devices++;
      bus->max_active_devices = MAX (bus->max_active_devices, bus->active_devices);
    }
  else
    bus->active_devices--;
  g_assert (bus->kind != SIM_BUS_IDE_CHANNEL || bus->active_devices <= 1);
}

/* The command has everything it waits for except transfer servers. */
static void
begin (SimAttachment *att, SimRequest *rq)
{
  set_active (att, TRUE);
  if (rq->op == SIM_OP_WRITE && att->n_path > 0)
    {
      rq->path_ready_ns = sim_now (att->dev->sim);
      xfer_submit (att->path[0], rq);
    }
  else
    sim_device_enter (att->dev, rq);
}

static void
channel_grant (SimBus *bus, SimRequest *rq)
{
  g_assert (bus->holder == NULL);
  bus->holder = rq;
  bus->grants++;
  sim_time_avg_set (&bus->hold_avg, sim_now (bus->topo->sim), 1.0);
  emit (bus->topo, SIM_TOPO_CHANNEL_GRANT, bus->name, rq, 0);
  begin (rq_device (rq)->attachment, rq);
}

static void
channel_unwait (SimBus *bus, SimRequest *rq)
{
  sim_list_del (&rq->queuelist);
  bus->n_waiters--;
  sim_time_avg_set (&bus->waiters_avg, sim_now (bus->topo->sim), bus->n_waiters);
}

/* ---- choose_drive: 2.4 drivers/ide/ide.c (choose_drive, ide_do_request,
 * ide_stall_queue, ide_intr); unchanged in substance to 2.6.29's ide-io.c */

/* WAIT_MIN_SLEEP of include/linux/ide.h: 2*HZ/100 jiffies, 20 ms.  The
 * stall's cap of 10 of them is below ide_stall_queue's WAIT_WORSTCASE
 * (30 s), which therefore never applies. */
static gint64
wait_min_sleep_j (const SimBus *bus)
{
  return 2 * (gint64) bus->hz / 100;
}

static gint64
bus_jiffies (const SimBus *bus)
{
  return (gint64) (sim_now (bus->topo->sim) / bus->tick_ns);
}

static gint64
wakeup_j (const SimAttachment *d)
{
  return d->service_start_j + 2 * d->service_time_j;
}

/* The drive's oldest command waiting for the channel (the head of its
 * queue: the driver starts requests in queue order). */
static SimRequest *
first_waiter_of (SimBus *bus, const SimAttachment *d)
{
  for (SimList *l = bus->waiters.next; l != &bus->waiters; l = l->next)
    {
      SimRequest *rq = sim_container_of (l, SimRequest, queuelist);
      if (rq_device (rq)->attachment == d)
        return rq;
    }
  return NULL;
}

/* drive->next: the drives of a hwgroup form a ring. */
static SimAttachment *
ring_next (SimBus *bus, SimAttachment *d)
{
  SimList *l = d->bus_link.next;
  if (l == &bus->devices)
    l = l->next;
  return sim_container_of (l, SimAttachment, bus_link);
}

/* choose_drive's preference of @d over the best so far: a drive back from
 * a stall first (the one stalled to the earlier time), else the earlier
 * WAKEUP; ties keep the drive met first. */
static gboolean
prefer (const SimAttachment *d, const SimAttachment *best)
{
  if (best == NULL)
    return TRUE;
  if (d->sleeping && (!best->sleeping || best->sleep_j > d->sleep_j))
    return TRUE;
  return !best->sleeping && wakeup_j (best) > wakeup_j (d);
}

/* The nice mood: stall @best, which was not served last and whose
 * commands are long, until its WAKEUP if another drive served lately may
 * come back before then.  TRUE when it stalled it. */
static gboolean
stall_for_others (SimBus *bus, SimAttachment *best, gint64 jiffies)
{
  gint64 min_sleep = wait_min_sleep_j (bus);
  if (best->sleeping || best == bus->last_drive || best->service_time_j <= min_sleep)
    return FALSE;
  gint64 t = wakeup_j (best) - jiffies;
  if (t < min_sleep)
    return FALSE;
  for (SimAttachment *d = ring_next (bus, best); d != best; d = ring_next (bus, d))
    if (!d->sleeping && wakeup_j (d) > jiffies - best->service_time_j
        && wakeup_j (d) < jiffies + t)
      {
        best->sleeping = TRUE;
        best->sleep_j = jiffies + MIN (t, 10 * min_sleep);
        bus->stalls++;
        return TRUE;
      }
  return FALSE;
}

static SimAttachment *
choose_drive (SimBus *bus, gint64 jiffies)
{
  SimAttachment *first = bus->last_drive
                         ? bus->last_drive
                         : sim_list_first_entry (&bus->devices, SimAttachment, bus_link);
  for (;;)
    {
      SimAttachment *best = NULL, *d = first;
      do
        {
          if ((!d->sleeping || jiffies >= d->sleep_j) && prefer (d, best)
              && first_waiter_of (bus, d) != NULL)
            best = d;
          d = ring_next (bus, d);
        }
      while (d != first);
      if (best == NULL || !stall_for_others (bus, best, jiffies))
        return best;
    }
}

static void channel_dispatch (SimBus *bus);

static void
snooze_end (Sim *sim, gpointer subject, gpointer object)
{
  SimBus *bus = subject;
  g_assert (bus->snoozing);
  bus->snoozing = FALSE;
  bus->snooze_ns += sim_now (sim) - bus->snooze_begin_ns;
  channel_dispatch (bus);
}

/* Every waiting drive is stalled: the hwgroup stays busy, with no command,
 * until the first stall ends, and at least WAIT_MIN_SLEEP; commands that
 * come meanwhile wait too. */
static void
snooze (SimBus *bus, gint64 jiffies)
{
  gint64 wake_j = G_MAXINT64;
  for (SimList *l = bus->devices.next; l != &bus->devices; l = l->next)
    {
      const SimAttachment *d = sim_container_of (l, SimAttachment, bus_link);
      if (d->sleeping)
        wake_j = MIN (wake_j, d->sleep_j);
    }
  g_assert (wake_j != G_MAXINT64);
  wake_j = MAX (wake_j, jiffies + wait_min_sleep_j (bus));
  bus->snoozing = TRUE;
  bus->snooze_begin_ns = sim_now (bus->topo->sim);
  sim_schedule_at (bus->topo->sim, (SimTime) wake_j * bus->tick_ns, snooze_end, bus, NULL);
}

/* ide_do_request: start the chosen drive's next command. */
static void
channel_dispatch (SimBus *bus)
{
  if (bus->holder != NULL || bus->snoozing || bus->completing || bus->n_waiters == 0)
    return;
  if (bus->arbitration == SIM_CHANNEL_FIFO)
    {
      SimRequest *next = sim_list_first_entry (&bus->waiters, SimRequest, queuelist);
      channel_unwait (bus, next);
      channel_grant (bus, next);
      return;
    }
  gint64 jiffies = bus_jiffies (bus);
  SimAttachment *d = choose_drive (bus, jiffies);
  if (d == NULL)
    {
      snooze (bus, jiffies);
      return;
    }
  bus->last_drive = d;
  d->sleeping = FALSE;
  d->service_start_j = jiffies;
  SimRequest *rq = first_waiter_of (bus, d);
  channel_unwait (bus, rq);
  channel_grant (bus, rq);
}

static void
channel_acquire (SimBus *bus, SimRequest *rq)
{
  g_assert (!sim_list_is_linked (&rq->queuelist));
  sim_list_add_tail (&rq->queuelist, &bus->waiters);
  bus->n_waiters++;
  sim_time_avg_set (&bus->waiters_avg, sim_now (bus->topo->sim), bus->n_waiters);
  channel_dispatch (bus);
}

/* The holder is done.  Under choose_drive the next command is chosen once
 * the completing device's queue has had its turn (channel_completed):
 * ide_intr ends the request and chooses with the drive's queue still
 * holding its later requests, which here reach the channel only when the
 * device is refilled. */
static void
channel_release (SimBus *bus, SimRequest *rq)
{
  SimTime now = sim_now (bus->topo->sim);
  g_assert (bus->holder == rq);
  bus->holder = NULL;
  sim_time_avg_set (&bus->hold_avg, now, 0.0);
  emit (bus->topo, SIM_TOPO_CHANNEL_RELEASE, bus->name, rq, 0);
  if (bus->arbitration == SIM_CHANNEL_CHOOSE_DRIVE)
    {
      SimAttachment *d = rq_device (rq)->attachment;
      d->service_time_j = bus_jiffies (bus) - d->service_start_j;
      bus->completing = TRUE;
      return;
    }
  channel_dispatch (bus);
}

static void
channel_completed (SimBus *bus)
{
  if (!bus->completing)
    return;
  bus->completing = FALSE;
  channel_dispatch (bus);
}

gboolean
sim_attachment_can_start (SimAttachment *att)
{
  SimAdapter *a = att->adapter;
  if (a->outstanding < a->can_queue)
    return TRUE;
  /* Only a device with requests that could go is starved; the queue asks
   * before it looks at its requests. */
  SimRequestQueue *q = att->dev->q;
  if (q != NULL && !sim_list_is_linked (&att->starved_link)
      && sim_queue_requests_allocated (q) > q->in_flight)
    {
      sim_list_add_tail (&att->starved_link, &a->starved);
      a->n_starved++;
      sim_time_avg_set (&a->starved_avg, sim_now (a->topo->sim), a->n_starved);
    }
  return FALSE;
}

void
sim_attachment_start (SimAttachment *att, SimRequest *rq)
{
  SimAdapter *a = att->adapter;
  g_assert (a->outstanding < a->can_queue);
  a->outstanding++;
  a->max_outstanding = MAX (a->max_outstanding, a->outstanding);
  a->slots_taken++;
  emit (a->topo, SIM_TOPO_SLOT_GET, a->name, rq, 0);
  if (att->bus != NULL && att->bus->kind == SIM_BUS_IDE_CHANNEL)
    channel_acquire (att->bus, rq);
  else
    begin (att, rq);
}

void
sim_attachment_serving (SimAttachment *att, SimRequest *rq, SimTime served_ns)
{
  if (rq->op != SIM_OP_READ || att->n_path == 0)
    return;
  rq->path_ready_ns = served_ns;
  xfer_submit (att->path[att->n_path - 1], rq);
}

void
sim_attachment_served (SimAttachment *att, SimRequest *rq)
{
  /* A read with a path completes when its last stage ends, after this
   * (xfer_earliest_end_ns). */
  if (rq->op == SIM_OP_READ && att->n_path > 0)
    return;
  complete (att, rq);
}

/* scsi_run_queue: while the adapter has free slots, run the queues of the
 * devices it refused, oldest first.  A device that fills the adapter again
 * puts itself back at the tail, and the loop stops there. */
static void
run_starved (SimAdapter *a)
{
  while (!sim_list_empty (&a->starved) && a->outstanding < a->can_queue)
    {
      SimAttachment *att = sim_list_first_entry (&a->starved, SimAttachment, starved_link);
      leave_starved (a, att);
      sim_queue_run (att->dev->q);
    }
}

static void
complete (SimAttachment *att, SimRequest *rq)
{
  SimAdapter *a = att->adapter;
  set_active (att, FALSE);
  if (att->bus != NULL && att->bus->kind == SIM_BUS_IDE_CHANNEL)
    channel_release (att->bus, rq);
  g_assert (a->outstanding > 0);
  a->outstanding--;
  sim_device_unbusy (att->dev);
  emit (a->topo, SIM_TOPO_SLOT_PUT, a->name, rq, 0);
  /* As scsi_run_queue does, starved devices go before the device that
   * completed.  That one refills itself in sim_queue_complete_request,
   * after its elevator has heard of the completion, so it leaves the
   * starved list here without being run. */
  if (sim_list_is_linked (&att->starved_link))
    leave_starved (a, att);
  run_starved (a);
  sim_queue_complete_request (att->dev->q, rq);
  if (att->bus != NULL && att->bus->kind == SIM_BUS_IDE_CHANNEL)
    channel_completed (att->bus);
}

/* ---- invariants -------------------------------------------------------- */

static gboolean
invariant (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
invariant (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVARIANT, msg);
  return FALSE;
}

static gboolean
check_xfer (const SimXfer *x, SimTime now, GError **error)
{
  if (x->max_concurrent > 1)
    return invariant (error, "%s: %u transfers at once", x->name, x->max_concurrent);
  if (x->busy_ns > now - x->created_ns)
    return invariant (error, "%s: busy %" SIM_TIME_FORMAT " ns in %" SIM_TIME_FORMAT " ns",
                      x->name, x->busy_ns, now - x->created_ns);
  if (x->started != x->commands + (x->current != NULL ? 1 : 0)
      || x->queued != sim_list_length (&x->queue))
    return invariant (error, "%s: transfer counts disagree", x->name);
  if (x->bandwidth_bytes_per_s > 0)
    {
      /* Each transfer is rounded up to the ns; allow for the rounding of
       * the double quotient only. */
      double need_ns = (double) x->commands * (double) x->overhead_ns
                       + (double) x->bytes * 1e9 / x->bandwidth_bytes_per_s;
      if ((double) x->busy_ns < need_ns - 1.0 - 1e-9 * need_ns)
        return invariant (error, "%s: %" G_GUINT64_FORMAT " bytes in %" SIM_TIME_FORMAT
                          " ns busy exceed its bandwidth of %g bytes/s",
                          x->name, x->bytes, x->busy_ns, x->bandwidth_bytes_per_s);
    }
  return TRUE;
}

static gboolean
check_bus (const SimBus *b, SimTime now, GError **error)
{
  if (!check_xfer (&b->xfer, now, error))
    return FALSE;
  if (b->kind != SIM_BUS_IDE_CHANNEL)
    return TRUE;
  if (b->n_devices > SIM_IDE_CHANNEL_MAX_DEVICES)
    return invariant (error, "IDE channel %s: %u devices", b->name, b->n_devices);
  if (b->max_active_devices > 1)
    return invariant (error, "IDE channel %s: %u devices active at once",
                      b->name, b->max_active_devices);
  if (b->n_waiters != sim_list_length (&b->waiters)
      || (b->n_waiters > 0 && b->holder == NULL && !b->snoozing))
    return invariant (error, "IDE channel %s: waiters without a holder", b->name);
  return TRUE;
}

static gboolean
check_adapter (const SimAdapter *a, SimTime now, GError **error)
{
  if (!check_xfer (&a->xfer, now, error))
    return FALSE;
  if (a->max_outstanding > a->can_queue || a->outstanding > a->can_queue)
    return invariant (error, "adapter %s: %u commands outstanding, can_queue %u",
                      a->name, a->max_outstanding, a->can_queue);
  if (a->n_starved != sim_list_length (&a->starved))
    return invariant (error, "adapter %s: starved count disagrees", a->name);
  return TRUE;
}

gboolean
sim_topology_check (const SimTopology *topo, GError **error)
{
  SimTime now = sim_now (topo->sim);
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      const TopoNode *n = &g_array_index (topo->nodes, TopoNode, i);
      if (n->bus ? !check_bus (n->bus, now, error) : !check_adapter (n->adapter, now, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- statistics -------------------------------------------------------- */

static double
per (double total, guint64 count)
{
  return count > 0 ? total / (double) count : 0.0;
}

static void
xfer_stats (const SimXfer *x, SimTime now, SimTopoStats *out)
{
  SimTime span = now - x->created_ns;
  out->name = x->name;
  out->commands = x->commands;
  out->bytes = x->bytes;
  out->throughput_bytes_per_s = span > 0 ? (double) x->bytes * 1e9 / (double) span : 0.0;
  out->utilisation = sim_time_avg_mean (&x->busy_avg, now);
  out->mean_wait_ns = per (sim_time_avg_area (&x->queue_avg, now), x->started);
}

void
sim_bus_get_stats (const SimBus *bus, SimTime now_ns, SimTopoStats *out)
{
  memset (out, 0, sizeof *out);
  xfer_stats (&bus->xfer, now_ns, out);
  out->kind = sim_bus_kind_name (bus->kind);
  out->parent = bus->owner ? bus->owner->name : NULL;
  out->devices = bus->n_devices;
  out->max_active_devices = bus->max_active_devices;
  if (bus->kind == SIM_BUS_IDE_CHANNEL)
    {
      out->utilisation = sim_time_avg_mean (&bus->hold_avg, now_ns);
      out->mean_wait_ns = per (sim_time_avg_area (&bus->waiters_avg, now_ns), bus->grants);
      out->arbitration = sim_channel_arbitration_name (bus->arbitration);
      out->stalls = bus->stalls;
      out->snooze_ns = bus->snooze_ns + (bus->snoozing ? now_ns - bus->snooze_begin_ns : 0);
    }
}

void
sim_adapter_get_stats (const SimAdapter *adapter, SimTime now_ns, SimTopoStats *out)
{
  memset (out, 0, sizeof *out);
  xfer_stats (&adapter->xfer, now_ns, out);
  out->kind = "adapter";
  out->parent = adapter->host_bus ? adapter->host_bus->name : NULL;
  out->devices = adapter->n_devices;
  out->mean_slot_wait_ns = per (sim_time_avg_area (&adapter->starved_avg, now_ns),
                                adapter->slots_taken);
  out->max_outstanding = adapter->max_outstanding;
  out->can_queue = adapter->can_queue;
}

GArray *
sim_topology_stats (const SimTopology *topo, SimTime now_ns)
{
  GArray *rows = g_array_sized_new (FALSE, TRUE, sizeof (SimTopoStats), topo->nodes->len);
  g_array_set_size (rows, topo->nodes->len);
  for (guint i = 0; i < topo->nodes->len; i++)
    {
      const TopoNode *n = &g_array_index (topo->nodes, TopoNode, i);
      SimTopoStats *row = &g_array_index (rows, SimTopoStats, i);
      if (n->bus)
        sim_bus_get_stats (n->bus, now_ns, row);
      else
        sim_adapter_get_stats (n->adapter, now_ns, row);
    }
  return rows;
}

#define N_COLUMNS 12

static const char *const column_titles[N_COLUMNS] = {
  "name", "kind", "parent", "devices", "commands", "MiB", "MB/s", "util%",
  "wait_us", "slot_wait_us", "outstanding", "active",
};

/* Text columns align left, numbers right. */
static gboolean
column_left (guint c)
{
  return c < 3;
}

static void
format_row (const SimTopoStats *s, char **cells)
{
  gboolean adapter = s->can_queue > 0;
  cells[0] = g_strdup (s->name);
  cells[1] = g_strdup (s->kind);
  cells[2] = g_strdup (s->parent ? s->parent : "-");
  cells[3] = g_strdup_printf ("%u", s->devices);
  cells[4] = g_strdup_printf ("%" G_GUINT64_FORMAT, s->commands);
  cells[5] = g_strdup_printf ("%.1f", (double) s->bytes / (1024.0 * 1024.0));
  cells[6] = g_strdup_printf ("%.2f", s->throughput_bytes_per_s / 1e6);
  cells[7] = g_strdup_printf ("%.1f", 100.0 * s->utilisation);
  cells[8] = g_strdup_printf ("%.1f", s->mean_wait_ns / 1e3);
  cells[9] = adapter ? g_strdup_printf ("%.1f", s->mean_slot_wait_ns / 1e3) : g_strdup ("-");
  cells[10] = adapter ? g_strdup_printf ("%u/%u", s->max_outstanding, s->can_queue) : g_strdup ("-");
  cells[11] = adapter ? g_strdup ("-") : g_strdup_printf ("%u", s->max_active_devices);
}

void
sim_topology_format_stats (const SimTopology *topo, SimTime now_ns, GString *out)
{
  g_autoptr (GArray) rows = sim_topology_stats (topo, now_ns);
  guint n_rows = rows->len + 1;
  g_autoptr (GPtrArray) cells = g_ptr_array_new_with_free_func (g_free);
  for (guint c = 0; c < N_COLUMNS; c++)
    g_ptr_array_add (cells, g_strdup (column_titles[c]));
  for (guint r = 0; r < rows->len; r++)
    {
      char *row[N_COLUMNS];
      format_row (&g_array_index (rows, SimTopoStats, r), row);
      for (guint c = 0; c < N_COLUMNS; c++)
        g_ptr_array_add (cells, row[c]);
    }
  int width[N_COLUMNS] = { 0 };
  for (guint r = 0; r < n_rows; r++)
    for (guint c = 0; c < N_COLUMNS; c++)
      width[c] = MAX (width[c], (int) strlen (g_ptr_array_index (cells, r * N_COLUMNS + c)));
  for (guint r = 0; r < n_rows; r++)
    {
      for (guint c = 0; c < N_COLUMNS; c++)
        {
          const char *cell = g_ptr_array_index (cells, r * N_COLUMNS + c);
          g_string_append_printf (out, c == 0 ? "%-*s" : column_left (c) ? "  %-*s" : "  %*s",
                                  width[c], cell);
        }
      g_string_append_c (out, '\n');
    }
  for (guint r = 0; r < rows->len; r++)
    {
      const SimTopoStats *s = &g_array_index (rows, SimTopoStats, r);
      if (g_strcmp0 (s->arbitration, sim_channel_arbitration_name (SIM_CHANNEL_CHOOSE_DRIVE)) == 0)
        g_string_append_printf (out, "%s: choose_drive stalled a drive %" G_GUINT64_FORMAT
                                " times; busy without a command %.3f s\n",
                                s->name, s->stalls, (double) s->snooze_ns / 1e9);
    }
}
