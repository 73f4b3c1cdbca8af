/* cmd-capture.c — placeholder until the capture work lands. */
#include <stdio.h>
#include "cli/cli.h"

int
cli_cmd_capture (int argc, char **argv)
{
  fprintf (stderr, "iosim capture: not built yet\n");
  return 1;
}
