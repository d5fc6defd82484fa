/* rowsend.c — ROG's row-granulated partial sends: the rows of a model, how many of them
 * an agent's budget carries, and which (rowsend.h). O(rows log rows) per agent and step
 * (a sort per layer); the model's vectors are walked once per choice. */
#include "sim/stages/rowsend.h"

#include "base/hs_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int row_layout_of(const ModelSpec *spec, const ModelProfile *profile, RowLayout *out)
{
    memset(out, 0, sizeof *out);
    int units[MODEL_MAX_BLOCKS];
    if (spec->arch == MODEL_ARCH_MLP) {
        for (int b = 0; b + 1 < spec->n_sizes; b++) units[b] = spec->sizes[b + 1];
    } else if (spec->arch == MODEL_ARCH_CNN) {
        units[0] = spec->conv_channels[0];
        units[1] = spec->conv_channels[1];
        units[2] = spec->hidden;
        units[3] = spec->classes;
    } else {
        return HS_E_INPUT;
    }
    size_t offset = 0;
    out->n_layers = profile->n_blocks;
    for (int b = 0; b < profile->n_blocks; b++) {
        /* a block is weight (OUT, X) then bias (OUT): OUT (X + 1) parameters */
        double per_row = profile->params[b] / units[b];
        if (units[b] <= 0 || per_row != floor(per_row) || per_row < 2) return HS_E_INPUT;
        out->rows[b] = units[b];
        out->width[b] = (int)per_row - 1;
        out->offset[b] = offset;
        offset += (size_t)profile->params[b];
        out->total_rows += units[b];
        out->bytes += units[b] * row_layout_row_bytes(out, b);
    }
    return HS_OK;
}

double row_layout_row_bytes(const RowLayout *layout, int b)
{
    return 4.0 * (layout->width[b] + 1) + 4.0;
}

int rowsend_init(RowSend *rs, const RowLayout *layout, int n_agents, int staleness, int importance)
{
    memset(rs, 0, sizeof *rs);
    rs->layout = *layout;
    rs->n_agents = n_agents;
    rs->staleness = staleness;
    rs->importance = importance;
    size_t cells = (size_t)n_agents * (size_t)layout->total_rows;
    int widest = 1;
    for (int b = 0; b < layout->n_layers; b++)
        if (layout->rows[b] > widest) widest = layout->rows[b];
    rs->last_sent = malloc(cells * sizeof *rs->last_sent);
    rs->chosen = calloc(cells, 1);
    rs->rank = malloc((size_t)widest * sizeof *rs->rank);
    if (!rs->last_sent || !rs->chosen || !rs->rank) return HS_E_NOMEM;
    for (size_t c = 0; c < cells; c++) rs->last_sent[c] = -1;
    return HS_OK;
}

void rowsend_free(RowSend *rs)
{
    if (rs == NULL) return;
    free(rs->last_sent);
    free(rs->chosen);
    free(rs->rank);
    memset(rs, 0, sizeof *rs);
}

/* Rows r of a layer with r mod S == t mod S. */
static int rowsend_mandatory(const RowSend *rs, int b, long t)
{
    int rows = rs->layout.rows[b], s = rs->staleness, phase = (int)(t % s);
    return phase < rows ? (rows - 1 - phase) / s + 1 : 0;
}

int rowsend_count(const RowSend *rs, int b, long t, double allowed)
{
    const RowLayout *l = &rs->layout;
    int rows = l->rows[b], mandatory = rowsend_mandatory(rs, b, t);
    if (!isfinite(allowed)) return rows;
    double row_bytes = row_layout_row_bytes(l, b);
    double share = allowed * (rows * row_bytes / l->bytes);
    double fit = floor(share / row_bytes);
    int k = fit >= rows ? rows : (int)fit;
    return k > mandatory ? k : mandatory;
}

double rowsend_bytes(const RowSend *rs, long t, double allowed)
{
    double bytes = 0;
    for (int b = 0; b < rs->layout.n_layers; b++)
        bytes += rowsend_count(rs, b, t, allowed) * row_layout_row_bytes(&rs->layout, b);
    return bytes;
}

double rowsend_floor(const RowSend *rs, long t)
{
    const RowLayout *l = &rs->layout;
    double floor_bytes = 0;
    for (int b = 0; b < l->n_layers; b++) {
        double need = rowsend_mandatory(rs, b, t) * l->bytes / l->rows[b];
        if (need > floor_bytes) floor_bytes = need;
    }
    return floor_bytes;
}

static int rowsend_by_score(const void *a, const void *b)
{
    const RowRank *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1; /* the larger score first */
    return (x->row > y->row) - (x->row < y->row);                  /* ties: the lower row */
}

void rowsend_choose(RowSend *rs, int agent, long t, double allowed, const float *v)
{
    const RowLayout *l = &rs->layout;
    if (v == NULL) return; /* timing mode: the counts are all that is needed */
    size_t base = (size_t)agent * (size_t)l->total_rows;
    unsigned char *chosen = rs->chosen + base;
    long *last = rs->last_sent + base;
    memset(chosen, 0, (size_t)l->total_rows);
    int first = 0; /* the layer's first row in the agent's table */
    for (int b = 0; b < l->n_layers; b++) {
        int rows = l->rows[b], width = l->width[b], k = rowsend_count(rs, b, t, allowed), n = 0;
        int phase = (int)(t % rs->staleness);
        for (int r = 0; r < rows; r++) {
            if (r % rs->staleness == phase) {
                chosen[first + r] = 1;
                k--;
                continue;
            }
            double score;
            if (rs->importance == ROWSEND_AGE) {
                score = (double)(t - last[first + r]);
            } else {
                const float *w = v + l->offset[b] + (size_t)r * (size_t)width;
                double sum = fabsf(v[l->offset[b] + (size_t)rows * (size_t)width + (size_t)r]);
                for (int j = 0; j < width; j++) sum += fabsf(w[j]);
                score = sum / (width + 1);
            }
            rs->rank[n++] = (RowRank){.score = score, .row = r};
        }
        qsort(rs->rank, (size_t)n, sizeof *rs->rank, rowsend_by_score);
        for (int q = 0; q < k && q < n; q++) chosen[first + rs->rank[q].row] = 1;
        for (int r = 0; r < rows; r++)
            if (chosen[first + r]) last[first + r] = t;
        first += rows;
    }
}

void rowsend_forget(RowSend *rs, int agent)
{
    memset(rs->chosen + (size_t)agent * (size_t)rs->layout.total_rows, 0, (size_t)rs->layout.total_rows);
}

/* Calls visit for each row chosen for agent: the row's weights are [at, at + width), its
 * bias at bias. */
typedef void (*RowVisit)(size_t at, int width, size_t bias, void *ctx);

static void rowsend_each_chosen(const RowSend *rs, int agent, RowVisit visit, void *ctx)
{
    const RowLayout *l = &rs->layout;
    const unsigned char *chosen = rs->chosen + (size_t)agent * (size_t)l->total_rows;
    int first = 0;
    for (int b = 0; b < l->n_layers; b++) {
        int rows = l->rows[b], width = l->width[b];
        size_t bias = l->offset[b] + (size_t)rows * (size_t)width;
        for (int r = 0; r < rows; r++)
            if (chosen[first + r]) visit(l->offset[b] + (size_t)r * (size_t)width, width, bias + (size_t)r, ctx);
        first += rows;
    }
}

typedef struct RowTake {
    float *v, *sum;
} RowTake;

static void rowsend_take_row(size_t at, int width, size_t bias, void *ctx)
{
    RowTake *t = ctx;
    for (int j = 0; j < width; j++) {
        t->sum[at + (size_t)j] += t->v[at + (size_t)j];
        t->v[at + (size_t)j] = 0.0f;
    }
    t->sum[bias] += t->v[bias];
    t->v[bias] = 0.0f;
}

void rowsend_take(const RowSend *rs, int agent, float *v, float *sum)
{
    RowTake t = {v, sum};
    rowsend_each_chosen(rs, agent, rowsend_take_row, &t);
}

typedef struct RowCopy {
    const float *from;
    float *to;
} RowCopy;

static void rowsend_copy_row(size_t at, int width, size_t bias, void *ctx)
{
    RowCopy *c = ctx;
    memcpy(c->to + at, c->from + at, (size_t)width * sizeof *c->to);
    c->to[bias] = c->from[bias];
}

void rowsend_copy(const RowSend *rs, int agent, const float *from, float *to)
{
    RowCopy c = {from, to};
    rowsend_each_chosen(rs, agent, rowsend_copy_row, &c);
}

long rowsend_max_age(const RowSend *rs, long t)
{
    long worst = 0;
    size_t cells = (size_t)rs->n_agents * (size_t)rs->layout.total_rows;
    for (size_t c = 0; c < cells; c++)
        if (t - rs->last_sent[c] > worst) worst = t - rs->last_sent[c];
    return worst;
}
