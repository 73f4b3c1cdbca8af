/* fuzz-trace.c — libFuzzer entry point for every trace reader (the fio
 * iolog and published CSV readers included: trace_formats lists them),
 * the lifecycle pairing and the writers (blkparse, CSV, fio iolog v3).  Built only with clang (-fsanitize=fuzzer); run as
 *   build/tests/traces/fuzz-trace tests/data/
 * The deterministic /trace/mutation-smoke test in test-trace-parse.c runs
 * the same loop in CI without libFuzzer. */
#include <glib.h>

#include "traces/trace-lifecycle.h"
#include "tests/fuzz-memfd.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* Issue 12: no record handed out has an extent whose end byte,
 * (sector + nr_sectors) * 512, wraps 64 bits (messages and the flush
 * completion at sector (u64) -1 with no data carry none). */
static void
check_extent (const TraceRecord *rec)
{
  const guint64 end_max = G_MAXUINT64 / 512;

  if (rec->action == TRACE_ACT_MESSAGE || (rec->sector == G_MAXUINT64 && rec->nr_sectors == 0))
    return;
  if (rec->sector > end_max - rec->nr_sectors
      || (rec->action == TRACE_ACT_REMAP && rec->from_sector > end_max - rec->nr_sectors)
      || (rec->action == TRACE_ACT_SPLIT && rec->new_sector > end_max))
    g_error ("record %" G_GUINT64_FORMAT ": extent past the 64-bit byte range", rec->line);
}

static void
read_through (const char *path, const char *format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, format, &error);
  g_autoptr(TraceLifecycle) lc = NULL;
  g_autoptr(TraceIologWriter) queued = NULL;
  g_autoptr(TraceIologWriter) issued = NULL;
  g_autoptr(GString) log = g_string_new (NULL);
  TraceRecord rec;
  TraceIo io;
  TraceRequest rq;

  if (r == NULL)
    return;
  lc = trace_lifecycle_new ();
  trace_lifecycle_set_issue_only (lc, trace_reader_issue_only (r));
  queued = trace_iolog_writer_new (TRACE_ACT_QUEUE, NULL, NULL);
  issued = trace_iolog_writer_new (TRACE_ACT_ISSUE, "/dev/null", NULL);
  trace_iolog_writer_names_from_reader (queued, r);
  while (trace_reader_next (r, &rec, &error))
    {
      check_extent (&rec);
      GString *line = g_string_new (NULL);
      trace_format_blkparse (&rec, rec.line, line);
      trace_format_csv (&rec, line);
      g_string_free (line, TRUE);
      trace_iolog_writer_add (queued, &rec, log);
      trace_iolog_writer_add (issued, &rec, log);
      if (log->len > 1 << 20)
        g_string_truncate (log, 0);
      trace_lifecycle_feed (lc, &rec);
      while (trace_lifecycle_pop_io (lc, &io))
        ;
      while (trace_lifecycle_pop_request (lc, &rq))
        ;
    }
  /* every failure is a located parse error */
  if (error != NULL && !g_error_matches (error, TRACE_ERROR, TRACE_ERROR_PARSE)
      && !g_error_matches (error, TRACE_ERROR, TRACE_ERROR_IO))
    g_error ("unexpected error: %s", error->message);
  trace_lifecycle_finish (lc);
  trace_iolog_writer_finish (queued, log);
  trace_iolog_writer_finish (issued, log);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autofree char *path = NULL;
  int fd = fuzz_memory_file (data, size, &path);
  const char *const *formats = trace_formats ();

  if (fd < 0)
    return 0;
  read_through (path, NULL);
  for (int i = 0; formats[i] != NULL; i++)
    read_through (path, formats[i]);
  close (fd);
  return 0;
}
