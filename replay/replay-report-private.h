/* replay-report-private.h — the JSON file writer shared by the block
 * replay's report (replay-report.c, where it lives), the NFS replay's
 * (replay-nfs.c) and the emulator's (replay-emulate.c); their members go
 * through sim/sim-json.h.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Write @root to @path, indented; errors name the path. */
gboolean replay_json_write_file (JsonNode *root, const char *path, GError **error);

G_END_DECLS
