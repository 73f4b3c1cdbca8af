/* sim-rbtree.c — intrusive red-black tree (CLRS chapter 13, with parent
 * pointers and NULL leaves).  Used by the elevators for sector-sorted
 * request trees, like the kernel's elv_rb_* helpers. */
#include "sim/sim-rbtree.h"

static gboolean
is_red (const SimRbNode *n)
{
  return n != NULL && n->red;
}

static void
rotate_left (SimRbTree *tree, SimRbNode *x)
{
  SimRbNode *y = x->right;
  x->right = y->left;
  if (y->left)
    y->left->parent = x;
  y->parent = x->parent;
  if (x->parent == NULL)
    tree->root = y;
  else if (x == x->parent->left)
    x->parent->left = y;
  else
    x->parent->right = y;
  y->left = x;
  x->parent = y;
}

static void
rotate_right (SimRbTree *tree, SimRbNode *x)
{
  SimRbNode *y = x->left;
  x->left = y->right;
  if (y->right)
    y->right->parent = x;
  y->parent = x->parent;
  if (x->parent == NULL)
    tree->root = y;
  else if (x == x->parent->right)
    x->parent->right = y;
  else
    x->parent->left = y;
  y->right = x;
  x->parent = y;
}

static void
insert_fixup (SimRbTree *tree, SimRbNode *z)
{
  while (is_red (z->parent))
    {
      SimRbNode *p = z->parent;
      SimRbNode *g = p->parent;
      if (p == g->left)
        {
          SimRbNode *u = g->right;
          if (is_red (u))
            {
              p->red = FALSE;
              u->red = FALSE;
              g->red = TRUE;
              z = g;
              continue;
            }
          if (z == p->right)
            {
              z = p;
              rotate_left (tree, z);
              p = z->parent;
            }
          p->red = FALSE;
          g->red = TRUE;
          rotate_right (tree, g);
        }
      else
        {
          SimRbNode *u = g->left;
          if (is_red (u))
            {
              p->red = FALSE;
              u->red = FALSE;
              g->red = TRUE;
              z = g;
              continue;
            }
          if (z == p->left)
            {
              z = p;
              rotate_right (tree, z);
              p = z->parent;
            }
          p->red = FALSE;
          g->red = TRUE;
          rotate_left (tree, g);
        }
    }
  tree->root->red = FALSE;
}

void
sim_rb_insert (SimRbTree *tree, SimRbNode *node, SimRbCompare cmp)
{
  SimRbNode *parent = NULL;
  SimRbNode **link = &tree->root;
  while (*link)
    {
      parent = *link;
      /* Equal keys go right: inserted after existing equals (stable). */
      link = cmp (node, parent) < 0 ? &parent->left : &parent->right;
    }
  node->parent = parent;
  node->left = node->right = NULL;
  node->red = TRUE;
  *link = node;
  tree->count++;
  insert_fixup (tree, node);
}

static void
transplant (SimRbTree *tree, SimRbNode *u, SimRbNode *v)
{
  if (u->parent == NULL)
    tree->root = v;
  else if (u == u->parent->left)
    u->parent->left = v;
  else
    u->parent->right = v;
  if (v)
    v->parent = u->parent;
}

static SimRbNode *
leftmost (SimRbNode *n)
{
  while (n->left)
    n = n->left;
  return n;
}

static SimRbNode *
rightmost (SimRbNode *n)
{
  while (n->right)
    n = n->right;
  return n;
}

static void
erase_fixup (SimRbTree *tree, SimRbNode *x, SimRbNode *x_parent)
{
  while (x != tree->root && !is_red (x))
    {
      if (x == x_parent->left)
        {
          SimRbNode *w = x_parent->right;
          if (is_red (w))
            {
              w->red = FALSE;
              x_parent->red = TRUE;
              rotate_left (tree, x_parent);
              w = x_parent->right;
            }
          if (!is_red (w->left) && !is_red (w->right))
            {
              w->red = TRUE;
              x = x_parent;
              x_parent = x->parent;
            }
          else
            {
              if (!is_red (w->right))
                {
                  w->left->red = FALSE;
                  w->red = TRUE;
                  rotate_right (tree, w);
                  w = x_parent->right;
                }
              w->red = x_parent->red;
              x_parent->red = FALSE;
              if (w->right)
                w->right->red = FALSE;
              rotate_left (tree, x_parent);
              x = tree->root;
              x_parent = NULL;
            }
        }
      else
        {
          SimRbNode *w = x_parent->left;
          if (is_red (w))
            {
              w->red = FALSE;
              x_parent->red = TRUE;
              rotate_right (tree, x_parent);
              w = x_parent->left;
            }
          if (!is_red (w->left) && !is_red (w->right))
            {
              w->red = TRUE;
              x = x_parent;
              x_parent = x->parent;
            }
          else
            {
              if (!is_red (w->left))
                {
                  w->right->red = FALSE;
                  w->red = TRUE;
                  rotate_left (tree, w);
                  w = x_parent->left;
                }
              w->red = x_parent->red;
              x_parent->red = FALSE;
              if (w->left)
                w->left->red = FALSE;
              rotate_right (tree, x_parent);
              x = tree->root;
              x_parent = NULL;
            }
        }
    }
  if (x)
    x->red = FALSE;
}

void
sim_rb_erase (SimRbTree *tree, SimRbNode *z)
{
  g_assert (sim_rb_node_linked (z));
  SimRbNode *x;
  SimRbNode *x_parent;
  gboolean removed_red;

  if (z->left == NULL)
    {
      x = z->right;
      x_parent = z->parent;
      removed_red = z->red;
      transplant (tree, z, z->right);
    }
  else if (z->right == NULL)
    {
      x = z->left;
      x_parent = z->parent;
      removed_red = z->red;
      transplant (tree, z, z->left);
    }
  else
    {
      SimRbNode *y = leftmost (z->right);
      removed_red = y->red;
      x = y->right;
      if (y->parent == z)
        x_parent = y;
      else
        {
          x_parent = y->parent;
          transplant (tree, y, y->right);
          y->right = z->right;
          y->right->parent = y;
        }
      transplant (tree, z, y);
      y->left = z->left;
      y->left->parent = y;
      y->red = z->red;
    }
  tree->count--;
  if (!removed_red)
    erase_fixup (tree, x, x_parent);
  sim_rb_node_clear (z);
}

SimRbNode *
sim_rb_first (const SimRbTree *tree)
{
  return tree->root ? leftmost (tree->root) : NULL;
}

SimRbNode *
sim_rb_last (const SimRbTree *tree)
{
  return tree->root ? rightmost (tree->root) : NULL;
}

SimRbNode *
sim_rb_next (const SimRbNode *node)
{
  if (node->right)
    return leftmost (node->right);
  const SimRbNode *n = node;
  SimRbNode *p = n->parent;
  while (p && n == p->right)
    {
      n = p;
      p = p->parent;
    }
  return p;
}

SimRbNode *
sim_rb_prev (const SimRbNode *node)
{
  if (node->left)
    return rightmost (node->left);
  const SimRbNode *n = node;
  SimRbNode *p = n->parent;
  while (p && n == p->left)
    {
      n = p;
      p = p->parent;
    }
  return p;
}

SimRbNode *
sim_rb_lower_bound (const SimRbTree *tree, gconstpointer key, SimRbCompareKey cmp_key)
{
  SimRbNode *n = tree->root;
  SimRbNode *best = NULL;
  while (n)
    {
      if (cmp_key (n, key) >= 0)
        {
          best = n;
          n = n->left;
        }
      else
        n = n->right;
    }
  return best;
}

static int
check_subtree (const SimRbNode *n, const SimRbNode *parent, gsize *count)
{
  if (n == NULL)
    return 1;
  if (n->parent != parent)
    return -1;
  if (n->red && (is_red (n->left) || is_red (n->right)))
    return -1;
  int lh = check_subtree (n->left, n, count);
  int rh = check_subtree (n->right, n, count);
  if (lh < 0 || rh < 0 || lh != rh)
    return -1;
  (*count)++;
  return lh + (n->red ? 0 : 1);
}

gboolean
sim_rb_check (const SimRbTree *tree, SimRbCompare cmp)
{
  if (tree->root && tree->root->red)
    return FALSE;
  gsize count = 0;
  if (check_subtree (tree->root, NULL, &count) < 0 || count != tree->count)
    return FALSE;
  const SimRbNode *prev = NULL;
  for (const SimRbNode *n = sim_rb_first (tree); n; n = sim_rb_next (n))
    {
      if (prev && cmp (prev, n) > 0)
        return FALSE;
      prev = n;
    }
  return TRUE;
}
