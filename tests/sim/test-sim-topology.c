/* test-sim-topology.c — buses and adapters between host and devices
 * (sim/sim-topology.c): an IDE channel serialises master and slave, a
 * shared bus caps the throughput of fast devices at its bandwidth, an
 * adapter's can_queue caps outstanding commands and its starved devices
 * are run again, SCSI-like disconnect lets positioning overlap, a command
 * crosses the path in the right order, a device attached to nothing
 * completes exactly when the device model says, and drivers/ide's
 * choose_drive favours the drive with short commands and stalls the one
 * with long commands for it.
 *
 * Devices are fixed-time models whose service_time hook is wrapped to
 * record when each device actually serves, independently of the topology
 * code; the topology's trace hook records transfers and channel holds. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-topology.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"

#define MAX_DISKS 4
#define GAP_SECTORS 64     /* between requests, so that nothing merges */

typedef struct {
  SimTime begin_ns;
  SimTime end_ns;
} Interval;

typedef struct _Rig Rig;

/* One device with its queue and a closed-loop job of @total requests,
 * @depth of them submitted at a time. */
typedef struct {
  Rig             *rig;
  SimRequestQueue *q;
  SimDevice       *dev;
  SimIoContext     ioc;
  SimOp            op;
  gboolean         alternate;   /* read, write, read, ... instead of op */
  const guint32   *sizes;       /* sectors, cycled */
  guint            n_sizes;
  guint            total;
  guint            depth;
  SimTime          think_ns;    /* after a completion, before the next submission */
  guint            submitted;
  guint            completed;
  guint64          next_sector;
  GArray          *service;     /* Interval: the device serving, from the model */
  GArray          *holds;       /* Interval: the IDE channel held */
  GArray          *done_ns;     /* SimTime of each completion */
  SimTime          hold_begin_ns;
} Disk;

struct _Rig {
  Sim         *sim;
  SimTopology *topo;
  Disk         disks[MAX_DISKS];
  guint        n_disks;
  GHashTable  *xfers;           /* bus or adapter name -> GArray of Interval */
  guint        slots;           /* outstanding, from SLOT_GET/PUT */
  guint        max_slots;
  guint        max_in_flight;   /* sum over disks when a service starts */
  GString     *order;           /* "pci+ pci- dev ..." */
};

static const guint32 size_64k[] = { 128 };
static const guint32 size_128k[] = { 256 };
static const guint32 size_4k[] = { 8 };

/* The model wrapper reaches its rig through this (tests run one at a time). */
static Rig *current_rig;
static DevOps rec_ops;

static Disk *
disk_of_model (Rig *rig, DevModel *model)
{
  for (guint i = 0; i < rig->n_disks; i++)
    if (rig->disks[i].dev->model == model)
      return &rig->disks[i];
  g_assert_not_reached ();
}

static SimTime
rec_service_time (DevModel *model, SimOp op, guint64 sector, guint32 nr_sectors, SimTime now_ns)
{
  SimTime t = dev_fixed_ops.service_time (model, op, sector, nr_sectors, now_ns);
  Rig *rig = current_rig;
  Disk *d = disk_of_model (rig, model);
  Interval iv = { now_ns, now_ns + t };
  g_array_append_val (d->service, iv);
  guint in_flight = 0;
  for (guint i = 0; i < rig->n_disks; i++)
    in_flight += rig->disks[i].dev->in_flight;
  rig->max_in_flight = MAX (rig->max_in_flight, in_flight);
  if (rig->order)
    g_string_append (rig->order, "dev ");
  return t;
}

static Disk *
disk_of_device (Rig *rig, const SimDevice *dev)
{
  for (guint i = 0; i < rig->n_disks; i++)
    if (rig->disks[i].dev == dev)
      return &rig->disks[i];
  g_assert_not_reached ();
}

static void
on_topo_event (gpointer data, const SimTopoEvent *ev)
{
  Rig *rig = data;
  if (ev->kind == SIM_TOPO_XFER_BEGIN || ev->kind == SIM_TOPO_XFER_END)
    {
      GArray *a = g_hash_table_lookup (rig->xfers, ev->object);
      if (a == NULL)
        {
          a = g_array_new (FALSE, FALSE, sizeof (Interval));
          g_hash_table_insert (rig->xfers, g_strdup (ev->object), a);
        }
      if (ev->kind == SIM_TOPO_XFER_BEGIN)
        {
          Interval iv = { ev->time_ns, -1 };
          g_array_append_val (a, iv);
        }
      else
        {
          g_assert_cmpuint (a->len, >, 0);
          Interval *last = &g_array_index (a, Interval, a->len - 1);
          g_assert_cmpint (last->end_ns, ==, -1);
          last->end_ns = ev->time_ns;
        }
      if (rig->order)
        g_string_append_printf (rig->order, "%s%c ", ev->object,
                                ev->kind == SIM_TOPO_XFER_BEGIN ? '+' : '-');
    }
  else if (ev->kind == SIM_TOPO_CHANNEL_GRANT)
    disk_of_device (rig, ev->device)->hold_begin_ns = ev->time_ns;
  else if (ev->kind == SIM_TOPO_CHANNEL_RELEASE)
    {
      Disk *d = disk_of_device (rig, ev->device);
      Interval iv = { d->hold_begin_ns, ev->time_ns };
      g_array_append_val (d->holds, iv);
    }
  else if (ev->kind == SIM_TOPO_SLOT_GET)
    {
      rig->slots++;
      rig->max_slots = MAX (rig->max_slots, rig->slots);
    }
  else
    {
      g_assert_cmpuint (rig->slots, >, 0);
      rig->slots--;
    }
}

static void
rig_init (Rig *rig)
{
  memset (rig, 0, sizeof *rig);
  rig->sim = sim_new (1);
  rig->topo = sim_topology_new (rig->sim);
  rig->xfers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify) g_array_unref);
  sim_topology_set_trace (rig->topo, on_topo_event, rig);
  rec_ops = dev_fixed_ops;
  rec_ops.service_time = rec_service_time;
  current_rig = rig;
}

static Disk *
rig_add_disk (Rig *rig, const char *name, const char *model_text)
{
  g_assert_cmpuint (rig->n_disks, <, MAX_DISKS);
  Disk *d = &rig->disks[rig->n_disks++];
  d->rig = rig;
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  d->q = sim_queue_new (rig->sim, name, &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data (name, model_text, &error);
  g_assert_no_error (error);
  model->ops = &rec_ops;
  d->dev = sim_device_new (rig->sim, model);
  d->dev->q = d->q;
  sim_queue_set_device (d->q, d->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_assert_true (g_key_file_load_from_data (kf, "[sched noop]\n", -1, 0, NULL));
  SchedQueue *e = sched_queue_new (sched_ops_lookup ("noop"), d->q, rig->sim, 1000, kf,
                                   "sched noop", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (d->q, e);
  d->ioc = (SimIoContext) { .pid = rig->n_disks, .comm = "t", .ioprio_class = 2,
                            .ioprio_level = 4, .nr_tasks = 1 };
  d->service = g_array_new (FALSE, FALSE, sizeof (Interval));
  d->holds = g_array_new (FALSE, FALSE, sizeof (Interval));
  d->done_ns = g_array_new (FALSE, FALSE, sizeof (SimTime));
  return d;
}

static void
disk_job (Disk *d, SimOp op, const guint32 *sizes, guint n_sizes, guint total, guint depth)
{
  d->op = op;
  d->sizes = sizes;
  d->n_sizes = n_sizes;
  d->total = total;
  d->depth = depth;
}

static void bio_done (Sim *sim, SimBio *bio, SimTime now);

static void
disk_submit (Disk *d)
{
  guint i = d->submitted++;
  SimBio *bio = sim_queue_bio_alloc (d->q);
  bio->nr_sectors = d->sizes[i % d->n_sizes];
  bio->sector = d->next_sector;
  d->next_sector += bio->nr_sectors + GAP_SECTORS;
  bio->op = d->alternate ? (i % 2 ? SIM_OP_WRITE : SIM_OP_READ) : d->op;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &d->ioc;
  bio->end_io = bio_done;
  bio->end_io_data = d;
  g_assert_true (sim_queue_submit_bio (d->q, bio, NULL));
  sim_queue_unplug (d->q, &d->ioc);
}

static void
submit_after_think (Sim *sim, gpointer subject, gpointer object)
{
  disk_submit (subject);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Disk *d = bio->end_io_data;
  d->completed++;
  g_array_append_val (d->done_ns, now);
  if (d->submitted >= d->total)
    return;
  if (d->think_ns > 0)
    sim_schedule_in (sim, d->think_ns, submit_after_think, d, NULL);
  else
    disk_submit (d);
}

/* Runs every disk's job to the end; returns the last completion time. */
static SimTime
rig_run (Rig *rig)
{
  for (guint i = 0; i < rig->n_disks; i++)
    {
      Disk *d = &rig->disks[i];
      while (d->submitted < MIN (d->depth, d->total))
        disk_submit (d);
    }
  sim_run_until (rig->sim, SIM_TIME_NEVER);
  SimTime last = 0;
  for (guint i = 0; i < rig->n_disks; i++)
    {
      Disk *d = &rig->disks[i];
      g_assert_cmpuint (d->completed, ==, d->total);
      last = MAX (last, g_array_index (d->done_ns, SimTime, d->done_ns->len - 1));
    }
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_topology_check (rig->topo, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rig->slots, ==, 0);
  return last;
}

static void
rig_clear (Rig *rig)
{
  for (guint i = 0; i < rig->n_disks; i++)
    {
      Disk *d = &rig->disks[i];
      sim_queue_free (d->q);
      sim_device_free (d->dev);
      g_array_unref (d->service);
      g_array_unref (d->holds);
      g_array_unref (d->done_ns);
    }
  sim_topology_free (rig->topo);
  g_hash_table_unref (rig->xfers);
  if (rig->order)
    g_string_free (rig->order, TRUE);
  sim_free (rig->sim);
  current_rig = NULL;
}

static SimAdapter *
add_adapter (Rig *rig, const char *name, double bandwidth, SimTime overhead_ns,
             guint can_queue, SimBus *host_bus)
{
  g_autoptr (GError) error = NULL;
  SimAdapter *a = sim_topology_add_adapter (rig->topo, name, bandwidth, overhead_ns,
                                            can_queue, host_bus, &error);
  g_assert_no_error (error);
  return a;
}

static SimBus *
add_bus (Rig *rig, const char *name, SimBusKind kind, double bandwidth, SimTime overhead_ns,
         SimAdapter *owner)
{
  g_autoptr (GError) error = NULL;
  SimBus *b = sim_topology_add_bus (rig->topo, name, kind, bandwidth, overhead_ns, owner, &error);
  g_assert_no_error (error);
  return b;
}

static void
attach (Disk *d, SimAdapter *a, SimBus *b)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_device_attach (d->dev, a, b, &error));
  g_assert_no_error (error);
}

/* ---- interval helpers -------------------------------------------------- */

static int
by_begin (gconstpointer a, gconstpointer b)
{
  const Interval *x = a, *y = b;
  return x->begin_ns < y->begin_ns ? -1 : x->begin_ns > y->begin_ns;
}

/* The intervals of @a and @b (may be NULL) never overlap. */
static void
assert_disjoint (GArray *a, GArray *b)
{
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (Interval));
  g_array_append_vals (all, a->data, a->len);
  if (b)
    g_array_append_vals (all, b->data, b->len);
  g_array_sort (all, by_begin);
  for (guint i = 0; i < all->len; i++)
    {
      const Interval *iv = &g_array_index (all, Interval, i);
      g_assert_cmpint (iv->end_ns, >=, iv->begin_ns);
      if (i > 0)
        g_assert_cmpint (iv->begin_ns, >=, g_array_index (all, Interval, i - 1).end_ns);
    }
}

static gboolean
any_overlap (GArray *a, GArray *b)
{
  for (guint i = 0; i < a->len; i++)
    for (guint j = 0; j < b->len; j++)
      {
        const Interval *x = &g_array_index (a, Interval, i);
        const Interval *y = &g_array_index (b, Interval, j);
        if (x->begin_ns < y->end_ns && y->begin_ns < x->end_ns)
          return TRUE;
      }
  return FALSE;
}

/* Every interval of @inner lies inside one of @outer. */
static void
assert_within (GArray *inner, GArray *outer)
{
  for (guint i = 0; i < inner->len; i++)
    {
      const Interval *x = &g_array_index (inner, Interval, i);
      gboolean found = FALSE;
      for (guint j = 0; j < outer->len && !found; j++)
        {
          const Interval *y = &g_array_index (outer, Interval, j);
          found = y->begin_ns <= x->begin_ns && x->end_ns <= y->end_ns;
        }
      g_assert_true (found);
    }
}

/* ---- tests ------------------------------------------------------------- */

#define FAST_DISK "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\n"
#define SLOW_SEEK_DISK "[device]\nkind = fixed\noverhead = 10ms\nbandwidth = 100MB/s\n"

/* 64 KiB at 100 MB/s (1e8 bytes/s) */
#define XFER_64K_NS G_GINT64_CONSTANT (655360)
/* One sector at 100 MB/s: how long after the media a cut-through read's
 * data is across a 100 MB/s bus without overhead. */
#define XFER_SECTOR_NS G_GINT64_CONSTANT (5120)

/* Two disks on @n_channels IDE channels of one controller (UDMA at
 * 100 MB/s), @per_disk reads of 64 KiB each. */
static SimTime
run_ide (Rig *rig, guint n_channels, const char *disk_model, guint per_disk)
{
  rig_init (rig);
  SimAdapter *a = add_adapter (rig, "ide0", 0, 0, 2, NULL);
  SimBus *ch[2];
  ch[0] = add_bus (rig, "ide0.0", SIM_BUS_IDE_CHANNEL, 100e6, 0, a);
  ch[1] = n_channels == 2 ? add_bus (rig, "ide0.1", SIM_BUS_IDE_CHANNEL, 100e6, 0, a) : ch[0];
  Disk *hda = rig_add_disk (rig, "hda", disk_model);
  Disk *hdb = rig_add_disk (rig, "hdb", disk_model);
  attach (hda, a, ch[0]);
  attach (hdb, a, ch[1]);
  disk_job (hda, SIM_OP_READ, size_64k, 1, per_disk, 2);
  disk_job (hdb, SIM_OP_READ, size_64k, 1, per_disk, 2);
  return rig_run (rig);
}

static void
test_ide_channel_serialises (void)
{
  /* A command holds the channel for device service (1 ms + 64 KiB at
   * 100 MB/s) and its transfer on the channel, which overlaps the service
   * but for the last sector (cut-through). */
  const SimTime hold_ns = SIM_NS_PER_MS + XFER_64K_NS + XFER_SECTOR_NS;
  Rig one, two;

  SimTime t_one = run_ide (&one, 1, FAST_DISK, 50);
  Disk *hda = &one.disks[0], *hdb = &one.disks[1];
  assert_disjoint (hda->service, hdb->service);
  assert_disjoint (hda->holds, hdb->holds);
  assert_within (hda->service, hda->holds);
  assert_within (hdb->service, hdb->holds);
  g_assert_cmpuint (hda->holds->len + hdb->holds->len, ==, 100);
  /* Back to back: the channel is never idle while a command waits. */
  g_assert_cmpint (t_one, ==, 100 * hold_ns);
  SimBus *ch = sim_topology_lookup_bus (one.topo, "ide0.0");
  g_assert_cmpuint (ch->max_active_devices, ==, 1);
  SimTopoStats st;
  sim_bus_get_stats (ch, t_one, &st);
  g_assert_cmpstr (st.kind, ==, "ide-channel");
  g_assert_cmpuint (st.devices, ==, 2);
  g_assert_cmpuint (st.bytes, ==, 100 * 65536);
  g_assert_cmpfloat_with_epsilon (st.utilisation, 1.0, 1e-9);
  /* Master and slave take turns: every command but the first waits for
   * the other device's whole hold. */
  g_assert_cmpfloat_with_epsilon (st.mean_wait_ns, 99.0 / 100.0 * hold_ns, 1.0);
  rig_clear (&one);

  SimTime t_two = run_ide (&two, 2, FAST_DISK, 50);
  g_assert_true (any_overlap (two.disks[0].service, two.disks[1].service));
  g_assert_cmpint (t_two, ==, 50 * hold_ns);
  rig_clear (&two);

  double ratio = (double) t_one / (double) t_two;
  g_assert_cmpfloat (ratio, >, 1.95);
  g_assert_cmpfloat (ratio, <, 2.05);
}

/* Four devices of 100 us + 200 MB/s (about 173 MB/s each for 128 KiB
 * reads) behind one 160 MB/s bus with 10 us per command. */
static void
test_shared_bus_bandwidth (void)
{
  const double bus_bw = 160e6;
  const SimTime bus_overhead_ns = 10 * SIM_NS_PER_US;
  const guint64 bytes = 131072;
  const guint n = 4, per_disk = 150;
  Rig rig;
  rig_init (&rig);
  SimAdapter *a = add_adapter (&rig, "ahc0", 0, 0, 32, NULL);
  SimBus *bus = add_bus (&rig, "scsi0", SIM_BUS_SHARED, bus_bw, bus_overhead_ns, a);
  const char *names[] = { "sda", "sdb", "sdc", "sdd" };
  for (guint i = 0; i < n; i++)
    {
      Disk *d = rig_add_disk (&rig, names[i], "[device]\nkind = fixed\noverhead = 100us\n"
                              "bandwidth = 200MB/s\nqueue_depth = 2\n");
      attach (d, a, bus);
      disk_job (d, SIM_OP_READ, size_128k, 1, per_disk, 4);
    }
  double device_bw = bytes / (100e-6 + bytes / 200e6);
  g_assert_cmpfloat (n * device_bw, >, 3 * bus_bw);

  SimTime end = rig_run (&rig);

  /* The bus moves one command at a time in overhead + bytes / bandwidth,
   * so saturated it delivers bytes per that time, slightly less than its
   * raw bandwidth because of the overhead. */
  SimTime per_cmd_ns = bus_overhead_ns + (SimTime) (bytes * 1e9 / bus_bw);
  g_assert_cmpint (per_cmd_ns, ==, 829200);
  double expected = (double) bytes * 1e9 / (double) per_cmd_ns;
  double measured = (double) (n * per_disk * bytes) * 1e9 / (double) end;
  g_assert_cmpfloat (measured, <=, bus_bw);
  g_assert_cmpfloat (fabs (measured / expected - 1.0), <, 0.01);
  /* The bus is never idle: cut-through starts the first burst while the
   * first device still reads (its 828 us burst may start right away, as
   * it cannot end before the 755 us of media plus a sector). */
  g_assert_cmpint (end, ==, n * per_disk * per_cmd_ns);

  GArray *busy = g_hash_table_lookup (rig.xfers, "scsi0");
  g_assert_nonnull (busy);
  g_assert_cmpuint (busy->len, ==, n * per_disk);
  assert_disjoint (busy, NULL);
  for (guint i = 0; i < busy->len; i++)
    {
      const Interval *iv = &g_array_index (busy, Interval, i);
      g_assert_cmpint (iv->end_ns - iv->begin_ns, ==, per_cmd_ns);
    }
  SimTopoStats st;
  sim_bus_get_stats (bus, end, &st);
  g_assert_cmpuint (st.commands, ==, n * per_disk);
  g_assert_cmpuint (st.bytes, ==, n * per_disk * bytes);
  g_assert_cmpfloat (st.utilisation, >, 0.99);
  g_assert_cmpfloat (st.mean_wait_ns, >, 0);
  g_assert_cmpuint (st.max_active_devices, ==, n);
  rig_clear (&rig);
}

/* Four devices that could each take four commands at once, on an adapter
 * with can_queue = 3. */
static SimTime
run_can_queue (Rig *rig, guint can_queue)
{
  rig_init (rig);
  SimAdapter *a = add_adapter (rig, "hba", 0, 0, can_queue, NULL);
  SimBus *bus = add_bus (rig, "bus0", SIM_BUS_SHARED, 1e9, 0, a);
  const char *names[] = { "sda", "sdb", "sdc", "sdd" };
  for (guint i = 0; i < 4; i++)
    {
      Disk *d = rig_add_disk (rig, names[i], "[device]\nkind = fixed\noverhead = 2ms\n"
                              "bandwidth = 100MB/s\nqueue_depth = 4\nparallelism = 4\n");
      attach (d, a, bus);
      disk_job (d, SIM_OP_READ, size_4k, 1, 40, 8);
    }
  /* A refused device has nothing in flight, so only the adapter's run of
   * its starved devices can start it again: without it rig_run would find
   * requests never completed. */
  return rig_run (rig);
}

static void
test_adapter_can_queue (void)
{
  Rig rig;
  SimTime end = run_can_queue (&rig, 3);
  g_assert_cmpuint (rig.max_slots, ==, 3);
  g_assert_cmpuint (rig.max_in_flight, ==, 3);
  SimAdapter *a = sim_topology_lookup_adapter (rig.topo, "hba");
  SimTopoStats st;
  sim_adapter_get_stats (a, end, &st);
  g_assert_cmpuint (st.max_outstanding, ==, 3);
  g_assert_cmpuint (st.can_queue, ==, 3);
  g_assert_cmpfloat (st.mean_slot_wait_ns, >, 0);
  /* 160 commands of at least 2 ms, three at a time. */
  g_assert_cmpint (end, >=, 160 * 2 * SIM_NS_PER_MS / 3);
  /* Starved devices are run oldest first, so all four progress together. */
  for (guint i = 0; i < 4; i++)
    {
      GArray *done = rig.disks[i].done_ns;
      g_assert_cmpint (g_array_index (done, SimTime, done->len - 1), >=, end * 9 / 10);
    }
  rig_clear (&rig);

  /* Room for every device's depth: the limit was what held them back. */
  SimTime free_end = run_can_queue (&rig, 16);
  g_assert_cmpuint (rig.max_slots, ==, 16);
  g_assert_cmpint (free_end, <, end / 4);
  rig_clear (&rig);
}

/* Two devices that position for 10 ms per command: on a shared bus they
 * disconnect while positioning, on an IDE channel they cannot. */
static void
test_disconnect_overlaps_positioning (void)
{
  const SimTime service_ns = 10 * SIM_NS_PER_MS + XFER_64K_NS;
  Rig scsi, ide;
  rig_init (&scsi);
  SimAdapter *a = add_adapter (&scsi, "ahc0", 0, 0, 16, NULL);
  SimBus *bus = add_bus (&scsi, "scsi0", SIM_BUS_SHARED, 100e6, 0, a);
  Disk *sda = rig_add_disk (&scsi, "sda", SLOW_SEEK_DISK);
  Disk *sdb = rig_add_disk (&scsi, "sdb", SLOW_SEEK_DISK);
  attach (sda, a, bus);
  attach (sdb, a, bus);
  disk_job (sda, SIM_OP_READ, size_64k, 1, 20, 1);
  disk_job (sdb, SIM_OP_READ, size_64k, 1, 20, 1);
  SimTime t_scsi = rig_run (&scsi);
  g_assert_true (any_overlap (sda->service, sdb->service));
  g_assert_cmpuint (bus->max_active_devices, ==, 2);
  assert_disjoint (g_hash_table_lookup (scsi.xfers, "scsi0"), NULL);
  /* Each device alone: 20 x (service + the last sector on the bus); the
   * first transfers collide once, after which the devices are out of
   * step. */
  g_assert_cmpint (t_scsi, ==, 20 * (service_ns + XFER_SECTOR_NS) + XFER_64K_NS);
  rig_clear (&scsi);

  /* The same work on one IDE channel: one command at a time. */
  SimTime t_ide = run_ide (&ide, 1, SLOW_SEEK_DISK, 20);
  g_assert_cmpint (t_ide, ==, 40 * (service_ns + XFER_SECTOR_NS));
  g_assert_false (any_overlap (ide.disks[0].service, ide.disks[1].service));
  rig_clear (&ide);

  g_assert_cmpfloat ((double) t_scsi, <, 0.6 * (double) t_ide);
}

/* One command through host bus, adapter and SCSI bus. */
static SimTime
run_path (Rig *rig, SimOp op)
{
  rig_init (rig);
  rig->order = g_string_new (NULL);
  SimBus *pci = add_bus (rig, "pci", SIM_BUS_SHARED, 500e6, 1000, NULL);
  SimAdapter *a = add_adapter (rig, "ahc", 200e6, 5000, 8, pci);
  SimBus *bus = add_bus (rig, "scsi", SIM_BUS_SHARED, 100e6, 20000, a);
  Disk *d = rig_add_disk (rig, "sda", FAST_DISK);
  attach (d, a, bus);
  disk_job (d, op, size_64k, 1, 1, 1);
  return rig_run (rig);
}

static void
test_path_order_and_latency (void)
{
  /* 64 KiB: pci 1 us + 131072 ns, adapter 5 us + 327680 ns, SCSI bus
   * 20 us + 655360 ns, device 1 ms + 655360 ns.  A stage's burst ends no
   * sooner than its overhead plus one sector (pci 1024 ns, adapter
   * 2560 ns, SCSI 5120 ns) after the stage upstream ended. */
  Rig rig;
  /* A write: all three bursts can start at once, none outruns the stage
   * upstream (pci ends at 132072, adapter no sooner than 139632 and ends
   * at 332680, SCSI no sooner than 357800 and ends at 675360); the
   * device then serves it. */
  const SimTime write_ns = 675360 + 1655360;
  g_assert_cmpint (run_path (&rig, SIM_OP_WRITE), ==, write_ns);
  g_assert_cmpstr (rig.order->str, ==, "pci+ ahc+ scsi+ pci- ahc- scsi- dev ");
  rig_clear (&rig);

  /* A read: the media ends at 1655360; SCSI ends 25120 later, after
   * starting 675360 before that; the adapter ends 7560 after SCSI, pci
   * 2024 after the adapter.  ("dev" marks the start of service.) */
  const SimTime read_ns = 1655360 + 25120 + 7560 + 2024;
  g_assert_cmpint (run_path (&rig, SIM_OP_READ), ==, read_ns);
  g_assert_cmpstr (rig.order->str, ==, "dev scsi+ ahc+ pci+ scsi- ahc- pci- ");
  SimTopoStats st;
  sim_bus_get_stats (sim_topology_lookup_bus (rig.topo, "pci"), read_ns, &st);
  g_assert_cmpuint (st.commands, ==, 1);
  g_assert_cmpuint (st.bytes, ==, 65536);
  g_assert_cmpfloat_with_epsilon (st.utilisation, 132072.0 / read_ns, 1e-12);
  rig_clear (&rig);
}

static const guint32 mixed_sizes[] = { 8, 64, 256, 16, 1024, 128 };

/* A closed-loop mixed job of 60 requests on "sda"; how sda is placed
 * depends on @setup: 0 attached to nothing, alone; 1 attached to nothing
 * next to two busy devices on an IDE channel; 2 behind an ideal adapter
 * (no bandwidth limit, no overhead, no bus). */
static GArray *
run_mixed (guint setup)
{
  Rig rig;
  rig_init (&rig);
  Disk *d = rig_add_disk (&rig, "sda", FAST_DISK);
  disk_job (d, SIM_OP_READ, mixed_sizes, G_N_ELEMENTS (mixed_sizes), 60, 3);
  d->alternate = TRUE;
  if (setup == 1)
    {
      SimAdapter *a = add_adapter (&rig, "ide0", 0, 0, 1, NULL);
      SimBus *ch = add_bus (&rig, "ide0.0", SIM_BUS_IDE_CHANNEL, 33e6, 5000, a);
      for (guint i = 0; i < 2; i++)
        {
          Disk *other = rig_add_disk (&rig, i ? "hdb" : "hda", SLOW_SEEK_DISK);
          attach (other, a, ch);
          disk_job (other, SIM_OP_WRITE, size_64k, 1, 10, 4);
        }
    }
  else if (setup == 2)
    attach (d, add_adapter (&rig, "ideal", 0, 0, 64, NULL), NULL);
  rig_run (&rig);
  GArray *done = g_array_ref (rig.disks[0].done_ns);
  rig_clear (&rig);
  return done;
}

static void
test_unattached_unchanged (void)
{
  /* The device model alone: noop serves in submission order, and the
   * closed loop keeps the device busy from time 0. */
  g_autoptr (GError) error = NULL;
  g_autoptr (DevModel) model = dev_model_new_from_data ("sda", FAST_DISK, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) expected = g_array_new (FALSE, FALSE, sizeof (SimTime));
  SimTime t = 0;
  guint64 sector = 0;
  for (guint i = 0; i < 60; i++)
    {
      guint32 nr = mixed_sizes[i % G_N_ELEMENTS (mixed_sizes)];
      t += dev_model_service_time (model, i % 2 ? SIM_OP_WRITE : SIM_OP_READ, sector, nr, t);
      sector += nr + GAP_SECTORS;
      g_array_append_val (expected, t);
    }

  for (guint setup = 0; setup < 3; setup++)
    {
      g_autoptr (GArray) done = run_mixed (setup);
      g_assert_cmpuint (done->len, ==, expected->len);
      for (guint i = 0; i < done->len; i++)
        g_assert_cmpint (g_array_index (done, SimTime, i), ==, g_array_index (expected, SimTime, i));
    }
}

/* ---- choose_drive (2.4 drivers/ide/ide.c) ------------------------------ */

#define SHORT_CMD_DISK "[device]\nkind = fixed\noverhead = 3ms\nbandwidth = 100MB/s\n"
#define LONG_CMD_DRIVE "[device]\nkind = fixed\noverhead = 45ms\nbandwidth = 100MB/s\n"

typedef struct {
  SimChannelArbitration arbitration;
  SimTime  think_ns;            /* the short drive's, between its commands */
  guint    min_short_per_long;  /* short commands between two long ones, at least */
  guint    max_short_per_long;  /* and at most */
  gboolean stalls;              /* the long drive is stalled and the channel snoozes */
} ChooseCase;

static const ChooseCase choose_cases[] = {
  /* FIFO: master and slave take turns. */
  { SIM_CHANNEL_FIFO,         0,                    1, 1,  FALSE },
  /* choose_drive: after a 45 ms command (WAKEUP = its start + 2 x 4 or 5
   * jiffies), the 3 ms drive keeps the channel until its own start passes
   * that: about 15 commands. */
  { SIM_CHANNEL_CHOOSE_DRIVE, 0,                   10, 20, FALSE },
  /* The short drive's queue is empty when its command ends: the long
   * drive, not served last, is stalled until its WAKEUP, the channel
   * stays busy without a command meanwhile, and the long drive goes
   * first when the stall ends: one short command per long one. */
  { SIM_CHANNEL_CHOOSE_DRIVE, SIM_NS_PER_MS,        1, 1,  TRUE },
  { SIM_CHANNEL_FIFO,         SIM_NS_PER_MS,        1, 1,  FALSE },
};

static SimTime
held_ns (GArray *holds)
{
  SimTime sum = 0;
  for (guint i = 0; i < holds->len; i++)
    sum += g_array_index (holds, Interval, i).end_ns - g_array_index (holds, Interval, i).begin_ns;
  return sum;
}

/* The short drive's holds between consecutive holds of the long drive. */
static void
short_runs (const Disk *shrt, const Disk *lng, guint *min_run, guint *max_run)
{
  *min_run = G_MAXUINT;
  *max_run = 0;
  for (guint i = 1; i < lng->holds->len; i++)
    {
      SimTime from = g_array_index (lng->holds, Interval, i - 1).end_ns;
      SimTime to = g_array_index (lng->holds, Interval, i).begin_ns;
      guint n = 0;
      for (guint j = 0; j < shrt->holds->len; j++)
        {
          const Interval *h = &g_array_index (shrt->holds, Interval, j);
          n += h->begin_ns >= from && h->end_ns <= to;
        }
      *min_run = MIN (*min_run, n);
      *max_run = MAX (*max_run, n);
    }
}

static void
test_choose_drive (gconstpointer data)
{
  const ChooseCase *c = data;
  Rig rig;
  rig_init (&rig);
  SimAdapter *a = add_adapter (&rig, "ide0", 0, 0, 2, NULL);
  SimBus *ch = add_bus (&rig, "ide0.0", SIM_BUS_IDE_CHANNEL, 100e6, 0, a);
  sim_bus_set_arbitration (ch, c->arbitration, 100);
  Disk *lng = rig_add_disk (&rig, "hdb", LONG_CMD_DRIVE);
  Disk *shrt = rig_add_disk (&rig, "hda", SHORT_CMD_DISK);
  attach (lng, a, ch);
  attach (shrt, a, ch);
  disk_job (lng, SIM_OP_WRITE, size_4k, 1, 8, 1);
  disk_job (shrt, SIM_OP_READ, size_4k, 1, 400, 1);
  shrt->think_ns = c->think_ns;
  SimTime end = rig_run (&rig);

  assert_disjoint (lng->holds, shrt->holds);
  guint min_run, max_run;
  short_runs (shrt, lng, &min_run, &max_run);
  g_assert_cmpuint (min_run, >=, c->min_short_per_long);
  g_assert_cmpuint (max_run, <=, c->max_short_per_long);

  SimTopoStats st;
  sim_bus_get_stats (ch, end, &st);
  g_assert_cmpstr (st.arbitration, ==, sim_channel_arbitration_name (c->arbitration));
  if (!c->stalls)
    {
      g_assert_cmpuint (st.stalls, ==, 0);
      g_assert_cmpint (st.snooze_ns, ==, 0);
    }
  else
    {
      /* Every long command after the first was stalled once; the snoozes
       * are time without a command on the channel. */
      g_assert_cmpuint (st.stalls, >=, lng->holds->len - 1);
      g_assert_cmpint (st.snooze_ns, >=, (SimTime) (lng->holds->len - 1) * 20 * SIM_NS_PER_MS);
      g_assert_cmpint (held_ns (lng->holds) + held_ns (shrt->holds) + st.snooze_ns, <=, end);
    }
  rig_clear (&rig);
}

static void
test_errors (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  g_autoptr (SimTopology) topo = sim_topology_new (sim);
  GError *error = NULL;

  SimBusKind kind = SIM_BUS_SHARED;
  g_assert_true (sim_bus_kind_parse ("ide-channel", &kind, &error));
  g_assert_cmpint (kind, ==, SIM_BUS_IDE_CHANNEL);
  g_assert_cmpstr (sim_bus_kind_name (kind), ==, "ide-channel");
  g_assert_false (sim_bus_kind_parse ("scsi", &kind, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);

  SimBus *pci = sim_topology_add_bus (topo, "pci", SIM_BUS_SHARED, 133e6, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (sim_topology_add_bus (topo, "pci", SIM_BUS_SHARED, 1e6, 0, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_null (sim_topology_add_bus (topo, "x", SIM_BUS_SHARED, -1, 0, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_null (sim_topology_add_bus (topo, "x", SIM_BUS_SHARED, NAN, 0, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_null (sim_topology_add_bus (topo, "x", SIM_BUS_SHARED, 1e6, -5, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_null (sim_topology_add_bus (topo, "x", SIM_BUS_IDE_CHANNEL, 1e6, 0, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);

  g_assert_null (sim_topology_add_adapter (topo, "ide0", 0, 0, 0, pci, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  SimAdapter *ide0 = sim_topology_add_adapter (topo, "ide0", 0, 0, 2, pci, &error);
  g_assert_no_error (error);
  SimAdapter *ide1 = sim_topology_add_adapter (topo, "ide1", 0, 0, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (sim_topology_add_adapter (topo, "ide0", 0, 0, 2, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  SimBus *ch = sim_topology_add_bus (topo, "ide0.0", SIM_BUS_IDE_CHANNEL, 100e6, 0, ide0, &error);
  g_assert_no_error (error);
  g_assert_null (sim_topology_add_adapter (topo, "bad", 0, 0, 2, ch, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_true (sim_topology_lookup_bus (topo, "ide0.0") == ch);
  g_assert_true (sim_topology_lookup_adapter (topo, "ide1") == ide1);
  g_assert_null (sim_topology_lookup_bus (topo, "ide0"));

  SimDevice *devs[4];
  const char *names[] = { "hda", "hdb", "hdc", "hdd" };
  for (guint i = 0; i < 4; i++)
    {
      DevModel *m = dev_model_new_from_data (names[i], FAST_DISK, &error);
      g_assert_no_error (error);
      devs[i] = sim_device_new (sim, m);
    }
  g_assert_true (sim_device_attach (devs[0], ide0, ch, &error));
  g_assert_false (sim_device_attach (devs[0], ide0, ch, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_true (sim_device_attach (devs[1], ide0, ch, &error));
  g_assert_false (sim_device_attach (devs[2], ide0, ch, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_FULL);
  g_assert_nonnull (strstr (error->message, "'hdc'"));
  g_assert_nonnull (strstr (error->message, "'ide0.0'"));
  g_clear_error (&error);
  /* A channel of another controller, and a host bus, are not buses of ide1. */
  g_assert_false (sim_device_attach (devs[2], ide1, ch, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_false (sim_device_attach (devs[2], ide1, pci, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_clear_error (&error);
  g_assert_null (devs[2]->attachment);
  /* Detaching frees the place on the channel. */
  sim_device_detach (devs[1]);
  g_assert_true (sim_device_attach (devs[2], ide0, ch, &error));
  g_assert_cmpuint (ch->n_devices, ==, 2);
  g_assert_true (sim_device_attach (devs[3], ide1, NULL, &error));
  g_assert_true (sim_topology_check (topo, &error));

  /* Devices may be freed before or after the topology. */
  sim_device_free (devs[0]);
  g_assert_cmpuint (ch->n_devices, ==, 1);
  g_clear_pointer (&topo, sim_topology_free);
  g_assert_null (devs[2]->attachment);
  for (guint i = 1; i < 4; i++)
    sim_device_free (devs[i]);
}

static void
test_stats_table (void)
{
  Rig rig;
  SimTime end = run_path (&rig, SIM_OP_READ);
  g_autoptr (GArray) rows = sim_topology_stats (rig.topo, end);
  g_assert_cmpuint (rows->len, ==, 3);
  g_assert_cmpstr (g_array_index (rows, SimTopoStats, 0).name, ==, "pci");
  g_assert_cmpstr (g_array_index (rows, SimTopoStats, 1).kind, ==, "adapter");
  g_assert_cmpstr (g_array_index (rows, SimTopoStats, 1).parent, ==, "pci");
  g_assert_cmpstr (g_array_index (rows, SimTopoStats, 2).parent, ==, "ahc");

  g_autoptr (GString) out = g_string_new (NULL);
  sim_topology_format_stats (rig.topo, end, out);
  g_test_message ("\n%s", out->str);
  g_auto (GStrv) lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 5);      /* header, 3 rows, "" */
  g_assert_true (g_str_has_prefix (lines[0], "name"));
  g_assert_true (g_str_has_prefix (lines[1], "pci "));
  g_assert_true (g_str_has_prefix (lines[2], "ahc "));
  g_assert_nonnull (strstr (lines[2], "1/8"));
  g_assert_nonnull (strstr (lines[3], "shared"));
  /* Aligned: every line as long as the header, and each column starts
   * where its title does. */
  const char *kind_col = strstr (lines[0], "kind");
  for (guint i = 1; i < 4; i++)
    {
      g_assert_cmpuint (strlen (lines[i]), ==, strlen (lines[0]));
      g_assert_cmpint (lines[i][kind_col - lines[0] - 1], ==, ' ');
      g_assert_cmpint (lines[i][kind_col - lines[0]], !=, ' ');
    }
  rig_clear (&rig);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/topology/ide-channel-serialises", test_ide_channel_serialises);
  g_test_add_func ("/topology/shared-bus-bandwidth", test_shared_bus_bandwidth);
  g_test_add_func ("/topology/adapter-can-queue", test_adapter_can_queue);
  g_test_add_func ("/topology/disconnect-overlaps-positioning", test_disconnect_overlaps_positioning);
  g_test_add_func ("/topology/path-order-and-latency", test_path_order_and_latency);
  g_test_add_func ("/topology/unattached-unchanged", test_unattached_unchanged);
  for (guint i = 0; i < G_N_ELEMENTS (choose_cases); i++)
    {
      const ChooseCase *c = &choose_cases[i];
      g_autofree char *path = g_strdup_printf ("/topology/arbitration/%s%s",
                                               sim_channel_arbitration_name (c->arbitration),
                                               c->think_ns ? "-short-drive-thinks" : "");
      g_test_add_data_func (path, c, test_choose_drive);
    }
  g_test_add_func ("/topology/errors", test_errors);
  g_test_add_func ("/topology/stats-table", test_stats_table);
  return g_test_run ();
}
