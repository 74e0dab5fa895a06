/* hostmem: STREAM byte counts, verification of every kernel (and that it
 * catches a damaged output), memcpy, sizing and skip reasons. Small arrays:
 * these test behaviour, not bandwidth. */
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
#include "hostmem_util.h"

/* The composed tables (description + code), as the harness sees them. */
#define STREAM (mb_registry_find_builtin("hostmem", "stream"))
#define MEMCPY (mb_registry_find_builtin("hostmem", "memcpy"))

static const char *const KERNELS[] = { "copy", "scale", "add", "triad" };
/* STREAM's counting: arrays touched x 8 bytes x N. */
static const int ARRAYS[] = { 2, 2, 3, 3 };

static void *stream_setup_ok(const char *kernel, const char *threads, const char *size)
{
    char k[32], t[32], a[48];
    snprintf(k, sizeof k, "kernel=%s", kernel);
    snprintf(t, sizeof t, "threads=%s", threads);
    snprintf(a, sizeof a, "array_size=%s", size);
    const char *kv[] = { k, t, a };
    mb_err err = { 0 };
    void *st = NULL;
    int rc = ct_setup(STREAM, kv, 3, &st, &err);
    if (rc != MB_OK)
        fprintf(stderr, "setup: %s\n", err.msg);
    assert_int_equal(rc, MB_OK);
    assert_non_null(st);
    return st;
}

static void test_stream_byte_counts(void **s)
{
    (void)s;
    for (int k = 0; k < 4; k++) {
        void *st = stream_setup_ok(KERNELS[k], "1", "1m"); /* N = 131072 */
        double want = ARRAYS[k] * 8.0 * 131072.0;
        assert_true(STREAM->work_per_iter(st) == want);
        STREAM->teardown(st);
    }
}

static void test_stream_verifies_every_kernel(void **s)
{
    (void)s;
    const char *threads[] = { "1", "0" }; /* one worker, every CPU */
    for (int t = 0; t < 2; t++) {
        for (int k = 0; k < 4; k++) {
            /* An odd element count: the last slice is not a whole line. */
            void *st = stream_setup_ok(KERNELS[k], threads[t], "1000008");
            mb_err err = { 0 };
            assert_int_equal(STREAM->verify(st, &err), MB_ESKIP); /* nothing ran */
            ct_run(STREAM, st);
            ct_run(STREAM, st);
            mb_err_clear(&err);
            int rc = STREAM->verify(st, &err);
            if (rc != MB_OK)
                fprintf(stderr, "%s: %s\n", KERNELS[k], err.msg);
            assert_int_equal(rc, MB_OK);
            STREAM->teardown(st);
        }
    }
}

static void test_stream_catches_corruption(void **s)
{
    (void)s;
    for (int k = 0; k < 4; k++) {
        void *st = stream_setup_ok(KERNELS[k], "0", "1m");
        ct_run(STREAM, st);
        mb_test_stream_corrupt(st, 77777);
        mb_err err = { 0 };
        assert_int_equal(STREAM->verify(st, &err), MB_EVERIFY);
        assert_non_null(strstr(err.msg, "1 of 131072"));
        assert_non_null(strstr(err.msg, "[77777]"));
        STREAM->teardown(st);
    }
}

static void test_stream_report_notes_small_arrays(void **s)
{
    (void)s;
    void *st = stream_setup_ok("triad", "1", "1m");
    mb_report r;
    mb_report_init(&r);
    STREAM->report(st, &r);
    assert_non_null(mb_report_find_info(&r, "bytes_counted"));
    assert_non_null(strstr(mb_report_find_info(&r, "kernel"), "a[i] = b[i] + 3.0*c[i]"));
    if (mb_cpu_llc_total_bytes() > (1 << 20) / 4) {
        assert_int_equal(r.n_notes >= 1, 1);
        assert_non_null(strstr(r.notes[r.n_notes - 1], "caches, not DRAM"));
    }
    mb_report_free(&r);
    STREAM->teardown(st);
}

static void test_stream_skips_and_usage(void **s)
{
    (void)s;
    mb_err err = { 0 };
    void *st = NULL;
    const char *too_many[] = { "threads=4096", "array_size=1m" };
    assert_int_equal(ct_setup(STREAM, too_many, 2, &st, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "threads=4096"));
    mb_err_clear(&err);
    const char *huge[] = { "array_size=64t" };
    assert_int_equal(ct_setup(STREAM, huge, 1, &st, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "does not fit"));
    mb_err_clear(&err);
    const char *tiny[] = { "threads=1", "array_size=16" };
    assert_int_equal(ct_setup(STREAM, tiny, 2, &st, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "array_size"));
    assert_null(st);
}

static void test_auto_size(void **s)
{
    (void)s;
    long long llc = -1;
    long long bytes = mb_hostmem_array_bytes(0, &llc);
    assert_true(llc >= 0);
    assert_true(bytes >= MB_HOSTMEM_MIN_AUTO_BYTES);
    assert_true(bytes >= 4 * llc);
    assert_int_equal(mb_hostmem_array_bytes(12345, NULL), 12345);
}

static void test_memcpy(void **s)
{
    (void)s;
    const char *sizes[] = { "size=1m", "size=13" }; /* 13: a tail below one word */
    for (int i = 0; i < 2; i++) {
        mb_err err = { 0 };
        void *st = NULL;
        assert_int_equal(ct_setup(MEMCPY, &sizes[i], 1, &st, &err), MB_OK);
        double size = i == 0 ? 1048576.0 : 13.0;
        assert_true(MEMCPY->work_per_iter(st) == 2.0 * size);
        assert_int_equal(MEMCPY->verify(st, &err), MB_ESKIP);
        ct_run(MEMCPY, st);
        mb_err_clear(&err);
        assert_int_equal(MEMCPY->verify(st, &err), MB_OK);
        mb_test_memcpy_corrupt(st, 5);
        assert_int_equal(MEMCPY->verify(st, &err), MB_EVERIFY);
        assert_non_null(strstr(err.msg, "offset 5"));
        MEMCPY->teardown(st);
    }
    mb_err err = { 0 };
    void *st = NULL;
    const char *huge[] = { "size=64t" };
    assert_int_equal(ct_setup(MEMCPY, huge, 1, &st, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "does not fit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_byte_counts),
        cmocka_unit_test(test_stream_verifies_every_kernel),
        cmocka_unit_test(test_stream_catches_corruption),
        cmocka_unit_test(test_stream_report_notes_small_arrays),
        cmocka_unit_test(test_stream_skips_and_usage),
        cmocka_unit_test(test_auto_size),
        cmocka_unit_test(test_memcpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
