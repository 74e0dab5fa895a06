/* The GPU components (copy, membw, peak, launch) end to end through their ops
 * tables at small sizes: setup, a few runs, verification, report, teardown.
 * Needs a CUDA device: exits 77 (skipped) without one, printing the CUDA
 * error text. Rates are checked against the reported theoretical peak, so a
 * wrong byte count or a broken timer fails here, not only in a reader's eye. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "component.h"
#include "gpu_hooks.h"
#include "params.h"
#include "report.h"

extern const mb_component_ops mb_copy_cuda, mb_membw_cuda, mb_peak_cuda, mb_launch_cuda;

/* Runs one case (kv: name, value, ..., NULL); returns the last run's rate in
 * the component's unit. */
static double run_case(const mb_component_ops *ops, const char *const *kv)
{
    const char *names[16], *values[16];
    int n = 0;
    for (; kv[2 * n]; n++) {
        names[n] = kv[2 * n];
        values[n] = kv[2 * n + 1];
    }
    mb_err err = { 0 };
    mb_params *p = mb_params_build(ops->params, names, values, n, &err);
    if (p == NULL)
        fail_msg("%s/%s params: %s", ops->component, ops->backend, err.msg);
    void *state = NULL;
    int rc = ops->setup(p, &state, &err);
    if (rc != MB_OK)
        fail_msg("%s/%s setup: %s", ops->component, ops->backend, err.msg);
    double seconds = 0, rate = 0;
    for (int i = 0; i < 3; i++) {
        rc = ops->run(state, &seconds, &err);
        if (rc != MB_OK)
            fail_msg("%s/%s run: %s", ops->component, ops->backend, err.msg);
        assert_true(seconds > 0);
    }
    double work = ops->work_per_iter(state);
    assert_true(work > 0);
    rate = work / seconds / ops->rate_scale;
    rc = ops->verify(state, &err);
    if (rc != MB_OK && !(rc == MB_ESKIP && strcmp(ops->component, "launch") == 0))
        fail_msg("%s/%s verify: %s", ops->component, ops->backend, err.msg);
    mb_report r;
    mb_report_init(&r);
    ops->report(state, &r);
    char *key = mb_params_key(p);
    printf("  %-6s %-40s %10.3f %s%s", ops->component, key, rate, ops->rate_unit, r.peak > 0 ? "" : "\n");
    free(key);
    if (r.peak > 0) {
        printf("  (peak %.3f: %s)\n", r.peak, r.peak_source);
        /* Above the theoretical rate means a wrong count or timer. L2 can
         * serve small membw arrays above DRAM speed: allow some slack. */
        assert_true(rate <= r.peak * (strcmp(ops->component, "membw") == 0 ? 1.5 : 1.05));
    }
    for (int i = 0; i < r.n_notes; i++)
        printf("    note: %s\n", r.notes[i]);
    mb_report_free(&r);
    ops->teardown(state);
    mb_params_free(p);
    return rate;
}

#define CASE(ops, ...) run_case(&(ops), (const char *const[]){ __VA_ARGS__, NULL })

static void test_copy(void **s)
{
    (void)s;
    CASE(mb_copy_cuda, "direction", "h2d", "memory", "pinned", "size", "4m");
    CASE(mb_copy_cuda, "direction", "h2d", "memory", "wc", "size", "1m");
    CASE(mb_copy_cuda, "direction", "h2d", "memory", "pageable", "size", "64k");
    CASE(mb_copy_cuda, "direction", "d2h", "memory", "pinned", "size", "4k");
    CASE(mb_copy_cuda, "direction", "d2h", "memory", "pageable", "size", "1m");
    CASE(mb_copy_cuda, "direction", "bidir", "memory", "pinned", "size", "4m");
    /* 256 MiB: src + dst well above any L2 (H100: 50 MB), so the rate is
     * a DRAM rate and the check against the DRAM peak holds. */
    CASE(mb_copy_cuda, "direction", "d2d", "size", "256m");
}

static void expect_copy_skip(const char *dir, const char *mem, const char *why)
{
    const char *names[] = { "direction", "memory" }, *values[] = { dir, mem };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(mb_copy_cuda.params, names, values, 2, &err);
    assert_non_null(p);
    void *state = NULL;
    assert_int_equal(mb_copy_cuda.setup(p, &state, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, why));
    mb_copy_cuda.teardown(state);
    mb_params_free(p);
}

static void test_copy_skips(void **s)
{
    (void)s;
    expect_copy_skip("d2h", "wc", "h2d only");
    /* Pageable copies are host-synchronous: no overlap, so no bidir. */
    expect_copy_skip("bidir", "pageable", "bidir needs pinned memory");
}

static void test_membw(void **s)
{
    (void)s;
    const char *ops[] = { "read", "write", "copy", "triad" };
    for (int i = 0; i < 4; i++) {
        CASE(mb_membw_cuda, "op", ops[i], "dtype", "fp32", "size", "64m");
        CASE(mb_membw_cuda, "op", ops[i], "dtype", "fp64", "size", "64m");
    }
    /* A size that is not a multiple of the vector width is rounded down. */
    CASE(mb_membw_cuda, "op", "triad", "size", "1000004");
}

static void test_peak(void **s)
{
    (void)s;
    CASE(mb_peak_cuda, "dtype", "fp32", "iters", "256", "waves", "2");
    CASE(mb_peak_cuda, "dtype", "fp64", "iters", "256", "waves", "1");
    CASE(mb_peak_cuda, "dtype", "fp16", "iters", "1984", "waves", "2");
}

static void test_launch(void **s)
{
    (void)s;
    const char *ops[] = { "launch", "launch_sync", "graph", "stream_sync", "d2h_4b" };
    for (int i = 0; i < 5; i++)
        CASE(mb_launch_cuda, "op", ops[i], "count", "50");
}

static void test_context(void **s)
{
    (void)s;
    cJSON *ctx = cJSON_CreateObject();
    mb_gpu_context_add(ctx);
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(ctx, "gpus");
    assert_true(cJSON_GetArraySize(gpus) >= 1);
    cJSON *g = cJSON_GetArrayItem(gpus, 0);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "name")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "uuid")));
    assert_true(cJSON_GetObjectItemCaseSensitive(g, "sms")->valuedouble > 0);
    char *text = cJSON_Print(ctx);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(ctx);
}

int main(void)
{
    mb_err why = { 0 };
    if (mb_copy_cuda.probe(NULL, &why) != MB_OK) {
        printf("skipped: %s\n", why.msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context), cmocka_unit_test(test_copy),   cmocka_unit_test(test_copy_skips),
        cmocka_unit_test(test_membw),   cmocka_unit_test(test_peak),   cmocka_unit_test(test_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
