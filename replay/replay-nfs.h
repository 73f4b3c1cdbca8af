/* replay-nfs.h — server-side replay of an NFS capture's file operations on
 * a directory of a target file system.
 *
 * What an NFS server does with a client's calls, redone with local system
 * calls: READ -> pread, WRITE -> pwrite, COMMIT -> fdatasync, SETATTR with
 * a size -> ftruncate, GETATTR/ACCESS -> fstat, LOOKUP -> fstatat of the
 * name, READDIR(PLUS) -> readdir, and by name on directory descriptors:
 * CREATE -> openat(O_CREAT), MKDIR -> mkdirat, SYMLINK -> symlinkat,
 * REMOVE/RMDIR -> unlinkat, RENAME -> renameat, LINK -> linkat; NFSv4 OPEN
 * (claim null) -> openat (O_CREAT when it creates) and CLOSE -> close.
 *
 * Two passes, split so that tests reach each half:
 *   replay_nfs_plan_build()  pure: records -> the name space (one node per
 *                            file handle: files sized to the largest
 *                            extent the capture shows, directories,
 *                            symbolic links, each at its traced path) and
 *                            the operation list, with the write policy
 *                            applied;
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
 * The name space.  The plan follows the capture's names in trace order:
 * (directory handle, name) -> handle from successful LOOKUP, CREATE,
 * MKDIR, SYMLINK and OPEN replies; RENAME moves an entry, REMOVE/RMDIR
 * drop it, LINK adds one.  A name the capture works on before revealing
 * its handle (a RENAME or REMOVE of a name never looked up) gets a
 * placeholder node, merged with the handle a later LOOKUP finds there.
 * Each node that exists before its first operation is made at setup, at
 * the path it had when the capture began, with its traced size; a node
 * that a traced operation created (its handle first seen in that reply) is
 * made by the replayed operation.  The root is the directory with no known
 * parent that holds the most names; it is DIR/iosim-nfs-replay/ itself.
 * Nodes whose path is unknown (no name seen, or a parent never named) are
 * "unnamed/fh-<hash>" (REPLAY_NFS_UNNAMED).  Without allow_write nothing is
 * created by the replay: every node is made at setup.
 *
 * Safety: nothing is written outside DIR/iosim-nfs-replay/ (opened with
 * O_NOFOLLOW, files opened relative to it); the traced operations that
 * modify (WRITE, CREATE, REMOVE, SETATTR) run only with allow_write.
 *
 * Sizes from the capture are not trusted.  Files are made sparse
 * (ftruncate) at the sizes the capture implies; setup writes data only
 * where a replayed READ will read (its extents, in whole 4 KiB blocks), and
 * before it writes anything it sums those bytes and refuses when they
 * exceed max_setup_bytes or the file system's free space (statvfs
 * f_bavail * f_frsize).  A READ or WRITE whose count is above the
 * protocol's limit (ReplayNfsIoLimit) or whose extent ends past the largest
 * file offset is skipped and counted with its reason; buffers are sized by
 * the largest count replayed.
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
  REPLAY_NFS_MKDIR,
  REPLAY_NFS_RMDIR,
  REPLAY_NFS_RENAME,
  REPLAY_NFS_LINK,
  REPLAY_NFS_SYMLINK,
  REPLAY_NFS_OPEN,
  REPLAY_NFS_CLOSE,
  REPLAY_NFS_READLINK,
  REPLAY_NFS_STATFS,
  REPLAY_NFS_N_KINDS
} ReplayNfsKind;

/* "read", "write", "commit", "create", "remove", "stat", "truncate",
 * "readdir", "mkdir", "rmdir", "rename", "link", "symlink", "open", "close",
 * "readlink", "statfs". */
const char *replay_nfs_kind_name (ReplayNfsKind kind);

/* No node. */
#define REPLAY_NFS_NO_FILE G_MAXUINT32
/* The folder of the replay directory holding nodes whose path is unknown. */
#define REPLAY_NFS_UNNAMED "unnamed"

typedef enum {
  REPLAY_NFS_NODE_FILE,
  REPLAY_NFS_NODE_DIR,
  REPLAY_NFS_NODE_SYMLINK,
} ReplayNfsNodeType;

/* A node of the name space: a file, directory or symbolic link. */
typedef struct {
  guint64  fh_hash;         /* 0: a placeholder (a name whose handle the capture never showed) */
  char     name[24];        /* hex of fh_hash */
  ReplayNfsNodeType type;
  guint32  parent;          /* directory node at the start, REPLAY_NFS_NO_FILE: the root itself,
                             * or unnamed/ when !named */
  const char *leaf;         /* its name in parent (plan->strings) */
  const char *path;         /* relative to the replay directory: "", "a/b", "unnamed/fh-..." */
  guint    depth;           /* components in path */
  gboolean named;           /* at its traced path (else under unnamed/) */
  gboolean created;         /* made by a replayed operation, not at setup */
  const char *link_text;    /* a symbolic link's text when the capture shows it, else NULL */
  guint64  size_bytes;      /* largest extent or reply size seen */
  gboolean read;            /* some READ: the extents it reads are filled */
  gboolean written;
  guint32  fill_first;      /* its extents in ReplayNfsPlan.fill */
  guint32  n_fill;
  guint64  fill_bytes;      /* bytes setup writes in it */
} ReplayNfsFile;

/* A byte range of a file that setup fills with the pattern. */
typedef struct {
  guint32  file;
  guint64  offset;
  guint64  length;
} ReplayNfsExtent;

/* The largest READ and WRITE count replayed for one protocol version, and
 * where the limit comes from ("FSINFO", "CREATE_SESSION", "default",
 * "--max-io-bytes"). */
typedef struct {
  guint32     read_bytes;
  guint32     write_bytes;
  const char *source;
} ReplayNfsIoLimit;

/* The limit of a version whose capture shows none: 8 KiB for NFSv2
 * (MAXDATA, RFC 1094 §2.3; Linux NFSSVC_MAXBLKSIZE_V2); 1 MiB for v3 and
 * v4, what Linux nfsd serves (fs/nfsd/nfsd.h NFSSVC_MAXBLKSIZE =
 * RPCSVC_MAXPAYLOAD, 1 MiB in include/linux/sunrpc/svc.h; the default
 * NFSSVC_DEFBLKSIZE where later kernels allow more). */
#define REPLAY_NFS_V2_IO_LIMIT  8192u
#define REPLAY_NFS_IO_LIMIT     (1024u * 1024u)
/* A limit the capture announces (FSINFO rtmax/wtmax, CREATE_SESSION
 * maxsizes) is believed up to 16 MiB, sixteen times what Linux serves, so
 * that a real server's limit passes while a forged one cannot make the
 * replay allocate gigabytes; --max-io-bytes sets any limit. */
#define REPLAY_NFS_IO_LIMIT_CEILING (16u * 1024u * 1024u)
/* Default max_setup_bytes: setup writes only what the replayed READs
 * read, which for the captures of real workloads we replay is a few
 * hundred MiB at most, while a mistaken or hostile capture (READs far
 * apart) could otherwise fill the file system; 1 GiB is large enough not
 * to get in the way and small enough that going past it is a decision
 * (--max-setup-bytes). */
#define REPLAY_NFS_DEFAULT_MAX_SETUP_BYTES (G_GUINT64_CONSTANT (1) << 30)

typedef struct {
  ReplayNfsKind kind;
  char     op[32];          /* the traced operation ("READDIRPLUS", "LOOKUP"...) */
  guint32  file;            /* the node operated on (ReplayNfsPlan.files index), or REPLAY_NFS_NO_FILE */
  guint32  dir;             /* name operations: the directory node of name */
  guint32  dir2;            /* RENAME: the directory node of name2 */
  const char *name;         /* name operations (plan->strings); NULL otherwise */
  const char *name2;        /* RENAME's new name, SYMLINK's link text */
  gboolean create;          /* OPEN: with O_CREAT */
  gboolean traced_failed;   /* the traced reply was an error: a replayed error is as traced */
  guint64  offset;          /* READ/WRITE */
  guint32  count;           /* READ/WRITE bytes */
  guint64  size_bytes;      /* TRUNCATE: the size the reply reports */
  gint64   sched_ns;        /* intended issue relative to t0, divided by the speed */
  gint64   traced_latency_ns; /* -1 when the capture has no reply */
  guint32  xid;
  gint64   traced_reply_ns; /* reply time relative to the first call (unscaled), -1 if none */
  gint32   after;           /* index of an earlier op on the same node (the file, or the
                             * directories of a name operation) whose reply came before
                             * this call: issued only once that completed, as the client
                             * waited for it; -1 = none */
  gint32   after2;          /* the same for a second node (name operations), -1 = none */
} ReplayNfsOp;

typedef struct {
  ReplayTiming timing;      /* recorded or afap */
  double   speed;
  gboolean allow_write;
  GArray  *files;           /* ReplayNfsFile (every node), in order of first appearance */
  GStringChunk *strings;    /* names */
  guint32  root;            /* the node that is the replay directory, or REPLAY_NFS_NO_FILE */
  guint    n_type[3];       /* nodes by ReplayNfsNodeType */
  guint    n_named, n_unnamed, n_created;
  guint    max_depth;
  GArray  *ops;             /* ReplayNfsOp, in trace (call time) order */
  guint64  records;         /* capture records seen */
  guint64  n_by_kind[REPLAY_NFS_N_KINDS];
  guint64  bytes_read, bytes_written;
  guint64  file_bytes;      /* sum of the recreated files' sizes (sparse: not written) */
  GArray  *fill;            /* ReplayNfsExtent by file then offset, disjoint */
  guint64  setup_bytes;     /* bytes setup writes: the sum of fill */
  ReplayNfsIoLimit io_limit[3]; /* NFSv2, v3, v4 */
  guint64  skipped_io_limit; /* READ/WRITE above the count limit or the largest offset */
  guint64  skipped_writes;  /* modifying operations without allow_write */
  guint64  skipped_no_file; /* READ/WRITE/COMMIT without a usable file handle */
  guint64  skipped_traced_failed; /* modifying operations whose traced reply was an error */
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
  guint64      max_setup_bytes; /* most bytes setup may write; REPLAY_NFS_DEFAULT_MAX_SETUP_BYTES */
  guint32      max_io_bytes;    /* 0: the protocol's limit (ReplayNfsIoLimit); else this for all */
  volatile sig_atomic_t *stop;  /* may be NULL */
  /* May be NULL.  Called once setup is done (files made, filled,
   * fdatasync'ed, their pages dropped) and before the workers start, with
   * the replay directory; FALSE ends the run with its error.  For callers
   * that record the device during the replay only (iosim validate starts
   * its block capture here), so that setup's writes are not recorded. */
  gboolean (*prepared) (const char *replay_dir, gpointer data, GError **error);
  gpointer     prepared_data;
} ReplayNfsOptions;

/* The command name (comm) of every worker thread: one name for the whole
 * pool, as the kernel's nfsd threads all share "nfsd", so that block
 * traces of the replay (which record comm and thread id) name them alike
 * from run to run whichever worker took which operation. */
#define REPLAY_NFS_WORKER_COMM "iosim-nfsd"

/* threads 8, recorded timing, speed 1, reads only, 20 ms lead, 50 us spin,
 * setup limit REPLAY_NFS_DEFAULT_MAX_SETUP_BYTES, protocol I/O limits. */
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
  guint64   max_setup_bytes;
  guint64   fs_free_bytes;  /* statvfs f_bavail * f_frsize of the target before setup */
  char     *setup_refusal;  /* dry run: why setup would be refused, else NULL */
  guint64   buffer_bytes;   /* READ/WRITE buffers allocated for the workers */
  guint64   peak_rss_bytes; /* getrusage ru_maxrss after the replay (bytes) */
  ReplayNfsKindSummary kinds[REPLAY_NFS_N_KINDS];
} ReplayNfsResult;

/* Records (TraceNfsRecord, call-time order) -> plan.  REPLAY_ERROR_EMPTY
 * when no operation can be replayed. */
ReplayNfsPlan *replay_nfs_plan_build (const GArray           *records,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
/* The capture is decoded twice (handles first, then the plan), so that
 * memory holds the plan and not the records; "-" (standard input) is read
 * once into memory. */
ReplayNfsPlan *replay_nfs_plan_load  (const char             *capture_path,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
void           replay_nfs_plan_free  (ReplayNfsPlan *plan);
/* The name space (its size, then every node, names escaped as
 * replay_nfs_escape_name() does), operations by type, bytes to read and
 * write, what setup writes (--dry-run). */
void           replay_nfs_plan_print (const ReplayNfsPlan *plan, FILE *out);

/* A name or path as printable ASCII: C escapes (\n, \t, \", \\) and
 * \NNN octal for every other byte outside 0x20-0x7e (g_strescape). */
char          *replay_nfs_escape_name (const char *name);

/* Check the target directory: exists, is a directory, is not "/".
 * Returns its canonical path. */
char          *replay_nfs_check_dir  (const char *target_dir, GError **error);

/* Takes @plan.  REPLAY_ERROR_RANGE before anything is written when setup
 * would write more than max_setup_bytes or the free space.  With
 * dry_run, checks the directory and returns the plan without touching
 * anything (setup_refusal says whether setup would be refused). */
ReplayNfsResult *replay_nfs_run_plan (ReplayNfsPlan          *plan,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
ReplayNfsResult *replay_nfs_run      (const char             *capture_path,
                                      const ReplayNfsOptions *opts,
                                      GError                **error);
void             replay_nfs_result_free (ReplayNfsResult *result);

void     replay_nfs_result_print      (const ReplayNfsResult *result, FILE *out);
/* One line per operation: index,op,kind,file (its path),offset,count,intended_ns,
 * issue_ns,complete_ns,latency_ns,traced_latency_ns,error,worker; a field
 * with a comma, double quote, CR or LF is quoted as RFC 4180 says. */
void     replay_nfs_result_write_csv  (const ReplayNfsResult *result, FILE *out);
gboolean replay_nfs_result_write_json (const ReplayNfsResult *result, const char *path,
                                       GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayNfsPlan, replay_nfs_plan_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayNfsResult, replay_nfs_result_free)

G_END_DECLS
