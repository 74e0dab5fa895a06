/* gemm_common.h: what the GPU GEMM backends (cuBLASLt, cuBLAS) share.
 *
 * Pure host code (always compiled, unit-tested without a GPU in
 * tests/test_gemm_common.c):
 *   - the problem: shape, column-major layout as cuBLAS sees it, dtype and the
 *     storage types it implies;
 *   - its inputs: element idx of A or B is a pure function of (seed, idx), so
 *     the device buffers are filled in chunks and the CPU reference recomputes
 *     any element without a host copy of the matrices;
 *   - the CPU reference of one output element (in double) and the tolerance it
 *     is checked with, and the sampled check that drives both;
 *   - theoretical peaks: the datasheet figure (harness/platform/hardware.h) and the one
 *     computed from device attributes with the per-architecture table in
 *     configs/gpu-arch.ini (gpu_arch.h; also used by the cuDNN convolution
 *     backend).
 * Device plumbing (MB_HAVE_CUDA): buffers rotated so small problems are not
 * L2-resident, the stream, the event timer, the timed loop and verification.
 */
#ifndef MB_GEMM_COMMON_H
#define MB_GEMM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component.h"
#include "gpu_arch.h"
#include "mb.h"

/* ---- dtypes -------------------------------------------------------------------- */

typedef enum mb_gemm_dtype {
    MB_GEMM_FP64, /* fp64 in and out, fp64 compute (DMMA tensor cores on sm_80/90) */
    MB_GEMM_FP32, /* fp32, CUBLAS_COMPUTE_32F: FMA, no TF32 */
    MB_GEMM_TF32, /* fp32 data, CUBLAS_COMPUTE_32F_FAST_TF32 */
    MB_GEMM_FP16, /* fp16 in and out, fp32 accumulate */
    MB_GEMM_BF16, /* bf16 in and out, fp32 accumulate */
    MB_GEMM_FP8,  /* e4m3 in, bf16 or fp16 out, fp32 accumulate (cuBLASLt only) */
    MB_GEMM_INT8, /* int8 in, int32 out and accumulate */
    MB_GEMM_NDTYPES
} mb_gemm_dtype;

/* Storage types of matrix elements. */
typedef enum mb_elem {
    MB_ELEM_F64,
    MB_ELEM_F32,
    MB_ELEM_F16,
    MB_ELEM_BF16,
    MB_ELEM_E4M3,
    MB_ELEM_I8,
    MB_ELEM_I32,
} mb_elem;

const char *mb_gemm_dtype_name(mb_gemm_dtype d);
/* MB_OK, or MB_EUSAGE for an unknown name. */
int mb_gemm_dtype_parse(const char *name, mb_gemm_dtype *out, mb_err *err);
/* Minimum compute capability (major*10+minor) with tensor/FMA support for d. */
int mb_gemm_dtype_min_cc(mb_gemm_dtype d);

size_t mb_elem_size(mb_elem e);
/* Stores v (already representable, or rounded to nearest) in the storage type. */
void mb_elem_store(mb_elem e, void *dst, double v);
double mb_elem_load(mb_elem e, const void *src);

/* ---- the problem ----------------------------------------------------------------- */

/* C[m x n] = alpha * op(A)[m x k] * op(B)[k x n], `batch` times, column-major
 * as cuBLAS sees it: op(A) = A when !transa (A stored m x k, lda = m) and
 * A^T when transa (A stored k x m, lda = k); likewise B. C is m x n, ldc = m.
 * Batches are `stride_*` elements apart. Leading dimensions are tight. */
typedef struct mb_gemm_problem {
    long long m, n, k, batch;
    bool transa, transb;
    long long lda, ldb, ldc;
    long long stride_a, stride_b, stride_c; /* elements */
    mb_gemm_dtype dtype;
    mb_elem a_type, b_type, c_type;
    double alpha;  /* the scale the reference applies (fp8: a_scale * b_scale) */
    double a_scale, b_scale; /* fp8 per-tensor scales (1 otherwise) */
    uint64_t seed;
} mb_gemm_problem;

/* layout: "auto" (tn for fp8 and int8, which need it; nn otherwise, what
 * torch.matmul issues for row-major tensors), "nn", "nt", "tn" or "tt" (first
 * letter: A, second: B; t = transposed). fp8_out: output type for fp8
 * (MB_ELEM_BF16 or MB_ELEM_F16), ignored otherwise. MB_EUSAGE on nonsense
 * (zero sizes, a bad layout). */
int mb_gemm_problem_init(mb_gemm_problem *p, long long m, long long n, long long k,
                         long long batch, const char *layout, mb_gemm_dtype dtype,
                         mb_elem fp8_out, uint64_t seed, mb_err *err);

/* What the libraries require of the layout and the sizes (fp8: TN unless
 * mb_gemm_fp8_any_layout(cc), m and k (and n when B is transposed) multiples
 * of 16; int8: TN, m and k multiples of 4), and that m, n, k and the leading
 * dimensions fit the 32-bit integers the cuBLAS API takes (batch strides are
 * 64-bit there). MB_ESKIP with the reason. cc = major*10+minor. */
int mb_gemm_problem_check(const mb_gemm_problem *p, int cc, mb_err *err);
/* True where cuBLASLt's fp8 kernels take any layout (data-center Blackwell,
 * cc 10.x/11.x, and 13.x on); Ada, Hopper and Blackwell GeForce (12.x) need TN. */
bool mb_gemm_fp8_any_layout(int cc);

/* cuBLASLt's FP8 contract on pointers (docs: cublasLtMatmul, "To use FP8
 * kernels ... all matrix pointers must be 16-byte aligned"). The per-tensor
 * scales are device pointers too, read by the kernel with vector loads: the
 * H100 run refused every fp8 call (CUBLAS_STATUS_NOT_SUPPORTED at
 * cublasLtMatmul, after the heuristic had accepted the descriptor) when B's
 * scale sat 4 bytes after A's. So each scale gets its own slot of
 * MB_GEMM_SCALE_SLOT_BYTES (cudaMalloc's own alignment, what the heuristic
 * assumes for every buffer by default) and every pointer is checked. */
#define MB_GEMM_FP8_ALIGN 16
#define MB_GEMM_SCALE_SLOT_BYTES 256
enum { MB_GEMM_SCALE_A = 0, MB_GEMM_SCALE_B = 1, MB_GEMM_NSCALES = 2 };

typedef struct mb_gemm_fp8_pointers {
    const void *a, *b, *c; /* C is also D (beta = 0, D overwrites C) */
    const void *a_scale, *b_scale;
} mb_gemm_fp8_pointers;

/* MB_EUSAGE naming the first pointer that is not MB_GEMM_FP8_ALIGN-byte
 * aligned (or is NULL), with its address; host-only, no device needed. */
int mb_gemm_fp8_pointers_check(const mb_gemm_fp8_pointers *ptrs, mb_err *err);
/* Scale `which` (MB_GEMM_SCALE_A/B) in a buffer of MB_GEMM_NSCALES slots. */
const float *mb_gemm_scale_slot(const void *base, int which);

/* Rows, columns and leading dimension of A, B or C ('a', 'b', 'c') as stored
 * (column-major), i.e. what a cuBLASLt matrix layout describes: A is m x k,
 * or k x m when transa; B is k x n, or n x k when transb; C is m x n. */
void mb_gemm_stored_dims(const mb_gemm_problem *p, char which, long long *rows, long long *cols,
                         long long *ld);

/* "nn", "tn", ... */
const char *mb_gemm_layout_name(const mb_gemm_problem *p);

/* Bytes of A, B, C over all batches. */
size_t mb_gemm_bytes(const mb_gemm_problem *p, char which /* 'a' | 'b' | 'c' */);
/* FLOPs of one GEMM call (all batches): mb_gemm_flops(). */
double mb_gemm_problem_flops(const mb_gemm_problem *p);

/* Parses "MxNxK" or "MxNxKxBATCH". MB_EUSAGE naming the parameter. */
int mb_gemm_parse_shape(const char *text, long long *m, long long *n, long long *k,
                        long long *batch, mb_err *err);

/* ---- inputs and the CPU reference -------------------------------------------------- */

/* Element idx (storage order, batches included) of A (which = 'a') or B ('b'):
 * a pure function of (seed, which, idx), exactly representable in the input
 * type. fp32/tf32/fp64: uniform in [-1, 1); fp16/bf16: the same rounded to
 * the type; fp8: integers in [-4, 4] (exact in e4m3); int8: integers in [-8, 8]. */
double mb_gemm_input(const mb_gemm_problem *p, char which, uint64_t idx);
/* Writes elements [first, first+count) of A or B in the storage type. */
void mb_gemm_fill(const mb_gemm_problem *p, char which, void *dst, uint64_t first,
                  uint64_t count);

typedef struct mb_gemm_ref {
    double value;   /* alpha * sum_l opA(i,l) * opB(l,j), in double */
    double sum_abs; /* alpha * sum_l |opA(i,l) * opB(l,j)| */
    double norm2;   /* alpha * sqrt(sum_l (opA(i,l) * opB(l,j))^2) */
} mb_gemm_ref;

mb_gemm_ref mb_gemm_reference(const mb_gemm_problem *p, long long i, long long j, long long b);
/* Index of C(i, j) of batch b in storage order. */
uint64_t mb_gemm_c_index(const mb_gemm_problem *p, long long i, long long j, long long b);

/* Largest |device - reference| accepted for one element:
 *   rel_sum * sum_abs + rel_norm * (norm2 + |value|)
 * rel_sum bounds accumulation error in the worst case (all products of one
 * sign); rel_norm covers the rounding of inputs (tf32), of partial sums
 * reduced in reduced precision, and of the output (fp16, bf16), whose size
 * follows the magnitude of the result and of the partial sums (norm2). int8 is
 * exact (0). See docs/gpu-gemm-conv.md for the numbers. */
/* Positions of C to check on a CPU GEMM: the corners (indexing mistakes
 * show there first), then random ones (a fixed seed); every element when C
 * has no more than `max`. Fills si/sj (room for max), returns the count. */
int mb_gemm_sample_positions(int m, int n, int *si, int *sj, int max);

double mb_gemm_tolerance(const mb_gemm_problem *p, const mb_gemm_ref *r);

/* Reads output element `c_index` of the device result into *value (decoded
 * to double). `sample` is the sample's ordinal (the GPU side uses it to pick
 * the rotated buffer set). */
typedef int (*mb_gemm_fetch_fn)(void *ctx, int sample, uint64_t c_index, double *value,
                                mb_err *err);

typedef struct mb_gemm_check_result {
    int checked, mismatches;
    double worst_ratio; /* max |err| / tolerance over the samples */
} mb_gemm_check_result;

/* Checks `samples` output elements (all of them when the output is no larger)
 * against the CPU reference: the two corners, then positions drawn from the
 * problem's seed. MB_OK, or MB_EVERIFY naming the first bad element with the
 * value, the expected value and the tolerance. NaN always fails. */
int mb_gemm_check(const mb_gemm_problem *p, int samples, mb_gemm_fetch_fn fetch, void *ctx,
                  mb_gemm_check_result *res, mb_err *err);

/* ---- buffer rotation ---------------------------------------------------------------- */

/* Buffer sets needed so that one pass over them moves at least 3x the L2
 * cache: ceil(3 * l2 / set_bytes), at least 1, at most MB_GEMM_MAX_ROTATE. */
#define MB_GEMM_MAX_ROTATE 4096
/* Most cuBLASLt heuristic candidates gemm/cublaslt times (its `algos`
 * parameter's bound, kept here so the description in the core and the code
 * in the CUDA module agree). */
#define MB_GEMM_LT_MAX_ALGOS 64
int mb_gemm_auto_rotate(size_t set_bytes, size_t l2_bytes);

/* Does `bytes` of device memory fit? MB_OK, MB_ESKIP with the figures, or
 * another code (mb_cuda_fits in gpu_util.h has this shape). */
typedef int (*mb_fits_fn)(size_t bytes, mb_err *err);

/* The buffer-set count of a rotating GPU benchmark (GEMM and conv): `given`
 * (> 0) as is, else mb_gemm_auto_rotate(set_bytes, l2_bytes); while
 * set_bytes * sets + fixed_bytes does not fit, an automatic count is halved
 * (down to 1) and *reduced set. A given count, or a single set, that does not
 * fit returns fits()'s code and message, as does any code but MB_ESKIP. */
int mb_gemm_choose_rotate(size_t set_bytes, size_t fixed_bytes, size_t l2_bytes, int given,
                          mb_fits_fn fits, int *sets, bool *reduced, mb_err *err);
/* The buffer_sets metric and the notes on it (GEMM and conv rows read
 * alike): `what` names a set's contents ("" for a GEMM's A, B and C). */
void mb_gemm_report_rotation(mb_report *r, const char *what, int sets, size_t set_bytes, size_t l2_bytes,
                             bool given, bool reduced);

/* ---- theoretical peaks ---------------------------------------------------------------- */

/* Reports the peak of `key` math for a device (key as mb_gpu_arch_rate() in
 * gpu_arch.h: "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"), in
 * TFLOP/s (TOPS for int8):
 *   - the datasheet's dense figure (fp64: fp64_tensor when listed) as the
 *     peak, with its source;
 *   - SMs x clock x FLOP/clk/SM as the metric "peak_from_attributes";
 *   - without a datasheet entry, the computed figure as the peak, and a note.
 * No CUDA calls: the GPU side passes the attributes in. */
void mb_gpu_peak_report(mb_report *r, const char *device_name, int major, int minor, int sms,
                        double clock_hz, const char *key);

/* The parameters every GPU GEMM backend takes (cuBLASLt adds its own): plain
 * data, described in the core (kernels/shared/gpu_descriptions.c). */
#define MB_GEMM_COMMON_PARAMS                                                                  \
    { "shape", MB_P_STRING, "", NULL, 0, 0,                                                    \
      "MxNxK or MxNxKxBATCH, column-major as cuBLAS (or give m, n, k, batch)" },               \
        { "m", MB_P_INT, "0", NULL, 0, 2147483647, "rows of op(A) and of C (0: from shape)" }, \
        { "n", MB_P_INT, "0", NULL, 0, 2147483647,                                             \
          "columns of op(B) and of C (0: from shape)" },                                       \
        { "k", MB_P_INT, "0", NULL, 0, 2147483647, "inner dimension (0: from shape)" },        \
        { "batch", MB_P_INT, "0", NULL, 0, 1048576,                                            \
          "GEMMs per call, strided-batched when > 1 (0: from shape, else 1)" },                \
        { "dtype", MB_P_ENUM, "bf16", "fp64|fp32|tf32|fp16|bf16|fp8|int8", 0, 0,               \
          "data type and math mode (fp32: no TF32; fp16/bf16/fp8: fp32 accumulate)" },         \
        { "layout", MB_P_ENUM, "auto", "auto|nn|nt|tn|tt", 0, 0,                               \
          "op(A) op(B), t = transposed (auto: tn for fp8/int8, else nn like torch.matmul)" },  \
        { "rotate", MB_P_INT, "0", NULL, 0, MB_GEMM_MAX_ROTATE,                                \
          "buffer sets cycled through (0: enough to move 3x the L2 cache)" },                  \
        { "inner", MB_P_INT, "0", NULL, 0, 100000,                                             \
          "GEMM calls per timed iteration (0: enough for about 2 ms)" },                       \
        { "workspace", MB_P_SIZE, "32m", NULL, 0, 4294967296.0,                                \
          "library workspace, allocated once in setup" },                                      \
        { "seed", MB_P_INT, "1", NULL, 0, 9007199254740992.0, "seed of the random inputs" },   \
        { "samples", MB_P_INT, "256", NULL, 1, 1000000,                                        \
          "output elements checked against the CPU reference" }

/* ---- device side ------------------------------------------------------------------------ */

#ifdef MB_HAVE_CUDA
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "gpu_util.h"

/* One GEMM call on operands (a, b, c) on the bench's stream. */
typedef int (*mb_gemm_call_fn)(void *backend, const void *a, const void *b, void *c,
                               mb_err *err);

typedef struct mb_gemm_bench {
    mb_gemm_problem prob;
    int cc; /* major*10+minor */
    int major, minor, sms;
    double clock_hz;
    char device[256];
    size_t l2_bytes;

    cudaStream_t stream;
    mb_cuda_timer timer;
    bool timer_ready;

    int rotate;
    bool rotate_given, rotate_reduced;
    size_t set_stride_a, set_stride_b, set_stride_c; /* bytes between sets */
    void *base_a, *base_b, *base_c;
    void *scales; /* fp8: device a_scale, b_scale, one MB_GEMM_SCALE_SLOT_BYTES slot each */
    void *workspace;
    size_t workspace_bytes;

    int inner;
    bool inner_given;
    int next;            /* next buffer set */
    long long calls;     /* GEMM calls since the outputs were poisoned */
    int samples;
} mb_gemm_bench;

/* Reads the common parameters, checks the device can do the dtype, allocates
 * and fills the buffers (rotate sets), the stream, the timer and the
 * workspace. fp8_out is the fp8 output type (cuBLASLt's `out` parameter).
 * MB_ESKIP: no device, dtype missing, does not fit. */
int mb_gemm_bench_setup(mb_gemm_bench *g, const mb_params *params, mb_elem fp8_out,
                        mb_err *err);
void mb_gemm_bench_teardown(mb_gemm_bench *g);

/* Operands of the next buffer set (cycling). */
void mb_gemm_bench_operands(mb_gemm_bench *g, const void **a, const void **b, void **c);

/* Times `reps` calls back to back between two events (after one untimed
 * call); seconds per call. Used in setup, outside any timed region. */
int mb_gemm_bench_time(mb_gemm_bench *g, mb_gemm_call_fn call, void *backend, int reps,
                       double *seconds_per_call, mb_err *err);
/* Chooses `inner` from the time of one call unless given, fills every
 * output with a poison pattern (so verify sees only what run() wrote) and
 * restarts the rotation. Call at the end of setup. */
int mb_gemm_bench_finish_setup(mb_gemm_bench *g, double seconds_per_call, mb_err *err);
/* One timed iteration: `inner` calls between two events on the stream. */
int mb_gemm_bench_run(mb_gemm_bench *g, mb_gemm_call_fn call, void *backend, double *seconds,
                      mb_err *err);
/* FLOPs per run() call. */
double mb_gemm_bench_work(const mb_gemm_bench *g);
int mb_gemm_bench_verify(mb_gemm_bench *g, mb_err *err);
/* Shape, layout, rotation, inner count and the peaks. */
void mb_gemm_bench_report(mb_gemm_bench *g, mb_report *r);

/* The library's names for the problem's types: storage types of A, B, C,
 * the compute type (the math mode) and the type of alpha and beta. */
typedef struct mb_gemm_cuda_types {
    cudaDataType_t a, b, c, scale;
    cublasComputeType_t compute;
} mb_gemm_cuda_types;
mb_gemm_cuda_types mb_gemm_cuda_types_of(const mb_gemm_problem *p);

/* alpha = 1, beta = 0 in the scale type (the reference's alpha is in the
 * fp8 scale pointers, not here). Do not move the struct after init: alpha
 * and beta point into it. */
typedef struct mb_gemm_scalars {
    double d[2];
    float f[2];
    int32_t i[2];
    const void *alpha, *beta;
} mb_gemm_scalars;
void mb_gemm_scalars_init(mb_gemm_scalars *s, const mb_gemm_problem *p);

/* What "math_mode" says for the problem, and notes on environment variables
 * that change cuBLAS's math behind the program's back. */
void mb_gemm_report_math(mb_report *r, const mb_gemm_problem *p, bool fast_accum);

/* cuBLAS status -> error (NOT_SUPPORTED, ARCH_MISMATCH, NOT_INITIALIZED,
 * ALLOC_FAILED -> MB_ESKIP; others MB_EFAIL). s is a cublasStatus_t. */
int mb_cublas_err(int s, mb_err *err, const char *what);

#endif /* MB_HAVE_CUDA */

#endif
