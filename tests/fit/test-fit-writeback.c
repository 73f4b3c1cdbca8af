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
#include "traces/trace-lifecycle.h"

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

/* ---- Flusher comms --------------------------------------------------------- */

typedef struct {
  const char *comm;
  gboolean    flusher;
} CommCase;

static const CommCase comm_cases[] = {
  { "kworker/u8:1", TRUE },      /* bdi_wq worker, 3.10+ (this machine's traces) */
  { "kworker/u256:1", TRUE },
  { "kworker/3:2", TRUE },       /* a bound worker may run wb_workfn too */
  { "kworker/1:1H", FALSE },     /* kblockd: dispatches and sequences flushes */
  { "kworker/u17:0H", FALSE },
  { "flush-8:0", TRUE },         /* per-bdi flusher, 2.6.32-3.9 */
  { "flush-btrfs-1", TRUE },
  { "pdflush", TRUE },           /* 2.6.0-2.6.31 */
  { "bdflush", TRUE },           /* 2.4 */
  { "kupdated", TRUE },          /* 2.4 */
  { "kworker", FALSE },
  { "fio", FALSE },
  { "jbd2/sda1-8", FALSE },
  { "", FALSE },
};

static void
test_flusher_comm (gconstpointer data)
{
  const CommCase *c = data;

  g_assert_cmpint (fit_comm_is_flusher (c->comm), ==, c->flusher);
}

/* ---- The host ---------------------------------------------------------------- */

typedef struct {
  const char *name;
  FitHost     host;
  const char *error;            /* in the message, or NULL: accepted */
} HostCase;

#define MEM FIT_HOST_MEMORY
static const HostCase host_cases[] = {
  { "nothing", { 0 }, NULL },
  { "memory", { .given = MEM, .memory_bytes = 1ull << 30 }, NULL },
  { "memory-tiny", { .given = MEM, .memory_bytes = 4096 }, "at least 1 MiB" },
  { "ratio-no-memory", { .given = FIT_HOST_DIRTY_RATIO, .dirty_ratio_pct = 20 }, "need --host-memory" },
  { "ratio-101", { .given = MEM | FIT_HOST_DIRTY_RATIO, .memory_bytes = 1ull << 30,
                   .dirty_ratio_pct = 101 }, "percentages" },
  { "bg-ratio-101", { .given = MEM | FIT_HOST_DIRTY_BACKGROUND_RATIO, .memory_bytes = 1ull << 30,
                      .dirty_background_ratio_pct = 101 }, "percentages" },
  /* As /proc shows them: a ratio, and its twin at 0. */
  { "ratio-and-zero-bytes", { .given = MEM | FIT_HOST_DIRTY_RATIO | FIT_HOST_DIRTY_BYTES,
                              .memory_bytes = 1ull << 30, .dirty_ratio_pct = 20 }, NULL },
  { "ratio-and-bytes", { .given = MEM | FIT_HOST_DIRTY_RATIO | FIT_HOST_DIRTY_BYTES,
                         .memory_bytes = 1ull << 30, .dirty_ratio_pct = 20,
                         .dirty_bytes = 1 << 26 }, "not both" },
  { "bg-ratio-and-bytes",
    { .given = MEM | FIT_HOST_DIRTY_BACKGROUND_RATIO | FIT_HOST_DIRTY_BACKGROUND_BYTES,
      .memory_bytes = 1ull << 30, .dirty_background_ratio_pct = 5,
      .dirty_background_bytes = 1 << 26 }, "not both" },
  { "bytes-one-page", { .given = MEM | FIT_HOST_DIRTY_BYTES, .memory_bytes = 1ull << 30,
                        .dirty_bytes = 4096 }, "two pages" },
  { "bytes-two-pages", { .given = MEM | FIT_HOST_DIRTY_BYTES, .memory_bytes = 1ull << 30,
                         .dirty_bytes = 8192 }, NULL },
};
#undef MEM

static void
test_host_check (gconstpointer data)
{
  const HostCase *c = data;
  g_autoptr(GError) error = NULL;
  gboolean ok = fit_host_check (&c->host, &error);

  if (c->error == NULL)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      return;
    }
  g_assert_false (ok);
  g_assert_error (error, FIT_ERROR, FIT_ERROR_OPTIONS);
  g_assert_nonnull (strstr (error->message, c->error));
}

/* ---- A synthetic trace ------------------------------------------------------- */

#define DEV_MAJOR 8
#define DEV_MINOR 16
#define SYNTH_T0_NS 1000000000ll      /* the reader's first bio */
#define SYNTH_WB_NS (SYNTH_T0_NS + 5000000)
#define SYNTH_FSYNC_NS (SYNTH_T0_NS + 20000000)
#define SYNTH_KWORKER_BYTES (16 * MIB)
#define SYNTH_FSYNC_BYTES (8 * MIB)

/* This run's own temporary folder (main), so that parallel runs of the
 * suite never share a file; removed at the end. */
static char *scratch_dir;

static char *
scratch_path (const char *name)
{
  g_assert_nonnull (scratch_dir);
  return g_build_filename (scratch_dir, name, NULL);
}

static void
remove_scratch (void)
{
  g_autoptr(GDir) d = g_dir_open (scratch_dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (scratch_dir, name, NULL);

      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (scratch_dir), ==, 0);
  g_clear_pointer (&scratch_dir, g_free);
}

static void
add_rec (GArray *recs, gint64 t, guint32 pid, const char *comm, TraceAction action,
         guint32 rwbs, guint64 sector, guint32 nr_sectors)
{
  TraceRecord r = { 0 };

  r.time_ns = t;
  r.dev_major = DEV_MAJOR;
  r.dev_minor = DEV_MINOR;
  r.pid = pid;
  r.action = action;
  r.rwbs = rwbs;
  r.sector = sector;
  r.nr_sectors = nr_sectors;
  g_strlcpy (r.comm, comm, sizeof r.comm);
  g_array_append_val (recs, r);
}

/* One request of @n_bios contiguous bios of @bio_sectors each, queued
 * @gap_ns apart from @q_ns (the first allocates the request, the others
 * merge into it), dispatched 1 us after the last and served in @service_ns.
 * Returns its completion time. */
static gint64
add_request (GArray *recs, guint32 pid, const char *comm, guint32 rwbs, guint64 sector,
             guint n_bios, guint32 bio_sectors, gint64 q_ns, gint64 gap_ns, gint64 service_ns)
{
  gint64 last_q = q_ns, d;

  for (guint i = 0; i < n_bios; i++)
    {
      last_q = q_ns + i * gap_ns;
      add_rec (recs, last_q, pid, comm, TRACE_ACT_QUEUE, rwbs, sector + i * bio_sectors,
               bio_sectors);
      add_rec (recs, last_q, pid, comm, i == 0 ? TRACE_ACT_GETRQ : TRACE_ACT_BACKMERGE, rwbs,
               sector + i * bio_sectors, bio_sectors);
    }
  d = last_q + 1000;
  add_rec (recs, d - 500, pid, comm, TRACE_ACT_INSERT, rwbs, sector, n_bios * bio_sectors);
  add_rec (recs, d, pid, comm, TRACE_ACT_ISSUE, rwbs, sector, n_bios * bio_sectors);
  add_rec (recs, d + service_ns, 0, "", TRACE_ACT_COMPLETE, rwbs, sector, n_bios * bio_sectors);
  return d + service_ns;
}

/* The empty preflush bio of an fsync (blkdev_issue_flush): Q and G by the
 * process, the flush request dispatched by kblockd. */
static gint64
add_flush (GArray *recs, guint32 pid, const char *comm, gint64 q_ns)
{
  const guint32 fws = TRACE_RWBS_FLUSH | TRACE_RWBS_WRITE | TRACE_RWBS_SYNC;
  const guint32 fn = TRACE_RWBS_FLUSH | TRACE_RWBS_NONE;

  add_rec (recs, q_ns, pid, comm, TRACE_ACT_QUEUE, fws, 0, 0);
  add_rec (recs, q_ns + 4000, pid, comm, TRACE_ACT_GETRQ, fws, 0, 0);
  add_rec (recs, q_ns + 9000, 44, "kworker/1:1H", TRACE_ACT_ISSUE, fn, 0, 0);
  add_rec (recs, q_ns + 59000, 0, "", TRACE_ACT_COMPLETE, fn, 0, 0);
  return q_ns + 59000;
}

/* Writeback of @bytes from @sector in requests of 512 KiB built from 4 KiB
 * bios 2 us apart, a request every 300 us, each served in 400 us; returns
 * the last completion. */
static gint64
add_writeback (GArray *recs, guint32 pid, const char *comm, guint32 rwbs, guint64 sector,
               guint64 bytes, gint64 start_ns)
{
  gint64 last_c = 0;

  for (guint64 k = 0; k < bytes / (512 * 1024); k++)
    {
      gint64 c = add_request (recs, pid, comm, rwbs, sector + k * 1024, 128, 8,
                              start_ns + (gint64) k * 300000, 2000, 400000);

      last_c = MAX (last_c, c);
    }
  return last_c;
}

static int
cmp_rec_time (gconstpointer a, gconstpointer b)
{
  const TraceRecord *x = a, *y = b;

  if (x->time_ns != y->time_ns)
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
  return (x->line > y->line) - (x->line < y->line);
}

/* blkparse text of @recs (sorted by time, ties in the order added) into
 * @path. */
static void
write_blkparse (GArray *recs, const char *path)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) sorted = g_array_copy (recs);

  /* g_array_sort is not stable; the index breaks ties. */
  for (guint i = 0; i < sorted->len; i++)
    g_array_index (sorted, TraceRecord, i).line = i;
  g_array_sort (sorted, cmp_rec_time);
  for (guint i = 1; i < sorted->len; i++)
    g_assert_true (g_array_index (sorted, TraceRecord, i - 1).time_ns
                   <= g_array_index (sorted, TraceRecord, i).time_ns);
  for (guint i = 0; i < sorted->len; i++)
    {
      TraceRecord *r = &g_array_index (sorted, TraceRecord, i);

      trace_format_blkparse (r, i + 1, text);
    }
  g_assert_true (g_file_set_contents (path, text->str, (gssize) text->len, &error));
  g_assert_no_error (error);
}

/* The issue's case: an O_DIRECT reader (dd, pid 300) of 100 x 128 KiB,
 * closed loop; from 5 ms the flusher (kworker/u8:2, pid 100) writes back
 * 16 MiB from sector 0 (W, 4 KiB bios merged into 512 KiB requests, paced
 * by the device); from 20 ms fio (pid 200) fsyncs 8 MiB that continue
 * them (WS), then flushes. */
static void
make_synthetic (GArray *recs, gboolean with_fsync)
{
  gint64 t = SYNTH_T0_NS, last_c;

  for (guint i = 0; i < 100; i++)
    t = add_request (recs, 300, "dd", TRACE_RWBS_READ | TRACE_RWBS_SYNC,
                     1048576 + i * 256ull, 1, 256, t, 0, 200000) + 20000;
  add_writeback (recs, 100, "kworker/u8:2", TRACE_RWBS_WRITE, 0, SYNTH_KWORKER_BYTES, SYNTH_WB_NS);
  if (!with_fsync)
    return;
  last_c = add_writeback (recs, 200, "fio", TRACE_RWBS_WRITE | TRACE_RWBS_SYNC,
                          SYNTH_KWORKER_BYTES / 512, SYNTH_FSYNC_BYTES, SYNTH_FSYNC_NS);
  add_flush (recs, 200, "fio", last_c + 10000);
}

static char *
synthetic_trace (const char *name, gboolean with_fsync)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  char *path = scratch_path (name);

  make_synthetic (recs, with_fsync);
  write_blkparse (recs, path);
  return path;
}

static FitOptions
options_with_memory (guint64 memory_bytes)
{
  FitOptions o = { 0 };

  o.host.given = FIT_HOST_MEMORY;
  o.host.memory_bytes = memory_bytes;
  return o;
}

static const FitProcess *
process_by_pid (const FitResult *r, guint32 pid)
{
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);

      if (p->pid == pid)
        return p;
    }
  g_assert_not_reached ();
}

#define CHECK_KEY(kf, group, key, expected)                                 \
  G_STMT_START {                                                            \
    g_autoptr(GError) e_ = NULL;                                            \
    g_autofree char *v_ = g_key_file_get_string (kf, group, key, &e_);      \
    g_assert_no_error (e_);                                                 \
    g_assert_cmpstr (v_, ==, expected);                                     \
  } G_STMT_END

/* Simulate @ini once: it must complete; returns the bytes written and the
 * largest write request (sectors) of the simulated block trace. */
static void
run_scenario (const char *ini, const char *name, guint64 *write_bytes, guint32 *max_write_rq)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(Scenario) s = scenario_load_file (ini, NULL, &error);
  g_autofree char *trace = scratch_path (name);
  g_autoptr(SimRunResult) result = NULL;
  g_autoptr(GArray) ios = NULL;
  g_autoptr(GArray) requests = NULL;
  ScenarioOutputs outputs = { 0 };

  g_assert_no_error (error);
  g_assert_nonnull (s);
  outputs.trace_out = fopen (trace, "w");
  g_assert_nonnull (outputs.trace_out);
  result = scenario_run (s, 0, &outputs, &error);
  g_assert_cmpint (fclose (outputs.trace_out), ==, 0);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  ios = trace_load_ios (trace, G_MAXUINT32, G_MAXUINT32, &requests, NULL, &error);
  g_assert_no_error (error);
  *write_bytes = 0;
  *max_write_rq = 0;
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);

      if (io->op == TRACE_OP_WRITE)
        *write_bytes += io->nr_sectors * 512ull;
    }
  for (guint i = 0; i < requests->len; i++)
    {
      const TraceRequest *rq = &g_array_index (requests, TraceRequest, i);

      if (rq->op == TRACE_OP_WRITE)
        *max_write_rq = MAX (*max_write_rq, rq->nr_sectors);
    }
}

/* The writer of the synthetic trace: fio's fsync continues the flusher's
 * pages, so one writer named after fio carries both, 24 MiB from 0, from
 * the first writeback bio (5 ms after the trace's first I/O). */
static void
assert_synthetic_writer (const FitResult *r)
{
  const FitWriter *w;

  g_assert_cmpuint (r->writeback_bios, ==, (SYNTH_KWORKER_BYTES + SYNTH_FSYNC_BYTES) / 4096);
  g_assert_null (r->writeback_note);
  g_assert_cmpuint (r->writers->len, ==, 1);
  w = g_ptr_array_index (r->writers, 0);
  g_assert_cmpstr (w->name, ==, "fio-200");
  g_assert_cmpuint (w->pid, ==, 200);
  g_assert_cmpuint (w->flusher_bios, ==, SYNTH_KWORKER_BYTES / 4096);
  g_assert_cmpuint (w->flusher_bytes, ==, SYNTH_KWORKER_BYTES);
  g_assert_cmpuint (w->fsync_bios, ==, SYNTH_FSYNC_BYTES / 4096);
  g_assert_cmpuint (w->fsync_bytes, ==, SYNTH_FSYNC_BYTES);
  g_assert_cmpuint (w->fsyncs, ==, 1);
  g_assert_true (w->ends_with_fsync);
  g_assert_cmpuint (w->fsync_every, ==, 0);
  g_assert_cmpuint (w->offset_bytes, ==, 0);
  g_assert_cmpuint (w->region_bytes, ==, SYNTH_KWORKER_BYTES + SYNTH_FSYNC_BYTES);
  g_assert_cmpuint (w->size_bytes, ==, SYNTH_KWORKER_BYTES + SYNTH_FSYNC_BYTES);
  g_assert_true (w->sequential);
  g_assert_cmpint (w->start_ns, ==, SYNTH_WB_NS - SYNTH_T0_NS);
  g_assert_false (w->expiry_start);
  g_assert_cmpstr (w->flusher_comms, ==, "kworker/u8:2");
  /* 48 requests of 512 KiB merged from bios of 4 KiB; reads of 128 KiB. */
  g_assert_cmpuint (r->request_cap_sectors, ==, 1024);
  g_assert_cmpuint (r->request_cap_count, ==, 48);
  /* The bios of a request are 2 us apart, one page each: 2 us a page.
   * Gaps: 127 inside each of the 48 requests, and 31 + 15 between the
   * flusher's 32 and fio's 16 consecutive requests: 46 us for one page
   * (the device's pace, 23 times the median), under the 1 ms that counts
   * as back to back but left out of the figure as a sleep. */
  g_assert_cmpfloat_with_epsilon (r->writeback_page_cost_ns, 2000.0, 1e-6);
  g_assert_cmpuint (r->writeback_bio_max_bytes, ==, 4096);
  g_assert_cmpuint (r->writeback_page_cost_gaps, ==, 48 * 127 + 31 + 15);
}

static void
test_synthetic_writer (void)
{
  g_autofree char *trace = synthetic_trace ("synthetic-writeback.blkparse", TRUE);
  g_autofree char *ini = scratch_path ("synthetic-writeback.ini");
  FitOptions opts = options_with_memory (4ull << 30);
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = NULL;
  g_auto(GStrv) groups = NULL;
  guint64 write_bytes;
  guint32 max_write_rq;

  r = fit_trace (trace, &opts, &error);
  g_assert_no_error (error);
  assert_synthetic_writer (r);
  g_assert_cmpint (process_by_pid (r, 100)->writeback, ==, FIT_WRITEBACK_FLUSHER);
  g_assert_cmpint (process_by_pid (r, 200)->writeback, ==, FIT_WRITEBACK_FSYNC);
  g_assert_cmpint (process_by_pid (r, 300)->writeback, ==, FIT_WRITEBACK_NONE);
  g_assert_false (process_by_pid (r, 300)->in_writer);

  g_assert_true (fit_write_scenario (r, ini, &error));
  g_assert_no_error (error);
  g_assert_true (g_key_file_load_from_file (kf, ini, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  groups = g_key_file_get_groups (kf, NULL);
  g_assert_cmpuint (g_strv_length (groups), ==, 6);
  g_assert_cmpstr (groups[0], ==, "sim");
  g_assert_cmpstr (groups[1], ==, "host");
  g_assert_cmpstr (groups[2], ==, "writeback");
  g_assert_cmpstr (groups[3], ==, "device dev8_16");
  g_assert_cmpstr (groups[4], ==, "process fio-200");
  g_assert_cmpstr (groups[5], ==, "process dd-300");
  CHECK_KEY (kf, "host", "memory", "4294967296");
  CHECK_KEY (kf, "host", "writeback", "io-less-3.2");
  CHECK_KEY (kf, "writeback", "dirty_ratio", "20");
  CHECK_KEY (kf, "writeback", "dirty_background_ratio", "10");
  CHECK_KEY (kf, "writeback", "dirty_expire_centisecs", "3000");
  CHECK_KEY (kf, "device dev8_16", "max_sectors_kb", "512");
  CHECK_KEY (kf, "process fio-200", "op", "write");
  CHECK_KEY (kf, "process fio-200", "io", "buffered");
  CHECK_KEY (kf, "process fio-200", "pattern", "sequential");
  CHECK_KEY (kf, "process fio-200", "bs", "4KiB");
  CHECK_KEY (kf, "process fio-200", "offset", "0");
  CHECK_KEY (kf, "process fio-200", "size", "25165824");
  CHECK_KEY (kf, "process fio-200", "region", "25165824");
  CHECK_KEY (kf, "process fio-200", "start", "5000000ns");
  CHECK_KEY (kf, "process fio-200", "end_fsync", "true");
  CHECK_KEY (kf, "process dd-300", "pattern", "trace");
  CHECK_KEY (kf, "process dd-300", "trace_pid", "300");
  text = fit_scenario_to_data (r);
  g_assert_nonnull (strstr (text, "# process kworker/u8:2-100 (pid 100): 4096 bios of flusher "
                                  "writeback, written by the buffered writer [process fio-200]\n"));
  g_assert_nonnull (strstr (text, "assumed, the kernel's defaults since 2.6.30: dirty_ratio 20"));
  g_assert_nonnull (strstr (text, "who dirtied the pages is not in a block trace"));

  /* The scenario runs; the simulated page cache writes exactly those
   * bytes back, in requests no larger than the kernel's. */
  run_scenario (ini, "synthetic-writeback.sim.blk", &write_bytes, &max_write_rq);
  g_assert_cmpuint (write_bytes, ==, SYNTH_KWORKER_BYTES + SYNTH_FSYNC_BYTES);
  g_assert_cmpuint (max_write_rq, <=, 1024);
  g_assert_cmpuint (max_write_rq, >, 0);
}

/* The same numbers in the JSON; the kworker is not in the scenario. */
static void
test_synthetic_json (void)
{
  g_autofree char *trace = synthetic_trace ("synthetic-writeback-json.blkparse", TRUE);
  FitOptions opts = options_with_memory (4ull << 30);
  g_autoptr(FitResult) r = fit_trace (trace, &opts, NULL);
  g_autofree char *json = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root, *wb, *writer, *kworker;

  g_assert_nonnull (r);
  json = fit_result_to_json (r);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  wb = json_object_get_object_member (root, "writeback");
  g_assert_cmpint (json_object_get_int_member (wb, "bios"), ==, 6144);
  g_assert_cmpint (json_object_get_int_member (wb, "request_cap_kib"), ==, 512);
  g_assert_cmpstr (json_object_get_string_member (wb, "era"), ==, "io-less-3.2");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (wb, "host"),
                                               "memory_bytes"), ==, 4ll << 30);
  writer = json_array_get_object_element (json_object_get_array_member (wb, "writers"), 0);
  g_assert_cmpint (json_object_get_int_member (writer, "size_bytes"), ==, 24 * MIB);
  g_assert_true (json_object_get_boolean_member (writer, "end_fsync"));
  kworker = json_array_get_object_element (json_object_get_array_member (root, "processes"), 0);
  g_assert_cmpstr (json_object_get_string_member (kworker, "writeback"), ==, "flusher");
  g_assert_false (json_object_get_boolean_member (kworker, "in_scenario"));
  g_assert_true (json_object_get_boolean_member (kworker, "in_buffered_writer"));
}

/* Without the host's memory nothing changes but a note: the kworker and
 * fio stay trace-driven. */
static void
test_no_host_stays_traced (void)
{
  g_autofree char *trace = synthetic_trace ("synthetic-writeback-nohost.blkparse", TRUE);
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  r = fit_trace (trace, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->writers->len, ==, 0);
  g_assert_cmpuint (r->writeback_bios, ==, 6144);
  g_assert_nonnull (r->writeback_note);
  g_assert_false (process_by_pid (r, 100)->in_writer);
  text = fit_scenario_to_data (r);
  g_assert_null (strstr (text, "[host]"));
  g_assert_nonnull (strstr (text, "[process kworker/u8:2-100]\n"));
  g_assert_nonnull (strstr (text, "[process fio-200]\n"));
  g_assert_nonnull (strstr (text, "# 6144 bios of page-cache writeback kept trace-driven"));
}

/* Flusher writes alone, under the background threshold and with no fsync:
 * they expired, so the device's writer starts dirty_expire earlier (at 0
 * at the earliest); with a background threshold below them, at the first
 * writeback bio. */
static void
test_expiry_start (void)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  g_autofree char *trace = scratch_path ("expiry.blkparse");
  FitOptions opts = options_with_memory (4ull << 30);
  g_autoptr(FitResult) r = NULL, low = NULL;
  const FitWriter *w;

  add_request (recs, 300, "dd", TRACE_RWBS_READ, 1048576, 1, 8, SYNTH_T0_NS, 0, 100000);
  add_writeback (recs, 100, "kworker/u8:2", TRACE_RWBS_WRITE, 0, MIB, SYNTH_T0_NS + 40000000000ll);
  write_blkparse (recs, trace);
  r = fit_trace (trace, &opts, NULL);
  g_assert_nonnull (r);
  g_assert_cmpuint (r->writers->len, ==, 1);
  w = g_ptr_array_index (r->writers, 0);
  g_assert_cmpstr (w->name, ==, "writeback");
  g_assert_cmpuint (w->pid, ==, 0);
  g_assert_true (w->expiry_start);
  g_assert_false (w->ends_with_fsync);
  g_assert_cmpint (w->start_ns, ==, 40000000000ll - 30000000000ll);
  /* The background threshold of 4 GiB at 10 %, in bytes of whole pages. */
  g_assert_cmpuint (w->background_thresh_bytes, >, 400ull * MIB);

  opts.host.given |= FIT_HOST_DIRTY_BACKGROUND_BYTES;
  opts.host.dirty_background_bytes = 512 * 1024;
  low = fit_trace (trace, &opts, NULL);
  g_assert_nonnull (low);
  w = g_ptr_array_index (low->writers, 0);
  g_assert_false (w->expiry_start);
  g_assert_cmpint (w->start_ns, ==, 40000000000ll);
}

/* What is not writeback stays trace-driven: O_DIRECT writes at iodepth 1
 * (each queued after the previous completed) followed by fdatasync's
 * flush; a flusher's sync writes (sync(2)'s WB_SYNC_ALL); sync writes with
 * no flush of their own.  A single sync write ended by its flush is an
 * fsync (of one page). */
static void
test_not_writeback (void)
{
  g_autoptr(GArray) recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  g_autofree char *trace = scratch_path ("not-writeback.blkparse");
  FitOptions opts = options_with_memory (1ull << 30);
  g_autoptr(FitResult) r = NULL;
  gint64 t = SYNTH_T0_NS;

  for (guint i = 0; i < 20; i++)
    t = add_request (recs, 400, "fio", TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 4096 + i * 8ull, 1, 8,
                     t, 0, 50000) + 10000;
  t = add_flush (recs, 400, "fio", t) + 10000;
  t = add_request (recs, 100, "kworker/u8:1", TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 8192, 16, 8, t,
                   2000, 100000) + 10000;
  t = add_request (recs, 600, "dd", TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 16384, 16, 8, t, 2000,
                   100000) + 10000;
  for (guint i = 0; i < 2; i++)
    {
      t = add_request (recs, 500, "db", TRACE_RWBS_WRITE | TRACE_RWBS_SYNC, 32768 + i * 8ull, 1, 8,
                       t, 0, 50000) + 10000;
      t = add_flush (recs, 500, "db", t) + 10000;
    }
  write_blkparse (recs, trace);
  r = fit_trace (trace, &opts, NULL);
  g_assert_nonnull (r);
  g_assert_cmpint (process_by_pid (r, 400)->writeback, ==, FIT_WRITEBACK_NONE);
  g_assert_cmpint (process_by_pid (r, 100)->writeback, ==, FIT_WRITEBACK_NONE);
  g_assert_cmpint (process_by_pid (r, 600)->writeback, ==, FIT_WRITEBACK_NONE);
  g_assert_cmpint (process_by_pid (r, 500)->writeback, ==, FIT_WRITEBACK_FSYNC);
  g_assert_cmpuint (process_by_pid (r, 500)->fsyncs, ==, 2);
  g_assert_cmpuint (r->writers->len, ==, 1);
  g_assert_cmpuint (((FitWriter *) g_ptr_array_index (r->writers, 0))->fsync_every, ==, 1);
}

/* ---- Real traces -------------------------------------------------------------- */

/* Linux 6.18 on a loop device (tests/data, see its header): kworker/u8:1
 * wrote back dd's expired megabyte, another dd fsync'd 256 KiB at 16 MiB;
 * the two do not continue each other, so each is a writer: the flusher's
 * starts the expiry interval before its bios; the readers stay traced.
 * The scenario runs and writes back those 1.25 MiB. */
static void
test_real_kworker (void)
{
  g_autofree char *trace = g_test_build_filename (G_TEST_DIST, "data",
                                                  "valid-blk-loop-kworker-writeback-6.18.ftrace",
                                                  NULL);
  g_autofree char *ini = scratch_path ("real-kworker.ini");
  FitOptions opts = options_with_memory (24ull << 30);
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  const FitWriter *dd, *wb;
  guint64 write_bytes;
  guint32 max_write_rq;

  r = fit_trace (trace, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->writeback_bios, ==, 256 + 64);
  g_assert_cmpuint (r->writers->len, ==, 2);
  dd = g_ptr_array_index (r->writers, 0);
  wb = g_ptr_array_index (r->writers, 1);
  g_assert_cmpstr (dd->name, ==, "dd-32221");
  g_assert_cmpuint (dd->fsync_bios, ==, 64);
  g_assert_cmpuint (dd->flusher_bios, ==, 0);
  g_assert_cmpuint (dd->offset_bytes, ==, 16 * MIB);
  g_assert_cmpuint (dd->size_bytes, ==, 256 * 1024);
  g_assert_true (dd->sequential && dd->ends_with_fsync);
  g_assert_cmpstr (wb->name, ==, "writeback");
  g_assert_cmpuint (wb->flusher_bios, ==, 256);
  g_assert_cmpstr (wb->flusher_comms, ==, "kworker/u8:1");
  g_assert_cmpuint (wb->offset_bytes, ==, 0);
  g_assert_cmpuint (wb->size_bytes, ==, MIB);
  g_assert_true (wb->sequential && wb->expiry_start);
  /* kworker's first bio 30.677409 s after the first read, less 30 s. */
  g_assert_cmpint (wb->start_ns, ==, 677409000);
  g_assert_cmpint (process_by_pid (r, 6117)->writeback, ==, FIT_WRITEBACK_FLUSHER);
  g_assert_false (process_by_pid (r, 31502)->in_writer);
  g_assert_false (process_by_pid (r, 32222)->in_writer);
  g_assert_cmpuint (r->request_cap_sectors, ==, 1024);

  g_assert_true (fit_write_scenario (r, ini, &error));
  g_assert_no_error (error);
  g_assert_true (g_key_file_load_from_file (kf, ini, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  CHECK_KEY (kf, "device dev7_1", "loop_max_sectors_kb", "512");
  CHECK_KEY (kf, "process writeback", "start", "677409000ns");
  CHECK_KEY (kf, "process dd-32221", "end_fsync", "true");
  run_scenario (ini, "real-kworker.sim.blk", &write_bytes, &max_write_rq);
  g_assert_cmpuint (write_bytes, ==, MIB + 256 * 1024);
  g_assert_cmpuint (max_write_rq, <=, 1024);
}

typedef struct {
  const char *name;
  const char *file;        /* under tests/data, or under $IOSIM_SHARED_TESTDATA with shared */
  gboolean    shared;
  gboolean    has_device;
  guint32     major, minor;
} NoWritebackCase;

/* Real traces whose writes are not page-cache writeback by the rule, or
 * that the rule cannot tell: the kworker of valid-events-mqdeadline writes
 * with the sync flag on the host disk (sync(2)); dd's writes in
 * valid-blk-loop-mqdeadline were written back at its close (WS) and the
 * flush is sync's, not dd's (a limit of the rule: no own flush); the
 * shared 6.18 capture is fio with O_DIRECT libaio writes (WS) and no
 * flush. */
static const NoWritebackCase no_writeback_cases[] = {
  { "events-sync2-kworker", "valid-events-mqdeadline-6.18.ftrace", FALSE, TRUE, 254, 0 },
  { "close-writeback-dd", "valid-blk-loop-mqdeadline-6.18.ftrace", FALSE, FALSE, 0, 0 },
  { "shared-fio-odirect", "generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz", TRUE,
    FALSE, 0, 0 },
};

static void
test_real_no_writeback (gconstpointer data)
{
  const NoWritebackCase *c = data;
  g_autofree char *path = NULL;
  FitOptions opts = options_with_memory (24ull << 30);
  g_autoptr(FitResult) r = NULL;
  g_autoptr(GError) error = NULL;

  if (c->shared)
    {
      const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");

      path = dir != NULL ? g_build_filename (dir, c->file, NULL) : NULL;
      if (path == NULL || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
        {
          g_test_skip ("the shared testdata are not here (IOSIM_SHARED_TESTDATA)");
          return;
        }
    }
  else
    path = g_test_build_filename (G_TEST_DIST, "data", c->file, NULL);
  opts.has_device = c->has_device;
  opts.dev_major = c->major;
  opts.dev_minor = c->minor;
  r = fit_trace (path, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->writeback_bios, ==, 0);
  g_assert_cmpuint (r->writers->len, ==, 0);
  g_assert_cmpuint (r->requests_by_op[TRACE_OP_WRITE], >, 0);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  scratch_dir = g_dir_make_tmp ("test-fit-writeback-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/fit/steps/paced-stream", test_paced_stream_is_steps);
  g_test_add_func ("/fit/steps/split-among-others", test_split_submission_among_others);
  for (guint i = 0; i < G_N_ELEMENTS (comm_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/writeback/flusher-comm/%u-%s", i,
                                               comm_cases[i].comm);

      g_test_add_data_func (path, &comm_cases[i], test_flusher_comm);
    }
  for (guint i = 0; i < G_N_ELEMENTS (host_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/writeback/host/%s", host_cases[i].name);

      g_test_add_data_func (path, &host_cases[i], test_host_check);
    }
  g_test_add_func ("/fit/writeback/synthetic", test_synthetic_writer);
  g_test_add_func ("/fit/writeback/synthetic-json", test_synthetic_json);
  g_test_add_func ("/fit/writeback/no-host", test_no_host_stays_traced);
  g_test_add_func ("/fit/writeback/expiry-start", test_expiry_start);
  g_test_add_func ("/fit/writeback/not-writeback", test_not_writeback);
  g_test_add_func ("/fit/writeback/real-kworker", test_real_kworker);
  for (guint i = 0; i < G_N_ELEMENTS (no_writeback_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/writeback/real-none/%s",
                                               no_writeback_cases[i].name);

      g_test_add_data_func (path, &no_writeback_cases[i], test_real_no_writeback);
    }
  status = g_test_run ();
  remove_scratch ();
  return status;
}
