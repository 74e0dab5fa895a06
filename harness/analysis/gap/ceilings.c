/* ceilings.c: reading results files for the analysis (gap, compare). */
#include "ceilings.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gapconfig.h"
#include "results.h"
#include "results_writers.h"

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

/* Where a case's work ran: what the results file says (written from the
 * backend's description), else, for a file from before that key, the
 * [devices] lists of configs/gap/matching.ini. */
static const char *device_of(const mb_ini *m, const cJSON *c, const char *component, const char *backend)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "device");
    if (cJSON_IsString(d) && (strcmp(d->valuestring, "gpu") == 0 || strcmp(d->valuestring, "cpu") == 0))
        return strcmp(d->valuestring, "gpu") == 0 ? "gpu" : "cpu";
    if (mb_ini_list_has(m, "devices", "gpu_components", component) ||
        mb_ini_list_has(m, "devices", "gpu_backends", backend))
        return "gpu";
    return "cpu";
}

/* The rate of `phase` where the case measured it, else the median of its
 * repetitions (every non-compute case, and files from before the phases). */
static void set_phase(mb_case_ref *r, const char *phase)
{
    double v = strcmp(phase, "burst") == 0 ? r->rate_burst : r->rate_sustained;
    r->rate = v > 0 ? v : r->rate_median;
    r->phase = v > 0 ? (strcmp(phase, "burst") == 0 ? "burst" : "sustained") : "median";
    r->rate_abs = r->rate * r->rate_scale;
}

/* The case's one ceiling (schema 2: "ceiling" {value, unit, source}), the
 * number every view shows; and whether it is noisy, by results.c's rule. */
static int read_ceiling(const cJSON *c, int i, const char *path, mb_case_ref *r, mb_err *err)
{
    const cJSON *ce = cJSON_GetObjectItemCaseSensitive(c, "ceiling");
    if (ce && !cJSON_IsObject(ce) && !cJSON_IsNull(ce))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].ceiling: expected an object or null", path, i);
    double v = 0;
    if (num_at(c, "ceiling", "value", false, path, i, &v, err))
        return err->code;
    const char *src = cJSON_IsObject(ce) ? opt_string(ce, "source") : NULL;
    if (src && strcmp(src, "median") && strcmp(src, "burst") && strcmp(src, "sustained"))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].ceiling.source: '%s' is not median, burst or sustained", path,
                       i, src);
    const char *unit = cJSON_IsObject(ce) ? opt_string(ce, "unit") : NULL;
    if (unit && r->rate_unit && strcmp(unit, r->rate_unit) != 0)
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].ceiling.unit: '%s', but the case's rate_unit is '%s'", path, i,
                       unit, r->rate_unit);
    mb_ceiling m;
    mb_case_ceiling(c, &m);
    if (cJSON_IsObject(ce) && v > 0) {
        r->rate = v;
        r->phase = m.source;
        r->rate_abs = r->rate * r->rate_scale;
    }
    r->noisy = m.noisy;
    snprintf(r->noise, sizeof r->noise, "%s", m.noisy ? m.why : "");
    return MB_OK;
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
    r->device = device_of(match, c, r->component, r->backend);
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
    r->rate_median = r->rate;
    r->phase = "median";
    if (num_at(c, "burst", "rate", false, path, i, &r->rate_burst, err) ||
        num_at(c, "sustained", "rate", false, path, i, &r->rate_sustained, err))
        return err->code;
    const char *cp = opt_string(c, "ceiling_phase");
    if (cp && strcmp(cp, "burst") && strcmp(cp, "sustained"))
        return mb_errf(err, MB_EUSAGE, "%s: cases[%d].ceiling_phase: '%s' is not burst or sustained", path, i, cp);
    /* files of schema 1: the phase rule (which results.c's mb_case_ceiling
     * applies too, so both give one number) */
    set_phase(r, cp ? cp : "sustained");
    int rc = read_ceiling(c, i, path, r, err);
    if (rc)
        return rc;
    mb_case_label(c, r->label, sizeof r->label);
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
    const cJSON *cv = cJSON_IsObject(rate) ? cJSON_GetObjectItemCaseSensitive(rate, "cv") : NULL;
    r->cv = cJSON_IsNumber(cv) ? cv->valuedouble : NAN;
    r->usable = ok && r->verification && strcmp(r->verification, "passed") == 0 && r->rate_abs > 0;
    return MB_OK;
}

/* Copies s into buf without the trademark marks that make CPU names long. */
static void strip_marks(const char *s, char *buf, size_t len)
{
    static const char *const marks[] = { "(R)", "(r)", "(TM)", "(tm)" };
    size_t o = 0;
    while (*s && o + 1 < len) {
        bool skipped = false;
        for (size_t k = 0; k < sizeof marks / sizeof *marks && !skipped; k++)
            if (strncmp(s, marks[k], strlen(marks[k])) == 0) {
                s += strlen(marks[k]);
                skipped = true;
            }
        if (!skipped)
            buf[o++] = *s++;
    }
    buf[o] = '\0';
}

/* The GPUs (count and model, when they share one) else the CPU model: what a
 * buyer tells machines apart by; host names are often "vm" or "localhost". */
static void machine_name(mb_ceilings *r)
{
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(r->context, "gpus");
    int n = cJSON_GetArraySize(gpus);
    const char *model = n > 0 ? opt_string(cJSON_GetArrayItem(gpus, 0), "name") : NULL;
    for (int g = 1; g < n && model; g++) {
        const char *other = opt_string(cJSON_GetArrayItem(gpus, g), "name");
        if (other == NULL || strcmp(other, model) != 0)
            model = NULL; /* mixed GPUs: the count alone says less than the CPU model */
    }
    const char *cpu = opt_string(cJSON_GetObjectItemCaseSensitive(r->context, "cpu"), "model");
    char clean[128];
    if (model && n > 1)
        snprintf(r->machine, sizeof r->machine, "%dx %s", n, model);
    else if (model)
        snprintf(r->machine, sizeof r->machine, "%s", model);
    else if (cpu && *cpu) {
        strip_marks(cpu, clean, sizeof clean);
        snprintf(r->machine, sizeof r->machine, "%s", clean);
    } else
        r->machine[0] = '\0';
}

int mb_ceilings_use_phase(mb_ceilings *r, const char *phase, mb_err *err)
{
    if (strcmp(phase, "burst") && strcmp(phase, "sustained"))
        return mb_errf(err, MB_EUSAGE, "--ceiling %s: expected burst or sustained", phase);
    for (int i = 0; i < r->n_cases; i++) {
        mb_case_ref *c = &r->cases[i];
        set_phase(c, phase);
        c->usable = c->usable && c->rate_abs > 0;
    }
    return MB_OK;
}

int mb_ceilings_from_json(cJSON *root, const char *path, mb_ceilings *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    mb_ini match;
    int rc = mb_ini_load_gap("matching.ini", &match, err);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    int n = cJSON_GetArraySize(cases);
    out->cases = calloc((size_t)(n ? n : 1), sizeof *out->cases);
    if (out->cases == NULL)
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
        machine_name(out);
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

int mb_ceilings_load(const char *path, mb_ceilings *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    int rc = mb_results_load(path, &root, err);
    return rc ? rc : mb_ceilings_from_json(root, path, out, err);
}

void mb_ceilings_free(mb_ceilings *r)
{
    if (r == NULL)
        return;
    free(r->cases);
    free(r->path);
    free(r->label);
    cJSON_Delete(r->root);
    memset(r, 0, sizeof *r);
}

const char *mb_ceilings_label(const mb_ceilings *r)
{
    if (r->label)
        return r->label;
    if (r->machine[0])
        return r->machine;
    if (r->host && *r->host)
        return r->host;
    const char *slash = strrchr(r->path, '/');
    return slash ? slash + 1 : r->path;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* What level `level` (1 to 3) of split_ties would append for a machine. */
static const char *tie_key(const mb_ceilings *m, int level)
{
    return level == 1 ? (m->host && *m->host ? m->host : "?") : level == 2 ? base_name(m->path) : m->path;
}

/* Appends " @ host" (level 1) or " (file)" (level 2) to labels that tie. */
static int split_ties(const mb_ceilings *m, int n, const bool *fixed, char **labels, int level, mb_err *err)
{
    bool *tied = calloc((size_t)n, sizeof *tied);
    if (tied == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    /* a suffix is added only where it differs from a tied peer's: "@ vm" on
     * two machines both called vm would tell nothing apart */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && strcmp(labels[i], labels[j]) == 0 &&
                (level == 4 || strcmp(tie_key(&m[i], level), tie_key(&m[j], level)) != 0))
                tied[i] = true;
    int rc = MB_OK;
    for (int i = 0; i < n && rc == MB_OK; i++) {
        if (!tied[i] || fixed[i])
            continue;
        const char *host = m[i].host && *m[i].host ? m[i].host : "?";
        const char *file = base_name(m[i].path);
        if (level == 3)
            file = m[i].path;
        char *grown = NULL;
        /* level 4: the same file twice; its position tells them apart */
        int w = level == 1   ? asprintf(&grown, "%s @ %s", labels[i], host)
                : level == 4 ? asprintf(&grown, "%s #%d", labels[i], i + 1)
                             : asprintf(&grown, "%s (%s)", labels[i], file);
        if (w < 0) {
            rc = mb_errf(err, MB_ESYS, "out of memory");
            break;
        }
        free(labels[i]);
        labels[i] = grown;
    }
    free(tied);
    return rc;
}

static int apply_overrides(const mb_ceilings *m, int n, const char *const *over, int n_over, char **labels,
                           bool *fixed, mb_err *err)
{
    for (int o = 0; o < n_over; o++) {
        const char *eq = strchr(over[o], '=');
        if (eq == NULL || eq == over[o] || eq[1] == '\0')
            return mb_errf(err, MB_EUSAGE, "--label %s: expected NAME=FILE", over[o]);
        int hits = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(m[i].path, eq + 1) != 0 && strcmp(base_name(m[i].path), eq + 1) != 0)
                continue;
            char *s = strndup(over[o], (size_t)(eq - over[o]));
            if (s == NULL)
                return mb_errf(err, MB_ESYS, "out of memory");
            free(labels[i]);
            labels[i] = s;
            fixed[i] = true;
            hits++;
        }
        if (hits == 0)
            return mb_errf(err, MB_EUSAGE, "--label %s: '%s' is not one of the results files compared", over[o],
                           eq + 1);
    }
    return MB_OK;
}

int mb_machine_labels(const mb_ceilings *m, int n, const char *const *overrides, int n_over, char **labels,
                      mb_err *err)
{
    bool *fixed = calloc((size_t)(n ? n : 1), sizeof *fixed);
    int rc = fixed ? MB_OK : mb_errf(err, MB_ESYS, "out of memory");
    for (int i = 0; i < n && rc == MB_OK; i++) {
        labels[i] = strdup(mb_ceilings_label(&m[i]));
        if (labels[i] == NULL)
            rc = mb_errf(err, MB_ESYS, "out of memory");
    }
    if (rc == MB_OK)
        rc = apply_overrides(m, n, overrides, n_over, labels, fixed, err);
    for (int level = 1; level <= 4 && rc == MB_OK; level++)
        rc = split_ties(m, n, fixed, labels, level, err);
    for (int i = 0; i < n && rc == MB_OK; i++)
        for (int j = i + 1; j < n && rc == MB_OK; j++)
            if (strcmp(labels[i], labels[j]) == 0)
                rc = mb_errf(err, MB_EUSAGE, "two results files are both labelled '%s': give them different "
                                             "names with --label NAME=FILE", labels[i]);
    free(fixed);
    return rc;
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
