/* cli_features.h — `hetsim methods --features [--markdown | --list]`: the method x feature
 * table from the methods' stage declarations (sim/scenario/features.h). */
#ifndef CLI_FEATURES_H
#define CLI_FEATURES_H

#include <stdio.h>

typedef enum { CLI_FEATURES_TEXT, CLI_FEATURES_MARKDOWN, CLI_FEATURES_LIST } CliFeaturesForm;

void cli_features(CliFeaturesForm form, FILE *out);

#endif
