/* wb-perbdi.h — introspection of the "per-bdi-2.6.24" writeback era
 * (models/wb/wb-perbdi.c), for tests and reports. */
#pragma once

#include "models/wb/wb.h"

G_BEGIN_DECLS

/* The BDI's dirty threshold right now (get_dirty_limits of 2.6.24–3.1:
 * the global dirty threshold scaled by the BDI's share of recent writeback
 * completions, within min_ratio/max_ratio, clipped to what is still free).
 * @w must be a per-bdi-2.6.24 policy. */
guint64 wb_perbdi_bdi_thresh_pages (WbPolicy *w, SimBdi *bdi);

G_END_DECLS
