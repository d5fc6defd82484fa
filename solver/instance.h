/* instance.h — pairing instance files (`hetsim pair`), the format of DESIGN.md:
 *   [pairing]
 *   batches  = 12, 10, 15        ; n_i
 *   speed    = 0.4, 1, 1.2       ; s_i, batches per second (> 0)
 *   fs       = 1, .99, .73       ; per split m; fs[0] = 1 and ff[0] = 0 (no offload)
 *   ff       = 0, .02, .13
 *   act      = 0, 1.25, 1.25     ; bytes per batch at split m (>= 0)
 *   bandwidth.0 = inf, 50, 0     ; row i of b_ij: inf on the diagonal, 0 = no link
 * Rows must be complete and the matrix symmetric (b_ij = b_ji). `;` and `#` comment. */
#ifndef SOLVER_INSTANCE_H
#define SOLVER_INSTANCE_H

#include "solver/pairing.h"

/* Parses path into *p (allocated; free with pairing_problem_free). Errors: HS_E_INPUT
 * with "FILE:LINE: ..." in diag, HS_E_NOMEM. */
int instance_load(const char *path, PairingProblem *p, HsDiag *diag);
/* The same from text in memory; name is used in messages. */
int instance_parse(const char *name, const char *text, PairingProblem *p, HsDiag *diag);

#endif
