/* sim-rng.c — named random streams.  The seed of a stream is
 * SplitMix64(master ^ FNV-1a-64(name)), folded to the 32 bits MT19937 takes
 * from gsl_rng_set; both functions are written out here so that seeds
 * never depend on a library version. */
#include "sim/sim-rng.h"

#include <math.h>

struct _SimRng {
  char    *name;
  gsl_rng *rng;
};

static guint64
fnv1a64 (const char *s)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  for (; *s; s++)
    {
      h ^= (guchar) *s;
      h *= G_GUINT64_CONSTANT (0x100000001b3);
    }
  return h;
}

static guint64
splitmix64 (guint64 x)
{
  x += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return x ^ (x >> 31);
}

guint64
sim_rng_derive_seed (guint64 master_seed, const char *name)
{
  return splitmix64 (master_seed ^ fnv1a64 (name));
}

SimRng *
sim_rng_new (guint64 master_seed, const char *name)
{
  SimRng *rng = g_new0 (SimRng, 1);
  rng->name = g_strdup (name);
  rng->rng = gsl_rng_alloc (gsl_rng_mt19937);
  guint64 seed = sim_rng_derive_seed (master_seed, name);
  /* MT19937 in GSL uses 32 bits of the seed, and 0 means "default seed". */
  unsigned long s32 = (unsigned long) ((seed ^ (seed >> 32)) & 0xffffffffu);
  gsl_rng_set (rng->rng, s32 ? s32 : 1);
  return rng;
}

void
sim_rng_free (SimRng *rng)
{
  if (rng == NULL)
    return;
  gsl_rng_free (rng->rng);
  g_free (rng->name);
  g_free (rng);
}

const char *
sim_rng_name (const SimRng *rng)
{
  return rng->name;
}

gsl_rng *
sim_rng_gsl (SimRng *rng)
{
  return rng->rng;
}

double
sim_rng_uniform (SimRng *rng)
{
  return gsl_rng_uniform (rng->rng);
}

static guint64
next_u64 (SimRng *rng)
{
  guint64 hi = gsl_rng_get (rng->rng);
  guint64 lo = gsl_rng_get (rng->rng);
  return (hi << 32) | (lo & 0xffffffffu);
}

guint64
sim_rng_uniform_int (SimRng *rng, guint64 n)
{
  g_assert (n > 0);
  if (n <= G_GUINT64_CONSTANT (0xffffffff))
    return gsl_rng_uniform_int (rng->rng, (unsigned long) n);
  /* Rejection sampling on 64 bits to avoid modulo bias. */
  guint64 limit = G_MAXUINT64 - (G_MAXUINT64 % n);
  guint64 x;
  do
    x = next_u64 (rng);
  while (x >= limit);
  return x % n;
}

double
sim_rng_exponential (SimRng *rng, double mean)
{
  /* 1 - U lies in (0, 1], so the log is finite. */
  return -mean * log (1.0 - gsl_rng_uniform (rng->rng));
}
