/* test-elevator-scenarios.c — the shipped elevator scenarios (issue 3)
 * must show the direction their mechanisms imply:
 *  - dump(8)-style interleaved readers: CFQ 2.6.28 idles after each
 *    process's read and loses most of deadline's throughput; close
 *    cooperators (2.6.30 as merged, 2.6.31 alike) do not win it back, since
 *    a queue handed over to is skipped until the tree picks it again;
 *    queue merging (2.6.33) does; AS's
 *    "close request" rule lets cooperating readers break its anticipation;
 *  - NFS server threads reading one file: the same, from 2 threads up;
 *  - a sequential against a random reader: the idling elevators give the
 *    sequential reader its stream back;
 *  - a reader against a streaming writer: anticipation keeps the reader's
 *    stream together where deadline alternates batches.
 * Every scenario also runs twice with identical bytes (determinism). */
#include <glib.h>
#include <string.h>

#include "models/scenario.h"

static GPtrArray *
run_all (const char *name, char **json_out)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, NULL, &error);
  g_assert_no_error (error);
  GPtrArray *runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_result_free);
  for (guint r = 0; r < scenario_n_runs (s); r++)
    {
      SimRunResult *result = scenario_run (s, r, NULL, &error);
      g_assert_no_error (error);
      g_ptr_array_add (runs, result);
    }
  if (json_out)
    *json_out = sim_report_json (scenario_name (s), scenario_seed (s), runs);
  return runs;
}

static const SimGroupResult *
group (GPtrArray *runs, const char *sched, const char *name)
{
  for (guint i = 0; i < runs->len; i++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, i);
      if (strcmp (r->label, sched) != 0)
        continue;
      for (guint j = 0; j < r->groups->len; j++)
        {
          const SimGroupResult *g = g_ptr_array_index (r->groups, j);
          if (strcmp (g->name, name) == 0)
            return g;
        }
    }
  g_error ("no group %s in run %s", name, sched);
}

static double
mbps (GPtrArray *runs, const char *sched, const char *name)
{
  double v = group (runs, sched, name)->mb_per_s;
  g_test_message ("%-14s %-10s %8.2f MB/s", sched, name, v);
  return v;
}

static void
test_dump (void)
{
  g_autoptr (GPtrArray) runs = run_all ("dump.ini", NULL);
  double deadline = mbps (runs, "deadline", "dump");
  double cfq28 = mbps (runs, "cfq-2.6.28", "dump");
  double cfq30 = mbps (runs, "cfq-2.6.30", "dump");
  double cfq31 = mbps (runs, "cfq-2.6.31", "dump");
  double cfq33 = mbps (runs, "cfq-2.6.33", "dump");
  double as = mbps (runs, "anticipatory", "dump");
  /* Idling for each reader loses most of the streaming rate ... */
  g_assert_cmpfloat (cfq28, <, 0.5 * deadline);
  /* ... and close_cooperator alone does not win it back: a queue that has
   * cooperated is skipped until the service tree picks it again, which is
   * why 2.6.33 merged cooperating queues (its commit measured 12 MB/s
   * before, on a kernel that had close_cooperator) ... */
  g_assert_cmpfloat (cfq31, <, 0.5 * deadline);
  /* 2.6.31 changed nothing of it that this run reaches (the prio tree
   * root cached by org_ioprio): 2.6.30 moves the same bytes. */
  g_assert_cmpfloat (cfq30, ==, cfq31);
  /* ... and merging them does. */
  g_assert_cmpfloat (cfq33, >, 2.0 * cfq28);
  g_assert_cmpfloat (cfq33, >, 0.7 * deadline);
  /* AS breaks its anticipation for a close request of another process. */
  g_assert_cmpfloat (as, >, 0.7 * deadline);
  /* BFQ merges the cooperating queues early. */
  g_assert_cmpfloat (mbps (runs, "bfq", "dump"), >, 0.7 * deadline);
}

static void
test_nfs_pool (void)
{
  g_autoptr (GPtrArray) runs = run_all ("nfs-pool.ini", NULL);
  /* Up to 4 threads, the requests in flight lie in one readahead window:
   * one thread issues its I/O and the others find their pages cached or
   * sleep on pages under I/O, so CFQ's idling costs little. */
  for (guint n = 1; n <= 4; n *= 2)
    {
      g_autofree char *name = g_strdup_printf ("nfsd-%u", n);
      g_assert_cmpfloat (mbps (runs, "cfq-2.6.28", name), >, 0.9 * mbps (runs, "deadline", name));
    }
  /* With 8, readahead I/O comes from several threads' queues in turn and
   * CFQ 2.6.28 idles after each: it loses most of the throughput; picking
   * a close cooperator instead of idling (2.6.31) wins much of it back and
   * merging the cooperating queues (2.6.33) all of it. */
  double deadline = mbps (runs, "deadline", "nfsd-8");
  double cfq28 = mbps (runs, "cfq-2.6.28", "nfsd-8");
  double cfq30 = mbps (runs, "cfq-2.6.30", "nfsd-8");
  double cfq31 = mbps (runs, "cfq-2.6.31", "nfsd-8");
  double cfq33 = mbps (runs, "cfq-2.6.33", "nfsd-8");
  g_assert_cmpfloat (cfq28, <, 0.5 * deadline);
  g_assert_cmpfloat (cfq31, >, 1.5 * cfq28);
  g_assert_cmpfloat (cfq30, ==, cfq31);
  g_assert_cmpfloat (cfq33, >, 2.0 * cfq28);
  g_assert_cmpfloat (cfq33, >, 0.9 * deadline);
}

static void
test_fairness (void)
{
  g_autoptr (GPtrArray) runs = run_all ("fairness.ini", NULL);
  double seq_deadline = mbps (runs, "deadline", "sequential");
  /* The idling elevators serve the sequential reader in slices/anticipation
   * windows instead of one request per turn. */
  g_assert_cmpfloat (mbps (runs, "cfq-2.6.28", "sequential"), >, 3.0 * seq_deadline);
  g_assert_cmpfloat (mbps (runs, "anticipatory", "sequential"), >, 3.0 * seq_deadline);
  g_assert_cmpfloat (mbps (runs, "bfq", "sequential"), >, 3.0 * seq_deadline);
  for (guint i = 0; i < runs->len; i++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, i);
      const SimDeviceResult *d = g_ptr_array_index (r->devices, 0);
      g_test_message ("%-14s jain %.3f", r->label, d->jain_index);
      g_assert_cmpfloat (d->jain_index, >=, 0.5);
      g_assert_cmpfloat (d->jain_index, <=, 1.0 + 1e-9);
    }
}

static void
test_writer_reader (void)
{
  g_autoptr (GPtrArray) runs = run_all ("writer-reader.ini", NULL);
  double deadline = mbps (runs, "deadline", "reader");
  double as = mbps (runs, "anticipatory", "reader");
  g_assert_cmpfloat (as, >, 1.5 * deadline);
}

static void
test_determinism (gconstpointer data)
{
  g_autofree char *a = NULL, *b = NULL;
  g_autoptr (GPtrArray) r1 = run_all (data, &a);
  g_autoptr (GPtrArray) r2 = run_all (data, &b);
  g_assert_cmpstr (a, ==, b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/elevators/dump", test_dump);
  g_test_add_func ("/elevators/nfs-pool", test_nfs_pool);
  g_test_add_func ("/elevators/fairness", test_fairness);
  g_test_add_func ("/elevators/writer-reader", test_writer_reader);
  g_test_add_data_func ("/elevators/determinism/dump", "dump.ini", test_determinism);
  g_test_add_data_func ("/elevators/determinism/fairness", "fairness.ini", test_determinism);
  g_test_add_data_func ("/elevators/determinism/nfs-pool", "nfs-pool.ini", test_determinism);
  return g_test_run ();
}
