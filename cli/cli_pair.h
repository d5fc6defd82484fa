/* cli_pair.h — `hetsim pair INSTANCE.ini [--solver exact|ip|greedy] [--cost paper|exact] [--time-limit S]`. */
#ifndef CLI_CLI_PAIR_H
#define CLI_CLI_PAIR_H

/* argv holds the arguments after "pair". Returns the exit status: 0 ok, 1 solver
 * failure, 2 bad usage or a malformed instance. */
int cli_pair(int argc, char **argv);

#endif
