/* compress.h — sparsifying compressors with error feedback and the size of what they put
 * on the wire ([compression]); the ring all-gather that carries the compressed vectors
 * is a collective of the kernel (sim/kernel/collective.h).
 *
 * A Compressor holds, per agent, what its scheme needs between messages (a random
 * stream, DCT's threshold); the feedback state (EF21's g_i, EControl's h_i and e_i) lives
 * in vectors the caller owns (trainer buffers), so methods keep their memory in one place.
 * Workload: n up to a few million floats, one compression per agent and step; selection
 * is O(n) expected (a three-way quickselect on the magnitudes), never a full sort.
 *
 * Schemes (C below), all on the first n entries of a vector:
 *   topk    the k = ceil(ratio n) largest magnitudes; ties go to the lower index, so
 *           exactly k entries are kept and the result is deterministic.
 *   randk   k entries drawn uniformly without replacement from the agent's own stream
 *           (seed, agent, method purpose). Unscaled — the contractive compressor
 *           E|C(x) - x|^2 = (1 - k/n)|x|^2 that EF21 assumes, not the unbiased n/k version.
 *   dct     Dynamic Communication Thresholding (Gupta et al., KDD 2021): every `refresh`
 *           compressions the agent sets its threshold to the k-th largest magnitude of the
 *           vector at hand; every compression (including that one) sends the entries with
 *           |x| >= threshold (and x != 0). The count varies from message to message. The
 *           paper thresholds per layer and keeps the residual as error feedback; here one
 *           threshold covers the whole vector and the feedback is [compression] feedback.
 *   qsgd, sign  quantizers, every entry kept at a few bits: sim/stages/quantize.h.
 *   slimdp  Slim-DP (Sun et al., AAMAS 2018): k entries, of which round((1 - explore) k)
 *           are the largest magnitudes ("significant") and the rest are drawn uniformly
 *           from the other entries (exploration) from the agent's stream. The paper keeps
 *           its significant set for several iterations; here it is re-chosen every message.
 *
 * Feedback (v = the vector the agent would send uncompressed, message = what it sends,
 * contribution = what the receivers add into the average for this agent):
 *   none      message = C(v);                      contribution = message
 *   ef21      (Richtarik, Sokolov, Fatkhullin 2021) message = C(v - g_i); g_i += message;
 *             contribution = g_i
 *   econtrol  (Gao, Islamov, Stich 2023, Algorithm 1) message = C(eta e_i + v - h_i);
 *             e_i += v - h_i - message, with h_i BEFORE its update; h_i += message;
 *             contribution = h_i (= h_i^t + Delta_i^t, which the paper's server steps with).
 *             METHODS.md writes the e update after the h update, which would subtract
 *             Delta twice; the paper's order is used.
 *   ef        classic error feedback / error accumulation (Seide et al. 2014, "1-bit SGD";
 *             Stich, Cordonnier, Jaggi 2018, "Sparsified SGD with memory"):
 *             message = C(e_i + v); e_i <- e_i + v - message; contribution = message.
 *             Stich et al. accumulate lr-scaled steps (m + gamma g); here e_i is in the
 *             units of v (as Seide et al. and DGC's code carry it), so with a decaying
 *             [model] schedule an entry held back is applied at the later, smaller lr.
 *   dgc       Deep Gradient Compression (Lin, Han, Mao, Wang, Dally, ICLR 2018), on top of
 *             ef's accumulation: local gradient clipping (the agent's gradient is scaled
 *             to L2 norm <= clip / sqrt(N), compress_dgc_clip), momentum correction (the
 *             agent keeps the velocity u_i <- mu u_i + g and accumulates u_i, not g, into
 *             e_i; compress_worker_momentum with wd = 0), momentum factor masking (u_i is
 *             zeroed where the message sent e_i, compress_dgc_mask) and warm-up of the
 *             sparsity (compress_begin_round). The methods compose these (sync.c,
 *             localsgd.c), since what is accumulated differs (gradients, model deltas).
 * Momentum: with [compression] momentum = worker (sync only) v is not the raw gradient
 * but the agent's own heavy-ball vector (compress_worker_momentum below), so EF21's g_i
 * tracks a slowly varying vector instead of raw batch gradients (EF21-SGDM).
 * Start: by default (warm_start = 0) the state starts at 0 and the first message is C(v).
 * With warm_start = 1 an agent's first message is its dense vector and g_i = h_i = v,
 * e_i = 0, as the EF21 authors' code (g_i^0 = grad f_i(x^0)) and EControl's Algorithm 1
 * (h_i^0 = g_i^0) start; it costs 4 n bytes once. Measured on Fashion-MNIST over three
 * epochs it hurts (the first, largest gradient lingers in g_i for many steps, since
 * each step corrects only k of n entries), hence the default.
 *
 * Wire size of a message with `kept` entries out of n: the cheapest of values plus 4-byte
 * indices (8 kept), values plus a bitmap (4 kept + ceil(n/8)), and the dense vector (4 n). */
#ifndef SIM_COMPRESS_H
#define SIM_COMPRESS_H

#include "sim/scenario/scenario.h"

#include <stddef.h>
#include <stdint.h>

typedef struct Compressor Compressor;

/* Entries a message of n keeps: ceil(ratio n), at least 1, at most n. */
size_t compress_keep(double ratio, size_t n);
/* Bytes of a message keeping `kept` of n entries (see above). */
double compress_wire_bytes(size_t n, size_t kept);

/* A compressor for vectors of n floats and n_agents agents; random streams derive from
 * seed. Returns HS_OK or HS_E_NOMEM. Free with compress_free (accepts NULL). */
int compress_create(const CompressionSpec *spec, uint64_t seed, int n_agents, size_t n, Compressor **out);
void compress_free(Compressor *c);
size_t compress_length(const Compressor *c);
/* Bytes of agent's last message (compress_feedback's, or the one compress_expected_bytes
 * counted), which kept `kept` entries: compress_wire_bytes for the sparsifiers, the
 * quantizers' fixed size (sim/stages/quantize.h) for qsgd and sign, 4 n for a warm start's
 * dense first message. */
double compress_message_bytes(const Compressor *c, int agent, size_t kept);
/* Bytes of agent's next message when its values are not known (timing mode): k entries,
 * or the dense vector for a warm start's first message; counts the message. DCT's real
 * sizes depend on the values, so its timing-mode runs assume k per message. */
double compress_expected_bytes(Compressor *c, int agent);

/* out = C(in) for agent: kept entries copied, zeros elsewhere (in and out of n floats,
 * must not overlap). Returns the number of entries kept. Advances the agent's stream and
 * DCT step count. */
size_t compress_apply(Compressor *c, int agent, const float *in, float *out);

/* One message of agent with the spec's feedback: v is the uncompressed vector; h (EF21's
 * g_i or EControl's h_i; ef's and dgc's accumulated error e_i) and e (EControl's e_i) are
 * the agent's state, updated in place (NULL when the feedback does not use them); message
 * receives C(...) (or v itself for a warm start's first message). Afterwards the agent's
 * contribution is h (ef21, econtrol) or message (none, ef, dgc). dgc's clipping, momentum
 * and masking are the caller's (see above): here it accumulates like ef. Returns entries
 * sent (n for a dense message). */
size_t compress_feedback(Compressor *c, int agent, const float *v, float *h, float *e, float *message);
/* [compression] momentum = worker (sync): the [model] heavy ball moved to an agent, before
 * compression (EF21-SGDM, Fatkhullin, Tyurin, Richtarik, NeurIPS 2023). With
 * a = grad + wd x: u <- mu u + a; out = u, or a + mu u with Nesterov. The same float
 * expressions as models/optim.c, so dense it differs from heavy ball on the mean only in
 * the order of the sums. u (state) and out are of d floats; x and grad are read. */
void compress_worker_momentum(float *u, float *out, const float *x, const float *grad, size_t d, double momentum,
                              double weight_decay, int nesterov);
/* Feedback state vectors a method must provide per agent: 0, 1 or 2 (dgc: e_i and u_i). */
int compress_state_vectors(const CompressionSpec *spec);
/* 1 when the receivers add the message itself (none, ef, dgc), 0 when they add the state
 * h (ef21, econtrol). */
int compress_contributes_message(const CompressionSpec *spec);

/* DGC's warm-up of the sparsity, as the authors' code (DGCCompressor.warmup_compress_ratio)
 * does it: in round r < warmup_epochs the density is max(ratio, q^(r+1)) with
 * q = ratio^(1/(warmup_epochs+1)), then ratio. (The paper lists 75 %, 93.75 %, 98.4375 %,
 * 99.6 % sparsity over 4 epochs, i.e. q = 1/4 and a final 99.9 %; the code's geometric
 * q ends exactly at ratio instead.) Rounds are the methods' rounds, which are global
 * epochs for sync and localsgd. No effect unless feedback = dgc and warmup_epochs > 0. */
void compress_begin_round(Compressor *c, int round);
/* The density a round uses (ratio outside the warm-up). */
double compress_round_density(const CompressionSpec *spec, int round);
/* DGC's local gradient clipping: g (d floats) is scaled so that |g|_2 <= clip / sqrt(n_agents)
 * (the paper scales the global threshold by N^(-1/2), the sum of N independent local
 * gradients then having about the global norm); clip = 0 does nothing. */
void compress_dgc_clip(float *g, size_t d, double clip, int n_agents);
/* DGC's momentum factor masking: u[j] = 0 where message[j] != 0. (The paper masks the
 * indices sent; an index sent with the value exactly 0 keeps its momentum here.) */
void compress_dgc_mask(float *u, const float *message, size_t d);

/* For tests: the k-th largest (1-based) of a[0..n-1], reordering a. */
float compress_select_largest(float *a, size_t n, size_t k);

#endif
