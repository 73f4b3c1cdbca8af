/* sim-topology.h — the I/O path between host and devices: buses and host
 * adapters (controllers).
 *
 *   host bus (SIM_BUS_SHARED, no owner)      e.g. PCI, the memory bus
 *     └─ adapter (can_queue slots)           e.g. aic7xxx, an IDE controller
 *          └─ its bus                        SCSI bus (SIM_BUS_SHARED) or
 *               └─ devices                   IDE channel (SIM_BUS_IDE_CHANNEL)
 *
 * A command on an attached device first needs an adapter slot: the host
 * has at most can_queue commands outstanding over all its devices
 * (Linux 2.6 drivers/scsi/scsi_lib.c: scsi_host_queue_ready puts a device
 * refused for that reason on shost->starved_list, and scsi_run_queue runs
 * the starved devices' queues first when a command completes).  On an IDE
 * channel the command then waits for the channel and holds it until it
 * completes, positioning and transfer alike: master and slave are never
 * active at once (drivers/ide serialises a hwgroup).  Which waiting command
 * gets the channel is the channel's arbitration: FIFO, or drivers/ide's
 * choose_drive (2.2 to 2.6.29's drivers/ide/ide.c, ide-io.c), which
 * prefers the drive whose last command started longest ago plus twice its
 * length, and makes a drive with long commands wait for one that was
 * served lately (see sim_bus_set_arbitration).  The data
 * crosses the path cut-through: a write goes host bus, adapter, bus before
 * the device serves it, a read the other way while the device reads it
 * off the media.  Each stage is a FIFO server that moves one command at a
 * time in a burst of overhead_ns + bytes / bandwidth, so it can never
 * exceed its bandwidth; a burst ends no sooner than one sector plus the
 * overhead after the stage upstream has delivered the last byte (the
 * media, for a read: disks stream from their buffer as sectors arrive,
 * ATA bus-master DMA and SCSI data-in phases alike), and starts late
 * enough to keep up with it.  A lone disk behind a path faster than its
 * media thus runs at its media rate; the path costs only what it
 * serialises: the channel's other device, a bus shared by several disks,
 * bandwidth below the media's.  On a shared bus only the transfer occupies
 * the bus (SCSI disconnect / reselect), so several devices position at
 * once.
 *
 * Simplifications: bus arbitration is FIFO, not by SCSI id; selection,
 * reselection and command phases are folded into overhead_ns; a write's
 * data reaches the drive's buffer before the drive positions for it.
 *
 * A SimTopology owns its buses and adapters; sim_device_attach links a
 * device to them (a device attached to nothing behaves as before).  Free
 * the topology after the last sim_run of the simulation.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"
#include "sim/sim-request.h"
#include "sim/sim-stats.h"

G_BEGIN_DECLS

#define SIM_TOPOLOGY_ERROR (sim_topology_error_quark ())
GQuark sim_topology_error_quark (void);

typedef enum {
  SIM_TOPOLOGY_ERROR_PARAM,      /* bad value, duplicate name, wrong owner */
  SIM_TOPOLOGY_ERROR_FULL,       /* a third device on an IDE channel */
  SIM_TOPOLOGY_ERROR_INVARIANT,  /* sim_topology_check found a violation */
} SimTopologyError;

typedef enum {
  SIM_BUS_SHARED,       /* only data transfers occupy it (SCSI, PCI, memory bus) */
  SIM_BUS_IDE_CHANNEL,  /* a command holds it for its whole life; <= 2 devices */
} SimBusKind;

#define SIM_IDE_CHANNEL_MAX_DEVICES 2u

/* How an IDE channel that comes free picks the next command. */
typedef enum {
  SIM_CHANNEL_FIFO,          /* the oldest waiting command (libata's PATA ports
                              * defer a command while the other device's runs
                              * and the SCSI midlayer retries it in order) */
  SIM_CHANNEL_CHOOSE_DRIVE,  /* drivers/ide's choose_drive, 2.2 to 2.6.29 */
} SimChannelArbitration;

/* "fifo" or "choose-drive", as scenario files write them. */
const char  *sim_channel_arbitration_name  (SimChannelArbitration  arbitration);
gboolean     sim_channel_arbitration_parse (const char            *text,
                                            SimChannelArbitration *arbitration,
                                            GError               **error);

/* "shared" or "ide-channel", as scenario files write them. */
const char  *sim_bus_kind_name         (SimBusKind            kind);
gboolean     sim_bus_kind_parse        (const char           *text,
                                        SimBusKind           *kind,
                                        GError              **error);

typedef struct _SimTopology   SimTopology;
typedef struct _SimBus        SimBus;
typedef struct _SimAdapter    SimAdapter;
typedef struct _SimAttachment SimAttachment;
typedef struct _SimDevice     SimDevice;

/* A FIFO transfer server: a bus's or an adapter's data path.  Waiting
 * commands are linked through SimRequest.queuelist, which is free while a
 * started command is outside the device's own wait list. */
typedef struct {
  SimTopology *topo;
  const char  *name;                  /* the owner's */
  double       bandwidth_bytes_per_s; /* 0 = unlimited */
  SimTime      overhead_ns;           /* per command */
  SimList      queue;
  guint        queued;
  SimRequest  *current;               /* in transfer; NULL when idle */
  SimTime      begin_ns;              /* of the current transfer */
  SimTime      last_end_ns;           /* when the previous transfer ended */
  /* statistics */
  SimTime      created_ns;
  SimTimeAvg   busy_avg;              /* 1 while transferring */
  SimTimeAvg   queue_avg;             /* waiting commands; its area is the sum of waits */
  guint64      started;
  guint64      commands;              /* transfers finished */
  guint64      bytes;                 /* of finished transfers */
  SimTime      busy_ns;               /* sum of finished transfers' durations */
  guint        max_concurrent;        /* transfers seen at once; must stay 1 */
} SimXfer;

struct _SimBus {
  SimTopology *topo;
  char        *name;
  SimBusKind   kind;
  SimAdapter  *owner;                 /* NULL for a host bus */
  SimXfer      xfer;
  SimList      devices;               /* SimAttachment.bus_link */
  guint        n_devices;
  guint        active_devices;        /* with a command past the channel, not complete */
  guint        max_active_devices;
  /* IDE channel: the holder and the commands waiting for it, oldest first */
  SimRequest  *holder;
  SimList      waiters;
  guint        n_waiters;
  guint64      grants;
  SimTimeAvg   hold_avg;              /* 1 while held */
  SimTimeAvg   waiters_avg;
  /* choose_drive's hwgroup (ide_hwgroup_t) */
  SimChannelArbitration arbitration;
  guint        hz;
  SimTime      tick_ns;               /* one jiffy */
  SimAttachment *last_drive;          /* hwgroup->drive: the drive chosen last */
  gboolean     completing;            /* a holder's completion is under way */
  gboolean     snoozing;              /* busy without a command (hwgroup->sleeping) */
  SimTime      snooze_begin_ns;
  guint64      stalls;                /* drives made to wait (ide_stall_queue) */
  SimTime      snooze_ns;             /* idle while snoozing */
};

struct _SimAdapter {
  SimTopology *topo;
  char        *name;
  SimBus      *host_bus;              /* may be NULL */
  guint        can_queue;
  SimXfer      xfer;
  guint        outstanding;           /* slots taken */
  guint        max_outstanding;
  guint64      slots_taken;
  SimList      devices;               /* SimAttachment.adapter_link */
  guint        n_devices;
  SimList      starved;               /* SimAttachment.starved_link, FIFO */
  guint        n_starved;
  SimTimeAvg   starved_avg;           /* its area is the sum of slot waits */
};

/* One device's place in the topology; owned by the device. */
struct _SimAttachment {
  SimDevice   *dev;
  SimAdapter  *adapter;
  SimBus      *bus;                   /* may be NULL (a port of its own) */
  SimXfer     *path[3];               /* host to device: host bus, adapter, bus */
  guint        n_path;
  SimList      adapter_link;
  SimList      bus_link;
  SimList      starved_link;
  guint        active;                /* commands past the channel, not complete */
  /* choose_drive's per-drive state (ide_drive_t), in jiffies */
  gint64       service_start_j;       /* when it was last chosen */
  gint64       service_time_j;        /* how long its last command held the channel */
  gint64       sleep_j;               /* stalled until then, while sleeping */
  gboolean     sleeping;
};

/* What kind of step a trace event reports. */
typedef enum {
  SIM_TOPO_SLOT_GET,        /* object: the adapter */
  SIM_TOPO_SLOT_PUT,
  SIM_TOPO_CHANNEL_GRANT,   /* object: the IDE channel */
  SIM_TOPO_CHANNEL_RELEASE,
  SIM_TOPO_XFER_BEGIN,      /* object: the bus or adapter */
  SIM_TOPO_XFER_END,
} SimTopoEventKind;

typedef struct {
  SimTopoEventKind  kind;
  SimTime           time_ns;
  const char       *object;
  const SimDevice  *device;
  const SimRequest *rq;
  guint64           bytes;
} SimTopoEvent;

typedef void (*SimTopologyTraceFunc) (gpointer data, const SimTopoEvent *ev);

/* One row of statistics, from creation to @now_ns. */
typedef struct {
  const char *name;                   /* owned by the object */
  const char *kind;                   /* "adapter", "shared", "ide-channel" */
  const char *parent;                 /* host bus of an adapter, owner of a bus; NULL */
  guint       devices;                /* attached to it (none on a host bus) */
  guint64     commands;               /* transfers finished */
  guint64     bytes;
  double      throughput_bytes_per_s;
  double      utilisation;            /* busy fraction: transferring (IDE: held) */
  double      mean_wait_ns;           /* for the transfer (IDE: for the channel) */
  double      mean_slot_wait_ns;      /* adapter: for a slot (per command started) */
  guint       max_outstanding;        /* adapter */
  guint       can_queue;              /* adapter */
  guint       max_active_devices;     /* bus */
  const char *arbitration;            /* IDE channel: "fifo" or "choose-drive" */
  guint64     stalls;                 /* IDE channel, choose-drive */
  SimTime     snooze_ns;              /* IDE channel, choose-drive */
} SimTopoStats;

SimTopology *sim_topology_new          (Sim                  *sim);
/* Detaches every device still attached. */
void         sim_topology_free         (SimTopology          *topo);
void         sim_topology_set_trace    (SimTopology          *topo,
                                        SimTopologyTraceFunc  fn,
                                        gpointer              data);

/* A bus.  @owner is the adapter whose bus or channel it is; NULL makes a
 * host bus that adapters sit on (it must be SIM_BUS_SHARED).  Errors:
 * a duplicate name, a negative or non-finite bandwidth, a negative
 * overhead, an IDE channel without owner. */
SimBus      *sim_topology_add_bus      (SimTopology          *topo,
                                        const char           *name,
                                        SimBusKind            kind,
                                        double                bandwidth_bytes_per_s,
                                        SimTime               overhead_ns,
                                        SimAdapter           *owner,
                                        GError              **error);
/* An adapter on @host_bus (a host bus, or NULL).  Errors: a duplicate
 * name, bad bandwidth or overhead, can_queue 0, a @host_bus that belongs
 * to an adapter. */
SimAdapter  *sim_topology_add_adapter  (SimTopology          *topo,
                                        const char           *name,
                                        double                bandwidth_bytes_per_s,
                                        SimTime               overhead_ns,
                                        guint                 can_queue,
                                        SimBus               *host_bus,
                                        GError              **error);
/* Arbitrate the IDE channel @bus as drivers/ide did from 2.2 to 2.6.29
 * (SIM_CHANNEL_CHOOSE_DRIVE; the default is FIFO), counting in jiffies of
 * @hz.  When the channel comes free, choose_drive takes, among the drives
 * with a command waiting and not stalled, a drive whose stall has run out,
 * else the one with the earliest WAKEUP = service_start + 2 service_time
 * (ties to the drive served last).  Being nice (nice1, set for every drive
 * with a driver): a drive other than the last one, whose last command held
 * the channel over WAIT_MIN_SLEEP (2 HZ/100) and whose WAKEUP is at least
 * that far ahead, is stalled until its WAKEUP (at most 10 WAIT_MIN_SLEEP)
 * when the other drive's WAKEUP falls between now less the stalled drive's
 * service_time and the stalled drive's WAKEUP; with nothing else to start,
 * the channel then stays busy without a command (the hwgroup's snooze, at
 * least WAIT_MIN_SLEEP) until the stall ends, and the stalled drive goes
 * first.  Before any device starts a command. */
void         sim_bus_set_arbitration   (SimBus               *bus,
                                        SimChannelArbitration arbitration,
                                        guint                 hz);
SimBus      *sim_topology_lookup_bus   (SimTopology          *topo,
                                        const char           *name);
SimAdapter  *sim_topology_lookup_adapter (SimTopology        *topo,
                                        const char           *name);

/* Put @dev behind @adapter, on @channel_or_bus (owned by @adapter; NULL for
 * a device on a port of its own).  Before the device starts any command.
 * Errors: already attached, a bus of another adapter or a host bus, a
 * third device on an IDE channel. */
gboolean     sim_device_attach         (SimDevice            *dev,
                                        SimAdapter           *adapter,
                                        SimBus               *channel_or_bus,
                                        GError              **error);
/* Undo sim_device_attach; sim_device_free calls it.  The device must be
 * idle, or the simulation over (its commands in flight are forgotten). */
void         sim_device_detach         (SimDevice            *dev);

/* Every bus and adapter's invariants: never two transfers at once, busy
 * time at least what its bytes need at its bandwidth plus its overheads
 * and at most the time elapsed, an IDE channel with at most two devices
 * and one active, adapter outstanding <= can_queue.  For the end of a run;
 * the same conditions are asserted as they happen. */
gboolean     sim_topology_check        (const SimTopology    *topo,
                                        GError              **error);

/* Statistics of every bus and adapter in creation order (SimTopoStats);
 * the caller frees the array. */
GArray      *sim_topology_stats        (const SimTopology    *topo,
                                        SimTime               now_ns);
void         sim_bus_get_stats         (const SimBus         *bus,
                                        SimTime               now_ns,
                                        SimTopoStats         *out);
void         sim_adapter_get_stats     (const SimAdapter     *adapter,
                                        SimTime               now_ns,
                                        SimTopoStats         *out);
/* Appends a table with aligned columns, one row per bus and adapter. */
void         sim_topology_format_stats (const SimTopology    *topo,
                                        SimTime               now_ns,
                                        GString              *out);

/* Hooks for sim-device.c. */
/* TRUE when the adapter has a free slot; otherwise a device with requests
 * waiting joins the adapter's starved list (scsi_host_queue_ready). */
gboolean     sim_attachment_can_start  (SimAttachment        *att);
/* A command was started: take a slot, then the channel and the path. */
void         sim_attachment_start      (SimAttachment        *att,
                                        SimRequest           *rq);
/* The device began serving @rq and will be done at @served_ns: a read's
 * data starts across the path, cut-through, so that it can reach the host
 * just after the media (the path completes it). */
void         sim_attachment_serving    (SimAttachment        *att,
                                        SimRequest           *rq,
                                        SimTime               served_ns);
/* The device has served @rq: a write, or a read without a path,
 * completes. */
void         sim_attachment_served     (SimAttachment        *att,
                                        SimRequest           *rq);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimTopology, sim_topology_free)

G_END_DECLS
