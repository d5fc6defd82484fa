/* instance.h — pairing instance files (`hetsim pair`), the format of DESIGN.md:
 *   [pairing]
 *   batches  = 12, 10, 15        ; n_i per agent, finite, >= 0
 *   speed    = 0.4, 1, 1.2       ; s_i, batches per second, finite, > 0
 *   fs       = 1, .99, .73       ; per split m, in [0, 1]; fs[0] = 1 (split 0 = no offload)
 *   ff       = 0, .02, .13       ; per split m, in [0, 1]; ff[0] = 0
 *   act      = 0, 1.25, 1.25     ; bytes per batch at split m, finite, >= 0
 *   bandwidth.0 = inf, 50, 0     ; row i of b_ij, >= 0 or inf; 0 = no link
 *   bandwidth.1 = 50, inf, 10
 *   bandwidth.2 = 0, 10, inf
 * and, optional, for the exact cost (pairing.h, cost.c):
 *   cost     = exact             ; paper (the default: the published formula) | exact
 *   latency  = 0.01, 0.01, 0.05  ; s per agent, finite, >= 0 (default 0); a message
 *                                ; i -> j waits max(latency_i, latency_j)
 *   network  = maxmin            ; maxmin (default) | fifo, as [network] model
 *   uplink   = shared            ; shared (default) | fifo, as [network] uplink (maxmin only)
 * and, optional, for helpers shared among several offloaders (shared.h):
 *   capacity = shared            ; pairs (default: ComDML's one-to-one pairs) | shared;
 *                                ; shared takes the paper's cost only
 * The paper's cost ignores latency, network and uplink, so flipping `cost` alone compares
 * the two on one instance. Under cost = exact batches must be whole numbers.
 * Every key at most once, the required ones exactly once, in any order; one row per agent
 * with one value per agent.
 * Links are directed: b_ij (row i, column j) is the bandwidth from i to j, the direction
 * activations travel when i offloads to j, and need not equal b_ji (an uplink and a
 * downlink differ). The diagonal is not used (write inf). Values are
 * comma-separated numbers (strtod syntax, `inf` allowed); `;` and `#` start a comment;
 * lines may be of any length. fs, ff and act have one value per split, split 0 included.
 * Every error is HS_E_INPUT with "FILE:LINE: what is wrong"; a missing key or row is
 * reported at the [pairing] line. */
#ifndef SOLVER_INSTANCE_H
#define SOLVER_INSTANCE_H

#include "solver/pairing.h"

/* The largest instance file: 64 MiB (the bandwidth rows of 2,000 agents). */
#define INSTANCE_FILE_MAX ((size_t)64 << 20)

/* Parses the file at path (a regular text file of at most INSTANCE_FILE_MAX bytes,
 * base/input_file.h) into *p, a dense problem (free with pairing_problem_free; *p is zeroed
 * on error). Errors: HS_E_INPUT (message in diag), HS_E_NOMEM. */
int instance_load(const char *path, PairingProblem *p, HsDiag *diag);
/* The same from NUL-terminated text in memory; name is the FILE of messages. */
int instance_parse(const char *name, const char *text, PairingProblem *p, HsDiag *diag);

#endif
