/* test-workloads.c — the workload shapes the elevators are judged on:
 * a thread pool taking the next chunk of one file (NFS server threads), a
 * dump(8)-style interleaved read, threads sharing an io context, async
 * (writeback-like) writes, and exit notification. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scenario.h"
#include "traces/trace-results.h"

typedef struct {
  char *io_log;
  char *trace_out;
} Outputs;

static void
run (const char *ini, Outputs *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "w", NULL, NULL, &error);
  g_assert_no_error (error);
  char *log_buf = NULL, *trace_buf = NULL;
  size_t log_len = 0, trace_len = 0;
  FILE *log = open_memstream (&log_buf, &log_len);
  FILE *trace = open_memstream (&trace_buf, &trace_len);
  trace_results_write_header (log);
  ScenarioOutputs outputs = { log, trace, NULL };
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (log);
  fclose (trace);
  o->io_log = log_buf;
  o->trace_out = trace_buf;
}

static void
outputs_clear (Outputs *o)
{
  free (o->io_log);
  free (o->trace_out);
}

/* Offsets read per process name, from the results CSV. */
static GHashTable *
offsets_by_process (const char *csv)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_array_unref);
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  for (guint i = 1; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      GArray *a = g_hash_table_lookup (h, f[0]);
      if (a == NULL)
        {
          a = g_array_new (FALSE, FALSE, sizeof (guint64));
          g_hash_table_insert (h, g_strdup (f[0]), a);
        }
      guint64 off = g_ascii_strtoull (f[4], NULL, 10);
      g_array_append_val (a, off);
    }
  return h;
}

static const char device[] =
  "[device d]\nkind = disk\ncapacity = 10GiB\nsched = deadline\n";

static void
test_shared_pool (void)
{
  g_autofree char *ini = g_strconcat (device,
    "[process nfsd]\npattern = sequential\nbs = 64KiB\nthreads = 4\nstream = shared\n"
    "offset = 1GiB\nsize = 4MiB\n", NULL);
  Outputs o;
  run (ini, &o);
  g_autoptr (GHashTable) h = offsets_by_process (o.io_log);
  g_assert_cmpuint (g_hash_table_size (h), ==, 4);
  /* Every 64 KiB chunk of the 4 MiB file is read exactly once, by some thread. */
  gboolean seen[64] = { FALSE };
  guint total = 0;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, h);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      GArray *a = value;
      g_assert_cmpuint (a->len, >, 1);   /* the work is spread over the pool */
      for (guint i = 0; i < a->len; i++)
        {
          guint64 chunk = (g_array_index (a, guint64, i) - (1u << 30)) / 65536;
          g_assert_cmpuint (chunk, <, 64);
          g_assert_false (seen[chunk]);
          seen[chunk] = TRUE;
          total++;
        }
    }
  g_assert_cmpuint (total, ==, 64);
  outputs_clear (&o);
}

static void
test_interleaved (void)
{
  g_autofree char *ini = g_strconcat (device,
    "[process dump]\npattern = sequential\nbs = 64KiB\nthreads = 4\nstream = interleaved\n"
    "offset = 1GiB\nsize = 4MiB\n", NULL);
  Outputs o;
  run (ini, &o);
  g_autoptr (GHashTable) h = offsets_by_process (o.io_log);
  for (guint t = 0; t < 4; t++)
    {
      g_autofree char *name = g_strdup_printf ("dump.%u", t);
      GArray *a = g_hash_table_lookup (h, name);
      g_assert_nonnull (a);
      g_assert_cmpuint (a->len, ==, 16);
      for (guint i = 0; i < a->len; i++)
        g_assert_cmpuint (g_array_index (a, guint64, i), ==,
                          (1u << 30) + (guint64) (t + 4 * i) * 65536);
    }
  outputs_clear (&o);
}

/* pids seen in Q records of the blkparse text. */
static GHashTable *
queue_pids (const char *text)
{
  GHashTable *pids = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] && lines[i][0]; i++)
    {
      g_auto (GStrv) f = g_strsplit_set (lines[i], " ", -1);
      guint n = 0;
      char *tok[16];
      for (guint j = 0; f[j] && n < 16; j++)
        if (f[j][0])
          tok[n++] = f[j];
      if (n > 5 && strcmp (tok[5], "Q") == 0)
        g_hash_table_add (pids, GUINT_TO_POINTER (atoi (tok[4])));
    }
  return pids;
}

static void
test_shared_io_context (void)
{
  g_autofree char *own = g_strconcat (device,
    "[process t]\npattern = random\nbs = 4KiB\nthreads = 3\nsize = 64KiB\n", NULL);
  g_autofree char *shared = g_strconcat (device,
    "[process t]\npattern = random\nbs = 4KiB\nthreads = 3\nsize = 64KiB\n"
    "shared_io_context = true\n", NULL);
  Outputs a, b;
  run (own, &a);
  run (shared, &b);
  g_autoptr (GHashTable) pa = queue_pids (a.trace_out);
  g_autoptr (GHashTable) pb = queue_pids (b.trace_out);
  g_assert_cmpuint (g_hash_table_size (pa), ==, 3);
  /* Threads sharing an io context look like one process to the elevator. */
  g_assert_cmpuint (g_hash_table_size (pb), ==, 1);
  outputs_clear (&a);
  outputs_clear (&b);
}

static void
test_async_writes (void)
{
  g_autofree char *ini = g_strconcat (device,
    "[process w]\nop = write\nbs = 64KiB\nsize = 256KiB\nsync = false\n"
    "[process r]\nop = read\nbs = 64KiB\nsize = 256KiB\noffset = 5GiB\n", NULL);
  Outputs o;
  run (ini, &o);
  g_assert_nonnull (strstr (o.trace_out, " Q   W "));
  g_assert_null (strstr (o.trace_out, " Q  WS "));
  g_assert_nonnull (strstr (o.trace_out, " Q  RS "));
  outputs_clear (&o);
}

/* Buffered I/O of any size in whole sectors: a file that does not end on a
 * page and a bs that is not a whole number of pages run to the end, every
 * byte counted, every page touched dirtied once (writes) or read (reads). */
typedef struct {
  const char *name;
  const char *op;
  guint64     size_bytes;
  guint64     bs_bytes;
  guint64     pages_dirtied;
} OddSizeCase;

static const OddSizeCase odd_size_cases[] = {
  { "write-odd-size", "write", 40000000, 1 << 20, (40000000 + 4095) / 4096 },
  { "write-odd-bs", "write", 3 << 20, 6 << 10, (3 << 20) / 4096 },
  { "read-odd-size", "read", 40000000, 1 << 20, 0 },
  { "read-odd-bs", "read", 3 << 20, 1536, 0 },
};

static void
test_odd_sizes (gconstpointer data)
{
  const OddSizeCase *c = data;
  g_autofree char *ini = g_strdup_printf (
    "[host]\nmemory = 256MiB\nwriteback = global-2.6\n%s"
    "[process p]\ndevice = d\nop = %s\nio = buffered\nsize = %" G_GUINT64_FORMAT
    "\nbs = %" G_GUINT64_FORMAT "\n", device, c->op, c->size_bytes, c->bs_bytes);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (ini, "odd", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  const SimProcessResult *p = g_ptr_array_index (r->processes, 0);
  g_assert_cmpuint (p->bytes, ==, c->size_bytes);
  g_assert_cmpuint (p->ios, ==, (c->size_bytes + c->bs_bytes - 1) / c->bs_bytes);
  g_assert_true (r->has_page_cache);
  g_assert_cmpuint (r->page_cache.dirtied, ==, c->pages_dirtied);
}

static void
test_bad_identity (void)
{
  static const struct { const char *extra; const char *needle; } cases[] = {
    { "ioprio_class = urgent\n", "ioprio_class" },
    { "ioprio = 9\n", "ioprio" },
    { "nice = 40\n", "nice" },
    { "stream = both\n", "stream" },
    { "stream = shared\nthreads = 2\n", "size" },
    { "sync = maybe\nsize = 4KiB\n", "sync" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *ini2 = g_strconcat (device, "[process p]\nstop = 1s\n", cases[i].extra, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (ini2, "bad", NULL, NULL, &error);
      g_assert_null (s);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' lacks '%s'", i, error->message, cases[i].needle);
    }
}

/* op = mixed: each I/O draws its direction (fio's rwmixread), so the
 * device sees reads in read_percent % of the I/Os, within four binomial
 * standard deviations; 0 and 100 give one direction only. */
static void
test_mixed (void)
{
  static const guint percents[] = { 0, 30, 70, 100 };
  const guint64 n = 4000;
  for (guint i = 0; i < G_N_ELEMENTS (percents); i++)
    {
      g_autofree char *ini = g_strdup_printf (
        "[device d]\nkind = fixed\noverhead = 50us\nbandwidth = 500MB/s\nqueue_depth = 32\n"
        "sched = noop\n[process p]\ndevice = d\nop = mixed\nread_percent = %u\n"
        "pattern = random\niodepth = 4\nsize = %" G_GUINT64_FORMAT "\n", percents[i], n * 4096);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (ini, "mix", NULL, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
      g_assert_no_error (error);
      const SimProcessResult *p = g_ptr_array_index (r->processes, 0);
      const SimDeviceResult *d = g_ptr_array_index (r->devices, 0);
      g_assert_cmpstr (p->op, ==, "mixed");
      g_assert_cmpuint (p->ios, ==, n);
      guint64 reads = d->counters.ios[SIM_OP_READ], writes = d->counters.ios[SIM_OP_WRITE];
      g_assert_cmpuint (reads + writes, ==, n);
      double q = percents[i] / 100.0;
      double sd = sqrt ((double) n * q * (1 - q));
      g_test_message ("read_percent %u: %" G_GUINT64_FORMAT " reads of %" G_GUINT64_FORMAT,
                      percents[i], reads, n);
      g_assert_cmpfloat (fabs ((double) reads - q * (double) n), <=, 4 * sd);
    }
}

/* rate_iops = N (fio's rate_iops, linear): the k-th I/O starts no sooner
 * than start + k / N, so on a device far faster than the rate the run
 * takes (n - 1) / N plus the last I/O's service, and no faster; without
 * the cap the same I/Os take a fraction of that.  With and without the
 * host model. */
static void
test_rate_iops (void)
{
  static const char *const hosts[] = { "", "[host]\ncpus = 2\nprofile = 2.6-ext3\n" };
  for (guint h = 0; h < G_N_ELEMENTS (hosts); h++)
    for (guint capped = 0; capped < 2; capped++)
      {
        g_autofree char *ini = g_strdup_printf (
          "%s[device d]\nkind = fixed\noverhead = 20us\nbandwidth = 1GB/s\nqueue_depth = 32\n"
          "sched = noop\n[process p]\ndevice = d\nop = read\npattern = random\n"
          "iodepth = 4\nsize = 2000KiB\nbs = 4KiB\n%s", hosts[h],
          capped ? "rate_iops = 1000\n" : "");
        g_autoptr (GError) error = NULL;
        g_autoptr (Scenario) s = scenario_load_data (ini, "rate", NULL, NULL, &error);
        g_assert_no_error (error);
        g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
        g_assert_no_error (error);
        const SimProcessResult *p = g_ptr_array_index (r->processes, 0);
        g_test_message ("host %u, capped %u: %" G_GUINT64_FORMAT " I/Os in %.6f s", h, capped,
                        p->ios, (double) r->elapsed_ns / 1e9);
        g_assert_cmpuint (p->ios, ==, 500);
        if (capped)
          {
            g_assert_cmpint (r->elapsed_ns, >=, 499 * SIM_NS_PER_MS);
            g_assert_cmpint (r->elapsed_ns, <, 501 * SIM_NS_PER_MS);
          }
        else
          g_assert_cmpint (r->elapsed_ns, <, 100 * SIM_NS_PER_MS);
      }
}

static void
test_mix_rate_refused (void)
{
  static const struct { const char *extra; const char *needle; } cases[] = {
    { "read_percent = 50\n", "read_percent: needs op = mixed" },
    { "op = mixed\nread_percent = 101\n", "read_percent" },
    { "op = mixed\nio = buffered\n", "op: mixed reads and writes need io = direct" },
    { "op = mixed\nstream = interleaved\nthreads = 2\nsize = 1MiB\n", "stream" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *ini = g_strconcat (device, "[process p]\nstop = 1s\n", cases[i].extra, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (ini, "bad", NULL, NULL, &error);
      g_assert_null (s);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' lacks '%s'", i, error->message, cases[i].needle);
    }
}

/* A buffered random writer draws its offsets one I/O ahead (so that the
 * page cache can start loading the next page's index node) without
 * changing them: it writes the same offsets, in the same order, as an
 * O_DIRECT writer of the same name, which draws each when it issues.  With
 * exponential think times the stream gives those too and nothing is drawn
 * ahead; the offsets must agree there as well. */
static const char *const think_cases[] = { "", "think = 1ms\nthink_distribution = exponential\n" };

static void
test_random_offsets_drawn_ahead (gconstpointer data)
{
  const char *think = data;
  GArray *offsets[2];
  Outputs o[2];
  static const char *const modes[] = { "direct", "buffered" };
  for (guint m = 0; m < 2; m++)
    {
      g_autofree char *ini = g_strdup_printf (
        "[host]\nmemory = 4MiB\n%s[process w]\ndevice = d\nop = write\nio = %s\n"
        "pattern = random\nregion = 64MiB\nsize = 4MiB\n%s", device, modes[m], think);
      run (ini, &o[m]);
      g_autoptr (GHashTable) by_process = offsets_by_process (o[m].io_log);
      offsets[m] = g_array_ref (g_hash_table_lookup (by_process, "w"));
    }
  g_assert_cmpuint (offsets[0]->len, ==, 1024);
  g_assert_cmpuint (offsets[1]->len, ==, offsets[0]->len);
  guint distinct = 0;
  for (guint i = 0; i < offsets[0]->len; i++)
    {
      g_assert_cmpuint (g_array_index (offsets[1], guint64, i), ==,
                        g_array_index (offsets[0], guint64, i));
      distinct += i > 0 && g_array_index (offsets[0], guint64, i)
                             != g_array_index (offsets[0], guint64, i - 1);
    }
  g_assert_cmpuint (distinct, >, 1000);
  for (guint m = 0; m < 2; m++)
    {
      g_array_unref (offsets[m]);
      outputs_clear (&o[m]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/workload/shared-pool", test_shared_pool);
  g_test_add_func ("/workload/interleaved", test_interleaved);
  g_test_add_func ("/workload/shared-io-context", test_shared_io_context);
  g_test_add_func ("/workload/async-writes", test_async_writes);
  g_test_add_func ("/workload/bad-identity", test_bad_identity);
  g_test_add_func ("/workload/mixed", test_mixed);
  g_test_add_func ("/workload/rate-iops", test_rate_iops);
  g_test_add_func ("/workload/mix-rate-refused", test_mix_rate_refused);
  g_test_add_data_func ("/workload/random-offsets-drawn-ahead/no-think", think_cases[0],
                        test_random_offsets_drawn_ahead);
  g_test_add_data_func ("/workload/random-offsets-drawn-ahead/exponential-think",
                        think_cases[1], test_random_offsets_drawn_ahead);
  for (guint i = 0; i < G_N_ELEMENTS (odd_size_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/workload/buffered/%s", odd_size_cases[i].name);
      g_test_add_data_func (path, &odd_size_cases[i], test_odd_sizes);
    }
  return g_test_run ();
}
