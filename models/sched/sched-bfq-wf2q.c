/* sched-bfq-wf2q.c — B-WF2Q+ virtual time for BFQ (Linux 6.18
 * block/bfq-wf2q.c; ../shared/reference/kernel-algorithms.md §5.2).
 *
 *  - each entity has virtual start S and finish F = S + budget/weight
 *    (fixed point, BFQ_SERVICE_SHIFT);
 *  - selection: among eligible entities (S <= V) the smallest F; with no
 *    entity in service and none eligible, V first jumps to the smallest S;
 *  - serving s sectors advances V by s / wsum, where wsum counts the
 *    weights of active, in-service and idle entities;
 *  - an entity that empties keeps its timestamps on the idle tree while
 *    F > V; once V passes it, it is forgotten (and its weight leaves wsum);
 *    if the active tree is empty, V jumps past the whole idle tree.
 * The kernel's augmented rb-tree (min_start per subtree) is replaced by an
 * ordered walk of the active tree: entity counts are small.  No groups.
 */
#include "models/sched/sched-bfq-private.h"

#define ENT_OF(n) sim_container_of ((n), BfqEntity, node)

/* a > b in wrapping virtual time (bfq_gt). */
static inline gboolean
vt_gt (guint64 a, guint64 b)
{
  return (gint64) (a - b) > 0;
}

guint64
bfq_delta (guint64 service, guint64 weight)
{
  g_assert (weight > 0);
  return (service << BFQ_SERVICE_SHIFT) / weight;
}

static void
calc_finish (BfqEntity *e, int service)
{
  e->finish = e->start + bfq_delta ((guint64) service, (guint64) e->weight);
}

void
bfq_st_init (BfqServiceTree *st)
{
  sim_rb_tree_init (&st->active);
  sim_rb_tree_init (&st->idle);
  st->vtime = 0;
  st->wsum = 0;
  st->next_seq = 0;
}

static int
finish_compare (const SimRbNode *a, const SimRbNode *b)
{
  const BfqEntity *ea = ENT_OF (a);
  const BfqEntity *eb = ENT_OF (b);
  if (ea->finish != eb->finish)
    return vt_gt (ea->finish, eb->finish) ? 1 : -1;
  if (ea->seq != eb->seq)
    return ea->seq < eb->seq ? -1 : 1;
  return 0;
}

static void
tree_insert (BfqServiceTree *st, SimRbTree *tree, BfqEntity *e, BfqEntityWhere where)
{
  g_assert (e->where == BFQ_ENT_NONE);
  e->seq = st->next_seq++;
  sim_rb_insert (tree, &e->node, finish_compare);
  e->where = where;
}

static void
tree_extract (BfqServiceTree *st, BfqEntity *e)
{
  g_assert (e->where != BFQ_ENT_NONE);
  sim_rb_erase (e->where == BFQ_ENT_ACTIVE ? &st->active : &st->idle, &e->node);
  sim_rb_node_clear (&e->node);
  e->where = BFQ_ENT_NONE;
}

/* bfq_forget_entity: the weight leaves wsum. */
static void
forget_entity (BfqServiceTree *st, BfqEntity *e)
{
  g_assert (e->on_st);
  g_assert (st->wsum >= (guint64) e->weight);
  st->wsum -= (guint64) e->weight;
  e->on_st = FALSE;
}

/* bfq_forget_idle: drop idle entities whose finish V has passed. */
static void
forget_idle (BfqServiceTree *st)
{
  SimRbNode *first = sim_rb_first (&st->idle);
  SimRbNode *last = sim_rb_last (&st->idle);
  if (st->active.count == 0 && last && !vt_gt (ENT_OF (last)->finish, st->vtime))
    st->vtime = ENT_OF (last)->finish;
  if (first && !vt_gt (ENT_OF (first)->finish, st->vtime))
    {
      BfqEntity *e = ENT_OF (first);
      tree_extract (st, e);
      forget_entity (st, e);
    }
}

void
bfq_entity_set_weight (BfqServiceTree *st, BfqEntity *e, int weight)
{
  g_assert (weight > 0);
  if (e->on_st)
    st->wsum = st->wsum - (guint64) e->weight + (guint64) weight;
  e->weight = weight;
}

/* bfq_update_fin_time_enqueue. */
static void
fin_time_enqueue (BfqServiceTree *st, BfqEntity *e, gboolean backshifted, int wr_coeff)
{
  calc_finish (e, e->budget);
  /* Back-shifted timestamps behind V are pushed up to V (less for raised
   * queues) so that lucky queues cannot monopolise the device. */
  if (backshifted && vt_gt (st->vtime, e->finish))
    {
      guint64 delta = (st->vtime - e->finish) / (guint64) MAX (wr_coeff, 1);
      e->start += delta;
      e->finish += delta;
    }
  tree_insert (st, &st->active, e, BFQ_ENT_ACTIVE);
}

void
bfq_entity_activate (BfqServiceTree *st, BfqEntity *e, gboolean backshift, int wr_coeff)
{
  gboolean backshifted = FALSE;
  guint64 min_vstart = st->vtime;
  if (backshift && vt_gt (st->vtime, e->finish))
    {
      backshifted = TRUE;
      min_vstart = e->finish;
    }
  if (e->where == BFQ_ENT_IDLE)
    {
      tree_extract (st, e);
      e->start = vt_gt (min_vstart, e->finish) ? min_vstart : e->finish;
    }
  else
    {
      g_assert (e->where == BFQ_ENT_NONE && !e->on_st);
      e->start = min_vstart;
      st->wsum += (guint64) e->weight;
      e->on_st = TRUE;
    }
  fin_time_enqueue (st, e, backshifted, wr_coeff);
}

void
bfq_entity_requeue (BfqServiceTree *st, BfqEntity *e, gboolean in_service)
{
  if (in_service)
    {
      g_assert (e->where == BFQ_ENT_NONE && e->on_st);
      /* S moves forward past the service received in this slot. */
      calc_finish (e, e->service);
      e->start = e->finish;
    }
  else
    {
      g_assert (e->where == BFQ_ENT_ACTIVE);
      tree_extract (st, e);
    }
  fin_time_enqueue (st, e, FALSE, 1);
}

void
bfq_entity_deactivate (BfqServiceTree *st, BfqEntity *e, gboolean in_service)
{
  if (in_service)
    calc_finish (e, e->service);   /* keep timestamps in sync with the service */
  else if (e->where != BFQ_ENT_NONE)
    tree_extract (st, e);
  g_assert (e->where == BFQ_ENT_NONE);
  if (!e->on_st)
    return;
  if (!vt_gt (e->finish, st->vtime))
    forget_entity (st, e);
  else
    tree_insert (st, &st->idle, e, BFQ_ENT_IDLE);
}

void
bfq_st_served (BfqServiceTree *st, BfqEntity *e, int served)
{
  g_assert (st->wsum > 0);
  e->service += served;
  st->vtime += bfq_delta ((guint64) served, st->wsum);
  forget_idle (st);
}

static guint64
min_start (const BfqServiceTree *st)
{
  SimRbNode *n = sim_rb_first (&st->active);
  guint64 m = ENT_OF (n)->start;
  for (; n; n = sim_rb_next (n))
    if (vt_gt (m, ENT_OF (n)->start))
      m = ENT_OF (n)->start;
  return m;
}

BfqEntity *
bfq_st_lookup (BfqServiceTree *st, gboolean has_in_service)
{
  if (st->active.count == 0)
    return NULL;
  guint64 new_vtime = st->vtime;
  guint64 ms = min_start (st);
  if (vt_gt (ms, new_vtime))
    new_vtime = ms;
  /* With an entity in service, V stays: that entity is eligible. */
  if (!has_in_service && vt_gt (new_vtime, st->vtime))
    {
      st->vtime = new_vtime;
      forget_idle (st);
    }
  for (SimRbNode *n = sim_rb_first (&st->active); n; n = sim_rb_next (n))
    if (!vt_gt (ENT_OF (n)->start, new_vtime))
      return ENT_OF (n);
  g_assert_not_reached ();
}

void
bfq_st_set_in_service (BfqServiceTree *st, BfqEntity *e)
{
  g_assert (e->where == BFQ_ENT_ACTIVE);
  tree_extract (st, e);
}

gboolean
bfq_st_check (const BfqServiceTree *st)
{
  guint64 w = 0;
  for (SimRbNode *n = sim_rb_first (&st->active); n; n = sim_rb_next (n))
    {
      if (ENT_OF (n)->where != BFQ_ENT_ACTIVE || !ENT_OF (n)->on_st)
        return FALSE;
      w += (guint64) ENT_OF (n)->weight;
    }
  for (SimRbNode *n = sim_rb_first (&st->idle); n; n = sim_rb_next (n))
    {
      if (ENT_OF (n)->where != BFQ_ENT_IDLE || !ENT_OF (n)->on_st)
        return FALSE;
      w += (guint64) ENT_OF (n)->weight;
    }
  /* wsum also holds the in-service entity's weight. */
  return w <= st->wsum && sim_rb_check (&st->active, finish_compare)
         && sim_rb_check (&st->idle, finish_compare);
}
