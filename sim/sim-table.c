/* sim-table.c — see sim-table.h. */
#include <stdarg.h>
#include "sim/sim-table.h"

typedef struct {
  GPtrArray *cells;   /* char *, one per column from the left; may stop early */
  char      *tail;    /* printed after the last cell as given; may be NULL */
} SimTableRow;

struct _SimTable {
  guint        n_cols;
  int         *width;   /* widest so far, at least the minimum; negative: left-aligned */
  GPtrArray   *rows;    /* SimTableRow */
  SimTableRow *open;    /* the row being filled, or NULL */
};

static void
table_row_free (gpointer data)
{
  SimTableRow *row = data;
  g_ptr_array_unref (row->cells);
  g_free (row->tail);
  g_free (row);
}

SimTable *
sim_table_new (guint n_cols, const int *min_width, const char *const *heads)
{
  g_return_val_if_fail (n_cols > 0 && min_width != NULL && heads != NULL, NULL);
  SimTable *t = g_new0 (SimTable, 1);
  t->n_cols = n_cols;
  t->width = g_memdup2 (min_width, n_cols * sizeof *min_width);
  t->rows = g_ptr_array_new_with_free_func (table_row_free);
  for (guint c = 0; c < n_cols; c++)
    sim_table_cell (t, "%s", heads[c]);
  sim_table_end_row (t, NULL);
  return t;
}

void
sim_table_free (SimTable *t)
{
  if (t == NULL)
    return;
  if (t->open)
    table_row_free (t->open);
  g_ptr_array_unref (t->rows);
  g_free (t->width);
  g_free (t);
}

void
sim_table_cell (SimTable *t, const char *format, ...)
{
  if (t->open == NULL)
    {
      t->open = g_new0 (SimTableRow, 1);
      t->open->cells = g_ptr_array_new_with_free_func (g_free);
    }
  guint col = t->open->cells->len;
  g_return_if_fail (col < t->n_cols);
  va_list args;
  va_start (args, format);
  char *cell = g_strdup_vprintf (format, args);
  va_end (args);
  int len = (int) g_utf8_strlen (cell, -1);
  if (len > ABS (t->width[col]))
    t->width[col] = t->width[col] < 0 ? -len : len;
  g_ptr_array_add (t->open->cells, cell);
}

void
sim_table_end_row (SimTable *t, const char *tail)
{
  g_return_if_fail (t->open != NULL);
  t->open->tail = g_strdup (tail);
  g_ptr_array_add (t->rows, t->open);
  t->open = NULL;
}

void
sim_table_append (const SimTable *t, GString *out, const char *indent)
{
  g_return_if_fail (t->open == NULL);
  for (guint i = 0; i < t->rows->len; i++)
    {
      const SimTableRow *row = g_ptr_array_index (t->rows, i);
      g_string_append (out, indent);
      for (guint c = 0; c < row->cells->len; c++)
        {
          const char *cell = g_ptr_array_index (row->cells, c);
          int pad = ABS (t->width[c]) - (int) g_utf8_strlen (cell, -1);
          if (c > 0)
            g_string_append_c (out, ' ');
          if (t->width[c] > 0)
            g_string_append_printf (out, "%*s", pad, "");
          g_string_append (out, cell);
          if (t->width[c] < 0)
            g_string_append_printf (out, "%*s", pad, "");
        }
      if (row->tail)
        g_string_append (out, row->tail);
      g_string_append_c (out, '\n');
    }
}
