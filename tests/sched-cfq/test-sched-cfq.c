/* test-sched-cfq.c — the CFQ elevator through its eras: tunables and HZ
 * truncation, slices by priority, idle window decisions, idling,
 * preemption, async caps, FIFO expiry, hw_tag, may_queue, close
 * cooperators, queue merge and split, and the interleaved-readers collapse
 * of kernel-algorithms.md §4.7 on a disk model.  Requests come from small
 * closed-loop readers (one bio at a time, think time between completion
 * and next submission) driven bio by bio. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/sched/sched-cfq-private.h"

#define MS SIM_NS_PER_MS

static const char fixed_dev[] =
  "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 1000MB/s\nrotational = true\n";

/* A seek-bound laptop disk: no command queueing, lookahead on, so that a
 * contiguous stream is pure transfer and everything else waits for the
 * platter. */
static const char disk_dev[] =
  "[device]\nkind = disk\ncapacity = 30GB\nrotational = true\nqueue_depth = 1\n"
  "max_sectors_kb = 128\nrpm = 5400\nseek_track = 1ms\nseek_avg = 11ms\n"
  "seek_full = 20ms\ncylinders = 50000\nouter_rate = 35MB/s\ninner_rate = 17MB/s\n"
  "overhead = 0.3ms\nread_lookahead = true\nwrite_cache = false\n";

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SchedQueue      *e;
  GString         *events;     /* "<pid>:R<sector> " per dispatch */
  GString         *log;        /* --trace-sched lines */
  guint            reads_in_flight;
  guint            writes_beside_reads;  /* writes started while a read ran */
} Fx;

static void
record (gpointer data, const TraceRecord *rec)
{
  Fx *f = data;
  gboolean write = (rec->rwbs & TRACE_RWBS_WRITE) != 0;
  if (rec->action == TRACE_ACT_ISSUE && !write)
    f->reads_in_flight++;
  if (rec->action == TRACE_ACT_ISSUE && write && f->reads_in_flight)
    f->writes_beside_reads++;
  if (rec->action == TRACE_ACT_COMPLETE && !write)
    f->reads_in_flight--;
  if (rec->action == TRACE_ACT_ISSUE)
    g_string_append_printf (f->events, "%u:%c%" G_GUINT64_FORMAT " ", rec->pid,
                            (rec->rwbs & TRACE_RWBS_WRITE) ? 'W' : 'R', rec->sector);
}

static void
log_line (gpointer data, SimTime now_ns, const char *device, const char *sched,
          const char *message)
{
  Fx *f = data;
  g_string_append_printf (f->log, "%" G_GINT64_FORMAT " %s\n", now_ns / SIM_NS_PER_US, message);
}

static void
fx_setup (Fx *f, const char *dev_text, guint hz, const char *tunables)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, hz);
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", dev_text, &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched cfq]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  f->e = sched_queue_new (&sched_cfq_ops, f->q, f->sim, hz, kf, "sched cfq", &error);
  g_assert_no_error (error);
  sim_queue_set_elevator (f->q, f->e);
  f->events = g_string_new (NULL);
  f->log = g_string_new (NULL);
  f->e->log = log_line;
  f->e->log_data = f;
  sim_queue_set_trace (f->q, record, f);
}

static void
fx_teardown (Fx *f)
{
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->events, TRUE);
  g_string_free (f->log, TRUE);
}

static guint
count_substr (const char *hay, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr (hay, needle); p; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* ---- closed-loop readers -------------------------------------------------- */

typedef struct {
  Fx           *f;
  SimIoContext  ioc;
  const guint64 *sectors;      /* one I/O per entry */
  guint         n;
  guint         next;
  guint32       nr_sectors;
  SimOp         op;
  gboolean      sync;
  SimTime       think_ns;
  guint         done;
  SimTime       end_ns;
} Reader;

static void reader_submit (Sim *sim, gpointer subject, gpointer object);

static void
reader_bio_done (Sim *sim, SimBio *bio, SimTime now)
{
  Reader *r = bio->end_io_data;
  r->done++;
  r->end_ns = now;
  /* The task wakes up after the completion, thinks, then asks again. */
  if (r->sync && r->next < r->n)
    sim_schedule_in (sim, r->think_ns, reader_submit, r, NULL);
}

static void
submit_one (Fx *f, SimIoContext *ioc, SimOp op, gboolean sync, guint64 sector, guint32 nr,
            SimBioEndIo done, gpointer data)
{
  SimBio *bio = sim_queue_bio_alloc (f->q);
  bio->sector = sector;
  bio->nr_sectors = nr;
  bio->op = op;
  bio->flags = sync ? SIM_BIO_SYNC : 0;
  bio->ioc = ioc;
  bio->end_io = done;
  bio->end_io_data = data;
  g_assert_true (sim_queue_submit_bio (f->q, bio, NULL));
}

static void
no_done (Sim *sim, SimBio *bio, SimTime now)
{
}

static void
reader_submit (Sim *sim, gpointer subject, gpointer object)
{
  Reader *r = subject;
  submit_one (r->f, &r->ioc, r->op, r->sync, r->sectors[r->next++], r->nr_sectors,
              reader_bio_done, r);
  if (r->sync)
    sim_queue_unplug (r->f->q, &r->ioc);
}

static void
reader_init (Reader *r, Fx *f, guint pid, int klass, int level, const guint64 *sectors,
             guint n, guint32 nr, SimTime think_ns)
{
  memset (r, 0, sizeof *r);
  r->f = f;
  r->ioc.pid = pid;
  r->ioc.comm = "r";
  r->ioc.ioprio_class = klass;
  r->ioc.ioprio_level = level;
  r->ioc.nr_tasks = 1;
  r->sectors = sectors;
  r->n = n;
  r->nr_sectors = nr;
  r->op = SIM_OP_READ;
  r->sync = TRUE;
  r->think_ns = think_ns;
}

static void
reader_start_at (Reader *r, SimTime at_ns)
{
  sim_schedule_at (r->f->sim, at_ns, reader_submit, r, NULL);
}

static guint64 *
sequential (guint64 start, guint n, guint64 step)
{
  guint64 *s = g_new (guint64, n);
  for (guint i = 0; i < n; i++)
    s[i] = start + i * step;
  return s;
}

/* Run to the end; the elevator must be empty and consistent. */
static void
fx_run_out (Fx *f)
{
  sim_run_until (f->sim, SIM_TIME_NEVER);
  g_assert_true (f->e->ops->queue_empty (f->e));
  g_assert_true (sched_cfq_check_invariants (f->e));
  g_assert_cmpuint (f->q->in_flight, ==, 0);
  g_assert_cmpuint (sim_queue_requests_allocated (f->q), ==, 0);
}

/* ---- the interleaved readers (dump(8), nfsd) -------------------------------- */

#define IL_PROCS   4
#define IL_CHUNKS  48           /* per process */
#define IL_CHUNK_SECTORS 128    /* 64 KiB */

typedef struct {
  SimTime  elapsed_ns;
  guint64  bytes;
  guint    merges;
  guint    coops;
  guint    idle_arms;
} IlResult;

static IlResult
run_interleaved (const char *tunables, SimTime think_ns, GString *trace_out)
{
  Fx f;
  fx_setup (&f, disk_dev, 1000, tunables);
  Reader r[IL_PROCS];
  guint64 *sectors[IL_PROCS];
  for (guint i = 0; i < IL_PROCS; i++)
    {
      /* Process i reads chunks i, i+4, i+8, ... of one file at sector 2048 (1 MiB). */
      sectors[i] = sequential (2048 + (guint64) i * IL_CHUNK_SECTORS, IL_CHUNKS,
                               IL_PROCS * IL_CHUNK_SECTORS);
      reader_init (&r[i], &f, 100 + i, 2, 4, sectors[i], IL_CHUNKS, IL_CHUNK_SECTORS,
                   think_ns);
      reader_start_at (&r[i], (SimTime) i * 10 * SIM_NS_PER_US);
    }
  fx_run_out (&f);
  IlResult res = { 0 };
  for (guint i = 0; i < IL_PROCS; i++)
    {
      g_assert_cmpuint (r[i].done, ==, IL_CHUNKS);
      res.elapsed_ns = MAX (res.elapsed_ns, r[i].end_ns);
      res.bytes += (guint64) IL_CHUNKS * IL_CHUNK_SECTORS * 512;
      g_free (sectors[i]);
    }
  if (trace_out)
    g_string_append_printf (trace_out, "%s\n%s", f.log->str, f.events->str);
  res.merges = count_substr (f.log->str, "queue_merge ");
  res.coops = count_substr (f.log->str, "coop ");
  res.idle_arms = count_substr (f.log->str, "idle_arm ");
  if (g_getenv ("CFQ_TEST_VERBOSE"))
    g_printerr ("%s think=%" G_GINT64_FORMAT "us: %.1f ms, %.2f MB/s, merges=%u coops=%u idle=%u\n",
                tunables, think_ns / 1000, res.elapsed_ns / 1e6,
                res.bytes / (res.elapsed_ns / 1e9) / 1e6, res.merges, res.coops, res.idle_arms);
  fx_teardown (&f);
  return res;
}


/* Each process hands its chunk on before reading the next (dump's pipe to
 * the master, an nfsd's reply): 2.5 ms, longer than the 1.9 ms transfer of
 * a contiguous 64 KiB chunk, so that a shared queue runs empty between
 * requests and the cooperator search gets its chance. */
#define IL_THINK_NS (2500 * SIM_NS_PER_US)

static void
test_interleaved_collapse_and_merge (void)
{
  IlResult base = run_interleaved ("era = 2.6.28\n", IL_THINK_NS, NULL);
  IlResult noidle = run_interleaved ("era = 2.6.28\nslice_idle = 0\n", IL_THINK_NS, NULL);
  IlResult merged = run_interleaved ("era = 2.6.33\n", IL_THINK_NS, NULL);
  IlResult merged_only = run_interleaved ("era = 2.6.28\nqueue_merge = true\n", IL_THINK_NS, NULL);
  IlResult no_merge = run_interleaved ("era = 2.6.33\nqueue_merge = false\n", IL_THINK_NS, NULL);

  /* 2.6.28 idles after every chunk and serves each process alone for a
   * slice: the file is read in strides, at least twice as slow as without
   * idling. */
  g_assert_cmpuint (base.idle_arms, >, 50);
  g_assert_cmpuint (base.merges, ==, 0);
  g_assert_cmpuint (base.coops, ==, 0);
  g_assert_cmpint (base.elapsed_ns, >=, 2 * noidle.elapsed_ns);
  /* Merging the four queues into one makes the stream sequential again. */
  g_assert_cmpuint (merged.merges, ==, IL_PROCS - 1);
  g_assert_cmpint (base.elapsed_ns, >=, 2 * merged.elapsed_ns);
  g_assert_cmpint (base.elapsed_ns, >=, 2 * merged_only.elapsed_ns);
  /* ... and recovers most of what idling cost. */
  g_assert_cmpint (merged.elapsed_ns * 4, <=, noidle.elapsed_ns * 5);
  /* 2.6.33's search no longer skips a queue that cooperated before
   * (b3b6d040 made coop mean "merged"), so with the merge step switched off
   * the empty queue hands over after every chunk but a reader's last ones,
   * each time to the reader whose chunk starts at the head: no worse than
   * not idling at all, and well clear of the collapse. */
  g_assert_cmpuint (no_merge.merges, ==, 0);
  g_assert_cmpuint (no_merge.coops, >=, IL_PROCS * IL_CHUNKS - IL_PROCS);
  g_assert_cmpint (no_merge.elapsed_ns, <=, noidle.elapsed_ns);
  g_assert_cmpint (base.elapsed_ns, >=, 2 * no_merge.elapsed_ns);
}

/* What the --trace-sched log of one interleaved run says about the
 * cooperator: the first thing that happens to reader 100 once it is made
 * active from the tree (a hand-over or an idle wait), and the hand-overs. */
typedef struct {
  gboolean first_is_coop;     /* "coop pid=101 with=100" before any idle_arm pid=100 */
  gboolean first_is_idle;
  gboolean mark_respected;    /* no queue handed over to twice without a tree pick between */
  guint    longest_chain;     /* hand-overs in a row, no tree pick between */
  guint    coops;
  guint    idle_arms;
} CoopLog;

static gboolean
line_pid (const char *line, const char *prefix, guint *pid)
{
  if (!g_str_has_prefix (line, prefix))
    return FALSE;
  *pid = (guint) g_ascii_strtoull (line + strlen (prefix), NULL, 10);
  return TRUE;
}

/* Replays the coop mark of cfq_close_cooperator / cfq_set_active_queue
 * from the log: a hand-over marks its queue, a pick from the tree clears
 * it; a hand-over to a marked queue would break the rule. */
static CoopLog
read_coop_log (const char *log)
{
  CoopLog c = { .mark_respected = TRUE };
  g_auto (GStrv) lines = g_strsplit (log, "\n", -1);
  gboolean marked[IL_PROCS] = { FALSE };
  gboolean seen_100 = FALSE;
  guint chain = 0;
  for (guint i = 0; lines[i]; i++)
    {
      const char *msg = strchr (lines[i], ' ');
      guint pid;
      if (msg == NULL)
        continue;
      msg++;
      if (line_pid (msg, "select pid=", &pid))
        {
          g_assert_cmpuint (pid - 100, <, IL_PROCS);
          gboolean coop = strstr (msg, "via=coop") != NULL;
          if (coop && marked[pid - 100])
            c.mark_respected = FALSE;
          marked[pid - 100] = coop;
          chain = coop ? chain + 1 : 0;
          c.longest_chain = MAX (c.longest_chain, chain);
          c.coops += coop;
          if (pid == 100 && !coop)
            seen_100 = TRUE;
        }
      else if (line_pid (msg, "idle_arm pid=", &pid))
        {
          c.idle_arms++;
          if (seen_100 && pid == 100 && !c.first_is_coop && !c.first_is_idle)
            c.first_is_idle = TRUE;
        }
      else if (seen_100 && !c.first_is_coop && !c.first_is_idle
               && g_str_has_prefix (msg, "coop pid=101 with=100"))
        c.first_is_coop = TRUE;
    }
  return c;
}

/* Four readers of one file in interleaved 64 KiB chunks, so each one's
 * next request starts where another's just ended.  With the close
 * cooperator (as merged for 2.6.30, unchanged in 2.6.31, or switched on
 * over 2.6.28) the empty active queue hands over to the reader whose
 * request starts at last_position instead of idling; without it, CFQ
 * idles.  A queue handed over to is marked and skipped until the service
 * tree picks it again, so a chain of hand-overs reaches each reader once
 * (N = 4 in a row, no more); then every neighbour is marked, the active
 * reader idles after each chunk and keeps its slice, reading every 4th
 * chunk: ~20 idle waits per 100 ms slice against at most 4 hand-overs per
 * round, and the run stays at least twice as slow as with merged queues
 * (the 2.6.33 merge commit's 12 MB/s before merging). */
static const struct {
  const char *path;
  const char *tunables;
  gboolean    coop;
} coop_rows[] = {
  { "/sched/cfq/interleaved/close-cooperator/2.6.28", "era = 2.6.28\n", FALSE },
  { "/sched/cfq/interleaved/close-cooperator/2.6.30", "era = 2.6.30\n", TRUE },
  { "/sched/cfq/interleaved/close-cooperator/2.6.31", "era = 2.6.31\n", TRUE },
  { "/sched/cfq/interleaved/close-cooperator/2.6.28-switched-on",
    "era = 2.6.28\nclose_cooperator = true\n", TRUE },
};

static void
test_close_cooperator (gconstpointer data)
{
  guint row = GPOINTER_TO_UINT (data);
  g_autoptr (GString) trace = g_string_new (NULL);
  IlResult run = run_interleaved (coop_rows[row].tunables, IL_THINK_NS, trace);
  CoopLog c = read_coop_log (trace->str);
  g_assert_cmpuint (run.merges, ==, 0);
  g_assert_true (c.mark_respected);
  if (!coop_rows[row].coop)
    {
      g_assert_true (c.first_is_idle);
      g_assert_cmpuint (c.coops, ==, 0);
      return;
    }
  IlResult base = run_interleaved ("era = 2.6.28\n", IL_THINK_NS, NULL);
  IlResult merged = run_interleaved ("era = 2.6.33\n", IL_THINK_NS, NULL);
  g_assert_true (c.first_is_coop);
  g_assert_cmpuint (c.coops, ==, run.coops);
  g_assert_cmpuint (c.longest_chain, ==, IL_PROCS);
  g_assert_cmpuint (c.idle_arms, >, c.coops);
  g_assert_cmpint (run.elapsed_ns, <=, base.elapsed_ns);
  g_assert_cmpint (run.elapsed_ns, >=, 2 * merged.elapsed_ns);
}

static void
test_interleaved_deterministic (void)
{
  g_autoptr (GString) a = g_string_new (NULL);
  g_autoptr (GString) b = g_string_new (NULL);
  run_interleaved ("era = 2.6.33\n", IL_THINK_NS, a);
  run_interleaved ("era = 2.6.33\n", IL_THINK_NS, b);
  g_assert_cmpuint (a->len, >, 1000);
  g_assert_cmpstr (a->str, ==, b->str);
}

/* ---- tunables ---------------------------------------------------------------- */

static int
tunable (SchedQueue *e, const char *name)
{
  for (const SchedTunable *t = e->ops->tunables; t->name; t++)
    if (strcmp (t->name, name) == 0)
      return sched_tunable_get (e, t);
  g_assert_not_reached ();
}

static SchedQueue *
new_elevator (guint hz, const char *tunables, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *text = g_strdup_printf ("[sched cfq]\n%s", tunables ? tunables : "");
  g_assert_true (g_key_file_load_from_data (kf, text, -1, 0, NULL));
  return sched_queue_new (&sched_cfq_ops, NULL, NULL, hz, kf, "sched cfq", error);
}

static void
test_tunables_hz (void)
{
  static const struct {
    guint hz;
    int   slice_idle, fifo_sync, fifo_async, slice_sync, slice_async;
  } rows[] = {
    { 1000, 8, 125, 250, 100, 40 },
    { 250,  2, 31,  62,  25,  10 },   /* 8 ms, 124 ms, 248 ms, 100 ms, 40 ms */
    { 100,  0, 12,  25,  10,  4 },    /* slice_idle = HZ/125 = 0: no idling */
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SchedQueue) e = new_elevator (rows[i].hz, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (tunable (e, "slice_idle"), ==, rows[i].slice_idle);
      g_assert_cmpint (tunable (e, "fifo_expire_sync"), ==, rows[i].fifo_sync);
      g_assert_cmpint (tunable (e, "fifo_expire_async"), ==, rows[i].fifo_async);
      g_assert_cmpint (tunable (e, "slice_sync"), ==, rows[i].slice_sync);
      g_assert_cmpint (tunable (e, "slice_async"), ==, rows[i].slice_async);
      g_assert_cmpint (tunable (e, "quantum"), ==, 4);
      g_assert_cmpint (tunable (e, "back_seek_max"), ==, 16384);
      g_assert_cmpint (tunable (e, "back_seek_penalty"), ==, 2);
      g_assert_cmpint (tunable (e, "slice_async_rq"), ==, 2);
    }

  /* Written values go through msecs_to_jiffies (rounded up). */
  g_autoptr (GError) error = NULL;
  g_autoptr (SchedQueue) e = new_elevator (250, "slice_idle = 3\nslice_sync = 50ms\nquantum = 0\n",
                                           &error);
  g_assert_no_error (error);
  g_assert_cmpint (tunable (e, "slice_idle"), ==, 1);
  g_assert_cmpint (tunable (e, "slice_sync"), ==, 13);
  g_assert_cmpint (tunable (e, "quantum"), ==, 1);   /* clamped like the kernel's store */

  static const char *const bad[] = {
    "quantum = four\n", "slice_idle = soon\n", "close_cooperator = maybe\n",
    "era = two\n", "era = 2.4.20\n", "no_such = 1\n",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) err = NULL;
      g_autoptr (SchedQueue) b = new_elevator (1000, bad[i], &err);
      g_assert_null (b);
      g_assert_nonnull (err);
      /* The message names the offending key. */
      g_autofree char *key = g_strndup (bad[i], strcspn (bad[i], " "));
      g_assert_nonnull (strstr (err->message, key));
    }
}

static void
test_era_switches (void)
{
  static const struct {
    const char *text;
    int era, coop, merge, latency, trees;
  } rows[] = {
    { "", 20633, 1, 1, 1, 1 },
    { "era = 2.6.28\n", 20628, 0, 0, 0, 0 },
    { "era = 2.6.29\n", 20629, 0, 0, 0, 0 },
    { "era = 2.6.30\n", 20630, 1, 0, 0, 0 },
    { "era = 2.6.31\n", 20631, 1, 0, 0, 0 },
    { "era = 2.6.33\n", 20633, 1, 1, 1, 1 },
    { "era = 2.6.28\nqueue_merge = true\n", 20628, 0, 1, 0, 0 },
    { "era = 2.6.33\nlow_latency = false\nclose_cooperator = 0\n", 20633, 0, 1, 0, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SchedQueue) e = new_elevator (1000, rows[i].text, &error);
      g_assert_no_error (error);
      SchedCfqSwitches sw;
      sched_cfq_switches (e, &sw);
      g_assert_cmpint (sw.era, ==, rows[i].era);
      g_assert_cmpint (sw.close_cooperator, ==, rows[i].coop);
      g_assert_cmpint (sw.queue_merge, ==, rows[i].merge);
      g_assert_cmpint (sw.low_latency, ==, rows[i].latency);
      g_assert_cmpint (sw.workload_trees, ==, rows[i].trees);
    }
}

/* ---- slices ------------------------------------------------------------------ */

static void
test_slice_by_prio (void)
{
  /* base + base/5 * (4 - prio), in jiffies; base/5 truncates first. */
  static const struct {
    guint hz;
    int   sync[8];
    int   async[8];
  } rows[] = {
    { 1000, { 180, 160, 140, 120, 100, 80, 60, 40 }, { 72, 64, 56, 48, 40, 32, 24, 16 } },
    { 250,  { 45, 40, 35, 30, 25, 20, 15, 10 },      { 18, 16, 14, 12, 10, 8, 6, 4 } },
    { 100,  { 18, 16, 14, 12, 10, 8, 6, 4 },         { 4, 4, 4, 4, 4, 4, 4, 4 } },
  };
  static const int maxrq[8] = { 32, 28, 24, 20, 16, 12, 8, 4 };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SchedQueue) e = new_elevator (rows[i].hz, NULL, &error);
      g_assert_no_error (error);
      for (int prio = 0; prio < 8; prio++)
        {
          g_assert_cmpint (sched_cfq_prio_slice (e, TRUE, prio), ==, rows[i].sync[prio]);
          g_assert_cmpint (sched_cfq_prio_slice (e, FALSE, prio), ==, rows[i].async[prio]);
          g_assert_cmpint (sched_cfq_async_maxrq (e, prio), ==, maxrq[prio]);
        }
    }
}

/* The slice a queue really gets, read from --trace-sched. */
static int
first_slice_ms (const char *log, guint pid)
{
  g_autofree char *needle = g_strdup_printf ("slice_start pid=%u slice_ms=", pid);
  const char *p = strstr (log, needle);
  g_assert_nonnull (p);
  return atoi (p + strlen (needle));
}

static void
test_slice_in_use (void)
{
  static const struct { guint hz; int klass, level; int ms; } rows[] = {
    { 1000, 2, 0, 180 }, { 1000, 2, 4, 100 }, { 1000, 2, 7, 40 }, { 1000, 1, 2, 140 },
    { 250, 2, 0, 180 }, { 100, 2, 7, 40 }, { 100, 0, 0, 100 },   /* class none, nice 0: BE 4 */
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      Fx f;
      /* The slice rule is the same in every era; 2.6.31 is used because a
       * lone 2.6.28 queue moves all its requests to the dispatch list at
       * once.  More requests than the 4 * quantum a lone 2.6.31 queue may
       * have in flight: the queue is still busy at its first completion,
       * where the slice starts (even with slice_idle = 0). */
      fx_setup (&f, fixed_dev, rows[i].hz, "era = 2.6.31\n");
      SimIoContext p = { .pid = 7, .comm = "p", .ioprio_class = rows[i].klass,
                         .ioprio_level = rows[i].level, .nr_tasks = 1 };
      for (guint k = 0; k < 40; k++)
        submit_one (&f, &p, SIM_OP_READ, TRUE, k * 1000, 8, no_done, NULL);
      fx_run_out (&f);
      g_assert_cmpint (first_slice_ms (f.log->str, 7), ==, rows[i].ms);
      fx_teardown (&f);
    }

  /* An async queue of BE 0: 72 ms. */
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.31\n");
  SimIoContext w = { .pid = 9, .comm = "w", .ioprio_class = 2, .ioprio_level = 0, .nr_tasks = 1 };
  for (guint i = 0; i < 40; i++)
    submit_one (&f, &w, SIM_OP_WRITE, FALSE, 1000 + i * 100, 8, no_done, NULL);
  fx_run_out (&f);
  g_assert_cmpint (first_slice_ms (f.log->str, 9), ==, 72);
  fx_teardown (&f);
}

/* ---- idle window ------------------------------------------------------------- */

static void
run_one_reader (const char *tunables, guint hz, const guint64 *sectors, guint n,
                SimTime think_ns, SchedCfqProcInfo *info, GString *log)
{
  Fx f;
  fx_setup (&f, fixed_dev, hz, tunables);
  Reader r;
  reader_init (&r, &f, 5, 2, 4, sectors, n, 8, think_ns);
  reader_start_at (&r, 0);
  fx_run_out (&f);
  g_assert_cmpuint (r.done, ==, n);
  g_assert_true (sched_cfq_proc_info (f.e, &r.ioc, info));
  if (log)
    g_string_append (log, f.log->str);
  fx_teardown (&f);
}

static void
test_idle_window_think_time (void)
{
  g_autofree guint64 *seq = sequential (0, 12, 8);
  SchedCfqProcInfo info;

  /* 20 ms between completion and next request: each sample is capped at
   * 2 * slice_idle = 16 jiffies, the mean passes slice_idle: idling off. */
  g_autoptr (GString) log = g_string_new (NULL);
  run_one_reader ("era = 2.6.28\n", 1000, seq, 12, 20 * MS, &info, log);
  g_assert_cmpuint (info.ttime_samples, >, 80);
  g_assert_cmpuint (info.ttime_mean, >, 8);
  g_assert_cmpuint (info.ttime_mean, <=, 16);
  g_assert_false (info.idle_window);
  g_assert_nonnull (strstr (log->str, "idle_window pid=5 on=0"));
  /* The first requests still idled (8 ms, then the timer fired). */
  g_assert_nonnull (strstr (log->str, "idle_fire pid=5"));

  /* 2 ms of thinking: worth waiting for. */
  run_one_reader ("era = 2.6.28\n", 1000, seq, 12, 2 * MS, &info, NULL);
  g_assert_cmpuint (info.ttime_samples, >, 80);
  g_assert_cmpuint (info.ttime_mean, <=, 8);
  g_assert_true (info.idle_window);

  /* At HZ = 100 slice_idle is 0: never idle. */
  g_string_truncate (log, 0);
  run_one_reader ("era = 2.6.28\n", 100, seq, 12, 2 * MS, &info, log);
  g_assert_false (info.idle_window);
  g_assert_null (strstr (log->str, "idle_arm"));
  /* At HZ = 250 it is 2 jiffies = 8 ms. */
  g_string_truncate (log, 0);
  run_one_reader ("era = 2.6.28\n", 250, seq, 12, 2 * MS, &info, log);
  g_assert_true (info.idle_window);
  g_assert_nonnull (strstr (log->str, "idle_arm pid=5 until_us=12000\n"));
}

static void
test_idle_window_seeky (void)
{
  SchedCfqProcInfo info;
  guint64 far[12];
  for (guint i = 0; i < 12; i++)
    far[i] = (guint64) ((i * 7919) % 97) * 400000;   /* far apart, no order */

  /* 2.6.28: hw_tag starts at 1, so a seeky process loses its idle window. */
  g_autoptr (GString) log = g_string_new (NULL);
  run_one_reader ("era = 2.6.28\n", 1000, far, 12, 0, &info, log);
  g_assert_true (info.seeky);
  g_assert_cmpuint (info.seek_mean, >, 8192);
  g_assert_false (info.idle_window);

  /* A sequential reader with the same (zero) think time keeps it. */
  g_autofree guint64 *seq = sequential (0, 12, 8);
  run_one_reader ("era = 2.6.28\n", 1000, seq, 12, 0, &info, NULL);
  g_assert_false (info.seeky);
  g_assert_cmpuint (info.seek_mean, ==, 0);
  g_assert_true (info.idle_window);

  /* 2.6.33: seeky turns the idle window off too... */
  run_one_reader ("era = 2.6.33\n", 1000, far, 12, 0, &info, NULL);
  g_assert_true (info.seeky);
  g_assert_false (info.idle_window);

  /* ... unless the queue is deep (4 or more requests queued at once). */
  for (guint era = 0; era < 2; era++)
    {
      Fx f;
      fx_setup (&f, fixed_dev, 1000, era ? "era = 2.6.33\n" : "era = 2.6.28\n");
      SimIoContext p = { .pid = 6, .comm = "p", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
      for (guint i = 0; i < 8; i++)
        submit_one (&f, &p, SIM_OP_READ, TRUE, far[i], 8, no_done, NULL);
      fx_run_out (&f);
      g_assert_true (sched_cfq_proc_info (f.e, &p, &info));
      g_assert_true (info.seeky);
      g_assert_cmpint (info.idle_window, ==, era == 1);
      fx_teardown (&f);
    }
}

/* ---- idling ------------------------------------------------------------------ */

static void
test_idling_holds_the_disk (void)
{
  g_autofree guint64 *a = sequential (0, 10, 8);
  g_autofree guint64 *b = sequential (1000000, 10, 8);
  for (guint idle = 0; idle < 2; idle++)
    {
      Fx f;
      fx_setup (&f, fixed_dev, 1000, idle ? "era = 2.6.28\n" : "era = 2.6.28\nslice_idle = 0\n");
      Reader ra, rb;
      reader_init (&ra, &f, 1, 2, 4, a, 10, 8, 3 * MS);
      reader_init (&rb, &f, 2, 2, 4, b, 10, 8, 0);
      reader_start_at (&ra, 0);
      reader_start_at (&rb, 100 * SIM_NS_PER_US);
      fx_run_out (&f);
      const char *last_a = g_strrstr (f.events->str, "1:R72 ");
      const char *first_b = strstr (f.events->str, "2:R");
      g_assert_nonnull (last_a);
      g_assert_nonnull (first_b);
      if (idle)
        {
          /* A thinks 3 ms, CFQ waits up to 8: A's ten reads go first,
           * then its last idle period runs out. */
          g_assert_true (last_a < first_b);
          g_assert_cmpuint (count_substr (f.log->str, "idle_arm pid=1 "), ==, 10);
          g_assert_cmpuint (count_substr (f.log->str, "idle_cancel pid=1 reason=request"), ==, 9);
          g_assert_cmpuint (count_substr (f.log->str, "idle_fire pid=1\n"), ==, 1);
          g_assert_nonnull (strstr (f.log->str, "slice_expire pid=1 reason=empty"));
        }
      else
        {
          g_assert_true (first_b < last_a);
          g_assert_null (strstr (f.log->str, "idle_arm"));
        }
      fx_teardown (&f);
    }
}

/* The idle timer is armed only when nothing is in the driver (2.6.28). */
static void
test_no_idle_with_requests_in_driver (void)
{
  static const char dev2[] =
    "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 1000MB/s\nqueue_depth = 4\nrotational = true\n";
  Fx f;
  fx_setup (&f, dev2, 1000, "era = 2.6.28\n");
  SimIoContext p = { .pid = 6, .comm = "p", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  SimIoContext w = { .pid = 8, .comm = "w", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  /* Two sync reads go to the driver together; the first completion leaves
   * the second in flight: no idling then, but after the second. */
  submit_one (&f, &p, SIM_OP_READ, TRUE, 0, 8, no_done, NULL);
  submit_one (&f, &p, SIM_OP_READ, TRUE, 8, 8, no_done, NULL);
  submit_one (&f, &w, SIM_OP_WRITE, FALSE, 500000, 8, no_done, NULL);
  sim_queue_unplug (f.q, &p);
  fx_run_out (&f);
  g_assert_cmpuint (count_substr (f.log->str, "idle_arm pid=6 "), ==, 1);
  fx_teardown (&f);
}


/* Time in µs of the first log line starting with @prefix, -1 if none. */
static gint64
log_time_us (const char *log, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (log, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *sp = strchr (lines[i], ' ');
      if (sp && g_str_has_prefix (sp + 1, prefix))
        return g_ascii_strtoll (lines[i], NULL, 10);
    }
  return -1;
}

/* ---- preemption -------------------------------------------------------------- */

static void
test_preempt_sync_over_async (void)
{
  Fx f;
  /* 2.6.31: the lone writer keeps requests in the elevator. */
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.31\n");
  SimIoContext w = { .pid = 3, .comm = "w", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  for (guint i = 0; i < 40; i++)
    submit_one (&f, &w, SIM_OP_WRITE, FALSE, 100000 + i * 1000, 8, no_done, NULL);
  guint64 rs[1] = { 900000 };
  Reader r;
  reader_init (&r, &f, 1, 2, 4, rs, 1, 8, 0);
  reader_start_at (&r, 5 * MS);
  fx_run_out (&f);
  g_assert_nonnull (strstr (f.log->str, "preempt pid=3 by=1 reason=sync_over_async\n"));
  g_assert_nonnull (strstr (f.log->str, "slice_expire pid=3 reason=preempted\n"));
  /* The read overtakes the writes still queued. */
  g_assert_true (strstr (f.events->str, "1:R900000 ") < strstr (f.events->str, "3:W139000 "));
  fx_teardown (&f);
}

static void
test_preempt_rt (void)
{
  g_autofree guint64 *a = sequential (0, 30, 8);
  guint64 b[1] = { 700000 };
  for (guint era = 0; era < 2; era++)
    {
      Fx f;
      fx_setup (&f, fixed_dev, 1000, era ? "era = 2.6.31\n" : "era = 2.6.28\n");
      Reader ra, rb;
      reader_init (&ra, &f, 1, 2, 4, a, 30, 8, 0);
      reader_init (&rb, &f, 2, 1, 4, b, 1, 8, 0);   /* RT */
      reader_start_at (&ra, 0);
      reader_start_at (&rb, 10500 * SIM_NS_PER_US);
      fx_run_out (&f);
      /* An RT request preempts the BE queue at once, in 2.6.28 as later. */
      gint64 t = log_time_us (f.log->str, "dispatch pid=2 ");
      g_assert_nonnull (strstr (f.log->str, "preempt pid=1 by=2 reason=rt\n"));
      g_assert_cmpint (t, <, 12000);
      fx_teardown (&f);
    }
}

static void
test_preempt_close_request (void)
{
  guint64 a[3] = { 0, 8, 16 };
  for (guint close = 0; close < 2; close++)
    {
      Fx f;
      fx_setup (&f, fixed_dev, 1000, "era = 2.6.28\n");
      guint64 b[1] = { close ? 24 : 500000 };
      Reader ra, rb;
      reader_init (&ra, &f, 1, 2, 4, a, 3, 8, 3 * MS);
      reader_init (&rb, &f, 2, 2, 4, b, 1, 8, 0);
      reader_start_at (&ra, 0);
      reader_start_at (&rb, 10 * MS);
      fx_run_out (&f);
      /* A's third read completes at 9.012 ms and CFQ waits for A until
       * 17 ms; B arrives at 10 ms. */
      g_assert_cmpint (log_time_us (f.log->str, "idle_arm pid=1 until_us=17000"), ==, 9012);
      gint64 t = log_time_us (f.log->str, "dispatch pid=2 ");
      if (close)
        {
          /* B reads where A's head is (distance 0 <= A's mean seek 0). */
          g_assert_nonnull (strstr (f.log->str, "preempt pid=1 by=2 reason=close\n"));
          g_assert_cmpint (t, ==, 10000);
        }
      else
        {
          g_assert_null (strstr (f.log->str, "preempt "));
          g_assert_cmpint (t, ==, 17000);
        }
      fx_teardown (&f);
    }
}

static void
test_preempt_idle_class (void)
{
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.31\n");
  /* An idle-class process with twelve reads: 2.6.31 lets it have one in
   * flight at a time, so its queue is active with requests waiting when
   * B's read arrives. */
  SimIoContext idle = { .pid = 4, .comm = "i", .ioprio_class = 3, .nr_tasks = 1 };
  for (guint i = 0; i < 12; i++)
    submit_one (&f, &idle, SIM_OP_READ, TRUE, i * 1000, 8, no_done, NULL);
  guint64 b[1] = { 900000 };
  Reader rb;
  reader_init (&rb, &f, 2, 2, 4, b, 1, 8, 0);
  reader_start_at (&rb, 4500 * SIM_NS_PER_US);
  fx_run_out (&f);
  g_assert_nonnull (strstr (f.log->str, "preempt pid=4 by=2 reason=idle_class\n"));
  /* B's read leaves the elevator before the idle-class reader's remaining
   * ones (the dispatch list then sorts by sector, as elv_dispatch_sort). */
  g_assert_true (strstr (f.log->str, "dispatch pid=2 sector=900000")
                 < strstr (f.log->str, "dispatch pid=4 sector=11000"));
  fx_teardown (&f);
}

/* ---- async limits ------------------------------------------------------------ */

/* Requests of @pid dispatched in the slice that ended with its first
 * slice_expire of @reason (from the slice_expire before it). */
static guint
dispatched_in_slice (const char *log, guint pid, const char *reason)
{
  g_autofree char *disp = g_strdup_printf ("dispatch pid=%u ", pid);
  g_autofree char *exp = g_strdup_printf ("slice_expire pid=%u reason=%s", pid, reason);
  const char *end = strstr (log, exp);
  g_assert_nonnull (end);
  const char *start = log;
  for (const char *p = strstr (log, "slice_expire "); p && p < end; p = strstr (p + 1, "slice_expire "))
    start = p;
  guint n = 0;
  for (const char *p = strstr (start, disp); p && p < end; p = strstr (p + 1, disp))
    n++;
  return n;
}

static void
submit_writers (Fx *f, SimIoContext *w4, SimIoContext *w_other, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      submit_one (f, w4, SIM_OP_WRITE, FALSE, 100000 + i * 1000, 8, no_done, NULL);
      submit_one (f, w_other, SIM_OP_WRITE, FALSE, 900000 + i * 1000, 8, no_done, NULL);
    }
}

static void
test_async_request_cap (void)
{
  SimIoContext w4 = { .pid = 3, .comm = "w4", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  SimIoContext w0 = { .pid = 4, .comm = "w0", .ioprio_class = 2, .ioprio_level = 0, .nr_tasks = 1 };
  SimIoContext w7 = { .pid = 5, .comm = "w7", .ioprio_class = 2, .ioprio_level = 7, .nr_tasks = 1 };

  /* 2.6.31 counts the slice: 2 * (2 + 2 * (7 - prio)) requests while the
   * other queue waits, 16 at BE 4 and 32 at BE 0. */
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.31\n");
  submit_writers (&f, &w4, &w0, 40);
  fx_run_out (&f);
  g_assert_cmpuint (dispatched_in_slice (f.log->str, 3, "budget"), ==, 16);
  g_assert_cmpuint (dispatched_in_slice (f.log->str, 4, "budget"), ==, 32);
  fx_teardown (&f);

  /* 2.6.28 counts one round of quantum (4) requests: only BE 7's cap of 4
   * is ever reached; BE 4 runs until its 40 ms slice is used. */
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.28\n");
  submit_writers (&f, &w4, &w7, 60);
  fx_run_out (&f);
  g_assert_null (strstr (f.log->str, "slice_expire pid=3 reason=budget"));
  g_assert_nonnull (strstr (f.log->str, "slice_expire pid=3 reason=timeout"));
  g_assert_cmpuint (dispatched_in_slice (f.log->str, 5, "budget"), ==, 4);
  fx_teardown (&f);
}

static void
test_async_waits_for_sync (void)
{
  static const char dev4[] =
    "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 1000MB/s\nqueue_depth = 4\nrotational = true\n";
  for (guint era = 0; era < 2; era++)
    {
      Fx f;
      fx_setup (&f, dev4, 1000, era ? "era = 2.6.33\n" : "era = 2.6.28\n");
      SimIoContext w = { .pid = 3, .comm = "w", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
      for (guint i = 0; i < 20; i++)
        submit_one (&f, &w, SIM_OP_WRITE, FALSE, 500000 + i * 1000, 8, no_done, NULL);
      g_autofree guint64 *a = sequential (0, 20, 8);
      Reader r;
      reader_init (&r, &f, 1, 2, 4, a, 20, 8, 0);
      reader_start_at (&r, 2 * MS);
      fx_run_out (&f);
      /* Both ran, but no write started while a read was in the driver. */
      g_assert_cmpuint (count_substr (f.events->str, ":W"), ==, 20);
      g_assert_cmpuint (count_substr (f.events->str, ":R"), ==, 20);
      g_assert_cmpuint (f.writes_beside_reads, ==, 0);
      g_assert_cmpuint (f.reads_in_flight, ==, 0);
      fx_teardown (&f);
    }
}

/* ---- FIFO ---------------------------------------------------------------- */

static void
test_fifo_expiry (void)
{
  static const char slow[] =
    "[device]\nkind = fixed\noverhead = 10ms\nbandwidth = 1000MB/s\nrotational = true\n";
  for (guint fifo = 0; fifo < 2; fifo++)
    {
      Fx f;
      /* 2.6.31: a lone 2.6.28 queue would move all to the dispatch list. */
      fx_setup (&f, slow, 1000,
                fifo ? "era = 2.6.31\n" : "era = 2.6.31\nfifo_expire_sync = 100s\n");
      SimIoContext p = { .pid = 6, .comm = "p", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
      /* Four requests unplug the queue and go to the driver; then sector 0
       * arrives, far behind the head (beyond back_seek_max), and 38 more
       * ahead of it: sector order alone serves it last. */
      for (guint i = 0; i < 4; i++)
        submit_one (&f, &p, SIM_OP_READ, TRUE, 200000 + i * 100, 8, no_done, NULL);
      submit_one (&f, &p, SIM_OP_READ, TRUE, 0, 8, no_done, NULL);
      for (guint i = 4; i < 42; i++)
        submit_one (&f, &p, SIM_OP_READ, TRUE, 200000 + i * 100, 8, no_done, NULL);
      fx_run_out (&f);
      gint64 t0 = log_time_us (f.log->str, "dispatch pid=6 sector=0");
      /* Order in which requests left the elevator (the dispatch list then
       * sorts them by sector). */
      const char *last = g_strrstr (f.log->str, " dispatch pid=6 ");
      if (fifo)
        {
          /* Expired at 125 ms; the FIFO is looked at once per slice, so
           * it goes first in the next slice after that: the two lines
           * before its dispatch end the slice and pick the queue again. */
          g_assert_cmpint (t0, >=, 125000);
          g_assert_false (g_str_has_prefix (last, " dispatch pid=6 sector=0\n"));
          const char *d = strstr (f.log->str, " dispatch pid=6 sector=0\n");
          g_autofree char *before = g_strndup (f.log->str, d - f.log->str);
          g_assert_true (g_regex_match_simple ("\\n[0-9]+ slice_expire pid=6 reason=timeout\\n"
                                               "[0-9]+ select pid=6 via=tree\\n[0-9]+$",
                                               before, 0, 0));
        }
      else
        g_assert_true (g_str_has_prefix (last, " dispatch pid=6 sector=0\n"));
      fx_teardown (&f);
    }
}

/* ---- hw_tag, may_queue, exit --------------------------------------------------- */

static void
test_hw_tag_detection (void)
{
  static const char deep[] =
    "[device]\nkind = fixed\noverhead = 1ms\nbandwidth = 1000MB/s\nqueue_depth = 32\nrotational = true\n";
  const char *devs[2] = { fixed_dev, deep };
  for (guint d = 0; d < 2; d++)
    {
      Fx f;
      /* 2.6.31 keeps requests in the elevator (a lone 2.6.28 queue moves
       * all of them to the dispatch list at once); the rule is the same. */
      fx_setup (&f, devs[d], 1000, "era = 2.6.31\n");
      g_assert_true (sched_cfq_hw_tag (f.e));    /* assumed until measured */
      SimIoContext w = { .pid = 3, .comm = "w", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
      for (guint i = 0; i < 100; i++)
        submit_one (&f, &w, SIM_OP_WRITE, FALSE, i * 1000, 8, no_done, NULL);
      fx_run_out (&f);
      /* 50 completions with more than 5 queued: the peak in the driver
       * decides. */
      g_assert_cmpint (sched_cfq_hw_tag (f.e), ==, d == 1);
      fx_teardown (&f);
    }
}

static void
test_may_queue_waited_for (void)
{
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.28\n");
  guint64 a[1] = { 0 };
  Reader ra;
  reader_init (&ra, &f, 1, 2, 4, a, 1, 8, 0);
  reader_start_at (&ra, 0);
  SimIoContext other = { .pid = 2, .comm = "o", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  sim_run_until (f.sim, 2 * MS);
  g_assert_nonnull (strstr (f.log->str, "idle_arm pid=1 "));
  const SchedOps *ops = f.e->ops;
  g_assert_cmpint (ops->may_queue (f.e, &other, SIM_OP_READ, TRUE), ==, SCHED_MAY_QUEUE_DEFAULT);
  g_assert_cmpint (ops->may_queue (f.e, &ra.ioc, SIM_OP_WRITE, FALSE), ==, SCHED_MAY_QUEUE_DEFAULT);
  g_assert_cmpint (ops->may_queue (f.e, &ra.ioc, SIM_OP_READ, TRUE), ==, SCHED_MAY_QUEUE_MUST);
  /* Once per slice. */
  g_assert_cmpint (ops->may_queue (f.e, &ra.ioc, SIM_OP_READ, TRUE), ==, SCHED_MAY_QUEUE_DEFAULT);
  fx_run_out (&f);
  fx_teardown (&f);
}

static void
test_exit_ioc (void)
{
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.28\n");
  guint64 a[1] = { 0 };
  guint64 b[1] = { 800000 };
  Reader ra, rb;
  reader_init (&ra, &f, 1, 2, 4, a, 1, 8, 0);
  reader_init (&rb, &f, 2, 2, 4, b, 1, 8, 0);
  reader_start_at (&ra, 0);
  reader_start_at (&rb, 1500 * SIM_NS_PER_US);
  sim_run_until (f.sim, 2 * MS);
  /* CFQ idles for A; B (far away) waits. */
  g_assert_cmpint (log_time_us (f.log->str, "idle_arm pid=1 until_us=9000"), ==, 1004);
  g_assert_cmpint (log_time_us (f.log->str, "dispatch pid=2 "), ==, -1);
  /* A exits: no reason to wait any more. */
  ra.ioc.exited = TRUE;
  ra.ioc.nr_tasks = 0;
  f.e->ops->exit_ioc (f.e, &ra.ioc, sim_now (f.sim));
  SchedCfqProcInfo info;
  g_assert_false (sched_cfq_proc_info (f.e, &ra.ioc, &info));
  fx_run_out (&f);
  g_assert_cmpint (log_time_us (f.log->str, "slice_expire pid=1 reason=empty"), ==, 2000);
  g_assert_cmpint (log_time_us (f.log->str, "dispatch pid=2 "), ==, 2000);
  /* B exits after its work: its queue is recycled for a newcomer. */
  f.e->ops->exit_ioc (f.e, &rb.ioc, sim_now (f.sim));
  guint64 c[2] = { 5000, 5008 };
  Reader rc;
  reader_init (&rc, &f, 3, 2, 4, c, 2, 8, 0);
  reader_start_at (&rc, sim_now (f.sim));
  fx_run_out (&f);
  g_assert_cmpuint (rc.done, ==, 2);
  fx_teardown (&f);
}

/* ---- 2.6.33: merge and split, low_latency, workloads ---------------------------- */

static void
test_queue_merge_then_split (void)
{
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.33\n");
  /* Two processes read alternate 32 KiB chunks, then far apart at random. */
  guint64 a[60], b[60];
  for (guint i = 0; i < 20; i++)
    {
      a[i] = (guint64) i * 128;
      b[i] = (guint64) i * 128 + 64;
    }
  for (guint i = 20; i < 60; i++)
    {
      a[i] = (guint64) ((i * 7919) % 101) * 300000 + 10000000;
      b[i] = (guint64) ((i * 104729) % 103) * 300000 + 50000000;
    }
  Reader ra, rb;
  reader_init (&ra, &f, 1, 2, 4, a, 60, 64, 2500 * SIM_NS_PER_US);
  reader_init (&rb, &f, 2, 2, 4, b, 60, 64, 2500 * SIM_NS_PER_US);
  reader_start_at (&ra, 0);
  reader_start_at (&rb, 100 * SIM_NS_PER_US);
  sim_run_until (f.sim, 40 * MS);
  g_assert_true (sched_cfq_same_queue (f.e, &ra.ioc, &rb.ioc));
  SchedCfqProcInfo info;
  g_assert_true (sched_cfq_proc_info (f.e, &ra.ioc, &info));
  g_assert_true (info.coop);
  g_assert_cmpuint (info.shared_by, ==, 2);
  g_assert_false (info.seeky);
  fx_run_out (&f);
  const char *merge = strstr (f.log->str, "queue_merge ");
  const char *split = strstr (f.log->str, "queue_split ");
  g_assert_nonnull (merge);
  g_assert_nonnull (split);
  g_assert_true (merge < split);
  g_assert_false (sched_cfq_same_queue (f.e, &ra.ioc, &rb.ioc));
  g_assert_true (sched_cfq_proc_info (f.e, &ra.ioc, &info));
  g_assert_false (info.coop);
  g_assert_cmpuint (info.shared_by, ==, 1);
  fx_teardown (&f);
}

static void
slice_range (const char *log, int *min_ms, int *max_ms)
{
  *min_ms = G_MAXINT;
  *max_ms = 0;
  for (const char *p = strstr (log, "slice_start "); p; p = strstr (p + 1, "slice_start "))
    {
      const char *ms = strstr (p, "slice_ms=");
      int v = atoi (ms + strlen ("slice_ms="));
      *min_ms = MIN (*min_ms, v);
      *max_ms = MAX (*max_ms, v);
    }
}

static void
test_low_latency_slices (void)
{
  for (guint ll = 0; ll < 2; ll++)
    {
      Fx f;
      fx_setup (&f, fixed_dev, 1000, ll ? "era = 2.6.33\n" : "era = 2.6.33\nlow_latency = false\n");
      Reader r[8];
      guint64 *s[8];
      for (guint i = 0; i < 8; i++)
        {
          s[i] = sequential ((guint64) i * 10000000, 200, 8);
          reader_init (&r[i], &f, 10 + i, 2, 4, s[i], 200, 8, 0);
          reader_start_at (&r[i], (SimTime) i * 10 * SIM_NS_PER_US);
        }
      fx_run_out (&f);
      int mn, mx;
      slice_range (f.log->str, &mn, &mx);
      if (ll)
        {
          /* Eight busy queues do not fit 300 ms at 100 ms each: slices
           * shrink, but not below 2 * slice_idle * slice / slice_sync. */
          g_assert_cmpint (mn, <, 100);
          g_assert_cmpint (mn, >=, 16);
        }
      else
        {
          g_assert_cmpint (mn, ==, 100);
          g_assert_cmpint (mx, ==, 100);
        }
      for (guint i = 0; i < 8; i++)
        g_free (s[i]);
      fx_teardown (&f);
    }
}

static void
test_workload_trees (void)
{
  Fx f;
  fx_setup (&f, fixed_dev, 1000, "era = 2.6.33\n");
  g_autofree guint64 *a = sequential (0, 40, 8);
  guint64 far[200];
  for (guint i = 0; i < 200; i++)
    far[i] = (guint64) ((i * 7919) % 97) * 400000 + 2000000;
  Reader r, rs;
  reader_init (&r, &f, 1, 2, 4, a, 40, 8, 0);
  reader_init (&rs, &f, 2, 2, 4, far, 200, 8, 0);
  /* The seeky reader starts alone and loses its idle window; then a
   * sequential reader and a writer join. */
  reader_start_at (&rs, 0);
  reader_start_at (&r, 20 * MS);
  sim_run_until (f.sim, 20 * MS);
  SimIoContext w = { .pid = 3, .comm = "w", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };
  for (guint i = 0; i < 40; i++)
    submit_one (&f, &w, SIM_OP_WRITE, FALSE, 500000 + i * 8, 8, no_done, NULL);
  fx_run_out (&f);
  g_assert_nonnull (strstr (f.log->str, "workload class=be type=sync "));
  g_assert_nonnull (strstr (f.log->str, "workload class=be type=async "));
  g_assert_nonnull (strstr (f.log->str, "workload class=be type=sync_noidle "));
  fx_teardown (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sched/cfq/tunables/hz", test_tunables_hz);
  g_test_add_func ("/sched/cfq/tunables/era-switches", test_era_switches);
  g_test_add_func ("/sched/cfq/slice/by-prio", test_slice_by_prio);
  g_test_add_func ("/sched/cfq/slice/in-use", test_slice_in_use);
  g_test_add_func ("/sched/cfq/idle-window/think-time", test_idle_window_think_time);
  g_test_add_func ("/sched/cfq/idle-window/seeky", test_idle_window_seeky);
  g_test_add_func ("/sched/cfq/idling/holds-the-disk", test_idling_holds_the_disk);
  g_test_add_func ("/sched/cfq/idling/not-with-requests-in-driver", test_no_idle_with_requests_in_driver);
  g_test_add_func ("/sched/cfq/preempt/sync-over-async", test_preempt_sync_over_async);
  g_test_add_func ("/sched/cfq/preempt/rt", test_preempt_rt);
  g_test_add_func ("/sched/cfq/preempt/close-request", test_preempt_close_request);
  g_test_add_func ("/sched/cfq/preempt/idle-class", test_preempt_idle_class);
  g_test_add_func ("/sched/cfq/async/request-cap", test_async_request_cap);
  g_test_add_func ("/sched/cfq/async/waits-for-sync", test_async_waits_for_sync);
  g_test_add_func ("/sched/cfq/fifo/expiry", test_fifo_expiry);
  g_test_add_func ("/sched/cfq/hw-tag", test_hw_tag_detection);
  g_test_add_func ("/sched/cfq/may-queue", test_may_queue_waited_for);
  g_test_add_func ("/sched/cfq/exit-ioc", test_exit_ioc);
  g_test_add_func ("/sched/cfq/queue-merge/merge-then-split", test_queue_merge_then_split);
  g_test_add_func ("/sched/cfq/low-latency/slices", test_low_latency_slices);
  g_test_add_func ("/sched/cfq/workload-trees", test_workload_trees);
  g_test_add_func ("/sched/cfq/interleaved/collapse-and-merge", test_interleaved_collapse_and_merge);
  for (guint i = 0; i < G_N_ELEMENTS (coop_rows); i++)
    g_test_add_data_func (coop_rows[i].path, GUINT_TO_POINTER (i), test_close_cooperator);
  g_test_add_func ("/sched/cfq/interleaved/deterministic", test_interleaved_deterministic);
  return g_test_run ();
}
