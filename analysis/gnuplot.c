/* gnuplot.c — the gnuplot process and its private folder: see gnuplot.h. */
#include "analysis/gnuplot.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- which characters the installed fonts draw (fontconfig through dlopen) ---- */

/* The few fontconfig types used, as its ABI (fontconfig.h) lays them out. */
typedef struct FcFontSetView {
    int nfont;
    int sfont;
    void **fonts;
} FcFontSetView;

struct GnuplotGlyphs {
    void *library;
    FcFontSetView *fonts;
    void *pattern, *objects;
    int (*get_charset)(const void *pattern, const char *object, int n, void **charset);
    int (*has_char)(const void *charset, unsigned int ucs4);
    void (*destroy_fonts)(void *set);
    void (*destroy_objects)(void *set);
    void (*destroy_pattern)(void *pattern);
    void (*finish)(void);   /* FcFini, may be missing */
    int initialised;        /* FcInit succeeded */
    uint32_t cached[256];   /* code point + 1 per slot, 0 when empty */
    unsigned char drawn[256];
};

static void glyphs_close(GnuplotGlyphs *glyphs)
{
    if (glyphs == NULL) return;
    if (glyphs->fonts != NULL) glyphs->destroy_fonts(glyphs->fonts);
    if (glyphs->objects != NULL) glyphs->destroy_objects(glyphs->objects);
    if (glyphs->pattern != NULL) glyphs->destroy_pattern(glyphs->pattern);
    /* hetsim has no other use for fontconfig: FcFini frees what FcInit built (a later
     * gnuplot_open initialises it again), and the library may then be unloaded. */
    if (glyphs->finish != NULL && glyphs->initialised) glyphs->finish();
    if (glyphs->library != NULL) dlclose(glyphs->library);
    free(glyphs);
}

/* NULL when fontconfig or any font is missing: then nothing is replaced. */
static GnuplotGlyphs *glyphs_open(void)
{
    GnuplotGlyphs *glyphs = calloc(1, sizeof *glyphs);
    if (glyphs == NULL) return NULL;
    glyphs->library = dlopen("libfontconfig.so.1", RTLD_NOW | RTLD_LOCAL);
    if (glyphs->library == NULL) goto fail;
    int (*init)(void);
    void *(*create_pattern)(void);
    void *(*build_objects)(const char *first, ...);
    void *(*list)(void *config, void *pattern, void *objects);
    /* POSIX guarantees that a data pointer from dlsym converts to a function pointer */
    *(void **)&init = dlsym(glyphs->library, "FcInit");
    *(void **)&create_pattern = dlsym(glyphs->library, "FcPatternCreate");
    *(void **)&build_objects = dlsym(glyphs->library, "FcObjectSetBuild");
    *(void **)&list = dlsym(glyphs->library, "FcFontList");
    *(void **)&glyphs->get_charset = dlsym(glyphs->library, "FcPatternGetCharSet");
    *(void **)&glyphs->has_char = dlsym(glyphs->library, "FcCharSetHasChar");
    *(void **)&glyphs->destroy_fonts = dlsym(glyphs->library, "FcFontSetDestroy");
    *(void **)&glyphs->destroy_objects = dlsym(glyphs->library, "FcObjectSetDestroy");
    *(void **)&glyphs->destroy_pattern = dlsym(glyphs->library, "FcPatternDestroy");
    *(void **)&glyphs->finish = dlsym(glyphs->library, "FcFini");
    if (!init || !create_pattern || !build_objects || !list || !glyphs->get_charset ||
        !glyphs->has_char || !glyphs->destroy_fonts || !glyphs->destroy_objects ||
        !glyphs->destroy_pattern || !init())
        goto fail;
    glyphs->initialised = 1;
    glyphs->pattern = create_pattern();
    glyphs->objects = build_objects("charset", (char *)NULL);
    if (glyphs->pattern == NULL || glyphs->objects == NULL) goto fail;
    glyphs->fonts = list(NULL, glyphs->pattern, glyphs->objects);
    if (glyphs->fonts == NULL || glyphs->fonts->nfont <= 0) goto fail;
    return glyphs;
fail:
    glyphs_close(glyphs);
    return NULL;
}

/* Whether some installed font has code point c (a small cache in front: labels repeat). */
static int glyphs_draw(GnuplotGlyphs *glyphs, uint32_t c)
{
    unsigned slot = (c * 2654435761u) >> 24;
    if (glyphs->cached[slot] == c + 1) return glyphs->drawn[slot];
    int drawn = 0;
    for (int i = 0; i < glyphs->fonts->nfont && !drawn; i++) {
        void *charset = NULL;
        if (glyphs->get_charset(glyphs->fonts->fonts[i], "charset", 0, &charset) == 0 /* Match */ &&
            charset != NULL)
            drawn = glyphs->has_char(charset, c) != 0;
    }
    glyphs->cached[slot] = c + 1;
    glyphs->drawn[slot] = (unsigned char)drawn;
    return drawn;
}

int gnuplot_knows_glyphs(const Gnuplot *gnuplot)
{
    return gnuplot != NULL && gnuplot->glyphs != NULL;
}

/* ---- the program and its folder ---- */

static int is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The executable `name` resolves to, as execvp would find it (malloc'd), or NULL. */
static char *find_program(const char *name, int *nomem)
{
    *nomem = 0;
    if (strchr(name, '/') != NULL) {
        if (!is_executable_file(name)) return NULL;
        char *copy = strdup(name);
        if (copy == NULL) *nomem = 1;
        return copy;
    }
    const char *path = getenv("PATH");
    if (path == NULL) path = "/usr/local/bin:/usr/bin:/bin";
    size_t name_length = strlen(name);
    for (const char *dir = path;;) {
        const char *end = strchr(dir, ':');
        size_t length = end ? (size_t)(end - dir) : strlen(dir);
        /* an empty entry is the current folder, as for execvp */
        char *candidate = malloc(length + name_length + 3);
        if (candidate == NULL) {
            *nomem = 1;
            return NULL;
        }
        if (length == 0) {
            memcpy(candidate, "./", 2);
            memcpy(candidate + 2, name, name_length + 1);
        } else {
            memcpy(candidate, dir, length);
            candidate[length] = '/';
            memcpy(candidate + length + 1, name, name_length + 1);
        }
        if (is_executable_file(candidate)) return candidate;
        free(candidate);
        if (end == NULL) return NULL;
        dir = end + 1;
    }
}

int gnuplot_open(Gnuplot *gnuplot, const char *program, HsDiag *diag)
{
    memset(gnuplot, 0, sizeof *gnuplot);
    const char *source = "";
    if (program == NULL) {
        const char *env = getenv(GNUPLOT_ENV);
        if (env != NULL && *env != '\0') {
            program = env;
            source = " (from " GNUPLOT_ENV ")";
        } else {
            program = GNUPLOT_DEFAULT_PROGRAM;
        }
    }
    int nomem = 0;
    gnuplot->program = find_program(program, &nomem);
    if (nomem) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    if (gnuplot->program == NULL) {
        if (strchr(program, '/') != NULL)
            return hs_diag_set(diag, HS_E_MISSING, NULL, 0,
                               "gnuplot not found: '%s'%s is not an executable file; "
                               "install gnuplot with `" GNUPLOT_INSTALL_HINT "` or point "
                               GNUPLOT_ENV " at it", program, source);
        return hs_diag_set(diag, HS_E_MISSING, NULL, 0,
                           "gnuplot not found: no '%s'%s on PATH; install it with `"
                           GNUPLOT_INSTALL_HINT "` (Debian package gnuplot-nox) or set "
                           GNUPLOT_ENV " to its path", program, source);
    }
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0') base = "/tmp";
    size_t size = strlen(base) + 32;
    gnuplot->folder = malloc(size);
    if (gnuplot->folder == NULL) {
        gnuplot_close(gnuplot);
        return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    }
    snprintf(gnuplot->folder, size, "%s/hetsim-plot.XXXXXX", base);
    if (mkdtemp(gnuplot->folder) == NULL) {
        int err = errno;
        hs_diag_set(diag, HS_E_IO, gnuplot->folder, 0, "cannot make a temporary folder: %s",
                    strerror(err));
        free(gnuplot->folder);
        gnuplot->folder = NULL;
        gnuplot_close(gnuplot);
        return HS_E_IO;
    }
    gnuplot->glyphs = glyphs_open();
    return HS_OK;
}

void gnuplot_close(Gnuplot *gnuplot)
{
    if (gnuplot == NULL) return;
    if (gnuplot->folder != NULL) {
        /* the folder is flat: only what this module and gnuplot wrote into it */
        DIR *dir = opendir(gnuplot->folder);
        if (dir != NULL) {
            struct dirent *entry;
            while ((entry = readdir(dir)) != NULL) {
                if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
                char *path = gnuplot_file(gnuplot, entry->d_name);
                if (path != NULL) unlink(path);
                free(path);
            }
            closedir(dir);
        }
        rmdir(gnuplot->folder);
    }
    free(gnuplot->folder);
    free(gnuplot->program);
    glyphs_close(gnuplot->glyphs);
    memset(gnuplot, 0, sizeof *gnuplot);
}

char *gnuplot_file(const Gnuplot *gnuplot, const char *name)
{
    size_t size = strlen(gnuplot->folder) + strlen(name) + 2;
    char *path = malloc(size);
    if (path != NULL) snprintf(path, size, "%s/%s", gnuplot->folder, name);
    return path;
}

/* Reads the whole of a small file (malloc'd, NUL-terminated), NULL when it cannot. */
static char *read_small_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) return NULL;
    size_t capacity = 4096, used = 0;
    char *text = malloc(capacity);
    while (text != NULL) {
        size_t got = fread(text + used, 1, capacity - used - 1, file);
        used += got;
        if (got == 0) break;
        if (capacity - used - 1 == 0) {
            if (capacity >= ((size_t)1 << 20)) break;  /* enough to explain a failure */
            char *grown = realloc(text, 2 * capacity);
            if (grown == NULL) break;
            text = grown;
            capacity *= 2;
        }
    }
    fclose(file);
    if (text != NULL) text[used] = '\0';
    return text;
}

/* Copies each non-empty line of log to warnings as "gnuplot: LINE". */
static void forward_lines(const char *log, FILE *warnings)
{
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        int blank = 1;
        for (size_t i = 0; i < length && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
        if (!blank) fprintf(warnings, "gnuplot: %.*s\n", (int)length, line);
        line += length + (end != NULL);
    }
}

/* The log's error lines for a message: gnuplot echoes the failing command, a caret and
 * the error on separate lines; keep the last few non-empty lines, joined by " | ". */
static void summarise_log(const char *log, char *out, size_t size)
{
    const char *lines[4] = { 0 };
    size_t lengths[4] = { 0 };
    int count = 0;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        size_t start = 0;
        while (start < length && (line[start] == ' ' || line[start] == '\t')) start++;
        if (start < length && !(length - start == 1 && line[start] == '^')) {
            if (count == 4) {
                memmove(lines, lines + 1, 3 * sizeof *lines);
                memmove(lengths, lengths + 1, 3 * sizeof *lengths);
                count = 3;
            }
            lines[count] = line + start;
            lengths[count++] = length - start;
        }
        line += length + (end != NULL);
    }
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < count && used + 1 < size; i++) {
        int wrote = snprintf(out + used, size - used, "%s%.*s", i ? " | " : "",
                             (int)lengths[i], lines[i]);
        if (wrote < 0) break;
        used += (size_t)wrote;
    }
}

int gnuplot_run(Gnuplot *gnuplot, const char *script_path, FILE *warnings, HsDiag *diag)
{
    char name[64];
    snprintf(name, sizeof name, "gnuplot-%d.log", gnuplot->scripts++);
    char *log_path = gnuplot_file(gnuplot, name);
    if (log_path == NULL) return hs_diag_set(diag, HS_E_NOMEM, NULL, 0, "out of memory");
    int status = HS_OK;
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = { -1, -1 };
    if (log_fd < 0 || null_fd < 0 || pipe(report) != 0) {
        status = hs_diag_set(diag, HS_E_IO, log_path, 0, "cannot set up gnuplot: %s",
                             strerror(errno));
        goto done;
    }
    fcntl(report[0], F_SETFD, FD_CLOEXEC);
    fcntl(report[1], F_SETFD, FD_CLOEXEC);
    char *argv[] = { gnuplot->program, "-d", (char *)script_path, NULL };
    fflush(NULL);  /* no buffered output may be written twice by the child */
    pid_t pid = fork();
    if (pid < 0) {
        status = hs_diag_set(diag, HS_E_IO, NULL, 0, "cannot start gnuplot: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) {
        /* the child: only async-signal-safe calls until exec */
        signal(SIGPIPE, SIG_DFL);
        if (dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0) _exit(126);
        /* scripts name their files without a folder: they live in the private one */
        if (chdir(gnuplot->folder) != 0) _exit(126);
        execv(argv[0], argv);
        int err = errno;
        ssize_t ignored = write(report[1], &err, sizeof err);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    report[1] = -1;
    int exec_errno = 0;
    ssize_t got;
    do got = read(report[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    int wait_status = 0;
    pid_t waited;
    do waited = waitpid(pid, &wait_status, 0);
    while (waited < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof exec_errno) {
        status = hs_diag_set(diag, exec_errno == ENOENT || exec_errno == EACCES ? HS_E_MISSING
                                                                                 : HS_E_IO,
                             NULL, 0, "cannot run gnuplot '%s': %s; install it with `"
                             GNUPLOT_INSTALL_HINT "`", gnuplot->program, strerror(exec_errno));
        goto done;
    }
    char *log = read_small_file(log_path);
    if (waited < 0 || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        char summary[400];
        summarise_log(log ? log : "", summary, sizeof summary);
        if (waited >= 0 && WIFSIGNALED(wait_status))
            status = hs_diag_set(diag, HS_E_IO, script_path, 0, "gnuplot was killed by signal %d%s%s",
                                 WTERMSIG(wait_status), summary[0] ? ": " : "", summary);
        else
            status = hs_diag_set(diag, HS_E_IO, script_path, 0, "gnuplot failed (exit %d)%s%s",
                                 waited >= 0 && WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1,
                                 summary[0] ? ": " : "", summary);
    } else if (warnings != NULL && log != NULL) {
        forward_lines(log, warnings);
    }
    free(log);
done:
    if (log_fd >= 0) close(log_fd);
    if (null_fd >= 0) close(null_fd);
    if (report[0] >= 0) close(report[0]);
    if (report[1] >= 0) close(report[1]);
    free(log_path);
    return status;
}

/* Length of the valid UTF-8 sequence at p (1-4), 0 when p does not start one. */
static int utf8_sequence(const unsigned char *p)
{
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        unsigned char low = p[0] == 0xE0 ? 0xA0 : 0x80, high = p[0] == 0xED ? 0x9F : 0xBF;
        return p[1] >= low && p[1] <= high && (p[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        unsigned char low = p[0] == 0xF0 ? 0x90 : 0x80, high = p[0] == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= low && p[1] <= high && (p[2] & 0xC0) == 0x80 &&
                       (p[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* The code point of the valid sequence of length bytes at p. */
static uint32_t utf8_decode(const unsigned char *p, int length)
{
    if (length == 2) return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
    if (length == 3) return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
    return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
           (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
}

static void quote_with(FILE *out, const char *text, GnuplotGlyphs *glyphs)
{
    fputc('\'', out);
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    while (*p) {
        int length = utf8_sequence(p);
        if (length == 0) {
            fputc('?', out);
            p++;
        } else if (length > 1) {
            if (glyphs != NULL && !glyphs_draw(glyphs, utf8_decode(p, length)))
                fputc('?', out);
            else
                fwrite(p, 1, (size_t)length, out);
            p += length;
        } else {
            if (*p == '\'') fputs("''", out);
            else if (*p < 0x20 || *p == 0x7f) fputc(' ', out);
            else fputc(*p, out);
            p++;
        }
    }
    fputc('\'', out);
}

void gnuplot_quote(FILE *out, const char *text)
{
    quote_with(out, text, NULL);
}

void gnuplot_quote_drawn(FILE *out, const char *text, const Gnuplot *gnuplot)
{
    quote_with(out, text, gnuplot != NULL ? gnuplot->glyphs : NULL);
}
