/* membw_cuda.c: device memory bandwidth, BabelStream's kernels (component
 * `membw`, backend `cuda`).
 *
 * read (a reduction whose sum is checked), write, copy and triad over arrays
 * of at least 4x the L2 cache, with 16-byte vector accesses (float4 /
 * double2) and a grid of `waves` full waves (default one: SMs x resident
 * blocks per SM from the occupancy API, grid-stride loops unrolled 4 deep:
 * gpu_kernels.cu), or with waves = 0 one unrolled step per thread.
 * One run() = one kernel between two CUDA events, enqueued behind a spin
 * kernel (gpu_gate.h) so the launch latency of an idle GPU is not timed.
 *
 * Bytes are counted as BabelStream counts them (gpu_check.h): each array
 * read or written once, no read-for-ownership on writes. The theoretical rate
 * is memory clock x bus width x 2 from the device attributes (or the
 * datasheet). */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_gate.h"
#include "gpu_kernels.h"
#include "gpu_util.h"

#define MEMBW_SEED 0x6d6c62656d627701ull

typedef struct membw_state {
    mb_membw_op op;
    int fp64;
    size_t elem, n;       /* element size and count per array */
    void *a, *b, *c;
    double *partials;     /* READ: one sum per block */
    int blocks, threads, blocks_per_sm, sms;
    int waves;            /* full waves of blocks; 0 = one unrolled step per thread */
    long long l2;
    bool auto_size, small_for_l2;
    cudaStream_t stream;
    mb_cuda_timer timer;
    mb_cuda_gate gate;
    uint64_t calls;       /* kernel calls so far (the write value depends on it) */
} membw_state;

static int membw_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static const char *op_name(mb_membw_op op)
{
    static const char *names[] = { "read", "write", "copy", "triad" };
    return names[op];
}

static void membw_teardown(void *state)
{
    membw_state *s = state;
    if (s == NULL)
        return;
    mb_cuda_gate_destroy(&s->gate);
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->c);
    cudaFree(s->partials);
    mb_cuda_timer_destroy(&s->timer);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    cudaGetLastError();
    free(s);
}

/* Bytes per array: the job's, or 4 x L2 (at least 256 MiB, BabelStream's
 * default order of size) kept within a quarter of free memory. */
static size_t array_bytes(membw_state *s, long long want, size_t free_b)
{
    if (want > 0)
        return (size_t)want;
    s->auto_size = true;
    size_t bytes = (size_t)(4 * s->l2);
    if (bytes < (256u << 20))
        bytes = 256u << 20;
    size_t cap = free_b / 4 / (size_t)mb_membw_arrays(s->op);
    if (bytes > cap)
        bytes = cap;
    return bytes;
}

/* The grid (mb_membw_grid_blocks): `waves` full waves, or with waves = 0
 * one unrolled step per thread. Neither is the faster on every GPU; the
 * suites run both and the ceiling is the faster. */
static int membw_grid(membw_state *s, size_t vec, int waves, mb_err *err)
{
    size_t blocks = mb_membw_grid_blocks(s->n / vec, s->threads, s->sms, s->blocks_per_sm, waves);
    if (blocks > INT_MAX)
        return mb_errf(err, MB_EUSAGE, "%zu blocks of %d threads: more than a grid holds (raise threads)", blocks,
                       s->threads);
    s->blocks = (int)blocks;
    s->waves = waves;
    return MB_OK;
}

static int membw_setup(const mb_params *p, void **state, mb_err *err)
{
    membw_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = s;
    const char *op = mb_param_str(p, "op");
    s->op = strcmp(op, "read") == 0 ? MB_MEMBW_READ : strcmp(op, "write") == 0 ? MB_MEMBW_WRITE
            : strcmp(op, "copy") == 0 ? MB_MEMBW_COPY : MB_MEMBW_TRIAD;
    s->fp64 = strcmp(mb_param_str(p, "dtype"), "fp64") == 0;
    s->elem = s->fp64 ? 8 : 4;
    s->threads = (int)mb_param_int(p, "threads");
    if (s->threads % 32)
        return mb_errf(err, MB_EUSAGE, "parameter threads: %d is not a multiple of 32", s->threads);
    s->sms = mb_cuda_attr(cudaDevAttrMultiProcessorCount);
    s->l2 = mb_cuda_attr(cudaDevAttrL2CacheSize);
    if (s->sms <= 0)
        return mb_errf(err, MB_ESKIP, "cannot read the SM count of CUDA device %d", mb_cuda_device());

    size_t free_b = 0, total_b = 0;
    int rc = mb_cuda_err(cudaMemGetInfo(&free_b, &total_b), err, "cudaMemGetInfo");
    if (rc != MB_OK)
        return rc;
    size_t bytes = array_bytes(s, mb_param_int(p, "size"), free_b);
    size_t vec = 16 / s->elem; /* elements per 16-byte access */
    s->n = bytes / s->elem / vec * vec;
    if (s->n == 0)
        return mb_errf(err, MB_EUSAGE, "parameter size: %zu bytes is less than one 16-byte vector", bytes);
    s->small_for_l2 = s->l2 > 0 && (long long)(s->n * s->elem) < 4 * s->l2;

    int bps = (int)mb_param_int(p, "blocks_per_sm");
    MB_CUDA_TRY(mb_gpu_membw_occupancy(s->op, s->fp64, s->threads, &s->blocks_per_sm), err, fail);
    if (s->blocks_per_sm <= 0)
        return mb_errf(err, MB_ESKIP, "the %s kernel cannot run with %d threads per block", op_name(s->op),
                       s->threads);
    if (bps > 0 && bps < s->blocks_per_sm)
        s->blocks_per_sm = bps;
    if ((rc = membw_grid(s, vec, (int)mb_param_int(p, "waves"), err)) != MB_OK)
        return rc;

    size_t arr = s->n * s->elem;
    if ((rc = mb_cuda_fits(arr * (size_t)mb_membw_arrays(s->op) + (size_t)s->blocks * 8, err)) != MB_OK)
        return rc;
    MB_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), err, fail);
    MB_CUDA_TRY(cudaMalloc(&s->a, arr), err, fail);
    MB_CUDA_TRY(mb_gpu_membw_init(s->a, s->n, s->fp64, MEMBW_SEED, 0, s->blocks, s->threads, s->stream), err, fail);
    if (s->op == MB_MEMBW_TRIAD) {
        MB_CUDA_TRY(cudaMalloc(&s->b, arr), err, fail);
        MB_CUDA_TRY(mb_gpu_membw_init(s->b, s->n, s->fp64, MEMBW_SEED, 1, s->blocks, s->threads, s->stream), err,
                    fail);
    }
    if (s->op == MB_MEMBW_COPY || s->op == MB_MEMBW_TRIAD) {
        MB_CUDA_TRY(cudaMalloc(&s->c, arr), err, fail);
        MB_CUDA_TRY(mb_gpu_membw_init(s->c, s->n, s->fp64, MEMBW_SEED, 2, s->blocks, s->threads, s->stream), err,
                    fail);
    }
    if (s->op == MB_MEMBW_READ) {
        MB_CUDA_TRY(cudaMalloc((void **)&s->partials, (size_t)s->blocks * sizeof(double)), err, fail);
        MB_CUDA_TRY(cudaMemsetAsync(s->partials, 0xFF, (size_t)s->blocks * sizeof(double), s->stream), err,
                    fail); /* NaN until a read kernel wrote them */
    }
    MB_CUDA_TRY(cudaStreamSynchronize(s->stream), err, fail);
    if ((rc = mb_cuda_timer_init(&s->timer, s->stream, err)) != MB_OK)
        return rc;
    return mb_cuda_gate_init(&s->gate, err);
fail:
    return err->code; /* the harness calls teardown */
}

static cudaError_t membw_launch(void *state)
{
    membw_state *s = state;
    return mb_gpu_membw(s->op, s->fp64, s->a, s->b, s->c, s->partials, s->n, mb_membw_write_value(s->calls),
                        s->blocks, s->threads, s->stream);
}

static int membw_run(void *state, double *seconds, mb_err *err)
{
    membw_state *s = state;
    int rc = mb_cuda_gate_time(&s->gate, &s->timer, s->stream, membw_launch, s, "membw kernel launch", seconds,
                               err);
    if (rc == MB_OK)
        s->calls++;
    return rc;
}

static double membw_work(void *state)
{
    membw_state *s = state;
    return mb_membw_bytes(s->op, s->n, s->elem);
}

static int verify_sum(membw_state *s, mb_err *err)
{
    double *parts = malloc((size_t)s->blocks * sizeof *parts);
    if (parts == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_cuda_err(cudaMemcpy(parts, s->partials, (size_t)s->blocks * sizeof *parts, cudaMemcpyDeviceToHost),
                         err, "cudaMemcpy(partial sums)");
    double got = 0, want = 0, rel = 0;
    for (int i = 0; rc == MB_OK && i < s->blocks; i++)
        got += parts[i];
    free(parts);
    if (rc == MB_OK && mb_membw_sum_check(got, s->n, MEMBW_SEED, s->fp64, &want, &rel) != 0)
        rc = mb_errf(err, MB_EVERIFY, "read: sum of a is %.17g, expected %.17g (relative error %.3g)", got, want,
                     rel);
    return rc;
}

static int membw_verify(void *state, mb_err *err)
{
    membw_state *s = state;
    if (s->calls == 0)
        return mb_errf(err, MB_ESKIP, "no kernel ran");
    int rc = mb_cuda_err(cudaStreamSynchronize(s->stream), err, "cudaStreamSynchronize");
    if (rc != MB_OK)
        return rc;
    if (s->op == MB_MEMBW_READ)
        return verify_sum(s, err);
    size_t bytes = s->n * s->elem;
    void *host = malloc(bytes);
    if (host == NULL)
        return mb_errf(err, MB_ESYS, "out of memory for the %zu-byte check buffer", bytes);
    const void *out = s->op == MB_MEMBW_COPY ? s->c : s->a;
    rc = mb_cuda_err(cudaMemcpy(host, out, bytes, cudaMemcpyDeviceToHost), err, "cudaMemcpy(check copy-back)");
    size_t first = 0;
    double got = 0, want = 0;
    size_t bad = rc == MB_OK ? mb_membw_check(s->op, s->fp64, host, s->n, MEMBW_SEED, s->calls, &first, &got, &want)
                             : 0;
    free(host);
    if (rc == MB_OK && bad)
        rc = mb_errf(err, MB_EVERIFY, "%s: %zu of %zu elements wrong, first [%zu] = %.9g, expected %.9g",
                     op_name(s->op), bad, s->n, first, got, want);
    return rc;
}

static void membw_report(void *state, mb_report *r)
{
    membw_state *s = state;
    const struct cudaDeviceProp *prop = mb_cuda_props();
    char buf[320];
    if (prop)
        mb_report_info(r, "gpu", prop->name);
    snprintf(buf, sizeof buf, "%s, %s, %zu elements (%.1f MiB) per array, %d array(s)", op_name(s->op),
             s->fp64 ? "fp64 (double2)" : "fp32 (float4)", s->n, s->n * s->elem / 1048576.0,
             mb_membw_arrays(s->op));
    mb_report_info(r, "kernel", buf);
    char shape[96];
    if (s->waves == 0)
        snprintf(shape, sizeof shape, "waves = 0: one step per thread");
    else
        snprintf(shape, sizeof shape, "%d wave(s), grid-stride", s->waves);
    snprintf(buf, sizeof buf, "%d blocks x %d threads (%s; %d SMs x %d resident blocks per SM), unroll %d", s->blocks,
             s->threads, shape, s->sms, s->blocks_per_sm, MB_MEMBW_UNROLL);
    mb_report_info(r, "grid", buf);
    mb_report_info(r, "bytes_counted", "BabelStream: every array read or written once per element "
                                       "(read 1, write 1, copy 2, triad 3)");
    if (s->l2 > 0)
        mb_report_metric(r, "l2_bytes", (double)s->l2, "B");
    if (s->small_for_l2)
        mb_report_note(r, "arrays (%.1f MiB) are smaller than 4 x L2 (%.1f MiB): part of the traffic may be served "
                          "by the L2, not DRAM",
                       s->n * s->elem / 1048576.0, 4.0 * s->l2 / 1048576.0);
    if (s->gate.timeouts)
        mb_report_note(r, "the spin kernel timed out %u times: launch time may be inside those timings",
                       s->gate.timeouts);
    char src[256];
    double peak = mb_cuda_mem_peak_gbps(src, sizeof src);
    if (peak > 0)
        mb_report_peak(r, peak, src);
    else
        mb_report_note(r, "no theoretical rate: %s", src);
}

const mb_backend_code mb_membw_cuda = {
    .component = "membw",
    .backend = "cuda",
    .probe = membw_probe,
    .setup = membw_setup,
    .run = membw_run,
    .work_per_iter = membw_work,
    .verify = membw_verify,
    .report = membw_report,
    .teardown = membw_teardown,
};

#else /* !MB_HAVE_CUDA */

MB_NOT_BUILT_IN(mb_membw_cuda, "membw", "cuda", "CUDA toolkit not found at build time");

#endif
