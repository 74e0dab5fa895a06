/* GPU GEMM backends (cuBLASLt, cuBLAS) through their ops tables, on a real
 * device: small cases of every dtype verify, rates are sane against the
 * peak, a corrupted device output fails verification, and verification only
 * accepts what run() wrote. Exits 77 (skipped) without a usable CUDA device,
 * saying why. Label: gpu. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "component.h"
#include "params.h"
#include "report.h"

extern const mb_component_ops mb_gemm_cublaslt, mb_gemm_cublas;

#ifdef MB_HAVE_CUDA
#include "gemm_common.h"
#include "gpu_util.h"

typedef struct outcome {
    int setup, verify;
    double rate; /* in the backend's rate unit */
    double peak;
    char msg[MB_ERR_LEN];
} outcome;

/* probe, setup, three runs, verify, report, teardown. When `corrupt` is set
 * the device outputs are zeroed between run and verify. */
static outcome run_case(const mb_component_ops *ops, const char *const *names,
                        const char *const *values, int n, bool corrupt)
{
    outcome o = { .setup = -1, .verify = -1 };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(ops->params, names, values, n, &err);
    if (!p)
        fail_msg("params: %s", err.msg);
    void *state = NULL;
    o.setup = ops->setup(p, &state, &err);
    if (o.setup == MB_OK) {
        double total = 0;
        for (int i = 0; i < 3; i++) {
            double sec = 0;
            int rc = ops->run(state, &sec, &err);
            if (rc != MB_OK)
                fail_msg("%s run: %s", ops->backend, err.msg);
            assert_true(sec > 0);
            total += sec;
        }
        o.rate = 3 * ops->work_per_iter(state) / total / ops->rate_scale;
        if (corrupt) {
            mb_gemm_bench *g = state; /* first member of every backend's state */
            assert_int_equal(cudaMemset(g->base_c, 0, g->set_stride_c * (size_t)g->rotate),
                             cudaSuccess);
        }
        o.verify = ops->verify(state, &err);
        mb_report r;
        mb_report_init(&r);
        ops->report(state, &r);
        o.peak = r.peak;
        assert_non_null(mb_report_find_info(&r, "math_mode"));
        assert_non_null(mb_report_find_info(&r, "algorithm"));
        mb_report_free(&r);
    }
    snprintf(o.msg, sizeof o.msg, "%s", err.msg);
    ops->teardown(state);
    mb_params_free(p);
    return o;
}

static const mb_component_ops *const backends[] = { &mb_gemm_cublaslt, &mb_gemm_cublas };
static const char *const dtypes[] = { "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8" };

static void test_small_cases_verify(void **s)
{
    (void)s;
    const char *shapes[] = { "256x192x128", "128x96x256x4" }; /* plain and strided-batched */
    const char *layouts[] = { "auto", "tn" };
    for (size_t b = 0; b < 2; b++)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
            for (size_t sh = 0; sh < 2; sh++) {
                const char *names[] = { "shape", "dtype", "layout" };
                const char *values[] = { shapes[sh], dtypes[d], layouts[sh] };
                outcome o = run_case(backends[b], names, values, 3, false);
                if (o.setup == MB_ESKIP) { /* dtype this GPU or library lacks */
                    fprintf(stderr, "  %s %s: skipped: %s\n", backends[b]->backend, dtypes[d],
                            o.msg);
                    assert_true(strlen(o.msg) > 0);
                    continue;
                }
                if (o.setup != MB_OK || o.verify != MB_OK)
                    fail_msg("%s %s %s: setup %d verify %d: %s", backends[b]->backend, dtypes[d],
                             shapes[sh], o.setup, o.verify, o.msg);
                assert_true(o.rate > 0);
                if (o.peak > 0 && o.rate > 1.05 * o.peak)
                    fail_msg("%s %s: %.1f above the peak %.1f", backends[b]->backend, dtypes[d],
                             o.rate, o.peak);
            }
}

/* bf16 4096^3 must reach a sane fraction of the peak on any tensor-core GPU. */
static void test_medium_rate_sane(void **s)
{
    (void)s;
    for (size_t b = 0; b < 2; b++) {
        const char *names[] = { "shape", "dtype" };
        const char *values[] = { "4096x4096x4096", "bf16" };
        outcome o = run_case(backends[b], names, values, 2, false);
        if (o.setup == MB_ESKIP)
            skip();
        assert_int_equal(o.setup, MB_OK);
        assert_int_equal(o.verify, MB_OK);
        fprintf(stderr, "  %s bf16 4096^3: %.1f TFLOP/s, peak %.1f\n", backends[b]->backend,
                o.rate, o.peak);
        if (o.peak > 0 && (o.rate < 0.25 * o.peak || o.rate > 1.05 * o.peak))
            fail_msg("%s: %.1f TFLOP/s against a peak of %.1f", backends[b]->backend, o.rate,
                     o.peak);
    }
}

/* A benchmark that is fast because it is wrong must fail. */
static void test_corrupted_output_fails(void **s)
{
    (void)s;
    for (size_t b = 0; b < 2; b++) {
        const char *names[] = { "shape", "dtype" };
        const char *values[] = { "512x512x512", "fp16" };
        outcome o = run_case(backends[b], names, values, 2, true);
        assert_int_equal(o.setup, MB_OK);
        assert_int_equal(o.verify, MB_EVERIFY);
        assert_non_null(strstr(o.msg, "expected"));
    }
}

/* Outputs are poisoned at the end of setup: with no run, nothing to verify. */
static void test_verify_needs_run(void **s)
{
    (void)s;
    const char *names[] = { "shape", "dtype" };
    const char *values[] = { "256x256x256", "fp32" };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(mb_gemm_cublas.params, names, values, 2, &err);
    void *state = NULL;
    assert_int_equal(mb_gemm_cublas.setup(p, &state, &err), MB_OK);
    assert_int_equal(mb_gemm_cublas.verify(state, &err), MB_ESKIP);
    mb_gemm_cublas.teardown(state);
    mb_params_free(p);
}

static void test_fp8_not_in_cublas(void **s)
{
    (void)s;
    const char *names[] = { "dtype" };
    const char *values[] = { "fp8" };
    outcome o = run_case(&mb_gemm_cublas, names, values, 1, false);
    assert_int_equal(o.setup, MB_ESKIP);
    assert_non_null(strstr(o.msg, "cublaslt"));
}

int main(void)
{
    mb_err why = { 0 };
    if (mb_cuda_probe(&why) != MB_OK) {
        fprintf(stderr, "skipped: %s\n", why.msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_cases_verify),
        cmocka_unit_test(test_medium_rate_sane),
        cmocka_unit_test(test_corrupted_output_fails),
        cmocka_unit_test(test_verify_needs_run),
        cmocka_unit_test(test_fp8_not_in_cublas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !MB_HAVE_CUDA */
int main(void)
{
    mb_err why = { 0 };
    mb_gemm_cublaslt.probe(NULL, &why);
    fprintf(stderr, "skipped: %s\n", why.msg);
    return 77;
}
#endif
