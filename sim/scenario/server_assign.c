/* server_assign.c — see server_assign.h. */
#include "sim/scenario/server_assign.h"

#include "base/lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int server_assign_load(const char *path, int n_agents, int n_servers, int *server_of, HsDiag *diag)
{
    LineText text;
    int status = lines_open(path, &text, diag);
    if (status != HS_OK) return status;
    int *first_line = calloc((size_t)(n_agents > 0 ? n_agents : 1), sizeof *first_line); /* 0: not seen yet */
    if (first_line == NULL) {
        lines_free(&text);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    char line[512];
    int lineno = 0;
    while (lines_each(&text, line, (int)sizeof line, &status, diag)) {
        lineno = text.lineno;
        const char *p = line;
        if (lines_rest_blank(p)) continue;
        long agent, server;
        const char *agent_text, *server_text;
        int agent_len, server_len;
        if (!lines_parse_index(&p, &agent, &agent_text, &agent_len) ||
            !lines_parse_index(&p, &server, &server_text, &server_len) || !lines_rest_blank(p)) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "expected an agent and its server 'I S'");
        } else if (agent < 0 || agent >= n_agents) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "agent index %.*s is outside 0..%d", agent_len,
                                 agent_text, n_agents - 1);
        } else if (server < 0 || server >= n_servers) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "server index %.*s is outside 0..%d", server_len,
                                 server_text, n_servers - 1);
        } else if (first_line[agent] > 0) {
            status = hs_diag_set(diag, HS_E_INPUT, path, lineno, "agent %ld is assigned twice (first at line %d)",
                                 agent, first_line[agent]);
        } else {
            first_line[agent] = lineno;
            server_of[agent] = (int)server;
        }
    }
    lines_free(&text);
    for (int i = 0; status == HS_OK && i < n_agents; i++)
        if (first_line[i] == 0)
            status = hs_diag_set(diag, HS_E_INPUT, path, 0, "agent %d has no line (every agent needs its server)", i);
    free(first_line);
    return status;
}
