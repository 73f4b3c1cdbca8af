/* test-sim-queue.c — request queue mechanics (merging, max_sectors, the
 * request pool blocking its submitter, plugging) and deadline's rules
 * (writes_starved, expiry between batches), driven bio by bio against a
 * fixed-time device. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/queue/back-and-request-merge", test_back_and_request_merge);
  g_test_add_func ("/sim/queue/front-merge", test_front_merge_deadline_only);
  g_test_add_func ("/sim/queue/max-sectors", test_max_sectors);
  g_test_add_func ("/sim/queue/plugging", test_unplug_threshold_and_timer);
  g_test_add_func ("/sim/queue/pool-blocks", test_pool_blocks_submitter);
  g_test_add_func ("/sched/deadline/writes-starved", test_deadline_writes_starved);
  g_test_add_func ("/sched/deadline/expiry", test_deadline_expiry);
  g_test_add_func ("/sched/deadline/hz", test_hz_truncation);
  g_test_add_func ("/sched/deadline/bad-tunable", test_bad_tunable);
  return g_test_run ();
}
