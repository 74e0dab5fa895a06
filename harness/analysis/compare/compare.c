/* compare.c: joining results files case by case. */
#include "compare.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_identity.h"
#include "reference.h"
#include "results.h"

/* ---- prices ------------------------------------------------------------------ */

/* Any name the output shows for machine i: its letter, label, host, path or file name. */
static bool label_fits(const mb_ceilings *m, int i, const char *label, const char *name, size_t n)
{
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    return (n == 1 && name[0] == 'A' + i) || (strlen(label) == n && strncmp(label, name, n) == 0) ||
           (m->host && strlen(m->host) == n && strncmp(m->host, name, n) == 0) ||
           (strlen(m->path) == n && strncmp(m->path, name, n) == 0) ||
           (strlen(base) == n && strncmp(base, name, n) == 0);
}

/* "A 'label' (file), B ...": what --price accepts, for its error. */
static void price_names(const mb_ceilings *m, int n_m, char *const *labels, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n_m && at < len; i++) {
        const char *base = strrchr(m[i].path, '/');
        base = base ? base + 1 : m[i].path;
        at += (size_t)snprintf(buf + at, len - at, "%s%c, '%s', %s%s%s", i ? "; " : "", 'A' + i, labels[i], base,
                               m[i].host ? ", " : "", m[i].host ? m[i].host : "");
    }
}

static int parse_price(const mb_ceilings *m, int n_m, char *const *labels, const char *spec, double *price,
                       mb_err *err)
{
    const char *eq = strrchr(spec, '=');
    if (eq == NULL || eq == spec)
        return mb_errf(err, MB_EUSAGE,
                       "--price %s: expected NAME=USD_PER_HOUR (NAME: letter, label, host or file)", spec);
    char *end;
    errno = 0;
    double usd = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || errno || !isfinite(usd) || usd <= 0)
        return mb_errf(err, MB_EUSAGE, "--price %s: '%s' is not a positive price in USD per hour", spec,
                       eq + 1);
    size_t n = (size_t)(eq - spec);
    int hits = 0, first = -1;
    for (int i = 0; i < n_m; i++)
        if (label_fits(&m[i], i, labels[i], spec, n)) {
            if (hits == 0)
                first = i;
            hits++;
        }
    /* one price, one machine: two machines on a host named "vm" must not both get it */
    if (hits > 1)
        return mb_errf(err, MB_EUSAGE, "--price %s: '%.*s' names %d machines; give each its letter (A, B, ...)",
                       spec, (int)n, spec, hits);
    if (hits == 1)
        price[first] = usd;
    if (hits == 0) {
        char names[1024];
        price_names(m, n_m, labels, names, sizeof names);
        return mb_errf(err, MB_EUSAGE, "--price %s: '%.*s' names no machine compared; names: %s", spec,
                       (int)n, spec, names);
    }
    return MB_OK;
}

/* A --price of several, NAME=USD,NAME=USD: every comma-separated part has
 * its '=' (a NAME may be a file whose name holds a comma). */
static bool is_price_list(const char *s)
{
    if (strchr(s, ',') == NULL)
        return false;
    for (const char *part = s;;) {
        const char *comma = strchr(part, ','), *eq = strchr(part, '=');
        if (eq == NULL || (comma && eq > comma))
            return false;
        if (comma == NULL)
            return true;
        part = comma + 1;
    }
}

static int parse_prices(const mb_ceilings *m, int n_m, char *const *labels, const char *const *prices, int n_prices,
                        double *price, mb_err *err)
{
    int rc = MB_OK;
    for (int p = 0; rc == MB_OK && p < n_prices; p++) {
        if (!is_price_list(prices[p])) {
            rc = parse_price(m, n_m, labels, prices[p], price, err);
            continue;
        }
        char *copy = strdup(prices[p]), *save = NULL;
        if (copy == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        for (char *one = strtok_r(copy, ",", &save); rc == MB_OK && one; one = strtok_r(NULL, ",", &save))
            rc = parse_price(m, n_m, labels, one, price, err);
        free(copy);
    }
    return rc;
}

double mb_compare_per_usd(double rate, double usd_per_hour)
{
    return rate >= 0 && usd_per_hour > 0 ? rate * 3600.0 / usd_per_hour : -1;
}

/* ---- rows ---------------------------------------------------------------------- */

/* The case of m that is cr's (case_identity.h: exact id first, then the same
 * measurement under an id written before its backend gained a parameter). */
static int find_case(const mb_ceilings *m, const mb_case_ref *cr)
{
    for (int i = 0; i < m->n_cases; i++)
        if (strcmp(m->cases[i].id, cr->id) == 0)
            return i;
    for (int i = 0; i < m->n_cases; i++)
        if (mb_case_same(cr->json, m->cases[i].json))
            return i;
    return -1;
}

/* Case k of machine i already sits in a row. */
static bool row_exists(const mb_compare *c, int i, int k)
{
    for (int r = 0; r < c->n_rows; r++)
        if (c->rows[r].idx[i] == k)
            return true;
    return false;
}

/* The reason a case cannot run on its machine: skipped or failed for a
 * reason containing one of [datasheet] `key`'s phrases (compare.ini):
 * cannot_run, a missing path or capability rather than this run's setup;
 * cannot_run_anywhere, of those the library's or path's (on any machine);
 * else NULL. */
static const char *cannot_run(const mb_case_ref *cr, const mb_ini *keys, const char *key)
{
    const char *list = keys ? mb_ini_get(keys, "datasheet", key) : NULL;
    if (list == NULL || cr->reason == NULL || strcmp(cr->status, "ok") == 0)
        return NULL;
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strlen(p);
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = '\0';
        if (n > 0 && strcasestr(cr->reason, p))
            return cr->reason;
    }
    return NULL;
}

/* The device kind a case runs on: ceilings.c's (matching.ini [devices]);
 * "cpu", the host, when none was set, as device_of's default. */
static const char *case_device(const mb_case_ref *cr)
{
    return cr->device ? cr->device : "cpu";
}

static int add_row(mb_compare *c, const mb_case_ref *cr, const mb_ini *keys, mb_err *err)
{
    mb_compare_row *g = realloc(c->rows, sizeof *g * (size_t)(c->n_rows + 1));
    if (g == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    c->rows = g;
    mb_compare_row *r = &c->rows[c->n_rows++];
    memset(r, 0, sizeof *r);
    r->id = cr->id;
    r->label = cr->label;
    r->component = cr->component;
    r->device = case_device(cr);
    r->rate_unit = cr->rate_unit;
    r->latency_first = cr->latency_first;
    r->idx = malloc(sizeof *r->idx * (size_t)c->n_m);
    r->rate = malloc(sizeof *r->rate * (size_t)c->n_m);
    r->ratio = malloc(sizeof *r->ratio * (size_t)c->n_m);
    r->per_usd = malloc(sizeof *r->per_usd * (size_t)c->n_m);
    r->from_sheet = calloc((size_t)c->n_m, sizeof *r->from_sheet);
    r->not_runnable = calloc((size_t)c->n_m, sizeof *r->not_runnable);
    if (!r->idx || !r->rate || !r->ratio || !r->per_usd || !r->from_sheet || !r->not_runnable)
        return mb_errf(err, MB_ESYS, "out of memory");
    r->everywhere = true;
    for (int i = 0; i < c->n_m; i++) {
        int k = find_case(&c->m[i], cr);
        r->idx[i] = k;
        r->rate[i] = k >= 0 && c->m[i].cases[k].usable ? c->m[i].cases[k].rate : -1;
        r->everywhere = r->everywhere && r->rate[i] >= 0;
        r->not_runnable[i] = k >= 0 ? cannot_run(&c->m[i].cases[k], keys, "cannot_run") : NULL;
        if (k >= 0 && r->no_path == NULL)
            r->no_path = cannot_run(&c->m[i].cases[k], keys, "cannot_run_anywhere");
        if (k >= 0 && r->rate_unit == NULL)
            r->rate_unit = c->m[i].cases[k].rate_unit;
    }
    for (int i = 0; i < c->n_m; i++) {
        r->ratio[i] = r->rate[i] >= 0 && r->rate[0] > 0 ? r->rate[i] / r->rate[0] : -1;
        r->per_usd[i] = mb_compare_per_usd(r->rate[i], c->price[i]);
    }
    return MB_OK;
}

/* ---- best verified case per component and kind ------------------------------------------ */

/* "dtype=fp32 op=read": the values of the kind parameters ([best] kind_params
 * of compare.ini) the case sets, in that order. */
static void case_kind(const mb_case_ref *cr, const mb_ini *keys, char *buf, size_t len)
{
    const char *list = keys ? mb_ini_get(keys, "best", "kind_params") : NULL;
    char copy[512], *save = NULL;
    size_t at = 0;
    buf[0] = '\0';
    snprintf(copy, sizeof copy, "%s", list ? list : "dtype");
    for (char *k = strtok_r(copy, ", \t", &save); k && at < len; k = strtok_r(NULL, ", \t", &save)) {
        const char *v = mb_case_param(cr, k);
        /* a backend without the parameter does one kind of it ([best.defaults]) */
        char key[128];
        snprintf(key, sizeof key, "%s.%s", cr->component, k);
        if (v == NULL && keys)
            v = mb_ini_get(keys, "best.defaults", key);
        if (v)
            at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", at ? " " : "", k, v);
    }
}

const char *mb_compare_work_unit(const mb_case_ref *cr)
{
    const char *u = cr->rate_unit;
    size_t n = u ? strlen(u) : 0;
    if (n >= 4 && strcmp(u + n - 4, "OP/s") == 0 && (n == 4 || u[n - 5] != 'L'))
        return "OP";
    return cr->work_unit;
}

const char *const mb_compare_devices[MB_COMPARE_DEVICES] = { "cpu", "gpu" };

const char *mb_compare_device_name(const char *device)
{
    return device && strcmp(device, "gpu") == 0 ? "GPU" : "host CPU";
}

bool mb_compare_has_gpu(const mb_compare *c, int i)
{
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->m[i].context, "gpus")) > 0)
        return true;
    for (int k = 0; k < c->m[i].n_cases; k++)
        if (c->m[i].cases[k].usable && !strcmp(case_device(&c->m[i].cases[k]), "gpu"))
            return true;
    return false;
}

static mb_compare_best *best_for(mb_compare *c, const mb_case_ref *cr, const char *kind, mb_err *err)
{
    const char *unit = mb_compare_work_unit(cr) ? mb_compare_work_unit(cr) : "";
    const char *device = case_device(cr);
    for (int b = 0; b < c->n_best; b++)
        if (!strcmp(c->best[b].component, cr->component) && !strcmp(c->best[b].device, device) &&
            !strcmp(c->best[b].kind, kind) && !strcmp(c->best[b].work_unit, unit))
            return &c->best[b];
    mb_compare_best *grown = realloc(c->best, sizeof *grown * (size_t)(c->n_best + 1));
    if (grown == NULL) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    c->best = grown;
    mb_compare_best *b = &c->best[c->n_best++];
    memset(b, 0, sizeof *b);
    b->component = cr->component;
    b->device = device;
    snprintf(b->kind, sizeof b->kind, "%s", kind);
    b->work_unit = unit;
    b->latency_first = cr->latency_first;
    b->row = malloc(sizeof *b->row * (size_t)c->n_m);
    b->rate_abs = malloc(sizeof *b->rate_abs * (size_t)c->n_m);
    b->ratio = malloc(sizeof *b->ratio * (size_t)c->n_m);
    b->per_usd_abs = malloc(sizeof *b->per_usd_abs * (size_t)c->n_m);
    if (!b->row || !b->rate_abs || !b->ratio || !b->per_usd_abs) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    for (int i = 0; i < c->n_m; i++) {
        b->row[i] = -1;
        b->rate_abs[i] = b->ratio[i] = b->per_usd_abs[i] = -1;
    }
    return b;
}

/* Where a device kind comes in every view: the host CPU's first, then the GPU's. */
static int device_rank(const char *device)
{
    int d = 0;
    while (d < MB_COMPARE_DEVICES && strcmp(device, mb_compare_devices[d]) != 0)
        d++;
    return d;
}

/* Kinds of one component and device kind next to each other, by device kind
 * (device_rank), then in the order the components first appear (an insertion
 * sort: stable, and the lists are short). */
static void group_by_component(mb_compare *c)
{
    const mb_compare_best *order[256];
    int n = 0;
    for (int b = 0; b < c->n_best; b++) {
        bool seen = false;
        for (int k = 0; k < n && !seen; k++)
            seen = !strcmp(order[k]->component, c->best[b].component) && !strcmp(order[k]->device, c->best[b].device);
        if (!seen && n < 256)
            order[n++] = &c->best[b];
    }
    int *rank = calloc((size_t)c->n_best + 1, sizeof *rank);
    if (rank == NULL)
        return; /* the order is cosmetic */
    for (int b = 0; b < c->n_best; b++) {
        rank[b] = n;
        for (int k = 0; k < n; k++)
            if (!strcmp(order[k]->component, c->best[b].component) && !strcmp(order[k]->device, c->best[b].device))
                rank[b] = k;
        rank[b] += device_rank(c->best[b].device) * (n + 1); /* k <= n: the device kind first */
    }
    for (int b = 1; b < c->n_best; b++)
        for (int j = b; j > 0 && rank[j - 1] > rank[j]; j--) {
            mb_compare_best t = c->best[j];
            c->best[j] = c->best[j - 1];
            c->best[j - 1] = t;
            int r = rank[j];
            rank[j] = rank[j - 1];
            rank[j - 1] = r;
        }
    free(rank);
}

/* The L2 of the machine's benchmark GPU, 0 when its results do not say. */
static double benchmark_gpu_l2(const cJSON *context)
{
    const cJSON *l2 = cJSON_GetObjectItemCaseSensitive(mb_results_benchmark_gpu(context), "l2_bytes");
    return cJSON_IsNumber(l2) ? l2->valuedouble : 0;
}

/* A device-to-device copy whose source and destination fit in the GPU's L2
 * may run from the L2, above the DRAM bandwidth (copy_cuda.c says so in a
 * note): as a machine's best of its kind it would claim a memory bandwidth
 * the memory does not have (the H200 reference's 16 MiB copy, 4.84 TB/s
 * against its DRAM's 4.81, beside 4.26 for 1 GiB). */
static bool cache_resident(const mb_case_ref *cr, double l2_bytes)
{
    const char *dir = mb_case_param(cr, "direction"), *size = mb_case_param(cr, "size");
    return l2_bytes > 0 && strcmp(cr->component, "copy") == 0 && dir && strcmp(dir, "d2d") == 0 && size &&
           2 * strtod(size, NULL) <= l2_bytes;
}

/* Per kind, each machine's fastest usable case (the highest rate in work
 * units per second: for latency-first cases, the shortest time). Only
 * measured, verified cases: a buyer's comparison of what was seen to work.
 * A case that may run from the GPU's cache (cache_resident) is its kind's
 * best only where the machine has no other case of that kind. */
static int best_cases(mb_compare *c, const mb_ini *keys, mb_err *err)
{
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        for (int i = 0; i < c->n_m; i++) {
            if (row->idx[i] < 0)
                continue;
            const mb_case_ref *cr = &c->m[i].cases[row->idx[i]];
            char kind[128];
            case_kind(cr, keys, kind, sizeof kind);
            mb_compare_best *b = best_for(c, cr, kind, err);
            if (b == NULL)
                return err->code;
            if (!cr->usable || cr->rate_abs <= 0)
                continue;
            double l2 = benchmark_gpu_l2(c->m[i].context);
            bool resident = cache_resident(cr, l2);
            bool held = b->row[i] >= 0 && cache_resident(&c->m[i].cases[c->rows[b->row[i]].idx[i]], l2);
            if (b->row[i] < 0 || (held && !resident) || (held == resident && cr->rate_abs > b->rate_abs[i])) {
                b->row[i] = r;
                b->rate_abs[i] = cr->rate_abs;
            }
        }
    }
    group_by_component(c);
    for (int b = 0; b < c->n_best; b++) {
        mb_compare_best *k = &c->best[b];
        for (int i = 0; i < c->n_m; i++) {
            k->ratio[i] = k->rate_abs[i] > 0 && k->rate_abs[0] > 0 ? k->rate_abs[i] / k->rate_abs[0] : -1;
            k->per_usd_abs[i] = k->rate_abs[i] > 0 ? mb_compare_per_usd(k->rate_abs[i], c->price[i]) : -1;
        }
    }
    return MB_OK;
}

/* ---- geometric means per component ------------------------------------------------- */

static mb_compare_geo *geo_for(mb_compare *c, const char *component, const char *device, mb_err *err)
{
    for (int g = 0; g < c->n_geo; g++)
        if (!strcmp(c->geo[g].component, component) && !strcmp(c->geo[g].device, device))
            return &c->geo[g];
    mb_compare_geo *grown = realloc(c->geo, sizeof *grown * (size_t)(c->n_geo + 1));
    if (grown == NULL) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    c->geo = grown;
    mb_compare_geo *g = &c->geo[c->n_geo++];
    memset(g, 0, sizeof *g);
    g->component = component;
    g->device = device;
    g->geomean = calloc((size_t)c->n_m, sizeof *g->geomean);
    g->geomean_usd = calloc((size_t)c->n_m, sizeof *g->geomean_usd);
    g->n = calloc((size_t)c->n_m, sizeof *g->n);
    g->best_geomean = calloc((size_t)c->n_m, sizeof *g->best_geomean);
    g->best_geomean_usd = calloc((size_t)c->n_m, sizeof *g->best_geomean_usd);
    g->best_n = calloc((size_t)c->n_m, sizeof *g->best_n);
    if (!g->geomean || !g->geomean_usd || !g->n || !g->best_geomean || !g->best_geomean_usd || !g->best_n) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    return g;
}

/* A running geometric mean: exp(mean(log x)). */
typedef struct geo_acc {
    double sum;
    int n;
} geo_acc;

static void geo_add(geo_acc *a, double x)
{
    a->sum += log(x);
    a->n++;
}

static double geo_value(const geo_acc *a)
{
    return a->n ? exp(a->sum / a->n) : -1;
}

/* Like-for-like: the cases of the component and device kind usable
 * (measured, verified) on A and on machine i. */
static void geomean_like(const mb_compare *c, mb_compare_geo *geo, int i)
{
    geo_acc all = { 0 }, usd = { 0 };
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (strcmp(row->component, geo->component) || strcmp(row->device, geo->device) || row->ratio[i] <= 0 ||
            row->from_sheet[0] || row->from_sheet[i])
            continue;
        geo_add(&all, row->ratio[i]);
        if (row->per_usd[i] > 0 && row->per_usd[0] > 0)
            geo_add(&usd, row->per_usd[i] / row->per_usd[0]);
    }
    geo->n[i] = all.n;
    geo->geomean[i] = geo_value(&all);
    geo->geomean_usd[i] = geo_value(&usd);
}

/* Best per kind: the kinds of the component and device kind where A and
 * machine i both have a best case. */
static void geomean_best(const mb_compare *c, mb_compare_geo *geo, int i)
{
    geo_acc all = { 0 }, usd = { 0 };
    for (int b = 0; b < c->n_best; b++) {
        const mb_compare_best *k = &c->best[b];
        if (strcmp(k->component, geo->component) || strcmp(k->device, geo->device) || k->ratio[i] <= 0)
            continue;
        geo_add(&all, k->ratio[i]);
        if (k->per_usd_abs[i] > 0 && k->per_usd_abs[0] > 0)
            geo_add(&usd, k->per_usd_abs[i] / k->per_usd_abs[0]);
    }
    geo->best_n[i] = all.n;
    geo->best_geomean[i] = geo_value(&all);
    geo->best_geomean_usd[i] = geo_value(&usd);
}

static int geomeans(mb_compare *c, mb_err *err)
{
    /* the coverage counts what ran somewhere: a case skipped everywhere is no
     * evidence either way; the means of a device kind next to each other, as
     * the kinds of best per kind (group_by_component) */
    for (int d = 0; d <= MB_COMPARE_DEVICES; d++)
        for (int r = 0; r < c->n_rows; r++) {
            if (device_rank(c->rows[r].device) != d)
                continue;
            mb_compare_geo *g = geo_for(c, c->rows[r].component, c->rows[r].device, err);
            if (g == NULL)
                return err->code;
            bool ran = false;
            for (int i = 0; i < c->n_m; i++)
                ran = ran || c->rows[r].rate[i] >= 0;
            g->n_total += ran;
        }
    for (int b = 0; b < c->n_best; b++) {
        mb_compare_geo *g = geo_for(c, c->best[b].component, c->best[b].device, err);
        if (g == NULL)
            return err->code;
        bool ran = false;
        for (int i = 0; i < c->n_m; i++)
            ran = ran || c->best[b].row[i] >= 0;
        g->best_total += ran;
    }
    for (int g = 0; g < c->n_geo; g++)
        for (int i = 0; i < c->n_m; i++) {
            geomean_like(c, &c->geo[g], i);
            geomean_best(c, &c->geo[g], i);
        }
    return MB_OK;
}

/* ---- context differences ----------------------------------------------------------- */

/* A context value as people read it: byte counts in binary units
 * ("126 GiB", not 135148564480), other numbers to 6 significant digits. */
static void scalar_text(const char *key, const cJSON *v, char *buf, size_t len)
{
    size_t kl = strlen(key);
    if (cJSON_IsString(v)) {
        snprintf(buf, len, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v) && kl > 6 && strcmp(key + kl - 6, "_bytes") == 0 && v->valuedouble >= 1024) {
        static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double x = v->valuedouble;
        int i = 0;
        while (x >= 1024 && i < 5) {
            x /= 1024;
            i++;
        }
        snprintf(buf, len, "%.3g %s", x, u[i]);
    } else if (cJSON_IsNumber(v)) {
        snprintf(buf, len, "%.6g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        buf[0] = '\0';
    }
}

static const cJSON *at_path(const cJSON *o, const char *path)
{
    char copy[256], *save = NULL;
    snprintf(copy, sizeof copy, "%s", path);
    for (char *k = strtok_r(copy, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return o;
}

static int ctx_add(mb_compare *c, const char *key, mb_err *err)
{
    for (int i = 0; i < c->n_ctx; i++)
        if (strcmp(c->ctx[i].key, key) == 0)
            return MB_OK;
    mb_compare_ctx *g = realloc(c->ctx, sizeof *g * (size_t)(c->n_ctx + 1));
    if (g == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    c->ctx = g;
    mb_compare_ctx *x = &c->ctx[c->n_ctx++];
    x->key = strdup(key);
    x->value = calloc((size_t)c->n_m, sizeof *x->value);
    if (x->key == NULL || x->value == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
}

/* Collects the candidate keys: the listed paths and the GPU entries. */
static void gpu_keys(const cJSON *o, const char *prefix, const mb_ini *keys, bool top, mb_compare *c, mb_err *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        char key[256];
        snprintf(key, sizeof key, "%s.%s", prefix, it->string ? it->string : "?");
        if (top) {
            bool wanted = false;
            const char *words = mb_ini_get(keys, "context", "gpu_words");
            char copy[256], *save = NULL;
            snprintf(copy, sizeof copy, "%s", words ? words : "");
            for (char *w = strtok_r(copy, ", \t", &save); w && !wanted; w = strtok_r(NULL, ", \t", &save))
                wanted = it->string && strcasestr(it->string, w) != NULL;
            if (!wanted)
                continue;
        }
        if (cJSON_IsObject(it))
            gpu_keys(it, key, keys, false, c, err);
        else if (!cJSON_IsArray(it))
            ctx_add(c, key, err);
    }
}

static const cJSON *ctx_lookup(const cJSON *context, const char *key)
{
    if (strncmp(key, "gpus[", 5) == 0) {
        int n = atoi(key + 5);
        const char *rest = strchr(key, ']');
        const cJSON *gpu = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(context, "gpus"), n);
        return rest && rest[1] == '.' ? at_path(gpu, rest + 2) : NULL;
    }
    return at_path(context, key);
}

static int context_diffs(mb_compare *c, const mb_ini *keys, mb_err *err)
{
    /* every `keys*` line of [context], in file order */
    for (int l = 0; l < keys->n; l++) {
        if (strcmp(keys->e[l].section, "context") != 0 || strncmp(keys->e[l].key, "keys", 4) != 0)
            continue;
        char copy[512], *save = NULL;
        snprintf(copy, sizeof copy, "%s", keys->e[l].value);
        for (char *k = strtok_r(copy, ", \t", &save); k; k = strtok_r(NULL, ", \t", &save))
            if (ctx_add(c, k, err))
                return err->code;
    }
    for (int i = 0; i < c->n_m; i++) {
        const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(c->m[i].context, "gpus");
        int n = cJSON_GetArraySize(gpus);
        for (int g = 0; g < n; g++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "gpus[%d]", g);
            gpu_keys(cJSON_GetArrayItem(gpus, g), prefix, keys, true, c, err);
        }
    }
    if (err->code)
        return err->code;
    /* fill the values and keep only the keys that differ */
    int kept = 0;
    for (int k = 0; k < c->n_ctx; k++) {
        bool differ = false;
        for (int i = 0; i < c->n_m; i++) {
            char buf[512];
            scalar_text(c->ctx[k].key, ctx_lookup(c->m[i].context, c->ctx[k].key), buf, sizeof buf);
            c->ctx[k].value[i] = strdup(buf);
            if (c->ctx[k].value[i] == NULL)
                return mb_errf(err, MB_ESYS, "out of memory");
            differ = differ || strcmp(c->ctx[k].value[i], c->ctx[k].value[0]) != 0;
        }
        if (differ) {
            c->ctx[kept++] = c->ctx[k];
        } else {
            for (int i = 0; i < c->n_m; i++)
                free(c->ctx[k].value[i]);
            free(c->ctx[k].value);
            free(c->ctx[k].key);
        }
    }
    c->n_ctx = kept;
    return MB_OK;
}

/* ---- entry points -------------------------------------------------------------------- */

int mb_compare_build(const mb_ceilings *machines, int n, const char *const *labels, int n_labels,
                     const char *const *prices, int n_prices, const mb_ini *keys, mb_compare *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    if (n < 2)
        return mb_errf(err, MB_EUSAGE, "compare needs two or more results files");
    out->m = machines;
    out->n_m = n;
    out->label = calloc((size_t)n, sizeof *out->label);
    out->price = calloc((size_t)n, sizeof *out->price);
    if (out->label == NULL || out->price == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_machine_labels(machines, n, labels, n_labels, out->label, err);
    if (rc == MB_OK)
        rc = parse_prices(machines, n, out->label, prices, n_prices, out->price, err);
    for (int i = 0; i < n && rc == MB_OK; i++)
        for (int k = 0; k < machines[i].n_cases && rc == MB_OK; k++)
            if (!row_exists(out, i, k))
                rc = add_row(out, &machines[i].cases[k], keys, err);
    if (rc == MB_OK)
        rc = best_cases(out, keys, err);
    if (rc == MB_OK)
        rc = geomeans(out, err);
    if (rc == MB_OK)
        rc = context_diffs(out, keys, err);
    if (rc != MB_OK)
        mb_compare_free(out);
    return rc;
}

/* A case of the row on some machine, usable ones first: what the work is. */
static const mb_case_ref *row_case(const mb_compare *c, const mb_compare_row *r)
{
    const mb_case_ref *any = NULL;
    for (int i = 0; i < c->n_m; i++) {
        if (r->idx[i] < 0)
            continue;
        const mb_case_ref *cr = &c->m[i].cases[r->idx[i]];
        if (cr->usable)
            return cr;
        if (any == NULL)
            any = cr;
    }
    return any;
}

int mb_compare_fill_datasheet(mb_compare *c, int m, const mb_datasheet *d, mb_err *err)
{
    if (m < 0 || m >= c->n_m)
        return mb_errf(err, MB_EUSAGE, "no machine %d to fill from a datasheet", m);
    for (int r = 0; d && r < c->n_rows; r++) {
        mb_compare_row *row = &c->rows[r];
        const mb_case_ref *cr = row_case(c, row);
        const char *direction = cr ? mb_case_param(cr, "direction") : NULL;
        /* a D2D copy's rate counts each byte once, the datasheet's bandwidth
         * counts the read and the write: not the same quantity; and a path the
         * machine's own results say it lacks has no rate, whatever its peak; nor one whose library another
         * machine's results say cannot do it at all (fp8 through cublasGemmEx: the H200 reference has no such
         * case, the H100's skipped it) */
        if (row->rate[m] >= 0 || cr == NULL || row->latency_first || cr->rate_scale <= 0 ||
            (direction && strcmp(direction, "d2d") == 0) || row->not_runnable[m] || row->no_path)
            continue;
        char what[128];
        const char *source;
        double fig = mb_datasheet_figure(d, mb_datasheet_is_gpu(d), cr->component, mb_case_param(cr, "dtype"),
                                         direction, cr->device, what, sizeof what, &source);
        if (fig <= 0)
            continue;
        row->rate[m] = fig / cr->rate_scale;
        row->from_sheet[m] = true;
        if (!row->rate_unit)
            row->rate_unit = cr->rate_unit;
        if (m > 0 && row->rate[0] > 0 && !row->from_sheet[0])
            row->ratio[m] = row->rate[m] / row->rate[0];
        row->per_usd[m] = mb_compare_per_usd(row->rate[m], c->price[m]);
        /* a datasheet figure is not a run: the row stays off "cases on every machine" */
    }
    return MB_OK;
}

void mb_compare_free(mb_compare *c)
{
    if (c == NULL)
        return;
    for (int r = 0; r < c->n_rows; r++) {
        free(c->rows[r].idx);
        free(c->rows[r].rate);
        free(c->rows[r].ratio);
        free(c->rows[r].per_usd);
        free(c->rows[r].from_sheet);
        free(c->rows[r].not_runnable);
    }
    free(c->rows);
    for (int g = 0; g < c->n_geo; g++) {
        free(c->geo[g].geomean);
        free(c->geo[g].geomean_usd);
        free(c->geo[g].n);
        free(c->geo[g].best_geomean);
        free(c->geo[g].best_geomean_usd);
        free(c->geo[g].best_n);
    }
    free(c->geo);
    for (int b = 0; b < c->n_best; b++) {
        free(c->best[b].row);
        free(c->best[b].rate_abs);
        free(c->best[b].ratio);
        free(c->best[b].per_usd_abs);
    }
    free(c->best);
    for (int k = 0; k < c->n_ctx; k++) {
        if (c->ctx[k].value)
            for (int i = 0; i < c->n_m; i++)
                free(c->ctx[k].value[i]);
        free(c->ctx[k].value);
        free(c->ctx[k].key);
    }
    free(c->ctx);
    for (int i = 0; c->label && i < c->n_m; i++)
        free(c->label[i]);
    free(c->label);
    free(c->price);
    memset(c, 0, sizeof *c);
}
