#include "gapconfig.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "paths.h"

typedef struct load_ctx {
    mb_ini *ini;
    bool oom;
} load_ctx;

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    load_ctx *c = user;
    mb_ini *ini = c->ini;
    mb_ini_entry *g = realloc(ini->e, sizeof *g * (size_t)(ini->n + 1));
    if (g == NULL) {
        c->oom = true;
        return 0;
    }
    ini->e = g;
    mb_ini_entry *e = &ini->e[ini->n];
    e->section = strdup(section);
    e->key = strdup(key);
    e->value = strdup(value);
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        free(e->value);
        c->oom = true;
        return 0;
    }
    ini->n++;
    return 1;
}

int mb_ini_load(const char *path, mb_ini *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->path = strdup(path);
    if (out->path == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        mb_ini_free(out);
        return mb_errno(err, MB_EUSAGE, "%s: cannot open", path);
    }
    load_ctx c = { .ini = out };
    int rc = ini_parse_file(f, on_entry, &c);
    fclose(f);
    if (c.oom) {
        mb_ini_free(out);
        return mb_errf(err, MB_ESYS, "out of memory reading %s", path);
    }
    if (rc != 0) {
        mb_ini_free(out);
        return mb_errf(err, MB_EUSAGE, "%s:%d: malformed line (expected [section] or key = value, %s)", path, rc,
                       "at most 199 characters");
    }
    return MB_OK;
}

int mb_ini_load_gap(const char *name, mb_ini *out, mb_err *err)
{
    char rel[256], path[4096];
    snprintf(rel, sizeof rel, "gap/%s", name);
    mb_config_path(path, sizeof path, rel);
    return mb_ini_load(path, out, err);
}

void mb_ini_free(mb_ini *ini)
{
    if (ini == NULL)
        return;
    for (int i = 0; i < ini->n; i++) {
        free(ini->e[i].section);
        free(ini->e[i].key);
        free(ini->e[i].value);
    }
    free(ini->e);
    free(ini->path);
    memset(ini, 0, sizeof *ini);
}

const char *mb_ini_get(const mb_ini *ini, const char *section, const char *key)
{
    for (int i = 0; i < ini->n; i++)
        if (strcmp(ini->e[i].section, section) == 0 && strcmp(ini->e[i].key, key) == 0)
            return ini->e[i].value;
    return NULL;
}

int mb_ini_number(const mb_ini *ini, const char *section, const char *key, double *out, mb_err *err)
{
    const char *v = mb_ini_get(ini, section, key);
    if (v == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: [%s] %s is missing", ini->path, section, key);
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == v || *end != '\0' || errno || !isfinite(d))
        return mb_errf(err, MB_EUSAGE, "%s: [%s] %s = '%s' is not a number", ini->path, section, key, v);
    *out = d;
    return MB_OK;
}

bool mb_ini_list_has(const mb_ini *ini, const char *section, const char *key, const char *item)
{
    const char *v = mb_ini_get(ini, section, key);
    if (v == NULL || item == NULL)
        return false;
    size_t n = strlen(item);
    for (const char *p = v; *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && isspace((unsigned char)t[-1]))
            t--;
        if ((size_t)(t - p) == n && strncasecmp(p, item, n) == 0)
            return true;
        p = e;
    }
    return false;
}
