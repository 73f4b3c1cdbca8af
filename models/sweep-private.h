/* sweep-private.h — what sweep.c shares with sweep-run.c. */
#pragma once

#include "models/sweep.h"
#include "models/scenario.h"
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

Sweep    *sweep_alloc           (void);
/* The scenario of @point (G_MAXUINT: with the --set list alone); the
 * error names the scenario file and the point's values. */
Scenario *sweep_load_point      (const Sweep *sw, guint point, GError **error);
/* Member "vary" of the object @b is building: each axis's key and values. */
void      sweep_json_vary       (JsonBuilder *b, const Sweep *sw);
/* What differs between two sweeps ("scenario text, --vary"), NULL if none. */
char     *sweep_mismatch        (const Sweep *a, const Sweep *b);

/* Point (GUINT_TO_POINTER) -> its rows, as sweep_store_read fills it. */
GHashTable *sweep_rows_table_new (void);
/* Read a row store or shard file of the sweep with id @id into @done.  A
 * store (@strict FALSE) may end in an interrupted point, left out; a
 * finished shard file (@strict) may not.  Errors name file and line. */
gboolean  sweep_store_read      (const Sweep  *sw,
                                 const char   *id,
                                 const char   *path,
                                 gboolean      strict,
                                 GHashTable   *done,
                                 GError      **error);

G_END_DECLS
