/* rowsend.h — ROG's row-granulated partial sends (Guan et al., "ROG: A High Performance
 * and Robust Distributed Training System for Robotic IoT", MICRO 2022): a vector the size
 * of the model's parameters is cut into rows, one per output unit of every layer (the
 * unit's weights and its bias), and each step an agent sends only the rows its link can
 * carry within a time budget, the most important first, under a staleness bound.
 *
 * The rows (RowLayout) come from the [model] spec alone, so timing mode knows them: an
 * MLP's linear layers and the CNN's two convolutions and two linear layers are each one
 * block laid out as weight (OUT, X) then bias (OUT) (models/model.h), so row r of a block
 * is weight[r, :] and bias[r]: X + 1 floats. The ResNet's blocks hold several layers and
 * GroupNorm parameters, which have no such rows: row_layout_of refuses it.
 *
 * What a step sends (rowsend_choose), for an agent allowed A bytes (budget x its link's
 * bandwidth now) at global step t, layer by layer: the layer's share of A is its share of
 * the whole model's row bytes; a row costs 4 (X + 1) bytes of values plus a 4-byte index.
 *   mandatory  the rows r with r mod S == t mod S (S = the staleness bound): whatever the
 *              values, every row is sent at least once every S steps;
 *   k          max(mandatory, min(rows, floor(share / row bytes))) rows in all: the
 *              mandatory ones, then the others by importance (magnitude: the mean |v| of
 *              the row; age: steps since the agent last sent it), ties to the lower index.
 * So the NUMBER of rows and the bytes depend on the budget, the bandwidth and t only, never
 * on the values: train mode's message sizes are timing mode's (train = timing). Which rows
 * go depends on the values. */
#ifndef SIM_STAGES_ROWSEND_H
#define SIM_STAGES_ROWSEND_H

#include "models/model_spec.h"

#include <stddef.h>

enum { ROWSEND_MAGNITUDE = 0, ROWSEND_AGE = 1 };

typedef struct RowLayout {
    int n_layers;
    int rows[MODEL_MAX_BLOCKS];       /* output units of layer b */
    int width[MODEL_MAX_BLOCKS];      /* weights per row (X) */
    size_t offset[MODEL_MAX_BLOCKS];  /* of the layer's weight in the flat vector; its bias
                                       * follows at offset + rows x width */
    int total_rows;
    double bytes;                     /* every row with its index: sum rows (4 (X + 1) + 4) */
} RowLayout;

/* The rows of spec's model (profile: its model_profile). HS_OK, or HS_E_INPUT when the
 * architecture has no rows (ResNet) or a block is not weight + bias. */
int row_layout_of(const ModelSpec *spec, const ModelProfile *profile, RowLayout *out);
/* Bytes of one row of layer b on the wire: its values and its index. */
double row_layout_row_bytes(const RowLayout *layout, int b);

typedef struct RowSend {
    RowLayout layout;
    int n_agents;
    int staleness;          /* S >= 1 */
    int importance;         /* ROWSEND_MAGNITUDE or ROWSEND_AGE */
    long *last_sent;        /* (n_agents x total_rows) global step the agent last sent the row; -1 never */
    unsigned char *chosen;  /* (n_agents x total_rows) 1: in the agent's current message */
    struct RowRank {
        double score;
        int row;
    } *rank;                /* (largest layer's rows) scratch: a layer's rows by importance */
} RowSend;
typedef struct RowRank RowRank;

/* HS_OK or HS_E_NOMEM. rowsend_free accepts a zeroed RowSend. */
int rowsend_init(RowSend *rs, const RowLayout *layout, int n_agents, int staleness, int importance);
void rowsend_free(RowSend *rs);

/* Rows of layer b an agent allowed `allowed` bytes sends at step t (INFINITY: all). */
int rowsend_count(const RowSend *rs, int b, long t, double allowed);
/* Bytes of that agent's message at step t: sum over layers of count x row bytes. */
double rowsend_bytes(const RowSend *rs, long t, double allowed);
/* A message cut at a deadline (ROG's own design; rog's cut = deadline): the agent streams
 * every row, each layer's rows (the mandatory ones first, then by importance) interleaved
 * in proportion to the layer's bytes, so that whatever prefix of A bytes arrives holds
 * rowsend_count(b, t, A) whole rows of layer b. rowsend_floor: the prefix that holds every
 * layer's mandatory rows at step t (max over layers of mandatory x bytes / rows), which
 * the message must deliver whatever the deadline (the staleness bound). */
double rowsend_floor(const RowSend *rs, long t);
/* Picks agent's rows for step t (rowsend_count of each layer) from v (the flat vector it
 * would send; NULL in timing mode, where only the counts matter and nothing is marked),
 * marks them in rowsend_chosen and books them as sent at t. */
void rowsend_choose(RowSend *rs, int agent, long t, double allowed, const float *v);
/* Agent's current message holds no row (a message lost under loss_mode = drop: its rows
 * stay where they were, rowsend_take and rowsend_copy then do nothing for it). The rows
 * stay booked as sent at t: the sender sent them. */
void rowsend_forget(RowSend *rs, int agent);
/* 1 if row `row` (0..total_rows-1, layers in order) is in agent's current message. */
static inline int rowsend_chosen(const RowSend *rs, int agent, int row)
{
    return rs->chosen[(size_t)agent * (size_t)rs->layout.total_rows + (size_t)row];
}
/* Adds the agent's chosen rows of v into sum (a flat vector of the model's size) and
 * zeroes them in v: what was sent leaves the agent's residual. */
void rowsend_take(const RowSend *rs, int agent, float *v, float *sum);
/* Copies the agent's chosen rows of `from` into `to` (flat vectors of the model's size):
 * a ROG pull, the server's rows replacing the worker's. */
void rowsend_copy(const RowSend *rs, int agent, const float *from, float *to);
/* The largest age t - last_sent over every agent and row after step t's choice (train
 * mode: the staleness bound says it is below S). */
long rowsend_max_age(const RowSend *rs, long t);

#endif
