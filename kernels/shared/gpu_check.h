/* gpu_check.h: what the GPU benchmarks (copy, membw, peak, launch) count and
 * how they check their output, as plain host code with no CUDA in it, so the
 * byte/FLOP counts and the closed-form checks have unit tests that run on a
 * machine without a GPU (tests/test_gpu_check.c).
 *
 * The input generators are `MB_HD` inline functions: gpu_kernels.cu calls the
 * very same code on the device to fill buffers and seed FMA chains, so the
 * host can recompute every expected value from the seed instead of keeping a
 * second copy of gigabytes of input.
 */
#ifndef MB_GPU_CHECK_H
#define MB_GPU_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MB_HD static inline __host__ __device__
#else
#define MB_HD static inline
#endif

/* Counter-based hash (splitmix64's finaliser of seed + k*golden): element k
 * of a random stream without generating elements 0..k-1, on host or device. */
MB_HD uint64_t mb_hash64(uint64_t seed, uint64_t k)
{
    uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- copy ------------------------------------------------------------------ */

typedef enum mb_copy_dir {
    MB_COPY_H2D,
    MB_COPY_D2H,
    MB_COPY_BIDIR, /* h2d and d2h at the same time, each on its own stream */
    MB_COPY_D2D,
} mb_copy_dir;

/* Bytes one timed region moves for `copies` copies of `size` bytes:
 *   h2d, d2h  size * copies              (payload over the link)
 *   bidir     2 * size * copies          (payload of both directions)
 *   d2d       2 * size * copies          (each byte is read once and written
 *                                         once in device memory, so the rate
 *                                         compares with the DRAM bandwidth;
 *                                         nvbandwidth and PyTorch users quote
 *                                         size/time, half of it) */
double mb_copy_bytes(mb_copy_dir dir, size_t size, long copies);

/* Fills buf with the random byte stream of `seed` (never all zeros); byte i
 * depends only on (seed, i), so any range can be checked without a copy. */
void mb_pattern_fill(void *buf, size_t n, uint64_t seed);
/* Compares buf with that stream. Returns the number of differing bytes (0 =
 * identical) and the first differing offset in *first_bad. */
size_t mb_pattern_check(const void *buf, size_t n, uint64_t seed, size_t *first_bad);

/* ---- membw (BabelStream kernels) -------------------------------------------- */

typedef enum mb_membw_op {
    MB_MEMBW_READ,  /* sum += a[i]              (reduction; the sum is checked) */
    MB_MEMBW_WRITE, /* a[i] = w                 (w changes every iteration) */
    MB_MEMBW_COPY,  /* c[i] = a[i] */
    MB_MEMBW_TRIAD, /* a[i] = b[i] + s * c[i]   (one fused multiply-add) */
} mb_membw_op;

#define MB_MEMBW_SCALAR 0.4 /* BabelStream's startScalar */

/* Bytes one kernel moves over n elements of elem_size bytes, counted as
 * BabelStream counts them: every array read or written once, writes without
 * a read-for-ownership (GPUs write whole sectors):
 *   read 1, write 1, copy 2, triad 3 arrays. */
double mb_membw_bytes(mb_membw_op op, size_t n, size_t elem_size);
/* Arrays the op needs: read 1 (a), write 1 (a), copy 2 (a -> c; c starts
 * as a different random array, so a copy that never ran fails), triad 3. */
int mb_membw_arrays(mb_membw_op op);

/* Depth of the membw kernels' unrolled grid-stride loops: 16-byte accesses
 * each thread has in flight before it uses the first. */
#define MB_MEMBW_UNROLL 4

/* Blocks of `threads` for a membw kernel over nv 16-byte vectors: `waves`
 * full waves (sms x blocks_per_sm each), every thread looping over the
 * arrays; waves = 0: as many blocks as one unrolled step per thread takes
 * (many short blocks, the shape of PyTorch's elementwise kernels). Never
 * more blocks than there are vectors for their threads; at least 1. */
size_t mb_membw_grid_blocks(size_t nv, int threads, int sms, int blocks_per_sm, int waves);

/* Element i of input array `array` (0 = a, 1 = b, 2 = c): 1 + k / 4096 with
 * k a random 12-bit integer, a random value in [1, 2), never zero. Twelve
 * fraction bits (not 23) make every sum the read kernel forms exact: a group
 * of 16 such values sums below 32 with 12 fraction bits, 17 significant bits,
 * which float holds; the groups then add up exactly in double. So the sum is
 * checked for equality, and one skipped element is caught at any size. */
MB_HD double mb_membw_input(uint64_t seed, int array, uint64_t i)
{
    uint64_t k = mb_hash64(seed ^ ((uint64_t)(array + 1) << 56), i) >> 52;
    return 1.0 + (double)k * (1.0 / 4096.0);
}
/* What the write kernel stores in its `iter`-th call (0-based): a different
 * exact value each time, so the check sees the last call's data. */
MB_HD double mb_membw_write_value(uint64_t iter)
{
    return 2.0 + (double)(iter % 4096) * 0.5;
}

/* Checks the output array of `op` after `calls` kernel calls against the
 * closed form. out is a (write, triad) or c (copy); fp64 picks the type of
 * out (double or float). Returns the number of wrong elements; the first one
 * goes to *first_bad, *got, *want. Not for MB_MEMBW_READ (returns n). */
size_t mb_membw_check(mb_membw_op op, int fp64, const void *out, size_t n, uint64_t seed,
                      uint64_t calls, size_t *first_bad, double *got, double *want);
/* The exact sum of input array a over n elements (integer arithmetic), and
 * the check of a device sum of it: 0 when equal, 1 otherwise (the device's
 * sum is exact too, see mb_membw_input; fp64 selects nothing different and
 * is kept for the callers' symmetry). *rel_err = |got - want| / want. */
double mb_membw_sum_expected(size_t n, uint64_t seed);
int mb_membw_sum_check(double got, size_t n, uint64_t seed, int fp64, double *want, double *rel_err);

/* ---- peak (FMA chains) -------------------------------------------------------- */

typedef enum mb_peak_dtype {
    MB_PEAK_FP32,
    MB_PEAK_FP64,
    MB_PEAK_FP16, /* half2: one instruction is two FMAs */
} mb_peak_dtype;

/* Independent FMA chains per thread (register values; for fp16 each is a
 * half2, i.e. two scalar chains). Enough to cover the FMA latency (4 cycles)
 * with a few warps per scheduler, few enough to stay in registers. */
#define MB_PEAK_CHAINS 8
/* The inner loop is unrolled by this much: iters must be a multiple of it.
 * Each trip of the loop costs ~3 issue slots (add, compare, branch) next to
 * UNROLL x CHAINS FMAs, and an SM partition issues one warp instruction per
 * clock, the FFMA rate: 32 x 8 keeps that overhead near 1% (16 cost 2.3%). */
#define MB_PEAK_UNROLL 32

/* Each chain runs x = x * 1 + 1 (a and b are kernel arguments, so the
 * compiler cannot fold them) from a random small integer x0 in [1, 64], so
 * after `iters` steps x = x0 + iters exactly as long as every value is an
 * integer the type holds exactly: 2^24 for fp32, 2^53 for fp64, 2048 for fp16.
 * The thread writes the sum of its chains in double. */
MB_HD int mb_peak_x0(uint64_t seed, uint64_t thread, int chain)
{
    /* One 64-bit hash holds ten 6-bit values: chains 0-9 take theirs from
     * hash 0 of the thread, 10-19 from hash 1. In the unrolled kernel the
     * chain is a constant, so the compiler computes each hash once per
     * thread; a hash per chain (16 for half2) cost ~2.5% of an fp16 run. */
    uint64_t h = mb_hash64(seed, thread * 2 + (uint64_t)(chain / 10));
    return 1 + (int)((h >> (6 * (chain % 10))) & 63);
}
int mb_peak_lanes(mb_peak_dtype dt);           /* 2 for fp16 (half2), else 1 */
long mb_peak_max_iters(mb_peak_dtype dt);      /* largest exact iteration count */
/* FLOPs of one launch: threads * chains * lanes * iters * 2. */
double mb_peak_flops(mb_peak_dtype dt, double threads, long iters);
/* The value thread `t` must write. */
double mb_peak_expected(mb_peak_dtype dt, uint64_t seed, uint64_t t, long iters);
/* Checks out[0..threads): number of wrong entries, the first in *first_bad. */
size_t mb_peak_check(mb_peak_dtype dt, const double *out, size_t threads, uint64_t seed, long iters,
                     size_t *first_bad);

/* ---- launch op=stream_sync ------------------------------------------------
 * cudaStreamSynchronize moves no data, so what is checked is that it waits:
 * after each timed run (outside its timing) one kernel writes
 * mb_sync_mirror_value(run) into host-mapped memory, the same sync call waits
 * for it, and the host reads the word. A sync that returned before the kernel
 * finished leaves the previous run's value there. */
typedef struct mb_sync_mirror {
    long runs;    /* timed runs, each followed by one mirror kernel */
    long checked; /* mirror words the host read after their sync */
    long stale;   /* of those, words that did not hold their run's value */
    long first_bad_run;
    uint32_t first_bad_want, first_bad_got;
} mb_sync_mirror;

/* Distinct and non-zero for runs 0 .. 2^32-2 (an odd multiplier is a
 * bijection mod 2^32), so a stale word never passes for the next one. */
static inline uint32_t mb_sync_mirror_value(long run)
{
    return (uint32_t)(run + 1) * 2654435761u;
}
/* Records the word the host read after run `run`'s mirror kernel and sync. */
void mb_sync_mirror_record(mb_sync_mirror *m, long run, uint32_t seen);
/* 0 when every run was checked and every word held its value; 1 (a wrong or
 * missing word, described in msg) or -1 (no run) otherwise. */
int mb_sync_mirror_check(const mb_sync_mirror *m, char *msg, size_t len);

#endif
