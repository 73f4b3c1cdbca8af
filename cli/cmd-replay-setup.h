/* cmd-replay-setup.h — the target options of `iosim replay`: target setup
 * (--sched, --sched-set, --set-queue, --read-ahead-kb, --nr-requests,
 * --rotational, --throttle-read-bps, --throttle-write-bps) with restore,
 * device mapping (--map, --scale-offsets), --force and --capture.  Kept
 * apart from cmd-replay.c, which only adds the entries and calls these. */
#pragma once

#include <stdio.h>

#include "replay/replay.h"
#include "replay/replay-capture.h"
#include "replay/replay-setup.h"

G_BEGIN_DECLS

typedef struct {
  /* Parsed options */
  char    *sched, *throttle_read, *throttle_write, *capture;
  char   **sched_set, **queue_set, **maps;
  gint     read_ahead_kb, nr_requests, rotational;   /* -1: leave */
  gboolean scale_offsets, force, isolate;
  gboolean captured;                   /* the capture finished and its file is complete */
  /* Derived */
  const GArray        *isolate_cpus;   /* --cpus, for --isolate */
  GOptionEntry        *entries;
  GPtrArray           *queue_list;     /* char *, NULL-terminated */
  GArray              *map_array;      /* ReplayMap */
  ReplaySetupSpec      spec;
  ReplaySetup         *setup;
  ReplayCaptureThread *capture_thread;
} ReplayTargetArgs;

/* The option entries (valid while @t lives). */
const GOptionEntry *cli_replay_target_entries (ReplayTargetArgs *t);
/* Check the options and fill @opts (maps, scaling, force, the hook that
 * applies the setup and starts the capture once the targets are open).
 * FALSE with a message on stderr. */
gboolean cli_replay_target_fill   (ReplayTargetArgs *t, ReplayOptions *opts);
/* After the replay, on every path: stop the capture, restore the target
 * settings.  FALSE with messages on stderr if either failed. */
gboolean cli_replay_target_finish (ReplayTargetArgs *t);
/* After finish(), with a capture: append the line that maps the replay's
 * threads to the traced pids (replay_result_pid_map_line()), so that the
 * capture's processes read back with the trace's pids.  FALSE with a
 * message on stderr when the file cannot be written. */
gboolean cli_replay_target_note_pids (ReplayTargetArgs *t, const ReplayResult *result);
/* --dry-run: per-target plan, the setup and capture that would happen. */
void     cli_replay_target_print_plan (ReplayTargetArgs *t, const ReplayResult *result, FILE *out);
void     cli_replay_target_clear  (ReplayTargetArgs *t);
/* --json: add the settings as read back (target_settings) to the report. */
gboolean cli_replay_target_amend_json (ReplayTargetArgs *t, const char *json_path, GError **error);

G_END_DECLS
