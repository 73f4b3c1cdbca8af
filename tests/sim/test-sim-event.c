/* test-sim-event.c — the event engine: ordering, FIFO ties, lazy cancel,
 * scheduling in the past asserts, two simulations side by side. */
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
  return g_test_run ();
}
