/* sim-mem.c — see sim-mem.h. */
#include "sim/sim-mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CACHE_LINE_BYTES 64

/* In the 64 bytes before every chunk: how to give it back. */
typedef struct {
  gpointer start;        /* what free() or munmap() takes */
  gsize    mapped_bytes; /* 0: from posix_memalign */
} ChunkHeader;

G_STATIC_ASSERT (sizeof (ChunkHeader) <= CACHE_LINE_BYTES);

static ChunkHeader *
header_of (gpointer chunk)
{
  return (ChunkHeader *) ((guint8 *) chunk - CACHE_LINE_BYTES);
}

static gpointer
small_chunk_alloc (gsize bytes)
{
  void *start = NULL;
  if (posix_memalign (&start, CACHE_LINE_BYTES, bytes + CACHE_LINE_BYTES) != 0)
    g_error ("sim_mem_chunk_alloc: out of memory allocating %" G_GSIZE_FORMAT " bytes", bytes);
  guint8 *chunk = (guint8 *) start + CACHE_LINE_BYTES;
  memset (chunk, 0, bytes);
  *header_of (chunk) = (ChunkHeader) { .start = start, .mapped_bytes = 0 };
  return chunk;
}

/* A fresh anonymous mapping is zero already (mmap(2)), so a huge chunk
 * is not written here: its pages are faulted in, a huge page at a time,
 * when the caller first uses them.  The mapping is over-sized and trimmed
 * to a huge-page boundary, with one base page in front for the header. */
static gpointer
huge_chunk_alloc (gsize bytes)
{
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  gsize size = (bytes + SIM_MEM_HUGE_BYTES - 1) / SIM_MEM_HUGE_BYTES * SIM_MEM_HUGE_BYTES;
  gsize total = page + size + SIM_MEM_HUGE_BYTES;
  guint8 *map = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    g_error ("sim_mem_chunk_alloc: out of memory mapping %" G_GSIZE_FORMAT " bytes", total);
  guintptr aligned = ((guintptr) map + page + SIM_MEM_HUGE_BYTES - 1)
                     & ~(guintptr) (SIM_MEM_HUGE_BYTES - 1);
  guint8 *chunk = (guint8 *) aligned;
  guint8 *start = chunk - page;
  if (start > map)
    munmap (map, (gsize) (start - map));
  if (map + total > chunk + size)
    munmap (chunk + size, (gsize) (map + total - (chunk + size)));
  /* Advice only: a kernel without transparent huge pages says EINVAL. */
  (void) madvise (chunk, size, MADV_HUGEPAGE);
  *header_of (chunk) = (ChunkHeader) { .start = start, .mapped_bytes = page + size };
  return chunk;
}

gpointer
sim_mem_chunk_alloc (gsize bytes)
{
  g_assert (bytes > 0);
  return bytes >= SIM_MEM_HUGE_BYTES ? huge_chunk_alloc (bytes) : small_chunk_alloc (bytes);
}

void
sim_mem_chunk_free (gpointer chunk)
{
  if (chunk == NULL)
    return;
  ChunkHeader h = *header_of (chunk);
  if (h.mapped_bytes == 0)
    free (h.start);
  else
    munmap (h.start, h.mapped_bytes);
}
