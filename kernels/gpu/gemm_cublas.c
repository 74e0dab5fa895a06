/* gemm_cublas.c: the GEMM rate a user gets by default, through plain cuBLAS:
 * cublasGemmEx (cublasGemmStridedBatchedEx when batch > 1) with
 * CUBLAS_GEMM_DEFAULT, i.e. cuBLAS's own heuristic picks the kernel. This is
 * the call PyTorch's torch.matmul makes for fp32/fp16/bf16 tensors, so its
 * rate is what a framework sees; the cuBLASLt backend is the autotuned
 * ceiling beside it.
 *
 * The handle gets the benchmark's stream, a preallocated workspace
 * (cublasSetWorkspace, so cuBLAS never allocates one of its own inside the
 * timed region) and CUBLAS_DEFAULT_MATH: the compute type alone decides the
 * math (CUBLAS_COMPUTE_32F: no TF32; CUBLAS_COMPUTE_32F_FAST_TF32: TF32).
 * fp8 is not available through cublasGemmEx: those cases are skipped.
 */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_common.h"

typedef struct cublas_state {
    mb_gemm_bench g; /* first: tests reach the common part through it */
    cublasHandle_t handle;
    mb_gemm_cuda_types types;
    mb_gemm_scalars scalars;
    double seconds_per_call; /* measured in setup */
} cublas_state;

static int cublas_call(void *backend, const void *a, const void *b, void *c, mb_err *err)
{
    cublas_state *s = backend;
    const mb_gemm_problem *p = &s->g.prob;
    const mb_gemm_cuda_types *t = &s->types;
    cublasOperation_t ta = p->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st;
    if (p->batch == 1)
        st = cublasGemmEx(s->handle, ta, tb, (int)p->m, (int)p->n, (int)p->k, s->scalars.alpha, a,
                          t->a, (int)p->lda, b, t->b, (int)p->ldb, s->scalars.beta, c, t->c,
                          (int)p->ldc, t->compute, CUBLAS_GEMM_DEFAULT);
    else
        st = cublasGemmStridedBatchedEx(s->handle, ta, tb, (int)p->m, (int)p->n, (int)p->k,
                                        s->scalars.alpha, a, t->a, (int)p->lda, p->stride_a, b,
                                        t->b, (int)p->ldb, p->stride_b, s->scalars.beta, c, t->c,
                                        (int)p->ldc, p->stride_c, (int)p->batch, t->compute,
                                        CUBLAS_GEMM_DEFAULT);
    return mb_cublas_err((int)st, err, p->batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx");
}

static void cublas_teardown(void *state)
{
    cublas_state *s = state;
    if (!s)
        return;
    if (s->g.stream)
        cudaStreamSynchronize(s->g.stream);
    if (s->handle)
        cublasDestroy(s->handle);
    mb_gemm_bench_teardown(&s->g);
    free(s);
}

#define CB_TRY(call)                                                                               \
    do {                                                                                           \
        if (rc == MB_OK)                                                                           \
            rc = mb_cublas_err((int)(call), err, #call);                                           \
    } while (0)

static int cublas_setup(const mb_params *params, void **state, mb_err *err)
{
    *state = NULL;
    mb_gemm_dtype dtype;
    int rc = mb_gemm_dtype_parse(mb_param_str(params, "dtype"), &dtype, err);
    if (rc != MB_OK)
        return rc;
    if (dtype == MB_GEMM_FP8)
        return mb_errf(err, MB_ESKIP,
                       "fp8 is not available through cublasGemmEx: use backend cublaslt");
    cublas_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    rc = mb_gemm_bench_setup(&s->g, params, MB_ELEM_BF16, err);
    CB_TRY(cublasCreate(&s->handle));
    CB_TRY(cublasSetStream(s->handle, s->g.stream));
    CB_TRY(cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH));
    if (s->g.workspace_bytes)
        CB_TRY(cublasSetWorkspace(s->handle, s->g.workspace, s->g.workspace_bytes));
    if (rc == MB_OK) {
        s->types = mb_gemm_cuda_types_of(&s->g.prob);
        mb_gemm_scalars_init(&s->scalars, &s->g.prob);
        /* Warm the clocks for ~50 ms, then measure one call to size `inner`. */
        double one = 0, unused = 0;
        rc = mb_gemm_bench_time(&s->g, cublas_call, s, 1, &one, err);
        if (rc == MB_OK && one > 0) {
            double want = 50e-3 / one;
            rc = mb_gemm_bench_time(&s->g, cublas_call, s,
                                    want < 1 ? 1 : want > 1000 ? 1000 : (int)want, &unused, err);
        }
        if (rc == MB_OK)
            rc = mb_gemm_bench_time(&s->g, cublas_call, s, 3, &s->seconds_per_call, err);
    }
    if (rc == MB_OK)
        rc = mb_gemm_bench_finish_setup(&s->g, s->seconds_per_call, err);
    if (rc != MB_OK) {
        cublas_teardown(s);
        return rc;
    }
    *state = s;
    return MB_OK;
}

static int cublas_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static int cublas_run(void *state, double *seconds, mb_err *err)
{
    cublas_state *s = state;
    return mb_gemm_bench_run(&s->g, cublas_call, s, seconds, err);
}

static double cublas_work(void *state)
{
    return mb_gemm_bench_work(&((cublas_state *)state)->g);
}

static int cublas_verify(void *state, mb_err *err)
{
    return mb_gemm_bench_verify(&((cublas_state *)state)->g, err);
}

static void cublas_report(void *state, mb_report *r)
{
    cublas_state *s = state;
    mb_gemm_report_math(r, &s->g.prob, false);
    mb_report_info(r, "algorithm",
                   s->g.prob.batch > 1
                       ? "cublasGemmStridedBatchedEx, CUBLAS_GEMM_DEFAULT (cuBLAS heuristic)"
                       : "cublasGemmEx, CUBLAS_GEMM_DEFAULT (cuBLAS heuristic)");
    int version = 0;
    if (cublasGetVersion(s->handle, &version) == CUBLAS_STATUS_SUCCESS) {
        char text[32];
        snprintf(text, sizeof text, "%d", version);
        mb_report_info(r, "cublas_version", text);
    }
    mb_gemm_bench_report(&s->g, r);
}

const mb_backend_code mb_gemm_cublas = {
    .component = "gemm",
    .backend = "cublas",
    .probe = cublas_probe,
    .setup = cublas_setup,
    .run = cublas_run,
    .work_per_iter = cublas_work,
    .verify = cublas_verify,
    .report = cublas_report,
    .teardown = cublas_teardown,
};

#else /* !MB_HAVE_CUDA */
MB_NOT_BUILT_IN(mb_gemm_cublas, "gemm", "cublas", "CUDA toolkit (cuBLAS) not found at build time");
#endif
