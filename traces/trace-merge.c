/* trace-merge.c — merged reading of several traces, and filters (see
 * trace-merge.h).  The merge keeps one pending record per input in a
 * binary min-heap keyed by (time, input). */
#include "traces/trace-merge.h"

#include <string.h>

typedef struct {
  TraceReader *reader;
  TraceRecord  rec;
  guint        index;
  char        *message;   /* rec is a message: its whole text */
} Input;

struct _TraceMerge {
  Input  *inputs;
  guint   n_inputs;
  Input **heap;       /* inputs with a pending record */
  guint   heap_len;
  gboolean primed;
  char    *message;   /* of the record trace_merge_next returned last */
};

static gboolean
before (const Input *a, const Input *b)
{
  if (a->rec.time_ns != b->rec.time_ns)
    return a->rec.time_ns < b->rec.time_ns;
  return a->index < b->index;
}

static void
heap_push (TraceMerge *m, Input *in)
{
  guint i = m->heap_len++;
  m->heap[i] = in;
  while (i > 0 && before (m->heap[i], m->heap[(i - 1) / 2]))
    {
      Input *t = m->heap[i];
      m->heap[i] = m->heap[(i - 1) / 2];
      m->heap[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
}

static Input *
heap_pop (TraceMerge *m)
{
  g_assert (m->heap_len > 0);
  Input *top = m->heap[0];
  m->heap[0] = m->heap[--m->heap_len];
  guint i = 0;
  for (;;)
    {
      guint l = 2 * i + 1, r = l + 1, s = i;
      if (l < m->heap_len && before (m->heap[l], m->heap[s]))
        s = l;
      if (r < m->heap_len && before (m->heap[r], m->heap[s]))
        s = r;
      if (s == i)
        break;
      Input *t = m->heap[i];
      m->heap[i] = m->heap[s];
      m->heap[s] = t;
      i = s;
    }
  return top;
}

void
trace_merge_free (TraceMerge *m)
{
  if (m == NULL)
    return;
  for (guint i = 0; i < m->n_inputs; i++)
    {
      trace_reader_free (m->inputs[i].reader);
      g_free (m->inputs[i].message);
    }
  g_free (m->message);
  g_free (m->inputs);
  g_free (m->heap);
  g_free (m);
}

TraceMerge *
trace_merge_open (const char *const *paths, const char *format, GError **error)
{
  g_autoptr (TraceMerge) m = g_new0 (TraceMerge, 1);
  m->n_inputs = g_strv_length ((char **) paths);
  g_return_val_if_fail (m->n_inputs > 0, NULL);
  m->inputs = g_new0 (Input, m->n_inputs);
  m->heap = g_new0 (Input *, m->n_inputs);
  for (guint i = 0; i < m->n_inputs; i++)
    {
      m->inputs[i].index = i;
      m->inputs[i].reader = trace_reader_open (paths[i], format, error);
      if (m->inputs[i].reader == NULL)
        return NULL;
    }
  return g_steal_pointer (&m);
}

/* Read @in's next record into the heap; FALSE only on an error. */
static gboolean
refill (TraceMerge *m, Input *in, GError **error)
{
  g_autoptr (GError) local = NULL;
  if (trace_reader_next (in->reader, &in->rec, &local))
    {
      /* The reader has moved on by the time this record goes out. */
      g_free (in->message);
      in->message = g_strdup (trace_reader_message (in->reader));
      heap_push (m, in);
      return TRUE;
    }
  if (local)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

gboolean
trace_merge_next (TraceMerge *m, TraceRecord *out, guint *input, GError **error)
{
  if (!m->primed)
    {
      m->primed = TRUE;
      for (guint i = 0; i < m->n_inputs; i++)
        if (!refill (m, &m->inputs[i], error))
          return FALSE;
    }
  if (m->heap_len == 0)
    return FALSE;
  Input *in = heap_pop (m);
  *out = in->rec;
  if (input)
    *input = in->index;
  g_free (m->message);
  m->message = g_steal_pointer (&in->message);
  return refill (m, in, error);
}

const char *
trace_merge_message (const TraceMerge *m)
{
  return m->message;
}

guint
trace_merge_n_inputs (const TraceMerge *m)
{
  return m->n_inputs;
}

TraceReader *
trace_merge_reader (TraceMerge *m, guint input)
{
  g_return_val_if_fail (input < m->n_inputs, NULL);
  return m->inputs[input].reader;
}

/* ---- filters ------------------------------------------------------------ */

gboolean
trace_filter_set_device (TraceFilter *f, const char *text, GError **error)
{
  unsigned maj, min;
  char tail;
  if (sscanf (text, "%u,%u%c", &maj, &min, &tail) != 2 && sscanf (text, "%u:%u%c", &maj, &min, &tail) != 2)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "device '%s': expected MAJOR,MINOR (e.g. 8,16)", text);
      return FALSE;
    }
  f->have_device = TRUE;
  f->dev_major = maj;
  f->dev_minor = min;
  return TRUE;
}

/* TraceFilter.actions holds a bit per action. */
G_STATIC_ASSERT (TRACE_ACT_N_ACTIONS <= 32);

gboolean
trace_filter_set_actions (TraceFilter *f, const char *text, GError **error)
{
  f->actions = 0;
  const char *p = text;
  while (*p)
    {
      if (*p == ',' || *p == ' ')
        {
          p++;
          continue;
        }
      /* Two-letter actions first (UT, AB, DD, ZP, ZU), then one letter:
       * "AB" is an abort, "A,B" a remap and a bounce. */
      char two[3] = { p[0], p[1] ? p[1] : '\0', '\0' };
      char one[2] = { p[0], '\0' };
      TraceAction a;
      if (p[1] && trace_action_from_letters (two, &a))
        p += 2;
      else if (trace_action_from_letters (one, &a))
        p += 1;
      else
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                       "actions '%s': '%c' is not a blktrace action letter "
                       "(Q M F G S R D C P U UT I X B A m AB DD ZP ZU)", text, *p);
          return FALSE;
        }
      f->actions |= 1u << a;
    }
  return TRUE;
}

gboolean
trace_filter_match (const TraceFilter *f, const TraceRecord *rec)
{
  if (f->have_device && (rec->dev_major != f->dev_major || rec->dev_minor != f->dev_minor))
    return FALSE;
  if (f->have_pid && rec->pid != f->pid)
    return FALSE;
  if (f->actions && !(f->actions & (1u << rec->action)))
    return FALSE;
  if (f->have_from && rec->time_ns < f->from_ns)
    return FALSE;
  if (f->have_to && rec->time_ns >= f->to_ns)
    return FALSE;
  return TRUE;
}
