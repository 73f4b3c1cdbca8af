/* trace-sketch.c — exact-then-DDSketch latency quantiles (see
 * trace-sketch.h for the method and its error bound). */
#include "traces/trace-sketch.h"

#include <math.h>
#include <string.h>

/* a = 0.45 %: with the whole-ns rounding (at most 0.5 / 1024 relative
 * above SKETCH_SMALL_NS) the reported error stays within 0.5 %. */
#define SKETCH_ALPHA     0.0045
#define SKETCH_SMALL_NS  1024

struct _TraceSketch {
  guint64  count;
  gint64   sum_ns;        /* exact while it fits ... */
  double   sum_spill_ns;  /* ... the rest moved here when it would wrap */
  gint64   min_ns;
  gint64   max_ns;
  GArray  *exact;         /* gint64, NULL once bucketed */
  gboolean sorted;
  guint64 *small;         /* [SKETCH_SMALL_NS]: counts of the values 0..1023 */
  guint64 *buckets;       /* [n_buckets]: bucket first_index + i */
  guint    n_buckets;
};

static double
log_gamma (void)
{
  return log ((1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA));
}

/* The absolute DDSketch index of @v: ceil (log_gamma v). */
static gint
bucket_index (double v)
{
  return (gint) ceil (log (v) / log_gamma ());
}

static gint
first_index (void)
{
  return bucket_index (SKETCH_SMALL_NS);
}

TraceSketch *
trace_sketch_new (void)
{
  TraceSketch *sk = g_new0 (TraceSketch, 1);

  sk->exact = g_array_new (FALSE, FALSE, sizeof (gint64));
  sk->sorted = TRUE;
  return sk;
}

void
trace_sketch_free (TraceSketch *sk)
{
  if (sk == NULL)
    return;
  if (sk->exact != NULL)
    g_array_unref (sk->exact);
  g_free (sk->small);
  g_free (sk->buckets);
  g_free (sk);
}

/* Store @v in the buckets (sketch mode). */
static void
bin (TraceSketch *sk, gint64 v)
{
  gint i;

  if (v < SKETCH_SMALL_NS)
    {
      sk->small[v]++;
      return;
    }
  i = bucket_index ((double) v) - first_index ();
  /* log() may land a value at a bucket edge one bucket off: the
   * representative is then still within a of it (the edge is shared). */
  i = CLAMP (i, 0, (gint) sk->n_buckets - 1);
  sk->buckets[i]++;
}

static void
to_buckets (TraceSketch *sk)
{
  if (sk->exact == NULL)
    return;
  sk->n_buckets = (guint) (bucket_index ((double) G_MAXINT64) - first_index () + 2);
  sk->small = g_new0 (guint64, SKETCH_SMALL_NS);
  sk->buckets = g_new0 (guint64, sk->n_buckets);
  for (guint i = 0; i < sk->exact->len; i++)
    bin (sk, g_array_index (sk->exact, gint64, i));
  g_clear_pointer (&sk->exact, g_array_unref);
}

static void
add_sum (TraceSketch *sk, gint64 v)
{
  if (sk->sum_ns > G_MAXINT64 - v)
    {
      sk->sum_spill_ns += (double) sk->sum_ns;
      sk->sum_ns = 0;
    }
  sk->sum_ns += v;
}

void
trace_sketch_add (TraceSketch *sk, gint64 value_ns)
{
  g_return_if_fail (sk != NULL);
  g_return_if_fail (value_ns >= 0);

  if (sk->count == 0 || value_ns < sk->min_ns)
    sk->min_ns = value_ns;
  if (sk->count == 0 || value_ns > sk->max_ns)
    sk->max_ns = value_ns;
  sk->count++;
  add_sum (sk, value_ns);
  if (sk->exact != NULL && sk->exact->len >= TRACE_SKETCH_EXACT_MAX)
    to_buckets (sk);
  if (sk->exact != NULL)
    {
      g_array_append_val (sk->exact, value_ns);
      sk->sorted = FALSE;
    }
  else
    bin (sk, value_ns);
}

void
trace_sketch_merge (TraceSketch *into, const TraceSketch *from)
{
  g_return_if_fail (into != NULL && from != NULL && into != from);

  if (from->count == 0)
    return;
  if (into->count == 0 || from->min_ns < into->min_ns)
    into->min_ns = from->min_ns;
  if (into->count == 0 || from->max_ns > into->max_ns)
    into->max_ns = from->max_ns;
  into->count += from->count;
  into->sum_spill_ns += from->sum_spill_ns;
  add_sum (into, from->sum_ns);

  if (into->exact != NULL && from->exact != NULL
      && into->exact->len + from->exact->len <= TRACE_SKETCH_EXACT_MAX)
    {
      g_array_append_vals (into->exact, from->exact->data, from->exact->len);
      into->sorted = FALSE;
      return;
    }
  to_buckets (into);
  if (from->exact != NULL)
    {
      for (guint i = 0; i < from->exact->len; i++)
        bin (into, g_array_index (from->exact, gint64, i));
      return;
    }
  g_assert (into->n_buckets == from->n_buckets);
  for (guint i = 0; i < SKETCH_SMALL_NS; i++)
    into->small[i] += from->small[i];
  for (guint i = 0; i < into->n_buckets; i++)
    into->buckets[i] += from->buckets[i];
}

guint64
trace_sketch_count (const TraceSketch *sk)
{
  return sk->count;
}

double
trace_sketch_mean_ns (const TraceSketch *sk)
{
  if (sk->count == 0)
    return 0.0;
  return (sk->sum_spill_ns + (double) sk->sum_ns) / (double) sk->count;
}

gint64
trace_sketch_min_ns (const TraceSketch *sk)
{
  return sk->count ? sk->min_ns : 0;
}

gint64
trace_sketch_max_ns (const TraceSketch *sk)
{
  return sk->count ? sk->max_ns : 0;
}

double
trace_sketch_relative_error (const TraceSketch *sk)
{
  return sk->exact != NULL ? 0.0 : TRACE_SKETCH_RELATIVE_ERROR;
}

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a;
  gint64 y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* DDSketch's estimate for bucket @i: 2 gamma^k / (gamma + 1), k its
 * absolute index, rounded to whole ns and kept within [min, max]. */
static gint64
bucket_value (const TraceSketch *sk, guint i)
{
  double gamma = (1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA);
  double v = 2.0 * pow (gamma, (double) ((gint) i + first_index ())) / (gamma + 1.0);

  if (v >= (double) sk->max_ns)
    return sk->max_ns;
  return MAX ((gint64) floor (v + 0.5), sk->min_ns);
}

gint64
trace_sketch_percentile_ns (TraceSketch *sk, double percent)
{
  guint64 rank;
  guint64 seen = 0;

  g_return_val_if_fail (sk != NULL, 0);
  g_return_val_if_fail (percent > 0 && percent <= 100, 0);
  if (sk->count == 0)
    return 0;
  /* Multiply first: for whole percents and counts below 2^53 the product
   * is exact, so the ceiling is the true nearest rank. */
  rank = (guint64) ceil (percent * (double) sk->count / 100.0);
  rank = CLAMP (rank, 1, sk->count);
  if (sk->exact != NULL)
    {
      if (!sk->sorted)
        {
          g_array_sort (sk->exact, compare_i64);
          sk->sorted = TRUE;
        }
      return g_array_index (sk->exact, gint64, rank - 1);
    }
  /* The extreme ranks are known exactly. */
  if (rank == 1)
    return sk->min_ns;
  if (rank == sk->count)
    return sk->max_ns;
  for (guint v = 0; v < SKETCH_SMALL_NS; v++)
    {
      seen += sk->small[v];
      if (seen >= rank)
        return v;
    }
  for (guint i = 0; i < sk->n_buckets; i++)
    {
      seen += sk->buckets[i];
      if (seen >= rank)
        return bucket_value (sk, i);
    }
  g_assert_not_reached ();
  return sk->max_ns;
}
