/* server_assign.h — `[servers] assign = FILE.assign`: which edge server each client
 * (agent) belongs to, read from a file the user wrote (e.g. from real positions).
 *
 * Format: one line "I S" per agent — agent index I in 0..agents-1, server index S in
 * 0..servers-1 — blank lines and '#' comments allowed, lines in any order. Every agent
 * appears exactly once; a server may have no client. */
#ifndef SIM_SERVER_ASSIGN_H
#define SIM_SERVER_ASSIGN_H

#include "base/hs_error.h"

/* Reads path into server_of (n_agents entries). HS_E_INPUT with "PATH:LINE: what is
 * wrong" for a malformed line, an index out of range or an agent listed twice, and with
 * "PATH: agent K has no line" when one is missing; HS_E_NOMEM. server_of is undefined
 * after an error. */
int server_assign_load(const char *path, int n_agents, int n_servers, int *server_of, HsDiag *diag);

#endif
