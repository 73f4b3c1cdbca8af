/* cmd-sweep-plot.c — the plots of `iosim sweep`, drawn from the
 * summary.json it wrote (the same for a local run and a merge), through
 * replay/replay-plot.h's gnuplot driver. */
#include <string.h>
#include <json-glib/json-glib.h>

#include "cli/cmd-sweep.h"
#include "replay/replay-plot.h"

#define PLOT_SUFFIX ".mb_per_s"

typedef struct {
  char      *key;
  GPtrArray *values;   /* const char *, into the parsed JSON */
} Axis;

static void
axis_free (Axis *a)
{
  g_free (a->key);
  g_ptr_array_unref (a->values);
  g_free (a);
}

/* A point of summary.json: its value index per axis, run label and
 * figures object. */
typedef struct {
  guint      *index;
  const char *run;
  JsonObject *figures;
} Row;

static void
row_free (Row *r)
{
  g_free (r->index);
  g_free (r);
}

static char *
file_safe (const char *name)
{
  char *s = g_strdup (name);
  for (char *c = s; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '-' && *c != '_' && *c != '.')
      *c = '_';
  return s;
}

static void
append_number (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.6g", v));
}

/* Mean and half-width of @figure in @row; FALSE when absent.  A missing
 * CI (one seed) draws as no bar. */
static gboolean
row_figure (const Row *row, const char *figure, double *mean, double *ci)
{
  JsonNode *n = json_object_get_member (row->figures, figure);
  if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
    return FALSE;
  JsonObject *o = json_node_get_object (n);
  JsonNode *m = json_object_get_member (o, "mean");
  JsonNode *c = json_object_get_member (o, "ci95");
  if (m == NULL || JSON_NODE_HOLDS_NULL (m))
    return FALSE;
  *mean = json_node_get_double (m);
  *ci = c && !JSON_NODE_HOLDS_NULL (c) ? json_node_get_double (c) : 0.0;
  return TRUE;
}

static void
append_tics (GString *s, const char *axis, const Axis *a)
{
  g_string_append_printf (s, "set %stics (", axis);
  for (guint v = 0; v < a->values->len; v++)
    {
      if (v)
        g_string_append (s, ", ");
      replay_plot_append_quoted (s, g_ptr_array_index (a->values, v));
      g_string_append_printf (s, " %u", v);
    }
  g_string_append_printf (s, ")\nset %srange [-0.5:%u.5]\n", axis, a->values->len - 1);
}

/* Do rows @x and @y lie on one line along axis @along (same values on the
 * other axes, same run)? */
static gboolean
same_line (const Row *x, const Row *y, guint n_axes, guint along)
{
  for (guint a = 0; a < n_axes; a++)
    if (a != along && x->index[a] != y->index[a])
      return FALSE;
  return strcmp (x->run, y->run) == 0;
}

/* "read_expire=20ms, deadline": the other keys (after their last dot)
 * and the run; "mean" when nothing else varies. */
static char *
line_title (const Row *r, GPtrArray *axes, guint along, gboolean runs)
{
  GString *t = g_string_new (NULL);
  for (guint a = 0; a < axes->len; a++)
    if (a != along)
      {
        const Axis *ax = g_ptr_array_index (axes, a);
        const char *dot = strrchr (ax->key, '.');
        g_string_append_printf (t, "%s%s=%s", t->len ? ", " : "", dot ? dot + 1 : ax->key,
                                (const char *) g_ptr_array_index (ax->values, r->index[a]));
      }
  if (runs)
    g_string_append_printf (t, "%s%s", t->len ? ", " : "", r->run);
  if (t->len == 0)
    g_string_append (t, "mean");
  return g_string_free (t, FALSE);
}

/* One panel of plot-KEY.png: @process's mean MB/s, a line with error bars
 * per combination of the other keys' values and run; FALSE when the
 * process has no MB/s at all. */
static gboolean
plot_axis_panel (GString *s, GPtrArray *axes, guint along, GPtrArray *rows, const char *process,
                 gboolean runs, guint *n_blocks)
{
  g_autofree char *figure = g_strconcat ("process.", process, PLOT_SUFFIX, NULL);
  g_autoptr (GString) plot = g_string_new ("plot ");
  g_autofree gboolean *drawn = g_new0 (gboolean, rows->len);
  guint n_lines = 0;
  for (guint r = 0; r < rows->len; r++)
    {
      const Row *first = g_ptr_array_index (rows, r);
      if (drawn[r])
        continue;
      g_string_append_printf (s, "$d%u << EOD\n", *n_blocks);
      guint pts = 0;
      for (guint q = r; q < rows->len; q++)
        {
          const Row *row = g_ptr_array_index (rows, q);
          double mean, ci;
          if (drawn[q] || !same_line (first, row, axes->len, along))
            continue;
          drawn[q] = TRUE;
          if (!row_figure (row, figure, &mean, &ci))
            continue;
          g_string_append_printf (s, "%u ", row->index[along]);
          append_number (s, mean);
          g_string_append_c (s, ' ');
          append_number (s, ci);
          g_string_append_c (s, '\n');
          pts++;
        }
      g_string_append (s, "EOD\n");
      (*n_blocks)++;
      if (pts == 0)
        continue;
      g_autofree char *lt = line_title (first, axes, along, runs);
      g_string_append_printf (plot, "%s$d%u using 1:2:3 with yerrorlines lw 2 title ",
                              n_lines ? ", " : "", *n_blocks - 1);
      replay_plot_append_quoted (plot, lt);
      n_lines++;
    }
  if (n_lines == 0)
    return FALSE;
  g_string_append (s, "set title ");
  replay_plot_append_quoted (s, process);
  g_string_append_printf (s, "\n%s\n", plot->str);
  return TRUE;
}

/* plot-KEY.png: x = the key's values; a panel per process (their MB/s
 * may differ by orders of magnitude), stacked. */
static gboolean
plot_axis (const char *dir, GPtrArray *axes, guint along, GPtrArray *rows, GPtrArray *procs,
           gboolean runs, GError **error)
{
  const Axis *ax = g_ptr_array_index (axes, along);
  g_autofree char *safe = file_safe (ax->key);
  g_autofree char *name = g_strdup_printf ("plot-%s.png", safe);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GString) s = g_string_new (NULL);
  replay_plot_begin (s, REPLAY_PLOT_PNG, path);
  g_autofree char *title = g_strdup_printf ("mean MB/s against %s, with 95%% CI", ax->key);
  g_string_append_printf (s, "set multiplot layout %u,1 title ", procs->len);
  replay_plot_append_quoted (s, title);
  g_string_append (s, "\nset xlabel ");
  replay_plot_append_quoted (s, ax->key);
  g_string_append (s, "\nset ylabel 'MB/s'\nset key outside right\nset grid\n");
  append_tics (s, "x", ax);
  guint n_blocks = 0, panels = 0;
  for (guint p = 0; p < procs->len; p++)
    if (plot_axis_panel (s, axes, along, rows, g_ptr_array_index (procs, p), runs, &n_blocks))
      panels++;
  g_string_append (s, "unset multiplot\n");
  if (panels == 0)
    return TRUE;
  return replay_plot_run (s->str, path, error);
}

/* heatmap-PROCESS[-RUN].png: mean MB/s over the two varied keys. */
static gboolean
plot_heatmap (const char *dir, GPtrArray *axes, GPtrArray *rows, const char *process,
              const char *run, gboolean runs, GError **error)
{
  const Axis *ax = g_ptr_array_index (axes, 0), *ay = g_ptr_array_index (axes, 1);
  g_autofree char *figure = g_strconcat ("process.", process, PLOT_SUFFIX, NULL);
  g_autofree char *stem = runs ? g_strdup_printf ("heatmap-%s-%s", process, run)
                               : g_strdup_printf ("heatmap-%s", process);
  g_autofree char *safe = file_safe (stem);
  g_autofree char *name = g_strconcat (safe, ".png", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GString) s = g_string_new (NULL);
  replay_plot_begin (s, REPLAY_PLOT_PNG, path);
  g_autofree char *title = runs ? g_strdup_printf ("%s, run %s: mean MB/s", process, run)
                                : g_strdup_printf ("%s: mean MB/s", process);
  g_string_append (s, "set title ");
  replay_plot_append_quoted (s, title);
  g_string_append (s, "\nset xlabel ");
  replay_plot_append_quoted (s, ax->key);
  g_string_append (s, "\nset ylabel ");
  replay_plot_append_quoted (s, ay->key);
  g_string_append (s, "\nset cblabel 'MB/s'\nset palette rgbformulae 22,13,-31\n");
  append_tics (s, "x", ax);
  append_tics (s, "y", ay);
  g_string_append (s, "$h << EOD\n");
  guint cells = 0;
  for (guint r = 0; r < rows->len; r++)
    {
      const Row *row = g_ptr_array_index (rows, r);
      double mean, ci;
      if (strcmp (row->run, run) != 0 || !row_figure (row, figure, &mean, &ci))
        continue;
      g_string_append_printf (s, "%u %u ", row->index[0], row->index[1]);
      append_number (s, mean);
      g_string_append_c (s, '\n');
      cells++;
    }
  g_string_append (s, "EOD\n");
  /* Labels in the cells: the values, readable without the colour scale. */
  g_string_append (s, "plot $h using 1:2:3 with image notitle, "
                      "$h using 1:2:(sprintf('%.3g', $3)) with labels notitle\n");
  if (cells == 0)
    return TRUE;
  return replay_plot_run (s->str, path, error);
}

static gboolean
read_summary (JsonParser *parser, const char *dir, GPtrArray *axes, GPtrArray *rows,
              GPtrArray *procs, GPtrArray *run_labels, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  if (!json_parser_load_from_file (parser, path, error))
    return FALSE;
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *vary = json_object_get_array_member (root, "vary");
  for (guint a = 0; a < json_array_get_length (vary); a++)
    {
      JsonObject *o = json_array_get_object_element (vary, a);
      Axis *ax = g_new0 (Axis, 1);
      ax->key = g_strdup (json_object_get_string_member (o, "key"));
      ax->values = g_ptr_array_new ();
      JsonArray *vs = json_object_get_array_member (o, "values");
      for (guint v = 0; v < json_array_get_length (vs); v++)
        g_ptr_array_add (ax->values, (gpointer) json_array_get_string_element (vs, v));
      g_ptr_array_add (axes, ax);
    }
  JsonArray *points = json_object_get_array_member (root, "points");
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) seen_procs = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < json_array_get_length (points); i++)
    {
      JsonObject *o = json_array_get_object_element (points, i);
      JsonObject *values = json_object_get_object_member (o, "values");
      Row *row = g_new0 (Row, 1);
      row->index = g_new0 (guint, axes->len);
      row->run = json_object_get_string_member (o, "run");
      row->figures = json_object_get_object_member (o, "figures");
      g_ptr_array_add (rows, row);
      for (guint a = 0; a < axes->len; a++)
        {
          const Axis *ax = g_ptr_array_index (axes, a);
          const char *v = json_object_get_string_member (values, ax->key);
          for (guint k = 0; k < ax->values->len; k++)
            if (strcmp (g_ptr_array_index (ax->values, k), v) == 0)
              row->index[a] = k;
        }
      if (g_hash_table_add (seen, (gpointer) row->run))
        g_ptr_array_add (run_labels, (gpointer) row->run);
      g_autoptr (GList) members = json_object_get_members (row->figures);
      for (GList *m = members; m; m = m->next)
        {
          const char *f = m->data;
          if (!g_str_has_prefix (f, "process.") || !g_str_has_suffix (f, PLOT_SUFFIX))
            continue;
          g_autofree char *proc = g_strndup (f + strlen ("process."),
                                             strlen (f) - strlen ("process.") - strlen (PLOT_SUFFIX));
          if (!g_hash_table_contains (seen_procs, proc))
            {
              char *keep = g_strdup (proc);
              g_ptr_array_add (procs, keep);
              g_hash_table_add (seen_procs, keep);
            }
        }
    }
  return TRUE;
}

gboolean
cli_sweep_plots (const char *dir, GError **error)
{
  g_autofree char *gnuplot = g_find_program_in_path ("gnuplot");
  if (gnuplot == NULL)
    {
      fprintf (stderr, "iosim sweep: gnuplot not on PATH: no plots (install gnuplot-nox)\n");
      return TRUE;
    }
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GPtrArray) axes = g_ptr_array_new_with_free_func ((GDestroyNotify) axis_free);
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) row_free);
  g_autoptr (GPtrArray) procs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) run_labels = g_ptr_array_new ();
  if (!read_summary (parser, dir, axes, rows, procs, run_labels, error))
    return FALSE;
  gboolean runs = run_labels->len > 1;
  for (guint a = 0; a < axes->len; a++)
    if (!plot_axis (dir, axes, a, rows, procs, runs, error))
      return FALSE;
  if (axes->len != 2)
    return TRUE;
  for (guint p = 0; p < procs->len; p++)
    for (guint r = 0; r < run_labels->len; r++)
      if (!plot_heatmap (dir, axes, rows, g_ptr_array_index (procs, p),
                         g_ptr_array_index (run_labels, r), runs, error))
        return FALSE;
  return TRUE;
}
