/* gap.c: matching stages to ceilings, and the gap arithmetic. */
#include "gap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "format.h"
#include "formulas.h"
#include "reference.h"
#include "vocabulary.h"

/* ---- dtypes ----------------------------------------------------------------- */

static const struct {
    const char *alias, *name;
    double rank; /* distance on the precision ladder */
} dtypes[] = {
    { "fp64", "fp64", 0 }, { "float64", "fp64", 0 }, { "double", "fp64", 0 },
    { "fp32", "fp32", 1 }, { "float32", "fp32", 1 }, { "float", "fp32", 1 },
    { "tf32", "tf32", 2 },
    { "fp16", "fp16", 3 }, { "float16", "fp16", 3 }, { "half", "fp16", 3 },
    { "bf16", "bf16", 3 }, { "bfloat16", "bf16", 3 },
    { "fp8", "fp8", 4 }, { "e4m3", "fp8", 4 }, { "e5m2", "fp8", 4 }, { "float8", "fp8", 4 },
    { "int8", "int8", 5 },
};

const char *mb_dtype_canonical(const char *dtype)
{
    if (dtype == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcasecmp(dtype, dtypes[i].alias) == 0)
            return dtypes[i].name;
    return NULL;
}

static double dtype_rank(const char *canonical)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(canonical, dtypes[i].name) == 0)
            return dtypes[i].rank;
    return -1;
}

/* 0 = same; fp16 vs bf16 = 0.5 (same speed, different format); else steps
 * on the ladder fp64 < fp32 < tf32 < fp16/bf16 < fp8 < int8. */
static double dtype_distance(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return 0;
    const char *ca = mb_dtype_canonical(a), *cb = mb_dtype_canonical(b);
    if (ca == NULL || cb == NULL)
        return strcasecmp(a, b) == 0 ? 0 : 9;
    if (strcmp(ca, cb) == 0)
        return 0;
    double d = fabs(dtype_rank(ca) - dtype_rank(cb));
    return d == 0 ? 0.5 : d;
}

/* ---- reading a case's attributes ---------------------------------------------- */

/* The first of the comma-separated names in matching [params] attr found in
 * the case's params, then its info strings, then its metrics, as text in buf. */
static const char *case_attr(const mb_case_ref *c, const mb_ini *m, const char *attr, char *buf, size_t len)
{
    const char *names = mb_ini_get(m, "params", attr);
    char list[256];
    snprintf(list, sizeof list, "%s", names ? names : attr);
    const cJSON *info = c->json ? cJSON_GetObjectItemCaseSensitive(c->json, "info") : NULL;
    const cJSON *metrics = c->json ? cJSON_GetObjectItemCaseSensitive(c->json, "metrics") : NULL;
    for (int where = 0; where < 3; where++) {
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", list);
        for (char *n = strtok_r(copy, ", \t", &save); n; n = strtok_r(NULL, ", \t", &save)) {
            const cJSON *it = NULL;
            if (where == 0) {
                const char *v = mb_case_param(c, n);
                if (v) {
                    snprintf(buf, len, "%s", v);
                    return buf;
                }
            } else if (where == 1 && cJSON_IsObject(info)) {
                it = cJSON_GetObjectItemCaseSensitive(info, n);
                if (cJSON_IsString(it)) {
                    snprintf(buf, len, "%s", it->valuestring);
                    return buf;
                }
            } else if (where == 2 && cJSON_IsObject(metrics)) {
                it = cJSON_GetObjectItemCaseSensitive(metrics, n);
                const cJSON *v = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "value") : it;
                if (cJSON_IsNumber(v)) {
                    snprintf(buf, len, "%.17g", v->valuedouble);
                    return buf;
                }
            }
        }
    }
    return NULL;
}

static double parse_size_text(const char *t)
{
    long long v;
    mb_err e = { 0 };
    if (t == NULL || mb_parse_size(t, &v, &e))
        return 0;
    return (double)v;
}

/* ---- units ------------------------------------------------------------------------ */

static bool units_match(const mb_ini *m, const char *stage_unit, const char *case_unit)
{
    if (stage_unit == NULL || case_unit == NULL)
        return false;
    if (strcmp(stage_unit, case_unit) == 0)
        return true;
    return mb_ini_list_has(m, "units", stage_unit, case_unit);
}

static double case_metric(const mb_case_ref *c, const char *name)
{
    const cJSON *metrics = c->json ? cJSON_GetObjectItemCaseSensitive(c->json, "metrics") : NULL;
    const cJSON *it = cJSON_IsObject(metrics) ? cJSON_GetObjectItemCaseSensitive(metrics, name) : NULL;
    const cJSON *v = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "value") : it;
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

double mb_gap_case_rate(const mb_stage *s, const mb_case_ref *c, const mb_ini *matching)
{
    if (c->work_unit == NULL || s->work_unit == NULL)
        return 0;
    if (units_match(matching, s->work_unit, c->work_unit)) {
        /* A collective case measured in bus bandwidth (nccl-tests): busbw
         * is the figure that holds across rank counts, so the stage's
         * algorithm-bandwidth ceiling is busbw / factor(stage's ranks). */
        mb_collective coll;
        if (mb_coll_from_name(s->component, &coll) && case_metric(c, "busbw_factor") > 0) {
            double f = mb_busbw_factor(coll, s->ranks);
            return f > 0 ? c->rate_abs / f : 0;
        }
        return c->rate_abs;
    }
    /* A disk case counted in I/Os: bytes/s = I/Os per second x block size. */
    if (strcmp(s->work_unit, "byte") == 0 && strcmp(c->work_unit, "io") == 0) {
        char buf[64];
        double bs = parse_size_text(case_attr(c, matching, "block_size", buf, sizeof buf));
        return bs > 0 ? c->rate_abs * bs : 0;
    }
    return 0;
}

/* ---- matching ------------------------------------------------------------------------ */

static bool component_matches(const mb_ini *m, const char *stage_comp, const char *case_comp)
{
    if (mb_ini_get(m, "components", stage_comp))
        return mb_ini_list_has(m, "components", stage_comp, case_comp);
    return strcmp(stage_comp, case_comp) == 0;
}

static const char *stage_device(const mb_stage *s)
{
    return mb_stage_on_gpu(s) ? "gpu" : "cpu";
}

/* Bytes or FLOPs per call of the stage; 0 when unknown. */
static double stage_size(const mb_stage *s)
{
    if (s->block_size > 0)
        return (double)s->block_size;
    if (s->count > 0 && strcmp(s->work_unit, "byte") == 0)
        return s->work / (double)s->count;
    if (s->count > 0 && strcmp(s->work_unit, "flop") == 0)
        return s->work / (double)s->count;
    return 0;
}

static double case_size(const mb_stage *s, const mb_case_ref *c, const mb_ini *m)
{
    char buf[64];
    if (strcmp(s->component, "disk") == 0)
        return parse_size_text(case_attr(c, m, "block_size", buf, sizeof buf));
    if (strcmp(s->work_unit, "byte") == 0) {
        double v = parse_size_text(case_attr(c, m, "message_size", buf, sizeof buf));
        if (v > 0)
            return v;
    }
    /* a GEMM case times 11 or 245 products per iteration: one of them is
     * what a stage's call is the size of */
    double calls = parse_size_text(case_attr(c, m, "calls_per_iteration", buf, sizeof buf));
    return calls >= 1 ? c->work_per_iter / calls : c->work_per_iter;
}

static void fmt_size(char *buf, size_t len, double v, const char *unit)
{
    if (strcmp(unit, "byte") == 0) {
        const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        int i = 0;
        while (v >= 1024 && i < 4) {
            v /= 1024;
            i++;
        }
        snprintf(buf, len, "%.3g %s", v, u[i]);
    } else if (strcmp(unit, "flop") == 0) {
        const char *u[] = { "FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP" };
        int i = 0;
        while (v >= 1000 && i < 5) {
            v /= 1000;
            i++;
        }
        snprintf(buf, len, "%.3g %s", v, u[i]);
    } else {
        snprintf(buf, len, "%.3g %s", v, unit);
    }
}

typedef struct counts {
    int component, usable, device, unit, hard;
    const char *other_device_backend;
    const char *first_skip_reason;
    int skipped, failed, unverified;
    char hard_what[128];
} counts;

/* A hard attribute: the case must have the stage's value when it records one. */
static bool hard_ok(const mb_stage *s, const mb_case_ref *c, const mb_ini *m, counts *k)
{
    char buf[64];
    if (s->direction) {
        const char *d = case_attr(c, m, "direction", buf, sizeof buf);
        if (d && strcasecmp(d, s->direction) != 0) {
            snprintf(k->hard_what, sizeof k->hard_what, "direction %s", s->direction);
            return false;
        }
    }
    if (s->op) {
        /* a memset writes: held against membw write, not copy */
        const char *p = case_attr(c, m, "op", buf, sizeof buf);
        if (p && strcasecmp(p, s->op) != 0) {
            snprintf(k->hard_what, sizeof k->hard_what, "op %s", s->op);
            return false;
        }
    }
    if (s->pattern) {
        const char *p = case_attr(c, m, "pattern", buf, sizeof buf);
        if (p && strcasecmp(p, s->pattern) != 0) {
            snprintf(k->hard_what, sizeof k->hard_what, "pattern %s", s->pattern);
            return false;
        }
    }
    /* [require] stage.param = values the case must have */
    for (int i = 0; i < m->n; i++) {
        const mb_ini_entry *e = &m->e[i];
        const char *dot = strchr(e->key, '.');
        if (strcmp(e->section, "require") != 0 || dot == NULL)
            continue;
        size_t cl = (size_t)(dot - e->key);
        if (strlen(s->component) != cl || strncmp(s->component, e->key, cl) != 0)
            continue;
        const char *v = mb_case_param(c, dot + 1);
        if (v && !mb_ini_list_has(m, "require", e->key, v)) {
            snprintf(k->hard_what, sizeof k->hard_what, "%s = %s", dot + 1, e->value);
            return false;
        }
    }
    return true;
}

/* The stage's memory (pinned|pageable) against the case's: 0 same or
 * unknown, 1 different. The case's memory goes to case_mem ("" unknown). */
static int memory_mismatch(const mb_stage *s, const mb_case_ref *c, const mb_ini *m, char *case_mem, size_t len)
{
    char buf[64];
    const char *mem = case_attr(c, m, "memory", buf, sizeof buf);
    if (mem == NULL) {
        const char *p = case_attr(c, m, "pinned", buf, sizeof buf);
        if (p)
            mem = (strcmp(p, "1") == 0 || strcasecmp(p, "true") == 0 || strcasecmp(p, "yes") == 0)
                      ? "pinned" : "pageable";
    }
    snprintf(case_mem, len, "%s", mem ? mem : "");
    if (s->memory == NULL || mem == NULL)
        return 0;
    return strcasecmp(s->memory, mem) != 0;
}

static double prefer_penalty(const mb_case_ref *c, const mb_ini *m)
{
    double penalty = 0, weight = 1;
    const char *w = mb_ini_get(m, "prefer", "weight");
    if (w)
        weight = atof(w);
    for (int i = 0; i < m->n; i++) {
        const mb_ini_entry *e = &m->e[i];
        const char *dot = strchr(e->key, '.');
        if (strcmp(e->section, "prefer") != 0 || dot == NULL)
            continue;
        size_t cl = (size_t)(dot - e->key);
        if (strlen(c->component) != cl || strncmp(c->component, e->key, cl) != 0)
            continue;
        const char *v = mb_case_param(c, dot + 1);
        if (v && strcasecmp(v, e->value) != 0)
            penalty += weight;
    }
    return penalty;
}

typedef struct score {
    double total;
    double dtype_d, ranks_d, threads_d, size_d, prefer;
    int mem_d;
    char case_dtype[32], case_mem[16]; /* "" = the case does not say */
    double case_ranks, case_threads, case_size;
} score;

/* The cores a CPU case ran on: its metrics' threads (what it used), else its
 * threads parameter when that names a count (0 there is all of them); 0 =
 * unknown. */
static double case_threads(const mb_case_ref *c)
{
    const cJSON *metrics = c->json ? cJSON_GetObjectItemCaseSensitive(c->json, "metrics") : NULL;
    const cJSON *t = cJSON_IsObject(metrics) ? cJSON_GetObjectItemCaseSensitive(metrics, "threads") : NULL;
    const cJSON *v = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "value") : t;
    if (cJSON_IsNumber(v) && v->valuedouble > 0)
        return v->valuedouble;
    const char *p = mb_case_param(c, "threads");
    return p && atof(p) > 0 ? atof(p) : 0;
}

static void score_case(const mb_stage *s, const mb_case_ref *c, const mb_ini *m, score *sc)
{
    char rk[32];
    memset(sc, 0, sizeof *sc);
    const char *dt = case_attr(c, m, "dtype", sc->case_dtype, sizeof sc->case_dtype);
    sc->dtype_d = s->dtype && dt ? dtype_distance(s->dtype, dt) : 0;
    sc->mem_d = memory_mismatch(s, c, m, sc->case_mem, sizeof sc->case_mem);
    const char *r = case_attr(c, m, "ranks", rk, sizeof rk);
    sc->case_ranks = r ? atof(r) : 0;
    if (s->ranks > 0 && sc->case_ranks > 0)
        sc->ranks_d = fabs(log2((double)s->ranks / sc->case_ranks));
    /* a rank sharing its host's CPUs with others: the case of its share of them */
    sc->case_threads = s->threads > 0 ? case_threads(c) : 0;
    if (sc->case_threads > 0)
        sc->threads_d = fabs(log2((double)s->threads / sc->case_threads));
    double ss = stage_size(s);
    sc->case_size = case_size(s, c, m);
    if (ss > 0 && sc->case_size > 0)
        sc->size_d = fabs(log2(ss / sc->case_size));
    sc->prefer = prefer_penalty(c, m);
    sc->total = 1000 * sc->dtype_d + 100 * sc->mem_d + 10 * (sc->ranks_d + sc->threads_d) + sc->size_d + sc->prefer;
}

static void note_unusable(const mb_case_ref *c, counts *k)
{
    if (strcmp(c->status, "skipped") == 0) {
        k->skipped++;
        if (k->first_skip_reason == NULL)
            k->first_skip_reason = c->reason;
    } else if (strcmp(c->status, "failed") == 0) {
        k->failed++;
    } else {
        k->unverified++;
    }
}

/* The case component a stage is measured by ("sync" -> "launch"). */
static const char *case_component(const mb_ini *m, const char *stage_comp)
{
    const char *v = mb_ini_get(m, "components", stage_comp);
    return v ? v : stage_comp;
}

static void explain_none(const mb_stage *s, const mb_ini *m, const counts *k, char *why, size_t len)
{
    const char *cc = case_component(m, s->component);
    mb_collective coll;
    if (strcmp(s->component, "other") == 0 && s->role && strcmp(s->role, "communication") == 0)
        snprintf(why, len,
                 "no ceiling: a collective mlbench does not measure (barrier, all-to-all, send/recv), or given "
                 "without its kind and bytes (its time still counts)");
    else if (strcmp(s->component, "other") == 0 && s->role && strcmp(s->role, "optimizer") == 0)
        /* the words of the trace's own reason (trace_cpu.c): one reason per stage in every view */
        snprintf(why, len, "no ceiling: no benchmark measures an optimizer step (its time still counts)");
    else if (strcmp(s->component, "other") == 0)
        snprintf(why, len, "no ceiling: an 'other' stage has no benchmark (its time still counts)");
    else if (k->component == 0)
        snprintf(why, len, "no ceiling: the results have no %s case", cc);
    else if (k->usable == 0)
        snprintf(why, len,
                 "no ceiling: %d %s case%s, none usable as a ceiling (%d skipped%s%s%s, %d failed, %d not "
                 "verified)",
                 k->component, cc, k->component == 1 ? "" : "s", k->skipped, k->first_skip_reason ? ": \"" : "",
                 k->first_skip_reason ? k->first_skip_reason : "", k->first_skip_reason ? "\"" : "", k->failed,
                 k->unverified);
    else if (k->device == 0)
        snprintf(why, len,
                 "no ceiling: the %s cases ran on the %s (%s), this stage on the %s (results from a machine "
                 "without a GPU? set \"device\" if the stage ran elsewhere)",
                 cc, strcmp(stage_device(s), "gpu") == 0 ? "cpu" : "gpu",
                 k->other_device_backend ? k->other_device_backend : "?", stage_device(s));
    else if (k->unit == 0 && mb_coll_from_name(s->component, &coll) && coll != MB_COLL_BROADCAST && s->ranks <= 1)
        snprintf(why, len,
                 "no ceiling: the stage's rank count is %s: the %s ceiling (bus bandwidth) holds for a rank count "
                 "(give `ranks`)",
                 s->ranks <= 0 ? "unknown" : "1", cc);
    else if (k->unit == 0)
        snprintf(why, len, "no ceiling: the %s cases count work in another unit than the stage (%s)", cc,
                 s->work_unit);
    else
        snprintf(why, len, "no ceiling: no %s case with %s was measured", cc, k->hard_what);
}

/* Cases as near the stage as the best one (same dtype, size, ...): the
 * ceiling is the fastest of them, whichever library measured it (OpenBLAS
 * and oneDNN on the same CPU GEMM shape can differ by 2x), the fastest of
 * those not noisy when there is one: the fastest of noisy cases is the
 * one noise lifted most (this VM's 3x3 conv at 255 GFLOP/s, 38% above its
 * own burst rate and above the CPU's peak, beat a clean 235). Their count,
 * the noisy ones and backends, for the explanation. */
typedef struct ties {
    int n, noisy;
    char backends[128]; /* "openblas, onednn" */
} ties;

static void ties_add(ties *t, const char *backend, bool noisy)
{
    t->n++;
    t->noisy += noisy;
    size_t bl = strlen(backend), at = strlen(t->backends);
    for (const char *p = strstr(t->backends, backend); p; p = strstr(p + 1, backend))
        if ((p == t->backends || p[-1] == ' ') && (p[bl] == ',' || p[bl] == '\0'))
            return; /* already listed */
    if (at + bl + 3 < sizeof t->backends)
        snprintf(t->backends + at, sizeof t->backends - at, "%s%s", at ? ", " : "", backend);
}

static void explain_choice(const mb_stage *s, const mb_ini *m, const mb_case_ref *c, const score *sc, int usable,
                           const ties *tied, char *why, size_t len)
{
    const char *cc = c->component;
    /* A stage held against another component's case says so first
     * (matching.ini [notes]: attention against the GEMM case). */
    const char *note = strcmp(s->component, cc) != 0 ? mb_ini_get(m, "notes", s->component) : NULL;
    size_t n = note ? (size_t)snprintf(why, len, "%s: %s;", c->id, note) : (size_t)snprintf(why, len, "%s:", c->id);
#define ADD(...)                                                          \
    do {                                                                  \
        if (n < len)                                                      \
            n += (size_t)snprintf(why + n, len - n, __VA_ARGS__);         \
    } while (0)
    if (s->dtype) {
        if (sc->case_dtype[0] == '\0')
            ADD(" case records no dtype;");
        else if (sc->dtype_d == 0)
            ADD(" dtype %s;", s->dtype);
        else
            ADD(" dtype %s not measured, nearest %s;", s->dtype, sc->case_dtype);
    }
    if (s->direction)
        ADD(" direction %s;", s->direction);
    if (s->pattern)
        ADD(" pattern %s;", s->pattern);
    if (s->op)
        ADD(" op %s;", s->op);
    if (s->memory && sc->case_mem[0])
        ADD(sc->mem_d ? " %s memory not measured, case uses %s;" : " %s memory;", s->memory, sc->case_mem);
    if (s->ranks > 0 && sc->case_ranks > 0)
        ADD(sc->ranks_d == 0 ? " %d ranks;" : " %d ranks not measured, case has %.0f;", s->ranks, sc->case_ranks);
    if (s->threads > 0 && sc->case_threads > 0)
        ADD(sc->threads_d == 0 ? " %d thread%s (its share of the host's CPUs);"
                               : " %d thread%s (its share of the host's CPUs) not measured, case has %.0f;",
            s->threads, s->threads == 1 ? "" : "s", sc->case_threads);
    double ss = stage_size(s);
    char a[32], b[32];
    if (ss > 0 && sc->case_size > 0) {
        fmt_size(a, sizeof a, ss, s->work_unit);
        fmt_size(b, sizeof b, sc->case_size, s->work_unit);
        if (sc->size_d < 0.01)
            ADD(" %s per call as the stage;", b);
        else
            ADD(" %s per call, the stage's %s;", b, a);
    } else if (ss <= 0 && strcmp(s->component, "launch") && strcmp(s->component, "sync")) {
        ADD(" stage size per call unknown (give calls or block_size);");
    }
    ADD(" nearest of %d usable %s case%s", usable, cc, usable == 1 ? "" : "s");
    if (tied->n > 1 && tied->noisy > 0 && tied->noisy < tied->n)
        ADD("; the fastest of %d equally near (%s) that are not noisy (%d noisy, left aside)", tied->n - tied->noisy,
            tied->backends, tied->noisy);
    else if (tied->n > 1)
        ADD("; the fastest of %d equally near (%s)", tied->n, tied->backends);
    /* Still the best match, but never passed off as a solid ceiling. */
    if (c->noisy && c->noise[0])
        ADD("; %s; re-measure it", c->noise); /* "noisy: why" */
    else if (c->noisy)
        ADD("; noisy: cv %.1f%% above the run's max_cv; re-measure it", c->cv * 100);
#undef ADD
}

int mb_gap_match(const mb_stage *s, const mb_ceilings *res, const mb_ini *m, char *why, size_t len)
{
    counts k = { 0 };
    int best = -1;
    score best_sc = { 0 };
    ties tied = { 0 };
    if (strcmp(s->component, "other") == 0) {
        explain_none(s, m, &k, why, len);
        return -1;
    }
    if (s->work_unit == NULL || strcmp(s->work_unit, "s") == 0) {
        const char *c = s->component;
        bool flops = strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "attention") == 0;
        const char *what = flops                      ? "FLOPs"
                           : strcmp(c, "launch") == 0 ? "launch count"
                           : strcmp(c, "sync") == 0   ? "sync count"
                                                      : "bytes";
        snprintf(why, len,
                 "no ceiling: the stage has a time but no amount of work (%s unknown), so no rate to compare",
                 what);
        return -1;
    }
    const char *dev = stage_device(s);
    for (int i = 0; i < res->n_cases; i++) {
        const mb_case_ref *c = &res->cases[i];
        if (!component_matches(m, s->component, c->component))
            continue;
        k.component++;
        if (!c->usable) {
            note_unusable(c, &k);
            continue;
        }
        k.usable++;
        if (strcmp(c->device, dev) != 0) {
            k.other_device_backend = c->backend;
            continue;
        }
        k.device++;
        if (mb_gap_case_rate(s, c, m) <= 0)
            continue;
        k.unit++;
        if (!hard_ok(s, c, m, &k))
            continue;
        k.hard++;
        score sc;
        score_case(s, c, m, &sc);
        /* lower score wins; on a tie the faster case (the higher ceiling:
         * the best library, all cores rather than one) */
        bool tie = best >= 0 && fabs(sc.total - best_sc.total) <= 1e-9;
        if (best < 0 || sc.total < best_sc.total - 1e-9) {
            memset(&tied, 0, sizeof tied);
            ties_add(&tied, c->backend, c->noisy);
            best = i;
            best_sc = sc;
        } else if (tie) {
            ties_add(&tied, c->backend, c->noisy);
            const mb_case_ref *b = &res->cases[best];
            if (c->noisy != b->noisy ? b->noisy : c->rate_abs > b->rate_abs) {
                best = i;
                best_sc = sc;
            }
        }
    }
    if (best < 0) {
        explain_none(s, m, &k, why, len);
        return -1;
    }
    explain_choice(s, m, &res->cases[best], &best_sc, k.hard, &tied, why, len);
    return best;
}

/* A case as its users read it (the projection, the least time per kernel): its label (the parameters its job
 * file set), else its id. */
static const char *case_name(const mb_case_ref *c)
{
    return c->label[0] ? c->label : c->id;
}

/* The GPU's least time per kernel on `device`: kernels replayed back to
 * back from a CUDA graph (the case [kernel_floor] names: launch, op =
 * graph); 0 when the results have none usable. */
static double kernel_floor_seconds(const mb_ceilings *res, const mb_ini *m, const char *device, const char **id)
{
    const char *comp = mb_ini_get(m, "kernel_floor", "case_component"), *op = mb_ini_get(m, "kernel_floor", "case_op");
    double best = 0;
    for (int i = 0; comp && op && i < res->n_cases; i++) {
        const mb_case_ref *c = &res->cases[i];
        const char *cop = mb_case_param(c, "op");
        if (!c->usable || strcmp(c->component, comp) != 0 || strcmp(c->device, device) != 0 || cop == NULL ||
            strcmp(cop, op) != 0 || c->rate_abs <= 0)
            continue;
        if (best == 0 || 1 / c->rate_abs < best) {
            best = 1 / c->rate_abs;
            *id = case_name(c);
        }
    }
    return best;
}

/* A component whose every call is a GPU kernel ([kernel_floor]: membw, a
 * memset or a memory-bound op's kernels) is held to its bytes at the case's
 * rate plus, per call, the GPU's least time per kernel: 168 memsets of 4 B
 * (TraceLens's H100 Qwen1.5, 143 us) read "at 0.0001% of its ceiling",
 * held to 4 B at 3.2 TB/s each. Returns the rate, `note` saying so. */
static double kernel_floor_rate(const mb_stage *s, const mb_ceilings *res, const mb_case_ref *c, double rate,
                                const mb_ini *m, char *note, size_t len)
{
    const char *id = NULL;
    if (s->count <= 0 || s->work <= 0)
        return rate;
    double per_kernel = kernel_floor_seconds(res, m, c->device, &id);
    if (per_kernel <= 0)
        return rate;
    double floor = (double)s->count * per_kernel + mb_time_at_rate(s->work, rate);
    char f[32];
    mb_fmt_seconds(f, sizeof f, per_kernel);
    snprintf(note, len, "each call also pays the GPU's least time per kernel (%s, %.120s: kernels replayed back to back)",
             f, id);
    return s->work / floor;
}

/* The usable cases of matched case c's kind (component, device, the
 * stage's hard requirements: its direction) in one memory ("pinned",
 * "pageable"; "" unsaid): the best rate, and the smallest one's size and
 * time per call (0 when none). */
typedef struct kind_span {
    double best, smallest, smallest_time;
} kind_span;

static kind_span span_of(const mb_stage *s, const mb_ceilings *res, const mb_case_ref *c, const char *mem,
                         const mb_ini *m)
{
    kind_span k = { 0 };
    counts n = { 0 };
    char other[16];
    for (int i = 0; i < res->n_cases; i++) {
        const mb_case_ref *o = &res->cases[i];
        if (!o->usable || strcmp(o->component, c->component) != 0 || strcmp(o->device, c->device) != 0 ||
            !hard_ok(s, o, m, &n))
            continue;
        memory_mismatch(s, o, m, other, sizeof other);
        if (strcmp(mem, other) != 0)
            continue;
        double r = mb_gap_case_rate(s, o, m), os = case_size(s, o, m);
        if (r <= 0 || os <= 0)
            continue;
        if (r > k.best)
            k.best = r;
        if (k.smallest == 0 || os < k.smallest) {
            k.smallest = os;
            k.smallest_time = os / r;
        }
    }
    return k;
}

/* The fixed cost per call the smallest case of a kind tells: its time less
 * its bytes at the kind's best rate, when that is most of its time (a
 * latency-bound case); else 0 (it moves its bytes more than it waits). */
static double fixed_cost(const kind_span *k)
{
    double fixed = k->smallest_time - k->smallest / k->best;
    return k->best > 0 && fixed >= 0.5 * k->smallest_time ? fixed : 0;
}

/* A component whose calls have a fixed cost ([latency_floor]: a copy's DMA
 * setup and PCIe round trip) with calls smaller than the matched case's
 * (the case is then the smallest measured of its kind) is held to that
 * fixed cost plus its bytes at the kind's best rate: a 4-byte device-to-host
 * copy (a loss's .item()) is held to about 1.7 us, the 4 KiB case's time,
 * not to 4 B at 2.3 GB/s (2 ns: "at 0.02% of its ceiling"). Pageable copies
 * smaller than any pageable case, whose smallest (1 MiB) tells no fixed
 * cost, take the pinned copies' of their direction: a pageable copy is
 * staged through pinned memory and never beats a pinned one of its size (an
 * A10G's 2-byte pageable copies were held to 14.8 GB/s, "at 0.05%").
 * Returns the rate, `note` saying so. */
static double latency_floor_rate(const mb_stage *s, const mb_ceilings *res, const mb_case_ref *c, double rate,
                                 const mb_ini *m, char *note, size_t len)
{
    double ss = stage_size(s), cs = case_size(s, c, m);
    if (s->count <= 0 || ss <= 0 || cs <= 0 || ss >= cs || s->work <= 0)
        return rate;
    char mem[16];
    memory_mismatch(s, c, m, mem, sizeof mem);
    kind_span k = span_of(s, res, c, mem, m);
    /* only below every measured size: between two sizes the nearest case's rate holds (147-MiB pageable copies
     * nearest a 256-MiB case at 7.3 GB/s, with 1 and 16 MiB ones at 14.8 and 12.8, were held to an 18.6-ms
     * "fixed cost" taken from the 256-MiB case: pageable copies slow down as they grow) */
    if (k.smallest <= 0 || ss >= k.smallest)
        return rate;
    double fixed = fixed_cost(&k);
    bool staged = false;
    if (fixed <= 0 && strcasecmp(mem, "pageable") == 0) {
        k = span_of(s, res, c, "pinned", m);
        fixed = k.smallest > 0 && ss < k.smallest ? fixed_cost(&k) : 0;
        staged = fixed > 0;
    }
    if (fixed <= 0)
        return rate; /* no fixed cost to tell */
    double floor = (double)s->count * (fixed + ss / k.best);
    if (floor <= mb_time_at_rate(s->work, rate))
        return rate;
    char b[32], f[32], r[32];
    fmt_size(b, sizeof b, k.smallest, s->work_unit);
    mb_fmt_seconds(f, sizeof f, fixed);
    mb_fmt_rate(r, sizeof r, k.best, s->work_unit);
    if (staged)
        snprintf(note, len,
                 "calls under any pageable case: held to the pinned copies' fixed cost per call, which a pageable "
                 "copy never beats (%s: the %s case's time less its bytes at %s) plus each call's bytes at that "
                 "rate",
                 f, b, r);
    else
        snprintf(note, len,
                 "calls smaller than the smallest measured (%s): held to its fixed cost per call (%s: its time "
                 "less its bytes at %s, the best rate of its kind) plus each call's bytes at that rate",
                 b, f, r);
    return s->work / floor;
}

static double held_rate(const mb_stage *s, const mb_ceilings *res, int match, const mb_ini *m, char *note,
                        size_t len, bool *floor);

/* A matmul stage whose bytes ([roofline] components, mb_stage.min_bytes) take
 * longer at the memory ceiling (the case a memory-bound op's bytes match,
 * its least time per kernel included) than its FLOPs at `rate`: held to that
 * time. A decode step's [2, 1024] x [1024, 6144] products read 27.3 MB of
 * weights for 54.5 MFLOP: "at 0.4% of" the GEMM case's 196 TFLOP/s, which
 * would run them in 0.28 us where reading the weights takes 14 us at an
 * H100's 1.92 TB/s. Returns the rate, `note` saying so. */
static double roofline_rate(const mb_stage *s, const mb_ceilings *res, double rate, const mb_ini *m, char *note,
                            size_t len)
{
    if (!(s->min_bytes > 0 && isfinite(s->min_bytes)) || s->work <= 0 ||
        !mb_ini_list_has(m, "roofline", "components", s->component))
        return rate;
    const char *comp = mb_ini_get(m, "roofline", "case_component");
    const char *op = mb_ini_get(m, "roofline", "case_op");
    mb_stage mem = {.name = s->name, .component = (char *)(comp ? comp : "membw"), .work = s->min_bytes,
                    .work_unit = "byte", .seconds = s->seconds, .count = s->count, .device = s->device,
                    .op = (char *)op};
    char why[300], inner[300];
    int c = mb_gap_match(&mem, res, m, why, sizeof why);
    double mrate = c >= 0 ? held_rate(&mem, res, c, m, inner, sizeof inner, NULL) : 0;
    if (mrate <= 0 || mem.work / mrate <= mb_time_at_rate(s->work, rate))
        return rate;
    char b[32], r[32], t[32];
    mb_fmt_si(b, sizeof b, s->min_bytes, "B");
    mb_fmt_rate(r, sizeof r, mrate, "byte");
    mb_fmt_seconds(t, sizeof t, mem.work / mrate);
    snprintf(note, len, "memory-bound products (%.1f FLOP a byte): held to their %.16s moved at %.16s (%.40s), %.16s",
             s->work / s->min_bytes, b, r, case_name(&res->cases[c]), t);
    return s->work / (mem.work / mrate);
}

/* The ceiling a stage is held to by the matched case, in work units per
 * second: the case's rate, or one of the two rules for calls the case's
 * rate does not bound ([kernel_floor], [latency_floor] in matching.ini);
 * `note` says which (empty: the case's rate), `floor` (NULL: not asked)
 * whether one of those rules set it. */
static double held_rate(const mb_stage *s, const mb_ceilings *res, int match, const mb_ini *m, char *note,
                        size_t len, bool *floor)
{
    const mb_case_ref *c = &res->cases[match];
    double rate = mb_gap_case_rate(s, c, m), held;
    note[0] = '\0';
    if (floor)
        *floor = false;
    if (rate <= 0)
        return rate;
    bool kernels = mb_ini_list_has(m, "kernel_floor", "components", s->component);
    if (kernels || mb_ini_list_has(m, "latency_floor", "components", s->component)) {
        held = kernels ? kernel_floor_rate(s, res, c, rate, m, note, len)
                       : latency_floor_rate(s, res, c, rate, m, note, len);
        if (floor)
            *floor = held != rate;
        return held;
    }
    /* a rank's share of its host's cores, measured on another count: CPU
     * GEMM and convolution scale with the cores (this VM's OpenBLAS 2048^3:
     * 101 GFLOP/s on one core, 184 on two) */
    double ct = s->threads > 0 ? case_threads(c) : 0;
    if (ct > 0 && ct != s->threads) {
        snprintf(note, len, "held to its share of the host's CPUs: the case's rate on %.0f core%s x %d/%.0f", ct,
                 ct == 1 ? "" : "s", s->threads, ct);
        return rate * s->threads / ct;
    }
    return roofline_rate(s, res, rate, m, note, len);
}

/* A stage faster than its matched case by more than [above_ceiling]
 * margin: the case is no ceiling for it. Says why when the sizes tell it
 * (a loader served 652 KiB requests by readahead, held to the 64 KiB case
 * of `--suite quick`, read "at 173.1% of its ceiling": rates grow with the
 * size per call, so only calls larger than the case's can be why) and which
 * suite measures more sizes, or that a floor per call held it (`floor`:
 * memsets of 34 B beat the GPU's least time per kernel); within the margin
 * the case's own noise explains it (a GEMM at 101.2%) and the case stays
 * the ceiling. */
static void beyond_case(mb_gap_stage *g, const mb_ceilings *res, const mb_ini *m, bool floor)
{
    const char *margin = mb_ini_get(m, "above_ceiling", "margin");
    g->beyond[0] = '\0';
    if (!g->above_ceiling || g->efficiency <= 1 + (margin ? atof(margin) : 0))
        return;
    const mb_stage *s = g->stage;
    const mb_case_ref *c = &res->cases[g->match];
    char eff[32], key[64], ss_text[32], cs_text[32];
    mb_fmt_share(eff, sizeof eff, g->efficiency);
    double ss = stage_size(s), cs = case_size(s, c, m);
    snprintf(key, sizeof key, "suite.%s", c->component);
    const char *suite = mb_ini_get(m, "above_ceiling", key);
    double raw = mb_gap_case_rate(s, c, m);
    if (strcmp(s->work_unit, "byte") == 0 && strcmp(c->component, "membw") == 0 && raw > 0 &&
        g->measured_rate > raw * (1 + (margin ? atof(margin) : 0))) {
        /* past the bandwidth itself, not only past a floor per call: nano-vllm's decode read "4.27 TB/s, 222%"
         * of an H100's for compiled RoPE kernels whose op records a 21-MB cos/sin table they index 3 rows of */
        char mr[32], cr[32];
        mb_fmt_rate(mr, sizeof mr, g->measured_rate, s->work_unit);
        mb_fmt_rate(cr, sizeof cr, raw, s->work_unit);
        snprintf(g->beyond, sizeof g->beyond,
                 "faster than the memory case itself (%s against %s): its bytes came from cache (tensors small "
                 "enough to stay in L2), or it read fewer than counted (an index into a table, a gather: its op "
                 "records the whole tensor); nothing lost counted",
                 mr, cr);
    } else if (g->by_bytes && s->seconds > 0) {
        /* held to its bytes ([roofline]), not to the GEMM case it reaches a few percent of: a decode step's
         * [2, 4096] x [4096, 4096] products, 4 us each with their weights kept in L2, read "faster than its
         * nearest case (302.6% of it)" */
        char mr[32], cr[32];
        mb_fmt_rate(mr, sizeof mr, s->min_bytes / s->seconds, "byte");
        mb_fmt_rate(cr, sizeof cr, g->ceiling_rate * s->min_bytes / s->work, "byte");
        snprintf(g->beyond, sizeof g->beyond,
                 "faster than the roofline its bytes set (%s of it: %s against the memory case's %s): its "
                 "operands came from cache (weights kept in L2 from one product to the next), or it read fewer "
                 "than its op records; nothing lost counted",
                 eff, mr, cr);
    } else if (floor) {
        snprintf(g->beyond, sizeof g->beyond,
                 "faster than the floor it was held to (%s of it: the case's rate plus a least time per call): "
                 "that floor does not bound it; nothing lost counted",
                 eff);
    } else if (ss > 0 && cs > 0 && log2(ss / cs) >= 1) {
        fmt_size(ss_text, sizeof ss_text, ss, s->work_unit);
        fmt_size(cs_text, sizeof cs_text, cs, s->work_unit);
        snprintf(g->beyond, sizeof g->beyond,
                 "faster than its nearest case (%s of it): no case was measured at its %s per call (the case: "
                 "%s)%s%s%s; nothing lost counted",
                 eff, ss_text, cs_text, suite ? "; `mlbench --suite " : "", suite ? suite : "",
                 suite ? "` measures more sizes" : "");
    } else {
        snprintf(g->beyond, sizeof g->beyond,
                 "faster than its nearest case (%s of it): the case is no ceiling for it (another shape, math "
                 "or cache); nothing lost counted",
                 eff);
    }
}

/* The time a stage's rate is measured over: its own, except a sync's. A
 * sync call that waits for GPU work already queued costs the step nothing
 * while it waits (that time is the queued work's, counted there); what it
 * costs is the time the GPU idles in it, its exposed time. A loop that
 * only loads batches read its 25 stream syncs, 7.88 ms each behind the H2D
 * copies they waited for, "at 0.02% of its ceiling" for 14 us of GPU idle
 * per sync (DET_SEG's MONAI loader trace). */
static double rate_seconds(const mb_stage *s)
{
    if (s->has_exposed && strcmp(s->component, "sync") == 0)
        return mb_stage_exposed(s);
    return s->seconds;
}

/* Syncs the GPU never idled in: no cost per sync to hold against the case. */
static void hidden_waits(mb_gap_stage *g)
{
    g->hidden = true;
    g->efficiency = 0;
    g->time_at_ceiling = 0; /* none of it exposed, none at its ceiling either */
    g->above_ceiling = false;
    snprintf(g->beyond, sizeof g->beyond,
             "hidden: every call waited for GPU work already queued, and the GPU never idled in one (their time is "
             "that work's); nothing lost counted");
}

bool mb_gap_stage_bounded(const mb_gap_stage *st)
{
    return st->match >= 0 && st->beyond[0] == '\0';
}

/* ---- the gap ------------------------------------------------------------------------ */

/* Appends a formatted line to a list of strings (notes, assumptions). */
static int append_line(char ***list, int *n, mb_err *err, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    char **grown = realloc(*list, sizeof *grown * (size_t)(*n + 1));
    if (grown == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *list = grown;
    if ((grown[*n] = strdup(buf)) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    (*n)++;
    return MB_OK;
}

static int add_note(mb_gap *g, mb_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_note(mb_gap *g, mb_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = append_line(&g->notes, &g->n_notes, err, fmt, ap);
    va_end(ap);
    return rc;
}

static int cmp_lost(const void *a, const void *b, void *ctx)
{
    const mb_gap_stage *st = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    double x = st[i].time_lost, y = st[j].time_lost;
    if (x != y)
        return x < y ? 1 : -1;
    return i - j;
}

static double step_table_total(const mb_run *run);
static int gap_headline(mb_gap *g, mb_err *err);

/* The disk case for reads made one at a time (each of a loader's workers
 * waits for its read: queue depth 1), nearest `want`'s size at its pattern:
 * page faults of a memory map (`mmap`: a mapping with MADV_RANDOM faults a
 * 4 KiB page at a time, the mmap backend's advice=random case), else calls
 * of the item's size (pread, or io_uring at qd=1). -1: none measured. */
static int one_at_a_time_case(const mb_gap *g, const mb_stage *want, bool mmap, const mb_ini *m)
{
    int best = -1;
    double best_d = 0, best_rate = 0;
    char buf[64];
    for (int i = 0; i < g->ceilings->n_cases; i++) {
        const mb_case_ref *c = &g->ceilings->cases[i];
        if (!c->usable || strcmp(c->component, "disk") != 0)
            continue;
        const char *qd = mb_case_param(c, "qd"), *advice = mb_case_param(c, "advice");
        const char *pattern = case_attr(c, m, "pattern", buf, sizeof buf);
        bool is_mmap = c->backend && strcmp(c->backend, "mmap") == 0;
        if (is_mmap != mmap || (qd && strcmp(qd, "1") != 0) || (mmap && advice && strcmp(advice, "random") != 0) ||
            !pattern || !want->pattern || strcmp(pattern, want->pattern) != 0)
            continue;
        double size = case_size(want, c, m), rate = mb_gap_case_rate(want, c, m);
        if (!(size > 0) || !(rate > 0))
            continue;
        double d = fabs(log2(size / (double)(mmap ? 4096 : want->block_size)));
        if (best < 0 || d < best_d || (d == best_d && rate > best_rate)) {
            best = i;
            best_d = d;
            best_rate = rate;
        }
    }
    return best;
}

/* A loader simplify found read-amplified reads many times the bytes its
 * batches hold, and its disk stage is held to the case of what the device
 * served, so its time lost is what the disk's efficiency loses on reads it
 * should not make: an LMDB with readahead read 314 MB a batch for 2.1 MB,
 * "58.6 ms lost" of 230, where reading only the records takes a few ms.
 * The figure a user acts on: the batches' bytes, an item at a time at the
 * loader's pattern, at the rate of that read made one at a time in each of
 * its workers (a memory-mapped loader with MADV_RANDOM took 4.96 ms a batch
 * of 32 16-KiB records, where the disk's 32-deep case said 541 us and its
 * 4 KiB page-fault case 4.6 ms); the best case (any depth) when none such
 * was measured, said as such (needed_queued). */
static void needed_reads(mb_gap *g, const mb_ini *matching)
{
    g->needed_case = g->needed_stage = -1;
    const cJSON *simp = g->run->evidence ? cJSON_GetObjectItemCaseSensitive(g->run->evidence, "simplify") : NULL;
    const cJSON *dl = cJSON_GetObjectItemCaseSensitive(simp, "data_loading");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dl, "amplified")))
        return;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(dl, "delivered_bytes_per_batch");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(dl, "items_per_batch");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(dl, "workers");
    const char *mech = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dl, "mechanism"));
    double delivered = cJSON_IsNumber(d) ? d->valuedouble : 0, items = cJSON_IsNumber(n) ? n->valuedouble : 1;
    /* 0: the loader runs in the step's process (num_workers=0), one read at a time too */
    int workers = cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble <= 1024 ? (int)w->valuedouble : 0;
    bool mmap = mech && (strstr(mech, "memory-mapped") || strstr(mech, "memory map"));
    if (!(delivered > 0) || !(items >= 1) || !isfinite(delivered) || !isfinite(items))
        return;
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        if (strcmp(s->component, "disk") != 0 || strcmp(s->name, MB_SIMPLIFY_DATA_STAGE) != 0)
            continue;
        mb_stage want = *s;
        want.work = delivered * g->steps;
        want.block_size = (long long)(delivered / items + 0.5);
        want.count = (long long)(items * g->steps + 0.5);
        char why[MB_GAP_WHY_LEN], note[300];
        int best = mb_gap_match(&want, g->ceilings, matching, why, sizeof why);
        double best_rate = best >= 0 ? held_rate(&want, g->ceilings, best, matching, note, sizeof note, NULL) : 0;
        int c = one_at_a_time_case(g, &want, mmap, matching);
        if (c < 0 && mmap) /* no page-fault case: reads of the item's size, one at a time */
            c = one_at_a_time_case(g, &want, false, matching);
        double rate = c >= 0 ? held_rate(&want, g->ceilings, c, matching, note, sizeof note, NULL) : 0;
        rate *= workers > 0 ? workers : 1;
        /* its workers' reads at once go no faster than the disk's best */
        bool capped = rate > 0 && best_rate > 0 && rate > best_rate;
        if (capped) {
            rate = best_rate;
            c = best;
        }
        g->needed_queued = !(rate > 0);
        if (g->needed_queued) {
            rate = best_rate;
            c = best;
        }
        if (rate > 0) {
            g->needed_seconds = want.work / rate;
            g->needed_block = (double)want.block_size;
            g->needed_case = c;
            g->needed_stage = i;
            g->needed_workers = workers;
            g->needed_capped = capped;
            const char *backend = g->ceilings->cases[c].backend;
            g->needed_faults = mmap && !g->needed_queued && backend && strcmp(backend, "mmap") == 0;
        }
        return;
    }
}

int mb_gap_build(const mb_run *run, const mb_ceilings *ceilings, const mb_ini *matching, mb_gap *out,
                 mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->run = run;
    out->ceilings = ceilings;
    out->target_bottleneck = -1;
    if (run->n_stages <= 0)
        return mb_errf(err, MB_EUSAGE, "%s: the run has no stages", run->path ? run->path : "run");
    out->stages = calloc((size_t)run->n_stages, sizeof *out->stages);
    out->ranking = calloc((size_t)run->n_stages, sizeof *out->ranking);
    out->headline = calloc((size_t)run->n_stages, sizeof *out->headline);
    if (out->stages == NULL || out->ranking == NULL || out->headline == NULL) {
        mb_gap_free(out);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    out->n = run->n_stages;
    out->steps_known = run->steps > 0;
    out->steps = run->steps > 0 ? run->steps : 1;
    /* Only exposed time adds up: hidden time (a launch under GPU work, a sync
     * waiting on busy kernels) is inside some other stage's time already. */
    for (int i = 0; i < out->n; i++)
        out->stage_sum += mb_stage_exposed(&run->stages[i]);
    out->total = run->total_seconds > 0 ? run->total_seconds : out->stage_sum;
    /* the step table's steps when the stages fit in them (they do when the
     * reader cut them to the steps): shares then equal the step table's */
    double steps_total = step_table_total(run);
    if (steps_total > 0 && out->stage_sum <= steps_total * 1.0001)
        out->total = steps_total;
    /* rounding of sums that add up by construction is not time in no stage */
    out->unaccounted = out->total - out->stage_sum > 1e-9 * out->total ? out->total - out->stage_sum : 0;
    if (out->stage_sum > out->total * 1.01 &&
        add_note(out, err,
                 "the stages add up to %.0f%% of the run's time: they overlap (a trace's host and GPU stages "
                 "do), so the Amdahl and target projections, which take them one after another, overstate "
                 "what removing one stage's loss gains",
                 100 * out->stage_sum / out->total)) {
        mb_gap_free(out);
        return err->code;
    }

    double all = out->total;
    for (int i = 0; i < out->n; i++) {
        mb_gap_stage *g = &out->stages[i];
        const mb_stage *s = &run->stages[i];
        g->stage = s;
        g->target_match = -1;
        g->match = mb_gap_match(s, ceilings, matching, g->why, sizeof g->why);
        double exposed = mb_stage_exposed(s), basis = rate_seconds(s);
        g->measured_rate = strcmp(s->work_unit, "s") == 0 || basis <= 0 ? 0 : s->work / basis;
        g->exposed = exposed;
        g->share = exposed / out->total;
        g->time_at_ceiling = s->seconds;
        if (g->match >= 0) {
            char note[300];
            bool floor;
            g->ceiling_rate = held_rate(s, ceilings, g->match, matching, note, sizeof note, &floor);
            g->by_bytes = s->min_bytes > 0 &&
                          g->ceiling_rate < mb_gap_case_rate(s, &ceilings->cases[g->match], matching);
            if (note[0]) {
                size_t at = strlen(g->why);
                snprintf(g->why + at, sizeof g->why - at, "; %s", note);
            }
            g->efficiency = mb_efficiency(g->measured_rate, g->ceiling_rate);
            g->time_at_ceiling = mb_time_at_rate(s->work, g->ceiling_rate);
            g->above_ceiling = g->time_at_ceiling > basis;
            beyond_case(g, ceilings, matching, floor);
            if (basis <= 0 && s->seconds > 0)
                hidden_waits(g);
        }
        /* A stage faster than its matched case loses nothing: the case is
         * not its ceiling (different shape or cache); it keeps its time. */
        double reachable = g->above_ceiling || basis <= 0 ? basis : g->time_at_ceiling;
        /* The gain is the exposed part of the stage's excess over its
         * ceiling (the excess is spread over the stage's time, so the
         * exposed fraction of it is what the run waits for). */
        double fraction = basis > 0 ? exposed / basis : 1;
        g->time_lost = (basis - reachable) * fraction;
        /* Alone at its ceiling, a stage saves no more than its time with nothing else on its device: the work
         * beside it still takes its own (two kinds of copy at once share the step's copy time in proportion,
         * and a copy wholly inside the other read "1.44x") */
        double saved = s->has_alone && s->alone_seconds >= 0 ? fmin(g->time_lost, s->alone_seconds) : g->time_lost;
        g->amdahl_total = mb_amdahl_step(out->total, exposed, exposed - saved);
        g->amdahl_speedup = mb_speedup(out->total, g->amdahl_total);
        all = mb_amdahl_step(all, exposed, exposed - g->time_lost);
        out->ranking[i] = i;
        if (g->share > out->stages[out->bottleneck].share)
            out->bottleneck = i;
    }
    out->all_total = all;
    out->all_speedup = mb_speedup(out->total, all);
    needed_reads(out, matching);
    qsort_r(out->ranking, (size_t)out->n, sizeof *out->ranking, cmp_lost, out->stages);
    if (gap_headline(out, err)) {
        mb_gap_free(out);
        return err->code;
    }
    return MB_OK;
}

/* ---- projection ----------------------------------------------------------------------- */

static int add_assumption(mb_gap *g, mb_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_assumption(mb_gap *g, mb_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = append_line(&g->assumptions, &g->n_assumptions, err, fmt, ap);
    va_end(ap);
    return rc;
}

static int begin_target(mb_gap *g, const char *label, const char *kind, mb_err *err)
{
    free(g->target_label);
    free(g->target_kind);
    /* a run whose step is compute on the host CPU goes onto the target's
     * CPU cases: named so, or "H100 SXM 80GB: 4.87x" reads as its GPU's */
    char names[256];
    mb_gap_host_compute(g, names, sizeof names);
    bool onto_cpu = strcmp(kind, "datasheet") != 0 && mb_gap_onto_host(g);
    size_t len = strlen(label) + 16;
    g->target_label = malloc(len);
    if (g->target_label)
        snprintf(g->target_label, len, "%s%s", label, onto_cpu ? "'s host CPU" : "");
    g->target_kind = strdup(kind);
    if (g->target_label == NULL || g->target_kind == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    g->has_target = true;
    if (onto_cpu && add_assumption(g, err,
                                   "this run's compute ran on the host CPU (%s): it is projected onto the target's "
                                   "CPU cases, not its GPU",
                                   names))
        return err->code;
    return add_assumption(g, err,
                          "stages run one after another, as here; time in no stage (%.4g s per step) is "
                          "unchanged",
                          mb_gap_per_step(g, g->unaccounted));
}

static void end_target(mb_gap *g)
{
    double total = g->unaccounted;
    g->target_bottleneck = -1;
    for (int i = 0; i < g->n; i++) {
        total += g->stages[i].target_seconds;
        if (g->target_bottleneck < 0 ||
            g->stages[i].target_seconds > g->stages[g->target_bottleneck].target_seconds)
            g->target_bottleneck = i;
    }
    g->target_total = total;
}

/* The share of a stage's time that is exposed: only that part moves the step
 * there, as here (hidden time stays hidden). */
static double exposed_fraction(const mb_gap_stage *st)
{
    double basis = rate_seconds(st->stage);
    return basis > 0 ? st->exposed / basis : 1;
}

static void keep_time(mb_gap_stage *st)
{
    st->target_seconds = st->exposed; /* hidden time stays hidden there */
    st->projected = false;
    st->target_source = NULL;
    st->target_match = -1;
}

/* Keeps the stage's time there; false, with the reason, when nothing here
 * scales it: no ceiling, or syncs whose time is hidden (hidden_waits). */
static bool scalable(mb_gap_stage *st)
{
    keep_time(st);
    if (st->match < 0)
        snprintf(st->target_why, sizeof st->target_why, "kept its time: no ceiling here to scale from");
    else if (rate_seconds(st->stage) <= 0)
        snprintf(st->target_why, sizeof st->target_why, "kept its time: none of it is exposed here");
    return st->match >= 0 && rate_seconds(st->stage) > 0;
}

/* The logical CPUs of the machine a results file is from; 0 = not said. */
static double machine_cpus(const mb_ceilings *c)
{
    const cJSON *cpu = c->context ? cJSON_GetObjectItemCaseSensitive(c->context, "cpu") : NULL;
    const cJSON *n = cJSON_IsObject(cpu) ? cJSON_GetObjectItemCaseSensitive(cpu, "logical_cpus") : NULL;
    return cJSON_IsNumber(n) && n->valuedouble > 0 ? n->valuedouble : 0;
}

/* A stage with its share of the target's CPUs: as many ranks on the target
 * host, each the same fraction of its cores as here (unchanged when either
 * machine's CPU count is unknown). */
static mb_stage share_there(const mb_stage *s, const mb_ceilings *here, const mb_ceilings *target)
{
    mb_stage t = *s;
    double ch = machine_cpus(here), ct = machine_cpus(target);
    if (s->threads > 0 && ch > 0 && ct > 0)
        t.threads = (int)fmax(1, round(ct * s->threads / ch));
    return t;
}

/* The usable case of this id in the results, or -1. */
static int usable_case(const mb_ceilings *res, const char *id)
{
    for (int i = 0; i < res->n_cases; i++)
        if (res->cases[i].usable && strcmp(res->cases[i].id, id) == 0)
            return i;
    return -1;
}

/* Projects one stage onto a target's measured ceilings, like for like: by
 * the case it is held to here, measured there, or by the target's nearest
 * case where this machine measured that one too; false (with the reason in
 * target_why) when neither holds. */
static bool stage_onto_results(mb_gap_stage *st, const mb_ceilings *here, const mb_ceilings *target,
                               const mb_ini *matching)
{
    const mb_stage there = share_there(st->stage, here, target), *s = &there;
    if (!scalable(st))
        return false;
    char why[MB_GAP_WHY_LEN], note[300];
    const mb_case_ref *mine = &here->cases[st->match];
    /* a rank's share of the host's CPUs is matched by its thread count there, which differs from here's */
    int same = st->stage->threads > 0 ? -1 : usable_case(target, mine->id);
    if (same >= 0) { /* the case this stage is held to here, measured there: like for like */
        st->target_match = same;
        st->target_rate = held_rate(s, target, same, matching, note, sizeof note, NULL);
        snprintf(why, sizeof why, "%s: the case it is held to here, measured there", case_name(mine));
    } else {
        st->target_match = mb_gap_match(s, target, matching, why, sizeof why);
        if (st->target_match < 0) {
            snprintf(st->target_why, sizeof st->target_why, "kept its time: on the target %.480s", why);
            return false;
        }
        st->target_rate = held_rate(s, target, st->target_match, matching, note, sizeof note, NULL);
        const mb_case_ref *theirs = &target->cases[st->target_match];
        /* the target's nearest case scales this stage by how it runs on both machines where this one measured
         * it too: the nearest to an fp16 conv stage held here to a 32-image fp16 case was a 256-image bf16 one
         * there, 437 TFLOP/s against 90.5 here (4.8x), where the same 256-image case reads 385 here (1.14x) */
        int back = s->threads > 0 ? -1 : usable_case(here, theirs->id);
        double back_here = back >= 0 ? held_rate(st->stage, here, back, matching, note, sizeof note, NULL) : 0;
        if (back >= 0 && back_here > 0 && st->target_rate > 0) {
            double ratio = st->target_rate / back_here;
            snprintf(why, sizeof why,
                     "%.150s is not measured there; %.150s, measured on both, runs %.3gx as fast there (%.4g against "
                     "%.4g %.16s): this stage's ceiling here x %.3g",
                     case_name(mine), case_name(theirs), ratio, st->target_rate / theirs->rate_scale,
                     back_here / theirs->rate_scale, theirs->rate_unit ? theirs->rate_unit : "", ratio);
            st->target_rate = st->ceiling_rate * ratio;
        } else if (s->threads <= 0) {
            size_t at = strlen(why);
            snprintf(why + at, sizeof why - at, "; not like for like: no case measured on both machines");
        }
    }
    st->target_seconds = mb_time_at_rate(s->work, st->target_rate * st->efficiency) * exposed_fraction(st);
    st->projected = true;
    st->target_source = "measured";
    snprintf(st->target_why, sizeof st->target_why, "%s", why);
    return true;
}

int mb_gap_project_results(mb_gap *g, const mb_ceilings *target, const mb_ini *matching, mb_err *err)
{
    /* labelled as compare would label the pair: "Test GPU @ there" where both hold one GPU model */
    const mb_ceilings pair[2] = { *g->ceilings, *target };
    char *labels[2] = { NULL, NULL };
    int rc = mb_machine_labels(pair, 2, NULL, 0, labels, err);
    if (rc == MB_OK)
        rc = begin_target(g, labels[1], "results", err);
    free(labels[0]);
    free(labels[1]);
    if (rc != MB_OK ||
        add_assumption(g, err,
                       "each stage keeps the efficiency (measured / ceiling) it has here: time there = work / "
                       "(ceiling there x efficiency here)"))
        return err->code;
    for (int i = 0; i < g->n; i++)
        stage_onto_results(&g->stages[i], g->ceilings, target, matching);
    end_target(g);
    return MB_OK;
}

/* The datasheet figure for a stage, in work units per second; 0 = none. */
static double datasheet_peak(const mb_stage *s, const mb_datasheet *d, bool target_is_gpu, char *what,
                             size_t len, const char **source)
{
    return mb_datasheet_figure(d, target_is_gpu, s->component, s->dtype, s->direction, stage_device(s), what, len,
                               source);
}

/* Projects one stage onto a datasheet peak scaled by here's ceiling/peak
 * fraction; false (with the reason in target_why) when it cannot. */
static bool stage_onto_datasheet(const mb_gap *g, mb_gap_stage *st, const mb_datasheet *d, bool target_is_gpu)
{
    const mb_stage *s = st->stage;
    if (!scalable(st))
        return false;
    const mb_case_ref *c = &g->ceilings->cases[st->match];
    char what[128];
    const char *source;
    double peak_there = datasheet_peak(s, d, target_is_gpu, what, sizeof what, &source);
    if (peak_there <= 0) {
        snprintf(st->target_why, sizeof st->target_why, "kept its time: %s%s", what,
                 strncmp(what, "a ", 2) == 0 || strncmp(what, "the ", 4) == 0 ? "" : " not in the datasheet");
        return false;
    }
    double peak_here = c->peak * c->rate_scale;
    if (peak_here <= 0) {
        snprintf(st->target_why, sizeof st->target_why,
                 "kept its time: the matched case %s has no peak here to scale from", c->id);
        return false;
    }
    double fraction = st->ceiling_rate / peak_here; /* ceiling here / peak here */
    st->target_rate = peak_there * fraction;
    st->target_seconds = mb_time_at_rate(s->work, st->target_rate * st->efficiency) * exposed_fraction(st);
    st->projected = true;
    st->target_source = "datasheet";
    snprintf(st->target_why, sizeof st->target_why,
             "%s there %.4g %s x %.0f%% (ceiling %.4g / peak %.4g here) x efficiency %.0f%%", what,
             peak_there / c->rate_scale, c->rate_unit ? c->rate_unit : "", 100 * fraction,
             st->ceiling_rate / c->rate_scale, c->peak, 100 * st->efficiency);
    return true;
}

static int datasheet_assumptions(mb_gap *g, const mb_datasheet *d, const char *when, mb_err *err)
{
    return add_assumption(g, err,
                          "%sthe target reaches the same fraction of its datasheet peak as this machine's ceiling "
                          "reaches its peak, and each stage keeps its efficiency: time there = work / (peak there "
                          "x (ceiling here / peak here) x efficiency here)",
                          when) ||
                   add_assumption(g, err, "datasheet figures are dense peaks (no sparsity), from %s",
                                  mb_datasheet_file(d) ? mb_datasheet_file(d) : "the datasheet")
               ? err->code
               : MB_OK;
}

static bool role_of(const mb_stage *s, const char *role)
{
    return s->role && strcmp(s->role, role) == 0;
}

double mb_gap_host_compute(const mb_gap *g, char *names, size_t len)
{
    static const char *const compute[] = { "gemm", "conv", "attention", "membw", "peak" };
    /* host memory is a trace's memory-bound CPU ops; in a stage file it is
     * a loader reading the page cache (simplify's data loading, no role) */
    bool trace = g->run->kind && strcmp(g->run->kind, "pytorch-trace") == 0;
    double secs = 0;
    size_t at = 0;
    if (names && len)
        names[0] = '\0';
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        bool is_compute = trace && strcmp(s->component, "hostmem") == 0;
        for (size_t k = 0; k < sizeof compute / sizeof *compute; k++)
            is_compute |= strcmp(s->component, compute[k]) == 0;
        /* the model's other ops (role compute: elementwise, softmax,
         * indexing): a GPU runs them too; pytorch/examples' gat spent 91% of
         * its CPU step there */
        bool model_ops = role_of(s, "compute");
        is_compute |= model_ops;
        if (!is_compute || (s->role && !model_ops) || strcmp(stage_device(s), "cpu") != 0)
            continue;
        secs += g->stages[i].exposed;
        if (names && at + strlen(s->name) + 3 < len)
            at += (size_t)snprintf(names + at, len - at, "%s%s", at ? ", " : "", s->name);
    }
    return g->total > 0 ? secs / g->total : 0;
}

bool mb_gap_onto_host(const mb_gap *g)
{
    bool gpu_stage = false;
    for (int i = 0; i < g->n; i++)
        gpu_stage |= mb_stage_gpu_work(g->stages[i].stage);
    return mb_gap_host_compute(g, NULL, 0) >= (gpu_stage ? MB_GAP_HOST_COMPUTE_MIN : MB_GAP_HOST_COMPUTE_MIN_CPU_RUN);
}

void mb_gap_host_compute_why(const mb_gap *g, char *buf, size_t len)
{
    char names[256];
    double share = mb_gap_host_compute(g, names, sizeof names);
    snprintf(buf, len,
             "%.0f%% of the step is compute on the host CPU (%s), which a GPU would run instead, at a speed a CPU "
             "run cannot tell: run the loop on a GPU (python3 -m mlbench.simplify with device = \"cuda\", or a "
             "torch.profiler trace of it) and project that run, or compare host CPUs with measured results "
             "(--target RESULTS.json or a reference)",
             100 * share, names);
}

int mb_gap_project_datasheet(mb_gap *g, const mb_datasheet *d, bool target_is_gpu, mb_err *err)
{
    /* a CPU run onto a GPU's datasheet kept every CPU stage: "1.00x faster
     * there" on a T4 for pytorch/examples' dcgan, whose convolutions a T4
     * would run */
    if (target_is_gpu && mb_gap_onto_host(g)) {
        char why[640];
        mb_gap_host_compute_why(g, why, sizeof why);
        return mb_errf(err, MB_EUSAGE, "--target %s: %s", mb_datasheet_name(d), why);
    }
    if (begin_target(g, mb_datasheet_name(d), "datasheet", err) || datasheet_assumptions(g, d, "", err))
        return err->code;
    for (int i = 0; i < g->n; i++)
        stage_onto_datasheet(g, &g->stages[i], d, target_is_gpu);
    end_target(g);
    return MB_OK;
}

int mb_gap_project_reference(mb_gap *g, const char *label, const mb_ceilings *measured, const mb_datasheet *d,
                             const mb_ini *matching, mb_err *err)
{
    if (begin_target(g, label, "reference", err) ||
        add_assumption(g, err,
                       "measured figures first: a stage with a matching measured case on the target keeps its "
                       "efficiency there: time there = work / (ceiling there x efficiency here)") ||
        (d && datasheet_assumptions(g, d, "only where the target has no measured case: ", err)))
        return err->code;
    for (int i = 0; i < g->n; i++) {
        mb_gap_stage *st = &g->stages[i];
        if (stage_onto_results(st, g->ceilings, measured, matching) || d == NULL || st->match < 0)
            continue;
        char measured_why[MB_GAP_WHY_LEN];
        snprintf(measured_why, sizeof measured_why, "%s", st->target_why);
        if (!stage_onto_datasheet(g, st, d, mb_datasheet_is_gpu(d)))
            snprintf(st->target_why, sizeof st->target_why, "%.440s; no datasheet figure either", measured_why);
    }
    end_target(g);
    return MB_OK;
}

void mb_gap_free(mb_gap *g)
{
    if (g == NULL)
        return;
    free(g->stages);
    free(g->ranking);
    free(g->headline);
    free(g->target_label);
    free(g->target_kind);
    for (int i = 0; i < g->n_assumptions; i++)
        free(g->assumptions[i]);
    free(g->assumptions);
    for (int i = 0; i < g->n_notes; i++)
        free(g->notes[i]);
    free(g->notes);
    memset(g, 0, sizeof *g);
}

/* ---- the headline: what the step is made of ------------------------------------------ */

/* A trace's step table covers its ProfilerSteps (steps x mean step): the
 * stages add up to it, and its shares are the ones the step table prints,
 * so the run total is that, not the trace's whole span (one share per
 * figure). 0 when the run has no step table. */
static double step_table_total(const mb_run *run)
{
    const cJSON *step = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "step") : NULL;
    const cJSON *secs = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "seconds") : NULL;
    const cJSON *n = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "steps") : NULL;
    if (!cJSON_IsNumber(secs) || !cJSON_IsNumber(n) || !(secs->valuedouble > 0) || !(n->valuedouble >= 1) ||
        !isfinite(secs->valuedouble * n->valuedouble))
        return 0;
    return secs->valuedouble * n->valuedouble;
}


/* The ceilings hold no usable GPU case (a CPU box's results, or a GPU run
 * whose GPU cases were all skipped) while the run has GPU stages. */
static bool ceilings_without_gpu(const mb_gap *g)
{
    bool gpu_stages = false;
    for (int i = 0; i < g->n; i++)
        gpu_stages |= mb_stage_gpu_work(g->stages[i].stage);
    if (!gpu_stages)
        return false;
    for (int i = 0; i < g->ceilings->n_cases; i++) {
        const mb_case_ref *c = &g->ceilings->cases[i];
        if (c->usable && c->device && strcmp(c->device, "gpu") == 0)
            return false;
    }
    return true;
}

/* The first GPU case's skip reason up to its first ':' ("no usable CUDA
 * device"): the driver's full message belongs in the results file. */
static void gpu_skip_reason(const mb_ceilings *c, char *buf, size_t len)
{
    snprintf(buf, len, "no GPU case was measured");
    for (int i = 0; i < c->n_cases; i++) {
        const mb_case_ref *r = &c->cases[i];
        if (r->device && strcmp(r->device, "gpu") == 0 && r->reason && r->reason[0]) {
            size_t n = strcspn(r->reason, ":");
            snprintf(buf, len, "GPU cases skipped: %.*s", (int)(n < 120 ? n : 120), r->reason);
            return;
        }
    }
}

static bool is_cpu_other(const mb_stage *s)
{
    return s->device && strcmp(s->device, "cpu") == 0;
}

/* A trace in the bare-array form (evidence trace.form): it never has shapes. */
static bool array_trace(const mb_run *run)
{
    const cJSON *t = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "trace") : NULL;
    const cJSON *form = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "form") : NULL;
    return cJSON_IsString(form) && strcmp(form->valuestring, "array") == 0;
}

/* The stage-file key a component's work goes under ("launches"); "bytes"
 * for one without a key of its own. */
static const char *work_key_of(const char *component)
{
    const mb_stage_component *c = mb_stage_component_find(component);
    return c && c->work_key ? c->work_key : "bytes";
}

/* What would give a stage without a ceiling one: the work it lacks, or the
 * measurement the ceilings lack. */
static void bound_hint(const mb_gap *g, mb_gap_stage *st)
{
    const mb_stage *s = st->stage;
    const char *c = s->component;
    size_t len = sizeof st->bound_hint;
    const char *why = strncmp(st->why, "no ceiling: ", 12) == 0 ? st->why + 12 : st->why;
    bool time_only = strcmp(s->work_unit, "s") == 0;
    bool trace = g->run->kind && strcmp(g->run->kind, "pytorch-trace") == 0;
    /* The trace reader says why a time-only stage of kernels has no work
     * (evidence "unattributed", docs/traces.md): what the trace lacks, not
     * a guess from the component. */
    const cJSON *told = trace && time_only && g->run->evidence
                            ? cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(g->run->evidence, "unattributed"), s->name)
                            : NULL;
    /* simplify says why it could not count its compute stage's FLOPs */
    const cJSON *simp = !trace && g->run->evidence ? cJSON_GetObjectItemCaseSensitive(g->run->evidence, "simplify")
                                                   : NULL;
    const char *uncounted = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(simp, "flops_not_counted"));
    /* ... and that its loader is CPU work: no disk ceiling would hold it
     * (nanoGPT's loader with MADV_RANDOM: 70 kB from storage per batch, its
     * CPU busy, was told to become a disk stage) */
    const char *loader = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(simp, "data_loading"), "bound"));
    if (cJSON_IsString(told))
        snprintf(st->bound_hint, len, "%s", told->valuestring);
    else if (strcmp(c, "other") == 0 && uncounted && strcmp(s->name, MB_SIMPLIFY_COMPUTE_STAGE) == 0)
        snprintf(st->bound_hint, len, "FLOPs not counted: %s", uncounted);
    else if (strcmp(c, "other") == 0 && role_of(s, "compute"))
        snprintf(st->bound_hint, len,
                 "the model's ops other than its matmuls and convolutions (elementwise, softmax, normalization, "
                 "indexing, sparse products, the Python between them): no benchmark measures them as one; time only "
                 "(a profiler trace with shapes holds the memory-bound ones against host memory)");
    else if (strcmp(c, "other") == 0 && role_of(s, "communication"))
        snprintf(st->bound_hint, len,
                 "a collective mlbench does not measure (barrier, all-to-all, send/recv), or given without its kind "
                 "and bytes: time only (as component allreduce, allgather, ... with `bytes` and `ranks` it is held "
                 "against that collective's ceiling)");
    else if (strcmp(c, "other") == 0 && trace)
        snprintf(st->bound_hint, len, "no benchmark measures %s: time only",
                 is_cpu_other(s) ? "host code (framework, Python)" : "these kernels");
    else if (strcmp(c, "other") == 0 && role_of(s, "data") && loader && strcmp(loader, "cpu") == 0)
        snprintf(st->bound_hint, len,
                 "CPU work, time only (no benchmark measures decoding or augmenting): the loader alone was CPU-bound "
                 "(simplify)");
    else if (strcmp(c, "other") == 0 && (role_of(s, "data") || role_of(s, "checkpoint")))
        snprintf(st->bound_hint, len,
                 "time only%s: as component disk with the bytes it %s (`bytes`) it is held against the disk ceiling",
                 role_of(s, "data") ? " (no benchmark measures decoding or augmenting)" : "",
                 role_of(s, "data") ? "reads" : "writes");
    else if (strcmp(c, "other") == 0)
        snprintf(st->bound_hint, len, "time only: give the stage a component and its work (docs/stage-format.md)");
    else if (g->no_gpu_ceilings && mb_stage_gpu_work(s))
        snprintf(st->bound_hint, len, "the ceilings have no GPU case (see the warning)");
    else if (time_only && (strcmp(c, "disk") == 0 || strcmp(c, "hostmem") == 0) && trace)
        /* a trace's DataLoader wait: whether storage or the workers' decoding bounds it, the trace cannot say */
        snprintf(st->bound_hint, len,
                 "bytes read not recorded (a trace has none): python3 -m mlbench.simplify on the loop measures the "
                 "loader alone, its bytes from storage (cold) and its CPU, and holds it against the %s ceiling when "
                 "storage bounds it",
                 c);
    else if (time_only && (strcmp(c, "disk") == 0 || strcmp(c, "hostmem") == 0))
        snprintf(st->bound_hint, len,
                 "bytes read not recorded: a stage file with the bytes it reads (`bytes`) holds it against the %s "
                 "ceiling",
                 c);
    else if (time_only && (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0) && array_trace(g->run))
        snprintf(st->bound_hint, len,
                 "FLOPs not recorded: a PyTorch built without Kineto writes no shapes, even through torch.profiler "
                 "with record_shapes=True; record with one that has it (pip's torch), or run "
                 "python3 -m mlbench.simplify, which counts them");
    else if (time_only && (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0) && trace)
        snprintf(st->bound_hint, len, "FLOPs not recorded: profile with record_shapes=True");
    else if (time_only && (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0))
        snprintf(st->bound_hint, len, "FLOPs not recorded: give the stage its `flops` (docs/stage-format.md)");
    else if (time_only)
        snprintf(st->bound_hint, len, "its work (%s) not recorded: time only", work_key_of(c));
    else
        snprintf(st->bound_hint, len, "%s", why);
}

/* The GPU a trace ran on (its main device's name), NULL when it does not say. */
static const char *trace_gpu(const mb_run *run)
{
    const cJSON *ev = run->evidence;
    const cJSON *main = ev ? cJSON_GetObjectItemCaseSensitive(ev, "main_device") : NULL;
    const cJSON *devs = ev ? cJSON_GetObjectItemCaseSensitive(ev, "devices") : NULL;
    const cJSON *d;
    cJSON_ArrayForEach(d, devs)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        if (cJSON_IsString(name) && name->valuestring[0] &&
            (!cJSON_IsNumber(main) || !cJSON_IsNumber(id) || id->valuedouble == main->valuedouble))
            return name->valuestring;
    }
    return NULL;
}

/* A trace that does not name its GPU (no deviceProperties: an AMD 4-rank
 * ROCm trace's MIOpen kernels were held against an H100's cuDNN ceilings
 * unsaid) still shows its maker by its runtime calls (hip*, cuda*). */
static int other_maker_note(mb_gap *g, const cJSON *gpus, mb_err *err)
{
    const cJSON *api = g->run->evidence ? cJSON_GetObjectItemCaseSensitive(
                                              cJSON_GetObjectItemCaseSensitive(g->run->evidence, "trace"), "runtime_api")
                                        : NULL;
    if (!cJSON_IsString(api))
        return MB_OK;
    bool amd = strcmp(api->valuestring, "hip") == 0;
    const cJSON *gp;
    cJSON_ArrayForEach(gp, gpus)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(gp, "name");
        if (!cJSON_IsString(name))
            continue;
        const char *n = name->valuestring;
        bool other_amd = strcasestr(n, "AMD") != NULL || strcasestr(n, "Instinct") != NULL ||
                         strcasestr(n, "Radeon") != NULL;
        bool other_nvidia = strcasestr(n, "NVIDIA") != NULL;
        if ((amd && other_nvidia) || (!amd && other_amd))
            return add_note(g, err,
                            "the trace ran on an %s GPU (its %s runtime calls; the trace does not name the GPU), the "
                            "ceilings (%s) were measured on %s: the GPU stages are held against another maker's "
                            "GPU; measure on the trace's GPU for its true gap",
                            amd ? "AMD" : "NVIDIA", amd ? "HIP" : "CUDA",
                            g->ceilings->path ? g->ceilings->path : "?", n);
    }
    return MB_OK;
}

/* Ceilings from another GPU model than the trace's: said once, the matches
 * stay (a gap against another GPU is still a figure, not the true one). */
static int other_gpu_note(mb_gap *g, mb_err *err)
{
    const char *ran = trace_gpu(g->run);
    const cJSON *gpus = g->ceilings->context ? cJSON_GetObjectItemCaseSensitive(g->ceilings->context, "gpus") : NULL;
    if (ran == NULL)
        return other_maker_note(g, gpus, err);
    if (cJSON_GetArraySize(gpus) == 0)
        return MB_OK;
    const char *other = NULL;
    const cJSON *gp;
    cJSON_ArrayForEach(gp, gpus)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(gp, "name");
        if (!cJSON_IsString(name))
            continue;
        if (strcasecmp(name->valuestring, ran) == 0)
            return MB_OK;
        other = name->valuestring;
    }
    if (other == NULL)
        return MB_OK;
    return add_note(g, err,
                    "the trace ran on %s, the ceilings (%s) were measured on %s: the GPU stages are held against "
                    "another GPU's ceilings, and the launch, sync and host<->device copy stages against another "
                    "machine's (its host, driver and PCIe); measure on the trace's machine for its true gap",
                    ran, g->ceilings->path ? g->ceilings->path : "?", other);
}

/* A trace does not name the CPU that ran it: where its CPU stages are held
 * against ceilings, it says whose they are (a Mac's and a Windows box's CPU
 * traces were held against the reference VM's 16-core Xeon unsaid, where
 * the GPU stages get other_gpu_note). */
static int cpu_ceilings_note(mb_gap *g, mb_err *err)
{
    if (g->run->kind == NULL || strcmp(g->run->kind, "pytorch-trace") != 0)
        return MB_OK;
    int n = 0;
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        n += s->device && strcmp(s->device, "cpu") == 0 && mb_gap_stage_bounded(&g->stages[i]);
    }
    const cJSON *cpu = g->ceilings->context ? cJSON_GetObjectItemCaseSensitive(g->ceilings->context, "cpu") : NULL;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(cpu, "model");
    const cJSON *cores = cJSON_GetObjectItemCaseSensitive(cpu, "physical_cores");
    if (n == 0)
        return MB_OK;
    char what[160];
    if (cJSON_IsString(model) && cJSON_IsNumber(cores))
        snprintf(what, sizeof what, "%s, %d cores", model->valuestring, cores->valueint);
    else
        snprintf(what, sizeof what, "%s", cJSON_IsString(model) ? model->valuestring : "a CPU it does not name");
    return add_note(g, err,
                    "the trace does not name the CPU that ran it: its %d CPU stage%s %s held against the ceilings' "
                    "CPU (%s, host %s); a trace from another machine needs that machine's ceilings (`mlbench --suite "
                    "all` there) for its true gap",
                    n, n == 1 ? "" : "s", n == 1 ? "is" : "are", what, g->ceilings->host ? g->ceilings->host : "?");
}

/* A simplify run's loader with no workers, slower in the loop than alone
 * while the step waits for it: "slow only in the pipeline" names overlap,
 * workers and contention, where no worker runs beside it (a memmap loader
 * here, num_workers=0: 1.3-1.4x its time alone, in the runner and by hand).
 * What slows it runs in its own process between its batches; said so. */
static int inline_loader_note(mb_gap *g, mb_err *err)
{
    const cJSON *simp = g->run->evidence ? cJSON_GetObjectItemCaseSensitive(g->run->evidence, "simplify") : NULL;
    const cJSON *dl = cJSON_GetObjectItemCaseSensitive(simp, "data_loading");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(dl, "workers");
    if (!cJSON_IsNumber(w) || w->valuedouble != 0)
        return MB_OK; /* workers, or not known */
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        if (!s->role || strcmp(s->role, "data") != 0)
            continue;
        mb_gap_levels L = mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE);
        if (!L.has_levels || L.verdict != MB_VERDICT_PIPELINE || !(L.alone_for_loop_seconds > 0))
            continue;
        return add_note(g, err,
                        "%s has no workers (num_workers=0) and takes %.2fx its time alone in the loop: no worker "
                        "contends with it; what slows it runs in its own process between its batches (the step "
                        "leaves the caches cold; a BLAS's or OpenMP's threads may still spin after the step's last "
                        "op), which mlbench does not measure apart. Workers (num_workers >= 1) would load the next "
                        "batch beside the step",
                        s->name, L.loop_seconds / L.alone_for_loop_seconds);
    }
    return MB_OK;
}

static int cmp_exposed(const void *a, const void *b, void *ctx)
{
    const mb_gap_stage *st = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    double x = st[i].exposed, y = st[j].exposed;
    if (x != y)
        return x < y ? 1 : -1;
    return i - j;
}

/* Every stage by exposed time, the share of the step with a ceiling, and
 * one warning (not one per stage) when the ceilings have no GPU. */
static int gap_headline(mb_gap *g, mb_err *err)
{
    double bounded = 0;
    g->no_gpu_ceilings = ceilings_without_gpu(g);
    for (int i = 0; i < g->n; i++) {
        mb_gap_stage *st = &g->stages[i];
        g->headline[i] = i;
        if (mb_gap_stage_bounded(st))
            bounded += st->exposed;
        else if (st->match < 0)
            bound_hint(g, st);
    }
    g->bounded_share = g->total > 0 ? fmin(1, bounded / g->total) : 0;
    qsort_r(g->headline, (size_t)g->n, sizeof *g->headline, cmp_exposed, g->stages);
    int rc = cpu_ceilings_note(g, err);
    if (rc == MB_OK)
        rc = inline_loader_note(g, err);
    if (rc != MB_OK)
        return rc;
    if (!g->no_gpu_ceilings)
        return other_gpu_note(g, err);
    char reason[160], names[256] = "";
    size_t at = 0;
    int n = 0;
    gpu_skip_reason(g->ceilings, reason, sizeof reason);
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        if (!mb_stage_gpu_work(s) || g->stages[i].match >= 0)
            continue;
        n++;
        /* the reason once, in the warning, not once per stage */
        snprintf(g->stages[i].why, sizeof g->stages[i].why,
                 "no ceiling: the ceilings have no usable GPU case (see the warning)");
        if (at + strlen(s->name) + 8 < sizeof names)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", s->name);
    }
    /* skipped GPU cases: the machine had no usable GPU; none at all: the
     * suite measured none (a CPU suite, or a CPU box) */
    bool skipped = strncmp(reason, "GPU cases skipped", 17) == 0;
    return add_note(g, err,
                    "the ceilings (%s, host %s) %s (%s): the %d GPU stage(s) (%s) have no ceiling; run `mlbench "
                    "--suite all` on the machine that ran this and pass its results as --ceilings",
                    g->ceilings->path ? g->ceilings->path : "?", g->ceilings->host ? g->ceilings->host : "?",
                    skipped ? "come from a machine without a usable GPU" : "hold no usable GPU case", reason, n,
                    names);
}

/* ---- three levels (simplify runs) --------------------------------------------------- */

bool mb_gap_has_levels(const mb_gap *g)
{
    for (int i = 0; i < g->n; i++)
        if (g->stages[i].stage->has_isolated)
            return true;
    return false;
}

static const char *verdict_text(mb_gap_verdict v)
{
    switch (v) {
    case MB_VERDICT_HIDDEN:
        return "hidden by overlap";
    case MB_VERDICT_PIPELINE:
        return "slow only in the pipeline";
    case MB_VERDICT_ITSELF:
        return "slow by itself";
    case MB_VERDICT_AT_CEILING:
        return "near its ceiling";
    case MB_VERDICT_AS_ALONE:
        return "as fast as alone (no ceiling)";
    case MB_VERDICT_UNSTEADY:
        return "slower alone: re-measure";
    case MB_VERDICT_NEGLIGIBLE:
        return "negligible (under 1% of the step)";
    case MB_VERDICT_LITTLE_WAITED:
        return "slower in the loop, little waited for";
    default:
        return NULL;
    }
}

void mb_gap_levels_legend(char *buf, size_t len)
{
    double pct = MB_LEVELS_TOLERANCE * 100;
    snprintf(buf, len,
             "slow by itself: alone it is more than %.0f%% from its ceiling (optimise the part); slow only in the "
             "pipeline: in the loop it takes more than %.0f%% longer than alone while the step waits for it (overlap, "
             "workers, pinning, prefetch, contention); slower in the loop, little waited for: more than %.0f%% longer "
             "in the loop, but the step waits for so little of it that the extra time it waits is under %.0f%% of the "
             "part's time in the loop; slower alone: alone it took more than %.0f%% longer than in the loop, the "
             "machine was busier while the part ran alone and neither gap holds",
             pct, pct, pct, pct, pct);
}

bool mb_gap_levels_work_note(const mb_gap *g, int i, const mb_gap_levels *L, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!L->has_levels || !L->other_work)
        return false;
    const mb_stage *s = g->stages[i].stage;
    char alone[32], loop[32], eq[32];
    const char *unit = strcmp(s->work_unit, "byte") == 0 ? "B" : s->work_unit; /* 266 MB, 1.2 GFLOP */
    mb_fmt_si(alone, sizeof alone, mb_gap_per_step(g, s->isolated_work), unit);
    mb_fmt_si(loop, sizeof loop, mb_gap_per_step(g, s->work), unit);
    mb_fmt_seconds(eq, sizeof eq, mb_gap_per_step(g, L->alone_for_loop_seconds));
    snprintf(buf, len, "%s did other work alone: %s per %s alone, %s in the loop; at its rate alone the loop's %s take "
                       "%s, the time its verdict compares",
             s->name, alone, g->steps_known ? "step" : "run", loop, loop, eq);
    return true;
}

/* Which gap is which. The loop's gap counts only as far as the step waits for
 * the stage (its exposed share): a loader that runs beside a slower step
 * takes the step's time in the loop but costs nothing. "Slow by itself"
 * wants the part optimised; "slow only in the pipeline" wants overlap,
 * workers, pinning, prefetch, less contention. */
mb_gap_levels mb_gap_stage_levels(const mb_gap *g, int i, double tolerance)
{
    mb_gap_levels L = { 0 };
    const mb_gap_stage *st = &g->stages[i];
    const mb_stage *s = st->stage;
    if (!s->has_isolated || s->isolated_seconds <= 0 || s->seconds <= 0)
        return L;
    L.has_levels = true;
    L.has_ceiling = mb_gap_stage_bounded(st) && st->ceiling_rate > 0;
    L.isolated_seconds = s->isolated_seconds;
    L.loop_seconds = s->seconds;
    L.ceiling_seconds = L.has_ceiling ? st->time_at_ceiling : 0;
    bool timed_only = strcmp(s->work_unit, "s") == 0;
    double alone_work = s->has_isolated_work ? s->isolated_work : s->work;
    L.isolated_rate = timed_only ? 0 : alone_work / s->isolated_seconds;
    L.loop_rate = timed_only ? 0 : s->work / s->seconds;
    /* the gaps compare times for one amount of work, the loop's: alone at its
     * own rate when it did other work. Work within the tolerance of the
     * loop's is the same work (simplify's loader read 70.4 kB a batch alone,
     * 72.6 in the loop: its time alone as measured, and no note) */
    L.other_work = !timed_only && s->has_isolated_work && fabs(alone_work - s->work) > tolerance * s->work;
    double alone = L.other_work ? s->work / L.isolated_rate : s->isolated_seconds;
    L.alone_for_loop_seconds = alone;
    double exposed_share = st->exposed / s->seconds;
    L.pipeline_gap = (L.loop_seconds - alone) * exposed_share;
    if (L.pipeline_gap < 0)
        L.pipeline_gap = 0;
    L.self_gap = L.has_ceiling && alone > L.ceiling_seconds ? alone - L.ceiling_seconds : 0;
    bool self_big = L.self_gap > tolerance * alone;
    bool pipe_big = L.pipeline_gap > tolerance * L.loop_seconds;
    /* The same work cannot be slower alone than with the rest of the loop
     * around it (a busy or throttled machine while the part ran alone):
     * unless the step hardly waits for it, neither gap is a figure to act on. */
    /* hidden: the step hardly waits for it, and most of its time in the loop
     * ran beside other work (an optimizer that runs inline is never hidden,
     * however much slower it was alone) */
    if (g->total > 0 && st->exposed < 0.05 * g->total && st->exposed < 0.5 * alone &&
        st->exposed < 0.5 * L.loop_seconds)
        L.verdict = MB_VERDICT_HIDDEN;
    else if (g->total > 0 && st->exposed < 0.01 * g->total)
        L.verdict = MB_VERDICT_NEGLIGIBLE; /* a loader without workers: 81 us of a 316 ms step, 5x its 16 us alone */
    else if (alone > (1 + tolerance) * L.loop_seconds)
        L.verdict = MB_VERDICT_UNSTEADY;
    else if (pipe_big && (!self_big || L.pipeline_gap >= L.self_gap))
        L.verdict = MB_VERDICT_PIPELINE;
    else if (self_big)
        L.verdict = MB_VERDICT_ITSELF;
    else if (L.loop_seconds - alone > tolerance * L.loop_seconds)
        /* a gap of the slower level's tolerance, as the others, that the step waits for too little of to count
         * (a stage it waits for whole would be slow in the pipeline): a loader beside a step its workers' CPU
         * slows, 70 ms a batch alone, the step's 112 ms in the loop, 9 ms of it waited for; "as fast as alone"
         * it was not */
        L.verdict = MB_VERDICT_LITTLE_WAITED;
    else
        L.verdict = L.has_ceiling ? MB_VERDICT_AT_CEILING : MB_VERDICT_AS_ALONE;
    L.verdict_text = verdict_text(L.verdict);
    return L;
}
