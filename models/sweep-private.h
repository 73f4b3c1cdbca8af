/* sweep-private.h — what sweep.c shares with sweep-run.c. */
#pragma once

#include "models/sweep.h"
#include "models/scenario.h"

G_BEGIN_DECLS

Sweep    *sweep_alloc           (void);
/* The scenario of @point (G_MAXUINT: with the --set list alone); the
 * error names the scenario file and the point's values. */
Scenario *sweep_load_point      (const Sweep *sw, guint point, GError **error);
/* "GROUP.KEY=V, GROUP.KEY=V" of @point; newly allocated. */
char     *sweep_point_describe  (const Sweep *sw, guint point);
/* What differs between two sweeps ("scenario text, --vary"), NULL if none. */
char     *sweep_mismatch        (const Sweep *a, const Sweep *b);

G_END_DECLS
