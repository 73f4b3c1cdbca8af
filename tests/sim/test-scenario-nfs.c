/* test-scenario-nfs.c — [nfs NAME] groups (models/scenario-nfs.c): each
 * bad key is refused with an error naming the group and key; a good group
 * runs to the end of its file, alone or on the host's CPUs, and gives the
 * same report twice; without rsize= the mount takes what a 2.6.19-2.6.27
 * server of the scenario's memory offers.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "models/scenario.h"
#include "models/scenario-nfs.h"
#include "sim/sim-nfs.h"

#define DEVICE "[device d]\nkind = fixed\noverhead = 0.1ms\nbandwidth = 100MB/s\nsched = deadline\n"

static void
test_bad_keys (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { DEVICE "[nfs n]\nthreads = 4\n", "[nfs n] size" },
    { DEVICE "[nfs n]\nsize = 1MiB\nthreads = 0\n", "[nfs n] threads" },
    { DEVICE "[nfs n]\nsize = 1MiB\nrsize = 6KiB\n", "[nfs n] rsize" },
    { DEVICE "[nfs n]\nsize = 1MiB\nrsize = 2MiB\n", "[nfs n] rsize" },
    { DEVICE "[nfs n]\nsize = 1MiB\nlink = fast\n", "[nfs n] link" },
    { DEVICE "[nfs n]\nsize = 1MiB\nrtt = soon\n", "[nfs n] rtt" },
    { DEVICE "[nfs n]\nsize = 1MiB\nmtu = 40\n", "[nfs n] mtu" },
    { DEVICE "[nfs n]\nsize = 1MiB\nraparams = maybe\n", "[nfs n] raparams" },
    { DEVICE "[nfs n]\nsize = 1MiB\noffset = 2KiB\n", "[nfs n] offset" },
    { DEVICE "[nfs n]\nsize = 1MiB\ndevice = e\n", "[nfs n] device" },
    { DEVICE "[nfs n]\nsize = 1MiB\nwsize = 32KiB\n", "wsize" },
    { DEVICE "[nfs n]\nsize = 1MiB\nslots = 0\n", "[nfs n] slots" },
    { DEVICE "[nfs n]\nsize = 1MiB\noffset = 1TiB\n", "[nfs n] size" },
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

static SimRunResult *
run_text (const char *text, GString *report)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "nfs", NULL, NULL, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, 0, NULL, &error);
  g_assert_no_error (error);
  if (report)
    sim_report_run_text (report, r);
  return r;
}

/* The client reads the whole file; its rate cannot beat the link's payload
 * rate; the disk time is the nfsd threads'. */
static void
check_group (const SimRunResult *r, guint64 size_bytes, guint threads, double link_bytes_per_s)
{
  g_assert_cmpuint (r->groups->len, ==, 1);
  const SimGroupResult *g = g_ptr_array_index (r->groups, 0);
  g_assert_cmpstr (g->name, ==, "n");
  g_assert_cmpuint (g->threads, ==, threads);
  g_assert_cmpuint (g->bytes, ==, size_bytes);
  g_assert_cmpuint (g->ios, >=, size_bytes / (32 * 1024));
  g_assert_cmpfloat (g->mb_per_s, >, 0.0);
  g_assert_cmpfloat (g->mb_per_s * 1e6, <=, link_bytes_per_s);
  g_assert_cmpfloat (g->disk_share, >, 0.99);
}

static void
test_runs (void)
{
  const char *text = "[sim]\nseed = 1\n[host]\nmemory = 64MiB\n" DEVICE
                     "[nfs n]\nsize = 8MiB\nthreads = 4\nrsize = 32KiB\nlink = 100Mbit/s\n";
  g_autoptr (GString) a = g_string_new (NULL);
  g_autoptr (GString) b = g_string_new (NULL);
  g_autoptr (SimRunResult) r1 = run_text (text, a);
  g_autoptr (SimRunResult) r2 = run_text (text, b);
  check_group (r1, 8 << 20, 4, 100e6 / 8);
  const SimGroupResult *g = g_ptr_array_index (r1->groups, 0);
  g_assert_true (g->is_nfs);
  g_assert_cmpuint (g->nfs_threads_used, >=, 1);
  g_assert_cmpuint (g->nfs_threads_used, <=, 4);
  g_assert_nonnull (strstr (a->str, "nfs n: threads used"));
  g_assert_cmpstr (a->str, ==, b->str);
  g_autoptr (GPtrArray) runs = g_ptr_array_new ();
  g_ptr_array_add (runs, r1);
  g_autofree char *json = sim_report_json ("nfs", 1, runs);
  g_assert_nonnull (strstr (json, "\"raparms_lost\""));
}

/* On the host's CPUs the threads run as kernel threads there; the CPUs
 * spend system time on them. */
static void
test_on_host_cpus (void)
{
  const char *text = "[sim]\nseed = 1\n[host]\nmemory = 64MiB\ncpus = 1\n" DEVICE
                     "[nfs n]\nsize = 8MiB\nthreads = 2\ncpu_rpc = 50us\n";
  g_autoptr (SimRunResult) r = run_text (text, NULL);
  check_group (r, 8 << 20, 2, 1e9 / 8);
  g_assert_cmpuint (r->n_cpus, ==, 1);
  g_assert_cmpfloat (r->cpu.sy, >, 0.0);
}

/* nfsd_create_serv's default: 1 MiB halved while above 1/4096 of memory
 * and at least 16 KiB ("1MB on 4Gig machines", "32K on 128M machines",
 * "Bottom out at 8K on 32M and smaller"). */
static void
test_default_rsize (void)
{
  static const struct { guint64 memory_bytes, rsize_bytes; } cases[] = {
    { G_GUINT64_CONSTANT (64) << 30, 1 << 20 },
    { G_GUINT64_CONSTANT (8) << 30, 1 << 20 },
    { G_GUINT64_CONSTANT (4) << 30, 1 << 20 },
    { (G_GUINT64_CONSTANT (4) << 30) - 4096, 512 << 10 },
    { G_GUINT64_CONSTANT (2) << 30, 512 << 10 },
    { G_GUINT64_CONSTANT (1) << 30, 256 << 10 },
    { 128 << 20, 32 << 10 },
    { 64 << 20, 16 << 10 },
    { 32 << 20, 8 << 10 },
    { 4 << 20, 8 << 10 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint64 got = scenario_nfs_default_rsize (cases[i].memory_bytes);
      if (got != cases[i].rsize_bytes)
        g_error ("memory %" G_GUINT64_FORMAT ": rsize %" G_GUINT64_FORMAT ", expected %"
                 G_GUINT64_FORMAT, cases[i].memory_bytes, got, cases[i].rsize_bytes);
    }
}

/* runs[0].groups[0].nfs.rsize_bytes of a JSON report. */
static gint64
json_rsize_bytes (const char *json)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *run = json_array_get_object_element (json_object_get_array_member (root, "runs"), 0);
  JsonObject *group = json_array_get_object_element (json_object_get_array_member (run, "groups"),
                                                     0);
  return json_object_get_int_member (json_object_get_object_member (group, "nfs"), "rsize_bytes");
}

/* A group without rsize= reads in the size its server's memory gives, and
 * the report says which; rsize= overrides it. */
static void
test_rsize_from_memory (void)
{
  static const struct { const char *host, *rsize; guint64 expect_bytes; } cases[] = {
    { "memory = 1GiB\n", "", 256 << 10 },
    { "memory = 8GiB\n", "", 1 << 20 },
    { "memory = 8GiB\n", "rsize = 32KiB\n", 32 << 10 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf ("[sim]\nseed = 1\n[host]\n%s" DEVICE
                                               "[nfs n]\nsize = 4MiB\nthreads = 2\n%s",
                                               cases[i].host, cases[i].rsize);
      g_autoptr (GString) report = g_string_new (NULL);
      g_autoptr (SimRunResult) r = run_text (text, report);
      const SimGroupResult *g = g_ptr_array_index (r->groups, 0);
      g_assert_cmpuint (g->nfs_rsize_bytes, ==, cases[i].expect_bytes);
      g_assert_cmpuint (g->ios, ==, (4 << 20) / cases[i].expect_bytes);
      g_autofree char *line = g_strdup_printf ("rsize %" G_GUINT64_FORMAT " KiB\n",
                                               cases[i].expect_bytes / 1024);
      g_assert_nonnull (strstr (report->str, line));
      g_autoptr (GPtrArray) runs = g_ptr_array_new ();
      g_ptr_array_add (runs, r);
      g_autofree char *json = sim_report_json ("nfs", 1, runs);
      g_assert_cmpint (json_rsize_bytes (json), ==, (gint64) cases[i].expect_bytes);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/nfs/bad-keys", test_bad_keys);
  g_test_add_func ("/scenario/nfs/runs", test_runs);
  g_test_add_func ("/scenario/nfs/host-cpus", test_on_host_cpus);
  g_test_add_func ("/scenario/nfs/default-rsize", test_default_rsize);
  g_test_add_func ("/scenario/nfs/rsize-from-memory", test_rsize_from_memory);
  return g_test_run ();
}
