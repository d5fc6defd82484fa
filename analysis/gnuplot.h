/* gnuplot.h — running gnuplot safely: found on PATH (or where the caller says), started
 * with fork/exec — never through a shell — on a script file, with every file it reads
 * or writes in a private temporary folder (mkdtemp, mode 0700) that gnuplot_close
 * removes. Text that reaches a script (names from scenarios, paths) goes through
 * gnuplot_quote; scripts select `noenhanced` terminals so `@ & ^ _ { }` print as they
 * are. gnuplot runs with -d (no ~/.gnuplot), stdin from /dev/null and its output
 * captured, so a failure is reported with gnuplot's own message. */
#ifndef ANALYSIS_GNUPLOT_H
#define ANALYSIS_GNUPLOT_H

#include <stdio.h>

#include "base/hs_error.h"

/* The program used when neither the caller nor the environment names one. */
#define GNUPLOT_DEFAULT_PROGRAM "gnuplot"
/* Environment variable naming the gnuplot program (a path, or a name looked up on PATH). */
#define GNUPLOT_ENV "HETSIM_GNUPLOT"
/* What the error message for a missing gnuplot tells the user to run. */
#define GNUPLOT_INSTALL_HINT "apt-get install gnuplot-nox"

typedef struct GnuplotGlyphs GnuplotGlyphs;

typedef struct Gnuplot {
    char *program;   /* owned; the resolved path of the executable */
    char *folder;    /* owned; the private temporary folder */
    int scripts;     /* scripts run so far (names the log files) */
    GnuplotGlyphs *glyphs;  /* owned; what the installed fonts draw, NULL when unknown */
} Gnuplot;

/* Finds the program — `program` if not NULL, else $HETSIM_GNUPLOT if set and not empty,
 * else "gnuplot"; a name without '/' is looked up on PATH — and makes the temporary
 * folder under $TMPDIR (else /tmp). Errors (diag says which and what to do):
 *   HS_E_MISSING  no such executable ("... install it: apt-get install gnuplot-nox");
 *   HS_E_IO       the temporary folder cannot be made;
 *   HS_E_NOMEM    out of memory.
 * On failure nothing is left to close (gnuplot_close is still safe to call). */
int gnuplot_open(Gnuplot *gnuplot, const char *program, HsDiag *diag);

/* Removes the temporary folder and everything in it; accepts a zeroed or failed one. */
void gnuplot_close(Gnuplot *gnuplot);

/* "FOLDER/name" (malloc'd, the caller frees), NULL when out of memory. */
char *gnuplot_file(const Gnuplot *gnuplot, const char *name);

/* Runs `gnuplot -d SCRIPT` in the private folder and waits for it. HS_OK when it exits 0 (its warnings are
 * copied to warnings, which may be NULL, one "gnuplot: ..." line each); otherwise
 * HS_E_IO with gnuplot's first error lines in diag, or HS_E_MISSING when the program
 * cannot be executed. */
int gnuplot_run(Gnuplot *gnuplot, const char *script_path, FILE *warnings, HsDiag *diag);

/* Writes text to out as a gnuplot single-quoted string: quotes doubled, backslashes
 * kept (single quotes do not process escapes), control characters and bytes that are
 * not UTF-8 turned into spaces and '?', so no text can end the string or the line. */
void gnuplot_quote(FILE *out, const char *text);

/* gnuplot_quote for text that a raster terminal (pngcairo) draws: a character outside
 * ASCII that no installed font has becomes '?'. Cairo draws such a character as a
 * "missing glyph" box, and under gnuplot's oversampled pngcairo that box comes out a
 * hundred times too large, covering the figure (seen with CJK names on a system
 * without CJK fonts). The fonts are asked through fontconfig, loaded with dlopen when
 * gnuplot_open runs (no build dependency); without it every character is kept, as
 * gnuplot_quote does. Vector output (SVG) keeps the text: its viewer brings fonts. */
void gnuplot_quote_drawn(FILE *out, const char *text, const Gnuplot *gnuplot);

/* Whether the installed fonts could be asked (fontconfig found and listing fonts). */
int gnuplot_knows_glyphs(const Gnuplot *gnuplot);

#endif
