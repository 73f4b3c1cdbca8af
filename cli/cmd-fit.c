/* cmd-fit.c — `iosim fit TRACE [-o model.ini] [--json FILE] [--measured FILE]
 * [--device MAJ,MIN] [--sched NAME] [--model fixed|disk|ssd|empirical|auto] [--host-memory
 * SIZE [--dirty-ratio PCT | --dirty-bytes SIZE] ...]`: option parsing around
 * fit_trace() and its writers (models/fit/fit.h).  The report goes to
 * standard output; at least one file must be asked for. */
#include <stdio.h>

#include "cli/cli.h"
#include "sim/sim-output.h"
#include "models/fit/fit.h"
#include "sim/sim-units.h"

/* The host options as given on the command line (NULL or HOST_COUNT_UNSET:
 * not given). */
typedef struct {
  char *memory, *dirty_bytes, *dirty_background_bytes;
  gint  dirty_ratio, dirty_background_ratio, dirty_expire, dirty_writeback;
} FitHostArgs;

static void
host_args_clear (FitHostArgs *a)
{
  g_free (a->memory);
  g_free (a->dirty_bytes);
  g_free (a->dirty_background_bytes);
}

static gboolean
parse_host_size (const char *option, const char *text, guint64 *out)
{
  g_autoptr(GError) error = NULL;

  if (sim_parse_size_bytes (text, out, &error))
    return TRUE;
  fprintf (stderr, "iosim fit: %s wants a size (e.g. 16GiB, 200MB, 4096), not \"%s\": %s\n",
           option, text, error->message);
  return FALSE;
}

/* Not given: a count option keeps this value. */
#define HOST_COUNT_UNSET G_MININT

/* A count option: refused when negative. */
static gboolean
take_host_count (const char *option, gint value, guint bit, guint *field, FitHost *host)
{
  if (value == HOST_COUNT_UNSET)
    return TRUE;
  if (value < 0)
    {
      fprintf (stderr, "iosim fit: %s wants a whole number of at least 0, not %d\n", option,
               value);
      return FALSE;
    }
  *field = (guint) value;
  host->given |= bit;
  return TRUE;
}

/* FALSE (message printed) when an option does not parse or the host
 * cannot hold (fit_host_check). */
static gboolean
host_from_args (const FitHostArgs *a, FitHost *host)
{
  g_autoptr(GError) error = NULL;

  if (a->memory != NULL)
    {
      if (!parse_host_size ("--host-memory", a->memory, &host->memory_bytes))
        return FALSE;
      host->given |= FIT_HOST_MEMORY;
    }
  if (a->dirty_bytes != NULL)
    {
      if (!parse_host_size ("--dirty-bytes", a->dirty_bytes, &host->dirty_bytes))
        return FALSE;
      host->given |= FIT_HOST_DIRTY_BYTES;
    }
  if (a->dirty_background_bytes != NULL)
    {
      if (!parse_host_size ("--dirty-background-bytes", a->dirty_background_bytes,
                            &host->dirty_background_bytes))
        return FALSE;
      host->given |= FIT_HOST_DIRTY_BACKGROUND_BYTES;
    }
  if (!take_host_count ("--dirty-ratio", a->dirty_ratio, FIT_HOST_DIRTY_RATIO,
                        &host->dirty_ratio_pct, host)
      || !take_host_count ("--dirty-background-ratio", a->dirty_background_ratio,
                           FIT_HOST_DIRTY_BACKGROUND_RATIO, &host->dirty_background_ratio_pct, host)
      || !take_host_count ("--dirty-expire-centisecs", a->dirty_expire, FIT_HOST_DIRTY_EXPIRE,
                           &host->dirty_expire_centisecs, host)
      || !take_host_count ("--dirty-writeback-centisecs", a->dirty_writeback,
                           FIT_HOST_DIRTY_WRITEBACK, &host->dirty_writeback_centisecs, host))
    return FALSE;
  if (!fit_host_check (host, &error))
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

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
  FitHostArgs host = { .dirty_ratio = HOST_COUNT_UNSET,
                       .dirty_background_ratio = HOST_COUNT_UNSET,
                       .dirty_expire = HOST_COUNT_UNSET, .dirty_writeback = HOST_COUNT_UNSET };
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the scenario .ini", "FILE" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &device, "Fit this device of the trace", "MAJ,MIN" },
    { "sched", 0, 0, G_OPTION_ARG_STRING, &sched, "Scheduler(s) for the scenario, one run each: mq-deadline, bfq, kyber, none (blk-mq) or noop, deadline, anticipatory, cfq (legacy); default: the capture's, else none", "NAME[,NAME...]" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the fit as JSON", "FILE" },
    { "measured", 0, 0, G_OPTION_ARG_FILENAME, &measured,
      "Write the trace's I/Os as a results CSV (the measured side of iosim compare)", "FILE" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &model,
      "Device model kind: fixed (overhead + bytes / bandwidth), disk (with a seek curve), "
      "ssd (latencies overlap, transfers share one pipeline), empirical (the measured service times by size and distance class), auto (the better "
      "on held-out requests; default)", "KIND" },
    { "host-memory", 0, 0, G_OPTION_ARG_STRING, &host.memory,
      "The traced machine's memory: fit page-cache writeback (flusher threads, fsyncs) as "
      "buffered writers whose simulated page cache has this size (without it writeback "
      "stays trace-driven)", "SIZE" },
    { "dirty-ratio", 0, 0, G_OPTION_ARG_INT, &host.dirty_ratio,
      "vm.dirty_ratio of the traced machine (default: the kernel's, 20)", "PCT" },
    { "dirty-background-ratio", 0, 0, G_OPTION_ARG_INT, &host.dirty_background_ratio,
      "vm.dirty_background_ratio (default: 10)", "PCT" },
    { "dirty-bytes", 0, 0, G_OPTION_ARG_STRING, &host.dirty_bytes,
      "vm.dirty_bytes, instead of --dirty-ratio (0: the ratio applies)", "SIZE" },
    { "dirty-background-bytes", 0, 0, G_OPTION_ARG_STRING, &host.dirty_background_bytes,
      "vm.dirty_background_bytes, instead of --dirty-background-ratio", "SIZE" },
    { "dirty-expire-centisecs", 0, 0, G_OPTION_ARG_INT, &host.dirty_expire,
      "vm.dirty_expire_centisecs (default: 3000)", "N" },
    { "dirty-writeback-centisecs", 0, 0, G_OPTION_ARG_INT, &host.dirty_writeback,
      "vm.dirty_writeback_centisecs (default: 500)", "N" },
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
    "For a device serving several at once the ssd kind overlaps the latencies of\n"
    "its servers and queues every transfer through one shared pipeline; auto keeps\n"
    "it when it predicts the held-out requests better than the fixed kind.\n"
    "The empirical kind keeps the measured service times themselves, by op, size\n"
    "class and distance class (sequential, near, far); auto takes it when its\n"
    "distributions score better on the held-out requests (continuous ranked\n"
    "probability score) than the kind chosen above.\n\n"
    "With --host-memory, page-cache writeback (async writes of flusher threads:\n"
    "kworker, flush-MAJ:MIN, pdflush, bdflush, kupdated; sync writes each ended by the\n"
    "process's own flush: an fsync) becomes a buffered writer of the pages written,\n"
    "under [host] writeback = io-less-3.2 with the dirty limits given (defaults: the\n"
    "kernel's); the scenario's comments say what was inferred and what assumed.\n\n"
    "At least one of -o, --json and --measured is needed.\n\n"
    "Example: iosim fit cap.txt -o loop0.ini --measured measured.csv\n"
    "         iosim run loop0.ini --io-log sim.csv && iosim compare sim.csv measured.csv");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim fit: %s\n", error->message);
      host_args_clear (&host);
      return 2;
    }
  if (!host_from_args (&host, &opts.host))
    {
      host_args_clear (&host);
      return 2;
    }
  host_args_clear (&host);
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
      fprintf (stderr, "iosim fit: --model wants fixed, disk, ssd, empirical or auto, not \"%s\"\n", model);
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

      if (!sim_output_write (json, with_nl, -1, &error))
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
