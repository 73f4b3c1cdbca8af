/* cli.h — the iosim front end's subcommands.  Each takes the arguments after
 * the subcommand name (argv[0] is "iosim SUBCOMMAND") and returns an exit
 * status.  They parse options and call the libraries; no logic lives here
 * that a test cannot reach through the libraries. */
#pragma once

#include <glib.h>

#include <signal.h>

G_BEGIN_DECLS

/* Set by SIGINT, SIGTERM and SIGHUP once cli_install_stop_handlers() ran:
 * long commands (capture, replay) poll it, stop, restore and report. */
extern volatile sig_atomic_t cli_stop_requested;
void cli_install_stop_handlers (void);

/* Everything after "--" is a command, untouched by option parsing: returns
 * it (NULL when there is none or it is empty) and sets *@opt_argc to the
 * number of arguments before "--", the ones to parse. */
char **cli_split_command (int argc, char **argv, int *opt_argc);

int cli_cmd_run     (int argc, char **argv);
int cli_cmd_sched   (int argc, char **argv);
int cli_cmd_bench   (int argc, char **argv);
int cli_cmd_trace   (int argc, char **argv);
int cli_cmd_capture (int argc, char **argv);
int cli_cmd_fit     (int argc, char **argv);
int cli_cmd_replay  (int argc, char **argv);
int cli_cmd_compare (int argc, char **argv);
int cli_cmd_restore (int argc, char **argv);
int cli_cmd_emulate (int argc, char **argv);
int cli_cmd_validate (int argc, char **argv);
int cli_cmd_sweep   (int argc, char **argv);

G_END_DECLS
