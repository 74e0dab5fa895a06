#include "params.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct mb_params {
    const mb_param_spec *spec;
    int n;
    char **values;  /* normalised text, spec order */
    bool *set;      /* given by the job file */
};

double mb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int mb_parse_size(const char *text, long long *out, mb_err *err)
{
    const char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || *s == '-')
        return mb_errf(err, MB_EUSAGE, "'%s' is not a size (expected e.g. 4096, 4k, 1m, 1g)", text);
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno)
        return mb_errf(err, MB_EUSAGE, "'%s' is not a size (expected e.g. 4096, 4k, 1m, 1g)", text);
    double mult = 1;
    switch (tolower((unsigned char)*end)) {
    case 'k': mult = 1024.0; end++; break;
    case 'm': mult = 1048576.0; end++; break;
    case 'g': mult = 1073741824.0; end++; break;
    case 't': mult = 1099511627776.0; end++; break;
    default: break;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    double bytes = v * mult;
    if (*end != '\0' || bytes != floor(bytes) || bytes > 9.2e18)
        return mb_errf(err, MB_EUSAGE, "'%s' is not a whole size in bytes (expected e.g. 4096, 4k, 1m, 1g)",
                       text);
    *out = (long long)bytes;
    return MB_OK;
}

static int parse_int(const char *text, long long *out)
{
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (end == text || *end || errno)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *text, double *out)
{
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == text || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *text, bool *out)
{
    static const char *yes[] = { "1", "true", "yes", "on" }, *no[] = { "0", "false", "no", "off" };
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(text, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

static bool enum_has(const char *choices, const char *value)
{
    size_t n = strlen(value);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, value, n) == 0)
            return true;
        c = bar ? bar + 1 : NULL;
    }
    return false;
}

const char *mb_param_type_name(mb_param_type t)
{
    switch (t) {
    case MB_P_INT: return "int";
    case MB_P_SIZE: return "size";
    case MB_P_DOUBLE: return "number";
    case MB_P_STRING: return "text";
    case MB_P_ENUM: return "choice";
    case MB_P_BOOL: return "bool";
    }
    return "?";
}

static int check_range(const mb_param_spec *ps, double v, const char *value, mb_err *err)
{
    if (ps->min <= ps->max && (v < ps->min || v > ps->max))
        return mb_errf(err, MB_EUSAGE, "parameter %s: %s is out of range [%g, %g]", ps->name, value,
                       ps->min, ps->max);
    return MB_OK;
}

int mb_param_check(const mb_param_spec *ps, const char *value, mb_err *err)
{
    long long i;
    double d;
    bool b;
    switch (ps->type) {
    case MB_P_INT:
        if (parse_int(value, &i))
            return mb_errf(err, MB_EUSAGE, "parameter %s: '%s' is not an integer", ps->name, value);
        return check_range(ps, (double)i, value, err);
    case MB_P_SIZE: {
        mb_err e = { 0 };
        if (mb_parse_size(value, &i, &e))
            return mb_errf(err, MB_EUSAGE, "parameter %s: %s", ps->name, e.msg);
        return check_range(ps, (double)i, value, err);
    }
    case MB_P_DOUBLE:
        if (parse_double(value, &d))
            return mb_errf(err, MB_EUSAGE, "parameter %s: '%s' is not a number", ps->name, value);
        return check_range(ps, d, value, err);
    case MB_P_ENUM:
        if (!enum_has(ps->choices, value))
            return mb_errf(err, MB_EUSAGE, "parameter %s: '%s' is not one of %s", ps->name, value,
                           ps->choices);
        return MB_OK;
    case MB_P_BOOL:
        if (parse_bool(value, &b))
            return mb_errf(err, MB_EUSAGE, "parameter %s: '%s' is not a boolean (true/false)", ps->name,
                           value);
        return MB_OK;
    case MB_P_STRING:
        return MB_OK;
    }
    return MB_OK;
}

const mb_param_spec *mb_param_spec_find(const mb_param_spec *spec, const char *name)
{
    for (const mb_param_spec *ps = spec; ps && ps->name; ps++)
        if (strcmp(ps->name, name) == 0)
            return ps;
    return NULL;
}

static int spec_len(const mb_param_spec *spec)
{
    int n = 0;
    while (spec && spec[n].name)
        n++;
    return n;
}

/* Sizes are stored as plain byte counts so identities compare equal. */
static char *normalise(const mb_param_spec *ps, const char *value)
{
    char buf[64];
    long long v;
    if (ps->type == MB_P_SIZE && mb_parse_size(value, &v, NULL) == MB_OK) {
        snprintf(buf, sizeof buf, "%lld", v);
        return strdup(buf);
    }
    if (ps->type == MB_P_BOOL) {
        bool b = false;
        parse_bool(value, &b);
        return strdup(b ? "true" : "false");
    }
    return strdup(value);
}

void mb_params_free(mb_params *p)
{
    if (p == NULL)
        return;
    for (int i = 0; i < p->n; i++)
        free(p->values[i]);
    free(p->values);
    free(p->set);
    free(p);
}

mb_params *mb_params_build(const mb_param_spec *spec, const char *const *names,
                           const char *const *values, int n, mb_err *err)
{
    mb_params *p = calloc(1, sizeof *p);
    if (p == NULL)
        goto oom;
    p->spec = spec;
    p->n = spec_len(spec);
    p->values = calloc((size_t)p->n + 1, sizeof *p->values);
    p->set = calloc((size_t)p->n + 1, sizeof *p->set);
    if (p->values == NULL || p->set == NULL)
        goto oom;
    for (int i = 0; i < n; i++) {
        const mb_param_spec *ps = mb_param_spec_find(spec, names[i]);
        if (ps == NULL) {
            mb_errf(err, MB_EUSAGE, "unknown parameter '%s'", names[i]);
            goto fail;
        }
        if (mb_param_check(ps, values[i], err) != MB_OK)
            goto fail;
        int idx = (int)(ps - spec);
        free(p->values[idx]);
        p->values[idx] = normalise(ps, values[i]);
        p->set[idx] = true;
        if (p->values[idx] == NULL)
            goto oom;
    }
    for (int i = 0; i < p->n; i++) {
        if (p->values[i])
            continue;
        if (spec[i].def == NULL) {
            mb_errf(err, MB_EUSAGE, "parameter %s is required", spec[i].name);
            goto fail;
        }
        p->values[i] = normalise(&spec[i], spec[i].def);
        if (p->values[i] == NULL)
            goto oom;
    }
    return p;
oom:
    mb_errf(err, MB_ESYS, "out of memory building parameters");
fail:
    mb_params_free(p);
    return NULL;
}

mb_params *mb_params_clone(const mb_params *src)
{
    const char *names[256], *values[256];
    int n = 0;
    for (int i = 0; i < src->n && n < 256; i++) {
        if (src->set[i]) {
            names[n] = src->spec[i].name;
            values[n++] = src->values[i];
        }
    }
    return mb_params_build(src->spec, names, values, n, NULL);
}

static int index_of(const mb_params *p, const char *name)
{
    for (int i = 0; p && i < p->n; i++)
        if (strcmp(p->spec[i].name, name) == 0)
            return i;
    assert(!"parameter not in the component's spec");
    return -1;
}

const char *mb_param_str_opt(const mb_params *p, const char *name)
{
    for (int i = 0; p && i < p->n; i++)
        if (strcmp(p->spec[i].name, name) == 0)
            return p->values[i];
    return NULL;
}

const char *mb_param_str(const mb_params *p, const char *name)
{
    int i = index_of(p, name);
    return i < 0 ? "" : p->values[i];
}

long long mb_param_int(const mb_params *p, const char *name)
{
    int i = index_of(p, name);
    if (i < 0)
        return 0;
    long long v = 0;
    if (p->spec[i].type == MB_P_SIZE)
        mb_parse_size(p->values[i], &v, NULL);
    else if (parse_int(p->values[i], &v))
        v = 0;
    return v;
}

double mb_param_double(const mb_params *p, const char *name)
{
    int i = index_of(p, name);
    double v = 0;
    if (i >= 0 && parse_double(p->values[i], &v))
        v = 0;
    return v;
}

bool mb_param_bool(const mb_params *p, const char *name)
{
    int i = index_of(p, name);
    bool b = false;
    if (i >= 0)
        parse_bool(p->values[i], &b);
    return b;
}

bool mb_param_is_set(const mb_params *p, const char *name)
{
    int i = index_of(p, name);
    return i >= 0 && p->set[i];
}

int mb_params_count(const mb_params *p)
{
    return p ? p->n : 0;
}

const char *mb_params_name(const mb_params *p, int i)
{
    return p->spec[i].name;
}

const char *mb_params_value(const mb_params *p, int i)
{
    return p->values[i];
}

static int cmp_index_by_name(const void *a, const void *b, void *spec)
{
    const mb_param_spec *s = spec;
    return strcmp(s[*(const int *)a].name, s[*(const int *)b].name);
}

char *mb_params_key(const mb_params *p)
{
    int n = mb_params_count(p);
    int *order = malloc(sizeof *order * (size_t)(n + 1));
    size_t len = 1;
    for (int i = 0; i < n; i++) {
        order[i] = i;
        len += strlen(p->spec[i].name) + strlen(p->values[i]) + 2;
    }
    qsort_r(order, (size_t)n, sizeof *order, cmp_index_by_name, (void *)p->spec);
    char *key = malloc(len);
    if (key == NULL || order == NULL) {
        free(order);
        free(key);
        return NULL;
    }
    key[0] = '\0';
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(key + off, len - off, "%s%s=%s", i ? "," : "", p->spec[order[i]].name,
                                p->values[order[i]]);
    free(order);
    return key;
}

bool mb_param_values_equal(const mb_param_spec *ps, const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (strcmp(a, b) == 0)
        return true;
    if (ps == NULL)
        return false;
    /* "4k" and "4096", "on" and "true", "032" and "32" name one value */
    long long ia, ib;
    double da, db;
    bool ba, bb;
    switch (ps->type) {
    case MB_P_SIZE:
        return mb_parse_size(a, &ia, NULL) == MB_OK && mb_parse_size(b, &ib, NULL) == MB_OK && ia == ib;
    case MB_P_INT:
        return parse_int(a, &ia) == 0 && parse_int(b, &ib) == 0 && ia == ib;
    case MB_P_DOUBLE:
        return parse_double(a, &da) == 0 && parse_double(b, &db) == 0 && da == db;
    case MB_P_BOOL:
        return parse_bool(a, &ba) == 0 && parse_bool(b, &bb) == 0 && ba == bb;
    case MB_P_ENUM:
    case MB_P_STRING:
        return false;
    }
    return false;
}
