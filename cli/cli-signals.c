/* cli-signals.c — Ctrl-C handling shared by the long-running commands.
 * The handlers only set a flag: the command's loop sees it, stops issuing
 * or recording, restores what it changed and reports what it measured. */
#include <string.h>

#include "cli/cli.h"

volatile sig_atomic_t cli_stop_requested;

static void
on_stop_signal (int signo)
{
  cli_stop_requested = 1;
}

void
cli_install_stop_handlers (void)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset (&sa.sa_mask);
  /* No SA_RESTART: a blocking poll() or sleep returns EINTR and the loop
   * sees the flag at once. */
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
}
