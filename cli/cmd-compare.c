/* cmd-compare.c — placeholder until the compare work lands. */
#include <stdio.h>
#include "cli/cli.h"

int
cli_cmd_compare (int argc, char **argv)
{
  fprintf (stderr, "iosim compare: not built yet\n");
  return 1;
}
