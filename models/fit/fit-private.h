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

/* Every this-many-th request (in service or dispatch order) is held out of
 * the fits that choose the kind of model. */
#define FIT_HOLD_OUT_EVERY 5

/* A request as the kinds of model see it (fit-disk.c, fit-empirical.c,
 * fit-ssd.c): its rebuilt service time, size, distance in sectors from
 * the end of the request before it (INFINITY: none), op, and (for the
 * ssd kind's rows, NaN in the others) how long after its start the
 * requests started before it still ran (<= 0: none did). */
typedef struct {
  double   service_ns;
  double   bytes;
  double   d_sectors;
  gboolean write;
  double   pipe_wait_ns;
  gsize    index;                /* in the requests the rows were built from */
} FitRow;

/* @service_ns[i] of every request as fit_device_queue rebuilds it for a
 * device of @parallelism FIFO servers (NaN: not usable). */
void     fit_device_rebuild   (const TraceRequest *requests,
                               gsize               n_requests,
                               guint               parallelism,
                               double             *service_ns);

/* A rate as a scenario value: "%.{decimals}fMB/s" as the fit has always
 * written it, or in B/s where that would round to zero, which no device
 * key accepts (a trace's times can make a fitted rate that small); an
 * infinite one is written as 10^18 B/s.  Caller frees. */
char     *fit_rate_text        (double            bytes_per_s,
                               int               decimals);

/* A process the scenario re-issues from the trace as its own (fit.c; the
 * output writes them, fit_arrays refuses a trace without any). */
gboolean fit_process_traced   (const FitProcess *p);

/* A read or write with data and consistent times: the requests the kinds
 * of model are fitted to. */
gboolean fit_request_has_data (const TraceRequest *rq);

/* Rows of a device serving several at once: dispatch order, the distance
 * from the nearest end of the last @window requests started. */
GArray *fit_empirical_window_rows (const TraceRequest *requests,
                                   const double       *service_ns,
                                   gsize               n,
                                   guint               window);
/* The distance window of a device of @parallelism (1: the seek distance). */
guint   fit_empirical_window      (guint               parallelism);
/* The cells of the rows in @use (NULL: all); @out is cleared first. */
void    fit_empirical_fit_rows    (const FitRow       *rows,
                                   gsize               n,
                                   const gboolean     *use,
                                   guint               window,
                                   FitEmpiricalFit    *out);
void    fit_empirical_clear       (FitEmpiricalFit    *fit);
/* The cell the model would draw @row's time from. */
const FitEmpiricalCell *fit_empirical_cell_of (const FitEmpiricalFit *fit,
                                               const FitRow          *row);
/* CRPS of the value @y under the piecewise-linear quantile function
 * through (@p[k], @q[k] + @shift), k < @n (p from 0 to 1, rising). */
double  fit_crps_quantiles        (const double       *p,
                                   const double       *q,
                                   guint               n,
                                   double              shift,
                                   double              y);
/* CRPS of @row's service time under its cell. */
double  fit_empirical_crps        (const FitEmpiricalFit *fit,
                                   const FitRow          *row);
/* Which requests the ssd kind's choice holds out: every 5th read or write
 * with data in dispatch order, whatever the parallelism (so every
 * candidate is judged on the same requests). */
gboolean *fit_ssd_held_out        (const TraceRequest *requests,
                                   gsize               n);
/* Rows of the requests with a service time in @service_ns, in request
 * order, with their pipeline waits (d_sectors NaN: not used). */
GArray *fit_ssd_rows              (const TraceRequest *requests,
                                   const double       *service_ns,
                                   gsize               n);
/* The ssd kind at every parallelism @min_parallelism .. @max_parallelism
 * (fit_device_queue's, the deepest queue), each fitted on
 * the requests not @held_out and scored on the others; the one with the
 * lowest held-out mean absolute error is refitted on all and written to
 * @out.  @held_out_error_ns[i] gets its absolute error on held-out request
 * i (NaN for the rest). */
void    fit_ssd_choose            (const TraceRequest *requests,
                                   gsize               n,
                                   guint               min_parallelism,
                                   guint               max_parallelism,
                                   const gboolean     *held_out,
                                   FitSsdFit          *out,
                                   double             *held_out_error_ns);
/* What the ssd kind @fit predicts for @row. */
double  fit_ssd_predict           (const FitSsdFit    *fit,
                                   const FitRow       *row);
/* The [device] keys of kind = ssd (models/dev/dev-ssd.c) reproducing @fit. */
char   *fit_ssd_device_keys       (const FitSsdFit    *fit);

/* The [device] keys of kind = empirical (models/dev/dev-empirical.c). */
char   *fit_empirical_device_keys (const FitEmpiricalFit *fit,
                                   guint                  parallelism);

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

/* Output helpers shared by fit-output.c and fit-output-writeback.c
 * (fit_append_comment is in fit.h). */
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
