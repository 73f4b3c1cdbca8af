/* sim-device.h — the engine side of a device: servers, the device's own
 * queue of started commands, completion events and utilisation.  The
 * service time of each command comes from the DevModel (models/dev/).  A
 * device attached to an adapter and bus (sim-topology.h) also needs an
 * adapter slot to start a command, and its commands cross the bus path. */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-request.h"
#include "sim/sim-stats.h"

G_BEGIN_DECLS

typedef struct _DevModel DevModel;
typedef struct _SimAttachment SimAttachment;
typedef struct _SimLoop SimLoop;

typedef struct _SimDevice SimDevice;
struct _SimDevice {
  Sim             *sim;
  DevModel        *model;        /* owned */
  SimRequestQueue *q;
  guint            queue_depth;  /* commands the host may have outstanding (the
                                  * loop's tags when behind a loop driver) */
  guint            parallelism;  /* commands served at once */
  guint            in_flight;    /* started by the host, not completed */
  guint            busy;         /* in service */
  SimList          waiting;      /* started, waiting for a server (FIFO) */
  SimTimeAvg       busy_avg;     /* fraction of time with >= 1 in service */
  SimTimeAvg       in_flight_avg;
  guint            max_in_flight;
  guint64          completed;
  SimTime          service_ns_total;
  SimAttachment   *attachment;   /* owned; NULL: attached to nothing */
  SimLoop         *loop;         /* owned; NULL: no loop driver in front (sim-loop.h) */
};

/* Takes ownership of @model. */
SimDevice *sim_device_new        (Sim *sim, DevModel *model);
void       sim_device_free       (SimDevice *dev);
/* Room for one more command.  On an attached device this also asks the
 * adapter, which may put the device on its starved list (sim-topology.h). */
gboolean   sim_device_can_start  (const SimDevice *dev);
void       sim_device_start      (SimDevice *dev, SimRequest *rq);
double     sim_device_utilisation (const SimDevice *dev, SimTime now_ns);
gboolean   sim_device_rotational (const SimDevice *dev);
/* Whether the queue has a volatile write cache (QUEUE_FLAG_WC, sysfs
 * queue/write_cache "write back"): behind a loop driver always (loop_configure
 * sets BLK_FEAT_WRITE_CACHE for a backing file with fsync, as a FUSE file
 * has; measured "write back" on a loop device here), else the model's. */
gboolean   sim_device_write_cache (const SimDevice *dev);

/* For sim-topology.c: @rq, started earlier, reaches the device's servers
 * (its write data has crossed the path); a command of the device is
 * complete and no longer counts as in flight (scsi_device_unbusy), before
 * the queue hears of it. */
void       sim_device_enter      (SimDevice *dev, SimRequest *rq);
void       sim_device_unbusy     (SimDevice *dev);

G_END_DECLS
