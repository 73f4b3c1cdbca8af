/* cmd-trace.h — the subcommands of `iosim trace` (cmd-trace.c dispatches). */
#pragma once

int cli_trace_cat     (int argc, char **argv);
int cli_trace_convert (int argc, char **argv);
int cli_trace_merge   (int argc, char **argv);
int cli_trace_btt     (int argc, char **argv);

#include <stdio.h>
#include <glib.h>
#include <json-glib/json-glib.h>

/* A subcommand on one trace FILE (@name: "info", "btt"): the formats and
 * how errors read as --help's description, @entries, then exactly one FILE
 * left in @argv.  FALSE after printing why (exit status 2). */
gboolean cli_trace_parse_one_file (GOptionContext *ctx, const GOptionEntry *entries,
                                   const char *name, int *argc, char ***argv);

/* btt's report as one JSON object (cmd-trace-btt.c). */
typedef struct _TraceBtt TraceBtt;
void cli_trace_btt_json (JsonBuilder *b, const TraceBtt *btt);

/* NFS captures (cmd-trace-nfs.c). */
int cli_trace_nfs_info (const char *path, gboolean json);
/* @from_ns/@to_ns: a window from the first call, when given. */
int cli_trace_nfs_cat  (const char *path, FILE *out, gboolean csv, gboolean have_from,
                        gint64 from_ns, gboolean have_to, gint64 to_ns, const char *cmd);
