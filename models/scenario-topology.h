/* scenario-topology.h — [bus NAME] and [adapter NAME] groups of scenario
 * files: the host bus, host adapters with their SCSI bus or IDE channel,
 * and the devices behind them (sim/sim-topology.h).
 *
 *   [bus pci]        bandwidth = 528MB/s, overhead = 0   (a host bus)
 *   [adapter scsi0]  bandwidth = 160MB/s, overhead = 30us, can_queue = 64,
 *                    host_bus = pci, bus = shared | ide | none,
 *                    bus_bandwidth (default: the adapter's), bus_overhead,
 *                    arbitration = fifo | choose-drive (bus = ide only)
 *   [device sda]     adapter = scsi0
 *
 * An adapter with bus = ide is one IDE channel controller: at most two
 * devices, one active at a time, the next chosen as the era's driver did
 * (sim_bus_set_arbitration): drivers/ide's choose_drive under [host]
 * kernel = 2.4 and 2.5.35, FIFO otherwise.  bus = none puts each device on
 * a port of its own (SATA-like). */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-device.h"
#include "sim/sim-topology.h"

G_BEGIN_DECLS

/* What the scenario's kernel decides for its topology. */
typedef struct {
  guint                 hz;               /* [sim] hz: choose_drive's jiffies */
  SimChannelArbitration ide_arbitration;  /* an IDE channel's default */
} ScenarioTopologyEra;

/* Check the groups, their keys and the devices' adapter keys (@devices:
 * "device NAME" groups, NULL-terminated). */
gboolean     scenario_topology_validate (GKeyFile           *kf,
                                         const ScenarioTopologyEra *era,
                                         const char *const  *devices,
                                         GError            **error);
/* Build the topology and attach @devs (in @devices order); NULL with no
 * [bus] or [adapter] group (and no error). */
SimTopology *scenario_topology_build    (GKeyFile           *kf,
                                         const ScenarioTopologyEra *era,
                                         Sim                *sim,
                                         const char *const  *devices,
                                         SimDevice         **devs,
                                         GError            **error);

G_END_DECLS
