#include "gpu_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "hardware.h"
#include "pcie.h"

int mb_cuda_err(cudaError_t e, mb_err *err, const char *what)
{
    if (e == cudaSuccess)
        return MB_OK;
    int code = MB_EFAIL;
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorMemoryAllocation:
    case cudaErrorNoKernelImageForDevice:
        code = MB_ESKIP;
        break;
    default:
        break;
    }
    return mb_errf(err, code, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

int mb_cuda_device(void)
{
    const char *env = getenv("MLBENCH_GPU");
    return env && *env ? atoi(env) : 0;
}

int mb_cuda_probe(mb_err *why)
{
    /* A non-sticky error an earlier case left in the runtime's last-error
     * slot would otherwise be reported by this case's first
     * cudaGetLastError() after a launch, and fail it. */
    cudaGetLastError();
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return mb_errf(why, MB_ESKIP, "no usable CUDA device: cudaGetDeviceCount: %s: %s",
                       cudaGetErrorName(e), cudaGetErrorString(e));
    int dev = mb_cuda_device();
    if (dev < 0 || dev >= n)
        return mb_errf(why, MB_ESKIP, "CUDA device %d requested (MLBENCH_GPU) but %d present", dev, n);
    e = cudaSetDevice(dev);
    if (e == cudaSuccess)
        e = cudaFree(NULL); /* creates the context */
    /* A kernel of an earlier case that faulted after its last synchronisation
     * (illegal address, a trap) shows only once the device is waited for;
     * every call then returns that sticky error until the context is reset. */
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        /* A previous case left the context broken: start a fresh one. */
        cudaDeviceReset();
        cudaGetLastError();
        e = cudaSetDevice(dev);
        if (e == cudaSuccess)
            e = cudaFree(NULL);
    }
    if (e != cudaSuccess)
        return mb_errf(why, MB_ESKIP, "CUDA device %d unusable: %s: %s", dev, cudaGetErrorName(e),
                       cudaGetErrorString(e));
    return MB_OK;
}

int mb_cuda_fits(size_t bytes, mb_err *err)
{
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess)
        return mb_cuda_err(e, err, "cudaMemGetInfo");
    /* Keep 5% (at least 256 MiB) for library workspaces and the context. */
    size_t margin = total_b / 20 > (256u << 20) ? total_b / 20 : (256u << 20);
    if (bytes + margin > free_b)
        return mb_errf(err, MB_ESKIP,
                       "needs %.2f GiB of device memory, %.2f GiB free of %.2f GiB (margin %.2f GiB)",
                       bytes / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0,
                       margin / 1073741824.0);
    return MB_OK;
}

const struct cudaDeviceProp *mb_cuda_props(void)
{
    static struct cudaDeviceProp props;
    static int cached = -1;
    int dev = mb_cuda_device();
    if (cached == dev)
        return &props;
    if (cudaGetDeviceProperties(&props, dev) != cudaSuccess)
        return NULL;
    cached = dev;
    return &props;
}

int mb_cuda_device_info_get(mb_cuda_device_info *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = mb_cuda_probe(err);
    if (rc != MB_OK)
        return rc;
    const struct cudaDeviceProp *props = mb_cuda_props();
    if (!props)
        return mb_cuda_err(cudaGetLastError(), err, "cudaGetDeviceProperties");
    snprintf(out->name, sizeof out->name, "%s", props->name);
    out->major = props->major;
    out->minor = props->minor;
    out->sms = props->multiProcessorCount;
    out->l2_bytes = props->l2CacheSize > 0 ? (size_t)props->l2CacheSize : 0;
    int khz = 0;
    rc = mb_cuda_err(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, mb_cuda_device()), err,
                     "cudaDeviceGetAttribute(ClockRate)");
    out->clock_hz = khz * 1e3;
    return rc;
}

int mb_cuda_timer_init(mb_cuda_timer *t, cudaStream_t stream, mb_err *err)
{
    memset(t, 0, sizeof *t);
    t->stream = stream;
    int rc = mb_cuda_err(cudaEventCreate(&t->start), err, "cudaEventCreate");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventCreate(&t->stop), err, "cudaEventCreate");
    return rc;
}

int mb_cuda_timer_start(mb_cuda_timer *t, mb_err *err)
{
    return mb_cuda_err(cudaEventRecord(t->start, t->stream), err, "cudaEventRecord(start)");
}

int mb_cuda_timer_stop(mb_cuda_timer *t, double *seconds, mb_err *err)
{
    int rc = mb_cuda_err(cudaEventRecord(t->stop, t->stream), err, "cudaEventRecord(stop)");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventSynchronize(t->stop), err, "cudaEventSynchronize");
    float ms = 0;
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventElapsedTime(&ms, t->start, t->stop), err, "cudaEventElapsedTime");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaGetLastError(), err, "kernel in timed region");
    *seconds = ms / 1e3;
    return rc;
}

int mb_cuda_timer_record_stop(mb_cuda_timer *t, mb_err *err)
{
    return mb_cuda_err(cudaEventRecord(t->stop, t->stream), err, "cudaEventRecord(stop)");
}

int mb_cuda_timer_elapsed(mb_cuda_timer *t, double *seconds, mb_err *err)
{
    float ms = 0;
    int rc = mb_cuda_err(cudaEventSynchronize(t->stop), err, "cudaEventSynchronize");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventElapsedTime(&ms, t->start, t->stop), err, "cudaEventElapsedTime");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaGetLastError(), err, "kernel in timed region");
    *seconds = ms / 1e3;
    return rc;
}

void mb_cuda_timer_destroy(mb_cuda_timer *t)
{
    if (t->start)
        cudaEventDestroy(t->start);
    if (t->stop)
        cudaEventDestroy(t->stop);
    memset(t, 0, sizeof *t);
}

int mb_cuda_attr(enum cudaDeviceAttr attr)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, attr, mb_cuda_device()) != cudaSuccess)
        return 0;
    return v;
}

int mb_cuda_pcie_link(struct mb_pcie_link *out, mb_err *err)
{
    char busid[32];
    int rc = mb_cuda_err(cudaDeviceGetPCIBusId(busid, (int)sizeof busid, mb_cuda_device()), err,
                         "cudaDeviceGetPCIBusId");
    if (rc != MB_OK)
        return rc;
    return mb_pcie_read(mb_sysfs_root(), busid, out, err);
}

double mb_cuda_mem_peak_gbps(char *source, size_t len)
{
    int khz = mb_cuda_attr(cudaDevAttrMemoryClockRate);
    int bits = mb_cuda_attr(cudaDevAttrGlobalMemoryBusWidth);
    if (khz > 0 && bits > 0) {
        double gbps = mb_mem_bandwidth_gbps(khz * 1e3, bits, 2.0);
        snprintf(source, len, "memory clock %.0f MHz x %d-bit bus x 2 (DDR), device attributes", khz / 1e3,
                 bits);
        return gbps;
    }
    const struct cudaDeviceProp *p = mb_cuda_props();
    mb_datasheet *d = NULL;
    double gbps = 0;
    const char *src = NULL;
    if (p && mb_datasheet_match(p->name, &d, NULL) == MB_OK &&
        mb_datasheet_get(d, "memory.bandwidth_gbps", &gbps, &src))
        snprintf(source, len, "datasheet %s: %s", mb_datasheet_name(d), src ? src : "");
    else
        snprintf(source, len, "unknown: no memory clock attribute and no datasheet match");
    if (d)
        mb_datasheet_free(d);
    return gbps;
}
