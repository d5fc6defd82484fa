/* units.h — numbers with SI suffixes, as written in scenario files.
 * Prefixes are decimal (k = 1e3, M = 1e6, G = 1e9, T = 1e12; "KB" is 1e3 bytes too).
 * Every quantity resolves to SI: FLOP/s, bytes/s, seconds, bytes, W, J, J/B, plain counts. */
#ifndef BASE_UNITS_H
#define BASE_UNITS_H

typedef enum {
    UNIT_PLAIN = 0,  /* a bare number: ratio, count, probability */
    UNIT_COMPUTE,    /* FLOP/s: FLOPS, kFLOPS, MFLOPS, GFLOPS, TFLOPS, FLOP/s, GFLOP/s */
    UNIT_BANDWIDTH,  /* bytes/s: bit/s, kbit/s, Mbit/s, Gbit/s, B/s, kB/s, MB/s, GB/s */
    UNIT_TIME,       /* seconds: us, ms, s, min, h, d */
    UNIT_BYTES,      /* bytes: B, kB, MB, GB */
    UNIT_POWER,      /* watts: uW, mW, W, kW */
    UNIT_ENERGY,     /* joules: mJ, J, kJ, MJ, mWh, Wh, kWh (1 Wh = 3600 J) */
    UNIT_ENERGY_PER_BYTE, /* joules per byte: nJ/B, uJ/B, mJ/B, J/B */
    UNIT_SPEED,      /* a speed relative to a measured profile's host: 0.25x (the x is required) */
} UnitKind;

/* Parses "NUMBER [UNIT]" from text (surrounding spaces allowed; "inf" allowed for
 * bandwidth and time). A bare number is taken in SI base units; a finite number that
 * overflows once converted to them ("1e308 TFLOPS") is an error. Returns 0 and *out, or
 * HS_E_INPUT with a message in why (size why_size) that lists the accepted units. */
int units_parse(const char *text, UnitKind kind, double *out, char *why, int why_size);

/* Name of the base unit for messages ("FLOP/s", "B/s", "s", "B", ""). */
const char *units_base_name(UnitKind kind);

#endif
