/* topology_weights.c — a mixing matrix given as a file ([topology] weights = FILE.weights):
 * the dense n x n matrix W, one row per line, the n entries of a row separated by blanks
 * or commas, '#' comments and blank lines skipped. It is what numpy writes with
 * `numpy.savetxt("mix.weights", W)` (or `delimiter=","`). The graph is W's support: an
 * off-diagonal entry that is not zero is a link, both ways.
 * Checks, each at FILE:LINE of the row that breaks it: n entries per row, each a number in
 * [0, 1], each row summing to 1 within 1e-9 (row-stochastic), W_ij = W_ji within 1e-9 and
 * both zero or both not (D-PSGD mixes with a symmetric W, so a symmetric row-stochastic W
 * is doubly stochastic); n rows; the support connected. Workload: read once at resolution
 * and once when the method is created; O(n^2) text, O(links) memory (rows are kept
 * sparse as they are read). */
#include "sim/scenario/topology.h"

#include "base/lines.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEIGHTS_TOLERANCE 1e-9

/* the rows read so far, sparse: row i's off-diagonal entries, columns ascending */
typedef struct WeightRows {
    int *offsets;    /* (n + 1) */
    int *adj;
    double *weights;
    double *self;    /* (n) */
    int *line;       /* (n) the line of each row */
    size_t count, cap;
} WeightRows;

static int weight_rows_add(WeightRows *w, int j, double value)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 256;
        int *adj = realloc(w->adj, cap * sizeof *adj);
        if (adj == NULL) return HS_E_NOMEM;
        w->adj = adj;
        double *weights = realloc(w->weights, cap * sizeof *weights);
        if (weights == NULL) return HS_E_NOMEM;
        w->weights = weights;
        w->cap = cap;
    }
    w->adj[w->count] = j;
    w->weights[w->count++] = value;
    return HS_OK;
}

static void weight_rows_free(WeightRows *w)
{
    free(w->offsets);
    free(w->adj);
    free(w->weights);
    free(w->self);
    free(w->line);
}

/* One row of the file into w: n numbers in [0, 1] summing to 1. */
static int weights_parse_row(const char *path, int lineno, const char *text, int n, int row, WeightRows *w,
                             HsDiag *diag)
{
    const char *p = text;
    double sum = 0;
    int j = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r' || *p == '\n') p++;
        if (*p == '\0') break;
        char *end;
        double value = strtod(p, &end);
        if (end == p || (*end && *end != ' ' && *end != '\t' && *end != ',' && *end != '\r' && *end != '\n')) {
            int len = 0;
            while (p[len] && p[len] != ' ' && p[len] != '\t' && p[len] != ',' && p[len] != '\n' && len < 40) len++;
            return hs_diag_set(diag, HS_E_INPUT, path, lineno, "row %d, entry %d: '%.*s' is not a number", row, j,
                               len, p);
        }
        if (j >= n)
            return hs_diag_set(diag, HS_E_INPUT, path, lineno, "row %d has more than %d entries (one per agent)", row,
                               n);
        if (!(value >= 0 && value <= 1))
            return hs_diag_set(diag, HS_E_INPUT, path, lineno, "W[%d][%d] = %.*s is outside [0, 1]", row, j,
                               (int)(end - p), p);
        sum += value;
        if (j == row) w->self[row] = value;
        else if (value != 0 && weight_rows_add(w, j, value) != HS_OK) return HS_E_NOMEM;
        j++;
        p = end;
    }
    if (j != n)
        return hs_diag_set(diag, HS_E_INPUT, path, lineno, "row %d has %d entries, expected %d (one per agent)", row,
                           j, n);
    if (fabs(sum - 1) > WEIGHTS_TOLERANCE)
        return hs_diag_set(diag, HS_E_INPUT, path, lineno, "row %d sums to %.12g, not 1 within 1e-9 (the weights "
                                                           "must be row-stochastic)", row, sum);
    return HS_OK;
}

/* W_ji of the rows read, or -1 when row j holds no entry at column i (0 off the diagonal). */
static double weights_entry(const WeightRows *w, int j, int i)
{
    int lo = w->offsets[j], hi = w->offsets[j + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w->adj[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    return lo < w->offsets[j + 1] && w->adj[lo] == i ? w->weights[lo] : 0;
}

static int weights_symmetric(const char *path, int n, const WeightRows *w, HsDiag *diag)
{
    for (int j = 0; j < n; j++) /* row j against the rows before it, reported at row j */
        for (int i = 0; i < j; i++) {
            double wij = weights_entry(w, i, j), wji = weights_entry(w, j, i);
            if ((wij == 0) != (wji == 0) || fabs(wij - wji) > WEIGHTS_TOLERANCE)
                return hs_diag_set(diag, HS_E_INPUT, path, w->line[j], "W[%d][%d] = %.12g but W[%d][%d] = %.12g "
                                   "(line %d): W must be symmetric, as D-PSGD mixes with a symmetric W",
                                   j, i, wji, i, j, wij, w->line[i]);
        }
    return HS_OK;
}

static int weights_connected(const char *path, int n, const WeightRows *w, HsDiag *diag)
{
    Topology t = {.n = n, .offsets = w->offsets, .adj = w->adj};
    int connected = topology_connected(&t);
    if (connected < 0) return HS_E_NOMEM;
    return connected ? HS_OK
                     : hs_diag_set(diag, HS_E_INPUT, path, 0, "the graph of W's nonzero entries is disconnected: "
                                                              "every agent must reach every other");
}

int topology_weights_load(const char *path, int n, Topology *out, HsDiag *diag)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return hs_diag_set(diag, HS_E_INPUT, path, 0, "needs at least one agent, found %d", n);
    WeightRows w = {0};
    LineText text;
    int status = lines_open(path, &text, diag);
    if (status != HS_OK) return status;
    /* a row is at most the whole text (lines_open holds it to LINES_MAX_BYTES) */
    int size = (int)text.len + 2;
    char *line = malloc((size_t)size);
    w.offsets = calloc((size_t)n + 1, sizeof *w.offsets);
    w.self = calloc((size_t)n, sizeof *w.self);
    w.line = calloc((size_t)n, sizeof *w.line);
    if (!line || !w.offsets || !w.self || !w.line) status = HS_E_NOMEM;
    int rows = 0;
    while (lines_each(&text, line, size, &status, diag)) {
        const char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (*p == '\0') continue;
        if (rows == n) {
            status = hs_diag_set(diag, HS_E_INPUT, path, text.lineno, "more than %d rows (one per agent)", n);
            break;
        }
        w.line[rows] = text.lineno;
        status = weights_parse_row(path, text.lineno, p, n, rows, &w, diag);
        w.offsets[++rows] = (int)w.count;
    }
    if (status == HS_OK && rows < n)
        status = hs_diag_set(diag, HS_E_INPUT, path, 0, "holds %d rows, expected %d (one per agent)", rows, n);
    if (status == HS_OK) status = weights_symmetric(path, n, &w, diag);
    if (status == HS_OK) status = weights_connected(path, n, &w, diag);
    free(line);
    lines_free(&text);
    free(w.line);
    if (status != HS_OK) {
        w.line = NULL;
        weight_rows_free(&w);
        return status == HS_E_NOMEM ? hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory") : status;
    }
    *out = (Topology){.n = n, .offsets = w.offsets, .adj = w.adj, .weights = w.weights, .self_weights = w.self};
    if (out->adj == NULL) out->adj = malloc(sizeof *out->adj);
    if (out->weights == NULL) out->weights = malloc(sizeof *out->weights);
    if (out->adj == NULL || out->weights == NULL) {
        topology_free(out);
        return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    }
    return HS_OK;
}
