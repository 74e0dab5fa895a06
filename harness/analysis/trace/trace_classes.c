/* trace_classes.c: the rules that classify kernels, runtime calls and
 * annotations, read from configs/gap/kernel_classes.ini (data, not code).
 *
 * Each ini key is a class, each value a POSIX extended regex matched
 * case-insensitively; within a section the first match in file order wins.
 * The ini format is read with inih (libinih), which hands keys to us in file
 * order and allows a key to repeat. */
#include "trace.h"

#include <ini.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "paths.h"

enum { TR_CACHE_MAX = 1 << 16 };

static const char *const fixed_classes[TR_CLASS_FIXED] = {
    [TR_CLASS_OTHER] = "other", [TR_CLASS_GEMM] = "gemm",     [TR_CLASS_CONV] = "conv",
    [TR_CLASS_NCCL] = "nccl",   [TR_CLASS_MEMCPY] = "memcpy", [TR_CLASS_MEMSET] = "memset",
};

typedef struct load_ctx {
    tr_rules *r;
    mb_err *err;
    bool failed;
} load_ctx;

static int class_index(tr_rules *r, const char *name, mb_err *err, const char *where)
{
    for (int i = 0; i < r->n_classes; i++)
        if (strcmp(r->class_names[i], name) == 0)
            return i;
    if (r->n_classes >= TR_MAX_CLASSES)
        return -mb_errf(err, MB_EUSAGE, "%s: more than %d kernel classes", where, TR_MAX_CLASSES);
    char *copy = strdup(name);
    if (copy == NULL)
        return -mb_errf(err, MB_ESYS, "out of memory");
    r->class_names[r->n_classes] = copy;
    return r->n_classes++;
}

static int value_of(int set, const char *key)
{
    static const char *const rt[] = {[TR_RT_LAUNCH] = "launch", [TR_RT_SYNC] = "sync",
                                     [TR_RT_BLOCKING] = "blocking", [TR_RT_SETUP] = "setup"};
    static const char *const ann[] = {[TR_ANN_STEP] = "step", [TR_ANN_DATALOADER] = "dataloader",
                                      [TR_ANN_COLLECTIVE] = "collective", [TR_ANN_OPTIMIZER] = "optimizer",
                                      [TR_ANN_COMPILE] = "compile"};
    if (set == TR_SET_RUNTIME) {
        for (int i = 1; i <= TR_RT_SETUP; i++)
            if (strcmp(key, rt[i]) == 0)
                return i;
    } else if (set == TR_SET_DISPATCH) {
        if (strcmp(key, "metadata") == 0)
            return TR_DISPATCH_METADATA;
    } else if (set == TR_SET_MEMOP) {
        if (strcmp(key, "out") == 0)
            return TR_MOP_OUT;
        if (strcmp(key, "inplace") == 0)
            return TR_MOP_INPLACE;
        if (strcmp(key, "reduce") == 0)
            return TR_MOP_REDUCE;
        if (strcmp(key, "gradient") == 0)
            return TR_MOP_GRADIENT;
        if (strcmp(key, "gather") == 0)
            return TR_MOP_GATHER;
        if (strcmp(key, "pick") == 0)
            return TR_MOP_PICK;
        if (strcmp(key, "arguments") == 0)
            return TR_MOP_ARGS;
        if (strcmp(key, "update") == 0)
            return TR_MOP_UPDATE;
        if (strcmp(key, "bag") == 0)
            return TR_MOP_BAG;
    } else {
        for (int i = 1; i <= TR_ANN_COMPILE; i++)
            if (strcmp(key, ann[i]) == 0)
                return i;
    }
    return -1;
}

/* glibc's regcomp copies the operand of `+` and `{m,n}` (up to n times) and
 * nests those copies: a few dozen stacked or nested repetitions take
 * exponential time and memory to compile (fuzz_gapconfig found `e+++...+`).
 * The shipped rules use at most one; a rule may use MAX_DUP_OPS, bounds up to
 * MAX_DUP_COUNT, and never two repetition operators in a row (undefined in
 * POSIX EREs anyway). */
enum { MAX_DUP_OPS = 8, MAX_DUP_COUNT = 255, MAX_PATTERN = 1024 };

static const char *pattern_too_costly(const char *p)
{
    if (strlen(p) > MAX_PATTERN)
        return "longer than 1024 characters";
    int dups = 0;
    bool prev_quant = false;
    for (const char *c = p; *c; c++) {
        bool quant = false;
        if (*c == '\\' && c[1]) {
            c++;
        } else if (*c == '[') { /* a bracket expression: no operators inside */
            const char *q = c + 1;
            if (*q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']')
                q++;
            if (*q == '\0')
                break; /* unterminated: regcomp says so */
            c = q;
        } else if (*c == '+' || *c == '*' || *c == '?' || *c == '{') {
            quant = true;
            if (prev_quant)
                return "two repetition operators in a row";
            if (*c == '+' || *c == '{')
                dups++;
            if (*c == '{') {
                char *end;
                for (const char *q = c + 1; *q && *q != '}'; q = end) {
                    long n = strtol(q, &end, 10);
                    if (end == q)
                        end = (char *)q + 1;
                    else if (n > MAX_DUP_COUNT)
                        return "a repetition count over 255";
                }
                const char *close = strchr(c, '}');
                if (close)
                    c = close;
            }
        }
        prev_quant = quant;
    }
    if (dups > MAX_DUP_OPS)
        return "more than 8 '+' or '{m,n}' repetitions";
    return NULL;
}

static int add_rule(tr_rules *r, int set, int value, const char *pattern, const char *where,
                    mb_err *err)
{
    const char *costly = pattern_too_costly(pattern);
    if (costly)
        return mb_errf(err, MB_EUSAGE, "%s: regular expression \"%.80s\" too costly to compile: %s", where, pattern,
                       costly);
    tr_rule *grown = realloc(r->rules[set], sizeof *grown * (size_t)(r->n_rules[set] + 1));
    if (grown == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    r->rules[set] = grown;
    tr_rule *rule = &grown[r->n_rules[set]];
    int rc = regcomp(&rule->re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &rule->re, msg, sizeof msg);
        return mb_errf(err, MB_EUSAGE, "%s: bad regular expression \"%s\": %s", where, pattern, msg);
    }
    rule->value = value;
    r->n_rules[set]++;
    return MB_OK;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    load_ctx *c = user;
    tr_rules *r = c->r;
    char where[4200];
    snprintf(where, sizeof where, "%s [%s] %s", r->path, section, name);
    int set;
    if (strcmp(section, "kernel") == 0)
        set = TR_SET_KERNEL;
    else if (strcmp(section, "runtime") == 0)
        set = TR_SET_RUNTIME;
    else if (strcmp(section, "annotation") == 0)
        set = TR_SET_ANNOTATION;
    else if (strcmp(section, "memory_op") == 0)
        set = TR_SET_MEMOP;
    else if (strcmp(section, "dispatch_op") == 0)
        set = TR_SET_DISPATCH;
    else {
        mb_errf(c->err, MB_EUSAGE,
                "%s: unknown section [%s] (expected kernel, runtime, annotation, memory_op, dispatch_op)",
                r->path, section);
        c->failed = true;
        return 0;
    }
    int v;
    if (set == TR_SET_KERNEL) {
        if (strcmp(name, "memcpy") == 0 || strcmp(name, "memset") == 0) {
            mb_errf(c->err, MB_EUSAGE, "%s: memcpy/memset come from the event category, not a rule",
                    where);
            c->failed = true;
            return 0;
        }
        v = class_index(r, name, c->err, where);
        if (v < 0) {
            c->failed = true;
            return 0;
        }
    } else {
        v = value_of(set, name);
        if (v < 0) {
            mb_errf(c->err, MB_EUSAGE, "%s: unknown key (expected %s)", where,
                    set == TR_SET_RUNTIME  ? "launch, sync or blocking"
                    : set == TR_SET_MEMOP ? "out, inplace, reduce, gradient, gather, bag, pick, arguments or update"
                    : set == TR_SET_DISPATCH ? "metadata"
                                          : "step, dataloader or collective");
            c->failed = true;
            return 0;
        }
    }
    if (add_rule(r, set, v, value, where, c->err) != MB_OK) {
        c->failed = true;
        return 0;
    }
    return 1;
}

int mb_tr_rules_load(tr_rules *r, const char *path, mb_err *err)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < TR_CLASS_FIXED; i++) {
        r->class_names[i] = strdup(fixed_classes[i]);
        if (r->class_names[i] == NULL) {
            mb_tr_rules_free(r);
            return mb_errf(err, MB_ESYS, "out of memory");
        }
        r->n_classes++;
    }
    if (path)
        snprintf(r->path, sizeof r->path, "%s", path);
    else
        mb_config_path(r->path, sizeof r->path, "gap/kernel_classes.ini");
    FILE *f = fopen(r->path, "r");
    if (f == NULL) {
        int rc = mb_errno(err, MB_EUSAGE, "cannot open the kernel class rules %s", r->path);
        mb_tr_rules_free(r);
        return rc;
    }
    load_ctx c = {.r = r, .err = err};
    int line = ini_parse_file(f, on_key, &c);
    fclose(f);
    if (line != 0 || c.failed) {
        if (!c.failed)
            mb_errf(err, MB_EUSAGE, "%s:%d: not a valid ini line (expected key = regex)", r->path, line);
        else if (line > 0 && err && strlen(err->msg) + 16 < sizeof err->msg) {
            /* inih returns the line of the first line a handler refused. */
            char tail[32];
            snprintf(tail, sizeof tail, " (line %d)", line);
            strcat(err->msg, tail);
        }
        mb_tr_rules_free(r);
        return err ? err->code : MB_EUSAGE;
    }
    if (r->n_rules[TR_SET_ANNOTATION] == 0 || r->n_rules[TR_SET_RUNTIME] == 0) {
        mb_errf(err, MB_EUSAGE, "%s: needs [runtime] launch/sync and [annotation] step rules", r->path);
        mb_tr_rules_free(r);
        return MB_EUSAGE;
    }
    r->layout_class = -1;
    for (int i = TR_CLASS_FIXED; i < r->n_classes; i++)
        if (strcmp(r->class_names[i], "layout") == 0)
            r->layout_class = i;
    return MB_OK;
}

void mb_tr_rules_free(tr_rules *r)
{
    for (int s = 0; s < TR_N_SETS; s++) {
        for (int i = 0; i < r->n_rules[s]; i++)
            regfree(&r->rules[s][i].re);
        free(r->rules[s]);
        r->rules[s] = NULL;
        r->n_rules[s] = 0;
    }
    for (int i = 0; i < r->n_classes; i++)
        free(r->class_names[i]);
    r->n_classes = 0;
    for (size_t i = 0; i < r->cache_cap; i++)
        free(r->cache[i].name);
    free(r->cache);
    r->cache = NULL;
    r->cache_cap = r->cache_used = 0;
}

static int evaluate(const tr_rules *r, int set, const char *name)
{
    for (int i = 0; i < r->n_rules[set]; i++)
        if (regexec(&r->rules[set][i].re, name, 0, NULL, 0) == 0)
            return r->rules[set][i].value;
    return 0;
}

static uint64_t hash_name(int set, const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)set; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Open addressing, kept at most half full; grows by doubling. */
static bool cache_grow(tr_rules *r)
{
    size_t cap = r->cache_cap ? r->cache_cap * 2 : 1024;
    tr_cache_entry *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return false;
    for (size_t i = 0; i < r->cache_cap; i++) {
        tr_cache_entry *e = &r->cache[i];
        if (e->name == NULL)
            continue;
        size_t j = e->hash & (cap - 1);
        while (t[j].name)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(r->cache);
    r->cache = t;
    r->cache_cap = cap;
    return true;
}

int mb_tr_classify(tr_rules *r, int set, const char *name, size_t len)
{
    uint64_t h = hash_name(set, name, len);
    if (r->cache_cap) {
        for (size_t j = h & (r->cache_cap - 1);; j = (j + 1) & (r->cache_cap - 1)) {
            tr_cache_entry *e = &r->cache[j];
            if (e->name == NULL)
                break;
            /* memcmp over len: a JSON name may hold \u0000, so the stored
             * copy and the name are compared as bytes, not C strings. */
            if (e->hash == h && e->set == set && e->len == len && memcmp(e->name, name, len) == 0)
                return e->value;
        }
    }
    int v = evaluate(r, set, name);
    if (r->cache_used >= TR_CACHE_MAX)
        return v;
    if ((r->cache_used + 1) * 2 > r->cache_cap && !cache_grow(r))
        return v; /* no memory for the cache: classification still works */
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return v;
    memcpy(copy, name, len);
    copy[len] = '\0';
    size_t j = h & (r->cache_cap - 1);
    while (r->cache[j].name)
        j = (j + 1) & (r->cache_cap - 1);
    r->cache[j] = (tr_cache_entry){.name = copy, .len = len, .hash = h, .set = set, .value = v};
    r->cache_used++;
    return v;
}
