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
/* The same for @dir/@file (a tracefs instance's files, say). */
gboolean replay_setup_write_in      (const char *dir, const char *file, const char *value,
                                     GError **error);
/* Record @old_value of @path (in the journal, durably, and logged as
 * "echo OLD > PATH") before the change; with @compare, restore skips a
 * file that already reads it.  FALSE: the change must not be made. */
gboolean replay_setup_record        (ReplaySetup *setup, const char *path, const char *old_value,
                                     gboolean compare, FILE *log, GError **error);
/* What @path shows after @wanted was written to it, in *@in_force:
 * @wanted, or (*@adjusted) a legitimate kernel adjustment of it; an error
 * when the kernel did not take it. */
gboolean replay_setup_read_back     (const char *path, const char *wanted, char **in_force,
                                     gboolean *adjusted, GError **error);
/* After writing @wanted to @path: what the kernel shows is @wanted, or a
 * legitimate adjustment of it (a warning on @log), else an error. */
gboolean replay_setup_check_written (ReplaySetup *setup, const char *path, const char *wanted,
                                     FILE *log, GError **error);
/* Record @path's current value, write @value, read it back. */
gboolean replay_setup_change_file   (ReplaySetup *setup, const char *path, const char *value,
                                     FILE *log, GError **error);
/* Drop the entry recorded last (its change did not happen). */
void     replay_setup_forget_last   (ReplaySetup *setup);
/* Record a shield cpuset (before creating it): restore moves every task
 * in @shield_dir back to @back_procs (a cgroup.procs file), then removes
 * the directory. */
gboolean replay_setup_record_cpuset (ReplaySetup *setup, const char *shield_dir,
                                     const char *back_procs, FILE *log, GError **error);
/* The restore of such an entry (replay-isolate.c). */
gboolean replay_setup_empty_cpuset  (const char *shield_dir, const char *back_procs, FILE *log,
                                     GError **error);

G_END_DECLS
