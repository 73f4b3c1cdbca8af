/* wb-limits.c — writeback threshold arithmetic for the 2.4, 2.6, 2.6.24 and
 * 3.2 eras (see wb-limits.h for the era map and the kernel functions each
 * routine follows).  Integer widths, truncations and shift orders are the
 * kernel's, so the simulator reproduces its off-by-one behaviour (pos_ratio
 * is just under 2048 at the freerun ceiling: 2045 for thresh 12000, bg 6000).
 */
#include "models/wb/wb-limits.h"

#include <errno.h>
#include <stdlib.h>

G_DEFINE_QUARK (wb-error-quark, wb_error)

guint64
wb_jiffies_to_ns (guint64 jiffies, guint hz)
{
  g_return_val_if_fail (hz > 0, 0);
  return jiffies * G_GUINT64_CONSTANT (1000000000) / hz;
}

guint
wb_ilog2 (guint64 x)
{
  if (x == 0)
    return 0;
  return 63u - (guint) __builtin_clzll (x);
}

guint64
wb_roundup_pow_of_two (guint64 x)
{
  if (x <= 1)
    return 1;
  return G_GUINT64_CONSTANT (1) << (wb_ilog2 (x - 1) + 1);
}

static guint64
min_u64 (guint64 a, guint64 b)
{
  return a < b ? a : b;
}

static guint64
max_u64 (guint64 a, guint64 b)
{
  return a > b ? a : b;
}

/* The kernel's clamp_val: lower bound first, then the upper one wins. */
static guint64
clamp_u64 (guint64 v, guint64 lo, guint64 hi)
{
  return min_u64 (max_u64 (v, lo), hi);
}

/* ---- 2.4 bdflush ---- */

static const char *const bdflush_names[WB_BDFLUSH_NPARAMS] = {
  "nfract", "ndirty", "dummy2", "dummy3", "interval", "age_buffer",
  "nfract_sync", "nfract_stop_bdflush", "dummy5",
};

/* Fields that are percentages of "total" and so cannot exceed 100. */
static const gboolean bdflush_is_pct[WB_BDFLUSH_NPARAMS] = {
  TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, TRUE, TRUE, FALSE,
};

const char *
wb_bdflush_param_name (guint index)
{
  g_return_val_if_fail (index < WB_BDFLUSH_NPARAMS, NULL);
  return bdflush_names[index];
}

static void
bdflush_from_array (WbBdflushParams *p, const gint v[WB_BDFLUSH_NPARAMS])
{
  p->nfract_pct = v[0];
  p->ndirty_buffers = v[1];
  p->dummy2 = v[2];
  p->dummy3 = v[3];
  p->interval_jiffies = v[4];
  p->age_buffer_jiffies = v[5];
  p->nfract_sync_pct = v[6];
  p->nfract_stop_bdflush_pct = v[7];
  p->dummy5 = v[8];
}

static void
bdflush_to_array (const WbBdflushParams *p, gint v[WB_BDFLUSH_NPARAMS])
{
  v[0] = p->nfract_pct;
  v[1] = p->ndirty_buffers;
  v[2] = p->dummy2;
  v[3] = p->dummy3;
  v[4] = p->interval_jiffies;
  v[5] = p->age_buffer_jiffies;
  v[6] = p->nfract_sync_pct;
  v[7] = p->nfract_stop_bdflush_pct;
  v[8] = p->dummy5;
}

void
wb_bdflush_params_init_2_4_27 (WbBdflushParams *params, guint hz)
{
  const gint v[WB_BDFLUSH_NPARAMS] = {
    30, 500, 0, 0, (gint) (5 * hz), (gint) (30 * hz), 60, 20, 0,
  };

  g_return_if_fail (params != NULL && hz > 0);
  bdflush_from_array (params, v);
}

void
wb_bdflush_params_init_2_4_18 (WbBdflushParams *params, guint hz)
{
  const gint v[WB_BDFLUSH_NPARAMS] = {
    40, 0, 0, 0, (gint) (5 * hz), (gint) (30 * hz), 60, 0, 0,
  };

  g_return_if_fail (params != NULL && hz > 0);
  bdflush_from_array (params, v);
}

gboolean
wb_bdflush_params_parse (const char      *text,
                         WbBdflushParams *params,
                         GError         **error)
{
  gint v[WB_BDFLUSH_NPARAMS];
  const char *p = text;
  guint n = 0;

  g_return_val_if_fail (text != NULL && params != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Work on a copy so that an error leaves @params untouched. */
  bdflush_to_array (params, v);
  for (;;)
    {
      char *end;
      gint64 value;

      while (g_ascii_isspace (*p))
        p++;
      if (*p == '\0')
        break;
      if (n == WB_BDFLUSH_NPARAMS)
        {
          g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                       "bdflush: more than %d values (extra value at offset %td)",
                       WB_BDFLUSH_NPARAMS, p - text);
          return FALSE;
        }
      errno = 0;
      value = g_ascii_strtoll (p, &end, 10);
      if (end == p || (*end != '\0' && !g_ascii_isspace (*end)))
        {
          const char *stop = p;

          while (*stop != '\0' && !g_ascii_isspace (*stop))
            stop++;
          g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                       "bdflush field %u (%s): '%.*s' is not an integer",
                       n + 1, bdflush_names[n], (int) (stop - p), p);
          return FALSE;
        }
      if (errno == ERANGE || value < 0 || value > G_MAXINT)
        {
          g_set_error (error, WB_ERROR, WB_ERROR_RANGE,
                       "bdflush field %u (%s): %.*s is out of range (0 to %d)",
                       n + 1, bdflush_names[n], (int) (end - p), p, G_MAXINT);
          return FALSE;
        }
      if (bdflush_is_pct[n] && value > 100)
        {
          g_set_error (error, WB_ERROR, WB_ERROR_RANGE,
                       "bdflush field %u (%s): %" G_GINT64_FORMAT
                       " is not a percentage (0 to 100)",
                       n + 1, bdflush_names[n], value);
          return FALSE;
        }
      v[n++] = (gint) value;
      p = end;
    }
  if (n == 0)
    {
      g_set_error (error, WB_ERROR, WB_ERROR_PARSE,
                   "bdflush: no values (expected up to %d integers)",
                   WB_BDFLUSH_NPARAMS);
      return FALSE;
    }
  bdflush_from_array (params, v);
  return TRUE;
}

/* dirty·100 > total·pct, the comparison balance_dirty_state makes. */
static gboolean
bdflush_above (guint64 dirty_pages, guint64 total_pages, gint pct)
{
  return dirty_pages * 100 > total_pages * (guint64) pct;
}

WbBdflushState
wb_bdflush_balance_state (const WbBdflushParams *params,
                          guint64                dirty_pages,
                          guint64                total_pages,
                          gboolean               noio)
{
  g_return_val_if_fail (params != NULL, WB_BDFLUSH_STATE_NONE);

  if (!bdflush_above (dirty_pages, total_pages, params->nfract_pct))
    return WB_BDFLUSH_STATE_NONE;
  if (bdflush_above (dirty_pages, total_pages, params->nfract_sync_pct) && !noio)
    return WB_BDFLUSH_STATE_SYNC;
  return WB_BDFLUSH_STATE_WAKE;
}

gboolean
wb_bdflush_should_stop (const WbBdflushParams *params,
                        guint64                dirty_pages,
                        guint64                total_pages)
{
  g_return_val_if_fail (params != NULL, TRUE);
  return !bdflush_above (dirty_pages, total_pages, params->nfract_stop_bdflush_pct);
}

guint64
wb_bdflush_wake_thresh_pages (const WbBdflushParams *params, guint64 total_pages)
{
  g_return_val_if_fail (params != NULL, 0);
  return total_pages * (guint64) params->nfract_pct / 100;
}

guint64
wb_bdflush_sync_thresh_pages (const WbBdflushParams *params, guint64 total_pages)
{
  g_return_val_if_fail (params != NULL, 0);
  return total_pages * (guint64) params->nfract_sync_pct / 100;
}

guint64
wb_bdflush_stop_thresh_pages (const WbBdflushParams *params, guint64 total_pages)
{
  g_return_val_if_fail (params != NULL, 0);
  return total_pages * (guint64) params->nfract_stop_bdflush_pct / 100;
}

/* ---- 2.6 global limits ---- */

void
wb_dirty_tunables_init (WbDirtyTunables *t, guint kver)
{
  g_return_if_fail (t != NULL);

  *t = (WbDirtyTunables) {
    .dirty_writeback_centisecs = 500,
    .dirty_expire_centisecs = 3000,
  };
  if (kver < WB_KERNEL_VERSION (2, 6, 22))
    {
      t->dirty_background_ratio_pct = 10;
      t->dirty_ratio_pct = 40;
    }
  else if (kver < WB_KERNEL_VERSION (2, 6, 30))
    {
      t->dirty_background_ratio_pct = 5;
      t->dirty_ratio_pct = 10;
    }
  else
    {
      t->dirty_background_ratio_pct = 10;
      t->dirty_ratio_pct = 20;
    }
}

void
wb_dirty_tunables_set_ratio (WbDirtyTunables *t, guint pct)
{
  g_return_if_fail (t != NULL && pct <= 100);
  t->dirty_ratio_pct = pct;
  t->dirty_bytes = 0;
}

void
wb_dirty_tunables_set_bytes (WbDirtyTunables *t, guint64 bytes)
{
  g_return_if_fail (t != NULL);
  t->dirty_bytes = bytes;
  t->dirty_ratio_pct = 0;
}

void
wb_dirty_tunables_set_background_ratio (WbDirtyTunables *t, guint pct)
{
  g_return_if_fail (t != NULL && pct <= 100);
  t->dirty_background_ratio_pct = pct;
  t->dirty_background_bytes = 0;
}

void
wb_dirty_tunables_set_background_bytes (WbDirtyTunables *t, guint64 bytes)
{
  g_return_if_fail (t != NULL);
  t->dirty_background_bytes = bytes;
  t->dirty_background_ratio_pct = 0;
}

guint64
wb_dirtyable_pages (guint kver, const WbMemInfo *mem)
{
  guint64 x;

  g_return_val_if_fail (mem != NULL, 1);

  if (kver < WB_KERNEL_VERSION (2, 6, 24))
    {
      if (mem->total_pages > mem->highmem_total_pages)
        return mem->total_pages - mem->highmem_total_pages;
      return 1;
    }
  x = mem->free_pages + mem->reclaimable_pages;
  if (!mem->highmem_is_dirtyable)
    x -= min_u64 (mem->highmem_dirtyable_pages, x);
  return x + 1;
}

static guint64
pages_round_up (guint64 bytes)
{
  return (bytes + WB_PAGE_SIZE_BYTES - 1) / WB_PAGE_SIZE_BYTES;
}

void
wb_global_dirty_limits (guint                  kver,
                        const WbDirtyTunables *t,
                        const WbMemInfo       *mem,
                        gboolean               less_throttle,
                        guint64               *background_pages,
                        guint64               *dirty_pages)
{
  guint64 available;
  guint64 dirty_ratio;
  guint64 background;
  guint64 dirty;

  g_return_if_fail (t != NULL && mem != NULL);
  g_return_if_fail (background_pages != NULL && dirty_pages != NULL);

  available = wb_dirtyable_pages (kver, mem);
  dirty_ratio = t->dirty_ratio_pct;

  /* Only half of the unmapped memory may be dirty, so that reclaim is not
   * left with nothing but mapped pages (2.6.20). */
  if (kver < WB_KERNEL_VERSION (2, 6, 24) && mem->total_pages > 0)
    {
      guint64 mapped_pct = mem->mapped_pages * 100 / mem->total_pages;
      guint64 unmapped_pct = mapped_pct < 100 ? 100 - mapped_pct : 0;

      dirty_ratio = MIN (dirty_ratio, unmapped_pct / 2);
    }
  if (kver < WB_KERNEL_VERSION (2, 6, 37))
    dirty_ratio = MAX (dirty_ratio, 5);

  if (kver < WB_KERNEL_VERSION (2, 6, 29))
    {
      guint64 background_ratio = t->dirty_background_ratio_pct;

      if (background_ratio >= dirty_ratio)
        background_ratio = dirty_ratio / 2;
      background = background_ratio * available / 100;
      dirty = dirty_ratio * available / 100;
    }
  else
    {
      dirty = t->dirty_bytes != 0 ? pages_round_up (t->dirty_bytes)
                                  : dirty_ratio * available / 100;
      background = t->dirty_background_bytes != 0
                     ? pages_round_up (t->dirty_background_bytes)
                     : t->dirty_background_ratio_pct * available / 100;
      if (background >= dirty)
        background = dirty / 2;
    }

  if (less_throttle)
    {
      background += background / 4;
      dirty += dirty / 4;
    }
  *background_pages = background;
  *dirty_pages = dirty;
}

guint64
wb_ratelimit_pages (guint64 total_pages, guint ncpus)
{
  guint64 r;

  g_return_val_if_fail (ncpus > 0, 16);
  r = total_pages / ((guint64) ncpus * 32);
  if (r < 16)
    r = 16;
  if (r * WB_PAGE_SIZE_BYTES > 4096 * 1024)
    r = (4096 * 1024) / WB_PAGE_SIZE_BYTES;
  return r;
}

guint64
wb_write_chunk_pages (guint kver, guint64 ratelimit_pages, guint64 pages_dirtied)
{
  guint64 base = ratelimit_pages;

  if (kver >= WB_KERNEL_VERSION (2, 6, 33))
    base = max_u64 (pages_dirtied, ratelimit_pages);
  return base + base / 2;
}

/* ---- floating proportions ---- */

guint
wb_prop_period_shift (guint64 dirty_total_pages)
{
  guint shift;

  if (dirty_total_pages < 2)
    dirty_total_pages = 2;
  shift = 2 + wb_ilog2 (dirty_total_pages - 1);
  return MIN (shift, WB_PROP_MAX_SHIFT);
}

void
wb_prop_global_init (WbPropGlobal *pg, guint shift)
{
  g_return_if_fail (pg != NULL && shift >= 1);
  pg->shift = MIN (shift, WB_PROP_MAX_SHIFT);
  pg->events = 0;
}

void
wb_prop_change_shift (WbPropGlobal *pg, guint shift)
{
  g_return_if_fail (pg != NULL && shift >= 1);

  shift = MIN (shift, WB_PROP_MAX_SHIFT);
  if (shift > pg->shift)
    pg->events <<= shift - pg->shift;
  else
    pg->events >>= pg->shift - shift;
  pg->shift = shift;
}

void
wb_prop_local_init (WbPropLocal *pl)
{
  g_return_if_fail (pl != NULL);
  *pl = (WbPropLocal) { 0 };
}

/* prop_adjust_shift: rescale the local period stamp to a changed shift. */
static void
prop_adjust_shift (WbPropLocal *pl, guint new_shift)
{
  if (pl->shift == new_shift)
    return;
  if (pl->shift < new_shift)
    pl->period <<= new_shift - pl->shift;
  else
    pl->period >>= pl->shift - new_shift;
  pl->shift = new_shift;
}

void
wb_prop_local_normalize (const WbPropGlobal *pg, WbPropLocal *pl)
{
  guint64 half = G_GUINT64_CONSTANT (1) << (pg->shift - 1);
  guint64 global_period = pg->events & ~(half - 1);
  guint64 missed;

  if (pl->period == global_period)
    return;
  prop_adjust_shift (pl, pg->shift);
  /* Unsigned like the kernel: a stamp from the future (after a shift
   * change) wraps to a huge count and clears the local events. */
  missed = (global_period - pl->period) >> (pg->shift - 1);
  if (missed < 64)
    pl->events >>= missed;
  else
    pl->events = 0;
  pl->period = global_period;
}

void
wb_prop_inc (WbPropGlobal *pg, WbPropLocal *pl)
{
  g_return_if_fail (pg != NULL && pl != NULL);
  wb_prop_local_normalize (pg, pl);
  pl->events++;
  pg->events++;
}

static guint64
prop_denominator (const WbPropGlobal *pg)
{
  guint64 half = G_GUINT64_CONSTANT (1) << (pg->shift - 1);

  return half + (pg->events & (half - 1));
}

void
wb_prop_inc_max (WbPropGlobal *pg, WbPropLocal *pl, guint max_ratio_pct)
{
  guint64 frac;

  g_return_if_fail (pg != NULL && pl != NULL && max_ratio_pct <= 100);

  frac = (guint64) WB_PROP_FRAC_BASE * max_ratio_pct / 100;
  wb_prop_local_normalize (pg, pl);
  if (frac != WB_PROP_FRAC_BASE
      && pl->events > ((prop_denominator (pg) * frac) >> WB_PROP_FRAC_SHIFT))
    return;
  pl->events++;
  pg->events++;
}

void
wb_prop_fraction (const WbPropGlobal *pg,
                  WbPropLocal        *pl,
                  guint64            *numerator,
                  guint64            *denominator)
{
  g_return_if_fail (pg != NULL && pl != NULL);
  g_return_if_fail (numerator != NULL && denominator != NULL);

  wb_prop_local_normalize (pg, pl);
  *numerator = pl->events;
  *denominator = prop_denominator (pg);
}

/* ---- per-BDI limits (2.6.24–3.1) ---- */

guint64
wb_bdi_dirty_limit (guint64 dirty_thresh_pages,
                    guint64 numerator,
                    guint64 denominator,
                    guint   min_ratio_pct,
                    guint   sum_min_ratio_pct,
                    guint   max_ratio_pct)
{
  guint64 bdi;
  guint64 cap;

  g_return_val_if_fail (denominator > 0, 0);
  g_return_val_if_fail (sum_min_ratio_pct < 100 && min_ratio_pct <= sum_min_ratio_pct, 0);
  g_return_val_if_fail (max_ratio_pct <= 100, 0);

  bdi = dirty_thresh_pages * (100 - sum_min_ratio_pct) / 100;
  bdi = bdi * numerator / denominator;
  bdi += dirty_thresh_pages * min_ratio_pct / 100;
  cap = dirty_thresh_pages * max_ratio_pct / 100;
  return min_u64 (bdi, cap);
}

guint64
wb_bdi_clip_dirty_limit (guint64 bdi_thresh_pages,
                         guint64 dirty_thresh_pages,
                         guint64 global_dirty_pages,
                         guint64 bdi_dirty_pages)
{
  guint64 avail = dirty_thresh_pages > global_dirty_pages
                    ? dirty_thresh_pages - global_dirty_pages : 0;

  return min_u64 (bdi_thresh_pages, avail + bdi_dirty_pages);
}

guint64
wb_task_dirty_limit (guint64 thresh_pages,
                     guint64 task_numerator,
                     guint64 task_denominator)
{
  guint64 inv;
  guint64 dirty;

  g_return_val_if_fail (task_denominator > 0, thresh_pages);

  inv = (thresh_pages >> 3) * task_numerator / task_denominator;
  dirty = inv < thresh_pages ? thresh_pages - inv : 0;
  return max_u64 (dirty, thresh_pages / 2);
}

gboolean
wb_per_bdi_should_throttle (guint64 bdi_dirty_pages,
                            guint64 bdi_thresh_pages,
                            guint64 nr_dirty_pages,
                            guint64 background_thresh_pages,
                            guint64 dirty_thresh_pages)
{
  if (bdi_dirty_pages <= bdi_thresh_pages)
    return FALSE;
  return nr_dirty_pages >= (background_thresh_pages + dirty_thresh_pages) / 2;
}

guint64
wb_per_bdi_pause_jiffies (guint kver, guint hz, guint64 prev_jiffies)
{
  guint64 max = hz / 10;

  g_return_val_if_fail (hz > 0, 1);
  if (kver < WB_KERNEL_VERSION (2, 6, 33))
    return max;
  if (prev_jiffies == 0)
    return 1;
  return min_u64 (prev_jiffies * 2, max);
}

/* ---- IO-less throttling (3.2+) ---- */

guint64
wb_bandwidth_interval_jiffies (guint hz)
{
  return MAX (hz / 5, 1u);
}

guint64
wb_max_pause_jiffies (guint hz)
{
  return MAX (hz / 5, 1u);
}

guint64
wb_dirty_freerun_ceiling (guint64 thresh_pages, guint64 bg_thresh_pages)
{
  return (thresh_pages + bg_thresh_pages) / 2;
}

guint64
wb_hard_dirty_limit (guint64 thresh_pages, guint64 global_dirty_limit_pages)
{
  return max_u64 (thresh_pages, global_dirty_limit_pages);
}

guint64
wb_dirty_setpoint (guint64 thresh_pages,
                   guint64 bg_thresh_pages,
                   guint64 global_dirty_limit_pages)
{
  return (wb_dirty_freerun_ceiling (thresh_pages, bg_thresh_pages)
          + wb_hard_dirty_limit (thresh_pages, global_dirty_limit_pages)) / 2;
}

void
wb_global_dirty_limit_init (WbGlobalDirtyLimit *g, guint64 thresh_pages, guint64 now_jiffies)
{
  g_return_if_fail (g != NULL);
  g->limit_pages = thresh_pages;
  g->update_jiffies = now_jiffies;
}

void
wb_update_dirty_limit (WbGlobalDirtyLimit *g, guint64 thresh_pages, guint64 dirty_pages)
{
  guint64 target;

  g_return_if_fail (g != NULL);

  if (g->limit_pages < thresh_pages)
    {
      g->limit_pages = thresh_pages;
      return;
    }
  /* thresh may have dropped below dirty; the limit must stay above it. */
  target = max_u64 (thresh_pages, dirty_pages);
  if (g->limit_pages > target)
    g->limit_pages -= (g->limit_pages - target) >> 5;
}

gboolean
wb_global_update_bandwidth (WbGlobalDirtyLimit *g,
                            guint               hz,
                            guint64             thresh_pages,
                            guint64             dirty_pages,
                            guint64             now_jiffies)
{
  g_return_val_if_fail (g != NULL && hz > 0, FALSE);

  if (now_jiffies < g->update_jiffies + wb_bandwidth_interval_jiffies (hz))
    return FALSE;
  wb_update_dirty_limit (g, thresh_pages, dirty_pages);
  g->update_jiffies = now_jiffies;
  return TRUE;
}

gint64
wb_pos_ratio_polynom (guint64  setpoint_pages,
                      guint64  dirty_pages,
                      guint64  limit_pages,
                      gboolean clamp)
{
  gint64 x;
  gint64 pos;

  g_return_val_if_fail (limit_pages >= setpoint_pages, 0);

  /* Multiply instead of the kernel's << so a negative difference is not
   * undefined behaviour; the value is the same.  Division truncates
   * towards zero like div_s64; >> on the negative products is the
   * arithmetic shift the kernel relies on. */
  x = ((gint64) setpoint_pages - (gint64) dirty_pages) * WB_POS_RATIO_ONE
      / (gint64) (limit_pages - setpoint_pages + 1);
  pos = x;
  pos = (pos * x) >> WB_RATELIMIT_CALC_SHIFT;
  pos = (pos * x) >> WB_RATELIMIT_CALC_SHIFT;
  pos += WB_POS_RATIO_ONE;
  if (clamp)
    pos = CLAMP (pos, 0, 2 * (gint64) WB_POS_RATIO_ONE);
  return pos;
}

/* The strictlimit branch of bdi_position_ratio (3.14): the BDI's own cubic
 * between its freerun ceiling and bdi_thresh; the smaller ratio wins. */
static guint64
pos_ratio_strict (const WbPosInput *in, guint64 pos_ratio)
{
  guint64 bdi_bg_thresh;
  guint64 bdi_setpoint;
  gint64 bdi_pos;

  if (in->bdi_dirty_pages < 8)
    return min_u64 (pos_ratio * 2, 2 * WB_POS_RATIO_ONE);
  if (in->bdi_dirty_pages >= in->bdi_thresh_pages)
    return 0;
  bdi_bg_thresh = in->thresh_pages
                    ? in->bdi_thresh_pages * in->bg_thresh_pages / in->thresh_pages
                    : 0;
  bdi_setpoint = wb_dirty_freerun_ceiling (in->bdi_thresh_pages, bdi_bg_thresh);
  if (bdi_setpoint == 0 || bdi_setpoint == in->bdi_thresh_pages)
    return 0;
  bdi_pos = wb_pos_ratio_polynom (bdi_setpoint, in->bdi_dirty_pages,
                                  in->bdi_thresh_pages, TRUE);
  return min_u64 (pos_ratio, (guint64) bdi_pos);
}

guint64
wb_pos_ratio (const WbPosInput *in)
{
  guint64 limit;
  guint64 setpoint;
  guint64 bdi_thresh;
  guint64 bdi_setpoint;
  guint64 span;
  guint64 x_intercept;
  guint64 scale;
  guint64 pos_ratio;
  gint64 global;

  g_return_val_if_fail (in != NULL, 0);

  limit = wb_hard_dirty_limit (in->thresh_pages, in->global_dirty_limit_pages);
  if (in->dirty_pages >= limit)
    return 0;
  setpoint = wb_dirty_setpoint (in->thresh_pages, in->bg_thresh_pages,
                                in->global_dirty_limit_pages);
  global = wb_pos_ratio_polynom (setpoint, in->dirty_pages, limit, in->strictlimit);
  /* dirty < limit keeps x above −1024, so the cubic stays positive. */
  g_assert (global >= 0);
  pos_ratio = (guint64) global;

  if (in->strictlimit)
    return pos_ratio_strict (in, pos_ratio);

  /* An idle BDI keeps a usable threshold so that its first writes are not
   * throttled while its share ramps up.  The last cap keeps thresh −
   * bdi_thresh from wrapping, which the kernel only avoids in practice. */
  bdi_thresh = min_u64 (in->bdi_thresh_pages, in->thresh_pages);
  bdi_thresh = max_u64 (bdi_thresh, (limit - in->dirty_pages) / 8);
  bdi_thresh = min_u64 (bdi_thresh, in->thresh_pages);

  /* bdi_thresh/thresh in 16-bit fixed point scales setpoint and span. */
  scale = (bdi_thresh << 16) / (in->thresh_pages + 1);
  bdi_setpoint = (setpoint * scale) >> 16;
  span = ((in->thresh_pages - bdi_thresh + 8 * in->write_bw_pages_per_s) * scale) >> 16;
  x_intercept = bdi_setpoint + span;

  if (in->bdi_dirty_pages < x_intercept - span / 4)
    pos_ratio = pos_ratio * (x_intercept - in->bdi_dirty_pages)
                / (x_intercept - bdi_setpoint + 1);
  else
    pos_ratio /= 4;

  /* Reserve area: an underrun BDI would let its disk go idle. */
  x_intercept = bdi_thresh / 2;
  if (in->bdi_dirty_pages < x_intercept)
    {
      if (in->bdi_dirty_pages > x_intercept / 8)
        pos_ratio = pos_ratio * x_intercept / in->bdi_dirty_pages;
      else
        pos_ratio *= 8;
    }
  return pos_ratio;
}

void
wb_bdi_bandwidth_init (WbBdiBandwidth *b, guint hz, guint64 now_jiffies)
{
  g_return_if_fail (b != NULL && hz > 0);
  *b = (WbBdiBandwidth) {
    .hz = hz,
    .write_bandwidth = WB_INIT_BW_PAGES_PER_S,
    .avg_write_bandwidth = WB_INIT_BW_PAGES_PER_S,
    .dirty_ratelimit = WB_INIT_BW_PAGES_PER_S,
    .balanced_dirty_ratelimit = WB_INIT_BW_PAGES_PER_S,
    .bw_time_stamp = now_jiffies,
  };
}

void
wb_bdi_update_write_bandwidth (WbBdiBandwidth *b,
                               guint64         elapsed_jiffies,
                               guint64         written_pages)
{
  guint64 period;
  guint64 avg;
  guint64 old;
  guint64 bw;

  g_return_if_fail (b != NULL && elapsed_jiffies > 0);

  period = wb_roundup_pow_of_two (3 * (guint64) b->hz);
  avg = b->avg_write_bandwidth;
  old = b->write_bandwidth;
  bw = (written_pages - b->written_stamp) * b->hz;
  if (elapsed_jiffies > period)
    {
      bw /= elapsed_jiffies;
      avg = bw;
    }
  else
    {
      bw += old * (period - elapsed_jiffies);
      bw >>= wb_ilog2 (period);
      /* Follow only when the sample does not reverse direction: filters
       * out single spikes. */
      if (avg > old && old >= bw)
        avg -= (avg - old) >> 3;
      if (avg < old && old <= bw)
        avg += (old - avg) >> 3;
    }
  b->write_bandwidth = bw;
  b->avg_write_bandwidth = avg;
}

void
wb_bdi_update_dirty_ratelimit (WbBdiBandwidth   *b,
                               const WbPosInput *pos,
                               guint64           dirtied_pages,
                               guint64           elapsed_jiffies)
{
  guint64 setpoint;
  guint64 write_bw;
  guint64 ratelimit;
  guint64 dirty_rate;
  guint64 pos_ratio;
  guint64 task_ratelimit;
  guint64 balanced;
  guint64 step = 0;
  guint64 shift;
  WbPosInput in;

  g_return_if_fail (b != NULL && pos != NULL && elapsed_jiffies > 0);

  setpoint = wb_dirty_setpoint (pos->thresh_pages, pos->bg_thresh_pages,
                                pos->global_dirty_limit_pages);
  write_bw = b->avg_write_bandwidth;
  ratelimit = b->dirty_ratelimit;
  dirty_rate = (dirtied_pages - b->dirtied_stamp) * b->hz / elapsed_jiffies;

  in = *pos;
  in.write_bw_pages_per_s = write_bw;
  pos_ratio = wb_pos_ratio (&in);
  /* +1 lets the rate climb back from tiny values. */
  task_ratelimit = ((ratelimit * pos_ratio) >> WB_RATELIMIT_CALC_SHIFT) + 1;
  balanced = task_ratelimit * write_bw / (dirty_rate | 1);

  /* Step only when the rate error and the position error agree. */
  if (pos->dirty_pages < setpoint)
    {
      guint64 x = min_u64 (b->balanced_dirty_ratelimit, min_u64 (balanced, task_ratelimit));

      if (ratelimit < x)
        step = x - ratelimit;
    }
  else
    {
      guint64 x = max_u64 (b->balanced_dirty_ratelimit, max_u64 (balanced, task_ratelimit));

      if (ratelimit > x)
        step = ratelimit - x;
    }

  /* Slow down near the target to avoid tremors, and limit the speed to
   * avoid overshoot. */
  shift = ratelimit / (2 * step + 1);
  step = shift < 64 ? step >> shift : 0;
  step = (step + 7) / 8;

  if (ratelimit < balanced)
    ratelimit += step;
  else
    ratelimit -= step;
  b->dirty_ratelimit = max_u64 (ratelimit, 1);
  b->balanced_dirty_ratelimit = balanced;
}

gboolean
wb_bdi_update_bandwidth (WbBdiBandwidth     *b,
                         WbGlobalDirtyLimit *global,
                         const WbPosInput   *pos,
                         guint64             dirtied_pages,
                         guint64             written_pages,
                         guint64             now_jiffies,
                         guint64             start_jiffies)
{
  guint64 elapsed;

  g_return_val_if_fail (b != NULL && pos != NULL, FALSE);
  g_return_val_if_fail (now_jiffies >= b->bw_time_stamp, FALSE);

  elapsed = now_jiffies - b->bw_time_stamp;
  if (elapsed < wb_bandwidth_interval_jiffies (b->hz))
    return FALSE;

  /* After an idle second the counters say nothing about bandwidth. */
  if (!(elapsed > b->hz && b->bw_time_stamp < start_jiffies))
    {
      if (pos->thresh_pages != 0)
        {
          WbPosInput in = *pos;

          if (global != NULL)
            {
              wb_global_update_bandwidth (global, b->hz, pos->thresh_pages,
                                          pos->dirty_pages, now_jiffies);
              in.global_dirty_limit_pages = global->limit_pages;
            }
          wb_bdi_update_dirty_ratelimit (b, &in, dirtied_pages, elapsed);
        }
      wb_bdi_update_write_bandwidth (b, elapsed, written_pages);
    }
  b->dirtied_stamp = dirtied_pages;
  b->written_stamp = written_pages;
  b->bw_time_stamp = now_jiffies;
  return TRUE;
}

guint64
wb_dirty_poll_interval (guint64 dirty_pages, guint64 thresh_pages)
{
  if (thresh_pages > dirty_pages)
    return G_GUINT64_CONSTANT (1) << (wb_ilog2 (thresh_pages - dirty_pages) >> 1);
  return 1;
}

guint64
wb_bdi_max_pause_3_2 (guint   hz,
                      guint64 avg_write_bw_pages_per_s,
                      guint64 dirty_ratelimit_pages_per_s,
                      guint64 bdi_dirty_pages)
{
  guint64 bw = avg_write_bw_pages_per_s;
  guint hi = wb_ilog2 (bw);
  guint lo = wb_ilog2 (dirty_ratelimit_pages_per_s);
  guint64 t;

  g_return_val_if_fail (hz > 0, 4);

  t = hz / 50;
  if (hi > lo)
    t += (guint64) (hi - lo) * (20 * hz) / 1024;
  t = min_u64 (t, bdi_dirty_pages * hz / (8 * bw + 1));
  return clamp_u64 (t, 4, wb_max_pause_jiffies (hz));
}

guint64
wb_bdi_max_pause_3_3 (guint   hz,
                      guint64 avg_write_bw_pages_per_s,
                      guint64 bdi_dirty_pages)
{
  guint64 t;

  g_return_val_if_fail (hz > 0, 1);
  t = bdi_dirty_pages
      / (1 + avg_write_bw_pages_per_s / wb_roundup_pow_of_two (1 + hz / 8));
  t++;
  return min_u64 (t, wb_max_pause_jiffies (hz));
}

void
wb_balance_dirty_pages_pause (const WbPosInput     *pos,
                              const WbBdiBandwidth *b,
                              guint64               pages_dirtied,
                              guint64               nr_dirtied_pause,
                              WbPause              *out)
{
  guint64 dirty;
  guint64 thresh;
  guint64 bg_thresh;
  guint64 pause;
  guint64 max_pause;
  guint64 target;
  WbPosInput in;

  g_return_if_fail (pos != NULL && b != NULL && out != NULL);

  dirty = pos->dirty_pages;
  thresh = pos->thresh_pages;
  bg_thresh = pos->bg_thresh_pages;

  *out = (WbPause) { .nr_dirtied_pause = nr_dirtied_pause };
  if (pos->strictlimit)
    {
      dirty = pos->bdi_dirty_pages;
      bg_thresh = thresh ? pos->bdi_thresh_pages * bg_thresh / thresh : 0;
      thresh = pos->bdi_thresh_pages;
    }
  if (dirty <= wb_dirty_freerun_ceiling (thresh, bg_thresh))
    {
      out->freerun = TRUE;
      out->nr_dirtied_pause = wb_dirty_poll_interval (dirty, thresh);
      return;
    }

  in = *pos;
  in.write_bw_pages_per_s = b->avg_write_bandwidth;
  max_pause = wb_bdi_max_pause_3_2 (b->hz, b->avg_write_bandwidth,
                                    b->dirty_ratelimit, pos->bdi_dirty_pages);
  out->max_pause_jiffies = max_pause;
  out->pos_ratio = wb_pos_ratio (&in);
  out->task_ratelimit = (b->dirty_ratelimit * out->pos_ratio) >> WB_RATELIMIT_CALC_SHIFT;

  if (out->task_ratelimit == 0)
    {
      out->repeat = TRUE;
      pause = max_pause;
      out->sleep_jiffies = pause;
    }
  else
    {
      pause = (guint64) b->hz * pages_dirtied / out->task_ratelimit;
      if (pause == 0)
        pause = 1;   /* not slept; keeps nr_dirtied_pause from resetting */
      else
        {
          pause = min_u64 (pause, max_pause);
          out->sleep_jiffies = pause;
        }
    }

  target = b->dirty_ratelimit * (max_pause / 2) / b->hz;
  if (pause <= max_pause / 4 && pages_dirtied >= nr_dirtied_pause)
    out->nr_dirtied_pause = clamp_u64 (target, pages_dirtied + pages_dirtied / 8,
                                       pages_dirtied * 4);
  else if (pause >= max_pause)
    out->nr_dirtied_pause = 1 | clamp_u64 (target, pages_dirtied / 4,
                                           pages_dirtied - pages_dirtied / 8);
}
