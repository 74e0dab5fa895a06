#include "formulas.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double mb_gemm_flops(double m, double n, double k, double batch)
{
    return 2.0 * m * n * k * batch;
}

double mb_conv_flops(double n, double k, double c, double r, double s, double p, double q)
{
    return 2.0 * n * k * c * r * s * p * q;
}

int mb_conv_out_dim(int in, int filter, int pad, int stride, int dilation)
{
    /* in 64 bits: a trace's shapes can be any int (a fuzzer's pad of -1609454674 overflowed 2 * pad) */
    long long span = ((long long)filter - 1) * dilation + 1, padded = (long long)in + 2LL * pad;
    if (stride <= 0 || padded < span)
        return 0;
    long long out = (padded - span) / stride + 1;
    return out > INT_MAX ? INT_MAX : (int)out;
}

double mb_busbw_factor(mb_collective coll, int nranks)
{
    if (coll == MB_COLL_BROADCAST)
        return 1.0;
    if (nranks <= 1)
        return 0.0;
    double n = nranks;
    switch (coll) {
    case MB_COLL_ALLREDUCE:
        return 2.0 * (n - 1.0) / n;
    case MB_COLL_ALLGATHER:
    case MB_COLL_REDUCESCATTER:
        return (n - 1.0) / n;
    default:
        return 0.0;
    }
}

double mb_algbw(double bytes, double seconds)
{
    return seconds > 0 ? bytes / seconds : 0.0;
}

double mb_busbw(mb_collective coll, double bytes, double seconds, int nranks)
{
    return mb_algbw(bytes, seconds) * mb_busbw_factor(coll, nranks);
}

double mb_coll_work_factor(mb_collective coll, int nranks)
{
    double f = mb_busbw_factor(coll, nranks);
    return f > 0 ? f : 1.0;
}

double mb_pcie_gbps(int gen, int width)
{
    static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };
    if (gen < 1 || gen > 6 || width <= 0)
        return 0.0;
    /* Gen 6 has no line code; its 256-byte FLIT carries 8 B of CRC and 6 B of
     * FEC, the counterpart of gen 3-5's 2 sync bits: 242/256. */
    double encoding = gen <= 2 ? 8.0 / 10.0 : gen <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
    /* GT/s per lane = Gbit/s of line rate; /8 for bytes. */
    return gts[gen] * encoding * width / 8.0;
}

int mb_pcie_gen_from_speed(const char *speed)
{
    if (speed == NULL)
        return 0;
    double gt = strtod(speed, NULL);
    static const double gts[] = { 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };
    for (int i = 0; i < 6; i++)
        if (fabs(gt - gts[i]) < 0.01)
            return i + 1;
    return 0;
}

double mb_cpu_peak_flops(int cores, double clock_hz, double flops_per_cycle)
{
    return (double)cores * clock_hz * flops_per_cycle;
}

double mb_flops_per_cycle(int fma_units, int vector_bits, int element_bits)
{
    if (element_bits <= 0)
        return 0.0;
    return (double)fma_units * (double)(vector_bits / element_bits) * 2.0;
}

double mb_gpu_peak_flops(int sms, double clock_hz, double flops_per_clock_per_sm)
{
    return (double)sms * clock_hz * flops_per_clock_per_sm;
}

double mb_mem_bandwidth_gbps(double mem_clock_hz, int bus_width_bits, double data_rate)
{
    return mem_clock_hz * data_rate * (bus_width_bits / 8.0) / 1e9;
}

double mb_efficiency(double measured, double reference)
{
    return reference > 0 ? measured / reference : 0.0;
}

double mb_time_at_rate(double work, double rate)
{
    return rate > 0 ? work / rate : INFINITY;
}

double mb_amdahl_step(double step, double stage, double new_stage)
{
    return step - stage + new_stage;
}

double mb_speedup(double old_time, double new_time)
{
    return new_time > 0 ? old_time / new_time : INFINITY;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *sorted_copy(const double *x, int n)
{
    double *c = malloc(sizeof *c * (size_t)n);
    if (c == NULL)
        return NULL;
    memcpy(c, x, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    return c;
}

double mb_percentile(const double *x, int n, double p)
{
    if (n <= 0)
        return NAN;
    double *c = sorted_copy(x, n);
    if (c == NULL)
        return NAN;
    if (p < 0)
        p = 0;
    if (p > 100)
        p = 100;
    double rank = p / 100.0 * (n - 1);
    int lo = (int)floor(rank);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double v = c[lo] + (c[hi] - c[lo]) * (rank - lo);
    free(c);
    return v;
}

double mb_median(const double *x, int n)
{
    return mb_percentile(x, n, 50.0);
}

double mb_mean(const double *x, int n)
{
    if (n <= 0)
        return NAN;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i];
    return s / n;
}

double mb_stddev(const double *x, int n)
{
    if (n <= 1)
        return 0.0;
    double m = mb_mean(x, n), s = 0;
    for (int i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (n - 1));
}

double mb_cv(const double *x, int n)
{
    double m = mb_mean(x, n);
    return m != 0 ? mb_stddev(x, n) / fabs(m) : 0.0;
}

double mb_min(const double *x, int n)
{
    double v = INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] < v)
            v = x[i];
    return v;
}

double mb_max(const double *x, int n)
{
    double v = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] > v)
            v = x[i];
    return v;
}
