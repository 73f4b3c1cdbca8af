/* test-trace-stream.c — streaming with bounded memory: issue-only traces
 * (TraceIo.no_completion), the latency sketch (traces/trace-sketch.h),
 * `trace info` headlines (duration by time, device 0,0), NFS nearest
 * ranks, and (slow suite, -m slow) the memory bound of trace_summarize
 * on a generated 2,000,000-record DiskSim trace.
 *
 * Every trace here is written by the test itself (hand-made text in the
 * formats of shared/reference/trace-formats.md), none copied.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs-summary.h"
#include "traces/trace-sketch.h"
#include "tests/traces/test-tmpdir.h"

static char *
write_tmp (const char *name, const char *text)
{
  char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The nearest rank of sorted @v: rank ceil (p n / 100). */
static gint64
nearest_rank (GArray *v, guint p)
{
  guint64 rank = ((guint64) p * v->len + 99) / 100;
  return g_array_index (v, gint64, MAX (rank, 1) - 1);
}

/* ---- The sketch ------------------------------------------------------- */

/* Exact while small: every percentile is the true nearest rank, p99 of
 * three values is the largest. */
static void
test_sketch_exact (void)
{
  static const guint sizes[] = { 1, 2, 3, 10, 99, 100, 101, 1000, TRACE_SKETCH_EXACT_MAX };
  g_autoptr (GRand) rand = g_rand_new_with_seed (16);

  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      g_autoptr (TraceSketch) sk = trace_sketch_new ();
      g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (gint64));
      double sum = 0;

      for (guint i = 0; i < sizes[k]; i++)
        {
          gint64 x = g_rand_int_range (rand, 0, 5000000);
          trace_sketch_add (sk, x);
          g_array_append_val (v, x);
          sum += (double) x;
        }
      g_array_sort (v, compare_i64);
      g_assert_cmpfloat (trace_sketch_relative_error (sk), ==, 0.0);
      g_assert_cmpuint (trace_sketch_count (sk), ==, sizes[k]);
      g_assert_cmpint (trace_sketch_min_ns (sk), ==, g_array_index (v, gint64, 0));
      g_assert_cmpint (trace_sketch_max_ns (sk), ==, g_array_index (v, gint64, v->len - 1));
      g_assert_cmpfloat_with_epsilon (trace_sketch_mean_ns (sk), sum / sizes[k], 1e-6);
      for (guint p = 1; p <= 100; p++)
        g_assert_cmpint (trace_sketch_percentile_ns (sk, p), ==, nearest_rank (v, p));
    }
  {
    g_autoptr (TraceSketch) sk = trace_sketch_new ();
    trace_sketch_add (sk, 100);
    trace_sketch_add (sk, 300);
    trace_sketch_add (sk, 200);
    g_assert_cmpint (trace_sketch_percentile_ns (sk, 99), ==, 300);
    g_assert_cmpint (trace_sketch_percentile_ns (sk, 50), ==, 200);
    g_assert_cmpint (trace_sketch_percentile_ns (sk, 33), ==, 100);
    g_assert_cmpint (trace_sketch_percentile_ns (sk, 34), ==, 200);
  }
}

typedef struct {
  const char *name;
  double      lo_ns, hi_ns;   /* log-uniform range */
  guint       n;
} SketchCase;

/* Past the exact phase: every percentile within the stated 0.5 % of the
 * true nearest rank, min and max exact, the bound reported. */
static void
test_sketch_bounded (void)
{
  static const SketchCase cases[] = {
    { "us-range", 1e3, 1e7, 300000 },
    { "ns-to-s", 1.0, 1e9, 200000 },
    { "small-values", 1.0, 2000.0, 100000 },   /* the exact small range and the first buckets */
    { "wide", 1e6, 9e18, 100000 },             /* up to near G_MAXINT64 */
  };
  g_autoptr (GRand) rand = g_rand_new_with_seed (1616);

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      const SketchCase *c = &cases[k];
      g_autoptr (TraceSketch) sk = trace_sketch_new ();
      g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (gint64));

      for (guint i = 0; i < c->n; i++)
        {
          double e = g_rand_double_range (rand, log (c->lo_ns), log (c->hi_ns));
          gint64 x = (gint64) exp (e);
          trace_sketch_add (sk, x);
          g_array_append_val (v, x);
        }
      g_array_sort (v, compare_i64);
      g_assert_cmpfloat (trace_sketch_relative_error (sk), ==, TRACE_SKETCH_RELATIVE_ERROR);
      g_assert_cmpint (trace_sketch_min_ns (sk), ==, g_array_index (v, gint64, 0));
      g_assert_cmpint (trace_sketch_max_ns (sk), ==, g_array_index (v, gint64, v->len - 1));
      for (guint p = 1; p <= 100; p++)
        {
          gint64 want = nearest_rank (v, p);
          gint64 got = trace_sketch_percentile_ns (sk, p);
          double err = want ? fabs ((double) got - (double) want) / (double) want : (double) got;

          if (err > TRACE_SKETCH_RELATIVE_ERROR)
            g_error ("%s p%u: sketch %" G_GINT64_FORMAT ", exact %" G_GINT64_FORMAT
                     " (%.4f %%)", c->name, p, got, want, err * 100);
          g_assert_cmpint (got, <=, trace_sketch_max_ns (sk));
          g_assert_cmpint (got, >=, trace_sketch_min_ns (sk));
        }
      g_assert_cmpint (trace_sketch_percentile_ns (sk, 100), ==, trace_sketch_max_ns (sk));
    }
}

/* Merging gives what adding both value sets to one sketch gives, in
 * either mode, and keeps exact while the sum fits. */
static void
test_sketch_merge (void)
{
  static const guint sizes[][2] = { { 10, 20 }, { 40000, 30000 }, { 100000, 5 }, { 5, 100000 },
                                    { 80000, 90000 } };
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);

  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      g_autoptr (TraceSketch) a = trace_sketch_new ();
      g_autoptr (TraceSketch) b = trace_sketch_new ();
      g_autoptr (TraceSketch) all = trace_sketch_new ();

      for (guint s = 0; s < 2; s++)
        for (guint i = 0; i < sizes[k][s]; i++)
          {
            gint64 x = g_rand_int_range (rand, 0, 1 << 30);
            trace_sketch_add (s ? b : a, x);
            trace_sketch_add (all, x);
          }
      trace_sketch_merge (a, b);
      g_assert_cmpuint (trace_sketch_count (a), ==, trace_sketch_count (all));
      g_assert_cmpint (trace_sketch_min_ns (a), ==, trace_sketch_min_ns (all));
      g_assert_cmpint (trace_sketch_max_ns (a), ==, trace_sketch_max_ns (all));
      g_assert_cmpfloat_with_epsilon (trace_sketch_mean_ns (a), trace_sketch_mean_ns (all), 1e-3);
      g_assert_cmpfloat (trace_sketch_relative_error (a), ==, trace_sketch_relative_error (all));
      for (guint p = 1; p <= 100; p++)
        g_assert_cmpint (trace_sketch_percentile_ns (a, p), ==, trace_sketch_percentile_ns (all, p));
    }
}

/* ---- Issue-only traces ------------------------------------------------ */

typedef struct {
  const char *format;
  const char *name;
  const char *text;
  guint64     ios;            /* no_completion I/Os */
  gint64      first_ns, last_ns;
  guint32     first_minor;    /* the first device's minor (major 0) */
} IssueOnlyCase;

/* Times out of file order (the issue's 196 records near 1.27e9 s): the
 * duration is the latest minus the earliest. */
static const IssueOnlyCase issue_only_cases[] = {
  { "disksim-ascii", "stream-a.trace",
    "1270000005.000000 0 2048 8 1\n"
    "1270000001.500000 3 4096 16 0\n"
    "1270000009.250000 0 8192 8 1\n",
    3, G_GINT64_CONSTANT (1270000001500000), G_GINT64_CONSTANT (1270000009250000), 0 },
  { "fio-iolog", "stream-b.iolog",
    "fio version 3 iolog\n"
    "0 /dev/sdb add\n"
    "0 /dev/sdb open\n"
    "500 /dev/sdb read 4096 4096\n"
    "100 /dev/sdb write 8192 512\n"
    "900 /dev/sdb read 0 4096\n"
    "1000 /dev/sdb close\n",
    3, 100000, 900000, 0 },
  { "umass-spc", "stream-c.spc",
    "0,100,4096,r,2.000000\n"
    "1,200,512,w,0.500000\n"
    "0,300,4096,r,1.250000\n"
    "0,400,8192,w,3.000000\n",
    4, 500000000, 3000000000, 0 },
};

static void
test_issue_only (gconstpointer data)
{
  const IssueOnlyCase *c = data;
  g_autofree char *path = write_tmp (c->name, c->text);
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceReader) r = trace_reader_open (path, NULL, &error);
  g_autoptr (TraceLifecycle) lc = trace_lifecycle_new ();
  g_autoptr (TraceSummary) s = NULL;
  g_autoptr (GArray) ios = NULL;
  TraceLifecycleStats stats;
  TraceRecord rec;
  TraceIo io;
  guint64 popped = 0;

  g_assert_no_error (error);
  g_assert_cmpstr (trace_reader_format (r), ==, c->format);
  g_assert_true (trace_reader_issue_only (r));
  trace_lifecycle_set_issue_only (lc, TRUE);
  while (trace_reader_next (r, &rec, &error))
    {
      trace_lifecycle_feed (lc, &rec);
      /* Emitted at once: nothing is held for a completion. */
      g_assert_cmpuint (trace_lifecycle_held (lc), ==, 0);
      g_assert_true (trace_lifecycle_pop_io (lc, &io));
      g_assert_true (io.no_completion);
      g_assert_cmpint (io.queue_ns, ==, rec.time_ns);
      g_assert_cmpint (io.issue_ns, ==, -1);
      g_assert_cmpint (io.complete_ns, ==, -1);
      g_assert_cmpint (io.error, ==, 0);
      g_assert_false (trace_lifecycle_pop_io (lc, &io));
      popped++;
    }
  g_assert_no_error (error);
  trace_lifecycle_finish (lc);
  g_assert_cmpuint (popped, ==, c->ios);
  g_assert_cmpuint (trace_lifecycle_stats (lc)->ios_without_completion, ==, c->ios);
  g_assert_cmpuint (trace_lifecycle_stats (lc)->incomplete_at_end, ==, 0);

  /* trace_load_ios: the same I/Os, by queue time. */
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, c->ios);
  g_assert_cmpuint (stats.ios_without_completion, ==, c->ios);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *x = &g_array_index (ios, TraceIo, i);
      g_assert_true (x->no_completion);
      if (i > 0)
        g_assert_cmpint (g_array_index (ios, TraceIo, i - 1).queue_ns, <=, x->queue_ns);
    }
  g_assert_cmpint (g_array_index (ios, TraceIo, 0).queue_ns, ==, c->first_ns);

  /* trace info: counted, no latencies, duration by time, device 0,0. */
  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (s->issue_only);
  g_assert_cmpuint (s->lifecycle.ios_without_completion, ==, c->ios);
  g_assert_cmpuint (s->q2c.count, ==, 0);
  g_assert_cmpuint (s->d2c.count, ==, 0);
  g_assert_cmpint (s->lifecycle.first_ns, ==, c->first_ns);
  g_assert_cmpint (s->lifecycle.last_ns, ==, c->last_ns);
  {
    guint64 n = 0;
    for (int op = 0; op < TRACE_OP_COUNT; op++)
      {
        n += s->ios_no_completion_by_op[op].count;
        g_assert_cmpuint (s->ios_by_op[op].count, ==, 0);
      }
    g_assert_cmpuint (n, ==, c->ios);
  }
  g_assert_cmpuint (s->devices->len, >=, 1);
  g_assert_cmpuint (g_array_index (s->devices, TraceSummaryDevice, 0).dev_major, ==, 0);
  g_assert_cmpuint (g_array_index (s->devices, TraceSummaryDevice, 0).dev_minor, ==, c->first_minor);
  {
    guint64 records = 0;
    for (guint i = 0; i < s->devices->len; i++)
      records += g_array_index (s->devices, TraceSummaryDevice, i).records;
    g_assert_cmpuint (records, ==, s->lifecycle.records);
  }
  g_remove (path);
}

/* A block trace with Q events and never a D or C (blktrace -a queue):
 * the queued bios come out at the end as no_completion I/Os, by queue
 * time; a trace with a D keeps its unfinished Qs incomplete instead. */
static void
test_queue_only_blkparse (void)
{
  static const char queue_only[] =
    "  8,0    1        1     0.000300000  1234  Q   R 4096 + 8 [dd]\n"
    "  8,0    0        1     0.000100000  1234  Q   W 2048 + 8 [dd]\n"
    "  8,0    0        2     0.000200000  1235  Q   R 2048 + 8 [cat]\n"
    "  8,0    0        3     0.000200000  1236  Q   R 9000 + 8 [cat]\n"
    "  8,0    0        4     0.000250000  1236  P   N [cat]\n";
  static const char with_issue[] =
    "  8,0    0        1     0.000100000  1234  Q   W 2048 + 8 [dd]\n"
    "  8,0    0        2     0.000200000  1234  Q   R 4096 + 8 [dd]\n"
    "  8,0    0        3     0.000300000  1234  D   R 4096 + 8 [dd]\n";
  static const guint64 want_sector[] = { 2048, 2048, 9000, 4096 };
  g_autofree char *path = write_tmp ("stream-q.blkparse", queue_only);
  g_autofree char *path2 = write_tmp ("stream-qd.blkparse", with_issue);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GArray) ios2 = NULL;
  g_autoptr (TraceSummary) s = NULL;
  TraceLifecycleStats stats;

  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 4);
  g_assert_cmpuint (stats.ios_without_completion, ==, 4);
  g_assert_cmpuint (stats.incomplete_at_end, ==, 0);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      g_assert_true (io->no_completion);
      g_assert_cmpint (io->issue_ns, ==, -1);
      g_assert_cmpint (io->complete_ns, ==, -1);
      g_assert_cmpuint (io->sector, ==, want_sector[i]);
    }
  /* Equal queue times: by pid (trace_load_ios), file order kept. */
  g_assert_cmpuint (g_array_index (ios, TraceIo, 1).pid, ==, 1235);
  g_assert_cmpuint (g_array_index (ios, TraceIo, 2).pid, ==, 1236);

  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (s->issue_only);
  g_assert_cmpuint (s->lifecycle.ios_without_completion, ==, 4);
  g_assert_cmpuint (s->ios_no_completion_by_op[TRACE_OP_READ].count, ==, 3);
  g_assert_cmpuint (s->ios_no_completion_by_op[TRACE_OP_WRITE].count, ==, 1);
  g_assert_cmpuint (s->q2c.count, ==, 0);

  ios2 = trace_load_ios (path2, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios2->len, ==, 0);
  g_assert_cmpuint (stats.ios_without_completion, ==, 0);
  g_assert_cmpuint (stats.incomplete_at_end, ==, 2);
  g_remove (path);
  g_remove (path2);
}

/* Latencies of a block trace: trace info's Q2C equals the exact nearest
 * ranks of the I/Os trace_load_ios gives. */
static void
test_summary_latency_exact (void)
{
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  g_autoptr (GArray) q2c = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceSummary) s = NULL;
  g_autofree char *path = NULL;
  gint64 t_us = 0;

  for (guint i = 0; i < 200; i++)
    {
      gint64 lat_us = g_rand_int_range (rand, 50, 20000);
      gint64 v = lat_us * 1000;
      t_us += 1000;
      g_string_append_printf (text, "  8,0    0 %8u %5" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT
                              "  100  Q   R %u + 8 [fio]\n", 3 * i + 1, t_us / 1000000,
                              t_us % 1000000, i * 8);
      g_string_append_printf (text, "  8,0    0 %8u %5" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT
                              "  100  D   R %u + 8 [fio]\n", 3 * i + 2, t_us / 1000000,
                              t_us % 1000000, i * 8);
      g_string_append_printf (text, "  8,0    0 %8u %5" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT
                              "    0  C   R %u + 8 [0]\n", 3 * i + 3, (t_us + lat_us) / 1000000,
                              (t_us + lat_us) % 1000000, i * 8);
      g_array_append_val (q2c, v);
    }
  path = write_tmp ("stream-lat.blkparse", text->str);
  s = trace_summarize (path, "blkparse", &error);
  g_assert_no_error (error);
  g_array_sort (q2c, compare_i64);
  g_assert_cmpuint (s->q2c.count, ==, 200);
  g_assert_cmpfloat (s->q2c.relative_error, ==, 0.0);
  g_assert_cmpint (s->q2c.min_ns, ==, g_array_index (q2c, gint64, 0));
  g_assert_cmpint (s->q2c.max_ns, ==, g_array_index (q2c, gint64, 199));
  g_assert_cmpint (s->q2c.p50_ns, ==, nearest_rank (q2c, 50));
  g_assert_cmpint (s->q2c.p95_ns, ==, nearest_rank (q2c, 95));
  g_assert_cmpint (s->q2c.p99_ns, ==, nearest_rank (q2c, 99));
  g_remove (path);
}

/* NFS rows: nearest rank, exact while small; p99 of three is the max. */
static void
test_nfs_nearest_rank (void)
{
  TraceNfsOpStats s = { 0 };
  static const gint64 lat[] = { 1000, 3000, 2000 };

  s.latency = trace_sketch_new ();
  for (guint i = 0; i < G_N_ELEMENTS (lat); i++)
    {
      s.answered++;
      trace_sketch_add (s.latency, lat[i]);
    }
  g_assert_cmpint (trace_nfs_op_latency_quantile_ns (&s, 0.99), ==, 3000);
  g_assert_cmpint (trace_nfs_op_latency_quantile_ns (&s, 0.5), ==, 2000);
  g_assert_cmpint (trace_nfs_op_latency_quantile_ns (&s, 0.33), ==, 1000);
  /* Values a 1/16 histogram would have moved to a bucket edge. */
  for (gint64 v = 1000001; v < 1000001 + 97; v++)
    {
      s.answered++;
      trace_sketch_add (s.latency, v);
    }
  g_assert_cmpint (trace_nfs_op_latency_quantile_ns (&s, 0.5), ==, 1000001 + 46);
  g_assert_cmpfloat (trace_nfs_op_latency_relative_error (&s), ==, 0.0);
  trace_sketch_free (s.latency);
}

/* ---- The memory bound (slow) ------------------------------------------ */

static guint64
peak_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *p;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  p = strstr (status, "VmHWM:");
  g_assert_nonnull (p);
  return g_ascii_strtoull (p + 6, NULL, 10);
}

/* 2,000,000 DiskSim records (before, every Q was held to the end for a
 * completion that never comes: over 100 bytes each): trace_summarize
 * must stay within 64 MiB of the peak it started at. */
static void
test_memory_bound (void)
{
  const guint n = 2000000;
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "stream-big.trace", NULL);
  FILE *f = fopen (path, "w");
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceSummary) s = NULL;
  guint64 before, after;

  g_assert_nonnull (f);
  for (guint i = 0; i < n; i++)
    fprintf (f, "%u.%03u %u %u %u %u\n", i / 1000, i % 1000, i % 4, (i * 7919u) % 100000000u,
             8 * (1 + i % 16), i % 3 == 0);
  g_assert_cmpint (fclose (f), ==, 0);
  before = peak_rss_kib ();
  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  after = peak_rss_kib ();
  g_assert_cmpuint (s->lifecycle.ios_without_completion, ==, n);
  g_assert_cmpuint (s->devices->len, ==, 4);
  g_test_message ("peak RSS %" G_GUINT64_FORMAT " KiB before, %" G_GUINT64_FORMAT " KiB after",
                  before, after);
  g_assert_cmpuint (after - before, <, 64 * 1024);
  g_remove (path);
}

int
main (int argc, char **argv)
{
  char *tmpdir = test_tmpdir_enter ();
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stream/sketch/exact", test_sketch_exact);
  g_test_add_func ("/stream/sketch/bounded", test_sketch_bounded);
  g_test_add_func ("/stream/sketch/merge", test_sketch_merge);
  for (guint i = 0; i < G_N_ELEMENTS (issue_only_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/stream/issue-only/%s", issue_only_cases[i].format);
      g_test_add_data_func (name, &issue_only_cases[i], test_issue_only);
    }
  g_test_add_func ("/stream/queue-only-blkparse", test_queue_only_blkparse);
  g_test_add_func ("/stream/summary-latency-exact", test_summary_latency_exact);
  g_test_add_func ("/stream/nfs-nearest-rank", test_nfs_nearest_rank);
  if (g_test_slow ())
    g_test_add_func ("/stream/memory-bound", test_memory_bound);
  rc = g_test_run ();
  test_tmpdir_leave (tmpdir);
  return rc;
}
