/* cli_help.h — `hetsim help keys` and `hetsim methods`: the scenario reference and the
 * method reference, printed from the schema and the registry. */
#ifndef CLI_CLI_HELP_H
#define CLI_CLI_HELP_H

/* argv holds the arguments after "help keys" (SECTION, --markdown). Returns the exit
 * status: 0 printed, 2 bad usage or an unknown section. */
int cli_help(int argc, char **argv);

/* argv holds the arguments after "methods" (NAME, --markdown). Returns 0, or 2 for bad
 * usage or an unknown method. */
int cli_methods(int argc, char **argv);

#endif
