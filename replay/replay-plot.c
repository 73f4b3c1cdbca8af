/* replay-plot.c — gnuplot scripts for iosim's charts, run without a shell;
 * the first chart is the simulated-vs-measured response-time CDF of
 * `iosim compare --plot` (Ruemmler & Wilkes 1994 compare models by these
 * curves).  See replay-plot.h. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "replay/replay-plot.h"

G_DEFINE_QUARK (replay-plot-error-quark, replay_plot_error)

gboolean
replay_plot_format_from_path (const char *path, ReplayPlotFormat *format,
                              GError **error)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);

  if (g_str_has_suffix (lower, ".png"))
    *format = REPLAY_PLOT_PNG;
  else if (g_str_has_suffix (lower, ".svg"))
    *format = REPLAY_PLOT_SVG;
  else
    {
      g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_FORMAT,
                   "%s: a plot file name must end in .png or .svg", path);
      return FALSE;
    }
  return TRUE;
}

char *
replay_plot_find_gnuplot (GError **error)
{
  char *path = g_find_program_in_path ("gnuplot");

  if (path == NULL)
    g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_GNUPLOT,
                 "gnuplot not found on PATH: install gnuplot-nox");
  return path;
}

void
replay_plot_append_quoted (GString *script, const char *text)
{
  g_string_append_c (script, '\'');
  for (const char *c = text; *c != '\0'; c++)
    {
      /* Inside '...' gnuplot reads '' as one quote and nothing else
       * specially, but a line break would end the command. */
      if (*c == '\'')
        g_string_append_c (script, '\'');
      if (*c == '\n' || *c == '\r')
        g_string_append_c (script, ' ');
      else
        g_string_append_c (script, *c);
    }
  g_string_append_c (script, '\'');
}

static void
plot_begin_sized (GString *script, ReplayPlotFormat format, const char *output_path,
                  guint height)
{
  g_string_append (script, "set encoding utf8\n");
  if (format == REPLAY_PLOT_PNG)
    /* pngcairo antialiases; the libgd png terminal is the fallback of
     * gnuplot builds without cairo. */
    g_string_append_printf (script,
      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
      "  set terminal pngcairo size 1000,%u font 'sans,13' noenhanced background rgb 'white'\n"
      "} else {\n"
      "  set terminal png size 1000,%u font 'sans,12' noenhanced background rgb 'white'\n"
      "}\n", height, height);
  else
    g_string_append_printf (script,
      "set terminal svg size 1000,%u font 'sans,13' noenhanced background rgb 'white'\n", height);
  g_string_append (script, "set output ");
  replay_plot_append_quoted (script, output_path);
  g_string_append_c (script, '\n');
}

void
replay_plot_begin (GString *script, ReplayPlotFormat format,
                   const char *output_path)
{
  plot_begin_sized (script, format, output_path, 650);
}

void
replay_plot_append_datablock (GString *script, const char *name,
                              const double *x, const double *y, gsize n)
{
  g_string_append_printf (script, "$%s << EOD\n", name);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (script, "%.12g %.12g\n", x[i], y[i]);
  g_string_append (script, "EOD\n");
}

/* Write @script to a fresh temporary file; returns its path. */
static char *
plot_write_script (const char *script, GError **error)
{
  g_autofree char *path = NULL;
  gsize len = strlen (script);
  const char *p = script;
  int fd;

  fd = g_file_open_tmp ("iosim-plot-XXXXXX.gp", &path, error);
  if (fd < 0)
    return NULL;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);

      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        {
          int saved = errno;

          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                       "%s: %s", path, g_strerror (saved));
          close (fd);
          g_unlink (path);
          return NULL;
        }
      p += w;
      len -= (gsize) w;
    }
  close (fd);
  return g_steal_pointer (&path);
}

gboolean
replay_plot_run (const char *script, const char *output_path, GError **error)
{
  g_autofree char *gnuplot = NULL;
  g_autofree char *script_path = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) spawn_error = NULL;
  GStatBuf st;
  int wait_status;
  gboolean ok;

  gnuplot = replay_plot_find_gnuplot (error);
  if (gnuplot == NULL)
    return FALSE;
  script_path = plot_write_script (script, error);
  if (script_path == NULL)
    return FALSE;

  {
    char *argv[] = { gnuplot, script_path, NULL };

    ok = g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                       &out, &err, &wait_status, &spawn_error)
         && g_spawn_check_wait_status (wait_status, &spawn_error);
  }
  g_unlink (script_path);
  if (!ok)
    {
      const char *said = err != NULL ? g_strstrip (err) : "";

      g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_GNUPLOT,
                   "%s: gnuplot failed (%s)%s%s", output_path, spawn_error->message,
                   *said != '\0' ? ": " : "", said);
      return FALSE;
    }
  if (g_stat (output_path, &st) != 0 || st.st_size == 0)
    {
      g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_GNUPLOT,
                   "%s: gnuplot exited normally but wrote no image", output_path);
      return FALSE;
    }
  return TRUE;
}

/* ---- Response-time CDFs of `iosim compare` ------------------------------- */

/* Datablock of the step CDF of one side in ms, positive latencies only,
 * led by (first x, 0) so the curve rises from the axis; widens
 * [@x_min, @x_max] to its x range.  FALSE if no latency is positive. */
static gboolean
plot_cdf_datablock (GString *script, const char *name, const GArray *sorted_ns,
                    double *x_min, double *x_max)
{
  g_autoptr(GArray) points = replay_compare_cdf_points (sorted_ns,
                                                        REPLAY_COMPARE_CDF_MAX_POINTS);
  g_autofree double *x = g_new (double, points->len + 1);
  g_autofree double *y = g_new (double, points->len + 1);
  gsize n = 0;

  for (guint i = 0; i < points->len; i++)
    {
      const ReplayCompareCdfPoint *p = &g_array_index (points, ReplayCompareCdfPoint, i);

      if (p->latency_ns <= 0)
        continue;
      if (n == 0)
        {
          x[n] = (double) p->latency_ns / 1e6;
          y[n++] = 0.0;
        }
      x[n] = (double) p->latency_ns / 1e6;
      y[n++] = p->cum_fraction;
    }
  if (n == 0)
    return FALSE;
  *x_min = MIN (*x_min, x[0]);
  *x_max = MAX (*x_max, x[n - 1]);
  replay_plot_append_datablock (script, name, x, y, n);
  return TRUE;
}

static gboolean
plot_no_data (const char *output_path, const char *side, GError **error)
{
  g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_DATA,
               "%s: every %s latency is 0 ns; nothing to draw on a log axis",
               output_path, side);
  return FALSE;
}

/* Labelled ticks on a log axis over [@lo, @hi] (> 0): gnuplot labels only
 * whole decades, which leaves a narrow range with one label or none, so
 * label 1..9 per decade, or 1-2-5, or decades alone as the range widens. */
static void
plot_log_xtics (GString *script, double lo, double hi)
{
  static const double all[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  static const double one_two_five[] = { 1, 2, 5 };
  static const double decade[] = { 1 };
  double span = log10 (hi / lo);
  const double *m = span <= 1.2 ? all : span <= 3.5 ? one_two_five : decade;
  gsize n_m = span <= 1.2 ? G_N_ELEMENTS (all)
              : span <= 3.5 ? G_N_ELEMENTS (one_two_five) : G_N_ELEMENTS (decade);
  const char *sep = "";

  g_string_append (script, "set xtics (");
  for (int e = (int) floor (log10 (lo)); e <= (int) ceil (log10 (hi)); e++)
    for (gsize i = 0; i < n_m; i++)
      {
        double v = m[i] * pow (10.0, e);

        if (v < lo || v > hi)
          continue;
        g_string_append_printf (script, "%s'%g' %.12g", sep, v, v);
        sep = ", ";
      }
  /* A range narrower than 1 to 2 can hold no round value: label its ends. */
  if (*sep == '\0')
    g_string_append_printf (script, "'%.3g' %.12g, '%.3g' %.12g", lo, lo, hi, hi);
  g_string_append (script, ")\n");
}

/* Legend entry: "simulated: sim.csv (1234 I/Os)". */
static char *
plot_cdf_label (const char *side, const char *path, guint64 ios)
{
  g_autofree char *base = path != NULL ? g_path_get_basename (path) : NULL;

  if (base == NULL)
    return g_strdup_printf ("%s (%" G_GUINT64_FORMAT " I/Os)", side, ios);
  return g_strdup_printf ("%s: %s (%" G_GUINT64_FORMAT " I/Os)", side, base, ios);
}

static char *
plot_cdf_title (const ReplayCompareRow *row)
{
  g_autofree char *pct = isnan (row->demerit_pct)
                         ? g_strdup ("-")
                         : g_strdup_printf ("%.1f %%", row->demerit_pct);

  return g_strdup_printf ("Response-time CDFs, all I/Os: demerit %.3f ms "
                          "(%s of the measured mean), KS D %.3f",
                          row->demerit_ms, pct, row->ks_d);
}

gboolean
replay_plot_compare_cdf (const ReplayCompareReport *report,
                         const char *output_path, GError **error)
{
  const ReplayCompareRow *row = report->overall;
  g_autoptr(GString) script = g_string_new (NULL);
  g_autofree char *title = plot_cdf_title (row);
  g_autofree char *sim_label = plot_cdf_label ("simulated", report->simulated_path,
                                               row->sim.ios);
  g_autofree char *meas_label = plot_cdf_label ("measured", report->measured_path,
                                                row->meas.ios);
  ReplayPlotFormat format;
  double x_min = INFINITY, x_max = -INFINITY;

  if (!replay_plot_format_from_path (output_path, &format, error))
    return FALSE;
  replay_plot_begin (script, format, output_path);
  if (!plot_cdf_datablock (script, "sim", row->sim_latency_ns, &x_min, &x_max))
    return plot_no_data (output_path, "simulated", error);
  if (!plot_cdf_datablock (script, "meas", row->meas_latency_ns, &x_min, &x_max))
    return plot_no_data (output_path, "measured", error);
  /* The data's own range with a margin, not gnuplot's whole decades, which
   * can squeeze the curves into a third of the width. */
  g_string_append_printf (script, "set xrange [%.12g:%.12g]\n", x_min / 1.3, x_max * 1.3);
  plot_log_xtics (script, x_min / 1.3, x_max * 1.3);
  g_string_append (script, "set title ");
  replay_plot_append_quoted (script, title);
  g_string_append (script,
    "\nset xlabel 'response time (ms, log scale)'\n"
    "set ylabel 'cumulative fraction of I/Os'\n"
    "set logscale x 10\n"
    "set yrange [0:1]\n"
    "set ytics 0.1\n"
    "set grid xtics ytics lt 1 lc rgb '#c8c8c8' lw 1\n"
    /* CDFs rise left to right, so the top left corner is the empty one. */
    "set key top left box opaque spacing 1.3 width 1\n"
    "set border lw 1.2\n"
    "plot $sim using 1:2 with steps lw 2.5 lc rgb '#1f6fb4' title ");
  replay_plot_append_quoted (script, sim_label);
  g_string_append (script, ", \\\n     $meas using 1:2 with steps lw 2.5 lc rgb '#d2301e' title ");
  replay_plot_append_quoted (script, meas_label);
  g_string_append (script, "\nunset output\n");
  return replay_plot_run (script->str, output_path, error);
}

/* ---- Time series of `iosim run --plot` and --plot-writeback --------------- */

/* Lines whose peaks differ by more than this factor do not share a linear
 * axis: the smaller ones would be drawn flat on zero. */
#define PLOT_SCALE_RATIO 10.0

/* Room below zero, as a fraction of the panel's top, so that a line at
 * zero is drawn above the border instead of on it. */
#define PLOT_ZERO_MARGIN 0.03

/* One chart of the stack: some of the series, on a linear or a log axis. */
typedef struct {
  const char *panel;     /* the series' panel (NULL: the one chart) */
  GArray     *members;   /* gsize: indexes into the series, in their order */
  gboolean    log_y;     /* log axis: every value of every member is > 0 */
  gboolean    by_scale;  /* one of several charts its panel was split into */
  double      top;       /* largest value of its members */
  double      bottom;    /* smallest value of its members */
  double      low_peak;  /* smallest peak > 0 of its members (0: none) */
} PlotChart;

static void
plot_chart_free (gpointer data)
{
  PlotChart *c = data;
  g_array_unref (c->members);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PlotChart, plot_chart_free)

static PlotChart *
plot_chart_new (const char *panel)
{
  PlotChart *c = g_new0 (PlotChart, 1);
  c->panel = panel;
  c->members = g_array_new (FALSE, FALSE, sizeof (gsize));
  c->bottom = INFINITY;
  return c;
}

static double
plot_series_peak (const ReplayPlotSeries *s)
{
  double peak = 0;
  for (gsize k = 0; k < s->n; k++)
    peak = MAX (peak, s->y[k]);
  return peak;
}

static void
plot_chart_add (PlotChart *c, const ReplayPlotSeries *series, gsize index)
{
  const ReplayPlotSeries *s = &series[index];
  double peak = plot_series_peak (s);
  g_array_append_val (c->members, index);
  c->top = MAX (c->top, peak);
  for (gsize k = 0; k < s->n; k++)
    c->bottom = MIN (c->bottom, s->y[k]);
  if (peak > 0 && (c->low_peak == 0 || peak < c->low_peak))
    c->low_peak = peak;
}

/* Peaks in descending order; ties by index, so the layout is the same on
 * every run. */
static gint
plot_by_peak_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const double *peak = data;
  gsize i = *(const gsize *) a, j = *(const gsize *) b;
  if (peak[i] != peak[j])
    return peak[i] > peak[j] ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* The charts of one panel whose lines' peaks differ by more than
 * PLOT_SCALE_RATIO: one log axis when every value is positive (nothing is
 * lost on it), else one chart per band of lines whose peaks are within the
 * ratio of the band's largest, lines in their order within each; lines at
 * zero throughout join the smallest band, where they show at zero. */
static void
plot_split_panel (GPtrArray *charts, const PlotChart *all, const ReplayPlotSeries *series,
                  gsize n_series)
{
  if (all->bottom > 0)
    {
      PlotChart *c = plot_chart_new (all->panel);
      c->log_y = TRUE;
      for (guint m = 0; m < all->members->len; m++)
        plot_chart_add (c, series, g_array_index (all->members, gsize, m));
      g_ptr_array_add (charts, c);
      return;
    }
  g_autofree double *peak = g_new0 (double, n_series);
  g_autofree guint *band_of = g_new0 (guint, n_series);
  for (guint m = 0; m < all->members->len; m++)
    {
      gsize i = g_array_index (all->members, gsize, m);
      peak[i] = plot_series_peak (&series[i]);
    }
  g_autoptr (GArray) order = g_array_copy (all->members);
  g_array_sort_with_data (order, plot_by_peak_desc, peak);
  guint n_bands = 1;
  double band_top = all->top;
  for (guint k = 0; k < order->len; k++)
    {
      gsize i = g_array_index (order, gsize, k);
      if (peak[i] > 0 && peak[i] * PLOT_SCALE_RATIO < band_top)
        {
          n_bands++;
          band_top = peak[i];
        }
      band_of[i] = n_bands - 1;
    }
  g_assert (n_bands > 1);
  for (guint b = 0; b < n_bands; b++)
    {
      PlotChart *c = plot_chart_new (all->panel);
      c->by_scale = TRUE;
      for (guint m = 0; m < all->members->len; m++)
        {
          gsize i = g_array_index (all->members, gsize, m);
          if (band_of[i] == b)
            plot_chart_add (c, series, i);
        }
      g_ptr_array_add (charts, c);
    }
}

/* The charts to draw: a panel (in order of first appearance) whose lines
 * share a scale is one chart; else plot_split_panel() decides. */
static GPtrArray *
plot_layout (const ReplayPlotSeries *series, gsize n_series)
{
  g_autoptr (GPtrArray) panels = g_ptr_array_new ();
  for (gsize i = 0; i < n_series; i++)
    {
      gboolean seen = FALSE;
      for (guint p = 0; p < panels->len && !seen; p++)
        seen = g_strcmp0 (g_ptr_array_index (panels, p), series[i].panel) == 0;
      if (!seen)
        g_ptr_array_add (panels, (gpointer) series[i].panel);
    }
  GPtrArray *charts = g_ptr_array_new_with_free_func (plot_chart_free);
  for (guint p = 0; p < panels->len; p++)
    {
      const char *panel = g_ptr_array_index (panels, p);
      g_autoptr (PlotChart) all = plot_chart_new (panel);
      for (gsize i = 0; i < n_series; i++)
        if (g_strcmp0 (series[i].panel, panel) == 0)
          plot_chart_add (all, series, i);
      if (all->low_peak > 0 && all->top > PLOT_SCALE_RATIO * all->low_peak)
        plot_split_panel (charts, all, series, n_series);
      else
        g_ptr_array_add (charts, g_steal_pointer (&all));
    }
  return charts;
}

/* Title of one chart of a stack: its panel, and for a chart split by scale
 * the range of its lines' peaks. */
static char *
plot_chart_title (const PlotChart *c, const char *y_label)
{
  const char *panel = c->panel != NULL ? c->panel : "";
  const char *sep = c->panel != NULL ? ": " : "";
  if (c->by_scale && c->top == 0)
    return g_strdup_printf ("%s%slines at zero throughout", panel, sep);
  g_autofree char *low = g_strdup_printf ("%.3g", c->low_peak);
  g_autofree char *high = g_strdup_printf ("%.3g", c->top);
  if (c->by_scale && strcmp (low, high) == 0)
    return g_strdup_printf ("%s%slines peaking at %s %s", panel, sep, high, y_label);
  if (c->by_scale)
    return g_strdup_printf ("%s%slines peaking at %s to %s %s", panel, sep, low, high, y_label);
  if (c->log_y)
    return g_strdup_printf ("%s%slog scale: peaks %s to %s %s differ by more than %gx",
                            panel, sep, low, high, y_label, PLOT_SCALE_RATIO);
  return g_strdup (panel);
}

static void
plot_chart_axes (GString *script, const PlotChart *c)
{
  if (c->log_y)
    {
      /* The data's own range with a margin, as the CDFs' x axis. */
      g_string_append_printf (script, "set logscale y 10\nset yrange [%.12g:%.12g]\n",
                              c->bottom / 1.5, c->top * 1.5);
      return;
    }
  /* A margin below zero keeps lines at zero off the border; above, gnuplot
   * rounds up to a tic as before. */
  double top = c->top > 0 ? c->top : 1.0;
  g_string_append_printf (script, "unset logscale y\nset yrange [%.12g:*]\n",
                          -PLOT_ZERO_MARGIN * top);
}

char *
replay_plot_timeseries_script (const ReplayPlotSeries *series, gsize n_series, const char *title,
                               const char *y_label, const char *output_path,
                               ReplayPlotFormat format)
{
  g_autoptr(GString) script = g_string_new (NULL);
  g_autoptr (GPtrArray) charts = plot_layout (series, n_series);
  gboolean split = FALSE, log_y = FALSE;
  for (guint c = 0; c < charts->len; c++)
    {
      const PlotChart *chart = g_ptr_array_index (charts, c);
      split |= chart->by_scale;
      log_y |= chart->log_y;
    }
  gboolean multi = charts->len > 1
                   || (charts->len == 1 && ((PlotChart *) g_ptr_array_index (charts, 0))->panel);
  plot_begin_sized (script, format, output_path, multi ? 120 + 300 * charts->len : 650);
  for (gsize i = 0; i < n_series; i++)
    {
      g_autofree char *name = g_strdup_printf ("s%" G_GSIZE_FORMAT, i);
      replay_plot_append_datablock (script, name, series[i].x, series[i].y, series[i].n);
    }
  g_string_append (script, "set xlabel 'simulated time (s)'\nset ylabel ");
  replay_plot_append_quoted (script, y_label);
  g_string_append (script,
    "\nset grid xtics ytics lt 1 lc rgb '#c8c8c8' lw 1\n"
    "set key outside right top box opaque spacing 1.2\n"
    "set border lw 1.2\n");
  /* Say in the title why the lines are not on one linear axis. */
  g_autofree char *full_title
    = split ? g_strdup_printf ("%s (charts by scale: peaks differ by more than %gx)", title,
                               PLOT_SCALE_RATIO)
    : log_y && !multi ? g_strdup_printf ("%s (log scale: peaks differ by more than %gx)", title,
                                         PLOT_SCALE_RATIO)
    : g_strdup (title);
  if (multi)
    {
      /* The same margins in every chart, so that the stacked time axes
       * line up whatever the width of each chart's key. */
      gsize key = 0;
      for (gsize i = 0; i < n_series; i++)
        key = MAX (key, (gsize) g_utf8_strlen (series[i].label, -1));
      g_string_append_printf (script, "set lmargin 10\nset rmargin %" G_GSIZE_FORMAT "\n",
                              key + 12);
      g_string_append_printf (script, "set multiplot layout %u,1 title ", charts->len);
      replay_plot_append_quoted (script, full_title);
      g_string_append_c (script, '\n');
    }
  for (guint c = 0; c < charts->len; c++)
    {
      const PlotChart *chart = g_ptr_array_index (charts, c);
      g_autofree char *chart_title = plot_chart_title (chart, y_label);
      plot_chart_axes (script, chart);
      g_string_append (script, "set title ");
      replay_plot_append_quoted (script, multi ? chart_title : full_title);
      g_string_append (script, "\nplot ");
      for (guint m = 0; m < chart->members->len; m++)
        {
          gsize i = g_array_index (chart->members, gsize, m);
          g_string_append_printf (script, "%s$s%" G_GSIZE_FORMAT " using 1:2 with lines lw 2 title ",
                                  m == 0 ? "" : ", \\\n     ", i);
          replay_plot_append_quoted (script, series[i].label);
        }
      g_string_append_c (script, '\n');
    }
  if (multi)
    g_string_append (script, "unset multiplot\n");
  g_string_append (script, "unset output\n");
  return g_string_free (g_steal_pointer (&script), FALSE);
}

gboolean
replay_plot_timeseries (const ReplayPlotSeries *series, gsize n_series, const char *title,
                        const char *y_label, const char *output_path, GError **error)
{
  ReplayPlotFormat format;
  gboolean any = FALSE;

  if (!replay_plot_format_from_path (output_path, &format, error))
    return FALSE;
  for (gsize i = 0; i < n_series; i++)
    any |= series[i].n > 0;
  if (!any)
    {
      g_set_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_DATA,
                   "%s: no samples to draw (the run is shorter than one interval?)",
                   output_path);
      return FALSE;
    }
  g_autofree char *script = replay_plot_timeseries_script (series, n_series, title, y_label,
                                                           output_path, format);
  return replay_plot_run (script, output_path, error);
}
