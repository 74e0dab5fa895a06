/* gemm_onednn.c: CPU GEMM ceiling through oneDNN's matmul primitive (C API),
 * fp32, and bf16 (bf16 A, B and C, f32 accumulation) where the CPU has native
 * bf16 dot products. Beside OpenBLAS so the CPU GEMM ceiling is the best
 * verified library's: on the same cores the two can differ by 2x (kernel
 * choice, ISA caps from the environment), and `gap` takes the best.
 *
 * The problem is OpenBLAS's: C = A B, row-major A (m x k) and B (k x n) as
 * stored, `trans` t meaning stored transposed (oneDNN's `ba` tag), plain
 * layouts on both sides (what torch.matmul hands oneDNN), no reorders.
 * Rate: mb_gemm_flops(m, n, k, 1) per call, GFLOP/s; the peak is cpu_info's.
 *
 * Setup (untimed): primitive creation. Timed region: dnnl_primitive_execute
 * + dnnl_stream_wait. Verification: 256 sampled elements (the corners and
 * random others, every element when C is smaller) against a sum in double
 * over the exact inputs (bf16 inputs are generated already rounded), with
 * OpenBLAS's tolerance 4 u32 sqrt(k) sum |a b|, plus 2^-8 |ref| for the
 * rounding of a bf16 C. C starts as NaN. A reference implementation ("ref"
 * in oneDNN's implementation name) is skipped: it is not a ceiling. */
#include "component.h"
#include "cpu_info.h"
#include "cpu_report.h"
#include "gemm_common.h"
#include "cpu_test_hooks.h"
#include "onednn_util.h"

#ifdef MB_HAVE_DNNL
#include <math.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "formulas.h"

#define GEMM_SAMPLES 256

typedef struct onednn_gemm {
    bool bf16;
    int m, n, k;
    bool trans_a, trans_b;
    float *a, *b;           /* exact inputs as stored, f32 */
    void *a_lib, *b_lib, *c; /* what oneDNN reads and writes (bf16 copies for bf16) */
    int threads;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, dst;
    char impl[128];
    int n_samples;
    int si[GEMM_SAMPLES], sj[GEMM_SAMPLES];
    bool ran;
} onednn_gemm;

static bool want_bf16(const mb_params *p)
{
    return strcmp(mb_param_str(p, "dtype"), "bf16") == 0;
}

/* bf16 needs native dot products: oneDNN would emulate it on plain AVX-512
 * (or use its reference code), which measures the emulation, not a ceiling. */
static int check_dtype(const mb_params *p, mb_err *why)
{
    if (!want_bf16(p))
        return MB_OK;
    int rc = mb_test_conv_bf16_support(mb_cpu_info_host(), why);
    if (rc != MB_OK)
        return rc;
    if (!mb_onednn_isa_has_bf16())
        return mb_errf(why, MB_ESKIP, "bf16: oneDNN's effective ISA is %s (DNNL_MAX_CPU_ISA?)",
                       dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
    return MB_OK;
}

/* A and B in f32 (the reference) and in the library's type, and C. */
static int check_fits(const mb_params *p, mb_err *err)
{
    double m = (double)mb_param_int(p, "m"), n = (double)mb_param_int(p, "n"),
           k = (double)mb_param_int(p, "k");
    double need = (m * k + k * n) * (want_bf16(p) ? 6.0 : 4.0) + m * n * 4.0;
    return mb_mem_fits(need, "A, B and C", err);
}

static int onednn_gemm_probe(const mb_params *p, mb_err *why)
{
    if (p == NULL)
        return MB_OK;
    int rc = check_dtype(p, why);
    if (rc != MB_OK)
        return rc;
    if (mb_onednn_resolve_threads(p, why) < 0)
        return MB_ESKIP;
    return check_fits(p, why);
}

static uint16_t to_bf16_bits(float f) /* f is already a bf16 value: exact */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static float from_bf16_bits(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest even, as oneDNN converts. */
static float round_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    u &= 0xFFFF0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Random values in (0, 1) (exactly representable in the dtype), then the
 * library's copy: the same array for fp32, bf16 bits for bf16. */
static void *fill_inputs(float *x, size_t count, uint64_t seed, bool bf16)
{
    for (size_t i = 0; i < count; i++) {
        float v = (float)mb_rand_unit(&seed);
        if (bf16)
            v = round_to_bf16(v);
        x[i] = v != 0.0f ? v : 0.5f;
    }
    if (!bf16)
        return x;
    uint16_t *h = malloc(count * sizeof *h);
    for (size_t i = 0; h && i < count; i++)
        h[i] = to_bf16_bits(x[i]);
    return h;
}

static void choose_samples(onednn_gemm *st)
{
    st->n_samples = mb_gemm_sample_positions(st->m, st->n, st->si, st->sj, GEMM_SAMPLES);
}

static int create_primitive(onednn_gemm *st, mb_err *err)
{
    int rc = MB_OK;
    dnnl_data_type_t dt = st->bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_dims_t a_dims = { st->m, st->k }, b_dims = { st->k, st->n }, c_dims = { st->m, st->n };
    dnnl_memory_desc_t a_md, b_md, c_md;
    dnnl_matmul_desc_t md;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&a_md, 2, a_dims, dt, st->trans_a ? dnnl_ba : dnnl_ab),
             "A md");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&b_md, 2, b_dims, dt, st->trans_b ? dnnl_ba : dnnl_ab),
             "B md");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&c_md, 2, c_dims, dt, dnnl_ab), "C md");
    DNNL_TRY(dnnl_matmul_desc_init(&md, &a_md, &b_md, NULL, &c_md), "matmul desc");
    DNNL_TRY(dnnl_primitive_desc_create(&st->pd, &md, NULL, st->engine, NULL),
             "matmul primitive desc (no implementation for this shape/dtype?)");
    const char *impl = NULL;
    dnnl_primitive_desc_query(st->pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(st->impl, sizeof st->impl, "%s", impl ? impl : "?");
    if (strstr(st->impl, "ref")) {
        rc = mb_errf(err, MB_ESKIP, "oneDNN has only its reference matmul (%s) for %s on ISA %s: "
                     "not a ceiling", st->impl, st->bf16 ? "bf16" : "fp32",
                     dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
        goto fail;
    }
    DNNL_TRY(dnnl_primitive_create(&st->prim, st->pd), "matmul primitive");
    DNNL_TRY(dnnl_memory_create(&st->src, &a_md, st->engine, st->a_lib), "A memory");
    DNNL_TRY(dnnl_memory_create(&st->wei, &b_md, st->engine, st->b_lib), "B memory");
    DNNL_TRY(dnnl_memory_create(&st->dst, &c_md, st->engine, st->c), "C memory");
fail:
    return rc;
}

static void onednn_gemm_teardown(void *state);

static int onednn_gemm_setup(const mb_params *p, void **state, mb_err *err)
{
    int rc;
    if ((rc = check_dtype(p, err)) != MB_OK || (rc = check_fits(p, err)) != MB_OK)
        return rc;
    int threads = mb_onednn_resolve_threads(p, err);
    if (threads < 0)
        return MB_ESKIP;
    onednn_gemm *st = calloc(1, sizeof *st);
    if (st == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = st;
    st->bf16 = want_bf16(p);
    st->m = (int)mb_param_int(p, "m");
    st->n = (int)mb_param_int(p, "n");
    st->k = (int)mb_param_int(p, "k");
    const char *trans = mb_param_str(p, "trans");
    st->trans_a = trans[0] == 't';
    st->trans_b = trans[1] == 't';
    /* Before the primitive exists: oneDNN partitions work by the thread
     * count it sees at creation. */
    st->threads = mb_onednn_set_threads(threads);
    size_t na = (size_t)st->m * st->k, nb = (size_t)st->k * st->n, nc = (size_t)st->m * st->n;
    size_t esz = st->bf16 ? 2 : 4;
    st->a = malloc(na * sizeof *st->a);
    st->b = malloc(nb * sizeof *st->b);
    st->c = malloc(nc * esz);
    if (st->a == NULL || st->b == NULL || st->c == NULL ||
        (st->a_lib = fill_inputs(st->a, na, 0xA11CE, st->bf16)) == NULL ||
        (st->b_lib = fill_inputs(st->b, nb, 0xB0B, st->bf16)) == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory for A, B, C (%d x %d x %d)", st->m, st->n, st->k);
        goto fail;
    }
    memset(st->c, 0xFF, nc * esz); /* NaN in f32 and bf16: an element never written fails */
    choose_samples(st);
    DNNL_TRY(dnnl_engine_create(&st->engine, dnnl_cpu, 0), "engine");
    DNNL_TRY(dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags), "stream");
    if ((rc = create_primitive(st, err)) != MB_OK)
        goto fail;
    return MB_OK;
fail:
    onednn_gemm_teardown(st);
    *state = NULL;
    return rc;
}

static int onednn_gemm_run(void *state, double *seconds, mb_err *err)
{
    onednn_gemm *st = state;
    int rc = mb_onednn_run_timed(st->prim, st->stream, st->src, st->wei, st->dst, "matmul execute", seconds, err);
    st->ran = st->ran || rc == MB_OK;
    return rc;
}

static double onednn_gemm_work(void *state)
{
    onednn_gemm *st = state;
    return mb_gemm_flops(st->m, st->n, st->k, 1);
}

static double c_at(const onednn_gemm *st, size_t e)
{
    return st->bf16 ? (double)from_bf16_bits(((const uint16_t *)st->c)[e])
                    : (double)((const float *)st->c)[e];
}

static int onednn_gemm_verify(void *state, mb_err *err)
{
    onednn_gemm *st = state;
    if (!st->ran)
        return mb_errf(err, MB_ESKIP, "no iteration ran");
    int bad = 0, first = -1;
    double first_got = 0, first_want = 0, first_tol = 0;
    for (int s = 0; s < st->n_samples; s++) {
        int i = st->si[s], j = st->sj[s];
        double want = 0.0, mag = 0.0;
        for (int p = 0; p < st->k; p++) {
            size_t ia = st->trans_a ? (size_t)p * st->m + i : (size_t)i * st->k + p;
            size_t ib = st->trans_b ? (size_t)j * st->k + p : (size_t)p * st->n + j;
            double prod = (double)st->a[ia] * (double)st->b[ib];
            want += prod;
            mag += fabs(prod);
        }
        double tol = 4.0 * 0x1p-24 * sqrt((double)st->k) * mag +
                     (st->bf16 ? 0x1p-8 * fabs(want) : 0.0);
        double got = c_at(st, (size_t)i * st->n + j);
        if (fabs(got - want) <= tol) /* false for NaN */
            continue;
        if (bad++ == 0) {
            first = s;
            first_got = got;
            first_want = want;
            first_tol = tol;
        }
    }
    if (bad == 0)
        return MB_OK;
    return mb_errf(err, MB_EVERIFY, "oneDNN matmul %s: %d of %d sampled elements wrong; "
                   "C[%d][%d] = %.9g, expected %.9g (tolerance %.3g)",
                   st->bf16 ? "bf16" : "fp32", bad, st->n_samples, st->si[first], st->sj[first],
                   first_got, first_want, first_tol);
}

static void onednn_gemm_report(void *state, mb_report *r)
{
    onednn_gemm *st = state;
    mb_cpu_dtype dt = st->bf16 ? MB_CPU_BF16 : MB_CPU_FP32;
    mb_cpu_report_peak(r, dt, st->threads);
    mb_report_info(r, "routine", "dnnl_matmul (plain row-major layouts, no reorders)");
    mb_report_info(r, "implementation", st->impl);
    mb_onednn_report(r, dt);
    mb_report_info(r, "verification", "sampled elements recomputed in double, tolerance "
                                      "4 u32 sqrt(k) sum|a b| (+2^-8 |c| for bf16 C)");
    mb_cpu_report_smt_note(r, st->threads);
}

static void onednn_gemm_teardown(void *state)
{
    onednn_gemm *st = state;
    if (st == NULL)
        return;
    if (st->prim)
        dnnl_primitive_destroy(st->prim);
    if (st->pd)
        dnnl_primitive_desc_destroy(st->pd);
    dnnl_memory_t mems[3] = { st->src, st->wei, st->dst };
    for (int i = 0; i < 3; i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    if (st->stream)
        dnnl_stream_destroy(st->stream);
    if (st->engine)
        dnnl_engine_destroy(st->engine);
    if (st->a_lib != st->a)
        free(st->a_lib);
    if (st->b_lib != st->b)
        free(st->b_lib);
    free(st->a);
    free(st->b);
    free(st->c);
    free(st);
    mb_onednn_restore_threads();
}

void mb_test_gemm_onednn_corrupt(void *state)
{
    onednn_gemm *st = state;
    size_t e = (size_t)st->si[0] * st->n + st->sj[0];
    double v = c_at(st, e);
    float bad = (float)(v + 1.0 + fabs(v) * 2.0); /* off by far more than any tolerance */
    if (st->bf16)
        ((uint16_t *)st->c)[e] = to_bf16_bits(round_to_bf16(bad));
    else
        ((float *)st->c)[e] = bad;
}

const mb_backend_code mb_gemm_onednn = {
    .component = "gemm",
    .backend = "onednn",
    .probe = onednn_gemm_probe,
    .setup = onednn_gemm_setup,
    .run = onednn_gemm_run,
    .work_per_iter = onednn_gemm_work,
    .verify = onednn_gemm_verify,
    .report = onednn_gemm_report,
    .teardown = onednn_gemm_teardown,
};

#else /* !MB_HAVE_DNNL */

MB_NOT_BUILT_IN(mb_gemm_onednn, "gemm", "onednn", "oneDNN not found at build time (apt-get install libdnnl-dev)");

void mb_test_gemm_onednn_corrupt(void *state)
{
    (void)state;
}

#endif
