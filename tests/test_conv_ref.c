/* The host side of the cuDNN convolution benchmark (kernels/shared/conv_ref.c), no
 * GPU needed: shapes, layouts, the three references (checked against a naive
 * convolution and against each other through the adjoint identities
 * <dy, conv(x, w)> = <dx(dy, w), x> = <dw(dy, x), w>), the tolerance (strict
 * fp32 must reject TF32-rounded results), the sampled check against
 * corrupted outputs, and the two-algorithm comparison. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conv_ref.h"
#include "formulas.h"

static mb_conv_problem make(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                            int dil, mb_conv_dir dir, mb_conv_layout layout, mb_conv_dtype dtype)
{
    mb_conv_problem p;
    mb_err err = { 0 };
    if (mb_conv_problem_init(&p, n, c, h, w, k, r, s, pad, pad, stride, stride, dil, dir, layout,
                             dtype, 3, &err) != MB_OK)
        fail_msg("init: %s", err.msg);
    return p;
}

static void test_names_and_shapes(void **s)
{
    (void)s;
    mb_conv_dir d;
    mb_conv_layout l;
    mb_conv_dtype t;
    mb_err err = { 0 };
    assert_int_equal(mb_conv_parse("bwd_filter", "nhwc", "tf32", &d, &l, &t, &err), MB_OK);
    assert_int_equal(d, MB_CONV_BWD_FILTER);
    assert_int_equal(l, MB_CONV_NHWC);
    assert_int_equal(t, MB_CONV_TF32);
    assert_int_equal(mb_conv_parse("bwd", "nhwc", "tf32", &d, &l, &t, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "direction"));
    mb_err_clear(&err);
    assert_int_equal(mb_conv_parse("fwd", "chwn", "tf32", &d, &l, &t, &err), MB_EUSAGE);
    mb_err_clear(&err);
    assert_int_equal(mb_conv_parse("fwd", "nchw", "fp8", &d, &l, &t, &err), MB_EUSAGE);
    assert_string_equal(mb_conv_dir_name(MB_CONV_BWD_DATA), "bwd_data");

    /* ResNet-50 conv1: 224x224x3, 64 7x7 filters, stride 2, pad 3 -> 112x112. */
    mb_conv_problem p = make(32, 3, 224, 224, 64, 7, 7, 3, 2, 1, MB_CONV_FWD, MB_CONV_NCHW,
                             MB_CONV_FP16);
    assert_int_equal(p.p, 112);
    assert_int_equal(p.q, 112);
    assert_int_equal(p.elem, MB_ELEM_F16);
    assert_true(mb_conv_problem_flops(&p) == mb_conv_flops(32, 64, 3, 7, 7, 112, 112));
    assert_true(mb_conv_problem_flops(&p) == 2.0 * 32 * 64 * 3 * 49 * 112 * 112);
    assert_int_equal(mb_conv_elems(&p, 'x'), 32 * 3 * 224 * 224);
    assert_int_equal(mb_conv_elems(&p, 'w'), 64 * 3 * 49);
    assert_int_equal(mb_conv_elems(&p, 'y'), 32 * 64 * 112 * 112);
    assert_int_equal(mb_conv_output(&p), 'y');
    p.dir = MB_CONV_BWD_DATA;
    assert_int_equal(mb_conv_output(&p), 'x');
    p.dir = MB_CONV_BWD_FILTER;
    assert_int_equal(mb_conv_output(&p), 'w');
    /* Same FLOPs whatever the direction. */
    mb_conv_problem q = make(32, 3, 224, 224, 64, 7, 7, 3, 2, 1, MB_CONV_BWD_FILTER, MB_CONV_NCHW,
                             MB_CONV_FP16);
    assert_true(mb_conv_problem_flops(&q) == mb_conv_problem_flops(&p));

    assert_int_equal(mb_conv_problem_init(&p, 1, 1, 2, 2, 1, 5, 5, 0, 0, 1, 1, 1, MB_CONV_FWD,
                                          MB_CONV_NCHW, MB_CONV_FP32, 1, &err),
                     MB_EUSAGE);
    mb_err_clear(&err);
    assert_int_equal(mb_conv_problem_init(&p, 0, 1, 2, 2, 1, 1, 1, 0, 0, 1, 1, 1, MB_CONV_FWD,
                                          MB_CONV_NCHW, MB_CONV_FP32, 1, &err),
                     MB_EUSAGE);
}

/* cuDNN's legacy API takes at most INT_MAX elements per tensor: the batch
 * that crosses it on ResNet-50 conv1's output (64 x 112 x 112 per image). */
static void test_cudnn_limits(void **s)
{
    (void)s;
    mb_err err = { 0 };
    int per_image = 64 * 112 * 112, n_ok = 2147483647 / per_image; /* 2674 */
    mb_conv_problem p = make(n_ok, 3, 224, 224, 64, 7, 7, 3, 2, 1, MB_CONV_FWD, MB_CONV_NHWC,
                             MB_CONV_BF16);
    assert_int_equal(mb_conv_check_limits(&p, &err), MB_OK);
    p = make(n_ok + 1, 3, 224, 224, 64, 7, 7, 3, 2, 1, MB_CONV_FWD, MB_CONV_NHWC, MB_CONV_BF16);
    assert_int_equal(mb_conv_check_limits(&p, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "tensor y has 2147532800 elements"));
    mb_err_clear(&err);
    /* The filter alone: 4096 x 4096 x 11 x 12 = 2214592512 elements. */
    p = make(1, 4096, 12, 12, 4096, 11, 12, 0, 1, 1, MB_CONV_BWD_FILTER, MB_CONV_NCHW,
             MB_CONV_FP32);
    assert_int_equal(mb_conv_check_limits(&p, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "tensor w"));
}

static void test_layout_indices(void **s)
{
    (void)s;
    /* N=2 C=5 H=6 W=7, element (n=1, c=2, h=3, w=4). */
    mb_conv_problem p = make(2, 5, 6, 7, 3, 3, 3, 1, 1, 1, MB_CONV_FWD, MB_CONV_NCHW, MB_CONV_FP32);
    assert_int_equal(mb_conv_x_index(&p, 1, 2, 3, 4), ((1 * 5 + 2) * 6 + 3) * 7 + 4);
    assert_int_equal(mb_conv_w_index(&p, 2, 4, 1, 2), ((2 * 5 + 4) * 3 + 1) * 3 + 2); /* KCRS */
    assert_int_equal(mb_conv_y_index(&p, 1, 2, 5, 6), ((1 * 3 + 2) * 6 + 5) * 7 + 6);
    p.layout = MB_CONV_NHWC;
    assert_int_equal(mb_conv_x_index(&p, 1, 2, 3, 4), ((1 * 6 + 3) * 7 + 4) * 5 + 2);
    assert_int_equal(mb_conv_w_index(&p, 2, 4, 1, 2), ((2 * 3 + 1) * 3 + 2) * 5 + 4); /* KRSC */
    assert_int_equal(mb_conv_y_index(&p, 1, 2, 5, 6), ((1 * 6 + 5) * 7 + 6) * 3 + 2);
}

/* Naive forward convolution over host arrays, independent of the reference. */
static double naive_fwd(const mb_conv_problem *p, const double *x, const double *w, int n, int k,
                        int pp, int qq)
{
    double sum = 0;
    for (int c = 0; c < p->c; c++)
        for (int r = 0; r < p->r; r++)
            for (int s = 0; s < p->s; s++) {
                int h = pp * p->stride_h - p->pad_h + r * p->dil_h;
                int ww = qq * p->stride_w - p->pad_w + s * p->dil_w;
                if (h >= 0 && h < p->h && ww >= 0 && ww < p->w)
                    sum += x[mb_conv_x_index(p, n, c, h, ww)] * w[mb_conv_w_index(p, k, c, r, s)];
            }
    return sum;
}

static double *host_tensor(const mb_conv_problem *p, char t)
{
    uint64_t n = mb_conv_elems(p, t);
    double *v = malloc(n * sizeof *v);
    for (uint64_t i = 0; i < n; i++)
        v[i] = mb_conv_input(p, t, i);
    return v;
}

static void test_fwd_vs_naive(void **s)
{
    (void)s;
    for (int l = 0; l < 2; l++) {
        mb_conv_problem p = make(2, 3, 9, 8, 4, 3, 2, 1, 2, 1, MB_CONV_FWD, (mb_conv_layout)l,
                                 MB_CONV_BF16);
        double *x = host_tensor(&p, 'x'), *w = host_tensor(&p, 'w');
        for (int n = 0; n < p.n; n++)
            for (int k = 0; k < p.k; k++)
                for (int pp = 0; pp < p.p; pp++)
                    for (int qq = 0; qq < p.q; qq++) {
                        mb_conv_ref r = mb_conv_reference(&p, mb_conv_y_index(&p, n, k, pp, qq));
                        assert_true(fabs(r.value - naive_fwd(&p, x, w, n, k, pp, qq)) < 1e-12);
                    }
        free(x);
        free(w);
    }
}

/* <dy, conv(x,w)> = <x, dx(dy,w)> = <w, dw(dy,x)> for strided, padded,
 * dilated, non-square problems in both layouts: checks bwd_data and
 * bwd_filter against fwd without a second implementation. */
static void test_adjoint_identities(void **s)
{
    (void)s;
    const int cfg[][6] = { /* h, w, r, pad, stride, dil */
                           { 9, 7, 3, 1, 1, 1 },
                           { 11, 10, 3, 1, 2, 1 },
                           { 12, 9, 3, 2, 2, 2 },
                           { 8, 8, 1, 0, 2, 1 },
                           { 10, 9, 5, 2, 3, 1 } };
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++) {
        for (int l = 0; l < 2; l++) {
            mb_conv_problem f = make(2, 3, cfg[i][0], cfg[i][1], 4, cfg[i][2], cfg[i][2] - (cfg[i][2] > 1),
                                     cfg[i][3], cfg[i][4], cfg[i][5], MB_CONV_FWD,
                                     (mb_conv_layout)l, MB_CONV_FP32);
            mb_conv_problem bd = f, bf = f;
            bd.dir = MB_CONV_BWD_DATA;
            bf.dir = MB_CONV_BWD_FILTER;
            double lhs = 0, mid = 0, rhs = 0, scale = 0;
            for (uint64_t y = 0; y < mb_conv_elems(&f, 'y'); y++) {
                mb_conv_ref r = mb_conv_reference(&f, y);
                lhs += mb_conv_input(&f, 'y', y) * r.value;
                scale += fabs(mb_conv_input(&f, 'y', y)) * r.sum_abs;
            }
            for (uint64_t x = 0; x < mb_conv_elems(&f, 'x'); x++)
                mid += mb_conv_input(&f, 'x', x) * mb_conv_reference(&bd, x).value;
            for (uint64_t w = 0; w < mb_conv_elems(&f, 'w'); w++)
                rhs += mb_conv_input(&f, 'w', w) * mb_conv_reference(&bf, w).value;
            if (fabs(lhs - mid) > 1e-12 * scale || fabs(lhs - rhs) > 1e-12 * scale)
                fail_msg("config %zu layout %d: %.17g %.17g %.17g", i, l, lhs, mid, rhs);
            assert_true(fabs(lhs) > 0);
        }
    }
}

/* ---- the sampled check -------------------------------------------------------------- */

typedef enum conv_fault {
    GOOD,
    ONE_WRONG,
    NAN_ONE,
    ZEROS,
    WRONG_LAYOUT, /* NCHW output read as NHWC */
    TF32_INPUTS,  /* inputs rounded to TF32 (10-bit mantissa) before the products */
    SKIP_CHANNEL, /* the last input channel left out (fwd) */
} conv_fault;

typedef struct fake_device {
    const mb_conv_problem *p;
    conv_fault fault;
} fake_device;

static double tf32(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & ~0x1FFFu; /* round to nearest at 13 dropped bits */
    memcpy(&f, &u, 4);
    return f;
}

static double faulty_fwd(const mb_conv_problem *p, uint64_t idx, conv_fault fault)
{
    /* y coordinates of idx (layout-aware, via a scan: small problems only). */
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++)
            for (int pp = 0; pp < p->p; pp++)
                for (int qq = 0; qq < p->q; qq++) {
                    if (mb_conv_y_index(p, n, k, pp, qq) != idx)
                        continue;
                    double sum = 0;
                    int cmax = fault == SKIP_CHANNEL ? p->c - 1 : p->c;
                    for (int c = 0; c < cmax; c++)
                        for (int r = 0; r < p->r; r++)
                            for (int s = 0; s < p->s; s++) {
                                int h = pp * p->stride_h - p->pad_h + r * p->dil_h;
                                int w = qq * p->stride_w - p->pad_w + s * p->dil_w;
                                if (h < 0 || h >= p->h || w < 0 || w >= p->w)
                                    continue;
                                double a = mb_conv_input(p, 'x', mb_conv_x_index(p, n, c, h, w));
                                double b = mb_conv_input(p, 'w', mb_conv_w_index(p, k, c, r, s));
                                sum += fault == TF32_INPUTS ? tf32(a) * tf32(b) : a * b;
                            }
                    return sum;
                }
    return NAN;
}

static int fake_fetch(void *ctx, uint64_t idx, double *value, mb_err *err)
{
    (void)err;
    fake_device *d = ctx;
    const mb_conv_problem *p = d->p;
    double v;
    if (d->fault == TF32_INPUTS || d->fault == SKIP_CHANNEL) {
        v = faulty_fwd(p, idx, d->fault);
    } else if (d->fault == WRONG_LAYOUT) {
        mb_conv_problem other = *p;
        other.layout = p->layout == MB_CONV_NCHW ? MB_CONV_NHWC : MB_CONV_NCHW;
        v = mb_conv_reference(&other, idx).value;
    } else {
        v = mb_conv_reference(p, idx).value;
    }
    if (d->fault == ZEROS)
        v = 0;
    unsigned char buf[8];
    mb_elem_store(p->elem, buf, v);
    *value = mb_elem_load(p->elem, buf);
    uint64_t last = mb_conv_elems(p, mb_conv_output(p)) - 1;
    if (idx == last && d->fault == ONE_WRONG) /* the last element is always sampled */
        *value += 0.05 * (fabs(*value) + 1) + 0.5;
    if (idx == last && d->fault == NAN_ONE)
        *value = NAN;
    return MB_OK;
}

static int check(const mb_conv_problem *p, conv_fault fault, int samples, int *checked,
                 mb_err *err)
{
    fake_device d = { p, fault };
    return mb_conv_check(p, samples, fake_fetch, &d, checked, err);
}

static void test_check_good_and_corrupted(void **s)
{
    (void)s;
    for (int dir = 0; dir < 3; dir++)
        for (int t = 0; t < 4; t++) {
            mb_conv_problem p = make(2, 16, 10, 10, 8, 3, 3, 1, 1, 1, (mb_conv_dir)dir,
                                     MB_CONV_NHWC, (mb_conv_dtype)t);
            mb_err err = { 0 };
            int checked = 0;
            if (check(&p, GOOD, 48, &checked, &err) != MB_OK)
                fail_msg("good output rejected: %s", err.msg);
            assert_int_equal(checked, 48);
            const conv_fault faults[] = { ONE_WRONG, NAN_ONE, ZEROS, WRONG_LAYOUT };
            for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
                mb_err_clear(&err);
                if (check(&p, faults[f], 48, &checked, &err) != MB_EVERIFY)
                    fail_msg("dir %d dtype %d fault %d not caught", dir, t, (int)faults[f]);
                assert_non_null(strstr(err.msg, "expected"));
            }
        }
    /* Small outputs are checked whole. */
    mb_conv_problem p = make(1, 2, 3, 3, 2, 3, 3, 1, 1, 1, MB_CONV_BWD_FILTER, MB_CONV_NCHW,
                             MB_CONV_FP32);
    mb_err err = { 0 };
    int checked = 0;
    assert_int_equal(check(&p, GOOD, 64, &checked, &err), MB_OK);
    assert_int_equal(checked, 2 * 2 * 3 * 3);
}

/* Strict fp32 must notice TF32 math; the tf32 case must accept it. A dropped
 * input channel fails in every dtype. */
static void test_check_math_faults(void **s)
{
    (void)s;
    mb_conv_problem p = make(1, 64, 6, 6, 8, 3, 3, 1, 1, 1, MB_CONV_FWD, MB_CONV_NCHW,
                             MB_CONV_FP32);
    mb_err err = { 0 };
    int checked = 0;
    assert_int_equal(check(&p, TF32_INPUTS, 64, &checked, &err), MB_EVERIFY);
    p.dtype = MB_CONV_TF32;
    mb_err_clear(&err);
    if (check(&p, TF32_INPUTS, 64, &checked, &err) != MB_OK)
        fail_msg("tf32 rounding rejected in a tf32 case: %s", err.msg);
    for (int t = 0; t < 4; t++) {
        p = make(1, 64, 6, 6, 8, 3, 3, 1, 1, 1, MB_CONV_FWD, MB_CONV_NHWC, (mb_conv_dtype)t);
        mb_err_clear(&err);
        assert_int_equal(check(&p, SKIP_CHANNEL, 64, &checked, &err), MB_EVERIFY);
    }
}

static void test_compare(void **s)
{
    (void)s;
    mb_conv_problem p = make(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, MB_CONV_FWD, MB_CONV_NHWC, MB_CONV_FP32);
    enum { N = 1000 };
    float a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = (float)mb_conv_input(&p, 'x', (uint64_t)i) * 10;
    mb_err err = { 0 };
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_OK);
    for (int i = 0; i < N; i++) /* algorithm noise well under 1e-4 */
        b[i] = a[i] * (1 + 1e-6f * (float)((i % 7) - 3));
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_OK);
    b[500] = a[500] + 5; /* one element off */
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_EVERIFY);
    assert_non_null(strstr(err.msg, "500"));
    mb_err_clear(&err);
    for (int i = 0; i < N; i++)
        b[i] = a[i] * 1.1f; /* scaled */
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_EVERIFY);
    mb_err_clear(&err);
    memcpy(b, a, sizeof a);
    b[3] = NAN;
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_EVERIFY);
    assert_non_null(strstr(err.msg, "1 NaN"));
    /* An overflow in both outputs at the same place must not "agree": with
     * inf - inf = NaN in the norms every limit comparison would be false. */
    memcpy(b, a, sizeof a);
    a[7] = b[7] = INFINITY;
    mb_err_clear(&err);
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_EVERIFY);
    assert_non_null(strstr(err.msg, "1 NaN/Inf"));
    b[7] = 1; /* one side only */
    mb_err_clear(&err);
    assert_int_equal(mb_conv_compare(&p, a, b, N, &err), MB_EVERIFY);
    a[7] = b[7];
    /* bf16: a 1% difference is within its limit. */
    mb_conv_problem q = p;
    q.dtype = MB_CONV_BF16;
    q.elem = MB_ELEM_BF16;
    uint16_t ha[N], hb[N];
    for (int i = 0; i < N; i++) {
        mb_elem_store(MB_ELEM_BF16, &ha[i], a[i]);
        mb_elem_store(MB_ELEM_BF16, &hb[i], a[i] * 1.01);
    }
    mb_err_clear(&err);
    assert_int_equal(mb_conv_compare(&q, ha, hb, N, &err), MB_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_shapes),
        cmocka_unit_test(test_cudnn_limits),
        cmocka_unit_test(test_layout_indices),
        cmocka_unit_test(test_fwd_vs_naive),
        cmocka_unit_test(test_adjoint_identities),
        cmocka_unit_test(test_check_good_and_corrupted),
        cmocka_unit_test(test_check_math_faults),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
