/* plan-check.h — the property every replay plan must have, checked for
 * the property test, the mutation smoke test and the libFuzzer harness of
 * replay planning: under any options a plan is either refused with a
 * clear error or every planned I/O lies inside its target.  Violations
 * abort (g_error), so that the fuzzer and the tests report them alike. */
#pragma once

#include "replay/replay.h"

G_BEGIN_DECLS

typedef struct {
  guint64 plans;        /* plans built */
  guint64 refused;      /* plans refused with an error */
  guint64 overflowed;   /* of those, for a record whose extent overflows 64 bits */
  guint64 ios;          /* I/Os planned, over every plan built */
} PlanCheckStats;

/* Plan @ios with @opts onto @targets (@n_targets of them) and check the
 * result: refused (REPLAY_ERROR_RANGE naming pid and sector, or
 * REPLAY_ERROR_EMPTY) exactly when it must be, otherwise every I/O inside
 * its target, aligned to its block, on the right target, counted. */
void plan_check_one (const GArray           *ios,
                     const ReplayOptions    *opts,
                     const ReplayPlanTarget *targets,
                     guint                   n_targets,
                     PlanCheckStats         *stats);

/* plan_check_one() under every combination of --wrap, --scale-offsets and
 * --reads-only/--allow-write, onto one catch-all target of @size_bytes
 * and also, when the trace has two or more devices, with its first two
 * devices mapped onto targets of @size_bytes and @size_bytes / 3 (the
 * rest unmapped); each with 512- and 4096-byte blocks. */
void plan_check_combinations (const GArray   *ios,
                              guint64         size_bytes,
                              PlanCheckStats *stats);

G_END_DECLS
