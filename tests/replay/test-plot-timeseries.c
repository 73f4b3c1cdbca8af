/* test-plot-timeseries.c — the gnuplot scripts of `iosim run --plot` and
 * --plot-writeback (replay_plot_timeseries): lines whose peaks differ by
 * more than 10x get a log y axis (all values positive) or stacked charts by
 * scale (some at zero), and neither otherwise; linear axes start below
 * zero so that a line at zero is not drawn on the border.  Where gnuplot is
 * installed each script is also rendered, to check that gnuplot accepts it. */
#include <string.h>
#include <glib/gstdio.h>
#include "replay/replay-plot.h"

#define N_POINTS 6

/* A line of N_POINTS samples at 1 s steps: @level, or 0 where @zero_first
 * says the process had not started yet. */
typedef struct {
  const char *label;
  const char *panel;
  double      level;
  gboolean    zero_first;
} LineSpec;

typedef struct {
  const char     *name;
  const char     *y_label;
  const LineSpec *lines;
  gsize           n_lines;
  const char     *must[4];      /* substrings the script holds */
  const char     *must_not[4];  /* and those it does not */
  guint           n_charts;     /* "plot" commands */
} PlotCase;

static const double xs[N_POINTS] = { 1, 2, 3, 4, 5, 6 };

/* The default study: writers at ~20 MB/s, readers at 0.08 and 0.46. */
static const LineSpec default_study[] = {
  { "noop writer", NULL, 20.4, FALSE },
  { "noop reader", NULL, 0.08, TRUE },
  { "deadline writer", NULL, 15.0, FALSE },
  { "deadline reader", NULL, 0.46, TRUE },
};
/* The same without the readers' idle first second: every value > 0. */
static const LineSpec all_positive[] = {
  { "noop writer", NULL, 20.4, FALSE },
  { "noop reader", NULL, 0.08, FALSE },
};
/* Within 10x of each other, one at zero throughout. */
static const LineSpec one_scale[] = {
  { "a", NULL, 20.0, FALSE },
  { "b", NULL, 2.5, TRUE },
  { "idle", NULL, 0.0, FALSE },
};
/* Writeback: one panel per run; only the second mixes scales. */
static const LineSpec writeback[] = {
  { "hda dirty", "noop", 40.0, FALSE },
  { "hda thresh", "noop", 60.0, FALSE },
  { "hda dirty", "deadline", 150.0, FALSE },
  { "hda writeback", "deadline", 0.5, TRUE },
  { "global thresh", "deadline", 152.0, FALSE },
};

static const PlotCase cases[] = {
  { "default-study", "MB/s", default_study, G_N_ELEMENTS (default_study),
    { "set multiplot layout 2,1", "charts by scale: peaks differ by more than 10x",
      "lines peaking at 15 to 20.4 MB/s", "lines peaking at 0.08 to 0.46 MB/s" },
    { "set logscale y 10", NULL }, 2 },
  { "all-positive", "MB/s", all_positive, G_N_ELEMENTS (all_positive),
    { "set logscale y 10", "log scale: peaks differ by more than 10x", NULL },
    { "multiplot", NULL }, 1 },
  { "one-scale", "MB/s", one_scale, G_N_ELEMENTS (one_scale),
    { "set yrange [-0.6:*]", NULL },
    { "multiplot", "set logscale y 10", "differ by more", NULL }, 1 },
  { "writeback", "MiB", writeback, G_N_ELEMENTS (writeback),
    { "set multiplot layout 3,1", "set title 'noop'", "deadline: lines peaking at 150 to 152 MiB",
      "deadline: lines peaking at 0.5 MiB" },
    { "set logscale y 10", NULL }, 3 },
};

/* Owns the sample arrays of @lines. */
static ReplayPlotSeries *
build_series (const PlotCase *c, GPtrArray *keep)
{
  ReplayPlotSeries *series = g_new0 (ReplayPlotSeries, c->n_lines);
  for (gsize i = 0; i < c->n_lines; i++)
    {
      double *y = g_new (double, N_POINTS);
      for (guint k = 0; k < N_POINTS; k++)
        y[k] = c->lines[i].zero_first && k == 0 ? 0.0 : c->lines[i].level;
      g_ptr_array_add (keep, y);
      series[i] = (ReplayPlotSeries) { c->lines[i].label, xs, y, N_POINTS, c->lines[i].panel };
    }
  return series;
}

static guint
count_lines_starting (const char *script, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (script, "\n", -1);
  guint n = 0;
  for (guint i = 0; lines[i]; i++)
    n += g_str_has_prefix (lines[i], prefix);
  return n;
}

static void
test_case (gconstpointer data)
{
  const PlotCase *c = data;
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  g_autofree ReplayPlotSeries *series = build_series (c, keep);
  g_autofree char *dir = g_dir_make_tmp ("iosim-plot-test-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *png = g_build_filename (dir, "plot.png", NULL);
  g_autofree char *script = replay_plot_timeseries_script (series, c->n_lines, "study",
                                                           c->y_label, png, REPLAY_PLOT_PNG);
  for (guint k = 0; k < G_N_ELEMENTS (c->must) && c->must[k]; k++)
    if (strstr (script, c->must[k]) == NULL)
      g_error ("%s: no \"%s\" in the script:\n%s", c->name, c->must[k], script);
  for (guint k = 0; k < G_N_ELEMENTS (c->must_not) && c->must_not[k]; k++)
    if (strstr (script, c->must_not[k]) != NULL)
      g_error ("%s: \"%s\" in the script:\n%s", c->name, c->must_not[k], script);
  g_assert_cmpuint (count_lines_starting (script, "plot "), ==, c->n_charts);
  /* Every line is drawn exactly once. */
  for (gsize i = 0; i < c->n_lines; i++)
    {
      g_autofree char *ref = g_strdup_printf ("$s%" G_GSIZE_FORMAT " using", i);
      const char *at = strstr (script, ref);
      g_assert_nonnull (at);
      g_assert_null (strstr (at + 1, ref));
    }
  /* Every linear axis starts below zero, so lines at zero show. */
  g_assert_cmpuint (count_lines_starting (script, "set yrange [-"), ==,
                    c->n_charts - count_lines_starting (script, "set logscale y"));
  /* The same input gives the same script. */
  g_autofree char *again = replay_plot_timeseries_script (series, c->n_lines, "study",
                                                          c->y_label, png, REPLAY_PLOT_PNG);
  g_assert_cmpstr (script, ==, again);

  g_autoptr (GError) error = NULL;
  g_autofree char *gnuplot = replay_plot_find_gnuplot (NULL);
  if (gnuplot == NULL)
    g_test_message ("gnuplot not on PATH: scripts checked, not rendered");
  else
    {
      g_assert_true (replay_plot_run (script, png, &error));
      g_assert_no_error (error);
      g_assert_cmpint (g_unlink (png), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  if (gnuplot == NULL)
    g_test_skip ("gnuplot not installed: rendering not checked");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/plot/timeseries/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  return g_test_run ();
}
