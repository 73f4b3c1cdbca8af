/* test-sweep-slurm.c — models/sweep-slurm: sbatch's time and memory forms,
 * the estimate rule, the round-robin slicing, shell quoting, and the whole
 * script of a fixed job. */
#include <glib.h>
#include <string.h>

#include "models/sweep-slurm.h"

typedef struct {
  const char *text;
  guint64     value;     /* seconds or MiB; 0: the text is refused */
} ParseCase;

static const ParseCase time_cases[] = {
  { "5",            5 * 60 },
  { "90",           90 * 60 },
  { "5:30",         5 * 60 + 30 },
  { "1:02:03",      3600 + 2 * 60 + 3 },
  { "2-0",          2 * 86400 },
  { "1-2",          86400 + 2 * 3600 },
  { "1-2:03",       86400 + 2 * 3600 + 3 * 60 },
  { "1-2:03:04",    86400 + 2 * 3600 + 3 * 60 + 4 },
  { "0",            0 },
  { "0:00:00",      0 },
  { "",             0 },
  { "-5",           0 },
  { "+5",           0 },
  { "5m",           0 },
  { "1:2:3:4",      0 },
  { "1::3",         0 },
  { "1-",           0 },
  { "UNLIMITED",    0 },
  { " 5",           0 },
};

static const ParseCase mem_cases[] = {
  { "100",          100 },
  { "100M",         100 },
  { "100m",         100 },
  { "2G",           2048 },
  { "1T",           1024 * 1024 },
  { "1024K",        1 },
  { "1K",           1 },          /* rounded up: a task never gets less */
  { "1025K",        2 },
  { "0",            0 },
  { "0G",           0 },
  { "",             0 },
  { "M",            0 },
  { "100MB",        0 },
  { "1.5G",         0 },
  { "-1",           0 },
  { "100X",         0 },
};

static void
test_parse_time (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (time_cases); i++)
    {
      g_autoptr (GError) error = NULL;
      guint64 s = 12345;
      gboolean ok = sweep_slurm_parse_time (time_cases[i].text, &s, &error);
      g_test_message ("--time '%s'", time_cases[i].text);
      if (time_cases[i].value == 0)
        {
          g_assert_false (ok);
          g_assert_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID);
          g_autofree char *quoted = g_strdup_printf ("'%s'", time_cases[i].text);
          g_assert_nonnull (strstr (error->message, quoted));
          g_assert_cmpuint (s, ==, 12345);
        }
      else
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpuint (s, ==, time_cases[i].value);
        }
    }
}

static void
test_parse_mem (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (mem_cases); i++)
    {
      g_autoptr (GError) error = NULL;
      guint64 mib = 12345;
      gboolean ok = sweep_slurm_parse_mem (mem_cases[i].text, &mib, &error);
      g_test_message ("--mem '%s'", mem_cases[i].text);
      if (mem_cases[i].value == 0)
        {
          g_assert_false (ok);
          g_assert_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID);
          g_autofree char *quoted = g_strdup_printf ("'%s'", mem_cases[i].text);
          g_assert_nonnull (strstr (error->message, quoted));
          g_assert_cmpuint (mib, ==, 12345);
        }
      else
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpuint (mib, ==, mem_cases[i].value);
        }
    }
}

static void
test_format_time (void)
{
  static const struct { guint64 s; const char *text; } cases[] = {
    { 1,              "00:00:01" },
    { 60,             "00:01:00" },
    { 3600 + 61,      "01:01:01" },
    { 86399,          "23:59:59" },
    { 86400,          "1-00:00:00" },
    { 3 * 86400 + 7,  "3-00:00:07" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = sweep_slurm_format_time (cases[i].s);
      g_assert_cmpstr (text, ==, cases[i].text);
      /* What is written reads back as the same limit. */
      guint64 back = 0;
      g_assert_true (sweep_slurm_parse_time (text, &back, NULL));
      g_assert_cmpuint (back, ==, cases[i].s);
    }
}

/* The rule of sweep-slurm.h worked by hand: time = wall x runs x 2,
 * at least 60 s, up to whole minutes; memory = RSS x 1.5 + 32 MiB, at
 * least 64 MiB. */
static void
test_estimate (void)
{
  static const struct {
    guint64 wall_ns, rss_bytes;
    guint   runs;
    guint64 time_s, mem_mib;
  } cases[] = {
    /* 0.2 s x 10 x 2 = 4 s: the one-minute floor; 10 MiB x 1.5 + 32 = 47: the 64 MiB floor. */
    { 200000000,            10 * 1048576,  10,   60,       64 },
    /* 3 s x 20 x 2 = 120 s exactly; 100 MiB x 1.5 + 32 = 182. */
    { 3000000000,           100 * 1048576, 20,   120,      182 },
    /* 3.001 s x 20 x 2 = 120.04 s: 121 s, up to 180; 1 byte more than 100 MiB: 151 MiB + 32. */
    { 3001000000,           100 * 1048576 + 1, 20, 180,    183 },
    /* 45 s x 100 x 2 = 9000 s = 2.5 h; 1 GiB x 1.5 + 32 = 1568. */
    { 45 * G_GUINT64_CONSTANT (1000000000), 1073741824, 100, 9000, 1568 },
    /* A task with no runs (cannot happen, shards <= points) costs what one run costs. */
    { 40 * G_GUINT64_CONSTANT (1000000000), 0,  0,    120,      64 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint64 time_s = 0, mem_mib = 0;
      sweep_slurm_estimate (cases[i].wall_ns, cases[i].rss_bytes, cases[i].runs,
                            &time_s, &mem_mib);
      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpuint (time_s, ==, cases[i].time_s);
      g_assert_cmpuint (mem_mib, ==, cases[i].mem_mib);
    }
}

/* Round-robin: task t runs points t-1, t-1+n, ...; counted against a loop
 * that deals the points one by one. */
static void
test_task_points (void)
{
  for (guint n_points = 1; n_points <= 13; n_points++)
    for (guint n_tasks = 1; n_tasks <= 15; n_tasks++)
      {
        guint dealt[16] = { 0 };
        for (guint p = 0; p < n_points; p++)
          dealt[p % n_tasks + 1]++;
        guint total = 0;
        for (guint t = 1; t <= n_tasks; t++)
          {
            g_assert_cmpuint (sweep_slurm_task_points (n_points, n_tasks, t), ==, dealt[t]);
            total += dealt[t];
          }
        g_assert_cmpuint (total, ==, n_points);
        g_assert_cmpuint (sweep_slurm_task_points (n_points, n_tasks, 1), ==,
                          (n_points + n_tasks - 1) / n_tasks);
      }
}

/* Each word joined and then split again by the shell's rules comes back
 * unchanged; plain words stay bare so the script reads as typed. */
static void
test_shell_join (void)
{
  static const char *const words[] = {
    "/opt/iosim/bin/iosim", "sweep", "--vary", "sched deadline.fifo_batch=1,16",
    "--set", "process reader.size=4KiB", "it's", "say \"hi\"", "$HOME", "`id`",
    "a;b", "*", "", "back\\slash", "tab\there", "new\nline", "x=y", "~", "{1,2}",
    "%A_%a", "--seed=7", NULL,
  };
  g_autofree char *line = sweep_slurm_shell_join (words);
  g_auto (GStrv) back = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_shell_parse_argv (line, NULL, &back, &error));
  g_assert_no_error (error);
  g_assert_cmpstrv ((const char *const *) back, words);
  g_assert_true (g_str_has_prefix (line, "/opt/iosim/bin/iosim sweep --vary 'sched deadline.fifo_batch=1,16' "));
  g_assert_nonnull (strstr (line, " 'it'\\''s' "));
  g_assert_nonnull (strstr (line, " x=y "));
  g_assert_nonnull (strstr (line, " %A_%a --seed=7"));

  /* '=' in the first word would be an assignment. */
  const char *first[] = { "A=b", "c=d", NULL };
  g_autofree char *assign = sweep_slurm_shell_join (first);
  g_assert_cmpstr (assign, ==, "'A=b' c=d");
}

static const char *const fixed_argv[] = {
  "/opt/iosim/bin/iosim", "sweep", "/data/study/sweep.ini",
  "--vary", "sched deadline.fifo_batch=1,16",
  "--set", "process reader.path=/data/my \"trace\" it's.blk",
  "--seeds", "3", "--seed", "42", "-o", "/data/study/out dir", NULL,
};

static SweepSlurmJob
fixed_job (void)
{
  return (SweepSlurmJob) {
    .job_name = "iosim-sweep",
    .n_tasks = 6,
    .throttle = 2,
    .time_s = 300,
    .mem_mib = 100,
    .partition = "short",
    .account = "proj-42",
    .log_dir = "/data/study/slurm/logs",
    .note = "Time and memory given: --time 5 --mem 100M (no probe).\n",
    .task_argv = fixed_argv,
  };
}

static void
test_script (void)
{
  SweepSlurmJob job = fixed_job ();
  g_autoptr (GError) error = NULL;
  g_autofree char *script = sweep_slurm_script (&job, &error);
  g_assert_no_error (error);

  static const char expected[] =
    "#!/bin/bash\n"
    "# iosim sweep as a Slurm job array: array task i runs shard i of 6\n"
    "# (the points p with p % 6 == i - 1) and writes its rows beside the\n"
    "# other shards' in the results folder; 'iosim sweep merge' joins them\n"
    "# into the files a local run writes.  Only the iosim binary and the\n"
    "# scenario files need to be visible on the compute nodes.\n"
    "#\n"
    "# Time and memory given: --time 5 --mem 100M (no probe).\n"
    "#SBATCH --job-name=iosim-sweep\n"
    "#SBATCH --array=1-6%2\n"
    "#SBATCH --output=/data/study/slurm/logs/%A_%a.out\n"
    "#SBATCH --time=00:05:00\n"
    "#SBATCH --mem=100M\n"
    "#SBATCH --partition=short\n"
    "#SBATCH --account=proj-42\n"
    "set -eu\n"
    "# -j follows the CPUs a task is given (sbatch --cpus-per-task=C).\n"
    "exec /opt/iosim/bin/iosim sweep /data/study/sweep.ini --vary 'sched deadline.fifo_batch=1,16' "
    "--set 'process reader.path=/data/my \"trace\" it'\\''s.blk' --seeds 3 --seed 42 "
    "-o '/data/study/out dir' --shard \"${SLURM_ARRAY_TASK_ID}/6\" -j \"${SLURM_CPUS_PER_TASK:-1}\"\n";
  g_assert_cmpstr (script, ==, expected);

  /* Without throttle, partition and account: no %K, no such lines. */
  job.throttle = 0;
  job.partition = NULL;
  job.account = NULL;
  job.note = NULL;
  g_autofree char *plain = sweep_slurm_script (&job, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (plain, "\n#SBATCH --array=1-6\n"));
  g_assert_null (strstr (plain, "--partition"));
  g_assert_null (strstr (plain, "--account"));
  g_assert_null (strstr (plain, "\n#\n"));
}

/* What the shell runs for a task is the argv given, whatever its quoting:
 * the exec line, split by g_shell_parse_argv with the two variables set. */
static void
test_script_round_trip (void)
{
  SweepSlurmJob job = fixed_job ();
  g_autofree char *script = sweep_slurm_script (&job, NULL);
  const char *exec_line = strstr (script, "\nexec ");
  g_assert_nonnull (exec_line);
  g_autofree char *line = g_strndup (exec_line + 6, strchr (exec_line + 1, '\n') - exec_line - 6);
  g_autofree char *task = g_strdup (line);
  /* Expand the two variables as bash would for task 4 without --cpus-per-task. */
  g_autoptr (GString) expanded = g_string_new (task);
  g_string_replace (expanded, "${SLURM_ARRAY_TASK_ID}", "4", 0);
  g_string_replace (expanded, "${SLURM_CPUS_PER_TASK:-1}", "1", 0);
  g_auto (GStrv) argv = NULL;
  g_assert_true (g_shell_parse_argv (expanded->str, NULL, &argv, NULL));
  guint n_fixed = g_strv_length ((char **) fixed_argv);
  g_assert_cmpuint (g_strv_length (argv), ==, n_fixed + 4);
  for (guint i = 0; i < n_fixed; i++)
    g_assert_cmpstr (argv[i], ==, fixed_argv[i]);
  const char *tail[] = { "--shard", "4/6", "-j", "1", NULL };
  g_assert_cmpstrv ((const char *const *) argv + n_fixed, tail);
}

typedef struct {
  const char *what;
  const char *job_name, *log_dir, *partition, *account;
  const char *message;   /* a piece of the error */
} ScriptErrorCase;

static const ScriptErrorCase script_errors[] = {
  { "blank in the log folder",   "j", "/data/my logs", NULL, NULL, "log folder '/data/my logs'" },
  { "'%' in the log folder",     "j", "/data/100%", NULL, NULL, "character '%'" },
  { "quote in the log folder",   "j", "/data/it's", NULL, NULL, "character '''" },
  { "blank in the partition",    "j", "/l", "a b", NULL, "--partition 'a b'" },
  { "newline in the account",    "j", "/l", NULL, "a\nb", "--account" },
  { "empty partition",           "j", "/l", "", NULL, "--partition: empty" },
  { "slash in the job name",     "a/b", "/l", NULL, NULL, "--job-name 'a/b'" },
  { "empty job name",            "", "/l", NULL, NULL, "--job-name: empty" },
};

static void
test_script_errors (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (script_errors); i++)
    {
      const ScriptErrorCase *c = &script_errors[i];
      SweepSlurmJob job = fixed_job ();
      job.job_name = c->job_name;
      job.log_dir = c->log_dir;
      job.partition = c->partition;
      job.account = c->account;
      g_autoptr (GError) error = NULL;
      g_test_message ("%s", c->what);
      g_autofree char *script = sweep_slurm_script (&job, &error);
      g_assert_null (script);
      g_assert_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, c->message));
    }
}

static void
test_merge_script (void)
{
  g_autofree char *script = sweep_slurm_merge_script ("/opt/iosim/bin/iosim", "/data/out dir",
                                                       "/data/final");
  g_assert_true (g_str_has_prefix (script, "#!/bin/bash\n"));
  g_assert_true (g_str_has_suffix (script,
                                   "\nset -eu\nexec /opt/iosim/bin/iosim sweep merge '/data/out dir' -o /data/final\n"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sweep-slurm/parse-time", test_parse_time);
  g_test_add_func ("/sweep-slurm/parse-mem", test_parse_mem);
  g_test_add_func ("/sweep-slurm/format-time", test_format_time);
  g_test_add_func ("/sweep-slurm/estimate", test_estimate);
  g_test_add_func ("/sweep-slurm/task-points", test_task_points);
  g_test_add_func ("/sweep-slurm/shell-join", test_shell_join);
  g_test_add_func ("/sweep-slurm/script", test_script);
  g_test_add_func ("/sweep-slurm/script-round-trip", test_script_round_trip);
  g_test_add_func ("/sweep-slurm/script-errors", test_script_errors);
  g_test_add_func ("/sweep-slurm/merge-script", test_merge_script);
  return g_test_run ();
}
