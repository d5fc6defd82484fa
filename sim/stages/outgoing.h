/* outgoing.h — the outgoing-vector stage point: whatever a method sends (a gradient, a
 * model's change since a point both sides hold), and what it costs on the wire.
 *   plain          the dense vector: 4 d bytes, the receivers add the vector itself;
 *   [compression]  the scheme and its feedback (sim/stages/compress.h) with their state
 *                  per sender: EF21's g_i, EControl's h_i and e_i, ef's and dgc's e_i,
 *                  DGC's velocity u_i or the worker momentum; the message's bytes are its
 *                  encoded size (compress_wire_bytes), and the receivers add the
 *                  contribution (the message, or the mirrored state h_i);
 *   [privacy] clip = update
 *                  the change is clipped to norm C before it leaves (outgoing_clip);
 *   [byzantine]    attackers replace what they would send (outgoing_attack), from the
 *                  honest vectors of the same exchange (ALIE's and IPM's moments).
 * State lives here, one set per sender; d is the vector's length (the model's blocks).
 * In timing mode there are no vectors: outgoing_gradient and outgoing_change only count
 * the message and its expected size (compress_expected_bytes). */
#ifndef SIM_STAGES_OUTGOING_H
#define SIM_STAGES_OUTGOING_H

#include "sim/stages/byzantine.h"
#include "sim/stages/compress.h"
#include "sim/stages/privacy.h"
#include "sim/stages/stage.h"

typedef struct Outgoing {
    StageContext cx;
    size_t d;
    int n;
    Compressor *compressor;  /* NULL: dense */
    CompressionSpec spec;
    int worker_momentum;     /* [compression] momentum = worker */
    int dgc;                 /* feedback = dgc */
    float **h;               /* (n) ef21's g_i, econtrol's h_i; ef's and dgc's accumulated e_i */
    float **e;               /* (n) econtrol's e_i */
    float **u;               /* (n) dgc's velocity or the worker momentum */
    float **message;         /* (n) each sender's last message; or one scratch shared by all */
    int keep_messages;
    float *sent;             /* (d) worker momentum and dgc: the vector compressed */
    double *bytes;           /* (n) the size of each sender's last message */
    Privacy *privacy;        /* clip = update (borrowed) */
    Byzantine *byzantine;    /* attackers (borrowed) */
} Outgoing;

/* keep_messages: each sender's message stays readable until its next one (receivers that
 * combine later); otherwise one scratch serves every sender (combined at once).
 * HS_E_NOMEM with a message in diag. outgoing_free accepts a zeroed Outgoing. */
int outgoing_init(Outgoing *o, const StageContext *cx, size_t d, int keep_messages, Privacy *privacy,
                  Byzantine *byzantine);
void outgoing_free(Outgoing *o);
void outgoing_begin_round(Outgoing *o, int round);
/* 1 when [compression] is on. */
static inline int outgoing_compresses(const Outgoing *o)
{
    return o->compressor != NULL;
}

/* The gradient agent computed at its parameters x leaves (every agent holds the same x:
 * sync): with momentum = worker the agent's heavy ball, with dgc DGC's clipping and
 * momentum correction, then the compression and masking. grad may be clipped in place.
 * Returns the contribution receivers add (NULL in timing mode); its size in bytes is
 * outgoing_bytes(o, agent). */
const float *outgoing_gradient(Outgoing *o, int agent, const float *x, float *grad);
/* The change agent made since the point both sides hold (a model delta) leaves. Returns
 * the contribution (NULL in timing mode). */
const float *outgoing_change(Outgoing *o, int agent, const float *change);
/* CHOCO-style difference gossip (Koloskova, Stich, Jaggi 2019): agent sends
 * q = C(x - hat), the difference to the public copy hat every receiver holds, and
 * next = hat + q becomes the copy (d floats each; NULL in timing mode: only counted). The
 * compressed difference is its own error feedback: no feedback state here. Needs
 * keep_messages = 0 (one scratch message serves every sender). */
void outgoing_difference(Outgoing *o, int agent, const float *x, const float *hat, float *next);
/* The size of agent's last message: its encoded size, 4 d when dense. */
static inline double outgoing_bytes(const Outgoing *o, int agent)
{
    return o->bytes[agent];
}
/* dgc: agent's velocity u_i (the local steps' momentum correction), NULL otherwise. */
float *outgoing_velocity(Outgoing *o, int agent);

/* clip = update: x <- start + clip(x - start, C) (sim/stages/privacy.h); nothing without. */
void outgoing_clip(Outgoing *o, float *x, const float *start);
/* clip = update where the update is the vector itself (a gradient, a change): v (d) is
 * scaled to norm <= C. */
void outgoing_clip_vector(Outgoing *o, float *v);
/* The same where the start is the model each member held when its period began (the
 * trainer's models: privacy_period_begin keeps them, privacy_client_done clips). */
int outgoing_period_begin(Outgoing *o, const int *members, int K);
int outgoing_clip_own(Outgoing *o, int agent);

/* Byzantine senders among who[0..K) replace vectors[k] by their attack in outs[k] (outs[k]
 * may be vectors[k]); honest entries are not touched. Nothing without attackers. */
void outgoing_attack(Outgoing *o, const int *who, int K, const float *const *vectors, float *const *outs);

#endif
