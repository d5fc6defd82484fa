/* inidoc.c — libinih drives the syntax (sections, comments, continuation lines); this
 * file supplies line numbers through its own reader and keeps every entry. */
#include "sim/scenario/inidoc.h"

#include "base/input_file.h"
#include "base/grow.h"

#include <ctype.h>
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
    IniDoc *doc;
    HsDiag *diag;      /* the first error found on a line stops the parse */
    /* inih's own state, mirrored so that what it would accept without a word can be
     * refused: the key an indented line would continue (none after a section header) */
    char prev_key[INIDOC_NAME_MAX];
    int prev_key_line;
} IniReader;

typedef struct IniParse {
    IniDoc *doc;
    IniReader *reader;
    HsDiag *diag;
    IniEntry *last;    /* for continuation lines */
} IniParse;

static int inidoc_note_section(IniDoc *doc, const char *section, int line, IniOrigin origin);

/* The first control character of s other than a tab, or 0. */
static int inidoc_control_char(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f) return (unsigned char)*s;
    return 0;
}

static const char *inidoc_control_name(int c)
{
    switch (c) {
    case '\n': return "a line break";
    case '\r': return "a carriage return";
    case 0x1b: return "an escape character";
    default: return "a control character";
    }
}

static char *inidoc_rstrip(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static char *inidoc_lskip(char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* inih's own scan: the first of chars, or an inline comment (';' after a blank). */
static char *inidoc_find_or_comment(char *s, const char *chars)
{
    int was_space = 0;
    while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
    return s;
}

/* What inih accepts but a scenario does not mean, refused at its line (issue 28, class 4):
 * text after a section header's ']', an empty name or blanks inside the brackets, a
 * section header given twice (inih would merge the two), an indented header or
 * KEY = VALUE line after a key (inih would glue it onto that key's value), ':' between
 * a key and its value, a missing key name, and control characters (class 3). This walks
 * each line as inih's ini_parse_stream does (BOM, comments, continuations, headers,
 * pairs), so the two agree on what every line is. Headers are noted here, since inih
 * reports a section only through its keys. */
static int inidoc_check_line(IniReader *r, char *raw)
{
    IniDoc *doc = r->doc;
    int line = r->line;
    char *begin = raw;
    if (line == 1 && (unsigned char)begin[0] == 0xEF && (unsigned char)begin[1] == 0xBB &&
        (unsigned char)begin[2] == 0xBF)
        begin += 3;
    char *start = inidoc_lskip(inidoc_rstrip(begin));
    if (*start == ';' || *start == '#') return HS_OK;
    int c = inidoc_control_char(start);
    if (c)
        return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                           "holds %s (0x%02x): a scenario's names and values are text on one line "
                           "(tabs allowed)", inidoc_control_name(c), c);
    if (r->prev_key[0] && *start && start > begin) {
        /* a continuation of prev_key's value */
        *inidoc_find_or_comment(start, NULL) = '\0';
        if (strlen(r->prev_key) >= INIDOC_INIH_NAME_MAX)
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "an indented line continues the value of a key longer than %d characters (line %d), "
                               "which libinih cuts: write the value on one line",
                               INIDOC_INIH_NAME_MAX - 1, r->prev_key_line);
        if (*start == '[')
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "an indented line continues the value of '%s' (line %d), so this section header "
                               "would be part of it: start the header at the beginning of its line",
                               r->prev_key, r->prev_key_line);
        if (strchr(start, '=') != NULL)
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "an indented line continues the value of '%s' (line %d), so this KEY = VALUE "
                               "would be part of it: start the key at the beginning of its line",
                               r->prev_key, r->prev_key_line);
        return HS_OK;
    }
    if (*start == '[') {
        char *close = inidoc_find_or_comment(start + 1, "]");
        if (*close != ']') return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "section header without ']'");
        *close = '\0';
        const char *name = start + 1, *rest = inidoc_lskip(close + 1);
        if (*rest != '\0' && *rest != ';')
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "text after the section header [%s]: '%s' (a key goes on a line of its own; a "
                               "comment after a header starts with ';')", name, rest);
        size_t len = strlen(name);
        if (len == 0) return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "empty section name []");
        if (strchr(name, '\t') != NULL)
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "a tab inside the brackets of a section name");
        if (isspace((unsigned char)name[0]) || isspace((unsigned char)name[len - 1]))
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "blank inside the brackets of [%s]", name);
        if (len >= INIDOC_INIH_NAME_MAX)
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "section name is longer than %d characters",
                               INIDOC_INIH_NAME_MAX - 1);
        int first = inidoc_section_line(doc, name);
        if (first >= 0)
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "[%s] is given twice (first at line %d): write each section once", name, first);
        if (inidoc_note_section(doc, name, line, INIDOC_FROM_FILE) != HS_OK)
            return hs_diag_set(r->diag, HS_E_NOMEM, doc->file, 0, "out of memory");
        r->prev_key[0] = '\0';
        return HS_OK;
    }
    if (*start) {
        char *separator = inidoc_find_or_comment(start, "=:");
        if (*separator == ':') {
            *separator = '\0';
            return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line,
                               "'%s:' — a key and its value are separated by '=' (KEY = VALUE)", inidoc_rstrip(start));
        }
        if (*separator == '=') {
            *separator = '\0';
            const char *name = inidoc_rstrip(start);
            if (*name == '\0') return hs_diag_set(r->diag, HS_E_INPUT, doc->file, line, "a key name is missing before '='");
            snprintf(r->prev_key, sizeof r->prev_key, "%s", name);
            r->prev_key_line = line;
        }
        /* a line without '=' is inih's parse error */
    }
    return HS_OK;
}

/* inih calls the reader once per line with a buffer of num bytes (INI_MAX_LINE). Each
 * line is checked first; an error ends the parse (NULL: end of input). */
static char *inidoc_reader(char *str, int num, void *stream)
{
    IniReader *r = stream;
    if (r->diag->status != HS_OK || r->text[r->pos] == '\0') return NULL;
    size_t start = r->pos, end = start;
    while (r->text[end] != '\0' && r->text[end] != '\n') end++;
    size_t len = end - start;
    r->line++;
    r->line_indented = len > 0 && (r->text[start] == ' ' || r->text[start] == '\t');
    if (len + 2 > (size_t)num) {
        hs_diag_set(r->diag, HS_E_INPUT, r->doc->file, r->line,
                    "line is longer than %d characters (continue a long value on an indented next line)", num - 2);
        return NULL;
    }
    memcpy(str, r->text + start, len);
    str[len] = '\0';
    if (inidoc_check_line(r, str) != HS_OK) return NULL;
    memcpy(str, r->text + start, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    r->pos = r->text[end] == '\n' ? end + 1 : end;
    return str;
}

static int inidoc_grow(IniDoc *doc)
{
    return hs_grow((void **)&doc->entries, &doc->capacity, doc->count, sizeof *doc->entries, 64);
}

static int inidoc_note_section(IniDoc *doc, const char *section, int line, IniOrigin origin)
{
    if (inidoc_has_section(doc, section)) return HS_OK;
    /* three arrays, one capacity */
    int n = doc->n_sections, cap_names = doc->sections_capacity, cap_lines = cap_names, cap_origins = cap_names;
    if (hs_grow((void **)&doc->sections, &cap_names, n, sizeof *doc->sections, 16) != HS_OK ||
        hs_grow((void **)&doc->section_lines, &cap_lines, n, sizeof *doc->section_lines, 16) != HS_OK ||
        hs_grow((void **)&doc->section_origins, &cap_origins, n, sizeof *doc->section_origins, 16) != HS_OK)
        return HS_E_NOMEM;
    doc->sections_capacity = cap_origins;
    snprintf(doc->sections[doc->n_sections], INIDOC_NAME_MAX, "%s", section);
    doc->section_origins[doc->n_sections] = origin;
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
    if (inidoc_note_section(doc, section, line, INIDOC_FROM_FILE) != HS_OK) return 0;
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

int inidoc_load_string(const char *name, const char *text, IniDoc *doc, HsDiag *diag)
{
    memset(doc, 0, sizeof *doc);
    snprintf(doc->file, sizeof doc->file, "%s", name);
    IniReader reader = {.text = text, .doc = doc, .diag = diag};
    IniParse parse = {.doc = doc, .reader = &reader, .diag = diag};
    int result = ini_parse_stream(inidoc_reader, &reader, inidoc_handler, &parse);
    if (diag->status != HS_OK) return diag->status;
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
    int status = input_file_read_text(path, INIDOC_FILE_MAX, &text, NULL, diag);
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
    free(doc->section_origins);
    memset(doc, 0, sizeof *doc);
}

int inidoc_copy(IniDoc *dst, const IniDoc *src)
{
    *dst = *src;
    dst->entries = NULL;
    dst->sections = NULL;
    dst->section_lines = NULL;
    dst->section_origins = NULL;
    dst->capacity = dst->count = 0;
    dst->sections_capacity = dst->n_sections = 0;
    for (int i = 0; i < src->n_sections; i++)
        if (inidoc_note_section(dst, src->sections[i], src->section_lines[i], src->section_origins[i]) != HS_OK)
            goto fail;
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

int inidoc_add_section(IniDoc *doc, const char *section)
{
    if (strlen(section) >= INIDOC_NAME_MAX) return HS_E_INPUT;
    return inidoc_note_section(doc, section, 0, INIDOC_FROM_ADD);
}

IniOrigin inidoc_section_origin(const IniDoc *doc, const char *section)
{
    for (int i = 0; i < doc->n_sections; i++)
        if (strcmp(doc->sections[i], section) == 0) return doc->section_origins[i];
    return INIDOC_FROM_FILE;
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
    if (inidoc_note_section(doc, section, line, origin) != HS_OK) return HS_E_NOMEM;
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

/* s with control characters written as \n, \r, \t or \xHH, cut to fit: for messages. */
static const char *inidoc_escape(const char *s, char *buf, size_t size)
{
    size_t used = 0;
    for (; *s && used + 5 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') used += (size_t)snprintf(buf + used, size - used, "\\n");
        else if (c == '\r') used += (size_t)snprintf(buf + used, size - used, "\\r");
        else if (c == '\t') used += (size_t)snprintf(buf + used, size - used, "\\t");
        else if (c < 0x20 || c == 0x7f) used += (size_t)snprintf(buf + used, size - used, "\\x%02x", c);
        else buf[used++] = (char)c;
    }
    buf[used] = '\0';
    return buf;
}

int inidoc_apply_set(IniDoc *doc, const char *assignment, HsDiag *diag)
{
    int c = inidoc_control_char(assignment);
    if (c) {
        char shown[300];
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0,
                           "'%s' holds %s (0x%02x): a scenario's names and values are text on one line",
                           inidoc_escape(assignment, shown, sizeof shown), inidoc_control_name(c), c);
    }
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
    /* runs.config writes the section as a header, which inih would cut */
    if (strlen(path) >= INIDOC_INIH_NAME_MAX)
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s': the section name is longer than %d characters",
                           assignment, INIDOC_INIH_NAME_MAX - 1);
    const char *value = eq + 1;
    while (*value == ' ') value++;
    if (inidoc_set(doc, path, dot + 1, value, "--set", 0, INIDOC_FROM_SET) != HS_OK)
        return hs_diag_set(diag, HS_E_INPUT, "--set", 0, "'%s': name or value too long", assignment);
    return HS_OK;
}
