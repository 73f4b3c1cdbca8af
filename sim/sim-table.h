/* sim-table.h — text tables whose columns are as wide as their widest
 * cell, for iosim's reports.
 *
 * A fixed printf layout (%9s, %7.3fms) pushes the rest of a row out of
 * line as soon as one value outgrows it: a latency past 1,000 ms, a long
 * process name.  Here cells are formatted unpadded and each column is
 * padded, when printed, to its widest cell but never below its given
 * minimum, so a table whose values fit the minimums prints exactly as the
 * fixed layout did.  Widths count characters (UTF-8), not bytes.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SimTable SimTable;

/* A table of @n_cols columns whose first row is @heads.  @min_width holds
 * one minimum width per column; a negative width left-aligns the column
 * (as printf's %-Ns), a positive one right-aligns it (numbers, with their
 * units inside the cell: "1234.567ms"). */
SimTable *sim_table_new     (guint              n_cols,
                             const int         *min_width,
                             const char *const *heads);
void      sim_table_free    (SimTable          *table);

/* Append a cell to the row being filled (at most n_cols per row). */
void      sim_table_cell    (SimTable          *table,
                             const char        *format,
                             ...) G_GNUC_PRINTF (2, 3);

/* Close the row; it may have fewer cells than columns.  @tail (may be
 * NULL) is printed after its last cell as given, unpadded. */
void      sim_table_end_row (SimTable          *table,
                             const char        *tail);

/* Append every row to @out: @indent, the cells one space apart, '\n'. */
void      sim_table_append  (const SimTable    *table,
                             GString           *out,
                             const char        *indent);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimTable, sim_table_free)

G_END_DECLS
