/* fuzz_assign.c — libFuzzer target: any bytes as a FILE.assign either load into an
 * assignment of every agent to a server in range, or fail with a message. */
#include "sim/scenario/server_assign.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (path[0] == '\0') snprintf(path, sizeof path, "/tmp/hetsim-fuzz-assign-%d.assign", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (f == NULL) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    enum { AGENTS = 5, SERVERS = 3 };
    int server_of[AGENTS];
    HsDiag diag;
    hs_diag_clear(&diag);
    if (server_assign_load(path, AGENTS, SERVERS, server_of, &diag) == HS_OK) {
        for (int i = 0; i < AGENTS; i++)
            if (server_of[i] < 0 || server_of[i] >= SERVERS) abort();
    } else if (diag.message[0] == '\0') {
        abort();
    }
    return 0;
}
