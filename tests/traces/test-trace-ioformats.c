/* test-trace-ioformats.c — the fio iolog, MSR Cambridge, SYSTOR '17,
 * UMass/SPC and DiskSim readers, the reorder heap, and the fio iolog v3
 * and CSV writers.
 *
 * Expected figures come from reading the files: record counts and
 * first/last rows with awk/head/tail, latencies from the rows' response
 * fields (exact decimal arithmetic), and for the fio checks from fio 3.33
 * itself (replaying our logs with ioengine=null; skipped without fio).
 * The tests/data/valid-* and fail-* files of these formats are run by
 * test-trace-parse.c (counts, FILE:LINE errors, blkparse round trip,
 * mutation smoke).
 */
#include "test-tmpdir.h"
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "traces/trace-lifecycle.h"
#include "traces/trace-private.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *
shared_testdata (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    return NULL;
  return dir;
}

static char *
shared_path (const char *dir, const char *name)
{
  const char *shared = shared_testdata ();
  char *path;

  if (shared == NULL)
    return NULL;
  path = g_build_filename (shared, dir, name, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_free (path);
      return NULL;
    }
  return path;
}

#define SKIP_WITHOUT(path)                                              \
  do {                                                                  \
    if ((path) == NULL)                                                 \
      {                                                                 \
        g_test_skip ("shared test data (IOSIM_SHARED_TESTDATA) not available"); \
        return;                                                         \
      }                                                                 \
  } while (0)

static char *
data_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

/* Every record of @path; @reader_out (may be NULL) keeps the reader for
 * its metadata and counts. */
static GArray *
load (const char *path, const char *format, TraceReader **reader_out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, format, &error);
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord rec;

  g_assert_no_error (error);
  while (trace_reader_next (r, &rec, &error))
    g_array_append_val (recs, rec);
  g_assert_no_error (error);
  if (reader_out != NULL)
    *reader_out = g_steal_pointer (&r);
  return recs;
}

#define REC(a, i) (&g_array_index ((a), TraceRecord, (i)))

static void
assert_time_ordered (GArray *recs)
{
  for (guint i = 1; i < recs->len; i++)
    g_assert_cmpint (REC (recs, i - 1)->time_ns, <=, REC (recs, i)->time_ns);
}

static guint
count_rwbs (GArray *recs, guint32 rwbs)
{
  guint n = 0;
  for (guint i = 0; i < recs->len; i++)
    n += REC (recs, i)->rwbs == rwbs;
  return n;
}

/* ---- fio iolog ---------------------------------------------------------- */

static void
test_iolog_t0038 (void)
{
  g_autofree char *path = shared_path ("fio-iolog", "t0038.iolog");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = NULL;
  TraceRecord *x;

  SKIP_WITHOUT (path);
  recs = load (path, NULL, &r);
  g_assert_cmpstr (trace_reader_format (r), ==, "fio-iolog");
  /* 24 lines: version, add, open, 10 x (trim, write), close */
  g_assert_cmpuint (recs->len, ==, 20);
  g_assert_cmpuint (trace_reader_skipped (r), ==, 4);
  g_assert_cmpuint (trace_reader_lines (r), ==, 24);
  g_assert_cmpstr (trace_reader_meta (r, "file.0"), ==, "/dev/null");
  g_assert_cmpstr (trace_reader_meta (r, "iolog.version"), ==, "3");
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_DISCARD), ==, 10);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_WRITE), ==, 10);

  /* "10736 /dev/null trim 0 2147483648" */
  x = REC (recs, 0);
  g_assert_cmpint (x->action, ==, TRACE_ACT_QUEUE);
  g_assert_cmpint (x->time_ns, ==, 10736000);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_DISCARD);
  g_assert_cmpuint (x->dev_major, ==, 0);
  g_assert_cmpuint (x->dev_minor, ==, 0);
  g_assert_cmpuint (x->sector, ==, 0);
  g_assert_cmpuint (x->nr_sectors, ==, 4194304);
  g_assert_cmpuint (trace_record_length_bytes (x), ==, G_GUINT64_CONSTANT (2147483648));
  g_assert_cmpuint (x->line, ==, 4);
  /* "10809 /dev/null write 36864 4096" */
  x = REC (recs, 19);
  g_assert_cmpint (x->time_ns, ==, 10809000);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_WRITE);
  g_assert_cmpuint (x->sector, ==, 72);
  g_assert_cmpuint (x->nr_sectors, ==, 8);
  g_assert_cmpuint (x->line, ==, 23);
}

static void
test_iolog_randrw (void)
{
  g_autofree char *path = shared_path ("fio-iolog/generated", "fio333-randrw.v3.iolog");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = NULL;
  TraceRecord *x;

  SKIP_WITHOUT (path);
  recs = load (path, NULL, &r);
  /* awk '{print $3}' | sort | uniq -c: 68 read, 32 write, 7 sync, 2 add,
   * 2 open, 2 close, and the version line */
  g_assert_cmpuint (recs->len, ==, 107);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_READ), ==, 68);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_WRITE), ==, 32);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_FLUSH), ==, 7);
  g_assert_cmpuint (trace_reader_skipped (r), ==, 7);
  g_assert_cmpstr (trace_reader_meta (r, "file.0"), ==, "/tmp/fiogen/gen.0.0");
  g_assert_cmpstr (trace_reader_meta (r, "file.1"), ==, "/tmp/fiogen/gen.0.1");
  g_assert_null (trace_reader_meta (r, "file.2"));
  assert_time_ordered (recs);

  /* "358 /tmp/fiogen/gen.0.0 read 61440 4096" */
  x = REC (recs, 0);
  g_assert_cmpint (x->time_ns, ==, 358000);
  g_assert_cmpuint (x->dev_minor, ==, 0);
  g_assert_cmpuint (x->sector, ==, 120);
  /* "746 /tmp/fiogen/gen.0.1 read 774144 4096" */
  x = REC (recs, 1);
  g_assert_cmpuint (x->dev_minor, ==, 1);
  g_assert_cmpuint (x->sector, ==, 1512);
  /* "6272 /tmp/fiogen/gen.0.1 sync 421888 0" */
  x = REC (recs, 105);
  g_assert_cmpint (x->time_ns, ==, 6272000);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_FLUSH);
  g_assert_cmpuint (x->dev_minor, ==, 1);
  g_assert_cmpuint (x->nr_sectors, ==, 0);
  /* "6306 /tmp/fiogen/gen.0.0 read 28672 4096" */
  x = REC (recs, 106);
  g_assert_cmpint (x->time_ns, ==, 6306000);
  g_assert_cmpuint (x->sector, ==, 56);
}

static void
test_iolog_v2 (void)
{
  static const guint32 want_rwbs[] = {
    TRACE_RWBS_READ, TRACE_RWBS_WRITE, TRACE_RWBS_FLUSH, TRACE_RWBS_DISCARD,
    TRACE_RWBS_FLUSH | TRACE_RWBS_SYNC, TRACE_RWBS_READ,
  };
  g_autofree char *path = shared_path ("fio-iolog/generated", "handwritten-v2.iolog");
  g_autofree char *ours = data_path ("valid-iolog-v2.iolog");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = NULL;
  g_autoptr(GArray) mine = NULL;
  TraceRecord *x;

  /* our copy: the same lines, then an unaligned read after an earlier wait */
  mine = load (ours, NULL, NULL);
  g_assert_cmpuint (mine->len, ==, 6);
  x = REC (mine, 5);
  g_assert_cmpint (x->time_ns, ==, G_GINT64_CONSTANT (1000000000));   /* waits never go back */
  g_assert_cmpuint (x->sector, ==, 1);
  g_assert_cmpuint (x->nr_sectors, ==, 7);                            /* bytes 1000..3999 */
  g_assert_cmpuint (x->head_bytes, ==, 488);
  g_assert_cmpuint (trace_record_offset_bytes (x), ==, 1000);
  g_assert_cmpuint (trace_record_length_bytes (x), ==, 3000);

  SKIP_WITHOUT (path);
  recs = load (path, NULL, &r);
  g_assert_cmpstr (trace_reader_meta (r, "iolog.version"), ==, "2");
  g_assert_cmpuint (recs->len, ==, G_N_ELEMENTS (want_rwbs));
  /* version, add, open, wait, close */
  g_assert_cmpuint (trace_reader_skipped (r), ==, 5);
  for (guint i = 0; i < recs->len; i++)
    {
      x = REC (recs, i);
      g_assert_cmpuint (x->rwbs, ==, want_rwbs[i]);
      /* "wait 1000 0" before the write: fio sleeps until 1000 ms */
      g_assert_cmpint (x->time_ns, ==, i == 0 ? 0 : G_GINT64_CONSTANT (1000000000));
    }
  /* "/dev/sdb trim 2097152 1048576" */
  g_assert_cmpuint (REC (recs, 3)->sector, ==, 4096);
  g_assert_cmpuint (REC (recs, 3)->nr_sectors, ==, 2048);
}

static void
test_iolog_files (void)
{
  g_autofree char *path = data_path ("valid-iolog-v3-files.iolog");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = load (path, NULL, &r);
  g_auto(GStrv) keys = trace_reader_meta_keys (r);

  g_assert_cmpuint (recs->len, ==, 5);
  g_assert_cmpuint (g_strv_length (keys), ==, 3);
  g_assert_cmpstr (keys[0], ==, "file.0");
  g_assert_cmpstr (keys[1], ==, "file.1");
  g_assert_cmpstr (keys[2], ==, "iolog.version");
  g_assert_cmpstr (trace_reader_meta (r, "file.0"), ==, "/data/a");
  g_assert_cmpstr (trace_reader_meta (r, "file.1"), ==, "/data/b");
  g_assert_cmpuint (REC (recs, 1)->dev_minor, ==, 1);
  /* the re-add of /data/a names the same file */
  g_assert_cmpuint (REC (recs, 2)->dev_minor, ==, 0);
  g_assert_cmpuint (REC (recs, 2)->rwbs, ==, TRACE_RWBS_DISCARD);
  g_assert_cmpuint (REC (recs, 3)->rwbs, ==, TRACE_RWBS_FLUSH | TRACE_RWBS_SYNC);
  g_assert_cmpint (REC (recs, 3)->time_ns, ==, 987000);
  /* "1016 /data/a write 513 1": one byte inside sector 1 */
  g_assert_cmpuint (REC (recs, 4)->sector, ==, 1);
  g_assert_cmpuint (REC (recs, 4)->nr_sectors, ==, 1);
  g_assert_cmpuint (trace_record_offset_bytes (REC (recs, 4)), ==, 513);
  g_assert_cmpuint (trace_record_length_bytes (REC (recs, 4)), ==, 1);
}

/* The fio v3 logs and the ftrace capture of the same run hold the same
 * I/Os: per fio job (one pid each) the same sequence of op, sector and
 * length, and the same spacing in time. */
static void
check_job_against_ftrace (GArray *iolog, GArray *ftrace_q)
{
  gint64 worst = 0;

  g_assert_cmpuint (iolog->len, ==, ftrace_q->len);
  for (guint i = 0; i < iolog->len; i++)
    {
      const TraceRecord *a = REC (iolog, i);
      const TraceRecord *b = REC (ftrace_q, i);
      gint64 da = a->time_ns - REC (iolog, 0)->time_ns;
      gint64 db = b->time_ns - REC (ftrace_q, 0)->time_ns;

      g_assert_cmpint (trace_op_from_rwbs (a->rwbs), ==, trace_op_from_rwbs (b->rwbs));
      g_assert_cmpuint (a->sector, ==, b->sector);
      g_assert_cmpuint (a->nr_sectors, ==, b->nr_sectors);
      g_assert_cmpuint (trace_record_offset_bytes (a), ==, b->sector * 512);
      worst = MAX (worst, ABS (da - db));
    }
  g_test_message ("largest difference of relative times iolog vs ftrace: %" G_GINT64_FORMAT " ns", worst);
  /* fio stamps the log entry just before io_submit, the kernel the bio
   * just after: they agree within a millisecond over two seconds */
  g_assert_cmpint (worst, <, 1000000);
}

static void
test_iolog_vs_ftrace (void)
{
  g_autofree char *rand_path = shared_path ("generated-block-loop-kernel6.18", "randrw4k.v3.iolog");
  g_autofree char *seq_path = shared_path ("generated-block-loop-kernel6.18", "seqwrite64k.v3.iolog");
  g_autofree char *ftrace_path = shared_path ("generated-block-loop-kernel6.18", "ftrace-block-loop2.txt.gz");
  g_autoptr(GArray) rand_log = NULL;
  g_autoptr(GArray) seq_log = NULL;
  g_autoptr(GArray) ftrace = NULL;
  g_autoptr(GArray) q_rand = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  g_autoptr(GArray) q_seq = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  guint32 pid_rand = 0;

  SKIP_WITHOUT (rand_path);
  SKIP_WITHOUT (seq_path);
  SKIP_WITHOUT (ftrace_path);
  rand_log = load (rand_path, NULL, NULL);
  seq_log = load (seq_path, NULL, NULL);
  ftrace = load (ftrace_path, NULL, NULL);

  /* the job files: randrw4k 800 R + 800 W of 4 KiB, seqwrite64k 100 W */
  g_assert_cmpuint (rand_log->len, ==, 1600);
  g_assert_cmpuint (count_rwbs (rand_log, TRACE_RWBS_READ), ==, 800);
  g_assert_cmpuint (count_rwbs (rand_log, TRACE_RWBS_WRITE), ==, 800);
  g_assert_cmpuint (seq_log->len, ==, 100);
  g_assert_cmpuint (count_rwbs (seq_log, TRACE_RWBS_WRITE), ==, 100);

  /* the first queued bio belongs to randrw4k (its first read) */
  for (guint i = 0; i < ftrace->len; i++)
    {
      const TraceRecord *x = REC (ftrace, i);
      if (x->action != TRACE_ACT_QUEUE || x->dev_major != 7 || x->dev_minor != 2)
        continue;
      if (pid_rand == 0)
        pid_rand = x->pid;
      g_array_append_val (x->pid == pid_rand ? q_rand : q_seq, *x);
    }
  g_assert_cmpuint (q_rand->len + q_seq->len, ==, 1700);
  check_job_against_ftrace (rand_log, q_rand);
  check_job_against_ftrace (seq_log, q_seq);
}

/* ---- MSR Cambridge and SYSTOR '17 ----------------------------------------- */

static const TraceIo *
find_io (GArray *ios, guint64 sector, gint64 queue_ns)
{
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      if (io->sector == sector && io->queue_ns == queue_ns)
        return io;
    }
  return NULL;
}

static void
check_pairs (GArray *recs)
{
  g_autoptr(GHashTable) issued = g_hash_table_new (NULL, NULL);
  guint d = 0, c = 0;

  /* every completion follows the issue of its row */
  for (guint i = 0; i < recs->len; i++)
    {
      const TraceRecord *x = REC (recs, i);
      g_assert_cmpuint (x->io_tag, ==, x->line);
      if (x->action == TRACE_ACT_ISSUE)
        {
          g_assert_true (g_hash_table_add (issued, GSIZE_TO_POINTER ((gsize) x->line)));
          d++;
        }
      else
        {
          g_assert_cmpint (x->action, ==, TRACE_ACT_COMPLETE);
          g_assert_true (g_hash_table_remove (issued, GSIZE_TO_POINTER ((gsize) x->line)));
          c++;
        }
    }
  g_assert_cmpuint (g_hash_table_size (issued), ==, d - c);
}

static void
test_msr_sample (void)
{
  g_autofree char *path = shared_path ("snia-msr-cambridge", "msr-cambridge1-sample.csv");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(TraceSummary) s = NULL;
  g_autoptr(GError) error = NULL;
  TraceLifecycleStats stats;
  const TraceIo *io;
  TraceRecord *x;

  SKIP_WITHOUT (path);
  recs = load (path, NULL, &r);
  g_assert_cmpstr (trace_reader_format (r), ==, "msr-csv");
  g_assert_cmpstr (trace_reader_meta (r, "host.0"), ==, "hm");
  g_assert_cmpuint (recs->len, ==, 2000);
  assert_time_ordered (recs);
  check_pairs (recs);

  /* row 1 "128166385295514663,hm,0,Write,9056014336,2048,2833":
   * (FILETIME - 116444736000000000) * 100 ns = 2007-02-22 17:22:09 UTC */
  x = REC (recs, 0);
  g_assert_cmpint (x->action, ==, TRACE_ACT_ISSUE);
  g_assert_cmpint (x->time_ns, ==, G_GINT64_CONSTANT (1172164929551466300));
  g_assert_cmpuint (x->dev_major, ==, 0);
  g_assert_cmpuint (x->dev_minor, ==, 0);
  g_assert_cmpstr (x->comm, ==, "hm");
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_WRITE);
  g_assert_cmpuint (x->sector, ==, 17687528);
  g_assert_cmpuint (x->nr_sectors, ==, 4);
  g_assert_cmpuint (x->line, ==, 1);
  /* then row 2's issue, 21.5 us later, before row 1 completes */
  g_assert_cmpuint (REC (recs, 1)->line, ==, 2);
  g_assert_cmpint (REC (recs, 1)->time_ns, ==, G_GINT64_CONSTANT (1172164929551487800));
  /* the last record: row 1000 "128166386567849604,hm,0,Read,11946549248,4096,3499" completes */
  x = REC (recs, 1999);
  g_assert_cmpint (x->action, ==, TRACE_ACT_COMPLETE);
  g_assert_cmpuint (x->line, ==, 1000);
  g_assert_cmpint (x->time_ns, ==, G_GINT64_CONSTANT (1172165056785310300));
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_READ);
  g_assert_cmpuint (x->sector, ==, 23333104);

  /* D -> C latency = ResponseTime: row 1, 2833 ticks = 283.3 us; 117
   * rows overlap an I/O in flight at the same offset, the row tag keeps
   * them apart */
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 1000);
  g_assert_cmpuint (stats.unpaired, ==, 0);
  g_assert_cmpuint (stats.incomplete_at_end, ==, 0);
  g_assert_cmpuint (stats.completed_without_issue, ==, 0);
  io = find_io (ios, 17687528, G_GINT64_CONSTANT (1172164929551466300));
  g_assert_nonnull (io);
  g_assert_cmpint (io->complete_ns - io->issue_ns, ==, 283300);

  /* sort -n of the ResponseTime column: 500th value 2121, max 284125,
   * mean 9894.98 ticks */
  s = trace_summarize (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->d2c.count, ==, 1000);
  g_assert_cmpint (s->d2c.p50_ns, ==, 212100);
  g_assert_cmpint (s->d2c.max_ns, ==, 28412500);
  g_assert_cmpfloat_with_epsilon (s->d2c.mean_ns, 989498.0, 1.0);
}

typedef struct {
  const char *file;
  gint64      first_ns;       /* the earliest arrival */
  guint64     first_line;
  gint64      last_ns;        /* the latest completion */
  guint64     last_line;
  double      mean_ns;        /* of the Response column */
  gint64      max_ns;
} SystorCase;

static void
test_systor_samples (void)
{
  /* from the files with exact decimal arithmetic (Python Decimal) */
  static const SystorCase cases[] = {
    { "systor17-traces-sample.csv.gz", G_GINT64_CONSTANT (1456095145126285000), 3,
      G_GINT64_CONSTANT (1456095147574297000), 1000, 3861932.933, 73935000 },
    { "systor17-additional-sample.csv.gz", G_GINT64_CONSTANT (1455591804310701000), 2,
      G_GINT64_CONSTANT (1455591805641672000), 1000, 5336972.973, 106492000 },
  };

  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *path = shared_path ("snia-systor17", cases[k].file);
      g_autoptr(TraceReader) r = NULL;
      g_autoptr(GArray) recs = NULL;
      g_autoptr(GArray) ios = NULL;
      g_autoptr(TraceSummary) s = NULL;
      g_autoptr(GError) error = NULL;

      SKIP_WITHOUT (path);
      recs = load (path, NULL, &r);
      g_assert_cmpstr (trace_reader_format (r), ==, "systor17-csv");
      g_assert_cmpuint (recs->len, ==, 1998);
      g_assert_cmpuint (trace_reader_skipped (r), ==, 1);   /* the header */
      assert_time_ordered (recs);
      check_pairs (recs);
      g_assert_cmpint (REC (recs, 0)->time_ns, ==, cases[k].first_ns);
      g_assert_cmpuint (REC (recs, 0)->line, ==, cases[k].first_line);
      g_assert_cmpint (REC (recs, 1997)->time_ns, ==, cases[k].last_ns);
      g_assert_cmpuint (REC (recs, 1997)->line, ==, cases[k].last_line);
      g_assert_cmpint (REC (recs, 1997)->action, ==, TRACE_ACT_COMPLETE);

      s = trace_summarize (path, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->d2c.count, ==, 999);
      g_assert_cmpint (s->d2c.max_ns, ==, cases[k].max_ns);
      g_assert_cmpfloat_with_epsilon (s->d2c.mean_ns, cases[k].mean_ns, 1.0);
      g_assert_cmpuint (s->lifecycle.incomplete_at_end, ==, 0);

      if (k == 0)
        {
          /* row 2 "1456095145.133076000,0.000806000,R,0,899056122368,131072" */
          const TraceIo *io;
          ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
          g_assert_no_error (error);
          io = find_io (ios, 1755968989, G_GINT64_CONSTANT (1456095145133076000));
          g_assert_nonnull (io);
          g_assert_cmpuint (io->nr_sectors, ==, 256);
          g_assert_cmpint (io->op, ==, TRACE_OP_READ);
          g_assert_cmpint (io->complete_ns - io->issue_ns, ==, 806000);
        }
    }
}

static void
test_timed_small (void)
{
  g_autofree char *msr = data_path ("valid-msr-cambridge.csv");
  g_autofree char *systor = data_path ("valid-systor17.csv");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = load (msr, NULL, &r);
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GError) error = NULL;
  TraceLifecycleStats stats;
  guint n_host1 = 0;

  check_pairs (recs);
  g_assert_cmpstr (trace_reader_meta (r, "host.1"), ==, "prxy");
  for (guint i = 0; i < recs->len; i++)
    if (REC (recs, i)->dev_major == 1)
      {
        g_assert_cmpstr (REC (recs, i)->comm, ==, "prxy");
        n_host1++;
      }
  g_assert_cmpuint (n_host1, ==, 4);
  /* the zero response: D then C at one time */
  for (guint i = 0; i + 1 < recs->len; i++)
    if (REC (recs, i)->line == 4)
      {
        g_assert_cmpint (REC (recs, i)->action, ==, TRACE_ACT_ISSUE);
        g_assert_cmpint (REC (recs, i + 1)->action, ==, TRACE_ACT_COMPLETE);
        g_assert_cmpuint (REC (recs, i + 1)->line, ==, 4);
        g_assert_cmpint (REC (recs, i + 1)->time_ns, ==, REC (recs, i)->time_ns);
        break;
      }
  /* the read issued while the write to its sector is in flight completes
   * first, and each keeps its own latency */
  ios = trace_load_ios (msr, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 6);
  g_assert_cmpuint (stats.unpaired, ==, 0);
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      if (io->sector == 17687528)
        g_assert_cmpint (io->complete_ns - io->issue_ns, ==, io->op == TRACE_OP_READ ? 10000 : 283300);
    }
  g_clear_pointer (&ios, g_array_unref);

  /* SYSTOR: a row without a Response gives its D only, counted at the end */
  ios = trace_load_ios (systor, G_MAXUINT32, G_MAXUINT32, NULL, &stats, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ios->len, ==, 4);
  g_assert_cmpuint (stats.by_action[TRACE_ACT_ISSUE], ==, 5);
  g_assert_cmpuint (stats.by_action[TRACE_ACT_COMPLETE], ==, 4);
  g_assert_cmpuint (stats.incomplete_at_end, ==, 1);
}

/* ---- arrival-only traces ------------------------------------------------ */

static void
test_disksim_samples (void)
{
  g_autofree char *tpcc = shared_path ("disksim-ascii-mqsim", "tpcc-small.trace");
  g_autofree char *wsrch = shared_path ("disksim-ascii-mqsim", "wsrch-small.trace");
  g_autofree char *ms = data_path ("valid-disksim-ms.trace");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = NULL;
  TraceRecord *x;

  recs = load (ms, NULL, &r);
  g_assert_cmpstr (trace_reader_meta (r, "time_unit"), ==, "ms");
  g_assert_cmpint (REC (recs, 1)->time_ns, ==, 1250000);
  g_assert_cmpint (REC (recs, 2)->time_ns, ==, 1250001);
  g_assert_cmpuint (REC (recs, 2)->rwbs, ==, TRACE_RWBS_READ);   /* flags 5 */
  g_assert_cmpint (REC (recs, 3)->time_ns, ==, 37000000);
  g_clear_pointer (&recs, g_array_unref);
  g_clear_pointer (&r, trace_reader_free);

  SKIP_WITHOUT (tpcc);
  SKIP_WITHOUT (wsrch);
  recs = load (tpcc, NULL, &r);
  g_assert_cmpstr (trace_reader_format (r), ==, "disksim-ascii");
  g_assert_cmpstr (trace_reader_meta (r, "time_unit"), ==, "ns");
  /* wc -l 6999; awk '{print $5}' | uniq -c: 2618 writes (0), 4381 reads (1) */
  g_assert_cmpuint (recs->len, ==, 6999);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_READ), ==, 4381);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_WRITE), ==, 2618);
  /* "938513000 4 264719034 16 0" */
  x = REC (recs, 0);
  g_assert_cmpint (x->action, ==, TRACE_ACT_QUEUE);
  g_assert_cmpint (x->time_ns, ==, 938513000);
  g_assert_cmpuint (x->dev_minor, ==, 4);
  g_assert_cmpuint (x->sector, ==, 264719034);
  g_assert_cmpuint (x->nr_sectors, ==, 16);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_WRITE);
  /* "1075002000 7 160057354 16 0" */
  x = REC (recs, 6998);
  g_assert_cmpint (x->time_ns, ==, 1075002000);
  g_assert_cmpuint (x->dev_minor, ==, 7);
  g_assert_cmpuint (x->sector, ==, 160057354);
  g_clear_pointer (&recs, g_array_unref);
  g_clear_pointer (&r, trace_reader_free);

  /* 24783 rows, the last without a newline: "60066625000 1 34371424 64 1" */
  recs = load (wsrch, NULL, NULL);
  g_assert_cmpuint (recs->len, ==, 24783);
  g_assert_cmpuint (count_rwbs (recs, TRACE_RWBS_WRITE), ==, 4);
  x = REC (recs, 24782);
  g_assert_cmpint (x->time_ns, ==, G_GINT64_CONSTANT (60066625000));
  g_assert_cmpuint (x->dev_minor, ==, 1);
  g_assert_cmpuint (x->sector, ==, 34371424);
  g_assert_cmpuint (x->nr_sectors, ==, 64);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_READ);
}

static void
test_umass_spc (void)
{
  /* no UMass trace is stored: tests/data/valid-umass-spc.spc follows the
   * format description (§3) */
  g_autofree char *path = data_path ("valid-umass-spc.spc");
  g_autoptr(GArray) recs = load (path, NULL, NULL);
  TraceRecord *x;

  g_assert_cmpuint (recs->len, ==, 5);
  /* "0,303567,3584,w,0.000000" */
  x = REC (recs, 0);
  g_assert_cmpint (x->action, ==, TRACE_ACT_QUEUE);
  g_assert_cmpint (x->time_ns, ==, 0);
  g_assert_cmpuint (x->dev_minor, ==, 0);
  g_assert_cmpuint (x->sector, ==, 303567);
  g_assert_cmpuint (x->nr_sectors, ==, 7);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_WRITE);
  /* "1 , 1235, 512 , R , 0.000251" */
  x = REC (recs, 2);
  g_assert_cmpuint (x->dev_minor, ==, 1);
  g_assert_cmpuint (x->sector, ==, 1235);
  g_assert_cmpuint (x->nr_sectors, ==, 1);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_READ);
  g_assert_cmpint (x->time_ns, ==, 251000);
  /* " 2,0,4096,W,0.012345,extra,fields" */
  x = REC (recs, 3);
  g_assert_cmpuint (x->dev_minor, ==, 2);
  g_assert_cmpint (x->time_ns, ==, 12345000);
  /* "0,303567,1000,r,1.5": 1000 bytes over two sectors, kept exact */
  x = REC (recs, 4);
  g_assert_cmpuint (x->nr_sectors, ==, 2);
  g_assert_cmpuint (trace_record_length_bytes (x), ==, 1000);
  g_assert_cmpint (x->time_ns, ==, G_GINT64_CONSTANT (1500000000));
}

static void
test_sniff_each (void)
{
  static const struct { const char *text; const char *format; } cases[] = {
    { "fio version 3 iolog\n1 f add\n", "fio-iolog" },
    { "fio version 2 iolog\nf add\n", "fio-iolog" },
    { "128166385295514663,hm,0,Write,9056014336,2048,2833\n", "msr-csv" },
    { "Timestamp,Response,IOType,LUN,Offset,Size\n", "systor17-csv" },
    { "1455591804.310701000,0.006475000,R,0,203468398592,32768\n", "systor17-csv" },
    { "0,303567,3584,w,0.000000\n", "umass-spc" },
    { "938513000 4 264719034 16 0\n", "disksim-ascii" },
    { "0.000000 0 3563616 8 1\n", "disksim-ascii" },
    { "time_ns,dev_major,dev_minor,cpu\n", "iosim-csv" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_build_filename (g_get_tmp_dir (), "iosim-sniff.txt", NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceReader) r = NULL;

      g_assert_true (g_file_set_contents (path, cases[i].text, -1, NULL));
      r = trace_reader_open (path, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (trace_reader_format (r), ==, cases[i].format);
    }
}

/* ---- the reorder heap ----------------------------------------------------- */

/* xorshift64*: a fixed, seeded sequence (never g_random_*) */
static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

typedef struct {
  gint64 time_ns;
  gboolean released;
} PushedEntry;

static void
test_reorder_property (void)
{
  for (guint64 seed = 1; seed <= 300; seed++)
    {
      guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 7;
      gint64 window = (gint64) (next_rand (&s) % 3) * 5000;     /* 0, 5 us, 10 us */
      guint rows = 50 + (guint) (next_rand (&s) % 1500);
      g_autoptr(GArray) pushed = g_array_new (FALSE, FALSE, sizeof (PushedEntry));
      g_autoptr(GArray) out = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
      g_autoptr(GHashTable) open_rows = g_hash_table_new (NULL, NULL);
      TraceReorder ro;
      TraceRecord rec;
      gint64 t = 100000;
      gint64 watermark = -1;

      trace_reorder_init (&ro, window, 1u << 16);
      for (guint row = 1; row <= rows; row++)
        {
          g_autoptr(GError) error = NULL;
          TraceRecord d = { 0 };
          TraceRecord c;
          gint64 arrival;
          PushedEntry e = { 0, FALSE };

          /* arrivals rise with gaps 0..2 us (ties included), each moved
           * back by less than the window */
          t += (gint64) (next_rand (&s) % 2001);
          arrival = t - (window > 0 ? (gint64) (next_rand (&s) % (guint64) window) : 0);
          arrival = MAX (arrival, ro.released_ns);
          d.time_ns = arrival;
          d.action = TRACE_ACT_ISSUE;
          d.line = d.io_tag = row;
          c = d;
          c.action = TRACE_ACT_COMPLETE;
          /* response 0..100 us, a quarter of them 0 */
          c.time_ns += (next_rand (&s) % 4 == 0) ? 0 : (gint64) (next_rand (&s) % 100001);
          g_assert_true (trace_reorder_push (&ro, &d, TRUE, &error));
          g_assert_no_error (error);
          g_assert_true (trace_reorder_push (&ro, &c, FALSE, &error));
          e.time_ns = d.time_ns;
          g_array_append_val (pushed, e);
          e.time_ns = c.time_ns;
          g_array_append_val (pushed, e);
          watermark = MAX (watermark, arrival);
          while (trace_reorder_pop (&ro, FALSE, &rec))
            g_array_append_val (out, rec);
          /* held = exactly what is not yet a window behind the input */
          {
            guint later = 0;
            for (guint i = 0; i < pushed->len; i++)
              later += g_array_index (pushed, PushedEntry, i).time_ns > watermark - window;
            g_assert_cmpuint (trace_reorder_held (&ro), ==, later);
          }
        }
      while (trace_reorder_pop (&ro, TRUE, &rec))
        g_array_append_val (out, rec);
      g_assert_cmpuint (trace_reorder_held (&ro), ==, 0);
      g_assert_cmpuint (out->len, ==, 2 * rows);
      for (guint i = 0; i < out->len; i++)
        {
          const TraceRecord *x = REC (out, i);
          if (i > 0)
            g_assert_cmpint (REC (out, i - 1)->time_ns, <=, x->time_ns);
          if (x->action == TRACE_ACT_ISSUE)
            g_assert_true (g_hash_table_add (open_rows, GSIZE_TO_POINTER ((gsize) x->io_tag)));
          else
            g_assert_true (g_hash_table_remove (open_rows, GSIZE_TO_POINTER ((gsize) x->io_tag)));
        }
      g_assert_cmpuint (g_hash_table_size (open_rows), ==, 0);
      trace_reorder_clear (&ro);
    }
}

static void
test_reorder_limits (void)
{
  TraceReorder ro;
  TraceRecord rec = { 0 };
  g_autoptr(GError) error = NULL;

  /* a trace whose arrivals stand still cannot release anything */
  trace_reorder_init (&ro, 1000, 8);
  rec.time_ns = 5000;
  for (guint i = 0; i < 8; i++)
    g_assert_true (trace_reorder_push (&ro, &rec, TRUE, &error));
  g_assert_false (trace_reorder_pop (&ro, FALSE, &rec));
  g_assert_false (trace_reorder_push (&ro, &rec, TRUE, &error));
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "more than 8 records"));
  g_assert_cmpuint (ro.peak, ==, 8);
  trace_reorder_clear (&ro);
  g_clear_error (&error);

  /* an arrival before what was released */
  trace_reorder_init (&ro, 1000, 64);
  rec.time_ns = 10000;
  g_assert_true (trace_reorder_push (&ro, &rec, TRUE, &error));
  rec.time_ns = 20000;
  g_assert_true (trace_reorder_push (&ro, &rec, TRUE, &error));
  g_assert_true (trace_reorder_pop (&ro, FALSE, &rec));
  g_assert_cmpint (rec.time_ns, ==, 10000);
  g_assert_false (trace_reorder_pop (&ro, FALSE, &rec));     /* 20000 is within the window */
  rec.time_ns = 9999;
  g_assert_false (trace_reorder_push (&ro, &rec, TRUE, &error));
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "sort the file"));
  trace_reorder_clear (&ro);
}

/* ---- CSV writer --------------------------------------------------------- */

static void
test_csv_writer (void)
{
  g_autoptr(GString) out = g_string_new (NULL);
  TraceRecord rec = { 0 };

  trace_csv_header (out);
  g_assert_cmpstr (out->str, ==, "time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,nr_sectors,"
                   "offset_bytes,length_bytes,error,io_tag,comm\n");
  g_string_truncate (out, 0);

  rec.time_ns = 1103562134000;
  rec.dev_major = 7;
  rec.cpu = 1;
  rec.pid = 11764;
  rec.action = TRACE_ACT_QUEUE;
  rec.rwbs = TRACE_RWBS_READ | TRACE_RWBS_SYNC;
  rec.nr_sectors = 8;
  g_strlcpy (rec.comm, "dd", sizeof rec.comm);
  trace_format_csv (&rec, out);
  g_assert_cmpstr (out->str, ==, "1103562134000,7,0,1,11764,Q,RS,0,8,0,4096,0,0,dd\n");
  g_string_truncate (out, 0);

  rec.action = TRACE_ACT_COMPLETE;
  rec.cpu = -1;
  rec.error = -5;
  rec.io_tag = 3;
  g_assert_true (trace_record_set_bytes (&rec, 1000, 3000));
  g_strlcpy (rec.comm, "a, \"b\"", sizeof rec.comm);
  trace_format_csv (&rec, out);
  g_assert_cmpstr (out->str, ==, "1103562134000,7,0,-1,11764,C,RS,1,7,1000,3000,-5,3,\"a, \"\"b\"\"\"\n");
}

static void
assert_csv_same (const TraceRecord *a, const TraceRecord *b)
{
  g_assert_cmpint (a->time_ns, ==, b->time_ns);
  g_assert_cmpuint (a->dev_major, ==, b->dev_major);
  g_assert_cmpuint (a->dev_minor, ==, b->dev_minor);
  g_assert_cmpint (a->cpu, ==, b->cpu);
  g_assert_cmpuint (a->pid, ==, b->pid);
  g_assert_cmpint (a->action, ==, b->action);
  g_assert_cmpuint (a->rwbs, ==, b->rwbs);
  g_assert_cmpuint (a->sector, ==, b->sector);
  g_assert_cmpuint (a->nr_sectors, ==, b->nr_sectors);
  g_assert_cmpuint (trace_record_offset_bytes (a), ==, trace_record_offset_bytes (b));
  g_assert_cmpuint (trace_record_length_bytes (a), ==, trace_record_length_bytes (b));
  g_assert_cmpint (a->error, ==, b->error);
  g_assert_cmpuint (a->io_tag, ==, b->io_tag);
  g_assert_cmpstr (a->comm, ==, b->comm);
}

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Every valid test file, written as CSV and read back. */
static void
test_csv_roundtrip (void)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "data", NULL);
  g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "iosim-roundtrip.csv", NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  guint64 total = 0;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "valid-"))
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (files, compare_paths);
  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr(GArray) recs = load (files->pdata[i], NULL, NULL);
      g_autoptr(GArray) back = NULL;
      g_autoptr(GString) text = g_string_new (NULL);
      g_autoptr(TraceReader) r = NULL;

      trace_csv_header (text);
      for (guint k = 0; k < recs->len; k++)
        trace_format_csv (REC (recs, k), text);
      g_assert_true (g_file_set_contents (tmp, text->str, (gssize) text->len, NULL));
      back = load (tmp, NULL, &r);
      g_assert_cmpstr (trace_reader_format (r), ==, "iosim-csv");
      g_assert_cmpuint (back->len, ==, recs->len);
      for (guint k = 0; k < recs->len; k++)
        assert_csv_same (REC (recs, k), REC (back, k));
      total += recs->len;
    }
  g_assert_cmpuint (total, >, 300);
}

/* ---- fio iolog v3 writer ------------------------------------------------ */

static GArray *
parse_log (const char *text)
{
  g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "iosim-written.iolog", NULL);

  g_assert_true (g_file_set_contents (tmp, text, -1, NULL));
  return load (tmp, "fio-iolog", NULL);
}

/* The Q records of the loop capture: 1700 I/Os on 7,2. */
static GArray *
loop_queue_records (void)
{
  g_autofree char *path = shared_path ("generated-block-loop-kernel6.18", "ftrace-block-loop2.txt.gz");
  g_autoptr(GArray) all = NULL;
  GArray *q = g_array_new (FALSE, FALSE, sizeof (TraceRecord));

  if (path == NULL)
    return q;
  all = load (path, NULL, NULL);
  for (guint i = 0; i < all->len; i++)
    if (REC (all, i)->action == TRACE_ACT_QUEUE)
      g_array_append_val (q, *REC (all, i));
  return q;
}

static char *
write_log (GArray *recs, TraceAction action, const char *single, const TraceReader *names,
           TraceIologWriterStats *stats)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceIologWriter) w = trace_iolog_writer_new (action, single, &error);
  GString *out = g_string_new (NULL);

  g_assert_no_error (error);
  if (names != NULL)
    trace_iolog_writer_names_from_reader (w, names);
  for (guint i = 0; i < recs->len; i++)
    trace_iolog_writer_add (w, REC (recs, i), out);
  trace_iolog_writer_finish (w, out);
  if (stats != NULL)
    *stats = *trace_iolog_writer_stats (w);
  return g_string_free (out, FALSE);
}

static void
test_iolog_writer_loop (void)
{
  g_autoptr(GArray) q = loop_queue_records ();
  g_autoptr(GArray) back = NULL;
  g_autofree char *text = NULL;
  TraceIologWriterStats st;

  if (q->len == 0)
    {
      g_test_skip ("shared test data (IOSIM_SHARED_TESTDATA) not available");
      return;
    }
  text = write_log (q, TRACE_ACT_QUEUE, NULL, NULL, &st);
  g_assert_true (g_str_has_prefix (text, "fio version 3 iolog\n1 /dev/block/7:2 add\n1 /dev/block/7:2 open\n"));
  g_assert_true (g_str_has_suffix (text, " /dev/block/7:2 close\n"));
  g_assert_cmpuint (st.ios, ==, 1700);
  g_assert_cmpuint (st.reads, ==, 800);
  g_assert_cmpuint (st.writes, ==, 900);
  g_assert_cmpuint (st.read_bytes, ==, 800 * 4096);
  g_assert_cmpuint (st.write_bytes, ==, 800 * 4096 + 100 * 65536);
  g_assert_cmpuint (st.clamped, ==, 0);
  g_assert_cmpuint (st.files, ==, 1);

  back = parse_log (text);
  g_assert_cmpuint (back->len, ==, q->len);
  for (guint i = 0; i < q->len; i++)
    {
      const TraceRecord *a = REC (q, i);
      const TraceRecord *b = REC (back, i);
      g_assert_cmpint (trace_op_from_rwbs (a->rwbs), ==, trace_op_from_rwbs (b->rwbs));
      g_assert_cmpuint (a->sector, ==, b->sector);
      g_assert_cmpuint (a->nr_sectors, ==, b->nr_sectors);
      /* microseconds from the first I/O, from 1 */
      g_assert_cmpint (b->time_ns / 1000, ==, 1 + (a->time_ns - REC (q, 0)->time_ns) / 1000);
    }
}

/* iolog -> records -> iolog keeps every I/O exactly, unaligned bytes too. */
static void
test_iolog_writer_roundtrip (void)
{
  g_autofree char *path = data_path ("valid-iolog-v3-files.iolog");
  g_autoptr(TraceReader) r = NULL;
  g_autoptr(GArray) recs = load (path, NULL, &r);
  g_autoptr(GArray) back = NULL;
  g_autofree char *text = write_log (recs, TRACE_ACT_QUEUE, NULL, r, NULL);

  g_assert_cmpstr (text, ==,
                   "fio version 3 iolog\n"
                   "1 /data/a add\n"
                   "1 /data/a open\n"
                   "1 /data/a read 61440 4096\n"
                   "389 /data/b add\n"
                   "389 /data/b open\n"
                   "389 /data/b write 774144 4096\n"
                   "528 /data/a trim 880640 8192\n"
                   "630 /data/b datasync 774144 0\n"
                   "659 /data/a write 513 1\n"
                   "659 /data/a close\n"
                   "659 /data/b close\n");
  /* streaming: the writer names each file as the reader meets its add */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TraceReader) sr = trace_reader_open (path, NULL, &error);
    g_autoptr(TraceIologWriter) w = trace_iolog_writer_new (TRACE_ACT_QUEUE, NULL, &error);
    g_autoptr(GString) streamed = g_string_new (NULL);
    TraceRecord rec;
    g_assert_no_error (error);
    trace_iolog_writer_names_from_reader (w, sr);
    while (trace_reader_next (sr, &rec, &error))
      trace_iolog_writer_add (w, &rec, streamed);
    g_assert_no_error (error);
    trace_iolog_writer_finish (w, streamed);
    g_assert_cmpstr (streamed->str, ==, text);
  }
  back = parse_log (text);
  g_assert_cmpuint (back->len, ==, recs->len);
  for (guint i = 0; i < recs->len; i++)
    {
      g_assert_cmpuint (REC (back, i)->rwbs, ==, REC (recs, i)->rwbs);
      g_assert_cmpuint (REC (back, i)->dev_minor, ==, REC (recs, i)->dev_minor);
      g_assert_cmpuint (trace_record_offset_bytes (REC (back, i)), ==, trace_record_offset_bytes (REC (recs, i)));
      g_assert_cmpuint (trace_record_length_bytes (REC (back, i)), ==, trace_record_length_bytes (REC (recs, i)));
    }
}

static void
test_iolog_writer_edges (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceIologWriter) w = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  TraceRecord rec = { 0 };
  const TraceIologWriterStats *st;

  g_assert_null (trace_iolog_writer_new (TRACE_ACT_QUEUE, "/tmp/a b", &error));
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FAILED);
  g_clear_error (&error);

  w = trace_iolog_writer_new (TRACE_ACT_ISSUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (trace_iolog_writer_set_file (w, 8, 0, "has\ttab", &error));
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_true (trace_iolog_writer_set_file (w, 8, 0, "/dev/sda", &error));

  /* a 5 GiB discard: fio reads 32-bit lengths, so two lines */
  rec.action = TRACE_ACT_ISSUE;
  rec.dev_major = 8;
  rec.time_ns = 5000000;
  rec.rwbs = TRACE_RWBS_DISCARD;
  rec.sector = 2048;
  rec.nr_sectors = 10485760;
  trace_iolog_writer_add (w, &rec, out);
  /* an earlier record stays at the previous time */
  rec.time_ns = 4000000;
  rec.rwbs = TRACE_RWBS_WRITE;
  rec.nr_sectors = 8;
  trace_iolog_writer_add (w, &rec, out);
  /* a flush completion at sector -1, another action, no direction */
  rec.time_ns = 5000000;
  rec.rwbs = TRACE_RWBS_FLUSH;
  rec.sector = G_MAXUINT64;
  rec.nr_sectors = 0;
  trace_iolog_writer_add (w, &rec, out);
  rec.action = TRACE_ACT_COMPLETE;
  trace_iolog_writer_add (w, &rec, out);
  rec.action = TRACE_ACT_ISSUE;
  rec.rwbs = TRACE_RWBS_NONE;
  trace_iolog_writer_add (w, &rec, out);
  trace_iolog_writer_finish (w, out);
  g_assert_cmpstr (out->str, ==,
                   "fio version 3 iolog\n"
                   "1 /dev/sda add\n"
                   "1 /dev/sda open\n"
                   "1 /dev/sda trim 1048576 4294966784\n"
                   "1 /dev/sda trim 4296015360 1073742336\n"
                   "1 /dev/sda write 1048576 4096\n"
                   "1 /dev/sda sync 0 0\n"
                   "1 /dev/sda close\n");
  st = trace_iolog_writer_stats (w);
  g_assert_cmpuint (st->trims, ==, 2);
  g_assert_cmpuint (st->trim_bytes, ==, G_GUINT64_CONSTANT (5368709120));
  g_assert_cmpuint (st->split, ==, 1);
  g_assert_cmpuint (st->clamped, ==, 1);
  g_assert_cmpuint (st->syncs, ==, 1);
  g_assert_cmpuint (st->not_io, ==, 1);
  g_assert_cmpuint (st->ios, ==, 4);
}

/* ---- fio itself ------------------------------------------------------------ */

typedef struct {
  guint64 offset;
  guint64 length;
  int     ddir;      /* fio: 0 read, 1 write, 2 trim, 3 sync, 4 datasync */
} FioIo;

static gboolean
run_fio (const char *const *argv, char **out)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_test_message ("fio failed: %s", err);
      return FALSE;
    }
  return TRUE;
}

/* fio --debug=io prints "queue: io_u 0x...: off=0x0,len=0x1000,ddir=0,file=..."
 * for every I/O it issues. */
static GArray *
fio_issued (const char *log)
{
  g_autofree char *arg = g_strdup_printf ("--read_iolog=%s", log);
  const char *argv[] = { "fio", "--name=replay", arg, "--ioengine=null", "--replay_no_stall=1",
                         "--debug=io", NULL };
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  GArray *ios = g_array_new (FALSE, FALSE, sizeof (FioIo));

  g_assert_true (run_fio (argv, &out));
  lines = g_strsplit (out, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      const char *q = strstr (*l, "queue: io_u ");
      FioIo io;
      unsigned long long off, len;
      if (q == NULL || (q = strstr (q, ": off=")) == NULL)
        continue;
      g_assert_cmpint (sscanf (q, ": off=%llx,len=%llx,ddir=%d", &off, &len, &io.ddir), ==, 3);
      io.offset = off;
      io.length = len;
      g_array_append_val (ios, io);
    }
  return ios;
}

static JsonObject *
fio_job (JsonParser *parser, const char *log)
{
  g_autofree char *arg = g_strdup_printf ("--read_iolog=%s", log);
  const char *argv[] = { "fio", "--name=replay", arg, "--ioengine=null", "--replay_no_stall=1",
                         "--output-format=json", NULL };
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  const char *json;
  JsonObject *root;

  g_assert_true (run_fio (argv, &out));
  json = strchr (out, '{');
  g_assert_nonnull (json);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  return json_array_get_object_element (json_object_get_array_member (root, "jobs"), 0);
}

static guint64
fio_count (JsonObject *job, const char *ddir, const char *member)
{
  return (guint64) json_object_get_int_member (json_object_get_object_member (job, ddir), member);
}

static int
fio_ddir (guint32 rwbs)
{
  if (rwbs & TRACE_RWBS_DISCARD)
    return 2;
  if (rwbs & TRACE_RWBS_WRITE)
    return 1;
  if (rwbs & TRACE_RWBS_READ)
    return 0;
  return (rwbs & TRACE_RWBS_SYNC) ? 4 : 3;
}

/* Replay @text with fio (ioengine=null) and check that it issues exactly
 * the I/Os the log holds, as our reader reads them. */
static void
check_with_fio (const char *text, const TraceIologWriterStats *st)
{
  g_autofree char *log = g_build_filename (g_get_tmp_dir (), "iosim-fio-replay.iolog", NULL);
  g_autoptr(GArray) ours = NULL;
  g_autoptr(GArray) issued = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *job;

  g_assert_true (g_file_set_contents (log, text, -1, NULL));
  ours = load (log, "fio-iolog", NULL);
  job = fio_job (parser, log);
  g_assert_cmpint (json_object_get_int_member (job, "error"), ==, 0);
  g_assert_cmpuint (fio_count (job, "read", "total_ios"), ==, st->reads);
  g_assert_cmpuint (fio_count (job, "read", "io_bytes"), ==, st->read_bytes);
  g_assert_cmpuint (fio_count (job, "write", "total_ios"), ==, st->writes);
  g_assert_cmpuint (fio_count (job, "write", "io_bytes"), ==, st->write_bytes);
  /* fio's "sync" total_ios counts the fsyncs (ddir 3) only; datasyncs
   * show in the issue sequence below */
  {
    guint64 fsyncs = 0;
    for (guint i = 0; i < ours->len; i++)
      fsyncs += fio_ddir (REC (ours, i)->rwbs) == 3;
    g_assert_cmpuint (fio_count (job, "sync", "total_ios"), ==, fsyncs);
  }

  issued = fio_issued (log);
  g_assert_cmpuint (issued->len, ==, ours->len);
  for (guint i = 0; i < ours->len; i++)
    {
      const FioIo *f = &g_array_index (issued, FioIo, i);
      const TraceRecord *x = REC (ours, i);
      g_assert_cmpint (f->ddir, ==, fio_ddir (x->rwbs));
      g_assert_cmpuint (f->length, ==, trace_record_length_bytes (x));
      if (f->ddir <= 2)
        g_assert_cmpuint (f->offset, ==, trace_record_offset_bytes (x));
    }
  g_test_message ("fio issued %u I/Os: %" G_GUINT64_FORMAT " reads, %" G_GUINT64_FORMAT
                  " writes, %" G_GUINT64_FORMAT " syncs", issued->len, st->reads, st->writes, st->syncs);
}

static void
test_fio_replay (void)
{
  g_autofree char *fio = g_find_program_in_path ("fio");
  g_autofree char *randrw = shared_path ("fio-iolog/generated", "fio333-randrw.v3.iolog");
  g_autofree char *unaligned = data_path ("valid-iolog-v2.iolog");
  g_autofree char *target = g_build_filename (g_get_tmp_dir (), "iosim-fio-target", NULL);
  g_autoptr(GArray) q = NULL;

  if (fio == NULL)
    {
      g_test_skip ("fio is not installed (apt-get install fio)");
      return;
    }

  /* the unaligned v2 log, trims left out: fio 3.33 cannot replay them
   * ("bad ddir: 2"; trim replay needs fio >= 3.34) */
  {
    g_autoptr(GArray) recs = load (unaligned, NULL, NULL);
    g_autoptr(GArray) kept = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
    g_autofree char *text = NULL;
    TraceIologWriterStats st;
    for (guint i = 0; i < recs->len; i++)
      if (!(REC (recs, i)->rwbs & TRACE_RWBS_DISCARD))
        g_array_append_val (kept, *REC (recs, i));
    text = write_log (kept, TRACE_ACT_QUEUE, target, NULL, &st);
    g_assert_cmpuint (st.ios, ==, 5);
    check_with_fio (text, &st);
  }

  q = loop_queue_records ();
  if (q->len == 0 || randrw == NULL)
    {
      g_test_skip ("shared test data (IOSIM_SHARED_TESTDATA) not available");
      return;
    }
  /* 1700 I/Os of the loop capture, to one file */
  {
    g_autofree char *text = NULL;
    TraceIologWriterStats st;
    text = write_log (q, TRACE_ACT_QUEUE, target, NULL, &st);
    check_with_fio (text, &st);
  }
  /* fio's own log, two files and syncs, read and written again */
  {
    g_autoptr(TraceReader) r = NULL;
    g_autoptr(GArray) recs = load (randrw, NULL, &r);
    g_autofree char *text = NULL;
    TraceIologWriterStats st;
    text = write_log (recs, TRACE_ACT_QUEUE, NULL, r, &st);
    g_assert_cmpuint (st.files, ==, 2);
    g_assert_cmpuint (st.syncs, ==, 7);
    check_with_fio (text, &st);
  }
}

/* ---- flipped bytes in the real samples ---------------------------------- */

/* Issue 12: no record a reader hands out has an extent whose end byte,
 * (sector + nr_sectors) * 512, wraps 64 bits (the flush completion at
 * sector (u64) -1 with no data carries none). */
static void
assert_extent_fits (const TraceRecord *rec)
{
  const guint64 end_max = G_MAXUINT64 / 512;

  if (rec->action == TRACE_ACT_MESSAGE || (rec->sector == G_MAXUINT64 && rec->nr_sectors == 0))
    return;
  g_assert_cmpuint (rec->sector, <=, end_max - rec->nr_sectors);
}

static void
test_sample_mutations (void)
{
  static const char *const samples[][2] = {
    { "fio-iolog", "t0038.iolog" },
    { "fio-iolog/generated", "fio333-randrw.v3.iolog" },
    { "snia-msr-cambridge", "msr-cambridge1-sample.csv" },
    { "disksim-ascii-mqsim", "tpcc-small.trace" },
  };
  static const char *const formats[] = { NULL, "fio-iolog", "msr-csv", "systor17-csv", "umass-spc",
                                         "disksim-ascii", "iosim-csv" };
  g_autofree char *tmp = g_build_filename (g_get_tmp_dir (), "iosim-mutant.txt", NULL);
  guint errors = 0, runs = 0;

  for (gsize k = 0; k < G_N_ELEMENTS (samples); k++)
    {
      g_autofree char *path = shared_path (samples[k][0], samples[k][1]);
      g_autofree char *contents = NULL;
      gsize len;

      SKIP_WITHOUT (path);
      g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
      len = MIN (len, 4096);
      for (guint64 seed = 1; seed <= (g_test_thorough () ? 1000u : 60u); seed++)
        {
          guint64 s = seed * 7919 + k;
          g_autofree char *m = g_memdup2 (contents, len);
          for (guint e = 0; e < 1 + next_rand (&s) % 6; e++)
            m[next_rand (&s) % len] ^= (char) (1u << (next_rand (&s) % 8));
          g_assert_true (g_file_set_contents (tmp, m, (gssize) len, NULL));
          for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
            {
              g_autoptr(GError) error = NULL;
              g_autoptr(TraceReader) r = trace_reader_open (tmp, formats[f], &error);
              g_autoptr(GString) sink = g_string_new (NULL);
              TraceRecord rec;
              runs++;
              if (r == NULL)
                {
                  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT);
                  continue;
                }
              while (trace_reader_next (r, &rec, &error))
                {
                  assert_extent_fits (&rec);
                  trace_format_csv (&rec, sink);
                }
              if (error != NULL)
                {
                  g_autofree char *where = g_strdup_printf ("%s:", tmp);
                  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
                  g_assert_true (g_str_has_prefix (error->message, where));
                  errors++;
                }
            }
        }
    }
  g_test_message ("%u runs, %u located errors", runs, errors);
  g_assert_cmpuint (errors, >, runs / 10);
}

int
main (int argc, char **argv)
{
  char *tmpdir = test_tmpdir_enter ();
  int status;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/trace/iolog/t0038", test_iolog_t0038);
  g_test_add_func ("/trace/iolog/randrw", test_iolog_randrw);
  g_test_add_func ("/trace/iolog/v2", test_iolog_v2);
  g_test_add_func ("/trace/iolog/files", test_iolog_files);
  g_test_add_func ("/trace/iolog/vs-ftrace", test_iolog_vs_ftrace);
  g_test_add_func ("/trace/msr/sample", test_msr_sample);
  g_test_add_func ("/trace/systor17/samples", test_systor_samples);
  g_test_add_func ("/trace/timed/small", test_timed_small);
  g_test_add_func ("/trace/disksim/samples", test_disksim_samples);
  g_test_add_func ("/trace/umass-spc/fields", test_umass_spc);
  g_test_add_func ("/trace/sniff/ioformats", test_sniff_each);
  g_test_add_func ("/trace/reorder/property", test_reorder_property);
  g_test_add_func ("/trace/reorder/limits", test_reorder_limits);
  g_test_add_func ("/trace/csv/writer", test_csv_writer);
  g_test_add_func ("/trace/csv/roundtrip", test_csv_roundtrip);
  g_test_add_func ("/trace/iolog-writer/loop", test_iolog_writer_loop);
  g_test_add_func ("/trace/iolog-writer/roundtrip", test_iolog_writer_roundtrip);
  g_test_add_func ("/trace/iolog-writer/edges", test_iolog_writer_edges);
  g_test_add_func ("/trace/iolog-writer/fio", test_fio_replay);
  g_test_add_func ("/trace/mutation/samples", test_sample_mutations);
  status = g_test_run ();
  test_tmpdir_leave (tmpdir);
  return status;
}
