/* replay-journal.h — the on-disk record of what `iosim replay` and `iosim
 * capture` changed, so that a run killed with SIGKILL (which no handler
 * sees) can be undone by a later run or by `iosim restore`.
 *
 * Before the first change a run creates DIR/KIND-PID-START.journal (DIR:
 * $IOSIM_JOURNAL_DIR, else /run/iosim; START: the owner's start time from
 * /proc/PID/stat, so that a reused pid is not taken for the owner).  Each
 * change adds the file's path and ORIGINAL value; the whole journal is
 * written to a new file, fsynced and renamed over the old one before the
 * change is made.  A clean restore removes it.
 *
 * The journal is a GKeyFile:
 *   [journal]  version=1  kind=replay|capture  pid=  start_time=
 *              scopes=dev:7:0;isolate  (what it claims; "tracefs" for capture)
 *              devices=7:0 /dev/loop0;  (whole disks, MAJ:MIN first)  entries=N
 *   [entry I]  path=  old=  compare=  may_vanish=  cpuset=
 * Loading checks every field and accepts only the paths iosim itself
 * writes (ReplayJournalRoots): a journal is never a way to write an
 * arbitrary file.
 *
 * `iosim emulate` writes a journal of kind "emulate" (scope "emulate")
 * that names what to undo rather than values to write back:
 *   [journal]  emulate_dir=TMP/iosim-emulate-XXXXXX  emulate_loop=/dev/loopN
 *              emulate_temp_backing=true|false
 * Its entries, when --dirty-bytes or --dirty-background-bytes is given, are
 * the originals of one or both pairs /proc/sys/vm/dirty_bytes +
 * dirty_ratio and dirty_background_bytes + dirty_background_ratio (those
 * four paths only, and only in an emulator journal; old: a decimal).
 * Its cleanup (replay-emulate-cleanup.c) first writes back the member of
 * each pair that was in force, then detaches only loop devices whose
 * backing file is EMULATE_DIR/mnt/disk, unmounts only a FUSE mount at
 * EMULATE_DIR/mnt and deletes only EMULATE_DIR/backing (when temporary)
 * and the two directories; EMULATE_DIR must be a direct child of /tmp,
 * /var/tmp or $TMPDIR named iosim-emulate-XXXXXX.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <sys/types.h>

G_BEGIN_DECLS

#define REPLAY_JOURNAL_DIR_ENV "IOSIM_JOURNAL_DIR"
#define REPLAY_JOURNAL_DEFAULT_DIR "/run/iosim"
#define REPLAY_JOURNAL_SCOPE_TRACEFS "tracefs"
#define REPLAY_JOURNAL_SCOPE_ISOLATE "isolate"
#define REPLAY_JOURNAL_SCOPE_EMULATE "emulate"
#define REPLAY_JOURNAL_KIND_EMULATE "emulate"

typedef enum {
  REPLAY_JOURNAL_COMPARE    = 1 << 0,  /* skip the write when the file already reads old */
  REPLAY_JOURNAL_MAY_VANISH = 1 << 1,  /* an elevator tunable, gone with its elevator */
  REPLAY_JOURNAL_CPUSET     = 1 << 2,  /* path: a shield cpuset; old: cgroup.procs to move back to */
} ReplayJournalFlags;

typedef struct {
  char *path;
  char *old_value;
  guint flags;                          /* ReplayJournalFlags */
} ReplayJournalEntry;

/* The trees whose files a journal may name; NULL fields (or a NULL
 * struct) are the real system's.  Tests point them at a fake tree. */
typedef struct {
  const char *sys_root;        /* /sys: block/DISK/queue/..., block/DISK/trace/...,
                                * kernel/tracing/..., kernel/debug/tracing/... */
  const char *cgroup_root;     /* /sys/fs/cgroup: blkio throttles, io.max, cpusets */
  const char *irq_dir;         /* /proc/irq: N/smp_affinity */
  const char *workqueue_mask;  /* /sys/devices/virtual/workqueue/cpumask */
  const char *proc_root;       /* /proc: PID/stat, for the owner's start time;
                                * sys/vm/dirty_*, an emulator's dirty limits */
} ReplayJournalRoots;

typedef struct _ReplayJournal ReplayJournal;

/* $IOSIM_JOURNAL_DIR, else /run/iosim. */
const char    *replay_journal_default_dir (void);

/* A journal of this process, written at once (empty) in @dir (created
 * 0700 if missing; refused unless a directory of ours that nobody else
 * may write).  @scopes: NULL-terminated, "dev:MAJ:MIN" per whole disk
 * changed, "isolate", "tracefs". */
ReplayJournal *replay_journal_create      (const char         *dir,
                                           const char         *kind,
                                           const char *const  *scopes,
                                           const char *const  *devices,
                                           GError            **error);
/* Append one original value and write the journal durably: call before
 * making the change; FALSE means the change must not be made. */
gboolean       replay_journal_add         (ReplayJournal *journal,
                                           const char    *path,
                                           const char    *old_value,
                                           guint          flags,
                                           GError       **error);
/* What to run if this process dies: "iosim restore" (with --dir when the
 * journal is not in the default directory). */
char          *replay_journal_restore_hint (const ReplayJournal *journal);
/* An emulator's journal (kind and scope "emulate"), written at once in
 * @dir, naming @emulate_dir (checked with replay_journal_emulate_dir_allowed)
 * and whether its backing file is a temporary one to delete. */
ReplayJournal *replay_journal_create_emulate (const char *dir,
                                           const char  *emulate_dir,
                                           gboolean     temp_backing,
                                           GError     **error);
/* Record the loop device (/dev/loopN) about to be attached, durably:
 * call before attaching it; FALSE means it must not be attached. */
gboolean       replay_journal_set_emulate_loop (ReplayJournal *journal,
                                           const char    *loop_path,
                                           GError       **error);
/* NULL for other kinds (and for the loop before one was chosen). */
const char    *replay_journal_emulate_dir  (const ReplayJournal *journal);
const char    *replay_journal_emulate_loop (const ReplayJournal *journal);
gboolean       replay_journal_emulate_temp_backing (const ReplayJournal *journal);
/* TRUE when @dir is TMP/iosim-emulate-XXXXXX (TMP: /tmp, /var/tmp or
 * g_get_tmp_dir (), XXXXXX: 6 letters or digits), the only places an
 * emulator journal may name. */
gboolean       replay_journal_emulate_dir_allowed (const char *dir);
/* TRUE when @path is /dev/loopN. */
gboolean       replay_journal_loop_path_allowed (const char *path);
/* TRUE when @path is PROC/sys/vm/dirty_bytes, dirty_ratio,
 * dirty_background_bytes or dirty_background_ratio (PROC: @roots's
 * proc_root, else /proc): the only sysctls an emulator journal may name. */
gboolean       replay_journal_sysctl_path_allowed (const char               *path,
                                                   const ReplayJournalRoots *roots);

/* Undo what a journal records, whatever its kind: write back the
 * settings of a replay or capture (replay_setup_restore_journal), or
 * detach, unmount and delete what an emulator left
 * (replay_emulate_cleanup_journal); the journal file is removed once all
 * is done (not with @dry_run). */
gboolean       replay_journal_restore     (ReplayJournal *journal,
                                           gboolean       dry_run,
                                           FILE          *log,
                                           GError       **error);
/* Delete the file (after a clean restore). */
gboolean       replay_journal_remove      (ReplayJournal *journal,
                                           GError       **error);
/* Read and check a journal file; NULL with an error naming the file and
 * what is wrong (a corrupt journal is reported, never trusted). */
ReplayJournal *replay_journal_load        (const char               *file,
                                           const ReplayJournalRoots *roots,
                                           GError                  **error);
void           replay_journal_free        (ReplayJournal *journal);

const char    *replay_journal_file        (const ReplayJournal *journal);
const char    *replay_journal_kind        (const ReplayJournal *journal);
pid_t          replay_journal_pid         (const ReplayJournal *journal);
const char *const *replay_journal_devices (const ReplayJournal *journal);
guint          replay_journal_n_entries   (const ReplayJournal *journal);
const ReplayJournalEntry *replay_journal_entry (const ReplayJournal *journal, guint i);
/* TRUE while the process that wrote it runs (same pid, same start time). */
gboolean       replay_journal_owner_alive (const ReplayJournal      *journal,
                                           const ReplayJournalRoots *roots);
/* TRUE when it was written by this very process. */
gboolean       replay_journal_is_own      (const ReplayJournal      *journal,
                                           const ReplayJournalRoots *roots);
/* TRUE when it claims one of @scopes. */
gboolean       replay_journal_claims_any  (const ReplayJournal *journal,
                                           const char *const   *scopes);
/* FALSE (and why) when @path is a disk's file (/sys/block/DISK/...) and
 * DISK is gone or is no longer one of the journal's devices ("MAJ:MIN"
 * first in each): a disk that took the name since must not get the old
 * one's settings. */
gboolean       replay_journal_same_device (const ReplayJournal *journal,
                                           const char          *path,
                                           char               **why);
/* TRUE when @path is one iosim writes (the check load applies). */
gboolean       replay_journal_path_allowed (const char               *path,
                                            const ReplayJournalRoots *roots,
                                            gboolean                  cpuset_dir);

/* The *.journal files of @dir, sorted; empty when @dir does not exist. */
GPtrArray     *replay_journal_list        (const char *dir,
                                           GError    **error);
/* The start time of @pid (field 22 of /proc/PID/stat), 0 if gone. */
guint64        replay_journal_start_time  (pid_t                     pid,
                                           const ReplayJournalRoots *roots);

/* Before a run changes anything: every journal of @dir claiming one of
 * @scopes whose owner is gone is restored first (said on @log) and
 * removed; one whose owner runs refuses with an error naming it (except
 * emulator journals: emulators share nothing, each has its own).  A
 * journal that cannot be read is reported on @log and left in place.
 * This process's own journals are skipped. */
gboolean       replay_journal_recover     (const char               *dir,
                                           const char *const        *scopes,
                                           const ReplayJournalRoots *roots,
                                           const char               *who,
                                           FILE                     *log,
                                           GError                  **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayJournal, replay_journal_free)

G_END_DECLS
