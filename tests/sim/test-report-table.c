/* test-report-table.c — the text tables of sim-report.c (through
 * sim-table.h) line up whatever their values: columns widen to the widest
 * cell (a latency of 1234.567ms, a long process name), stay at the
 * historical widths when everything fits, and every line of a table has
 * its columns at the same positions. */
#include <string.h>
#include "sim/sim-report.h"
#include "sim/sim-table.h"

/* The module alone: minimums kept, columns widened by their widest cell
 * (characters, not bytes), alignment per column, short rows and tails. */
static void
test_table_module (void)
{
  static const int widths[] = { -4, 6, 3 };
  static const char *const heads[] = { "name", "lat", "n" };
  g_autoptr (SimTable) t = sim_table_new (3, widths, heads);
  sim_table_cell (t, "a");
  sim_table_cell (t, "%.3fms", 1.5);
  sim_table_cell (t, "%d", 7);
  sim_table_end_row (t, NULL);
  sim_table_cell (t, "b");
  sim_table_cell (t, "%.3fms", 1234.5674);
  sim_table_cell (t, "%d", 12);
  sim_table_end_row (t, NULL);
  sim_table_cell (t, "d\u00e9j\u00e0-vu");
  sim_table_end_row (t, " (short row)");
  g_autoptr (GString) out = g_string_new (NULL);
  sim_table_append (t, out, "> ");
  g_assert_cmpstr (out->str, ==,
                   "> name           lat   n\n"
                   "> a          1.500ms   7\n"
                   "> b       1234.567ms  12\n"
                   "> d\u00e9j\u00e0-vu (short row)\n");
}

static SimProcessResult *
process_new (const char *name, const char *op, double lat_ms)
{
  SimProcessResult *p = g_new0 (SimProcessResult, 1);
  p->name = g_strdup (name);
  p->device = g_strdup ("hda");
  p->op = g_strdup (op);
  p->ios = 100;
  p->bytes = 100 * 65536;
  p->mb_per_s = 0.33;
  p->iops = 5.0;
  p->lat_mean_ns = lat_ms * 1e6;
  p->lat_p50_ns = (SimTime) (lat_ms * 0.5e6);
  p->lat_p95_ns = (SimTime) (lat_ms * 0.95e6);
  p->lat_p99_ns = (SimTime) (lat_ms * 0.99e6);
  p->lat_max_ns = (SimTime) (lat_ms * 1e6);
  return p;
}

static SimGroupResult *
group_new (const char *name, guint threads, double lat_ms)
{
  SimGroupResult *g = g_new0 (SimGroupResult, 1);
  g->name = g_strdup (name);
  g->device = g_strdup ("hda");
  g->threads = threads;
  g->ios = 100;
  g->mb_per_s = 12.5;
  g->iops = 5.0;
  g->lat_mean_ns = lat_ms * 1e6;
  g->lat_p50_ns = (SimTime) (lat_ms * 0.5e6);
  g->lat_p99_ns = (SimTime) (lat_ms * 0.99e6);
  g->disk_share = 0.5;
  return g;
}

/* A run of two processes (latencies @lat_ms and 1/100 of it), two groups
 * of 4 threads, one device. */
static SimRunResult *
run_new (const char *label, const char *first_name, double lat_ms)
{
  SimRunResult *r = sim_run_result_new ();
  r->label = g_strdup (label);
  r->writeback = g_strdup ("none");
  r->seed = 1;
  r->hz = 1000;
  r->elapsed_ns = 20 * SIM_NS_PER_S;
  g_ptr_array_add (r->processes, process_new (first_name, "write", lat_ms));
  g_ptr_array_add (r->processes, process_new ("reader", "read", lat_ms / 100));
  g_ptr_array_add (r->groups, group_new (first_name, 4, lat_ms));
  g_ptr_array_add (r->groups, group_new ("reader", 4, lat_ms / 100));
  SimDeviceResult *d = g_new0 (SimDeviceResult, 1);
  d->name = g_strdup ("hda");
  d->sched = g_strdup (label);
  d->model = g_strdup ("disk-5400-30gb");
  d->utilisation = 1.0;
  d->jain_index = 0.5;
  g_ptr_array_add (r->devices, d);
  return r;
}

/* The @n_rows lines from the one starting with @head_prefix. */
static GStrv
table_lines (const char *text, const char *head_prefix, guint n_rows)
{
  g_auto (GStrv) all = g_strsplit (text, "\n", -1);
  GPtrArray *rows = g_ptr_array_new ();
  for (guint i = 0; all[i]; i++)
    if (g_str_has_prefix (all[i], head_prefix))
      {
        for (guint k = 0; k < n_rows; k++)
          {
            g_assert_nonnull (all[i + k]);
            g_ptr_array_add (rows, g_strdup (all[i + k]));
          }
        break;
      }
  g_assert_cmpuint (rows->len, ==, n_rows);
  g_ptr_array_add (rows, NULL);
  return (GStrv) g_ptr_array_free (rows, FALSE);
}

/* Every line has each column where the header has it: a right-aligned
 * column (@left[c] FALSE) ends at its header's last character, a
 * left-aligned one starts at its header's first (or is blank).  The last
 * line has only its first @last_cols columns (a total row, then prose). */
static void
assert_aligned (GStrv lines, const gboolean *left, guint n_cols, guint last_cols)
{
  const char *head = lines[0];
  g_autofree gsize *start = g_new (gsize, n_cols);
  g_autofree gsize *end = g_new (gsize, n_cols);
  gsize pos = 0;
  for (guint c = 0; c < n_cols; c++)
    {
      while (head[pos] == ' ')
        pos++;
      g_assert_true (head[pos] != '\0');
      start[c] = pos;
      while (head[pos] != ' ' && head[pos] != '\0')
        pos++;
      end[c] = pos;
    }
  for (guint l = 1; lines[l]; l++)
    {
      const char *line = lines[l];
      gsize len = strlen (line);
      guint cols = lines[l + 1] ? n_cols : last_cols;
      for (guint c = 0; c < cols; c++)
        {
          if (left[c])
            {
              g_assert_cmpuint (start[c], <, len);
              g_assert_cmpint (line[start[c] - 1], ==, ' ');
              gboolean blank = TRUE;
              for (gsize k = start[c]; k < end[c]; k++)
                blank &= line[k] == ' ';
              if (!blank)
                g_assert_cmpint (line[start[c]], !=, ' ');
            }
          else
            {
              g_assert_cmpuint (end[c], <=, len);
              g_assert_cmpint (line[end[c] - 1], !=, ' ');
              g_assert_true (end[c] == len || line[end[c]] == ' ');
            }
        }
    }
}

static const gboolean process_left[] = { TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE,
                                         FALSE, FALSE, FALSE, FALSE, FALSE };
static const gboolean group_left[] = { TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE,
                                       FALSE, FALSE, FALSE };
static const gboolean device_left[] = { TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE,
                                        FALSE, FALSE };

/* Values that fit keep the fixed layout the tables always had. */
static void
test_narrow_unchanged (void)
{
  g_autoptr (GString) out = g_string_new (NULL);
  SimRunResult *r = run_new ("noop", "writer", 805.166);
  sim_report_run_text (out, r);
  g_auto (GStrv) proc = table_lines (out->str, "  process ", 4);
  g_assert_cmpstr (proc[0], ==, "  process          device op           ios      MB/s      IOPS"
                                "  lat_mean   lat_p50   lat_p95   lat_p99   lat_max  sleeps");
  g_assert_cmpstr (proc[1], ==, "  writer           hda    write        100      0.33       5.0"
                                " 805.166ms 402.583ms 764.908ms 797.114ms 805.166ms       0");
  g_assert_cmpstr (proc[3], ==, "  total                                200      0.66      10.0"
                                "   (all processes over the run's 20.000 s)");
  g_auto (GStrv) dev = table_lines (out->str, "  device ", 2);
  g_assert_cmpstr (dev[0], ==, "  device           sched        model             util%  requests"
                               "    merges avg_queue avg_inflt   jain");
  sim_run_result_free (r);
}

/* A latency over 1,000 ms and a name over 16 characters widen their
 * columns on every line of the table, header included. */
static void
test_wide_values_line_up (void)
{
  g_autoptr (GString) out = g_string_new (NULL);
  SimRunResult *r = run_new ("deadline", "a-very-long-writer-name", 1234.567);
  sim_report_run_text (out, r);
  g_auto (GStrv) proc = table_lines (out->str, "  process ", 4);
  assert_aligned (proc, process_left, G_N_ELEMENTS (process_left), 6);
  g_assert_nonnull (strstr (proc[1], " 1234.567ms "));
  g_assert_nonnull (strstr (proc[1], "  a-very-long-writer-name hda "));
  /* The header widened with its column: lat_mean sits over 1234.567ms. */
  g_assert_cmpuint (strlen (proc[0]), ==, strlen (proc[1]));
  g_auto (GStrv) groups = table_lines (out->str, "  group ", 3);
  assert_aligned (groups, group_left, G_N_ELEMENTS (group_left), G_N_ELEMENTS (group_left));
  g_assert_nonnull (strstr (groups[1], " 1234.567ms "));
  g_auto (GStrv) dev = table_lines (out->str, "  device ", 2);
  assert_aligned (dev, device_left, G_N_ELEMENTS (device_left), G_N_ELEMENTS (device_left));
  sim_run_result_free (r);
}

/* The side-by-side comparison: a p99 of 123456.8 ms overflows its 8
 * characters; each run's column widens and its rows still line up. */
static void
test_compare_lines_up (void)
{
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  g_ptr_array_add (runs, run_new ("noop", "writer", 124703.8));
  g_ptr_array_add (runs, run_new ("deadline", "writer", 1234.567));
  g_autoptr (GString) out = g_string_new (NULL);
  sim_report_compare_text (out, runs);
  g_auto (GStrv) lines = table_lines (out->str, "  process ", 4);
  static const gboolean left[] = { TRUE, FALSE, FALSE };
  assert_aligned (lines, left, G_N_ELEMENTS (left), G_N_ELEMENTS (left));
  g_assert_nonnull (strstr (lines[1], "| 123456.8 |"));
  /* The p99 parts of both rows of the first run end at one column. */
  const char *a = strstr (lines[1], " |");
  const char *b = strstr (lines[2], " |");
  g_assert_nonnull (strstr (a + 2, " |"));
  g_assert_cmpint (strstr (a + 2, " |") - lines[1], ==, strstr (b + 2, " |") - lines[2]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/report/table/module", test_table_module);
  g_test_add_func ("/report/table/narrow-unchanged", test_narrow_unchanged);
  g_test_add_func ("/report/table/wide-values-line-up", test_wide_values_line_up);
  g_test_add_func ("/report/table/compare-lines-up", test_compare_lines_up);
  return g_test_run ();
}
