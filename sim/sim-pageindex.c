/* sim-pageindex.c — see sim-pageindex.h. */
#include "sim/sim-pageindex.h"
#include "sim/sim-mem.h"

#include <string.h>

typedef SimPageIndexMask SlotMask;

#define SLOT_MASK (SIM_PAGE_INDEX_SLOTS - 1u)

#define NODE_CHUNK 256   /* nodes in a pool's first chunk */

struct _SimPageIndexPool {
  SimPageIndexNode *free;
  GPtrArray        *chunks;
  guint64           nodes;
};

static inline SlotMask
bit (guint off)
{
  return (SlotMask) 1 << off;
}

static inline guint
slot_of (const SimPageIndexNode *n, guint64 index)
{
  return (guint) (index >> n->shift) & SLOT_MASK;
}

/* Whether the subtree under @n reaches @index (only the root may not). */
static inline gboolean
reaches (const SimPageIndexNode *n, guint64 index)
{
  guint top = n->shift + SIM_PAGE_INDEX_SHIFT;
  return top >= 64 || (index >> top) == 0;
}

SimPageIndexPool *
sim_page_index_pool_new (void)
{
  SimPageIndexPool *pool = g_new0 (SimPageIndexPool, 1);
  pool->chunks = g_ptr_array_new_with_free_func (sim_mem_chunk_free);
  return pool;
}

void
sim_page_index_pool_free (SimPageIndexPool *pool)
{
  if (pool == NULL)
    return;
  g_ptr_array_unref (pool->chunks);
  g_free (pool);
}

guint64
sim_page_index_pool_nodes (const SimPageIndexPool *pool)
{
  return pool->nodes;
}

static SimPageIndexNode *
node_new (SimPageIndexPool *pool, guint shift, SimPageIndexNode *parent, guint offset)
{
  if (pool->free == NULL)
    {
      /* Chunks double up to one huge page (sim-mem.h): a small cache
       * stays small, a big one gets its nodes in few TLB entries.  A
       * huge page is not a whole number of nodes: the chunk asks for the
       * whole page, so that it is mapped as one. */
      guint64 per_huge = SIM_MEM_HUGE_BYTES / sizeof (SimPageIndexNode);
      guint64 n = pool->nodes == 0 ? NODE_CHUNK : MIN (pool->nodes, per_huge);
      gsize bytes = n == per_huge ? SIM_MEM_HUGE_BYTES : n * sizeof (SimPageIndexNode);
      SimPageIndexNode *chunk = sim_mem_chunk_alloc (bytes);
      g_ptr_array_add (pool->chunks, chunk);
      for (guint64 i = 0; i < n; i++)
        {
          chunk[i].parent = pool->free;
          pool->free = &chunk[i];
        }
      pool->nodes += n;
    }
  SimPageIndexNode *n = pool->free;
  pool->free = n->parent;
  memset (n, 0, sizeof *n);
  n->shift = (guint8) shift;
  n->parent = parent;
  n->offset = (guint8) offset;
  return n;
}

static void
node_free (SimPageIndexPool *pool, SimPageIndexNode *n)
{
  n->parent = pool->free;
  pool->free = n;
}

void
sim_page_index_init (SimPageIndex *ix, SimPageIndexPool *pool)
{
  ix->pool = pool;
  ix->root = NULL;
  ix->count = 0;
  ix->hint[0] = ix->hint[1] = NULL;
}

static void
free_subtree (SimPageIndexPool *pool, SimPageIndexNode *n)
{
  if (n->shift > 0)
    for (SlotMask m = n->present; m; m &= m - 1)
      free_subtree (pool, n->slots[__builtin_ctzll (m)]);
  node_free (pool, n);
}

void
sim_page_index_clear (SimPageIndex *ix)
{
  if (ix->root)
    free_subtree (ix->pool, ix->root);
  ix->root = NULL;
  ix->count = 0;
  ix->hint[0] = ix->hint[1] = NULL;
}

/* The bottom node holding @index, or NULL. */
static SimPageIndexNode *
bottom_of (const SimPageIndex *ix, guint64 index)
{
  SimPageIndexNode *n = ix->root;
  if (n == NULL || !reaches (n, index))
    return NULL;
  for (guint shift = n->shift; n != NULL && shift > 0; shift -= SIM_PAGE_INDEX_SHIFT)
    n = n->slots[(index >> shift) & SLOT_MASK];
  return n;
}

void
sim_page_index_prefetch (const SimPageIndex *ix, guint64 index, guint level)
{
  SimPageIndexNode *n = ix->root;
  guint stop = level * SIM_PAGE_INDEX_SHIFT;
  if (n == NULL || !reaches (n, index) || n->shift < stop)
    return;
  /* As sim_page_index_lookup, it reads the slots' lines of the nodes on
   * the way, not their headers. */
  for (guint shift = n->shift; shift > stop; shift -= SIM_PAGE_INDEX_SHIFT)
    {
      n = n->slots[(index >> shift) & SLOT_MASK];
      if (n == NULL)
        return;
    }
  __builtin_prefetch (&n->slots[(index >> stop) & SLOT_MASK]);
  if (level == 0)
    __builtin_prefetch (n);
}

/* The lowest level whose node can be the root over @index. */
static guint
root_shift_for (guint64 index)
{
  guint shift = 0;
  while (shift + SIM_PAGE_INDEX_SHIFT < 64 && (index >> (shift + SIM_PAGE_INDEX_SHIFT)) != 0)
    shift += SIM_PAGE_INDEX_SHIFT;
  return shift;
}

/* A level on top: the old root becomes slot 0 of the new one. */
static void
grow (SimPageIndex *ix)
{
  SimPageIndexNode *old = ix->root;
  SimPageIndexNode *top = node_new (ix->pool, old->shift + SIM_PAGE_INDEX_SHIFT, NULL, 0);
  top->slots[0] = old;
  top->present = bit (0);
  for (guint t = 0; t < SIM_PAGE_INDEX_N_TAGS; t++)
    top->tags[t] = old->tags[t] ? bit (0) : 0;
  old->parent = top;
  old->offset = 0;
  ix->root = top;
}

/* Drop top levels that only lead to their slot 0 (radix_tree_shrink). */
static void
shrink (SimPageIndex *ix)
{
  SimPageIndexNode *n = ix->root;
  while (n != NULL && n->shift > 0 && n->present == bit (0))
    {
      SimPageIndexNode *child = n->slots[0];
      child->parent = NULL;
      child->offset = 0;
      node_free (ix->pool, n);
      n = child;
    }
  ix->root = n;
}

void
sim_page_index_insert_walk_ (SimPageIndex *ix, guint64 index, gpointer item)
{
  g_assert (item != NULL);
  if (ix->root == NULL)
    ix->root = node_new (ix->pool, root_shift_for (index), NULL, 0);
  while (!reaches (ix->root, index))
    grow (ix);
  SimPageIndexNode *n = ix->root;
  while (n->shift > 0)
    {
      guint off = slot_of (n, index);
      SimPageIndexNode *child = n->slots[off];
      if (child == NULL)
        {
          child = node_new (ix->pool, n->shift - SIM_PAGE_INDEX_SHIFT, n, off);
          n->slots[off] = child;
          n->present |= bit (off);
        }
      n = child;
    }
  guint off = index & SLOT_MASK;
  g_assert (n->slots[off] == NULL);
  n->slots[off] = item;
  n->present |= bit (off);
  ix->count++;
  sim_page_index_remember_ (ix, n, index >> SIM_PAGE_INDEX_SHIFT);
}

/* Clear @tag of slot @off of @n, and up the tree for as long as a node is
 * left with no slot so tagged. */
static void
clear_tag_up (SimPageIndexNode *n, guint off, SimPageIndexTag tag)
{
  while (n != NULL && (n->tags[tag] & bit (off)))
    {
      n->tags[tag] &= (SlotMask) ~bit (off);
      if (n->tags[tag] != 0)
        return;
      off = n->offset;
      n = n->parent;
    }
}

gpointer
sim_page_index_remove (SimPageIndex *ix, guint64 index)
{
  SimPageIndexNode *n = sim_page_index_hinted_ (ix, index >> SIM_PAGE_INDEX_SHIFT);
  if (n == NULL)
    n = bottom_of (ix, index);
  guint off = index & SLOT_MASK;
  gpointer item = n ? n->slots[off] : NULL;
  if (item == NULL)
    return NULL;
  for (guint t = 0; t < SIM_PAGE_INDEX_N_TAGS; t++)
    if (n->tags[t] & bit (off))
      clear_tag_up (n, off, t);
  n->slots[off] = NULL;
  n->present &= (SlotMask) ~bit (off);
  ix->count--;
  if (n->present != 0)
    return item;
  /* Empty nodes go, bottom up; their tags are already clear. */
  while (n->present == 0)
    {
      SimPageIndexNode *parent = n->parent;
      guint up = n->offset;
      for (guint h = 0; h < 2; h++)
        if (ix->hint[h] == n)
          ix->hint[h] = NULL;
      node_free (ix->pool, n);
      if (parent == NULL)
        {
          ix->root = NULL;
          return item;
        }
      parent->slots[up] = NULL;
      parent->present &= (SlotMask) ~bit (up);
      n = parent;
    }
  shrink (ix);
  return item;
}

void
sim_page_index_set_tag (SimPageIndex *ix, guint64 index, SimPageIndexTag tag)
{
  g_assert (tag < SIM_PAGE_INDEX_N_TAGS);
  SimPageIndexNode *n = ix->root;
  g_assert (n != NULL && reaches (n, index));
  for (;;)
    {
      guint off = slot_of (n, index);
      g_assert (n->present & bit (off));
      n->tags[tag] |= bit (off);
      if (n->shift == 0)
        return;
      n = n->slots[off];
    }
}

void
sim_page_index_clear_tag (SimPageIndex *ix, guint64 index, SimPageIndexTag tag)
{
  g_assert (tag < SIM_PAGE_INDEX_N_TAGS);
  SimPageIndexNode *n = bottom_of (ix, index);
  g_assert (n != NULL && (n->present & bit (index & SLOT_MASK)));
  clear_tag_up (n, index & SLOT_MASK, tag);
}

gboolean
sim_page_index_get_tag (const SimPageIndex *ix, guint64 index, SimPageIndexTag tag)
{
  g_assert (tag < SIM_PAGE_INDEX_N_TAGS);
  const SimPageIndexNode *n = bottom_of (ix, index);
  return n != NULL && (n->tags[tag] & bit (index & SLOT_MASK)) != 0;
}

gboolean
sim_page_index_tagged (const SimPageIndex *ix, SimPageIndexTag tag)
{
  g_assert (tag < SIM_PAGE_INDEX_N_TAGS);
  return ix->root != NULL && ix->root->tags[tag] != 0;
}

/* @index with the slot of level @shift set to @off and the bits below
 * cleared: the first index under that slot. */
static guint64
slot_start (guint64 index, guint shift, guint off)
{
  guint top = shift + SIM_PAGE_INDEX_SHIFT;
  guint64 above = top >= 64 ? 0 : index >> top << top;
  return above | ((guint64) off << shift);
}

/* The first item at or after *@index among the slots @mask_of picks:
 * down the tree to the first such slot at or after the index's own at each
 * level, back up to the next slot of an ancestor when a node has none. */
static gboolean
walk (const SimPageIndex *ix, guint64 *index, gint tag, gpointer *item)
{
  const SimPageIndexNode *n = ix->root;
  guint64 at = *index;
  if (n == NULL || !reaches (n, at))
    return FALSE;
  for (;;)
    {
      guint off = slot_of (n, at);
      SlotMask mask = tag < 0 ? n->present : n->tags[tag];
      SlotMask left = mask & (SlotMask) ~(bit (off) - 1);
      if (left == 0)
        {
          /* Nothing here at or after @at: the ancestors' next slots. */
          guint next;
          do
            {
              if (n->parent == NULL)
                return FALSE;
              next = n->offset + 1u;
              n = n->parent;
            }
          while (next == SIM_PAGE_INDEX_SLOTS);
          /* A top level of 64 slots over the last bits has slots past 2^64. */
          if (n->shift + SIM_PAGE_INDEX_SHIFT > 64 && next >= (1u << (64 - n->shift)))
            return FALSE;
          at = slot_start (at, n->shift, next);
          continue;
        }
      guint found = (guint) __builtin_ctzll (left);
      if (found != off)
        at = slot_start (at, n->shift, found);
      if (n->shift == 0)
        {
          *index = at;
          *item = n->slots[found];
          return TRUE;
        }
      n = n->slots[found];
    }
}

gboolean
sim_page_index_next (const SimPageIndex *ix, guint64 *index, gpointer *item)
{
  return walk (ix, index, -1, item);
}

gboolean
sim_page_index_next_tagged (const SimPageIndex *ix, guint64 *index, SimPageIndexTag tag,
                            gpointer *item)
{
  g_assert (tag < SIM_PAGE_INDEX_N_TAGS);
  return walk (ix, index, (gint) tag, item);
}

/* Checks the subtree under @n; adds its items to *@items. */
static gboolean
check_node (const SimPageIndexNode *n, guint64 *items)
{
  if (n->present == 0)
    return FALSE;
  for (guint off = 0; off < SIM_PAGE_INDEX_SLOTS; off++)
    {
      gboolean used = (n->present & bit (off)) != 0;
      if (used != (n->slots[off] != NULL))
        return FALSE;
      for (guint t = 0; t < SIM_PAGE_INDEX_N_TAGS; t++)
        {
          gboolean tagged = (n->tags[t] & bit (off)) != 0;
          const SimPageIndexNode *child = n->slots[off];
          if (n->shift == 0 ? tagged && !used : tagged != (used && child->tags[t] != 0))
            return FALSE;
        }
      if (!used)
        continue;
      if (n->shift == 0)
        {
          (*items)++;
          continue;
        }
      const SimPageIndexNode *child = n->slots[off];
      if (child->parent != n || child->offset != off
          || child->shift + SIM_PAGE_INDEX_SHIFT != n->shift || !check_node (child, items))
        return FALSE;
    }
  return TRUE;
}

gboolean
sim_page_index_check (const SimPageIndex *ix)
{
  /* The hints are live bottom nodes of this tree, under their keys. */
  for (guint h = 0; h < 2; h++)
    if (ix->hint[h] != NULL
        && (ix->hint[h]->shift != 0 || ix->hint_key[h] > G_MAXUINT64 >> SIM_PAGE_INDEX_SHIFT
            || bottom_of (ix, ix->hint_key[h] << SIM_PAGE_INDEX_SHIFT) != ix->hint[h]))
      return FALSE;
  if (ix->root == NULL)
    return ix->count == 0 && ix->hint[0] == NULL && ix->hint[1] == NULL;
  guint64 items = 0;
  /* The root has no parent and is not a level that shrink would drop. */
  if (ix->root->parent != NULL || (ix->root->shift > 0 && ix->root->present == bit (0)))
    return FALSE;
  return check_node (ix->root, &items) && items == ix->count;
}
