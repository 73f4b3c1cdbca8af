/* test-scenario-fio.c — fio job files as scenario processes
 * (models/scenario-fio.h).
 *
 * Data-driven over tests/fio/data: each valid-NAME.fio must give the
 * [process] groups of valid-NAME.expect (on a 1 GiB device "disk"); each
 * fail-NAME.fio must fail with an error that starts "PATH:LINE: OPTION:"
 * and says what its first line "# expect: LINE: OPTION: TEXT" says.  A
 * path on the command line tests just that file.  Then a mutation smoke
 * over the valid files (every failure located by file and line, nothing
 * crashes), and runs: numjobs gives NAME.0 and NAME.1 with each clone's
 * own I/O, [process NAME] fio = FILE in a scenario, and --set on the jobs'
 * processes (set_cases). */
#include <string.h>

#include <glib.h>

#include "models/scenario.h"
#include "models/scenario-fio.h"
#include "sim/sim-report.h"
#include "tests/test-tree.h"

#define GIB (G_GUINT64_CONSTANT (1) << 30)

static const ScenarioFioTarget target = { "disk", GIB };

static void
test_file (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = g_path_get_basename (path);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  gboolean ok = scenario_fio_add_jobs (kf, path, &target, &error);

  if (g_str_has_prefix (base, "valid-"))
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".fio"));
      g_autofree char *expect_path = g_strconcat (stem, ".expect", NULL);
      g_autofree char *expect = NULL;
      g_assert_true (g_file_get_contents (expect_path, &expect, NULL, NULL));
      g_autofree char *got = g_key_file_to_data (kf, NULL, NULL);
      g_assert_cmpstr (got, ==, expect);
      return;
    }
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "# expect: "));
  g_autofree char *expect = g_strndup (text + strlen ("# expect: "),
                                       strcspn (text + strlen ("# expect: "), "\n"));
  g_autofree char *prefix = g_strconcat (path, ":", expect, NULL);
  g_assert_false (ok);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  if (!g_str_has_prefix (error->message, prefix))
    g_error ("%s: got '%s', expected it to start '%s'", base, error->message, prefix);
}

/* Every failure names the file and a line; nothing crashes or leaks. */
static void
check_mutant (const char *text, const char *name, guint *n_ok, guint *n_err)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  if (scenario_fio_add_jobs_data (kf, text, name, &target, &error))
    {
      (*n_ok)++;
      return;
    }
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, name));
  const char *p = error->message + strlen (name);
  g_assert_true (p[0] == ':' && g_ascii_isdigit (p[1]));
  (*n_err)++;
}

static void
test_mutation_smoke (gconstpointer data)
{
  const GPtrArray *valid = data;
  static const char replacements[] = "=[]$;#\n 0x%-:,k9";
  guint n_ok = 0, n_err = 0;

  for (guint f = 0; f < valid->len; f++)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (g_ptr_array_index (valid, f), &text, NULL, NULL));
      gsize len = strlen (text);
      for (gsize i = 0; i <= len; i++)
        {
          g_autofree char *cut = g_strndup (text, i);
          check_mutant (cut, "mutant.fio", &n_ok, &n_err);
          if (i == len)
            break;
          for (guint r = 0; r < sizeof replacements - 1; r++)
            {
              g_autofree char *m = g_strdup (text);
              m[i] = replacements[r];
              check_mutant (m, "mutant.fio", &n_ok, &n_err);
            }
        }
    }
  g_test_message ("%u mutants read, %u refused", n_ok, n_err);
  /* Both outcomes occur: the mutations reach past the syntax checks. */
  g_assert_cmpuint (n_ok, >, 100);
  g_assert_cmpuint (n_err, >, 100);
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
  return NULL;
}

/* numjobs=2 runs two clones named as fio's files (NAME.N), each doing its
 * own size; fio's JSON lists them in that order (see test-compare-fio). */
static void
test_run_numjobs (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = test_scratch_dir ("iosim-fio");
  g_autofree char *path = g_build_filename (dir, "two.fio", NULL);
  g_assert_true (g_file_set_contents (path, "[global]\ndirect=1\nsize=1m\n"
                                      "[job]\nrw=randread\nnumjobs=2\n", -1, NULL));
  g_autoptr (Scenario) s = scenario_load_fio (path, "ssd-sata", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (scenario_name (s), ==, "two");
  g_assert_cmpuint (scenario_n_runs (s), ==, 1);
  ScenarioOutputs outputs = { 0 };
  SimRunResult *r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->processes->len, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *name = g_strdup_printf ("job.%u", i);
      const SimProcessResult *p = find_process (r, name);
      g_assert_nonnull (p);
      g_assert_cmpstr (p->op, ==, "read");
      g_assert_cmpstr (p->device, ==, "ssd-sata");
      g_assert_cmpuint (p->ios, ==, 256);          /* 1 MiB in 4 KiB reads */
      g_assert_cmpuint (p->bytes, ==, 1 << 20);
    }
  sim_run_result_free (r);
  g_assert_true (test_remove_tree (dir));
}

/* A model given as a file names the device after it; brackets in the file
 * name, which a group name cannot hold, become '_'. */
static void
test_run_model_file_name (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = test_scratch_dir ("iosim-fio");
  g_autofree char *job = g_build_filename (dir, "one.fio", NULL);
  g_autofree char *model = g_build_filename (dir, "disk[2].ini", NULL);
  g_assert_true (g_file_set_contents (job, "[job]\ndirect=1\nsize=64k\nrw=read\n", -1, NULL));
  g_assert_true (g_file_set_contents (model, "[device]\nkind = fixed\n", -1, NULL));
  g_autoptr (Scenario) s = scenario_load_fio (job, model, NULL, &error);
  g_assert_no_error (error);
  ScenarioOutputs outputs = { 0 };
  SimRunResult *r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (find_process (r, "job")->device, ==, "disk_2_");
  sim_run_result_free (r);
  g_assert_true (test_remove_tree (dir));
}

/* G_TEST_SRCDIR is tests/ (tests/meson.build). */
static const char *
data_dir (void)
{
  static char *dir;
  if (dir == NULL)
    dir = g_test_build_filename (G_TEST_DIST, "fio", "data", NULL);
  return dir;
}

/* [process NAME] fio = FILE: the group gives way to the file's jobs. */
static void
test_in_scenario (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data ("[device d]\nmodel = ssd-sata\n"
                                               "[process x]\nfio = valid-global-numjobs.fio\n"
                                               "[process other]\nsize = 64KiB\n",
                                               "in-scenario", data_dir (), NULL, &error);
  g_assert_no_error (error);
  ScenarioOutputs outputs = { 0 };
  SimRunResult *r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->processes->len, ==, 3);
  g_assert_null (find_process (r, "x"));
  g_assert_cmpuint (find_process (r, "other")->ios, ==, 16);
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *name = g_strdup_printf ("reader.%u", i);
      const SimProcessResult *p = find_process (r, name);
      g_assert_nonnull (p);
      g_assert_cmpuint (p->ios, ==, 2048);          /* 16 MiB in 8 KiB reads */
    }
  sim_run_result_free (r);

  /* Other keys beside fio and device are refused, not ignored. */
  g_autoptr (Scenario) bad = scenario_load_data ("[device d]\nmodel = ssd-sata\n"
                                                 "[process x]\nfio = valid-defaults.fio\n"
                                                 "bs = 8k\n", "bad", data_dir (), NULL, &error);
  g_assert_null (bad);
  g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "[process x]"));
  g_clear_error (&error);

  /* A job file's error keeps its file and line. */
  g_autoptr (Scenario) bad2 = scenario_load_data ("[device d]\nmodel = ssd-sata\n"
                                                  "[process x]\nfio = fail-rate.fio\n",
                                                  "bad2", data_dir (), NULL, &error);
  g_assert_null (bad2);
  g_assert_nonnull (strstr (error->message, "fail-rate.fio:3: rate_iops:"));
}

/* --set on the processes of a job file (data/set/jobs.fio: job with two
 * clones, solo alone; 1 MiB of 4 KiB reads each), run as iosim run
 * JOB.fio --device-model does, as [process x] fio = FILE in a scenario,
 * and, for comparison, a plain scenario whose processes are named like
 * clones (the job shorthand is not theirs, its error is today's). */
typedef enum { SET_FIO_FILE, SET_IN_SCENARIO, SET_PLAIN } SetForm;

typedef struct {
  const char *name;
  SetForm     form;
  const char *sets[3];
  gboolean    fails;
  const char *expect;   /* each process's "NAME=IOS" in run order, or the error's start */
  const char *sched;    /* the run's elevator, or NULL: not checked */
} SetCase;

static const SetCase set_cases[] = {
  { "fio/none", SET_FIO_FILE, { NULL },
    FALSE, "job.0=256 job.1=256 solo=256", NULL },
  { "fio/clone", SET_FIO_FILE, { "process job.0.bs=8KiB" },
    FALSE, "job.0=128 job.1=256 solo=256", NULL },
  { "fio/job", SET_FIO_FILE, { "process job.bs=8KiB" },
    FALSE, "job.0=128 job.1=128 solo=256", NULL },
  { "fio/job-then-clone", SET_FIO_FILE, { "process job.bs=8KiB", "process job.1.bs=16KiB" },
    FALSE, "job.0=128 job.1=64 solo=256", NULL },
  { "fio/single", SET_FIO_FILE, { "process solo.bs=16KiB" },
    FALSE, "job.0=256 job.1=256 solo=64", NULL },
  { "fio/device", SET_FIO_FILE, { "device ssd-sata.sched=noop", "process job.1.size=512KiB" },
    FALSE, "job.0=256 job.1=128 solo=256", "noop" },
  { "fio/no-clone", SET_FIO_FILE, { "process job.2.bs=8KiB" },
    TRUE, "--set 'process job.2.bs=8KiB': the scenario has no process 'job.2' "
    "(its processes: job.0, job.1, solo)", NULL },
  { "fio/no-job", SET_FIO_FILE, { "process jobs.bs=8KiB" },
    TRUE, "--set 'process jobs.bs=8KiB': the scenario has no process 'jobs' "
    "(its processes: job.0, job.1, solo)", NULL },
  { "fio/unknown-key", SET_FIO_FILE, { "process job.bsize=8KiB" },
    TRUE, "[process job.0] bsize: unknown key", NULL },
  { "scenario/none", SET_IN_SCENARIO, { NULL },
    FALSE, "other=16 job.0=256 job.1=256 solo=256", NULL },
  { "scenario/clone-and-plain", SET_IN_SCENARIO, { "process job.1.bs=8KiB", "process other.bs=16KiB" },
    FALSE, "other=4 job.0=256 job.1=128 solo=256", NULL },
  { "scenario/job", SET_IN_SCENARIO, { "process job.bs=16KiB" },
    FALSE, "other=16 job.0=64 job.1=64 solo=256", NULL },
  { "scenario/device", SET_IN_SCENARIO, { "device d.sched=noop", "process solo.bs=8KiB" },
    FALSE, "other=16 job.0=256 job.1=256 solo=128", "noop" },
  { "scenario/no-clone", SET_IN_SCENARIO, { "process job.2.bs=8KiB" },
    TRUE, "--set 'process job.2.bs=8KiB': the scenario has no process 'job.2' "
    "(its processes: other, job.0, job.1, solo)", NULL },
  /* The fio group itself takes fio and device only, as without --set. */
  { "scenario/fio-group", SET_IN_SCENARIO, { "process x.bs=8KiB" },
    TRUE, "[process x] bs: unknown key (valid keys: fio, device)", NULL },
  { "plain/clone-name", SET_PLAIN, { "process job.0.bs=8KiB" },
    FALSE, "job.0=8 job.1=16", NULL },
  { "plain/no-job-shorthand", SET_PLAIN, { "process job.bs=8KiB" },
    TRUE, "--set 'process job.bs=8KiB': the scenario has no process 'job' "
    "(its processes: job.0, job.1)", NULL },
};

static Scenario *
load_set_case (const SetCase *c, GError **error)
{
  switch (c->form)
    {
    case SET_FIO_FILE:
      {
        g_autofree char *path = g_build_filename (data_dir (), "set", "jobs.fio", NULL);
        return scenario_load_fio (path, "ssd-sata", c->sets, error);
      }
    case SET_IN_SCENARIO:
      return scenario_load_data ("[device d]\nmodel = ssd-sata\n"
                                 "[process other]\nsize = 64KiB\n"
                                 "[process x]\nfio = set/jobs.fio\n",
                                 c->name, data_dir (), c->sets, error);
    case SET_PLAIN:
      return scenario_load_data ("[device d]\nmodel = ssd-sata\n"
                                 "[process job.0]\nsize = 64KiB\n"
                                 "[process job.1]\nsize = 64KiB\noffset = 1MiB\n",
                                 c->name, data_dir (), c->sets, error);
    }
  g_assert_not_reached ();
}

static void
test_set (gconstpointer data)
{
  const SetCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = load_set_case (c, &error);

  if (c->fails)
    {
      g_assert_null (s);
      g_assert_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID);
      if (!g_str_has_prefix (error->message, c->expect))
        g_error ("%s: got '%s', expected it to start '%s'", c->name, error->message, c->expect);
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (scenario_n_runs (s), ==, 1);
  ScenarioOutputs outputs = { 0 };
  SimRunResult *r = scenario_run (s, 0, &outputs, &error);
  g_assert_no_error (error);
  g_autoptr (GString) got = g_string_new (NULL);
  for (guint i = 0; i < r->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, i);
      g_string_append_printf (got, "%s%s=%" G_GUINT64_FORMAT, i ? " " : "", p->name,
                              (guint64) p->ios);
    }
  g_assert_cmpstr (got->str, ==, c->expect);
  if (c->sched)
    g_assert_cmpstr (scenario_run_label (s, 0), ==, c->sched);
  sim_run_result_free (r);
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) valid = g_ptr_array_new ();

  if (argc > 1)
    g_ptr_array_add (files, g_strdup (argv[1]));
  else
    {
      g_autoptr (GDir) dir = g_dir_open (data_dir (), 0, NULL);
      g_assert_nonnull (dir);
      for (const char *n; (n = g_dir_read_name (dir)) != NULL;)
        if (g_str_has_suffix (n, ".fio"))
          g_ptr_array_add (files, g_build_filename (data_dir (), n, NULL));
      g_ptr_array_sort (files, cmp_str);
    }
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autofree char *base = g_path_get_basename (path);
      g_autofree char *test_path = g_strdup_printf ("/scenario-fio/parse/%s", base);
      g_test_add_data_func (test_path, path, test_file);
      if (g_str_has_prefix (base, "valid-"))
        g_ptr_array_add (valid, (gpointer) path);
    }
  g_test_add_data_func ("/scenario-fio/mutation-smoke", valid, test_mutation_smoke);
  g_test_add_func ("/scenario-fio/run/numjobs", test_run_numjobs);
  g_test_add_func ("/scenario-fio/run/model-file-name", test_run_model_file_name);
  g_test_add_func ("/scenario-fio/run/in-scenario", test_in_scenario);
  for (guint i = 0; i < G_N_ELEMENTS (set_cases); i++)
    {
      g_autofree char *test_path = g_strdup_printf ("/scenario-fio/set/%s", set_cases[i].name);
      g_test_add_data_func (test_path, &set_cases[i], test_set);
    }
  return g_test_run ();
}
