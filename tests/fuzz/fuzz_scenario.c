/* fuzz_scenario.c — libFuzzer target: any bytes as a scenario file must resolve or fail
 * with a FILE:LINE message, never crash, hang or leak. Lines that start with "--set "
 * are taken out of the file and applied as overrides, in order, as the CLI does. A
 * resolved scenario must write a config that resolves again to the same text (the
 * runs.config contract). */
#include "sim/scenario/scenario.h"

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
    /* split the overrides off: they stay in text, NUL-terminated, listed in sets */
    const char *sets[64];
    int n_sets = 0;
    char *file = malloc(size + 1);
    if (file == NULL) {
        free(text);
        return 0;
    }
    size_t used = 0;
    for (char *line = text; line != NULL;) {
        char *eol = strchr(line, '\n');
        if (eol) *eol = '\0';
        if (strncmp(line, "--set ", 6) == 0 && n_sets < 64) {
            sets[n_sets++] = line + 6;
        } else {
            size_t len = strlen(line);
            memcpy(file + used, line, len);
            used += len;
            if (eol) file[used++] = '\n';
        }
        line = eol ? eol + 1 : NULL;
    }
    file[used] = '\0';
    IniDoc doc;
    HsDiag diag;
    hs_diag_clear(&diag);
    static Scenario sc, again;
    int status = inidoc_load_string("fuzz.ini", file, &doc, &diag);
    for (int i = 0; status == HS_OK && i < n_sets; i++) status = inidoc_apply_set(&doc, sets[i], &diag);
    if (status != HS_OK && diag.message[0] == '\0') abort();
    if (status == HS_OK) {
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
    free(file);
    free(text);
    return 0;
}
