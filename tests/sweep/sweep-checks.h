/* sweep-checks.h — what test-sweep.c and fuzz-sweep.c require of a sweep
 * read back: store errors that name file and line, whole points, and
 * --vary arguments and manifests that come back unchanged.  Each returns
 * whether the property holds; the caller asserts or aborts. */
#pragma once

#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "models/sweep.h"

/* @error is a SWEEP_ERROR whose message starts "PATH:LINE". */
static inline gboolean
sweep_check_error_located (const GError *error, const char *path)
{
  size_t n = strlen (path);
  return error->domain == SWEEP_ERROR && strncmp (error->message, path, n) == 0
         && error->message[n] == ':' && g_ascii_isdigit (error->message[n + 1]);
}

/* Every point @done holds is one of @sw's, with each replicate of it. */
static inline gboolean
sweep_check_points_whole (const Sweep *sw, GHashTable *done)
{
  GHashTableIter it;
  gpointer point, rows;
  g_hash_table_iter_init (&it, done);
  while (g_hash_table_iter_next (&it, &point, &rows))
    if (GPOINTER_TO_UINT (point) >= sw->n_points || ((GPtrArray *) rows)->len == 0
        || ((GPtrArray *) rows)->len % sw->n_seeds != 0)
      return FALSE;
  return TRUE;
}

/* Each --vary of the command line that re-runs @sw (sweep_argv escapes the
 * values again) parses back to its axis. */
static inline gboolean
sweep_check_vary_round_trip (const Sweep *sw)
{
  g_auto (GStrv) argv = sweep_argv (sw, "iosim", "out", NULL);
  guint axis = 0;
  for (guint i = 1; argv[i]; i++)
    {
      if (strcmp (argv[i - 1], "--vary") != 0)
        continue;
      if (axis == sw->axes->len)
        return FALSE;
      const SweepAxis *a = g_ptr_array_index (sw->axes, axis++);
      g_autofree char *key = NULL;
      g_autoptr (GPtrArray) values = NULL;
      if (!sweep_parse_vary (argv[i], &key, &values, NULL) || strcmp (key, a->key) != 0
          || values->len != a->values->len)
        return FALSE;
      for (guint v = 0; v < values->len; v++)
        if (strcmp (g_ptr_array_index (values, v), g_ptr_array_index (a->values, v)) != 0)
          return FALSE;
    }
  return axis == sw->axes->len;
}

/* @sw's manifest reads back as the same sweep (the same id). */
static inline gboolean
sweep_check_manifest_round_trip (const Sweep *sw)
{
  g_autoptr (JsonNode) root = sweep_manifest (sw, 0, 0);
  guint si, sn;
  g_autoptr (Sweep) back = sweep_from_manifest (root, &si, &sn, NULL);
  if (back == NULL)
    return FALSE;
  g_autofree char *id = sweep_id (sw);
  g_autofree char *back_id = sweep_id (back);
  return strcmp (id, back_id) == 0;
}
