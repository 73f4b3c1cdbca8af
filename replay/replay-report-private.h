/* replay-report-private.h — JSON members shared by the block replay's
 * report (replay-report.c, where they live) and the NFS replay's
 * (replay-nfs.c), the emulator's (replay-emulate.c).
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Member @key of the object being built, with its value. */
void replay_json_add_int    (JsonBuilder *b, const char *key, gint64 value);
void replay_json_add_double (JsonBuilder *b, const char *key, double value);
void replay_json_add_string (JsonBuilder *b, const char *key, const char *value);

/* Write @root to @path, indented; errors name the path. */
gboolean replay_json_write_file (JsonNode *root, const char *path, GError **error);

G_END_DECLS
