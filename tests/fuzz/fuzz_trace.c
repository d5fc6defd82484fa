/* fuzz_trace.c — libFuzzer target: any bytes as a trace file either load into step
 * functions whose queries are consistent, or fail with a message. */
#include "sim/kernel/trace.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (path[0] == '\0') snprintf(path, sizeof path, "/tmp/hetsim-fuzz-trace-%d.csv", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (f == NULL) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    static const char *const groups[] = {"default", "slow"};
    static const int group_of[] = {0, 1, 1};
    Trace t;
    HsDiag diag;
    hs_diag_clear(&diag);
    if (trace_load(path, UNIT_PLAIN, 3, group_of, groups, 2, NULL, &t, &diag) == HS_OK) {
        for (int i = 0; i < 3; i++) {
            const TraceSeries *s = &t.series[i];
            for (int k = 0; k < s->n; k++) (void)trace_value(s, s->times[k]);
            double offline = trace_offline_between(s, 0, 100);
            if (offline < 0 || offline > 100 + 1e-9) abort();
            double end = trace_advance_online(s, 0, 1);
            if (!(end >= 1) && !isinf(end)) abort();
        }
        trace_free(&t);
    } else if (diag.message[0] == '\0') {
        abort();
    }
    return 0;
}
