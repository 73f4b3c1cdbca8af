/* sim-readahead.h — file readahead window decisions, per kernel era.
 *
 * A pure decision module: it keeps the per-open-file readahead state and,
 * on each read event, says which pages to read.  It owns no pages and
 * submits no I/O; the page cache (issue 4) does that and reports events
 * back.  Units are pages (4 KiB) and page indexes within the file.
 *
 * Eras (reference: kernel-algorithms.md §6.5):
 *   - 2.4:            mm/filemap.c generic_file_readahead() (2.4.2x),
 *                     f_raend/f_ralen/f_rawin/f_ramax, vm_min_readahead 3,
 *                     vm_max_readahead 31 pages.  Per-page calls.
 *   - 2.6-pre23:      mm/readahead.c page_cache_readahead() (2.6.1x-2.6.22),
 *                     current + ahead windows, RA_FLAG_MISS shrink by 2.
 *   - ondemand-2.6.23: ondemand_readahead() of 2.6.23 (lookahead index,
 *                     interleaved marker hit "bets on the minimal" window).
 *   - ondemand-2.6.27: ondemand_readahead() of 2.6.24-2.6.30 (read in its
 *                     2.6.27 form): as 2.6.23, except that a marker hit
 *                     without matching state probes the page cache for
 *                     the first missing page at or after the hit (at most
 *                     max + 1 pages: radix_tree_next_hole); none within
 *                     max means no readahead, else the new window starts
 *                     there with size next(hole - hit), all of it async.
 *   - ondemand-6.18:  page_cache_sync_ra()/page_cache_async_ra() of 6.18
 *                     (size/async_size, next size never below the
 *                     current one, window end aligned, page-cache probes for
 *                     random reads and interleaved marker hits).
 * Interleaved streams on one open file share one state.  Both on-demand
 * eras keep a stream going through its PG_readahead marker: a marker hit
 * that does not match the state starts a new window ahead of the hit
 * (2.6.23: right after it, betting on a minimal 4 x init window; 6.18: at
 * the next missing page, whose distance is taken as the old async size,
 * plus the request, ramped up).  6.18 also probes backwards on a
 * non-sequential miss: more cached history right before the page than the
 * request means a stream, and the window is history + request (history
 * doubled if it reaches page 0), capped at max.  The probes go through
 * sim_ra_set_cache_probe().
 * 2.4 and 2.6-pre23 windows carry no marker (async_size 0, marker none).
 * posix_fadvise() on the open file (sim_ra_fadvise, mm/fadvise.c
 * generic_fadvise): SEQUENTIAL doubles the file's ra_pages, RANDOM sets
 * them to 0 before 2.6.33 and FMODE_RANDOM from 2.6.33 on (6.18: a miss
 * reads what the read asks for, force_page_cache_ra).
 * Not modelled: io_pages raising the max for oversized reads, congestion,
 * mmap faults, 2.6.24-6.9 variants (context readahead as a separate step).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SIM_RA_ERROR (sim_ra_error_quark ())
GQuark sim_ra_error_quark (void);

typedef enum {
  SIM_RA_ERROR_UNKNOWN_ERA,
  SIM_RA_ERROR_UNKNOWN_ADVICE,
} SimRaError;

typedef enum {
  SIM_RA_ERA_2_4,
  SIM_RA_ERA_2_6_PRE23,
  SIM_RA_ERA_ONDEMAND_2_6_23,
  SIM_RA_ERA_ONDEMAND_6_18,
  SIM_RA_ERA_ONDEMAND_2_6_27,
} SimRaEra;

#define SIM_RA_PAGE_BYTES        4096u
/* VM_MAX_READAHEAD / VM_READAHEAD_PAGES: 128 KiB. */
#define SIM_RA_DEFAULT_KB        128u
/* 2.6 VM_MIN_READAHEAD = 16 KiB: the floor of the pre-2.6.23 miss shrink. */
#define SIM_RA_26_MIN_PAGES      4u
/* 2.6 VM_MAX_CACHE_HIT: pages found cached before readahead turns off. */
#define SIM_RA_26_MAX_CACHE_HIT  256u
/* 2.4 sysctl defaults vm_min_readahead / vm_max_readahead. */
#define SIM_RA_24_MIN_PAGES      3u
#define SIM_RA_24_MAX_PAGES      31u
/* "No page" for SimRaWindow.marker. */
#define SIM_RA_NO_MARKER         G_MAXUINT64
/* 6.18 large folios: MAX_PAGECACHE_ORDER with 4 KiB pages on x86-64
 * (HPAGE_PMD_ORDER). */
#define SIM_RA_618_MAX_FOLIO_ORDER  9u

/* What to read: pages [start, start + nr_pages).  Pages already cached are
 * skipped by the caller (the kernel allocates only missing pages).  The
 * page at @marker gets PG_readahead if the caller allocates it; in 6.18 it
 * is the first page of the folio that holds the window's mark, whose
 * order (sim_ra_window_folio_order() at @marker) the caller keeps for
 * sim_ra_async().  @is_async says nobody waits for this window yet (ahead
 * window, marker-hit window). */
typedef struct {
  guint64  start;
  guint64  nr_pages;
  guint64  async_size;
  guint64  marker;
  gboolean is_async;
  /* 6.18 folios: of @folio_order from @start (smaller where unaligned or
   * at the end), order 0 from @order0_from on (see
   * sim_ra_window_folio_order()). */
  guint    folio_order;
  guint64  order0_from;
} SimRaWindow;

/* Does the page cache hold page @index of this file?  Used for the kernel's
 * page-cache probes (6.18 history/next-miss probes, 2.6 check_ra_success).
 * Without a probe every page counts as not cached. */
typedef gboolean (*SimRaCachedFunc) (guint64 index, gpointer user_data);
/* 6.18: the order of the folio that holds cached page @index (0 if the
 * page is not cached); the probes' xarray walks depend on it. */
typedef guint (*SimRaFolioFunc) (guint64 index, gpointer user_data);

/* Per open file (the kernel's struct file_ra_state, or 2.4's f_ra* fields).
 * Plain data; fields are for reading by tests and reports. */
typedef struct {
  SimRaEra era;
  guint64  max_pages;       /* ra->ra_pages, copied at open */
  gboolean random;          /* 6.18: FMODE_RANDOM (POSIX_FADV_RANDOM) */
  guint64  io_pages;        /* the device's request size (bdi->io_pages), for FMODE_RANDOM */
  SimRaCachedFunc cached;
  SimRaFolioFunc folio;
  gpointer cached_data;

  /* 2.6-pre23 and on-demand: last readahead window [start, start + size),
   * marker async_size pages before its end (2.6.23: lookahead_index). */
  guint64  start;
  guint64  size;
  guint64  async_size;
  /* 6.18: the folio order the last window asked for (ra->order). */
  guint    order;
  /* Previous read: 2.6.23 last page read (prev_index), 6.18 first page
   * after it (prev_pos >> PAGE_SHIFT); pre23 prev_page.  Starts at -1. */
  guint64  prev_index;

  /* 2.6-pre23 ahead window and flags. */
  guint64  ahead_start;
  guint64  ahead_size;
  guint    flags;
  guint64  cache_hit;

  /* 2.4 (names after struct file) and the file size it needs. */
  guint64  raend;
  guint64  ralen;
  guint64  rawin;
  guint64  ramax;
  gboolean reada_ok;
  guint64  file_pages;
} SimRaState;

#define SIM_RA_FLAG_MISS     0x01u  /* RA_FLAG_MISS */
#define SIM_RA_FLAG_INCACHE  0x02u  /* RA_FLAG_INCACHE */

gboolean     sim_ra_era_parse (const char *name, SimRaEra *era, GError **error);
const char  *sim_ra_era_name (SimRaEra era);

/* read_ahead_kb to pages (rounded down, like bdi ra_pages). */
guint64      sim_ra_pages_from_kb (guint64 read_ahead_kb);

/* file_ra_state_init(): a new open file with @max_pages of readahead
 * (2.4: the device's max_readahead, normally SIM_RA_24_MAX_PAGES).  A later
 * read_ahead_kb change does not reach already open files in any era; call
 * sim_ra_set_max_pages() to model a reopen or POSIX_FADV_NORMAL. */
void         sim_ra_init (SimRaState *ra, SimRaEra era, guint64 max_pages);
void         sim_ra_set_max_pages (SimRaState *ra, guint64 max_pages);
void         sim_ra_set_cache_probe (SimRaState *ra, SimRaCachedFunc cached,
                                     gpointer user_data);
/* 6.18: the folio-order probe, with the cache probe's @user_data. */
void         sim_ra_set_folio_probe (SimRaState *ra, SimRaFolioFunc folio);
/* The order of the folio that starts at @index inside window @w (the
 * caller walks the window folio by folio from w->start). */
guint        sim_ra_window_folio_order (const SimRaWindow *w, guint64 index);
/* File size in pages; only 2.4 decides with it (readahead stops at EOF). */
void         sim_ra_set_file_pages (SimRaState *ra, guint64 file_pages);

/* posix_fadvise() advice on the whole file, as fio's fadvise_hint gives it
 * (sequential jobs SEQUENTIAL, random ones RANDOM). */
typedef enum {
  SIM_RA_ADVICE_NORMAL,
  SIM_RA_ADVICE_SEQUENTIAL,
  SIM_RA_ADVICE_RANDOM,
} SimRaAdvice;

gboolean     sim_ra_advice_parse (const char *name, SimRaAdvice *advice, GError **error);
const char  *sim_ra_advice_name (SimRaAdvice advice);
/* generic_fadvise() on an open file whose device has @bdi_pages of
 * read_ahead_kb and @io_pages per request (max_sectors_kb): NORMAL and
 * SEQUENTIAL set ra_pages to @bdi_pages and twice that, RANDOM to 0 before
 * 2.6.33 and FMODE_RANDOM from then on.  2.4 has no fadvise (2.5.60 added
 * it; the call fails and fio goes on): no effect. */
void         sim_ra_fadvise (SimRaState *ra, SimRaAdvice advice, guint64 bdi_pages,
                             guint64 io_pages);

/* ---- On-demand eras (2.6.23, 6.18) ----
 * Call sim_ra_sync() when page @index of a read of @req_pages (pages left
 * in this read, from @index) is not cached (page_cache_sync_readahead), and
 * sim_ra_async() when the read finds page @index cached with PG_readahead
 * (page_cache_async_readahead; the caller clears the flag), with
 * @folio_order the order of the marker's folio (0 before 6.18): the hit
 * folio's size rounds the expected index down.
 * A 6.18 marker sits on its folio's first page, so a read that starts
 * inside a large folio past it does not see it (the kernel looks the
 * folio up and would): the one place pages stand for folios.  Both return
 * TRUE and fill @out when something should be read.  As in the kernel, the
 * page read by a sync window may itself carry the new marker (2.6.23 with
 * req >= window): check it and call sim_ra_async() for it too.  After each
 * read() call sim_ra_read_done() with the pages it covered. */
gboolean     sim_ra_sync (SimRaState *ra, guint64 index, guint64 req_pages,
                          SimRaWindow *out);
gboolean     sim_ra_async (SimRaState *ra, guint64 index, guint64 req_pages,
                           guint folio_order, SimRaWindow *out);
void         sim_ra_read_done (SimRaState *ra, guint64 index, guint64 nr_pages);

/* ---- 2.6-pre23 ----
 * page_cache_readahead(): call at the first page of every read and again
 * when the read reaches *next_index (do_generic_mapping_read's next_index).
 * Fills up to two windows (current, then ahead) and returns how many.
 * sim_ra_legacy_miss() is handle_ra_miss(): the read did not find a page
 * in the cache (readahead thrashing or no readahead there). */
guint        sim_ra_legacy_read (SimRaState *ra, guint64 index,
                                 guint64 req_pages, SimRaWindow out[2],
                                 guint64 *next_index);
void         sim_ra_legacy_miss (SimRaState *ra);

/* ---- 2.4 ----
 * sim_ra24_read_begin() is the prologue of do_generic_file_read() for a
 * read of @count_bytes at byte @pos; then call sim_ra24_page() for each
 * page the read touches, with @page_locked TRUE when the page is not yet
 * up to date (just submitted by readpage, or still under I/O) and FALSE
 * when it is cached and up to date.  Returns TRUE with a window to read. */
void         sim_ra24_read_begin (SimRaState *ra, guint64 pos_bytes,
                                  guint64 count_bytes);
gboolean     sim_ra24_page (SimRaState *ra, guint64 index,
                            gboolean page_locked, SimRaWindow *out);

G_END_DECLS
