/* trainer.c — placeholder until models/ lands: train mode is refused with a clear
 * message rather than silently timing only. */
#include "sim/trainer.h"
#include "sim/engine.h"

int trainer_create(struct Engine *e, Trainer **out)
{
    *out = NULL;
    return hs_diag_set(e->diag, HS_E_INPUT, e->sc->file, 0,
                       "[run] mode = train is not available in this build yet; use mode = timing");
}

void trainer_free(Trainer *t)
{
    (void)t;
}

int trainer_round_end(Trainer *t, struct Engine *e)
{
    (void)t;
    (void)e;
    return 0;
}

int trainer_setup_shared(struct Engine *e) { (void)e; return 0; }
int trainer_shared_gradients(struct Engine *e) { (void)e; return 0; }
int trainer_shared_apply(struct Engine *e) { (void)e; return 0; }
int trainer_setup_local(struct Engine *e, int n_buffers) { (void)e; (void)n_buffers; return 0; }
size_t trainer_param_count(const struct Engine *e) { (void)e; return 0; }
float *trainer_params(struct Engine *e, int agent) { (void)e; (void)agent; return NULL; }
float *trainer_buffer(struct Engine *e, int agent, int which) { (void)e; (void)agent; (void)which; return NULL; }
int trainer_gradient(struct Engine *e, int agent, float *grad) { (void)e; (void)agent; (void)grad; return 0; }
int trainer_optimizer_step(struct Engine *e, int agent, const float *grad) { (void)e; (void)agent; (void)grad; return 0; }
int trainer_local_step(struct Engine *e, int agent) { (void)e; (void)agent; return 0; }
int trainer_average(struct Engine *e, const int *members, int n_members, int by_samples)
{
    (void)e; (void)members; (void)n_members; (void)by_samples;
    return 0;
}
double trainer_learning_rate(const struct Engine *e) { (void)e; return 0; }
int trainer_split_begin(struct Engine *e, int slow, int split) { (void)e; (void)slow; (void)split; return 0; }
int trainer_split_bottom_step(struct Engine *e, int slow, int split) { (void)e; (void)slow; (void)split; return 0; }
int trainer_split_top_step(struct Engine *e, int slow, int split) { (void)e; (void)slow; (void)split; return 0; }
int trainer_split_end(struct Engine *e, int slow, int split) { (void)e; (void)slow; (void)split; return 0; }
int trainer_average_split(struct Engine *e, const int *splits) { (void)e; (void)splits; return 0; }
