/* sweep-slurm.c — a sweep's shards as a Slurm job array; see sweep-slurm.h. */
#include "models/sweep-slurm.h"

#include <string.h>

G_DEFINE_QUARK (sweep-slurm-error-quark, sweep_slurm_error)

#define MIB ((guint64) 1024 * 1024)

/* Digits only: no sign, no blanks, not empty. */
static gboolean
parse_field (const char *field, guint64 *out)
{
  if (field[0] == '\0' || !g_ascii_isdigit (field[0]))
    return FALSE;
  return g_ascii_string_to_unsigned (field, 10, 0, G_MAXUINT32, out, NULL);
}

gboolean
sweep_slurm_parse_time (const char *text, guint64 *out_s, GError **error)
{
  guint64 days = 0, f[3] = { 0, 0, 0 };
  const char *rest = text;
  const char *dash = strchr (text, '-');
  gboolean ok = TRUE;

  if (dash != NULL)
    {
      g_autofree char *d = g_strndup (text, dash - text);
      ok = parse_field (d, &days);
      rest = dash + 1;
    }
  g_auto (GStrv) parts = g_strsplit (rest, ":", -1);
  guint n = g_strv_length (parts);
  ok = ok && n >= 1 && n <= 3;
  for (guint i = 0; ok && i < n; i++)
    ok = parse_field (parts[i], &f[i]);
  if (ok)
    {
      guint64 s;
      if (dash != NULL)          /* days-hours[:minutes[:seconds]] */
        s = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
      else if (n == 1)           /* minutes */
        s = f[0] * 60;
      else if (n == 2)           /* minutes:seconds */
        s = f[0] * 60 + f[1];
      else                       /* hours:minutes:seconds */
        s = f[0] * 3600 + f[1] * 60 + f[2];
      if (s == 0)
        {
          g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
                       "--time '%s': zero (sbatch would take it as no limit; give the limit a task needs)",
                       text);
          return FALSE;
        }
      *out_s = s;
      return TRUE;
    }
  g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
               "--time '%s': not one of sbatch's forms MINUTES, MINUTES:SECONDS, "
               "HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS",
               text);
  return FALSE;
}

gboolean
sweep_slurm_parse_mem (const char *text, guint64 *out_mib, GError **error)
{
  gsize len = strlen (text);
  guint64 kib_per_unit = 1024;         /* sbatch: M when no unit */
  g_autofree char *digits = g_strdup (text);
  guint64 value;

  if (len > 0 && !g_ascii_isdigit (text[len - 1]))
    {
      switch (g_ascii_toupper (text[len - 1]))
        {
        case 'K': kib_per_unit = 1; break;
        case 'M': kib_per_unit = 1024; break;
        case 'G': kib_per_unit = 1024 * 1024; break;
        case 'T': kib_per_unit = (guint64) 1024 * 1024 * 1024; break;
        default: kib_per_unit = 0; break;
        }
      digits[len - 1] = '\0';
    }
  if (kib_per_unit == 0 || !parse_field (digits, &value))
    {
      g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
                   "--mem '%s': not a size in sbatch's form NUMBER[K|M|G|T] (powers of 1024, M when no unit)",
                   text);
      return FALSE;
    }
  if (value == 0)
    {
      g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
                   "--mem '%s': zero (sbatch would take it as all of a node's memory)", text);
      return FALSE;
    }
  *out_mib = (value * kib_per_unit + 1023) / 1024;
  return TRUE;
}

char *
sweep_slurm_format_time (guint64 s)
{
  guint64 days = s / 86400, rem = s % 86400;
  if (days > 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "-%02u:%02u:%02u", days,
                            (guint) (rem / 3600), (guint) (rem % 3600 / 60), (guint) (rem % 60));
  return g_strdup_printf ("%02u:%02u:%02u",
                          (guint) (rem / 3600), (guint) (rem % 3600 / 60), (guint) (rem % 60));
}

void
sweep_slurm_estimate (guint64 probe_wall_ns, guint64 probe_max_rss_bytes,
                      guint runs_per_task, guint64 *out_time_s, guint64 *out_mem_mib)
{
  guint64 ns = probe_wall_ns * MAX (runs_per_task, 1u) * SWEEP_SLURM_TIME_FACTOR;
  guint64 s = (ns + G_USEC_PER_SEC * 1000 - 1) / (G_USEC_PER_SEC * 1000);
  /* Whole minutes: what a user would have typed, and no task is killed
   * for the seconds a rounding down would take away. */
  s = (MAX (s, SWEEP_SLURM_TIME_MIN_S) + 59) / 60 * 60;
  *out_time_s = s;

  guint64 mib = (probe_max_rss_bytes + probe_max_rss_bytes / 2 + MIB - 1) / MIB
                + SWEEP_SLURM_MEM_MARGIN_MIB;
  *out_mem_mib = MAX (mib, SWEEP_SLURM_MEM_MIN_MIB);
}

guint
sweep_slurm_task_points (guint n_points, guint n_tasks, guint task)
{
  g_return_val_if_fail (n_tasks >= 1 && task >= 1 && task <= n_tasks, 0);
  if (task - 1 >= n_points)
    return 0;
  return (n_points - (task - 1) + n_tasks - 1) / n_tasks;
}

/* Characters that mean nothing to bash inside a word (no globbing, no
 * expansion, no splitting); '=' only outside the first word, where it
 * would make an assignment. */
static gboolean
shell_word_is_plain (const char *word, gboolean first)
{
  if (word[0] == '\0')
    return FALSE;
  for (const char *c = word; *c; c++)
    if (!g_ascii_isalnum (*c) && !strchr ("_./:,+@%-", *c) && !(*c == '=' && !first))
      return FALSE;
  return TRUE;
}

char *
sweep_slurm_shell_join (const char *const *argv)
{
  GString *line = g_string_new (NULL);
  for (guint i = 0; argv[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (line, ' ');
      if (shell_word_is_plain (argv[i], i == 0))
        g_string_append (line, argv[i]);
      else
        {
          g_autofree char *quoted = g_shell_quote (argv[i]);
          g_string_append (line, quoted);
        }
    }
  return g_string_free (line, FALSE);
}

/* sbatch reads an #SBATCH line up to the end and splits it at blanks; a
 * value with blanks, quotes or (in file names) '%' patterns would be
 * misread, so such values are refused with the option that carries them. */
static gboolean
check_directive_value (const char *option, const char *value, const char *bad_chars,
                       GError **error)
{
  for (const char *c = value; *c; c++)
    if (g_ascii_isspace (*c) || g_ascii_iscntrl (*c) || strchr (bad_chars, *c))
      {
        g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
                     "%s '%s': an #SBATCH line cannot carry the character '%c' "
                     "(blanks, quotes, backslashes%s are refused)",
                     option, value, g_ascii_isprint (*c) ? *c : '?',
                     strchr (bad_chars, '%') ? ", '%'" : "");
        return FALSE;
      }
  if (value[0] == '\0')
    {
      g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID, "%s: empty", option);
      return FALSE;
    }
  return TRUE;
}

static void
append_comment (GString *out, const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] == '\0' && lines[i + 1] == NULL)
        break;                   /* the text's own final newline */
      g_string_append_printf (out, "#%s%s\n", lines[i][0] ? " " : "", lines[i]);
    }
}

char *
sweep_slurm_script (const SweepSlurmJob *job, GError **error)
{
  g_return_val_if_fail (job->n_tasks >= 1 && job->time_s >= 1 && job->mem_mib >= 1, NULL);
  g_return_val_if_fail (g_path_is_absolute (job->log_dir), NULL);

  for (const char *c = job->job_name; *c; c++)
    if (!g_ascii_isalnum (*c) && !strchr ("._-", *c))
      {
        g_set_error (error, SWEEP_SLURM_ERROR, SWEEP_SLURM_ERROR_INVALID,
                     "--job-name '%s': only letters, digits, '.', '_' and '-'", job->job_name);
        return NULL;
      }
  if (!check_directive_value ("--job-name", job->job_name, "", error)
      || !check_directive_value ("log folder", job->log_dir, "'\"\\%", error)
      || (job->partition && !check_directive_value ("--partition", job->partition, "'\"\\", error))
      || (job->account && !check_directive_value ("--account", job->account, "'\"\\", error)))
    return NULL;

  GString *out = g_string_new ("#!/bin/bash\n");
  g_string_append_printf (out,
                          "# iosim sweep as a Slurm job array: array task i runs shard i of %u\n"
                          "# (the points p with p %% %u == i - 1) and writes its rows beside the\n"
                          "# other shards' in the results folder; 'iosim sweep merge' joins them\n"
                          "# into the files a local run writes.  Only the iosim binary and the\n"
                          "# scenario files need to be visible on the compute nodes.\n",
                          job->n_tasks, job->n_tasks);
  if (job->note != NULL)
    {
      g_string_append (out, "#\n");
      append_comment (out, job->note);
    }
  g_string_append_printf (out, "#SBATCH --job-name=%s\n", job->job_name);
  if (job->throttle > 0)
    g_string_append_printf (out, "#SBATCH --array=1-%u%%%u\n", job->n_tasks, job->throttle);
  else
    g_string_append_printf (out, "#SBATCH --array=1-%u\n", job->n_tasks);
  g_string_append_printf (out, "#SBATCH --output=%s/%%A_%%a.out\n", job->log_dir);
  g_autofree char *time_text = sweep_slurm_format_time (job->time_s);
  g_string_append_printf (out, "#SBATCH --time=%s\n", time_text);
  g_string_append_printf (out, "#SBATCH --mem=%" G_GUINT64_FORMAT "M\n", job->mem_mib);
  if (job->partition != NULL)
    g_string_append_printf (out, "#SBATCH --partition=%s\n", job->partition);
  if (job->account != NULL)
    g_string_append_printf (out, "#SBATCH --account=%s\n", job->account);

  g_autofree char *command = sweep_slurm_shell_join (job->task_argv);
  g_string_append_printf (out,
                          "set -eu\n"
                          "# -j follows the CPUs a task is given (sbatch --cpus-per-task=C).\n"
                          "exec %s --shard \"${SLURM_ARRAY_TASK_ID}/%u\" -j \"${SLURM_CPUS_PER_TASK:-1}\"\n",
                          command, job->n_tasks);
  return g_string_free (out, FALSE);
}

char *
sweep_slurm_merge_script (const char *iosim_path, const char *results_dir, const char *out_dir)
{
  const char *argv[] = { iosim_path, "sweep", "merge", results_dir, "-o", out_dir, NULL };
  g_autofree char *command = sweep_slurm_shell_join (argv);
  return g_strdup_printf ("#!/bin/bash\n"
                          "# After every task of the array job has finished (sbatch --wait, or\n"
                          "# squeue shows none left): merge the shards into results.csv and\n"
                          "# summary.csv, byte-identical with a local run of the same sweep.  It\n"
                          "# names the shards that are missing if a task failed; resubmit those\n"
                          "# with sbatch --array=LIST.\n"
                          "set -eu\n"
                          "exec %s\n",
                          command);
}
