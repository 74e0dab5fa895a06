/* The cuDNN convolution backend through its ops table, on a real device:
 * every direction, dtype and layout verifies on a small shape (the whole
 * output against the CPU), a larger one verifies through samples plus the
 * second algorithm, rates are sane against the peak, and a corrupted device
 * output fails. Exits 77 (skipped) without a usable CUDA device or cuDNN.
 * Label: gpu. */
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

extern const mb_component_ops mb_conv_cudnn;

#ifdef MB_HAVE_CUDNN
#include <cuda_runtime_api.h>

void *mb_conv_cudnn_test_output(void *state, size_t *bytes);

typedef struct outcome {
    int setup, verify;
    double rate, peak;
    char msg[MB_ERR_LEN];
    char cross[256];
} outcome;

typedef enum corruption {
    INTACT,
    HALF_ZEROED,    /* the first half of the output zeroed: the CPU samples see it */
    ONE_IN_MIDDLE,  /* one fp32 element in the middle set to 1000: only the cross-check sees it */
} corruption;

static outcome run_case(const char *const *names, const char *const *values, int n,
                        corruption corrupt)
{
    outcome o = { .setup = -1, .verify = -1 };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(mb_conv_cudnn.params, names, values, n, &err);
    if (!p)
        fail_msg("params: %s", err.msg);
    void *state = NULL;
    o.setup = mb_conv_cudnn.setup(p, &state, &err);
    if (o.setup == MB_OK) {
        double total = 0;
        for (int i = 0; i < 3; i++) {
            double sec = 0;
            if (mb_conv_cudnn.run(state, &sec, &err) != MB_OK)
                fail_msg("run: %s", err.msg);
            total += sec;
        }
        o.rate = 3 * mb_conv_cudnn.work_per_iter(state) / total / 1e12;
        size_t bytes = 0;
        char *out = mb_conv_cudnn_test_output(state, &bytes);
        if (corrupt == HALF_ZEROED)
            assert_int_equal(cudaMemset(out, 0, bytes / 2), cudaSuccess);
        if (corrupt == ONE_IN_MIDDLE) {
            const float big = 1000.0f;
            size_t at = bytes / 2 / sizeof big * sizeof big;
            assert_int_equal(cudaMemcpy(out + at, &big, sizeof big, cudaMemcpyHostToDevice),
                             cudaSuccess);
        }
        o.verify = mb_conv_cudnn.verify(state, &err);
        mb_report r;
        mb_report_init(&r);
        mb_conv_cudnn.report(state, &r);
        o.peak = r.peak;
        const char *cc = mb_report_find_info(&r, "cross_check");
        snprintf(o.cross, sizeof o.cross, "%s", cc ? cc : "");
        assert_non_null(mb_report_find_info(&r, "algorithm"));
        assert_non_null(mb_report_find_info(&r, "algorithms"));
        mb_report_free(&r);
    }
    snprintf(o.msg, sizeof o.msg, "%s", err.msg);
    mb_conv_cudnn.teardown(state);
    mb_params_free(p);
    return o;
}

/* Small enough that the whole output is checked on the CPU. */
static void test_small_all_directions(void **s)
{
    (void)s;
    const char *dirs[] = { "fwd", "bwd_data", "bwd_filter" };
    const char *dtypes[] = { "fp32", "tf32", "fp16", "bf16" };
    const char *layouts[] = { "nchw", "nhwc" };
    for (int d = 0; d < 3; d++)
        for (int t = 0; t < 4; t++)
            for (int l = 0; l < 2; l++) {
                const char *names[] = { "n", "c", "h", "w", "k", "direction", "dtype", "layout",
                                        "stride_h", "stride_w", "samples" };
                const char *values[] = { "2", "8", "9", "9", "8", dirs[d], dtypes[t], layouts[l],
                                         "2", "2", "100000" };
                outcome o = run_case(names, values, 11, INTACT);
                if (o.setup == MB_ESKIP) {
                    fprintf(stderr, "  %s %s %s: skipped: %s\n", dirs[d], dtypes[t], layouts[l],
                            o.msg);
                    continue;
                }
                if (o.setup != MB_OK || o.verify != MB_OK)
                    fail_msg("%s %s %s: setup %d verify %d: %s", dirs[d], dtypes[t], layouts[l],
                             o.setup, o.verify, o.msg);
            }
}

/* A ResNet-50 layer: sampled CPU check plus the second algorithm. */
static void test_resnet_layer(void **s)
{
    (void)s;
    const char *dirs[] = { "fwd", "bwd_data", "bwd_filter" };
    for (int d = 0; d < 3; d++) {
        const char *names[] = { "n", "c", "h", "w", "k", "direction", "dtype" };
        const char *values[] = { "32", "64", "56", "56", "64", dirs[d], "fp16" };
        outcome o = run_case(names, values, 7, INTACT);
        if (o.setup == MB_ESKIP)
            skip();
        if (o.setup != MB_OK || o.verify != MB_OK)
            fail_msg("%s: setup %d verify %d: %s", dirs[d], o.setup, o.verify, o.msg);
        fprintf(stderr, "  %s fp16 56x56x64x64: %.1f TFLOP/s (peak %.1f); %s\n", dirs[d], o.rate,
                o.peak, o.cross);
        assert_true(o.rate > 0);
        if (o.peak > 0)
            assert_true(o.rate <= 1.05 * o.peak);
    }
}

static void test_corrupted_output_fails(void **s)
{
    (void)s;
    const char *names[] = { "n", "c", "h", "w", "k", "dtype" };
    const char *values[] = { "4", "32", "28", "28", "32", "fp32" };
    outcome o = run_case(names, values, 6, HALF_ZEROED);
    assert_int_equal(o.setup, MB_OK);
    assert_int_equal(o.verify, MB_EVERIFY);
}

/* samples = 2 checks only the first and the last element on the CPU: a wrong
 * element in the middle must be caught by the second algorithm's whole
 * output (or, without a second algorithm, the test says so and skips). */
static void test_cross_check_catches_one_element(void **s)
{
    (void)s;
    const char *names[] = { "n", "c", "h", "w", "k", "dtype", "samples" };
    const char *values[] = { "4", "32", "28", "28", "32", "fp32", "2" };
    outcome o = run_case(names, values, 7, ONE_IN_MIDDLE);
    assert_int_equal(o.setup, MB_OK);
    if (o.verify == MB_OK && strstr(o.cross, "CPU samples only")) {
        fprintf(stderr, "  no second algorithm: %s\n", o.cross);
        skip();
    }
    if (o.verify != MB_EVERIFY)
        fail_msg("verify %d: %s (%s)", o.verify, o.msg, o.cross);
    assert_non_null(strstr(o.msg, "disagree"));
}

int main(void)
{
    mb_err why = { 0 };
    if (mb_conv_cudnn.probe(NULL, &why) != MB_OK) {
        fprintf(stderr, "skipped: %s\n", why.msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_all_directions),
        cmocka_unit_test(test_resnet_layer),
        cmocka_unit_test(test_corrupted_output_fails),
        cmocka_unit_test(test_cross_check_catches_one_element),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !MB_HAVE_CUDNN */
int main(void)
{
    mb_err why = { 0 };
    mb_conv_cudnn.probe(NULL, &why);
    fprintf(stderr, "skipped: %s\n", why.msg);
    return 77;
}
#endif
