/* test-sched-bfq.c — BFQ (Linux 6.18 rules, models/sched/sched-bfq*.c):
 * tunables and HZ truncation, budget feedback per expiration reason,
 * B-WF2Q+ ordering, eligibility and idle-tree rules, request choice
 * (back seeks, FIFO), the idling decision, strict guarantees, peak rate and
 * max_budget autotuning, weight raising (interactive start and end, soft
 * real-time, large bursts), early queue merge (also at a bio merge) and
 * split, stable merge, process exit, empty queues after the work ran out,
 * determinism, and behaviours on a seek-bound disk (a sequential reader's
 * share against a random reader; interleaved readers of one file
 * recovering throughput, every one of them served).
 *
 * Processes are closed-loop streams of bios against a fixed-time device:
 * each completion submits the stream's next bio.  Decisions are read from
 * the policy's --trace-sched lines.
 */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/scenario.h"
#include "models/sched/sched.h"
#include "models/sched/sched-bfq-private.h"

#define ROT_DEV   "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\nrotational = true\n"
#define FAST_DEV  "[device]\nkind = fixed\noverhead = 0.1ms\nbandwidth = 100MB/s\nrotational = true\n"
#define MAX_STREAMS 10

typedef struct _Fixture Fixture;

typedef struct {
  Fixture     *f;
  SimIoContext ioc;
  guint64      next_sector;
  guint64      stride;        /* sectors from one start to the next (sequential) */
  guint32      nr_sectors;
  guint        depth;         /* bios kept outstanding */
  guint64      remaining;     /* bios still to submit */
  gboolean     sync;
  SimOp        op;
  guint64      random_after;  /* after this many bios, go random (0: never) */
  guint64      issued;
  guint64      rng;
  SimTime      think_ns;      /* pause between a completion and the next bio */
  guint64      done_sectors;
  guint64      done_ios;
} Stream;

struct _Fixture {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SchedQueue      *e;
  GString         *log;
  Stream           streams[MAX_STREAMS];
  guint            n_streams;
};

static void
log_cb (gpointer data, SimTime now_ns, const char *device, const char *sched, const char *msg)
{
  Fixture *f = data;
  g_string_append_printf (f->log, "%" G_GINT64_FORMAT " %s\n", now_ns, msg);
}

static void
fixture_setup_hz (Fixture *f, const char *tunables, const char *device, guint hz)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, hz);
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", device ? device : ROT_DEV, &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched bfq]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  f->e = sched_queue_new (&sched_bfq_ops, f->q, f->sim, hz, kf, "sched bfq", &error);
  g_assert_no_error (error);
  f->log = g_string_new (NULL);
  f->e->log = log_cb;
  f->e->log_data = f;
  sim_queue_set_elevator (f->q, f->e);
}

static void
fixture_setup (Fixture *f, const char *tunables, const char *device)
{
  fixture_setup_hz (f, tunables, device, 1000);
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->log, TRUE);
}

/* xorshift64: a deterministic stream of positions. */
static guint64
next_random (Stream *s)
{
  s->rng ^= s->rng << 13;
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  return s->rng;
}

static void stream_submit (Stream *s);

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Stream *s = bio->end_io_data;
  s->done_sectors += bio->nr_sectors;
  s->done_ios++;
  g_assert_true (sched_bfq_check_invariants (s->f->e));
  stream_submit (s);
}

static void
think_done (Sim *sim, gpointer subject, gpointer object)
{
  Stream *s = subject;
  if (s->remaining == 0)
    return;
  SimBio *bio = sim_queue_bio_alloc (s->f->q);
  if (s->random_after && s->issued >= s->random_after)
    bio->sector = (next_random (s) % 20000000) / 8 * 8;
  else
    {
      bio->sector = s->next_sector;
      s->next_sector += s->stride;
    }
  bio->nr_sectors = s->nr_sectors;
  bio->op = s->op;
  bio->flags = s->sync ? SIM_BIO_SYNC : 0;
  bio->ioc = &s->ioc;
  bio->end_io = bio_done;
  bio->end_io_data = s;
  s->remaining--;
  s->issued++;
  g_assert_true (sim_queue_submit_bio (s->f->q, bio, NULL));
}

static void
stream_submit (Stream *s)
{
  if (s->think_ns > 0)
    sim_schedule_in (s->f->sim, s->think_ns, think_done, s, NULL);
  else
    think_done (s->f->sim, s, NULL);
}

/* A sequential stream (stride = nr_sectors unless given). */
static Stream *
stream_add (Fixture *f, guint pid, int level, guint64 first, guint32 nr, guint depth,
            guint64 count, gboolean sync)
{
  g_assert (f->n_streams < MAX_STREAMS);
  Stream *s = &f->streams[f->n_streams++];
  s->f = f;
  s->ioc = (SimIoContext) { .pid = pid, .comm = "s", .ioprio_class = 2, .ioprio_level = level,
                            .nr_tasks = 1 };
  s->next_sector = first;
  s->stride = nr;
  s->nr_sectors = nr;
  s->depth = depth;
  s->remaining = count;
  s->sync = sync;
  s->op = sync ? SIM_OP_READ : SIM_OP_WRITE;
  s->rng = 0x9e3779b97f4a7c15ull * (pid + 1);
  return s;
}

static void
stream_start (Stream *s)
{
  for (guint i = 0; i < s->depth; i++)
    think_done (s->f->sim, s, NULL);
}

/* Start later: queues created within 180 ms of each other are paired for
 * a "stable" merge. */
static void
stream_start_at (Stream *s, SimTime at_ns)
{
  for (guint i = 0; i < s->depth; i++)
    sim_schedule_at (s->f->sim, at_ns, think_done, s, NULL);
}

static guint
count_lines (const GString *log, const char *needle)
{
  guint n = 0;
  for (const char *p = log->str; (p = strstr (p, needle)) != NULL; p++)
    n++;
  return n;
}

/* Time of the first log line containing @needle, or -1. */
static SimTime
first_time_of (const char *log, const char *needle)
{
  const char *p = strstr (log, needle);
  if (p == NULL)
    return -1;
  while (p > log && p[-1] != '\n')
    p--;
  return g_ascii_strtoll (p, NULL, 10);
}

static SimTime
first_time (const GString *log, const char *needle)
{
  return first_time_of (log->str, needle);
}

static const SchedTunable *
tunable (const char *name)
{
  for (const SchedTunable *t = sched_bfq_ops.tunables; t->name; t++)
    if (strcmp (t->name, name) == 0)
      return t;
  g_assert_not_reached ();
}

static SchedQueue *
probe (const char *tunables, guint hz, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched bfq]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  return sched_queue_new (&sched_bfq_ops, NULL, NULL, hz, kf, "sched bfq", error);
}

/* ---- tunables ------------------------------------------------------------ */

static void
test_tunables (void)
{
  /* timeout_sync = HZ/8, truncated; slice_idle is kept in ns (8 ms at any HZ). */
  g_assert_cmpint (sched_tunable_default (tunable ("timeout_sync"), 1000), ==, 125);
  g_assert_cmpint (sched_tunable_default (tunable ("timeout_sync"), 250), ==, 31);
  g_assert_cmpint (sched_tunable_default (tunable ("timeout_sync"), 100), ==, 12);
  g_assert_cmpint (tunable ("slice_idle")->default_ns, ==, 8 * SIM_NS_PER_MS);
  g_assert_cmpint (sched_tunable_default (tunable ("back_seek_max"), 1000), ==, 16384);
  g_assert_cmpint (sched_tunable_default (tunable ("back_seek_penalty"), 1000), ==, 2);
  g_assert_cmpint (sched_tunable_default (tunable ("max_budget"), 1000), ==, 0);
  g_assert_cmpint (sched_tunable_default (tunable ("low_latency"), 1000), ==, 1);
  g_assert_cmpint (sched_tunable_default (tunable ("strict_guarantees"), 1000), ==, 0);

  g_autoptr (GError) error = NULL;
  g_autoptr (SchedQueue) e = probe (NULL, 100, &error);
  g_assert_no_error (error);
  BfqData *d = sched_bfq_data (e);
  g_assert_cmpint (d->timeout_j, ==, 12);
  g_assert_cmpint (d->slice_idle_ns, ==, 8 * SIM_NS_PER_MS);
  g_assert_cmpint (d->fifo_expire_ns[1], ==, 125 * SIM_NS_PER_MS);
  g_assert_cmpint (d->fifo_expire_ns[0], ==, 250 * SIM_NS_PER_MS);
  g_assert_cmpint (d->bfq_max_budget, ==, 16384);

  g_autoptr (SchedQueue) e2 = probe ("timeout_sync = 50ms\nslice_idle_us = 500us\n"
                                     "max_budget = 4096\nback_seek_penalty = 0\n", 250, &error);
  g_assert_no_error (error);
  d = sched_bfq_data (e2);
  g_assert_cmpint (d->timeout_j, ==, 13);          /* 12.5 jiffies, rounded up */
  g_assert_cmpint (d->slice_idle_ns, ==, 500 * SIM_NS_PER_US);
  g_assert_cmpint (d->bfq_max_budget, ==, 4096);
  g_assert_cmpint (d->user_max_budget, ==, 4096);
  g_assert_cmpint (d->back_penalty, ==, 1);        /* clamped like the kernel's store */

  /* Storing timeout_sync recomputes an automatic max_budget: 2/3 of the
   * rotational reference rate (9333 sectors/us << 16) over 52 ms. */
  g_autoptr (SchedQueue) e3 = probe ("timeout_sync = 50ms\n", 250, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sched_bfq_data (e3)->bfq_max_budget, ==, (int) ((9333ull * 1000 * 52) >> 16));

  SchedQueue *bad = probe ("low_latency = maybe\n", 1000, &error);
  g_assert_null (bad);
  g_assert_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE);
}

/* ---- budget feedback ----------------------------------------------------- */

static int
recalc (BfqData *d, int max_budget, int service, int dispatched, int wr_coeff, gboolean sync,
        BfqExpiration reason)
{
  BfqQueue q;
  memset (&q, 0, sizeof q);
  q.sync = sync;
  q.wr_coeff = wr_coeff;
  q.max_budget = max_budget;
  q.entity.service = service;
  q.dispatched = dispatched;
  sched_bfq_recalc_budget (d, &q, reason);
  return q.max_budget;
}

static void
test_budget_feedback (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SchedQueue) e = probe ("low_latency = 0\n", 1000, &error);
  g_assert_no_error (error);
  BfqData *d = sched_bfq_data (e);
  /* Before enough budgets were assigned: min_budget = 16384 / 32. */
  g_assert_cmpint (sched_bfq_min_budget (d), ==, 512);
  /* TOO_IDLE with nothing outstanding shrinks by 4 min_budgets... */
  g_assert_cmpint (recalc (d, 4096, 100, 0, 1, TRUE, BFQQE_TOO_IDLE), ==, 4096 - 2048);
  /* ...or falls to min_budget when not above 5 min_budgets... */
  g_assert_cmpint (recalc (d, 2560, 100, 0, 1, TRUE, BFQQE_TOO_IDLE), ==, 512);
  g_assert_cmpint (recalc (d, 2561, 100, 0, 1, TRUE, BFQQE_TOO_IDLE), ==, 513);
  /* ...and doubles while requests are still in flight. */
  g_assert_cmpint (recalc (d, 4096, 100, 1, 1, TRUE, BFQQE_TOO_IDLE), ==, 8192);
  /* BUDGET_TIMEOUT doubles, BUDGET_EXHAUSTED quadruples, capped. */
  g_assert_cmpint (recalc (d, 4096, 0, 0, 1, TRUE, BFQQE_BUDGET_TIMEOUT), ==, 8192);
  g_assert_cmpint (recalc (d, 12000, 0, 0, 1, TRUE, BFQQE_BUDGET_TIMEOUT), ==, 16384);
  g_assert_cmpint (recalc (d, 2048, 0, 0, 1, TRUE, BFQQE_BUDGET_EXHAUSTED), ==, 8192);
  g_assert_cmpint (recalc (d, 8192, 0, 0, 1, TRUE, BFQQE_BUDGET_EXHAUSTED), ==, 16384);
  /* NO_MORE_REQUESTS: what it received, at least min_budget. */
  g_assert_cmpint (recalc (d, 8192, 3000, 0, 1, TRUE, BFQQE_NO_MORE_REQUESTS), ==, 3000);
  g_assert_cmpint (recalc (d, 8192, 100, 0, 1, TRUE, BFQQE_NO_MORE_REQUESTS), ==, 512);
  /* Preemption leaves the budget alone. */
  g_assert_cmpint (recalc (d, 3333, 100, 0, 1, TRUE, BFQQE_PREEMPTED), ==, 3333);
  /* Raised queues get 2 min_budgets, async queues the maximum. */
  g_assert_cmpint (recalc (d, 8192, 100, 0, 30, TRUE, BFQQE_BUDGET_EXHAUSTED), ==, 1024);
  g_assert_cmpint (recalc (d, 100, 100, 0, 1, FALSE, BFQQE_NO_MORE_REQUESTS), ==, 16384);

  /* Once enough budgets were assigned, the autotuned maximum rules. */
  d->budgets_assigned = 200;
  d->bfq_max_budget = 8000;
  g_assert_cmpint (sched_bfq_min_budget (d), ==, 250);
  g_assert_cmpint (recalc (d, 4096, 0, 0, 1, TRUE, BFQQE_BUDGET_EXHAUSTED), ==, 8000);
  g_assert_cmpint (recalc (d, 12000, 0, 0, 1, TRUE, BFQQE_PREEMPTED), ==, 12000);
  g_assert_cmpint (recalc (d, 12000, 9000, 0, 1, TRUE, BFQQE_NO_MORE_REQUESTS), ==, 8000);

  /* The next budget must fit the next request. */
  SimRequest rq;
  memset (&rq, 0, sizeof rq);
  rq.nr_sectors = 1000;
  rq.sync = TRUE;
  BfqQueue q;
  memset (&q, 0, sizeof q);
  q.sync = TRUE;
  q.wr_coeff = 1;
  q.entity.service = 10;
  q.next_rq = &rq;
  sched_bfq_recalc_budget (d, &q, BFQQE_NO_MORE_REQUESTS);
  g_assert_cmpint (q.max_budget, ==, 250);
  g_assert_cmpint (q.entity.budget, ==, 1000);
}

/* ---- B-WF2Q+ ------------------------------------------------------------- */

static void
entity_init (BfqEntity *e, int weight, int budget)
{
  memset (e, 0, sizeof *e);
  sim_rb_node_clear (&e->node);
  e->weight = e->orig_weight = weight;
  e->budget = budget;
}

/* Serve @e for @n sectors as the in-service entity, then requeue it. */
static void
serve_slot (BfqServiceTree *st, BfqEntity *e, int n)
{
  bfq_st_set_in_service (st, e);
  bfq_st_served (st, e, n);
  bfq_entity_requeue (st, e, TRUE);
  e->service = 0;
}

#define VT(x) ((guint64) (x) << BFQ_SERVICE_SHIFT)

static void
test_wf2q_equal_weights_alternate (void)
{
  BfqServiceTree st;
  BfqEntity a, b;
  bfq_st_init (&st);
  entity_init (&a, 10, 100);
  entity_init (&b, 10, 100);
  bfq_entity_activate (&st, &a, FALSE, 1);
  bfq_entity_activate (&st, &b, FALSE, 1);
  g_assert_cmpuint (a.start, ==, 0);
  g_assert_cmpuint (a.finish, ==, VT (10));
  g_assert_cmpuint (st.wsum, ==, 20);
  GString *order = g_string_new (NULL);
  for (int i = 0; i < 10; i++)
    {
      BfqEntity *next = bfq_st_lookup (&st, FALSE);
      g_string_append_c (order, next == &a ? 'A' : 'B');
      serve_slot (&st, next, 100);
      g_assert_true (bfq_st_check (&st));
    }
  /* Equal finish times tie FIFO: strict alternation. */
  g_assert_cmpstr (order->str, ==, "ABABABABAB");
  /* Ten budgets of 100 over wsum 20: V = 50. */
  g_assert_cmpuint (st.vtime, ==, VT (50));
  g_string_free (order, TRUE);
}

static void
test_wf2q_weights_proportional (void)
{
  BfqServiceTree st;
  BfqEntity a, b;
  bfq_st_init (&st);
  entity_init (&a, 10, 100);
  entity_init (&b, 20, 100);
  bfq_entity_activate (&st, &a, FALSE, 1);
  bfq_entity_activate (&st, &b, FALSE, 1);
  int na = 0, nb = 0;
  for (int i = 0; i < 300; i++)
    {
      BfqEntity *next = bfq_st_lookup (&st, FALSE);
      if (next == &a)
        na++;
      else
        nb++;
      serve_slot (&st, next, 100);
    }
  g_assert_cmpint (na + nb, ==, 300);
  g_assert_cmpint (ABS (nb - 2 * na), <=, 2);
}

static void
test_wf2q_eligibility (void)
{
  BfqServiceTree st;
  BfqEntity a, b;
  bfq_st_init (&st);
  entity_init (&a, 10, 1000);
  entity_init (&b, 10, 500);
  bfq_entity_activate (&st, &a, FALSE, 1);   /* S=0 F=100 */
  bfq_entity_activate (&st, &b, FALSE, 1);   /* S=0 F=50 */
  g_assert_true (bfq_st_lookup (&st, FALSE) == &b);
  /* b serves 200 sectors (V = 10), then empties: F = 20 > V, idle tree. */
  bfq_st_set_in_service (&st, &b);
  bfq_st_served (&st, &b, 200);
  g_assert_cmpuint (st.vtime, ==, VT (10));
  bfq_entity_deactivate (&st, &b, TRUE);
  g_assert_cmpint (b.where, ==, BFQ_ENT_IDLE);
  g_assert_cmpuint (st.wsum, ==, 20);      /* still counted while idle */
  /* Back at once: S = F = 20 > V, F = 20 + 100/10 = 21. */
  b.budget = 100;
  b.service = 0;
  bfq_entity_activate (&st, &b, FALSE, 1);
  g_assert_cmpuint (b.start, ==, VT (20));
  g_assert_cmpuint (b.finish, ==, VT (30));
  /* b has the smaller F but is not eligible: a goes. */
  g_assert_true (bfq_st_lookup (&st, FALSE) == &a);
  bfq_st_set_in_service (&st, &a);
  bfq_st_served (&st, &a, 150);             /* V = 10 + 7.5 */
  g_assert_true (bfq_st_lookup (&st, TRUE) == &b);   /* in-service: no jump */
  g_assert_cmpuint (st.vtime, <, VT (20));
  bfq_st_served (&st, &a, 50);              /* V = 20: b eligible */
  bfq_entity_requeue (&st, &a, TRUE);       /* a: S = 20, F = 120 */
  a.service = 0;
  g_assert_cmpuint (a.start, ==, VT (20));
  g_assert_true (bfq_st_lookup (&st, FALSE) == &b);
}

static void
test_wf2q_vtime_jump_and_forget (void)
{
  BfqServiceTree st;
  BfqEntity a, b;
  bfq_st_init (&st);
  entity_init (&a, 10, 100);
  entity_init (&b, 10, 100);
  bfq_entity_activate (&st, &a, FALSE, 1);
  bfq_entity_activate (&st, &b, FALSE, 1);
  /* b serves 60 (V = 3) and empties: F = 6 > V, idle. */
  bfq_st_set_in_service (&st, &b);
  bfq_st_served (&st, &b, 60);
  bfq_entity_deactivate (&st, &b, TRUE);
  g_assert_cmpint (b.where, ==, BFQ_ENT_IDLE);
  /* a serves 20 (V = 4) and empties: F = 2 <= V, forgotten. */
  bfq_st_set_in_service (&st, &a);
  bfq_st_served (&st, &a, 20);
  g_assert_cmpuint (st.vtime, ==, VT (4));
  bfq_entity_deactivate (&st, &a, TRUE);
  g_assert_cmpint (a.where, ==, BFQ_ENT_NONE);
  g_assert_false (a.on_st);
  g_assert_cmpuint (st.wsum, ==, 10);
  /* b returns: S = max(V, F) = 6 > V; alone, V jumps to it. */
  b.service = 0;
  bfq_entity_activate (&st, &b, FALSE, 1);
  g_assert_cmpuint (b.start, ==, VT (6));
  g_assert_true (bfq_st_lookup (&st, FALSE) == &b);
  g_assert_cmpuint (st.vtime, ==, VT (6));
  /* Serving past an idle entity's F forgets it. */
  bfq_st_set_in_service (&st, &b);
  a.service = 0;
  bfq_entity_activate (&st, &a, FALSE, 1);   /* new: S = V = 6, F = 16 */
  bfq_st_set_in_service (&st, &a);
  bfq_st_served (&st, &a, 10);               /* V = 6 + 10/20 */
  bfq_entity_deactivate (&st, &a, TRUE);     /* F = 7 > V: idle */
  g_assert_cmpint (a.where, ==, BFQ_ENT_IDLE);
  bfq_st_served (&st, &b, 40);               /* V = 6.5 + 40/20 = 8.5 >= 7 */
  g_assert_cmpint (a.where, ==, BFQ_ENT_NONE);
  g_assert_cmpuint (st.wsum, ==, 10);
  /* bfq_forget_idle, as the kernel has it: with the active tree empty and
   * every idle finish passed, V is set to the last idle finish. */
  g_assert_cmpuint (st.vtime, ==, VT (7));
  g_assert_true (bfq_st_check (&st));
}

/* ---- whole-policy ordering ----------------------------------------------- */

/* pids of budget_assign lines, in order, as "1 2 1 2 ...". */
static char *
slot_owners (const GString *log)
{
  GString *out = g_string_new (NULL);
  for (const char *p = log->str; (p = strstr (p, "budget_assign pid=")) != NULL; p++)
    g_string_append_printf (out, "%s%u", out->len ? " " : "",
                            (guint) g_ascii_strtoull (p + strlen ("budget_assign pid="), NULL, 10));
  return g_string_free (out, FALSE);
}

static void
test_order_equal_weights (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", FAST_DEV);
  Stream *a = stream_add (&f, 1, 4, 0, 64, 8, 100000, TRUE);
  Stream *b = stream_add (&f, 2, 4, 50000000, 64, 8, 100000, TRUE);
  stream_start (a);
  stream_start (b);
  sim_run_until (f.sim, 3 * SIM_NS_PER_S);
  /* Backlogged equal queues alternate slot by slot. */
  g_autofree char *owners = slot_owners (f.log);
  g_assert_cmpuint (strlen (owners), >, 20);
  g_assert_null (strstr (owners, "1 1"));
  g_assert_null (strstr (owners, "2 2"));
  double ratio = (double) b->done_sectors / (double) a->done_sectors;
  g_assert_cmpfloat (ratio, >, 0.9);
  g_assert_cmpfloat (ratio, <, 1.1);
  fixture_teardown (&f);
}

static void
test_order_weights_1_2 (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", FAST_DEV);
  /* ioprio 6 -> weight 20, ioprio 4 -> weight 40. */
  Stream *a = stream_add (&f, 1, 6, 0, 64, 8, 1000000, TRUE);
  Stream *b = stream_add (&f, 2, 4, 50000000, 64, 8, 1000000, TRUE);
  stream_start (a);
  stream_start (b);
  sim_run_until (f.sim, 10 * SIM_NS_PER_S);
  BfqQueue *qa = sched_bfq_queue_of (f.e, &a->ioc, TRUE);
  BfqQueue *qb = sched_bfq_queue_of (f.e, &b->ioc, TRUE);
  g_assert_cmpint (qa->entity.weight, ==, 20);
  g_assert_cmpint (qb->entity.weight, ==, 40);
  double ratio = (double) b->done_sectors / (double) a->done_sectors;
  g_assert_cmpfloat (ratio, >, 1.9);
  g_assert_cmpfloat (ratio, <, 2.1);
  fixture_teardown (&f);
}

/* ---- idling -------------------------------------------------------------- */

static guint
count_pid_after (const GString *log, const char *what, guint pid, SimTime after)
{
  g_autofree char *needle = g_strdup_printf ("%s pid=%u", what, pid);
  guint n = 0;
  g_auto (GStrv) lines = g_strsplit (log->str, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *msg = strchr (lines[i], ' ');
      if (msg && g_str_has_prefix (msg + 1, needle) && g_ascii_strtoll (lines[i], NULL, 10) > after)
        {
          char c = msg[1 + strlen (needle)];
          n += c == ' ' || c == '\0';
        }
    }
  return n;
}

static void
test_idle_sequential_vs_seeky (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  Stream *seq = stream_add (&f, 1, 4, 0, 64, 1, 1000000, TRUE);
  Stream *rnd = stream_add (&f, 2, 4, 0, 8, 1, 1000000, TRUE);
  rnd->random_after = 1;
  stream_start (seq);
  stream_start_at (rnd, 200 * SIM_NS_PER_MS);
  sim_run_until (f.sim, 4 * SIM_NS_PER_S);
  g_assert_null (strstr (f.log->str, "queue_merge"));
  BfqData *d = sched_bfq_data (f.e);
  BfqQueue *qs = sched_bfq_queue_of (f.e, &seq->ioc, TRUE);
  BfqQueue *qr = sched_bfq_queue_of (f.e, &rnd->ioc, TRUE);
  g_assert_false (sched_bfq_seeky (qs));
  g_assert_true (sched_bfq_seeky (qr));
  /* Once the random queue's history is seeky, the device never idles for
   * it (equal weights, another queue busy); it always idles for the
   * sequential one. */
  g_assert_cmpuint (count_pid_after (f.log, "idle_arm", 2, SIM_NS_PER_S), ==, 0);
  g_assert_cmpuint (count_pid_after (f.log, "idle_arm", 1, SIM_NS_PER_S), >, 100);
  g_assert_cmpuint (count_pid_after (f.log, "slice_expire", 2, SIM_NS_PER_S), >, 10);
  g_assert_cmpint (d->hw_tag, ==, -1);   /* never enough requests around to tell */
  fixture_teardown (&f);
}

static gboolean
idle_case (const char *device, const char *tunables, int hw_tag, gboolean seeky, gboolean sync,
           int busy, int wr_coeff, int other_weight)
{
  Fixture f;
  fixture_setup (&f, tunables, device);
  BfqData *d = sched_bfq_data (f.e);
  BfqQueue q;
  memset (&q, 0, sizeof q);
  q.sync = sync;
  q.class_idx = BFQ_CLASS_BE;
  q.nr_procs = 1;
  q.io_bound = TRUE;
  q.has_short_ttime = TRUE;
  q.seek_history = seeky ? G_MAXUINT32 : 0;
  q.wr_coeff = wr_coeff;
  q.entity.orig_weight = 40;
  q.entity.weight = 40 * wr_coeff;
  d->hw_tag = hw_tag;
  d->busy_queues = busy;
  d->busy_per_class[BFQ_CLASS_BE] = busy;
  d->wr_busy_queues = wr_coeff > 1 ? 1 : 0;
  if (wr_coeff == 1)
    {
      q.in_weights = TRUE;
      q.counted_weight = 40;
      d->weights[d->n_weights] = 40;
      d->weight_counts[d->n_weights++] = 1;
    }
  if (busy > 1)
    {
      if (other_weight == 40 && wr_coeff == 1)
        d->weight_counts[0]++;
      else
        {
          d->weights[d->n_weights] = other_weight;
          d->weight_counts[d->n_weights++] = 1;
        }
    }
  gboolean r = sched_bfq_better_to_idle (d, &q);
  d->busy_queues = 0;
  d->busy_per_class[BFQ_CLASS_BE] = 0;
  d->wr_busy_queues = 0;
  d->n_weights = 0;
  fixture_teardown (&f);
  return r;
}

#define SSD_DEV "[device]\nkind = fixed\noverhead = 0.1ms\nbandwidth = 500MB/s\nrotational = false\n"

static void
test_idle_decision (void)
{
  const char *ll0 = "low_latency = 0\n";
  /* Rotational: a sequential I/O-bound queue is worth idling for. */
  g_assert_true (idle_case (ROT_DEV, ll0, -1, FALSE, TRUE, 2, 1, 40));
  /* A seeky queue is not, in a symmetric scenario... */
  g_assert_false (idle_case (ROT_DEV, ll0, -1, TRUE, TRUE, 2, 1, 40));
  g_assert_false (idle_case (ROT_DEV, ll0, 1, TRUE, TRUE, 2, 1, 40));
  /* ...unless the drive does not queue, or it is the only busy queue. */
  g_assert_true (idle_case (ROT_DEV, ll0, 0, TRUE, TRUE, 2, 1, 40));
  g_assert_true (idle_case (ROT_DEV, ll0, -1, TRUE, TRUE, 1, 1, 40));
  /* Non-rotational with queueing: no idling for throughput... */
  g_assert_false (idle_case (SSD_DEV, ll0, 1, FALSE, TRUE, 2, 1, 40));
  /* ...only for guarantees: a heavier queue among lighter ones, not the lightest. */
  g_assert_true (idle_case (SSD_DEV, ll0, 1, FALSE, TRUE, 2, 1, 20));
  g_assert_false (idle_case (SSD_DEV, ll0, 1, FALSE, TRUE, 2, 1, 80));
  /* Without queueing, sequential still idles on SSD. */
  g_assert_true (idle_case (SSD_DEV, ll0, 0, FALSE, TRUE, 2, 1, 40));
  /* A raised queue while others are not raised. */
  g_assert_true (idle_case (SSD_DEV, "", 1, TRUE, TRUE, 2, 30, 40));
  /* strict_guarantees always idles; slice_idle = 0 and async queues never. */
  g_assert_true (idle_case (SSD_DEV, "strict_guarantees = 1\n", 1, TRUE, TRUE, 2, 1, 40));
  g_assert_false (idle_case (ROT_DEV, "slice_idle = 0ms\n", -1, FALSE, TRUE, 1, 1, 40));
  g_assert_false (idle_case (ROT_DEV, ll0, -1, FALSE, FALSE, 1, 1, 40));
}

/* ---- weight raising ------------------------------------------------------ */

static void
test_weight_raise_interactive (void)
{
  Fixture f;
  fixture_setup (&f, NULL, ROT_DEV);
  Stream *s = stream_add (&f, 7, 4, 0, 256, 1, 600, TRUE);
  stream_start (s);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  /* A new queue is interactive: raised x30 at its first request. */
  g_assert_cmpint (first_time (f.log, "weight_raise pid=7 coeff=30 kind=interactive"), ==, 0);
  /* Raising ends at the dispatch that takes the service past 120000
   * sectors: the 469th request of 256 sectors. */
  SimTime end = first_time (f.log, "weight_raise pid=7 coeff=1 kind=end");
  g_assert_cmpint (end, >, 0);
  g_autoptr (GString) before = g_string_new_len (f.log->str, strstr (f.log->str, "coeff=1 kind=end") - f.log->str);
  g_assert_cmpuint (count_lines (before, "dispatch pid=7 "), ==, 468);
  BfqQueue *q = sched_bfq_queue_of (f.e, &s->ioc, TRUE);
  g_assert_cmpint (q->wr_coeff, ==, 1);
  g_assert_cmpint (q->entity.weight, ==, 40);

  /* Back after 1 s of idleness: not interactive again; after 3 s: it is. */
  s->remaining = 1;
  sim_schedule_in (f.sim, SIM_NS_PER_S, think_done, s, NULL);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (count_lines (f.log, "kind=interactive"), ==, 1);
  g_assert_cmpuint (s->done_ios, ==, 601);
  s->remaining = 1;
  sim_schedule_in (f.sim, 3 * SIM_NS_PER_S, think_done, s, NULL);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (count_lines (f.log, "kind=interactive"), ==, 2);
  g_assert_cmpint (q->wr_coeff, ==, 30);
  fixture_teardown (&f);

  /* Not with low_latency off, nor for a non-default weight. */
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  stream_start (stream_add (&f, 7, 4, 0, 256, 1, 10, TRUE));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (count_lines (f.log, "weight_raise"), ==, 0);
  fixture_teardown (&f);
  fixture_setup (&f, NULL, ROT_DEV);
  stream_start (stream_add (&f, 7, 3, 0, 256, 1, 10, TRUE));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (count_lines (f.log, "weight_raise"), ==, 0);
  fixture_teardown (&f);
}

static void
test_weight_raise_soft_rt (void)
{
  Fixture f;
  fixture_setup (&f, NULL, ROT_DEV);
  /* A small read every 100 ms: far below 7000 sectors/s, isochronous. */
  Stream *s = stream_add (&f, 9, 4, 0, 8, 1, 20, TRUE);
  s->think_ns = 100 * SIM_NS_PER_MS;
  stream_start (s);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpint (first_time (f.log, "weight_raise pid=9 coeff=30 kind=interactive"), ==, 0);
  SimTime srt = first_time (f.log, "weight_raise pid=9 coeff=3000 kind=softrt");
  g_assert_cmpint (srt, >, 100 * SIM_NS_PER_MS);
  g_assert_cmpint (srt, <, 200 * SIM_NS_PER_MS);
  BfqQueue *q = sched_bfq_queue_of (f.e, &s->ioc, TRUE);
  g_assert_cmpint (q->wr_coeff, ==, 3000);
  fixture_teardown (&f);
}

static void
test_large_burst_not_raised (void)
{
  Fixture f;
  fixture_setup (&f, NULL, ROT_DEV);
  /* Nine processes start 10 ms apart: the eighth queue makes the burst
   * large (8 within 180 ms of each other). */
  for (guint i = 0; i < 9; i++)
    stream_start_at (stream_add (&f, i + 1, 4, 1000000 * (guint64) i, 64, 1, 200, TRUE),
                     10 * SIM_NS_PER_MS * i);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  for (guint pid = 1; pid <= 7; pid++)
    {
      g_autofree char *raised = g_strdup_printf ("weight_raise pid=%u coeff=30 kind=interactive", pid);
      g_assert_cmpint (first_time (f.log, raised), ==, 10 * SIM_NS_PER_MS * (pid - 1));
    }
  g_assert_null (strstr (f.log->str, "weight_raise pid=8 "));
  g_assert_null (strstr (f.log->str, "weight_raise pid=9 "));
  /* The raised members of the burst lose it at their next dispatch. */
  for (guint pid = 1; pid <= 7; pid++)
    {
      g_autofree char *end = g_strdup_printf ("weight_raise pid=%u coeff=1 kind=end", pid);
      g_assert_cmpint (first_time (f.log, end), >=, 70 * SIM_NS_PER_MS);
    }
  BfqData *d = sched_bfq_data (f.e);
  g_assert_true (d->large_burst);
  fixture_teardown (&f);
}

/* ---- queue merging --------------------------------------------------------- */

static void
test_queue_merge_and_split (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  /* Two readers of one file, taking alternate 64 KiB chunks. */
  Stream *a = stream_add (&f, 1, 4, 1000000, 128, 2, 400, TRUE);
  Stream *b = stream_add (&f, 2, 4, 1000128, 128, 2, 400, TRUE);
  a->stride = b->stride = 256;
  /* After 200 chunks each they read at random. */
  a->random_after = b->random_after = 200;
  stream_start (a);
  stream_start (b);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  SimTime merge = first_time (f.log, "queue_merge pid=");
  SimTime split = first_time (f.log, "queue_split pid=");
  g_assert_cmpint (merge, >=, 0);
  g_assert_cmpint (split, >, merge);
  g_assert_cmpuint (count_lines (f.log, "queue_merge"), ==, 1);
  /* While merged, the shared queue carries both readers' requests and gets
   * the slots; the other queue is served at most once more, for the
   * requests it held when the merge happened. */
  g_autoptr (GString) between = g_string_new (NULL);
  const char *m = strstr (f.log->str, "queue_merge");
  const char *s = strstr (f.log->str, "queue_split");
  g_string_append_len (between, m, s - m);
  guint with = (guint) g_ascii_strtoull (strstr (m, "with=") + 5, NULL, 10);
  g_autofree char *shared = g_strdup_printf ("budget_assign pid=%u ", with);
  g_autofree char *other = g_strdup_printf ("budget_assign pid=%u ", with == 1 ? 2 : 1);
  g_assert_cmpuint (count_lines (between, shared), >=, 5);
  g_assert_cmpuint (count_lines (between, other), <=, 1);
  g_assert_cmpuint (a->done_ios + b->done_ios, ==, 800);
  fixture_teardown (&f);
}

/* ---- request choice within a queue ------------------------------------------ */

static void
submit_one (Fixture *f, Stream *s, guint64 sector, guint32 nr)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = SIM_OP_READ;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &s->ioc;
  bio->end_io = bio_done;
  bio->end_io_data = s;
  g_assert_true (sim_queue_submit_bio (f->q, bio, NULL));
}

/* Sectors in dispatch order, from the dispatch lines. */
static char *
dispatch_order (const GString *log)
{
  GString *out = g_string_new (NULL);
  for (const char *p = log->str; (p = strstr (p, " sector=")) != NULL; p++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, out->len ? " " : "",
                            g_ascii_strtoull (p + strlen (" sector="), NULL, 10));
  return g_string_free (out, FALSE);
}

static char *
back_seek_order (const char *tunables)
{
  Fixture f;
  fixture_setup (&f, tunables, ROT_DEV);
  Stream *s = stream_add (&f, 1, 4, 0, 8, 1, 0, TRUE);
  /* 10000 goes at once; then the head is at 10008 with 9900 (108 behind)
   * and 10200 (192 ahead) queued. */
  submit_one (&f, s, 10000, 8);
  submit_one (&f, s, 9900, 8);
  submit_one (&f, s, 10200, 8);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  char *order = dispatch_order (f.log);
  fixture_teardown (&f);
  return order;
}

static void
test_request_choice_back_seek (void)
{
  g_autofree char *def = back_seek_order ("low_latency = 0\n");
  g_autofree char *pen1 = back_seek_order ("low_latency = 0\nback_seek_penalty = 1\n");
  g_autofree char *nomax = back_seek_order ("low_latency = 0\nback_seek_max = 0\n");
  /* Penalty 2: 216 behind costs more than 192 ahead. */
  g_assert_cmpstr (def, ==, "10000 10200 9900");
  /* Penalty 1: 108 behind beats 192 ahead. */
  g_assert_cmpstr (pen1, ==, "10000 9900 10200");
  /* No backward seeks allowed: behind means after a wrap. */
  g_assert_cmpstr (nomax, ==, "10000 10200 9900");
  g_autofree char *nomax_pen1 = back_seek_order ("low_latency = 0\nback_seek_penalty = 1\n"
                                                 "back_seek_max = 0\n");
  g_assert_cmpstr (nomax_pen1, ==, "10000 10200 9900");
}

static void
submit_later (Sim *sim, gpointer subject, gpointer object)
{
  Stream *s = subject;
  submit_one (s->f, s, GPOINTER_TO_UINT (object), 8);
}

static char *
fifo_order (const char *tunables)
{
  Fixture f;
  fixture_setup (&f, tunables, ROT_DEV);
  Stream *other = stream_add (&f, 2, 4, 0, 8, 1, 0, TRUE);
  Stream *s = stream_add (&f, 1, 4, 0, 8, 1, 0, TRUE);
  /* Another process, far away, holds the device first (then is idled
   * for).  Ours queues 1000000, then 16 and 32 at 0.5 ms: all behind the
   * head, so the lowest goes first.  The FIFO is looked at once per slot,
   * when the first request leaves. */
  submit_one (&f, other, 50000000, 8);
  submit_one (&f, s, 1000000, 8);
  sim_schedule_at (f.sim, SIM_NS_PER_MS / 2, submit_later, s, GUINT_TO_POINTER (16));
  sim_schedule_at (f.sim, SIM_NS_PER_MS / 2, submit_later, s, GUINT_TO_POINTER (32));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  char *order = dispatch_order (f.log);
  fixture_teardown (&f);
  return order;
}

static void
test_request_choice_fifo (void)
{
  g_autofree char *fresh = fifo_order ("low_latency = 0\n");
  g_assert_cmpstr (fresh, ==, "50000000 16 32 1000000");
  /* Expired after 1 ms: served next, once per slot, out of sector order. */
  g_autofree char *expired = fifo_order ("low_latency = 0\nfifo_expire_sync = 1ms\n");
  g_assert_cmpstr (expired, ==, "50000000 16 1000000 32");
}

/* bfq_allow_bio_merge merges cooperating queues before it compares them:
 * a bio of one process may then join another process's adjacent request. */
static void
test_queue_merge_at_bio_merge (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  Stream *c = stream_add (&f, 3, 4, 0, 8, 1, 0, TRUE);
  Stream *b = stream_add (&f, 2, 4, 0, 8, 1, 0, TRUE);
  Stream *a = stream_add (&f, 1, 4, 0, 8, 1, 0, TRUE);
  /* C holds the device far away.  B queues 100000 and A queues 1000,
   * 99000 apart: no queue merge yet.  Then B's bio at 1008 starts where
   * A's request ends: B's queue is merged into A's (the closest) and the
   * bio joins A's request instead of becoming a request of its own. */
  submit_one (&f, c, 50000000, 8);
  submit_one (&f, b, 100000, 8);
  submit_one (&f, a, 1000, 8);
  g_assert_null (strstr (f.log->str, "queue_merge"));
  submit_one (&f, b, 1008, 8);
  g_assert_nonnull (strstr (f.log->str, "queue_merge pid=2 with=1 reason=close"));
  g_assert_cmpuint (f.q->counters.back_merges, ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_autofree char *order = dispatch_order (f.log);
  /* B's queue, busy first, still holds 100000; 1000 carries both bios. */
  g_assert_cmpstr (order, ==, "50000000 100000 1000");
  g_assert_cmpuint (a->done_ios + b->done_ios + c->done_ios, ==, 4);
  g_assert_true (sched_bfq_check_invariants (f.e));
  g_assert_cmpint (sched_bfq_data (f.e)->queued, ==, 0);
  fixture_teardown (&f);
}

/* ---- strict guarantees, peak rate -------------------------------------------- */

static guint max_in_driver;

static void
note_in_driver (Sim *sim, SimBio *bio, SimTime now)
{
  Stream *s = bio->end_io_data;
  max_in_driver = MAX (max_in_driver, (guint) sched_bfq_data (s->f->e)->rq_in_driver);
  bio_done (sim, bio, now);
}

static guint
deepest (const char *tunables)
{
  Fixture f;
  fixture_setup (&f, tunables, "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\n"
                 "rotational = true\nqueue_depth = 8\n");
  Stream *s = stream_add (&f, 1, 4, 0, 8, 1, 0, TRUE);
  max_in_driver = 0;
  for (guint i = 0; i < 16; i++)
    {
      SimBio *bio = sim_queue_bio_alloc (f.q);
      bio->sector = 100000 * i;
      bio->nr_sectors = 8;
      bio->op = SIM_OP_READ;
      bio->flags = SIM_BIO_SYNC;
      bio->ioc = &s->ioc;
      bio->end_io = note_in_driver;
      bio->end_io_data = s;
      g_assert_true (sim_queue_submit_bio (f.q, bio, NULL));
    }
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (s->done_ios, ==, 16);
  fixture_teardown (&f);
  return max_in_driver;
}

static void
test_strict_guarantees_one_in_flight (void)
{
  /* Completions see the drive refilled first: up to 7 others in it. */
  g_assert_cmpuint (deepest ("low_latency = 0\n"), >=, 4);
  g_assert_cmpuint (deepest ("low_latency = 0\nstrict_guarantees = 1\n"), <=, 1);
}

static void
test_peak_rate_max_budget (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  /* 128 sectors per 1 ms + 0.65536 ms: 77.3 sectors/ms. */
  stream_start (stream_add (&f, 1, 4, 0, 128, 1, 3000, TRUE));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  BfqData *d = sched_bfq_data (f.e);
  double true_rate = 128.0 / 1655.36 * 65536.0;   /* sectors/us << 16 */
  g_assert_cmpfloat (d->peak_rate, >, 0.9 * true_rate);
  g_assert_cmpfloat (d->peak_rate, <, 1.1 * true_rate);
  /* max_budget = peak rate x timeout_sync (125 ms). */
  g_assert_cmpint (d->bfq_max_budget, ==, (int) (((guint64) d->peak_rate * 1000 * 125) >> 16));
  g_assert_cmpint (d->bfq_max_budget, >, 8000);
  g_assert_cmpint (d->bfq_max_budget, <, 11000);
  g_assert_cmpint (d->budgets_assigned, >=, 194);
  fixture_teardown (&f);

  /* A user max_budget stays. */
  fixture_setup (&f, "low_latency = 0\nmax_budget = 2000\n", ROT_DEV);
  stream_start (stream_add (&f, 1, 4, 0, 128, 1, 3000, TRUE));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpint (sched_bfq_data (f.e)->bfq_max_budget, ==, 2000);
  g_assert_null (strstr (f.log->str, "sectors=2001"));
  fixture_teardown (&f);
}

/* ---- process exit ------------------------------------------------------------ */

static void
exit_after_last (Sim *sim, SimBio *bio, SimTime now)
{
  Stream *st = bio->end_io_data;
  st->done_ios++;
  if (st->remaining == 0)
    sched_bfq_ops.exit_ioc (st->f->e, &st->ioc, now);
  else
    stream_submit (st);
}

static void
test_exit_ends_idling (void)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  Stream *s = stream_add (&f, 5, 4, 0, 64, 1, 1, TRUE);
  SimBio *bio = sim_queue_bio_alloc (f.q);
  bio->sector = 0;
  bio->nr_sectors = 64;
  bio->op = SIM_OP_READ;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &s->ioc;
  bio->end_io = exit_after_last;
  bio->end_io_data = s;
  s->remaining = 0;
  g_assert_true (sim_queue_submit_bio (f.q, bio, NULL));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  /* The lone queue is idled for at its completion; the exit of its
   * process ends the wait at once. */
  SimTime armed = first_time (f.log, "idle_arm pid=5");
  g_assert_cmpint (armed, >, 0);
  g_assert_cmpint (first_time (f.log, "slice_expire pid=5 reason=forced"), ==, armed);
  g_assert_cmpint (first_time (f.log, "idle_fire"), ==, -1);
  BfqData *d = sched_bfq_data (f.e);
  g_assert_null (d->in_service);
  g_assert_cmpint (d->busy_queues, ==, 0);
  fixture_teardown (&f);
}

static char *
stable_run (gboolean random, SimTime second_start)
{
  Fixture f;
  fixture_setup (&f, "low_latency = 0\n", ROT_DEV);
  Stream *a = stream_add (&f, 1, 4, 0, 64, 1, 1000, TRUE);
  Stream *b = stream_add (&f, 2, 4, 30000000, 64, 1, 1000, TRUE);
  if (random)
    a->random_after = b->random_after = 1;
  stream_start (a);
  stream_start_at (b, second_start);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (a->done_ios + b->done_ios, ==, 2000);
  char *log = g_strdup (f.log->str);
  fixture_teardown (&f);
  return log;
}

static void
test_stable_merge (void)
{
  /* Two seeky queues created together are merged once 600 ms old, and
   * stay merged although the shared queue is seeky. */
  g_autofree char *together = stable_run (TRUE, 10 * SIM_NS_PER_MS);
  SimTime merged = first_time_of (together, "queue_merge pid=2 with=1 reason=stable");
  g_assert_cmpint (merged, >, 600 * SIM_NS_PER_MS);
  g_assert_null (strstr (together, "queue_split"));
  /* Created 200 ms apart: no pairing. */
  g_autofree char *apart = stable_run (TRUE, 200 * SIM_NS_PER_MS);
  g_assert_null (strstr (apart, "queue_merge"));
  /* Sequential queues are better served by idling: not merged. */
  g_autofree char *seq = stable_run (FALSE, 10 * SIM_NS_PER_MS);
  g_assert_null (strstr (seq, "queue_merge"));
}

/* ---- end state, determinism, HZ -------------------------------------------- */

static char *
mixed_run (guint *busy, gboolean *empty)
{
  Fixture f;
  fixture_setup (&f, NULL, ROT_DEV);
  Stream *seq = stream_add (&f, 1, 4, 0, 64, 2, 300, TRUE);
  Stream *rnd = stream_add (&f, 2, 4, 0, 8, 1, 200, TRUE);
  Stream *wr = stream_add (&f, 3, 4, 90000000, 128, 16, 300, FALSE);
  Stream *idle = stream_add (&f, 4, 7, 40000000, 64, 1, 50, TRUE);
  rnd->random_after = 1;
  idle->ioc.ioprio_class = 3;
  stream_start (seq);
  stream_start (rnd);
  stream_start (wr);
  stream_start (idle);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (seq->done_ios + rnd->done_ios + wr->done_ios + idle->done_ios, ==, 850);
  BfqData *d = sched_bfq_data (f.e);
  *busy = (guint) d->busy_queues;
  *empty = sched_bfq_ops.queue_empty (f.e) && d->in_service == NULL && d->rq_in_driver == 0
           && d->queued == 0 && d->wr_busy_queues == 0;
  g_assert_true (sched_bfq_check_invariants (f.e));
  char *log = g_strdup (f.log->str);
  fixture_teardown (&f);
  return log;
}

static void
test_empty_and_deterministic (void)
{
  guint busy;
  gboolean empty;
  g_autofree char *one = mixed_run (&busy, &empty);
  g_assert_cmpuint (busy, ==, 0);
  g_assert_true (empty);
  g_autofree char *two = mixed_run (&busy, &empty);
  g_assert_cmpstr (one, ==, two);
  /* All four kinds of queue were served and expired. */
  g_assert_nonnull (strstr (one, "budget_assign pid=3"));
  g_assert_nonnull (strstr (one, "budget_assign pid=4"));
}

static SimTime
first_timeout (guint hz)
{
  Fixture f;
  /* 10 ms per request: a lone sync queue (idled for) times out first. */
  fixture_setup_hz (&f, "low_latency = 0\n",
                    "[device]\nkind = fixed\noverhead = 10ms\nbandwidth = 100MB/s\n"
                    "rotational = true\n", hz);
  stream_start (stream_add (&f, 1, 4, 0, 8, 1, 40, TRUE));
  sim_run_until (f.sim, SIM_TIME_NEVER);
  SimTime t = first_time (f.log, "slice_expire pid=1 reason=timeout");
  fixture_teardown (&f);
  return t;
}

static void
test_hz_budget_timeout (void)
{
  /* HZ/8: 125 jiffies at HZ=1000, 12 (120 ms) at HZ=100.  Requests end
   * every 10.04096 ms: the first completion at or past the timeout. */
  g_assert_cmpint (first_timeout (1000), ==, 13 * 10040960);
  g_assert_cmpint (first_timeout (100), ==, 12 * 10040960);
}

/* ---- behaviour on a seek-bound disk ------------------------------------------ */

static SimRunResult *
run_scenario (const char *text, const char *const *sets)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "t", NULL, sets, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  return r;
}

static const SimProcessResult *
process (const SimRunResult *r, const char *name)
{
  for (guint i = 0; i < r->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, i);
      if (strcmp (p->name, name) == 0)
        return p;
    }
  g_assert_not_reached ();
}

static const char seq_vs_random[] =
  "[sim]\nduration = 10s\nseed = 1\n"
  "[device sda]\nmodel = disk-7200-sata\nqueue_depth = 1\nsched = deadline\n"
  "[sched bfq]\nlow_latency = 0\n"
  "[process sequential]\ndevice = sda\nop = read\npattern = sequential\nbs = 64KiB\noffset = 10GiB\n"
  "[process random]\ndevice = sda\nop = read\npattern = random\nbs = 4KiB\nstart = 500ms\n";

static void
test_behaviour_seq_vs_random (void)
{
  const char *bfq[] = { "device sda.sched=bfq", NULL };
  g_autoptr (SimRunResult) bq = run_scenario (seq_vs_random, bfq);
  g_autoptr (SimRunResult) dl = run_scenario (seq_vs_random, NULL);
  const SimProcessResult *dl_seq = process (dl, "sequential");
  const SimProcessResult *bq_seq = process (bq, "sequential");
  const SimProcessResult *dl_rnd = process (dl, "random");
  const SimProcessResult *bq_rnd = process (bq, "random");
  g_test_message ("sequential MB/s: deadline %.2f bfq %.2f; random ios: deadline %" G_GUINT64_FORMAT
                  " bfq %" G_GUINT64_FORMAT, dl_seq->mb_per_s, bq_seq->mb_per_s, dl_rnd->ios, bq_rnd->ios);
  /* deadline alternates one request each: the sequential reader seeks
   * back after every random read.  BFQ idles for it and serves budgets. */
  g_assert_cmpfloat (bq_seq->mb_per_s, >, 5 * dl_seq->mb_per_s);
  /* The random reader is charged time (its seeks), not starved. */
  g_assert_cmpfloat (bq_rnd->disk_share, >, 0.1);
  g_assert_cmpuint (bq_rnd->ios, >, dl_rnd->ios / 10);
}

static const char interleaved[] =
  "[sim]\nseed = 1\n"
  "[device sda]\nmodel = disk-7200-sata\nqueue_depth = 1\nsched = bfq\n"
  "[process dump]\ndevice = sda\nop = read\npattern = sequential\nstream = interleaved\n"
  "threads = 2\nbs = 64KiB\niodepth = 2\nsize = 64MiB\noffset = 10GiB\n";

static const char single[] =
  "[sim]\nseed = 1\n"
  "[device sda]\nmodel = disk-7200-sata\nqueue_depth = 1\nsched = bfq\n"
  "[process dump]\ndevice = sda\nop = read\npattern = sequential\n"
  "bs = 64KiB\niodepth = 2\nsize = 64MiB\noffset = 10GiB\n";

static double
group_mb_per_s (const SimRunResult *r)
{
  const SimGroupResult *g = g_ptr_array_index (r->groups, 0);
  return g->mb_per_s;
}

static void
test_behaviour_interleaved_readers (void)
{
  /* Two threads reading alternate chunks of one file: each queue alone
   * skips every other chunk.  Merged into one queue they stream the file
   * as a single reader would. */
  g_autoptr (SimRunResult) one = run_scenario (single, NULL);
  g_autoptr (SimRunResult) two = run_scenario (interleaved, NULL);
  g_assert_cmpfloat (group_mb_per_s (two), >, 0.8 * group_mb_per_s (one));
}

/* dump(8): four readers of a 32 MiB file, reader i taking chunks i, i+4,
 * ..., one synchronous request each.  Their queues are merged; every
 * reader must keep being served, none left waiting behind the disk head
 * while the others stream on. */
static const char dump4[] =
  "[sim]\nseed = 1\nhz = 1000\nduration = 10s\n"
  "[device sda]\nmodel = disk-7200-sata\nqueue_depth = 1\nsched = bfq\n"
  "[process dump]\ndevice = sda\npattern = sequential\nstream = interleaved\n"
  "threads = 4\nbs = 64KiB\noffset = 100GiB\nsize = 32MiB\n";

static void
test_behaviour_interleaved_readers_all_served (void)
{
  const char *deadline[] = { "device sda.sched=deadline", NULL };
  g_autoptr (SimRunResult) bq = run_scenario (dump4, NULL);
  g_autoptr (SimRunResult) dl = run_scenario (dump4, deadline);
  /* Twice fifo_expire_sync. */
  const SimTime bound_ns = 250 * SIM_NS_PER_MS;
  g_assert_cmpuint (bq->processes->len, ==, 4);
  for (guint i = 0; i < bq->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (bq->processes, i);
      g_test_message ("%s: %" G_GUINT64_FORMAT " ios, done at %" G_GINT64_FORMAT
                      " ns, max latency %" G_GINT64_FORMAT " ns", p->name, p->ios, p->active_ns,
                      p->lat_max_ns);
      /* Its 128 chunks, all read within the first second (the file
       * streams at about 55 MB/s), none waiting long. */
      g_assert_cmpuint (p->ios, ==, 128);
      g_assert_cmpint (p->active_ns, <, SIM_NS_PER_S);
      g_assert_cmpint (p->lat_max_ns, <, bound_ns);
    }
  g_assert_cmpfloat (group_mb_per_s (bq), >, 0.9 * group_mb_per_s (dl));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sched/bfq/tunables", test_tunables);
  g_test_add_func ("/sched/bfq/budget-feedback", test_budget_feedback);
  g_test_add_func ("/sched/bfq/wf2q/equal-weights-alternate", test_wf2q_equal_weights_alternate);
  g_test_add_func ("/sched/bfq/wf2q/weights-proportional", test_wf2q_weights_proportional);
  g_test_add_func ("/sched/bfq/wf2q/eligibility", test_wf2q_eligibility);
  g_test_add_func ("/sched/bfq/wf2q/vtime-jump-and-forget", test_wf2q_vtime_jump_and_forget);
  g_test_add_func ("/sched/bfq/order/equal-weights", test_order_equal_weights);
  g_test_add_func ("/sched/bfq/order/weights-1-2", test_order_weights_1_2);
  g_test_add_func ("/sched/bfq/idle/sequential-vs-seeky", test_idle_sequential_vs_seeky);
  g_test_add_func ("/sched/bfq/idle/decision", test_idle_decision);
  g_test_add_func ("/sched/bfq/weight-raise/interactive", test_weight_raise_interactive);
  g_test_add_func ("/sched/bfq/weight-raise/soft-rt", test_weight_raise_soft_rt);
  g_test_add_func ("/sched/bfq/weight-raise/large-burst", test_large_burst_not_raised);
  g_test_add_func ("/sched/bfq/queue-merge-split", test_queue_merge_and_split);
  g_test_add_func ("/sched/bfq/stable-merge", test_stable_merge);
  g_test_add_func ("/sched/bfq/request-choice/back-seek", test_request_choice_back_seek);
  g_test_add_func ("/sched/bfq/request-choice/fifo", test_request_choice_fifo);
  g_test_add_func ("/sched/bfq/queue-merge-at-bio-merge", test_queue_merge_at_bio_merge);
  g_test_add_func ("/sched/bfq/strict-guarantees", test_strict_guarantees_one_in_flight);
  g_test_add_func ("/sched/bfq/peak-rate-max-budget", test_peak_rate_max_budget);
  g_test_add_func ("/sched/bfq/exit-ends-idling", test_exit_ends_idling);
  g_test_add_func ("/sched/bfq/empty-and-deterministic", test_empty_and_deterministic);
  g_test_add_func ("/sched/bfq/hz-budget-timeout", test_hz_budget_timeout);
  g_test_add_func ("/sched/bfq/behaviour/seq-vs-random", test_behaviour_seq_vs_random);
  g_test_add_func ("/sched/bfq/behaviour/interleaved-readers", test_behaviour_interleaved_readers);
  g_test_add_func ("/sched/bfq/behaviour/interleaved-readers-all-served",
                   test_behaviour_interleaved_readers_all_served);
  return g_test_run ();
}
