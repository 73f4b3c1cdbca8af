/* sim-rbtree.h — an intrusive red-black tree keyed by the caller.
 *
 * Elevators keep requests sorted by sector (the kernel's elv_rb_* helpers).
 * The node lives inside the request, so inserting and removing allocate
 * nothing.  Ordering is given by a comparison function at insert time; the
 * tree supports first/last, successor/predecessor and lookup by key.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SimRbNode SimRbNode;
struct _SimRbNode {
  SimRbNode *parent;
  SimRbNode *left;
  SimRbNode *right;
  gboolean   red;
};

typedef struct {
  SimRbNode *root;
  gsize      count;
} SimRbTree;

/* Negative, zero or positive as @a sorts before, equal to, or after @b.
 * Equal nodes are inserted after existing equal ones (stable). */
typedef int (*SimRbCompare) (const SimRbNode *a, const SimRbNode *b);

#define SIM_RB_TREE_INIT { NULL, 0 }

void       sim_rb_insert    (SimRbTree *tree, SimRbNode *node, SimRbCompare cmp);
void       sim_rb_erase     (SimRbTree *tree, SimRbNode *node);
SimRbNode *sim_rb_first     (const SimRbTree *tree);
SimRbNode *sim_rb_last      (const SimRbTree *tree);
SimRbNode *sim_rb_next      (const SimRbNode *node);
SimRbNode *sim_rb_prev      (const SimRbNode *node);

/* Smallest node with key >= @key, where @cmp_key compares a node with the
 * key (negative when node < key). */
typedef int (*SimRbCompareKey) (const SimRbNode *node, gconstpointer key);
SimRbNode *sim_rb_lower_bound (const SimRbTree *tree, gconstpointer key, SimRbCompareKey cmp_key);

/* Checks colour and order invariants; for use inside g_assert() only. */
gboolean   sim_rb_check     (const SimRbTree *tree, SimRbCompare cmp);

static inline void
sim_rb_tree_init (SimRbTree *tree)
{
  tree->root = NULL;
  tree->count = 0;
}

static inline gboolean
sim_rb_node_linked (const SimRbNode *node)
{
  return node->parent != node;
}

/* Mark a node as not in any tree. */
static inline void
sim_rb_node_clear (SimRbNode *node)
{
  node->parent = node;
}

G_END_DECLS
