/* test-writeback.c — the writeback eras on the shipped two-writers
 * scenario: write-through lets each writer run at its device's speed; the
 * global 2.6 dirty limit drags the fast writer down to the slow device's
 * rate.  scenario_run itself asserts that no page is lost (dirtied =
 * written back + dirty + under writeback). */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/scenario.h"

static double
mbps (GPtrArray *runs, const char *label, const char *name)
{
  for (guint i = 0; i < runs->len; i++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, i);
      if (strcmp (r->label, label) != 0)
        continue;
      for (guint j = 0; j < r->processes->len; j++)
        {
          const SimProcessResult *p = g_ptr_array_index (r->processes, j);
          if (strcmp (p->name, name) == 0)
            {
              g_test_message ("%-22s %-12s %8.2f MB/s", label, name, p->mb_per_s);
              return p->mb_per_s;
            }
        }
    }
  g_error ("no %s in %s", name, label);
}

/* [host] writeback_page_cost paces the writeback submitter: an fsync of
 * 8 MiB (2048 pages) on a fast device hands its 512 KiB bios (128 pages)
 * to the queue 128 x 10 us = 1.28 ms apart, so the last one is queued
 * 15 x 1.28 ms after the first; without the cost all 16 go at once.  With
 * writeback_bio_max = 4KiB (a block device's buffer heads) the 2048 bios
 * of one page are queued 10 us apart and merge, in the submitter's plug,
 * into the same 16 requests of 512 KiB (max_segments 128), each sent on as
 * the next one starts.  The simulated block trace (--trace-out) shows the
 * Q and D events. */
static void
check_paced_fsync (const char *cost, const char *bio_max, guint want_bios,
                   gint64 want_span_ns)
{
  g_autofree char *text = g_strdup_printf (
    "[sim]\nseed = 1\n[host]\nmemory = 1GiB\nwriteback = io-less-3.2\n"
    "writeback_page_cost = %s\nwriteback_bio_max = %s\n"
    "[device d]\nkind = fixed\noverhead = 10us\nbandwidth = 10000MB/s\nsched = none\n"
    "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 1MiB\nsize = 8MiB\n"
    "end_fsync = true\n", cost, bio_max);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) sc = scenario_load_data (text, "paced", NULL, NULL, &error);
  char *buf = NULL;
  gsize len = 0;
  FILE *trace = open_memstream (&buf, &len);
  ScenarioOutputs outputs = { .trace_out = trace };
  g_autofree char *out = NULL;
  g_auto (GStrv) lines = NULL;
  gint64 first = -1, last = -1;
  guint queued = 0, dispatched = 0;

  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (sc, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (trace);
  out = buf;
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
      guint n = 0;
      const char *fields[8] = { NULL };

      for (guint k = 0; f[k] != NULL && n < 8; k++)
        if (f[k][0] != '\0')
          fields[n++] = f[k];
      /* blkparse: dev cpu seq time pid action rwbs sector + n */
      if (n < 7 || strchr (fields[6], 'W') == NULL)
        continue;
      if (strcmp (fields[5], "D") == 0)
        dispatched++;
      if (strcmp (fields[5], "Q") != 0)
        continue;
      gint64 t = (gint64) llround (g_ascii_strtod (fields[3], NULL) * 1e9);
      first = first < 0 ? t : first;
      last = t;
      queued++;
    }
  g_test_message ("writeback_page_cost %s, bios of at most %s: %u writes queued from %"
                  G_GINT64_FORMAT " to %" G_GINT64_FORMAT " ns, %u dispatched", cost, bio_max,
                  queued, first, last, dispatched);
  g_assert_cmpuint (queued, ==, want_bios);
  g_assert_cmpuint (dispatched, ==, 16);
  g_assert_cmpint (last - first, ==, want_span_ns);
}

static void
test_paced_writeback (void)
{
  check_paced_fsync ("10us", "0", 16, 15 * 128 * 10000);
  check_paced_fsync ("0us", "0", 16, 0);
  check_paced_fsync ("10us", "4KiB", 2048, 2047 * 10000);
}

static void
test_two_writers (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "two-writers.ini", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 5);
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      g_ptr_array_add (runs, scenario_run (s, r, NULL, &error));
      g_assert_no_error (error);
    }
  double disk_none = mbps (runs, "deadline none", "disk-writer");
  double usb_none = mbps (runs, "deadline none", "usb-writer");
  double disk_global = mbps (runs, "deadline global-2.6", "disk-writer");
  double usb_global = mbps (runs, "deadline global-2.6", "usb-writer");
  /* Write-through: each at its own device's pace. */
  g_assert_cmpfloat (disk_none, >, 3.0 * usb_none);
  /* Global limit: the disk writer is held to the stick's pace ... */
  g_assert_cmpfloat (disk_global, <, 0.5 * disk_none);
  g_assert_cmpfloat (disk_global, <, 2.0 * usb_global);
  /* ... which caching still lets beat write-through for the stick itself. */
  g_assert_cmpfloat (usb_global, >=, usb_none);
  /* Per-device limits: the stick's backlog is bounded by its own share. */
  g_assert_cmpfloat (mbps (runs, "deadline per-bdi-2.6.24", "disk-writer"), >, 3.0 * disk_global);
  g_assert_cmpfloat (mbps (runs, "deadline io-less-3.2", "disk-writer"), >, 3.0 * disk_global);
}

static GPtrArray *
run_file (const char *name, const char *const *sets)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  GPtrArray *runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      g_ptr_array_add (runs, scenario_run (s, r, NULL, &error));
      g_assert_no_error (error);
    }
  return runs;
}

/* Seconds the reader took for its whole 1 GiB (it must have finished). */
static double
reader_seconds (GPtrArray *runs, const char *label)
{
  double mb_per_s = mbps (runs, label, "reader");
  for (guint i = 0; i < runs->len; i++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, i);
      if (strcmp (r->label, label) != 0)
        continue;
      for (guint j = 0; j < r->processes->len; j++)
        {
          const SimProcessResult *p = g_ptr_array_index (r->processes, j);
          if (strcmp (p->name, "reader") == 0)
            {
              g_assert_cmpuint (p->bytes, ==, G_GUINT64_CONSTANT (1) << 30);
              return (double) p->bytes / (mb_per_s * 1e6);
            }
        }
    }
  g_error ("no reader in %s", label);
}

/* Issue 4, scenario 1: the reader's time alone (the writer starts after
 * the run) and with the writer, for every era. */
static void
test_slow_writer_reader (void)
{
  const char *const solo_sets[] = { "process usb-writer.start=1000s", NULL };
  g_autoptr (GPtrArray) solo = run_file ("slow-writer-reader.ini", solo_sets);
  g_autoptr (GPtrArray) with = run_file ("slow-writer-reader.ini", NULL);
  static const char *const eras[] = { "none", "bdflush-2.4", "global-2.6", "per-bdi-2.6.24",
                                      "io-less-3.2" };
  double slowdown[G_N_ELEMENTS (eras)];
  for (guint e = 0; e < G_N_ELEMENTS (eras); e++)
    {
      g_autofree char *label = g_strdup_printf ("deadline %s", eras[e]);
      double alone = reader_seconds (solo, label);
      double shared = reader_seconds (with, label);
      slowdown[e] = shared / alone;
      g_test_message ("%-16s reader alone %6.1f s, with the writer %6.1f s: x%.2f", eras[e],
                      alone, shared, slowdown[e]);
    }
  /* Write-through: the writer's pages never crowd the reader out. */
  g_assert_cmpfloat (slowdown[0], <, 1.05);
  /* 2.4: the stick's dirty backlog fills the shared pool, and the reader's
   * allocations wait on the stick's pages, several times slower. */
  g_assert_cmpfloat (slowdown[1], >, 3.0);
  /* 2.6 before per-device limits: the same backlog, but reclaim puts the
   * stick's dirty and writeback pages back at the hot end and frees the
   * reader's clean ones; it waits only when a whole scan meets the stick's
   * pages, a small fraction of 2.4's loss. */
  g_assert_cmpfloat (slowdown[2], <, 2.0);
  g_assert_cmpfloat (slowdown[2] - 1.0, <, (slowdown[1] - 1.0) / 4.0);
  /* Per-device limits, and 3.2's reclaim that leaves dirty pages to the
   * flusher, keep the reader near its solo time. */
  g_assert_cmpfloat (slowdown[3], <, 1.25);
  g_assert_cmpfloat (slowdown[4], <, 1.25);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/writeback/two-writers", test_two_writers);
  g_test_add_func ("/writeback/paced", test_paced_writeback);
  g_test_add_func ("/writeback/slow-writer-reader", test_slow_writer_reader);
  return g_test_run ();
}
