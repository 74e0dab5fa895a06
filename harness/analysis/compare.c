/* compare.c: joining results files case by case. */
#include "compare.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* ---- prices ------------------------------------------------------------------ */

static bool label_fits(const mb_ceilings *m, const char *label, const char *name, size_t n)
{
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    return (strlen(label) == n && strncmp(label, name, n) == 0) || (m->host && strlen(m->host) == n && strncmp(m->host, name, n) == 0) ||
           (strlen(m->path) == n && strncmp(m->path, name, n) == 0) ||
           (strlen(base) == n && strncmp(base, name, n) == 0);
}

static int parse_prices(const mb_ceilings *m, int n_m, char *const *labels, const char *const *prices, int n_prices,
                        double *price, mb_err *err)
{
    for (int p = 0; p < n_prices; p++) {
        const char *eq = strrchr(prices[p], '=');
        if (eq == NULL || eq == prices[p])
            return mb_errf(err, MB_EUSAGE, "--price %s: expected NAME=USD_PER_HOUR (NAME: label, host or file)", prices[p]);
        char *end;
        errno = 0;
        double usd = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != '\0' || errno || !isfinite(usd) || usd <= 0)
            return mb_errf(err, MB_EUSAGE, "--price %s: '%s' is not a positive price in USD per hour", prices[p],
                           eq + 1);
        size_t n = (size_t)(eq - prices[p]);
        int hits = 0;
        for (int i = 0; i < n_m; i++)
            if (label_fits(&m[i], labels[i], prices[p], n)) {
                price[i] = usd;
                hits++;
            }
        if (hits == 0)
            return mb_errf(err, MB_EUSAGE, "--price %s: '%.*s' is not the label, host name or file of a results "
                                           "file compared",
                           prices[p], (int)n, prices[p]);
    }
    return MB_OK;
}

/* ---- rows ---------------------------------------------------------------------- */

static int find_case(const mb_ceilings *m, const char *id)
{
    for (int i = 0; i < m->n_cases; i++)
        if (strcmp(m->cases[i].id, id) == 0)
            return i;
    return -1;
}

static bool row_exists(const mb_compare *c, const char *id)
{
    for (int r = 0; r < c->n_rows; r++)
        if (strcmp(c->rows[r].id, id) == 0)
            return true;
    return false;
}

static int add_row(mb_compare *c, const mb_case_ref *cr, mb_err *err)
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
    r->rate_unit = cr->rate_unit;
    r->latency_first = cr->latency_first;
    r->idx = malloc(sizeof *r->idx * (size_t)c->n_m);
    r->rate = malloc(sizeof *r->rate * (size_t)c->n_m);
    r->ratio = malloc(sizeof *r->ratio * (size_t)c->n_m);
    r->per_usd = malloc(sizeof *r->per_usd * (size_t)c->n_m);
    r->from_sheet = calloc((size_t)c->n_m, sizeof *r->from_sheet);
    if (!r->idx || !r->rate || !r->ratio || !r->per_usd || !r->from_sheet)
        return mb_errf(err, MB_ESYS, "out of memory");
    r->everywhere = true;
    for (int i = 0; i < c->n_m; i++) {
        int k = find_case(&c->m[i], cr->id);
        r->idx[i] = k;
        r->rate[i] = k >= 0 && c->m[i].cases[k].usable ? c->m[i].cases[k].rate : -1;
        r->everywhere = r->everywhere && k >= 0;
        if (k >= 0 && r->rate_unit == NULL)
            r->rate_unit = c->m[i].cases[k].rate_unit;
    }
    for (int i = 0; i < c->n_m; i++) {
        r->ratio[i] = r->rate[i] >= 0 && r->rate[0] > 0 ? r->rate[i] / r->rate[0] : -1;
        r->per_usd[i] = r->rate[i] >= 0 && c->price[i] > 0 ? r->rate[i] * 3600.0 / c->price[i] : -1;
    }
    return MB_OK;
}

/* ---- geometric means per component ------------------------------------------------- */

static mb_compare_geo *geo_for(mb_compare *c, const char *component, mb_err *err)
{
    for (int g = 0; g < c->n_geo; g++)
        if (strcmp(c->geo[g].component, component) == 0)
            return &c->geo[g];
    mb_compare_geo *grown = realloc(c->geo, sizeof *grown * (size_t)(c->n_geo + 1));
    if (grown == NULL) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    c->geo = grown;
    mb_compare_geo *g = &c->geo[c->n_geo++];
    g->component = component;
    g->geomean = calloc((size_t)c->n_m, sizeof *g->geomean);
    g->geomean_usd = calloc((size_t)c->n_m, sizeof *g->geomean_usd);
    g->n = calloc((size_t)c->n_m, sizeof *g->n);
    if (!g->geomean || !g->geomean_usd || !g->n) {
        mb_errf(err, MB_ESYS, "out of memory");
        return NULL;
    }
    return g;
}

/* exp(mean(log ratio)) over the cases usable on both machines. */
static int geomeans(mb_compare *c, mb_err *err)
{
    for (int r = 0; r < c->n_rows; r++)
        if (geo_for(c, c->rows[r].component, err) == NULL)
            return err->code;
    for (int g = 0; g < c->n_geo; g++) {
        mb_compare_geo *geo = &c->geo[g];
        for (int i = 0; i < c->n_m; i++) {
            double sum = 0, sum_usd = 0;
            int n = 0, n_usd = 0;
            for (int r = 0; r < c->n_rows; r++) {
                const mb_compare_row *row = &c->rows[r];
                if (strcmp(row->component, geo->component) != 0 || row->ratio[i] <= 0)
                    continue;
                sum += log(row->ratio[i]);
                n++;
                if (row->per_usd[i] > 0 && row->per_usd[0] > 0) {
                    sum_usd += log(row->per_usd[i] / row->per_usd[0]);
                    n_usd++;
                }
            }
            geo->n[i] = n;
            geo->geomean[i] = n ? exp(sum / n) : -1;
            geo->geomean_usd[i] = n_usd ? exp(sum_usd / n_usd) : -1;
        }
    }
    return MB_OK;
}

/* ---- context differences ----------------------------------------------------------- */

static void scalar_text(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        snprintf(buf, len, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, len, "%.15g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        buf[0] = '\0';
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
            scalar_text(ctx_lookup(c->m[i].context, c->ctx[k].key), buf, sizeof buf);
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
            if (!row_exists(out, machines[i].cases[k].id))
                rc = add_row(out, &machines[i].cases[k], err);
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
         * counts the read and the write: not the same quantity */
        if (row->rate[m] >= 0 || cr == NULL || row->latency_first || cr->rate_scale <= 0 ||
            (direction && strcmp(direction, "d2d") == 0))
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
        row->per_usd[m] = c->price[m] > 0 ? row->rate[m] * 3600.0 / c->price[m] : -1;
        row->everywhere = true;
        for (int i = 0; i < c->n_m; i++)
            row->everywhere = row->everywhere && (row->idx[i] >= 0 || row->from_sheet[i]);
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
    }
    free(c->rows);
    for (int g = 0; g < c->n_geo; g++) {
        free(c->geo[g].geomean);
        free(c->geo[g].geomean_usd);
        free(c->geo[g].n);
    }
    free(c->geo);
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
