#include "results.h"
#include "vocabulary.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "context.h"
#include "file_write.h"
#include "formulas.h"
#include "mb_git_revision.h"
#include "results_writers.h"

void mb_record_init(mb_record *r, const mb_case *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    mb_report_init(&r->report);
}

void mb_record_free(mb_record *r)
{
    free(r->rep_iterations);
    free(r->rep_seconds);
    mb_report_free(&r->report);
    memset(r, 0, sizeof *r);
}

int mb_record_add_repetition(mb_record *r, long long iterations, double seconds)
{
    long long *it = realloc(r->rep_iterations, sizeof *it * (size_t)(r->repetitions + 1));
    if (it == NULL)
        return MB_ESYS;
    r->rep_iterations = it;
    double *s = realloc(r->rep_seconds, sizeof *s * (size_t)(r->repetitions + 1));
    if (s == NULL)
        return MB_ESYS;
    r->rep_seconds = s;
    it[r->repetitions] = iterations;
    s[r->repetitions] = seconds;
    r->repetitions++;
    return MB_OK;
}

const char *mb_case_status_name(mb_case_status s)
{
    return s == MB_CASE_OK ? "ok" : s == MB_CASE_SKIPPED ? "skipped" : "failed";
}

static const char *verify_name(mb_verify_status v)
{
    return v == MB_VERIFY_PASSED ? "passed" : v == MB_VERIFY_FAILED ? "failed" : "not-run";
}

bool mb_record_stats(const mb_record *r, mb_stats *out)
{
    memset(out, 0, sizeof *out);
    int n = r->repetitions;
    if (n <= 0)
        return false;
    double spi[n], rate[n];
    double scale = r->c->ops->rate_scale > 0 ? r->c->ops->rate_scale : 1.0;
    for (int i = 0; i < n; i++) {
        if (r->rep_iterations[i] <= 0 || !(r->rep_seconds[i] > 0))
            return false;
        spi[i] = r->rep_seconds[i] / (double)r->rep_iterations[i];
        rate[i] = r->work_per_iter / spi[i] / scale;
    }
    out->spi_median = mb_median(spi, n);
    out->spi_min = mb_min(spi, n);
    out->spi_mean = mb_mean(spi, n);
    out->spi_stddev = mb_stddev(spi, n);
    out->rate_median = mb_median(rate, n);
    out->rate_best = mb_max(rate, n);
    out->rate_mean = mb_mean(rate, n);
    out->rate_cv = mb_cv(rate, n);
    return true;
}

double mb_noise_allowance(double cv)
{
    double k = isfinite(cv) && cv > 0 ? MB_NOISE_K * cv : 0;
    return k > MB_NOISE_FLOOR ? k : MB_NOISE_FLOOR;
}

static bool measured(double v)
{
    return isfinite(v) && v > 0;
}

/* How far apart two rates are, as a fraction of the smaller. */
static double spread(double a, double b)
{
    return fabs(a - b) / fmin(a, b);
}

/* A compute case whose sustained phase was cut into sub-windows: its ceiling
 * is that steady state's rate, and that steady state's spread is its noise.
 * The repetitions ran before it (after the warm-up and the burst windows),
 * while a GPU at its power cap still pulls its clock down: they measure
 * the settling, not the ceiling. */
static bool judged_by_steady_state(const mb_noise_in *in)
{
    return measured(in->sustained) && in->sustained_windows >= 3 && isfinite(in->sustained_cv) &&
           in->sustained_cv >= 0;
}

bool mb_noise_judge(const mb_noise_in *in, char *why, size_t len)
{
    char none[8];
    if (why == NULL) {
        why = none;
        len = sizeof none;
    }
    why[0] = '\0';
    bool steady = judged_by_steady_state(in);
    if (in->max_cv > 0 && in->repetitions >= 2 && isfinite(in->cv) && in->cv > in->max_cv) {
        snprintf(why, len,
                 "noisy: cv %.1f%% > max_cv %.1f%%: the repetitions disagree (a busy machine, a clock or "
                 "device whose speed moves, or too short a min_time); the ceiling is not reliable",
                 in->cv * 100, in->max_cv * 100);
        return true;
    }
    if (steady && in->max_cv > 0 && in->sustained_cv > in->max_cv) {
        snprintf(why, len,
                 "noisy: the sustained window's %d sub-windows disagree (cv %.1f%% > max_cv %.1f%%): the rate moves "
                 "within the steady state (a clock that oscillates at the power cap, a busy machine); the ceiling is "
                 "not reliable",
                 in->sustained_windows, in->sustained_cv * 100, in->max_cv * 100);
        return true;
    }
    double tol = mb_noise_allowance(steady ? in->sustained_cv : in->cv);
    char a[32], b[32];
    if (!steady && measured(in->median) && measured(in->sustained) && spread(in->sustained, in->median) > tol) {
        mb_fmt_number(a, sizeof a, in->sustained);
        mb_fmt_number(b, sizeof b, in->median);
        snprintf(why, len,
                 "noisy: sustained %s and the repetitions' median %s differ by %.1f%%, more than this case's noise "
                 "allows (%.1f%% = max(%g x cv, %g%%)): both time back-to-back work and should agree",
                 a, b, 100 * spread(in->sustained, in->median), 100 * tol, MB_NOISE_K, 100 * MB_NOISE_FLOOR);
        return true;
    }
    if (measured(in->burst) && measured(in->sustained) && in->sustained > in->burst * (1 + tol)) {
        mb_fmt_number(a, sizeof a, in->sustained);
        mb_fmt_number(b, sizeof b, in->burst);
        snprintf(why, len,
                 "noisy: sustained %s is %.1f%% above burst %s, more than this case's noise allows (%.1f%%): a "
                 "long run cannot beat a short one, so the difference is noise",
                 a, 100 * spread(in->sustained, in->burst), b, 100 * tol);
        return true;
    }
    return false;
}

bool mb_noise_settling(const mb_noise_in *in, char *why, size_t len)
{
    if (!judged_by_steady_state(in) || !measured(in->median) ||
        spread(in->sustained, in->median) <= mb_noise_allowance(in->sustained_cv))
        return false;
    char a[32], b[32];
    mb_fmt_number(a, sizeof a, in->median);
    mb_fmt_number(b, sizeof b, in->sustained);
    snprintf(why, len,
             "the repetitions' median %s is %.1f%% from the sustained %s: they ran before the clock settled (after the "
             "burst windows); the sustained window's %d sub-windows agree (cv %.1f%%), so the ceiling holds",
             a, 100 * spread(in->sustained, in->median), b, in->sustained_windows, 100 * in->sustained_cv);
    return true;
}

double mb_record_ceiling(const mb_record *r, const char **source)
{
    mb_stats st;
    *source = "median";
    if (r->status != MB_CASE_OK || !mb_record_stats(r, &st))
        return NAN;
    if (r->c->ops->compute && r->sustained.measured && measured(r->sustained.rate)) {
        *source = "sustained";
        return r->sustained.rate;
    }
    return measured(st.rate_median) ? st.rate_median : NAN;
}

bool mb_record_check_noise(mb_record *r)
{
    mb_stats st;
    r->noisy = false;
    if (r->status != MB_CASE_OK || !mb_record_stats(r, &st))
        return false;
    mb_noise_in in = { .cv = st.rate_cv,
                       .max_cv = r->c->max_cv,
                       .repetitions = r->repetitions,
                       .median = st.rate_median,
                       .burst = r->burst.measured ? r->burst.rate : NAN,
                       .sustained = r->sustained.measured ? r->sustained.rate : NAN,
                       .sustained_cv = r->sustained.measured ? r->sustained.sub_cv : NAN,
                       .sustained_windows = r->sustained.measured ? r->sustained.sub_windows : 0 };
    char why[MB_ERR_LEN];
    r->noisy = mb_noise_judge(&in, why, sizeof why);
    if (r->noisy)
        mb_report_note(&r->report, "%s", why);
    else if (mb_noise_settling(&in, why, sizeof why))
        mb_report_note(&r->report, "%s", why);
    return r->noisy;
}

static cJSON *params_json(const mb_params *p)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < mb_params_count(p); i++)
        cJSON_AddStringToObject(o, mb_params_name(p, i), mb_params_value(p, i));
    return o;
}

/* JSON has no NaN/Inf: they become null. */
static void add_number(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_timing(cJSON *o, const mb_record *r)
{
    mb_stats st;
    if (!mb_record_stats(r, &st)) {
        cJSON_AddNullToObject(o, "per_repetition");
        cJSON_AddNullToObject(o, "seconds_per_iteration");
        cJSON_AddNullToObject(o, "rate");
        cJSON_AddNullToObject(o, "seconds_per_unit");
        cJSON_AddNullToObject(o, "efficiency");
        return;
    }
    cJSON *reps = cJSON_AddArrayToObject(o, "per_repetition");
    for (int i = 0; i < r->repetitions; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "iterations", (double)r->rep_iterations[i]);
        add_number(x, "seconds", r->rep_seconds[i]);
        cJSON_AddItemToArray(reps, x);
    }
    cJSON *spi = cJSON_AddObjectToObject(o, "seconds_per_iteration");
    add_number(spi, "median", st.spi_median);
    add_number(spi, "min", st.spi_min);
    add_number(spi, "mean", st.spi_mean);
    add_number(spi, "stddev", st.spi_stddev);
    cJSON *rate = cJSON_AddObjectToObject(o, "rate");
    add_number(rate, "median", st.rate_median);
    add_number(rate, "best", st.rate_best);
    add_number(rate, "mean", st.rate_mean);
    add_number(rate, "cv", st.rate_cv);
    cJSON *spu = cJSON_AddObjectToObject(o, "seconds_per_unit");
    double scale = r->c->ops->rate_scale > 0 ? r->c->ops->rate_scale : 1.0;
    add_number(spu, "median", st.rate_median > 0 ? 1.0 / (st.rate_median * scale) : NAN);
    const char *source;
    double ceiling = mb_record_ceiling(r, &source);
    if (r->report.peak > 0 && isfinite(ceiling))
        add_number(o, "efficiency", mb_efficiency(ceiling, r->report.peak));
    else
        cJSON_AddNullToObject(o, "efficiency");
}

/* The case's one ceiling (schema 2): null when it has none. */
static void add_ceiling(cJSON *o, const mb_record *r, const char *unit)
{
    const char *source;
    double v = mb_record_ceiling(r, &source);
    if (!isfinite(v)) {
        cJSON_AddNullToObject(o, "ceiling");
        return;
    }
    cJSON *c = cJSON_AddObjectToObject(o, "ceiling");
    cJSON_AddNumberToObject(c, "value", v);
    cJSON_AddStringToObject(c, "unit", unit);
    cJSON_AddStringToObject(c, "source", source);
}

/* One phase (harness/api/phases.h) as the schema's burst/sustained object;
 * readings that were not available are null. */
static cJSON *phase_json(const mb_record *r, const mb_phase_result *p, const char *reasons, bool sustained)
{
    if (!p->measured)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_number(o, "rate", p->rate);
    add_number(o, "rate_best", p->rate_best);
    if (r->report.peak > 0)
        add_number(o, "efficiency", mb_efficiency(p->rate, r->report.peak));
    else
        cJSON_AddNullToObject(o, "efficiency");
    cJSON_AddNumberToObject(o, "windows", p->windows);
    add_number(o, "window_seconds", p->window_seconds);
    if (sustained) {
        add_number(o, "settle_seconds", p->settle_seconds);
        /* the steady state's own noise: its consecutive sub-windows' rates */
        cJSON_AddNumberToObject(o, "sub_windows", p->sub_windows);
        add_number(o, "sub_cv", p->sub_cv);
        add_number(o, "sub_rate_min", p->sub_rate_min);
        add_number(o, "sub_rate_max", p->sub_rate_max);
    } else
        add_number(o, "idle_seconds", p->idle_seconds);
    cJSON_AddNumberToObject(o, "iterations", (double)p->iterations);
    add_number(o, "seconds", p->seconds);
    add_number(o, "wall_seconds", p->wall_seconds);
    cJSON_AddNumberToObject(o, "samples", p->samples);
    if (p->have_sm) {
        cJSON *sm = cJSON_AddObjectToObject(o, "sm_clock_mhz");
        add_number(sm, "min", p->sm_mhz_min);
        add_number(sm, "mean", p->sm_mhz_mean);
        add_number(sm, "max", p->sm_mhz_max);
    } else {
        cJSON_AddNullToObject(o, "sm_clock_mhz");
    }
    if (p->have_power) {
        cJSON *pw = cJSON_AddObjectToObject(o, "power_w");
        add_number(pw, "mean", p->power_w_mean);
        add_number(pw, "max", p->power_w_max);
    } else {
        cJSON_AddNullToObject(o, "power_w");
    }
    if (p->have_reasons)
        cJSON_AddStringToObject(o, "throttle_reasons", reasons);
    else
        cJSON_AddNullToObject(o, "throttle_reasons");
    return o;
}

static void add_phases(cJSON *o, const mb_record *r)
{
    if (!r->c->ops->compute)
        return;
    cJSON_AddItemToObject(o, "burst", phase_json(r, &r->burst, r->burst_reasons, false));
    cJSON_AddItemToObject(o, "sustained", phase_json(r, &r->sustained, r->sustained_reasons, true));
    /* What `gap` and `compare` take as this case's ceiling: what a long run
     * gets (docs/gpu-gemm-conv.md, "Burst and sustained"). */
    cJSON_AddStringToObject(o, "ceiling_phase", "sustained");
}

cJSON *mb_record_to_json(const mb_record *r)
{
    const mb_case *c = r->c;
    const mb_component_ops *ops = c->ops;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "section", c->section);
    cJSON_AddStringToObject(o, "component", ops->component);
    cJSON_AddStringToObject(o, "backend", ops->backend);
    /* where the work ran, from the backend's own description (.uses_gpu): one home for the fact, read by gap
     * and compare (configs/gap/matching.ini [devices] only for files from before this key) */
    cJSON_AddStringToObject(o, "device", ops->uses_gpu ? "gpu" : "cpu");
    cJSON_AddItemToObject(o, "params", params_json(c->params));
    cJSON *set = cJSON_AddArrayToObject(o, "params_set");
    for (int i = 0; i < mb_params_count(c->params); i++)
        if (mb_param_is_set(c->params, mb_params_name(c->params, i)))
            cJSON_AddItemToArray(set, cJSON_CreateString(mb_params_name(c->params, i)));
    cJSON_AddStringToObject(o, "status", mb_case_status_name(r->status));
    if (r->reason[0])
        cJSON_AddStringToObject(o, "reason", r->reason);
    else
        cJSON_AddNullToObject(o, "reason");
    cJSON_AddStringToObject(o, "work_unit", ops->work_unit);
    add_number(o, "work_per_iteration", r->work_per_iter);
    char unit_buf[32];
    const char *unit = mb_rate_unit_for_dtype(ops->rate_unit, mb_param_str_opt(c->params, "dtype"), unit_buf,
                                              sizeof unit_buf);
    cJSON_AddStringToObject(o, "rate_unit", unit);
    cJSON_AddNumberToObject(o, "rate_scale", ops->rate_scale);
    cJSON_AddBoolToObject(o, "latency_first", ops->latency_first);
    cJSON_AddNumberToObject(o, "repetitions", r->repetitions);
    cJSON_AddBoolToObject(o, "noisy", r->noisy);
    if (c->max_cv > 0)
        cJSON_AddNumberToObject(o, "max_cv", c->max_cv);
    else
        cJSON_AddNullToObject(o, "max_cv");
    cJSON_AddNumberToObject(o, "iterations", r->repetitions ? (double)r->rep_iterations[0] : 0);
    add_timing(o, r);
    add_phases(o, r);
    add_ceiling(o, r, unit);
    if (r->report.peak > 0) {
        cJSON *peak = cJSON_AddObjectToObject(o, "peak");
        cJSON_AddNumberToObject(peak, "value", r->report.peak);
        cJSON_AddStringToObject(peak, "source", r->report.peak_source ? r->report.peak_source : "");
    } else {
        cJSON_AddNullToObject(o, "peak");
    }
    cJSON *v = cJSON_AddObjectToObject(o, "verification");
    cJSON_AddStringToObject(v, "status", verify_name(r->verify));
    cJSON_AddStringToObject(v, "detail", r->verify_detail);
    cJSON *m = cJSON_AddObjectToObject(o, "metrics");
    for (int i = 0; i < r->report.n_metrics; i++) {
        cJSON *x = cJSON_AddObjectToObject(m, r->report.metrics[i].name);
        add_number(x, "value", r->report.metrics[i].value);
        cJSON_AddStringToObject(x, "unit", r->report.metrics[i].unit);
    }
    cJSON *info = cJSON_AddObjectToObject(o, "info");
    for (int i = 0; i < r->report.n_infos; i++)
        cJSON_AddStringToObject(info, r->report.infos[i].name, r->report.infos[i].value);
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; i < r->report.n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(r->report.notes[i]));
    return o;
}

/* A *.tmp.PID file is only ever ours while PID runs: one left by a killed
 * run (SIGKILL skips every handler) is removed by the next run writing to
 * the same directory, which says so. Only names of our own pattern whose
 * base is a results file (*.json or the path being written) and whose
 * process is gone are touched. */
static void sweep_stale_temps(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    size_t base_len = strlen(base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *tmp = strstr(e->d_name, ".tmp.");
        if (tmp == NULL || tmp == e->d_name)
            continue;
        const char *digits = tmp + 5;
        char *end;
        long pid = strtol(digits, &end, 10);
        if (*digits == '\0' || *end != '\0' || pid <= 0)
            continue;
        size_t stem = (size_t)(tmp - e->d_name);
        bool json = stem > 5 && strncmp(tmp - 5, ".json", 5) == 0;
        bool same = stem == base_len && strncmp(e->d_name, base, base_len) == 0;
        if ((!json && !same) || !mb_owner_gone(pid))
            continue;
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (unlink(full) == 0)
            fprintf(stderr, "mlbench: removed %s, a stale temporary results file of mlbench process %ld "
                            "(no longer running)\n",
                    full, pid);
    }
    closedir(d);
}

/* ---- the journal --------------------------------------------------------- */

static int journal_write(mb_journal *j, bool exclusive, mb_err *err)
{
    char *text = cJSON_Print(j->doc);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory serialising results");
    size_t len = strlen(text);
    char *with_nl = realloc(text, len + 2);
    if (with_nl == NULL) {
        free(text);
        return mb_errf(err, MB_ESYS, "out of memory serialising results");
    }
    with_nl[len] = '\n';
    with_nl[len + 1] = '\0';
    int rc = exclusive ? mb_write_file_new(j->path, with_nl, err)
                       : mb_write_file_atomic(j->path, with_nl, err);
    free(with_nl);
    if (rc == MB_OK)
        j->written = true;
    else if (err && !(exclusive && errno == EEXIST)) {
        /* Say which results file could not be saved, not only its temporary. */
        char why[MB_ERR_LEN];
        snprintf(why, sizeof why, "%s", err->msg);
        err->code = MB_OK; /* the first error wins in mb_errf: this one replaces it */
        mb_errf(err, rc, "cannot save the results to %s: %.900s", j->path, why);
    }
    return rc;
}

static cJSON *statistics_json(void);

static int journal_open(mb_journal *j, const char *path, const char *suite, int argc, char **argv,
                        cJSON *context, bool exclusive, mb_err *err)
{
    memset(j, 0, sizeof *j);
    j->path = strdup(path);
    j->doc = cJSON_CreateObject();
    cJSON *d = j->doc;
    char now[32];
    mb_utc_now(now, sizeof now);
    cJSON_AddStringToObject(d, "schema", MB_RESULTS_SCHEMA);
    cJSON_AddNumberToObject(d, "schema_version", MB_RESULTS_SCHEMA_VERSION);
    cJSON *mb = cJSON_AddObjectToObject(d, "mlbench");
    cJSON_AddStringToObject(mb, "version", MB_VERSION);
    cJSON_AddStringToObject(mb, "git", MB_GIT_REVISION);
    cJSON_AddStringToObject(d, "status", "running");
    cJSON_AddStringToObject(d, "suite", suite ? suite : "");
    cJSON *cl = cJSON_AddArrayToObject(d, "command_line");
    for (int i = 0; i < argc; i++)
        cJSON_AddItemToArray(cl, cJSON_CreateString(argv[i]));
    cJSON_AddStringToObject(d, "started_utc", now);
    cJSON_AddNullToObject(d, "finished_utc");
    cJSON_AddItemToObject(d, "statistics", statistics_json());
    cJSON_AddItemToObject(d, "context", context ? context : cJSON_CreateObject());
    cJSON_AddArrayToObject(d, "cases");
    return journal_write(j, exclusive, err);
}

/* How to read every case's numbers (the file's "statistics"). */
static cJSON *statistics_json(void)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "ceiling", "one per case (case.ceiling): the sustained phase's rate for compute "
                                           "cases, else the median of the per-repetition rates");
    cJSON_AddStringToObject(st, "median", "median of the per-repetition rates (rate.median)");
    cJSON_AddStringToObject(st, "best", "maximum of the per-repetition rates (peak seen)");
    cJSON_AddStringToObject(st, "cv", "sample standard deviation / mean of the per-repetition rates");
    cJSON_AddStringToObject(st, "noisy", "an ok case whose cv exceeds its max_cv, or whose median, burst and "
                                         "sustained rates disagree by more than max(3 x cv, 5%): not a reliable "
                                         "ceiling; a compute case with sustained.sub_windows is judged on them "
                                         "(sub_cv) instead of the repetitions");
    return st;
}

int mb_journal_append(mb_journal *j, cJSON *case_json, mb_err *err)
{
    cJSON_AddItemToArray(cJSON_GetObjectItem(j->doc, "cases"), case_json);
    return journal_write(j, false, err);
}

int mb_journal_finish(mb_journal *j, mb_err *err)
{
    char now[32];
    mb_utc_now(now, sizeof now);
    cJSON_ReplaceItemInObject(j->doc, "status", cJSON_CreateString("complete"));
    cJSON_ReplaceItemInObject(j->doc, "finished_utc", cJSON_CreateString(now));
    return journal_write(j, false, err);
}

void mb_journal_close(mb_journal *j)
{
    cJSON_Delete(j->doc);
    free(j->path);
    memset(j, 0, sizeof *j);
}

int mb_journal_open(mb_journal *j, const char *path, const char *suite, int argc, char **argv,
                    cJSON *context, mb_err *err)
{
    sweep_stale_temps(path);
    return journal_open(j, path, suite, argc, argv, context, false, err);
}

static void default_name(char *buf, size_t len, const char *stamp, int i)
{
    if (i < 2)
        snprintf(buf, len, "results/%s-%s.json", mb_hostname(), stamp);
    else
        snprintf(buf, len, "results/%s-%s-%d.json", mb_hostname(), stamp, i);
}

int mb_journal_open_default(mb_journal *j, const char *suite, int argc, char **argv, cJSON *context,
                            mb_err *err)
{
    memset(j, 0, sizeof *j);
    if (mkdir("results", 0755) != 0 && errno != EEXIST) {
        cJSON_Delete(context);
        return mb_errno(err, MB_ESYS, "cannot create results/ in the current directory");
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32], path[PATH_MAX];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    default_name(path, sizeof path, stamp, 1);
    sweep_stale_temps(path);
    /* The first write links the file into place and fails on an existing
     * name, so checking and creating are one step: two runs started in the
     * same second get two files (a check with access() then a rename would
     * let the second overwrite the first). */
    int rc = journal_open(j, path, suite, argc, argv, context, true, err);
    for (int i = 2; rc != MB_OK && errno == EEXIST && i < 1000; i++) {
        if (err) /* the first error wins in mb_errf: forget the taken name */
            *err = (mb_err){ 0 };
        default_name(path, sizeof path, stamp, i);
        free(j->path);
        j->path = strdup(path);
        rc = journal_write(j, true, err);
    }
    return rc;
}

/* The largest results file read (report, compare, --baseline, gap --ceilings). */
#define MB_RESULTS_MAX_BYTES (256 << 20)

static char *read_whole(const char *path, mb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        mb_errno(err, MB_EUSAGE, "cannot open %s", path);
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > MB_RESULTS_MAX_BYTES) {
        fclose(f);
        mb_errf(err, MB_EUSAGE, "%s: larger than %d MiB: not a results file (a suite of thousands of cases "
                "is a few MB)", path, MB_RESULTS_MAX_BYTES >> 20);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len > MB_RESULTS_MAX_BYTES) {
            /* cJSON holds ~10x the text in nodes: a bound on the file is a
             * bound on memory. */
            fclose(f);
            free(buf);
            mb_errf(err, MB_EUSAGE, "%s: larger than %d MiB: not a results file (a suite of thousands of cases "
                    "is a few MB)", path, MB_RESULTS_MAX_BYTES >> 20);
            return NULL;
        }
        if (cap - len < 2) {
            char *b = realloc(buf, cap *= 2);
            if (b == NULL) {
                free(buf);
                buf = NULL;
            } else {
                buf = b;
            }
        }
    }
    fclose(f);
    if (buf == NULL)
        mb_errf(err, MB_ESYS, "out of memory reading %s", path);
    else
        buf[len] = '\0';
    return buf;
}

/* Line and column of a byte offset, for parse errors. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Replaces o.key's text by the integer dtype's unit where it differs. */
static void retype_unit(cJSON *o, const char *key, const char *dtype)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        return;
    char buf[64];
    const char *u = mb_rate_unit_for_dtype(v->valuestring, dtype, buf, sizeof buf);
    if (u != v->valuestring)
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateString(u));
}

/* Files written before int8 had its own unit say "TFLOP/s" for integer
 * operations: every reader shows them as OP/s, like new files. */
static void int_units_of_old_files(cJSON *doc)
{
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "params"), "dtype");
        if (!cJSON_IsObject(c) || !cJSON_IsString(d))
            continue;
        retype_unit(c, "rate_unit", d->valuestring);
        cJSON *ce = cJSON_GetObjectItemCaseSensitive(c, "ceiling");
        if (cJSON_IsObject(ce))
            retype_unit(ce, "unit", d->valuestring);
        /* the old kernels' note told the reader to do that conversion: now done, it says the unit */
        cJSON *n;
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(c, "notes"))
        {
            static const char OLD[] = "; read TFLOP/s as TOPS";
            char *at = cJSON_IsString(n) ? strstr(n->valuestring, OLD) : NULL;
            if (at && at[sizeof OLD - 1] == '\0') /* at its end; the new text is shorter: in place */
                strcpy(at, ", in TOP/s");
        }
    }
}

int mb_results_load(const char *path, cJSON **out, mb_err *err)
{
    *out = NULL;
    char *text = read_whole(path, err);
    if (text == NULL)
        return err ? err->code : MB_EUSAGE;
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithOpts(text, &end, 1);
    if (doc == NULL) {
        int line, col;
        size_t off = end ? (size_t)(end - text) : 0;
        line_col(text, off, &line, &col);
        bool deep = mb_json_depth_at(text, off) >= CJSON_NESTING_LIMIT;
        free(text);
        if (deep)
            return mb_errf(err, MB_EUSAGE, "%s:%d:%d: JSON nested deeper than %d levels (not a results file)", path,
                           line, col, CJSON_NESTING_LIMIT);
        return mb_errf(err, MB_EUSAGE, "%s:%d:%d: not valid JSON (truncated or malformed results file)", path,
                       line, col);
    }
    free(text);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "schema_version");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, MB_RESULTS_SCHEMA) != 0) {
        cJSON_Delete(doc);
        return mb_errf(err, MB_EUSAGE, "%s: $.schema: expected \"%s\" (not an mlbench results file)", path,
                       MB_RESULTS_SCHEMA);
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != (double)ver->valueint ||
        ver->valueint < MB_RESULTS_SCHEMA_VERSION_MIN || ver->valueint > MB_RESULTS_SCHEMA_VERSION) {
        char found[32];
        if (cJSON_IsNumber(ver))
            snprintf(found, sizeof found, "%g", ver->valuedouble);
        else
            snprintf(found, sizeof found, "none");
        cJSON_Delete(doc);
        return mb_errf(err, MB_EUSAGE, "%s: $.schema_version: expected %d to %d, found %s", path,
                       MB_RESULTS_SCHEMA_VERSION_MIN, MB_RESULTS_SCHEMA_VERSION, found);
    }
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "cases"))) {
        cJSON_Delete(doc);
        return mb_errf(err, MB_EUSAGE, "%s: $.cases: expected an array", path);
    }
    int_units_of_old_files(doc);
    *out = doc;
    return MB_OK;
}

const cJSON *mb_results_benchmark_gpu(const cJSON *context)
{
    const cJSON *g, *pick = NULL;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(context, "gpus"))
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "benchmark_device")))
            return g;
        if (pick == NULL)
            pick = g;
    }
    return pick;
}

bool mb_results_unfinished(const cJSON *doc, char *what, size_t len)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(doc, "status");
    if (!cJSON_IsString(status) || strcmp(status->valuestring, "complete") == 0)
        return false;
    snprintf(what, len, "the run did not finish (status \"%s\"): it holds the %d cases that finished before it stopped",
             status->valuestring, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "cases")));
    return true;
}

/* ---- one ceiling per case ------------------------------------------------- */

static const cJSON *item(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double number_at(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *text_at(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool text_is(const cJSON *o, const char *k, const char *want)
{
    const char *v = text_at(o, k);
    return v && strcmp(v, want) == 0;
}

/* A schema 1 file has no "ceiling": the rule of mb_record_ceiling on its numbers. */
static void derive_ceiling(const cJSON *c, mb_ceiling *out)
{
    if (!text_is(c, "status", "ok"))
        return;
    double sustained = number_at(item(c, "sustained"), "rate");
    if (measured(sustained)) {
        out->value = sustained;
        out->source = "sustained";
        return;
    }
    double median = number_at(item(c, "rate"), "median");
    if (measured(median))
        out->value = median;
}

/* The max_cv a case was judged by: absent (files from before the key) is
 * the default, null is "no check". */
static double max_cv_of(const cJSON *c)
{
    const cJSON *m = item(c, "max_cv");
    if (m == NULL)
        return MB_DEFAULT_MAX_CV;
    return cJSON_IsNumber(m) ? m->valuedouble : 0;
}

static void judge_case(const cJSON *c, mb_ceiling *out)
{
    if (!text_is(c, "status", "ok"))
        return;
    const cJSON *reps = item(c, "repetitions");
    double subs = number_at(item(c, "sustained"), "sub_windows"); /* NAN in files from before the sub-windows */
    mb_noise_in in = { .cv = number_at(item(c, "rate"), "cv"),
                       .max_cv = max_cv_of(c),
                       .repetitions = cJSON_IsNumber(reps) ? reps->valueint : 0,
                       .median = number_at(item(c, "rate"), "median"),
                       .burst = number_at(item(c, "burst"), "rate"),
                       .sustained = number_at(item(c, "sustained"), "rate"),
                       .sustained_cv = number_at(item(c, "sustained"), "sub_cv"),
                       .sustained_windows = subs >= 0 && subs <= 1e6 ? (int)subs : 0 };
    out->noisy = mb_noise_judge(&in, out->why, sizeof out->why);
    if (out->noisy || !cJSON_IsTrue(item(c, "noisy")))
        return;
    /* flagged by the run on numbers this file no longer holds in full */
    out->noisy = true;
    const cJSON *n;
    cJSON_ArrayForEach(n, item(c, "notes"))
    {
        if (cJSON_IsString(n) && strncmp(n->valuestring, "noisy:", 6) == 0) {
            snprintf(out->why, sizeof out->why, "%s", n->valuestring);
            return;
        }
    }
    snprintf(out->why, sizeof out->why, "noisy: flagged so by the run");
}

bool mb_case_ceiling(const cJSON *c, mb_ceiling *out)
{
    memset(out, 0, sizeof *out);
    out->value = NAN;
    out->efficiency = NAN;
    out->source = "median";
    const char *unit = text_at(c, "rate_unit");
    out->unit = unit ? unit : "";
    const cJSON *ce = item(c, "ceiling");
    if (cJSON_IsObject(ce)) {
        double v = number_at(ce, "value");
        out->value = measured(v) ? v : NAN;
        if (text_is(ce, "source", "sustained") || text_is(ce, "source", "burst"))
            out->source = text_at(ce, "source");
    } else if (ce == NULL) {
        derive_ceiling(c, out);
    }
    double peak = number_at(item(c, "peak"), "value");
    if (measured(out->value) && measured(peak))
        out->efficiency = out->value / peak;
    judge_case(c, out);
    return isfinite(out->value);
}

const char *mb_case_state(const cJSON *c)
{
    const char *status = text_at(c, "status");
    if (status == NULL)
        return "?";
    if (strcmp(status, "ok") != 0)
        return status;
    const char *ver = text_at(item(c, "verification"), "status");
    if (ver && strcmp(ver, "failed") == 0)
        return "failed";
    if (ver == NULL || strcmp(ver, "passed") != 0)
        return "not verified";
    mb_ceiling ce;
    mb_case_ceiling(c, &ce);
    return ce.noisy ? "noisy" : "ok";
}

/* Sets o.key to v (null when not finite), replacing what was there. */
static void set_number(cJSON *o, const char *key, double v)
{
    cJSON *x = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    if (cJSON_HasObjectItem(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, x);
    else
        cJSON_AddItemToObject(o, key, x);
}

static void upgrade_case(cJSON *c)
{
    mb_ceiling ce;
    mb_case_ceiling(c, &ce);
    if (!cJSON_HasObjectItem(c, "ceiling")) {
        if (isfinite(ce.value)) {
            cJSON *o = cJSON_AddObjectToObject(c, "ceiling");
            cJSON_AddNumberToObject(o, "value", ce.value);
            cJSON_AddStringToObject(o, "unit", ce.unit);
            cJSON_AddStringToObject(o, "source", ce.source);
        } else {
            cJSON_AddNullToObject(c, "ceiling");
        }
    }
    set_number(c, "efficiency", ce.efficiency);
    if (cJSON_HasObjectItem(c, "noisy"))
        cJSON_ReplaceItemInObjectCaseSensitive(c, "noisy", cJSON_CreateBool(ce.noisy));
    else
        cJSON_AddBoolToObject(c, "noisy", ce.noisy);
    cJSON *notes = cJSON_GetObjectItemCaseSensitive(c, "notes");
    bool noted = false;
    const cJSON *n;
    cJSON_ArrayForEach(n, notes)
        noted |= cJSON_IsString(n) && strncmp(n->valuestring, "noisy:", 6) == 0;
    if (ce.noisy && !noted && cJSON_IsArray(notes))
        cJSON_AddItemToArray(notes, cJSON_CreateString(ce.why));
}

cJSON *mb_results_current(const cJSON *doc)
{
    cJSON *d = cJSON_Duplicate(doc, 1);
    if (d == NULL)
        return NULL;
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(d, "cases"))
        if (cJSON_IsObject(c))
            upgrade_case(c);
    set_number(d, "schema_version", MB_RESULTS_SCHEMA_VERSION);
    /* the statistics block says how this version's numbers read */
    if (cJSON_HasObjectItem(d, "statistics"))
        cJSON_ReplaceItemInObjectCaseSensitive(d, "statistics", statistics_json());
    return d;
}
