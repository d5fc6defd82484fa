/* roles.h — the agents' roles drawn with the world: who is Byzantine ([byzantine] count,
 * AgentProfile.byzantine). What an attacker sends is sim/stages/byzantine.h. */
#ifndef SIM_WORLD_ROLES_H
#define SIM_WORLD_ROLES_H

#include "sim/scenario/scenario.h"

/* flags[0..n-1] = 1 for the Byzantine agents of sc (all 0 without [byzantine]); called
 * once per run, by world_build.
 * Returns HS_OK or HS_E_NOMEM. */
int byzantine_pick(const Scenario *sc, int n, int *flags);

#endif
