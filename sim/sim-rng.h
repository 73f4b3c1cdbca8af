/* sim-rng.h — named random streams over GSL's MT19937.
 *
 * Each stream's seed is derived from (master seed, FNV-1a hash of the stream
 * name) through SplitMix64, computed here so that seeds never change when a
 * library does.  Never use g_random_*, rand() or gsl_rng_env_setup(): all
 * three bring in state from outside the scenario.
 */
#pragma once

#include <glib.h>
#include <gsl/gsl_rng.h>

G_BEGIN_DECLS

typedef struct _SimRng SimRng;

guint64  sim_rng_derive_seed   (guint64     master_seed,
                                const char *name);
SimRng  *sim_rng_new           (guint64     master_seed,
                                const char *name);
void     sim_rng_free          (SimRng     *rng);

const char *sim_rng_name       (const SimRng *rng);
gsl_rng *sim_rng_gsl           (SimRng     *rng);

/* Uniform on [0, 1). */
double   sim_rng_uniform       (SimRng     *rng);
/* Uniform integer on [0, n); n > 0; full 64-bit range. */
guint64  sim_rng_uniform_int   (SimRng     *rng,
                                guint64     n);
/* Exponential with the given mean. */
double   sim_rng_exponential   (SimRng     *rng,
                                double      mean);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRng, sim_rng_free)

G_END_DECLS
