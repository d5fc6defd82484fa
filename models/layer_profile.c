/* layer_profile.c — see layer_profile.h. The file is small (two rows per block at most),
 * read whole and split into lines in a copy. */
#include "models/layer_profile.h"

#include "base/input_file.h"
#include "base/lines.h"
#include "base/numtext.h"
#include "models/resnet.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAYER_PROFILE_MAX_LINE 1024

static const char layer_profile_header[] = "layer,fwd_flops,bwd_flops,fwd_s,bwd_s,flops_per_s";

int layer_profile_expect(const ModelSpec *spec, int batch, LayerProfile *out)
{
    memset(out, 0, sizeof *out);
    ModelProfile p;
    if (batch < 1 || model_profile(spec, &p) != HS_OK || p.n_blocks < 1 || p.n_blocks > MODEL_MAX_BLOCKS)
        return HS_E_INPUT;
    const int L = p.n_blocks;
    out->n_layers = L;
    out->batch = batch;
    for (int b = 0; b < L; b++) {
        if (spec->arch == MODEL_ARCH_CNN)
            snprintf(out->name[b], LAYER_PROFILE_NAME, b < 2 ? "conv%d" : "fc%d", b < 2 ? b + 1 : b - 1);
        else
            snprintf(out->name[b], LAYER_PROFILE_NAME, spec->arch == MODEL_ARCH_MLP ? "fc%d" : "res%d", b + 1);
        out->fwd_flops[b] = batch * p.fwd_flops[b];
        /* the loss and its gradient run between the last forward and the first backward */
        out->bwd_flops[b] = batch * (p.bwd_flops[b] + (b == L - 1 ? p.loss_flops : 0));
    }
    for (int m = 1; m < L; m++) {
        int row = L + m - 1;
        snprintf(out->name[row], LAYER_PROFILE_NAME, "head%d", m);
        out->fwd_flops[row] = batch * p.aux_fwd_flops[m];
        out->bwd_flops[row] = batch * (p.aux_flops[m] - p.aux_fwd_flops[m] + p.loss_flops);
    }
    return HS_OK;
}

void layer_profile_describe(const ModelSpec *s, char *out, size_t size)
{
    int used = 0;
    if (s->arch == MODEL_ARCH_MLP) {
        used = snprintf(out, size, "mlp ");
        for (int i = 0; i < s->n_sizes && used >= 0 && (size_t)used < size; i++)
            used += snprintf(out + used, size - (size_t)used, "%s%d", i ? "-" : "", s->sizes[i]);
    } else if (s->arch == MODEL_ARCH_CNN) {
        snprintf(out, size, "cnn %dx%dx%d conv %d-%d kernel %d hidden %d classes %d", s->in_channels, s->in_height,
                 s->in_width, s->conv_channels[0], s->conv_channels[1], s->kernel, s->hidden, s->classes);
    } else {
        snprintf(out, size, "resnet-%d %dx%dx%d base %d groupnorm %d classes %d", s->depth, s->in_channels,
                 s->in_height, s->in_width, s->base_channels, s->norm_groups, s->classes);
    }
}

/* text with every newline or carriage return as a space */
static void layer_profile_comment(FILE *out, const char *key, const char *text)
{
    fprintf(out, "# %s: ", key);
    for (const char *c = text ? text : ""; *c; c++) fputc(*c == '\n' || *c == '\r' ? ' ' : *c, out);
    fputc('\n', out);
}

void layer_profile_write(FILE *out, const LayerProfile *p, const char *host, const char *command, const char *model,
                         const char *kernels)
{
    fputs("# hetsim layer profile (docs/cost-model.md, \"Measured compute profiles\")\n", out);
    layer_profile_comment(out, "host", host);
    layer_profile_comment(out, "command", command);
    layer_profile_comment(out, "model", model);
    layer_profile_comment(out, "kernels", kernels);
    fprintf(out, "# batch: %d\n%s\n", p->batch, layer_profile_header);
    for (int r = 0; r < layer_profile_rows(p); r++) {
        char f[NUMTEXT_SIZE], b[NUMTEXT_SIZE], fs[NUMTEXT_SIZE], bs[NUMTEXT_SIZE];
        double rate = (p->fwd_flops[r] + p->bwd_flops[r]) / (p->fwd_s[r] + p->bwd_s[r]);
        fprintf(out, "%s,%s,%s,%s,%s,%.4g\n", p->name[r], numtext_double(f, sizeof f, p->fwd_flops[r]),
                numtext_double(b, sizeof b, p->bwd_flops[r]), numtext_double(fs, sizeof fs, p->fwd_s[r]),
                numtext_double(bs, sizeof bs, p->bwd_s[r]), rate);
    }
}

/* A finite number filling the whole field. */
static int layer_profile_number(const char *field, double *out)
{
    if (!*field) return -1;
    char *end;
    *out = strtod(field, &end);
    return *end == '\0' && isfinite(*out) ? 0 : -1;
}

static int layer_profile_close(double found, double expected)
{
    return fabs(found - expected) <= LAYER_PROFILE_FLOPS_TOLERANCE * fabs(expected);
}

/* One data row (row index r of the expected rows in want) into out. */
static int layer_profile_row(const char *path, int line, char *s, const LayerProfile *want, int r, LayerProfile *out,
                             HsDiag *diag)
{
    static const char *const columns[] = {"layer", "fwd_flops", "bwd_flops", "fwd_s", "bwd_s", "flops_per_s"};
    char *field[6];
    for (int c = 0; c < 6; c++)
        if ((field[c] = lines_csv_field(&s)) == NULL)
            return hs_diag_set(diag, HS_E_INPUT, path, line, "missing %s: %d fields, the header has 6", columns[c], c);
    if (s) return hs_diag_set(diag, HS_E_INPUT, path, line, "more fields than the 6 columns of the header");
    if (strcmp(field[0], want->name[r]) != 0)
        return hs_diag_set(diag, HS_E_INPUT, path, line,
                           "layer '%.40s' where '%s' was expected (row %d of the scenario's model, whose rows are "
                           "%s..%s then head1..head%d)",
                           field[0], want->name[r], r + 1, want->name[0], want->name[want->n_layers - 1],
                           want->n_layers - 1);
    snprintf(out->name[r], LAYER_PROFILE_NAME, "%s", want->name[r]);
    double v[4];
    for (int c = 1; c <= 4; c++) {
        if (layer_profile_number(field[c], &v[c - 1]) != 0)
            return hs_diag_set(diag, HS_E_INPUT, path, line, "%s of %s: '%.40s' is not a finite number", columns[c],
                               want->name[r], field[c]);
        if (!(v[c - 1] > 0))
            return hs_diag_set(diag, HS_E_INPUT, path, line, "%s of %s: %.6g must be > 0", columns[c], want->name[r],
                               v[c - 1]);
    }
    double rate;
    if (*field[5] && layer_profile_number(field[5], &rate) != 0)
        return hs_diag_set(diag, HS_E_INPUT, path, line, "flops_per_s of %s: '%.40s' is neither a number nor empty",
                           want->name[r], field[5]);
    const double expected[2] = {want->fwd_flops[r], want->bwd_flops[r]};
    for (int c = 0; c < 2; c++)
        if (!layer_profile_close(v[c], expected[c]))
            return hs_diag_set(diag, HS_E_INPUT, path, line,
                               "%s of %s is %.10g, but the scenario's model has %.10g at batch %d (a profile of "
                               "another model or batch?)",
                               columns[c + 1], want->name[r], v[c], expected[c], want->batch);
    out->fwd_flops[r] = v[0];
    out->bwd_flops[r] = v[1];
    out->fwd_s[r] = v[2];
    out->bwd_s[r] = v[3];
    return HS_OK;
}

/* "# batch: N" (spaces allowed around each part): 1 and *batch, 0 when the comment is
 * another one, -1 when it is a batch line with a bad number. */
static int layer_profile_batch_line(const char *row, long *batch)
{
    const char *s = row;
    while (isspace((unsigned char)*s)) s++;
    if (*s++ != '#') return 0;
    while (isspace((unsigned char)*s)) s++;
    if (strncmp(s, "batch", 5) != 0) return 0;
    s += 5;
    while (isspace((unsigned char)*s)) s++;
    if (*s++ != ':') return 0;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    *batch = strtol(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    return *end == '\0' && *batch >= 1 && *batch <= 1000000000L ? 1 : -1;
}

int layer_profile_parse(const char *path, const char *data, size_t size, const ModelSpec *spec, int batch,
                        LayerProfile *out, HsDiag *diag)
{
    LayerProfile want;
    memset(out, 0, sizeof *out);
    if (layer_profile_expect(spec, batch, &want) != HS_OK)
        return hs_diag_set(diag, HS_E_INPUT, path, 0, "the scenario's [model] does not describe a valid network");
    if (memchr(data, '\0', size)) return hs_diag_set(diag, HS_E_INPUT, path, 0, "holds a NUL byte: not a text file");
    char *text = malloc(size + 1);
    if (!text) return hs_diag_set(diag, HS_E_NOMEM, path, 0, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    const int rows = layer_profile_rows(&want);
    int status = HS_OK, line = 0, batch_line = 0, header_line = 0, n = 0;
    long found_batch = 0;
    char *next = text;
    for (char *row; (row = lines_cut(&next)) != NULL;) {
        line++;
        size_t length = strlen(row);
        if (length && row[length - 1] == '\r') row[--length] = '\0';
        if (length > LAYER_PROFILE_MAX_LINE) {
            status = hs_diag_set(diag, HS_E_INPUT, path, line, "line longer than %d characters", LAYER_PROFILE_MAX_LINE);
            goto done;
        }
        int is_batch = layer_profile_batch_line(row, &found_batch);
        if (is_batch != 0) {
            if (is_batch < 0) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "expected '# batch: N' with N a whole number >= 1");
                goto done;
            }
            if (batch_line) { /* (the header needs one before it: a batch line after it is a second) */
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "a second '# batch:' line (the first is line %d)",
                                     batch_line);
                goto done;
            }
            if (found_batch != batch) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                     "measured at batch %ld, but the scenario's [model] batch is %d (profile it "
                                     "again: hetsim profile SCENARIO)",
                                     found_batch, batch);
                goto done;
            }
            batch_line = line;
            continue;
        }
        char *s = row;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#' || *s == '\0') continue;
        if (!header_line) {
            char *end = s + strlen(s);
            while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
            if (strcmp(s, layer_profile_header) != 0) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line, "expected the header '%s', found '%.60s'",
                                     layer_profile_header, s);
                goto done;
            }
            if (!batch_line) {
                status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                     "the header comes after a '# batch: N' line, and there is none before it");
                goto done;
            }
            header_line = line;
            continue;
        }
        if (n == rows) {
            status = hs_diag_set(diag, HS_E_INPUT, path, line,
                                 "more rows than the scenario's model has: %d blocks and %d heads", want.n_layers,
                                 want.n_layers - 1);
            goto done;
        }
        if ((status = layer_profile_row(path, line, s, &want, n, out, diag)) != HS_OK) goto done;
        n++;
    }
    if (!header_line) {
        status = hs_diag_set(diag, HS_E_INPUT, path, line,
                             "no header: expected '# batch: N', then '%s', then one row per layer",
                             layer_profile_header);
        goto done;
    }
    if (n < rows) {
        status = hs_diag_set(diag, HS_E_INPUT, path, line,
                             "%d rows, but the scenario's model has %d: %d blocks (%s..%s) and %d heads; the first "
                             "missing is %s",
                             n, rows, want.n_layers, want.name[0], want.name[want.n_layers - 1], want.n_layers - 1,
                             want.name[n]);
        goto done;
    }
    out->n_layers = want.n_layers;
    out->batch = batch;
done:
    free(text);
    if (status != HS_OK) memset(out, 0, sizeof *out);
    return status;
}

int layer_profile_read(const char *path, const ModelSpec *spec, int batch, LayerProfile *out, HsDiag *diag)
{
    char *text;
    size_t size;
    memset(out, 0, sizeof *out);
    int status = input_file_read_text(path, LAYER_PROFILE_MAX_BYTES, &text, &size, diag);
    if (status != HS_OK) return status;
    status = layer_profile_parse(path, text, size, spec, batch, out, diag);
    free(text);
    return status;
}

void layer_profile_times(const LayerProfile *p, LayerTimes *out)
{
    memset(out, 0, sizeof *out);
    out->n_layers = p->n_layers;
    for (int b = 0; b < p->n_layers; b++) {
        out->layer_s[b] = p->fwd_s[b] + p->bwd_s[b];
        out->step_s += out->layer_s[b];
    }
    for (int m = 1; m < p->n_layers; m++) {
        int row = p->n_layers + m - 1;
        out->head_s[m] = p->fwd_s[row] + p->bwd_s[row];
    }
}

static double layer_times_through(const LayerTimes *t, int first, int last)
{
    double sum = 0;
    for (int b = first; b <= last; b++) sum += t->layer_s[b];
    return sum;
}

double layer_times_slow_fraction(const LayerTimes *t, int m)
{
    if (m <= 0) return 1.0;
    return (layer_times_through(t, 0, m - 1) + t->head_s[m]) / t->step_s;
}

double layer_times_fast_fraction(const LayerTimes *t, int m)
{
    if (m <= 0) return 0.0;
    return layer_times_through(t, m, t->n_layers - 1) / t->step_s;
}
