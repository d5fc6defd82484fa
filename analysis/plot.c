/* plot.c — `hetsim plot` (analysis/plot.h): chooses the runs, then runs each figure —
 * the writers of plot_outcomes.c, plot_accuracy.c, plot_timeline.c and plot_comdml.c
 * write a data file and a gnuplot script body into the private folder of
 * analysis/gnuplot.c, once per format (the PNG body replaces characters no installed
 * font has), then gnuplot draws every format from one script and the images move into
 * the output folder. Figures never put names into data files: every text (series,
 * agents' groups, run names, tic labels) goes into the script through gnuplot's quoting,
 * data files hold numbers only. */
#include "analysis/plot.h"

#include "analysis/dbread.h"
#include "analysis/gnuplot.h"
#include "analysis/plot_internal.h"
#include "analysis/runset.h"
#include "base/hs_error.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- running a figure ---- */

static const struct { const char *name; PlotFigureWrite *write; } plot_figures[] = {
    { "straggler", plot_figure_straggler },
    { "accuracy", plot_figure_accuracy },
    { "timeline", plot_figure_timeline },
    { "pairing", plot_figure_pairing },
    { "predicted", plot_figure_predicted },
    { "speedup", plot_figure_speedup },
};

static const struct { unsigned flag; const char *extension; const char *terminal; } plot_image_formats[] = {
    { PLOT_PNG, "png", "pngcairo noenhanced font 'sans,10'" },
    { PLOT_SVG, "svg", "svg noenhanced font 'sans,11' background rgb 'white'" },
};

static char *plot_join_path(const char *folder, const char *name, const char *extension)
{
    size_t length = strlen(folder);
    int slash = length > 0 && folder[length - 1] != '/';
    size_t size = length + strlen(name) + strlen(extension) + 3;
    char *path = malloc(size);
    if (path != NULL)
        snprintf(path, size, "%s%s%s%s%s", folder, slash ? "/" : "", name,
                 extension[0] ? "." : "", extension);
    return path;
}

/* Moves from to to; across filesystems by a copy to a hidden name and a rename. */
static int plot_move_file(const char *from, const char *to, HsDiag *diag)
{
    if (rename(from, to) == 0) return HS_OK;
    if (errno != EXDEV)
        return hs_diag_set(diag, HS_E_IO, to, 0, "cannot write: %s", strerror(errno));
    size_t size = strlen(to) + 16;
    char *temporary = malloc(size);
    if (temporary == NULL) return plot_nomem(diag);
    snprintf(temporary, size, "%s.partial", to);
    int status = HS_OK;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(temporary, "wb") : NULL;
    if (in == NULL || out == NULL) {
        status = hs_diag_set(diag, HS_E_IO, in ? temporary : from, 0, "cannot open: %s",
                             strerror(errno));
    } else {
        char buffer[65536];
        size_t got;
        while ((got = fread(buffer, 1, sizeof buffer, in)) > 0)
            if (fwrite(buffer, 1, got, out) != got) break;
        if (ferror(in) || ferror(out))
            status = hs_diag_set(diag, HS_E_IO, temporary, 0, "cannot write: %s", strerror(errno));
    }
    if (in) fclose(in);
    if (out && fclose(out) != 0 && status == HS_OK)
        status = hs_diag_set(diag, HS_E_IO, temporary, 0, "cannot write: %s", strerror(errno));
    if (status == HS_OK && rename(temporary, to) != 0)
        status = hs_diag_set(diag, HS_E_IO, to, 0, "cannot write: %s", strerror(errno));
    if (status != HS_OK) unlink(temporary);
    free(temporary);
    return status;
}

/* Writes figure index's data and script (the writer runs once per format: labels for
 * PNG avoid characters no font draws), runs gnuplot and moves the images to the output
 * folder. A writer's skip is a note, not an error. */
static int plot_run_figure(Plot *plot, int index, HsDiag *diag)
{
    const char *name = plot_figures[index].name;
    char *data_path = plot_join_path(plot->gnuplot.folder, name, "dat");
    char *script_path = plot_join_path(plot->gnuplot.folder, name, "gp");
    char *body_text = NULL;
    size_t body_size = 0;
    FILE *data = NULL, *body = NULL, *script = NULL;
    int status = HS_OK, passes = 0;
    plot->note[0] = '\0';
    if (data_path == NULL || script_path == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    script = fopen(script_path, "w");
    if (script == NULL) {
        status = hs_diag_set(diag, HS_E_IO, script_path, 0, "cannot write: %s", strerror(errno));
        goto done;
    }
    fputs("set encoding utf8\n", script);
    for (size_t f = 0; f < sizeof plot_image_formats / sizeof plot_image_formats[0]; f++) {
        if (!(plot->formats & plot_image_formats[f].flag)) continue;
        PlotCanvas canvas = { 1000, 600 };
        plot->raster = plot_image_formats[f].flag == PLOT_PNG;
        plot->quiet = passes++ > 0;
        data = fopen(data_path, "w");  /* each pass writes the same numbers */
        body = open_memstream(&body_text, &body_size);
        if (data == NULL || body == NULL) {
            status = hs_diag_set(diag, HS_E_IO, data_path, 0, "cannot write: %s", strerror(errno));
            goto done;
        }
        status = plot_figures[index].write(plot, data_path, data, body, &canvas, diag);
        int data_failed = fclose(data) != 0;
        data = NULL;
        int body_failed = fclose(body) != 0;
        body = NULL;
        if (status == PLOT_SKIP) {
            fprintf(plot->err, "hetsim plot: skipped %s: %s\n", name, plot->note);
            status = HS_OK;
            goto done;
        }
        if (status != HS_OK) goto done;
        if (data_failed || body_failed) {
            status = hs_diag_set(diag, HS_E_IO, data_path, 0, "cannot write the plot data");
            goto done;
        }
        char *image = plot_join_path(plot->gnuplot.folder, name, plot_image_formats[f].extension);
        if (image == NULL) {
            status = plot_nomem(diag);
            goto done;
        }
        fprintf(script, "reset\nset terminal %s size %d,%d\nset output ", plot_image_formats[f].terminal,
                canvas.width, canvas.height);
        plot_quote_path(script, image);
        fputc('\n', script);
        fwrite(body_text, 1, body_size, script);
        fputs("unset output\n", script);
        free(image);
        free(body_text);
        body_text = NULL;
        body_size = 0;
    }
    int script_failed = fclose(script) != 0;
    script = NULL;
    if (script_failed) {
        status = hs_diag_set(diag, HS_E_IO, script_path, 0, "cannot write the gnuplot script");
        goto done;
    }
    status = gnuplot_run(&plot->gnuplot, script_path, plot->err, diag);
    if (status != HS_OK) goto done;
    for (size_t f = 0; f < sizeof plot_image_formats / sizeof plot_image_formats[0] && status == HS_OK; f++) {
        if (!(plot->formats & plot_image_formats[f].flag)) continue;
        char *image = plot_join_path(plot->gnuplot.folder, name, plot_image_formats[f].extension);
        char *target = plot_join_path(plot->out_dir, name, plot_image_formats[f].extension);
        if (image == NULL || target == NULL) status = plot_nomem(diag);
        else if ((status = plot_move_file(image, target, diag)) == HS_OK) {
            fprintf(plot->out, "%s\n", target);
            fflush(plot->out);
        }
        free(image);
        free(target);
    }
done:
    if (data) fclose(data);
    if (body) fclose(body);
    if (script) fclose(script);
    free(body_text);
    free(data_path);
    free(script_path);
    return status;
}

/* mkdir -p: every missing folder of path. */
static int plot_make_folders(const char *path, HsDiag *diag)
{
    char *copy = strdup(path);
    if (copy == NULL) return plot_nomem(diag);
    int status = HS_OK;
    for (char *p = copy + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
            status = hs_diag_set(diag, HS_E_IO, copy, 0, "cannot make the output folder: %s",
                                 strerror(errno));
            break;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    struct stat st;
    if (status == HS_OK && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        status = hs_diag_set(diag, HS_E_IO, path, 0, "the output folder is not a folder");
    free(copy);
    return status;
}

/* ---- choosing the runs ---- */

static void plot_describe_group(Plot *plot)
{
    const RunSet *set = plot->set;
    const RunGroup *group = &set->groups[plot->group];
    const char *name = NULL;
    int same = 1;
    for (int i = 0; i < set->run_count; i++) {
        if (set->points[set->runs[i].point_index].group != plot->group) continue;
        if (name == NULL) name = set->runs[i].name;
        else if (strcmp(name, set->runs[i].name) != 0) same = 0;
    }
    if (group->sweep[0] != '\0')
        snprintf(plot->title, sizeof plot->title, "%s%ssweep %s", same && name ? name : "",
                 same && name ? ", " : "", group->sweep);
    else if (same && name != NULL)
        snprintf(plot->title, sizeof plot->title, "%s (runs outside any sweep)", name);
    else
        snprintf(plot->title, sizeof plot->title, "runs outside any sweep");
}

static int plot_choose_runs(Plot *plot, HsDiag *diag)
{
    const PlotOptions *options = plot->options;
    const RunSet *set = plot->set;
    const RunFacts *asked = NULL;
    if (options->have_run) {
        for (int i = 0; i < set->run_count && asked == NULL; i++)
            if (set->runs[i].id == options->run_id) asked = &set->runs[i];
        if (asked == NULL)
            return hs_diag_set(diag, HS_E_INPUT, plot->db_path, 0, "no run with id %" PRId64,
                               options->run_id);
    }
    plot->group = -1;
    if (options->sweep != NULL) {
        for (int g = 0; g < set->group_count && plot->group < 0; g++)
            if (set->groups[g].sweep[0] != '\0' && strcmp(set->groups[g].sweep, options->sweep) == 0)
                plot->group = g;
        if (plot->group < 0)
            return hs_diag_set(diag, HS_E_INPUT, plot->db_path, 0, "no run of sweep '%s'",
                               options->sweep);
    } else if (asked != NULL) {
        plot->group = set->points[asked->point_index].group;
    } else {
        plot->group = 0;
        for (int g = 1; g < set->group_count; g++)
            if (set->groups[g].last_run > set->groups[plot->group].last_run) plot->group = g;
        if (set->group_count > 1)
            fprintf(plot->err, "hetsim plot: %s holds %d sweeps or sets of runs; plotting the "
                               "latest%s%s (choose with --sweep ID)\n",
                    plot->db_path, set->group_count, set->groups[plot->group].sweep[0] ? ", " : "",
                    set->groups[plot->group].sweep);
    }
    plot_describe_group(plot);
    /* the per-run figures */
    plot->run = asked;
    for (int i = set->run_count - 1; i >= 0 && plot->run == NULL; i--)
        if (set->points[set->runs[i].point_index].group == plot->group &&
            isfinite(set->runs[i].makespan_s))
            plot->run = &set->runs[i];  /* the latest with rounds */
    for (int i = set->run_count - 1; i >= 0 && plot->run == NULL; i--)
        if (set->points[set->runs[i].point_index].group == plot->group) plot->run = &set->runs[i];
    plot->comdml = NULL;
    if (asked != NULL) {
        if (asked->pairings > 0) plot->comdml = asked;
        else
            snprintf(plot->comdml_missing, sizeof plot->comdml_missing,
                     "run %" PRId64 " (%s) has no pairings: not a ComDML run", asked->id, asked->method);
    } else {
        for (int i = set->run_count - 1; i >= 0 && plot->comdml == NULL; i--)
            if (set->points[set->runs[i].point_index].group == plot->group && set->runs[i].pairings > 0)
                plot->comdml = &set->runs[i];
        if (plot->comdml == NULL)
            snprintf(plot->comdml_missing, sizeof plot->comdml_missing,
                     "no ComDML run with pairings in %s", plot->title);
    }
    return HS_OK;
}

int plot_write(const PlotOptions *options, FILE *out, FILE *err, HsDiag *diag)
{
    Plot plot;
    memset(&plot, 0, sizeof plot);
    plot.options = options;
    plot.db_path = options->db_path;
    plot.out_dir = options->out_dir ? options->out_dir : PLOT_DEFAULT_DIR;
    plot.formats = options->formats ? options->formats : PLOT_PNG | PLOT_SVG;
    plot.out = out;
    plot.err = err;
    int status = dbread_open(options->db_path, &plot.db, diag);
    if (status != HS_OK) goto done;
    status = runset_load(plot.db, options->db_path, NULL, &plot.set, diag);
    if (status != HS_OK) goto done;
    if (plot.set->run_count == 0 && !options->have_run && options->sweep == NULL) {
        fprintf(err, "hetsim plot: %s holds no runs: nothing to plot\n", options->db_path);
        goto done;
    }
    if ((status = plot_choose_runs(&plot, diag)) != HS_OK) goto done;
    if (plot_index_styles(&plot) != HS_OK) {
        status = plot_nomem(diag);
        goto done;
    }
    if ((status = gnuplot_open(&plot.gnuplot, options->gnuplot, diag)) != HS_OK) goto done;
    if ((status = plot_make_folders(plot.out_dir, diag)) != HS_OK) goto done;
    for (size_t f = 0; f < sizeof plot_figures / sizeof plot_figures[0] && status == HS_OK; f++)
        status = plot_run_figure(&plot, (int)f, diag);
done:
    gnuplot_close(&plot.gnuplot);
    free(plot.methods);
    free(plot.variant);
    runset_free(plot.set);
    sqlite3_close(plot.db);
    return status;
}
