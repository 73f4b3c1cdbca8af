/* replay-setup-private.h — what replay-setup.c lends to replay-isolate.c:
 * reading and writing sysfs-style files, and recording old values in a
 * ReplaySetup so that replay_setup_restore() puts them back.
 */
#pragma once

#include "replay/replay-setup.h"

G_BEGIN_DECLS

/* The file's text without surrounding white space. */
char    *replay_setup_read_stripped (const char *path, GError **error);
gboolean replay_setup_write_value   (const char *path, const char *value, GError **error);
/* Record @old_value of @path (logged as "echo OLD > PATH" first); with
 * @compare, restore skips a file that already reads it. */
void     replay_setup_record        (ReplaySetup *setup, const char *path, const char *old_value,
                                     gboolean compare, FILE *log);
/* Record @path's current value, then write @value. */
gboolean replay_setup_change_file   (ReplaySetup *setup, const char *path, const char *value,
                                     FILE *log, GError **error);
/* Drop the entry recorded last (its change did not happen). */
void     replay_setup_forget_last   (ReplaySetup *setup);
/* Record a shield cpuset: restore moves every task in @shield_dir back
 * to @back_procs (a cgroup.procs file), then removes the directory. */
void     replay_setup_record_cpuset (ReplaySetup *setup, const char *shield_dir,
                                     const char *back_procs, FILE *log);
/* The restore of such an entry (replay-isolate.c). */
gboolean replay_setup_empty_cpuset  (const char *shield_dir, const char *back_procs, FILE *log,
                                     GError **error);

G_END_DECLS
