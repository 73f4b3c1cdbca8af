/* sim-mem.c — see sim-mem.h. */
#include "sim/sim-mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CACHE_LINE_BYTES 64

gpointer
sim_mem_chunk_alloc (gsize bytes)
{
  g_assert (bytes > 0);
  gboolean huge = bytes >= SIM_MEM_HUGE_BYTES;
  gsize align = huge ? SIM_MEM_HUGE_BYTES : CACHE_LINE_BYTES;
  /* Whole huge pages, so that the advice covers the last one too. */
  gsize size = huge ? (bytes + align - 1) / align * align : bytes;
  void *chunk = NULL;
  if (posix_memalign (&chunk, align, size) != 0)
    g_error ("sim_mem_chunk_alloc: out of memory allocating %" G_GSIZE_FORMAT " bytes", size);
  /* Advice only: a kernel without transparent huge pages says EINVAL. */
  if (huge)
    (void) madvise (chunk, size, MADV_HUGEPAGE);
  memset (chunk, 0, size);
  return chunk;
}

void
sim_mem_chunk_free (gpointer chunk)
{
  free (chunk);
}
