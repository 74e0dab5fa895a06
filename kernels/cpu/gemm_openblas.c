/* gemm_openblas.c: CPU GEMM ceiling through OpenBLAS (cblas_sgemm /
 * cblas_dgemm), C = A * B with alpha 1, beta 0, row-major, across the cores.
 *
 * Rate: mb_gemm_flops(m, n, k, 1) per call, in GFLOP/s. Peak: computed from
 * cpu_info (cores used x clock x FLOPs/cycle of the ISA found; the FMA unit
 * count is a guess and the peak's source says so).
 *
 * Verification: 256 output elements (the four corners and random others, the
 * whole matrix when it is smaller) recomputed in double on the CPU. The
 * tolerance is 4 u sqrt(k) sum_p |A(i,p) B(p,j)| with u the unit roundoff of
 * the dtype: a rounding-error bound for sums of k terms whose errors do not
 * all line up, far below one missing or wrong term of the sum. C starts as
 * NaN so an element the library never wrote cannot pass. */
#include "component.h"

#ifdef MB_HAVE_OPENBLAS
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "cpu_info.h"
#include "cpu_report.h"
#include "gemm_common.h"
#include "cpu_test_hooks.h"
#include "formulas.h"

#define GEMM_SAMPLES 256

typedef struct gemm_state {
    bool fp64;
    int m, n, k;
    bool trans_a, trans_b;
    void *a, *b, *c;
    int threads;      /* OpenBLAS threads in force */
    int n_samples;
    int si[GEMM_SAMPLES], sj[GEMM_SAMPLES];
    bool ran;
} gemm_state;

/* OpenBLAS's thread count before any case changed it: what threads=0 means. */
static int default_threads;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void read_default_threads(void)
{
    default_threads = openblas_get_num_threads();
}

static int resolve_threads(const mb_params *p, mb_err *err)
{
    pthread_once(&default_once, read_default_threads);
    return mb_cpu_threads_for((int)mb_param_int(p, "threads"), default_threads, err);
}

static double elem_bytes(const mb_params *p)
{
    return strcmp(mb_param_str(p, "dtype"), "fp64") == 0 ? 8.0 : 4.0;
}

static int check_fits(const mb_params *p, mb_err *err)
{
    double m = (double)mb_param_int(p, "m"), n = (double)mb_param_int(p, "n"),
           k = (double)mb_param_int(p, "k");
    double need = (m * k + k * n + m * n) * elem_bytes(p);
    return mb_mem_fits(need, "A, B and C", err);
}

static int gemm_probe(const mb_params *p, mb_err *why)
{
    if (p == NULL)
        return MB_OK;
    if (resolve_threads(p, why) < 0)
        return MB_ESKIP;
    return check_fits(p, why);
}

/* A(i,p), B(p,j), C(i,j) of the row-major operands as stored. */
static size_t idx_a(const gemm_state *st, int i, int p)
{
    return st->trans_a ? (size_t)p * (size_t)st->m + (size_t)i : (size_t)i * (size_t)st->k + (size_t)p;
}

static size_t idx_b(const gemm_state *st, int p, int j)
{
    return st->trans_b ? (size_t)j * (size_t)st->k + (size_t)p : (size_t)p * (size_t)st->n + (size_t)j;
}

static double get(const gemm_state *st, const void *x, size_t i)
{
    return st->fp64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

static void fill_random(gemm_state *st, void *x, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++) {
        double v = mb_rand_unit(&seed);
        if (v == 0.0)
            v = 0.5;
        if (st->fp64)
            ((double *)x)[i] = v;
        else
            ((float *)x)[i] = (float)v;
    }
}

static void fill_nan(gemm_state *st, void *x, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (st->fp64)
            ((double *)x)[i] = NAN;
        else
            ((float *)x)[i] = NAN;
    }
}

/* The corners (indexing mistakes show there first), then random positions;
 * every element when C has no more than GEMM_SAMPLES of them. */
static void choose_samples(gemm_state *st)
{
    st->n_samples = mb_gemm_sample_positions(st->m, st->n, st->si, st->sj, GEMM_SAMPLES);
}

static void gemm_teardown(void *state);

static int gemm_setup(const mb_params *p, void **state, mb_err *err)
{
    int rc;
    int threads = resolve_threads(p, err);
    if (threads < 0)
        return MB_ESKIP;
    if ((rc = check_fits(p, err)) != MB_OK)
        return rc;
    gemm_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = st;
    st->fp64 = strcmp(mb_param_str(p, "dtype"), "fp64") == 0;
    st->m = (int)mb_param_int(p, "m");
    st->n = (int)mb_param_int(p, "n");
    st->k = (int)mb_param_int(p, "k");
    const char *trans = mb_param_str(p, "trans");
    st->trans_a = trans[0] == 't';
    st->trans_b = trans[1] == 't';
    size_t esz = st->fp64 ? sizeof(double) : sizeof(float);
    size_t na = (size_t)st->m * (size_t)st->k, nb = (size_t)st->k * (size_t)st->n,
           nc = (size_t)st->m * (size_t)st->n;
    st->a = aligned_alloc(64, (na * esz + 63) / 64 * 64);
    st->b = aligned_alloc(64, (nb * esz + 63) / 64 * 64);
    st->c = aligned_alloc(64, (nc * esz + 63) / 64 * 64);
    if (st->a == NULL || st->b == NULL || st->c == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory for A, B, C (%d x %d x %d)", st->m, st->n, st->k);
        goto fail;
    }
    fill_random(st, st->a, na, 0xA11CE);
    fill_random(st, st->b, nb, 0xB0B);
    fill_nan(st, st->c, nc);
    choose_samples(st);
    openblas_set_num_threads(threads);
    st->threads = openblas_get_num_threads();
    return MB_OK;
fail:
    gemm_teardown(st);
    *state = NULL;
    return rc;
}

static int gemm_run(void *state, double *seconds, mb_err *err)
{
    (void)err;
    gemm_state *st = state;
    enum CBLAS_TRANSPOSE ta = st->trans_a ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = st->trans_b ? CblasTrans : CblasNoTrans;
    int lda = st->trans_a ? st->m : st->k;
    int ldb = st->trans_b ? st->k : st->n;
    double t0 = mb_now();
    if (st->fp64)
        cblas_dgemm(CblasRowMajor, ta, tb, st->m, st->n, st->k, 1.0, st->a, lda, st->b, ldb, 0.0,
                    st->c, st->n);
    else
        cblas_sgemm(CblasRowMajor, ta, tb, st->m, st->n, st->k, 1.0f, st->a, lda, st->b, ldb,
                    0.0f, st->c, st->n);
    *seconds = mb_now() - t0;
    st->ran = true;
    return MB_OK;
}

static double gemm_work(void *state)
{
    gemm_state *st = state;
    return mb_gemm_flops(st->m, st->n, st->k, 1);
}

static int gemm_verify(void *state, mb_err *err)
{
    gemm_state *st = state;
    if (!st->ran)
        return mb_errf(err, MB_ESKIP, "no iteration ran");
    double u = st->fp64 ? 0x1p-53 : 0x1p-24;
    int bad = 0, first = -1;
    double first_got = 0, first_want = 0, first_tol = 0;
    for (int s = 0; s < st->n_samples; s++) {
        int i = st->si[s], j = st->sj[s];
        double want = 0.0, mag = 0.0;
        for (int p = 0; p < st->k; p++) {
            double prod = get(st, st->a, idx_a(st, i, p)) * get(st, st->b, idx_b(st, p, j));
            want += prod;
            mag += fabs(prod);
        }
        double tol = 4.0 * u * sqrt((double)st->k) * mag;
        double got = get(st, st->c, (size_t)i * (size_t)st->n + (size_t)j);
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
    return mb_errf(err, MB_EVERIFY, "%s: %d of %d sampled elements wrong; C[%d][%d] = %.9g, "
                   "expected %.9g (tolerance %.3g)", st->fp64 ? "dgemm" : "sgemm", bad,
                   st->n_samples, st->si[first], st->sj[first], first_got, first_want, first_tol);
}

static void gemm_report(void *state, mb_report *r)
{
    gemm_state *st = state;
    mb_cpu_dtype dt = st->fp64 ? MB_CPU_FP64 : MB_CPU_FP32;
    mb_cpu_report_peak(r, dt, st->threads);
    mb_report_info(r, "routine", st->fp64 ? "cblas_dgemm" : "cblas_sgemm");
    mb_report_info(r, "openblas_config", openblas_get_config());
    mb_report_info(r, "openblas_core", openblas_get_corename());
    mb_report_info(r, "verification", "sampled elements recomputed in double, tolerance "
                                      "4 u sqrt(k) sum|a b|");
    /* The kernels OpenBLAS runs, whatever chose them (OPENBLAS_CORETYPE, or
     * its detection, or a build for one target): a narrower ISA than the
     * CPU's caps this case below the CPU's ceiling, and the results say so. */
    mb_cpu_isa used;
    char cap[512];
    if (mb_cpu_openblas_core_isa(openblas_get_corename(), &used) &&
        mb_cpu_cap_note(mb_cpu_info_host(), "OpenBLAS", openblas_get_corename(), used, "OPENBLAS_CORETYPE",
                        getenv("OPENBLAS_CORETYPE"), dt, cap, sizeof cap))
        mb_report_note(r, "%s", cap);
    mb_cpu_report_smt_note(r, st->threads);
}

static void gemm_teardown(void *state)
{
    gemm_state *st = state;
    if (st == NULL)
        return;
    free(st->a);
    free(st->b);
    free(st->c);
    free(st);
    /* Leave OpenBLAS as the next case expects to find it. */
    pthread_once(&default_once, read_default_threads);
    openblas_set_num_threads(default_threads);
}

void mb_test_gemm_corrupt(void *state)
{
    gemm_state *st = state;
    size_t e = (size_t)st->si[0] * (size_t)st->n + (size_t)st->sj[0];
    double v = get(st, st->c, e) + 1.0 + fabs(get(st, st->c, e));
    if (st->fp64)
        ((double *)st->c)[e] = v;
    else
        ((float *)st->c)[e] = (float)v;
}

const mb_backend_code mb_gemm_openblas = {
    .component = "gemm",
    .backend = "openblas",
    .probe = gemm_probe,
    .setup = gemm_setup,
    .run = gemm_run,
    .work_per_iter = gemm_work,
    .verify = gemm_verify,
    .report = gemm_report,
    .teardown = gemm_teardown,
};

#else /* !MB_HAVE_OPENBLAS */

MB_NOT_BUILT_IN(mb_gemm_openblas, "gemm", "openblas",
                "OpenBLAS not found at build time (apt-get install libopenblas-dev)");

void mb_test_gemm_corrupt(void *state)
{
    (void)state;
}

#endif
