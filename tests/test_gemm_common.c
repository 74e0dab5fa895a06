/* The host side of the GPU GEMM backends (kernels/shared/gemm_common.c), no GPU
 * needed: problem set-up and the libraries' layout rules, the random inputs,
 * the CPU reference against an independent naive GEMM, the tolerance, the
 * sampled check (which must catch corrupted outputs), buffer rotation, and
 * the theoretical peaks (datasheet and per-architecture table). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm_common.h"
#include "case_report.h"

static mb_gemm_problem make(long long m, long long n, long long k, long long batch,
                            const char *layout, mb_gemm_dtype dtype)
{
    mb_gemm_problem p;
    mb_err err = { 0 };
    int rc = mb_gemm_problem_init(&p, m, n, k, batch, layout, dtype, MB_ELEM_BF16, 7, &err);
    if (rc != MB_OK)
        fail_msg("init: %s", err.msg);
    return p;
}

static void test_dtypes(void **s)
{
    (void)s;
    for (int i = 0; i < MB_GEMM_NDTYPES; i++) {
        mb_gemm_dtype d;
        mb_err err = { 0 };
        assert_int_equal(mb_gemm_dtype_parse(mb_gemm_dtype_name((mb_gemm_dtype)i), &d, &err),
                         MB_OK);
        assert_int_equal(d, i);
    }
    mb_gemm_dtype d;
    mb_err err = { 0 };
    assert_int_equal(mb_gemm_dtype_parse("fp4", &d, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "dtype"));
    assert_int_equal(mb_elem_size(MB_ELEM_F64), 8);
    assert_int_equal(mb_elem_size(MB_ELEM_BF16), 2);
    assert_int_equal(mb_elem_size(MB_ELEM_E4M3), 1);
    assert_int_equal(mb_elem_size(MB_ELEM_I32), 4);
    /* Store/load round trips of exactly representable values. */
    unsigned char buf[8];
    const struct {
        mb_elem e;
        double v;
    } cases[] = { { MB_ELEM_F64, -0.1 }, { MB_ELEM_F32, 0.375 }, { MB_ELEM_F16, -1.5 },
                  { MB_ELEM_BF16, 3.0 }, { MB_ELEM_E4M3, -4 },   { MB_ELEM_E4M3, 448 },
                  { MB_ELEM_I8, -8 },    { MB_ELEM_I32, 123456 } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mb_elem_store(cases[i].e, buf, cases[i].v);
        assert_true(mb_elem_load(cases[i].e, buf) == cases[i].v);
    }
}

static void test_problem_layouts(void **s)
{
    (void)s;
    mb_gemm_problem p = make(64, 32, 16, 3, "nn", MB_GEMM_BF16);
    assert_false(p.transa);
    assert_false(p.transb);
    assert_int_equal(p.lda, 64);
    assert_int_equal(p.ldb, 16);
    assert_int_equal(p.ldc, 64);
    assert_int_equal(p.stride_c, 64 * 32);
    assert_int_equal(mb_gemm_bytes(&p, 'a'), 64 * 16 * 3 * 2);
    assert_int_equal(mb_gemm_bytes(&p, 'c'), 64 * 32 * 3 * 2);
    assert_true(mb_gemm_problem_flops(&p) == 2.0 * 64 * 32 * 16 * 3);
    p = make(64, 32, 16, 1, "tn", MB_GEMM_FP32);
    assert_true(p.transa && !p.transb);
    assert_int_equal(p.lda, 16);
    assert_string_equal(mb_gemm_layout_name(&p), "tn");
    p = make(64, 32, 16, 1, "nt", MB_GEMM_FP32);
    assert_int_equal(p.ldb, 32);
    /* auto: tn where the library needs it, nn (torch.matmul) otherwise. */
    assert_string_equal(mb_gemm_layout_name(&(mb_gemm_problem){ 0 }), "nn");
    p = make(64, 32, 16, 1, "auto", MB_GEMM_FP8);
    assert_string_equal(mb_gemm_layout_name(&p), "tn");
    assert_int_equal(p.c_type, MB_ELEM_BF16);
    assert_true(p.alpha == 0.125); /* a_scale * b_scale */
    p = make(64, 32, 16, 1, "auto", MB_GEMM_INT8);
    assert_string_equal(mb_gemm_layout_name(&p), "tn");
    assert_int_equal(p.c_type, MB_ELEM_I32);
    p = make(64, 32, 16, 1, "auto", MB_GEMM_FP16);
    assert_string_equal(mb_gemm_layout_name(&p), "nn");

    mb_err err = { 0 };
    assert_int_equal(mb_gemm_problem_init(&p, 0, 1, 1, 1, "nn", MB_GEMM_BF16, MB_ELEM_BF16, 1,
                                          &err),
                     MB_EUSAGE);
    mb_err_clear(&err);
    assert_int_equal(mb_gemm_problem_init(&p, 1, 1, 1, 1, "xn", MB_GEMM_BF16, MB_ELEM_BF16, 1,
                                          &err),
                     MB_EUSAGE);
    assert_non_null(strstr(err.msg, "layout"));
}

/* What the cuBLASLt matrix layouts describe: the matrices as stored, tight,
 * and every element the reference reads lies inside them. */
static void test_stored_dims(void **s)
{
    (void)s;
    long long rows, cols, ld;
    mb_gemm_problem p = make(64, 32, 16, 3, "tn", MB_GEMM_FP8);
    mb_gemm_stored_dims(&p, 'a', &rows, &cols, &ld);
    assert_true(rows == 16 && cols == 64 && ld == 16); /* A^T: k x m, lda = k */
    mb_gemm_stored_dims(&p, 'b', &rows, &cols, &ld);
    assert_true(rows == 16 && cols == 32 && ld == 16); /* k x n */
    mb_gemm_stored_dims(&p, 'c', &rows, &cols, &ld);
    assert_true(rows == 64 && cols == 32 && ld == 64);
    p = make(64, 32, 16, 3, "nt", MB_GEMM_BF16);
    mb_gemm_stored_dims(&p, 'a', &rows, &cols, &ld);
    assert_true(rows == 64 && cols == 16 && ld == 64);
    mb_gemm_stored_dims(&p, 'b', &rows, &cols, &ld);
    assert_true(rows == 32 && cols == 16 && ld == 32); /* B^T: n x k, ldb = n */

    const char *layouts[] = { "nn", "nt", "tn", "tt" };
    for (int L = 0; L < 4; L++) {
        p = make(24, 20, 36, 2, layouts[L], MB_GEMM_FP32);
        const char which[] = { 'a', 'b', 'c' };
        const long long strides[] = { p.stride_a, p.stride_b, p.stride_c };
        for (int w = 0; w < 3; w++) {
            mb_gemm_stored_dims(&p, which[w], &rows, &cols, &ld);
            assert_true(ld == rows);                   /* tight, ld >= rows */
            assert_true(rows * cols == strides[w]);    /* batches back to back */
            assert_true(mb_gemm_bytes(&p, which[w]) ==
                        (size_t)(rows * cols * p.batch) *
                            mb_elem_size(w == 0 ? p.a_type : w == 1 ? p.b_type : p.c_type));
        }
        /* op(A)(m-1, k-1) and op(B)(k-1, n-1) are the last stored elements. */
        mb_gemm_stored_dims(&p, 'a', &rows, &cols, &ld);
        long long ia = p.transa ? (p.k - 1) + (p.m - 1) * p.lda : (p.m - 1) + (p.k - 1) * p.lda;
        assert_true(ia == rows - 1 + (cols - 1) * ld);
        mb_gemm_stored_dims(&p, 'b', &rows, &cols, &ld);
        long long ib = p.transb ? (p.n - 1) + (p.k - 1) * p.ldb : (p.k - 1) + (p.n - 1) * p.ldb;
        assert_true(ib == rows - 1 + (cols - 1) * ld);
        assert_int_equal(mb_gemm_c_index(&p, p.m - 1, p.n - 1, 0), p.stride_c - 1);
    }
}

static void expect_rule(mb_gemm_problem p, int cc, int code, const char *words)
{
    mb_err err = { 0 };
    int rc = mb_gemm_problem_check(&p, cc, &err);
    if (rc != code)
        fail_msg("%s %s cc %d: rc %d (%s), expected %d", mb_gemm_dtype_name(p.dtype),
                 mb_gemm_layout_name(&p), cc, rc, err.msg, code);
    if (words && !strstr(err.msg, words))
        fail_msg("'%s' does not say '%s'", err.msg, words);
}

static void test_library_rules(void **s)
{
    (void)s;
    expect_rule(make(64, 64, 64, 1, "tn", MB_GEMM_FP8), 90, MB_OK, NULL);
    expect_rule(make(64, 64, 64, 1, "tn", MB_GEMM_FP8), 89, MB_OK, NULL);
    expect_rule(make(64, 64, 64, 1, "tn", MB_GEMM_FP8), 80, MB_ESKIP, "8.9");
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_FP8), 90, MB_ESKIP, "tn");
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_FP8), 100, MB_OK, NULL); /* Blackwell */
    expect_rule(make(64, 64, 64, 1, "tt", MB_GEMM_FP8), 103, MB_OK, NULL);
    /* Blackwell GeForce (12.x) still needs TN. */
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_FP8), 120, MB_ESKIP, "tn");
    expect_rule(make(64, 64, 64, 1, "tn", MB_GEMM_FP8), 120, MB_OK, NULL);
    expect_rule(make(64, 64, 64, 1, "nt", MB_GEMM_FP8), 89, MB_ESKIP, "8.9");
    expect_rule(make(40, 64, 64, 1, "tn", MB_GEMM_FP8), 90, MB_ESKIP, "16");
    expect_rule(make(64, 64, 40, 1, "tn", MB_GEMM_FP8), 90, MB_ESKIP, "16");
    /* n is free in TN (no leading dimension is n) but not when B is
     * transposed (ldb = n, one byte per element). */
    expect_rule(make(64, 40, 64, 1, "tn", MB_GEMM_FP8), 90, MB_OK, NULL);
    expect_rule(make(64, 40, 64, 1, "nt", MB_GEMM_FP8), 100, MB_ESKIP, "16");
    expect_rule(make(64, 48, 64, 1, "nt", MB_GEMM_FP8), 100, MB_OK, NULL);
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_INT8), 90, MB_ESKIP, "tn");
    expect_rule(make(62, 64, 64, 1, "tn", MB_GEMM_INT8), 90, MB_ESKIP, "multiples of 4");
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_BF16), 75, MB_ESKIP, "8.0");
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_TF32), 70, MB_ESKIP, NULL);
    expect_rule(make(64, 64, 64, 1, "nn", MB_GEMM_FP64), 60, MB_OK, NULL);
    expect_rule(make(35, 8457, 4096, 1, "nn", MB_GEMM_FP16), 80, MB_OK, NULL);
    expect_rule(make(3000000000LL, 1, 1, 1, "nn", MB_GEMM_FP32), 90, MB_ESKIP, "32-bit");
}

static void test_parse_shape(void **s)
{
    (void)s;
    long long m, n, k, b;
    mb_err err = { 0 };
    assert_int_equal(mb_gemm_parse_shape("8192x8192x8192", &m, &n, &k, &b, &err), MB_OK);
    assert_true(m == 8192 && n == 8192 && k == 8192 && b == 1);
    assert_int_equal(mb_gemm_parse_shape("2048x2048x128x64", &m, &n, &k, &b, &err), MB_OK);
    assert_true(m == 2048 && n == 2048 && k == 128 && b == 64);
    assert_int_equal(mb_gemm_parse_shape(" 35 x 8457 X 2560 ", &m, &n, &k, &b, &err), MB_OK);
    assert_true(m == 35 && n == 8457 && k == 2560);
    const char *bad[] = { "", "12", "12x", "1x2", "0x1x1", "axbxc", "1x2x3x4x5", "1x2x3y" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mb_err_clear(&err);
        assert_int_equal(mb_gemm_parse_shape(bad[i], &m, &n, &k, &b, &err), MB_EUSAGE);
        assert_non_null(strstr(err.msg, "shape"));
    }
}

static void test_inputs(void **s)
{
    (void)s;
    /* Exactly representable, deterministic, varied, not all zero. */
    for (int d = 0; d < MB_GEMM_NDTYPES; d++) {
        const char *layout = (d == MB_GEMM_FP8 || d == MB_GEMM_INT8) ? "tn" : "nn";
        mb_gemm_problem p = make(32, 16, 64, 2, layout, (mb_gemm_dtype)d);
        mb_gemm_problem q = p;
        q.seed = 8;
        int zeros = 0, differ = 0;
        unsigned char buf[4096 * 8];
        mb_gemm_fill(&p, 'a', buf, 100, 4096);
        for (uint64_t i = 0; i < 4096; i++) {
            double v = mb_gemm_input(&p, 'a', 100 + i);
            assert_true(v == mb_gemm_input(&p, 'a', 100 + i));
            assert_true(v == mb_elem_load(p.a_type, buf + i * mb_elem_size(p.a_type)));
            assert_true(v >= -8 && v <= 8);
            if (d == MB_GEMM_FP8)
                assert_true(v == floor(v) && fabs(v) <= 4);
            else if (d == MB_GEMM_INT8)
                assert_true(v == floor(v) && fabs(v) <= 8);
            else
                assert_true(fabs(v) <= 1);
            zeros += v == 0;
            differ += v != mb_gemm_input(&q, 'a', 100 + i);
        }
        assert_true(zeros < 4096 / 8); /* fp8: 1/9 zeros, others none */
        assert_true(differ > 4096 / 2);
        assert_true(mb_gemm_input(&p, 'a', 5) != mb_gemm_input(&p, 'b', 5) ||
                    mb_gemm_input(&p, 'a', 6) != mb_gemm_input(&p, 'b', 6));
    }
}

/* An independent GEMM over host copies, for comparing the reference. */
static double naive(const mb_gemm_problem *p, const unsigned char *a, const unsigned char *b,
                    long long i, long long j, long long bt, long long kmax)
{
    size_t ea = mb_elem_size(p->a_type), eb = mb_elem_size(p->b_type);
    double sum = 0;
    for (long long l = 0; l < kmax; l++) {
        /* op(A)(i,l): A stored m x k (lda = m) or k x m (lda = k). */
        long long ia = p->transa ? bt * p->k * p->m + i * p->k + l : bt * p->m * p->k + l * p->m + i;
        long long ib = p->transb ? bt * p->k * p->n + l * p->n + j : bt * p->k * p->n + j * p->k + l;
        sum += mb_elem_load(p->a_type, a + ia * ea) * mb_elem_load(p->b_type, b + ib * eb);
    }
    return sum * p->alpha;
}

static void test_reference_vs_naive(void **s)
{
    (void)s;
    const char *layouts[] = { "nn", "nt", "tn", "tt" };
    for (int d = 0; d < MB_GEMM_NDTYPES; d++) {
        for (int L = 0; L < 4; L++) {
            mb_gemm_problem p = make(24, 20, 36, 3, layouts[L], (mb_gemm_dtype)d);
            size_t na = mb_gemm_bytes(&p, 'a'), nb = mb_gemm_bytes(&p, 'b');
            unsigned char *a = malloc(na), *b = malloc(nb);
            mb_gemm_fill(&p, 'a', a, 0, na / mb_elem_size(p.a_type));
            mb_gemm_fill(&p, 'b', b, 0, nb / mb_elem_size(p.b_type));
            for (long long bt = 0; bt < p.batch; bt++)
                for (long long i = 0; i < p.m; i += 5)
                    for (long long j = 0; j < p.n; j += 3) {
                        mb_gemm_ref r = mb_gemm_reference(&p, i, j, bt);
                        double want = naive(&p, a, b, i, j, bt, p.k);
                        assert_true(fabs(r.value - want) <= 1e-12 * (1 + fabs(want)));
                        assert_true(r.sum_abs >= fabs(r.value));
                        assert_true(r.norm2 <= r.sum_abs + 1e-12 && r.norm2 > 0);
                    }
            free(a);
            free(b);
        }
    }
    /* C(i,j) of batch b sits at b*m*n + i + j*m. */
    mb_gemm_problem p = make(24, 20, 36, 3, "nn", MB_GEMM_FP32);
    assert_int_equal(mb_gemm_c_index(&p, 5, 7, 2), 2 * 24 * 20 + 5 + 7 * 24);
}

static void test_tolerance(void **s)
{
    (void)s;
    mb_gemm_ref r = { 10.0, 1000.0, 30.0 };
    mb_gemm_problem p = make(8, 8, 8, 1, "tn", MB_GEMM_INT8);
    assert_true(mb_gemm_tolerance(&p, &r) == 0); /* int8 is exact */
    p = make(8, 8, 8, 1, "nn", MB_GEMM_FP32);
    assert_true(fabs(mb_gemm_tolerance(&p, &r) - 2e-3) < 1e-12); /* 2e-6 * 1000 */
    p = make(8, 8, 8, 1, "nn", MB_GEMM_FP64);
    assert_true(mb_gemm_tolerance(&p, &r) < 1e-8);
    p = make(8, 8, 8, 1, "nn", MB_GEMM_BF16);
    double bf16 = mb_gemm_tolerance(&p, &r);
    p = make(8, 8, 8, 1, "nn", MB_GEMM_FP16);
    assert_true(bf16 > mb_gemm_tolerance(&p, &r)); /* bf16 has 3 fewer mantissa bits */
}

/* ---- the sampled check on host data ------------------------------------------------ */

typedef enum corruption {
    GOOD,          /* the reference rounded to the output type */
    ONE_WRONG,     /* one element off by 5% of its scale */
    NAN_ONE,       /* one NaN */
    ZEROS,         /* all zero (a kernel that did nothing) */
    TRANSPOSED,    /* C^T written instead of C */
    NO_SCALE,      /* fp8 scales ignored */
    SHORT_K,       /* the last 64 terms of every dot product dropped */
    OTHER_BATCH,   /* batch b holds batch b+1's result */
    /* What the kernel computed differs from the problem described: */
    A_TRANSPOSED,  /* op(A) flag ignored (needs m == k: the same storage) */
    WRONG_LDB,     /* B read with a padded leading dimension (ldb + 8) */
    B_BATCH0,      /* B's batch stride ignored: every batch uses B of batch 0 */
    A_SCALE_ONLY,  /* fp8: B's scale pointer ignored */
    TF32_MATH,     /* fp32 inputs rounded to TF32 (10-bit mantissa) */
    FP32_SEQUENTIAL, /* correct: fp32 products summed one by one in fp32 */
} corruption;

typedef struct host_result {
    const mb_gemm_problem *p;
    corruption c;
    uint64_t bad_index; /* ONE_WRONG / NAN_ONE */
} host_result;

static double ref_value(const mb_gemm_problem *p, long long i, long long j, long long b,
                        long long kmax)
{
    mb_gemm_problem q = *p;
    q.k = kmax; /* same lda/ldb, fewer terms */
    return mb_gemm_reference(&q, i, j, b).value;
}

/* The result of a problem the kernel got wrong: q is p with one field off. */
static double ref_of(mb_gemm_problem q, long long i, long long j, long long b)
{
    return mb_gemm_reference(&q, i, j, b).value;
}

/* fp32 -> TF32 (1 + 10 mantissa bits), round to nearest even, as the tensor
 * cores see fp32 inputs under CUBLAS_COMPUTE_32F_FAST_TF32. */
static double to_tf32(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    x = (x + 0xFFFu + ((x >> 13) & 1u)) & ~0x1FFFu;
    memcpy(&f, &x, 4);
    return f;
}

/* C(i,j) of batch b as a kernel with the given inner arithmetic makes it. */
static double emulated(const mb_gemm_problem *p, long long i, long long j, long long b,
                       corruption c)
{
    double sum = 0;
    float fsum = 0;
    for (long long l = 0; l < p->k; l++) {
        long long ia = b * p->stride_a + (p->transa ? l + i * p->lda : i + l * p->lda);
        long long ib = b * p->stride_b + (p->transb ? j + l * p->ldb : l + j * p->ldb);
        double x = mb_gemm_input(p, 'a', (uint64_t)ia), y = mb_gemm_input(p, 'b', (uint64_t)ib);
        if (c == TF32_MATH)
            sum += to_tf32(x) * to_tf32(y);
        else
            fsum = (float)(fsum + (float)(x * y));
    }
    return p->alpha * (c == TF32_MATH ? sum : fsum);
}

static int host_fetch(void *ctx, int sample, uint64_t c_index, double *value, mb_err *err)
{
    (void)sample;
    (void)err;
    host_result *h = ctx;
    const mb_gemm_problem *p = h->p;
    long long b = (long long)(c_index / (uint64_t)p->stride_c);
    long long rest = (long long)(c_index % (uint64_t)p->stride_c);
    long long i = rest % p->ldc, j = rest / p->ldc;
    double v;
    switch (h->c) {
    case TRANSPOSED:
        v = ref_value(p, j % p->m, i % p->n, b, p->k);
        break;
    case SHORT_K:
        v = ref_value(p, i, j, b, p->k - 64);
        break;
    case OTHER_BATCH:
        v = ref_value(p, i, j, (b + 1) % p->batch, p->k);
        break;
    case ZEROS:
        v = 0;
        break;
    case A_TRANSPOSED: {
        mb_gemm_problem q = *p;
        q.transa = !q.transa;
        v = ref_of(q, i, j, b);
        break;
    }
    case WRONG_LDB: {
        mb_gemm_problem q = *p;
        q.ldb += 8;
        v = ref_of(q, i, j, b);
        break;
    }
    case B_BATCH0: {
        mb_gemm_problem q = *p;
        q.stride_b = 0;
        v = ref_of(q, i, j, b);
        break;
    }
    case A_SCALE_ONLY:
        v = ref_value(p, i, j, b, p->k) / p->b_scale;
        break;
    case TF32_MATH:
    case FP32_SEQUENTIAL:
        v = emulated(p, i, j, b, h->c);
        break;
    default:
        v = ref_value(p, i, j, b, p->k);
    }
    if (h->c == NO_SCALE)
        v /= p->alpha;
    /* What the device would hold: the value rounded to the output type. */
    unsigned char buf[8];
    mb_elem_store(p->c_type, buf, p->c_type == MB_ELEM_I32 ? nearbyint(v) : v);
    *value = mb_elem_load(p->c_type, buf);
    if (c_index == h->bad_index && h->c == ONE_WRONG) {
        mb_gemm_ref r = mb_gemm_reference(p, i, j, b);
        *value += 0.05 * (r.norm2 + fabs(r.value)) + 1;
    }
    if (c_index == h->bad_index && h->c == NAN_ONE)
        *value = NAN;
    return MB_OK;
}

static int run_check(const mb_gemm_problem *p, corruption c, int samples, mb_err *err,
                     mb_gemm_check_result *res)
{
    host_result h = { p, c, mb_gemm_c_index(p, 0, 0, 0) };
    if (c == ONE_WRONG || c == NAN_ONE)
        h.bad_index = mb_gemm_c_index(p, p->m - 1, p->n - 1, p->batch - 1); /* a corner: sampled */
    return mb_gemm_check(p, samples, host_fetch, &h, res, err);
}

static void test_check_passes_correct_output(void **s)
{
    (void)s;
    for (int d = 0; d < MB_GEMM_NDTYPES; d++) {
        const char *layout = (d == MB_GEMM_FP8 || d == MB_GEMM_INT8) ? "tn" : "nt";
        mb_gemm_problem p = make(64, 48, 512, 2, layout, (mb_gemm_dtype)d);
        mb_err err = { 0 };
        mb_gemm_check_result res;
        int rc = run_check(&p, GOOD, 128, &err, &res);
        if (rc != MB_OK)
            fail_msg("%s: %s", mb_gemm_dtype_name(p.dtype), err.msg);
        assert_int_equal(res.checked, 128);
        assert_int_equal(res.mismatches, 0);
        assert_true(res.worst_ratio < 0.5); /* margin: rounding uses well under half */
    }
    /* Small outputs are checked whole. */
    mb_gemm_problem p = make(4, 3, 16, 2, "nn", MB_GEMM_FP32);
    mb_err err = { 0 };
    mb_gemm_check_result res;
    assert_int_equal(run_check(&p, GOOD, 256, &err, &res), MB_OK);
    assert_int_equal(res.checked, 24);
}

static void expect_caught_shape(mb_gemm_dtype d, corruption c, long long m, long long n,
                                long long k)
{
    const char *layout = (d == MB_GEMM_FP8 || d == MB_GEMM_INT8) ? "tn" : "nn";
    mb_gemm_problem p = make(m, n, k, 2, layout, d);
    mb_err err = { 0 };
    mb_gemm_check_result res;
    int rc = run_check(&p, c, 64, &err, &res);
    if (rc != MB_EVERIFY)
        fail_msg("%s corruption %d not caught (rc %d, worst ratio %.3g)", mb_gemm_dtype_name(d),
                 (int)c, rc, res.worst_ratio);
    assert_true(res.mismatches >= 1);
    assert_non_null(strstr(err.msg, "expected"));
    assert_non_null(strstr(err.msg, mb_gemm_dtype_name(d)));
}

static void expect_caught(mb_gemm_dtype d, corruption c, long long k)
{
    expect_caught_shape(d, c, 64, 48, k);
}

/* A benchmark that is fast because it is wrong must fail. */
static void test_check_catches_corruption(void **s)
{
    (void)s;
    for (int d = 0; d < MB_GEMM_NDTYPES; d++) {
        expect_caught((mb_gemm_dtype)d, ONE_WRONG, 256);
        expect_caught((mb_gemm_dtype)d, NAN_ONE, 256);
        expect_caught((mb_gemm_dtype)d, ZEROS, 256);
        expect_caught((mb_gemm_dtype)d, TRANSPOSED, 256);
        expect_caught((mb_gemm_dtype)d, OTHER_BATCH, 256);
        /* Dropping one 64-deep slice of k = 2048 must show, even in bf16. */
        expect_caught((mb_gemm_dtype)d, SHORT_K, 2048);
    }
    expect_caught(MB_GEMM_FP8, NO_SCALE, 256);
    expect_caught(MB_GEMM_FP8, A_SCALE_ONLY, 256);
    /* The message names the element. */
    mb_gemm_problem p = make(64, 48, 128, 2, "nn", MB_GEMM_FP32);
    mb_err err = { 0 };
    mb_gemm_check_result res;
    assert_int_equal(run_check(&p, ONE_WRONG, 16, &err, &res), MB_EVERIFY);
    assert_non_null(strstr(err.msg, "C[63,47] of batch 1"));
}

/* The kernel computed another problem than the one described (a transposed
 * operand, a wrong leading dimension, a batch stride ignored): random inputs
 * make that an unrelated result, far outside every dtype's tolerance. */
static void test_check_catches_wrong_operands(void **s)
{
    (void)s;
    for (int d = 0; d < MB_GEMM_NDTYPES; d++) {
        expect_caught_shape((mb_gemm_dtype)d, A_TRANSPOSED, 64, 48, 64);
        expect_caught_shape((mb_gemm_dtype)d, A_TRANSPOSED, 256, 16, 256);
        expect_caught((mb_gemm_dtype)d, WRONG_LDB, 256);
        expect_caught((mb_gemm_dtype)d, B_BATCH0, 256);
    }
}

/* fp32 means no TF32: an fp32 case that ran TF32 math (8x the rate on an
 * H100) must fail even at the deepest k the suites use, while fp32
 * arithmetic summed in the worst order passes with a wide margin. */
static void test_fp32_rejects_tf32(void **s)
{
    (void)s;
    const long long ks[] = { 256, 4096, 16384 };
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        expect_caught_shape(MB_GEMM_FP32, TF32_MATH, 32, 32, ks[i]);
        mb_gemm_problem p = make(32, 32, ks[i], 2, "nn", MB_GEMM_FP32);
        mb_err err = { 0 };
        mb_gemm_check_result res;
        if (run_check(&p, FP32_SEQUENTIAL, 48, &err, &res) != MB_OK)
            fail_msg("fp32 k=%lld: %s", ks[i], err.msg);
        assert_true(res.worst_ratio < 0.2);
    }
    /* The tf32 dtype accepts TF32 arithmetic with room to spare. */
    mb_gemm_problem p = make(32, 32, 4096, 2, "nn", MB_GEMM_TF32);
    mb_err err = { 0 };
    mb_gemm_check_result res;
    assert_int_equal(run_check(&p, TF32_MATH, 48, &err, &res), MB_OK);
    assert_true(res.worst_ratio < 0.2);
}

static void test_rotate(void **s)
{
    (void)s;
    size_t mib = 1 << 20;
    assert_int_equal(mb_gemm_auto_rotate(6 * mib, 50 * mib), 25); /* ceil(150/6) */
    assert_int_equal(mb_gemm_auto_rotate(1024 * mib, 50 * mib), 1);
    assert_int_equal(mb_gemm_auto_rotate(100 * mib, 50 * mib), 2);
    assert_int_equal(mb_gemm_auto_rotate(1000, 50 * mib), MB_GEMM_MAX_ROTATE);
    assert_int_equal(mb_gemm_auto_rotate(6 * mib, 0), 1);
}

/* A fake device for mb_gemm_choose_rotate: fits below fake_free bytes;
 * fake_rc is returned instead when it is not MB_ESKIP (cudaMemGetInfo failed). */
static size_t fake_free;
static int fake_rc = MB_ESKIP;
static size_t fake_last_ask;
static int fake_fits(size_t bytes, mb_err *err)
{
    fake_last_ask = bytes;
    if (fake_rc != MB_ESKIP)
        return mb_errf(err, fake_rc, "cudaMemGetInfo: no device");
    if (bytes > fake_free)
        return mb_errf(err, MB_ESKIP, "needs %zu bytes, %zu free", bytes, fake_free);
    return MB_OK;
}

static void test_choose_rotate(void **s)
{
    (void)s;
    size_t mib = 1 << 20;
    int sets = 0;
    bool reduced = true;
    mb_err err = { 0 };
    fake_rc = MB_ESKIP;
    /* Plenty of memory: the automatic count, workspace counted once. */
    fake_free = 1 << 30;
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 10 * mib, 50 * mib, 0, fake_fits, &sets,
                                           &reduced, &err),
                     MB_OK);
    assert_int_equal(sets, 25);
    assert_false(reduced);
    assert_int_equal(fake_last_ask, 25 * 6 * mib + 10 * mib);
    /* 100 MiB free: 25 -> 12 (82 MiB) fits. */
    fake_free = 100 * mib;
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 10 * mib, 50 * mib, 0, fake_fits, &sets,
                                           &reduced, &err),
                     MB_OK);
    assert_int_equal(sets, 12);
    assert_true(reduced);
    /* Halved down to one set, then one set does not fit: the fit's message. */
    fake_free = 5 * mib;
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 0, 50 * mib, 0, fake_fits, &sets, &reduced,
                                           &err),
                     MB_ESKIP);
    assert_int_equal(sets, 1);
    assert_non_null(strstr(err.msg, "free"));
    /* A given count is never reduced. */
    mb_err err2 = { 0 };
    fake_free = 100 * mib;
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 0, 50 * mib, 20, fake_fits, &sets, &reduced,
                                           &err2),
                     MB_ESKIP);
    assert_int_equal(sets, 20);
    assert_false(reduced);
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 0, 50 * mib, 3, fake_fits, &sets, &reduced,
                                           &err2),
                     MB_OK);
    assert_int_equal(sets, 3);
    /* Any other failure is returned at once, not halved away. */
    mb_err err3 = { 0 };
    fake_rc = MB_EFAIL;
    assert_int_equal(mb_gemm_choose_rotate(6 * mib, 0, 50 * mib, 0, fake_fits, &sets, &reduced,
                                           &err3),
                     MB_EFAIL);
    assert_int_equal(sets, 25);
    assert_non_null(strstr(err3.msg, "cudaMemGetInfo"));
    fake_rc = MB_ESKIP;
}

static void test_arch_table(void **s)
{
    (void)s;
    double v = 0;
    mb_gpu_arch_row row;
    mb_err err = { 0 };
    assert_int_equal(mb_gpu_arch_rate(NULL, 9, 0, "NVIDIA H100 80GB HBM3", "bf16", &v, &row, &err),
                     MB_OK);
    assert_true(v == 4096);
    assert_string_equal(row.desc, "sm_90 Hopper (GH100) bf16 4096 FLOP/clk/SM");
    assert_int_equal(mb_gpu_arch_rate(NULL, 9, 0, "x", "fp8", &v, NULL, &err), MB_OK);
    assert_true(v == 8192);
    assert_int_equal(mb_gpu_arch_rate(NULL, 9, 0, "x", "fp64", &v, NULL, &err), MB_OK);
    assert_true(v == 256); /* DMMA */
    assert_int_equal(mb_gpu_arch_rate(NULL, 8, 0, "x", "tf32", &v, NULL, &err), MB_OK);
    assert_true(v == 1024);
    /* GeForce Ada: half-rate fp32-accumulate tensor math; L40S full rate. */
    assert_int_equal(
        mb_gpu_arch_rate(NULL, 8, 9, "NVIDIA GeForce RTX 4090", "bf16", &v, NULL, &err), MB_OK);
    assert_true(v == 512);
    assert_int_equal(mb_gpu_arch_rate(NULL, 8, 9, "NVIDIA L40S", "bf16", &v, NULL, &err), MB_OK);
    assert_true(v == 1024);
    assert_int_equal(
        mb_gpu_arch_rate(NULL, 8, 9, "NVIDIA GeForce RTX 4090", "int8", &v, NULL, &err), MB_OK);
    assert_true(v == 2048); /* no GeForce override for int8 */
    assert_int_equal(mb_gpu_arch_rate(NULL, 8, 0, "x", "fp8", &v, NULL, &err), MB_ESKIP);
    assert_int_equal(mb_gpu_arch_rate(NULL, 12, 0, "x", "bf16", &v, NULL, &err), MB_ESKIP);
    /* Known answers: the table times datasheet SMs and clocks gives the
     * datasheet figures. */
    assert_int_equal(mb_gpu_arch_rate(NULL, 8, 0, "x", "bf16", &v, NULL, &err), MB_OK);
    assert_true(fabs(108 * 1.41e9 * v / 1e12 - 312) < 1); /* A100 */
    assert_int_equal(mb_gpu_arch_rate(NULL, 8, 9, "NVIDIA L4", "fp8", &v, NULL, &err), MB_OK);
    assert_true(fabs(58 * 2.04e9 * v / 1e12 - 242.5) < 1); /* L4 */
}

static void test_peak_report(void **s)
{
    (void)s;
    mb_report r;
    /* Datasheet first, computed figure beside it. */
    mb_report_init(&r);
    mb_gpu_peak_report(&r, "NVIDIA H100 80GB HBM3", 9, 0, 132, 1.98e9, "bf16");
    assert_true(fabs(r.peak - 989.4) < 0.01);
    assert_non_null(strstr(r.peak_source, "datasheet"));
    assert_non_null(strstr(r.peak_source, "h100-sxm.ini"));
    const mb_metric *m = mb_report_find_metric(&r, "peak_from_attributes");
    assert_non_null(m);
    assert_true(fabs(m->value - 132 * 1.98e9 * 4096 / 1e12) < 0.01);
    assert_string_equal(m->unit, "TFLOP/s");
    mb_report_free(&r);
    /* fp64 GEMMs: the FP64 tensor-core figure. */
    mb_report_init(&r);
    mb_gpu_peak_report(&r, "NVIDIA A100-SXM4-80GB", 8, 0, 108, 1.41e9, "fp64");
    assert_true(fabs(r.peak - 19.5) < 0.01);
    assert_non_null(strstr(r.peak_source, "fp64_tensor"));
    mb_report_free(&r);
    /* int8 in TOPS. */
    mb_report_init(&r);
    mb_gpu_peak_report(&r, "NVIDIA H100 PCIe", 9, 0, 114, 1.755e9, "int8");
    assert_true(fabs(r.peak - 1513) < 0.01);
    assert_string_equal(mb_report_find_metric(&r, "peak_from_attributes")->unit, "TOP/s");
    mb_report_free(&r);
    /* No datasheet: the computed figure is the peak, and a note says so. */
    mb_report_init(&r);
    mb_gpu_peak_report(&r, "NVIDIA Imaginary 9000", 9, 0, 100, 2e9, "fp16");
    assert_true(fabs(r.peak - 100 * 2e9 * 4096 / 1e12) < 0.01);
    assert_non_null(strstr(r.peak_source, "computed"));
    assert_true(r.n_notes >= 1);
    assert_non_null(strstr(r.notes[r.n_notes - 1], "no datasheet"));
    mb_report_free(&r);
    /* Datasheet without the dtype (A100 has no fp8) and no table entry: no peak. */
    mb_report_init(&r);
    mb_gpu_peak_report(&r, "NVIDIA A100-SXM4-40GB", 8, 0, 108, 1.41e9, "fp8");
    assert_true(r.peak == 0);
    assert_true(r.n_notes >= 1);
    mb_report_free(&r);
}

static bool has_note(const mb_report *r, const char *fragment)
{
    for (int i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], fragment))
            return true;
    return false;
}

/* The rotation notes GEMM and conv share: chosen vs given, reduced, and
 * whether all sets together still fit in L2. */
static void test_report_rotation(void **st)
{
    (void)st;
    const size_t mib = 1 << 20;
    mb_report r;
    mb_report_init(&r);
    mb_gemm_report_rotation(&r, "of x, w and y", 25, 6 * mib, 50 * mib, false, false);
    assert_true(mb_report_find_metric(&r, "buffer_sets")->value == 25);
    assert_true(has_note(&r, "rotating through 25 buffer set(s) of x, w and y of 6.0 MiB (150.0 MiB in all"));
    assert_false(has_note(&r, "fit in L2"));
    assert_false(has_note(&r, "reduced"));
    mb_report_free(&r);

    mb_report_init(&r);
    mb_gemm_report_rotation(&r, "", 2, 20 * mib, 50 * mib, true, false);
    assert_true(has_note(&r, "rotate=2 given: 2 buffer set(s) of 20.0 MiB, 40.0 MiB in all (L2 50.0 MiB)"));
    assert_true(has_note(&r, "all buffer sets together (40.0 MiB) fit in L2 (50.0 MiB)"));
    mb_report_free(&r);

    mb_report_init(&r);
    mb_gemm_report_rotation(&r, "", 3, 100 * mib, 50 * mib, false, true);
    assert_true(has_note(&r, "buffer sets reduced to 3 to fit in device memory"));
    assert_false(has_note(&r, "fit in L2"));
    mb_report_free(&r);
}

/* The pointer check itself, on every pointer cuBLASLt reads: known answers. */
static void test_fp8_pointer_check(void **st)
{
    (void)st;
    static _Alignas(MB_GEMM_SCALE_SLOT_BYTES) unsigned char buf[4 * MB_GEMM_SCALE_SLOT_BYTES];
    const mb_gemm_fp8_pointers good = { buf, buf + 256, buf + 512, buf + 768, buf + 768 + 16 };
    mb_err err = { 0 };
    assert_int_equal(mb_gemm_fp8_pointers_check(&good, &err), MB_OK);
    const char *names[] = { "the A pointer", "the B pointer", "the C/D pointer", "the A scale", "the B scale" };
    for (int i = 0; i < 5; i++)
        for (int off = 1; off < 16; off *= 2) { /* 1, 2, 4, 8 bytes off: all refused */
            mb_gemm_fp8_pointers bad = good;
            const void **slot[] = { &bad.a, &bad.b, &bad.c, &bad.a_scale, &bad.b_scale };
            *slot[i] = (const unsigned char *)*slot[i] + off;
            mb_err e = { 0 };
            assert_int_equal(mb_gemm_fp8_pointers_check(&bad, &e), MB_EUSAGE);
            if (!strstr(e.msg, names[i]))
                fail_msg("pointer %d off by %d: %s", i, off, e.msg);
        }
    mb_gemm_fp8_pointers null = good;
    null.b_scale = NULL;
    assert_int_equal(mb_gemm_fp8_pointers_check(&null, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "NULL"));
    /* The slots are MB_GEMM_SCALE_SLOT_BYTES apart. */
    assert_ptr_equal(mb_gemm_scale_slot(buf, MB_GEMM_SCALE_B), (const float *)(buf + MB_GEMM_SCALE_SLOT_BYTES));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_problem_layouts),
        cmocka_unit_test(test_stored_dims),
        cmocka_unit_test(test_library_rules),
        cmocka_unit_test(test_parse_shape),
        cmocka_unit_test(test_inputs),
        cmocka_unit_test(test_reference_vs_naive),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_check_passes_correct_output),
        cmocka_unit_test(test_check_catches_corruption),
        cmocka_unit_test(test_check_catches_wrong_operands),
        cmocka_unit_test(test_fp32_rejects_tf32),
        cmocka_unit_test(test_rotate),
        cmocka_unit_test(test_choose_rotate),
        cmocka_unit_test(test_report_rotation),
        cmocka_unit_test(test_arch_table),
        cmocka_unit_test(test_peak_report),
        cmocka_unit_test(test_fp8_pointer_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
