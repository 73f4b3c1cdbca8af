/* cmd-bench.c — `iosim bench`: simulator speed.  1,000,000 random 4 KiB
 * O_DIRECT reads from 8 processes on 4 disks under deadline; prints
 * simulated requests and events per second of wall time, ending with a
 * line "simulated_requests_per_s: N" for scripts. */
#include <stdio.h>

#include "cli/cli.h"
#include <string.h>

#include "models/scenario.h"
#include "models/sched/sched.h"

static char *
bench_scenario (const char *sched, guint64 total_requests, guint disks, guint procs_per_disk)
{
  g_autoptr (GString) ini = g_string_new ("[sim]\nseed = 1\nhz = 1000\n");
  guint64 per_proc = total_requests / (disks * procs_per_disk);
  for (guint d = 0; d < disks; d++)
    {
      g_string_append_printf (ini, "\n[device sd%c]\nkind = disk\ncapacity = 500GiB\n"
                              "rpm = 7200\nqueue_depth = 1\nsched = %s\n", 'a' + d, sched);
      for (guint p = 0; p < procs_per_disk; p++)
        g_string_append_printf (ini, "\n[process rand%u_%u]\ndevice = sd%c\nop = read\n"
                                "pattern = random\nbs = 4KiB\nsize = %" G_GUINT64_FORMAT "\n",
                                d, p, 'a' + d, per_proc * 4096);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

/* Simulated requests per second of wall time for one elevator. */
static gboolean
bench_one (const char *sched, gint64 requests, double *rate, GError **error)
{
  g_autofree char *ini = bench_scenario (sched, (guint64) requests, 4, 2);
  g_autoptr (Scenario) s = scenario_load_data (ini, "bench", NULL, NULL, error);
  if (s == NULL)
    return FALSE;
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, error);
  gint64 t1 = g_get_monotonic_time ();
  if (r == NULL)
    return FALSE;
  guint64 done = 0;
  for (guint i = 0; i < r->devices->len; i++)
    done += ((SimDeviceResult *) g_ptr_array_index (r->devices, i))->counters.completed;
  double wall_s = (double) (t1 - t0) / 1e6;
  *rate = (double) done / wall_s;
  printf ("%-14s %" G_GUINT64_FORMAT " requests, %" G_GUINT64_FORMAT " events, "
          "%.1f s simulated, %.3f s wall: %.0f requests/s, %.0f events/s\n",
          sched, done, r->events, (double) r->elapsed_ns / 1e9, wall_s, *rate,
          (double) r->events / wall_s);
  return TRUE;
}

int
cli_cmd_bench (int argc, char **argv)
{
  gint64 requests = 1000000;
  g_autofree char *sched = NULL;
  gboolean all = FALSE;
  GOptionEntry entries[] = {
    { "requests", 'n', 0, G_OPTION_ARG_INT64, &requests, "Requests to simulate (default 1000000)", "N" },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &sched, "Elevator to measure (default deadline)", "NAME" },
    { "all", 'a', 0, G_OPTION_ARG_NONE, &all, "Measure every elevator, with its speed relative to deadline", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx,
    "Measure simulator speed: random 4 KiB reads from 8 processes on 4 disks\n"
    "(deadline unless --sched or --all).  Figures are wall-clock, one core.\n"
    "The last line is 'simulated_requests_per_s: N' for the elevator measured\n"
    "(deadline with --all).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || requests < 8)
    {
      fprintf (stderr, "iosim bench: %s\n", error ? error->message : "--requests must be >= 8");
      return 2;
    }
  double deadline_rate = 0, rate = 0;
  if (all)
    {
      if (!bench_one ("deadline", requests, &deadline_rate, &error))
        goto failed;
      for (const SchedOps *const *ops = sched_ops_all (); *ops; ops++)
        {
          if (strcmp ((*ops)->name, "deadline") == 0)
            continue;
          if (!bench_one ((*ops)->name, requests, &rate, &error))
            goto failed;
          printf ("%-14s %.2fx deadline's speed\n", "", rate / deadline_rate);
        }
      printf ("simulated_requests_per_s: %.0f\n", deadline_rate);
      return 0;
    }
  if (!bench_one (sched ? sched : "deadline", requests, &rate, &error))
    goto failed;
  printf ("simulated_requests_per_s: %.0f\n", rate);
  return 0;

failed:
  fprintf (stderr, "iosim bench: %s\n", error->message);
  return 1;
}
