/* units.c — suffix tables per quantity kind. Suffix matching is case-sensitive for the
 * prefix letter (m = milli for time, M = mega elsewhere) because "ms" and "Ms" differ. */
#include "base/units.h"
#include "base/hs_error.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct UnitSuffix {
    const char *suffix;
    double factor;
} UnitSuffix;

static const UnitSuffix units_compute[] = {
    {"FLOPS", 1}, {"kFLOPS", 1e3}, {"MFLOPS", 1e6}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12},
    {"FLOP/s", 1}, {"kFLOP/s", 1e3}, {"MFLOP/s", 1e6}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12},
    {NULL, 0}};
static const UnitSuffix units_bandwidth[] = {
    {"bit/s", 0.125}, {"kbit/s", 125}, {"Mbit/s", 1.25e5}, {"Gbit/s", 1.25e8},
    {"B/s", 1}, {"kB/s", 1e3}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9},
    {NULL, 0}};
static const UnitSuffix units_time[] = {
    {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400},
    {NULL, 0}};
static const UnitSuffix units_bytes[] = {
    {"B", 1}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {NULL, 0}};
static const UnitSuffix units_power[] = {
    {"uW", 1e-6}, {"mW", 1e-3}, {"W", 1}, {"kW", 1e3}, {NULL, 0}};
static const UnitSuffix units_energy[] = {
    {"mJ", 1e-3}, {"J", 1}, {"kJ", 1e3}, {"MJ", 1e6}, {"mWh", 3.6}, {"Wh", 3600}, {"kWh", 3.6e6}, {NULL, 0}};
static const UnitSuffix units_energy_per_byte[] = {
    {"nJ/B", 1e-9}, {"uJ/B", 1e-6}, {"mJ/B", 1e-3}, {"J/B", 1}, {NULL, 0}};

static const UnitSuffix units_speed[] = {{"x", 1}, {NULL, 0}};

static const UnitSuffix *units_table(UnitKind kind)
{
    switch (kind) {
    case UNIT_SPEED: return units_speed;
    case UNIT_COMPUTE: return units_compute;
    case UNIT_BANDWIDTH: return units_bandwidth;
    case UNIT_TIME: return units_time;
    case UNIT_BYTES: return units_bytes;
    case UNIT_POWER: return units_power;
    case UNIT_ENERGY: return units_energy;
    case UNIT_ENERGY_PER_BYTE: return units_energy_per_byte;
    default: return NULL;
    }
}

const char *units_base_name(UnitKind kind)
{
    switch (kind) {
    case UNIT_COMPUTE: return "FLOP/s";
    case UNIT_BANDWIDTH: return "B/s";
    case UNIT_TIME: return "s";
    case UNIT_BYTES: return "B";
    case UNIT_POWER: return "W";
    case UNIT_ENERGY: return "J";
    case UNIT_ENERGY_PER_BYTE: return "J/B";
    case UNIT_SPEED: return "x";
    default: return "";
    }
}

static void units_list(const UnitSuffix *table, char *buf, int size)
{
    int used = 0;
    buf[0] = '\0';
    for (const UnitSuffix *u = table; u && u->suffix && used < size; u++)
        used += snprintf(buf + used, (size_t)(size - used), "%s%s", u == table ? "" : ", ", u->suffix);
}

int units_parse(const char *text, UnitKind kind, double *out, char *why, int why_size)
{
    while (isspace((unsigned char)*text)) text++;
    if (*text == '\0') {
        snprintf(why, (size_t)why_size, "expected a number, found nothing");
        return HS_E_INPUT;
    }
    char *end = NULL;
    double value;
    if (strncmp(text, "inf", 3) == 0 && (kind == UNIT_BANDWIDTH || kind == UNIT_TIME)) {
        value = INFINITY;
        end = (char *)text + 3;
    } else {
        if (!(isdigit((unsigned char)text[0]) || text[0] == '.' || text[0] == '-' || text[0] == '+')) {
            snprintf(why, (size_t)why_size, "expected a number, found '%s'", text);
            return HS_E_INPUT;
        }
        value = strtod(text, &end);
        if (end == text || !isfinite(value)) {
            snprintf(why, (size_t)why_size, "expected a number, found '%s'", text);
            return HS_E_INPUT;
        }
    }
    while (isspace((unsigned char)*end)) end++;
    size_t len = strlen(end);
    while (len > 0 && isspace((unsigned char)end[len - 1])) len--;
    if (len == 0 && kind == UNIT_SPEED) {
        /* a bare number here is most likely FLOP/s written out of habit */
        snprintf(why, (size_t)why_size, "'%s' has no x: a speed relative to the profiling host is written 0.25x",
                 text);
        return HS_E_INPUT;
    }
    if (len == 0) {
        *out = value;
        return HS_OK;
    }
    const UnitSuffix *table = units_table(kind);
    for (const UnitSuffix *u = table; u && u->suffix; u++) {
        if (strlen(u->suffix) == len && strncmp(end, u->suffix, len) == 0) {
            /* "1e308 TFLOPS" is finite as written but not in SI: an error, not inf */
            *out = value * u->factor;
            if (isinf(*out) && !isinf(value)) {
                snprintf(why, (size_t)why_size, "'%s' is beyond the largest number a double holds", text);
                return HS_E_INPUT;
            }
            return HS_OK;
        }
    }
    char accepted[200];
    units_list(table, accepted, sizeof accepted);
    if (table == NULL)
        snprintf(why, (size_t)why_size, "'%.*s' after the number: a plain number is expected here", (int)len, end);
    else
        snprintf(why, (size_t)why_size, "unknown unit '%.*s' (use %s)", (int)len, end, accepted);
    return HS_E_INPUT;
}
