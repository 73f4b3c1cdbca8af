/* cli-args.c — argument helpers shared by the subcommands. */
#include <string.h>

#include "cli/cli.h"

char **
cli_split_command (int argc, char **argv, int *opt_argc)
{
  *opt_argc = argc;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        *opt_argc = i;
        return i + 1 < argc ? argv + i + 1 : NULL;
      }
  return NULL;
}
