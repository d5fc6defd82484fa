/* radio.c — each kept agent's sending, receiving and computing spans of the round, and
 * the measure of each direction outside the computations (radio.h). */
#include "sim/kernel/radio.h"

#include "base/hs_error.h"
#include "base/grow.h"

#include <stdlib.h>

typedef struct RadioSpan {
    double start, end;
} RadioSpan;

typedef struct RadioList {
    RadioSpan *span;
    int n, cap;
} RadioList;

typedef struct RadioNode {
    RadioList way[3];          /* RADIO_TX, RADIO_RX, RADIO_COMPUTE */
    NetworkPeriodic *rings[2]; /* closed-form hops, RADIO_TX and RADIO_RX */
    int n_rings[2], cap_rings[2];
} RadioNode;

struct Radio {
    int n;
    RadioNode **node;   /* (n) NULL for a node not kept */
    RadioSpan *scratch; /* the close's unions, reused */
    int cap_scratch;
};

Radio *radio_create(int n_nodes, const unsigned char *split)
{
    Radio *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    r->n = n_nodes;
    r->node = calloc((size_t)n_nodes, sizeof *r->node);
    if (r->node == NULL) {
        free(r);
        return NULL;
    }
    for (int i = 0; i < n_nodes; i++)
        if (split[i] && (r->node[i] = calloc(1, sizeof *r->node[i])) == NULL) {
            radio_free(r);
            return NULL;
        }
    return r;
}

void radio_free(Radio *r)
{
    if (r == NULL) return;
    for (int i = 0; i < r->n; i++) {
        RadioNode *x = r->node[i];
        if (x == NULL) continue;
        for (int w = 0; w < 3; w++) free(x->way[w].span);
        free(x->rings[0]);
        free(x->rings[1]);
        free(x);
    }
    free(r->node);
    free(r->scratch);
    free(r);
}

int radio_kept(const Radio *r, int node)
{
    return r != NULL && node < r->n && r->node[node] != NULL;
}

/* Room for item n: base/grow.h from 4 items. */
static int radio_grow(void **array, int *cap, int n, size_t size)
{
    return hs_grow(array, cap, n, size, 4);
}

int radio_span(Radio *r, int node, int way, double start, double end)
{
    if (!radio_kept(r, node) || !(end > start)) return HS_OK;
    RadioList *l = &r->node[node]->way[way];
    if (radio_grow((void **)&l->span, &l->cap, l->n, sizeof *l->span) != HS_OK) return HS_E_NOMEM;
    l->span[l->n++] = (RadioSpan){start, end};
    return HS_OK;
}

int radio_periodic(Radio *r, int node, int way, const NetworkPeriodic *p)
{
    if (!radio_kept(r, node)) return HS_OK;
    RadioNode *x = r->node[node];
    if (radio_grow((void **)&x->rings[way], &x->cap_rings[way], x->n_rings[way], sizeof *x->rings[way]) != HS_OK)
        return HS_E_NOMEM;
    x->rings[way][x->n_rings[way]++] = *p;
    return HS_OK;
}

static int radio_cmp(const void *a, const void *b)
{
    const RadioSpan *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* The union of l's spans within [from, to], in order, into out (room for l->n). */
static int radio_union(RadioList *l, double from, double to, RadioSpan *out)
{
    if (l->n > 1) qsort(l->span, (size_t)l->n, sizeof *l->span, radio_cmp); /* none: span is NULL */
    int m = 0;
    for (int i = 0; i < l->n; i++) {
        double s = l->span[i].start > from ? l->span[i].start : from;
        double e = l->span[i].end < to ? l->span[i].end : to;
        if (!(e > s)) continue;
        if (m > 0 && s <= out[m - 1].end) {
            if (e > out[m - 1].end) out[m - 1].end = e;
        } else {
            out[m++] = (RadioSpan){s, e};
        }
    }
    return m;
}

/* |a \ b| for two unions in order. */
static double radio_outside(const RadioSpan *a, int na, const RadioSpan *b, int nb)
{
    double total = 0;
    int j = 0;
    for (int i = 0; i < na; i++) {
        double cursor = a[i].start;
        while (j < nb && b[j].end <= cursor) j++;
        for (int k = j; k < nb && b[k].start < a[i].end; k++) {
            if (b[k].start > cursor) total += b[k].start - cursor;
            if (b[k].end > cursor) cursor = b[k].end;
        }
        if (a[i].end > cursor) total += a[i].end - cursor;
    }
    return total;
}

/* Keeps the spans that reach past `to` (a computation or a fifo transmission queued past
 * the round's end), whole: the next round clips them at its start. */
static void radio_keep_late(RadioList *l, double to)
{
    int kept = 0;
    for (int i = 0; i < l->n; i++)
        if (l->span[i].end > to) l->span[kept++] = l->span[i];
    l->n = kept;
}

int radio_close(Radio *r, int node, double from, double to, double out[2])
{
    out[0] = out[1] = 0;
    if (!radio_kept(r, node)) return HS_OK;
    RadioNode *x = r->node[node];
    int most = x->way[RADIO_COMPUTE].n;
    for (int w = 0; w < 2; w++)
        if (x->way[w].n > most) most = x->way[w].n;
    if (radio_grow((void **)&r->scratch, &r->cap_scratch, 2 * most + 1, sizeof *r->scratch) != HS_OK)
        return HS_E_NOMEM;
    RadioSpan *compute = r->scratch, *way = r->scratch + most;
    int nc = radio_union(&x->way[RADIO_COMPUTE], from, to, compute);
    for (int w = 0; w < 2; w++) {
        int nw = radio_union(&x->way[w], from, to, way);
        double measure = radio_outside(way, nw, compute, nc);
        for (int k = 0; k < x->n_rings[w]; k++) {
            const NetworkPeriodic *p = &x->rings[w][k];
            measure += periodic_measure(p, from, to);
            for (int c = 0; c < nc; c++) measure -= periodic_measure(p, compute[c].start, compute[c].end);
        }
        out[w] = measure > 0 ? measure : 0;
        radio_keep_late(&x->way[w], to);
        x->n_rings[w] = 0;
    }
    radio_keep_late(&x->way[RADIO_COMPUTE], to);
    return HS_OK;
}
