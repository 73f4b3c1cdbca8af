/* test-wbt-probe.c — the simulator's blk-wbt rules (sim/sim-wbt.c)
 * against a recorded run of the real kernel's, and the reader of both
 * sides' events (replay/replay-wbt-probe.c).  tests/realdev/wbt-kernel.sh
 * checks the step arithmetic live, as root; this one runs anywhere and
 * adds the verdicts.
 *
 * tests/data/wbt-events-6.18-kyber-usb-stick.txt holds the wbt
 * events iosim validate recorded from Linux 6.18.44 on an emulated USB
 * stick (a loop device: 128 driver tags, non-rotational, wbt_lat_usec
 * 2000) while a buffered writer flushed next to an O_DIRECT reader.  Each
 * of the kernel's decisions is checked against ours given the same input:
 *  - every step's limits (max, normal, background) from the step alone
 *    (rq_depth_calc_max_depth, calc_wb_limits);
 *  - the window each step change reports (the one in force, armed at the
 *    step before: rwb_arm_timer);
 *  - the step after each window from its verdict, replayed through
 *    sim_wbt_apply_verdict from the first window's step: the kernel's
 *    next window must find the step ours took, and a step event must
 *    follow exactly the verdicts ours scaled on.
 * What this cannot check is when a window's verdict comes out as it does
 * (that depends on the run's timing); iosim validate sets both runs'
 * verdicts side by side for that. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "replay/replay-wbt-probe.h"
#include "sim/sim-wbt.h"

/* drivers/block/loop.c: tag_set.queue_depth = hw_queue_depth, 128; the
 * queue depth blk_queue_depth gives wbt (q->queue_depth). */
#define LOOP_QUEUE_DEPTH 128u

static GArray *
load_sample (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data",
                                                 "wbt-events-6.18-kyber-usb-stick.txt",
                                                 NULL);
  g_autoptr (GError) error = NULL;
  GArray *events = replay_wbt_events_load (path, &error);

  g_assert_no_error (error);
  return events;
}

static const ReplayWbtEvent *
event_at (const GArray *events, guint i)
{
  return &g_array_index (events, ReplayWbtEvent, i);
}

static SimRqDepth
depth_at_step (int step)
{
  SimRqDepth rqd = { .queue_depth = LOOP_QUEUE_DEPTH, .default_depth = SIM_WBT_DEF_DEPTH,
                     .scale_step = step };

  sim_rq_depth_calc_max_depth (&rqd);
  return rqd;
}

/* What the reader makes of the sample: as many windows and steps as its
 * wbt_timer and wbt_step lines, the first as printed. */
static void
test_load (void)
{
  g_autoptr (GArray) events = load_sample ();
  ReplayWbtSummary sum;
  const ReplayWbtEvent *first = event_at (events, 0);

  replay_wbt_summarize (events, &sum);
  g_assert_cmpuint (sum.windows, ==, 87);
  g_assert_cmpuint (sum.ups + sum.downs, ==, events->len - sum.windows);
  g_assert_cmpint (first->kind, ==, REPLAY_WBT_TIMER);
  g_assert_cmpint (first->status, ==, 3);
  g_assert_cmpint (first->step, ==, 0);
  g_assert_cmpuint (first->inflight, ==, 15);
  g_assert_cmpint (sum.first_step, ==, 0);
  g_assert_cmpint (sum.min_step, ==, -1);
  g_assert_cmpint (sum.max_step, ==, 4);
}

static void
test_limits (void)
{
  g_autoptr (GArray) events = load_sample ();
  guint checked = 0;

  for (guint i = 0; i < events->len; i++)
    {
      const ReplayWbtEvent *e = event_at (events, i);
      SimRqDepth rqd;
      guint normal, background;

      if (e->kind != REPLAY_WBT_STEP)
        continue;
      rqd = depth_at_step (e->step);
      sim_wbt_calc_limits (rqd.max_depth, SIM_WBT_LAT_NONROT_NS, &normal, &background);
      g_assert_cmpuint (rqd.max_depth, ==, e->max);
      g_assert_cmpuint (normal, ==, e->normal);
      g_assert_cmpuint (background, ==, e->background);
      checked++;
    }
  g_assert_cmpuint (checked, >, 10);
}

static void
test_windows (void)
{
  g_autoptr (GArray) events = load_sample ();
  int step_before = G_MININT;
  guint checked = 0;

  for (guint i = 0; i < events->len; i++)
    {
      const ReplayWbtEvent *e = event_at (events, i);

      if (e->kind == REPLAY_WBT_TIMER)
        step_before = e->step;
      else if (step_before != G_MININT)
        {
          g_assert_cmpuint (e->window_us, ==,
                            sim_wbt_window_ns (SIM_WBT_WINDOW_NS, step_before) / 1000);
          checked++;
        }
    }
  g_assert_cmpuint (checked, >, 10);
}

static void
test_verdicts (void)
{
  g_autoptr (GArray) events = load_sample ();
  SimRqDepth rqd = depth_at_step (event_at (events, 0)->step);
  guint unknown_cnt = 0, windows = 0;

  for (guint i = 0; i < events->len; i++)
    {
      const ReplayWbtEvent *e = event_at (events, i), *next;
      SimWbtScale scaled;

      if (e->kind != REPLAY_WBT_TIMER)
        continue;
      windows++;
      g_assert_cmpint (rqd.scale_step, ==, e->step);
      scaled = sim_wbt_apply_verdict (&rqd, (SimWbtStatus) e->status, &unknown_cnt);
      next = i + 1 < events->len ? event_at (events, i + 1) : NULL;
      if (next != NULL && next->kind == REPLAY_WBT_STEP)
        {
          g_assert_cmpint (scaled, ==, next->up ? SIM_WBT_SCALED_UP : SIM_WBT_SCALED_DOWN);
          g_assert_cmpint (rqd.scale_step, ==, next->step);
        }
      else
        g_assert_cmpint (scaled, ==, SIM_WBT_SCALE_NONE);
    }
  g_assert_cmpuint (windows, ==, 87);
}

/* ---- The reader on bad and simulated lines -------------------------------- */

typedef struct {
  const char *name;
  const char *text;
  const char *error;      /* substring of the error, or NULL: loads */
  guint       n_events;
} LoadCase;

static const LoadCase load_cases[] = {
  { "sim-log",
    "127053373 dev7_0 wbt wbt_timer status=unknown_writes step=0 inflight=15 reads=1 writes=1\n"
    "127053373 dev7_0 wbt wbt_step msg=scale_up step=-1 window_us=100000 background=8 normal=16 max=31\n"
    "227053373 dev7_0 wbt wbt_lat lat_us=198225\n"
    "227053373 dev7_0 mq-deadline dispatch ...\n", NULL, 2 },
  { "kernel-status-out-of-range",
    "# iosim-wbt device=7:0\n"
    "  fio-1 [001] ..s1. 1.000001: wbt_timer: 7:0: status=9, step=0, inflight=1\n",
    ":2: a wbt event that does not read", 0 },
  { "kernel-step-cut",
    "  fio-1 [001] ..s1. 1.000001: wbt_step: 7:0: scale up: step=-1, window=100000us\n",
    ":1: a wbt event", 0 },
  { "sim-status-unknown-name",
    "1 dev7_0 wbt wbt_timer status=maybe step=0 inflight=1 reads=0 writes=0\n",
    ":1: a wbt event", 0 },
  { "other-lines-only", "# header\nnothing here\n\n", NULL, 0 },
};

static void
test_load_case (gconstpointer data)
{
  const LoadCase *c = data;
  g_autofree char *dir = g_dir_make_tmp ("iosim-wbt-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "events.txt", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = NULL;

  g_assert_true (g_file_set_contents (path, c->text, -1, NULL));
  events = replay_wbt_events_load (path, &error);
  g_unlink (path);
  g_rmdir (dir);
  if (c->error != NULL)
    {
      g_assert_null (events);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, c->error));
      g_assert_nonnull (strstr (error->message, path));
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (events->len, ==, c->n_events);
}

/* The first window whose verdict or step differs; none while one side
 * has no more windows. */
static void
test_first_difference (void)
{
  static const ReplayWbtEvent a[] = {
    { REPLAY_WBT_TIMER, 0, 3, 0, 15 }, { REPLAY_WBT_STEP, 0, 0, -1 },
    { REPLAY_WBT_TIMER, 0, 4, -1, 30 },
  };
  static const ReplayWbtEvent b[] = {
    { REPLAY_WBT_TIMER, 0, 3, 0, 15 }, { REPLAY_WBT_STEP, 0, 0, -1 },
    { REPLAY_WBT_TIMER, 0, 3, -1, 30 }, { REPLAY_WBT_TIMER, 0, 2, -2, 0 },
  };
  g_autoptr (GArray) ka = g_array_new (FALSE, FALSE, sizeof (ReplayWbtEvent));
  g_autoptr (GArray) kb = g_array_new (FALSE, FALSE, sizeof (ReplayWbtEvent));

  g_array_append_vals (ka, a, G_N_ELEMENTS (a));
  g_array_append_vals (kb, b, 2);
  g_assert_cmpint (replay_wbt_first_difference (ka, kb), ==, -1);
  g_array_append_vals (kb, b + 2, 2);
  g_assert_cmpint (replay_wbt_first_difference (ka, kb), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/wbt-probe/load", test_load);
  g_test_add_func ("/wbt-probe/limits", test_limits);
  g_test_add_func ("/wbt-probe/windows", test_windows);
  g_test_add_func ("/wbt-probe/verdicts", test_verdicts);
  for (guint i = 0; i < G_N_ELEMENTS (load_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/wbt-probe/reader/%s", load_cases[i].name);
      g_test_add_data_func (path, &load_cases[i], test_load_case);
    }
  g_test_add_func ("/wbt-probe/first-difference", test_first_difference);
  return g_test_run ();
}
