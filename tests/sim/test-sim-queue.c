/* test-sim-queue.c — request queue mechanics (merging, max_sectors, the
 * request pool blocking its submitter and, by era, whether a bio that
 * slept for a request merges when it wakes, plugging) and deadline's rules
 * (writes_starved, expiry between batches), driven bio by bio against a
 * fixed-time device; blk-mq's per-task plugs and where each elevator
 * merges, as scripts of several tasks' submissions; and a 4-thread
 * interleaved O_DIRECT reader as a whole scenario. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/scenario.h"

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  GString         *events;     /* "D:R1000 C:R1000 ..." */
  guint            completed_bios;
  gboolean         resumed;
} Fixture;

static void
record (gpointer data, const TraceRecord *rec)
{
  Fixture *f = data;
  if (rec->action != TRACE_ACT_ISSUE && rec->action != TRACE_ACT_PLUG
      && rec->action != TRACE_ACT_UNPLUG_TIMER && rec->action != TRACE_ACT_UNPLUG_IO
      && rec->action != TRACE_ACT_SLEEPRQ)
    return;
  if (rec->action == TRACE_ACT_ISSUE)
    g_string_append_printf (f->events, "D:%c%" G_GUINT64_FORMAT "+%u ",
                            (rec->rwbs & TRACE_RWBS_WRITE) ? 'W' : 'R', rec->sector, rec->nr_sectors);
  else
    g_string_append_printf (f->events, "%s ", trace_action_letters (rec->action));
}

static void
fixture_setup (Fixture *f, const char *sched, const char *tunables, guint nr_requests,
               guint32 max_sectors)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  limits.nr_requests = nr_requests;
  limits.max_sectors = max_sectors;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", "[device]\nkind = fixed\noverhead = 20ms\n"
                                             "bandwidth = 1000MB/s\n", &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched %s]\n%s", sched, tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  g_autofree char *group = g_strdup_printf ("sched %s", sched);
  SchedQueue *e = sched_queue_new (sched_ops_lookup (sched), f->q, f->sim, 1000, kf, group, &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (f->q, e);
  f->events = g_string_new (NULL);
  sim_queue_set_trace (f->q, record, f);
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->events, TRUE);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Fixture *f = bio->end_io_data;
  f->completed_bios++;
}

static SimIoContext ioc = { .pid = 1, .comm = "t", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };

static gboolean
submit (Fixture *f, SimOp op, guint64 sector, guint32 nr, SimBioWaiter *waiter)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = op;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &ioc;
  bio->end_io = bio_done;
  bio->end_io_data = f;
  return sim_queue_submit_bio (f->q, bio, waiter);
}

static void
test_back_and_request_merge (void)
{
  Fixture f;
  fixture_setup (&f, "noop", NULL, 128, 1024);
  submit (&f, SIM_OP_READ, 0, 8, NULL);     /* new request, plugs */
  submit (&f, SIM_OP_READ, 8, 8, NULL);     /* back merge */
  submit (&f, SIM_OP_READ, 24, 8, NULL);    /* new request */
  submit (&f, SIM_OP_READ, 16, 8, NULL);    /* back merge, then request merge with 24 */
  g_assert_cmpuint (f.q->counters.back_merges, ==, 2);
  g_assert_cmpuint (f.q->counters.request_merges, ==, 1);
  g_assert_cmpuint (sim_queue_requests_allocated (f.q), ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpstr (f.events->str, ==, "P UT D:R0+32 ");
  g_assert_cmpuint (f.completed_bios, ==, 4);
  fixture_teardown (&f);
}

static void
test_front_merge_deadline_only (void)
{
  Fixture f;
  fixture_setup (&f, "deadline", NULL, 128, 1024);
  submit (&f, SIM_OP_READ, 100, 8, NULL);
  submit (&f, SIM_OP_READ, 92, 8, NULL);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpstr (f.events->str, ==, "P UT D:R92+16 ");
  fixture_teardown (&f);

  /* front_merges = 0 turns the tree lookup off; the core's one-entry
   * last_merge cache still front-merges, as in the kernel, so the target
   * here is a request that is not last_merge. */
  fixture_setup (&f, "deadline", "front_merges = 0\n", 128, 1024);
  submit (&f, SIM_OP_READ, 100, 8, NULL);
  submit (&f, SIM_OP_READ, 500, 8, NULL);
  submit (&f, SIM_OP_READ, 492, 8, NULL);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 0);
  g_assert_cmpuint (sim_queue_requests_allocated (f.q), ==, 3);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  fixture_teardown (&f);

  fixture_setup (&f, "deadline", "front_merges = 1\n", 128, 1024);
  submit (&f, SIM_OP_READ, 100, 8, NULL);
  submit (&f, SIM_OP_READ, 500, 8, NULL);
  submit (&f, SIM_OP_READ, 492, 8, NULL);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  g_assert_cmpuint (sim_queue_requests_allocated (f.q), ==, 2);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  fixture_teardown (&f);
}

static void
test_max_sectors (void)
{
  Fixture f;
  fixture_setup (&f, "noop", NULL, 128, 16);
  submit (&f, SIM_OP_READ, 0, 8, NULL);
  submit (&f, SIM_OP_READ, 8, 8, NULL);
  submit (&f, SIM_OP_READ, 16, 8, NULL);
  g_assert_cmpuint (f.q->counters.back_merges, ==, 1);
  g_assert_cmpuint (sim_queue_requests_allocated (f.q), ==, 2);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpstr (f.events->str, ==, "P UT D:R0+16 D:R16+8 ");
  fixture_teardown (&f);
}

static void
test_unplug_threshold_and_timer (void)
{
  Fixture f;
  fixture_setup (&f, "noop", NULL, 128, 1024);
  submit (&f, SIM_OP_READ, 1000, 8, NULL);
  sim_run_until (f.sim, 2 * SIM_NS_PER_MS);
  g_assert_cmpstr (f.events->str, ==, "P ");
  sim_run_until (f.sim, 3 * SIM_NS_PER_MS);
  g_assert_cmpstr (f.events->str, ==, "P UT D:R1000+8 ");
  sim_run_until (f.sim, SIM_TIME_NEVER);
  fixture_teardown (&f);

  /* Four waiting requests unplug at once (unplug_thresh). */
  fixture_setup (&f, "noop", NULL, 128, 1024);
  for (guint i = 0; i < 4; i++)
    submit (&f, SIM_OP_READ, 1000 * (i + 1), 8, NULL);
  g_assert_cmpstr (f.events->str, ==, "P U D:R1000+8 ");
  g_assert_cmpuint (f.q->counters.unplugs_thresh, ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.completed_bios, ==, 4);
  fixture_teardown (&f);
}

static void
resumed (Sim *sim, gpointer data, SimTime now)
{
  Fixture *f = data;
  f->resumed = TRUE;
}

static void
test_pool_blocks_submitter (void)
{
  Fixture f;
  fixture_setup (&f, "noop", NULL, 4, 1024);
  for (guint i = 0; i < 4; i++)
    g_assert_true (submit (&f, SIM_OP_READ, 1000 * (i + 1), 8, NULL));
  SimBioWaiter waiter = { .resume = resumed, .resume_data = &f };
  sim_list_init (&waiter.link);
  g_assert_false (submit (&f, SIM_OP_READ, 9000, 8, &waiter));
  g_assert_cmpuint (f.q->counters.sleeps, ==, 1);
  g_assert_false (f.resumed);
  /* Writes have their own pool: not blocked by reads. */
  g_assert_true (submit (&f, SIM_OP_WRITE, 50000, 8, NULL));
  /* Nothing completes before 20 ms: the sleeper still sleeps. */
  sim_run_until (f.sim, 19 * SIM_NS_PER_MS);
  g_assert_false (f.resumed);
  /* The first completion (20 ms + transfer) frees a request: the sleeper gets it. */
  sim_run_until (f.sim, 21 * SIM_NS_PER_MS);
  g_assert_true (f.resumed);
  g_assert_cmpuint (f.q->rq_count[SIM_OP_READ], ==, 4);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.completed_bios, ==, 6);
  fixture_teardown (&f);
}

/* Two submitters sleep for a request, the second's bio contiguous with
 * the first's.  The first takes the first request freed; the second,
 * woken by the next, merges into the first's request (still queued)
 * where the era's __make_request retries its merge after sleeping (2.4,
 * 2.5: `goto again`), and takes a request of its own where it does not
 * (later 2.6). */
typedef struct {
  const char *name;
  gboolean    merge_after_wait;
  guint64     requests;
  guint64     back_merges;
  const char *dispatched;     /* the sleepers' requests as the device saw them */
} MergeAfterWaitCase;

static const MergeAfterWaitCase merge_after_wait_cases[] = {
  { "2.4-retries-merge", TRUE, 5, 1, "D:R9000+16 " },
  { "2.6-keeps-request", FALSE, 6, 0, "D:R9000+8 D:R9008+8 " },
};

static void
test_merge_after_wait (gconstpointer data)
{
  const MergeAfterWaitCase *c = data;
  Fixture f;
  fixture_setup (&f, "noop", NULL, 4, 1024);
  sim_queue_set_merge_after_wait (f.q, c->merge_after_wait);
  for (guint i = 0; i < 4; i++)
    g_assert_true (submit (&f, SIM_OP_READ, 1000 * (i + 1), 8, NULL));
  SimBioWaiter waiters[2];
  for (guint i = 0; i < 2; i++)
    {
      waiters[i] = (SimBioWaiter) { .resume = resumed, .resume_data = &f };
      sim_list_init (&waiters[i].link);
      g_assert_false (submit (&f, SIM_OP_READ, 9000 + 8 * i, 8, &waiters[i]));
    }
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.completed_bios, ==, 6);
  g_assert_cmpuint (f.q->counters.requests, ==, c->requests);
  g_assert_cmpuint (f.q->counters.back_merges, ==, c->back_merges);
  const char *tail = strstr (f.events->str, "D:R9000");
  g_assert_nonnull (tail);
  g_assert_cmpstr (tail, ==, c->dispatched);
  fixture_teardown (&f);
}

static void
test_deadline_writes_starved (void)
{
  Fixture f;
  fixture_setup (&f, "deadline", "fifo_batch = 1\n", 128, 1024);
  /* Three reads and three writes wait while the queue is plugged. */
  submit (&f, SIM_OP_READ, 1000, 8, NULL);
  submit (&f, SIM_OP_WRITE, 50000, 8, NULL);
  submit (&f, SIM_OP_READ, 3000, 8, NULL);
  submit (&f, SIM_OP_WRITE, 70000, 8, NULL);
  submit (&f, SIM_OP_READ, 2000, 8, NULL);
  submit (&f, SIM_OP_WRITE, 60000, 8, NULL);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  /* writes_starved = 2: two read batches, then a write batch (R R W R W W).
   * The fourth submission unplugs (unplug_thresh), so R1000 goes while
   * R2000 and W60000 are not yet queued: next_rq[READ] then points at
   * R3000, its sector successor at dispatch time, as in the kernel; new
   * write batches start from the write FIFO head. */
  g_assert_cmpstr (f.events->str, ==,
                   "P U D:R1000+8 D:R3000+8 D:W50000+8 D:R2000+8 D:W70000+8 D:W60000+8 ");
  fixture_teardown (&f);

  fixture_setup (&f, "deadline", "fifo_batch = 1\nwrites_starved = 0\n", 128, 1024);
  submit (&f, SIM_OP_READ, 1000, 8, NULL);
  submit (&f, SIM_OP_WRITE, 50000, 8, NULL);
  submit (&f, SIM_OP_READ, 2000, 8, NULL);
  submit (&f, SIM_OP_WRITE, 60000, 8, NULL);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  /* writes_starved = 0: writes win every choice while any wait. */
  g_assert_cmpstr (f.events->str, ==, "P U D:W50000+8 D:W60000+8 D:R1000+8 D:R2000+8 ");
  fixture_teardown (&f);
}

static char *
expiry_order (const char *tunables)
{
  Fixture f;
  fixture_setup (&f, "deadline", tunables, 128, 1024);
  submit (&f, SIM_OP_READ, 1000, 8, NULL);
  submit (&f, SIM_OP_READ, 500, 8, NULL);
  submit (&f, SIM_OP_READ, 2000, 8, NULL);
  sim_queue_unplug (f.q, &ioc);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  char *order = g_strdup (f.events->str);
  fixture_teardown (&f);
  return order;
}

static void
test_deadline_expiry (void)
{
  /* X(1000) goes first (FIFO head); after it (20 ms of service) a new
   * batch starts.  Y(500) has waited 20 ms: with read_expire = 10 ms it has
   * expired and goes next; with 500 ms the sector successor Z(2000) does. */
  g_autofree char *fresh = expiry_order ("fifo_batch = 1\nread_expire = 500ms\n");
  g_assert_cmpstr (fresh, ==, "P U D:R1000+8 D:R2000+8 D:R500+8 ");
  g_autofree char *expired = expiry_order ("fifo_batch = 1\nread_expire = 10ms\n");
  g_assert_cmpstr (expired, ==, "P U D:R1000+8 D:R500+8 D:R2000+8 ");
  /* Within a batch deadlines are not checked. */
  g_autofree char *batch = expiry_order ("fifo_batch = 16\nread_expire = 10ms\n");
  g_assert_cmpstr (batch, ==, "P U D:R1000+8 D:R2000+8 D:R500+8 ");
}

static void
test_hz_truncation (void)
{
  const SchedTunable *t = sched_deadline_ops.tunables;
  g_assert_cmpstr (t[0].name, ==, "read_expire");
  g_assert_cmpint (sched_tunable_default (&t[0], 1000), ==, 500);
  g_assert_cmpint (sched_tunable_default (&t[0], 250), ==, 125);
  g_assert_cmpint (sched_tunable_default (&t[0], 100), ==, 50);
  /* msecs_to_jiffies rounds up: 3 ms at HZ=100 is one jiffy (10 ms). */
  g_assert_cmpint (sched_msecs_to_jiffies (100, 3), ==, 1);
  SimQueueLimits l;
  sim_queue_limits_init (&l, 100);
  g_assert_cmpint (l.unplug_delay_ns, ==, 10 * SIM_NS_PER_MS);
  sim_queue_limits_init (&l, 1000);
  g_assert_cmpint (l.unplug_delay_ns, ==, 3 * SIM_NS_PER_MS);
}

static void
test_bad_tunable (void)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_assert_true (g_key_file_load_from_data (kf, "[sched deadline]\nread_expir = 5\n", -1, 0, NULL));
  g_autoptr (GError) error = NULL;
  SchedQueue *e = sched_queue_new (&sched_deadline_ops, NULL, NULL, 1000, kf, "sched deadline", &error);
  g_assert_null (e);
  g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
  g_assert_nonnull (strstr (error->message, "read_expir"));
  g_assert_nonnull (strstr (error->message, "read_expire"));
}

/* ---- blk-mq plugs and where merges happen: scripted tasks ---------------
 *
 * Each case is a script of steps by tasks 0..3 (each with its own I/O
 * context and plug, same I/O priority) against a device that serves one
 * request at a time in 20 ms, and the counters and issue order expected
 * after running to the end.  "S" starts a task's plug section
 * (blk_start_plug), "F" finishes it (blk_finish_plug), "U" is the task
 * waiting on its I/O (sim_queue_unplug), "R"/"W" submit a sync read / an
 * async write of @nr sectors at @sector; @sleeps: the bio must find the
 * pool empty and sleep. */

#define N_TASKS 4

typedef struct {
  char     what;            /* S F U R W */
  guint    task;
  guint64  sector;
  guint32  nr;
  gboolean sleeps;
} Step;

typedef struct {
  const char *name;
  const char *sched;
  guint       nr_requests;
  Step        steps[40];
  guint       n_steps;
  guint64     merges;       /* back + front + request merges */
  guint64     plug_merges;
  guint64     requests;     /* allocated over the run */
  const char *events;       /* P, U, UT and issues, as record() writes them */
  guint64     unplugs_thresh;
  guint64     unplugs_timer;
} PlugCase;

static SimIoContext task_iocs[N_TASKS] = {
  { .pid = 10, .comm = "t0", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 },
  { .pid = 11, .comm = "t1", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 },
  { .pid = 12, .comm = "t2", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 },
  { .pid = 13, .comm = "t3", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 },
};

#define SYNC_IO(t, s, n)  { 'S', t, 0, 0, FALSE }, { 'R', t, s, n, FALSE }, { 'F', t, 0, 0, FALSE }, \
                          { 'U', t, 0, 0, FALSE }

/* Four tasks read interleaved adjacent chunks, one synchronous read each,
 * while task 0's first read keeps the device busy. */
#define FOUR_INTERLEAVED  SYNC_IO (0, 100000, 8), SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8), \
                          SYNC_IO (2, 16, 8), SYNC_IO (3, 24, 8)

static const PlugCase plug_cases[] = {
  /* One task's adjacent async bios inside one plug merge there, under
   * every blk-mq elevator (blk_attempt_plug_merge), back and front. */
  { "none/own-plug", "none", 128,
    { { 'S', 0 }, { 'W', 0, 1000, 8 }, { 'W', 0, 1008, 8 }, { 'W', 0, 992, 8 }, { 'W', 0, 1016, 8 },
      { 'F', 0 } }, 6, 3, 3, 1, "P U D:W992+32 " },
  { "mq-deadline/own-plug", "mq-deadline", 128,
    { { 'S', 0 }, { 'W', 0, 1000, 8 }, { 'W', 0, 1008, 8 }, { 'W', 0, 992, 8 }, { 'W', 0, 1016, 8 },
      { 'F', 0 } }, 6, 3, 3, 1, "P U D:W992+32 " },
  { "kyber/own-plug", "kyber", 128,
    { { 'S', 0 }, { 'W', 0, 1000, 8 }, { 'W', 0, 1008, 8 }, { 'W', 0, 992, 8 }, { 'W', 0, 1016, 8 },
      { 'F', 0 } }, 6, 3, 3, 1, "P U D:W992+32 " },
  /* Only the newest plugged request is tried: 1008 is adjacent to the
   * first one, not to 5000. */
  { "none/plug-newest-only", "none", 128,
    { { 'S', 0 }, { 'W', 0, 1000, 8 }, { 'W', 0, 5000, 8 }, { 'W', 0, 1008, 8 }, { 'F', 0 } }, 5,
    0, 0, 3, "P U D:W1000+8 D:W5000+8 D:W1008+8 " },
  /* Interleaved synchronous readers: each plug holds one request and is
   * flushed before its task waits.  none then merges nothing; mq-deadline
   * merges the waiting requests in its queue (back merges by the hash);
   * the legacy elevators merge them in the elevator as before. */
  { "none/four-interleaved", "none", 128, { FOUR_INTERLEAVED }, 20,
    0, 0, 5, "P U D:R100000+8 P U P U P U P U D:R0+8 D:R8+8 D:R16+8 D:R24+8 " },
  { "mq-deadline/four-interleaved", "mq-deadline", 128, { FOUR_INTERLEAVED }, 20,
    3, 0, 2, "P U D:R100000+8 P U D:R0+32 " },
  { "deadline/four-interleaved", "deadline", 128, { FOUR_INTERLEAVED }, 20,
    3, 0, 2, "P U D:R100000+8 P U D:R0+32 " },
  { "noop/four-interleaved", "noop", 128, { FOUR_INTERLEAVED }, 20,
    3, 0, 2, "P U D:R100000+8 P U D:R0+32 " },
  /* A request on the device never merges, under any elevator. */
  { "none/dispatched", "none", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  { "mq-deadline/dispatched", "mq-deadline", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  { "bfq/dispatched", "bfq", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  { "kyber/dispatched", "kyber", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  { "deadline/dispatched", "deadline", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  { "cfq/dispatched", "cfq", 128, { SYNC_IO (0, 0, 8), SYNC_IO (1, 8, 8) }, 8,
    0, 0, 2, "P U D:R0+8 P U D:R8+8 " },
  /* Another task's bio does not see a plugged request: task 1's bio at
   * 8 finds task 0's request at 0 still in task 0's plug (the simulated
   * tasks interleave only where one slept; here task 0's section is
   * simply still open). */
  { "mq-deadline/plugged-is-private", "mq-deadline", 128,
    { { 'S', 0 }, { 'R', 0, 0, 8 }, { 'R', 1, 8, 8 }, { 'F', 0 } }, 4,
    0, 0, 2, "P D:R8+8 U D:R0+8 " },
  /* blk_add_rq_to_plug's limits: 32 requests, or a head of 128 KiB. */
  { "none/plug-limit-count", "none", 128,
    { { 'S', 0 },
      { 'W', 0, 0, 8 }, { 'W', 0, 100, 8 }, { 'W', 0, 200, 8 }, { 'W', 0, 300, 8 },
      { 'W', 0, 400, 8 }, { 'W', 0, 500, 8 }, { 'W', 0, 600, 8 }, { 'W', 0, 700, 8 },
      { 'W', 0, 800, 8 }, { 'W', 0, 900, 8 }, { 'W', 0, 1000, 8 }, { 'W', 0, 1100, 8 },
      { 'W', 0, 1200, 8 }, { 'W', 0, 1300, 8 }, { 'W', 0, 1400, 8 }, { 'W', 0, 1500, 8 },
      { 'W', 0, 1600, 8 }, { 'W', 0, 1700, 8 }, { 'W', 0, 1800, 8 }, { 'W', 0, 1900, 8 },
      { 'W', 0, 2000, 8 }, { 'W', 0, 2100, 8 }, { 'W', 0, 2200, 8 }, { 'W', 0, 2300, 8 },
      { 'W', 0, 2400, 8 }, { 'W', 0, 2500, 8 }, { 'W', 0, 2600, 8 }, { 'W', 0, 2700, 8 },
      { 'W', 0, 2800, 8 }, { 'W', 0, 2900, 8 }, { 'W', 0, 3000, 8 }, { 'W', 0, 3100, 8 },
      { 'W', 0, 3200, 8 }, { 'F', 0 } }, 35,
    0, 0, 33, NULL, 1, 0 },
  { "none/plug-limit-size", "none", 128,
    { { 'S', 0 }, { 'W', 0, 0, 256 }, { 'W', 0, 1000, 8 }, { 'F', 0 } }, 4,
    0, 0, 2, "P U D:W0+256 P U D:W1000+8 ", 1, 0 },
  /* A task that sleeps for a request flushes its plug (UT). */
  { "none/sleep-flushes", "none", 4,
    { { 'S', 0 }, { 'R', 0, 0, 8 }, { 'R', 0, 100, 8 }, { 'R', 0, 200, 8 }, { 'R', 0, 300, 8 },
      { 'R', 0, 400, 8, TRUE } }, 6,
    0, 0, 5, "P S UT D:R0+8 D:R100+8 D:R200+8 D:R300+8 D:R400+8 ", 0, 1 },
};

static void
run_plug_case (gconstpointer data)
{
  const PlugCase *c = data;
  Fixture f;
  fixture_setup (&f, c->sched, NULL, c->nr_requests, 1024);
  SimPlug plugs[N_TASKS];
  memset (plugs, 0, sizeof plugs);
  SimBioWaiter waiter = { .resume = resumed, .resume_data = &f };
  sim_list_init (&waiter.link);
  for (guint i = 0; i < c->n_steps; i++)
    {
      const Step *st = &c->steps[i];
      SimIoContext *tioc = &task_iocs[st->task];
      switch (st->what)
        {
        case 'S':
          sim_queue_start_plug (f.q, &plugs[st->task], tioc);
          break;
        case 'F':
          sim_queue_finish_plug (f.q, &plugs[st->task]);
          break;
        case 'U':
          sim_queue_unplug (f.q, tioc);
          break;
        case 'R':
        case 'W':
          {
            SimBio *bio = sim_queue_bio_alloc (f.q);
            bio->sector = st->sector;
            bio->nr_sectors = st->nr;
            bio->op = st->what == 'R' ? SIM_OP_READ : SIM_OP_WRITE;
            bio->flags = st->what == 'R' ? SIM_BIO_SYNC : 0;
            bio->ioc = tioc;
            bio->end_io = bio_done;
            bio->end_io_data = &f;
            gboolean queued = sim_queue_submit_bio (f.q, bio, st->sleeps ? &waiter : NULL);
            g_assert_cmpint (queued, ==, !st->sleeps);
            break;
          }
        default:
          g_assert_not_reached ();
        }
    }
  sim_run_until (f.sim, SIM_TIME_NEVER);
  const SimQueueCounters *k = &f.q->counters;
  g_test_message ("%s: %s", c->name, f.events->str);
  g_assert_cmpuint (k->back_merges + k->front_merges + k->request_merges, ==, c->merges);
  g_assert_cmpuint (k->plug_merges, ==, c->plug_merges);
  g_assert_cmpuint (k->requests, ==, c->requests);
  g_assert_cmpuint (k->unplugs_thresh, ==, c->unplugs_thresh);
  g_assert_cmpuint (k->unplugs_timer, ==, c->unplugs_timer);
  if (c->events)
    g_assert_cmpstr (f.events->str, ==, c->events);
  guint expected_bios = 0;
  for (guint i = 0; i < c->n_steps; i++)
    expected_bios += c->steps[i].what == 'R' || c->steps[i].what == 'W';
  g_assert_cmpuint (f.completed_bios, ==, expected_bios);
  g_assert_null (f.q->current_plug);
  fixture_teardown (&f);
}

/* A submitter woken inside another task's plug section: task 0's bio
 * merges two queued requests into one, the freed request wakes task 2,
 * and task 2's resume runs task 3's whole plug section at once, nested in
 * task 0's.  Task 0's plug must be current again afterwards (its next
 * request still gathers there), and every section ends with no plug
 * current. */
typedef struct {
  Fixture *f;
  SimPlug  plug;
} Nested;

static void
nested_resume (Sim *sim, gpointer data, SimTime now)
{
  Nested *n = data;
  n->f->resumed = TRUE;
  sim_queue_start_plug (n->f->q, &n->plug, &task_iocs[3]);
  SimBio *bio = sim_queue_bio_alloc (n->f->q);
  *bio = (SimBio) { .sector = 24, .nr_sectors = 8, .op = SIM_OP_READ, .flags = SIM_BIO_SYNC,
                    .ioc = &task_iocs[3], .end_io = bio_done, .end_io_data = n->f };
  g_assert_true (sim_queue_submit_bio (n->f->q, bio, NULL));
  sim_queue_finish_plug (n->f->q, &n->plug);
}

static gboolean
submit_task (Fixture *f, guint task, guint64 sector, SimBioWaiter *waiter)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  *bio = (SimBio) { .sector = sector, .nr_sectors = 8, .op = SIM_OP_READ, .flags = SIM_BIO_SYNC,
                    .ioc = &task_iocs[task], .end_io = bio_done, .end_io_data = f };
  return sim_queue_submit_bio (f->q, bio, waiter);
}

static void
test_plug_nested_wakeup (void)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", NULL, 5, 1024);
  g_assert_true (submit_task (&f, 1, 100000, NULL));   /* on the device */
  g_assert_true (submit_task (&f, 1, 0, NULL));
  g_assert_true (submit_task (&f, 1, 16, NULL));
  g_assert_true (submit_task (&f, 1, 50000, NULL));
  g_assert_true (submit_task (&f, 1, 60000, NULL));    /* the pool is full */
  Nested n = { .f = &f };
  SimBioWaiter waiter = { .resume = nested_resume, .resume_data = &n };
  sim_list_init (&waiter.link);
  g_assert_false (submit_task (&f, 2, 90000, &waiter));
  SimPlug plug0 = { 0 };
  sim_queue_start_plug (f.q, &plug0, &task_iocs[0]);
  /* 8 back-merges into 0, which then absorbs 16: a request is freed. */
  g_assert_true (submit_task (&f, 0, 8, NULL));
  g_assert_true (f.resumed);
  g_assert_cmpuint (f.q->counters.request_merges, ==, 1);
  /* Task 3's bio at 24 merged into the grown request, in the scheduler. */
  g_assert_cmpuint (f.q->counters.back_merges, ==, 2);
  g_assert_true (f.q->current_plug == &plug0);
  g_assert_null (n.plug.prev);
  sim_queue_finish_plug (f.q, &plug0);
  g_assert_null (f.q->current_plug);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.completed_bios, ==, 8);
  fixture_teardown (&f);
}

/* ---- the 4-thread interleaved O_DIRECT reader as a scenario --------------
 *
 * Issue 14's measurement: 4 threads reading interleaved adjacent 128 KiB
 * chunks of one region with O_DIRECT, one read at a time each.  On a
 * device that serves one request at a time, three reads wait while one
 * is served.  Under none they never merge (each task's plug holds its one
 * request; none has no scheduler queue to merge in): one request per read.
 * The schedulers that hold the waiting requests, mq-deadline and the
 * legacy deadline, merge across threads there, as the kernel's do while
 * the device is busy. */

typedef struct {
  const char *sched;
  gboolean    cross_task_merges;
} ReaderCase;

static const ReaderCase reader_cases[] = {
  { "none", FALSE },
  { "mq-deadline", TRUE },
  { "deadline", TRUE },
};

static void
run_reader_case (gconstpointer data)
{
  const ReaderCase *c = data;
  g_autofree char *text = g_strdup_printf (
    "[sim]\nseed = 1\nhz = 1000\nsched = %s\n"
    "[device d]\nkind = fixed\noverhead = 100us\nbandwidth = 1000MB/s\nqueue_depth = 1\n"
    "[process r]\ndevice = d\nop = read\npattern = sequential\nstream = interleaved\n"
    "threads = 4\nio = direct\nbs = 128KiB\nsize = 32MiB\n", c->sched);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "four-readers", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  const SimDeviceResult *d = g_ptr_array_index (r->devices, 0);
  guint64 ios = 0;
  for (guint i = 0; i < r->processes->len; i++)
    ios += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->ios;
  g_test_message ("%s: %" G_GUINT64_FORMAT " reads, %" G_GUINT64_FORMAT " requests, %"
                  G_GUINT64_FORMAT " merges", c->sched, ios, d->counters.requests, d->merges);
  g_assert_cmpuint (ios, ==, 256);
  g_assert_cmpuint (d->counters.plug_merges, ==, 0);
  if (c->cross_task_merges)
    {
      g_assert_cmpuint (d->merges, >, 0);
      g_assert_cmpuint (d->counters.requests + d->merges, ==, ios);
    }
  else
    {
      g_assert_cmpuint (d->merges, ==, 0);
      g_assert_cmpuint (d->counters.requests, ==, ios);
    }
}

/* 2.6's congestion-off threshold: nr_requests - nr_requests/8 -
 * nr_requests/16 - 1 (at least 1) allocated requests of a direction; a
 * queue below it wakes congestion_wait sleepers as it frees one (the
 * freed hook is called for every freed request). */
static void
count_freed (gpointer data, SimRequestQueue *q, SimOp op)
{
  guint *n = data;
  n[op]++;
  n[2] += op == SIM_OP_WRITE && sim_queue_congestion_off (q, op);
}

static void
test_congestion_off (void)
{
  static const struct { guint nr_requests, off; } cases[] = {
    { 128, 103 }, { 8, 6 }, { 4, 3 }, { 2, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Fixture f;
      fixture_setup (&f, "noop", NULL, cases[i].nr_requests, 1024);
      guint freed[3] = { 0, 0, 0 };
      f.q->freed_hook = count_freed;
      f.q->freed_hook_data = freed;
      SimBioWaiter waiter = { 0 };
      sim_list_init (&waiter.link);
      for (guint k = 0; k < cases[i].nr_requests; k++)
        {
          g_assert_cmpuint (f.q->rq_count[SIM_OP_WRITE], ==, k);
          g_assert_true (sim_queue_congestion_off (f.q, SIM_OP_WRITE) == (k < cases[i].off));
          /* Far apart: no merge, one request each. */
          g_assert_true (submit (&f, SIM_OP_WRITE, (guint64) k * 4096, 8, &waiter));
        }
      g_assert_false (sim_queue_congestion_off (f.q, SIM_OP_WRITE));
      g_assert_true (sim_queue_congestion_off (f.q, SIM_OP_READ));
      sim_queue_unplug (f.q, &ioc);
      sim_run_until (f.sim, SIM_TIME_NEVER);
      /* Every request freed once; below the threshold after the free for
       * the last off of them. */
      g_assert_cmpuint (freed[SIM_OP_WRITE], ==, cases[i].nr_requests);
      g_assert_cmpuint (freed[SIM_OP_READ], ==, 0);
      g_assert_cmpuint (freed[2], ==, cases[i].off);
      fixture_teardown (&f);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/queue/back-and-request-merge", test_back_and_request_merge);
  g_test_add_func ("/sim/queue/front-merge", test_front_merge_deadline_only);
  g_test_add_func ("/sim/queue/max-sectors", test_max_sectors);
  g_test_add_func ("/sim/queue/plugging", test_unplug_threshold_and_timer);
  g_test_add_func ("/sim/queue/pool-blocks", test_pool_blocks_submitter);
  g_test_add_func ("/sim/queue/congestion-off", test_congestion_off);
  for (guint i = 0; i < G_N_ELEMENTS (merge_after_wait_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/queue/merge-after-wait/%s",
                                               merge_after_wait_cases[i].name);
      g_test_add_data_func (path, &merge_after_wait_cases[i], test_merge_after_wait);
    }
  g_test_add_func ("/sched/deadline/writes-starved", test_deadline_writes_starved);
  g_test_add_func ("/sched/deadline/expiry", test_deadline_expiry);
  g_test_add_func ("/sched/deadline/hz", test_hz_truncation);
  g_test_add_func ("/sched/deadline/bad-tunable", test_bad_tunable);
  for (guint i = 0; i < G_N_ELEMENTS (plug_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/queue/plug/%s", plug_cases[i].name);
      g_test_add_data_func (path, &plug_cases[i], run_plug_case);
    }
  g_test_add_func ("/sim/queue/plug/nested-wakeup", test_plug_nested_wakeup);
  for (guint i = 0; i < G_N_ELEMENTS (reader_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/queue/four-direct-readers/%s",
                                               reader_cases[i].sched);
      g_test_add_data_func (path, &reader_cases[i], run_reader_case);
    }
  return g_test_run ();
}
