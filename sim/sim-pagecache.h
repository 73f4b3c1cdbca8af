/* sim-pagecache.h — the page cache: buffered reads through on-demand
 * readahead (the read half of issue 4; dirty pages and writeback come next).
 *
 * Follows 2.6.23+ do_generic_file_read: for each page of a read, a missing
 * page starts synchronous readahead (page_cache_sync_readahead), a page
 * carrying the PG_readahead marker starts asynchronous readahead, and the
 * reader sleeps on a page that is still under I/O (unplugging its queue
 * first).  Pages live on one LRU; a page is reclaimed from the LRU's cold
 * end when it is up to date, unlocked and nobody waits for it; what the
 * scan does with the pages it cannot free follows the era's mm/vmscan.c
 * (SimReclaimMode: 2.6's shrink_cache and shrink_list as in 2.6.9-2.6.11,
 * read in a 2.6.11 tree; 3.2's putback_lru_page).  Readahead
 * windows come from sim/sim-readahead.c; a readahead page that cannot be
 * allocated truncates the window, as __GFP_NORETRY allocations do; a page
 * the reader needs waits for memory.  Page structures come from chunks
 * that grow up to the memory size, so the steady state allocates nothing.
 *
 * A readahead run's bios: before 4.3, mpage_readpages sized each bio to the
 * queue's limits (bio_get_nr_vecs), so each one ends on its own.  From 4.3
 * a bio may be of any size and the block layer splits it to the queue's
 * limits (bio_split_to_limits, the parts chained to it); 6.18's
 * mpage_readahead puts up to BIO_MAX_VECS (256) folios in one bio and its
 * end_io (mpage_read_end_io -> folio_end_read) runs once the last part has
 * ended.  Under the 6.18 readahead era a run is such a bio: its pages
 * become up to date together.  Checked on Linux 6.18.44: 64 KiB reads
 * with read_ahead_kb 2560 from an emulated disk wait once per 2.5 MiB
 * window, about 35 ms each, not once per 1 MiB request.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-list.h"
#include "sim/sim-queue.h"
#include "sim/sim-readahead.h"
#include "sim/sim-pageindex.h"

G_BEGIN_DECLS

#define SIM_PAGE_BYTES 4096u
#define SIM_PAGE_SECTORS (SIM_PAGE_BYTES / 512u)

typedef struct _SimPageCache SimPageCache;
typedef struct _SimPage      SimPage;
typedef struct _SimPageRead  SimPageRead;
typedef struct _SimPageWrite SimPageWrite;
typedef struct _SimPageSync  SimPageSync;
typedef struct _WbPolicy     WbPolicy;

/* A backing device's writeback state (struct backing_dev_info): its dirty
 * pages, oldest first, and counts.  One per request queue. */
typedef struct {
  SimRequestQueue *q;
  SimList          dirty;          /* SimPage, in the order they were dirtied */
  guint64          nr_dirty;
  guint64          nr_writeback;
  guint            parked_writes;  /* write bios waiting for a request of its queue */
  guint64          written;        /* pages whose writeback completed */
  guint64          dirtied;        /* pages that became dirty */
  /* Throttling and flusher accounting (for time series): */
  guint            nr_throttled;   /* writers held in balance_dirty_pages now */
  guint64          pauses;         /* their sleeps begun (wb_pause) */
  SimTime          pause_ns;       /* total length of those sleeps */
  SimTime          max_pause_ns;   /* longest since the reader reset it */
  SimTime          last_bdp_sleep_ns; /* the last of those sleeps began (bdi->last_bdp_sleep,
                                    * read by blk-wbt); SIM_TIME_NEVER: none yet */
  guint64          flusher_pages;  /* pages the flusher started writing */
} SimBdi;

/* A file: a contiguous extent of a device (no file system layout yet). */
typedef struct {
  SimPageCache    *pc;
  SimRequestQueue *q;
  guint            id;
  char            *name;
  guint64          start_sector;
  guint64          size_bytes;    /* whole sectors; the last page may be partial */
  guint64          size_pages;    /* pages holding size_bytes, the partial last one included */
  guint64          data_bytes;    /* i_size: bytes from the start that hold data (size_bytes
                                   * unless truncated; writes past it extend it) */
  guint64          ra_pages;      /* the device's read_ahead_kb in pages */
  SimBdi          *bdi;
  guint64          nr_writeback;  /* its pages under writeback */
  guint64          written;       /* its pages whose writeback completed */
  SimPageIndex     pages;         /* its cached pages (SimPage) by page index */
} SimFile;

typedef void (*SimPageReadDone) (Sim *sim, SimPageRead *rd, SimTime now_ns);

/* One read() in progress, embedded in the caller's I/O; the caller fills
 * the public fields and keeps it alive until @done runs. */
struct _SimPageRead {
  SimFile         *file;
  SimRaState      *ra;            /* the opener's readahead state */
  SimIoContext    *ioc;
  guint64          offset_bytes;  /* whole sectors */
  guint64          bytes;         /* whole sectors; partial pages are whole pages */
  SimPageReadDone  done;
  gpointer         done_data;

  /* private below this line */
  guint64          index;
  guint64          end_index;
  guint64          ra_asked;      /* 2.4 and 2.6-pre23: the last index readahead
                                   * was consulted for (not again after a sleep) */
  guint64          ra_next_index; /* 2.6-pre23: where page_cache_readahead runs next */
  SimList          wait_link;     /* on a page's or the memory waiters */
  SimPage         *wait_page;     /* the page it sleeps on, or NULL */
  gboolean         started;
};

typedef void (*SimPageWriteDone) (Sim *sim, SimPageWrite *wr, SimTime now_ns);
/* A throttled writer's next balance_dirty_pages pass (the policy's). */
typedef void (*SimPageWritePassFn) (gpointer policy, SimPageWrite *wr);

/* One buffered write() in progress, embedded in the caller's I/O. */
struct _SimPageWrite {
  SimFile          *file;
  SimIoContext     *ioc;
  guint64           offset_bytes;  /* whole sectors */
  guint64           bytes;         /* whole sectors; partial pages are read first */
  SimPageWriteDone  done;
  gpointer          done_data;
  /* Optional (a writer on a CPU): called from an event before each pass
   * of its balance_dirty_pages loop that follows a sleep; the caller runs
   * the pass's CPU work on the writer's thread, then calls
   * sim_page_cache_write_pass_done().  NULL: passes cost nothing. */
  void            (*pass) (SimPageWrite *wr, gpointer data);
  gpointer          pass_data;

  /* private below this line */
  guint64           index;
  guint64           end_index;
  guint64           passes;        /* balance passes after a sleep */
  SimPageWritePassFn pass_fn;      /* the pass in progress */
  gpointer          pass_policy;
  SimTime           pause_until_ns;/* the throttling sleep's end */
  guint64           dirtied;       /* pages this write made dirty */
  guint64           written;       /* pages the writer wrote back itself (throttling) */
  guint64           reclaimed;     /* pages its allocations reclaimed (direct reclaim) */
  SimList           wait_link;
  SimPage          *wait_page;     /* the page it sleeps on, or NULL */
  SimEventId        pause;         /* a throttling sleep in progress */
  gboolean          throttled;     /* counted in its BDI's nr_throttled */
  gint              step;          /* the policy's state while throttling */
  guint64           balance_left;  /* the policy's balance calls still due */
};

typedef void (*SimPageSyncDone) (Sim *sim, SimPageSync *sy, SimTime now_ns);

/* One fsync() (file set) or sync() (file NULL) in progress, embedded in the
 * caller's I/O; the caller fills the public fields. */
struct _SimPageSync {
  SimFile          *file;         /* NULL: every file (sync) */
  SimIoContext     *ioc;
  SimPageSyncDone   done;
  gpointer          done_data;

  /* private below this line */
  SimTime           start_ns;
  guint64           start_seq;      /* pages dirtied before the call */
  guint64           target_written; /* done once this many are written */
  guint             rounds;
  SimList           wait_link;
};

typedef struct {
  guint64 hits;                   /* pages found up to date */
  guint64 misses;                 /* pages a reader found missing */
  guint64 waits;                  /* sleeps on a page under I/O */
  guint64 readahead_pages;        /* pages read by readahead windows */
  guint64 read_ios;               /* bios submitted */
  guint64 reclaimed;              /* pages evicted */
  guint64 memory_waits;           /* readers that waited for a free page */
  guint64 partial_page_reads;     /* uncached pages a write covered in part, read first */
  guint64 dirtied;                /* pages that became dirty */
  guint64 written;                /* pages whose writeback completed */
  guint64 write_ios;              /* writeback bios submitted */
  guint64 rotated;                /* pages reclaim scanned and put back at the hot end */
  guint64 syncs;                  /* fsync() and sync() calls completed */
  guint64 sync_pages;             /* pages they started writing back */
} SimPageCacheStats;

SimPageCache *sim_page_cache_new   (Sim        *sim,
                                    guint64     memory_bytes,
                                    SimRaEra    era);
void          sim_page_cache_free  (SimPageCache *pc);
SimRaEra      sim_page_cache_era   (const SimPageCache *pc);

/* A file over [offset_bytes, offset_bytes + size_bytes) of @q's device;
 * owned by the cache. */
SimFile      *sim_page_cache_open  (SimPageCache    *pc,
                                    SimRequestQueue *q,
                                    const char      *name,
                                    guint64          offset_bytes,
                                    guint64          size_bytes,
                                    guint64          read_ahead_kb);
/* Initialise an opener's readahead state for @file. */
void          sim_page_cache_ra_init (SimPageCache *pc, SimFile *file, SimRaState *ra);
/* posix_fadvise(@advice) on the opener's file (sim_ra_fadvise with @file's
 * read_ahead_kb and its queue's request size). */
void          sim_page_cache_fadvise (SimFile *file, SimRaState *ra, SimRaAdvice advice);
/* open(O_TRUNC), as dd of=FILE and cp do: the file holds no data until it
 * is written, so a write() that covers a page in part past what was
 * written reads nothing (its blocks are new).  Before any I/O. */
void          sim_page_cache_truncate (SimFile *file);

/* Start @rd.  @done runs from an event of its own (also for a read that is
 * all cache hits), so callers never recurse. */
void          sim_page_cache_read  (SimPageCache *pc,
                                    SimPageRead  *rd);

/* Buffered write: the pages become dirty, then the writeback policy may
 * throttle the writer (balance_dirty_pages) before @done runs (always from
 * an event of its own). */
void          sim_page_cache_write (SimPageCache *pc,
                                    SimPageWrite *wr);
/* A task will read or write byte @offset_bytes of @file @ahead I/Os from
 * now (1 or 2): the index lines that I/O will read start loading, one
 * level of the index per call (sim_page_index_prefetch), so that a random
 * reader or writer meets its page's index node in the processor's cache
 * rather than in memory.  Changes nothing the simulation sees. */
void          sim_page_cache_prefetch (SimPageCache *pc, SimFile *file,
                                       guint64 offset_bytes, guint ahead);
/* For policies: the throttled writer may return from write(). */
void          sim_page_cache_write_finish (SimPageCache *pc,
                                    SimPageWrite *wr);
/* What direct reclaim does with a page it scanned and could not free
 * (reclaim_one and reclaim_one_2_4 in sim-pagecache.c):
 *  - KEEP_COLD: it stays at the cold end and the allocating task waits
 *    for the next completion once a scan finds nothing (the default: no
 *    writeback era, write-through);
 *  - PUTBACK: 2.6 up to 3.1 (shrink_cache's putback loop,
 *    add_page_to_inactive_list): to the hot end, unmarked, and a dirty page
 *    it writes itself (pageout) is marked PG_reclaim first;
 *  - ROTATE: 3.2+: no pageout, every such page to the hot end marked
 *    PG_reclaim;
 *  - LAUNDER_OWN, LAUNDER_ALL: 2.4 (shrink_cache, sync_page_buffers): every
 *    page scanned to the hot end, a dirty one written the second time it
 *    is met even to a congested queue, and the task waits on a page under
 *    writeback that reclaim wrote (2.4.18), or on any met a second time
 *    (2.4.19-pre5 on); a call looks at up to a third of the pages divided
 *    by each pass's priority and frees up to 32. */
typedef enum {
  SIM_RECLAIM_KEEP_COLD,
  SIM_RECLAIM_PUTBACK,
  SIM_RECLAIM_ROTATE,
  SIM_RECLAIM_LAUNDER_OWN,
  SIM_RECLAIM_LAUNDER_ALL,
} SimReclaimMode;

void          sim_page_cache_set_reclaim_mode (SimPageCache *pc, SimReclaimMode mode);
/* The CPU time the kernel spends on each page it writes back (the
 * writepages path: page locking, set_page_writeback, bio building) before
 * the page's bio reaches the block layer.  A submitter (the flusher, an
 * fsync's task) prepares its pages one after another inside one plug
 * section (wb_writeback, ext4_do_writepages: blk_start_plug around the
 * pass), so each bio is queued its pages x cost after the one before; a
 * bio that sleeps (a request, a wbt token) stops the submitter until it
 * wakes, as it stops the kernel's task; the section ends when the last
 * bio is queued.  0 (the default): all at once.  Pages count as under
 * writeback from the start. */
void          sim_page_cache_set_writeback_page_cost (SimPageCache *pc, SimTime ns_per_page);
/* At most @pages pages per writeback bio (0: the queue's limits): a block
 * device's page cache writes through buffer heads, one bio a block
 * (fs/buffer.c block_write_full_folio -> submit_bh_wbc), so 4 KiB bios
 * that merge into requests in the submitter's plug; a file system's
 * writepages builds larger ones.  Applies with a page cost. */
void          sim_page_cache_set_writeback_bio_pages (SimPageCache *pc, guint64 pages);
/* The identity the writeback policy's flusher submits with: pages it
 * starts count in SimBdi.flusher_pages. */
void          sim_page_cache_set_flusher (SimPageCache *pc, const SimIoContext *flusher);
/* For policies: @wr is held in balance_dirty_pages (counted in its BDI's
 * nr_throttled until sim_page_cache_write_finish). */
void          sim_page_cache_throttle (SimPageCache *pc, SimPageWrite *wr);
/* For policies: run @fn (@policy, @wr) as @wr's next balance pass, after
 * the writer's CPU work for it when @wr has a pass hook (at once if not). */
void          sim_page_cache_write_pass (SimPageCache *pc,
                                    SimPageWrite *wr,
                                    SimPageWritePassFn fn,
                                    gpointer      policy);
/* For the pass hook's caller: the pass's CPU work is done. */
void          sim_page_cache_write_pass_done (SimPageCache *pc,
                                    SimPageWrite *wr);
/* For policies: @fn (@data) is called each time a device's queue frees a
 * write request below its congestion-off threshold (2.6's freed_request ->
 * clear_queue_congested -> wake_up(&congestion_wqh[WRITE]): one wait queue
 * for the machine, so every task in blk_congestion_wait wakes, whichever
 * queue it waits for).  NULL: none. */
void          sim_page_cache_set_congestion_wake (SimPageCache *pc,
                                    void (*fn) (gpointer data),
                                    gpointer      data);
/* For policies: @n tasks in congestion_wait were woken just now (by the
 * request freed last).  For the host model, which charges the waker:
 * the tasks woken since the last call. */
void          sim_page_cache_congestion_woken (SimPageCache *pc, guint n);
guint64       sim_page_cache_take_congestion_woken (SimPageCache *pc);
/* Let @q's freed write requests wake congestion waiters too (a queue
 * without files of its own: an O_DIRECT or raw device's; those with
 * files are watched from sim_page_cache_open). */
void          sim_page_cache_watch_queue (SimPageCache *pc,
                                    SimRequestQueue *q);
/* Devices with dirty pages (a file system each: the superblocks
 * writeback_inodes visits), or with writeback bios waiting for a request:
 * pages count as under writeback from the start here, while the kernel's
 * submitter sleeps in get_request_wait inside writepages with the rest of
 * its pages still dirty and its inode on s_io. */
guint         sim_page_cache_dirty_bdis (const SimPageCache *pc);
/* Takes ownership of @policy (NULL: no writeback, pages stay dirty). */
void          sim_page_cache_set_policy (SimPageCache *pc, WbPolicy *policy);

/* Start writeback of up to @max_pages dirty pages, oldest first, of @bdi
 * (NULL: of every device, oldest across them), only pages dirtied at or
 * before @dirtied_before_ns (SIM_TIME_NEVER: any); bios are async writes
 * submitted as @ioc.  Returns the pages started. */
guint64       sim_page_cache_start_writeback (SimPageCache       *pc,
                                    SimBdi             *bdi,
                                    guint64             max_pages,
                                    SimTime             dirtied_before_ns,
                                    const SimIoContext *ioc);
/* How many pages sim_page_cache_start_writeback (@pc, @bdi, @max_pages,
 * @dirtied_before_ns, ...) would start now, at most @max_pages, without
 * starting any; *@file (may be NULL) is the first one's file, or NULL when
 * none.  For a submitter that does its CPU work per page before the bios
 * go out (the host model's pdflush). */
guint64       sim_page_cache_writeback_peek (const SimPageCache *pc,
                                    const SimBdi       *bdi,
                                    guint64             max_pages,
                                    SimTime             dirtied_before_ns,
                                    const SimFile     **file);
/* fsync(@sy->file) or sync() (file NULL), WB_SYNC_ALL: start writeback of
 * every page dirtied before the call (synchronous writes, waiting for
 * request slots like any submitter), then wait until as many pages have
 * finished writeback as were dirty or under writeback then.  Pages dirtied
 * during the call are not waited for (the kernel's TOWRITE tagging, which
 * keeps fsync from livelocking behind a busy writer).  @done runs from an
 * event of its own. */
void          sim_page_cache_fsync (SimPageCache *pc, SimPageSync *sy);
/* Whether @wr's pages are all clean (written back, or never dirty). */
gboolean      sim_page_cache_write_clean (SimPageCache *pc, SimPageWrite *wr);
/* Park @wr until the next writeback completion, then call @fn. */
void          sim_page_cache_wait_writeback (SimPageCache *pc, SimPageWrite *wr);

guint64       sim_page_cache_nr_dirty     (const SimPageCache *pc);
guint64       sim_page_cache_nr_writeback (const SimPageCache *pc);
guint64       sim_page_cache_max_pages    (const SimPageCache *pc);
GPtrArray    *sim_page_cache_bdis         (const SimPageCache *pc);   /* SimBdi */

guint64       sim_page_cache_pages (const SimPageCache *pc);   /* pages in use */
const SimPageCacheStats *sim_page_cache_stats (const SimPageCache *pc);
/* Checks LRU, page indexes and counts; for g_assert() in tests. */
gboolean      sim_page_cache_check (const SimPageCache *pc);

G_END_DECLS
