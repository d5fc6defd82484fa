/* device_profile.h — a per-agent device profile file: one row per agent of measured
 * compute speed, bandwidth and, optionally, latency ([agents] profile = FILE;
 * scripts/fedscale-traces writes them from FedScale's device traces).
 *
 *   # comments start with '#'; blank lines are skipped
 *   agent,compute,bandwidth,latency
 *   0,2.5e9,1.25e6,0.05
 *   1,1 GFLOPS,10 Mbit/s,20 ms
 *
 * The first line that is not blank or a comment is the header: comma-separated column
 * names, in any order, without case: compute (FLOP/s) and bandwidth (bytes/s, both up-
 * and downlink) are required; latency (seconds) is optional; agent, when present, must
 * number the rows 0, 1, 2, ... in order (row k is agent k either way); source is free text
 * (where a row came from, e.g. a FedScale client id) and is not read. Any other column is
 * an error. A value is a number in SI base units or with a unit (base/units.h: `2 GFLOPS`,
 * `10 Mbit/s`, `20 ms`). Every row has every column of the header; compute and bandwidth
 * must be finite and > 0, latency finite and >= 0 (0 is a link without latency). Every
 * error is HS_E_INPUT with "FILE:LINE: ..." naming the column. The file is read through
 * base/input_file.h (a regular file of at most DEVICE_PROFILE_MAX_BYTES). */
#ifndef BASE_DEVICE_PROFILE_H
#define BASE_DEVICE_PROFILE_H

#include "base/hs_error.h"

#define DEVICE_PROFILE_MAX_BYTES (1ull << 30)
#define DEVICE_PROFILE_MAX_LINE 4096

typedef struct DeviceProfile {
    int n_agents;
    double *compute;   /* (n_agents) FLOP/s */
    double *bandwidth; /* (n_agents) bytes/s */
    double *latency;   /* (n_agents) s, or NULL when the file has no latency column */
} DeviceProfile;

/* Reads path into *out (zeroed first; free with device_profile_free). A file with a
 * header and no row is an error. A missing file is HS_E_INPUT too (the scenario named it). */
int device_profile_read(const char *path, DeviceProfile *out, HsDiag *diag);
void device_profile_free(DeviceProfile *profile);

#endif
