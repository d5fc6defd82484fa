/* fuzz_instance.c — libFuzzer target: any bytes as a pairing instance either parse into a
 * problem every solver can pair (and whose result checks) or fail with a message. */
#include "solver/instance.h"

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
    PairingProblem p;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (instance_parse("fuzz.ini", text, &p, &diag) == HS_OK) {
        if (p.n <= 64) {
            PairingResult exact, greedy;
            if (pairing_result_init(&exact, p.n) == HS_OK && pairing_result_init(&greedy, p.n) == HS_OK) {
                if (solver_exact(&p, &exact) != HS_OK || pairing_result_check(&p, &exact) != HS_OK) abort();
                if (solver_greedy(&p, &greedy) != HS_OK || pairing_result_check(&p, &greedy) != HS_OK) abort();
                if (greedy.makespan < exact.makespan * (1 - 1e-9)) abort();
            }
            pairing_result_free(&exact);
            pairing_result_free(&greedy);
        }
        pairing_problem_free(&p);
    } else if (diag.message[0] == '\0') {
        abort();
    }
    free(text);
    return 0;
}
