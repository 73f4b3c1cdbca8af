/* test-replay-nocompletion.c — replaying traces that record submissions
 * only (TraceIo.no_completion: fio iologs, UMass SPC, DiskSim, Q-only
 * blkparse): the plan keeps their queue times and says their trace latency
 * is not recorded, closed timing and --events issue are refused for them,
 * and a real replay onto a regular file in a temporary directory (every
 * engine of this build) measures every I/O and reports "trace latency not
 * recorded" (text and JSON)
 * without a ratio over a missing or zero mean.  No root, no device. */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "replay/replay.h"
#include "plan-ios.h"

#define KIB 1024u
#define MS (G_GINT64_CONSTANT (1000000))

/* An I/O as a submission-only trace gives it. */
static TraceIo
submitted (guint32 pid, TraceOp op, guint64 sector, guint32 nr_sectors, gint64 queue_ns)
{
  TraceIo io;

  memset (&io, 0, sizeof io);
  io.pid = pid;
  g_strlcpy (io.comm, "fio", sizeof io.comm);
  io.op = op;
  io.sector = sector;
  io.nr_sectors = nr_sectors;
  io.queue_ns = queue_ns;
  io.issue_ns = -1;
  io.complete_ns = -1;
  io.no_completion = TRUE;
  return io;
}

/* The same I/O as a full Q/D/C trace gives it. */
static TraceIo
completed (guint32 pid, guint64 sector, gint64 queue_ns, gint64 issue_ns, gint64 complete_ns)
{
  TraceIo io = submitted (pid, TRACE_OP_READ, sector, 8, queue_ns);

  io.issue_ns = issue_ns;
  io.complete_ns = complete_ns;
  io.no_completion = FALSE;
  return io;
}

/* Two processes of an fio job: the plan replays each I/O at its queue
 * time, on one time base, and records no trace latency nor any
 * completion dependency. */
static void
test_plan_queue_times (void)
{
  const TraceIo in[] = {
    submitted (10, TRACE_OP_READ, 0, 8, 5 * MS),
    submitted (20, TRACE_OP_WRITE, 64, 16, 6 * MS),
    submitted (10, TRACE_OP_READ, 8, 8, 25 * MS),
    submitted (20, TRACE_OP_WRITE, 80, 16, 45 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.allow_write = TRUE;
  plan = replay_plan_build (ios, &opts, 1 << 20, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_ios, ==, 4);
  g_assert_cmpuint (plan->no_completion, ==, 4);
  g_assert_cmpint (plan->events, ==, REPLAY_EVENTS_QUEUE);
  g_assert_cmpuint (plan->fell_back_to_issue, ==, 0);
  g_assert_cmpuint (plan->skipped_untimed, ==, 0);
  g_assert_cmpint (io_at (plan, 0, 0)->sched_ns, ==, 0);
  g_assert_cmpint (io_at (plan, 0, 1)->sched_ns, ==, 20 * MS);
  g_assert_cmpint (io_at (plan, 1, 0)->sched_ns, ==, 1 * MS);
  g_assert_cmpint (io_at (plan, 1, 1)->sched_ns, ==, 40 * MS);
  g_assert_cmpint (plan->span_ns, ==, 40 * MS);
  for (guint p = 0; p < 2; p++)
    for (guint i = 0; i < 2; i++)
      {
        g_assert_cmpint (io_at (plan, p, i)->trace_latency_ns, ==, -1);
        g_assert_cmpint (io_at (plan, p, i)->dep_index, ==, -1);
      }
}

/* A trace with some completions: those I/Os carry their Q2C, the rest
 * -1; closed timing stays allowed and an I/O without a completion
 * releases nothing. */
static void
test_plan_mixed (void)
{
  const TraceIo in[] = {
    completed (10, 0, 1 * MS, 2 * MS, 4 * MS),
    submitted (10, TRACE_OP_READ, 8, 8, 5 * MS),
    submitted (10, TRACE_OP_READ, 16, 8, 9 * MS),
    completed (10, 24, 10 * MS, 10 * MS, 13 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.timing = REPLAY_TIMING_CLOSED;
  plan = replay_plan_build (ios, &opts, 1 << 20, 512, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_ios, ==, 4);
  g_assert_cmpuint (plan->no_completion, ==, 2);
  g_assert_cmpint (io_at (plan, 0, 0)->trace_latency_ns, ==, 3 * MS);
  g_assert_cmpint (io_at (plan, 0, 1)->trace_latency_ns, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 2)->trace_latency_ns, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 3)->trace_latency_ns, ==, 3 * MS);
  /* I/O 1 follows the completion of I/O 0 (4 ms) after 1 ms of think
   * time; I/O 2 follows I/O 1 by the trace's gap, as nothing completed
   * since (I/O 1 has no completion to wait for); so does I/O 3. */
  g_assert_cmpint (io_at (plan, 0, 1)->dep_index, ==, 0);
  g_assert_cmpint (io_at (plan, 0, 1)->think_ns, ==, 1 * MS);
  g_assert_cmpint (io_at (plan, 0, 2)->dep_index, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 2)->gap_ns, ==, 4 * MS);
  g_assert_cmpint (io_at (plan, 0, 3)->dep_index, ==, -1);
  g_assert_cmpint (io_at (plan, 0, 3)->gap_ns, ==, 1 * MS);
}

typedef struct {
  const char  *name;
  ReplayTiming timing;
  ReplayEvents events;
  GQuark       domain;       /* 0: the plan builds */
  gint         code;
  const char  *says;         /* part of the message */
} ModeCase;

static const ModeCase mode_cases[] = {
  { "recorded", REPLAY_TIMING_RECORDED, REPLAY_EVENTS_QUEUE, 0, 0, NULL },
  { "afap", REPLAY_TIMING_AFAP, REPLAY_EVENTS_QUEUE, 0, 0, NULL },
  { "closed", REPLAY_TIMING_CLOSED, REPLAY_EVENTS_QUEUE, 1, REPLAY_ERROR_FAILED,
    "no completion for any of its 3 I/Os" },
  { "issue-events", REPLAY_TIMING_RECORDED, REPLAY_EVENTS_ISSUE, 1, REPLAY_ERROR_EMPTY,
    "records none" },
};

/* Which timings and events a submission-only trace can replay with. */
static void
test_plan_modes (gconstpointer data)
{
  const ModeCase *c = data;
  const TraceIo in[] = {
    submitted (10, TRACE_OP_READ, 0, 8, 1 * MS),
    submitted (10, TRACE_OP_READ, 8, 8, 2 * MS),
    submitted (11, TRACE_OP_READ, 16, 8, 3 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayPlan) plan = NULL;
  ReplayOptions opts;

  replay_options_init (&opts);
  opts.timing = c->timing;
  opts.events = c->events;
  opts.dry_run = TRUE;   /* refusals hold for the dry run too */
  plan = replay_plan_build (ios, &opts, 1 << 20, 512, &error);
  if (c->domain == 0)
    {
      g_assert_no_error (error);
      g_assert_cmpuint (plan->n_ios, ==, 3);
      return;
    }
  g_assert_error (error, REPLAY_ERROR, c->code);
  g_assert_null (plan);
  g_assert_nonnull (strstr (error->message, c->says));
}

/* ---- A real replay onto a regular file ---------------------------------- */

typedef struct {
  char *dir;
  char *file;
  char *json;
} TmpTarget;

static void
tmp_target_init (TmpTarget *t)
{
  g_autoptr (GError) error = NULL;

  t->dir = g_dir_make_tmp ("iosim-nocompl-XXXXXX", &error);
  g_assert_no_error (error);
  t->file = g_build_filename (t->dir, "target.img", NULL);
  t->json = g_build_filename (t->dir, "replay.json", NULL);
}

static void
tmp_target_clear (TmpTarget *t)
{
  g_unlink (t->file);
  g_unlink (t->json);
  g_rmdir (t->dir);
  g_free (t->dir);
  g_free (t->file);
  g_free (t->json);
}

static char *
report_text (const ReplayResult *result)
{
  char *text = NULL;
  gsize len = 0;
  FILE *out = open_memstream (&text, &len);

  replay_result_print (result, out);
  fclose (out);
  return text;
}

static JsonObject *
load_json (const char *path, JsonParser *parser)
{
  g_autoptr (GError) error = NULL;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

/* Every I/O of @result issued, completed after its issue, and each
 * process's I/Os issued in their planned order; with @qd1 (psync, a
 * thread per process) each after the previous one completed. */
static void
assert_all_measured (const ReplayResult *result, guint64 n, gboolean qd1)
{
  g_assert_cmpuint (result->ios, ==, n);
  g_assert_cmpuint (result->errors, ==, 0);
  g_assert_false (result->interrupted);
  for (guint p = 0; p < result->io_results->len; p++)
    {
      const GArray *r = g_ptr_array_index (result->io_results, p);
      const ReplayProcess *proc = g_ptr_array_index (result->plan->processes, p);

      g_assert_cmpuint (r->len, ==, proc->ios->len);
      for (guint i = 0; i < r->len; i++)
        {
          const ReplayIoResult *x = &g_array_index (r, ReplayIoResult, i);

          g_assert_cmpint (x->intended_ns, ==, g_array_index (proc->ios, ReplayIo, i).sched_ns);
          g_assert_cmpint (x->issue_ns, >=, x->intended_ns);
          g_assert_cmpint (x->complete_ns, >=, x->issue_ns);
          if (i > 0 && qd1)
            g_assert_cmpint (x->issue_ns, >=, g_array_index (r, ReplayIoResult, i - 1).complete_ns);
          else if (i > 0)
            g_assert_cmpint (x->issue_ns, >=, g_array_index (r, ReplayIoResult, i - 1).issue_ns);
        }
    }
}

typedef struct {
  const char  *name;
  ReplayEngine engine;
  guint        threads;      /* psync pool */
  gboolean     buffered;
} EngineCase;

static const EngineCase engine_cases[] = {
  { "psync", REPLAY_ENGINE_PSYNC, 0, FALSE },
  { "psync-pool", REPLAY_ENGINE_PSYNC, 2, FALSE },
  { "psync-buffered", REPLAY_ENGINE_PSYNC, 0, TRUE },
  { "io_uring", REPLAY_ENGINE_IO_URING, 0, FALSE },
  { "libaio", REPLAY_ENGINE_LIBAIO, 0, FALSE },
};

static void
test_replay_not_recorded (gconstpointer data)
{
  const EngineCase *c = data;
  const TraceIo in[] = {
    submitted (10, TRACE_OP_READ, 0, 8, 0),
    submitted (20, TRACE_OP_WRITE, 128, 8, 1 * MS),
    submitted (10, TRACE_OP_READ, 8, 8, 3 * MS),
    submitted (20, TRACE_OP_WRITE, 136, 16, 4 * MS),
    submitted (10, TRACE_OP_READ, 16, 8, 6 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL;
  JsonObject *root, *tl, *proc;
  TmpTarget t;
  ReplayOptions opts;

  if (!replay_engine_available (c->engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  tmp_target_init (&t);
  replay_options_init (&opts);
  opts.target = t.file;
  opts.target_size_bytes = 256 * KIB;
  opts.allow_write = TRUE;
  opts.engine = c->engine;
  opts.threads = c->threads;
  opts.buffered = c->buffered;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  assert_all_measured (result, 5, c->engine == REPLAY_ENGINE_PSYNC && c->threads == 0);
  g_assert_cmpint (result->buffered, ==,
                   c->buffered || g_array_index (result->targets, ReplayTarget, 0).buffered_fallback);
  g_assert_cmpuint (result->plan->no_completion, ==, 5);
  g_assert_cmpuint (result->trace_latency.ios, ==, 0);
  g_assert_cmpuint (result->trace_latency.not_recorded, ==, 5);
  g_assert_cmpfloat (result->trace_latency.mean_ns, ==, 0);
  for (guint p = 0; p < result->processes->len; p++)
    g_assert_cmpuint (g_array_index (result->processes, ReplayProcessSummary, p).trace_latency.ios,
                      ==, 0);
  /* The replay's own latency is measured all the same. */
  g_assert_cmpfloat (g_array_index (result->processes, ReplayProcessSummary, 0).latency_mean_ns, >, 0);

  text = report_text (result);
  g_assert_nonnull (strstr (text, "trace latency not recorded"));
  g_assert_null (strstr (text, "nan"));
  g_assert_null (strstr (text, "inf"));

  g_assert_true (replay_result_write_json (result, t.json, &error));
  g_assert_no_error (error);
  root = load_json (t.json, parser);
  g_assert_cmpstr (json_object_get_string_member (root, "target_kind"), ==, "file");
  tl = json_object_get_object_member (root, "trace_latency");
  g_assert_false (json_object_get_boolean_member (tl, "recorded"));
  g_assert_cmpint (json_object_get_int_member (tl, "not_recorded_ios"), ==, 5);
  g_assert_false (json_object_has_member (tl, "mean_ns"));
  g_assert_false (json_object_has_member (tl, "replayed_to_trace"));
  proc = json_array_get_object_element (json_object_get_array_member (root, "processes"), 0);
  g_assert_false (json_object_get_boolean_member (
    json_object_get_object_member (proc, "trace_latency"), "recorded"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (root, "plan"),
                                               "no_completion"), ==, 5);
  tmp_target_clear (&t);
}

/* Some I/Os with completions, all of them recorded at the same instant as
 * their queue (a zero mean): the figures cover those I/Os only, the rest
 * are counted as not recorded, and no ratio divides by the zero mean. */
static void
test_replay_mixed_zero_mean (void)
{
  const TraceIo in[] = {
    completed (10, 0, 0, 0, 0),
    submitted (10, TRACE_OP_READ, 8, 8, 1 * MS),
    completed (10, 16, 2 * MS, 2 * MS, 2 * MS),
  };
  g_autoptr (GArray) ios = ios_new (in, G_N_ELEMENTS (in));
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayResult) result = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL;
  JsonObject *tl;
  TmpTarget t;
  ReplayOptions opts;

  tmp_target_init (&t);
  replay_options_init (&opts);
  opts.target = t.file;
  opts.target_size_bytes = 64 * KIB;
  result = replay_run_ios (ios, &opts, &error);
  g_assert_no_error (error);
  assert_all_measured (result, 3, TRUE);
  g_assert_cmpuint (result->trace_latency.ios, ==, 2);
  g_assert_cmpuint (result->trace_latency.not_recorded, ==, 1);
  g_assert_cmpfloat (result->trace_latency.mean_ns, ==, 0);
  g_assert_cmpfloat (result->trace_latency.replayed_mean_ns, >, 0);

  text = report_text (result);
  g_assert_nonnull (strstr (text, "not recorded for 1 of the 3 replayed I/Os"));
  g_assert_null (strstr (text, "(x"));
  g_assert_null (strstr (text, "nan"));
  g_assert_null (strstr (text, "inf"));
  g_assert_true (replay_result_write_json (result, t.json, &error));
  g_assert_no_error (error);
  tl = json_object_get_object_member (load_json (t.json, parser), "trace_latency");
  g_assert_true (json_object_get_boolean_member (tl, "recorded"));
  g_assert_cmpint (json_object_get_int_member (tl, "recorded_ios"), ==, 2);
  g_assert_true (json_object_get_null_member (tl, "replayed_to_trace"));
  tmp_target_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/nocompletion/plan-queue-times", test_plan_queue_times);
  g_test_add_func ("/replay/nocompletion/plan-mixed", test_plan_mixed);
  for (guint i = 0; i < G_N_ELEMENTS (mode_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/nocompletion/modes/%s",
                                               mode_cases[i].name);
      g_test_add_data_func (path, &mode_cases[i], test_plan_modes);
    }
  for (guint i = 0; i < G_N_ELEMENTS (engine_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/replay/nocompletion/replay-file/%s",
                                               engine_cases[i].name);
      g_test_add_data_func (path, &engine_cases[i], test_replay_not_recorded);
    }
  g_test_add_func ("/replay/nocompletion/replay-mixed-zero-mean", test_replay_mixed_zero_mean);
  return g_test_run ();
}
