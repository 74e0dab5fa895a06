/* hardware.c: datasheet entries from configs/hardware/NAME.ini (hardware.h).
 *
 * Parsed with inih. inih (Debian's build) does not hand line numbers to the
 * handler, so the file is fed through a counting reader: every entry and every
 * error knows its line, and errors read "FILE:LINE: what was wrong".
 *
 * Matching a CUDA device name: every `match` pattern (and the product name)
 * is looked for in the device name, case-insensitively, and only where it
 * starts and ends on a token boundary (the neighbouring characters are not
 * letters or digits). Without the boundary rule "L4" would match "NVIDIA L40S"
 * and "H200" would match "NVIDIA GH200". The longest matching pattern wins;
 * two different files matching equally well is a configuration error.
 */
#include "hardware.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

typedef struct hw_value {
    char *section, *key;
    double value;
} hw_value;

/* A `source` line: for a whole section (key == NULL) or one key. */
typedef struct hw_source {
    char *section, *key;
    char *text;
    int line;
} hw_source;

struct mb_datasheet {
    char *path;
    char *stem; /* file name without directory and ".ini" */
    char *name;
    char *kind;
    char *source; /* [product] source */
    char **match;
    int n_match;
    hw_value *values;
    int n_values;
    hw_source *sources;
    int n_sources;
};

static const char *const known_sections[] = { "product", "peak", "memory", "interconnect", "power", "gpu" };

/* ---- small helpers ----------------------------------------------------------- */

static char *dup_trimmed(const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    char *out = malloc(len + 1);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\0';
    }
    return out;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (ends_with(base, ".ini"))
        len -= 4;
    return dup_trimmed(base, len);
}

/* ---- loading ----------------------------------------------------------------- */

typedef struct load_ctx {
    mb_datasheet *d;
    const char *path;
    FILE *f;
    int line;          /* line most recently read */
    int long_line;     /* first line longer than the parser's buffer, or 0 */
    int error_line;    /* line of the first error recorded by the handler */
    mb_err *err;
} load_ctx;

/* fgets that counts lines. A line that does not fit the parser's buffer is
 * swallowed whole and remembered: inih would otherwise parse its tail as the
 * next line and the error would point at nonsense. */
static char *counting_reader(char *str, int num, void *stream)
{
    load_ctx *c = stream;
    char *s = fgets(str, num, c->f);
    if (!s)
        return NULL;
    c->line++;
    size_t len = strlen(s);
    if (len == (size_t)num - 1 && s[len - 1] != '\n') {
        int ch = fgetc(c->f);
        if (ch == EOF || ch == '\n')
            return s; /* it just fitted */
        while ((ch = fgetc(c->f)) != EOF && ch != '\n')
            ;
        if (!c->long_line)
            c->long_line = c->line;
    }
    return s;
}

static int fail_at(load_ctx *c, const char *fmt, const char *a, const char *b)
{
    if (!c->error_line) {
        c->error_line = c->line;
        char what[512];
        snprintf(what, sizeof what, fmt, a, b);
        mb_errf(c->err, MB_EUSAGE, "%s:%d: %s", c->path, c->line, what);
    }
    return 0; /* tells inih the line is bad */
}

static bool set_once(load_ctx *c, char **slot, const char *name, const char *value)
{
    if (*slot) {
        fail_at(c, "duplicate key '%s' in [%s]", name, "product");
        return false;
    }
    *slot = strdup(value);
    return *slot != NULL;
}

static int add_match_list(load_ctx *c, const char *value)
{
    mb_datasheet *d = c->d;
    const char *p = value;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *pat = dup_trimmed(p, len);
        if (!pat)
            return 0;
        if (!*pat) {
            free(pat);
            return fail_at(c, "empty pattern in match list '%s'%s", value, "");
        }
        char **grown = realloc(d->match, (size_t)(d->n_match + 1) * sizeof *grown);
        if (!grown) {
            free(pat);
            return 0;
        }
        d->match = grown;
        d->match[d->n_match++] = pat;
        p += len;
        if (*p == ',')
            p++;
    }
    return 1;
}

static int on_product_key(load_ctx *c, const char *name, const char *value)
{
    mb_datasheet *d = c->d;
    if (strcmp(name, "name") == 0)
        return set_once(c, &d->name, name, value);
    if (strcmp(name, "kind") == 0) {
        if (strcmp(value, "gpu") != 0 && strcmp(value, "cpu") != 0)
            return fail_at(c, "kind = '%s': expected gpu or cpu%s", value, "");
        return set_once(c, &d->kind, name, value);
    }
    if (strcmp(name, "source") == 0)
        return set_once(c, &d->source, name, value);
    if (strcmp(name, "match") == 0)
        return add_match_list(c, value);
    return fail_at(c, "unknown key '%s' in [product] (expected name, match, kind, source)%s", name,
                   "");
}

static hw_value *find_value(const mb_datasheet *d, const char *section, const char *key)
{
    for (int i = 0; i < d->n_values; i++)
        if (strcmp(d->values[i].section, section) == 0 && strcmp(d->values[i].key, key) == 0)
            return &d->values[i];
    return NULL;
}

static hw_source *find_source(const mb_datasheet *d, const char *section, const char *key)
{
    for (int i = 0; i < d->n_sources; i++) {
        const hw_source *s = &d->sources[i];
        if (strcmp(s->section, section) != 0)
            continue;
        if ((key == NULL && s->key == NULL) || (key && s->key && strcmp(s->key, key) == 0))
            return &d->sources[i];
    }
    return NULL;
}

static int add_source(load_ctx *c, const char *section, const char *key, const char *text)
{
    mb_datasheet *d = c->d;
    if (find_source(d, section, key))
        return fail_at(c, "duplicate source for '%s' in [%s]", key ? key : "(section)", section);
    if (!*text)
        return fail_at(c, "empty source in [%s]%s", section, "");
    hw_source *grown = realloc(d->sources, (size_t)(d->n_sources + 1) * sizeof *grown);
    if (!grown)
        return 0;
    d->sources = grown;
    hw_source *s = &d->sources[d->n_sources++];
    s->section = strdup(section);
    s->key = key ? strdup(key) : NULL;
    s->text = strdup(text);
    s->line = c->line;
    return s->section && s->text && (!key || s->key);
}

static int add_value(load_ctx *c, const char *section, const char *key, const char *value)
{
    mb_datasheet *d = c->d;
    if (find_value(d, section, key))
        return fail_at(c, "duplicate key '%s' in [%s]", key, section);
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    while (end && isspace((unsigned char)*end))
        end++;
    if (end == value || !end || *end || errno == ERANGE || !isfinite(v))
        return fail_at(c, "'%s' is not a number (key %s)", value, key);
    if (v < 0)
        return fail_at(c, "'%s' is negative (key %s)", value, key);
    hw_value *grown = realloc(d->values, (size_t)(d->n_values + 1) * sizeof *grown);
    if (!grown)
        return 0;
    d->values = grown;
    hw_value *hv = &d->values[d->n_values++];
    hv->section = strdup(section);
    hv->key = strdup(key);
    hv->value = v;
    return hv->section && hv->key;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    load_ctx *c = user;
    if (!*section)
        return fail_at(c, "key '%s' before any [section]%s", name, "");
    bool known = false;
    for (size_t i = 0; i < sizeof known_sections / sizeof *known_sections; i++)
        known |= strcmp(section, known_sections[i]) == 0;
    if (!known)
        return fail_at(c,
                       "unknown section [%s] (expected product, peak, memory, interconnect, "
                       "power, gpu)%s",
                       section, "");
    if (strcmp(section, "product") == 0)
        return on_product_key(c, name, value);
    if (strcmp(name, "source") == 0)
        return add_source(c, section, NULL, value);
    if (ends_with(name, "_source") && strlen(name) > strlen("_source")) {
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(strlen(name) - strlen("_source")), name);
        return add_source(c, section, key, value);
    }
    return add_value(c, section, name, value);
}

void mb_datasheet_free(mb_datasheet *d)
{
    if (!d)
        return;
    free(d->path);
    free(d->stem);
    free(d->name);
    free(d->kind);
    free(d->source);
    for (int i = 0; i < d->n_match; i++)
        free(d->match[i]);
    free(d->match);
    for (int i = 0; i < d->n_values; i++) {
        free(d->values[i].section);
        free(d->values[i].key);
    }
    free(d->values);
    for (int i = 0; i < d->n_sources; i++) {
        free(d->sources[i].section);
        free(d->sources[i].key);
        free(d->sources[i].text);
    }
    free(d->sources);
    free(d);
}

/* Checks that need the whole file: a name, a kind, no source for a key that
 * does not exist, and a source for every value. */
static int validate(const mb_datasheet *d, mb_err *err)
{
    if (!d->name || !*d->name)
        return mb_errf(err, MB_EUSAGE, "%s: [product] has no name", d->path);
    if (!d->kind)
        return mb_errf(err, MB_EUSAGE, "%s: [product] has no kind (gpu or cpu)", d->path);
    for (int i = 0; i < d->n_sources; i++) {
        const hw_source *s = &d->sources[i];
        if (s->key && !find_value(d, s->section, s->key))
            return mb_errf(err, MB_EUSAGE, "%s:%d: %s_source names no key '%s' in [%s]", d->path,
                           s->line, s->key, s->key, s->section);
    }
    for (int i = 0; i < d->n_values; i++) {
        const char *src = NULL;
        double v;
        char key[256];
        snprintf(key, sizeof key, "%s.%s", d->values[i].section, d->values[i].key);
        mb_datasheet_get(d, key, &v, &src);
        if (!src)
            return mb_errf(err, MB_EUSAGE,
                           "%s: %s has no source (add [product] source, a section source or "
                           "%s_source)",
                           d->path, key, d->values[i].key);
    }
    return MB_OK;
}

int mb_datasheet_load(const char *path, mb_datasheet **out, mb_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return mb_errf(err, MB_EUSAGE, "%s: cannot open: %s", path, strerror(errno));
    mb_datasheet *d = calloc(1, sizeof *d);
    if (!d) {
        fclose(f);
        return mb_errf(err, MB_ESYS, "out of memory loading %s", path);
    }
    d->path = strdup(path);
    d->stem = stem_of(path);
    load_ctx c = { .d = d, .path = path, .f = f, .err = err };
    int rc = ini_parse_stream(counting_reader, &c, on_entry, &c);
    fclose(f);
    int code = MB_OK;
    if (!d->path || !d->stem) {
        code = mb_errf(err, MB_ESYS, "out of memory loading %s", path);
    } else if (c.long_line && (rc == 0 || rc >= c.long_line)) {
        code = mb_errf(err, MB_EUSAGE, "%s:%d: line too long for the parser", path, c.long_line);
    } else if (rc > 0) {
        /* The handler has already said why, unless inih itself rejected the
         * line (no '=' or an unterminated [section]). */
        code = MB_EUSAGE;
        if (!c.error_line)
            mb_errf(err, MB_EUSAGE, "%s:%d: malformed line (expected [section] or key = value)",
                    path, rc);
    } else if (rc < 0) {
        code = mb_errf(err, MB_ESYS, "%s: parser failed (%d)", path, rc);
    } else {
        code = validate(d, err);
    }
    if (code != MB_OK) {
        mb_datasheet_free(d);
        return code;
    }
    *out = d;
    return MB_OK;
}

/* ---- queries ----------------------------------------------------------------- */

const char *mb_datasheet_name(const mb_datasheet *d)
{
    return d ? d->name : NULL;
}

const char *mb_datasheet_file(const mb_datasheet *d)
{
    return d ? d->path : NULL;
}

const char *mb_datasheet_stem(const mb_datasheet *d)
{
    return d ? d->stem : NULL;
}

bool mb_datasheet_is_gpu(const mb_datasheet *d)
{
    return d == NULL || d->kind == NULL || strcmp(d->kind, "cpu") != 0;
}

bool mb_datasheet_get(const mb_datasheet *d, const char *key, double *value, const char **source)
{
    if (!d || !key)
        return false;
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || !dot[1])
        return false;
    char section[64];
    snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
    const hw_value *v = find_value(d, section, dot + 1);
    if (!v)
        return false;
    if (value)
        *value = v->value;
    if (source) {
        const hw_source *s = find_source(d, section, dot + 1);
        if (!s)
            s = find_source(d, section, NULL);
        *source = s ? s->text : d->source;
    }
    return true;
}

/* ---- matching ---------------------------------------------------------------- */

/* Case-insensitive occurrence of pat in name on token boundaries. */
static bool matches_on_boundary(const char *name, const char *pat)
{
    size_t n = strlen(name), m = strlen(pat);
    if (m == 0 || m > n)
        return false;
    for (size_t i = 0; i + m <= n; i++) {
        if (strncasecmp(name + i, pat, m) != 0)
            continue;
        bool left_ok = i == 0 || !isalnum((unsigned char)name[i - 1]) ||
                       !isalnum((unsigned char)pat[0]);
        bool right_ok = i + m == n || !isalnum((unsigned char)name[i + m]) ||
                        !isalnum((unsigned char)pat[m - 1]);
        if (left_ok && right_ok)
            return true;
    }
    return false;
}

/* Length of the longest pattern of d found in device_name; 0 when none. */
static size_t match_score(const mb_datasheet *d, const char *device_name, const char **which)
{
    size_t best = 0;
    for (int i = 0; i < d->n_match; i++) {
        size_t len = strlen(d->match[i]);
        if (len > best && matches_on_boundary(device_name, d->match[i])) {
            best = len;
            *which = d->match[i];
        }
    }
    if (d->name && strlen(d->name) > best && matches_on_boundary(device_name, d->name)) {
        best = strlen(d->name);
        *which = d->name;
    }
    return best;
}

static int ini_filter(const struct dirent *e)
{
    return e->d_name[0] != '.' && ends_with(e->d_name, ".ini");
}

/* Lists <config dir>/hardware/NAME.ini in name order. */
static int list_datasheets(char *dir, size_t dir_len, struct dirent ***names, int *count,
                           mb_err *err)
{
    mb_config_path(dir, dir_len, "hardware");
    int n = scandir(dir, names, ini_filter, alphasort);
    if (n < 0)
        return mb_errf(err, MB_ESKIP, "no datasheets: %s: %s", dir, strerror(errno));
    *count = n;
    return MB_OK;
}

static void free_names(struct dirent **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void mb_datasheet_stems(char *buf, size_t len)
{
    char dir[4096];
    struct dirent **names = NULL;
    int n = 0;
    mb_err err = { 0 };
    size_t used = 0;
    buf[0] = '\0';
    if (list_datasheets(dir, sizeof dir, &names, &n, &err) != MB_OK)
        return;
    for (int i = 0; i < n; i++) {
        size_t stem = strlen(names[i]->d_name) - 4; /* ".ini" (ini_filter) */
        int w = snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "", (int)stem, names[i]->d_name);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    free_names(names, n);
}

int mb_datasheet_match(const char *device_name, mb_datasheet **out, mb_err *err)
{
    *out = NULL;
    if (!device_name || !*device_name)
        return mb_errf(err, MB_ESKIP, "no device name to look up a datasheet for");
    char dir[4096];
    struct dirent **names = NULL;
    int n = 0;
    int rc = list_datasheets(dir, sizeof dir, &names, &n, err);
    if (rc != MB_OK)
        return rc;
    mb_datasheet *best = NULL;
    size_t best_score = 0, tie_score = 0;
    const char *best_pat = NULL;
    mb_err tie = { 0 }; /* the first tie at tie_score, for the message */
    for (int i = 0; i < n && rc == MB_OK; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        mb_datasheet *d = NULL;
        rc = mb_datasheet_load(path, &d, err);
        if (rc != MB_OK)
            break;
        const char *pat = NULL;
        size_t score = match_score(d, device_name, &pat);
        /* A tie is an error only if nothing matches better: which file wins
         * must not depend on the order the directory lists them in. */
        if (score > 0 && score == best_score) {
            if (tie_score != score) {
                tie_score = score;
                tie.code = MB_OK; /* a tie at a lower score is forgotten */
                mb_errf(&tie, MB_EUSAGE, "datasheets %s and %s both match device '%s' equally well ('%s', '%s')",
                        mb_datasheet_file(best), path, device_name, best_pat, pat);
            }
            mb_datasheet_free(d);
        } else if (score > best_score) {
            mb_datasheet_free(best);
            best = d;
            best_score = score;
            best_pat = pat;
        } else {
            mb_datasheet_free(d);
        }
    }
    free_names(names, n);
    if (rc == MB_OK && best && tie_score == best_score)
        rc = mb_errf(err, MB_EUSAGE, "%s", tie.msg);
    if (rc != MB_OK) {
        mb_datasheet_free(best);
        return rc;
    }
    if (!best)
        return mb_errf(err, MB_ESKIP, "no datasheet in %s matches device '%s'", dir, device_name);
    *out = best;
    return MB_OK;
}

int mb_datasheet_find(const char *name, mb_datasheet **out, mb_err *err)
{
    *out = NULL;
    if (!name || !*name)
        return mb_errf(err, MB_EUSAGE, "empty datasheet name");
    if (strchr(name, '/') || ends_with(name, ".ini"))
        return mb_datasheet_load(name, out, err);
    char dir[4096];
    struct dirent **names = NULL;
    int n = 0;
    int rc = list_datasheets(dir, sizeof dir, &names, &n, err);
    if (rc != MB_OK)
        return mb_errf(err, MB_EUSAGE, "no datasheet named '%s'", name);
    char known[1024] = "";
    for (int i = 0; i < n && rc == MB_OK && !*out; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        mb_datasheet *d = NULL;
        rc = mb_datasheet_load(path, &d, err);
        if (rc != MB_OK)
            break;
        if (strcasecmp(d->stem, name) == 0 || strcasecmp(d->name, name) == 0) {
            *out = d;
        } else {
            size_t used = strlen(known);
            if (used + strlen(d->stem) + 3 < sizeof known)
                snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", d->stem);
            mb_datasheet_free(d);
        }
    }
    free_names(names, n);
    if (rc != MB_OK)
        return rc;
    if (!*out)
        return mb_errf(err, MB_EUSAGE, "no datasheet named '%s' in %s (known: %s)", name, dir,
                       known);
    return MB_OK;
}
