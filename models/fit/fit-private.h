/* fit-private.h — what the files of models/fit/ share: order statistics,
 * the device and writeback halves of fit_arrays, output helpers. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
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

/* The writeback half of fit_arrays (fit-writeback.c): classify @r's
 * processes, resolve @host (NULL: none given) into r->host, build
 * r->writers when the host's memory is given, find the request cap. */
void   fit_writeback  (FitResult          *r,
                       const TraceRequest *requests,
                       gsize               n_requests,
                       const FitHost      *host);

/* Output helpers shared by fit-output.c and fit-output-writeback.c. */
void   fit_append_comment (GString    *out,
                           const char *format,
                           ...) G_GNUC_PRINTF (2, 3);
/* @bytes as "NMiB" when whole MiB, else plain bytes. */
void   fit_append_size    (GString    *out,
                           guint64     bytes);
/* The scenario's [host], [writeback] and writer groups, the report's and
 * the JSON's writeback parts (fit-output-writeback.c). */
void   fit_append_writeback_host    (GString         *out,
                                     const FitResult *r);
void   fit_append_writer            (GString         *out,
                                     const FitResult *r,
                                     const FitWriter *w);
/* The [device] keys that cap the simulated request size (may add none). */
void   fit_append_request_cap_keys  (GString         *out,
                                     const FitResult *r);
void   fit_print_writeback          (FILE            *out,
                                     const FitResult *r);
void   fit_json_writeback           (JsonBuilder     *b,
                                     const FitResult *r);

G_END_DECLS
