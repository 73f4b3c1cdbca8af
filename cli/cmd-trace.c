/* cmd-trace.c — placeholder until the trace work lands. */
#include <stdio.h>
#include "cli/cli.h"

int
cli_cmd_trace (int argc, char **argv)
{
  fprintf (stderr, "iosim trace: not built yet\n");
  return 1;
}
