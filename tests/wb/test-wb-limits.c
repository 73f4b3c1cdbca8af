/* test-wb-limits.c — unit tests for models/wb/wb-limits.c, the writeback
 * threshold arithmetic of each kernel era.  Expected values are worked out
 * by hand in the comments (4 KiB pages throughout), so a change in any
 * truncation or shift order shows up as a failure.
 */
#include <glib.h>
#include <string.h>

#include "models/wb/wb-limits.h"

/* ---- helpers ---- */

static void
test_helpers (void)
{
  g_assert_cmpuint (wb_ilog2 (1), ==, 0);
  g_assert_cmpuint (wb_ilog2 (5999), ==, 12);
  g_assert_cmpuint (wb_ilog2 (8192), ==, 13);
  g_assert_cmpuint (wb_roundup_pow_of_two (3000), ==, 4096);
  g_assert_cmpuint (wb_roundup_pow_of_two (4096), ==, 4096);
  g_assert_cmpuint (wb_roundup_pow_of_two (1), ==, 1);
  /* 500 jiffies at HZ=100 is kupdated's 5 s; 8 at HZ=250 is 32 ms. */
  g_assert_cmpuint (wb_jiffies_to_ns (500, 100), ==, G_GUINT64_CONSTANT (5000000000));
  g_assert_cmpuint (wb_jiffies_to_ns (8, 250), ==, 32000000);
}

/* ---- 2.4 bdflush ---- */

static void
test_bdflush_defaults (void)
{
  WbBdflushParams p;

  wb_bdflush_params_init_2_4_27 (&p, 100);
  g_assert_cmpint (p.nfract_pct, ==, 30);
  g_assert_cmpint (p.ndirty_buffers, ==, 500);
  g_assert_cmpint (p.interval_jiffies, ==, 500);
  g_assert_cmpint (p.age_buffer_jiffies, ==, 3000);
  g_assert_cmpint (p.nfract_sync_pct, ==, 60);
  g_assert_cmpint (p.nfract_stop_bdflush_pct, ==, 20);
  g_assert_cmpint (p.dummy5, ==, 0);

  wb_bdflush_params_init_2_4_18 (&p, 1000);
  g_assert_cmpint (p.nfract_pct, ==, 40);
  g_assert_cmpint (p.ndirty_buffers, ==, 0);
  g_assert_cmpint (p.interval_jiffies, ==, 5000);
  g_assert_cmpint (p.age_buffer_jiffies, ==, 30000);
  g_assert_cmpint (p.nfract_sync_pct, ==, 60);
  g_assert_cmpint (p.nfract_stop_bdflush_pct, ==, 0);

  g_assert_cmpstr (wb_bdflush_param_name (0), ==, "nfract");
  g_assert_cmpstr (wb_bdflush_param_name (4), ==, "interval");
  g_assert_cmpstr (wb_bdflush_param_name (7), ==, "nfract_stop_bdflush");
}

static void
test_bdflush_parse_valid (void)
{
  g_autoptr (GError) error = NULL;
  WbBdflushParams p;

  wb_bdflush_params_init_2_4_27 (&p, 100);
  g_assert_true (wb_bdflush_params_parse ("2 500 0 0 500 3000 3 1 0", &p, &error));
  g_assert_no_error (error);
  g_assert_cmpint (p.nfract_pct, ==, 2);
  g_assert_cmpint (p.ndirty_buffers, ==, 500);
  g_assert_cmpint (p.dummy2, ==, 0);
  g_assert_cmpint (p.dummy3, ==, 0);
  g_assert_cmpint (p.interval_jiffies, ==, 500);
  g_assert_cmpint (p.age_buffer_jiffies, ==, 3000);
  g_assert_cmpint (p.nfract_sync_pct, ==, 3);
  g_assert_cmpint (p.nfract_stop_bdflush_pct, ==, 1);
  g_assert_cmpint (p.dummy5, ==, 0);

  /* A shorter tuple sets only the leading fields, like the sysctl; tabs,
   * newlines and extra blanks are whitespace. */
  wb_bdflush_params_init_2_4_27 (&p, 100);
  g_assert_true (wb_bdflush_params_parse ("  40\t1000\n", &p, &error));
  g_assert_no_error (error);
  g_assert_cmpint (p.nfract_pct, ==, 40);
  g_assert_cmpint (p.ndirty_buffers, ==, 1000);
  g_assert_cmpint (p.interval_jiffies, ==, 500);
  g_assert_cmpint (p.nfract_sync_pct, ==, 60);
}

static void
check_parse_error (const char *text, gint code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  WbBdflushParams p;
  WbBdflushParams before;

  wb_bdflush_params_init_2_4_27 (&p, 100);
  before = p;
  g_assert_false (wb_bdflush_params_parse (text, &p, &error));
  g_assert_error (error, WB_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("message '%s' for '%s' does not name '%s'", error->message, text, needle);
  /* Nothing is applied on error, not even the valid leading fields. */
  g_assert_cmpmem (&p, sizeof p, &before, sizeof before);
}

static void
test_bdflush_parse_invalid (void)
{
  check_parse_error ("2 500 x 0 500 3000 3 1 0", WB_ERROR_PARSE, "field 3 (dummy2)");
  check_parse_error ("2 5x", WB_ERROR_PARSE, "field 2 (ndirty)");
  check_parse_error ("2 500 0 0 5.5", WB_ERROR_PARSE, "field 5 (interval)");
  check_parse_error ("101", WB_ERROR_RANGE, "field 1 (nfract)");
  check_parse_error ("2 500 0 0 500 3000 300", WB_ERROR_RANGE, "field 7 (nfract_sync)");
  check_parse_error ("2 500 0 0 500 3000 3 101", WB_ERROR_RANGE, "field 8 (nfract_stop_bdflush)");
  check_parse_error ("2 500 0 0 -1", WB_ERROR_RANGE, "field 5 (interval)");
  check_parse_error ("2 99999999999", WB_ERROR_RANGE, "field 2 (ndirty)");
  check_parse_error ("2 500 0 0 500 3000 3 1 0 7", WB_ERROR_PARSE, "more than 9");
  check_parse_error ("", WB_ERROR_PARSE, "no values");
  check_parse_error ("   ", WB_ERROR_PARSE, "no values");
}

static void
test_bdflush_thresholds (void)
{
  g_autoptr (GError) error = NULL;
  WbBdflushParams p;

  wb_bdflush_params_init_2_4_27 (&p, 100);
  g_assert_true (wb_bdflush_params_parse ("2 500 0 0 500 3000 3 1 0", &p, &error));
  g_assert_no_error (error);

  /* 256 MiB machine: total (cache + free) = 65535 pages.
   *   wake: 65535·2/100 = 1310.7 → 1310; dirty 1310: 131000 <= 131070
   *   sync: 65535·3/100 = 1966.05 → 1966; dirty 1966: 196600 <= 196605
   *   stop: 65535·1/100 = 655.35 → 655 */
  g_assert_cmpuint (wb_bdflush_wake_thresh_pages (&p, 65535), ==, 1310);
  g_assert_cmpuint (wb_bdflush_sync_thresh_pages (&p, 65535), ==, 1966);
  g_assert_cmpuint (wb_bdflush_stop_thresh_pages (&p, 65535), ==, 655);

  g_assert_cmpint (wb_bdflush_balance_state (&p, 0, 65535, FALSE), ==, WB_BDFLUSH_STATE_NONE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 1310, 65535, FALSE), ==, WB_BDFLUSH_STATE_NONE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 1311, 65535, FALSE), ==, WB_BDFLUSH_STATE_WAKE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 1966, 65535, FALSE), ==, WB_BDFLUSH_STATE_WAKE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 1967, 65535, FALSE), ==, WB_BDFLUSH_STATE_SYNC);
  /* A PF_NOIO task only wakes bdflush. */
  g_assert_cmpint (wb_bdflush_balance_state (&p, 1967, 65535, TRUE), ==, WB_BDFLUSH_STATE_WAKE);

  g_assert_true (wb_bdflush_should_stop (&p, 655, 65535));
  g_assert_false (wb_bdflush_should_stop (&p, 656, 65535));

  /* 2.4.27 defaults on 60000 pages: wake above 18000, sync above 36000,
   * stop at 12000. */
  wb_bdflush_params_init_2_4_27 (&p, 100);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 18000, 60000, FALSE), ==, WB_BDFLUSH_STATE_NONE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 18001, 60000, FALSE), ==, WB_BDFLUSH_STATE_WAKE);
  g_assert_cmpint (wb_bdflush_balance_state (&p, 36001, 60000, FALSE), ==, WB_BDFLUSH_STATE_SYNC);
  g_assert_true (wb_bdflush_should_stop (&p, 12000, 60000));
  g_assert_false (wb_bdflush_should_stop (&p, 12001, 60000));
}

/* ---- 2.6 global limits ---- */

static void
test_tunables_defaults (void)
{
  static const struct { guint kver; guint bg; guint dirty; } cases[] = {
    { WB_KERNEL_VERSION (2, 6, 20), 10, 40 },
    { WB_KERNEL_VERSION (2, 6, 21), 10, 40 },
    { WB_KERNEL_VERSION (2, 6, 22), 5, 10 },
    { WB_KERNEL_VERSION (2, 6, 24), 5, 10 },
    { WB_KERNEL_VERSION (2, 6, 28), 5, 10 },
    { WB_KERNEL_VERSION (2, 6, 29), 5, 10 },
    { WB_KERNEL_VERSION (2, 6, 30), 10, 20 },
    { WB_KERNEL_VERSION (2, 6, 31), 10, 20 },
    { WB_KERNEL_VERSION (3, 2, 0), 10, 20 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      WbDirtyTunables t;

      wb_dirty_tunables_init (&t, cases[i].kver);
      g_assert_cmpuint (t.dirty_background_ratio_pct, ==, cases[i].bg);
      g_assert_cmpuint (t.dirty_ratio_pct, ==, cases[i].dirty);
      g_assert_cmpuint (t.dirty_bytes, ==, 0);
      g_assert_cmpuint (t.dirty_background_bytes, ==, 0);
      g_assert_cmpuint (t.dirty_writeback_centisecs, ==, 500);
      g_assert_cmpuint (t.dirty_expire_centisecs, ==, 3000);
    }
}

static void
test_global_2_6_20 (void)
{
  const guint kver = WB_KERNEL_VERSION (2, 6, 20);
  WbDirtyTunables t;
  WbMemInfo mem = { .total_pages = 65536, .mapped_pages = 16384 };
  guint64 bg, dirty;

  wb_dirty_tunables_init (&t, kver);

  /* 256 MiB, no highmem, 1/4 mapped: available = 65536 (all lowmem);
   * unmapped% = 100 − 1638400/65536 = 75 → dirty_ratio = min(40, 37) = 37;
   * dirty = 37·65536/100 = 24248 (.32); bg = 10·65536/100 = 6553 (.6). */
  g_assert_cmpuint (wb_dirtyable_pages (kver, &mem), ==, 65536);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 24248);
  g_assert_cmpuint (bg, ==, 6553);

  /* nfsd (PF_LESS_THROTTLE): +1/4 each: 24248 + 6062, 6553 + 1638. */
  wb_global_dirty_limits (kver, &t, &mem, TRUE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 30310);
  g_assert_cmpuint (bg, ==, 8191);

  /* Mostly mapped: mapped% = 6000000/65536 = 91 → unmapped 9 → 9/2 = 4 →
   * raised to the 5 % floor; background 10 >= 5 → 5/2 = 2.
   * dirty = 5·65536/100 = 3276; bg = 2·65536/100 = 1310. */
  mem.mapped_pages = 60000;
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 3276);
  g_assert_cmpuint (bg, ==, 1310);

  /* 1 GiB 32-bit box, 128 MiB highmem: available = 262144 − 32768 =
   * 229376 lowmem pages; nothing mapped → min(40, 50) = 40;
   * dirty = 40·229376/100 = 91750 (.4); bg = 22937 (.6). */
  mem = (WbMemInfo) { .total_pages = 262144, .highmem_total_pages = 32768 };
  g_assert_cmpuint (wb_dirtyable_pages (kver, &mem), ==, 229376);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 91750);
  g_assert_cmpuint (bg, ==, 22937);
}

static void
test_global_2_6_24 (void)
{
  const guint kver = WB_KERNEL_VERSION (2, 6, 24);
  WbDirtyTunables t;
  /* 256 MiB: 10000 free + 50000 on the LRU; the mapped count no longer
   * matters (no unmapped-ratio correction from 2.6.24). */
  WbMemInfo mem = { .total_pages = 65536, .free_pages = 10000,
                    .reclaimable_pages = 50000, .mapped_pages = 60000 };
  guint64 bg, dirty;

  wb_dirty_tunables_init (&t, kver);

  /* dirtyable = 60000 + 1; dirty = 10·60001/100 = 6000; bg = 3000. */
  g_assert_cmpuint (wb_dirtyable_pages (kver, &mem), ==, 60001);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 6000);
  g_assert_cmpuint (bg, ==, 3000);

  /* 20000 of those pages are in highmem: 40001 → 4000 / 2000, unless
   * highmem is declared dirtyable. */
  mem.highmem_dirtyable_pages = 20000;
  g_assert_cmpuint (wb_dirtyable_pages (kver, &mem), ==, 40001);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 4000);
  g_assert_cmpuint (bg, ==, 2000);
  mem.highmem_is_dirtyable = TRUE;
  g_assert_cmpuint (wb_dirtyable_pages (kver, &mem), ==, 60001);
  mem.highmem_is_dirtyable = FALSE;
  mem.highmem_dirtyable_pages = 0;

  /* dirty_ratio 2 → the 5 % floor: 3000; background 5 >= 5 → 2 %:
   * 2·60001/100 = 1200. */
  wb_dirty_tunables_set_ratio (&t, 2);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 3000);
  g_assert_cmpuint (bg, ==, 1200);
}

static void
test_global_bytes (void)
{
  const guint kver = WB_KERNEL_VERSION (2, 6, 31);
  WbDirtyTunables t;
  WbMemInfo mem = { .total_pages = 65536, .free_pages = 10000, .reclaimable_pages = 50000 };
  guint64 bg, dirty;

  wb_dirty_tunables_init (&t, kver);
  /* 10/20 of 60001: 12000 (.2) and 6000 (.1). */
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 12000);
  g_assert_cmpuint (bg, ==, 6000);

  /* dirty_bytes = 10 MiB + 1 byte → 2561 pages (rounded up) and the ratio
   * is zeroed; background 6000 >= 2561 → 2561/2 = 1280. */
  wb_dirty_tunables_set_bytes (&t, 10 * 1024 * 1024 + 1);
  g_assert_cmpuint (t.dirty_ratio_pct, ==, 0);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 2561);
  g_assert_cmpuint (bg, ==, 1280);

  /* Back to a ratio zeroes the bytes; background in bytes: 1 MiB = 256. */
  wb_dirty_tunables_set_ratio (&t, 20);
  g_assert_cmpuint (t.dirty_bytes, ==, 0);
  wb_dirty_tunables_set_background_bytes (&t, 1024 * 1024);
  g_assert_cmpuint (t.dirty_background_ratio_pct, ==, 0);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 12000);
  g_assert_cmpuint (bg, ==, 256);
  wb_dirty_tunables_set_background_ratio (&t, 10);
  g_assert_cmpuint (t.dirty_background_bytes, ==, 0);

  /* The 5 % floor is gone from 2.6.37: ratio 2 → 1200 on 3.2, 3000 on
   * 2.6.31. */
  wb_dirty_tunables_set_ratio (&t, 2);
  wb_global_dirty_limits (kver, &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 3000);
  wb_global_dirty_limits (WB_KERNEL_VERSION (3, 2, 0), &t, &mem, FALSE, &bg, &dirty);
  g_assert_cmpuint (dirty, ==, 1200);
  g_assert_cmpuint (bg, ==, 600);   /* 6000 >= 1200 → 1200/2 */
}

static void
test_ratelimit_and_chunk (void)
{
  /* 65536 pages: 1 CPU → 2048 → capped at 1024 (4 MiB); 4 CPUs → 512;
   * 256 CPUs → 8 → raised to 16. */
  g_assert_cmpuint (wb_ratelimit_pages (65536, 1), ==, 1024);
  g_assert_cmpuint (wb_ratelimit_pages (65536, 4), ==, 512);
  g_assert_cmpuint (wb_ratelimit_pages (65536, 256), ==, 16);
  /* 1.5·512 before 2.6.33; 1.5·max(1000, 512) from 2.6.33. */
  g_assert_cmpuint (wb_write_chunk_pages (WB_KERNEL_VERSION (2, 6, 24), 512, 1000), ==, 768);
  g_assert_cmpuint (wb_write_chunk_pages (WB_KERNEL_VERSION (2, 6, 33), 512, 1000), ==, 1500);
  g_assert_cmpuint (wb_write_chunk_pages (WB_KERNEL_VERSION (2, 6, 33), 512, 10), ==, 768);
}

/* ---- floating proportions ---- */

static void
test_prop_period_shift (void)
{
  /* 2 + ilog2(5999) = 14: period/2 = 8192 = roundup_pow_of_two(6000). */
  g_assert_cmpuint (wb_prop_period_shift (6000), ==, 14);
  g_assert_cmpuint (wb_prop_period_shift (8192), ==, 14);
  g_assert_cmpuint (wb_prop_period_shift (8193), ==, 15);
  g_assert_cmpuint (wb_prop_period_shift (2), ==, 2);
  g_assert_cmpuint (wb_prop_period_shift (0), ==, 2);
  g_assert_cmpuint (wb_prop_period_shift (G_MAXUINT64), ==, WB_PROP_MAX_SHIFT);
}

static void
inc_n (WbPropGlobal *pg, WbPropLocal *pl, guint n)
{
  for (guint i = 0; i < n; i++)
    wb_prop_inc (pg, pl);
}

static void
assert_fraction (const WbPropGlobal *pg, WbPropLocal *pl, guint64 num, guint64 den)
{
  guint64 n, d;

  wb_prop_fraction (pg, pl, &n, &d);
  g_assert_cmpuint (n, ==, num);
  g_assert_cmpuint (d, ==, den);
}

static void
test_prop_decay (void)
{
  WbPropGlobal pg;
  WbPropLocal a, b;

  /* shift 4: period/2 = 8 global events; den = 8 + t mod 8. */
  wb_prop_global_init (&pg, 4);
  wb_prop_local_init (&a);
  wb_prop_local_init (&b);

  /* A completes 8 pages: t = 8 crosses a half period, so A's 8 are halved
   * when next read: 4/8. */
  inc_n (&pg, &a, 8);
  g_assert_cmpuint (pg.events, ==, 8);
  assert_fraction (&pg, &a, 4, 8);

  /* B completes the next 8 (its first inc halves its 0): t = 16.  B: 8
   * halved once = 4/8; A: halved once more = 2/8. */
  inc_n (&pg, &b, 8);
  assert_fraction (&pg, &b, 4, 8);
  assert_fraction (&pg, &a, 2, 8);

  /* B alone for three more half periods: 4+8 = 12 → 6, +8 = 14 → 7,
   * +8 = 15 → 7 at t = 40.  A has missed 3 halvings: 2 >> 3 = 0. */
  inc_n (&pg, &b, 24);
  g_assert_cmpuint (pg.events, ==, 40);
  assert_fraction (&pg, &b, 7, 8);
  assert_fraction (&pg, &a, 0, 8);

  /* Inside a half period the denominator grows with t: 3 more → 10/11. */
  inc_n (&pg, &b, 3);
  assert_fraction (&pg, &b, 10, 11);

  /* A long-idle participant (70 half periods, past the 64-halvings
   * cut-off) is exactly 0, and the global count never decays. */
  a.events = 1000;
  a.period = pg.events & ~G_GUINT64_CONSTANT (7);
  inc_n (&pg, &b, 70 * 8);
  g_assert_cmpuint (pg.events, ==, 43 + 560);
  assert_fraction (&pg, &a, 0, 8 + (603 % 8));
}

static void
test_prop_change_shift (void)
{
  WbPropGlobal pg;
  WbPropLocal b;

  wb_prop_global_init (&pg, 4);
  wb_prop_local_init (&b);
  /* B alone for 43 events, halved at each multiple of 8: 8 at t = 8 →
   * 4+8 = 12 (t 16) → 6+8 = 14 (t 24) → 7+8 = 15 (t 32) → 7+8 = 15
   * (t 40) → 7+3 = 10 at t = 43: 10/(8 + 3). */
  inc_n (&pg, &b, 43);
  assert_fraction (&pg, &b, 10, 11);

  /* Doubling the period rescales t to 86 (position kept: 86 & ~15 = 80 is
   * B's stamp 40 rescaled), so B is not decayed: 10/(16 + 6). */
  wb_prop_change_shift (&pg, 5);
  g_assert_cmpuint (pg.events, ==, 86);
  assert_fraction (&pg, &b, 10, 22);
  g_assert_cmpuint (b.shift, ==, 5);
}

static void
test_prop_inc_max (void)
{
  WbPropGlobal pg;
  WbPropLocal a;

  /* max_ratio 50 % → frac = 16384/32768; an event is dropped (globally
   * too) while x > den/2.  Walk: x,t = 1,1 … 8,8 (den 8..15, limits 4..7:
   * x never exceeds them); at t = 8 x halves to 4 (limit 8/2 = 4, not
   * exceeded) → 5,9; then 5 > 9/2 = 4, so the remaining 11 calls drop. */
  wb_prop_global_init (&pg, 4);
  wb_prop_local_init (&a);
  for (guint i = 0; i < 20; i++)
    wb_prop_inc_max (&pg, &a, 50);
  g_assert_cmpuint (a.events, ==, 5);
  g_assert_cmpuint (pg.events, ==, 9);

  /* 100 % never drops. */
  wb_prop_global_init (&pg, 4);
  wb_prop_local_init (&a);
  for (guint i = 0; i < 20; i++)
    wb_prop_inc_max (&pg, &a, 100);
  g_assert_cmpuint (pg.events, ==, 20);
}

/* ---- per-BDI (2.6.24–3.1) ---- */

static void
test_bdi_limits (void)
{
  /* dirty_thresh 6000 (2.6.24 on 256 MiB), BDI share 6/8. */
  g_assert_cmpuint (wb_bdi_dirty_limit (6000, 6, 8, 0, 0, 100), ==, 4500);
  /* min_ratio 10 (the only one): 6000·90/100·6/8 + 600 = 4050 + 600. */
  g_assert_cmpuint (wb_bdi_dirty_limit (6000, 6, 8, 10, 10, 100), ==, 4650);
  /* An idle BDI keeps its min_ratio. */
  g_assert_cmpuint (wb_bdi_dirty_limit (6000, 0, 8, 10, 10, 100), ==, 600);
  /* Another BDI's min_ratio 20 shrinks the shared part: 4800·6/8 = 3600. */
  g_assert_cmpuint (wb_bdi_dirty_limit (6000, 6, 8, 0, 20, 100), ==, 3600);
  /* max_ratio 50 caps at 3000. */
  g_assert_cmpuint (wb_bdi_dirty_limit (6000, 6, 8, 0, 0, 50), ==, 3000);

  /* Clip: global dirty 5000 of 6000 → 1000 free + own 1000 = 2000;
   * global 7000 (over) → 0 + 1000; plenty free → unchanged. */
  g_assert_cmpuint (wb_bdi_clip_dirty_limit (4500, 6000, 5000, 1000), ==, 2000);
  g_assert_cmpuint (wb_bdi_clip_dirty_limit (4500, 6000, 7000, 1000), ==, 1000);
  g_assert_cmpuint (wb_bdi_clip_dirty_limit (4500, 6000, 100, 50), ==, 4500);

  /* Task adjustment: 4500/8 = 562; the sole dirtier loses 562, half a
   * share 281, none 0; never below half. */
  g_assert_cmpuint (wb_task_dirty_limit (4500, 1, 1), ==, 3938);
  g_assert_cmpuint (wb_task_dirty_limit (4500, 1, 2), ==, 4219);
  g_assert_cmpuint (wb_task_dirty_limit (4500, 0, 8), ==, 4500);
  g_assert_cmpuint (wb_task_dirty_limit (4500, 20, 1), ==, 2250);

  /* Throttle when over bdi_thresh and global >= (3000 + 6000)/2. */
  g_assert_false (wb_per_bdi_should_throttle (4500, 4500, 6000, 3000, 6000));
  g_assert_false (wb_per_bdi_should_throttle (4600, 4500, 4499, 3000, 6000));
  g_assert_true (wb_per_bdi_should_throttle (4600, 4500, 4500, 3000, 6000));

  /* Sleeps: HZ/10 before 2.6.33; 1, 2, 4 … capped at HZ/10 after. */
  g_assert_cmpuint (wb_per_bdi_pause_jiffies (WB_KERNEL_VERSION (2, 6, 24), 1000, 0), ==, 100);
  g_assert_cmpuint (wb_per_bdi_pause_jiffies (WB_KERNEL_VERSION (2, 6, 33), 1000, 0), ==, 1);
  g_assert_cmpuint (wb_per_bdi_pause_jiffies (WB_KERNEL_VERSION (2, 6, 33), 1000, 1), ==, 2);
  g_assert_cmpuint (wb_per_bdi_pause_jiffies (WB_KERNEL_VERSION (2, 6, 33), 1000, 64), ==, 100);
  g_assert_cmpuint (wb_per_bdi_pause_jiffies (WB_KERNEL_VERSION (2, 6, 33), 100, 8), ==, 10);
}

/* ---- IO-less (3.2) ---- */

/* thresh 12000, bg 6000 → freerun 9000; limit 12000; setpoint 10500. */
#define THRESH   12000
#define BG        6000
#define FREERUN   9000
#define SETPOINT 10500

static void
test_setpoint_and_limit (void)
{
  WbGlobalDirtyLimit g;

  g_assert_cmpuint (wb_dirty_freerun_ceiling (THRESH, BG), ==, FREERUN);
  g_assert_cmpuint (wb_dirty_setpoint (THRESH, BG, THRESH), ==, SETPOINT);
  /* A lagging global limit of 16000 moves the setpoint to 12500. */
  g_assert_cmpuint (wb_hard_dirty_limit (THRESH, 16000), ==, 16000);
  g_assert_cmpuint (wb_dirty_setpoint (THRESH, BG, 16000), ==, 12500);

  /* The limit follows thresh up at once, down by 1/32 of the gap per
   * 200 ms, and not below dirty. */
  wb_global_dirty_limit_init (&g, 16000, 0);
  wb_update_dirty_limit (&g, 20000, 0);
  g_assert_cmpuint (g.limit_pages, ==, 20000);
  wb_update_dirty_limit (&g, THRESH, 0);        /* 20000 − 8000/32 */
  g_assert_cmpuint (g.limit_pages, ==, 19750);
  wb_update_dirty_limit (&g, THRESH, 19700);    /* 19750 − 50/32 */
  g_assert_cmpuint (g.limit_pages, ==, 19749);
  wb_update_dirty_limit (&g, THRESH, 19749);
  g_assert_cmpuint (g.limit_pages, ==, 19749);

  /* Rate-limited to one step per BANDWIDTH_INTERVAL (HZ/5). */
  wb_global_dirty_limit_init (&g, 20000, 1000);
  g_assert_false (wb_global_update_bandwidth (&g, 1000, THRESH, 0, 1199));
  g_assert_cmpuint (g.limit_pages, ==, 20000);
  g_assert_true (wb_global_update_bandwidth (&g, 1000, THRESH, 0, 1200));
  g_assert_cmpuint (g.limit_pages, ==, 19750);
  g_assert_false (wb_global_update_bandwidth (&g, 1000, THRESH, 0, 1300));
  g_assert_cmpuint (wb_bandwidth_interval_jiffies (100), ==, 20);
  g_assert_cmpuint (wb_bandwidth_interval_jiffies (1), ==, 1);
}

static void
test_pos_ratio_anchors (void)
{
  /* setpoint: x = 0 → exactly 1.0. */
  g_assert_cmpint (wb_pos_ratio_polynom (SETPOINT, SETPOINT, THRESH, FALSE), ==, 1024);
  /* freerun: x = 1500·1024/1501 = 1023 (.3); 1023² >> 10 = 1022;
   * 1022·1023 >> 10 = 1021; 1024 + 1021 = 2045 (2.0 less the +1 and
   * the truncations). */
  g_assert_cmpint (wb_pos_ratio_polynom (SETPOINT, FREERUN, THRESH, FALSE), ==, 2045);
  /* One page under the limit: x = −1499·1024/1501 = −1022 (towards 0);
   * 1022² >> 10 = 1020; 1020·(−1022) >> 10 = −1019 (floor); → 5. */
  g_assert_cmpint (wb_pos_ratio_polynom (SETPOINT, THRESH - 1, THRESH, FALSE), ==, 5);
  /* Far below freerun 3.2 does not clamp (x = 7163), 3.14 clamps to 2.0. */
  g_assert_cmpint (wb_pos_ratio_polynom (SETPOINT, 0, THRESH, FALSE), >, 300000);
  g_assert_cmpint (wb_pos_ratio_polynom (SETPOINT, 0, THRESH, TRUE), ==, 2048);
}

static WbPosInput
single_bdi (guint64 dirty)
{
  /* One disk holding all the dirty pages, at the initial 100 MiB/s. */
  return (WbPosInput) {
    .thresh_pages = THRESH, .bg_thresh_pages = BG, .dirty_pages = dirty,
    .global_dirty_limit_pages = THRESH, .bdi_thresh_pages = THRESH,
    .bdi_dirty_pages = dirty, .write_bw_pages_per_s = WB_INIT_BW_PAGES_PER_S,
  };
}

static void
test_pos_ratio_bdi (void)
{
  WbPosInput in;

  /* Single BDI: scale = (12000 << 16)/12001 = 65530; bdi_setpoint =
   * 10500·65530 >> 16 = 10499; span = 8·25600·65530 >> 16 = 204781;
   * x_intercept = 215280.
   *   dirty 10500: 1024·204780/204782 = 1023
   *   dirty 9001:  global 2042 (x = 1022), ·206279/204782 = 2056
   *   dirty 11999: global 5, ·203281/204782 = 4
   *   dirty 12000: 0 (at the limit) */
  in = single_bdi (SETPOINT);
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 1023);
  in = single_bdi (9001);
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 2056);
  in = single_bdi (THRESH - 1);
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 4);
  in = single_bdi (THRESH);
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 0);
  in = single_bdi (THRESH + 500);
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 0);

  /* Over-full slow BDI: bdi_thresh 1200 of 12000 (scale 6553), write_bw
   * 100 pages/s: bdi_setpoint = 10500·6553 >> 16 = 1049, span =
   * (10800 + 800)·6553 >> 16 = 1159, x_intercept = 2208; bdi_dirty 2000
   * is past x_intercept − span/4 = 1919 → the 1/4 floor: 1024/4. */
  in = single_bdi (SETPOINT);
  in.bdi_thresh_pages = 1200;
  in.bdi_dirty_pages = 2000;
  in.write_bw_pages_per_s = 100;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 256);
  /* Short of that floor (1800 < 1919) the line still applies:
   * 1024·(2208 − 1800)/(2208 − 1049 + 1) = 1024·408/1160 = 360. */
  in.bdi_dirty_pages = 1800;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 360);

  /* Reserve area: bdi_dirty 1000 under bdi_thresh/2 = 6000 and above
   * 6000/8 = 750 → ×6000/1000.  Linear part first: 1024·(215280 − 1000)/
   * 204782 = 1071; then ·6 = 6426. */
  in = single_bdi (SETPOINT);
  in.bdi_dirty_pages = 1000;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 6426);
  /* …and at most ×8 (bdi_dirty 10 <= 750): 1024·215270/204782 = 1076 → 8608. */
  in.bdi_dirty_pages = 10;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 8608);
}

static void
test_pos_ratio_monotonic (void)
{
  gint64 prev_poly = G_MAXINT64;
  guint64 prev = G_MAXUINT64;

  /* Non-increasing all the way from freerun to the limit, for the cubic
   * alone and for a single BDI carrying all dirty pages. */
  for (guint64 dirty = FREERUN; dirty <= THRESH; dirty++)
    {
      gint64 poly = dirty < THRESH
                      ? wb_pos_ratio_polynom (SETPOINT, dirty, THRESH, FALSE) : 0;
      WbPosInput in = single_bdi (dirty);
      guint64 p = wb_pos_ratio (&in);

      g_assert_cmpint (poly, <=, prev_poly);
      g_assert_cmpuint (p, <=, prev);
      g_assert_cmpint (poly, >=, 0);
      prev_poly = poly;
      prev = p;
    }
  g_assert_cmpuint (prev, ==, 0);
}

static void
test_pos_ratio_strict (void)
{
  WbPosInput in = single_bdi (3000);

  /* FUSE-like BDI with bdi_thresh 1200 while global dirty (3000) is far
   * below freerun: the global cubic clamps to 2048; the BDI's own curve:
   * bdi_bg = 1200·6000/12000 = 600, its setpoint = (1200 + 600)/2 = 900.
   * min(2048, BDI curve): 1.0 at 900, 0 at 1200. */
  in.strictlimit = TRUE;
  in.bdi_thresh_pages = 1200;
  in.bdi_dirty_pages = 900;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 1024);
  in.bdi_dirty_pages = 1200;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 0);
  /* Almost empty: twice the global ratio, at most 2.0. */
  in.bdi_dirty_pages = 5;
  g_assert_cmpuint (wb_pos_ratio (&in), ==, 2048);

  /* Without strictlimit this BDI would run free: global dirty is below
   * freerun, so balance_dirty_pages does not throttle at all. */
  {
    WbBdiBandwidth b;
    WbPause pause;

    wb_bdi_bandwidth_init (&b, 1000, 0);
    in.bdi_dirty_pages = 1100;
    in.strictlimit = FALSE;
    wb_balance_dirty_pages_pause (&in, &b, 32, 32, &pause);
    g_assert_true (pause.freerun);
    g_assert_cmpuint (pause.sleep_jiffies, ==, 0);
    /* Strict: 1100 is past the BDI's freerun (900) → throttled. */
    in.strictlimit = TRUE;
    wb_balance_dirty_pages_pause (&in, &b, 32, 32, &pause);
    g_assert_false (pause.freerun);
    g_assert_cmpuint (pause.pos_ratio, <, 1024);
    in.bdi_dirty_pages = 900;
    wb_balance_dirty_pages_pause (&in, &b, 32, 32, &pause);
    g_assert_true (pause.freerun);
  }
}

static void
test_write_bandwidth_steps (void)
{
  WbBdiBandwidth b;

  /* HZ=1000: T = roundup_pow_of_two(3000) = 4096.  5000 pages/s device:
   * 1000 pages per 200 jiffies.
   * step 1: (1000·1000 + 25600·3896) >> 12 = 100737600/4096 = 24594;
   *         avg == old → stays 25600.
   * step 2: (1000000 + 24594·3896) >> 12 = 23637; avg 25600 > old 24594
   *         >= 23637 → avg −= 1006 >> 3 = 125 → 25475. */
  wb_bdi_bandwidth_init (&b, 1000, 0);
  wb_bdi_update_write_bandwidth (&b, 200, 1000);
  g_assert_cmpuint (b.write_bandwidth, ==, 24594);
  g_assert_cmpuint (b.avg_write_bandwidth, ==, 25600);
  b.written_stamp = 1000;
  wb_bdi_update_write_bandwidth (&b, 200, 2000);
  g_assert_cmpuint (b.write_bandwidth, ==, 23637);
  g_assert_cmpuint (b.avg_write_bandwidth, ==, 25475);
  /* step 3, a burst of 5000 pages: (5·10^6 + 23637·3896) >> 12 = 23703,
   * above old 23637: the sample turns back, so avg holds at 25475. */
  b.written_stamp = 2000;
  wb_bdi_update_write_bandwidth (&b, 200, 7000);
  g_assert_cmpuint (b.write_bandwidth, ==, 23703);
  g_assert_cmpuint (b.avg_write_bandwidth, ==, 25475);

  /* elapsed > T: the plain rate, for both: 10000·1000/5000 = 2000. */
  b.written_stamp = 0;
  wb_bdi_update_write_bandwidth (&b, 5000, 10000);
  g_assert_cmpuint (b.write_bandwidth, ==, 2000);
  g_assert_cmpuint (b.avg_write_bandwidth, ==, 2000);
}

static void
test_write_bandwidth_converges (void)
{
  WbBdiBandwidth b;
  WbPosInput pos = single_bdi (0);   /* thresh 0 below: bandwidth only */
  guint64 written = 0;
  guint64 now = 0;
  guint64 avg_before;

  pos.thresh_pages = 0;
  wb_bdi_bandwidth_init (&b, 1000, 0);
  /* 60 s of a constant 5000 pages/s (1000 per 200 ms).  The fixed point
   * of x' = (10^6 + 3896·x) >> 12 is exactly 5000 and it is reached from
   * above (floor(3896·d/4096) < d; the gap shrinks by 3896/4096 a step,
   * 20600 → under 1 within 300 steps), so write_bw ends at 5000; avg
   * trails it and stops once the gap is below 8: within [5000, 5007]. */
  for (guint i = 0; i < 300; i++)
    {
      now += 200;
      written += 1000;
      g_assert_true (wb_bdi_update_bandwidth (&b, NULL, &pos, 0, written, now, now));
    }
  g_assert_cmpuint (b.write_bandwidth, ==, 5000);
  g_assert_cmpuint (b.avg_write_bandwidth, >=, 5000);
  g_assert_cmpuint (b.avg_write_bandwidth, <=, 5007);

  /* A single spike moves write_bw but not avg (no confirmed direction). */
  avg_before = b.avg_write_bandwidth;
  now += 200;
  written += 3000;
  g_assert_true (wb_bdi_update_bandwidth (&b, NULL, &pos, 0, written, now, now));
  g_assert_cmpuint (b.write_bandwidth, >, 5000);
  g_assert_cmpuint (b.avg_write_bandwidth, ==, avg_before);

  /* Less than 200 ms since the last update: nothing happens. */
  g_assert_false (wb_bdi_update_bandwidth (&b, NULL, &pos, 0, written + 500, now + 199, now));
  g_assert_cmpuint (b.written_stamp, ==, written);

  /* Idle for 2 s before this balance_dirty_pages call: re-stamp only. */
  {
    guint64 bw = b.write_bandwidth;

    g_assert_true (wb_bdi_update_bandwidth (&b, NULL, &pos, 0, written + 10,
                                            now + 2000, now + 2000));
    g_assert_cmpuint (b.write_bandwidth, ==, bw);
    g_assert_cmpuint (b.written_stamp, ==, written + 10);
    g_assert_cmpuint (b.bw_time_stamp, ==, now + 2000);
  }
}

/* N tasks dirty into one BDI whose disk writes @write_bw pages/s, in 1 ms
 * steps: each task dirties at task_ratelimit = dirty_ratelimit·pos_ratio;
 * every 200 ms the BDI updates its rates.  Starting at INIT_BW (25600) and
 * dirty = freerun. */
static void
run_ratelimit_loop (guint n_tasks, guint64 write_bw, WbBdiBandwidth *b, guint64 *dirty_out)
{
  guint64 dirty = FREERUN;
  guint64 dirtied = 0;
  guint64 dirty_acc = 0;   /* thousandths of pages */
  guint64 write_acc = 0;

  wb_bdi_bandwidth_init (b, 1000, 0);
  b->write_bandwidth = b->avg_write_bandwidth = write_bw;
  for (guint64 ms = 1; ms <= 60000; ms++)
    {
      WbPosInput in = single_bdi (dirty);
      guint64 d, w;

      in.write_bw_pages_per_s = write_bw;
      dirty_acc += n_tasks * ((b->dirty_ratelimit * wb_pos_ratio (&in)) >> WB_RATELIMIT_CALC_SHIFT);
      d = dirty_acc / 1000;
      dirty_acc -= d * 1000;
      write_acc += write_bw;
      w = write_acc / 1000;
      write_acc -= w * 1000;
      dirtied += d;
      dirty = dirty + d > w ? dirty + d - w : 0;
      if (ms % 200 == 0)
        {
          in = single_bdi (dirty);
          wb_bdi_update_dirty_ratelimit (b, &in, dirtied, 200);
          b->dirtied_stamp = dirtied;
        }
    }
  *dirty_out = dirty;
}

static void
test_dirty_ratelimit_converges (void)
{
  for (guint n = 1; n <= 4; n *= 2)
    {
      WbBdiBandwidth b;
      WbPosInput in;
      guint64 dirty;
      guint64 rate;
      guint64 share = 5000 / n;

      run_ratelimit_loop (n, 5000, &b, &dirty);
      in = single_bdi (dirty);
      in.write_bw_pages_per_s = 5000;
      rate = n * ((b.dirty_ratelimit * wb_pos_ratio (&in)) >> WB_RATELIMIT_CALC_SHIFT);

      /* balanced_dirty_ratelimit estimates write_bw/N (±1 % for the
       * integer rates); the base rate has come down from 25600 to within
       * the band where the step rule stops chasing (ratelimit/(2·step+1)
       * shifts a small step to 0), and the tasks together dirty at the
       * disk's speed, with dirty pages held between freerun and limit. */
      g_assert_cmpuint (b.balanced_dirty_ratelimit, >=, share - share / 100);
      g_assert_cmpuint (b.balanced_dirty_ratelimit, <=, share + share / 100);
      g_assert_cmpuint (b.dirty_ratelimit, >=, share);
      g_assert_cmpuint (b.dirty_ratelimit, <, share + share / 8);
      g_assert_cmpuint (rate, >=, 5000 - 50);
      g_assert_cmpuint (rate, <=, 5000 + 50);
      g_assert_cmpuint (dirty, >, FREERUN);
      g_assert_cmpuint (dirty, <, THRESH);
    }
}

static void
test_dirty_ratelimit_step (void)
{
  WbBdiBandwidth b;
  WbPosInput in = single_bdi (SETPOINT);

  /* One update at dirty = setpoint, 2 tasks at 25600 each for 200 ms
   * (dirtied 10240), write_bw 25600: pos_ratio 1023 → task_ratelimit =
   * (25600·1023 >> 10) + 1 = 25576; dirty_rate = 51200; balanced =
   * 25576·25600/51201 = 12787.  Not below setpoint → x = max(25600,
   * 12787, 25576) = 25600 → no step: the rate error alone does not move
   * dirty_ratelimit. */
  wb_bdi_bandwidth_init (&b, 1000, 0);
  wb_bdi_update_dirty_ratelimit (&b, &in, 10240, 200);
  g_assert_cmpuint (b.balanced_dirty_ratelimit, ==, 12787);
  g_assert_cmpuint (b.dirty_ratelimit, ==, 25600);

  /* Second update, same inputs: x = max(12787, 12787, 25576) = 25576;
   * step = 24, shift = 25600/49 = 522 >= 64 → 0; (0 + 7)/8 = 0. */
  b.dirtied_stamp = 0;
  wb_bdi_update_dirty_ratelimit (&b, &in, 10240, 200);
  g_assert_cmpuint (b.dirty_ratelimit, ==, 25600);

  /* Above setpoint with task_ratelimit far down: dirty 11999 → pos 4 →
   * task_ratelimit = (25600·4 >> 10) + 1 = 101; balanced = 101·25600/
   * 51201 = 50; with the previous balanced 12787, x = max(12787, 50,
   * 101) = 12787; step = 12813; shift = 25600/25627
   * = 0; step = (12813 + 7)/8 = 1602 → 25600 − 1602 = 23998. */
  in = single_bdi (THRESH - 1);
  b.dirtied_stamp = 0;
  wb_bdi_update_dirty_ratelimit (&b, &in, 10240, 200);
  g_assert_cmpuint (b.balanced_dirty_ratelimit, ==, 50);
  g_assert_cmpuint (b.dirty_ratelimit, ==, 23998);

  /* Below setpoint the rate climbs: dirty 9001 (pos 2056), base rate
   * 1000, 200 pages dirtied in 200 ms (1000/s).  task_ratelimit =
   * (1000·2056 >> 10) + 1 = 2008; balanced = 2008·25600/1001 = 51353;
   * x = min(25600, 51353, 2008) = 2008; step = 1008, shift 1000/2017 = 0,
   * (1008 + 7)/8 = 126 → 1126. */
  wb_bdi_bandwidth_init (&b, 1000, 0);
  b.dirty_ratelimit = 1000;
  in = single_bdi (9001);
  wb_bdi_update_dirty_ratelimit (&b, &in, 200, 200);
  g_assert_cmpuint (b.balanced_dirty_ratelimit, ==, 51353);
  g_assert_cmpuint (b.dirty_ratelimit, ==, 1126);
}

static void
test_max_pause (void)
{
  /* 3.2, HZ=1000, bw = ratelimit = 25600 (one dirtier): t = 20;
   * bdi_dirty bound 12000·1000/204801 = 58 → 20 ms. */
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (1000, 25600, 25600, 12000), ==, 20);
  /* ratelimit 100 (log2 6 vs 14): 20 + 8·20000/1024 = 176; bounded by
   * bdi_dirty: 58 for 12000 pages, none for 10^6. */
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (1000, 25600, 100, 12000), ==, 58);
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (1000, 25600, 100, 1000000), ==, 176);
  /* Many dirtiers: 20 + 14·20000/1024 = 293 → MAX_PAUSE 200 ms. */
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (1000, 25600, 1, 1000000), ==, 200);
  /* Tiny pools still get 4 jiffies. */
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (1000, 25600, 25600, 10), ==, 4);
  /* HZ=100: 2 + 27 = 29 → 20 jiffies, still 200 ms. */
  g_assert_cmpuint (wb_bdi_max_pause_3_2 (100, 25600, 1, 1000000), ==, 20);
  g_assert_cmpuint (wb_jiffies_to_ns (wb_max_pause_jiffies (100), 100), ==, 200000000);
  g_assert_cmpuint (wb_jiffies_to_ns (wb_max_pause_jiffies (1000), 1000), ==, 200000000);

  /* 3.3+: bw/roundup_pow_of_two(126) = 25600/128 = 200;
   * 12000/201 + 1 = 60; 10^6/201 + 1 = 4976 → 200. */
  g_assert_cmpuint (wb_bdi_max_pause_3_3 (1000, 25600, 12000), ==, 60);
  g_assert_cmpuint (wb_bdi_max_pause_3_3 (1000, 25600, 1000000), ==, 200);
  g_assert_cmpuint (wb_bdi_max_pause_3_3 (1000, 25600, 0), ==, 1);
}

static void
test_pause (void)
{
  WbBdiBandwidth b;
  WbPause p;
  WbPosInput in;

  wb_bdi_bandwidth_init (&b, 1000, 0);

  /* Freerun (dirty 9000 = ceiling): no pause; next check after
   * 1 << (ilog2(3000)/2) = 32 pages. */
  in = single_bdi (FREERUN);
  wb_balance_dirty_pages_pause (&in, &b, 32, 32, &p);
  g_assert_true (p.freerun);
  g_assert_cmpuint (p.sleep_jiffies, ==, 0);
  g_assert_cmpuint (p.nr_dirtied_pause, ==, 32);

  /* Just past freerun: pos 2056 → task_ratelimit 25600·2056 >> 10 =
   * 51400; 32 pages take 0 jiffies → not slept; pause counts as 1 <=
   * max_pause/4 (20/4) → nr_dirtied_pause = clamp(25600·10/1000 = 256,
   * 36, 128) = 128. */
  in = single_bdi (9001);
  wb_balance_dirty_pages_pause (&in, &b, 32, 32, &p);
  g_assert_false (p.freerun);
  g_assert_cmpuint (p.pos_ratio, ==, 2056);
  g_assert_cmpuint (p.task_ratelimit, ==, 51400);
  g_assert_cmpuint (p.max_pause_jiffies, ==, 20);
  g_assert_cmpuint (p.sleep_jiffies, ==, 0);
  g_assert_cmpuint (p.nr_dirtied_pause, ==, 128);

  /* Near the limit: pos 4 → 100 pages/s; 32 pages = 320 ms → max_pause
   * 20; pause >= max → 1 | clamp(256, 8, 28) = 29. */
  in = single_bdi (THRESH - 1);
  wb_balance_dirty_pages_pause (&in, &b, 32, 32, &p);
  g_assert_cmpuint (p.task_ratelimit, ==, 100);
  g_assert_cmpuint (p.sleep_jiffies, ==, 20);
  g_assert_false (p.repeat);
  g_assert_cmpuint (p.nr_dirtied_pause, ==, 29);

  /* At the limit: task_ratelimit 0 → sleep max_pause and come back. */
  in = single_bdi (THRESH);
  wb_balance_dirty_pages_pause (&in, &b, 32, 32, &p);
  g_assert_true (p.repeat);
  g_assert_cmpuint (p.sleep_jiffies, ==, 20);

  /* A 10× larger machine, many dirtiers (dirty_ratelimit 16): max_pause
   * = 20 + 10·20000/1024 = 215 → 200; at the setpoint pos = 1023,
   * task_ratelimit = 16·1023 >> 10 = 15; 32 pages would be 2133 ms →
   * 200 ms; nr_dirtied_pause = 1 | clamp(16·100/1000 = 1, 8, 28) = 9. */
  in = (WbPosInput) {
    .thresh_pages = 120000, .bg_thresh_pages = 60000, .dirty_pages = 105000,
    .global_dirty_limit_pages = 120000, .bdi_thresh_pages = 120000,
    .bdi_dirty_pages = 105000,
  };
  b.dirty_ratelimit = 16;
  wb_balance_dirty_pages_pause (&in, &b, 32, 32, &p);
  g_assert_cmpuint (p.pos_ratio, ==, 1023);
  g_assert_cmpuint (p.task_ratelimit, ==, 15);
  g_assert_cmpuint (p.max_pause_jiffies, ==, 200);
  g_assert_cmpuint (p.sleep_jiffies, ==, 200);
  g_assert_cmpuint (p.nr_dirtied_pause, ==, 9);
}

static void
test_poll_interval (void)
{
  /* ~√(thresh − dirty): 3000 → 2^(11/2) = 32; 1 → 1; 10^6 → 2^9 = 512. */
  g_assert_cmpuint (wb_dirty_poll_interval (9000, 12000), ==, 32);
  g_assert_cmpuint (wb_dirty_poll_interval (11999, 12000), ==, 1);
  g_assert_cmpuint (wb_dirty_poll_interval (12000, 12000), ==, 1);
  g_assert_cmpuint (wb_dirty_poll_interval (0, 1000000), ==, 512);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/wb/limits/helpers", test_helpers);
  g_test_add_func ("/wb/bdflush/defaults", test_bdflush_defaults);
  g_test_add_func ("/wb/bdflush/parse-valid", test_bdflush_parse_valid);
  g_test_add_func ("/wb/bdflush/parse-invalid", test_bdflush_parse_invalid);
  g_test_add_func ("/wb/bdflush/thresholds", test_bdflush_thresholds);
  g_test_add_func ("/wb/global/tunables-defaults", test_tunables_defaults);
  g_test_add_func ("/wb/global/2.6.20", test_global_2_6_20);
  g_test_add_func ("/wb/global/2.6.24", test_global_2_6_24);
  g_test_add_func ("/wb/global/bytes", test_global_bytes);
  g_test_add_func ("/wb/global/ratelimit-chunk", test_ratelimit_and_chunk);
  g_test_add_func ("/wb/prop/period-shift", test_prop_period_shift);
  g_test_add_func ("/wb/prop/decay", test_prop_decay);
  g_test_add_func ("/wb/prop/change-shift", test_prop_change_shift);
  g_test_add_func ("/wb/prop/inc-max", test_prop_inc_max);
  g_test_add_func ("/wb/per-bdi/limits", test_bdi_limits);
  g_test_add_func ("/wb/io-less/setpoint-limit", test_setpoint_and_limit);
  g_test_add_func ("/wb/io-less/pos-ratio-anchors", test_pos_ratio_anchors);
  g_test_add_func ("/wb/io-less/pos-ratio-bdi", test_pos_ratio_bdi);
  g_test_add_func ("/wb/io-less/pos-ratio-monotonic", test_pos_ratio_monotonic);
  g_test_add_func ("/wb/io-less/pos-ratio-strict", test_pos_ratio_strict);
  g_test_add_func ("/wb/io-less/write-bandwidth-steps", test_write_bandwidth_steps);
  g_test_add_func ("/wb/io-less/write-bandwidth-converges", test_write_bandwidth_converges);
  g_test_add_func ("/wb/io-less/dirty-ratelimit-step", test_dirty_ratelimit_step);
  g_test_add_func ("/wb/io-less/dirty-ratelimit-converges", test_dirty_ratelimit_converges);
  g_test_add_func ("/wb/io-less/max-pause", test_max_pause);
  g_test_add_func ("/wb/io-less/pause", test_pause);
  g_test_add_func ("/wb/io-less/poll-interval", test_poll_interval);

  return g_test_run ();
}
