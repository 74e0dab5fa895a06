/* gemm_common.c: see gemm_common.h. The pure part comes first; the device
 * part is at the end under MB_HAVE_CUDA. */
#include "gemm_common.h"
#include "halfconv.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "hardware.h"

/* ---- dtypes ------------------------------------------------------------------------- */

static const char *const dtype_names[MB_GEMM_NDTYPES] = {
    [MB_GEMM_FP64] = "fp64", [MB_GEMM_FP32] = "fp32", [MB_GEMM_TF32] = "tf32",
    [MB_GEMM_FP16] = "fp16", [MB_GEMM_BF16] = "bf16", [MB_GEMM_FP8] = "fp8",
    [MB_GEMM_INT8] = "int8",
};

const char *mb_gemm_dtype_name(mb_gemm_dtype d)
{
    return d < MB_GEMM_NDTYPES ? dtype_names[d] : "?";
}

int mb_gemm_dtype_parse(const char *name, mb_gemm_dtype *out, mb_err *err)
{
    for (int i = 0; i < MB_GEMM_NDTYPES; i++) {
        if (name && strcmp(name, dtype_names[i]) == 0) {
            *out = (mb_gemm_dtype)i;
            return MB_OK;
        }
    }
    return mb_errf(err, MB_EUSAGE,
                   "parameter dtype: '%s' is not one of fp64, fp32, tf32, fp16, bf16, fp8, int8",
                   name ? name : "");
}

int mb_gemm_dtype_min_cc(mb_gemm_dtype d)
{
    switch (d) {
    case MB_GEMM_TF32:
    case MB_GEMM_BF16:
        return 80; /* Ampere */
    case MB_GEMM_FP8:
        return 89; /* Ada, Hopper */
    case MB_GEMM_INT8:
        return 75; /* IMMA tensor cores (Turing) */
    case MB_GEMM_FP16:
        return 70; /* HMMA tensor cores (Volta) */
    default:
        return 0;
    }
}

size_t mb_elem_size(mb_elem e)
{
    switch (e) {
    case MB_ELEM_F64:
        return 8;
    case MB_ELEM_F32:
    case MB_ELEM_I32:
        return 4;
    case MB_ELEM_F16:
    case MB_ELEM_BF16:
        return 2;
    default:
        return 1;
    }
}

/* Host conversions for half, bf16 and e4m3 (kernels/shared/halfconv.c). */
#define to_half mb_float_to_half
#define from_half mb_half_to_float
#define to_bf16 mb_float_to_bf16
#define from_bf16 mb_bf16_to_float
#define to_e4m3 mb_float_to_fp8e4m3
#define from_e4m3 mb_fp8e4m3_to_float

void mb_elem_store(mb_elem e, void *dst, double v)
{
    switch (e) {
    case MB_ELEM_F64:
        memcpy(dst, &v, 8);
        break;
    case MB_ELEM_F32: {
        float f = (float)v;
        memcpy(dst, &f, 4);
        break;
    }
    case MB_ELEM_F16: {
        uint16_t h = to_half((float)v);
        memcpy(dst, &h, 2);
        break;
    }
    case MB_ELEM_BF16: {
        uint16_t h = to_bf16((float)v);
        memcpy(dst, &h, 2);
        break;
    }
    case MB_ELEM_E4M3:
        *(uint8_t *)dst = to_e4m3((float)v);
        break;
    case MB_ELEM_I8:
        *(int8_t *)dst = (int8_t)v;
        break;
    case MB_ELEM_I32: {
        int32_t i = (int32_t)v;
        memcpy(dst, &i, 4);
        break;
    }
    }
}

double mb_elem_load(mb_elem e, const void *src)
{
    switch (e) {
    case MB_ELEM_F64: {
        double d;
        memcpy(&d, src, 8);
        return d;
    }
    case MB_ELEM_F32: {
        float f;
        memcpy(&f, src, 4);
        return f;
    }
    case MB_ELEM_F16: {
        uint16_t h;
        memcpy(&h, src, 2);
        return from_half(h);
    }
    case MB_ELEM_BF16: {
        uint16_t h;
        memcpy(&h, src, 2);
        return from_bf16(h);
    }
    case MB_ELEM_E4M3:
        return from_e4m3(*(const uint8_t *)src);
    case MB_ELEM_I8:
        return *(const int8_t *)src;
    case MB_ELEM_I32: {
        int32_t i;
        memcpy(&i, src, 4);
        return i;
    }
    }
    return NAN;
}

/* ---- the problem ------------------------------------------------------------------------ */

int mb_gemm_problem_init(mb_gemm_problem *p, long long m, long long n, long long k,
                         long long batch, const char *layout, mb_gemm_dtype dtype,
                         mb_elem fp8_out, uint64_t seed, mb_err *err)
{
    memset(p, 0, sizeof *p);
    if (m < 1 || n < 1 || k < 1 || batch < 1)
        return mb_errf(err, MB_EUSAGE,
                       "GEMM sizes must be positive: m=%lld n=%lld k=%lld batch=%lld", m, n, k,
                       batch);
    if (dtype >= MB_GEMM_NDTYPES)
        return mb_errf(err, MB_EUSAGE, "unknown GEMM dtype %d", (int)dtype);
    if (!layout || strcmp(layout, "auto") == 0)
        layout = (dtype == MB_GEMM_FP8 || dtype == MB_GEMM_INT8) ? "tn" : "nn";
    if (strlen(layout) != 2 || !strchr("nt", layout[0]) || !strchr("nt", layout[1]))
        return mb_errf(err, MB_EUSAGE,
                       "parameter layout: '%s' is not one of auto, nn, nt, tn, tt", layout);
    p->m = m;
    p->n = n;
    p->k = k;
    p->batch = batch;
    p->transa = layout[0] == 't';
    p->transb = layout[1] == 't';
    p->lda = p->transa ? k : m;
    p->ldb = p->transb ? n : k;
    p->ldc = m;
    p->stride_a = m * k;
    p->stride_b = k * n;
    p->stride_c = m * n;
    p->dtype = dtype;
    p->alpha = 1.0;
    p->a_scale = p->b_scale = 1.0;
    p->seed = seed;
    switch (dtype) {
    case MB_GEMM_FP64:
        p->a_type = p->b_type = p->c_type = MB_ELEM_F64;
        break;
    case MB_GEMM_FP32:
    case MB_GEMM_TF32:
        p->a_type = p->b_type = p->c_type = MB_ELEM_F32;
        break;
    case MB_GEMM_FP16:
        p->a_type = p->b_type = p->c_type = MB_ELEM_F16;
        break;
    case MB_GEMM_BF16:
        p->a_type = p->b_type = p->c_type = MB_ELEM_BF16;
        break;
    case MB_GEMM_FP8:
        if (fp8_out != MB_ELEM_BF16 && fp8_out != MB_ELEM_F16)
            return mb_errf(err, MB_EUSAGE, "fp8 GEMM output must be bf16 or fp16");
        p->a_type = p->b_type = MB_ELEM_E4M3;
        p->c_type = fp8_out;
        /* Powers of two: the scaled products stay exact, and a kernel that
         * ignored the scale pointers would be off by 8x. */
        p->a_scale = 0.5;
        p->b_scale = 0.25;
        p->alpha = p->a_scale * p->b_scale;
        break;
    case MB_GEMM_INT8:
        p->a_type = p->b_type = MB_ELEM_I8;
        p->c_type = MB_ELEM_I32;
        break;
    default:
        break;
    }
    return MB_OK;
}

void mb_gemm_stored_dims(const mb_gemm_problem *p, char which, long long *rows, long long *cols,
                         long long *ld)
{
    switch (which) {
    case 'a':
        *rows = p->transa ? p->k : p->m;
        *cols = p->transa ? p->m : p->k;
        *ld = p->lda;
        break;
    case 'b':
        *rows = p->transb ? p->n : p->k;
        *cols = p->transb ? p->k : p->n;
        *ld = p->ldb;
        break;
    default:
        *rows = p->m;
        *cols = p->n;
        *ld = p->ldc;
        break;
    }
}

const char *mb_gemm_layout_name(const mb_gemm_problem *p)
{
    static const char *const names[2][2] = { { "nn", "nt" }, { "tn", "tt" } };
    return names[p->transa][p->transb];
}

bool mb_gemm_fp8_any_layout(int cc)
{
    /* cuBLAS docs (cublasLtMatmul, FP8 requirements): A transposed and B
     * not (TN) on Ada (8.9), Hopper (9.0) and Blackwell GeForce (12.x);
     * data-center Blackwell (10.x, 11.x) and later take any layout. The same
     * line as NVIDIA Transformer Engine's nvte_is_non_tn_fp8_gemm_supported(). */
    return (cc >= 100 && cc < 120) || cc >= 130;
}

const float *mb_gemm_scale_slot(const void *base, int which)
{
    return (const float *)((const char *)base + (size_t)which * MB_GEMM_SCALE_SLOT_BYTES);
}

int mb_gemm_fp8_pointers_check(const mb_gemm_fp8_pointers *ptrs, mb_err *err)
{
    const struct {
        const char *name;
        const void *ptr;
    } all[] = { { "A", ptrs->a },
                { "B", ptrs->b },
                { "C/D", ptrs->c },
                { "A scale (CUBLASLT_MATMUL_DESC_A_SCALE_POINTER)", ptrs->a_scale },
                { "B scale (CUBLASLT_MATMUL_DESC_B_SCALE_POINTER)", ptrs->b_scale } };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        uintptr_t at = (uintptr_t)all[i].ptr;
        if (at == 0)
            return mb_errf(err, MB_EUSAGE, "cuBLASLt fp8: the %s pointer is NULL", all[i].name);
        if (at % MB_GEMM_FP8_ALIGN)
            return mb_errf(err, MB_EUSAGE,
                           "cuBLASLt fp8: the %s pointer %p is not %d-byte aligned (it is %zu "
                           "bytes past a boundary); cublasLtMatmul refuses it with "
                           "CUBLAS_STATUS_NOT_SUPPORTED",
                           all[i].name, all[i].ptr, MB_GEMM_FP8_ALIGN,
                           (size_t)(at % MB_GEMM_FP8_ALIGN));
    }
    return MB_OK;
}

int mb_gemm_problem_check(const mb_gemm_problem *p, int cc, mb_err *err)
{
    int need = mb_gemm_dtype_min_cc(p->dtype);
    if (cc < need)
        return mb_errf(err, MB_ESKIP,
                       "%s GEMM needs compute capability %d.%d or newer; this GPU is %d.%d",
                       mb_gemm_dtype_name(p->dtype), need / 10, need % 10, cc / 10, cc % 10);
    const char *layout = mb_gemm_layout_name(p);
    if (p->dtype == MB_GEMM_FP8) {
        if (!mb_gemm_fp8_any_layout(cc) && strcmp(layout, "tn") != 0)
            return mb_errf(err, MB_ESKIP,
                           "cuBLASLt fp8 needs layout tn (A transposed, B not) on compute "
                           "capability %d.%d (Ada, Hopper and Blackwell GeForce); got %s",
                           cc / 10, cc % 10, layout);
        /* 16-byte aligned columns: lda and ldb are m, k or n (one byte per
         * element); ldc = m in bf16/fp16 is then aligned too. */
        if (p->m % 16 || p->k % 16 || (p->transb && p->n % 16))
            return mb_errf(err, MB_ESKIP,
                           "cuBLASLt fp8 needs m and k (and n when B is transposed) multiples "
                           "of 16 (16-byte aligned columns); got m=%lld n=%lld k=%lld",
                           p->m, p->n, p->k);
    }
    if (p->dtype == MB_GEMM_INT8) {
        if (strcmp(layout, "tn") != 0)
            return mb_errf(err, MB_ESKIP,
                           "int8 tensor-core GEMM (IMMA, regular ordering) needs layout tn; got "
                           "%s",
                           layout);
        if (p->m % 4 || p->k % 4)
            return mb_errf(err, MB_ESKIP,
                           "int8 tensor-core GEMM needs m and k multiples of 4; got m=%lld "
                           "k=%lld",
                           p->m, p->k);
    }
    long long biggest = p->m;
    const long long dims[] = { p->n, p->k, p->lda, p->ldb, p->ldc };
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        biggest = dims[i] > biggest ? dims[i] : biggest;
    if (biggest > INT_MAX)
        return mb_errf(err, MB_ESKIP, "dimension %lld exceeds the 32-bit cuBLAS API", biggest);
    return MB_OK;
}

size_t mb_gemm_bytes(const mb_gemm_problem *p, char which)
{
    switch (which) {
    case 'a':
        return (size_t)p->stride_a * (size_t)p->batch * mb_elem_size(p->a_type);
    case 'b':
        return (size_t)p->stride_b * (size_t)p->batch * mb_elem_size(p->b_type);
    default:
        return (size_t)p->stride_c * (size_t)p->batch * mb_elem_size(p->c_type);
    }
}

double mb_gemm_problem_flops(const mb_gemm_problem *p)
{
    return mb_gemm_flops((double)p->m, (double)p->n, (double)p->k, (double)p->batch);
}

static int parse_dim(const char **s, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(*s, &end, 10);
    if (end == *s || errno || v < 1)
        return -1;
    *out = v;
    *s = end;
    return 0;
}

int mb_gemm_parse_shape(const char *text, long long *m, long long *n, long long *k,
                        long long *batch, mb_err *err)
{
    long long v[4] = { 0, 0, 0, 1 };
    const char *s = text;
    int count = 0;
    while (count < 4) {
        while (isspace((unsigned char)*s))
            s++;
        if (parse_dim(&s, &v[count]) != 0)
            break;
        count++;
        while (isspace((unsigned char)*s))
            s++;
        if (*s != 'x' && *s != 'X')
            break;
        s++;
    }
    while (isspace((unsigned char)*s))
        s++;
    if ((count != 3 && count != 4) || *s)
        return mb_errf(err, MB_EUSAGE,
                       "parameter shape: expected MxNxK or MxNxKxBATCH with positive integers, "
                       "got '%s'",
                       text);
    *m = v[0];
    *n = v[1];
    *k = v[2];
    *batch = v[3];
    return MB_OK;
}

/* ---- inputs and the reference ----------------------------------------------------------- */

/* splitmix64 is counter based: output i of the stream seeded with s is
 * mix(s + (i+1)*golden), so any element can be recomputed on its own. */
static uint64_t element_bits(const mb_gemm_problem *p, char which, uint64_t idx)
{
    uint64_t state = p->seed * 0xD1B54A32D192ED03ull + (which == 'a' ? 0x1234567ull : 0x7654321ull) +
                     idx * 0x9E3779B97F4A7C15ull;
    return mb_splitmix64(&state);
}

double mb_gemm_input(const mb_gemm_problem *p, char which, uint64_t idx)
{
    uint64_t bits = element_bits(p, which, idx);
    double u = (double)(bits >> 11) * (2.0 / 9007199254740992.0) - 1.0; /* [-1, 1) */
    mb_elem t = which == 'a' ? p->a_type : p->b_type;
    switch (t) {
    case MB_ELEM_F64:
        return u;
    case MB_ELEM_F32:
        return (float)u;
    case MB_ELEM_F16:
        return from_half(to_half((float)u));
    case MB_ELEM_BF16:
        return from_bf16(to_bf16((float)u));
    case MB_ELEM_E4M3:
        return (double)(int)(bits % 9) - 4.0;
    case MB_ELEM_I8:
        return (double)(int)(bits % 17) - 8.0;
    default:
        return 0;
    }
}

void mb_gemm_fill(const mb_gemm_problem *p, char which, void *dst, uint64_t first,
                  uint64_t count)
{
    mb_elem t = which == 'a' ? p->a_type : p->b_type;
    size_t size = mb_elem_size(t);
    unsigned char *out = dst;
    for (uint64_t i = 0; i < count; i++)
        mb_elem_store(t, out + i * size, mb_gemm_input(p, which, first + i));
}

uint64_t mb_gemm_c_index(const mb_gemm_problem *p, long long i, long long j, long long b)
{
    return (uint64_t)(b * p->stride_c + i + j * p->ldc);
}

mb_gemm_ref mb_gemm_reference(const mb_gemm_problem *p, long long i, long long j, long long b)
{
    double sum = 0, sum_abs = 0, sum_sq = 0;
    for (long long l = 0; l < p->k; l++) {
        long long ia = b * p->stride_a + (p->transa ? l + i * p->lda : i + l * p->lda);
        long long ib = b * p->stride_b + (p->transb ? j + l * p->ldb : l + j * p->ldb);
        double prod = mb_gemm_input(p, 'a', (uint64_t)ia) * mb_gemm_input(p, 'b', (uint64_t)ib);
        sum += prod;
        sum_abs += fabs(prod);
        sum_sq += prod * prod;
    }
    mb_gemm_ref r = { p->alpha * sum, fabs(p->alpha) * sum_abs, fabs(p->alpha) * sqrt(sum_sq) };
    return r;
}

/* rel_sum, rel_norm per dtype (see mb_gemm_tolerance in the header and
 * docs/gpu-gemm-conv.md). Each is about 10x what the arithmetic can produce:
 * fp32 accumulation (2^-24 per add, random signs), tf32 inputs (2^-11
 * relative each), fp16/bf16 outputs (2^-11 / 2^-8 relative), reduced-precision
 * split-K reductions, fp8 fast accumulation.
 * fp32 must also reject TF32 math (8x faster on an H100, so an fp32 case that
 * silently ran TF32 would report a false ceiling): TF32's error grows like
 * sqrt(k) and the rel_sum term like k, so 1e-5 let TF32 pass at k = 16384.
 * 2e-6 (~34 ulp of fp32 per unit of sum|a*b|) still leaves sequential fp32
 * accumulation at under 10% of the bound at every k, and fails TF32 on a
 * third or more of the samples up to k = 32768 (tests/test_gemm_common.c). */
static const double tolerances[MB_GEMM_NDTYPES][2] = {
    [MB_GEMM_FP64] = { 1e-12, 0 },   [MB_GEMM_FP32] = { 2e-6, 0 },
    [MB_GEMM_TF32] = { 1e-4, 1e-2 }, [MB_GEMM_FP16] = { 1e-4, 1e-2 },
    [MB_GEMM_BF16] = { 1e-4, 3e-2 }, [MB_GEMM_FP8] = { 1e-3, 3e-2 },
    [MB_GEMM_INT8] = { 0, 0 },
};

double mb_gemm_tolerance(const mb_gemm_problem *p, const mb_gemm_ref *r)
{
    const double *t = tolerances[p->dtype < MB_GEMM_NDTYPES ? p->dtype : MB_GEMM_FP32];
    return t[0] * r->sum_abs + t[1] * (r->norm2 + fabs(r->value));
}

int mb_gemm_check(const mb_gemm_problem *p, int samples, mb_gemm_fetch_fn fetch, void *ctx,
                  mb_gemm_check_result *res, mb_err *err)
{
    memset(res, 0, sizeof *res);
    uint64_t total = (uint64_t)p->m * (uint64_t)p->n * (uint64_t)p->batch;
    bool all = (uint64_t)samples >= total;
    uint64_t count = all ? total : (uint64_t)samples;
    uint64_t rng = p->seed ^ 0xC0FFEE123456789ull;
    char first_bad[512] = "";
    for (uint64_t s = 0; s < count; s++) {
        long long i, j, b;
        if (all) {
            i = (long long)(s % (uint64_t)p->m);
            j = (long long)((s / (uint64_t)p->m) % (uint64_t)p->n);
            b = (long long)(s / ((uint64_t)p->m * (uint64_t)p->n));
        } else if (s == 0) {
            i = j = b = 0;
        } else if (s == 1) {
            i = p->m - 1;
            j = p->n - 1;
            b = p->batch - 1;
        } else {
            i = (long long)(mb_splitmix64(&rng) % (uint64_t)p->m);
            j = (long long)(mb_splitmix64(&rng) % (uint64_t)p->n);
            b = (long long)(mb_splitmix64(&rng) % (uint64_t)p->batch);
        }
        double got = 0;
        int rc = fetch(ctx, (int)s, mb_gemm_c_index(p, i, j, b), &got, err);
        if (rc != MB_OK)
            return rc;
        mb_gemm_ref ref = mb_gemm_reference(p, i, j, b);
        double tol = mb_gemm_tolerance(p, &ref);
        double diff = fabs(got - ref.value);
        res->checked++;
        bool bad = isnan(got) || diff > tol;
        double ratio = tol > 0 ? diff / tol : (diff > 0 ? INFINITY : 0);
        if (isnan(got))
            ratio = INFINITY;
        if (ratio > res->worst_ratio)
            res->worst_ratio = ratio;
        if (bad) {
            if (!res->mismatches)
                snprintf(first_bad, sizeof first_bad,
                         "C[%lld,%lld] of batch %lld = %.9g, expected %.9g +- %.3g (|err| %.3g)",
                         i, j, b, got, ref.value, tol, diff);
            res->mismatches++;
        }
    }
    if (res->mismatches)
        return mb_errf(err, MB_EVERIFY, "%s %s: %d of %d checked elements wrong; first: %s",
                       mb_gemm_dtype_name(p->dtype), mb_gemm_layout_name(p), res->mismatches,
                       res->checked, first_bad);
    return MB_OK;
}

/* ---- rotation -------------------------------------------------------------------------- */

int mb_gemm_auto_rotate(size_t set_bytes, size_t l2_bytes)
{
    if (set_bytes == 0 || l2_bytes == 0)
        return 1;
    double sets = ceil(3.0 * (double)l2_bytes / (double)set_bytes);
    if (sets < 1)
        return 1;
    return sets > MB_GEMM_MAX_ROTATE ? MB_GEMM_MAX_ROTATE : (int)sets;
}

int mb_gemm_choose_rotate(size_t set_bytes, size_t fixed_bytes, size_t l2_bytes, int given,
                          mb_fits_fn fits, int *sets, bool *reduced, mb_err *err)
{
    *reduced = false;
    *sets = given > 0 ? given : mb_gemm_auto_rotate(set_bytes, l2_bytes);
    for (;;) {
        mb_err tmp = { 0 };
        int rc = fits(set_bytes * (size_t)*sets + fixed_bytes, &tmp);
        if (rc == MB_OK)
            return MB_OK;
        if (rc != MB_ESKIP || given > 0 || *sets == 1)
            return mb_errf(err, rc, "%s", tmp.msg);
        *sets = *sets / 2 > 1 ? *sets / 2 : 1;
        *reduced = true;
    }
}

/* ---- peaks ------------------------------------------------------------------------------ */

void mb_gpu_peak_report(mb_report *r, const char *device_name, int major, int minor, int sms,
                        double clock_hz, const char *key)
{
    const char *unit = strcmp(key, "int8") == 0 ? "TOP/s" : "TFLOP/s";
    /* Computed from attributes. */
    double computed = 0;
    mb_gpu_arch_row row = { 0 };
    mb_err why = { 0 };
    double per_clk = 0;
    if (sms > 0 && clock_hz > 0 &&
        mb_gpu_arch_rate(NULL, major, minor, device_name, key, &per_clk, &row, &why) == MB_OK)
        computed = mb_gpu_peak_flops(sms, clock_hz, per_clk) / 1e12;
    char computed_src[512];
    snprintf(computed_src, sizeof computed_src, "computed: %d SMs x %.0f MHz x %s (%s)", sms,
             clock_hz / 1e6, row.desc, "configs/gpu-arch.ini");
    if (computed > 0)
        mb_report_metric(r, "peak_from_attributes", computed, unit);
    else
        mb_report_note(r, "no peak from device attributes: %s",
                       why.msg[0] ? why.msg : "SM count or clock unknown");

    /* The datasheet. fp64 GEMMs run on the FP64 tensor cores where there
     * are some, so that is their peak. */
    mb_datasheet *d = NULL;
    mb_err dserr = { 0 };
    double ds = 0;
    const char *src = NULL, *used_key = NULL;
    char k1[64], k2[64]; /* used_key points into one of them below */
    if (mb_datasheet_match(device_name, &d, &dserr) == MB_OK) {
        snprintf(k1, sizeof k1, "peak.%s_tensor", key);
        snprintf(k2, sizeof k2, "peak.%s", key);
        if (strcmp(key, "fp64") == 0 && mb_datasheet_get(d, k1, &ds, &src))
            used_key = k1;
        else if (mb_datasheet_get(d, k2, &ds, &src))
            used_key = k2;
    }
    if (used_key) {
        char source[768];
        snprintf(source, sizeof source, "datasheet: %s %s dense (%s; %s)", mb_datasheet_name(d),
                 used_key, src ? src : "no source", mb_datasheet_file(d));
        mb_report_peak(r, ds, source);
        if (computed > 0)
            mb_report_note(r, "peak from device attributes: %.1f %s (%s)", computed, unit,
                           computed_src);
    } else if (computed > 0) {
        mb_report_peak(r, computed, computed_src);
        if (d)
            mb_report_note(r, "datasheet %s lists no peak.%s: peak computed from device "
                              "attributes",
                           mb_datasheet_name(d), key);
        else
            mb_report_note(r, "no datasheet for this GPU (%s): peak computed from device "
                              "attributes",
                           dserr.msg);
    } else {
        mb_report_note(r, "no theoretical peak for %s math on '%s'", key,
                       device_name ? device_name : "?");
    }
    mb_datasheet_free(d);
}

void mb_gemm_report_rotation(mb_report *r, const char *what, int sets, size_t set_bytes, size_t l2_bytes,
                             bool given, bool reduced)
{
    double set = (double)set_bytes, moved = set * sets;
    const char *sep = *what ? " " : "";
    mb_report_metric(r, "buffer_sets", sets, "");
    if (given)
        mb_report_note(r, "rotate=%d given: %d buffer set(s)%s%s of %.1f MiB, %.1f MiB in all (L2 %.1f MiB)", sets,
                       sets, sep, what, set / 1048576.0, moved / 1048576.0, l2_bytes / 1048576.0);
    else
        mb_report_note(r, "rotating through %d buffer set(s)%s%s of %.1f MiB (%.1f MiB in all, chosen from the %.1f MiB "
                          "L2 cache: >= 3x L2) so inputs are not L2-resident",
                       sets, sep, what, set / 1048576.0, moved / 1048576.0, l2_bytes / 1048576.0);
    if (reduced)
        mb_report_note(r, "buffer sets reduced to %d to fit in device memory", sets);
    if (moved < 2.0 * (double)l2_bytes)
        mb_report_note(r, "all buffer sets together (%.1f MiB) fit in L2 (%.1f MiB): inputs may be L2-resident",
                       moved / 1048576.0, l2_bytes / 1048576.0);
}

int mb_gemm_sample_positions(int m, int n, int *si, int *sj, int max)
{
    size_t total = (size_t)m * (size_t)n;
    if (total <= (size_t)max) {
        for (size_t e = 0; e < total; e++) {
            si[e] = (int)(e / (size_t)n);
            sj[e] = (int)(e % (size_t)n);
        }
        return (int)total;
    }
    int corners[4][2] = { { 0, 0 }, { 0, n - 1 }, { m - 1, 0 }, { m - 1, n - 1 } };
    uint64_t seed = 0x53414D504C45ull;
    for (int s = 0; s < max; s++) {
        si[s] = s < 4 ? corners[s][0] : (int)(mb_splitmix64(&seed) % (uint64_t)m);
        sj[s] = s < 4 ? corners[s][1] : (int)(mb_splitmix64(&seed) % (uint64_t)n);
    }
    return max;
}
