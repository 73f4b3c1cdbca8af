/* fuzz-blktrace.c — libFuzzer entry point for the binary blktrace reader:
 * the input read as one file (sniffed and forced), then cut in two and
 * read as a per-CPU set NAME.blktrace.0/.1 (the merge), every record fed
 * to the lifecycle pairing and written back through the blktrace writer,
 * whose output must read back without error, record for record.  Built
 * only with clang (-fsanitize=fuzzer); run as
 *   build/tests/traces/fuzz-blktrace CORPUS_DIR \
 *     ../shared/testdata/blktrace-takeoverjp-sample/
 * The deterministic /blktrace/mutation-smoke test in test-trace-blktrace.c
 * runs a similar loop in CI without libFuzzer. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "traces/trace-lifecycle.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static char *set_dir;

/* Every failure is a located parse, format or I/O error; the blktrace
 * reader's (@binary) name a byte offset. */
static void
check_error (const GError *error, gboolean binary)
{
  if (error == NULL)
    return;
  if (error->domain != TRACE_ERROR)
    g_error ("unexpected error: %s", error->message);
  if (binary && error->code == TRACE_ERROR_PARSE && strstr (error->message, ": byte offset ") == NULL)
    g_error ("unlocated error: %s", error->message);
}

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

/* Read @path; write what was read with the writer and read that again. */
static void
read_through (const char *path, const char *format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, format, &error);
  g_autoptr(TraceLifecycle) lc = NULL;
  g_autoptr(TraceBlktraceWriter) w = NULL;
  g_autoptr(GByteArray) out = NULL;
  g_autofree char *again = NULL;
  TraceRecord rec;
  TraceIo io;
  TraceRequest rq;
  guint64 n = 0;

  check_error (error, format != NULL);
  if (r == NULL)
    return;
  lc = trace_lifecycle_new ();
  w = trace_blktrace_writer_new ();
  out = g_byte_array_new ();
  while (trace_reader_next (r, &rec, &error))
    {
      check_extent (&rec);
      trace_lifecycle_feed (lc, &rec);
      while (trace_lifecycle_pop_io (lc, &io))
        ;
      while (trace_lifecycle_pop_request (lc, &rq))
        ;
      trace_blktrace_writer_append (w, &rec, out);
      n++;
    }
  check_error (error, strcmp (trace_reader_format (r), "blktrace") == 0);
  trace_lifecycle_finish (lc);
  if (trace_lifecycle_held (lc) != 0)
    g_error ("lifecycle state left after finish");

  /* the writer's bytes always read back */
  again = g_build_filename (set_dir, "again.bin", NULL);
  if (!g_file_set_contents (again, (const char *) out->data, (gssize) out->len, NULL))
    return;
  {
    g_autoptr(GError) e2 = NULL;
    g_autoptr(TraceReader) r2 = trace_reader_open (again, "blktrace", &e2);
    guint64 m = 0;

    if (r2 == NULL)
      g_error ("written file refused: %s", e2->message);
    while (trace_reader_next (r2, &rec, &e2))
      m++;
    if (e2 != NULL || m != n)
      g_error ("written file read back %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " records: %s",
               m, n, e2 != NULL ? e2->message : "");
  }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  int fd = memfd_create ("fuzz-blktrace", MFD_CLOEXEC);
  g_autofree char *path = NULL;
  g_autofree char *cpu0 = NULL;
  g_autofree char *cpu1 = NULL;
  g_autofree char *prefix = NULL;
  gsize half = (size / 2) - (size / 2) % 48;

  if (set_dir == NULL)
    set_dir = g_dir_make_tmp ("fuzz-blktrace-XXXXXX", NULL);
  if (fd < 0 || set_dir == NULL)
    return 0;
  if (size > 0 && write (fd, data, size) != (ssize_t) size)
    {
      close (fd);
      return 0;
    }
  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  read_through (path, NULL);
  read_through (path, "blktrace");
  close (fd);

  cpu0 = g_build_filename (set_dir, "f.blktrace.0", NULL);
  cpu1 = g_build_filename (set_dir, "f.blktrace.1", NULL);
  prefix = g_build_filename (set_dir, "f.blktrace", NULL);
  if (g_file_set_contents (cpu0, (const char *) data, (gssize) half, NULL)
      && g_file_set_contents (cpu1, (const char *) data + half, (gssize) (size - half), NULL))
    read_through (prefix, "blktrace");
  g_remove (cpu0);
  g_remove (cpu1);
  return 0;
}
