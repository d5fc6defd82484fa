/* topology_learn.c — STL-FW (see topology_learn.h): the Frank-Wolfe loop over dense
 * n x n matrices, the assignment that is its linear step, and the symmetric vertex built
 * from the assignment's cycles. */
#include "sim/world/topology_learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int topology_assignment(const double *cost, int n, int *column_of)
{
    /* 1-based potentials u (rows), v (columns); row_at[j]: the row matched to column j */
    double *u = calloc((size_t)n + 1, sizeof *u), *v = calloc((size_t)n + 1, sizeof *v);
    double *slack = malloc(((size_t)n + 1) * sizeof *slack);
    int *row_at = calloc((size_t)n + 1, sizeof *row_at), *via = calloc((size_t)n + 1, sizeof *via);
    char *visited = malloc((size_t)n + 1);
    int status = HS_E_NOMEM;
    if (!u || !v || !slack || !row_at || !via || !visited) goto done;
    for (int i = 1; i <= n; i++) {
        /* grow an alternating tree from row i through column 0 until a free column */
        row_at[0] = i;
        int column = 0;
        for (int j = 0; j <= n; j++) slack[j] = INFINITY;
        memset(visited, 0, (size_t)n + 1);
        do {
            visited[column] = 1;
            int row = row_at[column], next = 0;
            double delta = INFINITY;
            for (int j = 1; j <= n; j++) {
                if (visited[j]) continue;
                double reduced = cost[(size_t)(row - 1) * n + (j - 1)] - u[row] - v[j];
                if (reduced < slack[j]) {
                    slack[j] = reduced;
                    via[j] = column;
                }
                if (slack[j] < delta) {
                    delta = slack[j];
                    next = j;
                }
            }
            for (int j = 0; j <= n; j++) {
                if (visited[j]) {
                    u[row_at[j]] += delta;
                    v[j] -= delta;
                } else {
                    slack[j] -= delta;
                }
            }
            column = next;
        } while (row_at[column] != 0);
        /* flip the augmenting path back to column 0 */
        do {
            int previous = via[column];
            row_at[column] = row_at[previous];
            column = previous;
        } while (column != 0);
    }
    for (int j = 1; j <= n; j++) column_of[row_at[j] - 1] = j - 1;
    status = HS_OK;
done:
    free(u);
    free(v);
    free(slack);
    free(row_at);
    free(via);
    free(visited);
    return status;
}

double topology_learn_objective(const double *W, const double *shares, int n, int classes, double lambda)
{
    double spread = 0, mixing = 0;
    for (int k = 0; k < classes; k++) {
        double mean = 0;
        for (int i = 0; i < n; i++) mean += shares[(size_t)i * classes + k];
        mean /= n;
        for (int i = 0; i < n; i++) {
            double mixed = 0;
            for (int j = 0; j < n; j++) mixed += W[(size_t)i * n + j] * shares[(size_t)j * classes + k];
            spread += (mixed - mean) * (mixed - mean);
        }
    }
    for (size_t e = 0; e < (size_t)n * n; e++) mixing += (W[e] - 1.0 / n) * (W[e] - 1.0 / n);
    return spread / n + lambda * mixing / n;
}

/* The symmetric vertex from the assignment: partner[2i], partner[2i+1] are agent i's two
 * entries of S (each 1/2; the same agent twice for a fixed point or a matched pair, 1). */
static void learn_vertex(const double *gradient, int n, const int *column_of, int *partner, char *seen)
{
    for (int i = 0; i < n; i++) seen[i] = 0;
    for (int start = 0; start < n; start++) {
        if (seen[start]) continue;
        int length = 0;
        for (int i = start; !seen[i]; i = column_of[i]) {
            seen[i] = 1;
            length++;
        }
        if (length % 2 == 1) { /* fixed point, or (C + C')/2 on an odd cycle */
            for (int i = start, k = 0; k < length; k++, i = column_of[i]) {
                int before = i;
                while (column_of[before] != i) before = column_of[before];
                partner[2 * i] = column_of[i];
                partner[2 * i + 1] = length == 1 ? i : before;
            }
            continue;
        }
        /* even cycle: the matching of its edges 0-1, 2-3, ... or of 1-2, 3-4, ..., the
         * cheaper on the symmetric gradient (the first on a tie) */
        double first = 0, second = 0;
        for (int i = start, k = 0; k < length; k++, i = column_of[i]) {
            if (k % 2 == 0) first += gradient[(size_t)i * n + column_of[i]];
            else second += gradient[(size_t)i * n + column_of[i]];
        }
        int offset = second < first;
        for (int i = start, k = 0; k < length; k++, i = column_of[i])
            if (k % 2 == offset) {
                int j = column_of[i];
                partner[2 * i] = partner[2 * i + 1] = j;
                partner[2 * j] = partner[2 * j + 1] = i;
            }
    }
}

/* W into out's CSR: the nonzero off-diagonal entries of each row, columns ascending. */
static int learn_topology_of(const double *W, int n, Topology *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    size_t links = 0;
    for (size_t e = 0; e < (size_t)n * n; e++) links += W[e] != 0 && e / n != e % n;
    out->offsets = calloc((size_t)n + 1, sizeof *out->offsets);
    out->adj = malloc((links + 1) * sizeof *out->adj);
    out->weights = malloc((links + 1) * sizeof *out->weights);
    out->self_weights = malloc((size_t)n * sizeof *out->self_weights);
    if (!out->offsets || !out->adj || !out->weights || !out->self_weights) {
        topology_free(out);
        return HS_E_NOMEM;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double w = W[(size_t)i * n + j];
            if (j == i) out->self_weights[i] = w;
            else if (w != 0) {
                out->adj[k] = j;
                out->weights[k++] = w;
            }
        }
        out->offsets[i + 1] = k;
    }
    return HS_OK;
}

int topology_learn(const double *shares, int n, int classes, double lambda, int budget, int iterations,
                   Topology *out, double *objective, int *steps)
{
    if (steps) *steps = 0;
    if (n < 1 || classes < 1) return HS_E_INTERNAL;
    size_t nn = (size_t)n * n, nk = (size_t)n * classes;
    double *W = calloc(nn, sizeof *W), *gradient = malloc(nn * sizeof *gradient);
    double *spread = malloc(nk * sizeof *spread);
    double *mean = calloc((size_t)classes, sizeof *mean);
    int *column_of = malloc((size_t)n * sizeof *column_of), *partner = malloc(2 * (size_t)n * sizeof *partner);
    int *degree = calloc((size_t)n, sizeof *degree);
    char *seen = malloc((size_t)n);
    int status = HS_E_NOMEM, taken = 0;
    if (!W || !gradient || !spread || !mean || !column_of || !partner || !degree || !seen) goto done;
    for (int i = 0; i < n; i++) W[(size_t)i * n + i] = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < classes; k++) mean[k] += shares[(size_t)i * classes + k] / n;
    if (objective) objective[0] = topology_learn_objective(W, shares, n, classes, lambda);
    for (; taken < iterations; taken++) {
        /* spread = W Pi - 1 pibar' */
        for (int i = 0; i < n; i++)
            for (int k = 0; k < classes; k++) {
                double mixed = 0;
                for (int j = 0; j < n; j++) mixed += W[(size_t)i * n + j] * shares[(size_t)j * classes + k];
                spread[(size_t)i * classes + k] = mixed - mean[k];
            }
        /* grad g = (2/n)(spread Pi' + lambda (W - 11'/n)), symmetrised */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double dot = 0;
                for (int k = 0; k < classes; k++) dot += spread[(size_t)i * classes + k] * shares[(size_t)j * classes + k];
                gradient[(size_t)i * n + j] = 2.0 / n * (dot + lambda * (W[(size_t)i * n + j] - 1.0 / n));
            }
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                double s = 0.5 * (gradient[(size_t)i * n + j] + gradient[(size_t)j * n + i]);
                gradient[(size_t)i * n + j] = gradient[(size_t)j * n + i] = s;
            }
        if ((status = topology_assignment(gradient, n, column_of)) != HS_OK) goto done;
        learn_vertex(gradient, n, column_of, partner, seen);
        /* exact line search on g((1 - gamma) W + gamma S), a quadratic in gamma:
         * gamma = -(<spread, (S - W) Pi> + lambda <W, S - W>) / (||(S - W) Pi||^2 + lambda ||S - W||^2)
         * (<11'/n, S - W> = 0 for doubly stochastic S and W) */
        double slope = 0, curvature = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < classes; k++) {
                double vertex = 0.5 * (shares[(size_t)partner[2 * i] * classes + k] +
                                       shares[(size_t)partner[2 * i + 1] * classes + k]);
                double mixed = spread[(size_t)i * classes + k] + mean[k];
                slope += spread[(size_t)i * classes + k] * (vertex - mixed);
                curvature += (vertex - mixed) * (vertex - mixed);
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.5 * ((partner[2 * i] == j) + (partner[2 * i + 1] == j));
                double d = s - W[(size_t)i * n + j];
                slope += lambda * W[(size_t)i * n + j] * d;
                curvature += lambda * d * d;
            }
        if (!(curvature > 0) || !(slope < 0)) break; /* no step lowers g */
        double gamma = -slope / curvature;
        if (gamma > 1) gamma = 1;
        /* the budget: the neighbours each agent would have after the step */
        int over = 0;
        for (int i = 0; i < n && !over; i++) {
            int after = gamma < 1 ? degree[i] : 0; /* gamma = 1: W becomes S */
            for (int q = 0; q < 2; q++) {
                int j = partner[2 * i + q];
                int had = gamma < 1 && W[(size_t)i * n + j] != 0;
                if (j != i && !had && (q == 0 || j != partner[2 * i])) after++;
            }
            over = after > budget;
        }
        if (over) break;
        for (size_t e = 0; e < nn; e++) W[e] *= 1 - gamma;
        for (int i = 0; i < n; i++)
            for (int q = 0; q < 2; q++) W[(size_t)i * n + partner[2 * i + q]] += 0.5 * gamma;
        for (int i = 0; i < n; i++) {
            degree[i] = 0;
            for (int j = 0; j < n; j++) degree[i] += j != i && W[(size_t)i * n + j] != 0;
        }
        if (objective) objective[taken + 1] = topology_learn_objective(W, shares, n, classes, lambda);
    }
    status = learn_topology_of(W, n, out);
done:
    if (steps) *steps = taken;
    free(W);
    free(gradient);
    free(spread);
    free(mean);
    free(column_of);
    free(partner);
    free(degree);
    free(seen);
    return status;
}
