/* Known answers for every formula in harness/api/formulas.h, computed by hand. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formulas.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static void test_gemm_flops(void **s)
{
    (void)s;
    CLOSE(mb_gemm_flops(2, 3, 4, 1), 48);                 /* 2*2*3*4 */
    CLOSE(mb_gemm_flops(8192, 8192, 8192, 1), 1099511627776.0); /* 2*2^39 */
    CLOSE(mb_gemm_flops(64, 64, 128, 96), 2.0 * 64 * 64 * 128 * 96);
}

static void test_conv(void **s)
{
    (void)s;
    /* ResNet-50 conv1: N=1 C=3 K=64 7x7 stride 2 pad 3 on 224 -> 112x112. */
    assert_int_equal(mb_conv_out_dim(224, 7, 3, 2, 1), 112);
    CLOSE(mb_conv_flops(1, 64, 3, 7, 7, 112, 112), 236027904.0); /* 2*64*3*49*12544 */
    assert_int_equal(mb_conv_out_dim(56, 3, 1, 1, 1), 56);
    assert_int_equal(mb_conv_out_dim(56, 3, 0, 1, 2), 52); /* dilated span 5 */
    assert_int_equal(mb_conv_out_dim(2, 5, 0, 1, 1), 0);   /* does not fit */
    /* a trace's shapes can be any int: no overflow (a fuzzer's pad), and an output past INT_MAX held there */
    assert_int_equal(mb_conv_out_dim(10, 3, -1609454674, 1, 1), 0);
    assert_int_equal(mb_conv_out_dim(INT_MAX, 1, INT_MAX, 1, 1), INT_MAX);
}

static void test_busbw(void **s)
{
    (void)s;
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 2), 1.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 3), 4.0 / 3.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 8), 1.75);
    CLOSE(mb_busbw_factor(MB_COLL_ALLGATHER, 8), 0.875);
    CLOSE(mb_busbw_factor(MB_COLL_REDUCESCATTER, 4), 0.75);
    CLOSE(mb_busbw_factor(MB_COLL_BROADCAST, 8), 1.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 1), 0.0);
    /* 1 GB in 10 ms on 8 ranks: algbw 100 GB/s, busbw 175 GB/s. */
    CLOSE(mb_algbw(1e9, 0.01), 1e11);
    CLOSE(mb_busbw(MB_COLL_ALLREDUCE, 1e9, 0.01, 8), 1.75e11);
}

static void test_pcie(void **s)
{
    (void)s;
    CLOSE(mb_pcie_gbps(3, 16), 8.0 * 128 / 130 * 16 / 8);  /* 15.754 GB/s */
    CLOSE(mb_pcie_gbps(4, 16), 31.507692307692306);
    CLOSE(mb_pcie_gbps(5, 16), 63.01538461538461);
    CLOSE(mb_pcie_gbps(2, 8), 4.0);                        /* 5 GT/s * 0.8 * 8 / 8 */
    CLOSE(mb_pcie_gbps(1, 1), 0.25);
    CLOSE(mb_pcie_gbps(6, 16), 121.0);                     /* 64 GT/s * 242/256 * 16 / 8 */
    CLOSE(mb_pcie_gbps(7, 16), 0.0);
    assert_int_equal(mb_pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
    assert_int_equal(mb_pcie_gen_from_speed("8.0 GT/s PCIe"), 3);
    assert_int_equal(mb_pcie_gen_from_speed("2.5 GT/s"), 1);
    assert_int_equal(mb_pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
    assert_int_equal(mb_pcie_gen_from_speed("Unknown"), 0);
    assert_int_equal(mb_pcie_gen_from_speed(NULL), 0);
}

static void test_peaks(void **s)
{
    (void)s;
    /* AVX-512, 2 FMA units, fp32: 2 * 16 * 2 = 64 FLOP/cycle; fp64: 32. */
    CLOSE(mb_flops_per_cycle(2, 512, 32), 64);
    CLOSE(mb_flops_per_cycle(2, 512, 64), 32);
    CLOSE(mb_flops_per_cycle(2, 256, 32), 32);
    CLOSE(mb_cpu_peak_flops(32, 2.0e9, 64), 4.096e12);
    /* H100 SXM fp32 on CUDA cores: 132 SMs * 1.98 GHz * 256 FLOP/clk = 66.9 TFLOP/s */
    CLOSE(mb_gpu_peak_flops(132, 1.98e9, 256), 66908160000000.0);
    /* HBM: 2619 MHz * 2 * 5120 bit / 8 = 3352.3 GB/s */
    CLOSE(mb_mem_bandwidth_gbps(2619e6, 5120, 2), 3352.32);
}

static void test_gap_formulas(void **s)
{
    (void)s;
    CLOSE(mb_efficiency(45, 90), 0.5);
    CLOSE(mb_efficiency(1, 0), 0.0);
    CLOSE(mb_time_at_rate(100, 50), 2.0);
    assert_true(isinf(mb_time_at_rate(1, 0)));
    /* Step 10 s with a 6 s stage that could take 1.5 s: 5.5 s, speed-up 1.818. */
    CLOSE(mb_amdahl_step(10, 6, 1.5), 5.5);
    CLOSE(mb_speedup(10, 5.5), 10.0 / 5.5);
}

static void test_stats(void **s)
{
    (void)s;
    double x[] = { 4, 1, 3, 2, 10 };
    CLOSE(mb_median(x, 5), 3);
    CLOSE(mb_mean(x, 5), 4);
    CLOSE(mb_stddev(x, 5), sqrt(50.0 / 4)); /* deviations 0,-3,-1,-2,6 */
    CLOSE(mb_cv(x, 5), sqrt(50.0 / 4) / 4);
    CLOSE(mb_min(x, 5), 1);
    CLOSE(mb_max(x, 5), 10);
    double y[] = { 1, 2, 3, 4 };
    CLOSE(mb_median(y, 4), 2.5);
    CLOSE(mb_percentile(y, 4, 99), 3.97); /* rank 2.97: 3 + 0.97 */
    CLOSE(mb_percentile(y, 4, 0), 1);
    CLOSE(mb_percentile(y, 4, 100), 4);
    CLOSE(mb_stddev(y, 1), 0);
    assert_true(x[0] == 4 && x[4] == 10); /* inputs untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_flops), cmocka_unit_test(test_conv),  cmocka_unit_test(test_busbw),
        cmocka_unit_test(test_pcie),       cmocka_unit_test(test_peaks), cmocka_unit_test(test_gap_formulas),
        cmocka_unit_test(test_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
