/* conv_cudnn.c: the convolution ceiling through cuDNN 9's legacy convolution
 * API (cudnn_cnn.h: cudnnConvolutionForward / BackwardData / BackwardFilter,
 * still shipped in cuDNN 9 though marked deprecated in favour of the graph
 * API; it is what PyTorch's cudnn.benchmark path calls).
 *
 * Setup runs cudnnFind*AlgorithmEx on the real buffers with a workspace of
 * at most `workspace` bytes: cuDNN times every algorithm itself and returns
 * them fastest first. The fastest usable one is benchmarked; every one tried
 * is reported with cuDNN's time. The timed region is `inner` convolutions
 * back to back on one stream between two CUDA events.
 *
 * Buffer rotation, as the GEMM backends (gemm_device.c): x, w and y exist in
 * `rotate` sets, each tensor's sets contiguous in one allocation, and each
 * call uses the next set, so a layer whose tensors fit in L2 is not timed
 * reading its inputs from L2. rotate = 0 picks mb_gemm_auto_rotate()'s count
 * (one pass moves at least 3x L2), halved until it fits in device memory.
 * Every set holds the same inputs (set 0 is filled, then copied on the
 * device): the CPU reference is a function of (seed, tensor, index), and the
 * caches see different addresses either way.
 *
 * Math modes (set on the convolution descriptor):
 *   fp32  CUDNN_FMA_MATH: FMA kernels only, no TF32 tensor cores (strict fp32).
 *         CUDNN_DEFAULT_MATH would allow TF32 on Ampere and newer.
 *   tf32  fp32 data, CUDNN_DEFAULT_MATH: TF32 tensor cores allowed
 *         (NVIDIA_TF32_OVERRIDE=0 would forbid them; a note says so).
 *   fp16, bf16  CUDNN_TENSOR_OP_MATH, fp32 compute (PSEUDO_HALF/BFLOAT16
 *         configurations: fp32 accumulate), as PyTorch sets them.
 * After Find, the descriptor takes the math type cuDNN reports for the chosen
 * algorithm (PyTorch does the same), except for strict fp32, which keeps
 * CUDNN_FMA_MATH and refuses any algorithm reported as tensor-op math.
 * (PyTorch's Conv_v7.cpp asserts the same of Find's results: with
 * allow_tf32 off, fp32 data must come back with CUDNN_FMA_MATH.)
 *
 * Verification: the CPU reference (double) on sampled outputs, all of them
 * for small outputs; for larger ones also the second-fastest algorithm, run
 * once in verify on the same set's inputs, must agree with the benchmarked one
 * over the whole output. Both read the output set the last timed call wrote;
 * all output sets are poisoned after setup, so a set no timed call wrote
 * cannot pass.
 */
#include "component.h"

#ifdef MB_HAVE_CUDNN
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_ref.h"
#include "gemm_common.h"
#include "gpu_util.h"

#define CONV_MAX_ALGOS 16

/* One Find result, whatever the direction. */
typedef struct conv_perf {
    int algo;
    cudnnStatus_t status;
    float ms;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
} conv_perf;

typedef struct conv_state {
    mb_conv_problem prob;
    char device[256];
    int major, minor, sms;
    double clock_hz;
    size_t l2_bytes;
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudaStream_t stream;
    mb_cuda_timer timer;
    bool timer_ready;
    /* Device tensors, `sets` of each, `stride_*` bytes apart; the
     * direction's output is one of them. */
    void *x, *w, *y;
    size_t stride_x, stride_w, stride_y;
    int sets;
    bool sets_given, sets_reduced;
    int next; /* set the next call uses */
    int last; /* set the last call wrote; -1 before any */
    void *workspace;
    size_t workspace_bytes;
    conv_perf perf[CONV_MAX_ALGOS];
    int n_perf;
    int chosen;     /* index into perf */
    int inner;
    bool inner_given;
    int samples;
    long long calls; /* timed calls since the outputs were poisoned */
    /* Timed iterations so far: host seconds spent inside the cuDNN calls
     * (enqueueing, extrapolated from the first calls of each iteration) and
     * device seconds between the events. Enqueue time close to the device
     * time means the GPU waited for the host. */
    double host_s, device_s;
    char cross_check[256];
} conv_state;

static int cudnn_err(cudnnStatus_t st, mb_err *err, const char *what)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return MB_OK;
    int code = MB_EFAIL;
    if ((st >= 3000 && st < 4000) || st == CUDNN_STATUS_NOT_INITIALIZED ||
        st == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
        st == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        code = MB_ESKIP; /* not supported here, no device, library missing, no memory */
    char detail[256] = "";
    cudnnGetLastErrorString(detail, sizeof detail);
    return mb_errf(err, code, "%s: %s%s%s", what, cudnnGetErrorString(st), detail[0] ? ": " : "",
                   detail);
}

#define DNN_TRY(call)                                                                              \
    do {                                                                                           \
        rc = cudnn_err((call), err, #call);                                                        \
        if (rc != MB_OK)                                                                           \
            return rc;                                                                             \
    } while (0)
#define CUDA_TRY(call)                                                                             \
    do {                                                                                           \
        rc = mb_cuda_err((call), err, #call);                                                      \
        if (rc != MB_OK)                                                                           \
            return rc;                                                                             \
    } while (0)

static const char *algo_name(mb_conv_dir dir, int algo)
{
    static const char *const fwd[] = { "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                       "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED" };
    static const char *const bwd_data[] = { "ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                            "WINOGRAD_NONFUSED" };
    static const char *const bwd_filter[] = { "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                              "WINOGRAD_NONFUSED", "FFT_TILING" };
    if (dir == MB_CONV_FWD && algo >= 0 && algo < 8)
        return fwd[algo];
    if (dir == MB_CONV_BWD_DATA && algo >= 0 && algo < 6)
        return bwd_data[algo];
    if (dir == MB_CONV_BWD_FILTER && algo >= 0 && algo < 7)
        return bwd_filter[algo];
    return "?";
}

static const char *math_name(cudnnMathType_t m)
{
    switch (m) {
    case CUDNN_DEFAULT_MATH:
        return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH:
        return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
        return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
        return "FMA_MATH";
    }
    return "?";
}

/* ---- set-up --------------------------------------------------------------------------- */

static int read_params(conv_state *s, const mb_params *params, mb_err *err)
{
    mb_conv_dir dir;
    mb_conv_layout layout;
    mb_conv_dtype dtype;
    int rc = mb_conv_parse(mb_param_str(params, "direction"), mb_param_str(params, "layout"),
                           mb_param_str(params, "dtype"), &dir, &layout, &dtype, err);
    if (rc != MB_OK)
        return rc;
#define P(name) ((int)mb_param_int(params, name))
    rc = mb_conv_problem_init(&s->prob, P("n"), P("c"), P("h"), P("w"), P("k"), P("r"), P("s"),
                              P("pad_h"), P("pad_w"), P("stride_h"), P("stride_w"), P("dilation"),
                              dir, layout, dtype, (uint64_t)mb_param_int(params, "seed"), err);
#undef P
    s->workspace_bytes = (size_t)mb_param_int(params, "workspace");
    s->inner = (int)mb_param_int(params, "inner");
    s->inner_given = s->inner > 0;
    s->samples = (int)mb_param_int(params, "samples");
    s->sets = (int)mb_param_int(params, "rotate");
    s->sets_given = s->sets > 0;
    if (rc == MB_OK)
        rc = mb_conv_check_limits(&s->prob, err);
    return rc;
}

static int read_device(conv_state *s, mb_err *err)
{
    mb_cuda_device_info dev;
    int rc = mb_cuda_device_info_get(&dev, err);
    if (rc != MB_OK)
        return rc;
    snprintf(s->device, sizeof s->device, "%s", dev.name);
    s->major = dev.major;
    s->minor = dev.minor;
    s->sms = dev.sms;
    s->clock_hz = dev.clock_hz;
    s->l2_bytes = dev.l2_bytes;
    int cc = s->major * 10 + s->minor;
    mb_conv_dtype t = s->prob.dtype;
    if ((t == MB_CONV_TF32 || t == MB_CONV_BF16) && cc < 80)
        return mb_errf(err, MB_ESKIP, "%s convolution needs compute capability 8.0 or newer; "
                                      "this GPU is %d.%d",
                       mb_conv_dtype_name(t), s->major, s->minor);
    if (t == MB_CONV_FP16 && cc < 70)
        return mb_errf(err, MB_ESKIP, "fp16 tensor-core convolution needs compute capability "
                                      "7.0 or newer; this GPU is %d.%d",
                       s->major, s->minor);
    return MB_OK;
}

static int describe(conv_state *s, mb_err *err)
{
    const mb_conv_problem *p = &s->prob;
    int rc;
    cudnnDataType_t dt = p->dtype == MB_CONV_FP16   ? CUDNN_DATA_HALF
                         : p->dtype == MB_CONV_BF16 ? CUDNN_DATA_BFLOAT16
                                                    : CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t fmt = p->layout == MB_CONV_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    cudnnMathType_t math = p->dtype == MB_CONV_FP32   ? CUDNN_FMA_MATH
                           : p->dtype == MB_CONV_TF32 ? CUDNN_DEFAULT_MATH
                                                      : CUDNN_TENSOR_OP_MATH;
    DNN_TRY(cudnnCreateTensorDescriptor(&s->xd));
    DNN_TRY(cudnnCreateTensorDescriptor(&s->yd));
    DNN_TRY(cudnnCreateFilterDescriptor(&s->wd));
    DNN_TRY(cudnnCreateConvolutionDescriptor(&s->cd));
    DNN_TRY(cudnnSetTensor4dDescriptor(s->xd, fmt, dt, p->n, p->c, p->h, p->w));
    DNN_TRY(cudnnSetFilter4dDescriptor(s->wd, dt, fmt, p->k, p->c, p->r, p->s));
    /* Compute type fp32 for every data type: fp32 accumulate. */
    DNN_TRY(cudnnSetConvolution2dDescriptor(s->cd, p->pad_h, p->pad_w, p->stride_h, p->stride_w,
                                            p->dil_h, p->dil_w, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT));
    DNN_TRY(cudnnSetConvolutionMathType(s->cd, math));
    int on, ok, op, oq;
    DNN_TRY(cudnnGetConvolution2dForwardOutputDim(s->cd, s->xd, s->wd, &on, &ok, &op, &oq));
    if (on != p->n || ok != p->k || op != p->p || oq != p->q)
        return mb_errf(err, MB_EFAIL,
                       "cuDNN's output size %dx%dx%dx%d differs from mlbench's %dx%dx%dx%d", on,
                       ok, op, oq, p->n, p->k, p->p, p->q);
    DNN_TRY(cudnnSetTensor4dDescriptor(s->yd, fmt, dt, p->n, p->k, p->p, p->q));
    return MB_OK;
}

/* Tensor 'x', 'w' or 'y' of buffer set `set`. */
static void *tensor_at(const conv_state *s, char t, int set)
{
    char *base = t == 'x' ? s->x : t == 'w' ? s->w : s->y;
    size_t stride = t == 'x' ? s->stride_x : t == 'w' ? s->stride_w : s->stride_y;
    return base + (size_t)set * stride;
}

static size_t tensor_bytes(const conv_state *s, char t)
{
    return mb_conv_elems(&s->prob, t) * mb_elem_size(s->prob.elem);
}

/* Fills set 0 of input `t` through a bounded host buffer, then copies set 0
 * to the other sets on the device. */
static int upload(conv_state *s, char t, mb_err *err)
{
    const mb_conv_problem *p = &s->prob;
    size_t esize = mb_elem_size(p->elem);
    uint64_t total = mb_conv_elems(p, t), chunk = (16u << 20) / esize;
    void *host = NULL;
    int rc = mb_cuda_err(cudaMallocHost(&host, chunk * esize), err, "cudaMallocHost");
    for (uint64_t first = 0; rc == MB_OK && first < total; first += chunk) {
        uint64_t count = total - first < chunk ? total - first : chunk;
        mb_conv_fill(p, t, host, first, count);
        rc = mb_cuda_err(cudaMemcpy((char *)tensor_at(s, t, 0) + first * esize, host,
                                    count * esize, cudaMemcpyHostToDevice),
                         err, "cudaMemcpy(inputs)");
    }
    if (host)
        cudaFreeHost(host);
    for (int set = 1; rc == MB_OK && set < s->sets; set++)
        rc = mb_cuda_err(cudaMemcpy(tensor_at(s, t, set), tensor_at(s, t, 0), tensor_bytes(s, t),
                                    cudaMemcpyDeviceToDevice),
                         err, "cudaMemcpy(rotate sets)");
    return rc;
}

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* One buffer set: x, w and y, each 256-byte aligned (cudaMalloc's alignment). */
static size_t set_bytes(const conv_state *s)
{
    return s->stride_x + s->stride_w + s->stride_y;
}

/* Sets given, or enough to move 3x L2, halved to fit with the workspace. A
 * size that does not fit is skipped here, before any cuDNN work. */
static int choose_sets(conv_state *s, mb_err *err)
{
    s->stride_x = align_up(tensor_bytes(s, 'x'), 256);
    s->stride_w = align_up(tensor_bytes(s, 'w'), 256);
    s->stride_y = align_up(tensor_bytes(s, 'y'), 256);
    return mb_gemm_choose_rotate(set_bytes(s), s->workspace_bytes, s->l2_bytes,
                                 s->sets_given ? s->sets : 0, mb_cuda_fits, &s->sets,
                                 &s->sets_reduced, err);
}

static int allocate(conv_state *s, mb_err *err)
{
    const mb_conv_problem *p = &s->prob;
    size_t n = (size_t)s->sets;
    int rc = MB_OK;
    CUDA_TRY(cudaMalloc(&s->x, s->stride_x * n));
    CUDA_TRY(cudaMalloc(&s->w, s->stride_w * n));
    CUDA_TRY(cudaMalloc(&s->y, s->stride_y * n));
    if (s->workspace_bytes)
        CUDA_TRY(cudaMalloc(&s->workspace, s->workspace_bytes));
    char out = mb_conv_output(p);
    const char tensors[] = { 'x', 'w', 'y' };
    for (int i = 0; i < 3 && rc == MB_OK; i++)
        if (tensors[i] != out)
            rc = upload(s, tensors[i], err);
    /* Legacy-stream copies are not ordered before work on our non-blocking
     * stream: finish them. */
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaDeviceSynchronize(), err, "cudaDeviceSynchronize");
    return rc;
}

/* ---- algorithm search ---------------------------------------------------------------------- */

#define COPY_PERF(dst, src)                                                                        \
    do {                                                                                           \
        (dst).algo = (int)(src).algo;                                                              \
        (dst).status = (src).status;                                                               \
        (dst).ms = (src).time;                                                                     \
        (dst).memory = (src).memory;                                                               \
        (dst).determinism = (src).determinism;                                                     \
        (dst).math = (src).mathType;                                                               \
    } while (0)

static int find_algorithms(conv_state *s, mb_err *err)
{
    int rc, returned = 0;
    switch (s->prob.dir) {
    case MB_CONV_FWD: {
        cudnnConvolutionFwdAlgoPerf_t r[CONV_MAX_ALGOS];
        DNN_TRY(cudnnFindConvolutionForwardAlgorithmEx(s->handle, s->xd, s->x, s->wd, s->w, s->cd,
                                                       s->yd, s->y, CONV_MAX_ALGOS, &returned, r,
                                                       s->workspace, s->workspace_bytes));
        for (int i = 0; i < returned; i++)
            COPY_PERF(s->perf[i], r[i]);
        break;
    }
    case MB_CONV_BWD_DATA: {
        cudnnConvolutionBwdDataAlgoPerf_t r[CONV_MAX_ALGOS];
        DNN_TRY(cudnnFindConvolutionBackwardDataAlgorithmEx(
            s->handle, s->wd, s->w, s->yd, s->y, s->cd, s->xd, s->x, CONV_MAX_ALGOS, &returned, r,
            s->workspace, s->workspace_bytes));
        for (int i = 0; i < returned; i++)
            COPY_PERF(s->perf[i], r[i]);
        break;
    }
    case MB_CONV_BWD_FILTER: {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CONV_MAX_ALGOS];
        DNN_TRY(cudnnFindConvolutionBackwardFilterAlgorithmEx(
            s->handle, s->xd, s->x, s->yd, s->y, s->cd, s->wd, s->w, CONV_MAX_ALGOS, &returned, r,
            s->workspace, s->workspace_bytes));
        for (int i = 0; i < returned; i++)
            COPY_PERF(s->perf[i], r[i]);
        break;
    }
    }
    s->n_perf = returned;
    return MB_OK;
}

/* May this Find result be benchmarked? Strict fp32 refuses tensor-op math. */
static bool usable(const conv_state *s, const conv_perf *pf)
{
    if (pf->status != CUDNN_STATUS_SUCCESS)
        return false;
    /* Find was given this much; a result claiming more could not run. */
    if (pf->memory > s->workspace_bytes)
        return false;
    if (s->prob.dtype == MB_CONV_FP32 &&
        (pf->math == CUDNN_TENSOR_OP_MATH || pf->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
        return false;
    return true;
}

static int use_algorithm(conv_state *s, int i, mb_err *err)
{
    int rc = MB_OK;
    if (s->prob.dtype != MB_CONV_FP32) /* strict fp32 keeps CUDNN_FMA_MATH */
        DNN_TRY(cudnnSetConvolutionMathType(s->cd, s->perf[i].math));
    return rc;
}

static int choose(conv_state *s, mb_err *err)
{
    s->chosen = -1;
    for (int i = 0; i < s->n_perf && s->chosen < 0; i++)
        if (usable(s, &s->perf[i]))
            s->chosen = i;
    if (s->chosen < 0) {
        /* cuDNN's own words for the first refusal, e.g. NOT_SUPPORTED. */
        const char *why = s->n_perf ? "refused for strict fp32 (tensor-op math)" : "none returned";
        for (int i = 0; i < s->n_perf; i++)
            if (s->perf[i].status != CUDNN_STATUS_SUCCESS) {
                why = cudnnGetErrorString(s->perf[i].status);
                break;
            }
        return mb_errf(err, MB_ESKIP,
                       "cuDNN found no usable %s algorithm for this shape within a %zu byte "
                       "workspace (%d tried; first: %s)",
                       mb_conv_dir_name(s->prob.dir), s->workspace_bytes, s->n_perf, why);
    }
    return use_algorithm(s, s->chosen, err);
}

/* ---- running ----------------------------------------------------------------------------- */

/* One convolution with algorithm perf[i] on the inputs of buffer set `set`,
 * output into `out`. */
static int convolve(conv_state *s, int i, int set, void *out, mb_err *err)
{
    const float alpha = 1.0f, beta = 0.0f; /* float scalars for float, half and bf16 data */
    const void *x = tensor_at(s, 'x', set), *w = tensor_at(s, 'w', set);
    const void *y = tensor_at(s, 'y', set);
    cudnnStatus_t st;
    switch (s->prob.dir) {
    case MB_CONV_FWD:
        st = cudnnConvolutionForward(s->handle, &alpha, s->xd, x, s->wd, w, s->cd,
                                     (cudnnConvolutionFwdAlgo_t)s->perf[i].algo, s->workspace,
                                     s->workspace_bytes, &beta, s->yd, out);
        break;
    case MB_CONV_BWD_DATA:
        st = cudnnConvolutionBackwardData(s->handle, &alpha, s->wd, w, s->yd, y, s->cd,
                                          (cudnnConvolutionBwdDataAlgo_t)s->perf[i].algo,
                                          s->workspace, s->workspace_bytes, &beta, s->xd, out);
        break;
    default:
        st = cudnnConvolutionBackwardFilter(s->handle, &alpha, s->xd, x, s->yd, y, s->cd,
                                            (cudnnConvolutionBwdFilterAlgo_t)s->perf[i].algo,
                                            s->workspace, s->workspace_bytes, &beta, s->wd, out);
        break;
    }
    return cudnn_err(st, err, "cudnnConvolution");
}

/* The direction's output in buffer set `set`. */
static void *output_of(const conv_state *s, int set)
{
    return tensor_at(s, mb_conv_output(&s->prob), set);
}

/* The benchmarked algorithm on the next buffer set, into that set's output. */
static int convolve_next(conv_state *s, mb_err *err)
{
    int set = s->next;
    s->next = (s->next + 1) % s->sets;
    s->last = set;
    return convolve(s, s->chosen, set, output_of(s, set), err);
}

/* Times `reps` convolutions (after one untimed one), seconds per call. */
static int time_calls(conv_state *s, int reps, double *per_call, mb_err *err)
{
    int rc = convolve_next(s, err);
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamSynchronize(s->stream), err, "cudaStreamSynchronize");
    if (rc == MB_OK)
        rc = mb_cuda_timer_start(&s->timer, err);
    for (int i = 0; rc == MB_OK && i < reps; i++)
        rc = convolve_next(s, err);
    double sec = 0;
    if (rc == MB_OK)
        rc = mb_cuda_timer_stop(&s->timer, &sec, err);
    *per_call = rc == MB_OK ? sec / reps : 0;
    return rc;
}

static int finish_setup(conv_state *s, mb_err *err)
{
    double one = 0, unused = 0, per_call = 0;
    int rc = time_calls(s, 1, &one, err);
    if (rc == MB_OK && one > 0) { /* ~50 ms to bring the clocks up */
        double want = ceil(50e-3 / one);
        rc = time_calls(s, want > 1000 ? 1000 : (int)want, &unused, err);
    }
    if (rc == MB_OK)
        rc = time_calls(s, 3, &per_call, err);
    if (rc != MB_OK)
        return rc;
    if (!s->inner_given) {
        double want = per_call > 0 ? ceil(2e-3 / per_call) : 1;
        s->inner = want < 1 ? 1 : want > 10000 ? 10000 : (int)want;
    }
    /* Poison every output set (0x7F bytes: NaN in fp16, huge in fp32 and
     * bf16): verify then sees only what run() wrote. */
    char out = mb_conv_output(&s->prob);
    size_t stride = out == 'x' ? s->stride_x : out == 'w' ? s->stride_w : s->stride_y;
    rc = mb_cuda_err(cudaMemsetAsync(output_of(s, 0), 0x7F, stride * (size_t)s->sets, s->stream),
                     err, "cudaMemsetAsync(poison outputs)");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamSynchronize(s->stream), err, "cudaStreamSynchronize");
    s->calls = 0;
    s->next = 0;
    s->last = -1;
    return rc;
}

static void destroy_descriptors(conv_state *s)
{
    if (s->cd)
        cudnnDestroyConvolutionDescriptor(s->cd);
    if (s->wd)
        cudnnDestroyFilterDescriptor(s->wd);
    if (s->xd)
        cudnnDestroyTensorDescriptor(s->xd);
    if (s->yd)
        cudnnDestroyTensorDescriptor(s->yd);
}

static void conv_teardown(void *state)
{
    conv_state *s = state;
    if (!s)
        return;
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    destroy_descriptors(s);
    if (s->handle)
        cudnnDestroy(s->handle);
    if (s->timer_ready)
        mb_cuda_timer_destroy(&s->timer);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    cudaFree(s->x);
    cudaFree(s->w);
    cudaFree(s->y);
    cudaFree(s->workspace);
    cudaGetLastError();
    free(s);
}

static int conv_setup(const mb_params *params, void **state, mb_err *err)
{
    *state = NULL;
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = read_params(s, params, err);
    if (rc == MB_OK)
        rc = read_device(s, err);
    if (rc == MB_OK)
        rc = choose_sets(s, err);
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), err,
                         "cudaStreamCreateWithFlags");
    if (rc == MB_OK) {
        rc = mb_cuda_timer_init(&s->timer, s->stream, err);
        s->timer_ready = true;
    }
    if (rc == MB_OK)
        rc = cudnn_err(cudnnCreate(&s->handle), err, "cudnnCreate");
    if (rc == MB_OK)
        rc = cudnn_err(cudnnSetStream(s->handle, s->stream), err, "cudnnSetStream");
    if (rc == MB_OK)
        rc = describe(s, err);
    if (rc == MB_OK)
        rc = allocate(s, err);
    if (rc == MB_OK)
        rc = find_algorithms(s, err);
    if (rc == MB_OK)
        rc = choose(s, err);
    if (rc == MB_OK)
        rc = finish_setup(s, err);
    if (rc != MB_OK) {
        conv_teardown(s);
        return rc;
    }
    *state = s;
    return MB_OK;
}

static int conv_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    int rc = mb_cuda_probe(why);
    if (rc != MB_OK)
        return rc;
    if (cudnnGetVersion() / 10000 < 9) /* the library found at run time */
        return mb_errf(why, MB_ESKIP, "cuDNN %zu found, 9 or newer needed", cudnnGetVersion());
    return MB_OK;
}

static int conv_run(void *state, double *seconds, mb_err *err)
{
    conv_state *s = state;
    *seconds = 0;
    int rc = mb_cuda_timer_start(&s->timer, err);
    /* Host cost per call from the first calls only: once the driver's launch
     * queue is full the host waits for the GPU, and the whole loop's host
     * time would equal the device time whoever is the bottleneck. */
    int probe = s->inner < 64 ? s->inner : 64;
    double t0 = mb_now(), enqueue = 0;
    for (int i = 0; rc == MB_OK && i < s->inner; i++) {
        rc = convolve_next(s, err);
        if (rc == MB_OK)
            s->calls++;
        if (i + 1 == probe)
            enqueue = (mb_now() - t0) / probe * s->inner;
    }
    if (rc == MB_OK)
        rc = mb_cuda_timer_stop(&s->timer, seconds, err);
    if (rc == MB_OK) {
        s->host_s += enqueue;
        s->device_s += *seconds;
        return MB_OK;
    }
    cudaStreamSynchronize(s->stream);
    return rc;
}

/* The warm-up's enqueue and device times do not count. */
static void conv_timing_start(void *state)
{
    conv_state *s = state;
    s->host_s = 0;
    s->device_s = 0;
}

static double conv_work(void *state)
{
    conv_state *s = state;
    return mb_conv_problem_flops(&s->prob) * (s->inner > 0 ? s->inner : 1);
}

static int fetch_device(void *ctx, uint64_t idx, double *value, mb_err *err)
{
    conv_state *s = ctx;
    size_t esize = mb_elem_size(s->prob.elem);
    unsigned char buf[8];
    int rc = mb_cuda_err(cudaMemcpy(buf, (const char *)output_of(s, s->last) + idx * esize, esize,
                                    cudaMemcpyDeviceToHost),
                         err, "cudaMemcpy(output sample)");
    if (rc == MB_OK)
        *value = mb_elem_load(s->prob.elem, buf);
    return rc;
}

/* Runs the next usable algorithm once, on the inputs of the set the last
 * timed call used, into a scratch buffer and compares the whole output with
 * that set's. */
static int cross_check(conv_state *s, mb_err *err)
{
    const mb_conv_problem *p = &s->prob;
    int other = -1;
    for (int i = 0; i < s->n_perf && other < 0; i++)
        if (i != s->chosen && usable(s, &s->perf[i]) && s->perf[i].algo != s->perf[s->chosen].algo)
            other = i;
    if (other < 0) {
        snprintf(s->cross_check, sizeof s->cross_check,
                 "no second algorithm to compare with: CPU samples only");
        return MB_OK;
    }
    uint64_t count = mb_conv_elems(p, mb_conv_output(p));
    size_t bytes = count * mb_elem_size(p->elem);
    mb_err tmp = { 0 };
    if (mb_cuda_fits(bytes, &tmp) != MB_OK) {
        snprintf(s->cross_check, sizeof s->cross_check, "no room for a second output: %.200s",
                 tmp.msg);
        return MB_OK;
    }
    void *scratch = NULL;
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    int rc = a && b ? MB_OK : mb_errf(err, MB_ESYS, "out of memory for the cross-check");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaMalloc(&scratch, bytes), err, "cudaMalloc(cross-check)");
    if (rc == MB_OK)
        rc = use_algorithm(s, other, err);
    bool ran = false;
    if (rc == MB_OK) {
        /* cuDNN may refuse at execution what Find accepted (NOT_SUPPORTED):
         * then there is nothing to compare with, which is no verdict on the
         * benchmarked output; any other failure is an error. */
        mb_err other_err = { 0 };
        int orc = convolve(s, other, s->last, scratch, &other_err);
        ran = orc == MB_OK;
        if (orc == MB_ESKIP)
            snprintf(s->cross_check, sizeof s->cross_check, "%s could not run: %.180s: CPU samples only",
                     algo_name(p->dir, s->perf[other].algo), other_err.msg);
        else if (orc != MB_OK)
            rc = mb_errf(err, orc, "%s", other_err.msg);
    }
    int restore = use_algorithm(s, s->chosen, err);
    if (rc == MB_OK)
        rc = restore;
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamSynchronize(s->stream), err, "cudaStreamSynchronize");
    if (!ran)
        goto done;
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaMemcpy(a, output_of(s, s->last), bytes, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(output)");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaMemcpy(b, scratch, bytes, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(cross-check output)");
    if (rc == MB_OK) {
        rc = mb_conv_compare(p, a, b, count, err);
        snprintf(s->cross_check, sizeof s->cross_check, "%s whole output against %s: %s",
                 algo_name(p->dir, s->perf[s->chosen].algo), algo_name(p->dir, s->perf[other].algo),
                 rc == MB_OK ? "agree" : "DISAGREE");
    }
done:
    cudaFree(scratch);
    free(a);
    free(b);
    return rc;
}

static int conv_verify(void *state, mb_err *err)
{
    conv_state *s = state;
    if (s->calls == 0 || s->last < 0)
        return mb_errf(err, MB_ESKIP, "no timed iteration ran: nothing to verify");
    int rc = mb_cuda_err(cudaStreamSynchronize(s->stream), err, "cudaStreamSynchronize");
    int checked = 0;
    if (rc == MB_OK)
        rc = mb_conv_check(&s->prob, s->samples, fetch_device, s, &checked, err);
    uint64_t total = mb_conv_elems(&s->prob, mb_conv_output(&s->prob));
    if (rc == MB_OK && (uint64_t)checked < total)
        rc = cross_check(s, err);
    return rc;
}

/* As mb_gemm_bench_report's notes, so GEMM and conv rows read alike. */
static void report_rotation(const conv_state *s, mb_report *r)
{
    mb_gemm_report_rotation(r, "of x, w and y", s->sets, set_bytes(s), s->l2_bytes, s->sets_given,
                            s->sets_reduced);
    if (s->sets > 1)
        mb_report_note(r, "every buffer set holds the same random inputs; verification checks "
                          "the output set the last timed call wrote");
}

static void conv_report(void *state, mb_report *r)
{
    conv_state *s = state;
    const mb_conv_problem *p = &s->prob;
    const conv_perf *c = &s->perf[s->chosen];
    char text[1024];
    snprintf(text, sizeof text,
             "n=%d c=%d h=%d w=%d k=%d r=%d s=%d pad=%d,%d stride=%d,%d dilation=%d -> %dx%d, %s %s",
             p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->pad_h, p->pad_w, p->stride_h, p->stride_w,
             p->dil_h, p->p, p->q, mb_conv_layout_name(p->layout), mb_conv_dir_name(p->dir));
    mb_report_info(r, "shape", text);
    mb_report_info(r, "device", s->device);
    snprintf(text, sizeof text, "%s (cuDNN %s, %s, %zu bytes of workspace)",
             algo_name(p->dir, c->algo), math_name(c->math),
             c->determinism == CUDNN_DETERMINISTIC ? "deterministic" : "non-deterministic",
             c->memory);
    mb_report_info(r, "algorithm", text);
    static const char *const modes[] = {
        [MB_CONV_FP32] = "fp32 data, CUDNN_FMA_MATH: FMA only, no TF32 (strict fp32)",
        [MB_CONV_TF32] = "fp32 data, CUDNN_DEFAULT_MATH: TF32 tensor cores allowed",
        [MB_CONV_FP16] = "fp16 data, fp32 compute, CUDNN_TENSOR_OP_MATH",
        [MB_CONV_BF16] = "bf16 data, fp32 compute, CUDNN_TENSOR_OP_MATH",
    };
    mb_report_info(r, "math_mode", modes[p->dtype]);
    if (p->dtype == MB_CONV_TF32 && c->math == CUDNN_FMA_MATH)
        mb_report_note(r, "the fastest algorithm reports FMA math: TF32 is not in use");
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    if (p->dtype == MB_CONV_TF32 && tf32 && strcmp(tf32, "0") == 0)
        mb_report_note(r, "NVIDIA_TF32_OVERRIDE=0 is set: TF32 is disabled, this tf32 case runs "
                          "strict fp32 math");
    /* Every algorithm Find tried, fastest first, with cuDNN's own timing. */
    size_t used = 0;
    text[0] = 0;
    for (int i = 0; i < s->n_perf && used < sizeof text - 1; i++) {
        const conv_perf *pf = &s->perf[i];
        int n = pf->status == CUDNN_STATUS_SUCCESS
                    ? snprintf(text + used, sizeof text - used, "%s%s %s %.3f ms %zu B%s",
                               i ? "; " : "", algo_name(p->dir, pf->algo), math_name(pf->math),
                               pf->ms, pf->memory, usable(s, pf) ? "" : " (not allowed)")
                    : snprintf(text + used, sizeof text - used, "%s%s: %s", i ? "; " : "",
                               algo_name(p->dir, pf->algo), cudnnGetErrorString(pf->status));
        if (n < 0)
            break;
        used += (size_t)n;
    }
    mb_report_info(r, "algorithms", text);
    mb_report_metric(r, "algorithms_tried", s->n_perf, "");
    mb_report_metric(r, "convolutions_per_iteration", s->inner, "");
    if (s->device_s > 0) {
        /* Host time inside the cuDNN calls per device second: near 1, the
         * GPU waited for the host and the rate is an API-overhead ceiling. */
        double busy = s->host_s / s->device_s;
        mb_report_metric(r, "enqueue_to_device_time", busy, "");
        if (busy > 0.8)
            mb_report_note(r, "enqueueing took %.0f%% of the device time: the GPU may have waited "
                              "for the host (cuDNN call overhead), so this rate can be below the "
                              "GPU's ceiling for the shape",
                           100 * busy);
    }
    report_rotation(s, r);
    if (s->cross_check[0])
        mb_report_info(r, "cross_check", s->cross_check);
    mb_report_note(r, "FLOPs = 2*N*K*C*R*S*P*Q for every direction (one multiply-add per "
                      "(n,k,c,r,s,p,q)); workspace limit %zu bytes",
                   s->workspace_bytes);
    mb_gpu_peak_report(r, s->device, s->major, s->minor, s->sms, s->clock_hz,
                       mb_conv_dtype_name(p->dtype));
}

/* Builds and destroys the descriptors conv_setup would build for problem `p`
 * or, when `params` is given, for that case's parameters: cuDNN
 * creates and checks them on the host, without a device or a handle, so a
 * CPU-only test (tests/test_gpu_contract.c) checks every data type, layout
 * and math type, and that cuDNN's output size is mlbench's, on real shapes. */
int mb_conv_cudnn_describe_only(const mb_conv_problem *p, const mb_params *params, mb_err *err);
int mb_conv_cudnn_describe_only(const mb_conv_problem *p, const mb_params *params, mb_err *err)
{
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = MB_OK;
    if (params) /* a case as a job file gives it: through setup's own parsing */
        rc = read_params(s, params, err);
    else
        s->prob = *p;
    if (rc == MB_OK)
        rc = describe(s, err);
    destroy_descriptors(s);
    free(s);
    return rc;
}

/* For tests/test_conv_gpu.c, which corrupts outputs on purpose: the device
 * output of buffer set `set` (-1: the set the last call wrote, 0 before any
 * call) of a case that is set up, and its size; *sets gets the set count. */
void *mb_conv_cudnn_test_output(void *state, int set, int *sets, size_t *bytes);
void *mb_conv_cudnn_test_output(void *state, int set, int *sets, size_t *bytes)
{
    conv_state *s = state;
    *bytes = tensor_bytes(s, mb_conv_output(&s->prob));
    *sets = s->sets;
    if (set < 0)
        set = s->last < 0 ? 0 : s->last;
    return set < s->sets ? output_of(s, set) : NULL;
}

const mb_backend_code mb_conv_cudnn = {
    .component = "conv",
    .backend = "cudnn",
    .probe = conv_probe,
    .setup = conv_setup,
    .run = conv_run,
    .work_per_iter = conv_work,
    .verify = conv_verify,
    .report = conv_report,
    .timing_start = conv_timing_start,
    .teardown = conv_teardown,
};

#else /* !MB_HAVE_CUDNN */
MB_NOT_BUILT_IN(mb_conv_cudnn, "conv", "cudnn", "cuDNN (cudnn.h, libcudnn) not found at build time");
#endif
