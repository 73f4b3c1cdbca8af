/* cmd-replay.c — placeholder until the replay work lands. */
#include <stdio.h>
#include "cli/cli.h"

int
cli_cmd_replay (int argc, char **argv)
{
  fprintf (stderr, "iosim replay: not built yet\n");
  return 1;
}
