/* test-sched-as.c — the anticipatory elevator's rules (2.6.31
 * block/as-iosched.c; ../shared/reference/kernel-algorithms.md §3), driven
 * bio by bio against a fixed-time device (and a disk for the behavioural
 * tests), reading the dispatch order, the --trace-sched lines and the
 * elevator's dump.  Expected values are computed by hand in the comments. */
#include <glib.h>
#include <string.h>
#include <stdlib.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"

/* Defined in sched-as.c (no header of its own). */

#define MS(x) ((SimTime) ((x) * (double) SIM_NS_PER_MS))

#define N_IOCS 64

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SchedQueue      *e;
  GString         *order;      /* "pid:R|Wsector " per issue */
  GString         *log;        /* --trace-sched lines, "t_us message\n" */
  SimIoContext     iocs[N_IOCS];
  guint            completed;
  guint            completed_by_pid[N_IOCS];
} Fixture;

static void
record (gpointer data, const TraceRecord *rec)
{
  Fixture *f = data;
  if (rec->action == TRACE_ACT_ISSUE)
    g_string_append_printf (f->order, "%u:%c%" G_GUINT64_FORMAT " ", rec->pid,
                            (rec->rwbs & TRACE_RWBS_WRITE) ? 'W' : 'R', rec->sector);
}

static void
log_line (gpointer data, SimTime now_ns, const char *device, const char *sched,
          const char *message)
{
  Fixture *f = data;
  g_string_append_printf (f->log, "%" G_GINT64_FORMAT " %s\n", now_ns / SIM_NS_PER_US, message);
}

/* @device: a [device] ini body; NULL = fixed, 5 ms per request. */
static void
fixture_setup_full (Fixture *f, const char *sched, guint hz, const char *tunables,
                    const char *device)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, hz);
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  g_autofree char *dev_text = g_strdup_printf ("[device]\n%s",
                                               device ? device
                                                      : "kind = fixed\noverhead = 5ms\n"
                                                        "bandwidth = 1000GB/s\n");
  DevModel *model = dev_model_new_from_data ("t", dev_text, &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched t]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  f->e = sched_queue_new (sched_ops_lookup (sched), f->q, f->sim, hz, kf, "sched t", &error);
  g_assert_no_error (error);
  f->e->log = log_line;
  f->e->log_data = f;
  sim_queue_set_elevator (f->q, f->e);
  f->order = g_string_new (NULL);
  f->log = g_string_new (NULL);
  sim_queue_set_trace (f->q, record, f);
  for (guint i = 0; i < N_IOCS; i++)
    {
      f->iocs[i].pid = i;
      f->iocs[i].comm = "t";
      f->iocs[i].ioprio_class = 2;
      f->iocs[i].ioprio_level = 4;
      f->iocs[i].nr_tasks = 1;
    }
}

static void
fixture_setup (Fixture *f, const char *tunables)
{
  fixture_setup_full (f, "anticipatory", 1000, tunables, NULL);
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->order, TRUE);
  g_string_free (f->log, TRUE);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Fixture *f = bio->end_io_data;
  f->completed++;
  f->completed_by_pid[bio->ioc->pid]++;
}

static void
submit_bio (Fixture *f, guint pid, SimOp op, gboolean sync, guint64 sector, guint32 nr,
            SimBioEndIo end_io, gpointer data)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = op;
  bio->flags = sync ? SIM_BIO_SYNC : 0;
  bio->ioc = &f->iocs[pid];
  bio->end_io = end_io;
  bio->end_io_data = data;
  g_assert_true (sim_queue_submit_bio (f->q, bio, NULL));
}

/* A process reads 8 sectors and waits for them (which unplugs). */
static void
read_sync (Fixture *f, guint pid, guint64 sector)
{
  submit_bio (f, pid, SIM_OP_READ, TRUE, sector, 8, bio_done, f);
  sim_queue_unplug (f->q, &f->iocs[pid]);
}

static void
write_async (Fixture *f, guint pid, guint64 sector)
{
  submit_bio (f, pid, SIM_OP_WRITE, FALSE, sector, 8, bio_done, f);
}

static void
clock_mark (Sim *sim, gpointer subject, gpointer object)
{
}

/* Run to @ms; the clock reaches it even when nothing else is pending. */
static void
run_to (Fixture *f, double ms)
{
  sim_schedule_at (f->sim, MS (ms), clock_mark, NULL, NULL);
  sim_run_until (f->sim, MS (ms));
}

/* The value of "key=" on the dump line that starts with @line_prefix. */
static gint64
dump_value (Fixture *f, const char *line_prefix, const char *key)
{
  g_autoptr (GString) out = g_string_new (NULL);
  f->e->ops->dump (f->e, out);
  g_auto (GStrv) lines = g_strsplit (out->str, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], line_prefix))
      {
        g_autofree char *needle = g_strdup_printf (" %s=", key);
        const char *p = strstr (lines[i], needle);
        g_assert_nonnull (p);
        return g_ascii_strtoll (p + strlen (needle), NULL, 10);
      }
  g_error ("no dump line '%s' in:\n%s", line_prefix, out->str);
  return -1;
}

static gint64
as_value (Fixture *f, const char *key)
{
  return dump_value (f, "as ", key);
}

static gint64
aic_value (Fixture *f, guint pid, const char *key)
{
  g_autofree char *prefix = g_strdup_printf ("aic pid=%u ", pid);
  return dump_value (f, prefix, key);
}

static gboolean
dump_has (Fixture *f, const char *text)
{
  g_autoptr (GString) out = g_string_new (NULL);
  f->e->ops->dump (f->e, out);
  return strstr (out->str, text) != NULL;
}

static gboolean
log_has (Fixture *f, const char *text)
{
  return strstr (f->log->str, text) != NULL;
}

/* Run out of work; the elevator must be empty and consistent. */
static void
drain (Fixture *f)
{
  sim_run_until (f->sim, SIM_TIME_NEVER);
  g_assert_true (f->e->ops->queue_empty (f->e));
  g_assert_true (sched_as_check_invariants (f->e));
  g_assert_cmpint (as_value (f, "nr_dispatched"), ==, 0);
  g_assert_cmpuint (f->q->in_flight, ==, 0);
}

/* ---- tunables and HZ ---------------------------------------------------- */

static void
test_hz (void)
{
  const SchedTunable *t = sched_as_ops.tunables;
  const struct { const char *name; int hz1000, hz250, hz100; } rows[] = {
    { "read_expire", 125, 31, 12 },        /* HZ/8 */
    { "write_expire", 250, 62, 25 },       /* HZ/4 */
    { "read_batch_expire", 500, 125, 50 }, /* HZ/2 */
    { "write_batch_expire", 125, 31, 12 }, /* HZ/8 */
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_assert_cmpstr (t[i].name, ==, rows[i].name);
      g_assert_cmpint (sched_tunable_default (&t[i], 1000), ==, rows[i].hz1000);
      g_assert_cmpint (sched_tunable_default (&t[i], 250), ==, rows[i].hz250);
      g_assert_cmpint (sched_tunable_default (&t[i], 100), ==, rows[i].hz100);
    }

  /* antic_expire = HZ/150, at least one jiffy: 6, 1, 1; write_batch_count
   * starts at write_batch_expire/10, at least 2: 12, 3, 2. */
  const struct { guint hz; int antic; int count; } hzs[] = {
    { 1000, 6, 12 }, { 250, 1, 3 }, { 100, 1, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (hzs); i++)
    {
      Fixture f;
      fixture_setup_full (&f, "anticipatory", hzs[i].hz, NULL, NULL);
      g_assert_cmpint (as_value (&f, "antic_expire"), ==, hzs[i].antic);
      g_assert_cmpint (as_value (&f, "write_batch_count"), ==, hzs[i].count);
      fixture_teardown (&f);
    }
}

static void
test_tunables (void)
{
  Fixture f;
  /* msecs_to_jiffies rounds up: 10 ms at HZ=250 is 3 jiffies. */
  fixture_setup_full (&f, "anticipatory", 250, "antic_expire = 10ms\n", NULL);
  g_assert_cmpint (as_value (&f, "antic_expire"), ==, 3);
  fixture_teardown (&f);
  /* Any nonzero time is at least a jiffy. */
  fixture_setup_full (&f, "anticipatory", 100, "antic_expire = 1\n", NULL);
  g_assert_cmpint (as_value (&f, "antic_expire"), ==, 1);
  fixture_teardown (&f);
  fixture_setup_full (&f, "anticipatory", 1000, "antic_expire = 0\n", NULL);
  g_assert_cmpint (as_value (&f, "antic_expire"), ==, 0);
  fixture_teardown (&f);

  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_assert_true (g_key_file_load_from_data (kf, "[s]\nantic_expiry = 5\n", -1, 0, NULL));
  g_autoptr (GError) error = NULL;
  SchedQueue *e = sched_queue_new (&sched_as_ops, NULL, NULL, 1000, kf, "s", &error);
  g_assert_null (e);
  g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
  g_assert_nonnull (strstr (error->message, "antic_expiry"));
}

/* ---- per-process statistics --------------------------------------------- */

static void
test_think_time_and_seek (void)
{
  Fixture f;
  fixture_setup (&f, NULL);
  /* Each request takes 5 ms (plus 4 ns of transfer): a request dispatched
   * at t ms completes in jiffy t+5.  The first request only records its
   * position (last_request_pos = 8). */
  read_sync (&f, 1, 0);
  run_to (&f, 9);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 0);
  g_assert_cmpint (aic_value (&f, 1, "last_request_pos"), ==, 8);

  /* Completed in jiffy 5; queued at 10: think time 5 jiffies; seek 1000-8.
   *   ttime: samples (7*0+256)/8 = 32, total (0+256*5)/8 = 160,
   *          mean (160+128)/32 = 9;
   *   seek:  clamp min(992, 4*0 + 2Mi) = 992; samples 32,
   *          total 256*992/8 = 31744, mean (31744+16)/32 = 992;
   *   priors (first sample of this process): new_ttime_total 160,
   *          new_ttime_mean 160/256 = 0, new_seek_total 31744,
   *          new_seek_mean 31744/256 = 124. */
  run_to (&f, 10);
  read_sync (&f, 1, 1000);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 32);
  g_assert_cmpint (aic_value (&f, 1, "ttime_total"), ==, 160);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 9);
  g_assert_cmpint (aic_value (&f, 1, "seek_samples"), ==, 32);
  g_assert_cmpint (aic_value (&f, 1, "seek_total"), ==, 31744);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 992);
  g_assert_cmpint (as_value (&f, "new_ttime_total"), ==, 160);
  g_assert_cmpint (as_value (&f, "new_ttime_mean"), ==, 0);
  g_assert_cmpint (as_value (&f, "new_seek_total"), ==, 31744);
  g_assert_cmpint (as_value (&f, "new_seek_mean"), ==, 124);

  /* Completes in jiffy 15; the next one (sequential) is queued in jiffy 15:
   *   ttime: samples (7*32+256)/8 = 60, total 7*160/8 = 140,
   *          mean (140+128)/60 = 4;
   *   seek:  0; samples 60, total 7*31744/8 = 27776,
   *          mean (27776+30)/60 = 463;
   *   the priors no longer move (the process has samples). */
  run_to (&f, 15.5);
  read_sync (&f, 1, 1008);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 60);
  g_assert_cmpint (aic_value (&f, 1, "ttime_total"), ==, 140);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 4);
  g_assert_cmpint (aic_value (&f, 1, "seek_samples"), ==, 60);
  g_assert_cmpint (aic_value (&f, 1, "seek_total"), ==, 27776);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 463);
  g_assert_cmpint (as_value (&f, "new_ttime_total"), ==, 160);
  g_assert_cmpint (as_value (&f, "new_seek_total"), ==, 31744);

  /* Completes in jiffy 20; queued at 50: 30 jiffies, capped at
   * MAX_THINKTIME-1 = HZ/50-1 = 19:
   *   ttime: samples (7*60+256)/8 = 84, total (7*140+256*19)/8 = 730,
   *          mean (730+128)/84 = 10;
   *   seek:  0; samples 84, total 7*27776/8 = 24304,
   *          mean (24304+42)/84 = 289. */
  run_to (&f, 50);
  read_sync (&f, 1, 1016);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 84);
  g_assert_cmpint (aic_value (&f, 1, "ttime_total"), ==, 730);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 10);
  g_assert_cmpint (aic_value (&f, 1, "seek_total"), ==, 24304);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 289);
  g_assert_cmpint (aic_value (&f, 1, "last_request_pos"), ==, 1024);

  /* Async requests leave the statistics alone. */
  write_async (&f, 1, 500000);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 84);
  g_assert_cmpint (aic_value (&f, 1, "last_request_pos"), ==, 1024);
  drain (&f);
  fixture_teardown (&f);
}

static void
test_seek_clamp (void)
{
  Fixture f;
  fixture_setup (&f, NULL);
  /* Early samples: a jump of 9999992 sectors is clamped to
   * 4*0 + 2 Mi = 2097152: total 256*2097152/8 = 67108864, mean 2097152.
   * The prior takes the unclamped distance: 256*9999992/8 = 319999744,
   * mean 1249999. */
  read_sync (&f, 1, 0);
  run_to (&f, 10);
  read_sync (&f, 1, 10000000);
  g_assert_cmpint (aic_value (&f, 1, "seek_total"), ==, 67108864);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 2097152);
  g_assert_cmpint (as_value (&f, "new_seek_total"), ==, 319999744);
  g_assert_cmpint (as_value (&f, "new_seek_mean"), ==, 1249999);
  drain (&f);
  fixture_teardown (&f);

  /* After three samples (seek_samples 84 > 60) the slack is 128 Ki:
   * three sequential requests give samples 32, 60, 84 with mean 0; a jump
   * of 999976 sectors is clamped to 4*0 + 131072:
   * samples (7*84+256)/8 = 105, total 256*131072/8 = 4194304,
   * mean (4194304+52)/105 = 39946. */
  fixture_setup (&f, NULL);
  double t = 0;
  for (guint i = 0; i < 4; i++)
    {
      read_sync (&f, 1, 8 * i);
      t += 10;
      run_to (&f, t);
    }
  g_assert_cmpint (aic_value (&f, 1, "seek_samples"), ==, 84);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 0);
  read_sync (&f, 1, 1000000);
  g_assert_cmpint (aic_value (&f, 1, "seek_samples"), ==, 105);
  g_assert_cmpint (aic_value (&f, 1, "seek_total"), ==, 4194304);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 39946);
  drain (&f);
  fixture_teardown (&f);
}

/* ---- as_choose_req -------------------------------------------------------- */

/* Process 1 reads @head-8 (the head ends at @head); while it is on the
 * device, two requests of process 1 at @a and @b are queued.  Anticipation
 * is off, so the read batch follows next_rq: the order shows which of @a
 * and @b as_choose_req preferred. */
static char *
choose_order (guint64 head, guint64 a, guint64 b)
{
  Fixture f;
  fixture_setup (&f, "antic_expire = 0\n");
  read_sync (&f, 1, head - 8);
  run_to (&f, 1);
  read_sync (&f, 1, a);
  read_sync (&f, 1, b);
  drain (&f);
  char *order = g_strdup (f.order->str);
  fixture_teardown (&f);
  return order;
}

static void
test_choose_req (void)
{
  /* Forward 500 beats backward 2*200 = 400?  No: backward 400 < 500. */
  g_autofree char *o1 = choose_order (1000, 1500, 800);
  g_assert_cmpstr (o1, ==, "1:R992 1:R800 1:R1500 ");
  /* Backward 2*300 = 600 > forward 500: forward wins. */
  g_autofree char *o2 = choose_order (1000, 700, 1500);
  g_assert_cmpstr (o2, ==, "1:R992 1:R1500 1:R700 ");
  /* Tie: forward 300 and backward 2*150 = 300: the higher sector. */
  g_autofree char *o3 = choose_order (1000, 850, 1300);
  g_assert_cmpstr (o3, ==, "1:R992 1:R1300 1:R850 ");
  /* More than MAXBACK (1048576) behind the head wraps: a far forward
   * request beats it. */
  g_autofree char *o4 = choose_order (2000000, 100, 3000000);
  g_assert_cmpstr (o4, ==, "1:R1999992 1:R3000000 1:R100 ");
  /* Exactly MAXBACK behind is still a backward seek (2*1048576), which
   * beats a forward seek of 2097153. */
  g_autofree char *o5 = choose_order (2000000, 2000000 - 1048576, 2000000 + 2097153);
  g_assert_cmpstr (o5, ==, "1:R1999992 1:R951424 1:R4097153 ");
  /* Both wrapped: the lower sector. */
  g_autofree char *o6 = choose_order (3000000, 200, 100);
  g_assert_cmpstr (o6, ==, "1:R2999992 1:R100 1:R200 ");
}

/* ---- anticipation ----------------------------------------------------------- */

/* Process 1 reads at 100000 (the head ends at 100008) and completes in
 * jiffy 5; process 2's far read (5000000) was queued meanwhile, so at the
 * completion AS starts anticipating process 1 (WAIT_NEXT, timer at jiffy
 * 11). */
static void
anticipate_setup (Fixture *f, const char *tunables)
{
  fixture_setup (f, tunables);
  read_sync (f, 1, 100000);
  run_to (f, 1);
  read_sync (f, 2, 5000000);
  run_to (f, 5.5);
  g_assert_true (log_has (f, "5000 antic_start pid=1 state=wait_next"));
  g_assert_cmpstr (f->order->str, ==, "1:R100000 ");
}

/* Process 3 reads @sector at @at_ms during the wait: did it break it? */
static gboolean
close_breaks (double at_ms, guint64 sector)
{
  Fixture f;
  anticipate_setup (&f, NULL);
  run_to (&f, at_ms);
  read_sync (&f, 3, sector);
  gboolean broke = log_has (&f, "antic_break pid=1 by=3 reason=close");
  if (!broke)
    g_assert_false (log_has (&f, "antic_break"));
  drain (&f);
  /* Without a break the wait ends at the timer (jiffy 5 + 6). */
  g_assert_true (broke || log_has (&f, "11000 antic_timeout pid=1"));
  fixture_teardown (&f);
  return broke;
}

static void
test_close_window (void)
{
  /* delay 0 (same jiffy as the completion): window 8192 sectors forward,
   * 4096 back of last = 100008. */
  g_assert_true (close_breaks (5.5, 100008 + 8192));
  g_assert_false (close_breaks (5.5, 100008 + 8193));
  g_assert_true (close_breaks (5.5, 100008 - 4096));
  g_assert_false (close_breaks (5.5, 100008 - 4097));
  /* delay 2 jiffies: 8192 << 2 = 32768 forward, 16384 back. */
  g_assert_true (close_breaks (7.5, 100008 + 32768));
  g_assert_false (close_breaks (7.5, 100008 + 32769));
  g_assert_true (close_breaks (7.5, 100008 - 16384));
  g_assert_false (close_breaks (7.5, 100008 - 16385));
  /* delay 5: 8192 << 5 = 262144. */
  g_assert_true (close_breaks (10.5, 100008 + 262144));
  g_assert_false (close_breaks (10.5, 100008 + 262145));
}

static void
test_close_window_hz100 (void)
{
  /* HZ=100: antic_expire 1 jiffy (10 ms) and 20*HZ/1000 = 2: a delay of
   * one jiffy doubles the window; jiffies are 10 ms. */
  Fixture f;
  fixture_setup_full (&f, "anticipatory", 100, NULL, NULL);
  read_sync (&f, 1, 100000);                /* completes at 5 ms, jiffy 0 */
  run_to (&f, 1);
  read_sync (&f, 2, 5000000);
  run_to (&f, 12);                          /* jiffy 1: delay 1 */
  g_assert_true (log_has (&f, "5000 antic_start pid=1 state=wait_next"));
  read_sync (&f, 3, 100008 + 16385);
  g_assert_false (log_has (&f, "antic_break"));
  drain (&f);
  /* The timer fires at jiffy 0 + 1 = 10 ms. */
  g_assert_true (log_has (&f, "10000 antic_timeout pid=1"));
  fixture_teardown (&f);

  fixture_setup_full (&f, "anticipatory", 100, NULL, NULL);
  read_sync (&f, 1, 100000);
  run_to (&f, 1);
  read_sync (&f, 2, 5000000);
  run_to (&f, 6);                           /* jiffy 0: delay 0 */
  read_sync (&f, 3, 100008 + 8192);
  g_assert_true (log_has (&f, "antic_break pid=1 by=3 reason=close"));
  drain (&f);
  fixture_teardown (&f);
}

static void
test_close_seek_mean (void)
{
  /* Process 1 has a seek history: 0, then 100000 queued in the jiffy of
   * the first completion (think time 0, ttime_mean (0+128)/32 = 4 <= 6),
   * seek_mean 99992.  A request 90000 past the head is outside the window
   * but nearer than the mean seek: close. */
  Fixture f;
  fixture_setup (&f, NULL);
  read_sync (&f, 1, 0);
  run_to (&f, 5.5);
  read_sync (&f, 1, 100000);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 99992);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 4);
  run_to (&f, 6);
  read_sync (&f, 2, 5000000);
  run_to (&f, 10.6);                         /* completed at 10.5 */
  g_assert_true (log_has (&f, "10500 antic_start pid=1 state=wait_next"));
  read_sync (&f, 3, 100008 + 90000);
  g_assert_true (log_has (&f, "antic_break pid=1 by=3 reason=close"));
  /* The cooperator's request went into process 1's history:
   * seek 90000 (clamp 4*99992 + 2Mi): samples 60,
   * total (7*3199744 + 256*90000)/8 = 5679776, mean (5679776+30)/60 = 94663. */
  g_assert_cmpint (aic_value (&f, 1, "seek_samples"), ==, 60);
  g_assert_cmpint (aic_value (&f, 1, "seek_mean"), ==, 94663);
  drain (&f);
  /* The cooperator is served before the far request. */
  g_assert_cmpstr (f.order->str, ==, "1:R0 1:R100000 3:R190008 2:R5000000 ");
  fixture_teardown (&f);
}

static void
test_break_same_process (void)
{
  Fixture f;
  anticipate_setup (&f, NULL);
  run_to (&f, 7);
  read_sync (&f, 1, 100008);
  g_assert_true (log_has (&f, "7000 antic_break pid=1 by=1 reason=same_process"));
  drain (&f);
  g_assert_cmpstr (f.order->str, ==, "1:R100000 1:R100008 2:R5000000 ");
  fixture_teardown (&f);
}

static void
test_wait_req_then_timeout (void)
{
  /* With two device slots, AS decides while process 1's read is still in
   * flight: WAIT_REQ, no timer; the completion (jiffy 5) moves to
   * WAIT_NEXT and arms the timer for jiffy 11; nobody comes; the far
   * request goes at 11 ms. */
  Fixture f;
  fixture_setup_full (&f, "anticipatory", 1000, NULL,
                      "kind = fixed\noverhead = 5ms\nbandwidth = 1000GB/s\nqueue_depth = 2\n"
                      "parallelism = 2\n");
  read_sync (&f, 1, 100000);
  run_to (&f, 1);
  read_sync (&f, 2, 5000000);
  g_assert_true (log_has (&f, "1000 antic_start pid=1 state=wait_req"));
  g_assert_true (dump_has (&f, "as antic=wait_req "));
  /* The process being waited for may take requests past nr_requests. */
  g_assert_cmpint (f.e->ops->may_queue (f.e, &f.iocs[1], SIM_OP_READ, TRUE), ==,
                   SCHED_MAY_QUEUE_MUST);
  g_assert_cmpint (f.e->ops->may_queue (f.e, &f.iocs[2], SIM_OP_READ, TRUE), ==,
                   SCHED_MAY_QUEUE_DEFAULT);
  run_to (&f, 10.9);
  g_assert_cmpstr (f.order->str, ==, "1:R100000 ");
  g_assert_true (sched_as_check_invariants (f.e));
  run_to (&f, 11);
  g_assert_true (log_has (&f, "11000 antic_timeout pid=1"));
  g_assert_cmpstr (f.order->str, ==, "1:R100000 2:R5000000 ");
  /* A timeout on a process without think-time samples raises exit_prob:
   * (7*0+256)/8 = 32. */
  g_assert_cmpint (as_value (&f, "exit_prob"), ==, 32);
  g_assert_cmpint (as_value (&f, "exit_no_coop"), ==, 0);
  drain (&f);
  g_assert_cmpint (f.e->ops->may_queue (f.e, &f.iocs[1], SIM_OP_READ, TRUE), ==,
                   SCHED_MAY_QUEUE_DEFAULT);
  fixture_teardown (&f);
}

static void
sched_submit_pid3 (Sim *sim, gpointer subject, gpointer object)
{
  read_sync (subject, 3, 9000000);
}

static void
test_break_timeout (void)
{
  /* An arrival in the very jiffy the wait expires, ahead of the timer
   * event (scheduled before the timer was armed): rule 2. */
  Fixture f;
  fixture_setup (&f, NULL);
  sim_schedule_at (f.sim, MS (11), sched_submit_pid3, &f, NULL);
  read_sync (&f, 1, 100000);
  run_to (&f, 1);
  read_sync (&f, 2, 5000000);
  drain (&f);
  g_assert_true (log_has (&f, "5000 antic_start pid=1 state=wait_next"));
  g_assert_true (log_has (&f, "11000 antic_break pid=1 by=3 reason=timeout"));
  g_assert_false (log_has (&f, "antic_timeout pid=1"));
  fixture_teardown (&f);

  /* The dispatch path: the anticipated request completed long ago (no
   * queued work then, so no wait started); a far request arriving 20
   * jiffies later is served at once. */
  fixture_setup (&f, NULL);
  read_sync (&f, 1, 100000);
  run_to (&f, 25);
  read_sync (&f, 2, 5000000);
  g_assert_true (log_has (&f, "25000 antic_skip pid=1 by=2 reason=timeout"));
  g_assert_false (log_has (&f, "antic_start"));
  g_assert_cmpstr (f.order->str, ==, "1:R100000 2:R5000000 ");
  drain (&f);
  fixture_teardown (&f);
}

static void
test_break_queued (void)
{
  /* Process 1 also has an async write queued (the read batch does not
   * serve it): rule 4, no wait for its next read. */
  Fixture f;
  fixture_setup (&f, NULL);
  read_sync (&f, 1, 100000);
  run_to (&f, 1);
  write_async (&f, 1, 7000000);
  read_sync (&f, 2, 5000000);
  run_to (&f, 5.5);
  g_assert_true (log_has (&f, "5000 antic_skip pid=1 by=2 reason=queued"));
  g_assert_false (log_has (&f, "antic_start"));
  drain (&f);
  fixture_teardown (&f);
}

static void
test_break_think_time (void)
{
  /* Process 1: completes in jiffy 5, next read at 10 ms: one think-time
   * sample of 5 jiffies, ttime_mean (160+128)/32 = 9 > antic_expire 6. */
  Fixture f;
  fixture_setup (&f, NULL);
  read_sync (&f, 1, 0);
  run_to (&f, 10);
  read_sync (&f, 1, 8);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 9);
  run_to (&f, 11);
  read_sync (&f, 2, 5000000);
  run_to (&f, 15.5);
  g_assert_true (log_has (&f, "15000 antic_skip pid=1 by=2 reason=think_time"));
  g_assert_false (log_has (&f, "antic_start"));
  drain (&f);
  fixture_teardown (&f);

  /* Raised antic_expire (10 ms): 9 <= 10, AS waits. */
  fixture_setup (&f, "antic_expire = 10ms\n");
  read_sync (&f, 1, 0);
  run_to (&f, 10);
  read_sync (&f, 1, 8);
  run_to (&f, 11);
  read_sync (&f, 2, 5000000);
  run_to (&f, 15.5);
  g_assert_true (log_has (&f, "15000 antic_start pid=1 state=wait_next"));
  drain (&f);
  fixture_teardown (&f);
}

static void
test_break_new_think_time (void)
{
  /* antic_expire 1 jiffy.  Process 1 gives the prior one first sample of
   * 19 jiffies (capped): new_ttime_total 256*19/8 = 608, new_ttime_mean
   * 608/256 = 2 > 1.  Process 4, without samples, is then not waited for. */
  Fixture f;
  fixture_setup (&f, "antic_expire = 1ms\n");
  read_sync (&f, 1, 0);
  run_to (&f, 40);
  read_sync (&f, 1, 8);
  g_assert_cmpint (as_value (&f, "new_ttime_mean"), ==, 2);
  run_to (&f, 100);
  read_sync (&f, 4, 200000);
  run_to (&f, 101);
  read_sync (&f, 2, 5000000);
  run_to (&f, 106);
  g_assert_true (log_has (&f, "105000 antic_skip pid=4 by=2 reason=new_think_time"));
  drain (&f);
  fixture_teardown (&f);
}

/* One round of the exit tests at @t ms: process @a reads and (if @exits)
 * exits after its completion; process @c then queues a far read. */
static void
exit_round (Fixture *f, double t, guint a, guint c, gboolean exits)
{
  run_to (f, t);
  read_sync (f, a, 100000);
  run_to (f, t + 6);
  if (exits)
    {
      f->iocs[a].exited = TRUE;
      f->e->ops->exit_ioc (f->e, &f->iocs[a], MS (t + 6));
    }
  read_sync (f, c, 5000000);
  run_to (f, t + 30);
}

static void
test_break_exit (void)
{
  /* Rounds with exiting processes.  Each round, at the dispatch check
   * (rule 6) exit_prob p <- (7p+256)/8 since the process has no samples;
   * unless exit_no_coop nc > 128 (rule 6) or p*nc > 128*256 (rule 7), AS
   * waits, times out, and p and nc both rise by (7x+256)/8:
   *   round: p at check, nc,   p*nc,  then after the timeout p, nc
   *   1:  32,   0,     0   -> 60,  32
   *   2:  84,  32,  2688   -> 105, 60
   *   3: 123,  60,  7380   -> 139, 84
   *   4: 153,  84, 12852   -> 165, 105
   *   5: 176, 105, 18480   -> 186, 123
   *   6: 194, 123, 23862   -> 201, 139
   *   7: 207, 139 > 128: break, reason exit. */
  Fixture f;
  fixture_setup (&f, NULL);
  const guint64 p_after[] = { 60, 105, 139, 165, 186, 201 };
  const guint64 nc_after[] = { 32, 60, 84, 105, 123, 139 };
  for (guint r = 0; r < 6; r++)
    {
      exit_round (&f, 100 * r, 2 * r + 1, 2 * r + 2, TRUE);
      g_assert_false (log_has (&f, "reason=exit"));
      g_assert_cmpint (as_value (&f, "exit_prob"), ==, p_after[r]);
      g_assert_cmpint (as_value (&f, "exit_no_coop"), ==, nc_after[r]);
    }
  exit_round (&f, 600, 13, 14, TRUE);
  g_assert_true (log_has (&f, "606000 antic_skip pid=13 by=14 reason=exit"));
  g_assert_cmpint (as_value (&f, "exit_prob"), ==, 207);

  /* Processes that do not exit: rule 7's p*nc with nc = 139 stays at or
   * below 32768 until p > 235: checks raise nothing, timeouts raise p:
   * 207 -> 213 -> 218 -> 222 -> 226 -> 229 -> 232 -> 235 -> 237
   * (eight timeouts); the ninth round breaks, reason exit_prob. */
  for (guint r = 0; r < 8; r++)
    {
      exit_round (&f, 700 + 100 * r, 15 + 2 * r, 16 + 2 * r, FALSE);
      g_assert_false (log_has (&f, "reason=exit_prob"));
    }
  g_assert_cmpint (as_value (&f, "exit_prob"), ==, 237);
  exit_round (&f, 1500, 31, 32, FALSE);
  g_assert_true (log_has (&f, "1506000 antic_skip pid=31 by=32 reason=exit_prob"));
  drain (&f);
  fixture_teardown (&f);
}

static void
test_exit_cooperator (void)
{
  /* The waited-on process exited, but a close request of another process
   * arrives at 6 ms: exit_no_coop decays (7*0/8 = 0); the process having no
   * think-time samples, exit_prob rises to (7*0+256)/8 = 32.  Then the
   * cooperator's request enters process 1's history: its first think-time
   * sample (6 - 5 = 1 jiffy: samples 32, total 32, mean (32+128)/32 = 5),
   * which as a first sample also feeds the prior (new_ttime_total
   * 256*1/8 = 32) and decays exit_prob: 7*32/8 = 28. */
  Fixture f;
  anticipate_setup (&f, NULL);
  f.iocs[1].exited = TRUE;
  f.e->ops->exit_ioc (f.e, &f.iocs[1], MS (5.5));
  g_assert_cmpint (aic_value (&f, 1, "exited"), ==, 1);
  run_to (&f, 6);
  read_sync (&f, 3, 100016);
  g_assert_true (log_has (&f, "6000 antic_break pid=1 by=3 reason=close"));
  g_assert_cmpint (as_value (&f, "exit_prob"), ==, 28);
  g_assert_cmpint (as_value (&f, "exit_no_coop"), ==, 0);
  g_assert_cmpint (as_value (&f, "new_ttime_total"), ==, 32);
  g_assert_cmpint (aic_value (&f, 1, "ttime_samples"), ==, 32);
  g_assert_cmpint (aic_value (&f, 1, "ttime_mean"), ==, 5);
  drain (&f);
  fixture_teardown (&f);
}

/* ---- batches --------------------------------------------------------------- */

static void
reader_done (Sim *sim, SimBio *bio, SimTime now);

/* A closed-loop reader: the next read is submitted when the last one
 * completes, after think_ns. */
typedef struct {
  Fixture *f;
  guint    pid;
  guint64  sector;
  guint32  nr_sectors;
  guint    remaining;
  SimTime  think_ns;
} Reader;

static void
reader_submit (Sim *sim, gpointer subject, gpointer object)
{
  Reader *r = subject;
  if (r->remaining == 0)
    return;
  r->remaining--;
  submit_bio (r->f, r->pid, SIM_OP_READ, TRUE, r->sector, r->nr_sectors, reader_done, r);
  r->sector += r->nr_sectors;
  sim_queue_unplug (r->f->q, &r->f->iocs[r->pid]);
}

static void
reader_done (Sim *sim, SimBio *bio, SimTime now)
{
  Reader *r = bio->end_io_data;
  r->f->completed++;
  r->f->completed_by_pid[r->pid]++;
  if (r->think_ns == 0)
    reader_submit (sim, r, NULL);
  else
    sim_schedule_in (sim, r->think_ns, reader_submit, r, NULL);
}

/* The write_batch_count updates ("was->count ") while a reader without
 * think time competes with @n_writes queued writes; @device_ms per request,
 * read batches of 1 ms. */
static char *
write_batch_counts (const char *write_batch_expire, double device_ms, guint n_writes,
                    guint n_updates)
{
  Fixture f;
  g_autofree char *tunables = g_strdup_printf ("write_batch_expire = %s\n", write_batch_expire);
  g_autofree char *device = g_strdup_printf ("kind = fixed\noverhead = %gms\n"
                                             "bandwidth = 1000GB/s\n", device_ms);
  fixture_setup_full (&f, "anticipatory", 1000, tunables, device);
  Reader r = { .f = &f, .pid = 1, .sector = 0, .nr_sectors = 8, .remaining = 100000 };
  reader_submit (f.sim, &r, NULL);
  for (guint i = 0; i < n_writes; i++)
    write_async (&f, 2, 10000000 + 16 * i);

  g_autoptr (GString) counts = g_string_new (NULL);
  guint seen = 0;
  gsize offset = 0;   /* the log's buffer moves as it grows */
  while (seen < n_updates)
    {
      g_assert_true (sim_step (f.sim));
      const char *hit;
      while (seen < n_updates
             && (hit = strstr (f.log->str + offset, "write_batch_count count=")) != NULL)
        {
          int count, was;
          g_assert_cmpint (sscanf (hit, "write_batch_count count=%d was=%d", &count, &was), ==, 2);
          g_string_append_printf (counts, "%d->%d ", was, count);
          seen++;
          offset = (gsize) (hit - f.log->str) + 1;
        }
      g_assert_true (sched_as_check_invariants (f.e));
    }
  r.remaining = 0;
  drain (&f);
  fixture_teardown (&f);
  return g_string_free (g_steal_pointer (&counts), FALSE);
}

static void
test_write_batch_count (void)
{
  /* Read batches last read_batch_expire (500 ms) while writes wait; a
   * write batch of i requests (d ms each) started at T ends when its count
   * is used or i*d > B, and the next read completes at T + (i+1)*d: that is
   * the write time w the rule sees.  The first update comes at the very
   * first read completion, with the state of a zeroed as_data (an async
   * "batch" with no count left, expiring at jiffy 0 + 500): w = d - 500 + B
   * clamps to 0 and the count doubles.
   *
   * Halve and min 1: B = 2 jiffies, 5 ms per request.  The write batch
   * expires after its first write (5 > 2), the next read completes 10
   * jiffies after the batch started: 10 > 3B, halve: 4 -> 2 -> 1 -> 0,
   * raised to the minimum 1. */
  g_autofree char *halve = write_batch_counts ("2ms", 5, 20, 4);
  g_assert_cmpstr (halve, ==, "2->4 4->2 2->1 1->1 ");
  /* Minus one: B = 4, 3 ms per request: two writes (the batch expires at
   * 6 > 4), then the read: 9 jiffies, B < 9 <= 3B: 4 -> 3 -> 2 -> 1; with
   * one write 6 jiffies: 1 - 1 = 0, raised to 1. */
  g_autofree char *minus = write_batch_counts ("4ms", 3, 40, 5);
  g_assert_cmpstr (minus, ==, "2->4 4->3 3->2 2->1 1->1 ");
  /* Plus one: B = 30 (initial count 30/10 = 3), 2 ms per request; the
   * whole count is used: (count+1)*2 jiffies < B, and 3*(that) >= B:
   * +1 until (14+1)*2 = 30 = B, where nothing changes. */
  g_autofree char *plus = write_batch_counts ("30ms", 2, 120, 11);
  g_assert_cmpstr (plus, ==,
                   "3->6 6->7 7->8 8->9 9->10 10->11 11->12 12->13 13->14 14->14 14->14 ");
  /* Double: B = 20, 1 ms per request: 2 -> 4 (first update), then
   * (4+1)*1 = 5, 3*5 < 20: double to 8; (8+1) = 9, 27 >= 20: +1. */
  g_autofree char *twice = write_batch_counts ("20ms", 1, 120, 4);
  g_assert_cmpstr (twice, ==, "2->4 4->8 8->9 9->10 ");
}

static void
test_batch_trace (void)
{
  Fixture f;
  fixture_setup (&f, "read_batch_expire = 1ms\nwrite_batch_expire = 10ms\n");
  Reader r = { .f = &f, .pid = 1, .sector = 0, .nr_sectors = 8, .remaining = 20 };
  reader_submit (f.sim, &r, NULL);
  for (guint i = 0; i < 10; i++)
    write_async (&f, 2, 10000000 + 16 * i);
  drain (&f);
  /* The zeroed state is an async batch: the first read starts with a
   * batch change; later batches expire and alternate. */
  g_assert_true (g_str_has_prefix (f.log->str, "0 batch_start dir=read wait=0\n"));
  g_assert_true (log_has (&f, "batch_expire dir=read"));
  g_assert_true (log_has (&f, "batch_start dir=write wait=0"));
  g_assert_true (log_has (&f, "batch_expire dir=write"));
  g_assert_cmpuint (f.completed, ==, 30);
  fixture_teardown (&f);
}

/* ---- behaviour ---------------------------------------------------------------- */

static const char disk_no_ncq[] =
  "kind = disk\nqueue_depth = 1\ncapacity = 250GB\nrpm = 7200\nseek_track = 2ms\n"
  "seek_avg = 8.9ms\nseek_full = 21ms\n";

typedef struct {
  double mean_run;      /* dispatches per run of one pid */
  guint  contiguous;    /* dispatches that continue the previous one's sectors */
  guint  dispatches;
} RunStats;

static RunStats
run_stats (const char *order)
{
  RunStats s = { 0 };
  g_auto (GStrv) items = g_strsplit (order, " ", -1);
  guint runs = 0, last_pid = G_MAXUINT;
  guint64 last_end = 0;
  for (guint i = 0; items[i] && items[i][0]; i++)
    {
      guint pid = (guint) strtoul (items[i], NULL, 10);
      guint64 sector = g_ascii_strtoull (strchr (items[i], ':') + 2, NULL, 10);
      if (pid != last_pid)
        runs++;
      else if (sector == last_end)
        s.contiguous++;
      last_pid = pid;
      last_end = sector + 8;
      s.dispatches++;
    }
  s.mean_run = runs ? (double) s.dispatches / runs : 0;
  return s;
}

static char *
two_readers (const char *sched, RunStats *stats)
{
  Fixture f;
  fixture_setup_full (&f, sched, 1000, NULL, disk_no_ncq);
  Reader a = { .f = &f, .pid = 1, .sector = 1000, .nr_sectors = 8, .remaining = 3000,
               .think_ns = 100 * SIM_NS_PER_US };
  Reader b = { .f = &f, .pid = 2, .sector = 200000000, .nr_sectors = 8, .remaining = 3000,
               .think_ns = 100 * SIM_NS_PER_US };
  reader_submit (f.sim, &a, NULL);
  reader_submit (f.sim, &b, NULL);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.completed, ==, 6000);
  g_assert_true (f.e->ops->queue_empty (f.e));
  if (strcmp (sched, "anticipatory") == 0)
    {
      g_assert_true (sched_as_check_invariants (f.e));
      g_assert_cmpint (as_value (&f, "nr_dispatched"), ==, 0);
      g_assert_cmpint (aic_value (&f, 1, "nr_queued"), ==, 0);
      g_assert_cmpint (aic_value (&f, 2, "nr_queued"), ==, 0);
    }
  *stats = run_stats (f.order->str);
  char *order = g_strdup (f.order->str);
  fixture_teardown (&f);
  return order;
}

static void
test_two_sequential_readers (void)
{
  RunStats as, dl;
  g_autofree char *as_order = two_readers ("anticipatory", &as);
  g_autofree char *dl_order = two_readers ("deadline", &dl);
  g_test_message ("anticipatory: mean run %.1f, contiguous %u/%u; deadline: mean run %.1f, "
                  "contiguous %u/%u", as.mean_run, as.contiguous, as.dispatches, dl.mean_run,
                  dl.contiguous, dl.dispatches);
  /* Deadline serves whichever request is queued when the disk frees up:
   * the other reader's, 0.1 ms before this one's next arrives. */
  g_assert_cmpfloat (dl.mean_run, <, 1.5);
  /* AS waits the 0.1 ms for the same reader: streams stay together until
   * the other reader's FIFO deadline (125 ms) forces a switch. */
  g_assert_cmpfloat (as.mean_run, >, 20);
  g_assert_cmpfloat (as.mean_run, <, as.dispatches / 4.0);
  g_assert_cmpuint (as.contiguous, >, 9 * as.dispatches / 10);

  /* Determinism: the same input gives the same order. */
  RunStats again;
  g_autofree char *as_again = two_readers ("anticipatory", &again);
  g_assert_cmpstr (as_order, ==, as_again);
}

/* A sequential reader against a writer with many async writes queued
 * elsewhere: reads completed in the first 500 ms; writes completed and
 * write batches started in the first second. */
typedef struct {
  guint reads;
  guint writes;
  guint antic_starts;
  guint write_batches;
} ReaderWriter;

static guint
count_lines (const GString *log, const char *what)
{
  guint n = 0;
  for (const char *p = log->str; (p = strstr (p, what)) != NULL; p++)
    n++;
  return n;
}

static ReaderWriter
reader_vs_writer (const char *sched)
{
  ReaderWriter out;
  Fixture f;
  fixture_setup_full (&f, sched, 1000, NULL, disk_no_ncq);
  Reader r = { .f = &f, .pid = 1, .sector = 1000, .nr_sectors = 8, .remaining = 100000,
               .think_ns = 100 * SIM_NS_PER_US };
  for (guint i = 0; i < 100; i++)
    write_async (&f, 2, 300000000 + 2000 * i);
  reader_submit (f.sim, &r, NULL);
  sim_run_until (f.sim, MS (500));
  out.reads = f.completed_by_pid[1];
  sim_run_until (f.sim, MS (1000));
  out.writes = f.completed_by_pid[2];
  out.antic_starts = count_lines (f.log, "antic_start");
  out.write_batches = count_lines (f.log, "batch_start dir=write");
  r.remaining = 0;
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_true (f.e->ops->queue_empty (f.e));
  g_assert_cmpuint (f.completed_by_pid[2], ==, 100);
  if (strcmp (sched, "anticipatory") == 0)
    {
      g_assert_true (sched_as_check_invariants (f.e));
      g_assert_cmpint (as_value (&f, "nr_dispatched"), ==, 0);
    }
  fixture_teardown (&f);
  return out;
}

static void
test_reader_vs_writer (void)
{
  ReaderWriter as = reader_vs_writer ("anticipatory");
  ReaderWriter dl = reader_vs_writer ("deadline");
  g_test_message ("anticipatory: %u reads in 500 ms, %u writes in 1 s (%u antic_start, "
                  "%u write batches); deadline: %u reads, %u writes",
                  as.reads, as.writes, as.antic_starts, as.write_batches, dl.reads, dl.writes);
  /* AS waits the 0.1 ms for the reader instead of seeking to the writes
   * (deadline sends up to fifo_batch writes whenever the reader thinks) ... */
  g_assert_cmpuint (as.antic_starts, >, 0);
  g_assert_cmpuint (as.reads, >, 2 * dl.reads);
  /* ... without starving the writes: a write batch runs once the read
   * batch (500 ms) expires. */
  g_assert_cmpuint (as.write_batches, >, 0);
  g_assert_cmpuint (as.writes, >, 0);
}

static void
test_forced_dispatch (void)
{
  Fixture f;
  fixture_setup (&f, NULL);
  /* Queued behind the plug: two reads and two writes. */
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 3000, 8, bio_done, &f);
  submit_bio (&f, 2, SIM_OP_READ, TRUE, 1000, 8, bio_done, &f);
  write_async (&f, 3, 9000);
  g_assert_false (f.e->ops->queue_empty (f.e));
  g_assert_cmpint (f.e->ops->dispatch (f.e, TRUE, 0), ==, 3);
  g_assert_true (f.e->ops->queue_empty (f.e));
  g_assert_true (sched_as_check_invariants (f.e));
  sim_queue_unplug (f.q, NULL);
  drain (&f);
  g_assert_cmpuint (f.completed, ==, 3);
  fixture_teardown (&f);
}

static void
test_merges (void)
{
  Fixture f;
  fixture_setup (&f, NULL);
  /* Back merge through the core's last_merge, then a request-to-request
   * merge: the absorbed request leaves its process's count. */
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 0, 8, bio_done, &f);
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 16, 8, bio_done, &f);
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 8, 8, bio_done, &f);
  g_assert_cmpuint (f.q->counters.request_merges, ==, 1);
  g_assert_cmpint (aic_value (&f, 1, "nr_queued"), ==, 1);
  g_assert_true (sched_as_check_invariants (f.e));
  /* The tree lookup of as_merge is indexed by data direction while the
   * trees are indexed by sync: a write bio looks in the sync tree, a read
   * bio in the async one.  So a sync (O_DIRECT) write front-merges ... */
  submit_bio (&f, 3, SIM_OP_WRITE, TRUE, 70008, 8, bio_done, &f);
  submit_bio (&f, 3, SIM_OP_WRITE, TRUE, 80000, 8, bio_done, &f);
  submit_bio (&f, 3, SIM_OP_WRITE, TRUE, 70000, 8, bio_done, &f);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  g_assert_cmpint (aic_value (&f, 3, "nr_queued"), ==, 2);
  /* ... but neither async writes nor reads do. */
  write_async (&f, 2, 50008);
  write_async (&f, 2, 90000);
  write_async (&f, 2, 50000);
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 2000, 8, bio_done, &f);
  submit_bio (&f, 1, SIM_OP_READ, TRUE, 1992, 8, bio_done, &f);
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  g_assert_cmpint (aic_value (&f, 2, "nr_queued"), ==, 3);
  /* Two new reads queued; the merged read went to the device when the
   * queue reached unplug_thresh. */
  g_assert_cmpstr (f.order->str, ==, "1:R0 ");
  g_assert_cmpint (aic_value (&f, 1, "nr_queued"), ==, 2);
  g_assert_true (sched_as_check_invariants (f.e));
  sim_queue_unplug (f.q, NULL);
  drain (&f);
  g_assert_cmpuint (f.completed, ==, 11);
  fixture_teardown (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sched/as/hz", test_hz);
  g_test_add_func ("/sched/as/tunables", test_tunables);
  g_test_add_func ("/sched/as/think-time-and-seek", test_think_time_and_seek);
  g_test_add_func ("/sched/as/seek-clamp", test_seek_clamp);
  g_test_add_func ("/sched/as/choose-req", test_choose_req);
  g_test_add_func ("/sched/as/close-window", test_close_window);
  g_test_add_func ("/sched/as/close-window-hz100", test_close_window_hz100);
  g_test_add_func ("/sched/as/close-seek-mean", test_close_seek_mean);
  g_test_add_func ("/sched/as/break/same-process", test_break_same_process);
  g_test_add_func ("/sched/as/break/timeout", test_break_timeout);
  g_test_add_func ("/sched/as/break/queued", test_break_queued);
  g_test_add_func ("/sched/as/break/think-time", test_break_think_time);
  g_test_add_func ("/sched/as/break/new-think-time", test_break_new_think_time);
  g_test_add_func ("/sched/as/break/exit", test_break_exit);
  g_test_add_func ("/sched/as/break/exit-cooperator", test_exit_cooperator);
  g_test_add_func ("/sched/as/wait-req-then-timeout", test_wait_req_then_timeout);
  g_test_add_func ("/sched/as/write-batch-count", test_write_batch_count);
  g_test_add_func ("/sched/as/batch-trace", test_batch_trace);
  g_test_add_func ("/sched/as/two-sequential-readers", test_two_sequential_readers);
  g_test_add_func ("/sched/as/reader-vs-writer", test_reader_vs_writer);
  g_test_add_func ("/sched/as/forced-dispatch", test_forced_dispatch);
  g_test_add_func ("/sched/as/merges", test_merges);
  return g_test_run ();
}
