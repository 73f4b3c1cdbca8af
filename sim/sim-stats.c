/* sim-stats.c — see sim-stats.h. */
#include "sim/sim-stats.h"

#include <math.h>

static guint
bucket_index (guint64 v)
{
  if (v < (1u << (SIM_HIST_SUB_BITS + 1)))
    return (guint) v;
  guint msb = 63 - (guint) __builtin_clzll (v);
  guint shift = msb - SIM_HIST_SUB_BITS;
  guint idx = (1u << SIM_HIST_SUB_BITS) * shift + (guint) (v >> shift);
  return MIN (idx, SIM_HIST_BUCKETS - 1);
}

static SimTime
bucket_mid (guint idx)
{
  if (idx < (1u << (SIM_HIST_SUB_BITS + 1)))
    return idx;
  guint shift = idx / (1u << SIM_HIST_SUB_BITS) - 1;
  guint64 mantissa = idx - (guint64) (1u << SIM_HIST_SUB_BITS) * shift;
  guint64 low = mantissa << shift;
  return (SimTime) (low + ((G_GUINT64_CONSTANT (1) << shift) / 2));
}

void
sim_hist_init (SimHist *hist)
{
  hist->buckets = g_new0 (guint64, SIM_HIST_BUCKETS);
  hist->count = 0;
  hist->sum = 0;
  hist->min = 0;
  hist->max = 0;
}

void
sim_hist_clear (SimHist *hist)
{
  g_clear_pointer (&hist->buckets, g_free);
}

void
sim_hist_add (SimHist *hist, SimTime value)
{
  g_assert (value >= 0);
  if (hist->count == 0 || value < hist->min)
    hist->min = value;
  if (hist->count == 0 || value > hist->max)
    hist->max = value;
  hist->count++;
  hist->sum += (guint64) value;
  hist->buckets[bucket_index ((guint64) value)]++;
}

double
sim_hist_mean (const SimHist *hist)
{
  return hist->count ? (double) hist->sum / (double) hist->count : 0.0;
}

SimTime
sim_hist_quantile (const SimHist *hist, double q)
{
  if (hist->count == 0)
    return 0;
  q = CLAMP (q, 0.0, 1.0);
  guint64 rank = (guint64) ceil (q * (double) hist->count);
  if (rank == 0)
    rank = 1;
  guint64 seen = 0;
  for (guint i = 0; i < SIM_HIST_BUCKETS; i++)
    {
      seen += hist->buckets[i];
      if (seen >= rank)
        return CLAMP (bucket_mid (i), hist->min, hist->max);
    }
  return hist->max;
}

void
sim_hist_merge (SimHist *into, const SimHist *from)
{
  if (from->count == 0)
    return;
  if (into->count == 0 || from->min < into->min)
    into->min = from->min;
  if (into->count == 0 || from->max > into->max)
    into->max = from->max;
  into->count += from->count;
  into->sum += from->sum;
  for (guint i = 0; i < SIM_HIST_BUCKETS; i++)
    into->buckets[i] += from->buckets[i];
}

void
sim_time_avg_init (SimTimeAvg *avg, SimTime now_ns)
{
  avg->start_ns = now_ns;
  avg->last_ns = now_ns;
  avg->level = 0;
  avg->area = 0;
}

void
sim_time_avg_set (SimTimeAvg *avg, SimTime now_ns, double level)
{
  avg->area += avg->level * (double) (now_ns - avg->last_ns);
  avg->last_ns = now_ns;
  avg->level = level;
}

double
sim_time_avg_mean (const SimTimeAvg *avg, SimTime now_ns)
{
  SimTime span = now_ns - avg->start_ns;
  if (span <= 0)
    return 0.0;
  double area = avg->area + avg->level * (double) (now_ns - avg->last_ns);
  return area / (double) span;
}

double
sim_time_avg_area (const SimTimeAvg *avg, SimTime now_ns)
{
  return avg->area + avg->level * (double) (now_ns - avg->last_ns);
}
