/* spin-gaps.c — the timing floor of this machine for the replay-timing
 * benchmark: a thread pinned to one CPU reads CLOCK_MONOTONIC in a tight
 * loop for a while, and every gap between two reads longer than 5 µs is
 * time the CPU was taken away (an interrupt, another task, or the
 * hypervisor running something else on the host).  A replayer that spins
 * perfectly still issues an I/O late when its intended time falls in a
 * gap, by the rest of that gap; over instants spread evenly in time the
 * lateness exceeds x with probability sum(max(gap - x, 0)) / duration.
 * Printed: the gaps, the share of time they take, and the p50/p99 issue
 * error such a perfect spinner would see.
 *
 * usage: spin-gaps CPU SECONDS   (CPU -1: not pinned)
 */
#include <glib.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GAP_NS 5000

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Smallest x with sum(max(g - x, 0)) <= share * total (bisection). */
static double
lateness_quantile (const GArray *gaps, gint64 total_ns, double share)
{
  double lo = 0, hi = 0;

  for (guint i = 0; i < gaps->len; i++)
    hi = MAX (hi, (double) g_array_index (gaps, gint64, i));
  for (int it = 0; it < 60; it++)
    {
      double mid = (lo + hi) / 2, over = 0;

      for (guint i = 0; i < gaps->len; i++)
        over += MAX ((double) g_array_index (gaps, gint64, i) - mid, 0);
      if (over <= share * (double) total_ns)
        hi = mid;
      else
        lo = mid;
    }
  return hi;
}

int
main (int argc, char **argv)
{
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (gint64));
  int cpu = argc > 1 ? atoi (argv[1]) : -1;
  double seconds = argc > 2 ? atof (argv[2]) : 2.0;
  gint64 start, prev, end, stolen = 0, longest = 0;

  if (argc != 3 || seconds <= 0)
    {
      fprintf (stderr, "usage: spin-gaps CPU SECONDS   (CPU -1: not pinned)\n");
      return 2;
    }
  if (cpu >= 0)
    {
      cpu_set_t set;

      CPU_ZERO (&set);
      CPU_SET (cpu, &set);
      if (sched_setaffinity (0, sizeof set, &set) != 0)
        {
          perror ("sched_setaffinity");
          return 1;
        }
    }
  start = prev = now_ns ();
  end = start + (gint64) (seconds * 1e9);
  for (gint64 t = start; t < end; prev = t)
    {
      t = now_ns ();
      if (t - prev > GAP_NS)
        {
          gint64 gap = t - prev;
          g_array_append_val (gaps, gap);
          stolen += gap;
          longest = MAX (longest, gap);
        }
    }
  printf ("spin probe on CPU %d for %.1f s: %u gaps > 5 us (%.0f per second, longest %.1f us), "
          "%.2f %% of the time; a perfect spinner's issue error: p50 %.1f us, p99 %.1f us\n",
          cpu, seconds, gaps->len, gaps->len / seconds, longest / 1e3,
          100.0 * (double) stolen / (double) (end - start),
          lateness_quantile (gaps, end - start, 0.50) / 1e3,
          lateness_quantile (gaps, end - start, 0.01) / 1e3);
  return 0;
}
