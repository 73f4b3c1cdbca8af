/* fuzz-trace-nfs.c — libFuzzer entry point for the NFS capture decoder:
 * the input is a whole capture file handed to trace_nfs_reader_open_buffer
 * (libpcap parses the container, the decoder everything inside).  Built
 * only with clang (-fsanitize=fuzzer); run as
 *   build/tests/traces/fuzz-trace-nfs -max_len=65536 CORPUS_DIR
 * with a corpus of small captures (shared/testdata/nfs-pcap-tcpdump-edgecases,
 * generated-nfs-loopback).  The deterministic /trace-nfs/mutation-smoke
 * test in test-trace-nfs.c runs the same loop in CI without libFuzzer. */
#include <string.h>

#include <glib.h>

#include "traces/trace.h"
#include "traces/trace-nfs.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceNfsReader) r = trace_nfs_reader_open_buffer (data, size, "fuzz", &error);
  g_autoptr(GString) line = g_string_new (NULL);
  TraceNfsRecord rec;

  if (r == NULL)
    {
      /* refusing a file is fine; refusing it without saying where is not */
      if (!g_str_has_prefix (error->message, "fuzz: "))
        g_error ("unlocated error: %s", error->message);
      return 0;
    }
  while (trace_nfs_reader_next (r, &rec, &error))
    {
      g_string_truncate (line, 0);
      trace_nfs_format_csv (&rec, line);
      /* invariants every record keeps, whatever the input */
      g_assert (rec.latency_ns == -1 || rec.latency_ns == rec.reply_time_ns - rec.time_ns);
      g_assert (rec.op[0] != '\0' && memchr (rec.op, '\0', sizeof rec.op) != NULL);
    }
  if (error != NULL && !g_str_has_prefix (error->message, "fuzz: frame "))
    g_error ("unlocated error: %s", error->message);
  g_string_truncate (line, 0);
  trace_nfs_stats_format (trace_nfs_reader_stats (r), line);
  return 0;
}
