/* gemm_common.c: see gemm_common.h. The pure part comes first; the device
 * part is at the end under MB_HAVE_CUDA. */
#include "gemm_common.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "hardware.h"
#include "paths.h"

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

/* Host conversions for half, bf16 and e4m3. With CUDA they come from
 * gpu_util.c; without it the pure part still needs them for its tests, so
 * small equivalents live here (round to nearest even, like gpu_util.c). */
#ifdef MB_HAVE_CUDA
#include "gpu_util.h"
#define to_half mb_float_to_half
#define from_half mb_half_to_float
#define to_bf16 mb_float_to_bf16
#define from_bf16 mb_bf16_to_float
#define to_e4m3 mb_float_to_fp8e4m3
#define from_e4m3 mb_fp8e4m3_to_float
#else
static float from_half(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
    float f = exp == 0    ? ldexpf((float)mant, -24)
              : exp == 31 ? (mant ? NAN : INFINITY)
                          : ldexpf(1.0f + mant / 1024.0f, exp - 15);
    return sign ? -f : f;
}
static uint16_t to_half(float f)
{
    /* Only called with |f| < 2 (random inputs) or on values already exact. */
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (a == 0)
        return sign;
    int e;
    frexpf(a, &e);
    int exp = e - 1 + 15;
    if (exp <= 0)
        return (uint16_t)(sign | (uint16_t)nearbyintf(a / ldexpf(1.0f, -24)));
    int mant = (int)nearbyintf((a / ldexpf(1.0f, e - 1) - 1.0f) * 1024.0f);
    if (mant == 1024) {
        mant = 0;
        exp++;
    }
    return (uint16_t)(sign | (exp << 10) | mant);
}
static float from_bf16(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static uint16_t to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
static float from_e4m3(uint8_t v)
{
    int sign = v & 0x80, exp = (v >> 3) & 0xF, mant = v & 7;
    if (exp == 15 && mant == 7)
        return NAN;
    float f = exp == 0 ? ldexpf((float)mant, -9) : ldexpf(1.0f + mant / 8.0f, exp - 7);
    return sign ? -f : f;
}
static uint8_t to_e4m3(float f)
{
    /* Only called with small integers, which e4m3 holds exactly. */
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a == 0)
        return sign;
    int e;
    frexpf(a, &e);
    int mant = (int)nearbyintf((a / ldexpf(1.0f, e - 1) - 1.0f) * 8.0f);
    return (uint8_t)(sign | ((e - 1 + 7) << 3) | mant);
}
#endif

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

const char *mb_gemm_layout_name(const mb_gemm_problem *p)
{
    static const char *const names[2][2] = { { "nn", "nt" }, { "tn", "tt" } };
    return names[p->transa][p->transb];
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
        if (cc < 100 && strcmp(layout, "tn") != 0)
            return mb_errf(err, MB_ESKIP,
                           "cuBLASLt fp8 needs layout tn (A transposed, B not) before "
                           "Blackwell; got %s",
                           layout);
        if (p->m % 16 || p->k % 16)
            return mb_errf(err, MB_ESKIP,
                           "cuBLASLt fp8 needs m and k multiples of 16 (16-byte aligned "
                           "columns); got m=%lld k=%lld",
                           p->m, p->k);
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
 * split-K reductions, fp8 fast accumulation. */
static const double tolerances[MB_GEMM_NDTYPES][2] = {
    [MB_GEMM_FP64] = { 1e-12, 0 },   [MB_GEMM_FP32] = { 1e-5, 0 },
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

/* ---- peaks ------------------------------------------------------------------------------ */

typedef struct arch_lookup {
    char section[16];
    const char *key;
    bool geforce;
    double value, geforce_value;
    bool have_value, have_geforce, have_section;
    char name[96];
    char bad[160]; /* the first malformed entry */
} arch_lookup;

static int on_arch_entry(void *user, const char *section, const char *name, const char *value)
{
    arch_lookup *a = user;
    if (strcmp(section, a->section) != 0)
        return 1;
    a->have_section = true;
    if (strcmp(name, "name") == 0) {
        snprintf(a->name, sizeof a->name, "%s", value);
        return 1;
    }
    if (strcmp(name, "source") == 0)
        return 1;
    bool geforce = strncmp(name, "geforce_", 8) == 0;
    const char *key = geforce ? name + 8 : name;
    if (strcmp(key, a->key) != 0)
        return 1;
    char *end = NULL;
    double v = strtod(value, &end);
    if (end == value || *end || !(v > 0)) {
        if (!a->bad[0])
            snprintf(a->bad, sizeof a->bad, "[%s] %s = '%s' is not a positive number", section,
                     name, value);
        return 0; /* inih returns the line */
    }
    if (geforce) {
        a->geforce_value = v;
        a->have_geforce = true;
    } else {
        a->value = v;
        a->have_value = true;
    }
    return 1;
}

int mb_gpu_arch_rate(int major, int minor, const char *device_name, const char *key,
                     double *per_clk_sm, char *desc, size_t desc_len, mb_err *err)
{
    char path[4096];
    mb_config_path(path, sizeof path, "gpu-arch.ini");
    arch_lookup a = { .key = key };
    snprintf(a.section, sizeof a.section, "sm_%d%d", major, minor);
    a.geforce = device_name && strstr(device_name, "GeForce") != NULL;
    int rc = ini_parse(path, on_arch_entry, &a);
    if (rc < 0)
        return mb_errf(err, MB_ESKIP, "%s: cannot read the architecture table", path);
    if (rc > 0)
        return mb_errf(err, MB_EUSAGE, "%s:%d: %s", path, rc,
                       a.bad[0] ? a.bad : "malformed line (expected [section] or key = value)");
    if (!a.have_section)
        return mb_errf(err, MB_ESKIP, "no [%s] in %s: no computed peak for compute capability %d.%d",
                       a.section, path, major, minor);
    bool use_geforce = a.geforce && a.have_geforce;
    if (!a.have_value && !use_geforce)
        return mb_errf(err, MB_ESKIP, "%s has no %s math in %s", a.section, key, path);
    *per_clk_sm = use_geforce ? a.geforce_value : a.value;
    if (desc)
        snprintf(desc, desc_len, "%s %s%s %s %.0f FLOP/clk/SM", a.section, a.name,
                 use_geforce ? " GeForce" : "", key, *per_clk_sm);
    return MB_OK;
}

void mb_gpu_peak_report(mb_report *r, const char *device_name, int major, int minor, int sms,
                        double clock_hz, const char *key)
{
    const char *unit = strcmp(key, "int8") == 0 ? "TOPS" : "TFLOP/s";
    /* Computed from attributes. */
    double computed = 0;
    char desc[256] = "";
    mb_err why = { 0 };
    double per_clk = 0;
    if (sms > 0 && clock_hz > 0 &&
        mb_gpu_arch_rate(major, minor, device_name, key, &per_clk, desc, sizeof desc, &why) ==
            MB_OK)
        computed = mb_gpu_peak_flops(sms, clock_hz, per_clk) / 1e12;
    char computed_src[512];
    snprintf(computed_src, sizeof computed_src, "computed: %d SMs x %.0f MHz x %s (%s)", sms,
             clock_hz / 1e6, desc, "configs/gpu-arch.ini");
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
    if (mb_datasheet_match(device_name, &d, &dserr) == MB_OK) {
        char k1[64], k2[64];
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

/* ---- device side ------------------------------------------------------------------------ */

#ifdef MB_HAVE_CUDA
#include <cublas_api.h>

int mb_cublas_err(int s, mb_err *err, const char *what)
{
    cublasStatus_t st = (cublasStatus_t)s;
    if (st == CUBLAS_STATUS_SUCCESS)
        return MB_OK;
    int code = MB_EFAIL;
    switch (st) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ALLOC_FAILED:
        code = MB_ESKIP;
        break;
    default:
        break;
    }
    return mb_errf(err, code, "%s: %s", what, cublasGetStatusString(st));
}

mb_gemm_cuda_types mb_gemm_cuda_types_of(const mb_gemm_problem *p)
{
    static const cudaDataType_t storage[] = {
        [MB_ELEM_F64] = CUDA_R_64F,  [MB_ELEM_F32] = CUDA_R_32F,     [MB_ELEM_F16] = CUDA_R_16F,
        [MB_ELEM_BF16] = CUDA_R_16BF, [MB_ELEM_E4M3] = CUDA_R_8F_E4M3, [MB_ELEM_I8] = CUDA_R_8I,
        [MB_ELEM_I32] = CUDA_R_32I,
    };
    mb_gemm_cuda_types t = { storage[p->a_type], storage[p->b_type], storage[p->c_type],
                             CUDA_R_32F, CUBLAS_COMPUTE_32F };
    switch (p->dtype) {
    case MB_GEMM_FP64:
        t.scale = CUDA_R_64F;
        t.compute = CUBLAS_COMPUTE_64F;
        break;
    case MB_GEMM_TF32:
        t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        break;
    case MB_GEMM_INT8:
        t.scale = CUDA_R_32I;
        t.compute = CUBLAS_COMPUTE_32I;
        break;
    default: /* fp32 (no TF32), fp16, bf16, fp8: fp32 accumulate */
        break;
    }
    return t;
}

void mb_gemm_scalars_init(mb_gemm_scalars *s, const mb_gemm_problem *p)
{
    s->d[0] = 1.0;
    s->d[1] = 0.0;
    s->f[0] = 1.0f;
    s->f[1] = 0.0f;
    s->i[0] = 1;
    s->i[1] = 0;
    mb_gemm_cuda_types t = mb_gemm_cuda_types_of(p);
    if (t.scale == CUDA_R_64F) {
        s->alpha = &s->d[0];
        s->beta = &s->d[1];
    } else if (t.scale == CUDA_R_32I) {
        s->alpha = &s->i[0];
        s->beta = &s->i[1];
    } else {
        s->alpha = &s->f[0];
        s->beta = &s->f[1];
    }
}

void mb_gemm_report_math(mb_report *r, const mb_gemm_problem *p, bool fast_accum)
{
    char text[256];
    switch (p->dtype) {
    case MB_GEMM_FP64:
        snprintf(text, sizeof text, "fp64 in/out, CUBLAS_COMPUTE_64F (FP64 tensor cores where "
                                    "present: sm_80, sm_90)");
        break;
    case MB_GEMM_FP32:
        snprintf(text, sizeof text, "fp32 in/out, CUBLAS_COMPUTE_32F: FP32 FMA, TF32 not allowed");
        break;
    case MB_GEMM_TF32:
        snprintf(text, sizeof text, "fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor "
                                    "cores, fp32 accumulate");
        break;
    case MB_GEMM_FP16:
    case MB_GEMM_BF16:
        snprintf(text, sizeof text, "%s in/out, CUBLAS_COMPUTE_32F: tensor cores, fp32 accumulate",
                 mb_gemm_dtype_name(p->dtype));
        break;
    case MB_GEMM_FP8:
        snprintf(text, sizeof text,
                 "e4m3 A and B with per-tensor scales (%g, %g), %s out, CUBLAS_COMPUTE_32F: FP8 "
                 "tensor cores, fp32 accumulate, fast accumulation %s",
                 p->a_scale, p->b_scale, p->c_type == MB_ELEM_F16 ? "fp16" : "bf16",
                 fast_accum ? "on (CUBLASLT_MATMUL_DESC_FAST_ACCUM)" : "off");
        break;
    case MB_GEMM_INT8:
        snprintf(text, sizeof text, "int8 in, int32 out, CUBLAS_COMPUTE_32I: integer tensor "
                                    "cores (IMMA)");
        break;
    default:
        snprintf(text, sizeof text, "?");
    }
    mb_report_info(r, "math_mode", text);
    /* Environment variables that silently change what these compute types do. */
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    if (tf32 && *tf32 && p->dtype == MB_GEMM_TF32 && strcmp(tf32, "0") == 0)
        mb_report_note(r, "NVIDIA_TF32_OVERRIDE=0 is set: TF32 is disabled, this tf32 case runs "
                          "strict fp32 math");
    const char *emu = getenv("CUBLAS_EMULATE_SINGLE_PRECISION");
    if (emu && *emu && (p->dtype == MB_GEMM_FP32 || p->dtype == MB_GEMM_TF32))
        mb_report_note(r, "CUBLAS_EMULATE_SINGLE_PRECISION=%s is set: cuBLAS may emulate fp32 "
                          "with BF16x9 on GPUs that support it",
                       emu);
    const char *strategy = getenv("CUBLAS_EMULATION_STRATEGY");
    if (strategy && *strategy)
        mb_report_note(r, "CUBLAS_EMULATION_STRATEGY=%s is set", strategy);
}

static int read_problem(mb_gemm_bench *g, const mb_params *params, mb_elem fp8_out, mb_err *err)
{
    long long m = mb_param_int(params, "m"), n = mb_param_int(params, "n");
    long long k = mb_param_int(params, "k"), batch = mb_param_int(params, "batch");
    const char *shape = mb_param_str(params, "shape");
    if (shape && *shape) {
        if (m || n || k || batch)
            return mb_errf(err, MB_EUSAGE,
                           "parameter shape: give either shape or m, n, k (and batch), not both");
        int rc = mb_gemm_parse_shape(shape, &m, &n, &k, &batch, err);
        if (rc != MB_OK)
            return rc;
    } else if (!m || !n || !k) {
        return mb_errf(err, MB_EUSAGE,
                       "parameters: give shape = MxNxK[xBATCH], or m, n and k (all > 0)");
    }
    if (batch == 0)
        batch = 1;
    mb_gemm_dtype dtype;
    int rc = mb_gemm_dtype_parse(mb_param_str(params, "dtype"), &dtype, err);
    if (rc != MB_OK)
        return rc;
    return mb_gemm_problem_init(&g->prob, m, n, k, batch, mb_param_str(params, "layout"), dtype,
                                fp8_out, (uint64_t)mb_param_int(params, "seed"), err);
}

static int read_device(mb_gemm_bench *g, mb_err *err)
{
    int rc = mb_cuda_probe(err);
    if (rc != MB_OK)
        return rc;
    const struct cudaDeviceProp *props = mb_cuda_props();
    if (!props)
        return mb_cuda_err(cudaGetLastError(), err, "cudaGetDeviceProperties");
    snprintf(g->device, sizeof g->device, "%s", props->name);
    g->major = props->major;
    g->minor = props->minor;
    g->cc = props->major * 10 + props->minor;
    g->sms = props->multiProcessorCount;
    g->l2_bytes = props->l2CacheSize > 0 ? (size_t)props->l2CacheSize : 0;
    int khz = 0;
    rc = mb_cuda_err(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, mb_cuda_device()), err,
                     "cudaDeviceGetAttribute(ClockRate)");
    g->clock_hz = khz * 1e3;
    return rc;
}

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Fills set 0 of A or B through a bounded host buffer, then copies set 0 to
 * the other sets on the device. */
static int upload(mb_gemm_bench *g, char which, void *base, size_t stride, mb_err *err)
{
    const mb_gemm_problem *p = &g->prob;
    mb_elem t = which == 'a' ? p->a_type : p->b_type;
    size_t esize = mb_elem_size(t);
    uint64_t total = mb_gemm_bytes(p, which) / esize;
    uint64_t chunk = (16u << 20) / esize;
    void *host = NULL;
    int rc = mb_cuda_err(cudaMallocHost(&host, chunk * esize), err, "cudaMallocHost");
    for (uint64_t first = 0; rc == MB_OK && first < total; first += chunk) {
        uint64_t count = total - first < chunk ? total - first : chunk;
        mb_gemm_fill(p, which, host, first, count);
        rc = mb_cuda_err(cudaMemcpy((char *)base + first * esize, host, count * esize,
                                    cudaMemcpyHostToDevice),
                         err, "cudaMemcpy(inputs)");
    }
    if (host)
        cudaFreeHost(host);
    for (int s = 1; rc == MB_OK && s < g->rotate; s++)
        rc = mb_cuda_err(cudaMemcpy((char *)base + (size_t)s * stride, base,
                                    mb_gemm_bytes(p, which), cudaMemcpyDeviceToDevice),
                         err, "cudaMemcpy(rotate sets)");
    return rc;
}

/* Picks the number of buffer sets: given, or enough to move 3x L2, reduced
 * to what fits in device memory. */
static int choose_rotate(mb_gemm_bench *g, const mb_params *params, mb_err *err)
{
    size_t set = g->set_stride_a + g->set_stride_b + g->set_stride_c;
    long long given = mb_param_int(params, "rotate");
    g->rotate_given = given > 0;
    g->rotate = g->rotate_given ? (int)given : mb_gemm_auto_rotate(set, g->l2_bytes);
    for (;;) {
        mb_err tmp = { 0 };
        size_t need = set * (size_t)g->rotate + g->workspace_bytes;
        int rc = mb_cuda_fits(need, &tmp);
        if (rc == MB_OK)
            return MB_OK;
        if (rc != MB_ESKIP || g->rotate_given || g->rotate == 1)
            return mb_errf(err, rc, "%s", tmp.msg);
        g->rotate = g->rotate / 2 > 1 ? g->rotate / 2 : 1;
        g->rotate_reduced = true;
    }
}

int mb_gemm_bench_setup(mb_gemm_bench *g, const mb_params *params, mb_elem fp8_out, mb_err *err)
{
    memset(g, 0, sizeof *g);
    int rc = read_problem(g, params, fp8_out, err);
    if (rc == MB_OK)
        rc = read_device(g, err);
    if (rc == MB_OK)
        rc = mb_gemm_problem_check(&g->prob, g->cc, err);
    if (rc != MB_OK)
        return rc;
    const mb_gemm_problem *p = &g->prob;
    g->samples = (int)mb_param_int(params, "samples");
    g->inner = (int)mb_param_int(params, "inner");
    g->inner_given = g->inner > 0;
    g->workspace_bytes = (size_t)mb_param_int(params, "workspace");
    g->set_stride_a = align_up(mb_gemm_bytes(p, 'a'), 256);
    g->set_stride_b = align_up(mb_gemm_bytes(p, 'b'), 256);
    g->set_stride_c = align_up(mb_gemm_bytes(p, 'c'), 256);
    rc = choose_rotate(g, params, err);
    if (rc != MB_OK)
        return rc;
    /* On failure everything allocated so far is released by
     * mb_gemm_bench_teardown(), which the backend's teardown calls. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        rc = mb_cuda_err((call), err, #call);                                                      \
        if (rc != MB_OK)                                                                           \
            return rc;                                                                             \
    } while (0)
    size_t n = (size_t)g->rotate;
    TRY(cudaMalloc(&g->base_a, g->set_stride_a * n));
    TRY(cudaMalloc(&g->base_b, g->set_stride_b * n));
    TRY(cudaMalloc(&g->base_c, g->set_stride_c * n));
    if (g->workspace_bytes)
        TRY(cudaMalloc(&g->workspace, g->workspace_bytes));
    if (p->dtype == MB_GEMM_FP8) {
        float scales[2] = { (float)p->a_scale, (float)p->b_scale };
        TRY(cudaMalloc((void **)&g->scales, sizeof scales));
        TRY(cudaMemcpy(g->scales, scales, sizeof scales, cudaMemcpyHostToDevice));
    }
    rc = upload(g, 'a', g->base_a, g->set_stride_a, err);
    if (rc == MB_OK)
        rc = upload(g, 'b', g->base_b, g->set_stride_b, err);
    if (rc != MB_OK)
        return rc;
    /* The copies ran on the legacy stream (device-to-device and pageable
     * ones return before they finish), which a non-blocking stream does not
     * wait for: finish them before any GEMM is queued. */
    TRY(cudaDeviceSynchronize());
    TRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
#undef TRY
    rc = mb_cuda_timer_init(&g->timer, g->stream, err);
    g->timer_ready = true; /* destroy copes with a half-made timer */
    return rc;
}

void mb_gemm_bench_teardown(mb_gemm_bench *g)
{
    if (!g)
        return;
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    if (g->timer_ready)
        mb_cuda_timer_destroy(&g->timer);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    cudaFree(g->base_a);
    cudaFree(g->base_b);
    cudaFree(g->base_c);
    cudaFree(g->workspace);
    cudaFree(g->scales);
    cudaGetLastError(); /* teardown must not leave an error for the next case */
    memset(g, 0, sizeof *g);
}

void mb_gemm_bench_operands(mb_gemm_bench *g, const void **a, const void **b, void **c)
{
    size_t s = (size_t)g->next;
    *a = (const char *)g->base_a + s * g->set_stride_a;
    *b = (const char *)g->base_b + s * g->set_stride_b;
    *c = (char *)g->base_c + s * g->set_stride_c;
    g->next = (g->next + 1) % g->rotate;
    g->calls++;
}

static int call_next(mb_gemm_bench *g, mb_gemm_call_fn call, void *backend, mb_err *err)
{
    const void *a, *b;
    void *c;
    mb_gemm_bench_operands(g, &a, &b, &c);
    return call(backend, a, b, c, err);
}

int mb_gemm_bench_time(mb_gemm_bench *g, mb_gemm_call_fn call, void *backend, int reps,
                       double *seconds_per_call, mb_err *err)
{
    *seconds_per_call = 0;
    int rc = call_next(g, call, backend, err); /* loads the kernel; not timed */
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamSynchronize(g->stream), err, "cudaStreamSynchronize");
    if (rc == MB_OK)
        rc = mb_cuda_timer_start(&g->timer, err);
    for (int i = 0; rc == MB_OK && i < reps; i++)
        rc = call_next(g, call, backend, err);
    double sec = 0;
    if (rc == MB_OK)
        rc = mb_cuda_timer_stop(&g->timer, &sec, err);
    else
        cudaStreamSynchronize(g->stream);
    if (rc == MB_OK)
        *seconds_per_call = sec / (reps > 0 ? reps : 1);
    return rc;
}

int mb_gemm_bench_finish_setup(mb_gemm_bench *g, double seconds_per_call, mb_err *err)
{
    if (!g->inner_given) {
        /* About 2 ms of back-to-back GEMMs per timed iteration: the host gap
         * before the first launch (a few us) is then under 0.5% of the timing. */
        double want = seconds_per_call > 0 ? ceil(2e-3 / seconds_per_call) : 1;
        g->inner = want < 1 ? 1 : want > 10000 ? 10000 : (int)want;
    }
    /* 0x7F bytes: NaN in fp16, huge in fp32/bf16/fp64, 2139062143 in int32;
     * no correct result looks like that. */
    int rc = mb_cuda_err(cudaMemsetAsync(g->base_c, 0x7F, g->set_stride_c * (size_t)g->rotate,
                                         g->stream),
                         err, "cudaMemsetAsync(poison outputs)");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamSynchronize(g->stream), err, "cudaStreamSynchronize");
    g->next = 0;
    g->calls = 0;
    return rc;
}

int mb_gemm_bench_run(mb_gemm_bench *g, mb_gemm_call_fn call, void *backend, double *seconds,
                      mb_err *err)
{
    *seconds = 0;
    int rc = mb_cuda_timer_start(&g->timer, err);
    for (int i = 0; rc == MB_OK && i < g->inner; i++)
        rc = call_next(g, call, backend, err);
    if (rc == MB_OK)
        return mb_cuda_timer_stop(&g->timer, seconds, err);
    cudaStreamSynchronize(g->stream);
    return rc;
}

double mb_gemm_bench_work(const mb_gemm_bench *g)
{
    return mb_gemm_problem_flops(&g->prob) * (g->inner > 0 ? g->inner : 1);
}

typedef struct fetch_ctx {
    mb_gemm_bench *g;
    int written; /* sets 0..written-1 hold run() output */
} fetch_ctx;

static int fetch_device(void *ctx, int sample, uint64_t c_index, double *value, mb_err *err)
{
    fetch_ctx *f = ctx;
    mb_gemm_bench *g = f->g;
    size_t esize = mb_elem_size(g->prob.c_type);
    size_t set = (size_t)(sample % f->written);
    unsigned char buf[8];
    const char *src = (const char *)g->base_c + set * g->set_stride_c + c_index * esize;
    int rc = mb_cuda_err(cudaMemcpy(buf, src, esize, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(output sample)");
    if (rc == MB_OK)
        *value = mb_elem_load(g->prob.c_type, buf);
    return rc;
}

int mb_gemm_bench_verify(mb_gemm_bench *g, mb_err *err)
{
    if (g->calls == 0)
        return mb_errf(err, MB_ESKIP, "no timed iteration ran: nothing to verify");
    int rc = mb_cuda_err(cudaStreamSynchronize(g->stream), err, "cudaStreamSynchronize");
    if (rc != MB_OK)
        return rc;
    fetch_ctx f = { g, g->calls < g->rotate ? (int)g->calls : g->rotate };
    mb_gemm_check_result res;
    return mb_gemm_check(&g->prob, g->samples, fetch_device, &f, &res, err);
}

static const char *math_key(mb_gemm_dtype d)
{
    return mb_gemm_dtype_name(d);
}

void mb_gemm_bench_report(mb_gemm_bench *g, mb_report *r)
{
    const mb_gemm_problem *p = &g->prob;
    char text[256];
    snprintf(text, sizeof text, "%lldx%lldx%lld batch %lld %s (column-major, cuBLAS convention)",
             p->m, p->n, p->k, p->batch, mb_gemm_layout_name(p));
    mb_report_info(r, "shape", text);
    mb_report_info(r, "layout", mb_gemm_layout_name(p));
    mb_report_info(r, "device", g->device);
    mb_report_metric(r, "gemms_per_iteration", g->inner, "");
    mb_report_metric(r, "buffer_sets", g->rotate, "");
    size_t set = g->set_stride_a + g->set_stride_b + g->set_stride_c;
    double moved = (double)set * g->rotate;
    if (g->rotate_given)
        mb_report_note(r, "rotate=%d given: %d buffer set(s) of %.1f MiB, %.1f MiB in all (L2 %.1f "
                          "MiB)",
                       g->rotate, g->rotate, set / 1048576.0, moved / 1048576.0,
                       g->l2_bytes / 1048576.0);
    else
        mb_report_note(r, "rotating through %d buffer set(s) of %.1f MiB (%.1f MiB in all, chosen "
                          "from the %.1f MiB L2 cache: >= 3x L2) so inputs are not L2-resident",
                       g->rotate, set / 1048576.0, moved / 1048576.0, g->l2_bytes / 1048576.0);
    if (g->rotate_reduced)
        mb_report_note(r, "buffer sets reduced to %d to fit in device memory", g->rotate);
    if (moved < 2.0 * (double)g->l2_bytes)
        mb_report_note(r, "all buffer sets together (%.1f MiB) fit in L2 (%.1f MiB): inputs may "
                          "be L2-resident",
                       moved / 1048576.0, g->l2_bytes / 1048576.0);
    if (!g->inner_given)
        mb_report_note(r, "%d GEMM call(s) per timed iteration (about 2 ms), back to back on one "
                          "stream, no synchronisation between them",
                       g->inner);
    if (p->dtype == MB_GEMM_INT8)
        mb_report_note(r, "int8: the rate counts integer multiply-adds as 2 operations; read "
                          "TFLOP/s as TOPS");
    mb_gpu_peak_report(r, g->device, g->major, g->minor, g->sms, g->clock_hz, math_key(p->dtype));
}
#endif /* MB_HAVE_CUDA */
