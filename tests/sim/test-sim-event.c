/* test-sim-event.c — the event engine: ordering, FIFO ties, lazy cancel,
 * scheduling in the past asserts, two simulations side by side, and a
 * randomized run against a reference model (a GTree sorted by time and
 * scheduling order). */
#include <glib.h>
#include "sim/sim.h"

typedef struct {
  GString *log;
} Log;

static void
record (Sim *sim, gpointer subject, gpointer object)
{
  Log *log = subject;
  g_string_append_printf (log->log, "%s@%" SIM_TIME_FORMAT " ", (const char *) object, sim_now (sim));
}

static void
test_order_and_ties (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  Log log = { g_string_new (NULL) };
  sim_schedule_at (sim, 30, record, &log, "c");
  sim_schedule_at (sim, 10, record, &log, "a1");
  sim_schedule_at (sim, 20, record, &log, "b");
  sim_schedule_at (sim, 10, record, &log, "a2");
  sim_schedule_at (sim, 10, record, &log, "a3");
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "a1@10 a2@10 a3@10 b@20 c@30 ");
  g_assert_cmpuint (sim_events_run (sim), ==, 5);
  g_assert_cmpuint (sim_events_pending (sim), ==, 0);
  g_string_free (log.log, TRUE);
}

static void
test_many_random_order (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  Log log = { g_string_new (NULL) };
  /* Insert 2000 events in a scrambled order; they must come out sorted. */
  static char names[2000][8];
  for (guint i = 0; i < 2000; i++)
    {
      guint t = (i * 7919u) % 2000u;
      g_snprintf (names[i], sizeof names[i], "%u", t);
      sim_schedule_at (sim, t, record, &log, names[i]);
    }
  SimTime last = -1;
  while (sim_step (sim))
    {
      g_assert_cmpint (sim_now (sim), >=, last);
      last = sim_now (sim);
    }
  g_assert_cmpint (last, ==, 1999);
  g_string_free (log.log, TRUE);
}

static void
test_cancel (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  Log log = { g_string_new (NULL) };
  SimEventId a = sim_schedule_at (sim, 5, record, &log, "a");
  SimEventId b = sim_schedule_at (sim, 6, record, &log, "b");
  g_assert_true (sim_event_pending (sim, a));
  g_assert_true (sim_cancel (sim, a));
  g_assert_false (sim_cancel (sim, a));
  g_assert_false (sim_event_pending (sim, a));
  g_assert_cmpuint (sim_events_pending (sim), ==, 1);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "b@6 ");
  /* An id of an event that ran is stale, even when its slot is reused. */
  g_assert_false (sim_cancel (sim, b));
  SimEventId c = sim_schedule_in (sim, 1, record, &log, "c");
  g_assert_false (sim_cancel (sim, b));
  g_assert_true (sim_event_pending (sim, c));
  g_assert_false (sim_cancel (sim, 0));
  g_string_free (log.log, TRUE);
}

static void
test_run_until (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  Log log = { g_string_new (NULL) };
  sim_schedule_at (sim, 10, record, &log, "a");
  sim_schedule_at (sim, 100, record, &log, "b");
  sim_run_until (sim, 50);
  g_assert_cmpint (sim_now (sim), ==, 50);
  g_assert_cmpstr (log.log->str, ==, "a@10 ");
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "a@10 b@100 ");
  g_string_free (log.log, TRUE);
}

static void
test_past_asserts (void)
{
  if (g_test_subprocess ())
    {
      Sim *sim = sim_new (1);
      Log log = { g_string_new (NULL) };
      sim_schedule_at (sim, 100, record, &log, "a");
      sim_run_until (sim, SIM_TIME_NEVER);
      sim_schedule_at (sim, 99, record, &log, "past");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*at_ns >= sim->now_ns*");
}

static void
test_two_sims (void)
{
  g_autoptr (Sim) a = sim_new (1);
  g_autoptr (Sim) b = sim_new (1);
  Log la = { g_string_new (NULL) }, lb = { g_string_new (NULL) };
  sim_schedule_at (a, 5, record, &la, "a");
  sim_schedule_at (b, 7, record, &lb, "b");
  sim_run_until (a, SIM_TIME_NEVER);
  g_assert_cmpint (sim_now (a), ==, 5);
  g_assert_cmpint (sim_now (b), ==, 0);
  sim_run_until (b, SIM_TIME_NEVER);
  g_assert_cmpstr (la.log->str, ==, "a@5 ");
  g_assert_cmpstr (lb.log->str, ==, "b@7 ");
  g_string_free (la.log, TRUE);
  g_string_free (lb.log, TRUE);
}

/* A handler that runs the next events itself: the engine's top entry,
 * kept for the running event until its handler schedules something, must
 * be given up first.  "n1" schedules "x" at the current time and steps
 * once (x runs inside it); "n2" schedules nothing and steps (b runs). */
static void
nested_step (Sim *sim, gpointer subject, gpointer object)
{
  Log *log = subject;
  record (sim, subject, object);
  if (g_str_equal (object, "n1"))
    sim_schedule_at (sim, sim_now (sim), record, log, "x");
  g_assert_true (sim_step (sim));
  g_string_append (log->log, "| ");
}

static void
test_nested_step (void)
{
  g_autoptr (Sim) sim = sim_new (1);
  Log log = { g_string_new (NULL) };
  sim_schedule_at (sim, 10, nested_step, &log, "n1");
  sim_schedule_at (sim, 10, record, &log, "a");
  sim_schedule_at (sim, 20, nested_step, &log, "n2");
  sim_schedule_at (sim, 30, record, &log, "b");
  sim_schedule_at (sim, 40, record, &log, "c");
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "n1@10 a@10 | x@10 n2@20 b@30 | c@40 ");
  g_assert_cmpuint (sim_events_run (sim), ==, 6);
  g_assert_cmpuint (sim_events_pending (sim), ==, 0);
  /* Every slot was freed once: new events, more than the slots used so
   * far, each get their own. */
  static const char *const more[] = { "d", "e", "f", "g", "h", "i", "j", "k" };
  for (guint i = 0; i < G_N_ELEMENTS (more); i++)
    sim_schedule_at (sim, 50 + i, record, &log, (gpointer) more[i]);
  g_string_truncate (log.log, 0);
  sim_run_until (sim, SIM_TIME_NEVER);
  g_assert_cmpstr (log.log->str, ==, "d@50 e@51 f@52 g@53 h@54 i@55 j@56 k@57 ");
  g_string_free (log.log, TRUE);
}

/* The randomized test: schedules (many at equal times, some from inside
 * handlers at the current time), cancels (of pending, run, cancelled and
 * 0 ids), sim_step, sim_run_until and sim_stop, interleaved by a seeded
 * GRand.  A GTree of the pending events keyed by (time, scheduling order)
 * says which event must run next; every handler checks that it is the one,
 * and every operation checks the engine's counts and answers against the
 * model.  The queues of 1000 and 100000 pass 256 and 65,536 slots, where
 * the engine widens the slot field of its heap keys and renumbers the
 * pending events' sequence numbers (ties included). */
typedef enum { MODEL_PENDING, MODEL_CANCELLED, MODEL_RAN } ModelState;

typedef struct {
  SimTime    time_ns;
  guint64    order;      /* the model's own count of schedules */
  SimEventId id;
  ModelState state;
} ModelEvent;

typedef struct {
  gint64  seed;
  guint   pending;       /* the queue size the operations hover around */
} FuzzCase;

typedef struct {
  Sim        *sim;
  GRand      *rand;
  GTree      *pending;   /* ModelEvent -> itself, by (time, order) */
  GPtrArray  *issued;    /* every ModelEvent, for cancels of stale ids */
  guint64     next_order;
  guint64     ran;
  SimTime     last_run_ns;
  gboolean    stopped;   /* a handler called sim_stop */
  guint       target;
} Fuzz;

static gint
model_cmp (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const ModelEvent *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static void fuzz_fire (Sim *sim, gpointer subject, gpointer object);

/* A time at or after now: a third exactly now, a third among a few
 * instants just ahead (ties), a third spread over the queue's size. */
static SimTime
fuzz_time (Fuzz *f)
{
  SimTime now = sim_now (f->sim);
  switch (g_rand_int_range (f->rand, 0, 3))
    {
    case 0:
      return now;
    case 1:
      return now + g_rand_int_range (f->rand, 0, 8);
    default:
      return now + g_rand_int_range (f->rand, 0, (gint32) MIN (f->target * 8u + 8u, (guint) G_MAXINT32));
    }
}

static void
fuzz_schedule (Fuzz *f, SimTime at_ns)
{
  ModelEvent *ev = g_new0 (ModelEvent, 1);
  ev->time_ns = at_ns;
  ev->order = f->next_order++;
  ev->state = MODEL_PENDING;
  g_ptr_array_add (f->issued, ev);
  if (at_ns > sim_now (f->sim) && g_rand_boolean (f->rand))
    ev->id = sim_schedule_in (f->sim, at_ns - sim_now (f->sim), fuzz_fire, f, ev);
  else
    ev->id = sim_schedule_at (f->sim, at_ns, fuzz_fire, f, ev);
  g_assert_cmpuint (ev->id, !=, 0);
  g_assert_true (sim_event_pending (f->sim, ev->id));
  g_tree_insert (f->pending, ev, ev);
}

/* Cancel an id from all those ever issued (or 0): TRUE only if pending. */
static void
fuzz_cancel (Fuzz *f)
{
  if (f->issued->len == 0 || g_rand_int_range (f->rand, 0, 50) == 0)
    {
      g_assert_false (sim_cancel (f->sim, 0));
      return;
    }
  ModelEvent *ev = g_ptr_array_index (f->issued, g_rand_int_range (f->rand, 0, (gint32) f->issued->len));
  gboolean was_pending = ev->state == MODEL_PENDING;
  g_assert_cmpint (sim_event_pending (f->sim, ev->id), ==, was_pending);
  g_assert_cmpint (sim_cancel (f->sim, ev->id), ==, was_pending);
  g_assert_false (sim_event_pending (f->sim, ev->id));
  g_assert_false (sim_cancel (f->sim, ev->id));
  if (was_pending)
    {
      ev->state = MODEL_CANCELLED;
      g_assert_true (g_tree_remove (f->pending, ev));
    }
}

static void
fuzz_fire (Sim *sim, gpointer subject, gpointer object)
{
  Fuzz *f = subject;
  ModelEvent *ev = object;
  GTreeNode *first = g_tree_node_first (f->pending);
  g_assert_nonnull (first);
  /* The model's earliest (time, order) is the event that runs. */
  g_assert_true (g_tree_node_key (first) == (gpointer) ev);
  g_assert_cmpint (ev->state, ==, MODEL_PENDING);
  g_assert_cmpint (sim_now (sim), ==, ev->time_ns);
  g_assert_false (sim_event_pending (sim, ev->id));
  ev->state = MODEL_RAN;
  g_tree_remove (f->pending, ev);
  f->ran++;
  f->last_run_ns = ev->time_ns;
  g_assert_cmpuint (sim_events_pending (sim), ==, (guint) g_tree_nnodes (f->pending));

  /* From inside the handler: events at the current time (which run after
   * every pending event of that time), later ones, cancels, a stop. */
  while (g_rand_int_range (f->rand, 0, 10) < 2)
    fuzz_schedule (f, sim_now (sim));
  if (g_rand_int_range (f->rand, 0, 10) < 2)
    fuzz_schedule (f, fuzz_time (f));
  if (g_rand_int_range (f->rand, 0, 10) == 0)
    fuzz_cancel (f);
  if (g_rand_int_range (f->rand, 0, 100) == 0)
    {
      sim_stop (sim);
      f->stopped = TRUE;
    }
}

static void
fuzz_run_until (Fuzz *f, SimTime end_ns)
{
  SimTime before_ns = sim_now (f->sim);
  f->stopped = FALSE;
  f->last_run_ns = before_ns;
  sim_run_until (f->sim, end_ns);
  if (f->stopped)
    {
      /* Stopped right after the handler that asked. */
      g_assert_cmpint (sim_now (f->sim), ==, f->last_run_ns);
      return;
    }
  GTreeNode *first = g_tree_node_first (f->pending);
  if (first == NULL)
    {
      /* Ran dry: the clock stays at the last event. */
      g_assert_cmpint (sim_now (f->sim), ==, f->last_run_ns);
      return;
    }
  const ModelEvent *next = g_tree_node_key (first);
  g_assert_cmpint (next->time_ns, >, end_ns);
  g_assert_cmpint (sim_now (f->sim), ==, MAX (f->last_run_ns, end_ns));
}

static void
fuzz_step (Fuzz *f)
{
  gboolean any = g_tree_nnodes (f->pending) > 0;
  g_assert_cmpint (sim_step (f->sim), ==, any);
}

static void
test_random_against_model (gconstpointer data)
{
  const FuzzCase *c = data;
  Fuzz f = {
    .sim = sim_new (1),
    .rand = g_rand_new_with_seed ((guint32) c->seed),
    .pending = g_tree_new_full (model_cmp, NULL, NULL, NULL),
    .issued = g_ptr_array_new_with_free_func (g_free),
    .target = c->pending,
  };
  while ((guint) g_tree_nnodes (f.pending) < c->pending)
    fuzz_schedule (&f, fuzz_time (&f));
  guint ops = MAX (4000u, 2 * c->pending);
  for (guint i = 0; i < ops; i++)
    {
      gboolean under = (guint) g_tree_nnodes (f.pending) < c->pending;
      gint r = g_rand_int_range (f.rand, 0, 100);
      if (r < (under ? 60 : 10))
        fuzz_schedule (&f, fuzz_time (&f));
      else if (r < (under ? 75 : 25))
        fuzz_cancel (&f);
      else if (r < 95)
        fuzz_step (&f);
      else
        fuzz_run_until (&f, sim_now (f.sim) + g_rand_int_range (f.rand, 0, 8));
      g_assert_cmpuint (sim_events_pending (f.sim), ==, (guint) g_tree_nnodes (f.pending));
    }
  do
    fuzz_run_until (&f, SIM_TIME_NEVER);
  while (f.stopped);
  g_assert_cmpint (g_tree_nnodes (f.pending), ==, 0);
  g_assert_cmpuint (sim_events_pending (f.sim), ==, 0);
  g_assert_cmpuint (sim_events_run (f.sim), ==, f.ran);
  g_assert_false (sim_step (f.sim));
  sim_free (f.sim);
  g_rand_free (f.rand);
  g_tree_unref (f.pending);
  g_ptr_array_unref (f.issued);
}

static const FuzzCase fuzz_cases[] = {
  { 1, 1 }, { 2, 1 }, { 3, 1 },
  { 1, 7 }, { 2, 7 }, { 3, 7 },
  { 1, 1000 }, { 2, 1000 }, { 3, 1000 },
  { 1, 100000 }, { 2, 100000 },
};

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/event/order-and-ties", test_order_and_ties);
  g_test_add_func ("/sim/event/many", test_many_random_order);
  g_test_add_func ("/sim/event/cancel", test_cancel);
  g_test_add_func ("/sim/event/run-until", test_run_until);
  g_test_add_func ("/sim/event/past-asserts", test_past_asserts);
  g_test_add_func ("/sim/event/two-sims", test_two_sims);
  g_test_add_func ("/sim/event/nested-step", test_nested_step);
  for (gsize i = 0; i < G_N_ELEMENTS (fuzz_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sim/event/random/pending-%u/seed-%" G_GINT64_FORMAT,
                                               fuzz_cases[i].pending, fuzz_cases[i].seed);
      g_test_add_data_func (name, &fuzz_cases[i], test_random_against_model);
    }
  return g_test_run ();
}
