/* sweep-run.c — running a sweep's points on worker threads, the row store
 * that makes it resumable, the final CSV and JSON files, and merging the
 * files of shards (see sweep.h).
 *
 * Threads: scenario_run keeps all its state in the Scenario and the
 * simulation it builds (sim/ and models/ hold no mutable static state;
 * trace_nfs_crc32's table is built under g_once), and each point loads a
 * Scenario of its own, so points run in parallel without locks.  Only the
 * calling thread writes files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>

#include "models/sweep-private.h"
#include "sim/sim-output.h"
#include "sim/sim-json.h"
#include "traces/trace.h"

/* ---- rows --------------------------------------------------------------- */

typedef struct {
  guint      replicate;
  guint64    seed;
  guint      run;
  char      *run_label;
  GPtrArray *names;       /* char *: "process.NAME.FIGURE", "device.NAME.FIGURE" */
  GArray    *values;      /* double, one per name */
} SweepRow;

static void
sweep_row_free (SweepRow *r)
{
  g_free (r->run_label);
  g_ptr_array_unref (r->names);
  g_array_unref (r->values);
  g_free (r);
}

static SweepRow *
sweep_row_new (guint replicate, guint64 seed, guint run, const char *label)
{
  SweepRow *r = g_new0 (SweepRow, 1);
  r->replicate = replicate;
  r->seed = seed;
  r->run = run;
  r->run_label = g_strdup (label);
  r->names = g_ptr_array_new_with_free_func (g_free);
  r->values = g_array_new (FALSE, FALSE, sizeof (double));
  return r;
}

static GPtrArray *
rows_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) sweep_row_free);
}

static void
row_add (SweepRow *r, const char *kind, const char *name, const char *figure, double v)
{
  g_ptr_array_add (r->names, g_strdup_printf ("%s.%s.%s", kind, name, figure));
  g_array_append_val (r->values, v);
}

/* The figures `iosim run --json` reports per process and per device, the
 * ones a study compares; latencies in ms. */
static void
row_add_result (SweepRow *row, const SimRunResult *res)
{
  for (guint i = 0; i < res->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (res->processes, i);
      row_add (row, "process", p->name, "ios", (double) p->ios);
      row_add (row, "process", p->name, "mb_per_s", p->mb_per_s);
      row_add (row, "process", p->name, "iops", p->iops);
      row_add (row, "process", p->name, "lat_mean_ms", p->lat_mean_ns / 1e6);
      row_add (row, "process", p->name, "lat_p50_ms", (double) p->lat_p50_ns / 1e6);
      row_add (row, "process", p->name, "lat_p99_ms", (double) p->lat_p99_ns / 1e6);
      row_add (row, "process", p->name, "lat_max_ms", (double) p->lat_max_ns / 1e6);
    }
  for (guint i = 0; i < res->devices->len; i++)
    {
      const SimDeviceResult *d = g_ptr_array_index (res->devices, i);
      row_add (row, "device", d->name, "util", d->utilisation);
      row_add (row, "device", d->name, "merges", (double) d->merges);
      row_add (row, "device", d->name, "mean_queue_depth", d->mean_queue_depth);
      row_add (row, "device", d->name, "mean_in_flight", d->mean_in_flight);
      row_add (row, "device", d->name, "jain_index", d->jain_index);
    }
}

/* Every replicate and run of @point; rows in (replicate, run) order. */
static GPtrArray *
run_point (const Sweep *sw, guint point, GError **error)
{
  g_autoptr (Scenario) s = sweep_load_point (sw, point, error);
  if (s == NULL)
    return NULL;
  g_autoptr (GPtrArray) rows = rows_new ();
  const ScenarioOutputs none = { 0 };
  for (guint rep = 0; rep < sw->n_seeds; rep++)
    {
      guint64 seed = sweep_point_seed (sw, point, rep);
      scenario_set_seed (s, seed);
      for (guint run = 0; run < scenario_n_runs (s); run++)
        {
          g_autoptr (SimRunResult) res = scenario_run (s, run, &none, error);
          if (res == NULL)
            {
              g_autofree char *desc = sweep_point_describe (sw, point);
              g_prefix_error (error, "%s: point %u (%s), seed %" G_GUINT64_FORMAT ", run %s: ",
                              sw->scenario_path, point, desc, seed, scenario_run_label (s, run));
              return NULL;
            }
          SweepRow *row = sweep_row_new (rep, seed, run, scenario_run_label (s, run));
          row_add_result (row, res);
          g_ptr_array_add (rows, row);
        }
    }
  return g_steal_pointer (&rows);
}

/* ---- CSV text ----------------------------------------------------------- */

/* Split one CSV line (no newline) into fields; NULL if a quote is open. */
static GPtrArray *
csv_split (const char *line)
{
  g_autoptr (GPtrArray) fields = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) cur = g_string_new (NULL);
  const char *c = line;
  for (;;)
    {
      if (*c == '"')
        {
          for (c++;; c++)
            {
              if (*c == '\0')
                return NULL;
              if (*c == '"' && c[1] == '"')
                c++;
              else if (*c == '"')
                break;
              g_string_append_c (cur, *c);
            }
          c++;
          if (*c != ',' && *c != '\0')
            return NULL;
        }
      while (*c != ',' && *c != '\0')
        g_string_append_c (cur, *c++);
      g_ptr_array_add (fields, g_strdup (cur->str));
      g_string_truncate (cur, 0);
      if (*c == '\0')
        break;
      c++;
    }
  return g_steal_pointer (&fields);
}

/* Exact: 17 significant digits read back to the same double. */
static void
append_exact (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.17g", v));
}

/* For people: whole numbers as such, anything else with 6 significant
 * digits, in the C locale; NaN (no value) as an empty cell. */
static void
append_readable (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (isnan (v))
    return;
  if (v == floor (v) && fabs (v) < 1e15)
    g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.0f", v));
  else
    g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.6g", v));
}

/* ---- the row store -------------------------------------------------------
 * Header "# iosim sweep ID", then per point its lines
 * "point,replicate,seed,run,run_label,figure,value" and "#done,POINT,LINES". */

#define STORE_COLUMNS "point,replicate,seed,run,run_label,figure,value"

static void
store_header (GString *out, const char *id)
{
  g_string_append_printf (out, "# iosim sweep %s\n" STORE_COLUMNS "\n", id);
}

static void
store_append_point (GString *out, guint point, GPtrArray *rows)
{
  guint lines = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      const SweepRow *r = g_ptr_array_index (rows, i);
      for (guint f = 0; f < r->names->len; f++)
        {
          g_string_append_printf (out, "%u,%u,%" G_GUINT64_FORMAT ",%u,", point, r->replicate,
                                  r->seed, r->run);
          trace_csv_field (out, r->run_label);
          g_string_append_c (out, ',');
          trace_csv_field (out, g_ptr_array_index (r->names, f));
          g_string_append_c (out, ',');
          append_exact (out, g_array_index (r->values, double, f));
          g_string_append_c (out, '\n');
          lines++;
        }
    }
  g_string_append_printf (out, "#done,%u,%u\n", point, lines);
}

static gint
compare_uint (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* The points of @done, sorted. */
static GArray *
sorted_points (GHashTable *done)
{
  GArray *pts = g_array_new (FALSE, FALSE, sizeof (guint));
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, done);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      guint p = GPOINTER_TO_UINT (key);
      g_array_append_val (pts, p);
    }
  g_array_sort (pts, compare_uint);
  return pts;
}

static char *
store_text (const char *id, GHashTable *done)
{
  GString *out = g_string_new (NULL);
  store_header (out, id);
  g_autoptr (GArray) pts = sorted_points (done);
  for (guint i = 0; i < pts->len; i++)
    {
      guint p = g_array_index (pts, guint, i);
      store_append_point (out, p, g_hash_table_lookup (done, GUINT_TO_POINTER (p)));
    }
  return g_string_free (out, FALSE);
}

GHashTable *
sweep_rows_table_new (void)
{
  return g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                (GDestroyNotify) g_ptr_array_unref);
}

typedef struct {
  const Sweep *sw;
  const char  *path;
  gboolean     strict;    /* a finished shard file: anything odd is an error */
  GHashTable  *done;      /* point -> rows */
  guint        block_point;
  guint        block_lines;
  GPtrArray   *block;     /* rows of the point being read, NULL: none */
} StoreReader;

static gboolean
store_bad (StoreReader *sr, guint line, const char *what, GError **error)
{
  g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_STORE, "%s:%u: %s", sr->path, line, what);
  return FALSE;
}

static void
store_drop_block (StoreReader *sr)
{
  g_clear_pointer (&sr->block, g_ptr_array_unref);
  sr->block_lines = 0;
}

/* One "point,replicate,seed,run,run_label,figure,value" line. */
static gboolean
store_read_row (StoreReader *sr, guint line_no, GPtrArray *f, GError **error)
{
  guint64 point, rep, seed, run;
  char *end = NULL;
  if (f->len != 7
      || !g_ascii_string_to_unsigned (f->pdata[0], 10, 0, sr->sw->n_points - 1, &point, NULL)
      || !g_ascii_string_to_unsigned (f->pdata[1], 10, 0, sr->sw->n_seeds - 1, &rep, NULL)
      || !g_ascii_string_to_unsigned (f->pdata[2], 10, 0, G_MAXUINT64, &seed, NULL)
      || !g_ascii_string_to_unsigned (f->pdata[3], 10, 0, G_MAXINT32, &run, NULL))
    return store_bad (sr, line_no, "expected " STORE_COLUMNS, error);
  double v = g_ascii_strtod (f->pdata[6], &end);
  if (end == f->pdata[6] || *end != '\0')
    return store_bad (sr, line_no, "value is not a number", error);
  if (seed != sweep_point_seed (sr->sw, (guint) point, (guint) rep))
    return store_bad (sr, line_no, "seed is not the one of this point and replicate "
                      "(rows of another sweep?)", error);
  if (sr->block && sr->block_point != point)
    {
      if (sr->strict)
        return store_bad (sr, line_no, "rows of a point without its #done line", error);
      store_drop_block (sr);   /* a point interrupted before its #done */
    }
  if (sr->block == NULL)
    {
      sr->block = rows_new ();
      sr->block_point = (guint) point;
    }
  SweepRow *last = sr->block->len ? g_ptr_array_index (sr->block, sr->block->len - 1) : NULL;
  if (last == NULL || last->replicate != rep || last->run != run)
    {
      last = sweep_row_new ((guint) rep, seed, (guint) run, f->pdata[4]);
      g_ptr_array_add (sr->block, last);
    }
  g_ptr_array_add (last->names, g_strdup (f->pdata[5]));
  g_array_append_val (last->values, v);
  sr->block_lines++;
  return TRUE;
}

/* A point's rows hold every replicate, each with as many runs. */
static gboolean
block_has_every_replicate (const StoreReader *sr)
{
  g_autofree guint *runs = g_new0 (guint, sr->sw->n_seeds);
  for (guint i = 0; i < sr->block->len; i++)
    runs[((SweepRow *) g_ptr_array_index (sr->block, i))->replicate]++;
  for (guint r = 0; r < sr->sw->n_seeds; r++)
    if (runs[r] == 0 || runs[r] != runs[0])
      return FALSE;
  return TRUE;
}

static gboolean
store_read_done (StoreReader *sr, guint line_no, GPtrArray *f, GError **error)
{
  guint64 point, lines;
  if (f->len != 3 || !g_ascii_string_to_unsigned (f->pdata[1], 10, 0, G_MAXUINT32, &point, NULL)
      || !g_ascii_string_to_unsigned (f->pdata[2], 10, 0, G_MAXUINT32, &lines, NULL))
    return store_bad (sr, line_no, "expected #done,POINT,LINES", error);
  gboolean whole = sr->block ? sr->block_point == point && sr->block_lines == lines
                              && block_has_every_replicate (sr)
                             : lines == 0;
  if (!whole)
    {
      if (sr->strict)
        return store_bad (sr, line_no, "#done line does not match the rows before it", error);
      store_drop_block (sr);
      return TRUE;
    }
  g_hash_table_replace (sr->done, GUINT_TO_POINTER ((guint) point),
                        sr->block ? g_steal_pointer (&sr->block) : rows_new ());
  sr->block_lines = 0;
  return TRUE;
}

gboolean
sweep_store_read (const Sweep *sw, const char *id, const char *path, gboolean strict,
                  GHashTable *done, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &text, &len, error))
    return FALSE;
  StoreReader sr = { sw, path, strict, done, 0, 0, NULL };
  g_autofree char *want = g_strdup_printf ("# iosim sweep %s", id);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines);
  gboolean ok = TRUE;
  if (n < 2 || strcmp (lines[0], want) != 0 || strcmp (lines[1], STORE_COLUMNS) != 0)
    ok = store_bad (&sr, 1, "not the rows of this sweep (its first line names another sweep id)",
                    error);
  /* The last element follows the last newline: empty, or a line cut short. */
  if (ok && strict && lines[n - 1][0] != '\0')
    ok = store_bad (&sr, n, "last line has no newline (file cut short)", error);
  for (guint i = 2; ok && i + 1 < n; i++)
    {
      g_autoptr (GPtrArray) f = csv_split (lines[i]);
      if (f == NULL)
        ok = store_bad (&sr, i + 1, "unterminated quote", error);
      else if (strcmp (f->pdata[0], "#done") == 0)
        ok = store_read_done (&sr, i + 1, f, error);
      else
        ok = store_read_row (&sr, i + 1, f, error);
    }
  if (ok && strict && sr.block)
    ok = store_bad (&sr, n, "rows of a point without its #done line", error);
  store_drop_block (&sr);
  return ok;
}

/* ---- final files -------------------------------------------------------- */

/* Figure names in order of first appearance over the sorted rows. */
static GPtrArray *
figure_columns (GHashTable *done, GArray *pts)
{
  GPtrArray *cols = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < pts->len; i++)
    {
      GPtrArray *rows = g_hash_table_lookup (done, GUINT_TO_POINTER (g_array_index (pts, guint, i)));
      for (guint r = 0; r < rows->len; r++)
        {
          const SweepRow *row = g_ptr_array_index (rows, r);
          for (guint f = 0; f < row->names->len; f++)
            if (g_hash_table_add (seen, g_ptr_array_index (row->names, f)))
              g_ptr_array_add (cols, g_ptr_array_index (row->names, f));
        }
    }
  return cols;
}

static double
row_value (const SweepRow *row, const char *name)
{
  for (guint f = 0; f < row->names->len; f++)
    if (strcmp (g_ptr_array_index (row->names, f), name) == 0)
      return g_array_index (row->values, double, f);
  return NAN;
}

static gint
compare_rows (gconstpointer a, gconstpointer b)
{
  const SweepRow *x = *(SweepRow *const *) a, *y = *(SweepRow *const *) b;
  if (x->replicate != y->replicate)
    return x->replicate < y->replicate ? -1 : 1;
  return x->run < y->run ? -1 : x->run > y->run;
}

static void
axes_header (GString *out, const Sweep *sw)
{
  g_string_append (out, "point");
  for (guint a = 0; a < sw->axes->len; a++)
    {
      g_string_append_c (out, ',');
      trace_csv_field (out, ((SweepAxis *) g_ptr_array_index (sw->axes, a))->key);
    }
}

static void
axes_cells (GString *out, const Sweep *sw, guint point)
{
  g_string_append_printf (out, "%u", point);
  for (guint a = 0; a < sw->axes->len; a++)
    {
      g_string_append_c (out, ',');
      trace_csv_field (out, sweep_point_value (sw, point, a));
    }
}

static void
json_point (JsonBuilder *b, const Sweep *sw, guint point)
{
  sim_json_uint (b, "point", point);
  json_builder_set_member_name (b, "values");
  json_builder_begin_object (b);
  for (guint a = 0; a < sw->axes->len; a++)
    sim_json_string (b, ((SweepAxis *) g_ptr_array_index (sw->axes, a))->key,
                     sweep_point_value (sw, point, a));
  json_builder_end_object (b);
}

/* Open results' or summary's JSON object: the sweep's head, then the
 * array @member that the rows go into. */
static void
json_open_sweep (JsonBuilder *b, const Sweep *sw, const char *member)
{
  json_builder_begin_object (b);
  sim_json_text (b, "scenario", sw->scenario_name);
  sim_json_string (b, "scenario_sha256", sw->scenario_sha256);
  g_autofree char *master = g_strdup_printf ("%" G_GUINT64_FORMAT, sw->master_seed);
  sim_json_string (b, "master_seed", master);
  sim_json_uint (b, "seeds", sw->n_seeds);
  sweep_json_vary (b, sw);
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
}

typedef struct {
  GString     *csv;
  JsonBuilder *json;
} Out;

static void
write_results (const Sweep *sw, GHashTable *done, GArray *pts, GPtrArray *cols, Out *o)
{
  axes_header (o->csv, sw);
  g_string_append (o->csv, ",replicate,seed,run");
  for (guint c = 0; c < cols->len; c++)
    {
      g_string_append_c (o->csv, ',');
      trace_csv_field (o->csv, g_ptr_array_index (cols, c));
    }
  g_string_append_c (o->csv, '\n');
  json_open_sweep (o->json, sw, "rows");
  for (guint i = 0; i < pts->len; i++)
    {
      guint p = g_array_index (pts, guint, i);
      GPtrArray *rows = g_hash_table_lookup (done, GUINT_TO_POINTER (p));
      for (guint r = 0; r < rows->len; r++)
        {
          const SweepRow *row = g_ptr_array_index (rows, r);
          axes_cells (o->csv, sw, p);
          g_string_append_printf (o->csv, ",%u,%" G_GUINT64_FORMAT ",", row->replicate, row->seed);
          trace_csv_field (o->csv, row->run_label);
          json_builder_begin_object (o->json);
          json_point (o->json, sw, p);
          sim_json_uint (o->json, "replicate", row->replicate);
          sim_json_uint (o->json, "seed", row->seed);
          sim_json_text (o->json, "run", row->run_label);
          json_builder_set_member_name (o->json, "figures");
          json_builder_begin_object (o->json);
          for (guint c = 0; c < cols->len; c++)
            {
              double v = row_value (row, g_ptr_array_index (cols, c));
              g_string_append_c (o->csv, ',');
              append_readable (o->csv, v);
              if (!isnan (v))
                sim_json_double (o->json, g_ptr_array_index (cols, c), v);
            }
          json_builder_end_object (o->json);
          json_builder_end_object (o->json);
          g_string_append_c (o->csv, '\n');
        }
    }
  json_builder_end_array (o->json);
  json_builder_end_object (o->json);
}

/* The rows of one point and run, across replicates. */
static GPtrArray *
rows_of_run (GPtrArray *rows, guint run)
{
  GPtrArray *sel = g_ptr_array_new ();
  for (guint r = 0; r < rows->len; r++)
    if (((SweepRow *) g_ptr_array_index (rows, r))->run == run)
      g_ptr_array_add (sel, g_ptr_array_index (rows, r));
  return sel;
}

static void
write_summary_run (const Sweep *sw, guint p, GPtrArray *sel, GPtrArray *cols, Out *o)
{
  const SweepRow *first = g_ptr_array_index (sel, 0);
  axes_cells (o->csv, sw, p);
  g_string_append_c (o->csv, ',');
  trace_csv_field (o->csv, first->run_label);
  g_string_append_printf (o->csv, ",%u", sel->len);
  json_builder_begin_object (o->json);
  json_point (o->json, sw, p);
  sim_json_text (o->json, "run", first->run_label);
  sim_json_uint (o->json, "seeds", sel->len);
  json_builder_set_member_name (o->json, "figures");
  json_builder_begin_object (o->json);
  g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint c = 0; c < cols->len; c++)
    {
      const char *name = g_ptr_array_index (cols, c);
      g_array_set_size (v, 0);
      for (guint r = 0; r < sel->len; r++)
        {
          double x = row_value (g_ptr_array_index (sel, r), name);
          if (!isnan (x))
            g_array_append_val (v, x);
        }
      double mean, half;
      sweep_ci95 ((const double *) (void *) v->data, v->len, &mean, &half);
      g_string_append_c (o->csv, ',');
      append_readable (o->csv, mean);
      g_string_append_c (o->csv, ',');
      append_readable (o->csv, half);
      if (v->len == 0)
        continue;
      json_builder_set_member_name (o->json, name);
      json_builder_begin_object (o->json);
      sim_json_num (o->json, "mean", mean, TRUE);
      sim_json_num (o->json, "ci95", half, TRUE);
      sim_json_uint (o->json, "n", v->len);
      json_builder_end_object (o->json);
    }
  json_builder_end_object (o->json);
  json_builder_end_object (o->json);
  g_string_append_c (o->csv, '\n');
}

static void
write_summary (const Sweep *sw, GHashTable *done, GArray *pts, GPtrArray *cols, Out *o)
{
  axes_header (o->csv, sw);
  g_string_append (o->csv, ",run,seeds");
  for (guint c = 0; c < cols->len; c++)
    {
      const char *name = g_ptr_array_index (cols, c);
      g_autofree char *mean = g_strconcat (name, ".mean", NULL);
      g_autofree char *ci = g_strconcat (name, ".ci95", NULL);
      g_string_append_c (o->csv, ',');
      trace_csv_field (o->csv, mean);
      g_string_append_c (o->csv, ',');
      trace_csv_field (o->csv, ci);
    }
  g_string_append_c (o->csv, '\n');
  json_open_sweep (o->json, sw, "points");
  for (guint i = 0; i < pts->len; i++)
    {
      guint p = g_array_index (pts, guint, i);
      GPtrArray *rows = g_hash_table_lookup (done, GUINT_TO_POINTER (p));
      guint n_runs = 0;
      for (guint r = 0; r < rows->len; r++)
        n_runs = MAX (n_runs, ((SweepRow *) g_ptr_array_index (rows, r))->run + 1);
      for (guint run = 0; run < n_runs; run++)
        {
          g_autoptr (GPtrArray) sel = rows_of_run (rows, run);
          if (sel->len)
            write_summary_run (sw, p, sel, cols, o);
        }
    }
  json_builder_end_array (o->json);
  json_builder_end_object (o->json);
}

static gboolean
write_pair (const char *dir, const char *csv_name, const char *json_name, Out *o, GError **error)
{
  g_autofree char *csv_path = g_build_filename (dir, csv_name, NULL);
  g_autofree char *json_path = g_build_filename (dir, json_name, NULL);
  g_autoptr (JsonNode) root = json_builder_get_root (o->json);
  return sim_output_write (csv_path, o->csv->str, (gssize) o->csv->len, error)
         && sim_output_write_json (json_path, root, TRUE, error);
}

/* results.csv/json and summary.csv/json of every point in @done. */
static gboolean
write_final (const Sweep *sw, GHashTable *done, const char *dir, GError **error)
{
  g_autoptr (GArray) pts = sorted_points (done);
  for (guint i = 0; i < pts->len; i++)
    g_ptr_array_sort (g_hash_table_lookup (done, GUINT_TO_POINTER (g_array_index (pts, guint, i))),
                      compare_rows);
  g_autoptr (GPtrArray) cols = figure_columns (done, pts);
  g_autoptr (GString) csv = g_string_new (NULL);
  g_autoptr (JsonBuilder) json = json_builder_new ();
  Out o = { csv, json };
  write_results (sw, done, pts, cols, &o);
  if (!write_pair (dir, SWEEP_RESULTS_CSV, SWEEP_RESULTS_JSON, &o, error))
    return FALSE;
  g_string_truncate (csv, 0);
  json_builder_reset (json);
  write_summary (sw, done, pts, cols, &o);
  return write_pair (dir, SWEEP_SUMMARY_CSV, SWEEP_SUMMARY_JSON, &o, error);
}

/* ---- manifests on disk -------------------------------------------------- */

static Sweep *
read_manifest (const char *path, guint *shard_i, guint *shard_n, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  Sweep *sw = sweep_from_manifest (json_parser_get_root (parser), shard_i, shard_n, error);
  if (sw == NULL)
    g_prefix_error (error, "%s: ", path);
  return sw;
}

/* A manifest already in @dir must be this sweep's; then write ours. */
static gboolean
check_and_write_manifest (const Sweep *sw, const char *path, const SweepRunOptions *opt,
                          gboolean *fresh, GError **error)
{
  *fresh = TRUE;
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      guint i = 0, n = 0;
      g_autoptr (GError) local = NULL;
      g_autoptr (Sweep) old = read_manifest (path, &i, &n, &local);
      g_autofree char *diff = old ? sweep_mismatch (old, sw) : NULL;
      if (old && diff == NULL)
        *fresh = FALSE;
      else if (!opt->force)
        {
          g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISMATCH,
                       "%s holds another sweep (%s differ%s): give another -o folder, or "
                       "--force to start this one afresh there",
                       path, old ? diff : local->message, old ? "" : "s");
          return FALSE;
        }
    }
  g_autoptr (JsonNode) root = sweep_manifest (sw, opt->shard_i, opt->shard_n);
  return sim_output_write_json (path, root, TRUE, error);
}

/* ---- running -------------------------------------------------------------- */

typedef struct {
  guint      point;       /* G_MAXUINT: a worker finished */
  GPtrArray *rows;
  GError    *error;
} PointResult;

typedef struct {
  const Sweep  *sw;
  GArray       *todo;
  guint         limit;    /* points to take at most */
  gint          next;     /* atomic: next index into todo */
  gint          failed;   /* atomic */
  volatile sig_atomic_t *stop;
  GAsyncQueue  *results;
} Work;

static gpointer
worker (gpointer data)
{
  Work *w = data;
  for (;;)
    {
      if ((w->stop && *w->stop) || g_atomic_int_get (&w->failed))
        break;
      guint i = (guint) g_atomic_int_add (&w->next, 1);
      if (i >= w->limit)
        break;
      PointResult *res = g_new0 (PointResult, 1);
      res->point = g_array_index (w->todo, guint, i);
      res->rows = run_point (w->sw, res->point, &res->error);
      if (res->rows == NULL)
        g_atomic_int_set (&w->failed, 1);
      g_async_queue_push (w->results, res);
    }
  PointResult *end = g_new0 (PointResult, 1);
  end->point = G_MAXUINT;
  g_async_queue_push (w->results, end);
  return NULL;
}

static gboolean
append_store (FILE *f, const char *path, guint point, GPtrArray *rows, GError **error)
{
  g_autoptr (GString) block = g_string_new (NULL);
  store_append_point (block, point, rows);
  if (fwrite (block->str, 1, block->len, f) != block->len || fflush (f) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write %s: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

/* Run @todo's points on @opt->jobs threads, appending each to @store as it
 * finishes and adding it to @done. */
static gboolean
run_points (const Sweep *sw, GArray *todo, const SweepRunOptions *opt, FILE *store,
            const char *store_path, GHashTable *done, guint *n_run, GError **error)
{
  Work w = { sw, todo, todo->len, 0, 0, opt->stop, g_async_queue_new () };
  if (opt->max_points && opt->max_points < w.limit)
    w.limit = opt->max_points;
  guint jobs = MAX (1, MIN (opt->jobs, w.limit));
  g_autoptr (GPtrArray) threads = g_ptr_array_new ();
  for (guint j = 0; j < jobs && w.limit > 0; j++)
    g_ptr_array_add (threads, g_thread_new ("sweep", worker, &w));
  guint finished = 0;
  GError *first = NULL;
  guint first_point = G_MAXUINT;
  *n_run = 0;
  while (finished < threads->len)
    {
      PointResult *res = g_async_queue_timeout_pop (w.results, G_USEC_PER_SEC / 4);
      if (opt->progress)
        opt->progress (opt->progress_data, *n_run, todo->len);
      if (res == NULL)
        continue;
      if (res->point == G_MAXUINT)
        finished++;
      else if (res->error)
        {
          /* Report the lowest failing point, whatever the order of completion. */
          if (res->point < first_point)
            {
              g_clear_error (&first);
              first = g_steal_pointer (&res->error);
              first_point = res->point;
            }
          g_clear_error (&res->error);
        }
      else if (first == NULL && !append_store (store, store_path, res->point, res->rows, &first))
        {
          g_atomic_int_set (&w.failed, 1);
          first_point = 0;
        }
      else
        {
          g_hash_table_replace (done, GUINT_TO_POINTER (res->point), g_steal_pointer (&res->rows));
          (*n_run)++;
        }
      g_clear_pointer (&res->rows, g_ptr_array_unref);
      g_free (res);
    }
  for (guint j = 0; j < threads->len; j++)
    g_thread_join (g_ptr_array_index (threads, j));
  g_async_queue_unref (w.results);
  if (first)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

/* Rows already complete in @store_path (a missing store: none), and the
 * store rewritten with them alone, so that appending follows whole lines. */
static gboolean
resume_store (const Sweep *sw, const char *id, const char *store_path, gboolean fresh,
              GHashTable *done, GError **error)
{
  if (!fresh && g_file_test (store_path, G_FILE_TEST_EXISTS)
      && !sweep_store_read (sw, id, store_path, FALSE, done, error))
    return FALSE;
  g_autofree char *text = store_text (id, done);
  return sim_output_write (store_path, text, -1, error);
}

gboolean
sweep_run (const Sweep *sw, const char *dir, const SweepRunOptions *opt, SweepRunReport *report,
           GError **error)
{
  g_return_val_if_fail (sw->scenario_text != NULL, FALSE);
  *report = (SweepRunReport) { 0 };
  if (g_mkdir_with_parents (dir, 0777) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot create %s: %s", dir,
                   g_strerror (e));
      return FALSE;
    }
  gboolean shard = opt->shard_n > 0;
  g_autofree char *manifest_name = shard ? sweep_shard_file ("manifest", opt->shard_i, opt->shard_n)
                                         : g_strdup (SWEEP_MANIFEST);
  g_autofree char *store_name = shard ? sweep_shard_file ("store", opt->shard_i, opt->shard_n)
                                      : g_strdup (SWEEP_STORE);
  g_autofree char *manifest_path = g_build_filename (dir, manifest_name, NULL);
  g_autofree char *store_path = g_build_filename (dir, store_name, NULL);
  g_autofree char *id = sweep_id (sw);
  gboolean fresh;
  if (!check_and_write_manifest (sw, manifest_path, opt, &fresh, error))
    return FALSE;

  g_autoptr (GHashTable) stored = sweep_rows_table_new ();
  if (!resume_store (sw, id, store_path, fresh, stored, error))
    return FALSE;
  g_autoptr (GArray) mine = sweep_shard_points (sw, opt->shard_i, opt->shard_n);
  g_autoptr (GArray) todo = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GHashTable) done = sweep_rows_table_new ();
  for (guint i = 0; i < mine->len; i++)
    {
      guint p = g_array_index (mine, guint, i);
      GPtrArray *rows = g_hash_table_lookup (stored, GUINT_TO_POINTER (p));
      if (rows)
        g_hash_table_insert (done, GUINT_TO_POINTER (p), g_ptr_array_ref (rows));
      else
        g_array_append_val (todo, p);
    }
  report->n_points = mine->len;
  report->skipped = mine->len - todo->len;

  FILE *store = g_fopen (store_path, "a");
  if (store == NULL)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot append to %s: %s",
                   store_path, g_strerror (e));
      return FALSE;
    }
  gboolean ok = run_points (sw, todo, opt, store, store_path, done, &report->run, error);
  if (fclose (store) != 0 && ok)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write %s: %s",
                   store_path, g_strerror (e));
      ok = FALSE;
    }
  if (!ok || g_hash_table_size (done) < mine->len)
    return ok;
  report->complete = TRUE;
  if (!shard)
    return write_final (sw, done, dir, error);
  g_autofree char *results_name = sweep_shard_file ("results", opt->shard_i, opt->shard_n);
  g_autofree char *results_path = g_build_filename (dir, results_name, NULL);
  g_autofree char *text = store_text (id, done);
  return sim_output_write (results_path, text, -1, error);
}

/* ---- merging ------------------------------------------------------------ */

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The shard manifests in @dir, by shard index; all of one sweep, of one
 * shard count, none missing. */
static Sweep *
merge_manifests (const char *dir, guint *n_shards, GError **error)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, error);
  if (d == NULL)
    return NULL;
  g_autoptr (Sweep) sw = NULL;
  g_autofree char *sw_file = NULL;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint n = 0;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (const char *name; (name = g_dir_read_name (d));)
    if (g_str_has_prefix (name, "manifest-shard-") && g_str_has_suffix (name, ".json"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint k = 0; k < names->len; k++)
    {
      const char *name = g_ptr_array_index (names, k);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      guint i, m;
      g_autoptr (Sweep) one = read_manifest (path, &i, &m, error);
      if (one == NULL)
        return NULL;
      g_autofree char *diff = sw ? sweep_mismatch (sw, one) : NULL;
      if (m == 0 || (sw && (diff || m != n)))
        {
          g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISMATCH,
                       "%s and %s are not shards of one sweep (%s differ)", sw_file, name,
                       m == 0 ? "shard" : diff ? diff : "shard counts");
          return NULL;
        }
      g_hash_table_add (seen, GUINT_TO_POINTER (i));
      if (sw == NULL)
        {
          sw = g_steal_pointer (&one);
          sw_file = g_strdup (name);
          n = m;
        }
    }
  if (sw == NULL)
    {
      g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISSING,
                   "%s: no manifest-shard-I-of-N.json: not the output folder of "
                   "iosim sweep --shard", dir);
      return NULL;
    }
  g_autoptr (GString) missing = g_string_new (NULL);
  for (guint i = 1; i <= n; i++)
    if (!g_hash_table_contains (seen, GUINT_TO_POINTER (i)))
      g_string_append_printf (missing, "%s%u", missing->len ? ", " : "", i);
  if (missing->len)
    {
      g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISSING,
                   "%s: shard%s %s of %u missing (no manifest: never started here)", dir,
                   strchr (missing->str, ',') ? "s" : "", missing->str, n);
      return NULL;
    }
  *n_shards = n;
  return g_steal_pointer (&sw);
}

gboolean
sweep_merge (const char *dir, const char *out_dir, gboolean force, GError **error)
{
  guint n = 0;
  g_autoptr (Sweep) sw = merge_manifests (dir, &n, error);
  if (sw == NULL)
    return FALSE;
  g_autofree char *id = sweep_id (sw);
  g_autoptr (GHashTable) done = sweep_rows_table_new ();
  g_autoptr (GString) unfinished = g_string_new (NULL);
  for (guint i = 1; i <= n; i++)
    {
      g_autofree char *name = sweep_shard_file ("results", i, n);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_string_append_printf (unfinished, "%s%u", unfinished->len ? ", " : "", i);
          continue;
        }
      g_autoptr (GHashTable) part = sweep_rows_table_new ();
      if (!sweep_store_read (sw, id, path, TRUE, part, error))
        return FALSE;
      g_autoptr (GArray) mine = sweep_shard_points (sw, i, n);
      if (g_hash_table_size (part) != mine->len)
        {
          g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_STORE,
                       "%s: %u points where shard %u of %u has %u", path,
                       g_hash_table_size (part), i, n, mine->len);
          return FALSE;
        }
      for (guint k = 0; k < mine->len; k++)
        {
          gpointer key = GUINT_TO_POINTER (g_array_index (mine, guint, k));
          GPtrArray *rows = g_hash_table_lookup (part, key);
          if (rows == NULL)
            {
              g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_STORE,
                           "%s: point %u of shard %u of %u is missing", path,
                           GPOINTER_TO_UINT (key), i, n);
              return FALSE;
            }
          g_hash_table_insert (done, key, g_ptr_array_ref (rows));
        }
    }
  if (unfinished->len)
    {
      g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISSING,
                   "%s: shard%s %s of %u not finished (no results-shard file; re-run it to "
                   "complete it)", dir, strchr (unfinished->str, ',') ? "s" : "",
                   unfinished->str, n);
      return FALSE;
    }
  if (g_mkdir_with_parents (out_dir, 0777) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot create %s: %s",
                   out_dir, g_strerror (e));
      return FALSE;
    }
  g_autofree char *manifest_path = g_build_filename (out_dir, SWEEP_MANIFEST, NULL);
  SweepRunOptions opt = { .force = force };
  gboolean fresh;
  return check_and_write_manifest (sw, manifest_path, &opt, &fresh, error)
         && write_final (sw, done, out_dir, error);
}
