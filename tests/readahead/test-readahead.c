/* test-readahead.c — readahead window decisions (sim/sim-readahead.c) for
 * 2.4, 2.6 before 2.6.23, on-demand 2.6.23, 2.6.27 and 6.18.
 *
 * Expected windows are worked out by hand from the kernel rules quoted in
 * the comments (max = 32 pages = 128 KiB unless said otherwise).  A tiny
 * page cache (a bitmap plus PG_readahead bits, I/O completes at once)
 * drives the on-demand eras the way filemap_read() does. */
#include <glib.h>
#include <string.h>

#include "tests/readahead/ra-cache.h"

static void
assert_window (const SimRaWindow *w, guint64 start, guint64 nr,
               guint64 marker, gboolean is_async)
{
  g_assert_cmpuint (w->start, ==, start);
  g_assert_cmpuint (w->nr_pages, ==, nr);
  g_assert_cmpuint (w->marker, ==, marker);
  g_assert_cmpint (w->is_async, ==, is_async);
  if (marker == SIM_RA_NO_MARKER)
    g_assert_cmpuint (w->async_size, ==, 0);
  else
    g_assert_cmpuint (w->start + w->nr_pages - w->async_size, ==, marker);
}

typedef struct {
  guint64  start;
  guint64  nr;
  guint64  marker;
  gboolean is_async;
} Expect;

static void
assert_windows (GArray *got, const Expect *exp, guint n)
{
  g_assert_cmpuint (got->len, ==, n);
  for (guint i = 0; i < n; i++)
    assert_window (&g_array_index (got, SimRaWindow, i), exp[i].start,
                   exp[i].nr, exp[i].marker, exp[i].is_async);
}

#define NO SIM_RA_NO_MARKER

static const SimRaEra ondemand_eras[] = {
  SIM_RA_ERA_ONDEMAND_2_6_23, SIM_RA_ERA_ONDEMAND_6_18,
};

static void
test_era_names (void)
{
  static const char *const names[] = {
    "2.4", "2.6-pre23", "ondemand-2.6.23", "ondemand-6.18", "ondemand-2.6.27",
  };
  g_autoptr(GError) error = NULL;
  SimRaEra era;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_assert_true (sim_ra_era_parse (names[i], &era, NULL));
      g_assert_cmpstr (sim_ra_era_name (era), ==, names[i]);
    }
  g_assert_false (sim_ra_era_parse ("2.6.18", &era, &error));
  g_assert_error (error, SIM_RA_ERROR, SIM_RA_ERROR_UNKNOWN_ERA);
  g_assert_nonnull (g_strstr_len (error->message, -1, "'2.6.18'"));
}

static void
test_pages_from_kb (void)
{
  g_assert_cmpuint (sim_ra_pages_from_kb (SIM_RA_DEFAULT_KB), ==, 32);
  g_assert_cmpuint (sim_ra_pages_from_kb (512), ==, 128);
  g_assert_cmpuint (sim_ra_pages_from_kb (16), ==, 4);
  g_assert_cmpuint (sim_ra_pages_from_kb (6), ==, 1);
  g_assert_cmpuint (sim_ra_pages_from_kb (0), ==, 0);
}

/* get_init_ra_size(n, 32): r = roundup_pow2(n); 4r if r <= 1, 2r if
 * r <= 8, else 32.  async = size - n when size > n; else 2.6.23 takes the
 * whole window (marker on the first page) and 6.18 half of it. */
static void
test_ondemand_initial (void)
{
  static const struct {
    guint64 req;
    guint64 size;
    guint64 marker_2623;
    guint64 marker_618;
  } cases[] = {
    { 1, 4, 1, 1 },      /* r=1 <= 1: 4;  async 3 */
    { 3, 8, 3, 3 },      /* r=4 <= 8: 8;  async 5 */
    { 4, 8, 4, 4 },      /* r=4 <= 8: 8;  async 4 */
    { 5, 16, 5, 5 },     /* r=8 <= 8: 16; async 11 */
    { 16, 32, 16, 16 },  /* r=16 > 8: max 32; async 16 */
    { 32, 32, 0, 16 },   /* r=32: 32; 2.6.23 async 32, 6.18 async 16 */
  };

  for (guint e = 0; e < G_N_ELEMENTS (ondemand_eras); e++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        SimRaState ra;
        SimRaWindow w;
        gboolean is_618 = ondemand_eras[e] == SIM_RA_ERA_ONDEMAND_6_18;

        sim_ra_init (&ra, ondemand_eras[e], 32);
        g_assert_true (sim_ra_sync (&ra, 0, cases[i].req, &w));
        assert_window (&w, 0, cases[i].size,
                       is_618 ? cases[i].marker_618 : cases[i].marker_2623,
                       FALSE);
        g_assert_cmpuint (ra.start, ==, 0);
        g_assert_cmpuint (ra.size, ==, cases[i].size);
      }
}

/* One-page reads from page 0, max 32.  Init 4 (marker 1); each marker hit
 * starts the next window at the old end.
 * 2.6.23: 4 < 32/16? no -> 2x = 8, 16, then min(2*16, 32) = 32, then 32
 *   stays; async size = the whole window, so each marker is the window's
 *   first page: markers 1, 4, 12, 28, 60, 92.
 * 6.18 (large folios): ra->order, the order the last window's folios got,
 *   goes up by 2; the next size is trimmed to end on a multiple of
 *   1 << min(ra->order, 5) pages, and the window's folios take order
 *   min(ra->order, ilog2(size)), smaller where unaligned:
 *   hit 1 (order 0 -> 2): 8 -> [4,12), folios of order 2;
 *   hit 4 (2 -> 4): 16 -> end 28 down to 16: [12,16), order 2;
 *   hit 12 (2 -> 4): 8 -> [16,24) (end 24 rounds to 16, not past the
 *     start: kept), order 3;
 *   hit 16 (3 -> 5): 16 -> end 40 down to 32: [24,32), order 3;
 *   hit 24: 16 -> [32,48), order 4;  hit 32: 32 -> end 80 down to 64:
 *   [48,64), order 4;  hit 48: [64,96), order 5;  hit 64: [96,128).
 *   Linux 6.18.44 issued exactly these (a dd of 4 KiB reads from a fresh
 *   loop device, tests/realdev/test-readahead-kernel.c). */
typedef struct {
  SimRaEra      era;
  const Expect *exp;
  guint         n;
} GrowthCase;

static const Expect growth_2623[] = {
  { 0, 4, 1, FALSE },
  { 4, 8, 4, TRUE },
  { 12, 16, 12, TRUE },
  { 28, 32, 28, TRUE },
  { 60, 32, 60, TRUE },
  { 92, 32, 92, TRUE },
  { 124, 32, 124, TRUE },
};

static const Expect growth_618[] = {
  { 0, 4, 1, FALSE },
  { 4, 8, 4, TRUE },
  { 12, 4, 12, TRUE },
  { 16, 8, 16, TRUE },
  { 24, 8, 24, TRUE },
  { 32, 16, 32, TRUE },
  { 48, 16, 48, TRUE },
  { 64, 32, 64, TRUE },
  { 96, 32, 96, TRUE },
  { 128, 32, 128, TRUE },
};

static const GrowthCase growth_cases[] = {
  { SIM_RA_ERA_ONDEMAND_2_6_23, growth_2623, G_N_ELEMENTS (growth_2623) },
  { SIM_RA_ERA_ONDEMAND_6_18, growth_618, G_N_ELEMENTS (growth_618) },
};

static void
test_ondemand_growth (gconstpointer data)
{
  const GrowthCase *gc = data;
  g_autoptr(Cache) c = cache_new (gc->era, 32);

  for (guint64 p = 0; p < 100; p++)
    cache_read (c, p, 1);
  assert_windows (c->windows, gc->exp, gc->n);
}

/* A stream starting at page 5 (first read random: 1 page, no state), then
 * a sequential miss at 6: init [6,10), marker 7.  At marker 7:
 *   2.6.23: [10,18), then at markers 10, 18, 34: [18,34), [34,66),
 *           [66,98) — sizes 8, 16, 32, 32.
 *   6.18:   next size 8, end 18 trimmed to a multiple of 1 << (0 + 2):
 *           [10,16), folios [10,12) and [12,16) of order 1 and 2 (10 is
 *           not 4-aligned), ra->order 2; at 10: 12 pages, order 4, end 28
 *           trimmed to 16 is not past the start: [16,28), order 3; at 16:
 *           24, order 5, end 52 down to 32: [28,32), order 2; at 28:
 *           [32,40); at 32: 16 -> [40,56); at 40: 32, end 88 down to 64:
 *           [56,64); at 56: [64,80).  Linux 6.18.44 read exactly these.
 * Reads go up to page 60. */
static void
test_ondemand_growth_unaligned (void)
{
  g_autoptr(Cache) old = cache_new (SIM_RA_ERA_ONDEMAND_2_6_23, 32);
  g_autoptr(Cache) now = cache_new (SIM_RA_ERA_ONDEMAND_6_18, 32);
  static const Expect exp_2623[] = {
    { 5, 1, NO, FALSE },
    { 6, 4, 7, FALSE },
    { 10, 8, 10, TRUE },
    { 18, 16, 18, TRUE },
    { 34, 32, 34, TRUE },
    { 66, 32, 66, TRUE },
  };
  static const Expect exp_618[] = {
    { 5, 1, NO, FALSE },
    { 6, 4, 7, FALSE },
    { 10, 6, 10, TRUE },
    { 16, 12, 16, TRUE },
    { 28, 4, 28, TRUE },
    { 32, 8, 32, TRUE },
    { 40, 16, 40, TRUE },
    { 56, 8, 56, TRUE },
    { 64, 16, 64, TRUE },
  };

  for (guint64 p = 5; p <= 60; p++)
    {
      cache_read (old, p, 1);
      cache_read (now, p, 1);
    }
  assert_windows (old->windows, exp_2623, G_N_ELEMENTS (exp_2623));
  assert_windows (now->windows, exp_618, G_N_ELEMENTS (exp_618));
}

/* 128 KiB reads from page 0.  Both: sync [0,32).
 * 2.6.23: async 32 puts the marker on page 0, hit at once; index 0 skips
 *   the "expected index" branch, so it is the interleaved bet: start 1,
 *   size min(4*32, 32) -> [1,33), marker 1 (already cached: not set).
 *   read(32): page 33 misses; 33 == old window end -> ramp: [33,65) with
 *   marker 33 (sync call), hit at once -> [65,97); read(64) hits 65 ->
 *   [97,129).
 * 6.18: async = 32 >> 1 = 16 -> marker 16 -> [32,64) m32; read(32) hits
 *   32 -> [64,96); read(64) hits 64 -> [96,128). */
static void
test_ondemand_large_reads (void)
{
  g_autoptr(Cache) old = cache_new (SIM_RA_ERA_ONDEMAND_2_6_23, 32);
  g_autoptr(Cache) now = cache_new (SIM_RA_ERA_ONDEMAND_6_18, 32);
  static const Expect exp_2623[] = {
    { 0, 32, 0, FALSE },
    { 1, 32, 1, TRUE },
    { 33, 32, 33, FALSE },
    { 65, 32, 65, TRUE },
    { 97, 32, 97, TRUE },
  };
  static const Expect exp_618[] = {
    { 0, 32, 16, FALSE },
    { 32, 32, 32, TRUE },
    { 64, 32, 64, TRUE },
    { 96, 32, 96, TRUE },
  };

  for (guint64 p = 0; p < 96; p += 32)
    {
      cache_read (old, p, 32);
      cache_read (now, p, 32);
    }
  assert_windows (old->windows, exp_2623, G_N_ELEMENTS (exp_2623));
  assert_windows (now->windows, exp_618, G_N_ELEMENTS (exp_618));
}

/* After a first read at page 0 (window [0,4)), small reads at scattered
 * pages are neither sequential (index - prev > 1) nor expected marker
 * indexes, and have no cached history (6.18 probe finds 0 pages): each is
 * read as is, no marker, and the file's window state is left alone. */
static void
test_ondemand_random (gconstpointer data)
{
  SimRaEra era = GPOINTER_TO_INT (data);
  g_autoptr(Cache) c = cache_new (era, 32);
  static const guint64 at[] = { 1000, 37, 512, 2000, 300, 3001, 77 };

  cache_read (c, 0, 1);
  g_assert_cmpuint (c->windows->len, ==, 1);
  for (guint i = 0; i < G_N_ELEMENTS (at); i++)
    {
      guint64 n = 1 + i % 2;

      cache_read (c, at[i], n);
      g_assert_cmpuint (c->windows->len, ==, i + 2);
      assert_window (&g_array_index (c->windows, SimRaWindow, i + 1),
                     at[i], n, NO, FALSE);
    }
  g_assert_cmpuint (c->ra.start, ==, 0);
  g_assert_cmpuint (c->ra.size, ==, 4);
}

/* read_ahead_kb = 512 (max 128): init(1) = 4 (1 <= 4); 4 < 8 -> 16;
 * 16 >= 8 -> 32, 64, 128, 128, 128.  2.6.23 reads them whole (markers 1,
 * 4, 20, 52, 116, 244 are read).  6.18 trims each end to the alignment of
 * its folio order (ra->order + 2, ffs(128) - 1 = 7 at most): [20,52)
 * ends at 48, then 16, 32 and 64 pages line up: [48,64), [64,96),
 * [96,128), [128,192), [192,256), [256,384); Linux 6.18.44 read these.
 * read_ahead_kb = 16 (max 4): init(1): 1 > 4/32 = 0, 1 <= 1 -> 2, marker
 * 1; then 2 < 0? no -> 4.  Reading pages 0..11, 2.6.23: [2,6), [6,10),
 * [10,14), [14,18).  6.18 trims the end 6 of [2,6) to a multiple of 4
 * (ffs(4) - 1 = 2): [2,4); then max(2, 4) = 4: [4,8), [8,12), [12,16). */
static void
test_ondemand_read_ahead_kb (gconstpointer data)
{
  SimRaEra era = GPOINTER_TO_INT (data);
  g_autoptr(Cache) big = cache_new (era, sim_ra_pages_from_kb (512));
  g_autoptr(Cache) small = cache_new (era, sim_ra_pages_from_kb (16));
  static const Expect exp_big_2623[] = {
    { 0, 4, 1, FALSE },
    { 4, 16, 4, TRUE },
    { 20, 32, 20, TRUE },
    { 52, 64, 52, TRUE },
    { 116, 128, 116, TRUE },
    { 244, 128, 244, TRUE },
    { 372, 128, 372, TRUE },
  };
  static const Expect exp_big_618[] = {
    { 0, 4, 1, FALSE },
    { 4, 16, 4, TRUE },
    { 20, 28, 20, TRUE },
    { 48, 16, 48, TRUE },
    { 64, 32, 64, TRUE },
    { 96, 32, 96, TRUE },
    { 128, 64, 128, TRUE },
    { 192, 64, 192, TRUE },
    { 256, 128, 256, TRUE },
  };
  static const Expect exp_small_2623[] = {
    { 0, 2, 1, FALSE },
    { 2, 4, 2, TRUE },
    { 6, 4, 6, TRUE },
    { 10, 4, 10, TRUE },
    { 14, 4, 14, TRUE },
  };
  static const Expect exp_small_618[] = {
    { 0, 2, 1, FALSE },
    { 2, 2, 2, TRUE },
    { 4, 4, 4, TRUE },
    { 8, 4, 8, TRUE },
    { 12, 4, 12, TRUE },
  };

  for (guint64 p = 0; p < 250; p++)
    cache_read (big, p, 1);
  for (guint64 p = 0; p < 12; p++)
    cache_read (small, p, 1);
  if (era == SIM_RA_ERA_ONDEMAND_6_18)
    assert_windows (big->windows, exp_big_618, G_N_ELEMENTS (exp_big_618));
  else
    assert_windows (big->windows, exp_big_2623, G_N_ELEMENTS (exp_big_2623));
  if (era == SIM_RA_ERA_ONDEMAND_6_18)
    assert_windows (small->windows, exp_small_618,
                    G_N_ELEMENTS (exp_small_618));
  else
    assert_windows (small->windows, exp_small_2623,
                    G_N_ELEMENTS (exp_small_2623));
}

/* read_ahead_kb = 0: 2.6.23 does no readahead (the reader's readpage gets
 * the page); 6.18 forces a one-page read. */
static void
test_ondemand_no_readahead (void)
{
  SimRaState ra;
  SimRaWindow w;

  sim_ra_init (&ra, SIM_RA_ERA_ONDEMAND_2_6_23, sim_ra_pages_from_kb (0));
  g_assert_false (sim_ra_sync (&ra, 0, 8, &w));
  g_assert_false (sim_ra_async (&ra, 3, 8, 0, &w));

  sim_ra_init (&ra, SIM_RA_ERA_ONDEMAND_6_18, 0);
  g_assert_true (sim_ra_sync (&ra, 0, 8, &w));
  assert_window (&w, 0, 1, NO, FALSE);
  g_assert_false (sim_ra_async (&ra, 3, 8, 0, &w));
}

/* posix_fadvise on the open file (mm/fadvise.c generic_fadvise), with
 * read_ahead_kb 128 (32 pages) and 32 KiB requests (io_pages 8), then a
 * 32-page read at page 0:
 *   NORMAL: max 32, init_ra_size(32, 32) = 32, async 32 >> 1 = 16;
 *   SEQUENTIAL: ra_pages doubled, init_ra_size(32, 64) = 64, async
 *     64 - 32 = 32;
 *   RANDOM: 6.18 FMODE_RANDOM, force_page_cache_ra of the 32 pages asked
 *     for (cap max(io_pages, ra_pages) = 32), no marker; 2.6.27: ra_pages
 *     0, nothing read ahead;
 *   2.4 has no fadvise: 31 pages as ever. */
typedef struct {
  const char *name;
  SimRaEra    era;
  SimRaAdvice advice;
  guint64     max_pages;
  gboolean    reads;
  Expect      window;
} FadviseCase;

static const FadviseCase fadvise_cases[] = {
  { "6.18-normal", SIM_RA_ERA_ONDEMAND_6_18, SIM_RA_ADVICE_NORMAL, 32, TRUE, { 0, 32, 16, FALSE } },
  { "6.18-sequential", SIM_RA_ERA_ONDEMAND_6_18, SIM_RA_ADVICE_SEQUENTIAL, 64, TRUE,
    { 0, 64, 32, FALSE } },
  { "6.18-random", SIM_RA_ERA_ONDEMAND_6_18, SIM_RA_ADVICE_RANDOM, 32, TRUE, { 0, 32, NO, FALSE } },
  { "2.6.27-sequential", SIM_RA_ERA_ONDEMAND_2_6_27, SIM_RA_ADVICE_SEQUENTIAL, 64, TRUE,
    { 0, 64, 32, FALSE } },
  { "2.6.27-random", SIM_RA_ERA_ONDEMAND_2_6_27, SIM_RA_ADVICE_RANDOM, 0, FALSE, { 0 } },
  { "2.4-sequential", SIM_RA_ERA_2_4, SIM_RA_ADVICE_SEQUENTIAL, SIM_RA_24_MAX_PAGES, FALSE, { 0 } },
};

static void
test_fadvise (gconstpointer data)
{
  const FadviseCase *c = data;
  SimRaState ra;
  SimRaWindow w;
  sim_ra_init (&ra, c->era, c->era == SIM_RA_ERA_2_4 ? SIM_RA_24_MAX_PAGES : 32);
  sim_ra_fadvise (&ra, c->advice, 32, 8);
  g_assert_cmpuint (ra.max_pages, ==, c->max_pages);
  if (c->era == SIM_RA_ERA_2_4)
    return;
  g_assert_cmpint (sim_ra_sync (&ra, 0, 32, &w), ==, c->reads);
  if (c->reads)
    assert_window (&w, c->window.start, c->window.nr, c->window.marker, c->window.is_async);
}

/* FMODE_RANDOM in 6.18: every miss reads what is asked, wherever it is,
 * up to max(io_pages, ra_pages) pages, and nothing is marked. */
static void
test_fadvise_random_618 (void)
{
  SimRaState ra;
  SimRaWindow w;
  sim_ra_init (&ra, SIM_RA_ERA_ONDEMAND_6_18, 32);
  sim_ra_fadvise (&ra, SIM_RA_ADVICE_RANDOM, 32, 320);
  g_assert_true (sim_ra_sync (&ra, 1000, 4, &w));
  assert_window (&w, 1000, 4, NO, FALSE);
  sim_ra_read_done (&ra, 1000, 4);
  /* sequential now, but still only what is asked */
  g_assert_true (sim_ra_sync (&ra, 1004, 4, &w));
  assert_window (&w, 1004, 4, NO, FALSE);
  g_assert_true (sim_ra_sync (&ra, 2000, 1000, &w));
  assert_window (&w, 2000, 320, NO, FALSE);
  /* NORMAL takes it back */
  sim_ra_fadvise (&ra, SIM_RA_ADVICE_NORMAL, 32, 320);
  g_assert_true (sim_ra_sync (&ra, 0, 4, &w));
  g_assert_cmpuint (w.nr_pages, >, 4);
}

static void
test_advice_names (void)
{
  for (SimRaAdvice a = SIM_RA_ADVICE_NORMAL; a <= SIM_RA_ADVICE_RANDOM; a++)
    {
      SimRaAdvice back;
      g_assert_true (sim_ra_advice_parse (sim_ra_advice_name (a), &back, NULL));
      g_assert_cmpint (back, ==, a);
    }
  g_autoptr (GError) error = NULL;
  SimRaAdvice got;
  g_assert_false (sim_ra_advice_parse ("willneed", &got, &error));
  g_assert_error (error, SIM_RA_ERROR, SIM_RA_ERROR_UNKNOWN_ADVICE);
  g_assert_nonnull (strstr (error->message, "'willneed'"));
}

/* read_ahead_kb lowered to 64 (max 16) while a stream holds a 32-page
 * window; the windows after it:
 *   2.6.23, lowered after page 12 with [28,60) up: at marker 28
 *     min(2*32, 16) = 16 -> [60,76), then [76,92);
 *   6.18, lowered after page 63 with [64,96) up (its large-folio windows
 *     reach 32 pages later): at marker 64 max(32, next(32, 16) = 16) = 32,
 *     order 5 + 2 aligned to ffs(16) - 1 = 4: [96,128), then [128,160). */
typedef struct {
  SimRaEra era;
  guint64  lower_after;   /* last page read with max 32 */
  guint64  last;          /* last page read */
  Expect   after[2];
} LoweredCase;

static const LoweredCase lowered_cases[] = {
  { SIM_RA_ERA_ONDEMAND_2_6_23, 12, 60, { { 60, 16, 60, TRUE }, { 76, 16, 76, TRUE } } },
  { SIM_RA_ERA_ONDEMAND_6_18, 63, 100, { { 96, 32, 96, TRUE }, { 128, 32, 128, TRUE } } },
};

static void
test_ondemand_max_lowered (gconstpointer data)
{
  const LoweredCase *lc = data;
  g_autoptr(Cache) c = cache_new (lc->era, 32);
  guint before;

  for (guint64 p = 0; p <= lc->lower_after; p++)
    cache_read (c, p, 1);
  before = c->windows->len;
  sim_ra_set_max_pages (&c->ra, sim_ra_pages_from_kb (64));
  for (guint64 p = lc->lower_after + 1; p <= lc->last; p++)
    cache_read (c, p, 1);
  g_assert_cmpuint (c->windows->len, ==, before + 2);
  for (guint i = 0; i < 2; i++)
    assert_window (&g_array_index (c->windows, SimRaWindow, before + i), lc->after[i].start,
                   lc->after[i].nr, lc->after[i].marker, lc->after[i].is_async);
}

/* Two streams on one open file, alternating one-page reads: A at 0..63,
 * B at 1000..1063.
 * 2.6.23: when A hits a marker the state is A's (B's reads are random and
 *   leave it alone), so A ramps up as alone: [0,4) m1, [4,12) m4, [12,28)
 *   m12, [28,60) m28, [60,92) m60, [92,124) m92; B gets 64 one-page reads.
 * 6.18: B's third miss (1002) finds 1000..1001 cached: contig 2 > 1 ->
 *   [1002,1005), async 1, marker 1004, and the state becomes B's.  From
 *   then on a marker hit mostly sees the other stream's state and probes
 *   for the next miss, with the xarray walk's quirk: started one page into
 *   a large folio it reports one page past the hole.  A at 4 (folio [4,8)
 *   of order 2): hole 12 reported as 13 -> 13 - 4 + 1 = 10 -> 20, ra->order
 *   0 + 2, end 33 down to 32: [13,32); page 12 is then a sync miss whose
 *   backward probe, started three pages into folio [8,12), stops at 2:
 *   contig 9 -> [12,22), marker 21 already cached; A at 13 (order 0)
 *   probes from 14: hole 32 -> [32,64).  B the same way: [1005,1008),
 *   [1008,1014), [1014,1024), [1025,1040) past the hole 1024, a sync
 *   [1024,1042) reading 1024 and 1040..1041, then [1042,1072), [1072,1104).
 *   Linux 6.18.44 issued exactly this I/O (tests/realdev/test-readahead-kernel.c).
 */
static void
test_ondemand_interleaved (gconstpointer data)
{
  SimRaEra era = GPOINTER_TO_INT (data);
  g_autoptr(Cache) c = cache_new (era, 32);
  g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (SimRaWindow));
  g_autoptr(GArray) b = g_array_new (FALSE, FALSE, sizeof (SimRaWindow));
  static const Expect exp_a_2623[] = {
    { 0, 4, 1, FALSE },
    { 4, 8, 4, TRUE },
    { 12, 16, 12, TRUE },
    { 28, 32, 28, TRUE },
    { 60, 32, 60, TRUE },
    { 92, 32, 92, TRUE },
  };
  static const Expect exp_a_618[] = {
    { 0, 4, 1, FALSE },
    { 4, 8, 4, TRUE },
    { 13, 19, 13, TRUE },
    { 12, 10, 21, FALSE },
    { 32, 32, 32, TRUE },
  };
  static const Expect exp_b_618[] = {
    { 1000, 1, NO, FALSE },
    { 1001, 1, NO, FALSE },
    { 1002, 3, 1004, FALSE },
    { 1005, 3, 1005, TRUE },
    { 1008, 6, 1008, TRUE },
    { 1014, 10, 1014, TRUE },
    { 1025, 15, 1025, TRUE },
    { 1024, 18, 1041, FALSE },
    { 1042, 30, 1042, TRUE },
    { 1072, 32, 1072, TRUE },
  };

  for (guint64 i = 0; i < 64; i++)
    {
      cache_read (c, i, 1);
      cache_read (c, 1000 + i, 1);
    }
  for (guint i = 0; i < c->windows->len; i++)
    {
      SimRaWindow *w = &g_array_index (c->windows, SimRaWindow, i);

      g_array_append_val (w->start < 1000 ? a : b, *w);
    }
  if (era == SIM_RA_ERA_ONDEMAND_6_18)
    {
      assert_windows (a, exp_a_618, G_N_ELEMENTS (exp_a_618));
      assert_windows (b, exp_b_618, G_N_ELEMENTS (exp_b_618));
    }
  else
    {
      assert_windows (a, exp_a_2623, G_N_ELEMENTS (exp_a_2623));
      g_assert_cmpuint (b->len, ==, 64);
      for (guint i = 0; i < b->len; i++)
        assert_window (&g_array_index (b, SimRaWindow, i), 1000 + i, 1, NO,
                       FALSE);
    }
}

/* 2.6.23 marker hit with no matching state (here: a fresh state, as after
 * another stream took it over): bet on the minimal window, start index+1,
 * size min(4 * init(req), max), lookahead init - req.  req 1: init 4,
 * la 3 -> [11,27), marker 27 - 3 = 24. */
static void
test_ondemand_2623_marker_bet (void)
{
  SimRaState ra;
  SimRaWindow w;

  sim_ra_init (&ra, SIM_RA_ERA_ONDEMAND_2_6_23, 32);
  sim_ra_read_done (&ra, 500, 1);
  g_assert_true (sim_ra_async (&ra, 10, 1, 0, &w));
  assert_window (&w, 11, 16, 24, TRUE);
}

/* 2.6.27 marker hit without matching state: the first missing page at or
 * after the hit, within max + 1 pages, starts the window.
 * - Pages 10..17 cached, a stale state (last read at 500, no window):
 *   async at 10 -> hole 18, size next(18 - 10 = 8) = 2 x 8 = 16 (8 is not
 *   below 32/16), all async -> [18,34) marker 18.
 * - Pages 10..50 cached: the hole at 51 is 41 > 32 pages away -> no
 *   readahead.
 * - 128 KiB reads from page 0: sync [0,32) with async 32 puts the marker
 *   on page 0, hit at once (index 0 is never "expected"): hole 32, size
 *   next(32) = min(64, 32) -> [32,64) m32; then expected hits at 32, 64. */
static void
test_ondemand_2627_marker_probe (void)
{
  g_autoptr(Cache) c = cache_new (SIM_RA_ERA_ONDEMAND_2_6_27, 32);
  SimRaWindow w;

  for (guint p = 10; p < 18; p++)
    c->cached[p] = TRUE;
  sim_ra_read_done (&c->ra, 500, 1);
  g_assert_true (sim_ra_async (&c->ra, 10, 1, 0, &w));
  assert_window (&w, 18, 16, 18, TRUE);

  for (guint p = 10; p <= 50; p++)
    c->cached[p] = TRUE;
  sim_ra_read_done (&c->ra, 500, 1);
  g_assert_false (sim_ra_async (&c->ra, 10, 1, 0, &w));

  g_autoptr(Cache) big = cache_new (SIM_RA_ERA_ONDEMAND_2_6_27, 32);
  static const Expect exp[] = {
    { 0, 32, 0, FALSE },
    { 32, 32, 32, TRUE },
    { 64, 32, 64, TRUE },
    { 96, 32, 96, TRUE },
  };
  for (guint64 p = 0; p < 96; p += 32)
    cache_read (big, p, 32);
  assert_windows (big->windows, exp, G_N_ELEMENTS (exp));
}

/* 6.18 context probe: page 40 misses after a random read at 300 with
 * pages 0..39 cached -> the scan of max = 32 pages finds no gap: contig
 * 32, not from the start of the file; size min(32 + 1, 32) = 32, async 1,
 * marker 71. */
static void
test_ondemand_618_history (void)
{
  g_autoptr(Cache) c = cache_new (SIM_RA_ERA_ONDEMAND_6_18, 32);
  SimRaWindow w;

  for (guint p = 0; p < 40; p++)
    c->cached[p] = TRUE;
  sim_ra_read_done (&c->ra, 300, 1);
  g_assert_true (sim_ra_sync (&c->ra, 40, 1, &w));
  assert_window (&w, 40, 32, 71, FALSE);

  /* Only 10..39 cached below page 40 (a gap at 9): contig 30, not from
   * the start, size min(30 + 1, 32) = 31. */
  c->cached[9] = FALSE;
  sim_ra_read_done (&c->ra, 300, 1);
  g_assert_true (sim_ra_sync (&c->ra, 40, 1, &w));
  assert_window (&w, 40, 31, 70, FALSE);

  /* Pages 0..5 cached before page 6 and max 32: the probe reaches page 0
   * with 6 pages: 12, size min(12 + 1, 32) = 13. */
  sim_ra_read_done (&c->ra, 300, 1);
  for (guint p = 0; p < 40; p++)
    c->cached[p] = p < 6;
  g_assert_true (sim_ra_sync (&c->ra, 6, 1, &w));
  assert_window (&w, 6, 13, 18, FALSE);
}

/* 2.6-pre23, one-page reads from page 0, max 32, every read calls
 * page_cache_readahead once.  Read 0: first sequential -> current window
 * init(1) = 4 [0,4).  Read 1: no ahead window yet -> next(4) = 2x = 8,
 * ahead [4,12), not blocking (prev 1 < 4).  Read 4 crosses into it: it
 * becomes current, ahead = next(8) = 16 [12,28); read 12 -> [28,60);
 * read 28 -> [60,92).  A thrash miss then shrinks the next ahead window
 * by 2: read 60 -> max(32 - 2, 4) = 30 [92,122); read 92 -> back to
 * min(2 * 30, 32) = 32 [122,154). */
static void
test_legacy_windows (void)
{
  SimRaState ra;
  SimRaWindow out[2];
  guint64 next = 0;
  guint n;
  g_autoptr(GArray) got = g_array_new (FALSE, FALSE, sizeof (SimRaWindow));
  static const Expect exp[] = {
    { 0, 4, NO, FALSE },
    { 4, 8, NO, TRUE },
    { 12, 16, NO, TRUE },
    { 28, 32, NO, TRUE },
    { 60, 32, NO, TRUE },
    { 92, 30, NO, TRUE },
    { 122, 32, NO, TRUE },
  };

  sim_ra_init (&ra, SIM_RA_ERA_2_6_PRE23, 32);
  for (guint64 p = 0; p <= 92; p++)
    {
      if (p == 40)
        sim_ra_legacy_miss (&ra);
      n = sim_ra_legacy_read (&ra, p, 1, out, &next);
      g_assert_cmpuint (next, ==, p + 1);
      g_array_append_vals (got, out, n);
    }
  assert_windows (got, exp, G_N_ELEMENTS (exp));
}

/* 2.6-pre23 random reads turn readahead off and read the request as is
 * (up to max); the next sequential read restarts at init size.  Pre-2.6.23
 * windows carry no marker.  A 128 KiB
 * read at 0 gets current [0,32) and, because req >= max, a blocking ahead
 * window [32,64) at once; the next 128 KiB read crosses into it and gets
 * an async [64,96). */
static void
test_legacy_random_and_large (void)
{
  SimRaState ra;
  SimRaWindow out[2];
  guint64 next;

  sim_ra_init (&ra, SIM_RA_ERA_2_6_PRE23, 32);
  g_assert_cmpuint (sim_ra_legacy_read (&ra, 1000, 2, out, &next), ==, 1);
  assert_window (&out[0], 1000, 2, NO, FALSE);
  g_assert_cmpuint (next, ==, 1002);
  g_assert_cmpuint (sim_ra_legacy_read (&ra, 50, 100, out, &next), ==, 1);
  assert_window (&out[0], 50, 32, NO, FALSE);
  g_assert_cmpuint (ra.size, ==, 0);
  /* 50 + 32 = 82 is where the reader comes back: sequential with size 0
   * -> init(32) = 32 [82,114), and 68 >= max -> forced ahead [114,146). */
  g_assert_cmpuint (next, ==, 82);
  g_assert_cmpuint (sim_ra_legacy_read (&ra, 82, 68, out, &next), ==, 2);
  assert_window (&out[0], 82, 32, NO, FALSE);
  assert_window (&out[1], 114, 32, NO, FALSE);
  g_assert_cmpuint (next, ==, 114);

  sim_ra_init (&ra, SIM_RA_ERA_2_6_PRE23, 32);
  g_assert_cmpuint (sim_ra_legacy_read (&ra, 0, 32, out, &next), ==, 2);
  assert_window (&out[0], 0, 32, NO, FALSE);
  assert_window (&out[1], 32, 32, NO, FALSE);
  g_assert_cmpuint (next, ==, 32);
  g_assert_cmpuint (sim_ra_legacy_read (&ra, 32, 32, out, &next), ==, 1);
  assert_window (&out[0], 64, 32, NO, TRUE);
  g_assert_cmpuint (next, ==, 64);
}

static gboolean
all_cached (guint64 index, gpointer user_data)
{
  (void) index;
  (void) user_data;
  return TRUE;
}

/* 2.6-pre23 on a fully cached file: windows at reads 0, 1, 4, 12, 28,
 * 60, ..., 220 add 4 + 8 + 16 + 32 * 8 = 284 pages found cached; 252 < 256
 * before the last, so the 11th window turns readahead off (INCACHE). */
static void
test_legacy_incache (void)
{
  SimRaState ra;
  SimRaWindow out[2];
  guint64 next;
  guint total = 0;

  sim_ra_init (&ra, SIM_RA_ERA_2_6_PRE23, 32);
  sim_ra_set_cache_probe (&ra, all_cached, NULL);
  for (guint64 p = 0; p < 400; p++)
    {
      total += sim_ra_legacy_read (&ra, p, 1, out, &next);
      if (p == 219)
        g_assert_cmpuint (ra.flags & SIM_RA_FLAG_INCACHE, ==, 0);
    }
  g_assert_cmpuint (total, ==, 11);
  g_assert_cmpuint (ra.flags & SIM_RA_FLAG_INCACHE, !=, 0);
  sim_ra_legacy_miss (&ra);
  g_assert_cmpuint (ra.flags & SIM_RA_FLAG_INCACHE, ==, 0);
}

/* 2.4 one-page reads from 0 (page 0 missing -> locked; later pages were
 * read ahead and are up to date).  ramax: needed 2 -> min 3.
 *   read 0 (locked): sync ahead 3 [1,4); ralen 4, rawin 4, raend 4, ramax 6
 *   read 1: 1 + 4 >= 4 -> async ramax+1 = 7 [4,11); ralen 7, raend 11, ramax 12
 *   read 4: 4 + 7 >= 11 -> 13 [11,24); ralen 13, raend 24, ramax 24
 *   read 11: 11 + 13 >= 24 -> 25 [24,49); raend 49, ramax min(48, 31) = 31
 *   read 24: 24 + 25 >= 49 -> 32 [49,81); read 49 -> 32 [81,113).
 * A seek to page 500 forgets the context: ramax = needed = 2 (no minimum
 * without reada_ok): [501,503), ramax 4; read 501 -> 5 [503,508). */
static void
test_24_window (void)
{
  SimRaState ra;
  SimRaWindow w;
  g_autoptr(GArray) got = g_array_new (FALSE, FALSE, sizeof (SimRaWindow));
  static const Expect exp[] = {
    { 1, 3, NO, FALSE },
    { 4, 7, NO, TRUE },
    { 11, 13, NO, TRUE },
    { 24, 25, NO, TRUE },
    { 49, 32, NO, TRUE },
    { 81, 32, NO, TRUE },
    { 501, 2, NO, FALSE },
    { 503, 5, NO, TRUE },
  };

  sim_ra_init (&ra, SIM_RA_ERA_2_4, SIM_RA_24_MAX_PAGES);
  for (guint64 p = 0; p < 60; p++)
    {
      sim_ra24_read_begin (&ra, p * SIM_RA_PAGE_BYTES, SIM_RA_PAGE_BYTES);
      if (sim_ra24_page (&ra, p, p == 0, &w))
        g_array_append_val (got, w);
    }
  g_assert_cmpuint (ra.ramax, ==, 31);
  for (guint64 p = 500; p < 502; p++)
    {
      sim_ra24_read_begin (&ra, p * SIM_RA_PAGE_BYTES, SIM_RA_PAGE_BYTES);
      if (sim_ra24_page (&ra, p, p == 500, &w))
        g_array_append_val (got, w);
      if (p == 500)
        g_assert_cmpuint (ra.ramax, ==, 4);
    }
  assert_windows (got, exp, G_N_ELEMENTS (exp));
}

/* 2.4 edge rules: a read within the first half page of the file gets no
 * readahead; a 64 KiB read at 0 needs 17 pages -> [1,18); readahead stops
 * at EOF (6-page file: [1,4) then only [4,6)); a locked page inside the
 * last read-ahead I/O starts nothing. */
static void
test_24_edges (void)
{
  SimRaState ra;
  SimRaWindow w;

  sim_ra_init (&ra, SIM_RA_ERA_2_4, SIM_RA_24_MAX_PAGES);
  sim_ra24_read_begin (&ra, 0, 100);
  g_assert_false (sim_ra24_page (&ra, 0, TRUE, &w));

  sim_ra_init (&ra, SIM_RA_ERA_2_4, SIM_RA_24_MAX_PAGES);
  sim_ra24_read_begin (&ra, 0, 16 * SIM_RA_PAGE_BYTES);
  g_assert_true (sim_ra24_page (&ra, 0, TRUE, &w));
  assert_window (&w, 1, 17, NO, FALSE);
  g_assert_cmpuint (ra.ramax, ==, 31);

  sim_ra_init (&ra, SIM_RA_ERA_2_4, SIM_RA_24_MAX_PAGES);
  sim_ra_set_file_pages (&ra, 6);
  sim_ra24_read_begin (&ra, 0, SIM_RA_PAGE_BYTES);
  g_assert_true (sim_ra24_page (&ra, 0, TRUE, &w));
  assert_window (&w, 1, 3, NO, FALSE);
  sim_ra24_read_begin (&ra, SIM_RA_PAGE_BYTES, SIM_RA_PAGE_BYTES);
  /* Page 1 still under I/O: inside [raend - rawin, raend), nothing. */
  g_assert_false (sim_ra24_page (&ra, 1, TRUE, &w));
  g_assert_true (sim_ra24_page (&ra, 1, FALSE, &w));
  assert_window (&w, 4, 2, NO, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/readahead/era-names", test_era_names);
  g_test_add_func ("/readahead/pages-from-kb", test_pages_from_kb);
  g_test_add_func ("/readahead/ondemand/initial-window", test_ondemand_initial);
  g_test_add_data_func ("/readahead/ondemand-2.6.23/growth", &growth_cases[0],
                        test_ondemand_growth);
  g_test_add_data_func ("/readahead/ondemand-6.18/growth", &growth_cases[1],
                        test_ondemand_growth);
  g_test_add_func ("/readahead/ondemand/growth-unaligned",
                   test_ondemand_growth_unaligned);
  g_test_add_func ("/readahead/ondemand/large-reads",
                   test_ondemand_large_reads);
  g_test_add_data_func ("/readahead/ondemand-2.6.23/random",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_2_6_23),
                        test_ondemand_random);
  g_test_add_data_func ("/readahead/ondemand-6.18/random",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_6_18),
                        test_ondemand_random);
  g_test_add_data_func ("/readahead/ondemand-2.6.23/read-ahead-kb",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_2_6_23),
                        test_ondemand_read_ahead_kb);
  g_test_add_data_func ("/readahead/ondemand-6.18/read-ahead-kb",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_6_18),
                        test_ondemand_read_ahead_kb);
  g_test_add_func ("/readahead/ondemand/no-readahead",
                   test_ondemand_no_readahead);
  g_test_add_data_func ("/readahead/ondemand-2.6.23/max-lowered", &lowered_cases[0],
                        test_ondemand_max_lowered);
  g_test_add_data_func ("/readahead/ondemand-6.18/max-lowered", &lowered_cases[1],
                        test_ondemand_max_lowered);
  g_test_add_data_func ("/readahead/ondemand-2.6.23/interleaved",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_2_6_23),
                        test_ondemand_interleaved);
  g_test_add_data_func ("/readahead/ondemand-6.18/interleaved",
                        GINT_TO_POINTER (SIM_RA_ERA_ONDEMAND_6_18),
                        test_ondemand_interleaved);
  g_test_add_func ("/readahead/ondemand-2.6.23/marker-bet",
                   test_ondemand_2623_marker_bet);
  g_test_add_func ("/readahead/ondemand-2.6.27/marker-probe",
                   test_ondemand_2627_marker_probe);
  g_test_add_func ("/readahead/ondemand-6.18/history-probe",
                   test_ondemand_618_history);
  for (guint i = 0; i < G_N_ELEMENTS (fadvise_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/readahead/fadvise/%s", fadvise_cases[i].name);
      g_test_add_data_func (path, &fadvise_cases[i], test_fadvise);
    }
  g_test_add_func ("/readahead/fadvise/random-6.18", test_fadvise_random_618);
  g_test_add_func ("/readahead/fadvise/names", test_advice_names);
  g_test_add_func ("/readahead/2.6-pre23/windows", test_legacy_windows);
  g_test_add_func ("/readahead/2.6-pre23/random-and-large",
                   test_legacy_random_and_large);
  g_test_add_func ("/readahead/2.6-pre23/incache", test_legacy_incache);
  g_test_add_func ("/readahead/2.4/window", test_24_window);
  g_test_add_func ("/readahead/2.4/edges", test_24_edges);

  return g_test_run ();
}
