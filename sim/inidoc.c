/* inidoc.c — libinih drives the syntax (sections, comments, continuation lines); this
 * file supplies line numbers through its own reader and keeps every entry. */
#include "sim/inidoc.h"

#include "base/infile.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct IniReader {
    const char *text;  /* in-memory source */
    size_t pos;
    int line;
    int line_indented; /* the line just read starts with white space */
    int too_long_line; /* first line that did not fit inih's buffer */
} IniReader;

typedef struct IniParse {
    IniDoc *doc;
    IniReader *reader;
    HsDiag *diag;
    IniEntry *last;    /* for continuation lines */
} IniParse;

/* inih calls the reader once per line with a buffer of num bytes (INI_MAX_LINE). */
static char *inidoc_reader(char *str, int num, void *stream)
{
    IniReader *r = stream;
    if (r->text[r->pos] == '\0') return NULL;
    size_t start = r->pos, end = start;
    while (r->text[end] != '\0' && r->text[end] != '\n') end++;
    size_t len = end - start;
    r->line++;
    r->line_indented = len > 0 && (r->text[start] == ' ' || r->text[start] == '\t');
    if (len + 2 > (size_t)num) {
        if (r->too_long_line == 0) r->too_long_line = r->line;
        len = (size_t)num - 2;
    }
    memcpy(str, r->text + start, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    r->pos = r->text[end] == '\n' ? end + 1 : end;
    return str;
}

static int inidoc_grow(IniDoc *doc)
{
    if (doc->count < doc->capacity) return HS_OK;
    int capacity = doc->capacity ? doc->capacity * 2 : 64;
    IniEntry *entries = realloc(doc->entries, (size_t)capacity * sizeof *entries);
    if (entries == NULL) return HS_E_NOMEM;
    doc->entries = entries;
    doc->capacity = capacity;
    return HS_OK;
}

static int inidoc_note_section(IniDoc *doc, const char *section, int line)
{
    if (inidoc_has_section(doc, section)) return HS_OK;
    if (doc->n_sections == doc->sections_capacity) {
        int capacity = doc->sections_capacity ? doc->sections_capacity * 2 : 16;
        void *names = realloc(doc->sections, (size_t)capacity * sizeof *doc->sections);
        if (names == NULL) return HS_E_NOMEM;
        doc->sections = names;
        int *lines = realloc(doc->section_lines, (size_t)capacity * sizeof *lines);
        if (lines == NULL) return HS_E_NOMEM;
        doc->section_lines = lines;
        doc->sections_capacity = capacity;
    }
    snprintf(doc->sections[doc->n_sections], INIDOC_NAME_MAX, "%s", section);
    doc->section_lines[doc->n_sections++] = line;
    return HS_OK;
}

static int inidoc_handler(void *user, const char *section, const char *name, const char *value)
{
    IniParse *p = user;
    IniDoc *doc = p->doc;
    int line = p->reader->line;
    if (strlen(section) >= INIDOC_NAME_MAX || strlen(name) >= INIDOC_NAME_MAX) {
        hs_diag_set(p->diag, HS_E_INPUT, doc->file, line, "section or key name is too long");
        return 0;
    }
    if (section[0] == '\0') {
        hs_diag_set(p->diag, HS_E_INPUT, doc->file, line, "key '%s' outside any [section]", name);
        return 0;
    }
    if (inidoc_note_section(doc, section, line) != HS_OK) return 0;
    if (p->reader->line_indented && p->last && strcmp(p->last->key, name) == 0 &&
        strcmp(p->last->section, section) == 0) {
        size_t have = strlen(p->last->value);
        if (have + 1 + strlen(value) >= INIDOC_VALUE_MAX) {
            hs_diag_set(p->diag, HS_E_INPUT, doc->file, line, "value of '%s' is too long", name);
            return 0;
        }
        p->last->value[have] = ' ';
        strcpy(p->last->value + have + 1, value);
        return 1;
    }
    IniEntry *old = inidoc_find(doc, section, name);
    if (old != NULL) {
        hs_diag_set(p->diag, HS_E_INPUT, doc->file, line,
                    "'%s' is set twice in [%s] (first at line %d)", name, section, old->line);
        return 0;
    }
    if (strlen(value) >= INIDOC_VALUE_MAX) {
        hs_diag_set(p->diag, HS_E_INPUT, doc->file, line, "value of '%s' is too long", name);
        return 0;
    }
    if (inidoc_set(doc, section, name, value, doc->file, line, INIDOC_FROM_FILE) != HS_OK) return 0;
    p->last = &doc->entries[doc->count - 1];
    return 1;
}

/* inih reports a section header with no keys only through its keys, so headers are
 * found here: a line whose first non-blank character is '['. */
static int inidoc_scan_sections(IniDoc *doc, const char *text, HsDiag *diag)
{
    int line = 0;
    for (const char *p = text; *p;) {
        line++;
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        const char *eol = strchr(q, '\n');
        if (eol == NULL) eol = q + strlen(q);
        if (*q == '[') {
            const char *close = memchr(q, ']', (size_t)(eol - q));
            if (close == NULL)
                return hs_diag_set(diag, HS_E_INPUT, doc->file, line, "section header without ']'");
            size_t len = (size_t)(close - q - 1);
            char name[INIDOC_NAME_MAX];
            if (len == 0 || len >= sizeof name)
                return hs_diag_set(diag, HS_E_INPUT, doc->file, line, "bad section name");
            memcpy(name, q + 1, len);
            name[len] = '\0';
            if (inidoc_note_section(doc, name, line) != HS_OK) return HS_E_NOMEM;
        }
        p = *eol ? eol + 1 : eol;
    }
    return HS_OK;
}

int inidoc_load_string(const char *name, const char *text, IniDoc *doc, HsDiag *diag)
{
    memset(doc, 0, sizeof *doc);
    snprintf(doc->file, sizeof doc->file, "%s", name);
    int status = inidoc_scan_sections(doc, text, diag);
    if (status != HS_OK) return status;
    IniReader reader = {.text = text};
    IniParse parse = {.doc = doc, .reader = &reader, .diag = diag};
    int result = ini_parse_stream(inidoc_reader, &reader, inidoc_handler, &parse);
    if (diag->status != HS_OK) return diag->status;
    if (reader.too_long_line)
        return hs_diag_set(diag, HS_E_INPUT, doc->file, reader.too_long_line,
                           "line is longer than %d characters (continue a long value on an "
                           "indented next line)", INI_MAX_LINE - 2);
    if (result > 0)
        return hs_diag_set(diag, HS_E_INPUT, doc->file, result,
                           "cannot parse this line (expected KEY = VALUE or [SECTION])");
    if (result < 0) return hs_diag_set(diag, HS_E_NOMEM, doc->file, 0, "out of memory");
    return HS_OK;
}

int inidoc_load(const char *path, IniDoc *doc, HsDiag *diag)
{
    memset(doc, 0, sizeof *doc);
    char *text;
    int status = infile_read_text(path, "scenario", INIDOC_FILE_MAX, &text, NULL, diag);
    if (status != HS_OK) return status;
    status = inidoc_load_string(path, text, doc, diag);
    free(text);
    return status;
}

void inidoc_free(IniDoc *doc)
{
    if (doc == NULL) return;
    free(doc->entries);
    free(doc->sections);
    free(doc->section_lines);
    memset(doc, 0, sizeof *doc);
}

int inidoc_copy(IniDoc *dst, const IniDoc *src)
{
    *dst = *src;
    dst->entries = NULL;
    dst->sections = NULL;
    dst->section_lines = NULL;
    dst->capacity = dst->count = 0;
    dst->sections_capacity = dst->n_sections = 0;
    for (int i = 0; i < src->n_sections; i++)
        if (inidoc_note_section(dst, src->sections[i], src->section_lines[i]) != HS_OK) goto fail;
    for (int i = 0; i < src->count; i++) {
        if (inidoc_grow(dst) != HS_OK) goto fail;
        dst->entries[dst->count] = src->entries[i];
        if (src->entries[i].file == src->file) dst->entries[dst->count].file = dst->file;
        dst->count++;
    }
    return HS_OK;
fail:
    inidoc_free(dst);
    return HS_E_NOMEM;
}

IniEntry *inidoc_find(IniDoc *doc, const char *section, const char *key)
{
    for (int i = 0; i < doc->count; i++)
        if (strcmp(doc->entries[i].section, section) == 0 && strcmp(doc->entries[i].key, key) == 0)
            return &doc->entries[i];
    return NULL;
}

int inidoc_has_section(const IniDoc *doc, const char *section)
{
    return inidoc_section_line(doc, section) >= 0;
}

int inidoc_section_line(const IniDoc *doc, const char *section)
{
    for (int i = 0; i < doc->n_sections; i++)
        if (strcmp(doc->sections[i], section) == 0) return doc->section_lines[i];
    return -1;
}

int inidoc_set(IniDoc *doc, const char *section, const char *key, const char *value,
               const char *file, int line, IniOrigin origin)
{
    if (strlen(section) >= INIDOC_NAME_MAX || strlen(key) >= INIDOC_NAME_MAX ||
        strlen(value) >= INIDOC_VALUE_MAX)
        return HS_E_INPUT;
    if (inidoc_note_section(doc, section, line) != HS_OK) return HS_E_NOMEM;
    IniEntry *e = inidoc_find(doc, section, key);
    if (e == NULL) {
        if (inidoc_grow(doc) != HS_OK) return HS_E_NOMEM;
        e = &doc->entries[doc->count++];
        memset(e, 0, sizeof *e);
        snprintf(e->section, sizeof e->section, "%s", section);
        snprintf(e->key, sizeof e->key, "%s", key);
    }
    snprintf(e->value, sizeof e->value, "%s", value);
    e->file = file;
    e->line = line;
    e->origin = origin;
    e->order = ++doc->next_order;
    return HS_OK;
}

const char *inidoc_entry_where(const IniEntry *e, char *buf, size_t size)
{
    if (e->origin == INIDOC_FROM_SET)
        snprintf(buf, size, "--set %s.%s=%s", e->section, e->key, e->value);
    else if (e->line > 0)
        snprintf(buf, size, "%s:%d", e->file, e->line);
    else
        snprintf(buf, size, "%s", e->file);
    return buf;
}

int inidoc_apply_set(IniDoc *doc, const char *assignment, HsDiag *diag)
{
    const char *eq = strchr(assignment, '=');
    if (eq == NULL)
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s' is not SECTION.KEY=VALUE", assignment);
    char path[2 * INIDOC_NAME_MAX];
    size_t len = (size_t)(eq - assignment);
    while (len > 0 && assignment[len - 1] == ' ') len--;
    if (len >= sizeof path)
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s': name too long", assignment);
    memcpy(path, assignment, len);
    path[len] = '\0';
    char *dot = strrchr(path, '.');
    if (dot == NULL || dot == path || dot[1] == '\0')
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s' is not SECTION.KEY=VALUE", assignment);
    *dot = '\0';
    const char *value = eq + 1;
    while (*value == ' ') value++;
    if (inidoc_set(doc, path, dot + 1, value, "--set", 0, INIDOC_FROM_SET) != HS_OK)
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s': name or value too long", assignment);
    return HS_OK;
}
