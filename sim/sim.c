/* sim.c — the event engine.
 *
 * A binary min-heap of (time, sequence, slot) keys; the handler closure of
 * each pending event sits in a slot array with a free list, so scheduling
 * and running events allocate nothing once the arrays have grown to the
 * simulation's working size.  An event id packs the slot index with a
 * per-slot generation: cancelling marks the slot dead (lazy cancel, ns-3
 * style) and the heap entry is dropped when it reaches the top.
 *
 * Most handlers schedule the next event of their object, so the running
 * event's heap entry stays at the top while its handler runs and the first
 * event it schedules takes that place: one sift down instead of a pop and a
 * push.  Any valid heap of the same unique (time, sequence) keys gives the
 * same run order, so this changes the cost only, never the order.
 */
#include "sim/sim.h"
#include "sim/sim-rng.h"

#include <stdlib.h>

/* 16 bytes: the time, and the sequence number above the slot index in one
 * word, so that (time, key) orders as (time, sequence); the slot field is
 * as wide as the slot array needs (slot_bits). */
typedef struct {
  SimTime  time_ns;
  guint64  key;
} HeapEntry;

typedef struct {
  SimEventFunc fn;       /* NULL when the slot is free or the event was cancelled */
  gpointer     subject;
  gpointer     object;
  guint32      generation;
  guint32      next_free;
} EventSlot;

#define SLOT_NONE G_MAXUINT32
#define SLOT_BITS_MIN 8
#define SLOT_BITS_MAX 32

struct _Sim {
  SimTime     now_ns;
  guint64     master_seed;
  guint64     next_seq;   /* below seq_limit */
  guint64     events_run;
  gboolean    stop_requested;

  HeapEntry  *heap;
  gsize       heap_len;
  gsize       heap_cap;
  /* heap[0] belongs to the event that is running: the first event its
   * handler schedules takes its place (one sift down instead of a pop and
   * a push); if it schedules none, heap[0] is popped when it returns. */
  gboolean    top_running;

  /* Heap keys are seq << slot_bits | slot.  slot_bits starts small and
   * grows with the slot array; the sequence numbers are renumbered then
   * (and if next_seq reaches seq_limit, after 2^32 schedules or more). */
  guint       slot_bits;
  guint64     slot_mask;
  guint64     seq_limit;

  EventSlot  *slots;
  guint32     slots_len;
  guint32     slots_cap;
  guint32     free_slot;
  gsize       live_events;

  GHashTable *rngs;       /* name -> SimRng */
  guint       next_pid;
};

Sim *
sim_new (guint64 master_seed)
{
  Sim *sim = g_new0 (Sim, 1);
  sim->master_seed = master_seed;
  sim->free_slot = SLOT_NONE;
  sim->slot_bits = SLOT_BITS_MIN;
  sim->slot_mask = (G_GUINT64_CONSTANT (1) << SLOT_BITS_MIN) - 1;
  sim->seq_limit = G_GUINT64_CONSTANT (1) << (64 - SLOT_BITS_MIN);
  sim->rngs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) sim_rng_free);
  sim->next_pid = 1000;
  return sim;
}

void
sim_free (Sim *sim)
{
  if (sim == NULL)
    return;
  g_hash_table_unref (sim->rngs);
  g_free (sim->heap);
  g_free (sim->slots);
  g_free (sim);
}

SimTime
sim_now (const Sim *sim)
{
  return sim->now_ns;
}

guint64
sim_master_seed (const Sim *sim)
{
  return sim->master_seed;
}

/* (time, key) order as one 128-bit compare (cmp and sbb, no branches: the
 * outcome follows the event times, which a branch predictor cannot guess).
 * Times are never negative: the clock starts at 0 and never goes back. */
static inline gboolean
heap_less (const HeapEntry *a, const HeapEntry *b)
{
  unsigned __int128 ka = ((unsigned __int128) (guint64) a->time_ns << 64) | a->key;
  unsigned __int128 kb = ((unsigned __int128) (guint64) b->time_ns << 64) | b->key;
  return ka < kb;
}

static inline void
heap_sift_up (Sim *sim, gsize i)
{
  HeapEntry e = sim->heap[i];
  while (i > 0)
    {
      gsize parent = (i - 1) / 2;
      if (!heap_less (&e, &sim->heap[parent]))
        break;
      sim->heap[i] = sim->heap[parent];
      i = parent;
    }
  sim->heap[i] = e;
}

/* Put @e at @i and move it down to its place. */
static inline void
heap_sift_down (Sim *sim, gsize i, HeapEntry e)
{
  HeapEntry *heap = sim->heap;
  gsize n = sim->heap_len;
  for (;;)
    {
      gsize child = 2 * i + 1;
      if (child >= n)
        break;
      if (child + 1 < n)
        child += heap_less (&heap[child + 1], &heap[child]);
      if (!heap_less (&heap[child], &e))
        break;
      heap[i] = heap[child];
      i = child;
    }
  heap[i] = e;
}

static void
heap_grow (Sim *sim)
{
  sim->heap_cap = MAX (64u, sim->heap_cap * 2);
  sim->heap = g_renew (HeapEntry, sim->heap, sim->heap_cap);
}

static void
slots_grow (Sim *sim)
{
  sim->slots_cap = MAX (64u, sim->slots_cap * 2);
  sim->slots = g_renew (EventSlot, sim->slots, sim->slots_cap);
}

static inline guint32
entry_slot (const Sim *sim, const HeapEntry *e)
{
  return (guint32) (e->key & sim->slot_mask);
}

static int
entry_cmp (gconstpointer a, gconstpointer b)
{
  return heap_less (a, b) ? -1 : (heap_less (b, a) ? 1 : 0);
}

/* Give the pending entries the sequence numbers 0, 1, ... in (time,
 * sequence) order, in keys with @slot_bits for the slot.  The sorted array
 * is a valid heap; a running event's entry, the smallest, stays at the top. */
static void
heap_renumber (Sim *sim, guint slot_bits)
{
  g_assert (slot_bits <= SLOT_BITS_MAX);
  qsort (sim->heap, sim->heap_len, sizeof *sim->heap, entry_cmp);
  for (gsize i = 0; i < sim->heap_len; i++)
    sim->heap[i].key = ((guint64) i << slot_bits) | entry_slot (sim, &sim->heap[i]);
  sim->slot_bits = slot_bits;
  sim->slot_mask = (G_GUINT64_CONSTANT (1) << slot_bits) - 1;
  sim->seq_limit = G_GUINT64_CONSTANT (1) << (64 - slot_bits);
  sim->next_seq = sim->heap_len;
  g_assert (sim->next_seq < sim->seq_limit);
}

static inline guint32
slot_alloc (Sim *sim)
{
  if (G_LIKELY (sim->free_slot != SLOT_NONE))
    {
      guint32 s = sim->free_slot;
      sim->free_slot = sim->slots[s].next_free;
      return s;
    }
  if (sim->slots_len == sim->slots_cap)
    slots_grow (sim);
  guint32 s = sim->slots_len++;
  if (s > sim->slot_mask)
    heap_renumber (sim, MIN (sim->slot_bits + 8, (guint) SLOT_BITS_MAX));
  sim->slots[s].generation = 1;
  return s;
}

static inline void
slot_release (Sim *sim, guint32 s)
{
  EventSlot *slot = &sim->slots[s];
  slot->fn = NULL;
  slot->generation++;
  if (slot->generation == 0)
    slot->generation = 1;
  slot->next_free = sim->free_slot;
  sim->free_slot = s;
}

static inline SimEventId
make_id (guint32 slot, guint32 generation)
{
  return ((guint64) generation << 32) | slot;
}

static inline SimEventId
schedule (Sim *sim, SimTime at_ns, SimEventFunc fn, gpointer subject, gpointer object)
{
  g_assert (fn != NULL);
  /* An event in the past is a bug in the caller, never something to clamp. */
  g_assert (at_ns >= sim->now_ns);

  guint32 s = slot_alloc (sim);
  EventSlot *slot = &sim->slots[s];
  slot->fn = fn;
  slot->subject = subject;
  slot->object = object;

  if (G_UNLIKELY (sim->next_seq == sim->seq_limit))
    heap_renumber (sim, sim->slot_bits);
  HeapEntry e = { at_ns, (sim->next_seq++ << sim->slot_bits) | s };
  if (sim->top_running)
    {
      sim->top_running = FALSE;
      heap_sift_down (sim, 0, e);
    }
  else
    {
      if (G_UNLIKELY (sim->heap_len == sim->heap_cap))
        heap_grow (sim);
      sim->heap[sim->heap_len] = e;
      heap_sift_up (sim, sim->heap_len++);
    }
  sim->live_events++;
  return make_id (s, slot->generation);
}

SimEventId
sim_schedule_at (Sim *sim, SimTime at_ns, SimEventFunc fn, gpointer subject,
                 gpointer object)
{
  return schedule (sim, at_ns, fn, subject, object);
}

SimEventId
sim_schedule_in (Sim *sim, SimTime delay_ns, SimEventFunc fn, gpointer subject,
                 gpointer object)
{
  g_assert (delay_ns >= 0);
  return schedule (sim, sim->now_ns + delay_ns, fn, subject, object);
}

static EventSlot *
live_slot (const Sim *sim, SimEventId id)
{
  if (id == 0)
    return NULL;
  guint32 s = (guint32) (id & 0xffffffffu);
  guint32 generation = (guint32) (id >> 32);
  if (s >= sim->slots_len)
    return NULL;
  EventSlot *slot = &sim->slots[s];
  if (slot->generation != generation || slot->fn == NULL)
    return NULL;
  return slot;
}

gboolean
sim_cancel (Sim *sim, SimEventId id)
{
  EventSlot *slot = live_slot (sim, id);
  if (slot == NULL)
    return FALSE;
  /* The heap entry stays until it surfaces; the slot is freed then. */
  slot->fn = NULL;
  sim->live_events--;
  return TRUE;
}

gboolean
sim_event_pending (const Sim *sim, SimEventId id)
{
  return live_slot (sim, id) != NULL;
}

static inline void
heap_pop (Sim *sim)
{
  HeapEntry last = sim->heap[--sim->heap_len];
  if (sim->heap_len > 0)
    heap_sift_down (sim, 0, last);
}

/* Drop the running event's entry (if its handler scheduled nothing in its
 * place) and cancelled entries at the top; returns the next live entry or
 * NULL. */
static inline const HeapEntry *
peek_live (Sim *sim)
{
  if (sim->top_running)
    {
      sim->top_running = FALSE;
      heap_pop (sim);
    }
  while (sim->heap_len > 0)
    {
      const HeapEntry *top = &sim->heap[0];
      guint32 s = entry_slot (sim, top);
      if (G_LIKELY (sim->slots[s].fn != NULL))
        return top;
      heap_pop (sim);
      slot_release (sim, s);
    }
  return NULL;
}

/* Run the live event @top (heap[0]).  Its slot is free again before the
 * handler runs, so its id is stale inside it and its first schedule
 * reuses the slot. */
static inline void
run_top (Sim *sim, const HeapEntry *top)
{
  g_assert (top->time_ns >= sim->now_ns);
  sim->now_ns = top->time_ns;
  guint32 s = entry_slot (sim, top);
  EventSlot *slot = &sim->slots[s];
  SimEventFunc fn = slot->fn;
  gpointer subject = slot->subject;
  gpointer object = slot->object;
  slot_release (sim, s);
  sim->live_events--;
  sim->events_run++;
  sim->top_running = TRUE;
  fn (sim, subject, object);
  if (sim->top_running)
    {
      sim->top_running = FALSE;
      heap_pop (sim);
    }
}

gboolean
sim_step (Sim *sim)
{
  const HeapEntry *top = peek_live (sim);
  if (top == NULL)
    return FALSE;
  run_top (sim, top);
  return TRUE;
}

void
sim_run_until (Sim *sim, SimTime end_ns)
{
  sim->stop_requested = FALSE;
  while (!sim->stop_requested)
    {
      const HeapEntry *top = peek_live (sim);
      if (top == NULL)
        break;
      if (top->time_ns > end_ns)
        {
          sim->now_ns = MAX (sim->now_ns, end_ns);
          break;
        }
      run_top (sim, top);
    }
}

void
sim_stop (Sim *sim)
{
  sim->stop_requested = TRUE;
}

guint64
sim_events_run (const Sim *sim)
{
  return sim->events_run;
}

gsize
sim_events_pending (const Sim *sim)
{
  return sim->live_events;
}

SimRng *
sim_rng (Sim *sim, const char *name)
{
  SimRng *rng = g_hash_table_lookup (sim->rngs, name);
  if (rng == NULL)
    {
      rng = sim_rng_new (sim->master_seed, name);
      g_hash_table_insert (sim->rngs, g_strdup (name), rng);
    }
  return rng;
}

guint
sim_next_pid (Sim *sim)
{
  return sim->next_pid++;
}
