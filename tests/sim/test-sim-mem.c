/* test-sim-mem.c — sim/sim-mem.h: chunks are zeroed, cache-line aligned,
 * and those of a huge page or more start on a huge-page boundary without
 * being written by the allocation. */
#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/sim-mem.h"

typedef struct {
  const char *name;
  gsize       bytes;
  gsize       align;
} ChunkCase;

static const ChunkCase chunk_cases[] = {
  { "one-byte", 1, 64 },
  { "page-structs", 1000 * 64, 64 },
  { "odd", 12345, 64 },
  { "just-below-huge", SIM_MEM_HUGE_BYTES - 1, 64 },
  { "huge", SIM_MEM_HUGE_BYTES, SIM_MEM_HUGE_BYTES },
  { "huge-and-a-half", SIM_MEM_HUGE_BYTES * 3 / 2, SIM_MEM_HUGE_BYTES },
};

static void
test_chunk (gconstpointer data)
{
  const ChunkCase *c = data;
  /* Dirty memory first, so that a chunk reusing it must be zeroed. */
  guint8 *used = sim_mem_chunk_alloc (c->bytes);
  memset (used, 0xa5, c->bytes);
  sim_mem_chunk_free (used);
  guint8 *chunk = sim_mem_chunk_alloc (c->bytes);
  g_assert_nonnull (chunk);
  g_assert_cmpuint ((guintptr) chunk % c->align, ==, 0);
  for (gsize i = 0; i < c->bytes; i++)
    if (chunk[i] != 0)
      g_error ("%s: byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " is not zero",
               c->name, i, c->bytes);
  /* The whole of it is ours to write (ASan checks the bounds). */
  chunk[0] = 1;
  chunk[c->bytes - 1] = 1;
  sim_mem_chunk_free (chunk);
}

/* A huge chunk is zero because it is a fresh mapping, not because it was
 * written: none of its pages is resident until the caller touches one
 * (mincore(2)), so a cache that never fills never pays for its chunk. */
static void
test_huge_untouched (void)
{
  gsize bytes = 2 * SIM_MEM_HUGE_BYTES;
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guint8 *chunk = sim_mem_chunk_alloc (bytes);
  g_autofree unsigned char *resident = g_new0 (unsigned char, bytes / page);
  g_assert_cmpint (mincore (chunk, bytes, resident), ==, 0);
  for (gsize i = 0; i < bytes / page; i++)
    g_assert_cmpuint (resident[i] & 1, ==, 0);
  chunk[bytes - 1] = 1;
  g_assert_cmpint (mincore (chunk, bytes, resident), ==, 0);
  g_assert_cmpuint (resident[bytes / page - 1] & 1, ==, 1);
  sim_mem_chunk_free (chunk);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (chunk_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sim/mem/chunk/%s", chunk_cases[i].name);
      g_test_add_data_func (path, &chunk_cases[i], test_chunk);
    }
  g_test_add_func ("/sim/mem/huge-untouched", test_huge_untouched);
  return g_test_run ();
}
