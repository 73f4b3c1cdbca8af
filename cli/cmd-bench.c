/* cmd-bench.c — `iosim bench`: simulator speed.  1,000,000 random 4 KiB
 * O_DIRECT reads from 8 processes on 4 disks under deadline; prints
 * simulated requests and events per second of wall time, ending with a
 * line "simulated_requests_per_s: N" for scripts. */
#include <stdio.h>

#include "cli/cli.h"
#include "models/scenario.h"

static char *
bench_scenario (guint64 total_requests, guint disks, guint procs_per_disk)
{
  g_autoptr (GString) ini = g_string_new ("[sim]\nseed = 1\nhz = 1000\n");
  guint64 per_proc = total_requests / (disks * procs_per_disk);
  for (guint d = 0; d < disks; d++)
    {
      g_string_append_printf (ini, "\n[device sd%c]\nkind = disk\ncapacity = 500GiB\n"
                              "rpm = 7200\nqueue_depth = 1\nsched = deadline\n", 'a' + d);
      for (guint p = 0; p < procs_per_disk; p++)
        g_string_append_printf (ini, "\n[process rand%u_%u]\ndevice = sd%c\nop = read\n"
                                "pattern = random\nbs = 4KiB\nsize = %" G_GUINT64_FORMAT "\n",
                                d, p, 'a' + d, per_proc * 4096);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

int
cli_cmd_bench (int argc, char **argv)
{
  gint64 requests = 1000000;
  GOptionEntry entries[] = {
    { "requests", 'n', 0, G_OPTION_ARG_INT64, &requests, "Requests to simulate (default 1000000)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx,
    "Measure simulator speed: random 4 KiB reads from 8 processes on 4 disks\n"
    "under deadline.  Figures are wall-clock, one core.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || requests < 8)
    {
      fprintf (stderr, "iosim bench: %s\n", error ? error->message : "--requests must be >= 8");
      return 2;
    }
  g_autofree char *ini = bench_scenario ((guint64) requests, 4, 2);
  g_autoptr (Scenario) s = scenario_load_data (ini, "bench", NULL, NULL, &error);
  if (s == NULL)
    {
      fprintf (stderr, "iosim bench: %s\n", error->message);
      return 1;
    }
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  gint64 t1 = g_get_monotonic_time ();
  if (r == NULL)
    {
      fprintf (stderr, "iosim bench: %s\n", error->message);
      return 1;
    }
  guint64 done = 0;
  for (guint i = 0; i < r->devices->len; i++)
    done += ((SimDeviceResult *) g_ptr_array_index (r->devices, i))->counters.completed;
  double wall_s = (double) (t1 - t0) / 1e6;
  printf ("simulated %" G_GUINT64_FORMAT " requests (%" G_GUINT64_FORMAT " events) "
          "of %.1f s simulated time in %.3f s wall\n",
          done, r->events, (double) r->elapsed_ns / 1e9, wall_s);
  printf ("events_per_s: %.0f\n", (double) r->events / wall_s);
  printf ("simulated_requests_per_s: %.0f\n", (double) done / wall_s);
  return 0;
}
