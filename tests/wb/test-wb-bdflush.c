/* test-wb-bdflush.c — the "bdflush-2.4" and "bdflush-2.4.18" writeback eras
 * (models/wb/wb-bdflush.c, Linux 2.4 fs/buffer.c): the /proc/sys/vm/bdflush
 * tuple in [writeback], the two-writers scenario, bdflush sleeping on a full
 * request queue of the slow device while the fast device's dirty pages
 * wait, what balance_dirty_state counts in each era, and who a sleeper in
 * get_request_wait waits for. */
#include <glib.h>
#include <string.h>

#include "models/scenario.h"
#include "models/wb/wb.h"

static const SimProcessResult *
process (const SimRunResult *r, const char *name)
{
  for (guint j = 0; j < r->processes->len; j++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, j);
      if (strcmp (p->name, name) == 0)
        return p;
    }
  g_error ("no process %s in %s", name, r->label);
}

static const SimDeviceResult *
device (const SimRunResult *r, const char *name)
{
  for (guint j = 0; j < r->devices->len; j++)
    {
      const SimDeviceResult *d = g_ptr_array_index (r->devices, j);
      if (strcmp (d->name, name) == 0)
        return d;
    }
  g_error ("no device %s in %s", name, r->label);
}

/* Both 2.4 eras read the same [writeback] key. */
static const char *const eras_2_4[] = { "bdflush-2.4", "bdflush-2.4.18" };

/* A one-writer scenario under era @era, then @extra. */
static Scenario *
load_era (const char *era, const char *extra, GError **error)
{
  g_autofree char *text = g_strdup_printf (
    "[host]\nmemory = 64MiB\nwriteback = %s\n"
    "[sim]\nseed = 1\nduration = 1s\n"
    "[device sda]\nmodel = disk-7200-sata\nsched = deadline\n"
    "[process w]\ndevice = sda\nop = write\nio = buffered\nbs = 64KiB\nsize = 1MiB\n%s",
    era, extra);
  return scenario_load_data (text, "bdflush-parse", NULL, NULL, error);
}

static Scenario *
load_with_tuple (const char *era, const char *tuple, GError **error)
{
  g_autofree char *extra = g_strdup_printf ("[writeback]\nbdflush = %s\n", tuple);
  return load_era (era, extra, error);
}

static void
test_parse_ok (gconstpointer data)
{
  const char *era = data;
  static const char *const good[] = {
    "\"30 500 0 0 500 3000 60 20 0\"", "2 500 0 0 500 3000 3 1 0", "\"40\"", NULL,
  };
  for (guint i = 0; good[i]; i++)
    {
      g_autoptr (GError) error = NULL;
      Scenario *s = load_with_tuple (era, good[i], &error);
      g_assert_no_error (error);
      scenario_free (s);
    }
}

static void
test_parse_errors (gconstpointer data)
{
  const char *era = data;
  static const struct { const char *tuple; const char *field; } bad[] = {
    { "\"30 500 0 0 five 3000 60 20 0\"", "interval" },
    { "\"30 500 0 0 500 3000 160 20 0\"", "nfract_sync" },
    { "\"101\"", "nfract" },
    { "\"30 -1\"", "ndirty" },
    { "\"30 500 0 0 500 3000 60 20 0 7\"", "more than 9" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      Scenario *s = load_with_tuple (era, bad[i].tuple, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      g_test_message ("%s %s -> %s", era, bad[i].tuple, error->message);
      g_assert_nonnull (strstr (error->message, bad[i].field));
      g_assert_nonnull (strstr (error->message, "bdflush"));
    }
  g_autoptr (GError) error = NULL;
  Scenario *s = load_era (era, "[writeback]\ndirty_ratio = 40\n", &error);
  g_assert_null (s);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dirty_ratio"));
  g_assert_nonnull (strstr (error->message, era));
}

/* Two writers, a disk and a USB stick: under the one global LRU the disk
 * writer is held back by the stick's backlog; nobody deadlocks. */
static void
test_two_writers (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "two-writers.ini", NULL);
  const char *const sets[] = { "host.writeback=none,bdflush-2.4", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 2);
  SimRunResult *none = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  SimRunResult *bdf = scenario_run (s, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (bdf->writeback, ==, "bdflush-2.4");
  double disk_none = process (none, "disk-writer")->mb_per_s;
  double disk_bdf = process (bdf, "disk-writer")->mb_per_s;
  double usb_bdf = process (bdf, "usb-writer")->mb_per_s;
  g_test_message ("disk-writer none %.2f MB/s, bdflush-2.4 %.2f MB/s; usb-writer %.2f MB/s",
                  disk_none, disk_bdf, usb_bdf);
  g_assert_cmpfloat (disk_bdf, >, 0.0);
  g_assert_cmpfloat (usb_bdf, >, 0.0);
  g_assert_cmpfloat (2.0 * disk_bdf, <=, disk_none);
  sim_run_result_free (none);
  sim_run_result_free (bdf);
}

/* The stick receives 4 KiB random writes (one request each, so its pool of
 * requests fills); the disk writer dirties 1 MiB later.  bdflush, asleep on
 * the stick's full queue, leaves the disk's pages dirty for the whole run;
 * 2.6's pdflush skips the congested queue and writes them at once. */
static const char *const stuck_ini =
  "[host]\nmemory = 64MiB\nwriteback = %s\n"
  "[sim]\nseed = 1\nduration = 3s\n"
  "[device sda]\nmodel = disk-7200-sata\nsched = deadline\n"
  "[device usb]\nmodel = usb-stick\nsched = deadline\n"
  "[writeback]\n%s\n"
  "[process usb-writer]\ndevice = usb\nop = write\nio = buffered\npattern = random\n"
  "bs = 4KiB\nsize = 8MiB\n"
  "[process disk-writer]\ndevice = sda\nop = write\nio = buffered\nbs = 64KiB\n"
  "size = 1MiB\nstart = 200ms\n";

static SimRunResult *
run_stuck (const char *era, const char *tunables)
{
  g_autofree char *text = g_strdup_printf (stuck_ini, era, tunables);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "bdflush-stuck", NULL, NULL, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  return r;
}

static void
test_blocks_on_full_queue (void)
{
  /* nfract 1 %, never synchronous, bdflush runs until nothing is dirty. */
  SimRunResult *bdf = run_stuck ("bdflush-2.4", "bdflush = \"1 500 0 0 500 3000 100 0 0\"");
  SimRunResult *pdf = run_stuck ("global-2.6", "dirty_background_ratio = 1");
  const SimDeviceResult *sda_bdf = device (bdf, "sda");
  const SimDeviceResult *usb_bdf = device (bdf, "usb");
  const SimDeviceResult *sda_pdf = device (pdf, "sda");
  guint64 disk_bytes = 1u << 20;
  g_test_message ("sda written: bdflush-2.4 %" G_GUINT64_FORMAT " B, global-2.6 %"
                  G_GUINT64_FORMAT " B; usb bios that slept for a request %" G_GUINT64_FORMAT,
                  sda_bdf->counters.bytes[SIM_OP_WRITE], sda_pdf->counters.bytes[SIM_OP_WRITE],
                  usb_bdf->counters.sleeps);
  /* The stick's pool ran out: bdflush's bios waited for requests. */
  g_assert_cmpuint (usb_bdf->counters.sleeps, >, 0);
  /* Both writers returned (buffered), and pdflush wrote the disk's pages. */
  g_assert_cmpuint (process (bdf, "disk-writer")->bytes, ==, disk_bytes);
  g_assert_cmpuint (sda_pdf->counters.bytes[SIM_OP_WRITE], ==, disk_bytes);
  /* bdflush did not: it slept on the stick's queue. */
  g_assert_cmpuint (sda_bdf->counters.bytes[SIM_OP_WRITE], <, disk_bytes);
  sim_run_result_free (bdf);
  sim_run_result_free (pdf);
}

/* Run scenario @text's first run, its time series sampled every
 * @sample_ns into *@csv (free() it). */
static SimRunResult *
run_sampled (const char *text, const char *name, SimTime sample_ns, char **csv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, name, NULL, NULL, &error);
  g_assert_no_error (error);
  size_t len = 0;
  FILE *out = open_memstream (csv, &len);
  ScenarioOutputs outputs = { .timeseries = out, .sample_ns = sample_ns };
  SimRunResult *r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (out);
  return r;
}

/* The highest count of pages dirty or under writeback in the time series
 * @csv (bdi dirty_pages + writeback_pages of one sample, summed over
 * devices). */
static double
max_dirty_and_writeback (const char *csv)
{
  g_autoptr (GHashTable) per_time = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  double best = 0;
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 6);
      if (strcmp (f[2], "bdi") != 0
          || (strcmp (f[4], "dirty_pages") != 0 && strcmp (f[4], "writeback_pages") != 0))
        continue;
      double *sum = g_hash_table_lookup (per_time, f[1]);
      if (sum == NULL)
        {
          sum = g_new0 (double, 1);
          g_hash_table_insert (per_time, g_strdup (f[1]), sum);
        }
      *sum += g_ascii_strtod (f[5], NULL);
      best = MAX (best, *sum);
    }
  return best;
}

/* balance_dirty_state before and after 2.4.19-pre5's aa-020: 2.4.18 counts
 * buffers under writeback with the dirty ones, so a writer to a slow
 * device keeps dirty and in-flight pages together at nfract_sync (60 % of
 * 64 MiB) give or take one batch; 2.4.19-pre5 counts only dirty pages, and
 * the slow queue's requests in flight come on top. */
static void
test_counts_locked_buffers (void)
{
  static const char *const eras[] = { "bdflush-2.4.18", "bdflush-2.4" };
  double peak[G_N_ELEMENTS (eras)];
  const double total = 16384, sync_pages = 0.6 * total;
  for (guint e = 0; e < G_N_ELEMENTS (eras); e++)
    {
      g_autofree char *text = g_strdup_printf (
        "[host]\nmemory = 64MiB\nwriteback = %s\n"
        "[sim]\nseed = 1\nduration = 20s\n"
        "[device slow]\nkind = fixed\noverhead = 1ms\nbandwidth = 2MB/s\nsched = deadline\n"
        "[process w]\ndevice = slow\nop = write\nio = buffered\nbs = 64KiB\nsize = 56MiB\n",
        eras[e]);
      char *buf = NULL;
      SimRunResult *r = run_sampled (text, "bdflush-locked", 100 * SIM_NS_PER_MS, &buf);
      peak[e] = max_dirty_and_writeback (buf);
      g_test_message ("%s: at most %.0f pages dirty or under writeback (nfract_sync %.0f)",
                      eras[e], peak[e], sync_pages);
      free (buf);
      sim_run_result_free (r);
    }
  /* One batch of 32 and one write's 16 pages over the line at most. */
  g_assert_cmpfloat (peak[0], <=, sync_pages + 32 + 16);
  g_assert_cmpfloat (peak[1], >, sync_pages + 512);
}

/* The pages of device @dev that the flushers started, from the time
 * series @csv (bdi flusher_pages summed over the samples). */
static double
flusher_pages (const char *csv, const char *dev)
{
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  double sum = 0;
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 6);
      if (strcmp (f[2], "bdi") == 0 && strcmp (f[3], dev) == 0 && strcmp (f[4], "flusher_pages") == 0)
        sum += g_ascii_strtod (f[5], NULL);
    }
  return sum;
}

/* get_request_wait returns once the sleeper's own bio has a request.  A
 * writer leaves 24 MiB dirty for a slow device (1 MB/s, 32 KiB requests),
 * below 2.4.18's nfract; kupdated starts them at 30 s, when a reader
 * begins to fill memory, and the reader's reclaim meets the slow device's
 * dirty pages and writes some itself, sleeping on the slow queue's full
 * pool.  kupdated's bios take their turn among the reader's, so kupdated
 * writes most of the pages.  (When the reader went on scanning while its
 * bio waited and kupdated waited for the queue to have no sleeper at all,
 * kupdated wrote 800 of the 6,144 under 2.4.18 and the reader the rest,
 * one page at a time.) */
static void
test_request_wait_is_per_task (void)
{
  for (guint e = 0; e < G_N_ELEMENTS (eras_2_4); e++)
    {
      g_autofree char *text = g_strdup_printf (
        "[host]\nmemory = 64MiB\nwriteback = %s\nkernel = 2.4\n"
        "[sim]\nseed = 1\nduration = 100s\n"
        "[device slow]\nkind = fixed\noverhead = 1ms\nbandwidth = 1MB/s\nsched = linus\n"
        "max_sectors_kb = 32\n"
        "[device fast]\nkind = fixed\noverhead = 100us\nbandwidth = 30MB/s\nsched = linus\n"
        "[process w]\ndevice = slow\nop = write\nio = buffered\nbs = 64KiB\nsize = 24MiB\n"
        "[process r]\ndevice = fast\nio = buffered\nbs = 64KiB\nsize = 1GiB\nstart = 30s\n",
        eras_2_4[e]);
      char *buf = NULL;
      SimRunResult *r = run_sampled (text, "bdflush-request-wait", SIM_NS_PER_S, &buf);
      double written = (double) device (r, "slow")->counters.bytes[SIM_OP_WRITE] / 4096;
      double by_flushers = flusher_pages (buf, "slow");
      g_test_message ("%s: slow device wrote %.0f pages, %.0f of them started by the flushers",
                      eras_2_4[e], written, by_flushers);
      g_assert_cmpfloat (written, ==, 6144);
      g_assert_cmpfloat (by_flushers, >, 0.5 * written);
      free (buf);
      sim_run_result_free (r);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (eras_2_4); i++)
    {
      g_autofree char *ok = g_strdup_printf ("/wb/bdflush/parse-ok/%s", eras_2_4[i]);
      g_autofree char *bad = g_strdup_printf ("/wb/bdflush/parse-errors/%s", eras_2_4[i]);
      g_test_add_data_func (ok, eras_2_4[i], test_parse_ok);
      g_test_add_data_func (bad, eras_2_4[i], test_parse_errors);
    }
  g_test_add_func ("/wb/bdflush/two-writers", test_two_writers);
  g_test_add_func ("/wb/bdflush/blocks-on-full-queue", test_blocks_on_full_queue);
  g_test_add_func ("/wb/bdflush/2.4.18-counts-locked-buffers", test_counts_locked_buffers);
  g_test_add_func ("/wb/bdflush/request-wait-is-per-task", test_request_wait_is_per_task);
  return g_test_run ();
}
