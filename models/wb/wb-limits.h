/* wb-limits.h — the pure arithmetic of writeback and dirty throttling, era
 * by era: thresholds, floating proportions, position control, bandwidth
 * estimation and pauses.  No simulation state: the page cache and the
 * writeback policies (models/wb/wb-*.c) own the counters and call these.
 *
 * Eras and sources (paraphrased in /work/shared/reference/kernel-algorithms.md
 * §7; kernel function names are given per function below):
 *   bdflush-2.4     fs/buffer.c (2.4.27): bdflush parameters, balance_dirty_state
 *   global-2.6      mm/page-writeback.c (2.6.20): get_dirty_limits
 *   per-bdi-2.6.24  mm/page-writeback.c, lib/proportions.c (2.6.24–3.1)
 *   io-less-3.2     mm/page-writeback.c (3.2): bdi_position_ratio,
 *                   bdi_update_write_bandwidth, bdi_update_dirty_ratelimit,
 *                   bdi_max_pause; strict_limit from 3.14
 *
 * Units: every count is in 4 KiB pages, rates in pages per second, times in
 * jiffies of the caller's HZ (the kernel's own integer truncation applies;
 * convert with wb_jiffies_to_ns).  Integer widths follow a 64-bit kernel
 * (unsigned long = guint64); intermediate products overflow where the
 * kernel's would, which needs absurd page counts (> 2^40).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define WB_ERROR (wb_error_quark ())
GQuark wb_error_quark (void);

typedef enum {
  WB_ERROR_PARSE,   /* text is not what the field needs; message names the field */
  WB_ERROR_RANGE,   /* a number outside what the kernel accepts */
} WbError;

/* Kernel versions are compared as KERNEL_VERSION(a,b,c) does. */
#define WB_KERNEL_VERSION(a, b, c) (((guint) (a) << 16) | ((guint) (b) << 8) | (guint) (c))

#define WB_PAGE_SIZE_BYTES 4096u

/* Whole jiffies at @hz to nanoseconds (exact; a jiffy is 10^9/hz ns). */
guint64 wb_jiffies_to_ns (guint64 jiffies, guint hz);

/* floor(log2 x) for x >= 1 (the kernel's ilog2); 0 for x = 0, where the
 * kernel's value is undefined. */
guint   wb_ilog2 (guint64 x);
/* The kernel's roundup_pow_of_two; 1 for x <= 1. */
guint64 wb_roundup_pow_of_two (guint64 x);

/* ------------------------------------------------------------------------
 * 2.4: bdflush + kupdated (fs/buffer.c, 2.4.19+ layout, defaults of 2.4.27)
 * ------------------------------------------------------------------------ */

#define WB_BDFLUSH_NPARAMS        9
/* bdflush and kupdated write the LRU head in batches of this many buffers
 * (NRSYNC in write_some_buffers). */
#define WB_BDFLUSH_BATCH_BUFFERS  32

/* /proc/sys/vm/bdflush, in the order users write it.  Percentages are of
 * "total" = nr_free_buffer_pages() (page cache of the first GFP_USER zone
 * plus free pages above the high watermark). */
typedef struct {
  gint nfract_pct;              /* 1: dirty % above which writers wake bdflush */
  gint ndirty_buffers;          /* 2: buffers bdflush writes per wake cycle */
  gint dummy2;                  /* 3: unused (old nrefill) */
  gint dummy3;                  /* 4: unused */
  gint interval_jiffies;        /* 5: kupdated period; 0 = kupdated stopped */
  gint age_buffer_jiffies;      /* 6: age before kupdated writes a buffer */
  gint nfract_sync_pct;         /* 7: above this a writer writes a batch itself */
  gint nfract_stop_bdflush_pct; /* 8: bdflush sleeps again below this */
  gint dummy5;                  /* 9: unused */
} WbBdflushParams;

/* Field name ("nfract", "interval" ...) for 0-based @index < 9. */
const char *wb_bdflush_param_name (guint index);

/* 2.4.27 defaults: {30, 500, 0, 0, 5·HZ, 30·HZ, 60, 20, 0}. */
void wb_bdflush_params_init_2_4_27 (WbBdflushParams *params, guint hz);
/* 2.4.17 to 2.4.19-pre4 (fs/buffer.c before aa-030-writeout_scheduling):
 * {40, 0, 0, 0, 5·HZ, 30·HZ, 60, 0, 0}; fields 2 and 8 are unused there. */
void wb_bdflush_params_init_2_4_18 (WbBdflushParams *params, guint hz);

/* Parse the whitespace-separated tuple written to /proc/sys/vm/bdflush,
 * e.g. "2 500 0 0 500 3000 3 1 0".  Like the sysctl (proc_dointvec), a
 * shorter tuple sets only its leading fields and leaves the rest of
 * @params as they were; more than nine values, a non-integer, a negative
 * value or a percentage above 100 is an error naming the field (1-based
 * position and name).  On error @params is unchanged. */
gboolean wb_bdflush_params_parse (const char      *text,
                                  WbBdflushParams *params,
                                  GError         **error);

typedef enum {
  WB_BDFLUSH_STATE_NONE,   /* dirty <= nfract: nothing to do */
  WB_BDFLUSH_STATE_WAKE,   /* above nfract: wake bdflush (async flushing) */
  WB_BDFLUSH_STATE_SYNC,   /* above nfract_sync: the writer also writes a batch */
} WbBdflushState;

/* balance_dirty_state (2.4.27): compares dirty·100 with total·pct, strictly
 * above.  A PF_NOIO task (@noio) is never asked to write synchronously. */
WbBdflushState wb_bdflush_balance_state (const WbBdflushParams *params,
                                         guint64                dirty_pages,
                                         guint64                total_pages,
                                         gboolean               noio);
/* bdflush_stop (2.4.27, laptop_mode off): TRUE once dirty·100 <= total·
 * nfract_stop_bdflush. */
gboolean wb_bdflush_should_stop (const WbBdflushParams *params,
                                 guint64                dirty_pages,
                                 guint64                total_pages);
/* The same three thresholds in pages: the state changes once dirty pages
 * exceed the returned count (floor(total·pct/100)). */
guint64 wb_bdflush_wake_thresh_pages (const WbBdflushParams *params, guint64 total_pages);
guint64 wb_bdflush_sync_thresh_pages (const WbBdflushParams *params, guint64 total_pages);
guint64 wb_bdflush_stop_thresh_pages (const WbBdflushParams *params, guint64 total_pages);

/* ------------------------------------------------------------------------
 * 2.6: global limits (get_dirty_limits / global_dirty_limits)
 * ------------------------------------------------------------------------ */

/* /proc/sys/vm dirty tunables.  A ratio and its _bytes twin are exclusive:
 * writing one zeroes the other (2.6.29+ sysctl handlers); use the setters. */
typedef struct {
  guint   dirty_ratio_pct;            /* throttle writers above this % */
  guint   dirty_background_ratio_pct; /* start background writeback above this % */
  guint64 dirty_bytes;                /* 2.6.29+: absolute limit; 0 = use ratio */
  guint64 dirty_background_bytes;     /* 2.6.29+: absolute; 0 = use ratio */
  guint   dirty_writeback_centisecs;  /* kupdate-style period: 500 (5 s) */
  guint   dirty_expire_centisecs;     /* age for kupdate writeback: 3000 (30 s) */
} WbDirtyTunables;

/* Era defaults (background/dirty): 10/40 before 2.6.22, 5/10 for
 * 2.6.22–2.6.29, 10/20 from 2.6.30; no _bytes limits. */
void wb_dirty_tunables_init (WbDirtyTunables *tunables, guint kver);
void wb_dirty_tunables_set_ratio            (WbDirtyTunables *t, guint pct);
void wb_dirty_tunables_set_bytes            (WbDirtyTunables *t, guint64 bytes);
void wb_dirty_tunables_set_background_ratio (WbDirtyTunables *t, guint pct);
void wb_dirty_tunables_set_background_bytes (WbDirtyTunables *t, guint64 bytes);

/* Memory counters the limits are computed from (pages). */
typedef struct {
  guint64  total_pages;             /* vm_total_pages */
  guint64  highmem_total_pages;     /* totalhigh_pages (0 on 64-bit) */
  guint64  free_pages;              /* NR_FREE_PAGES */
  guint64  reclaimable_pages;       /* NR_ACTIVE + NR_INACTIVE (LRU pages) */
  guint64  highmem_dirtyable_pages; /* free + LRU pages in ZONE_HIGHMEM */
  guint64  mapped_pages;            /* NR_FILE_MAPPED + NR_ANON_PAGES */
  gboolean highmem_is_dirtyable;    /* vm.highmem_is_dirtyable */
} WbMemInfo;

/* Memory the ratios apply to.  Before 2.6.24: all lowmem pages
 * (total − highmem, at least 1).  From 2.6.24 (determine_dirtyable_memory):
 * free + reclaimable − highmem part (unless highmem is dirtyable) + 1, the
 * +1 so that it is never 0. */
guint64 wb_dirtyable_pages (guint kver, const WbMemInfo *mem);

/* Global background and dirty thresholds in pages.
 *  - before 2.6.24: dirty_ratio = min(dirty_ratio, unmapped%/2), where
 *    unmapped% = 100 − mapped·100/total_pages;
 *  - before 2.6.37: dirty_ratio is at least 5;
 *  - before 2.6.29: background_ratio >= dirty_ratio → dirty_ratio/2; from
 *    2.6.29 the _bytes forms (rounded up to pages) override the ratios and
 *    background >= dirty → dirty/2 in pages;
 *  - @less_throttle (PF_LESS_THROTTLE, i.e. nfsd, or an RT task): both +1/4. */
void wb_global_dirty_limits (guint                  kver,
                             const WbDirtyTunables *tunables,
                             const WbMemInfo       *mem,
                             gboolean               less_throttle,
                             guint64               *background_pages,
                             guint64               *dirty_pages);

/* writeback_set_ratelimit: pages a CPU may dirty between calls to
 * balance_dirty_pages: total/(32·ncpus), within [16, 1024] pages (4 MiB).
 * The caller uses 8 instead while the limit is exceeded (pre-3.2). */
guint64 wb_ratelimit_pages (guint64 total_pages, guint ncpus);
/* Pages a throttled writer writes itself per balance_dirty_pages round
 * (sync_writeback_pages): 1.5·ratelimit_pages; from 2.6.33
 * 1.5·max(pages_dirtied, ratelimit_pages). */
guint64 wb_write_chunk_pages (guint kver, guint64 ratelimit_pages, guint64 pages_dirtied);

/* ------------------------------------------------------------------------
 * 2.6.24–3.1: floating proportions (lib/proportions.c) and per-BDI limits
 * ------------------------------------------------------------------------ */

/* PROP_MAX_SHIFT on 64-bit: 3·BITS_PER_LONG/4. */
#define WB_PROP_MAX_SHIFT   48
/* PROP_FRAC_SHIFT: BITS_PER_LONG − PROP_MAX_SHIFT − 1; max_ratio in this
 * fixed point (__prop_inc_percpu_max). */
#define WB_PROP_FRAC_SHIFT  15
#define WB_PROP_FRAC_BASE   (1u << WB_PROP_FRAC_SHIFT)

/* The global side (prop_descriptor): a count of events t that never decays.
 * Local counts are halved every 2^(shift−1) global events ("period/2"). */
typedef struct {
  guint   shift;       /* 1 <= shift <= WB_PROP_MAX_SHIFT */
  guint64 events;      /* t */
} WbPropGlobal;

/* One participant (prop_local_percpu / prop_local_single: same arithmetic). */
typedef struct {
  guint64 events;      /* x_j, decayed lazily */
  guint64 period;      /* global t & ~(period/2 − 1) when last normalised */
  guint   shift;       /* global shift when last normalised */
} WbPropLocal;

/* calc_period_shift: 2 + ilog2(dirty_total − 1), so that period/2 is about
 * roundup_pow_of_two(dirty limit); dirty_total below 2 counts as 2 (the
 * kernel's ilog2(0) is undefined), result capped at WB_PROP_MAX_SHIFT. */
guint wb_prop_period_shift (guint64 dirty_total_pages);

void wb_prop_global_init (WbPropGlobal *pg, guint shift);
/* prop_change_shift: the global count is rescaled by 2^(new − old) so the
 * position inside the period is kept; locals catch up when next touched. */
void wb_prop_change_shift (WbPropGlobal *pg, guint shift);
void wb_prop_local_init (WbPropLocal *pl);
/* prop_norm_*: halve x_j once per period/2 the global count has crossed
 * since @pl was last touched (zero after 64 or more). */
void wb_prop_local_normalize (const WbPropGlobal *pg, WbPropLocal *pl);
/* __prop_inc_percpu: normalise, then ++x_j and ++t. */
void wb_prop_inc (WbPropGlobal *pg, WbPropLocal *pl);
/* __prop_inc_percpu_max (2.6.25+): as wb_prop_inc, but no event at all (not
 * even the global one) while x_j > den·max_ratio%, in PROP_FRAC fixed point. */
void wb_prop_inc_max (WbPropGlobal *pg, WbPropLocal *pl, guint max_ratio_pct);
/* prop_fraction_*: p_j = x_j / (period/2 + t mod period/2). */
void wb_prop_fraction (const WbPropGlobal *pg,
                       WbPropLocal        *pl,
                       guint64            *numerator,
                       guint64            *denominator);

/* bdi_dirty_limit / get_dirty_limits (2.6.24; min/max ratios from 2.6.25):
 *   bdi = dirty·(100 − Σmin)/100·num/den + dirty·min/100, at most
 *   dirty·max/100.  With min 0, Σmin 0 and max 100 this is 2.6.24's
 *   dirty·num/den. */
guint64 wb_bdi_dirty_limit (guint64 dirty_thresh_pages,
                            guint64 numerator,
                            guint64 denominator,
                            guint   min_ratio_pct,
                            guint   sum_min_ratio_pct,
                            guint   max_ratio_pct);
/* clip_bdi_dirty_limit (2.6.24–3.1): bdi_thresh at most what is still
 * free globally (dirty_thresh − global dirty+writeback+unstable, not below
 * 0) plus this BDI's own reclaimable + writeback pages. */
guint64 wb_bdi_clip_dirty_limit (guint64 bdi_thresh_pages,
                                 guint64 dirty_thresh_pages,
                                 guint64 global_dirty_pages,
                                 guint64 bdi_dirty_pages);
/* task_dirty_limit (2.6.24–3.1): thresh −= (thresh/8)·num/den, where
 * num/den is the task's share of recent dirtying; never below thresh/2. */
guint64 wb_task_dirty_limit (guint64 thresh_pages,
                             guint64 task_numerator,
                             guint64 task_denominator);
/* balance_dirty_pages (2.6.24–3.1) steps 1–2: throttle only when the BDI
 * is over its threshold and global dirty+writeback has reached
 * (background + dirty)/2. */
gboolean wb_per_bdi_should_throttle (guint64 bdi_dirty_pages,
                                     guint64 bdi_thresh_pages,
                                     guint64 nr_dirty_pages,
                                     guint64 background_thresh_pages,
                                     guint64 dirty_thresh_pages);
/* Sleep between rounds: congestion_wait(HZ/10) up to 2.6.32; from 2.6.33
 * an exponential back-off 1, 2, 4 … jiffies up to HZ/10.  @prev_jiffies is
 * the previous sleep of this call (0 on the first round). */
guint64 wb_per_bdi_pause_jiffies (guint kver, guint hz, guint64 prev_jiffies);

/* ------------------------------------------------------------------------
 * 3.2+: IO-less dirty throttling (Wu Fengguang)
 * ------------------------------------------------------------------------ */

#define WB_RATELIMIT_CALC_SHIFT 10
#define WB_POS_RATIO_ONE        (1u << WB_RATELIMIT_CALC_SHIFT)
/* INIT_BW: 100 MiB/s in pages per second. */
#define WB_INIT_BW_PAGES_PER_S  (100u << (20 - 12))
/* DIRTY_POLL_THRESH (3.3+): 128 KiB in pages. */
#define WB_DIRTY_POLL_THRESH_PAGES 32u

/* BANDWIDTH_INTERVAL = max(HZ/5, 1); MAX_PAUSE = max(HZ/5, 1) (200 ms). */
guint64 wb_bandwidth_interval_jiffies (guint hz);
guint64 wb_max_pause_jiffies (guint hz);

/* dirty_freerun_ceiling: (thresh + bg_thresh)/2. */
guint64 wb_dirty_freerun_ceiling (guint64 thresh_pages, guint64 bg_thresh_pages);
/* hard_dirty_limit: max(thresh, global_dirty_limit). */
guint64 wb_hard_dirty_limit (guint64 thresh_pages, guint64 global_dirty_limit_pages);
/* setpoint = (freerun + limit)/2. */
guint64 wb_dirty_setpoint (guint64 thresh_pages,
                           guint64 bg_thresh_pages,
                           guint64 global_dirty_limit_pages);

/* The global dirty limit that trails thresh (global_update_bandwidth,
 * update_dirty_limit): up at once, down by 1/32 of the gap per
 * BANDWIDTH_INTERVAL, never below the current dirty count. */
typedef struct {
  guint64 limit_pages;        /* global_dirty_limit */
  guint64 update_jiffies;     /* last update time */
} WbGlobalDirtyLimit;

void     wb_global_dirty_limit_init (WbGlobalDirtyLimit *g,
                                     guint64             thresh_pages,
                                     guint64             now_jiffies);
/* One update_dirty_limit step, regardless of time. */
void     wb_update_dirty_limit (WbGlobalDirtyLimit *g, guint64 thresh_pages, guint64 dirty_pages);
/* global_update_bandwidth: the step above if BANDWIDTH_INTERVAL has passed
 * since the last one; returns whether it ran. */
gboolean wb_global_update_bandwidth (WbGlobalDirtyLimit *g,
                                     guint               hz,
                                     guint64             thresh_pages,
                                     guint64             dirty_pages,
                                     guint64             now_jiffies);

/* Inputs of the position control (bdi_position_ratio). */
typedef struct {
  guint64  thresh_pages;             /* global dirty threshold */
  guint64  bg_thresh_pages;          /* global background threshold */
  guint64  dirty_pages;              /* NR_FILE_DIRTY + NR_UNSTABLE_NFS + NR_WRITEBACK */
  guint64  global_dirty_limit_pages; /* WbGlobalDirtyLimit.limit_pages */
  guint64  bdi_thresh_pages;         /* wb_bdi_dirty_limit() */
  guint64  bdi_dirty_pages;          /* BDI reclaimable + writeback */
  guint64  write_bw_pages_per_s;     /* the BDI's avg_write_bandwidth */
  gboolean strictlimit;              /* BDI_CAP_STRICTLIMIT (3.14+, FUSE) */
} WbPosInput;

/* The global cubic alone, 1.0 = WB_POS_RATIO_ONE:
 *   x = (setpoint − dirty)·1024/(limit − setpoint + 1), truncated;
 *   pos = 1024 + x³/1024² (each product shifted right by 10).
 * 1024 at setpoint, just under 2048 at freerun (the +1 and the truncations:
 * 2045 for thresh 12000, bg 6000);
 * callers return 0 for dirty >= limit.  @clamp: 3.14's pos_ratio_polynom,
 * which clamps to [0, 2048]; 3.2 does not. */
gint64 wb_pos_ratio_polynom (guint64 setpoint_pages,
                             guint64 dirty_pages,
                             guint64 limit_pages,
                             gboolean clamp);

/* bdi_position_ratio: 0 when dirty >= limit; else the global cubic times
 * the BDI's linear factor (x_intercept = bdi_setpoint + span; below
 * x_intercept − span/4 the factor is (x_intercept − bdi_dirty)/
 * (x_intercept − bdi_setpoint + 1), else 1/4), times the reserve-area boost
 * (bdi_thresh/2)/bdi_dirty (×8 at most) when bdi_dirty < bdi_thresh/2.
 * With strictlimit (3.14+): the BDI's own cubic between its freerun and
 * bdi_thresh, and min(global, BDI) of the two ratios. */
guint64 wb_pos_ratio (const WbPosInput *in);

/* Per-BDI bandwidth state (struct backing_dev_info in 3.2). */
typedef struct {
  guint   hz;
  guint64 write_bandwidth;           /* pages/s, smoothed over ~3 s */
  guint64 avg_write_bandwidth;       /* pages/s, one more level of smoothing */
  guint64 dirty_ratelimit;           /* pages/s, the base throttle rate */
  guint64 balanced_dirty_ratelimit;  /* pages/s, last balanced estimate */
  guint64 written_stamp;             /* pages written at the last update */
  guint64 dirtied_stamp;             /* pages dirtied at the last update */
  guint64 bw_time_stamp;             /* jiffies of the last update */
} WbBdiBandwidth;

/* bdi_init: every rate starts at INIT_BW (100 MiB/s). */
void wb_bdi_bandwidth_init (WbBdiBandwidth *b, guint hz, guint64 now_jiffies);

/* bdi_update_write_bandwidth: with T = roundup_pow_of_two(3·HZ),
 *   write_bw = ((written − stamp)·HZ + write_bw·(T − elapsed)) >> log2 T,
 *   or (written − stamp)·HZ/elapsed (and avg = that) if elapsed > T;
 * avg_write_bw moves 1/8 of the way to write_bw only when the new sample
 * does not turn back (old lies between avg and the new value). */
void wb_bdi_update_write_bandwidth (WbBdiBandwidth *b,
                                    guint64         elapsed_jiffies,
                                    guint64         written_pages);

/* bdi_update_dirty_ratelimit: dirty_rate = Δdirtied·HZ/elapsed;
 * task_ratelimit = dirty_ratelimit·pos_ratio/1024 + 1; balanced =
 * task_ratelimit·write_bw/(dirty_rate|1); dirty_ratelimit steps towards
 * balanced only past min (below setpoint) or max (above) of {previous
 * balanced, balanced, task_ratelimit}, step >>= ratelimit/(2·step+1) (0 if
 * that is 64 or more: the kernel's shift would be undefined there), step =
 * (step+7)/8, and at least 1 page/s.  @pos carries the global and BDI state. */
void wb_bdi_update_dirty_ratelimit (WbBdiBandwidth   *b,
                                    const WbPosInput *pos,
                                    guint64           dirtied_pages,
                                    guint64           elapsed_jiffies);

/* __bdi_update_bandwidth: every BANDWIDTH_INTERVAL; after more than 1 s
 * idle (bw_time_stamp before @start_jiffies, the start of this
 * balance_dirty_pages call) only re-stamps.  Otherwise, when thresh > 0,
 * updates @global (may be NULL) and the dirty ratelimit, then the write
 * bandwidth.  @dirtied_pages and @written_pages are the BDI's running
 * totals.  Returns whether a new interval was taken. */
gboolean wb_bdi_update_bandwidth (WbBdiBandwidth     *b,
                                  WbGlobalDirtyLimit *global,
                                  const WbPosInput   *pos,
                                  guint64             dirtied_pages,
                                  guint64             written_pages,
                                  guint64             now_jiffies,
                                  guint64             start_jiffies);

/* dirty_poll_interval: 2^(floor(log2(thresh − dirty))/2) pages, about
 * √(thresh − dirty); 1 when dirty >= thresh. */
guint64 wb_dirty_poll_interval (guint64 dirty_pages, guint64 thresh_pages);

/* bdi_max_pause (3.2): HZ/50 + (log2 bw − log2 ratelimit)·(20·HZ)/1024
 * (20 ms per doubling of concurrent dirtiers), at most bdi_dirty·HZ/(8·bw
 * + 1), clamped to [4, MAX_PAUSE] jiffies. */
guint64 wb_bdi_max_pause_3_2 (guint   hz,
                              guint64 avg_write_bw_pages_per_s,
                              guint64 dirty_ratelimit_pages_per_s,
                              guint64 bdi_dirty_pages);
/* bdi_max_pause (3.3+): bdi_dirty/(1 + bw/roundup_pow_of_two(1 + HZ/8)) + 1
 * jiffies, at most MAX_PAUSE. */
guint64 wb_bdi_max_pause_3_3 (guint   hz,
                              guint64 avg_write_bw_pages_per_s,
                              guint64 bdi_dirty_pages);

/* One balance_dirty_pages (3.2) decision for a task that has dirtied
 * @pages_dirtied pages since its last call. */
typedef struct {
  gboolean freerun;              /* dirty <= freerun ceiling: no throttling */
  guint64  pos_ratio;            /* 1.0 = WB_POS_RATIO_ONE */
  guint64  task_ratelimit;       /* pages/s: dirty_ratelimit·pos_ratio/1024 */
  guint64  max_pause_jiffies;
  guint64  sleep_jiffies;        /* how long to sleep now (0: no sleep) */
  gboolean repeat;               /* task_ratelimit 0: sleep max_pause, then call again */
  guint64  nr_dirtied_pause;     /* the task's next nr_dirtied_pause */
} WbPause;

/* Freerun when dirty <= (thresh + bg)/2 (strictlimit: the BDI's dirty
 * against its own freerun, bg scaled by bdi_thresh/thresh): sleep 0 and
 * nr_dirtied_pause = dirty_poll_interval.  Else pause =
 * HZ·pages_dirtied/task_ratelimit, at most max_pause; a pause that rounds
 * to 0 jiffies is not slept.  nr_dirtied_pause is re-tuned so that later
 * pauses fall within (max_pause/4, max_pause): raised when pause <=
 * max_pause/4, lowered when pause >= max_pause, else @nr_dirtied_pause. */
void wb_balance_dirty_pages_pause (const WbPosInput     *pos,
                                   const WbBdiBandwidth *b,
                                   guint64               pages_dirtied,
                                   guint64               nr_dirtied_pause,
                                   WbPause              *out);

G_END_DECLS
