/* cmd-fit.c — placeholder until the fit work lands. */
#include <stdio.h>
#include "cli/cli.h"

int
cli_cmd_fit (int argc, char **argv)
{
  fprintf (stderr, "iosim fit: not built yet\n");
  return 1;
}
