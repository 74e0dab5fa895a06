/* gemm/onednn: results verify for every dtype the CPU runs and every
 * transpose, verification catches a damaged element, FLOP count, peak, info
 * and threads in the report, bf16 skipped with a reason where the CPU (or
 * oneDNN's ISA) has no native bf16. Small shapes. */
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
#define OPS (mb_registry_find_builtin("gemm", "onednn"))

/* bf16 runs only where the CPU has it; elsewhere it must skip, saying why. */
static bool bf16_runs(void)
{
    const char *kv[] = { "dtype=bf16", "m=16", "n=16", "k=16" };
    mb_err err = { 0 };
    mb_params *p = ct_params(OPS, kv, CT_N(kv), &err);
    assert_non_null(p);
    int rc = OPS->probe(p, &err);
    void *st = NULL;
    if (rc == MB_OK)
        rc = OPS->setup(p, &st, &err);
    mb_params_free(p);
    if (st)
        OPS->teardown(st);
    if (rc != MB_OK) {
        assert_int_equal(rc, MB_ESKIP);
        assert_non_null(strstr(err.msg, "bf16"));
        fprintf(stderr, "bf16 skipped here: %s\n", err.msg);
    }
    return rc == MB_OK;
}

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
    const char *dtypes[] = { "dtype=fp32", "dtype=bf16" };
    const char *trans[] = { "trans=nn", "trans=nt", "trans=tn", "trans=tt" };
    int n_dtypes = bf16_runs() ? 2 : 1;
    for (int d = 0; d < n_dtypes; d++) {
        for (int t = 0; t < 4; t++) {
            /* m != n != k: a mixed-up leading dimension or tag cannot pass. */
            const char *kv[] = { dtypes[d], trans[t], "m=67", "n=45", "k=129" };
            void *st = setup_ok(kv, CT_N(kv));
            assert_true(OPS->work_per_iter(st) == 2.0 * 67 * 45 * 129);
            mb_err err = { 0 };
            assert_int_equal(OPS->verify(st, &err), MB_ESKIP); /* nothing ran: C is NaN */
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
    const char *dtypes[] = { "dtype=fp32", "dtype=bf16" };
    const char *shapes[][3] = { { "m=200", "n=300", "k=64" }, /* sampled */
                                { "m=8", "n=8", "k=8" } };    /* every element */
    int n_dtypes = bf16_runs() ? 2 : 1;
    for (int d = 0; d < n_dtypes; d++) {
        for (int sh = 0; sh < 2; sh++) {
            const char *kv[] = { dtypes[d], shapes[sh][0], shapes[sh][1], shapes[sh][2] };
            void *st = setup_ok(kv, CT_N(kv));
            ct_run(OPS, st);
            mb_err err = { 0 };
            assert_int_equal(OPS->verify(st, &err), MB_OK);
            mb_test_gemm_onednn_corrupt(st);
            assert_int_equal(OPS->verify(st, &err), MB_EVERIFY);
            assert_non_null(strstr(err.msg, sh == 0 ? "1 of 256" : "1 of 64"));
            OPS->teardown(st);
        }
    }
}

static void test_report_and_threads(void **s)
{
    (void)s;
    const char *kv[] = { "dtype=fp32", "m=64", "n=64", "k=64", "threads=1" };
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
    const char *impl = mb_report_find_info(&r, "implementation");
    assert_non_null(impl);
    assert_null(strstr(impl, "ref")); /* a reference implementation is skipped, never measured */
    assert_non_null(mb_report_find_info(&r, "onednn_isa"));
    assert_non_null(mb_report_find_info(&r, "onednn_version"));
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
