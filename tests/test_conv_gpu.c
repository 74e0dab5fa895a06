/* The cuDNN convolution backend through its ops table, on a real device:
 * every direction, dtype and layout verifies on a small shape (the whole
 * output against the CPU; combinations cuDNN may lack skip, the canonical
 * ones must run), a ResNet-50 layer verifies through samples plus the second
 * algorithm with a rate between 5% and 105% of the peak, a corrupted device
 * output fails, and with several buffer sets (rotate) verification reads the
 * set the last timed call wrote. Exits 77 (skipped) without a usable CUDA
 * device or cuDNN. Label: gpu.
 * Estimated run time on an H100: 30-90 s, mostly cudnnFind*AlgorithmEx (it
 * times every algorithm) and cuDNN loading its engines on first use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "component.h"
#include "params.h"
#include "case_report.h"

/* The composed tables (description + code), as the harness sees them. */
#define CONV (*mb_registry_find("conv", "cudnn"))

#ifdef MB_HAVE_CUDNN
#include <cuda_runtime_api.h>

void *mb_conv_cudnn_test_output(void *state, int set, int *sets, size_t *bytes);

typedef struct outcome {
    int setup, verify;
    double rate, peak;
    double buffer_sets;
    bool unwritten_poisoned; /* the set after the last written one still holds the poison */
    char msg[MB_ERR_LEN];
    char cross[256];
} outcome;

typedef enum corruption {
    INTACT,
    HALF_ZEROED,    /* the first half of the output zeroed: the CPU samples see it */
    ONE_IN_MIDDLE,  /* one fp32 element in the middle set to 1000: only the cross-check sees it */
} corruption;

/* Sets up, runs 3 timed iterations, corrupts output set `set` as asked
 * (-1: the set the backend says the last call wrote), verifies, reports. */
static outcome run_case_set(const char *const *names, const char *const *values, int n,
                            corruption corrupt, int set)
{
    outcome o = { .setup = -1, .verify = -1 };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(CONV.params, names, values, n, &err);
    if (!p)
        fail_msg("params: %s", err.msg);
    void *state = NULL;
    o.setup = CONV.setup(p, &state, &err);
    int ran = MB_OK;
    double total = 0;
    for (int i = 0; o.setup == MB_OK && ran == MB_OK && i < 3; i++) {
        double sec = 0;
        ran = CONV.run(state, &sec, &err);
        if (ran == MB_OK && !(sec > 0))
            ran = mb_errf(&err, MB_EFAIL, "run() reported %g seconds", sec);
        total += sec;
    }
    if (o.setup == MB_OK && ran != MB_OK)
        o.verify = ran; /* reported as the verify code, with run()'s message */
    if (o.setup == MB_OK && ran == MB_OK) {
        o.rate = 3 * CONV.work_per_iter(state) / total / 1e12;
        size_t bytes = 0;
        int sets = 0;
        char *out = mb_conv_cudnn_test_output(state, set, &sets, &bytes);
        assert_non_null(out);
        int after = set >= 0 ? set + 1 : sets; /* only checked when a set is named */
        if (set >= 0 && after < sets) {
            unsigned char head[4] = { 0 };
            char *next = mb_conv_cudnn_test_output(state, after, &sets, &bytes);
            assert_int_equal(cudaMemcpy(head, next, sizeof head, cudaMemcpyDeviceToHost),
                             cudaSuccess);
            o.unwritten_poisoned = head[0] == 0x7F && head[1] == 0x7F && head[2] == 0x7F &&
                                   head[3] == 0x7F;
        }
        if (corrupt == HALF_ZEROED)
            assert_int_equal(cudaMemset(out, 0, bytes / 2), cudaSuccess);
        if (corrupt == ONE_IN_MIDDLE) {
            const float big = 1000.0f;
            size_t at = bytes / 2 / sizeof big * sizeof big;
            assert_int_equal(cudaMemcpy(out + at, &big, sizeof big, cudaMemcpyHostToDevice),
                             cudaSuccess);
        }
        o.verify = CONV.verify(state, &err);
        mb_report r;
        mb_report_init(&r);
        CONV.report(state, &r);
        o.peak = r.peak;
        const mb_metric *bs = mb_report_find_metric(&r, "buffer_sets");
        assert_non_null(bs);
        o.buffer_sets = bs->value;
        const char *cc = mb_report_find_info(&r, "cross_check");
        snprintf(o.cross, sizeof o.cross, "%s", cc ? cc : "");
        assert_non_null(mb_report_find_info(&r, "algorithm"));
        assert_non_null(mb_report_find_info(&r, "algorithms"));
        mb_report_free(&r);
    }
    snprintf(o.msg, sizeof o.msg, "%s", err.msg);
    CONV.teardown(state);
    mb_params_free(p);
    return o;
}

static outcome run_case(const char *const *names, const char *const *values, int n,
                        corruption corrupt)
{
    return run_case_set(names, values, n, corrupt, -1);
}

/* The compute capability (major*10+minor) of the benchmark's device. */
static int device_cc(void)
{
    int major = 0, minor = 0;
    assert_int_equal(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);
    return major * 10 + minor;
}

/* Small enough that the whole output is checked on the CPU. cuDNN need not
 * offer every data type in every layout (bf16 or fp16 in NCHW, fp32 in NHWC
 * may have no algorithm), so those may skip, saying why; the paths every
 * cuDNN 9 has, strict fp32 in NCHW and fp16 in NHWC (tensor cores, cc 7.0
 * on), must run in every direction. All 24 cases run; failures are listed
 * together at the end (GPU time is scarce: one run should show them all). */
static void test_small_all_directions(void **s)
{
    (void)s;
    const char *dirs[] = { "fwd", "bwd_data", "bwd_filter" };
    const char *dtypes[] = { "fp32", "tf32", "fp16", "bf16" };
    const char *layouts[] = { "nchw", "nhwc" };
    int cc = device_cc(), bad = 0, ran = 0;
    for (int d = 0; d < 3; d++)
        for (int t = 0; t < 4; t++)
            for (int l = 0; l < 2; l++) {
                const char *names[] = { "n", "c", "h", "w", "k", "direction", "dtype", "layout",
                                        "stride_h", "stride_w", "samples" };
                const char *values[] = { "2", "8", "9", "9", "8", dirs[d], dtypes[t], layouts[l],
                                         "2", "2", "100000" };
                bool required = (t == 0 && l == 0) || (t == 2 && l == 1 && cc >= 70);
                outcome o = run_case(names, values, 11, INTACT);
                if (o.setup == MB_ESKIP) {
                    fprintf(stderr, "  %-10s %s %s: skipped: %s\n", dirs[d], dtypes[t], layouts[l], o.msg);
                    if (required || strlen(o.msg) == 0) {
                        fprintf(stderr, "  FAILED: %s %s %s must run on cc %d.%d\n", dirs[d], dtypes[t],
                                layouts[l], cc / 10, cc % 10);
                        bad++;
                    }
                    continue;
                }
                if (o.setup != MB_OK || o.verify != MB_OK) {
                    fprintf(stderr, "  FAILED: %s %s %s: setup %d verify %d: %s\n", dirs[d], dtypes[t],
                            layouts[l], o.setup, o.verify, o.msg);
                    bad++;
                    continue;
                }
                ran++;
                fprintf(stderr, "  %-10s %s %s: verified (%.3f TFLOP/s)\n", dirs[d], dtypes[t], layouts[l],
                        o.rate);
            }
    fprintf(stderr, "  %d of 24 small cases ran and verified\n", ran);
    if (bad)
        fail_msg("%d small conv case(s) failed (listed above)", bad);
}

/* A ResNet-50 layer: sampled CPU check plus the second algorithm. Rates
 * between 5% of the peak (an H100 does this layer at roughly 25-50% in
 * fp16; far below means the timed region holds something else) and 105%
 * (a wrong FLOP count or timer). Every direction runs even when one fails. */
static void test_resnet_layer(void **s)
{
    (void)s;
    const char *dirs[] = { "fwd", "bwd_data", "bwd_filter" };
    int l2 = 0, bad = 0;
    assert_int_equal(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
    if (device_cc() < 70)
        skip(); /* no fp16 tensor cores */
    for (int d = 0; d < 3; d++) {
        const char *names[] = { "n", "c", "h", "w", "k", "direction", "dtype", "layout" };
        const char *values[] = { "32", "64", "56", "56", "64", dirs[d], "fp16", "nhwc" };
        outcome o = run_case(names, values, 8, INTACT);
        if (o.setup != MB_OK || o.verify != MB_OK) {
            fprintf(stderr, "  FAILED %s: setup %d verify %d: %s\n", dirs[d], o.setup, o.verify, o.msg);
            bad++;
            continue;
        }
        fprintf(stderr, "  %s fp16 56x56x64x64: %.1f TFLOP/s (peak %.1f, %.2f of it); %s\n", dirs[d],
                o.rate, o.peak, o.peak > 0 ? o.rate / o.peak : 0, o.cross);
        if (!(o.rate > 0) || (o.peak > 0 && (o.rate > 1.05 * o.peak || o.rate < 0.05 * o.peak))) {
            fprintf(stderr, "  FAILED %s: %.1f TFLOP/s against a peak of %.1f\n", dirs[d], o.rate, o.peak);
            bad++;
        }
        /* x and y are 12.8 MB each: with an L2 over 9 MiB the automatic
         * count (3x L2 per pass) is more than one set. */
        if (l2 > (9 << 20) && o.buffer_sets < 2) {
            fprintf(stderr, "  FAILED %s: %.0f buffer set(s) with a %d-byte L2\n", dirs[d], o.buffer_sets, l2);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d ResNet-50 layer check(s) failed (listed above)", bad);
}

static void test_corrupted_output_fails(void **s)
{
    (void)s;
    const char *names[] = { "n", "c", "h", "w", "k", "dtype", "layout" };
    const char *values[] = { "4", "32", "28", "28", "32", "fp32", "nchw" };
    outcome o = run_case(names, values, 7, HALF_ZEROED);
    assert_int_equal(o.setup, MB_OK);
    assert_int_equal(o.verify, MB_EVERIFY);
}

/* samples = 2 checks only the first and the last element on the CPU: a wrong
 * element in the middle must be caught by the second algorithm's whole
 * output (or, without a second algorithm, the test says so and skips). */
static void test_cross_check_catches_one_element(void **s)
{
    (void)s;
    const char *names[] = { "n", "c", "h", "w", "k", "dtype", "samples", "layout" };
    const char *values[] = { "4", "32", "28", "28", "32", "fp32", "2", "nchw" };
    outcome o = run_case(names, values, 8, ONE_IN_MIDDLE);
    assert_int_equal(o.setup, MB_OK);
    if (o.verify == MB_OK && strstr(o.cross, "CPU samples only")) {
        fprintf(stderr, "  no second algorithm: %s\n", o.cross);
        skip();
    }
    if (o.verify != MB_EVERIFY)
        fail_msg("verify %d: %s (%s)", o.verify, o.msg, o.cross);
    assert_non_null(strstr(o.msg, "disagree"));
}

/* rotate = 5, inner = 1, 3 timed iterations: calls went to sets 0, 1, 2, so
 * the last written set is 2 (worked out here, not asked of the backend) and
 * sets 3 and 4 still hold the poison. Intact: verify passes (it does not read
 * an unwritten set). Set 2 corrupted: the CPU samples catch it; one element
 * of set 2 wrong: the second algorithm catches it (same set's inputs). */
static void test_rotation_verifies_last_written_set(void **s)
{
    (void)s;
    const char *names[] = { "n", "c", "h", "w", "k", "dtype", "rotate", "inner", "samples", "layout" };
    const char *values[] = { "4", "32", "28", "28", "32", "fp32", "5", "1", "64", "nchw" };
    const int last = (3 * 1 - 1) % 5;
    outcome o = run_case_set(names, values, 10, INTACT, last);
    assert_int_equal(o.setup, MB_OK);
    if (o.verify != MB_OK)
        fail_msg("intact, 5 sets: verify %d: %s (%s)", o.verify, o.msg, o.cross);
    assert_true(o.buffer_sets == 5);
    assert_true(o.unwritten_poisoned);

    o = run_case_set(names, values, 10, HALF_ZEROED, last);
    assert_int_equal(o.setup, MB_OK);
    assert_int_equal(o.verify, MB_EVERIFY);

    values[8] = "2"; /* first and last element only: the cross-check must see it */
    o = run_case_set(names, values, 10, ONE_IN_MIDDLE, last);
    assert_int_equal(o.setup, MB_OK);
    if (o.verify == MB_OK && strstr(o.cross, "CPU samples only")) {
        fprintf(stderr, "  no second algorithm: %s\n", o.cross);
        skip();
    }
    if (o.verify != MB_EVERIFY)
        fail_msg("one element of set %d: verify %d: %s (%s)", last, o.verify, o.msg, o.cross);
    assert_non_null(strstr(o.msg, "disagree"));
}

int main(void)
{
    mb_err why = { 0 };
    if (CONV.probe(NULL, &why) != MB_OK) {
        fprintf(stderr, "skipped: %s\n", why.msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_all_directions),
        cmocka_unit_test(test_resnet_layer),
        cmocka_unit_test(test_corrupted_output_fails),
        cmocka_unit_test(test_cross_check_catches_one_element),
        cmocka_unit_test(test_rotation_verifies_last_written_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !MB_HAVE_CUDNN */
int main(void)
{
    mb_err why = { 0 };
    CONV.probe(NULL, &why);
    fprintf(stderr, "skipped: %s\n", why.msg);
    return 77;
}
#endif
