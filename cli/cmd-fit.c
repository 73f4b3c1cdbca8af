/* cmd-fit.c — `iosim fit TRACE [-o model.ini] [--json FILE] [--measured FILE]
 * [--device MAJ,MIN] [--sched NAME] [--model fixed|disk|empirical|auto]`: option parsing
 * around fit_trace() and its writers (models/fit/fit.h).  The report goes to
 * standard output; at least one file must be asked for. */
#include <stdio.h>

#include "cli/cli.h"
#include "models/fit/fit.h"

static gboolean
parse_devno (const char *text, guint32 *major, guint32 *minor)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);
  guint64 ma, mi;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32, &ma, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32, &mi, NULL))
    return FALSE;
  *major = (guint32) ma;
  *minor = (guint32) mi;
  return TRUE;
}

int
cli_cmd_fit (int argc, char **argv)
{
  g_autofree char *output = NULL, *device = NULL, *sched = NULL, *json = NULL;
  g_autofree char *measured = NULL, *model = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the scenario .ini", "FILE" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &device, "Fit this device of the trace", "MAJ,MIN" },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &sched, "Scheduler(s) for the scenario, one run each: mq-deadline, bfq, kyber, none (blk-mq) or noop, deadline, anticipatory, cfq (legacy); default: the capture's, else none", "NAME[,NAME...]" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the fit as JSON", "FILE" },
    { "measured", 0, 0, G_OPTION_ARG_FILENAME, &measured,
      "Write the trace's I/Os as a results CSV (the measured side of iosim compare)", "FILE" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &model,
      "Device model kind: fixed (overhead + bytes / bandwidth), disk (with a seek curve), "
      "empirical (the measured service times by size and distance class), auto (the better "
      "on held-out requests; default)", "KIND" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - fit a device model and process streams to a trace");
  g_autoptr (GError) error = NULL;
  g_autoptr (FitResult) result = NULL;
  FitOptions opts = { 0 };

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Fits D2C = overhead + bytes / bandwidth per op by least squares on the requests\n"
    "issued with nothing else in flight, finds each process's timing (closed loop when\n"
    "it waits for its previous I/O) and writes a scenario that re-creates the trace.\n"
    "For a serial device the disk kind adds a seek curve over the distance from the\n"
    "previous request; --model auto keeps it when it predicts held-out requests\n"
    "(every 5th) better, and writes kind = disk when that reproduces the fit.\n"
    "The empirical kind keeps the measured service times themselves, by op, size\n"
    "class and distance class (sequential, near, far); auto takes it when its\n"
    "distributions score better on the held-out requests (continuous ranked\n"
    "probability score) than the kind chosen above.\n\n"
    "At least one of -o, --json and --measured is needed.\n\n"
    "Example: iosim fit cap.txt -o loop0.ini --measured measured.csv\n"
    "         iosim run loop0.ini --io-log sim.csv && iosim compare sim.csv measured.csv");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      return 2;
    }
  if (argc != 2)
    {
      fprintf (stderr, "iosim fit: need one TRACE (see --help)\n");
      return 2;
    }
  if (output == NULL && json == NULL && measured == NULL)
    {
      fprintf (stderr, "iosim fit: nothing to write: give -o FILE (the scenario), "
               "--json FILE or --measured FILE (see --help)\n");
      return 2;
    }
  if (device != NULL)
    {
      if (!parse_devno (device, &opts.dev_major, &opts.dev_minor))
        {
          fprintf (stderr, "iosim fit: --device wants MAJ,MIN (e.g. 7,0), not \"%s\"\n", device);
          return 2;
        }
      opts.has_device = TRUE;
    }
  opts.sched = sched;
  if (model != NULL && !fit_model_kind_parse (model, &opts.model))
    {
      fprintf (stderr, "iosim fit: --model wants fixed, disk, empirical or auto, not \"%s\"\n", model);
      return 2;
    }

  result = fit_trace (argv[1], &opts, &error);
  if (result == NULL)
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      return 1;
    }
  fit_print_report (result, stdout);
  if (output != NULL && !fit_write_scenario (result, output, &error))
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      return 1;
    }
  if (json != NULL)
    {
      g_autofree char *text = fit_result_to_json (result);
      g_autofree char *with_nl = g_strconcat (text, "\n", NULL);

      if (!g_file_set_contents (json, with_nl, -1, &error))
        {
          fprintf (stderr, "iosim fit: %s\n", error->message);
          return 1;
        }
    }
  if (measured != NULL && !fit_write_measured_results (result, measured, &error))
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      return 1;
    }
  putchar ('\n');
  if (output != NULL)
    printf ("scenario written to %s\n", output);
  if (json != NULL)
    printf ("fit written to %s (JSON)\n", json);
  if (measured != NULL)
    printf ("measured results written to %s\n", measured);
  return 0;
}
