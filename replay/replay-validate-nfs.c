/* replay-validate-nfs.c — `iosim validate` with an NFS capture
 * (replay-validate.h): the capture is replayed server-side (replay-nfs.h)
 * in a directory of the target's file system under each scheduler, with a
 * block capture of the target running (replay-capture.h); that block
 * capture is what the fit and the comparison see, as for any other
 * workload.  Kept apart from replay-validate.c, which only calls in here
 * where the workload is an NFS capture.
 *
 * What the block capture holds: the replay's worker threads (comm
 * REPLAY_NFS_WORKER_COMM) and what the file system does on their behalf
 * (jbd2 commits, kworker writeback).  Not setup: the replay makes and
 * fills its files before the prepared hook, and the capture starts in that
 * hook after sync(2) and a page cache drop, so every run starts cold from
 * the same files (setup runs again each run, because with --allow-write a
 * run creates, removes and renames, and the next must start from the
 * capture's tree again, not from what the previous run left). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "replay/replay-capture.h"
#include "sim/sim-output.h"
#include "replay/replay-nfs.h"
#include "replay/replay-validate.h"
#include "traces/trace-nfs.h"

#define DROP_CACHES_PATH "/proc/sys/vm/drop_caches"
/* Most workers validate accepts, as iosim replay does for NFS. */
#define NFS_MAX_THREADS 4096

/* ---- Options --------------------------------------------------------------- */

/* The pool's size: the option, else the replay's default. */
static guint
pool_threads (const ReplayValidateOptions *opts)
{
  ReplayNfsOptions defaults;

  replay_nfs_options_init (&defaults);
  return opts->threads > 0 ? opts->threads : defaults.threads;
}

static gboolean
refuse (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
refuse (GError **error, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS, message);
  return FALSE;
}

/* " (loop3)" for a block device sysfs knows, else what an anonymous
 * device number means. */
static char *
describe_dev (dev_t dev)
{
  g_autofree char *link = g_strdup_printf ("/sys/dev/block/%u:%u", major (dev), minor (dev));
  g_autofree char *target = g_file_read_link (link, NULL);

  if (target != NULL)
    {
      g_autofree char *name = g_path_get_basename (target);
      return g_strdup_printf (" (%s)", name);
    }
  if (major (dev) == 0)
    return g_strdup (" (no block device: tmpfs, overlayfs, btrfs and other file systems give "
                     "their files an anonymous device number)");
  return g_strdup ("");
}

/* DIR's file system is on the target: st_dev of DIR is the target's
 * device number.  A partition is its own device: give the partition. */
static gboolean
check_dir_on_target (const char *target, const char *target_dir, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *dir = replay_nfs_check_dir (target_dir, &local);
  g_autofree char *where = NULL;
  struct stat tst, dst;

  if (dir == NULL)
    return refuse (error, "--target-dir: %s", local->message);
  if (stat (target, &tst) != 0)
    return refuse (error, "--target %s: %s", target, g_strerror (errno));
  if (!S_ISBLK (tst.st_mode))
    return refuse (error, "--target %s: not a block device", target);
  if (stat (dir, &dst) != 0)
    return refuse (error, "--target-dir %s: %s", target_dir, g_strerror (errno));
  if (dst.st_dev == tst.st_rdev)
    return TRUE;
  where = describe_dev (dst.st_dev);
  return refuse (error, "--target-dir %s is on device %u:%u%s, not on the target %s (%u:%u): "
                 "give a directory of the file system mounted from %s", target_dir,
                 major (dst.st_dev), minor (dst.st_dev), where, target, major (tst.st_rdev),
                 minor (tst.st_rdev), target);
}

gboolean
replay_validate_nfs_check (const ReplayValidateOptions *opts, GError **error)
{
  gboolean capture = opts->trace_path != NULL && trace_is_capture (opts->trace_path);

  if (opts->target_dir == NULL)
    {
      if (capture)
        return refuse (error, "%s is an NFS capture: it replays server-side, as file operations "
                       "in a directory; give --target-dir DIR, a directory of the file system "
                       "on %s", opts->trace_path, opts->target);
      if (opts->threads != 0)
        return refuse (error, "--threads is the NFS replay's worker count: only with an NFS "
                       "capture and --target-dir");
      return TRUE;
    }
  if (opts->argv != NULL)
    return refuse (error, "--target-dir is for NFS captures; a command runs as it is (leave "
                   "--target-dir out)");
  if (!capture)
    return refuse (error, "%s is not an NFS capture (pcap or pcapng): --target-dir replays NFS "
                   "captures; a block trace replays on --target alone", opts->trace_path);
  if (opts->threads > NFS_MAX_THREADS)
    return refuse (error, "--threads takes a count from 1 to %d", NFS_MAX_THREADS);
  return check_dir_on_target (opts->target, opts->target_dir, error);
}

/* ---- One measured run -------------------------------------------------------- */

typedef struct {
  const ReplayValidateOptions *opts;
  const char          *block_capture;
  ReplayCaptureThread *thread;
} NfsCapture;

/* Written back first (sync), so that the drop leaves nothing dirty
 * behind; "1" drops clean page cache pages only, file data and the block
 * device's cached metadata alike, and is not a setting: nothing to
 * restore. */
static gboolean
drop_page_cache (GError **error)
{
  int fd;
  gboolean ok;

  sync ();
  fd = open (DROP_CACHES_PATH, O_WRONLY | O_CLOEXEC);
  ok = fd >= 0 && write (fd, "1", 1) == 1;
  if (!ok)
    g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN,
                 "cannot drop the page cache before the run: %s: %s", DROP_CACHES_PATH,
                 g_strerror (errno));
  if (fd >= 0)
    close (fd);
  return ok;
}

/* The replay's files are made: start cold, then record. */
static gboolean
nfs_prepared (const char *replay_dir, gpointer data, GError **error)
{
  NfsCapture *nc = data;
  ReplayCaptureOptions co = { 0 };

  if (!drop_page_cache (error))
    return FALSE;
  co.device = nc->opts->target;
  co.output_path = nc->block_capture;
  co.journal_dir = nc->opts->journal_dir;
  co.log = nc->opts->log;
  nc->thread = replay_capture_start (&co, error);
  return nc->thread != NULL;
}

/* What the run left dirty goes to the device while the capture records,
 * so that each run's capture holds all of its writes rather than what
 * writeback happened to reach before the replay ended. */
static gboolean
sync_target_dir (const char *dir, GError **error)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok = fd >= 0 && syncfs (fd) == 0;

  if (!ok)
    g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN, "syncfs %s: %s", dir,
                 g_strerror (errno));
  if (fd >= 0)
    close (fd);
  return ok;
}

static gboolean
write_csv (const ReplayNfsResult *result, const char *path, GError **error)
{
  FILE *out = fopen (path, "w");
  gboolean failed;

  if (out == NULL)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  replay_nfs_result_write_csv (result, out);
  failed = ferror (out) != 0;
  if (fclose (out) != 0 || failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", path);
      return FALSE;
    }
  return TRUE;
}

/* The replay's own figures; the operation latency is averaged here
 * because the replay summarises it per kind only. */
static void
fill_figures (const ReplayNfsResult *result, ValidateNfsRun *run)
{
  double sum_ns = 0;
  guint64 n = 0;

  run->ops = result->ops;
  run->errors = result->errors;
  run->achieved_ops_per_s = result->achieved_iops;
  run->issue_error_p99_ns = result->issue_error_p99_ns;
  for (guint i = 0; i < result->results->len; i++)
    {
      const ReplayNfsOpResult *r = &g_array_index (result->results, ReplayNfsOpResult, i);

      if (r->issue_ns >= 0 && r->complete_ns >= r->issue_ns)
        {
          sum_ns += (double) (r->complete_ns - r->issue_ns);
          n++;
        }
    }
  run->latency_mean_ns = n > 0 ? sum_ns / (double) n : NAN;
}

/* The block capture stops on every path once it started; the replay's
 * error, if any, is the one reported. */
static gboolean
finish_capture (NfsCapture *nc, gboolean replayed, GError **error)
{
  GError *local = NULL;
  ReplayCaptureStats stats;
  gboolean ok = TRUE;

  if (nc->thread == NULL)
    return TRUE;
  if (replayed && !sync_target_dir (nc->opts->target_dir, &local))
    ok = FALSE;
  if (!replay_capture_finish (nc->thread, &stats, ok ? &local : NULL))
    ok = FALSE;
  nc->thread = NULL;
  if (!ok)
    {
      if (error != NULL && *error == NULL)
        g_propagate_prefixed_error (error, local, "capture of the NFS replay: ");
      else
        g_clear_error (&local);
    }
  return ok;
}

gboolean
replay_validate_nfs_measure (const ReplayValidateOptions *opts, const char *block_capture,
                             ValidateNfsRun *run, GError **error)
{
  NfsCapture nc = { opts, block_capture, NULL };
  ReplayNfsOptions no;
  g_autoptr (ReplayNfsResult) result = NULL;
  GError *local = NULL;
  gboolean captured;

  g_return_val_if_fail (opts->target_dir != NULL && opts->trace_path != NULL, FALSE);
  replay_nfs_options_init (&no);
  no.target_dir = opts->target_dir;
  no.threads = pool_threads (opts);
  no.allow_write = opts->allow_write;
  no.stop = opts->stop;
  no.prepared = nfs_prepared;
  no.prepared_data = &nc;
  result = replay_nfs_run (opts->trace_path, &no, &local);
  captured = finish_capture (&nc, result != NULL, &local);
  if (result == NULL || !captured)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  fill_figures (result, run);
  if (!replay_nfs_result_write_json (result, run->json_path, error)
      || !write_csv (result, run->csv_path, error))
    return FALSE;
  if (result->interrupted)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_INTERRUPTED,
                   "interrupted; the target's scheduler is restored");
      return FALSE;
    }
  if (result->errors > 0)
    {
      g_set_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_RUN,
                   "%" G_GUINT64_FORMAT " of the NFS replay's %" G_GUINT64_FORMAT " operations "
                   "failed (not as traced; see %s)", result->errors, result->ops, run->csv_path);
      return FALSE;
    }
  return TRUE;
}

void
replay_validate_nfs_run_free (ValidateNfsRun *run)
{
  if (run == NULL)
    return;
  g_free (run->sched);
  g_free (run->json_path);
  g_free (run->csv_path);
  g_free (run);
}

void
replay_validate_nfs_report_take (ReplayValidateReport *report, const ReplayValidateOptions *opts,
                                 GPtrArray *runs)
{
  g_return_if_fail (opts->target_dir != NULL && report->nfs_runs == NULL);
  report->target_dir = g_strdup (opts->target_dir);
  report->nfs_threads = pool_threads (opts);
  report->nfs_runs = runs;
}

/* ---- The fitted scenario ------------------------------------------------------ */

gboolean
replay_validate_nfs_write_scenario (const ReplayValidateOptions *opts, const FitResult *fit,
                                    const char *path, GError **error)
{
  g_autofree char *body = fit_scenario_to_data (fit);
  g_autoptr (GString) text = g_string_new (NULL);
  guint workers = pool_threads (opts);
  guint pool = 0;

  for (guint i = 0; i < fit->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (fit->processes, i);

      pool += g_strcmp0 (p->comm, REPLAY_NFS_WORKER_COMM) == 0;
    }
  fit_append_comment (text, "iosim validate: the workload is the NFS capture %s, replayed "
                  "server-side in %s/%s/", opts->trace_path, opts->target_dir, REPLAY_NFS_SUBDIR);
  fit_append_comment (text, "by a pool of %u worker threads (comm %s, as nfsd threads): each free "
                  "worker takes", workers, REPLAY_NFS_WORKER_COMM);
  fit_append_comment (text, "the next operation from one queue in trace order, at its recorded "
                  "time.  Fitted below:");
  fit_append_comment (text, "the block trace of %s during that replay under %s, run 1.",
                  opts->target, opts->scheds[0]);
  fit_append_comment (text, "%u of the pool's threads did block I/O (the %s processes); the other "
                  "%u process%s", pool, REPLAY_NFS_WORKER_COMM, fit->processes->len - pool,
                  fit->processes->len - pool == 1 ? " is" : "es are");
  fit_append_comment (text, "the kernel's on the replay's behalf (jbd2 journal commits, kworker "
                  "writeback) or the syncfs");
  fit_append_comment (text, "that ends each run, so that the run's writes are all recorded.");
  fit_append_comment (text, "The pool is fitted as a pool (the [process %s] below): its threads' "
                  "block I/Os in queue", REPLAY_NFS_WORKER_COMM);
  fit_append_comment (text, "order, each taken at its recorded time by the thread idle longest, or "
                  "by the first to free");
  fit_append_comment (text, "up when all are busy.  Lost: the operations the page cache answered "
                  "(no block I/O), and");
  fit_append_comment (text, "which bios one operation issued together (each is a request of its "
                  "own to the pool).");
  g_string_append_c (text, '\n');
  g_string_append (text, body);
  return sim_output_write (path, text->str, (gssize) text->len, error);
}

/* ---- Report -------------------------------------------------------------------- */

static void
print_us (FILE *out, double ns, int width)
{
  if (isnan (ns) || ns < 0)
    fprintf (out, " %*s", width, "-");
  else
    fprintf (out, " %*.1f", width, ns / 1e3);
}

void
replay_validate_nfs_print (const ReplayValidateReport *report, FILE *out)
{
  if (report->target_dir == NULL || report->nfs_runs == NULL)
    return;
  fprintf (out, "\nworkload: NFS capture %s, replayed server-side in %s/%s/ by %u worker "
           "threads (%s)\n", report->trace_path, report->target_dir, REPLAY_NFS_SUBDIR,
           report->nfs_threads, REPLAY_NFS_WORKER_COMM);
  fprintf (out, "the replay's own figures per run (operations; block figures above):\n");
  fprintf (out, "%-12s %4s %8s %7s %10s %18s %18s\n", "sched", "run", "ops", "errors", "ops/s",
           "issue err p99 us", "op latency mean us");
  for (guint i = 0; i < report->nfs_runs->len; i++)
    {
      const ValidateNfsRun *r = g_ptr_array_index (report->nfs_runs, i);

      fprintf (out, "%-12s %4u %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %10.1f", r->sched,
               r->run, r->ops, r->errors, r->achieved_ops_per_s);
      print_us (out, (double) r->issue_error_p99_ns, 18);
      print_us (out, r->latency_mean_ns, 18);
      fputc ('\n', out);
    }
}

static void
add_member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
add_member_number (JsonBuilder *b, const char *name, double value)
{
  json_builder_set_member_name (b, name);
  if (isnan (value) || isinf (value))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, value);
}

static void
add_run (JsonBuilder *b, const ValidateNfsRun *r)
{
  json_builder_begin_object (b);
  add_member_string (b, "sched", r->sched);
  json_builder_set_member_name (b, "run");
  json_builder_add_int_value (b, r->run);
  add_member_string (b, "replay_json", r->json_path);
  add_member_string (b, "replay_csv", r->csv_path);
  json_builder_set_member_name (b, "ops");
  json_builder_add_int_value (b, (gint64) r->ops);
  json_builder_set_member_name (b, "errors");
  json_builder_add_int_value (b, (gint64) r->errors);
  add_member_number (b, "achieved_ops_per_s", r->achieved_ops_per_s);
  json_builder_set_member_name (b, "issue_error_p99_ns");
  json_builder_add_int_value (b, r->issue_error_p99_ns);
  add_member_number (b, "op_latency_mean_ns", r->latency_mean_ns);
  json_builder_end_object (b);
}

void
replay_validate_nfs_add_json (JsonBuilder *b, const ReplayValidateReport *report)
{
  g_autofree char *replay_dir = NULL;

  if (report->target_dir == NULL)
    return;
  replay_dir = g_build_filename (report->target_dir, REPLAY_NFS_SUBDIR, NULL);
  add_member_string (b, "kind", "nfs");
  add_member_string (b, "capture", report->trace_path);
  add_member_string (b, "target_dir", report->target_dir);
  add_member_string (b, "replay_dir", replay_dir);
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, report->nfs_threads);
  add_member_string (b, "worker_comm", REPLAY_NFS_WORKER_COMM);
  json_builder_set_member_name (b, "runs");
  json_builder_begin_array (b);
  for (guint i = 0; report->nfs_runs != NULL && i < report->nfs_runs->len; i++)
    add_run (b, g_ptr_array_index (report->nfs_runs, i));
  json_builder_end_array (b);
}
