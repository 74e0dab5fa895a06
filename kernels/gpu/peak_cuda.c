/* peak_cuda.c: peak arithmetic on the CUDA cores (component `peak`, backend
 * `cuda`), mixbench / ERT style.
 *
 * Every thread runs MB_PEAK_CHAINS independent FMA chains (fp32 FFMA, fp64
 * DFMA, fp16 HFMA2 on half2), unrolled MB_PEAK_UNROLL deep, over a grid of
 * `waves` full waves (SMs x resident blocks per SM each). The chains start
 * from random small integers and step x = x*1 + 1, so each ends at x0 + iters
 * exactly; the host checks every thread's sum (gpu_check.h).
 *
 * Theoretical: SMs x boost clock (cudaDevAttrClockRate) x FLOPs per clock
 * per SM, the per-architecture rates being data in configs/gpu-arch.ini
 * (keys cores_fp16, fp32, cores_fp64). Tensor-core peaks are the gemm
 * component's. */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "gpu_arch.h"
#include "gpu_check.h"
#include "gpu_gate.h"
#include "gpu_kernels.h"
#include "gpu_util.h"
#include "hardware.h"

#define PEAK_SEED 0x6d6c627065616b01ull

typedef struct peak_state {
    mb_peak_dtype dt;
    const char *dtype;
    long iters;
    int threads, blocks, blocks_per_sm, sms, waves;
    double *out;            /* one double per thread */
    cudaStream_t stream;
    mb_cuda_timer timer;
    mb_cuda_gate gate;
    long runs;
} peak_state;

static int peak_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static void peak_teardown(void *state)
{
    peak_state *s = state;
    if (s == NULL)
        return;
    mb_cuda_gate_destroy(&s->gate);
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    cudaFree(s->out);
    mb_cuda_timer_destroy(&s->timer);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    cudaGetLastError();
    free(s);
}

static int peak_setup(const mb_params *p, void **state, mb_err *err)
{
    peak_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = s;
    s->dtype = mb_param_str(p, "dtype");
    s->dt = strcmp(s->dtype, "fp64") == 0 ? MB_PEAK_FP64 : strcmp(s->dtype, "fp16") == 0 ? MB_PEAK_FP16
                                                                                         : MB_PEAK_FP32;
    s->iters = mb_param_int(p, "iters");
    if (s->iters == 0)
        s->iters = s->dt == MB_PEAK_FP16 ? mb_peak_max_iters(MB_PEAK_FP16) : 4096;
    if (s->iters % MB_PEAK_UNROLL)
        return mb_errf(err, MB_EUSAGE, "parameter iters: %ld is not a multiple of %d", s->iters, MB_PEAK_UNROLL);
    if (s->iters > mb_peak_max_iters(s->dt))
        return mb_errf(err, MB_EUSAGE,
                       "parameter iters: %ld exceeds %ld, the most %s steps whose result stays an exact integer "
                       "(the check needs it)",
                       s->iters, mb_peak_max_iters(s->dt), s->dtype);
    s->threads = (int)mb_param_int(p, "threads");
    if (s->threads % 32)
        return mb_errf(err, MB_EUSAGE, "parameter threads: %d is not a multiple of 32", s->threads);
    s->waves = (int)mb_param_int(p, "waves");
    s->sms = mb_cuda_attr(cudaDevAttrMultiProcessorCount);
    if (s->sms <= 0)
        return mb_errf(err, MB_ESKIP, "cannot read the SM count of CUDA device %d", mb_cuda_device());
    MB_CUDA_TRY(mb_gpu_peak_occupancy(s->dt, s->threads, &s->blocks_per_sm), err, fail);
    if (s->blocks_per_sm <= 0)
        return mb_errf(err, MB_ESKIP, "the %s kernel cannot run with %d threads per block", s->dtype, s->threads);
    long long blocks = (long long)s->sms * s->blocks_per_sm * s->waves;
    if (blocks > 0x7FFFFFFF)
        return mb_errf(err, MB_EUSAGE, "parameter waves: %d waves make too many blocks", s->waves);
    s->blocks = (int)blocks;
    size_t out_bytes = (size_t)s->blocks * (size_t)s->threads * sizeof(double);
    int rc = mb_cuda_fits(out_bytes, err);
    if (rc != MB_OK)
        return rc;
    MB_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), err, fail);
    MB_CUDA_TRY(cudaMalloc((void **)&s->out, out_bytes), err, fail);
    MB_CUDA_TRY(cudaMemsetAsync(s->out, 0, out_bytes, s->stream), err, fail); /* 0 is never a valid sum */
    MB_CUDA_TRY(cudaStreamSynchronize(s->stream), err, fail);
    if ((rc = mb_cuda_timer_init(&s->timer, s->stream, err)) != MB_OK)
        return rc;
    return mb_cuda_gate_init(&s->gate, err);
fail:
    return err->code;
}

static cudaError_t peak_launch(void *state)
{
    peak_state *s = state;
    return mb_gpu_peak(s->dt, s->out, PEAK_SEED, s->iters, 1.0, 1.0, s->blocks, s->threads, s->stream);
}

static int peak_run(void *state, double *seconds, mb_err *err)
{
    peak_state *s = state;
    int rc = mb_cuda_gate_time(&s->gate, &s->timer, s->stream, peak_launch, s, "peak kernel launch", seconds, err);
    if (rc == MB_OK)
        s->runs++;
    return rc;
}

static double peak_work(void *state)
{
    peak_state *s = state;
    return mb_peak_flops(s->dt, (double)s->blocks * s->threads, s->iters);
}

static int peak_verify(void *state, mb_err *err)
{
    peak_state *s = state;
    if (s->runs == 0)
        return mb_errf(err, MB_ESKIP, "no kernel ran");
    size_t n = (size_t)s->blocks * (size_t)s->threads;
    double *host = malloc(n * sizeof *host);
    if (host == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_cuda_err(cudaMemcpy(host, s->out, n * sizeof *host, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(chain results)");
    size_t first = 0, bad = rc == MB_OK ? mb_peak_check(s->dt, host, n, PEAK_SEED, s->iters, &first) : 0;
    if (rc == MB_OK && bad)
        rc = mb_errf(err, MB_EVERIFY, "%zu of %zu threads wrong, first thread %zu: %.17g, expected %.17g", bad, n,
                     first, host[first], mb_peak_expected(s->dt, PEAK_SEED, first, s->iters));
    free(host);
    return rc;
}

/* SMs x clock x FLOPs/clock/SM from configs/gpu-arch.ini; a datasheet
 * figure that disagrees by more than 5% is noted. */
static void report_peak(peak_state *s, mb_report *r, const struct cudaDeviceProp *prop)
{
    int major = mb_cuda_attr(cudaDevAttrComputeCapabilityMajor);
    int minor = mb_cuda_attr(cudaDevAttrComputeCapabilityMinor);
    int khz = mb_cuda_attr(cudaDevAttrClockRate);
    /* The CUDA cores' fp32 is the table's fp32; fp16 and fp64 have their
     * own keys, the plain ones being the tensor-core (GEMM) rates. */
    const char *rate_key = s->dt == MB_PEAK_FP16   ? "cores_fp16"
                           : s->dt == MB_PEAK_FP64 ? "cores_fp64"
                                                   : "fp32";
    mb_gpu_arch_row arch;
    mb_err aerr = { 0 };
    double per_clock = 0;
    if (mb_gpu_arch_rate(NULL, major, minor, prop ? prop->name : NULL, rate_key, &per_clock, &arch, &aerr) !=
        MB_OK) {
        mb_report_note(r, "no theoretical rate: %s", aerr.msg);
        return;
    }
    if (khz <= 0) {
        mb_report_note(r, "no theoretical rate: %s", "the device reports no clock rate");
        return;
    }
    double tflops = mb_gpu_peak_flops(s->sms, khz * 1e3, per_clock) / 1e12;
    char src[512];
    snprintf(src, sizeof src,
             "sm_%d%d %s: %d SMs x %.0f MHz (max boost, cudaDevAttrClockRate) x %.0f %s FLOPs/clock/SM on the CUDA "
             "cores (configs/gpu-arch.ini: %s)",
             major, minor, arch.name, s->sms, khz / 1e3, per_clock, s->dtype, arch.source);
    mb_report_peak(r, tflops, src);

    mb_datasheet *d = NULL;
    double ds = 0;
    char key[32];
    snprintf(key, sizeof key, "peak.%s", s->dtype);
    /* Datasheets' fp16 figures are tensor-core figures: only fp32 and fp64
     * (non-tensor) compare with the CUDA cores. */
    if (s->dt != MB_PEAK_FP16 && prop && mb_datasheet_match(prop->name, &d, NULL) == MB_OK &&
        mb_datasheet_get(d, key, &ds, NULL) && ds > 0 &&
        fabs(ds - tflops) / ds > 0.05)
        mb_report_note(r, "datasheet %s says %.1f TFLOP/s for %s, the computed peak is %.1f (different clock or "
                          "SM count in this product?)",
                       mb_datasheet_name(d), ds, s->dtype, tflops);
    if (d)
        mb_datasheet_free(d);
}

static void peak_report(void *state, mb_report *r)
{
    peak_state *s = state;
    const struct cudaDeviceProp *prop = mb_cuda_props();
    char buf[256];
    if (prop)
        mb_report_info(r, "gpu", prop->name);
    snprintf(buf, sizeof buf, "%s: %d independent chains per thread%s, %ld steps each, unroll %d",
             s->dt == MB_PEAK_FP16 ? "HFMA2" : s->dt == MB_PEAK_FP64 ? "DFMA" : "FFMA", MB_PEAK_CHAINS,
             s->dt == MB_PEAK_FP16 ? " (half2: 2 FMAs each)" : "", s->iters, MB_PEAK_UNROLL);
    mb_report_info(r, "kernel", buf);
    snprintf(buf, sizeof buf, "%d blocks x %d threads = %d waves of %d SMs x %d resident blocks", s->blocks,
             s->threads, s->waves, s->sms, s->blocks_per_sm);
    mb_report_info(r, "grid", buf);
    mb_report_info(r, "flops_counted", "2 per FMA (4 per HFMA2)");
    if (s->gate.timeouts)
        mb_report_note(r, "the spin kernel timed out %u times: launch time may be inside those timings",
                       s->gate.timeouts);
    report_peak(s, r, prop);
}

const mb_backend_code mb_peak_cuda = {
    .component = "peak",
    .backend = "cuda",
    .probe = peak_probe,
    .setup = peak_setup,
    .run = peak_run,
    .work_per_iter = peak_work,
    .verify = peak_verify,
    .report = peak_report,
    .teardown = peak_teardown,
};

#else /* !MB_HAVE_CUDA */

MB_NOT_BUILT_IN(mb_peak_cuda, "peak", "cuda", "CUDA toolkit not found at build time");

#endif
