/* conv_ref.c: see conv_ref.h. Pure host code. */
#include "conv_ref.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "component.h" /* mb_splitmix64 */
#include "formulas.h"

static const char *const dir_names[] = { "fwd", "bwd_data", "bwd_filter" };
static const char *const layout_names[] = { "nchw", "nhwc" };
static const char *const dtype_names[] = { "fp32", "tf32", "fp16", "bf16" };

static int find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n && name; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

int mb_conv_parse(const char *dir, const char *layout, const char *dtype, mb_conv_dir *d,
                  mb_conv_layout *l, mb_conv_dtype *t, mb_err *err)
{
    int i = find_name(dir_names, 3, dir), j = find_name(layout_names, 2, layout),
        k = find_name(dtype_names, 4, dtype);
    if (i < 0)
        return mb_errf(err, MB_EUSAGE,
                       "parameter direction: '%s' is not one of fwd, bwd_data, bwd_filter",
                       dir ? dir : "");
    if (j < 0)
        return mb_errf(err, MB_EUSAGE, "parameter layout: '%s' is not one of nchw, nhwc",
                       layout ? layout : "");
    if (k < 0)
        return mb_errf(err, MB_EUSAGE, "parameter dtype: '%s' is not one of fp32, tf32, fp16, bf16",
                       dtype ? dtype : "");
    *d = (mb_conv_dir)i;
    *l = (mb_conv_layout)j;
    *t = (mb_conv_dtype)k;
    return MB_OK;
}

const char *mb_conv_dir_name(mb_conv_dir d)
{
    return (unsigned)d < 3 ? dir_names[d] : "?";
}

const char *mb_conv_dtype_name(mb_conv_dtype t)
{
    return (unsigned)t < 4 ? dtype_names[t] : "?";
}

const char *mb_conv_layout_name(mb_conv_layout l)
{
    return (unsigned)l < 2 ? layout_names[l] : "?";
}

int mb_conv_problem_init(mb_conv_problem *p, int n, int c, int h, int w, int k, int r, int s,
                         int pad_h, int pad_w, int stride_h, int stride_w, int dilation,
                         mb_conv_dir dir, mb_conv_layout layout, mb_conv_dtype dtype,
                         uint64_t seed, mb_err *err)
{
    memset(p, 0, sizeof *p);
    if (n < 1 || c < 1 || h < 1 || w < 1 || k < 1 || r < 1 || s < 1 || stride_h < 1 ||
        stride_w < 1 || dilation < 1 || pad_h < 0 || pad_w < 0)
        return mb_errf(err, MB_EUSAGE,
                       "convolution sizes must be positive (pads non-negative): n=%d c=%d h=%d "
                       "w=%d k=%d r=%d s=%d pad=%d,%d stride=%d,%d dilation=%d",
                       n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dilation);
    *p = (mb_conv_problem){ .n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                            .pad_h = pad_h, .pad_w = pad_w, .stride_h = stride_h,
                            .stride_w = stride_w, .dil_h = dilation, .dil_w = dilation,
                            .dir = dir, .layout = layout, .dtype = dtype, .seed = seed };
    p->p = mb_conv_out_dim(h, r, pad_h, stride_h, dilation);
    p->q = mb_conv_out_dim(w, s, pad_w, stride_w, dilation);
    if (p->p < 1 || p->q < 1)
        return mb_errf(err, MB_EUSAGE,
                       "a %dx%d filter (dilation %d) does not fit a %dx%d input padded by %d,%d",
                       r, s, dilation, h, w, pad_h, pad_w);
    p->elem = dtype == MB_CONV_FP16 ? MB_ELEM_F16 : dtype == MB_CONV_BF16 ? MB_ELEM_BF16 : MB_ELEM_F32;
    return MB_OK;
}

int mb_conv_check_limits(const mb_conv_problem *p, mb_err *err)
{
    static const char tensors[] = { 'x', 'w', 'y' };
    for (int i = 0; i < 3; i++) {
        uint64_t n = mb_conv_elems(p, tensors[i]);
        if (n > INT_MAX)
            return mb_errf(err, MB_ESKIP,
                           "tensor %c has %llu elements: cuDNN's legacy convolution API takes at "
                           "most %d (32-bit indexing); use a smaller batch",
                           tensors[i], (unsigned long long)n, INT_MAX);
    }
    return MB_OK;
}

double mb_conv_problem_flops(const mb_conv_problem *p)
{
    return mb_conv_flops(p->n, p->k, p->c, p->r, p->s, p->p, p->q);
}

uint64_t mb_conv_elems(const mb_conv_problem *p, char tensor)
{
    switch (tensor) {
    case 'x':
        return (uint64_t)p->n * p->c * p->h * p->w;
    case 'w':
        return (uint64_t)p->k * p->c * p->r * p->s;
    default:
        return (uint64_t)p->n * p->k * p->p * p->q;
    }
}

char mb_conv_output(const mb_conv_problem *p)
{
    return p->dir == MB_CONV_FWD ? 'y' : p->dir == MB_CONV_BWD_DATA ? 'x' : 'w';
}

/* ---- layouts ----------------------------------------------------------------------- */

/* An NCHW-style 4-D tensor: dims (a, b, c, d) logical = (N, C, H, W) for x,
 * (K, C, R, S) for w, (N, K, P, Q) for y. NHWC stores the second logical dim
 * innermost: (a, c, d, b). */
static uint64_t index4(mb_conv_layout l, const int dim[4], const int at[4])
{
    if (l == MB_CONV_NCHW)
        return (((uint64_t)at[0] * dim[1] + at[1]) * dim[2] + at[2]) * dim[3] + at[3];
    return (((uint64_t)at[0] * dim[2] + at[2]) * dim[3] + at[3]) * dim[1] + at[1];
}

static void coords4(mb_conv_layout l, const int dim[4], uint64_t idx, int at[4])
{
    if (l == MB_CONV_NCHW) {
        at[3] = (int)(idx % dim[3]);
        idx /= dim[3];
        at[2] = (int)(idx % dim[2]);
        idx /= dim[2];
        at[1] = (int)(idx % dim[1]);
        at[0] = (int)(idx / dim[1]);
    } else {
        at[1] = (int)(idx % dim[1]);
        idx /= dim[1];
        at[3] = (int)(idx % dim[3]);
        idx /= dim[3];
        at[2] = (int)(idx % dim[2]);
        at[0] = (int)(idx / dim[2]);
    }
}

static void dims_of(const mb_conv_problem *p, char tensor, int dim[4])
{
    const int x[4] = { p->n, p->c, p->h, p->w }, w[4] = { p->k, p->c, p->r, p->s },
              y[4] = { p->n, p->k, p->p, p->q };
    memcpy(dim, tensor == 'x' ? x : tensor == 'w' ? w : y, sizeof x);
}

uint64_t mb_conv_x_index(const mb_conv_problem *p, int n, int c, int h, int w)
{
    int dim[4], at[4] = { n, c, h, w };
    dims_of(p, 'x', dim);
    return index4(p->layout, dim, at);
}

uint64_t mb_conv_w_index(const mb_conv_problem *p, int k, int c, int r, int s)
{
    int dim[4], at[4] = { k, c, r, s };
    dims_of(p, 'w', dim);
    return index4(p->layout, dim, at);
}

uint64_t mb_conv_y_index(const mb_conv_problem *p, int n, int k, int pp, int qq)
{
    int dim[4], at[4] = { n, k, pp, qq };
    dims_of(p, 'y', dim);
    return index4(p->layout, dim, at);
}

/* ---- inputs -------------------------------------------------------------------------- */

double mb_conv_input(const mb_conv_problem *p, char tensor, uint64_t idx)
{
    uint64_t salt = tensor == 'x' ? 0x1111111ull : tensor == 'w' ? 0x2222222ull : 0x3333333ull;
    uint64_t state = p->seed * 0xD1B54A32D192ED03ull + salt + idx * 0x9E3779B97F4A7C15ull;
    uint64_t bits = mb_splitmix64(&state);
    double u = (double)(bits >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    unsigned char buf[8];
    mb_elem_store(p->elem, buf, u); /* round to the storage type */
    return mb_elem_load(p->elem, buf);
}

void mb_conv_fill(const mb_conv_problem *p, char tensor, void *dst, uint64_t first,
                  uint64_t count)
{
    size_t size = mb_elem_size(p->elem);
    unsigned char *out = dst;
    for (uint64_t i = 0; i < count; i++)
        mb_elem_store(p->elem, out + i * size, mb_conv_input(p, tensor, first + i));
}

/* ---- the reference ---------------------------------------------------------------------- */

typedef struct acc {
    double sum, sum_abs, sum_sq;
} acc;

static void add(acc *a, double u, double v)
{
    double prod = u * v;
    a->sum += prod;
    a->sum_abs += fabs(prod);
    a->sum_sq += prod * prod;
}

/* y[n,k,p,q] = sum over c, r, s of x[n, c, p*sh-ph+r*dh, q*sw-pw+s*dw] * w[k,c,r,s] */
static void ref_fwd(const mb_conv_problem *p, const int at[4], acc *a)
{
    int n = at[0], k = at[1], pp = at[2], qq = at[3];
    for (int c = 0; c < p->c; c++)
        for (int r = 0; r < p->r; r++) {
            int h = pp * p->stride_h - p->pad_h + r * p->dil_h;
            if (h < 0 || h >= p->h)
                continue;
            for (int s = 0; s < p->s; s++) {
                int w = qq * p->stride_w - p->pad_w + s * p->dil_w;
                if (w < 0 || w >= p->w)
                    continue;
                add(a, mb_conv_input(p, 'x', mb_conv_x_index(p, n, c, h, w)),
                    mb_conv_input(p, 'w', mb_conv_w_index(p, k, c, r, s)));
            }
        }
}

/* dx[n,c,h,w] = sum over k, r, s of dy[n,k,p,q] * w[k,c,r,s] where
 * h = p*sh - ph + r*dh and w = q*sw - pw + s*dw for whole p, q in range. */
static void ref_bwd_data(const mb_conv_problem *p, const int at[4], acc *a)
{
    int n = at[0], c = at[1], h = at[2], w = at[3];
    for (int r = 0; r < p->r; r++) {
        int ph = h + p->pad_h - r * p->dil_h;
        if (ph < 0 || ph % p->stride_h)
            continue;
        int pp = ph / p->stride_h;
        if (pp >= p->p)
            continue;
        for (int s = 0; s < p->s; s++) {
            int qw = w + p->pad_w - s * p->dil_w;
            if (qw < 0 || qw % p->stride_w)
                continue;
            int qq = qw / p->stride_w;
            if (qq >= p->q)
                continue;
            for (int k = 0; k < p->k; k++)
                add(a, mb_conv_input(p, 'y', mb_conv_y_index(p, n, k, pp, qq)),
                    mb_conv_input(p, 'w', mb_conv_w_index(p, k, c, r, s)));
        }
    }
}

/* dw[k,c,r,s] = sum over n, p, q of dy[n,k,p,q] * x[n, c, p*sh-ph+r*dh, q*sw-pw+s*dw] */
static void ref_bwd_filter(const mb_conv_problem *p, const int at[4], acc *a)
{
    int k = at[0], c = at[1], r = at[2], s = at[3];
    for (int n = 0; n < p->n; n++)
        for (int pp = 0; pp < p->p; pp++) {
            int h = pp * p->stride_h - p->pad_h + r * p->dil_h;
            if (h < 0 || h >= p->h)
                continue;
            for (int qq = 0; qq < p->q; qq++) {
                int w = qq * p->stride_w - p->pad_w + s * p->dil_w;
                if (w < 0 || w >= p->w)
                    continue;
                add(a, mb_conv_input(p, 'y', mb_conv_y_index(p, n, k, pp, qq)),
                    mb_conv_input(p, 'x', mb_conv_x_index(p, n, c, h, w)));
            }
        }
}

mb_conv_ref mb_conv_reference(const mb_conv_problem *p, uint64_t out_index)
{
    int dim[4], at[4];
    char out = mb_conv_output(p);
    dims_of(p, out, dim);
    coords4(p->layout, dim, out_index, at);
    acc a = { 0, 0, 0 };
    if (p->dir == MB_CONV_FWD)
        ref_fwd(p, at, &a);
    else if (p->dir == MB_CONV_BWD_DATA)
        ref_bwd_data(p, at, &a);
    else
        ref_bwd_filter(p, at, &a);
    mb_conv_ref r = { a.sum, a.sum_abs, sqrt(a.sum_sq) };
    return r;
}

/* rel_sum, rel_norm (see mb_gemm_tolerance). fp32 is strict: tight enough
 * that TF32 math (relative error ~2^-11 per product) shows, loose enough for
 * Winograd and FFT algorithms in fp32 (~1e-6 relative). The others allow
 * fp16/bf16 output rounding and transform algorithms that round
 * intermediates to the data type.
 *
 * Limit of the TF32 detection: TF32's error grows like sqrt(n) * rms(product)
 * over a sum of n products, the rel_sum term like n. With inputs uniform in
 * [-1, 1) the 64 default samples catch TF32 up to n ~ 2000 terms (simulated:
 * n = 576 and 1024 caught, 4608 not); fwd (n = C*R*S) and bwd_data (K*R*S) of
 * most layers qualify, bwd_filter (n = N*P*Q, 10^4..10^6) does not. There the
 * guard against TF32 is CUDNN_FMA_MATH itself (conv_cudnn.c refuses any
 * algorithm reported as tensor-op math); a tighter sqrt(n) model of fp32
 * accumulation error needs calibrating on a GPU first. */
static const double conv_tolerances[4][2] = {
    [MB_CONV_FP32] = { 1e-5, 1e-5 },
    [MB_CONV_TF32] = { 5e-4, 1e-2 },
    [MB_CONV_FP16] = { 5e-4, 1e-2 },
    [MB_CONV_BF16] = { 5e-4, 3e-2 },
};

double mb_conv_tolerance(const mb_conv_problem *p, const mb_conv_ref *r)
{
    const double *t = conv_tolerances[(unsigned)p->dtype < 4 ? p->dtype : MB_CONV_FP32];
    return t[0] * r->sum_abs + t[1] * (r->norm2 + fabs(r->value));
}

int mb_conv_check(const mb_conv_problem *p, int samples, mb_conv_fetch_fn fetch, void *ctx,
                  int *checked, mb_err *err)
{
    uint64_t total = mb_conv_elems(p, mb_conv_output(p));
    bool all = (uint64_t)samples >= total;
    uint64_t count = all ? total : (uint64_t)samples;
    uint64_t rng = p->seed ^ 0xC0FFEE987654321ull;
    int bad = 0;
    char first[512] = "";
    *checked = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t idx = all ? i : i == 0 ? 0 : i == 1 ? total - 1 : mb_splitmix64(&rng) % total;
        double got = 0;
        int rc = fetch(ctx, idx, &got, err);
        if (rc != MB_OK)
            return rc;
        mb_conv_ref ref = mb_conv_reference(p, idx);
        double tol = mb_conv_tolerance(p, &ref), diff = fabs(got - ref.value);
        (*checked)++;
        if (isnan(got) || diff > tol) {
            if (!bad) {
                int dim[4], at[4];
                dims_of(p, mb_conv_output(p), dim);
                coords4(p->layout, dim, idx, at);
                snprintf(first, sizeof first,
                         "%c%c[%d,%d,%d,%d] = %.9g, expected %.9g +- %.3g",
                         p->dir == MB_CONV_FWD ? ' ' : 'd', mb_conv_output(p), at[0], at[1],
                         at[2], at[3], got, ref.value, tol);
            }
            bad++;
        }
    }
    if (bad)
        return mb_errf(err, MB_EVERIFY, "conv %s %s %s: %d of %d checked elements wrong; first:%s",
                       mb_conv_dir_name(p->dir), mb_conv_dtype_name(p->dtype),
                       mb_conv_layout_name(p->layout), bad, *checked, first);
    return MB_OK;
}

int mb_conv_compare(const mb_conv_problem *p, const void *a, const void *b, uint64_t count,
                    mb_err *err)
{
    static const double rel_of[4] = { [MB_CONV_FP32] = 1e-4, [MB_CONV_TF32] = 1e-2,
                                      [MB_CONV_FP16] = 1e-2, [MB_CONV_BF16] = 3e-2 };
    double rel = rel_of[(unsigned)p->dtype < 4 ? p->dtype : 0];
    size_t size = mb_elem_size(p->elem);
    double diff2 = 0, norm2 = 0, max_a = 0, max_diff = 0;
    uint64_t worst = 0, nans = 0;
    for (uint64_t i = 0; i < count; i++) {
        double u = mb_elem_load(p->elem, (const char *)a + i * size);
        double v = mb_elem_load(p->elem, (const char *)b + i * size);
        /* Not isnan: an infinity would make the norms inf/inf = NaN, and
         * every comparison with NaN is false, i.e. "agree". */
        if (!isfinite(u) || !isfinite(v)) {
            nans++;
            continue;
        }
        double d = fabs(u - v);
        diff2 += d * d;
        norm2 += u * u;
        if (fabs(u) > max_a)
            max_a = fabs(u);
        if (d > max_diff) {
            max_diff = d;
            worst = i;
        }
    }
    double normwise = norm2 > 0 ? sqrt(diff2 / norm2) : (diff2 > 0 ? INFINITY : 0);
    if (nans || normwise > rel || max_diff > 10 * rel * max_a)
        return mb_errf(err, MB_EVERIFY,
                       "the two algorithms disagree: %llu NaN/Inf, ||a-b||/||a|| = %.3g (limit %.3g), "
                       "max |a-b| = %.3g at element %llu (limit %.3g)",
                       (unsigned long long)nans, normwise, rel, max_diff,
                       (unsigned long long)worst, 10 * rel * max_a);
    return MB_OK;
}
