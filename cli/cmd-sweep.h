/* cmd-sweep.h — what cmd-sweep.c shares with cmd-sweep-plot.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Draw the plots of the summary.json in @dir (see `iosim sweep --help`):
 * per varied key, each process's mean MB/s with its 95 % CI; a heat map
 * per process and run when exactly two keys are varied.  Without gnuplot
 * on PATH, says so on stderr and draws nothing (TRUE). */
gboolean cli_sweep_plots (const char *dir, GError **error);

G_END_DECLS
