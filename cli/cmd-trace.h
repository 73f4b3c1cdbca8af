/* cmd-trace.h — the subcommands of `iosim trace` (cmd-trace.c dispatches). */
#pragma once

int cli_trace_cat     (int argc, char **argv);
int cli_trace_convert (int argc, char **argv);
int cli_trace_merge   (int argc, char **argv);
