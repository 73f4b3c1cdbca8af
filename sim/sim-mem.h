/* sim-mem.h — big zeroed chunks for the structures a simulated machine
 * holds by the hundred thousand (page structs, page index nodes).
 *
 * A 1 GiB page cache is 262,144 page structs that the buffered paths visit
 * in random order, so their time goes to cache and TLB misses (iosim bench
 * --workload buffered-write).  Chunks start on a cache line, so that a
 * 64-byte struct is one line, and chunks of 2 MiB or more start on a
 * 2 MiB boundary and are advised as transparent huge pages (madvise(2)
 * MADV_HUGEPAGE, which /sys/kernel/mm/transparent_hugepage/enabled =
 * madvise, Debian's default, requires): one TLB entry and one page fault
 * per 2 MiB instead of 512.  Where the kernel gives no huge pages the
 * advice is ignored and nothing else changes.  Such chunks are fresh
 * anonymous mappings, zero without being written: a page is faulted in
 * (and zeroed by the kernel) when the simulation first uses it, not
 * written once more here (which cost the buffered-write benchmark 4 % of
 * its time in memset).  Smaller chunks come from the heap and are
 * cleared.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bytes of a transparent huge page on x86-64 and arm64 (4 KiB base pages). */
#define SIM_MEM_HUGE_BYTES ((gsize) 2 << 20)

/* @bytes (> 0) of zeroed memory, aligned to 64 bytes, or to
 * SIM_MEM_HUGE_BYTES when @bytes is at least that; aborts when memory is
 * exhausted, as g_malloc does.  Free with sim_mem_chunk_free(). */
gpointer sim_mem_chunk_alloc (gsize bytes);
void     sim_mem_chunk_free  (gpointer chunk);

G_END_DECLS
