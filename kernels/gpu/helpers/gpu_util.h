/* gpu_util.h: the CUDA runtime plumbing every GPU backend shares (C API only:
 * cuda_runtime_api.h). Compiled only when CUDA is found (MB_HAVE_CUDA). */
#ifndef MB_GPU_UTIL_H
#define MB_GPU_UTIL_H

#ifdef MB_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mb.h"

/* Records a CUDA error as `what: <cudaGetErrorName>: <cudaGetErrorString>`.
 * Returns MB_OK when e == cudaSuccess. cudaErrorNoDevice, InsufficientDriver
 * and friends map to MB_ESKIP, everything else to MB_EFAIL. */
int mb_cuda_err(cudaError_t e, mb_err *err, const char *what);
#define MB_CUDA_TRY(call, err, label)                          \
    do {                                                       \
        if (mb_cuda_err((call), (err), #call) != MB_OK)        \
            goto label;                                        \
    } while (0)

/* Is a usable device there? MB_OK, or MB_ESKIP with the CUDA error text.
 * Also clears a stale last error, waits for the device (so an earlier case's
 * kernel fault surfaces here) and resets a context left broken by a sticky
 * error (cudaDeviceReset), so one broken case does not poison the rest.
 * Device 0 unless MLBENCH_GPU is set. */
int mb_cuda_probe(mb_err *why);
int mb_cuda_device(void);

/* MB_ESKIP with a clear message when `bytes` do not fit in free device memory
 * (keeping a margin for the libraries' workspaces). */
int mb_cuda_fits(size_t bytes, mb_err *err);

/* Device properties of the benchmark device (cached). NULL on error. */
const struct cudaDeviceProp *mb_cuda_props(void);

/* What the compute backends need to know of the benchmark device, after
 * mb_cuda_probe: MB_ESKIP with the CUDA text when there is none. */
typedef struct mb_cuda_device_info {
    char name[256];
    int major, minor, sms;
    double clock_hz;  /* cudaDevAttrClockRate (maximum boost clock) */
    size_t l2_bytes;
} mb_cuda_device_info;
int mb_cuda_device_info_get(mb_cuda_device_info *out, mb_err *err);

/* Event timer on a stream: start/stop recorded on `stream`, seconds between. */
typedef struct mb_cuda_timer {
    cudaEvent_t start, stop;
    cudaStream_t stream;
} mb_cuda_timer;
int mb_cuda_timer_init(mb_cuda_timer *t, cudaStream_t stream, mb_err *err);
int mb_cuda_timer_start(mb_cuda_timer *t, mb_err *err);
/* Records stop, waits for it, stores elapsed seconds. */
int mb_cuda_timer_stop(mb_cuda_timer *t, double *seconds, mb_err *err);
void mb_cuda_timer_destroy(mb_cuda_timer *t);
/* The two halves of mb_cuda_timer_stop, for callers that must act between
 * recording stop and waiting for it (release a spin kernel that holds the
 * stream: mb_cuda_gate in gpu_gate.h). */
int mb_cuda_timer_record_stop(mb_cuda_timer *t, mb_err *err);
/* Waits for stop, stores the seconds between start and stop, and reports a
 * kernel error raised in between. */
int mb_cuda_timer_elapsed(mb_cuda_timer *t, double *seconds, mb_err *err);

/* ---- device facts the GPU benchmarks share ---------------------------------- */

/* cudaDeviceGetAttribute on the benchmark device; 0 when it fails. (CUDA 13
 * removed cudaDeviceProp.clockRate and .memoryClockRate: the attributes
 * cudaDevAttrClockRate / cudaDevAttrMemoryClockRate remain.) */
int mb_cuda_attr(enum cudaDeviceAttr attr);
/* PCIe link and NUMA node of the benchmark device, from sysfs through its
 * PCI bus id (pcie.h; MB_ESKIP when sysfs does not list it). */
struct mb_pcie_link;
int mb_cuda_pcie_link(struct mb_pcie_link *out, mb_err *err);
/* Theoretical DRAM bandwidth of the benchmark device in GB/s: memory clock x
 * bus width x 2 (DDR) from the device attributes, else the datasheet's
 * memory.bandwidth_gbps (hardware.h). `source` says which and how; 0 when
 * neither is known. */
double mb_cuda_mem_peak_gbps(char *source, size_t len);

/* Host-side conversions for filling and checking narrow buffers. */
#include "halfconv.h"

#endif /* MB_HAVE_CUDA */
#endif
