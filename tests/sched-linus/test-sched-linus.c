/* test-sched-linus.c — the 2.4 elevator (2.4.18 drivers/block/elevator.c
 * elevator_linus_merge, merge_cleanup, merge_req; 2.4.20's seek
 * accounting; Red Hat 2.4.18's read-latency2) and the 2.4 request pool
 * wakeups (2.4.18 and 2.4.19 drivers/block/ll_rw_blk.c), driven bio by bio
 * into a plugged queue and read back from the elevator's dump: the list in
 * service order with each request's elevator_sequence.  Every expected
 * sequence is worked out by hand in the comment above its case. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"

#define N_IOCS 4

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SchedQueue      *e;
  SimIoContext     iocs[N_IOCS];
} Fixture;

/* A fixed-time device (5 ms a request); the queue never unplugs on its
 * own threshold, so what is submitted at time 0 stays in the elevator. */
static void
fixture_setup (Fixture *f, const char *sched, const char *tunables, guint nr_requests)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  limits.unplug_thresh = 1000;
  limits.nr_requests = nr_requests;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", "[device]\nkind = fixed\noverhead = 5ms\n"
                                                  "bandwidth = 1000GB/s\n", &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched t]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  f->e = sched_queue_new (sched_ops_lookup (sched), f->q, f->sim, 1000, kf, "sched t", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (f->q, f->e);
  for (guint i = 0; i < N_IOCS; i++)
    {
      f->iocs[i].pid = i;
      f->iocs[i].comm = "t";
      f->iocs[i].nr_tasks = 1;
    }
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
}

/* Submit "W1000/8" (op, sector, sectors); TRUE if it was queued, FALSE if
 * it sleeps on @waiter. */
static gboolean
submit (Fixture *f, const char *what, guint pid, SimBioWaiter *waiter)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  char op;
  guint64 sector;
  guint nr;
  g_assert_cmpint (sscanf (what, "%c%" G_GUINT64_FORMAT "/%u", &op, &sector, &nr), ==, 3);
  bio->op = op == 'W' ? SIM_OP_WRITE : SIM_OP_READ;
  bio->flags = op == 'R' ? SIM_BIO_SYNC : 0;
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->ioc = &f->iocs[pid];
  bio->end_io = bio_done;
  return sim_queue_submit_bio (f->q, bio, waiter);
}

static void
submit_all (Fixture *f, const char *list)
{
  g_auto (GStrv) items = g_strsplit (list, " ", -1);
  for (guint i = 0; items[i]; i++)
    g_assert_true (submit (f, items[i], 0, NULL));
}

/* The elevator's list in service order: "W1000/8:16382 R2000/8:8192". */
static char *
queue_state (Fixture *f)
{
  g_autoptr (GString) out = g_string_new (NULL);
  f->e->ops->dump (f->e, out);
  g_auto (GStrv) lines = g_strsplit (out->str, "\n", -1);
  GString *state = g_string_new (NULL);
  for (guint i = 0; lines[i]; i++)
    {
      char op;
      guint64 sector;
      guint nr;
      int seq;
      if (sscanf (lines[i], "rq %c%" G_GUINT64_FORMAT " sectors=%u seq=%d", &op, &sector, &nr,
                  &seq) == 4)
        g_string_append_printf (state, "%s%c%" G_GUINT64_FORMAT "/%u:%d", state->len ? " " : "",
                                op, sector, nr, seq);
    }
  return g_string_free (state, FALSE);
}

/* ---- insertion and merging under the passover budgets ------------------ */

typedef struct {
  const char *name;
  const char *tunables;
  const char *bios;       /* submitted in order at time 0 */
  const char *expect;     /* the list afterwards, head first, with sequences */
} OrderCase;

static const OrderCase order_cases[] = {
  /* W1000 16384.  W3000: its walk passes W1000 (16383), no spot in
   * between: tail.  W2000: passes W3000 (16383), then W1000 (16382), and
   * falls between W1000 and W3000 (bh_rq_in_between). */
  { "sorted", NULL, "W1000/8 W3000/8 W2000/8",
    "W1000/8:16382 W2000/8:16384 W3000/8:16383" },
  /* A read sorts in between writes like any request, with read_latency. */
  { "read-between-writes", NULL, "W1000/8 W3000/8 R2000/8",
    "W1000/8:16382 R2000/8:8192 W3000/8:16383" },
  /* write_latency 1: W3000's walk takes W1000 to 0 (and stops: 0 is less
   * than the block's 8 sectors).  R2000 passes W3000 (1 -> 0), then finds
   * W1000 spent: W1000 goes to -1 and ends the walk before R2000 could be
   * placed after it; the read goes to the tail. */
  { "spent-budget-is-a-barrier", "write_latency = 1\n", "W1000/8 W3000/8 R2000/8",
    "W1000/8:-1 W3000/8:0 R2000/8:8192" },
  /* A block never passes a request of its direction whose sequence,
   * after the walk's decrement, is below its sectors: read_latency 1,
   * R3000's walk leaves R1000 at 0 and stops; R2000's leaves R3000 at 0
   * and stops there, so it cannot reach its place after R1000. */
  { "budget-below-block-stops", "read_latency = 1\n", "R1000/8 R3000/8 R2000/8",
    "R1000/8:0 R3000/8:0 R2000/8:1" },
  /* Nothing goes in front of the head (bh_rq_in_between never places a
   * block before the first request): R500 waits for the next sweep. */
  { "never-before-head", NULL, "R1000/8 R2000/8 R500/8",
    "R1000/8:8190 R2000/8:8191 R500/8:8192" },
  /* A block merges only into a request whose sequence (after the walk's
   * decrement) still covers its sectors: write_latency 8, W1008's walk
   * leaves W1000 at 7 < 8, so it becomes a request of its own. */
  { "no-merge-past-budget", "write_latency = 8\n", "W1000/8 W1008/8",
    "W1000/8:7 W1008/8:8" },
  /* Back merge, 2.4.18 merge_cleanup: W1008's walk passes W3000 (16383)
   * and W1000 (16382) and merges into W1000; W3000, behind it, loses the
   * block's 8 sectors: 16375. */
  { "back-merge-charges-behind", NULL, "W1000/8 W3000/8 W1008/8",
    "W1000/16:16382 W3000/8:16375" },
  /* Front merge: W2992 extends W3000 (the tail) at the front, which costs
   * it the walk's 1 and the block's 8: 16375; W1000 was passed once, by
   * W3000's walk. */
  { "front-merge-costs-sectors", NULL, "W1000/8 W3000/8 W2992/8",
    "W1000/8:16383 W2992/16:16375" },
  /* W1008 front-merges into W1016 (16384 - 1 - 8 = 16375), which then
   * joins W1000 (16383, passed by W1016's walk): the merged request keeps
   * the smaller sequence (elevator_linus_merge_req). */
  { "merged-requests-keep-smaller", NULL, "W1000/8 W1016/8 W1008/8",
    "W1000/24:16375" },
  /* block_size 1024: a 4 KiB bio is 4 buffer heads.  W1000: its 3 later
   * blocks pass it: 16381.  W3000: its first walk passes W1000 (16380);
   * its own 3 later blocks: 16381.  W2000: the walk passes W3000 (16380)
   * and W1000 (16379) and goes between them; its 3 later blocks pass it
   * (16381) and W3000 behind it 3 times, each charging their 2 sectors
   * too: 16380 - 3 - 6 = 16371. */
  { "one-walk-per-block", "block_size = 1024\n", "W1000/8 W3000/8 W2000/8",
    "W1000/8:16379 W2000/8:16381 W3000/8:16371" },
  /* read-latency2 (max_bomb_segments 2): R500 fits nowhere in sector order
   * (tail for vanilla, next case) but goes in front of all writes beyond
   * the first 2 segments (each 8-sector write is 1 + 8/64 = 1). */
  { "read-latency2-bomb", "max_bomb_segments = 2\n", "W1000/8 W2000/8 W3000/8 R500/8",
    "W1000/8:16381 W2000/8:16382 R500/8:8192 W3000/8:16383" },
  { "vanilla-read-to-tail", NULL, "W1000/8 W2000/8 W3000/8 R500/8",
    "W1000/8:16381 W2000/8:16382 W3000/8:16383 R500/8:8192" },
  /* read-latency2 still merges past a spent sequence (write_latency 1):
   * W3000's walk leaves W1000 at 0; W1008 passes W3000 (0) and W1000
   * (-1, a spent point: no insertion behind it, but merging goes on) and
   * back-merges into it, with no merge charges. */
  { "read-latency2-merges-past-spent", "max_bomb_segments = 6\nwrite_latency = 1\n",
    "W1000/8 W3000/8 W1008/8", "W1000/16:-1 W3000/8:0" },
  /* era 2.4.20 (Jens Axboe's seek accounting): the walk ages nothing;
   * W2000 goes after W1000 and the request behind it, W3000, pays the
   * seek: 8192 - 16. */
  { "2.4.20-seek-cost", "era = 2.4.20\n", "W1000/8 W3000/8 W2000/8",
    "W1000/8:8192 W2000/8:8192 W3000/8:8176" },
  { "2.4.20-read-latency", "era = 2.4.20\n", "W1000/8 W3000/8 R2000/8",
    "W1000/8:8192 R2000/8:2048 W3000/8:8176" },
  /* A merge costs the requests behind it 1 (W3000), no sector charges. */
  { "2.4.20-back-merge-costs-one", "era = 2.4.20\n", "W1000/8 W3000/8 W1008/8",
    "W1000/16:8192 W3000/8:8191" },
  /* A front merge costs its request 1. */
  { "2.4.20-front-merge-costs-one", "era = 2.4.20\n", "W1000/8 W3000/8 W2992/8",
    "W1000/8:8192 W2992/16:8191" },
  /* write_latency 16: W2000's insertion leaves W3000 at 0.  W2500's walk
   * meets spent W3000 first: no insertion point behind it, so W2500 goes
   * to the tail (it belongs after W2000); W3008's walk passes W2500 and
   * still merges into spent W3000, which costs W2500 one. */
  { "2.4.20-spent-stops-insertion-not-merge", "era = 2.4.20\nwrite_latency = 16\n",
    "W1000/8 W3000/8 W2000/8 W2500/8 W3008/8",
    "W1000/8:16 W2000/8:16 W3000/16:0 W2500/8:15" },
  /* block_size 1024: W2000's first block pays the seek on W3000 (16),
   * its 3 later blocks merge into it and cost W3000 one each. */
  { "2.4.20-one-charge-per-block", "era = 2.4.20\nblock_size = 1024\n",
    "W1000/8 W3000/8 W2000/8", "W1000/8:8192 W2000/8:8192 W3000/8:8173" },
};

static void
test_order (gconstpointer data)
{
  const OrderCase *c = data;
  Fixture f;
  fixture_setup (&f, "linus", c->tunables, 64);
  submit_all (&f, c->bios);
  g_autofree char *state = queue_state (&f);
  g_assert_cmpstr (state, ==, c->expect);
  fixture_teardown (&f);
}

/* ---- service order ------------------------------------------------------ */

typedef struct {
  GString *order;
} IssueLog;

static void
record_issue (gpointer data, const TraceRecord *rec)
{
  IssueLog *log = data;
  if (rec->action == TRACE_ACT_ISSUE)
    g_string_append_printf (log->order, "%s%c%" G_GUINT64_FORMAT, log->order->len ? " " : "",
                            (rec->rwbs & TRACE_RWBS_WRITE) ? 'W' : 'R', rec->sector);
}

/* The driver serves the list from its head: after the unplug the device
 * sees the sorted list, the barrier case in its stopped order. */
static void
test_service_order (void)
{
  const struct { const char *tunables; const char *expect; } rows[] = {
    { NULL, "W1000 R2000 W3000" },
    { "write_latency = 1\n", "W1000 W3000 R2000" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      Fixture f;
      IssueLog log = { g_string_new (NULL) };
      fixture_setup (&f, "linus", rows[i].tunables, 64);
      sim_queue_set_trace (f.q, record_issue, &log);
      submit_all (&f, "W1000/8 W3000/8 R2000/8");
      sim_queue_unplug (f.q, NULL);
      sim_run_until (f.sim, SIM_TIME_NEVER);
      g_assert_cmpstr (log.order->str, ==, rows[i].expect);
      g_assert_true (f.e->ops->queue_empty (f.e));
      g_string_free (log.order, TRUE);
      fixture_teardown (&f);
    }
}

/* ---- request pool wakeups by era --------------------------------------- */

typedef struct {
  Fixture *f;
  guint    woke_after;   /* requests completed when this sleeper got its request */
} Sleeper;

static void
sleeper_resume (Sim *sim, gpointer data, SimTime now)
{
  Sleeper *s = data;
  s->woke_after = (guint) s->f->q->counters.completed;
}

typedef struct {
  const char *name;
  const char *sched;
  const char *tunables;
  guint       woke_a;
  guint       woke_b;
} PoolCase;

/* 4 write requests per direction: batch_requests = 2 * 4 / 4 = 2.  The
 * pool is filled with 4 writes, then A and B sleep for one each.
 *  - 2.4.18: at the 2nd completion 2 are free: wake_up wakes both; each
 *    takes one.
 *  - 2.4.19 (and 2.4.20-2.4.21): at the 2nd completion one sleeper (A,
 *    FIFO) wakes and takes one (1 free); the 3rd completion frees the 2nd
 *    again: B.
 *  - 2.6 (deadline, the core's rule): each completion hands its request
 *    to the next sleeper. */
static const PoolCase pool_cases[] = {
  { "2.4.18-wakes-all", "linus", "era = 2.4.18\n", 2, 2 },
  { "2.4.19-wakes-one", "linus", "era = 2.4.19\n", 2, 3 },
  { "2.4.20-as-2.4.19", "linus", "era = 2.4.20\n", 2, 3 },
  { "2.6-each-free", "deadline", NULL, 1, 2 },
};

static void
test_pool (gconstpointer data)
{
  const PoolCase *c = data;
  Fixture f;
  fixture_setup (&f, c->sched, c->tunables, 4);
  submit_all (&f, "W1000/8 W2000/8 W3000/8 W4000/8");
  Sleeper a = { &f, G_MAXUINT }, b = { &f, G_MAXUINT };
  SimBioWaiter wa = { .resume = sleeper_resume, .resume_data = &a };
  SimBioWaiter wb = { .resume = sleeper_resume, .resume_data = &b };
  g_assert_false (submit (&f, "W5000/8", 1, &wa));
  g_assert_false (submit (&f, "W6000/8", 2, &wb));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (a.woke_after, ==, c->woke_a);
  g_assert_cmpuint (b.woke_after, ==, c->woke_b);
  g_assert_cmpuint (f.q->counters.completed, ==, 6);
  fixture_teardown (&f);
}

/* 2.4.18's wake_up is shared by both directions: a read sleeper wakes
 * when writes free up, and takes a read request if one is free by then;
 * 2.4.19 wakes only the direction that was freed, at batch_requests.
 * The list is served in sector order R100 W200 W300 R400 R500 R600 with
 * the read pool (4) full and R700 asleep; batch_requests = 2.
 *  - completion 1 (R100): 1 read free, below the batch: nobody wakes;
 *  - completion 2 (W200): 3 writes free: 2.4.18 wakes every sleeper and
 *    the reader takes the free read; 2.4.19 wakes write sleepers only;
 *  - completion 4 (R400): 2 reads free: 2.4.19 wakes the reader. */
static void
test_pool_shared_wait_queue (void)
{
  const struct { const char *tunables; guint read_woke; } rows[] = {
    { "era = 2.4.18\n", 2 },
    { "era = 2.4.19\n", 4 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      Fixture f;
      fixture_setup (&f, "linus", rows[i].tunables, 4);
      submit_all (&f, "R100/8 W200/8 W300/8 R400/8 R500/8 R600/8");
      Sleeper r = { &f, G_MAXUINT };
      SimBioWaiter wr = { .resume = sleeper_resume, .resume_data = &r };
      g_assert_false (submit (&f, "R700/8", 1, &wr));
      sim_run_until (f.sim, SIM_TIME_NEVER);
      g_assert_cmpuint (r.woke_after, ==, rows[i].read_woke);
      g_assert_cmpuint (f.q->counters.completed, ==, 7);
      fixture_teardown (&f);
    }
}

/* ---- tunables, eras, listing ------------------------------------------- */

static void
test_defaults (void)
{
  const SchedOps *ops = sched_ops_lookup ("linus");
  g_assert_nonnull (ops);
  g_assert_true (ops->flags & SCHED_F_SCAN_MERGE);
  g_assert_cmpuint (ops->default_nr_requests, ==, 64);
  const struct { const char *name; int value; } rows[] = {
    { "era", 20418 },
    { "read_latency", -1 },     /* the era's: tested through new requests above */
    { "write_latency", -1 },
    { "max_bomb_segments", 0 },
    { "block_size", 4096 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      const SchedTunable *t = &ops->tunables[i];
      g_assert_cmpstr (t->name, ==, rows[i].name);
      g_assert_cmpint (sched_tunable_default (t, 100), ==, rows[i].value);
    }
}

static void
test_bad_tunables (void)
{
  const char *bad[] = { "era = 2.6.28\n", "era = 2.4.17\n", "era = 2.4.22\n",
                        "block_size = 1000\n", "era = 2.4.20\nmax_bomb_segments = 6\n" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GKeyFile) kf = g_key_file_new ();
      g_autofree char *text = g_strdup_printf ("[sched t]\n%s", bad[i]);
      g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
      g_autoptr (GError) error = NULL;
      SchedQueue *e = sched_queue_new (sched_ops_lookup ("linus"), NULL, NULL, 1000, kf,
                                       "sched t", &error);
      g_assert_null (e);
      g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (order_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sched/linus/order/%s", order_cases[i].name);
      g_test_add_data_func (path, &order_cases[i], test_order);
    }
  for (guint i = 0; i < G_N_ELEMENTS (pool_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sched/linus/pool/%s", pool_cases[i].name);
      g_test_add_data_func (path, &pool_cases[i], test_pool);
    }
  g_test_add_func ("/sched/linus/pool/shared-wait-queue", test_pool_shared_wait_queue);
  g_test_add_func ("/sched/linus/service-order", test_service_order);
  g_test_add_func ("/sched/linus/defaults", test_defaults);
  g_test_add_func ("/sched/linus/bad-tunables", test_bad_tunables);
  return g_test_run ();
}
