/* trace-reorder.c — a bounded min-heap that puts the records of traces with
 * per-row response times into time order (see TraceReorder in
 * trace-private.h).
 *
 * A row of MSR Cambridge or SYSTOR '17 gives an arrival and a response
 * time; the reader pushes an issue at the arrival and a completion at
 * arrival + response, and pops records once the input has moved a window
 * past them.  Ties on time come out in push order, so a zero response
 * time still gives the issue before its completion.
 */
#include "traces/trace-private.h"

typedef struct {
  TraceRecord rec;
  guint64     seq;
} TraceReorderEntry;

static gboolean
entry_before (const TraceReorderEntry *a, const TraceReorderEntry *b)
{
  return a->rec.time_ns < b->rec.time_ns
         || (a->rec.time_ns == b->rec.time_ns && a->seq < b->seq);
}

void
trace_reorder_init (TraceReorder *ro, gint64 window_ns, guint limit)
{
  g_return_if_fail (window_ns >= 0 && limit > 0);
  ro->heap = g_array_new (FALSE, FALSE, sizeof (TraceReorderEntry));
  ro->seq = 0;
  ro->watermark_ns = -1;
  ro->released_ns = -1;
  ro->window_ns = window_ns;
  ro->limit = limit;
  ro->peak = 0;
}

void
trace_reorder_clear (TraceReorder *ro)
{
  g_clear_pointer (&ro->heap, g_array_unref);
}

guint
trace_reorder_held (const TraceReorder *ro)
{
  return ro->heap->len;
}

static void
sift_up (GArray *heap, guint i)
{
  TraceReorderEntry *e = (TraceReorderEntry *) (void *) heap->data;
  TraceReorderEntry moving = e[i];

  while (i > 0)
    {
      guint parent = (i - 1) / 2;
      if (!entry_before (&moving, &e[parent]))
        break;
      e[i] = e[parent];
      i = parent;
    }
  e[i] = moving;
}

static void
sift_down (GArray *heap, guint i)
{
  TraceReorderEntry *e = (TraceReorderEntry *) (void *) heap->data;
  guint n = heap->len;
  TraceReorderEntry moving = e[i];

  for (;;)
    {
      guint child = 2 * i + 1;
      if (child >= n)
        break;
      if (child + 1 < n && entry_before (&e[child + 1], &e[child]))
        child++;
      if (!entry_before (&e[child], &moving))
        break;
      e[i] = e[child];
      i = child;
    }
  e[i] = moving;
}

gboolean
trace_reorder_push (TraceReorder *ro, const TraceRecord *rec, gboolean arrival, GError **error)
{
  TraceReorderEntry entry;

  g_assert (rec->time_ns >= 0);
  if (rec->time_ns < ro->released_ns)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "time %" G_GINT64_FORMAT " ns is %.6f s before records already emitted: rows "
                   "may be out of time order by at most %.3f s (sort the file by its time column)",
                   rec->time_ns, (double) (ro->released_ns - rec->time_ns) / 1e9,
                   (double) ro->window_ns / 1e9);
      return FALSE;
    }
  if (ro->heap->len >= ro->limit)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "more than %u records wait for their time: the rows are not in time order "
                   "(or response times are far longer than the trace moves on)", ro->limit);
      return FALSE;
    }
  entry.rec = *rec;
  entry.seq = ro->seq++;
  g_array_append_val (ro->heap, entry);
  sift_up (ro->heap, ro->heap->len - 1);
  ro->peak = MAX (ro->peak, ro->heap->len);
  if (arrival && rec->time_ns > ro->watermark_ns)
    ro->watermark_ns = rec->time_ns;
  return TRUE;
}

gboolean
trace_reorder_pop (TraceReorder *ro, gboolean at_eof, TraceRecord *out)
{
  TraceReorderEntry *e;

  if (ro->heap->len == 0)
    return FALSE;
  e = (TraceReorderEntry *) (void *) ro->heap->data;
  /* Times are >= 0 and the window is small: no overflow below. */
  if (!at_eof && (ro->watermark_ns < 0 || e[0].rec.time_ns > ro->watermark_ns - ro->window_ns))
    return FALSE;
  *out = e[0].rec;
  g_assert (out->time_ns >= ro->released_ns);
  ro->released_ns = out->time_ns;
  e[0] = e[ro->heap->len - 1];
  g_array_set_size (ro->heap, ro->heap->len - 1);
  if (ro->heap->len > 0)
    sift_down (ro->heap, 0);
  return TRUE;
}
