/* scenario-topology.c — building the I/O topology of a scenario (see
 * scenario-topology.h). */
#include "models/scenario-topology.h"
#include "models/scenario.h"
#include "models/scenario-private.h"
#include "sim/sim-units.h"

#include <string.h>

static const char *const bus_keys[] = { "bandwidth", "overhead", NULL };
static const char *const adapter_keys[] = { "bandwidth", "overhead", "can_queue", "host_bus",
                                            "bus", "bus_bandwidth", "bus_overhead",
                                            "arbitration", NULL };

/* A rate key; @dflt when absent (0 = unlimited). */
static gboolean
get_rate (GKeyFile *kf, const char *group, const char *key, double dflt, double *out,
          GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  g_autoptr (GError) local = NULL;
  if (text && !sim_parse_rate_bytes_per_s (text, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

static gboolean
get_time (GKeyFile *kf, const char *group, const char *key, SimTime *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = 0;
  g_autoptr (GError) local = NULL;
  if (text && !sim_parse_time_ns (text, 0, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

typedef struct {
  double      bandwidth;
  SimTime     overhead_ns;
  guint       can_queue;
  char       *host_bus;
  gboolean    has_bus;
  SimBusKind  bus_kind;
  double      bus_bandwidth;
  SimTime     bus_overhead_ns;
  SimChannelArbitration arbitration;
} AdapterSpec;

static gboolean
adapter_spec (GKeyFile *kf, const char *group, const ScenarioTopologyEra *era, AdapterSpec *a,
              GError **error)
{
  memset (a, 0, sizeof *a);
  if (!scenario_check_keys (kf, group, adapter_keys, error)
      || !get_rate (kf, group, "bandwidth", 0, &a->bandwidth, error)
      || !get_time (kf, group, "overhead", &a->overhead_ns, error)
      || !get_rate (kf, group, "bus_bandwidth", a->bandwidth, &a->bus_bandwidth, error)
      || !get_time (kf, group, "bus_overhead", &a->bus_overhead_ns, error))
    return FALSE;
  g_autofree char *can_queue = scenario_get_string (kf, group, "can_queue");
  a->can_queue = 64;
  if (can_queue)
    {
      char *end = NULL;
      guint64 v = g_ascii_strtoull (can_queue, &end, 10);
      if (end == can_queue || *end != '\0' || v < 1 || v > 65536)
        return scenario_invalid (error, group, "can_queue", "'%s' is not a whole number in [1, 65536]",
                        can_queue);
      a->can_queue = (guint) v;
    }
  a->host_bus = scenario_get_string (kf, group, "host_bus");
  g_autofree char *bus = scenario_get_string (kf, group, "bus");
  a->has_bus = TRUE;
  a->bus_kind = SIM_BUS_SHARED;
  if (bus && strcmp (bus, "ide") == 0)
    a->bus_kind = SIM_BUS_IDE_CHANNEL;
  else if (bus && strcmp (bus, "none") == 0)
    a->has_bus = FALSE;
  else if (bus && strcmp (bus, "shared") != 0)
    return scenario_invalid (error, group, "bus", "'%s' is not shared, ide or none", bus);
  g_autofree char *arbitration = scenario_get_string (kf, group, "arbitration");
  a->arbitration = era->ide_arbitration;
  if (arbitration && a->bus_kind != SIM_BUS_IDE_CHANNEL)
    return scenario_invalid (error, group, "arbitration", "only an IDE channel (bus = ide) "
                             "has an arbitration");
  g_autoptr (GError) local = NULL;
  if (arbitration && !sim_channel_arbitration_parse (arbitration, &a->arbitration, &local))
    return scenario_invalid (error, group, "arbitration", "%s", local->message);
  return TRUE;
}

static void
adapter_spec_clear (AdapterSpec *a)
{
  g_free (a->host_bus);
}

gboolean
scenario_topology_validate (GKeyFile *kf, const ScenarioTopologyEra *era,
                            const char *const *devices, GError **error)
{
  g_autoptr (Sim) sim = sim_new (1);
  GError *local = NULL;
  g_autoptr (SimTopology) topo = scenario_topology_build (kf, era, sim, devices, NULL, &local);
  /* NULL without an error: a scenario without buses or adapters. */
  if (local == NULL)
    return TRUE;
  g_propagate_error (error, local);
  return FALSE;
}

/* The adapter's own bus is named after it: "<adapter>.bus". */
static gboolean
add_adapter (SimTopology *topo, GKeyFile *kf, const ScenarioTopologyEra *era, const char *group,
             GError **error)
{
  AdapterSpec a;
  gboolean ok = adapter_spec (kf, group, era, &a, error);
  SimBus *host_bus = NULL;
  if (ok && a.host_bus)
    {
      host_bus = sim_topology_lookup_bus (topo, a.host_bus);
      if (host_bus == NULL)
        ok = scenario_invalid (error, group, "host_bus", "no [bus %s] group", a.host_bus);
    }
  SimAdapter *ad = NULL;
  g_autoptr (GError) local = NULL;
  const char *name = group + strlen ("adapter ");
  if (ok && !(ad = sim_topology_add_adapter (topo, name, a.bandwidth, a.overhead_ns, a.can_queue,
                                             host_bus, &local)))
    ok = scenario_invalid (error, group, NULL, "%s", local->message);
  if (ok && a.has_bus)
    {
      g_autofree char *bus = g_strdup_printf ("%s.bus", name);
      SimBus *b = sim_topology_add_bus (topo, bus, a.bus_kind, a.bus_bandwidth, a.bus_overhead_ns,
                                        ad, &local);
      if (b == NULL)
        ok = scenario_invalid (error, group, "bus", "%s", local->message);
      else if (b->kind == SIM_BUS_IDE_CHANNEL)
        sim_bus_set_arbitration (b, a.arbitration, era->hz);
    }
  adapter_spec_clear (&a);
  return ok;
}

/* Attach @dev, or when validating (@dev NULL) count its place on an IDE
 * channel in @ide_counts. */
static gboolean
attach (SimTopology *topo, GKeyFile *kf, const char *group, SimDevice *dev,
        GHashTable *ide_counts, GError **error)
{
  g_autofree char *adapter = scenario_get_string (kf, group, "adapter");
  if (adapter == NULL)
    return TRUE;
  SimAdapter *ad = sim_topology_lookup_adapter (topo, adapter);
  if (ad == NULL)
    return scenario_invalid (error, group, "adapter", "no [adapter %s] group", adapter);
  g_autofree char *bus_name = g_strdup_printf ("%s.bus", adapter);
  SimBus *bus = sim_topology_lookup_bus (topo, bus_name);
  if (dev == NULL)
    {
      if (bus == NULL || bus->kind != SIM_BUS_IDE_CHANNEL)
        return TRUE;
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (ide_counts, bus)) + 1;
      if (n > SIM_IDE_CHANNEL_MAX_DEVICES)
        return scenario_invalid (error, group, "adapter", "the IDE channel of [adapter %s] has its two "
                        "devices (master and slave) already", adapter);
      g_hash_table_insert (ide_counts, bus, GUINT_TO_POINTER (n));
      return TRUE;
    }
  g_autoptr (GError) local = NULL;
  if (!sim_device_attach (dev, ad, bus, &local))
    return scenario_invalid (error, group, "adapter", "%s", local->message);
  return TRUE;
}

SimTopology *
scenario_topology_build (GKeyFile *kf, const ScenarioTopologyEra *era, Sim *sim,
                         const char *const *devices, SimDevice **devs, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  gboolean any = FALSE;
  for (guint i = 0; groups[i]; i++)
    any |= g_str_has_prefix (groups[i], "bus ") || g_str_has_prefix (groups[i], "adapter ");
  if (!any)
    {
      for (guint d = 0; devices[d]; d++)
        if (g_key_file_has_key (kf, devices[d], "adapter", NULL))
          {
            g_autofree char *a = scenario_get_string (kf, devices[d], "adapter");
            scenario_invalid (error, devices[d], "adapter", "no [adapter %s] group", a);
            return NULL;
          }
      return NULL;
    }
  g_autoptr (SimTopology) topo = sim_topology_new (sim);
  /* Host buses first, then adapters (on them), then the devices. */
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "bus "))
      {
        double bw;
        SimTime overhead;
        g_autoptr (GError) local = NULL;
        if (!scenario_check_keys (kf, groups[i], bus_keys, error)
            || !get_rate (kf, groups[i], "bandwidth", 0, &bw, error)
            || !get_time (kf, groups[i], "overhead", &overhead, error))
          return NULL;
        if (!sim_topology_add_bus (topo, groups[i] + 4, SIM_BUS_SHARED, bw, overhead, NULL, &local))
          {
            scenario_invalid (error, groups[i], NULL, "%s", local->message);
            return NULL;
          }
      }
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "adapter ") && !add_adapter (topo, kf, era, groups[i], error))
      return NULL;
  g_autoptr (GHashTable) ide_counts = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint d = 0; devices[d]; d++)
    if (!attach (topo, kf, devices[d], devs ? devs[d] : NULL, ide_counts, error))
      return NULL;
  return g_steal_pointer (&topo);
}
