/* Core harness: parameters, the runner through a fake ops table, records,
 * the journal and the writers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "context.h"
#include "params.h"
#include "results.h"
#include "runner.h"
#include "suite.h"
#include "results_writers.h"

/* ---- params ---------------------------------------------------------------- */

static const mb_param_spec SPEC[] = {
    { "block_size", MB_P_SIZE, "4k", NULL, 512, 1 << 30, "bytes per read" },
    { "qd", MB_P_INT, "1", NULL, 1, 1024, "queue depth" },
    { "mode", MB_P_ENUM, "direct", "direct|cached|mmap", 0, -1, "mode" },
    { "scale", MB_P_DOUBLE, "0.5", NULL, 0, 1, "scale" },
    { "verify", MB_P_BOOL, "true", NULL, 0, -1, "check" },
    { "label", MB_P_STRING, NULL, NULL, 0, -1, "required text" },
    MB_PARAM_END,
};

static void test_size_parsing(void **s)
{
    (void)s;
    long long v;
    assert_int_equal(mb_parse_size("4096", &v, NULL), MB_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(mb_parse_size("4k", &v, NULL), MB_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(mb_parse_size("64K", &v, NULL), MB_OK);
    assert_int_equal(v, 65536);
    assert_int_equal(mb_parse_size("1m", &v, NULL), MB_OK);
    assert_int_equal(v, 1048576);
    assert_int_equal(mb_parse_size("1GiB", &v, NULL), MB_OK);
    assert_int_equal(v, 1073741824LL);
    assert_int_equal(mb_parse_size("1.5k", &v, NULL), MB_OK);
    assert_int_equal(v, 1536);
    mb_err e = { 0 };
    assert_int_equal(mb_parse_size("-4k", &v, &e), MB_EUSAGE);
    assert_non_null(strstr(e.msg, "-4k"));
    assert_int_equal(mb_parse_size("4q", &v, NULL), MB_EUSAGE);
    assert_int_equal(mb_parse_size("0.3", &v, NULL), MB_EUSAGE);
    assert_int_equal(mb_parse_size("", &v, NULL), MB_EUSAGE);
}

static void test_params_build(void **s)
{
    (void)s;
    const char *names[] = { "block_size", "mode", "label" };
    const char *values[] = { "1m", "cached", "x" };
    mb_err e = { 0 };
    mb_params *p = mb_params_build(SPEC, names, values, 3, &e);
    assert_non_null(p);
    assert_int_equal(mb_param_int(p, "block_size"), 1048576);
    assert_string_equal(mb_param_str(p, "block_size"), "1048576"); /* normalised */
    assert_int_equal(mb_param_int(p, "qd"), 1);                     /* default */
    assert_false(mb_param_is_set(p, "qd"));
    assert_true(mb_param_is_set(p, "mode"));
    assert_string_equal(mb_param_str(p, "mode"), "cached");
    assert_true(mb_param_double(p, "scale") == 0.5);
    assert_true(mb_param_bool(p, "verify"));
    char *key = mb_params_key(p);
    assert_string_equal(key, "block_size=1048576,label=x,mode=cached,qd=1,scale=0.5,verify=true");
    free(key);
    mb_params *q = mb_params_clone(p);
    assert_int_equal(mb_param_int(q, "block_size"), 1048576);
    mb_params_free(q);
    mb_params_free(p);
}

static void expect_param_error(const char *name, const char *value, const char *fragment)
{
    const char *names[] = { name, "label" };
    const char *values[] = { value, "x" };
    mb_err e = { 0 };
    mb_params *p = mb_params_build(SPEC, names, values, strcmp(name, "label") ? 2 : 1, &e);
    assert_null(p);
    assert_int_equal(e.code, MB_EUSAGE);
    if (strstr(e.msg, fragment) == NULL)
        fail_msg("message '%s' lacks '%s'", e.msg, fragment);
}

static void test_params_errors(void **s)
{
    (void)s;
    expect_param_error("qd", "0", "out of range");
    expect_param_error("qd", "x1", "not an integer");
    expect_param_error("mode", "turbo", "not one of direct|cached|mmap");
    expect_param_error("scale", "nan", "not a number");
    expect_param_error("verify", "maybe", "not a boolean");
    expect_param_error("block_size", "256", "out of range");
    expect_param_error("colour", "red", "unknown parameter 'colour'");
    mb_err e = { 0 };
    assert_null(mb_params_build(SPEC, NULL, NULL, 0, &e));
    assert_non_null(strstr(e.msg, "label is required"));
}

/* ---- a fake component for the runner ----------------------------------------- */

typedef struct fake {
    int runs;
    double seconds;
    int fail_run_at;  /* run() fails on this call (0 = never) */
    int verify_rc;
    int runs_at_timing_start; /* -1 until timing_start is called */
    int setup_rc;             /* setup() fails with this code (MB_OK = succeeds) */
    bool setup_sets_state;    /* a failing setup() has already handed out its state */
    bool work_given;          /* work_per_iter returns `work` (else 2e9) */
    double work;
    int tiny_from_run;        /* from this run() on, a subnormal time (0 = never) */
} fake;

static fake g_fake;
static int fake_probe_rc;

/* What the runner called, for the lifecycle contract (harness/api/component.h:
 * teardown "always, also after errors"): counted across one mb_run_case. */
typedef struct fake_calls {
    int setups, teardowns, reports;
    void *torn_down;          /* the state teardown() was given */
    bool used_after_teardown; /* run, work, verify or report on a torn-down state */
    bool report_saw_state;    /* report() was given setup's state */
} fake_calls;

static fake_calls g_calls;

/* Live between a setup() and its teardown(). */
static void note_use(void *state)
{
    (void)state;
    if (g_calls.teardowns >= g_calls.setups)
        g_calls.used_after_teardown = true;
}

static int fake_probe(const mb_params *p, mb_err *why)
{
    (void)p;
    return fake_probe_rc == MB_OK ? MB_OK : mb_errf(why, fake_probe_rc, "fake device missing");
}
static int fake_setup(const mb_params *p, void **state, mb_err *err)
{
    (void)p;
    g_calls.setups++;
    g_fake.runs = 0;
    if (g_fake.setup_rc != MB_OK) {
        if (g_fake.setup_sets_state)
            *state = &g_fake; /* as a setup that fails after allocating */
        return mb_errf(err, g_fake.setup_rc, "fake setup failed: 3 GiB do not fit");
    }
    *state = &g_fake;
    return MB_OK;
}
static int fake_run(void *state, double *seconds, mb_err *err)
{
    fake *f = state;
    note_use(state);
    f->runs++;
    if (f->fail_run_at && f->runs >= f->fail_run_at)
        return mb_errf(err, MB_EFAIL, "fake failure at run %d", f->runs);
    /* Alternate to give a known spread: every iteration takes `seconds`. */
    *seconds = f->tiny_from_run && f->runs >= f->tiny_from_run ? 1e-320 : f->seconds;
    return MB_OK;
}
static double fake_work(void *state)
{
    fake *f = state;
    note_use(state);
    return f->work_given ? f->work : 2e9; /* bytes per iteration */
}
static int fake_verify(void *state, mb_err *err)
{
    fake *f = state;
    note_use(state);
    return f->verify_rc == MB_OK ? MB_OK : mb_errf(err, f->verify_rc, "byte 17 differs");
}
static void fake_report(void *state, mb_report *r)
{
    note_use(state);
    g_calls.reports++;
    g_calls.report_saw_state = state == &g_fake;
    mb_report_metric(r, "latency_p99", 12.5, "us");
    mb_report_info(r, "algorithm", "fake-algo");
    mb_report_peak(r, 4.0, "fake datasheet");
}
static void fake_timing_start(void *state)
{
    fake *f = state;
    f->runs_at_timing_start = f->runs;
}
static void fake_teardown(void *state)
{
    g_calls.teardowns++;
    g_calls.torn_down = state;
}

static const mb_param_spec FAKE_SPEC[] = { { "n", MB_P_INT, "1", NULL, 1, 10, "n" }, MB_PARAM_END };
static const mb_component_ops FAKE_OPS = {
    .component = "fake", .backend = "test", .summary = "fake", .work_unit = "byte", .rate_unit = "GB/s",
    .rate_scale = 1e9, .params = FAKE_SPEC, .probe = fake_probe, .setup = fake_setup, .run = fake_run,
    .work_per_iter = fake_work, .verify = fake_verify, .report = fake_report, .teardown = fake_teardown,
    .timing_start = fake_timing_start,
};

static mb_case make_case(void)
{
    mb_case c = { 0 };
    c.ops = &FAKE_OPS;
    c.params = mb_params_build(FAKE_SPEC, NULL, NULL, 0, NULL);
    c.id = strdup("fake/test/n=1");
    c.section = strdup("fake");
    c.file = strdup("t.ini");
    c.repetitions = 3;
    c.min_time = 0.01;
    c.warmup_time = 0;
    return c;
}

static void free_case(mb_case *c)
{
    mb_params_free(c->params);
    free(c->id);
    free(c->section);
    free(c->file);
}

static const mb_runner_opts OPTS = { .warmup_time = -1, .quiet = true };

/* One case through the runner, the lifecycle calls counted from zero. */
static void run_fake(const mb_case *c, mb_record *r)
{
    memset(&g_calls, 0, sizeof g_calls);
    mb_run_case(c, &OPTS, r);
}

/* setups setup() calls, each followed by exactly one teardown(), which was
 * given `state`; nothing used the state after it. */
static void expect_torn_down(int setups, void *state)
{
    if (g_calls.setups != setups || g_calls.teardowns != setups)
        fail_msg("%d setup(), %d teardown(): wanted %d of each", g_calls.setups, g_calls.teardowns, setups);
    if (setups)
        assert_ptr_equal(g_calls.torn_down, state);
    assert_false(g_calls.used_after_teardown);
}

static void test_runner_ok(void **s)
{
    (void)s;
    memset(&g_fake, 0, sizeof g_fake);
    fake_probe_rc = MB_OK;
    g_fake.seconds = 0.001; /* 2e9 B per ms = 2000 GB/s */
    g_fake.runs_at_timing_start = -1;
    mb_case c = make_case();
    c.warmup_time = 0.005;
    mb_record r;
    run_fake(&c, &r);
    assert_int_equal(r.status, MB_CASE_OK);
    expect_torn_down(1, &g_fake);
    assert_int_equal(g_calls.reports, 1);
    assert_true(g_calls.report_saw_state);
    assert_int_equal(r.repetitions, 3);
    /* timing_start came after the warm-up and before the timed iterations. */
    assert_true(g_fake.runs_at_timing_start >= 5);
    assert_true(g_fake.runs > g_fake.runs_at_timing_start + 30);
    assert_int_equal(r.verify, MB_VERIFY_PASSED);
    mb_stats st;
    assert_true(mb_record_stats(&r, &st));
    assert_true(fabs(st.rate_median - 2000.0) < 1e-6);
    assert_true(fabs(st.spi_median - 0.001) < 1e-12);
    assert_true(st.rate_cv < 1e-9);
    /* min_time 0.01 s of 1 ms iterations: Google Benchmark ran >= 10 each. */
    assert_true(r.rep_iterations[0] >= 10);
    cJSON *j = mb_record_to_json(&r);
    assert_string_equal(cJSON_GetObjectItem(j, "status")->valuestring, "ok");
    assert_true(fabs(cJSON_GetObjectItem(j, "efficiency")->valuedouble - 500.0) < 1e-6);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "info"), "algorithm")->valuestring,
                        "fake-algo");
    cJSON_Delete(j);
    mb_record_free(&r);
    free_case(&c);
}

static void test_runner_skip_fail_verify(void **s)
{
    (void)s;
    mb_case c = make_case();
    mb_record r;
    /* probe says no device: skipped with the reason */
    memset(&g_fake, 0, sizeof g_fake);
    g_fake.seconds = 0.001;
    fake_probe_rc = MB_ESKIP;
    run_fake(&c, &r);
    assert_int_equal(r.status, MB_CASE_SKIPPED);
    assert_string_equal(r.reason, "fake device missing");
    expect_torn_down(0, NULL); /* no setup, so nothing to tear down */
    mb_record_free(&r);
    /* a run error mid-way: failed with the component's message */
    fake_probe_rc = MB_OK;
    g_fake.fail_run_at = 5;
    run_fake(&c, &r);
    assert_int_equal(r.status, MB_CASE_FAILED);
    assert_non_null(strstr(r.reason, "fake failure"));
    expect_torn_down(1, &g_fake);
    mb_record_free(&r);
    /* wrong output: failed, numbers kept, verification failed */
    g_fake.fail_run_at = 0;
    g_fake.verify_rc = MB_EVERIFY;
    run_fake(&c, &r);
    assert_int_equal(r.status, MB_CASE_FAILED);
    expect_torn_down(1, &g_fake);
    assert_int_equal(g_calls.reports, 1);
    assert_int_equal(r.verify, MB_VERIFY_FAILED);
    assert_non_null(strstr(r.reason, "verification failed: byte 17 differs"));
    mb_record_free(&r);
    free_case(&c);
}

/* Every number of a results case is finite: JSON has no inf or nan, and a
 * reader must never meet one (harness/results.c writes null instead). */
static void expect_finite_numbers(const cJSON *j)
{
    const cJSON *it;
    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
        fail_msg("%s is %g", j->string ? j->string : "(item)", j->valuedouble);
    cJSON_ArrayForEach(it, j)
        expect_finite_numbers(it);
}

static const cJSON *json_at(const cJSON *o, const char *key, const char *sub)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return sub && cJSON_IsObject(v) ? cJSON_GetObjectItem(v, sub) : v;
}

/* The fake as every runner test starts it: ok, 1 ms per iteration. */
static void fake_reset(void)
{
    memset(&g_fake, 0, sizeof g_fake);
    g_fake.seconds = 0.001;
    g_fake.runs_at_timing_start = -1;
    fake_probe_rc = MB_OK;
}

/* The lifecycle contract on every path: setup() is called only after a
 * probe that passed; then teardown() exactly once, given whatever state
 * setup() handed out (NULL when a failing setup handed out none), whether the
 * case passed, failed or was skipped, and after report(). */
static void test_runner_teardown_every_path(void **s)
{
    (void)s;
    enum { OK = MB_CASE_OK, SKIP = MB_CASE_SKIPPED, FAIL = MB_CASE_FAILED };
    struct {
        const char *path;
        int probe_rc, setup_rc;
        bool setup_sets_state;
        int fail_run_at, verify_rc;
        double seconds;
        bool no_work; /* work_per_iter returns 0 (else the fake's 2e9) */
        int status, setups, reports;
        bool state_given; /* teardown() gets &g_fake (else NULL) */
    } k[] = {
        { "ok", MB_OK, MB_OK, false, 0, MB_OK, 0.001, false, OK, 1, 1, true },
        { "verification fails", MB_OK, MB_OK, false, 0, MB_EVERIFY, 0.001, false, FAIL, 1, 1, true },
        { "no check possible", MB_OK, MB_OK, false, 0, MB_ESKIP, 0.001, false, OK, 1, 1, true },
        { "run() fails in the warm-up", MB_OK, MB_OK, false, 1, MB_OK, 0.001, false, FAIL, 1, 1, true },
        { "run() fails while timed", MB_OK, MB_OK, false, 5, MB_OK, 0.001, false, FAIL, 1, 1, true },
        { "run() reports no time", MB_OK, MB_OK, false, 0, MB_OK, 0, false, FAIL, 1, 1, true },
        { "no work per iteration", MB_OK, MB_OK, false, 0, MB_OK, 0.001, true, FAIL, 1, 1, true },
        { "probe skips", MB_ESKIP, MB_OK, false, 0, MB_OK, 0.001, false, SKIP, 0, 0, false },
        { "probe fails", MB_EFAIL, MB_OK, false, 0, MB_OK, 0.001, false, FAIL, 0, 0, false },
        { "setup fails, no state", MB_OK, MB_ESYS, false, 0, MB_OK, 0.001, false, FAIL, 1, 0, false },
        { "setup fails after allocating", MB_OK, MB_ESYS, true, 0, MB_OK, 0.001, false, FAIL, 1, 0, true },
        { "setup skips", MB_OK, MB_ESKIP, false, 0, MB_OK, 0.001, false, SKIP, 1, 0, false },
        { "setup skips after allocating", MB_OK, MB_ESKIP, true, 0, MB_OK, 0.001, false, SKIP, 1, 0, true },
    };
    mb_case c = make_case();
    c.warmup_time = 0.002;
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        fake_reset();
        fake_probe_rc = k[i].probe_rc;
        g_fake.setup_rc = k[i].setup_rc;
        g_fake.setup_sets_state = k[i].setup_sets_state;
        g_fake.fail_run_at = k[i].fail_run_at;
        g_fake.verify_rc = k[i].verify_rc;
        g_fake.seconds = k[i].seconds;
        g_fake.work_given = k[i].no_work; /* with work 0 */
        mb_record r;
        run_fake(&c, &r);
        if ((int)r.status != k[i].status || g_calls.setups != k[i].setups ||
            g_calls.teardowns != k[i].setups || g_calls.reports != k[i].reports)
            fail_msg("%s: status %s (%s), %d setup, %d teardown, %d report; wanted %s, %d, %d, %d", k[i].path,
                     mb_case_status_name(r.status), r.reason, g_calls.setups, g_calls.teardowns, g_calls.reports,
                     mb_case_status_name((mb_case_status)k[i].status), k[i].setups, k[i].setups, k[i].reports);
        expect_torn_down(k[i].setups, k[i].state_given ? &g_fake : NULL);
        if (k[i].reports)
            assert_true(g_calls.report_saw_state);
        mb_record_free(&r);
    }
    free_case(&c);
}

/* A setup() that fails: the case is failed, or skipped when setup said
 * MB_ESKIP (dtype missing, does not fit), with setup's own message; nothing
 * ran and the results case carries no numbers. */
static void test_runner_setup_failure(void **s)
{
    (void)s;
    static const struct {
        int rc;
        mb_case_status status;
        const char *name;
    } k[] = { { MB_ESYS, MB_CASE_FAILED, "failed" },
              { MB_EFAIL, MB_CASE_FAILED, "failed" },
              { MB_EVERIFY, MB_CASE_FAILED, "failed" },
              { MB_ESKIP, MB_CASE_SKIPPED, "skipped" } };
    mb_case c = make_case();
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        fake_reset();
        g_fake.setup_rc = k[i].rc;
        mb_record r;
        run_fake(&c, &r);
        assert_int_equal(r.status, k[i].status);
        assert_string_equal(r.reason, "fake setup failed: 3 GiB do not fit");
        assert_int_equal(g_fake.runs, 0);
        assert_int_equal(r.repetitions, 0);
        assert_int_equal(r.verify, MB_VERIFY_NOT_RUN);
        cJSON *j = mb_record_to_json(&r);
        assert_string_equal(json_at(j, "status", NULL)->valuestring, k[i].name);
        assert_string_equal(json_at(j, "reason", NULL)->valuestring, "fake setup failed: 3 GiB do not fit");
        assert_true(cJSON_IsNull(json_at(j, "rate", NULL)));
        assert_true(cJSON_IsNull(json_at(j, "ceiling", NULL)));
        expect_finite_numbers(j);
        cJSON_Delete(j);
        mb_record_free(&r);
    }
    free_case(&c);
}

/* Runs the fake and expects a failed case whose reason holds `want`, no rate
 * in the results case, and no inf or nan anywhere in it. times_kept: the
 * repetitions were timed before the refusal, and their times stay. */
static void expect_refused(const mb_case *c, const char *want, bool times_kept)
{
    mb_record r;
    run_fake(c, &r);
    if (r.status != MB_CASE_FAILED || strstr(r.reason, want) == NULL)
        fail_msg("status %s, reason '%s': wanted failed with '%s'", mb_case_status_name(r.status), r.reason, want);
    expect_torn_down(1, &g_fake);
    assert_int_not_equal(r.verify, MB_VERIFY_PASSED); /* no verdict on numbers refused */
    cJSON *j = mb_record_to_json(&r);
    assert_string_equal(json_at(j, "status", NULL)->valuestring, "failed");
    const cJSON *rate = json_at(j, "rate", NULL);
    assert_true(cJSON_IsNull(rate) || cJSON_IsNull(json_at(j, "rate", "median")));
    assert_true(cJSON_IsNull(json_at(j, "ceiling", NULL)));
    assert_true(cJSON_IsNull(json_at(j, "efficiency", NULL)));
    if (times_kept) {
        assert_true(r.repetitions > 0);
        assert_true(cJSON_IsNull(json_at(j, "work_per_iteration", NULL)));
        assert_true(cJSON_IsNumber(json_at(j, "seconds_per_iteration", "median")));
    }
    expect_finite_numbers(j);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text); /* what a reader of the file gets */
    assert_non_null(back);
    expect_finite_numbers(back);
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(j);
    mb_record_free(&r);
}

/* run() must report a positive, finite time, and work_per_iter positive,
 * finite work: zero, negative, NaN and infinite values fail the case, saying
 * which with the value, and never divide. A refused work leaves no rate in
 * the results case (null, never 0 or a negative rate); the times are kept. */
static void test_runner_rejects_bad_numbers(void **s)
{
    (void)s;
    static const struct {
        bool work; /* the value is the work per iteration (else run()'s seconds) */
        double value;
        const char *want;
    } k[] = {
        { false, 0, "run() reported a non-positive time (0 s)" },
        { false, -0.001, "run() reported a non-positive time (-0.001 s)" },
        { false, -INFINITY, "run() reported a non-positive time (-inf s)" },
        { false, NAN, "run() reported a non-finite time (nan s)" },
        { false, INFINITY, "run() reported a non-finite time (inf s)" },
        { true, 0, "the component reported no work per iteration" },
        { true, -2e9, "the component reported -2e+09 byte per iteration: work must be positive and finite" },
        { true, NAN, "the component reported nan byte per iteration" },
        { true, INFINITY, "the component reported inf byte per iteration" },
    };
    mb_case c = make_case();
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        fake_reset();
        g_fake.work_given = k[i].work;
        if (k[i].work)
            g_fake.work = k[i].value;
        else
            g_fake.seconds = k[i].value;
        expect_refused(&c, k[i].want, k[i].work);
    }
    free_case(&c);
}

/* Finite, positive work and time can still make an infinite rate (a
 * subnormal time, or work near DBL_MAX): refused, not written as null for
 * an "ok" case. Fixed iterations: Google Benchmark would otherwise run
 * 1e9 of them to fill min_time with subnormal seconds. */
static void test_runner_rejects_infinite_rate(void **s)
{
    (void)s;
    mb_case c = make_case();
    c.iterations = 4;
    fake_reset();
    g_fake.seconds = 1e-320; /* 2e9 B / 1e-320 s overflows */
    expect_refused(&c, "the rate is not a positive finite number", true);
    fake_reset();
    g_fake.seconds = 1e-6;
    g_fake.work_given = true;
    g_fake.work = 1.7e308;
    expect_refused(&c, "the rate is not a positive finite number", true);
    /* One repetition of five infinite: the median is finite, still refused.
     * No warm-up here: run 1 is its one iteration, runs 18-21 the fifth. */
    fake_reset();
    c.repetitions = 5;
    g_fake.tiny_from_run = 18;
    expect_refused(&c, "the rate is not a positive finite number", true);
    assert_int_equal(g_fake.runs, 21);
    c.repetitions = 3;
    /* The same fixed iterations with sane numbers pass: the check is the rate. */
    fake_reset();
    g_fake.work_given = true;
    g_fake.work = 1e12;
    mb_record r;
    run_fake(&c, &r);
    assert_int_equal(r.status, MB_CASE_OK);
    mb_stats st;
    assert_true(mb_record_stats(&r, &st));
    assert_float_equal(st.rate_median, 1e12 / 0.001 / 1e9, 1e-6); /* 1e6 GB/s */
    assert_int_equal(r.rep_iterations[0], 4);
    mb_record_free(&r);
    free_case(&c);
}

/* ---- journal and writers ------------------------------------------------------- */

static void test_journal_and_writers(void **s)
{
    (void)s;
    char dir[] = "/tmp/mlbench-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/r.json", dir);
    mb_journal j;
    char *argv[] = { "mlbench", "--suite", "x" };
    mb_err e = { 0 };
    assert_int_equal(mb_journal_open(&j, path, "x", 3, argv, NULL, &e), MB_OK);
    cJSON *doc;
    /* A valid file exists before any case finished. */
    assert_int_equal(mb_results_load(path, &doc, &e), MB_OK);
    assert_string_equal(cJSON_GetObjectItem(doc, "status")->valuestring, "running");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "cases")), 0);
    cJSON_Delete(doc);

    memset(&g_fake, 0, sizeof g_fake);
    fake_probe_rc = MB_OK;
    g_fake.seconds = 0.002;
    mb_case c = make_case();
    mb_record r;
    mb_run_case(&c, &OPTS, &r);
    assert_int_equal(mb_journal_append(&j, mb_record_to_json(&r), &e), MB_OK);
    mb_record_free(&r);
    assert_int_equal(mb_results_load(path, &doc, &e), MB_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "cases")), 1);
    cJSON_Delete(doc);
    assert_int_equal(mb_journal_finish(&j, &e), MB_OK);

    /* Writers: every format mentions the case; csv has the rate 1000 GB/s. */
    const char *formats[] = { "table", "md", "csv", "json" };
    for (int i = 0; i < 4; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_int_equal(mb_write_results(f, j.doc, formats[i], &e), MB_OK);
        fclose(f);
        assert_non_null(strstr(buf, "fake"));
        if (i == 2)
            assert_non_null(strstr(buf, ",1000,"));
        if (i == 0)
            assert_non_null(strstr(buf, "1000 GB/s"));
        free(buf);
    }
    assert_int_equal(mb_write_results(stdout, j.doc, "xml", &e), MB_EUSAGE);

    char gb[256];
    snprintf(gb, sizeof gb, "%s/gb.json", dir);
    mb_err e2 = { 0 };
    assert_int_equal(mb_write_gbench_json(gb, j.doc, &e2), MB_OK);
    mb_journal_close(&j);
    free_case(&c);

    FILE *f = fopen(gb, "r");
    char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cJSON *g = cJSON_Parse(text);
    assert_non_null(g);
    cJSON *benches = cJSON_GetObjectItem(g, "benchmarks");
    assert_int_equal(cJSON_GetArraySize(benches), 3 + 4); /* repetitions + aggregates */
    cJSON *first = cJSON_GetArrayItem(benches, 0);
    assert_true(fabs(cJSON_GetObjectItem(first, "real_time")->valuedouble - 2e6) < 1e-3); /* 2 ms in ns */
    assert_string_equal(cJSON_GetObjectItem(first, "time_unit")->valuestring, "ns");
    cJSON_Delete(g);
    unlink(gb);
    unlink(path);
    rmdir(dir);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Known answers for the noisy flag: rates 1 and 0.5 (work 1 per iteration,
 * 1 s and 2 s) have mean 0.75, sample stddev sqrt(0.125) = 0.35355 and cv
 * 0.47140; equal rates have cv 0. */
static void test_noisy_flag(void **s)
{
    (void)s;
    mb_case c = make_case();
    mb_record r;
    struct { double sec[3]; int n; double max_cv; bool noisy; } k[] = {
        { { 1, 2 }, 2, 0.10, true },     /* cv 0.4714 > 10% */
        { { 1, 2 }, 2, 0.48, false },    /* cv 0.4714 <= 48% */
        { { 1, 2 }, 2, 0.47, true },     /* just above */
        { { 1, 1, 1 }, 3, 0.10, false }, /* cv 0 */
        { { 1 }, 1, 0.10, false },       /* one repetition: no cv */
        { { 1, 2 }, 2, 0, false },       /* max_cv 0: no check */
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        c.max_cv = k[i].max_cv;
        mb_record_init(&r, &c);
        r.status = MB_CASE_OK;
        r.work_per_iter = 1;
        for (int j = 0; j < k[i].n; j++)
            assert_int_equal(mb_record_add_repetition(&r, 1, k[i].sec[j]), MB_OK);
        mb_stats st;
        assert_true(mb_record_stats(&r, &st));
        if (k[i].n == 2)
            assert_float_equal(st.rate_cv, 0.4714045, 1e-6);
        assert_int_equal(mb_record_check_noise(&r), k[i].noisy);
        cJSON *j = mb_record_to_json(&r);
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(j, "noisy")), k[i].noisy);
        assert_int_equal(r.report.n_notes, k[i].noisy ? 1 : 0);
        if (k[i].noisy)
            assert_non_null(strstr(r.report.notes[0], "noisy: cv 47.1% > max_cv"));
        cJSON_Delete(j);
        mb_record_free(&r);
    }
    /* A failed case is never flagged: it has no ceiling to doubt. */
    c.max_cv = 0.1;
    mb_record_init(&r, &c);
    r.status = MB_CASE_FAILED;
    r.work_per_iter = 1;
    mb_record_add_repetition(&r, 1, 1);
    mb_record_add_repetition(&r, 1, 2);
    assert_false(mb_record_check_noise(&r));
    mb_record_free(&r);
    free_case(&c);
}

/* Two runs opening the default results name at once get two files: the
 * name is claimed by the first write (link), not checked then renamed over. */
static void test_default_results_unique(void **s)
{
    (void)s;
    char dir[] = "/tmp/mlbench-test-XXXXXX", cwd[4096];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    char *argv[] = { "mlbench" };
    mb_journal a, b;
    mb_err e = { 0 };
    assert_int_equal(mb_journal_open_default(&a, "x", 1, argv, NULL, &e), MB_OK);
    assert_int_equal(mb_journal_open_default(&b, "x", 1, argv, NULL, &e), MB_OK);
    assert_string_not_equal(a.path, b.path);
    size_t la = strlen(a.path);
    /* Same second: the second run took the "-2" name. */
    if (strncmp(a.path, b.path, la - 5) == 0)
        assert_string_equal(b.path + la - 5, "-2.json");
    cJSON *doc;
    assert_int_equal(mb_results_load(a.path, &doc, &e), MB_OK);
    cJSON_Delete(doc);
    assert_int_equal(mb_results_load(b.path, &doc, &e), MB_OK);
    cJSON_Delete(doc);
    unlink(a.path);
    unlink(b.path);
    mb_journal_close(&a);
    mb_journal_close(&b);
    rmdir("results");
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_results_load_errors(void **s)
{
    (void)s;
    char path[] = "/tmp/mlbench-res-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    cJSON *doc;
    mb_err e = { 0 };
    write_text(path, "{\"schema\": \"mlbench-results\", \"schema_version\": 1, \"cases\": [\n{\"id\": ");
    assert_int_equal(mb_results_load(path, &doc, &e), MB_EUSAGE);
    assert_non_null(strstr(e.msg, ":2:")); /* line of the truncation */
    mb_err_clear(&e);
    write_text(path, "{\"schema\": \"mlbench-results\", \"schema_version\": 7, \"cases\": []}");
    assert_int_equal(mb_results_load(path, &doc, &e), MB_EUSAGE);
    assert_non_null(strstr(e.msg, "schema_version"));
    mb_err_clear(&e);
    write_text(path, "{\"traceEvents\": []}");
    assert_int_equal(mb_results_load(path, &doc, &e), MB_EUSAGE);
    assert_non_null(strstr(e.msg, "not an mlbench results file"));
    unlink(path);
}

/* Job files that include themselves or each other, that multiply into
 * millions of cases or files, or with a line longer than the INI reader
 * holds: a clear error each, found before anything runs. */
static void expect_suite_error(const char *path, const char *want1, const char *want2)
{
    mb_suite s;
    mb_err e = { 0 };
    int rc = mb_suite_load_file(path, &s, &e);
    if (rc != MB_EUSAGE || !strstr(e.msg, want1) || (want2 && !strstr(e.msg, want2)))
        fail_msg("%s: rc %d, message '%s' (wanted '%s' %s)", path, rc, e.msg, want1, want2 ? want2 : "");
}

static void test_suite_hostile(void **s)
{
    (void)s;
    char dir[] = "/tmp/mlbench-suite-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[256], b[256], p[256];
    snprintf(a, sizeof a, "%s/a.ini", dir);
    snprintf(b, sizeof b, "%s/b.ini", dir);
    write_text(a, "[global]\ninclude = a.ini\n[h]\ncomponent = hostmem\nbackend = stream\n");
    expect_suite_error(a, "include cycle", "includes itself");
    write_text(a, "[global]\ninclude = b.ini\n");
    write_text(b, "[global]\ninclude = ./a.ini\n");
    expect_suite_error(a, "include cycle", "b.ini");
    /* no cycle, but 6 levels x 10 includes of the next file */
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/d%d.ini", dir, i);
        char body[256];
        snprintf(body, sizeof body, "[global]\ninclude = d%d.ini,d%d.ini,d%d.ini,d%d.ini,d%d.ini,d%d.ini,d%d.ini,"
                 "d%d.ini,d%d.ini,d%d.ini\n", i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1);
        write_text(p, body);
    }
    snprintf(p, sizeof p, "%s/d6.ini", dir);
    write_text(p, "[h]\ncomponent = hostmem\nbackend = stream\n");
    snprintf(p, sizeof p, "%s/d0.ini", dir);
    expect_suite_error(p, "more than 256 job files", NULL);
    /* lists multiplying to 3.2 million cases */
    write_text(a, "[d]\ncomponent = disk\nbackend = pread\n"
                  "seed = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30\n"
                  "ios_per_iter = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30\n"
                  "block_size = 1k,2k,3k,4k,5k,6k,7k,8k,9k,10k,11k,12k,13k,14k,15k,16k,17k,18k,19k,20k,21k,22k\n"
                  "file_size = 1m,2m,3m,4m,5m,6m,7m,8m,9m,10m,11m,12m,13m,14m,15m,16m,17m,18m,19m,20m\n"
                  "pattern = random, sequential\n");
    expect_suite_error(a, "cases; a suite holds at most", NULL);
    /* exactly the most cases a suite holds loads (4 keys of 10 values: lines
     * stay within the INI reader's 198 characters); one more list value is
     * refused */
    {
        assert_int_equal(10 * 10 * 10 * 10, MB_SUITE_MAX_CASES);
        char body[1024];
        snprintf(body, sizeof body, "[d]\ncomponent = disk\nbackend = pread\n"
                                    "seed = 1,2,3,4,5,6,7,8,9,10\nios_per_iter = 1,2,3,4,5,6,7,8,9,10\n"
                                    "block_size = 1k,2k,3k,4k,5k,6k,7k,8k,9k,10k\n"
                                    "file_size = 1m,2m,3m,4m,5m,6m,7m,8m,9m,10m\n");
        write_text(a, body);
        mb_suite big;
        mb_err e = { 0 };
        if (mb_suite_load_file(a, &big, &e) != MB_OK)
            fail_msg("%s", e.msg);
        assert_int_equal(big.n_cases, MB_SUITE_MAX_CASES);
        assert_true(big.cap_cases >= big.n_cases);
        for (int i = 0; i < big.n_cases; i++) /* every case is whole (the array grew by doubling) */
            assert_non_null(strstr(big.cases[i].id, "disk/pread"));
        mb_suite_free(&big);
        strcat(body, "pattern = random, sequential\n");
        write_text(a, body);
        expect_suite_error(a, "the lists give 20000 cases; a suite holds at most 10000", NULL);
    }
    /* a 300-character line: said, not parsed as two lines */
    char line[512];
    snprintf(line, sizeof line, "[h]\ncomponent = hostmem\nbackend = stream\ndescription = %0300d\n", 0);
    write_text(a, line);
    expect_suite_error(a, ":4: line longer than", NULL);
    /* a FIFO (or /dev/stdin) as an include would block the read forever */
    snprintf(p, sizeof p, "%s/fifo.ini", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    write_text(a, "[global]\ninclude = fifo.ini\n");
    expect_suite_error(a, "not a regular file", NULL);
    unlink(p);
    /* strtod reads "nan" and "inf": refused before any range check (a NaN
     * passed them and was converted to an integer, found by fuzz_suite) */
    static const char *const nonfinite[] = { "iterations = nan", "repetitions = nan", "min_time = inf",
                                             "max_cv = nan", "burst_windows = nan" };
    /* an integer key beyond int's range: refused before any conversion (fuzz_suite) */
    write_text(a, "[h]\ncomponent = hostmem\nbackend = stream\nburst_windows = -42949672961\n");
    expect_suite_error(a, "burst_windows: expected an integer in [0, 1e6]", NULL);
    for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
        char body[256];
        snprintf(body, sizeof body, "[h]\ncomponent = hostmem\nbackend = stream\n%s\n", nonfinite[i]);
        write_text(a, body);
        expect_suite_error(a, "not a finite number", NULL);
    }
    unlink(a);
    unlink(b);
    for (int i = 0; i <= 6; i++) {
        snprintf(p, sizeof p, "%s/d%d.ini", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static void test_humanize(void **s)
{
    (void)s;
    char b[32];
    mb_humanize_value("4096", b, sizeof b);
    assert_string_equal(b, "4k");
    mb_humanize_value("1073741824", b, sizeof b);
    assert_string_equal(b, "1g");
    mb_humanize_value("1536", b, sizeof b);
    assert_string_equal(b, "1536");
    mb_humanize_value("bf16", b, sizeof b);
    assert_string_equal(b, "bf16");
}

/* context.environment: the library-steering variables, name -> value,
 * sorted; nothing else from the environment. Names used here steer nothing
 * (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are never changed by tests). */
static void test_context_environment(void **s)
{
    (void)s;
    char *fake[] = { "PATH=/bin", "OPENBLAS_CORETYPE=Haswell", "OMP_NUM_THREADS=2", "MKL_DEBUG_CPU_TYPE=5",
                     "ONEDNN_VERBOSE=1", "DNNL_MAX_CPU_ISA=AVX2", "CUBLAS_WORKSPACE_CONFIG=:4096:8",
                     "NCCL_DEBUG=INFO", "CUDA_VISIBLE_DEVICES=0", "NVIDIA_TF32_OVERRIDE=0", "HOME=/root",
                     "OPENBLASX=1", "NOEQUALS", "A_OMP_NUM_THREADS=3", NULL };
    cJSON *env = mb_context_environment(fake);
    assert_int_equal(cJSON_GetArraySize(env), 9);
    assert_string_equal(cJSON_GetObjectItem(env, "OPENBLAS_CORETYPE")->valuestring, "Haswell");
    assert_string_equal(cJSON_GetObjectItem(env, "CUBLAS_WORKSPACE_CONFIG")->valuestring, ":4096:8");
    assert_null(cJSON_GetObjectItem(env, "PATH"));
    assert_null(cJSON_GetObjectItem(env, "OPENBLASX"));
    assert_null(cJSON_GetObjectItem(env, "A_OMP_NUM_THREADS"));
    /* Sorted by name. */
    const cJSON *prev = NULL, *it;
    cJSON_ArrayForEach(it, env)
    {
        if (prev)
            assert_true(strcmp(prev->string, it->string) < 0);
        prev = it;
    }
    cJSON_Delete(env);

    /* The process's own environment, through the machine context. */
    assert_int_equal(setenv("NCCL_MLBENCH_TEST_ONLY", "yes", 1), 0);
    assert_int_equal(setenv("MLBENCH_TEST_NOT_RECORDED", "no", 1), 0);
    cJSON *ctx = mb_context_collect(NULL);
    const cJSON *e = cJSON_GetObjectItem(ctx, "environment");
    assert_non_null(e);
    assert_string_equal(cJSON_GetObjectItem(e, "NCCL_MLBENCH_TEST_ONLY")->valuestring, "yes");
    assert_null(cJSON_GetObjectItem(e, "MLBENCH_TEST_NOT_RECORDED"));
    const char *coretype = getenv("OPENBLAS_CORETYPE"); /* whatever the machine sets, recorded as set */
    if (coretype)
        assert_string_equal(cJSON_GetObjectItem(e, "OPENBLAS_CORETYPE")->valuestring, coretype);
    else
        assert_null(cJSON_GetObjectItem(e, "OPENBLAS_CORETYPE"));
    cJSON_Delete(ctx);
    unsetenv("NCCL_MLBENCH_TEST_ONLY");
    unsetenv("MLBENCH_TEST_NOT_RECORDED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_parsing),
        cmocka_unit_test(test_context_environment),
        cmocka_unit_test(test_params_build),
        cmocka_unit_test(test_params_errors),   cmocka_unit_test(test_runner_ok),
        cmocka_unit_test(test_runner_skip_fail_verify), cmocka_unit_test(test_journal_and_writers),
        cmocka_unit_test(test_runner_teardown_every_path), cmocka_unit_test(test_runner_setup_failure),
        cmocka_unit_test(test_runner_rejects_bad_numbers),
        cmocka_unit_test(test_runner_rejects_infinite_rate),
        cmocka_unit_test(test_results_load_errors), cmocka_unit_test(test_humanize),
        cmocka_unit_test(test_suite_hostile),
        cmocka_unit_test(test_noisy_flag),      cmocka_unit_test(test_default_results_unique),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
