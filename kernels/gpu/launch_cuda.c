/* launch_cuda.c: kernel launch and synchronisation costs (component `launch`,
 * backend `cuda`). Latency-type: tables lead with microseconds per op.
 *
 * op (one run() = `count` ops, timed on the host with CLOCK_MONOTONIC, since
 * the cost being measured is the host's):
 *   launch       back-to-back cudaLaunchKernel of a one-thread kernel, then
 *                one cudaStreamSynchronize: the sustained launch rate
 *   launch_sync  launch + cudaStreamSynchronize, one at a time: launch-to-
 *                completion latency
 *   graph        one CUDA Graph of `count` such kernels (captured from the
 *                stream, instantiated and uploaded in setup), replayed with
 *                cudaGraphLaunch + sync: per-kernel cost inside a graph
 *   stream_sync  cudaStreamSynchronize on an idle stream: the round trip
 *   d2h_4b       cudaMemcpyAsync of 4 bytes device -> pinned host + sync,
 *                one at a time (what reading a scalar such as a loss costs)
 *
 * Verification: every kernel adds 1 to a device counter; the counter must
 * equal the number of kernels launched (warm-up included). d2h_4b checks
 * that the host received the device's random 4-byte value. stream_sync
 * checks that the sync waits: after each run, untimed, a kernel writes that
 * run's value into host-mapped memory, the same sync waits for it and the host
 * reads it (mb_sync_mirror_check, gpu_check.h). */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "gpu_kernels.h"
#include "gpu_util.h"

#define MAX_SAMPLES 200000
#define D2H_VALUE 0x9E3779B9u /* what the device holds for d2h_4b */
#define D2H_STALE 0x5A5A5A5Au /* what the host holds before each copy */

typedef enum { OP_LAUNCH, OP_LAUNCH_SYNC, OP_GRAPH, OP_STREAM_SYNC, OP_D2H_4B } launch_op;

typedef struct launch_state {
    launch_op op;
    long count;
    cudaStream_t stream;
    unsigned long long *counter; /* device */
    unsigned long long launched; /* kernels enqueued so far */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    uint32_t *dev_word, *host_word; /* d2h_4b */
    uint32_t *mirror_word, *mirror_dev; /* stream_sync: host-mapped word, its device address */
    mb_sync_mirror mirror;
    long d2h_bad;                   /* copies after which the host did not hold the value */
    long runs;
    double *samples;              /* per-op latencies (one-at-a-time ops) */
    long nsamples;                /* valid entries in samples */
    long sampled;                 /* ops sampled so far */
} launch_state;

static int launch_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static const char *op_name(launch_op op)
{
    static const char *names[] = { "launch", "launch_sync", "graph", "stream_sync", "d2h_4b" };
    return names[op];
}

static void launch_teardown(void *state)
{
    launch_state *s = state;
    if (s == NULL)
        return;
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    if (s->exec)
        cudaGraphExecDestroy(s->exec);
    if (s->graph)
        cudaGraphDestroy(s->graph);
    cudaFree(s->counter);
    cudaFree(s->dev_word);
    if (s->host_word)
        cudaFreeHost(s->host_word);
    if (s->mirror_word)
        cudaFreeHost(s->mirror_word);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    free(s->samples);
    cudaGetLastError();
    free(s);
}

static cudaError_t launch_one(launch_state *s)
{
    dim3 one = { 1, 1, 1 };
    void *args[] = { &s->counter };
    return cudaLaunchKernel(mb_gpu_count_kernel(), one, one, args, 0, s->stream);
}

/* A graph of `count` kernel nodes, captured from the stream (the way
 * frameworks build them), instantiated and uploaded here so replays time
 * only the launch. */
static int build_graph(launch_state *s, mb_err *err)
{
    int rc = mb_cuda_err(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal), err,
                         "cudaStreamBeginCapture");
    for (long i = 0; i < s->count && rc == MB_OK; i++)
        rc = mb_cuda_err(launch_one(s), err, "cudaLaunchKernel (capture)");
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(s->stream, &g); /* ends the capture even after an error */
    s->graph = g;
    if (rc != MB_OK)
        return rc;
    MB_CUDA_TRY(e, err, fail);
    MB_CUDA_TRY(cudaGraphInstantiate(&s->exec, s->graph, 0), err, fail);
    MB_CUDA_TRY(cudaGraphUpload(s->exec, s->stream), err, fail);
    MB_CUDA_TRY(cudaStreamSynchronize(s->stream), err, fail);
    return MB_OK;
fail:
    return err->code;
}

static int launch_setup(const mb_params *p, void **state, mb_err *err)
{
    launch_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = s;
    const char *op = mb_param_str(p, "op");
    s->op = strcmp(op, "launch") == 0 ? OP_LAUNCH : strcmp(op, "launch_sync") == 0 ? OP_LAUNCH_SYNC
            : strcmp(op, "graph") == 0 ? OP_GRAPH : strcmp(op, "stream_sync") == 0 ? OP_STREAM_SYNC : OP_D2H_4B;
    s->count = mb_param_int(p, "count");
    s->samples = malloc(MAX_SAMPLES * sizeof *s->samples);
    if (s->samples == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    MB_CUDA_TRY(mb_gpu_preload(), err, fail); /* no module loading inside the timed ops */
    MB_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), err, fail);
    MB_CUDA_TRY(cudaMalloc((void **)&s->counter, sizeof *s->counter), err, fail);
    MB_CUDA_TRY(cudaMemsetAsync(s->counter, 0, sizeof *s->counter, s->stream), err, fail);
    if (s->op == OP_D2H_4B) {
        uint32_t v = D2H_VALUE;
        MB_CUDA_TRY(cudaMalloc((void **)&s->dev_word, sizeof v), err, fail);
        MB_CUDA_TRY(cudaMemcpy(s->dev_word, &v, sizeof v, cudaMemcpyHostToDevice), err, fail);
        MB_CUDA_TRY(cudaHostAlloc((void **)&s->host_word, sizeof v, cudaHostAllocDefault), err, fail);
        *s->host_word = D2H_STALE;
    }
    if (s->op == OP_STREAM_SYNC) {
        MB_CUDA_TRY(cudaHostAlloc((void **)&s->mirror_word, sizeof *s->mirror_word, cudaHostAllocMapped), err,
                    fail);
        MB_CUDA_TRY(cudaHostGetDevicePointer((void **)&s->mirror_dev, s->mirror_word, 0), err, fail);
        *s->mirror_word = 0; /* no run's value (mb_sync_mirror_value is never 0) */
    }
    MB_CUDA_TRY(cudaStreamSynchronize(s->stream), err, fail);
    if (s->op == OP_GRAPH)
        return build_graph(s, err);
    return MB_OK;
fail:
    return err->code;
}

static void sample(launch_state *s, double seconds)
{
    /* A ring: once full, the newest sample replaces the oldest. */
    s->samples[s->sampled++ % MAX_SAMPLES] = seconds;
    if (s->nsamples < MAX_SAMPLES)
        s->nsamples++;
}

/* One op of the one-at-a-time kinds. */
static cudaError_t one_op(launch_state *s)
{
    cudaError_t e = cudaSuccess;
    switch (s->op) {
    case OP_LAUNCH_SYNC:
        e = launch_one(s);
        if (e == cudaSuccess)
            s->launched++;
        break;
    case OP_D2H_4B:
        /* One host store before and one load after: nanoseconds next to
         * the microseconds measured, and every copy is checked. */
        *(volatile uint32_t *)s->host_word = D2H_STALE;
        e = cudaMemcpyAsync(s->host_word, s->dev_word, sizeof *s->host_word, cudaMemcpyDeviceToHost, s->stream);
        break;
    default:
        break;
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    if (e == cudaSuccess && s->op == OP_D2H_4B && *(volatile uint32_t *)s->host_word != D2H_VALUE)
        s->d2h_bad++;
    return e;
}

/* stream_sync's check (untimed): one kernel writes this run's value into
 * host-mapped memory, the sync under test waits for it, the host reads it. */
static int mirror_check(launch_state *s, mb_err *err)
{
    long run = s->mirror.runs++;
    cudaError_t e = mb_gpu_mirror(s->mirror_dev, mb_sync_mirror_value(run), s->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    if (e == cudaSuccess)
        mb_sync_mirror_record(&s->mirror, run, *(volatile uint32_t *)s->mirror_word);
    return mb_cuda_err(e, err, "stream_sync check (mirror kernel + cudaStreamSynchronize)");
}

static int launch_run(void *state, double *seconds, mb_err *err)
{
    launch_state *s = state;
    cudaError_t e = cudaSuccess;
    double t0 = mb_now(), t = t0;
    switch (s->op) {
    case OP_LAUNCH:
        for (long i = 0; i < s->count && e == cudaSuccess; i++) {
            e = launch_one(s);
            s->launched += e == cudaSuccess;
        }
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s->stream);
        t = mb_now();
        break;
    case OP_GRAPH:
        e = cudaGraphLaunch(s->exec, s->stream);
        if (e == cudaSuccess) {
            s->launched += (unsigned long long)s->count;
            e = cudaStreamSynchronize(s->stream);
        }
        t = mb_now();
        break;
    default:
        for (long i = 0; i < s->count && e == cudaSuccess; i++) {
            e = one_op(s);
            double now = mb_now();
            sample(s, now - t);
            t = now;
        }
        break;
    }
    int rc = mb_cuda_err(e, err, op_name(s->op));
    if (rc != MB_OK)
        return rc;
    *seconds = t - t0;
    if (s->op == OP_STREAM_SYNC) {
        rc = mirror_check(s, err); /* after the timing: the timed syncs stay on an idle stream */
        if (rc != MB_OK)
            return rc;
    }
    s->runs++;
    return MB_OK;
}

/* The percentiles describe the timed runs only: drop the warm-up's samples. */
static void launch_timing_start(void *state)
{
    launch_state *s = state;
    s->nsamples = 0;
    s->sampled = 0;
}

static double launch_work(void *state)
{
    launch_state *s = state;
    return (double)s->count;
}

static int launch_verify(void *state, mb_err *err)
{
    launch_state *s = state;
    if (s->runs == 0)
        return mb_errf(err, MB_ESKIP, "no op ran");
    if (s->op == OP_STREAM_SYNC) {
        char msg[320];
        int bad = mb_sync_mirror_check(&s->mirror, msg, sizeof msg);
        return bad == 0 ? MB_OK : mb_errf(err, bad < 0 ? MB_ESKIP : MB_EVERIFY, "stream_sync: %s", msg);
    }
    if (s->op == OP_D2H_4B) {
        if (s->d2h_bad)
            return mb_errf(err, MB_EVERIFY, "d2h_4b: after %ld of %ld copies the host did not hold the device's "
                                            "value 0x%08x",
                           s->d2h_bad, s->runs * s->count, D2H_VALUE);
        return MB_OK;
    }
    unsigned long long got = 0;
    int rc = mb_cuda_err(cudaMemcpy(&got, s->counter, sizeof got, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(counter)");
    if (rc == MB_OK && got != s->launched)
        rc = mb_errf(err, MB_EVERIFY, "%llu kernels launched but the device counter says %llu ran", s->launched,
                     got);
    return rc;
}

static void launch_report(void *state, mb_report *r)
{
    launch_state *s = state;
    const struct cudaDeviceProp *prop = mb_cuda_props();
    if (prop)
        mb_report_info(r, "gpu", prop->name);
    static const char *what[] = {
        [OP_LAUNCH] = "one cudaLaunchKernel of a 1-thread kernel, back to back; one sync per run amortised",
        [OP_LAUNCH_SYNC] = "cudaLaunchKernel + cudaStreamSynchronize of a 1-thread kernel",
        [OP_GRAPH] = "one kernel node of a captured CUDA Graph (cudaGraphLaunch + sync per replay amortised)",
        [OP_STREAM_SYNC] = "cudaStreamSynchronize on an idle stream",
        [OP_D2H_4B] = "cudaMemcpyAsync 4 bytes device -> pinned host + cudaStreamSynchronize",
    };
    mb_report_info(r, "op", what[s->op]);
    mb_report_info(r, "timing", "host CLOCK_MONOTONIC around the ops of a run (the cost is the host's)");
    unsigned flags = 0;
    if (cudaGetDeviceFlags(&flags) == cudaSuccess) {
        unsigned sched = flags & cudaDeviceScheduleMask;
        mb_report_info(r, "sync_mode", sched == cudaDeviceScheduleSpin ? "spin"
                                       : sched == cudaDeviceScheduleYield ? "yield"
                                       : sched == cudaDeviceScheduleBlockingSync ? "blocking"
                                                                                 : "auto (spin or yield by CPU count)");
    }
    if (s->nsamples > 0) {
        int n = (int)s->nsamples;
        mb_report_metric(r, "latency_p50_us", mb_percentile(s->samples, n, 50) * 1e6, "us");
        mb_report_metric(r, "latency_p99_us", mb_percentile(s->samples, n, 99) * 1e6, "us");
        mb_report_metric(r, "latency_min_us", mb_min(s->samples, n) * 1e6, "us");
    }
}

const mb_backend_code mb_launch_cuda = {
    .component = "launch",
    .backend = "cuda",
    .probe = launch_probe,
    .setup = launch_setup,
    .run = launch_run,
    .work_per_iter = launch_work,
    .verify = launch_verify,
    .report = launch_report,
    .timing_start = launch_timing_start,
    .teardown = launch_teardown,
};

#else /* !MB_HAVE_CUDA */

MB_NOT_BUILT_IN(mb_launch_cuda, "launch", "cuda", "CUDA toolkit not found at build time");

#endif
