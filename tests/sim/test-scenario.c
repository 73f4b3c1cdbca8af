/* test-scenario.c — shipped scenarios against golden outputs, determinism
 * (same seed: identical bytes), and the default study's claim: a streaming
 * writer starves the reader under noop, not under deadline. */
#include <glib.h>
#include <string.h>

#include "models/scenario.h"

static char *
run_scenario_text (const char *path, const char *const *sets, GPtrArray **runs_out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  GString *text = g_string_new (NULL);
  GPtrArray *runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      SimRunResult *result = scenario_run (s, r, NULL, &error);
      g_assert_no_error (error);
      sim_report_run_text (text, result);
      g_ptr_array_add (runs, result);
    }
  g_autofree char *json = sim_report_json (scenario_name (s), scenario_seed (s), runs);
  g_string_append (text, json);
  if (runs_out)
    *runs_out = runs;
  else
    g_ptr_array_unref (runs);
  return g_string_free (text, FALSE);
}

static char *
scenario_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios", name, NULL);
}

static void
test_golden (gconstpointer data)
{
  const char *name = data;
  g_autofree char *path = scenario_path (name);
  g_autofree char *text = run_scenario_text (path, NULL, NULL);
  g_autofree char *golden_name = g_strdup_printf ("%.*s.txt", (int) (strlen (name) - 4), name);
  g_autofree char *golden = g_test_build_filename (G_TEST_DIST, "reference", golden_name, NULL);
  g_autofree char *expected = NULL;
  if (g_getenv ("IOSIM_UPDATE_GOLDEN"))
    {
      g_assert_true (g_file_set_contents (golden, text, -1, NULL));
      return;
    }
  if (!g_file_get_contents (golden, &expected, NULL, NULL))
    {
      g_test_message ("missing %s; run with IOSIM_UPDATE_GOLDEN=1 to create it", golden);
      g_test_fail ();
      return;
    }
  g_assert_cmpstr (text, ==, expected);
}

static void
test_determinism (void)
{
  g_autofree char *path = scenario_path ("default.ini");
  g_autofree char *a = run_scenario_text (path, NULL, NULL);
  g_autofree char *b = run_scenario_text (path, NULL, NULL);
  g_assert_cmpstr (a, ==, b);
  /* Another seed changes nothing for sequential streams, but the seed is
   * printed, so the bytes differ. */
  const char *sets[] = { "sim.seed=2", NULL };
  g_autofree char *c = run_scenario_text (path, sets, NULL);
  g_assert_cmpstr (a, !=, c);
}

static const SimProcessResult *
find_process (const SimRunResult *r, const char *name)
{
  for (guint i = 0; i < r->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, i);
      if (strcmp (p->name, name) == 0)
        return p;
    }
  g_assert_not_reached ();
}

static void
test_default_study (void)
{
  g_autofree char *path = scenario_path ("default.ini");
  GPtrArray *runs = NULL;
  g_autofree char *text = run_scenario_text (path, NULL, &runs);
  g_assert_cmpuint (runs->len, ==, 2);
  const SimRunResult *noop = g_ptr_array_index (runs, 0);
  const SimRunResult *deadline = g_ptr_array_index (runs, 1);
  g_assert_cmpstr (noop->label, ==, "noop");
  g_assert_cmpstr (deadline->label, ==, "deadline");
  const SimProcessResult *rn = find_process (noop, "reader");
  const SimProcessResult *rd = find_process (deadline, "reader");
  /* deadline must serve the reader at least twice as fast, and its median
   * read latency must be far below noop's. */
  g_assert_cmpfloat (rd->mb_per_s, >, 2.0 * rn->mb_per_s);
  g_assert_cmpint (rd->lat_p50_ns * 4, <, rn->lat_p50_ns);
  /* The writer still makes progress under deadline (no write starvation). */
  g_assert_cmpfloat (find_process (deadline, "writer")->mb_per_s, >, 0.5 * find_process (noop, "writer")->mb_per_s);
  g_ptr_array_unref (runs);
}

/* fsync = N, end_fsync and op = sync through a scenario: the counts follow
 * from the configuration, and no fsync returns before its pages are
 * written (the dirty pages at the end are only those dirtied since). */
static void
test_fsync_keys (void)
{
  const char *text =
    "[host]\nmemory = 256MiB\nwriteback = io-less-3.2\n[sim]\nduration = 10s\n"
    "[device a]\nmodel = disk-7200-sata\n"
    "[process db]\nop = write\nio = buffered\nbs = 8KiB\nthink = 10ms\nfsync = 4\nsize = 4MiB\n"
    "[process syncer]\nop = sync\nthink = 2s\n"
    "[process copier]\nop = write\nio = buffered\nbs = 1MiB\nsize = 64MiB\noffset = 1GiB\n"
    "end_fsync = true\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "fsync", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  const SimProcessResult *db = find_process (r, "db");
  g_assert_cmpuint (db->ios, ==, 512);
  g_assert_cmpuint (db->fsyncs, ==, 512 / 4);
  const SimProcessResult *syncer = find_process (r, "syncer");
  g_assert_cmpstr (syncer->op, ==, "sync");
  g_assert_cmpuint (syncer->ios, >=, 4);
  g_assert_cmpuint (syncer->bytes, ==, 0);
  const SimProcessResult *copier = find_process (r, "copier");
  g_assert_cmpuint (copier->fsyncs, ==, 1);
  /* 64 MiB reach a 7200 rpm disk in no less than about half a second. */
  g_assert_cmpint (copier->fsync_max_ns, >, 100 * G_GINT64_CONSTANT (1000000));
  g_assert_true (r->has_page_cache);
  g_assert_cmpuint (r->page_cache.syncs, ==, db->fsyncs + syncer->ios + 1);
  /* Everything both writers wrote is on the disk. */
  g_assert_cmpuint (r->page_cache.written, ==, (4 + 64) * 256);
}

/* [device d] count = 6 gives d0..d5, and a process on d one process per
 * device; --set applies before the expansion. */
static void
test_counted_groups (void)
{
  const char *text =
    "[sim]\nduration = 1s\n"
    "[device d]\ncount = 6\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\n"
    "[process p]\ndevice = d\nbs = 64KiB\n";
  g_autoptr (GError) error = NULL;
  const char *const sets[] = { "device d.count=4", NULL };
  g_autoptr (Scenario) s = scenario_load_data (text, "count", NULL, sets, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->devices->len, ==, 4);
  g_assert_cmpuint (r->processes->len, ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *name = g_strdup_printf ("p%u", i);
      g_autofree char *dev = g_strdup_printf ("d%u", i);
      const SimProcessResult *p = find_process (r, name);
      g_assert_cmpstr (p->device, ==, dev);
      g_assert_cmpuint (p->ios, >, 0);
    }
  static const char *const bad[] = {
    "[device d]\ncount = 0\nkind = fixed\n[process p]\ndevice = d\nsize = 1MiB\n",
    "[device d]\ncount = many\nkind = fixed\n[process p]\ndevice = d\nsize = 1MiB\n",
    "[device d]\ncount = 2\nkind = fixed\n[device d1]\nkind = fixed\n"
    "[process p]\ndevice = d\nsize = 1MiB\n",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) e = NULL;
      g_autoptr (Scenario) b = scenario_load_data (bad[i], "bad", NULL, NULL, &e);
      g_assert_null (b);
      g_assert_nonnull (strstr (e->message, "count"));
    }
}

/* Counted adapters on a counted host bus: adapter i of 4 sits on bus
 * i * 2 / 4, as devices go to adapters; an uncounted adapter naming a
 * counted bus is told to pick one. */
static void
test_counted_buses (void)
{
  const char *text =
    "[sim]\nduration = 200ms\n"
    "[bus pci]\ncount = 2\nbandwidth = 528MB/s\n"
    "[adapter scsi]\ncount = 4\nbandwidth = 160MB/s\noverhead = 20us\ncan_queue = 32\n"
    "host_bus = pci\nbus = shared\n"
    "[device sd]\ncount = 8\nkind = fixed\noverhead = 100us\nbandwidth = 80MB/s\n"
    "adapter = scsi\n"
    "[process p]\ndevice = sd\nop = read\nio = direct\nbs = 256KiB\n";
  static const char *const parents[] = { "pci0", "pci0", "pci1", "pci1" };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "buses", NULL, NULL, &error);
  g_autoptr (SimRunResult) r = NULL;
  guint adapters = 0, buses_with_bytes = 0;

  g_assert_no_error (error);
  r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < r->buses->len; i++)
    {
      const SimBusResult *b = g_ptr_array_index (r->buses, i);

      if (strcmp (b->kind, "adapter") == 0)
        {
          guint k = (guint) g_ascii_strtoull (b->name + 4, NULL, 10);

          g_assert_cmpuint (k, <, G_N_ELEMENTS (parents));
          g_assert_cmpstr (b->parent, ==, parents[k]);
          g_assert_cmpuint (b->devices, ==, 2);
          adapters++;
        }
      else if (g_str_has_prefix (b->name, "pci") && b->bytes > 0)
        buses_with_bytes++;
    }
  g_assert_cmpuint (adapters, ==, 4);
  g_assert_cmpuint (buses_with_bytes, ==, 2);
  {
    g_autoptr (GError) e = NULL;
    g_autoptr (Scenario) b = scenario_load_data (
      "[bus pci]\ncount = 2\nbandwidth = 528MB/s\n"
      "[adapter scsi]\nbandwidth = 160MB/s\nhost_bus = pci\n"
      "[device sd]\nkind = fixed\nadapter = scsi\n[process p]\nsize = 1MiB\n",
      "bad", NULL, NULL, &e);
    g_assert_null (b);
    g_assert_nonnull (strstr (e->message, "'pci' names 2 buses (pci0 ... pci1): give one, or "
                              "count the adapters too"));
  }
}

static void
test_bad_scenarios (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { "[device a]\nkind = fixed\n[process p]\nop = read\nsize = 1MiB\nbogus = 1\n", "bogus" },
    { "[device a]\nkind = fixed\nsched = cfqq\n[process p]\nsize = 1MiB\n", "cfqq" },
    { "[device a]\nkind = fixed\n[process p]\nop = read\n", "never ends" },
    { "[host]\nwriteback = lazy\n[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n", "lazy" },
    { "[host]\nwriteback = global-2.6\n[writeback]\ndirty_ratio = 300\n[device a]\nkind = fixed\n"
      "[process p]\nsize = 1MiB\n", "dirty_ratio" },
    { "[device a]\nkind = fixed\n[process p]\nop = read\nio = buffered\noffset = 2KiB\nsize = 1MiB\n", "4 KiB" },
    { "[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n[process p]\nsize = 2MiB\n",
      "line 5: group [process p] repeats the one at line 3" },
    { "[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n  size=2MiB\n",
      "line 5: key 'size' of [process p] is already set at line 4" },
    { "[host]\nreadahead = 2.5\n[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n", "readahead" },
    { "[device a]\nkind = fixed\n[process p]\nbs = 1000\nsize = 1MiB\n", "bs" },
    { "[device a]\nkind = fixed\n[process p]\ndevice = b\nsize = 1MiB\n", "device" },
    { "[sim]\nhz = fast\n[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n", "hz" },
    { "[device a]\nkind = fixed\n[sched deadline]\nread_expire = soon\n[process p]\nsize = 1MiB\n", "read_expire" },
    { "[device a]\nkind = warp\n[process p]\nsize = 1MiB\n", "warp" },
    { "[process p]\nsize = 1MiB\n", "device" },
    { "[device a]\nkind = fixed\n[process p]\nop = write\nfsync = 4\nsize = 1MiB\n", "fsync" },
    { "[device a]\nkind = fixed\n[process p]\nio = buffered\nend_fsync = yes\nsize = 1MiB\n",
      "end_fsync" },
    { "[device a]\nkind = fixed\n[process p]\nop = fsync\nsize = 1MiB\n", "sync" },
    { "[device a]\nkind = fixed\n[process p]\nio = buffered\nfadvise = willneed\nsize = 1MiB\n",
      "fadvise: unknown fadvise advice 'willneed' (normal, sequential, random)" },
    { "[device a]\nkind = fixed\n[process p]\nfadvise = sequential\nsize = 1MiB\n",
      "fadvise: needs io = buffered" },
    { "[device a]\nkind = fixed\n[process p]\nio = buffered\ntruncate = true\nsize = 1MiB\n",
      "truncate: needs op = write and io = buffered" },
    { "[device a]\nkind = fixed\n[process p]\nop = write\nio = buffered\nthreads = 2\n"
      "truncate = true\nsize = 1MiB\n", "truncate: needs one thread" },
    { "[device a]\nkind = fixed\n[process p]\nop = write\nio = buffered\ntruncate = often\n"
      "size = 1MiB\n", "truncate: 'often' is not true or false" },
    { "[device a]\nkind = fixed\n[process p]\nthreads = 3\nstart = 0us, 5us\nsize = 1MiB\n",
      "start: 2 times for 3 threads" },
    { "[device a]\nkind = fixed\n[process p]\nthreads = 2\nstart = 0us, soon\nsize = 1MiB\n",
      "start: time 2" },
    { "[host]\nscheduler = o1\n[device a]\nkind = fixed\n[process p]\nsize = 1MiB\n",
      "[host] scheduler: orders the CPU model's run queue: needs [host] cpus" },
    { "[host]\ncpus = 2\nprofile = 2.6-ext3\nscheduler = cfs\n[device a]\nkind = fixed\n"
      "[process p]\nsize = 1MiB\n", "[host] scheduler: 'cfs' is not fifo or o1" },
    /* GKeyFile would return the value as missing: the elevator's era
     * parser then read a NULL string (found by fuzz-scenario). */
    { "[device a]\nkind = fixed\nsched = cfq\n[sched cfq]\nera = 2.\xff" "6\n[process p]\nsize = 1MiB\n",
      "line 5, column 9: byte 0xff is not UTF-8 text" },
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

/* start = T1, T2, ...: each thread of the group starts at its own time
 * (interleaved readers started in the order 0, 2, 1, 3). */
static void
test_thread_starts (void)
{
  const char *text =
    "[sim]\nseed = 1\n"
    "[device d]\nkind = fixed\noverhead = 1ms\nbandwidth = 100MB/s\nsched = noop\n"
    "[process r]\ndevice = d\nop = read\npattern = sequential\nstream = interleaved\n"
    "threads = 4\nstart = 3ms, 9ms, 6ms, 12ms\nio = direct\nbs = 64KiB\nsize = 4MiB\n";
  static const gint64 start_ns[] = { 3000000, 9000000, 6000000, 12000000 };
  gint64 first_ns[4] = { G_MAXINT64, G_MAXINT64, G_MAXINT64, G_MAXINT64 };
  g_autoptr (GError) error = NULL;
  g_autofree char *log_text = NULL;
  char *log_buf = NULL;
  gsize log_len = 0;
  FILE *log = open_memstream (&log_buf, &log_len);
  ScenarioOutputs outputs = { .io_log = log };
  g_autoptr (Scenario) s = scenario_load_data (text, "starts", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SimRunResult) r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  fclose (log);
  log_text = log_buf;
  /* Each thread's first I/O is issued at its own start (the io log's
   * eighth column, issue_ns). */
  {
    g_auto (GStrv) lines = g_strsplit (log_text, "\n", -1);
    for (guint k = 0; lines[k] != NULL && lines[k][0] != '\0'; k++)
      {
        g_auto (GStrv) f = g_strsplit (lines[k], ",", -1);
        if (strcmp (f[0], "process") == 0)
          continue;
        guint t = (guint) (f[0][2] - '0');
        g_assert_cmpuint (t, <, 4);
        first_ns[t] = MIN (first_ns[t], g_ascii_strtoll (f[7], NULL, 10));
      }
  }
  for (guint t = 0; t < 4; t++)
    {
      g_autofree char *name = g_strdup_printf ("r.%u", t);
      g_assert_cmpuint (find_process (r, name)->ios, ==, 16);
      g_assert_cmpint (first_ns[t], ==, start_ns[t]);
    }
}

/* Values may carry a "; comment" or "# comment" after them, as in the
 * README's scenario reference: the same study as without them. */
static void
test_inline_comments (void)
{
  const char *plain = "[sim]\nseed = 3\n[device a]\nkind = fixed\ncount = 2\nsched = noop,deadline\n"
                      "[process p]\ndevice = a0\nsize = 256KiB\nbs = 16KiB\npattern = random\n";
  const char *commented = "[sim]\nseed = 3   ; master seed\n[device a]\nkind = fixed ; inline\n"
                          "count = 2 # two devices\nsched = noop,deadline ; both\n"
                          "[process p]\ndevice = a0 ; the first\nsize = 256KiB\t; bytes\n"
                          "bs = 16KiB # per I/O\npattern = random ; seeded\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) a = scenario_load_data (plain, "c", NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (Scenario) b = scenario_load_data (commented, "c", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (a), >=, 2);
  g_assert_cmpuint (scenario_n_runs (b), ==, scenario_n_runs (a));
  for (guint i = 0; i < scenario_n_runs (a); i++)
    {
      g_autoptr (SimRunResult) ra = scenario_run (a, i, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (SimRunResult) rb = scenario_run (b, i, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (ra->elapsed_ns, ==, rb->elapsed_ns);
      g_assert_cmpuint (ra->events, ==, rb->events);
    }
}

static void
test_set_override (void)
{
  const char *text = "[device a]\nkind = fixed\nsched = noop,deadline\n"
                     "[process p]\nsize = 64KiB\n";
  const char *sets[] = { "device a.sched=deadline", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "set", NULL, sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 1);
  g_assert_cmpstr (scenario_run_label (s, 0), ==, "deadline");
  const char *bad[] = { "nodot=1", NULL };
  g_autoptr (Scenario) s2 = scenario_load_data (text, "set", NULL, bad, &error);
  g_assert_null (s2);
  g_assert_nonnull (strstr (error->message, "GROUP.KEY"));
  g_clear_error (&error);
  /* GKeyFile would keep the bytes and read the value back as missing. */
  const char *not_utf8[] = { "device a.sched=deadline", "process p.size=64\xb5KiB", NULL };
  g_autoptr (Scenario) s3 = scenario_load_data (text, "set", NULL, not_utf8, &error);
  g_assert_null (s3);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "--set number 2 is not UTF-8 text");
  g_clear_error (&error);
  /* Names GKeyFile cannot store: refused, not dropped with a warning;
   * a control character is shown escaped. */
  static const struct { const char *set, *message; } bad_names[] = {
    { "process p.si[ze=1", "--set 'process p.si[ze=1': 'si[ze' is not a key name "
                           "(no brackets, no space at either end)" },
    { "process p. size=1", "--set 'process p. size=1': ' size' is not a key name "
                           "(no brackets, no space at either end)" },
    { "process p.size =1", "--set 'process p.size =1': 'size ' is not a key name "
                           "(no brackets, no space at either end)" },
    { "process ]p.size=1", "--set: 'process ]p' is not a group name "
                           "(no brackets or control characters)" },
    { "process \tp.size=1", "--set: 'process \\tp' is not a group name "
                            "(no brackets or control characters)" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad_names); i++)
    {
      const char *one[] = { bad_names[i].set, NULL };
      g_autoptr (Scenario) s4 = scenario_load_data (text, "set", NULL, one, &error);
      g_assert_null (s4);
      g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, bad_names[i].message);
      g_clear_error (&error);
    }
}

/* The default study under 2.4's elevator: a read that merges nowhere goes
 * to the tail of the sorted list, behind the writer's whole backlog
 * (bh_rq_in_between never places a block before the head), unless
 * read-latency2 (max_bomb_segments, Red Hat's 2.4.18) puts it in front of
 * all but a few writes.  The reader must gain at least twice its vanilla
 * throughput from that, with a median latency at most half. */
static void
test_linus_read_latency2 (void)
{
  g_autofree char *path = scenario_path ("default.ini");
  const char *sets[] = { "device hda.sched=linus,linus-rl2", "sched linus-rl2.policy=linus",
                         "sched linus-rl2.max_bomb_segments=6", NULL };
  GPtrArray *runs = NULL;
  g_autofree char *text = run_scenario_text (path, sets, &runs);
  g_assert_cmpuint (runs->len, ==, 2);
  const SimProcessResult *vanilla = find_process (g_ptr_array_index (runs, 0), "reader");
  const SimProcessResult *rl2 = find_process (g_ptr_array_index (runs, 1), "reader");
  g_assert_cmpfloat (rl2->mb_per_s, >, 2.0 * vanilla->mb_per_s);
  g_assert_cmpint (rl2->lat_p50_ns * 2, <, vanilla->lat_p50_ns);
  g_ptr_array_unref (runs);
}

/* The 2.4 elevator brings 2.4's request count, 64 per direction
 * (blk_dev_init / blk_init_free_list: 128 per queue, half for reads, half
 * for writes), unless the scenario sets nr_requests; a variant group
 * ([sched NAME] policy = linus) counts as linus.  96 random writes kept in
 * flight need more than 64 requests and fewer than 128: the writer sleeps
 * for requests exactly when the pool is 2.4's. */
static void
test_linus_request_count (void)
{
  const struct { const char *sched; const char *nr_requests; gboolean sleeps; } rows[] = {
    { "linus", NULL, TRUE },
    { "linus-2.4.19", NULL, TRUE },
    { "linus", "128", FALSE },
    { "deadline", NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "[sim]\nduration = 2s\n"
        "[device a]\nkind = fixed\noverhead = 1ms\nbandwidth = 50MB/s\nsched = %s\n%s%s%s"
        "[sched linus-2.4.19]\npolicy = linus\nera = 2.4.19\n"
        "[process w]\nop = write\nsync = false\npattern = random\nbs = 4KiB\n"
        "iodepth = 96\nregion = 1GiB\n",
        rows[i].sched, rows[i].nr_requests ? "nr_requests = " : "",
        rows[i].nr_requests ? rows[i].nr_requests : "", rows[i].nr_requests ? "\n" : "");
      g_autoptr (GError) error = NULL;
      g_autoptr (Scenario) s = scenario_load_data (text, "linus", NULL, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (SimRunResult) r = scenario_run (s, 0, NULL, &error);
      g_assert_no_error (error);
      const SimProcessResult *w = find_process (r, "w");
      g_assert_cmpuint (w->ios, >, 0);
      g_assert_cmpint (w->sleeps > 0, ==, rows[i].sleeps);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/scenario/golden/default", "default.ini", test_golden);
  g_test_add_data_func ("/scenario/golden/seq-vs-random", "seq-vs-random.ini", test_golden);
  g_test_add_data_func ("/scenario/golden/mixed-speeds", "mixed-speeds.ini", test_golden);
  g_test_add_data_func ("/scenario/golden/loop-disk", "loop-disk.ini", test_golden);
  g_test_add_func ("/scenario/determinism", test_determinism);
  g_test_add_func ("/scenario/default-study", test_default_study);
  g_test_add_func ("/scenario/bad", test_bad_scenarios);
  g_test_add_func ("/scenario/fsync", test_fsync_keys);
  g_test_add_func ("/scenario/counted-groups", test_counted_groups);
  g_test_add_func ("/scenario/counted-buses", test_counted_buses);
  g_test_add_func ("/scenario/thread-starts", test_thread_starts);
  g_test_add_func ("/scenario/set", test_set_override);
  g_test_add_func ("/scenario/inline-comments", test_inline_comments);
  g_test_add_func ("/scenario/linus-request-count", test_linus_request_count);
  g_test_add_func ("/scenario/linus-read-latency2", test_linus_read_latency2);
  return g_test_run ();
}
