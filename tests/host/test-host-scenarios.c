/* test-host-scenarios.c — processes on the host model's CPUs: system
 * calls cost exactly their profile's steps, asynchronous I/O costs more
 * CPU per I/O than synchronous I/O, a global lock stops buffered writes
 * from scaling where a per-file-system lock does not, and runs stay
 * deterministic with unfair locks; lock call sites (2.4.18 ext3's BKL)
 * add up to their lock, hold what the profile says when uncontended, and
 * appear in the text and JSON reports; on a dual PIII the BKL, not the
 * page cache, bounds Bonnie++ writers.  scenario_run asserts the CPU
 * accounting (user + sys + idle + iowait = elapsed x CPUs) at each end. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "host-test.h"

#define run_text(text, sets) host_test_run_text ((text), "host", (sets), 0)
#define run_file(file, sets) host_test_run_file ((file), (sets), 0)
#define profile(name) host_test_profile (name)
#define lock_named(r, name) host_test_lock ((r), (name))

static SimTime
path_ns (const HostProfile *p, HostPathId id)
{
  return host_steps_cpu_ns (p, p->paths[id].call) + host_steps_cpu_ns (p, p->paths[id].each);
}

static guint64
total_ios (const SimRunResult *r)
{
  guint64 n = 0;
  for (guint i = 0; i < r->processes->len; i++)
    n += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->ios;
  return n;
}

/* System time of the run in ns, from the sy percentage. */
static double
sys_ns (const SimRunResult *r)
{
  return r->cpu.sy / 100.0 * (double) r->elapsed_ns * r->n_cpus;
}

static const char direct_reader[] =
  "[host]\ncpus = 1\nprofile = 2.4-ext3\n[sim]\nduration = 2s\n"
  "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\n"
  "[process p]\ndevice = d\npattern = random\nbs = 64KiB\n";

/* One synchronous direct reader, nothing contended: each I/O costs the
 * submit path (one request: 64 KiB < max_sectors) on the thread and the
 * complete path as interrupt work, nothing else. */
static void
test_direct_costs (void)
{
  g_autoptr (SimRunResult) r = run_text (direct_reader, NULL);
  g_autoptr (HostProfile) p = profile ("2.4-ext3");
  guint64 ios = total_ios (r);
  g_assert_cmpuint (ios, >, 1000);
  double per_io = path_ns (p, HOST_PATH_SUBMIT) + path_ns (p, HOST_PATH_COMPLETE);
  /* The I/O in flight at the end has paid its submission only. */
  double expected = (double) ios * per_io;
  g_test_message ("sys %.0f ns, expected %.0f", sys_ns (r), expected);
  g_assert_cmpfloat (sys_ns (r), >=, expected - 1);
  g_assert_cmpfloat (sys_ns (r), <=, expected + path_ns (p, HOST_PATH_SUBMIT) + 1);
  g_assert_cmpfloat (r->cpu.us, ==, 0.0);
  /* Waiting on the device: the rest is iowait, none of it idle. */
  g_assert_cmpfloat (r->cpu.id, <, 0.01);
  g_assert_cmpfloat (r->cpu.wa, >, 90.0);
  /* One interrupt per completed request. */
  g_assert_cmpfloat (r->cpu.in_per_s * (double) r->elapsed_ns / 1e9, ==, (double) ios);
}

/* cpu = 100us: the application's own work, in user mode, before each I/O
 * (and not overlapped with it: a synchronous reader). */
static void
test_user_cpu (void)
{
  const char *const sets[] = { "process p.cpu=100us", NULL };
  g_autoptr (SimRunResult) r = run_text (direct_reader, sets);
  g_autoptr (SimRunResult) plain = run_text (direct_reader, NULL);
  guint64 ios = total_ios (r);
  double user_ns = r->cpu.us / 100.0 * (double) r->elapsed_ns;
  g_assert_cmpfloat (user_ns, >=, (double) ios * 100e3 - 1);
  g_assert_cmpfloat (user_ns, <=, (double) (ios + 1) * 100e3 + 1);
  g_assert_cmpuint (ios, <, total_ios (plain));
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) bad = scenario_load_data (
    "[device d]\nkind = fixed\n[process p]\ncpu = 1ms\nsize = 1MiB\n", "bad", NULL, NULL, &error);
  g_assert_null (bad);
  g_assert_nonnull (strstr (error->message, "cpu"));
}

/* 2.6's pagevec: lru_lock once per 14 pages, tree_lock twice per page. */
static void
test_pagevec_batching (void)
{
  g_autoptr (SimRunResult) r = run_text (
    "[host]\ncpus = 1\nprofile = 2.6-ext3\nmemory = 256MiB\nwriteback = io-less-3.2\n"
    "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\n"
    "[process p]\ndevice = d\nop = write\nio = buffered\nbs = 20KiB\nsize = 560KiB\n", NULL);
  const SimLockResult *lru = lock_named (r, "lru_lock");
  g_assert_nonnull (lru);
  g_assert_cmpuint (lru->stats.acquisitions, ==, 140 / 14);
  g_assert_cmpuint (lock_named (r, "tree_lock[p]")->stats.acquisitions, ==, 2 * 140);
  g_assert_cmpuint (lock_named (r, "i_mutex[p]")->stats.acquisitions, ==, 560 / 20);
}

/* libaio costs more CPU per I/O than synchronous reads, at depth 1 and 4. */
static void
test_aio_costs_more (void)
{
  g_autoptr (SimRunResult) sync = run_text (direct_reader, NULL);
  double sync_per_io = sys_ns (sync) / (double) total_ios (sync);
  for (guint depth = 1; depth <= 4; depth += 3)
    {
      g_autofree char *set = g_strdup_printf ("process p.iodepth=%u", depth);
      const char *const sets[] = { set, "process p.engine=libaio", NULL };
      g_autoptr (SimRunResult) aio = run_text (direct_reader, sets);
      double aio_per_io = sys_ns (aio) / (double) total_ios (aio);
      g_test_message ("depth %u: %.0f ns per I/O (sync %.0f)", depth, aio_per_io, sync_per_io);
      g_assert_cmpfloat (aio_per_io, >, sync_per_io);
      /* Deeper queues keep the device busier; at depth 1 the dearer
       * calls only add to each I/O's time. */
      if (depth > 1)
        g_assert_cmpuint (total_ios (aio), >, total_ios (sync));
      else
        g_assert_cmpuint (total_ios (aio), <=, total_ios (sync));
    }
}

static const char lock_scaling[] =
  "[host]\ncpus = 8\nprofile = 2.4-ext3\nmemory = 1GiB\nwriteback = global-2.6\n"
  "[sim]\nduration = 3s\n"
  "[device d]\ncount = 8\nkind = fixed\noverhead = 0.2ms\nbandwidth = 200MB/s\n"
  "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 8KiB\n";

static double
total_mb_per_s (const SimRunResult *r)
{
  guint64 bytes = 0;
  for (guint i = 0; i < r->processes->len; i++)
    bytes += ((const SimProcessResult *) g_ptr_array_index (r->processes, i))->bytes;
  return (double) bytes / ((double) r->elapsed_ns / 1e9) / 1e6;
}

/* Eight writers on eight CPUs: 2.4 ext3's global BKL makes them spin in
 * turn; the same lock per file system lets them run side by side. */
static void
test_global_lock_limits_scaling (void)
{
  g_autoptr (SimRunResult) global = run_text (lock_scaling, NULL);
  const char *const per_fs[] = { "lock bkl.scope=fs", NULL };
  g_autoptr (SimRunResult) fs = run_text (lock_scaling, per_fs);
  const SimLockResult *bkl = lock_named (global, "bkl");
  g_assert_nonnull (bkl);
  g_assert_nonnull (lock_named (fs, "bkl[d0]"));
  g_assert_null (lock_named (fs, "bkl"));
  g_test_message ("global BKL %.1f MB/s (contention %.1f%%, util %.1f%%), per-fs %.1f MB/s",
                  total_mb_per_s (global), bkl->stats.contention_pct,
                  100 * bkl->stats.utilisation, total_mb_per_s (fs));
  g_assert_cmpfloat (bkl->stats.contention_pct, >, 50.0);
  g_assert_cmpfloat (bkl->stats.utilisation, >, 0.8);
  g_assert_cmpfloat (total_mb_per_s (fs), >, 1.5 * total_mb_per_s (global));
  /* Spinning on the BKL is system time that writes nothing. */
  g_assert_cmpfloat (global->cpu.sy, >, 50.0);
}

static void
test_deterministic (void)
{
  const char *const per_fs[] = { "sim.duration=1s", NULL };
  g_autoptr (SimRunResult) a = run_text (lock_scaling, per_fs);
  g_autoptr (SimRunResult) b = run_text (lock_scaling, per_fs);
  g_autoptr (GPtrArray) ra = g_ptr_array_new ();
  g_autoptr (GPtrArray) rb = g_ptr_array_new ();
  g_ptr_array_add (ra, a);
  g_ptr_array_add (rb, b);
  g_autofree char *ja = sim_report_json ("d", 1, ra);
  g_autofree char *jb = sim_report_json ("d", 1, rb);
  g_assert_cmpstr (ja, ==, jb);
  g_assert_nonnull (strstr (ja, "\"host\""));
}

static void
test_bad_host_keys (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { "[host]\nprofile = 2.4-ext3\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n", "cpus" },
    { "[host]\ncpus = 2\nprofile = 2.2-ext2\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n",
      "2.2-ext2" },
    { "[host]\ncpus = 2\n[lock bkl]\nscope = planet\n[device d]\nkind = fixed\n"
      "[process p]\nsize = 1MiB\n", "scope" },
    { "[host]\ncpus = 2\n[sim]\nduration = 1s\n[device d]\nkind = fixed\n[process p]\nop = sync\nthink = 1s\n",
      "op = sync" },
    { "[costs]\nsyscall = 1us\n[device d]\nkind = fixed\n[process p]\nsize = 1MiB\n", "cpus" },
    /* Buses and adapters. */
    { "[adapter a]\nbus = pcie\n[device d]\nkind = fixed\nadapter = a\n[process p]\nsize = 1MiB\n",
      "pcie" },
    { "[adapter a]\ncan_queue = 0\n[device d]\nkind = fixed\nadapter = a\n[process p]\nsize = 1MiB\n",
      "can_queue" },
    { "[adapter a]\nhost_bus = pci\n[device d]\nkind = fixed\nadapter = a\n[process p]\nsize = 1MiB\n",
      "no [bus pci]" },
    { "[device d]\nkind = fixed\nadapter = nowhere\n[process p]\nsize = 1MiB\n", "nowhere" },
    { "[adapter a]\nbandwidth = fast\n[device d]\nkind = fixed\nadapter = a\n[process p]\nsize = 1MiB\n",
      "bandwidth" },
    { "[adapter a]\nwidth = 16\n[device d]\nkind = fixed\nadapter = a\n[process p]\nsize = 1MiB\n",
      "width" },
    { "[adapter ide]\nbus = ide\n[device d]\ncount = 3\nkind = fixed\n[device d0]\n", "count" },
    { "[adapter ide]\nbus = ide\n[device a]\nkind = fixed\nadapter = ide\n[device b]\nkind = fixed\n"
      "adapter = ide\n[device c]\nkind = fixed\nadapter = ide\n[process p]\ndevice = a\nsize = 1MiB\n",
      "two devices" },
    { "[adapter a]\nbus = shared\narbitration = fifo\n[device d]\nkind = fixed\nadapter = a\n"
      "[process p]\nsize = 1MiB\n", "only an IDE channel" },
    { "[adapter a]\nbus = ide\narbitration = elevator\n[device d]\nkind = fixed\nadapter = a\n"
      "[process p]\nsize = 1MiB\n", "'elevator'" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (cases[i].text, "bad", NULL, NULL, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' does not mention '%s'", i, error->message, cases[i].needle);
    }
}


/* ---- 2.4.18 ext3: the BKL per call site -------------------------------- */

static char *
bkl_text (guint cpus, guint writers)
{
  return g_strdup_printf ("[host]\ncpus = %u\nprofile = 2.4.18-ext3\nmemory = 2GiB\n"
                          "writeback = bdflush-2.4\n[sim]\nduration = 300ms\n"
                          "[device d]\ncount = %u\nkind = fixed\noverhead = 0.3ms\nbandwidth = 40MB/s\n"
                          "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 8KiB\n",
                          cpus, writers);
}

static SimRunResult *
run_bkl (guint cpus, guint writers)
{
  g_autofree char *text = bkl_text (cpus, writers);
  return run_text (text, NULL);
}

static const SimLockSiteResult *
site_named (const SimLockResult *l, const char *name)
{
  for (guint i = 0; i < l->sites->len; i++)
    {
      const SimLockSiteResult *s = g_ptr_array_index (l->sites, i);
      if (strcmp (s->name, name) == 0)
        return s;
    }
  return NULL;
}

/* Three writers on two CPUs: every grant, wait and hold of the BKL is
 * counted once under one of its sites. */
static void
test_bkl_sites_add_up (void)
{
  g_autoptr (SimRunResult) r = run_bkl (2, 3);
  const SimLockResult *bkl = lock_named (r, "bkl");
  g_assert_nonnull (bkl);
  g_assert_cmpuint (bkl->sites->len, ==, 6);
  guint64 acq = 0, cont = 0, rel = 0;
  SimTime hold = 0, wait = 0, hold_max = 0, wait_max = 0;
  double util = 0;
  for (guint i = 0; i < bkl->sites->len; i++)
    {
      const SimLockStats *st = &((const SimLockSiteResult *) g_ptr_array_index (bkl->sites, i))->stats;
      acq += st->acquisitions;
      cont += st->contentions;
      rel += st->releases;
      hold += st->hold_total_ns;
      wait += st->wait_total_ns;
      hold_max = MAX (hold_max, st->hold_max_ns);
      wait_max = MAX (wait_max, st->wait_max_ns);
      util += st->utilisation;
    }
  g_assert_cmpuint (bkl->stats.contentions, >, 0);
  g_assert_cmpuint (acq, ==, bkl->stats.acquisitions);
  g_assert_cmpuint (cont, ==, bkl->stats.contentions);
  g_assert_cmpuint (rel, ==, bkl->stats.releases);
  g_assert_cmpint (hold, ==, bkl->stats.hold_total_ns);
  g_assert_cmpint (wait, ==, bkl->stats.wait_total_ns);
  g_assert_cmpint (hold_max, ==, bkl->stats.hold_max_ns);
  g_assert_cmpint (wait_max, ==, bkl->stats.wait_max_ns);
  g_assert_cmpfloat_with_epsilon (util, bkl->stats.utilisation, 1e-9);
}

/* One writer: nobody to contend with, so each site holds the BKL exactly
 * as long as its profile step says, every time. */
static void
test_bkl_site_hold_is_cost (void)
{
  g_autoptr (SimRunResult) r = run_bkl (2, 1);
  g_autoptr (HostProfile) p = profile ("2.4.18-ext3");
  const SimLockResult *bkl = lock_named (r, "bkl");
  g_assert_cmpuint (bkl->stats.contentions, ==, 0);
  guint checked = 0;
  for (guint path = 0; path < 2; path++)
    {
      const GArray *steps = path == 0 ? p->paths[HOST_PATH_WRITE].call : p->paths[HOST_PATH_WRITE].each;
      for (guint i = 0; i < steps->len; i++)
        {
          const HostStep *s = &g_array_index (steps, HostStep, i);
          const HostLockDef *d = g_ptr_array_index (p->locks, s->lock);
          if (s->kind != HOST_STEP_HOLD || strcmp (d->name, "bkl") != 0)
            continue;
          const SimLockSiteResult *site = site_named (bkl, g_ptr_array_index (d->sites, s->site - 1));
          g_assert_nonnull (site);
          g_assert_cmpuint (site->stats.acquisitions, >, 100);
          g_assert_cmpuint (site->stats.contentions, ==, 0);
          g_assert_cmpfloat_with_epsilon (site->stats.hold_mean_ns, (double) s->ns, 1e-6);
          g_assert_cmpint (site->stats.hold_max_ns, ==, s->ns);
          checked++;
        }
    }
  g_assert_cmpuint (checked, ==, 5);
}

/* More writers than CPUs: the BKL, free for one writer, is contended, and
 * spinning for it is a measurable share of the CPUs. */
static void
test_bkl_contention_rises (void)
{
  g_autoptr (SimRunResult) one = run_bkl (2, 1);
  g_autoptr (SimRunResult) three = run_bkl (2, 3);
  const SimLockResult *b1 = lock_named (one, "bkl"), *b3 = lock_named (three, "bkl");
  g_test_message ("BKL contention: 1 writer %.1f%%, 3 writers %.1f%% (%.2f%% of CPU spinning)",
                  b1->stats.contention_pct, b3->stats.contention_pct, b3->stats.wait_cpu_pct);
  g_assert_cmpfloat (b1->stats.contention_pct, ==, 0.0);
  g_assert_cmpfloat (b3->stats.contention_pct, >, 10.0);
  g_assert_cmpfloat (b3->stats.wait_cpu_pct, >, 1.0);
  g_assert_cmpfloat (b3->stats.utilisation, >, b1->stats.utilisation);
}

/* Both reports carry lockmeter's rows, one per site of the profile
 * (kjournald's too: its first commit starts at 100 ms here). */
static void
test_bkl_sites_reported (void)
{
  g_autofree char *bkl = bkl_text (2, 2);
  const char *const sets[] = { "journal.commit_interval=100ms", NULL };
  g_autoptr (SimRunResult) r = run_text (bkl, sets);
  g_assert_cmpuint (r->journal_pages, >, 0);
  g_autoptr (GString) text = g_string_new (NULL);
  sim_report_run_text (text, r);
  g_autoptr (GPtrArray) runs = g_ptr_array_new ();
  g_ptr_array_add (runs, r);
  g_autofree char *json = sim_report_json ("bkl", 1, runs);
  g_assert_nonnull (strstr (text->str, "lockmeter"));
  g_assert_nonnull (strstr (json, "\"sites\""));
  g_autoptr (HostProfile) p = profile ("2.4.18-ext3");
  guint sites = 0;
  for (guint i = 0; i < p->locks->len; i++)
    {
      const HostLockDef *d = g_ptr_array_index (p->locks, i);
      for (guint k = 0; k < d->sites->len; k++)
        {
          const char *name = g_ptr_array_index (d->sites, k);
          g_autofree char *quoted = g_strdup_printf ("\"site\" : \"%s\"", name);
          g_autofree char *row = g_strdup_printf ("  %s\n", name);
          if (strstr (text->str, row) == NULL)
            g_error ("site %s not in the text report", name);
          if (strstr (json, quoted) == NULL)
            g_error ("site %s not in the JSON", name);
          sites++;
        }
    }
  g_assert_cmpuint (sites, >=, 5);
}

/* ---- 2.6.9 on the Altix: node locks, irq-off locks -------------------- */

/* scope = node: one lru_lock per NUMA node, the node of the CPU taking it;
 * four writers on four CPUs in two nodes use both, and nothing else. */
static void
test_node_locks (void)
{
  const char *text =
    "[host]\ncpus = 4\nnodes = 2\nprofile = 2.6.9-altix\nmemory = 2GiB\nwriteback = global-2.6\n"
    "[sim]\nduration = 200ms\n"
    "[device d]\ncount = 4\nkind = fixed\noverhead = 0.3ms\nbandwidth = 100MB/s\n"
    "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 64KiB\n";
  g_autoptr (SimRunResult) r = run_text (text, NULL);
  guint n = 0;
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      if (g_str_has_prefix (l->name, "lru_lock"))
        {
          g_assert_true (strcmp (l->name, "lru_lock[node0]") == 0
                         || strcmp (l->name, "lru_lock[node1]") == 0);
          g_assert_cmpuint (l->stats.acquisitions, >, 10);
          n++;
        }
    }
  g_assert_cmpuint (n, ==, 2);
  const char *const three[] = { "host.nodes=3", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) bad = scenario_load_data (text, "bad", NULL, three, &error);
  g_assert_null (bad);
  g_assert_nonnull (strstr (error->message, "nodes"));
}

/* ---- the shipped scenarios (models/scenarios/host-*.ini) ------------- */

static const SimBusResult *
bus_named (const SimRunResult *r, const char *name)
{
  for (guint i = 0; i < r->buses->len; i++)
    {
      const SimBusResult *b = g_ptr_array_index (r->buses, i);
      if (strcmp (b->name, name) == 0)
        return b;
    }
  g_error ("no bus %s", name);
}

/* Scenario 1: 24 disks, 4 adapters, one PCI bus, 4 CPUs, 2.4 ext3. */
static void
test_many_disks (void)
{
  const double pci = 528e6;
  const char *const direct_write[] = { "process io.io=direct", NULL };
  const char *const direct_read[] = { "process io.io=direct", "process io.op=read", NULL };
  const char *const buffered_read[] = { "process io.op=read", NULL };
  g_autoptr (SimRunResult) bw = run_file ("host-many-disks.ini", NULL);
  g_autoptr (SimRunResult) dw = run_file ("host-many-disks.ini", direct_write);
  g_autoptr (SimRunResult) dr = run_file ("host-many-disks.ini", direct_read);
  g_autoptr (SimRunResult) br = run_file ("host-many-disks.ini", buffered_read);
  g_assert_cmpuint (bw->processes->len, ==, 24);
  g_test_message ("buffered write %.1f MB/s sy %.1f%%, direct write %.1f sy %.1f, "
                  "direct read %.1f sy %.1f, buffered read %.1f sy %.1f",
                  total_mb_per_s (bw), bw->cpu.sy, total_mb_per_s (dw), dw->cpu.sy,
                  total_mb_per_s (dr), dr->cpu.sy, total_mb_per_s (br), br->cpu.sy);
  /* O_DIRECT: the PCI bus is the limit, the CPUs wait on it. */
  g_assert_cmpfloat (total_mb_per_s (dw), >, 0.95 * pci / 1e6);
  g_assert_cmpfloat (total_mb_per_s (dr), >, 0.95 * pci / 1e6);
  g_assert_cmpfloat (bus_named (dw, "pci")->utilisation, >, 0.95);
  g_assert_cmpfloat (dw->cpu.sy, <, 5.0);
  /* Buffered writes: every CPU busy in the kernel, the BKL always held,
   * and less written than O_DIRECT moves. */
  g_assert_cmpfloat (bw->cpu.sy, >, 95.0);
  g_assert_cmpfloat (lock_named (bw, "bkl")->stats.utilisation, >, 0.9);
  g_assert_cmpfloat (total_mb_per_s (bw), <, 0.9 * total_mb_per_s (dw));
  /* Buffered reads copy every page but take no BKL: still the bus's. */
  g_assert_cmpfloat (total_mb_per_s (br), >, 0.9 * pci / 1e6);
  g_assert_cmpfloat (br->cpu.sy, >, 5 * dr->cpu.sy);
}

static double
grid_mb_per_s (guint per_adapter, guint adapters, gboolean per_fs)
{
  g_autofree char *devices = g_strdup_printf ("device d.count=%u", per_adapter * adapters);
  g_autofree char *adapter = g_strdup_printf ("adapter a.count=%u", adapters);
  const char *const sets[] = { devices, adapter, per_fs ? "lock bkl.scope=fs" : NULL, NULL };
  g_autoptr (SimRunResult) r = run_file ("host-lock-scaling.ini", sets);
  double mb = total_mb_per_s (r);
  g_test_message ("%s %u disks x %u adapters: %.1f MB/s, sy %.1f%%", per_fs ? "per-fs" : "global",
                  per_adapter, adapters, mb, r->cpu.sy);
  return mb;
}

/* Scenario 2: 8 KiB buffered writes on 1..16 disks over 1..4 adapters. */
static void
test_lock_scaling (void)
{
  double global8 = grid_mb_per_s (4, 2, FALSE), global16 = grid_mb_per_s (4, 4, FALSE);
  double fs8 = grid_mb_per_s (4, 2, TRUE), fs16 = grid_mb_per_s (4, 4, TRUE);
  /* The global BKL: twice the disks, (almost) nothing more. */
  g_assert_cmpfloat (global16, <, 1.1 * global8);
  /* A lock per file system: twice the disks, far more. */
  g_assert_cmpfloat (fs16, >, 1.5 * fs8);
  g_assert_cmpfloat (fs16, >, 1.5 * global16);
}

/* The devices' busy fraction, averaged. */
static double
mean_device_utilisation (const SimRunResult *r)
{
  double sum = 0;
  for (guint i = 0; i < r->devices->len; i++)
    sum += ((const SimDeviceResult *) g_ptr_array_index (r->devices, i))->utilisation;
  return sum / r->devices->len;
}

/* One point of the Bonnie++ grid: @per_adapter drives on each of the four
 * adapters, one writer and one kjournald each; @extra: one more --set
 * (NULL: none). */
static SimRunResult *
bonnie_run (guint per_adapter, const char *extra)
{
  g_autofree char *devices = g_strdup_printf ("device sd.count=%u", 4 * per_adapter);
  const char *const sets[] = { devices, extra, NULL };
  return run_file ("host-bkl-bonnie.ini", sets);
}

static const SimLockSiteResult *site_named (const SimLockResult *l, const char *name);

/* Scenario 5: the 2.4.18 ext3 BKL report.  On the dual PIII, four to 24
 * Bonnie++ writers get the same throughput: the BKL is held most of the
 * time and contended, every CPU is in the kernel.  Each file system's
 * kjournald commits every 5 s under the BKL (retaking it in schedule()),
 * writes the ordered data and costs the writers some throughput, the same
 * share however many file systems there are: its work is per page
 * written, not per writer.  Only kjournald writes; the page cache never
 * reaches bdflush's threshold, nobody waits for memory.  With a BKL per
 * file system the same four writers get more: the flat curve is the
 * lock's. */
static void
test_bonnie_bkl (void)
{
  static const guint per_adapter[] = { 1, 2, 4, 6 };
  const double memory_pages = 8.0 * 1024 * 1024 * 1024 / 4096;
  double first = 0;
  for (guint i = 0; i < G_N_ELEMENTS (per_adapter); i++)
    {
      g_autoptr (SimRunResult) r = bonnie_run (per_adapter[i], NULL);
      const SimLockResult *bkl = lock_named (r, "bkl");
      const SimLockSiteResult *sched = site_named (bkl, "schedule");
      double mb = total_mb_per_s (r);
      guint64 dirty = r->page_cache.dirtied - r->page_cache.written;
      g_test_message ("%u drives x 4 adapters: %.1f MB/s, sy %.1f%%, BKL util %.1f%% con %.1f%%,"
                      " kjournald %" G_GUINT64_FORMAT " commits %" G_GUINT64_FORMAT " pages,"
                      " schedule hold mean %.0f us max %.0f us, dirty %" G_GUINT64_FORMAT " pages",
                      per_adapter[i], mb, r->cpu.sy, 100 * bkl->stats.utilisation,
                      bkl->stats.contention_pct, r->journal_commits, r->journal_pages,
                      sched->stats.hold_mean_ns / 1e3, sched->stats.hold_max_ns / 1e3, dirty);
      g_assert_cmpuint (r->processes->len, ==, 4 * per_adapter[i]);
      if (i == 0)
        first = mb;
      else
        {
          g_assert_cmpfloat (mb, <, 1.05 * first);
          g_assert_cmpfloat (mb, >, 0.95 * first);
        }
      g_assert_cmpfloat (bkl->stats.utilisation, >, 0.8);
      g_assert_cmpfloat (bkl->stats.contention_pct, >, 20.0);
      g_assert_cmpfloat (r->cpu.sy, >, 95.0);
      /* Every file system committed (the first commit at 5 s; on 2.4's
       * plug list only because kjournald unplugs before it sleeps for a
       * request or on its data), each wake of a kjournald one
       * acquisition of the BKL in schedule(). */
      g_assert_cmpuint (r->journal_commits, >=, 4 * per_adapter[i]);
      g_assert_cmpuint (sched->stats.acquisitions, ==, r->journal_wakes);
      /* Not the page cache: kjournald alone writes (2.4.18 bdflush's
       * nfract, 40 %, and kupdated's 30 s age are never reached), nobody
       * waited for memory. */
      g_assert_cmpuint (r->page_cache.written, <=, r->journal_pages);
      g_assert_cmpuint (r->page_cache.memory_waits, ==, 0);
      g_assert_cmpfloat ((double) dirty, <, 0.40 * memory_pages);
    }
  /* kjournald's work under the BKL is the writers' loss. */
  g_autoptr (SimRunResult) off = bonnie_run (1, "journal.enabled=false");
  g_test_message ("without kjournald, 4 writers: %.1f MB/s", total_mb_per_s (off));
  g_assert_cmpuint (off->journal_commits + off->journal_pages, ==, 0);
  g_assert_cmpfloat (total_mb_per_s (off), >, 1.02 * first);
  g_autoptr (SimRunResult) fs = bonnie_run (1, "lock bkl.scope=fs");
  g_test_message ("BKL per file system, 4 writers: %.1f MB/s", total_mb_per_s (fs));
  g_assert_cmpfloat (total_mb_per_s (fs), >, 1.15 * first);
}

/* With the memory the report's kernel used (it saw 1 GB) the 24 writers
 * reach bdflush's nfract and write batches of their own, fill the write
 * pools and sleep for requests.  A bio that slept merges, when it wakes,
 * into the request queued before it (2.4.18's __make_request retries its
 * merge), so no queue keeps a backlog beside its drive's free tags.
 * Before that retry each such bio took a request of its own: 64 of 8 KiB
 * exhausted a pool, the queue plugged again with nobody to run tq_disk
 * until a kjournald commit, and sd0 held 26.8 requests on average that
 * its drive never saw (2.4 after the retry, the most of any device). */
static void
test_bonnie_report_memory (void)
{
  const char *const sets[] = { "device sd.count=24", "host.memory=1GiB", NULL };
  g_autoptr (SimRunResult) r = run_file ("host-bkl-bonnie.ini", sets);
  guint64 sleeps = 0;
  for (guint i = 0; i < r->devices->len; i++)
    {
      const SimDeviceResult *d = g_ptr_array_index (r->devices, i);
      double waiting = d->mean_queue_depth - d->mean_in_flight;
      g_test_message ("%s: %.2f requests waiting, %.2f in flight, %" G_GUINT64_FORMAT
                      " request sleeps", d->name, waiting, d->mean_in_flight, d->counters.sleeps);
      sleeps += d->counters.sleeps;
      /* A tenth of the 64-request write pool. */
      g_assert_cmpfloat (waiting, <, 6.4);
    }
  g_assert_cmpuint (sleeps, >, 0);
  g_assert_cmpuint (r->page_cache.written, >, r->journal_pages);
}

static const SimLockSiteResult *
lock_site_sum (const SimRunResult *r, const char *prefix, const char *site, guint64 *acq)
{
  const SimLockSiteResult *any = NULL;
  *acq = 0;
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      if (!g_str_has_prefix (l->name, prefix) || l->sites == NULL)
        continue;
      const SimLockSiteResult *s = site_named (l, site);
      if (s)
        {
          *acq += s->stats.acquisitions;
          any = s;
        }
    }
  return any;
}

/* The Altix tests below look at the mechanisms in the first seconds, while
 * memory fills; the shipped study runs until well after it has settled
 * (check_altix_settled). */
#define ALTIX_FIRST_SECONDS "sim.duration=4s"

/* The study as shipped: once memory is full and the writers are throttled,
 * their balance passes and spinning leave less CPU for copying pages, so
 * the write() rate over the whole run falls well below that of the first
 * seconds (which fill memory at the copy's pace) and below what the same
 * disks give O_DIRECT readers, with the machine still CPU-bound.  @start:
 * the first seconds' run. */
static void
check_altix_settled (const SimRunResult *start)
{
  const char *const direct_read[] = { ALTIX_FIRST_SECONDS, "process w.io=direct",
                                      "process w.op=read", NULL };
  g_autoptr (SimRunResult) whole = run_file ("host-altix-writers.ini", NULL);
  g_autoptr (SimRunResult) reads = run_file ("host-altix-writers.ini", direct_read);
  g_test_message ("buffered write(): %.0f MB/s over %.0f s, %.0f MB/s over the first 4 s; "
                  "O_DIRECT reads %.0f MB/s; sy %.1f%% r %.1f",
                  total_mb_per_s (whole), (double) whole->elapsed_ns / 1e9,
                  total_mb_per_s (start), total_mb_per_s (reads), whole->cpu.sy, whole->cpu.r);
  g_assert_cmpint (whole->elapsed_ns, >=, 5 * start->elapsed_ns);
  g_assert_cmpfloat (total_mb_per_s (whole), <, 0.75 * total_mb_per_s (start));
  g_assert_cmpfloat (total_mb_per_s (whole), <, total_mb_per_s (reads));
  g_assert_cmpfloat (whole->cpu.sy, >, 90.0);
  g_assert_cmpfloat (whole->cpu.r, >, (double) whole->n_cpus);
}

/* Scenario 6: 58 disks, 8 ia64 CPUs in four nodes, 2.6.9.  Buffered
 * writers spend far more system time than O_DIRECT writers of the same
 * disks, which wait on the disks with the CPUs idle in iowait; the
 * buffered writers' own reclaim (lru_lock in shrink_cache) and writeback
 * (tree_lock in test_set_page_writeback) run on their CPUs, and their
 * completions take tree_lock (test_clear_page_writeback) and the global
 * page_uptodate_lock in interrupt context.  Throttled writers sleep in
 * blk_congestion_wait, which any of the 58 queues' freed write requests
 * ends (one wait queue for the machine), and every pass walks the dirty
 * file systems under the global sb_lock and inode_lock: the mechanisms
 * imply more runnable writers than CPUs, all CPUs in the kernel, and a
 * contended inode_lock.  (The report's halved write bandwidth is a
 * figure, not a direction; README "Host model" says what the run gives.) */
static void
test_altix_writers (void)
{
  const char *const first[] = { ALTIX_FIRST_SECONDS, NULL };
  const char *const direct[] = { ALTIX_FIRST_SECONDS, "process w.io=direct", NULL };
  g_autoptr (SimRunResult) b = run_file ("host-altix-writers.ini", first);
  g_autoptr (SimRunResult) d = run_file ("host-altix-writers.ini", direct);
  g_test_message ("buffered %.0f MB/s sy %.1f%% wa %.1f%% r %.1f b %.1f; "
                  "O_DIRECT %.0f MB/s sy %.1f%% wa %.1f%%", total_mb_per_s (b), b->cpu.sy, b->cpu.wa,
                  b->cpu.r, b->cpu.b, total_mb_per_s (d), d->cpu.sy, d->cpu.wa);
  g_assert_cmpuint (b->processes->len, ==, 58);
  /* O_DIRECT: not CPU-bound. */
  g_assert_cmpfloat (d->cpu.sy, <, 5.0);
  g_assert_cmpfloat (d->cpu.wa, >, 90.0);
  /* Buffered: the page-cache path costs CPU, many times O_DIRECT's. */
  g_assert_cmpfloat (b->cpu.sy, >, 8.0 * d->cpu.sy);
  g_assert_cmpfloat (b->cpu.sy / total_mb_per_s (b), >, 4.0 * d->cpu.sy / total_mb_per_s (d));
  guint64 reclaim = 0, writeback = 0;
  g_assert_nonnull (lock_site_sum (b, "lru_lock[node", "shrink_cache", &reclaim));
  g_assert_nonnull (lock_site_sum (b, "tree_lock[", "test_set_page_writeback", &writeback));
  g_assert_cmpuint (reclaim, >, 0);
  g_assert_cmpuint (writeback, >, 0);
  g_assert_cmpuint (b->page_cache.reclaimed, >, 0);
  /* Interrupt-context holds. */
  guint64 irq_tree = 0;
  g_assert_nonnull (lock_site_sum (b, "tree_lock[", "test_clear_page_writeback", &irq_tree));
  g_assert_cmpuint (irq_tree, >, 0);
  g_assert_cmpuint (lock_named (b, "page_uptodate_lock")->stats.acquisitions, >, 0);
  /* The balance passes: CPU-bound, more runnable writers than CPUs, most
   * inode_lock acquisitions wait. */
  const SimLockResult *il = lock_named (b, "inode_lock");
  g_test_message ("inode_lock: %.1f%% contended, %.1f%% of all CPU time spinning; sb_lock %.1f%%",
                  il->stats.contention_pct, il->stats.wait_cpu_pct,
                  lock_named (b, "sb_lock")->stats.contention_pct);
  g_assert_cmpfloat (b->cpu.sy, >, 90.0);
  g_assert_cmpfloat (b->cpu.r, >, (double) b->n_cpus);
  g_assert_cmpfloat (il->stats.contention_pct, >, 50.0);
  /* O_DIRECT writers never throttle: no pass, no sb_lock. */
  g_assert_null (lock_named (d, "sb_lock"));
  /* 2.6.9's O(1) scheduler: pdflush, asleep for seconds, wakes with the
   * best priority and preempts a writer at its next exec; on one FIFO run
   * queue it waits behind every runnable writer.  So it writes back many
   * more pages under O1. */
  const char *const fifo[] = { ALTIX_FIRST_SECONDS, "host.scheduler=fifo", NULL };
  g_autoptr (SimRunResult) f = run_file ("host-altix-writers.ini", fifo);
  g_test_message ("pdflush pages: o1 %" G_GUINT64_FORMAT ", fifo %" G_GUINT64_FORMAT,
                  b->flusher_pages, f->flusher_pages);
  g_assert_cmpuint (b->flusher_pages, >, 2 * f->flusher_pages);
  check_altix_settled (b);
}

/* The same machine with 2 GiB: memory is full of the writers' pages from
 * the first second, the coldest of them under writeback.  2.6.9's
 * shrink_cache puts each page it cannot free back at the hot end, so a
 * writer's next scan meets pages whose writes have ended and frees them:
 * the writers stay CPU-bound and rarely wait for memory.  (A scan that
 * stopped at the same coldest pages every time made them wait on those
 * pages' writes: hundreds of thousands of memory waits, sy near 60 %.) */
static void
test_altix_writers_memory_full (void)
{
  const char *const small[] = { ALTIX_FIRST_SECONDS, "host.memory=2GiB", NULL };
  g_autoptr (SimRunResult) r = run_file ("host-altix-writers.ini", small);
  const SimPageCacheStats *pc = &r->page_cache;
  g_test_message ("2 GiB: %.0f MB/s sy %.1f%% wa %.1f%%, reclaimed %" G_GUINT64_FORMAT
                  " put back %" G_GUINT64_FORMAT " memory waits %" G_GUINT64_FORMAT,
                  total_mb_per_s (r), r->cpu.sy, r->cpu.wa, pc->reclaimed, pc->rotated,
                  pc->memory_waits);
  g_assert_cmpuint (pc->reclaimed, >, 0);
  g_assert_cmpuint (pc->rotated, >, 0);
  g_assert_cmpuint (pc->memory_waits * 100, <, pc->reclaimed);
  g_assert_cmpfloat (r->cpu.sy, >, 80.0);
  g_assert_cmpfloat (r->cpu.r, >, (double) r->n_cpus);
}

/* The run's kernel profile accounts for its system time: the CPU of every
 * profile step (writers, kjournald, pdflush, interrupt work) and the
 * spinning for every spinlock add up to vmstat's sy, short only by the
 * steps still running at the end (charged when they start).  Shipped
 * studies of three eras: the Altix's 2.6.9 write path (irq locks,
 * interrupts, balance passes, pdflush), the 2.4.18 ext3 BKL (kjournald,
 * per-site BKL holds), 2.5.35's raw aio (buffer heads per sector). */
typedef struct {
  const char *file;
  const char *sets[3];
} ProfileCase;

static const ProfileCase profile_cases[] = {
  { "host-altix-writers.ini", { "sim.duration=1s", NULL } },
  { "host-bkl-bonnie.ini", { "sim.duration=2s", "device sd.count=8", NULL } },
  { "classic-raw-aio-2.5.ini", { "sim.duration=2s", "process io.engine=libaio", NULL } },
};

static void
test_profile_accounts (gconstpointer data)
{
  const ProfileCase *c = data;
  g_autoptr (SimRunResult) r = run_file (c->file, c->sets);
  SimTime total = 0, spin = 0;
  for (guint i = 0; i < r->symbols->len; i++)
    {
      const SimSymbolResult *y = g_ptr_array_index (r->symbols, i);
      g_assert_cmpint (y->cpu_ns, >, 0);
      if (i > 0)
        g_assert_cmpint (y->cpu_ns, <=,
                         ((const SimSymbolResult *) g_ptr_array_index (r->symbols, i - 1))->cpu_ns);
      total += y->cpu_ns;
      if (g_str_has_prefix (y->name, "spin: "))
        spin += y->cpu_ns;
    }
  double sys_ns = r->cpu.sy / 100.0 * (double) r->elapsed_ns * r->n_cpus;
  g_test_message ("%s: profile %.4f CPU-s (spinning %.4f), sy %.4f CPU-s", c->file, total / 1e9,
                  spin / 1e9, sys_ns / 1e9);
  g_assert_cmpuint (r->symbols->len, >, 3);
  g_assert_cmpfloat (fabs ((double) total - sys_ns), <, 0.01 * sys_ns);
}

/* A buffered writer on a slow disk (4 requests, so that its writeback
 * bios wait for one and its file system stays on writeback_inodes' walk),
 * over the dirty limit from the start (64 MiB), and an O_DIRECT writer of
 * 4 KiB at depth 1 on a fast disk, whose every completion frees a write
 * request with its queue far below the congestion-off threshold.
 * - 2.6.9's blk_congestion_wait is woken by that (one wait queue for the
 *   machine): without it the throttled writer would make at most one
 *   balance_dirty_pages pass per 100 ms, 11 in the second counting the
 *   first, each visiting at most the 2 file systems under sb_lock; it
 *   makes many more.
 * - The completion interrupt takes page_uptodate_lock once per 4 KiB
 *   buffer head of every completed writeback page: never more than the
 *   pages whose writeback completed, and fewer only by the heads of the
 *   requests whose handlers were still running at the end (at most one
 *   512 KiB request, 128 heads, per CPU).
 * - The file's tree_lock is taken in the interrupt (test_clear_page_
 *   writeback) once per 16 KiB page, contending with its writer.
 * - The interrupt whose freed request ends the sleep pays for the wake-up
 *   (__wake_up under the wait queue's lock): once per task woken, and
 *   each woken task makes a pass that starts with finish_wait, so there
 *   are never more wake-ups than passes plus the one writer in flight. */
static void
test_altix_interrupts_and_passes (void)
{
  const char *text =
    "[host]\ncpus = 2\nprofile = 2.6.9-altix\nmemory = 64MiB\nwriteback = global-2.6\n"
    "[writeback]\nkernel = 2.6.9\n[sim]\nduration = 1s\n"
    "[device slow]\nkind = fixed\noverhead = 1ms\nbandwidth = 20MB/s\nnr_requests = 4\n"
    "[device fast]\nkind = fixed\noverhead = 0.1ms\nbandwidth = 100MB/s\n"
    "[process a]\ndevice = slow\nop = write\nio = buffered\nbs = 64KiB\n"
    "[process b]\ndevice = fast\nop = write\nio = direct\nbs = 4KiB\n";
  g_autoptr (SimRunResult) r = run_text (text, NULL);
  const SimLockResult *sb = lock_named (r, "sb_lock");
  g_assert_nonnull (sb);
  guint64 passes_bound = 11 * 2;
  g_test_message ("sb_lock %" G_GUINT64_FORMAT " acquisitions (timeout-only bound %" G_GUINT64_FORMAT ")",
                  sb->stats.acquisitions, passes_bound);
  g_assert_cmpuint (sb->stats.acquisitions, >, passes_bound);
  const SimLockResult *pu = lock_named (r, "page_uptodate_lock");
  g_assert_nonnull (pu);
  guint64 heads = pu->stats.acquisitions, written = r->page_cache.written;
  g_test_message ("page_uptodate_lock %" G_GUINT64_FORMAT ", pages written %" G_GUINT64_FORMAT,
                  heads, written);
  g_assert_cmpuint (heads, >, 0);
  g_assert_cmpuint (heads, <=, written);
  g_assert_cmpuint (written - heads, <=, 2 * 128);
  guint64 irq_tree = 0;
  g_assert_nonnull (lock_site_sum (r, "tree_lock[", "test_clear_page_writeback", &irq_tree));
  g_assert_cmpuint (irq_tree, >, 0);
  g_assert_cmpuint (irq_tree, <=, heads);
  guint64 wakes = 0, finish = 0;
  g_assert_nonnull (lock_site_sum (r, "congestion_wqh", "__wake_up", &wakes));
  g_assert_nonnull (lock_site_sum (r, "congestion_wqh", "finish_wait", &finish));
  g_test_message ("__wake_up %" G_GUINT64_FORMAT ", finish_wait %" G_GUINT64_FORMAT, wakes, finish);
  g_assert_cmpuint (wakes, >, 0);
  g_assert_cmpuint (wakes, <=, finish + 1);
}

/* CPU time per completed I/O, in ns. */
static double
cpu_per_io (const SimRunResult *r)
{
  return sys_ns (r) / (double) total_ios (r);
}

/* Scenario 3: synchronous reads against libaio at depth 1 and 4. */
static void
test_sync_vs_aio (void)
{
  const char *const aio1[] = { "process io.engine=libaio", NULL };
  const char *const aio4[] = { "process io.engine=libaio", "process io.iodepth=4", NULL };
  g_autoptr (SimRunResult) sync = run_file ("host-aio.ini", NULL);
  g_autoptr (SimRunResult) a1 = run_file ("host-aio.ini", aio1);
  g_autoptr (SimRunResult) a4 = run_file ("host-aio.ini", aio4);
  g_test_message ("sync %.1f MB/s %.2f us/IO, aio-1 %.1f MB/s %.2f us/IO, aio-4 %.1f MB/s %.2f us/IO",
                  total_mb_per_s (sync), cpu_per_io (sync) / 1e3, total_mb_per_s (a1),
                  cpu_per_io (a1) / 1e3, total_mb_per_s (a4), cpu_per_io (a4) / 1e3);
  g_assert_cmpfloat (cpu_per_io (a1), >, 1.1 * cpu_per_io (sync));
  g_assert_cmpfloat (cpu_per_io (a4), >, 1.1 * cpu_per_io (sync));
  /* Depth 1 is depth 1, however submitted. */
  g_assert_cmpfloat (total_mb_per_s (a1), >, 0.97 * total_mb_per_s (sync));
  g_assert_cmpfloat (total_mb_per_s (a1), <, 1.03 * total_mb_per_s (sync));
  /* Depth 4 keeps a command waiting at each disk, so the disks no longer
   * idle between a completion and the next submission; a disk serves its
   * commands in order (no reordering in dev-disk), so that idle time is
   * all depth 4 can win. */
  double util_sync = mean_device_utilisation (sync), util_a4 = mean_device_utilisation (a4);
  g_test_message ("disks busy: sync %.3f, aio-4 %.3f", util_sync, util_a4);
  g_assert_cmpfloat (util_sync, <, 0.99);
  g_assert_cmpfloat (util_a4, >, 0.999);
  g_assert_cmpfloat (total_mb_per_s (a4), >, total_mb_per_s (sync));
  g_assert_cmpfloat (total_mb_per_s (a4), <, 1.02 * total_mb_per_s (sync) / util_sync);
}

/* Scenario 4: master and slave on one IDE channel against one channel each. */
static void
test_ide_channel (void)
{
  const char *const apart[] = { "device hdb.adapter=ide1", NULL };
  g_autoptr (SimRunResult) shared = run_file ("host-ide.ini", NULL);
  g_autoptr (SimRunResult) separate = run_file ("host-ide.ini", apart);
  g_test_message ("one channel %.2f MB/s, two channels %.2f MB/s", total_mb_per_s (shared),
                  total_mb_per_s (separate));
  g_assert_cmpuint (bus_named (shared, "ide0.bus")->devices, ==, 2);
  g_assert_cmpuint (bus_named (shared, "ide0.bus")->max_active_devices, ==, 1);
  g_assert_cmpfloat (total_mb_per_s (shared), <, 0.6 * total_mb_per_s (separate));
  /* Taking turns, they share the channel evenly. */
  const SimProcessResult *a = g_ptr_array_index (shared->processes, 0);
  const SimProcessResult *b = g_ptr_array_index (shared->processes, 1);
  g_assert_cmpfloat (a->mb_per_s, <, 1.1 * b->mb_per_s);
  g_assert_cmpfloat (b->mb_per_s, <, 1.1 * a->mb_per_s);

  /* Alone on its channel a disk streams at its media rate: the channel
   * and the PCI bus are faster than the media and carry the data as the
   * disk reads it, so they add only each command's overhead and its last
   * sector (about 30 us on a 2.2 ms command). */
  g_autofree char *scenarios = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                      NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) bare_s =
    scenario_load_data ("[sim]\nduration = 5s\nseed = 1\n"
                        "[device hda]\nmodel = disk-5400-30gb\nsched = deadline\n"
                        "[process ra]\ndevice = hda\npattern = sequential\nio = direct\n"
                        "bs = 64KiB\n", "bare-disk", scenarios, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) bare = scenario_run (bare_s, 0, NULL, &error);
  g_assert_no_error (error);
  const SimProcessResult *alone = g_ptr_array_index (separate->processes, 0);
  const SimProcessResult *no_path = g_ptr_array_index (bare->processes, 0);
  g_test_message ("alone on a channel %.2f MB/s, no channel %.2f MB/s", alone->mb_per_s,
                  no_path->mb_per_s);
  g_assert_cmpfloat (alone->mb_per_s, >, 0.97 * no_path->mb_per_s);
  g_assert_cmpfloat (alone->mb_per_s, <=, no_path->mb_per_s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/host/direct-costs", test_direct_costs);
  g_test_add_func ("/host/user-cpu", test_user_cpu);
  g_test_add_func ("/host/pagevec-batching", test_pagevec_batching);
  g_test_add_func ("/host/aio-costs-more", test_aio_costs_more);
  g_test_add_func ("/host/global-lock-limits-scaling", test_global_lock_limits_scaling);
  g_test_add_func ("/host/deterministic", test_deterministic);
  g_test_add_func ("/host/bad-keys", test_bad_host_keys);
  g_test_add_func ("/host/bkl/sites-add-up", test_bkl_sites_add_up);
  g_test_add_func ("/host/bkl/site-hold-is-cost", test_bkl_site_hold_is_cost);
  g_test_add_func ("/host/bkl/contention-rises", test_bkl_contention_rises);
  g_test_add_func ("/host/bkl/sites-reported", test_bkl_sites_reported);
  g_test_add_func ("/host/node-locks", test_node_locks);
  g_test_add_func ("/host/scenario/many-disks", test_many_disks);
  g_test_add_func ("/host/scenario/lock-scaling", test_lock_scaling);
  g_test_add_func ("/host/scenario/sync-vs-aio", test_sync_vs_aio);
  g_test_add_func ("/host/scenario/bonnie-bkl", test_bonnie_bkl);
  g_test_add_func ("/host/scenario/bonnie-report-memory", test_bonnie_report_memory);
  g_test_add_func ("/host/scenario/altix-writers", test_altix_writers);
  g_test_add_func ("/host/scenario/altix-writers-memory-full", test_altix_writers_memory_full);
  for (guint i = 0; i < G_N_ELEMENTS (profile_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/host/readprofile/%s", profile_cases[i].file);
      g_test_add_data_func (path, &profile_cases[i], test_profile_accounts);
    }
  g_test_add_func ("/host/altix-interrupts-and-passes", test_altix_interrupts_and_passes);
  g_test_add_func ("/host/scenario/ide-channel", test_ide_channel);
  return g_test_run ();
}
