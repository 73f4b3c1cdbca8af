/* cmd-sched.c — `iosim sched list`: every elevator with its era, tunables,
 * defaults (at HZ 1000, 250 and 100, since jiffies truncate) and units. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "models/sched/sched.h"

static void
print_default (const SchedTunable *t, guint hz)
{
  if (t->type == SCHED_TUNABLE_TIME_NS)
    {
      /* Kept in ns by the kernel: no jiffies, the same at every HZ. */
      double in_unit = (double) t->default_ns;
      if (g_strcmp0 (t->unit, "us") == 0)
        in_unit /= 1e3;
      else if (g_strcmp0 (t->unit, "ms") == 0)
        in_unit /= 1e6;
      printf (in_unit == (double) (gint64) in_unit ? " %8.0f" : " %8.3f", in_unit);
      return;
    }
  int v = sched_tunable_default (t, hz);
  if (t->type == SCHED_TUNABLE_JIFFIES)
    printf (" %8lld", (long long) v * 1000 / hz);
  else if (t->type == SCHED_TUNABLE_VERSION)
    {
      g_autofree char *version = g_strdup_printf ("%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
      printf (" %8s", version);
    }
  else
    printf (" %8d", v);
}

int
cli_cmd_sched (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "list") != 0)
    {
      fprintf (argc >= 2 && strcmp (argv[1], "--help") == 0 ? stdout : stderr,
               "Usage: iosim sched list\n\n"
               "Lists every elevator with its kernel era, tunables, defaults and units.\n"
               "Time tunables are jiffies in the kernel: their defaults are shown in ms\n"
               "at HZ=1000, 250 and 100, truncated as the kernel truncates them.\n"
               "Set a tunable in a scenario with a [sched NAME] group, e.g.\n"
               "  [sched deadline]\n  read_expire = 100ms\n");
      return argc >= 2 && strcmp (argv[1], "--help") == 0 ? 0 : 2;
    }
  for (const SchedOps *const *ops = sched_ops_all (); *ops; ops++)
    {
      printf ("%s  (%s)\n  %s\n", (*ops)->name, (*ops)->era, (*ops)->summary);
      if ((*ops)->tunables == NULL || (*ops)->tunables->name == NULL)
        {
          printf ("  no tunables\n\n");
          continue;
        }
      printf ("  %-18s %-13s %8s %8s %8s  %s\n", "tunable", "unit", "HZ=1000", "HZ=250",
              "HZ=100", "meaning");
      for (const SchedTunable *t = (*ops)->tunables; t->name; t++)
        {
          printf ("  %-18s %-13s", t->name, t->unit);
          print_default (t, 1000);
          print_default (t, 250);
          print_default (t, 100);
          printf ("  %s\n", t->help);
        }
      printf ("\n");
    }
  return 0;
}
