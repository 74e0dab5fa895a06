/* The GPU libraries' contracts, checked without a GPU: cuBLASLt's
 * descriptor calls run on the host, so every matmul descriptor and matrix
 * layout the cuBLASLt backend builds (each dtype, layout, batch, fp8 option)
 * is built here against the real library, which rejects an attribute of the
 * wrong size (CUBLAS_STATUS_INVALID_VALUE). It checks nothing else on the
 * host (types, leading dimensions and combinations are judged by the
 * heuristic, on a device): that is test_gemm_gpu's, label gpu.
 * cuDNN's tensor, filter and convolution descriptors are host objects too:
 * every data type, layout and direction the cuDNN backend describes is
 * built, and cuDNN's own output size must be mlbench's (conv_ref.c) on
 * ResNet-50, DeepBench and odd shapes. Label: unit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cublasLt.h>

#include "gemm_common.h"
#ifdef MB_HAVE_CUDNN
#include "conv_ref.h"
#include "suite.h"
#endif

/* kernels/gpu/gemm_cublaslt.c */
int mb_gemm_lt_describe_only(const mb_gemm_problem *p, bool fast_accum, size_t workspace, mb_err *err);
int mb_gemm_lt_describe_scales(const mb_gemm_problem *p, bool fast_accum, size_t workspace, const float *a_scale,
                               const float *b_scale, mb_err *err);

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

/* The fp8 layout that failed on the H100 (every call: "cublasLtMatmul: the
 * requested functionality is not supported"): B's scale one float after
 * A's, 4 bytes off cuBLASLt's alignment. The describe step refuses it, naming
 * the pointer; each scale in its own slot, as setup allocates them, passes. */
static void test_fp8_scales_side_by_side_are_refused(void **st)
{
    (void)st;
    static _Alignas(MB_GEMM_SCALE_SLOT_BYTES) float scales[2 * MB_GEMM_SCALE_SLOT_BYTES / sizeof(float)];
    mb_gemm_problem p;
    problem(&p, MB_GEMM_FP8, "tn", 1, MB_ELEM_BF16);
    mb_err err = { 0 };
    assert_int_equal(mb_gemm_lt_describe_scales(&p, false, 32u << 20, scales, scales + 1, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "B scale (CUBLASLT_MATMUL_DESC_B_SCALE_POINTER)"));
    assert_non_null(strstr(err.msg, "not 16-byte aligned"));
    mb_err ok = { 0 };
    assert_int_equal(mb_gemm_lt_describe_scales(&p, false, 32u << 20, mb_gemm_scale_slot(scales, MB_GEMM_SCALE_A),
                                                mb_gemm_scale_slot(scales, MB_GEMM_SCALE_B), &ok),
                     MB_OK);
    /* Non-fp8 problems have no scales to check. */
    problem(&p, MB_GEMM_BF16, "nn", 1, MB_ELEM_BF16);
    assert_int_equal(mb_gemm_lt_describe_scales(&p, false, 32u << 20, NULL, NULL, &ok), MB_OK);
}

#ifdef MB_HAVE_CUDNN
/* kernels/cudnn/conv_cudnn.c */
int mb_conv_cudnn_describe_only(const mb_conv_problem *p, const mb_params *params, mb_err *err);

/* n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dilation */
static const int conv_shapes[][12] = {
    { 32, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1 },      /* ResNet-50 conv1 */
    { 32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1 },       /* res2 3x3 */
    { 32, 256, 56, 56, 512, 1, 1, 0, 0, 2, 2, 1 },     /* res3 downsample, 1x1 stride 2 */
    { 32, 128, 56, 56, 128, 3, 3, 1, 1, 2, 2, 1 },     /* res3 3x3 stride 2 */
    { 32, 2048, 7, 7, 512, 1, 1, 0, 0, 1, 1, 1 },      /* res5 1x1 */
    { 16, 1, 700, 161, 32, 20, 5, 0, 0, 2, 2, 1 },     /* DeepBench speech: tall filter */
    { 8, 64, 54, 54, 64, 3, 3, 1, 1, 1, 1, 1 },        /* DeepBench VGG-like */
    { 4, 32, 33, 17, 48, 5, 3, 2, 1, 3, 2, 1 },        /* odd sizes, unequal pads and strides */
    { 2, 16, 40, 40, 16, 3, 3, 2, 2, 1, 1, 2 },        /* dilation 2 */
    { 1, 8, 9, 9, 8, 9, 9, 0, 0, 1, 1, 1 },            /* filter as large as the input: 1x1 out */
};

static int conv_problem(mb_conv_problem *p, const int *v, mb_conv_dir d, mb_conv_layout l, mb_conv_dtype t)
{
    mb_err err = { 0 };
    return mb_conv_problem_init(p, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], d, l,
                                t, 1, &err);
}

static void test_cudnn_describes_every_case(void **st)
{
    (void)st;
    int built = 0;
    for (size_t i = 0; i < sizeof conv_shapes / sizeof *conv_shapes; i++)
        for (int d = MB_CONV_FWD; d <= MB_CONV_BWD_FILTER; d++)
            for (int l = MB_CONV_NCHW; l <= MB_CONV_NHWC; l++)
                for (int t = MB_CONV_FP32; t <= MB_CONV_BF16; t++) {
                    mb_conv_problem p;
                    assert_int_equal(conv_problem(&p, conv_shapes[i], d, l, t), MB_OK);
                    mb_err err = { 0 };
                    if (mb_conv_cudnn_describe_only(&p, NULL, &err) != MB_OK)
                        fail_msg("shape %zu %s %s %s: %s", i, mb_conv_dir_name(p.dir), mb_conv_layout_name(p.layout),
                                 mb_conv_dtype_name(p.dtype), err.msg);
                    built++;
                }
    assert_int_equal(built, (int)(sizeof conv_shapes / sizeof *conv_shapes) * 3 * 2 * 4);
}

/* The output-size check can fail: a problem whose P is off by one is refused
 * with both sizes in the message. */
static void test_cudnn_output_size_mismatch_is_caught(void **st)
{
    (void)st;
    mb_conv_problem p;
    assert_int_equal(conv_problem(&p, conv_shapes[3], MB_CONV_FWD, MB_CONV_NHWC, MB_CONV_BF16), MB_OK);
    p.p += 1;
    mb_err err = { 0 };
    assert_int_not_equal(mb_conv_cudnn_describe_only(&p, NULL, &err), MB_OK);
    assert_non_null(strstr(err.msg, "differs from mlbench's"));
}

/* Every cuDNN case of the shipped suites, parsed as setup parses it. */
static void test_cudnn_describes_the_shipped_suites(void **st)
{
    (void)st;
    static const char *const suites[] = { "conv-gpu", "conv", "gpu-verify", "all", "quick" };
    int described = 0;
    for (size_t i = 0; i < sizeof suites / sizeof *suites; i++) {
        mb_suite suite = { 0 };
        mb_err err = { 0 };
        if (mb_suite_load(suites[i], &suite, &err) != MB_OK)
            fail_msg("%s", err.msg);
        for (int c = 0; c < suite.n_cases; c++) {
            const mb_case *k = &suite.cases[c];
            if (strcmp(k->ops->backend, "cudnn") != 0)
                continue;
            mb_err cerr = { 0 };
            if (mb_conv_cudnn_describe_only(NULL, k->params, &cerr) != MB_OK)
                fail_msg("%s:%d %s: %s", k->file, k->line, k->id, cerr.msg);
            described++;
        }
        mb_suite_free(&suite);
    }
    assert_true(described >= 100); /* conv-gpu alone has more */
}
#endif

#ifdef MB_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

/* kernels/nccl/coll_nccl.c */
void mb_nccl_version_text(int code, char *buf, size_t len);

/* With a GPU: the communicator the local topology builds (coll_nccl.c,
 * ncclCommInitAll over the visible GPUs), here on GPU 0 alone, is made and
 * reports the rank, size and device asked for. Not run on the CPU-only
 * development machine: unverified until a GPU machine runs it. */
static void expect_nccl_init_on_gpu(int count)
{
    ncclComm_t comm = NULL;
    int dev = 0, n = 0, cu = -1, rank = -1;
    ncclResult_t r = ncclCommInitAll(&comm, 1, &dev);
    if (r != ncclSuccess)
        fail_msg("ncclCommInitAll on GPU 0 (%d visible): %s: %s", count, ncclGetErrorString(r),
                 ncclGetLastError(comm));
    assert_non_null(comm);
    assert_int_equal(ncclCommCount(comm, &n), ncclSuccess);
    assert_int_equal(n, 1);
    assert_int_equal(ncclCommUserRank(comm, &rank), ncclSuccess);
    assert_int_equal(rank, 0);
    assert_int_equal(ncclCommCuDevice(comm, &cu), ncclSuccess);
    assert_int_equal(cu, dev);
    assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Without a GPU: CUDA says why (an error, never "success, 0 devices": the
 * NCCL probe's reason is that error's text), and the same init fails with
 * the error text nccl_err puts in the skip or failure. */
static void expect_nccl_init_fails_without_gpu(cudaError_t count_err)
{
    assert_int_not_equal(count_err, cudaSuccess);
    assert_true(strlen(cudaGetErrorName(count_err)) > 5);
    ncclComm_t comm = NULL;
    int dev = 0;
    ncclResult_t r = ncclCommInitAll(&comm, 1, &dev);
    assert_int_not_equal(r, ncclSuccess);
    assert_true(strlen(ncclGetErrorString(r)) > 5);
    const char *last = ncclGetLastError(NULL);
    assert_non_null(last);
    assert_true(strlen(last) > 5); /* "Cuda failure 'CUDA driver version is insufficient ...'" */
}

/* The NCCL calls the NCCL backend makes that run on the host, checked
 * without a GPU: the run-time version (reported per case; bf16 needs 2.10),
 * the unique id rank 0 broadcasts over MPI (made without a GPU: a bootstrap
 * socket), an empty group; then the communicator's init, which must work
 * on a GPU and fail with a reason without one. */
static void test_nccl_host_calls(void **st)
{
    (void)st;
    char text[32], want[32];
    mb_nccl_version_text(22809, text, sizeof text);
    assert_string_equal(text, "2.28.9");
    mb_nccl_version_text(2804, text, sizeof text); /* the code before 2.9: X*1000+Y*100+Z */
    assert_string_equal(text, "2.8.4");
    mb_nccl_version_text(NCCL_VERSION(2, 10, 3), text, sizeof text);
    assert_string_equal(text, "2.10.3");
    int v = 0;
    assert_int_equal(ncclGetVersion(&v), ncclSuccess);
    assert_true(v >= NCCL_VERSION(2, 10, 0));
    mb_nccl_version_text(v, text, sizeof text);
    snprintf(want, sizeof want, "%d.%d.", NCCL_MAJOR, NCCL_MINOR); /* the library of the headers */
    assert_memory_equal(text, want, strlen(want));

    ncclUniqueId a, b, zero;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&zero, 0, sizeof zero);
    if (ncclGetUniqueId(&a) != ncclSuccess || ncclGetUniqueId(&b) != ncclSuccess)
        fail_msg("ncclGetUniqueId: %s", ncclGetLastError(NULL));
    assert_memory_not_equal(&a, &zero, sizeof a);
    assert_memory_not_equal(&a, &b, sizeof a); /* a fresh id (magic) per call */

    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclGroupEnd(), ncclSuccess);

    int count = 0;
    cudaError_t count_err = cudaGetDeviceCount(&count);
    if (count_err == cudaSuccess && count > 0)
        expect_nccl_init_on_gpu(count);
    else
        expect_nccl_init_fails_without_gpu(count_err);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_descriptor_is_accepted),
        cmocka_unit_test(test_library_checks_on_the_host),
        cmocka_unit_test(test_fp8_scales_side_by_side_are_refused),
#ifdef MB_HAVE_CUDNN
        cmocka_unit_test(test_cudnn_describes_every_case),
        cmocka_unit_test(test_cudnn_output_size_mismatch_is_caught),
        cmocka_unit_test(test_cudnn_describes_the_shipped_suites),
#endif
#ifdef MB_HAVE_NCCL
        cmocka_unit_test(test_nccl_host_calls),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
