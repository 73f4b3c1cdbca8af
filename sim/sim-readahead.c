/* sim-readahead.c — file readahead window decisions, per kernel era.
 *
 * Follows mm/filemap.c generic_file_readahead() of 2.4.2x, mm/readahead.c
 * page_cache_readahead() of 2.6.1x-2.6.22, ondemand_readahead() of 2.6.23
 * and page_cache_sync_ra()/page_cache_async_ra()/page_cache_ra_order() of
 * 6.18 with large folios: each async window asks for folios two orders
 * above the last window's (struct file_ra_state's order, Jan Kara's 2025
 * patch on Ryan Roberts' readahead series) and its end is trimmed to that
 * order's alignment.  The windows were checked against Linux 6.18.44 on a
 * loop device (tests/realdev/test-readahead-kernel.c): the folio order kept in
 * the state, not the hit folio's, is what that kernel does.  Arithmetic is
 * unsigned like the kernel's (pgoff_t), including the deliberate wrap of
 * "index - prev_index <= 1" with prev_index = -1 before the first read.
 * See sim-readahead.h for the calling protocol.
 */
#include "sim/sim-readahead.h"

#include <string.h>

G_DEFINE_QUARK (sim-readahead-error-quark, sim_ra_error)

#define FILE_PAGES_UNKNOWN  (G_MAXUINT64 / 2)

static const char *const era_names[] = {
  [SIM_RA_ERA_2_4] = "2.4",
  [SIM_RA_ERA_2_6_PRE23] = "2.6-pre23",
  [SIM_RA_ERA_ONDEMAND_2_6_23] = "ondemand-2.6.23",
  [SIM_RA_ERA_ONDEMAND_6_18] = "ondemand-6.18",
  [SIM_RA_ERA_ONDEMAND_2_6_27] = "ondemand-2.6.27",
};

/* The index of @name in @names, or -1. */
static int
name_index (const char *const *names, guint n, const char *name)
{
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (name, names[i]) == 0)
      return (int) i;
  return -1;
}

gboolean
sim_ra_era_parse (const char *name, SimRaEra *era, GError **error)
{
  int i = name_index (era_names, G_N_ELEMENTS (era_names), name);
  if (i >= 0)
    {
      *era = (SimRaEra) i;
      return TRUE;
    }
  g_set_error (error, SIM_RA_ERROR, SIM_RA_ERROR_UNKNOWN_ERA,
               "unknown readahead era '%s' (expected 2.4, 2.6-pre23, "
               "ondemand-2.6.23, ondemand-2.6.27 or ondemand-6.18)", name ? name : "(null)");
  return FALSE;
}

const char *
sim_ra_era_name (SimRaEra era)
{
  g_assert ((guint) era < G_N_ELEMENTS (era_names));
  return era_names[era];
}

guint64
sim_ra_pages_from_kb (guint64 read_ahead_kb)
{
  return read_ahead_kb * 1024 / SIM_RA_PAGE_BYTES;
}

void
sim_ra_init (SimRaState *ra, SimRaEra era, guint64 max_pages)
{
  g_assert ((guint) era < G_N_ELEMENTS (era_names));
  memset (ra, 0, sizeof *ra);
  ra->era = era;
  ra->max_pages = max_pages;
  ra->prev_index = G_MAXUINT64;
  ra->file_pages = FILE_PAGES_UNKNOWN;
}

void
sim_ra_set_max_pages (SimRaState *ra, guint64 max_pages)
{
  ra->max_pages = max_pages;
}

static const char *const advice_names[] = {
  [SIM_RA_ADVICE_NORMAL] = "normal",
  [SIM_RA_ADVICE_SEQUENTIAL] = "sequential",
  [SIM_RA_ADVICE_RANDOM] = "random",
};

gboolean
sim_ra_advice_parse (const char *name, SimRaAdvice *advice, GError **error)
{
  int i = name_index (advice_names, G_N_ELEMENTS (advice_names), name);
  if (i >= 0)
    {
      *advice = (SimRaAdvice) i;
      return TRUE;
    }
  g_set_error (error, SIM_RA_ERROR, SIM_RA_ERROR_UNKNOWN_ADVICE,
               "unknown fadvise advice '%s' (normal, sequential, random)", name);
  return FALSE;
}

const char *
sim_ra_advice_name (SimRaAdvice advice)
{
  g_assert ((guint) advice < G_N_ELEMENTS (advice_names));
  return advice_names[advice];
}

void
sim_ra_fadvise (SimRaState *ra, SimRaAdvice advice, guint64 bdi_pages, guint64 io_pages)
{
  if (ra->era == SIM_RA_ERA_2_4)
    return;
  ra->random = FALSE;
  ra->max_pages = advice == SIM_RA_ADVICE_SEQUENTIAL ? 2 * bdi_pages : bdi_pages;
  if (advice == SIM_RA_ADVICE_RANDOM)
    {
      if (ra->era == SIM_RA_ERA_ONDEMAND_6_18)
        ra->random = TRUE;
      else
        ra->max_pages = 0;
    }
  ra->io_pages = io_pages;
}

void
sim_ra_set_cache_probe (SimRaState *ra, SimRaCachedFunc cached,
                        gpointer user_data)
{
  ra->cached = cached;
  ra->cached_data = user_data;
}

void
sim_ra_set_folio_probe (SimRaState *ra, SimRaFolioFunc folio)
{
  ra->folio = folio;
}

void
sim_ra_set_file_pages (SimRaState *ra, guint64 file_pages)
{
  ra->file_pages = file_pages;
}

static gboolean
is_cached (const SimRaState *ra, guint64 index)
{
  return ra->cached != NULL && ra->cached (index, ra->cached_data);
}

static guint
folio_order_of (const SimRaState *ra, guint64 index)
{
  return ra->folio != NULL ? ra->folio (index, ra->cached_data) : 0;
}

static guint64
roundup_pow_of_two (guint64 n)
{
  guint64 r = 1;

  while (r < n)
    r <<= 1;
  return r;
}

/* get_init_ra_size(), identical from 2.6.1x to 6.18: 4x for small reads,
 * 2x for medium ones, else the max. */
static guint64
init_ra_size (guint64 req_pages, guint64 max)
{
  guint64 newsize = roundup_pow_of_two (req_pages);

  if (newsize <= max / 32)
    return newsize * 4;
  if (newsize <= max / 4)
    return newsize * 2;
  return max;
}

/* get_next_ra_size(): 2.6.23 clamps 4x/2x to max; 6.18 returns 4x, 2x
 * while cur <= max/2, else max.  Equal for cur <= max; the callers differ
 * when cur > max (6.18 keeps the bigger window). */
static guint64
next_ra_size (SimRaEra era, guint64 cur, guint64 max)
{
  if (era == SIM_RA_ERA_ONDEMAND_2_6_23 || era == SIM_RA_ERA_ONDEMAND_2_6_27)
    return MIN (cur < max / 16 ? 4 * cur : 2 * cur, max);
  if (cur < max / 16)
    return 4 * cur;
  if (cur <= max / 2)
    return 2 * cur;
  return max;
}

static void
fill_window (SimRaWindow *out, guint64 start, guint64 nr_pages,
             guint64 async_size, gboolean is_async)
{
  g_assert (async_size <= nr_pages);
  out->start = start;
  out->nr_pages = nr_pages;
  out->async_size = async_size;
  /* __do_page_cache_readahead marks page nr - lookahead; none if 0. */
  out->marker = async_size > 0 ? start + nr_pages - async_size
                               : SIM_RA_NO_MARKER;
  out->is_async = is_async;
  out->folio_order = 0;
  out->order0_from = start + nr_pages;
}

static gboolean
window_from_state (const SimRaState *ra, gboolean is_async, SimRaWindow *out)
{
  fill_window (out, ra->start, ra->size, ra->async_size, is_async);
  return TRUE;
}

/* ---- ondemand-2.6.23 and 2.6.27 ---- */

/* 2.6.27 marker hit without matching state: radix_tree_next_hole(index,
 * max + 1) finds the first missing page (index + max + 1 when none); the
 * pages cached from the hit on stand for the old async size. */
static gboolean
marker_probe_2627 (SimRaState *ra, guint64 index, SimRaWindow *out)
{
  guint64 max = ra->max_pages;
  guint64 hole = index;
  while (hole < index + max + 1 && ra->cached != NULL && ra->cached (hole, ra->cached_data))
    hole++;
  /* hole == index: no probe, nothing known about the cache. */
  if (hole - index > max || hole == index)
    return FALSE;
  ra->start = hole;
  ra->size = next_ra_size (ra->era, hole - index, max);
  ra->async_size = ra->size;
  return window_from_state (ra, TRUE, out);
}

static gboolean
ondemand_2623 (SimRaState *ra, guint64 index, guint64 req_pages,
               gboolean marker_hit, SimRaWindow *out)
{
  guint64 max = ra->max_pages;
  gboolean sequential = (index - ra->prev_index <= 1) || req_pages > max;
  guint64 start, size, la;

  if (max == 0)
    return FALSE;

  /* Lookahead hit, or reached the end of the window: ramp up. */
  if (index != 0 && (index == ra->start + ra->size - ra->async_size ||
                     index == ra->start + ra->size))
    {
      ra->start += ra->size;
      ra->size = next_ra_size (ra->era, ra->size, max);
      ra->async_size = ra->size;
      return window_from_state (ra, marker_hit, out);
    }

  /* Standalone small read: read as is, keep the state. */
  if (!marker_hit && !sequential)
    {
      fill_window (out, index, req_pages, 0, FALSE);
      return TRUE;
    }

  if (marker_hit && ra->era == SIM_RA_ERA_ONDEMAND_2_6_27)
    return marker_probe_2627 (ra, index, out);

  start = index;
  size = init_ra_size (req_pages, max);
  la = size > req_pages ? size - req_pages : size;
  /* Marker hit without matching state (interleaved streams): the kernel
   * does not know the old window and bets on the minimal one. */
  if (marker_hit)
    {
      start++;
      size = MIN (4 * size, max);
    }
  ra->start = start;
  ra->size = size;
  ra->async_size = la;
  return window_from_state (ra, marker_hit, out);
}

/* ---- ondemand-6.18 ---- */

/* Slots per xarray node (XA_CHUNK_SHIFT 6): a folio of a smaller order is
 * a head slot and sibling slots in a bottom node, one of a larger order an
 * entry of a node above. */
#define XA_CHUNK_SHIFT 6u
#define XA_CHUNK_SIZE  (G_GUINT64_CONSTANT (1) << XA_CHUNK_SHIFT)

/* How far cached page @index lies past the head of its folio when that
 * folio sits in a bottom node as head and sibling slots: xas_descend()
 * leaves an xarray walk started there on the head's slot, @index pages
 * behind the index it reports. */
static guint64
sibling_lag (const SimRaState *ra, guint64 index)
{
  guint order = folio_order_of (ra, index);

  if (order == 0 || order >= XA_CHUNK_SHIFT)
    return 0;
  return index & ((G_GUINT64_CONSTANT (1) << order) - 1);
}

/* Does the bottom xarray node of the @XA_CHUNK_SIZE pages from @base
 * exist, i.e. hold any cached page? */
static gboolean
node_exists (const SimRaState *ra, guint64 base)
{
  for (guint64 p = base; p < base + XA_CHUNK_SIZE; p++)
    if (is_cached (ra, p))
      return TRUE;
  return FALSE;
}

/* 6.18 page_cache_prev_miss(@index, @max) as its xas_prev() walk does it;
 * G_MAXUINT64 stands for ULONG_MAX (walked down past page 0).  Started on
 * a sibling slot, the walk reads slot index - lag and reports index; at a
 * node's first slot __xas_prev() either stays on it (the index came down
 * onto it) or leaves the node: a missing node on the left ends the walk
 * at the index reached, an existing one is entered at the index's
 * offset.  Linux 6.18.44 gives these misses (two interleaved readers on
 * one open file: tests/realdev/test-readahead-kernel.c). */
static guint64
prev_miss_618 (const SimRaState *ra, guint64 index, guint64 max)
{
  guint64 slot = index - sibling_lag (ra, index);

  for (guint64 n = 0; n < max; n++)
    {
      if (n > 0)
        {
          gboolean node_start = slot % XA_CHUNK_SIZE == 0;

          index--;
          if (!node_start)
            slot--;
          else if ((index & (XA_CHUNK_SIZE - 1)) != 0)
            {
              if (slot == 0 || !node_exists (ra, slot - XA_CHUNK_SIZE))
                return index;
              slot = slot - XA_CHUNK_SIZE + (index & (XA_CHUNK_SIZE - 1));
            }
        }
      if (!is_cached (ra, slot) || index == G_MAXUINT64)
        return index;
    }
  return index;
}

/* 6.18 page_cache_next_miss(@index, @max), the same walk upwards: from a
 * sibling slot it reads slot index - lag and reports index, one page past
 * the hole, until it leaves the node; __xas_next() then sets the slot from
 * the index again.  No hole in @max pages: index + max. */
static guint64
next_miss_618 (const SimRaState *ra, guint64 index, guint64 max)
{
  guint64 slot = index - sibling_lag (ra, index);

  for (guint64 n = 0; n < max; n++, index++)
    {
      if (!is_cached (ra, slot))
        return index;
      if (slot != index && slot % XA_CHUNK_SIZE == XA_CHUNK_SIZE - 1)
        slot = index + 1;
      else
        slot++;
    }
  return index;
}

static guint
ctz64 (guint64 v)
{
  guint n = 0;

  g_assert (v != 0);
  while ((v & 1) == 0)
    {
      v >>= 1;
      n++;
    }
  return n;
}

static guint
ilog2_64 (guint64 v)
{
  g_assert (v != 0);
  return 63u - (guint) __builtin_clzll (v);
}

/* The folio of @w that starts at @index: of w->folio_order, or of the
 * order @index is aligned to when less, shrunk to end inside the window;
 * order 0 in the fallback part. */
guint
sim_ra_window_folio_order (const SimRaWindow *w, guint64 index)
{
  guint64 limit = w->start + w->nr_pages - 1;
  guint o = w->folio_order;

  g_assert (index >= w->start && index <= limit);
  if (index >= w->order0_from)
    return 0;
  if (index & ((G_GUINT64_CONSTANT (1) << o) - 1))
    o = ctz64 (index);
  while (o > 0 && index + (G_GUINT64_CONSTANT (1) << o) - 1 > limit)
    o--;
  return o;
}

/* 6.18 page_cache_ra_order() for window @w just set in @ra: the folio
 * order asked for is ra->order, capped by the mapping's largest and by
 * ilog2 of the window, and kept in ra->order; each folio takes it or what
 * sim_ra_window_folio_order() gives, and ra_alloc_folio() marks the folio
 * that holds the mark.  A folio that would cover a cached page fails to go
 * in (-EEXIST) and the rest of the window is read in order-0 pages (the
 * fallback), marked at the mark itself.  Mappings are taken to support
 * large folios, as the block device's and ext4's and XFS's regular files
 * do in 6.18. */
static void
ra_order_618 (SimRaState *ra, SimRaWindow *w)
{
  guint64 end = w->start + w->nr_pages;

  ra->order = MIN (MIN (ra->order, SIM_RA_618_MAX_FOLIO_ORDER), ilog2_64 (w->nr_pages));
  w->folio_order = ra->order;
  if (ra->file_pages > 0 && ra->file_pages < end)
    end = MAX (ra->file_pages, w->start + 1);
  for (guint64 index = w->start; index < end;)
    {
      guint o = sim_ra_window_folio_order (w, index);
      guint64 n = G_GUINT64_CONSTANT (1) << o;

      for (guint64 p = index; p < index + n; p++)
        if (is_cached (ra, p))
          {
            w->order0_from = index;
            return;
          }
      if (w->marker >= index && w->marker < index + n)
        w->marker = index;
      index += n;
    }
}

/* page_cache_sync_ra()'s readit: a sync window asks for order-0 folios. */
static gboolean
sync_readit_618 (SimRaState *ra, SimRaWindow *out)
{
  window_from_state (ra, FALSE, out);
  ra->order = 0;
  ra_order_618 (ra, out);
  return TRUE;
}

static gboolean
sync_618 (SimRaState *ra, guint64 index, guint64 req_pages, SimRaWindow *out)
{
  guint64 max = ra->max_pages;
  guint64 contig, miss;

  /* Readahead off: forced read of the one page the reader needs. */
  if (max == 0)
    {
      fill_window (out, index, 1, 0, FALSE);
      return TRUE;
    }

  /* FMODE_RANDOM: force_page_cache_ra of what the read asks for, up to
   * max(io_pages, ra_pages), order-0 pages without a marker. */
  if (ra->random)
    {
      fill_window (out, index, MIN (req_pages, MAX (ra->io_pages, max)), 0, FALSE);
      return TRUE;
    }

  /* Start of file, oversized read, or sequential miss (prev_index is the
   * page after the previous read, so 0 is the trivial sequential case). */
  if (index == 0 || req_pages > max || index - ra->prev_index <= 1)
    {
      ra->start = index;
      ra->size = init_ra_size (req_pages, max);
      ra->async_size = ra->size > req_pages ? ra->size - req_pages
                                            : ra->size >> 1;
      return sync_readit_618 (ra, out);
    }

  /* Context probe: a stream leaves cached history behind it. */
  miss = prev_miss_618 (ra, index - 1, max);
  contig = index - miss - 1;
  if (contig <= req_pages)
    {
      fill_window (out, index, req_pages, 0, FALSE);
      return TRUE;
    }
  /* File cached from the beginning: a strong hint of a long stream. */
  if (miss == G_MAXUINT64)
    contig *= 2;
  ra->start = index;
  ra->size = MIN (contig + req_pages, max);
  ra->async_size = 1;
  return sync_readit_618 (ra, out);
}

static gboolean
async_618 (SimRaState *ra, guint64 index, guint64 req_pages, guint folio_order,
           SimRaWindow *out)
{
  guint64 max = ra->max_pages;
  guint64 end, aligned_end, align, expected;

  if (max == 0)
    return FALSE;

  /* The hit's folio may start before the mark it was given for. */
  expected = (ra->start + ra->size - ra->async_size)
             & ~((G_GUINT64_CONSTANT (1) << folio_order) - 1);
  if (index == expected)
    {
      ra->start += ra->size;
      ra->size = MAX (ra->size, next_ra_size (ra->era, ra->size, max));
    }
  else
    {
      /* Marker without matching state (interleaved streams): the first
       * missing page after @index ends the old async part; its length
       * plus this read, ramped up, is the new window. */
      guint64 start = next_miss_618 (ra, index + 1, max);

      if (start - index > max)
        return FALSE;
      ra->start = start;
      ra->size = next_ra_size (ra->era, start - index + req_pages, max);
    }

  /* Each async window asks for folios two orders bigger than the last
   * window got; its end is trimmed down to a multiple of
   * 1 << min(ra->order, ffs(max) - 1) pages. */
  ra->order += 2;
  align = G_GUINT64_CONSTANT (1) << MIN (ra->order, ctz64 (max));
  end = ra->start + ra->size;
  aligned_end = end & ~(align - 1);
  if (aligned_end > ra->start)
    ra->size -= end - aligned_end;
  ra->async_size = ra->size;
  window_from_state (ra, TRUE, out);
  ra_order_618 (ra, out);
  return TRUE;
}

gboolean
sim_ra_sync (SimRaState *ra, guint64 index, guint64 req_pages,
             SimRaWindow *out)
{
  g_assert (req_pages > 0);
  if (ra->era == SIM_RA_ERA_ONDEMAND_2_6_23 || ra->era == SIM_RA_ERA_ONDEMAND_2_6_27)
    return ondemand_2623 (ra, index, req_pages, FALSE, out);
  g_assert (ra->era == SIM_RA_ERA_ONDEMAND_6_18);
  return sync_618 (ra, index, req_pages, out);
}

gboolean
sim_ra_async (SimRaState *ra, guint64 index, guint64 req_pages, guint folio_order,
              SimRaWindow *out)
{
  g_assert (req_pages > 0);
  if (ra->era == SIM_RA_ERA_ONDEMAND_2_6_23 || ra->era == SIM_RA_ERA_ONDEMAND_2_6_27)
    return ondemand_2623 (ra, index, req_pages, TRUE, out);
  g_assert (ra->era == SIM_RA_ERA_ONDEMAND_6_18);
  return async_618 (ra, index, req_pages, folio_order, out);
}

void
sim_ra_read_done (SimRaState *ra, guint64 index, guint64 nr_pages)
{
  g_assert (nr_pages > 0);
  /* 2.6.23 keeps the last page read; 6.18 keeps prev_pos, the byte after
   * the read, whose page is the next one for page-aligned reads. */
  if (ra->era == SIM_RA_ERA_ONDEMAND_2_6_23 || ra->era == SIM_RA_ERA_ONDEMAND_2_6_27)
    ra->prev_index = index + nr_pages - 1;
  else if (ra->era == SIM_RA_ERA_ONDEMAND_6_18)
    ra->prev_index = index + nr_pages;
}

/* ---- 2.6-pre23: current and ahead windows ---- */

static void
reset_ahead_window (SimRaState *ra)
{
  /* Keeps ahead_start + ahead_size for the recheck clamp. */
  ra->ahead_size += ra->ahead_start;
  ra->ahead_start = 0;
}

static void
ra_off (SimRaState *ra)
{
  ra->start = 0;
  ra->flags = 0;
  ra->size = 0;
  reset_ahead_window (ra);
}

static guint64
legacy_next_size (SimRaState *ra)
{
  guint64 max = ra->max_pages;
  guint64 cur = ra->size;
  guint64 newsize;

  if (ra->flags & SIM_RA_FLAG_MISS)
    {
      ra->flags &= ~SIM_RA_FLAG_MISS;
      /* unsigned long: cur < 2 wraps and ends up at max. */
      newsize = MAX (cur - 2, (guint64) SIM_RA_26_MIN_PAGES);
    }
  else if (cur < max / 16)
    newsize = 4 * cur;
  else
    newsize = 2 * cur;
  return MIN (newsize, max);
}

/* blockable_page_cache_readahead() + check_ra_success(): emits the window
 * and turns readahead off after SIM_RA_26_MAX_CACHE_HIT cached pages. */
static gboolean
legacy_issue (SimRaState *ra, guint64 start, guint64 nr, gboolean block,
              SimRaWindow out[2], guint *n_out)
{
  guint64 actual = 0;

  /* No PG_readahead before 2.6.23: the reader's next call decides. */
  g_assert (*n_out < 2);
  fill_window (&out[(*n_out)++], start, nr, 0, !block);
  for (guint64 p = start; p < start + nr; p++)
    if (!is_cached (ra, p))
      actual++;
  if (actual > 0)
    {
      ra->cache_hit = 0;
      return TRUE;
    }
  ra->cache_hit += nr;
  if (ra->cache_hit >= SIM_RA_26_MAX_CACHE_HIT)
    {
      ra_off (ra);
      ra->flags |= SIM_RA_FLAG_INCACHE;
      return FALSE;
    }
  return TRUE;
}

static gboolean
make_ahead_window (SimRaState *ra, gboolean force, SimRaWindow out[2],
                   guint *n_out)
{
  gboolean block;
  gboolean ok;

  ra->ahead_size = legacy_next_size (ra);
  ra->ahead_start = ra->start + ra->size;
  block = force || ra->prev_index >= ra->ahead_start;
  ok = legacy_issue (ra, ra->ahead_start, ra->ahead_size, block, out, n_out);
  if (!ok && !force)
    reset_ahead_window (ra);
  return ok;
}

guint
sim_ra_legacy_read (SimRaState *ra, guint64 index, guint64 req_pages,
                    SimRaWindow out[2], guint64 *next_index)
{
  guint64 max = ra->max_pages;
  guint64 newsize;
  gboolean sequential;
  guint n = 0;

  g_assert (ra->era == SIM_RA_ERA_2_6_PRE23);

  /* Re-reading the page just inspected: skip it. */
  if (index == ra->prev_index && --req_pages)
    ++index;
  sequential = index == ra->prev_index + 1;
  ra->prev_index = index;
  newsize = MIN (req_pages, max);

  if (newsize == 0 || (ra->flags & SIM_RA_FLAG_INCACHE))
    goto out;
  ra->prev_index += newsize - 1;

  /* First read at the start of the file, or first sequential access. */
  if (sequential && ra->size == 0)
    {
      ra->size = init_ra_size (newsize, max);
      ra->start = index;
      if (!legacy_issue (ra, index, ra->size, TRUE, out, &n))
        goto out;
      /* Big reads: get the second I/O in flight at once. */
      if (req_pages >= max)
        make_ahead_window (ra, TRUE, out, &n);
      goto out;
    }

  if (!sequential)
    {
      ra_off (ra);
      legacy_issue (ra, index, newsize, TRUE, out, &n);
      goto out;
    }

  if (ra->ahead_start == 0 && !make_ahead_window (ra, FALSE, out, &n))
    {
      ra->prev_index = MIN (ra->prev_index,
                            ra->ahead_start + ra->ahead_size - 1);
      goto out;
    }
  /* Crossed into the ahead window: it becomes current, issue a new one. */
  if (ra->prev_index >= ra->ahead_start)
    {
      ra->start = ra->ahead_start;
      ra->size = ra->ahead_size;
      make_ahead_window (ra, FALSE, out, &n);
      ra->prev_index = MIN (ra->prev_index,
                            ra->ahead_start + ra->ahead_size - 1);
    }

out:
  *next_index = ra->prev_index + 1;
  return n;
}

void
sim_ra_legacy_miss (SimRaState *ra)
{
  ra->flags |= SIM_RA_FLAG_MISS;
  ra->flags &= ~SIM_RA_FLAG_INCACHE;
  ra->cache_hit = 0;
}

/* ---- 2.4 ---- */

void
sim_ra24_read_begin (SimRaState *ra, guint64 pos_bytes, guint64 count_bytes)
{
  guint64 index = pos_bytes / SIM_RA_PAGE_BYTES;
  guint64 offset = pos_bytes % SIM_RA_PAGE_BYTES;

  g_assert (ra->era == SIM_RA_ERA_2_4);
  /* Outside the previous readahead window: forget the context. */
  if (index > ra->raend || index + ra->rawin < ra->raend)
    {
      ra->reada_ok = FALSE;
      ra->raend = 0;
      ra->ralen = 0;
      ra->ramax = 0;
      ra->rawin = 0;
    }
  else
    ra->reada_ok = TRUE;

  /* A read within the first half page of the file: no readahead. */
  if (index == 0 && offset + count_bytes <= SIM_RA_PAGE_BYTES / 2)
    ra->ramax = 0;
  else
    {
      guint64 needed = (offset + count_bytes) / SIM_RA_PAGE_BYTES + 1;

      if (ra->ramax < needed)
        ra->ramax = needed;
      if (ra->reada_ok && ra->ramax < SIM_RA_24_MIN_PAGES)
        ra->ramax = SIM_RA_24_MIN_PAGES;
      if (ra->ramax > ra->max_pages)
        ra->ramax = ra->max_pages;
    }
}

gboolean
sim_ra24_page (SimRaState *ra, guint64 index, gboolean page_locked,
               SimRaWindow *out)
{
  guint64 end_index = ra->file_pages;
  guint64 raend = ra->raend;
  guint64 max_ahead = 0;
  guint64 ahead = 0;
  gboolean is_async = FALSE;

  g_assert (ra->era == SIM_RA_ERA_2_4);
  if (page_locked)
    {
      /* Outside the last read-ahead I/O: maybe read ahead synchronously. */
      if (ra->ralen == 0 || index >= raend || index + ra->rawin < raend)
        {
          raend = index;
          if (raend < end_index)
            max_ahead = ra->ramax;
          ra->rawin = 0;
          ra->ralen = 1;
          if (max_ahead == 0)
            {
              ra->raend = index + ra->ralen;
              ra->rawin += ra->ralen;
            }
        }
    }
  else if (ra->reada_ok && ra->ramax > 0 && raend >= 1 &&
           index <= raend && index + ra->ralen >= raend)
    {
      /* Inside the last read-ahead I/O: time for the async one, one page
       * bigger so it matches the synchronous I/O size. */
      raend -= 1;
      if (raend < end_index)
        max_ahead = ra->ramax + 1;
      if (max_ahead > 0)
        {
          ra->rawin = ra->ralen;
          ra->ralen = 0;
          is_async = TRUE;
        }
    }

  while (ahead < max_ahead && raend + ahead + 1 < end_index)
    ahead++;
  if (ahead == 0)
    return FALSE;

  ra->ralen += ahead;
  ra->rawin += ra->ralen;
  ra->raend = raend + ahead + 1;
  ra->ramax = MIN (ra->ramax * 2, ra->max_pages);
  /* No PG_readahead in 2.4: the next page's call decides. */
  fill_window (out, raend + 1, ahead, 0, is_async);
  return TRUE;
}
