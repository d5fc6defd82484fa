/* device_profile.c — see device_profile.h. The file is read whole (a profile of a million
 * agents is about 40 MB) and split into lines in place. */
#include "base/device_profile.h"

#include "base/input_file.h"
#include "base/lines.h"
#include "base/names.h"
#include "base/units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { COLUMN_AGENT, COLUMN_COMPUTE, COLUMN_BANDWIDTH, COLUMN_LATENCY, COLUMN_SOURCE, N_COLUMNS };

static const char *const device_profile_columns[N_COLUMNS + 1] = {"agent", "compute", "bandwidth", "latency",
                                                                  "source", NULL};
static const UnitKind device_profile_units[N_COLUMNS] = {UNIT_PLAIN, UNIT_COMPUTE, UNIT_BANDWIDTH, UNIT_TIME,
                                                         UNIT_PLAIN};

void device_profile_free(DeviceProfile *profile)
{
    if (!profile) return;
    free(profile->compute);
    free(profile->bandwidth);
    free(profile->latency);
    profile->compute = profile->bandwidth = profile->latency = NULL;
    profile->n_agents = 0;
}

int device_profile_read(const char *path, DeviceProfile *out, HsDiag *diag)
{
    memset(out, 0, sizeof *out);
    char *text;
    size_t size;
    int status = input_file_read_all(path, DEVICE_PROFILE_MAX_BYTES, HS_E_INPUT, &text, &size, diag);
    if (status != HS_OK) return status;
    if (memchr(text, '\0', size)) {
        free(text);
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "holds a NUL byte: not a text file");
    }
    int order[N_COLUMNS + 1], n_columns = 0, have[N_COLUMNS] = {0};
    size_t capacity = 0;
    int line = 0, header_line = 0;
    char *next = text;
    for (char *row; (row = lines_cut(&next)) != NULL;) {
        line++;
        if (strlen(row) > DEVICE_PROFILE_MAX_LINE) {
            status = hs_diag_set(diag, HS_E_INPUT, path, line, "line longer than %d characters", DEVICE_PROFILE_MAX_LINE);
            goto fail;
        }
        char *hash = strchr(row, '#');
        if (hash) *hash = '\0';
        char *s = row;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        if (!header_line) {
            header_line = line;
            char *field;
            while ((field = lines_csv_field(&s)) != NULL) {
                int c = 0;
                while (c < N_COLUMNS && strcasecmp(field, device_profile_columns[c]) != 0) c++;
                if (c == N_COLUMNS) {
                    char hint[96];
                    names_suggest(field, device_profile_columns, hint, sizeof hint);
                    status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                         "unknown column '%s'%s (columns: agent, compute, bandwidth, latency, source)",
                                         field, hint);
                    goto fail;
                }
                if (have[c]) {
                    status = hs_diag_set(diag, HS_E_INPUT, path, line, "column '%s' given twice",
                                         device_profile_columns[c]);
                    goto fail;
                }
                have[c] = 1;
                order[n_columns++] = c;
            }
            if (!have[COLUMN_COMPUTE] || !have[COLUMN_BANDWIDTH]) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                     "the header must name the columns compute and bandwidth (and may name agent, "
                                     "latency and source); found no '%s'",
                                     have[COLUMN_COMPUTE] ? "bandwidth" : "compute");
                goto fail;
            }
            continue;
        }
        int k = out->n_agents;
        if ((size_t)k == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            if (capacity > 0x7fffffff) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "more than 2^31 agents");
                goto fail;
            }
            double *compute = realloc(out->compute, capacity * sizeof(double));
            if (compute) out->compute = compute;
            double *bandwidth = compute ? realloc(out->bandwidth, capacity * sizeof(double)) : NULL;
            if (bandwidth) out->bandwidth = bandwidth;
            double *latency = bandwidth && have[COLUMN_LATENCY] ? realloc(out->latency, capacity * sizeof(double))
                                                                : NULL;
            if (latency) out->latency = latency;
            if (!compute || !bandwidth || (have[COLUMN_LATENCY] && !latency)) {
                status = hs_diag_set(diag, HS_E_NOMEM, path, line, "out of memory");
                goto fail;
            }
        }
        for (int i = 0; i < n_columns; i++) {
            int c = order[i];
            const char *name = device_profile_columns[c];
            char *field = lines_csv_field(&s);
            if (!field) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "missing %s: %d fields, the header (line %d) has %d",
                                     name, i, header_line, n_columns);
                goto fail;
            }
            if (c == COLUMN_SOURCE) continue;
            if (!*field) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "missing %s (an empty field)", name);
                goto fail;
            }
            double value;
            char why[200];
            if (units_parse(field, device_profile_units[c], &value, why, sizeof why) != HS_OK) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "%s '%s': %s", name, field, why);
                goto fail;
            }
            if (c == COLUMN_AGENT) {
                if (value != k) {
                    status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                         "agent '%s' where agent %d was expected (rows number the agents 0, 1, 2, ... "
                                         "in order)",
                                         field, k);
                    goto fail;
                }
            } else if (c == COLUMN_LATENCY) {
                if (!(value >= 0) || !isfinite(value)) {
                    status = hs_diag_set(diag, HS_E_INPUT, path, line, "latency '%s' must be finite and >= 0", field);
                    goto fail;
                }
                out->latency[k] = value;
            } else {
                if (!(value > 0) || !isfinite(value)) {
                    status = hs_diag_set(diag, HS_E_INPUT, path, line, "%s '%s' must be finite and > 0", name, field);
                    goto fail;
                }
                (c == COLUMN_COMPUTE ? out->compute : out->bandwidth)[k] = value;
            }
        }
        if (s) {
            status = hs_diag_set(diag, HS_E_INPUT, path, line, "more fields than the %d columns of the header (line %d)",
                                 n_columns, header_line);
            goto fail;
        }
        out->n_agents++;
    }
    if (!header_line) {
        status = hs_diag_set(diag, HS_E_INPUT, path, 0,
                             "empty: expected a header (agent,compute,bandwidth,latency) and one row per agent");
        goto fail;
    }
    if (out->n_agents == 0) {
        status = hs_diag_set(diag, HS_E_INPUT, path, header_line, "a header and no agent row");
        goto fail;
    }
    free(text);
    return HS_OK;
fail:
    free(text);
    device_profile_free(out);
    return status;
}
