/* cli_profile.h — `hetsim profile` (cli_profile.c). Takes the arguments after the command
 * word; returns the exit status. */
#ifndef CLI_CLI_PROFILE_H
#define CLI_CLI_PROFILE_H

int cli_profile(int argc, char **argv);

#endif
