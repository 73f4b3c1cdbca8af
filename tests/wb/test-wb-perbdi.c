/* test-wb-perbdi.c — the "per-bdi-2.6.24" writeback era (models/wb/
 * wb-perbdi.c): per-device dirty thresholds from floating proportions of
 * writeback completions (2.6.24–3.1), and on the two-writers scenario the
 * fix they brought: a slow USB stick no longer drags a fast disk's writer
 * down to its pace, as the global 2.6 limit did. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scenario.h"
#include "models/wb/wb.h"
#include "models/wb/wb-perbdi.h"

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
              g_test_message ("%-26s %-12s %8.2f MB/s", label, name, p->mb_per_s);
              return p->mb_per_s;
            }
        }
    }
  g_error ("no %s in %s", name, label);
}

static void
test_two_writers (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "two-writers.ini", NULL);
  const char *const sets[] = { "host.writeback=global-2.6,per-bdi-2.6.24", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 2);
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      g_ptr_array_add (runs, scenario_run (s, r, NULL, &error));
      g_assert_no_error (error);
    }
  double disk_global = mbps (runs, "deadline global-2.6", "disk-writer");
  double disk_perbdi = mbps (runs, "deadline per-bdi-2.6.24", "disk-writer");
  double usb_perbdi = mbps (runs, "deadline per-bdi-2.6.24", "usb-writer");
  /* The stick's backlog is held to its own share: the disk writer runs at
   * its disk's pace again ... */
  g_assert_cmpfloat (disk_perbdi, >=, 3.0 * usb_perbdi);
  g_assert_cmpfloat (disk_perbdi, >, 3.0 * disk_global);
}

/* Sum of the flusher_pages rows of @device in a time-series CSV. */
static double
flusher_pages (const char *csv, const char *device)
{
  double sum = 0;
  g_autofree char *needle = g_strdup_printf (",bdi,%s,flusher_pages,", device);
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *at = strstr (lines[i], needle);
      if (at)
        sum += g_ascii_strtod (at + strlen (needle), NULL);
    }
  return sum;
}

/* 2.6.32: one flusher thread per device.  Both devices' flushers write
 * (the stick's blocks on its own queue, the disk's goes on), and the
 * per-device limits still keep the disk writer at its disk's pace. */
static void
test_per_device_flushers (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "two-writers.ini", NULL);
  const char *const sets[] = { "host.writeback=per-bdi-2.6.24", "writeback.kernel=2.6.32", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);
  ScenarioOutputs outputs = { .timeseries = out, .sample_ns = SIM_NS_PER_S };
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  g_ptr_array_add (runs, scenario_run (s, 0, &outputs, &error));
  g_assert_no_error (error);
  fclose (out);
  const char *label = ((SimRunResult *) g_ptr_array_index (runs, 0))->label;
  double disk = mbps (runs, label, "disk-writer");
  double usb = mbps (runs, label, "usb-writer");
  g_assert_cmpfloat (disk, >=, 3.0 * usb);
  g_test_message ("flusher pages: sda %.0f, usb %.0f", flusher_pages (buf, "sda"),
                  flusher_pages (buf, "usb"));
  g_assert_cmpfloat (flusher_pages (buf, "sda"), >, 0);
  g_assert_cmpfloat (flusher_pages (buf, "usb"), >, 0);
  free (buf);
}

/* A bare policy over a 256 MiB page cache, no devices: the `written` hook
 * is fed by hand. */
typedef struct {
  Sim          *sim;
  SimPageCache *pc;
  WbPolicy     *w;
} Bare;

static void
bare_init (Bare *b, const char *writeback_group)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (writeback_group)
    {
      g_key_file_load_from_data (kf, writeback_group, -1, G_KEY_FILE_NONE, &error);
      g_assert_no_error (error);
    }
  b->sim = sim_new (1);
  b->pc = sim_page_cache_new (b->sim, 256u << 20, SIM_RA_ERA_ONDEMAND_2_6_23);
  b->w = wb_policy_new (&wb_perbdi_ops, b->pc, b->sim, 1000, kf, &error);
  g_assert_no_error (error);
  g_assert_nonnull (b->w);
}

static void
bare_clear (Bare *b)
{
  wb_policy_free (b->w);
  sim_page_cache_free (b->pc);
  sim_free (b->sim);
}

static void
complete (Bare *b, SimBdi *bdi, guint64 pages)
{
  wb_perbdi_ops.written (b->w, bdi, pages, 0);
}

static void
test_proportions (void)
{
  Bare b;
  bare_init (&b, NULL);
  SimBdi a = { 0 }, c = { 0 };
  /* Nobody has completed anything: no device has a share yet. */
  g_assert_cmpuint (wb_perbdi_bdi_thresh_pages (b.w, &a), ==, 0);
  for (guint i = 0; i < 2000; i++)
    {
      complete (&b, &a, 3);
      complete (&b, &c, 1);
    }
  guint64 ta = wb_perbdi_bdi_thresh_pages (b.w, &a);
  guint64 tc = wb_perbdi_bdi_thresh_pages (b.w, &c);
  g_test_message ("A completed 3x B: bdi_thresh A %" G_GUINT64_FORMAT " B %" G_GUINT64_FORMAT, ta, tc);
  g_assert_cmpuint (tc, >, 0);
  g_assert_cmpuint (ta, >, tc);
  /* The shares are of completions, 3:1 within the kernel's truncation. */
  g_assert_cmpuint (ta, >=, 3 * tc - 3);
  g_assert_cmpuint (ta, <=, 3 * tc + 3);

  /* The proportions float: after many periods of the reverse, B leads. */
  for (guint i = 0; i < 40000; i++)
    {
      complete (&b, &a, 1);
      complete (&b, &c, 3);
    }
  ta = wb_perbdi_bdi_thresh_pages (b.w, &a);
  tc = wb_perbdi_bdi_thresh_pages (b.w, &c);
  g_test_message ("then B completed 3x A: bdi_thresh A %" G_GUINT64_FORMAT " B %" G_GUINT64_FORMAT,
                  ta, tc);
  g_assert_cmpuint (tc, >, 2 * ta);
  bare_clear (&b);
}

static void
test_max_ratio (void)
{
  Bare full, capped;
  bare_init (&full, NULL);
  bare_init (&capped, "[writeback]\nkernel = 2.6.28\nmax_ratio = 20\n");
  SimBdi a1 = { 0 }, a2 = { 0 };
  /* One device does all the writeback: its share tends to 100 %. */
  complete (&full, &a1, 100000);
  complete (&capped, &a2, 100000);
  guint64 t_full = wb_perbdi_bdi_thresh_pages (full.w, &a1);
  guint64 t_capped = wb_perbdi_bdi_thresh_pages (capped.w, &a2);
  g_test_message ("sole device: bdi_thresh %" G_GUINT64_FORMAT ", with max_ratio 20: %"
                  G_GUINT64_FORMAT, t_full, t_capped);
  g_assert_cmpuint (t_capped, >, 0);
  g_assert_cmpuint (t_capped * 4, <, t_full);
  bare_clear (&full);
  bare_clear (&capped);
}

static void
expect_error (const char *group, const char *needle)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  g_key_file_load_from_data (kf, group, -1, G_KEY_FILE_NONE, &error);
  g_assert_no_error (error);
  Sim *sim = sim_new (1);
  SimPageCache *pc = sim_page_cache_new (sim, 64u << 20, SIM_RA_ERA_ONDEMAND_2_6_23);
  WbPolicy *w = wb_policy_new (&wb_perbdi_ops, pc, sim, 1000, kf, &error);
  g_assert_null (w);
  g_assert_error (error, WB_ERROR, WB_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, needle));
  sim_page_cache_free (pc);
  sim_free (sim);
}

static void
test_tunables (void)
{
  expect_error ("[writeback]\nkernel = 2.6.20\n", "kernel");
  expect_error ("[writeback]\nkernel = 3.2.0\n", "kernel");
  expect_error ("[writeback]\nmax_ratio = 101\n", "max_ratio");
  expect_error ("[writeback]\nbdi_ratio = 5\n", "bdi_ratio");
  Bare ok;
  bare_init (&ok, "[writeback]\nkernel = 3.1\nmin_ratio = 10\nmax_ratio = 50\n");
  bare_clear (&ok);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/wb/perbdi/proportions", test_proportions);
  g_test_add_func ("/wb/perbdi/max-ratio", test_max_ratio);
  g_test_add_func ("/wb/perbdi/tunables", test_tunables);
  g_test_add_func ("/wb/perbdi/two-writers", test_two_writers);
  g_test_add_func ("/wb/perbdi/per-device-flushers", test_per_device_flushers);
  return g_test_run ();
}
