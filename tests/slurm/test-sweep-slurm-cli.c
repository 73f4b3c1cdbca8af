/* test-sweep-slurm-cli.c — `iosim sweep ... --emit-slurm DIR` as a user
 * runs it ($IOSIM_BIN) on tests/sweep/tiny.ini, copied to a scratch folder
 * whose name holds a blank, a quote and double quotes (the scenario and the
 * results folder are there; the script folder "../job" is not, since an
 * #SBATCH --output line cannot hold blanks):
 *  - the script of a fixed sweep (--probe=no --time 5 --mem 100M): the
 *    #SBATCH lines, the task command read back by the shell's rules;
 *  - the scripts run by bash as Slurm would run them (SLURM_ARRAY_TASK_ID
 *    1..N), then merge.sh: results.csv and summary.csv byte-identical with
 *    a local run of the same sweep;
 *  - the probe: what it prints and the floors of the estimate;
 *  - the errors, one table row each. */
#include <string.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "tests/test-tree.h"

/* A --set value with blanks, a quote, double quotes and a '$': the
 * scenario loader cuts the "# ..." comment, the shell must not touch it. */
#define SET_TRICKY "process reader.region=1GiB # it's \"one\" $HOME `id`"
#define VARY_A     "sched deadline.fifo_batch=1,4,16"
#define VARY_B     "process reader.bs=4KiB,16KiB"

typedef struct {
  char *scratch;     /* TOP/it's a "dir": the commands' cwd */
  char *scenario;    /* a copy of tiny.ini there */
  char *job_dir;     /* TOP/job, "../job" from the cwd */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *top = test_scratch_dir ("iosim-slurm-cli");
  f->scratch = g_build_filename (top, "it's a \"dir\"", NULL);
  g_assert_cmpint (g_mkdir (f->scratch, 0755), ==, 0);
  g_autofree char *src = g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (src, &text, NULL, &error));
  f->scenario = g_build_filename (f->scratch, "tiny.ini", NULL);
  f->job_dir = g_build_filename (top, "job", NULL);
  g_assert_true (g_file_set_contents (f->scenario, text, -1, &error));
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_autofree char *top = g_path_get_dirname (f->scratch);
  g_assert_true (test_remove_tree (top));
  g_free (f->scratch);
  g_free (f->scenario);
  g_free (f->job_dir);
}

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_assert_nonnull (bin);
  return bin;
}

/* Run @argv in @cwd with @env_task set as SLURM_ARRAY_TASK_ID (0: unset);
 * returns the exit status, output in @out/@err when asked. */
static int
run (const char *cwd, const char *const *argv, guint env_task, char **out, char **err)
{
  g_auto (GStrv) envp = g_get_environ ();
  envp = g_environ_unsetenv (envp, "SLURM_CPUS_PER_TASK");
  if (env_task > 0)
    {
      g_autofree char *task = g_strdup_printf ("%u", env_task);
      envp = g_environ_setenv (envp, "SLURM_ARRAY_TASK_ID", task, TRUE);
    }
  else
    envp = g_environ_unsetenv (envp, "SLURM_ARRAY_TASK_ID");
  g_autoptr (GError) error = NULL;
  g_autofree char *o = NULL, *e = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (cwd, (char **) argv, envp, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &o, &e, &status, &error));
  g_assert_no_error (error);
  g_test_message ("%s: stdout:\n%s\nstderr:\n%s", argv[0], o, e);
  if (out)
    *out = g_steal_pointer (&o);
  if (err)
    *err = g_steal_pointer (&e);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* iosim sweep on the fixture's scenario with the sweep's fixed options,
 * then @extra. */
static int
run_sweep (Fixture *f, const char *const *extra, char **out, char **err)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  const char *fixed[] = { iosim_bin (), "sweep", "tiny.ini", "--vary", VARY_A, "--vary", VARY_B,
                          "--set", SET_TRICKY, "--seeds", "2", NULL };
  g_strv_builder_addv (b, fixed);
  g_strv_builder_addv (b, (const char **) extra);
  g_auto (GStrv) argv = g_strv_builder_end (b);
  return run (f->scratch, (const char *const *) argv, 0, out, err);
}

static char *
read_file (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&text);
}

static char *
line_starting (const char *text, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix))
      return g_strdup (lines[i]);
  return NULL;
}

static void
test_script (Fixture *f, gconstpointer data)
{
  const char *extra[] = { "-o", "out dir", "--emit-slurm", "../job", "--probe=no", "--time", "5",
                          "--mem", "100M", "--shards", "4", "--throttle", "3",
                          "--partition", "debug", "--account", "proj-1",
                          "--iosim", "/opt/iosim 1.0/bin/iosim", NULL };
  g_autofree char *out = NULL;
  g_assert_cmpint (run_sweep (f, extra, &out, NULL), ==, 0);
  const char *job_dir = f->job_dir;
  g_autofree char *script = read_file (job_dir, "sweep.sbatch");

  g_assert_true (g_str_has_prefix (script, "#!/bin/bash\n"));
  g_autofree char *logs = g_build_filename (job_dir, "logs", NULL);
  g_assert_true (g_file_test (logs, G_FILE_TEST_IS_DIR));
  g_autofree char *output = g_strdup_printf ("\n#SBATCH --output=%s/%%A_%%a.out\n", logs);
  g_assert_nonnull (strstr (script, output));
  g_assert_nonnull (strstr (script, "\nexec '/opt/iosim 1.0/bin/iosim' sweep "));
  const char *expected_lines[] = {
    "\n#SBATCH --job-name=iosim-tiny\n",
    "\n#SBATCH --array=1-4%3\n",
    "\n#SBATCH --time=00:05:00\n",
    "\n#SBATCH --mem=100M\n",
    "\n#SBATCH --partition=debug\n",
    "\n#SBATCH --account=proj-1\n",
    "\n# No probe: --time 5 --mem 100M as given.\n",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (expected_lines); i++)
    {
      g_test_message ("line %s", expected_lines[i]);
      g_assert_nonnull (strstr (script, expected_lines[i]));
    }
  /* #SBATCH lines come before the first command, or sbatch ignores them. */
  g_assert_true (strstr (script, "\n#SBATCH --account") < strstr (script, "\nset -eu\n"));

  /* The task command, as bash reads it for task 3. */
  g_autofree char *exec_line = line_starting (script, "exec ");
  g_assert_nonnull (exec_line);
  g_autoptr (GString) expanded = g_string_new (exec_line + 5);
  g_assert_cmpuint (g_string_replace (expanded, "${SLURM_ARRAY_TASK_ID}", "3", 0), ==, 1);
  g_assert_cmpuint (g_string_replace (expanded, "${SLURM_CPUS_PER_TASK:-1}", "1", 0), ==, 1);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_shell_parse_argv (expanded->str, NULL, &argv, &error));
  g_assert_no_error (error);
  /* --iosim: the binary's path on the cluster, not this one's. */
  const char *bin = "/opt/iosim 1.0/bin/iosim";
  g_autofree char *shards = g_build_filename (f->scratch, "out dir", "shards", NULL);
  const char *expected[] = { bin, "sweep", f->scenario, "--vary", VARY_A, "--vary", VARY_B,
                             "--set", SET_TRICKY, "--seeds", "2", "--seed", "7", "-o", shards,
                             "--shard", "3/4", "-j", "1", NULL };
  g_assert_cmpstrv ((const char *const *) argv, expected);

  /* merge.sh: iosim sweep merge SHARDS -o OUT, read back the same way. */
  g_autofree char *merge = read_file (job_dir, "merge.sh");
  g_autofree char *merge_line = line_starting (merge, "exec ");
  g_assert_nonnull (merge_line);
  g_auto (GStrv) merge_argv = NULL;
  g_assert_true (g_shell_parse_argv (merge_line + 5, NULL, &merge_argv, &error));
  g_autofree char *final = g_build_filename (f->scratch, "out dir", NULL);
  const char *merge_expected[] = { bin, "sweep", "merge", shards, "-o", final, NULL };
  g_assert_cmpstrv ((const char *const *) merge_argv, merge_expected);

  /* What to run next is printed (the path needs no quotes: the scratch
   * folder's top has none of the shell's characters). */
  g_autofree char *sbatch_path = g_build_filename (job_dir, "sweep.sbatch", NULL);
  g_autofree char *submit = g_strdup_printf ("Submit: sbatch %s\n", sbatch_path);
  g_assert_nonnull (strstr (out, submit));
  g_assert_nonnull (strstr (out, "6 points x 2 seeds in 4 array tasks, at most 3 at once, "
                                 "each --time=00:05:00 --mem=100M\n"));

  /* Determinism: the same command again writes the same files. */
  g_assert_cmpint (run_sweep (f, extra, NULL, NULL), ==, 0);
  g_autofree char *again = read_file (job_dir, "sweep.sbatch");
  g_autofree char *merge_again = read_file (job_dir, "merge.sh");
  g_assert_cmpstr (again, ==, script);
  g_assert_cmpstr (merge_again, ==, merge);
}

/* The emitted scripts run by bash as Slurm runs them, then merged: the
 * same files as a local run of the sweep. */
static void
test_scripts_run (Fixture *f, gconstpointer data)
{
  const char *extra[] = { "-o", "cluster", "--emit-slurm", "../job", "--probe=no", "--time",
                          "1:00", "--mem", "1G", "--shards", "4", NULL };
  g_assert_cmpint (run_sweep (f, extra, NULL, NULL), ==, 0);
  g_autofree char *sbatch = g_build_filename (f->job_dir, "sweep.sbatch", NULL);
  g_autofree char *merge = g_build_filename (f->job_dir, "merge.sh", NULL);
  /* From another folder: nothing in the scripts may depend on the cwd. */
  g_autofree char *top = g_path_get_dirname (f->scratch);
  for (guint task = 1; task <= 4; task++)
    {
      const char *argv[] = { "bash", sbatch, NULL };
      g_assert_cmpint (run (top, argv, task, NULL, NULL), ==, 0);
    }
  const char *merge_argv[] = { "bash", merge, NULL };
  g_assert_cmpint (run (top, merge_argv, 0, NULL, NULL), ==, 0);

  const char *local[] = { "-o", "local", "--no-plots", "-j", "2", NULL };
  g_assert_cmpint (run_sweep (f, local, NULL, NULL), ==, 0);
  g_autofree char *cluster_dir = g_build_filename (f->scratch, "cluster", NULL);
  g_autofree char *local_dir = g_build_filename (f->scratch, "local", NULL);
  const char *files[] = { "results.csv", "summary.csv", "results.json", "summary.json" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *a = read_file (cluster_dir, files[i]);
      g_autofree char *b = read_file (local_dir, files[i]);
      g_test_message ("%s", files[i]);
      g_assert_cmpuint (strlen (a), >, 0);
      g_assert_cmpstr (a, ==, b);
    }
}

static void
test_probe (Fixture *f, gconstpointer data)
{
  const char *extra[] = { "-o", "out", "--emit-slurm", "../job", NULL };
  g_autofree char *out = NULL;
  g_assert_cmpint (run_sweep (f, extra, &out, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "Probe on this machine: point 1 of 6 with one seed ran in "));
  /* One task per point by default (6 <= 100): 2 runs each (1 point x 2 seeds). */
  g_assert_nonnull (strstr (out, "6 points x 2 seeds in 6 array tasks, each --time="));
  g_assert_nonnull (strstr (out, "A task runs at most 2 runs (points x seeds)"));
  const char *job_dir = f->job_dir;
  g_autofree char *script = read_file (job_dir, "sweep.sbatch");
  g_assert_nonnull (strstr (script, "\n#SBATCH --array=1-6\n"));
  g_assert_nonnull (strstr (script, "\n# Probe on this machine: point 1 of 6"));

  /* The floors of the rule: whole minutes, at least one; at least 64 MiB. */
  g_autofree char *time_line = line_starting (script, "#SBATCH --time=");
  guint h = 99, m = 99, s = 99;
  g_assert_cmpint (sscanf (time_line, "#SBATCH --time=%u:%u:%u", &h, &m, &s), ==, 3);
  g_assert_cmpuint (s, ==, 0);
  g_assert_cmpuint (h * 60 + m, >=, 1);
  g_autofree char *mem_line = line_starting (script, "#SBATCH --mem=");
  guint64 mem = 0;
  g_assert_cmpint (sscanf (mem_line, "#SBATCH --mem=%" G_GUINT64_FORMAT "M", &mem), ==, 1);
  g_assert_cmpuint (mem, >=, 64);

  /* --time given with the probe: the probe still sizes --mem. */
  const char *given[] = { "-o", "out", "--emit-slurm", "../job2", "--time", "2-3", NULL };
  g_free (out);
  out = NULL;
  g_assert_cmpint (run_sweep (f, given, &out, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "(--time given instead)"));
  g_autofree char *top = g_path_get_dirname (f->scratch);
  g_autofree char *job2 = g_build_filename (top, "job2", NULL);
  g_autofree char *script2 = read_file (job2, "sweep.sbatch");
  g_assert_nonnull (strstr (script2, "\n#SBATCH --time=2-03:00:00\n"));
  g_autofree char *mem_line2 = line_starting (script2, "#SBATCH --mem=");
  g_assert_nonnull (mem_line2);
}

typedef struct {
  const char *name;
  const char *extra[12];
  int         status;
  const char *err_text;
  gboolean    no_emit;    /* without "--emit-slurm ../job" */
} ErrorCase;

static const ErrorCase error_cases[] = {
  { "throttle-zero", { "--throttle", "0", NULL }, 2, "--throttle 0: at least 1 task at once" },
  { "throttle-negative", { "--throttle", "-4", NULL }, 2, "--throttle -4: at least 1" },
  { "shards-over-points", { "--shards", "7", NULL }, 2,
    "--shards 7: more array tasks than the 6 points; at most 6" },
  { "shards-negative", { "--shards", "-1", NULL }, 2, "--shards -1: at least 1" },
  { "array-alias-over-points", { "--array", "9", NULL }, 2, "--shards 9: more array tasks" },
  { "probe-bad", { "--probe", "maybe", NULL }, 2, "--probe 'maybe': yes or no" },
  { "probe-no-without-mem", { "--probe=no", "--time", "5", NULL }, 2,
    "--probe=no needs both --time and --mem" },
  { "time-bad", { "--probe=no", "--time", "5h", "--mem", "1G", NULL }, 2, "--time '5h': not one of" },
  { "time-zero", { "--probe=no", "--time", "0", "--mem", "1G", NULL }, 2, "--time '0': zero" },
  { "mem-bad", { "--probe=no", "--time", "5", "--mem", "1.5G", NULL }, 2, "--mem '1.5G': not a size" },
  { "shard-and-emit", { "--shard", "1/2", NULL }, 2,
    "--shard and --emit-slurm: the job array gives each task its shard" },
  { "throttle-without-emit", { "--throttle", "2", NULL }, 2,
    "--throttle is an option of --emit-slurm, which was not given", TRUE },
  { "time-without-emit", { "--time", "5", NULL }, 2,
    "--time is an option of --emit-slurm, which was not given", TRUE },
  { "partition-blank", { "--probe=no", "--time", "5", "--mem", "1G", "--partition", "a b", NULL },
    2, "--partition 'a b': an #SBATCH line cannot carry" },
};

static void
test_errors (Fixture *f, gconstpointer data)
{
  for (gsize i = 0; i < G_N_ELEMENTS (error_cases); i++)
    {
      const ErrorCase *c = &error_cases[i];
      g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
      g_strv_builder_add_many (b, "-o", "out", NULL);
      if (!c->no_emit)
        g_strv_builder_add_many (b, "--emit-slurm", "../job", NULL);
      g_strv_builder_addv (b, (const char **) c->extra);
      g_auto (GStrv) extra = g_strv_builder_end (b);
      g_autofree char *err = NULL;
      g_test_message ("case %s", c->name);
      g_assert_cmpint (run_sweep (f, (const char *const *) extra, NULL, &err), ==, c->status);
      g_assert_nonnull (strstr (err, c->err_text));
      /* Nothing written on an error, nothing run. */
      g_autofree char *script = g_build_filename (f->job_dir, "sweep.sbatch", NULL);
      g_assert_false (g_file_test (script, G_FILE_TEST_EXISTS));
      g_autofree char *results = g_build_filename (f->scratch, "out", "results.csv", NULL);
      g_assert_false (g_file_test (results, G_FILE_TEST_EXISTS));
    }
}

/* A log folder below a name with a blank cannot go on an #SBATCH line. */
static void
test_log_dir_blank (Fixture *f, gconstpointer data)
{
  const char *extra[] = { "-o", "out", "--emit-slurm", "../my job", "--probe=no", "--time", "5",
                          "--mem", "1G", NULL };
  g_autofree char *err = NULL;
  g_assert_cmpint (run_sweep (f, extra, NULL, &err), ==, 2);
  g_assert_nonnull (strstr (err, "log folder '"));
  g_assert_nonnull (strstr (err, "an #SBATCH line cannot carry the character ' '"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/sweep-slurm-cli/script", Fixture, NULL, fixture_set_up, test_script, fixture_tear_down);
  g_test_add ("/sweep-slurm-cli/scripts-run", Fixture, NULL, fixture_set_up, test_scripts_run,
              fixture_tear_down);
  g_test_add ("/sweep-slurm-cli/probe", Fixture, NULL, fixture_set_up, test_probe, fixture_tear_down);
  g_test_add ("/sweep-slurm-cli/errors", Fixture, NULL, fixture_set_up, test_errors, fixture_tear_down);
  g_test_add ("/sweep-slurm-cli/log-dir-blank", Fixture, NULL, fixture_set_up, test_log_dir_blank,
              fixture_tear_down);
  return g_test_run ();
}
