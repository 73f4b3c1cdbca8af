/* test-trace-lifecycle.c — pairing Q/M/F/G/I/D/R/C into I/Os and requests
 * on small hand-built record sequences: merges, requeue, partial
 * completion, request-only (D/C) traces, requests in flight at the start
 * or the end, queue depth at issue, bounded state, trace_load_ios()
 * ordering and filters, latency statistics.
 */
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "traces/trace-lifecycle.h"

typedef struct {
  TraceLifecycle *lc;
  GArray *ios;        /* TraceIo, completion order */
  GArray *requests;   /* TraceRequest */
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->lc = trace_lifecycle_new ();
  f->ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  f->requests = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  trace_lifecycle_free (f->lc);
  g_array_unref (f->ios);
  g_array_unref (f->requests);
}

static void
drain (Fixture *f)
{
  TraceIo io;
  TraceRequest rq;

  while (trace_lifecycle_pop_io (f->lc, &io))
    g_array_append_val (f->ios, io);
  while (trace_lifecycle_pop_request (f->lc, &rq))
    g_array_append_val (f->requests, rq);
}

/* Feed "ACT RWBS sector nr" at @t_ns on device 8,0 from @pid. */
static void
feed (Fixture *f, gint64 t_ns, const char *act, const char *rwbs, guint64 sector, guint32 nr, guint32 pid)
{
  TraceRecord rec;

  memset (&rec, 0, sizeof rec);
  rec.time_ns = t_ns;
  rec.dev_major = 8;
  rec.dev_minor = 0;
  rec.cpu = 0;
  rec.pid = pid;
  g_assert_true (trace_action_from_letters (act, &rec.action));
  g_assert_true (trace_rwbs_parse (rwbs, &rec.rwbs));
  rec.sector = sector;
  rec.nr_sectors = nr;
  g_snprintf (rec.comm, sizeof rec.comm, "p%u", pid);
  trace_lifecycle_feed (f->lc, &rec);
  drain (f);
}

static const TraceIo *
io_at (Fixture *f, guint i)
{
  g_assert_cmpuint (i, <, f->ios->len);
  return &g_array_index (f->ios, TraceIo, i);
}

static const TraceRequest *
rq_at (Fixture *f, guint i)
{
  g_assert_cmpuint (i, <, f->requests->len);
  return &g_array_index (f->requests, TraceRequest, i);
}

static void
test_simple (Fixture *f, gconstpointer data)
{
  feed (f, 100, "Q", "R", 64, 8, 7);
  feed (f, 110, "G", "R", 64, 8, 7);
  feed (f, 120, "I", "R", 64, 8, 7);
  feed (f, 150, "D", "R", 64, 8, 7);
  g_assert_cmpuint (f->ios->len, ==, 0);
  feed (f, 1150, "C", "R", 64, 8, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_cmpuint (f->requests->len, ==, 1);
  g_assert_cmpint (io_at (f, 0)->queue_ns, ==, 100);
  g_assert_cmpint (io_at (f, 0)->issue_ns, ==, 150);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 1150);
  g_assert_cmpuint (io_at (f, 0)->pid, ==, 7);
  g_assert_cmpstr (io_at (f, 0)->comm, ==, "p7");
  g_assert_cmpint (io_at (f, 0)->op, ==, TRACE_OP_READ);
  g_assert_false (io_at (f, 0)->merged);
  g_assert_cmpint (rq_at (f, 0)->issue_ns, ==, 150);
  g_assert_cmpint (rq_at (f, 0)->complete_ns, ==, 1150);
  g_assert_cmpuint (rq_at (f, 0)->in_flight_at_issue, ==, 1);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->issued_without_queue, ==, 0);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 0);
}

static void
test_merges (Fixture *f, gconstpointer data)
{
  feed (f, 100, "Q", "W", 2048, 8, 1);
  feed (f, 110, "G", "W", 2048, 8, 1);
  feed (f, 120, "Q", "W", 2056, 8, 2);
  feed (f, 121, "M", "W", 2056, 8, 2);     /* back merge: 2048+16 */
  feed (f, 130, "Q", "W", 2040, 8, 3);
  feed (f, 131, "F", "W", 2040, 8, 3);     /* front merge: 2040+24 */
  feed (f, 140, "Q", "W", 2064, 8, 4);
  feed (f, 141, "M", "W", 2064, 8, 4);     /* back merge: 2040+32 */
  feed (f, 200, "D", "W", 2040, 32, 1);
  feed (f, 900, "C", "W", 2040, 32, 0);
  trace_lifecycle_finish (f->lc);

  g_assert_cmpuint (f->requests->len, ==, 1);
  g_assert_cmpuint (rq_at (f, 0)->sector, ==, 2040);
  g_assert_cmpuint (rq_at (f, 0)->nr_sectors, ==, 32);
  g_assert_cmpuint (f->ios->len, ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      g_assert_cmpint (io_at (f, i)->issue_ns, ==, 200);
      g_assert_cmpint (io_at (f, i)->complete_ns, ==, 900);
    }
  /* request order by sector: 2040 (front), 2048, 2056, 2064 */
  g_assert_cmpuint (io_at (f, 0)->sector, ==, 2040);
  g_assert_true (io_at (f, 0)->merged);
  g_assert_cmpuint (io_at (f, 1)->sector, ==, 2048);
  g_assert_false (io_at (f, 1)->merged);
  g_assert_cmpuint (io_at (f, 3)->pid, ==, 4);
  g_assert_cmpint (io_at (f, 3)->queue_ns, ==, 140);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->unpaired, ==, 0);
}

static void
test_merge_without_request (Fixture *f, gconstpointer data)
{
  /* the request was allocated before the trace started */
  feed (f, 100, "Q", "W", 2056, 8, 2);
  feed (f, 101, "M", "W", 2056, 8, 2);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 0);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->unpaired, ==, 1);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 1);
}

static void
test_requeue (Fixture *f, gconstpointer data)
{
  feed (f, 100, "Q", "R", 0, 8, 1);
  feed (f, 110, "G", "R", 0, 8, 1);
  feed (f, 200, "D", "R", 0, 8, 1);
  feed (f, 250, "R", "R", 0, 8, 0);
  feed (f, 400, "D", "R", 0, 8, 1);
  feed (f, 410, "Q", "R", 100, 8, 1);
  feed (f, 411, "G", "R", 100, 8, 1);
  feed (f, 420, "D", "R", 100, 8, 1);
  feed (f, 900, "C", "R", 0, 8, 0);
  feed (f, 950, "C", "R", 100, 8, 0);
  trace_lifecycle_finish (f->lc);

  g_assert_cmpuint (f->requests->len, ==, 2);
  /* D2C restarts at the second D */
  g_assert_cmpint (rq_at (f, 0)->issue_ns, ==, 400);
  g_assert_cmpint (io_at (f, 0)->issue_ns, ==, 400);
  g_assert_cmpint (io_at (f, 0)->queue_ns, ==, 100);
  /* the requeue took it out of the device: depth 1 again, then 2 */
  g_assert_cmpuint (rq_at (f, 0)->in_flight_at_issue, ==, 1);
  g_assert_cmpuint (rq_at (f, 1)->in_flight_at_issue, ==, 2);
}

static void
test_partial_completion (Fixture *f, gconstpointer data)
{
  feed (f, 100, "Q", "R", 0, 8, 1);
  feed (f, 101, "G", "R", 0, 8, 1);
  feed (f, 102, "Q", "R", 8, 8, 2);
  feed (f, 103, "M", "R", 8, 8, 2);
  feed (f, 200, "D", "R", 0, 16, 1);
  feed (f, 500, "C", "R", 0, 8, 0);        /* first half */
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_cmpuint (f->requests->len, ==, 0);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 500);
  g_assert_cmpuint (io_at (f, 0)->sector, ==, 0);
  feed (f, 700, "C", "R", 8, 8, 0);        /* the rest */
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 2);
  g_assert_cmpint (io_at (f, 1)->complete_ns, ==, 700);
  g_assert_cmpuint (f->requests->len, ==, 1);
  g_assert_cmpuint (rq_at (f, 0)->sector, ==, 0);
  g_assert_cmpuint (rq_at (f, 0)->nr_sectors, ==, 16);
  g_assert_cmpint (rq_at (f, 0)->complete_ns, ==, 700);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->completed_without_issue, ==, 0);
}

static void
test_dc_only (Fixture *f, gconstpointer data)
{
  feed (f, 100, "D", "W", 0, 8, 5);
  feed (f, 110, "D", "W", 800, 16, 5);
  feed (f, 300, "C", "W", 800, 16, 0);
  feed (f, 400, "C", "W", 0, 8, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 2);
  g_assert_cmpuint (f->requests->len, ==, 2);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->issued_without_queue, ==, 2);
  g_assert_true (io_at (f, 0)->request_only);
  /* completion order; queued when issued */
  g_assert_cmpuint (io_at (f, 0)->sector, ==, 800);
  g_assert_cmpint (io_at (f, 0)->queue_ns, ==, 110);
  g_assert_cmpint (io_at (f, 0)->issue_ns, ==, 110);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 300);
  g_assert_cmpuint (io_at (f, 0)->pid, ==, 5);
  g_assert_cmpuint (rq_at (f, 0)->in_flight_at_issue, ==, 2);
  g_assert_cmpuint (rq_at (f, 1)->in_flight_at_issue, ==, 1);
}

static void
test_in_flight_at_start_and_end (Fixture *f, gconstpointer data)
{
  feed (f, 50, "C", "R", 4096, 8, 0);      /* issued before the trace */
  feed (f, 100, "Q", "R", 0, 8, 1);        /* never completes */
  feed (f, 110, "Q", "W", 64, 8, 1);
  feed (f, 111, "G", "W", 64, 8, 1);
  feed (f, 112, "D", "W", 64, 8, 1);       /* never completes */
  g_assert_cmpuint (trace_lifecycle_held (f->lc), ==, 2);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 0);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->completed_without_issue, ==, 1);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 2);
  g_assert_cmpuint (trace_lifecycle_held (f->lc), ==, 0);
}

static void
test_bio_based (Fixture *f, gconstpointer data)
{
  /* dm-style device: Q then C, no request */
  feed (f, 100, "Q", "R", 0, 1024, 3);
  feed (f, 900, "C", "R", 0, 1024, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_cmpuint (f->requests->len, ==, 0);
  g_assert_cmpint (io_at (f, 0)->issue_ns, ==, -1);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 900);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->completed_without_issue, ==, 0);
}

static void
test_split (Fixture *f, gconstpointer data)
{
  TraceRecord rec;

  feed (f, 100, "Q", "R", 4096, 512, 1);
  memset (&rec, 0, sizeof rec);
  rec.time_ns = 101;
  rec.dev_major = 8;
  rec.action = TRACE_ACT_SPLIT;
  rec.rwbs = TRACE_RWBS_READ;
  rec.sector = 4096;
  rec.new_sector = 4352;
  trace_lifecycle_feed (f->lc, &rec);
  feed (f, 102, "G", "R", 4096, 256, 1);
  feed (f, 103, "Q", "R", 4352, 256, 1);
  feed (f, 104, "G", "R", 4352, 256, 1);
  feed (f, 105, "D", "R", 4096, 256, 1);
  feed (f, 106, "D", "R", 4352, 256, 1);
  feed (f, 200, "C", "R", 4096, 256, 0);
  feed (f, 300, "C", "R", 4352, 256, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 2);
  g_assert_cmpuint (io_at (f, 0)->nr_sectors, ==, 256);
  g_assert_cmpuint (io_at (f, 1)->nr_sectors, ==, 256);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 0);
}

/* dm (253,0) over sda (8,0): Q on dm, A onto sda, the sda request, the
 * dm bio completion.  The dm I/O learns its issue time from sda's D. */
static void
test_remap_stacked (Fixture *f, gconstpointer data)
{
  TraceRecord rec;

  memset (&rec, 0, sizeof rec);
  rec.time_ns = 100;
  rec.dev_major = 253;
  rec.pid = 9;
  rec.action = TRACE_ACT_QUEUE;
  rec.rwbs = TRACE_RWBS_READ;
  rec.sector = 1000;
  rec.nr_sectors = 8;
  trace_lifecycle_feed (f->lc, &rec);
  rec.time_ns = 110;
  rec.dev_major = 8;
  rec.action = TRACE_ACT_REMAP;
  rec.sector = 3048;
  rec.from_major = 253;
  rec.from_minor = 0;
  rec.from_sector = 1000;
  trace_lifecycle_feed (f->lc, &rec);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->remap_links, ==, 1);
  feed (f, 120, "Q", "R", 3048, 8, 9);
  feed (f, 130, "G", "R", 3048, 8, 9);
  feed (f, 140, "D", "R", 3048, 8, 9);
  feed (f, 900, "C", "R", 3048, 8, 0);
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_false (io_at (f, 0)->issued_below);
  /* the dm completion */
  memset (&rec, 0, sizeof rec);
  rec.time_ns = 950;
  rec.dev_major = 253;
  rec.action = TRACE_ACT_COMPLETE;
  rec.rwbs = TRACE_RWBS_READ;
  rec.sector = 1000;
  rec.nr_sectors = 8;
  trace_lifecycle_feed (f->lc, &rec);
  drain (f);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->ios->len, ==, 2);
  g_assert_cmpuint (io_at (f, 1)->dev_major, ==, 253);
  g_assert_cmpint (io_at (f, 1)->queue_ns, ==, 100);
  g_assert_cmpint (io_at (f, 1)->issue_ns, ==, 140);
  g_assert_true (io_at (f, 1)->issued_below);
  g_assert_cmpint (io_at (f, 1)->complete_ns, ==, 950);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 0);
  g_assert_cmpuint (trace_lifecycle_held (f->lc), ==, 0);
}

/* A partition remap (the takeoverjp case): no Q on the partition, so no
 * link, and nothing held. */
static void
test_remap_partition (Fixture *f, gconstpointer data)
{
  TraceRecord rec;

  memset (&rec, 0, sizeof rec);
  rec.time_ns = 100;
  rec.dev_major = 8;
  rec.action = TRACE_ACT_REMAP;
  rec.rwbs = TRACE_RWBS_READ;
  rec.sector = 4096;
  rec.nr_sectors = 8;
  rec.from_major = 8;
  rec.from_minor = 1;
  rec.from_sector = 2048;
  trace_lifecycle_feed (f->lc, &rec);
  feed (f, 101, "Q", "R", 4096, 8, 9);
  feed (f, 102, "G", "R", 4096, 8, 9);
  feed (f, 103, "D", "R", 4096, 8, 9);
  feed (f, 200, "C", "R", 4096, 8, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->remap_links, ==, 0);
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_cmpint (io_at (f, 0)->issue_ns, ==, 103);
  g_assert_false (io_at (f, 0)->request_only);
}

static void
test_flush (Fixture *f, gconstpointer data)
{
  /* 6.18 tracepoints: a preflush write becomes a flush request issued at
   * sector 0 and completed at sector (u64) -1, then the empty write
   * completes at 0 (seen in tests/data/valid-events-mqdeadline-6.18) */
  feed (f, 100, "Q", "FWS", 0, 0, 9);
  feed (f, 101, "G", "FWS", 0, 0, 9);
  feed (f, 110, "D", "FF", 0, 0, 10);
  feed (f, 300, "C", "FF", G_MAXUINT64, 0, 0);
  feed (f, 301, "C", "WS", 0, 0, 0);
  feed (f, 400, "Q", "R", 8, 8, 9);
  feed (f, 401, "G", "R", 8, 8, 9);
  feed (f, 402, "D", "R", 8, 8, 9);
  feed (f, 500, "C", "R", 8, 8, 0);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (f->requests->len, ==, 2);
  g_assert_cmpint (rq_at (f, 0)->op, ==, TRACE_OP_FLUSH);
  g_assert_cmpint (rq_at (f, 0)->complete_ns, ==, 300);
  g_assert_cmpint (io_at (f, 0)->queue_ns, ==, 100);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 300);
  /* the flush left the device: the read found it empty */
  g_assert_cmpuint (rq_at (f, 1)->in_flight_at_issue, ==, 1);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->completed_without_issue, ==, 1);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 0);
}

static void
test_bounded (Fixture *f, gconstpointer data)
{
  /* 100,000 I/Os with queue depth 4: state never grows past the depth */
  guint max_held = 0;

  for (guint i = 0; i < 100000; i++)
    {
      gint64 t = (gint64) i * 1000;
      guint64 s = (guint64) i * 8;
      feed (f, t, "Q", "R", s, 8, 1);
      feed (f, t + 1, "G", "R", s, 8, 1);
      feed (f, t + 2, "D", "R", s, 8, 1);
      if (i >= 3)
        feed (f, t + 3, "C", "R", s - 24, 8, 0);
      max_held = MAX (max_held, trace_lifecycle_held (f->lc));
      if (f->ios->len > 1000)
        {
          g_array_set_size (f->ios, 0);
          g_array_set_size (f->requests, 0);
        }
    }
  g_assert_cmpuint (max_held, <=, 4);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->ios, ==, 100000 - 3);
  trace_lifecycle_finish (f->lc);
  g_assert_cmpuint (trace_lifecycle_stats (f->lc)->incomplete_at_end, ==, 3);
}

static void
test_load_ios (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GArray) rqs = NULL;
  TraceLifecycleStats stats;

  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, &rqs, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 10);
  g_assert_cmpuint (rqs->len, ==, 8);
  g_assert_cmpuint (stats.ios, ==, 10);
  g_assert_cmpuint (stats.records, ==, 45);
  for (guint i = 1; i < ios->len; i++)
    {
      const TraceIo *a = &g_array_index (ios, TraceIo, i - 1);
      const TraceIo *b = &g_array_index (ios, TraceIo, i);
      g_assert_cmpint (a->queue_ns, <=, b->queue_ns);
    }
  for (guint i = 1; i < rqs->len; i++)
    g_assert_cmpint (g_array_index (rqs, TraceRequest, i - 1).issue_ns, <=,
                     g_array_index (rqs, TraceRequest, i).issue_ns);
  g_clear_pointer (&ios, g_array_unref);
  g_clear_pointer (&rqs, g_array_unref);

  /* the passthrough request on 8,16 only */
  ios = trace_load_ios (path, 8, 16, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 1);
  g_assert_cmpuint (stats.issued_without_queue, ==, 1);
  g_assert_cmpuint (g_array_index (ios, TraceIo, 0).pid, ==, 555);
  g_clear_pointer (&ios, g_array_unref);

  ios = trace_load_ios ("/nonexistent.blkparse", G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  g_assert_null (ios);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_IO);
}

/* Issue 12: a partial completion moves request A's start onto request
 * B, issued at that sector: B was overwritten in the issued table and
 * leaked (LeakSanitizer: 160 + 144 bytes).  Now B is dropped and counted
 * like a request issued twice. */
static void
test_partial_completion_collision (Fixture *f, gconstpointer data)
{
  const TraceLifecycleStats *st = trace_lifecycle_stats (f->lc);

  feed (f, 0, "Q", "W", 0, 16, 100);
  feed (f, 1000, "G", "W", 0, 16, 100);
  feed (f, 2000, "D", "W", 0, 16, 100);
  feed (f, 3000, "Q", "W", 8, 8, 100);
  feed (f, 4000, "G", "W", 8, 8, 100);
  feed (f, 5000, "D", "W", 8, 8, 100);
  feed (f, 6000, "C", "W", 0, 8, 0);
  g_assert_cmpuint (st->unpaired, ==, 1);
  g_assert_cmpuint (st->incomplete_at_end, ==, 1);
  g_assert_cmpuint (f->ios->len, ==, 0);
  feed (f, 7000, "C", "W", 8, 8, 0);
  g_assert_cmpuint (f->requests->len, ==, 1);
  g_assert_cmpuint (rq_at (f, 0)->sector, ==, 0);
  g_assert_cmpuint (rq_at (f, 0)->nr_sectors, ==, 16);
  g_assert_cmpuint (f->ios->len, ==, 1);
  g_assert_cmpint (io_at (f, 0)->complete_ns, ==, 7000);
  g_assert_cmpuint (trace_lifecycle_held (f->lc), ==, 0);
}

static TraceRecord
blk_record (gint64 t_ns, TraceAction action, guint64 sector, guint32 nr)
{
  TraceRecord rec;

  memset (&rec, 0, sizeof rec);
  rec.time_ns = t_ns;
  rec.dev_major = 8;
  rec.cpu = 0;
  rec.pid = action == TRACE_ACT_COMPLETE ? 0 : 100;
  rec.action = action;
  rec.rwbs = TRACE_RWBS_WRITE;
  rec.sector = sector;
  rec.nr_sectors = nr;
  g_strlcpy (rec.comm, "dd", sizeof rec.comm);
  return rec;
}

/* Issue 12: `iosim fit` on a binary blktrace that fails part-way (cut in
 * its last record) with requests in flight and the collision above: the
 * error names the file and byte offset, and nothing leaks (run under
 * ASan in CI). */
static void
test_load_ios_fails_part_way (void)
{
  const TraceRecord recs[] = {
    blk_record (1000, TRACE_ACT_QUEUE, 0, 16),
    blk_record (2000, TRACE_ACT_GETRQ, 0, 16),
    blk_record (3000, TRACE_ACT_ISSUE, 0, 16),
    blk_record (4000, TRACE_ACT_QUEUE, 8, 8),
    blk_record (5000, TRACE_ACT_GETRQ, 8, 8),
    blk_record (6000, TRACE_ACT_ISSUE, 8, 8),
    blk_record (7000, TRACE_ACT_COMPLETE, 0, 8),
    blk_record (8000, TRACE_ACT_QUEUE, 64, 8),
    blk_record (9000, TRACE_ACT_QUEUE, 128, 8),
  };
  g_autoptr(TraceBlktraceWriter) w = trace_blktrace_writer_new ();
  g_autoptr(GByteArray) bytes = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GArray) rqs = NULL;
  g_autofree char *path = NULL;
  int fd;

  for (gsize i = 0; i < G_N_ELEMENTS (recs); i++)
    trace_blktrace_writer_append (w, &recs[i], bytes);
  fd = g_file_open_tmp ("iosim-lc-XXXXXX.blktrace", &path, &error);
  g_assert_no_error (error);
  close (fd);
  /* cut 20 bytes into the last record's 48-byte header */
  g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len - 28, &error));
  g_assert_no_error (error);

  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, &rqs, NULL, &error);
  g_assert_null (ios);
  g_assert_null (rqs);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "byte offset"));
  g_unlink (path);
}

static void
test_latency_stats (void)
{
  g_autoptr(GArray) v = g_array_new (FALSE, FALSE, sizeof (gint64));
  TraceLatencyStats s;

  /* 100 .. 1 reversed: sorting is the function's job */
  for (gint64 i = 100; i >= 1; i--)
    g_array_append_val (v, i);
  trace_latency_stats (v, &s);
  g_assert_cmpuint (s.count, ==, 100);
  g_assert_cmpfloat (s.mean_ns, ==, 50.5);
  g_assert_cmpint (s.min_ns, ==, 1);
  g_assert_cmpint (s.p50_ns, ==, 50);
  g_assert_cmpint (s.p95_ns, ==, 95);
  g_assert_cmpint (s.p99_ns, ==, 99);
  g_assert_cmpint (s.max_ns, ==, 100);

  g_array_set_size (v, 0);
  trace_latency_stats (v, &s);
  g_assert_cmpuint (s.count, ==, 0);

  {
    gint64 one = 7;
    g_array_append_val (v, one);
    trace_latency_stats (v, &s);
    g_assert_cmpint (s.p50_ns, ==, 7);
    g_assert_cmpint (s.p99_ns, ==, 7);
  }
}

static void
test_summary (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-blkparse-default.blkparse", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceSummary) s = trace_summarize (path, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (s->format, ==, "blkparse");
  g_assert_cmpuint (s->devices->len, ==, 2);
  g_assert_cmpuint (g_array_index (s->devices, TraceSummaryDevice, 0).dev_minor, ==, 0);
  g_assert_cmpuint (g_array_index (s->devices, TraceSummaryDevice, 1).dev_minor, ==, 16);
  g_assert_cmpuint (s->requests_by_op[TRACE_OP_DISCARD].count, ==, 1);
  g_assert_cmpuint (s->requests_by_op[TRACE_OP_DISCARD].bytes, ==, 2048 * 512);
  g_assert_cmpuint (s->q2c.count, ==, 10);
  g_assert_cmpuint (s->d2c.count, ==, 8);
  /* pid 1234 queued three bios (one request) */
  for (guint i = 0; i < s->processes->len; i++)
    {
      const TraceSummaryProcess *p = &g_array_index (s->processes, TraceSummaryProcess, i);
      if (i > 0)
        g_assert_cmpuint (g_array_index (s->processes, TraceSummaryProcess, i - 1).pid, <, p->pid);
      if (p->pid == 1234)
        {
          g_assert_cmpuint (p->ios, ==, 3);
          g_assert_cmpstr (p->comm, ==, "kworker/u256:1");
        }
    }
  g_assert_cmpuint (s->lifecycle.by_action[TRACE_ACT_MESSAGE], ==, 1);
  g_assert_cmpuint (s->skipped_lines, ==, 20);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/lifecycle/simple", test_simple);
  ADD ("/lifecycle/merges", test_merges);
  ADD ("/lifecycle/merge-without-request", test_merge_without_request);
  ADD ("/lifecycle/requeue", test_requeue);
  ADD ("/lifecycle/partial-completion", test_partial_completion);
  ADD ("/lifecycle/partial-completion-collision", test_partial_completion_collision);
  ADD ("/lifecycle/dc-only", test_dc_only);
  ADD ("/lifecycle/in-flight-at-start-and-end", test_in_flight_at_start_and_end);
  ADD ("/lifecycle/bio-based", test_bio_based);
  ADD ("/lifecycle/split", test_split);
  ADD ("/lifecycle/flush", test_flush);
  ADD ("/lifecycle/remap-stacked", test_remap_stacked);
  ADD ("/lifecycle/remap-partition", test_remap_partition);
  ADD ("/lifecycle/bounded", test_bounded);
#undef ADD
  g_test_add_func ("/lifecycle/load-ios", test_load_ios);
  g_test_add_func ("/lifecycle/load-ios-fails-part-way", test_load_ios_fails_part_way);
  g_test_add_func ("/summary/latency-stats", test_latency_stats);
  g_test_add_func ("/summary/blkparse", test_summary);
  return g_test_run ();
}
