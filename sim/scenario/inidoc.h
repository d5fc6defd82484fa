/* inidoc.h — an INI file as an ordered list of (section, key, value, line) entries.
 * Parsing goes through libinih with a line-counting reader, so every entry keeps the
 * line it came from and later validation can still say FILE:LINE. `--set` overrides and
 * sweep points edit the document before it is resolved into a Scenario. */
#ifndef SIM_INIDOC_H
#define SIM_INIDOC_H

#include "base/hs_error.h"

#define INIDOC_NAME_MAX 64
/* inih keeps a section's name, and the key an indented line continues, in buffers of 50
 * bytes and cuts longer ones without a word: both are refused from 50 characters on. */
#define INIDOC_INIH_NAME_MAX 50
#define INIDOC_VALUE_MAX 1024
/* The largest scenario file: 16 MiB (a [sweep] of long lists is a few kB). */
#define INIDOC_FILE_MAX ((size_t)16 << 20)

/* Where an entry's value came from. Overrides outrank the file: a --set value wins over
 * the file's, a swept value over both (see scenario.c for [method] vs [method.NAME]).
 * A section's origin is that of whatever made it first: its header in the file, an
 * override or a swept key naming it, or INIDOC_FROM_ADD (inidoc_add_section: the user
 * asked for it, `--add-group`), so the resolver can refuse a section that only an
 * override invented (issue 28, class 2). */
typedef enum { INIDOC_FROM_FILE = 0, INIDOC_FROM_SET = 1, INIDOC_FROM_SWEEP = 2, INIDOC_FROM_ADD = 3 } IniOrigin;

typedef struct IniEntry {
    char section[INIDOC_NAME_MAX];
    char key[INIDOC_NAME_MAX];
    char value[INIDOC_VALUE_MAX];
    const char *file;  /* points at IniDoc.file, or "--set" for overrides */
    int line;          /* 0 for overrides; the [sweep] line for swept values */
    IniOrigin origin;
    int order;         /* when it was last set: later entries have larger orders */
    int used;          /* set by the resolver; unused entries are reported as unknown */
} IniEntry;

typedef struct IniDoc {
    char file[512];
    IniEntry *entries;
    int count, capacity;
    /* Sections in order of appearance, including empty ones (they are still checked). */
    char (*sections)[INIDOC_NAME_MAX];
    int *section_lines;
    IniOrigin *section_origins;
    int n_sections, sections_capacity;
    int next_order;
} IniDoc;

/* Reads path (a regular text file of at most INIDOC_FILE_MAX bytes, base/input_file.h).
 * Indented lines continue the previous value (joined with a space); a key given twice
 * in one section is an error. Returns 0, HS_E_INPUT (unreadable or malformed) or
 * HS_E_NOMEM. The caller frees doc (inidoc_free) whatever the outcome: a failed load keeps
 * what it had read. */
int inidoc_load(const char *path, IniDoc *doc, HsDiag *diag);
/* Same for text held in memory; name is used in messages. */
int inidoc_load_string(const char *name, const char *text, IniDoc *doc, HsDiag *diag);
void inidoc_free(IniDoc *doc);
int inidoc_copy(IniDoc *dst, const IniDoc *src);

/* Applies "SECTION.KEY=VALUE" (SECTION may contain dots: agents.slow.count=2). */
int inidoc_apply_set(IniDoc *doc, const char *assignment, HsDiag *diag);
/* Sets or replaces section.key; file/line/origin name where the value came from. */
int inidoc_set(IniDoc *doc, const char *section, const char *key, const char *value,
               const char *file, int line, IniOrigin origin);
/* Where a message about e points, written into buf: "FILE:LINE" for a line of the file or
 * of [sweep], "--set SECTION.KEY=VALUE" for an override. Returns buf. */
const char *inidoc_entry_where(const IniEntry *e, char *buf, size_t size);

IniEntry *inidoc_find(IniDoc *doc, const char *section, const char *key);
int inidoc_has_section(const IniDoc *doc, const char *section);
/* Adds an empty section (origin INIDOC_FROM_ADD, line 0) unless it exists: HS_OK,
 * HS_E_INPUT for a name too long, HS_E_NOMEM. */
int inidoc_add_section(IniDoc *doc, const char *section);
/* The origin of section (INIDOC_FROM_FILE when absent). */
IniOrigin inidoc_section_origin(const IniDoc *doc, const char *section);
int inidoc_section_line(const IniDoc *doc, const char *section);

#endif
