/* sim-pageindex.h — one file's cached pages by page index: a radix tree
 * with tag bits, after Linux's address_space i_pages (6.x
 * include/linux/xarray.h, lib/xarray.c; before 4.20 lib/radix-tree.c).
 *
 * Each node holds SIM_PAGE_INDEX_SLOTS slots: the items themselves in the
 * bottom nodes (shift 0), children above, each level covering
 * SIM_PAGE_INDEX_SHIFT more bits of the index; the tree grows a level at
 * the top when an index above its reach arrives and shrinks when the top
 * node keeps only its first slot.  A lookup is one slot read per level,
 * with no hashing and no chains, and neighbouring pages share a node.
 * Like the kernel's marks (XA_MARK_0..2: PAGECACHE_TAG_DIRTY, _WRITEBACK,
 * _TOWRITE), every node keeps a bitmap per tag of the slots below which
 * an item carries that tag, so tagged walks in index order skip untagged
 * subtrees; a bitmap of the slots in use gives the plain ordered walk.
 *
 * The kernel uses 64 slots a node (XA_CHUNK_SHIFT 6; 16 with
 * CONFIG_BASE_SMALL), and so do we: a file of 2^18 pages is 3 levels and
 * a walk touches one cache line per level, the upper ones shared by all
 * lookups of the file.  The price is memory where pages are scattered:
 * a 560-byte bottom node per cached page at worst (a 1 GiB cache of
 * pages each alone in its 64-page run: 150 MB), where 16 slots would
 * need 160 bytes for a level more; SIM_PAGE_INDEX_SHIFT 4 gives that.
 *
 * Nodes come from a pool shared by the files of a page cache: freed nodes
 * go back to the pool's free list and the pool grows in chunks, so a
 * steady state allocates nothing; the memory goes at
 * sim_page_index_pool_free. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SIM_PAGE_INDEX_SHIFT 6u
#define SIM_PAGE_INDEX_SLOTS (1u << SIM_PAGE_INDEX_SHIFT)

/* Tags an item can carry, as the page cache's (PAGECACHE_TAG_*). */
typedef enum {
  SIM_PAGE_INDEX_TAG_DIRTY,
  SIM_PAGE_INDEX_TAG_WRITEBACK,
  SIM_PAGE_INDEX_TAG_TOWRITE,
  SIM_PAGE_INDEX_N_TAGS
} SimPageIndexTag;

typedef struct _SimPageIndexPool SimPageIndexPool;
typedef struct _SimPageIndexNode SimPageIndexNode;

#if SIM_PAGE_INDEX_SLOTS == 16
typedef guint16 SimPageIndexMask;
#elif SIM_PAGE_INDEX_SLOTS == 64
typedef guint64 SimPageIndexMask;
#else
#error "SIM_PAGE_INDEX_SHIFT must be 4 or 6"
#endif

/* Private; here so that lookups inline into the page cache's loops. */
struct _SimPageIndexNode {
  SimPageIndexNode *parent;     /* NULL: the root; the free list's link while free */
  guint8            shift;      /* index bits below this node's slots */
  guint8            offset;     /* its slot in the parent */
  SimPageIndexMask  present;    /* slots in use */
  SimPageIndexMask  tags[SIM_PAGE_INDEX_N_TAGS];  /* slots with a tagged item below */
  gpointer          slots[SIM_PAGE_INDEX_SLOTS];  /* items at shift 0, else children */
};

/* One file's index; embedded in the file, set up by sim_page_index_init. */
typedef struct {
  SimPageIndexPool *pool;
  SimPageIndexNode *root;    /* NULL: empty */
  guint64           count;   /* items stored */
  /* The two bottom nodes used last, most recent first, and their
   * indices >> SIM_PAGE_INDEX_SHIFT: neighbouring pages (a sequential
   * writer, a bio's pages) skip the walk from the root, as an xa_state
   * kept across calls would; two, so that a writer and the writeback
   * completing behind it do not evict each other's. */
  SimPageIndexNode *hint[2];
  guint64           hint_key[2];
} SimPageIndex;

SimPageIndexPool *sim_page_index_pool_new  (void);
/* Frees every node; the indexes that used the pool must not be used again. */
void              sim_page_index_pool_free (SimPageIndexPool *pool);
/* Nodes taken from the system so far (for tests: the steady state stops
 * taking more). */
guint64           sim_page_index_pool_nodes (const SimPageIndexPool *pool);

void     sim_page_index_init   (SimPageIndex *ix, SimPageIndexPool *pool);
/* Empty @ix, its nodes back to the pool. */
void     sim_page_index_clear  (SimPageIndex *ix);

/* Private: the remembered bottom node under @key, made the most recent;
 * NULL when neither is. */
static inline SimPageIndexNode *
sim_page_index_hinted_ (SimPageIndex *ix, guint64 key)
{
  SimPageIndexNode *n = ix->hint[0];
  if (n != NULL && ix->hint_key[0] == key)
    return n;
  n = ix->hint[1];
  if (n == NULL || ix->hint_key[1] != key)
    return NULL;
  ix->hint[1] = ix->hint[0];
  ix->hint_key[1] = ix->hint_key[0];
  ix->hint[0] = n;
  ix->hint_key[0] = key;
  return n;
}

/* Private: remember bottom node @n under @key as the most recent. */
static inline void
sim_page_index_remember_ (SimPageIndex *ix, SimPageIndexNode *n, guint64 key)
{
  ix->hint[1] = ix->hint[0];
  ix->hint_key[1] = ix->hint_key[0];
  ix->hint[0] = n;
  ix->hint_key[0] = key;
}

/* The item at @index, or NULL: one slot read per level, or one in all
 * when @index is in a bottom node used lately (which it remembers). */
static inline gpointer
sim_page_index_lookup (SimPageIndex *ix, guint64 index)
{
  guint64 key = index >> SIM_PAGE_INDEX_SHIFT;
  SimPageIndexNode *n = sim_page_index_hinted_ (ix, key);
  guint top;
  if (n != NULL)
    return n->slots[index & (SIM_PAGE_INDEX_SLOTS - 1)];
  n = ix->root;
  if (n == NULL || ((top = n->shift + SIM_PAGE_INDEX_SHIFT) < 64 && (index >> top) != 0))
    return NULL;
  /* Each level is SIM_PAGE_INDEX_SHIFT below its parent: reading only
   * the slot's cache line of a node, not its header, saves a miss per
   * level on cold nodes. */
  for (guint shift = n->shift; shift > 0; shift -= SIM_PAGE_INDEX_SHIFT)
    {
      n = (SimPageIndexNode *) n->slots[(index >> shift) & (SIM_PAGE_INDEX_SLOTS - 1)];
      if (n == NULL)
        return NULL;
    }
  sim_page_index_remember_ (ix, n, key);
  return n->slots[index & (SIM_PAGE_INDEX_SLOTS - 1)];
}

/* Private: sim_page_index_insert's walk from the root. */
void     sim_page_index_insert_walk_ (SimPageIndex *ix, guint64 index, gpointer item);

/* Store @item (not NULL) at @index, where there must be none; no tags. */
static inline void
sim_page_index_insert (SimPageIndex *ix, guint64 index, gpointer item)
{
  SimPageIndexNode *n = sim_page_index_hinted_ (ix, index >> SIM_PAGE_INDEX_SHIFT);
  guint off = index & (SIM_PAGE_INDEX_SLOTS - 1);
  if (n == NULL)
    {
      sim_page_index_insert_walk_ (ix, index, item);
      return;
    }
  g_assert (item != NULL && n->slots[off] == NULL);
  n->slots[off] = item;
  n->present |= (SimPageIndexMask) 1 << off;
  ix->count++;
}

/* Start loading, without waiting for them, the cache lines that a lookup,
 * insert or removal of @index will read @level levels above the bottom:
 * at 0 the bottom node's slot and header, at 1 the slot of the node above
 * that points to the bottom node.  The walk to there reads only the nodes
 * above, so a caller that knows an index two operations ahead asks for
 * level 1 first and level 0 the next time, which then finds level 1's
 * line loaded.  Nothing when the path is not there (an insert builds it). */
void     sim_page_index_prefetch (const SimPageIndex *ix, guint64 index, guint level);

/* Remove and return the item at @index (NULL: there was none) and its tags. */
gpointer sim_page_index_remove (SimPageIndex *ix, guint64 index);

/* Tags of the item at @index, which must exist. */
void     sim_page_index_set_tag   (SimPageIndex *ix, guint64 index, SimPageIndexTag tag);
void     sim_page_index_clear_tag (SimPageIndex *ix, guint64 index, SimPageIndexTag tag);
gboolean sim_page_index_get_tag   (const SimPageIndex *ix, guint64 index, SimPageIndexTag tag);
/* Whether any item carries @tag (the root's bitmap, as mapping_tagged). */
gboolean sim_page_index_tagged    (const SimPageIndex *ix, SimPageIndexTag tag);

/* The first item at an index >= *@index (find_get_pages): TRUE and
 * *@index, *@item set, or FALSE when there is none.  A walk in index
 * order calls it again from *@index + 1 (none after G_MAXUINT64). */
gboolean sim_page_index_next        (const SimPageIndex *ix, guint64 *index, gpointer *item);
/* The same among the items carrying @tag (find_get_pages_tag). */
gboolean sim_page_index_next_tagged (const SimPageIndex *ix, guint64 *index,
                                     SimPageIndexTag tag, gpointer *item);

static inline guint64
sim_page_index_count (const SimPageIndex *ix)
{
  return ix->count;
}

/* Checks every node's bitmaps and counts against its slots; for tests. */
gboolean sim_page_index_check (const SimPageIndex *ix);

G_END_DECLS
