/* plan-ios.h — building TraceIo arrays for replay tests and reading a
 * plan's I/Os back.  Header-only: each test program gets its own copy. */
#pragma once

#include "replay/replay.h"

/* A new array holding @n copies of @ios (free with g_array_unref). */
static inline GArray *
ios_new (const TraceIo *ios, guint n)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (TraceIo));

  g_array_append_vals (a, ios, n);
  return a;
}

/* The @i-th planned I/O of process @proc. */
static inline const ReplayIo *
io_at (const ReplayPlan *plan, guint proc, guint i)
{
  const ReplayProcess *p = g_ptr_array_index (plan->processes, proc);

  g_assert_cmpuint (i, <, p->ios->len);
  return &g_array_index (p->ios, ReplayIo, i);
}
