/* gpu_kernels.cu: device code of the copy, membw, peak and launch benchmarks
 * (launchers declared in gpu_kernels.h). Methods follow nvbandwidth (spin
 * kernel), BabelStream (membw kernels and byte counts) and mixbench / ERT
 * (independent FMA chains per thread). */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_kernels.h"

/* ---- spin ------------------------------------------------------------------ */

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* The global timer counts nanoseconds whatever the SM clock does, unlike
 * clock64(), so the timeout does not stretch when the GPU idles down. */
static __global__ void k_spin(const volatile int *release, int *timed_out, unsigned long long timeout_ns)
{
    unsigned long long start = global_ns();
    while (*release == 0) {
        if (global_ns() - start > timeout_ns) {
            *(volatile int *)timed_out = 1;
            break;
        }
    }
}

extern "C" cudaError_t mb_gpu_spin(const volatile int *release, int *timed_out,
                                   unsigned long long timeout_ns, cudaStream_t stream)
{
    k_spin<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
    return cudaGetLastError();
}

/* ---- copy ------------------------------------------------------------------- */

/* Writes the byte stream of mb_pattern_fill() (gpu_check.h) in place on the
 * device, so multi-GiB sources need no host staging buffer. */
static __global__ void k_pattern(unsigned char *buf, size_t n, uint64_t seed)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t words = n / 8;
    uint64_t *w = (uint64_t *)buf; /* cudaMalloc memory is 256-byte aligned */
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < words; k += stride)
        w[k] = mb_hash64(seed, k);
    if (blockIdx.x == 0 && threadIdx.x == 0 && n % 8) {
        uint64_t v = mb_hash64(seed, words);
        for (size_t j = 0; j < n % 8; j++)
            buf[8 * words + j] = (unsigned char)(v >> (8 * j));
    }
}

extern "C" cudaError_t mb_gpu_pattern_fill(void *dev, size_t n, uint64_t seed, cudaStream_t stream)
{
    size_t words = n / 8 + 1;
    size_t blocks = (words + 255) / 256;
    if (blocks > 65535)
        blocks = 65535;
    k_pattern<<<(unsigned)blocks, 256, 0, stream>>>((unsigned char *)dev, n, seed);
    return cudaGetLastError();
}

/* ---- membw ------------------------------------------------------------------ */

/* 16-byte accesses: one LDG.128 / STG.128 per thread and step. */
template <typename T> struct vec;
template <> struct vec<float> {
    typedef float4 type;
    static const int width = 4;
};
template <> struct vec<double> {
    typedef double2 type;
    static const int width = 2;
};

static __device__ __forceinline__ float lanesum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
static __device__ __forceinline__ double lanesum(double2 v) { return v.x + v.y; }
static __device__ __forceinline__ float4 splat(float s) { return make_float4(s, s, s, s); }
static __device__ __forceinline__ double2 splat(double s) { return make_double2(s, s); }
static __device__ __forceinline__ float4 vfma(float s, float4 c, float4 b)
{
    return make_float4(fmaf(s, c.x, b.x), fmaf(s, c.y, b.y), fmaf(s, c.z, b.z), fmaf(s, c.w, b.w));
}
static __device__ __forceinline__ double2 vfma(double s, double2 c, double2 b)
{
    return make_double2(fma(s, c.x, b.x), fma(s, c.y, b.y));
}

/* Grid-stride loops unrolled UNROLL deep: each thread has UNROLL independent
 * 16-byte loads in flight before it uses the first, which is what it takes
 * to cover HBM latency with a grid of one wave (waves = 1). With waves = 0
 * the grid is large enough that each thread makes one such step. */
#define UNROLL MB_MEMBW_UNROLL

#define GRID_STRIDE_BEGIN                                                 \
    const size_t stride = (size_t)gridDim.x * blockDim.x;                 \
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

template <typename T>
static __global__ void k_membw_init(T *x, size_t n, uint64_t seed, int array)
{
    GRID_STRIDE_BEGIN
    for (; i < n; i += stride)
        x[i] = (T)mb_membw_input(seed, array, i);
}

static __device__ __forceinline__ double block_sum(double v)
{
    __shared__ double warp_sums[32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xFFFFFFFFu, v, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0.0;
    if (warp == 0)
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xFFFFFFFFu, v, off);
    return v;
}

/* Sums of UNROLL vectors (16 floats, 8 doubles) are formed in T, then added
 * to a double accumulator: one double add per 16 floats keeps fp32 reads
 * memory-bound even on GPUs with slow fp64, and with the inputs' 12 fraction
 * bits every one of these sums is exact (gpu_check.h), so the host compares
 * the total for equality. */
template <typename T>
static __global__ void k_read(const typename vec<T>::type *__restrict__ a, size_t nv, double *partials)
{
    typedef typename vec<T>::type V;
    GRID_STRIDE_BEGIN
    double acc = 0;
    for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
        V r[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            r[u] = a[i + u * stride];
        T g = 0;
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            g += lanesum(r[u]);
        acc += (double)g;
    }
    for (; i < nv; i += stride)
        acc += (double)lanesum(a[i]);
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = acc;
}

template <typename T>
static __global__ void k_write(typename vec<T>::type *__restrict__ a, size_t nv, T w)
{
    typedef typename vec<T>::type V;
    const V v = splat(w);
    GRID_STRIDE_BEGIN
    for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            a[i + u * stride] = v;
    }
    for (; i < nv; i += stride)
        a[i] = v;
}

template <typename T>
static __global__ void k_copy(const typename vec<T>::type *__restrict__ a,
                              typename vec<T>::type *__restrict__ c, size_t nv)
{
    typedef typename vec<T>::type V;
    GRID_STRIDE_BEGIN
    for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
        V r[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            r[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            c[i + u * stride] = r[u];
    }
    for (; i < nv; i += stride)
        c[i] = a[i];
}

template <typename T>
static __global__ void k_triad(typename vec<T>::type *__restrict__ a,
                               const typename vec<T>::type *__restrict__ b,
                               const typename vec<T>::type *__restrict__ c, size_t nv, T s)
{
    typedef typename vec<T>::type V;
    GRID_STRIDE_BEGIN
    for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
        V rb[UNROLL], rc[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            rb[u] = b[i + u * stride];
            rc[u] = c[i + u * stride];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            a[i + u * stride] = vfma(s, rc[u], rb[u]);
    }
    for (; i < nv; i += stride)
        a[i] = vfma(s, c[i], b[i]);
}

extern "C" cudaError_t mb_gpu_membw_init(void *x, size_t n, int fp64, uint64_t seed, int array,
                                         int blocks, int threads, cudaStream_t stream)
{
    if (fp64)
        k_membw_init<double><<<blocks, threads, 0, stream>>>((double *)x, n, seed, array);
    else
        k_membw_init<float><<<blocks, threads, 0, stream>>>((float *)x, n, seed, array);
    return cudaGetLastError();
}

template <typename T>
static void membw_launch(mb_membw_op op, void *a, void *b, void *c, double *partials, size_t n,
                         double write_value, int blocks, int threads, cudaStream_t stream)
{
    typedef typename vec<T>::type V;
    size_t nv = n / vec<T>::width;
    switch (op) {
    case MB_MEMBW_READ:
        k_read<T><<<blocks, threads, 0, stream>>>((const V *)a, nv, partials);
        break;
    case MB_MEMBW_WRITE:
        k_write<T><<<blocks, threads, 0, stream>>>((V *)a, nv, (T)write_value);
        break;
    case MB_MEMBW_COPY:
        k_copy<T><<<blocks, threads, 0, stream>>>((const V *)a, (V *)c, nv);
        break;
    case MB_MEMBW_TRIAD:
        k_triad<T><<<blocks, threads, 0, stream>>>((V *)a, (const V *)b, (const V *)c, nv,
                                                   (T)MB_MEMBW_SCALAR);
        break;
    }
}

extern "C" cudaError_t mb_gpu_membw(mb_membw_op op, int fp64, void *a, void *b, void *c,
                                    double *partials, size_t n, double write_value, int blocks,
                                    int threads, cudaStream_t stream)
{
    if (fp64)
        membw_launch<double>(op, a, b, c, partials, n, write_value, blocks, threads, stream);
    else
        membw_launch<float>(op, a, b, c, partials, n, write_value, blocks, threads, stream);
    return cudaGetLastError();
}

template <typename T>
static cudaError_t membw_occupancy(mb_membw_op op, int threads, int *blocks_per_sm)
{
    switch (op) {
    case MB_MEMBW_READ:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_read<T>, threads, 0);
    case MB_MEMBW_WRITE:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_write<T>, threads, 0);
    case MB_MEMBW_COPY:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_copy<T>, threads, 0);
    default:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_triad<T>, threads, 0);
    }
}

extern "C" cudaError_t mb_gpu_membw_occupancy(mb_membw_op op, int fp64, int threads, int *blocks_per_sm)
{
    return fp64 ? membw_occupancy<double>(op, threads, blocks_per_sm)
                : membw_occupancy<float>(op, threads, blocks_per_sm);
}

/* ---- peak -------------------------------------------------------------------- */

/* Every step of every chain is one FFMA / DFMA / HFMA2 that depends on the
 * previous step of its own chain only; the MB_PEAK_CHAINS chains of a thread
 * are independent, so a scheduler issues one every cycle given a few warps.
 * a and b are arguments (1 and 1 at run time): the compiler cannot fold the
 * chain into a closed form it does not know. */
/* Overloads picked at compile time: single-precision FFMA for float (never a
 * promotion to double), DFMA for double. */
static __device__ __forceinline__ float chain_fma(float x, float a, float b) { return fmaf(x, a, b); }
static __device__ __forceinline__ double chain_fma(double x, double a, double b) { return fma(x, a, b); }

template <typename T>
static __global__ void k_peak(double *out, uint64_t seed, int iters, T a, T b)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    T x[MB_PEAK_CHAINS];
#pragma unroll
    for (int j = 0; j < MB_PEAK_CHAINS; j++)
        x[j] = (T)mb_peak_x0(seed, t, j);
    for (int it = 0; it < iters; it += MB_PEAK_UNROLL) {
#pragma unroll
        for (int u = 0; u < MB_PEAK_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < MB_PEAK_CHAINS; j++)
                x[j] = chain_fma(x[j], a, b);
        }
    }
    double s = 0;
#pragma unroll
    for (int j = 0; j < MB_PEAK_CHAINS; j++)
        s += (double)x[j];
    out[t] = s;
}

static __global__ void k_peak_half2(double *out, uint64_t seed, int iters, __half2 a, __half2 b)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    __half2 x[MB_PEAK_CHAINS];
#pragma unroll
    for (int j = 0; j < MB_PEAK_CHAINS; j++)
        x[j] = __floats2half2_rn((float)mb_peak_x0(seed, t, 2 * j), (float)mb_peak_x0(seed, t, 2 * j + 1));
    for (int it = 0; it < iters; it += MB_PEAK_UNROLL) {
#pragma unroll
        for (int u = 0; u < MB_PEAK_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < MB_PEAK_CHAINS; j++)
                x[j] = __hfma2(x[j], a, b);
        }
    }
    /* Integers <= 2048, 16 of them: the float sum is exact, and costs far
     * less than 32 conversions to double and double adds would. */
    float s = 0;
#pragma unroll
    for (int j = 0; j < MB_PEAK_CHAINS; j++) {
        float2 f = __half22float2(x[j]);
        s += f.x + f.y;
    }
    out[t] = (double)s;
}

extern "C" cudaError_t mb_gpu_peak(mb_peak_dtype dt, double *out, uint64_t seed, long iters, double a,
                                   double b, int blocks, int threads, cudaStream_t stream)
{
    switch (dt) {
    case MB_PEAK_FP32:
        k_peak<float><<<blocks, threads, 0, stream>>>(out, seed, (int)iters, (float)a, (float)b);
        break;
    case MB_PEAK_FP64:
        k_peak<double><<<blocks, threads, 0, stream>>>(out, seed, (int)iters, a, b);
        break;
    case MB_PEAK_FP16:
        k_peak_half2<<<blocks, threads, 0, stream>>>(out, seed, (int)iters,
                                                     __float2half2_rn((float)a),
                                                     __float2half2_rn((float)b));
        break;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t mb_gpu_peak_occupancy(mb_peak_dtype dt, int threads, int *blocks_per_sm)
{
    switch (dt) {
    case MB_PEAK_FP32:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_peak<float>, threads, 0);
    case MB_PEAK_FP64:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_peak<double>, threads, 0);
    default:
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_peak_half2, threads, 0);
    }
}

/* ---- launch ------------------------------------------------------------------ */

/* Kernels on one stream (or the nodes of a graph captured from one stream)
 * run one after another, so a plain increment counts exactly. */
static __global__ void k_count(unsigned long long *counter)
{
    *counter += 1;
}

extern "C" const void *mb_gpu_count_kernel(void)
{
    return (const void *)k_count;
}

__global__ void k_mirror(volatile uint32_t *word, uint32_t value)
{
    *word = value;
    __threadfence_system(); /* visible to the host before the kernel completes */
}

extern "C" cudaError_t mb_gpu_mirror(volatile uint32_t *word, uint32_t value, cudaStream_t stream)
{
    k_mirror<<<1, 1, 0, stream>>>(word, value);
    return cudaGetLastError();
}

/* ---- preload ------------------------------------------------------------------ */

/* With lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2) a
 * kernel's first launch loads its code, which may wait for the context to be
 * idle: behind a running spin kernel that would wait for the host, which
 * waits in the launch (the CUDA Programming Guide warns about this case;
 * nvbandwidth preloads its kernels for the same reason). Asking for each
 * kernel's attributes loads it now. */
template <typename F>
static cudaError_t load(F f, cudaError_t prev)
{
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, f);
    return prev != cudaSuccess ? prev : e;
}

extern "C" cudaError_t mb_gpu_preload(void)
{
    cudaError_t e = cudaSuccess;
    e = load(k_spin, e);
    e = load(k_mirror, e);
    e = load(k_pattern, e);
    e = load(k_membw_init<float>, e);
    e = load(k_membw_init<double>, e);
    e = load(k_read<float>, e);
    e = load(k_read<double>, e);
    e = load(k_write<float>, e);
    e = load(k_write<double>, e);
    e = load(k_copy<float>, e);
    e = load(k_copy<double>, e);
    e = load(k_triad<float>, e);
    e = load(k_triad<double>, e);
    e = load(k_peak<float>, e);
    e = load(k_peak<double>, e);
    e = load(k_peak_half2, e);
    e = load(k_count, e);
    return e;
}
