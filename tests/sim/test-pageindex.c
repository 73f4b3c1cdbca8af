/* test-pageindex.c — the page index (sim/sim-pageindex.h) against a sorted
 * array: random inserts, removals, lookups, tag changes and ordered and
 * tagged walks, each after a prefetch, from fixed seeds, over dense,
 * sparse (indices up to 2^40 and 2^64 - 1) and tiny files; after every
 * step of the walks the whole index must equal the array, and a second
 * round over the same pool must take no more nodes (the steady state
 * allocates nothing). */
#include <glib.h>

#include "sim/sim-pageindex.h"

typedef struct {
  guint64 index;
  guint   tags;     /* bit t: carries SimPageIndexTag t */
} RefEntry;

typedef struct {
  const char    *name;
  guint32        seed;
  guint          ops;
  guint64        span;      /* indices drawn from [0, span); 0: all 64 bits */
  const guint64 *anchors;   /* and near these (may be NULL) */
  guint          n_anchors;
} IndexCase;

static const guint64 far_anchors[] = {
  0, G_GUINT64_CONSTANT (1) << 20, G_GUINT64_CONSTANT (1) << 40,
  (G_GUINT64_CONSTANT (1) << 40) - 8, G_GUINT64_CONSTANT (1) << 63, G_MAXUINT64 - 20,
};

static const IndexCase cases[] = {
  { "dense",        1, 20000, 4096, NULL, 0 },
  { "one-node",     2, 5000, 16, NULL, 0 },
  { "few-pages",    3, 2000, 3, NULL, 0 },
  { "one-page",     4, 500, 1, NULL, 0 },
  { "sparse-2^40",  5, 20000, G_GUINT64_CONSTANT (1) << 40, NULL, 0 },
  { "far-apart",    6, 20000, 64, far_anchors, G_N_ELEMENTS (far_anchors) },
  { "full-64-bit",  7, 10000, 0, NULL, 0 },
};

static gpointer
item_of (guint64 index)
{
  return GSIZE_TO_POINTER ((gsize) (index * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15)) | 1u);
}

/* Position of @index in @ref, or where it would go; *@found says which. */
static guint
ref_find (const GArray *ref, guint64 index, gboolean *found)
{
  guint lo = 0, hi = ref->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (ref, RefEntry, mid).index < index)
        lo = mid + 1;
      else
        hi = mid;
    }
  *found = lo < ref->len && g_array_index (ref, RefEntry, lo).index == index;
  return lo;
}

static guint64
draw_index (GRand *r, const IndexCase *c, const GArray *ref)
{
  guint kind = (guint) g_rand_int_range (r, 0, 4);
  guint64 x = ((guint64) g_rand_int (r) << 32) | g_rand_int (r);
  if (kind == 0 && ref->len > 0)
    {
      /* Next to a stored one, to hit and just miss it. */
      guint64 at = g_array_index (ref, RefEntry, g_rand_int_range (r, 0, (gint32) ref->len)).index;
      return at + (guint64) g_rand_int_range (r, -2, 3);
    }
  if (kind == 1 && c->anchors != NULL)
    return c->anchors[g_rand_int_range (r, 0, (gint32) c->n_anchors)] + x % c->span;
  return c->span ? x % c->span : x;
}

/* The first entry of @ref at or after @from carrying @tag (-1: any). */
static const RefEntry *
ref_next (const GArray *ref, guint64 from, gint tag)
{
  gboolean found;
  for (guint i = ref_find (ref, from, &found); i < ref->len; i++)
    {
      const RefEntry *e = &g_array_index (ref, RefEntry, i);
      if (tag < 0 || (e->tags & (1u << tag)))
        return e;
    }
  return NULL;
}

static void
assert_next (const SimPageIndex *ix, const GArray *ref, guint64 from, gint tag)
{
  const RefEntry *want = ref_next (ref, from, tag);
  guint64 at = from;
  gpointer item = NULL;
  gboolean got = tag < 0 ? sim_page_index_next (ix, &at, &item)
                         : sim_page_index_next_tagged (ix, &at, tag, &item);
  g_assert_cmpint (got, ==, want != NULL);
  if (want)
    {
      g_assert_cmpuint (at, ==, want->index);
      g_assert_true (item == item_of (want->index));
    }
}

/* A whole walk, plain or by tag, equals the array's entries in order. */
static void
assert_walk (const SimPageIndex *ix, const GArray *ref, gint tag)
{
  guint64 at = 0;
  gpointer item;
  guint i = 0;
  for (;;)
    {
      gboolean got = tag < 0 ? sim_page_index_next (ix, &at, &item)
                             : sim_page_index_next_tagged (ix, &at, tag, &item);
      while (i < ref->len && tag >= 0 && !(g_array_index (ref, RefEntry, i).tags & (1u << tag)))
        i++;
      if (!got)
        break;
      g_assert_cmpuint (i, <, ref->len);
      g_assert_cmpuint (at, ==, g_array_index (ref, RefEntry, i).index);
      g_assert_true (item == item_of (at));
      i++;
      if (at == G_MAXUINT64)
        break;
      at++;
    }
  while (i < ref->len && tag >= 0 && !(g_array_index (ref, RefEntry, i).tags & (1u << tag)))
    i++;
  g_assert_cmpuint (i, ==, ref->len);
}

static void
assert_equal (const SimPageIndex *ix, const GArray *ref)
{
  g_assert_true (sim_page_index_check (ix));
  g_assert_cmpuint (sim_page_index_count (ix), ==, ref->len);
  assert_walk (ix, ref, -1);
  for (gint t = 0; t < SIM_PAGE_INDEX_N_TAGS; t++)
    {
      assert_walk (ix, ref, t);
      gboolean any = FALSE;
      for (guint i = 0; i < ref->len; i++)
        any |= (g_array_index (ref, RefEntry, i).tags & (1u << t)) != 0;
      g_assert_cmpint (sim_page_index_tagged (ix, t), ==, any);
    }
}

/* One step: an operation on both, and the answers compared. */
static void
step (SimPageIndex *ix, GArray *ref, GRand *r, const IndexCase *c)
{
  guint64 index = draw_index (r, c, ref);
  gboolean found;
  guint pos = ref_find (ref, index, &found);
  guint op = (guint) g_rand_int_range (r, 0, 8);
  /* A prefetch at any level, of an index present or not, changes nothing
   * checked. */
  sim_page_index_prefetch (ix, index, (guint) (index % 3));
  g_assert_true (sim_page_index_lookup (ix, index) == (found ? item_of (index) : NULL));
  switch (op)
    {
    case 0: case 1: case 2:
      if (!found)
        {
          sim_page_index_insert (ix, index, item_of (index));
          RefEntry e = { index, 0 };
          g_array_insert_val (ref, pos, e);
        }
      break;
    case 3: case 4:
      g_assert_true (sim_page_index_remove (ix, index) == (found ? item_of (index) : NULL));
      if (found)
        g_array_remove_index (ref, pos);
      break;
    case 5:
      if (found)
        {
          guint t = (guint) g_rand_int_range (r, 0, SIM_PAGE_INDEX_N_TAGS);
          RefEntry *e = &g_array_index (ref, RefEntry, pos);
          g_assert_cmpint (sim_page_index_get_tag (ix, index, t), ==, (e->tags >> t) & 1);
          if (g_rand_boolean (r))
            {
              sim_page_index_set_tag (ix, index, t);
              e->tags |= 1u << t;
            }
          else
            {
              sim_page_index_clear_tag (ix, index, t);
              e->tags &= ~(1u << t);
            }
        }
      break;
    default:
      assert_next (ix, ref, index, (gint) g_rand_int_range (r, -1, SIM_PAGE_INDEX_N_TAGS));
      break;
    }
}

static void
run_round (SimPageIndex *ix, GArray *ref, const IndexCase *c, guint32 seed)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  for (guint i = 0; i < c->ops; i++)
    {
      step (ix, ref, r, c);
      if (i % 997 == 0 || c->ops < 5000)
        assert_equal (ix, ref);
    }
  assert_equal (ix, ref);
  /* Empty it one by one, in random order, checking as it shrinks. */
  while (ref->len > 0)
    {
      guint pos = (guint) g_rand_int_range (r, 0, (gint32) ref->len);
      guint64 index = g_array_index (ref, RefEntry, pos).index;
      g_assert_true (sim_page_index_remove (ix, index) == item_of (index));
      g_array_remove_index (ref, pos);
      if (ref->len % 97 == 0)
        assert_equal (ix, ref);
    }
  assert_equal (ix, ref);
}

static void
test_random (gconstpointer data)
{
  const IndexCase *c = data;
  SimPageIndexPool *pool = sim_page_index_pool_new ();
  SimPageIndex ix;
  sim_page_index_init (&ix, pool);
  g_autoptr (GArray) ref = g_array_new (FALSE, FALSE, sizeof (RefEntry));
  run_round (&ix, ref, c, c->seed);
  /* The same operations again reuse the freed nodes. */
  guint64 nodes = sim_page_index_pool_nodes (pool);
  g_assert_cmpuint (nodes, >, 0);
  run_round (&ix, ref, c, c->seed);
  g_assert_cmpuint (sim_page_index_pool_nodes (pool), ==, nodes);
  sim_page_index_pool_free (pool);
}

/* Two indexes on one pool: clearing one gives its nodes to the other. */
static void
test_clear_shares_pool (void)
{
  SimPageIndexPool *pool = sim_page_index_pool_new ();
  SimPageIndex a, b;
  sim_page_index_init (&a, pool);
  sim_page_index_init (&b, pool);
  for (guint64 i = 0; i < 5000; i++)
    sim_page_index_insert (&a, i * 37, item_of (i * 37));
  g_assert_cmpuint (sim_page_index_count (&a), ==, 5000);
  guint64 nodes = sim_page_index_pool_nodes (pool);
  sim_page_index_clear (&a);
  g_assert_true (sim_page_index_check (&a));
  g_assert_null (sim_page_index_lookup (&a, 37));
  for (guint64 i = 0; i < 5000; i++)
    sim_page_index_insert (&b, i * 37, item_of (i * 37));
  g_assert_cmpuint (sim_page_index_pool_nodes (pool), ==, nodes);
  g_assert_true (sim_page_index_lookup (&b, 37 * 4999) == item_of (37 * 4999));
  g_assert_true (sim_page_index_check (&b));
  sim_page_index_pool_free (pool);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pageindex/random/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_random);
    }
  g_test_add_func ("/pageindex/clear-shares-pool", test_clear_shares_pool);
  return g_test_run ();
}
