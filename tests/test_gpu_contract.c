/* The GPU libraries' contracts, checked without a GPU: cuBLASLt's
 * descriptor calls run on the host, so every matmul descriptor and matrix
 * layout the cuBLASLt backend builds (each dtype, layout, batch, fp8 option)
 * is built here against the real library, which rejects an attribute of the
 * wrong size (CUBLAS_STATUS_INVALID_VALUE). It checks nothing else on the
 * host (types, leading dimensions and combinations are judged by the
 * heuristic, on a device): that is test_gemm_gpu's, label gpu. Label: unit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cublasLt.h>

#include "gemm_common.h"

/* kernels/gemm_cublaslt.c */
int mb_gemm_lt_describe_only(const mb_gemm_problem *p, bool fast_accum, size_t workspace, mb_err *err);

static const char *const layouts[] = { "nn", "nt", "tn", "tt" };

static void problem(mb_gemm_problem *p, mb_gemm_dtype d, const char *layout, long long batch, mb_elem out)
{
    mb_err err = { 0 };
    assert_int_equal(mb_gemm_problem_init(p, 256, 128, 64, batch, layout, d, out, 1, &err), MB_OK);
}

/* Every descriptor the backend builds is accepted by cuBLASLt. */
static void test_every_descriptor_is_accepted(void **st)
{
    (void)st;
    int built = 0;
    for (int d = 0; d < MB_GEMM_NDTYPES; d++)
        for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
            for (long long batch = 1; batch <= 64; batch *= 64)
                for (int fast = 0; fast <= (d == MB_GEMM_FP8); fast++)
                    for (int out = 0; out <= (d == MB_GEMM_FP8); out++) {
                        mb_gemm_problem p;
                        problem(&p, (mb_gemm_dtype)d, layouts[l], batch, out ? MB_ELEM_F16 : MB_ELEM_BF16);
                        mb_err err = { 0 };
                        int rc = mb_gemm_lt_describe_only(&p, fast, 32u << 20, &err);
                        if (rc != MB_OK)
                            fail_msg("%s %s batch %lld fast_accum %d: %s", mb_gemm_dtype_name(p.dtype),
                                     layouts[l], batch, fast, err.msg);
                        built++;
                    }
    assert_int_equal(built, (MB_GEMM_NDTYPES + 3) * 4 * 2); /* fp8: 4 option pairs */
}

/* The check above can fail: the library validates attribute sizes on the
 * host (an int32 where it wants an int8 is refused), so an accepted
 * descriptor says something. */
static void test_library_checks_on_the_host(void **st)
{
    (void)st;
    cublasLtMatmulDesc_t op;
    assert_int_equal(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    int8_t fast = 1;
    int32_t wide = 1;
    assert_int_equal(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
                     CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &wide, sizeof wide),
                     CUBLAS_STATUS_INVALID_VALUE);
    int64_t big = 1;
    assert_int_equal(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &big, sizeof big),
                     CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatmulDescDestroy(op);
    cublasLtMatrixLayout_t l;
    assert_int_equal(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, 256, 64, 256), CUBLAS_STATUS_SUCCESS);
    int64_t count = 2;
    int32_t offset = 256 * 64;
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
                     CUBLAS_STATUS_INVALID_VALUE);
    assert_int_equal(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset),
        CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatrixLayoutDestroy(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_descriptor_is_accepted),
        cmocka_unit_test(test_library_checks_on_the_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
