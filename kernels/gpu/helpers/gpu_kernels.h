/* gpu_kernels.h: the device kernels of copy, membw, peak and launch
 * (gpu_kernels.cu) behind extern "C" launchers, so the benchmarks stay C.
 * Every launcher enqueues on `stream` and returns the launch error
 * (cudaGetLastError), never waits. Compiled only with CUDA (MB_HAVE_CUDA). */
#ifndef MB_GPU_KERNELS_H
#define MB_GPU_KERNELS_H

#ifdef MB_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One thread that spins until *release != 0 (host-mapped memory the host
 * writes), or until timeout_ns of the GPU's global timer have passed, in which
 * case it sets *timed_out = 1 (also host-mapped). nvbandwidth's method: work
 * enqueued behind it starts only when the host releases it, so the time the
 * host spends enqueueing is outside the events around that work. */
cudaError_t mb_gpu_spin(const volatile int *release, int *timed_out, unsigned long long timeout_ns,
                        cudaStream_t stream);

/* Writes mb_pattern_fill()'s byte stream of `seed` into n bytes of device
 * memory (pointer 8-byte aligned). */
cudaError_t mb_gpu_pattern_fill(void *dev, size_t n, uint64_t seed, cudaStream_t stream);

/* Fills x[0..n) with mb_membw_input(seed, array, i) (float or double). */
cudaError_t mb_gpu_membw_init(void *x, size_t n, int fp64, uint64_t seed, int array, int blocks,
                              int threads, cudaStream_t stream);
/* One BabelStream kernel over n elements (n a multiple of 4 for fp32, 2 for
 * fp64: 16-byte vector accesses, float4 / double2) with a grid-stride loop
 * unrolled MB_MEMBW_UNROLL deep (any grid: one wave, or enough blocks for one
 * unrolled step per thread). READ writes one double partial sum per block to
 * partials[blockIdx.x]; WRITE stores write_value. */
cudaError_t mb_gpu_membw(mb_membw_op op, int fp64, void *a, void *b, void *c, double *partials,
                         size_t n, double write_value, int blocks, int threads, cudaStream_t stream);
/* Resident blocks per SM of that kernel at `threads` per block. */
cudaError_t mb_gpu_membw_occupancy(mb_membw_op op, int fp64, int threads, int *blocks_per_sm);

/* MB_PEAK_CHAINS independent FMA chains per thread, `iters` steps each
 * (a multiple of MB_PEAK_UNROLL), x = x * a + b from mb_peak_x0(); thread t
 * writes the sum of its chains to out[t]. blocks * threads threads. */
cudaError_t mb_gpu_peak(mb_peak_dtype dt, double *out, uint64_t seed, long iters, double a,
                        double b, int blocks, int threads, cudaStream_t stream);
cudaError_t mb_gpu_peak_occupancy(mb_peak_dtype dt, int threads, int *blocks_per_sm);

/* The launch benchmark's kernel, for cudaLaunchKernel (so the C side times
 * the runtime's own launch call): one thread adds 1 to *counter, an
 * unsigned long long in device memory. Launch it <<<1, 1>>>. */
const void *mb_gpu_count_kernel(void);

/* One thread stores `value` into *word (host-mapped memory) and fences it to
 * the system: launch stream_sync's check that the sync waited for it. */
cudaError_t mb_gpu_mirror(volatile uint32_t *word, uint32_t value, cudaStream_t stream);

/* Loads every kernel above now (lazy loading would load each at its first
 * launch, which must not happen behind a spin kernel). Called by
 * mb_cuda_gate_init and the launch benchmark's setup. */
cudaError_t mb_gpu_preload(void);

#ifdef __cplusplus
}
#endif

#endif /* MB_HAVE_CUDA */
#endif
