/* stagefile.c: reads a stage-metrics file (docs/stage-format.md), JSON or CSV.
 *
 * Both syntaxes end up as one cJSON object per stage, checked by the same
 * validator, so a rule (units per component, no zero work, no NaN) cannot
 * differ between them. Only the way a location is written differs:
 * "file.json: stages[3].seconds" versus "file.csv:7: column 'seconds'".
 *
 * The CSV splitter is written by hand on purpose: hand-written stage files
 * are a few lines, every error must name its line, and a library with
 * callback-per-field parsing (libcsv) loses line numbers across quoted
 * newlines, which a stage file never needs anyway. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "component.h"
#include "gap.h"
#include "stages.h"
#include "vocabulary.h"

#define FORMAT_NAME "mlbench-stages"
#define FORMAT_VERSION 1     /* what a hand-written file says (the CSV hint) */
#define FORMAT_VERSION_MAX 2 /* version 2 adds isolated times and "simplify" (mlbench_simplify.py) */
/* No real run comes near these, and below them every sum, product and rate
 * the gap model forms stays a finite double (docs/reliability.md): a larger
 * number is a unit mistake or a hostile file, not a measurement. */
#define MAX_AMOUNT 1e30     /* flops, bytes, launches, syncs, seconds, per step or in total */
#define MAX_WHOLE 9007199254740992.0
/* A stage file has a line per stage: a bound on the file bounds memory
 * (cJSON keeps ~10x the text). */
#define MAX_FILE_BYTES (64 << 20) /* 2^53: calls, steps, ranks, block_size stay exact integers */

/* ---- where an error is ---------------------------------------------------- */

typedef struct loc {
    const char *path;
    int csv_line; /* > 0: CSV line number */
    int index;    /* stage index (JSON) */
    int version;  /* of the file: 1 or 2 */
} loc;

static const char *where(const loc *l, const char *key, char *buf, size_t len)
{
    if (l->csv_line > 0) {
        if (key)
            snprintf(buf, len, "%s:%d: column '%s'", l->path, l->csv_line, key);
        else
            snprintf(buf, len, "%s:%d", l->path, l->csv_line);
    } else if (key) {
        snprintf(buf, len, "%s: stages[%d].%s", l->path, l->index, key);
    } else {
        snprintf(buf, len, "%s: stages[%d]", l->path, l->index);
    }
    return buf;
}

static const char *const string_keys[] = { "name", "component", "device", "dtype",
                                           "direction", "memory", "pattern", "op", "role" };
/* Besides the work keys (vocabulary.h) and their "_per_step" forms. */
static const char *const number_keys[] = {
    "seconds", "seconds_per_step", "steps", "calls", "ranks", "block_size", "threads",
    "exposed_seconds", "exposed_seconds_per_step",
    "isolated_seconds", "isolated_seconds_per_step", /* version 2 */
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}
#define IN_LIST(s, list) in_list((s), (list), sizeof(list) / sizeof *(list))

/* "flops" or "flops_per_step", ... */
static bool is_work_key(const char *k)
{
    const char *per = strstr(k, "_per_step");
    char key[32];
    if (per && per[strlen("_per_step")] == '\0' && (size_t)(per - k) < sizeof key) {
        snprintf(key, sizeof key, "%.*s", (int)(per - k), k);
        return mb_is_work_key(key);
    }
    return mb_is_work_key(k);
}

static bool is_stage_key(const char *k)
{
    /* version 2: "isolated_bytes[_per_step]", the work the part did alone */
    const char *iso = "isolated_";
    bool isolated_work = strncmp(k, iso, strlen(iso)) == 0 && is_work_key(k + strlen(iso));
    return IN_LIST(k, string_keys) || IN_LIST(k, number_keys) || is_work_key(k) || isolated_work;
}

/* ---- typed field access with located errors -------------------------------- */

static int get_string(const cJSON *o, const char *key, const loc *l, const char **out, mb_err *err)
{
    char w[512];
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (it == NULL || cJSON_IsNull(it))
        return MB_OK;
    if (!cJSON_IsString(it) || it->valuestring[0] == '\0')
        return mb_errf(err, MB_EUSAGE, "%s: expected a non-empty string", where(l, key, w, sizeof w));
    *out = it->valuestring;
    return MB_OK;
}

/* A finite number >= 0 (> 0 when positive), or absent (*present false). A
 * JSON string is accepted for block_size only, as a size ("128k"). */
static int get_number(const cJSON *o, const char *key, const loc *l, bool positive, double *out,
                      bool *present, mb_err *err)
{
    char w[512];
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    *present = false;
    *out = 0;
    if (it == NULL || cJSON_IsNull(it))
        return MB_OK;
    double v;
    if (cJSON_IsString(it) && strcmp(key, "block_size") == 0) {
        long long b;
        mb_err e = { 0 };
        if (mb_parse_size(it->valuestring, &b, &e))
            return mb_errf(err, MB_EUSAGE, "%s: %s", where(l, key, w, sizeof w), e.msg);
        v = (double)b;
    } else if (cJSON_IsNumber(it)) {
        v = it->valuedouble;
    } else {
        return mb_errf(err, MB_EUSAGE, "%s: expected a number", where(l, key, w, sizeof w));
    }
    if (!isfinite(v))
        return mb_errf(err, MB_EUSAGE, "%s: not a finite number", where(l, key, w, sizeof w));
    if (v < 0)
        return mb_errf(err, MB_EUSAGE, "%s: negative value %g", where(l, key, w, sizeof w), v);
    if (positive && v == 0)
        return mb_errf(err, MB_EUSAGE, "%s: must be greater than zero", where(l, key, w, sizeof w));
    if (v > MAX_AMOUNT)
        return mb_errf(err, MB_EUSAGE, "%s: %g is beyond any real run (the limit is %g)",
                       where(l, key, w, sizeof w), v, MAX_AMOUNT);
    *out = v;
    *present = true;
    return MB_OK;
}

static int get_whole(const cJSON *o, const char *key, const loc *l, double *out, bool *present,
                     mb_err *err)
{
    char w[512];
    int rc = get_number(o, key, l, true, out, present, err);
    if (rc == MB_OK && *present && *out != floor(*out))
        return mb_errf(err, MB_EUSAGE, "%s: expected a whole number, got %g", where(l, key, w, sizeof w),
                       *out);
    double max = strcmp(key, "ranks") == 0 || strcmp(key, "threads") == 0 ? 1e6 : MAX_WHOLE;
    if (rc == MB_OK && *present && *out > max)
        return mb_errf(err, MB_EUSAGE, "%s: %g is beyond any real run (the limit is %g)",
                       where(l, key, w, sizeof w), *out, max);
    return rc;
}

static int check_choice(const char *value, const char *choices, const loc *l, const char *key,
                        mb_err *err)
{
    char w[512];
    if (value == NULL)
        return MB_OK;
    size_t n = strlen(value);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, value, n) == 0)
            return MB_OK;
        p += len + (bar ? 1 : 0);
    }
    return mb_errf(err, MB_EUSAGE, "%s: '%s' is not one of %s", where(l, key, w, sizeof w), value, choices);
}

/* ---- one stage --------------------------------------------------------------- */

/* "seconds" or "seconds_per_step" x steps; the same for a work key. */
static int total_of(const cJSON *o, const char *key, const loc *l, double steps, bool positive,
                    double *out, bool *present, mb_err *err)
{
    char w[512], per_key[64];
    double total, per;
    bool has_total, has_per;
    snprintf(per_key, sizeof per_key, "%s_per_step", key);
    if (get_number(o, key, l, positive, &total, &has_total, err) ||
        get_number(o, per_key, l, positive, &per, &has_per, err))
        return err->code;
    *present = has_total || has_per;
    if (has_total && has_per)
        return mb_errf(err, MB_EUSAGE, "%s: give '%s' or '%s', not both", where(l, NULL, w, sizeof w), key,
                       per_key);
    if (has_per) {
        if (steps <= 0)
            return mb_errf(err, MB_EUSAGE,
                           "%s: '%s' needs a step count ('steps' in the stage or in the run)",
                           where(l, per_key, w, sizeof w), per_key);
        *out = per * steps;
        if (*out > MAX_AMOUNT)
            return mb_errf(err, MB_EUSAGE, "%s: %g x %g steps = %g is beyond any real run (the limit is %g)",
                           where(l, per_key, w, sizeof w), per, steps, *out, MAX_AMOUNT);
    } else {
        *out = total;
    }
    return MB_OK;
}

static int check_keys(const cJSON *o, const loc *l, mb_err *err)
{
    char w[512];
    for (const cJSON *c = o->child; c; c = c->next) {
        if (!is_stage_key(c->string))
            return mb_errf(err, MB_EUSAGE,
                           "%s: unknown key (a stage has name, component, role, device, dtype, direction, "
                           "memory, pattern, op, block_size, ranks, threads, calls, steps, "
                           "flops|bytes|launches|syncs [_per_step], seconds[_per_step])",
                           where(l, c->string, w, sizeof w));
        for (const cJSON *d = o->child; d != c; d = d->next)
            if (strcmp(d->string, c->string) == 0)
                return mb_errf(err, MB_EUSAGE, "%s: given twice", where(l, c->string, w, sizeof w));
    }
    return MB_OK;
}

/* The component-specific fields: required ones, and no field that belongs
 * to another component (a block size on a GEMM is a mistake worth telling). */
static int check_component_fields(const cJSON *o, const mb_stage_component *cd, mb_stage *s, const loc *l,
                                  mb_err *err)
{
    char w[512];
    const char *c = cd->name;
    bool is_coll = mb_is_collective(c);
    bool is_mm = strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "attention") == 0;
    if (s->dtype && !is_mm && !is_coll)
        return mb_errf(err, MB_EUSAGE, "%s: only gemm, conv, attention and collectives have a dtype",
                       where(l, "dtype", w, sizeof w));
    if (is_mm && s->dtype == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: a %s stage needs a dtype (fp32, tf32, fp16, bf16, fp8, int8, fp64)",
                       where(l, "dtype", w, sizeof w), c);
    if ((s->direction || s->memory) && strcmp(c, "copy") != 0)
        return mb_errf(err, MB_EUSAGE, "%s: only copy stages have a direction or memory",
                       where(l, s->direction ? "direction" : "memory", w, sizeof w));
    if (strcmp(c, "copy") == 0 && s->direction == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: a copy stage needs a direction (h2d, d2h, d2d)",
                       where(l, "direction", w, sizeof w));
    if (s->pattern && strcmp(c, "disk") != 0)
        return mb_errf(err, MB_EUSAGE, "%s: only disk stages have a pattern", where(l, "pattern", w, sizeof w));
    if (strcmp(c, "disk") == 0 && s->pattern == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: a disk stage needs a pattern (sequential, random)",
                       where(l, "pattern", w, sizeof w));
    if (s->op && strcmp(c, "membw") != 0)
        return mb_errf(err, MB_EUSAGE, "%s: only membw stages have an op", where(l, "op", w, sizeof w));
    if (s->ranks && !is_coll)
        return mb_errf(err, MB_EUSAGE, "%s: only collectives have ranks", where(l, "ranks", w, sizeof w));
    if (is_coll && s->ranks < 2)
        return mb_errf(err, MB_EUSAGE, "%s: a %s stage needs ranks (2 or more)", where(l, "ranks", w, sizeof w),
                       c);
    if (s->threads && !((strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0) && s->device &&
                        strcmp(s->device, "cpu") == 0))
        return mb_errf(err, MB_EUSAGE, "%s: only gemm and conv stages on the CPU (\"device\": \"cpu\") have "
                       "threads (the cores they may use)", where(l, "threads", w, sizeof w));
    (void)o;
    return MB_OK;
}

static int read_strings(const cJSON *o, mb_stage *s, const loc *l, const mb_stage_component **cd, mb_err *err)
{
    const char *name, *component, *device, *dtype, *direction, *memory, *pattern, *op, *role;
    if (get_string(o, "name", l, &name, err) || get_string(o, "component", l, &component, err) ||
        get_string(o, "device", l, &device, err) || get_string(o, "dtype", l, &dtype, err) ||
        get_string(o, "direction", l, &direction, err) || get_string(o, "memory", l, &memory, err) ||
        get_string(o, "pattern", l, &pattern, err) || get_string(o, "op", l, &op, err) ||
        get_string(o, "role", l, &role, err))
        return err->code;
    char w[512], components[256];
    mb_stage_component_names(components, sizeof components);
    if (name == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: every stage needs a name", where(l, "name", w, sizeof w));
    if (component == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: every stage needs a component (%s)", where(l, "component", w, sizeof w),
                       components);
    if (check_choice(component, components, l, "component", err) ||
        check_choice(device, "gpu|cpu", l, "device", err) ||
        check_choice(direction, "h2d|d2h|d2d", l, "direction", err) ||
        check_choice(memory, "pageable|pinned", l, "memory", err) ||
        check_choice(pattern, "sequential|random", l, "pattern", err) ||
        check_choice(op, MB_STAGE_OPS, l, "op", err) || check_choice(role, MB_STAGE_ROLES, l, "role", err))
        return err->code;
    if (dtype && mb_dtype_canonical(dtype) == NULL)
        return mb_errf(err, MB_EUSAGE, "%s: unknown dtype '%s' (fp64, fp32, tf32, fp16, bf16, fp8, int8)",
                       where(l, "dtype", w, sizeof w), dtype);
    *cd = mb_stage_component_find(component); /* one of `components`: found */
    s->name = (char *)name;
    s->device = (char *)device;
    s->dtype = dtype ? (char *)mb_dtype_canonical(dtype) : NULL;
    s->direction = (char *)direction;
    s->memory = (char *)memory;
    s->pattern = (char *)pattern;
    s->op = (char *)op;
    s->role = (char *)role;
    return MB_OK;
}

/* Version 2: the work the part did alone when it is not the loop's
 * ("isolated_bytes[_per_step]": a loader alone read 305 MB a batch from
 * storage where the full loop, partly served by the page cache, read 229 MB
 * a step). Only the stage's own work key, only beside an isolated time. */
static int read_isolated_work(const cJSON *o, const loc *l, double steps, const char *work_key, mb_stage *s,
                              mb_err *err)
{
    char w[512], key[48];
    const char *k;
    for (size_t i = 0; (k = mb_work_key(i)) != NULL; i++) {
        snprintf(key, sizeof key, "isolated_%s", k);
        char per[64];
        snprintf(per, sizeof per, "%s_per_step", key);
        const char *given = cJSON_GetObjectItemCaseSensitive(o, key) ? key
                            : cJSON_GetObjectItemCaseSensitive(o, per) ? per : NULL;
        if (given == NULL)
            continue;
        if (work_key == NULL || strcmp(k, work_key) != 0)
            return mb_errf(err, MB_EUSAGE, "%s: the work alone is in the stage's own unit (%s)",
                           where(l, given, w, sizeof w), work_key ? work_key : "an 'other' stage has none");
        if (!s->has_isolated)
            return mb_errf(err, MB_EUSAGE, "%s: the work alone needs the time alone ('isolated_seconds')",
                           where(l, given, w, sizeof w));
        if (total_of(o, key, l, steps, true, &s->isolated_work, &s->has_isolated_work, err))
            return err->code;
        if (!isfinite(s->isolated_work / s->isolated_seconds))
            return mb_errf(err, MB_EUSAGE, "%s: %g in %g s is not a finite rate", where(l, given, w, sizeof w),
                           s->isolated_work, s->isolated_seconds);
    }
    return MB_OK;
}

/* Version 2: the part's time alone ("isolated_seconds[_per_step]"), for the
 * same work as `seconds` unless its own is given (read_isolated_work). A
 * version-1 file naming it is a version mistake. */
static int read_isolated(const cJSON *o, const loc *l, double steps, const char *work_key, mb_stage *s,
                         mb_err *err)
{
    char w[512];
    const char *key = cJSON_GetObjectItemCaseSensitive(o, "isolated_seconds")            ? "isolated_seconds"
                      : cJSON_GetObjectItemCaseSensitive(o, "isolated_seconds_per_step") ? "isolated_seconds_per_step"
                                                                                          : NULL;
    if (key && l->version < 2)
        return mb_errf(err, MB_EUSAGE, "%s: isolated times need a version 2 stage file (this one says version %d)",
                       where(l, key, w, sizeof w), l->version);
    if (total_of(o, "isolated_seconds", l, steps, true, &s->isolated_seconds, &s->has_isolated, err))
        return err->code;
    if (s->has_isolated && !isfinite(s->work / s->isolated_seconds))
        return mb_errf(err, MB_EUSAGE, "%s: %g in %g s is not a finite rate (seconds too small?)",
                       where(l, key, w, sizeof w), s->work, s->isolated_seconds);
    return read_isolated_work(o, l, steps, work_key, s, err);
}

/* Work and time, in run totals. */
static int read_amounts(const cJSON *o, const mb_stage_component *cd, double run_steps, mb_stage *s,
                        const loc *l, mb_err *err)
{
    char w[512];
    double steps, calls, ranks, block, threads;
    bool has_steps, has_calls, has_ranks, has_block, has_threads;
    if (get_whole(o, "steps", l, &steps, &has_steps, err) || get_whole(o, "calls", l, &calls, &has_calls, err) ||
        get_whole(o, "ranks", l, &ranks, &has_ranks, err) ||
        get_whole(o, "block_size", l, &block, &has_block, err) || get_whole(o, "threads", l, &threads, &has_threads, err))
        return err->code;
    if (!has_steps)
        steps = run_steps;
    s->count = has_calls ? (long long)calls : 0;
    s->ranks = has_ranks ? (int)ranks : 0;
    s->threads = has_threads ? (int)threads : 0;
    s->block_size = has_block ? (long long)block : 0;

    const char *k;
    for (size_t i = 0; (k = mb_work_key(i)) != NULL; i++) {
        if (cd->work_key && strcmp(k, cd->work_key) == 0)
            continue;
        char per[64];
        snprintf(per, sizeof per, "%s_per_step", k);
        const char *given = cJSON_GetObjectItemCaseSensitive(o, k) ? k
                            : cJSON_GetObjectItemCaseSensitive(o, per) ? per : NULL;
        if (given) {
            if (cd->work_key)
                return mb_errf(err, MB_EUSAGE, "%s: units do not match: a %s stage counts its work in %s, not %s",
                               where(l, given, w, sizeof w), cd->name, cd->work_key, k);
            return mb_errf(err, MB_EUSAGE, "%s: an 'other' stage has no work amount, only seconds",
                           where(l, given, w, sizeof w));
        }
    }

    bool has_seconds, has_work = false;
    if (total_of(o, "seconds", l, steps, true, &s->seconds, &has_seconds, err))
        return err->code;
    if (!has_seconds)
        return mb_errf(err, MB_EUSAGE, "%s: the stage needs its measured time ('seconds' or 'seconds_per_step')",
                       where(l, "seconds", w, sizeof w));
    /* Stages that overlap (a copy under compute, a launch while the GPU
     * runs) say how much of their time the run actually waits for. */
    if (total_of(o, "exposed_seconds", l, steps, false, &s->exposed_seconds, &s->has_exposed, err))
        return err->code;
    if (s->has_exposed && (s->exposed_seconds < 0 || s->exposed_seconds > s->seconds * (1 + 1e-9)))
        return mb_errf(err, MB_EUSAGE, "%s: exposed time must be between 0 and the stage's seconds (%g)",
                       where(l, "exposed_seconds", w, sizeof w), s->seconds);

    if (cd->work_key) {
        if (total_of(o, cd->work_key, l, steps, true, &s->work, &has_work, err))
            return err->code;
        if (!has_work)
            return mb_errf(err, MB_EUSAGE, "%s: a %s stage needs its work as '%s' (or '%s_per_step')",
                           where(l, cd->work_key, w, sizeof w), cd->name, cd->work_key, cd->work_key);
    } else {
        s->work = s->seconds;
    }
    /* Both are finite and positive, but 1e12 flops in 1e-308 s is no rate. */
    if (!isfinite(s->work / s->seconds))
        return mb_errf(err, MB_EUSAGE, "%s: %g %s in %g s is not a finite rate (seconds too small?)",
                       where(l, "seconds", w, sizeof w), s->work, cd->work_key ? cd->work_key : "s",
                       s->seconds);
    if (read_isolated(o, l, steps, cd->work_key, s, err))
        return err->code;
    s->work_unit = (char *)cd->work_unit;
    return MB_OK;
}

/* Validates one stage object and appends it to the run. */
static int add_stage_object(const cJSON *o, const loc *l, double run_steps, mb_run *run, mb_err *err)
{
    char w[512];
    if (!cJSON_IsObject(o))
        return mb_errf(err, MB_EUSAGE, "%s: expected an object", where(l, NULL, w, sizeof w));
    mb_stage s = { 0 };
    const mb_stage_component *cd = NULL;
    if (check_keys(o, l, err) || read_strings(o, &s, l, &cd, err))
        return err->code;
    s.component = (char *)cd->name;
    if (read_amounts(o, cd, run_steps, &s, l, err) || check_component_fields(o, cd, &s, l, err))
        return err->code;
    if (s.device == NULL)
        s.device = (char *)cd->device;
    char src[600];
    where(l, NULL, src, sizeof src);
    s.source = src;
    return mb_run_add_stage(run, &s, err);
}

/* ---- run-level figures --------------------------------------------------------- */

typedef struct run_figure {
    const char *key;
    double *dst;
    bool fraction; /* 0..1 */
    bool whole;
} run_figure;

static int set_run_figure(mb_run *run, const char *key, double v, const char *at, mb_err *err)
{
    double steps = 0;
    run_figure figs[] = {
        { "steps", &steps, false, true },
        { "step_seconds", &run->step_seconds, false, false },
        { "total_seconds", &run->total_seconds, false, false },
        { "batches_per_second", &run->batches_per_second, false, false },
        { "gpu_utilization", &run->gpu_utilization, true, false },
        { "cpu_utilization", &run->cpu_utilization, true, false },
    };
    for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
        if (strcmp(figs[i].key, key) != 0)
            continue;
        if (!isfinite(v))
            return mb_errf(err, MB_EUSAGE, "%s: not a finite number", at);
        if (v < 0)
            return mb_errf(err, MB_EUSAGE, "%s: negative value %g", at, v);
        if (figs[i].fraction && v > 1)
            return mb_errf(err, MB_EUSAGE, "%s: %g is not a fraction 0..1 (a percentage? write %g)", at, v,
                           v / 100.0);
        if (!figs[i].fraction && v == 0)
            return mb_errf(err, MB_EUSAGE, "%s: must be greater than zero", at);
        if (figs[i].whole && (v != floor(v) || v > 2e9))
            return mb_errf(err, MB_EUSAGE, "%s: expected a whole number, got %g", at, v);
        if (v > MAX_AMOUNT)
            return mb_errf(err, MB_EUSAGE, "%s: %g is beyond any real run (the limit is %g)", at, v, MAX_AMOUNT);
        *figs[i].dst = v;
        if (figs[i].dst == &steps)
            run->steps = (int)steps;
        return MB_OK;
    }
    return mb_errf(err, MB_EUSAGE,
                   "%s: unknown run figure (steps, step_seconds, total_seconds, batches_per_second, "
                   "gpu_utilization, cpu_utilization, name)",
                   at);
}

/* Total and step time agree with each other and with the stages. */
static int finish_run(mb_run *run, const char *path, mb_err *err)
{
    if (run->n_stages == 0)
        return mb_errf(err, MB_EUSAGE, "%s: no stages", path);
    double sum = 0; /* exposed time: overlapped parts are inside other stages */
    for (int i = 0; i < run->n_stages; i++)
        sum += mb_stage_exposed(&run->stages[i]);
    if (run->step_seconds > 0 && run->steps > 0) {
        double from_steps = run->step_seconds * run->steps;
        if (run->total_seconds > 0 && fabs(from_steps - run->total_seconds) > 0.01 * run->total_seconds)
            return mb_errf(err, MB_EUSAGE,
                           "%s: run.total_seconds %g disagrees with step_seconds x steps = %g",
                           path, run->total_seconds, from_steps);
        if (run->total_seconds <= 0)
            run->total_seconds = from_steps;
    } else if (run->step_seconds > 0 && run->total_seconds <= 0) {
        run->total_seconds = run->step_seconds; /* one step described */
        run->steps = 1;
    }
    if (run->total_seconds <= 0) {
        run->total_seconds = sum;
    } else if (sum > run->total_seconds * 1.01) {
        mb_run_warn(run,
                    "the stages' exposed time adds up to %.6g s but the run took %.6g s: stages overlap; "
                    "give overlapping stages their exposed_seconds (docs/stage-format.md), the projections "
                    "assume the rest run one after another",
                    sum, run->total_seconds);
    }
    if (run->steps > 0 && run->step_seconds <= 0)
        run->step_seconds = run->total_seconds / run->steps;
    return MB_OK;
}

static int set_path_kind(mb_run *run, const char *path, mb_err *err)
{
    run->path = strdup(path);
    run->kind = strdup("stage-file");
    if (run->path == NULL || run->kind == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
}

/* ---- JSON ------------------------------------------------------------------------- */

static void line_col(const char *buf, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = buf; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* True when the text ends inside a string or with a bracket still open: a
 * truncated file, whatever token cJSON stopped at. */
static bool json_ends_early(const char *buf)
{
    int depth = 0;
    bool in_string = false;
    for (const char *p = buf; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            depth--;
        }
    }
    return in_string || depth > 0;
}

static int json_syntax_error(const char *path, const char *buf, size_t len, mb_err *err)
{
    const char *at = cJSON_GetErrorPtr();
    if (at == NULL || at < buf || at > buf + len)
        at = buf + len;
    int line, col;
    line_col(buf, at, &line, &col);
    const char *rest = at;
    while (*rest && isspace((unsigned char)*rest))
        rest++;
    if (*rest == '\0' || json_ends_early(buf)) {
        line_col(buf, buf + len, &line, &col);
        return mb_errf(err, MB_EUSAGE, "%s:%d:%d: malformed JSON: the file ends early (truncated?)", path, line,
                       col);
    }
    if (mb_json_depth_at(buf, (size_t)(at - buf)) >= CJSON_NESTING_LIMIT)
        return mb_errf(err, MB_EUSAGE, "%s:%d:%d: JSON nested deeper than %d levels (not a stage file)", path, line,
                       col, CJSON_NESTING_LIMIT);
    return mb_errf(err, MB_EUSAGE, "%s:%d:%d: malformed JSON near '%.20s'", path, line, col, at);
}

static int read_json_run(const cJSON *root, const char *path, mb_run *run, mb_err *err)
{
    char at[600];
    const cJSON *run_obj = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (run_obj && !cJSON_IsObject(run_obj))
        return mb_errf(err, MB_EUSAGE, "%s: run: expected an object", path);
    for (const cJSON *c = run_obj ? run_obj->child : NULL; c; c = c->next) {
        snprintf(at, sizeof at, "%s: run.%s", path, c->string);
        if (strcmp(c->string, "name") == 0 || strcmp(c->string, "host") == 0 ||
            strcmp(c->string, "notes") == 0)
            continue; /* descriptive only */
        if (!cJSON_IsNumber(c))
            return mb_errf(err, MB_EUSAGE, "%s: expected a number", at);
        if (set_run_figure(run, c->string, c->valuedouble, at, err))
            return err->code;
    }
    return MB_OK;
}

/* A version-2 file written by mlbench_simplify.py before any stage could be
 * built (interrupted or failed in its first mode): say so, not "no array". */
static int simplify_without_stages(const cJSON *root, const char *path, mb_err *err)
{
    const cJSON *simp = cJSON_GetObjectItemCaseSensitive(root, "simplify");
    if (!cJSON_IsObject(simp))
        return mb_errf(err, MB_EUSAGE, "%s: stages: expected an array of stage objects", path);
    const cJSON *intr = cJSON_GetObjectItemCaseSensitive(simp, "interrupted_in");
    const cJSON *errs = cJSON_GetObjectItemCaseSensitive(simp, "errors");
    const cJSON *e0 = cJSON_IsArray(errs) ? cJSON_GetArrayItem(errs, 0) : NULL;
    const cJSON *mode = e0 ? cJSON_GetObjectItemCaseSensitive(e0, "mode") : NULL;
    const cJSON *what = e0 ? cJSON_GetObjectItemCaseSensitive(e0, "error") : NULL;
    if (cJSON_IsString(intr))
        return mb_errf(err, MB_EUSAGE, "%s: no stages: the simplify run was interrupted in mode '%s' before the "
                       "full loop was measured", path, intr->valuestring);
    if (cJSON_IsString(mode) && cJSON_IsString(what))
        return mb_errf(err, MB_EUSAGE, "%s: no stages: the simplify run failed in mode '%s': %s", path,
                       mode->valuestring, what->valuestring);
    return mb_errf(err, MB_EUSAGE, "%s: no stages: the simplify run did not measure the full loop", path);
}

/* "simplify" (version 2): what mlbench_simplify.py measured beyond the
 * stages. Kept as evidence for the writers; a run that stopped early (an
 * error in the user's code, Ctrl-C) is said in a warning. */
static int read_simplify(const cJSON *root, const char *path, mb_run *run, mb_err *err)
{
    const cJSON *simp = cJSON_GetObjectItemCaseSensitive(root, "simplify");
    if (simp == NULL)
        return MB_OK;
    if (!cJSON_IsObject(simp))
        return mb_errf(err, MB_EUSAGE, "%s: simplify: expected an object", path);
    const cJSON *intr = cJSON_GetObjectItemCaseSensitive(simp, "interrupted_in");
    const cJSON *errs = cJSON_GetObjectItemCaseSensitive(simp, "errors");
    if (cJSON_IsString(intr))
        mb_run_warn(run, "the simplify run was interrupted in mode '%s': the modes after it are missing",
                    intr->valuestring);
    for (const cJSON *e = cJSON_IsArray(errs) ? errs->child : NULL; e; e = e->next) {
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(e, "mode");
        const cJSON *what = cJSON_GetObjectItemCaseSensitive(e, "error");
        if (cJSON_IsString(mode) && cJSON_IsString(what))
            mb_run_warn(run, "the simplify run failed in mode '%s': %s", mode->valuestring, what->valuestring);
    }
    if (run->evidence == NULL && (run->evidence = cJSON_CreateObject()) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    cJSON *copy = cJSON_Duplicate(simp, true);
    if (copy == NULL || !cJSON_AddItemToObject(run->evidence, "simplify", copy)) {
        cJSON_Delete(copy);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    return MB_OK;
}

static int read_json(const char *path, const char *buf, size_t len, mb_run *run, mb_err *err)
{
    cJSON *root = cJSON_ParseWithOpts(buf, NULL, 1);
    if (root == NULL)
        return json_syntax_error(path, buf, len, err);
    int rc = MB_OK;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
    if (!cJSON_IsObject(root)) {
        rc = mb_errf(err, MB_EUSAGE, "%s: expected a JSON object with \"format\": \"%s\"", path, FORMAT_NAME);
    } else if (fmt == NULL) {
        /* a JSON object of one's own (a per-module timing log of a granite-4.0 prefill was refused with
         * 'format: expected "mlbench-stages"', which did not say a trace was what --run also takes) */
        rc = mb_errf(err, MB_EUSAGE,
                     "%s: neither a profiler trace (no \"traceEvents\") nor a stage file (no \"format\": \"%s\"): "
                     "pass a torch.profiler trace (export_chrome_trace, tensorboard_trace_handler) or a stage file "
                     "(docs/stage-format.md)",
                     path, FORMAT_NAME);
    } else if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT_NAME) != 0) {
        rc = mb_errf(err, MB_EUSAGE, "%s: format: expected \"%s\" (see docs/stage-format.md)", path, FORMAT_NAME);
    } else if (!cJSON_IsNumber(ver)) {
        rc = mb_errf(err, MB_EUSAGE, "%s: version: expected a number (%d)", path, FORMAT_VERSION);
    } else if (ver->valuedouble != 1 && ver->valuedouble != FORMAT_VERSION_MAX) {
        rc = mb_errf(err, MB_EUSAGE, "%s: version: %g is not supported (this mlbench reads version %d and %d)",
                     path, ver->valuedouble, FORMAT_VERSION, FORMAT_VERSION_MAX);
    } else if (!cJSON_IsArray(stages)) {
        rc = simplify_without_stages(root, path, err);
    } else {
        int version = (int)ver->valuedouble;
        for (const cJSON *c = root->child; c && rc == MB_OK; c = c->next)
            if (strcmp(c->string, "format") && strcmp(c->string, "version") && strcmp(c->string, "stages") &&
                strcmp(c->string, "run") && !(version >= 2 && strcmp(c->string, "simplify") == 0))
                rc = mb_errf(err, MB_EUSAGE, "%s: %s: unknown key (format, version, run, stages%s)", path, c->string,
                             version >= 2 ? ", simplify" : "");
        if (rc == MB_OK)
            rc = read_json_run(root, path, run, err);
        if (rc == MB_OK)
            rc = read_simplify(root, path, run, err);
        int i = 0;
        for (const cJSON *st = stages->child; st && rc == MB_OK; st = st->next, i++) {
            loc l = { .path = path, .index = i, .version = version };
            rc = add_stage_object(st, &l, run->steps, run, err);
        }
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- CSV -------------------------------------------------------------------------- */

enum { MAX_COLUMNS = 32 };

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Splits one line in place into at most MAX_COLUMNS cells; "..." quotes a
 * cell holding commas, "" inside quotes is one quote. */
static int split_csv(char *line, char **cells, int *n, const char *path, int lineno, mb_err *err)
{
    *n = 0;
    char *p = line;
    for (;;) {
        if (*n == MAX_COLUMNS)
            return mb_errf(err, MB_EUSAGE, "%s:%d: more than %d columns", path, lineno, MAX_COLUMNS);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '"') {
            char *out = ++p, *start = p;
            for (;;) {
                if (*p == '\0')
                    return mb_errf(err, MB_EUSAGE, "%s:%d: unterminated quote", path, lineno);
                if (*p == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p != ',' && *p != '\0')
                return mb_errf(err, MB_EUSAGE, "%s:%d: text after a closing quote", path, lineno);
            char end = *p;
            *out = '\0';
            cells[(*n)++] = start;
            if (end == '\0')
                return MB_OK;
            p++;
        } else {
            char *start = p;
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            cells[(*n)++] = trim(start);
            if (comma == NULL)
                return MB_OK;
            p = comma + 1;
        }
    }
}

/* A cell as the JSON value the validator expects. */
static int cell_to_json(cJSON *obj, const char *key, const char *cell, const char *path, int lineno,
                        mb_err *err)
{
    errno = 0;
    char *end;
    double v = strtod(cell, &end);
    bool whole_number = end != cell && *trim(end) == '\0';
    /* a block size may be written as a size ("128k"), checked by the validator */
    if (IN_LIST(key, string_keys) || (strcmp(key, "block_size") == 0 && !whole_number)) {
        if (cJSON_AddStringToObject(obj, key, cell) == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        return MB_OK;
    }
    if (end == cell || *trim(end) != '\0' || errno == ERANGE)
        return mb_errf(err, MB_EUSAGE, "%s:%d: column '%s': '%s' is not a number", path, lineno, key, cell);
    if (!isfinite(v))
        return mb_errf(err, MB_EUSAGE, "%s:%d: column '%s': not a finite number", path, lineno, key);
    if (cJSON_AddNumberToObject(obj, key, v) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
}

/* "# mlbench-stages version 1" or "# key = value" (a run figure) or a comment. */
static int csv_comment(char *text, const char *path, int lineno, int *have_version, mb_run *run, mb_err *err)
{
    char *t = trim(text + 1);
    int version;
    char tail;
    if (sscanf(t, FORMAT_NAME " version %d %c", &version, &tail) == 1) {
        if (version != FORMAT_VERSION && version != FORMAT_VERSION_MAX)
            return mb_errf(err, MB_EUSAGE,
                           "%s:%d: version %d is not supported (this mlbench reads version %d and %d)", path,
                           lineno, version, FORMAT_VERSION, FORMAT_VERSION_MAX);
        *have_version = version;
        return MB_OK;
    }
    char *eq = strchr(t, '=');
    if (eq == NULL)
        return MB_OK;
    *eq = '\0';
    char *key = trim(t), *value = trim(eq + 1);
    for (const char *k = key; *k; k++)
        if (!isalnum((unsigned char)*k) && *k != '_')
            return MB_OK; /* prose with an '=' in it */
    if (strcmp(key, "name") == 0 || strcmp(key, "host") == 0)
        return MB_OK;
    char at[600];
    snprintf(at, sizeof at, "%s:%d: run figure '%s'", path, lineno, key);
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *trim(end) != '\0' || errno == ERANGE)
        return mb_errf(err, MB_EUSAGE, "%s: '%s' is not a number", at, value);
    return set_run_figure(run, key, v, at, err);
}

static int csv_header(char **cells, int n, char **names, const char *path, int lineno, mb_err *err)
{
    for (int i = 0; i < n; i++) {
        if (!is_stage_key(cells[i]))
            return mb_errf(err, MB_EUSAGE, "%s:%d: unknown column '%s' (see docs/stage-format.md)", path, lineno,
                           cells[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(cells[i], names[j]) == 0)
                return mb_errf(err, MB_EUSAGE, "%s:%d: column '%s' given twice", path, lineno, cells[i]);
        names[i] = strdup(cells[i]);
        if (names[i] == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
    }
    return MB_OK;
}

static int csv_row(char **cells, int n, char **names, int n_names, const char *path, int lineno, int version,
                   mb_run *run, mb_err *err)
{
    if (n != n_names)
        return mb_errf(err, MB_EUSAGE, "%s:%d: %d cells, the header has %d columns (truncated line?)", path,
                       lineno, n, n_names);
    cJSON *obj = cJSON_CreateObject();
    if (obj == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = MB_OK;
    for (int i = 0; i < n && rc == MB_OK; i++)
        if (cells[i][0] != '\0')
            rc = cell_to_json(obj, names[i], cells[i], path, lineno, err);
    if (rc == MB_OK) {
        loc l = { .path = path, .csv_line = lineno, .version = version };
        rc = add_stage_object(obj, &l, run->steps, run, err);
    }
    cJSON_Delete(obj);
    return rc;
}

static int read_csv(const char *path, char *buf, mb_run *run, mb_err *err)
{
    char *names[MAX_COLUMNS] = { 0 };
    int n_names = 0, lineno = 0, rc = MB_OK;
    int have_version = 0; /* the version line's number, 0 = not seen yet */
    /* strtok_r on "\n" skips empty lines, so count lines by hand. */
    for (char *line = buf; line && rc == MB_OK;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        char *t = trim(line);
        if (*t == '#') {
            rc = csv_comment(t, path, lineno, &have_version, run, err);
        } else if (*t != '\0') {
            char *cells[MAX_COLUMNS];
            int n;
            if (!have_version)
                rc = mb_errf(err, MB_EUSAGE,
                             "%s:%d: a CSV stage file starts with the line '# %s version %d' "
                             "(see docs/stage-format.md)",
                             path, lineno, FORMAT_NAME, FORMAT_VERSION);
            else if ((rc = split_csv(t, cells, &n, path, lineno, err)) == MB_OK) {
                if (n_names == 0) {
                    rc = csv_header(cells, n, names, path, lineno, err);
                    n_names = n;
                } else {
                    rc = csv_row(cells, n, names, n_names, path, lineno, have_version, run, err);
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < MAX_COLUMNS; i++)
        free(names[i]);
    if (rc == MB_OK && !have_version)
        rc = mb_errf(err, MB_EUSAGE, "%s: not a stage file: no '# %s version %d' line (see docs/stage-format.md)",
                     path, FORMAT_NAME, FORMAT_VERSION);
    return rc;
}

/* ---- entry point ---------------------------------------------------------------------- */

static int slurp(const char *path, char **out, size_t *len, mb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return mb_errno(err, MB_EUSAGE, "%s: cannot open", path);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return mb_errf(err, MB_EUSAGE, "%s: larger than %d MiB: not a stage file (one line per stage; a "
                       "profiler trace is read with its own reader)", path, MAX_FILE_BYTES >> 20);
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *g = realloc(buf, cap);
            if (g == NULL) {
                free(buf);
                fclose(f);
                return mb_errf(err, MB_ESYS, "%s: out of memory", path);
            }
            buf = g;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (n > MAX_FILE_BYTES) {
            free(buf);
            fclose(f);
            return mb_errf(err, MB_EUSAGE, "%s: larger than %d MiB: not a stage file (one line per stage; a "
                           "profiler trace is read with its own reader)", path, MAX_FILE_BYTES >> 20);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return mb_errno(err, MB_EUSAGE, "%s: cannot read", path);
    }
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) {
        free(buf);
        return mb_errf(err, MB_EUSAGE, "%s: binary data (NUL byte): not a stage file", path);
    }
    *out = buf;
    *len = n;
    return MB_OK;
}

int mb_stagefile_read(const char *path, mb_run *out, mb_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(path, &buf, &len, err);
    if (rc != MB_OK)
        return rc;
    mb_run run;
    mb_run_init(&run);
    const char *p = buf;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        rc = mb_errf(err, MB_EUSAGE, "%s: empty file", path);
    else if (*p == '{' || *p == '[')
        rc = read_json(path, buf, len, &run, err);
    else
        rc = read_csv(path, buf, &run, err);
    free(buf);
    if (rc == MB_OK)
        rc = finish_run(&run, path, err);
    if (rc == MB_OK)
        rc = set_path_kind(&run, path, err);
    if (rc != MB_OK) {
        mb_run_free(&run);
        return rc;
    }
    *out = run;
    return MB_OK;
}
