/* sim-progress.h — the progress line `iosim run` draws on a terminal while
 * it simulates: run, percentage of simulated time, and an ETA from the wall
 * time spent so far.
 *
 * Only for people watching: it is drawn on stderr when stderr is a
 * terminal (isatty(3)), at most SIM_PROGRESS_MIN_INTERVAL_US apart, with
 * '\r' so that each line overwrites the last, and cleared at the end.  When
 * the output is not a terminal nothing at all is written, so that text
 * output compared byte for byte never holds it.  The ETA assumes that the
 * remaining simulated time (of this run and of the runs still to come, each
 * taken as long as this one) costs the wall time per simulated second seen
 * so far; a run without an end time has a position but neither percentage
 * nor ETA.
 */
#pragma once

#include <glib.h>
#include <stdio.h>
#include "sim/sim.h"

G_BEGIN_DECLS

/* Lines at most four a second: often enough to look alive, rarely enough
 * to cost nothing. */
#define SIM_PROGRESS_MIN_INTERVAL_US (G_USEC_PER_SEC / 4)

typedef struct {
  gboolean enabled;     /* the output is a terminal */
  guint    n_runs;
  gint64   start_us;    /* monotonic wall clock when the first run began */
  gint64   last_us;     /* when the last line was drawn; -1: none yet */
  gsize    last_len;    /* its length, to overwrite or clear it */
} SimProgress;

/* Start: @is_tty says whether the output is a terminal (nothing is ever
 * drawn otherwise), @now_us is the monotonic wall clock. */
void    sim_progress_init    (SimProgress *p,
                              gboolean     is_tty,
                              guint        n_runs,
                              gint64       now_us);

/* Fraction of the whole work done, 0..1, when run @run (from 0) of
 * @n_runs is at @now_ns of @end_ns; -1 when @end_ns is SIM_TIME_NEVER. */
double  sim_progress_fraction (guint   run,
                               guint   n_runs,
                               SimTime now_ns,
                               SimTime end_ns);

/* Wall time still needed, in microseconds, when @fraction of the work took
 * @elapsed_us: elapsed * (1 - fraction) / fraction; -1 when unknown
 * (nothing done yet, or no fraction). */
gint64  sim_progress_eta_us  (double fraction,
                              gint64 elapsed_us);

/* "0:07", "12:30", "1:02:03" (rounded up, so it reaches 0:00 only at the
 * end); "--:--" when @eta_us < 0.  Newly allocated. */
char   *sim_progress_format_eta (gint64 eta_us);

/* "  run 2/2 deadline   45.0% (9.0 of 20.0 s simulated), ETA 0:12", or
 * without an end "  run 1/1 default  9.0 s simulated"; newly allocated. */
char   *sim_progress_format  (guint       run,
                              guint       n_runs,
                              const char *label,
                              SimTime     now_ns,
                              SimTime     end_ns,
                              gint64      elapsed_us);

/* Draw the line for this position on @out if enabled and the last line is
 * at least SIM_PROGRESS_MIN_INTERVAL_US old; TRUE when it drew. */
gboolean sim_progress_update (SimProgress *p,
                              FILE        *out,
                              guint        run,
                              const char  *label,
                              SimTime      now_ns,
                              SimTime      end_ns,
                              gint64       now_us);

/* Blank the last line drawn, if any, and leave the cursor at its start. */
void    sim_progress_clear   (SimProgress *p,
                              FILE        *out);

G_END_DECLS
