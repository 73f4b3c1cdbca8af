/* test-sim-wbt.c — blk-wbt, writeback throttling (sim/sim-wbt.h).
 *
 *  - the arithmetic against values worked out by hand from Linux 6.18
 *    block/blk-rq-qos.c rq_depth_calc_max_depth / scale_up / scale_down
 *    and block/blk-wbt.c calc_wb_limits, rwb_arm_timer, get_limit
 *    (tables: each row says how its value follows from the formula);
 *  - the throttle on a queue with a slow fixed-time device and a reader
 *    that misses the 2 ms target: every write reaching the device finds at
 *    most the current limit of writes there, the limit scales down, and
 *    the writes are not held back with wbt off; O_DIRECT writes are never
 *    throttled; with a write-back cache the writes go out in bursts that
 *    start from an empty device (wbt_rqw_done's limit of 0);
 *  - whole scenarios: a buffered writer next to a reader via a loop
 *    device, with wbt on (capped at the scaled-down depth), wbt_lat_usec = 0
 *    and bfq (not capped), bfq with a hand-set latency (capped unless it is
 *    the current value); an O_DIRECT writer is never tracked; legacy
 *    elevators have none. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-wbt.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/scenario.h"
#include "scenario-trace.h"

#define MS (G_GINT64_CONSTANT (1000000))

/* ---- arithmetic ---------------------------------------------------------- */

/* max_depth = min (16, qd); step s > 0: 1 + ((depth - 1) >> s); step s < 0:
 * 1 + ((depth - 1) << -s), at most 3 * qd / 4; qd 1: 2, or 1 when s > 0. */
static void
test_max_depth (void)
{
  static const struct { guint qd; gint step; guint max; gboolean capped; } rows[] = {
    { 128,  0, 16, FALSE },  /* min (16, 128) */
    { 128,  1,  8, FALSE },  /* 1 + (15 >> 1) = 1 + 7 */
    { 128,  2,  4, FALSE },  /* 1 + (15 >> 2) = 1 + 3 */
    { 128,  3,  2, FALSE },  /* 1 + (15 >> 3) = 1 + 1 */
    { 128,  4,  1, FALSE },  /* 1 + (15 >> 4) = 1 + 0 */
    { 128,  9,  1, FALSE },
    { 128, -1, 31, FALSE },  /* 1 + (15 << 1) */
    { 128, -2, 61, FALSE },  /* 1 + (15 << 2) */
    { 128, -3, 96,  TRUE },  /* 1 + (15 << 3) = 121 > 3 * 128 / 4 = 96 */
    {  32, -1, 24,  TRUE },  /* 31 > 3 * 32 / 4 = 24 */
    {  31,  0, 16, FALSE },  /* disk-7200-sata's NCQ depth */
    {  31, -1, 23,  TRUE },  /* 3 * 31 / 4 = 23 */
    {   4,  0,  4, FALSE },  /* min (16, 4) */
    {   4,  1,  2, FALSE },  /* 1 + (3 >> 1) */
    {   4,  2,  1, FALSE },  /* 1 + (3 >> 2) */
    {   4, -1,  3,  TRUE },  /* 1 + (3 << 1) = 7 > 3 */
    {   1,  0,  2,  TRUE },  /* a depth of one gets two */
    {   1,  1,  1, FALSE },
    {   1, -1,  2,  TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      SimRqDepth rqd = { .queue_depth = rows[i].qd, .default_depth = SIM_WBT_DEF_DEPTH,
                         .scale_step = rows[i].step };
      gboolean capped = sim_rq_depth_calc_max_depth (&rqd);
      g_test_message ("qd %u step %d", rows[i].qd, rows[i].step);
      g_assert_cmpuint (rqd.max_depth, ==, rows[i].max);
      g_assert_cmpint (capped, ==, rows[i].capped);
    }
}

/* wb_normal = (max + 1) / 2, wb_background = (max + 3) / 4; max <= 2: max
 * and 1; a target of 0: both 0. */
static void
test_limits (void)
{
  static const struct { guint max; SimTime lat; guint normal, background; } rows[] = {
    { 16, 2 * MS, 8, 4 },    /* 17 / 2, 19 / 4 */
    {  8, 2 * MS, 4, 2 },    /* 9 / 2, 11 / 4 */
    {  4, 2 * MS, 2, 1 },    /* 5 / 2, 7 / 4 */
    {  3, 2 * MS, 2, 1 },    /* 4 / 2, 6 / 4 */
    {  2, 2 * MS, 2, 1 },
    {  1, 2 * MS, 1, 1 },
    { 31, 2 * MS, 16, 8 },   /* 32 / 2, 34 / 4 */
    { 96, 2 * MS, 48, 24 },  /* 97 / 2, 99 / 4 */
    { 16, 0, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      guint normal = 99, background = 99;
      sim_wbt_calc_limits (rows[i].max, rows[i].lat, &normal, &background);
      g_assert_cmpuint (normal, ==, rows[i].normal);
      g_assert_cmpuint (background, ==, rows[i].background);
    }
  g_assert_cmpint (sim_wbt_default_latency_ns (FALSE), ==, 2 * MS);
  g_assert_cmpint (sim_wbt_default_latency_ns (TRUE), ==, 75 * MS);
}

/* cur_win = (100 ms << 4) / int_sqrt ((step + 1) << 8) at positive steps. */
static void
test_window (void)
{
  static const struct { gint step; SimTime ns; } rows[] = {
    {  0, 100000000 },
    {  1,  72727272 },       /* 1.6e9 / int_sqrt (512) = 1.6e9 / 22 */
    {  2,  59259259 },       /* 1.6e9 / int_sqrt (768) = 1.6e9 / 27 */
    {  3,  50000000 },       /* 1.6e9 / 32 */
    {  4,  45714285 },       /* 1.6e9 / int_sqrt (1280) = 1.6e9 / 35 */
    {  8,  33333333 },       /* 1.6e9 / 48 */
    { -3, 100000000 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_assert_cmpint (sim_wbt_window_ns (SIM_WBT_WINDOW_NS, rows[i].step), ==, rows[i].ns);
}

/* scale_down from step 0 on qd 128 halves towards 1 and then refuses;
 * scale_up goes negative until 3/4 of the queue, then refuses; a hard
 * scale_down from a negative step jumps to 0, a soft one steps by one. */
static void
test_scaling (void)
{
  SimRqDepth rqd = { .queue_depth = 128, .default_depth = SIM_WBT_DEF_DEPTH };
  sim_rq_depth_calc_max_depth (&rqd);
  static const guint down[] = { 8, 4, 2, 1 };
  for (guint i = 0; i < G_N_ELEMENTS (down); i++)
    {
      g_assert_true (sim_rq_depth_scale_down (&rqd, TRUE));
      g_assert_cmpuint (rqd.max_depth, ==, down[i]);
      g_assert_cmpint (rqd.scale_step, ==, (gint) i + 1);
    }
  g_assert_false (sim_rq_depth_scale_down (&rqd, TRUE));
  g_assert_cmpint (rqd.scale_step, ==, 4);

  rqd.scale_step = 0;
  rqd.scaled_max = FALSE;
  sim_rq_depth_calc_max_depth (&rqd);
  static const guint up[] = { 31, 61, 96 };
  for (guint i = 0; i < G_N_ELEMENTS (up); i++)
    {
      g_assert_true (sim_rq_depth_scale_up (&rqd));
      g_assert_cmpuint (rqd.max_depth, ==, up[i]);
    }
  g_assert_true (rqd.scaled_max);
  g_assert_false (sim_rq_depth_scale_up (&rqd));
  g_assert_cmpint (rqd.scale_step, ==, -3);

  SimRqDepth soft = rqd;
  g_assert_true (sim_rq_depth_scale_down (&soft, FALSE));
  g_assert_cmpint (soft.scale_step, ==, -2);
  g_assert_cmpuint (soft.max_depth, ==, 61);
  g_assert_true (sim_rq_depth_scale_down (&rqd, TRUE));
  g_assert_cmpint (rqd.scale_step, ==, 0);
  g_assert_cmpuint (rqd.max_depth, ==, 16);
}

/* ---- the throttle on a queue --------------------------------------------- */

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  guint            writes_at_dev;
  guint            max_writes_at_dev;
  guint            writes_issued;
  guint            d_while_scaled;     /* write D's at step >= 2 */
  guint            refills;            /* write D's onto a busy device, not in a burst */
  guint32          write_flags;        /* of the writer's bios */
  gboolean         check_limit;        /* assert the limit at each write D */
  gboolean         check_bursts;       /* assert WC bursts at each write D */
  SimTime          last_write_d_ns;
  guint            reads_done;
  SimTime          stop_reads_ns;
  SimBioWaiter    *waiters;
} QFix;

static void
qfix_record (gpointer data, const TraceRecord *rec)
{
  QFix *f = data;
  if (!(rec->rwbs & TRACE_RWBS_WRITE))
    return;
  if (rec->action == TRACE_ACT_COMPLETE)
    {
      g_assert_cmpuint (f->writes_at_dev, >, 0);
      f->writes_at_dev--;
      return;
    }
  if (rec->action != TRACE_ACT_ISSUE)
    return;
  guint before = f->writes_at_dev;
  f->writes_at_dev++;
  f->writes_issued++;
  f->max_writes_at_dev = MAX (f->max_writes_at_dev, f->writes_at_dev);
  SimWbt *w = f->q->wbt;
  /* The request took its token as it was allocated, this very instant (none
   * dispatches at once): the writes at the device, itself included, are
   * within the limit that applies now. */
  if (f->check_limit)
    g_assert_cmpuint (f->writes_at_dev, <=, sim_wbt_get_limit (w, f->write_flags));
  if (w->rq_depth.scale_step >= 2)
    f->d_while_scaled++;
  /* wbt_rqw_done with a write-back cache wakes sleepers only once no
   * tracked write is left: a write starts an empty device, or joins the
   * burst that did, at the same instant. */
  if (before > 0 && rec->time_ns != f->last_write_d_ns)
    f->refills++;
  if (f->check_bursts)
    g_assert_true (before == 0 || rec->time_ns == f->last_write_d_ns);
  f->last_write_d_ns = rec->time_ns;
}

static void
write_done (Sim *sim, SimBio *bio, SimTime now)
{
}

static void submit_read (QFix *f);

static void
read_done (Sim *sim, SimBio *bio, SimTime now)
{
  QFix *f = bio->end_io_data;
  f->reads_done++;
  if (now < f->stop_reads_ns)
    submit_read (f);
}

/* A synchronous 4 KiB reader: one read at a time, the next at once. */
static void
submit_read (QFix *f)
{
  static SimIoContext reader = { .pid = 1, .comm = "reader", .ioprio_class = 2, .ioprio_level = 4,
                                 .nr_tasks = 1 };
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = 1000000 + 8 * f->reads_done;
  bio->nr_sectors = 8;
  bio->op = SIM_OP_READ;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &reader;
  bio->end_io = read_done;
  bio->end_io_data = f;
  g_assert_true (sim_queue_submit_bio (f->q, bio, NULL));
}

/* A fixed-time device taking 32 commands (5 ms + 10 ns per byte, one at a
 * time, FIFO), the none elevator, and wbt as @cfg says. */
static void
qfix_setup (QFix *f, const SimWbtConfig *cfg)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  limits.nr_requests = 4096;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", "[device]\nkind = fixed\noverhead = 5ms\n"
                                             "bandwidth = 100MB/s\nqueue_depth = 32\n", &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  SchedQueue *e = sched_queue_new (sched_ops_lookup ("none"), f->q, f->sim, 1000, kf,
                                   "sched none", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (f->q, e);
  sim_queue_init_wbt (f->q, cfg);
  sim_queue_set_trace (f->q, qfix_record, f);
}

static void
qfix_teardown (QFix *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_free (f->waiters);
}

/* @n writes of 512 KiB with @flags at t = 0, each from its own waiter (as
 * the page cache parks them), next to the reader, for @run_ns. */
static void
qfix_run (QFix *f, guint n, guint32 flags, SimTime run_ns)
{
  static SimIoContext writer = { .pid = 2, .comm = "flush", .ioprio_class = 2, .ioprio_level = 4,
                                 .nr_tasks = 1 };
  f->write_flags = flags;
  f->stop_reads_ns = run_ns;
  f->waiters = g_new0 (SimBioWaiter, n);
  submit_read (f);
  for (guint i = 0; i < n; i++)
    {
      SimBio *bio = sim_queue_bio_alloc (f->q);
      bio->sector = (guint64) i * 1024;
      bio->nr_sectors = 1024;
      bio->op = SIM_OP_WRITE;
      bio->flags = flags;
      bio->ioc = &writer;
      bio->end_io = write_done;
      sim_queue_submit_bio (f->q, bio, &f->waiters[i]);
    }
  sim_run_until (f->sim, run_ns);
}

static SimWbtConfig
wbt_config (SimWbtState state, SimTime lat, gboolean write_cache)
{
  SimWbtConfig cfg = { .state = state, .min_lat_ns = lat, .queue_depth = 32,
                       .write_cache = write_cache, .hz = 1000 };
  return cfg;
}

/* Async writes (no flag: wb_normal, or wb_background while reads are
 * about) next to a reader that waits behind them: every read takes longer
 * than 2 ms, so wbt scales down to step 4 (max_depth 1); at every write's
 * issue the writes at the device are within the limit, at most 4
 * (wb_background at step 0: reads are about from the start). */
static void
test_throttle_caps_writes (void)
{
  SimWbtConfig cfg = wbt_config (SIM_WBT_STATE_ON_DEFAULT, 2 * MS, FALSE);
  QFix f;
  qfix_setup (&f, &cfg);
  f.check_limit = TRUE;
  qfix_run (&f, 600, 0, 3000 * MS);
  const SimWbtStats *st = &f.q->wbt->stats;
  g_assert_cmpuint (f.max_writes_at_dev, ==, 4);
  g_assert_cmpuint (st->scale_downs, >=, 3);
  g_assert_cmpint (st->max_step, >=, 2);
  g_assert_cmpuint (st->status[SIM_WBT_LAT_EXCEEDED], >, 0);
  g_assert_cmpuint (f.d_while_scaled, >, 10);
  g_assert_cmpuint (st->tracked, ==, 600);
  g_assert_cmpuint (st->waits, >, 500);
  g_assert_cmpuint (f.writes_issued, >, 50);
  qfix_teardown (&f);
}

/* wbt off (wbt_lat_usec = 0, or bfq's default off): the device's 32
 * commands fill with writes. */
static void
test_throttle_off (void)
{
  static const SimWbtState states[] = { SIM_WBT_STATE_OFF_MANUAL, SIM_WBT_STATE_OFF_DEFAULT };
  for (guint i = 0; i < G_N_ELEMENTS (states); i++)
    {
      SimWbtConfig cfg = wbt_config (states[i], states[i] == SIM_WBT_STATE_OFF_MANUAL ? 0 : 2 * MS,
                                     FALSE);
      QFix f;
      qfix_setup (&f, &cfg);
      qfix_run (&f, 600, 0, 3000 * MS);
      g_assert_cmpuint (f.max_writes_at_dev, ==, 32);
      g_assert_cmpuint (f.q->wbt->stats.tracked, ==, 0);
      g_assert_cmpuint (f.q->wbt->stats.windows, ==, 0);
      qfix_teardown (&f);
    }
}

/* O_DIRECT writes carry REQ_SYNC | REQ_IDLE: never tracked, never held;
 * REQ_SYNC alone (fsync writeback) is tracked with the whole depth. */
static void
test_odirect_not_throttled (void)
{
  SimWbtConfig cfg = wbt_config (SIM_WBT_STATE_ON_DEFAULT, 2 * MS, FALSE);
  QFix f;
  qfix_setup (&f, &cfg);
  qfix_run (&f, 600, SIM_BIO_SYNC | SIM_BIO_IDLE, 3000 * MS);
  g_assert_cmpuint (f.max_writes_at_dev, ==, 32);
  g_assert_cmpuint (f.q->wbt->stats.tracked, ==, 0);
  g_assert_cmpuint (f.q->wbt->stats.waits, ==, 0);
  qfix_teardown (&f);

  qfix_setup (&f, &cfg);
  f.check_limit = TRUE;
  qfix_run (&f, 600, SIM_BIO_SYNC, 3000 * MS);
  g_assert_cmpuint (f.max_writes_at_dev, ==, 16);      /* max_depth at step 0 */
  g_assert_cmpuint (f.q->wbt->stats.tracked, ==, 600);
  qfix_teardown (&f);
}

static void
noop_event (Sim *sim, gpointer subject, gpointer object)
{
}

/* The clock to @t_ns (sim_run_until leaves it alone on an empty queue). */
static void
advance (QFix *f, SimTime t_ns)
{
  sim_schedule_at (f->sim, t_ns, noop_event, NULL, NULL);
  sim_run_until (f->sim, t_ns);
}

/* The flags wbt reads, and get_limit's choice; a read issued puts
 * unflagged writeback on the background limit for 100 ms (close_io). */
static void
test_flags_and_limits (void)
{
  SimWbtConfig cfg = wbt_config (SIM_WBT_STATE_ON_DEFAULT, 2 * MS, FALSE);
  QFix f;
  qfix_setup (&f, &cfg);
  SimWbt *w = f.q->wbt;
  SimBio bio = { .op = SIM_OP_READ, .flags = SIM_BIO_SYNC };
  g_assert_cmpuint (sim_wbt_bio_flags (w, &bio), ==, SIM_WBT_READ);
  bio.op = SIM_OP_WRITE;
  g_assert_cmpuint (sim_wbt_bio_flags (w, &bio), ==, SIM_WBT_TRACKED);
  bio.flags = SIM_BIO_SYNC | SIM_BIO_IDLE;
  g_assert_cmpuint (sim_wbt_bio_flags (w, &bio), ==, 0);
  bio.flags = SIM_BIO_BACKGROUND;
  g_assert_cmpuint (sim_wbt_bio_flags (w, &bio), ==, SIM_WBT_TRACKED);

  /* wbt_init stamped last_issue/last_comp with now (0): close_io holds for
   * HZ / 10 = 100 jiffies. */
  g_assert_cmpuint (sim_wbt_get_limit (w, 0), ==, 4);
  advance (&f, 100 * MS);
  g_assert_cmpuint (sim_wbt_get_limit (w, 0), ==, 8);                  /* wb_normal */
  g_assert_cmpuint (sim_wbt_get_limit (w, SIM_BIO_BACKGROUND), ==, 4); /* wb_background */
  g_assert_cmpuint (sim_wbt_get_limit (w, SIM_BIO_SYNC), ==, 16);      /* max_depth */
  g_assert_cmpuint (sim_wbt_get_limit (w, SIM_BIO_META), ==, 16);
  submit_read (&f);          /* issued now: 100 ms of close_io again */
  g_assert_cmpuint (sim_wbt_get_limit (w, 0), ==, 4);
  f.stop_reads_ns = 0;
  advance (&f, 150 * MS);
  g_assert_cmpuint (f.reads_done, ==, 1);
  g_assert_cmpuint (sim_wbt_get_limit (w, 0), ==, 4);   /* completed at ~105 ms */
  advance (&f, 210 * MS);
  g_assert_cmpuint (sim_wbt_get_limit (w, 0), ==, 8);
  /* A writer slept in balance_dirty_pages within a second: the whole
   * depth for everyone (wb_recent_wait). */
  SimTime slept = 205 * MS;
  f.q->last_bdp_sleep_ns = &slept;
  g_assert_cmpuint (sim_wbt_get_limit (w, SIM_BIO_BACKGROUND), ==, 16);
  advance (&f, 1205 * MS);
  g_assert_cmpuint (sim_wbt_get_limit (w, SIM_BIO_BACKGROUND), ==, 4);
  f.q->last_bdp_sleep_ns = NULL;
  qfix_teardown (&f);
}

/* A queue with a write-back cache: wbt_rqw_done wakes sleepers only once
 * the tracked writes are down to 0, so writes reach the device in bursts
 * that start from none. */
static void
test_write_cache_bursts (void)
{
  SimWbtConfig cfg = wbt_config (SIM_WBT_STATE_ON_DEFAULT, 2 * MS, TRUE);
  QFix f;
  qfix_setup (&f, &cfg);
  f.check_limit = TRUE;
  f.check_bursts = TRUE;
  qfix_run (&f, 600, SIM_BIO_BACKGROUND, 3000 * MS);
  g_assert_cmpuint (f.max_writes_at_dev, ==, 4);
  g_assert_cmpuint (f.writes_issued, >, 50);
  qfix_teardown (&f);

  /* Without the cache, writes are let in before the device is empty
   * (below wb_normal by wb_background / 2). */
  cfg.write_cache = FALSE;
  qfix_setup (&f, &cfg);
  f.check_limit = TRUE;
  qfix_run (&f, 600, SIM_BIO_BACKGROUND, 3000 * MS);
  g_assert_cmpuint (f.max_writes_at_dev, ==, 4);
  g_assert_cmpuint (f.refills, >, 10);
  qfix_teardown (&f);
}

/* ---- whole scenarios ------------------------------------------------------ */

/* wbt on (mq-deadline, none, kyber; the 2 ms default of a loop device):
 * the writes at the device never exceed the max_depth in force, which
 * scales down to 2 and below, and most writes go out at that depth. */
static void
test_scenario_capped (void)
{
  static const char *const scheds[] = { "mq-deadline", "none", "kyber" };
  for (guint i = 0; i < G_N_ELEMENTS (scheds); i++)
    {
      g_autofree char *text = rw_scenario (scheds[i], "");
      Run run = run_text (text);
      const SimDeviceResult *d = device0 (run.r);
      g_test_message ("%s", scheds[i]);
      g_assert_true (d->has_wbt);
      g_assert_true (d->wbt.enabled);
      g_assert_cmpint (d->wbt.min_lat_ns, ==, 2 * MS);
      g_assert_true (d->wbt.write_cache);
      g_assert_cmpuint (d->wbt.queue_depth, ==, 128);
      g_assert_cmpuint (d->wbt.stats.tracked, >, 0);
      g_assert_cmpuint (d->wbt.stats.scale_downs, >, 0);
      g_assert_cmpint (d->wbt.stats.max_step, >=, 3);
      TraceStats st = trace_stats (&run, TRUE);
      g_assert_cmpuint (st.max_writes, <=, 16);
      g_assert_cmpuint (st.scaled_writes * 2, >, st.write_requests);
      g_assert_cmpuint (d->loop.max_in_flight, <=, 17);   /* the reader's one, and 16 */
      run_clear (&run);
    }
}

/* wbt off by wbt_lat_usec = 0: the loop's tags fill with writes; under
 * bfq wbt is off by default (bfq keeps its own async depth, so the tags
 * do not fill).  bfq with a hand-set target other than the current one
 * turns wbt on again (wbt_set_lat: manual state); setting the current
 * value (2000 on this queue) changes nothing, so it stays off. */
static void
test_scenario_not_capped (void)
{
  static const struct { const char *sched; const char *keys; gboolean on; } cases[] = {
    { "mq-deadline", "wbt_lat_usec = 0\n", FALSE },
    { "none", "wbt_lat_usec = 0\n", FALSE },
    { "bfq", "", FALSE },
    { "bfq", "wbt_lat_usec = 2000\n", FALSE },
    { "bfq", "wbt_lat_usec = 3000\n", TRUE },
    { "mq-deadline", "wbt_lat_usec = -1\n", TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = rw_scenario (cases[i].sched, cases[i].keys);
      Run run = run_text (text);
      const SimDeviceResult *d = device0 (run.r);
      g_test_message ("%s %s", cases[i].sched, cases[i].keys);
      g_assert_true (d->has_wbt);
      g_assert_cmpint (d->wbt.enabled, ==, cases[i].on);
      TraceStats st = trace_stats (&run, cases[i].on);
      if (cases[i].on)
        {
          g_assert_cmpuint (st.max_writes, <=, 16);
          g_assert_cmpuint (d->wbt.stats.tracked, >, 0);
        }
      else
        {
          if (strcmp (cases[i].sched, "bfq") != 0)
            g_assert_cmpuint (st.max_writes, >, 64);
          g_assert_cmpuint (d->wbt.stats.tracked, ==, 0);
          g_assert_cmpuint (d->wbt.stats.windows, ==, 0);
        }
      run_clear (&run);
    }
}

/* Legacy elevators have no blk-wbt at all. */
static void
test_scenario_legacy (void)
{
  g_autofree char *text = rw_scenario ("deadline", "wbt_lat_usec = 2000\n");
  Run run = run_text (text);
  g_assert_false (device0 (run.r)->has_wbt);
  run_clear (&run);
}

/* An O_DIRECT writer next to the reader: never tracked, the tags fill. */
static void
test_scenario_odirect (void)
{
  const char *text =
    "[sim]\nduration = 2s\nseed = 1\n"
    "[device d]\nkind = fixed\noverhead = 2ms\nbandwidth = 40MB/s\nvia = loop\nsched = mq-deadline\n"
    "[process reader]\ndevice = d\nop = read\npattern = sequential\nio = direct\nbs = 64KiB\n"
    "[process writer]\ndevice = d\nop = write\npattern = sequential\nio = direct\nbs = 512KiB\n"
    "engine = libaio\niodepth = 32\noffset = 2GiB\n";
  Run run = run_text (text);
  const SimDeviceResult *d = device0 (run.r);
  g_assert_true (d->wbt.enabled);
  g_assert_cmpuint (d->wbt.stats.tracked, ==, 0);
  g_assert_cmpuint (d->wbt.stats.waits, ==, 0);
  TraceStats st = trace_stats (&run, FALSE);
  g_assert_cmpuint (st.max_writes, ==, 32);
  run_clear (&run);
}

/* wbt_lat_usec takes -1, 0 or microseconds; anything else is refused by
 * name. */
static void
test_scenario_keys (void)
{
  static const char *const bad[] = { "wbt_lat_usec = -2\n", "wbt_lat_usec = fast\n",
                                     "wbt_lat_usec = 2ms\n" };
  for (guint c = 0; c < G_N_ELEMENTS (bad); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 2ms\nbandwidth = 40MB/s\nsched = none\n%s"
        "[process p]\ndevice = d\nop = read\nio = direct\nbs = 4KiB\nsize = 1MiB\n", bad[c]);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (text, "bad", NULL, NULL, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, "wbt_lat_usec"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/wbt/max-depth", test_max_depth);
  g_test_add_func ("/wbt/limits", test_limits);
  g_test_add_func ("/wbt/window", test_window);
  g_test_add_func ("/wbt/scaling", test_scaling);
  g_test_add_func ("/wbt/flags-and-limits", test_flags_and_limits);
  g_test_add_func ("/wbt/throttle-caps-writes", test_throttle_caps_writes);
  g_test_add_func ("/wbt/throttle-off", test_throttle_off);
  g_test_add_func ("/wbt/odirect-not-throttled", test_odirect_not_throttled);
  g_test_add_func ("/wbt/write-cache-bursts", test_write_cache_bursts);
  g_test_add_func ("/wbt/scenario/capped", test_scenario_capped);
  g_test_add_func ("/wbt/scenario/not-capped", test_scenario_not_capped);
  g_test_add_func ("/wbt/scenario/legacy", test_scenario_legacy);
  g_test_add_func ("/wbt/scenario/odirect", test_scenario_odirect);
  g_test_add_func ("/wbt/scenario/keys", test_scenario_keys);
  return g_test_run ();
}
