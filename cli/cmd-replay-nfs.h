/* cmd-replay-nfs.h — `iosim replay CAPTURE --target-dir DIR`: the NFS
 * capture branch of `iosim replay` (replay/replay-nfs.h).  cmd-replay.c
 * parses the options and hands a capture here. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *capture;
  const char *target_dir;
  const char *target;        /* --target: refused with a capture */
  gboolean    has_maps;      /* --map: refused too */
  const char *timing, *lead, *spin, *csv, *json;
  const char *max_setup_bytes, *max_io_bytes;   /* sizes with units, or NULL */
  double      speed;
  gint        threads;       /* 0 = 8 */
  gboolean    allow_write, reads_only, dry_run;
} CliReplayNfsArgs;

/* Exit status: 0, 1 (failed or errors), 2 (bad options), 130 (interrupted). */
int cli_replay_nfs (const CliReplayNfsArgs *a);

G_END_DECLS
