/* replay-nfs.h — server-side replay of an NFS capture's file operations on
 * a directory of a target file system.
 *
 * What an NFS server does with a client's calls, redone with local system
 * calls: READ -> pread, WRITE -> pwrite, COMMIT -> fdatasync, CREATE ->
 * open(O_CREAT) of a fresh file, REMOVE -> unlink, LOOKUP/GETATTR/ACCESS ->
 * stat, SETATTR with a size -> ftruncate, READDIR(PLUS) -> readdir.
 *
 * Two passes, split so that tests reach each half:
 *   replay_nfs_plan_build()  pure: records -> the file set (one file per
 *                            file handle, sized to the largest extent the
 *                            capture shows) and the operation list, with
 *                            the write policy applied;
 *   replay_nfs_run_plan()    recreate the files under
 *                            DIR/iosim-nfs-replay/, then a pool of worker
 *                            threads (as nfsd threads) take operations in
 *                            trace order from one queue and issue each at
 *                            its recorded time on an absolute
 *                            CLOCK_MONOTONIC schedule, or as fast as
 *                            possible.  An operation whose call came
 *                            after the reply to an earlier operation on the
 *                            same file (or the directory) also waits for
 *                            that one to complete: the client waited for it
 *                            (SETATTR before WRITE, WRITE before COMMIT),
 *                            and reordering them would change the outcome.
 *
 * Handles.  The capture carries file handles, not names (v3 CREATE,
 * LOOKUP and REMOVE names are not decoded), so the name space is flat: a
 * handle used as the directory of a name operation (CREATE, LOOKUP,
 * READDIR, REMOVE, FSINFO...) is the replay directory itself; every other
 * handle is one file named by its 64-bit hash.  REMOVE unlinks the most
 * recent file made by a replayed CREATE (the name it removed is unknown).
 *
 * Safety: nothing is written outside DIR/iosim-nfs-replay/ (opened with
 * O_NOFOLLOW, files opened relative to it); the traced operations that
 * modify (WRITE, CREATE, REMOVE, SETATTR) run only with allow_write.
 */
#pragma once

#include <glib.h>
#include <signal.h>
#include <stdio.h>

#include "replay/replay.h"
#include "traces/trace-nfs.h"

G_BEGIN_DECLS

/* The subdirectory of the target directory that holds every replay file. */
#define REPLAY_NFS_SUBDIR "iosim-nfs-replay"

typedef enum {
  REPLAY_NFS_READ,
  REPLAY_NFS_WRITE,
  REPLAY_NFS_COMMIT,
  REPLAY_NFS_CREATE,
  REPLAY_NFS_REMOVE,
  REPLAY_NFS_STAT,
  REPLAY_NFS_TRUNCATE,
  REPLAY_NFS_READDIR,
  REPLAY_NFS_N_KINDS
} ReplayNfsKind;

/* "read", "write", "commit", "create", "remove", "stat", "truncate", "readdir". */
const char *replay_nfs_kind_name (ReplayNfsKind kind);

/* No file: the operation works on the replay directory. */
#define REPLAY_NFS_NO_FILE G_MAXUINT32

typedef struct {
  guint64  fh_hash;
  char     name[24];        /* hex of fh_hash */
  guint64  size_bytes;      /* largest extent or reply size seen */
  gboolean read;            /* some READ: filled with a pattern, not sparse */
  gboolean written;
} ReplayNfsFile;

typedef struct {
  ReplayNfsKind kind;
  char     op[32];          /* the traced operation ("READDIRPLUS", "LOOKUP"...) */
  guint32  file;            /* ReplayNfsPlan.files index, or REPLAY_NFS_NO_FILE */
  guint64  offset;          /* READ/WRITE */
  guint32  count;           /* READ/WRITE bytes */
  guint64  size_bytes;      /* TRUNCATE: the size the reply reports */
  gint64   sched_ns;        /* intended issue relative to t0, divided by the speed */
  gint64   traced_latency_ns; /* -1 when the capture has no reply */
  guint32  xid;
  gint64   traced_reply_ns; /* reply time relative to the first call (unscaled), -1 if none */
  gint32   after;           /* index of an earlier op on the same file (or the directory)
                             * whose reply came before this call: issued only once that
                             * completed, as the client waited for it; -1 = none */
} ReplayNfsOp;

typedef struct {
  ReplayTiming timing;      /* recorded or afap */
  double   speed;
  gboolean allow_write;
  GArray  *files;           /* ReplayNfsFile, in order of first appearance */
  GArray  *ops;             /* ReplayNfsOp, in trace (call time) order */
  guint64  records;         /* capture records seen */
  guint64  n_by_kind[REPLAY_NFS_N_KINDS];
  guint64  bytes_read, bytes_written;
  guint64  file_bytes;      /* sum of the recreated files' sizes */
  guint64  skipped_writes;  /* modifying operations without allow_write */
  guint64  skipped_no_file; /* READ/WRITE/COMMIT without a usable file handle */
  GHashTable *skipped_ops;  /* op name -> guint64 * count: operations with no local equivalent */
  gint64   span_ns;         /* last intended issue */
} ReplayNfsPlan;

typedef struct {
  const char  *target_dir;  /* an existing directory, not "/" */
  guint        threads;     /* 0 = 8 */
  ReplayTiming timing;      /* REPLAY_TIMING_RECORDED or REPLAY_TIMING_AFAP */
  double       speed;       /* > 0 */
  gboolean     allow_write;
  gboolean     dry_run;     /* plan only: touch nothing */
  gint64       lead_ns;     /* t0 = now + lead */
  gint64       spin_ns;     /* spin this long before each operation */
  volatile sig_atomic_t *stop;  /* may be NULL */
} ReplayNfsOptions;

/* threads 8, recorded timing, speed 1, reads only, 20 ms lead, 50 us spin. */
void replay_nfs_options_init (ReplayNfsOptions *opts);

/* The measured outcome of one operation, parallel to ReplayNfsPlan.ops.
 * Times relative to t0. */
typedef struct {
  gint64  intended_ns;
  gint64  issue_ns;
  gint64  complete_ns;
  gint32  error;            /* 0 or -errno; a short READ/WRITE is -EIO */
  guint32 worker;
  guint64 take_seq;         /* position in which a worker took it from the queue */
  gint64  dep_wait_ns;      /* time spent waiting for the operation it depends on */
} ReplayNfsOpResult;

typedef struct {
  guint64 ops, errors;
  double  latency_mean_ns;
  gint64  latency_p50_ns, latency_p99_ns, latency_max_ns;
  gint64  traced_latency_p50_ns;  /* what the traced server took; -1 if unknown */
} ReplayNfsKindSummary;

typedef struct {
  ReplayNfsPlan *plan;
  char     *replay_dir;     /* DIR/iosim-nfs-replay */
  gboolean  dry_run;
  gboolean  interrupted;
  guint     threads;
  GArray   *results;        /* ReplayNfsOpResult, parallel to plan->ops (issued ones valid) */
  guint64   issued;         /* operations issued */
  guint64   ops, errors, bytes;
  gint64    elapsed_ns;     /* first issue to last completion */
  double    intended_iops;  /* 0 for afap */
  double    achieved_iops;
  gint64    issue_error_p50_ns, issue_error_p99_ns, issue_error_max_ns;
  double    issue_error_mean_ns;
  guint64   dep_waits;      /* operations that waited for an earlier one past their time */
  ReplayNfsKindSummary kinds[REPLAY_NFS_N_KINDS];
} ReplayNfsResult;

/* Records (TraceNfsRecord, call-time order) -> plan.  REPLAY_ERROR_EMPTY
 * when no operation can be replayed. */
ReplayNfsPlan *replay_nfs_plan_build (const GArray           *records,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
ReplayNfsPlan *replay_nfs_plan_load  (const char             *capture_path,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
void           replay_nfs_plan_free  (ReplayNfsPlan *plan);
/* Files, sizes, operations by type, bytes to read and write (--dry-run). */
void           replay_nfs_plan_print (const ReplayNfsPlan *plan, FILE *out);

/* Check the target directory: exists, is a directory, is not "/".
 * Returns its canonical path. */
char          *replay_nfs_check_dir  (const char *target_dir, GError **error);

/* Takes @plan.  With dry_run, checks the directory and returns the plan
 * without touching anything. */
ReplayNfsResult *replay_nfs_run_plan (ReplayNfsPlan          *plan,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
ReplayNfsResult *replay_nfs_run      (const char             *capture_path,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
void             replay_nfs_result_free (ReplayNfsResult *result);

void     replay_nfs_result_print      (const ReplayNfsResult *result, FILE *out);
/* One line per operation: index,op,kind,file,offset,count,intended_ns,
 * issue_ns,complete_ns,latency_ns,traced_latency_ns,error,worker. */
void     replay_nfs_result_write_csv  (const ReplayNfsResult *result, FILE *out);
gboolean replay_nfs_result_write_json (const ReplayNfsResult *result, const char *path,
                                       GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayNfsPlan, replay_nfs_plan_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayNfsResult, replay_nfs_result_free)

G_END_DECLS
