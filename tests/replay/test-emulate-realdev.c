/* test-emulate-realdev.c — `iosim emulate` on this kernel: a fixed-rate
 * device gives sequential O_DIRECT readers the throughput `iosim run`
 * predicts (2 %); on disk-7200-sata sequential reads beat random ones by
 * the ratio `iosim run` predicts (10 %) and the emulator's timing error
 * p99 stays below 1 ms; ext4 made on the device survives a restart on the
 * same --backing file, whose data the emulator wrote around the page cache
 * (O_DIRECT: none of it is cached); SIGTERM, SIGINT and SIGKILL (then `iosim restore`
 * or a new emulator) leave no loop device on our file and no FUSE mount;
 * --dirty-bytes / --dirty-background-bytes change vm.dirty_* for the run
 * and SIGTERM, or SIGKILL then `iosim restore` or a new emulator, put the
 * originals back
 * (the test puts them back itself too, even when an assertion aborts).
 * The test runs in a mount namespace of its own and its emulators stop
 * when it dies, so an aborted run leaves no mount and no loop device.
 * Needs root, /dev/fuse and /dev/loop-control; skips otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib-unix.h>
#include <json-glib/json-glib.h>

#include "test-run.h"
#include "replay/replay-emulate.h"
#include "replay/replay-journal.h"
#include "emulate-test.h"
#include "tests/test-mounts.h"

#define READY_TIMEOUT_US (20 * G_USEC_PER_SEC)
#define EXIT_TIMEOUT_US (20 * G_USEC_PER_SEC)

typedef struct {
  GPid   pid;
  char  *dev;          /* /dev/loopN */
  char  *stats;        /* --stats file */
  char  *journal_dir;  /* --journal-dir, shared by the restarts of a test */
  char  *emulate_dir;  /* TMP/iosim-emulate-XXXXXX, from the journal */
} Emu;


static char *
tmp_dir (void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("iosim-emutest-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *dir)
{
  const char *argv[] = { "rm", "-rf", dir, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                NULL);
}

/* The emulator's directory, from its journal (the only one in @dir). */
static char *
journal_emulate_dir (const char *journal_dir)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = replay_journal_list (journal_dir, &error);
  g_autoptr (ReplayJournal) j = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (files->len, ==, 1);
  j = replay_journal_load (files->pdata[0], NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (replay_journal_kind (j), ==, "emulate");
  return g_strdup (replay_journal_emulate_dir (j));
}

/* Spawn `iosim emulate` (with @extra arguments) and wait for the device line. */
/* An emulator stops (and detaches its loop device) when the test dies,
 * even by an assertion: nothing of an aborted run stays attached. */
static void
die_with_test (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

static Emu *
emu_spawn_args (const char *model, const char *size, const char *backing,
                const char *journal_dir, const char *const *extra)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) line = g_string_new (NULL);
  Emu *emu = g_new0 (Emu, 1);
  gint64 deadline = g_get_monotonic_time () + READY_TIMEOUT_US;
  int out_fd;

  emu->journal_dir = g_strdup (journal_dir);
  emu->stats = g_build_filename (journal_dir, "stats.json.out", NULL);
  g_ptr_array_add (argv, (gpointer) g_getenv ("IOSIM_BIN"));
  g_ptr_array_add (argv, "emulate");
  g_ptr_array_add (argv, "--model");
  g_ptr_array_add (argv, (gpointer) model);
  g_ptr_array_add (argv, "--size");
  g_ptr_array_add (argv, (gpointer) size);
  g_ptr_array_add (argv, "--journal-dir");
  g_ptr_array_add (argv, emu->journal_dir);
  g_ptr_array_add (argv, "--stats");
  g_ptr_array_add (argv, emu->stats);
  if (backing != NULL)
    {
      g_ptr_array_add (argv, "--backing");
      g_ptr_array_add (argv, (gpointer) backing);
    }
  for (guint i = 0; extra && extra[i]; i++)
    g_ptr_array_add (argv, (gpointer) extra[i]);
  g_ptr_array_add (argv, NULL);
  /* From the journal directory: a model FILE.ini named there relative. */
  g_assert_true (g_spawn_async_with_pipes (journal_dir, (char **) argv->pdata, NULL,
                                           G_SPAWN_DO_NOT_REAP_CHILD, die_with_test, NULL,
                                           &emu->pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  g_unix_set_fd_nonblocking (out_fd, TRUE, NULL);
  while (strchr (line->str, '\n') == NULL)
    {
      char c[256];
      ssize_t n = read (out_fd, c, sizeof c);
      if (n > 0)
        g_string_append_len (line, c, n);
      else if (n == 0 || g_get_monotonic_time () > deadline)
        g_error ("iosim emulate gave no device line (got '%s')", line->str);
      else
        g_usleep (20 * 1000);
    }
  close (out_fd);
  *strchr (line->str, '\n') = '\0';
  g_assert_true (g_str_has_prefix (line->str, "/dev/loop"));
  emu->dev = g_strdup (line->str);
  emu->emulate_dir = journal_emulate_dir (journal_dir);
  return emu;
}

static Emu *
emu_spawn (const char *model, const char *size, const char *backing, const char *journal_dir)
{
  return emu_spawn_args (model, size, backing, journal_dir, NULL);
}

/* Signal it and wait; its exit status (128 + signal when killed). */
static int
emu_signal_wait (Emu *emu, int signo)
{
  gint64 deadline = g_get_monotonic_time () + EXIT_TIMEOUT_US;
  int status;

  g_assert_cmpint (kill (emu->pid, signo), ==, 0);
  while (waitpid (emu->pid, &status, WNOHANG) == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("iosim emulate did not exit after signal %d", signo);
      g_usleep (20 * 1000);
    }
  g_spawn_close_pid (emu->pid);
  emu->pid = 0;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static JsonNode *
emu_stats (Emu *emu)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;

  json_parser_load_from_file (p, emu->stats, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (p));
}

static void
emu_free (Emu *emu)
{
  if (emu->pid)
    emu_signal_wait (emu, SIGTERM);
  g_free (emu->dev);
  g_free (emu->stats);
  g_free (emu->journal_dir);
  g_free (emu->emulate_dir);
  g_free (emu);
}

/* Nothing of @emulate_dir is left: no loop on its file, no mount, no dir. */
/* Route instances (tracefs/instances/iosim-emulate-route-PID) whose
 * emulator is gone: a stop, `iosim restore` or the next start removes them. */
static guint
stale_route_instances (void)
{
  g_autoptr (GDir) d = g_dir_open ("/sys/kernel/tracing/instances", 0, NULL);
  const char *name;
  guint stale = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "iosim-emulate-route-")
        && kill (atoi (name + strlen ("iosim-emulate-route-")), 0) != 0 && errno == ESRCH)
      stale++;
  return stale;
}

static void
assert_clean (const char *emulate_dir, const char *journal_dir)
{
  g_autofree char *mnt = g_build_filename (emulate_dir, REPLAY_EMULATE_MOUNT_NAME, NULL);
  g_autofree char *file = g_build_filename (mnt, REPLAY_EMULATE_FILE_NAME, NULL);
  g_auto (GStrv) loops = replay_emulate_loops_backed_by (file);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) journals = replay_journal_list (journal_dir, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (loops), ==, 0);
  g_assert_false (replay_emulate_is_mounted (mnt));
  g_assert_false (g_file_test (emulate_dir, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (journals->len, ==, 0);
  g_assert_cmpuint (stale_route_instances (), ==, 0);
}

/* iosim @args (from $IOSIM_BIN): its exit status; its standard output to
 * *@out, or with its standard error to the log as messages (on the
 * test's stdout it would break the TAP stream). */
static int
run_iosim (const char *const *args, char **out)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (TestRun) r = { 0 };

  g_ptr_array_add (argv, (gpointer) g_getenv ("IOSIM_BIN"));
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  test_run_argv (&r, NULL, (const char *const *) argv->pdata);
  if (out != NULL)
    *out = g_steal_pointer (&r.out);
  else if (*r.out != '\0')
    g_test_message ("%s", r.out);
  if (*r.err != '\0')
    g_test_message ("%s", r.err);
  return r.status;
}

/* `iosim run` of @scenario: the first process's MB/s. */
static double
predicted_mb_per_s (const char *dir, const char *scenario)
{
  g_autofree char *ini = g_build_filename (dir, "scenario.ini", NULL);
  g_autofree char *json = g_build_filename (dir, "run.json", NULL);
  const char *args[] = { "run", ini, "--json", json, NULL };
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *table = NULL;
  JsonObject *run;

  g_assert_true (g_file_set_contents (ini, scenario, -1, NULL));
  /* Captured: the run's table on this test's stdout would break TAP. */
  g_assert_cmpint (run_iosim (args, &table), ==, 0);
  json_parser_load_from_file (p, json, &error);
  g_assert_no_error (error);
  run = json_array_get_object_element (
    json_object_get_array_member (json_node_get_object (json_parser_get_root (p)), "runs"), 0);
  return json_object_get_double_member (
    json_array_get_object_element (json_object_get_array_member (run, "processes"), 0),
    "mb_per_s");
}

static gint64
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* O_DIRECT reads of @bs at the offsets given (in units of @bs); MB/s.
 * The reader runs SCHED_FIFO while it reads: the test measures the
 * emulated device, not how long a busy 2-core machine keeps a CFS reader
 * from its CPU (6 ms gaps between a reply and the next read were seen). */
static double
read_mb_per_s (const char *dev, gsize bs, const guint64 *blocks, guint n)
{
  int fd = open (dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
  struct sched_param fifo = { .sched_priority = 5 }, old_param;
  int old_policy;
  void *buf = NULL;
  gint64 t0;

  pthread_getschedparam (pthread_self (), &old_policy, &old_param);
  pthread_setschedparam (pthread_self (), SCHED_FIFO, &fifo);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (posix_memalign (&buf, 4096, bs), ==, 0);
  t0 = mono_ns ();
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (pread (fd, buf, bs, (off_t) (blocks[i] * bs)), ==, (gssize) bs);
  t0 = mono_ns () - t0;
  pthread_setschedparam (pthread_self (), old_policy, &old_param);
  free (buf);
  close (fd);
  return (double) bs * n / 1e6 / (t0 / 1e9);
}

static gint64
stats_int (JsonNode *stats, const char *object, const char *member)
{
  JsonObject *o = json_node_get_object (stats);

  if (object != NULL)
    o = json_object_get_object_member (o, object);
  return json_object_get_int_member (o, member);
}

/* CPU time the hypervisor took from this VM so far (steal, /proc/stat),
 * in ms.  A stolen vCPU stops the emulator's threads whatever their
 * priority: a plain SCHED_FIFO timer loop here was 25-100 ms late in runs
 * with 170-240 ms of steal, and 63 ns late (max) in a run without. */
static gint64
steal_ms (void)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) f = NULL;
  guint64 ticks = 0;

  if (!g_file_get_contents ("/proc/stat", &text, NULL, NULL))
    return 0;
  f = g_strsplit_set (text, " \n", 12);
  /* "cpu  user nice system idle iowait irq softirq steal ...": field 9
   * counting the empty one after "cpu". */
  if (g_strv_length (f) > 9)
    g_ascii_string_to_unsigned (f[9], 10, 0, G_MAXUINT64, &ticks, NULL);
  return (gint64) ticks * 1000 / sysconf (_SC_CLK_TCK);
}


/* A measurement is retried (fresh emulator) while the host disturbed it:
 * the hypervisor stole more CPU time during it than a tenth of what its
 * assertion tolerates (tolerance x the measurement's length), or tasks
 * waited for a CPU more than a tenth of its length.  After the last try
 * the timing assertions are skipped with the reason: they would test the
 * host, not the emulator.  Steal is counted in ticks of 10 ms (USER_HZ
 * 100): one tick spoils the 0.43 s fixed-rate read (a run with 10 ms
 * stolen measured -2.34 % against its 2 %); on a busy host the disk
 * test's 2.5 s saw 130-200 ms stolen and its ratio off by +3.4 to +8.2 %
 * against its 10 %; with two compilers running (CPU pressure 98 %) the
 * fixed-rate read measured -2.43 % without steal. */
#define ATTEMPTS 8

typedef struct {
  gint64 t0_ns, steal0_ms;
  double wait0_ms;
  gint64 stolen_ms;
  double waited_ms;
} HostNoise;

static void
host_noise_begin (HostNoise *n)
{
  n->t0_ns = mono_ns ();
  n->steal0_ms = steal_ms ();
  n->wait0_ms = emulate_test_cpu_wait_us () / 1e3;
}

static gboolean
host_noise_spoils (HostNoise *n, double tolerance)
{
  double elapsed_ms = (double) (mono_ns () - n->t0_ns) / 1e6;
  double wait_ms = emulate_test_cpu_wait_us () / 1e3;

  n->stolen_ms = steal_ms () - n->steal0_ms;
  n->waited_ms = wait_ms >= 0 && n->wait0_ms >= 0 ? wait_ms - n->wait0_ms : 0;
  return (double) n->stolen_ms * 10 > tolerance * elapsed_ms || n->waited_ms * 10 > elapsed_ms;
}

/* The emulator's replies must be on time to 1 ms at the 99th percentile.
 * A try misses that for the host's sake, not the emulator's, when the
 * hypervisor stole or tasks waited for a CPU at least 1 ms per percent of
 * the replies: enough to make that percent late.  Such a try is retried,
 * as a disturbed ratio is (a CI run saw 117 ms of waiting for a CPU and
 * p99 2.0 ms in one try; the next CI run's try, with 0.5 ms of waiting,
 * gave p99 37 us). */
#define TIMING_P99_NS (1000 * 1000)

static gboolean
timing_disturbed (JsonNode *stats, const HostNoise *noise)
{
  gint64 replies = stats_int (stats, "timing_error_ns", "replies");

  return stats_int (stats, "timing_error_ns", "p99") >= TIMING_P99_NS
         && (double) noise->stolen_ms + noise->waited_ms >= (double) replies / 100.0;
}

/* Issue 13: the fixed-rate device's throughput within 2 %, the disk's
 * sequential-to-random ratio within 10 %. */
#define FIXED_TOLERANCE 0.02
#define RATIO_TOLERANCE 0.10

/* ---- fixed-rate device: throughput as iosim run predicts ---- */

static void
test_fixed_throughput (void)
{
  g_autofree char *dir = NULL, *model = NULL, *scenario = NULL;
  g_autoptr (JsonNode) stats = NULL;
  guint64 blocks[16];
  double predicted, measured = 0;
  gboolean spoiled = TRUE;

  if (!emulate_test_can_run ())
    return;
  dir = tmp_dir ();
  model = g_build_filename (dir, "fixed.ini", NULL);
  g_assert_true (g_file_set_contents (model, "[device]\nkind = fixed\ncapacity = 1GiB\n"
                                      "overhead = 0.5ms\nbandwidth = 20MB/s\nqueue_depth = 1\n",
                                      -1, NULL));
  /* 512 KiB: what this stack passes whole (checked below); a 1 MiB read
   * reaches FUSE as two 512 KiB ones (max_segments 128 of 4 KiB pages). */
  scenario = g_strdup_printf ("[sim]\nseed = 1\n[device d]\nmodel = %s\nsched = none\n"
                              "[process reader]\ndevice = d\nop = read\npattern = sequential\n"
                              "io = direct\nbs = 512KiB\nsize = 8MiB\n", model);
  predicted = predicted_mb_per_s (dir, scenario);
  for (guint i = 0; i < G_N_ELEMENTS (blocks); i++)
    blocks[i] = i;
  for (guint attempt = 0; attempt < ATTEMPTS; attempt++)
    {
      Emu *emu = emu_spawn ("fixed.ini", "64MiB", NULL, dir);
      HostNoise noise;

      host_noise_begin (&noise);
      measured = read_mb_per_s (emu->dev, 512 * 1024, blocks, G_N_ELEMENTS (blocks));
      spoiled = host_noise_spoils (&noise, FIXED_TOLERANCE);
      g_assert_cmpint (emu_signal_wait (emu, SIGTERM), ==, 0);
      g_clear_pointer (&stats, json_node_unref);
      stats = emu_stats (emu);
      assert_clean (emu->emulate_dir, dir);
      emu_free (emu);
      g_test_message ("fixed 0.5 ms + 20 MB/s, 512 KiB O_DIRECT reads: predicted %.3f MB/s, "
                      "measured %.3f MB/s (%+.2f %%); timing error p99 %" G_GINT64_FORMAT
                      " ns; %" G_GINT64_FORMAT " ms stolen by the hypervisor, %.1f ms of "
                      "waiting for a CPU",
                      predicted, measured, 100 * (measured / predicted - 1),
                      stats_int (stats, "timing_error_ns", "p99"), noise.stolen_ms,
                      noise.waited_ms);
      if (!spoiled)
        break;
    }
  /* The route through loop and FUSE was measured at start: a wakeup or
   * two of this machine's CPUs, not nothing and not a device's time. */
  g_assert_true (json_object_get_boolean_member (
    json_object_get_object_member (json_node_get_object (stats), "route"), "measured"));
  g_assert_cmpint (stats_int (stats, "route", "ns"), >, 0);
  g_assert_cmpint (stats_int (stats, "route", "ns"), <, 1000 * 1000);
  /* With tracefs, every read's modelled time started at its own issue. */
  if (g_file_test ("/sys/kernel/tracing/instances", G_FILE_TEST_IS_DIR))
    {
      g_assert_cmpstr (json_object_get_string_member (
                         json_object_get_object_member (json_node_get_object (stats), "route"),
                         "from"), ==, "block_rq_issue");
      g_assert_cmpint (stats_int (stats, "route", "timed_from_issue"), ==, G_N_ELEMENTS (blocks));
      /* ... and every read's block_rq_complete was found, near its end. */
      g_assert_cmpint (stats_int (stats, "kernel_completion_error_ns", "matched"), ==,
                       G_N_ELEMENTS (blocks));
      g_assert_cmpint (ABS (stats_int (stats, "kernel_completion_error_ns", "p50")), <,
                       1000 * 1000);
    }
  /* The stack passed each read whole and one at a time. */
  g_assert_cmpint (stats_int (stats, NULL, "max_request_bytes"), ==, 512 * 1024);
  g_assert_cmpint (stats_int (stats, "in_flight", "max"), ==, 1);
  rm_rf (dir);
  if (spoiled)
    {
      g_test_skip ("the host (steal or CPU pressure) disturbed every try; throughput not asserted");
      return;
    }
  g_assert_cmpfloat (ABS (measured / predicted - 1), <, FIXED_TOLERANCE);
}

/* ---- disk-7200-sata: sequential against random, timing error ---- */

#define DISK_SIZE_BYTES (1ull << 30)
#define RANDOM_READS 250

static void
test_disk_ratio (void)
{
  g_autofree char *dir = NULL, *seq = NULL, *rnd = NULL;
  g_autoptr (JsonNode) stats = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (13);
  guint64 seq_blocks[48], rnd_blocks[RANDOM_READS];
  double p_seq, p_rnd, m_seq = 0, m_rnd = 0, p_ratio, m_ratio;
  gboolean spoiled = TRUE;

  if (!emulate_test_can_run ())
    return;
  dir = tmp_dir ();
  /* The emulated device is the model's first GiB: the random reader's
   * region is the same in the simulation. */
  seq = g_strdup_printf ("[sim]\nseed = 1\n[device d]\nmodel = disk-7200-sata\nsched = none\n"
                         "[process reader]\ndevice = d\nop = read\npattern = sequential\n"
                         "io = direct\nbs = 512KiB\nsize = %u\n",
                         (unsigned) G_N_ELEMENTS (seq_blocks) * 512 * 1024);
  rnd = g_strdup_printf ("[sim]\nseed = 1\n[device d]\nmodel = disk-7200-sata\nsched = none\n"
                         "[process reader]\ndevice = d\nop = read\npattern = random\n"
                         "io = direct\nbs = 4KiB\nregion = %llu\nsize = %u\n", DISK_SIZE_BYTES,
                         RANDOM_READS * 4096);
  p_seq = predicted_mb_per_s (dir, seq);
  p_rnd = predicted_mb_per_s (dir, rnd);
  p_ratio = p_seq / p_rnd;
  for (guint i = 0; i < G_N_ELEMENTS (seq_blocks); i++)
    seq_blocks[i] = i;
  for (guint i = 0; i < RANDOM_READS; i++)
    rnd_blocks[i] = (guint64) g_rand_int_range (rand, 0, (gint32) (DISK_SIZE_BYTES / 4096));
  /* A fresh emulator per try: the head starts where the simulation's does. */
  for (guint attempt = 0; attempt < ATTEMPTS; attempt++)
    {
      Emu *emu = emu_spawn ("disk-7200-sata", "1GiB", NULL, dir);
      HostNoise noise;

      host_noise_begin (&noise);
      m_seq = read_mb_per_s (emu->dev, 512 * 1024, seq_blocks, G_N_ELEMENTS (seq_blocks));
      m_rnd = read_mb_per_s (emu->dev, 4096, rnd_blocks, RANDOM_READS);
      spoiled = host_noise_spoils (&noise, RATIO_TOLERANCE);
      g_assert_cmpint (emu_signal_wait (emu, SIGINT), ==, 0);
      g_clear_pointer (&stats, json_node_unref);
      stats = emu_stats (emu);
      assert_clean (emu->emulate_dir, dir);
      emu_free (emu);
      m_ratio = m_seq / m_rnd;
      g_test_message ("disk-7200-sata: sequential 512 KiB %.2f MB/s (predicted %.2f), random "
                      "4 KiB %.3f MB/s (predicted %.3f); ratio %.1f, predicted %.1f (%+.1f %%); "
                      "%" G_GINT64_FORMAT " ms stolen by the hypervisor, %.1f ms of waiting for "
                      "a CPU", m_seq, p_seq, m_rnd, p_rnd, m_ratio, p_ratio,
                      100 * (m_ratio / p_ratio - 1), noise.stolen_ms, noise.waited_ms);
      g_test_message ("emulator timing error: p50 %" G_GINT64_FORMAT " ns, p99 %" G_GINT64_FORMAT
                      " ns, max %" G_GINT64_FORMAT " ns over %" G_GINT64_FORMAT " replies",
                      stats_int (stats, "timing_error_ns", "p50"),
                      stats_int (stats, "timing_error_ns", "p99"),
                      stats_int (stats, "timing_error_ns", "max"),
                      stats_int (stats, "timing_error_ns", "replies"));
      spoiled = spoiled || timing_disturbed (stats, &noise);
      if (!spoiled)
        break;
    }
  m_ratio = m_seq / m_rnd;
  rm_rf (dir);
  /* Seeks and rotation dominate whatever the host does. */
  g_assert_cmpfloat (m_ratio, >, 10);
  if (spoiled)
    {
      g_test_skip ("the host (steal or CPU pressure) disturbed every try; ratio and timing "
                   "error not asserted");
      return;
    }
  g_assert_cmpfloat (ABS (m_ratio / p_ratio - 1), <, RATIO_TOLERANCE);
  g_assert_cmpint (stats_int (stats, "timing_error_ns", "p99"), <, TIMING_P99_NS);
}

/* ---- ext4 on the device, across a restart on the same backing ---- */

static gboolean
run_tool (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  int status = 0;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
                     &status, &error))
    return FALSE;
  return g_spawn_check_wait_status (status, NULL);
}

static char *
file_checksum (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

/* Pages of @path in the page cache (mincore over a mapping of it). */
static guint64
cached_pages (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  long page = sysconf (_SC_PAGESIZE);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  gsize pages = ((gsize) st.st_size + (gsize) page - 1) / (gsize) page;
  void *map = mmap (NULL, (gsize) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  g_assert_true (map != MAP_FAILED);
  g_autofree unsigned char *vec = g_malloc (pages);
  g_assert_cmpint (mincore (map, (gsize) st.st_size, vec), ==, 0);
  guint64 n = 0;
  for (gsize i = 0; i < pages; i++)
    n += vec[i] & 1;
  munmap (map, (gsize) st.st_size);
  close (fd);
  return n;
}

static void
test_ext4_remount (void)
{
  g_autofree char *dir = NULL, *model = NULL, *backing = NULL, *mnt = NULL, *file = NULL;
  g_autofree char *sum = NULL, *sum2 = NULL, *mkfs_path = NULL;
  g_autofree guint8 *data = g_malloc (4 << 20);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  Emu *emu;

  if (!emulate_test_can_run ())
    return;
  if ((mkfs_path = g_find_program_in_path ("mkfs.ext4")) == NULL)
    {
      g_test_skip ("mkfs.ext4 not installed");
      return;
    }
  dir = tmp_dir ();
  model = g_build_filename (dir, "fast.ini", NULL);
  backing = g_build_filename (dir, "backing.img", NULL);
  mnt = g_build_filename (dir, "mnt", NULL);
  file = g_build_filename (mnt, "data.bin", NULL);
  g_assert_cmpint (g_mkdir_with_parents (mnt, 0700), ==, 0);
  g_assert_true (g_file_set_contents (model, "[device]\nkind = fixed\ncapacity = 1GiB\n"
                                      "overhead = 50us\nbandwidth = 400MB/s\n", -1, NULL));
  for (guint i = 0; i < (4u << 20) / 4; i++)
    ((guint32 *) data)[i] = g_rand_int (rand);

  emu = emu_spawn (model, "128MiB", backing, dir);
  {
    /* 4 KiB blocks: every request O_DIRECT can take on any backing file */
    const char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-b", "4096", emu->dev, NULL };
    g_assert_true (run_tool (mkfs));
  }
  g_assert_cmpint (mount (emu->dev, mnt, "ext4", 0, NULL), ==, 0);
  g_assert_true (g_file_set_contents (file, (const char *) data, 4 << 20, NULL));
  sync ();
  /* The emulator wrote what it served with O_DIRECT: none of the 4 MiB
   * and the file system's metadata is in the backing file's page cache. */
  g_assert_cmpuint (cached_pages (backing), ==, 0);
  sum = file_checksum (file);
  g_assert_cmpint (umount (mnt), ==, 0);
  g_assert_cmpint (emu_signal_wait (emu, SIGTERM), ==, 0);
  assert_clean (emu->emulate_dir, dir);
  emu_free (emu);
  g_assert_true (g_file_test (backing, G_FILE_TEST_IS_REGULAR));

  emu = emu_spawn (model, "128MiB", backing, dir);
  g_assert_cmpint (mount (emu->dev, mnt, "ext4", MS_RDONLY, NULL), ==, 0);
  sum2 = file_checksum (file);
  g_assert_cmpint (umount (mnt), ==, 0);
  g_assert_cmpstr (sum, ==, sum2);
  g_assert_cmpint (emu_signal_wait (emu, SIGTERM), ==, 0);
  assert_clean (emu->emulate_dir, dir);
  emu_free (emu);
  rm_rf (dir);
}

/* ---- stop signals and the cleanup after SIGKILL ---- */

typedef struct {
  const char *name;
  int         signo;
  const char *after;   /* after SIGKILL: "restore" or "emulate" */
} SignalCase;

static const SignalCase signal_cases[] = {
  { "sigterm", SIGTERM, NULL },
  { "sigint", SIGINT, NULL },
  { "sigkill-restore", SIGKILL, "restore" },
  { "sigkill-emulate", SIGKILL, "emulate" },
};

static void
test_signal (gconstpointer data)
{
  const SignalCase *c = data;
  g_autofree char *dir = NULL, *left = NULL;
  Emu *emu;
  int fd;

  if (!emulate_test_can_run ())
    return;
  dir = tmp_dir ();
  emu = emu_spawn ("disk-7200-sata", "256MiB", NULL, dir);
  /* Some I/O in flight or done, so the stop is not on an idle device. */
  fd = open (emu->dev, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  {
    char buf[4096];
    g_assert_cmpint (pread (fd, buf, sizeof buf, 1 << 20), ==, sizeof buf);
  }
  close (fd);
  g_assert_cmpint (emu_signal_wait (emu, c->signo), ==, c->signo == SIGKILL ? 128 + SIGKILL : 0);
  left = g_strdup (emu->emulate_dir);
  if (c->after != NULL && strcmp (c->after, "restore") == 0)
    {
      const char *args[] = { "restore", "--dir", dir, NULL };
      g_assert_true (g_file_test (left, G_FILE_TEST_IS_DIR));
      g_assert_cmpint (run_iosim (args, NULL), ==, 0);
    }
  else if (c->after != NULL)
    {
      Emu *next;
      g_assert_true (g_file_test (left, G_FILE_TEST_IS_DIR));
      next = emu_spawn ("disk-7200-sata", "256MiB", NULL, dir);
      /* The new one cleaned up the old one before making its own. */
      g_assert_false (g_file_test (left, G_FILE_TEST_EXISTS));
      g_assert_cmpint (emu_signal_wait (next, SIGTERM), ==, 0);
      assert_clean (next->emulate_dir, dir);
      emu_free (next);
    }
  assert_clean (left, dir);
  emu_free (emu);
  rm_rf (dir);
}

/* ---- the dirty limits ---- */

/* The four files, in the order of the pairs (bytes, then its ratio). */
static const char *const dirty_files[] = {
  "/proc/sys/vm/dirty_bytes", "/proc/sys/vm/dirty_ratio",
  "/proc/sys/vm/dirty_background_bytes", "/proc/sys/vm/dirty_background_ratio",
};

/* The originals, kept where an abort handler can reach them: a failed
 * assertion aborts before any teardown, and the machine must not keep
 * low dirty limits (every later test would crawl). */
static char dirty_orig[4][32];
static volatile pid_t dirty_emu_pid;

typedef struct {
  gboolean saved;
} DirtyFixture;

static void
dirty_read_all (char values[4][32])
{
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (dirty_files[i], &text, NULL, NULL));
      g_strstrip (text);
      g_assert_cmpuint (strlen (text), <, 32);
      memcpy (values[i], text, strlen (text) + 1);
    }
}

static void
write_str (const char *path, const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  if (fd >= 0)
    {
      if (write (fd, value, strlen (value)) < 0)
        {
          /* Reported by the caller's read-back. */
        }
      close (fd);
    }
}

/* Of each pair the original in force: bytes unless it was 0 (the kernel
 * refuses 0 for dirty_bytes and zeroes the twin of what is written,
 * mm/page-writeback.c).  Async-signal-safe. */
static void
dirty_put_back (void)
{
  for (guint pair = 0; pair < 2; pair++)
    {
      guint i = strcmp (dirty_orig[2 * pair], "0") != 0 ? 2 * pair : 2 * pair + 1;
      write_str (dirty_files[i], dirty_orig[i]);
    }
}

static void
dirty_on_abort (int signo)
{
  struct timespec ts = { 0, 50 * 1000 * 1000 };

  if (dirty_emu_pid > 0)
    {
      kill (dirty_emu_pid, SIGTERM);
      for (guint i = 0; i < 100 && waitpid (dirty_emu_pid, NULL, WNOHANG) == 0; i++)
        nanosleep (&ts, NULL);
    }
  dirty_put_back ();
  signal (signo, SIG_DFL);
  raise (signo);
}

static void
dirty_setup (DirtyFixture *f, gconstpointer data)
{
  if (geteuid () != 0)
    return;
  dirty_read_all (dirty_orig);
  f->saved = TRUE;
  signal (SIGABRT, dirty_on_abort);
}

static void
dirty_teardown (DirtyFixture *f, gconstpointer data)
{
  char now[4][32];
  gboolean same = TRUE;

  if (!f->saved)
    return;
  signal (SIGABRT, SIG_DFL);
  dirty_read_all (now);
  for (guint i = 0; i < 4; i++)
    same &= strcmp (now[i], dirty_orig[i]) == 0;
  if (!same)
    {
      g_test_message ("teardown: vm.dirty_* not as found; writing back the originals");
      dirty_put_back ();
    }
  dirty_read_all (now);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpstr (now[i], ==, dirty_orig[i]);
}

static void
assert_dirty (const char *const values[4])
{
  char now[4][32];

  dirty_read_all (now);
  for (guint i = 0; i < 4; i++)
    {
      g_test_message ("%s = %s", dirty_files[i], now[i]);
      g_assert_cmpstr (now[i], ==, values[i]);
    }
}

/* How the emulator ends, and who puts the limits back. */
typedef enum { DIRTY_SIGTERM, DIRTY_SIGKILL_RESTORE, DIRTY_SIGKILL_EMULATE } DirtyEnd;

static void
test_dirty (DirtyFixture *f, gconstpointer data)
{
  DirtyEnd end = GPOINTER_TO_INT (data);
  gboolean kill9 = end != DIRTY_SIGTERM;
  const char *const orig[4] = { dirty_orig[0], dirty_orig[1], dirty_orig[2], dirty_orig[3] };
  /* Values other than the current ones, so that a change shows. */
  gboolean taken = strcmp (dirty_orig[0], "50331648") == 0;
  const char *bytes = taken ? "40MiB" : "48MiB", *bg = taken ? "10MiB" : "12MiB";
  const char *const lowered[4] = { taken ? "41943040" : "50331648", "0",
                                   taken ? "10485760" : "12582912", "0" };
  const char *const extra[] = { "--dirty-bytes", bytes, "--dirty-background-bytes", bg, NULL };
  g_autofree char *dir = NULL, *left = NULL, *out = NULL;
  Emu *emu;

  if (!emulate_test_can_run ())
    return;
  dir = tmp_dir ();
  emu = emu_spawn_args ("usb-stick", "64MiB", NULL, dir, extra);
  dirty_emu_pid = emu->pid;
  assert_dirty (lowered);
  g_assert_cmpint (emu_signal_wait (emu, kill9 ? SIGKILL : SIGTERM), ==,
                   kill9 ? 128 + SIGKILL : 0);
  dirty_emu_pid = 0;
  left = g_strdup (emu->emulate_dir);
  if (end == DIRTY_SIGKILL_EMULATE)
    {
      /* The next emulator (setting nothing) writes them back first. */
      Emu *next;
      assert_dirty (lowered);
      next = emu_spawn ("usb-stick", "64MiB", NULL, dir);
      dirty_emu_pid = next->pid;
      assert_dirty (orig);
      g_assert_cmpint (emu_signal_wait (next, SIGTERM), ==, 0);
      dirty_emu_pid = 0;
      assert_clean (next->emulate_dir, dir);
      emu_free (next);
    }
  else if (kill9)
    {
      const char *dry[] = { "restore", "--dir", dir, "--dry-run", NULL };
      const char *args[] = { "restore", "--dir", dir, NULL };

      /* Nothing restores them after SIGKILL but the journal. */
      assert_dirty (lowered);
      g_assert_cmpint (run_iosim (dry, &out), ==, 0);
      g_test_message ("%s", out);
      g_assert_nonnull (strstr (out, "would write back /proc/sys/vm/dirty_"));
      assert_dirty (lowered);
      g_assert_cmpint (run_iosim (args, NULL), ==, 0);
    }
  assert_dirty (orig);
  assert_clean (left, dir);
  emu_free (emu);
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* ext4 on an emulated device and the emulators' FUSE file systems go
   * with the test. */
  test_private_mounts ();
  g_test_add_func ("/emulate/realdev/fixed-throughput", test_fixed_throughput);
  g_test_add_func ("/emulate/realdev/disk-seq-vs-random", test_disk_ratio);
  g_test_add_func ("/emulate/realdev/ext4-remount", test_ext4_remount);
  for (guint i = 0; i < G_N_ELEMENTS (signal_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/emulate/realdev/signal/%s", signal_cases[i].name);
      g_test_add_data_func (path, &signal_cases[i], test_signal);
    }
  g_test_add ("/emulate/realdev/dirty/sigterm", DirtyFixture, GINT_TO_POINTER (DIRTY_SIGTERM),
              dirty_setup, test_dirty, dirty_teardown);
  g_test_add ("/emulate/realdev/dirty/sigkill-restore", DirtyFixture,
              GINT_TO_POINTER (DIRTY_SIGKILL_RESTORE), dirty_setup, test_dirty, dirty_teardown);
  g_test_add ("/emulate/realdev/dirty/sigkill-emulate", DirtyFixture,
              GINT_TO_POINTER (DIRTY_SIGKILL_EMULATE), dirty_setup, test_dirty, dirty_teardown);
  return g_test_run ();
}
