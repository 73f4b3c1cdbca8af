/* test-sched-mq.c — the blk-mq schedulers none, mq-deadline and kyber
 * (Linux 6.18 rules, ../shared/reference/kernel-algorithms.md §5), driven
 * bio by bio against a fixed-time device, with dispatch orders and
 * --trace-sched decisions computed by hand from the kernel's rules. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/sched/sched-mq.h"

/* 20 ms per request, one at a time, unless a test says otherwise. */
#define SLOW_DEVICE "[device]\nkind = fixed\noverhead = 20ms\nbandwidth = 1000MB/s\n"

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SchedQueue      *e;
  GString         *events;     /* "R1000 W50000 ..." in issue order */
  GString         *log;        /* --trace-sched lines */
  gboolean         times;      /* add "@ms" to events */
  guint            completed_bios;
  /* kyber: in flight per domain, and the worst seen against the depth */
  guint            in_flight[SCHED_KYBER_N_DOMAINS];
  guint            max_in_flight[SCHED_KYBER_N_DOMAINS];
  gboolean         token_violation;
} Fixture;

static void
record (gpointer data, const TraceRecord *rec)
{
  Fixture *f = data;
  SchedKyberDomain d = (rec->rwbs & TRACE_RWBS_WRITE) ? SCHED_KYBER_WRITE : SCHED_KYBER_READ;
  if (rec->action == TRACE_ACT_COMPLETE)
    {
      g_assert_cmpuint (f->in_flight[d], >, 0);
      f->in_flight[d]--;
      return;
    }
  if (rec->action != TRACE_ACT_ISSUE)
    return;
  f->in_flight[d]++;
  f->max_in_flight[d] = MAX (f->max_in_flight[d], f->in_flight[d]);
  if (f->e->ops == &sched_kyber_ops
      && (f->in_flight[d] > sched_kyber_domain_tokens_used (f->e, d)
          || sched_kyber_domain_tokens_used (f->e, d) > sched_kyber_domain_depth (f->e, d)))
    f->token_violation = TRUE;
  g_string_append_printf (f->events, "%c%" G_GUINT64_FORMAT,
                          (rec->rwbs & TRACE_RWBS_WRITE) ? 'W' : 'R', rec->sector);
  if (f->times)
    g_string_append_printf (f->events, "@%" G_GINT64_FORMAT, rec->time_ns / SIM_NS_PER_MS);
  g_string_append_c (f->events, ' ');
}

static void
sched_log_sink (gpointer data, SimTime now_ns, const char *device, const char *sched,
                const char *message)
{
  Fixture *f = data;
  g_string_append_printf (f->log, "%s\n", message);
}

static void
fixture_setup_full (Fixture *f, const char *sched, const char *tunables, guint nr_requests,
                    const char *device, guint hz)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, hz);
  limits.nr_requests = nr_requests;
  limits.max_sectors = 1024;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", device, &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched %s]\n%s", sched, tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  g_autofree char *group = g_strdup_printf ("sched %s", sched);
  f->e = sched_queue_new (sched_ops_lookup (sched), f->q, f->sim, hz, kf, group, &error);
  g_assert_no_error (error);
  g_assert_true (f->e->ops->flags & SCHED_F_MQ || strcmp (sched, "deadline") == 0);
  f->log = g_string_new (NULL);
  f->e->log = sched_log_sink;
  f->e->log_data = f;
  sim_queue_set_elevator (f->q, f->e);
  f->events = g_string_new (NULL);
  sim_queue_set_trace (f->q, record, f);
}

static void
fixture_setup (Fixture *f, const char *sched, const char *tunables)
{
  fixture_setup_full (f, sched, tunables, 128, SLOW_DEVICE, 1000);
}

static void
check_invariants (Fixture *f)
{
  if (f->e->ops == &sched_mq_deadline_ops)
    g_assert_true (sched_mq_deadline_check_invariants (f->e));
  else if (f->e->ops == &sched_kyber_ops)
    g_assert_true (sched_kyber_check_invariants (f->e));
}

/* Run until the work runs out; everything must have left the scheduler. */
static void
run_to_end (Fixture *f)
{
  sim_run_until (f->sim, SIM_TIME_NEVER);
  g_assert_true (f->e->ops->queue_empty (f->e));
  g_assert_cmpuint (f->q->in_flight, ==, 0);
  g_assert_cmpuint (sim_queue_requests_allocated (f->q), ==, 0);
  g_assert_cmpuint (f->q->nr_sorted, ==, 0);
  g_assert_cmpuint (f->q->counters.completed, ==, f->q->counters.dispatched);
  check_invariants (f);
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->events, TRUE);
  g_string_free (f->log, TRUE);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Fixture *f = bio->end_io_data;
  f->completed_bios++;
}

static SimIoContext ioc_be = { .pid = 1, .comm = "be", .ioprio_class = 2, .ioprio_level = 4,
                               .nr_tasks = 1 };
static SimIoContext ioc_rt = { .pid = 2, .comm = "rt", .ioprio_class = 1, .ioprio_level = 4,
                               .nr_tasks = 1 };
static SimIoContext ioc_idle = { .pid = 3, .comm = "idle", .ioprio_class = 3,
                                 .ioprio_level = 7, .nr_tasks = 1 };

static SimBio *
make_bio (Fixture *f, SimOp op, guint64 sector, guint32 nr, gboolean sync, SimIoContext *ioc)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = op;
  bio->flags = sync ? SIM_BIO_SYNC : 0;
  bio->ioc = ioc;
  bio->end_io = bio_done;
  bio->end_io_data = f;
  return bio;
}

static void
submit_ioc (Fixture *f, SimOp op, guint64 sector, gboolean sync, SimIoContext *ioc)
{
  g_assert_true (sim_queue_submit_bio (f->q, make_bio (f, op, sector, 8, sync, ioc), NULL));
  check_invariants (f);
}

static void
submit (Fixture *f, SimOp op, guint64 sector)
{
  submit_ioc (f, op, sector, TRUE, &ioc_be);
}

/* ---- closed-loop streams: each completion submits the next bio ---------- */

typedef struct {
  Fixture      *f;
  SimOp         op;
  gboolean      sync;
  SimIoContext *ioc;
  guint64       sector;
  SimTime       stop_ns;      /* no new bio at or after this time */
} Stream;

static void stream_done (Sim *sim, SimBio *bio, SimTime now);

static void
stream_submit (Stream *s)
{
  SimBio *bio = make_bio (s->f, s->op, s->sector, 8, s->sync, s->ioc);
  bio->end_io = stream_done;
  bio->end_io_data = s;
  s->sector += 1000;
  g_assert_true (sim_queue_submit_bio (s->f->q, bio, NULL));
}

static void
stream_done (Sim *sim, SimBio *bio, SimTime now)
{
  Stream *s = bio->end_io_data;
  s->f->completed_bios++;
  if (now < s->stop_ns)
    stream_submit (s);
}

static void
stream_start (Stream *s, Fixture *f, SimOp op, gboolean sync, SimIoContext *ioc,
              guint64 sector, SimTime stop_ns)
{
  *s = (Stream) { f, op, sync, ioc, sector, stop_ns };
  stream_submit (s);
}

/* ---- none ----------------------------------------------------------------- */

static void
test_none_fifo (void)
{
  Fixture f;
  fixture_setup (&f, "none", NULL);
  /* The first goes at once (blk-mq has no queue plug); the rest keep
   * submission order whatever their sectors and directions. */
  submit (&f, SIM_OP_READ, 5000);
  submit (&f, SIM_OP_READ, 3000);
  submit (&f, SIM_OP_WRITE, 9000);
  submit (&f, SIM_OP_READ, 1000);
  submit (&f, SIM_OP_WRITE, 2000);
  submit (&f, SIM_OP_READ, 4000);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R5000 R3000 W9000 R1000 W2000 R4000 ");
  fixture_teardown (&f);
}

static void
test_none_merges (void)
{
  Fixture f;
  fixture_setup (&f, "none", NULL);
  submit (&f, SIM_OP_READ, 0);        /* busy device */
  /* Outside a plug none merges nothing: its waiting requests stand for
   * the hardware dispatch list, where blk-mq does not merge. */
  submit (&f, SIM_OP_READ, 100);
  submit (&f, SIM_OP_READ, 108);
  g_assert_cmpuint (f.q->counters.back_merges, ==, 0);
  /* Inside a task's plug the newest plugged request takes a back merge
   * and a front merge (blk_attempt_plug_merge) ... */
  SimPlug plug = { 0 };
  sim_queue_start_plug (f.q, &plug, &ioc_be);
  submit (&f, SIM_OP_READ, 200);
  submit (&f, SIM_OP_READ, 208);
  g_assert_cmpuint (f.q->counters.back_merges, ==, 1);
  submit (&f, SIM_OP_READ, 192);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  /* ... but not another task's bio: it goes to none's list at once,
   * ahead of the plugged request. */
  submit_ioc (&f, SIM_OP_READ, 216, TRUE, &ioc_rt);
  g_assert_cmpuint (f.q->counters.back_merges, ==, 1);
  g_assert_cmpuint (f.q->counters.plug_merges, ==, 2);
  g_assert_cmpuint (f.q->counters.request_merges, ==, 0);
  sim_queue_finish_plug (f.q, &plug);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R0 R100 R108 R216 R192 ");
  fixture_teardown (&f);
}

/* ---- mq-deadline: tunables ------------------------------------------------ */

static SchedQueue *
probe (const SchedOps *ops, guint hz, const char *tunables, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched x]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  return sched_queue_new (ops, NULL, NULL, hz, kf, "sched x", error);
}

static int
tunable (SchedQueue *e, const char *name)
{
  for (const SchedTunable *t = e->ops->tunables; t && t->name; t++)
    if (strcmp (t->name, name) == 0)
      return sched_tunable_get (e, t);
  g_assert_not_reached ();
}

static void
test_mq_deadline_hz (void)
{
  static const struct { guint hz; int read, write, aging; } cases[] = {
    { 1000, 500, 5000, 10000 },
    { 250, 125, 1250, 2500 },
    { 100, 50, 500, 1000 },
    { 300, 150, 1500, 3000 },
    { 24, 12, 120, 240 },
    { 25, 12, 125, 250 },      /* HZ/2 truncates */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SchedQueue) e = probe (&sched_mq_deadline_ops, cases[i].hz, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (tunable (e, "read_expire"), ==, cases[i].read);
      g_assert_cmpint (tunable (e, "write_expire"), ==, cases[i].write);
      g_assert_cmpint (tunable (e, "prio_aging_expire"), ==, cases[i].aging);
      g_assert_cmpint (tunable (e, "fifo_batch"), ==, 16);
      g_assert_cmpint (tunable (e, "writes_starved"), ==, 2);
      g_assert_cmpint (tunable (e, "front_merges"), ==, 1);
      g_assert_cmpint (tunable (e, "async_depth"), ==, 0);
    }

  /* Written values are milliseconds through msecs_to_jiffies (rounded up). */
  g_autoptr (GError) error = NULL;
  g_autoptr (SchedQueue) e = probe (&sched_mq_deadline_ops, 250,
                                    "read_expire = 3\nprio_aging_expire = 1s\n"
                                    "fifo_batch = -4\nasync_depth = 48\n", &error);
  g_assert_no_error (error);
  g_assert_cmpint (tunable (e, "read_expire"), ==, 1);
  g_assert_cmpint (tunable (e, "prio_aging_expire"), ==, 250);
  g_assert_cmpint (tunable (e, "fifo_batch"), ==, 0);    /* clamped like the store */
  g_assert_cmpint (tunable (e, "async_depth"), ==, 48);

  g_autoptr (SchedQueue) bad = probe (&sched_mq_deadline_ops, 1000, "front_merges = yes\n",
                                      &error);
  g_assert_null (bad);
  g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
  g_clear_error (&error);
  g_autoptr (SchedQueue) unknown = probe (&sched_mq_deadline_ops, 1000, "slice_idle = 0\n",
                                          &error);
  g_assert_null (unknown);
  g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
  g_assert_nonnull (strstr (error->message, "prio_aging_expire"));
}

/* ---- mq-deadline: dispatch rules ------------------------------------------ */

static char *
expiry_order (const char *sched, const char *tunables)
{
  Fixture f;
  fixture_setup (&f, sched, tunables);
  submit (&f, SIM_OP_READ, 1000);
  submit (&f, SIM_OP_READ, 500);
  submit (&f, SIM_OP_READ, 2000);
  if (!(f.e->ops->flags & SCHED_F_MQ))
    sim_queue_unplug (f.q, &ioc_be);
  run_to_end (&f);
  char *order = g_strdup (f.events->str);
  fixture_teardown (&f);
  return order;
}

static void
test_mq_deadline_expiry (void)
{
  /* R1000 goes at once (nothing else queued); the next choice comes at its
   * completion, 20.004 ms = jiffy 20.  R500 has expired when its deadline
   * jiffy is <= 20: then it goes before the sector successor R2000. */
  g_autofree char *fresh = expiry_order ("mq-deadline", "fifo_batch = 1\n");
  g_assert_cmpstr (fresh, ==, "R1000 R2000 R500 ");
  g_autofree char *expired = expiry_order ("mq-deadline", "fifo_batch = 1\nread_expire = 10ms\n");
  g_assert_cmpstr (expired, ==, "R1000 R500 R2000 ");
  /* 6.18 counts a deadline equal to jiffies as expired; 2.6 deadline does
   * not (now > deadline). */
  g_autofree char *edge = expiry_order ("mq-deadline", "fifo_batch = 1\nread_expire = 20ms\n");
  g_assert_cmpstr (edge, ==, "R1000 R500 R2000 ");
  g_autofree char *edge26 = expiry_order ("deadline", "fifo_batch = 1\nread_expire = 20ms\n");
  g_assert_cmpstr (edge26, !=, edge);
  /* Within a batch deadlines are not looked at. */
  g_autofree char *batch = expiry_order ("mq-deadline", "read_expire = 10ms\n");
  g_assert_cmpstr (batch, ==, "R1000 R2000 R500 ");
}

static char *
starved_order (const char *tunables, char **log)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", tunables);
  submit (&f, SIM_OP_READ, 1000);     /* dispatched at once */
  submit (&f, SIM_OP_WRITE, 50000);
  submit (&f, SIM_OP_READ, 3000);
  submit (&f, SIM_OP_WRITE, 70000);
  submit (&f, SIM_OP_READ, 2000);
  submit (&f, SIM_OP_WRITE, 60000);
  submit (&f, SIM_OP_READ, 4000);
  submit (&f, SIM_OP_READ, 5000);
  run_to_end (&f);
  char *order = g_strdup (f.events->str);
  if (log)
    *log = g_strdup (f.log->str);
  fixture_teardown (&f);
  return order;
}

static void
test_mq_deadline_writes_starved (void)
{
  /* fifo_batch = 1: every choice is a new batch.  Reads win while starved
   * counts 0 -> 1 -> 2; the third choice (2 >= writes_starved) is a write,
   * from the write FIFO head; then two more read batches, then writes in
   * sector order from latest_pos. */
  g_autofree char *log = NULL;
  g_autofree char *order = starved_order ("fifo_batch = 1\n", &log);
  g_assert_cmpstr (order, ==, "R1000 R2000 R3000 W50000 R4000 R5000 W60000 W70000 ");
  g_assert_nonnull (strstr (log, "batch_start dir=write prio=be sector=50000 expired=0 starved=0\n"));
  g_assert_nonnull (strstr (log, "batch_start dir=read prio=be sector=2000 expired=0 starved=1\n"));
  /* writes_starved = 0: writes win every choice while any wait. */
  g_autofree char *eager = starved_order ("fifo_batch = 1\nwrites_starved = 0\n", NULL);
  g_assert_cmpstr (eager, ==, "R1000 W50000 W60000 W70000 R2000 R3000 R4000 R5000 ");
}

static void
test_mq_deadline_fifo_batch (void)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", "fifo_batch = 3\nwrites_starved = 0\n");
  submit (&f, SIM_OP_READ, 1000);
  for (guint i = 2; i <= 6; i++)
    submit (&f, SIM_OP_READ, i * 1000);
  for (guint i = 10; i <= 13; i++)
    submit (&f, SIM_OP_WRITE, i * 1000);
  run_to_end (&f);
  /* Three reads (the batch goes on although writes wait), three writes,
   * then the batch is over: writes win again (writes_starved = 0) and
   * carry on from latest_pos; then the reads. */
  g_assert_cmpstr (f.events->str, ==,
                   "R1000 R2000 R3000 W10000 W11000 W12000 W13000 R4000 R5000 R6000 ");
  fixture_teardown (&f);
}

static void
test_mq_deadline_prio_classes (void)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", NULL);
  submit_ioc (&f, SIM_OP_READ, 900000, TRUE, &ioc_be);   /* keeps the device busy */
  submit_ioc (&f, SIM_OP_READ, 100, TRUE, &ioc_idle);
  submit_ioc (&f, SIM_OP_READ, 200, TRUE, &ioc_be);
  submit_ioc (&f, SIM_OP_READ, 300, TRUE, &ioc_rt);
  submit_ioc (&f, SIM_OP_READ, 400, TRUE, &ioc_idle);
  submit_ioc (&f, SIM_OP_READ, 500, TRUE, &ioc_be);
  submit_ioc (&f, SIM_OP_READ, 600, TRUE, &ioc_rt);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R900000 R300 R600 R200 R500 R100 R400 ");
  fixture_teardown (&f);

  /* A level that owns a request in the driver blocks the lower levels even
   * with room on the device: BE waits for the RT read to complete. */
  fixture_setup_full (&f, "mq-deadline", NULL, 128,
                      SLOW_DEVICE "queue_depth = 2\nparallelism = 2\n", 1000);
  f.times = TRUE;
  submit_ioc (&f, SIM_OP_READ, 300, TRUE, &ioc_rt);
  submit_ioc (&f, SIM_OP_READ, 200, TRUE, &ioc_be);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R300@0 R200@20 ");
  fixture_teardown (&f);

  /* Without RT the same two BE reads share the device. */
  fixture_setup_full (&f, "mq-deadline", NULL, 128,
                      SLOW_DEVICE "queue_depth = 2\nparallelism = 2\n", 1000);
  f.times = TRUE;
  submit_ioc (&f, SIM_OP_READ, 300, TRUE, &ioc_be);
  submit_ioc (&f, SIM_OP_READ, 200, TRUE, &ioc_be);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R300@0 R200@0 ");
  fixture_teardown (&f);
}

/* Two synchronous RT streams keep an RT request queued at every choice
 * until 200 ms (one alone would not: the core refills the device before
 * the woken stream submits again); one BE read waits. */
static char *
aging_order (const char *tunables, char **log)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", tunables);
  f.times = TRUE;
  Stream rt, rt2;
  stream_start (&rt, &f, SIM_OP_READ, TRUE, &ioc_rt, 0, 200 * SIM_NS_PER_MS);
  stream_start (&rt2, &f, SIM_OP_READ, TRUE, &ioc_rt, 1000000, 200 * SIM_NS_PER_MS);
  submit_ioc (&f, SIM_OP_READ, 5000000, TRUE, &ioc_be);
  run_to_end (&f);
  char *order = g_strdup (f.events->str);
  if (log)
    *log = g_strdup (f.log->str);
  fixture_teardown (&f);
  return order;
}

static void
test_mq_deadline_prio_aging (void)
{
  /* prio_aging_expire = 100 ms: the BE read entered at jiffy 0; at the
   * fifth RT completion (100.02 ms, jiffy 100) it is no longer "started
   * after" now - 100 and aging serves it before the waiting RT read.  The
   * two RT streams alternate on the device. */
  g_autofree char *log = NULL;
  g_autofree char *aged = aging_order ("prio_aging_expire = 100ms\n", &log);
  g_test_message ("aged: %s", aged);
  g_assert_true (g_str_has_prefix (aged, "R0@0 R1000000@20 R1000@40 R1001000@60 R2000@80 "
                                         "R5000000@100 R3000@120 "));
  g_assert_nonnull (strstr (log, "prio_aged prio=be dir=read sector=5000000 waited_ms=100\n"));
  /* With the default 10 s it waits for the whole RT streams: 11 reads, the
   * last submitted at the 180.04 ms completion. */
  g_autofree char *log10 = NULL;
  g_autofree char *strict = aging_order (NULL, &log10);
  g_test_message ("strict: %s", strict);
  g_assert_true (g_str_has_suffix (strict, "R4000@160 R1004000@180 R5000@200 R5000000@220 "));
  g_assert_null (strstr (log10, "prio_aged"));
}

static void
test_mq_deadline_async_depth (void)
{
  static const guint64 sectors[] = { 10000, 90000, 20000, 80000, 30000, 70000 };
  /* Without a limit: 10000 goes at once, then one ascending sweep. */
  Fixture f;
  fixture_setup (&f, "mq-deadline", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (sectors); i++)
    submit_ioc (&f, SIM_OP_WRITE, sectors[i], FALSE, &ioc_be);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "W10000 W20000 W30000 W70000 W80000 W90000 ");
  g_assert_null (strstr (f.log->str, "tag_wait"));
  fixture_teardown (&f);

  /* async_depth = 2: 10000 (on the device) and 90000 hold the two tags; the
   * others wait outside the scheduler and enter one per completion, just
   * before the next choice, so the sweep sees them late. */
  fixture_setup (&f, "mq-deadline", "async_depth = 2\n");
  for (guint i = 0; i < G_N_ELEMENTS (sectors); i++)
    submit_ioc (&f, SIM_OP_WRITE, sectors[i], FALSE, &ioc_be);
  g_autoptr (GString) dump = g_string_new (NULL);
  f.e->ops->dump (f.e, dump);
  g_assert_nonnull (strstr (dump->str, "tags_held=2 tag_waiting=4"));
  /* Sync reads are never limited. */
  submit_ioc (&f, SIM_OP_READ, 500, TRUE, &ioc_be);
  g_string_truncate (dump, 0);
  f.e->ops->dump (f.e, dump);
  g_assert_nonnull (strstr (dump->str, "tags_held=2 tag_waiting=4"));
  g_assert_nonnull (strstr (dump->str, "be=1r/1w/3owned"));
  run_to_end (&f);
  g_assert_cmpstr (f.log->str, ==,
                   "tag_wait sector=20000 held=2\ntag_wait sector=80000 held=2\n"
                   "tag_wait sector=30000 held=2\ntag_wait sector=70000 held=2\n"
                   "batch_start dir=read prio=be sector=500 expired=0 starved=1\n"
                   "batch_start dir=write prio=be sector=30000 expired=0 starved=0\n");
  /* Each completion lets one waiter in just before the next choice; the
   * write batch goes on from latest_pos: 20000, 80000 (in when 20000
   * completed), 90000; then the read; 30000 and 70000 came in late. */
  g_assert_cmpstr (f.events->str, ==, "W10000 W20000 W80000 W90000 R500 W30000 W70000 ");
  fixture_teardown (&f);
}

static void
test_mq_deadline_merges (void)
{
  Fixture f;
  fixture_setup (&f, "mq-deadline", NULL);
  submit (&f, SIM_OP_READ, 0);
  submit (&f, SIM_OP_READ, 100);
  submit (&f, SIM_OP_READ, 500);
  submit (&f, SIM_OP_READ, 492);     /* front merge through the sort tree */
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  submit (&f, SIM_OP_READ, 116);
  submit (&f, SIM_OP_READ, 108);     /* back merge, then request merge with 116 */
  g_assert_cmpuint (f.q->counters.request_merges, ==, 1);
  /* Another priority: no bio merge, no request merge. */
  submit_ioc (&f, SIM_OP_READ, 124, TRUE, &ioc_idle);
  submit_ioc (&f, SIM_OP_READ, 84, TRUE, &ioc_rt);
  g_assert_cmpuint (f.q->counters.back_merges, ==, 1);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  run_to_end (&f);
  g_assert_cmpstr (f.events->str, ==, "R0 R84 R100 R492 R124 ");
  fixture_teardown (&f);
}

/* ---- kyber ------------------------------------------------------------------ */

static void
test_kyber_domains (void)
{
  SimRequest rq;
  memset (&rq, 0, sizeof rq);
  rq.op = SIM_OP_READ;
  rq.sync = TRUE;
  g_assert_cmpint (sched_kyber_rq_domain (&rq), ==, SCHED_KYBER_READ);
  rq.sync = FALSE;        /* readahead */
  g_assert_cmpint (sched_kyber_rq_domain (&rq), ==, SCHED_KYBER_READ);
  rq.op = SIM_OP_WRITE;
  g_assert_cmpint (sched_kyber_rq_domain (&rq), ==, SCHED_KYBER_WRITE);
  rq.sync = TRUE;         /* O_DIRECT */
  g_assert_cmpint (sched_kyber_rq_domain (&rq), ==, SCHED_KYBER_WRITE);

  g_autoptr (GError) error = NULL;
  g_autoptr (SchedQueue) e = probe (&sched_kyber_ops, 1000, "read_lat_nsec = 500us\n", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sched_kyber_domain_depth (e, SCHED_KYBER_READ), ==, 256);
  g_assert_cmpuint (sched_kyber_domain_depth (e, SCHED_KYBER_WRITE), ==, 128);
  g_assert_cmpuint (sched_kyber_domain_depth (e, SCHED_KYBER_DISCARD), ==, 64);
  g_assert_cmpuint (sched_kyber_domain_depth (e, SCHED_KYBER_OTHER), ==, 16);
  g_autoptr (SchedQueue) bad = probe (&sched_kyber_ops, 1000, "read_lat_nsec = fast\n", &error);
  g_assert_null (bad);
  g_assert_nonnull (error);
}

/* Round robin: batches of 16 reads and 8 writes, FIFO within a domain. */
static void
test_kyber_batches (void)
{
  Fixture f;
  fixture_setup (&f, "kyber", NULL);
  for (guint i = 0; i < 20; i++)
    submit (&f, SIM_OP_READ, 100000 - i * 1000);
  for (guint i = 0; i < 20; i++)
    submit (&f, SIM_OP_WRITE, 500000 + i * 1000);
  run_to_end (&f);
  g_autoptr (GString) expect = g_string_new (NULL);
  for (guint i = 0; i < 16; i++)
    g_string_append_printf (expect, "R%u ", 100000 - i * 1000);
  for (guint i = 0; i < 8; i++)
    g_string_append_printf (expect, "W%u ", 500000 + i * 1000);
  for (guint i = 16; i < 20; i++)
    g_string_append_printf (expect, "R%u ", 100000 - i * 1000);
  for (guint i = 8; i < 20; i++)
    g_string_append_printf (expect, "W%u ", 500000 + i * 1000);
  g_assert_cmpstr (f.events->str, ==, expect->str);
  g_assert_null (strstr (f.log->str, "token_wait"));
  fixture_teardown (&f);
}

/* At the initial depths a deep device gets 256 reads and 128 writes. */
static void
test_kyber_token_limits (void)
{
  Fixture f;
  fixture_setup_full (&f, "kyber", NULL, 512,
                      "[device]\nkind = fixed\noverhead = 10ms\nbandwidth = 1000MB/s\n"
                      "queue_depth = 1024\nparallelism = 1024\n", 1000);
  for (guint i = 0; i < 300; i++)
    submit (&f, SIM_OP_READ, i * 1000);
  for (guint i = 0; i < 200; i++)
    submit (&f, SIM_OP_WRITE, 1000000 + i * 1000);
  g_assert_cmpuint (f.in_flight[SCHED_KYBER_READ], ==, 256);
  g_assert_cmpuint (f.in_flight[SCHED_KYBER_WRITE], ==, 128);
  g_assert_cmpuint (sched_kyber_domain_tokens_used (f.e, SCHED_KYBER_READ), ==, 256);
  g_assert_cmpstr (f.log->str, ==, "token_wait domain=read depth=256\n"
                                   "token_wait domain=write depth=128\n");
  run_to_end (&f);
  g_assert_cmpuint (f.max_in_flight[SCHED_KYBER_READ], ==, 256);
  g_assert_cmpuint (f.max_in_flight[SCHED_KYBER_WRITE], ==, 128);
  g_assert_false (f.token_violation);
  g_assert_cmpuint (sched_kyber_domain_tokens_used (f.e, SCHED_KYBER_READ), ==, 0);
  g_assert_cmpuint (f.completed_bios, ==, 500);
  fixture_teardown (&f);
}

/* The depths a kyber_depth line of @domain set, in order. */
static GArray *
depth_changes (const char *log, const char *domain)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree char *key = g_strdup_printf ("kyber_depth domain=%s depth=", domain);
  for (const char *p = strstr (log, key); p; p = strstr (p + 1, key))
    {
      guint depth = (guint) g_ascii_strtoull (p + strlen (key), NULL, 10);
      g_array_append_val (out, depth);
    }
  return out;
}

static void
test_kyber_scaling (void)
{
  /* 64 closed-loop readers and 8 sync writers on a 1 ms device that can
   * serve everything at once.  write_lat_nsec = 500 us: every write's device
   * latency (1.004 ms) is in the last bucket, so the writes' p90 says
   * "congestion" each window.  Reads (target 20 ms) see 1 ms: bucket 0, so
   * under congestion their depth is cut to (0 + 1)/4 each window: 256 ->
   * 64 -> 16.  The writes' own p99 is bad: their depth would grow, and stays
   * at its maximum 128.  Once reads queue behind their tokens, their
   * total latency grows and the cuts stop.  At 1 s the writers stop (no
   * more congestion) and 192 more readers start: reads queue for their few
   * tokens, their p99 misses the target, and their depth grows again. */
  Fixture f;
  fixture_setup_full (&f, "kyber", "read_lat_nsec = 20ms\nwrite_lat_nsec = 500us\n", 512,
                      "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 1000MB/s\n"
                      "queue_depth = 1024\nparallelism = 1024\n", 1000);
  Stream readers[256], writers[8];
  for (guint i = 0; i < 64; i++)
    stream_start (&readers[i], &f, SIM_OP_READ, TRUE, &ioc_be, i * 10000000ull,
                  3 * SIM_NS_PER_S);
  for (guint i = 0; i < G_N_ELEMENTS (writers); i++)
    stream_start (&writers[i], &f, SIM_OP_WRITE, TRUE, &ioc_be, 1000000000ull + i * 10000000ull,
                  SIM_NS_PER_S);
  sim_run_until (f.sim, SIM_NS_PER_S);
  g_autoptr (GArray) phase1 = depth_changes (f.log->str, "read");
  g_assert_cmpuint (phase1->len, >=, 2);
  g_assert_cmpuint (g_array_index (phase1, guint, 0), ==, 64);
  g_assert_cmpuint (g_array_index (phase1, guint, 1), ==, 16);
  guint low = sched_kyber_domain_depth (f.e, SCHED_KYBER_READ);
  g_assert_cmpuint (low, <=, 16);
  g_assert_null (strstr (f.log->str, "kyber_depth domain=write"));
  g_assert_nonnull (strstr (f.log->str, "kyber_latency domain=write type=io pct=90 bucket=8"));
  for (guint i = 64; i < G_N_ELEMENTS (readers); i++)
    stream_start (&readers[i], &f, SIM_OP_READ, TRUE, &ioc_be, i * 10000000ull,
                  3 * SIM_NS_PER_S);

  run_to_end (&f);
  g_autoptr (GArray) all = depth_changes (f.log->str, "read");
  g_assert_cmpuint (all->len, >, phase1->len);
  g_autoptr (GString) seq = g_string_new (NULL);
  for (guint i = 0; i < all->len; i++)
    g_string_append_printf (seq, " %u", g_array_index (all, guint, i));
  g_test_message ("read depths:%s", seq->str);
  guint high = g_array_index (all, guint, all->len - 1);
  g_assert_cmpuint (high, >, low);
  g_assert_false (f.token_violation);
  g_assert_cmpuint (f.max_in_flight[SCHED_KYBER_WRITE], <=, 8);
  fixture_teardown (&f);
}

static void
test_kyber_async_limit (void)
{
  /* nr_requests = 12: async requests may hold 9 tags (75 %). */
  Fixture f;
  fixture_setup_full (&f, "kyber", NULL, 12, SLOW_DEVICE, 1000);
  for (guint i = 0; i < 11; i++)
    submit_ioc (&f, SIM_OP_WRITE, 1000 + i * 1000, FALSE, &ioc_be);
  g_assert_cmpstr (f.log->str, ==, "tag_wait sector=10000 held=9\ntag_wait sector=11000 held=9\n");
  submit (&f, SIM_OP_WRITE, 100);      /* sync write: not limited */
  g_autoptr (GString) dump = g_string_new (NULL);
  f.e->ops->dump (f.e, dump);
  g_assert_nonnull (strstr (dump->str, "queued=9 tag_waiting=2"));
  run_to_end (&f);
  g_assert_cmpuint (f.completed_bios, ==, 12);
  fixture_teardown (&f);
}

/* ---- every policy --------------------------------------------------------- */

static char *
mixed_run (const char *sched, const char *tunables)
{
  Fixture f;
  fixture_setup_full (&f, sched, tunables, 64,
                      "[device]\nkind = fixed\noverhead = 2ms\nbandwidth = 100MB/s\n"
                      "queue_depth = 4\nparallelism = 2\n", 250);
  Stream s[6];
  stream_start (&s[0], &f, SIM_OP_READ, TRUE, &ioc_rt, 0, 400 * SIM_NS_PER_MS);
  stream_start (&s[1], &f, SIM_OP_READ, TRUE, &ioc_be, 5000, 400 * SIM_NS_PER_MS);
  stream_start (&s[2], &f, SIM_OP_READ, FALSE, &ioc_idle, 77777, 300 * SIM_NS_PER_MS);
  stream_start (&s[3], &f, SIM_OP_WRITE, FALSE, &ioc_be, 900000, 350 * SIM_NS_PER_MS);
  stream_start (&s[4], &f, SIM_OP_WRITE, FALSE, &ioc_be, 901000, 350 * SIM_NS_PER_MS);
  stream_start (&s[5], &f, SIM_OP_WRITE, TRUE, &ioc_rt, 50000000, 250 * SIM_NS_PER_MS);
  for (guint i = 0; i < 40; i++)
    submit_ioc (&f, SIM_OP_WRITE, 2000000 + (i * 7919 % 40) * 8, FALSE, &ioc_be);
  run_to_end (&f);
  g_assert_cmpuint (f.completed_bios, >, 100);
  char *out = g_strdup_printf ("%s|%s", f.events->str, f.log->str);
  fixture_teardown (&f);
  return out;
}

static void
test_determinism (void)
{
  static const char *const cases[][2] = {
    { "none", NULL },
    { "mq-deadline", NULL },
    { "mq-deadline", "async_depth = 3\nprio_aging_expire = 50ms\nfifo_batch = 4\n" },
    { "kyber", NULL },
    { "kyber", "read_lat_nsec = 100us\nwrite_lat_nsec = 1ms\n" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *a = mixed_run (cases[i][0], cases[i][1]);
      g_autofree char *b = mixed_run (cases[i][0], cases[i][1]);
      g_assert_cmpstr (a, ==, b);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sched/none/fifo", test_none_fifo);
  g_test_add_func ("/sched/none/merges", test_none_merges);
  g_test_add_func ("/sched/mq-deadline/hz", test_mq_deadline_hz);
  g_test_add_func ("/sched/mq-deadline/expiry", test_mq_deadline_expiry);
  g_test_add_func ("/sched/mq-deadline/writes-starved", test_mq_deadline_writes_starved);
  g_test_add_func ("/sched/mq-deadline/fifo-batch", test_mq_deadline_fifo_batch);
  g_test_add_func ("/sched/mq-deadline/prio-classes", test_mq_deadline_prio_classes);
  g_test_add_func ("/sched/mq-deadline/prio-aging", test_mq_deadline_prio_aging);
  g_test_add_func ("/sched/mq-deadline/async-depth", test_mq_deadline_async_depth);
  g_test_add_func ("/sched/mq-deadline/merges", test_mq_deadline_merges);
  g_test_add_func ("/sched/kyber/domains", test_kyber_domains);
  g_test_add_func ("/sched/kyber/batches", test_kyber_batches);
  g_test_add_func ("/sched/kyber/token-limits", test_kyber_token_limits);
  g_test_add_func ("/sched/kyber/scaling", test_kyber_scaling);
  g_test_add_func ("/sched/kyber/async-limit", test_kyber_async_limit);
  g_test_add_func ("/sched/mq/determinism", test_determinism);
  return g_test_run ();
}
