/* fuzz_scenario.c — libFuzzer target: any bytes as a scenario file must resolve or fail
 * with a FILE:LINE message, never crash, hang or leak. A resolved scenario must write a
 * config that resolves again to the same text (the runs.config contract). */
#include "sim/scenario.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    static Scenario sc, again;
    if (inidoc_load_string("fuzz.ini", text, &doc, &diag) == HS_OK) {
        if (scenario_resolve(&doc, &sc, &diag) == HS_OK) {
            char *config = scenario_config_string(&sc);
            IniDoc doc2;
            HsDiag diag2;
            hs_diag_clear(&diag2);
            if (config && inidoc_load_string("fuzz.ini", config, &doc2, &diag2) == HS_OK) {
                if (scenario_resolve(&doc2, &again, &diag2) != HS_OK) abort();
                char *config2 = scenario_config_string(&again);
                if (config2 && strcmp(config, config2) != 0) abort();
                free(config2);
            } else if (config) {
                abort();
            }
            inidoc_free(&doc2);
            free(config);
        } else if (diag.message[0] == '\0') {
            abort(); /* every failure explains itself */
        }
    }
    inidoc_free(&doc);
    free(text);
    return 0;
}
