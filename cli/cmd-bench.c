/* cmd-bench.c — `iosim bench`: simulator speed on the workloads studies
 * spend their time in (issue 17).  Each workload is a scenario built here,
 * run once; the report gives simulated requests (the processes' read()
 * and write() calls) and events per second of wall time, ending with a
 * line "simulated_requests_per_s: N" for scripts. */
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "sim/sim-json.h"

#include "cli/cli.h"
#include "models/scenario.h"
#include "models/sched/sched.h"

#define BENCH_DISKS 4u
#define BENCH_PROCS_PER_DISK 2u

/* What one workload measured. */
typedef struct {
  const char *name;
  guint64     requests;       /* I/O calls the processes completed */
  guint64     events;
  double      simulated_s;
  double      wall_s;
  double      requests_per_s;
  double      events_per_s;
} BenchResult;

/* A workload's scenario for @sched and about @requests I/O calls in all;
 * @scratch is a private directory for files the scenario reads. */
typedef char *(*BenchScenarioFn) (const char *sched, guint64 requests, const char *scratch,
                                  GError **error);

typedef struct {
  const char      *name;
  BenchScenarioFn  scenario;
} BenchWorkload;

static void
append_disk (GString *ini, guint d, const char *sched)
{
  g_string_append_printf (ini, "\n[device sd%c]\nkind = disk\ncapacity = 500GiB\n"
                          "rpm = 7200\nqueue_depth = 1\nsched = %s\n", 'a' + d, sched);
}

/* Random 4 KiB O_DIRECT reads, 2 processes on each of 4 disks: the
 * elevators and the disk model, nothing above the block layer. */
static char *
scenario_direct_read (const char *sched, guint64 requests, const char *scratch, GError **error)
{
  g_autoptr (GString) ini = g_string_new ("[sim]\nseed = 1\nhz = 1000\n");
  guint64 per_proc = requests / (BENCH_DISKS * BENCH_PROCS_PER_DISK);
  for (guint d = 0; d < BENCH_DISKS; d++)
    {
      append_disk (ini, d, sched);
      for (guint p = 0; p < BENCH_PROCS_PER_DISK; p++)
        g_string_append_printf (ini, "\n[process rand%u_%u]\ndevice = sd%c\nop = read\n"
                                "pattern = random\nbs = 4KiB\nsize = %" G_GUINT64_FORMAT "\n",
                                d, p, 'a' + d, per_proc * 4096);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

/* Buffered 4 KiB writes through a 1 GiB page cache with io-less-3.2
 * writeback: on each disk one sequential writer and one random writer
 * over a 2 GiB file, so the cache fills, pages are reclaimed and
 * rewritten, and writeback runs the whole time. */
static char *
scenario_buffered_write (const char *sched, guint64 requests, const char *scratch,
                         GError **error)
{
  g_autoptr (GString) ini = g_string_new ("[host]\nmemory = 1GiB\nwriteback = io-less-3.2\n"
                                          "\n[sim]\nseed = 1\nhz = 1000\n");
  guint64 per_proc = requests / (BENCH_DISKS * BENCH_PROCS_PER_DISK);
  for (guint d = 0; d < BENCH_DISKS; d++)
    {
      append_disk (ini, d, sched);
      g_string_append_printf (ini, "\n[process seq%u]\ndevice = sd%c\nop = write\nio = buffered\n"
                              "pattern = sequential\nbs = 4KiB\nsize = %" G_GUINT64_FORMAT "\n",
                              d, 'a' + d, per_proc * 4096);
      g_string_append_printf (ini, "\n[process rand%u]\ndevice = sd%c\nop = write\nio = buffered\n"
                              "pattern = random\nbs = 4KiB\noffset = 100GiB\nregion = 2GiB\n"
                              "size = %" G_GUINT64_FORMAT "\n", d, 'a' + d, per_proc * 4096);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

/* The host model: 16 CPUs of a 2.4 ext3 machine (models/scenarios/
 * host-lock-scaling.ini), one sequential 8 KiB buffered writer per disk
 * behind one adapter; every write runs the profile's CPU path and takes
 * the BKL, so CPU and lock events dominate. */
static char *
scenario_host (const char *sched, guint64 requests, const char *scratch, GError **error)
{
  g_autoptr (GString) ini = g_string_new ("[host]\ncpus = 16\nprofile = 2.4-ext3\n"
                                          "memory = 512MiB\nwriteback = bdflush-2.4\n"
                                          "\n[sim]\nseed = 1\nhz = 1000\n"
                                          "\n[bus pci]\nbandwidth = 1066MB/s\n"
                                          "\n[adapter a]\nbandwidth = 320MB/s\noverhead = 20us\n"
                                          "can_queue = 128\nhost_bus = pci\nbus = shared\n");
  guint64 per_proc = requests / (BENCH_DISKS * BENCH_PROCS_PER_DISK);
  for (guint d = 0; d < BENCH_DISKS; d++)
    {
      g_string_append_printf (ini, "\n[device sd%c]\nkind = fixed\noverhead = 0.3ms\n"
                              "bandwidth = 60MB/s\ncapacity = 500GiB\nadapter = a\n"
                              "sched = %s\n", 'a' + d, sched);
      for (guint p = 0; p < BENCH_PROCS_PER_DISK; p++)
        g_string_append_printf (ini, "\n[process w%u_%u]\ndevice = sd%c\nop = write\n"
                                "io = buffered\npattern = sequential\nbs = 8KiB\n"
                                "offset = %uGiB\nsize = %" G_GUINT64_FORMAT "\n",
                                d, p, 'a' + d, p * 100, per_proc * 8192);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

/* A trace of 8 processes (pids 1000...1007), each issuing random 4 KiB
 * I/Os (7 reads in 10) one at a time, in the iosim CSV format: every I/O
 * a Q row and, 5 ms later, a C row; the next I/O 1 ms after that. */
static gboolean
write_trace (const char *path, guint64 requests, GError **error)
{
  guint procs = BENCH_DISKS * BENCH_PROCS_PER_DISK;
  guint64 rounds = requests / procs;
  g_autoptr (GString) csv = g_string_new ("time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,"
                                          "sector,nr_sectors,offset_bytes,length_bytes,error,"
                                          "io_tag,comm\n");
  g_autoptr (GRand) rand = g_rand_new_with_seed (17);
  const guint64 period_ns = 6000000, latency_ns = 5000000;
  g_autofree guint64 *sectors = g_new (guint64, procs);
  g_autofree gboolean *writes = g_new (gboolean, procs);
  for (guint64 r = 0; r < rounds; r++)
    {
      for (guint p = 0; p < procs; p++)
        {
          /* Anywhere in the first 400 GiB, 4 KiB aligned. */
          sectors[p] = (guint64) g_rand_int_range (rand, 0, 100 << 20) * 8;
          writes[p] = g_rand_int_range (rand, 0, 10) >= 7;
          g_string_append_printf (csv, "%" G_GUINT64_FORMAT ",8,0,0,%u,Q,%s,%" G_GUINT64_FORMAT
                                  ",8,%" G_GUINT64_FORMAT ",4096,0,0,bench\n",
                                  r * period_ns + p, 1000 + p, writes[p] ? "W" : "R",
                                  sectors[p], sectors[p] * 512);
        }
      for (guint p = 0; p < procs; p++)
        g_string_append_printf (csv, "%" G_GUINT64_FORMAT ",8,0,0,0,C,%s,%" G_GUINT64_FORMAT
                                ",8,%" G_GUINT64_FORMAT ",4096,0,0,\n",
                                r * period_ns + latency_ns + p, writes[p] ? "W" : "R",
                                sectors[p], sectors[p] * 512);
    }
  return g_file_set_contents (path, csv->str, (gssize) csv->len, error);
}

/* Trace-driven processes: the generated trace's 8 pids replayed closed
 * loop, two per disk, as `pattern = trace` does with a captured trace. */
static char *
scenario_trace (const char *sched, guint64 requests, const char *scratch, GError **error)
{
  g_autofree char *path = g_build_filename (scratch, "bench-trace.csv", NULL);
  if (!write_trace (path, requests, error))
    return NULL;
  g_autoptr (GString) ini = g_string_new ("[sim]\nseed = 1\nhz = 1000\n");
  for (guint d = 0; d < BENCH_DISKS; d++)
    {
      append_disk (ini, d, sched);
      for (guint p = 0; p < BENCH_PROCS_PER_DISK; p++)
        g_string_append_printf (ini, "\n[process replay%u_%u]\ndevice = sd%c\npattern = trace\n"
                                "trace = %s\ntrace_pid = %u\n",
                                d, p, 'a' + d, path, 1000 + d * BENCH_PROCS_PER_DISK + p);
    }
  return g_string_free (g_steal_pointer (&ini), FALSE);
}

static const BenchWorkload workloads[] = {
  { "direct-read", scenario_direct_read },
  { "buffered-write", scenario_buffered_write },
  { "host", scenario_host },
  { "trace", scenario_trace },
};

static void
remove_scratch (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Build, load and run @w's scenario; only the run is timed. */
static gboolean
bench_one (const BenchWorkload *w, const char *sched, gint64 requests, BenchResult *res,
           GError **error)
{
  g_autofree char *scratch = g_dir_make_tmp ("iosim-bench-XXXXXX", error);
  if (scratch == NULL)
    return FALSE;
  g_autofree char *ini = w->scenario (sched, (guint64) requests, scratch, error);
  g_autoptr (Scenario) s = ini ? scenario_load_data (ini, w->name, NULL, NULL, error) : NULL;
  remove_scratch (scratch);
  if (s == NULL)
    return FALSE;
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, error);
  gint64 t1 = g_get_monotonic_time ();
  if (r == NULL)
    return FALSE;
  guint64 done = 0;
  for (guint i = 0; i < r->processes->len; i++)
    done += ((SimProcessResult *) g_ptr_array_index (r->processes, i))->ios;
  *res = (BenchResult) { w->name, done, r->events, (double) r->elapsed_ns / 1e9,
                         MAX ((double) (t1 - t0) / 1e6, 1e-6), 0, 0 };
  res->requests_per_s = (double) done / res->wall_s;
  res->events_per_s = (double) r->events / res->wall_s;
  return TRUE;
}

static void
print_result (const BenchResult *r, const char *label)
{
  printf ("%-14s %" G_GUINT64_FORMAT " requests, %" G_GUINT64_FORMAT " events, "
          "%.1f s simulated, %.3f s wall: %.0f requests/s, %.0f events/s\n",
          label, r->requests, r->events, r->simulated_s, r->wall_s, r->requests_per_s,
          r->events_per_s);
}

static gboolean
write_json (const char *path, const char *sched, const GArray *results, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  sim_json_string (b, "sched", sched);
  json_builder_set_member_name (b, "workloads");
  json_builder_begin_array (b);
  const BenchResult *base = results->len ? &g_array_index (results, BenchResult, 0) : NULL;
  for (guint i = 0; i < results->len; i++)
    {
      const BenchResult *r = &g_array_index (results, BenchResult, i);
      json_builder_begin_object (b);
      sim_json_string (b, "workload", r->name);
      sim_json_int (b, "requests", (gint64) r->requests);
      sim_json_int (b, "events", (gint64) r->events);
      sim_json_double (b, "simulated_s", r->simulated_s);
      sim_json_double (b, "wall_s", r->wall_s);
      sim_json_double (b, "requests_per_s", r->requests_per_s);
      sim_json_double (b, "events_per_s", r->events_per_s);
      if (results->len > 1 && strcmp (base->name, "direct-read") == 0)
        {
          sim_json_double (b, "ratio_to_direct_read", r->requests_per_s / base->requests_per_s);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  if (strcmp (path, "-") == 0)
    {
      printf ("%s\n", text);
      return TRUE;
    }
  g_autofree char *line = g_strconcat (text, "\n", NULL);
  return g_file_set_contents (path, line, -1, error);
}

static const BenchWorkload *
find_workload (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (workloads); i++)
    if (strcmp (workloads[i].name, name) == 0)
      return &workloads[i];
  return NULL;
}

/* --all: direct-read under every elevator, relative to deadline. */
static int
bench_all_scheds (gint64 requests)
{
  g_autoptr (GError) error = NULL;
  BenchResult base, r;
  if (!bench_one (&workloads[0], "deadline", requests, &base, &error))
    goto failed;
  print_result (&base, "deadline");
  for (const SchedOps *const *ops = sched_ops_all (); *ops; ops++)
    {
      if (strcmp ((*ops)->name, "deadline") == 0)
        continue;
      if (!bench_one (&workloads[0], (*ops)->name, requests, &r, &error))
        goto failed;
      print_result (&r, (*ops)->name);
      printf ("%-14s %.2fx deadline's speed\n", "", r.requests_per_s / base.requests_per_s);
    }
  printf ("simulated_requests_per_s: %.0f\n", base.requests_per_s);
  return 0;

failed:
  fprintf (stderr, "iosim bench: %s\n", error->message);
  return 1;
}

int
cli_cmd_bench (int argc, char **argv)
{
  gint64 requests = 1000000;
  g_autofree char *sched = NULL, *workload = NULL, *json = NULL;
  gboolean all = FALSE;
  GOptionEntry entries[] = {
    { "requests", 'n', 0, G_OPTION_ARG_INT64, &requests, "Requests to simulate (default 1000000)", "N" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &workload,
      "direct-read (default), buffered-write, host, trace, or all", "NAME" },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &sched, "Elevator of the disks (default deadline)", "NAME" },
    { "all", 'a', 0, G_OPTION_ARG_NONE, &all,
      "direct-read under every elevator, with its speed relative to deadline", NULL },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &json,
      "Write the figures as JSON ('-' = stdout, instead of the text)", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx,
    "Measure simulator speed: wall-clock time of one run of a built-in\n"
    "scenario, one core.  Requests are the processes' read() and write()\n"
    "calls; every workload has 8 processes, 2 on each of 4 disks.");
  g_option_context_set_description (ctx,
    "Workloads:\n"
    "  direct-read     random 4 KiB O_DIRECT reads: elevator and disk model only\n"
    "  buffered-write  4 KiB buffered writes (a sequential and a random writer\n"
    "                  per disk) through a 1 GiB page cache, io-less-3.2\n"
    "                  writeback: page lookups, dirtying, reclaim, writeback\n"
    "  host            8 KiB buffered writes on a 16-CPU 2.4 ext3 host model\n"
    "                  (profile 2.4-ext3, the BKL): CPU and lock events\n"
    "  trace           a generated trace (iosim CSV, random 4 KiB, 7 reads in\n"
    "                  10) replayed closed loop by trace-driven processes\n"
    "  all             each of them, with its speed relative to direct-read\n"
    "\n"
    "Wall time varies 2-5x between runs on a shared machine: compare\n"
    "instructions per request instead (tests/bench/bench-workloads.sh runs\n"
    "each workload under callgrind).  The last line is\n"
    "'simulated_requests_per_s: N' for the workload measured (direct-read's\n"
    "with --workload all, deadline's with --all).\n"
    "\n"
    "Examples:\n"
    "  iosim bench\n"
    "  iosim bench --workload all -n 200000\n"
    "  iosim bench --workload buffered-write --json -\n");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || requests < 8)
    {
      fprintf (stderr, "iosim bench: %s\n", error ? error->message : "--requests must be >= 8");
      return 2;
    }
  gboolean every = workload != NULL && strcmp (workload, "all") == 0;
  const BenchWorkload *one = find_workload (workload ? workload : "direct-read");
  if (!every && one == NULL)
    {
      fprintf (stderr, "iosim bench: unknown workload '%s' (direct-read, buffered-write, host, "
               "trace or all)\n", workload);
      return 2;
    }
  if (all)
    {
      if ((workload && one != &workloads[0]) || sched || json)
        {
          fprintf (stderr, "iosim bench: --all measures direct-read under every elevator; "
                   "leave out --workload, --sched and --json\n");
          return 2;
        }
      return bench_all_scheds (requests);
    }

  const char *elevator = sched ? sched : "deadline";
  g_autoptr (GArray) results = g_array_new (FALSE, FALSE, sizeof (BenchResult));
  gboolean text = json == NULL || strcmp (json, "-") != 0;
  for (guint i = 0; i < G_N_ELEMENTS (workloads); i++)
    {
      if (!every && &workloads[i] != one)
        continue;
      BenchResult r;
      if (!bench_one (&workloads[i], elevator, requests, &r, &error))
        goto failed;
      g_array_append_val (results, r);
      if (!text)
        continue;
      print_result (&r, r.name);
      if (every && i > 0)
        printf ("%-14s %.2fx direct-read's speed\n", "",
                r.requests_per_s / g_array_index (results, BenchResult, 0).requests_per_s);
    }
  if (json && !write_json (json, elevator, results, &error))
    goto failed;
  if (text)
    printf ("simulated_requests_per_s: %.0f\n",
            g_array_index (results, BenchResult, 0).requests_per_s);
  return 0;

failed:
  fprintf (stderr, "iosim bench: %s\n", error->message);
  return 1;
}
