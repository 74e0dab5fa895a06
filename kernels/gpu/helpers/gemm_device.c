/* gemm_device.c: the device side shared by the cuBLASLt and cuBLAS GEMM
 * backends (buffers, rotation, timing, verification plumbing). Part of the
 * CUDA module (libmlbench_cuda.so). */
#include "gemm_common.h"
#include "halfconv.h"
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
    mb_cuda_device_info dev;
    int rc = mb_cuda_device_info_get(&dev, err);
    if (rc != MB_OK)
        return rc;
    snprintf(g->device, sizeof g->device, "%s", dev.name);
    g->major = dev.major;
    g->minor = dev.minor;
    g->cc = dev.major * 10 + dev.minor;
    g->sms = dev.sms;
    g->l2_bytes = dev.l2_bytes;
    g->clock_hz = dev.clock_hz;
    return MB_OK;
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
    return mb_gemm_choose_rotate(set, g->workspace_bytes, g->l2_bytes, (int)given, mb_cuda_fits,
                                 &g->rotate, &g->rotate_reduced, err);
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
        /* One aligned slot per scale (gemm_common.h: MB_GEMM_SCALE_SLOT_BYTES):
         * two floats side by side put B's scale 4 bytes off alignment, and
         * cublasLtMatmul refused every fp8 call on the H100. */
        unsigned char slots[MB_GEMM_NSCALES * MB_GEMM_SCALE_SLOT_BYTES] = { 0 };
        float a_scale = (float)p->a_scale, b_scale = (float)p->b_scale;
        memcpy(slots + MB_GEMM_SCALE_A * MB_GEMM_SCALE_SLOT_BYTES, &a_scale, sizeof a_scale);
        memcpy(slots + MB_GEMM_SCALE_B * MB_GEMM_SCALE_SLOT_BYTES, &b_scale, sizeof b_scale);
        TRY(cudaMalloc(&g->scales, sizeof slots));
        TRY(cudaMemcpy(g->scales, slots, sizeof slots, cudaMemcpyHostToDevice));
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
    mb_gemm_report_rotation(r, "", g->rotate, g->set_stride_a + g->set_stride_b + g->set_stride_c, g->l2_bytes,
                            g->rotate_given, g->rotate_reduced);
    if (!g->inner_given)
        mb_report_note(r, "%d GEMM call(s) per timed iteration (about 2 ms), back to back on one "
                          "stream, no synchronisation between them",
                       g->inner);
    if (p->dtype == MB_GEMM_INT8)
        mb_report_note(r, "int8: the rate counts integer multiply-adds as 2 operations, in "
                          "TOP/s");
    mb_gpu_peak_report(r, g->device, g->major, g->minor, g->sms, g->clock_hz, math_key(p->dtype));
}
#endif /* MB_HAVE_CUDA */
