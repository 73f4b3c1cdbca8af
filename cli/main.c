/* main.c — the iosim command: a table of subcommands, nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>

#include "iosim-config.h"
#include "cli/cli.h"

typedef struct {
  const char *name;
  int       (*run) (int argc, char **argv);
  const char *summary;
} CliCommand;

static const CliCommand commands[] = {
  { "run",     cli_cmd_run,     "simulate a scenario (one run per elevator listed) and report" },
  { "sweep",   cli_cmd_sweep,   "run a scenario over combinations of settings and seeds (resumable, shardable)" },
  { "sched",   cli_cmd_sched,   "list the elevators with their era, tunables and defaults" },
  { "trace",   cli_cmd_trace,   "inspect block traces: info, cat, convert, merge" },
  { "capture", cli_cmd_capture, "record block events of a real device through tracefs" },
  { "fit",     cli_cmd_fit,     "fit a device model and process streams to a trace; write a scenario" },
  { "replay",  cli_cmd_replay,  "replay a trace on a real block device with precise timing" },
  { "restore", cli_cmd_restore, "put back what a killed replay, capture or emulate left changed" },
  { "emulate", cli_cmd_emulate, "serve a real block device whose timing follows an iosim device model" },
  { "validate", cli_cmd_validate, "check the model's scheduler predictions on a real device" },
  { "compare", cli_cmd_compare, "compare two per-I/O result files (simulated vs measured)" },
  { "bench",   cli_cmd_bench,   "measure simulator speed (1,000,000 random reads)" },
};

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: iosim COMMAND [OPTIONS...]\n\n"
           "iosim simulates the Linux block I/O path (elevators, request queue, devices),\n"
           "reads block traces, fits models to them, replays them on real devices and\n"
           "compares model with hardware.\n\n"
           "Commands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "\nRun 'iosim COMMAND --help' for the options of one command.\n"
           "Example: iosim run models/scenarios/default.ini\n");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* Numbers in outputs must not depend on the user's locale. */
  setlocale (LC_NUMERIC, "C");

  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("iosim %s\n", IOSIM_VERSION);
      return 0;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      {
        g_autofree char *prgname = g_strdup_printf ("iosim %s", commands[i].name);
        g_set_prgname (prgname);
        argv[1] = prgname;
        return commands[i].run (argc - 1, argv + 1);
      }
  fprintf (stderr, "iosim: unknown command '%s'\n\n", argv[1]);
  usage (stderr);
  return 2;
}
