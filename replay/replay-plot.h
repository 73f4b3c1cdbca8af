/* replay-plot.h — charts drawn by gnuplot (5.x; Debian package gnuplot-nox).
 *
 * iosim writes a gnuplot script (data inline as datablocks, so no data
 * files to clean up) and runs the gnuplot found on PATH with g_spawn_sync
 * on an argv, never through a shell.  The generic part (output format from
 * the file name, script preamble, quoting, datablocks, running gnuplot)
 * serves any chart; replay_plot_compare_cdf() is the first user.
 */
#pragma once

#include <glib.h>
#include "replay/replay-compare.h"

G_BEGIN_DECLS

#define REPLAY_PLOT_ERROR (replay_plot_error_quark ())
GQuark replay_plot_error_quark (void);

typedef enum {
  REPLAY_PLOT_ERROR_NO_GNUPLOT,   /* no gnuplot on PATH */
  REPLAY_PLOT_ERROR_FORMAT,       /* output name ends in neither .png nor .svg */
  REPLAY_PLOT_ERROR_GNUPLOT,      /* gnuplot failed or wrote nothing */
  REPLAY_PLOT_ERROR_NO_DATA,      /* nothing drawable (e.g. no latency > 0 on a log axis) */
} ReplayPlotError;

typedef enum {
  REPLAY_PLOT_PNG,
  REPLAY_PLOT_SVG,
} ReplayPlotFormat;

/* The format named by @path's extension (.png or .svg, any case). */
gboolean replay_plot_format_from_path (const char        *path,
                                       ReplayPlotFormat  *format,
                                       GError           **error);

/* Absolute path of gnuplot on PATH, or NULL with REPLAY_PLOT_ERROR_NO_GNUPLOT. */
char    *replay_plot_find_gnuplot     (GError           **error);

/* Append @text as a gnuplot single-quoted string (quotes doubled). */
void     replay_plot_append_quoted    (GString          *script,
                                       const char       *text);

/* Start a script that draws into @output_path: terminal for @format
 * (pngcairo, else png, 1000x650; svg), readable sans font, white
 * background, no "enhanced" text so names with _ or ^ print as written. */
void     replay_plot_begin            (GString          *script,
                                       ReplayPlotFormat  format,
                                       const char       *output_path);

/* Append datablock $@name holding @n rows "x y". */
void     replay_plot_append_datablock (GString          *script,
                                       const char       *name,
                                       const double     *x,
                                       const double     *y,
                                       gsize             n);

/* Run gnuplot on @script and check that it wrote a non-empty
 * @output_path; on failure the error carries gnuplot's own message. */
gboolean replay_plot_run              (const char       *script,
                                       const char       *output_path,
                                       GError          **error);

/* The overall response-time CDFs of @report, simulated against measured,
 * on a log latency axis in ms, titled with the demerit in ms and % of the
 * measured mean; format from @output_path's extension.  Latencies of 0 ns
 * cannot sit on a log axis and are left out of the drawing. */
gboolean replay_plot_compare_cdf      (const ReplayCompareReport *report,
                                       const char                *output_path,
                                       GError                   **error);

/* One line of a time-series chart. */
typedef struct {
  const char   *label;
  const double *x;
  const double *y;
  gsize         n;
  const char   *panel;   /* NULL: one chart; else series of a panel share a
                          * chart, panels stacked in order of appearance */
} ReplayPlotSeries;

/* Lines over time (x in seconds), one per series, with @title and
 * @y_label; format from @output_path's extension.  Series of a panel
 * share a chart on a linear axis that starts a little below zero (a line
 * at zero shows above the border) unless their peaks differ by more than
 * 10x: then, when every value is positive, the chart has a log y axis;
 * otherwise it is split into one chart per band of lines whose peaks are
 * within 10x of each other, stacked.  The titles say which and why. */
gboolean replay_plot_timeseries       (const ReplayPlotSeries *series,
                                       gsize                   n_series,
                                       const char             *title,
                                       const char             *y_label,
                                       const char             *output_path,
                                       GError                **error);

/* The gnuplot script replay_plot_timeseries() runs, for tests. */
char    *replay_plot_timeseries_script (const ReplayPlotSeries *series,
                                        gsize                   n_series,
                                        const char             *title,
                                        const char             *y_label,
                                        const char             *output_path,
                                        ReplayPlotFormat        format);

G_END_DECLS
