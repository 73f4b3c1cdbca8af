/* sim-pagecache.c — see sim-pagecache.h. */
#include "sim/sim-pagecache.h"
#include "sim/sim-writeback.h"
#include "sim/sim-mem.h"

#include <string.h>

/* A page struct is one cache line: a 1 GiB cache holds 262,144 of them,
 * which the buffered paths visit in random order, so their time goes to
 * cache misses (iosim bench --workload buffered-write).  Tasks sleeping on
 * a page wait in a hashed table, not in the page (PageWaitBucket). */
struct _SimPage {
  SimFile  *file;            /* NULL while free */
  guint64   index;
  union {
    SimList  lru;            /* on the LRU while cached */
    SimPage *free_next;      /* on the free list while free */
  };
  SimTime   dirtied_ns;
  SimList   dirty_link;      /* on its BDI's dirty list while dirty */
  guint64   dirty_seq : 52;  /* when it last became dirty, in dirtyings */
  guint64   folio_order : 4; /* 6.18: order of the readahead folio it is in */
  guint64   uptodate : 1;
  guint64   locked : 1;      /* read I/O in flight */
  guint64   readahead : 1;   /* PG_readahead marker */
  guint64   dirty : 1;
  guint64   writeback : 1;   /* write I/O in flight */
  guint64   reclaim : 1;     /* PG_reclaim: to the cold end when its write ends */
  guint64   waited : 1;      /* a task sleeps on it (PG_waiters) */
  guint64   wait_io : 1;     /* 2.4 reclaim met it dirty once (BH_Wait_IO) */
};

G_STATIC_ASSERT (sizeof (SimPage) == 64);

/* Page structs per chunk: 2 MiB (one huge page, sim-mem.h), or the whole
 * cache when it is smaller. */
#define PAGE_CHUNK_MAX (SIM_MEM_HUGE_BYTES / sizeof (SimPage))

/* A free list of items of one size, carved from chunks of FREE_LIST_CHUNK
 * kept until the page cache goes (SimPageCache.chunks), so that the steady
 * state allocates nothing.  A free item's first pointer links the list. */
#define FREE_LIST_CHUNK 64

typedef struct {
  gpointer head;
  gsize    item_bytes;
} FreeList;

/* 6.18: a readahead bio the block layer split to the queue's limits; its
 * pages become up to date when the last part ends (see sim-pagecache.h). */
#define READ_BIO_MAX_FOLIOS 256u    /* BIO_MAX_VECS: a bio_vec per folio */

typedef struct _ReadBio ReadBio;
struct _ReadBio {
  SimPage *first;
  guint64  nr_pages;
  guint    parts_left;   /* parts queued and not ended, + 1 while queueing
                          * (bio_chain's __bi_remaining) */
};

/* Waiters for bios parked on a full request pool. */
typedef struct {
  SimBioWaiter  w;
  SimPageCache *pc;
  SimBdi       *bdi;           /* a write's BDI (parked_writes), or NULL */
  SimIoContext *ioc;           /* a write's submitter (parked_writes), or NULL */
} PcWaiter;

/* Tasks sleeping on pages, hashed by page: the kernel's page wait table
 * (mm/filemap.c page_waitqueue(), 256 entries by PAGE_WAIT_TABLE_BITS 8,
 * with the PG_waiters bit of 4.10 saying whether a page has any), so that
 * a page needs no wait list of its own.  Readers and writers are kept
 * apart so that a page's readers are woken before its writers, each in
 * the order they slept. */
#define PAGE_WAIT_BITS 8
#define PAGE_WAIT_BUCKETS (1u << PAGE_WAIT_BITS)

typedef struct {
  SimList readers;           /* SimPageRead.wait_link */
  SimList writers;           /* SimPageWrite.wait_link */
} PageWaitBucket;

/* A run of contiguous pages a writeback submitter still has to prepare
 * and queue (sim_page_cache_set_writeback_page_cost). */
typedef struct _PacedRun PacedRun;
struct _PacedRun {
  PacedRun *next;
  SimFile  *file;
  guint64   first;
  guint64   n;
  guint32   flags;
};

/* One writeback submitter (the flusher, an fsync's task): it prepares
 * its runs' pages one after another, queueing each bio when its pages are
 * done, inside one plug section, and stops while a bio of it sleeps. */
typedef struct {
  SimPageCache       *pc;
  const SimIoContext *ioc;
  PacedRun           *head, *tail;
  gboolean            busy;       /* a step is scheduled, or a bio of it sleeps */
  SimPlug             plug;
  SimRequestQueue    *plug_q;     /* the queue of the open plug section, or NULL */
  SimBioWaiter        waiter;     /* its sleeping bio's */
} Submitter;

struct _SimPageCache {
  Sim        *sim;
  SimRaEra    era;
  guint64     max_pages;
  guint64     used_pages;
  SimPage    *free_list;
  guint64     allocated_pages;      /* page structs in chunks */
  guint64     chunk_pages;          /* page structs per chunk */
  GPtrArray  *page_chunks;          /* of sim_mem_chunk_alloc */
  GPtrArray  *chunks;
  PageWaitBucket page_waits[PAGE_WAIT_BUCKETS];
  SimPageIndexPool *index_pool;     /* nodes of the files' page indexes */
  SimList     lru;                  /* cold end first */
  SimList     memory_waiters;       /* SimPageRead waiting for a free page */
  GPtrArray  *files;
  FreeList    free_waiters;         /* PcWaiter */
  FreeList    free_read_bios;       /* ReadBio */
  GPtrArray  *bdis;                 /* SimBdi, one per request queue */
  guint64     nr_dirty;
  guint64     nr_writeback;
  SimList     memory_waiters_w;     /* SimPageWrite waiting for a free page */
  SimList     writeback_waiters;    /* SimPageWrite parked by their policy */
  SimList     sync_waiters;         /* SimPageSync waiting for completions */
  WbPolicy   *policy;
  SimReclaimMode reclaim_mode;      /* see reclaim_one */
  guint64     dirty_seq;            /* pages made dirty so far (fsync's tag) */
  const SimIoContext *flusher;
  SimTime     wb_page_cost_ns;      /* sim_page_cache_set_writeback_page_cost */
  guint64     wb_bio_pages;         /* sim_page_cache_set_writeback_bio_pages; 0: limits */
  GHashTable *submitters;           /* SimIoContext* -> Submitter* */
  FreeList    free_runs;            /* PacedRun */
  SimPageCacheStats stats;
  void      (*congestion_wake) (gpointer data);
  gpointer    congestion_wake_data;
  guint64     congestion_woken;     /* not yet taken by the host model */
};

static void write_continue (SimPageCache *pc, SimPageWrite *wr);

static void read_continue (SimPageCache *pc, SimPageRead *rd, gboolean in_event);

/* ---- setup ---------------------------------------------------------------- */

/* A queue freed a request: 2.6's clear_queue_congested wakes the one
 * congestion wait queue of the machine below the off threshold. */
static void
request_freed (gpointer data, SimRequestQueue *q, SimOp op)
{
  SimPageCache *pc = data;
  if (op == SIM_OP_WRITE && pc->congestion_wake && sim_queue_congestion_off (q, op))
    pc->congestion_wake (pc->congestion_wake_data);
}

/* Number of pages that bytes [offset, offset + bytes) touch, partial first
 * and last pages included. */
static guint64
pages_spanning (guint64 offset_bytes, guint64 bytes)
{
  guint64 end_bytes = offset_bytes + bytes;
  g_assert (end_bytes >= offset_bytes);
  return (end_bytes + SIM_PAGE_BYTES - 1) / SIM_PAGE_BYTES - offset_bytes / SIM_PAGE_BYTES;
}

SimPageCache *
sim_page_cache_new (Sim *sim, guint64 memory_bytes, SimRaEra era)
{
  SimPageCache *pc = g_new0 (SimPageCache, 1);
  pc->sim = sim;
  pc->era = era;
  pc->max_pages = MAX (G_GUINT64_CONSTANT (64), memory_bytes / SIM_PAGE_BYTES);
  pc->chunk_pages = MIN (pc->max_pages, PAGE_CHUNK_MAX);
  pc->page_chunks = g_ptr_array_new_with_free_func (sim_mem_chunk_free);
  pc->chunks = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < PAGE_WAIT_BUCKETS; i++)
    {
      sim_list_init (&pc->page_waits[i].readers);
      sim_list_init (&pc->page_waits[i].writers);
    }
  pc->free_waiters.item_bytes = sizeof (PcWaiter);
  pc->free_read_bios.item_bytes = sizeof (ReadBio);
  pc->free_runs.item_bytes = sizeof (PacedRun);
  pc->submitters = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  pc->index_pool = sim_page_index_pool_new ();
  sim_list_init (&pc->lru);
  sim_list_init (&pc->memory_waiters);
  sim_list_init (&pc->memory_waiters_w);
  sim_list_init (&pc->writeback_waiters);
  sim_list_init (&pc->sync_waiters);
  pc->files = g_ptr_array_new ();
  pc->bdis = g_ptr_array_new_with_free_func (g_free);
  return pc;
}

static void
file_free (SimFile *f)
{
  g_free (f->name);
  g_free (f);
}

void
sim_page_cache_free (SimPageCache *pc)
{
  if (pc == NULL)
    return;
  wb_policy_free (pc->policy);
  for (guint i = 0; i < pc->bdis->len; i++)
    {
      SimBdi *b = g_ptr_array_index (pc->bdis, i);
      if (b->q->last_bdp_sleep_ns == &b->last_bdp_sleep_ns)
        b->q->last_bdp_sleep_ns = NULL;
    }
  g_ptr_array_unref (pc->bdis);
  g_ptr_array_foreach (pc->files, (GFunc) (void (*) (void)) file_free, NULL);
  g_ptr_array_unref (pc->files);
  g_ptr_array_unref (pc->chunks);
  g_ptr_array_unref (pc->page_chunks);
  g_hash_table_unref (pc->submitters);
  sim_page_index_pool_free (pc->index_pool);
  g_free (pc);
}

SimRaEra
sim_page_cache_era (const SimPageCache *pc)
{
  return pc->era;
}

SimFile *
sim_page_cache_open (SimPageCache *pc, SimRequestQueue *q, const char *name,
                     guint64 offset_bytes, guint64 size_bytes, guint64 read_ahead_kb)
{
  g_assert (offset_bytes % SIM_PAGE_BYTES == 0);
  SimFile *f = g_new0 (SimFile, 1);
  f->pc = pc;
  f->q = q;
  f->id = pc->files->len + 1;
  f->name = g_strdup (name);
  f->start_sector = offset_bytes / 512;
  f->size_bytes = size_bytes;
  f->size_pages = pages_spanning (0, size_bytes);
  f->data_bytes = size_bytes;
  f->ra_pages = sim_ra_pages_from_kb (read_ahead_kb);
  sim_page_index_init (&f->pages, pc->index_pool);
  for (guint i = 0; i < pc->bdis->len && f->bdi == NULL; i++)
    if (((SimBdi *) g_ptr_array_index (pc->bdis, i))->q == q)
      f->bdi = g_ptr_array_index (pc->bdis, i);
  if (f->bdi == NULL)
    {
      f->bdi = g_new0 (SimBdi, 1);
      f->bdi->q = q;
      f->bdi->last_bdp_sleep_ns = SIM_TIME_NEVER;
      q->last_bdp_sleep_ns = &f->bdi->last_bdp_sleep_ns;
      sim_page_cache_watch_queue (pc, q);
      sim_list_init (&f->bdi->dirty);
      g_ptr_array_add (pc->bdis, f->bdi);
    }
  g_ptr_array_add (pc->files, f);
  return f;
}

static SimPage *
lookup (const SimPageCache *pc, SimFile *f, guint64 index)
{
  return sim_page_index_lookup (&f->pages, index);
}

static gboolean
probe_cached (guint64 index, gpointer data)
{
  SimFile *f = data;
  return lookup (f->pc, f, index) != NULL;
}

static guint
probe_folio_order (guint64 index, gpointer data)
{
  SimFile *f = data;
  const SimPage *page = lookup (f->pc, f, index);
  return page != NULL ? page->folio_order : 0;
}

void
sim_page_cache_ra_init (SimPageCache *pc, SimFile *file, SimRaState *ra)
{
  /* 2.4 has no read_ahead_kb: get_max_readahead() gives vm_max_readahead
   * unless a driver set max_readahead[major] (IDE and SCSI did not). */
  guint64 max_pages = pc->era == SIM_RA_ERA_2_4 ? SIM_RA_24_MAX_PAGES : file->ra_pages;
  sim_ra_init (ra, pc->era, max_pages);
  sim_ra_set_cache_probe (ra, probe_cached, file);
  sim_ra_set_folio_probe (ra, probe_folio_order);
  sim_ra_set_file_pages (ra, file->size_pages);
}

void
sim_page_cache_fadvise (SimFile *file, SimRaState *ra, SimRaAdvice advice)
{
  /* bdi->io_pages: the queue's largest request (max_sectors). */
  guint64 io_pages = sim_queue_bio_sectors (file->q, 0, G_MAXUINT32) / SIM_PAGE_SECTORS;
  sim_ra_fadvise (ra, advice, file->ra_pages, io_pages);
}

void
sim_page_cache_truncate (SimFile *file)
{
  g_assert (sim_page_index_count (&file->pages) == 0);
  file->data_bytes = 0;
}

/* ---- pages ----------------------------------------------------------------- */

/* How many pages one reclaim pass of 2.6 and later looks at from the cold
 * end of the LRU (a few SWAP_CLUSTER_MAX batches); past that the
 * allocating task waits.  2.4's passes have a budget of their own
 * (scan_budget_2_4). */
#define RECLAIM_SCAN_PAGES 128

static void writeback_page (SimPageCache *pc, SimPage *page, const SimIoContext *ioc);

static gboolean
page_busy (const SimPage *page)
{
  return !page->uptodate || page->locked || page->writeback || page->waited;
}

/* The next evictions will most likely take the pages now coldest: start
 * loading what they will read, one stage a page, so that each eviction
 * finds in the processor's cache, not in memory, the lines the evictions
 * before it asked for: the coldest page's bottom index node, the slot
 * above the next one's, the struct of the third. */
static void
prefetch_coldest (SimPageCache *pc)
{
  SimList *l = pc->lru.next;
  for (guint level = 0; level < 2 && l != &pc->lru; level++, l = l->next)
    {
      const SimPage *page = sim_container_of (l, SimPage, lru);
      sim_page_index_prefetch (&page->file->pages, page->index, level);
    }
  if (l != &pc->lru)
    __builtin_prefetch (sim_container_of (l, SimPage, lru));
}

/* Out of its file and the LRU, onto the free list. */
static void
evict (SimPageCache *pc, SimPage *page)
{
  sim_list_del (&page->lru);
  SimPage *gone = sim_page_index_remove (&page->file->pages, page->index);
  g_assert (gone == page);
  page->file = NULL;
  prefetch_coldest (pc);
  page->free_next = pc->free_list;
  pc->free_list = page;
  pc->used_pages--;
  pc->stats.reclaimed++;
}

/* A page reclaim could not free goes back to the hot end: 2.6's
 * shrink_cache putback loop (add_page_to_inactive_list, list_add at the
 * head the scan comes from the far end of) and 2.4's shrink_cache (which
 * moves every page it looks at there first), unmarked; 3.2+'s
 * putback_lru_page marks a dirty or writeback one PG_reclaim so that it
 * returns to the cold end once clean (rotate_reclaimable_page). */
static void
reclaim_putback (SimPageCache *pc, SimPage *page)
{
  if (pc->reclaim_mode == SIM_RECLAIM_ROTATE)
    page->reclaim = page->dirty || page->writeback;
  sim_list_del (&page->lru);
  sim_list_add_tail (&page->lru, &pc->lru);
  pc->stats.rotated++;
}

/* pageout(): 2.6 marks the page PG_reclaim before ->writepage, so that
 * its completion moves it to the cold end for the next scan; 2.4's
 * sync_page_buffers marks its buffers BH_launder, kept in the same bit. */
static void
reclaim_pageout (SimPageCache *pc, SimPage *page, const SimIoContext *ioc)
{
  writeback_page (pc, page, ioc);
  if (pc->reclaim_mode != SIM_RECLAIM_KEEP_COLD)
    page->reclaim = page->writeback;
}

/* shrink_page_list, simplified: scan the coldest pages and evict the first
 * clean idle one.  Dirty pages met on the way, by era:
 *  - up to 3.1, reclaim writes them itself (pageout), except to a congested
 *    queue (may_write_to_queue);
 *  - from 3.2 (Mel Gorman's "reduce filesystem writeback from page reclaim"
 *    series), direct reclaim leaves dirty file pages to the flusher.
 * Pages it cannot free go where the era's putback puts them
 * (SimReclaimMode); under KEEP_COLD they stay at the cold end, and a task
 * whose scan finds only dirty and writeback pages waits for the next
 * writeback completion.  In every mode a scan that finds nothing ends
 * with such a wait: it stands for the 2.6 reclaim loop that raised its
 * scan priority and napped in blk_congestion_wait(HZ/10) between passes
 * that freed too little (try_to_free_pages).
 * FALSE when nothing could be evicted: the task must wait. */
static gboolean
reclaim_one (SimPageCache *pc, const SimIoContext *ioc)
{
  guint scanned = 0;
  const SimRequestQueue *congestion_q = NULL;
  gboolean congested = FALSE;
  gboolean may_pageout = pc->reclaim_mode != SIM_RECLAIM_ROTATE && ioc != NULL;
  /* Pages put back are not looked at twice in one scan. */
  guint64 limit = MIN (RECLAIM_SCAN_PAGES, pc->used_pages);
  for (SimList *l = pc->lru.next; l != &pc->lru && scanned < limit; scanned++)
    {
      SimPage *page = sim_container_of (l, SimPage, lru);
      l = l->next;
      /* One look at each page's queue congestion per run of pages on the
       * same queue, unless the scan starts writing one. */
      gboolean busy = page_busy (page);
      if (page->dirty && !busy && may_pageout)
        {
          if (page->file->q != congestion_q)
            {
              congestion_q = page->file->q;
              congested = sim_queue_write_congested (congestion_q);
            }
          if (!congested)
            {
              reclaim_pageout (pc, page, ioc);
              busy = page_busy (page);
              congestion_q = NULL;
            }
        }
      if (busy || page->dirty)
        {
          if (pc->reclaim_mode != SIM_RECLAIM_KEEP_COLD)
            reclaim_putback (pc, page);
          continue;
        }
      evict (pc, page);
      return TRUE;
    }
  return FALSE;
}

/* 2.4's reclaim (mm/vmscan.c try_to_free_pages, shrink_caches and
 * shrink_cache, fs/buffer.c try_to_free_buffers and sync_page_buffers of
 * 2.4.18; aa-020-sync_buffers for 2.4.19-pre5):
 *  - one call frees SWAP_CLUSTER_MAX (32) pages, in passes at priority
 *    DEF_PRIORITY (6) down to 1, each looking at up to nr_inactive_pages /
 *    priority pages from the cold end; shrink_caches keeps the active list
 *    at 2/3 of the cache ("the inactive list is usually 1/3 of the total
 *    amount of pages", Marcelo Tosatti, LKML, 5 Nov 2001), so the
 *    inactive third of this one list is what the passes look at;
 *  - each page looked at goes to the head of the list first, so the next
 *    pass goes on with pages not yet looked at, and a page is met again
 *    only once the list has come round;
 *  - a dirty page is passed over the first time (BH_Wait_IO) and written
 *    the next (BH_launder, kept here in the PG_reclaim bit), even to a
 *    congested queue: when its queue has no free request the task sleeps
 *    in get_request_wait;
 *  - a page under writeback is waited on (wait_on_page, wait_on_buffer) if
 *    reclaim wrote it, or under LAUNDER_ALL whoever did, from the second
 *    time it is met (waits_on_writeback_2_4). */
#define RECLAIM_2_4_CLUSTER_PAGES 32   /* SWAP_CLUSTER_MAX */
#define RECLAIM_2_4_DEF_PRIORITY  6    /* DEF_PRIORITY */

typedef enum {
  SCAN_FREED,          /* pages were evicted, the task goes on */
  SCAN_WAIT,           /* the task sleeps: on a page, or for a request */
  SCAN_NOTHING,        /* nothing freed, nothing to sleep on */
} Scan24;

/* sync_page_buffers on a page under writeback: it waits on buffers
 * reclaim wrote (BH_launder; their BH_Wait_IO was set when it met them
 * dirty).  After aa-020 any buffer the I/O layer has is BH_Launder, but
 * BH_Wait_IO still comes first: the first meeting only sets it, and the
 * next one, the buffer still locked, waits. */
static gboolean
waits_on_writeback_2_4 (const SimPageCache *pc, SimPage *page)
{
  if (page->reclaim)
    return TRUE;
  if (pc->reclaim_mode != SIM_RECLAIM_LAUNDER_ALL)
    return FALSE;
  if (page->wait_io)
    return TRUE;
  page->wait_io = TRUE;
  return FALSE;
}

/* What shrink_cache does with one page: evict it, put it back (writing it
 * the second time it is met dirty), or make the task wait. */
static Scan24
scan_page_2_4 (SimPageCache *pc, const SimIoContext *ioc, SimPage *page)
{
  if (!page_busy (page) && !page->dirty)
    {
      evict (pc, page);
      return SCAN_FREED;
    }
  if (page->writeback && waits_on_writeback_2_4 (pc, page))
    return SCAN_WAIT;
  reclaim_putback (pc, page);
  if (!page->dirty || page_busy (page) || ioc == NULL)
    return SCAN_NOTHING;
  if (!page->wait_io)
    {
      page->wait_io = TRUE;
      return SCAN_NOTHING;
    }
  page->wait_io = FALSE;
  reclaim_pageout (pc, page, ioc);
  /* Its bio found the queue's pool exhausted: get_request_wait. */
  return ioc->parked_writes > 0 ? SCAN_WAIT : SCAN_NOTHING;
}

/* How many pages try_to_free_pages looks at before it gives up: the sum
 * over its passes of nr_inactive_pages / priority. */
static guint64
scan_budget_2_4 (const SimPageCache *pc)
{
  guint64 inactive = pc->used_pages / 3;
  guint64 budget = 0;
  for (guint64 priority = RECLAIM_2_4_DEF_PRIORITY; priority >= 1; priority--)
    budget += inactive / priority;
  return MAX (budget, 1);
}

/* 2.4's reclaim: it writes dirty pages itself (sync_page_buffers). */
static gboolean
reclaim_launders (const SimPageCache *pc)
{
  return pc->reclaim_mode == SIM_RECLAIM_LAUNDER_OWN || pc->reclaim_mode == SIM_RECLAIM_LAUNDER_ALL;
}

/* One try_to_free_pages: its passes from the cold end until it has freed
 * SWAP_CLUSTER_MAX pages or must sleep. */
static Scan24
try_to_free_pages_2_4 (SimPageCache *pc, const SimIoContext *ioc)
{
  guint64 budget = scan_budget_2_4 (pc);
  guint freed = 0;
  for (guint64 i = 0; i < budget && freed < RECLAIM_2_4_CLUSTER_PAGES && !sim_list_empty (&pc->lru); i++)
    {
      Scan24 r = scan_page_2_4 (pc, ioc, sim_container_of (pc->lru.next, SimPage, lru));
      if (r == SCAN_WAIT)
        return SCAN_WAIT;
      if (r == SCAN_FREED)
        freed++;
    }
  return freed > 0 ? SCAN_FREED : SCAN_NOTHING;
}

/* An allocation's reclaim; FALSE: the task must wait (it may have freed
 * pages first, which stay free for whoever allocates next).  A call that
 * frees nothing and sleeps on nothing is followed by another, as
 * __alloc_pages retries: the pages the first only marked (BH_Wait_IO) are
 * written by the next.  Three calls go round the list enough for that. */
#define RECLAIM_2_4_CALLS 3

static gboolean
reclaim_one_2_4 (SimPageCache *pc, const SimIoContext *ioc)
{
  /* A task whose pageout is still asleep in get_request_wait scans
   * nothing more until its bios have requests (waiter_resumed wakes it). */
  if (ioc != NULL && ioc->parked_writes > 0)
    return FALSE;
  for (guint call = 0; call < RECLAIM_2_4_CALLS; call++)
    {
      Scan24 r = try_to_free_pages_2_4 (pc, ioc);
      if (r != SCAN_NOTHING)
        return r == SCAN_FREED;
    }
  return FALSE;
}

void
sim_page_cache_set_reclaim_mode (SimPageCache *pc, SimReclaimMode mode)
{
  pc->reclaim_mode = mode;
}

static void
grow_pages (SimPageCache *pc)
{
  SimPage *chunk = sim_mem_chunk_alloc (pc->chunk_pages * sizeof (SimPage));
  g_ptr_array_add (pc->page_chunks, chunk);
  for (guint64 i = 0; i < pc->chunk_pages; i++)
    {
      chunk[i].free_next = pc->free_list;
      pc->free_list = &chunk[i];
    }
  pc->allocated_pages += pc->chunk_pages;
}

/* add_to_page_cache: a new locked, not up-to-date page, or NULL when
 * memory is full of pages in use. */
static SimPage *
page_alloc (SimPageCache *pc, SimFile *f, guint64 index, const SimIoContext *ioc)
{
  if (pc->used_pages >= pc->max_pages)
    {
      if (!(reclaim_launders (pc) ? reclaim_one_2_4 (pc, ioc) : reclaim_one (pc, ioc)))
        return NULL;
    }
  if (pc->free_list == NULL)
    grow_pages (pc);
  SimPage *page = pc->free_list;
  pc->free_list = page->free_next;
  memset (page, 0, sizeof *page);
  page->file = f;
  page->index = index;
  page->locked = TRUE;
  sim_list_init (&page->dirty_link);
  sim_page_index_insert (&f->pages, index, page);
  sim_list_add_tail (&page->lru, &pc->lru);
  pc->used_pages++;
  return page;
}

/* Move every waiter of @list to @woken first: a waiter that has to sleep
 * again goes back on @list and is not woken twice in one pass. */
static void
take_all (SimList *list, SimList *woken)
{
  sim_list_init (woken);
  while (!sim_list_empty (list))
    {
      SimList *l = list->next;
      sim_list_del (l);
      sim_list_add_tail (l, woken);
    }
}

static void
wake_list (SimPageCache *pc, SimList *list)
{
  SimList woken;
  take_all (list, &woken);
  while (!sim_list_empty (&woken))
    {
      SimPageRead *rd = sim_list_first_entry (&woken, SimPageRead, wait_link);
      sim_list_del (&rd->wait_link);
      read_continue (pc, rd, TRUE);
    }
}

static void
wake_writers (SimPageCache *pc, SimList *list)
{
  SimList woken;
  take_all (list, &woken);
  while (!sim_list_empty (&woken))
    {
      SimPageWrite *wr = sim_list_first_entry (&woken, SimPageWrite, wait_link);
      sim_list_del (&wr->wait_link);
      write_continue (pc, wr);
    }
}

/* Whoever waits for a free page tries again. */
static void
wake_memory_waiters (SimPageCache *pc)
{
  wake_list (pc, &pc->memory_waiters);
  wake_writers (pc, &pc->memory_waiters_w);
}

/* Page @i of a bio of the page cache.  Its first page came with the bio
 * (end_io_item; the submitter held it): a random writer's single-page
 * bios then need no walk of the index at completion.  A page under I/O
 * is busy, so it is still there. */
static SimPage *
bio_page (SimPageCache *pc, const SimBio *bio, guint64 i)
{
  SimFile *f = bio->end_io_data;
  guint64 index = (bio->sector - f->start_sector) / SIM_PAGE_SECTORS + i;
  SimPage *page = i == 0 ? bio->end_io_item : lookup (pc, f, index);
  g_assert (page != NULL && page->file == f && page->index == index);
  return page;
}

static PageWaitBucket *
page_wait_bucket (const SimPageCache *pc, const SimPage *page)
{
  /* By file and index, not by address, so that which waiters share a
   * bucket is the same on every run (the order of wake-ups does not
   * depend on it either way). */
  guint64 key = page->index ^ ((guint64) page->file->id << 40);
  return (PageWaitBucket *) &pc->page_waits[(key * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15))
                                             >> (64 - PAGE_WAIT_BITS)];
}

/* A bucket's lists hold SimPageRead and SimPageWrite by their wait_link;
 * this is where their wait_page sits from it. */
#define SLEEPER_PAGE_AT(type) ((gssize) offsetof (type, wait_page) - (gssize) offsetof (type, wait_link))
#define READER_PAGE_AT SLEEPER_PAGE_AT (SimPageRead)
#define WRITER_PAGE_AT SLEEPER_PAGE_AT (SimPageWrite)

static inline SimPage *
sleeper_page (const SimList *link, gssize page_at)
{
  return *(SimPage *const *) (gconstpointer) ((const char *) link + page_at);
}

static gboolean
bucket_has (const SimList *list, gssize page_at, const SimPage *page)
{
  for (const SimList *l = list->next; l != list; l = l->next)
    if (sleeper_page (l, page_at) == page)
      return TRUE;
  return FALSE;
}

/* PageWaiters stays exact at every moment, as page_busy reads it: set
 * while any task of the bucket sleeps on @page. */
static gboolean
bucket_has_sleepers (const PageWaitBucket *b, const SimPage *page)
{
  return bucket_has (&b->readers, READER_PAGE_AT, page)
         || bucket_has (&b->writers, WRITER_PAGE_AT, page);
}

/* Move @page's sleepers of @list to @woken, in the order they slept. */
static void
take_sleepers (SimList *list, gssize page_at, const SimPage *page, SimList *woken)
{
  sim_list_init (woken);
  for (SimList *l = list->next, *next; l != list; l = next)
    {
      next = l->next;
      if (sleeper_page (l, page_at) == page)
        {
          sim_list_del (l);
          sim_list_add_tail (l, woken);
        }
    }
}

static void
page_sleep_reader (SimPageCache *pc, SimPage *page, SimPageRead *rd)
{
  rd->wait_page = page;
  page->waited = TRUE;
  sim_list_add_tail (&rd->wait_link, &page_wait_bucket (pc, page)->readers);
  /* The task schedules: its plugged requests go to the device. */
  sim_queue_unplug (rd->file->q, rd->ioc);
}

static void
page_sleep_writer (SimPageCache *pc, SimPage *page, SimPageWrite *wr)
{
  wr->wait_page = page;
  page->waited = TRUE;
  sim_list_add_tail (&wr->wait_link, &page_wait_bucket (pc, page)->writers);
}

/* Wake the tasks sleeping on @page: its readers, then its writers, each
 * in the order they slept; one that sleeps on it again is not woken
 * twice in one pass. */
static void
wake_page (SimPageCache *pc, SimPage *page)
{
  if (!page->waited)
    return;
  PageWaitBucket *b = page_wait_bucket (pc, page);
  SimList woken;
  take_sleepers (&b->readers, READER_PAGE_AT, page, &woken);
  page->waited = bucket_has_sleepers (b, page);
  while (!sim_list_empty (&woken))
    {
      SimPageRead *rd = sim_list_first_entry (&woken, SimPageRead, wait_link);
      sim_list_del (&rd->wait_link);
      rd->wait_page = NULL;
      read_continue (pc, rd, TRUE);
    }
  take_sleepers (&b->writers, WRITER_PAGE_AT, page, &woken);
  page->waited = bucket_has_sleepers (b, page);
  while (!sim_list_empty (&woken))
    {
      SimPageWrite *wr = sim_list_first_entry (&woken, SimPageWrite, wait_link);
      sim_list_del (&wr->wait_link);
      wr->wait_page = NULL;
      write_continue (pc, wr);
    }
}

/* A read bio of contiguous pages of one file completed: they are up to
 * date; wake whoever sleeps on them, then whoever waits for memory. */
/* Pages [first->index, + @n) of @f have been read: up to date, their
 * sleepers woken. */
static void
read_pages_done (SimPageCache *pc, SimFile *f, SimPage *first, guint64 n)
{
  for (guint64 i = 0; i < n; i++)
    {
      SimPage *page = i == 0 ? first : lookup (pc, f, first->index + i);
      g_assert (page != NULL && page->file == f && page->locked);
      page->locked = FALSE;
      page->uptodate = TRUE;
      wake_page (pc, page);
    }
  wake_memory_waiters (pc);
}

static void
read_bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  SimFile *f = bio->end_io_data;
  read_pages_done (f->pc, f, bio->end_io_item, bio->nr_sectors / SIM_PAGE_SECTORS);
}

static void
free_list_give (FreeList *fl, gpointer item)
{
  *(gpointer *) item = fl->head;
  fl->head = item;
}

static gpointer
free_list_take (SimPageCache *pc, FreeList *fl)
{
  if (fl->head == NULL)
    {
      guint8 *chunk = g_malloc0 (FREE_LIST_CHUNK * fl->item_bytes);
      g_ptr_array_add (pc->chunks, chunk);
      for (guint i = 0; i < FREE_LIST_CHUNK; i++)
        free_list_give (fl, chunk + i * fl->item_bytes);
    }
  gpointer item = fl->head;
  fl->head = *(gpointer *) item;
  return item;
}

/* A part of @rb ended, or its submitter queued the last one: the last of
 * these ends the bio. */
static void
read_bio_put (ReadBio *rb)
{
  g_assert (rb->parts_left > 0);
  if (--rb->parts_left > 0)
    return;
  SimFile *f = rb->first->file;
  SimPageCache *pc = f->pc;
  SimPage *first = rb->first;
  guint64 n = rb->nr_pages;
  free_list_give (&pc->free_read_bios, rb);
  read_pages_done (pc, f, first, n);
}

static void
read_part_done (Sim *sim, SimBio *bio, SimTime now)
{
  read_bio_put (bio->end_io_data);
}

static void waiter_release (SimPageCache *pc, SimBioWaiter *w);

static void
memory_waiters_fired (Sim *sim, gpointer subject, gpointer object)
{
  wake_memory_waiters (subject);
}

static void
waiter_resumed (Sim *sim, gpointer data, SimTime now)
{
  PcWaiter *pw = data;
  if (pw->bdi != NULL)
    {
      g_assert (pw->bdi->parked_writes > 0);
      pw->bdi->parked_writes--;
    }
  if (pw->ioc != NULL)
    {
      g_assert (pw->ioc->parked_writes > 0);
      pw->ioc->parked_writes--;
      /* A task whose 2.4 reclaim slept in get_request_wait has its
       * requests: it goes on looking for memory, from an event of its own
       * (the queue is in the middle of freeing a request). */
      if (pw->ioc->parked_writes == 0 && reclaim_launders (pw->pc)
          && (!sim_list_empty (&pw->pc->memory_waiters) || !sim_list_empty (&pw->pc->memory_waiters_w)))
        sim_schedule_in (sim, 0, memory_waiters_fired, pw->pc, NULL);
    }
  waiter_release (pw->pc, &pw->w);
}

static SimBioWaiter *
waiter_alloc (SimPageCache *pc)
{
  PcWaiter *pw = free_list_take (pc, &pc->free_waiters);
  memset (pw, 0, sizeof *pw);
  pw->pc = pc;
  sim_list_init (&pw->w.link);
  pw->w.resume = waiter_resumed;
  pw->w.resume_data = pw;
  return &pw->w;
}

static void
waiter_release (SimPageCache *pc, SimBioWaiter *w)
{
  free_list_give (&pc->free_waiters, w);
}

static void write_bio_done (Sim *sim, SimBio *bio, SimTime now);
static void wake_syncs (SimPageCache *pc);

/* Submit @n contiguous pages of a file from @page as @op bios within the queue's
 * limits (max_sectors; max_segments, one per page: cache pages are
 * scattered): reads are synchronous (plus @flags, e.g. readahead),
 * writeback carries @flags (SIM_BIO_SYNC for WB_SYNC_ALL,
 * SIM_BIO_BACKGROUND for the flusher's).
 * With the request pool full a bio waits for a request; the task waits on
 * its pages either way, so it need not block here. */
/* The pages of a bio of @n pages up to the queue's limits: the first
 * part's. */
static guint64
bio_part_pages (const SimRequestQueue *q, guint64 n)
{
  return MAX (1u, sim_queue_bio_sectors (q, 0, n * SIM_PAGE_SECTORS) / SIM_PAGE_SECTORS);
}

/* Queue pages [page, + @n) as bios of the queue's limits.  @whole (reads):
 * they are the parts of one bio, and its pages become up to date when the
 * last part ends. */
static void
submit_pages_as (SimPageCache *pc, SimPage *page, SimOp op, guint64 n, const SimIoContext *ioc,
                 guint32 flags, gboolean whole)
{
  SimFile *f = page->file;
  guint64 first = page->index;
  SimRequestQueue *q = f->q;
  ReadBio *rb = NULL;
  if (whole && bio_part_pages (q, n) < n)
    {
      rb = free_list_take (pc, &pc->free_read_bios);
      rb->first = page;
      rb->nr_pages = n;
      rb->parts_left = 1;
    }
  while (n > 0)
    {
      guint64 chunk = bio_part_pages (q, n);
      SimBio *bio = sim_queue_bio_alloc (q);
      bio->sector = f->start_sector + first * SIM_PAGE_SECTORS;
      bio->nr_sectors = (guint32) (chunk * SIM_PAGE_SECTORS);
      bio->nr_segments = (guint32) chunk;
      bio->op = op;
      bio->flags = op == SIM_OP_READ ? SIM_BIO_SYNC | flags : flags;
      bio->ioc = (SimIoContext *) ioc;
      bio->end_io = rb != NULL ? read_part_done : op == SIM_OP_READ ? read_bio_done : write_bio_done;
      bio->end_io_data = rb != NULL ? (gpointer) rb : f;
      bio->end_io_item = page != NULL ? page : lookup (pc, f, first);
      page = NULL;
      if (rb != NULL)
        rb->parts_left++;
      if (op == SIM_OP_READ)
        pc->stats.read_ios++;
      else
        pc->stats.write_ios++;
      SimBioWaiter *waiter = waiter_alloc (pc);
      if (sim_queue_submit_bio (q, bio, waiter))
        waiter_release (pc, waiter);
      else if (op == SIM_OP_WRITE)
        {
          PcWaiter *pw = (PcWaiter *) (void *) waiter;
          pw->bdi = f->bdi;
          f->bdi->parked_writes++;
          if (ioc != NULL)
            {
              pw->ioc = (SimIoContext *) ioc;
              pw->ioc->parked_writes++;
            }
        }
      first += chunk;
      n -= chunk;
    }
  if (rb != NULL)
    read_bio_put (rb);
}

static void
submit_pages (SimPageCache *pc, SimPage *page, SimOp op, guint64 n, const SimIoContext *ioc,
              guint32 flags)
{
  submit_pages_as (pc, page, op, n, ioc, flags, FALSE);
}

/* Read the window's missing pages; stops where memory runs out.  A
 * blk-mq queue sees them through the task's plug, as 6.18 mm/readahead.c
 * read_pages submits a window between blk_start_plug and blk_finish_plug. */
static void
submit_window (SimPageCache *pc, SimFile *f, const SimRaWindow *w, const SimIoContext *ioc)
{
  guint64 end = MIN (w->start + w->nr_pages, f->size_pages);
  gboolean whole = pc->era == SIM_RA_ERA_ONDEMAND_6_18;
  SimPage *run_page = NULL;
  guint64 run_len = 0;
  guint run_folios = 0;
  guint32 flags = w->is_async ? SIM_BIO_AHEAD : 0;
  SimPlug plug = { 0 };
  guint64 folio_end = w->start;
  guint folio_order = 0;
  sim_queue_start_plug (f->q, &plug, ioc);
  for (guint64 i = w->start; i < end; i++)
    {
      gboolean folio_head = i == folio_end;
      if (folio_head)
        {
          folio_order = sim_ra_window_folio_order (w, i);
          folio_end = i + (G_GUINT64_CONSTANT (1) << folio_order);
        }
      /* A cached page ends the bio (the blocks are no longer contiguous),
       * and so does a full one: mpage_readahead's bio_add_folio fails. */
      gboolean cached = lookup (pc, f, i) != NULL;
      if (run_len && (cached || (whole && folio_head && run_folios == READ_BIO_MAX_FOLIOS)))
        {
          submit_pages_as (pc, run_page, SIM_OP_READ, run_len, ioc, flags, whole);
          run_len = 0;
        }
      if (cached)
        continue;
      SimPage *page = page_alloc (pc, f, i, ioc);
      if (page == NULL)
        break;
      page->readahead = (i == w->marker);
      page->folio_order = folio_order;
      pc->stats.readahead_pages++;
      if (run_len == 0)
        {
          run_page = page;
          run_folios = 0;
        }
      run_folios += folio_head;
      run_len++;
    }
  if (run_len)
    submit_pages_as (pc, run_page, SIM_OP_READ, run_len, ioc, flags, whole);
  sim_queue_finish_plug (f->q, &plug);
}

/* ---- the read loop ------------------------------------------------------------ */

static void
done_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimPageRead *rd = object;
  rd->done (sim, rd, sim_now (sim));
}

static void
read_finish (SimPageCache *pc, SimPageRead *rd, gboolean in_event)
{
  guint64 first = rd->offset_bytes / SIM_PAGE_BYTES;
  sim_ra_read_done (rd->ra, first, rd->end_index - first);
  if (in_event)
    rd->done (pc->sim, rd, sim_now (pc->sim));
  else
    sim_schedule_in (pc->sim, 0, done_fired, pc, rd);
}

static void
sleep_on (SimPageCache *pc, SimPageRead *rd, SimList *queue)
{
  sim_list_add_tail (&rd->wait_link, queue);
  /* The task schedules: its plugged requests go to the device. */
  sim_queue_unplug (rd->file->q, rd->ioc);
}

/* The page cache's page @index for @rd, allocated and read alone when it
 * is missing (no_cached_page: readpage).  NULL: no memory, and @rd sleeps
 * for it. */
static SimPage *
read_page_alone (SimPageCache *pc, SimPageRead *rd, guint64 index)
{
  SimFile *f = rd->file;
  SimPage *page = page_alloc (pc, f, index, rd->ioc);
  if (page == NULL)
    {
      pc->stats.memory_waits++;
      sleep_on (pc, rd, &pc->memory_waiters);
      return NULL;
    }
  submit_pages (pc, page, SIM_OP_READ, 1, rd->ioc, 0);
  return page;
}

/* On-demand eras (2.6.23, 6.18): a miss asks for a sync window, a hit on
 * PG_readahead for an async one. */
static SimPage *
read_lookup_ondemand (SimPageCache *pc, SimPageRead *rd, guint64 index, guint64 left)
{
  SimFile *f = rd->file;
  SimPage *page = lookup (pc, f, index);
  SimRaWindow w;
  if (page == NULL)
    {
      pc->stats.misses++;
      if (sim_ra_sync (rd->ra, index, left, &w))
        submit_window (pc, f, &w, rd->ioc);
      page = lookup (pc, f, index);
      if (page == NULL && (page = read_page_alone (pc, rd, index)) == NULL)
        return NULL;
    }
  if (page->readahead)
    {
      page->readahead = FALSE;
      if (sim_ra_async (rd->ra, index, left, page->folio_order, &w))
        submit_window (pc, f, &w, rd->ioc);
    }
  return page;
}

/* 2.6.9's do_generic_mapping_read: page_cache_readahead() when the read
 * reaches next_index (its first page included), handle_ra_miss() when the
 * page is still not cached. */
static SimPage *
read_lookup_pre23 (SimPageCache *pc, SimPageRead *rd, guint64 index, guint64 left)
{
  SimFile *f = rd->file;
  if (rd->ra_asked != index && index == rd->ra_next_index)
    {
      SimRaWindow w[2];
      guint n = sim_ra_legacy_read (rd->ra, index, left, w, &rd->ra_next_index);
      for (guint i = 0; i < n; i++)
        submit_window (pc, f, &w[i], rd->ioc);
    }
  gboolean first_ask = rd->ra_asked != index;
  rd->ra_asked = index;
  SimPage *page = lookup (pc, f, index);
  if (page != NULL)
    return page;
  pc->stats.misses++;
  if (first_ask)
    sim_ra_legacy_miss (rd->ra);
  return read_page_alone (pc, rd, index);
}

/* 2.4's do_generic_file_read: a missing page is read alone (readpage),
 * then generic_file_readahead() runs for every page, told whether the
 * page is still locked under I/O. */
static SimPage *
read_lookup_24 (SimPageCache *pc, SimPageRead *rd, guint64 index)
{
  SimFile *f = rd->file;
  SimPage *page = lookup (pc, f, index);
  if (page == NULL)
    {
      pc->stats.misses++;
      if ((page = read_page_alone (pc, rd, index)) == NULL)
        return NULL;
    }
  if (rd->ra_asked != index)
    {
      rd->ra_asked = index;
      SimRaWindow w;
      if (sim_ra24_page (rd->ra, index, !page->uptodate, &w))
        submit_window (pc, f, &w, rd->ioc);
    }
  return page;
}

/* do_generic_file_read from rd->index on; returns when the read sleeps or
 * is done. */
static void
read_continue (SimPageCache *pc, SimPageRead *rd, gboolean in_event)
{
  while (rd->index < rd->end_index)
    {
      guint64 index = rd->index;
      guint64 left = rd->end_index - index;
      SimPage *page;
      switch (rd->ra->era)
        {
        case SIM_RA_ERA_2_4:
          page = read_lookup_24 (pc, rd, index);
          break;
        case SIM_RA_ERA_2_6_PRE23:
          page = read_lookup_pre23 (pc, rd, index, left);
          break;
        default:
          page = read_lookup_ondemand (pc, rd, index, left);
          break;
        }
      if (page == NULL)
        return;
      if (!page->uptodate)
        {
          pc->stats.waits++;
          page_sleep_reader (pc, page, rd);
          return;
        }
      pc->stats.hits++;
      /* mark_page_accessed: move to the hot end. */
      sim_list_del (&page->lru);
      sim_list_add_tail (&page->lru, &pc->lru);
      rd->index++;
    }
  read_finish (pc, rd, in_event);
}

void
sim_page_cache_read (SimPageCache *pc, SimPageRead *rd)
{
  g_assert (rd->offset_bytes % SIM_SECTOR_BYTES == 0 && rd->bytes % SIM_SECTOR_BYTES == 0);
  g_assert (rd->bytes > 0 && rd->done != NULL);
  rd->index = rd->offset_bytes / SIM_PAGE_BYTES;
  rd->end_index = MIN (rd->index + pages_spanning (rd->offset_bytes, rd->bytes),
                       rd->file->size_pages);
  g_assert (rd->end_index > rd->index);
  rd->ra_asked = G_MAXUINT64;
  rd->ra_next_index = rd->index;
  if (rd->ra->era == SIM_RA_ERA_2_4)
    sim_ra24_read_begin (rd->ra, rd->offset_bytes, rd->bytes);
  sim_list_init (&rd->wait_link);
  rd->wait_page = NULL;
  rd->started = TRUE;
  read_continue (pc, rd, FALSE);
}

guint64
sim_page_cache_pages (const SimPageCache *pc)
{
  return pc->used_pages;
}

const SimPageCacheStats *
sim_page_cache_stats (const SimPageCache *pc)
{
  return &pc->stats;
}

gboolean
sim_page_cache_check (const SimPageCache *pc)
{
  guint64 on_lru = 0;
  for (const SimList *l = pc->lru.next; l != &pc->lru; l = l->next)
    {
      const SimPage *page = sim_container_of (l, SimPage, lru);
      if (page->file == NULL || lookup (pc, page->file, page->index) != page)
        return FALSE;
      if (page->waited != bucket_has_sleepers (page_wait_bucket (pc, page), page))
        return FALSE;
      on_lru++;
    }
  /* Every cached page is in its file's index, and only those. */
  guint64 indexed = 0;
  for (guint i = 0; i < pc->files->len; i++)
    {
      const SimFile *f = g_ptr_array_index (pc->files, i);
      if (!sim_page_index_check (&f->pages))
        return FALSE;
      indexed += sim_page_index_count (&f->pages);
    }
  /* No page is lost: every dirtying is written back, dirty or in flight
   * (a page redirtied under writeback counts in both). */
  return on_lru == pc->used_pages && indexed == pc->used_pages && pc->used_pages <= pc->max_pages
         && pc->stats.dirtied == pc->stats.written + pc->nr_dirty + pc->nr_writeback;
}

/* ---- the write path ------------------------------------------------------ */

void
sim_page_cache_set_policy (SimPageCache *pc, WbPolicy *policy)
{
  g_assert (pc->policy == NULL);
  pc->policy = policy;
}

static void
set_dirty (SimPageCache *pc, SimPage *page)
{
  if (page->dirty)
    return;
  page->dirty = TRUE;
  page->dirtied_ns = sim_now (pc->sim);
  page->dirty_seq = ++pc->dirty_seq;
  g_assert (page->dirty_seq == pc->dirty_seq);  /* 52 bits: 4 * 10^15 dirtyings */
  pc->nr_dirty++;
  page->file->bdi->nr_dirty++;
  page->file->bdi->dirtied++;
  pc->stats.dirtied++;
  sim_list_add_tail (&page->dirty_link, &page->file->bdi->dirty);
}

static void
write_done_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimPageWrite *wr = object;
  wr->done (sim, wr, sim_now (sim));
}

void
sim_page_cache_set_flusher (SimPageCache *pc, const SimIoContext *flusher)
{
  pc->flusher = flusher;
}

void
sim_page_cache_throttle (SimPageCache *pc, SimPageWrite *wr)
{
  if (wr->throttled)
    return;
  wr->throttled = TRUE;
  wr->file->bdi->nr_throttled++;
}

void
sim_page_cache_write_finish (SimPageCache *pc, SimPageWrite *wr)
{
  if (wr->throttled)
    {
      g_assert (wr->file->bdi->nr_throttled > 0);
      wr->file->bdi->nr_throttled--;
      wr->throttled = FALSE;
    }
  sim_schedule_in (pc->sim, 0, write_done_fired, pc, wr);
}

/* Whether the write covers page @index whole.  A file's partial last page
 * never is: its block straddles the end of the data, and the kernel reads
 * a block that a write covers only in part. */
static gboolean
write_covers_page (const SimPageWrite *wr, guint64 index)
{
  guint64 page_start = index * SIM_PAGE_BYTES;
  return wr->offset_bytes <= page_start
         && wr->offset_bytes + wr->bytes >= page_start + SIM_PAGE_BYTES;
}

/* Whether a new page that @wr covers in part must be read first: it holds
 * data (it starts below i_size).  Blocks past i_size are new, and
 * block_write_begin (2.4's block_prepare_write alike) zeroes what the
 * write does not cover instead of reading it. */
static gboolean
write_must_read_page (const SimPageWrite *wr, guint64 index)
{
  return !write_covers_page (wr, index) && index * SIM_PAGE_BYTES < wr->file->data_bytes;
}

/* generic_perform_write from wr->index on: grab each page, dirty it; then
 * the policy decides what the writer must do (balance_dirty_pages).  A new
 * page that the write covers whole, or that holds no data yet, is up to
 * date at once.  One it covers in part below i_size is read first and the
 * writer sleeps on it, as block_write_begin reads the blocks of an
 * uncached page that the write does not cover.  The write then moves
 * i_size past its end (generic_commit_write does, page by page: a page of
 * the write is never below what the pages before it wrote). */
static void
write_continue (SimPageCache *pc, SimPageWrite *wr)
{
  SimFile *f = wr->file;
  while (wr->index < wr->end_index)
    {
      SimPage *page = lookup (pc, f, wr->index);
      if (page == NULL)
        {
          guint64 reclaimed = pc->stats.reclaimed;
          page = page_alloc (pc, f, wr->index, wr->ioc);
          wr->reclaimed += pc->stats.reclaimed - reclaimed;
          if (page == NULL)
            {
              pc->stats.memory_waits++;
              sim_list_add_tail (&wr->wait_link, &pc->memory_waiters_w);
              sim_queue_unplug (f->q, wr->ioc);
              return;
            }
          if (write_must_read_page (wr, wr->index))
            {
              pc->stats.partial_page_reads++;
              submit_pages (pc, page, SIM_OP_READ, 1, wr->ioc, 0);
              page_sleep_writer (pc, page, wr);
              sim_queue_unplug (f->q, wr->ioc);
              return;
            }
          page->locked = FALSE;
          page->uptodate = TRUE;
        }
      else if (page->locked)
        {
          /* A read is bringing the page in: lock_page sleeps. */
          page_sleep_writer (pc, page, wr);
          sim_queue_unplug (f->q, wr->ioc);
          return;
        }
      page->uptodate = TRUE;
      if (!page->dirty)
        wr->dirtied++;
      set_dirty (pc, page);
      sim_list_del (&page->lru);
      sim_list_add_tail (&page->lru, &pc->lru);
      wr->index++;
    }
  f->data_bytes = MAX (f->data_bytes, MIN (wr->offset_bytes + wr->bytes, f->size_bytes));
  if (pc->policy)
    pc->policy->ops->dirtied (pc->policy, wr, sim_now (pc->sim));
  else
    sim_page_cache_write_finish (pc, wr);
}

void
sim_page_cache_write (SimPageCache *pc, SimPageWrite *wr)
{
  g_assert (wr->offset_bytes % SIM_SECTOR_BYTES == 0 && wr->bytes % SIM_SECTOR_BYTES == 0);
  g_assert (wr->bytes > 0 && wr->done != NULL);
  wr->index = wr->offset_bytes / SIM_PAGE_BYTES;
  wr->end_index = MIN (wr->index + pages_spanning (wr->offset_bytes, wr->bytes),
                       wr->file->size_pages);
  g_assert (wr->end_index > wr->index);
  wr->dirtied = 0;
  wr->written = 0;
  wr->reclaimed = 0;
  wr->step = 0;
  wr->balance_left = 0;
  wr->throttled = FALSE;
  wr->passes = 0;
  wr->pass_fn = NULL;
  sim_list_init (&wr->wait_link);
  wr->wait_page = NULL;
  write_continue (pc, wr);
}

void
sim_page_cache_prefetch (SimPageCache *pc, SimFile *file, guint64 offset_bytes, guint ahead)
{
  g_assert (ahead == 1 || ahead == 2);
  sim_page_index_prefetch (&file->pages, offset_bytes / SIM_PAGE_BYTES, ahead - 1);
}

gboolean
sim_page_cache_write_clean (SimPageCache *pc, SimPageWrite *wr)
{
  guint64 first = wr->offset_bytes / SIM_PAGE_BYTES;
  for (guint64 i = first; i < wr->end_index; i++)
    {
      SimPage *page = lookup (pc, wr->file, i);
      if (page && (page->dirty || page->writeback))
        return FALSE;
    }
  return TRUE;
}

void
sim_page_cache_wait_writeback (SimPageCache *pc, SimPageWrite *wr)
{
  sim_page_cache_throttle (pc, wr);
  sim_list_add_tail (&wr->wait_link, &pc->writeback_waiters);
}

/* ---- writeback ------------------------------------------------------------ */

static void
write_bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  SimFile *f = bio->end_io_data;
  SimPageCache *pc = f->pc;
  guint64 n = bio->nr_sectors / SIM_PAGE_SECTORS;
  for (guint64 i = 0; i < n; i++)
    {
      SimPage *page = bio_page (pc, bio, i);
      g_assert (page->writeback);
      page->writeback = FALSE;
      if (page->reclaim && !page->dirty)
        {
          sim_list_del (&page->lru);
          sim_list_add (&page->lru, &pc->lru);
        }
      page->reclaim = FALSE;
      page->wait_io = FALSE;     /* unlock_buffer clears BH_Wait_IO */
      pc->nr_writeback--;
      f->nr_writeback--;
      f->written++;
      f->bdi->nr_writeback--;
      f->bdi->written++;
      pc->stats.written++;
    }
  if (pc->policy && pc->policy->ops->written)
    pc->policy->ops->written (pc->policy, f->bdi, n, now);
  /* Wake the parked writers once each: a resume may park again. */
  SimList woken;
  take_all (&pc->writeback_waiters, &woken);
  while (!sim_list_empty (&woken))
    {
      SimPageWrite *wr = sim_list_first_entry (&woken, SimPageWrite, wait_link);
      sim_list_del (&wr->wait_link);
      if (pc->policy && pc->policy->ops->resume)
        pc->policy->ops->resume (pc->policy, wr, now);
    }
  wake_syncs (pc);
  wake_memory_waiters (pc);
}

/* The BDI whose oldest dirty page is oldest, among those with one dirtied
 * at or before @before. */
static SimBdi *
oldest_bdi (SimPageCache *pc, SimTime before)
{
  SimBdi *best = NULL;
  SimTime best_ns = SIM_TIME_NEVER;
  for (guint i = 0; i < pc->bdis->len; i++)
    {
      SimBdi *b = g_ptr_array_index (pc->bdis, i);
      if (sim_list_empty (&b->dirty))
        continue;
      SimPage *head = sim_list_first_entry (&b->dirty, SimPage, dirty_link);
      if (head->dirtied_ns <= before && (best == NULL || head->dirtied_ns < best_ns))
        {
          best = b;
          best_ns = head->dirtied_ns;
        }
    }
  return best;
}

/* A dirty page leaves its device's dirty list and goes under writeback. */
static void
begin_writeback (SimPageCache *pc, SimPage *page)
{
  SimBdi *b = page->file->bdi;
  g_assert (page->dirty && !page->writeback);
  sim_list_del (&page->dirty_link);
  page->dirty = FALSE;
  pc->nr_dirty--;
  b->nr_dirty--;
  page->writeback = TRUE;
  pc->nr_writeback++;
  page->file->nr_writeback++;
  b->nr_writeback++;
}

/* pageout(): write one page (reclaim found it dirty). */
static void
writeback_page (SimPageCache *pc, SimPage *page, const SimIoContext *ioc)
{
  begin_writeback (pc, page);
  submit_pages (pc, page, SIM_OP_WRITE, 1, ioc, 0);
  sim_queue_unplug (page->file->q, ioc);
}

/* Writeback submits inside a plug (6.18 fs/fs-writeback.c wb_writeback:
 * blk_start_plug around the whole pass; ext4_do_writepages for fsync):
 * the plug follows the queue of the run being submitted. */
typedef struct {
  SimPlug          plug;
  SimRequestQueue *q;
} WbPlug;

void
sim_page_cache_set_writeback_page_cost (SimPageCache *pc, SimTime ns_per_page)
{
  g_assert (ns_per_page >= 0);
  pc->wb_page_cost_ns = ns_per_page;
}

void
sim_page_cache_set_writeback_bio_pages (SimPageCache *pc, guint64 pages)
{
  pc->wb_bio_pages = pages;
}

static void submitter_step (Sim *sim, gpointer subject, gpointer object);

/* The pages of the next bio of @su's first run. */
static guint64
next_bio_pages (const Submitter *su)
{
  const PacedRun *run = su->head;
  guint64 n = MAX (1u, sim_queue_bio_sectors (run->file->q, 0, run->n * SIM_PAGE_SECTORS)
                       / SIM_PAGE_SECTORS);

  return su->pc->wb_bio_pages ? MIN (n, su->pc->wb_bio_pages) : n;
}

/* Prepare the next bio's pages: it is queued that much CPU time later. */
static void
submitter_schedule (Submitter *su)
{
  su->busy = TRUE;
  sim_schedule_in (su->pc->sim, (SimTime) next_bio_pages (su) * su->pc->wb_page_cost_ns,
                   submitter_step, su, NULL);
}

/* Nothing left: the section ends (blk_finish_plug), and an fsync's task
 * kicks a legacy queue as it waits. */
static void
submitter_done (Submitter *su)
{
  if (su->plug_q != NULL)
    {
      sim_queue_finish_plug (su->plug_q, &su->plug);
      sim_queue_unplug (su->plug_q, su->ioc);
    }
  su->plug_q = NULL;
  su->busy = FALSE;
}

static void
submitter_continue (Submitter *su)
{
  if (su->head != NULL)
    submitter_schedule (su);
  else
    submitter_done (su);
}

/* The sleeping bio got its request (or a wbt token): the task runs on. */
static void
submitter_resumed (Sim *sim, gpointer data, SimTime now)
{
  submitter_continue (data);
}

/* One bio, inside the submitter's plug section; FALSE if it sleeps. */
static gboolean
submitter_queue_bio (Submitter *su, SimFile *f, guint64 first, guint64 n, guint32 flags)
{
  SimRequestQueue *q = f->q;
  SimBio *bio = sim_queue_bio_alloc (q);

  if (su->plug_q != q)
    {
      if (su->plug_q != NULL)
        sim_queue_finish_plug (su->plug_q, &su->plug);
      su->plug_q = q;
      sim_queue_start_plug (q, &su->plug, su->ioc);
    }
  else
    sim_queue_resume_plug (q, &su->plug);
  bio->sector = f->start_sector + first * SIM_PAGE_SECTORS;
  bio->nr_sectors = (guint32) (n * SIM_PAGE_SECTORS);
  bio->nr_segments = (guint32) n;
  bio->op = SIM_OP_WRITE;
  bio->flags = flags;
  bio->ioc = (SimIoContext *) su->ioc;
  bio->end_io = write_bio_done;
  bio->end_io_data = f;
  bio->end_io_item = lookup (su->pc, f, first);
  su->pc->stats.write_ios++;
  sim_list_init (&su->waiter.link);
  su->waiter.resume = submitter_resumed;
  su->waiter.resume_data = su;
  if (!sim_queue_submit_bio (q, bio, &su->waiter))
    {
      /* It sleeps: schedule() flushed and left the plug (plug_sleep);
       * the section goes on when it wakes. */
      if (q->current_plug == &su->plug)
        sim_queue_suspend_plug (q, &su->plug);
      return FALSE;
    }
  sim_queue_suspend_plug (q, &su->plug);
  return TRUE;
}

static void
submitter_step (Sim *sim, gpointer subject, gpointer object)
{
  Submitter *su = subject;
  PacedRun *run = su->head;
  guint64 n = next_bio_pages (su), first = run->first;
  SimFile *f = run->file;
  guint32 flags = run->flags;

  run->first += n;
  run->n -= n;
  if (run->n == 0)
    {
      su->head = run->next;
      if (su->head == NULL)
        su->tail = NULL;
      free_list_give (&su->pc->free_runs, run);
    }
  if (submitter_queue_bio (su, f, first, n, flags))
    submitter_continue (su);
}

/* @ioc's submitter takes the run after whatever it still has to do. */
static void
submit_paced (SimPageCache *pc, SimFile *f, guint64 first, guint64 n, const SimIoContext *ioc,
              guint32 flags)
{
  Submitter *su = g_hash_table_lookup (pc->submitters, ioc);
  PacedRun *run = free_list_take (pc, &pc->free_runs);

  if (su == NULL)
    {
      su = g_new0 (Submitter, 1);
      su->pc = pc;
      su->ioc = ioc;
      g_hash_table_insert (pc->submitters, (gpointer) ioc, su);
    }
  *run = (PacedRun) { NULL, f, first, n, flags };
  if (su->tail != NULL)
    su->tail->next = run;
  else
    su->head = run;
  su->tail = run;
  if (!su->busy)
    submitter_schedule (su);
}

/* Whether @page extends the run of @len pages from @first (same file, next index). */
static gboolean
run_continues (const SimPage *first, guint64 len, const SimPage *page)
{
  return page->file == first->file && page->index == first->index + len;
}

/* Write @n contiguous pages from @page, in @wp's plug section. */
static void
wb_plug_submit (SimPageCache *pc, WbPlug *wp, SimPage *page, guint64 n, const SimIoContext *ioc,
                guint32 flags)
{
  SimFile *f = page->file;
  if (pc->wb_page_cost_ns > 0)
    {
      submit_paced (pc, f, page->index, n, ioc, flags);
      return;
    }
  if (wp->q != f->q)
    {
      if (wp->q)
        sim_queue_finish_plug (wp->q, &wp->plug);
      wp->q = f->q;
      sim_queue_start_plug (wp->q, &wp->plug, ioc);
    }
  submit_pages (pc, page, SIM_OP_WRITE, n, ioc, flags);
}

static void
wb_plug_finish (WbPlug *wp)
{
  if (wp->q)
    sim_queue_finish_plug (wp->q, &wp->plug);
  wp->q = NULL;
}

guint64
sim_page_cache_start_writeback (SimPageCache *pc, SimBdi *bdi, guint64 max_pages,
                                SimTime dirtied_before_ns, const SimIoContext *ioc)
{
  /* The flusher's work is background or periodic writeback (for_background,
   * for_kupdate): REQ_BACKGROUND (wbc_to_write_flags).  A writer cleaning
   * pages itself, WB_SYNC_NONE, sets no flag. */
  guint32 flags = ioc == pc->flusher ? SIM_BIO_BACKGROUND : 0;
  guint64 started = 0, skipped = 0;
  SimPage *run_page = NULL;
  guint64 run_len = 0;
  WbPlug wp = { { 0 }, NULL };
  while (started < max_pages)
    {
      SimBdi *b = bdi ? bdi : oldest_bdi (pc, dirtied_before_ns);
      if (b == NULL || sim_list_empty (&b->dirty))
        break;
      SimPage *page = sim_list_first_entry (&b->dirty, SimPage, dirty_link);
      /* The list is in dirtying order, each page anywhere in memory: the
       * next one's cache miss overlaps this one's work. */
      __builtin_prefetch (page->dirty_link.next);
      if (page->dirtied_ns > dirtied_before_ns)
        break;
      if (page->writeback)
        {
          /* Redirtied while its write is in flight: non-blocking writeback
           * skips it until that write is done (it stays dirty). */
          if (++skipped > pc->nr_dirty)
            break;
          sim_list_del (&page->dirty_link);
          sim_list_add_tail (&page->dirty_link, &b->dirty);
          continue;
        }
      /* Pages go to the device in runs of contiguous pages of one file. */
      if (run_len && !run_continues (run_page, run_len, page))
        {
          wb_plug_submit (pc, &wp, run_page, run_len, ioc, flags);
          run_len = 0;
        }
      if (run_len == 0)
        run_page = page;
      run_len++;
      begin_writeback (pc, page);
      if (ioc == pc->flusher)
        b->flusher_pages++;
      started++;
    }
  if (run_len)
    wb_plug_submit (pc, &wp, run_page, run_len, ioc, flags);
  wb_plug_finish (&wp);
  return started;
}

guint64
sim_page_cache_writeback_peek (const SimPageCache *pc, const SimBdi *bdi, guint64 max_pages,
                               SimTime dirtied_before_ns, const SimFile **file)
{
  guint64 n = 0;
  const SimFile *first = NULL;
  /* The pages start_writeback takes: oldest first, those under writeback
   * (redirtied in flight) skipped, until one dirtied after the limit. */
  for (const SimList *l = bdi->dirty.next; l != &bdi->dirty && n < max_pages; l = l->next)
    {
      const SimPage *page = sim_container_of (l, SimPage, dirty_link);
      if (page->dirtied_ns > dirtied_before_ns)
        break;
      if (page->writeback)
        continue;
      if (first == NULL)
        first = page->file;
      n++;
    }
  g_assert (n <= pc->nr_dirty);
  if (file)
    *file = first;
  return n;
}

/* ---- fsync and sync --------------------------------------------------------- */

static guint64
sync_written (const SimPageCache *pc, const SimPageSync *sy)
{
  return sy->file ? sy->file->written : pc->stats.written;
}

static guint64
sync_in_flight (const SimPageCache *pc, const SimPageSync *sy)
{
  return sy->file ? sy->file->nr_writeback : pc->nr_writeback;
}

/* Start synchronous writeback of @sy's pages dirtied before the call and
 * not already in flight, in runs of contiguous pages; returns how many. */
static guint64
sync_start_pages (SimPageCache *pc, SimPageSync *sy)
{
  guint64 started = 0;
  for (guint i = 0; i < pc->bdis->len; i++)
    {
      SimBdi *b = g_ptr_array_index (pc->bdis, i);
      if (sy->file && sy->file->bdi != b)
        continue;
      SimPage *run_page = NULL;
      guint64 run_len = 0;
      WbPlug wp = { { 0 }, NULL };
      for (SimList *l = b->dirty.next; l != &b->dirty;)
        {
          SimPage *page = sim_container_of (l, SimPage, dirty_link);
          l = l->next;
          if ((sy->file && page->file != sy->file) || page->dirty_seq > sy->start_seq
              || page->writeback)
            continue;
          if (run_len && !run_continues (run_page, run_len, page))
            {
              wb_plug_submit (pc, &wp, run_page, run_len, sy->ioc, SIM_BIO_SYNC);
              run_len = 0;
            }
          if (run_len == 0)
            run_page = page;
          run_len++;
          begin_writeback (pc, page);
          started++;
        }
      if (run_len)
        wb_plug_submit (pc, &wp, run_page, run_len, sy->ioc, SIM_BIO_SYNC);
      wb_plug_finish (&wp);
      sim_queue_unplug (b->q, sy->ioc);
    }
  pc->stats.sync_pages += started;
  return started;
}

static void
sync_done_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimPageSync *sy = object;
  SimPageCache *pc = subject;
  pc->stats.syncs++;
  sy->done (sim, sy, sim_now (sim));
}

/* One more round: write what is still eligible (pages redirtied before the
 * call while their write was in flight become writable once it ends) and
 * wait for everything in flight; FALSE when there is nothing left. */
static gboolean
sync_round (SimPageCache *pc, SimPageSync *sy)
{
  /* Only the first round waits for writes others started: later rounds
   * would otherwise chase a flusher that keeps the file under writeback. */
  guint64 in_flight = sy->rounds++ == 0 ? sync_in_flight (pc, sy) : 0;
  guint64 started = sync_start_pages (pc, sy);
  if (in_flight + started == 0)
    return FALSE;
  sy->target_written = sync_written (pc, sy) + in_flight + started;
  sim_list_add_tail (&sy->wait_link, &pc->sync_waiters);
  return TRUE;
}

void
sim_page_cache_fsync (SimPageCache *pc, SimPageSync *sy)
{
  g_assert (sy->done != NULL && sy->ioc != NULL);
  sy->start_ns = sim_now (pc->sim);
  sy->start_seq = pc->dirty_seq;
  sy->rounds = 0;
  sim_list_init (&sy->wait_link);
  if (!sync_round (pc, sy))
    sim_schedule_in (pc->sim, 0, sync_done_fired, pc, sy);
}

static void
wake_syncs (SimPageCache *pc)
{
  SimList woken;
  take_all (&pc->sync_waiters, &woken);
  while (!sim_list_empty (&woken))
    {
      SimPageSync *sy = sim_list_first_entry (&woken, SimPageSync, wait_link);
      sim_list_del (&sy->wait_link);
      if (sync_written (pc, sy) < sy->target_written)
        sim_list_add_tail (&sy->wait_link, &pc->sync_waiters);
      else if (!sync_round (pc, sy))
        sim_schedule_in (pc->sim, 0, sync_done_fired, pc, sy);
    }
}

guint64
sim_page_cache_nr_dirty (const SimPageCache *pc)
{
  return pc->nr_dirty;
}

guint64
sim_page_cache_nr_writeback (const SimPageCache *pc)
{
  return pc->nr_writeback;
}

guint64
sim_page_cache_max_pages (const SimPageCache *pc)
{
  return pc->max_pages;
}

GPtrArray *
sim_page_cache_bdis (const SimPageCache *pc)
{
  return pc->bdis;
}

/* ---- throttled writers' passes -------------------------------------------- */

void
sim_page_cache_write_pass (SimPageCache *pc, SimPageWrite *wr, SimPageWritePassFn fn,
                           gpointer policy)
{
  g_assert (wr->pass_fn == NULL);
  wr->passes++;
  if (wr->pass == NULL)
    {
      fn (policy, wr);
      return;
    }
  wr->pass_fn = fn;
  wr->pass_policy = policy;
  wr->pass (wr, wr->pass_data);
}

void
sim_page_cache_write_pass_done (SimPageCache *pc, SimPageWrite *wr)
{
  SimPageWritePassFn fn = wr->pass_fn;
  g_assert (fn != NULL);
  wr->pass_fn = NULL;
  fn (wr->pass_policy, wr);
}

void
sim_page_cache_congestion_woken (SimPageCache *pc, guint n)
{
  pc->congestion_woken += n;
}

guint64
sim_page_cache_take_congestion_woken (SimPageCache *pc)
{
  guint64 n = pc->congestion_woken;
  pc->congestion_woken = 0;
  return n;
}

void
sim_page_cache_watch_queue (SimPageCache *pc, SimRequestQueue *q)
{
  if (q->freed_hook == request_freed && q->freed_hook_data == pc)
    return;
  g_assert (q->freed_hook == NULL);
  q->freed_hook = request_freed;
  q->freed_hook_data = pc;
}

void
sim_page_cache_set_congestion_wake (SimPageCache *pc, void (*fn) (gpointer data), gpointer data)
{
  pc->congestion_wake = fn;
  pc->congestion_wake_data = data;
}

guint
sim_page_cache_dirty_bdis (const SimPageCache *pc)
{
  guint n = 0;
  for (guint i = 0; i < pc->bdis->len; i++)
    {
      const SimBdi *b = g_ptr_array_index (pc->bdis, i);
      n += b->nr_dirty > 0 || !sim_list_empty (&b->q->wait_list[SIM_OP_WRITE]);
    }
  return n;
}
