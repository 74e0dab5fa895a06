/* conv/onednn: a full check of a small shape in every layout, verification
 * catches a damaged output (sampled and full), FLOP count, reported formats,
 * bf16 where the CPU has it and its skip reason where it does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_info.h"
#include "cpu_test_hooks.h"
#include "cpu_test_util.h"

/* The composed tables (description + code), as the harness sees them. */
#define OPS (mb_registry_find_builtin("conv", "onednn"))

/* 2x3x7x6 input, 4 filters of 3x3, pad 1, stride 2: P = 4, Q = 3. */
#define SMALL "n=2", "c=3", "h=7", "w=6", "k=4", "r=3", "s=3", "pad=1", "stride=2"

static void *setup_ok(const char *const *kv, int n)
{
    mb_err err = { 0 };
    void *st = NULL;
    int rc = ct_setup(OPS, kv, n, &st, &err);
    if (rc != MB_OK)
        fprintf(stderr, "setup: %s\n", err.msg);
    assert_int_equal(rc, MB_OK);
    return st;
}

/* Does bf16 run here? When it does not, the skip must give a reason: the
 * CPU flags, or oneDNN's ISA (this test also runs under
 * DNNL_MAX_CPU_ISA=AVX2, which exercises the blocked nChw8c layouts). */
static bool host_runs_bf16(void)
{
    const char *kv[] = { SMALL, "dtype=bf16" };
    mb_err why = { 0 };
    mb_params *p = ct_params(OPS, kv, CT_N(kv), &why);
    assert_non_null(p);
    int rc = OPS->probe(p, &why);
    mb_params_free(p);
    if (rc != MB_OK) {
        assert_int_equal(rc, MB_ESKIP);
        assert_true(strstr(why.msg, "avx512_bf16") != NULL || strstr(why.msg, "effective ISA"));
    }
    return rc == MB_OK;
}

static void test_small_full_check_every_layout(void **s)
{
    (void)s;
    const char *layouts[] = { "layout=nchw", "layout=nhwc", "layout=any" };
    const char *want_fmt[] = { "abcd", "acdb", NULL };
    const char *dtypes[] = { "dtype=fp32", "dtype=bf16" };
    for (int d = 0; d < 2; d++) {
        if (d == 1 && !host_runs_bf16())
            continue;
        for (int l = 0; l < 3; l++) {
            const char *kv[] = { SMALL, layouts[l], dtypes[d], "verify_samples=0" };
            void *st = setup_ok(kv, CT_N(kv));
            /* 2 N K C R S P Q = 2*2*4*3*3*3*4*3 */
            assert_true(OPS->work_per_iter(st) == 5184.0);
            ct_run(OPS, st);
            mb_err err = { 0 };
            int rc = OPS->verify(st, &err);
            if (rc != MB_OK)
                fprintf(stderr, "%s %s: %s\n", dtypes[d], layouts[l], err.msg);
            assert_int_equal(rc, MB_OK);
            mb_report r;
            mb_report_init(&r);
            OPS->report(st, &r);
            if (want_fmt[l] != NULL) {
                assert_string_equal(mb_report_find_info(&r, "src_format"), want_fmt[l]);
                assert_string_equal(mb_report_find_info(&r, "dst_format"), want_fmt[l]);
            }
            assert_non_null(mb_report_find_info(&r, "implementation"));
            assert_true(r.peak > 0.0);
            mb_report_free(&r);
            /* a full check catches one damaged element */
            mb_test_conv_corrupt(st);
            assert_int_equal(OPS->verify(st, &err), MB_EVERIFY);
            assert_non_null(strstr(err.msg, "1 of 96"));
            assert_non_null(strstr(err.msg, "index 95:"));
            OPS->teardown(st);
        }
    }
}

static void test_sampled_catches_corruption(void **s)
{
    (void)s;
    const char *dtypes[] = { "dtype=fp32", "dtype=bf16" };
    for (int d = 0; d < 2; d++) {
        if (d == 1 && !host_runs_bf16())
            continue;
        const char *kv[] = { "n=1", "c=32", "h=20", "w=20", "k=32", "layout=any", dtypes[d] };
        void *st = setup_ok(kv, CT_N(kv));
        ct_run(OPS, st);
        mb_err err = { 0 };
        int rc = OPS->verify(st, &err);
        if (rc != MB_OK)
            fprintf(stderr, "%s: %s\n", dtypes[d], err.msg);
        assert_int_equal(rc, MB_OK);
        mb_test_conv_corrupt(st);
        assert_int_equal(OPS->verify(st, &err), MB_EVERIFY);
        assert_non_null(strstr(err.msg, "of 256 checked"));
        OPS->teardown(st);
    }
}

static void test_bf16_skip_reason(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                      "model name\t: Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz\n"
                      "flags\t\t: sse2 avx fma avx2\n", 0, 4, 8, &ci);
    mb_err why = { 0 };
    assert_int_equal(mb_test_conv_bf16_support(&ci, &why), MB_ESKIP);
    assert_non_null(strstr(why.msg, "avx512_bf16"));
    assert_non_null(strstr(why.msg, "i7-4770"));
    ci.avx512_bf16 = true;
    assert_int_equal(mb_test_conv_bf16_support(&ci, NULL), MB_OK);
    /* and the host: bf16 either runs or probe says why not */
    (void)host_runs_bf16();
}

static void test_bad_shape(void **s)
{
    (void)s;
    const char *kv[] = { "h=3", "w=3", "r=9", "s=9", "pad=0" };
    void *st = NULL;
    mb_err err = { 0 };
    assert_int_equal(ct_setup(OPS, kv, CT_N(kv), &st, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "does not fit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_full_check_every_layout),
        cmocka_unit_test(test_sampled_catches_corruption),
        cmocka_unit_test(test_bf16_skip_reason),
        cmocka_unit_test(test_bad_shape),
    };
    mb_err why = { 0 };
    if (OPS->probe(NULL, &why) != MB_OK) { /* "not built in: ..." */
        fprintf(stderr, "skipped: %s\n", why.msg);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
