/* test-raw-io.c — raw devices of 2.4 and 2.5.35 (issue 15, report 4):
 * the requests each path builds on the device, the plug that an aio-port
 * submission leaves in place until the machine's plug list is run, the
 * CPU each path costs by its profile, the scenario errors, and the
 * directions the mechanism gives on the shipped 40-disk study.
 *
 * Sources the expectations follow: 2.4 fs/buffer.c brw_kiovec
 * (KIO_MAX_SECTORS chunks, one buffer_head per sector), 2.5.32 aio raw
 * port (aio_max_size = 128 KiB, brw_kvec_async), 2.5 fs/direct-io.c and
 * bio_add_page (whole pages up to max_sectors), the async-DIO patch's
 * direct_io_worker (is_async: blk_run_queues, return), 2.5.3x ll_rw_blk.c
 * (blk_plug_list, no unplug timer or threshold), MAX_SECTORS = 255. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "host-test.h"

#define run_text(text, sets) host_test_run_text ((text), "raw", (sets), 0)
#define profile(name) host_test_profile (name)

static const SimProcessResult *
process0 (const SimRunResult *r)
{
  return g_ptr_array_index (r->processes, 0);
}

static const SimDeviceResult *
device (const SimRunResult *r, guint i)
{
  return g_ptr_array_index (r->devices, i);
}

/* One process reading (or writing) 8 x bs from a fixed-rate device, a
 * queue of MAX_SECTORS = 255 unless a row says otherwise. */
static const char one_disk[] =
  "[host]\nkernel = 2.4\n"
  "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\nqueue_depth = 32\n"
  "max_sectors = 255\nsched = noop\n"
  "[process p]\ndevice = d\nio = raw\npattern = sequential\nbs = 256KiB\nsize = 2MiB\n";

typedef struct {
  const char *name;
  const char *sets[6];
  guint64     bios_per_io;      /* bios (buffer_heads) the queue saw per I/O */
  guint64     requests_per_io;  /* completed requests per I/O */
  guint64     plugs_per_io;     /* times the queue plugged (and was run) per I/O */
  guint64     iocbs_per_io;     /* io_submit()ed iocbs per I/O */
  guint64     short_per_io;     /* short events reaped per I/O */
} SizeCase;

/* Per 256 KiB I/O (512 sectors), by the sources:
 *  - 2.4: 512 one-sector bhs merge up to 255 sectors: 255 + 255 + 2;
 *    one chunk (512 KiB = 1024 sectors is more than the I/O);
 *  - 2.4, 1 MiB I/Os: two chunks of 1024 sectors, each 4 x 255 + 4, each
 *    submitted into an empty queue and run by kiobuf_wait_for_io;
 *  - 2.5.35 read(): bio_add_page stops at whole pages: 248 + 248 + 16,
 *    no merges; with the default 1024-sector queue one 512-sector bio;
 *    with 60-sector requests 9 x 56 + 8 (2.4's bhs: 8 x 60 + 32);
 *  - 2.5.35 aio raw port: two 128 KiB iocbs, each 256 bhs: 255 + 1,
 *    the first one's event short; with 1024-sector requests still one
 *    256-sector request per iocb;
 *  - 2.5.35 async-DIO: one iocb per I/O, the bios of read(). */
static const SizeCase size_cases[] = {
  { "2.4", { NULL }, 512, 3, 1, 0, 0 },
  { "2.4-1MiB", { "process p.bs=1MiB", "process p.size=8MiB", NULL }, 2048, 10, 2, 0, 0 },
  { "2.5.35-sync", { "host.kernel=2.5.35", NULL }, 3, 3, 1, 0, 0 },
  { "2.5.35-sync-1024", { "host.kernel=2.5.35", "device d.max_sectors=1024", NULL },
    1, 1, 1, 0, 0 },
  { "2.5.35-sync-60", { "host.kernel=2.5.35", "device d.max_sectors=60", NULL }, 10, 10, 1, 0, 0 },
  { "2.4-60", { "device d.max_sectors=60", NULL }, 512, 9, 1, 0, 0 },
  { "2.5.35-aio-port", { "host.kernel=2.5.35", "host.aio=raw-port", "process p.engine=libaio",
                         NULL }, 512, 4, 2, 2, 1 },
  { "2.5.35-aio-port-1024", { "host.kernel=2.5.35", "host.aio=raw-port", "process p.engine=libaio",
                              "device d.max_sectors=1024", NULL }, 512, 2, 2, 2, 1 },
  { "2.5.35-aio-port-write", { "host.kernel=2.5.35", "host.aio=raw-port",
                               "process p.engine=libaio", "process p.op=write", NULL },
    512, 4, 2, 2, 1 },
  { "2.5.35-async-dio", { "host.kernel=2.5.35", "process p.engine=libaio", NULL }, 3, 3, 1, 1, 0 },
  { "2.5.35-async-dio-1024", { "host.kernel=2.5.35", "process p.engine=libaio",
                               "device d.max_sectors=1024", NULL }, 1, 1, 1, 1, 0 },
  { "2.5.35-async-dio-write", { "host.kernel=2.5.35", "host.aio=dio", "process p.engine=libaio",
                                "process p.op=write", NULL }, 3, 3, 1, 1, 0 },
};

static void
test_request_sizes (gconstpointer data)
{
  const SizeCase *c = data;
  g_autoptr (SimRunResult) r = run_text (one_disk, c->sets);
  const SimProcessResult *p = process0 (r);
  const SimDeviceResult *d = device (r, 0);
  SimOp op = strcmp (p->op, "write") == 0 ? SIM_OP_WRITE : SIM_OP_READ;
  g_assert_cmpuint (p->ios, ==, 8);
  g_assert_cmpuint (d->counters.bios, ==, p->ios * c->bios_per_io);
  g_assert_cmpuint (d->counters.ios[op], ==, p->ios * c->requests_per_io);
  g_assert_cmpuint (d->counters.bytes[op], ==, p->bytes);
  g_assert_cmpuint (d->counters.plugs, ==, p->ios * c->plugs_per_io);
  /* Every plug was removed by a run of the plug list: a task's (2.4
   * kiobuf_wait_for_io, 2.5 dio, the async-DIO submitter) or, for the
   * aio port, the daemon's. */
  g_assert_cmpuint (d->counters.unplugs_io + d->counters.unplugs_timer, ==, d->counters.plugs);
  g_assert_cmpuint (d->counters.unplugs_thresh, ==, 0);
  gboolean port = strstr (c->name, "aio-port") != NULL;
  g_assert_cmpuint (d->counters.unplugs_timer, ==, port ? d->counters.plugs : 0);
  /* The aio port moves 128 KiB per iocb: a 256 KiB I/O is an iocb, its
   * short event, and an iocb for the rest. */
  g_assert_cmpuint (p->iocbs, ==, c->iocbs_per_io * p->ios);
  g_assert_cmpuint (p->short_events, ==, c->short_per_io * p->ios);
}

/* The aio port leaves its queue plugged: with no other task waiting on
 * I/O only the writeback daemon's run (every kupdate_interval) starts
 * the requests, so each 128 KiB iocb waits for the next tick and a
 * 256 KiB I/O (two iocbs) for two. */
static void
test_aio_waits_for_kupdate (void)
{
  const SimTime tick_ns[] = { 5 * SIM_NS_PER_S, SIM_NS_PER_S };
  for (guint i = 0; i < G_N_ELEMENTS (tick_ns); i++)
    {
      g_autofree char *tick = g_strdup_printf ("host.kupdate_interval=%" G_GINT64_FORMAT "ms",
                                               (gint64) (tick_ns[i] / SIM_NS_PER_MS));
      const char *const sets[] = { "host.kernel=2.5.35", "host.aio=raw-port",
                                   "process p.engine=libaio", tick, NULL };
      g_autoptr (SimRunResult) r = run_text (one_disk, sets);
      const SimProcessResult *p = process0 (r);
      const SimDeviceResult *d = device (r, 0);
      g_test_message ("tick %s: lat mean %.0f ns, p50 %" G_GINT64_FORMAT, tick,
                      p->lat_mean_ns, (gint64) p->lat_p50_ns);
      g_assert_cmpuint (p->ios, ==, 8);
      g_assert_cmpuint (d->counters.unplugs_io, ==, 0);
      g_assert_cmpuint (d->counters.unplugs_timer, ==, 16);
      /* Two ticks per I/O, less what an iocb's own service takes off the
       * second wait (well under 10 ms on this device). */
      g_assert_cmpfloat (p->lat_mean_ns, >=, 2.0 * (double) tick_ns[i] - 10e6);
      g_assert_cmpfloat (p->lat_mean_ns, <=, 2.0 * (double) tick_ns[i] + 10e6);
      g_assert_cmpint (r->elapsed_ns, >=, 16 * tick_ns[i]);
    }
}

/* blk_plug_list is the machine's: a synchronous reader on another disk
 * runs it each time it waits, and that starts the aio process's plugged
 * requests long before the daemon's tick. */
static void
test_sync_waiter_runs_every_queue (void)
{
  static const char two_disks[] =
    "[host]\nkernel = 2.5.35\naio = raw-port\n"
    "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\nqueue_depth = 32\n"
    "max_sectors = 255\nsched = noop\n"
    "[device e]\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\nqueue_depth = 32\n"
    "max_sectors = 255\nsched = noop\n"
    "[process a]\ndevice = d\nio = raw\nengine = libaio\npattern = sequential\nbs = 256KiB\n"
    "size = 2MiB\n"
    "[process s]\ndevice = e\nio = raw\npattern = sequential\nbs = 64KiB\nsize = 64MiB\n";
  g_autoptr (SimRunResult) r = run_text (two_disks, NULL);
  const SimProcessResult *a = g_ptr_array_index (r->processes, 0);
  const SimDeviceResult *d = device (r, 0);
  g_assert_cmpstr (a->name, ==, "a");
  g_assert_cmpuint (a->ios, ==, 8);
  /* Woken by the reader's blk_run_queues, never by the 5 s daemon. */
  g_assert_cmpuint (d->counters.unplugs_timer, ==, 0);
  g_assert_cmpuint (d->counters.unplugs_io, ==, d->counters.plugs);
  g_assert_cmpfloat (a->lat_mean_ns, <, 100e6);
}

/* 2.6 queues (no [host] kernel) keep the 3 ms timer: the existing
 * O_DIRECT path and its unplug are unchanged, and io = raw is refused. */
static void
test_raw_needs_an_era (void)
{
  g_autoptr (GError) error = NULL;
  const char *const sets[] = { "host.kernel=2.6", NULL };
  g_autoptr (Scenario) s = scenario_load_data (one_disk, "raw", NULL, sets, &error);
  g_assert_null (s);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "[process p] io"));
}

typedef struct {
  const char *name;
  const char *sets[4];
  const char *message;      /* a part of the GError's message */
} BadCase;

static const BadCase bad_cases[] = {
  { "kernel", { "host.kernel=2.5.36", NULL }, "[host] kernel: '2.5.36'" },
  { "aio-2.4", { "process p.engine=libaio", NULL }, "[process p] engine: 2.4 raw devices" },
  { "kupdate-2.6", { "host.kernel=2.6", "process p.io=direct", "host.kupdate_interval=1s", NULL },
    "[host] kupdate_interval" },
  { "aio-patch-2.4", { "host.aio=dio", NULL }, "[host] aio: chooses" },
  { "aio-patch-name", { "host.kernel=2.5.35", "host.aio=kvec", NULL }, "[host] aio: 'kvec'" },
  { "max_sectors", { "device d.max_sectors=4", NULL }, "[device d] max_sectors" },
  { "io", { "process p.io=rawish", NULL }, "[process p] io: 'rawish'" },
};

static void
test_bad_scenario (gconstpointer data)
{
  const BadCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (one_disk, "raw", NULL, c->sets, &error);
  g_assert_null (s);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, c->message));
}

/* The same inputs give the same run: aio at depth 4 on one CPU (the
 * plug list, the daemon's ticks, reissued iocbs, unfair spinlocks). */
static void
test_deterministic (void)
{
  const char *const sets[] = { "host.kernel=2.5.35", "host.aio=raw-port", "process p.engine=libaio",
                               "process p.iodepth=4", "host.kupdate_interval=3ms", NULL };
  g_autofree char *text = g_strdup_printf ("[host]\ncpus = 1\nprofile = 2.5-raw\n%s",
                                           one_disk + strlen ("[host]\n"));
  g_autoptr (SimRunResult) a = run_text (text, sets);
  g_autoptr (SimRunResult) b = run_text (text, sets);
  g_assert_cmpuint (a->events, ==, b->events);
  g_assert_cmpint (a->elapsed_ns, ==, b->elapsed_ns);
  g_assert_cmpfloat (process0 (a)->lat_mean_ns, ==, process0 (b)->lat_mean_ns);
  g_assert_cmpfloat (a->cpu.sy, ==, b->cpu.sy);
}

/* ---- CPU per I/O, from the profiles ------------------------------------- */

static double
call_ns (const HostProfile *p, HostPathId id)
{
  return (double) host_steps_cpu_ns (p, p->paths[id].call);
}

static double
each_ns (const HostProfile *p, HostPathId id)
{
  return (double) host_steps_cpu_ns (p, p->paths[id].each);
}

typedef struct {
  const char *name;
  const char *profile;
  const char *sets[5];
  guint64     submit_calls;  /* calls of the submit path per I/O (read(), dio_setup) */
  guint64     submit_units;  /* its per-unit steps per I/O */
  guint64     aio_calls;     /* io_submit()s per I/O */
  guint64     aio_units;     /* aio_submit's per-unit steps per I/O */
  guint64     bhs;           /* buffer_heads per I/O */
  guint64     requests;      /* completed requests per I/O */
  guint64     reaps;         /* io_getevents calls per I/O (one event each) */
} CpuCase;

/* Per 256 KiB I/O on one CPU, nothing contended: read() of 2.4 runs the
 * submit path's call steps once and a bh_submit per sector; read() of
 * 2.5.35 the submit path per bio (3); the aio port an io_submit per
 * 128 KiB iocb (aio_submit's call and one unit), a bh_submit per sector
 * and an io_getevents per event; the async-DIO patch one io_submit, then
 * read()'s direct I/O, and one io_getevents.  Completions: the complete
 * path per request, bh_complete per buffer_head. */
static const CpuCase cpu_cases[] = {
  { "2.4", "2.4-ext3", { NULL }, 1, 0, 0, 0, 512, 3, 0 },
  /* Two 512 KiB chunks inside one read(): the second chunk's bhs only. */
  { "2.4-1MiB", "2.4-ext3", { "process p.bs=1MiB", "process p.size=8MiB", NULL },
    1, 0, 0, 0, 2048, 10, 0 },
  { "2.5.35-sync", "2.5-raw", { "host.kernel=2.5.35", NULL }, 1, 3, 0, 0, 0, 3, 0 },
  { "2.5.35-aio-port", "2.5-raw", { "host.kernel=2.5.35", "host.aio=raw-port",
                                    "process p.engine=libaio", "host.kupdate_interval=1ms", NULL },
    0, 0, 2, 2, 512, 4, 2 },
  { "2.5.35-async-dio", "2.5-raw", { "host.kernel=2.5.35", "process p.engine=libaio", NULL },
    1, 3, 1, 1, 0, 3, 1 },
};

static double
cpu_per_io_ns (const CpuCase *c, const HostProfile *p)
{
  return (double) c->submit_calls * call_ns (p, HOST_PATH_SUBMIT)
         + (double) c->submit_units * each_ns (p, HOST_PATH_SUBMIT)
         + (double) c->aio_calls * call_ns (p, HOST_PATH_AIO_SUBMIT)
         + (double) c->aio_units * each_ns (p, HOST_PATH_AIO_SUBMIT)
         + (double) c->bhs * (each_ns (p, HOST_PATH_BH_SUBMIT) + each_ns (p, HOST_PATH_BH_COMPLETE))
         + (double) c->requests * (call_ns (p, HOST_PATH_COMPLETE) + each_ns (p, HOST_PATH_COMPLETE))
         + (double) c->reaps * (call_ns (p, HOST_PATH_AIO_REAP) + each_ns (p, HOST_PATH_AIO_REAP));
}

static void
test_cpu_per_io (gconstpointer data)
{
  const CpuCase *c = data;
  g_autofree char *text = g_strdup_printf ("[host]\ncpus = 1\nprofile = %s\n%s", c->profile,
                                           one_disk + strlen ("[host]\n"));
  g_autoptr (SimRunResult) r = run_text (text, c->sets);
  g_autoptr (HostProfile) p = profile (c->profile);
  const SimProcessResult *pr = process0 (r);
  g_assert_cmpuint (pr->ios, ==, 8);
  double sys = r->cpu.sy / 100.0 * (double) r->elapsed_ns;
  double expected = (double) pr->ios * cpu_per_io_ns (c, p);
  g_test_message ("%s: sys %.0f ns, expected %.0f (%.1f us per I/O)", c->name, sys, expected,
                  cpu_per_io_ns (c, p) / 1e3);
  /* The CPU model is exact with nothing contended (vmstat percentages
   * carry rounding only). */
  g_assert_cmpfloat (sys, >=, expected * 0.999);
  g_assert_cmpfloat (sys, <=, expected * 1.001);
}

/* Per-buffer_head paths cost more CPU per I/O than 2.5.35's direct I/O,
 * which hands the block layer a few large bios: what the profiles say
 * per step, multiplied by what each path does. */
static void
test_cpu_ordering (void)
{
  g_autoptr (HostProfile) p24 = profile ("2.4-ext3");
  g_autoptr (HostProfile) p25 = profile ("2.5-raw");
  double raw24 = cpu_per_io_ns (&cpu_cases[0], p24);
  double dio25 = cpu_per_io_ns (&cpu_cases[2], p25);
  double port25 = cpu_per_io_ns (&cpu_cases[3], p25);
  double adio25 = cpu_per_io_ns (&cpu_cases[4], p25);
  g_assert_cmpfloat (raw24, >, 5 * dio25);
  g_assert_cmpfloat (port25, >, 5 * dio25);
  g_assert_cmpfloat (adio25, >, dio25);
  g_assert_cmpfloat (adio25, <, 2 * dio25);
}

/* 2.5.3x SCSI queues use their adapter's host_lock as queue_lock: two
 * disks on one adapter take one lock (2.5-raw.ini scope = adapter), a
 * disk on its own adapter another. */
static void
test_adapter_lock (void)
{
  static const char text[] =
    "[host]\ncpus = 2\nprofile = 2.5-raw\nkernel = 2.5.35\n"
    "[adapter a]\nbandwidth = 160MB/s\n[adapter b]\nbandwidth = 160MB/s\n"
    "[device d]\ncount = 2\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\n"
    "queue_depth = 32\nmax_sectors = 255\nsched = noop\nadapter = a\n"
    "[device e]\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\nqueue_depth = 32\n"
    "max_sectors = 255\nsched = noop\nadapter = b\n"
    "[process p]\ndevice = d\nio = raw\npattern = sequential\nbs = 256KiB\nsize = 2MiB\n"
    "[process q]\ndevice = e\nio = raw\npattern = sequential\nbs = 256KiB\nsize = 2MiB\n";
  g_autoptr (SimRunResult) r = run_text (text, NULL);
  guint64 on_a = 0, on_b = 0;
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      g_test_message ("%s: %" G_GUINT64_FORMAT " acquisitions", l->name, l->stats.acquisitions);
      if (strcmp (l->name, "queue_lock[a]") == 0)
        on_a = l->stats.acquisitions;
      else if (strcmp (l->name, "queue_lock[b]") == 0)
        on_b = l->stats.acquisitions;
      else
        g_assert_not_reached ();
    }
  /* Submission takes the lock once per bio (3 per 256 KiB read()). */
  g_assert_cmpuint (on_b, ==, 8 * 3);
  g_assert_cmpuint (on_a, ==, 2 * on_b);
}

/* ---- the shipped study --------------------------------------------------- */

static double
total_mb_per_s (const SimRunResult *r)
{
  guint64 bytes = 0;
  for (guint i = 0; i < r->processes->len; i++)
    bytes += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->bytes;
  return (double) bytes / ((double) r->elapsed_ns / 1e9) / 1e6;
}

static SimRunResult *
run_study (const char *const *sets)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 "classic-raw-aio-2.5.ini", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  return r;
}

/* What the mechanisms give on 40 disks, 8 CPUs.  Reads: the async-DIO
 * patch's iocb runs read()'s direct I/O and unplugs, so at queue length
 * 1 it differs from read() only by io_submit, the event and
 * io_getevents, all on the I/O's critical path: synchronous reads ahead;
 * four iocbs in flight keep the disk busy between I/Os: ahead of one.
 * Writes: with the write cache off each request of an I/O waits for the
 * platter to come round again whoever queued it, so every mode writes
 * at the rate the rotation allows (within 1 %).  The aio raw port
 * (host.aio=raw-port) unplugs nothing: each iocb waits for a run of the
 * plug list, far behind read(). */
static void
test_study_directions (void)
{
  static const char *const ops[] = { "process io.op=read", "process io.op=write" };
  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      const char *const sync_sets[] = { ops[o], NULL };
      const char *const q1_sets[] = { ops[o], "process io.engine=libaio", NULL };
      const char *const q4_sets[] = { ops[o], "process io.engine=libaio", "process io.iodepth=4",
                                      NULL };
      g_autoptr (SimRunResult) sync = run_study (sync_sets);
      g_autoptr (SimRunResult) q1 = run_study (q1_sets);
      g_autoptr (SimRunResult) q4 = run_study (q4_sets);
      double s = total_mb_per_s (sync), a1 = total_mb_per_s (q1), a4 = total_mb_per_s (q4);
      g_test_message ("%s: sync %.2f MB/s, aio qlen 1 %.2f, qlen 4 %.2f", ops[o], s, a1, a4);
      g_assert_cmpuint (sync->processes->len, ==, 40);
      if (o == 0)
        {
          g_assert_cmpfloat (s, >, a1);
          g_assert_cmpfloat (a4, >, a1);
        }
      else
        {
          g_assert_cmpfloat (fabs (a1 - s), <, 0.01 * s);
          g_assert_cmpfloat (fabs (a4 - s), <, 0.01 * s);
        }
    }
  const char *const port_sets[] = { "host.aio=raw-port", "process io.engine=libaio", NULL };
  const char *const sync_sets[] = { NULL };
  g_autoptr (SimRunResult) port = run_study (port_sets);
  g_autoptr (SimRunResult) sync = run_study (sync_sets);
  g_assert_cmpfloat (total_mb_per_s (sync), >, 10 * total_mb_per_s (port));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (size_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/raw/request-sizes/%s", size_cases[i].name);
      g_test_add_data_func (path, &size_cases[i], test_request_sizes);
    }
  g_test_add_func ("/raw/aio-waits-for-kupdate", test_aio_waits_for_kupdate);
  g_test_add_func ("/raw/sync-waiter-runs-every-queue", test_sync_waiter_runs_every_queue);
  g_test_add_func ("/raw/needs-an-era", test_raw_needs_an_era);
  g_test_add_func ("/raw/deterministic", test_deterministic);
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/raw/bad/%s", bad_cases[i].name);
      g_test_add_data_func (path, &bad_cases[i], test_bad_scenario);
    }
  for (guint i = 0; i < G_N_ELEMENTS (cpu_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/raw/cpu-per-io/%s", cpu_cases[i].name);
      g_test_add_data_func (path, &cpu_cases[i], test_cpu_per_io);
    }
  g_test_add_func ("/raw/cpu-ordering", test_cpu_ordering);
  g_test_add_func ("/raw/adapter-lock", test_adapter_lock);
  g_test_add_func ("/raw/study-directions", test_study_directions);
  return g_test_run ();
}
