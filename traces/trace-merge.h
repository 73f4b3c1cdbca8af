/* trace-merge.h — several block traces read as one stream in time order,
 * and record filters (device, pid, action, time window): what `iosim
 * trace cat|convert|merge` are made of.
 *
 * Records from different inputs are merged by time_ns (ties: the input
 * given first, then file order), one record per input held at a time, so
 * memory does not grow with the traces.  Times are compared as the readers
 * give them: blkparse text is relative to its own first record, binary
 * blktrace is absolute; merge inputs of one kind. */
#pragma once

#include <glib.h>
#include "traces/trace.h"

G_BEGIN_DECLS

typedef struct _TraceMerge TraceMerge;

/* Open every path of @paths (NULL-terminated) with @format (NULL: sniff
 * each). */
TraceMerge *trace_merge_open     (const char *const *paths,
                                  const char        *format,
                                  GError           **error);
void        trace_merge_free     (TraceMerge *m);
/* Next record in time order; @input (may be NULL) gets the index of the
 * path it came from.  FALSE at the end of every input, or on an error
 * (naming file and line). */
gboolean    trace_merge_next     (TraceMerge  *m,
                                  TraceRecord *out,
                                  guint       *input,
                                  GError     **error);
/* The whole text of the message record trace_merge_next returned last
 * (see trace_reader_message), NULL for other records. */
const char *trace_merge_message  (const TraceMerge *m);
guint       trace_merge_n_inputs (const TraceMerge *m);
TraceReader *trace_merge_reader  (TraceMerge *m, guint input);

/* Which records to keep.  Zeroed: all. */
typedef struct {
  gboolean have_device;
  guint32  dev_major, dev_minor;
  gboolean have_pid;
  guint32  pid;
  guint32  actions;      /* bit per TraceAction; 0 = all */
  gboolean have_from, have_to;
  gint64   from_ns, to_ns;   /* [from, to) in the records' own time */
} TraceFilter;

/* Parse "MAJ,MIN", an action list ("Q,D,C" or "QDC"; two-letter actions
 * UT, AB, DD, ZP, ZU are read before one-letter ones, so a remap and a
 * bounce are "A,B"), or fill @f from them; errors name the option's value. */
gboolean    trace_filter_set_device  (TraceFilter *f, const char *text, GError **error);
gboolean    trace_filter_set_actions (TraceFilter *f, const char *text, GError **error);
gboolean    trace_filter_match       (const TraceFilter *f, const TraceRecord *rec);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceMerge, trace_merge_free)

G_END_DECLS
