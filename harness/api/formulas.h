/* formulas.h: every formula mlbench reports a number with, in one place, each
 * with a known-answer test in tests/test_formulas.c. Pure functions, no I/O. */
#ifndef MB_FORMULAS_H
#define MB_FORMULAS_H

#include <stdbool.h>

/* GEMM: C[MxN] = A[MxK] * B[KxN], batched `batch` times.
 * One multiply-add = 2 FLOPs, so FLOPs = 2*M*N*K*batch. */
double mb_gemm_flops(double m, double n, double k, double batch);

/* Direct convolution, N images, C input and K output channels, RxS filter,
 * PxQ output. FLOPs = 2*N*K*C*R*S*P*Q. The same count holds for forward,
 * backward-data (dX = W^T * dY) and backward-filter (dW = dY * X^T): each is
 * one multiply-add per (n,k,c,r,s,p,q) tuple. Grouped convolutions divide C
 * by the group count before calling. */
double mb_conv_flops(double n, double k, double c, double r, double s, double p,
                     double q);

/* Output size of a convolution along one axis. */
int mb_conv_out_dim(int in, int filter, int pad, int stride, int dilation);

/* Collectives, as nccl-tests reports them (doc/PERFORMANCE.md there):
 * algbw = bytes / seconds, busbw = algbw * factor, with factor
 *   all-reduce       2(n-1)/n
 *   all-gather       (n-1)/n    (bytes = the full gathered buffer)
 *   reduce-scatter   (n-1)/n    (bytes = the full input buffer)
 *   broadcast        1
 * n = number of ranks. n <= 1 gives factor 0 for the first three (no bus). */
typedef enum mb_collective {
    MB_COLL_ALLREDUCE,
    MB_COLL_ALLGATHER,
    MB_COLL_REDUCESCATTER,
    MB_COLL_BROADCAST,
} mb_collective;
double mb_busbw_factor(mb_collective coll, int nranks);
double mb_algbw(double bytes, double seconds);
double mb_busbw(mb_collective coll, double bytes, double seconds, int nranks);
/* The factor a collective case's rate (work per iteration = bytes x factor)
 * uses: the busbw factor while it is > 0, else 1 (algbw). With one rank an
 * all-reduce, all-gather or reduce-scatter moves nothing over a bus (busbw 0,
 * as nccl-tests reports it) yet still does its local copy or reduction; its
 * rate is then the algorithm bandwidth, and the case says so. */
double mb_coll_work_factor(mb_collective coll, int nranks);

/* PCIe payload rate of one direction in GB/s (10^9 B/s) for a link of `gen`
 * (1..6) and `width` lanes, after line encoding: 8b/10b for gen 1-2,
 * 128b/130b for gen 3-5, and for gen 6 (PAM4, FLIT mode) the FLIT's CRC and
 * FEC bytes: 242/256. Packet headers are not deducted for any generation
 * (TLP/DLLP overhead depends on the payload size). Returns 0 for an
 * unknown generation. Transfer rates per lane: 2.5, 5, 8, 16, 32, 64 GT/s. */
double mb_pcie_gbps(int gen, int width);
/* Generation from a sysfs link speed string ("16.0 GT/s PCIe"); 0 if unknown. */
int mb_pcie_gen_from_speed(const char *speed);

/* CPU peak in FLOP/s = cores * clock_hz * flops_per_cycle_per_core. */
double mb_cpu_peak_flops(int cores, double clock_hz, double flops_per_cycle);
/* FLOPs per cycle per core for a vector ISA: fma_units * (vector_bits / element_bits) * 2. */
double mb_flops_per_cycle(int fma_units, int vector_bits, int element_bits);

/* GPU peak from device attributes: sms * clock_hz * flops_per_clock_per_sm. */
double mb_gpu_peak_flops(int sms, double clock_hz, double flops_per_clock_per_sm);
/* DRAM bandwidth in GB/s from memory clock (Hz, as CUDA reports it), bus width
 * (bits) and data rate multiplier (2 for DDR/HBM). */
double mb_mem_bandwidth_gbps(double mem_clock_hz, int bus_width_bits, double data_rate);

/* Efficiency = measured / reference (both rates); 0 when the reference is not
 * positive. For a real run: measured / ceiling; for a machine: ceiling / peak. */
double mb_efficiency(double measured, double reference);

/* Time a stage would take at `ceiling_rate` for `work`: work / ceiling. */
double mb_time_at_rate(double work, double rate);

/* Amdahl: the step time when a stage that takes `stage` of a step of `step`
 * seconds is replaced by `new_stage` seconds (other stages unchanged). */
double mb_amdahl_step(double step, double stage, double new_stage);
/* Overall speed-up step / new_step. */
double mb_speedup(double old_time, double new_time);

/* Statistics over n samples (n >= 1). */
double mb_median(const double *x, int n); /* does not modify x */
double mb_mean(const double *x, int n);
double mb_stddev(const double *x, int n); /* sample stddev (n-1); 0 for n=1 */
double mb_cv(const double *x, int n);     /* stddev / mean; 0 if mean==0 */
double mb_min(const double *x, int n);
double mb_max(const double *x, int n);
/* Percentile p in [0,100] by linear interpolation between closest ranks
 * (numpy's default "linear" method). Sorts a copy. */
double mb_percentile(const double *x, int n, double p);

#endif
