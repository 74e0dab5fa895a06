#include "suite.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <ini.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "paths.h"

#define MAX_INCLUDE_DEPTH 8
/* Job files read for one suite, includes counted: a handful in practice.
 * Without a bound, ten files that each include the next one ten times are
 * 10^7 loads and as many cases, with no loop for the depth check to see. */
#define MAX_INCLUDED_FILES 256
#define MAX_CASES MB_SUITE_MAX_CASES

/* The files being loaded, innermost first (each frame lives on the stack of
 * load_file): an include of a file already on the chain is a cycle. Files
 * are compared by device and inode, so "a.ini", "./a.ini" and a symlink to
 * it are the same file. */
typedef struct inc_chain {
    const struct inc_chain *up;
    const char *path;
    dev_t dev;
    ino_t ino;
    int depth;
    int *n_files; /* shared by the whole load */
} inc_chain;

/* One `key = value` as written, with its line. */
typedef struct kv {
    char *key, *value;
    int line;
} kv;

typedef struct section {
    char *name;
    int line;
    kv *kvs;
    int n;
} section;

/* Parser state for one file. inih does not pass line numbers to the handler
 * in Debian's build, so the reader counts the lines it hands over: when the
 * handler runs, `line` is the line it is looking at. */
typedef struct parse_ctx {
    FILE *fp;
    const char *path;
    int line;
    int section_line; /* line of the last [section] header read */
    section *sections;
    int n_sections;
    mb_err *err;
} parse_ctx;

static const char *const RUN_KEYS[] = { "repetitions",     "min_time",          "warmup_time",
                                        "iterations",      "burst_windows",     "burst_window_time",
                                        "burst_idle_time", "settle_time",       "sustained_time",
                                        "max_cv",          NULL };

static bool is_run_key(const char *k)
{
    for (int i = 0; RUN_KEYS[i]; i++)
        if (strcmp(RUN_KEYS[i], k) == 0)
            return true;
    return false;
}

static char *reader(char *str, int num, void *stream)
{
    parse_ctx *pc = stream;
    char *r = fgets(str, num, pc->fp);
    if (r) {
        pc->line++;
        /* A line longer than inih's buffer would be cut and its tail parsed
         * as the next line (a continuation, since it starts mid-value):
         * say so instead of reporting nonsense about the tail. */
        size_t len = strlen(r);
        if (len == (size_t)num - 1 && r[len - 1] != '\n') {
            int ch = fgetc(pc->fp);
            if (ch != EOF && ch != '\n') {
                mb_errf(pc->err, MB_EUSAGE,
                        "%s:%d: line longer than %d characters (the INI reader's limit): split a long list "
                        "over several sections", pc->path, pc->line, num - 2);
                return NULL;
            }
        }
        const char *p = r;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '[')
            pc->section_line = pc->line;
    }
    return r;
}

static section *section_for(parse_ctx *pc, const char *name)
{
    if (pc->n_sections > 0 && strcmp(pc->sections[pc->n_sections - 1].name, name) == 0)
        return &pc->sections[pc->n_sections - 1];
    for (int i = 0; i < pc->n_sections; i++)
        if (strcmp(pc->sections[i].name, name) == 0)
            return NULL; /* a section written twice: reported by the caller */
    section *s = realloc(pc->sections, sizeof *s * (size_t)(pc->n_sections + 1));
    if (s == NULL)
        return NULL;
    pc->sections = s;
    s = &pc->sections[pc->n_sections++];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    s->line = pc->section_line ? pc->section_line : pc->line;
    return s;
}

static int handler(void *user, const char *sec, const char *key, const char *value)
{
    parse_ctx *pc = user;
    if (pc->err->code != MB_OK)
        return 0;
    if (sec[0] == '\0') {
        mb_errf(pc->err, MB_EUSAGE, "%s:%d: '%s' outside a [section]", pc->path, pc->line, key);
        return 0;
    }
    section *s = section_for(pc, sec);
    if (s == NULL) {
        mb_errf(pc->err, MB_EUSAGE, "%s:%d: section [%s] appears twice", pc->path, pc->line, sec);
        return 0;
    }
    for (int i = 0; i < s->n; i++) {
        if (strcmp(s->kvs[i].key, key) == 0) {
            mb_errf(pc->err, MB_EUSAGE, "%s:%d: key '%s' already set at line %d", pc->path, pc->line, key,
                    s->kvs[i].line);
            return 0;
        }
    }
    kv *k = realloc(s->kvs, sizeof *k * (size_t)(s->n + 1));
    if (k == NULL) {
        mb_errf(pc->err, MB_ESYS, "out of memory");
        return 0;
    }
    s->kvs = k;
    s->kvs[s->n].key = strdup(key);
    s->kvs[s->n].value = strdup(value);
    s->kvs[s->n].line = pc->line;
    s->n++;
    return 1;
}

static void free_sections(section *s, int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < s[i].n; j++) {
            free(s[i].kvs[j].key);
            free(s[i].kvs[j].value);
        }
        free(s[i].kvs);
        free(s[i].name);
    }
    free(s);
}

static const kv *find_kv(const section *s, const char *key)
{
    for (int i = 0; s && i < s->n; i++)
        if (strcmp(s->kvs[i].key, key) == 0)
            return &s->kvs[i];
    return NULL;
}

/* Splits "a, b ,c" into trimmed items. Returns count, or -1 for an empty item. */
static int split_list(const char *value, char ***items)
{
    char *copy = strdup(value);
    int n = 0, cap = 4;
    char **out = malloc(sizeof *out * (size_t)cap);
    char *save = NULL;
    int bad = 0;
    size_t len = strlen(copy);
    if (len == 0 || copy[len - 1] == ',' || copy[0] == ',' || strstr(copy, ",,"))
        bad = 1;
    for (char *tok = strtok_r(copy, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (*tok == '\0') {
            bad = 1;
            break;
        }
        if (n == cap)
            out = realloc(out, sizeof *out * (size_t)(cap *= 2));
        out[n++] = strdup(tok);
    }
    free(copy);
    if (bad) {
        for (int i = 0; i < n; i++)
            free(out[i]);
        free(out);
        *items = NULL;
        return -1;
    }
    *items = out;
    return n;
}

static void free_list(char **items, int n)
{
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

/* The burst/sustained lengths (harness/api/phases.h) of compute cases. */
static int parse_phase_key(const char *path, const kv *k, double v, mb_case *c, mb_err *err)
{
    mb_phase_opts p = c->phases;
    if (strcmp(k->key, "burst_windows") == 0) {
        /* in range before the conversion: a double beyond int's range is undefined there (fuzz_suite) */
        if (v < 0 || v > 1e6 || v != (int)v)
            return mb_errf(err, MB_EUSAGE, "%s:%d: burst_windows: expected an integer in [0, 1e6], got '%s'", path,
                           k->line, k->value);
        p.burst_windows = (int)v;
    } else if (strcmp(k->key, "burst_window_time") == 0) {
        p.burst_window = v;
    } else if (strcmp(k->key, "burst_idle_time") == 0) {
        p.burst_idle = v;
    } else if (strcmp(k->key, "settle_time") == 0) {
        p.settle = v;
    } else if (strcmp(k->key, "sustained_time") == 0) {
        p.sustained = v;
    }
    mb_err why = { 0 };
    if (mb_phase_opts_check(&p, &why) != MB_OK)
        return mb_errf(err, MB_EUSAGE, "%s:%d: %s", path, k->line, why.msg);
    c->phases = p;
    return MB_OK;
}

static int parse_run_key(const char *path, const kv *k, mb_case *c, mb_err *err)
{
    char *end;
    errno = 0;
    double v = strtod(k->value, &end);
    while (*end == ' ')
        end++;
    /* strtod takes "nan" and "inf": every range check below would let a
     * NaN through, and converting it to an integer is undefined (fuzz_suite). */
    if (end == k->value || *end || errno || !isfinite(v))
        return mb_errf(err, MB_EUSAGE, "%s:%d: %s: '%s' is not a finite number", path, k->line, k->key, k->value);
    if (strcmp(k->key, "repetitions") == 0) {
        if (v < 1 || v > MB_MAX_REPETITIONS || v != (int)v)
            return mb_errf(err, MB_EUSAGE, "%s:%d: repetitions: expected an integer in [1, %d], got '%s'",
                           path, k->line, MB_MAX_REPETITIONS, k->value);
        c->repetitions = (int)v;
    } else if (strcmp(k->key, "min_time") == 0) {
        if (!(v > 0 && v <= MB_MAX_CASE_SECONDS))
            return mb_errf(err, MB_EUSAGE, "%s:%d: min_time: expected seconds in (0, %d], got '%s'", path,
                           k->line, MB_MAX_CASE_SECONDS, k->value);
        c->min_time = v;
    } else if (strcmp(k->key, "warmup_time") == 0) {
        if (!(v >= 0 && v <= MB_MAX_CASE_SECONDS))
            return mb_errf(err, MB_EUSAGE, "%s:%d: warmup_time: expected seconds in [0, %d], got '%s'",
                           path, k->line, MB_MAX_CASE_SECONDS, k->value);
        c->warmup_time = v;
    } else if (strcmp(k->key, "iterations") == 0) {
        if (v < 0 || v > 1e9 || v != (long long)v)
            return mb_errf(err, MB_EUSAGE, "%s:%d: iterations: expected an integer in [0, 1e9], got '%s'",
                           path, k->line, k->value);
        c->iterations = (long long)v;
    } else if (strcmp(k->key, "max_cv") == 0) {
        if (!(v >= 0 && v <= 10))
            return mb_errf(err, MB_EUSAGE, "%s:%d: max_cv: expected a fraction in [0, 10] (0 = no check), got '%s'",
                           path, k->line, k->value);
        c->max_cv = v;
    } else {
        return parse_phase_key(path, k, v, c, err);
    }
    return MB_OK;
}

/* The array grows by doubling: one slot at a time copied the whole array per
 * case, quadratic in a large suite (fuzz_suite: over 1 s under ASan). */
static int add_case(mb_suite *out, const mb_case *c)
{
    if (out->n_cases == out->cap_cases) {
        int cap = out->cap_cases ? 2 * out->cap_cases : 16;
        mb_case *cs = realloc(out->cases, sizeof *cs * (size_t)cap);
        if (cs == NULL)
            return MB_ESYS;
        out->cases = cs;
        out->cap_cases = cap;
    }
    out->cases[out->n_cases++] = *c;
    return MB_OK;
}

static char *make_id(const mb_component_ops *ops, const mb_params *p)
{
    char *key = mb_params_key(p);
    size_t len = strlen(ops->component) + strlen(ops->backend) + (key ? strlen(key) : 0) + 3;
    char *id = malloc(len);
    if (id)
        snprintf(id, len, "%s/%s/%s", ops->component, ops->backend, key ? key : "");
    free(key);
    return id;
}

/* The cases of one section: the cartesian product of every list-valued key,
 * for each backend named. */
typedef struct expand_ctx {
    const char *path;
    const section *sec;
    const section *global;
    const mb_component_ops *ops;
    const mb_param_spec *spec; /* ops->params, or one made for params_unknown */
    const kv **keys; /* parameter keys of this section + applicable globals */
    char ***lists;
    int *lens;
    int n_keys;
    mb_case run_defaults;
    mb_suite *out;
} expand_ctx;

static mb_param_spec *clone_spec(const mb_param_spec *spec);

static int expand_rec(expand_ctx *x, int depth, const char **values, mb_err *err)
{
    if (depth < x->n_keys) {
        for (int i = 0; i < x->lens[depth]; i++) {
            values[depth] = x->lists[depth][i];
            int rc = expand_rec(x, depth + 1, values, err);
            if (rc != MB_OK)
                return rc;
        }
        return MB_OK;
    }
    const char *names[256];
    for (int i = 0; i < x->n_keys; i++)
        names[i] = x->keys[i]->key;
    mb_err perr = { 0 };
    mb_params *p = mb_params_build(x->spec, names, values, x->n_keys, &perr);
    if (p == NULL) {
        /* Find the line of the offending key for the message. */
        int line = x->sec->line;
        for (int i = 0; i < x->n_keys; i++) {
            char pat[128];
            snprintf(pat, sizeof pat, "parameter %s:", names[i]);
            if (strstr(perr.msg, pat) || strstr(perr.msg, names[i]))
                line = x->keys[i]->line;
        }
        return mb_errf(err, MB_EUSAGE, "%s:%d: [%s] %s/%s: %s", x->path, line, x->sec->name, x->ops->component,
                       x->ops->backend, perr.msg);
    }
    mb_case c = x->run_defaults;
    c.ops = x->ops;
    c.params = p;
    c.section = strdup(x->sec->name);
    c.file = strdup(x->path);
    c.line = x->sec->line;
    c.id = make_id(x->ops, p);
    c.owned_spec = x->spec != x->ops->params ? clone_spec(x->spec) : NULL;
    if (c.owned_spec) { /* the params must point at the copy the case owns */
        mb_params_free(p);
        c.params = mb_params_build(c.owned_spec, names, values, x->n_keys, NULL);
    }
    if (add_case(x->out, &c) != MB_OK)
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
}

/* A spec of free-text parameters named after the section's keys, for a
 * backend whose real table is unavailable (params_unknown). */
static mb_param_spec *spec_from_keys(const section *sec)
{
    mb_param_spec *spec = calloc((size_t)sec->n + 1, sizeof *spec);
    int n = 0;
    for (int i = 0; spec && i < sec->n; i++) {
        const char *k = sec->kvs[i].key;
        if (strcmp(k, "component") == 0 || strcmp(k, "backend") == 0 || strcmp(k, "description") == 0 ||
            is_run_key(k))
            continue;
        spec[n++] = (mb_param_spec){ .name = k, .type = MB_P_STRING, .def = "", .min = 1, .max = 0 };
    }
    return spec;
}

static mb_param_spec *clone_spec(const mb_param_spec *spec)
{
    int n = 0;
    while (spec[n].name)
        n++;
    mb_param_spec *c = calloc((size_t)n + 1, sizeof *c);
    for (int i = 0; c && i < n; i++) {
        c[i] = spec[i];
        c[i].name = strdup(spec[i].name);
    }
    return c;
}

static void free_spec(mb_param_spec *spec)
{
    for (int i = 0; spec && spec[i].name; i++)
        free((char *)spec[i].name);
    free(spec);
}

static int expand_backend(const char *path, const section *sec, const section *global,
                          const mb_component_ops *ops, const mb_case *run_defaults, mb_suite *out,
                          mb_err *err)
{
    const kv *keys[256];
    char **lists[256];
    int lens[256];
    int n = 0, rc = MB_OK;
    mb_param_spec *made = ops->params_unknown ? spec_from_keys(sec) : NULL;
    const mb_param_spec *spec = made ? made : ops->params;
    /* Section keys first; then globals that are parameters of this backend
     * and are not overridden by the section. */
    for (int pass = 0; pass < 2; pass++) {
        const section *s = pass == 0 ? sec : global;
        for (int i = 0; s && i < s->n && n < 256; i++) {
            const kv *k = &s->kvs[i];
            if (strcmp(k->key, "component") == 0 || strcmp(k->key, "backend") == 0 ||
                strcmp(k->key, "include") == 0 || strcmp(k->key, "description") == 0 || is_run_key(k->key))
                continue;
            if (pass == 1 && (find_kv(sec, k->key) || !mb_param_spec_find(spec, k->key)))
                continue;
            if (mb_param_spec_find(spec, k->key) == NULL) {
                rc = mb_errf(err, MB_EUSAGE, "%s:%d: [%s] unknown key '%s' for %s/%s (see `mlbench list`)",
                             path, k->line, sec->name, k->key, ops->component, ops->backend);
                goto done;
            }
            int len = split_list(k->value, &lists[n]);
            if (len < 0) {
                rc = mb_errf(err, MB_EUSAGE, "%s:%d: [%s] %s: empty item in list '%s'", path, k->line,
                             sec->name, k->key, k->value);
                goto done;
            }
            const mb_param_spec *ps = mb_param_spec_find(spec, k->key);
            for (int j = 0; j < len; j++) {
                mb_err perr = { 0 };
                if (mb_param_check(ps, lists[n][j], &perr) != MB_OK) {
                    free_list(lists[n], len);
                    rc = mb_errf(err, MB_EUSAGE, "%s:%d: [%s] %s", path, k->line, sec->name, perr.msg);
                    goto done;
                }
            }
            keys[n] = k;
            lens[n] = len;
            n++;
        }
    }
    double product = 1;
    for (int i = 0; i < n; i++)
        product *= lens[i];
    if (product + out->n_cases > MAX_CASES) {
        rc = mb_errf(err, MB_EUSAGE, "%s:%d: [%s] the lists give %.0f cases; a suite holds at most %d", path,
                     sec->line, sec->name, product, MAX_CASES);
        goto done;
    }
    expand_ctx x = { path, sec, global, ops, spec, keys, lists, lens, n, *run_defaults, out };
    const char *values[256];
    rc = expand_rec(&x, 0, values, err);
done:
    for (int i = 0; i < n; i++)
        free_list(lists[i], lens[i]);
    free(made); /* names borrowed from the section; cases own clones */
    return rc;
}

static int load_file(const char *path, mb_suite *out, const inc_chain *up, int *n_files, mb_err *err);

static int resolve_include(const char *including, const char *name, char *buf, size_t len)
{
    struct stat st;
    if (name[0] == '/') {
        snprintf(buf, len, "%s", name);
        return stat(buf, &st) == 0 ? 0 : -1;
    }
    const char *slash = strrchr(including, '/');
    if (slash)
        snprintf(buf, len, "%.*s/%s", (int)(slash - including), including, name);
    else
        snprintf(buf, len, "%s", name);
    if (stat(buf, &st) == 0)
        return 0;
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "suites/%s", name);
    mb_config_path(buf, len, rel);
    return stat(buf, &st) == 0 ? 0 : -1;
}

/* "a.ini -> b.ini -> a.ini" for an include of `again` from the chain. */
static void chain_text(const inc_chain *c, const char *again, char *buf, size_t len)
{
    if (c == NULL) {
        snprintf(buf, len, "%s", again);
        return;
    }
    chain_text(c->up, c->path, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, " -> %s", again);
}

/* MB_OK when `full` may be loaded from the file `self`. */
static int check_include(const inc_chain *self, const char *full, int line, mb_err *err)
{
    struct stat st;
    if (stat(full, &st) != 0)
        return mb_errno(err, MB_EUSAGE, "%s:%d: include: cannot open %s", self->path, line, full);
    for (const inc_chain *c = self; c; c = c->up) {
        if (c->dev == st.st_dev && c->ino == st.st_ino) {
            char chain[2048];
            chain_text(self, full, chain, sizeof chain);
            return mb_errf(err, MB_EUSAGE, "%s:%d: include cycle: %s%s", self->path, line, chain,
                           c == self ? " (the file includes itself)" : "");
        }
    }
    if (*self->n_files >= MAX_INCLUDED_FILES)
        return mb_errf(err, MB_EUSAGE, "%s:%d: include: more than %d job files read for one suite "
                       "(the same files included over and over?)", self->path, line, MAX_INCLUDED_FILES);
    return MB_OK;
}

static int process_sections(const char *path, section *secs, int n, mb_suite *out, const inc_chain *self,
                            mb_err *err)
{
    const section *global = NULL;
    mb_case defaults = { .repetitions = MB_DEFAULT_REPETITIONS,
                         .min_time = MB_DEFAULT_MIN_TIME,
                         .warmup_time = MB_DEFAULT_WARMUP_TIME,
                         .phases = { MB_DEFAULT_BURST_WINDOWS, MB_DEFAULT_BURST_WINDOW_TIME,
                                     MB_DEFAULT_BURST_IDLE_TIME, MB_DEFAULT_SETTLE_TIME,
                                     MB_DEFAULT_SUSTAINED_TIME },
                         .max_cv = MB_DEFAULT_MAX_CV };
    for (int i = 0; i < n; i++) {
        if (strcasecmp(secs[i].name, "global") != 0)
            continue;
        global = &secs[i];
        for (int j = 0; j < global->n; j++) {
            const kv *k = &global->kvs[j];
            if (is_run_key(k->key)) {
                if (parse_run_key(path, k, &defaults, err) != MB_OK)
                    return MB_EUSAGE;
            } else if (strcmp(k->key, "include") == 0 || strcmp(k->key, "description") == 0) {
                continue;
            } else {
                /* Must be a parameter of at least one backend. */
                bool known = false;
                for (size_t r = 0; r < mb_registry_count() && !known; r++)
                    known = mb_registry_at(r)->params_unknown ||
                            mb_param_spec_find(mb_registry_at(r)->params, k->key) != NULL;
                if (!known)
                    return mb_errf(err, MB_EUSAGE, "%s:%d: [global] unknown key '%s'", path, k->line, k->key);
            }
        }
    }
    /* Includes come first, in the order listed. */
    const kv *inc = global ? find_kv(global, "include") : NULL;
    if (inc) {
        if (self->depth >= MAX_INCLUDE_DEPTH)
            return mb_errf(err, MB_EUSAGE, "%s:%d: includes nested deeper than %d (a loop?)", path, inc->line,
                           MAX_INCLUDE_DEPTH);
        char **items;
        int m = split_list(inc->value, &items);
        if (m < 0)
            return mb_errf(err, MB_EUSAGE, "%s:%d: include: empty item in '%s'", path, inc->line, inc->value);
        int rc = MB_OK;
        for (int i = 0; i < m && rc == MB_OK; i++) {
            char full[PATH_MAX];
            if (resolve_include(path, items[i], full, sizeof full) != 0)
                rc = mb_errf(err, MB_EUSAGE, "%s:%d: include: cannot find '%s'", path, inc->line, items[i]);
            else if ((rc = check_include(self, full, inc->line, err)) == MB_OK)
                rc = load_file(full, out, self, self->n_files, err);
        }
        free_list(items, m);
        if (rc != MB_OK)
            return rc;
    }
    for (int i = 0; i < n; i++) {
        const section *s = &secs[i];
        if (s == global)
            continue;
        mb_case run = defaults;
        for (int j = 0; j < s->n; j++)
            if (is_run_key(s->kvs[j].key) && parse_run_key(path, &s->kvs[j], &run, err) != MB_OK)
                return MB_EUSAGE;
        const kv *comp = find_kv(s, "component");
        if (comp == NULL)
            return mb_errf(err, MB_EUSAGE, "%s:%d: [%s] has no 'component =' (one of `mlbench list`)", path,
                           s->line, s->name);
        if (mb_registry_find(comp->value, NULL) == NULL)
            return mb_errf(err, MB_EUSAGE, "%s:%d: [%s] unknown component '%s' (see `mlbench list`)", path,
                           comp->line, s->name, comp->value);
        const kv *back = find_kv(s, "backend");
        char **backends = NULL;
        int nb = 1;
        if (back) {
            nb = split_list(back->value, &backends);
            if (nb < 0)
                return mb_errf(err, MB_EUSAGE, "%s:%d: backend: empty item in '%s'", path, back->line,
                               back->value);
        }
        int rc = MB_OK;
        for (int b = 0; b < nb && rc == MB_OK; b++) {
            const mb_component_ops *ops = mb_registry_find(comp->value, backends ? backends[b] : NULL);
            if (ops == NULL)
                rc = mb_errf(err, MB_EUSAGE, "%s:%d: [%s] component '%s' has no backend '%s'", path, back->line,
                             s->name, comp->value, backends[b]);
            else
                rc = expand_backend(path, s, global, ops, &run, out, err);
        }
        free_list(backends, backends ? nb : 0);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

static int load_file(const char *path, mb_suite *out, const inc_chain *up, int *n_files, mb_err *err)
{
    parse_ctx pc = { .path = path, .err = err };
    /* A FIFO, a terminal or /dev/stdin would block the read (fuzz_suite
     * found `include = 7` naming one of its own fds): job files are files. */
    struct stat pre;
    if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode))
        return mb_errf(err, MB_EUSAGE, "job file %s: not a regular file", path);
    pc.fp = fopen(path, "r");
    if (pc.fp == NULL)
        return mb_errno(err, MB_EUSAGE, "cannot open job file %s", path);
    struct stat st;
    if (fstat(fileno(pc.fp), &st) != 0) {
        fclose(pc.fp);
        return mb_errno(err, MB_EUSAGE, "cannot read job file %s", path);
    }
    inc_chain self = { .up = up, .path = path, .dev = st.st_dev, .ino = st.st_ino,
                       .depth = up ? up->depth + 1 : 0, .n_files = n_files };
    (*n_files)++;
    int bad = ini_parse_stream(reader, &pc, handler, &pc);
    fclose(pc.fp);
    int rc = MB_OK;
    if (err->code != MB_OK)
        rc = err->code;
    else if (bad > 0)
        rc = mb_errf(err, MB_EUSAGE, "%s:%d: expected '[section]', 'key = value' or a comment", path, bad);
    else if (bad < 0)
        rc = mb_errf(err, MB_ESYS, "%s: out of memory or unreadable", path);
    else
        rc = process_sections(path, pc.sections, pc.n_sections, out, &self, err);
    free_sections(pc.sections, pc.n_sections);
    return rc;
}

void mb_suite_free(mb_suite *s)
{
    for (int i = 0; i < s->n_cases; i++) {
        free(s->cases[i].id);
        free(s->cases[i].section);
        free(s->cases[i].file);
        mb_params_free(s->cases[i].params);
        free_spec(s->cases[i].owned_spec);
    }
    free(s->cases);
    free(s->name);
    memset(s, 0, sizeof *s);
}

int mb_suite_load_file(const char *path, mb_suite *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->name = strdup(path);
    int n_files = 0;
    int rc = load_file(path, out, NULL, &n_files, err);
    if (rc != MB_OK)
        mb_suite_free(out);
    return rc;
}

static int resolve_suite(const char *item, char *buf, size_t len)
{
    struct stat st;
    if (strchr(item, '/') || strstr(item, ".ini")) {
        snprintf(buf, len, "%s", item);
        return stat(buf, &st) == 0 ? 0 : -1;
    }
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "suites/%s.ini", item);
    mb_config_path(buf, len, rel);
    return stat(buf, &st) == 0 ? 0 : -1;
}

int mb_suite_load(const char *spec, mb_suite *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    char **items;
    int n = split_list(spec, &items);
    if (n < 0)
        return mb_errf(err, MB_EUSAGE, "--suite: empty item in '%s'", spec);
    int rc = MB_OK;
    for (int i = 0; i < n && rc == MB_OK; i++) {
        char path[PATH_MAX];
        if (resolve_suite(items[i], path, sizeof path) != 0) {
            char names[1024], near[64], hint[96] = "";
            mb_suite_names(names, sizeof names);
            if (mb_did_you_mean(items[i], names, near, sizeof near))
                snprintf(hint, sizeof hint, " - did you mean '%s'?", near);
            rc = mb_errf(err, MB_EUSAGE, "--suite: no suite named '%s'%s (known: %s; or a path to a job file)",
                         items[i], hint, names);
        } else {
            int n_files = 0;
            rc = load_file(path, out, NULL, &n_files, err);
        }
    }
    free_list(items, n);
    if (rc != MB_OK)
        mb_suite_free(out);
    else
        out->name = strdup(spec);
    return rc;
}

int mb_suite_filter(mb_suite *s, const char *pattern, mb_err *err)
{
    regex_t re;
    int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &re, msg, sizeof msg);
        return mb_errf(err, MB_EUSAGE, "--filter '%s': %s", pattern, msg);
    }
    int kept = 0;
    for (int i = 0; i < s->n_cases; i++) {
        mb_case *c = &s->cases[i];
        if (regexec(&re, c->id, 0, NULL, 0) == 0 || regexec(&re, c->section, 0, NULL, 0) == 0) {
            s->cases[kept++] = *c;
        } else {
            free(c->id);
            free(c->section);
            free(c->file);
            mb_params_free(c->params);
            free_spec(c->owned_spec);
        }
    }
    s->n_cases = kept;
    regfree(&re);
    return MB_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void mb_suite_names(char *buf, size_t len)
{
    char dir[PATH_MAX];
    mb_config_path(dir, sizeof dir, "suites");
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".ini") == 0)
            names[n++] = strndup(e->d_name, l - 4);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
}

/* ---- did you mean ------------------------------------------------------------- */

/* Levenshtein distance (insert, delete, substitute), case-insensitive; words
 * here are short names (suites, subcommands): longer ones count as far. */
static int edit_distance(const char *a, const char *b)
{
    enum { MAX = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX || lb >= MAX)
        return MAX;
    int prev[MAX + 1], cur[MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

bool mb_did_you_mean(const char *word, const char *list, char *buf, size_t len)
{
    int best = -1;
    const char *p = list;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ", ");
        char name[64];
        if (n > 0 && n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            int d = edit_distance(word, name);
            if (d > 0 && d <= 2 && 2 * d < (int)strlen(word) && (best < 0 || d < best)) {
                best = d;
                snprintf(buf, len, "%s", name);
            }
        }
        p += n;
    }
    return best >= 0;
}
