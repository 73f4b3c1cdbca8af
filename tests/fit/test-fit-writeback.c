/* test-fit-writeback.c — models/fit's steps and writeback on synthetic and
 * real traces: a stream paced by its own completions is many steps, a
 * split submission one; flusher comms of every era; writeback (a kworker
 * stream, an fsync) fitted as a buffered writer next to a trace-driven
 * reader, the host it needs, the scenario loaded and run; what stays
 * trace-driven (O_DIRECT writes, sync(2) writeback, no host given).
 * Synthetic traces are written as blkparse text with traces/' formatter,
 * so that the scenario's reader can load its trace back. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "models/fit/fit.h"
#include "models/scenario.h"
#include "traces/trace.h"

#define MIB (1024 * 1024)

static TraceIo
make_io (guint32 pid, const char *comm, TraceOp op, guint32 rwbs, guint64 sector,
         guint32 nr_sectors, gint64 queue_ns, gint64 complete_ns)
{
  TraceIo io = { 0 };

  io.dev_major = 7;
  io.pid = pid;
  g_strlcpy (io.comm, comm, sizeof io.comm);
  io.op = op;
  io.rwbs = rwbs;
  io.sector = sector;
  io.nr_sectors = nr_sectors;
  io.queue_ns = queue_ns;
  io.issue_ns = queue_ns;
  io.complete_ns = complete_ns;
  return io;
}

static int
cmp_io_queue (gconstpointer a, gconstpointer b)
{
  const TraceIo *x = a, *y = b;

  if (x->queue_ns != y->queue_ns)
    return x->queue_ns < y->queue_ns ? -1 : 1;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* ---- Steps ---------------------------------------------------------------- */

/* A flusher keeping 4 contiguous 4 KiB writes in flight on a device that
 * serves one per 100 us: after the first four (one submission), each bio
 * is queued 1 us after one of its own completed, so each is a step of its
 * own that others were in flight for; then a flush once all completed.
 * Before the rule, the whole stream was one step and the flush a dependent
 * second: "closed".  Now: n - 3 steps after the first, one dependent. */
static void
test_paced_stream_is_steps (void)
{
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(GPtrArray) procs = NULL;
  const guint n = 200, depth = 4;
  gint64 complete[200];
  const FitProcess *p;

  for (guint i = 0; i < n; i++)
    {
      gint64 q = i < depth ? (gint64) i * 1000 : complete[i - depth] + 1000;
      gint64 start = i == 0 ? q : MAX (q, complete[i - 1]);
      TraceIo io;

      complete[i] = start + 100000;
      io = make_io (30, "kworker/u8:1", TRACE_OP_WRITE, TRACE_RWBS_WRITE, 2048 + i * 8ull, 8,
                    q, complete[i]);
      g_array_append_val (ios, io);
    }
  {
    TraceIo flush = make_io (30, "kworker/u8:1", TRACE_OP_WRITE,
                             TRACE_RWBS_WRITE | TRACE_RWBS_FLUSH, 0, 0,
                             complete[n - 1] + 5000, complete[n - 1] + 6000);
    g_array_append_val (ios, flush);
  }
  procs = fit_processes ((const TraceIo *) ios->data, ios->len);
  p = g_ptr_array_index (procs, 0);
  g_assert_cmpuint (p->ios, ==, n + 1);
  /* Steps: the first four together, then n - 4 single bios, then the flush. */
  g_assert_cmpuint (p->pairs, ==, n - depth + 1);
  /* Only the flush waited for everything before it. */
  g_assert_cmpuint (p->dependent_pairs, ==, 1);
  g_assert_false (p->closed_loop);
}

/* dd splitting each read into 4 contiguous bios while another process's
 * I/O completes between them: those completions are not dd's, so each
 * read stays one step and dd stays closed-loop. */
static void
test_split_submission_among_others (void)
{
  g_autoptr(GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr(GPtrArray) procs = NULL;
  const FitProcess *dd;
  gint64 t = 10000;

  for (int step = 0; step < 10; step++)
    {
      gint64 last = 0;

      for (int k = 0; k < 4; k++)
        {
          TraceIo io = make_io (5, "dd", TRACE_OP_READ, TRACE_RWBS_READ,
                                (guint64) (step * 4 + k) * 256, 256, t + k * 2000,
                                t + 200000 + k * 50000);
          TraceIo other = make_io (6, "fio", TRACE_OP_READ, TRACE_RWBS_READ, 900000 + step * 8 + k,
                                   1, t + k * 2000 - 1500, t + k * 2000 + 500);

          last = io.complete_ns;
          g_array_append_val (ios, io);
          g_array_append_val (ios, other);
        }
      t = last + 30000;
    }
  g_array_sort (ios, cmp_io_queue);
  procs = fit_processes ((const TraceIo *) ios->data, ios->len);
  dd = g_ptr_array_index (procs, 0);
  g_assert_cmpuint (dd->pid, ==, 5);
  g_assert_cmpuint (dd->pairs, ==, 9);
  g_assert_cmpuint (dd->dependent_pairs, ==, 9);
  g_assert_true (dd->closed_loop);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/fit/steps/paced-stream", test_paced_stream_is_steps);
  g_test_add_func ("/fit/steps/split-among-others", test_split_submission_among_others);
  return g_test_run ();
}
