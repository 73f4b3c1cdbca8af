/* test-sim-segments.c — the max_segments limit (sim/sim-queue.h): every
 * page of a user buffer or of the page cache is a segment of its own
 * (scattered pages), so 128 segments make 512 KiB: bio sizes from the
 * limits, a buffered writer's requests via a loop device (max_sectors_kb
 * 1280) are at most 512 KiB, a 1 MiB O_DIRECT read becomes two 512 KiB
 * requests (one 1 MiB with max_segments = 256, four with 64), bad keys
 * are refused by name. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "models/scenario.h"
#include "scenario-trace.h"

/* The next bio's sectors: max_sectors, or the end of the max_segments-th
 * page from the first (4 KiB pages). */
static void
test_bio_sectors (void)
{
  static const struct { guint32 max_sectors; guint segs; guint64 buf; guint64 left; guint32 want; } rows[] = {
    { 1024, 128,    0, 4096, 1024 },   /* 128 pages = 512 KiB = max_sectors */
    { 2560, 128,    0, 4096, 1024 },   /* the loop's 1280 KiB: cut at 128 pages */
    { 2560, 256,    0, 4096, 2048 },   /* 256 pages */
    { 2560, 256,    0, 1000, 1000 },   /* what is left */
    { 2560, 128,  512, 4096, 1023 },   /* starts 512 B into a page: (128 * 4096 - 512) / 512 */
    {  255, 128,    0, 4096,  255 },   /* SAFE_MAX_SECTORS */
    { 2560,   1, 2048,  100,    4 },   /* one segment: to the end of that page */
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      SimQueueLimits limits;
      sim_queue_limits_init (&limits, 1000);
      g_assert_cmpuint (limits.max_segments, ==, 128);
      limits.max_sectors = rows[i].max_sectors;
      limits.max_segments = rows[i].segs;
      g_assert_cmpuint (sim_queue_limits_bio_sectors (&limits, rows[i].buf, rows[i].left), ==,
                        rows[i].want);
    }
  g_assert_cmpuint (sim_segments_for (0, 4096), ==, 1);
  g_assert_cmpuint (sim_segments_for (0, 4097), ==, 2);
  g_assert_cmpuint (sim_segments_for (2048, 4096), ==, 2);
  g_assert_cmpuint (sim_segments_for (0, 512 * 1024), ==, 128);
}

/* A buffered writer through a loop device (max_sectors_kb 1280): its
 * requests are at most 512 KiB, and most are that; a 1 MiB O_DIRECT
 * reader's requests are two 512 KiB ones per read, or one 1 MiB with
 * max_segments = 256. */
static void
test_scenario_segments (void)
{
  g_autofree char *text = rw_scenario ("mq-deadline", "");
  Run run = run_text (text);
  TraceStats st = trace_stats (&run, FALSE);
  g_assert_cmpuint (st.max_write_sectors, ==, 1024);
  g_assert_cmpuint (device0 (run.r)->counters.segment_limited, >, 0);
  run_clear (&run);

  static const struct { const char *keys; guint per_read; guint sectors; } cases[] = {
    { "", 2, 1024 },
    { "max_segments = 256\n", 1, 2048 },
    { "max_segments = 64\n", 4, 512 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *rd = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 2ms\nbandwidth = 40MB/s\nvia = loop\n"
        "sched = mq-deadline\n%s"
        "[process reader]\ndevice = d\nop = read\npattern = sequential\nio = direct\nbs = 1MiB\n"
        "size = 64MiB\n", cases[c].keys);
      Run r = run_text (rd);
      TraceStats rs = trace_stats (&r, FALSE);
      g_assert_cmpuint (rs.read_requests, ==, 64 * cases[c].per_read);
      g_assert_cmpuint (rs.max_read_sectors, ==, cases[c].sectors);
      g_assert_cmpuint (rs.min_read_sectors, ==, cases[c].sectors);
      run_clear (&r);
    }
}

/* A bad key is refused by name. */
static void
test_scenario_keys (void)
{
  static const struct { const char *keys; const char *key; } cases[] = {
    { "max_segments = 0\n", "max_segments" },
    { "max_segments = 70000\n", "max_segments" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 2ms\nbandwidth = 40MB/s\nsched = none\n%s"
        "[process p]\ndevice = d\nop = read\nio = direct\nbs = 4KiB\nsize = 1MiB\n", cases[c].keys);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (text, "bad", NULL, NULL, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, cases[c].key));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/segments/bio-sectors", test_bio_sectors);
  g_test_add_func ("/segments/scenario", test_scenario_segments);
  g_test_add_func ("/segments/keys", test_scenario_keys);
  return g_test_run ();
}
