/* scenario-expand.h — counted groups ([device d] count = 24 ...) of
 * scenario files, expanded into their members (see scenario-expand.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Rewrite @kf: counted [device], [adapter] and [bus] groups become their
 * members, devices' links to counted adapters and buses name one member,
 * processes on a counted device group become one per device. */
gboolean scenario_expand_counts (GKeyFile *kf, GError **error);

G_END_DECLS
