/* test-timeseries.c — per-interval samples: they account for every byte,
 * they do not change what the run does, and they stop with the run. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "models/scenario.h"
#include "sim/sim-timeseries.h"

static const char ini[] =
  "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 10MB/s\nsched = noop,deadline\n"
  "[process r]\npattern = sequential\nbs = 64KiB\nsize = 8MiB\n"
  "[process w]\nop = write\npattern = random\nbs = 4KiB\nsize = 1MiB\nthink = 5ms\n";

static void
test_accounts_every_byte (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "ts", NULL, NULL, &error);
  g_assert_no_error (error);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);
  fputs (SIM_TIMESERIES_HEADER, out);
  g_autoptr (GPtrArray) series = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_series_free);
  ScenarioOutputs outputs = { .timeseries = out, .series = series, .sample_ns = 100 * SIM_NS_PER_MS };
  g_autoptr (SimRunResult) with = scenario_run (s, 1, &outputs, &error);
  g_assert_no_error (error);
  fclose (out);
  g_autoptr (SimRunResult) without = scenario_run (s, 1, NULL, &error);
  g_assert_no_error (error);

  /* Sampling reads only: the processes did exactly the same. */
  for (guint i = 0; i < with->processes->len; i++)
    {
      const SimProcessResult *a = g_ptr_array_index (with->processes, i);
      const SimProcessResult *b = g_ptr_array_index (without->processes, i);
      g_assert_cmpuint (a->bytes, ==, b->bytes);
      g_assert_cmpint (a->lat_p99_ns, ==, b->lat_p99_ns);
      g_assert_cmpfloat (a->mb_per_s, ==, b->mb_per_s);
    }

  /* MB/s x interval over all rows of a process adds up to its bytes. */
  double r_bytes = 0;
  guint rows = 0;
  g_auto (GStrv) lines = g_strsplit (buf, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "run,time_s,kind,name,metric,value");
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 6);
      g_assert_cmpstr (f[0], ==, "deadline");
      rows++;
      if (strcmp (f[2], "process") == 0 && strcmp (f[3], "r") == 0 && strcmp (f[4], "mb_per_s") == 0)
        r_bytes += g_ascii_strtod (f[5], NULL) * 1e6 * 0.1;
    }
  g_assert_cmpuint (rows, >, 0);
  const SimProcessResult *r = g_ptr_array_index (with->processes, 0);
  g_assert_cmpfloat (fabs (r_bytes - (double) r->bytes), <, 0.001 * (double) r->bytes);

  /* The kept series: one per process, one point per interval; the run
   * ends within one interval of its last completion. */
  g_assert_cmpuint (series->len, ==, 2);
  const SimSeries *rs = g_ptr_array_index (series, 0);
  g_assert_cmpstr (rs->label, ==, "deadline r");
  g_assert_cmpint (with->elapsed_ns - without->elapsed_ns, <, 100 * SIM_NS_PER_MS);
  g_assert_cmpint (with->elapsed_ns, >=, without->elapsed_ns);
  free (buf);
}

static void
count_progress (gpointer data, guint run, SimTime now_ns, SimTime end_ns)
{
  (*(guint *) data)++;
}

/* Running in slices for a progress line must not change anything. */
static void
test_progress_changes_nothing (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "ts", NULL, NULL, &error);
  g_assert_no_error (error);
  guint calls = 0;
  ScenarioOutputs outputs = { .progress = count_progress, .progress_data = &calls };
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      g_ptr_array_add (a, scenario_run (s, r, &outputs, &error));
      g_assert_no_error (error);
      g_ptr_array_add (b, scenario_run (s, r, NULL, &error));
      g_assert_no_error (error);
    }
  g_autofree char *ja = sim_report_json ("ts", 1, a);
  g_autofree char *jb = sim_report_json ("ts", 1, b);
  g_assert_cmpstr (ja, ==, jb);
}

/* The last value of kind,name,metric in the run @run of @csv; -1 if none. */
static double
last_value (const char *csv, const char *run, const char *kind, const char *name,
            const char *metric, guint *count)
{
  double v = -1;
  *count = 0;
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      if (strcmp (f[0], run) == 0 && strcmp (f[2], kind) == 0 && strcmp (f[3], name) == 0
          && strcmp (f[4], metric) == 0)
        {
          v = g_ascii_strtod (f[5], NULL);
          (*count)++;
        }
    }
  return v;
}

/* Writeback rows: the era's thresholds, throttled tasks, their pauses and
 * the flusher's pages, for every era; sampling them (which asks the policy
 * for its limits) changes nothing in the run; the kept writeback series
 * go in one panel per run. */
static void
test_writeback_rows (void)
{
  static const char wb_ini[] =
    "[host]\nmemory = 128MiB\nwriteback = global-2.6,per-bdi-2.6.24,io-less-3.2\n"
    "[sim]\nduration = 20s\n"
    "[device usb]\nmodel = usb-stick\n"
    "[process w]\nop = write\nio = buffered\nbs = 64KiB\nsize = 1GiB\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (wb_ini, "wb", NULL, NULL, &error);
  g_assert_no_error (error);
  for (guint run = 0; run < scenario_n_runs (s); run++)
    {
      const char *label = scenario_run_label (s, run);
      char *buf = NULL;
      size_t len = 0;
      FILE *out = open_memstream (&buf, &len);
      fputs (SIM_TIMESERIES_HEADER, out);
      g_autoptr (GPtrArray) kept = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_series_free);
      ScenarioOutputs outputs = { .timeseries = out, .writeback_series = kept,
                                  .sample_ns = SIM_NS_PER_S };
      g_autoptr (SimRunResult) with = scenario_run (s, run, &outputs, &error);
      g_assert_no_error (error);
      fclose (out);
      g_autoptr (SimRunResult) without = scenario_run (s, run, NULL, &error);
      g_assert_no_error (error);
      const SimProcessResult *a = g_ptr_array_index (with->processes, 0);
      const SimProcessResult *b = g_ptr_array_index (without->processes, 0);
      g_assert_cmpuint (a->bytes, ==, b->bytes);
      g_assert_cmpint (a->lat_max_ns, ==, b->lat_max_ns);

      guint n;
      /* 128 MiB: the global threshold is a positive part of memory. */
      double thresh = last_value (buf, label, "writeback", "global", "thresh_pages", &n);
      g_assert_cmpuint (n, ==, 20);
      g_assert_cmpfloat (thresh, >, 0);
      g_assert_cmpfloat (thresh, <, 32768);
      double bdi_thresh = last_value (buf, label, "bdi", "usb", "thresh_pages", &n);
      if (strstr (label, "global"))
        g_assert_cmpuint (n, ==, 0);              /* no per-device limit */
      else
        {
          /* The only writer's device earns (nearly) the whole limit. */
          g_assert_cmpuint (n, >, 0);
          g_assert_cmpfloat (bdi_thresh, >, 0.5 * thresh);
          g_assert_cmpfloat (bdi_thresh, <=, thresh);
        }
      /* A writer that outruns the stick is held, sleeps, and the flusher
       * (or, before 3.2, the writer itself) writes the pages. */
      g_assert_cmpfloat (last_value (buf, label, "bdi", "usb", "throttled_tasks", &n), ==, 1);
      double pauses = 0;
      g_auto (GStrv) lines = g_strsplit (buf, "\n", -1);
      for (guint i = 1; lines[i] && lines[i][0]; i++)
        if (g_str_has_prefix (lines[i], label) && strstr (lines[i], ",bdi,usb,pauses,"))
          pauses += g_ascii_strtod (strrchr (lines[i], ',') + 1, NULL);
      g_assert_cmpfloat (pauses, >, 0);
      if (strstr (label, "io-less"))
        g_assert_cmpfloat (last_value (buf, label, "bdi", "usb", "max_pause_ms", &n), <=, 200);
      /* Kept series: usb dirty, writeback, its threshold (not under the
       * global era) and the global threshold, all in the run's panel. */
      g_assert_cmpuint (kept->len, ==, strstr (label, "global") ? 3 : 4);
      for (guint i = 0; i < kept->len; i++)
        {
          const SimSeries *ss = g_ptr_array_index (kept, i);
          g_assert_cmpstr (ss->panel, ==, label);
          g_assert_cmpuint (ss->time_s->len, ==, 20);
        }
      free (buf);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/timeseries/accounts-every-byte", test_accounts_every_byte);
  g_test_add_func ("/timeseries/progress-changes-nothing", test_progress_changes_nothing);
  g_test_add_func ("/timeseries/writeback-rows", test_writeback_rows);
  return g_test_run ();
}
