/* trace-results.c — writer and loader of the per-I/O results CSV.
 *
 * The format is described in trace-results.h.  Text fields (process,
 * device) follow RFC 4180 minimally: a field holding a comma, a double
 * quote or leading/trailing blanks is written between double quotes with
 * inner quotes doubled; control characters (newlines included) cannot be
 * represented and are written as '?'.  The loader accepts quoted fields in
 * any column, blank lines and lines starting with '#'.
 *
 * Required columns: process, pid, op, bytes, issue_ns, complete_ns.
 * Optional ones take defaults: device "", offset_bytes 0, intended_ns =
 * issue_ns, error 0, latency_kind unknown; latency_ns, when present, must
 * equal complete_ns - issue_ns, and latency_kind must be the same on every
 * row (a file that disagrees with itself is rejected, not trusted).
 */
#include <errno.h>
#include <string.h>
#include "traces/trace-results.h"

struct _TraceResults {
  GArray       *rows;      /* TraceResult */
  GStringChunk *strings;   /* process and device names */
  TraceLatencyKind latency_kind;   /* of the first row */
  guint64      kind_lineno;        /* the line that set it, for messages */
};

static const char *const results_kind_names[TRACE_LATENCY_N_KINDS] = {
  [TRACE_LATENCY_UNKNOWN] = "unknown",
  [TRACE_LATENCY_SYSCALL] = "syscall",
  [TRACE_LATENCY_BLOCK_Q2C] = "block-q2c",
};

const char *
trace_latency_kind_name (TraceLatencyKind kind)
{
  g_return_val_if_fail ((guint) kind < TRACE_LATENCY_N_KINDS, "?");
  return results_kind_names[kind];
}

gboolean
trace_latency_kind_parse (const char *text, TraceLatencyKind *out)
{
  for (guint i = 0; i < TRACE_LATENCY_N_KINDS; i++)
    if (g_strcmp0 (text, results_kind_names[i]) == 0)
      {
        *out = (TraceLatencyKind) i;
        return TRUE;
      }
  return FALSE;
}

/* The op names of the header comment, in TraceOp order.  Kept here rather
 * than calling trace_op_name() so that results files need nothing else
 * from the trace readers. */
static const char *const results_op_names[] = {
  [TRACE_OP_READ] = "read",
  [TRACE_OP_WRITE] = "write",
  [TRACE_OP_DISCARD] = "discard",
  [TRACE_OP_FLUSH] = "flush",
  [TRACE_OP_OTHER] = "other",
};

void
trace_results_write_header (FILE *out)
{
  fputs (TRACE_RESULTS_HEADER, out);
}

void
trace_results_write_header_kind (FILE *out, TraceLatencyKind kind)
{
  g_return_if_fail ((guint) kind < TRACE_LATENCY_N_KINDS);

  if (kind == TRACE_LATENCY_UNKNOWN)
    {
      fputs (TRACE_RESULTS_HEADER, out);
      return;
    }
  /* The old header with one more column: readers that do not know it
   * ignore it, as they ignore every unknown column. */
  fwrite (TRACE_RESULTS_HEADER, 1, strlen (TRACE_RESULTS_HEADER) - 1, out);
  fputs (",latency_kind\n", out);
}

static gboolean
results_needs_quotes (const char *s)
{
  gsize len = strlen (s);

  if (len > 0 && (g_ascii_isspace (s[0]) || g_ascii_isspace (s[len - 1])))
    return TRUE;
  return strpbrk (s, ",\"") != NULL;
}

static void
results_write_text (FILE *out, const char *s)
{
  gboolean quoted;

  if (s == NULL)
    s = "";
  quoted = results_needs_quotes (s);
  if (quoted)
    fputc ('"', out);
  for (const char *p = s; *p != '\0'; p++)
    {
      if (*p == '"')
        fputs ("\"\"", out);
      else if (g_ascii_iscntrl (*p))
        fputc ('?', out);
      else
        fputc (*p, out);
    }
  if (quoted)
    fputc ('"', out);
}

void
trace_results_write_row (FILE *out, const TraceResult *row)
{
  g_return_if_fail (row != NULL);
  g_return_if_fail ((guint) row->op < G_N_ELEMENTS (results_op_names));
  g_return_if_fail ((guint) row->latency_kind < TRACE_LATENCY_N_KINDS);

  results_write_text (out, row->process);
  fprintf (out, ",%u,", row->pid);
  results_write_text (out, row->device);
  fprintf (out, ",%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
           ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
           ",%" G_GINT64_FORMAT ",%d",
           results_op_names[row->op], row->offset_bytes, row->bytes,
           row->intended_ns, row->issue_ns, row->complete_ns,
           row->complete_ns - row->issue_ns, row->error);
  if (row->latency_kind != TRACE_LATENCY_UNKNOWN)
    fprintf (out, ",%s", results_kind_names[row->latency_kind]);
  fputc ('\n', out);
}

/* ---- Loader ------------------------------------------------------------ */

typedef enum {
  COL_PROCESS,
  COL_PID,
  COL_DEVICE,
  COL_OP,
  COL_OFFSET,
  COL_BYTES,
  COL_INTENDED,
  COL_ISSUE,
  COL_COMPLETE,
  COL_LATENCY,
  COL_ERROR,
  COL_LATENCY_KIND,
  N_COLS
} ResultsColumn;

static const struct {
  const char *name;
  gboolean    required;
} results_columns[N_COLS] = {
  [COL_PROCESS] = { "process", TRUE },
  [COL_PID] = { "pid", TRUE },
  [COL_DEVICE] = { "device", FALSE },
  [COL_OP] = { "op", TRUE },
  [COL_OFFSET] = { "offset_bytes", FALSE },
  [COL_BYTES] = { "bytes", TRUE },
  [COL_INTENDED] = { "intended_ns", FALSE },
  [COL_ISSUE] = { "issue_ns", TRUE },
  [COL_COMPLETE] = { "complete_ns", TRUE },
  [COL_LATENCY] = { "latency_ns", FALSE },
  [COL_ERROR] = { "error", FALSE },
  [COL_LATENCY_KIND] = { "latency_kind", FALSE },
};

/* Split one line into fields.  Returns FALSE with @why set on an
 * unterminated quote or text after a closing quote. */
static gboolean
results_split (const char *line, GPtrArray *fields, const char **why)
{
  const char *p = line;

  g_ptr_array_set_size (fields, 0);
  for (;;)
    {
      GString *field = g_string_new (NULL);

      if (*p == '"')
        {
          p++;
          for (;;)
            {
              if (*p == '\0')
                {
                  g_string_free (field, TRUE);
                  *why = "unterminated quoted field";
                  return FALSE;
                }
              if (*p == '"' && p[1] == '"')
                {
                  g_string_append_c (field, '"');
                  p += 2;
                }
              else if (*p == '"')
                {
                  p++;
                  break;
                }
              else
                g_string_append_c (field, *p++);
            }
          if (*p != ',' && *p != '\0')
            {
              g_string_free (field, TRUE);
              *why = "text after a closing quote";
              return FALSE;
            }
        }
      else
        {
          while (*p != ',' && *p != '\0')
            g_string_append_c (field, *p++);
        }
      g_ptr_array_add (fields, g_string_free (field, FALSE));
      if (*p == '\0')
        return TRUE;
      p++;  /* the comma */
    }
}

static gboolean
results_parse_u64 (const char *text, const char *column, guint64 max,
                   guint64 *out, GError **error)
{
  guint64 v;
  g_autoptr(GError) local = NULL;

  if (!g_ascii_string_to_unsigned (text, 10, 0, max, &v, &local))
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "bad %s \"%s\": %s", column, text, local->message);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

static gboolean
results_parse_i64 (const char *text, const char *column, gint64 min,
                   gint64 max, gint64 *out, GError **error)
{
  gint64 v;
  g_autoptr(GError) local = NULL;

  if (!g_ascii_string_to_signed (text, 10, min, max, &v, &local))
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "bad %s \"%s\": %s", column, text, local->message);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

static gboolean
results_parse_op (const char *text, TraceOp *out, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (results_op_names); i++)
    if (g_strcmp0 (text, results_op_names[i]) == 0)
      {
        *out = (TraceOp) i;
        return TRUE;
      }
  g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
               "bad op \"%s\": expected read, write, discard, flush or other",
               text);
  return FALSE;
}

/* Map header fields to columns: @index[col] is the field index or -1. */
static gboolean
results_parse_header (GPtrArray *fields, int index[N_COLS], GError **error)
{
  for (int c = 0; c < N_COLS; c++)
    index[c] = -1;
  for (guint i = 0; i < fields->len; i++)
    {
      const char *name = g_ptr_array_index (fields, i);

      for (int c = 0; c < N_COLS; c++)
        if (strcmp (name, results_columns[c].name) == 0)
          {
            if (index[c] >= 0)
              {
                g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                             "column \"%s\" appears twice in the header", name);
                return FALSE;
              }
            index[c] = (int) i;
          }
    }
  for (int c = 0; c < N_COLS; c++)
    if (results_columns[c].required && index[c] < 0)
      {
        g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                     "missing required column \"%s\" in the header",
                     results_columns[c].name);
        return FALSE;
      }
  return TRUE;
}

/* The row's latency_kind, which must be the file's: the first row sets
 * it, every later one must agree. */
static gboolean
results_parse_kind (TraceResults *results, const char *text, guint64 lineno,
                    TraceLatencyKind *out, GError **error)
{
  if (text == NULL)
    {
      *out = TRACE_LATENCY_UNKNOWN;
      return TRUE;
    }
  if (!trace_latency_kind_parse (text, out))
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "bad latency_kind \"%s\": expected syscall, block-q2c or unknown", text);
      return FALSE;
    }
  if (results->rows->len == 0)
    {
      results->latency_kind = *out;
      results->kind_lineno = lineno;
    }
  else if (*out != results->latency_kind)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "latency_kind %s where line %" G_GUINT64_FORMAT " has %s: one file "
                   "holds one kind of latency", text, results->kind_lineno,
                   results_kind_names[results->latency_kind]);
      return FALSE;
    }
  return TRUE;
}

static gboolean
results_parse_row (TraceResults *results, GPtrArray *fields,
                   const int index[N_COLS], guint n_header_fields,
                   guint64 lineno, GError **error)
{
  TraceResult row = { 0 };
  const char *f[N_COLS] = { NULL };
  guint64 u;
  gint64 latency_ns;

  if (fields->len != n_header_fields)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "%u fields where the header has %u", fields->len,
                   n_header_fields);
      return FALSE;
    }
  for (int c = 0; c < N_COLS; c++)
    if (index[c] >= 0)
      f[c] = g_ptr_array_index (fields, index[c]);

  row.process = g_string_chunk_insert_const (results->strings, f[COL_PROCESS]);
  row.device = g_string_chunk_insert_const (results->strings,
                                            f[COL_DEVICE] ? f[COL_DEVICE] : "");
  if (!results_parse_u64 (f[COL_PID], "pid", G_MAXUINT32, &u, error))
    return FALSE;
  row.pid = (guint32) u;
  if (!results_parse_op (f[COL_OP], &row.op, error))
    return FALSE;
  if (f[COL_OFFSET] != NULL
      && !results_parse_u64 (f[COL_OFFSET], "offset_bytes", G_MAXUINT64,
                             &row.offset_bytes, error))
    return FALSE;
  if (!results_parse_u64 (f[COL_BYTES], "bytes", G_MAXUINT64, &row.bytes, error))
    return FALSE;
  if (row.bytes > G_MAXUINT64 - row.offset_bytes)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "offset_bytes %" G_GUINT64_FORMAT " + bytes %" G_GUINT64_FORMAT
                   " ends beyond the 64-bit byte range", row.offset_bytes, row.bytes);
      return FALSE;
    }
  if (!results_parse_i64 (f[COL_ISSUE], "issue_ns", 0, G_MAXINT64,
                          &row.issue_ns, error)
      || !results_parse_i64 (f[COL_COMPLETE], "complete_ns", 0, G_MAXINT64,
                             &row.complete_ns, error))
    return FALSE;
  row.intended_ns = row.issue_ns;
  if (f[COL_INTENDED] != NULL
      && !results_parse_i64 (f[COL_INTENDED], "intended_ns", 0, G_MAXINT64,
                             &row.intended_ns, error))
    return FALSE;
  if (row.complete_ns < row.issue_ns)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "complete_ns %" G_GINT64_FORMAT " is before issue_ns %"
                   G_GINT64_FORMAT, row.complete_ns, row.issue_ns);
      return FALSE;
    }
  if (f[COL_LATENCY] != NULL)
    {
      if (!results_parse_i64 (f[COL_LATENCY], "latency_ns", 0, G_MAXINT64,
                              &latency_ns, error))
        return FALSE;
      if (latency_ns != row.complete_ns - row.issue_ns)
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                       "latency_ns %" G_GINT64_FORMAT " is not complete_ns - "
                       "issue_ns (%" G_GINT64_FORMAT ")", latency_ns,
                       row.complete_ns - row.issue_ns);
          return FALSE;
        }
    }
  if (f[COL_ERROR] != NULL)
    {
      gint64 err;

      if (!results_parse_i64 (f[COL_ERROR], "error", -4095, 0, &err, error))
        return FALSE;
      row.error = (gint32) err;
    }
  if (!results_parse_kind (results, f[COL_LATENCY_KIND], lineno, &row.latency_kind, error))
    return FALSE;
  g_array_append_val (results->rows, row);
  return TRUE;
}

static void
results_chomp (char *line)
{
  gsize len = strlen (line);

  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    line[--len] = '\0';
}

TraceResults *
trace_results_load (const char *path, GError **error)
{
  g_autoptr(TraceResults) results = NULL;
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func (g_free);
  FILE *in;
  char *line = NULL;
  size_t cap = 0;
  guint64 lineno = 0;
  int index[N_COLS];
  guint n_header_fields = 0;
  gboolean ok = TRUE;

  g_return_val_if_fail (path != NULL, NULL);

  in = fopen (path, "r");
  if (in == NULL)
    {
      int saved = errno;

      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  results = g_new0 (TraceResults, 1);
  results->rows = g_array_new (FALSE, FALSE, sizeof (TraceResult));
  results->strings = g_string_chunk_new (4096);

  while (ok && getline (&line, &cap, in) >= 0)
    {
      const char *why = NULL;

      lineno++;
      results_chomp (line);
      if (line[0] == '\0' || line[0] == '#')
        continue;
      if (!results_split (line, fields, &why))
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                       "%s:%" G_GUINT64_FORMAT ": %s", path, lineno, why);
          ok = FALSE;
        }
      else if (n_header_fields == 0)
        {
          ok = results_parse_header (fields, index, error);
          n_header_fields = fields->len;
        }
      else
        ok = results_parse_row (results, fields, index, n_header_fields, lineno, error);
      if (!ok && error != NULL && *error != NULL && why == NULL)
        g_prefix_error (error, "%s:%" G_GUINT64_FORMAT ": ", path, lineno);
    }
  if (ok && ferror (in))
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: read error", path);
      ok = FALSE;
    }
  if (ok && n_header_fields == 0)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                   "%s:%" G_GUINT64_FORMAT ": no header line", path, lineno);
      ok = FALSE;
    }
  free (line);
  fclose (in);
  return ok ? g_steal_pointer (&results) : NULL;
}

void
trace_results_free (TraceResults *results)
{
  if (results == NULL)
    return;
  g_array_unref (results->rows);
  g_string_chunk_free (results->strings);
  g_free (results);
}

guint
trace_results_len (const TraceResults *results)
{
  g_return_val_if_fail (results != NULL, 0);
  return results->rows->len;
}

TraceLatencyKind
trace_results_latency_kind (const TraceResults *results)
{
  g_return_val_if_fail (results != NULL, TRACE_LATENCY_UNKNOWN);
  return results->latency_kind;
}

const TraceResult *
trace_results_get (const TraceResults *results, guint i)
{
  g_return_val_if_fail (results != NULL, NULL);
  g_return_val_if_fail (i < results->rows->len, NULL);
  return &g_array_index (results->rows, TraceResult, i);
}
