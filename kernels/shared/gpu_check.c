/* gpu_check.c: byte/FLOP counts and closed-form checks of the GPU
 * benchmarks (see gpu_check.h). Host code only; built with or without CUDA. */
#include "gpu_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double mb_copy_bytes(mb_copy_dir dir, size_t size, long copies)
{
    double one = (double)size * (double)copies;
    return dir == MB_COPY_H2D || dir == MB_COPY_D2H ? one : 2.0 * one;
}

/* Byte i of the stream is byte i%8 (little end first) of word i/8. */
void mb_pattern_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8;
    for (size_t k = 0; k < words; k++) {
        uint64_t w = mb_hash64(seed, k);
        memcpy(p + 8 * k, &w, 8); /* x86-64 and aarch64 are little-endian */
    }
    if (n % 8) {
        uint64_t w = mb_hash64(seed, words);
        memcpy(p + 8 * words, &w, n % 8);
    }
}

size_t mb_pattern_check(const void *buf, size_t n, uint64_t seed, size_t *first_bad)
{
    const unsigned char *p = buf;
    size_t bad = 0;
    if (first_bad)
        *first_bad = n;
    for (size_t k = 0; k * 8 < n; k++) {
        uint64_t w = mb_hash64(seed, k);
        size_t len = n - 8 * k < 8 ? n - 8 * k : 8;
        if (memcmp(p + 8 * k, &w, len) == 0)
            continue;
        const unsigned char *want = (const unsigned char *)&w;
        for (size_t j = 0; j < len; j++) {
            if (p[8 * k + j] != want[j]) {
                if (bad == 0 && first_bad)
                    *first_bad = 8 * k + j;
                bad++;
            }
        }
    }
    return bad;
}

double mb_membw_bytes(mb_membw_op op, size_t n, size_t elem_size)
{
    static const int arrays_touched[] = { [MB_MEMBW_READ] = 1, [MB_MEMBW_WRITE] = 1,
                                          [MB_MEMBW_COPY] = 2, [MB_MEMBW_TRIAD] = 3 };
    return (double)arrays_touched[op] * (double)n * (double)elem_size;
}

int mb_membw_arrays(mb_membw_op op)
{
    return op == MB_MEMBW_READ || op == MB_MEMBW_WRITE ? 1 : op == MB_MEMBW_COPY ? 2 : 3;
}

size_t mb_membw_grid_blocks(size_t nv, int threads, int sms, int blocks_per_sm, int waves)
{
    size_t t = (size_t)threads;
    size_t need = (nv + t - 1) / t;
    size_t blocks = waves == 0 ? (nv + t * MB_MEMBW_UNROLL - 1) / (t * MB_MEMBW_UNROLL)
                               : (size_t)sms * (size_t)blocks_per_sm * (size_t)waves;
    if (blocks > need)
        blocks = need;
    return blocks > 0 ? blocks : 1;
}

/* The closed form of element i of the output after `calls` calls. */
static double membw_want(mb_membw_op op, int fp64, uint64_t seed, uint64_t calls, size_t i)
{
    switch (op) {
    case MB_MEMBW_WRITE:
        return mb_membw_write_value(calls - 1);
    case MB_MEMBW_COPY:
        return mb_membw_input(seed, 0, i);
    case MB_MEMBW_TRIAD:
        /* The device computes fma(s, c, b) in the array's type: so do we. */
        if (fp64)
            return fma(MB_MEMBW_SCALAR, mb_membw_input(seed, 2, i), mb_membw_input(seed, 1, i));
        return fmaf((float)MB_MEMBW_SCALAR, (float)mb_membw_input(seed, 2, i),
                    (float)mb_membw_input(seed, 1, i));
    default:
        return NAN;
    }
}

size_t mb_membw_check(mb_membw_op op, int fp64, const void *out, size_t n, uint64_t seed,
                      uint64_t calls, size_t *first_bad, double *got, double *want)
{
    *first_bad = n;
    if (op == MB_MEMBW_READ || calls == 0)
        return n;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = fp64 ? ((const double *)out)[i] : (double)((const float *)out)[i];
        double w = membw_want(op, fp64, seed, calls, i);
        /* Every value is exact in the array's type (inputs and the write
         * value are, and fma rounds once, like the device): compare exactly. */
        if (g != w) {
            if (bad == 0) {
                *first_bad = i;
                *got = g;
                *want = w;
            }
            bad++;
        }
    }
    return bad;
}

double mb_membw_sum_expected(size_t n, uint64_t seed)
{
    /* sum = n + (sum of k) / 4096, with k = (v - 1) * 4096 exact. */
    uint64_t ks = 0;
    for (size_t i = 0; i < n; i++)
        ks += (uint64_t)((mb_membw_input(seed, 0, i) - 1.0) * 4096.0);
    return (double)n + (double)ks / 4096.0;
}

int mb_membw_sum_check(double got, size_t n, uint64_t seed, int fp64, double *want, double *rel_err)
{
    (void)fp64;
    *want = mb_membw_sum_expected(n, seed);
    *rel_err = *want != 0 ? fabs(got - *want) / fabs(*want) : fabs(got);
    return got == *want ? 0 : 1;
}

int mb_peak_lanes(mb_peak_dtype dt)
{
    return dt == MB_PEAK_FP16 ? 2 : 1;
}

long mb_peak_max_iters(mb_peak_dtype dt)
{
    /* x0 <= 64 and x0 + iters must be an exactly held integer; round down to
     * the unroll factor. */
    long lim;
    switch (dt) {
    case MB_PEAK_FP16:
        lim = 2048 - 64;
        break;
    case MB_PEAK_FP32:
        lim = (1L << 24) - 64;
        break;
    default:
        lim = 1L << 30; /* fp64 holds far more; this only bounds a kernel's run time */
        break;
    }
    return lim / MB_PEAK_UNROLL * MB_PEAK_UNROLL;
}

double mb_peak_flops(mb_peak_dtype dt, double threads, long iters)
{
    return threads * MB_PEAK_CHAINS * mb_peak_lanes(dt) * (double)iters * 2.0;
}

double mb_peak_expected(mb_peak_dtype dt, uint64_t seed, uint64_t t, long iters)
{
    double s = 0;
    int chains = MB_PEAK_CHAINS * mb_peak_lanes(dt);
    for (int j = 0; j < chains; j++)
        s += (double)(mb_peak_x0(seed, t, j) + iters);
    return s;
}

size_t mb_peak_check(mb_peak_dtype dt, const double *out, size_t threads, uint64_t seed, long iters,
                     size_t *first_bad)
{
    size_t bad = 0;
    *first_bad = threads;
    for (size_t t = 0; t < threads; t++) {
        if (out[t] != mb_peak_expected(dt, seed, t, iters)) {
            if (bad == 0)
                *first_bad = t;
            bad++;
        }
    }
    return bad;
}

/* ---- launch op=stream_sync ------------------------------------------------- */

void mb_sync_mirror_record(mb_sync_mirror *m, long run, uint32_t seen)
{
    uint32_t want = mb_sync_mirror_value(run);
    m->checked++;
    if (seen != want && m->stale++ == 0) {
        m->first_bad_run = run;
        m->first_bad_want = want;
        m->first_bad_got = seen;
    }
}

int mb_sync_mirror_check(const mb_sync_mirror *m, char *msg, size_t len)
{
    if (m->runs <= 0) {
        snprintf(msg, len, "no run to check");
        return -1;
    }
    if (m->stale > 0) {
        snprintf(msg, len,
                 "cudaStreamSynchronize returned before the kernel before it finished: after %ld of %ld syncs "
                 "the host-mapped word was stale (run %ld: 0x%08x, expected 0x%08x)",
                 m->stale, m->checked, m->first_bad_run, m->first_bad_got, m->first_bad_want);
        return 1;
    }
    if (m->checked != m->runs) {
        snprintf(msg, len, "%ld timed runs but %ld mirror kernels checked", m->runs, m->checked);
        return 1;
    }
    msg[0] = '\0';
    return 0;
}
