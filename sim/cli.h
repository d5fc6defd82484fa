/* cli.h — the hetsim subcommands. Each takes the arguments after its name and returns
 * the process exit status: 0 success, 1 a run failed, 2 bad usage or bad input. */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#define HETSIM_VERSION "0.1.0"

int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);

/* Prints "hetsim: message" to stderr and returns the exit status for status. */
int cli_fail(int status, const char *message);

#endif
