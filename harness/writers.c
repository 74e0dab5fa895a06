#include "writers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "results.h"

int mb_format_valid(const char *f)
{
    return f && (strcmp(f, "table") == 0 || strcmp(f, "json") == 0 || strcmp(f, "csv") == 0 ||
                 strcmp(f, "md") == 0);
}

void mb_humanize_value(const char *in, char *out, size_t len)
{
    char *end;
    long long v = strtoll(in, &end, 10);
    static const char suffix[] = { 't', 'g', 'm', 'k' };
    static const long long unit[] = { 1LL << 40, 1LL << 30, 1LL << 20, 1LL << 10 };
    if (*in && *end == '\0' && v > 0) {
        for (int i = 0; i < 4; i++) {
            if (v >= unit[i] && v % unit[i] == 0) {
                snprintf(out, len, "%lld%c", v / unit[i], suffix[i]);
                return;
            }
        }
    }
    snprintf(out, len, "%s", in);
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double nested(const cJSON *o, const char *a, const char *b)
{
    return num_of(cJSON_GetObjectItemCaseSensitive(o, a), b);
}

static bool in_list(const cJSON *list, const char *name)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, list)
    {
        if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0)
            return true;
    }
    return false;
}

void mb_case_label(const cJSON *c, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s/%s", str_of(c, "component"), str_of(c, "backend"));
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(c, "params_set");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "params"))
    {
        if (!cJSON_IsString(p) || off >= len || (cJSON_IsArray(set) && !in_list(set, p->string)))
            continue;
        char h[64];
        mb_humanize_value(p->valuestring, h, sizeof h);
        off += (size_t)snprintf(buf + off, len - off, " %s=%s", p->string, h);
    }
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3))
        snprintf(buf, len, "%.3e", v);
    else
        snprintf(buf, len, "%.4g", v);
}

typedef struct row {
    char cells[11][512];
} row;

enum { C_STATUS, C_CASE, C_CEIL, C_BEST, C_CV, C_BURST, C_SUST, C_PEAK, C_EFF, C_VERIFY, C_NOTE, N_COLS };
static const char *const HEAD[N_COLS] = { "status", "case", "ceiling (median)", "best", "cv", "burst",
                                          "sustained", "peak", "eff", "verify", "reason / notes" };

/* A compute case's phase rate (harness/phases.h), and its mean SM clock
 * when NVML read one: "787.1 @1980MHz". Empty for other cases. */
static void phase_cell(const cJSON *c, const char *phase, char *buf, size_t len)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, phase);
    if (!cJSON_IsObject(p))
        return;
    char a[64];
    fmt_num(a, sizeof a, num_of(p, "rate"));
    double mhz = nested(p, "sm_clock_mhz", "mean");
    if (isfinite(mhz) && mhz > 0)
        snprintf(buf, len, "%s @%.0fMHz", a, mhz);
    else
        snprintf(buf, len, "%s", a);
}

static void fill_row(const cJSON *c, row *r)
{
    memset(r, 0, sizeof *r);
    /* An ok case with a cv above its max_cv is shown as such, never as a
     * plain "ok" ceiling. */
    bool noisy = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "noisy"));
    snprintf(r->cells[C_STATUS], 512, "%s", noisy && strcmp(str_of(c, "status"), "ok") == 0 ? "noisy" : str_of(c, "status"));
    mb_case_label(c, r->cells[C_CASE], 512);
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
    const char *unit = str_of(c, "rate_unit");
    bool lat = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "latency_first"));
    char a[64], b[64];
    if (cJSON_IsObject(rate)) {
        if (lat) {
            double spu = nested(c, "seconds_per_unit", "median");
            fmt_num(a, sizeof a, spu * 1e6);
            snprintf(r->cells[C_CEIL], 512, "%s us/%s", a, str_of(c, "work_unit"));
            double best = num_of(rate, "best"), scale = num_of(c, "rate_scale");
            fmt_num(b, sizeof b, best > 0 ? 1e6 / (best * scale) : NAN);
            snprintf(r->cells[C_BEST], 512, "%s us", b);
        } else {
            fmt_num(a, sizeof a, num_of(rate, "median"));
            snprintf(r->cells[C_CEIL], 512, "%s %s", a, unit);
            fmt_num(b, sizeof b, num_of(rate, "best"));
            snprintf(r->cells[C_BEST], 512, "%s", b);
        }
        snprintf(r->cells[C_CV], 512, "%.1f%%", num_of(rate, "cv") * 100);
    }
    phase_cell(c, "burst", r->cells[C_BURST], 512);
    phase_cell(c, "sustained", r->cells[C_SUST], 512);
    const cJSON *peak = cJSON_GetObjectItemCaseSensitive(c, "peak");
    if (cJSON_IsObject(peak)) {
        fmt_num(a, sizeof a, num_of(peak, "value"));
        snprintf(r->cells[C_PEAK], 512, "%s", a);
    }
    double eff = num_of(c, "efficiency");
    if (isfinite(eff))
        snprintf(r->cells[C_EFF], 512, "%.0f%%", eff * 100);
    snprintf(r->cells[C_VERIFY], 512, "%s", str_of(cJSON_GetObjectItemCaseSensitive(c, "verification"), "status"));
    const char *reason = str_of(c, "reason");
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(c, "notes");
    if (*reason)
        snprintf(r->cells[C_NOTE], 512, "%s", reason);
    else if (cJSON_GetArraySize(notes) > 0 && cJSON_IsString(cJSON_GetArrayItem(notes, 0)))
        snprintf(r->cells[C_NOTE], 512, "%s", cJSON_GetArrayItem(notes, 0)->valuestring);
    const cJSON *n;
    const cJSON *scan = noisy && !*reason ? notes : NULL;
    cJSON_ArrayForEach(n, scan)
        if (cJSON_IsString(n) && strncmp(n->valuestring, "noisy:", 6) == 0)
            snprintf(r->cells[C_NOTE], 512, "%s", n->valuestring);
}

static int write_table(FILE *out, const cJSON *cases, bool markdown)
{
    int n = cJSON_GetArraySize(cases);
    row *rows = calloc((size_t)n + 1, sizeof *rows);
    if (rows == NULL)
        return MB_ESYS;
    size_t width[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        width[k] = strlen(HEAD[k]);
    for (int i = 0; i < n; i++) {
        fill_row(cJSON_GetArrayItem(cases, i), &rows[i]);
        for (int k = 0; k < N_COLS; k++) {
            size_t l = strlen(rows[i].cells[k]);
            if (!markdown && k == C_NOTE && l > 60)
                l = 60;
            if (l > width[k])
                width[k] = l;
        }
    }
    const char *sep = markdown ? " | " : "  ";
    if (markdown)
        fputs("| ", out);
    for (int k = 0; k < N_COLS; k++)
        fprintf(out, "%-*s%s", (int)width[k], HEAD[k], k + 1 < N_COLS ? sep : "");
    fputs(markdown ? " |\n" : "\n", out);
    if (markdown) {
        fputs("|", out);
        for (int k = 0; k < N_COLS; k++)
            fprintf(out, "%s|", (k >= C_CEIL && k <= C_EFF) ? "---:" : "---");
        fputs("\n", out);
    }
    for (int i = 0; i < n; i++) {
        if (markdown)
            fputs("| ", out);
        for (int k = 0; k < N_COLS; k++) {
            char cell[512];
            snprintf(cell, sizeof cell, "%s", rows[i].cells[k]);
            if (markdown)
                for (char *p = cell; *p; p++)
                    if (*p == '|')
                        *p = '/';
            if (!markdown && k == C_NOTE && strlen(cell) > 60)
                strcpy(cell + 57, "...");
            bool right = k >= C_CEIL && k <= C_EFF;
            fprintf(out, right ? "%*s%s" : "%-*s%s", (int)width[k], cell, k + 1 < N_COLS ? sep : "");
        }
        fputs(markdown ? " |\n" : "\n", out);
    }
    free(rows);
    return MB_OK;
}

static void csv_field(FILE *out, const char *s)
{
    bool quote = strpbrk(s, ",\"\n") != NULL;
    if (!quote) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.9g", v);
}

static int write_csv(FILE *out, const cJSON *cases)
{
    fputs("id,section,component,backend,params,status,reason,work_unit,work_per_iteration,rate_unit,"
          "rate_median,rate_best,rate_cv,seconds_per_iteration_median,peak,peak_source,efficiency,"
          "verification,burst_rate,sustained_rate,ceiling_phase\n",
          out);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        char params[2048] = "";
        size_t off = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "params"))
        {
            if (cJSON_IsString(p) && off < sizeof params)
                off += (size_t)snprintf(params + off, sizeof params - off, "%s%s=%s", off ? ";" : "",
                                        p->string, p->valuestring);
        }
        const cJSON *peak = cJSON_GetObjectItemCaseSensitive(c, "peak");
        const char *fields[] = { str_of(c, "id"), str_of(c, "section"), str_of(c, "component"),
                                 str_of(c, "backend"), params, str_of(c, "status"), str_of(c, "reason"),
                                 str_of(c, "work_unit") };
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            csv_field(out, fields[i]);
            fputc(',', out);
        }
        csv_num(out, num_of(c, "work_per_iteration"));
        fputc(',', out);
        csv_field(out, str_of(c, "rate_unit"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "median"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "best"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "cv"));
        fputc(',', out);
        csv_num(out, nested(c, "seconds_per_iteration", "median"));
        fputc(',', out);
        csv_num(out, cJSON_IsObject(peak) ? num_of(peak, "value") : NAN);
        fputc(',', out);
        csv_field(out, cJSON_IsObject(peak) ? str_of(peak, "source") : "");
        fputc(',', out);
        csv_num(out, num_of(c, "efficiency"));
        fputc(',', out);
        csv_field(out, str_of(cJSON_GetObjectItemCaseSensitive(c, "verification"), "status"));
        fputc(',', out);
        csv_num(out, nested(c, "burst", "rate"));
        fputc(',', out);
        csv_num(out, nested(c, "sustained", "rate"));
        fputc(',', out);
        csv_field(out, str_of(c, "ceiling_phase"));
        fputc('\n', out);
    }
    return MB_OK;
}

int mb_write_results(FILE *out, const cJSON *doc, const char *format, mb_err *err)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    if (strcmp(format, "json") == 0) {
        char *t = cJSON_Print(doc);
        if (t == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        fprintf(out, "%s\n", t);
        free(t);
        return MB_OK;
    }
    if (strcmp(format, "csv") == 0)
        return write_csv(out, cases);
    if (strcmp(format, "table") == 0 || strcmp(format, "md") == 0) {
        bool md = strcmp(format, "md") == 0;
        if (md) {
            const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
            const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(ctx, "cpu");
            fprintf(out, "### mlbench results: %s (%s)\n\n", str_of(cJSON_GetObjectItemCaseSensitive(ctx, "host"), "name"),
                    str_of(cpu, "model"));
        }
        int rc = write_table(out, cases, md);
        fprintf(out, "%sceiling = median of the repetitions' rates; best = their maximum; cv = stddev/mean; "
                     "eff = ceiling / peak; noisy = ok but cv above max_cv: not a ceiling.\ncompute cases: "
                     "burst = median of short windows after idle gaps (clocks free); sustained = back-to-back work "
                     "after the clocks settle, the ceiling `gap` uses; @ = mean SM clock.\n",
                md ? "\n" : "");
        return rc;
    }
    return mb_errf(err, MB_EUSAGE, "unknown format '%s' (expected table, json, csv or md)", format);
}

/* ---- Google Benchmark JSON ---------------------------------------------- */

static cJSON *gb_entry(const char *name, const char *run_name, const char *run_type, const char *aggregate,
                       int rep_index, int reps, double iterations, double ns)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "name", name);
    cJSON_AddNumberToObject(b, "family_index", 0);
    cJSON_AddNumberToObject(b, "per_family_instance_index", 0);
    cJSON_AddStringToObject(b, "run_name", run_name);
    cJSON_AddStringToObject(b, "run_type", run_type);
    cJSON_AddNumberToObject(b, "repetitions", reps);
    if (aggregate) {
        cJSON_AddStringToObject(b, "aggregate_name", aggregate);
        cJSON_AddStringToObject(b, "aggregate_unit", strcmp(aggregate, "cv") == 0 ? "percentage" : "time");
    } else {
        cJSON_AddNumberToObject(b, "repetition_index", rep_index);
    }
    cJSON_AddNumberToObject(b, "threads", 1);
    cJSON_AddNumberToObject(b, "iterations", iterations);
    cJSON_AddNumberToObject(b, "real_time", isfinite(ns) ? ns : 0);
    cJSON_AddNumberToObject(b, "cpu_time", isfinite(ns) ? ns : 0);
    cJSON_AddStringToObject(b, "time_unit", "ns");
    return b;
}

int mb_write_gbench_json(const char *path, const cJSON *doc, mb_err *err)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *ctx = cJSON_AddObjectToObject(out, "context");
    const cJSON *mctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(mctx, "cpu");
    cJSON_AddStringToObject(ctx, "date", str_of(doc, "started_utc"));
    cJSON_AddStringToObject(ctx, "host_name", str_of(cJSON_GetObjectItemCaseSensitive(mctx, "host"), "name"));
    cJSON_AddStringToObject(ctx, "executable", "mlbench");
    cJSON_AddNumberToObject(ctx, "num_cpus", num_of(cpu, "logical_cpus"));
    double mhz = num_of(cpu, "mhz_max");
    cJSON_AddNumberToObject(ctx, "mhz_per_cpu", isfinite(mhz) ? mhz : 0);
    cJSON_AddBoolToObject(ctx, "cpu_scaling_enabled", 0);
    cJSON_AddArrayToObject(ctx, "caches");
    cJSON_AddStringToObject(ctx, "library_build_type", "release");
    cJSON *benches = cJSON_AddArrayToObject(out, "benchmarks");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
    {
        const cJSON *reps = cJSON_GetObjectItemCaseSensitive(c, "per_repetition");
        int n = cJSON_GetArraySize(reps);
        if (!cJSON_IsArray(reps) || n == 0)
            continue;
        const char *id = str_of(c, "id");
        double ns[n];
        double iters = 0;
        for (int i = 0; i < n; i++) {
            const cJSON *r = cJSON_GetArrayItem(reps, i);
            double it = num_of(r, "iterations");
            ns[i] = num_of(r, "seconds") / it * 1e9;
            iters = it;
            cJSON_AddItemToArray(benches, gb_entry(id, id, "iteration", NULL, i, n, it, ns[i]));
        }
        char name[2048];
        const char *aggs[] = { "mean", "median", "stddev", "cv" };
        double vals[] = { mb_mean(ns, n), mb_median(ns, n), mb_stddev(ns, n), mb_cv(ns, n) };
        for (int a = 0; a < 4; a++) {
            snprintf(name, sizeof name, "%s_%s", id, aggs[a]);
            cJSON_AddItemToArray(benches, gb_entry(name, id, "aggregate", aggs[a], 0, n, iters, vals[a]));
        }
    }
    char *text = cJSON_Print(out);
    cJSON_Delete(out);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_write_file_atomic(path, text, err);
    free(text);
    return rc;
}
