/* ceilings.c: reading results files for the analysis (gap, compare). */
#include "ceilings.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gapconfig.h"
#include "results.h"

/* ---- field access with JSON paths --------------------------------------------- */

static const char *opt_string(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

static int req_string(const cJSON *o, const char *key, const char *path, int i, const char **out, mb_err *err)
{
    *out = opt_string(o, key);
    if (*out == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].%s: expected a string", path, i, key);
    return MB_OK;
}

/* A finite, non-negative number at o.key (or o.key.sub); absent = 0 unless required. */
static int num_at(const cJSON *o, const char *key, const char *sub, bool required, const char *path, int i,
                  double *out, mb_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (sub && cJSON_IsObject(it))
        it = cJSON_GetObjectItemCaseSensitive(it, sub);
    else if (sub)
        it = NULL;
    char name[128];
    snprintf(name, sizeof name, "%s%s%s", key, sub ? "." : "", sub ? sub : "");
    *out = 0;
    if (it == NULL || cJSON_IsNull(it)) {
        if (required)
            return mb_errf(err, MB_EUSAGE, "%s: cases[%d].%s: missing (a case with status ok has it)", path, i,
                           name);
        return MB_OK;
    }
    if (!cJSON_IsNumber(it))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].%s: expected a number", path, i, name);
    if (!isfinite(it->valuedouble) || it->valuedouble < 0)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].%s: %g is not a finite non-negative number", path, i, name,
                       it->valuedouble);
    *out = it->valuedouble;
    return MB_OK;
}

static const char *device_of(const mb_ini *m, const char *component, const char *backend)
{
    if (mb_ini_list_has(m, "devices", "gpu_components", component) ||
        mb_ini_list_has(m, "devices", "gpu_backends", backend))
        return "gpu";
    return "cpu";
}

static int read_case(const cJSON *c, int i, const char *path, const mb_ini *match, mb_case_ref *r, mb_err *err)
{
    memset(r, 0, sizeof *r);
    if (!cJSON_IsObject(c))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d]: expected an object", path, i);
    if (req_string(c, "id", path, i, &r->id, err) || req_string(c, "component", path, i, &r->component, err) ||
        req_string(c, "backend", path, i, &r->backend, err) || req_string(c, "status", path, i, &r->status, err))
        return err->code;
    if (strcmp(r->status, "ok") && strcmp(r->status, "skipped") && strcmp(r->status, "failed"))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].status: '%s' is not ok, skipped or failed", path, i,
                       r->status);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(c, "params");
    if (params && !cJSON_IsObject(params) && !cJSON_IsNull(params))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].params: expected an object", path, i);
    r->params = cJSON_IsObject(params) ? params : NULL;
    r->json = c;
    r->reason = opt_string(c, "reason");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(c, "verification");
    r->verification = cJSON_IsObject(ver) ? opt_string(ver, "status") : NULL;
    r->work_unit = opt_string(c, "work_unit");
    r->rate_unit = opt_string(c, "rate_unit");
    r->latency_first = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "latency_first"));
    r->device = device_of(match, r->component, r->backend);
    bool ok = strcmp(r->status, "ok") == 0;
    if (num_at(c, "rate", "median", ok, path, i, &r->rate, err) ||
        num_at(c, "rate_scale", NULL, ok, path, i, &r->rate_scale, err) ||
        num_at(c, "work_per_iteration", NULL, false, path, i, &r->work_per_iter, err) ||
        num_at(c, "peak", "value", false, path, i, &r->peak, err))
        return err->code;
    if (ok && r->work_unit == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].work_unit: expected a string", path, i);
    if (ok && r->rate_unit == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].rate_unit: expected a string", path, i);
    if (ok && r->rate_scale <= 0)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].rate_scale: must be greater than zero", path, i);
    const cJSON *peak = cJSON_GetObjectItemCaseSensitive(c, "peak");
    r->peak_source = cJSON_IsObject(peak) ? opt_string(peak, "source") : NULL;
    r->rate_abs = r->rate * r->rate_scale;
    r->noisy = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "noisy"));
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
    const cJSON *cv = cJSON_IsObject(rate) ? cJSON_GetObjectItemCaseSensitive(rate, "cv") : NULL;
    r->cv = cJSON_IsNumber(cv) ? cv->valuedouble : NAN;
    r->usable = ok && r->verification && strcmp(r->verification, "passed") == 0 && r->rate_abs > 0;
    return MB_OK;
}

int mb_ceilings_load(const char *path, mb_ceilings *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    mb_ini match;
    int rc = mb_ini_load_gap("matching.ini", &match, err);
    if (rc)
        return rc;
    cJSON *root = NULL;
    rc = mb_results_load(path, &root, err);
    if (rc) {
        mb_ini_free(&match);
        return rc;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    int n = rc ? 0 : cJSON_GetArraySize(cases);
    out->cases = calloc((size_t)(n ? n : 1), sizeof *out->cases);
    if (rc == MB_OK && out->cases == NULL)
        rc = mb_errf(err, MB_ESYS, "out of memory");
    int i = 0;
    for (const cJSON *c = rc ? NULL : cases->child; c && rc == MB_OK; c = c->next, i++)
        rc = read_case(c, i, path, &match, &out->cases[i], err);
    mb_ini_free(&match);
    if (rc == MB_OK) {
        out->n_cases = n;
        out->root = root;
        out->path = strdup(path);
        out->context = cJSON_GetObjectItemCaseSensitive(root, "context");
        const cJSON *host = cJSON_GetObjectItemCaseSensitive(out->context, "host");
        out->host = cJSON_IsObject(host) ? opt_string(host, "name") : NULL;
        out->started_utc = opt_string(root, "started_utc");
        if (out->path == NULL)
            rc = mb_errf(err, MB_ESYS, "out of memory");
    }
    if (rc != MB_OK) {
        free(out->cases);
        free(out->path);
        cJSON_Delete(root);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

void mb_ceilings_free(mb_ceilings *r)
{
    if (r == NULL)
        return;
    free(r->cases);
    free(r->path);
    cJSON_Delete(r->root);
    memset(r, 0, sizeof *r);
}

const char *mb_ceilings_label(const mb_ceilings *r)
{
    if (r->host && *r->host)
        return r->host;
    const char *slash = strrchr(r->path, '/');
    return slash ? slash + 1 : r->path;
}

const char *mb_case_param(const mb_case_ref *c, const char *name)
{
    const cJSON *it = c->params ? cJSON_GetObjectItemCaseSensitive(c->params, name) : NULL;
    if (cJSON_IsString(it))
        return it->valuestring;
    return NULL;
}

/* started_utc of a results file without checking the rest: a broken file in
 * results/ must not stop `gap` from using the good one beside it. */
static char *started_of(const char *path)
{
    mb_err e = { 0 };
    cJSON *root = NULL;
    if (mb_results_load(path, &root, &e))
        return NULL;
    char *s = NULL;
    const char *t = opt_string(root, "started_utc");
    if (t)
        s = strdup(t);
    cJSON_Delete(root);
    return s;
}

int mb_ceilings_find_newest(const char *dir, const char *host, char *path, size_t len, mb_err *err)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/results", dir);
    DIR *d = opendir(sub);
    char best_time[64] = "";
    path[0] = '\0';
    size_t hl = strlen(host);
    for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
        size_t nl = strlen(de->d_name);
        if (nl < hl + 6 || strncmp(de->d_name, host, hl) != 0 || de->d_name[hl] != '-' ||
            strcmp(de->d_name + nl - 5, ".json") != 0)
            continue;
        char p[4096 + 256];
        snprintf(p, sizeof p, "%s/%s", sub, de->d_name);
        char *t = started_of(p);
        if (t && strcmp(t, best_time) > 0 && strlen(t) < sizeof best_time) {
            snprintf(best_time, sizeof best_time, "%s", t);
            snprintf(path, len, "%s", p);
        }
        free(t);
    }
    if (d)
        closedir(d);
    if (path[0] == '\0')
        return mb_errf(err, MB_EUSAGE,
                       "no results file for host '%s' under %s/ (results/%s-*.json): measure the ceilings first "
                       "with `mlbench --suite all`, or name a results file with --ceilings FILE",
                       host, sub, host);
    return MB_OK;
}
