/* sim-progress.c — see sim-progress.h. */
#include <math.h>
#include <string.h>
#include "sim/sim-progress.h"

void
sim_progress_init (SimProgress *p, gboolean is_tty, guint n_runs, gint64 now_us)
{
  g_return_if_fail (n_runs > 0);
  *p = (SimProgress) { is_tty, n_runs, now_us, -1, 0 };
}

double
sim_progress_fraction (guint run, guint n_runs, SimTime now_ns, SimTime end_ns)
{
  g_return_val_if_fail (run < n_runs, -1.0);
  if (end_ns == SIM_TIME_NEVER || end_ns <= 0)
    return -1.0;
  double in_run = CLAMP ((double) now_ns / (double) end_ns, 0.0, 1.0);
  return ((double) run + in_run) / (double) n_runs;
}

gint64
sim_progress_eta_us (double fraction, gint64 elapsed_us)
{
  if (!(fraction > 0.0) || elapsed_us <= 0)
    return -1;
  if (fraction >= 1.0)
    return 0;
  return (gint64) llround ((double) elapsed_us * (1.0 - fraction) / fraction);
}

char *
sim_progress_format_eta (gint64 eta_us)
{
  if (eta_us < 0)
    return g_strdup ("--:--");
  gint64 s = (eta_us + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC;
  if (s >= 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT ":%02d:%02d", s / 3600, (int) (s / 60 % 60),
                            (int) (s % 60));
  return g_strdup_printf ("%d:%02d", (int) (s / 60), (int) (s % 60));
}

char *
sim_progress_format (guint run, guint n_runs, const char *label, SimTime now_ns, SimTime end_ns,
                     gint64 elapsed_us)
{
  double fraction = sim_progress_fraction (run, n_runs, now_ns, end_ns);
  if (fraction < 0)
    return g_strdup_printf ("  run %u/%u %-24s %.1f s simulated", run + 1, n_runs, label,
                            (double) now_ns / 1e9);
  g_autofree char *eta = sim_progress_format_eta (sim_progress_eta_us (fraction, elapsed_us));
  return g_strdup_printf ("  run %u/%u %-24s %5.1f%% (%.1f of %.1f s simulated), ETA %s", run + 1,
                          n_runs, label, 100.0 * (double) now_ns / (double) end_ns,
                          (double) now_ns / 1e9, (double) end_ns / 1e9, eta);
}

gboolean
sim_progress_update (SimProgress *p, FILE *out, guint run, const char *label, SimTime now_ns,
                     SimTime end_ns, gint64 now_us)
{
  if (!p->enabled)
    return FALSE;
  if (p->last_us >= 0 && now_us - p->last_us < SIM_PROGRESS_MIN_INTERVAL_US)
    return FALSE;
  g_autofree char *line = sim_progress_format (run, p->n_runs, label, now_ns, end_ns,
                                               now_us - p->start_us);
  gsize len = strlen (line);
  /* Spaces over what a longer previous line left behind. */
  fprintf (out, "\r%s%*s", line, p->last_len > len ? (int) (p->last_len - len) : 0, "");
  fflush (out);
  p->last_us = now_us;
  p->last_len = len;
  return TRUE;
}

void
sim_progress_clear (SimProgress *p, FILE *out)
{
  if (!p->enabled || p->last_us < 0)
    return;
  fprintf (out, "\r%*s\r", (int) p->last_len, "");
  fflush (out);
  p->last_us = -1;
  p->last_len = 0;
}
