/* fit-private.h — order statistics shared by the halves of models/fit/. */
#pragma once

#include <glib.h>
#include "models/fit/fit.h"

G_BEGIN_DECLS

/* qsort comparator for doubles. */
int    fit_double_cmp (gconstpointer a,
                       gconstpointer b);
/* Linear interpolation between the order statistics of @sorted (@n >= 1),
 * h = p (n - 1). */
double fit_quantile   (const double *sorted,
                       gsize         n,
                       double        p);

/* The device half of fit_arrays: @r's queue (parallelism, levels, whether
 * it is a loop device, from r->dev_major), read and write fits. */
void   fit_device     (const TraceRequest *requests,
                       gsize               n_requests,
                       FitResult          *r);

G_END_DECLS
