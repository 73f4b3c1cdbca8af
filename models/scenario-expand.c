/* scenario-expand.c — counted groups in scenario files: machines with
 * dozens of disks without dozens of copied groups.
 *
 *   [device d]  count = 24     devices d0 ... d23, same keys
 *   [adapter a] count = 4      adapters a0 ... a3 (likewise [bus NAME])
 *   [device d]  adapter = a    device i of N goes to a(i·M/N): consecutive
 *                              blocks of devices per adapter (likewise bus)
 *   [adapter a] host_bus = b   adapter i of N on bus b(i·M/N), the same way
 *   [process p] device = d     one process per device: p0 on d0, p1 on d1 ...
 *
 * The expansion rewrites the key file before anything else reads it, after
 * the command line's --set overrides (so --set 'device d.count=8' works). */
#include "models/scenario-expand.h"
#include "models/scenario.h"
#include "models/scenario-private.h"
#include "sim/sim-units.h"

#include <stdio.h>
#include <string.h>

#define MAX_COUNT 4096u

/* Groups "KIND NAME" with a count: NAME -> count. */
typedef struct {
  GHashTable *counts[3];     /* device, adapter, bus */
} Counted;

static const char *const kinds[] = { "device ", "adapter ", "bus " };

/* Copy every key of @from but @skip into the new group @to. */
static void
copy_group (GKeyFile *kf, const char *from, const char *to, const char *skip)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, from, NULL, NULL);
  for (guint i = 0; keys && keys[i]; i++)
    {
      if (skip && strcmp (keys[i], skip) == 0)
        continue;
      g_autofree char *v = g_key_file_get_value (kf, from, keys[i], NULL);
      g_key_file_set_value (kf, to, keys[i], v);
    }
}

static gboolean
parse_count (GKeyFile *kf, const char *group, guint *out, GError **error)
{
  g_autofree char *text = g_key_file_get_value (kf, group, "count", NULL);
  sim_strip_inline_comment (text);
  char *end = NULL;
  guint64 n = g_ascii_strtoull (text, &end, 10);
  if (end == text || *end != '\0' || n < 1 || n > MAX_COUNT)
    return scenario_invalid (error, group, "count", "'%s' is not a whole number in [1, %u]", text, MAX_COUNT);
  *out = (guint) n;
  return TRUE;
}

/* Replace each counted group of the three kinds by its members. */
static gboolean
expand_counted (GKeyFile *kf, Counted *c, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++)
    for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
      {
        if (!g_str_has_prefix (groups[i], kinds[k])
            || !g_key_file_has_key (kf, groups[i], "count", NULL))
          continue;
        guint n = 0;
        if (!parse_count (kf, groups[i], &n, error))
          return FALSE;
        const char *name = groups[i] + strlen (kinds[k]);
        for (guint m = 0; m < n; m++)
          {
            g_autofree char *member = g_strdup_printf ("%s%s%u", kinds[k], name, m);
            if (g_key_file_has_group (kf, member))
              return scenario_invalid (error, groups[i], "count", "[%s] exists already", member);
            copy_group (kf, groups[i], member, "count");
            /* Remember which member of which group it is, for its links. */
            g_autofree char *index = g_strdup_printf ("%u/%u", m, n);
            g_key_file_set_value (kf, member, "_expanded_index", index);
          }
        g_key_file_remove_group (kf, groups[i], NULL);
        g_hash_table_insert (c->counts[k], g_strdup (name), GUINT_TO_POINTER (n));
      }
  return TRUE;
}

/* A device's "adapter" or "bus", or an adapter's "host_bus", naming a
 * counted group picks its member; @plural names the group's kind. */
static gboolean
link_member (GKeyFile *kf, Counted *c, const char *group, const char *key, guint kind,
             const char *plural, GError **error)
{
  g_autofree char *target = g_key_file_get_value (kf, group, key, NULL);
  if (target == NULL)
    return TRUE;
  sim_strip_inline_comment (target);
  guint m = GPOINTER_TO_UINT (g_hash_table_lookup (c->counts[kind], target));
  if (m == 0)
    return TRUE;
  g_autofree char *index = g_key_file_get_value (kf, group, "_expanded_index", NULL);
  guint i, n;
  if (index == NULL || sscanf (index, "%u/%u", &i, &n) != 2)
    return scenario_invalid (error, group, key, "'%s' names %u %s (%s0 ... %s%u): give one, or "
                    "count the %s too", target, m, plural, target, target, m - 1,
                    g_str_has_prefix (group, "adapter ") ? "adapters" : "devices");
  g_autofree char *member = g_strdup_printf ("%s%u", target, (guint) ((guint64) i * m / n));
  g_key_file_set_value (kf, group, key, member);
  return TRUE;
}

/* One process per device of a counted device group. */
static gboolean
expand_process (GKeyFile *kf, Counted *c, const char *group, GError **error)
{
  g_autofree char *device = g_key_file_get_value (kf, group, "device", NULL);
  if (device == NULL)
    return TRUE;
  sim_strip_inline_comment (device);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (c->counts[0], device));
  if (n == 0)
    return TRUE;
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *member = g_strdup_printf ("%s%u", group, i);
      if (g_key_file_has_group (kf, member))
        return scenario_invalid (error, group, "device", "[%s] exists already", member);
      copy_group (kf, group, member, NULL);
      g_autofree char *dev = g_strdup_printf ("%s%u", device, i);
      g_key_file_set_value (kf, member, "device", dev);
    }
  g_key_file_remove_group (kf, group, NULL);
  return TRUE;
}

gboolean
scenario_expand_counts (GKeyFile *kf, GError **error)
{
  Counted c;
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    c.counts[k] = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = expand_counted (kf, &c, error);
  g_auto (GStrv) groups = ok ? g_key_file_get_groups (kf, NULL) : NULL;
  for (guint i = 0; ok && groups[i]; i++)
    {
      if (g_str_has_prefix (groups[i], "device "))
        ok = link_member (kf, &c, groups[i], "adapter", 1, "adapters", error)
             && link_member (kf, &c, groups[i], "bus", 2, "buses", error);
      else if (g_str_has_prefix (groups[i], "adapter "))
        ok = link_member (kf, &c, groups[i], "host_bus", 2, "buses", error);
      else if (g_str_has_prefix (groups[i], "process "))
        ok = expand_process (kf, &c, groups[i], error);
    }
  /* The bookkeeping key goes: nothing else may see it. */
  g_auto (GStrv) after = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; after[i]; i++)
    {
      g_key_file_remove_key (kf, after[i], "_expanded_index", NULL);
    }
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    g_hash_table_unref (c.counts[k]);
  return ok;
}
