/* baseline.c: pass/fail of a run against an earlier results file (baseline.h). */
#include "baseline.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "case_identity.h"
#include "results.h"
#include "results_writers.h"

static const char *str_of(const cJSON *o, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* For printing: a hand-edited baseline file may lack any field. */
static const char *str_or(const cJSON *o, const char *name, const char *fallback)
{
    const char *s = str_of(o, name);
    return s ? s : fallback;
}

/* The case's one ceiling (results.h: "ceiling", derived for older files),
 * the number every view shows. */
static double rate_of(const cJSON *c)
{
    mb_ceiling ce;
    mb_case_ceiling(c, &ce);
    return ce.value;
}

static bool status_is(const cJSON *o, const char *want)
{
    const char *s = str_of(o, "status");
    return s && strcmp(s, want) == 0;
}

/* A results file: schema, schema_version and a cases array. */
static int check_file(const cJSON *doc, const char *which, int *version, mb_err *err)
{
    if (!cJSON_IsObject(doc))
        return mb_errf(err, MB_EUSAGE, "%s: not a JSON object", which);
    const char *schema = str_of(doc, "schema");
    if (schema && strcmp(schema, "mlbench-results") != 0)
        return mb_errf(err, MB_EUSAGE, "%s: schema is '%s', expected 'mlbench-results'", which, schema);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "schema_version");
    if (!cJSON_IsNumber(v))
        return mb_errf(err, MB_EUSAGE, "%s: no schema_version: not an mlbench results file", which);
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "cases")))
        return mb_errf(err, MB_EUSAGE, "%s: no \"cases\" array", which);
    *version = v->valueint;
    return MB_OK;
}

/* The same case in doc, by case_identity.h's rule: an id written before
 * its backend gained a parameter still finds its measurement. */
static const cJSON *find_case(const cJSON *doc, const cJSON *c)
{
    return mb_case_find_same(cJSON_GetObjectItemCaseSensitive(doc, "cases"), c);
}

/* What the run table calls the case ("gemm/openblas dtype=fp32 m=2k"), for the printout. */
static void add_label(cJSON *e, const cJSON *c)
{
    char label[256];
    mb_case_label(c, label, sizeof label);
    cJSON_AddStringToObject(e, "label", label);
}

static void add_not_compared(cJSON *list, const cJSON *c, const char *id, const char *reason)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", id);
    add_label(e, c);
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON_AddItemToArray(list, e);
}

/* Appends a failure; rank < 0 for the case as a whole. */
static void add_failure(cJSON *list, const cJSON *c, const char *id, int rank, const char *host, double rate,
                        double base, const char *reason)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", id);
    add_label(e, c);
    if (rank >= 0) {
        cJSON_AddNumberToObject(e, "rank", rank);
        cJSON_AddStringToObject(e, "host", host ? host : "");
    }
    if (isfinite(rate))
        cJSON_AddNumberToObject(e, "rate", rate);
    else
        cJSON_AddNullToObject(e, "rate");
    cJSON_AddNumberToObject(e, "baseline", base);
    if (isfinite(rate) && base > 0)
        cJSON_AddNumberToObject(e, "ratio", rate / base);
    else
        cJSON_AddNullToObject(e, "ratio");
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON_AddItemToArray(list, e);
}

/* Checks one measured record (a case, or one rank's entry of it) against the
 * baseline's rate; returns true when it failed. */
static bool check_one(cJSON *failed, const cJSON *c, const char *id, int rank, const char *host, const cJSON *rec,
                      double rate, double base, double tolerance)
{
    char reason[MB_ERR_LEN];
    if (status_is(rec, "failed")) {
        const char *why = str_of(rec, "reason");
        snprintf(reason, sizeof reason, "failed: %s", why ? why : "no reason given");
        add_failure(failed, c, id, rank, host, NAN, base, reason);
        return true;
    }
    if (!isfinite(rate) || rate >= base * (1.0 - tolerance))
        return false;
    /* both ceilings with their unit, as the run table prints them */
    char now[64], then[64];
    mb_fmt_case_rate(c, rate, now, sizeof now);
    mb_fmt_case_rate(c, base, then, sizeof then);
    snprintf(reason, sizeof reason, "ceiling %s, %.1f%% below the baseline's %s (tolerance %.1f%%)", now,
             100.0 * (1.0 - rate / base), then, 100.0 * tolerance);
    add_failure(failed, c, id, rank, host, rate, base, reason);
    return true;
}

/* Compares one case; returns 1 compared-and-failed, 0 compared-and-passed,
 * -1 not compared. */
static int compare_case(const cJSON *cur, const cJSON *base_case, double tolerance, cJSON *failed,
                        cJSON *not_compared)
{
    const char *id = str_of(cur, "id");
    char reason[MB_ERR_LEN];
    if (base_case == NULL) {
        add_not_compared(not_compared, cur, id, "not in the baseline");
        return -1;
    }
    double base = rate_of(base_case);
    if (!status_is(base_case, "ok") || !isfinite(base) || base <= 0) {
        snprintf(reason, sizeof reason, "no rate in the baseline (status %s)",
                 str_of(base_case, "status") ? str_of(base_case, "status") : "unknown");
        add_not_compared(not_compared, cur, id, reason);
        return -1;
    }
    if (status_is(cur, "skipped")) {
        const char *why = str_of(cur, "reason");
        snprintf(reason, sizeof reason, "skipped in this run: %s", why ? why : "no reason given");
        add_not_compared(not_compared, cur, id, reason);
        return -1;
    }
    const char *u1 = str_of(cur, "rate_unit"), *u2 = str_of(base_case, "rate_unit");
    if (u1 && u2 && strcmp(u1, u2) != 0) {
        snprintf(reason, sizeof reason, "rate unit %s here, %s in the baseline", u1, u2);
        add_not_compared(not_compared, cur, id, reason);
        return -1;
    }
    /* Fleet mode: every rank against the baseline (rank 0's rate is the
     * case's own, so the case-level check would only repeat it). Not for a
     * collective, whose ranks all report the one collective time. */
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(cur, "ranks");
    const cJSON *fleet = cJSON_GetObjectItemCaseSensitive(cur, "fleet");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(fleet, "min");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(fleet, "max");
    bool one_time = cJSON_IsNumber(lo) && cJSON_IsNumber(hi) && lo->valuedouble == hi->valuedouble;
    if (cJSON_IsArray(ranks) && cJSON_GetArraySize(ranks) > 0 && !one_time) {
        bool any = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, ranks)
        {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "rank");
            const cJSON *rate = cJSON_GetObjectItemCaseSensitive(e, "rate");
            any |= check_one(failed, cur, id, cJSON_IsNumber(r) ? r->valueint : 0, str_of(e, "host"), e,
                             cJSON_IsNumber(rate) ? rate->valuedouble : NAN, base, tolerance);
        }
        return any ? 1 : 0;
    }
    return check_one(failed, cur, id, -1, NULL, cur, rate_of(cur), base, tolerance) ? 1 : 0;
}

int mb_baseline_check(const cJSON *results, const cJSON *baseline, double tolerance,
                      cJSON **failures, mb_err *err)
{
    *failures = NULL;
    int v_run = 0, v_base = 0;
    if (!(tolerance >= 0 && tolerance < 1))
        return mb_errf(err, MB_EUSAGE, "--tolerance %g: expected a fraction in [0, 1), e.g. 0.10",
                       tolerance);
    if (check_file(results, "results", &v_run, err) != MB_OK ||
        check_file(baseline, "baseline", &v_base, err) != MB_OK)
        return MB_EUSAGE;
    /* every version this mlbench reads gives each case the same ceiling
     * (older files: derived by the same rule), so they compare */
    int newest = v_run > v_base ? v_run : v_base, oldest = v_run < v_base ? v_run : v_base;
    if (newest > MB_RESULTS_SCHEMA_VERSION || oldest < MB_RESULTS_SCHEMA_VERSION_MIN)
        return mb_errf(err, MB_EUSAGE,
                       "baseline has schema_version %d, this run %d: this mlbench reads %d to %d; re-run the "
                       "baseline with this mlbench",
                       v_base, v_run, MB_RESULTS_SCHEMA_VERSION_MIN, MB_RESULTS_SCHEMA_VERSION);

    cJSON *out = cJSON_CreateObject();
    cJSON *failed = cJSON_CreateArray(), *not_compared = cJSON_CreateArray();
    int compared = 0, n_failed = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(results, "cases"))
    {
        const char *id = str_of(c, "id");
        if (id == NULL)
            continue;
        int verdict = compare_case(c, find_case(baseline, c), tolerance, failed, not_compared);
        if (verdict >= 0)
            compared++;
        if (verdict > 0)
            n_failed++;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(baseline, "cases"))
    {
        const char *id = str_of(c, "id");
        if (id && find_case(results, c) == NULL)
            add_not_compared(not_compared, c, id, "in the baseline, not in this run");
    }
    cJSON_AddNumberToObject(out, "tolerance", tolerance);
    cJSON_AddNumberToObject(out, "compared", compared);
    cJSON_AddNumberToObject(out, "passed", compared - n_failed);
    cJSON_AddItemToObject(out, "failed", failed);
    cJSON_AddItemToObject(out, "not_compared", not_compared);
    *failures = out;
    if (n_failed == 0)
        return MB_OK;
    return mb_errf(err, MB_EFAIL, "%d of %d compared case%s below the baseline by more than %.1f%%",
                   n_failed, compared, compared == 1 ? "" : "s", 100.0 * tolerance);
}

void mb_baseline_print(FILE *out, const cJSON *failures, double tolerance)
{
    if (failures == NULL)
        return;
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(failures, "failed");
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(failures, "not_compared");
    const cJSON *compared = cJSON_GetObjectItemCaseSensitive(failures, "compared");
    const cJSON *passed = cJSON_GetObjectItemCaseSensitive(failures, "passed");
    int n_failed = cJSON_GetArraySize(failed);
    fprintf(out, "\nbaseline (tolerance %.1f%%): %s: %d compared, %d passed, %d failed, %d not compared\n",
            100 * tolerance, n_failed ? "FAIL" : "PASS", cJSON_IsNumber(compared) ? compared->valueint : 0,
            cJSON_IsNumber(passed) ? passed->valueint : 0, n_failed, cJSON_GetArraySize(skipped));
    const cJSON *e;
    cJSON_ArrayForEach(e, failed)
    {
        const cJSON *rank = cJSON_GetObjectItemCaseSensitive(e, "rank");
        char who[128] = "";
        if (cJSON_IsNumber(rank))
            snprintf(who, sizeof who, " rank %d (%s)", rank->valueint, str_or(e, "host", "?"));
        /* the case as the table names it (the id is in the JSON), wrapped to 120 columns */
        char line[MB_ERR_LEN + 512];
        snprintf(line, sizeof line, "FAILED %s%s: %s", str_or(e, "label", str_or(e, "id", "?")), who,
                 str_or(e, "reason", "?"));
        mb_put_wrapped(out, line, 2);
    }
    cJSON_ArrayForEach(e, skipped)
    {
        char line[MB_ERR_LEN + 512];
        snprintf(line, sizeof line, "not compared %s: %s", str_or(e, "label", str_or(e, "id", "?")),
                 str_or(e, "reason", "?"));
        mb_put_wrapped(out, line, 2);
    }
}
