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
        e = cudaFree(NULL); /* creates the context; surfaces a sticky error */
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

/* IEEE binary16 with round-to-nearest-even. */
uint16_t mb_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFFu;
    if (((x >> 23) & 0xFF) == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)h;
}

float mb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FFu;
    float f;
    if (exp == 0) {
        f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    uint32_t x = exp == 31 ? sign | 0x7F800000u | (mant << 13)
                           : sign | ((exp - 15 + 127) << 23) | (mant << 13);
    memcpy(&f, &x, 4);
    return f;
}

uint16_t mb_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float mb_bf16_to_float(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* OCP FP8 E4M3 (bias 7, no infinities, 0x7F/0xFF = NaN, max 448), saturating. */
uint8_t mb_float_to_fp8e4m3(float f)
{
    if (isnan(f))
        return 0x7F;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a >= 448.0f)
        return sign | 0x7E;
    if (a < ldexpf(1.0f, -10)) /* below half the smallest subnormal (2^-9) */
        return sign;
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */
    int exp = e - 1 + 7;
    if (exp <= 0) { /* subnormal: value = mant * 2^-9 */
        int mant = (int)nearbyintf(a / ldexpf(1.0f, -9));
        if (mant >= 8)
            return sign | 0x08;
        return sign | (uint8_t)mant;
    }
    float scaled = a / ldexpf(1.0f, e - 1); /* [1,2) */
    int mant = (int)nearbyintf((scaled - 1.0f) * 8.0f);
    if (mant == 8) {
        mant = 0;
        exp++;
    }
    if (exp > 15 || (exp == 15 && mant == 7))
        return sign | 0x7E;
    return sign | (uint8_t)(exp << 3) | (uint8_t)mant;
}

float mb_fp8e4m3_to_float(uint8_t v)
{
    int sign = v & 0x80, exp = (v >> 3) & 0xF, mant = v & 7;
    if (exp == 15 && mant == 7)
        return NAN;
    float f = exp == 0 ? ldexpf((float)mant, -9) : ldexpf(1.0f + mant / 8.0f, exp - 7);
    return sign ? -f : f;
}
