/* gemm/openblas: results verify for every dtype and transpose, verification
 * catches a damaged element, FLOP count, peak and info in the report,
 * threads. Small shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_hooks.h"
#include "cpu_test_util.h"

/* The composed tables (description + code), as the harness sees them. */
#define OPS (mb_registry_find_builtin("gemm", "openblas"))

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

static void test_verifies_all_variants(void **s)
{
    (void)s;
    const char *dtypes[] = { "dtype=fp32", "dtype=fp64" };
    const char *trans[] = { "trans=nn", "trans=nt", "trans=tn", "trans=tt" };
    for (int d = 0; d < 2; d++) {
        for (int t = 0; t < 4; t++) {
            /* m != n != k: a mixed-up leading dimension cannot pass. */
            const char *kv[] = { dtypes[d], trans[t], "m=67", "n=45", "k=129" };
            void *st = setup_ok(kv, CT_N(kv));
            assert_true(OPS->work_per_iter(st) == 2.0 * 67 * 45 * 129);
            mb_err err = { 0 };
            assert_int_equal(OPS->verify(st, &err), MB_ESKIP); /* nothing ran */
            ct_run(OPS, st);
            mb_err_clear(&err);
            int rc = OPS->verify(st, &err);
            if (rc != MB_OK)
                fprintf(stderr, "%s %s: %s\n", dtypes[d], trans[t], err.msg);
            assert_int_equal(rc, MB_OK);
            OPS->teardown(st);
        }
    }
}

static void test_catches_corruption(void **s)
{
    (void)s;
    const char *dtypes[] = { "dtype=fp32", "dtype=fp64" };
    const char *shapes[][3] = { { "m=200", "n=300", "k=64" }, /* sampled */
                                { "m=8", "n=8", "k=8" } };    /* every element */
    for (int d = 0; d < 2; d++) {
        for (int sh = 0; sh < 2; sh++) {
            const char *kv[] = { dtypes[d], shapes[sh][0], shapes[sh][1], shapes[sh][2] };
            void *st = setup_ok(kv, CT_N(kv));
            ct_run(OPS, st);
            mb_err err = { 0 };
            assert_int_equal(OPS->verify(st, &err), MB_OK);
            mb_test_gemm_corrupt(st);
            assert_int_equal(OPS->verify(st, &err), MB_EVERIFY);
            assert_non_null(strstr(err.msg, sh == 0 ? "1 of 256" : "1 of 64"));
            OPS->teardown(st);
        }
    }
}

static void test_report_and_threads(void **s)
{
    (void)s;
    const char *kv[] = { "dtype=fp64", "m=64", "n=64", "k=64", "threads=1" };
    void *st = setup_ok(kv, CT_N(kv));
    ct_run(OPS, st);
    mb_report r;
    mb_report_init(&r);
    OPS->report(st, &r);
    const mb_metric *threads = mb_report_find_metric(&r, "threads");
    assert_non_null(threads);
    assert_true(threads->value == 1.0);
    assert_true(r.peak > 0.0);
    assert_non_null(strstr(r.peak_source, "1 physical cores"));
    assert_non_null(strstr(r.peak_source, "guess"));
    assert_non_null(mb_report_find_info(&r, "openblas_core"));
    assert_non_null(mb_report_find_info(&r, "openblas_config"));
    assert_string_equal(mb_report_find_info(&r, "routine"), "cblas_dgemm");
    mb_report_free(&r);
    OPS->teardown(st);

    mb_err err = { 0 };
    const char *many[] = { "threads=4096" };
    assert_int_equal(ct_setup(OPS, many, 1, &st, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "threads=4096"));
    mb_err_clear(&err);
    const char *huge[] = { "m=1048576", "n=1048576", "k=1048576" };
    assert_int_equal(ct_setup(OPS, huge, 3, &st, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "does not fit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verifies_all_variants),
        cmocka_unit_test(test_catches_corruption),
        cmocka_unit_test(test_report_and_threads),
    };
    mb_err why = { 0 };
    if (OPS->probe(NULL, &why) != MB_OK) { /* "not built in: ..." */
        fprintf(stderr, "skipped: %s\n", why.msg);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
