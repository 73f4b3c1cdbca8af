/* ra-cache.h — a tiny page cache driving sim/sim-readahead.c the way
 * filemap_read() drives the kernel's readahead: a bitmap of cached pages,
 * PG_readahead bits and, for 6.18, each page's folio order; I/O completes
 * at once.  It keeps the windows asked for and the runs of pages read.
 * Header-only, for test-readahead and the kernel comparison of
 * tests/realdev/test-readahead-kernel.c. */
#pragma once

#include <glib.h>

#include "sim/sim-readahead.h"

#define NPAGES 4096

/* A run of pages read in one piece: a window's missing pages between two
 * cached ones, or the page a read asks for alone. */
typedef struct {
  guint64 start;
  guint64 nr_pages;
} RaRead;

typedef struct {
  SimRaState ra;
  gboolean   cached[NPAGES];
  gboolean   marked[NPAGES];
  guint      folio_order[NPAGES];    /* 6.18: order of the page's folio */
  GArray    *windows;   /* SimRaWindow, in issue order */
  GArray    *reads;     /* RaRead: the runs of pages read, as a kernel issues them */
} Cache;

static inline gboolean
cache_has (guint64 index, gpointer user_data)
{
  Cache *c = user_data;

  return index < NPAGES && c->cached[index];
}

static inline guint
cache_folio_order (guint64 index, gpointer user_data)
{
  Cache *c = user_data;

  return index < NPAGES ? c->folio_order[index] : 0;
}

static inline Cache *
cache_new (SimRaEra era, guint64 max_pages)
{
  Cache *c = g_new0 (Cache, 1);

  sim_ra_init (&c->ra, era, max_pages);
  sim_ra_set_cache_probe (&c->ra, cache_has, c);
  sim_ra_set_folio_probe (&c->ra, cache_folio_order);
  c->windows = g_array_new (FALSE, FALSE, sizeof (SimRaWindow));
  c->reads = g_array_new (FALSE, FALSE, sizeof (RaRead));
  return c;
}

static inline void
cache_free (Cache *c)
{
  g_array_unref (c->windows);
  g_array_unref (c->reads);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Cache, cache_free)

static inline void
cache_note_read (Cache *c, guint64 start, guint64 nr_pages)
{
  RaRead r = { start, nr_pages };

  g_array_append_val (c->reads, r);
}

/* Read the missing pages of @w, in the window's folios, one run of them
 * per RaRead; PG_readahead only on newly added pages, which must be the
 * first page of its folio. */
static inline void
cache_apply (Cache *c, const SimRaWindow *w)
{
  guint64 folio_end = w->start;
  guint order = 0;
  gboolean in_run = FALSE;

  g_array_append_val (c->windows, *w);
  for (guint64 p = w->start; p < w->start + w->nr_pages; p++)
    {
      g_assert_cmpuint (p, <, NPAGES);
      if (p == folio_end)
        {
          order = sim_ra_window_folio_order (w, p);
          folio_end = p + (G_GUINT64_CONSTANT (1) << order);
        }
      if (c->cached[p])
        {
          in_run = FALSE;
          continue;
        }
      if (!in_run)
        cache_note_read (c, p, 0);
      in_run = TRUE;
      g_array_index (c->reads, RaRead, c->reads->len - 1).nr_pages++;
      c->cached[p] = TRUE;
      c->folio_order[p] = order;
      if (p == w->marker)
        {
          c->marked[p] = TRUE;
          g_assert_cmpuint (folio_end - p, ==, G_GUINT64_CONSTANT (1) << order);
        }
    }
}

/* One read() of @n pages at @index, on-demand protocol: sync readahead on
 * a missing page, then async readahead if the page carries the marker. */
static inline void
cache_read (Cache *c, guint64 index, guint64 n)
{
  for (guint64 p = index; p < index + n; p++)
    {
      SimRaWindow w;
      guint64 left = index + n - p;

      if (!c->cached[p])
        {
          if (sim_ra_sync (&c->ra, p, left, &w))
            cache_apply (c, &w);
          if (!c->cached[p])
            cache_note_read (c, p, 1);   /* readpage of the page itself */
          c->cached[p] = TRUE;
        }
      if (c->marked[p])
        {
          c->marked[p] = FALSE;
          if (sim_ra_async (&c->ra, p, left, c->folio_order[p], &w))
            cache_apply (c, &w);
        }
    }
  sim_ra_read_done (&c->ra, index, n);
}

