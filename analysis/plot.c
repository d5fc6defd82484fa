/* plot.c — `hetsim plot` (analysis/plot.h): chooses the runs, then runs each figure —
 * the writers of plot_outcomes.c, plot_accuracy.c, plot_idle.c, plot_comdml.c and
 * plot_timeline.c write a data file and a gnuplot script body into the private folder of
 * analysis/gnuplot.c, once per format (the cairo bodies replace characters no installed
 * font has), then gnuplot draws every format from one script and the images (with
 * --keep the script and the data too) move into the output folder.
 *
 * The script names its data and images without a folder and first changes to its own
 * folder (gnuplot's ARG0), so the kept NAME.gp redraws the same images with a plain
 * `gnuplot DIR/NAME.gp` from anywhere. Every text a figure draws (series, groups, run
 * names, tic labels) goes into the script through gnuplot's quoting; data files hold
 * numbers and `#` comments (control characters blanked) only. */
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
    { "time-to-target", plot_figure_time_to_target },
    { "straggler", plot_figure_straggler },
    { "speedup", plot_figure_speedup },
    { "accuracy", plot_figure_accuracy },
    { "idle", plot_figure_idle },
    { "pairing", plot_figure_pairing },
    { "predicted", plot_figure_predicted },
    { "timeline", plot_figure_timeline },
};

static const struct { unsigned flag; const char *extension; } plot_image_formats[] = {
    { PLOT_PNG, "png" },
    { PLOT_SVG, "svg" },
    { PLOT_PDF, "pdf" },
};

/* `set terminal ...` of format flag for a canvas in points. gnuplot's cairo terminals
 * draw a font of nominal size S at 4/3 S points times their fontscale (pdfcairo's default
 * fontscale is 0.5) and a line of width 1 at 1 px (pngcairo) or 0.5 pt (pdfcairo), SVG at
 * S units and 1 unit: the factors below make every format show the style's points. */
static void plot_print_terminal(FILE *script, const Plot *plot, unsigned flag, const PlotCanvas *canvas)
{
    double font = plot->style.font;
    if (flag == PLOT_PNG) {
        double pixels = plot->style.dpi / 72.0;  /* per point */
        fprintf(script, "set terminal pngcairo noenhanced size %ld,%ld font 'sans,%g' fontscale %.6g "
                        "linewidth %.6g\n", lround(canvas->width * pixels), lround(canvas->height * pixels),
                font, 0.75 * pixels, 0.5 * pixels);
    } else if (flag == PLOT_SVG) {
        fprintf(script, "set terminal svg noenhanced size %ld,%ld font 'sans,%g' linewidth 0.5 "
                        "background rgb 'white'\n", lround(canvas->width), lround(canvas->height), font);
    } else {
        fprintf(script, "set terminal pdfcairo noenhanced size %.4fin,%.4fin font 'sans,%g' "
                        "fontscale 0.75 linewidth 1\n", canvas->width / 72, canvas->height / 72, font);
    }
}

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

/* Moves the private folder's NAME.EXTENSION into the output folder and prints its path. */
static int plot_deliver(Plot *plot, const char *name, const char *extension, HsDiag *diag)
{
    char *from = plot_join_path(plot->gnuplot.folder, name, extension);
    char *to = plot_join_path(plot->out_dir, name, extension);
    int status = HS_OK;
    if (from == NULL || to == NULL) status = plot_nomem(diag);
    else if ((status = plot_move_file(from, to, diag)) == HS_OK) {
        fprintf(plot->out, "%s\n", to);
        fflush(plot->out);
    }
    free(from);
    free(to);
    return status;
}

/* The lines every script starts with: what it is, and the change to its own folder. */
static void plot_print_script_head(FILE *script, const char *name)
{
    fprintf(script, "# %s.gp — written by `hetsim plot`; draws %s.* from %s.dat in this folder.\n"
                    "# Redraw (after editing) with: gnuplot %s.gp\n", name, name, name, name);
    fputs("set encoding utf8\n"
          "if (exists('ARG0') && strlen(ARG0) > 0) { _dir = ARG0; _at = strlen(_dir);"
          " while (_at > 0 && _dir[_at:_at] ne '/') { _at = _at - 1 };"
          " if (_at > 0) { cd _dir[1:_at] } }\n", script);
}

/* Writes figure index's data and script (the writer runs once per format: labels for
 * cairo avoid characters no font draws), runs gnuplot and moves the images (and with
 * --keep the script and data) to the output folder. A writer's skip is a note, not an
 * error. */
static int plot_run_figure(Plot *plot, int index, HsDiag *diag)
{
    const char *name = plot_figures[index].name;
    char *data_path = plot_join_path(plot->gnuplot.folder, name, "dat");
    char *script_path = plot_join_path(plot->gnuplot.folder, name, "gp");
    char *data_name = plot_join_path("", name, "dat");
    char *body_text = NULL;
    size_t body_size = 0;
    FILE *data = NULL, *body = NULL, *script = NULL;
    int status = HS_OK, passes = 0;
    plot->note[0] = '\0';
    if (data_path == NULL || script_path == NULL || data_name == NULL) {
        status = plot_nomem(diag);
        goto done;
    }
    script = fopen(script_path, "w");
    if (script == NULL) {
        status = hs_diag_set(diag, HS_E_IO, script_path, 0, "cannot write: %s", strerror(errno));
        goto done;
    }
    plot_print_script_head(script, name);
    for (size_t f = 0; f < sizeof plot_image_formats / sizeof plot_image_formats[0]; f++) {
        if (!(plot->formats & plot_image_formats[f].flag)) continue;
        PlotCanvas canvas = { 720, 430 };
        plot->raster = plot_image_formats[f].flag != PLOT_SVG;
        plot->quiet = passes++ > 0;
        data = fopen(data_path, "w");  /* each pass writes the same numbers */
        body = open_memstream(&body_text, &body_size);
        if (data == NULL || body == NULL) {
            status = hs_diag_set(diag, HS_E_IO, data_path, 0, "cannot write: %s", strerror(errno));
            goto done;
        }
        status = plot_figures[index].write(plot, data_name, data, body, &canvas, diag);
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
        fputs("\nreset\n", script);
        plot_print_terminal(script, plot, plot_image_formats[f].flag, &canvas);
        fprintf(script, "set output '%s.%s'\n", name, plot_image_formats[f].extension);
        fwrite(body_text, 1, body_size, script);
        fputs("unset output\n", script);
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
    for (size_t f = 0; f < sizeof plot_image_formats / sizeof plot_image_formats[0] && status == HS_OK; f++)
        if (plot->formats & plot_image_formats[f].flag)
            status = plot_deliver(plot, name, plot_image_formats[f].extension, diag);
    if (status == HS_OK && plot->options->keep) {
        status = plot_deliver(plot, name, "gp", diag);
        if (status == HS_OK) status = plot_deliver(plot, name, "dat", diag);
    }
done:
    if (data) fclose(data);
    if (body) fclose(body);
    if (script) fclose(script);
    free(body_text);
    free(data_path);
    free(script_path);
    free(data_name);
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

/* The group in words for titles: its runs' names (a sweep's runs share its [run] name),
 * never a sweep id. */
static void plot_describe_group(Plot *plot)
{
    const RunSet *set = plot->set;
    const char *names[3];
    int count = 0, more = 0;
    for (int i = 0; i < set->run_count; i++) {
        if (set->points[set->runs[i].point_index].group != plot->group) continue;
        const char *name = set->runs[i].name[0] ? set->runs[i].name : "(unnamed)";
        int known = 0;
        for (int k = 0; k < count && !known; k++) known = strcmp(names[k], name) == 0;
        if (known) continue;
        if (count < 3) names[count++] = name;
        else more = 1;
    }
    plot->title[0] = '\0';
    for (int k = 0; k < count; k++)
        snprintf(plot->title + strlen(plot->title), sizeof plot->title - strlen(plot->title), "%s%s",
                 k > 0 ? ", " : "", names[k]);
    if (more) snprintf(plot->title + strlen(plot->title), sizeof plot->title - strlen(plot->title), ", ...");
    if (count == 0) snprintf(plot->title, sizeof plot->title, "no runs");
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
    plot_style_init(&plot.style, options);
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
    if (plot_index_looks(&plot) != HS_OK) {
        status = plot_nomem(diag);
        goto done;
    }
    if ((status = gnuplot_open(&plot.gnuplot, options->gnuplot, diag)) != HS_OK) goto done;
    if ((status = plot_make_folders(plot.out_dir, diag)) != HS_OK) goto done;
    for (size_t f = 0; f < sizeof plot_figures / sizeof plot_figures[0] && status == HS_OK; f++)
        status = plot_run_figure(&plot, (int)f, diag);
done:
    gnuplot_close(&plot.gnuplot);
    free(plot.looks);
    runset_free(plot.set);
    sqlite3_close(plot.db);
    return status;
}
