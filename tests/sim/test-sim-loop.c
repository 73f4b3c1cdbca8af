/* test-sim-loop.c — the loop driver in front of a device model (sim/sim-loop.h,
 * [device] via = loop): the block layer sees the loop's tags, the model its
 * pieces; piece counts, completion times and throughput are computed
 * exactly from a fixed-rate model; bad keys are refused by name; outputs
 * without via keep their shape and runs stay deterministic. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-loop.h"
#include "sim/sim-topology.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/scenario.h"

#define MS (G_GINT64_CONSTANT (1000000))

/* ---- engine level: a queue with the none elevator, a fixed model ------- */

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  GArray          *issued;     /* guint64 sectors in D order */
  GArray          *completed;  /* guint64 sectors in C order */
  GArray          *done_ns;    /* SimTime of each C */
  guint            max_q_in_flight;
} Fixture;

static void
record (gpointer data, const TraceRecord *rec)
{
  Fixture *f = data;
  guint64 sector = rec->sector;
  if (rec->action == TRACE_ACT_ISSUE)
    {
      g_array_append_val (f->issued, sector);
      /* The queue counts the request before it traces D. */
      f->max_q_in_flight = MAX (f->max_q_in_flight, f->q->in_flight);
    }
  else if (rec->action == TRACE_ACT_COMPLETE)
    {
      SimTime t = rec->time_ns;
      g_array_append_val (f->completed, sector);
      g_array_append_val (f->done_ns, t);
    }
}

/* 20 ms per request plus 10 ns per byte (100 MB/s): every time is exact. */
static const char fixed_model[] =
  "[device]\nkind = fixed\noverhead = 20ms\nbandwidth = 100MB/s\n";

static void
fixture_setup (Fixture *f, const char *model_text, const SimLoopConfig *loop)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  limits.nr_requests = 1024;
  limits.max_sectors = loop ? loop->max_sectors : 1024;
  /* Requests of up to 2 MiB are cut into pieces here: no segment limit in
   * the way (test_scenario_segments checks the kernel's 128). */
  limits.max_segments = 1024;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", model_text, &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  if (loop)
    sim_device_set_loop (f->dev, loop);
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  SchedQueue *e = sched_queue_new (sched_ops_lookup ("none"), f->q, f->sim, 1000, kf,
                                   "sched none", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (f->q, e);
  f->issued = g_array_new (FALSE, FALSE, sizeof (guint64));
  f->completed = g_array_new (FALSE, FALSE, sizeof (guint64));
  f->done_ns = g_array_new (FALSE, FALSE, sizeof (SimTime));
  sim_queue_set_trace (f->q, record, f);
}

static void
fixture_teardown (Fixture *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_array_unref (f->issued);
  g_array_unref (f->completed);
  g_array_unref (f->done_ns);
}

static void
bio_done (Sim *sim, SimBio *bio, SimTime now)
{
}

static SimIoContext ioc = { .pid = 1, .comm = "t", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };

static void
submit (Fixture *f, guint64 sector, guint32 nr)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = SIM_OP_READ;
  bio->flags = SIM_BIO_SYNC;
  bio->ioc = &ioc;
  bio->end_io = bio_done;
  g_assert_true (sim_queue_submit_bio (f->q, bio, NULL));
}

/* 64 scattered 4 KiB reads at once on a queue_depth-1 model: through the
 * loop all 64 are dispatched (the elevator sees 64 in flight) while the
 * model serves one at a time in arrival order; without the loop the block
 * layer sees the model's depth of 1. */
static void
test_depth_seen_by_block_layer (void)
{
  static const struct { gboolean loop; guint tags; guint n; guint want_in_flight; } cases[] = {
    { TRUE, 128, 64, 64 },
    { TRUE, 128, 200, 128 },
    { TRUE, 16, 64, 16 },
    { FALSE, 0, 64, 1 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      SimLoopConfig cfg;
      sim_loop_config_init (&cfg);
      cfg.tags = cases[c].tags;
      Fixture f;
      fixture_setup (&f, fixed_model, cases[c].loop ? &cfg : NULL);
      for (guint i = 0; i < cases[c].n; i++)
        submit (&f, (guint64) ((i * 7919u) % 1000u) * 1000u, 8);
      sim_run_until (f.sim, SIM_TIME_NEVER);
      g_assert_cmpuint (f.max_q_in_flight, ==, cases[c].want_in_flight);
      g_assert_cmpuint (f.dev->max_in_flight, ==, cases[c].want_in_flight);
      g_assert_cmpuint (f.completed->len, ==, cases[c].n);
      /* One server, FIFO: completions in dispatch order, one service time
       * (20 ms + 4096 * 10 ns) apart. */
      const SimTime svc = 20 * MS + 4096 * 10;
      for (guint i = 0; i < cases[c].n; i++)
        {
          g_assert_cmpuint (g_array_index (f.completed, guint64, i), ==,
                            g_array_index (f.issued, guint64, i));
          g_assert_cmpint (g_array_index (f.done_ns, SimTime, i), ==, (SimTime) (i + 1) * svc);
        }
      if (cases[c].loop)
        {
          g_assert_cmpuint (f.dev->loop->max_model_in_flight, ==, 1);
          g_assert_cmpuint (f.dev->loop->pieces, ==, cases[c].n);
          g_assert_cmpuint (f.dev->loop->max_pending, ==, cases[c].want_in_flight - 1);
          g_assert_cmpuint (f.dev->loop->requests, ==, cases[c].n);
        }
      fixture_teardown (&f);
    }
}

/* One request of @sectors cut into pieces of max_io: their number, and the
 * completion when the last is served (FIFO, one server, each piece paying
 * the 20 ms overhead). */
static void
test_pieces (void)
{
  static const struct { guint32 sectors; guint32 max_io_sectors; guint pieces; } cases[] = {
    { 4096, 2048, 2 },    /* 2 MiB with loop_max_io 1 MiB */
    { 2048, 2048, 1 },
    { 2560, 2048, 2 },    /* 1280 KiB: 1 MiB + 256 KiB */
    { 4096, 8, 512 },     /* 4 KiB pieces */
    { 9, 8, 2 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      SimLoopConfig cfg;
      sim_loop_config_init (&cfg);
      cfg.max_sectors = 4096;
      cfg.max_io_sectors = cases[c].max_io_sectors;
      g_assert_cmpuint (sim_loop_pieces_for (&cfg, cases[c].sectors), ==, cases[c].pieces);
      Fixture f;
      fixture_setup (&f, fixed_model, &cfg);
      submit (&f, 0, cases[c].sectors);
      sim_run_until (f.sim, SIM_TIME_NEVER);
      g_assert_cmpuint (f.completed->len, ==, 1);
      g_assert_cmpuint (f.dev->loop->pieces, ==, cases[c].pieces);
      SimTime want = (SimTime) cases[c].pieces * 20 * MS
                     + (SimTime) cases[c].sectors * SIM_SECTOR_BYTES * 10;
      g_assert_cmpint (g_array_index (f.done_ns, SimTime, 0), ==, want);
      g_assert_cmpuint (f.dev->completed, ==, 1);
      fixture_teardown (&f);
    }
}

/* Pieces of one request on a model with parallelism 2 and queue_depth 2
 * are served at once: the request completes after one piece's time. */
static void
test_pieces_in_parallel (void)
{
  SimLoopConfig cfg;
  sim_loop_config_init (&cfg);
  cfg.max_sectors = 4096;
  Fixture f;
  fixture_setup (&f, "[device]\nkind = fixed\noverhead = 20ms\nbandwidth = 100MB/s\n"
                     "parallelism = 2\nqueue_depth = 2\n", &cfg);
  submit (&f, 0, 4096);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.dev->loop->pieces, ==, 2);
  g_assert_cmpuint (f.dev->loop->max_model_in_flight, ==, 2);
  g_assert_cmpint (g_array_index (f.done_ns, SimTime, 0), ==, 20 * MS + 2048 * 512 * 10);
  fixture_teardown (&f);
}

/* A model that takes 32 commands at once sees at most max_background of
 * the loop's pieces (FUSE's background limit: 12 for a server that keeps
 * the kernel's default, 512 as iosim emulate sets it), never more than its
 * own queue_depth; the rest wait in order. */
static void
test_max_background (void)
{
  static const struct { guint max_background; guint model_depth; guint want; } cases[] = {
    { SIM_LOOP_FUSE_DEFAULT_MAX_BACKGROUND, 32, 12 },
    { SIM_LOOP_DEFAULT_MAX_BACKGROUND, 32, 32 },
    { 64, 32, 32 },
    { 1, 32, 1 },
    { 64, 4, 4 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      SimLoopConfig cfg;
      sim_loop_config_init (&cfg);
      cfg.max_background = cases[c].max_background;
      g_autofree char *text = g_strdup_printf ("%sparallelism = 32\nqueue_depth = %u\n",
                                               fixed_model, cases[c].model_depth);
      Fixture f;
      fixture_setup (&f, text, &cfg);
      for (guint i = 0; i < 64; i++)
        submit (&f, (guint64) i * 1000u, 8);
      sim_run_until (f.sim, SIM_TIME_NEVER);
      g_assert_cmpuint (f.max_q_in_flight, ==, 64);
      g_assert_cmpuint (f.dev->loop->max_model_in_flight, ==, cases[c].want);
      g_assert_cmpuint (f.dev->loop->max_pending, ==, 64 - cases[c].want);
      /* want pieces are served at once, in rounds of one service time. */
      const SimTime svc = 20 * MS + 4096 * 10;
      SimTime last = g_array_index (f.done_ns, SimTime, f.done_ns->len - 1);
      g_assert_cmpint (last, ==, (SimTime) ((64 + cases[c].want - 1) / cases[c].want) * svc);
      fixture_teardown (&f);
    }
}

/* What the elevators are told: a loop device is non-rotational unless
 * loop_rotational says otherwise (loop_update_rotational on a FUSE file). */
static void
test_rotational (void)
{
  static const struct { SimLoopRotational rot; const char *model_rot; gboolean want; } cases[] = {
    { SIM_LOOP_ROT_OFF, "true", FALSE },
    { SIM_LOOP_ROT_ON, "false", TRUE },
    { SIM_LOOP_ROT_INHERIT, "true", TRUE },
    { SIM_LOOP_ROT_INHERIT, "false", FALSE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      SimLoopConfig cfg;
      sim_loop_config_init (&cfg);
      cfg.rotational = cases[c].rot;
      g_autofree char *text = g_strdup_printf ("%srotational = %s\n", fixed_model,
                                               cases[c].model_rot);
      Fixture f;
      fixture_setup (&f, text, &cfg);
      g_assert_cmpint (sim_device_rotational (f.dev), ==, cases[c].want);
      g_assert_cmpint (sched_device_rotational (f.q->elevator), ==, cases[c].want);
      g_assert_cmpuint (sched_device_queue_depth (f.q->elevator), ==, SIM_LOOP_DEFAULT_TAGS);
      fixture_teardown (&f);
    }
  SimLoopRotational r;
  g_assert_true (sim_loop_rotational_parse ("inherit", &r) && r == SIM_LOOP_ROT_INHERIT);
  g_assert_true (sim_loop_rotational_parse ("1", &r) && r == SIM_LOOP_ROT_ON);
  g_assert_false (sim_loop_rotational_parse ("maybe", &r));
}

/* A device behind a loop driver is not attached to a simulated adapter. */
static void
test_no_adapter (void)
{
  SimLoopConfig cfg;
  sim_loop_config_init (&cfg);
  Fixture f;
  fixture_setup (&f, fixed_model, &cfg);
  SimTopology *topo = sim_topology_new (f.sim);
  g_autoptr (GError) error = NULL;
  SimAdapter *a = sim_topology_add_adapter (topo, "a", 0, 0, 4, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sim_device_attach (f.dev, a, NULL, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_PARAM);
  g_assert_nonnull (strstr (error->message, "loop driver"));
  sim_topology_free (topo);
  fixture_teardown (&f);
}

/* ---- scenario level ---------------------------------------------------- */

static SimRunResult *
run_text (const char *text, guint run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "loop", NULL, NULL, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, run, NULL, &error);
  g_assert_no_error (error);
  return r;
}

static const SimDeviceResult *
device0 (const SimRunResult *r)
{
  return g_ptr_array_index (r->devices, 0);
}

/* A libaio process with iodepth 64 keeps 64 in flight at the block layer
 * of a queue_depth-1 model through the loop, one without the loop. */
static void
test_scenario_iodepth (void)
{
  static const struct { const char *via; guint want_max; } cases[] = {
    { "via = loop\n", 64 },
    { "", 1 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[sim]\nduration = 2s\n"
        "[device d]\nkind = fixed\noverhead = 5ms\nbandwidth = 100MB/s\nsched = mq-deadline\n%s"
        "[process p]\nop = read\npattern = random\nio = direct\nengine = libaio\n"
        "iodepth = 64\nbs = 4KiB\n", cases[c].via);
      g_autoptr (SimRunResult) r = run_text (text, 0);
      const SimDeviceResult *d = device0 (r);
      g_assert_cmpint (d->via_loop, ==, cases[c].via[0] != '\0');
      if (d->via_loop)
        {
          g_assert_cmpuint (d->loop.max_in_flight, ==, cases[c].want_max);
          g_assert_cmpuint (d->loop.max_model_in_flight, ==, 1);
          g_assert_cmpfloat (d->mean_in_flight, >, 63.0);
          g_assert_cmpfloat (d->loop.mean_model_in_flight, >, 0.99);
          g_assert_cmpuint (d->loop.tags, ==, 128);
          g_assert_false (d->loop.rotational);
        }
      else
        g_assert_cmpfloat (d->mean_in_flight, <=, 1.0);
      /* The model's one server is the bottleneck either way. */
      g_assert_cmpuint (d->counters.completed, >=, 390);
      g_assert_cmpuint (d->counters.completed, <=, 400);
    }
}

/* Sequential 2 MiB direct reads at iodepth 1 on a fixed-rate device:
 * every read takes n * 20 ms + 2 MiB * 10 ns, where n is the number of
 * commands the model sees (requests without the loop, pieces with it), so
 * the throughput is 2 MiB / that, exactly; the loop costs only the extra
 * per-piece overheads. */
static void
test_scenario_throughput (void)
{
  /* max_segments = 1024 lifts the segment limit so that requests are as
   * large as max_sectors allows; without it 128 scattered 4 KiB pages
   * make every request 512 KiB, as the kernel's are. */
  static const struct { const char *keys; guint commands_per_read; } cases[] = {
    { "max_sectors_kb = 1024\nmax_segments = 1024\n", 2 },  /* direct: two 1 MiB requests */
    { "max_sectors_kb = 512\n", 4 },
    { "max_sectors_kb = 1024\n", 4 },                      /* 128 segments: 512 KiB requests */
    { "via = loop\nloop_max_sectors_kb = 2048\nmax_segments = 1024\n", 2 }, /* one request, two 1 MiB pieces */
    { "via = loop\nmax_segments = 1024\n", 3 },           /* 1280 KiB (1 MiB + 256 KiB) + 768 KiB */
    { "via = loop\n", 4 },                                 /* 512 KiB requests, one piece each */
    { "via = loop\nloop_max_io = 256KiB\n", 8 },
  };
  const guint n_reads = 32;
  const double bytes = 2.0 * 1024 * 1024;
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 20ms\nbandwidth = 100MB/s\nsched = none\n%s"
        "[process p]\nop = read\npattern = sequential\nio = direct\nbs = 2MiB\nsize = 64MiB\n",
        cases[c].keys);
      g_autoptr (SimRunResult) r = run_text (text, 0);
      const SimProcessResult *p = g_ptr_array_index (r->processes, 0);
      g_assert_cmpuint (p->ios, ==, n_reads);
      SimTime per_read = (SimTime) cases[c].commands_per_read * 20 * MS + (SimTime) (bytes * 10);
      g_assert_cmpint (p->active_ns, ==, (SimTime) n_reads * per_read);
      double want_mb_per_s = bytes / ((double) per_read / 1e9) / 1e6;
      g_assert_cmpfloat_with_epsilon (p->mb_per_s, want_mb_per_s, 1e-9 * want_mb_per_s);
      const SimDeviceResult *d = device0 (r);
      if (d->via_loop)
        g_assert_cmpuint (d->loop.pieces, ==, n_reads * cases[c].commands_per_read);
      else
        g_assert_cmpuint (d->counters.completed, ==, n_reads * cases[c].commands_per_read);
    }

  /* A device that streams (no overhead for a command continuing the last
   * one): only the very first command pays 20 ms, so the loop's pieces cost
   * nothing and the throughput via loop is the direct one, to the ns. */
  static const char *const streaming[] = { "", "via = loop\n", "via = loop\nloop_max_io = 64KiB\n" };
  SimTime active[G_N_ELEMENTS (streaming)];
  for (guint c = 0; c < G_N_ELEMENTS (streaming); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 20ms\nsequential_overhead = 0\n"
        "bandwidth = 100MB/s\nsched = none\n%s"
        "[process p]\nop = read\npattern = sequential\nio = direct\nbs = 2MiB\nsize = 64MiB\n",
        streaming[c]);
      g_autoptr (SimRunResult) r = run_text (text, 0);
      active[c] = ((const SimProcessResult *) g_ptr_array_index (r->processes, 0))->active_ns;
      g_assert_cmpint (active[c], ==, 20 * MS + (SimTime) (n_reads * bytes * 10));
    }
  g_assert_cmpint (active[1], ==, active[0]);
  g_assert_cmpint (active[2], ==, active[0]);
}

/* blk-mq's request count on the loop device: its 128 tags with none, 256
 * with an elevator; 200 outstanding direct reads sleep for a request only
 * under none (and when nr_requests is set lower). */
static void
test_scenario_nr_requests (void)
{
  static const struct { const char *sched; const char *extra; gboolean sleeps; } cases[] = {
    { "none", "", TRUE },
    { "mq-deadline", "", FALSE },
    { "mq-deadline", "nr_requests = 128\n", TRUE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[sim]\nduration = 1s\n"
        "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\nvia = loop\nsched = %s\n%s"
        "[process p]\nop = read\npattern = random\nio = direct\nengine = libaio\n"
        "iodepth = 200\nbs = 4KiB\n", cases[c].sched, cases[c].extra);
      g_autoptr (SimRunResult) r = run_text (text, 0);
      const SimDeviceResult *d = device0 (r);
      g_assert_cmpint (d->counters.sleeps > 0, ==, cases[c].sleeps);
      g_assert_cmpuint (d->loop.max_in_flight, ==, 128);
    }
}

/* The loop's rotational flag is what the elevators' idling looks at: cfq
 * idles for a sequential reader against a random one on a disk model only
 * when the loop device says rotational (loop_rotational = true, or inherit
 * from a rotational model); by default (a FUSE file: non-rotational, and
 * 128 tags make cfq see a queueing device) it does not, and the two
 * readers alternate request by request. */
static void
test_scenario_rotational_idling (void)
{
  static const struct { const char *rot; gboolean idles; } cases[] = {
    { "false", FALSE },
    { "true", TRUE },
    { "inherit", TRUE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[sim]\nduration = 5s\n"
        "[device sda]\nmodel = disk-7200-sata\nqueue_depth = 1\nvia = loop\nsched = cfq\n"
        "loop_rotational = %s\n"
        "[process sequential]\nop = read\npattern = sequential\nio = direct\nbs = 64KiB\n"
        "offset = 10GiB\n"
        "[process random]\nop = read\npattern = random\nio = direct\nbs = 4KiB\n", cases[c].rot);
      g_autoptr (SimRunResult) r = run_text (text, 0);
      const SimProcessResult *seq = g_ptr_array_index (r->processes, 0);
      const SimProcessResult *rnd = g_ptr_array_index (r->processes, 1);
      g_assert_cmpstr (seq->name, ==, "sequential");
      g_assert_cmpint (device0 (r)->loop.rotational, ==, cases[c].idles);
      if (cases[c].idles)
        g_assert_cmpuint (seq->ios, >, 5 * rnd->ios);
      else
        g_assert_cmpuint (seq->ios, <=, rnd->ios + 1);
    }
}

static void
test_scenario_bad (void)
{
  static const struct { const char *keys; const char *needle; } cases[] = {
    { "via = nbd\n", "via: 'nbd' is not supported" },
    { "via = loop\nloop_max_io = 0\n", "loop_max_io" },
    { "via = loop\nloop_max_io = 6KiB\n", "loop_max_io" },
    { "via = loop\nloop_max_io = 1GiB\n", "loop_max_io" },
    { "via = loop\nloop_tags = 0\n", "loop_tags" },
    { "via = loop\nloop_max_sectors_kb = 1\n", "loop_max_sectors_kb" },
    { "via = loop\nloop_rotational = maybe\n", "loop_rotational" },
    { "via = loop\nloop_max_background = 0\n", "loop_max_background" },
    { "via = loop\nloop_max_background = 70000\n", "loop_max_background" },
    { "loop_max_io = 1MiB\n", "loop_max_io: only with via = loop" },
    { "via = none\nloop_tags = 64\n", "loop_tags: only with via = loop" },
    { "via = loop\nadapter = a\n", "via" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *text = g_strdup_printf (
        "[adapter a]\ncan_queue = 4\n[device d]\nkind = fixed\n%s[process p]\nsize = 1MiB\n",
        cases[c].keys);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (text, "bad", NULL, NULL, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      if (strstr (error->message, cases[c].needle) == NULL
          || strstr (error->message, "[device d]") == NULL)
        g_error ("case %u: '%s' does not name '[device d]' and '%s'", c, error->message,
                 cases[c].needle);
    }
}

static char *
run_json (const char *text)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "loop", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint i = 0; i < scenario_n_runs (s); i++)
    {
      SimRunResult *r = scenario_run (s, i, NULL, &error);
      g_assert_no_error (error);
      g_ptr_array_add (runs, r);
    }
  g_autoptr (GString) out = g_string_new (NULL);
  for (guint i = 0; i < runs->len; i++)
    sim_report_run_text (out, g_ptr_array_index (runs, i));
  g_autofree char *json = sim_report_json (scenario_name (s), scenario_seed (s), runs);
  g_string_append (out, json);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Same seed, same bytes; the loop's figures are in the text and JSON only
 * for a device via = loop. */
static void
test_scenario_report (void)
{
  const char *text =
    "[sim]\nduration = 1s\n"
    "[device d]\nmodel = disk-7200-sata\nvia = loop\nsched = bfq,mq-deadline\n"
    "[device e]\nkind = fixed\nsched = none\n"
    "[process p]\ndevice = d\nop = read\npattern = random\nio = direct\nengine = libaio\n"
    "iodepth = 16\nbs = 64KiB\n"
    "[process q]\ndevice = e\nop = read\nio = direct\nbs = 64KiB\n";
  g_autofree char *a = run_json (text);
  g_autofree char *b = run_json (text);
  g_assert_cmpstr (a, ==, b);
  g_assert_nonnull (strstr (a, "d                via loop: tags 128, max_io 1024 KiB, max_background 512"));
  g_assert_null (strstr (a, "e                via loop"));
  g_assert_nonnull (strstr (a, "\"via\" : \"loop\""));
  g_assert_nonnull (strstr (a, "\"max_in_flight\" : 16"));
  /* Once per run, for d only. */
  guint n = 0;
  for (const char *p = a; (p = strstr (p, "\"via\" : \"loop\"")) != NULL; p++)
    n++;
  g_assert_cmpuint (n, ==, 2);
}

/* --timeseries gains the pieces at the model and those waiting, for a
 * device via loop only. */
static void
test_scenario_timeseries (void)
{
  const char *text =
    "[sim]\nduration = 2s\n"
    "[device d]\nkind = fixed\noverhead = 5ms\nqueue_depth = 16\nparallelism = 16\nvia = loop\n"
    "loop_max_background = 12\nsched = none\n"
    "[device e]\nkind = fixed\nsched = none\n"
    "[process p]\ndevice = d\nop = read\npattern = random\nio = direct\nengine = libaio\n"
    "iodepth = 32\nbs = 4KiB\n"
    "[process q]\ndevice = e\nop = read\nio = direct\nbs = 4KiB\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "ts", NULL, NULL, &error);
  g_assert_no_error (error);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  ScenarioOutputs out = { .timeseries = f };
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &out, &error);
  g_assert_no_error (error);
  fclose (f);
  g_assert_nonnull (strstr (buf, ",device,d,model_in_flight,12\n"));
  g_assert_nonnull (strstr (buf, ",device,d,pieces_waiting,20\n"));
  g_assert_nonnull (strstr (buf, ",device,e,in_flight,"));
  g_assert_null (strstr (buf, ",device,e,model_in_flight"));
  free (buf);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/loop/depth-seen-by-block-layer", test_depth_seen_by_block_layer);
  g_test_add_func ("/sim/loop/pieces", test_pieces);
  g_test_add_func ("/sim/loop/pieces-in-parallel", test_pieces_in_parallel);
  g_test_add_func ("/sim/loop/max-background", test_max_background);
  g_test_add_func ("/sim/loop/rotational", test_rotational);
  g_test_add_func ("/sim/loop/no-adapter", test_no_adapter);
  g_test_add_func ("/sim/loop/scenario-iodepth", test_scenario_iodepth);
  g_test_add_func ("/sim/loop/scenario-throughput", test_scenario_throughput);
  g_test_add_func ("/sim/loop/scenario-nr-requests", test_scenario_nr_requests);
  g_test_add_func ("/sim/loop/scenario-rotational-idling", test_scenario_rotational_idling);
  g_test_add_func ("/sim/loop/scenario-bad", test_scenario_bad);
  g_test_add_func ("/sim/loop/scenario-report", test_scenario_report);
  g_test_add_func ("/sim/loop/scenario-timeseries", test_scenario_timeseries);
  return g_test_run ();
}
