/* test-replay-setup.c — target setup and restore on a fake sysfs and
 * cgroup tree (replay/replay-setup.h), --isolate's masks, refusals and
 * restore on a fake tree, and the plan's device mapping and offset
 * scaling (replay_plan_build_mapped).  No device, no root. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay.h"
#include "replay/replay-setup.h"
#include "fake-sysfs.h"

typedef struct {
  char        *root;
  char        *queue;
  ReplayTarget target;
} Fake;

static void
fake_setup (Fake *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->root = g_dir_make_tmp ("iosim-setup-XXXXXX", &error);
  g_assert_no_error (error);
  f->queue = g_build_filename (f->root, "block", "fake0", "queue", NULL);
  fake_queue_fill (f->queue);
  put (f->queue, "iosched/fifo_batch", "16\n");
  put (f->root, "cgroup/blkio/blkio.throttle.read_bps_device", "");
  put (f->root, "cgroup/blkio/blkio.throttle.write_bps_device", "250:7 1000\n");
  fake_target_init (&f->target, f->root);
}

static void
fake_teardown (Fake *f, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->root);
  g_free (f->queue);
  fake_target_clear (&f->target);
}

/* Everything the spec touches, as one string, to compare before/after. */
static char *
snapshot (Fake *f)
{
  const char *files[] = { "scheduler", "read_ahead_kb", "nr_requests", "rotational",
                          "iosched/read_expire", "iosched/fifo_batch" };
  g_autofree char *cg = g_build_filename (f->root, "cgroup", "blkio", NULL);
  g_autofree char *rd = get (cg, "blkio.throttle.read_bps_device");
  g_autofree char *wr = get (cg, "blkio.throttle.write_bps_device");
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *v = get (f->queue, files[i]);
      const char *open = strchr (v, '[');
      /* The active elevator; the fake file holds what was written last. */
      g_autofree char *active = open ? g_strndup (open + 1, strcspn (open + 1, "]")) : g_strdup (v);
      g_string_append_printf (s, "%s=%s;", files[i], active);
    }
  /* A v1 rule of 0 is no rule. */
  g_string_append_printf (s, "r=%s;w=%s", g_str_equal (rd, "250:7 0") ? "" : rd, wr);
  return g_string_free (s, FALSE);
}

static void
test_apply_restore (Fake *f, gconstpointer data)
{
  const char *sched_set[] = { "fifo_batch=1", NULL };
  const char *queue_set[] = { "read_ahead_kb=4096", "rotational=1", NULL };
  g_autofree char *cg = g_build_filename (f->root, "cgroup", NULL);
  ReplaySetupSpec spec = { .scheduler = "kyber", .sched_set = sched_set, .queue_set = queue_set,
                           .throttle_read_bps = 5000, .throttle_write_bps = 7000,
                           .cgroup_root = cg };
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *before = snapshot (f);
  g_autofree char *after = NULL, *log_text = NULL;
  char *buf = NULL;
  gsize len = 0;
  FILE *log = open_memstream (&buf, &len);

  /* The fake elevator "kyber" keeps mq-deadline's files: fifo_batch exists. */
  g_assert_true (replay_setup_apply (setup, &spec, &f->target, log, &error));
  g_assert_no_error (error);
  fclose (log);
  log_text = buf;
  {
    g_autofree char *sched = get (f->queue, "scheduler");
    g_autofree char *ra = get (f->queue, "read_ahead_kb");
    g_autofree char *fb = get (f->queue, "iosched/fifo_batch");
    g_autofree char *rd = get (cg, "blkio/blkio.throttle.read_bps_device");
    g_autofree char *wr = get (cg, "blkio/blkio.throttle.write_bps_device");
    g_assert_cmpstr (sched, ==, "kyber");
    g_assert_cmpstr (ra, ==, "4096");
    g_assert_cmpstr (fb, ==, "1");
    g_assert_cmpstr (rd, ==, "250:7 5000");
    g_assert_cmpstr (wr, ==, "250:7 7000");
  }
  /* Every old value is in the log, as a command, before the change. */
  g_assert_nonnull (strstr (log_text, "echo 'mq-deadline' > "));
  g_assert_nonnull (strstr (log_text, "echo '128' > "));
  g_assert_nonnull (strstr (log_text, "echo '64' > "));
  g_assert_nonnull (strstr (log_text, "echo '250:7 1000' > "));
  /* What the kernel does on an elevator switch: nr_requests reset, the
   * old elevator's tunables gone (back at defaults when it returns). */
  put (f->queue, "nr_requests", "256\n");
  put (f->queue, "iosched/read_expire", "999\n");
  g_assert_cmpuint (replay_setup_pending (setup), >, 0);
  g_assert_true (replay_setup_restore (setup, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (replay_setup_pending (setup), ==, 0);
  after = snapshot (f);
  g_assert_cmpstr (after, ==, before);
  /* Idempotent. */
  g_assert_true (replay_setup_restore (setup, NULL, &error));
}

/* A bad name after other settings were applied: the error names it and
 * restore puts the applied ones back. */
static void
test_error_restore (Fake *f, gconstpointer data)
{
  const char *sched_set[] = { "read_expire=7", NULL };
  const char *queue_set[] = { "read_ahead_kb=4096", "rotational=1", "no_such_attr=1", NULL };
  ReplaySetupSpec spec = { .scheduler = "kyber", .sched_set = sched_set, .queue_set = queue_set };
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *before = snapshot (f);
  g_autofree char *after = NULL, *ra = NULL, *rot = NULL;

  g_assert_false (replay_setup_apply (setup, &spec, &f->target, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "no_such_attr"));
  g_clear_error (&error);
  ra = get (f->queue, "read_ahead_kb");
  rot = get (f->queue, "rotational");
  g_assert_cmpstr (rot, ==, "1");     /* applied before the failure */
  g_assert_cmpstr (ra, ==, "128");    /* not reached: read_ahead_kb goes after the others */
  g_assert_true (replay_setup_restore (setup, NULL, &error));
  after = snapshot (f);
  g_assert_cmpstr (after, ==, before);
}

/* A write that undoes an earlier one (as writing rotational resets
 * read_ahead_kb on Linux 6.11+) is caught by the final read-back: here
 * rotational is made an alias of read_ahead_kb, written after it. */
static void
test_later_write_undoes (Fake *f, gconstpointer data)
{
  const char *queue_set[] = { "rotational=1", "read_ahead_kb=4096", NULL };
  ReplaySetupSpec spec = { .queue_set = queue_set };
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *rot = g_build_filename (f->queue, "rotational", NULL);

  g_assert_cmpint (unlink (rot), ==, 0);
  g_assert_cmpint (symlink ("read_ahead_kb", rot), ==, 0);
  g_assert_false (replay_setup_apply (setup, &spec, &f->target, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "/rotational shows '4096'"));
  g_assert_nonnull (strstr (error->message, "a later setting reset it"));
  replay_setup_restore (setup, NULL, NULL);
}

/* Every value written is read back and kept for the JSON report (what
 * the kernel refuses or adjusts: the realdev tests). */
static void
test_read_back (Fake *f, gconstpointer data)
{
  const char *queue_set[] = { "read_ahead_kb=4097", NULL };
  ReplaySetupSpec spec = { .queue_set = queue_set };
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *json = g_build_filename (f->root, "r.json", NULL);
  g_autofree char *text = NULL;

  g_assert_true (replay_setup_apply (setup, &spec, &f->target, NULL, &error));
  g_assert_no_error (error);
  put (f->root, "r.json", "{\"ios\": 1}");
  g_assert_true (replay_setup_amend_json (setup, json, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (json, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"target_settings\""));
  g_assert_nonnull (strstr (text, "\"ios\""));
  g_assert_nonnull (strstr (text, "\"4097\""));
  g_assert_true (replay_setup_restore (setup, NULL, &error));
  g_assert_no_error (error);
}

/* The atexit guarantee: a process that exits without restoring. */
static void
test_guard_at_exit (Fake *f, gconstpointer data)
{
  const char *queue_set[] = { "read_ahead_kb=4096", NULL };
  ReplaySetupSpec spec = { .queue_set = queue_set };
  g_autofree char *ra = NULL;
  int status;
  pid_t pid;

  fflush (NULL);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      ReplaySetup *setup = replay_setup_new ();
      if (!replay_setup_apply (setup, &spec, &f->target, NULL, NULL))
        _exit (3);
      replay_setup_guard (setup);
      exit (0);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  ra = get (f->queue, "read_ahead_kb");
  g_assert_cmpstr (ra, ==, "128");
}

/* cgroup v2: io.max of the cgroup this process is in (here the fake root
 * stands for it when /proc/self/cgroup says "0::/"). */
static void
test_throttle_v2 (Fake *f, gconstpointer data)
{
  g_autofree char *own = NULL, *cgroup = NULL, *v2 = NULL, *after = NULL;
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  ReplaySetupSpec spec = { .throttle_read_bps = 1000, .throttle_write_bps = 2000 };
  g_auto (GStrv) lines = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/cgroup", &cgroup, NULL, NULL));
  lines = g_strsplit (cgroup, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "0::"))
      own = g_strdup (lines[i] + 3);
  if (own == NULL)
    {
      g_test_skip ("no cgroup v2 line in /proc/self/cgroup");
      return;
    }
  v2 = g_build_filename (f->root, "v2", NULL);
  {
    g_autofree char *dir = g_build_filename (v2, own, NULL);
    put (dir, "io.max", "8:0 rbps=5 wbps=max riops=max wiops=max\n");
    spec.cgroup_root = v2;
    g_assert_true (replay_setup_apply (setup, &spec, &f->target, NULL, &error));
    g_assert_no_error (error);
    after = get (dir, "io.max");
    g_assert_cmpstr (after, ==, "250:7 rbps=1000 wbps=2000");
    g_assert_true (replay_setup_restore (setup, NULL, &error));
    g_clear_pointer (&after, g_free);
    after = get (dir, "io.max");
    /* No rule before: every limit back to max. */
    g_assert_cmpstr (after, ==, "250:7 rbps=max wbps=max riops=max wiops=max");
  }
}

static void
test_spec_check (void)
{
  const char *bad[] = { "novalue", "=1", "../scheduler=none", "a/b=1", "key=" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *list[] = { bad[i], NULL };
      ReplaySetupSpec spec = { .queue_set = list };
      g_autoptr (GError) error = NULL;

      g_assert_false (replay_setup_spec_check (&spec, &error));
      g_assert_nonnull (error);
    }
  {
    const char *list[] = { "read_ahead_kb=64", NULL };
    ReplaySetupSpec spec = { .sched_set = list, .scheduler = "bfq" };
    g_assert_true (replay_setup_spec_check (&spec, NULL));
    g_assert_false (replay_setup_spec_empty (&spec));
  }
}

static TraceIo
mkio (guint32 maj, guint32 min, guint32 pid, TraceOp op, guint64 sector, guint32 nr, gint64 t)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.dev_major = maj;
  io.dev_minor = min;
  io.pid = pid;
  io.op = op;
  io.sector = sector;
  io.nr_sectors = nr;
  io.queue_ns = t;
  io.issue_ns = t + 1000;
  io.complete_ns = t + 50000;
  return io;
}

static void
test_plan_mapping (void)
{
  g_autoptr (GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr (ReplayPlan) plan = NULL;
  g_autoptr (GError) error = NULL;
  ReplayPlanTarget targets[2] = {
    { .dev_major = 8, .dev_minor = 0, .size_bytes = 1 << 20, .block_bytes = 512 },
    { .dev_major = 8, .dev_minor = 16, .size_bytes = 1 << 20, .block_bytes = 4096 },
  };
  ReplayOptions opts;
  guint on[2] = { 0, 0 };

  for (guint i = 0; i < 10; i++)
    {
      TraceIo a = mkio (8, 0, 100, TRACE_OP_READ, 8 * i, 8, i * 1000000);
      TraceIo b = mkio (8, 16, 200, TRACE_OP_READ, 64 * i, 8, i * 1000000 + 500);
      TraceIo c = mkio (8, 32, 300, TRACE_OP_WRITE, 0, 8, i * 1000000);
      g_array_append_val (ios, a);
      if (i < 7)
        g_array_append_val (ios, b);
      g_array_append_val (ios, c);
    }
  replay_options_init (&opts);
  /* The unmapped device writes; that alone must not need --allow-write. */
  plan = replay_plan_build_mapped (ios, &opts, targets, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_ios, ==, 17);
  g_assert_cmpuint (plan->skipped_unmapped, ==, 10);
  g_assert_cmpuint (plan->block_bytes, ==, 4096);
  for (guint p = 0; p < plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, p);
      for (guint i = 0; i < proc->ios->len; i++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
          on[io->target_index]++;
          g_assert_cmpuint (io->target_index, ==, proc->pid == 100 ? 0 : 1);
        }
    }
  g_assert_cmpuint (on[0], ==, 10);
  g_assert_cmpuint (on[1], ==, 7);
  g_assert_cmpuint (g_array_index (plan->targets, ReplayPlanTarget, 0).n_ios, ==, 10);
  g_assert_cmpuint (g_array_index (plan->targets, ReplayPlanTarget, 1).n_reads, ==, 7);
  g_assert_cmpuint (g_array_index (plan->targets, ReplayPlanTarget, 1).end_offset_bytes, ==,
                    6 * 64 * 512 + 4096);
}

/* A 64 MiB traced extent onto a 1 MiB target with 4 KiB blocks: every
 * I/O inside, aligned, and the order of offsets kept. */
static void
test_plan_scale (void)
{
  g_autoptr (GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr (ReplayPlan) plan = NULL;
  g_autoptr (GError) error = NULL;
  ReplayPlanTarget target = { .dev_major = 8, .dev_minor = 0, .size_bytes = 1 << 20,
                              .block_bytes = 4096 };
  const ReplayProcess *proc;
  ReplayOptions opts;
  guint64 prev = 0;

  for (guint i = 0; i < 200; i++)
    {
      /* Odd offsets and lengths, up to the end of 64 MiB. */
      guint64 sector = (guint64) i * ((64u << 20) / 512 / 200) + 3;
      TraceIo a = mkio (8, 0, 100, TRACE_OP_READ, sector, 13, i * 1000);
      g_array_append_val (ios, a);
    }
  replay_options_init (&opts);
  plan = replay_plan_build_mapped (ios, &opts, &target, 1, &error);
  g_assert_null (plan);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_clear_error (&error);
  opts.scale_offsets = TRUE;
  plan = replay_plan_build_mapped (ios, &opts, &target, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->scaled, ==, 200);
  proc = g_ptr_array_index (plan->processes, 0);
  for (guint i = 0; i < proc->ios->len; i++)
    {
      const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
      g_assert_cmpuint (io->offset_bytes % 4096, ==, 0);
      g_assert_cmpuint (io->bytes % 4096, ==, 0);
      g_assert_cmpuint (io->offset_bytes + io->bytes, <=, 1 << 20);
      g_assert_cmpuint (io->offset_bytes, >=, prev);
      prev = io->offset_bytes;
    }
  /* Spread over the target, not piled at its start. */
  g_assert_cmpuint (prev, >=, (1 << 20) - 3 * 4096);
}

static GArray *
int_list (const int *values, guint n)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (int));

  g_array_append_vals (a, values, n);
  return a;
}

/* A fake machine of CPUs 0-3 for --isolate. */
static ReplayIsolatePaths
fake_isolate_tree (Fake *f)
{
  put (f->root, "cpu/online", "0-3\n");
  put (f->root, "wq/cpumask", "f\n");
  put (f->root, "irq/24/smp_affinity", "f\n");
  put (f->root, "irq/25/smp_affinity", "4\n");                  /* CPU 2 only: stays */
  put (f->root, "irq/26/smp_affinity", "ffffffff,0000000c\n");  /* two words */
  put (f->root, "cgroup/cpuset/cpuset.cpus", "0-3\n");
  put (f->root, "cgroup/cpuset/cpuset.mems", "0\n");
  put (f->root, "cgroup/cpuset/cgroup.procs", "");
  return (ReplayIsolatePaths) {
    .cpu_online = g_build_filename (f->root, "cpu/online", NULL),
    .workqueue_mask = g_build_filename (f->root, "wq/cpumask", NULL),
    .irq_dir = g_build_filename (f->root, "irq", NULL),
    .cgroup_root = g_build_filename (f->root, "cgroup", NULL),
  };
}

static void
free_isolate_paths (ReplayIsolatePaths *p)
{
  g_free ((char *) p->cpu_online);
  g_free ((char *) p->workqueue_mask);
  g_free ((char *) p->irq_dir);
  g_free ((char *) p->cgroup_root);
}

/* Refusals come before any change. */
static void
test_isolate_refusals (Fake *f, gconstpointer data)
{
  ReplayIsolatePaths paths = fake_isolate_tree (f);
  const int all[] = { 0, 1, 2, 3 }, offline[] = { 5 }, two[] = { 2, 3 };
  g_autoptr (GArray) all_cpus = int_list (all, 4);
  g_autoptr (GArray) offline_cpus = int_list (offline, 1);
  g_autoptr (GArray) two_cpus = int_list (two, 2);
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autofree char *no_cpuset = g_build_filename (f->root, "nothing", NULL);
  ReplayIsolatePaths bare = paths;
  g_autofree char *wq = NULL;
  GError *error = NULL;

  g_assert_false (replay_setup_isolate (setup, NULL, &paths, NULL, &error));
  g_assert_nonnull (strstr (error->message, "--cpus"));
  g_clear_error (&error);
  g_assert_false (replay_setup_isolate (setup, all_cpus, &paths, NULL, &error));
  g_assert_nonnull (strstr (error->message, "leave at least one"));
  g_clear_error (&error);
  g_assert_false (replay_setup_isolate (setup, offline_cpus, &paths, NULL, &error));
  g_assert_nonnull (strstr (error->message, "CPU 5 of --cpus is not online"));
  g_clear_error (&error);
  bare.cgroup_root = no_cpuset;
  g_assert_false (replay_setup_isolate (setup, two_cpus, &bare, NULL, &error));
  g_assert_nonnull (strstr (error->message, "no cpuset cgroup"));
  g_clear_error (&error);
  g_assert_cmpuint (replay_setup_pending (setup), ==, 0);
  wq = get (f->root, "wq/cpumask");
  g_assert_cmpstr (wq, ==, "f");
  free_isolate_paths (&paths);
}

/* Masks lose the replay's CPUs; a failure midway (the fake cpuset has no
 * cpuset.cpus in a new directory) is undone with everything before it. */
static void
test_isolate_masks_restore (Fake *f, gconstpointer data)
{
  ReplayIsolatePaths paths = fake_isolate_tree (f);
  const int two[] = { 2, 3 };
  g_autoptr (GArray) cpus = int_list (two, 2);
  g_autoptr (ReplaySetup) setup = replay_setup_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *shield = g_strdup_printf ("%s/cgroup/cpuset/iosim-shield-%d", f->root,
                                             (int) getpid ());
  g_autofree char *wq = NULL, *irq24 = NULL, *irq25 = NULL, *irq26 = NULL;

  g_assert_false (replay_setup_isolate (setup, cpus, &paths, NULL, &error));
  g_assert_nonnull (strstr (error->message, "cpuset.cpus"));
  wq = get (f->root, "wq/cpumask");
  irq24 = get (f->root, "irq/24/smp_affinity");
  irq25 = get (f->root, "irq/25/smp_affinity");
  irq26 = get (f->root, "irq/26/smp_affinity");
  g_assert_cmpstr (wq, ==, "3");
  g_assert_cmpstr (irq24, ==, "3");
  g_assert_cmpstr (irq25, ==, "4");
  g_assert_cmpstr (irq26, ==, "ffffffff,00000000");
  g_assert_true (g_file_test (shield, G_FILE_TEST_IS_DIR));
  g_clear_error (&error);
  g_assert_true (replay_setup_restore (setup, NULL, &error));
  g_assert_no_error (error);
  g_free (wq);
  g_free (irq24);
  g_free (irq26);
  wq = get (f->root, "wq/cpumask");
  irq24 = get (f->root, "irq/24/smp_affinity");
  irq26 = get (f->root, "irq/26/smp_affinity");
  g_assert_cmpstr (wq, ==, "f");
  g_assert_cmpstr (irq24, ==, "f");
  g_assert_cmpstr (irq26, ==, "ffffffff,0000000c");
  g_assert_false (g_file_test (shield, G_FILE_TEST_EXISTS));
  free_isolate_paths (&paths);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/replay/setup/apply-restore", Fake, NULL, fake_setup, test_apply_restore, fake_teardown);
  g_test_add ("/replay/setup/error-restore", Fake, NULL, fake_setup, test_error_restore, fake_teardown);
  g_test_add ("/replay/setup/guard-at-exit", Fake, NULL, fake_setup, test_guard_at_exit, fake_teardown);
  g_test_add ("/replay/setup/later-write-undoes", Fake, NULL, fake_setup, test_later_write_undoes,
              fake_teardown);
  g_test_add ("/replay/setup/read-back-json", Fake, NULL, fake_setup, test_read_back, fake_teardown);
  g_test_add ("/replay/setup/throttle-v2", Fake, NULL, fake_setup, test_throttle_v2, fake_teardown);
  g_test_add ("/replay/setup/isolate-refusals", Fake, NULL, fake_setup, test_isolate_refusals,
              fake_teardown);
  g_test_add ("/replay/setup/isolate-masks-restore", Fake, NULL, fake_setup,
              test_isolate_masks_restore, fake_teardown);
  g_test_add_func ("/replay/setup/spec-check", test_spec_check);
  g_test_add_func ("/replay/plan/mapping", test_plan_mapping);
  g_test_add_func ("/replay/plan/scale-offsets", test_plan_scale);
  return g_test_run ();
}
