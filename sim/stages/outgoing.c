/* outgoing.c — the outgoing-vector stage (outgoing.h): compression with its state per
 * sender, update clipping, attacks. */
#include "sim/stages/outgoing.h"

#include "models/model.h"

#include <stdlib.h>
#include <string.h>

static float **outgoing_vectors(int n, size_t d)
{
    float **v = calloc((size_t)n, sizeof *v);
    for (int i = 0; v && i < n; i++)
        if ((v[i] = calloc(d, sizeof **v)) == NULL) {
            for (int k = 0; k < i; k++) free(v[k]);
            free(v);
            return NULL;
        }
    return v;
}

static void outgoing_vectors_free(float **v, int n)
{
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

int outgoing_init(Outgoing *o, const StageContext *cx, size_t d, int keep_messages, Privacy *privacy,
                  Byzantine *byzantine)
{
    memset(o, 0, sizeof *o);
    o->cx = *cx;
    o->d = d;
    o->n = cx->world->n;
    o->privacy = privacy;
    o->byzantine = byzantine;
    o->keep_messages = keep_messages;
    o->bytes = calloc((size_t)o->n, sizeof *o->bytes);
    if (o->bytes == NULL) goto nomem;
    for (int i = 0; i < o->n; i++) o->bytes[i] = 4.0 * (double)d;
    const CompressionSpec *c = &cx->sc->compression;
    if (!c->present || c->scheme == COMPRESS_NONE) return HS_OK;
    o->spec = *c;
    o->worker_momentum = c->worker_momentum;
    o->dgc = c->feedback == FEEDBACK_DGC;
    if (compress_create(c, cx->sc->seed, o->n, d, &o->compressor) != HS_OK) goto nomem;
    if (cx->trainer == NULL) return HS_OK;
    int states = compress_state_vectors(c);
    /* the contributions (messages, h_i) a receiver may step with whole: as long as a
     * parameter vector, the heads' range after the d entries staying 0 */
    size_t room = trainer_param_count(cx->trainer) > d ? trainer_param_count(cx->trainer) : d;
    /* dgc's two state vectors are e_i and u_i */
    if (states >= 1 && (o->h = outgoing_vectors(o->n, room)) == NULL) goto nomem;
    if (states >= 2 && !o->dgc && (o->e = outgoing_vectors(o->n, d)) == NULL) goto nomem;
    if ((o->dgc || o->worker_momentum) && (o->u = outgoing_vectors(o->n, d)) == NULL) goto nomem;
    if ((o->sent = malloc(d * sizeof *o->sent)) == NULL) goto nomem;
    o->message = keep_messages ? outgoing_vectors(o->n, room) : outgoing_vectors(1, room);
    if (o->message == NULL) goto nomem;
    return HS_OK;
nomem:
    return hs_diag_set(cx->diag, HS_E_NOMEM, NULL, 0, "out of memory for compression");
}

void outgoing_free(Outgoing *o)
{
    compress_free(o->compressor);
    outgoing_vectors_free(o->h, o->n);
    outgoing_vectors_free(o->e, o->n);
    outgoing_vectors_free(o->u, o->n);
    outgoing_vectors_free(o->message, o->keep_messages ? o->n : 1);
    free(o->sent);
    free(o->bytes);
    memset(o, 0, sizeof *o);
}

void outgoing_begin_round(Outgoing *o, int round)
{
    if (o->compressor) compress_begin_round(o->compressor, round);
}

float *outgoing_velocity(Outgoing *o, int agent)
{
    return o->dgc && o->u ? o->u[agent] : NULL;
}

/* The message of v with the feedback; its size; the contribution. */
static const float *outgoing_compress(Outgoing *o, int agent, const float *v)
{
    float *message = o->message[o->keep_messages ? agent : 0];
    float *h = o->h ? o->h[agent] : NULL;
    size_t kept = compress_feedback(o->compressor, agent, v, h, o->e ? o->e[agent] : NULL, message);
    if (o->dgc && o->spec.masking) compress_dgc_mask(o->u[agent], message, o->d);
    o->bytes[agent] = compress_message_bytes(o->compressor, agent, kept);
    return compress_contributes_message(&o->spec) ? message : h;
}

const float *outgoing_gradient(Outgoing *o, int agent, const float *x, float *grad)
{
    if (o->compressor == NULL) return grad;
    if (o->cx.trainer == NULL) {
        o->bytes[agent] = compress_expected_bytes(o->compressor, agent);
        return NULL;
    }
    const OptimSpec *opt = &o->cx.sc->optim;
    const float *v = grad;
    if (o->worker_momentum) {
        compress_worker_momentum(o->u[agent], o->sent, x, grad, o->d, opt->momentum, opt->weight_decay, opt->nesterov);
        v = o->sent;
    }
    if (o->dgc) {
        /* momentum correction: e_i accumulates the velocity; the weight decay stays out of
         * what is sent (the receivers apply it locally, sim/methods/sync.c) */
        int heavy = opt->kind == OPTIM_MOMENTUM;
        compress_dgc_clip(grad, o->d, o->spec.clip, o->n);
        compress_worker_momentum(o->u[agent], o->sent, x, grad, o->d, heavy ? opt->momentum : 0, 0,
                                 heavy && opt->nesterov);
        v = o->sent;
    }
    return outgoing_compress(o, agent, v);
}

const float *outgoing_change(Outgoing *o, int agent, const float *change)
{
    if (o->compressor == NULL) return change;
    if (o->cx.trainer == NULL) {
        o->bytes[agent] = compress_expected_bytes(o->compressor, agent);
        return NULL;
    }
    return outgoing_compress(o, agent, change);
}

void outgoing_difference(Outgoing *o, int agent, const float *x, const float *hat, float *next)
{
    if (o->cx.trainer == NULL) {
        o->bytes[agent] = compress_expected_bytes(o->compressor, agent);
        return;
    }
    float *difference = o->message[0], *message = o->sent;
    for (size_t p = 0; p < o->d; p++) difference[p] = x[p] - hat[p];
    size_t kept = compress_apply(o->compressor, agent, difference, message);
    for (size_t p = 0; p < o->d; p++) next[p] = hat[p] + message[p];
    o->bytes[agent] = compress_message_bytes(o->compressor, agent, kept);
}

void outgoing_clip(Outgoing *o, float *x, const float *start)
{
    privacy_client_done_from(o->privacy, x, start);
}

void outgoing_clip_vector(Outgoing *o, float *v)
{
    if (o->privacy && v) privacy_clip_vector(o->privacy, v, o->d);
}

int outgoing_period_begin(Outgoing *o, const int *members, int K)
{
    int status = privacy_period_begin(o->privacy, o->cx.trainer, members, K);
    return status == HS_OK ? HS_OK : hs_diag_set(o->cx.diag, status, NULL, 0, "out of memory for [privacy]");
}

int outgoing_clip_own(Outgoing *o, int agent)
{
    return privacy_client_done(o->privacy, o->cx.trainer, agent);
}

void outgoing_attack(Outgoing *o, const int *who, int K, const float *const *vectors, float *const *outs)
{
    if (o->byzantine) byzantine_attack_among(o->byzantine, who, K, vectors, outs);
}
