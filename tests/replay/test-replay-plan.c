/* test-replay-plan.c — replay schedules, think times, alignment, the write
 * policy, mountinfo parsing and percentiles: pure logic, no device. */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "replay/replay.h"
#include "traces/trace.h"
#include "plan-ios.h"

static TraceIo
mkio (guint32 pid, const char *comm, TraceOp op, guint64 sector, guint32 nr_sectors,
      gint64 queue_ns, gint64 issue_ns, gint64 complete_ns)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.dev_major = 7;
  io.dev_minor = 3;
  io.pid = pid;
  g_strlcpy (io.comm, comm, sizeof io.comm);
  io.op = op;
  io.sector = sector;
  io.nr_sectors = nr_sectors;
  io.queue_ns = queue_ns;
  io.issue_ns = issue_ns;
  io.complete_ns = complete_ns;
  return io;
}

#define MIB (G_GUINT64_CONSTANT (1) << 20)

static void
test_schedule (void)
{
  const TraceIo in[] = {
    mkio (200, "",   TRACE_OP_READ, 0,  8, 1000000, 1100000, 1300000),
    mkio (100, "dd", TRACE_OP_READ, 8,  8, 1500000, 1600000, 1800000),
    mkio (200, "",   TRACE_OP_READ, 16, 8, 2000000, 2050000, 2400000),
    mkio (100, "dd", TRACE_OP_READ, 24, 8, 3000000, 3100000, 3200000),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.speed = 2.0;
  plan = replay_plan_build (ios, &opts, 16 * MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->processes->len, ==, 2);
  /* Sorted by pid; named <comm>-<pid> or pid<N>. */
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 0))->name, ==, "dd-100");
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 1))->name, ==, "pid200");
  /* One time base: Q time minus the first Q of the trace, halved by speed 2. */
  g_assert_cmpint (io_at (plan, 1, 0)->sched_ns, ==, 0);
  g_assert_cmpint (io_at (plan, 0, 0)->sched_ns, ==, 250000);
  g_assert_cmpint (io_at (plan, 1, 1)->sched_ns, ==, 500000);
  g_assert_cmpint (io_at (plan, 0, 1)->sched_ns, ==, 1000000);
  g_assert_cmpint (plan->span_ns, ==, 1000000);
  g_assert_cmpuint (io_at (plan, 0, 1)->offset_bytes, ==, 24 * 512);
  g_assert_cmpuint (plan->n_ios, ==, 4);
  g_assert_cmpuint (plan->bytes_read, ==, 4 * 4096);
  g_assert_cmpint (plan->events, ==, REPLAY_EVENTS_QUEUE);
}

static void
test_names_of_processes (void)
{
  const TraceIo in[] = {
    mkio (1, "(null)",         TRACE_OP_READ, 0,  8, 0, 1, 2),
    mkio (2, "kworker/u8:1 x", TRACE_OP_READ, 8,  8, 0, 1, 2),
    mkio (3, "a,b[c]",         TRACE_OP_READ, 16, 8, 0, 1, 2),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 0))->name, ==, "pid1");
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 1))->name, ==, "kworker/u8:1_x-2");
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 2))->name, ==, "a_b_c_-3");
}

/* A pid's name comes from its first non-empty comm in trace order, as fit
 * names it, whichever I/Os are replayed: here pid 4's first I/O has no
 * comm and pid 5's only named I/O is a write that --reads-only skips. */
static void
test_names_first_comm (void)
{
  const TraceIo in[] = {
    mkio (4, "",    TRACE_OP_READ,  0,  8, 0,   1,   2),
    mkio (5, "tar", TRACE_OP_WRITE, 64, 8, 5,   6,   7),
    mkio (4, "cat", TRACE_OP_READ,  8,  8, 10,  11,  12),
    mkio (5, "",    TRACE_OP_READ,  72, 8, 20,  21,  22),
    mkio (4, "sh",  TRACE_OP_READ,  16, 8, 30,  31,  32),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.reads_only = TRUE;
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->processes->len, ==, 2);
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 0))->name, ==, "cat-4");
  g_assert_cmpstr (((ReplayProcess *) g_ptr_array_index (plan->processes, 1))->name, ==, "tar-5");
  g_assert_cmpuint (((ReplayProcess *) g_ptr_array_index (plan->processes, 1))->ios->len, ==, 1);
}

static void
test_think_time (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 0,  8, 0,      10000,  50000),
    mkio (1, "a", TRACE_OP_READ, 8,  8, 80000,  90000,  120000),   /* think 30 us */
    mkio (1, "a", TRACE_OP_READ, 16, 8, 100000, 130000, 160000),   /* queued before prev C */
    mkio (1, "a", TRACE_OP_READ, 24, 8, 200000, 210000, -1),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.timing = REPLAY_TIMING_CLOSED;
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpint (io_at (plan, 0, 0)->think_ns, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 0)->dep_index, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 1)->think_ns, ==, 30000);
  g_assert_cmpint (io_at (plan, 0, 1)->dep_index, ==, 0);
  g_assert_cmpint (io_at (plan, 0, 1)->gap_ns, ==, 80000);
  /* Q before the previous C, nothing completed since the previous Q: no
   * completion released it, it follows by the inter-arrival gap. */
  g_assert_cmpint (io_at (plan, 0, 2)->think_ns, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 2)->dep_index, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 2)->gap_ns, ==, 20000);
  /* Both earlier ones done by then: the later completion (160 us) released it. */
  g_assert_cmpint (io_at (plan, 0, 3)->think_ns, ==, 40000);
  g_assert_cmpint (io_at (plan, 0, 3)->dep_index, ==, 2);
}

/* An asynchronous submitter keeping up to 3 in flight: each I/O queued
 * after a completion depends on that completion (the latest before it),
 * even when it was not the previous I/O's; the ones queued with nothing
 * completed since the previous submission depend on none.  Times in us:
 *   Q0 0, Q1 1, Q2 2 (burst)  C1 40  Q3 45 (released by 1)
 *   C0 50  C2 60  Q4 70 (by 2: the latest completion before it)
 *   Q5 71 (right after Q4)  C3 90 C4 95 C5 99  Q6 100 (by 5, think 1). */
static void
test_think_time_overlapped (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 0,  8, 0,      100,    50000),
    mkio (1, "a", TRACE_OP_READ, 8,  8, 1000,   1100,   40000),
    mkio (1, "a", TRACE_OP_READ, 16, 8, 2000,   2100,   60000),
    mkio (1, "a", TRACE_OP_READ, 24, 8, 45000,  45100,  90000),
    mkio (1, "a", TRACE_OP_READ, 32, 8, 70000,  70100,  95000),
    mkio (1, "a", TRACE_OP_READ, 40, 8, 71000,  71100,  99000),
    mkio (1, "a", TRACE_OP_READ, 48, 8, 100000, 100100, 120000),
  };
  const gint32 dep[] = { -1, -1, -1, 1, 2, -1, 5 };
  const gint64 think[] = { -1, -1, -1, 5000, 10000, -1, 1000 };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.timing = REPLAY_TIMING_CLOSED;
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (in); i++)
    {
      g_assert_cmpint (io_at (plan, 0, i)->dep_index, ==, dep[i]);
      g_assert_cmpint (io_at (plan, 0, i)->think_ns, ==, think[i]);
    }
}

static void
test_issue_events (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 0, 8, 5000, 9000,  20000),
    mkio (1, "a", TRACE_OP_READ, 8, 8, -1,   30000, 40000),
  };
  const TraceIo no_q[] = {
    mkio (1, "a", TRACE_OP_READ, 0, 8, -1, 9000,  20000),
    mkio (1, "a", TRACE_OP_READ, 8, 8, -1, 30000, 40000),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GArray) ios_no_q = ios_new (no_q, G_N_ELEMENTS (no_q));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) q = NULL, d = NULL, fallback = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  q = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  /* Per-I/O fallback to D for the one without Q. */
  g_assert_cmpuint (q->fell_back_to_issue, ==, 1);
  g_assert_cmpint (io_at (q, 0, 1)->sched_ns, ==, 25000);

  opts.events = REPLAY_EVENTS_ISSUE;
  d = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpint (io_at (d, 0, 1)->sched_ns, ==, 21000);
  g_assert_cmpuint (d->fell_back_to_issue, ==, 0);

  /* A trace without any Q replays its D times. */
  opts.events = REPLAY_EVENTS_QUEUE;
  fallback = replay_plan_build (ios_no_q, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fallback->events, ==, REPLAY_EVENTS_ISSUE);
  g_assert_cmpint (io_at (fallback, 0, 1)->sched_ns, ==, 21000);
}

static void
test_align_and_range (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 3, 9, 0, 1, 2),          /* 1536 + 4608 bytes */
    mkio (1, "a", TRACE_OP_READ, 2048 - 8, 8, 10, 11, 12), /* last 4 KiB of 1 MiB */
    mkio (1, "a", TRACE_OP_READ, 2048 + 16, 8, 20, 21, 22),/* beyond */
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  plan = replay_plan_build (ios, &opts, MIB, 4096, &error);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_null (plan);
  g_assert_nonnull (strstr (error->message, "sector 2064"));
  g_assert_nonnull (strstr (error->message, "--wrap"));
  g_clear_error (&error);

  opts.wrap = TRUE;
  plan = replay_plan_build (ios, &opts, MIB, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes, ==, 0);
  g_assert_cmpuint (io_at (plan, 0, 0)->bytes, ==, 4096);
  g_assert_cmpuint (io_at (plan, 0, 1)->offset_bytes, ==, MIB - 4096);
  g_assert_cmpuint (io_at (plan, 0, 2)->offset_bytes, ==, 8192);
  g_assert_cmpuint (plan->aligned, ==, 1);
  g_assert_cmpuint (plan->wrapped, ==, 1);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpuint (io_at (plan, 0, i)->offset_bytes % 4096, ==, 0);
      g_assert_cmpuint (io_at (plan, 0, i)->offset_bytes + io_at (plan, 0, i)->bytes, <=, MIB);
    }
}

/* Issue 12: sector 2^55 times 512 wrapped to byte 0 and the write landed
 * at the start of the target.  Records whose extent does not fit in 64
 * bits are refused, naming the record, under every placement option. */
typedef struct {
  const char *name;
  guint64     sector;
  guint32     nr_sectors;
} OverflowCase;

static const OverflowCase overflow_cases[] = {
  { "sector-2^55", G_GUINT64_CONSTANT (1) << 55, 8 },
  { "sector-2^64-1", G_MAXUINT64, 8 },
  { "end-is-2^64", (G_GUINT64_CONSTANT (1) << 55) - 1, 1 },
  { "length-max", (G_GUINT64_CONSTANT (1) << 55) - 8, G_MAXUINT32 },
};

static void
test_overflow_refused (gconstpointer data)
{
  const OverflowCase *c = data;
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 0, 8, 1000, 1100, 1200),
    mkio (42, "dd", TRACE_OP_WRITE, c->sector, c->nr_sectors, 2500000000, 2500000100, 2500000200),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autofree char *sector = g_strdup_printf ("sector %" G_GUINT64_FORMAT " (+%u sectors",
                                             c->sector, c->nr_sectors);

  for (guint combo = 0; combo < 8; combo++)
    {
      g_autoptr (GError) error = NULL;
      ReplayOptions opts;

      replay_options_init (&opts);
      opts.wrap = (combo & 1) != 0;
      opts.scale_offsets = (combo & 2) != 0;
      /* Skipped writes count in the traced extent: refused as well. */
      opts.allow_write = (combo & 4) == 0;
      opts.reads_only = (combo & 4) != 0;
      g_assert_null (replay_plan_build (ios, &opts, 16 * MIB, 512, &error));
      g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
      g_assert_nonnull (strstr (error->message, "pid 42"));
      g_assert_nonnull (strstr (error->message, sector));
      g_assert_nonnull (strstr (error->message, "trace time 2.500000 s"));
      g_assert_nonnull (strstr (error->message, "64-bit"));
    }
}

/* Just below the overflow: the extent fits, so it is an ordinary I/O
 * beyond the target, refused without --wrap and wrapped inside with it;
 * on 4 KiB blocks its aligned end would be 2^64 exactly (the unchecked
 * sum wrapped to 0 and passed as inside). */
static void
test_near_overflow (void)
{
  const guint64 sector = (G_GUINT64_CONSTANT (1) << 55) - 2;   /* byte 2^64 - 1024 */
  const TraceIo in[] = { mkio (7, "a", TRACE_OP_WRITE, sector, 1, 0, 10, 20) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.allow_write = TRUE;
  g_assert_null (replay_plan_build (ios, &opts, MIB + 512, 4096, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "ends at byte 2^64"));
  g_assert_nonnull (strstr (error->message, "--wrap"));
  g_clear_error (&error);

  opts.wrap = TRUE;
  plan = replay_plan_build (ios, &opts, MIB + 512, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (io_at (plan, 0, 0)->bytes, ==, 4096);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes % 4096, ==, 0);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes + 4096, <=, MIB + 512);
  g_assert_cmpuint (plan->wrapped, ==, 1);
  g_assert_true (replay_plan_check_ranges (plan, NULL, &error));
}

/* A target that is not a whole number of blocks: an I/O at its last
 * sector is moved back (and counted), its aligned end at most the size. */
static void
test_clamp_counted (void)
{
  const guint64 size = 10 * 1024;   /* 2.5 blocks of 4 KiB */
  const TraceIo in[] = { mkio (1, "a", TRACE_OP_READ, size / 512 - 1, 1, 0, 10, 20) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  g_assert_null (replay_plan_build (ios, &opts, size, 4096, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_clear_error (&error);
  opts.scale_offsets = TRUE;
  plan = replay_plan_build (ios, &opts, size, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes, ==, 4096);
  g_assert_cmpuint (plan->clamped, ==, 1);
  g_assert_cmpuint (plan->wrapped, ==, 0);
  g_assert_cmpuint (plan->scaled, ==, 0);   /* the extent fits: nothing to scale */
  g_assert_cmpuint (plan->aligned, ==, 1);
}

/* The postcondition check itself: a plan edited to reach outside its
 * target (past the end, an end that wraps 64 bits, no bytes, a target
 * that does not exist) is refused, and a smaller real size is honoured. */
static void
test_check_ranges (void)
{
  const TraceIo in[] = { mkio (1, "a", TRACE_OP_READ, 8, 8, 0, 10, 20) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayIo *io;
  ReplayOptions opts;
  const guint64 small = 4096, exact = 8192;

  replay_options_init (&opts);
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  io = (ReplayIo *) io_at (plan, 0, 0);
  g_assert_true (replay_plan_check_ranges (plan, NULL, &error));
  g_assert_true (replay_plan_check_ranges (plan, &exact, &error));
  g_assert_false (replay_plan_check_ranges (plan, &small, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_assert_nonnull (strstr (error->message, "of a-1 "));
  g_assert_nonnull (strstr (error->message, "trace sector 8"));
  g_clear_error (&error);

  io->offset_bytes = MIB - 2048;
  g_assert_false (replay_plan_check_ranges (plan, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
  g_clear_error (&error);
  io->offset_bytes = G_MAXUINT64 - 1024;
  g_assert_false (replay_plan_check_ranges (plan, NULL, &error));
  g_assert_nonnull (strstr (error->message, "to 2^64"));
  g_clear_error (&error);
  io->offset_bytes = 0;
  io->bytes = 0;
  g_assert_false (replay_plan_check_ranges (plan, NULL, &error));
  g_clear_error (&error);
  io->bytes = 4096;
  io->target_index = 1;
  g_assert_false (replay_plan_check_ranges (plan, NULL, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE);
}

static void
test_write_policy (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ,    0,  8, 0,  1,  2),
    mkio (1, "a", TRACE_OP_WRITE,   8,  8, 10, 11, 12),
    mkio (2, "b", TRACE_OP_WRITE,   16, 8, 20, 21, 22),
    mkio (2, "b", TRACE_OP_DISCARD, 24, 8, 30, 31, 32),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) refused = NULL, reads = NULL, writes = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  refused = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_null (refused);
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES);
  g_assert_nonnull (strstr (error->message, "2 writes"));
  g_assert_nonnull (strstr (error->message, "--allow-write"));
  g_assert_nonnull (strstr (error->message, "--reads-only"));
  g_clear_error (&error);

  opts.reads_only = TRUE;
  reads = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (reads->n_ios, ==, 1);
  g_assert_cmpuint (reads->n_writes, ==, 0);
  g_assert_cmpuint (reads->skipped_writes, ==, 2);
  g_assert_cmpuint (reads->skipped_other, ==, 1);
  g_assert_cmpuint (reads->processes->len, ==, 1);

  opts.reads_only = FALSE;
  opts.allow_write = TRUE;
  writes = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (writes->n_writes, ==, 2);
  g_assert_cmpuint (writes->bytes_written, ==, 8192);
  g_assert_cmpuint (writes->processes->len, ==, 2);

  opts.reads_only = TRUE;
  g_assert_null (replay_plan_build (ios, &opts, MIB, 512, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES);
}

/* A dry run writes nothing: without --allow-write it plans the writes
 * exactly as --allow-write does and counts them as needing the flag; with
 * either choice made, nothing needs it. */
static void
test_write_policy_dry_run (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ,    0,  8, 0,  1,  2),
    mkio (1, "a", TRACE_OP_WRITE,   8,  8, 10, 11, 12),
    mkio (2, "b", TRACE_OP_WRITE,   16, 8, 20, 21, 22),
    mkio (2, "b", TRACE_OP_DISCARD, 24, 8, 30, 31, 32),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) dry = NULL, allowed = NULL, reads = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.dry_run = TRUE;
  dry = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (dry->writes_need_allow_write, ==, 2);

  opts.allow_write = TRUE;
  allowed = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (allowed->writes_need_allow_write, ==, 0);
  g_assert_cmpuint (dry->n_ios, ==, allowed->n_ios);
  g_assert_cmpuint (dry->n_writes, ==, allowed->n_writes);
  g_assert_cmpuint (dry->bytes_written, ==, allowed->bytes_written);
  g_assert_cmpuint (dry->skipped_writes, ==, 0);
  g_assert_cmpuint (dry->processes->len, ==, allowed->processes->len);

  opts.allow_write = FALSE;
  opts.reads_only = TRUE;
  reads = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (reads->writes_need_allow_write, ==, 0);
  g_assert_cmpuint (reads->skipped_writes, ==, 2);

  /* The contradiction is refused in a dry run too. */
  opts.allow_write = TRUE;
  g_assert_null (replay_plan_build (ios, &opts, MIB, 512, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES);
}

/* Issue 14: a buffered writer of 100 MiB came back as 25,600 O_DIRECT
 * 4 KiB writes instead of 200 x 512 KiB.  Its writeback queues one 4 KiB
 * bio per page and the block layer merges 128 of them into each 512 KiB
 * request (every bio of a request has the request's D and C): the plan
 * replays each request's run of bios as one I/O.  Expected: 200 writes of
 * 512 KiB, 25,400 bios coalesced; buggy: 25,600 writes of 4 KiB. */
static void
test_coalesce_writeback (void)
{
  g_autoptr (GArray) ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL, per_bio = NULL;
  ReplayOptions opts;
  gint64 t = 1000000;

  for (guint r = 0; r < 200; r++)
    {
      gint64 d = t + 128 * 1000 + 2000, c = d + 900000;

      for (guint b = 0; b < 128; b++)
        {
          TraceIo io = mkio (77, "kworker/u4:1", TRACE_OP_WRITE, 2048 + (r * 128 + b) * 8, 8,
                             t + b * 1000, d, c);
          g_array_append_val (ios, io);
        }
      t = c + 5000;
    }
  replay_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_plan_build (ios, &opts, 256 * MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_writes, ==, 200);
  g_assert_cmpuint (plan->bytes_written, ==, 100 * MIB);
  g_assert_cmpuint (plan->coalesced, ==, 25400);
  for (guint i = 0; i < 200; i++)
    {
      const ReplayIo *io = io_at (plan, 0, i);

      g_assert_cmpuint (io->bytes, ==, 512 * 1024);
      g_assert_cmpuint (io->offset_bytes, ==, (2048 + (guint64) i * 1024) * 512);
    }
  /* At its first bio's Q: 1 ms + the previous requests' 902 us + 5 us. */
  g_assert_cmpint (io_at (plan, 0, 1)->sched_ns, ==, 128 * 1000 + 2000 + 900000 + 5000);

  opts.per_bio = TRUE;
  per_bio = replay_plan_build (ios, &opts, 256 * MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (per_bio->n_writes, ==, 25600);
  g_assert_cmpuint (per_bio->coalesced, ==, 0);
  g_assert_cmpuint (io_at (per_bio, 0, 0)->bytes, ==, 4096);
}

/* Only what one request carried for one process folds, at either end
 * (back and front merges): not another request's bios, even adjacent; not
 * another pid's bios in the same request; not a bio that does not touch
 * the run; not an I/O without D or C. */
static void
test_coalesce_rules (void)
{
  const TraceIo in[] = {
    mkio (1, "a", TRACE_OP_READ, 100, 8, 0, 50, 90),    /* request 1 ... */
    mkio (1, "a", TRACE_OP_READ, 108, 8, 1, 50, 90),    /* back merge */
    mkio (1, "a", TRACE_OP_READ, 92,  8, 2, 50, 90),    /* front merge */
    mkio (2, "b", TRACE_OP_READ, 116, 8, 3, 50, 90),    /* another pid in it */
    mkio (1, "a", TRACE_OP_READ, 300, 8, 4, 50, 90),    /* not touching */
    mkio (1, "a", TRACE_OP_READ, 116, 8, 5, 60, 95),    /* adjacent, request 2 */
    mkio (1, "a", TRACE_OP_WRITE, 124, 8, 6, 50, 90),   /* another op */
    mkio (1, "a", TRACE_OP_READ, 400, 8, 7, -1, 97),    /* never issued */
    mkio (1, "a", TRACE_OP_READ, 408, 8, 8, -1, 97),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->coalesced, ==, 2);
  g_assert_cmpuint (plan->n_ios, ==, G_N_ELEMENTS (in) - 2);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes, ==, 92 * 512);
  g_assert_cmpuint (io_at (plan, 0, 0)->bytes, ==, 24 * 512);
  g_assert_cmpint (io_at (plan, 0, 0)->sched_ns, ==, 0);
  g_assert_cmpuint (io_at (plan, 0, 1)->offset_bytes, ==, 300 * 512);
  g_assert_cmpuint (io_at (plan, 0, 2)->offset_bytes, ==, 116 * 512);
  g_assert_cmpuint (io_at (plan, 0, 2)->bytes, ==, 8 * 512);
  g_assert_cmpuint (io_at (plan, 1, 0)->bytes, ==, 8 * 512);
}

/* Request-only records (no Q in the trace: MSR, SPC, blkparse without Q)
 * are requests already: two contiguous ones stamped alike stay two. */
static void
test_coalesce_request_only (void)
{
  TraceIo in[] = {
    mkio (1, "a", TRACE_OP_WRITE, 100, 8, 10, 10, 90),
    mkio (1, "a", TRACE_OP_WRITE, 108, 8, 10, 10, 90),
  };
  g_autoptr (GArray) ios = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  in[0].request_only = in[1].request_only = TRUE;
  ios = ios_new (in, G_N_ELEMENTS (in));
  replay_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_plan_build (ios, &opts, MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->coalesced, ==, 0);
  g_assert_cmpuint (plan->n_writes, ==, 2);
}

/* The real capture of a buffered dd (tests/data, Linux 6.18): 32 4 KiB
 * bios back-merged into one 128 KiB request (WS 800 + 256) replay as one
 * write; the readahead requests stay four reads. */
static void
test_coalesce_capture (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data",
                                                 "valid-blk-loop-mqdeadline-6.18.ftrace", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  g_assert_no_error (error);
  replay_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_plan_build (ios, &opts, 64 * MIB, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_writes, ==, 1);
  g_assert_cmpuint (plan->n_reads, ==, 4);
  g_assert_cmpuint (plan->coalesced, ==, 31);
  g_assert_cmpuint (io_at (plan, 0, 0)->offset_bytes, ==, 800 * 512);
  g_assert_cmpuint (io_at (plan, 0, 0)->bytes, ==, 256 * 512);
}

static void
test_empty (void)
{
  const TraceIo in[] = { mkio (1, "a", TRACE_OP_WRITE, 0, 8, 0, 1, 2) };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.reads_only = TRUE;
  g_assert_null (replay_plan_build (ios, &opts, MIB, 512, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY);
}

static void
test_mountinfo (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "replay", "data", "mountinfo-sample", NULL);
  g_autofree char *text = NULL;
  g_autofree char *mount_point = NULL, *source = NULL;
  const guint32 loop3[] = { 7, 3 };
  const guint32 sdb[] = { 8, 16, 8, 17 };
  const guint32 loop4[] = { 7, 4 };

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_true (replay_mountinfo_find (text, loop3, 1, &mount_point, &source));
  g_assert_cmpstr (mount_point, ==, "/mnt/my data");
  g_assert_cmpstr (source, ==, "/dev/loop3");
  g_clear_pointer (&mount_point, g_free);
  g_clear_pointer (&source, g_free);
  /* A disk whose partition is mounted (optional fields before "-"). */
  g_assert_true (replay_mountinfo_find (text, sdb, 2, &mount_point, NULL));
  g_assert_cmpstr (mount_point, ==, "/srv/bind");
  g_assert_false (replay_mountinfo_find (text, loop4, 1, NULL, NULL));
  g_assert_false (replay_mountinfo_find ("garbage\n\n1 2\n", loop3, 1, NULL, NULL));
}

static void
put_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static char *
make_dir (const char *root, const char *rel)
{
  char *path = g_build_filename (root, rel, NULL);

  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
  return path;
}

static void
put_link (const char *root, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);

  g_assert_cmpint (symlink (target, path), ==, 0);
}

/* A disk sdb (8:16) with a partition sdb1 (8:17) in a fake sysfs tree, as
 * Linux 6.x lays it out. */
static char *
fake_sysfs (void)
{
  g_autoptr (GError) error = NULL;
  char *root = g_dir_make_tmp ("iosim-sysfs-XXXXXX", &error);
  g_autofree char *disk = NULL, *part = NULL, *queue = NULL, *h1 = NULL, *h2 = NULL, *d = NULL, *b = NULL;

  g_assert_no_error (error);
  disk = make_dir (root, "devices/pci0/block/sdb");
  part = make_dir (root, "devices/pci0/block/sdb/sdb1");
  queue = make_dir (root, "devices/pci0/block/sdb/queue");
  h1 = make_dir (root, "devices/pci0/block/sdb/holders");
  h2 = make_dir (root, "devices/pci0/block/sdb/sdb1/holders");
  d = make_dir (root, "dev/block");
  b = make_dir (root, "block");
  put_file (disk, "size", "2097152\n");
  put_file (disk, "dev", "8:16\n");
  put_file (part, "partition", "1\n");
  put_file (part, "start", "2048\n");
  put_file (part, "size", "204800\n");
  put_file (part, "dev", "8:17\n");
  put_file (queue, "logical_block_size", "4096\n");
  put_link (root, "dev/block/8:16", "../../devices/pci0/block/sdb");
  put_link (root, "dev/block/8:17", "../../devices/pci0/block/sdb/sdb1");
  put_link (root, "block/sdb", "../devices/pci0/block/sdb");
  return root;
}

static void
remove_tree (const char *path)
{
  const char *argv[] = { "rm", "-rf", path, NULL };

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               NULL, NULL, NULL, NULL));
}

static void
test_target_partition (void)
{
  g_autofree char *root = fake_sysfs ();
  g_autofree char *mountinfo = g_test_build_filename (G_TEST_DIST, "replay", "data",
                                                      "mountinfo-sample", NULL);
  g_autofree char *empty = g_build_filename (root, "mountinfo-empty", NULL);
  g_autofree char *holder = g_build_filename (root, "devices/pci0/block/sdb/sdb1/holders/dm-0", NULL);
  g_autoptr (GError) error = NULL;
  ReplayTarget part, disk, missing;

  g_assert_true (replay_target_probe_at (root, "/dev/sdb1", 8, 17, &part, &error));
  g_assert_no_error (error);
  g_assert_true (part.is_partition);
  g_assert_cmpstr (part.name, ==, "sdb1");
  g_assert_cmpstr (part.disk_name, ==, "sdb");
  g_assert_cmpuint (part.start_sector, ==, 2048);
  g_assert_cmpuint (part.size_bytes, ==, 204800 * 512);
  g_assert_cmpuint (part.logical_block_bytes, ==, 4096);

  g_assert_true (replay_target_probe_at (root, "/dev/sdb", 8, 16, &disk, &error));
  g_assert_false (disk.is_partition);
  g_assert_cmpuint (disk.size_bytes, ==, G_GUINT64_CONSTANT (2097152) * 512);

  /* The fixture mounts sdb1 (8:17): the whole disk is refused too. */
  g_assert_false (replay_target_check_unused (&disk, mountinfo, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "/srv/bind"));
  g_clear_error (&error);

  put_file (root, "mountinfo-empty", "");
  g_assert_true (replay_target_check_unused (&part, empty, &error));
  g_assert_no_error (error);
  /* A stacked device (dm, md) holding the partition makes the disk busy. */
  g_assert_true (g_file_set_contents (holder, "", -1, NULL));
  g_assert_false (replay_target_check_unused (&disk, empty, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message, "held by dm-0"));
  g_clear_error (&error);

  g_assert_false (replay_target_probe_at (root, "/dev/none", 8, 99, &missing, &error));
  g_assert_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET);

  replay_target_clear (&part);
  replay_target_clear (&disk);
  remove_tree (root);
}

static void
test_percentile (void)
{
  const gint64 v[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 };

  g_assert_cmpint (replay_percentile_ns (v, 10, 50), ==, 50);
  g_assert_cmpint (replay_percentile_ns (v, 10, 99), ==, 100);
  g_assert_cmpint (replay_percentile_ns (v, 10, 0), ==, 10);
  g_assert_cmpint (replay_percentile_ns (v, 1, 50), ==, 10);
  g_assert_cmpint (replay_percentile_ns (v, 0, 50), ==, 0);
}

static void
test_names (void)
{
  ReplayTiming t;
  ReplayEvents e;

  g_assert_true (replay_timing_parse ("afap", &t));
  g_assert_cmpint (t, ==, REPLAY_TIMING_AFAP);
  g_assert_false (replay_timing_parse ("fast", &t));
  g_assert_true (replay_events_parse ("issue", &e));
  g_assert_cmpstr (replay_events_name (e), ==, "issue");
  g_assert_cmpstr (replay_timing_name (REPLAY_TIMING_CLOSED), ==, "closed");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/plan/schedule", test_schedule);
  g_test_add_func ("/replay/plan/process-names", test_names_of_processes);
  g_test_add_func ("/replay/plan/process-names-first-comm", test_names_first_comm);
  g_test_add_func ("/replay/plan/think-time", test_think_time);
  g_test_add_func ("/replay/plan/think-time-overlapped", test_think_time_overlapped);
  g_test_add_func ("/replay/plan/issue-events", test_issue_events);
  g_test_add_func ("/replay/plan/align-and-range", test_align_and_range);
  for (guint i = 0; i < G_N_ELEMENTS (overflow_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/plan/overflow/%s", overflow_cases[i].name);
      g_test_add_data_func (path, &overflow_cases[i], test_overflow_refused);
    }
  g_test_add_func ("/replay/plan/near-overflow", test_near_overflow);
  g_test_add_func ("/replay/plan/clamp-counted", test_clamp_counted);
  g_test_add_func ("/replay/plan/check-ranges", test_check_ranges);
  g_test_add_func ("/replay/plan/write-policy", test_write_policy);
  g_test_add_func ("/replay/plan/write-policy-dry-run", test_write_policy_dry_run);
  g_test_add_func ("/replay/plan/coalesce/writeback", test_coalesce_writeback);
  g_test_add_func ("/replay/plan/coalesce/rules", test_coalesce_rules);
  g_test_add_func ("/replay/plan/coalesce/request-only", test_coalesce_request_only);
  g_test_add_func ("/replay/plan/coalesce/capture", test_coalesce_capture);
  g_test_add_func ("/replay/plan/empty", test_empty);
  g_test_add_func ("/replay/safety/mountinfo", test_mountinfo);
  g_test_add_func ("/replay/safety/partition", test_target_partition);
  g_test_add_func ("/replay/percentile", test_percentile);
  g_test_add_func ("/replay/names", test_names);
  return g_test_run ();
}
